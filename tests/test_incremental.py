"""IncrementalSVC: exactness against the reference on real data, on every backend."""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
import pytest
from helpers import Pool, assert_exact, dataset, snapshot

from gpath import IncrementalSVC, IncrementalSVR
from gpath._array_api import to_host


def _run_sequence(model, backend, name, n0, n_updates, seed, check_every=1):
    X, y = dataset(name)
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(y)) if name != "waterflow" else np.arange(len(y))
    win = Pool(X, y, backend)
    win.fit(model, order[:n0])
    assert_exact(model, *win.current(model))
    nxt = n0
    for u in range(n_updates):
        m = int(rng.integers(0, 25))
        ids = np.array(list(win.rows))
        ell = int(rng.integers(0, 25)) if u % 3 else 0
        remove = rng.choice(ids, ell, replace=False) if name != "waterflow" else ids[:ell]
        win.update(model, order[nxt : nxt + m], remove)
        nxt += m
        stats = model.last_update_
        assert (stats.n_added, stats.n_removed) == (m, ell)
        if (u + 1) % check_every == 0:
            assert_exact(model, *win.current(model))
    return model


@pytest.mark.parametrize("name,C,gamma", [
    ("breast_cancer", 10.0, 0.05), ("breast_cancer", 0.1, "scale"),
    ("bananas", 100.0, 1.0), ("waterflow", 10.0, "scale"),
])
def test_mixed_updates_stay_exact(backend, name, C, gamma):
    model = IncrementalSVC(C=C, gamma=gamma)
    _run_sequence(model, backend, name, 300, 6, seed=1, check_every=2)
    backend.check(model.dual_coef_, (1, len(model.support_)))
    backend.check(model.support_vectors_, (len(model.support_), model.n_features_in_))
    backend.check(model.intercept_, (1,))


@pytest.mark.parametrize("kernel,params", [("linear", {}), ("poly", {"degree": 2, "coef0": 1.0, "gamma": 0.02})])
def test_other_kernels_exact(kernel, params):
    X, y = dataset("breast_cancer")
    model = IncrementalSVC(C=1.0, kernel=kernel, **params).fit(X[:250], y[:250])
    model.update(X_add=X[250:300], y_add=y[250:300], remove=np.arange(0, 40))
    assert_exact(model, X[40:300], y[40:300])


def test_numpy_and_array_api_strict_agree():
    from conftest import make_backend

    results = []
    for name in ("numpy", "array_api_strict"):
        backend = make_backend(name)
        model = _run_sequence(IncrementalSVC(C=10.0, gamma=0.5), backend, "bananas", 250, 5, seed=3,
                              check_every=5)
        results.append((to_host(model.decision_function(model.state_.X)), model.alpha_, model.support_,
                        model.last_update_.n_breakpoints, np.linalg.cond(model.state_.factor.matrix)))
    (f1, a1, s1, b1, cond), (f2, a2, s2, b2, _) = results
    # NumPy runs the compiled loop, array_api_strict the readable one: their sums round
    # differently, so they agree to the round-off the margin matrix's condition allows.
    tol = max(1e-12, np.finfo(float).eps * cond)
    np.testing.assert_allclose(f1, f2, rtol=0, atol=tol * (1 + np.abs(f1).max()))
    np.testing.assert_allclose(a1, a2, rtol=0, atol=tol * 10.0)
    np.testing.assert_array_equal(s1, s2)
    assert b1 == b2


def test_single_and_multiple_end_at_the_same_model(backend):
    X, y = dataset("breast_cancer")
    models = {}
    for method in ("multiple", "single"):
        model = IncrementalSVC(C=10.0, gamma=0.05, method=method).fit(backend.asarray(X[:300]), backend.asarray(y[:300]))
        model.update(X_add=backend.asarray(X[300:340]), y_add=backend.asarray(y[300:340]), remove=np.arange(10, 50))
        models[method] = model
    mid, sid = models["multiple"], models["single"]
    np.testing.assert_array_equal(mid.sample_ids_, sid.sample_ids_)
    np.testing.assert_allclose(mid.alpha_, sid.alpha_, atol=1e-10)
    assert mid.last_update_.n_breakpoints < sid.last_update_.n_breakpoints
    assert_exact(sid, np.concatenate([X[:10], X[50:340]]), np.concatenate([y[:10], y[50:340]]))


