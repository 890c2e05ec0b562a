"""Outlier path (Suzumura et al. 2015): RobustSVC, RobustSVR and the CCCP baselines."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import dataset, snapshot
from robust_check import gram, partition_distance, svc_violation, svr_violation
from scipy.optimize import minimize

from gpath import CCCPRobustSVC, CCCPRobustSVR, RobustSVC, RobustSVR
from gpath._array_api import to_host


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
    # The model's own check, from scratch and relative to the scale of z, agrees: every
    # parameter value (at a jump, the point after it) and halfway between breakpoints.
    values = np.unique(p.params)
    for at in np.concatenate([values, (values[1:] + values[:-1]) / 2]):
        assert model.check_kkt(at=float(at)) <= 1e-12
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
    errors = np.array([np.mean((K_v @ (y_pm * a) > 0) != (yv == 1)) for a in p.alpha])
    np.testing.assert_allclose(model.path_.validation_error, errors)
    # The least error among the points select may choose (never the one before a jump).
    candidates = np.flatnonzero(p.selectable)
    assert model.selected_index_ == candidates[np.argmin(errors[candidates])]
    assert model.param_ == p.params[model.selected_index_]
    assert model.score(Xv, yv) == pytest.approx(1 - errors[model.selected_index_])
    with pytest.raises(ValueError, match="at must lie on the path"):
        model.decision_function(Xv, at=1.5)
    for bad in ("0.5", True):  # a string was read as its number
        with pytest.raises(TypeError, match="at must be a real number"):
            model.decision_function(Xv, at=bad)
    np.testing.assert_array_equal(model.decision_function(Xv, at=np.float32(0.5)), model.decision_function(Xv, at=0.5))


@pytest.mark.parametrize("estimator,path", [(CCCPRobustSVC, "theta"), (CCCPRobustSVC, "s")])
def test_cccp_svc_fixed_points(backend, noisy_cancer, estimator, path):
    X, y, _, _ = noisy_cancer
    model = estimator(C=1.0, gamma=1 / 30, path=path, grid=5).fit(backend.asarray(X), backend.asarray(y))
    y_pm = np.where(y == 1, 1.0, -1.0)
    K = gram(model, X)
    p = model.path_
    assert len(p.params) == 5 and not p.discontinuous.any()
    for i in range(5):
        theta, s = (p.params[i], 0.0) if path == "theta" else (0.0, p.params[i])
        # A CCCP fixed point: hinge KKT for z ≥ s, α = Cθ below (the tangent's slope).
        v, _ = svc_violation(to_host(p.alpha[i]), K, y_pm, model.C, theta, s)
        assert v <= 1e-9
        assert model.check_kkt(at=p.params[i]) <= 1e-12  # the same conditions, from scratch
    # The model's values at a grid point are those of its α there, on the backend's device
    # (new rows: the kernel without the training diagonal's ridge).
    K_new = K - model.ridge_ * np.eye(len(y))
    f = backend.check(model.decision_function(backend.asarray(X), at=p.params[2]), (len(y),))
    np.testing.assert_allclose(f, K_new @ (y_pm * to_host(p.alpha[2])), atol=1e-9)


def test_cccp_svr_fixed_points(backend, noisy_diabetes):
    X, y, _, _ = noisy_diabetes
    model = CCCPRobustSVR(C=1.0, gamma=0.1, path="theta", s=1.0, grid=4).fit(backend.asarray(X), backend.asarray(y))
    K = gram(model, X)
    for i, theta in enumerate(model.path_.params):
        alpha = to_host(model.path_.alpha[i])
        f = K @ alpha
        r = y - f
        out = np.abs(r) > 1.0
        assert out.any()
        # Outliers at the linearization: α = C(sign r − (1 − θ) sign r) = θ C sign r.
        np.testing.assert_allclose(alpha[out], theta * model.C * np.sign(r[out]), atol=1e-9)
        assert model.check_kkt(at=theta) <= 1e-12
    K_new = K - model.ridge_ * np.eye(len(y))
    p = model.path_
    f = backend.check(model.predict(backend.asarray(X), at=p.params[2]), (len(y),))
    np.testing.assert_allclose(f, K_new @ to_host(p.alpha[2]), atol=1e-9)
    with pytest.raises(ValueError, match="grid values"):
        model.predict(backend.asarray(X), at=0.3)


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


# ---------------------------------------------------------------- jump points (issue 11.3)
def _readme_example():
    """The README's outlier-path example: OP-s on noisy breast_cancer (a chain of three
    D-steps at its first s, two more later)."""
    from gpath.datasets import load_path_data, noisy_split

    X, y, task = load_path_data("breast_cancer")
    return noisy_split(X, y, task)


def _box(model):
    return (0.0, model.C) if model._classification else (-model.C, model.C)


def _partition_violation(model, X, y, i):
    """KKT violation of path point i for its partition (eq. 16 / 25), from fresh kernel values."""
    p = model.path_
    theta, s = (p.params[i], p.s) if p.kind == "theta" else (0.0, p.params[i])
    if model._classification:
        return svc_violation(p.alpha[i], gram(model, X), np.where(y == 1, 1.0, -1.0), model.C, theta, s)[0]
    return svr_violation(p.alpha[i], gram(model, X), y, model.C, theta, s)[0]


def test_readme_path_records_only_solutions_of_their_partition():
    # Before: the intermediate ends of a D-step chain were path points, with α = 1.15 > C = 1
    # (inliers held at y f = s): no solution of the robust problem.
    (Xtr, ytr), _, _ = _readme_example()
    model = RobustSVC(C=1.0, kernel="rbf", gamma=1 / 30, path="s").fit(Xtr, ytr)
    p = model.path_
    assert p.discontinuous.sum() >= 5
    assert p.alpha.max() <= model.C * (1 + 1e-12) and p.alpha.min() >= -1e-12 * model.C
    # Each jump is two points: the one that reached the boundary, the locally optimal one after.
    jumps = np.flatnonzero(p.discontinuous)
    assert not np.any(p.discontinuous[jumps - 1])
    np.testing.assert_array_equal(p.params[jumps], p.params[jumps - 1])
    for i in range(len(p.params)):
        assert _partition_violation(model, Xtr, ytr, i) <= 1e-9, f"path point {i}"


@pytest.mark.parametrize("seed", range(8))
def test_random_paths_keep_alpha_in_the_box(seed):
    # Random OP-s / OP-θ fits (classification and regression) on real data: every point in
    # the loss's range and optimal for its partition.
    rng = np.random.default_rng(seed)
    X, y = dataset("breast_cancer")
    rows = rng.choice(len(y), 120, replace=False)
    X, y = X[rows], y[rows].copy()
    kind = ("s", "theta")[seed % 2]
    C = float(rng.choice([0.5, 1.0, 5.0]))
    gamma = float(rng.choice([0.01, 1 / 30, 0.1]))
    if seed % 4 < 2:
        flip = rng.random(len(y)) < 0.15
        y[flip] = 1 - y[flip]
        model = RobustSVC(C=C, gamma=gamma, path=kind).fit(X, y)
    else:  # the first feature from the others, with outliers
        X, y = X[:, 1:], X[:, 0] + np.where(rng.random(len(y)) < 0.1, rng.normal(0, 5, len(y)), 0.0)
        model = RobustSVR(C=C, gamma=gamma, path=kind, s=1.0).fit(X, y)
    lo, hi = _box(model)
    p = model.path_
    assert p.alpha.min() >= lo - 1e-12 * C and p.alpha.max() <= hi + 1e-12 * C
    for i in range(len(p.params)):
        assert _partition_violation(model, X, y, i) <= 1e-9, f"path point {i} ({p.kind} = {p.params[i]:.4g})"
        assert model.check_kkt(at=p.params[i]) <= 1e-12


def _locally_optimal(model, X, y, i):
    p = model.path_
    theta, s = (p.params[i], p.s) if p.kind == "theta" else (0.0, p.params[i])
    if model._classification:
        return svc_violation(p.alpha[i], gram(model, X), np.where(y == 1, 1.0, -1.0), model.C, theta, s,
                             strict=True)[0] <= 1e-9
    return svr_violation(p.alpha[i], gram(model, X), y, model.C, theta, s, strict=True)[0] <= 1e-9


def test_select_never_picks_the_point_before_a_jump():
    # Validation labels that only the ordinary SVM (the OP-s path's first point, which sits on
    # the boundary y f = s right before the first jump) gets all right. Before: select chose
    # it, and decision_function(X, at=param_) gave the point after the jump instead.
    (Xtr, ytr), _, _ = _readme_example()
    model = RobustSVC(C=1.0, kernel="rbf", gamma=1 / 30, path="s").fit(Xtr, ytr)
    p = model.path_
    assert p.discontinuous[1] and not _locally_optimal(model, Xtr, ytr, 0)
    # Points just either side of the first point's decision boundary, on segments between
    # training points it puts on opposite sides (bisection): every other path point, whose f
    # differs there, gets one of each pair wrong.
    f0 = model.path_decision_function(Xtr)[:, 0]
    A, B = np.repeat(Xtr[f0 < 0][:20], 10, axis=0), np.tile(Xtr[f0 > 0][:10], (20, 1))
    lo, hi = np.zeros(len(A)), np.ones(len(A))
    for _ in range(30):
        t = 0.5 * (lo + hi)
        neg = model.path_decision_function(A + t[:, None] * (B - A))[:, 0] < 0
        lo, hi = np.where(neg, t, lo), np.where(neg, hi, t)
    X_val = np.vstack([A + lo[:, None] * (B - A), A + hi[:, None] * (B - A)])
    F = model.path_decision_function(X_val)
    y_val = model.classes_[(F[:, 0] > 0).astype(int)]
    errors = np.mean((F > 0) != (y_val == model.classes_[1])[:, None], axis=0)
    assert errors[0] == 0 and np.all(errors[1:] > 0)  # the trap is set
    model.select(X_val, y_val)
    i = model.selected_index_
    assert i > 0 and p.selectable[i] and not p.selectable[0]
    assert _locally_optimal(model, Xtr, ytr, i)
    np.testing.assert_array_equal(model.decision_function(X_val, at=model.param_), model.decision_function(X_val))
    np.testing.assert_allclose(model.decision_function(X_val), F[:, i], rtol=0, atol=1e-12)


@pytest.mark.parametrize("path", ["theta", "s"])
@pytest.mark.parametrize("problem", ["svc", "svr"])
def test_at_param_is_the_selected_model(noisy_cancer, noisy_diabetes, problem, path):
    # Before: the README example selected a point inside a D-step chain, and at=param_ was
    # 0.18 away from it.
    if problem == "svc":
        (X, y), (Xv, yv), _ = _readme_example() if path == "s" else ((noisy_cancer[0], noisy_cancer[1]),
                                                                     (noisy_cancer[2], noisy_cancer[3]), None)
        model = RobustSVC(C=1.0, gamma=1 / 30, path=path).fit(X, y).select(Xv, yv)
        values = model.decision_function
        path_values = model.path_decision_function
    else:
        X, y, Xv, yv = noisy_diabetes
        model = RobustSVR(C=1.0, gamma=0.1, path=path, s=1.0).fit(X, y).select(Xv, yv)
        values = model.predict
        path_values = model.path_predict
    assert model.path_.discontinuous.any()
    i = model.selected_index_
    assert _locally_optimal(model, X, y, i)
    np.testing.assert_array_equal(values(Xv, at=model.param_), values(Xv))
    F = path_values(Xv)  # all points in one product: another summation order
    np.testing.assert_allclose(values(Xv), F[:, i], rtol=0, atol=1e-12)
    # Every selectable point is what at= gives at its parameter value, and locally optimal.
    for j in np.flatnonzero(model.path_.selectable):
        np.testing.assert_allclose(values(Xv, at=model.path_.params[j]), F[:, j], rtol=0, atol=1e-12)
        assert _locally_optimal(model, X, y, j), f"selectable point {j} is not locally optimal"


def test_cli_reports_the_ordinary_svm_at_the_paths_start():
    # `gpath path` prints the test error of the ordinary SVM where the path starts; before, it
    # evaluated at=params[0], the point after the jumps at OP-s's first s (decision values 0.49
    # away on seed 0; on seed 3 the printed error was 0.081 instead of 0.076).
    import io

    from gpath.cli import run_path
    from gpath.datasets import load_path_data, noisy_split

    out = io.StringIO()
    model = run_path(data="breast_cancer", path="s", seed=3, out=out)
    printed = float(out.getvalue().split("ordinary SVM at the path's start: ")[1].split(")")[0])
    X, y, task = load_path_data("breast_cancer")
    (Xtr, ytr), _, (Xte, yte) = noisy_split(X, y, task, random_state=3)
    # The hinge SVM without bias, from an independent solver on fresh kernel values.
    y_pm = np.where(ytr == 1, 1.0, -1.0)
    K = gram(model, Xtr)
    a = _box_qp(y_pm[:, None] * y_pm[None, :] * K, np.ones(len(ytr)), np.zeros(len(ytr)), np.full(len(ytr), 1.0))
    K_te = gram(model, np.vstack([Xte, Xtr]))[: len(Xte), len(Xte):]
    f = K_te @ (y_pm * a)
    assert printed == pytest.approx(round(float(np.mean((f > 0) != (yte == 1))), 3), abs=1e-12)


# ---------------------------------------------------------------- scikit-learn conformance (issue 13.6)
@pytest.mark.parametrize("estimator", [RobustSVC(), RobustSVR(), CCCPRobustSVC(), CCCPRobustSVR()],
                         ids=lambda e: type(e).__name__)
def test_scikit_learn_estimator_checks(estimator):
    # Every check of check_estimator passes, as for SimpleSVC and IncrementalSVC: the robust
    # classifiers declare themselves binary (tags), the regressors have no decision_function.
    from sklearn.utils import get_tags
    from sklearn.utils.estimator_checks import check_estimator

    results = check_estimator(estimator, on_fail=None)
    failed = [(r["check_name"], str(r["exception"])[:200]) for r in results if r["status"] == "failed"]
    assert failed == []
    tags = get_tags(estimator)
    assert tags.target_tags.required
    if tags.classifier_tags is not None:
        assert tags.classifier_tags.multi_class is False
    else:
        assert not hasattr(estimator, "decision_function")


@pytest.mark.parametrize("cls", [RobustSVC, RobustSVR, CCCPRobustSVC, CCCPRobustSVR], ids=lambda c: c.__name__)
def test_fit_without_y_and_object_targets(cls, noisy_cancer, noisy_diabetes):
    X, y = (noisy_cancer[0], noisy_cancer[1]) if cls._classification else (noisy_diabetes[0], noisy_diabetes[1])
    model = cls(gamma=0.05)
    with pytest.raises(ValueError, match=f"{cls.__name__} requires y to be passed, but the target y is None"):
        model.fit(X, None)
    assert model.__dict__ == cls(gamma=0.05).__dict__
    fitted = cls(gamma=0.05, grid=3) if "CCCP" in cls.__name__ else cls(gamma=0.05)
    if not cls._classification:  # real targets stored as objects are numbers (as in scikit-learn)
        a = fitted.fit(X[:80], y[:80].astype(object)).path_.alpha
        np.testing.assert_array_equal(a, fitted.fit(X[:80], y[:80]).path_.alpha)
    else:  # labels as objects: scikit-learn's "Unknown label type" refusal
        with pytest.raises(ValueError, match="Unknown label type"):
            fitted.fit(X[:80], y[:80].astype(object))
    fitted.fit(X[:80], y[:80])
    if "CCCP" in cls.__name__:
        assert min(fitted.n_iter_) >= 1 and len(fitted.n_iter_) == 3


def test_more_classes_through_one_vs_rest():
    # Binary by nature; scikit-learn's one-vs-rest wrapper gives one path per class.
    from sklearn.datasets import load_iris
    from sklearn.multiclass import OneVsRestClassifier

    X, y = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match="two classes"):
        RobustSVC().fit(X, y)
    model = OneVsRestClassifier(RobustSVC(gamma=0.5, fit_intercept=True)).fit(X, y)
    assert [len(e.classes_) for e in model.estimators_] == [2, 2, 2]
    assert model.score(X, y) > 0.9


def test_a_path_that_cycles_after_its_margins_were_repaired_is_followed_without_the_repair(monkeypatch):
    # The repair (KinkPath.refine) puts margins exactly on kinks that drifted ones missed; in 3
    # of 9,200 random problems the path then cycled among those ties. Such a fit is followed
    # again without the repair; a path that cycles without any repair still raises.

    from gpath import PathError, _outlier

    X, y = dataset("breast_cancer")
    X, y = X[:60], y[:60]  # C = 1e6: the start's margins are repaired (1e-11 of their scale off)
    op_s = _outlier.op_s
    tried = []

    def cycles_after_a_repair(path, *args):
        tried.append(path.n_repairs)
        if path.n_repairs:
            raise PathError("the outlier path did not advance: degenerate cycling")
        return op_s(path, *args)

    monkeypatch.setattr(_outlier, "op_s", cycles_after_a_repair)
    model = RobustSVC(C=1e6, path="s").fit(X, y)
    assert tried[0] > 0 and tried[1] == 0  # repaired, then followed without the repair
    # That path passes fit's check of every point (an unrepaired path beyond it would raise).
    assert max(model.check_kkt(at=float(at)) for at in np.unique(model.path_.params)) <= 1e-8

    def always_cycles(path, *args):
        tried.append(path.n_repairs)
        raise PathError("the outlier path did not advance: degenerate cycling")

    monkeypatch.setattr(_outlier, "op_s", always_cycles)
    X_small, y_small = dataset("breast_cancer")
    tried.clear()
    with pytest.raises(PathError):
        RobustSVC(C=1.0, path="s").fit(X_small[:60], y_small[:60])
    assert tried == [0]  # no repair: raised at once, not followed again


@pytest.mark.parametrize("cls", [RobustSVC, RobustSVR, CCCPRobustSVC, CCCPRobustSVR], ids=lambda c: c.__name__)
def test_check_kkt_measures_a_wrong_alpha_and_refuses_bad_calls(cls, noisy_cancer, noisy_diabetes, tmp_path):
    import dataclasses

    from sklearn.exceptions import NotFittedError

    import gpath

    X, y, _, _ = noisy_cancer if cls._classification else noisy_diabetes
    model = cls(C=2.0, gamma=0.1)
    with pytest.raises(NotFittedError):
        model.check_kkt()
    model.fit(X, y)
    exact = model.check_kkt()
    assert exact <= 1e-12
    gpath.save(model, tmp_path / "m.gpath")
    assert gpath.load(tmp_path / "m.gpath").check_kkt() == exact
    # One α moved by δ = 1e-6 C. A point in a piece, far from every kink (its α fixed by the
    # loss): the check reports δ / C. A point at a kink with α inside its range: its margin
    # moves off the kink by Q_kk δ, reported relative to the scale of z.
    p, C = model.path_, model.C
    theta, s = (model.param_, p.s) if p.kind == "theta" else (p.theta, model.param_)
    alpha = p.alpha[model.selected_index_]
    y_pm = np.where(y == model.classes_[1], 1.0, -1.0) if cls._classification else np.ones(len(y))
    Q = y_pm[:, None] * y_pm[None, :] * gram(model, X)
    z = Q @ alpha
    scale = 1.0 + np.max(np.abs(Q) @ np.abs(alpha)) + (0.0 if cls._classification else np.max(np.abs(y)))
    levels = np.array([[s, 1.0]] * len(y)) if cls._classification else y[:, None] + np.array([-s, 0.0, s])
    far = int(np.argmax(np.min(np.abs(z[:, None] - levels), axis=1)))
    at_kink = np.flatnonzero(np.any(np.abs(z[:, None] - levels) <= 1e-9, axis=1)
                             & (np.abs(alpha) < C * (1 - 1e-6)) & (np.abs(alpha) > C * max(theta, 1e-6)))
    assert at_kink.size
    delta = 1e-6 * C
    for k, expected in ((far, 1e-6), (int(at_kink[0]), Q[at_kink[0], at_kink[0]] * delta / scale)):
        moved = p.alpha.copy()
        moved[model.selected_index_, k] += delta if moved[model.selected_index_, k] <= 0 else -delta
        wrong = cls(**model.get_params())
        wrong.__dict__.update({**model.__dict__, "path_": dataclasses.replace(p, alpha=moved)})
        assert wrong.check_kkt() == pytest.approx(expected, rel=1e-3)
    for bad, error in (("0.5", TypeError), (True, TypeError), (2.0, ValueError)):
        with pytest.raises(error, match="at"):
            model.check_kkt(at=bad)
    assert model.check_kkt() == exact  # refused calls changed nothing


@pytest.mark.parametrize("cls", [RobustSVR, CCCPRobustSVR], ids=lambda c: c.__name__)
def test_s_path_of_a_regression_that_fits_every_target_is_refused(cls):
    # A narrow RBF kernel and a large C: the LAD regression where OP-s starts fits all 40
    # targets, its largest residual is round-off (5e-13), and the loss's levels y ± s would be
    # y in float64 (a large ridge does the same: z = (K + ridge·I) α fits y). The path ran from there before (s = 0 or 4e-16 repeated; CCCP raised a
    # PathError on one such problem): now a ValueError says why, the estimator unchanged.
    from sklearn.datasets import load_diabetes

    X, y = load_diabetes(return_X_y=True)
    X, y = X[:40] / X.std(0), (y[:40] - y.mean()) / y.std()
    model = cls(C=1.0, gamma=1.0, path="s").fit(X, y)
    before = snapshot(model)
    with pytest.raises(ValueError, match="fits every target.*lower C or ridge .*or use path='theta'"):
        model.set_params(C=1e3).fit(X, y)
    model.set_params(C=1.0)
    assert snapshot(model) == before
    assert cls(C=1e3, gamma=1.0, path="theta", s=0.5).fit(X, y).check_kkt() <= 1e-12


def test_path_objective_is_that_of_its_alpha_from_fresh_kernel_values():
    # path_.objective was computed from the margins the path keeps, whose round-off it carried
    # times C·n: 1.5e-8 of the objective at C = 1e4, 2.3e-4 at C = 1e6. It is now computed from
    # the margins fit recomputes for its check of every point.
    X, y = dataset("breast_cancer")
    rng = np.random.default_rng(0)
    rows = rng.permutation(len(y))[:150]
    X, y = X[rows], y[rows].copy()
    flip = rng.random(150) < 0.15
    y[flip] = 1 - y[flip]
    model = RobustSVC(C=1e4, gamma=0.02, path="s").fit(X, y)
    y_pm = np.where(y == model.classes_[1], 1.0, -1.0)
    Q = y_pm[:, None] * y_pm[None, :] * gram(model, X)
    for alpha, s, objective in zip(model.path_.alpha, model.path_.params, model.path_.objective):
        z = Q @ alpha
        exact = 0.5 * alpha @ z + model.C * np.where(z >= s, np.maximum(0.0, 1.0 - z), 1.0 - s).sum()  # θ = 0
        assert abs(objective - exact) <= 1e-11 * abs(exact)


@pytest.mark.parametrize("scale", [1.0, 1e-10])
def test_regression_check_and_s_path_scale_with_the_targets(noisy_diabetes, scale):
    # RobustSVR is homogeneous: (y, C, s) → λ(y, C, s) scales α, f and the residuals by λ. The
    # check's unit is that of y (an absolute "1 +" made any feasible α pass at λ = 1e-10), and
    # so is OP-s's test of a start that fits every target (it refused this path at λ = 1e-10).
    X, y, _, _ = noisy_diabetes
    base = RobustSVR(C=1.0, gamma=0.1, path="theta", s=1.0).fit(X, y)
    model = RobustSVR(C=scale, gamma=0.1, path="theta", s=scale).fit(X, scale * y)
    np.testing.assert_allclose(model.path_.alpha, scale * base.path_.alpha, rtol=0, atol=1e-9 * scale)
    assert model.check_kkt() <= 1e-12
    negated = model.path_.alpha.copy()
    negated[-1] = -negated[-1]
    wrong = _with_alpha(model, negated).check_kkt()
    assert wrong > 1e-3 and wrong == pytest.approx(_with_alpha(base, negated / scale).check_kkt(), rel=1e-6)
    s_path = RobustSVR(C=scale, gamma=0.1, path="s").fit(X, scale * y)
    assert len(s_path.path_.params) == len(RobustSVR(C=1.0, gamma=0.1, path="s").fit(X, y).path_.params)


def _with_alpha(model, alpha):
    import dataclasses

    other = type(model)(**model.get_params())
    other.__dict__.update({**model.__dict__, "path_": dataclasses.replace(model.path_, alpha=alpha)})
    return other


def _degenerate(name):
    import pathlib

    data = np.load(pathlib.Path(__file__).parent / "data" / "robust_degenerate.npz")
    return data[f"X_{name}"], data[f"y_{name}"]


def test_a_start_whose_every_alpha_is_zero_has_its_margins_repaired(backend):
    # One feature of 1e12 (linear kernel): removing the start's jump leaves every α at 0 and
    # the kept margins at −3e10 … 3e11 where the fresh ones are 0; the repair returned early
    # for want of an α ≠ 0, and fit raised (2.2e-6 of the scale). (Found by a review.)
    X, y = _degenerate("zero")
    model = RobustSVC(C=100.0, kernel="linear", path="theta", s=-0.3).fit(backend.asarray(X), y)
    assert max(model.check_kkt(at=float(at)) for at in np.unique(model.path_.params)) <= 1e-12


def test_op_s_enters_a_point_a_tied_wall_left_beyond_its_level():
    # Tied targets, features of 1e-6 (linear kernel): two points reach their walls at one s;
    # the D-step of the first left the second's margin a rounding beyond its level, behind
    # the path's s, and it was never entered: a wrong path (0.065 off at s = 0.49), which
    # fit's check now refused. Such a point meets its wall at the current s. (Found by a
    # review.)
    from sklearn.datasets import load_diabetes
    from sklearn.preprocessing import StandardScaler

    X, y = load_diabetes(return_X_y=True)
    X = StandardScaler().fit_transform(X)[:60, :4] * 1e-6
    y = ((y - y.mean()) / y.std())[:60]
    model = RobustSVR(C=1e-3, kernel="linear", path="s", ridge=0.0).fit(X, y)
    assert max(model.check_kkt(at=float(at)) for at in np.unique(model.path_.params)) <= 1e-12


def test_a_point_whose_flip_moves_its_margin_by_a_rounding_leaves_its_wall(backend):
    """OP-s of ``RobustSVR`` without an intercept, kernel values of at most 5e-15 beside
    targets up to 5 (``fuzz_references.py`` seed 37,240,342: a degree-2 polynomial kernel,
    coef0 = 0, on one feature of size 2e-3). A D-step's flip moved the point's margin by 3e-19, to the
    far side of its new wall, which met it again at the same s: it flipped back and forth until
    the path refused ("degenerate cycling"; fifteen such seeds in the search). A point on its
    wall to round-off whose wall moves away as s moves on no longer meets it
    (:meth:`gpath._kinkpath.KinkPath.next_wall`). The features of 1e-6 that looped for ever
    before the stall guard existed (``robust_degenerate.npz``, "flip") end exact the same way."""
    model_class, X, y, params = _searched_problem(37240342)
    assert model_class is RobustSVR and params["path"] == "s" and not params["fit_intercept"]
    assert X.shape == (34, 1) and np.abs(X).max() < 2e-3
    problems = [(model_class(**params), X, y),
                (RobustSVR(C=1e-3, kernel="linear", path="s", s_min=0.3), *_degenerate("flip"))]
    for model, rows, targets in problems:
        model.fit(backend.asarray(rows), targets)
        assert max(model.check_kkt(at=float(at)) for at in np.unique(model.path_.params)) <= 1e-12
        assert partition_distance(model, rows, targets) <= 1.0


def test_the_stall_guard_raises_once_the_parameter_stops_moving():
    # The guard behind every round of OP-s and OP-θ: 2n + 10 rounds at one parameter value
    # raise (a point that flipped for ever at one s once took 1 GB of path points in minutes).
    from gpath import PathError
    from gpath._outlier import _Stall

    class Path:
        n = 3

    stalled = _Stall(Path())
    for param in (1.0, 0.9, 0.8):  # (a moving parameter keeps the count at 0)
        stalled(param)
    for _ in range(2 * Path.n + 10):
        stalled(0.8)
    with pytest.raises(PathError, match="degenerate cycling"):
        stalled(0.8)


def test_check_kkt_judges_the_fitted_problem_after_set_params(noisy_cancer):
    # check_kkt read C from the parameters: after set_params(C=2) an exact fit at C = 1
    # reported 0.04. The path records its C (SVCPath keeps its ridge the same way).
    from gpath import SVCPath

    X, y, _, _ = noisy_cancer
    model = RobustSVC(C=1.0, gamma=1 / 30).fit(X, y)
    exact = model.check_kkt()
    assert model.set_params(C=2.0).check_kkt() == exact <= 1e-12
    path = SVCPath(C_min=0.5, C_max=5.0, gamma=1 / 30).fit(X, y)
    exact = path.check_kkt()
    assert path.set_params(ridge=0.5, C_min=-1.0).check_kkt() == exact <= 1e-12


@pytest.mark.parametrize(("make", "data"), [
    (lambda: RobustSVR(kernel="linear", C=1.0, s=1.0), "waterflow"),
    (lambda: RobustSVR(kernel="linear", C=1e-2, path="s", s=1.0, s_min=0.3), "waterflow"),
    (lambda: RobustSVC(kernel="linear", C=1.0, s=-0.5), "breast_cancer"),
    (lambda: RobustSVC(kernel="linear", C=1e-2, path="s", s=-0.5, s_max=0.0, fit_intercept=True), "breast_cancer"),
])
def test_every_path_point_is_its_partitions_solution_on_raw_features(make, data):
    """Every recorded point of an outlier path is the exact solution of its own partition:
    the points at a kink re-solved by a dense float64 solve (:func:`partition_distance`) give
    the same decision values to the random searches' bound, 1e-6 of |f| plus 1,000 ε of the
    margins' scale. Raw features with a linear kernel are the ill-conditioned edge (seven
    correlated lags of WaterFlow up to 110, breast cancer's features up to 4,254: margins of
    terms up to 1e7, hundreds of points at a kink of a rank-7 or rank-30 kernel): the points
    came 0.0003–0.018 of the bound from their partitions' solutions. A coefficient of a point
    at a kink moved by 1e-6 of C puts the last point 149 to 76,000 times the bound away."""
    import dataclasses

    from gpath.datasets import load_waterflow_regression

    if data == "waterflow":
        X, y = load_waterflow_regression()
        X, y = X[:500], y[:500]
        y = (y - y.mean()) / y.std()
    else:
        from sklearn.datasets import load_breast_cancer

        X, y = load_breast_cancer(return_X_y=True)
        X, y = X[:400], y[:400]
    model = make().fit(X, y)
    assert len(model.path_.params) > 1
    assert partition_distance(model, X, y) <= 1.0
    p = model.path_
    alpha = p.alpha.copy()
    C = model.C
    last = alpha[-1]
    kink = np.flatnonzero((np.abs(last) > 1e-9 * C) & (np.abs(np.abs(last) - C) > 1e-9 * C))[0]
    alpha[-1, kink] += 1e-6 * C
    model.path_ = dataclasses.replace(p, alpha=alpha)
    assert partition_distance(model, X, y) > 40.0


def test_the_start_of_an_s_path_is_its_partitions_solution_to_round_off():
    """``fuzz_references.py`` seed 36,093,321: OP-s on 119 Gaussian points in five features
    of size 100 (up to 269), a linear kernel, C = 10⁴, s = −0.5, 10 % of the labels flipped:
    the path's start (96 points at a kink, their system of condition 5e6) held its margins to
    1e-12 of their scale and sat 1.5 times the search's bound from its partition's exact
    solution, which a dense float64 solve reaches to round-off. The margins are now held to
    1e-13."""
    seed = 36093321
    rng = np.random.default_rng(seed)
    n = int(rng.integers(8, 120))
    d = int(rng.integers(1, 6))
    X = rng.normal(size=(n + 60, d))
    rng.integers(4), rng.integers(-3, 10), rng.integers(3), rng.uniform(-3, 6)  # (the search's draws)
    X = X[:n] * 100.0
    draws = np.random.default_rng([seed, 6])
    draws.random(), draws.choice(2), draws.random()  # (regression? path, intercept)
    y = np.where(X[:, 0] + 0.5 * draws.normal(size=n) > 0, 1, -1)
    y[draws.random(n) < 0.1] *= -1
    s, s_max = float(draws.choice([0.0, -0.5, -1.0])), float(draws.choice([0.0, -0.5]))
    model = RobustSVC(C=1e4, kernel="linear", gamma=1.0, degree=2, path="s", s=s, s_max=s_max).fit(X, y)
    assert (n, s) == (119, -0.5) and np.count_nonzero((model.path_.alpha[0] > 0) & (model.path_.alpha[0] < 1e4)) > 80
    assert partition_distance(model, X, y) <= 1.0


def test_the_end_of_a_theta_path_whose_coefficients_shrink_is_exact(backend):
    """``fuzz_references.py`` seed 36,267,187: OP-θ on 31 points in five features, 30 of them
    one duplicated row, a degree-2 polynomial kernel, C = 10⁴, s = 0. One C-step runs from
    θ = 1 to 0 and takes the margin points' α from 5,000 to 0.0024: the end's α is the
    difference of numbers 10⁶ times larger, and its fresh margins sat 2.5e-9 below 1,
    ``check_kkt`` 1.2e-9 of the end's scale. The end is now refined where α has shrunk that
    far (:meth:`gpath._kinkpath.KinkPath.settle`)."""
    model_class, X, y, params = _searched_problem(36267187)
    assert model_class is RobustSVC
    assert params["kernel"] == "poly" and params["path"] == "theta" and not params["fit_intercept"]
    model = RobustSVC(**params).fit(backend.asarray(X), y)
    p = model.path_
    assert (len(X), params["C"], params["s"], list(p.params)) == (31, 1e4, 0.0, [1.0, 0.0])
    assert p.alpha[0].sum() / p.alpha[-1].sum() > 1e5  # the shrink
    assert model.check_kkt(at=0.0) <= 1e-12
    assert partition_distance(model, X, y) <= 1.0


def test_a_theta_path_whose_margins_all_start_on_the_wall_is_exact(backend):
    """``fuzz_references.py`` seed 36,880,852: 110 points of two features of size 3e-3, a
    degree-2 polynomial kernel with coef0 = 0 (kernel values below 1e-13), C = 33, s = 0: every
    margin starts within 1e-11 of the wall y f = s. A point held at the wall at θ = 1, where
    inliers and outliers coincide and a D-step would flip it back and forth, rode the wall
    through the C-step with α below θC to α = −0.012 at θ = 0, a point that is not locally
    optimal, and ``fit`` refused. At θ = 1 such a point now takes the side where the C-step
    moves it off the wall (:func:`gpath._outlier._off_the_walls`). (Its end is 2.8 times the
    random search's bound from its partition re-solved in float64: margins near 1e-11 beside
    the level 1, whose kink residuals of 4.8e-13 the end does not refine; ``check_kkt``, the
    exactness this library promises, holds.)"""
    model_class, X, y, params = _searched_problem(36880852)
    assert model_class is RobustSVC
    assert params["kernel"] == "poly" and params["path"] == "theta" and params["s"] == 0.0
    assert X.shape == (110, 2) and np.abs(X).max() < 1e-2
    model = RobustSVC(**params).fit(backend.asarray(X), y)
    assert model.path_.params[-1] == 0.0
    assert max(model.check_kkt(at=float(t)) for t in np.unique(model.path_.params)) <= 1e-11


def _searched_problem(seed):
    """The estimator class, rows, targets and parameters of ``fuzz_references.py``'s
    outlier-path trial for ``seed``, drawn as the search draws them."""
    from fuzz_references import robust_problem

    return robust_problem(seed)
