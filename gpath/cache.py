"""The device cache of the margin columns ``Q[:, M]``.

Every breakpoint of the path algorithms multiplies the margin columns by a vector, and an
update adds and removes training rows. Both are shaped by this module:

- **Columns are contiguous.** ``data`` is slots × buffer rows, so ``Q[:, M] φ_M`` reads one
  contiguous block of the used slots, whatever the capacity.
- **Rows are a buffer that is only appended to.** ``rows`` maps each training row to its
  buffer row. Adding points writes their entries after the last buffer row in use; removing
  points only drops them from ``rows`` (their buffer rows are dead). The buffer is rebuilt
  with the live rows and a quarter of headroom when it runs out of rows, or when dead rows
  outnumber a quarter of the live ones. So an update copies no n × |M| array.
- **Slots are reused in the order they were freed**: a point that leaves the margin keeps its
  column until its slot is taken, so re-entering the margin costs no kernel evaluation.
- **One buffer, one owner.** A cache derived from another (:meth:`with_rows_appended`,
  :meth:`with_rows_kept`) shares its buffer and may overwrite slots the other still reads:
  once an update succeeds, the state it started from is spent. Within :meth:`transaction`
  the first write to each slot of the starting buffer is saved, and put back if the block
  raises, so a failed update leaves its starting state exactly as it was (the log holds at
  most one copy of the starting cache).

Memory: ``8 · slots · buffer_rows`` bytes (float64) with ``buffer_rows ≤ 1.25 · (n + m) + m``
after adding m points to n (and during an update up to as much again for the log);
``max_columns`` bounds the slots.
"""

from __future__ import annotations

from collections import deque
from contextlib import contextmanager

import numpy as np

from ._array_api import namespace_by_name, to_device

__all__ = ["CacheFullError", "QColumnCache", "max_columns"]


class CacheFullError(MemoryError):
    """The margin set needs more kernel columns than ``cache_size`` allows."""


