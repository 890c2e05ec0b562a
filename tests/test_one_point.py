"""A small update's whole path in one compiled call (gpath._one_point) against the path it
replaces (gpath._path._PathRun, held to the readable loop in test_engines.py): the same
state, bit for bit, and the same refusals."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import dataset, snapshot

import gpath._path as path_module
from gpath import IncrementalSVC, _mid_numba
from gpath.cache import CacheFullError


@pytest.fixture
def ends(monkeypatch):
    """The end of each compiled call (gpath._one_point._path_end's result: release, max α,
    max C_i, at_bounds, checked, violation, taken)."""
    import gpath._one_point as one_point

    original, seen = one_point.followed, []

    def recording(*args):
        out = original(*args)
        seen.append(out[-1])
        return out

    monkeypatch.setattr(one_point, "followed", recording)
    return seen


@pytest.fixture
def taken(monkeypatch):
    """Counts of the updates the compiled call finished, of those it handed back, and of
    those whose end checks it took (gpath._path.PathEnd)."""
    counts = {"finished": 0, "handed back": 0, "checked": 0}
    original = path_module.SVCState._one_point

    def counting(self, appended, upper_add, shift_add, remove, max_columns, end=None):
        done = original(self, appended, upper_add, shift_add, remove, max_columns, end)
        counts["finished" if done is not None else "handed back"] += 1
        counts["checked"] += end is not None and end.margins is not None
        return done

    monkeypatch.setattr(path_module.SVCState, "_one_point", counting)
    return counts


def _state(model) -> dict:
    """Everything an update leaves in the model's state: its rows, sets, margins, factor,
    active set and cache books, and the published attributes."""
    s, f = model.state_, model.state_.factor
    c = s.cache
    return {"alpha": s.alpha, "yf": s.yf, "lo": s.lo, "hi": s.hi, "where": s.where, "upper": s.upper, "y": s.y,
            "b": s.b, "X": s.X, "members": s.active.members, "slots": s.active.slots, "owner": c.owner,
            "used": c.used, "slot_of": c.slot_of, "free": c.free[: c.counts[0]], "top": c.top,
            "rows": c.rows_host, "n_rows": c.n_rows, "computed": c.n_columns_computed,
            "R": f._r[: f.m, : f.m], "qs": f._qs[: f.m], "unmoved": s.unmoved,
            "breakpoints": model.last_update_.n_breakpoints, "dual_coef_": model.dual_coef_,
            "intercept_": model.intercept_, "support_": model.support_, "sample_ids_": model.sample_ids_,
            "shift": s.shift if s.shift is not None else np.zeros(0),
            # The kept share of the KKT scale (SVCState._bound_share), where a check read it.
            "scale_share": s.__dict__.get("_share", np.zeros(0)), "share_coef": s.__dict__.get("_share_coef", np.zeros(0))}


def _assert_same(a: dict, b: dict) -> None:
    for key, x in a.items():
        y = b[key]
        if isinstance(x, np.ndarray):
            assert x.dtype == y.dtype and np.array_equal(x, y), key
        else:
            assert x == y, key


def _same_updates(models, X, y, lo, sizes, steps, rng, monkeypatch):
    """``steps`` updates of ``models`` (two equal models) from row ``lo`` on, the first by the
    compiled call, the second by the readable path: ``sizes[step % len(sizes)]`` points in, the
    oldest as many out (every fifth step one point out at random); the same outcome, the same
    state bit for bit after each, and every sixth step both exact from scratch."""
    for step in range(steps):
        m = sizes[step % len(sizes)]
        ids = models[0].sample_ids_
        remove = ids[:m] if step % 5 else ids[[int(rng.integers(ids.size))]]
        outcome = _both(models, X[lo : lo + m], y[lo : lo + m], remove, monkeypatch)
        assert outcome[0] == outcome[1]
        _assert_same(_state(models[0]), _state(models[1]))
        if step % 6 == 0:  # a check from scratch keeps the scale's share, which updates carry
            assert models[0].check_kkt() <= 1e-9 and models[1].check_kkt() <= 1e-9
        lo += m


def _both(models, X_add, y_add, remove, monkeypatch):
    """The update of ``models`` (two equal models), of the first by the compiled call, of the
    second by the path it replaces; per model None, or its refusal's (type, message)."""
    out = []
    for on, model in zip((True, False), models):
        monkeypatch.setattr(path_module, "ONE_POINT", on)
        try:
            model.update(X_add=X_add, y_add=y_add, remove=remove)
            out.append(None)
        except (ValueError, CacheFullError) as exc:
            out.append((type(exc), str(exc)))
    monkeypatch.setattr(path_module, "ONE_POINT", True)
    return out