# ---------------------------------------------------------------- degenerate cases
def test_bias_is_the_middle_of_its_interval_when_no_coefficient_is_free(backend):
    # WaterFlow at C = 0.1, gamma = 1e-3: the 7th update ends with a lone margin point whose α
    # is round-off of 0 (4e-16). No coefficient is then strictly inside its box and every bias
    # of an interval 2.6e-7 wide is optimal; the model must take its middle, as LIBSVM and the
    # reference do, whichever method got there.
    X, y = dataset("waterflow")
    for method in ("multiple", "single"):
        model = IncrementalSVC(C=0.1, gamma=1e-3, method=method).fit(backend.asarray(X[:600]),
                                                                     backend.asarray(y[:600]))
        for step in range(7):
            lo = 600 + 30 * step
            model.update(X_add=backend.asarray(X[lo : lo + 30]), y_add=backend.asarray(y[lo : lo + 30]),
                         remove=model.sample_ids_[:30])
        assert_exact(model, X[210:810], y[210:810], rtol=1e-9)


def test_remove_only_zero_alpha_points_needs_no_breakpoint():
    X, y = dataset("breast_cancer")
    model = IncrementalSVC(C=1.0, gamma=0.05).fit(X[:300], y[:300])
    f_before = model.decision_function(X)
    zero = model.sample_ids_[model.alpha_ == 0][:20]
    model.update(remove=zero)
    assert model.last_update_.n_breakpoints == 0
    np.testing.assert_allclose(model.decision_function(X), f_before, rtol=0, atol=1e-12)
    keep = np.setdiff1d(np.arange(300), zero)
    assert_exact(model, X[keep], y[keep])


def test_an_update_that_moves_no_coefficient_publishes_the_same_solution(backend):
    # Adding a point beyond the margin and removing one with α = 0 moves nothing: the update
    # then skips the residual's repair and keeps the published support vectors, renumbering
    # their rows. Each such model must publish exactly what its α says, and stay exact.
    X, y = dataset("breast_cancer")
    model = IncrementalSVC(C=1.0, gamma=0.05).fit(backend.asarray(X[:300]), backend.asarray(y[:300]))
    unmoved = 0
    for t in range(300, 420):
        model.update(X_add=backend.asarray(X[t : t + 1]), y_add=backend.asarray(y[t : t + 1]),
                     remove=model.sample_ids_[:1])
        state = model.states_[0]
        unmoved += state.unmoved
        alpha = state.alpha
        signed = np.where(state.y_host > 0, alpha, -alpha)
        support = np.concatenate([np.flatnonzero((alpha > 0) & (state.y_host < 0)),
                                  np.flatnonzero((alpha > 0) & (state.y_host > 0))])
        np.testing.assert_array_equal(model.support_, support)
        np.testing.assert_array_equal(model.alpha_, alpha)
        np.testing.assert_array_equal(to_host(model.dual_coef_)[0], signed[support])
        np.testing.assert_array_equal(to_host(model.support_vectors_), X[t - 299 : t + 1][support])
        assert to_host(model.intercept_)[0] == state.b
        assert model.n_support_.tolist() == [int(np.sum(state.y_host[support] < 0)), int(np.sum(state.y_host[support] > 0))]
    assert 20 <= unmoved <= 100  # both kinds of update happened
    assert_exact(model, X[120:420], y[120:420])


