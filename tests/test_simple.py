"""SimpleSVC (Vishwanathan, Smola & Murty 2003): exact active-set training."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_exact, dataset, snapshot
from sklearn.utils.estimator_checks import check_estimator

from gpath import IncrementalSVC, NotSeparableError, SimpleSVC
from gpath._array_api import to_host
from gpath.datasets import load_digits_binary
from gpath.reference import exact_svc, kernel_matrix


def _data(name):
    if name == "digits":
        return load_digits_binary()
    X, y = dataset(name)
    return (X[:1000], y[:1000]) if name == "bananas" else (X, y)


@pytest.mark.parametrize("name,gamma", [("breast_cancer", 0.05), ("digits", "scale"), ("bananas", 1.0)])
@pytest.mark.parametrize("C", [0.01, 1.0, 100.0])
def test_exact_on_real_data(backend, name, gamma, C):
    X, y = _data(name)
    model = SimpleSVC(C=C, gamma=gamma, random_state=0).fit(backend.asarray(X), backend.asarray(y))
    assert_exact(model, X, y, X_device=backend.asarray(X))
    backend.check(model.dual_coef_, (1, len(model.support_)))
    assert model.n_iter_ > 0
    # Kernel evaluations (the paper's measure): far fewer than the n² of a full kernel.
    assert 0 < model.n_kernel_evaluations_ < len(y) ** 2


def test_same_problem_as_incremental():
    X, y = dataset("breast_cancer")
    a = SimpleSVC(C=10.0, gamma=0.05).fit(X[:300], y[:300])
    b = IncrementalSVC(C=10.0, gamma=0.05).fit(X[:300], y[:300])
    np.testing.assert_allclose(a.alpha_, b.alpha_, atol=1e-10)
    np.testing.assert_allclose(a.decision_function(X[300:]), b.decision_function(X[300:]), atol=1e-10)


def test_squared_hinge_is_hard_margin_on_k_plus_identity_over_c():
    X, y = dataset("breast_cancer")
    X, y = X[:250], y[:250]
    C = 2.0
    model = SimpleSVC(C=C, gamma=0.05, loss="squared_hinge").fit(X, y)
    y_pm = np.where(y == 1, 1.0, -1.0)
    # The quadratic soft margin is the hard margin on K + I/C: LIBSVM with a huge C on it.
    ref = exact_svc(X, y_pm, 1e12, "rbf", 0.05, ridge=model.ridge + 1.0 / C)
    assert ref.kkt <= 1e-9
    np.testing.assert_allclose(model.decision_function(X), ref.decision_function(X), atol=1e-8)
    assert model.alpha_.max() > C  # no upper bound


def test_hard_margin_on_separable_data_and_error_otherwise():
    X, y = dataset("breast_cancer")
    model = SimpleSVC(C=np.inf, gamma=0.05).fit(X, y)
    y_pm = np.where(y == 1, 1.0, -1.0)
    K = kernel_matrix(X, X, "rbf", 0.05) + model.ridge * np.eye(len(y))
    yf = y_pm * (K @ (y_pm * model.alpha_) + float(model.intercept_[0]))
    assert yf.min() >= 1 - 1e-9  # every point outside the margin: separated
    np.testing.assert_allclose(yf[model.alpha_ > 0], 1.0, atol=1e-9)
    Xb, yb = dataset("bananas")
    with pytest.raises(NotSeparableError, match="not separable"):
        SimpleSVC(C=np.inf, gamma=0.05).fit(Xb[:300], yb[:300])


def test_numpy_and_array_api_strict_agree():
    from conftest import make_backend

    X, y = dataset("breast_cancer")
    results = []
    for name in ("numpy", "array_api_strict"):
        b = make_backend(name)
        m = SimpleSVC(C=1.0, gamma=0.05, random_state=3).fit(b.asarray(X), b.asarray(y))
        results.append((m.alpha_, to_host(m.decision_function(b.asarray(X))), m.n_iter_))
    np.testing.assert_allclose(results[0][0], results[1][0], atol=1e-12)
    np.testing.assert_allclose(results[0][1], results[1][1], atol=1e-12)
    assert results[0][2] == results[1][2]


@pytest.mark.parametrize("ridge", [1e-6, 0.0])
def test_duplicates_and_opposite_duplicates(ridge):
    X, y = dataset("bananas")
    X = np.vstack([X[:150], X[:60], X[:40]])
    y = np.concatenate([y[:150], y[:60], 1 - y[:40]])  # copies, and copies with flipped labels
    model = SimpleSVC(C=1.0, gamma=1.0, ridge=ridge).fit(X, y)
    assert model.check_kkt(X, y) <= 1e-9
    if ridge:
        assert_exact(model, X, y)


@pytest.mark.parametrize("params,match", [
    (dict(loss="log"), "loss must be one of"), (dict(C=0.0), "C must be"), (dict(tol=-1.0), "tol must be"),
    (dict(init="nearest"), "init must be one of"), (dict(max_iter=0), "max_iter must be"),
])
def test_bad_parameters(params, match):
    X, y = dataset("breast_cancer")
    with pytest.raises(ValueError, match=match):
        SimpleSVC(**params).fit(X[:50], y[:50])


def test_refit_failure_keeps_the_previous_model():
    X, y = dataset("breast_cancer")
    model = SimpleSVC(C=1.0, gamma=0.05).fit(X[:100], y[:100])
    before = snapshot(model)
    with pytest.raises(ValueError, match="must be finite"):
        model.fit(np.where(np.arange(30)[:, None] == 3, np.nan, X[:30]), y[:30])
    assert snapshot(model) == before


@pytest.mark.parametrize("estimator", [SimpleSVC(), IncrementalSVC()], ids=lambda e: type(e).__name__)
def test_scikit_learn_estimator_checks(estimator):
    # Every check of check_estimator passes. scikit-learn itself skips check_array_api_input
    # unless SCIPY_ARRAY_API=1; the array API is tested here on array_api_strict instead.
    results = check_estimator(estimator, on_fail=None)
    failed = [(r["check_name"], str(r["exception"])[:200]) for r in results if r["status"] == "failed"]
    assert failed == []
