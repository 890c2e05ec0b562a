"""The device cache of the margin columns ``Q[:, M]``.

Every breakpoint of the path algorithms multiplies the margin columns by a vector, and an
update adds and removes training rows. Both are shaped by this module:

- **Columns are contiguous.** ``data`` is slots × buffer rows, so ``Q[:, M] φ_M`` reads one
  contiguous block of the used slots, whatever the capacity.
- **Rows are a buffer that is only appended to.** ``rows_host`` maps each training row to its
  buffer row. Adding points writes their entries after the last buffer row in use; removing
  points only drops them from the map (their buffer rows are dead). The buffer is rebuilt
  with the live rows and a quarter of headroom when it runs out of rows, or when dead rows
  outnumber a quarter of the live ones. A fit's cache has that headroom from the start
  (zeros no step touches until a row is written), so neither the fit's end nor the first
  updates copy the buffer. So an update copies no n × |M| array.
- **Slots are reused in the order they were freed**: a point that leaves the margin keeps its
  column until its slot is taken, so re-entering the margin costs no kernel evaluation.
- **One buffer, one owner.** A cache derived from another (:meth:`with_rows_appended`,
  :meth:`with_rows_kept`) shares its buffer. Within :meth:`transaction` the slots in use at
  its start are never written (a store takes another free slot, or a new buffer), so the
  state the transaction started from keeps every column it uses; if the block raises, the
  free slots that were written lose their (now stale) owners in the starting cache. Nothing
  is copied. After a transaction that succeeded, the state it started from is spent.

The slot bookkeeping is host arrays (``owner``, ``used``, ``slot_of``, the FIFO ``free``),
changed only through the compiled helpers below, so that a compiled path loop
(:mod:`gpath._mid_numba`) keeps the same books without returning to Python.

Memory: ``8 · slots · buffer_rows`` bytes (float64) with ``buffer_rows ≤ 1.25 · (n + m) + m``
after adding m points to n; ``max_columns`` bounds the slots.
"""

from __future__ import annotations

from contextlib import contextmanager

import numpy as np
from numba import njit

from ._array_api import is_numpy, namespace_by_name, to_device, to_host
from ._threads import in_row_blocks
from .linalg import single_threaded_host_blas

__all__ = ["CacheFullError", "QColumnCache", "max_columns", "spare_rows"]


class CacheFullError(MemoryError):
    """The margin set needs more kernel columns than ``cache_size`` allows."""


_CHUNK = 2048  # rows of a product's result that stay in the first-level cache


@njit(nogil=True, cache=True, fastmath=True)
def _absolute_product(start, stop, data, slots, coef, out):  # pragma: no cover - compiled
    """``out[start:stop] = Σ_k coef_k |data[slots_k, start:stop]|``, by chunks of ``out`` that
    stay in cache while the columns stream past."""
    for lo in range(start, stop, _CHUNK):
        hi = min(lo + _CHUNK, stop)
        out[lo:hi] = 0.0
        for k in range(slots.shape[0]):
            c, column = coef[k], data[slots[k]]
            for t in range(lo, hi):
                out[t] += c * abs(column[t])


_NO_ROWS = np.zeros(0, dtype=np.int64)
_NO_SIZES = np.zeros(0)


@njit(cache=True, fastmath=True)
def _column_dots(data, slots, rows, top, values, sizes):  # pragma: no cover - compiled
    """:meth:`QColumnCache.column_dots` on the host: ``values`` moved to buffer order (``rows``:
    the buffer row of each training row, empty for the identity), then one dot per slot.
    Where ``sizes`` has a place per slot (else it is empty), each dot's Σ_t |term_t| goes there
    too: the scale of its round-off."""
    out = np.empty(slots.shape[0])
    _slot_dots(0, slots.shape[0], data, slots, _buffered(values, rows, top), top, out, sizes)
    return out


