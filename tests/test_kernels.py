"""Kernels against scikit-learn's pairwise kernels; kernel names in any case and callable kernels
through every estimator (issue 13.5)."""

import dataclasses
import pickle

import array_api_compat
import numpy as np
import pytest
import scipy.sparse
from helpers import dataset
from sklearn.datasets import load_breast_cancer
from sklearn.metrics.pairwise import laplacian_kernel
from sklearn.svm import SVC

import gpath
from gpath import IncrementalSVC, RobustSVC, RobustSVR, SimpleSVC
from gpath._array_api import to_host
from gpath.kernels import Kernel, q_columns
from gpath.reference import exact_svc, exact_svc_gram, exact_svr, kernel_matrix


@pytest.fixture(scope="module")
def data():
    X, _ = load_breast_cancer(return_X_y=True)
    return (X - X.mean(0)) / X.std(0)


@pytest.mark.parametrize("kind,gamma,degree,coef0", [
    ("linear", 1.0, 3, 0.0), ("rbf", 0.05, 3, 0.0), ("poly", 0.02, 3, 1.0), ("poly", 0.1, 2, 0.5),
])
def test_kernel_block_matches_sklearn(backend, data, kind, gamma, degree, coef0):
    X1, X2 = data[:50], data[100:170]
    k = Kernel(kind, gamma, degree, coef0)
    got = backend.check(k(backend.asarray(X1), backend.asarray(X2)), (50, 70))
    expected = kernel_matrix(X1, X2, kind, gamma, degree, coef0)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


def test_gamma_scale_and_auto_match_sklearn(backend, data):
    y = np.arange(len(data)) % 2
    svc = SVC(gamma="scale").fit(data, y)
    got = Kernel.from_params("rbf", "scale", 3, 0.0, backend.asarray(data)).gamma
    assert got == pytest.approx(svc._gamma, rel=1e-12)
    assert Kernel.from_params("rbf", "auto", 3, 0.0, backend.asarray(data)).gamma == 1 / data.shape[1]


@pytest.mark.parametrize("kernel,gamma,degree,match", [
    ("sigmoid", 1.0, 3, "kernel='sigmoid' is taken by SimpleSVC and IncrementalSVC"),
    ("laplacian", 1.0, 3, "kernel must be one of"),
    ("rbf", -1.0, 3, "gamma must be"),
    ("rbf", "big", 3, "gamma must be"),
    ("poly", 1.0, 0, "degree must be"),
])
def test_bad_kernel_params(data, kernel, gamma, degree, match):
    with pytest.raises(ValueError, match=match):
        Kernel.from_params(kernel, gamma, degree, 0.0, data)


# ---------------------------------------------------------------- names in any case, callables (issue 13.5)


def rbf_005(X, Z):
    """exp(−0.05 ‖x − z‖²) in the inputs' own namespace (a module-level function: it pickles)."""
    xp = array_api_compat.array_namespace(X, Z)
    diff = X[:, None, :] - Z[None, :, :]
    return xp.exp(-0.05 * xp.sum(diff * diff, axis=2))


def laplacian(X, Z):
    """exp(−0.02 ‖x − z‖₁): a kernel gpath does not know by name."""
    xp = array_api_compat.array_namespace(X, Z)
    return xp.exp(-0.02 * xp.sum(xp.abs(X[:, None, :] - Z[None, :, :]), axis=2))


@pytest.mark.parametrize("name", ["RBF", "Linear", "POLY", "rBf"])
@pytest.mark.parametrize("cls", [IncrementalSVC, SimpleSVC, RobustSVC], ids=lambda c: c.__name__)
def test_kernel_names_in_any_case(cls, name):
    X, y = dataset("breast_cancer")
    X, y = X[:150], y[:150]
    params = dict(gamma=0.05, degree=2, coef0=1.0, C=0.5, **({"random_state": 0} if cls is SimpleSVC else {}))
    a = cls(kernel=name, **params).fit(X, y)
    b = cls(kernel=name.lower(), **params).fit(X, y)
    assert a.kernel_ == b.kernel_ and a.kernel_.kind == name.lower()
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))
    if cls is IncrementalSVC:  # the parameter stays as given: updates go on
        a.update(X_add=dataset("breast_cancer")[0][150:160], y_add=dataset("breast_cancer")[1][150:160])


