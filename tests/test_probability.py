"""Probabilities by Platt scaling (issue 13.3): the sigmoid of Lin, Lin & Weng (2007) on
cross-validated decision values, pairwise coupling, and what an update does to them."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from helpers import dataset, snapshot
from test_multiclass import real

from gpath import IncrementalSVC, SimpleSVC
from gpath._array_api import to_host
from gpath._platt import couple, sigmoid_predict, sigmoid_train


def _platt_objective(dec, first, A, B):
    """Platt's cross-entropy with his regularized targets, computed naively in float64."""
    n1, n0 = first.sum(), (~first).sum()
    t = np.where(first, (n1 + 1) / (n1 + 2), 1 / (n0 + 2))
    p = 1 / (1 + np.exp(A * dec + B))
    return -np.sum(t * np.log(p) + (1 - t) * np.log(1 - p))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_sigmoid_minimizes_platts_objective(seed):
    from scipy.optimize import minimize

    rng = np.random.default_rng(seed)
    n = 300
    first = rng.random(n) < 0.4
    dec = np.where(first, 1.0, -1.0) * rng.gamma(2.0, 0.7, n) + rng.normal(0, 0.8, n)
    A, B = sigmoid_train(dec, first)
    ref = minimize(lambda ab: _platt_objective(dec, first, *ab), x0=[0.0, 0.0], method="BFGS",
                   options={"gtol": 1e-10})
    np.testing.assert_allclose([A, B], ref.x, rtol=1e-4, atol=1e-5)
    assert A < 0  # positive decision values mean the first class


def test_the_sigmoid_is_stable_for_separated_values():
    # Decision values far apart (a separable fold): exp(A d + B) overflows in the naive form.
    dec = np.r_[np.linspace(50, 80, 40), -np.linspace(50, 80, 60)]
    first = np.r_[np.ones(40, bool), np.zeros(60, bool)]
    A, B = sigmoid_train(dec, first)
    assert np.isfinite(A) and np.isfinite(B) and A < 0
    p = sigmoid_predict(np.array([-1e3, 0.0, 1e3]), A, B, np)
    assert np.all(np.isfinite(p)) and p[0] == pytest.approx(1e-7) and p[2] == pytest.approx(1 - 1e-7)


def _libsvm_multiclass_probability(r, k, eps=None, max_iter=10_000):
    """LIBSVM's multiclass_probability (Wu, Lin & Weng 2004, method 2), as in svm.cpp, with
    a tight stopping tolerance: it converges to the exact solution gpath computes."""
    eps = 1e-14 if eps is None else eps
    Q = np.zeros((k, k))
    for t in range(k):
        for j in range(k):
            if j != t:
                Q[t, t] += r[j, t] ** 2
                Q[t, j] = -r[j, t] * r[t, j]
    p = np.full(k, 1.0 / k)
    for _ in range(max_iter):
        Qp = Q @ p
        pQp = p @ Qp
        if np.max(np.abs(Qp - pQp)) < eps:
            break
        for t in range(k):
            diff = (-Qp[t] + pQp) / Q[t, t]
            p[t] += diff
            pQp = (pQp + diff * (diff * Q[t, t] + 2 * Qp[t])) / (1 + diff) / (1 + diff)
            Qp = (Qp + diff * Q[t, :]) / (1 + diff)
            p /= 1 + diff
    return p


