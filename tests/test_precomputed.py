"""kernel="precomputed" (issue 20, part 3): SimpleSVC and IncrementalSVC fit on a Gram matrix and
predict from kernel values against the training points, exactly as on the features with the
same kernel, against the exact reference re-solved on the Gram matrix; IncrementalSVC's updates
take the new points' kernel values and equal a fit on the new Gram matrix; gpath's exact
cross-validation cuts a Gram matrix's rows and columns; bad input refused."""

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
from gpath.model_selection import cross_validate
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
        with pytest.raises(ValueError, match=r"shape \(m, n \+ m\) = \(2, 82\); got \(2, 80\)"):
            model.update(G[:2], y[:2])
        asymmetric = np.concatenate([G[:2], [[1.0, 2.0], [0.0, 1.0]]], axis=1)
        with pytest.raises(ValueError, match="symmetric"):
            model.update(asymmetric, y[:2])
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


def _updated_on_gram(asarray, X, y, gamma, steps, C=10.0, **params):
    """An IncrementalSVC of a precomputed kernel fitted on the first rows and updated by
    ``steps`` = [(rows added, positions removed)], beside the rows (of X) it holds."""
    G = kernel_matrix(X, X, "rbf", gamma)
    rows = list(range(steps[0][0].start))
    model = IncrementalSVC(kernel="precomputed", C=C, **params).fit(asarray(G[np.ix_(rows, rows)]), y[rows])
    for add, positions in steps:
        add = list(add)
        K_add = G[np.ix_(add, rows + add)]
        model.update(asarray(K_add) if add else None, y[add] if add else None,
                     remove=model.sample_ids_[positions])
        rows = [r for i, r in enumerate(rows) if i not in set(positions)] + add
        assert model.last_update_.method == "refit"
    return model, rows, G


def test_updates_equal_a_fit_on_the_new_gram_matrix(backend):
    # Kernel values of the new points against the training points (in training order), then
    # against themselves: the updated model is the exact model of the new Gram matrix.
    X, y = breast_cancer(260)
    steps = [(range(150, 160), [0, 3, 5]), (range(160, 190), list(range(20))), (range(190, 190), [1, 2])]
    model, rows, G = _updated_on_gram(backend.asarray, X, y, 0.02, steps)
    G_now = G[np.ix_(rows, rows)]
    assert model.n_features_in_ == len(rows) == model.sample_ids_.size
    assert model.check_kkt(backend.asarray(G_now), y[rows]) <= 1e-9
    fitted = IncrementalSVC(kernel="precomputed", C=10.0).fit(G_now, y[rows])
    T = G[np.ix_(range(200, 260), rows)]
    f = backend.check(model.decision_function(backend.asarray(T)), (60,))
    scale = 1.0 + np.abs(fitted.dual_coef_).sum() * np.abs(G).max()
    assert np.abs(f - fitted.decision_function(T)).max() <= 1e-9 * scale
    np.testing.assert_array_equal(model.support_, fitted.support_)
    on_features = IncrementalSVC(kernel="rbf", gamma=0.02, C=10.0).fit(X[rows], y[rows])
    np.testing.assert_allclose(f, on_features.decision_function(X[200:260]), rtol=0, atol=1e-9 * scale)


def test_multiclass_updates_move_every_pair_and_classes_come_and_go():
    # Every pair's rows change with the model's points (their columns), also the pairs the
    # update does not touch; a class that appears gets its pairs, one that empties loses them.
    X, y = load_iris(return_X_y=True)
    order = np.argsort(y, kind="stable")
    X, y = X[order][::2], y[order][::2]  # 25 per class, grouped
    G = kernel_matrix(X, X, "rbf", 0.5)
    rows = list(range(10)) + list(range(25, 35))  # classes 0 and 1
    model = IncrementalSVC(kernel="precomputed", C=10.0).fit(G[np.ix_(rows, rows)], y[rows])
    for add, positions in [(list(range(50, 60)), []),  # class 2 appears
                           (list(range(10, 14)), [0, 1]),  # pair (1, 2) untouched
                           ([], list(range(8)) + list(range(28, 32)))]:  # class 0 empties
        model.update(G[np.ix_(add, rows + add)] if add else None, y[add] if add else None,
                     remove=model.sample_ids_[positions])
        rows = [r for i, r in enumerate(rows) if i not in set(positions)] + add
        fitted = IncrementalSVC(kernel="precomputed", C=10.0).fit(G[np.ix_(rows, rows)], y[rows])
        np.testing.assert_array_equal(model.classes_, np.unique(y[rows]))
        T = G[:, rows]
        assert model.check_kkt(G[np.ix_(rows, rows)], y[rows]) <= 1e-9
        np.testing.assert_allclose(model.decision_function(T), fitted.decision_function(T), rtol=0, atol=1e-8)
        np.testing.assert_array_equal(model.predict(T), fitted.predict(T))
    assert model.classes_.tolist() == [1, 2]


