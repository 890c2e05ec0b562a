"""A fast approximate start for the exact trainer: SMO on a float32 kernel matrix.

SimpleSVM (:mod:`gpath._simplesvm`) is exact from any feasible start, and short from a good
one: from the index sets of a solution accurate to LIBSVM's default tolerance it finishes in
two or three iterations. Finding those sets is what costs it from a cold start (one block of
violators enters per iteration, thousands of iterations at n = 10,000). This module finds them
the way the fastest SMO solvers do, with the kernel matrix's rows in memory:

1. The kernel matrix K in float32, by rows (:class:`KernelRows`): BLAS-3 products X Xᵀ by
   blocks of rows (the data centred first for the RBF kernel, whose distances then lose less
   to cancellation), each thread's rows finished in cache by a compiled pass for the kernel
   function and NumPy's SIMD exponential; for a few features one compiled pass from the
   rows. Float32 halves the memory and the time of the product; the start needs no more
   (the finish computes its float64 columns anew). On a GPU the entries are computed there.
   SMO by pairs reads every row; by blocks a row is computed when a working set first holds
   its point (about half of them), in at most a quarter of the available memory, where the
   least recently used rows give way (LIBSVM's kernel cache, by rows).
2. SMO with second-order working-set selection (WSS 2 of Fan, Chen & Lin, JMLR 2005, as in
   LIBSVM) and LIBSVM's shrinking (Chang & Lin, "LIBSVM", ACM TIST 2011, section 5; the kept
   points' block copied out, see :func:`smo`), run to LIBSVM's default stopping tolerance
   1e-3 on the maximal violating pair, or to 30 n pair updates; beyond 8,192 points by
   blocks of 2,048 (ThunderSVM's and oneDAL's decomposition, :func:`_smo_blocks`), each block
   solved by that pair SMO in cache.

The result is only a start: :func:`gpath._simplesvm.simple_svm` balances it, reads the sets
from it and iterates to the exact solution in float64.

3. Fits on overlapping rows of one X (the folds of :func:`gpath.model_selection.cross_validate`,
   and Platt's folds of a pair, :func:`gpath._platt.cv_decision_values`) share their kernel
   values inside :func:`shared_kernel_rows`: SMO's float32 rows and the exact start's float64
   columns are computed once, on all of X's points, and each fit gathers its own rows from
   them (:class:`SharedRows`). A fit takes them only where its X is exactly the rows the
   caller named; the values are the kernel's to round-off either way.
"""

from __future__ import annotations

import contextlib
import contextvars
import math

import numpy as np
from numba import njit

from ._array_api import get_namespace_and_device, is_numpy, scalars, to_device, to_host_into
from ._threads import ENTRIES_PER_THREAD, in_row_blocks
from .linalg import available_memory, blas_in_row_blocks

__all__ = ["KernelRows", "SharedRows", "kernel_matrix", "row_capacity", "shared_kernel_rows", "shared_kernel_rows_of",
           "smo", "smo_start"]

# LIBSVM's default stopping tolerance (the maximal violating pair's gap, units of y f).
SMO_TOL = 1e-3
# The float32 matrix may take at most this share of the available host memory.
_MEMORY_SHARE = 0.25
_FITS_ANYWHERE = 2**24  # bytes: the float32 matrix of 2,048 points
# Pair updates between two shrinking checks (LIBSVM's min(n, 1000)).
_SHRINK_EVERY = 1000
# Problems of more than _BLOCKS_FROM times this many points are solved by blocks of it
# (_smo_blocks). Adult n = 10,000, C = 1 / 10 / 100: SMO 0.16 / 0.30 / 1.0 s by blocks of 2,048,
# 0.29 / 0.52 / 1.6 by 4,096, 0.22 / 0.40 / 1.35 s by pairs over the whole (shrunk) problem.
# Below about 8,000 points the pairs are as fast or faster (Adult n = 7,500: blocks 0.72–1.36× the
# pairs' time, the faster from C = 10; n = 5,000 and Bananas 5,000: 1.01–1.25×).
_BLOCK = 2048
_BLOCKS_FROM = 4
# A block is solved to this share of the whole problem's gap (0.1 against 0.3: faster at C = 10, 100).
_INNER_TOL = 0.1
# No shrinking check inside a block.
_NEVER = 2**62
# Gradients moved per chunk (float64: 16 KB), and the fewest a thread takes.
_MOVE_CHUNK = 2048
_MOVE_ROWS = 1024
# Pair updates before SMO hands over whatever it has: the start needs no more, and SMO's
# iteration count grows with C (about 12 n at Adult n = 10,000, C = 100).
_MAX_ITER_PER_POINT = 30
_TAU = 1e-12  # LIBSVM's floor of a non-positive curvature
_KINDS = {"linear": 0, "rbf": 1, "poly": 2, "sigmoid": 3}
# Up to this many features the matrix is computed from the rows in one compiled pass (Bananas,
# d = 2, n = 5,000: 0.065 s against 0.11 s for the product and its kernel pass).
_DIRECT_FEATURES = 8
# Rows of X Xᵀ finished per block while in cache (512 × 10,000 float32: 20 MB; 128 to 2,048
# rows measured within 10 % at Adult n = 10,000).
_PRODUCT_ROWS = 512
# Entries of one block of rows computed on a device (float64 there: 128 MB) before its copy to the host.
_DEVICE_BLOCK = 2**24