@njit(cache=True)
def identity_rows(rows, top):  # pragma: no cover - compiled
    """Whether the buffer rows ``rows`` of the training rows are 0..top − 1: the identity, which
    a cache keeps as None (its products then read the buffer as it is)."""
    if rows.shape[0] != top:
        return False
    for t in range(top):
        if rows[t] != t:
            return False
    return True


@njit(cache=True)
def rows_rebuilt(top, n_rows):  # pragma: no cover - compiled
    """Whether a buffer of ``top`` rows in use for ``n_rows`` live ones goes to a new one of
    the live rows (:meth:`QColumnCache.with_spare_rows`): past a quarter of them and 64 more
    dead rows, the products would read more dead rows than the copy costs."""
    return top > n_rows + n_rows // 4 + 64


@njit(cache=True)
def _buffered(values, rows, top):  # pragma: no cover - compiled
    """``values`` in buffer order (``rows`` empty: already)."""
    if rows.shape[0] == 0:
        return values
    buffered = np.zeros(top)
    for t in range(rows.shape[0]):
        buffered[rows[t]] = values[t]
    return buffered


@njit(nogil=True, cache=True, fastmath=True)
def _slot_dots(lo, hi, data, slots, buffered, top, out, sizes):  # pragma: no cover - compiled
    """:func:`_column_dots` of the slots ``lo:hi`` (each dot the same whatever the split)."""
    for k in range(lo, hi):
        column = data[slots[k]]
        acc = 0.0
        if sizes.shape[0]:
            size = 0.0
            for t in range(top):
                term = column[t] * buffered[t]
                acc += term
                size += abs(term)
            sizes[k] = size
        else:
            for t in range(top):
                acc += column[t] * buffered[t]
        out[k] = acc


@njit(cache=True)
def _renumbered(owner, new_index):  # pragma: no cover - compiled
    """:meth:`QColumnCache.renumber`: ``owner`` mapped through ``new_index`` in place, and the
    new ``slot_of`` (room for every surviving point). A removed point never holds a used slot
    (R leaves M before the path starts); a free slot whose point was removed holds none."""
    size = 0
    for k in range(new_index.shape[0]):
        if new_index[k] >= 0:
            size += 1
    for slot in range(owner.shape[0]):
        if owner[slot] >= 0:
            owner[slot] = new_index[owner[slot]]
            size = max(size, owner[slot] + 1)
    slot_of = np.full(size, -1, dtype=np.int64)
    for slot in range(owner.shape[0]):
        if owner[slot] >= 0:
            slot_of[owner[slot]] = slot
    return slot_of


@njit(cache=True)
def _appended_kept(owner, used, free, counts, data, top, rows, extra, keep, new_index):  # pragma: no cover - compiled
    """:meth:`QColumnCache.appended_kept`'s books: the rows ``extra`` written at ``top``, the
    books copied, the owners renumbered (``slot_of`` made anew, :func:`_renumbered`), and the
    buffer row of each kept row (``rows`` empty: the identity)."""
    m = extra.shape[1]
    for s in range(owner.shape[0]):
        for j in range(m):
            data[s, top + j] = extra[s, j]
    owner2, used2, free2, counts2 = owner.copy(), used.copy(), free.copy(), counts.copy()
    n_old = new_index.shape[0] - m
    kept_rows = np.empty(keep.shape[0], dtype=np.int64)
    for t in range(keep.shape[0]):
        k = keep[t]
        if k >= n_old:
            kept_rows[t] = top + (k - n_old)
        else:
            kept_rows[t] = k if rows.shape[0] == 0 else rows[k]
    return owner2, used2, free2, counts2, _renumbered(owner2, new_index), kept_rows


# ---------------------------------------------------------------------- bookkeeping
# ``books`` = (owner (capacity,), used (capacity,), slot_of (points,), free (capacity,),
# counts = [number of free slots], protected (capacity,): slots a store must not take).