@pytest.mark.parametrize(("data", "kernel", "C", "gamma"), [
    ("waterflow", "rbf", 10.0, 1.0),
    ("breast_cancer", "rbf", 1e3, 0.05),
    ("breast_cancer", "linear", 0.1, "scale"),
    ("bananas", "poly", 1.0, 1.0),
    ("bananas", "rbf", 1e5, 3.0),
])
def test_small_updates_are_the_readable_paths_bit_for_bit(data, kernel, C, gamma, taken, monkeypatch):
    X, y = dataset(data)
    rng = np.random.default_rng(11)
    order = rng.permutation(y.size)
    X, y = X[order], y[order]
    n = 150
    models = [IncrementalSVC(C=C, kernel=kernel, gamma=gamma).fit(X[:n], y[:n]) for _ in range(2)]
    # One point in, the oldest out (a window), or a few of each, or a point out anywhere.
    _same_updates(models, X, y, n, (1, 1, 2, 3), 40, rng, monkeypatch)
    # The test is not vacuous: the compiled call took many of the updates that moved, and
    # their end checks.
    assert taken["finished"] >= 10 and taken["checked"] >= 5, taken


@pytest.mark.parametrize(("C", "epsilon", "kernel"), [(10.0, 0.1, "rbf"), (1e3, 0.0, "rbf"), (1.0, 0.3, "linear")])
def test_small_regression_updates_are_the_readable_paths_bit_for_bit(C, epsilon, kernel, taken, monkeypatch):
    # ε-SVR's doubled rows (a point's two rows, its linear term): the same, bit for bit.
    from gpath import IncrementalSVR
    from gpath.datasets import load_waterflow_regression

    X, y = load_waterflow_regression()
    X, y = (X - X.mean(0)) / X.std(0), (y - y.mean()) / y.std()
    models = [IncrementalSVR(C=C, epsilon=epsilon, kernel=kernel, gamma=1 / 7).fit(X[:200], y[:200])
              for _ in range(2)]
    _same_updates(models, X, y, 200, (1, 1, 1, 2), 60, np.random.default_rng(5), monkeypatch)
    assert taken["finished"] >= 5 and taken["checked"] >= 5, taken


@pytest.mark.parametrize("model", ["svc", "svr"])
def test_batch_updates_are_the_readable_paths_bit_for_bit(model, taken, monkeypatch):
    # A window's batch (river's batch, ε-SVR's 30 points of 60 rows), many points moving at
    # once: the compiled call goes on from the path's start as the readable path computes it.
    import gpath._one_point as one_point
    from gpath import IncrementalSVR
    from gpath.datasets import load_waterflow_regression

    original, given = one_point.followed, []

    def counted(*args):
        given.append(args[-4].shape[0] > 0)  # u_start: the caller's start of a path moving more points
        return original(*args)

    monkeypatch.setattr(one_point, "followed", counted)
    if model == "svc":
        X, y = dataset("waterflow")
        models = [IncrementalSVC(C=10.0, gamma=1.0).fit(X[:300], y[:300]) for _ in range(2)]
    else:
        X, y = load_waterflow_regression()
        X, y = (X - X.mean(0)) / X.std(0), (y - y.mean()) / y.std()
        models = [IncrementalSVR(C=10.0, epsilon=0.1, gamma=1 / 7).fit(X[:300], y[:300]) for _ in range(2)]
    _same_updates(models, X, y, 300, (5, 12, 30), 15, np.random.default_rng(3), monkeypatch)
    assert sum(given) >= 5 and taken["handed back"] == 0, (sum(given), taken)


def test_a_path_handed_to_python_part_way_goes_on_as_the_readable_one(monkeypatch):
    # At an event the compiled loop leaves to Python (here a tiny pivot: a point entering the
    # margin set nearly a combination of its members), the path so far is handed over and
    # followed on as the readable path's own loop does: the same models, bit for bit. (The
    # setting of `gpath demo`: one point at a time, where one path of 484 stops so.)
    import gpath._one_point as one_point

    original, events = one_point.followed, []

    def counted(*args):
        out = original(*args)
        events.append(int(out[0]))
        return out

    monkeypatch.setattr(one_point, "followed", counted)
    X, y = dataset("waterflow")
    models = [IncrementalSVC(C=10.0, gamma=4.965, method="single").fit(X[:600], y[:600]) for _ in range(2)]
    for lo in range(600, 900, 30):
        outcome = _both(models, X[lo : lo + 30], y[lo : lo + 30], models[0].sample_ids_[:30], monkeypatch)
        assert outcome == [None, None]
        _assert_same(_state(models[0]), _state(models[1]))
    assert models[0].check_kkt() <= 1e-9
    assert any(e not in (_mid_numba.DONE, one_point.MOVES_MORE) for e in events), set(events)


