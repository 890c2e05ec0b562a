"""Kernel functions in the caller's array namespace, and the device cache of Q columns.

Parameter names and meanings follow scikit-learn's ``SVC``: ``gamma`` (a float, ``"scale"``
= 1 / (n_features · X.var()) or ``"auto"`` = 1 / n_features), ``degree`` and ``coef0``.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from numbers import Real

import numpy as np

from ._array_api import get_namespace_and_device, namespace_by_name, to_device

__all__ = ["KERNELS", "CacheFullError", "Kernel", "QColumnCache", "q_columns"]

KERNELS = ("linear", "rbf", "poly")


@dataclass(frozen=True)
class Kernel:
    """A resolved kernel: ``kind`` with a numeric ``gamma``.

    Parameters
    ----------
    kind : {"linear", "rbf", "poly"}
        ``linear``: ⟨x, z⟩; ``rbf``: exp(−gamma ‖x − z‖²);
        ``poly``: (gamma ⟨x, z⟩ + coef0) ** degree.
    gamma : float
        Kernel coefficient of ``rbf`` and ``poly`` (ignored by ``linear``), > 0.
    degree : int
        Degree of ``poly``.
    coef0 : float
        Independent term of ``poly``.
    offset : float
        Constant added to every kernel value: K + offset models an intercept (regularized
        like the weights) in the problems without a bias term (the outlier path).
    """

    kind: str
    gamma: float = 1.0
    degree: int = 3
    coef0: float = 0.0
    offset: float = 0.0

    @classmethod
    def from_params(cls, kernel, gamma, degree, coef0, X) -> Kernel:
        """Validate scikit-learn-style parameters and resolve ``gamma`` on training data ``X``.

        Parameters
        ----------
        kernel : str
        gamma : float or {"scale", "auto"}
        degree : int
        coef0 : float
        X : array of shape (n_samples, n_features)
            Training inputs (any array-API namespace), used by ``gamma="scale"``.

        Raises
        ------
        ValueError
            For an unknown kernel, a non-positive or unknown gamma, or a degree < 1.
        """
        if kernel not in KERNELS:
            raise ValueError(f"kernel must be one of {KERNELS}; got {kernel!r}")
        d = X.shape[1]
        if isinstance(gamma, str):
            if gamma == "scale":
                xp, _ = get_namespace_and_device(X)
                var = float(xp.mean((X - xp.mean(X)) ** 2))
                gamma_value = 1.0 / (d * var) if var > 0 else 1.0
            elif gamma == "auto":
                gamma_value = 1.0 / d
            else:
                raise ValueError(f"gamma must be a positive float, 'scale' or 'auto'; got {gamma!r}")
        elif isinstance(gamma, Real) and not isinstance(gamma, bool) and gamma > 0:
            gamma_value = float(gamma)
        else:
            raise ValueError(f"gamma must be a positive float, 'scale' or 'auto'; got {gamma!r}")
        if kernel == "poly" and (int(degree) != degree or degree < 1):
            raise ValueError(f"degree must be an integer >= 1; got {degree!r}")
        if not isinstance(coef0, Real):
            raise ValueError(f"coef0 must be a real number; got {coef0!r}")
        return cls(kernel, gamma_value, int(degree), float(coef0))

    def __call__(self, X1, X2):
        """Kernel block K(X1, X2) of shape (n1, n2), in the namespace and on the device of X1."""
        block = self._block(X1, X2)
        return block + self.offset if self.offset else block

    def _block(self, X1, X2):
        xp, _ = get_namespace_and_device(X1, X2)
        inner = X1 @ X2.T
        if self.kind == "linear":
            return inner
        if self.kind == "poly":
            return (self.gamma * inner + self.coef0) ** self.degree
        sq1 = xp.sum(X1 * X1, axis=1)
        sq2 = xp.sum(X2 * X2, axis=1)
        dist = xp.maximum(sq1[:, None] + sq2[None, :] - 2.0 * inner, 0.0)
        return xp.exp(-self.gamma * dist)

    def paired(self, X1, X2):
        """Kernel values of matching rows, ``k(X1[i], X2[i])``: one value per row.

        Parameters
        ----------
        X1, X2 : arrays of shape (n, n_features), one namespace and device

        Returns
        -------
        k : array of shape (n,), in the namespace and on the device of X1
            ``paired(X, X)`` is the kernel diagonal.
        """
        xp, _ = get_namespace_and_device(X1, X2)
        if self.kind == "rbf":
            diff = X1 - X2
            k = xp.exp(-self.gamma * xp.sum(diff * diff, axis=1))
        else:
            k = xp.sum(X1 * X2, axis=1)
            if self.kind == "poly":
                k = (self.gamma * k + self.coef0) ** self.degree
        return k + self.offset if self.offset else k


def q_columns(kernel: Kernel, X, X_cols, col_rows: np.ndarray, ridge: float, y=None, y_cols=None):
    """Columns of Q = diag(y) K diag(y) + ridge·I for the points ``X_cols``.

    Parameters
    ----------
    kernel : Kernel
    X : array of shape (n, d)
        All training points (rows of Q).
    X_cols : array of shape (k, d)
        The points whose columns are wanted.
    col_rows : host int array of shape (k,)
        Row of each column's own point in X (-1 if it is not a training row): where the ridge
        goes.
    ridge : float
    y, y_cols : arrays of shape (n,) and (k,), or None
        Labels ±1 for classification (Q_ij = y_i y_j K_ij); None for regression (Q = K).

    Returns
    -------
    Q_cols : array of shape (n, k), in the namespace and on the device of X
    """
    xp, device = get_namespace_and_device(X)
    block = kernel(X, X_cols)
    if y is not None:
        block = block * y[:, None] * y_cols[None, :]
    if ridge and np.any(col_rows >= 0):
        rows = xp.arange(X.shape[0], device=device)[:, None]
        at = to_device(col_rows, xp, device, dtype=rows.dtype)[None, :]
        block = block + ridge * xp.astype(rows == at, block.dtype)
    return block


class CacheFullError(MemoryError):
    """The margin set needs more kernel columns than ``cache_size`` allows."""


class QColumnCache:
    """Device-resident columns ``Q[:, k]`` of the margin points, one slot per column.

    Slots are reused in the order they were freed; a point that leaves the margin keeps its
    column in a free slot until that slot is taken, so re-entering the margin costs no kernel
    evaluation. The product ``Q[:, M] φ_M`` is one matrix-vector product with the used slots
    (free slots get coefficient 0). Each column is stored contiguously (``data`` is
    slots × rows), so that product reads one contiguous block whatever the number of slots.

    Parameters
    ----------
    xp : namespace
    device : device
    n_rows : int
        Number of training points (rows of every column).
    capacity : int
        Initial number of slots; doubled when full.
    max_columns : int or None
        Most slots the cache may hold (from the estimators' ``cache_size`` in MB:
        ``cache_size · 2**20 / (8 · n_rows)``); None for no limit. When every slot holds a
        margin column and another is needed, :meth:`store` raises :class:`CacheFullError`.
    """

    def __init__(self, xp, device, n_rows: int, capacity: int = 16, max_columns: int | None = None):
        self.xp, self.device = xp, device
        self.max_columns = max_columns
        self.data = xp.zeros((max(capacity, 1), n_rows), dtype=xp.float64, device=device)
        self.owner = np.full(self.data.shape[0], -1, dtype=np.int64)  # point held by a slot
        self.used = np.zeros(self.data.shape[0], dtype=bool)
        self.slot_of: dict[int, int] = {}
        self.free = deque(range(self.data.shape[0]))
        self.n_columns_computed = 0

    def __getstate__(self):
        return {**self.__dict__, "xp": self.xp.__name__}

    def __setstate__(self, state):
        self.__dict__.update(state, xp=namespace_by_name(state["xp"]))

    @property
    def capacity(self) -> int:
        return self.data.shape[0]

    def copy_with_rows(self, rows, extra_rows=None) -> QColumnCache:
        """A new cache whose columns hold the rows ``rows`` followed by ``extra_rows``.

        Parameters
        ----------
        rows : device int array of shape (n_keep,) or None (all rows, in order)
        extra_rows : device array of shape (capacity, n_extra) or None
            Entries of the new rows in each slot's column.
        """
        xp = self.xp
        new = object.__new__(QColumnCache)
        new.xp, new.device, new.max_columns = xp, self.device, self.max_columns
        data = self.data if rows is None else xp.take(self.data, rows, axis=1)
        if extra_rows is not None:
            data = xp.concat([data, extra_rows], axis=1)
        elif rows is None:
            data = xp.asarray(data, copy=True)
        new.data = data
        new.owner, new.used = self.owner.copy(), self.used.copy()
        new.slot_of, new.free = dict(self.slot_of), deque(self.free)
        new.n_columns_computed = self.n_columns_computed
        return new

    def compact(self) -> None:
        """Move the used columns to the front and drop the stale ones, when the products
        would otherwise read many free slots (after SimpleSVM, or a margin set that shrank)."""
        used = np.flatnonzero(self.used)
        hi = int(used[-1]) + 1 if used.size else 0
        if hi <= 2 * used.size + 16:
            return
        xp = self.xp
        capacity = max(16, 2 * used.size)
        data = xp.take(self.data, to_device(used, xp, self.device), axis=0)
        pad = xp.zeros((capacity - used.size, self.data.shape[1]), dtype=self.data.dtype, device=self.device)
        self.data = xp.concat([data, pad], axis=0)
        owners = self.owner[used]
        self.owner = np.concatenate([owners, np.full(capacity - used.size, -1, dtype=np.int64)])
        self.used = np.arange(capacity) < used.size
        self.slot_of = {int(p): i for i, p in enumerate(owners)}
        self.free = deque(range(used.size, capacity))

    def renumber(self, new_index: np.ndarray) -> None:
        """Map owners through ``new_index`` (old point -> new point, -1 = removed)."""
        held = self.owner >= 0
        self.owner[held] = new_index[self.owner[held]]
        # A removed point never holds a used slot (R leaves M before the path starts).
        self.slot_of = {int(p): int(s) for s, p in enumerate(self.owner) if p >= 0}

    def lookup(self, point: int):
        """Claim the slot still holding ``point``'s column, or return None."""
        slot = self.slot_of.get(point)
        if slot is None or self.used[slot]:
            return None
        self.free.remove(slot)
        self.used[slot] = True
        return slot

    def store(self, point: int, column) -> int:
        """Put ``column`` (device, shape (n_rows,)) for ``point`` in a free slot; return it."""
        if self.max_columns is not None and np.count_nonzero(self.used) >= self.max_columns:
            self._full(np.count_nonzero(self.used))
        if not self.free:
            self._grow()
        slot = self.free.popleft()
        old = int(self.owner[slot])
        if old >= 0:
            self.slot_of.pop(old, None)
        self.data[slot, :] = column
        self.owner[slot], self.used[slot] = point, True
        self.slot_of[point] = slot
        return slot

    def release(self, point: int) -> None:
        """Mark ``point``'s slot free, keeping its column for a later :meth:`lookup`."""
        slot = self.slot_of[point]
        self.used[slot] = False
        self.free.append(slot)

    def column(self, slot: int):
        """The column held in ``slot`` (device, shape (n_rows,); a view)."""
        return self.data[slot, :]

    def matvec(self, coef_by_slot: np.ndarray):
        """``Q[:, slots] @ coef`` on the device; ``coef_by_slot`` is a host vector (capacity,)."""
        hi = int(np.flatnonzero(coef_by_slot)[-1]) + 1 if np.any(coef_by_slot) else 0
        if hi == 0:
            return self.xp.zeros(self.data.shape[1], dtype=self.data.dtype, device=self.device)
        coef = to_device(coef_by_slot[:hi], self.xp, self.device)
        return coef @ self.data[:hi, :]

    def check_limit(self) -> None:
        """Raise :class:`CacheFullError` if the used columns already exceed ``max_columns``."""
        used = int(np.count_nonzero(self.used))
        if self.max_columns is not None and used > self.max_columns:
            self._full(self.max_columns)

    def _full(self, columns: int):
        raise CacheFullError(
            f"the kernel-column cache is full: the margin set needs more than {columns} columns of "
            f"{self.data.shape[1]} float64 values ({columns * self.data.shape[0] * 8 / 2**20:.2f} MB); "
            "raise cache_size"
        )

    def _grow(self) -> None:
        xp, old = self.xp, self.capacity
        extra = old if self.max_columns is None else min(old, self.max_columns - old)
        if extra <= 0:
            self._full(old)
        pad = xp.zeros((extra, self.data.shape[1]), dtype=self.data.dtype, device=self.device)
        self.data = xp.concat([self.data, pad], axis=0)
        self.owner = np.concatenate([self.owner, np.full(extra, -1, dtype=np.int64)])
        self.used = np.concatenate([self.used, np.zeros(extra, dtype=bool)])
        self.free.extend(range(old, old + extra))
