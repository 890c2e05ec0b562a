"""The active set of a path: the one place where points enter and leave it.

Every algorithm of gpath keeps a set of points whose coefficients are free (MID's margin set
M, SimpleSVM's working set, the kink path's points at a kink). Entering and leaving it always
means the same three things, kept together here:

- the points in factor order (the factor's basis) and the cache slot of each one's column,
  so that ``Q[:, S] φ`` reads the cached columns by slot;
- the factor of the set's matrix (:class:`gpath.linalg.BorderedFactor`, host): a new row and
  column from the cached column's entries, or a row and column removed;
- the device cache of the columns (:class:`gpath.cache.QColumnCache`): a point that comes back
  while its column is still cached costs no kernel evaluation.
"""

from __future__ import annotations

import inspect
import weakref

import numpy as np
from numba import njit

from ._array_api import to_device, to_host
from .linalg import SingularMarginError

__all__ = ["ActiveSet"]


@njit(cache=True)
def _find(members, k):
    for j in range(members.shape[0]):
        if members[j] == k:
            return j
    return -1


class ActiveSet:
    """Points of the active set, the factor of their matrix, and their cached columns.

    Parameters
    ----------
    factor : BorderedFactor
        Empty, or holding exactly the points of ``slots``' owners (its basis).
    cache : QColumnCache
    column : callable or None
        ``column(k)`` -> device array of shape (n,): Q[:, k], for a point whose column is not
        cached (set by the owner of the set; not pickled). A bound method of the owner is
        held by a weak reference: the owner holds the set, and a strong reference back would
        make every state an update leaves behind a reference cycle, freed only by Python's
        cyclic collector (with all its arrays: some hundred states at a time, 0.6 ms a
        collection at n = 600, and memory that the next states cannot reuse).
    slots : ndarray of shape (|S|,), int, or None
        Cache slot of each point of a non-empty ``factor``, in factor order.
    """

    def __init__(self, factor, cache, column=None, slots=None):
        self.factor, self.cache, self.column = factor, cache, column
        # As many slots as the factor has room for points: the compiled path loop writes both.
        self._slots = np.zeros(max(16, 2 * factor.size, factor.capacity), dtype=np.int64)
        if slots is not None:
            self._slots[: len(slots)] = slots

    @classmethod
    def of(cls, factor, cache, column, slots: np.ndarray) -> ActiveSet:
        """The set of ``factor`` with its ``slots`` array itself (capacity-sized, as the compiled
        path loop leaves it), not a copy."""
        new = object.__new__(cls)
        new.factor, new.cache, new.column, new._slots = factor, cache, column, slots
        return new

    def __getstate__(self):
        return {**self.__dict__, "_column": None}

    @property
    def column(self):
        """The owner's ``column`` callable (None if unset).

        Raises
        ------
        ReferenceError
            If it was a method of an owner that is gone (a set outliving its state)."""
        column = self._column
        if not isinstance(column, weakref.WeakMethod):
            return column
        method = column()
        if method is None:
            raise ReferenceError("the active set's owner is gone: its columns cannot be computed")
        return method

    @column.setter
    def column(self, column) -> None:
        self._column = weakref.WeakMethod(column) if inspect.ismethod(column) else column

    # ------------------------------------------------------------------ views
    @property
    def size(self) -> int:
        """|S|."""
        return self.factor.size

    @property
    def members(self) -> np.ndarray:
        """The points, in factor order (a view: copy it to keep it)."""
        return self.factor.basis

    @property
    def slots(self) -> np.ndarray:
        """The cache slot of each point, in factor order (a view)."""
        return self._slots[: self.factor.size]

    def position(self, k: int) -> int:
        """Position of point k in factor order.

        Raises
        ------
        KeyError
            If k is not in the set.
        """
        j = _find(self.members, k)
        if j < 0:
            raise KeyError(f"point {k} is not in the active set")
        return j

    def copy(self, cache, column=None, share: bool = False) -> ActiveSet:
        """An independent copy of the set on ``cache`` (a cache derived from this one's). Its
        factor goes into the arrays of this set's ``factor.spare`` (a spent factor, or one made
        for it: :meth:`gpath._path.SVCState.prepare_updates`), if any; with ``share``, it
        holds this factor's R and Q_MM until either writes them
        (:meth:`gpath.linalg.BorderedFactor.share`)."""
        factor = self.factor.share() if share else self.factor.copy(into=getattr(self.factor, "spare", None))
        return ActiveSet(factor, cache, column, self.slots.copy())

    # ------------------------------------------------------------------ changes
    def enter(self, k: int, label, column=None) -> float:
        """Point k joins the set: its column (cached, ``column`` if given, else computed) and one
        row and column of the factor.

        Parameters
        ----------
        k : int
        label : float or None
            y_k (±1) for a bordered factor; None without the border.
        column : device array of shape (n,) or None
            Q[:, k] when the caller has it already (e.g. a point being added).

        Returns
        -------
        q_kk : float
            The new diagonal entry Q[k, k].

        Raises
        ------
        SingularMarginError
            If the set's matrix would become singular; the set is unchanged (the column stays
            cached for a later attempt).
        """
        cache = self.cache
        slot = cache.lookup(k)
        if slot is None:
            slot = cache.store(k, self.column(k) if column is None else column)
        q = to_host(cache.entries(slot, np.append(self.members, k)))
        try:
            self.factor.insert(k, label, q[:-1], q[-1])
        except SingularMarginError:
            cache.release(k)
            raise
        m = self.factor.size
        if m > self._slots.shape[0]:
            self._slots = np.concatenate([self._slots, np.zeros(self._slots.shape[0], dtype=np.int64)])
        self._slots[m - 1] = slot
        return float(q[-1])

    def enter_block(self, ks: np.ndarray, labels, columns=None) -> np.ndarray | None:
        """Points ``ks`` (none in the set) join the set together
        (:meth:`gpath.linalg.BorderedFactor.insert_block`).

        Parameters
        ----------
        ks : host int array of shape (p,)
        labels : host array of shape (p,) or None
            As :meth:`enter`.
        columns : device array of shape (n, p) or None
            Their columns ``Q[:, ks]``, stored here (none of them may be cached); None: their
            columns are taken from the cache (computed where it no longer holds them).

        Returns
        -------
        ndarray of shape (len(ks),) or None
            Their diagonal entries Q[k, k]; None, the set unchanged, if the block step would
            take a tiny pivot (the caller enters them one at a time with :meth:`enter`; their
            columns stay cached).
        """
        cache, m = self.cache, self.size
        rows = np.concatenate([self.members, ks])
        if columns is None:
            # Claimed one by one, as enter claims them: a column held but not in use may have
            # given its slot to another point's since (it is computed again).
            slots = []
            for k in ks.tolist():
                slot = cache.lookup(k)
                slots.append(cache.store(k, self.column(k)) if slot is None else slot)
            q = np.stack([to_host(cache.entries(slot, rows)) for slot in slots])
        else:
            slots = cache.store_block(ks, columns)
            xp = cache.xp
            # Gathered along the rows of columns.T: NumPy's take along the rows of a Fortran-ordered
            # block (the kernel blocks' layout) copies the whole block first (SimpleSVM's start at
            # |M| = 3,456, ε-SVR on make_friedman1: 0.9 of its 3.2 s).
            q = np.ascontiguousarray(to_host(xp.take(columns.T, to_device(rows, xp, cache.device), axis=1)))
        if not self.factor.insert_block(np.asarray(ks, dtype=np.int64), labels, q[:, :m], q[:, m:]):
            for k in ks:
                cache.release(int(k))
            return None
        end = m + len(ks)
        if end > self._slots.shape[0]:
            self._slots = np.concatenate([self._slots, np.zeros(max(end, self._slots.shape[0]), dtype=np.int64)])
        self._slots[m:end] = slots
        return np.diagonal(q[:, m:]).copy()

    def leave(self, k: int) -> None:
        """Point k leaves the set (its column stays cached until the slot is reused).

        Raises
        ------
        KeyError
            If k is not in the set.
        """
        j = self.position(k)
        m = self.factor.size
        self.factor.delete(j)
        self._slots[j : m - 1] = self._slots[j + 1 : m].copy()
        self.cache.release(k)

    def solve(self, rhs: np.ndarray, check: bool = True) -> np.ndarray:
        """The factor's solve (see :meth:`gpath.linalg.BorderedFactor.solve`)."""
        return self.factor.solve(rhs, check)

    def compact(self) -> None:
        """Compact the cache (:meth:`gpath.cache.QColumnCache.compact`) and follow its slots."""
        if self.cache.compact():
            self._slots[: self.size] = self.cache.slot_of[self.members]

    def renumber(self, new_index: np.ndarray) -> None:
        """Map the point ids through ``new_index`` (old -> new; the set's points must survive)."""
        self.factor.renumber(new_index)
        self.cache.renumber(new_index)
