"""Host-side factor of the bordered margin matrix with O(|M|^2) insert and delete.

The margin equations of the C-SVC path (Karasuyama & Takeuchi 2009, eq. 7) are solved
through the bordered matrix

    𝐌 = [[0, y_Mᵀ], [y_M, Q_MM]]          (|M| + 1 square, symmetric, indefinite).

The same factor serves the problems without a bias (the outlier path of Suzumura et al.),
whose active-set matrix is Q_EE alone: ``BorderedFactor(bordered=False)``.

How it is factored, and why:

- 𝐌 is indefinite, but the shifted matrix Q̃ = Q + ρ y yᵀ (ρ > 0) is positive definite exactly
  when 𝐌 is nonsingular (Q is positive semidefinite), and [[0, yᵀ], [y, Q̃]] has the same
  solution for the right-hand side [r₀; r + ρ r₀ y], because yᵀx = r₀. So the factor is a
  Cholesky factor Q̃ = RᵀR, without the explicit orthogonal matrix of a QR factor; the border
  is one scalar Schur complement, yᵀQ̃⁻¹y, through g = R⁻ᵀy.
- A point entering M appends one column to R: one triangular solve, O(|M|²).
- A point leaving M removes its column from R, which leaves the trailing rows upper
  Hessenberg; Givens rotations of neighbouring rows restore the triangle (and rotate g along):
  O(t²) for t trailing columns, an orthogonal update (stable, never a downdate).
- ρ is the largest diagonal entry of Q_MM, but at most 10⁴ times the smallest positive one (1
  if they are all zero), chosen anew at every refactorization; a point whose diagonal entry ρ
  would drown refactors. Every pivot is judged against its own row's diagonal, and the
  condition estimates scale 𝐌 to a unit diagonal, since Cholesky's round-off is relative to
  each row's own diagonal: a diagonal spread over twenty orders (zero rows of a linear kernel
  beside features of size 10⁷) keeps every row, its smallest entries to the 4 digits ρ may
  take.
- A solve is two triangular solves and one scalar: O(|M|²).

Q_MM itself is kept beside the factor: each solve checks its residual against it, and a factor
that has drifted is recomputed (O(|M|³)) before the answer is used.

R is stored by rows (C order) in arrays of spare capacity, so that a delete shifts and rotates
contiguous rows in place and both triangular solves run along rows; the per-breakpoint work
(insert, delete, solve with its residual check) is compiled with Numba, one call each, so a
breakpoint pays no per-operation interpreter or SciPy overhead.

These host matrices are small (|M| + 1 square), and the path alternates between them, the
compiled n-sized passes and a few small NumPy products per update. A multi-threaded BLAS wastes
more on waking and spinning its threads for such work than it gains, and its spinning threads
take the cores from the compiled code (measured: a Bananas update, n = 4,000, 28 ms with two
BLAS threads, 16 ms with one): the path algorithms therefore run every BLAS library
single-threaded (:func:`single_threaded_host_blas`, through threadpoolctl) wherever they call
BLAS: around a path, its refinement's repair and its large products. (An update that moves no
coefficient calls none, and sets no limit: two threadpoolctl calls a library, twice, cost it
10–17 µs of some 170.)
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import math
import threading
import weakref

import numpy as np
from numba import njit
from scipy.linalg.lapack import dpotrf, dsycon, dsytrf, dtrtrs
from scipy.sparse.linalg import LinearOperator, onenormest
from threadpoolctl import ThreadpoolController

from ._blas import dsymv, dtrsm_upper_t, dtrsv_upper
from ._threads import in_row_blocks

__all__ = ["BorderedFactor", "SingularMarginError", "all_host_blas_threads", "blas_in_row_blocks",
           "single_threaded_host_blas"]


# A new Cholesky pivot d² below this fraction of the diagonal may be round-off of an exact
# zero: the condition number of 𝐌 then decides (estimated from the factor with the pivot
# appended, O(|M|²), where the pivot is positive: BorderedFactor._reciprocal_condition_from_factor;
# else from a factor of 𝐌 of its own, O(|M|³): _reciprocal_condition) — unless the factor's
# floor (the ridge on the diagonal of a positive semi-definite kernel's Q, below every exact
# pivot) is resolved and the pivot is above half of it. Resolved: the floor exceeds the
# pivot's round-off, _RESOLVED_FLOOR (|M| + 1) ε times the largest diagonal (Cholesky's
# backward error, with the kernel values' own). Such a pivot is no round-off of a zero: the
# factor exists and its solves are backward stable, so the margin equations hold to round-off
# whatever the condition number (at most (|M| + 1) max diagonal / floor < 1 / (16 ε)). What
# float64 leaves ill-determined is α along Q's near-null directions, near the kernel part's
# null space (a linear kernel's: Σ δα_i y_i x_i = 0), which barely move f. A linear kernel in
# d features gives every margin point past d + 1 a pivot near the ridge: without the floor
# each of them took two O(|M|³) factorizations; with the floor also bound by rcond (the
# condition number below 1 / rcond, as the estimate asks), two features of size 10² refused
# every point past |M| = 138, and a fit of 681 points took 19,444 estimates and 25 s
# (scikit-learn-intelex: 2 s).
_TINY_PIVOT = 1e-8
# ρ (the shift of Q̃ = Q + ρ y yᵀ) stays below this multiple of every positive diagonal entry of
# Q_MM: one far above an entry drowns it (a linear kernel on features of size 1e7 with exact
# zeros: Q_kk = 2.5e13 beside the ridge 1e-6 of a zero row, where ρ = 6.9e13 left that row's
# factor without a digit of it, and SimpleSVM cycled). A point whose entry ρ would drown
# refactors, with ρ chosen anew; the smallest entries lose at most log10 of this many digits.
_SHIFT_SPREAD = 1e4
# From this many margin points on, the condition estimate solves through the factor in hand
# (some 0.4 ms of Python and a few O(|M|²) solves); below, LAPACK's own O(|M|³) factor is
# quicker (measured: 0.08 against 0.43 ms at 20 points, 1.5 against 0.6 ms at 200).
_ESTIMATE_FROM_FACTOR = 128
_RESOLVED_FLOOR = 16.0
_EPS = float(np.finfo(np.float64).eps)
# A solve whose relative residual exceeds this refactors first.
_MAX_RESIDUAL = 1e-11
# Blocks reaching at most this many margin points enter one point at a time (compiled), larger
# ones by the block step (level-3 LAPACK).
_EACH_UP_TO = 128


@functools.cache
def _blas():
    """threadpoolctl's controller of the BLAS libraries loaded (NumPy's and SciPy's), and
    their thread count before any limit."""
    controller = ThreadpoolController().select(user_api="blas")
    return controller, max((lib["num_threads"] for lib in controller.info()), default=1)


def single_threaded_host_blas(func):
    """Run ``func`` with every BLAS library on one thread (see the module docstring); calls
    nested in one that already limits them pay nothing more.

    The libraries' own ``set_num_threads`` through threadpoolctl's per-library controllers
    (about 2 µs a library), not ``ThreadpoolController.limit``, whose bookkeeping cost some
    40 µs a call: a one-point update makes two such calls.

    OpenBLAS (0.3.30 and 0.3.31, pthreads) takes the count from the main thread only: a call
    from another thread (a user's thread pool, a threaded Dask worker) sets nothing, and the
    products run on the library's threads as they would without it."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        if getattr(_limited, "on", False):
            return func(*args, **kwargs)
        _limited.on = True
        libraries = _blas()[0].lib_controllers
        before = [lib.num_threads for lib in libraries]
        try:
            for lib, threads in zip(libraries, before):
                if threads != 1:
                    lib.set_num_threads(1)
            return func(*args, **kwargs)
        finally:
            for lib, threads in zip(libraries, before):
                if threads != 1:
                    lib.set_num_threads(threads)
            _limited.on = False

    return wrapper


_limited = threading.local()


@single_threaded_host_blas
def blas_in_row_blocks(function, n: int, *args, min_rows: int = 64) -> list:
    """:func:`gpath._threads.in_row_blocks` for a pass that calls BLAS (a block of kernel
    rows: its product, then its kernel function), with every BLAS library on one thread: the
    product is split between gpath's threads, each finishing its own part in cache.
    A BLAS library's own threads spin for a while after each product and took the cores from
    the compiled passes that followed (16 cores, Adult n = 30,000: SMO 2.18 s with the host's
    threaded products between its rounds, against 0.60 s with the rows computed on a GPU)."""
    return in_row_blocks(function, n, *args, min_rows=min_rows)


@contextlib.contextmanager
def all_host_blas_threads():
    """Within :func:`single_threaded_host_blas`, give one large product the BLAS libraries'
    own threads back; elsewhere nothing. Only for a block that one library call computes
    whole (the generic engine's, on the host: a sigmoid or callable kernel); gpath's own
    blocks take :func:`blas_in_row_blocks`."""
    if not getattr(_limited, "on", False):
        yield
        return
    controller, threads = _blas()
    if threads <= 1:
        yield
        return
    with controller.limit(limits=threads):
        yield


class SingularMarginError(np.linalg.LinAlgError):
    """The bordered margin matrix became singular (duplicate margin points with ``ridge=0``)."""


# ---------------------------------------------------------------------- compiled kernels
# A factor's integers (``BorderedFactor._ints``): |M| and top (Q's slots 0..top-1 in use or
# freed), then a log of what was written since the factor was made by :meth:`BorderedFactor.copy`:
# the lowest row/column of R written (R[:lo, :lo] is as it was), a stamp that every write moves,
# and the Q slots whose row and column were written (past _LOG slots: all of Q). The next copy
# into the arrays it was copied from, their stamp unmoved since (a stream's spent factor), copies
# only what the log names. Each factor made or copied into starts from a stamp of its own
# (_new_stamp), so that two factors' stamps never meet.
_LO, _WRITES, _LOGGED = 2, 3, 4
_FLOATS = 3  # a factor's floats (``BorderedFactor._floats``): ρ, max |𝐌_ij|, the floor
_LOG = 32
_INTS = _LOGGED + 1 + _LOG
_CLEAN = 2**62  # _LO where no row of R was written
_STAMPS = itertools.count(1)


def _new_stamp() -> int:
    """A write stamp that no factor has held."""
    return next(_STAMPS) << 32  # room for 2³² writes


@njit(cache=True)
def _log_write(ints, lo, slot):
    """Log a write of R from row/column ``lo`` on (``_CLEAN``: none) and of Q's slot ``slot``
    (−1: none)."""
    ints[_LO] = min(ints[_LO], lo)
    ints[_WRITES] += 1
    if slot >= 0:
        n = ints[_LOGGED]
        if n < _LOG:
            ints[_LOGGED + 1 + n] = slot
        ints[_LOGGED] = min(n + 1, _LOG + 1)


def _new_ints() -> np.ndarray:
    """A factor's integers (:data:`_INTS`) for an empty factor, its log clean."""
    ints = np.zeros(_INTS, dtype=np.int64)
    ints[_LO], ints[_WRITES] = _CLEAN, _new_stamp()
    return ints


@njit(cache=True)
def _tiny(d2, own, floor, m):
    """Whether a squared pivot ``d2`` may be round-off of an exact zero (:data:`_TINY_PIVOT`),
    ``own`` its row's diagonal entry of Q̃ (Cholesky's round-off in a row is relative to its
    own diagonal: the factor of D Q̃ D is D times the factor of Q̃, for any positive diagonal
    D), ``floor`` the factor's, ``m`` the margin points before it."""
    if d2 > _TINY_PIVOT * own:
        return False
    resolved = floor > 0.0 and floor >= _RESOLVED_FLOOR * _EPS * (m + 1) * own
    return not (resolved and d2 >= 0.5 * floor)


@njit(cache=True)
def _swamped(q_kk, rho):
    """Whether the shift ρ y yᵀ would drown a diagonal entry ``q_kk`` of Q (:data:`_SHIFT_SPREAD`)."""
    return 0.0 < q_kk and _SHIFT_SPREAD * q_kk < rho


@njit(cache=True)
def _insert(R, Q, y, g, qs, m, top, rho, q_kB, q_kk, y_k, bordered, r, floor):
    """Append point k as row/column m of R, its Q row and column in the lowest free slot (moved
    to ``qs[m]``), unless its pivot is tiny or ρ would drown its diagonal (:func:`_swamped`).
    Returns the squared pivot d², whether the point went in (False: nothing but the choice of
    slot was written), and max(|q_kB|, |q_kk|).

    Only R[:m, :m] and Q[:top, :top] are ever read (the arrays are not zeroed beyond them): a
    slot past ``top`` gets a zero row and column first."""
    j_free = m
    for j in range(m + 1, qs.shape[0]):
        if qs[j] < qs[j_free]:
            j_free = j
    qs[m], qs[j_free] = qs[j_free], qs[m]
    if qs[m] >= top:
        for i in range(Q.shape[0]):
            Q[qs[m], i] = 0.0
            Q[i, qs[m]] = 0.0
    big = abs(q_kk)
    for i in range(m):
        big = max(big, abs(q_kB[i]))
    for i in range(m):
        r[i] = q_kB[i] + rho * y_k * y[i]
    dtrsv_upper(R, m, r, True)
    rr = 0.0
    for i in range(m):
        rr += r[i] * r[i]
    d2 = q_kk + rho - rr
    if _tiny(d2, q_kk + rho, floor, m) or _swamped(q_kk, rho):
        return d2, False, big
    d = math.sqrt(d2)
    s = qs[m]
    for i in range(m):
        R[i, m] = r[i]
        R[m, i] = 0.0
        Q[s, qs[i]] = q_kB[i]
        Q[qs[i], s] = q_kB[i]
    R[m, m] = d
    Q[s, s] = q_kk
    y[m] = y_k
    if bordered:
        gy = 0.0
        for i in range(m):
            gy += r[i] * g[i]
        g[m] = (y_k - gy) / d
    return d2, True, big


@njit(cache=True, fastmath={"reassoc", "contract"})
def _delete(R, Q, y, g, basis, qs, m, k, buf):
    """Remove position k of m. Column k leaves R: rows 0..k shift their later entries left;
    rows k+1.. are then upper Hessenberg, and the rotation of rows (j, j + 1) that restores the
    triangle reads row j + 1 one column to the right, so it shifts that row as it goes (one pass
    per row, while it is in cache). g is rotated along; Q's row and column (by slot) are zeroed."""
    n = m - 1 - k
    for i in range(k + 1):
        row = R[i]
        for c in range(n):
            buf[c] = row[k + 1 + c]
        for c in range(n):
            row[k + c] = buf[c]
        row[m - 1] = 0.0
    for j in range(k, m - 1):
        rj, rn = R[j], R[j + 1]
        a, b = rj[j], rn[j + 1]
        h = math.hypot(a, b)
        cs, sn = (a / h, b / h) if h > 0.0 else (1.0, 0.0)
        for c in range(j, m - 1):
            u, v = rj[c], rn[c + 1]
            rj[c] = cs * u + sn * v
            rn[c] = cs * v - sn * u
        rn[m - 1] = 0.0
        u, v = g[j], g[j + 1]
        g[j] = cs * u + sn * v
        g[j + 1] = cs * v - sn * u
    g[m - 1] = 0.0
    s = qs[k]
    for i in range(Q.shape[0]):
        Q[s, i] = 0.0
        Q[i, s] = 0.0
    for i in range(k, m - 1):
        y[i] = y[i + 1]
        basis[i] = basis[i + 1]
        qs[i] = qs[i + 1]
    qs[m - 1] = s


@njit(cache=True)
def _solve(R, Q, y, g, qs, top, m, rho, rhs, x, xs, work, bordered, scale):
    """x = 𝐌⁻¹ rhs (border first); returns the relative residual max |𝐌x − rhs| / (scale·max|x| +
    max|rhs|). With the border: [[0, yᵀ], [y, Q̃]] [b; x] = [r₀; r + ρ r₀ y], so x = R⁻¹(z − b g)
    with z = R⁻ᵀ(r + ρ r₀ y) and b = (gᵀz − r₀) / gᵀg. The residual reads Q by slot (``xs``:
    x scattered to the slots, 0 on free ones)."""
    o = 1 if bordered else 0
    r0 = rhs[0] if bordered else 0.0
    z = x[o:]
    for i in range(m):
        z[i] = rhs[o + i] + rho * r0 * y[i]
    dtrsv_upper(R, m, z, True)
    if bordered:
        gz, gg = 0.0, 0.0
        for i in range(m):
            gz += g[i] * z[i]
            gg += g[i] * g[i]
        b = (gz - r0) / gg
        for i in range(m):
            z[i] -= b * g[i]
        x[0] = b
    dtrsv_upper(R, m, z, False)
    if scale < 0.0:  # no residual check asked for
        return 0.0
    for i in range(top):
        xs[i] = 0.0
    for i in range(m):
        xs[qs[i]] = z[i]
    dsymv(Q, top, xs, work)
    worst, big_x, big_rhs, yz = 0.0, 0.0, 0.0, 0.0
    for i in range(m):
        res = work[qs[i]] - rhs[o + i]
        if bordered:
            res += x[0] * y[i]
            yz += y[i] * z[i]
        worst = max(worst, abs(res))
    if bordered:
        worst = max(worst, abs(yz - rhs[0]))
    for i in range(m + o):
        big_x = max(big_x, abs(x[i]))
        big_rhs = max(big_rhs, abs(rhs[i]))
    denom = scale * big_x + big_rhs
    return worst / denom if denom > 0.0 else 0.0


@njit(cache=True)
def _norm1(Q, qs, m, top, border, d):
    """‖D 𝐌 D‖₁ with D = diag(``border``, d) (:meth:`BorderedFactor._equilibration`;
    ``border`` 0: none), the largest column sum of its absolute values (Q read by slot, ``d``
    too: a free slot's row below ``top`` is zero, and so is its d)."""
    best = 0.0
    for i in range(m):
        best += border * d[qs[i]]
    for i in range(m):
        row = Q[qs[i]]
        total = 0.0
        for j in range(top):
            total += abs(row[j]) * d[j]
        best = max(best, d[qs[i]] * (total + border))
    return best


@njit(cache=True)
def _shift(top, bordered):
    """ρ from a diagonal entry of Q (so that ρ y yᵀ neither vanishes next to Q nor swamps
    it); 1 for a zero one; 0 without the border."""
    if not bordered:
        return 0.0
    return top if top > 0.0 else 1.0


def _shift_of(diagonal: np.ndarray, bordered: bool) -> float:
    """ρ for a factor of Q with this ``diagonal``: its largest entry, but at most
    :data:`_SHIFT_SPREAD` times its smallest positive one (:func:`_shift`)."""
    positive = diagonal[diagonal > 0.0]
    if not positive.size:
        return _shift(0.0, bordered)
    return _shift(min(float(positive.max()), _SHIFT_SPREAD * float(positive.min())), bordered)


@njit(cache=True)
def factor_insert(R, Q, y, g, basis, qs, work, xs, buf, ints, floats, point, y_k, q_kB, q_kk, bordered):
    """Append ``point`` (the factor's arrays as :attr:`BorderedFactor.arrays`; capacity for one
    more is the caller's). Returns whether it went in and the squared pivot; a tiny pivot
    changes nothing but the choice of Q slot (the caller decides: :meth:`BorderedFactor.insert`)."""
    m = ints[0]
    rho = floats[0] if m else _shift(q_kk, bordered)
    d2, ok, big = _insert(R, Q, y, g, qs, m, ints[1], rho, q_kB, q_kk, y_k, bordered, work, floats[2])
    _log_write(ints, m if ok else _CLEAN, qs[m])  # (a tiny pivot may have zeroed the slot)
    floats[1] = max(floats[1], big, 1.0 if bordered else 0.0)
    if ok:
        basis[m] = point
        ints[1] = max(ints[1], qs[m] + 1)
        ints[0] = m + 1
        floats[0] = rho
    return ok, d2


@njit(cache=True)
def factor_delete(R, Q, y, g, basis, qs, work, xs, buf, ints, floats, k):
    """Remove position k (0 ≤ k < m)."""
    m = ints[0]
    _log_write(ints, k, qs[k])
    _delete(R, Q, y, g, basis, qs, m, k, buf)
    ints[0] = m - 1
    if m == 1:
        ints[1] = 0


@njit(cache=True)
def factor_solve(R, Q, y, g, basis, qs, work, xs, buf, ints, floats, rhs, x, bordered, check=True):
    """x = 𝐌⁻¹ rhs; returns the relative residual (see :func:`_solve`), or 0 unchecked."""
    return _solve(R, Q, y, g, qs, ints[1], ints[0], floats[0], rhs, x, xs, work, bordered,
                  floats[1] if check else -1.0)


@njit(cache=True)
def _insert_each(R, Q, y, g, basis, qs, work, xs, buf, ints, floats, points, y_new, q_newB, q_newnew, bordered):
    """:func:`factor_insert` of each of ``points`` in turn (``q_newB``: their rows against
    the margin points, ``q_newnew``: among themselves); if one's pivot is tiny, those
    appended are taken back (their Q slots zeroed) and False is returned: the factor as it
    was, but for the order of its free Q slots."""
    m0, top0, rho0, big0 = ints[0], ints[1], floats[0], floats[1]
    p = points.shape[0]
    q = np.empty(m0 + p)
    for j in range(p):
        for i in range(m0):
            q[i] = q_newB[j, i]
        for i in range(j):
            q[m0 + i] = q_newnew[j, i]
        ok, _ = factor_insert(R, Q, y, g, basis, qs, work, xs, buf, ints, floats, points[j], y_new[j],
                              q[: m0 + j], q_newnew[j, j], bordered)
        if not ok:
            for i in range(m0, m0 + j):
                s = qs[i]
                for c in range(Q.shape[0]):
                    Q[s, c] = 0.0
                    Q[c, s] = 0.0
            ints[0], ints[1], floats[0], floats[1] = m0, top0, rho0, big0
            return False
    return True


def _upper_solve_t(R: np.ndarray, b: np.ndarray) -> np.ndarray:
    """R⁻ᵀ b for an upper triangular R (LAPACK's dtrtrs: SciPy's ``solve_triangular`` took
    23 µs against its 5 µs at 35 points, the block step's size in a one-vs-one pair)."""
    x, info = dtrtrs(R, b, lower=0, trans=1)
    if info != 0:
        raise SingularMarginError(f"a zero pivot in the factor's triangular solve (LAPACK info {info})")
    return x


def _reciprocal_condition(matrix: np.ndarray) -> float:
    """LAPACK's estimate of 1 / κ₁ of a symmetric (possibly indefinite) matrix, from its
    Bunch-Kaufman factor (dsytrf, dsycon): O(n³/3), against the O(n³)·10 of an SVD. 0 for an
    exactly singular one."""
    ldu, ipiv, info = dsytrf(matrix, lower=1)
    if info > 0:
        return 0.0
    estimate, _ = dsycon(ldu, ipiv, np.abs(matrix).sum(axis=0).max(), lower=1)
    return float(estimate)


# ---------------------------------------------------------------------- host memory
def available_memory() -> float | None:
    """Bytes of host memory a new allocation can take: ``MemAvailable`` of /proc/meminfo,
    or less where a cgroup (a container) limits the process; None where neither is readable
    (then nothing is checked)."""
    found = []
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    found.append(float(line.split()[1]) * 1024.0)
    except (OSError, ValueError, IndexError):
        pass
    try:
        with open("/sys/fs/cgroup/memory.max") as f:
            limit = f.read().strip()
        with open("/sys/fs/cgroup/memory.current") as f:
            used = float(f.read().strip())
        if limit != "max":
            found.append(float(limit) - used)
    except (OSError, ValueError):
        pass
    return min(found) if found else None


def _check_memory(capacity: int, size: int) -> None:
    """Raise MemoryError if the factor's arrays for ``capacity`` points (R and Q_MM, 16
    bytes per entry) would not fit in the available host memory (:func:`available_memory`)."""
    needed = 16.0 * capacity * capacity
    available = available_memory()
    if available is not None and needed > available:
        raise MemoryError(
            f"the working (margin) set reaches |W| = {size} points; its factor on the host needs "
            f"{needed / 2**30:.2f} GiB for {capacity} points (16·|W|² bytes), more than the "
            f"{available / 2**30:.2f} GiB of memory available: lower C, use a smaller gamma (fewer free "
            f"support vectors), or fit a subsample; the model is unchanged"
        )


# ---------------------------------------------------------------------- the factor
@njit(cache=True)
def _copy_into(R, Q, y, g, basis, qs, ints, floats, R2, Q2, y2, g2, basis2, qs2, ints2, floats2, logged):
    """Copy a factor's arrays into another's of at least its size, in one call (a one-point
    update copies its factor: a dozen NumPy steps cost more than the few hundred numbers they
    move): the blocks in use, and Q's storage slots, those in use (in factor order), then the
    free ones, lowest first. With ``logged``, the arrays R2 and Q2 already hold what R and Q
    held when the factor was copied from them, and only what the factor's log names since is
    copied (the rows and columns of R from its lowest one written, the Q slots written)."""
    m, top = ints[0], ints[1]
    lo = min(ints[_LO], m) if logged else 0
    all_q = not logged or ints[_LOGGED] > _LOG
    ints2[:] = ints
    floats2[:] = floats
    for i in range(m):
        if i < lo:
            R2[i, lo:m] = R[i, lo:m]
        else:
            R2[i, :m] = R[i, :m]
        y2[i], g2[i], basis2[i] = y[i], g[i], basis[i]
    if all_q:
        for i in range(top):
            Q2[i, :top] = Q[i, :top]
    else:
        for t in range(ints[_LOGGED]):
            s = ints[_LOGGED + 1 + t]
            if s < top:
                Q2[s, :top] = Q[s, :top]
                Q2[:top, s] = Q[:top, s]
    free = np.ones(qs2.shape[0], dtype=np.bool_)
    for i in range(m):
        qs2[i] = qs[i]
        free[qs[i]] = False
    j = m
    for slot in range(qs2.shape[0]):
        if free[slot]:
            qs2[j] = slot
            j += 1


class BorderedFactor:
    """Cholesky factor of the shifted 𝐌 = [[0, yᵀ], [y, Q]] for the current margin set.

    Row/column 0 of 𝐌 is the border (the bias); row/column ``k + 1`` is the k-th margin point
    in insertion order ("factor order"). Without the border (``bordered=False``) the matrix is
    Q_MM and row/column k is the k-th point. All arrays are float64 NumPy arrays on the host.

    Parameters
    ----------
    rcond : float, default 1e-13
        𝐌 with a reciprocal condition number below ``rcond`` is numerically singular (𝐌 with
        its border scaled by the mean diagonal entry, so that the kernel's scale does not
        count):
        :meth:`insert` then raises :class:`SingularMarginError` (checked, by LAPACK's estimate
        of the 1-norm condition number, only when the new Cholesky pivot is tiny, below 1e-8 of
        the diagonal, and not above a resolved floor).
    bordered : bool, default True
        Whether 𝐌 has the border row and column of the equality constraint yᵀα = 0.
    floor : float, default 0
        A lower bound of every eigenvalue of Q_MM known to the caller (the ridge, where Q's
        kernel part is positive semi-definite; 0: none): a pivot above half of it is not
        round-off of a zero, where float64 resolves the floor beside the diagonal (above
        16 (|M| + 1) ε times its largest entry). The condition number is not asked there: the
        factor's solves are backward stable, the margin equations hold to round-off, and α
        is ill-determined only along directions that barely move f (the kernel's null space).
    """

    _ARRAYS = ("_r", "_q", "_y", "_g", "_basis", "_qs", "_work", "_xs", "_buf", "_ints", "_floats")

    def __init__(self, rcond: float = 1e-13, bordered: bool = True, floor: float = 0.0):
        self.rcond, self.bordered = rcond, bordered
        # The scalars live in arrays, so that compiled code (gpath._mid_numba) changes them in
        # place: m = |M|, top (Q slots 0..top-1 in use or freed) and the log of writes (_INTS);
        # ρ (the shift of Q̃ = Q + ρ y yᵀ), an upper bound of max |𝐌_ij| (the residual
        # check's scale) and the floor.
        self._ints = _new_ints()
        self._floats = np.array([0.0, 0.0, float(floor)])
        self._r = None
        self._shares = False  # R and Q_MM held with another factor until either writes them (share)
        self._reserve(16)

    m = property(lambda self: int(self._ints[0]), lambda self, v: self._ints.__setitem__(0, v))
    _top = property(lambda self: int(self._ints[1]), lambda self, v: self._ints.__setitem__(1, v))
    _rho = property(lambda self: float(self._floats[0]), lambda self, v: self._floats.__setitem__(0, v))

    @property
    def arrays(self) -> tuple:
        """The factor's arrays, as the compiled functions of this module take them (which may
        write them: R and Q_MM are this factor's own from here, :meth:`share`)."""
        self._own()
        return (self._r, self._q, self._y, self._g, self._basis, self._qs, self._work, self._xs, self._buf,
                self._ints, self._floats)

    @property
    def capacity(self) -> int:
        """Most margin points the arrays hold before they grow."""
        return self._r.shape[0]

    def share(self) -> BorderedFactor:
        """A factor equal to this one that holds R and Q_MM with it, each copying them before
        it first writes them (the rest of its arrays are its own). An update that moves no
        coefficient leaves the factor as it was (its ids aside): its state's factor is shared,
        not copied (at |M| ≈ 500 the copy took about 1.1 of the 3.1–3.6 ms of such an update)."""
        new = object.__new__(BorderedFactor)
        new.__dict__.update(self.__dict__)
        for name in self._ARRAYS:
            if name not in ("_r", "_q"):
                setattr(new, name, getattr(self, name).copy())
        new.spare = None
        self._shares = new._shares = True
        return new

    def take_spare(self, spent: BorderedFactor) -> None:
        """Keep the arrays of ``spent``, a factor nothing reads any more (that of the state an
        update started from), for this factor's next copy (:meth:`copy`); where the two share
        R and Q_MM, those are this factor's own from now on, and the spent factor's spare is
        kept instead."""
        if spent._r is self._r:
            self._shares = False
            spent = getattr(spent, "spare", None)
        self.spare = spent

    def _own(self) -> None:
        """Copy R and Q_MM (the blocks in use) before writing them, where they are shared."""
        if not self._shares:
            return
        capacity, m, top = self._r.shape[0], self.m, self._top
        r, q = np.empty((capacity, capacity)), np.empty((capacity, capacity))
        r[:m, :m] = self._r[:m, :m]
        q[:top, :top] = self._q[:top, :top]
        self._r, self._q, self._shares = r, q, False

    def reserve(self, capacity: int) -> None:
        """Room for ``capacity`` margin points in one step, for a caller about to enter that
        many: growth by doubling copies R and Q_MM at every step (SimpleSVM's start at
        |M| = 3,456: five copies, 0.25 s). The room is what doubling would reach, no more:
        a reservation of exactly ``capacity`` would double from there at the next point
        (885 points: 1,770 where doubling from 16 stops at 1,024).

        Raises
        ------
        MemoryError
            If the arrays would not fit in the memory available (the message gives |W|, the
            bytes needed and what to do).
        """
        cap = self.capacity
        while cap < capacity:
            cap *= 2
        self._reserve(cap, capacity)

    def _reserve(self, capacity: int, points: int | None = None) -> None:
        """Arrays for at least ``capacity`` margin points (keeping the current ones);
        ``points``: the margin points the caller is about to hold, the |W| of the MemoryError
        (None: |M|).

        R, y, g, basis are in factor order; Q_MM is kept by *slot* (``_qs[i]``: the slot of the
        i-th point; a point keeps its slot while it is in M, a freed slot's row and column are
        zero), so that a delete moves no O(|M|²) block of Q."""
        old = self._r
        if old is not None and old.shape[0] >= capacity:
            return
        cap = max(16, capacity, 2 * (0 if old is None else old.shape[0]))
        m = self.m
        if cap > 256:  # small factors cannot run out of memory (and reading /proc costs)
            _check_memory(cap, m if points is None else points)
        # Not zeroed: only R[:m, :m] and Q[:top, :top] are read (see _insert).
        arrays = dict(_r=np.empty((cap, cap)), _q=np.empty((cap, cap)), _y=np.zeros(cap), _g=np.zeros(cap),
                      _basis=np.zeros(cap, dtype=np.int64), _qs=np.arange(cap, dtype=np.int64),
                      _work=np.zeros(cap + 1), _xs=np.zeros(cap), _buf=np.zeros(cap))
        if old is not None:
            _copy_into(self._r, self._q, self._y, self._g, self._basis, self._qs, self._ints, self._floats,
                       arrays["_r"], arrays["_q"], arrays["_y"], arrays["_g"], arrays["_basis"], arrays["_qs"],
                       self._ints, self._floats, False)
        self.__dict__.update(arrays)
        self._shares = False

    # ------------------------------------------------------------------ views
    @property
    def size(self) -> int:
        """Number of margin points |M|."""
        return self.m

    @property
    def basis(self) -> np.ndarray:
        """The caller's id of each margin point, in factor order (a view: copy to keep it)."""
        return self._basis[: self.m]

    def _q_mm(self) -> np.ndarray:
        """Q_MM in factor order (a new array)."""
        qs = self._qs[: self.m]
        return self._q[np.ix_(qs, qs)]

    @property
    def matrix(self) -> np.ndarray:
        """𝐌 in factor order (a new array: |M| + 1 square, or |M| without the border)."""
        return self._bordered(self._y[: self.m], self._q_mm())

    def _bordered(self, y: np.ndarray, q: np.ndarray, border: float = 1.0) -> np.ndarray:
        """[[0, border·yᵀ], [border·y, q]], or q itself without the border (a new array)."""
        if not self.bordered:
            return q
        big = np.zeros((q.shape[0] + 1, q.shape[0] + 1))
        big[0, 1:] = big[1:, 0] = border * y
        big[1:, 1:] = q
        return big

    def _scaled(self, y: np.ndarray, q: np.ndarray) -> np.ndarray:
        """D 𝐌 D of labels ``y`` and matrix ``q`` for a condition estimate
        (:meth:`_equilibration`; a new array)."""
        w, d = self._equilibration(np.diag(q))
        return self._bordered(y * d, q * d[:, None] * d[None, :], w)

    def _equilibration(self, diagonal: np.ndarray) -> tuple[float, np.ndarray]:
        """The scaling D = diag(w, d) of 𝐌 in the condition estimates: d_k = Q_kk^(-1/2)
        (1 where Q_kk = 0), which gives D Q D a unit diagonal, and the border's w, the
        reciprocal of the mean d_k (0 without the border), which makes the mean border entry
        w·|y_k|·d_k one. D 𝐌 D is singular where 𝐌 is, and its condition number does not
        change with the kernel's scale, where 𝐌's grows with its square (K ≈ 10¹²: a linear
        kernel on features of size 10⁶, where 𝐌 of 9 margin points read 4e-20 for a D 𝐌 D of
        2e-8; SimpleSVM took it for singular, stepped along no null direction, and cycled),
        nor with a diagonal spread over many orders, as Cholesky's round-off does not (zero
        rows of a linear kernel, Q_kk the ridge 1e-6, beside Q_kk = 2.5e13). (On a uniform
        diagonal c it is c⁻¹ [[0, c yᵀ], [c y, Q]]: the border scaled by the mean diagonal,
        as these estimates took it before the rows were scaled too. A border scaled by the
        largest diagonal entry instead stood far above most of an unscaled Q spread over many
        orders, a degree-16 polynomial kernel's 10 to 3e11, where 1 / κ of regular margin
        matrices fell to 1e-12 and below and that fit cycled.)"""
        d = np.ones(diagonal.shape[0])
        d[diagonal > 0.0] = 1.0 / np.sqrt(diagonal[diagonal > 0.0])
        if not self.bordered:
            return 0.0, d
        return (1.0 / float(np.mean(d)) if d.size else 1.0), d

    def copy(self, into: BorderedFactor | None = None) -> BorderedFactor:
        """An independent copy (the path is transactional: it works on a copy). It copies the
        blocks in use, O(|M|²), into arrays with room for twice as many points: those of
        ``into`` (a factor nothing reads any more) when they are large enough, since fresh
        memory for large arrays costs more to touch than to copy. Where ``into`` holds the
        arrays this factor was copied from, unwritten since (a stream's state before the last
        update), only what this factor's log names is copied (:data:`_INTS`): R from the lowest
        row a path deleted or inserted at, and the Q slots it wrote, where the whole copy moved
        2 |M|² numbers (a third of a window's update at |M| ≈ 500, RandomRBF, window 1,000)."""
        m, top = self.m, self._top
        capacity = max(2 * max(m, top), 16)
        logged = False
        if (into is not None and into is not self and into._r is not self._r
                and into._r.shape[0] >= max(m, top) + 1):
            twin = self.__dict__.get("_twin")
            logged = (twin is not None and twin[0]() is into._r and twin[1]() is into._q
                      and int(into._ints[_WRITES]) == twin[2])
            new, arrays = into, {name: getattr(into, name) for name in self._ARRAYS}
            new.__dict__.clear()
            new.__dict__.update({**self.__dict__, **arrays})
        else:
            new = object.__new__(BorderedFactor)
            new.__dict__.update(self.__dict__)
            new._ints, new._floats, new._r = _new_ints(), np.zeros(_FLOATS), None
            new._reserve(capacity, m)
        _copy_into(self._r, self._q, self._y, self._g, self._basis, self._qs, self._ints, self._floats,
                   new._r, new._q, new._y, new._g, new._basis, new._qs, new._ints, new._floats, logged)
        new._ints[_LO], new._ints[_WRITES], new._ints[_LOGGED] = _CLEAN, _new_stamp(), 0
        new._twin = (weakref.ref(self._r), weakref.ref(self._q), int(self._ints[_WRITES]))
        new.spare, new._shares = None, False
        return new

    def __getstate__(self):
        # Pickles hold the used part only, in factor order (the capacity is rebuilt on load).
        m = self.m
        state = {k: v for k, v in self.__dict__.items()
                 if k not in self._ARRAYS and k not in ("spare", "_shares", "_twin")}
        state.update(_r=self._r[:m, :m].copy(), _q=self._q_mm(), _y=self._y[:m].copy(), _g=self._g[:m].copy(),
                     _basis=self._basis[:m].copy(), _floats=self._floats.copy(), m_size=m)
        return state

    def __setstate__(self, state):
        m = state.pop("m_size")
        small = {name: state.pop(name) for name in ("_r", "_q", "_y", "_g", "_basis")}
        floats = np.zeros(_FLOATS)
        # (A model saved before the floor: two entries, floor 0; with rcond beside it: four.)
        saved = state.pop("_floats")[:_FLOATS]
        floats[: saved.shape[0]] = saved
        self.__dict__.update(state)
        self._ints, self._floats, self._r, self._shares = _new_ints(), floats, None, False
        self._reserve(m + 1)
        self.m, self._top = m, m
        self._r[:m, :m], self._q[:m, :m] = small["_r"], small["_q"]
        self._y[:m], self._g[:m], self._basis[:m] = small["_y"], small["_g"], small["_basis"]

    # ------------------------------------------------------------------ changes
    def insert(self, point: int, y_k, q_kB: np.ndarray, q_kk: float) -> None:
        """Append a margin point.

        Parameters
        ----------
        point : int
            The caller's id of the new point (kept in :attr:`basis`).
        y_k : float or None
            Label (±1) of the new margin point (ignored without the border).
        q_kB : ndarray of shape (|M|,)
            ``Q[k, basis]``: the new point's row against the margin points, in factor order.
        q_kk : float
            ``Q[k, k]`` (including any ridge).

        Raises
        ------
        SingularMarginError
            If 𝐌 with the new point is numerically singular; the factor is left unchanged.
        """
        if self.m == self._r.shape[0]:
            self._reserve(self.m + 1)
        y_k = float(y_k) if self.bordered else 1.0
        q_kB, q_kk = np.ascontiguousarray(q_kB, dtype=np.float64), float(q_kk)
        ok, d2 = factor_insert(*self.arrays, point, y_k, q_kB, q_kk, self.bordered)
        if not ok:
            self._insert_tiny_pivot(point, y_k, q_kB, q_kk, d2)

    def insert_block(self, points: np.ndarray, labels, q_newB: np.ndarray, q_newnew: np.ndarray) -> bool:
        """Append several margin points at once: by one block step of the Cholesky factor (a
        triangular solve with many right-hand sides and the Cholesky factor of the Schur
        complement: LAPACK's level-3 routines, where :meth:`insert` one at a time is level 2),
        or, where the factor then holds at most ``_EACH_UP_TO`` points, one point at a time
        in one compiled call (:func:`_insert_each`).

        Parameters
        ----------
        points : int ndarray of shape (p,)
            The caller's ids of the new points.
        labels : ndarray of shape (p,) or None
            Their labels (±1; ignored without the border).
        q_newB : ndarray of shape (p, |M|)
            ``Q[new, basis]``, the rows of the new points against the margin points.
        q_newnew : ndarray of shape (p, p)
            ``Q[new, new]`` (ridge included).

        Returns
        -------
        bool
            True if they all went in; False, the factor unchanged (but for its capacity and
            the order of its free Q slots), if a pivot of the block is tiny (below 1e-8 of
            the diagonal, as :meth:`insert` checks) and 𝐌 with the block is numerically
            singular (the caller then enters them one at a time, which decides on each). Of
            more than ``_EACH_UP_TO`` points, a block with a tiny pivot but a regular 𝐌
            (the condition estimate above ``rcond``, as :meth:`insert` decides for one
            point, from the factor with the block appended where its pivots are positive)
            goes in by one factor of 𝐌 afresh: one at a time, each such point took its own
            estimate and factor, O(|M|³) each (a linear kernel in 64 features at C = 691,
            whose SMO start had 1,250 free points: 124 s, where the block takes one).
        """
        m, p = self.m, len(points)
        if p == 0:
            return True
        self._own()
        y_new = np.asarray(labels, dtype=np.float64) if self.bordered else np.ones(p)
        if m + p <= _EACH_UP_TO:
            # A small block, one point at a time in one compiled call: the block step's two
            # dozen NumPy and LAPACK calls took 0.16 ms for 34 points into an empty factor,
            # against some 0.02 ms (a one-vs-one pair's margin set).
            self._reserve(m + p)
            return bool(_insert_each(*self.arrays, np.ascontiguousarray(points, dtype=np.int64), y_new,
                                     np.ascontiguousarray(q_newB, dtype=np.float64),
                                     np.ascontiguousarray(q_newnew, dtype=np.float64), self.bordered))
        diagonal = np.diag(q_newnew)
        rho = self._rho if m else _shift_of(diagonal, self.bordered)
        rows = np.ascontiguousarray(q_newB + rho * np.outer(y_new, self._y[:m]))  # (p, m): A₁₂ᵀ
        dtrsm_upper_t(self._r, m, rows)
        r12 = rows.T
        schur = q_newnew + rho * np.outer(y_new, y_new) - r12.T @ r12
        r22, info = dpotrf(schur, lower=False, clean=True, overwrite_a=False)
        pivots, own = np.diag(r22) ** 2, diagonal + rho
        i = int(np.argmin(pivots / own))  # (each pivot against its own row, as insert's)
        tiny = (info != 0 or _tiny(float(pivots[i]), float(own[i]), self._floats[2], m + p - 1)
                or any(_swamped(float(q_kk), rho) for q_kk in diagonal))
        from_factor = info == 0 and m + p >= _ESTIMATE_FROM_FACTOR  # (else LAPACK's, as insert decides)
        if tiny and not from_factor and _reciprocal_condition(self._with_block(y_new, q_newB, q_newnew)) <= self.rcond:
            return False
        self._reserve(m + p)
        qs = self._qs
        qs[m:] = np.sort(qs[m:])  # the lowest free slots, as insert takes them one at a time
        new_slots, old_slots = qs[m : m + p], qs[:m]
        beyond = new_slots[new_slots >= self._top]  # beyond the rows in use: never written
        for slot in new_slots.tolist():
            _log_write(self._ints, m, slot)
        self._q[beyond, :] = 0.0
        self._q[:, beyond] = 0.0
        self._q[np.ix_(new_slots, old_slots)] = q_newB
        self._q[np.ix_(old_slots, new_slots)] = q_newB.T
        self._q[np.ix_(new_slots, new_slots)] = q_newnew
        self._y[m : m + p], self._basis[m : m + p] = y_new, points
        top = self._top
        self.m, self._top = m + p, max(top, int(new_slots.max()) + 1)
        if info == 0:
            self._r[:m, m : m + p] = r12
            self._r[m : m + p, : m + p] = 0.0
            self._r[m : m + p, m : m + p] = r22
            if self.bordered:  # g = R⁻ᵀ y, its new part from the new rows of Rᵀ
                self._g[m : m + p] = _upper_solve_t(r22, y_new - r12.T @ self._g[:m])
            self._rho = rho
        if tiny:  # (the updated factor would be inaccurate: 𝐌 factored anew)
            try:
                if from_factor and self._reciprocal_condition_from_factor(m + i) <= self.rcond:
                    raise SingularMarginError("the margin matrix with the block is numerically singular")
                self.refactor()
            except SingularMarginError:
                self.m, self._top = m, top  # (R[:m, :m], g[:m] and, where m > 0, ρ as they were)
                self._q[new_slots, :] = 0.0
                self._q[:, new_slots] = 0.0
                return False
        self._floats[1] = max(self._floats[1], float(np.max(np.abs(q_newB), initial=0.0)),
                              float(np.max(np.abs(q_newnew))), 1.0 if self.bordered else 0.0)
        return True

    def _with_block(self, y_new: np.ndarray, q_newB: np.ndarray, q_newnew: np.ndarray) -> np.ndarray:
        """𝐌 with the points of :meth:`insert_block` appended, its border scaled for the
        condition estimate (:meth:`_scaled`; a new array, factor order)."""
        m, p = self.m, y_new.shape[0]
        q = np.empty((m + p, m + p))
        q[:m, :m], q[m:, :m], q[:m, m:], q[m:, m:] = self._q_mm(), q_newB, q_newB.T, q_newnew
        return self._scaled(np.concatenate([self._y[:m], y_new]), q)

    def _insert_tiny_pivot(self, point, y_k, q_kB, q_kk, d2) -> None:
        """A pivot this small may be round-off of an exact zero: the condition number of 𝐌
        with the point decides, and a nonsingular 𝐌 is factored anew, since the updated
        factor would be inaccurate. In a large factor (``_ESTIMATE_FROM_FACTOR``) a positive
        pivot is appended first and the estimate solves through that factor, O(|M|²)
        (:meth:`_reciprocal_condition_from_factor`); a pivot at or below zero leaves no factor,
        and LAPACK's estimate, as in a small factor, factors 𝐌 itself, O(|M|³)."""
        m, top, slot = self.m, self._top, int(self._qs[self.m])  # _insert chose (and logged) the slot
        qs = self._qs[:m]
        self._q[slot, qs] = self._q[qs, slot] = q_kB
        self._q[slot, slot] = q_kk
        self._y[m], self._basis[m] = y_k, point
        self.m, self._top = m + 1, max(top, slot + 1)
        try:
            if d2 > 0.0 and m + 1 >= _ESTIMATE_FROM_FACTOR:
                self._append_row(q_kB, y_k, math.sqrt(d2))
                rcond = self._reciprocal_condition_from_factor(m)
            else:
                rcond = _reciprocal_condition(self._scaled(self._y[: m + 1], self._q_mm()))
            if rcond <= self.rcond:
                q_max = float(np.max(np.abs(np.diagonal(self._q)[self._qs[: m + 1]])))
                raise SingularMarginError(
                    f"the margin matrix became singular when a point entered the margin set "
                    f"(|M| = {m + 1}, squared pivot {d2:.3g} against Q_kk up to {q_max:.3g}): duplicate "
                    f"margin points or margin points whose kernel columns are linearly dependent, which "
                    f"ridge > 0 separates; or kernel values too large for float64, which standardized "
                    f"features (or a larger ridge) bring back"
                )
            self.refactor()
        except SingularMarginError:
            self.m, self._top = m, top  # (R[:m, :m] and g[:m] are as they were)
            self._q[slot, :] = 0.0
            self._q[:, slot] = 0.0
            raise

    def _append_row(self, q_kB: np.ndarray, y_k: float, d: float) -> None:
        """Write the last margin point's column of R, r = R⁻ᵀ(q_kB + ρ y_k y) and pivot ``d``
        (as :func:`_insert` computes them), and its entry of g."""
        m = self.m - 1
        r = q_kB + self._rho * y_k * self._y[:m]
        dtrsv_upper(self._r, m, r, True)  # (in place on R's storage: LAPACK's dtrtrs copied R[:m, :m] each call)
        _log_write(self._ints, m, -1)
        self._r[:m, m], self._r[m, :m], self._r[m, m] = r, 0.0, d
        if self.bordered:
            self._g[m] = (y_k - r @ self._g[:m]) / d

    def _reciprocal_condition_from_factor(self, tiny: int) -> float:
        """1 / κ₁(D 𝐌 D) (:meth:`_equilibration`) estimated from the factor in hand, ``tiny``
        the position of its smallest new pivot: ‖𝐌‖₁ exactly; ‖𝐌⁻¹‖₁ by Hager's estimate as Higham refined it
        (SciPy's ``onenormest`` with one column: the iteration of LAPACK's dlacn2, which dsycon
        runs), with the column of 𝐌⁻¹ at ``tiny`` beside it. That column holds the inverse of
        the pivot's Schur complement: the estimate's own vectors can miss it (a duplicate
        point's null direction e_i − e_j is orthogonal to every vector symmetric in i and j,
        as its start, the ones vector, is), while LAPACK's own factor meets the zero pivot
        itself. Each of the few solves costs O(|M|²). Where the floor is not resolved
        (features of size 20 on a linear kernel), every margin point past the features'
        count has a tiny pivot; at |M| ≈ 850, LAPACK's estimates from a factor of their own
        took some 80 ms each, 53 s of a 59 s fit (6 s with these)."""
        m, bordered = self.m, self.bordered
        n = m + bordered
        arrays = self.arrays
        # Of D 𝐌 D (:meth:`_equilibration`): (D 𝐌 D)⁻¹ = D⁻¹ 𝐌⁻¹ D⁻¹.
        qs = self._qs[:m]
        w, d = self._equilibration(np.diagonal(self._q)[qs])
        unscale = np.concatenate([[1.0 / w], 1.0 / d]) if bordered else 1.0 / d

        def solve(v):
            x = np.empty(n)
            factor_solve(*arrays, np.ascontiguousarray(unscale * np.ravel(v), dtype=np.float64), x, bordered, False)
            return unscale * x

        unit = np.zeros(n)
        unit[tiny + bordered] = 1.0
        column = solve(unit)
        inverse = max(onenormest(LinearOperator((n, n), matvec=solve, rmatvec=solve, dtype=np.float64), t=1),
                      float(np.abs(column).sum()))
        d_slot = np.zeros(self._top)
        d_slot[qs] = d
        norm = _norm1(self._q, self._qs, m, self._top, w, d_slot)
        return 1.0 / (norm * inverse) if inverse > 0.0 else 0.0

    def delete(self, k: int) -> None:
        """Remove the k-th margin point (0-based, in factor order).

        Raises
        ------
        IndexError
            If k is not a position of the margin set.
        """
        m = self.m
        if not 0 <= k < m:
            raise IndexError(f"margin position {k} out of range for |M| = {m}")
        factor_delete(*self.arrays, k)

    def refactor(self) -> None:
        """Factor Q̃_MM afresh, ρ chosen anew (O(|M|³); repairs accumulated round-off).

        Raises
        ------
        SingularMarginError
            If Q̃_MM is not numerically positive definite (the factor is left unchanged).
        """
        m = self.m
        if not m:
            return
        self._own()
        q, y = self._q_mm(), self._y[:m]
        rho = _shift_of(np.diag(q), self.bordered)
        try:
            lower = np.linalg.cholesky(q + rho * np.outer(y, y))
        except np.linalg.LinAlgError as exc:
            raise SingularMarginError(f"the margin matrix is numerically singular (|M| = {m})") from exc
        self._r[:m, :m] = lower.T
        _log_write(self._ints, 0, -1)
        self._rho = rho
        if self.bordered:
            self._g[:m] = y
            dtrsv_upper(self._r, m, self._g, True)

    def renumber(self, new_index: np.ndarray) -> None:
        """Map the point ids through ``new_index`` (old id -> new id)."""
        self._basis[: self.m] = new_index[self._basis[: self.m]]

    # ------------------------------------------------------------------ solve
    def solve(self, rhs: np.ndarray, check: bool = True) -> np.ndarray:
        """Solve 𝐌 x = rhs.

        Parameters
        ----------
        rhs : ndarray of shape (|M| + 1,) ((|M|,) without the border)
            In factor order, the border first.
        check : bool, default True
            Check the residual against Q_MM (as costly as the solve) and refactor first if
            the factor has drifted. A caller whose next checked solve follows soon, after no
            more than a few more deletes, may skip it.

        Returns
        -------
        x : ndarray of the shape of rhs, float64

        Raises
        ------
        SingularMarginError
            If the margin set is empty (𝐌 = [[0]] has no inverse).
        """
        m = self.m
        if not m:
            if not self.bordered:
                return np.zeros(0)
            raise SingularMarginError("the margin set is empty: 𝐌 = [[0]] is singular")
        rhs = np.ascontiguousarray(rhs, dtype=np.float64)
        x = np.empty_like(rhs)
        # Updates keep R exact only to round-off; check, and repair if needed.
        if factor_solve(*self.arrays, rhs, x, self.bordered, check) > _MAX_RESIDUAL:
            self.refactor()
            factor_solve(*self.arrays, rhs, x, self.bordered)
        return x
