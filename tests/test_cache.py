"""The device cache of margin columns: slots, the append-only row buffer, transactions."""

import pickle

import numpy as np
import pytest

from gpath._array_api import to_host
from gpath.cache import CacheFullError, QColumnCache


def test_cache_reuses_freed_columns_and_grows(backend):
    rng = np.random.default_rng(0)
    cols = rng.standard_normal((10, 40))
    cache = QColumnCache(backend.xp, backend.device, 10, capacity=2)
    for p in range(5):
        cache.store(p, backend.asarray(cols[:, p]))
    assert cache.capacity == 8
    cache.release(1)
    assert cache.lookup(1) == cache.slot_of[1]  # still there: no recomputation
    cache.release(3)
    for p in range(5, 9):  # fill the free slots, then take the one that held point 3
        cache.store(p, backend.asarray(cols[:, p]))
    assert cache.lookup(3) is None
    coef = np.zeros(cache.capacity)
    members = [0, 1, 2, 4, 5, 6, 7, 8]
    weights = rng.standard_normal(len(members))
    for p, w in zip(members, weights):
        coef[cache.slot_of[p]] = w
    got = backend.check(cache.matvec(coef), (10,))
    np.testing.assert_allclose(got, cols[:, members] @ weights, rtol=1e-13, atol=1e-13)


def test_cache_limit_raises_when_the_margin_needs_more(backend):
    cache = QColumnCache(backend.xp, backend.device, 5, capacity=2, max_columns=3)
    for p in range(3):
        cache.store(p, backend.asarray(np.full(5, float(p))))
    assert cache.capacity == 3
    cache.release(1)
    cache.store(3, backend.asarray(np.ones(5)))  # a freed slot is reused: no growth
    with pytest.raises(CacheFullError, match="raise cache_size"):
        cache.store(4, backend.asarray(np.ones(5)))


def test_cache_compaction_keeps_the_used_columns(backend):
    rng = np.random.default_rng(3)
    cols = rng.standard_normal((6, 60))
    cache = QColumnCache(backend.xp, backend.device, 6, capacity=4)
    for p in range(60):
        cache.store(p, backend.asarray(cols[:, p]))
    for p in range(60):
        if p % 10:
            cache.release(p)
    cache.compact()
    assert cache.capacity == 16
    coef = np.zeros(cache.capacity)
    for p in range(0, 60, 10):
        coef[cache.slot_of[p]] = p
    np.testing.assert_allclose(backend.check(cache.matvec(coef)), cols[:, ::10] @ np.arange(0, 60, 10))
    assert cache.lookup(5) is None  # stale columns are gone


def _filled(backend, cols, capacity=4, room=0):
    """A cache of the columns cols[:, p] for every p, with spare rows (room for ``room``)."""
    cache = QColumnCache(backend.xp, backend.device, cols.shape[0], capacity=capacity)
    for p in range(cols.shape[1]):
        cache.store(p, backend.asarray(cols[:, p]))
    return cache.with_spare_rows(room)


def _extra(cache, backend, new_rows):
    """Each slot's entries of the new rows (capacity, m): the rows of its owner's column."""
    owner = np.maximum(cache.owner, 0)
    return backend.asarray(new_rows[:, owner].T * (cache.owner >= 0)[:, None])


def _dense(cache, backend):
    """{point: its column in training order} for every slot that holds one."""
    return {int(p): backend.check(cache.column(s)).copy() for s, p in enumerate(cache.owner) if p >= 0}


def test_rows_are_appended_and_dropped_without_copying_the_buffer(backend):
    rng = np.random.default_rng(1)
    full = rng.standard_normal((14, 5))  # rows 0..9 now, 10..13 added next
    cache = _filled(backend, full[:10], room=4)
    before = _dense(cache, backend)
    grown = cache.with_rows_appended(_extra(cache, backend, full[10:]))
    assert grown.data is cache.data and grown.n_rows == 14
    kept = grown.with_rows_kept(np.array([13, 0, 4, 11, 7]))
    assert kept.data is cache.data
    for p, col in _dense(kept, backend).items():
        np.testing.assert_array_equal(col, full[[13, 0, 4, 11, 7], p])
    coef = rng.standard_normal(kept.capacity) * (kept.owner >= 0)
    expected = full[[13, 0, 4, 11, 7]][:, np.maximum(kept.owner, 0)] @ coef
    np.testing.assert_allclose(backend.check(kept.matvec(coef), (5,)), expected, rtol=1e-13, atol=1e-13)
    new_col = rng.standard_normal(5)
    slot = kept.store(99, backend.asarray(new_col))
    np.testing.assert_array_equal(backend.check(kept.column(slot)), new_col)
    np.testing.assert_array_equal(to_host(kept.entries(slot, [3, 1])), new_col[[3, 1]])
    np.testing.assert_allclose(to_host(kept.column_dots(np.array([slot]), backend.asarray(np.ones(5)))), [new_col.sum()])
    # The cache it came from still reads its own rows (the store above went to a free slot).
    assert _dense(cache, backend).keys() == before.keys()
    for p, col in _dense(cache, backend).items():
        np.testing.assert_array_equal(col, before[p])


