"""The C-SVC solution path of Karasuyama & Takeuchi (2009), section 3.

:class:`SVCState` holds an optimal C-SVC solution together with what is needed to move it:
the margins ``y ⊙ f`` of every point (on the device), the coefficients α and the index sets
(on the host), the factor of the bordered margin matrix 𝐌 (host) and the device cache of the
margin columns ``Q[:, M]``. :meth:`SVCState.follow` adds the points A and removes the points R
along one multi-parametric path (eqs. 3–11), with the empty-margin case of section 3.3.
It returns a new state and changes nothing the state it is called on reads, except columns of
the shared device cache, which it saves first: a failure part-way puts them back and leaves
that state as it was; after a success that state is spent (:mod:`gpath.cache`).

Notation (../shared/DESIGN.md): ``Q_ij = y_i y_j K(x_i, x_j) + ridge·[i = j]``; index sets
O (α = 0, y f > 1), M (y f = 1), I (α = C, y f < 1), A (being added), R (being removed).
Each point's box is its own, ``0 ≤ α_i ≤ C_i`` (``upper``; C for every point unless weighted).
The dual's linear term may be any ``p`` (``min ½ αᵀQα + pᵀα``; C-SVC: p = −1): the state keeps
``y f + p + 1`` in ``yf`` (``shift = p + 1``, None for C-SVC), so every level stays at 1 and the
path is that of C-SVC; ε-SVR is this problem on each point twice (:mod:`gpath.svr`).
The sets are kept on the device as the levels a point's margin may not cross: O lies above
``lo = 1``, I and A below ``hi = 1``, M and R are unbounded; a breakpoint is a margin reaching
its level (:mod:`gpath._engine`) or a margin coefficient reaching 0 or C_i.
"""

from __future__ import annotations

import functools
import math
import time
from dataclasses import dataclass

import numpy as np
from numba import njit

from . import _mid_numba, _sparse
from ._active import ActiveSet
from ._array_api import namespace_by_name, scalars, to_device, to_host
from ._engine import _stationarity, engine_for, products_in_threads, threaded_product_size
from ._ratio import EPS as _EPS
from ._ratio import first_bound_hit, first_event
from ._threads import in_row_blocks
from .cache import QColumnCache, _buffered, _column_dots, _slot_dots, rows_rebuilt, spare_rows
from .kernels import Kernel, q_columns
from .linalg import BorderedFactor, single_threaded_host_blas
from .persistence import record

__all__ = ["A", "I", "M", "O", "PathError", "PathStats", "R", "SVCState", "check_resolution", "check_state",
           "follow_update", "resolves"]

# Set codes of the host array ``where``, and the levels (lo, hi) of each set.
O, M, I, A, R = 0, 1, 2, 3, 4
_UNBOUNDED = (-np.inf, np.inf)
_LEVELS = {O: (1.0, np.inf), M: _UNBOUNDED, I: (-np.inf, 1.0), A: (-np.inf, 1.0), R: _UNBOUNDED}
_LEVEL_TABLE = np.array([_LEVELS[code] for code in (O, M, I, A, R)])


@njit(cache=True)
def _levels(codes: np.ndarray, upper: np.ndarray) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover - compiled
    """The levels (lo, hi) of points in the sets ``codes`` with boxes ``upper`` (host arrays of
    shape (n,)), as :meth:`SVCState.place` gives them one point at a time."""
    n = codes.shape[0]
    lo, hi = np.empty(n), np.empty(n)
    for i in range(n):
        if upper[i] <= 0.0:  # an empty box: the point cannot move, it reaches no level
            lo[i], hi[i] = -np.inf, np.inf
        else:
            lo[i], hi[i] = _LEVEL_TABLE[codes[i], 0], _LEVEL_TABLE[codes[i], 1]
    return lo, hi


# ---------------------------------------------------------------------- host passes
# Compiled passes over the host arrays α, y and the boxes, which every namespace keeps on the
# host: each replaces several NumPy steps whose fixed cost, not their O(n) arithmetic, is what
# a window's one-point update pays for them.


@njit(cache=True)
def _at_bounds(alpha, upper, members, rel, tiny):  # pragma: no cover - compiled
    """Whether every α_k of ``members`` is within ``rel`` of a bound: at most
    ``max(rel · max α, min(tiny, rel · C_k))`` or at least ``(1 − rel) C_k``."""
    a_max = alpha.max() if alpha.shape[0] else 0.0
    for k in members:
        if alpha[k] > max(rel * a_max, min(tiny, rel * upper[k])) and alpha[k] < upper[k] * (1.0 - rel):
            return False
    return True


@njit(cache=True)
def _balanced_at_bounds(alpha, y, upper, members, rel):  # pragma: no cover - compiled
    """:meth:`SVCState.release_bounded_margin`'s first pass: :func:`_balanced` (with members),
    then ``max α`` and ``max C_i`` (0 for no point) and :func:`_at_bounds` with ``tiny`` 0."""
    if members.shape[0]:
        _balanced(alpha, y, upper, members)
    a_max = alpha.max() if alpha.shape[0] else 0.0
    c_max = upper.max() if upper.shape[0] else 0.0
    return a_max, c_max, _at_bounds(alpha, upper, members, rel, 0.0)


@njit(cache=True)
def _release_due(alpha, upper, members, a_max, c_max, at_bounds):  # pragma: no cover - compiled
    """:meth:`SVCState.release_bounded_margin`'s test after :func:`_balanced_at_bounds` (its
    ``a_max``, ``c_max`` and ``at_bounds``): every member at a bound, or every α_k tiny,
    below 1e-12 C_k (:meth:`SVCState._release` then decides)."""
    if at_bounds:
        return True
    if not (members.shape[0] and 0.0 < a_max <= 1e-12 * c_max):
        return False
    for i in range(alpha.shape[0]):
        if not alpha[i] <= 1e-12 * upper[i]:
            return False
    return True


@njit(cache=True, fastmath={"reassoc"})
def _signed_sum(y, alpha):  # pragma: no cover - compiled
    """``yᵀα``."""
    r = 0.0
    for i in range(alpha.shape[0]):
        r += y[i] * alpha[i]
    return r


@njit(cache=True)
def _balanced(alpha, y, upper, members):  # pragma: no cover - compiled
    """:meth:`SVCState._balance` in place: the margin coefficients shifted along y_M by their
    share of ``yᵀα``, within their boxes."""
    share = _signed_sum(y, alpha) / members.shape[0]
    for k in members:
        alpha[k] = min(max(alpha[k] - y[k] * share, 0.0), upper[k])


@njit(cache=True)
def _feasibility(alpha, y, upper):  # pragma: no cover - compiled
    """``max(|yᵀα|, max_i −α_i, max_i α_i − C_i, 0)``: how far α is from feasible."""
    r, worst = 0.0, 0.0
    for i in range(alpha.shape[0]):
        r += y[i] * alpha[i]
        worst = max(worst, -alpha[i], alpha[i] - upper[i])
    return max(worst, abs(r))


@njit(cache=True)
def _refined_margins(alpha, y, upper, members, data, slots, rows, top, b, shift, yf, lo, hi, C,
                     tol):  # pragma: no cover - compiled
    """:meth:`SVCState.refine` then the first test of :meth:`SVCState.kkt_check` on NumPy
    arrays, as far as they need no scale and no repair: α balanced (in place), the residual
    of the margin equations (its margins from the cached columns by
    :func:`gpath.cache._column_dots`, as :meth:`margin_residual`), and, where its largest
    entry is at most ``tol`` of the margin rows' own scale (1 + max_{k ∈ M} Σ_j |Q_kj| α_j
    + |shift_k|, taken in the same pass: at most :meth:`SVCState.kkt_scale`), the KKT
    violation relative to 1 (``shift`` empty: none). Returns (violation, whether it was
    taken): not where the residual is above that or not a number (the caller goes on with
    the readable code, α already balanced)."""
    m = members.shape[0]
    if m:
        _balanced(alpha, y, upper, members)
    sizes = np.empty(m)
    dots = _column_dots(data, slots, rows, top, alpha, sizes) if m else sizes
    return _checked_margins(alpha, y, upper, members, dots, sizes, b, shift, yf, lo, hi, C, tol)


@njit(cache=True)
def _checked_margins(alpha, y, upper, members, dots, sizes, b, shift, yf, lo, hi, C,
                     tol):  # pragma: no cover - compiled
    """:func:`_refined_margins` after its dots (``dots`` and ``sizes``: the margin columns'
    against α and their absolute terms' sums, in the members' order)."""
    worst = abs(-_signed_sum(y, alpha))
    scale = 1.0
    for i in range(members.shape[0]):
        k = members[i]
        yf_k = dots[i] + y[k] * b
        size = sizes[i]
        if shift.shape[0]:
            yf_k = yf_k + shift[k]
            size += abs(shift[k])
        worst = max(worst, abs(1.0 - yf_k))
        scale = max(scale, 1.0 + size)
        if math.isnan(yf_k):  # (the readable code's case)
            return math.inf, False
    if not worst <= tol * scale:
        return math.inf, False
    violation = _stationarity(yf, lo, hi, members, shift, 1.0)
    return max(violation, _feasibility(alpha, y, upper) / C), True


@njit(cache=True)
def _kept_host(keep, y, alpha, upper, where):  # pragma: no cover - compiled
    """:meth:`SVCState.take_rows` on the host arrays: y, α, the boxes and the sets at the rows
    ``keep``; the map old row -> new row (−1: dropped); whether ``keep`` is one run of
    consecutive increasing rows."""
    m = keep.shape[0]
    new_index = np.full(alpha.shape[0], -1, dtype=np.int64)
    y_kept, alpha_kept, upper_kept = np.empty(m), np.empty(m), np.empty(m)
    where_kept = np.empty(m, dtype=np.int8)
    consecutive = True
    for t in range(m):
        k = keep[t]
        new_index[k] = t
        y_kept[t], alpha_kept[t], upper_kept[t], where_kept[t] = y[k], alpha[k], upper[k], where[k]
        consecutive = consecutive and (t == 0 or k == keep[t - 1] + 1)
    return new_index, y_kept, alpha_kept, upper_kept, where_kept, consecutive


@njit(cache=True)
def _kept_rows(keep, y, alpha, upper, where, yf, lo, hi, shift):  # pragma: no cover - compiled
    """:func:`_kept_host`, and the rows ``keep`` of y f, its levels and the shift (empty: none)
    where the state's device arrays are host arrays too (NumPy)."""
    new_index, y_kept, alpha_kept, upper_kept, where_kept, consecutive = _kept_host(keep, y, alpha, upper, where)
    m = keep.shape[0]
    yf_kept, lo_kept, hi_kept = np.empty(m), np.empty(m), np.empty(m)
    shift_kept = np.empty(m if shift.shape[0] else 0)
    for t in range(m):
        k = keep[t]
        yf_kept[t], lo_kept[t], hi_kept[t] = yf[k], lo[k], hi[k]
        if shift.shape[0]:
            shift_kept[t] = shift[k]
    return new_index, y_kept, alpha_kept, upper_kept, where_kept, consecutive, yf_kept, lo_kept, hi_kept, shift_kept


_NO_SHIFT = np.zeros(0)
# An update or a fit ends with the residual of its margin equations at most this, relative to
# the scale of y f (:meth:`SVCState.kkt_scale`): some 45 ε, where a fresh solve leaves 2–6e-16.
# A path's steps leave more at large C, and the state keeps it (a later update's steps carry
# the residual along; a removal that shrinks the scale makes an old one large beside it):
# 6e-13 after 595 breakpoints of a zero-tube ε-SVR at C = 7e7, 6e-6 in units of y where the
# re-solved sets leave 7e-9, and 4.8e-7 of |f| from them. Repairs stay rare: none in 300
# one-point updates of C-SVC windows, 2 to 6 in 300 of ε-SVR windows at C ≥ 10³.
_REFINE_TOL = 1e-14
# Whether SVCState._followed takes a small update in one compiled call (gpath._one_point);
# tests turn it off to compare with the readable path.
ONE_POINT = True
_FEW_POINTS = 64  # the most added or removed rows it is tried for
_NO_RECORD = np.zeros(0, dtype=bool)
_NOT_ASKED = np.full(4, -1.0)  # (gpath._one_point._path_end's end: no check asked)
# Spare cache rows of each slot written by SVCState.prepare_updates: a page of float64s. It
# copies X and the factor only below _PREPARED_ENTRIES entries each (32 MB): a larger model's
# update costs far more than its memory's first touch, and a model that is never updated
# would hold twice its memory.
_TOUCHED_ROWS = 512
_PREPARED_ENTRIES = 1 << 22


