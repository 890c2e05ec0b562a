"""Reliability: transactional calls under failures and interrupts, and degenerate data."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_exact, dataset, snapshot

import gpath._path as path_module
from gpath import IncrementalSVC, PathError, RobustSVC, SimpleSVC, _mid_numba
from gpath._engine import Engine
from gpath.linalg import BorderedFactor
from gpath.reference import exact_svc


@pytest.fixture
def fitted():
    X, y = dataset("breast_cancer")
    return IncrementalSVC(C=10.0, gamma=0.05).fit(X[:250], y[:250]), X, y


def _fail_part_way(monkeypatch, engine, error, calls):
    """Make the path raise ``error`` at its fifth breakpoint: in the readable loop when one of
    its events is applied, in the compiled loop when it returns there. (Every path through
    gpath._path._PathRun: a small update's compiled whole path, gpath._one_point, has its
    own interrupt test in test_one_point.py.)"""
    monkeypatch.setattr(path_module, "ONE_POINT", False)
    if engine == "generic":
        original = path_module._PathRun._apply

        def failing(self, event):
            calls["n"] += 1
            if calls["n"] == 5:  # part-way along the path
                raise error
            return original(self, event)

        monkeypatch.setattr(path_module._PathRun, "_apply", failing)
        return
    original = _mid_numba.run

    def stopping(*args):
        path_ints = args[5][5]
        start = int(path_ints[1])
        path_ints[9] = start + 4 - calls["n"]  # "cycling" at the fifth breakpoint of the update
        status = original(*args)
        calls["n"] += int(path_ints[1]) - start
        if status == _mid_numba.CYCLING:
            raise error
        return status

    monkeypatch.setattr(_mid_numba, "run", stopping)


@pytest.mark.parametrize("method", ["multiple", "single"])
@pytest.mark.parametrize("engine", ["numba", "generic"])
def test_a_path_that_fails_part_way_is_taken_over_by_an_exact_refit(fitted, monkeypatch, method, engine):
    model, X, y = fitted
    model.set_params(method=method)
    if engine == "generic":
        model.state_.engine = Engine(model.state_.xp, model.state_.device)
    calls = {"n": 0}
    _fail_part_way(monkeypatch, engine, PathError("injected numerical failure"), calls)
    model.update(X_add=X[250:280], y_add=y[250:280], remove=model.sample_ids_[:30])
    assert calls["n"] == 5 and model.last_update_.method == "refit"
    assert_exact(model, X[30:280], y[30:280])
    monkeypatch.undo()
    model.update(X_add=X[280:290], y_add=y[280:290], remove=model.sample_ids_[:10])
    assert model.last_update_.method == "path"
    assert_exact(model, X[40:290], y[40:290])


@pytest.mark.parametrize("error", [KeyboardInterrupt, RuntimeError("injected failure")])
@pytest.mark.parametrize("method", ["multiple", "single"])
@pytest.mark.parametrize("engine", ["numba", "generic"])
def test_interrupted_update_leaves_the_model_as_it_was(fitted, monkeypatch, error, method, engine):
    model, X, y = fitted
    model.set_params(method=method)
    if engine == "generic":  # NumPy data through the readable loop
        model.state_.engine = Engine(model.state_.xp, model.state_.device)
    before = snapshot(model)
    calls = {"n": 0}
    _fail_part_way(monkeypatch, engine, error, calls)
    with pytest.raises(type(error) if isinstance(error, Exception) else error):
        model.update(X_add=X[250:280], y_add=y[250:280], remove=model.sample_ids_[:30])
    assert calls["n"] == 5
    assert snapshot(model) == before
    _assert_cache_is_fresh(model)  # the columns the failed path overwrote are back
    monkeypatch.undo()
    model.update(X_add=X[250:280], y_add=y[250:280], remove=model.sample_ids_[:30])
    assert_exact(model, X[30:280], y[30:280])


def test_failure_while_the_new_attributes_are_computed_leaves_the_model(fitted, monkeypatch):
    # The last step of an update, after the path: the old state's cache must be put back too.
    model, X, y = fitted
    before = snapshot(model)
    monkeypatch.setattr(type(model), "_with_bookkeeping",
                        staticmethod(lambda *a, **k: (_ for _ in ()).throw(KeyboardInterrupt)))
    with pytest.raises(KeyboardInterrupt):
        model.update(X_add=X[250:280], y_add=y[250:280], remove=model.sample_ids_[:30])
    assert snapshot(model) == before
    _assert_cache_is_fresh(model)
    monkeypatch.undo()
    model.update(X_add=X[250:280], y_add=y[250:280], remove=model.sample_ids_[:30])
    assert_exact(model, X[30:280], y[30:280])


def test_a_copy_stays_exact_while_the_original_is_updated(fitted):
    import copy

    model, X, y = fitted
    kept = copy.copy(model)
    model.update(X_add=X[250:280], y_add=y[250:280], remove=model.sample_ids_[:30])
    _assert_cache_is_fresh(kept)
    kept.update(X_add=X[300:320], y_add=y[300:320])
    assert_exact(kept, np.concatenate([X[:250], X[300:320]]), np.concatenate([y[:250], y[300:320]]))


def _assert_cache_is_fresh(model):
    state = model.state_
    for slot, point in enumerate(state.cache.owner):
        if point >= 0:
            fresh = state.q_block(state.X[point : point + 1, :], state.y[point : point + 1], np.array([point]))
            # Columns come from the compiled column kernel or from blocks: equal to round-off.
            np.testing.assert_allclose(state.cache.column(slot), fresh[:, 0], rtol=0, atol=1e-13)


def test_interrupted_fit_keeps_the_previous_model(fitted, monkeypatch):
    model, X, y = fitted
    before = snapshot(model)
    monkeypatch.setattr(path_module.SVCState, "follow", lambda *a, **k: (_ for _ in ()).throw(KeyboardInterrupt))
    monkeypatch.setattr("gpath._simplesvm.simple_svm", lambda *a, **k: (_ for _ in ()).throw(KeyboardInterrupt))
    with pytest.raises(KeyboardInterrupt):
        model.fit(X[:100], y[:100])
    assert snapshot(model) == before


@pytest.mark.parametrize("gamma", [1e4, 1e-6])
def test_kernel_near_identity_and_near_constant(gamma):
    # gamma = 1e4: K ≈ I (every point its own island); 1e-6: K ≈ 11ᵀ (all points alike).
    X, y = dataset("breast_cancer")
    model = IncrementalSVC(C=1.0, gamma=gamma).fit(X[:150], y[:150])
    model.update(X_add=X[150:170], y_add=y[150:170], remove=np.arange(10))
    assert_exact(model, X[10:170], y[10:170])


def test_near_hard_margin():
    X, y = dataset("breast_cancer")
    model = IncrementalSVC(C=1e8, gamma=0.05).fit(X[:200], y[:200])  # the MID direction C − α_A is huge
    model.update(X_add=X[200:220], y_add=y[200:220], remove=np.arange(15))
    assert model.check_kkt() <= 1e-9
    assert np.all(model.alpha_ < model.C)  # separable: no bounded support vector


def test_duplicates_with_opposite_labels_in_a_window():
    X, y = dataset("bananas")
    X = np.vstack([X[:100], X[:100]])
    y = np.concatenate([y[:100], 1 - y[:100]])  # every point twice, once per label
    model = IncrementalSVC(C=1.0, gamma=1.0).fit(X[:150], y[:150])
    model.update(X_add=X[150:], y_add=y[150:], remove=model.sample_ids_[:20])
    assert_exact(model, X[20:], y[20:])



@pytest.mark.parametrize("estimator", [SimpleSVC, IncrementalSVC])
def test_copies_of_one_point_at_a_large_scale_are_fitted_not_refused(estimator):
    # Six copies of one point (K = 3e6, linear kernel): only the ridge (1e-6) keeps their
    # margin matrix regular (condition 1e13), and SimpleSVM cycled among them at violations
    # of 1e-13 of the scale of y f until its cap, then raised PathError. (A randomized search.)
    X = np.tile([411.39208680561063, -1275.014288130699, 1091.3237686741395], (6, 1))
    y = np.array([0, 0, 1, 0, 1, 0])
    C = 0.023576021007861877
    model = estimator(kernel="linear", C=C).fit(X, y)
    assert (model.check_kkt(X, y) if estimator is SimpleSVC else model.check_kkt()) <= 1e-9
    y_pm = np.where(y == 1, 1.0, -1.0)
    ref = exact_svc(X, y_pm, C, "linear", 1.0, 3, 0.0, ridge=model.ridge)
    assert ref.kkt <= 1e-9
    # The same model to round-off of y f, which sums terms up to K·Σα (3e5): the split of α
    # among the copies is settled by the ridge's 3e-13 of that scale, below float64's reach.
    scale = 1.0 + float(np.max(np.abs(X @ X.T) @ ref.alpha))
    f, f_ref = model.decision_function(X), ref.decision_function(X)
    assert np.max(np.abs(f - f_ref)) <= 1e-12 * scale

# A window a random search found (poly kernel of degree 2 on one feature, 24 copies of one
# point with both labels): near the end of a single-point update's path the margin matrix
# holds one point whose Q_kk is the ridge and little more, and a solve with the freshly
# refactored factor still leaves a relative residual of 3e-11, above the drift threshold. The
# compiled loop asked for a refactor again and again, forever; it now takes the solve a fresh
# factor gives (as the readable loop does), and the update ends exact.
_DUPLICATES_X = [-0.20663949604586118] * 24 + [
    0.2780400385352462, -1.330355774510339, -0.8478636236071125, -0.25098954276470786, 0.09906182586947433,
    1.0940455489316874, -0.4149244979698458, -0.0806985183378144, 0.01125133325315208, -1.3543456443591786,
    -1.0052436025349938, 0.9528420174995541, 1.03490625867894, 0.2314041870517962, -0.7745687716727944,
    1.5027970305486382, -2.672038000329332, -0.09027695471497225, 0.20314158471080754]
_DUPLICATES_Y = [1, 1, 0, 1, 1, 0, 0, 0, 0, 1, 1, 1, 0, 0, 1, 1, 1, 0, 1, 0, 1, 1, 0, 1, 1, 1, 0, 0, 1, 0, 1, 0, 1,
                 0, 1, 0, 0, 1, 1, 0, 0, 1, 1]


def test_a_fresh_factor_is_not_refactored_forever(monkeypatch):
    X, y = np.array(_DUPLICATES_X)[:, None], np.array(_DUPLICATES_Y)
    # (C and γ found again by a search when the round-off of the update's sums changed: without
    # the fix, this update refactors without end.)
    model = IncrementalSVC(C=39.98597219595022, kernel="poly", gamma=0.019592640780943808, degree=2,
                           method="single").fit(X[:39], y[:39])
    refactored = {"n": 0}
    original = BorderedFactor.refactor

    def counted(self):
        refactored["n"] += 1
        assert refactored["n"] < 100, "the path refactors its margin matrix without end"
        return original(self)

    monkeypatch.setattr(BorderedFactor, "refactor", counted)
    model.update(X_add=X[39:], y_add=y[39:], remove=model.sample_ids_[:7])
    assert_exact(model, X[7:], y[7:])
    if refactored["n"] == 0:
        # The case this test is about (a fresh factor's solve above the threshold) hangs on the
        # round-off of the update's sums, which moves with NumPy's and SciPy's builds (NumPy
        # 2.4.6 with SciPy 1.17.1 do not reach it): the update was checked exact, the case not.
        pytest.skip("this platform's round-off does not reach a refactor on this update")


def test_robust_fit_failure_keeps_the_previous_path(monkeypatch):
    X, y = dataset("breast_cancer")
    model = RobustSVC(C=1.0, gamma=1 / 30).fit(X[:120], y[:120])
    before = snapshot(model)
    import gpath._kinkpath as kp

    monkeypatch.setattr(kp.KinkPath, "d_step", lambda self, flip: (_ for _ in ()).throw(KeyboardInterrupt))
    with pytest.raises(KeyboardInterrupt):
        model.fit(X[:200], 1 - y[:200] * (np.arange(200) % 5 > 0))
    assert snapshot(model) == before


def test_cache_size_limit_is_a_clear_error_and_keeps_the_model():
    from gpath.cache import CacheFullError

    X, y = dataset("breast_cancer")
    model = IncrementalSVC(C=10.0, gamma=0.05).fit(X[:250], y[:250])
    before = snapshot(model)
    # 0.01 MB holds 5 columns of 255 float64 values: fewer than the margin set needs.
    model.set_params(cache_size=0.01)
    with pytest.raises(CacheFullError, match="raise cache_size"):
        model.update(X_add=X[250:255], y_add=y[250:255])
    model.set_params(cache_size=1024)
    assert snapshot(model) == before


def test_updates_leave_no_reference_cycles(fitted):
    # Every state an update leaves behind is freed at once by reference counting: none waits
    # for Python's cyclic collector with its arrays (a bound method of the state held by its
    # own active set made each one a cycle: some hundred states alive between collections,
    # a 90 ms full collection every few thousand updates). SVC, ε-SVR, and a multiclass model.
    import gc

    from gpath import IncrementalSVR
    from gpath._path import SVCState

    model, X, y = fitted
    svr = IncrementalSVR(C=10.0, gamma=0.05).fit(X[:200], X[:200, 0])
    labels = np.arange(260) % 3
    multi = IncrementalSVC(C=10.0, gamma=0.05).fit(X[:200], labels[:200])
    gc.collect()
    gc.disable()
    try:
        for i in range(250, 260):
            model.update(X[i : i + 1], y[i : i + 1], remove=model.sample_ids_[:1])
            svr.update(X[i : i + 1], X[i : i + 1, 0], remove=svr.sample_ids_[:1])
            multi.update(X[i : i + 1], labels[i : i + 1], remove=multi.sample_ids_[:1])
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        left = [o for o in gc.garbage if isinstance(o, SVCState)]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    assert not left, f"{len(left)} states left to the cyclic collector"
    # The states still compute what their active sets need.
    assert model.check_kkt() <= 1e-9 and svr.check_kkt() <= 1e-9 and multi.check_kkt() <= 1e-9


def test_an_update_that_moves_nothing_shares_its_factor_and_a_failure_leaves_it_as_it_was(monkeypatch):
    # Such an update's state holds the factor's R and Q_MM with the state it started from
    # (BorderedFactor.share). Here its KKT check is made to fail, so that SimpleSVM's polish
    # works on the new state, whose factor is first refactored (a write to R), and the update
    # then fails: the model's factor must be as it was, the same arrays; committed, the next
    # updates must stay exact.
    import gpath._simplesvm as simplesvm_module
    X, y = dataset("breast_cancer")
    model = IncrementalSVC(C=1.0, gamma=0.05).fit(X[:300], y[:300])
    yf = (2 * y[:400] - 1) * model.decision_function(X[:400])
    beyond = 300 + int(np.flatnonzero(yf[300:] > 1.5)[0])
    idle = model.sample_ids_[int(np.flatnonzero((model.alpha_ == 0) & (yf[:300] > 1.5))[0])]
    factor = model.states_[0].factor
    R, before = factor._r, snapshot(model)
    polished = []
    kkt_check = path_module.SVCState.kkt_check

    def failing_once(self, tol):
        if not polished:
            polished.append(self.factor._r is R)  # shared until polish writes
            return 1.0, 1.0
        return kkt_check(self, tol)

    def rejected(*args, **kwargs):
        raise PathError("injected failure")

    polish, written = simplesvm_module.polish, []

    def refactored_polish(state):
        state.factor.refactor()
        m = state.factor.size
        written.append(not np.array_equal(state.factor._r[:m, :m], R[:m, :m]))
        return polish(state)

    with monkeypatch.context() as m:
        m.setattr(path_module.SVCState, "kkt_check", failing_once)
        m.setattr(simplesvm_module, "polish", refactored_polish)
        m.setattr("gpath.incremental.check_state", rejected)  # (the check after the path)
        with pytest.raises(PathError, match="injected"):
            model.update(X_add=X[beyond : beyond + 1], y_add=y[beyond : beyond + 1], remove=[idle])
    assert polished == [True] and written == [True]
    assert model.states_[0].factor is factor and factor._r is R
    assert snapshot(model) == before
    model.update(X_add=X[beyond : beyond + 1], y_add=y[beyond : beyond + 1], remove=[idle])
    assert model.states_[0].unmoved and model.states_[0].factor._r is R  # shared, now its own
    rows = [r for r in range(300) if r != idle] + [beyond]
    for t in range(400, 440):  # the next updates write their own copies
        model.update(X_add=X[t : t + 1], y_add=y[t : t + 1], remove=model.sample_ids_[:1])
        rows = rows[1:] + [t]
    assert_exact(model, X[rows], y[rows])


@pytest.mark.parametrize("error", [KeyboardInterrupt, PathError("injected failure")])
def test_a_failure_after_an_update_that_moves_nothing_leaves_the_model_as_it_was(monkeypatch, error):
    # NumPy builds an update that moves no coefficient directly (SVCState._shifted), in the
    # shared cache and row buffers: a failure after it must leave the model as it was.
    from gpath import IncrementalSVR
    from gpath.datasets import load_waterflow_regression

    X, y = load_waterflow_regression()
    X, y = (X - X.mean(0)) / X.std(0), (y - y.mean()) / y.std()
    model = IncrementalSVR(C=10.0, epsilon=0.1, gamma=1 / 7).fit(X[:600], y[:600])
    inside = np.flatnonzero(np.abs(y[600:800] - model.predict(X[600:800])) < 0.09)[:1] + 600
    at_zero = model.sample_ids_[np.flatnonzero(model.state_.alpha.reshape(-1, 2).max(axis=1) == 0.0)[:1]]
    built = []
    shifted = path_module.SVCState._shifted
    monkeypatch.setattr(path_module.SVCState, "_shifted",
                        lambda self, *a: built.append(shifted(self, *a)) or built[-1])
    before = snapshot(model)

    def failing(*args, **kwargs):
        raise error

    with monkeypatch.context() as m:
        m.setattr("gpath.svr._check_state", failing)
        with pytest.raises(type(error) if isinstance(error, Exception) else error):
            model.update(X_add=X[inside], y_add=y[inside], remove=at_zero)
    assert built and built[-1][0] is not None  # it was built directly
    assert snapshot(model) == before
    _assert_cache_is_fresh(model)
    model.update(X_add=X[inside], y_add=y[inside], remove=at_zero)
    assert model.last_update_.n_breakpoints == 0 and built[-1][0] is not None
    assert model.check_kkt() <= 1e-9
    rows = np.concatenate([np.delete(np.arange(600), at_zero), inside])
    fresh = IncrementalSVR(C=10.0, epsilon=0.1, gamma=1 / 7).fit(X[rows], y[rows])
    np.testing.assert_allclose(model.predict(X[:900]), fresh.predict(X[:900]), rtol=0, atol=1e-8)


@pytest.mark.parametrize("inject", [False, True])
def test_an_update_whose_margin_matrix_is_singular_but_for_the_ridge_stays_exact(monkeypatch, inject):
    # Found by a randomized search: a linear ε-SVR on two features of size 1e3 (K up to 3.5e6,
    # the ridge 1e-6). The updates' paths bring a fourth point into the margin set, whose matrix
    # is then singular but for the ridge (rank 3 in two features with the bias): its condition
    # number is some 1e13. The path once refused it (SingularMarginError) and refitted, and the
    # two answers differed by some 2e-7. Float64 resolves the ridge beside these kernel
    # values: the pivot is taken as any other, and the path is exact. A refusal (injected in
    # the last update, at its fifth breakpoint) is finished by an exact refit.
    from gpath import IncrementalSVR
    from gpath.linalg import SingularMarginError

    rng = np.random.default_rng(435)
    n, d = int(rng.integers(6, 20)), int(rng.integers(1, 3))
    X = rng.normal(size=(n + 10, d)) * 10.0 ** int(rng.integers(2, 5))
    y = np.sin(X[:, 0] / X[:, 0].std()) + 0.1 * rng.normal(size=n + 10)
    C = float(10 ** rng.uniform(-2, 2))
    model = IncrementalSVR(C=C, epsilon=0.05, kernel="linear", method="multiple").fit(X[:n], y[:n])
    rows = list(range(n))
    methods, calls = [], {"n": 0}
    for step in range(4):
        if inject and step == 3:
            _fail_part_way(monkeypatch, "numba", SingularMarginError("a singular margin matrix (injected)"), calls)
        picked = rng.choice(len(rows), 2, replace=False)
        model.update(X[n + 2 * step : n + 2 * step + 2], y[n + 2 * step : n + 2 * step + 2],
                     remove=model.sample_ids_[picked])
        rows = [r for i, r in enumerate(rows) if i not in set(picked.tolist())] + [n + 2 * step, n + 2 * step + 1]
        methods.append(model.last_update_.method)
        assert model.check_kkt() <= 1e-9
    assert methods == ["path"] * 3 + ["refit" if inject else "path"]
    assert calls["n"] == (5 if inject else 0)
    # (LIBSVM, exact_svr's start, runs for minutes on these unscaled features: the exact fit of
    # the same rows is the reference.)
    fresh = IncrementalSVR(C=C, epsilon=0.05, kernel="linear").fit(X[rows], y[rows])
    assert fresh.check_kkt() <= 1e-9
    # Equal to round-off of f's terms α_j K(x_i, x_j), up to C·max K ≈ 1.5e8 here.
    scale = C * np.abs(X @ X[rows].T).max()
    np.testing.assert_allclose(model.predict(X), fresh.predict(X), rtol=0, atol=1e-12 * scale)


@pytest.mark.parametrize("inject", [False, True])
def test_an_update_whose_path_cycles_is_finished_by_an_exact_refit(monkeypatch, inject):
    # Found by a randomized search: duplicate points on the tube's edge at C = 1e6 with a tiny
    # ridge; one point at a time ("single"), the path cycled among its ties and the update
    # raised PathError where a fit of the same rows is exact. The update now refits instead.
    # (Whether this path cycles depends on the last bits of the fit's factor: the cycling is
    # also injected, at the path's fifth breakpoint.)
    from gpath import IncrementalSVR

    a, b, c = [-0.3648798199148117, -0.8022274453387729], [1.5336796555949415, 0.9376195117437235], [
        -1.3938793380400938, 0.35379991781743103]
    X = np.array([[0.9276894430242717, -1.9977357798093645], [0.08882557334438028, -0.6008773095211115], a, b, c,
                  a, a])
    y = np.array([0.9364077384125735, 0.09283558785079028, -0.7239935927100732, 0.5123563648197369,
                  -0.4717392816603625, -0.7239935927100732, 0.17135492239509414])
    X_add, y_add = np.array([a, b, b, b, c, b]), np.array([y[2], y[3], y[3], y[3], y[4], y[3]])
    params = dict(C=1e6, epsilon=0.0, kernel="poly", degree=2, gamma=1.437371773348092, coef0=1.0)
    model = IncrementalSVR(**params, method="single").fit(X, y)
    calls = {"n": 0}
    if inject:
        _fail_part_way(monkeypatch, "numba", PathError("degenerate cycling (injected)"), calls)
    model.update(X_add, y_add, remove=[6, 2, 4, 0, 5, 3])
    assert calls["n"] == (5 if inject else 0)
    assert model.last_update_.method in (("refit",) if inject else ("path", "refit")) and model.check_kkt() <= 1e-9
    rows = np.vstack([X[[1]], X_add]), np.r_[y[[1]], y_add]
    fresh = IncrementalSVR(**params).fit(*rows)
    scale = np.abs(fresh.predict(rows[0])).max()
    np.testing.assert_allclose(model.predict(rows[0]), fresh.predict(rows[0]), rtol=0, atol=1e-7 * scale)