def test_a_binary_update_publishes_its_support_vectors_when_first_read(backend):
    # A two-class update leaves support_, dual_coef_, ... to the first read; a copy, a pickle
    # and a saved file of the model so left publish what the model itself publishes.
    import copy
    import io
    import pickle

    import gpath

    X, y = dataset("breast_cancer")
    model = IncrementalSVC(C=10.0, gamma=0.05).fit(backend.asarray(X[:200]), backend.asarray(y[:200]))
    names = ("alpha_", "support_", "support_vectors_", "dual_coef_", "intercept_", "n_support_")
    assert all(name in vars(model) for name in names)  # (a fit publishes them)
    model.update(backend.asarray(X[200:230]), backend.asarray(y[200:230]), remove=model.sample_ids_[:30])
    assert not any(name in vars(model) for name in names)
    kept, pickled, file = copy.copy(model), pickle.loads(pickle.dumps(model)), io.BytesIO()
    model.save(file)
    file.seek(0)
    loaded = gpath.load(file)
    published = {name: getattr(model, name) for name in names}
    assert "_unpublished" not in vars(model)
    for other in (kept, pickled, loaded):
        for name in names:
            np.testing.assert_array_equal(to_host(getattr(other, name)), to_host(published[name]))
    np.testing.assert_array_equal(to_host(kept.decision_function(backend.asarray(X[:50]))),
                                  to_host(model.decision_function(backend.asarray(X[:50]))))
    assert_exact(model, X[30:230], y[30:230], X_device=backend.asarray(X[30:230]))
    with pytest.raises(AttributeError, match="no attribute 'coef'"):
        model.coef  # noqa: B018 (another missing name is still an AttributeError)
    with pytest.raises(AttributeError, match="only available when using a linear kernel"):
        model.coef_  # noqa: B018 (and a property's own error is its own)
    assert not hasattr(IncrementalSVC(), "support_")


def test_a_two_class_update_is_the_general_update(backend, monkeypatch):
    # A two-class model's update takes its one pair's path without the general update's set-up
    # for pairs, classes, sparse rows and refits (IncrementalSVC._two_class_path): the same
    # model, bit for bit, as the general update, the readable oracle, gives.
    X, y = dataset("waterflow")
    y = 2 * y.astype(np.int64) + 3  # (labels 3 and 5, weighted apart: not the classes' indices)
    models = [IncrementalSVC(C=10.0, gamma=1.0, class_weight={3: 2.0, 5: 1.0}).fit(backend.asarray(X[:200]), y[:200])
              for _ in range(2)]
    takes = IncrementalSVC._takes_two_class_path
    lo, taken = 200, []

    def route(self, *args, lean):  # (the general update for the second model)
        if lean:
            taken.append(takes(self, *args))
        return lean and taken[-1]

    steps = [(1, 1, None)] * 8 + [(3, 2, [0.05, 0.0, 2.5]), (0, 4, None), (2, 0, None), (0, "α = 0", None),
                                  (5, 5, None)]
    for m, ell, weights in steps:
        # (three points with α = 0 removed: no coefficient moves, and the published solution
        # is renumbered rather than built again)
        ids = models[0].sample_ids_[models[0].alpha_ == 0][:3] if ell == "α = 0" else models[0].sample_ids_[:ell]
        for model, lean in zip(models, (True, False)):
            monkeypatch.setattr(IncrementalSVC, "_takes_two_class_path", functools.partialmethod(route, lean=lean))
            model.update(backend.asarray(X[lo : lo + m]) if m else None, y[lo : lo + m] if m else None, remove=ids,
                         sample_weight_add=weights)
        assert taken[-1]  # (the first model took the two-class path)
        assert sorted(vars(models[0])) == sorted(vars(models[1]))  # (the same published, the same left to a read)
        for name in ("alpha_", "support_", "support_vectors_", "dual_coef_", "intercept_", "n_support_", "sample_ids_",
                     "n_iter_"):
            np.testing.assert_array_equal(to_host(getattr(models[0], name)), to_host(getattr(models[1], name)))
        stats = [model.last_update_ for model in models]
        assert dataclasses.replace(stats[0], time=0.0) == dataclasses.replace(stats[1], time=0.0)
        assert stats[0].method == "path" and models[0].state_.unmoved == (ell == "α = 0")
        np.testing.assert_array_equal(to_host(models[0].state_.yf), to_host(models[1].state_.yf))
        np.testing.assert_array_equal(models[0]._weights, models[1]._weights)
        np.testing.assert_array_equal(models[0].class_weight_, models[1].class_weight_)
        lo += m
    assert models[0].check_kkt() <= 1e-9


