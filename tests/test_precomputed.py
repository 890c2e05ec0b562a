"""kernel="precomputed" (issue 20, part 3): SimpleSVC and IncrementalSVC fit on a Gram matrix and
predict from kernel values against the training points, exactly as on the features with the
same kernel, against the exact reference re-solved on the Gram matrix; bad input refused."""

from __future__ import annotations

import io
import pickle

import numpy as np
import pytest
from helpers import snapshot
from sklearn.datasets import load_breast_cancer, load_iris
from sklearn.model_selection import cross_val_score
from sklearn.svm import SVC

import gpath
from gpath import IncrementalSVC, SimpleSVC
from gpath._array_api import to_host
from gpath.reference import exact_svc_gram, kernel_matrix

ESTIMATORS = (SimpleSVC, IncrementalSVC)


def breast_cancer(n=200):
    X, y = load_breast_cancer(return_X_y=True)
    X = (X - X.mean(0)) / X.std(0)
    return X[:n], y[:n]


@pytest.mark.parametrize("cls", ESTIMATORS)
@pytest.mark.parametrize("C", [1e-2, 1.0, 1e3])
def test_fit_on_a_gram_matrix_equals_the_exact_reference(backend, cls, C):
    X, y = breast_cancer()
    G = kernel_matrix(X, X, "rbf", 0.02)
    y_pm = np.where(y == 1, 1.0, -1.0)
    alpha, b, kkt, _ = exact_svc_gram(G + 1e-6 * np.eye(len(y)), y_pm, C)
    assert kkt <= 1e-9
    model = cls(kernel="precomputed", C=C).fit(backend.asarray(G), y)
    assert model.n_features_in_ == len(y) and model.shape_fit_ == (len(y), len(y))
    assert model.check_kkt(backend.asarray(G), y) <= 1e-9
    f = backend.check(model.decision_function(backend.asarray(G)), (len(y),))
    f_ref = G @ (alpha * y_pm) + b
    assert np.abs(f - f_ref).max() <= 1e-9 * (1.0 + np.max(np.abs(G) @ alpha))
    np.testing.assert_array_equal(model.predict(backend.asarray(G)), np.where(f_ref > 0, 1, 0))


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_multiclass_and_probabilities_equal_the_model_on_the_features(cls):
    # The same kernel, once as a Gram matrix: every attribute that predicts is the same.
    X, y = load_iris(return_X_y=True)
    G, T = kernel_matrix(X[::2], X[::2], "rbf", 0.5), kernel_matrix(X[1::2], X[::2], "rbf", 0.5)
    on_gram = cls(kernel="precomputed", C=10.0, probability=True, random_state=0).fit(G, y[::2])
    on_features = cls(kernel="rbf", gamma=0.5, C=10.0, probability=True, random_state=0).fit(X[::2], y[::2])
    np.testing.assert_array_equal(on_gram.support_, on_features.support_)
    np.testing.assert_allclose(on_gram.dual_coef_, on_features.dual_coef_, rtol=0, atol=1e-9)
    np.testing.assert_allclose(on_gram.intercept_, on_features.intercept_, rtol=0, atol=1e-9)
    np.testing.assert_allclose(on_gram.decision_function(T), on_features.decision_function(X[1::2]), atol=1e-9)
    np.testing.assert_allclose(on_gram.predict_proba(T), on_features.predict_proba(X[1::2]), atol=1e-9)
    assert on_gram.score(T, y[1::2]) == on_features.score(X[1::2], y[1::2])
    # As SVC reads it: only the support vectors' columns of the test Gram matter.
    sparse_T = np.zeros_like(T)
    sparse_T[:, on_gram.support_] = T[:, on_gram.support_]
    np.testing.assert_array_equal(on_gram.predict(sparse_T), on_gram.predict(T))
    assert (on_gram.predict(T) == SVC(kernel="precomputed", C=10.0).fit(G, y[::2]).predict(T)).mean() >= 0.97


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_save_and_load(cls):
    X, y = breast_cancer(120)
    G = X @ X.T
    model = cls(kernel="precomputed", C=0.1).fit(G, y)
    buffer = io.BytesIO()
    gpath.save(model, buffer)
    buffer.seek(0)
    loaded = gpath.load(buffer)
    assert loaded.kernel_.kind == "precomputed"
    np.testing.assert_array_equal(to_host(loaded.decision_function(G[:10])), to_host(model.decision_function(G[:10])))


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_scikit_learn_cross_validation_cuts_rows_and_columns(cls):
    # The pairwise tag: a fold's X is G[train][:, train], its test rows G[test][:, train].
    X, y = breast_cancer(90)
    G = kernel_matrix(X, X, "rbf", 0.02)
    on_gram = cross_val_score(cls(kernel="precomputed", C=1.0), G, y, cv=3)
    on_features = cross_val_score(cls(kernel="rbf", gamma=0.02, C=1.0), X, y, cv=3)
    np.testing.assert_array_equal(on_gram, on_features)


def test_a_file_whose_support_vectors_lost_their_index_is_refused():
    X, y = breast_cancer(60)
    model = SimpleSVC(kernel="precomputed", C=1.0).fit(X @ X.T, y)
    for bad_index in (-1.0, 2.5, 1e6):
        bad = pickle.loads(pickle.dumps(model))
        bad.support_vectors_[0, -1] = bad_index
        buffer = io.BytesIO()
        gpath.save(bad, buffer)
        buffer.seek(0)
        with pytest.raises(ValueError, match="index"):
            gpath.load(buffer)


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_bad_input_is_refused_and_changes_nothing(cls):
    X, y = breast_cancer(80)
    G = X @ X.T
    with pytest.raises(ValueError, match="square Gram matrix"):
        cls(kernel="precomputed").fit(G[:, :40], y)
    with pytest.raises(ValueError, match="symmetric"):
        cls(kernel="precomputed").fit(X[::-1] @ X.T, y)
    model = cls(kernel="precomputed").fit(G, y)
    before = snapshot(model)
    with pytest.raises(ValueError, match="80 features"):
        model.predict(G[:5, :40])
    with pytest.raises(ValueError, match="80 features"):
        model.decision_function(G[:40].T)
    if cls is IncrementalSVC:
        with pytest.raises(ValueError, match="cannot be updated"):
            model.update(G[:2], y[:2])
        with pytest.raises(ValueError, match="cannot be updated"):
            model.update(remove=[0])
        with pytest.raises(ValueError, match="partial_fit"):
            IncrementalSVC(kernel="precomputed").partial_fit(G, y)
    assert snapshot(model) == before


@pytest.mark.parametrize("make", [lambda: gpath.SVCPath(kernel="precomputed"),
                                  lambda: gpath.IncrementalSVR(kernel="precomputed"),
                                  lambda: gpath.SVRPath(kernel="precomputed"),
                                  lambda: gpath.RobustSVC(kernel="precomputed")],
                         ids=["SVCPath", "IncrementalSVR", "SVRPath", "RobustSVC"])
def test_estimators_without_it_say_so(make):
    X, y = breast_cancer(40)
    with pytest.raises(ValueError, match="kernel='precomputed' is taken by SimpleSVC and IncrementalSVC"):
        make().fit(X @ X.T, y)