def test_a_path_whose_rates_dwarf_its_coefficients_leaves_its_end_checks_to_python(ends, monkeypatch):
    # Separable blobs, a linear kernel, C = 1e8: an added point's rate C_a moves the margins by
    # terms whose float64 round-off may exceed the KKT check's tol beside Σα, so the margins
    # must come from α afresh (gpath._simplesvm._path_unresolved) before the check. The compiled
    # call must then leave the end checks to Python (with the check taken there, the maintained
    # margins were kept: y f off the readable path's in 57 of these 60 updates).
    rng = np.random.default_rng(4)
    y = np.where(rng.random(260) < 0.5, 1, 0)
    X = rng.normal(size=(260, 2)) * 0.4 + np.where(y == 1, 1.5, -1.5)[:, None]
    models = [IncrementalSVC(C=1e8, kernel="linear").fit(X[:200], y[:200]) for _ in range(2)]
    declined = 0
    for step, lo in enumerate(range(200, 260)):
        ids = models[0].sample_ids_
        remove = ids[np.asarray(models[0].alpha_) > 0][:1] if step % 2 else ids[:1]  # a support vector out
        ends.clear()
        assert _both(models, X[lo : lo + 1], y[lo : lo + 1], remove, monkeypatch) == [None, None]
        _assert_same(_state(models[0]), _state(models[1]))
        if ends:  # (_path_end ran where the largest box, C, came back: not _NOT_ENDED's 0)
            release, _, c_max, _, checked, _, _ = ends[0]
            declined += c_max > 0 and not release and not checked
    assert declined >= 10, declined
    assert models[0].check_kkt() <= 1e-9


def test_a_check_the_compiled_call_does_not_take_goes_on_in_python(ends, monkeypatch):
    # Where the compiled end check finds the margin equations' residual above 1e-14 of its scale
    # (not "taken"), Python refines the state and checks it anew, as the readable path does
    # (recording such a check as taken changed α, y f and b in 30 of these 120 updates).
    X, y = dataset("breast_cancer")
    models = [IncrementalSVC(C=1e4).fit(X[:300], y[:300]) for _ in range(2)]
    rng, lo, not_taken = np.random.default_rng(0), 300, 0
    for step in range(120):
        m = 1 + step % 2
        ids = models[0].sample_ids_
        remove = ids[rng.choice(ids.size, size=m, replace=False)] if step % 3 == 2 else ids[:m]
        ends.clear()
        assert _both(models, X[lo : lo + m], y[lo : lo + m], remove, monkeypatch) == [None, None]
        _assert_same(_state(models[0]), _state(models[1]))
        not_taken += any(checked and not taken for _, _, _, _, checked, _, taken in ends)
        lo = (lo + m) % (X.shape[0] - 2)
    assert not_taken >= 1
    assert models[0].check_kkt() <= 1e-9


def test_the_compiled_call_leaves_the_check_to_python_where_the_cache_rebuilds_its_rows(monkeypatch):
    # A window's cache writes each new point's row past the live ones; past a quarter of dead
    # rows and 64 more it copies the live ones to a new buffer (gpath.cache.rows_rebuilt), whose
    # dots sum in another order: there the compiled call leaves the end check to Python. (A
    # shrinking window: one point in, two out.)
    from gpath.cache import QColumnCache, rows_rebuilt

    books, one_point = QColumnCache.with_books, path_module.SVCState._one_point
    rebuilt, seen = [], []

    def spying_books(self, books_, top, rows, max_columns, computed):
        rebuilt.append(rows_rebuilt(top, rows.size))
        return books(self, books_, top, rows, max_columns, computed)

    def spying_call(self, appended, upper_add, shift_add, remove, max_columns, end=None):
        rebuilt.clear()
        done = one_point(self, appended, upper_add, shift_add, remove, max_columns, end)
        if done is not None and not done[0].unmoved:
            seen.append((any(rebuilt), end is not None and end.margins is not None))
        return done

    monkeypatch.setattr(QColumnCache, "with_books", spying_books)
    monkeypatch.setattr(path_module.SVCState, "_one_point", spying_call)
    X, y = dataset("waterflow")
    model = IncrementalSVC(C=10.0, gamma=1.0).fit(X[:400], y[:400])
    for lo in range(400, 600):
        model.update(X_add=X[lo : lo + 1], y_add=y[lo : lo + 1], remove=model.sample_ids_[:2])
    assert model.check_kkt() <= 1e-9
    assert any(r for r, _ in seen) and not any(r and checked for r, checked in seen), seen
    assert sum(checked for _, checked in seen) >= 50, seen