@njit(cache=True)
def _appended_rows(upper, where, yf, lo, hi, upper_add, yf_add, shift, shift_add):  # pragma: no cover - compiled
    """:meth:`SVCState._extended` on NumPy arrays: the boxes, sets, margins, levels and shift
    (empty: none) with the added rows appended, in set A."""
    n, m = upper.shape[0], upper_add.shape[0]
    upper2, yf2, lo2, hi2 = np.empty(n + m), np.empty(n + m), np.empty(n + m), np.empty(n + m)
    where2 = np.empty(n + m, dtype=np.int8)
    shift2 = np.empty(n + m if shift.shape[0] else 0)
    upper2[:n], where2[:n], yf2[:n], lo2[:n], hi2[:n] = upper, where, yf, lo, hi
    if shift.shape[0]:
        shift2[:n] = shift
    lo_add, hi_add = _levels(np.full(m, A, dtype=np.int8), upper_add)
    for j in range(m):
        upper2[n + j], where2[n + j], yf2[n + j], lo2[n + j], hi2[n + j] = upper_add[j], A, yf_add[j], lo_add[j], hi_add[j]
        if shift.shape[0]:
            shift2[n + j] = shift_add[j]
    return upper2, where2, yf2, lo2, hi2, shift2


@njit(cache=True)
def _shifted_rows(remove, y, alpha, upper, where, yf, lo, hi, shift, y_add, upper_add, yf_add,
                  shift_add):  # pragma: no cover - compiled
    """:meth:`SVCState._shifted`'s rows: the host arrays without the rows ``remove`` (as
    :func:`_kept_rows`), then the added rows in O with α = 0; the rows kept, the map of the
    rows and the added ones to the new rows (−1: dropped), and whether the rows kept and the
    added ones are one run of consecutive rows."""
    n, m = alpha.shape[0], y_add.shape[0]
    dropped = np.zeros(n, dtype=np.bool_)
    for k in remove:
        dropped[k] = True
    keep = np.empty(n, dtype=np.int64)
    n_keep = 0
    for k in range(n):
        if not dropped[k]:
            keep[n_keep] = k
            n_keep += 1
    keep = keep[:n_keep]
    new_index, y2, alpha2, upper2, where2 = (np.full(n + m, -1, dtype=np.int64), np.empty(n_keep + m),
                                             np.empty(n_keep + m), np.empty(n_keep + m),
                                             np.empty(n_keep + m, dtype=np.int8))
    yf2, lo2, hi2 = np.empty(n_keep + m), np.empty(n_keep + m), np.empty(n_keep + m)
    shift2 = np.empty(n_keep + m if shift.shape[0] else 0)
    consecutive = True
    for t in range(n_keep):
        k = keep[t]
        new_index[k] = t
        y2[t], alpha2[t], upper2[t], where2[t] = y[k], alpha[k], upper[k], where[k]
        yf2[t], lo2[t], hi2[t] = yf[k], lo[k], hi[k]
        if shift.shape[0]:
            shift2[t] = shift[k]
        consecutive = consecutive and (t == 0 or k == keep[t - 1] + 1)
    for j in range(m):
        t = n_keep + j
        new_index[n + j] = t
        y2[t], alpha2[t], upper2[t], yf2[t] = y_add[j], 0.0, upper_add[j], yf_add[j]
        _mid_numba._place(t, O, where2, lo2, hi2, upper2)
        if shift.shape[0]:
            shift2[t] = shift_add[j]
    # The added rows continue the kept ones only after the last row.
    consecutive = consecutive and (m == 0 or n_keep == 0 or keep[n_keep - 1] == n - 1)
    return keep, new_index, y2, alpha2, upper2, where2, consecutive, yf2, lo2, hi2, shift2


@njit(cache=True)
def _removable(remove, alpha, where, share_coef):  # pragma: no cover - compiled
    """Whether every row of ``remove`` has α = 0 outside M (removing it moves nothing) and no
    coefficient in the kept share of the KKT scale (``share_coef``, empty: none kept; the
    coefficients of its last read, which paths since may have moved to 0)."""
    for k in remove:
        if alpha[k] != 0.0 or where[k] == M or (share_coef.shape[0] and share_coef[k] != 0.0):
            return False
    return True


@njit(inline="always")
def _moves(yf_k, upper_k):  # pragma: no cover - compiled
    """Whether an added row moves along the path (section 3.2): below its level 1 (to
    :data:`_EPS`) with a box; the others go straight to O ((1a) holds, or C_k = 0)."""
    return yf_k < 1.0 - _EPS and upper_k > 0.0


@njit(cache=True)
def _beyond_levels(yf_add, upper_add):  # pragma: no cover - compiled
    """Whether no added row moves (:func:`_moves`)."""
    for j in range(yf_add.shape[0]):
        if _moves(yf_add[j], upper_add[j]):
            return False
    return True


@njit(cache=True)
def _moving_rows(n_old, remove, yf_add, upper_add, alpha):  # pragma: no cover - compiled
    """The rows a path moves, in order: the added rows ``n_old + j`` that move
    (:func:`_moves`, their margins ``yf_add`` and boxes ``upper_add``) and the removed rows
    ``remove`` with α > 0 (the others have no influence at all)."""
    a_rows = np.empty(yf_add.shape[0], dtype=np.int64)
    n_a = 0
    for j in range(yf_add.shape[0]):
        if _moves(yf_add[j], upper_add[j]):
            a_rows[n_a] = n_old + j
            n_a += 1
    r_rows = np.empty(remove.shape[0], dtype=np.int64)
    n_r = 0
    for k in remove:
        if alpha[k] > 0.0:
            r_rows[n_r] = k
            n_r += 1
    return a_rows[:n_a].copy(), r_rows[:n_r].copy()


@njit(cache=True)
def _held_rows(QA, owner):  # pragma: no cover - compiled
    """Row ``owner[s]`` of ``QA`` for each cache slot s (zeros where the slot is free, −1)."""
    out = np.zeros((owner.shape[0], QA.shape[1]))
    for slot in range(owner.shape[0]):
        if owner[slot] >= 0:
            out[slot, :] = QA[owner[slot], :]
    return out


@njit(cache=True)
def _path_sets(n_old, remove, yf, lo, hi, where, upper, alpha):  # pragma: no cover - compiled
    """:class:`_PathRun`'s sets at the start of a path on NumPy arrays, placed in place: the
    added rows ``n_old..`` that move (the others to O), each added row's column of Q[:, A],
    the removed rows with α > 0, and the removed rows that were in M (which leave the active
    set next); every removed row to R."""
    n = yf.shape[0]
    a_rows, r_rows = _moving_rows(n_old, remove, yf[n_old:], upper[n_old:], alpha)
    a_col = np.full(n, -1, dtype=np.int64)
    t = 0
    for k in range(n_old, n):
        a_col[k] = k - n_old
        if t < a_rows.shape[0] and a_rows[t] == k:
            t += 1
        else:
            _mid_numba._place(k, O, where, lo, hi, upper)
    in_margin = np.empty(remove.shape[0], dtype=np.int64)
    n_m = 0
    for k in remove:
        if where[k] == M:
            in_margin[n_m] = k
            n_m += 1
        _mid_numba._place(k, R, where, lo, hi, upper)
    return a_rows, a_col, r_rows, in_margin[:n_m].copy()


def kkt_violation(yf: np.ndarray, y: np.ndarray, alpha: np.ndarray, upper: np.ndarray, scale,
                  box: float) -> float:
    """The largest KKT violation of α given its margins recomputed from scratch: the
    stationarity violations (a point below y f = 1 with α < C_i, above it with α > 0)
    divided by ``1 + scale``, and those of yᵀα = 0 and 0 ≤ α ≤ C_i divided by ``box``.

    Parameters
    ----------
    yf : ndarray of shape (n,), float64
        Margins y_i f(x_i), the ridge's ``d α_i`` included.
    y, alpha, upper : ndarray of shape (n,), float64
        Labels ±1, dual coefficients and boxes C_i (inf: none).
    scale : float or ndarray of shape (n,)
        ``max_i Σ_j |Q_ij| α_j``, or a bound of it; or one per row.
    box : float
        The constraints' unit (C).

    Returns
    -------
    float
        The rule of ``check_kkt`` (Karasuyama & Takeuchi 2009, eq. 1: the conditions (1a–1c)).
    """
    g = (yf - 1.0) / (1.0 + scale)
    stat = max(np.max(np.where(alpha < upper, -g, -np.inf)), np.max(np.where(alpha > 0, g, -np.inf)))
    over = float(np.max(alpha - upper, initial=0.0))
    feas = max(abs(float(y @ alpha)), float(np.max(-alpha)), over) / box
    return float(max(stat, feas, 0.0))


class PathError(RuntimeError):
    """The path could not be followed (cycling among degenerate breakpoints, or a broken
    invariant); the model it started from is unchanged."""


@record
@dataclass(frozen=True)
class PathStats:
    """What one path (one ``fit`` or ``update``) did.

    Attributes
    ----------
    n_breakpoints : int
        Breakpoints passed: each change of an index set during the path (eq. 11's events),
        including the bias jumps of the empty-margin case (section 3.3).
    n_added, n_removed : int
        Points added and removed.
    time : float
        Wall time in seconds.
    margin_size : int
        |M| at the end.
    method : str
        How the solution was reached: "path" (followed), "refit" (SimpleSVM warm-started
        from the previous solution: ``IncrementalSVC(method="auto")``), "path and refit"
        (a multiclass update, pair by pair), or "fit".
    """

    n_breakpoints: int
    n_added: int
    n_removed: int
    time: float
    margin_size: int
    method: str = "path"


@dataclass(frozen=True)
class _Appended:
    """An update's new rows appended to a state (:meth:`SVCState._appended`)."""

    X: object
    x_rows: tuple | None
    y: object
    QA: object
    yf_add: object


