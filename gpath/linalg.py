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
  is one scalar Schur complement, yᵀQ̃⁻¹y.
- A point entering M appends one column to R: one triangular solve, O(|M|²).
- A point leaving M removes its row and column from R. Its row r held a share of the Gram
  matrix of the later columns, so the trailing block R₃₃ becomes the Cholesky factor of
  R₃₃ᵀR₃₃ + r rᵀ: a rank-one update (never a downdate: stable), made by SciPy's
  Givens-rotation QR row insertion (:func:`scipy.linalg.qr_insert`) of rᵀ into R₃₃: O(t²)
  for a trailing block of size t.
- ρ is the largest diagonal entry of Q_MM (1 if they are all zero), chosen anew at every
  refactorization.
- A solve is two triangular solves and one scalar: O(|M|²).

Q_MM itself is kept beside the factor: each solve checks its residual against it, and a factor
that has drifted is recomputed (O(|M|³)) before the answer is used.

These host matrices are small (|M| + 1 square), and the path alternates between them and the
n × |M| product. A multi-threaded BLAS wastes more on waking and spinning its threads for
such matrices than it gains, and its spinning threads slow the product down: the path
algorithms therefore run SciPy's BLAS single-threaded (:func:`single_threaded_host_blas`,
through threadpoolctl), leaving NumPy's (the product on the CPU) as it is.
"""

from __future__ import annotations

import functools
import os

import numpy as np
import scipy
import scipy.linalg as sla
from scipy.linalg.blas import dtrsv
from threadpoolctl import ThreadpoolController

__all__ = ["BorderedFactor", "SingularMarginError", "single_threaded_host_blas"]

_SCIPY_DIR = os.path.dirname(os.path.dirname(os.path.abspath(scipy.__file__)))


@functools.cache
def _scipy_blas():
    """threadpoolctl's controller of the BLAS libraries that SciPy ships (none when SciPy uses
    a system BLAS shared with NumPy: that one is left alone)."""
    controller = ThreadpoolController()
    paths = [lib.filepath for lib in controller.lib_controllers
             if lib.user_api == "blas" and os.path.abspath(lib.filepath).startswith(os.path.join(_SCIPY_DIR, "scipy"))]
    return controller.select(filepath=paths) if paths else None


def _solve_r(r, b):
    """R⁻¹ b for the upper triangular R (Fortran order: BLAS reads it in place)."""
    return dtrsv(r, b, lower=0, trans=0)


def _solve_rt(r, b):
    """R⁻ᵀ b."""
    return dtrsv(r, b, lower=0, trans=1)


def single_threaded_host_blas(func):
    """Run ``func`` with SciPy's BLAS on one thread (see the module docstring)."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        libs = _scipy_blas()
        if libs is None:
            return func(*args, **kwargs)
        with libs.limit(limits=1):
            return func(*args, **kwargs)

    return wrapper


class SingularMarginError(np.linalg.LinAlgError):
    """The bordered margin matrix became singular (duplicate margin points with ``ridge=0``)."""


