"""kernel="sigmoid" (issue 20, part 3): tanh(gamma <x, z> + coef0), as scikit-learn's SVC, for
SimpleSVC and IncrementalSVC. The kernel is not positive semi-definite, so the dual is not
convex: every model must be a KKT point of it, checked here from scratch by an independent
computation (scikit-learn's sigmoid Gram matrix, the test's own KKT rule), on dense and sparse
rows, after updates (refits), after save/load; where the active-set iteration cannot reach one,
a PathError that says why; the other estimators refuse the kernel."""

from __future__ import annotations

import io

import numpy as np
import pytest
import scipy.sparse
from sklearn.datasets import load_breast_cancer, load_digits, load_wine
from sklearn.metrics.pairwise import sigmoid_kernel
from sklearn.svm import SVC

import gpath
from gpath import IncrementalSVC, PathError, SimpleSVC
from gpath._array_api import to_host

ESTIMATORS = (SimpleSVC, IncrementalSVC)


def standardized(loader, n=None):
    X, y = loader(return_X_y=True)
    X = (X - X.mean(0)) / X.std(0)
    return (X, y) if n is None else (X[:n], y[:n])


def kkt_from_scratch(model, X, y, gamma, coef0):
    """The largest KKT violation of every pair of ``model`` from its published dual_coef_ and
    intercept_ (binary), recomputed on scikit-learn's Gram matrix: α ∈ [0, C], yᵀα = 0, and
    y f ≥ 1 where α = 0, = 1 where 0 < α < C, ≤ 1 where α = C, relative to 1 + max Σ|Q_ij|α_j."""
    K = sigmoid_kernel(X, X, gamma=gamma, coef0=coef0) + model.ridge * np.eye(len(y))
    y_pm = np.where(y == model.classes_[1], 1.0, -1.0)
    alpha = np.zeros(len(y))
    alpha[model.support_] = np.abs(to_host(model.dual_coef_)[0])
    f = K @ (alpha * y_pm) + to_host(model.intercept_)[0]
    yf = y_pm * f
    C = model.C
    inside = (alpha > 0) & (alpha < C)
    violation = max(np.max(np.where(alpha < C, np.maximum(1.0 - yf, 0.0), 0.0)),
                    np.max(np.where(alpha > 0, np.maximum(yf - 1.0, 0.0), 0.0)),
                    np.max(np.abs(yf[inside] - 1.0), initial=0.0))
    scale = 1.0 + np.max(np.abs(K) @ alpha)
    assert abs(alpha @ y_pm) <= 1e-12 * C * len(y) and alpha.max() <= C * (1 + 1e-15)
    return violation / scale


@pytest.mark.parametrize("cls", ESTIMATORS)
@pytest.mark.parametrize("C", [1e-2, 1.0, 100.0])
def test_the_model_is_a_kkt_point_of_the_dual(backend, cls, C):
    X, y = standardized(load_breast_cancer, 250)
    gamma, coef0 = 1.0 / (X.shape[1] * X.var()), 0.0
    model = cls(kernel="sigmoid", gamma="scale", C=C).fit(backend.asarray(X), y)
    assert model.kernel_.gamma == pytest.approx(gamma, rel=1e-12)
    assert model.check_kkt(backend.asarray(X), y) <= 1e-9
    assert kkt_from_scratch(model, X, y, gamma, coef0) <= 1e-9
    f = backend.check(model.decision_function(backend.asarray(X[:40])), (40,))
    expected = (sigmoid_kernel(X[:40], to_host(model.support_vectors_), gamma=gamma, coef0=coef0)
                @ to_host(model.dual_coef_)[0] + to_host(model.intercept_)[0])
    np.testing.assert_allclose(f, expected, rtol=0, atol=1e-10 * (1 + np.abs(to_host(model.dual_coef_)).sum()))


def test_where_the_dual_has_one_solution_it_is_libsvms():
    # At small C every point sits at its bound (the box decides, not the curvature): LIBSVM's
    # model, to its float32 kernel values.
    X, y = standardized(load_breast_cancer, 250)
    svc = SVC(kernel="sigmoid", C=1e-2, tol=1e-12).fit(X, y)
    model = SimpleSVC(kernel="sigmoid", C=1e-2).fit(X, y)
    np.testing.assert_array_equal(model.support_, svc.support_)
    np.testing.assert_allclose(model.decision_function(X), svc.decision_function(X), rtol=0, atol=1e-5)


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_multiclass_dense_and_sparse_rows_give_one_model(cls):
    X, y = standardized(load_wine)
    dense = cls(kernel="sigmoid", C=10.0, coef0=-0.5).fit(X, y)
    sparse = cls(kernel="sigmoid", C=10.0, coef0=-0.5).fit(scipy.sparse.csr_matrix(X), y)
    assert dense.check_kkt(X, y) <= 1e-9
    np.testing.assert_array_equal(dense.support_, sparse.support_)
    np.testing.assert_allclose(dense.decision_function(X), sparse.decision_function(scipy.sparse.csr_matrix(X)),
                               rtol=0, atol=1e-9)