def test_the_path_end_takes_the_check_only_where_python_would_on_the_same_arrays():
    # gpath._one_point._path_end on a state's arrays: the release test and the refined check
    # of Python's steps, with the same bits, and each case where it must leave the check to
    # Python: not asked, no max Q_kk, a release due, the rates' round-off not below half of
    # tol's share of the scale, and a product Python splits between the cores.
    import gpath._one_point as one_point
    from gpath._path import _FLOAT64_EPS, _REFINE_TOL, _balanced_at_bounds, _refined_margins, _release_due

    X, y = dataset("breast_cancer")
    model = IncrementalSVC(C=10.0, gamma=0.05).fit(X[:200], y[:200])
    model.update(X_add=X[200:201], y_add=y[200:201], remove=model.sample_ids_[:1])
    s = model.state_
    members, slots = s.active.members.copy(), s.active.slots.copy()
    rows = np.zeros(0, dtype=np.int64) if s.cache.rows_host is None else s.cache.rows_host
    top = s.cache.top

    def run(end, members=members, slots=slots, alpha=None):
        alpha = s.alpha.copy() if alpha is None else alpha
        out = one_point._path_end(alpha, s.y_host, s.upper, members, s.cache.data, slots, rows, top, s.b,
                                  np.zeros(0), s.yf, s.lo, s.hi, s.C, np.array(end, dtype=float))
        return out, alpha

    # Python's steps on a copy: release_bounded_margin's pass and test, then refined_check's.
    alpha = s.alpha.copy()
    a_max, c_max, at_bounds = _balanced_at_bounds(alpha, s.y_host, s.upper, members, 1e-8)
    assert not _release_due(alpha, s.upper, members, a_max, c_max, at_bounds)
    once = alpha.copy()
    violation, taken = _refined_margins(alpha, s.y_host, s.upper, members, s.cache.data, slots, rows, top, s.b,
                                        np.zeros(0), s.yf, s.lo, s.hi, s.C, _REFINE_TOL)
    diag, tol = 1.0 + s.ridge, 1e-9
    scale = tol * (1.0 + diag * s.alpha.sum())
    out, checked = run([tol, diag, 1.0, -1.0])
    assert out == (False, a_max, c_max, at_bounds, True, violation, taken) and taken
    assert checked.tobytes() == alpha.tobytes()
    # Not taken: only release_bounded_margin's pass (α balanced once).
    for end in ([-1.0, diag, 1.0, -1.0], [tol, -1.0, 1.0, -1.0],
                [tol, diag, 0.6 * scale / (_FLOAT64_EPS * diag), -1.0], [tol, diag, 1.0, float(top * members.size)]):
        out, checked = run(end)
        assert out == (False, a_max, c_max, at_bounds, False, 0.0, False), end
        assert checked.tobytes() == once.tobytes()
    out, _ = run([tol, diag, 0.4 * scale / (_FLOAT64_EPS * diag), float(top * members.size + 1)])
    assert out[4]
    # A release due (no margin point left: every member "at a bound"): Python releases first.
    out, _ = run([tol, diag, 1.0, -1.0], members=members[:0], slots=slots[:0])
    assert out[0] and not out[4]


@pytest.mark.parametrize("n,shift,moving", [(1, False, 1), (7, True, 3), (300, False, 1), (301, True, 2)])
def test_the_path_so_far_comes_back_whole_from_its_packing(n, shift, moving):
    # The path handed to Python at an event travels packed in two arrays (gpath._one_point):
    # each of its thirteen parts comes back with its own values, dtype and memory.
    import gpath._one_point as one_point

    rng = np.random.default_rng(n)
    floats = tuple(rng.normal(size=k) for k in (n, n, n, n, n, n if shift else 0, moving, n, 7))
    ints = (rng.integers(-1, n, size=n), rng.integers(0, n, size=moving), rng.integers(-2**62, 2**62, size=15))
    where = rng.integers(0, 5, size=n).astype(np.int8)
    parts = one_point.unpacked(one_point._packed(floats, ints, where))
    alpha, upper, yf, lo, hi, shift_, d_left, u, pfloats = floats
    a_col, a_left, pints = ints
    expected = (alpha, upper, where, yf, lo, hi, shift_, a_col, a_left, d_left, u, pints, pfloats)
    assert len(parts) == len(expected)
    for got, want in zip(parts, expected):
        assert got.dtype == want.dtype and got.shape == want.shape and got.tobytes() == want.tobytes()
        assert got.flags.c_contiguous and got.flags.owndata
    with pytest.raises(RuntimeError, match="does not hold"):
        floats_packed, ints_packed = one_point._packed(floats, ints, where)
        one_point.unpacked((floats_packed[1:], ints_packed))


