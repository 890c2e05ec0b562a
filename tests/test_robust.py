"""Outlier path (Suzumura et al. 2015): RobustSVC, RobustSVR and the CCCP baselines."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import dataset, snapshot
from robust_check import gram, svc_violation, svr_violation
from scipy.optimize import minimize

from gpath import CCCPRobustSVC, CCCPRobustSVR, RobustSVC, RobustSVR


def _box_qp(H, c, lower, upper):
    """Independent exact solver of min ½ aᵀHa − cᵀa, lower ≤ a ≤ upper: L-BFGS-B for the
    index sets, then primal-dual active-set iterations solved in float64."""
    n = len(c)
    res = minimize(lambda a: (0.5 * a @ H @ a - c @ a, H @ a - c), np.clip(np.zeros(n), lower, upper),
                   jac=True, method="L-BFGS-B", bounds=list(zip(lower, upper)),
                   options={"maxiter": 10000, "ftol": 1e-15, "gtol": 1e-12})
    a = res.x
    for _ in range(100):
        g = H @ a - c
        at_lo = a - g < lower
        at_up = a - g > upper
        free = ~(at_lo | at_up)
        new = np.where(at_lo, lower, np.where(at_up, upper, 0.0))
        fixed = ~free
        new[free] = np.linalg.solve(H[np.ix_(free, free)], c[free] - H[np.ix_(free, fixed)] @ new[fixed])
        if np.array_equal(new, a):
            break
        a = new
    return a


@pytest.fixture(scope="module")
def noisy_cancer():
    X, y = dataset("breast_cancer")
    rng = np.random.default_rng(0)
    rows = rng.permutation(len(y))
    y = y.copy()
    flip = rng.random(len(y)) < 0.15
    y[flip] = 1 - y[flip]
    return X[rows[:200]], y[rows[:200]], X[rows[200:350]], y[rows[200:350]]


@pytest.fixture(scope="module")
def noisy_diabetes():
    from sklearn.datasets import load_diabetes

    X, y = load_diabetes(return_X_y=True)
    X = 2 * (X - X.min(0)) / (X.max(0) - X.min(0)) - 1
    y = (y - y.mean()) / y.std()
    rng = np.random.default_rng(1)
    rows = rng.permutation(len(y))
    X, y = X[rows].copy(), y[rows].copy()
    noisy = rng.random(len(y)) < 0.05
    X[noisy] += rng.uniform(-2, 2, X[noisy].shape)
    y[noisy] += rng.normal(0, 10, noisy.sum())
    return X[:180], y[:180], X[180:300], y[180:300]


def _svc_params(model, i):
    p = model.path_
    return (p.params[i], p.s) if p.kind == "theta" else (0.0, p.params[i])


def _svr_params(model, i):
    p = model.path_
    return (p.params[i], p.s) if p.kind == "theta" else (0.0, p.params[i])


def _check_path(model, K, y_pm, regression=False):
    p = model.path_
    C = model.C
    check = svr_violation if regression else svc_violation
    for i in range(len(p.params)):
        theta, s = _svr_params(model, i) if regression else _svc_params(model, i)
        v, _ = check(p.alpha[i], K, y_pm, C, theta, s)
        assert v <= 1e-9, f"KKT (eq. 16/25) violated by {v:.2e} at path point {i} ({p.kind} = {p.params[i]:.4g})"
    # The end point is locally optimal (Theorem 4 / 5, (19e)/(26d) included).
    theta, s = _svr_params(model, -1) if regression else _svc_params(model, -1)
    v, _ = check(p.alpha[-1], K, y_pm, C, theta, s, strict=True)
    assert v <= 1e-9, f"end point not locally optimal: {v:.2e}"
    # θ and s monotone; objective strictly lower after each jump (eq. 18).
    steps = np.diff(p.params)
    assert np.all(steps <= 0) or np.all(steps >= 0)
    for i in np.flatnonzero(p.discontinuous):
        assert p.params[i] == p.params[i - 1]
        assert p.objective[i] < p.objective[i - 1], f"D-step at {p.params[i]:.4g} raised the objective"


@pytest.mark.parametrize("kernel,gamma", [("linear", 1.0), ("rbf", 1 / 30)])
@pytest.mark.parametrize("path", ["theta", "s"])
def test_robust_svc_path(backend, noisy_cancer, kernel, gamma, path):
    X, y, _, _ = noisy_cancer
    model = RobustSVC(C=1.0, kernel=kernel, gamma=gamma, path=path)
    model.fit(backend.asarray(X), backend.asarray(y))
    y_pm = np.where(y == 1, 1.0, -1.0)
    K = gram(model, X)
    # The path starts at the hinge SVM without bias: an independent box-QP solver agrees.
    Q = y_pm[:, None] * y_pm[None, :] * K
    a_ref = _box_qp(Q, np.ones(len(y)), np.zeros(len(y)), np.full(len(y), model.C))
    np.testing.assert_allclose(model.path_.alpha[0], a_ref, atol=1e-9)
    _check_path(model, K, y_pm)
    assert model.path_.n_breakpoints > 0
    backend.check(model.decision_function(backend.asarray(X)), (len(y),))


@pytest.mark.parametrize("path", ["theta", "s"])
def test_robust_svr_path(backend, noisy_diabetes, path):
    X, y, _, _ = noisy_diabetes
    model = RobustSVR(C=1.0, gamma=0.1, path=path, s=1.0)
    model.fit(backend.asarray(X), backend.asarray(y))
    K = gram(model, X)
    a_ref = _box_qp(K, y, np.full(len(y), -model.C), np.full(len(y), model.C))
    np.testing.assert_allclose(model.path_.alpha[0], a_ref, atol=1e-9)
    _check_path(model, K, y, regression=True)
    assert model.path_.discontinuous.any()


def test_numpy_and_array_api_strict_give_equal_paths(noisy_cancer):
    from conftest import make_backend

    X, y, _, _ = noisy_cancer
    paths = []
    for name in ("numpy", "array_api_strict"):
        b = make_backend(name)
        paths.append(RobustSVC(C=10.0, gamma=1 / 30, path="s").fit(b.asarray(X), b.asarray(y)).path_)
    # The same path; NumPy's compiled engine sums in another order than the generic code.
    np.testing.assert_allclose(paths[0].params, paths[1].params, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(paths[0].alpha, paths[1].alpha, atol=1e-12)
    np.testing.assert_array_equal(paths[0].discontinuous, paths[1].discontinuous)


def test_evaluation_along_the_path_and_selection(noisy_cancer):
    X, y, Xv, yv = noisy_cancer
    model = RobustSVC(C=1.0, gamma=1 / 30, path="theta").fit(X, y)
    p = model.path_
    i = len(p.params) // 2
    y_pm = np.where(y == 1, 1.0, -1.0)
    K_v = gram(model, np.vstack([Xv, X]))[: len(Xv), len(Xv):]
    np.testing.assert_allclose(model.decision_function(Xv, at=p.params[i]), K_v @ (y_pm * p.alpha[i]), atol=1e-10)
    # Linear between breakpoints.
    mid = 0.5 * (p.params[i] + p.params[i + 1])
    if p.params[i] != p.params[i + 1]:
        expected = K_v @ (y_pm * 0.5 * (p.alpha[i] + p.alpha[i + 1]))
        np.testing.assert_allclose(model.decision_function(Xv, at=mid), expected, atol=1e-10)
    model.select(Xv, yv)
    errors = [np.mean((K_v @ (y_pm * a) > 0) != (yv == 1)) for a in p.alpha]
    np.testing.assert_allclose(model.path_.validation_error, errors)
    assert model.selected_index_ == int(np.argmin(errors))
    assert model.param_ == p.params[model.selected_index_]
    assert model.score(Xv, yv) == pytest.approx(1 - min(errors))
    with pytest.raises(ValueError, match="at must lie on the path"):
        model.decision_function(Xv, at=1.5)


@pytest.mark.parametrize("estimator,path", [(CCCPRobustSVC, "theta"), (CCCPRobustSVC, "s")])
def test_cccp_svc_fixed_points(noisy_cancer, estimator, path):
    X, y, _, _ = noisy_cancer
    model = estimator(C=1.0, gamma=1 / 30, path=path, grid=5).fit(X, y)
    y_pm = np.where(y == 1, 1.0, -1.0)
    K = gram(model, X)
    p = model.path_
    assert len(p.params) == 5 and not p.discontinuous.any()
    for i in range(5):
        theta, s = (p.params[i], 0.0) if path == "theta" else (0.0, p.params[i])
        # A CCCP fixed point: hinge KKT for z ≥ s, α = Cθ below (the tangent's slope).
        v, _ = svc_violation(p.alpha[i], K, y_pm, model.C, theta, s)
        assert v <= 1e-9


def test_cccp_svr_fixed_points(noisy_diabetes):
    X, y, _, _ = noisy_diabetes
    model = CCCPRobustSVR(C=1.0, gamma=0.1, path="theta", s=1.0, grid=4).fit(X, y)
    K = gram(model, X)
    for i, theta in enumerate(model.path_.params):
        f = K @ model.path_.alpha[i]
        r = y - f
        out = np.abs(r) > 1.0
        # Outliers at the linearization: α = C(sign r − (1 − θ) sign r) = θ C sign r.
        np.testing.assert_allclose(model.path_.alpha[i][out], theta * model.C * np.sign(r[out]), atol=1e-9)
    with pytest.raises(ValueError, match="grid values"):
        model.decision_function(X, at=0.3)


@pytest.mark.parametrize("make,match", [
    (lambda: RobustSVC(path="sideways"), "path must be one of"),
    (lambda: RobustSVC(s=0.5), "s must be a finite real number <= 0 for RobustSVC; got 0.5"),
    (lambda: RobustSVC(C=-1.0), "C must be"),
    (lambda: RobustSVR(s=-1.0), "s must be"),
    (lambda: CCCPRobustSVC(grid=1), "grid must be"),
])
def test_bad_parameters(noisy_cancer, make, match):
    X, y, _, _ = noisy_cancer
    with pytest.raises(ValueError, match=match):
        make().fit(X, y)


def test_fit_intercept_and_select_keep_model_consistent(noisy_cancer):
    X, y, Xv, yv = noisy_cancer
    model = RobustSVC(C=1.0, gamma=1 / 30, path="s", fit_intercept=True).fit(X, y)
    assert model.kernel_.offset == 1.0
    K = gram(model, X)
    _check_path(model, K, np.where(y == 1, 1.0, -1.0))
    before = snapshot(model)
    with pytest.raises(ValueError):
        model.select(Xv[:, :3], yv)
    assert snapshot(model) == before