def test_kernel_name_errors():
    X = np.zeros((3, 2))
    with pytest.raises(ValueError, match=r"kernel must be one of \('linear', 'rbf', 'poly', 'sigmoid'\) \(in any "
                                         r"case\) or a callable kernel\(X, Z\) -> \(n, m\); got 'laplacian'"):
        Kernel.from_params("laplacian", 1.0, 3, 0.0, X)
    with pytest.raises(ValueError, match=r"kernel='sigmoid' is taken by SimpleSVC and IncrementalSVC \(not positive "
                                         r"semi-definite"):
        Kernel.from_params("sigmoid", 1.0, 3, 0.0, X)
    with pytest.raises(TypeError, match="kernel must be one of .* or a callable .*; got int 3"):
        Kernel.from_params(3, 1.0, 3, 0.0, X)
    with pytest.raises(ValueError, match="gamma must be"):  # checked for a callable too
        Kernel.from_params(rbf_005, -1.0, 3, 0.0, X)


def test_callable_kernel_block_paired_diagonal_and_columns(backend, data):
    X1, X2 = data[:150], data[150:220]
    k = Kernel.from_params(rbf_005, "scale", 3, 0.0, backend.asarray(X1))
    ref = Kernel("rbf", 0.05)
    assert k.kind == "callable" and k.function is rbf_005
    A, B = backend.asarray(X1), backend.asarray(X2)
    expected = kernel_matrix(X1, X2, "rbf", 0.05)
    np.testing.assert_allclose(backend.check(k(A, B), (150, 70)), expected, rtol=0, atol=1e-14)
    # paired / diagonal from the callable's blocks (more than one block of 64 rows)
    np.testing.assert_allclose(backend.check(k.paired(A, A[::-1, :]), (150,)),
                               np.diag(kernel_matrix(X1, X1[::-1], "rbf", 0.05)), rtol=0, atol=1e-14)
    np.testing.assert_allclose(backend.check(k.diagonal(A), (150,)), np.ones(150), rtol=0, atol=1e-15)
    assert backend.check(k.paired(A[:0, :], A[:0, :]), (0,)).shape == (0,)
    y = np.where(np.arange(150) % 3 == 0, -1.0, 1.0)
    yd = backend.asarray(y)
    cols = np.array([3, 4, 5, 40])
    got = q_columns(k, A, backend.asarray(X1[cols]), cols, 1e-6, yd, backend.asarray(y[cols]))
    want = q_columns(ref, A, backend.asarray(X1[cols]), cols, 1e-6, yd, backend.asarray(y[cols]))
    np.testing.assert_allclose(backend.check(got, (150, 4)), to_host(want), rtol=0, atol=1e-14)
    # An offset (fit_intercept of the robust estimators) applies to a callable too.
    k1 = dataclasses.replace(k, offset=1.0)
    np.testing.assert_allclose(to_host(k1(A, B)), expected + 1.0, rtol=0, atol=1e-14)
    np.testing.assert_allclose(to_host(k1.diagonal(A)), np.full(150, 2.0), rtol=0, atol=1e-14)


def test_callable_kernel_must_answer_in_the_inputs_namespace(data):
    strict = pytest.importorskip("array_api_strict")
    A = strict.asarray(data[:10], device=strict.Device("device1"))

    def on_host(X, Z):
        return np.ones((X.shape[0], Z.shape[0]))

    def other_device(X, Z):
        return strict.ones((X.shape[0], Z.shape[0]), dtype=strict.float64)

    def wrong_shape(X, Z):
        return X @ X.T

    def a_list(X, Z):
        return [[1.0] * Z.shape[0]] * X.shape[0]

    with pytest.raises(TypeError, match=r"kernel on_host\(X, Z\) must return an array in the namespace and on the "
                                        r"device of X and Z .*gpath cannot move it there for you"):
        Kernel("callable", function=on_host)(A, A[:4, :])
    with pytest.raises(TypeError, match="cannot move it there"):
        Kernel("callable", function=other_device)(A, A[:4, :])
    with pytest.raises(TypeError, match=r"must return an array of shape \(10, 4\) .*got shape \(10, 10\)"):
        Kernel("callable", function=wrong_shape)(A, A[:4, :])
    with pytest.raises(TypeError, match=r"must return an array of shape \(10, 4\) in the namespace .*got list"):
        Kernel("callable", function=a_list)(A, A[:4, :])
    model = IncrementalSVC(kernel=on_host)
    with pytest.raises(TypeError, match="cannot move it there"):
        model.fit(A, strict.asarray(np.arange(10) % 2, device=strict.Device("device1")))
    assert not hasattr(model, "state_")


def _windows():
    X, y = dataset("breast_cancer")
    return X[:260], y[:260], X[260:320], y[260:320]