def test_buffer_is_rebuilt_when_it_runs_out_of_rows(backend):
    rng = np.random.default_rng(2)
    full = rng.standard_normal((8 + 30, 3))
    cache = _filled(backend, full[:8], capacity=3)
    rows = list(range(8))
    for step in range(10):  # a sliding window: add 3 rows, drop the oldest 3
        start = 8 + 3 * step
        cache = cache.with_rows_appended(_extra(cache, backend, full[start : start + 3]))
        rows += list(range(start, start + 3))
        cache = cache.with_rows_kept(np.arange(3, cache.n_rows))
        rows = rows[3:]
        assert cache.data.shape[1] <= 1.25 * (8 + 3) + 3 + 1
        for p, col in _dense(cache, backend).items():
            np.testing.assert_array_equal(col, full[rows, p])


def test_transaction_puts_back_the_columns_a_failed_path_overwrote(backend):
    rng = np.random.default_rng(3)
    cols = rng.standard_normal((6, 4))
    cache = _filled(backend, cols, room=2)
    cache.release(2)  # free, but its column stays for a later lookup
    before = _dense(cache, backend)
    with pytest.raises(RuntimeError, match="fails"), cache.transaction():
        new = cache.with_rows_appended(backend.asarray(rng.standard_normal((cache.capacity, 2))))
        assert new.data is cache.data
        new.release(0)
        for p in range(10, 10 + cache.capacity):  # every slot overwritten, and more
            new.store(p, backend.asarray(rng.standard_normal(8)))
        raise RuntimeError("the path fails")
    assert _dense(cache, backend).keys() == before.keys()
    for p, col in _dense(cache, backend).items():
        np.testing.assert_array_equal(col, before[p])
    assert cache.lookup(2) is not None
    # After a transaction that succeeded, stores are not logged any more.
    with cache.transaction():
        new = cache.with_rows_kept(np.arange(6))
    new.store(50, backend.asarray(np.ones(6)))
    assert not new._undo.saved


def test_pickle_holds_the_live_rows_in_training_order(backend):
    rng = np.random.default_rng(4)
    full = rng.standard_normal((9, 3))
    cache = _filled(backend, full[:6])
    cache = cache.with_rows_appended(_extra(cache, backend, full[6:]))
    cache = cache.with_rows_kept(np.array([8, 1, 2, 6]))
    copy = pickle.loads(pickle.dumps(cache))
    assert tuple(copy.data.shape) == (cache.capacity, 4) and copy.rows_host is None
    for p, col in _dense(copy, backend).items():
        np.testing.assert_array_equal(col, full[[8, 1, 2, 6], p])


def test_the_log_saves_each_slot_of_the_starting_buffer_once(backend):
    rng = np.random.default_rng(5)
    cache = _filled(backend, rng.standard_normal((6, 4)), room=2)
    before = _dense(cache, backend)
    with pytest.raises(KeyboardInterrupt), cache.transaction():
        new = cache.with_rows_kept(np.arange(6))
        for p in range(10, 20):  # the same free slot, written ten times
            new.release(0 if p == 10 else p - 1)
            new.store(p, backend.asarray(rng.standard_normal(6)))
        assert list(new._undo.saved) == [0]
        for p in range(20, 30):  # the slots run out: a new buffer, which nobody else reads
            new.store(p, backend.asarray(rng.standard_normal(6)))
        assert new.data is not cache.data and list(new._undo.saved) == [0]
        raise KeyboardInterrupt
    for p, col in _dense(cache, backend).items():
        np.testing.assert_array_equal(col, before[p])


def test_dead_rows_are_reclaimed_when_the_window_shrinks(backend):
    rng = np.random.default_rng(6)
    full = rng.standard_normal((400, 3))
    cache = _filled(backend, full)
    kept = cache.with_rows_kept(np.arange(300, 400))
    assert kept.data.shape[1] <= 100 + 100 // 4 and kept.rows_host is None
    for p, col in _dense(kept, backend).items():
        np.testing.assert_array_equal(col, full[300:, p])