def test_the_kkt_scale_is_exact_whether_its_share_was_carried_or_dropped():
    # The scale of the KKT check, 1 + max_i Σ_j |Q_ij| α_j, keeps the share of the points at a
    # bound between updates only while it is read; an update then carries it, and after as
    # many unread updates as computing it anew would cost it is dropped. Either way the scale
    # must be the one computed from scratch here.
    from sklearn.metrics.pairwise import rbf_kernel

    import gpath._path as path_module

    X, y = dataset("breast_cancer")
    model = IncrementalSVC(C=10.0, gamma=0.05).fit(X[:300], y[:300])
    carried = []  # at each read: whether the share came carried by the updates before it
    for t in range(300, 420):
        model.update(X_add=X[t : t + 1], y_add=y[t : t + 1], remove=model.sample_ids_[:1])
        state = model.states_[0]
        if t % 40 in (0, 39):  # one update after a read (carried), and long after (dropped)
            carried.append(state._held_share()[0] is not None)
            Q = np.abs(rbf_kernel(X[t - 299 : t + 1], gamma=0.05) + state.ridge * np.eye(300))
            assert state.kkt_scale() == pytest.approx(1.0 + np.max(Q @ state.alpha), rel=1e-12)
            # and every row of the bound points' share, not only the largest
            bound = np.where(state.where == path_module.M, 0.0, state.alpha)
            np.testing.assert_allclose(state._bound_share(), Q @ bound, rtol=1e-12, atol=1e-12)
    assert any(carried) and not all(carried)


@pytest.mark.parametrize("relative", [1e-12, 1e-13])
def test_the_end_of_an_update_repairs_a_residual_beyond_round_off(backend, relative):
    # A residual of the margin equations above 1e-14 of y f's scale is repaired at the end of
    # an update, on both engines (NumPy's compiled check judges it against the margin rows'
    # own scale, taken with the residual). 1e-10 was the bar once: residuals below it stayed,
    # and a long path at large C left 6e-6 in units of y, 4.8e-7 of |f| (tests/test_svr.py).
    X, y = dataset("waterflow")
    model = IncrementalSVC(C=10.0, gamma=1 / 7).fit(backend.asarray(X[:300]), backend.asarray(y[:300]))
    state = model.states_[0]
    scale = state.kkt_scale()
    state.b += relative * scale  # every margin off by that much
    assert np.max(np.abs(state.margin_residual())) / scale == pytest.approx(relative, rel=1e-3)
    state.refined_check(1e-9)
    assert np.max(np.abs(state.margin_residual())) / state.kkt_scale() <= 1e-15


def test_removing_one_of_two_margin_points_with_tiny_coefficients(backend):
    # Features of size 1e9 and a linear kernel: the two margin points' α are about 1e-15.
    # Removing one leaves yᵀα unbalanced by that much, far below 1e-12·C: the path once took
    # the imbalance for round-off (relative to C), kept the other point's α, and zeroed it
    # at the end without moving the margins (KKT violation 1.4 from scratch, no error).
    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 1)) * 1e9
    y = np.where(X[:, 0] > 0, 1, 0)
    model = IncrementalSVC(C=7.3, kernel="linear").fit(backend.asarray(X), backend.asarray(y))
    support = np.flatnonzero(model.alpha_ > 0)
    assert support.size == 2 and model.alpha_.max() < 1e-14
    model.update(remove=model.sample_ids_[support[:1]])
    keep = np.delete(np.arange(40), support[:1])
    assert_exact(model, X[keep], y[keep])
    # and within an update that also adds points
    model = IncrementalSVC(C=7.3, kernel="linear").fit(backend.asarray(X[:30]), backend.asarray(y[:30]))
    support = np.flatnonzero(model.alpha_ > 0)
    model.update(X_add=backend.asarray(X[30:]), y_add=backend.asarray(y[30:]), remove=model.sample_ids_[support[:1]])
    keep = np.concatenate([np.delete(np.arange(30), support[:1]), np.arange(30, 40)])
    assert_exact(model, X[keep], y[keep])