@njit(cache=True)
def _lookup(owner, used, slot_of, free, counts, point):
    """Claim the free slot still holding ``point``'s column; -1 if there is none."""
    if point >= slot_of.shape[0]:
        return -1
    slot = slot_of[point]
    if slot < 0 or used[slot]:
        return -1
    n_free = counts[0]
    for i in range(n_free):
        if free[i] == slot:
            for j in range(i, n_free - 1):
                free[j] = free[j + 1]
            counts[0] = n_free - 1
            break
    used[slot] = True
    return slot


@njit(cache=True)
def _claim(owner, used, slot_of, free, counts, protected, point):
    """Take the first free slot that is not protected for ``point`` (its former owner loses
    it); -1 if there is none."""
    n_free = counts[0]
    for i in range(n_free):
        slot = free[i]
        if protected.shape[0] > slot and protected[slot]:
            continue
        for j in range(i, n_free - 1):
            free[j] = free[j + 1]
        counts[0] = n_free - 1
        old = owner[slot]
        if old >= 0 and old < slot_of.shape[0] and slot_of[old] == slot:
            slot_of[old] = -1
        owner[slot] = point
        used[slot] = True
        slot_of[point] = slot
        return slot
    return -1


@njit(cache=True)
def _claim_block(owner, used, slot_of, free, counts, protected, points, slots):
    """:func:`_claim` for each of ``points`` in turn, into ``slots``; returns how many were
    claimed before the free slots ran out."""
    for i in range(points.shape[0]):
        slot = _claim(owner, used, slot_of, free, counts, protected, points[i])
        if slot < 0:
            return i
        slots[i] = slot
    return points.shape[0]


@njit(cache=True)
def _release(used, slot_of, free, counts, point):
    """Mark ``point``'s slot free (last in the FIFO), keeping its column for a lookup."""
    slot = slot_of[point]
    used[slot] = False
    free[counts[0]] = slot
    counts[0] += 1