@pytest.mark.parametrize("kernel", [laplacian, rbf_005], ids=["laplacian", "rbf"])
def test_incremental_svc_with_a_callable_kernel_is_exact(backend, kernel):
    # fit (SimpleSVM) and a MID update (the generic engine) with a callable kernel: the exact
    # C-SVC of the window, from LIBSVM's index sets on scikit-learn's kernel values.
    X, y, X_new, y_new = _windows()
    model = IncrementalSVC(C=2.0, kernel=kernel).fit(backend.asarray(X), backend.asarray(y))
    model.update(X_add=backend.asarray(X_new), y_add=backend.asarray(y_new), remove=model.sample_ids_[:60])
    Xw, yw = np.vstack([X[60:], X_new]), np.concatenate([y[60:], y_new])
    sk = laplacian_kernel(Xw, Xw, gamma=0.02) if kernel is laplacian else kernel_matrix(Xw, Xw, "rbf", 0.05)
    y_pm = np.where(yw == 1, 1.0, -1.0)
    alpha, b, kkt, _ = exact_svc_gram(sk + 1e-6 * np.eye(len(yw)), y_pm, 2.0)
    assert kkt <= 1e-9
    f = backend.check(model.decision_function(backend.asarray(Xw)), (len(yw),))
    f_ref = (sk @ (y_pm * alpha)) + b
    assert np.abs(f - f_ref).max() <= 1e-9 * np.abs(f_ref).max()
    np.testing.assert_allclose(model.alpha_, alpha, rtol=0, atol=1e-8)
    assert model.check_kkt() <= 1e-9
    assert model.kernel_.kind == "callable" and model.kernel_.function is kernel


def refuses_no_rows(X, Z):
    """rbf_005, refusing a block of no rows as scikit-learn's pairwise kernels do."""
    if X.shape[0] == 0 or Z.shape[0] == 0:
        raise ValueError("Found array with 0 sample(s)")
    return rbf_005(X, Z)


@pytest.mark.parametrize("regression", [False, True], ids=["IncrementalSVC", "IncrementalSVR"])
def test_an_update_that_only_removes_points_asks_a_callable_for_no_empty_block(backend, regression):
    # A removal-only update has no added rows: their kernel block is empty, and a callable
    # such as scikit-learn's rbf_kernel raises on one (the kernel was called with it). The
    # model after the removal is the exact one of the points kept (the reference: LIBSVM's
    # index sets re-solved in float64), on NumPy, array_api_strict and sparse rows.
    X, y, _, _ = _windows()
    X, target = X[:120], (X[:120, 0] if regression else y[:120])
    X = X[:, 1:] if regression else X
    cls = gpath.IncrementalSVR if regression else IncrementalSVC
    model = cls(C=2.0, kernel=refuses_no_rows).fit(backend.asarray(X), backend.asarray(target))
    model.update(remove=model.sample_ids_[:20])
    kept, rest = X[20:], target[20:]
    if regression:
        ref = exact_svr(kept, rest, 2.0, epsilon=0.1, kernel="rbf", gamma=0.05)
        assert ref.certified
        f, f_ref = backend.check(model.predict(backend.asarray(kept)), (100,)), ref.predict(kept)
    else:
        y_pm = np.where(rest == 1, 1.0, -1.0)
        K = kernel_matrix(kept, kept, "rbf", 0.05)
        alpha, b, kkt, _ = exact_svc_gram(K + 1e-6 * np.eye(100), y_pm, 2.0)
        assert kkt <= 1e-9
        f, f_ref = backend.check(model.decision_function(backend.asarray(kept)), (100,)), K @ (y_pm * alpha) + b
    assert np.abs(f - f_ref).max() <= 1e-9 * (1.0 + np.abs(f_ref).max())
    assert model.check_kkt() <= 1e-9
    if not regression and backend.name == "numpy":
        def linear(A, B):  # (sparse rows: a sparse block, which gpath makes dense)
            if A.shape[0] == 0 or B.shape[0] == 0:
                raise ValueError("Found array with 0 sample(s)")
            return A @ B.T

        sparse = IncrementalSVC(C=0.1, kernel=linear).fit(scipy.sparse.csr_matrix(X), target)
        sparse.update(remove=sparse.sample_ids_[:20])
        ref = exact_svc(kept, y_pm, 0.1, kernel="linear")
        assert ref.certified
        f, f_ref = sparse.decision_function(kept), ref.decision_function(kept)
        assert np.abs(f - f_ref).max() <= 1e-9 * (1.0 + np.abs(f_ref).max())


