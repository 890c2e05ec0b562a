"""The n-sized work of a breakpoint, one implementation per kind of array.

Every path algorithm in gpath moves along segments on which all margins are affine:

    ψ = a·v + Q[:, S] φ + c·u          (S: the active set, columns from the device cache)

(MID: a = Δb, v = y, c·u the update's own columns, eq. 11 of Karasuyama & Takeuchi 2009;
SimpleSVM: a = b, c·u = U·Q[:, SC]1, section 2; the kink path: a = 0, u the driver, eq. 27 of
Suzumura et al. 2015). A breakpoint needs ψ once, the first t at which some ``z + t ψ``
reaches a level ``lo`` or ``hi`` (the ratio test), and the move ``z += t ψ``. SimpleSVM
instead needs ``z = ψ`` itself and the largest violation of ``lo ≤ z ≤ hi``.

- :class:`Engine` does this with array-API calls in any namespace: the readable reference,
  and the oracle the compiled versions are tested against.
- :class:`NumbaEngine` (NumPy arrays) does each in one compiled pass over n, without n-sized
  temporaries and without interpreter calls between its steps.
- :class:`CupyEngine` (CuPy arrays) does a step as one cuBLAS product and three fused
  elementwise kernels (ψ, the crossing times, the move) around CuPy's argmin, with one
  device-to-host copy of three numbers.

Each returns a few host numbers per call; ``z`` is moved in place.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ._array_api import is_numpy, scalars, to_device, to_host
from ._exp import exp_rows
from ._ratio import EPS
from ._threads import ENTRIES_PER_THREAD, in_row_blocks, n_threads
from .kernels import EXPANSION_LIMIT, CenteredRows, q_columns, with_ridge
from .linalg import all_host_blas_threads, blas_in_row_blocks

__all__ = ["CupyEngine", "Engine", "NumbaEngine", "decision_values", "engine_for"]


# Columns per kernel block of Engine.q_matvecs (n × 256 floats at a time; on the host at most
# _RECYCLED_BYTES).
_MATVEC_COLUMNS = 256
_RECYCLED_BYTES = 2**24


def _block_columns(n: int) -> int:
    """Columns of a host block of n float64 rows computed at once: at most 256 and 16 MB,
    which the allocator recycles, where a larger block (past glibc's 32 MB mmap threshold) is
    fresh memory each time, page faults on every page (make_friedman1 n = 10,000, 7,000 bound
    twins over 20,000 rows: a fit's start 0.90–0.94 s in blocks of 256 columns, 41 MB,
    against 0.69–0.75 s in blocks of 104)."""
    return max(1, min(_MATVEC_COLUMNS, _RECYCLED_BYTES // (8 * max(n, 1))))


class Engine:
    """The generic (array-API) engine.

    Parameters
    ----------
    xp : namespace
    device : device
    """

    name = "generic"

    def __init__(self, xp, device):
        self.xp, self.device = xp, device

    def __getstate__(self):
        return {"xp": self.xp.__name__, "device": self.device}

    def __setstate__(self, state):
        from ._array_api import namespace_by_name

        self.__init__(namespace_by_name(state["xp"]), state["device"])

    # ------------------------------------------------------------------ helpers
    def _psi(self, cache, slots, phi, a, v, c, u):
        """ψ = a·v + Q[:, slots] φ + c·u (device, shape (n,))."""
        coef = np.zeros(cache.capacity)
        coef[slots] = phi
        psi = cache.matvec(coef)
        if v is not None and a != 0.0:
            psi = psi + float(a) * v
        if u is not None and c != 0.0:
            psi = psi + float(c) * u
        return psi

    def gather(self, values, idx) -> np.ndarray:
        """``values[idx]`` on the host (device vector, host int indices): one small copy."""
        if idx.size == 0:
            return np.zeros(0)
        return to_host(self.xp.take(values, to_device(idx, self.xp, self.device)))

    def rows(self, block, idx: np.ndarray):
        """``block[idx, :]`` on the device (device block, host int indices)."""
        return self.xp.take(block, to_device(idx, self.xp, self.device), axis=0)

    def scatter(self, target, idx: np.ndarray, values: np.ndarray) -> None:
        """``target[idx] = values`` in place (device vector; host ints and values): one entry at a
        time, since the array API has no integer-array assignment."""
        for k, v in zip(idx.tolist(), values.tolist()):
            target[k] = v

    def q_column(self, kernel, X, k: int, y=None, ridge: float = 0.0):
        """Column k of Q = diag(y) K diag(y) + ridge·I on the rows X (a new device array (n,));
        y None: Q = K + ridge·I (regression)."""
        y_k = None if y is None else y[k : k + 1]
        return q_columns(kernel, X, X[k : k + 1, :], np.array([k]), ridge, y, y_k)[:, 0]

    def q_block(self, kernel, X, cols: np.ndarray, y=None, ridge: float = 0.0, rows=None):
        """Columns ``Q[:, cols]`` of the rows X (host int ``cols``; a new device array (n, k));
        ``rows``: X centred once (:class:`gpath.kernels.CenteredRows`), or None."""
        idx = to_device(cols, self.xp, self.device)
        y_cols = None if y is None else self.xp.take(y, idx)
        with all_host_blas_threads():  # (one library call computes the whole block here)
            return q_columns(kernel, X, self.xp.take(X, idx, axis=0), cols, ridge, y, y_cols, rows)

    def twin_block(self, kernel, X, cols: np.ndarray, y, ridge: float):
        """:meth:`q_block` where the rows 2i and 2i + 1 of X are one point x_i (ε-SVR's doubled
        rows, :func:`gpath.svr.doubled`): each kernel value once, for the points of the row
        pairs against the points of ``cols``, then signed by the labels of its rows and
        columns, and the ridge on each column's own row. Its entries are q_block's, from the
        same kernel values (``(K + offset)·y_r y_c + ridge·[r = c]``), at a quarter of the
        kernel evaluations where ``cols`` holds both rows of each point (an update's new
        points), half where it holds one.

        Parameters
        ----------
        X : device array of shape (2N, d)
        cols : host int array of shape (k,)
        y : device array of shape (2N,), ±1

        Returns
        -------
        device array of shape (2N, k)
        """
        xp = self.xp
        points, inverse = self._twin_points(cols)
        K = self.q_block(kernel, X[::2, :], points)  # (N, |points|): K + offset
        K = xp.take(K, to_device(np.arange(X.shape[0]) // 2, xp, self.device), axis=0)
        block = xp.take(K, to_device(inverse, xp, self.device), axis=1)
        block *= y[:, None]
        block *= xp.take(y, to_device(cols, xp, self.device))[None, :]
        return with_ridge(block, cols, ridge)

    @staticmethod
    def _twin_points(cols: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The points of the doubled rows ``cols`` (each once, increasing) and each column's
        place among them (``np.unique(cols // 2, return_inverse=True)``, compiled: np.unique
        cost more than a one-point update's kernel values)."""
        return _twin_points(np.ascontiguousarray(cols, dtype=np.int64))

    def q_matvecs(self, kernel, X, cols: np.ndarray, coefs, y=None, ridge: float = 0.0, absolute=False,
                  rows=None):
        """``Σ_j Q[:, j] c_j`` over the points ``cols`` of the rows X (host ints) for each host
        vector c of ``coefs`` (or ``Σ_j |Q[:, j]| c_j`` where ``absolute``, a bool or one per
        vector): a list of device vectors (n,), from fresh kernel blocks of ``_MATVEC_COLUMNS``
        columns (the columns of points at a bound or moving along a path, which no cache
        holds); ``rows``: X centred once, or None. A part where c is 0 adds nothing."""
        xp = self.xp
        flags = [bool(absolute)] * len(coefs) if np.ndim(absolute) == 0 else list(absolute)
        outs = [xp.zeros(X.shape[0], dtype=xp.float64, device=self.device) for _ in coefs]
        width = _block_columns(X.shape[0]) if is_numpy(xp) else _MATVEC_COLUMNS
        for start in range(0, cols.size, width):
            part = slice(start, start + width)
            block = self.q_block(kernel, X, cols[part], y, ridge, rows)
            magnitude = None
            for i, (c, flag) in enumerate(zip(coefs, flags)):
                if np.any(c[part]):
                    if flag and magnitude is None:
                        magnitude = xp.abs(block)
                    outs[i] = outs[i] + (magnitude if flag else block) @ to_device(np.ascontiguousarray(c[part]),
                                                                                   xp, self.device)
        return outs

    def bias_interval(self, b, y, yf, lo, hi):
        """The bounds on the bias that keep every point of O, I and A in its set, with the
        index attaining each (MID section 3.3, eq. 12): ``(lo, i_lo), (hi, i_hi)``, -1 where
        no point bounds. ``b + y_i (1 − y_i f_i)`` is the bias at which point i would sit on
        the margin; a point held above its level (O) bounds b from below if y_i = +1, one held
        below (I, A) if y_i = −1."""
        xp = self.xp
        inf = float("inf")
        t = b + y * (1.0 - yf)
        above, below = lo == 1.0, hi == 1.0
        lower = (above & (y > 0)) | (below & (y < 0))
        upper = (above & (y < 0)) | (below & (y > 0))
        lo_vals = xp.where(lower, t, -inf)
        hi_vals = xp.where(upper, t, inf)
        i_lo = xp.reshape(xp.argmax(lo_vals), (1,))
        i_hi = xp.reshape(xp.argmin(hi_vals), (1,))
        picked = to_host(xp.concat([xp.take(lo_vals, i_lo), xp.take(hi_vals, i_hi),
                                    xp.astype(i_lo, t.dtype), xp.astype(i_hi, t.dtype)]))
        b_lo, b_hi = float(picked[0]), float(picked[1])
        return (b_lo, int(picked[2]) if b_lo > -inf else -1), (b_hi, int(picked[3]) if b_hi < inf else -1)

    def absolute_rows_dot(self, block, rows: np.ndarray, coef: np.ndarray):
        """``Σ_t coef_t |block[rows_t, :]|`` (device, (k,)) for the device ``block`` (n, k) and
        host ``rows`` and ``coef``."""
        return to_device(coef, self.xp, self.device) @ self.xp.abs(self.rows(block, rows))

    def appended_columns(self, kernel, X, y, y_add, alpha: np.ndarray, b: float, ridge: float, shift_add):
        """The labels with ``y_add`` appended, the new points' block ``QA`` = :meth:`q_block`
        of the rows X (n + m, with the m new rows last) at its last m columns, and their margins
        (:meth:`added_margins`) in one call where the engine has one for them; else None (the
        caller takes the three steps)."""

    def added_margins(self, alpha: np.ndarray, QA, b: float, y_add, shift_add):
        """The margins ``y_A f(x_A) = Q[:n, A]ᵀ α + y_A b`` (plus ``shift_add`` unless None) of
        points appended with α = 0 (device, (m,)), from their block ``QA`` (device, (n + m, m))
        and the host α of the n rows before them."""
        n = alpha.shape[0]
        yf = to_device(alpha, self.xp, self.device) @ QA[:n, :] + b * y_add
        return yf if shift_add is None else yf + shift_add

    def stationarity(self, yf, lo, hi, members: np.ndarray, shift, scale: float) -> float:
        """The largest stationarity violation of the maintained margins: a point of M off
        y f = 1, one of O below its level, of I or A above it, relative to ``scale`` plus each
        row's own |shift| where there is a shift (device vectors of shape (n,); ``members``:
        host ints)."""
        xp = self.xp
        off = xp.maximum(xp.maximum(lo - yf, yf - hi), 0.0)
        on = xp.abs(yf - 1.0)
        divisor = scale
        if shift is not None:
            off, on, divisor = off / (scale + xp.abs(shift)), on / (scale + xp.abs(shift)), 1.0
        parts = [xp.max(off)] if yf.shape[0] else []
        if members.size:
            parts.append(xp.max(xp.take(on, to_device(members, xp, self.device))))
        values = scalars(xp, *parts)
        if any(math.isnan(v) for v in values):
            return math.inf  # a NaN margin satisfies no condition
        return max(values, default=0.0) / divisor

    # ------------------------------------------------------------------ the passes
    def step(self, z, lo, hi, cache, slots, phi, a, v, c, u, limit, unit=1.0):
        """The ratio test over the points and the move of their margins.

        Parameters
        ----------
        z, lo, hi : device arrays of shape (n,)
            Margins and the levels below and above each (±inf where none, and for the active
            points). ``z`` is moved in place by ``min(t, limit) · ψ``.
        cache : QColumnCache
        slots : host int array of shape (m,)
            Cache slots of the active points' columns.
        phi : host array of shape (m,)
            Their rates.
        a, c : float
        v, u : device arrays of shape (n,) or None
        limit : float
            How far the segment may go (from the host part of the ratio test).
        unit : float
            The unit of the margins (1 for y f; the targets' for the robust regression's f):
            the least size of the rates the round-off threshold is relative to.

        Returns
        -------
        t : float
            The first crossing (``inf`` if none; slack already below zero counts as 0); rates
            below ``EPS · max(max |ψ|, unit)`` are round-off and never cross.
        k : int
            The point that crosses first (the smallest index among ties; -1 if none).
        upward : bool
            True if it crosses ``hi``.
        """
        xp = self.xp
        if z.shape[0] == 0:
            return math.inf, -1, True
        psi = self._psi(cache, slots, phi, a, v, c, u)
        tiny = EPS * xp.maximum(xp.max(xp.abs(psi)), unit)
        up, down = psi > tiny, psi < -tiny
        inf = xp.asarray(math.inf, dtype=z.dtype, device=self.device)
        t_up = xp.where(up, xp.maximum(hi - z, 0.0) / xp.where(up, psi, 1.0), inf)
        t_down = xp.where(down, xp.maximum(z - lo, 0.0) / xp.where(down, -psi, 1.0), inf)
        t = xp.minimum(t_up, t_down)
        k = xp.reshape(xp.argmin(t), (1,))
        picked = xp.concat([xp.take(t, k), xp.astype(k, t.dtype), xp.astype(xp.take(up, k), t.dtype)])
        t_k, k_f, up_f = (float(x) for x in to_host(picked))
        move = min(t_k, float(limit))
        if move > 0.0:
            z += move * psi
        if t_k == math.inf:
            return math.inf, -1, True
        return t_k, int(k_f), bool(up_f)

    def margins(self, z, lo, hi, cache, slots, coef, a, v, c, u):
        """``z[:] = a·v + Q[:, slots] coef + c·u`` and the largest violation of lo ≤ z ≤ hi.

        Returns
        -------
        k : int
            The most violating point (the smallest index among ties).
        violation : float
            ``max(lo_k − z_k, z_k − hi_k, 0)``.
        """
        xp = self.xp
        z[...] = self._psi(cache, slots, coef, a, v, c, u)
        viol = xp.maximum(xp.maximum(lo - z, z - hi), 0.0)
        k = xp.reshape(xp.argmax(viol), (1,))
        picked = xp.concat([xp.take(viol, k), xp.astype(k, viol.dtype)])
        v_k, k_f = (float(x) for x in to_host(picked))
        return int(k_f), v_k

    def violators(self, z, lo, hi, threshold: float, count: int) -> np.ndarray:
        """The (at most) ``count`` points whose violation ``max(lo − z, z − hi)`` exceeds
        ``threshold`` most, most violating first (host int array)."""
        xp = self.xp
        viol = xp.maximum(xp.maximum(lo - z, z - hi), 0.0)
        order = xp.argsort(viol, descending=True, stable=True)[: min(count, viol.shape[0])]
        values, order = to_host(xp.take(viol, order)), to_host(order)
        return order[values > threshold].astype(np.int64)


class NumbaEngine(Engine):
    """Each pass of :class:`Engine` as one compiled loop over n (NumPy arrays only)."""

    name = "numba"

    def __init__(self, xp, device):
        super().__init__(xp, device)
        self._buffers = {}

    def _work(self, n: int, cache):
        """Two reusable host buffers: ψ (n) and the product in buffer order (cache rows)."""
        psi, prod = self._buffers.get("psi"), self._buffers.get("prod")
        if psi is None or psi.shape[0] != n or prod.shape[0] != cache.data.shape[1]:
            psi, prod = np.empty(n), np.empty(cache.data.shape[1])
            self._buffers = {"psi": psi, "prod": prod}
        return psi, prod

    def gather(self, values, idx) -> np.ndarray:
        return values[idx]

    def rows(self, block, idx: np.ndarray):
        # Indexing, not np.take: np.take along the rows of a Fortran-ordered block (a kernel
        # block's layout) copies the whole block first, 10× the gather at 60 × 1,260.
        return block[idx]

    def scatter(self, target, idx: np.ndarray, values: np.ndarray) -> None:
        target[idx] = values

    def q_column(self, kernel, X, k: int, y=None, ridge: float = 0.0):
        out = np.empty(X.shape[0])
        _q_column(X, k, _KINDS[kernel.kind], kernel.gamma, float(kernel.degree), kernel.coef0, kernel.offset,
                  _vec(y), ridge, out)
        return out

    def twin_block(self, kernel, X, cols: np.ndarray, y, ridge: float):
        if cols.size <= _FEW_COLUMNS:
            # An update's one point (its two rows), or one removed row: one compiled pass.
            out = np.empty((X.shape[0], cols.size), order="F")
            _twin_columns(X, np.ascontiguousarray(cols, dtype=np.int64), _KINDS[kernel.kind], kernel.gamma,
                          float(kernel.degree), kernel.coef0, kernel.offset, y, ridge, out)
            return out
        # The points' rows made contiguous (a strided view would compile the kernel code anew
        # for another array layout), the block expanded in one compiled pass.
        points, inverse = self._twin_points(cols)
        K = self.q_block(kernel, np.ascontiguousarray(X[::2, :]), points)
        out = np.empty((X.shape[0], cols.size), order="F")
        _twin_expand(np.asfortranarray(K), inverse, y, np.ascontiguousarray(cols, dtype=np.int64), ridge, out)
        return out

    def bias_interval(self, b, y, yf, lo, hi):
        b_lo, i_lo, b_hi, i_hi = _bias_interval(float(b), y, yf, lo, hi)
        return (b_lo, int(i_lo)), (b_hi, int(i_hi))

    def q_matvecs(self, kernel, X, cols: np.ndarray, coefs, y=None, ridge: float = 0.0, absolute=False,
                  rows=None):
        # Each thread computes its points' part of a block of columns and adds its sums at
        # once: many features by the block's matrix product, few by the sums over the features.
        # The generic path computes the block, then one single-threaded product per vector over
        # it, with the kernel function on one core (a fit's bound columns: at Adult n = 30,000,
        # 0.27 s for the KKT scale's product alone; on 16 cores the ε-SVR start at
        # make_friedman1 n = 10,000 took what it takes on 2). Blocks of _block_columns(n) columns.
        # (Many features and few columns: centring X would cost more than the product.)
        n = X.shape[0]
        few = X.shape[1] <= _BLAS_FEATURES
        if (not coefs or cols.size == 0 or (few and n * cols.size < _FUSED_ENTRIES)
                or (not few and rows is None and cols.size < _PRODUCT_COLUMNS)):
            return super().q_matvecs(kernel, X, cols, coefs, y, ridge, absolute, rows)
        if few:
            XT = np.ascontiguousarray(X.T)
        else:
            rows = rows if rows is not None or kernel.kind != "rbf" else CenteredRows(X)
        flags = np.full(len(coefs), bool(absolute)) if np.ndim(absolute) == 0 else np.array(absolute, dtype=bool)
        C = np.ascontiguousarray(np.stack([np.asarray(c, dtype=np.float64) for c in coefs]).reshape(len(coefs), -1))
        cols = np.ascontiguousarray(cols, dtype=np.int64)
        outs = np.zeros((len(coefs), n))
        width = _block_columns(n)
        buffer = np.empty(min(width, cols.size) * n)
        for start in range(0, cols.size, width):
            part = slice(start, start + width)
            if not C[:, part].any():
                continue
            k = cols[part].size
            block = buffer[: k * n].reshape(k, n)
            sums = (np.ascontiguousarray(C[:, part]), flags, outs)
            min_rows = max(_BLOCK_POINTS, ENTRIES_PER_THREAD // k)
            if few:
                in_row_blocks(_direct_matvecs, n, block, XT, kernel, _vec(y), ridge, cols[part], *sums,
                              min_rows=min_rows)
                continue
            factors = self._product_factors(kernel, X, cols[part], rows)
            if factors is None:
                return super().q_matvecs(kernel, X, cols, coefs, y, ridge, absolute, rows)
            blas_in_row_blocks(_product_matvecs, n, block, *factors, kernel, _vec(y), ridge, cols[part], *sums,
                               min_rows=min_rows)
        return list(outs)

    def q_block(self, kernel, X, cols: np.ndarray, y=None, ridge: float = 0.0, rows=None):
        # Many features: the matrix product's (see _PRODUCT_COLUMNS), each thread's points
        # finished in cache (the generic path's temporaries took twelve passes); else compiled.
        d = X.shape[1]
        if d > _BLAS_FEATURES and (rows is not None or cols.size >= _PRODUCT_COLUMNS):
            factors = self._product_factors(kernel, X, cols, rows)
            if factors is None:
                return super().q_block(kernel, X, cols, y, ridge, rows)
            cols = np.ascontiguousarray(cols, dtype=np.int64)
            block = np.empty((cols.size, X.shape[0]))  # C order (k, n): its rows are Q's columns
            blas_in_row_blocks(_product_columns, X.shape[0], block, *factors, kernel, _vec(y), ridge, cols,
                               min_rows=max(_BLOCK_POINTS, ENTRIES_PER_THREAD // max(cols.size, 1)))
            return block.T
        out = np.empty((X.shape[0], cols.size), order="F")
        if d > _BLAS_FEATURES or cols.size <= _FEW_COLUMNS:
            # A few columns: _feature_block's transposed copy of X would cost more (an update's
            # one point: 8 µs as a block, 5 µs as a column, at n = 600, d = 7).
            kind, y_vec = _KINDS[kernel.kind], _vec(y)
            for c, k in enumerate(cols.tolist()):
                _q_column(X, k, kind, kernel.gamma, float(kernel.degree), kernel.coef0, kernel.offset, y_vec, ridge,
                          out[:, c])
            return out
        # The sums over the few features compiled, then the kernel's map over the whole block
        # (the exponential of gpath._exp: NumPy's, or compiled passes where NumPy's is scalar)
        # and the entries finished, as the product block's.
        cols = np.ascontiguousarray(cols, dtype=np.int64)
        rbf = kernel.kind == "rbf"
        block = out.T  # C order (k, n): its rows are Q's columns
        # Columns split between the cores where each has some 2¹⁷ entries to sum (a fit's
        # free columns; not an update's few).
        in_row_blocks(_feature_columns, cols.size, block, np.ascontiguousarray(X.T), cols, rbf,
                      -kernel.gamma if rbf else 1.0, min_rows=max(1, ENTRIES_PER_THREAD // max(X.shape[0], 1)))
        if rbf:
            exp_rows(block, 0, X.shape[0])
        elif kernel.kind == "poly":
            _polynomial(block, 0, X.shape[0], kernel.gamma, float(kernel.degree), kernel.coef0)
        _finish_block(block, 0, X.shape[0], kernel.offset, _vec(y), ridge, cols)
        return out

    @staticmethod
    def _product_factors(kernel, X, cols: np.ndarray, rows):
        """The factors of K(X[cols], X)'s matrix product, ``(Z, W, z_norms, w_norms)`` with
        the product Z Wᵀ (the RBF kernel: the centred rows, whose squared norms give the
        distances), or None where the generic path must decide (the RBF expansion's round-off
        guard of :func:`gpath.kernels._squared_distances`)."""
        if kernel.kind != "rbf":
            return X[cols], X, _NO_NORMS, _NO_NORMS
        rows = rows if rows is not None else CenteredRows(X)
        Z = X[cols] - rows.center
        z_norms = np.einsum("ij,ij->i", Z, Z)
        if kernel.gamma * (rows.max_norm + float(z_norms.max(initial=0.0))) > EXPANSION_LIMIT:
            return None
        return Z, rows.centered, z_norms, rows.norms

    def violators(self, z, lo, hi, threshold: float, count: int) -> np.ndarray:
        idx = np.empty(z.shape[0], dtype=np.int64)
        viol = np.empty(z.shape[0])
        found = _violating(z, lo, hi, threshold, idx, viol)
        idx, viol = idx[:found], viol[:found]
        if found > count:
            keep = np.argpartition(-viol, count - 1)[:count]
            idx, viol = idx[keep], viol[keep]
        return idx[np.argsort(-viol, kind="stable")]

    def absolute_rows_dot(self, block, rows: np.ndarray, coef: np.ndarray):
        # Compiled, no BLAS (see added_margins).
        return _absolute_rows_dot(block, np.ascontiguousarray(rows, dtype=np.int64),
                                  np.ascontiguousarray(coef, dtype=np.float64))

    def added_margins(self, alpha: np.ndarray, QA, b: float, y_add, shift_add):
        # A compiled sum, not a BLAS product: an update that moves nothing calls no BLAS,
        # and needs no limit on its threads (gpath.linalg.single_threaded_host_blas).
        return _added_margins(alpha, QA, float(b), y_add, _vec(shift_add))

    def appended_columns(self, kernel, X, y, y_add, alpha: np.ndarray, b: float, ridge: float, shift_add):
        # Where q_block computes the new points' columns one at a time (_q_column: a stream's
        # point or two), the three steps in one compiled call, the same arithmetic: a stream's
        # update paid some 15 µs of Python steps around a few µs of kernel values.
        m = y_add.shape[0]
        if (not 0 < m <= _FEW_COLUMNS or kernel.kind not in _KINDS or kernel.function is not None
                or not all(isinstance(a, np.ndarray) and a.dtype == np.float64 for a in (X, y, y_add, alpha))
                or (shift_add is not None and shift_add.dtype != np.float64)):
            return None
        return _appended_columns(X, y, y_add, alpha, float(b), _KINDS[kernel.kind], kernel.gamma,
                                 float(kernel.degree), kernel.coef0, kernel.offset, float(ridge), _vec(shift_add))

    def stationarity(self, yf, lo, hi, members: np.ndarray, shift, scale: float) -> float:
        return _stationarity(yf, lo, hi, np.ascontiguousarray(members, dtype=np.int64),
                             _vec(shift), float(scale))

    def step(self, z, lo, hi, cache, slots, phi, a, v, c, u, limit, unit=1.0):
        if z.shape[0] == 0:
            return math.inf, -1, True
        psi, prod = self._work(z.shape[0], cache)
        if _threaded(slots, cache):
            big = combine_in_threads(cache.data, cache.top, _rows(cache), slots, phi, float(a), _vec(v), float(c),
                                     _vec(u), prod, psi)
            return _ratio(z, lo, hi, psi, big, float(limit), float(unit))
        return _step(z, lo, hi, cache.data, cache.top, _rows(cache), slots, phi, float(a), _vec(v), float(c),
                     _vec(u), float(limit), prod, psi, float(unit))

    def margins(self, z, lo, hi, cache, slots, coef, a, v, c, u):
        _, prod = self._work(z.shape[0], cache)
        slots, coef = np.ascontiguousarray(slots), np.ascontiguousarray(coef, dtype=np.float64)
        if _threaded(slots, cache):
            combine_in_threads(cache.data, cache.top, _rows(cache), slots, coef, float(a), _vec(v), float(c), _vec(u),
                               prod, z)
            return _worst(z, lo, hi)
        return _margins(z, lo, hi, cache.data, cache.top, _rows(cache), slots, coef, float(a), _vec(v), float(c),
                        _vec(u), prod)


class CupyEngine(Engine):
    """:class:`Engine` with its step fused into CuPy kernels (CUDA arrays only).

    ψ = a·v + (coef @ cache)[rows] + c·u is one cuBLAS product and one elementwise kernel; the
    round-off threshold (EPS · max(max |ψ|, unit)) stays on the device; the crossing times are
    one elementwise kernel, their first minimum CuPy's argmin (the smallest index among ties,
    as everywhere); the move reads the step from the device; the only copy to the host is
    (t, k, upward).
    """

    name = "cupy"
    _kernels = None

    @classmethod
    def _compiled(cls):
        if cls._kernels is None:
            import cupy

            cls._kernels = (
                cupy.ElementwiseKernel(
                    "raw float64 prod, raw int64 rows, bool identity, float64 a, float64 v, float64 c, float64 u",
                    "float64 psi",
                    "psi = prod[identity ? i : rows[i]] + a * v + c * u",
                    "gpath_psi",
                ),
                cupy.ElementwiseKernel(
                    "float64 psi, float64 z, float64 lo, float64 hi, raw float64 tiny",
                    "float64 t",
                    "t = psi > tiny[0] ? fmax(hi - z, 0.0) / psi"
                    " : (psi < -tiny[0] ? fmax(z - lo, 0.0) / -psi : CUDART_INF)",
                    "gpath_crossing",
                ),
                cupy.ElementwiseKernel(
                    "float64 psi, raw float64 t, float64 limit",
                    "float64 z",
                    "double step = fmin(t[0], limit); if (step > 0.0) z += step * psi",
                    "gpath_move",
                ),
            )
        return cls._kernels

    def step(self, z, lo, hi, cache, slots, phi, a, v, c, u, limit, unit=1.0):
        import cupy

        if z.shape[0] == 0:
            return math.inf, -1, True
        psi_kernel, crossing, move = self._compiled()
        n = z.shape[0]
        if slots.size:
            coef = np.zeros(int(slots.max()) + 1)
            coef[slots] = phi
            prod = cupy.asarray(coef) @ cache.data[: coef.size, : cache.top]
        else:
            prod = cupy.zeros(cache.top)
        rows = cache._rows if cache._rows is not None else cupy.zeros(1, dtype=cupy.int64)
        zero = cupy.zeros(n) if v is None or u is None else None  # MID and the C path give both
        psi = psi_kernel(prod, rows, cache._rows is None, float(a), zero if v is None else v, float(c),
                         zero if u is None else u)
        tiny = EPS * cupy.maximum(cupy.max(cupy.abs(psi)), float(unit)).reshape(1)
        t = crossing(psi, z, lo, hi, tiny)
        k = cupy.argmin(t)
        t_k = t[k].reshape(1)
        move(psi, t_k, float(limit), z)
        picked = cupy.concatenate([t_k, k.astype(cupy.float64).reshape(1), (psi[k] > 0).astype(cupy.float64).reshape(1)])
        t_k, k_f, up_f = (float(x) for x in to_host(picked))
        if t_k == math.inf:
            return math.inf, -1, True
        return t_k, int(k_f), bool(up_f)


_EMPTY_F = np.zeros(0)
_EMPTY_I = np.zeros(0, dtype=np.int64)


def _vec(x):
    return _EMPTY_F if x is None else x


def _rows(cache):
    """The cache's buffer row of each training row (empty: the identity)."""
    return _EMPTY_I if cache.rows_host is None else cache.rows_host


_KINDS = {"rbf": 0, "linear": 1, "poly": 2}
# A block of more features than _BLAS_FEATURES is one matrix product (BLAS) whenever X's rows
# come centred (a trainer's CenteredRows), from one column on: Adult n = 10,000, d = 107, one
# column 0.12 ms against 0.22 ms compiled (SimpleSVM's closest-pair start 1.4 s against 7.4 s,
# when a block of a few columns was compiled with X transposed anew each time). Without them,
# centring X costs about twenty columns, so the product waits for _PRODUCT_COLUMNS columns and
# a smaller block is computed a column at a time. With few features the exponentials decide
# (the compiled loop's are about twice as fast as NumPy's here): at n = 10⁵, d = 10, 100
# columns the compiled block takes 117 ms against 192 ms.
_BLAS_FEATURES = 32
_PRODUCT_COLUMNS = 32
_FEW_COLUMNS = 2


# Reductions may be reordered (and multiply-adds fused), so that LLVM vectorizes them; no
# assumption about NaN or inf is made (the levels are ±inf).
_FAST = {"reassoc", "contract"}


@njit(cache=True)
def _bias_interval(b, y, yf, lo, hi):
    """Engine.bias_interval in one pass: (lo, i_lo, hi, i_hi), -1 where no point bounds
    (the first index among ties, as argmax/argmin)."""
    best_lo, i_lo, best_hi, i_hi = -math.inf, -1, math.inf, -1
    for i in range(yf.shape[0]):
        t = b + y[i] * (1.0 - yf[i])
        above, below = lo[i] == 1.0, hi[i] == 1.0
        bounds_below = (above and y[i] > 0.0) or (below and y[i] < 0.0)
        bounds_above = (above and y[i] < 0.0) or (below and y[i] > 0.0)
        if bounds_below and t > best_lo:
            best_lo, i_lo = t, i
        elif bounds_above and t < best_hi:
            best_hi, i_hi = t, i
    return best_lo, i_lo, best_hi, i_hi


@njit(cache=True)
def _stationarity(yf, lo, hi, members, shift, scale):
    """Engine.stationarity in one pass over n and one over M (``shift`` empty: none)."""
    worst = 0.0
    shifted = shift.shape[0] > 0
    for i in range(yf.shape[0]):
        below, above = lo[i] - yf[i], yf[i] - hi[i]
        v = math.nan if math.isnan(below) or math.isnan(above) else max(below, above)  # inf − inf too
        if shifted:
            v /= scale + abs(shift[i])
        if not v <= worst:  # larger, or NaN: a NaN margin satisfies no condition
            worst = math.inf if math.isnan(v) else v
    for k in members:
        v = abs(yf[k] - 1.0)
        if shifted:
            v /= scale + abs(shift[k])
        if not v <= worst:
            worst = math.inf if math.isnan(v) else v
    return worst if shifted else worst / scale


# A product block is split between the threads by the points of X, at least this many each.
_BLOCK_POINTS = 64


# The block passes below run over the columns lo:hi of a C-ordered k × n block (one row per
# column of Q, the points of X along it); each row's range is contiguous, so that the loops
# vectorize (a k × w view of the block would not tell Numba so).
@njit(nogil=True, cache=True)
def _rbf_exponent(block, lo, hi, z_norms, x_norms, gamma):  # pragma: no cover - compiled
    """⟨z_j − c, x_i − c⟩ -> −γ max(‖z_j − c‖² + ‖x_i − c‖² − 2⟨z_j − c, x_i − c⟩, 0) in place."""
    x_norms = x_norms[lo:hi]
    for j in range(block.shape[0]):
        row = block[j, lo:hi]
        for i in range(row.shape[0]):
            row[i] = -gamma * max(z_norms[j] + x_norms[i] - 2.0 * row[i], 0.0)


@njit(nogil=True, cache=True)
def _polynomial(block, lo, hi, gamma, degree, coef0):  # pragma: no cover - compiled
    """⟨z_j, x_i⟩ -> (γ⟨z_j, x_i⟩ + coef0)^degree in place."""
    for j in range(block.shape[0]):
        row = block[j, lo:hi]
        for i in range(row.shape[0]):
            row[i] = (gamma * row[i] + coef0) ** degree


_NO_NORMS = np.zeros(0)


def _product_columns(lo, hi, block, Z, W, z_norms, w_norms, kernel, y, ridge, cols):
    """Columns ``lo:hi`` of a product block (the points ``lo:hi`` of X; one thread's share:
    :meth:`NumbaEngine.q_block`) finished while in cache: the product of Z with W's rows
    ``lo:hi`` (BLAS), the kernel function (compiled; the exponential of
    :func:`gpath._exp.exp_rows`), then Q's entries. Split by the points, each thread reads its
    own part of W once, where a split by the block's rows had every thread read all of W (at
    n = 30,000 a block of 69 bound columns: 26 MB of W for each thread)."""
    part = block[:, lo:hi]
    np.matmul(Z, W[lo:hi].T, out=part)
    if kernel.kind == "rbf":
        _rbf_exponent(block, lo, hi, z_norms, w_norms, kernel.gamma)
        exp_rows(block, lo, hi)
    elif kernel.kind == "poly":
        _polynomial(block, lo, hi, kernel.gamma, float(kernel.degree), kernel.coef0)
    _finish_block(block, lo, hi, kernel.offset, y, ridge, cols)


def _product_matvecs(lo, hi, block, Z, W, z_norms, w_norms, kernel, y, ridge, cols, C, absolute, outs):
    """Columns ``lo:hi`` of a product block (:func:`_product_columns`), then their share of
    :meth:`NumbaEngine.q_matvecs`' sums, while in cache."""
    _product_columns(lo, hi, block, Z, W, z_norms, w_norms, kernel, y, ridge, cols)
    _add_matvecs(block, lo, hi, C, absolute, outs)


def _direct_matvecs(lo, hi, block, XT, kernel, y, ridge, cols, C, absolute, outs):
    """:func:`_product_matvecs` for few features: the block's entries for the points
    ``lo:hi`` from their sums over the features (:func:`_feature_block`), the kernel function
    and Q's entries, then those points' share of the sums."""
    rbf = kernel.kind == "rbf"
    _feature_block(lo, hi, block, XT, cols, rbf, -kernel.gamma if rbf else 1.0)
    if rbf:
        exp_rows(block, lo, hi)
    elif kernel.kind == "poly":
        _polynomial(block, lo, hi, kernel.gamma, float(kernel.degree), kernel.coef0)
    _finish_block(block, lo, hi, kernel.offset, y, ridge, cols)
    _add_matvecs(block, lo, hi, C, absolute, outs)


def _feature_columns(start, stop, block, XT, cols, squared_distances, scale):
    """:func:`_feature_block` for the columns ``start:stop`` of the block, over every point."""
    _feature_block(0, XT.shape[1], block[start:stop], XT, cols[start:stop], squared_distances, scale)


# Few features: from this many kernel values of a q_matvecs call (n × columns) on, its
# threads each sum their points' share; fewer (a few milliseconds of work on one core) keep
# the generic blocks, whose results stay bit for bit as they were.
_FUSED_ENTRIES = 2**20
# Points of a chunk of _feature_block: its features' part of Xᵀ (d × 512 values) and its sums
# stay in cache while it runs over the block's columns.
_FEATURE_CHUNK = 512


@njit(nogil=True, cache=True, fastmath=_FAST)
def _feature_block(lo, hi, block, XT, cols, squared_distances, scale):  # pragma: no cover - compiled
    """``block[c, lo:hi]`` = ``scale`` times ‖x_i − x_k‖² (RBF; from the differences, no
    cancellation however far the data sit from the origin) or ⟨x_i, x_k⟩ for the points i in
    ``lo:hi`` and k = ``cols[c]``, by chunks of points. From Xᵀ (d, n), so that a column's sums
    over the few features run along its points (vectorized), not along each short row of X."""
    d = XT.shape[0]
    acc = np.empty(_FEATURE_CHUNK)
    for a in range(lo, hi, _FEATURE_CHUNK):
        w = min(_FEATURE_CHUNK, hi - a)
        for c in range(cols.shape[0]):
            k = cols[c]
            acc[:w] = 0.0
            for j in range(d):
                feature, x_kj = XT[j, a : a + w], XT[j, k]
                if squared_distances:
                    for i in range(w):
                        t = feature[i] - x_kj
                        acc[i] += t * t
                else:
                    for i in range(w):
                        acc[i] += feature[i] * x_kj
            row = block[c, a : a + w]
            for i in range(w):
                row[i] = scale * acc[i]


@njit(nogil=True, cache=True)
def _add_matvecs(block, lo, hi, C, absolute, outs):  # pragma: no cover - compiled
    """``outs[q, lo:hi] += Σ_j C[q, j] · block[j, lo:hi]`` (of ``|block|`` where ``absolute[q]``):
    the block's sum first, then added, so that the round-off grows with the columns of a block
    and the number of blocks, not with all the columns (some thousands at a bound)."""
    total = np.empty(hi - lo)
    for q in range(C.shape[0]):
        total[:] = 0.0
        for j in range(block.shape[0]):
            c = C[q, j]
            if c == 0.0:
                continue
            row = block[j, lo:hi]
            if absolute[q]:
                for i in range(row.shape[0]):
                    total[i] += c * abs(row[i])
            else:
                for i in range(row.shape[0]):
                    total[i] += c * row[i]
        out = outs[q, lo:hi]
        for i in range(out.shape[0]):
            out[i] += total[i]


@njit(nogil=True, cache=True)
def _finish_block(block, lo, hi, offset, y, ridge, cols):  # pragma: no cover - compiled
    """K(z_j, x_i) -> Q[i, cols[j]] in place for i in lo:hi: (K + offset)·y_i y_j, the ridge at
    the own row (where it is among those columns)."""
    width = hi - lo
    for j in range(block.shape[0]):
        row = block[j, lo:hi]
        if y.shape[0] > 0:
            y_j, y_rows = y[cols[j]], y[lo:hi]
            for i in range(width):
                row[i] = (row[i] + offset) * (y_rows[i] * y_j)
        elif offset != 0.0:
            for i in range(width):
                row[i] += offset
        own = cols[j] - lo
        if 0 <= own < width:
            row[own] += ridge


@njit(cache=True)
def _twin_points(cols):  # pragma: no cover - compiled
    """:meth:`Engine._twin_points`."""
    points = cols // 2
    order = np.argsort(points)
    unique = np.empty(points.shape[0], dtype=np.int64)
    inverse = np.empty(points.shape[0], dtype=np.int64)
    u = -1
    for t in range(order.shape[0]):
        p = points[order[t]]
        if u < 0 or p != unique[u]:
            u += 1
            unique[u] = p
        inverse[order[t]] = u
    return unique[: u + 1].copy(), inverse


@njit(cache=True)
def _absolute_rows_dot(block, rows, coef):  # pragma: no cover - compiled
    """:meth:`NumbaEngine.absolute_rows_dot`."""
    out = np.zeros(block.shape[1])
    for c in range(block.shape[1]):
        acc = 0.0
        for t in range(rows.shape[0]):
            acc += coef[t] * abs(block[rows[t], c])
        out[c] = acc
    return out


@njit(cache=True, fastmath=_FAST)
def _added_margins(alpha, QA, b, y_add, shift_add):  # pragma: no cover - compiled
    """:meth:`NumbaEngine.added_margins` (its sums vectorized: an update of 30 points sums
    1,200 × 60 products)."""
    n, m = alpha.shape[0], QA.shape[1]
    out = np.empty(m)
    for j in range(m):
        acc = 0.0
        for i in range(n):
            acc += alpha[i] * QA[i, j]
        out[j] = acc + b * y_add[j] + (shift_add[j] if shift_add.shape[0] else 0.0)
    return out


@njit(cache=True, fastmath=_FAST)
def _twin_columns(X, cols, kind, gamma, degree, coef0, offset, y, ridge, out):  # pragma: no cover - compiled
    """:meth:`NumbaEngine.twin_block` for a few columns: each point's kernel values against
    the points (rows 2i of X, read in place), then the entries of its rows
    (:func:`_twin_expand`)."""
    n_points = X.shape[0] // 2
    points, inverse = _twin_points(cols)
    K = np.empty((n_points, points.shape[0]))
    for c in range(points.shape[0]):
        x = X[2 * points[c]]
        for i in range(n_points):
            K[i, c] = _kernel_value(X[2 * i], x, kind, gamma, degree, coef0) + offset
    _twin_expand(K, inverse, y, cols, ridge, out)


@njit(cache=True)
def _twin_expand(K, inverse, y, cols, ridge, out):  # pragma: no cover - compiled
    """:meth:`NumbaEngine.twin_block`'s entries: ``out[r, c] = K[r // 2, inverse[c]]·y_r y_cols[c]``,
    plus the ridge at row ``cols[c]``."""
    for c in range(cols.shape[0]):
        k, column = K[:, inverse[c]], out[:, c]
        y_c = y[cols[c]]
        for p in range(k.shape[0]):
            column[2 * p] = k[p] * (y[2 * p] * y_c)
            column[2 * p + 1] = k[p] * (y[2 * p + 1] * y_c)
        column[cols[c]] += ridge


@njit(inline="always", fastmath=_FAST)
def _kernel_value(row, x, kind, gamma, degree, coef0):  # pragma: no cover - compiled
    """K(row, x) for the kernel ``kind`` (rbf 0, linear 1, poly 2); RBF from the differences
    themselves (no cancellation however far the data sit from the origin)."""
    acc = 0.0
    if kind == 0:
        for j in range(x.shape[0]):
            t = row[j] - x[j]
            acc += t * t
        return math.exp(-gamma * acc)
    for j in range(x.shape[0]):
        acc += row[j] * x[j]
    return acc if kind == 1 else (gamma * acc + coef0) ** degree


@njit(cache=True)
def _appended_columns(X, y, y_add, alpha, b, kind, gamma, degree, coef0, offset, ridge,
                      shift_add):  # pragma: no cover - compiled
    """:meth:`NumbaEngine.appended_columns`: y with ``y_add`` appended, the block of the last
    m rows of X (Fortran-ordered, (n + m, m), as :meth:`NumbaEngine.q_block` makes it) by
    :func:`_q_column`, and :func:`_added_margins`."""
    n, m = alpha.shape[0], y_add.shape[0]
    labels = np.empty(n + m)
    labels[:n] = y
    labels[n:] = y_add
    block = np.empty((m, n + m))  # C order (m, n + m): its rows are Q's columns
    for c in range(m):
        _q_column(X, n + c, kind, gamma, degree, coef0, offset, labels, ridge, block[c])
    QA = block.T
    return labels, QA, _added_margins(alpha, QA, b, y_add, shift_add)


@njit(cache=True, fastmath=_FAST)
def _q_column(X, k, kind, gamma, degree, coef0, offset, y, ridge, out):
    """Q[:, k] in one pass over X (:func:`_kernel_value`)."""
    n = X.shape[0]
    x = X[k]
    for i in range(n):
        value = _kernel_value(X[i], x, kind, gamma, degree, coef0) + offset
        if y.shape[0] > 0:
            value *= y[i] * y[k]
        out[i] = value
    out[k] += ridge


def decision_values(kernel, X, Z, coef, b: float) -> np.ndarray | None:
    """``f(x) = Σ_j coef_j K(x, z_j) + b`` for a few rows X against the support vectors Z, each
    row in one compiled pass over Z (:func:`_kernel_value`), for host NumPy arrays and the
    rbf, linear and poly kernels; None elsewhere (another kind, a callable or precomputed
    kernel, another namespace), where the caller takes the kernel block and its product. A
    stream predicts one point a step, and checks the points it screens (:mod:`gpath.river`):
    there the block and its product cost some 40 µs against a few for this pass (126
    support vectors of 9 features).

    Parameters
    ----------
    kernel : Kernel
    X : ndarray of shape (k, d), float64
    Z : ndarray of shape (m, d), float64
    coef : ndarray of shape (m,), float64
    b : float

    Returns
    -------
    ndarray of shape (k,), float64, or None
    """
    kind = _KINDS.get(kernel.kind)
    if (kind is None or kernel.function is not None or not isinstance(X, np.ndarray) or not isinstance(Z, np.ndarray)
            or not isinstance(coef, np.ndarray) or X.dtype != np.float64 or Z.dtype != np.float64):
        return None
    out = np.empty(X.shape[0])
    _decision_values(np.ascontiguousarray(X), np.ascontiguousarray(Z), np.ascontiguousarray(coef, dtype=np.float64),
                     float(b), kind, float(kernel.gamma), float(kernel.degree), float(kernel.coef0),
                     float(kernel.offset), out)
    return out


@njit(cache=True, fastmath=_FAST)
def _decision_values(X, Z, coef, b, kind, gamma, degree, coef0, offset, out):  # pragma: no cover - compiled
    """:func:`decision_values` into ``out``."""
    for i in range(X.shape[0]):
        f = 0.0
        for j in range(Z.shape[0]):
            f += coef[j] * (_kernel_value(Z[j], X[i], kind, gamma, degree, coef0) + offset)
        out[i] = f + b


@njit(nogil=True, cache=True, fastmath=_FAST)
def _product_rows(lo, hi, data, slots, phi, prod):  # pragma: no cover - compiled
    """``prod[lo:hi]`` = Q[:, slots] φ on the buffer rows ``lo:hi``, four columns a pass (so
    that ``prod`` is read and written once per four columns). Each row's sum is the same
    whatever the rows' split.

    Eight columns a pass read the cache faster (at n = 10,000, |M| = 520, 1.19 ms against 1.38
    ms) but sum in another order, and the paths' round-off moved with it: one C path of the
    random search (``tests/fuzz_real_data.py`` seed 111,338, ε-SVR with a polynomial kernel at
    C up to 7.5e5) ended 7.5 times farther from its index sets' exact solution, beyond the
    search's bound. Kept at four, the order every search so far has checked."""
    for i in range(lo, hi):
        prod[i] = 0.0
    m = slots.shape[0]
    j = 0
    while j + 4 <= m:
        c0, c1, c2, c3 = data[slots[j]], data[slots[j + 1]], data[slots[j + 2]], data[slots[j + 3]]
        f0, f1, f2, f3 = phi[j], phi[j + 1], phi[j + 2], phi[j + 3]
        for i in range(lo, hi):
            prod[i] += f0 * c0[i] + f1 * c1[i] + f2 * c2[i] + f3 * c3[i]
        j += 4
    while j < m:
        col, f = data[slots[j]], phi[j]
        for i in range(lo, hi):
            prod[i] += f * col[i]
        j += 1


@njit(cache=True, fastmath=_FAST)
def _finish(prod, rows, a, v, c, u, out):
    """out = a·v + prod (read in buffer order, ``rows``; empty: the identity) + c·u over the n
    points; returns max |out|."""
    n = out.shape[0]
    has_v, has_u, identity = v.shape[0] > 0 and a != 0.0, u.shape[0] > 0 and c != 0.0, rows.shape[0] == 0
    big = 0.0
    for i in range(n):
        p = prod[i] if identity else prod[rows[i]]
        if has_v:
            p += a * v[i]
        if has_u:
            p += c * u[i]
        out[i] = p
        big = max(big, abs(p))
    return big


@njit(cache=True)
def _combine(data, top, rows, slots, phi, a, v, c, u, prod, out):
    """out = a·v + Q[:, slots] φ + c·u (:func:`_product_rows` over the buffer's rows, then
    :func:`_finish`); returns max |out|."""
    _product_rows(0, top, data, slots, phi, prod)
    return _finish(prod, rows, a, v, c, u, out)


# From this many entries (points × margin columns) a breakpoint's product over doubled rows
# reads one entry a point (:func:`twin_combine`); below, the columns are small enough to stay
# in the processor's caches, and the full product is as quick.
TWIN_PRODUCT = 2**17


@njit(cache=True)
def _twin_fill(data, rows, slot, k, y, by_point, odd):  # pragma: no cover - compiled
    """``by_point[slot, i]`` = y_r Q[r, k] of a row r of point i, of the column of row k in
    ``slot`` (``rows``: the buffer row of each training row, empty: the identity): the kernel
    value signed by k's label alone. For k's own point, from its other row, which holds no
    ridge. Marks ``odd`` the other points whose rows disagree (not each other's negation)."""
    identity = rows.shape[0] == 0
    column, entries, own = data[slot], by_point[slot], k // 2
    for i in range(entries.shape[0]):
        r0, r1 = 2 * i, 2 * i + 1
        first = y[r0] * column[r0 if identity else rows[r0]]
        second = y[r1] * column[r1 if identity else rows[r1]]
        if i == own:
            first = second if k == r0 else first
        elif second != first:
            odd[i] = True
        entries[i] = first


@njit(cache=True, fastmath=_FAST)
def _row_product(data, slots, phi, b):  # pragma: no cover - compiled
    """(Q[:, slots] φ) on the buffer row ``b``, four columns a step as :func:`_product_rows`."""
    m, total, j = slots.shape[0], 0.0, 0
    while j + 4 <= m:
        total += (phi[j] * data[slots[j], b] + phi[j + 1] * data[slots[j + 1], b]
                  + phi[j + 2] * data[slots[j + 2], b] + phi[j + 3] * data[slots[j + 3], b])
        j += 4
    while j < m:
        total += phi[j] * data[slots[j], b]
        j += 1
    return total


@njit(cache=True, fastmath=_FAST)
def _twin_finish(data, rows, slots, phi, odd, prod, a, y, c, u, out):  # pragma: no cover - compiled
    """:func:`_finish` of :func:`twin_combine`: out = a·y + y_r·prod (by point) + c·u, an odd
    point's rows from the columns themselves."""
    has_a, has_u, identity = a != 0.0, u.shape[0] > 0 and c != 0.0, rows.shape[0] == 0
    for i in range(out.shape[0] // 2):
        for r in range(2 * i, 2 * i + 2):
            p = _row_product(data, slots, phi, r if identity else rows[r]) if odd[i] else y[r] * prod[i]
            if has_a:
                p += a * y[r]
            if has_u:
                p += c * u[r]
            out[r] = p


@njit(cache=True)
def twin_combine(data, rows, slots, members, phi, a, y, c, u, ridge, twins, prod, out):  # pragma: no cover - compiled
    """:func:`_combine` with v = y where rows 2i and 2i + 1 are one point (ε-SVR's doubled
    rows, labels ``y``; ``members``: the rows whose columns ``slots`` hold), reading one entry
    a point: Q[r, k] = y_r·(y_r Q[r, k]) + ridge·[r = k], and y_r Q[r, k] less the ridge is
    the same for both rows of a point (the kernel value signed by k's label).

    ``twins`` = (by_point, owner, odd): y_r Q[r, k] by point of the column in each slot
    (:func:`_twin_fill`, where ``owner``, the row whose column a slot of ``by_point`` holds, is
    not the slot's member), and the points whose rows are not each other's negation (none
    where the columns come from :func:`_twin_expand`; their rows' sums are read from the
    columns). The full product reads each entry and its twin's: at make_friedman1 n = 10,000
    (|M| = 149), 24 MB a breakpoint in 610–760 µs, here 12 MB in 350–440 µs. Its sums are the
    full product's, bit for bit, but on the margin points' rows (the ridge added last)."""
    by_point, owner, odd = twins
    m, n_points = slots.shape[0], by_point.shape[1]
    for j in range(m):
        if owner[slots[j]] != members[j]:
            _twin_fill(data, rows, slots[j], members[j], y, by_point, odd)
            owner[slots[j]] = members[j]
    _product_rows(0, n_points, by_point, slots, phi, prod)
    _twin_finish(data, rows, slots, phi, odd, prod, a, y, c, u, out)
    for j in range(m):
        k = members[j]
        if not odd[k // 2]:
            out[k] += ridge * phi[j]
    big = 0.0
    for r in range(out.shape[0]):
        big = max(big, abs(out[r]))
    return big


# A breakpoint's product of at least this many cached entries (|M| times the cache's rows) is
# split between the cores. Below, the threads' hand-off (some 100 µs on the 2-core development
# machine) costs what they save: 3,000 rows × 600 columns took 0.24 ms on two, 0.22 ms on one;
# 10,000 × 520, 0.93–1.19 ms against 1.44–1.53 ms.
_THREADED_PRODUCT = 2**22


def threaded_product_size() -> int:
    """The product size from which a compiled loop hands a breakpoint's product to
    :func:`combine_in_threads` (0: never, on one core)."""
    return _THREADED_PRODUCT if n_threads() > 1 else 0


def products_in_threads(entries: int) -> bool:
    """Whether a product of ``entries`` cached entries is worth every core (the cores are
    asked only for such a product: a stream's small update does not pay the system call)."""
    return entries >= _THREADED_PRODUCT and threaded_product_size() > 0


def _threaded(slots, cache) -> bool:
    """Whether a product over the cache's columns ``slots`` is worth every core."""
    return products_in_threads(slots.shape[0] * cache.top)


def combine_in_threads(data, top, rows, slots, phi, a, v, c, u, prod, out) -> float:
    """:func:`_combine` with the product's buffer rows split between the cores
    (:func:`gpath._threads.in_row_blocks`): the same sums, row for row."""
    in_row_blocks(_product_rows, top, data, slots, phi, prod,
                  min_rows=max(64, ENTRIES_PER_THREAD // max(slots.shape[0], 1)))
    return _finish(prod, rows, a, v, c, u, out)


@njit(cache=True)
def _ratio(z, lo, hi, psi, big, limit, unit):
    """The first point of z + t ψ to reach its level (t ≥ 0, ties to the lowest index), with
    ψ's round-off ``EPS·max(big, unit)`` taken as no rate, and z moved by min(t, ``limit``).
    Returns ``(t, point, upward)`` (``(inf, -1, True)`` where none reaches one)."""
    tiny = EPS * max(big, unit)
    best, k, up = math.inf, -1, True
    for i in range(z.shape[0]):
        p = psi[i]
        if p > tiny:
            t = max(hi[i] - z[i], 0.0) / p
        elif p < -tiny:
            t = max(z[i] - lo[i], 0.0) / -p
        else:
            continue
        if t < best:
            best, k, up = t, i, p > 0.0
    move = min(best, limit)
    if move > 0.0:
        for i in range(z.shape[0]):
            z[i] += move * psi[i]
    return best, k, up


@njit(cache=True)
def _step(z, lo, hi, data, top, rows, slots, phi, a, v, c, u, limit, prod, psi, unit):
    big = _combine(data, top, rows, slots, phi, a, v, c, u, prod, psi)
    return _ratio(z, lo, hi, psi, big, limit, unit)


@njit(cache=True)
def _margins(z, lo, hi, data, top, rows, slots, coef, a, v, c, u, prod):
    _combine(data, top, rows, slots, coef, a, v, c, u, prod, z)
    return _worst(z, lo, hi)


@njit(cache=True)
def _worst(z, lo, hi):
    """The point farthest outside lo ≤ z ≤ hi and by how much (0, 0.0 where none is)."""
    worst, k = 0.0, 0
    for i in range(z.shape[0]):
        viol = max(lo[i] - z[i], z[i] - hi[i], 0.0)
        if viol > worst:
            worst, k = viol, i
    return k, worst


@njit(cache=True)
def _violating(z, lo, hi, threshold, idx, viol):
    """The points violating lo ≤ z ≤ hi by more than ``threshold``, into ``idx`` and
    ``viol``; returns how many."""
    found = 0
    for i in range(z.shape[0]):
        v = max(lo[i] - z[i], z[i] - hi[i])
        if v > threshold:
            idx[found], viol[found] = i, v
            found += 1
    return found


def engine_for(xp, device, kernel=None):
    """The engine for arrays of namespace ``xp`` on ``device`` and ``kernel``: compiled for
    NumPy and the kernels it knows (rbf, linear, poly), fused CuPy kernels for CuPy, the
    generic one otherwise."""
    if is_numpy(xp) and (kernel is None or getattr(kernel, "kind", None) in _KINDS):
        return NumbaEngine(xp, device)
    if "cupy" in getattr(xp, "__name__", ""):
        return CupyEngine(xp, device)
    return Engine(xp, device)