def test_an_update_whose_rates_dwarf_its_coefficients_is_exact(backend):
    # Features of size 1e10, a linear kernel: the solution's α are near 1e-20, an added point's
    # box is C = 1.8. Its rate moves the margins by terms near 1e20 on its way to α ≈ 1e-20,
    # and the removed margin points' terms (about 10) vanished in that round-off: the path
    # once ended at α = 0 with margins that still held the removed points (KKT violation 1.3
    # from scratch, no error). The margins now come from α afresh there, and SimpleSVM
    # finishes from the path's sets.
    rng = np.random.default_rng(10)
    X = rng.normal(size=(40, 1)) * 1e10
    y = np.where(X[:, 0] > 0, 1, 0)
    model = IncrementalSVC(C=1.8, kernel="linear").fit(backend.asarray(X[:30]), backend.asarray(y[:30]))
    support = np.flatnonzero(model.alpha_ > 0)
    assert model.alpha_.max() < 1e-18
    model.update(X_add=backend.asarray(X[30:]), y_add=backend.asarray(y[30:]), remove=model.sample_ids_[support])
    keep = np.concatenate([np.delete(np.arange(30), support), np.arange(30, 40)])
    assert_exact(model, X[keep], y[keep])


def test_remove_every_margin_point(backend):
    X, y = dataset("breast_cancer")
    model = IncrementalSVC(C=10.0, gamma=0.05).fit(backend.asarray(X[:300]), backend.asarray(y[:300]))
    margin = model.sample_ids_[(model.alpha_ > 0) & (model.alpha_ < model.C)]
    assert len(margin) > 5
    model.update(remove=margin)
    keep = np.setdiff1d(np.arange(300), margin)
    assert_exact(model, X[keep], y[keep])


def test_add_points_of_one_class_only():
    X, y = dataset("bananas")
    model = IncrementalSVC(C=100.0, gamma=1.0).fit(X[:300], y[:300])
    ones = np.flatnonzero(y[300:600] == 1)[:40] + 300
    model.update(X_add=X[ones], y_add=y[ones])
    rows = np.concatenate([np.arange(300), ones])
    assert_exact(model, X[rows], y[rows])


def test_point_entering_exactly_on_the_margin():
    # Linear kernel, 1-D: the optimum is f(x) = x, so a new +1 point at x = 1 has y f = 1.
    X = np.array([[-1.0], [1.0], [-3.0], [3.0]])
    y = np.array([0, 1, 0, 1])
    model = IncrementalSVC(C=10.0, kernel="linear", ridge=0.0).fit(X, y)
    np.testing.assert_allclose(model.decision_function(np.array([[1.0], [-1.0]])), [1.0, -1.0], atol=1e-14)
    model.update(X_add=np.array([[1.0], [2.0]]), y_add=np.array([1, 1]))
    assert model.last_update_.n_breakpoints == 0
    np.testing.assert_allclose(model.alpha_[-2:], 0.0)
    assert model.check_kkt() <= 1e-12


def test_tied_duplicates_deterministic():
    X, y = dataset("breast_cancer")
    add = np.repeat(X[300:310], 3, axis=0)  # every new point three times: exact ties
    y_add = np.repeat(y[300:310], 3)
    runs = []
    for _ in range(2):
        model = IncrementalSVC(C=10.0, gamma=0.05).fit(X[:300], y[:300])
        model.update(X_add=add, y_add=y_add, remove=np.arange(5))
        runs.append(model)
    np.testing.assert_array_equal(runs[0].alpha_, runs[1].alpha_)
    assert runs[0].last_update_ == runs[1].last_update_.__class__(**{
        **runs[1].last_update_.__dict__, "time": runs[0].last_update_.time})
    assert_exact(runs[0], np.concatenate([X[5:300], add]), np.concatenate([y[5:300], y_add]))


def test_duplicates_with_opposite_labels():
    X, y = dataset("breast_cancer")
    model = IncrementalSVC(C=1.0, gamma=0.05).fit(X[:300], y[:300])
    model.update(X_add=X[:20], y_add=1 - y[:20])
    assert_exact(model, np.concatenate([X[:300], X[:20]]), np.concatenate([y[:300], 1 - y[:20]]))


