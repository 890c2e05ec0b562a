"""The device cache of margin columns: slots, the append-only row buffer, transactions."""

import pickle

import numpy as np
import pytest

from gpath._array_api import to_host
from gpath.cache import CacheFullError, QColumnCache, spare_rows


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
    got = backend.check(cache.matvec(coef, absolute=True), (10,))  # NumPy: the compiled product
    np.testing.assert_allclose(got, np.abs(cols[:, members]) @ weights, rtol=1e-13, atol=1e-13)


def test_a_cache_made_with_spare_rows_takes_new_rows_in_its_own_buffer(backend):
    # A fit's cache (SVCState.at_zero) reserves the rows of its first updates: neither the
    # fit's end (with_spare_rows) nor those updates copy the buffer, and a growth of the
    # slots keeps every column.
    rng = np.random.default_rng(5)
    n, m = 8, 2
    cols = rng.standard_normal((n + m, 6))
    cache = QColumnCache(backend.xp, backend.device, n, capacity=2, spare_rows=spare_rows(n))
    for p in range(3):  # the third store grows the slots (a new buffer, spare rows kept)
        cache.store(p, backend.asarray(cols[:n, p]))
    assert cache.with_spare_rows() is cache
    extra = np.zeros((cache.capacity, m))
    for p in range(3):
        extra[cache.slot_of[p]] = cols[n:, p]
    grown = cache.with_rows_appended(backend.asarray(extra))
    assert grown.data is cache.data and grown.top == n + m
    for p in range(3):
        np.testing.assert_array_equal(backend.check(grown.column(cache.slot_of[p]), (n + m,)), cols[:, p])
    coef = np.zeros(grown.capacity)
    coef[[cache.slot_of[p] for p in range(3)]] = [1.0, -2.0, 0.5]
    np.testing.assert_allclose(backend.check(grown.matvec(coef), (n + m,)), cols[:, :3] @ [1.0, -2.0, 0.5],
                               rtol=1e-13, atol=1e-13)


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
    expected = np.abs(full[[13, 0, 4, 11, 7]][:, np.maximum(kept.owner, 0)]) @ coef  # through the row map
    np.testing.assert_allclose(backend.check(kept.matvec(coef, absolute=True), (5,)), expected, rtol=1e-13, atol=1e-13)
    new_col = rng.standard_normal(5)
    slot = kept.store(99, backend.asarray(new_col))
    np.testing.assert_array_equal(backend.check(kept.column(slot)), new_col)
    np.testing.assert_array_equal(to_host(kept.entries(slot, [3, 1])), new_col[[3, 1]])
    dots = kept.column_dots(np.array([slot]), np.ones(5))  # host values in, host dots out
    assert isinstance(dots, np.ndarray)
    np.testing.assert_allclose(dots, [new_col.sum()])
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


def test_a_failed_transaction_leaves_the_used_columns_and_forgets_the_overwritten_ones(backend):
    rng = np.random.default_rng(3)
    cols = rng.standard_normal((6, 4))
    cache = _filled(backend, cols, room=2)
    cache.release(2)  # free, but its column stays for a later lookup
    before = _dense(cache, backend)
    used = [int(p) for p in cache.owner[cache.used]]
    with pytest.raises(RuntimeError, match="fails"), cache.transaction():
        new = cache.with_rows_appended(backend.asarray(rng.standard_normal((cache.capacity, 2))))
        assert new.data is cache.data
        new.release(0)
        for p in range(10, 10 + cache.capacity):  # more columns than free slots: a new buffer
            new.store(p, backend.asarray(rng.standard_normal(8)))
        assert new.data is not cache.data
        raise RuntimeError("the path fails")
    after = _dense(cache, backend)
    for p in used:  # every column the starting cache uses is intact
        np.testing.assert_array_equal(after[p], before[p])
    for p, col in after.items():  # and every column it still names is the right one
        np.testing.assert_array_equal(col, before[p])
    if 2 not in after:  # the free slot of point 2 was written: its column is forgotten
        assert cache.lookup(2) is None


def test_a_transaction_never_writes_the_slots_in_use_at_its_start(backend):
    rng = np.random.default_rng(5)
    cache = _filled(backend, rng.standard_normal((6, 4)), capacity=8, room=2)
    cache.release(1)
    protected = np.flatnonzero(cache.used)
    before = {int(s): backend.check(cache.column(int(s))).copy() for s in protected}
    with cache.transaction():
        new = cache.with_rows_kept(np.arange(6))
        for p in (0, 2, 3):  # released inside the transaction: their slots stay untouched
            new.release(p)
        slots = [new.store(p, backend.asarray(rng.standard_normal(6))) for p in range(10, 13)]
        assert new.data is cache.data and not set(slots) & set(protected.tolist())
    for s, col in before.items():
        np.testing.assert_array_equal(backend.check(cache.column(s)), col)
    # After the transaction the slots are free to be reused (in the order they were freed).
    slots = [new.store(p, backend.asarray(np.ones(6))) for p in (50, 51, 52)]
    assert slots[-1] in protected.tolist()


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