class QColumnCache:
    """Device-resident columns ``Q[:, k]`` of the margin points, one slot per column.

    Parameters
    ----------
    xp : namespace
    device : device
    n_rows : int
        Number of training points (rows of every column); point ids are their rows.
    capacity : int
        Initial number of slots; doubled when full.
    max_columns : int or None
        Most slots the cache may hold (from the estimators' ``cache_size`` in MB, see
        :func:`max_columns`); None for no limit. When every slot holds a margin column and
        another is needed, :meth:`store` raises :class:`CacheFullError`.
    spare_rows : int
        Buffer rows reserved past the training rows for rows updates append (zeros that no
        step touches until a row is written there; see :func:`spare_rows`).
    """

    def __init__(self, xp, device, n_rows: int, capacity: int = 16, max_columns: int | None = None,
                 spare_rows: int = 0):
        self.xp, self.device = xp, device
        self._numpy = is_numpy(xp)
        self.max_columns = max_columns
        capacity = max(capacity, 1)
        self.data = xp.zeros((capacity, n_rows + spare_rows), dtype=xp.float64, device=device)
        self.n_rows = n_rows
        self.top = n_rows  # buffer rows in use (live or dead)
        self._set_rows(None)
        self.owner = np.full(capacity, -1, dtype=np.int64)  # point held by a slot
        self.used = np.zeros(capacity, dtype=bool)
        self.slot_of = np.full(n_rows, -1, dtype=np.int64)  # slot holding a point's column
        self.free = np.arange(capacity, dtype=np.int64)
        self.counts = np.array([capacity], dtype=np.int64)
        self.n_columns_computed = 0
        self._txn = None  # the open transaction, shared by the caches derived within it

    def __getstate__(self):
        # The used columns' live rows in training order: what a pickle holds depends neither on
        # the buffer nor on the stale columns of free slots.
        used = np.flatnonzero(self.used)
        state = {**self.__dict__, "xp": self.xp.__name__, "_txn": None, "data": None, "_rows": None,
                 "_inv": None, "rows_host": None, "top": self.n_rows,
                 "owner": np.where(self.used, self.owner, -1), "slot_of": None, "free": self.free[: self.counts[0]],
                 "_used_columns": [self.column(int(s)) for s in used]}
        return state

    def __setstate__(self, state):
        columns = state.pop("_used_columns")
        self.__dict__.update(state, xp=namespace_by_name(state["xp"]))
        xp, capacity = self.xp, self.owner.shape[0]
        self.data = xp.zeros((capacity, self.n_rows), dtype=xp.float64, device=self.device)
        for slot, column in zip(np.flatnonzero(self.used), columns):
            self.data[int(slot), :] = column
        held = self.owner >= 0
        self.slot_of = np.full(max(self.n_rows, int(self.owner.max(initial=-1)) + 1), -1, dtype=np.int64)
        self.slot_of[self.owner[held]] = np.flatnonzero(held)
        free = np.full(capacity, -1, dtype=np.int64)
        free[: self.free.shape[0]] = self.free
        self.free = free

    @property
    def capacity(self) -> int:
        """Number of slots."""
        return self.data.shape[0]

    def _protected(self) -> np.ndarray:
        """Slots a store must not take: those in use when the open transaction began, while
        this cache still writes into that transaction's buffer."""
        txn = self._txn
        if txn is not None and txn.open and self.data is txn.buffer:
            return txn.protected
        return _NONE

    # ------------------------------------------------------------------ rows
    def _set_rows(self, rows_host) -> None:
        """``rows_host``: buffer row of each training row (host ints), None for the identity."""
        if rows_host is not None and identity_rows(np.asarray(rows_host, dtype=np.int64), self.top):
            rows_host = None
        self.rows_host = rows_host
        self._rows = None if rows_host is None else to_device(rows_host, self.xp, self.device)
        self._inv = None  # made by _to_buffer when first needed

    def _derived(self, n_points: int | None = None) -> QColumnCache:
        """A new cache object on the same buffer, with its own bookkeeping (``slot_of`` for
        ``n_points`` points)."""
        new = object.__new__(QColumnCache)
        new.__dict__.update(self.__dict__)
        new.owner, new.used, new.free, new.counts = (a.copy() for a in (self.owner, self.used, self.free, self.counts))
        n_points = self.slot_of.shape[0] if n_points is None else n_points
        new.slot_of = np.full(n_points, -1, dtype=np.int64)
        keep = min(n_points, self.slot_of.shape[0])
        new.slot_of[:keep] = self.slot_of[:keep]
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
        new = base._derived(base.n_rows + m)
        # Buffer rows past ``top`` belong to no state: write there in place.
        new.data[:, base.top : base.top + m] = extra
        rows = np.arange(base.n_rows) if base.rows_host is None else base.rows_host
        rows = np.concatenate([rows, np.arange(base.top, base.top + m)])
        new.n_rows, new.top = rows.size, base.top + m
        new._set_rows(rows)
        return new

    def with_books(self, books: tuple, top: int, rows: np.ndarray, max_columns, computed: int) -> QColumnCache:
        """A cache on this one's buffer with the books a compiled path made for it: ``books``
        (owner, used, slot_of, free, counts), ``top`` buffer rows in use, ``rows`` the buffer row
        of each training row (host ints), ``max_columns``, and ``computed`` more columns counted."""
        new = object.__new__(QColumnCache)
        new.__dict__.update(self.__dict__)
        new.owner, new.used, new.slot_of, new.free, new.counts = books
        new.top, new.n_rows, new.max_columns = int(top), rows.size, max_columns
        new.n_columns_computed += int(computed)
        new._set_rows(rows)
        return new

    def appended_kept(self, extra: np.ndarray, keep: np.ndarray, new_index: np.ndarray) -> QColumnCache:
        """:meth:`with_rows_appended` (``extra``, host), then :meth:`keep_rows` (``keep``) and
        :meth:`renumber` (``new_index``) of that cache, its books in one compiled pass: an
        update that moves no coefficient on NumPy (some 50 µs of NumPy steps a window's update
        paid for them)."""
        m = extra.shape[1]
        base = self if self.top + m <= self.data.shape[1] else self.with_spare_rows(m)
        new = object.__new__(QColumnCache)
        new.__dict__.update(base.__dict__)
        new.owner, new.used, new.free, new.counts, new.slot_of, kept_rows = _appended_kept(
            base.owner, base.used, base.free, base.counts, base.data, base.top,
            _NO_ROWS if base.rows_host is None else base.rows_host, extra, keep, new_index)
        new.top, new.n_rows = base.top + m, keep.size
        new._set_rows(kept_rows)
        if rows_rebuilt(new.top, keep.size):
            new.__dict__.update(new.with_spare_rows().__dict__)
        return new

    def with_spare_rows(self, m: int = 0) -> QColumnCache:
        """A copy holding only the live rows, with room for ``m`` and a quarter more; this cache
        itself where it holds only live rows and has that room (a fit's, made with
        :func:`spare_rows`: copying its buffer took 1 s of a 2.7 s ε-SVR fit at n = 10,000)."""
        xp, n = self.xp, self.n_rows
        if self.rows_host is None and self.top == n and self.data.shape[1] >= n + spare_rows(n + m) + m:
            return self
        new = self._derived()
        new.data = xp.zeros((self.capacity, n + spare_rows(n + m) + m), dtype=self.data.dtype, device=self.device)
        new.data[:, :n] = self.data[:, :n] if self._rows is None else xp.take(self.data, self._rows, axis=1)
        new.top = n
        new._set_rows(None)
        return new

    def with_rows_kept(self, keep: np.ndarray) -> QColumnCache:
        """The cache of the training rows ``keep`` (host ints), in that order; no copy unless
        the dead rows would then outnumber a quarter of the live ones (a rebuild). Point ids
        are not renumbered here (see :meth:`renumber`)."""
        new = self._derived()
        new.keep_rows(keep)
        return new

    def keep_rows(self, keep: np.ndarray) -> None:
        """:meth:`with_rows_kept` in place, for a cache no other state holds (one derived for
        the state a path makes)."""
        rows = np.arange(self.n_rows) if self.rows_host is None else self.rows_host
        self.n_rows = keep.size
        self._set_rows(rows[keep])
        if rows_rebuilt(self.top, keep.size):
            self.__dict__.update(self.with_spare_rows().__dict__)

    def _to_buffer(self, values):
        """A training-order vector (n_rows,) in buffer order (top,), 0 on dead rows."""
        if self.rows_host is None:
            return values
        if self._inv is None:
            inv = np.full(self.top, self.n_rows, dtype=np.int64)  # dead buffer rows -> a zero
            inv[self.rows_host] = np.arange(self.n_rows)
            self._inv = to_device(inv, self.xp, self.device)
        padded = self.xp.concat([values, self.xp.zeros(1, dtype=values.dtype, device=self.device)])
        return self.xp.take(padded, self._inv)

    def _to_rows(self, buffered):
        """A buffer-order vector (top,) in training order (n_rows,)."""
        return buffered if self._rows is None else self.xp.take(buffered, self._rows)

    # ------------------------------------------------------------------ slots
    def slot(self, point: int) -> int:
        """The slot holding ``point``'s column (used or not), or -1."""
        return int(self.slot_of[point]) if point < self.slot_of.shape[0] else -1

    def holds_any(self, points: np.ndarray) -> bool:
        """Whether the column of any of ``points`` (host ints) is held (used or not)."""
        known = points[points < self.slot_of.shape[0]]
        return bool(np.any(self.slot_of[known] >= 0))

    def _ensure(self, point: int) -> None:
        """Room in ``slot_of`` for point ids up to ``point``."""
        if point >= self.slot_of.shape[0]:
            grown = np.full(max(point + 1, 2 * self.slot_of.shape[0]), -1, dtype=np.int64)
            grown[: self.slot_of.shape[0]] = self.slot_of
            self.slot_of = grown

    def compact(self) -> bool:
        """Move the used columns to the front and drop the stale ones, when the products
        would otherwise read many free slots (after SimpleSVM, or a margin set that shrank).
        Returns whether the slots changed."""
        used = np.flatnonzero(self.used)
        hi = int(used[-1]) + 1 if used.size else 0
        if hi <= 2 * used.size + 16:
            return False
        xp = self.xp
        capacity = max(16, 2 * used.size)
        data = xp.take(self.data, to_device(used, xp, self.device), axis=0)
        pad = xp.zeros((capacity - used.size, self.data.shape[1]), dtype=self.data.dtype, device=self.device)
        self.data = xp.concat([data, pad], axis=0)
        owners = self.owner[used]
        self.owner = np.concatenate([owners, np.full(capacity - used.size, -1, dtype=np.int64)])
        self.used = np.arange(capacity) < used.size
        self.slot_of[:] = -1
        self._ensure(int(owners.max(initial=-1)))
        self.slot_of[owners] = np.arange(used.size)
        self.free = np.arange(capacity, dtype=np.int64)
        self.free[: capacity - used.size] = np.arange(used.size, capacity)
        self.counts[0] = capacity - used.size
        return True

    def renumber(self, new_index: np.ndarray) -> None:
        """Map owners through ``new_index`` (old point -> new point, -1 = removed)."""
        self.slot_of = _renumbered(self.owner, np.ascontiguousarray(new_index, dtype=np.int64))

    def lookup(self, point: int):
        """Claim the slot still holding ``point``'s column, or return None."""
        slot = _lookup(self.owner, self.used, self.slot_of, self.free, self.counts, point)
        return None if slot < 0 else int(slot)

    def store(self, point: int, column) -> int:
        """Put ``column`` (device, shape (n_rows,), training order) for ``point`` in a free
        slot; return the slot.

        Raises
        ------
        CacheFullError
            If every slot allowed by ``max_columns`` holds a margin column.
        """
        used = int(np.count_nonzero(self.used))
        if self.max_columns is not None and used >= self.max_columns:
            self._full(used)
        self._ensure(point)
        slot = _claim(self.owner, self.used, self.slot_of, self.free, self.counts, self._protected(), point)
        if slot < 0:
            self._grow()
            slot = _claim(self.owner, self.used, self.slot_of, self.free, self.counts, self._protected(), point)
        self.write(slot, column)
        return int(slot)

    def store_block(self, points: np.ndarray, columns) -> np.ndarray:
        """:meth:`store` of each of ``points`` (host ints, distinct) with its column
        ``columns[:, j]`` (device, shape (n_rows, len(points)), training order), in that
        order: the same slots as one :meth:`store` after another, with the bookkeeping in
        one compiled pass and the columns written at once (SimpleSVM's start enters some
        thousand margin columns, and a call of :meth:`store` each cost some 10 µs of Python).
        Returns the slots (host ints).

        Raises
        ------
        CacheFullError
            As :meth:`store`, before any column is stored.
        """
        points = np.ascontiguousarray(points, dtype=np.int64)
        if points.size == 0:
            return points
        used = int(np.count_nonzero(self.used))
        if self.max_columns is not None and used + points.size > self.max_columns:
            self._full(max(used, self.max_columns))
        self._ensure(int(points.max()))
        slots = np.empty(points.size, dtype=np.int64)
        done = _claim_block(self.owner, self.used, self.slot_of, self.free, self.counts, self._protected(), points,
                            slots)
        while done < points.size:  # no free slot left: more of them (or a new buffer)
            self._grow()
            claimed = _claim_block(self.owner, self.used, self.slot_of, self.free, self.counts, self._protected(),
                                   points[done:], slots[done:])
            if claimed == 0:
                self._full(self.capacity)
            done += claimed
        if self._numpy:
            if self.rows_host is None:
                self.data[slots, : self.top] = columns.T
            else:
                self.data[slots, : self.top] = 0.0
                self.data[np.ix_(slots, self.rows_host)] = columns.T
            txn = self._txn
            if txn is not None and txn.open and self.data is txn.buffer:
                txn.written[slots] = True
        else:
            for j, slot in enumerate(slots.tolist()):
                self.write(slot, columns[:, j])
        return slots

    def write(self, slot: int, column) -> None:
        """Write ``column`` (training order) into ``slot`` of the buffer."""
        if self.rows_host is None:
            self.data[slot, : self.top] = column
        elif self._numpy:
            self.data[slot, : self.top] = 0.0
            self.data[slot, self.rows_host] = column
        else:
            self.data[slot, : self.top] = self._to_buffer(column)
        txn = self._txn
        if txn is not None and txn.open and self.data is txn.buffer:
            txn.written[slot] = True

    def release(self, point: int) -> None:
        """Mark ``point``'s slot free, keeping its column for a later :meth:`lookup`."""
        _release(self.used, self.slot_of, self.free, self.counts, point)

    @contextmanager
    def transaction(self):
        """Keep the columns this cache uses intact through the block, and forget the ones the
        block overwrote in free slots if it raises (module docstring).

        Caches derived inside the block share the transaction; a nested transaction belongs
        to the outermost one."""
        if self._txn is not None and self._txn.open:
            yield
            return
        self._txn = txn = _Transaction(self)
        try:
            yield
        except BaseException:
            self.forget(txn.written[: self.capacity])
            raise
        finally:
            txn.close()
            self._txn = None

    def forget(self, written: np.ndarray) -> None:
        """The free slots ``written`` (a host bool mask of slots) since this cache's books were
        made lose their owners here: they no longer hold those columns."""
        for slot in np.flatnonzero(written):
            old = self.owner[slot]
            if old >= 0 and self.slot_of[old] == slot:
                self.slot_of[old] = -1
            self.owner[slot] = -1

    # ------------------------------------------------------------------ products
    def column(self, slot: int):
        """The column held in ``slot`` (device, shape (n_rows,), training order)."""
        if self._rows is None:
            return self.data[slot, : self.n_rows]
        return self.xp.take(self.data[slot, :], self._rows)

    def entries(self, slot: int, rows):
        """``Q[rows, owner]`` for the column in ``slot`` (device; ``rows``: host ints)."""
        buffer_rows = rows if self.rows_host is None else self.rows_host[rows]
        if self._numpy:
            return self.data[slot, buffer_rows]
        return self.xp.take(self.data[slot, :], to_device(np.asarray(buffer_rows), self.xp, self.device))

    def row_entries(self, row: int, slots: np.ndarray) -> np.ndarray:
        """``Q[row, owner(s)]`` for each slot s (host, shape (len(slots),))."""
        buffer_row = row if self.rows_host is None else int(self.rows_host[row])
        return to_host(self.data[:, buffer_row])[np.asarray(slots, dtype=np.int64)]

    def matvec(self, coef_by_slot: np.ndarray, absolute: bool = False):
        """``Q[:, slots] @ coef`` on the device (n_rows,); ``coef_by_slot``: host (capacity,).
        With ``absolute``, ``|Q[:, slots]| @ coef`` (the size of the terms of the product)."""
        nonzero = np.flatnonzero(coef_by_slot)
        if nonzero.size == 0:
            return self.xp.zeros(self.n_rows, dtype=self.data.dtype, device=self.device)
        if absolute and self._numpy:
            # Compiled: ``abs`` of the columns first would write a copy of all of them (an
            # SVC fit's scale at |M| = 2,000 of n = 10,000: a 160 MB copy, 0.04–0.06 s against
            # 0.02–0.03 s, and up to 0.35 s where fresh memory is slow to touch).
            out = np.empty(self.top)
            in_row_blocks(_absolute_product, self.top, self.data, nonzero, coef_by_slot[nonzero], out,
                          min_rows=_CHUNK)
            return self._to_rows(out)
        hi = int(nonzero[-1]) + 1
        coef = to_device(coef_by_slot[:hi], self.xp, self.device)
        columns = self.data[:hi, : self.top]
        return self._to_rows(coef @ (self.xp.abs(columns) if absolute else columns))

    def column_dots(self, slots: np.ndarray, values: np.ndarray) -> np.ndarray:
        """``Q[:, owner(s)] · values`` for each slot s (host (len(slots),)); ``values``: host
        (n_rows,), training order. On NumPy one compiled pass, one dot per slot asked for; else
        one product with the slots up to the last one asked for (no copy of the columns).

        The compiled pass reads only the slots asked for, where the product reads every slot
        below the last (the free ones too) and launches BLAS: 63 µs against 109 at 352 slots
        of 576 over 1,129 rows (a window of 1,000), 2.8 ms against 3.4 at 516 of 800 over
        10,500, 2.9 µs against 7.3 at 30 of 64 (one thread)."""
        slots = np.asarray(slots, dtype=np.int64)
        if self._numpy:
            rows = _NO_ROWS if self.rows_host is None else self.rows_host
            return _column_dots(self.data, slots, rows, self.top, np.ascontiguousarray(values, dtype=np.float64),
                                _NO_SIZES)
        return self._product_dots(slots, values)

    @single_threaded_host_blas
    def _product_dots(self, slots: np.ndarray, values: np.ndarray) -> np.ndarray:
        """:meth:`column_dots` by one product (BLAS on one thread: the path's compiled passes
        follow it)."""
        hi = int(slots.max(initial=-1)) + 1
        dots = self.data[:hi, : self.top] @ self._to_buffer(to_device(values, self.xp, self.device))
        return to_host(self.xp.take(dots, to_device(slots, self.xp, self.device)))

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
            "buffer's spare rows); raise cache_size, or make the margin set smaller (usually a lower C, a "
            "smaller gamma, or a subsample of the data). The model is left as it was before this call"
        )

    def reserve(self, columns: int) -> None:
        """Room for ``columns`` slots (within ``max_columns``) in one step, for a caller about to
        store that many: growth by doubling would copy the buffer at every step."""
        target = columns if self.max_columns is None else min(columns, self.max_columns)
        if target > self.capacity:
            self._grow(target - self.capacity)

    def _grow(self, extra: int | None = None) -> None:
        """Double the slots, or add ``extra`` (a new buffer: a transaction's protection ends
        with its old one)."""
        xp, old = self.xp, self.capacity
        if extra is None:
            extra = old if self.max_columns is None else min(old, self.max_columns - old)
        if extra <= 0:
            if int(np.count_nonzero(~self.used)):  # free slots, all protected: a new buffer
                extra = 0
            else:
                self._full(old)
        # The new slots are zeros never written here: the host's zeroed pages are only touched
        # when a column is stored (a fit's reserve of 4,000 slots at n = 10,000: 0.025 s
        # against 0.001 s, and up to 0.18 s where fresh memory is slow to touch).
        data = xp.zeros((old + extra, self.data.shape[1]), dtype=self.data.dtype, device=self.device)
        data[:old, : self.top] = self.data[:, : self.top]  # the spare rows stay untouched zeros
        self.data = data
        self.owner = np.concatenate([self.owner, np.full(extra, -1, dtype=np.int64)])
        self.used = np.concatenate([self.used, np.zeros(extra, dtype=bool)])
        free = np.full(old + extra, -1, dtype=np.int64)
        n_free = int(self.counts[0])
        free[:n_free] = self.free[:n_free]
        free[n_free : n_free + extra] = np.arange(old, old + extra)
        self.free = free
        self.counts[0] = n_free + extra


_NONE = np.zeros(0, dtype=bool)


class _Transaction:
    """The starting buffer of a transaction, the slots it protects and the slots written."""

    def __init__(self, cache: QColumnCache):
        self.open, self.buffer = True, cache.data
        self.protected = cache.used.copy()
        self.written = np.zeros(cache.capacity, dtype=bool)

    def close(self) -> None:
        self.open, self.buffer = False, None


def spare_rows(n_rows: int) -> int:
    """The rows a cache of ``n_rows`` rows keeps spare for the rows updates append: a quarter
    more (a window's updates then rebuild it once every n/4 added rows)."""
    return n_rows // 4


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