@pytest.mark.parametrize("C", [1e-3, 1e4])
def test_extreme_C(backend, C):
    # C = 1e-3: every point at a bound, the margin set is empty (section 3.3) along the path.
    model = IncrementalSVC(C=C, gamma=0.05)
    _run_sequence(model, backend, "breast_cancer", 200, 4, seed=5, check_every=2)


# ---------------------------------------------------------------- API
def test_ids_and_partial_fit():
    X, y = dataset("breast_cancer")
    model = IncrementalSVC(C=1.0, gamma=0.05).partial_fit(X[:100], y[:100])
    np.testing.assert_array_equal(model.sample_ids_, np.arange(100))
    model.update(X_add=X[100:110], y_add=y[100:110], remove=[3, 7])
    np.testing.assert_array_equal(model.sample_ids_, np.r_[0:3, 4:7, 8:110])
    model.partial_fit(X[110:115], y[110:115])
    np.testing.assert_array_equal(model.sample_ids_[-5:], np.arange(110, 115))
    model.update(remove=[110, 0])
    assert 0 not in model.sample_ids_ and 110 not in model.sample_ids_
    assert model.last_update_.n_removed == 2


def test_sklearn_attributes_with_string_labels():
    X, y = dataset("breast_cancer")
    labels = np.array(["benign", "malignant"])[1 - y]  # classes_ sorted: benign, malignant
    model = IncrementalSVC(C=1.0, gamma=0.05).fit(X[:300], labels[:300])
    np.testing.assert_array_equal(model.classes_, ["benign", "malignant"])
    assert set(model.predict(X[300:])) <= {"benign", "malignant"}
    assert model.score(X[300:], labels[300:]) > 0.9
    alpha = model.alpha_
    y_pm = np.where(labels[:300] == "malignant", 1.0, -1.0)
    # Grouped by class as scikit-learn's SVC: benign's support vectors first.
    np.testing.assert_array_equal(model.support_, np.r_[np.flatnonzero((alpha > 0) & (y_pm < 0)),
                                                        np.flatnonzero((alpha > 0) & (y_pm > 0))])
    np.testing.assert_allclose(model.dual_coef_[0], (y_pm * alpha)[model.support_])
    np.testing.assert_array_equal(model.support_vectors_, X[:300][model.support_])
    assert model.n_support_.tolist() == [int(np.sum(y_pm[model.support_] < 0)), int(np.sum(y_pm[model.support_] > 0))]
    f = model.decision_function(X[:300])
    k = model.kernel_(X[:300], model.support_vectors_)
    np.testing.assert_allclose(f, k @ model.dual_coef_[0] + model.intercept_[0])
    assert model.get_params()["C"] == 1.0 and model.set_params(C=2.0) is model
    assert model.last_update_.n_added == 300 and model.last_update_.margin_size > 0


# ---------------------------------------------------------------- bad input
@pytest.fixture
def fitted():
    X, y = dataset("breast_cancer")
    return IncrementalSVC(C=1.0, gamma=0.05).fit(X[:200], y[:200]), X, y


def _nan(X):
    X = X.copy()
    X[3, 4] = np.nan
    return X


def _inf(X):
    X = X.copy()
    X[0, 0] = np.inf
    return X