def test_simple_and_robust_estimators_with_a_callable_kernel(backend):
    # The callable RBF gives the same models as the built-in one (same path, same events).
    X, y, _, _ = _windows()
    Xb, yb = backend.asarray(X[:160]), backend.asarray(y[:160])
    a, b = SimpleSVC(C=2.0, kernel=rbf_005).fit(Xb, yb), SimpleSVC(C=2.0, gamma=0.05).fit(Xb, yb)
    np.testing.assert_allclose(backend.check(a.decision_function(Xb)), to_host(b.decision_function(Xb)),
                               rtol=0, atol=1e-11)
    for path in ("theta", "s"):
        a = RobustSVC(kernel=rbf_005, path=path, fit_intercept=True).fit(Xb, yb)
        b = RobustSVC(gamma=0.05, path=path, fit_intercept=True).fit(Xb, yb)
        np.testing.assert_allclose(a.path_.params, b.path_.params, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(a.path_.alpha, b.path_.alpha, rtol=0, atol=1e-11)
    Xr, yr = X[:120, 1:], X[:120, 0]
    a = RobustSVR(kernel=laplacian, path="s").fit(backend.asarray(Xr), backend.asarray(yr))
    K = laplacian_kernel(Xr, Xr, gamma=0.02)
    np.testing.assert_allclose(backend.check(a.predict(backend.asarray(Xr))), K @ a.alpha_, rtol=0, atol=1e-12)


@pytest.mark.parametrize("make", [lambda: IncrementalSVC(kernel=rbf_005), lambda: SimpleSVC(kernel=rbf_005),
                                  lambda: RobustSVC(kernel=rbf_005), lambda: RobustSVR(kernel=rbf_005)],
                         ids=["IncrementalSVC", "SimpleSVC", "RobustSVC", "RobustSVR"])
def test_a_callable_kernel_pickles_but_is_not_saved(make, tmp_path):
    X, y, _, _ = _windows()
    model = make()
    target = X[:80, 0] if isinstance(model, RobustSVR) else y[:80]
    model.fit(X[:80, 1:] if isinstance(model, RobustSVR) else X[:80], target)
    Xt = X[:80, 1:] if isinstance(model, RobustSVR) else X[:80]
    values = model.predict if isinstance(model, RobustSVR) else model.decision_function
    copy = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(copy.predict(Xt), model.predict(Xt))
    np.testing.assert_array_equal(values(Xt), (copy.predict if isinstance(model, RobustSVR)
                                               else copy.decision_function)(Xt))
    path = tmp_path / "model.npz"
    with pytest.raises(TypeError, match="callable" if isinstance(model, (RobustSVC, RobustSVR)) else "cannot save"):
        gpath.save(model, path)
    assert not path.exists()


def test_one_rows_rbf_block_is_the_differences_far_from_the_origin():
    # predict_one's block K(x, SV) for a single row takes x − z itself (no expansion around a
    # centre): exact to round-off of the distances even for data far from the origin.
    from gpath.kernels import Kernel

    rng = np.random.default_rng(5)
    Z = 1e6 + rng.normal(size=(50, 3))
    x = Z[:1] + 0.1
    kernel = Kernel("rbf", gamma=0.7)
    exact = np.exp(-0.7 * ((Z - x) ** 2).sum(axis=1))
    np.testing.assert_allclose(kernel(x, Z)[0], exact, rtol=1e-14)
    np.testing.assert_allclose(kernel(np.vstack([x, x]), Z), np.vstack([exact, exact]), rtol=1e-9)


def test_compiled_exponential_is_within_one_ulp_of_numpys():
    # The compiled passes of RBF blocks' exponential (gpath._exp, taken where NumPy's float64
    # exp is not a vector routine) against NumPy's on a kernel's range, the ends of float64's
    # normal range, the subnormals and zeros beyond, NaN and ±inf, a partial range of columns
    # and chunk-sized rows.
    from gpath._exp import _CHUNK
    from gpath._exp import _compiled_rows as exp_rows

    rng = np.random.default_rng(7)
    x = -rng.exponential(5.0, size=(5, 3 * _CHUNK + 17))
    x[0, :40] = -rng.random(40) * 800
    edges = [0.0, -0.0, 1e-300, -1e-300, -708.0, -708.4, -709.0, -745.0, -746.0, 709.0, 709.9, 710.0,
             -1e-16, -0.5, np.log(2.0) / 2, -np.log(2.0) / 2, np.nan, -np.inf, np.inf]
    x[1, : len(edges)] = edges
    with np.errstate(over="ignore"):
        expected = np.exp(x)
    got = x.copy()
    exp_rows(got, 0, x.shape[1])
    finite = np.isfinite(expected)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))
    np.testing.assert_array_equal(got[~finite & ~np.isnan(expected)], expected[~finite & ~np.isnan(expected)])
    ulps = np.abs(got[finite] - expected[finite]) / np.spacing(np.maximum(expected[finite], np.finfo(float).tiny))
    assert ulps.max() <= 1.0
    part = x.copy()
    exp_rows(part, 100, 2 * _CHUNK + 3)
    np.testing.assert_array_equal(part[:, 100 : 2 * _CHUNK + 3], got[:, 100 : 2 * _CHUNK + 3])
    np.testing.assert_array_equal(part[:, :100], x[:, :100])
    np.testing.assert_array_equal(part[:, 2 * _CHUNK + 3 :], x[:, 2 * _CHUNK + 3 :])