class QColumnCache:
    """Device-resident columns ``Q[:, k]`` of the margin points, one slot per column.

    Parameters
    ----------
    xp : namespace
    device : device
    n_rows : int
        Number of training points (rows of every column).
    capacity : int
        Initial number of slots; doubled when full.
    max_columns : int or None
        Most slots the cache may hold (from the estimators' ``cache_size`` in MB, see
        :func:`max_columns`); None for no limit. When every slot holds a margin column and
        another is needed, :meth:`store` raises :class:`CacheFullError`.
    """

    def __init__(self, xp, device, n_rows: int, capacity: int = 16, max_columns: int | None = None):
        self.xp, self.device = xp, device
        self.max_columns = max_columns
        self.data = xp.zeros((max(capacity, 1), n_rows), dtype=xp.float64, device=device)
        self.n_rows = n_rows
        self.top = n_rows  # buffer rows in use (live or dead)
        self._set_rows(None)
        self.owner = np.full(self.data.shape[0], -1, dtype=np.int64)  # point held by a slot
        self.used = np.zeros(self.data.shape[0], dtype=bool)
        self.slot_of: dict[int, int] = {}
        self.free = deque(range(self.data.shape[0]))
        self.n_columns_computed = 0
        self._undo = None  # the transaction's log, shared by the caches derived within it

    def __getstate__(self):
        # The live rows in training order: what a pickle holds does not depend on the buffer.
        state = {**self.__dict__, "xp": self.xp.__name__, "_undo": None}
        if self.rows_host is not None:
            state["data"] = self.xp.take(self.data, self._rows, axis=1)
            state.update(top=self.n_rows, rows_host=None, _rows=None, _inv=None)
        elif self.data.shape[1] != self.n_rows:
            state["data"] = self.data[:, : self.n_rows]
        return state

    def __setstate__(self, state):
        self.__dict__.update(state, xp=namespace_by_name(state["xp"]))

    @property
    def capacity(self) -> int:
        """Number of slots."""
        return self.data.shape[0]

    # ------------------------------------------------------------------ rows
    def _set_rows(self, rows_host) -> None:
        """``rows_host``: buffer row of each training row (host ints), None for the identity."""
        if rows_host is not None and rows_host.size == self.top and np.array_equal(rows_host, np.arange(self.top)):
            rows_host = None
        self.rows_host = rows_host
        if rows_host is None:
            self._rows = self._inv = None
            return
        inv = np.full(self.top, self.n_rows, dtype=np.int64)  # dead buffer rows -> a zero
        inv[rows_host] = np.arange(self.n_rows)
        self._rows = to_device(rows_host, self.xp, self.device)
        self._inv = to_device(inv, self.xp, self.device)

    def _derived(self) -> QColumnCache:
        """A new cache object on the same buffer, with its own bookkeeping."""
        new = object.__new__(QColumnCache)
        new.__dict__.update(self.__dict__)
        new.owner, new.used = self.owner.copy(), self.used.copy()
        new.slot_of, new.free = dict(self.slot_of), deque(self.free)
        return new

    def with_rows_appended(self, extra) -> QColumnCache:
        """The cache of the training rows followed by ``extra.shape[1]`` new rows.

        Parameters
        ----------
        extra : device array of shape (capacity, m)
            Entries of the new rows in each slot's column (0 for a slot without a column).
        """
        m = extra.shape[1]
        base = self if self.top + m <= self.data.shape[1] else self.with_spare_rows(m)
        new = base._derived()
        # Buffer rows past ``top`` belong to no state: write there in place.
        new.data[:, base.top : base.top + m] = extra
        rows = np.arange(base.n_rows) if base.rows_host is None else base.rows_host
        rows = np.concatenate([rows, np.arange(base.top, base.top + m)])
        new.n_rows, new.top = rows.size, base.top + m
        new._set_rows(rows)
        return new

    def with_spare_rows(self, m: int = 0) -> QColumnCache:
        """A copy holding only the live rows, with room for ``m`` and a quarter more."""
        xp, n = self.xp, self.n_rows
        new = self._derived()
        new.data = xp.zeros((self.capacity, n + (n + m) // 4 + m), dtype=self.data.dtype, device=self.device)
        new.data[:, :n] = self.data[:, :n] if self._rows is None else xp.take(self.data, self._rows, axis=1)
        new.top = n
        new._set_rows(None)
        return new

    def with_rows_kept(self, keep: np.ndarray) -> QColumnCache:
        """The cache of the training rows ``keep`` (host ints), in that order; no copy unless
        the dead rows would then outnumber a quarter of the live ones (a rebuild)."""
        new = self._derived()
        rows = np.arange(self.n_rows) if self.rows_host is None else self.rows_host
        new.n_rows = keep.size
        new._set_rows(rows[keep])
        if new.top > keep.size + keep.size // 4 + 64:
            new = new.with_spare_rows()
        return new

    def _to_buffer(self, values):
        """A training-order vector (n_rows,) in buffer order (top,), 0 on dead rows."""
        if self._inv is None:
            return values
        padded = self.xp.concat([values, self.xp.zeros(1, dtype=values.dtype, device=self.device)])
        return self.xp.take(padded, self._inv)

    def _to_rows(self, buffered):
        """A buffer-order vector (top,) in training order (n_rows,)."""
        return buffered if self._rows is None else self.xp.take(buffered, self._rows)

    # ------------------------------------------------------------------ slots
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
        """Put ``column`` (device, shape (n_rows,), training order) for ``point`` in a free
        slot; return the slot."""
        if self.max_columns is not None and np.count_nonzero(self.used) >= self.max_columns:
            self._full(np.count_nonzero(self.used))
        if not self.free:
            self._grow()
        slot = self.free.popleft()
        old = int(self.owner[slot])
        if old >= 0:
            self.slot_of.pop(old, None)
        log = self._undo
        if log is not None and log.open and self.data is log.buffer and slot < log.capacity \
                and slot not in log.saved:
            log.saved[slot] = self.xp.asarray(self.data[slot, :], copy=True)
        self.data[slot, : self.top] = self._to_buffer(column)
        self.owner[slot], self.used[slot] = point, True
        self.slot_of[point] = slot
        return slot

    def release(self, point: int) -> None:
        """Mark ``point``'s slot free, keeping its column for a later :meth:`lookup`."""
        slot = self.slot_of[point]
        self.used[slot] = False
        self.free.append(slot)

    @contextmanager
    def transaction(self):
        """Undo every :meth:`store` into a shared buffer if the block raises.

        Caches derived inside the block (:meth:`with_rows_appended`, :meth:`with_rows_kept`)
        share the log; a nested transaction belongs to the outermost one."""
        if self._undo is not None and self._undo.open:
            yield
            return
        self._undo = log = _Log(self.data)
        try:
            yield
        except BaseException:
            for slot, saved in log.saved.items():
                log.buffer[slot, :] = saved
            raise
        finally:
            log.close()
            self._undo = None

    # ------------------------------------------------------------------ products
    def column(self, slot: int):
        """The column held in ``slot`` (device, shape (n_rows,), training order)."""
        if self._rows is None:
            return self.data[slot, : self.n_rows]
        return self.xp.take(self.data[slot, :], self._rows)

    def entries(self, slot: int, rows):
        """``Q[rows, owner]`` for the column in ``slot`` (device; ``rows``: host ints)."""
        rows = np.asarray(rows, dtype=np.int64)
        buffer_rows = rows if self.rows_host is None else self.rows_host[rows]
        return self.xp.take(self.data[slot, :], to_device(buffer_rows, self.xp, self.device))

    def matvec(self, coef_by_slot: np.ndarray):
        """``Q[:, slots] @ coef`` on the device (n_rows,); ``coef_by_slot``: host (capacity,)."""
        nonzero = np.flatnonzero(coef_by_slot)
        if nonzero.size == 0:
            return self.xp.zeros(self.n_rows, dtype=self.data.dtype, device=self.device)
        hi = int(nonzero[-1]) + 1
        coef = to_device(coef_by_slot[:hi], self.xp, self.device)
        return self._to_rows(coef @ self.data[:hi, : self.top])

    def column_dots(self, slots: np.ndarray, values):
        """``Q[:, owner(s)] · values`` for each slot s (device (len(slots),)); ``values``:
        device (n_rows,), training order. One product with the slots up to the last one
        asked for (no copy of the columns)."""
        slots = np.asarray(slots, dtype=np.int64)
        hi = int(slots.max(initial=-1)) + 1
        dots = self.data[:hi, : self.top] @ self._to_buffer(values)
        return self.xp.take(dots, to_device(slots, self.xp, self.device))

    # ------------------------------------------------------------------ limits
    def check_limit(self) -> None:
        """Raise :class:`CacheFullError` if the used columns already exceed ``max_columns``."""
        used = int(np.count_nonzero(self.used))
        if self.max_columns is not None and used > self.max_columns:
            self._full(self.max_columns)

    def _full(self, columns: int):
        raise CacheFullError(
            f"the kernel-column cache is full: the margin set needs more than {columns} columns of "
            f"{self.n_rows} float64 values ({columns * self.data.shape[1] * 8 / 2**20:.2f} MB with the "
            "buffer's spare rows); raise cache_size"
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


class _Log:
    """The starting buffer of a transaction and the first saved row of each slot written."""

    def __init__(self, buffer):
        self.open, self.buffer, self.capacity, self.saved = True, buffer, buffer.shape[0], {}

    def close(self) -> None:
        self.open, self.buffer, self.saved = False, None, {}


def max_columns(cache_size_mb: float, n_rows: int) -> int:
    """Slots of a cache for ``n_rows`` training rows that fit in ``cache_size_mb`` MB.

    Parameters
    ----------
    cache_size_mb : float
        The estimators' ``cache_size`` (MB, as scikit-learn's SVC).
    n_rows : int
        Training rows; the buffer's spare quarter is counted too (float64, 8 bytes a value).

    Returns
    -------
    slots : int
        At least one.
    """
    return max(1, int(cache_size_mb * 2**20 // (8 * (n_rows + n_rows // 4 + 1))))
