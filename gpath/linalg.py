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
- A point leaving M stays in R. The factor covers a basis B ⊇ M; the left points D = B \\ M
  are held at x_D = 0 by Lagrange multipliers, which in the whitened coordinates w = R x is an
  orthogonal projection P onto the complement of V = R⁻ᵀE_D (one triangular solve per left
  point, S = VᵀV factored anew at |D|³ ≤ 64³). A solve is then two triangular solves, one
  projection and one scalar: O(|B|² + |B|·|D|).
- :meth:`refactor` drops D (B := M, one O(|M|³) Cholesky factorization); it runs when D reaches
  ``max_deleted`` points, when a solve's residual shows drift, and when the owner renumbers
  its points.

Q_BB itself is kept beside the factor: each solve checks its residual against it, and a factor
that has drifted is recomputed before the answer is used.

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
    """Factor of 𝐌 = [[0, yᵀ], [y, Q]] for the current margin set, in insertion order.

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
    max_deleted : int, default 64
        Points that left M but are still in the factor's basis before :meth:`refactor` drops
        them.
    """

    def __init__(self, rcond: float = 1e-13, bordered: bool = True, max_deleted: int = 64):
        self.rcond, self.bordered, self.max_deleted = rcond, bordered, max_deleted
        self.basis = np.zeros(0, dtype=np.int64)  # point id of each basis position
        self._in_m = np.zeros(0, dtype=bool)  # basis position still in M
        self._order: list[int] = []  # basis position of each margin point, factor order
        self._q = np.zeros((0, 0))  # Q_BB (unshifted), capacity-doubled
        self._y = np.zeros(0)  # y_B (ones without the border)
        self._rho = 0.0  # shift of Q̃ = Q + ρ y yᵀ
        self._r = np.zeros((0, 0))  # upper Cholesky factor of Q̃_BB
        self._g = np.zeros(0)  # R⁻ᵀ y_B
        self._v = np.zeros((0, 0))  # R⁻ᵀ E_D, one column per left point
        self._vtv = np.zeros((0, 0))  # VᵀV
        self._left: list[int] = []  # basis position of each column of V
        self._s = None  # Cholesky factor of VᵀV (None while D is empty)
        self._scale = 0.0  # an upper bound of max |𝐌_ij|, for the residual check
        self.n_refactor = 0

    # ------------------------------------------------------------------ views
    @property
    def size(self) -> int:
        """Number of margin points |M|."""
        return len(self._order)

    @property
    def points(self) -> np.ndarray:
        """Point ids of the margin set in factor order, shape (|M|,)."""
        return self.basis[self._order]

    @property
    def matrix(self) -> np.ndarray:
        """𝐌 in factor order (a new array: |M| + 1 square, or |M| without the border)."""
        pos = np.array(self._order, dtype=np.int64)
        q = self._q[np.ix_(pos, pos)]
        if not self.bordered:
            return q
        big = np.zeros((pos.size + 1, pos.size + 1))
        big[0, 1:] = big[1:, 0] = self._y[pos]
        big[1:, 1:] = q
        return big

    def copy(self) -> BorderedFactor:
        """An independent copy (the path is transactional: it works on a copy)."""
        new = object.__new__(BorderedFactor)
        new.__dict__.update(self.__dict__)
        nb = self.basis.size
        new.basis, new._in_m, new._order = self.basis.copy(), self._in_m.copy(), list(self._order)
        new._q = self._q[:nb, :nb].copy()
        new._y, new._r, new._g, new._v = self._y.copy(), self._r.copy(), self._g.copy(), self._v.copy()
        new._vtv, new._left = self._vtv.copy(), list(self._left)
        new._s = None if self._s is None else (self._s[0].copy(), self._s[1])
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
        q_kB : ndarray of shape (|B|,)
            ``Q[k, basis]``: the new point's row against every point of :attr:`basis` (the
            margin points and those that left it since the last :meth:`refactor`).
        q_kk : float
            ``Q[k, k]`` (including any ridge).

        Raises
        ------
        SingularMarginError
            If 𝐌 with the new point is numerically singular; the factor is left unchanged.
        """
        nb = self.basis.size
        left = np.flatnonzero((self.basis == point) & ~self._in_m)
        if left.size:  # back from D: R already covers it; drop its multiplier
            self._reenter(int(left[0]))
            return
        y_k = float(y_k) if self.bordered else 1.0
        if nb == 0:
            self._rho = float(q_kk) if self.bordered else 0.0
        q_kB = np.asarray(q_kB, dtype=np.float64)
        shifted = q_kB + self._rho * y_k * self._y
        d2_top = q_kk + self._rho
        r = sla.solve_triangular(self._r, shifted, trans="T", check_finite=False) if nb else shifted
        d2 = d2_top - float(r @ r)
        top = max(d2_top, float(np.max(np.diag(self._r) ** 2)) if nb else 0.0)
        if d2 <= 1e-8 * top:  # a pivot this small may be round-off of an exact zero
            if self._left:
                # Perhaps singular only with the points that left M (a duplicate of one of
                # them entering): drop them and decide against M alone.
                kept = np.array(self._order, dtype=np.int64)
                self.refactor()
                self.insert(point, y_k, q_kB[kept], q_kk)
                return
            if d2 <= 0.0 or self._singular_with(y_k, q_kB, q_kk):
                raise SingularMarginError(
                    f"the margin matrix became singular when a point entered the margin set "
                    f"(|M| = {self.size + 1}, squared pivot {d2:.3g}); duplicate points on the "
                    f"margin need ridge > 0"
                )
        d = np.sqrt(d2)
        grown = np.zeros((nb + 1, nb + 1))
        grown[:nb, :nb] = self._r
        grown[:nb, nb] = r
        grown[nb, nb] = d
        if nb == self._q.shape[0]:  # Q_BB is capacity-doubled: appending is O(|B|)
            q = np.zeros((max(16, 2 * nb), max(16, 2 * nb)))
            q[:nb, :nb] = self._q[:nb, :nb]
            self._q = q
        self._q[nb, :nb] = self._q[:nb, nb] = q_kB
        self._q[nb, nb] = q_kk
        self._r = grown
        # A new last row of R⁻ᵀ: the old rows of g and V stay as they are.
        self._g = np.append(self._g, (y_k - r @ self._g) / d)
        if self._v.shape[1]:
            v_new = -(r @ self._v) / d
            self._v = np.vstack([self._v, v_new])
            self._vtv = self._vtv + np.outer(v_new, v_new)
        else:
            self._v = np.zeros((nb + 1, 0))
        self._y = np.append(self._y, y_k)
        self.basis = np.append(self.basis, np.int64(point))
        self._in_m = np.append(self._in_m, True)
        self._order.append(nb)
        self._scale = max(self._scale, float(np.abs(q_kB).max(initial=abs(q_kk))), 1.0 if self.bordered else 0.0)
        self._refresh_projection()

    def _singular_with(self, y_k, q_kM, q_kk) -> bool:
        """Whether 𝐌 with the new point has a singular value below ``rcond`` times its
        largest (an SVD, O(|M|³): only for the rare tiny pivot, e.g. ``ridge=0``)."""
        m = self.matrix
        o = 1 if self.bordered else 0
        big = np.zeros((m.shape[0] + 1, m.shape[0] + 1))
        big[:-1, :-1] = m
        big[-1, o:-1] = big[o:-1, -1] = q_kM
        if o:
            big[-1, 0] = big[0, -1] = y_k
        big[-1, -1] = q_kk
        sv = np.linalg.svd(big, compute_uv=False)
        return bool(sv[-1] <= self.rcond * sv[0])

    def delete(self, k: int) -> None:
        """Remove the k-th margin point (0-based, in factor order)."""
        if not 0 <= k < self.size:
            raise IndexError(f"margin position {k} out of range for |M| = {self.size}")
        j = self._order.pop(k)
        self._in_m[j] = False
        if not self._order:
            self._reset()
            return
        if self._v.shape[1] >= self.max_deleted:
            self.refactor()
            return
        e = np.zeros(self.basis.size)
        e[j] = 1.0
        w = sla.solve_triangular(self._r, e, trans="T", check_finite=False)
        vtw = self._v.T @ w
        self._vtv = np.block([[self._vtv, vtw[:, None]], [vtw[None, :], np.array([[w @ w]])]])
        self._v = np.column_stack([self._v, w])
        self._left.append(j)
        self._refresh_projection()

    def _reenter(self, j: int) -> None:
        c = self._left.index(j)
        del self._left[c]
        self._v = np.delete(self._v, c, axis=1)
        self._vtv = np.delete(np.delete(self._vtv, c, axis=0), c, axis=1)
        self._in_m[j] = True
        self._order.append(j)
        self._refresh_projection()

    def refactor(self) -> None:
        """Factor Q̃_MM afresh and drop the points that left M (O(|M|³); repairs round-off)."""
        if not self._order:
            self._reset()
            return
        pos = np.array(self._order, dtype=np.int64)
        q, y = self._q[np.ix_(pos, pos)], self._y[pos]
        try:
            r = sla.cholesky(q + self._rho * np.outer(y, y), lower=False, check_finite=False)
        except np.linalg.LinAlgError as exc:
            raise SingularMarginError(f"the margin matrix is numerically singular (|M| = {pos.size})") from exc
        self.basis, self._y, self._r = self.basis[pos], y, r
        self._q = q
        self._in_m = np.ones(pos.size, dtype=bool)
        self._order = list(range(pos.size))
        self._g = sla.solve_triangular(r, y, trans="T", check_finite=False)
        self._v, self._vtv, self._left = np.zeros((pos.size, 0)), np.zeros((0, 0)), []
        self._refresh_projection()
        self.n_refactor += 1

    def renumber(self, new_index: np.ndarray) -> None:
        """Map the point ids through ``new_index`` (old id -> new id) after dropping the
        points that left M (their ids may no longer exist)."""
        if self._v.shape[1]:
            self.refactor()
        self.basis = new_index[self.basis].astype(np.int64)

    def _reset(self) -> None:
        keep_refactors = self.n_refactor
        self.__init__(self.rcond, self.bordered, self.max_deleted)
        self.n_refactor = keep_refactors

    def _refresh_projection(self) -> None:
        """Factor S = VᵀV and the projected border ĝ = P g after a change of B or D."""
        if self._v.shape[1]:
            self._s = sla.cho_factor(self._vtv, check_finite=False)
        else:
            self._s = None
        self._ghat = self._project(self._g)

    def _project(self, z: np.ndarray) -> np.ndarray:
        """P z: remove the part of z in the span of V (the multipliers that hold x_D = 0)."""
        if self._s is None:
            return z
        return z - self._v @ sla.cho_solve(self._s, self._v.T @ z, check_finite=False)

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
        if not self._order:
            if not self.bordered:
                return np.zeros(0)
            raise SingularMarginError("the margin set is empty: 𝐌 = [[0]] is singular")
        rhs = np.asarray(rhs, dtype=np.float64)
        x = self._solve(rhs)
        # The basis B may be worse conditioned than M alone: one step of iterative refinement
        # brings x back to the accuracy of 𝐌 itself; a factor that has drifted further is
        # recomputed.
        res, size = self._residual(x, rhs)
        if np.abs(res).max() > 1e-15 * size:
            x = x + self._solve(res)
            res, size = self._residual(x, rhs)
            if np.abs(res).max() > 1e-11 * size:
                self.refactor()
                x = self._solve(rhs)
        return x

    def _solve(self, rhs):
        o = 1 if self.bordered else 0
        pos = self._order
        r = np.zeros(self.basis.size)
        r[pos] = rhs[o:]
        if o:
            r += self._rho * rhs[0] * self._y
        z = self._project(sla.solve_triangular(self._r, r, trans="T", check_finite=False))
        if o:
            b = (float(self._ghat @ z) - rhs[0]) / float(self._ghat @ self._ghat)
            z = z - b * self._ghat
        x = sla.solve_triangular(self._r, z, check_finite=False)[pos]
        return np.concatenate([[b], x]) if o else x

    def _residual(self, x, rhs):
        """``(rhs − 𝐌 x, size)``: the residual and the scale its max-norm is relative to."""
        o = 1 if self.bordered else 0
        pos = np.array(self._order, dtype=np.int64)
        full = np.zeros(self.basis.size)
        full[pos] = x[o:]
        nb = self.basis.size
        res = (self._q[:nb, :nb] @ full)[pos] - rhs[o:]
        if o:
            res += x[0] * self._y[pos]
            res = np.concatenate([[float(self._y[pos] @ x[o:]) - rhs[0]], res])
        return -res, self._scale * np.abs(x).max() + np.abs(rhs).max()