class SVCState:
    """An exact C-SVC solution that can be moved along the incremental/decremental path.

    Parameters
    ----------
    xp, device
        Namespace and device of every n-sized array.
    kernel : Kernel
    C : float
        Box constraint, > 0 (the model's; each point's own box is in ``upper``).
    ridge : float
        Constant added to the kernel diagonal (Q_ii includes it everywhere, also in y f).
    n_features : int
    shift : device array of shape (n,) or None
        ``p + 1`` for the dual's linear term p (module docstring); None: C-SVC (p = −1).

    Attributes
    ----------
    X, y, yf, lo, hi : device arrays
        Training rows (n, d), labels ±1, margins y f (ridge included; plus ``shift``),
        and the levels of each point's set (module docstring).
    shift : device array of shape (n,) or None
    y_host, alpha, upper : ndarray of shape (n,)
        Labels, dual coefficients and each point's box C_i (host).
    where : ndarray of shape (n,), int8
        Set codes O, M, I (A, R during a path).
    b : float
    active : ActiveSet
        The margin set M: its points in factor order, the factor of 𝐌 and the cached columns.
    engine : Engine
        The n-sized passes of a breakpoint for this namespace (:mod:`gpath._engine`).
    n_iter : int
        Set by :class:`gpath.IncrementalSVC` only (its ``n_iter_``): the SimpleSVM
        iterations or path breakpoints that made this state.
    twins : bool
        Whether rows 2i and 2i + 1 are one point (ε-SVR's doubled rows, :mod:`gpath.svr`):
        an update's kernel blocks then compute each kernel value once (:meth:`q_rows_block`).
    unmoved : bool
        Set by :meth:`follow`: whether its path moved no coefficient (the added points went to
        O, the removed ones had α = 0) and the margin set is not empty, so that α on the kept
        rows, b and M are those of the state it started from, bit for bit.
    """

    twins = False
    unmoved = False

    def __init__(self, xp, device, kernel: Kernel, C: float, ridge: float, n_features: int, shift=None):
        self.xp, self.device = xp, device
        self.shift = shift
        self.kernel, self.C, self.ridge = kernel, float(C), float(ridge)
        f64 = xp.float64
        self.X = xp.zeros((0, n_features), dtype=f64, device=device)
        self.y = xp.zeros(0, dtype=f64, device=device)
        self.yf = xp.zeros(0, dtype=f64, device=device)
        self.lo = xp.zeros(0, dtype=f64, device=device)
        self.hi = xp.zeros(0, dtype=f64, device=device)
        self.y_host = np.zeros(0)
        self.alpha = np.zeros(0)
        self.upper = np.zeros(0)
        self.where = np.zeros(0, dtype=np.int8)
        self.b = 0.0
        self.active = ActiveSet(self._new_factor(), QColumnCache(xp, device, 0), self.q_column)
        self.engine = engine_for(xp, device, kernel)

    def _new_factor(self) -> BorderedFactor:
        """An empty factor of 𝐌 whose floor is the ridge where the kernel is positive
        semi-definite (every eigenvalue of Q_MM is then at least the ridge)."""
        return BorderedFactor(floor=self.ridge if self.kernel.positive_semidefinite else 0.0)

    def __getstate__(self):
        state = {**self.__dict__, "xp": self.xp.__name__}
        state.pop("_x_rows", None)  # X's row buffer: a copy or a pickle holds X alone
        return state

    def __setstate__(self, state):
        self.__dict__.update(state, xp=namespace_by_name(state["xp"]))
        self.active.column = self.q_column

    @property
    def n(self) -> int:
        return self.alpha.shape[0]

    @property
    def cache(self) -> QColumnCache:
        """The device cache of the margin columns (the active set's)."""
        return self.active.cache

    @cache.setter
    def cache(self, cache: QColumnCache) -> None:
        self.active.cache = cache

    @property
    def factor(self) -> BorderedFactor:
        """The factor of 𝐌 (the active set's)."""
        return self.active.factor

    @property
    def margin(self) -> np.ndarray:
        """The margin set M in factor order (a copy)."""
        return self.active.members.copy()

    # ------------------------------------------------------------------ sets
    def place(self, k: int, code: int) -> None:
        """Put point k in set ``code`` and give it that set's levels (module docstring). A
        point with an empty box (C_k = 0) never reaches a level: it cannot move."""
        self.where[k] = code
        lo, hi = _LEVELS[code] if self.upper[k] > 0.0 else _UNBOUNDED
        self.lo[k] = lo
        self.hi[k] = hi

    def place_all(self, ks: np.ndarray, code: int) -> None:
        """:meth:`place` for the points ``ks`` (host ints) at once."""
        if ks.size:
            self.where[ks] = code
            lo, hi = _levels(np.full(ks.size, code, dtype=np.int8), self.upper[ks])
            self.engine.scatter(self.lo, ks, lo)
            self.engine.scatter(self.hi, ks, hi)

    # ------------------------------------------------------------------ Q columns
    def q_block(self, X_cols, y_cols, col_rows: np.ndarray):
        """Columns ``Q[:, cols]`` (n × k, device) for points with inputs ``X_cols`` (k × d),
        labels ``y_cols`` (device, ±1) and row indices ``col_rows`` (host; -1 if not a row)."""
        return q_columns(self.kernel, self.X, X_cols, col_rows, self.ridge, self.y, y_cols)

    def q_column(self, k: int):
        """Column ``Q[:, k]`` (device, shape (n,)) for training point k (of rows in twins, each
        kernel value once, as :meth:`q_rows_block`)."""
        self.cache.n_columns_computed += 1
        if self.twins:
            return self.engine.twin_block(self.kernel, self.X, np.array([k]), self.y, self.ridge)[:, 0]
        return self.engine.q_column(self.kernel, self.X, k, self.y, self.ridge)

    def q_rows_block(self, cols: np.ndarray):
        """Columns ``Q[:, cols]`` of training rows ``cols`` (host ints; device, shape
        (n, len(cols))), not counted among the cache's columns: an update's own columns (its
        new and removed points). Where the rows come in twins (``twins``: ε-SVR's doubled
        rows), each kernel value is computed once (:meth:`gpath._engine.Engine.twin_block`)."""
        return self._q_rows(self.X, self.y, cols)

    def _q_rows(self, X, y, cols: np.ndarray):
        """:meth:`q_rows_block` for the rows X with labels y (the state's, or with rows appended)."""
        if self.twins:
            return self.engine.twin_block(self.kernel, X, cols, y, self.ridge)
        return self.engine.q_block(self.kernel, X, cols, y, self.ridge)

    def q_training_block(self, cols: np.ndarray, rows=None):
        """Columns ``Q[:, cols]`` of training points ``cols`` (host ints; device, shape
        (n, len(cols))), computed as one block and counted;
        ``rows``: X centred once (:class:`gpath.kernels.CenteredRows`), or None."""
        self.cache.n_columns_computed += len(cols)
        return self.engine.q_block(self.kernel, self.X, cols, self.y, self.ridge, rows)

    def q_matvec(self, cols: np.ndarray, coef: np.ndarray, absolute: bool = False):
        """``Σ_j Q[:, j] coef_j`` over the training points ``cols`` (host ints, host ``coef``),
        or with ``absolute`` ``Σ_j |Q[:, j]| coef_j``: device, shape (n,), from fresh kernel
        blocks (:meth:`gpath._engine.Engine.q_matvecs`), not counted among the cache's columns."""
        return self.engine.q_matvecs(self.kernel, self.X, cols, [coef], self.y, self.ridge, absolute)[0]

    # ------------------------------------------------------------------ copies
    def _appended(self, X_add, y_add, shift_add=None) -> _Appended:
        """The rows ``X_add`` (labels ``y_add``) appended with α = 0: X (a view of the row
        buffer), y, the device block ``Q[:, A]`` of the new points (n_new × m) and their
        margins ``y_A f(x_A) = Q[:, A]ᵀ α + y_A b`` (plus their shift)."""
        xp, m = self.xp, X_add.shape[0]
        X, x_rows = self._rows_appended(X_add) if m else (self.X, self.__dict__.get("_x_rows"))
        shift_add = None if self.shift is None else shift_add
        done = None if self.twins else self.engine.appended_columns(self.kernel, X, self.y, y_add, self.alpha,
                                                                     self.b, self.ridge, shift_add)
        if done is not None:
            return _Appended(X, x_rows, *done)
        y = xp.concat([self.y, y_add], axis=0)
        QA = self._q_rows(X, y, np.arange(self.n, self.n + m))
        yf_add = self.engine.added_margins(self.alpha, QA, self.b, y_add, shift_add) if m else None
        return _Appended(X, x_rows, y, QA, yf_add)

    def _extended(self, X_add, y_add, upper_add, shift_add=None, appended=None) -> tuple[SVCState, object]:
        """A copy of the state with the rows ``X_add`` appended (α = 0, set A), and the device
        block ``Q[:, A]`` of the new points (n_new × m); ``appended``: :meth:`_appended`'s,
        where the caller has it."""
        xp = self.xp
        new = object.__new__(SVCState)
        new.__dict__.update(self.__dict__)
        m = X_add.shape[0]
        n_old = self.n
        host = self.engine.name == "numba"  # NumPy: the device arrays are host arrays too
        appended = self._appended(X_add, y_add, shift_add) if appended is None else appended
        if m:
            new.X, new._x_rows = appended.X, appended.x_rows
        new.y, QA, yf_add = appended.y, appended.QA, appended.yf_add
        new.alpha = np.concatenate([self.alpha, np.zeros(m)])
        new.y_host = new.y if host else np.concatenate([self.y_host, to_host(y_add)])
        if m:
            if host:  # the rows appended in one compiled pass
                new.upper, new.where, new.yf, new.lo, new.hi, shift = _appended_rows(
                    self.upper, self.where, self.yf, self.lo, self.hi, upper_add, yf_add,
                    _NO_SHIFT if self.shift is None else self.shift, _NO_SHIFT if self.shift is None else shift_add)
                new.shift = None if self.shift is None else shift
            else:
                new.upper = np.concatenate([self.upper, upper_add])
                if self.shift is not None:
                    new.shift = xp.concat([self.shift, shift_add])
                new.yf = xp.concat([self.yf, yf_add])
                codes = np.full(m, A, dtype=np.int8)
                lo_add, hi_add = _levels(codes, upper_add)
                new.lo = xp.concat([self.lo, to_device(lo_add, xp, self.device)])
                new.hi = xp.concat([self.hi, to_device(hi_add, xp, self.device)])
                new.where = np.concatenate([new.where, codes])
            if "_diag_max" in self.__dict__:
                new._diag_max = max(self._diag_max, self._max_diagonal(X_add))
            # Rows of the new points in the cached columns: Q[A, p] = Q[p, A] (0 in free slots).
            owner = self.cache.owner
            if host:
                extra = _held_rows(QA, owner)
            else:
                held = to_device(np.where(owner >= 0, 1.0, 0.0), xp, self.device)
                extra = new.engine.rows(QA, np.maximum(owner, 0)) * held[:, None]
            cache = self.cache.with_rows_appended(extra)
            self._carry_share(new, QA)
        else:
            new.upper = self.upper.copy()
            new.where = self.where.copy()
            new.yf, new.lo, new.hi = (xp.asarray(a, copy=True) for a in (self.yf, self.lo, self.hi))
            cache = self.cache.with_rows_kept(np.arange(n_old))
            share, share_coef = self._held_share()
            if share is not None:
                new._carries_share(int(np.count_nonzero(share_coef)), 0)
        new.active = self.active.copy(cache, new.q_column)
        return new, QA

    def _carry_share(self, new: SVCState, QA, kept=None) -> None:
        """Carry the kept share of the KKT scale (:meth:`_bound_share`) to ``new``, this state
        with the rows of ``QA``'s points appended (after the rows ``kept`` of this state, host
        ints, if given: the dropped rows' coefficients in the share must be 0), or drop it
        there (:meth:`_carries_share`)."""
        xp, m = self.xp, QA.shape[1]
        share, share_coef = self._held_share()
        if share is None:
            return
        held_j = np.flatnonzero(share_coef)  # (none of them among the rows not ``kept``: _removable)
        if not new._carries_share(held_j.size, m):
            return
        # The new rows' share of the scale: Σ_j coef_j |Q[a, j]| over the few j with coef_j ≠ 0
        # (the points at a bound), rows of Q[:n_old, A].
        added = self.engine.absolute_rows_dot(QA, held_j, share_coef[held_j])
        if kept is not None:
            share, share_coef = xp.take(share, to_device(kept, xp, self.device)), share_coef[kept]
        new._share = xp.concat([share, added])
        new._share_coef = np.concatenate([share_coef, np.zeros(m)])

    def _shifted(self, X_add, y_add, upper_add, shift_add,
                 remove: np.ndarray) -> tuple[SVCState | None, _Appended | None]:
        """The state after an update that moves no coefficient, built directly: the rows
        ``remove`` (host ints) dropped and the rows ``X_add`` appended in O. α, b and M are
        this state's, bit for bit: the state :meth:`follow`'s path ends at in that case
        (``unmoved``), without the path's copies of every row, appended and then dropped.

        Returns ``(state, appended)``: the new state (``unmoved`` set), or None where the
        update moves a coefficient (an added point below its level with a box: section 3.2's
        first test) or where this does not apply (an empty margin set, whose b is only
        bounded, by an interval the rows change; a removed point with α > 0 or in M; arrays
        off the host); and :meth:`_appended`'s rows where it computed them (the path reuses
        their block), else None. Nothing this state reads is changed."""
        held = self._held_share()[1]
        if (self.engine.name != "numba" or self.active.size == 0
                or not _removable(remove, self.alpha, self.where, _NO_SHIFT if held is None else held)):
            return None, None
        appended = self._appended(X_add, y_add, shift_add)
        m = X_add.shape[0]
        if m and not _beyond_levels(appended.yf_add, upper_add):
            return None, appended
        new = object.__new__(SVCState)
        new.__dict__.update(self.__dict__)
        n_old = self.n
        (keep, new_index, new.y, new.alpha, new.upper, new.where, consecutive, new.yf, new.lo, new.hi,
         shift) = _shifted_rows(remove, self.y_host, self.alpha, self.upper, self.where, self.yf, self.lo, self.hi,
                                _NO_SHIFT if self.shift is None else self.shift, appended.y[n_old:], upper_add,
                                _NO_SHIFT if appended.yf_add is None else appended.yf_add,
                                _NO_SHIFT if self.shift is None or shift_add is None else shift_add)
        new.y_host, new.shift = new.y, None if self.shift is None else shift
        rows = np.flatnonzero(new_index >= 0)  # of the rows with the added ones
        x_rows = appended.x_rows
        if consecutive and rows.size and x_rows is not None and x_rows[2] is appended.X:
            # A window: a view of the same row buffer (as take_rows).
            buffer, first, _ = x_rows
            new.X = buffer[first + int(rows[0]) : first + int(rows[-1]) + 1, :]
            new._x_rows = (buffer, first + int(rows[0]), new.X)
        else:
            new.X = self.xp.take(appended.X, to_device(rows, self.xp, self.device), axis=0)
            new.__dict__.pop("_x_rows", None)
        if m and "_diag_max" in self.__dict__:
            new._diag_max = max(self._diag_max, self._max_diagonal(X_add))
        cache = self.cache.appended_kept(_held_rows(appended.QA, self.cache.owner), rows, new_index)
        self._carry_share(new, appended.QA, keep)
        factor = self.factor.share()  # (M and its factor unmoved)
        factor.renumber(new_index)
        slots = np.zeros(max(16, 2 * factor.size, factor.capacity), dtype=np.int64)
        slots[: factor.size] = self.active.slots
        new.active = ActiveSet.of(factor, cache, new.q_column, slots)
        new.unmoved = True
        return new, appended

    def prepare_updates(self) -> None:
        """Make, for a state that updates will move (a fit's or a load's), what its first
        update would otherwise make in fresh memory: X in a row buffer with room for the rows
        updates append (:meth:`_rows_appended`), the first of the cache's spare rows written
        once (the rows the next updates write: a page of each slot's column), and the factor
        arrays its first update copies into (``spare``). The first update then costs what
        later ones do (issue 18: fresh pages took half of a first ε-SVR update's 0.6 ms).
        The kept share of the KKT scale (:meth:`_bound_share`) is dropped: the fit's own check
        read it, and the updates after it would carry it (20–50 µs each) until they had spent
        what computing it anew costs. Nothing is computed: the state's solution is unchanged.
        Host (NumPy) arrays only."""
        if self.engine.name != "numba" or self.n == 0:
            return
        n = self.n
        in_buffer = self.__dict__.get("_x_rows", (None, 0, None))[2] is self.X
        if not in_buffer and n * self.X.shape[1] <= _PREPARED_ENTRIES:
            buffer = np.empty((n + n // 4 + 64, self.X.shape[1]), dtype=self.X.dtype)
            buffer[:n, :] = self.X
            buffer[n:, :] = 0.0
            self.X = buffer[:n, :]
            self._x_rows = (buffer, 0, self.X)
        cache = self.cache
        cache.data[:, cache.top : cache.top + _TOUCHED_ROWS] = 0.0  # rows past top belong to no state
        factor = self.factor
        if getattr(factor, "spare", None) is None and factor.capacity**2 <= _PREPARED_ENTRIES:
            factor.spare = factor.copy()
        # (An update's check seldom reads the share: it passes against the scale's lower bound 1.)
        for name in ("_share", "_share_coef", "_share_idle"):
            self.__dict__.pop(name, None)

    def _rows_appended(self, X_add):
        """``X`` with the rows ``X_add`` appended, as a view of a row buffer, and that buffer
        with the view's first row. The rows are written past the end of X's own view of the
        buffer, which belong to no live state (as the cache's rows past its top): a spent state
        may have held them, the state this is called on never does. A window's update thus copies
        the new rows only, where two copies of n × d each (append, then drop the oldest) cost
        more than the path at n = 10,000 (fresh pages: ~1 ns a byte)."""
        xp, n, m = self.xp, self.n, X_add.shape[0]
        buffer, first, view = self.__dict__.get("_x_rows", (None, 0, None))
        if view is not self.X or first + n + m > buffer.shape[0]:
            buffer = xp.empty((n + m + (n + m) // 4 + 64, self.X.shape[1]), dtype=self.X.dtype, device=self.device)
            buffer[:n, :] = self.X
            first = 0
        buffer[first + n : first + n + m, :] = X_add
        X = buffer[first : first + n + m, :]
        return X, (buffer, first, X)

    def take_rows(self, keep: np.ndarray, gone_columns=None) -> None:
        """Keep the points ``keep`` (host int array of row indices), in that order;
        ``gone_columns``: ``(rows, Q[:, rows])`` of dropped points where the caller has them
        (their kernel values then serve the kept scale's update)."""
        xp = self.xp
        keep_dev = to_device(keep, xp, self.device)
        share, coef = self._held_share()
        if share is not None:
            self._share, self._share_coef = self._kept_share(share, coef, keep, gone_columns, keep_dev)
        keep_host = np.ascontiguousarray(keep, dtype=np.int64)
        if self.engine.name == "numba":  # NumPy: one compiled pass for the host and device rows
            (new_index, self.y_host, self.alpha, self.upper, self.where, consecutive, self.yf, self.lo, self.hi,
             shift) = _kept_rows(keep_host, self.y_host, self.alpha, self.upper, self.where, self.yf, self.lo,
                                 self.hi, _NO_SHIFT if self.shift is None else self.shift)
            self.y, self.shift = self.y_host, None if self.shift is None else shift
            taken = ()
        else:
            new_index, self.y_host, self.alpha, self.upper, self.where, consecutive = _kept_host(
                keep_host, self.y_host, self.alpha, self.upper, self.where)
            taken = ("y", "yf", "lo", "hi") + (() if self.shift is None else ("shift",))
        buffer, first, view = self.__dict__.pop("_x_rows", (None, 0, None))
        if view is self.X and keep.size and consecutive:
            # Consecutive rows (a window drops its oldest): a view of the same row buffer.
            self.X = buffer[first + int(keep[0]) : first + int(keep[-1]) + 1, :]
            self._x_rows = (buffer, first + int(keep[0]), self.X)
        else:
            self.X = xp.take(self.X, keep_dev, axis=0)
        for name in taken:
            setattr(self, name, xp.take(getattr(self, name), keep_dev, axis=0))
        self.cache.keep_rows(keep)  # this state's own cache (derived for it by _extended or a fit)
        self.active.renumber(new_index)

    def _kept_share(self, share, coef: np.ndarray, keep: np.ndarray, gone_columns, keep_dev=None):
        """The kept share of the KKT scale (:meth:`_bound_share`) and its coefficients, of this
        state's rows, on the rows ``keep``: the dropped points' part taken out (by their
        columns, ``gone_columns`` where the caller has them, or this state's kernel values)."""
        xp = self.xp
        delta = -coef  # the dropped points' share
        delta[keep] = 0.0
        rows, columns = gone_columns if gone_columns is not None else (None, None)
        if columns is not None and rows.size:  # their columns at hand; the others' computed
            share = share + xp.abs(columns) @ to_device(delta[rows], xp, self.device)
            delta[rows] = 0.0
        share = self._add_columns(share, delta)
        keep_dev = to_device(keep, xp, self.device) if keep_dev is None else keep_dev
        return xp.take(share, keep_dev), coef[keep]

    # ------------------------------------------------------------------ the path
    def follow(self, X_add, y_add, remove: np.ndarray, max_columns=None, upper_add=None,
               shift_add=None, end: PathEnd | None = None) -> tuple[SVCState, PathStats]:
        """Add the rows ``X_add`` and remove the rows ``remove`` along one path.

        Parameters
        ----------
        X_add : device array of shape (m, n_features), float64
        y_add : device array of shape (m,), float64, entries ±1
        remove : host int array of shape (ℓ,)
            Row indices of the points to remove.
        max_columns : int or None
            Limit of the kernel-column cache (see :class:`QColumnCache`).
        upper_add : host array of shape (m,) or None
            Box C_i of each added point (None: C).
        shift_add : device array of shape (m,) or None
            ``p + 1`` of each added point (a state with a ``shift`` only).
        end : PathEnd or None
            The caller's end checks (:func:`gpath._simplesvm.exact_update`), which a small
            update's compiled call takes where it can.

        Returns
        -------
        state : SVCState
            The new optimal solution: the kept rows in their order, then the added rows.
        stats : PathStats

        Raises
        ------
        PathError
            On cycling or a broken invariant (``self`` is as it was, the cache columns put back
            by the transaction this runs in).
        SingularMarginError
            If 𝐌 becomes singular (duplicate margin points with ``ridge=0``).

        References
        ----------
        Karasuyama & Takeuchi (2009), section 3.2 (eqs. 3–11) and 3.3 (empty margin).
        """
        start = time.perf_counter()
        if end is not None:
            end.margins = None  # (this path's, or none)
        m = X_add.shape[0]
        if m and self.shift is not None and shift_add is None:
            raise ValueError("shift_add is needed: this state's margins have a linear term (its shift)")
        upper_add = np.full(m, self.C) if upper_add is None else np.asarray(upper_add, dtype=np.float64)
        remove = np.asarray(remove, dtype=np.int64)
        with self.cache.transaction():  # the new state writes into the shared cache buffer
            # An update that moves no coefficient (most of a stream's, in ε-SVR) is built directly,
            # with no BLAS call (and so no limit on BLAS's threads to set and restore).
            state, appended = self._shifted(X_add, y_add, upper_add, shift_add, remove)
            if state is not None:
                state.cache.max_columns = max_columns
                state.cache.check_limit()
                n_breakpoints = 0
            else:
                state, n_breakpoints = self._followed(X_add, y_add, upper_add, shift_add, remove, max_columns,
                                                      appended, end)
        stats = PathStats(
            n_breakpoints=n_breakpoints,
            n_added=int(m),
            n_removed=len(remove),
            time=time.perf_counter() - start,
            margin_size=state.active.size,
        )
        return state, stats

    def _followed(self, X_add, y_add, upper_add, shift_add, remove, max_columns, appended,
                  end=None) -> tuple[SVCState, int]:
        """:meth:`follow`'s path (within its transaction): the new state and its breakpoints.
        A small update's compiled call (:meth:`_one_point`) limits BLAS's threads only where
        it calls BLAS (a start of more than one moving point): a stream's update calls none,
        and the limit's four threadpoolctl calls a library cost some 15 µs of its 300."""
        if (0 < X_add.shape[0] <= _FEW_POINTS and remove.size <= _FEW_POINTS and ONE_POINT
                and self._one_point_applies(max_columns)):
            appended = self._appended(X_add, y_add, shift_add) if appended is None else appended
            done = self._one_point(appended, upper_add, shift_add, remove, max_columns, end)
            if done is not None:
                return done
        return self._readable_followed(X_add, y_add, upper_add, shift_add, remove, max_columns, appended)

    @single_threaded_host_blas
    def _readable_followed(self, X_add, y_add, upper_add, shift_add, remove, max_columns,
                           appended) -> tuple[SVCState, int]:
        """:meth:`_followed` by :class:`_PathRun` (the compiled loop on NumPy)."""
        state, QA = self._extended(X_add, y_add, upper_add, shift_add, appended)
        state.cache.max_columns = max_columns
        state.cache.check_limit()
        run = _PathRun(state, QA, self.n, remove)
        # Whether any coefficient moves: if not, α, b and M are this state's (the added points
        # in O, the removed at α = 0), and so is the residual of the margin equations, which
        # refine() would recompute (O(n·|M|)) only to find it unchanged. Not with an empty
        # margin: b is then only bounded, by an interval that the new and removed rows change,
        # and its middle is taken anew below.
        state.unmoved = not (run.a_rows.size or run.r_rows.size) and state.active.size > 0
        n_breakpoints = run.run()
        keep = np.flatnonzero(state.where != R)
        state.take_rows(keep, (run.r_rows_at_start, run.QR))
        if not state.unmoved:  # (else M is as the state it started from left it: released, compacted)
            state.release_bounded_margin()
            state.active.compact()
        return state, n_breakpoints

    def _one_point_applies(self, max_columns) -> bool:
        """Whether :meth:`_one_point` takes this state's small update: host arrays, and a cache
        within ``max_columns`` (else the readable path raises). It computes every product on
        one core, however large: at Adult n = 10,000 (|M| ≈ 500) the readable path's set-up
        cost more than the cores saved over a one-point update's breakpoints (2.7–3.0 against
        2.1–2.2 ms a breakpoint)."""
        return (self.engine.name == "numba" and self.n > 0
                and (max_columns is None or int(np.count_nonzero(self.cache.used)) <= max_columns))

    def _one_point(self, appended: _Appended, upper_add, shift_add, remove, max_columns,
                   end: PathEnd | None = None) -> tuple[SVCState, int] | None:
        """:meth:`_followed` of an update adding a few rows (``appended``) and removing a few in
        one compiled call (:func:`gpath._one_point.followed`, the same arithmetic); where more
        than one of them moves, from the path's start computed here as the readable path
        computes it (:func:`_path_start`). Where the path stops at an event that Python
        applies, the path so far goes on in Python (:meth:`_one_point_resumed`); None, before
        anything moved, where the call's sets are not those of that start (the readable path
        then takes the update). Where the update ends in the call, so do
        :meth:`release_bounded_margin`'s test and, asked by ``end``, the caller's end checks
        (:class:`PathEnd`)."""
        m, n_old = appended.QA.shape[1], self.n
        # Without m spare rows in its buffer, the cache's live rows go to a new one first (as
        # QColumnCache.with_rows_appended), which this state does not hold.
        cache = self.cache if self.cache.top + m <= self.cache.data.shape[1] else self.cache.with_spare_rows(m)
        factor = self.factor.copy(into=getattr(self.factor, "spare", None))
        slots = np.zeros(max(16, 2 * factor.size, factor.capacity), dtype=np.int64)
        slots[: factor.size] = self.active.slots
        # The loop marks the slots it writes in its own array, and the call adds them to the
        # open transaction's record before it returns (an interrupt then still finds them).
        txn = cache._txn
        record = txn.written if txn is not None and txn.open and cache.data is txn.buffer else _NO_RECORD
        written = np.zeros(cache.capacity, dtype=bool)
        kernel = _mid_numba.loop_kernel(self, appended.X)
        # The added points' columns as the kernel blocks make them, Fortran-ordered: the loop
        # reads them by column (u, a point entering M), and a C-ordered copy cost 30–80 µs of
        # an ε-SVR window's 30-point update (1,260 × 60).
        QA = np.asfortranarray(appended.QA)
        # More than one added or removed point moving: the path's start as the readable path
        # computes it (BLAS's products of their columns), for the compiled call to go on from.
        u_start, d_start, start, QR = _NO_SHIFT, _NO_SHIFT, _NO_SHIFT, None
        if m > 1 or remove.size > 1:
            a_rows, r_rows = _moving_rows(n_old, remove, appended.yf_add, upper_add, self.alpha)
            if a_rows.size > 1 or r_rows.size > 1:
                q_rows = functools.partial(self._q_rows, appended.X, appended.y)
                d_start, _, rate_scale, delta0, u_start, QR = _path_start(
                    np, self.device, np.concatenate([self.upper, upper_add]), np.concatenate([self.alpha, np.zeros(m)]),
                    appended.y, QA, a_rows, a_rows - n_old, r_rows, q_rows)
                start = np.array([delta0, rate_scale])
        # (max Q_kk and the rates of gpath._simplesvm._path_unresolved, as it reads them; a state
        # without a kept max Q_kk takes it over all its rows when first asked: no check asked)
        diag = max(self._diag_max, self._max_diagonal(appended.X[n_old:])) if "_diag_max" in self.__dict__ else -1.0
        asked = _NOT_ASKED
        if end is not None and diag >= 0.0:
            asked = np.array([end.tol, diag, float(upper_add.sum()) + float(self.alpha[remove].sum()),
                              threaded_product_size() or -1.0])
        (status, unmoved, n_breakpoints, computed, b, keep, kept, books, top, kept_rows, r_rows, column,
         path, ended) = _one_point.followed(
            n_old, remove, appended.y, self.alpha, self.upper, self.where, self.yf, self.lo, self.hi,
            _NO_SHIFT if self.shift is None else self.shift, upper_add, appended.yf_add,
            _NO_SHIFT if self.shift is None else shift_add, QA,
            factor.arrays, slots, (cache.owner, cache.used, cache.slot_of, cache.free, cache.counts), cache.data,
            cache.top, _mid_numba._EMPTY_ROWS if cache.rows_host is None else cache.rows_host, cache._protected(),
            written, record, np.array([-1 if max_columns is None else max_columns], dtype=np.int64), kernel,
            self.b, self.C, u_start, d_start, start, asked)
        if status == _one_point.MOVES_MORE:
            return None
        if QR is None and r_rows.size:
            QR = column[:, None]  # (the one removed point that moves: its column, computed there)
        if status != _mid_numba.DONE:  # an event for Python: the path so far goes on from there
            return self._one_point_resumed(appended, QA, cache, factor, slots, status, b, books, top, kept_rows,
                                           r_rows, QR, _one_point.unpacked(path), max_columns, computed)
        new = object.__new__(SVCState)
        new.__dict__.update(self.__dict__)
        if self._held_share()[0] is not None:  # (as _extended, then take_rows, on the rows before the drop)
            new.X, new.y = appended.X, appended.y
            self._carry_share(new, QA)
            share, coef = new.__dict__.get("_share"), new.__dict__.get("_share_coef")
            if share is not None:
                gone = (r_rows, QR)
                new._share, new._share_coef = new._kept_share(share, coef, keep, gone)
        (_, new.y, new.alpha, new.upper, new.where, consecutive, new.yf, new.lo, new.hi, shift) = kept
        new.shift = None if self.shift is None else shift
        new.y_host, new.b = new.y, float(b)
        buffer, first, view = appended.x_rows if appended.x_rows is not None else (None, 0, None)
        if view is appended.X and consecutive:  # a window: a view of the same row buffer (take_rows)
            new.X = buffer[first + int(keep[0]) : first + int(keep[-1]) + 1, :]
            new._x_rows = (buffer, first + int(keep[0]), new.X)
        else:
            new.X = np.take(appended.X, keep, axis=0)
            new.__dict__.pop("_x_rows", None)
        if diag >= 0.0:
            new._diag_max = diag
        new_cache = cache.with_books(books, top, kept_rows, max_columns, computed)
        if rows_rebuilt(new_cache.top, keep.size):  # (as QColumnCache.keep_rows)
            new_cache.__dict__.update(new_cache.with_spare_rows().__dict__)
        new.active = ActiveSet.of(factor, new_cache, new.q_column, slots)
        new.unmoved = bool(unmoved) and factor.size > 0
        if not new.unmoved:
            release, a_max, c_max, at_bounds, checked, violation, taken = ended
            if release:  # (release_bounded_margin's test, taken in the call)
                new._release(a_max, c_max, at_bounds)
            new.active.compact()
            if checked:
                end.margins = (violation, bool(taken))
        return new, int(n_breakpoints)

    @single_threaded_host_blas
    def _one_point_resumed(self, appended: _Appended, QA, cache, factor, slots, status, b, books, top, rows,
                           r_rows, QR, path, max_columns, computed) -> tuple[SVCState, int]:
        """:meth:`_one_point` where the compiled loop stopped at an event for Python: the state
        and the :class:`_PathRun` of the path so far (as :meth:`_extended` and the run's start
        make them, the loop's arrays as it left them), the event applied and the path followed
        on (:func:`gpath._mid_numba.handled`, :func:`gpath._mid_numba.follow`) and finished,
        as :meth:`_followed` does."""
        alpha, upper, where, yf, lo, hi, shift, a_col, a_left, d_left, u, pints, pfloats = path
        state = object.__new__(SVCState)
        state.__dict__.update(self.__dict__)
        state.X, state.y = appended.X, appended.y
        if appended.x_rows is not None:
            state._x_rows = appended.x_rows
        state.y_host, state.alpha, state.upper, state.where, state.yf, state.lo, state.hi = (
            appended.y, alpha, upper, where, yf, lo, hi)
        state.shift, state.b, state.unmoved = None if self.shift is None else shift, float(b), False
        if "_diag_max" in self.__dict__:
            state._diag_max = max(self._diag_max, self._max_diagonal(appended.X[self.n :]))
        self._carry_share(state, QA)
        state.active = ActiveSet.of(factor, cache.with_books(books, top, rows, max_columns, computed), state.q_column,
                                    slots)
        run = object.__new__(_PathRun)
        run.s, run.QA, run.events = state, QA, None
        run.n_breakpoints, run.zero_steps, run.n_screened = int(pints[1]), int(pints[2]), int(pints[15])
        run.a_rows, run.dA, run.a_col = a_left[: pints[0]].copy(), d_left[: pints[0]].copy(), a_col
        run.r_rows = run.r_rows_at_start = r_rows
        run.dR = self.alpha[r_rows] if r_rows.size else np.zeros(0)
        run.QR = QR
        run.r, run.delta0, run.rate_scale, run.u = float(pfloats[0]), float(pfloats[1]), float(pfloats[4]), u
        n_breakpoints = _mid_numba.follow(run, _mid_numba.handled(run, status, pints))
        keep = np.flatnonzero(state.where != R)
        state.take_rows(keep, (run.r_rows_at_start, run.QR))
        state.release_bounded_margin()
        state.active.compact()
        return state, n_breakpoints

    def bias_interval(self):
        """Bounds ``(lo, hi)`` on the bias that keep every point of O, I and A in its set
        (section 3.3, eq. 12), with the index attaining each (-1 where no point bounds)."""
        return self.engine.bias_interval(self.b, self.y, self.yf, self.lo, self.hi)

    def release_bounded_margin(self) -> None:
        """If no margin coefficient is strictly inside (0, C_i), the bias is not unique: move
        those points to O or I and take the middle of the bias interval, as LIBSVM does."""
        members = self.active.members
        # _balance, then the largest α and box, and whether every member is at a bound (below):
        # one compiled pass, every update runs it. A lone member is pinned by yᵀα = 0: exactly
        # 0 when every other α is. Most updates end here, with no BLAS call (and no limit on
        # its threads).
        a_max, c_max, at_bounds = _balanced_at_bounds(self.alpha, self.y_host, self.upper, members, 1e-8)
        if _release_due(self.alpha, self.upper, members, a_max, c_max, at_bounds):
            self._release(a_max, c_max, at_bounds)

    @single_threaded_host_blas
    def _release(self, a_max: float, c_max: float, at_bounds: bool) -> None:
        """:meth:`release_bounded_margin` where every member may be at a bound (``at_bounds``)
        or every coefficient is tiny (the first test below)."""
        members = self.active.members
        # At a bound to round-off of the coefficients' own size, the largest α of the model
        # (not C: features of size 1e12 give α near 1e-24; not the margin's alone, which a
        # lone member at round-off of 0 would set itself). An update's coefficients may all
        # have fallen to 0 but for round-off (1e-28 and 4e-12 seen, in ε-SVR on duplicates),
        # the largest of which would pin the bias to an end of its interval (predictions ε
        # from a fresh fit's). Where every α_k is below 1e-12 C_k and the members' whole term
        # in any margin, max_j Σ_k |Q_jk| α_k, is below 1e-10 (every margin's scale is at
        # least 1, the KKT check's tolerance 1e-9 of it), every member is at 0 too: all the
        # coefficients go together, so yᵀα stays 0 (not where bounded points of tiny boxes
        # hold up members of the other class: their α are at their boxes, not below 1e-12 of
        # them), and legitimately tiny ones (features of size 1e12: α near 1e-24) have large
        # terms. The term is of α_M corrected by one solve (as below), and the product with
        # the members' own columns, not the bound α_k max Q_jj: the kept max Q_jj is of every
        # row the state has held, and an update that removed the large rows left it 27× the
        # rows' own (α of 3e-11 on duplicates of one point kept, the bias at an end of its
        # interval: predictions ε off).
        tiny, a, round_off = 0.0, None, False
        if members.size and 0.0 < a_max <= 1e-12 * c_max and np.all(self.alpha <= 1e-12 * self.upper):
            a = self._corrected_margin_alpha()
            term = scalars(self.xp, self.xp.max(self._members_share(a)))[0]
            if term <= 1e-10:
                tiny, at_bounds, round_off = float(a.max()), True, True
        if not at_bounds:
            return
        members = members.copy()
        c = self.upper[members]
        if a is None:
            # Every member is near a bound: judge them on α_M corrected by one solve of the
            # margin equations, since a path's steps or the working-set solves leave α_M off
            # its bound by their round-off (1e-11 seen with tiny kernel values), which would
            # otherwise pin the bias to an end of its interval.
            a = self._corrected_margin_alpha() if members.size and a_max > 0.0 else self.alpha[members]
        at_0, at_c = a <= np.maximum(1e-12 * a_max, np.minimum(tiny, 1e-12 * c)), a >= c * (1.0 - 1e-12)
        if not np.all(at_0 | at_c):
            return
        if round_off and np.all(at_0):
            # Every α is now 0: the margins are y b exactly, without the drift the path's
            # steps left in them (2.5e-8 seen: the middle of the bias interval that far off).
            self.alpha[members] = 0.0
            self.yf = self.margins_from_alpha()
        for k, zero in zip(members.tolist(), at_0):
            self.active.leave(k)
            self.alpha[k] = 0.0 if zero else self.upper[k]
            self.place(k, O if zero else I)
        self._center_bias()

    def margin_residual(self) -> np.ndarray:
        """Residual ``[−yᵀα; 1 − y_M f(x_M)]`` of the margin equations with y f recomputed
        from α (the cached margin columns against α, :meth:`QColumnCache.column_dots`): the
        drift of the incremental state."""
        r_eq = -_signed_sum(self.y_host, self.alpha)  # (compiled: no BLAS, see _repair)
        members = self.active.members
        if not members.size:
            return np.array([r_eq])
        yf_m = self.cache.column_dots(self.active.slots, self.alpha) + self.y_host[members] * self.b
        if self.shift is not None:
            yf_m = yf_m + self.engine.gather(self.shift, members)
        return np.concatenate([[r_eq], 1.0 - yf_m])

    @single_threaded_host_blas
    def kkt_scale(self, with_shift: bool = True) -> float:
        """``1 + max_i Σ_j |Q_ij| α_j`` (``+ max_i |shift_i|`` with a linear term, unless
        ``with_shift`` is False): the size of the terms that make up a margin y_i f(x_i), and
        so the scale of its round-off; the scale of ``check_kkt`` (which takes each row's own
        shift, :meth:`kkt_violation`).

        The margin set's share is one product with the absolute cached columns (O(n·|M|));
        the share of the points at a bound is kept between calls (:meth:`_bound_share`).
        (The bound ``max_k Q_kk · Σ_j α_j`` needs no product but can exceed the scale by many
        orders of magnitude, 1e14 with a degree-20 polynomial kernel: a check relative to it
        passes models that are not optimal.)"""
        if self.n == 0:
            return 1.0
        sizes = self._bound_share()
        if self.active.members.size:
            sizes = sizes + self._members_share()
        if self.shift is not None and with_shift:
            return 1.0 + sum(scalars(self.xp, self.xp.max(sizes), self.xp.max(self.xp.abs(self.shift))))
        return 1.0 + scalars(self.xp, self.xp.max(sizes))[0]

    def _bound_share(self):
        """``Σ_{j ∉ M} α_j |Q[:, j]|`` (device, shape (n,)): the share of the points outside
        the margin set (at a bound, or moving along a path) in :meth:`kkt_scale`.

        Kept between calls with the coefficients it was computed for; a call adds the
        absolute columns of the points whose coefficient changed since (fresh kernel values,
        blocks of 256), so its cost is in proportion to what changed.

        Kept, that is, while it is read: the updates that follow a read carry it along (their
        rows' shares, :meth:`_extended`) until they have spent as many kernel columns on it as
        computing it anew would take (one per point at a bound, counting one an update for
        its fixed cost); then it is dropped, and the next read computes it from the
        coefficients. A window whose KKT checks never need the scale (its violation
        relative to the scale's lower bound 1 already passes) stops paying 20–30 µs an
        update for it; one that reads it pays at most about twice the cheaper of the two."""
        want = np.where(self.where == M, 0.0, self.alpha)
        share, coef = self._held_share(create=True)
        share = self._add_columns(share, want - coef)
        if coef.any() and scalars(self.xp, self.xp.max(share))[0] > self._share_bound(want):
            # The kept share had columns taken out, whose float64 sums cancel: a zero-tube ε-SVR
            # fit's twins at C, both taken to 0, left 8.6e9 of round-off where the share is 0,
            # a scale against which a model off by 5.3 in f passed its check. Above the bound
            # no exact sum can reach, it is computed afresh.
            share = self._add_columns(self.xp.zeros_like(share), want)
        self._share, self._share_coef, self._share_idle = share, want, 0
        return share

    def _share_bound(self, coef: np.ndarray) -> float:
        """An upper bound of ``max_i Σ_j |Q_ij| coef_j`` (host ``coef`` ≥ 0, (n,)) from the
        diagonal alone, ``|Q_ij| ≤ √(Q_ii Q_jj)`` for a positive semi-definite Q (the sigmoid
        kernel's ``1 + |offset| + ridge`` bounds every entry, as :meth:`_max_diagonal`), with
        a margin of float64's round-off of the sum."""
        held = np.flatnonzero(coef)
        if not held.size:
            return 0.0
        if self.kernel.kind in ("rbf", "sigmoid") and self.kernel.function is None:
            root = np.full(held.size, math.sqrt(self._max_diagonal(self.X)))
        else:
            rows = _sparse.take_rows(self.X, held, self.xp, self.device)
            root = np.sqrt(np.abs(to_host(self.kernel.diagonal(rows))) + self.ridge)
        return math.sqrt(self._held_max_diagonal()) * float(root @ coef[held]) * (1.0 + 1e-10)

    def _carries_share(self, n_bound: int, m: int) -> bool:
        """Whether this new state (of an update adding ``m`` points) carries the kept share of
        the scale on (see :meth:`_bound_share`), given the ``n_bound`` points it sums over;
        if not, the share is dropped here."""
        idle = self.__dict__.get("_share_idle", 0) + m + 1
        if idle > n_bound:
            for name in ("_share", "_share_coef", "_share_idle"):
                self.__dict__.pop(name, None)
            return False
        self._share_idle = idle
        return True

    def _held_share(self, create: bool = False):
        """The kept ``(share, coefficients)`` of :meth:`_bound_share` if they are of the
        current rows; else ``(None, None)``, or zeros with ``create``."""
        share, coef = self.__dict__.get("_share"), self.__dict__.get("_share_coef")
        if share is not None and coef.shape[0] == self.n:
            return share, coef
        if not create:
            return None, None
        return self.xp.zeros(self.n, dtype=self.xp.float64, device=self.device), np.zeros(self.n)

    def _add_columns(self, share, delta: np.ndarray):
        """``share + |Q[:, j]| · delta_j`` summed over the j with ``delta_j ≠ 0`` (host delta)."""
        changed = np.flatnonzero(delta)
        return share + self.q_matvec(changed, delta[changed], absolute=True) if changed.size else share

    def set_bound_column(self, k: int, column, coef: float) -> None:
        """Point k's coefficient in :meth:`_bound_share` becomes ``coef``, with its column
        ``Q[:, k]`` at hand (SimpleSVM moves points to and from SC with their cached columns;
        no kernel evaluation)."""
        share, held = self._held_share(create=True)
        self._share, self._share_coef = share, held
        delta = float(coef - held[k])
        if delta:
            self._share = share + delta * self.xp.abs(column)
            held[k] = coef

    def add_bound_share(self, cols: np.ndarray, share, coefs: np.ndarray) -> None:
        """:meth:`set_bound_column` for the points ``cols`` (host ints, held at 0 so far) at
        once, given their whole share ``Σ_j |Q[:, j]| coef_j`` (device, (n,)) instead of their
        columns."""
        current, held = self._held_share(create=True)
        self._share = current + share
        held[cols] = coefs
        self._share_coef = held

    def refined_check(self, tol: float, refine: bool = True, margins=None) -> tuple[float, float | None]:
        """:meth:`refine` (unless ``refine`` is False), then :meth:`kkt_check` with ``tol``: what
        the end of an update takes. On NumPy their first steps in one compiled call
        (:func:`_refined_margins`: a window's update paid some 50 µs of NumPy steps for them),
        the same arithmetic; ``margins``: its result where a small update's compiled call took
        it on this state's arrays as they are (:class:`PathEnd`: only where a coefficient
        moved, so with ``refine``)."""
        if margins is None and (self.engine.name != "numba" or not refine):
            if refine:
                self.refine()
            return self.kkt_check(tol)
        violation, taken = self._refined_margin_rows() if margins is None else margins
        if not taken:  # the residual needs the scale, or a repair
            self._refined(_REFINE_TOL)
            return self.kkt_check(tol)
        if violation <= tol:
            return violation, None
        return self.kkt_check(tol)

    def _refined_margin_rows(self) -> tuple[float, bool]:
        """:func:`_refined_margins` on this state (its dots split between the cores where they
        are many): (violation, taken)."""
        cache = self.cache
        members, slots = self.active.members, self.active.slots
        rows = _mid_numba._EMPTY_ROWS if cache.rows_host is None else cache.rows_host
        shift = _NO_SHIFT if self.shift is None else self.shift
        if products_in_threads(cache.top * members.size):  # the dots split between the cores
            _balanced(self.alpha, self.y_host, self.upper, members)
            dots, sizes = np.empty(members.size), np.empty(members.size)
            in_row_blocks(_slot_dots, members.size, cache.data, slots, _buffered(self.alpha, rows, cache.top),
                          cache.top, dots, sizes, min_rows=1)
            violation, taken = _checked_margins(self.alpha, self.y_host, self.upper, members, dots, sizes, self.b,
                                                shift, self.yf, self.lo, self.hi, self.C, _REFINE_TOL)
        else:
            violation, taken = _refined_margins(self.alpha, self.y_host, self.upper, members, cache.data, slots,
                                                rows, cache.top, self.b, shift, self.yf, self.lo, self.hi, self.C,
                                                _REFINE_TOL)
        return violation, taken

    def kkt_violation(self) -> float:
        """The largest KKT violation of the maintained margins, relative to :meth:`kkt_scale`
        (a margin point off y f = 1, a point of O below it, of I above it), or of the
        constraints yᵀα = 0 and 0 ≤ α ≤ C_i relative to C."""
        return self.kkt_check()[0]

    def kkt_check(self, tol: float | None = None) -> tuple[float, float | None]:
        """:meth:`kkt_violation` and the scale it was taken against,
        ``kkt_scale(with_shift=False)`` (each row adds its own |shift|).

        With ``tol``: where the violation relative to the scale's lower bound 1 is already
        at most ``tol``, that (larger) value and None, without the product the scale costs."""
        feasibility = _feasibility(self.alpha, self.y_host, self.upper) / self.C
        if tol is not None:
            at_least_1 = self._stationarity(1.0)
            if max(at_least_1, feasibility) <= tol:
                return max(at_least_1, feasibility), None
        scale = self.kkt_scale(with_shift=False)
        return max(self._stationarity(scale), feasibility), scale

    def _stationarity(self, scale: float) -> float:
        """The largest stationarity violation (a margin point off y f = 1, a point of O below
        it, of I above it) relative to ``scale``, plus each row's own |shift|: one target of
        1e300 must not make the check of every other row relative to 1e300."""
        return self.engine.stationarity(self.yf, self.lo, self.hi, self.active.members, self.shift, scale)

    def _members_share(self, alpha_m=None):
        """``|Q[:, M]| α_M`` on the device (n,) (``alpha_m``: host (|M|,) in the members'
        order; None: the state's): the size of the margin set's terms in each margin (one
        product with the absolute cached columns, O(n·|M|))."""
        coef = np.zeros(self.cache.capacity)
        coef[self.active.slots] = self.alpha[self.active.members] if alpha_m is None else alpha_m
        return self.cache.matvec(coef, absolute=True)

    def _corrected_margin_alpha(self) -> np.ndarray:
        """α_M (host (|M|,)) corrected by one solve of the margin equations (the residual of
        :meth:`margin_residual`), clipped to the boxes."""
        members = self.active.members
        return np.clip(self.alpha[members] + self.factor.solve(self.margin_residual())[1:], 0.0,
                       self.upper[members])

    def scale_bound(self) -> float:
        """An upper bound of ``kkt_scale(with_shift=False)`` without a product:
        ``1 + max_k Q_kk · Σ_j α_j``, since |Q_ij| ≤ max_k Q_kk for a positive semi-definite
        Q (the sigmoid kernel's 1 + ridge: |tanh| ≤ 1). ``max_k Q_kk`` is kept from the rows
        the state has held (a bound still)."""
        return 1.0 + self._held_max_diagonal() * float(self.alpha.sum())

    def _held_max_diagonal(self) -> float:
        """``max_k Q_kk`` over the rows the state has held (computed once, then kept)."""
        if "_diag_max" not in self.__dict__:
            self._diag_max = self._max_diagonal(self.X)
        return self._diag_max

    def _max_diagonal(self, X) -> float:
        """``max_k Q_kk`` over the rows X (0 for none)."""
        if X.shape[0] == 0:
            return 0.0
        if self.kernel.kind in ("rbf", "sigmoid") and self.kernel.function is None:
            return 1.0 + abs(self.kernel.offset) + self.ridge
        return scalars(self.xp, self.xp.max(self.xp.abs(self.kernel.diagonal(X))))[0] + self.ridge

    def refine(self, tol: float = _REFINE_TOL) -> float:
        """Repair accumulated round-off (iterative refinement).

        When the margin equations' residual (:meth:`margin_residual`), relative to
        :meth:`kkt_scale`, exceeds ``tol``: refactor 𝐌, correct (b, α_M) by one solve with it,
        and recompute every y f from α with fresh kernel values. Large C makes this necessary:
        the MID direction C − α_A is then huge and each breakpoint's η ψ carries an error of
        order ε·C.

        Returns
        -------
        residual : float
            The largest residual before the repair, relative to :meth:`kkt_scale` (or absolute,
            an upper bound of it, where that is already at most ``tol``).
        """
        self._balance()
        return self._refined(tol)

    def _refined(self, tol: float) -> float:
        """:meth:`refine` after its balance."""
        r = self.margin_residual()
        worst = float(np.abs(r).max())
        if worst <= tol:  # the scale is at least 1: no need to compute it
            return worst
        worst /= self.kkt_scale()
        if worst <= tol:
            return worst
        self._repair(r)
        return worst

    @single_threaded_host_blas
    def _repair(self, r: np.ndarray) -> None:
        """:meth:`refine`'s repair for the residual ``r`` of the margin equations, with BLAS
        on one thread. (The check before it calls BLAS only for a large margin set, limited
        there: a window's update whose margins hold sets no limit.)

        A correction that takes a margin coefficient out of its box is clipped there, which
        leaves the equations unsolved by the excess times that point's column. On an
        ill-conditioned 𝐌 (a linear kernel in two features with 582 points in M, regular only
        through the ridge 1e-6) a round-off residual of 9e-11 asked α_M to move by up to
        6.5e-5, 0.6 % of C = 0.01, one coefficient 2.5e-6 past C, and the clipped result had a
        residual of 9e-6 and yᵀα = 2.4e-4 C: the repair had made a C path's end 1e5 times
        worse, and the path was refused (`fuzz_real_data.py` seed 47,696). Where the clipped
        correction leaves the equations further off than they were, the coefficients stay as
        they were (the margins are still recomputed fresh)."""
        if self.active.members.size:
            self.factor.refactor()
            self._corrected(r)
        self.yf = self.margins_from_alpha()

    def _corrected(self, r: np.ndarray) -> None:
        """(b, α_M) corrected by one solve with the factor for the residual ``r`` of the margin
        equations, clipped to the boxes, unless the clipped correction leaves the equations
        further off than they were (:meth:`_repair`). The margins are not moved."""
        members = self.active.members
        delta = self.factor.solve(r)
        alpha_m, b = self.alpha[members], self.b
        corrected = alpha_m + delta[1:]
        clipped = np.clip(corrected, 0.0, self.upper[members])
        self.b += float(delta[0])
        self.alpha[members] = clipped
        if not np.array_equal(clipped, corrected) and not (
                float(np.abs(self.margin_residual()).max()) <= float(np.abs(r).max())):
            self.alpha[members], self.b = alpha_m, b

    @single_threaded_host_blas
    def refine_step(self) -> None:
        """One step of iterative refinement of the margin equations, whatever their residual:
        balanced, (b, α_M) corrected by one solve with the factor in hand (:meth:`_corrected`),
        and the margins moved by the change, through the margin set's cached columns
        (O(n·|M|), no fresh kernel value). Every exact fit ends with it (:func:`gpath._simplesvm.exact_state`).

        :meth:`refine` repairs a residual above 1e-14 of the scale of y f, a KKT check's
        round-off. Below that, where 𝐌 is ill-conditioned, the residual can still leave the
        coefficients far from the exact solution of their index sets: two ε-SVR fits on
        WaterFlow (degree-2 polynomial kernel, C ≈ 9,000; `fuzz_real_data.py` seeds 163,627
        and 166,943) ended with residuals of 4.8e-15 and 4.0e-15 of the scale, 𝐌's condition
        3e10 and 2.5e8, and decision values 4.4e-5 and 1.1e-5 from their sets' float64 re-solve.
        Against the first one's sets solved in 40 digits, this step takes them from 4.4e-5 to
        1.6e-7 off (the float64 re-solve: 6.3e-7). It costs one solve, O(|M|²), and two passes
        over the margin columns, less than one of the fit's own iterations; a well-resolved
        solution moves by its round-off.

        References
        ----------
        Iterative refinement: N. J. Higham, "Accuracy and Stability of Numerical Algorithms",
        2nd ed., SIAM 2002, chapter 12. The margin equations y_Mᵀα = 0 and
        Q_{M,:}α + y_M b = 1 as in ../shared/DESIGN.md."""
        members = self.active.members
        if not members.size:
            return
        alpha_m, b = self.alpha[members], self.b
        self._balance()
        self._corrected(self.margin_residual())
        coef = np.zeros(self.cache.capacity)
        coef[self.active.slots] = self.alpha[members] - alpha_m
        self.yf = self.yf + self.cache.matvec(coef) + self.y * (self.b - b)

    def _balance(self) -> None:
        """Make ``yᵀα = 0`` hold to the round-off of α itself: shift the margin coefficients
        along y_M by the residual's share. Solves of 𝐌 give α_M to the round-off of the
        largest entry of their solution, the bias: at C = 1e-8 that is 4e-9 of C. The shift
        moves each y f by ``max |Q| · |residual|``, round-off of y f."""
        members = self.active.members
        if members.size:
            _balanced(self.alpha, self.y_host, self.upper, members)

    def margins_from_alpha(self):
        """``y ⊙ f`` on the training rows from α with fresh kernel values (device, (n,)), plus
        ``shift``."""
        sv = np.flatnonzero(self.alpha)
        yf = self.y * self.b + self.q_matvec(sv, self.alpha[sv])  # Q's diagonal holds the ridge
        return yf if self.shift is None else yf + self.shift

    def _center_bias(self) -> None:
        """With an empty margin the bias is only bounded; take the middle of its interval
        (as LIBSVM does), or the finite end when the interval is a half-line."""
        if self.n == 0:
            return
        (lo, _), (hi, _) = self.bias_interval()
        if np.isfinite(lo) and np.isfinite(hi):
            b = 0.5 * (lo + hi)
        elif np.isfinite(lo) or np.isfinite(hi):
            b = lo if np.isfinite(lo) else hi
        else:
            return
        self.yf = self.yf + self.y * (b - self.b)
        self.b = b

    @classmethod
    def at_zero(cls, xp, device, X, y, kernel: Kernel, C: float, ridge: float, upper=None, shift=None) -> SVCState:
        """The feasible point α = 0 on the rows (X, y): every point in O, M empty, b = 0.

        SimpleSVM (:mod:`gpath._simplesvm`) starts here and moves this state, in place, to the
        optimum: its sets S0, Swork, SC are O, M, I, its working set is ``active``, so the
        result is a state :meth:`follow` can move on.

        Parameters
        ----------
        xp, device
            Namespace and device of X and y.
        X : device array of shape (n_samples, n_features), float64
        y : device array of shape (n_samples,), float64, entries ±1
        kernel : Kernel
        C : float
            Box constraint, > 0 (inf: no upper bound).
        ridge : float
            Constant on the diagonal of Q.
        upper : host array of shape (n_samples,) or None
            Each point's box C_i (None: C for every point).
        shift : device array of shape (n_samples,) or None
            ``p + 1`` for the dual's linear term p (None: C-SVC, p = −1).
        """
        state = cls(xp, device, kernel, C, ridge, X.shape[1], shift)
        n = X.shape[0]
        state.X, state.y = X, y
        state.y_host = to_host(y).astype(np.float64)
        state.yf = xp.zeros(n, dtype=xp.float64, device=device) if shift is None else xp.asarray(shift, copy=True)
        state.alpha = np.zeros(n)
        state.upper = np.full(n, float(C)) if upper is None else np.asarray(upper, dtype=np.float64)
        state.where = np.full(n, O, dtype=np.int8)
        inf = float("inf")
        positive = to_device(state.upper > 0.0, xp, device)
        state.lo = xp.where(positive, xp.ones(n, dtype=xp.float64, device=device), -inf)
        state.hi = xp.full(n, inf, dtype=xp.float64, device=device)
        # Spare rows from the start (untouched zeros until written): the rows the first updates
        # append need no copy of the buffer then (QColumnCache.with_spare_rows).
        state.active = ActiveSet(state._new_factor(), QColumnCache(xp, device, n, spare_rows=spare_rows(n)),
                                 state.q_column)
        return state


def restored(xp, device, X, y, kernel, C, ridge, alpha, b, where, yf, margin, upper=None, shift=None) -> SVCState:
    """The state of a saved model: α, b, sets and margins as saved, the margin set entered in
    its saved (factor) order, which rebuilds the factor and the cached columns.

    Raises
    ------
    ValueError
        If a margin row is not marked as a margin point.
    """
    state = SVCState.at_zero(xp, device, X, y, kernel, C, ridge, upper, shift)
    state.alpha, state.b = alpha.copy(), float(b)
    state.yf = to_device(yf, xp, device)
    state.where = np.asarray(where, dtype=np.int8).copy()
    state.lo, state.hi = (to_device(v, xp, device) for v in _levels(state.where, state.upper))
    for k in margin.tolist():
        if state.where[k] != M:
            raise ValueError(f"corrupt gpath model file: margin row {k} is not in the margin set")
        state.active.enter(k, state.y_host[k])
    return state


@single_threaded_host_blas
def _path_start(xp, device, upper, alpha, y, QA, a_rows: np.ndarray, a_cols: np.ndarray, r_rows: np.ndarray,
                q_rows):
    """The start of a path (section 3.2) from the host boxes, α and labels of a state with
    the added rows appended: the distances d_A = C_A − α_A and d_R = α_R of the moving added
    rows ``a_rows`` (their columns ``a_cols`` of ``QA``) and removed rows ``r_rows`` (host
    ints), the size of the update's own rates, δ₀ = y_Aᵀd_A − y_Rᵀd_R,
    u = Q[:, A] d_A − Q[:, R] d_R (device) and Q[:, R] (``q_rows(r_rows)``; None without any).
    :class:`_PathRun` and the compiled update of a few points (:meth:`SVCState._one_point`)
    start from the same numbers, bit for bit."""
    dA = upper[a_rows] - alpha[a_rows]
    dR = alpha[r_rows]  # (a copy: fancy indexing)
    # The size of the update's own rates (d at r = 1): margin rates far below it are
    # round-off (gpath._ratio.first_bound_hit). Not C: where the kernel is huge (features
    # of size 1e12) the coefficients, and a removal's rates, are tiny.
    rate_scale = max(float(dA.max()) if dA.size else 0.0, float(dR.max()) if dR.size else 0.0)
    delta0 = float(y[a_rows] @ dA - y[r_rows] @ dR)
    u, QR = None, None
    if a_rows.size:
        d = np.zeros(QA.shape[1])
        d[a_cols] = dA
        u = QA @ to_device(d, xp, device)
    if r_rows.size:
        QR = q_rows(r_rows)
        u_r = QR @ to_device(dR, xp, device)
        u = -u_r if u is None else u - u_r
    u = xp.zeros(upper.shape[0], dtype=xp.float64, device=device) if u is None else u
    return dA, dR, rate_scale, delta0, u, QR


class _PathRun:
    """One multi-parametric path: the working variables of :meth:`SVCState.follow`.

    η always runs over [0, 1] for the *remaining* distance (DESIGN.md pitfalls). The update's
    own coefficients move on straight lines, α_A = C_A − r·d_A and α_R = r·d_R with d_A, d_R
    their distances at the start and r the fraction of the path still ahead, so only r changes
    per breakpoint; so does u = Q[:, A] d_A − Q[:, R] d_R, whose ψ term is r·u (eq. 11).
    """

    def __init__(self, state: SVCState, QA, n_old: int, remove: np.ndarray):
        self.s = s = state
        self.QA = QA
        self.n_breakpoints = self.zero_steps = 0
        self.n_screened = 0  # breakpoints the compiled loop screened (gpath._screening)
        self.events = None  # a list to log (kind, point) of every event in (tests), or None
        xp = s.xp
        # Points of A already satisfying (1a) go straight to O (section 3.2), as do points with
        # an empty box (C_k = 0: α_k = 0 = C_k is all they can be). Points of R leave every set
        # now; those with α = 0 have no influence at all.
        if s.engine.name == "numba":  # NumPy: the sets placed in one compiled pass
            self.a_rows, self.a_col, self.r_rows, in_margin = _path_sets(n_old, remove, s.yf, s.lo, s.hi, s.where,
                                                                         s.upper, s.alpha)
        else:
            a_rows = np.arange(n_old, s.n)
            moving = (s.engine.gather(s.yf, a_rows) < 1.0 - _EPS) & (s.upper[n_old:] > 0.0)
            if not moving.all():
                s.place_all(a_rows[~moving], O)
            self.a_rows = a_rows[moving]
            self.a_col = np.full(s.n, -1, dtype=np.int64)  # column of QA of each point of A
            self.a_col[a_rows] = np.arange(a_rows.size)
            self.r_rows = remove[s.alpha[remove] > 0.0]
            in_margin = remove[s.where[remove] == M]
            s.place_all(remove, R)
        for k in in_margin.tolist():
            s.active.leave(k)
        # Q[:, R] of the removed points with α > 0, which take_rows reuses for their share of
        # the scale.
        self.QR, self.r_rows_at_start = None, self.r_rows
        if not (self.a_rows.size or self.r_rows.size):
            return  # nothing moves (run() only finishes): no rates, no direction
        self.r = 1.0
        self.dA, self.dR, self.rate_scale, self.delta0, self.u, self.QR = _path_start(
            xp, s.device, s.upper, s.alpha, s.y_host, QA, self.a_rows, self.a_col[self.a_rows], self.r_rows,
            s.q_rows_block)

    # -- events ------------------------------------------------------------------
    def _a_column(self, k: int):
        xp, s = self.s.xp, self.s
        return xp.take(self.QA, to_device(self.a_col[k : k + 1], xp, s.device), axis=1)[:, 0]

    def _leave_a(self, k: int) -> None:
        """Point k of A reached the margin: α_k stops at its current value, and its term leaves
        u and δ."""
        s = self.s
        j = int(np.flatnonzero(self.a_rows == k)[0])
        d = float(self.dA[j])
        s.alpha[k] = s.upper[k] - self.r * d
        self.u = self.u - d * self._a_column(k)
        self.delta0 -= s.y_host[k] * d
        self.a_rows, self.dA = np.delete(self.a_rows, j), np.delete(self.dA, j)

    def _margin_insert(self, k: int) -> None:
        """Point k enters M (its column from QA if it is being added)."""
        s = self.s
        column = None
        if s.where[k] == A:
            self._leave_a(k)
            column = self._a_column(k)
        s.active.enter(k, s.y_host[k], column)
        s.place(k, M)
        s.yf[k] = 1.0

    def _apply(self, event) -> None:
        s = self.s
        kind, k, upward = event
        if kind == "crossing":
            self._margin_insert(k)
        else:
            s.active.leave(k)
            s.alpha[k] = s.upper[k] if upward else 0.0
            s.place(k, I if upward else O)

    # -- the loop --------------------------------------------------------------
    def run(self) -> int:
        """Follow the path to its end; return the number of breakpoints. NumPy arrays run the
        compiled loop (:mod:`gpath._mid_numba`), every other namespace this readable one."""
        if not (self.a_rows.size or self.r_rows.size):
            return self.finish()  # nothing moves (the added points are in O, the removed had α = 0)
        if self.s.engine.name == "numba":
            return _mid_numba.follow(self)
        s = self.s
        engine, active = s.engine, s.active
        max_breakpoints = 50 * (s.n + 10)
        while self.a_rows.size or self.r_rows.size:
            if self.n_breakpoints > max_breakpoints or self.zero_steps > 2 * s.n + 10:
                raise self.cycling()
            # δ(α) of section 3.3: the change of yᵀα the remaining path asks for.
            delta = self.r * self.delta0
            # Round-off of a balanced update: treat it as balanced everywhere. Relative to the
            # update's own rates, not to C: where the kernel is huge (features of size 1e9)
            # the coefficients are tiny, and their imbalance is no round-off of C's size.
            if abs(delta) <= _EPS * self.rate_scale * (self.a_rows.size + self.r_rows.size):
                delta = 0.0
            members = active.members
            if not members.size and delta != 0.0:
                self._enter_empty_margin(delta)
                continue
            # Direction (eqs. 10–11): [Δb; Δα_M] = η φ and y ⊙ Δf = η ψ.
            if members.size:
                rhs = np.empty(members.size + 1)
                rhs[0] = delta
                rhs[1:] = self.r * engine.gather(self.u, members)
                phi = -active.solve(rhs)
                alpha_m, upper_m = s.alpha[members], s.upper[members]
                bound = first_bound_hit(alpha_m, phi[1:], np.zeros(members.size), upper_m, members,
                                        self.r * self.rate_scale)
                bound = (bound[0], int(members[bound[1]]) if bound[1] >= 0 else -1, bound[2])
            else:
                phi = np.zeros(1)
                bound = (float("inf"), -1, True)
            crossing = engine.step(s.yf, s.lo, s.hi, s.cache, active.slots, phi[1:], phi[0], s.y, self.r,
                                   self.u, min(bound[0], 1.0))
            eta, event = first_event(bound, crossing, 1.0)
            # Move every variable by η (eqs. 3, 4, 10, 11); y f moved in the engine's pass.
            if members.size:
                # Rates below round-off are not events (first_bound_hit); clip what they move.
                s.alpha[members] = np.minimum(np.maximum(alpha_m + eta * phi[1:], 0.0), upper_m)
            s.b += eta * float(phi[0])
            self.r *= 1.0 - eta
            if event is None:
                break
            self.n_breakpoints += 1
            self.zero_steps = self.zero_steps + 1 if eta == 0.0 else 0
            if self.events is not None:
                self.events.append((event[0], event[1]))
            self._apply(event)
        return self.finish()

    def finish(self) -> int:
        """At η = 1: the rest of A at C_i (I), R at 0. Returns the breakpoints passed."""
        s = self.s
        s.alpha[self.a_rows] = s.upper[self.a_rows]
        s.where[self.a_rows] = I
        s.alpha[self.r_rows] = 0.0
        return self.n_breakpoints

    def cycling(self) -> PathError:
        return PathError(
            f"the path did not finish after {self.n_breakpoints} breakpoints "
            f"({self.zero_steps} of them zero-length in a row): degenerate cycling"
        )

    def _enter_empty_margin(self, delta: float) -> None:
        """Empty margin with δ(α) ≠ 0 (section 3.3): move the bias to the end of its interval
        that lets the point there take up −δ, and put that point in M."""
        s = self.s
        (lo, i_lo), (hi, i_hi) = s.bias_interval()
        b_new, k = (hi, i_hi) if delta > 0 else (lo, i_lo)
        if k < 0:
            raise PathError(
                "the margin set is empty and no point can restore yᵀα = 0: "
                "the training set would hold a single class"
            )
        s.yf = s.yf + s.y * (b_new - s.b)
        s.b = b_new
        self._margin_insert(k)
        self.n_breakpoints += 1
        self.zero_steps += 1


@dataclass
class PathEnd:
    """The end checks an update asks of its path (:func:`gpath._simplesvm.exact_update`):
    whether the path's rates may have moved the margins by more round-off than the KKT check
    at ``tol`` passes, then the margin equations refined and checked
    (:meth:`SVCState.refined_check`). A small update's compiled call
    (:meth:`SVCState._one_point`) takes them where the path ends in it, on the new state's
    arrays, after the same steps and with the same arithmetic, and leaves the check's result in
    ``margins`` ((violation, taken) of :func:`_refined_margins`); None: not taken there (a
    stream's update paid some 25 µs of Python steps for them)."""

    tol: float
    margins: tuple[float, bool] | None = None


def follow_update(state: SVCState, X_add, y_add, remove: np.ndarray, limit, method: str, upper_add,
                  shift_add=None, rows_per_point: int = 1, end: PathEnd | None = None) -> tuple[SVCState, int]:
    """The state after adding the rows ``X_add`` and removing the rows ``remove``, and its
    breakpoints: one path (MID, any ``method`` but "single"), or one path per point (SID,
    Cauwenberghs & Poggio's single update; section 3.1), adding the points in order, then
    removing them in order.

    Parameters
    ----------
    state : SVCState
    X_add, y_add, upper_add, shift_add
        As :meth:`SVCState.follow`.
    remove : host int array of shape (ℓ,)
        Rows to remove, increasing, whole points (``rows_per_point`` consecutive rows each).
    limit : int or None
        ``max_columns`` of the cache.
    method : str
    rows_per_point : int
        Rows that make up one point (2 for ε-SVR: its α and α* rows move together).
    end : PathEnd or None
        As :meth:`SVCState.follow` (one path only).
    """
    if method != "single":
        state, stats = state.follow(X_add, y_add, remove, max_columns=limit, upper_add=upper_add,
                                    shift_add=shift_add, end=end)
        return state, stats.n_breakpoints
    return _single_updates(state, X_add, y_add, remove, limit, upper_add, shift_add, rows_per_point)


@single_threaded_host_blas
def _single_updates(state, X_add, y_add, remove, limit, upper_add, shift_add, rows_per_point):
    """:func:`follow_update`'s method "single": one path per point."""
    n_bp, g = 0, rows_per_point
    for j in range(0, X_add.shape[0], g):
        state, stats = state.follow(X_add[j : j + g, :], y_add[j : j + g], np.zeros(0, dtype=np.int64),
                                    max_columns=limit, upper_add=upper_add[j : j + g],
                                    shift_add=None if shift_add is None else shift_add[j : j + g])
        n_bp += stats.n_breakpoints
    # Rows shift as points leave: find each by its position among the survivors.
    alive = np.ones(state.n, dtype=bool)
    for start in range(0, remove.size, g):
        point = remove[start : start + g]
        first = int(np.count_nonzero(alive[: point[0]]))
        state, stats = state.follow(X_add[:0, :], y_add[:0], np.arange(first, first + g), max_columns=limit)
        alive[point] = False
        n_bp += stats.n_breakpoints
    state.unmoved = False  # (the last path's alone would not tell)
    return state, n_bp


# The coarsest float64 resolution of the margins a returned model may have, in units of the
# problem (the margin y f = 1; the spread of the targets in ε-SVR). Beyond it the round-off of
# y f, ε times the size of its terms, hides errors as large as the quantities being solved
# for, and a check relative to that size cannot see them (features of 1e9 with a linear
# kernel: K ~ 1e19, y f resolved to ~1e3, the model 10× from its optimum with a KKT
# violation of 1e-16).
RESOLUTION = 1e-6
_FLOAT64_EPS = float(np.finfo(np.float64).eps)


@njit(cache=True)
def rates_round_off(max_diagonal, rates):  # pragma: no cover - compiled
    """The float64 round-off by which a path's rates (C_a of its added points and α_r of its
    removed ones, summed: ``rates``) may move the margins, ``ε · max Q_kk · rates``
    (:func:`gpath._simplesvm._path_unresolved`)."""
    return _FLOAT64_EPS * max_diagonal * rates


def check_state(state: SVCState, tol: float, checked: tuple[float, float] | None = None, unit: float = 1.0,
                unit_name: str = "the margin level, y f = 1", what: str = "the path") -> None:
    """The maintained margins must satisfy the KKT conditions to ``tol``, relative to the
    scale of y f, and float64 must resolve them (:func:`check_resolution`).

    Parameters
    ----------
    checked : (violation, scale) or None
        :meth:`SVCState.kkt_check` where the caller has it (None: taken here).
    what : str
        What computed the state, for the message.

    Raises
    ------
    PathError
        If they do not (the message says what to change).
    """
    viol, scale = state.kkt_check(tol) if checked is None else checked
    if viol > tol:
        raise PathError(
            f"{what} ended with a KKT violation of {viol:.3g} (relative to the scale of y f, "
            f"{state.kkt_scale():.3g}) > tol={tol:g}; the model is unchanged. The margin system is "
            f"too ill-conditioned for float64 at C={state.C:g}: raise ridge (e.g. ridge=1e-4), "
            f"lower C, or standardize the features"
        )
    check_resolution(state, unit, unit_name, scale)


def resolves(state: SVCState, unit: float) -> bool:
    """Whether float64 resolves the margins y f to :data:`RESOLUTION` of ``unit`` by the bound
    :meth:`SVCState.scale_bound` alone (no product): then :func:`check_resolution` passes for
    ``unit`` and any larger unit."""
    return _FLOAT64_EPS * state.scale_bound() <= RESOLUTION * unit


def check_resolution(state: SVCState, unit: float = 1.0, unit_name: str = "the margin level, y f = 1",
                     scale: float | None = None) -> None:
    """Float64 must resolve the margins y f to :data:`RESOLUTION` of ``unit`` (``unit_name``):
    ε times their scale (``kkt_scale(with_shift=False)``, or ``scale``) may not exceed it.
    Without ``scale``, :meth:`SVCState.scale_bound` decides where it is small enough.

    Raises
    ------
    PathError
        If it does: the KKT conditions, checked relative to that scale, cannot certify the
        model (the message names the scale and what to change).
    """
    if scale is None:
        if resolves(state, unit):
            return
        scale = state.kkt_scale(with_shift=False)  # a target's own size is the data's resolution
    if _FLOAT64_EPS * scale > RESOLUTION * unit:
        raise PathError(
            f"the problem is beyond float64: the margins y f sum terms α_j K(x_i, x_j) up to {scale:.3g}, "
            f"so float64 resolves them only to {_FLOAT64_EPS * scale:.2g}, coarser than {RESOLUTION * unit:.2g} "
            f"({RESOLUTION:g} of {unit_name}); no float64 dual solver can tell this problem's optimum apart (its "
            f"KKT check cannot see errors below that round-off). Standardize the features (a linear or polynomial "
            f"kernel's values grow with their square) or lower C={state.C:g}; the model is unchanged"
        )


from . import _one_point  # (last: it compiles this module's helpers into its call)