class BorderedFactor:
    """Cholesky factor of the shifted 𝐌 = [[0, yᵀ], [y, Q]] for the current margin set.

    Row/column 0 of 𝐌 is the border (the bias); row/column ``k + 1`` is the k-th margin point
    in insertion order ("factor order"). Without the border (``bordered=False``) the matrix is
    Q_MM and row/column k is the k-th point. All arrays are float64 NumPy arrays on the host.

    Parameters
    ----------
    rcond : float, default 1e-13
        𝐌 with a singular value below ``rcond`` times its largest is numerically singular:
        :meth:`insert` then raises :class:`SingularMarginError` (checked by an SVD only when
        the new Cholesky pivot is tiny, below 1e-8 of the diagonal).
    bordered : bool, default True
        Whether 𝐌 has the border row and column of the equality constraint yᵀα = 0.
    """

    def __init__(self, rcond: float = 1e-13, bordered: bool = True):
        self.rcond, self.bordered = rcond, bordered
        self.basis = np.zeros(0, dtype=np.int64)  # the caller's id of each margin point
        self._q = np.zeros((0, 0))  # Q_MM (unshifted), capacity-doubled
        self._y = np.zeros(0)  # y_M (ones without the border)
        self._rho = 0.0  # shift of Q̃ = Q + ρ y yᵀ
        self._r = np.zeros((0, 0))  # upper Cholesky factor of Q̃_MM
        self._g = np.zeros(0)  # R⁻ᵀ y_M
        self._scale = 0.0  # an upper bound of max |𝐌_ij|, for the residual check

    # ------------------------------------------------------------------ views
    @property
    def size(self) -> int:
        """Number of margin points |M|."""
        return self.basis.size

    @property
    def matrix(self) -> np.ndarray:
        """𝐌 in factor order (a new array: |M| + 1 square, or |M| without the border)."""
        m = self.size
        if not self.bordered:
            return self._q[:m, :m].copy()
        big = np.zeros((m + 1, m + 1))
        big[0, 1:] = big[1:, 0] = self._y
        big[1:, 1:] = self._q[:m, :m]
        return big

    def copy(self) -> BorderedFactor:
        """An independent copy (the path is transactional: it works on a copy)."""
        new = object.__new__(BorderedFactor)
        new.__dict__.update(self.__dict__)
        m = self.size
        new.basis, new._q, new._y = self.basis.copy(), self._q[:m, :m].copy(), self._y.copy()
        new._r, new._g = self._r.copy(order="F"), self._g.copy()
        return new

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
        m = self.size
        y_k = float(y_k) if self.bordered else 1.0
        q_kB = np.asarray(q_kB, dtype=np.float64)
        rho = self._rho if m else self._shift(np.array([q_kk]))
        shifted = q_kB + rho * y_k * self._y
        r = _solve_rt(self._r, shifted) if m else shifted
        d2 = q_kk + rho - float(r @ r)
        top = max(q_kk + rho, float(np.max(np.diag(self._r) ** 2)) if m else 0.0)
        if d2 <= 1e-8 * top:
            # A pivot this small may be round-off of an exact zero: the singular values decide.
            if self._singular_with(y_k, q_kB, q_kk):
                raise SingularMarginError(
                    f"the margin matrix became singular when a point entered the margin set "
                    f"(|M| = {m + 1}, squared pivot {d2:.3g}): duplicate margin points, or with "
                    f"ridge = 0 margin points whose kernel columns are linearly dependent; use "
                    f"ridge > 0"
                )
            # 𝐌 is nonsingular but the updated factor would be inaccurate: factor it anew.
            scale = self._scale
            self._append(point, y_k, q_kB, q_kk)
            try:
                self.refactor()
            except SingularMarginError:
                self.basis, self._y, self._scale = self.basis[:m], self._y[:m], scale
                raise
            return
        self._append(point, y_k, q_kB, q_kk)
        d = np.sqrt(d2)
        grown = np.zeros((m + 1, m + 1), order="F")
        grown[:m, :m] = self._r
        grown[:m, m] = r
        grown[m, m] = d
        self._r, self._rho = grown, rho
        if self.bordered:
            self._g = np.append(self._g, (y_k - r @ self._g) / d)  # a new last row of R⁻ᵀ y

    def _append(self, point, y_k, q_kB, q_kk) -> None:
        """Append the point to Q_MM, y_M and the basis (not to R)."""
        m = self.size
        if m == self._q.shape[0]:  # Q_MM is capacity-doubled: appending is O(|M|)
            q = np.zeros((max(16, 2 * m), max(16, 2 * m)))
            q[:m, :m] = self._q[:m, :m]
            self._q = q
        self._q[m, :m] = self._q[:m, m] = q_kB
        self._q[m, m] = q_kk
        self._y = np.append(self._y, y_k)
        self.basis = np.append(self.basis, np.int64(point))
        self._scale = max(self._scale, float(np.abs(q_kB).max(initial=abs(q_kk))), 1.0 if self.bordered else 0.0)

    def _shift(self, diagonal: np.ndarray) -> float:
        """ρ: the scale of Q's diagonal (so that ρ y yᵀ neither vanishes next to Q nor swamps
        it); 1 for an all-zero diagonal; 0 without the border."""
        if not self.bordered:
            return 0.0
        top = float(np.max(diagonal, initial=0.0))
        return top if top > 0.0 else 1.0

    def _singular_with(self, y_k, q_kB, q_kk) -> bool:
        """Whether 𝐌 with the new point has a singular value below ``rcond`` times its
        largest (an SVD, O(|M|³): only for the rare tiny pivot, e.g. ``ridge=0``)."""
        m = self.matrix
        o = 1 if self.bordered else 0
        big = np.zeros((m.shape[0] + 1, m.shape[0] + 1))
        big[:-1, :-1] = m
        big[-1, o:-1] = big[o:-1, -1] = q_kB
        if o:
            big[-1, 0] = big[0, -1] = y_k
        big[-1, -1] = q_kk
        sv = np.linalg.svd(big, compute_uv=False)
        return bool(sv[-1] <= self.rcond * sv[0])

    def delete(self, k: int) -> None:
        """Remove the k-th margin point (0-based, in factor order)."""
        m = self.size
        if not 0 <= k < m:
            raise IndexError(f"margin position {k} out of range for |M| = {m}")
        R = self._r
        r = np.zeros((m - 1, m - 1), order="F")  # R without row and column k
        r[:k, :k], r[:k, k:] = R[:k, :k], R[:k, k + 1 :]
        t = m - 1 - k
        if t:
            # Row k held a share r of the Gram matrix of the later columns: the trailing block
            # is the Cholesky factor of R₃₃ᵀR₃₃ + r rᵀ, made by Givens rotations of r into R₃₃.
            _, r33 = sla.qr_insert(np.eye(t), R[k + 1 :, k + 1 :], R[k, k + 1 :], t, which="row",
                                   check_finite=False)
            r[k:, k:] = r33[:t]
        self._r = r
        keep = np.delete(np.arange(m), k)
        q = self._q
        q[k : m - 1, :m] = q[k + 1 : m, :m].copy()
        q[:m, k : m - 1] = q[:m, k + 1 : m].copy()
        self._y, self.basis = self._y[keep], self.basis[keep]
        if self.bordered:
            self._g = _solve_rt(r, self._y) if m > 1 else np.zeros(0)

    def refactor(self) -> None:
        """Factor Q̃_MM afresh, ρ chosen anew (O(|M|³); repairs accumulated round-off).

        Raises
        ------
        SingularMarginError
            If Q̃_MM is not numerically positive definite (the factor is left unchanged).
        """
        m = self.size
        if not m:
            return
        q = self._q[:m, :m]
        rho = self._shift(np.diag(q))
        try:
            r = np.asfortranarray(sla.cholesky(q + rho * np.outer(self._y, self._y), lower=False,
                                               check_finite=False))
        except np.linalg.LinAlgError as exc:
            raise SingularMarginError(f"the margin matrix is numerically singular (|M| = {m})") from exc
        self._r, self._rho = r, rho
        if self.bordered:
            self._g = _solve_rt(r, self._y)

    def renumber(self, new_index: np.ndarray) -> None:
        """Map the point ids through ``new_index`` (old id -> new id)."""
        self.basis = new_index[self.basis].astype(np.int64)

    # ------------------------------------------------------------------ solve
    def solve(self, rhs: np.ndarray) -> np.ndarray:
        """Solve 𝐌 x = rhs.

        Parameters
        ----------
        rhs : ndarray of shape (|M| + 1,) ((|M|,) without the border)
            In factor order, the border first.

        Returns
        -------
        x : ndarray of the shape of rhs, float64

        Raises
        ------
        SingularMarginError
            If the margin set is empty (𝐌 = [[0]] has no inverse).
        """
        if not self.size:
            if not self.bordered:
                return np.zeros(0)
            raise SingularMarginError("the margin set is empty: 𝐌 = [[0]] is singular")
        rhs = np.asarray(rhs, dtype=np.float64)
        x = self._solve(rhs)
        # Updates keep R exact only to round-off; check, and repair if needed.
        if self._residual(x, rhs) > 1e-11:
            self.refactor()
            x = self._solve(rhs)
        return x

    def _solve(self, rhs):
        """[[0, yᵀ], [y, Q̃]] [b; x] = [r₀; r + ρ r₀ y]: x = R⁻¹(z − b g) with z = R⁻ᵀ(r + ρ r₀ y)
        and b from yᵀx = r₀, i.e. b = (gᵀz − r₀) / gᵀg."""
        if not self.bordered:
            return _solve_r(self._r, _solve_rt(self._r, rhs))
        r0, g = rhs[0], self._g
        z = _solve_rt(self._r, rhs[1:] + self._rho * r0 * self._y)
        b = (float(g @ z) - r0) / float(g @ g)
        x = _solve_r(self._r, z - b * g)
        return np.concatenate([[b], x])

    def _residual(self, x, rhs) -> float:
        """max |𝐌 x − rhs|, relative to the sizes of 𝐌, x and rhs."""
        m = self.size
        if self.bordered:
            res = self._q[:m, :m] @ x[1:] + x[0] * self._y - rhs[1:]
            res = np.append(res, float(self._y @ x[1:]) - rhs[0])
        else:
            res = self._q[:m, :m] @ x - rhs
        scale = self._scale * np.abs(x).max() + np.abs(rhs).max()
        return float(np.abs(res).max() / scale) if scale > 0 else 0.0
