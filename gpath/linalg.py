"""Host-side factor of the bordered margin matrix with O(|M|^2) insert and delete.

The same factor serves the problems without a bias (the outlier path of Suzumura et al.),
whose active-set matrix is Q_EE alone: ``BorderedFactor(bordered=False)``.

The margin equations of the C-SVC path (Karasuyama & Takeuchi 2009, eq. 7) are solved
through the bordered matrix

    𝐌 = [[0, y_Mᵀ], [y_M, Q_MM]]          (|M| + 1 square, symmetric, indefinite).

𝐌 is indefinite, so a Cholesky factor does not apply to it directly; a QR factor does,
whatever the inertia, and SciPy updates it by Givens rotations in O(|M|^2) per inserted or
deleted row and column (:func:`scipy.linalg.qr_insert`, :func:`scipy.linalg.qr_delete`).
The matrix itself is kept beside the factor: each solve checks its residual, and a factor
that has drifted is recomputed from the matrix before the answer is used.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla

__all__ = ["BorderedFactor", "SingularMarginError"]


class SingularMarginError(np.linalg.LinAlgError):
    """The bordered margin matrix became singular (duplicate margin points with ``ridge=0``)."""


class BorderedFactor:
    """QR factor of 𝐌 = [[0, yᵀ], [y, Q]] for the current margin set.

    Row/column 0 is the border (the bias); row/column ``k + 1`` is the k-th margin point
    in insertion order. Without the border (``bordered=False``) the matrix is Q_MM and
    row/column k is the k-th point. All arrays are float64 NumPy arrays on the host.

    Parameters
    ----------
    rcond : float, default 1e-13
        A new diagonal entry of R smaller than ``rcond`` times the largest one means 𝐌 is
        numerically singular; :meth:`insert` then raises :class:`SingularMarginError`.
    bordered : bool, default True
        Whether 𝐌 has the border row and column of the equality constraint yᵀα = 0.
    """

    def __init__(self, rcond: float = 1e-13, bordered: bool = True):
        self.rcond = rcond
        self.bordered = bordered
        self._offset = 1 if bordered else 0
        self.matrix = np.zeros((self._offset, self._offset))
        self._q = None  # None while the margin set is empty (𝐌 = [[0]] is singular)
        self._r = None
        self._scale = 0.0  # an upper bound of max |𝐌_ij|, for the residual check
        self.n_refactor = 0

    @property
    def size(self) -> int:
        """Number of margin points |M|."""
        return self.matrix.shape[0] - self._offset

    def copy(self) -> BorderedFactor:
        """An independent copy (the path is transactional: it works on a copy)."""
        new = BorderedFactor(self.rcond, self.bordered)
        new.matrix = self.matrix.copy()
        new._q = None if self._q is None else self._q.copy()
        new._r = None if self._r is None else self._r.copy()
        new._scale = self._scale
        new.n_refactor = self.n_refactor
        return new

    def insert(self, y_k: float, q_kM: np.ndarray, q_kk: float) -> None:
        """Append a margin point: one row and column ``[y_k, q_kM, q_kk]``.

        Parameters
        ----------
        y_k : float or None
            Label (±1) of the new margin point (ignored without the border).
        q_kM : ndarray of shape (|M|,)
            ``Q[k, M]`` for the current margin points, in factor order.
        q_kk : float
            ``Q[k, k]`` (including any ridge).

        Raises
        ------
        SingularMarginError
            If 𝐌 with the new point is numerically singular; the factor is left unchanged.
        """
        m, o = self.size, self._offset
        row = np.empty(m + o)
        if o:
            row[0] = y_k
        row[o:] = q_kM
        col = np.append(row, q_kk)
        matrix = np.empty((m + o + 1, m + o + 1))
        matrix[: m + o, : m + o] = self.matrix
        matrix[m + o, : m + o] = row
        matrix[:, m + o] = col
        if self._q is None:
            q, r = sla.qr(matrix)
        else:
            q, r = sla.qr_insert(self._q, self._r, row, m + o, which="row")
            q, r = sla.qr_insert(q, r, col, m + o, which="col")
        diag = np.abs(np.diag(r))
        if diag[-1] <= self.rcond * max(diag.max(), 1.0):
            raise SingularMarginError(
                f"the margin matrix became singular when a point entered the margin set "
                f"(|M| = {m + 1}, pivot {diag[-1]:.3g}); duplicate points on the margin need "
                f"ridge > 0"
            )
        self.matrix, self._q, self._r = matrix, q, r
        self._scale = max(self._scale, float(np.abs(col).max()))

    def delete(self, k: int) -> None:
        """Remove the k-th margin point (0-based, in factor order)."""
        m, o = self.size, self._offset
        if not 0 <= k < m:
            raise IndexError(f"margin position {k} out of range for |M| = {m}")
        keep = np.delete(np.arange(m + o), k + o)
        self.matrix = self.matrix[np.ix_(keep, keep)]
        if m == 1:
            self._q = self._r = None
            return
        q, r = sla.qr_delete(self._q, self._r, k + o, which="row")
        self._q, self._r = sla.qr_delete(q, r, k + o, which="col")

    def refactor(self) -> None:
        """Recompute the QR factor from 𝐌 (O(|M|^3); repairs accumulated round-off)."""
        if self.size:
            self._q, self._r = sla.qr(self.matrix)
            self.n_refactor += 1

    def solve(self, rhs: np.ndarray) -> np.ndarray:
        """Solve 𝐌 x = rhs.

        Parameters
        ----------
        rhs : ndarray of shape (|M| + 1,) ((|M|,) without the border)

        Returns
        -------
        x : ndarray of the shape of rhs, float64

        Raises
        ------
        SingularMarginError
            If the margin set is empty (𝐌 = [[0]] has no inverse).
        """
        if self._q is None:
            if not self.bordered:
                return np.zeros(0)
            raise SingularMarginError("the margin set is empty: 𝐌 = [[0]] is singular")
        x = self._solve(rhs)
        # Givens updates keep Q orthogonal only to round-off; check, and repair if needed.
        if self._residual(x, rhs) > 1e-11:
            self.refactor()
            x = self._solve(rhs)
        return x

    def _solve(self, rhs):
        return sla.solve_triangular(self._r, self._q.T @ rhs, check_finite=False)

    def _residual(self, x, rhs) -> float:
        scale = self._scale * np.abs(x).max() + np.abs(rhs).max()
        return float(np.abs(self.matrix @ x - rhs).max() / scale) if scale > 0 else 0.0