def test_updates_refit_to_a_kkt_point_and_say_so():
    # The MID path needs a positive definite margin matrix (its bordered factor); a sigmoid
    # model's pairs are refitted, warm-started, whatever ``method``.
    X, y = standardized(load_breast_cancer)
    rows = list(range(300))
    for method in ("multiple", "single", "auto"):
        model = IncrementalSVC(kernel="sigmoid", C=10.0, method=method).fit(X[rows], y[rows])
        held = list(rows)
        for step in range(3):
            add = list(range(300 + 20 * step, 320 + 20 * step))
            model.update(X[add], y[add], remove=model.sample_ids_[:20])
            held = held[20:] + add
            assert model.last_update_.method == "refit"
            assert model.check_kkt(X[held], y[held]) <= 1e-9
            assert kkt_from_scratch(model, X[held], y[held], model.kernel_.gamma, 0.0) <= 1e-9


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_save_and_load(cls):
    X, y = standardized(load_breast_cancer, 150)
    model = cls(kernel="sigmoid", C=1.0, coef0=0.5).fit(X, y)
    buffer = io.BytesIO()
    gpath.save(model, buffer)
    buffer.seek(0)
    loaded = gpath.load(buffer)
    assert loaded.kernel_ == model.kernel_
    np.testing.assert_array_equal(loaded.decision_function(X), model.decision_function(X))


def test_the_scale_bound_holds_for_a_kernel_that_is_not_psd():
    # |tanh| <= 1 bounds |Q_ij|; max Q_kk (the rule for positive semi-definite kernels) does not.
    X, y = standardized(load_breast_cancer, 150)
    model = IncrementalSVC(kernel="sigmoid", C=100.0, coef0=-10.0).fit(X, y)
    state = model.states_[0]
    scale = state.kkt_scale(with_shift=False)
    assert 1.0 + np.max(to_host(model.kernel_.diagonal(X))) * state.alpha.sum() < scale  # the PSD rule fails
    assert state.scale_bound() >= scale


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_a_fit_that_cannot_reach_a_kkt_point_says_why_and_changes_nothing(cls):
    # Digits 0 and 5, gamma "scale", coef0 -1, C = 1: SimpleSVM's active-set iteration cycles.
    X, y = load_digits(return_X_y=True)
    pair = (y == 0) | (y == 5)
    model = cls(kernel="sigmoid").fit(X[pair][:40] / 16, y[pair][:40])
    before = model.decision_function(X[pair][:5] / 16)
    with pytest.raises(PathError, match="sigmoid kernel is not positive semi-definite"):
        model.set_params(coef0=-1.0).fit(X[pair] / 16, y[pair])
    np.testing.assert_array_equal(model.decision_function(X[pair][:5] / 16), before)


@pytest.mark.parametrize("make", [lambda: gpath.SVCPath(kernel="sigmoid"),
                                  lambda: gpath.IncrementalSVR(kernel="sigmoid"),
                                  lambda: gpath.SVRPath(kernel="sigmoid"),
                                  lambda: gpath.RobustSVC(kernel="sigmoid")],
                         ids=["SVCPath", "IncrementalSVR", "SVRPath", "RobustSVC"])
def test_estimators_without_it_say_so(make):
    X, y = standardized(load_breast_cancer, 40)
    with pytest.raises(ValueError, match="kernel='sigmoid' is taken by SimpleSVC and IncrementalSVC"):
        make().fit(X, y)


def test_sliding_window_refuses_it():
    pytest.importorskip("river")
    from gpath.river import SlidingWindowSVC

    with pytest.raises(ValueError, match="kernel='sigmoid' is taken by SimpleSVC and IncrementalSVC"):
        SlidingWindowSVC(kernel="sigmoid")


@pytest.mark.parametrize("params", [dict(loss="squared_hinge"), dict(C=np.inf)])
def test_without_the_box_it_is_refused(params):
    # The dual of an indefinite kernel needs the box 0 <= alpha <= C to be bounded below.
    X, y = standardized(load_breast_cancer, 100)
    with pytest.raises(ValueError, match="kernel='sigmoid' needs loss='hinge' and a finite C"):
        SimpleSVC(kernel="sigmoid", **params).fit(X, y)


@pytest.mark.parametrize("sparse", [False, True])
def test_an_update_that_only_drops_a_class_says_refit(sparse):
    X, y = standardized(load_wine)
    rows = scipy.sparse.csr_matrix(X) if sparse else X
    model = IncrementalSVC(kernel="sigmoid", gamma=0.01, coef0=-0.5, C=2.0).fit(rows, y)
    model.update(remove=model.sample_ids_[y == 0])
    assert model.classes_.tolist() == [1, 2] and model.last_update_.method == "refit"