@pytest.mark.parametrize("kwargs,error,match", [
    (lambda X, y: dict(X_add=_nan(X[200:210]), y_add=y[200:210]), ValueError, "X_add must be finite"),
    (lambda X, y: dict(X_add=_inf(X[200:210]), y_add=y[200:210]), ValueError, "X_add must be finite"),
    (lambda X, y: dict(X_add=X[200:210, :5], y_add=y[200:210]), ValueError, "30 features"),
    (lambda X, y: dict(X_add=X[200], y_add=y[200:201]), ValueError, "must be 2-D"),
    (lambda X, y: dict(X_add=X[200:210], y_add=y[200:209]), ValueError,
     r"y_add must have shape \(10,\) to match X_add; got shape \(9,\)"),
    (lambda X, y: dict(X_add=X[200:210], y_add=np.full(10, 0.5)), ValueError, "Unknown label type: continuous"),
    (lambda X, y: dict(X_add=X[200:210], y_add=np.full(10, "a")), ValueError, "labels of another kind"),
    (lambda X, y: dict(X_add=X[200:210]), ValueError, "together"),
    (lambda X, y: dict(remove=[5, 5]), ValueError, "repeats sample ids: \\[5\\]"),
    (lambda X, y: dict(remove=[5, 999]), KeyError, "not in the model: \\[999\\]"),
    (lambda X, y: dict(remove=[0.5]), TypeError, "integer sample ids"),
    (lambda X, y: dict(remove=np.flatnonzero(y[:200] == 1)), ValueError, "only class"),
])
def test_bad_update_input_leaves_model_unchanged(fitted, kwargs, error, match):
    model, X, y = fitted
    before = snapshot(model)
    with pytest.raises(error, match=match):
        model.update(**kwargs(X, y))
    assert snapshot(model) == before


@pytest.mark.parametrize("params,match", [
    (dict(C=0.0), "C must be a finite real number > 0; got 0.0"),
    (dict(C=-1.0), "C must be"), (dict(C=np.inf), "C must be"), (dict(C="1"), "C must be"),
    (dict(ridge=-1e-3), "ridge must be"), (dict(method="batch"), "method must be one of"),
    (dict(tol=0), "tol must be"),
])
def test_bad_parameters(fitted, params, match):
    model, X, y = fitted
    with pytest.raises(ValueError, match=match):
        IncrementalSVC(**params).fit(X[:50], y[:50])
    before = snapshot(model)
    model.set_params(**params)
    with pytest.raises(ValueError, match=match):
        model.update(X_add=X[200:210], y_add=y[200:210])
    model.set_params(**{k: IncrementalSVC().get_params()[k] for k in params})
    assert snapshot(model) == before


def test_bad_fit_input():
    X, y = dataset("breast_cancer")
    with pytest.raises(ValueError, match="at least two classes for an SVC; got 1 class"):
        IncrementalSVC().fit(X[:30], np.zeros(30))
    with pytest.raises(ValueError, match="X must be finite"):
        IncrementalSVC().fit(_nan(X[:30]), y[:30])
    with pytest.raises(TypeError, match="real numbers"):
        IncrementalSVC().fit(np.array([["a", "b"], ["c", "d"]]), [0, 1])


def test_device_mismatch_is_a_type_error():
    from conftest import make_backend

    strict = make_backend("array_api_strict")
    X, y = dataset("breast_cancer")
    model = IncrementalSVC(gamma=0.05).fit(strict.asarray(X[:50]), strict.asarray(y[:50]))
    before = snapshot(model)
    with pytest.raises(TypeError, match="model's array namespace"):
        model.update(X_add=X[50:60], y_add=y[50:60])
    other = strict.xp.asarray(X[50:60], device=strict.xp.Device("device2"))
    with pytest.raises(TypeError, match="on device"):
        model.update(X_add=other, y_add=y[50:60])
    assert snapshot(model) == before


@pytest.mark.parametrize(("name", "value"), [("tol", -1.0), ("tol", True), ("max_iter", 0.5), ("method", "fast"),
                                             ("cache_size", np.nan), ("verbose", "yes")])
def test_an_update_checks_parameters_changed_since_the_last_update(name, value):
    # An update remembers the parameter values it checked last; a value changed since, even
    # one equal to the old one in Python's eyes (True == 1), is checked again.
    X, y = dataset("breast_cancer")
    model = IncrementalSVC(C=1.0, gamma=0.05).fit(X[:100], y[:100])
    model.update(X[100:101], y[100:101], remove=model.sample_ids_[:1])
    model.update(X[101:102], y[101:102], remove=model.sample_ids_[:1])
    model.set_params(**{name: value})
    before = dict(model.__dict__)
    with pytest.raises(ValueError, match=name):
        model.update(X[102:103], y[102:103], remove=model.sample_ids_[:1])
    assert model.__dict__.keys() == before.keys() and all(model.__dict__[k] is before[k] for k in before)