def row_capacity(n: int) -> int:
    """How many rows of the n × n float32 matrix (4 n bytes each) fit in a quarter of the
    available host memory (:func:`gpath.linalg.available_memory`; 1 GiB if that is unknown);
    at most n. A matrix of at most ``_FITS_ANYWHERE`` bytes is taken whole without asking
    (reading the memory's files cost 0.14 ms, a third of a pair's SMO in a one-vs-one fit of
    45 pairs)."""
    if 4.0 * n * n <= _FITS_ANYWHERE:
        return n
    available = available_memory()
    budget = _MEMORY_SHARE * available if available is not None else 2.0**30
    return int(min(n, budget // (4.0 * max(n, 1))))


class KernelRows:
    """The float32 kernel matrix ``K(X, X) + diag · I``, each row computed when first asked
    for, in at most ``capacity`` rows of memory.

    SMO by blocks reads only the rows of the points that enter a working set, about half of
    them (Adult n = 10,000 and 30,000, C = 1 and 100: 50–58 %); the other rows are never
    computed. Rows are stored in the order they are first asked for: point p's row is row
    ``slot[p]`` of :attr:`values`, of which only the rows written take memory (the operating
    system backs pages when first written). Asked for every point at once, the rows are in
    point order. Where every row cannot be held (``capacity`` < n: a problem whose matrix
    exceeds its share of memory), the least recently asked-for rows give way to new ones, and
    are computed again if asked for again (LIBSVM's kernel cache, by rows).

    Each block of rows is computed as :func:`kernel_matrix` describes: on the host a BLAS-3
    product finished in cache (or, for a few features, one compiled pass from the rows); on
    another namespace (CuPy) by the kernel itself on X's device.

    Parameters
    ----------
    X : array of shape (n, d), float64
        NumPy, or any array-API namespace and device (then ``on_device`` is taken).
    kernel : Kernel
        ``kind`` "linear", "rbf", "poly", "sigmoid" (with its ``offset``) or "precomputed" (X the
        rows of :func:`gpath.kernels.with_index`).
    diag : float
        Added to the diagonal (the ridge).
    on_device : bool or None
        Whether the entries are computed by the kernel itself on X's device, in float64, and
        rounded once (True), or by the host's float32 passes (False); None: on the device
        unless X is NumPy.
    capacity : int or None
        Rows held at most (≥ the points of any one request); None: n.

    Attributes
    ----------
    values : ndarray of shape (capacity, n), float32
    n_evaluations : int
        Kernel values computed so far (n per row, each time it is computed).
    """

    def __init__(self, X, kernel, diag: float, on_device: bool | None = None, capacity: int | None = None):
        self.n = X.shape[0]
        self.kernel, self.diag = kernel, np.float32(diag)
        self.on_device = not is_numpy(get_namespace_and_device(X)[0]) if on_device is None else on_device
        self.capacity = self.n if capacity is None else min(int(capacity), self.n)
        self.values = np.empty((self.capacity, self.n), dtype=np.float32)
        self.slot = np.full(self.n, -1, dtype=np.int64)  # the row of each point; -1: not held
        self.owner = np.full(self.capacity, -1, dtype=np.int64)  # the point of each row
        self.used = np.zeros(self.capacity, dtype=np.int64)  # the request that last asked for each row
        self.filled = self.requests = self.n_evaluations = 0
        if self.on_device or kernel.kind == "precomputed":
            self.X = X
            return
        if kernel.kind == "rbf":
            X = X - X.mean(axis=0)  # distances are translation-invariant; centring cuts cancellation
        with np.errstate(over="ignore", invalid="ignore"):
            self.X = X.astype(np.float32)
            self.XT = np.ascontiguousarray(self.X.T)  # (the direct pass reads a feature along the row)
            self.sq = np.einsum("ij,ij->i", self.X, self.X)

    @classmethod
    def of(cls, K: np.ndarray) -> KernelRows:
        """The rows of a computed n × n matrix K, in point order."""
        rows = cls.__new__(cls)
        rows.n = rows.capacity = rows.filled = K.shape[0]
        rows.values, rows.slot, rows.n_evaluations = K, np.arange(K.shape[0]), 0  # (computed elsewhere)
        return rows

    def rows(self, points: np.ndarray) -> np.ndarray:
        """The rows of :attr:`values` that hold ``points``' kernel values (at most
        ``capacity`` distinct points), computing those not held. Raises :class:`NotFinite`
        where an entry is not finite in float32."""
        points = np.asarray(points, dtype=np.int64)
        slots = self.slot[points]
        new = np.unique(points[slots < 0])
        if self.filled < self.n:  # (a matrix of every row needs no bookkeeping)
            self.requests += 1
            self.used[slots[slots >= 0]] = self.requests
        if new.size:
            self._compute(new)
        return self.slot[points]

    def subset(self, index: np.ndarray, capacity: int | None = None, memory: np.ndarray | None = None) -> KernelRows:
        """The rows of the points ``index`` (host ints, rows of this one's X) over the same
        points, each row gathered from this one's row of its point, which is computed once
        for every subset that asks for it (the training rows of cross-validation's folds).
        Its :attr:`n_evaluations` counts the values this one computed for it. Host rows
        only (not ``on_device``). ``memory``: a flat float32 array its rows may take, if
        large enough (a spent subset's: written pages cost a fold's matrix a sixth of the
        time of fresh ones, Adult n = 3,000)."""
        rows = KernelRows.__new__(KernelRows)
        rows.n = index.shape[0]
        rows.kernel, rows.diag, rows.on_device = self.kernel, np.float32(0.0), False  # (the diagonal is the parent's)
        rows.capacity = rows.n if capacity is None else min(int(capacity), rows.n)
        size = rows.capacity * rows.n
        rows.values = (memory[:size].reshape(rows.capacity, rows.n) if memory is not None and memory.size >= size
                       else np.empty((rows.capacity, rows.n), dtype=np.float32))
        rows.slot = np.full(rows.n, -1, dtype=np.int64)
        rows.owner = np.full(rows.capacity, -1, dtype=np.int64)
        rows.used = np.zeros(rows.capacity, dtype=np.int64)
        rows.filled = rows.requests = rows.n_evaluations = 0
        rows.parent, rows.index = self, np.ascontiguousarray(index, dtype=np.int64)
        return rows

    def matrix(self) -> np.ndarray:
        """Every row, in point order (n × n, float32; needs ``capacity`` n)."""
        slots = self.rows(np.arange(self.n))
        return self.values if np.array_equal(slots, np.arange(self.n)) else self.values[slots]

    def _compute(self, new: np.ndarray) -> None:
        """The rows of the points ``new`` (sorted, none held), into free rows, or else into the
        least recently used ones of points not in the current request."""
        free = np.arange(self.filled, min(self.filled + new.size, self.capacity))
        self.filled += free.size
        self.used[free] = self.requests  # (not a victim of this request)
        short = new.size - free.size
        if short:
            idle = np.flatnonzero(self.used < self.requests)
            victims = np.sort(idle[np.argpartition(self.used[idle], short - 1)[:short]])
            self.slot[self.owner[victims]] = -1
            free = np.concatenate([free, victims])
        step = max(1, _DEVICE_BLOCK // max(self.n, 1)) if self.on_device else _PRODUCT_ROWS
        for lo in range(0, new.size, step):
            points, slots = new[lo: lo + step], free[lo: lo + step]
            contiguous = bool(np.all(np.diff(slots) == 1))
            block = self.values[slots[0]: slots[-1] + 1] if contiguous else np.empty((slots.size, self.n), np.float32)
            self.n_evaluations += self._block(points, block)
            block[np.arange(points.size), points] += self.diag
            if not contiguous:
                self.values[slots] = block
            self.slot[points], self.owner[slots], self.used[slots] = slots, points, self.requests

    def _block(self, points: np.ndarray, block: np.ndarray) -> int:
        """Fill ``block`` with the kernel rows of ``points``; returns the kernel values
        computed. Raises :class:`NotFinite` where an entry is not finite."""
        parent = self.__dict__.get("parent")
        if parent is not None:  # (a subset: gathered from the parent's rows, computed there)
            before = parent.n_evaluations
            held = parent.rows(self.index[points])
            in_row_blocks(_gather, points.size, parent.values, held, self.index, block)
            return parent.n_evaluations - before
        kernel = self.kernel
        if self.on_device:
            xp, device = get_namespace_and_device(self.X)
            index = to_device(points, xp, device)
            values = xp.astype(kernel(xp.take(self.X, index, axis=0), self.X), xp.float32)
            if not scalars(xp, xp.all(xp.isfinite(values)))[0]:
                raise NotFinite
            to_host_into(values, block)  # (CuPy: straight into the rows, no host temporary)
        elif kernel.kind == "precomputed":  # the rows' Gram values at their own indices
            index = self.X[:, -1].astype(np.int64)
            # One compiled gather into float32 (a subset of rows, as Platt's folds: no float64 copy).
            if any(in_row_blocks(_gather_pass, points.size, block, self.X[points], index)):
                raise NotFinite
        else:
            bad = blas_in_row_blocks(self._finished_rows, points.size, block, points,
                                     min_rows=max(1, ENTRIES_PER_THREAD // self.n))
            if kernel.offset:
                block += np.float32(kernel.offset)
            if any(bad):
                raise NotFinite
        return points.size * self.n

    def _finished_rows(self, start: int, stop: int, block: np.ndarray, points: np.ndarray) -> bool:
        """Rows ``start:stop`` of :meth:`_block`'s block, one thread's share, finished while in
        cache: the product of the points' rows with every row (BLAS) and the kernel function
        (compiled), or for a few features one compiled pass from the rows; then the RBF
        kernel's exponential (NumPy's SIMD loop). Returns whether an entry is not finite.

        Split by rows, where the exact trainer's float64 blocks are split by the points
        (:func:`gpath._engine._product_columns`): these rows are fresh memory, and threads
        writing parts of the same pages contend in their first-touch page faults (the
        Bananas n = 5,000 matrix on two threads: 35–53 ms split by points, 28–34 ms by rows)."""
        kernel, part, rows = self.kernel, block[start:stop], points[start:stop]
        kind, gamma = _KINDS[kernel.kind], np.float32(kernel.gamma)
        degree, coef0 = int(kernel.degree), np.float32(kernel.coef0)
        with np.errstate(over="ignore", invalid="ignore"):
            if self.X.shape[1] <= _DIRECT_FEATURES:
                bad = _direct_pass(0, rows.size, part, self.X[rows], self.XT, kind, gamma, degree, coef0)
            else:
                np.matmul(self.X[rows], self.X.T, out=part)
                bad = _kernel_pass(0, rows.size, part, self.sq[rows], self.sq, kind, gamma, degree, coef0)
            if kernel.kind == "rbf":
                np.exp(part, out=part)
        return bad


class SharedRows:
    """The kernel values of the points of ``X`` (host, N × d), shared by the fits made one
    after another on rows of it while :func:`shared_kernel_rows` is in effect: a fit on the
    rows ``index`` (set by the caller before the fit) gathers SMO's float32 rows
    (:meth:`subset`, :meth:`KernelRows.subset`) and its exact start's float64 columns
    (:meth:`q_columns`, :meth:`q_sums`) from rows computed here once, on all the points.

    Cross-validation's folds train on overlapping rows (10 folds: each pair of training sets
    shares 8 of 10 parts; Platt's 5 folds, 3 of 5), and their starts ask for mostly the same
    points' rows. The rows of one kernel are kept (another kernel's replace them), in at most
    a quarter of the host memory available when the first are made, half for each precision.
    One fit at a time: a subset's memory is the next one's, and :meth:`q_columns`' block is
    valid until the next call."""

    def __init__(self, X: np.ndarray):
        self.X = X
        self.index = None  # the rows of X the next fit trains on, in its order, or None
        self._budget = None  # bytes for the rows of each precision, fixed when first needed
        self._rows = (None, None)  # (key, float32 KernelRows) of the current kernel
        self._exact = (None, None)  # (key, _ExactRows) of the current kernel
        self._memory = None  # the last subset's rows (flat)
        self._scratch = np.empty(0)  # the last q_columns block
        self._failed = False  # a value not finite in float32 (a point of X the fits may not train on)

    def serves(self, X) -> bool:
        """Whether ``X`` is exactly the rows ``index`` of this one's X, each once (host arrays)."""
        index, mine = self.index, self.X
        return (index is not None and is_numpy(get_namespace_and_device(X)[0])
                and X.shape == (index.shape[0], mine.shape[1]) and np.array_equal(X, mine[index])
                and np.unique(index).size == index.size)  # (a repeated row would take the ridge twice)

    def _share(self) -> float:
        if self._budget is None:
            available = available_memory()
            self._budget = 0.5 * _MEMORY_SHARE * (available if available is not None else 2.0**32)
        return self._budget

    @staticmethod
    def _key(kernel) -> tuple:
        return kernel.kind, float(kernel.gamma), float(kernel.degree), float(kernel.coef0), float(kernel.offset)

    def rows(self, X, kernel, diag: float) -> KernelRows | None:
        """The float32 rows of all the points (``K(X, X) + diag·I``, computed when first asked
        for) for a fit on ``X``, or None unless this one :meth:`serves` X, with a kernel of the
        host's float32 passes."""
        if self._failed or kernel.kind not in _KINDS or not self.serves(X):
            return None
        mine, key = self.X, (*self._key(kernel), float(diag))
        if self._rows[0] != key:
            n = mine.shape[0]
            self._rows = key, KernelRows(mine, kernel, diag, capacity=int(min(n, self._share() // (4.0 * n))))
        return self._rows[1]

    def subset(self, X, kernel, diag: float, capacity: int) -> KernelRows | None:
        """The rows for a fit on ``X`` (:meth:`KernelRows.subset` of :meth:`rows`), or None
        where :meth:`rows` gives None."""
        parent = self.rows(X, kernel, diag)
        if parent is None or parent.capacity < capacity:  # (as many rows as the fit's own)
            return None
        # A subset is spent when its SMO returns: the next one writes into its memory.
        rows = parent.subset(self.index, capacity, self._memory)
        self._memory = rows.values.reshape(-1)
        return rows

    def failed(self) -> None:
        """A row of X is not finite in float32: the fits compute their own rows from now on
        (a row they do not train on may be the one)."""
        self._failed = True
        self._rows = (None, None)

    def _held(self, state, cols: np.ndarray):
        """``(values, held, computed)``: the float64 rows of ``state``'s kernel, the rows of them
        holding the points ``cols`` of ``state`` (computing those not held), and the count of
        kernel values computed; None where they would not fit (:class:`_ExactRows`)."""
        key = self._key(state.kernel)
        if self._exact[0] != key:
            self._exact = key, _ExactRows(self.X, state.kernel, self._share())
        exact = self._exact[1]
        found = exact.rows(state.engine, self.index[cols])
        return None if found is None else (exact.values, *found)

    def q_columns(self, state, cols: np.ndarray):
        """Columns ``Q[:, cols]`` (host, (n, k) float64: ``(K + offset)·y_r y_c + ridge·[r = c]``,
        :func:`gpath.kernels.q_columns`' entries) of the training points ``cols`` of ``state``,
        a host state this one :meth:`serves` (its X the rows ``index``), gathered from float64
        kernel rows of this one's X computed once for every fold (the exact trainer's start
        enters mostly the same support vectors in each); with the count of kernel values
        computed for them. None where those rows would not fit in their share of memory.

        The values are the kernel's on all of X (centred on all of it, for the RBF kernel),
        where a fit of the rows alone computes them on the rows: both are exact to round-off."""
        found = self._held(state, cols)
        if found is None:
            return None
        values, held, computed = found
        index = self.index
        n = index.shape[0]
        if self._scratch.size < cols.size * n:
            self._scratch = np.empty(cols.size * n)
        block = self._scratch[: cols.size * n].reshape(cols.size, n)
        in_row_blocks(_gather, cols.size, values, held, index, block)
        y = state.y_host
        block *= y[None, :]
        block *= y[cols][:, None]
        block[np.arange(cols.size), cols] += state.ridge
        return block.T, computed

    def q_sums(self, state, cols: np.ndarray, coef: np.ndarray):
        """``Σ_j Q[:, j] c_j`` and ``Σ_j |Q[:, j]| c_j`` over the training points ``cols`` of
        ``state`` (host (n,) float64 each; :meth:`q_columns`' Q, whose columns are not made),
        with the count of kernel values computed; None where :meth:`q_columns` gives None."""
        found = self._held(state, cols)
        if found is None:
            return None
        values, held, computed = found
        index, y = self.index, state.y_host
        parts = in_row_blocks(_column_sums, index.shape[0], values, held, index, y[cols] * coef, coef)
        signed = y * np.concatenate([p[0] for p in parts])
        share = np.concatenate([p[1] for p in parts])
        # The ridge on each column's own row: Q_jj = K_jj + offset + ridge.
        own = values[held, index[cols]]
        signed[cols] += state.ridge * coef
        share[cols] += (np.abs(own + state.ridge) - np.abs(own)) * coef
        return signed, share, computed


class _ExactRows:
    """Float64 kernel rows ``K(x_p, X) + offset`` of points p of X, each computed once, in at
    most ``budget`` bytes (:meth:`SharedRows.q_columns`)."""

    def __init__(self, X: np.ndarray, kernel, budget: float):
        n = X.shape[0]
        self.X, self.kernel, self.centered = X, kernel, kernel.centered_rows(X)
        self.values = np.empty((int(min(n, budget // (8.0 * max(n, 1)))), n))
        self.slot = np.full(n, -1, dtype=np.int64)
        self.filled = 0

    def rows(self, engine, points: np.ndarray):
        """The rows of :attr:`values` holding ``points``' values, computing those not held, and
        the count of values computed; None where they would not fit."""
        new = np.unique(points[self.slot[points] < 0])
        if self.filled + new.size > self.values.shape[0]:
            return None
        if new.size:
            block = engine.q_block(self.kernel, self.X, new, None, 0.0, self.centered)  # (n, k)
            self.values[self.filled : self.filled + new.size] = block.T
            self.slot[new] = np.arange(self.filled, self.filled + new.size)
            self.filled += new.size
        return self.slot[points], new.size * self.X.shape[0]


_shared: contextvars.ContextVar[SharedRows | None] = contextvars.ContextVar("gpath_shared_rows", default=None)


def shared_kernel_rows_of(X) -> SharedRows | None:
    """The :func:`shared_kernel_rows` block's rows, where a fit on ``X`` may take them (they
    :meth:`~SharedRows.serves` X), else None."""
    shared = _shared.get()
    return shared if shared is not None and not shared._failed and shared.serves(X) else None


@contextlib.contextmanager
def shared_kernel_rows(X, feature_rows: bool = True):
    """Within the block, fits on rows of the host array ``X`` (N × d, float64) share their
    kernel values: SMO's float32 rows and the exact start's float64 columns
    (:class:`SharedRows`, yielded: set its ``index`` to the rows of X each fit trains on,
    before the fit). Yields None, and shares nothing, where X is not a NumPy array or not
    ``feature_rows`` (a precomputed kernel's Gram rows)."""
    if not feature_rows or not is_numpy(get_namespace_and_device(X)[0]):
        yield None
        return
    store = SharedRows(X)
    token = _shared.set(store)
    try:
        yield store
    finally:
        _shared.reset(token)


class NotFinite(ArithmeticError):
    """A kernel value is not finite in float32 (features too large for float32 products)."""


def kernel_matrix(X, kernel, diag: float, on_device: bool = False) -> np.ndarray | None:
    """``K(X, X) + diag · I`` as a float32 n × n host matrix, every row in point order, or None
    where float32 cannot hold it (a non-finite entry: features too large for float32 products).

    Parameters
    ----------
    X : array of shape (n, d), float64
        NumPy for the host's passes; any array-API namespace and device with ``on_device``.
    kernel : Kernel
        ``kind`` "linear", "rbf", "poly", "sigmoid" (with its ``offset``) or "precomputed" (X the rows of
        :func:`gpath.kernels.with_index`).
    diag : float
        Added to the diagonal (the ridge).
    on_device : bool
        Compute each entry in float64 by :class:`gpath.kernels.Kernel` on X's device (CuPy: one
        cuBLAS product and one elementwise pass per block of at most 2²⁴ entries), rounded once
        and copied to the host block by block; else by the host's float32 passes.

    Returns
    -------
    K : ndarray of shape (n, n), float32 (host), or None

    Notes
    -----
    RBF distances come from the centred rows (they lose less to cancellation). With many
    features each block of ``_PRODUCT_ROWS`` rows is split between the threads, each thread's
    rows one BLAS product X Xᵀ (on that thread: :func:`gpath.linalg.blas_in_row_blocks`)
    finished in cache by a compiled pass for the kernel function and NumPy's SIMD
    exponential. The whole product and then two passes over it moved the matrix through
    memory three times; the product on BLAS's own threads left them spinning over the passes
    (Adult n = 10,000, d = 107: 0.20–0.21 s, against 0.24–0.39 s that way). With a few
    features one compiled pass from the rows. Float32 halves the memory and the time of the
    product.
    """
    try:
        return KernelRows(X, kernel, diag, on_device=on_device).matrix()
    except NotFinite:
        return None


@njit(cache=True, inline="always")
def _value(kind, v, gamma, degree, coef0):  # pragma: no cover - compiled
    """The matrix entry from ``v``, the squared distance (RBF: its exponent −γ v) or the inner
    product (linear: v; polynomial: (γ v + coef0)^degree; sigmoid: tanh(γ v + coef0))."""
    if kind == 1:
        return -gamma * v
    if kind == 2:
        base, power = gamma * v + coef0, np.float32(1.0)
        for _ in range(degree):  # an integer degree by products: they vectorize, pow does not
            power *= base
        return power
    if kind == 3:
        return math.tanh(gamma * v + coef0)
    return v


@njit(nogil=True, cache=True)
def _gather_pass(start, stop, K, X, index):  # pragma: no cover - compiled
    """Rows ``start:stop`` of K from precomputed rows: ``K[i, j] = X[i, index[j]]`` in
    float32. Returns whether an entry is not finite in float32."""
    bad = False
    for i in range(start, stop):
        for j in range(index.size):
            v = np.float32(X[i, index[j]])
            bad |= not math.isfinite(v)
            K[i, j] = v
    return bad


# Reassociation lets a pass's running check vectorize; no flag that assumes finite values, so
# that the check still sees an overflow.
_VECTOR = {"reassoc", "contract"}


@njit(nogil=True, cache=True, fastmath=_VECTOR)
def _finish_row(row, kind, gamma, degree, coef0):  # pragma: no cover - compiled
    """A row of inner products or squared distances -> kernel values in place (the RBF kernel:
    its exponent); returns NaN where an entry is not finite, else 0."""
    n = row.shape[0]
    if kind != 0:
        for j in range(n):
            row[j] = _value(kind, row[j], gamma, degree, coef0)
    check = np.float32(0.0)
    for j in range(n):
        check += row[j] - row[j]  # NaN from an infinite or NaN entry
    return check


@njit(nogil=True, cache=True, fastmath=_VECTOR)
def _direct_pass(start, stop, K, X_rows, XT, kind, gamma, degree, coef0):  # pragma: no cover - compiled
    """Rows ``start:stop`` of a block K of rows (of the points ``X_rows``, against every row,
    given as the d × n ``XT``) from the rows themselves (few features: one pass that writes K,
    where the product of a handful of columns is bound by writing it and the kernel pass by
    reading it again), a feature at a time along the row (Bananas n = 5,000: 7 ms against
    37 ms a point at a time); the RBF kernel's exponent −γ‖x_i − x_j‖² from the differences.
    Returns whether an entry is not finite."""
    d, n = XT.shape
    check = np.float32(0.0)
    for i in range(start, stop):
        row = K[i]
        row[:] = 0.0
        for c in range(d):
            x, column = X_rows[i, c], XT[c]
            if kind == 1:
                for j in range(n):
                    t = x - column[j]
                    row[j] += t * t
            else:
                for j in range(n):
                    row[j] += x * column[j]
        check += _finish_row(row, kind, gamma, degree, coef0)
    return not math.isfinite(check)


@njit(nogil=True, cache=True, fastmath=_VECTOR)
def _kernel_pass(start, stop, K, sq_rows, sq, kind, gamma, degree, coef0):  # pragma: no cover - compiled
    """Rows ``start:stop`` of a block K of rows (their products with every row; their squared
    norms ``sq_rows``, every row's ``sq``) -> the kernel in place (for the RBF kernel its
    exponent −γ‖x_i − x_j‖², exponentiated by the caller). Returns whether an entry is not
    finite."""
    n = K.shape[1]
    check = np.float32(0.0)
    for i in range(start, stop):
        row = K[i]
        if kind == 1:  # the squared distance from the expansion
            s = sq_rows[i]
            for j in range(n):
                row[j] = max(s + sq[j] - np.float32(2.0) * row[j], np.float32(0.0))
        check += _finish_row(row, kind, gamma, degree, coef0)
    return not math.isfinite(check)


def smo(K: np.ndarray | KernelRows, y: np.ndarray, upper: np.ndarray, tol: float = SMO_TOL,
        max_iter: int | None = None, shift: np.ndarray | None = None,
        source: np.ndarray | None = None, start: np.ndarray | None = None) -> tuple[np.ndarray, int]:
    """Approximately solve ``min ½ αᵀQα + pᵀα`` s.t. ``0 ≤ α ≤ upper``, ``yᵀα = 0``, with
    ``Q_ij = y_i y_j K_{s_i s_j}`` (``s = source``) and ``p = shift − 1`` (C-SVC: ``p = −1``),
    by SMO.

    Shrinking works as LIBSVM's (points at a bound beyond the maximal violations leave the
    problem, their gradient rebuilt before the end), with one difference: when half of the
    points can leave, the rest's kernel block is copied out, so that SMO's passes run over
    contiguous memory (an indexed pass was measured 3× slower per point). Problems of more
    than ``_BLOCKS_FROM · _BLOCK`` points are solved by blocks instead (:func:`_smo_blocks`).

    Parameters
    ----------
    K : ndarray of shape (n_source, n_source), float32, or KernelRows
        From :func:`kernel_matrix` (the ridge on its diagonal), or its rows computed when first
        read (:class:`KernelRows`; by blocks only the working sets' rows are ever computed).
    y : ndarray of shape (n,), float64, ±1
    upper : ndarray of shape (n,), float64
        Each coefficient's box bound (finite, ≥ 0).
    tol : float
        Stop when the maximal violating pair's gap ``max_{I_up} −y_t ∇_t − min_{I_low} −y_t ∇_t``
        is below it (units of y f; LIBSVM's ``eps``).
    max_iter : int or None
        Most pair updates; None: 30 n.
    shift : ndarray of shape (n,), float64, or None
        ``p + 1`` for the linear term p (ε-SVR's doubled dual: ``1 + ε − y_t z_t`` for the
        target z_t of row t, :func:`gpath.svr.doubled`; LIBSVM's formulation of ε-SVR, Chang
        & Lin 2011, section 2.4); None: C-SVC's ``p = −1``.
    source : ndarray of shape (n,), int64, or None
        The row of K each coefficient's point has; None: ``arange(n)``. ε-SVR's α_i and α*_i
        share x_i, so their doubled problem is solved on the n × n matrix of the points, not
        the 2n × 2n one of the doubled rows (a quarter of the kernel values and of the memory;
        its ridge then also sits between twins, which a start does not mind).
    start : ndarray of shape (n,), float64, or None
        A feasible point to start from (in its box, ``yᵀα = 0``): a nearby problem's
        solution, such as the model before a large update; None: α = 0.

    Returns
    -------
    alpha : ndarray of shape (n,), float64
        Feasible: in its box, ``yᵀα = 0`` to round-off.
    n_iter : int
        Pair updates made.

    Raises
    ------
    NotFinite
        Where a row of a :class:`KernelRows` is not finite in float32.

    References
    ----------
    J. C. Platt, "Sequential minimal optimization", 1998 (the pair update); R.-E. Fan, P.-H.
    Chen and C.-J. Lin, "Working set selection using second order information for training
    SVM", JMLR 6, 2005 (WSS 2); C.-C. Chang and C.-J. Lin, "LIBSVM", ACM TIST 2(3), 2011,
    sections 4.1–5 (the update with its clipping, shrinking and the gradient reconstruction);
    Z. Wen, J. Shi, Q. Li, B. He and J. Chen, "ThunderSVM", JMLR 19, 2018 (the blocks and
    the half of each working set kept for the next).
    """
    n = y.shape[0]
    y = np.ascontiguousarray(y, dtype=np.float64)
    upper = np.ascontiguousarray(upper, dtype=np.float64)
    cap = _MAX_ITER_PER_POINT * n if max_iter is None else max_iter
    # F = −y ∘ ∇ with ∇ = Qα + p: at α = 0 it is −y ∘ p, the target each F_t is measured from.
    target = y.copy() if shift is None else y * (1.0 - np.asarray(shift, dtype=np.float64))
    alpha, F = np.zeros(n), target.copy()
    blocks = n > _BLOCKS_FROM * _BLOCK
    if isinstance(K, np.ndarray):
        K = KernelRows.of(K)
    elif not blocks:  # the pairs read every row: computed in point order
        K = KernelRows.of(K.matrix())
    if start is not None:
        alpha = np.array(start, dtype=np.float64)
        _subtract_product(K, y * alpha, F, source)
    if blocks:
        return _smo_blocks(K, y, upper, tol, cap, target, source, alpha, F)
    K = K.values
    if source is not None:  # a small problem: its own matrix, at most 8,192² floats
        K = K[np.ix_(source, source)]
    rows, block = None, K  # the points of the current problem (None: all) and their block of K
    unshrunk, n_iter = False, 0
    while True:
        sub = (slice(None),) if rows is None else (rows,)
        y_s, u_s, a_s, F_s = y[sub], upper[sub], alpha[sub], F[sub]
        done, status = _smo_dense(block, y_s, u_s, a_s, F_s, float(tol), cap - n_iter,
                                  min(a_s.shape[0], _SHRINK_EVERY), not unshrunk and rows is not None)
        n_iter += done
        alpha[sub], F[sub] = a_s, F_s
        if status == _MAX_ITER or (status == _CONVERGED and rows is None):
            return alpha, n_iter
        if status == _SHRINK:
            keep = _kept(y_s, a_s, F_s, u_s)
            rows = keep if rows is None else rows[keep]
            block = K[np.ix_(rows, rows)]
            continue
        # Optimal on the shrunk problem, or near it (LIBSVM's one unshrinking at 10·tol):
        # rebuild the others' gradient and go on with every point.
        unshrunk = unshrunk or status == _UNSHRINK
        _rebuild_outside(K, y, target, alpha, F, rows)
        rows, block = None, K


def smo_start(X: np.ndarray, y: np.ndarray, kernel, upper: np.ndarray, diag: float,
              max_iter: int | None = None, shift: np.ndarray | None = None,
              source: np.ndarray | None = None, start: np.ndarray | None = None,
              tol: float = SMO_TOL) -> tuple[tuple[np.ndarray, int] | None, int]:
    """SMO's approximate solution as a start for the exact trainer, or None where the float32
    matrix would not fit in memory or cannot hold the kernel (:class:`KernelRows`), with the
    number of kernel values computed.

    Parameters
    ----------
    X : array of shape (n, d), float64
        NumPy: the matrix's rows by the host's float32 passes; any other namespace (CuPy): on
        X's device (:class:`KernelRows`).
    y : ndarray of shape (n,), float64, ±1
    kernel : Kernel
        "linear", "rbf", "poly", "sigmoid" or "precomputed".
    upper : ndarray of shape (n,)
        Box bounds, finite.
    diag : float
        Constant on Q's diagonal (the ridge).
    max_iter : int or None
        Most pair updates, as :func:`smo`.
    shift : ndarray of shape (n,), float64, or None
        The linear term's ``p + 1``, as :func:`smo`.
    source : ndarray of shape (n,), int64, or None
        The row of X each coefficient's point is, as :func:`smo` (X then has as many rows as
        the points, y, upper and shift one entry per coefficient); None: ``arange(n)``.
    start : ndarray of shape (n,), float64, or None
        A feasible point to start from, as :func:`smo`.
    tol : float
        SMO's stopping tolerance, as :func:`smo`.

    Returns
    -------
    found : (alpha, n_iter) or None
        As :func:`smo`.
    n_evaluations : int
        Kernel values computed (n² where SMO runs by pairs; by blocks the working sets' rows).
    """
    capacity = row_capacity(X.shape[0])
    # By pairs SMO reads every row; by blocks the rows of one working set at a time.
    if capacity < (2 * _BLOCK if y.shape[0] > _BLOCKS_FROM * _BLOCK else X.shape[0]):
        return None, 0
    shared, spent = _shared.get(), 0
    if shared is not None:
        # By blocks SMO reads the shared rows themselves, each coefficient mapped to its point of
        # the shared X; by pairs it reads the whole matrix of this fit's points, gathered.
        # (Only where they hold as many rows as this fit's own would: else they would give way
        # and be computed again, each N wide.)
        parent = shared.rows(X, kernel, diag) if y.shape[0] > _BLOCKS_FROM * _BLOCK else None
        if parent is not None and parent.capacity >= max(capacity, 2 * _BLOCK):
            rows, points = parent, shared.index if source is None else shared.index[source]
        else:
            rows, points = shared.subset(X, kernel, diag, capacity), source
        if rows is not None:
            before = rows.n_evaluations
            try:
                return smo(rows, y, upper, tol, max_iter, shift, points, start), rows.n_evaluations - before
            except NotFinite:  # (perhaps a point this fit does not train on: its own rows decide)
                shared.failed()
                spent = rows.n_evaluations - before
                rows = parent = None  # (their memory free for the fit's own rows)
    rows = KernelRows(X, kernel, diag, capacity=capacity)
    try:
        return smo(rows, y, upper, tol, max_iter, shift, source, start), spent + rows.n_evaluations
    except NotFinite:
        return None, spent + rows.n_evaluations


def _smo_blocks(K, y, upper, tol, cap, target, source, alpha, F) -> tuple[np.ndarray, int]:
    """:func:`smo` by blocks of ``_BLOCK`` points (the decomposition of ThunderSVM and oneDAL):
    each round picks a working set B (:func:`_working_set`), solves the problem in α_B with
    the others fixed by pair SMO on the contiguous block K_BB, held in cache, to a tolerance of
    a tenth of the whole problem's gap, then moves every gradient by the changed rows of K at
    once. A pair update then passes over |B| points instead of n. Half the working set is
    kept from round to round; choosing every member anew zig-zags (Adult n = 10,000, C = 100,
    |B| = 512: 52,646 rounds). With a ``source`` map the gradients move once per point of K,
    then to each coefficient of that point. α and F (its gradient's −y ∘ ∇) are moved in
    place. Returns (α, pair updates)."""
    n = y.shape[0]
    buffer = np.empty(_BLOCK * _BLOCK, dtype=np.float32)
    previous = np.zeros(0, dtype=np.int64)
    n_iter = 0
    while n_iter < cap:
        up, low = _all_flags(y, alpha, upper)
        g_up, g_low = _extremes(F, up, low)
        if g_up + g_low < tol:
            break
        B = np.sort(_working_set(F, up, low, alpha, upper, previous))  # sorted: the gather reads K in order
        # A C-contiguous view of the buffer's start, of any size: one compiled signature.
        block = buffer[: B.size * B.size].reshape(B.size, B.size)
        points = B if source is None else source[B]
        rows = K.rows(points)
        in_row_blocks(_gather, B.size, K.values, rows, points, block)
        a_B, F_B = alpha[B], F[B]
        # Without shrinking: inside a block it measured slower (Adult n = 10,000, C = 1: 17,831
        # pair updates against 5,818).
        done, _ = _smo_dense(block, y[B], upper[B], a_B, F_B, max(tol, _INNER_TOL * (g_up + g_low)),
                             cap - n_iter, _NEVER, False)
        n_iter += done
        change = y[B] * (a_B - alpha[B])
        alpha[B] = a_B
        moved = np.flatnonzero(change)
        if source is None:
            in_row_blocks(_move_gradients, n, K.values, rows[moved], change[moved], F, min_rows=_MOVE_ROWS)
        else:
            moves = np.zeros(K.n)
            in_row_blocks(_move_gradients, K.n, K.values, rows[moved], change[moved], moves, min_rows=_MOVE_ROWS)
            F += moves[source]
        previous = B
    return alpha, n_iter


def _working_set(F, up, low, alpha, upper, previous) -> np.ndarray:
    """The next round's points: the |B|/4 largest F of I_up and the |B|/4 smallest of I_low
    (the worst violators, both ends of the maximal violating pair among them), and half of the
    previous round's set, its free points first; all |B|/2 + |B|/2 violators at the start."""
    new = _BLOCK // 2 if previous.size else _BLOCK
    half = new // 2
    candidates_up, candidates_low = np.flatnonzero(up), np.flatnonzero(low)
    if candidates_up.size > half:
        candidates_up = candidates_up[np.argpartition(-F[candidates_up], half)[:half]]
    if candidates_low.size > half:
        candidates_low = candidates_low[np.argpartition(F[candidates_low], half)[:half]]
    B = np.union1d(candidates_up, candidates_low)
    if previous.size:
        kept = np.setdiff1d(previous, B, assume_unique=True)
        free = (alpha[kept] > 0.0) & (alpha[kept] < upper[kept])
        B = np.concatenate([B, kept[free], kept[~free]])[:_BLOCK]
    return B


@njit(nogil=True, cache=True)
def _gather(start, stop, K, rows, points, out):  # pragma: no cover - compiled
    """Rows ``start:stop`` of ``out``, the contiguous block of the points' kernel values:
    ``out[a, b] = K[rows[a], points[b]]``, ``rows`` the rows of K that hold ``points``."""
    for a in range(start, stop):
        row = K[rows[a]]
        for b in range(points.shape[0]):
            out[a, b] = row[points[b]]


@njit(nogil=True, cache=True, fastmath=True)
def _column_sums(start, stop, K, rows, points, signed_coef, coef):  # pragma: no cover - compiled
    """Rows ``start:stop`` of ``Σ_j K[rows_j, points] signed_coef_j`` and of
    ``Σ_j |K[rows_j, points]| coef_j`` (the rows of K read once each, in turn)."""
    signed = np.zeros(stop - start)
    share = np.zeros(stop - start)
    for j in range(rows.shape[0]):
        row, a, c = K[rows[j]], signed_coef[j], coef[j]
        for i in range(start, stop):
            v = row[points[i]]
            signed[i - start] += a * v
            share[i - start] += c * abs(v)
    return signed, share


@njit(nogil=True, cache=True, fastmath=True)
def _move_gradients(start, stop, K, rows, change, F):  # pragma: no cover - compiled
    """``F[start:stop] −= Σ_k change_k K[rows_k, start:stop]``, by chunks of F that stay in
    the first-level cache while the rows stream past."""
    for lo in range(start, stop, _MOVE_CHUNK):
        hi = min(lo + _MOVE_CHUNK, stop)
        for k in range(rows.shape[0]):
            c = change[k]
            row = K[rows[k]]
            for t in range(lo, hi):
                F[t] -= c * row[t]


_CONVERGED, _SHRINK, _UNSHRINK, _MAX_ITER = 0, 1, 2, 3


@njit(cache=True)
def _flags(y_t, a_t, u_t):  # pragma: no cover - compiled
    """(t ∈ I_up, t ∈ I_low): whether α_t can move so that y_t α_t grows, or falls."""
    if y_t > 0:
        return a_t < u_t, a_t > 0.0
    return a_t > 0.0, a_t < u_t


@njit(cache=True)
def _extremes(F, up, low):  # pragma: no cover - compiled
    """The maximal violations: (max over I_up of F, max over I_low of −F)."""
    g_up, g_low = -np.inf, -np.inf
    for t in range(F.shape[0]):
        if up[t]:
            g_up = max(g_up, F[t])
        if low[t]:
            g_low = max(g_low, -F[t])
    return g_up, g_low


@njit(cache=True)
def _shrinkable(F, up, low, g_up, g_low):  # pragma: no cover - compiled
    """LIBSVM's shrinking rule, per point: in one of I_up, I_low only (at a bound) and beyond
    that set's extreme violation, so that no pair can select it while the extremes hold."""
    out = np.empty(F.shape[0], dtype=np.bool_)
    for t in range(F.shape[0]):
        out[t] = (not up[t] and F[t] > g_up) or (not low[t] and -F[t] > g_low)
    return out


def _kept(y, a, F, u) -> np.ndarray:
    """Positions of the points that shrinking keeps."""
    up, low = _all_flags(y, a, u)
    g_up, g_low = _extremes(F, up, low)
    return np.flatnonzero(~_shrinkable(F, up, low, g_up, g_low))


@njit(cache=True)
def _all_flags(y, a, u):  # pragma: no cover - compiled
    up = np.empty(y.shape[0], dtype=np.bool_)
    low = np.empty(y.shape[0], dtype=np.bool_)
    for t in range(y.shape[0]):
        up[t], low[t] = _flags(y[t], a[t], u[t])
    return up, low


@njit(cache=True)
def _first_violator(F, up):  # pragma: no cover - compiled
    """WSS 2's i: the maximal violator argmax over I_up of F, and F_i."""
    g_max, i = -np.inf, -1
    for t in range(F.shape[0]):
        if up[t] and F[t] >= g_max:
            g_max, i = F[t], t
    return i, g_max


@njit(cache=True)
def _second_violator(K, KD, F, low, i, g_max):  # pragma: no cover - compiled
    """WSS 2's partner of i: j in I_low of the largest second-order decrease
    ``(F_i − F_j)² / (K_ii + K_jj − 2 K_ij)``; returns (j, gap), the gap the maximal violating
    pair's ``max_{I_up} F − min_{I_low} F``."""
    g_min, j = np.inf, -1
    best_b2, best_curvature = 0.0, 1.0  # the best decrease b²/curvature as a fraction: no division
    Ki, kd_i = K[i], KD[i]
    for t in range(F.shape[0]):
        if low[t]:
            v = F[t]
            g_min = min(g_min, v)
            b = g_max - v
            if b > 0.0:
                curvature = kd_i + KD[t] - 2.0 * Ki[t]
                if curvature <= 0.0:
                    curvature = _TAU
                b2 = b * b
                if b2 * best_curvature >= best_b2 * curvature:
                    best_b2, best_curvature, j = b2, curvature, t
    return j, g_max - g_min


@njit(cache=True)
def _pair_step(K, KD, y, a, F, u, i, j):  # pragma: no cover - compiled
    """The two-variable update of LIBSVM (Chang & Lin 2011, section 4.1.2) with its clipping
    to the boxes; returns (Δα_i, Δα_j)."""
    a_i, a_j, u_i, u_j = a[i], a[j], u[i], u[j]
    g_i, g_j = -y[i] * F[i], -y[j] * F[j]
    curvature = max(KD[i] + KD[j] - 2.0 * K[i, j], _TAU)  # Q_ii + Q_jj ∓ 2 Q_ij for y_i = ±y_j
    if y[i] != y[j]:
        delta = (-g_i - g_j) / curvature
        diff = a_i - a_j
        new_i, new_j = a_i + delta, a_j + delta
        if diff > 0.0:
            if new_j < 0.0:
                new_j, new_i = 0.0, diff
        elif new_i < 0.0:
            new_i, new_j = 0.0, -diff
        if diff > u_i - u_j:
            if new_i > u_i:
                new_i, new_j = u_i, u_i - diff
        elif new_j > u_j:
            new_j, new_i = u_j, u_j + diff
    else:
        delta = (g_i - g_j) / curvature
        total = a_i + a_j
        new_i, new_j = a_i - delta, a_j + delta
        if total > u_i:
            if new_i > u_i:
                new_i, new_j = u_i, total - u_i
        elif new_j < 0.0:
            new_j, new_i = 0.0, total
        if total > u_j:
            if new_j > u_j:
                new_j, new_i = u_j, total - u_j
        elif new_i < 0.0:
            new_i, new_j = 0.0, total
    a[i], a[j] = new_i, new_j
    return new_i - a_i, new_j - a_j


def _subtract_product(K: KernelRows, coef, F, source) -> None:
    """``F −= K̃ coef`` for the coefficients' matrix K̃ (``K[source][:, source]``; K itself
    where ``source`` is None): by symmetry the rows of the nonzero coefficients' points,
    streamed past F once."""
    if source is not None:  # the points' sums of their coefficients, then each point's product
        coef = np.bincount(source, weights=coef, minlength=K.n)
    points = np.flatnonzero(coef)
    product = np.zeros(K.n)
    for lo in range(0, points.size, K.capacity):  # as many rows at once as are held
        part = points[lo: lo + K.capacity]
        in_row_blocks(_move_gradients, K.n, K.values, K.rows(part), coef[part], product, min_rows=_MOVE_ROWS)
    F += product if source is None else product[source]


def _rebuild_outside(K, y, target, a, F, rows) -> None:
    """F of the points not in ``rows``, ``target_t − Σ_s K_ts y_s α_s``: a dense dot product per
    row (contiguous and vectorized; a sum over the support vectors alone, gathered, was slower)."""
    outside = np.ones(a.shape[0], dtype=bool)
    outside[rows] = False
    outside = np.flatnonzero(outside)
    in_row_blocks(_dots, outside.shape[0], K, target, y * a, outside, F)


@njit(nogil=True, cache=True)
def _dots(start, stop, K, target, coef, outside, F):  # pragma: no cover - compiled
    """F_t = target_t − K_t · coef for the points ``outside[start:stop]``."""
    n = coef.shape[0]
    for s in range(start, stop):
        t = outside[s]
        Kt = K[t]
        f = 0.0
        for r in range(n):
            f += Kt[r] * coef[r]
        F[t] = target[t] - f


@njit(cache=True)
def _smo_dense(K, y, u, a, F, tol, max_iter, check_every, may_unshrink):  # pragma: no cover - compiled
    """SMO on one (possibly shrunk) problem in contiguous arrays, α and F moved in place.
    Every ``check_every`` pair updates it counts the points shrinking would drop and hands
    back (_SHRINK) once that is half of them, or (_UNSHRINK, if ``may_unshrink``) once the
    gap is within 10·tol. Returns (pair updates, status)."""
    m = y.shape[0]
    KD = np.empty(m)
    for t in range(m):
        KD[t] = K[t, t]
    # WSS 2 by two scans that keep the best as they go. Passes that vectorize (each maximum by
    # chunks, the decreases' quotients in a pass of their own; the same pairs) took 11–18 % less
    # time on an AMD EPYC (AVX2) but 22–29 % more on an Intel Xeon (AVX-512), where the pass of
    # decreases alone cost that (measured apart): Adult 10,000, C = 100, blocks of 2,048.
    up, low = _all_flags(y, a, u)
    i, g_max = _first_violator(F, up)
    n_iter, counter = 0, check_every
    while i >= 0:
        if n_iter >= max_iter:
            return n_iter, _MAX_ITER
        counter -= 1
        if counter == 0:
            counter = check_every
            g_up, g_low = _extremes(F, up, low)
            if may_unshrink and g_up + g_low <= 10.0 * tol:
                return n_iter, _UNSHRINK
            if 2 * np.count_nonzero(_shrinkable(F, up, low, g_up, g_low)) >= m:
                return n_iter, _SHRINK
        j, gap = _second_violator(K, KD, F, low, i, g_max)
        if j < 0 or gap < tol:
            return n_iter, _CONVERGED
        d_i, d_j = _pair_step(K, KD, y, a, F, u, i, j)
        up[i], low[i] = _flags(y[i], a[i], u[i])
        up[j], low[j] = _flags(y[j], a[j], u[j])
        c_i, c_j = y[i] * d_i, y[j] * d_j
        Ki, Kj = K[i], K[j]
        for t in range(m):  # two passes, not one: the move alone vectorizes (measured 3× faster)
            F[t] -= Ki[t] * c_i + Kj[t] * c_j
        i, g_max = _first_violator(F, up)
        n_iter += 1
    return n_iter, _CONVERGED