def test_dead_rows_are_reclaimed_when_the_window_shrinks(backend):
    rng = np.random.default_rng(6)
    full = rng.standard_normal((400, 3))
    cache = _filled(backend, full)
    kept = cache.with_rows_kept(np.arange(300, 400))
    assert kept.data.shape[1] <= 100 + 100 // 4 and kept.rows_host is None
    for p, col in _dense(kept, backend).items():
        np.testing.assert_array_equal(col, full[300:, p])


@pytest.mark.parametrize("kept_rows", [False, True], ids=["identity rows", "kept rows"])
@pytest.mark.parametrize("capacity", [6, 16], ids=["slots grow", "in a transaction"])
def test_a_block_store_is_one_store_after_another(backend, kept_rows, capacity):
    # store_block (SimpleSVM's start entering its margin set) takes the slots that as many
    # calls of store take, in the same order: growing the slots when they run out, or else
    # never taking a slot protected by the open transaction; and writes each column there
    # (in the buffer rows of a cache whose rows are not the identity, after rows were dropped).
    rng = np.random.default_rng(6)
    rows = [8, 0, 3, 5, 1, 6] if kept_rows else list(range(9))
    points = np.array([20, 11, 33, 14, 12, 17, 40])
    columns = rng.standard_normal((len(rows), points.size))
    caches = []
    for block in (False, True):
        base = _filled(backend, rng.standard_normal((9, 5)), capacity=capacity, room=2)
        base = base.with_rows_kept(np.array(rows)) if kept_rows else base
        base.release(1)
        base.release(4)
        with base.transaction():
            cache = base.with_rows_kept(np.arange(base.n_rows))
            for p in (0, 2):  # released inside: their slots stay protected (in this buffer)
                cache.release(p)
            if block:
                slots = cache.store_block(points, backend.asarray(columns)).tolist()
            else:
                slots = [cache.store(int(p), backend.asarray(columns[:, j])) for j, p in enumerate(points)]
            if cache.data is base.data:
                assert not {base.slot_of[0], base.slot_of[2]} & set(slots)
        caches.append((cache, slots))
    (one, one_slots), (block, block_slots) = caches
    assert block_slots == one_slots
    assert block.capacity == one.capacity
    assert block.capacity > 6 if capacity == 6 else block.capacity == 16  # grown, or not needed
    for name in ("owner", "used", "free", "counts"):
        np.testing.assert_array_equal(getattr(block, name), getattr(one, name))
    held = {p: s for p, s in enumerate(one.slot_of.tolist()) if s >= 0}  # (slot_of's length may differ)
    assert {p: s for p, s in enumerate(block.slot_of.tolist()) if s >= 0} == held
    for j, p in enumerate(points):
        np.testing.assert_array_equal(backend.check(block.column(block.slot_of[p])), columns[:, j])


@pytest.mark.parametrize("block", [False, True], ids=["store", "store_block"])
def test_a_failed_transaction_forgets_the_columns_a_block_overwrote(backend, block):
    # Free slots still name their former points (for a later lookup); a block written over
    # them in a transaction that then fails must leave no slot naming a point whose column
    # it no longer holds.
    rng = np.random.default_rng(7)
    cols = rng.standard_normal((6, 5))
    cache = _filled(backend, cols, capacity=8)
    for p in (1, 2, 4):
        cache.release(p)
    with pytest.raises(RuntimeError, match="fails"), cache.transaction():
        new = cache.with_rows_kept(np.arange(6))
        points, block_cols = np.arange(10, 16), rng.standard_normal((6, 6))  # free slots: 3 + 3 empty
        if block:
            new.store_block(points, backend.asarray(block_cols))
        else:
            for j, p in enumerate(points):
                new.store(int(p), backend.asarray(block_cols[:, j]))
        assert new.data is cache.data  # written in place: no growth
        raise RuntimeError("the path fails")
    left = _dense(cache, backend)
    assert {0, 3} <= left.keys()  # the columns in use at the start
    for p, col in left.items():
        np.testing.assert_array_equal(col, cols[:, p])


def test_a_block_store_beyond_the_limit_stores_nothing(backend):
    cache = QColumnCache(backend.xp, backend.device, 5, capacity=2, max_columns=3)
    cache.store(0, backend.asarray(np.ones(5)))
    with pytest.raises(CacheFullError, match="raise cache_size"):
        cache.store_block(np.array([1, 2, 3]), backend.asarray(np.ones((5, 3))))
    assert cache.used.sum() == 1 and cache.lookup(1) is None
    cache.store_block(np.array([1, 2]), backend.asarray(np.ones((5, 2))))
    assert sorted(cache.owner[cache.used].tolist()) == [0, 1, 2]
    assert cache.store_block(np.zeros(0, dtype=np.int64), backend.asarray(np.ones((5, 0)))).size == 0  # as no store