def test_a_saved_updated_model_loads_and_updates_on():
    X, y = breast_cancer(140)
    model, rows, G = _updated_on_gram(np.asarray, X, y, 0.02, [(range(100, 120), [0, 1])])
    buffer = io.BytesIO()
    gpath.save(model, buffer)
    buffer.seek(0)
    loaded = gpath.load(buffer)
    add = list(range(120, 140))
    for m in (model, loaded):
        m.update(G[np.ix_(add, rows + add)], y[add], remove=m.sample_ids_[:3])
    T = G[:, rows[3:] + add]
    np.testing.assert_array_equal(loaded.decision_function(T), model.decision_function(T))


def test_exact_cross_validation_on_a_gram_matrix():
    # gpath's cross_validate cuts each fold's Gram rows and columns (the model's training points,
    # in training order, after each update): the same scores as on the features and as
    # scikit-learn's cross_validate of SVC on the Gram matrix.
    from sklearn.model_selection import KFold
    from sklearn.model_selection import cross_validate as sk_cross_validate

    X, y = breast_cancer(200)
    G = kernel_matrix(X, X, "rbf", 0.02)
    cv = KFold(5, shuffle=True, random_state=0)
    on_gram = cross_validate(IncrementalSVC(kernel="precomputed", C=10.0), G, y, cv=cv, return_train_score=True,
                             return_estimator=True)
    on_features = cross_validate(IncrementalSVC(gamma=0.02, C=10.0), X, y, cv=cv, return_train_score=True)
    svc = sk_cross_validate(SVC(kernel="precomputed", C=10.0, tol=1e-12), G, y, cv=cv, return_train_score=True)
    np.testing.assert_array_equal(on_gram["test_score"], on_features["test_score"])
    np.testing.assert_array_equal(on_gram["train_score"], on_features["train_score"])
    np.testing.assert_array_equal(on_gram["test_score"], svc["test_score"])
    assert [m.last_update_.method for m in on_gram["estimator"]] == ["fit"] + ["refit"] * 4
    for (train, _), m in zip(cv.split(G), on_gram["estimator"]):
        assert m.n_features_in_ == train.size
        assert m.check_kkt() <= 1e-9


def test_a_gram_matrix_as_a_frame_names_the_points_through_updates():
    # Fitted on a DataFrame, a precomputed model's feature_names_in_ are the training points'
    # names: a frame's update must begin with them, and adds the new points' names; kernel
    # values without names drop them (the new points have none). The model saves and loads.
    pd = pytest.importorskip("pandas")
    X, y = breast_cancer(100)
    G = pd.DataFrame(kernel_matrix(X, X, "rbf", 0.02), columns=[f"p{i}" for i in range(100)])
    rows, add = list(range(60)), list(range(60, 70))
    model = IncrementalSVC(kernel="precomputed").fit(G.iloc[rows, rows], y[rows])
    model.update(G.iloc[add, rows + add], y[add], remove=model.sample_ids_[:5])
    rows = rows[5:] + add
    assert model.feature_names_in_.tolist() == [f"p{i}" for i in rows]
    np.testing.assert_array_equal(model.predict(G.iloc[:, rows]), model.predict(G.iloc[:, rows].to_numpy()))
    before = snapshot(model)
    with pytest.raises(ValueError, match="must begin with the names of the model's training points"):
        model.update(G.iloc[[70], rows + [70]].rename(columns={"p5": "q5"}), y[[70]])
    assert snapshot(model) == before
    model.update(G.iloc[[70, 71], rows + [70, 71]].to_numpy(), y[[70, 71]])
    rows += [70, 71]
    assert not hasattr(model, "feature_names_in_") and model.n_features_in_ == len(rows)
    buffer = io.BytesIO()
    gpath.save(model, buffer)
    buffer.seek(0)
    T = G.iloc[:, rows].to_numpy()
    np.testing.assert_array_equal(gpath.load(buffer).decision_function(T), model.decision_function(T))
    # gpath's exact cross-validation on such a frame: the scores of the features.
    on_frame = cross_validate(IncrementalSVC(kernel="precomputed", C=1.0), G, y, cv=4)["test_score"]
    np.testing.assert_array_equal(on_frame, cross_validate(IncrementalSVC(gamma=0.02, C=1.0), X, y, cv=4)["test_score"])


@pytest.mark.parametrize("shape", [(200, 260), (200, 150), (200, 30)])
def test_exact_cross_validation_needs_a_square_gram_matrix(shape):
    X, y = breast_cancer(260)
    G = kernel_matrix(X, X, "rbf", 0.02)[: shape[0], : shape[1]]
    with pytest.raises(ValueError, match=r"X should be a square kernel matrix.*got X of shape"):
        cross_validate(IncrementalSVC(kernel="precomputed"), G, y[: shape[0]], cv=3)
