"""gpath.river.SlidingWindowSVC: a river classifier whose model is the exact SVC of its window
(issue 13.4)."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest
from helpers import assert_exact
from river import compose, datasets, evaluate, metrics, preprocessing

from gpath import IncrementalSVC
from gpath._array_api import to_host
from gpath.river import SlidingWindowSVC


def _codes(svm):
    """The window's labels as the SVM's 0/1 codes."""
    return np.array([int(y == svm.classes_[1]) for y in svm.y_window_])


def _assert_batch_refit(svm, like=None):
    """The SVM equals the exact C-SVC of its window: LIBSVM's index sets re-solved in float64
    (gpath.reference.exact_svc) and a fit from scratch, both to 1e-9 of the decision values."""
    X, y = svm.X_window_, _codes(svm)
    Xd = X if like is None else like(X)
    assert_exact(svm.svc_, X, y, rtol=1e-9)
    fresh = IncrementalSVC(C=svm.C, kernel=svm.kernel, gamma=svm.svc_.kernel_.gamma, ridge=svm.ridge).fit(Xd, y)
    f, f_fresh = to_host(svm.svc_.decision_function(Xd)), to_host(fresh.decision_function(Xd))
    assert np.abs(f - f_fresh).max() <= 1e-9 * np.abs(f_fresh).max()
    return f


def test_progressive_validation_in_a_pipeline_matches_a_batch_refit():
    # The README example: river's Phishing stream through a StandardScaler, progressive
    # validation, then the final model against a refit of its window.
    svm = SlidingWindowSVC(window=300, batch=25, C=10.0)
    model = compose.Pipeline(preprocessing.StandardScaler(), svm)
    accuracy = evaluate.progressive_val_score(datasets.Phishing(), model, metrics.Accuracy())
    assert 0.8 < accuracy.get() < 1.0
    n = sum(1 for _ in datasets.Phishing())
    assert svm.n_pending_ == n % 25 and len(svm.y_window_) == 300
    assert svm.n_refits_ == 1 and svm.n_updates_ == n // 25 - 1  # one fit, then MID updates only
    _assert_batch_refit(svm)


@pytest.mark.parametrize("C,gamma", [(1.0, "scale"), (1e3, 5.0)])
def test_the_window_is_the_last_points_of_the_stream(backend, C, gamma):
    # Bananas as it comes (no scaler): the window is exactly the stream's last points before
    # the pending batch, and the model their exact SVC, on numpy and array_api_strict.
    stream = list(datasets.Bananas().take(700))
    like = None if backend.name == "numpy" else backend.asarray(np.zeros(1))
    svm = SlidingWindowSVC(window=250, batch=40, C=C, gamma=gamma, like=like)
    hits = 0
    for x, y in stream:
        hits += svm.predict_one(x) == y
        svm.learn_one(x, y)
    assert hits > 0.6 * len(stream)
    pending = len(stream) % 40
    rows = stream[len(stream) - pending - 250 : len(stream) - pending]
    np.testing.assert_array_equal(svm.X_window_, [[x["1"], x["2"]] for x, _ in rows])
    assert list(svm.y_window_) == [y for _, y in rows]
    backend.check(svm.svc_.decision_function(backend.asarray(svm.X_window_)), (250,))
    _assert_batch_refit(svm, like=backend.asarray)


def _window_before_sync(model):
    """The window's points (the last ``window`` of the SVM's and those screening set aside),
    read without taking the latter in."""
    points = model._window + model._deferred
    return points[len(points) - min(model.window, len(points)):]


@pytest.mark.parametrize("task", ["svc", "svr"])
def test_screened_points_leave_the_model_exact_on_its_window(task, backend):
    # batch = 1: every point whose batch screening takes in without an update leaves the SVM
    # as it is, and that SVM is the exact solution of the whole window, points set aside
    # included, before svc_/svr_ takes them in (the reference re-solved in float64 on the
    # window, at every step where points wait). Reading svc_/svr_ then takes them in.
    from gpath.datasets import load_waterflow_regression
    from gpath.reference import exact_svc, exact_svr
    from gpath.river import SlidingWindowSVR

    if task == "svc":
        stream = list(datasets.Bananas().take(420))
        model = SlidingWindowSVC(window=100, batch=1, C=10.0, gamma=1.0, like=backend.asarray(np.zeros(1)))
    else:
        X, y = load_waterflow_regression()
        X, y = X[:420], (y[:420] - y.mean()) / y.std()
        stream = [(dict(zip(range(7), row)), float(t)) for row, t in zip(X, y)]
        model = SlidingWindowSVR(window=100, batch=1, C=10.0, epsilon=0.2, gamma=1.0 / 7,
                                 like=backend.asarray(np.zeros(1)))
    checked = 0
    for t, (x, y) in enumerate(stream):
        model.learn_one(x, y)
        if t >= 400 and model._deferred:
            break  # points wait: reading the SVM below takes them in
        if t < 150 or not model._deferred or t % 3:
            continue
        window = _window_before_sync(model)
        Xw = model._matrix(window, model.features_)
        yw = model._targets(window)
        f = model._decisions(model._svm, model._device(Xw))
        if task == "svc":
            ref = exact_svc(Xw, 2.0 * yw - 1.0, 10.0, gamma=1.0, ridge=model.ridge)
            f_ref = ref.decision_function(Xw)
        else:
            ref = exact_svr(Xw, yw, 10.0, 0.2, gamma=1.0 / 7, ridge=model.ridge)
            f_ref = ref.predict(Xw)
        assert ref.certified
        assert np.abs(f - f_ref).max() <= 1e-9 * max(1.0, np.abs(f_ref).max()), t
        checked += 1
    assert model.n_screened_ > 50 and checked > 10 and model._deferred
    n_updates, final = model.n_updates_, model._matrix(_window_before_sync(model), model.features_)
    svm = model.svc_ if task == "svc" else model.svr_  # takes in the points set aside: one update
    assert model.n_updates_ == n_updates + 1 and not model._deferred
    assert len(model._window) == 100 and svm.check_kkt() <= 1e-9
    np.testing.assert_array_equal(model.X_window_, final)


def test_waits_for_two_classes_and_drops_the_svm_when_one_is_left():
    # A stream whose first 45 points and a later run of 60 are of one class: no SVM while the
    # window (40 points) holds one class; predictions are then the class frequencies.
    rng = np.random.default_rng(0)
    labels = ["b"] * 45 + ["a", "b"] * 20 + ["a"] * 60 + ["a", "b"] * 20
    svm = SlidingWindowSVC(window=40, batch=5, gamma=0.5)
    assert svm.predict_one({"u": 0.0}) is None and svm.predict_proba_one({"u": 0.0}) == {}
    states = []
    for t, label in enumerate(labels):
        x = {"u": rng.normal(1.0 if label == "a" else -1.0), "v": rng.normal()}
        svm.learn_one(x, label)
        states.append(svm.svc_ is not None)
        if svm.svc_ is None and t >= 4:
            assert svm.predict_proba_one(x) == pytest.approx(
                {c: sum(y == c for _, y in svm._window + svm._pending) / len(svm._window + svm._pending)
                 for c in svm.classes_})
    assert not any(states[:45])  # waited for the second class
    assert any(states[45:100])
    assert not states[144]  # 40 points of "a" only
    assert states[-1] and svm.classes_ == ["a", "b"]
    assert svm.n_refits_ >= 2
    _assert_batch_refit(svm)


def test_duplicates_and_a_new_feature():
    # Every point twice (duplicate margin points: the ridge keeps the system nonsingular),
    # then a feature that was never seen: the next batch refits with the new column.
    stream = list(datasets.Phishing().take(300))
    svm = SlidingWindowSVC(window=120, batch=20, C=5.0)
    for x, y in stream[:150]:
        svm.learn_one(x, y)
        svm.learn_one(dict(x), y)
    refits = svm.n_refits_
    _assert_batch_refit(svm)
    for i, (x, y) in enumerate(stream[150:]):
        svm.learn_one({**x, "extra": float(i % 3)}, y)
    assert svm.n_refits_ == refits + 1 and "extra" in svm.features_
    # 450 points learned, 10 pending: the window is the new points 20..139
    assert np.all(svm.X_window_[:, svm.features_.index("extra")] == [i % 3 for i in range(20, 140)])
    _assert_batch_refit(svm)


def test_predict_proba_one():
    stream = list(datasets.Phishing().take(200))
    svm = SlidingWindowSVC(window=150, batch=25, classes=(False, True))
    assert svm.predict_proba_one(stream[0][0]) == {False: 0.5, True: 0.5}
    for x, y in stream:
        svm.learn_one(x, y)
    for x, _ in stream[:50]:
        p = svm.predict_proba_one(x)
        assert set(p) == {False, True} and math.isclose(sum(p.values()), 1.0)
        row = np.array([[x.get(f, 0.0) for f in svm.features_]])
        f = float(to_host(svm.svc_.decision_function(row))[0])  # the logistic of the decision value
        assert p[True] == pytest.approx(1.0 / (1.0 + math.exp(-f)), rel=1e-12)
        assert svm.predict_one(x) == (p[True] > 0.5)
        assert svm.predict_one(x) == bool(svm.svc_.predict(row)[0])


def test_a_callable_kernel_streams_too():
    import array_api_compat

    def rbf(X, Z):
        xp = array_api_compat.array_namespace(X, Z)
        diff = X[:, None, :] - Z[None, :, :]
        return xp.exp(-0.5 * xp.sum(diff * diff, axis=2))

    svm = SlidingWindowSVC(window=100, batch=20, kernel=rbf)
    for x, y in datasets.Bananas().take(260):
        svm.learn_one(x, y)
    named = IncrementalSVC(gamma=0.5).fit(svm.X_window_, _codes(svm))
    np.testing.assert_allclose(to_host(svm.svc_.decision_function(svm.X_window_)),
                               named.decision_function(svm.X_window_), rtol=0, atol=1e-10)


def test_river_estimator_checks():
    # river's own conventions: cloning, pickling, purity of learn_one and predict_*_one,
    # shuffled, emerging and disappearing features, bounded memory, binary probabilities.
    from river import checks

    checks.check_estimator(SlidingWindowSVC(window=100, batch=10, classes=(False, True)))


@pytest.mark.parametrize("params,error,match", [
    (dict(window=1), ValueError, "window must be an integer >= 2; got 1"),
    (dict(window=10.0), ValueError, "window must be an integer >= 2; got 10.0"),
    (dict(batch=0), ValueError, "batch must be an integer >= 1; got 0"),
    (dict(window=10, batch=11), ValueError, "batch must be at most window=10; got 11"),
    (dict(C=-1.0), ValueError, "C must be"),
    (dict(kernel="sigmoid"), ValueError, "kernel=.sigmoid. is taken by SimpleSVC and IncrementalSVC"),
    (dict(gamma="big"), ValueError, "gamma must be"),
    (dict(method="triple"), ValueError, "method must be one of"),
    (dict(classes=(1, 1)), ValueError, "classes must be two distinct hashable labels"),
    (dict(classes=([1], [2])), ValueError, "classes must be two distinct hashable labels"),
    (dict(classes=(1, 2, 3)), ValueError, "classes must be two distinct hashable labels"),
])
def test_bad_parameters(params, error, match):
    with pytest.raises(error, match=match):
        SlidingWindowSVC(**params)


@pytest.mark.parametrize("x,y,error,match", [
    ([1.0, 2.0], True, TypeError, "x must be a dict of feature name -> number; got list"),
    ({"a": "red"}, True, TypeError, r"x\['a'\] must be a real number; got str 'red'"),
    ({"a": float("nan")}, True, ValueError, r"x\['a'\] must be finite; got nan"),
    ({"a": 10**400}, True, ValueError, r"x\['a'\] must be finite; got int beyond float64's range"),
    ({"a": 1.0}, None, ValueError, "y must be a label; got None"),
    ({"a": 1.0}, [1], TypeError, "y must be a hashable label; got list"),
    ({"a": 1.0}, "maybe", ValueError, r"y='maybe' is not one of classes=\(False, True\)"),
])
def test_bad_points_change_nothing(x, y, error, match):
    svm = SlidingWindowSVC(window=50, batch=10, classes=(False, True))
    for x0, y0 in datasets.Phishing().take(29):
        svm.learn_one(x0, y0)
    before = pickle.dumps(svm)
    with pytest.raises(error, match=match):
        svm.learn_one(x, y)  # the 30th point would trigger an update
    assert pickle.dumps(svm) == before


def test_a_third_label_is_refused():
    svm = SlidingWindowSVC(window=20, batch=5)
    for i in range(10):
        svm.learn_one({"a": float(i)}, "x" if i % 2 else "y")
    before = pickle.dumps(svm)
    with pytest.raises(ValueError, match=r"binary classifier; got a third label y='z' after \['x', 'y'\]"):
        svm.learn_one({"a": 1.0}, "z")
    assert pickle.dumps(svm) == before
    with pytest.raises(TypeError, match=r"x\['a'\] must be a real number"):
        svm.predict_one({"a": "red"})
    assert svm.predict_one({"a": 1.0, "unknown": "ignored"}) in ("x", "y")


def test_a_prediction_checks_x_as_learning_does():
    svm = SlidingWindowSVC(window=20, batch=5)
    for i in range(10):
        svm.learn_one({"a": float(i), "b": float(i % 3)}, "x" if i % 2 else "y")
    # The first bad value of the model's features in x's own order, named by x's key.
    with pytest.raises(TypeError, match=r"x\['b'\] must be a real number"):
        svm.predict_one({"b": "s", "a": math.nan, "c": "ignored"})
    with pytest.raises(ValueError, match=r"x\['a'\] must be finite; got nan"):
        svm.predict_one({"a": math.nan, "b": "s"})
    with pytest.raises(ValueError, match=r"x\['a'\] must be finite; got int beyond"):
        svm.predict_proba_one({"a": 10**400})
    # Any real number counts as its float, a missing feature as 0, an unknown one not at all.
    assert svm.predict_proba_one({"a": 3, "b": True}) == svm.predict_proba_one({"a": 3.0, "b": 1.0})
    assert svm.predict_proba_one({"a": np.float32(0.5), "c": "x"}) == svm.predict_proba_one({"b": 0.0, "a": 0.5})


# ---------------------------------------------------------------- SlidingWindowSVR (issue 19.3)
def test_svr_progressive_validation_in_a_pipeline_is_exact_on_its_window(backend):
    # WaterFlow's next hour from its last 7 through a StandardScaler, progressive validation;
    # the final model is the exact ε-SVR of its window (the reference re-solved in float64).
    from river import stream

    from gpath.datasets import load_waterflow_regression
    from gpath.reference import exact_svr
    from gpath.river import SlidingWindowSVR

    X, y = load_waterflow_regression()
    X, y = X[:500], (y[:500] - y.mean()) / y.std()
    svr = SlidingWindowSVR(window=200, batch=10, C=10.0, epsilon=0.1, gamma=1.0 / 7, like=backend.asarray(np.zeros(1)))
    model = compose.Pipeline(preprocessing.StandardScaler(), svr)
    mae = evaluate.progressive_val_score(stream.iter_array(X, y), model, metrics.MAE())
    assert mae.get() < 0.5 * np.mean(np.abs(y - y.mean()))  # far better than the mean of the series
    # One fit, then a MID update for each batch, except those that screening showed leave the
    # SVR as it is (every new point inside the tube, every point gone off its edges).
    assert svr.n_refits_ == 1 and svr.n_updates_ + svr.n_screened_ == 49 and svr.n_screened_ > 0
    Xw, yw = svr.X_window_, svr.y_window_
    assert Xw.shape == (200, 7)
    np.testing.assert_array_equal(yw, y[300:500])
    ref = exact_svr(Xw, yw, 10.0, 0.1, gamma=1.0 / 7)
    assert ref.certified
    f = to_host(svr.svr_.predict(backend.asarray(Xw)))
    assert np.abs(f - ref.predict(Xw)).max() <= 1e-9 * (1 + np.abs(yw).max())
    assert svr.svr_.check_kkt() <= 1e-9
    x = dict(zip(range(7), X[0]))
    assert isinstance(model.predict_one(x), float)
    # predict_one is the model's predict on the row of x (without predict's checks of X).
    for row in Xw[:20]:
        one = svr.predict_one(dict(zip(svr.features_, row)))
        assert one == pytest.approx(float(to_host(svr.svr_.predict(backend.asarray(row[None, :])))[0]), rel=1e-12,
                                    abs=1e-12)


def test_svr_river_estimator_checks_and_bad_input():
    from river import checks

    from gpath.river import SlidingWindowSVR

    checks.check_estimator(SlidingWindowSVR(window=100, batch=10))
    model = SlidingWindowSVR(window=5, batch=2)
    assert model.predict_one({"a": 1.0}) == 0.0
    model.learn_one({"a": 1.0}, 2.0)
    assert model.predict_one({"a": 1.0}) == 2.0  # the mean of the targets before the first batch
    before = pickle.dumps(model.__dict__)
    for x, y, error in [({"a": 1.0}, "2", TypeError), ({"a": 1.0}, math.nan, ValueError),
                        ({"a": math.inf}, 1.0, ValueError), ([1.0], 1.0, TypeError)]:
        with pytest.raises(error):
            model.learn_one(x, y)
        assert pickle.dumps(model.__dict__) == before
    for params in [dict(window=0), dict(batch=0), dict(window=3, batch=4), dict(epsilon=-1.0), dict(C=0.0)]:
        with pytest.raises(ValueError):
            SlidingWindowSVR(**params)


def test_no_screening_while_the_bias_is_only_bounded():
    # A wide tube (ε = 1 in units of the targets' spread) leaves the margin set empty at most
    # steps: b is then the middle of an interval that every point moves, and a batch inside
    # the tube changes it. Screening must wait for a margin set; where points do wait, the
    # SVR is still the exact one of its window (without the condition: 0.7 off).
    from gpath.datasets import load_waterflow_regression
    from gpath.reference import exact_svr
    from gpath.river import SlidingWindowSVR

    X, y = load_waterflow_regression()
    X, y = X[:400], (y[:400] - y.mean()) / y.std()
    model = SlidingWindowSVR(window=60, batch=1, C=10.0, epsilon=1.0, gamma=1.0 / 7)
    empty = waits = 0
    for t, (row, target) in enumerate(zip(X, y)):
        model.learn_one(dict(zip(range(7), row)), float(target))
        empty += model._svm is not None and model._svm.state_.active.size == 0
        if t < 100 or not model._deferred:
            continue
        window = _window_before_sync(model)
        Xw, yw = model._matrix(window, model.features_), model._targets(window)
        ref = exact_svr(Xw, yw, 10.0, 1.0, gamma=1.0 / 7, ridge=model.ridge)
        assert ref.certified
        assert np.abs(model._decisions(model._svm, Xw) - ref.predict(Xw)).max() <= 1e-9 * (1.0 + np.abs(yw).max()), t
        waits += 1
    assert empty > 100 and waits > 0


def test_points_set_aside_survive_copies_failures_and_old_pickles(monkeypatch):
    # A model with points set aside by screening: a pickle and a deep copy learn on exactly as
    # it does; a read of svc_ whose update and refit both fail raises and changes nothing; a
    # model pickled before screening (its SVM in svc_) loads and predicts.
    import copy

    from gpath import PathError

    stream = list(datasets.Bananas().take(300))
    svm = SlidingWindowSVC(window=60, batch=1, C=10.0, gamma=1.0)
    for t, (x, y) in enumerate(stream):
        svm.learn_one(x, y)
        if t > 150 and svm._deferred:
            break
    assert svm._deferred
    twins = [pickle.loads(pickle.dumps(svm)), copy.deepcopy(svm)]
    for x, y in stream[t + 1 : t + 60]:
        for model in (svm, *twins):
            model.learn_one(x, y)
    for model in twins:
        assert [model.predict_one(x) for x, _ in stream[:50]] == [svm.predict_one(x) for x, _ in stream[:50]]
        np.testing.assert_array_equal(model.X_window_, svm.X_window_)
        assert model.svc_.check_kkt() <= 1e-9

    for x, y in stream[t + 60 :]:
        svm.learn_one(x, y)
        if svm._deferred:
            break
    assert svm._deferred

    def failing(*args, **kwargs):
        raise PathError("injected")

    before = pickle.dumps(svm)
    monkeypatch.setattr(IncrementalSVC, "_window_update", failing)  # (the window's update)
    monkeypatch.setattr(IncrementalSVC, "fit", failing)
    with pytest.raises(PathError, match="injected"):
        _ = svm.svc_
    assert pickle.dumps(svm) == before
    monkeypatch.undo()

    assert svm.svc_ is not None and not svm._deferred  # the points set aside taken in, as before screening
    old = {key: value for key, value in copy.deepcopy(svm).__dict__.items() if key not in ("_deferred", "n_screened_")}
    old["svc_"] = old.pop("_svm")
    loaded = SlidingWindowSVC.__new__(SlidingWindowSVC)
    loaded.__setstate__(old)
    assert loaded.n_screened_ == 0 and not loaded._deferred
    for x, y in stream[250:]:
        loaded.learn_one(x, y)
        svm.learn_one(x, y)
    assert [loaded.predict_one(x) for x, _ in stream[:50]] == [svm.predict_one(x) for x, _ in stream[:50]]
    np.testing.assert_array_equal(loaded.X_window_, svm.X_window_)


def test_the_windows_update_is_the_public_update():
    # SlidingWindowSVC updates its SVM through IncrementalSVC._window_update, which skips the
    # checks of arguments the window built itself: the same model, bit for bit, as update().
    from helpers import dataset

    X, y = dataset("waterflow")
    y = 2 * y.astype(np.int64) + 3  # (labels 3 and 5, weighted apart: not the classes' indices)
    models = [IncrementalSVC(C=10.0, gamma=1.0, class_weight={3: 2.0, 5: 1.0}).fit(X[:200], y[:200])
              for _ in range(2)]
    lo = 200
    for m in [1] * 20 + [3, 2, 5]:
        models[0]._window_update(X[lo : lo + m], y[lo : lo + m], m)
        models[1].update(X_add=X[lo : lo + m], y_add=y[lo : lo + m], remove=models[1].sample_ids_[:m])
        for name in ("dual_coef_", "intercept_", "support_", "support_vectors_", "sample_ids_", "alpha_", "n_iter_"):
            np.testing.assert_array_equal(getattr(models[0], name), getattr(models[1], name))
        stats = [model.last_update_ for model in models]
        assert stats[0].n_breakpoints == stats[1].n_breakpoints and stats[0].method == stats[1].method == "path"
        np.testing.assert_array_equal(models[0].state_.yf, models[1].state_.yf)
        lo += m
    assert models[0].check_kkt() <= 1e-9


def test_the_regression_windows_update_is_the_public_update():
    # The same for SlidingWindowSVR's IncrementalSVR._window_update.
    from gpath import IncrementalSVR
    from gpath.datasets import load_waterflow_regression

    X, y = load_waterflow_regression()
    X, y = (X - X.mean(0)) / X.std(0), (y - y.mean()) / y.std()
    models = [IncrementalSVR(C=10.0, epsilon=0.1, gamma=1 / 7).fit(X[:200], y[:200]) for _ in range(2)]
    lo = 200
    for m in [1] * 20 + [3, 2, 5]:
        models[0]._window_update(X[lo : lo + m], y[lo : lo + m], m)
        models[1].update(X_add=X[lo : lo + m], y_add=y[lo : lo + m], remove=models[1].sample_ids_[:m])
        for name in ("dual_coef_", "intercept_", "support_", "sample_ids_"):
            np.testing.assert_array_equal(getattr(models[0], name), getattr(models[1], name))
        lo += m
    assert models[0].check_kkt() <= 1e-9