@pytest.mark.parametrize("k", [3, 4, 10])
def test_coupling_is_wu_lin_wengs_second_method_solved_exactly(k):
    from gpath._multiclass import pairs

    rng = np.random.default_rng(k)
    n = 20
    r = np.clip(rng.random((n, k * (k - 1) // 2)), 1e-7, 1 - 1e-7)
    p = couple(r, k, np)
    assert p.shape == (n, k)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, rtol=0, atol=1e-14)
    assert np.all(p >= 0)
    for s in range(n):
        R = np.zeros((k, k))
        for q, (i, j) in enumerate(pairs(k)):
            R[i, j], R[j, i] = r[s, q], 1 - r[s, q]
        np.testing.assert_allclose(p[s], _libsvm_multiclass_probability(R, k), rtol=0, atol=1e-10)
    two = couple(r[:, :1], 2, np)
    np.testing.assert_array_equal(two, np.c_[r[:, 0], 1 - r[:, 0]])


def _log_loss_of_svc(Xtr, ytr, Xte, yte, C, gamma):
    from sklearn.metrics import log_loss
    from sklearn.svm import SVC

    with warnings.catch_warnings():  # scikit-learn 1.9 deprecates SVC(probability=True)
        warnings.simplefilter("ignore", FutureWarning)
        ref = SVC(C=C, gamma=gamma, probability=True, random_state=0).fit(Xtr, ytr)
        return log_loss(yte, ref.predict_proba(Xte), labels=ref.classes_)


@pytest.mark.parametrize("cls", [SimpleSVC, IncrementalSVC], ids=lambda c: c.__name__)
@pytest.mark.parametrize("name,C,gamma", [("wine", 1.0, 0.05), ("digits", 10.0, 0.02), ("breast_cancer", 1.0, 0.02)])
def test_probabilities_on_held_out_data_are_as_good_as_libsvms(cls, name, C, gamma):
    from sklearn.metrics import log_loss
    from sklearn.model_selection import train_test_split

    X, y = dataset(name) if name == "breast_cancer" else real(name)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=1, stratify=y)
    model = cls(C=C, gamma=gamma, probability=True, random_state=0).fit(Xtr, ytr)
    proba = model.predict_proba(Xte)
    k = len(np.unique(y))
    assert proba.shape == (len(yte), k)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    np.testing.assert_allclose(model.predict_log_proba(Xte), np.log(proba), rtol=1e-15)
    assert model.probA_.shape == model.probB_.shape == (k * (k - 1) // 2,)
    ours = log_loss(yte, proba, labels=model.classes_)
    theirs = _log_loss_of_svc(Xtr, ytr, Xte, yte, C, gamma)
    assert abs(ours - theirs) <= 0.1 * theirs, f"log-loss {ours:.4f} against LIBSVM's {theirs:.4f}"


def test_binary_probabilities_follow_the_decision_values(backend):
    X, y = dataset("breast_cancer")
    model = IncrementalSVC(C=1.0, gamma=0.05, probability=True, random_state=3)
    model.fit(backend.asarray(X[:300]), backend.asarray(y[:300]))
    f = to_host(model.decision_function(backend.asarray(X[300:])))
    p = backend.check(model.predict_proba(backend.asarray(X[300:])), (len(f), 2))
    order = np.argsort(f)
    assert np.all(np.diff(p[order, 1]) >= -1e-15)  # P(classes_[1]) grows with f
    assert model.probA_[0] < 0
    np.testing.assert_allclose(p[:, 0], 1 / (1 + np.exp(model.probA_[0] * -f + model.probB_[0])), rtol=1e-12)


def test_numpy_and_array_api_strict_give_the_same_probabilities():
    from conftest import make_backend

    X, y = real("wine")
    out = []
    for name in ("numpy", "array_api_strict"):
        b = make_backend(name)
        model = SimpleSVC(C=1.0, gamma=0.1, probability=True, random_state=0).fit(b.asarray(X), b.asarray(y))
        out.append((model.probA_, to_host(b.check(model.predict_proba(b.asarray(X)), (len(y), 3)))))
    np.testing.assert_allclose(out[0][0], out[1][0], rtol=1e-9)
    np.testing.assert_allclose(out[0][1], out[1][1], rtol=0, atol=1e-10)


# ---------------------------------------------------------------- updates
def test_an_update_keeps_the_sigmoid_until_calibrate():
    X, y = real("wine")
    order = np.random.default_rng(0).permutation(len(y))
    X, y = X[order], y[order]
    model = IncrementalSVC(C=1.0, gamma=0.1, probability=True, random_state=0).fit(X[:120], y[:120])
    A, B = model.probA_.copy(), model.probB_.copy()
    model.update(X_add=X[120:], y_add=y[120:], remove=model.sample_ids_[:30])
    np.testing.assert_array_equal(model.probA_, A)  # kept
    np.testing.assert_array_equal(model.probB_, B)
    assert model.calibrate() is model
    assert not np.array_equal(model.probA_, A)
    # calibrate() is the sigmoid a fit on the current rows (same order, same folds) gives.
    fresh = IncrementalSVC(C=1.0, gamma=0.1, probability=True, random_state=0).fit(X[30:], y[30:])
    np.testing.assert_allclose(model.probA_, fresh.probA_, rtol=1e-9)
    np.testing.assert_allclose(model.probB_, fresh.probB_, rtol=1e-9)
    np.testing.assert_allclose(model.predict_proba(X), fresh.predict_proba(X), rtol=0, atol=1e-10)


def test_a_class_that_appears_gets_calibrated_pairs():
    X, y = real("wine")
    old = np.flatnonzero(y < 2)
    model = IncrementalSVC(C=1.0, gamma=0.1, probability=True, random_state=0).fit(X[old], y[old])
    A01 = model.probA_[0]
    twos = np.flatnonzero(y == 2)
    model.update(X_add=X[twos], y_add=y[twos])
    assert model.probA_.shape == (3,) and model.probA_[0] == A01  # the pair (0, 1) keeps its sigmoid
    proba = model.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    assert np.mean(np.argmax(proba, axis=1) == y) > 0.9


def test_probability_errors():
    from sklearn.exceptions import NotFittedError

    X, y = real("wine")
    model = IncrementalSVC(gamma=0.1).fit(X, y)
    assert not hasattr(model, "predict_proba") and not hasattr(model, "predict_log_proba")
    with pytest.raises(AttributeError, match="has no attribute 'predict_proba'") as info:
        model.predict_proba(X)
    assert "predict_proba is not available when probability=False" in str(info.value.__cause__)
    before = snapshot(model)
    with pytest.raises(ValueError, match="calibrate fits the probability model of probability=True"):
        model.calibrate()
    assert snapshot(model) == before
    model.set_params(probability=True)
    with pytest.raises(NotFittedError, match=r"no probability model.*call calibrate\(\)"):
        model.predict_proba(X)
    model.calibrate()
    assert model.predict_proba(X).shape == (len(y), 3)
    with pytest.raises(ValueError, match="probability must be a bool"):
        SimpleSVC(probability="yes").fit(X, y)


def test_probabilities_are_saved(tmp_path):
    import gpath

    X, y = real("wine")
    for model in (IncrementalSVC(C=1.0, gamma=0.1, probability=True, random_state=0).fit(X, y),
                  SimpleSVC(C=1.0, gamma=0.1, probability=True, random_state=0).fit(X, y)):
        path = tmp_path / f"{type(model).__name__}.npz"
        model.save(path)
        loaded = gpath.load(path)
        np.testing.assert_array_equal(loaded.probA_, model.probA_)
        np.testing.assert_allclose(loaded.predict_proba(X), model.predict_proba(X), rtol=0, atol=1e-12)


@pytest.mark.parametrize("cls", [SimpleSVC, IncrementalSVC])
def test_probability_with_fewer_points_than_folds(cls):
    # Both classes smaller than LIBSVM's 5 folds: plain folds of a permutation, as LIBSVM
    # (before: StratifiedKFold's n_splits error). The probabilities follow the decision values.
    X, y = real("breast_cancer")
    rows = np.r_[np.flatnonzero(y == 0)[:3], np.flatnonzero(y == 1)[:4]]
    model = cls(gamma=0.05, probability=True, random_state=0).fit(X[rows], y[rows])
    p = model.predict_proba(X[:50])
    assert p.shape == (50, 2) and np.all(np.isfinite(p))
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    d = model.decision_function(X[:50])
    order = np.argsort(d)
    assert np.all(np.diff(p[order, 1]) >= -1e-12) or np.all(np.diff(p[order, 1]) <= 1e-12)


def test_a_fold_whose_warm_start_stalled_in_blocks():
    # IncrementalSVC's Platt folds start from the pair's solution; on this problem one fold's
    # warm start stalled (PathError) and the whole fit failed: a pair of violators entered
    # together, the step sent the smaller one straight back, and SimpleSVM set it aside as
    # round-off until the end. It now comes back as soon as α moves.
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    X, y = X[:300] / 16.0, y[:300] % 4
    model = IncrementalSVC(C=5.0, gamma=0.1, probability=True, random_state=0).fit(X, y)
    assert model.check_kkt() <= 1e-9
    p = model.predict_proba(X)
    assert np.allclose(p.sum(axis=1), 1.0) and np.mean(model.classes_[p.argmax(axis=1)] == y) > 0.9


# ---------------------------------------------------------------- the folds' start
def _cold_folds(monkeypatch):
    """Every Platt fold fitted from scratch on its own kernel rows: no shared rows, no start
    from the pair's solution (IncrementalSVC's)."""
    import contextlib

    import gpath._platt
    import gpath.incremental
    from gpath._simplesvm import exact_state

    def cold(X, y, kernel, C, ridge, start=None, **options):
        return exact_state(X, y, kernel, C, ridge, **options)

    monkeypatch.setattr(gpath._platt, "shared_kernel_rows", lambda X, **_: contextlib.nullcontext())
    monkeypatch.setattr(gpath.incremental, "exact_state", cold)


@pytest.mark.parametrize("cls", [SimpleSVC, IncrementalSVC], ids=lambda c: c.__name__)
@pytest.mark.parametrize("name,C,gamma", [("bananas", 10.0, 1.0), ("wine", 100.0, 0.1)])
def test_the_folds_share_their_kernel_rows_and_give_the_cold_folds_sigmoid(cls, name, C, gamma, monkeypatch):
    # Each fold's fit gathers SMO's float32 rows (SimpleSVC's cold folds) and the exact
    # start's float64 columns (every fold; IncrementalSVC's folds start SimpleSVM from the
    # pair's solution) from rows computed once on the pair's points, and the sigmoid is the
    # one of folds fitted from scratch on their own rows: every fold model is the exact one.
    # Some points weigh 0 (LIBSVM's folds leave them out): a fold's rows are then not the
    # positions of its points among the used ones.
    from gpath._smo import SharedRows
    from gpath.datasets import load_bananas

    if name == "bananas":
        X, y = load_bananas()
        X, y = X[:600], y[:600]
    else:
        X, y = real(name)
    weight = np.ones(len(y))
    weight[np.random.default_rng(0).choice(len(y), 30, replace=False)] = 0.0
    served = {}  # (what, a fold's rows of the shared X) -> whether its fit took shared values there

    def spy(method, what):
        def call(self, *args, **kwargs):
            found = method(self, *args, **kwargs)
            key = (what, self.index.tobytes())
            served[key] = served.get(key, True) and found is not None
            return found
        return call

    with monkeypatch.context() as m:
        m.setattr(SharedRows, "subset", spy(SharedRows.subset, "float32 rows"))
        m.setattr(SharedRows, "_held", spy(SharedRows._held, "float64 columns"))
        shared = cls(C=C, gamma=gamma, probability=True, random_state=0).fit(X, y, sample_weight=weight)
    k = len(shared.classes_)
    whats = ("float32 rows", "float64 columns") if cls is SimpleSVC else ("float64 columns",)
    folds = {index for _, index in served}
    assert len(folds) == 5 * k * (k - 1) // 2  # every fold of every pair
    assert served == {(what, index): True for what in whats for index in folds}
    assert shared.check_kkt(X, y) <= 1e-9
    _cold_folds(monkeypatch)
    cold = cls(C=C, gamma=gamma, probability=True, random_state=0).fit(X, y, sample_weight=weight)
    np.testing.assert_allclose(shared.probA_, cold.probA_, rtol=1e-8)
    np.testing.assert_allclose(shared.probB_, cold.probB_, rtol=1e-8, atol=1e-10)