def test_window_updates_keep_the_rows_of_every_model_apart():
    # A window's update appends the new rows in place, into spare rows of the old rows' buffer,
    # and keeps the rest as a view: two copies of one model, a rejected update, a removal in
    # the middle and a save in between must each keep exactly their own rows.
    import copy
    import io

    import gpath
    import gpath._path as path_module

    X, y = dataset("waterflow")
    a = IncrementalSVC(C=10.0, gamma=1.0).fit(X[:200], y[:200])
    for i in range(5):
        a.update(X[200 + i : 201 + i], y[200 + i : 201 + i], remove=a.sample_ids_[:1])
    b = copy.copy(a)
    a.update(X[205:215], y[205:215], remove=a.sample_ids_[:10])
    b.update(X[300:310], y[300:310], remove=b.sample_ids_[:10])
    before = snapshot(a)
    original = path_module.SVCState.refined_check

    def failing(self, *args, **kwargs):  # (the end of an update's path, whichever loop followed it)
        raise RuntimeError("injected after the path")  # (a PathError would be taken over by a refit)

    path_module.SVCState.refined_check = failing
    try:
        with pytest.raises(RuntimeError, match="injected"):
            a.update(X[215:225], y[215:225], remove=a.sample_ids_[:10])  # wrote its rows, then failed
    finally:
        path_module.SVCState.refined_check = original
    assert snapshot(a) == before
    a.update(X[400:410], y[400:410], remove=a.sample_ids_[:10])
    a.update(remove=a.sample_ids_[50:52])  # two rows from the middle: a copy of the rest
    a.update(X[410:413], y[410:413], remove=a.sample_ids_[:3])
    buffer = io.BytesIO()
    a.save(buffer)
    buffer.seek(0)
    c = gpath.load(buffer)
    c.update(X[500:501], y[500:501], remove=c.sample_ids_[:1])
    a.update(X[413:414], y[413:414], remove=a.sample_ids_[:1])
    rows_a = np.r_[29:75, 77:215, 400:414]
    rows_b = np.r_[15:205, 300:310]
    rows_c = np.r_[29:75, 77:215, 400:413, 500]
    for model, rows in ((a, rows_a), (b, rows_b), (c, rows_c)):
        np.testing.assert_array_equal(to_host(model.states_[0].X), X[rows])
        assert_exact(model, X[rows], y[rows])


@pytest.mark.parametrize("estimator", ["svc", "svr"])
def test_gamma_scale_is_resolved_at_fit_and_held_by_updates(backend, estimator):
    # README: "scale" is 1 / (d · Var X) of fit's rows; an update keeps that kernel (kernel_),
    # and its model is the exact one for it: a fit at that γ as a number on the rows after the
    # update gives the same decision values, a fit at "scale" another γ.
    X, y = dataset("breast_cancer")
    X = X / X.std(axis=0)
    X[300:360] *= 3.0  # the added rows widen the variance
    if estimator == "svc":
        make, target = (lambda **kw: IncrementalSVC(C=10.0, **kw)), y
    else:
        make, target = (lambda **kw: IncrementalSVR(C=10.0, epsilon=0.1, **kw)), X[:, 0] - X[:, 1]
        X = X[:, 2:]
    put = backend.asarray
    model = make(gamma="scale").fit(put(X[:300]), put(target[:300]))
    gamma = model.kernel_.gamma
    assert gamma == pytest.approx(1.0 / (X.shape[1] * X[:300].var()), rel=1e-12)
    model.update(put(X[300:360]), put(target[300:360]), remove=np.arange(40))
    assert model.kernel_.gamma == gamma
    after = put(X[40:360])
    same = make(gamma=gamma).fit(after, put(target[40:360]))
    f, f_same = (to_host(m.predict(after) if estimator == "svr" else m.decision_function(after))
                 for m in (model, same))
    np.testing.assert_allclose(f, f_same, rtol=0, atol=1e-9 * np.abs(f).max())
    assert make(gamma="scale").fit(after, put(target[40:360])).kernel_.gamma < 0.5 * gamma