def test_a_window_stream_predicts_the_same(monkeypatch):
    # river's SlidingWindowSVC (batch 1: one point in, the oldest out, after screening) with
    # and without the compiled call: the same decision values.
    from river import datasets

    from gpath.river import SlidingWindowSVC

    values = []
    for on in (True, False):
        monkeypatch.setattr(path_module, "ONE_POINT", on)
        model, seen = SlidingWindowSVC(window=100, batch=1, C=10.0), []
        for i, (x, label) in enumerate(datasets.Phishing()):
            if i >= 300:
                break
            if model.svc_ is not None:
                seen.append(model.predict_proba_one(x))
            model.learn_one(x, label)
        values.append(seen)
    assert values[0] == values[1] and len(values[0]) > 200


@pytest.mark.parametrize("error", [KeyboardInterrupt, RuntimeError("injected failure")])
def test_an_interrupt_after_the_compiled_call_leaves_the_model_as_it_was(taken, monkeypatch, error):
    # The compiled call has run its path (writing columns into the cache's free slots); the
    # interrupt comes in the Python steps after it. The model and its cache's columns must be
    # as they were, and the next update exact.
    X, y = dataset("breast_cancer")
    model = IncrementalSVC(C=100.0, gamma=0.05).fit(X[:200], y[:200])
    for lo in range(200, 210):  # some updates first: a window's steady state
        model.update(X_add=X[lo : lo + 1], y_add=y[lo : lo + 1], remove=model.sample_ids_[:1])
    from gpath._active import ActiveSet

    original = ActiveSet.compact

    def failing(self):
        raise error

    finished, interrupted = taken["finished"], 0
    for lo in range(210, 260):
        before = snapshot(model)
        monkeypatch.setattr(ActiveSet, "compact", failing)
        try:  # (an update that moves nothing compacts nothing: it goes through)
            model.update(X_add=X[lo : lo + 1], y_add=y[lo : lo + 1], remove=model.sample_ids_[:1])
            continue
        except (KeyboardInterrupt, RuntimeError) as exc:
            assert exc is error or isinstance(exc, error)
            interrupted += 1
        finally:
            monkeypatch.setattr(ActiveSet, "compact", original)
        assert snapshot(model) == before
        state = model.state_
        for slot, point in enumerate(state.cache.owner):  # every column the books name is its own
            if point >= 0:
                fresh = state.q_block(state.X[point : point + 1, :], state.y[point : point + 1], np.array([point]))
                np.testing.assert_allclose(state.cache.column(slot), fresh[:, 0], rtol=0, atol=1e-13)
        model.update(X_add=X[lo : lo + 1], y_add=y[lo : lo + 1], remove=model.sample_ids_[:1])
    assert model.check_kkt() <= 1e-9
    assert interrupted >= 15 and taken["finished"] - finished >= 15, (interrupted, taken)


def test_a_stream_update_sets_no_limit_on_blas_threads(taken, monkeypatch):
    # One point in and the oldest out, each by the compiled call: it calls no BLAS, so it pays
    # nothing for a limit on BLAS's threads (gpath.linalg.single_threaded_host_blas: four
    # threadpoolctl calls a library, some 15 µs of a 300 µs update).
    from gpath import linalg

    X, y = dataset("waterflow")
    n = 300
    model = IncrementalSVC(C=10.0, gamma=1.0).fit(X[:n], y[:n])
    limits = [0]
    original = linalg._blas

    def counting():
        limits[0] += 1
        return original()

    monkeypatch.setattr(linalg, "_blas", counting)
    breakpoints = 0
    for lo in range(n, n + 40):
        model.update(X_add=X[lo : lo + 1], y_add=y[lo : lo + 1], remove=model.sample_ids_[:1])
        breakpoints += model.last_update_.n_breakpoints
    assert taken["finished"] >= 20 and breakpoints >= 20, (taken, breakpoints)
    assert limits[0] == 0
    assert model.check_kkt() <= 1e-9
