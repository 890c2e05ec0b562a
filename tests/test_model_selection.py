"""Exact model selection: k-fold CV by MID updates, the CV-error curve over C, and grid search
(local and on a Dask cluster), against exact references and scikit-learn."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import dataset
from sklearn.model_selection import GridSearchCV, GroupKFold, KFold, StratifiedKFold, cross_val_score
from sklearn.model_selection import cross_validate as sk_cross_validate
from sklearn.svm import SVC

from gpath import IncrementalSVC, SimpleSVC
from gpath._array_api import to_host
from gpath.model_selection import SVCPathCV, cross_validate, cv_error_path
from gpath.reference import exact_svc


def waterflow(n, seed=0):
    X, y = dataset("waterflow")
    rows = np.random.default_rng(seed).permutation(len(y))[:n]
    return X[rows], y[rows]


def reference_fold_errors(X, y, splits, C, gamma):
    """Per fold: held-out errors of the exact reference at C, and how many held-out decision
    values are too close to 0 (1e-6 of the largest) for the sign to be sure."""
    errors, unsure = [], 0
    for train, test in splits:
        y_pm = np.where(y[train] == 1, 1.0, -1.0)
        ref = exact_svc(X[train], y_pm, C, gamma=gamma)
        assert ref.kkt <= 1e-9
        f = ref.decision_function(X[test])
        errors.append(np.mean((f > 0) != (y[test] == 1)))
        unsure += int(np.count_nonzero(np.abs(f) <= 1e-6 * np.abs(f).max()))
    return np.array(errors), unsure


# ---------------------------------------------------------------------- cross_validate
def test_cross_validate_folds_are_exact_and_equal_scikit_learn(backend):
    X, y = waterflow(300)
    cv = StratifiedKFold(5, shuffle=True, random_state=0)
    splits = list(cv.split(X, y))
    result = cross_validate(IncrementalSVC(C=10.0, gamma=10.0), backend.asarray(X), backend.asarray(y), cv=cv,
                            return_estimator=True, return_indices=True)
    assert set(result) == {"test_score", "fit_time", "score_time", "estimator", "indices"}
    assert result["test_score"].shape == result["fit_time"].shape == (5,)
    ref_errors, unsure = reference_fold_errors(X, y, splits, 10.0, 10.0)
    assert unsure == 0
    np.testing.assert_allclose(result["test_score"], 1.0 - ref_errors, rtol=0, atol=1e-12)
    # scikit-learn's cross_validate with SimpleSVC (fitted per fold) gives the same scores.
    sk = sk_cross_validate(SimpleSVC(C=10.0, gamma=10.0), X, y, cv=cv)
    np.testing.assert_array_equal(result["test_score"], sk["test_score"])
    # Each fold model is the exact model of its training folds (in its own row order).
    for model, (train, _) in zip(result["estimator"], splits):
        ids = model.sample_ids_
        assert model.check_kkt() <= 1e-9 and len(ids) == len(train)
        y_pm = np.where(y[train] == 1, 1.0, -1.0)
        ref = exact_svc(X[train], y_pm, 10.0, gamma=10.0)
        f = to_host(model.decision_function(backend.asarray(X[train])))
        assert np.abs(f - ref.decision_function(X[train])).max() <= 1e-7 * np.abs(f).max()
    for mine, (train, test) in zip(zip(result["indices"]["train"], result["indices"]["test"]), splits):
        np.testing.assert_array_equal(mine[0], train)
        np.testing.assert_array_equal(mine[1], test)


def test_cross_validate_folds_that_refit_gather_their_kernel_rows_from_rows_computed_once(monkeypatch):
    import gpath._smo

    X, y = waterflow(300)
    gathered = []
    subset = gpath._smo.KernelRows.subset

    def spy(self, index, *args):
        gathered.append(index.copy())
        return subset(self, index, *args)

    monkeypatch.setattr(gpath._smo.KernelRows, "subset", spy)
    # Unshuffled folds: their class counts differ, so the balanced class weights differ and
    # every fold is a fit of its own rows (no update moves every box).
    cv = KFold(5)
    splits = list(cv.split(X, y))
    est = IncrementalSVC(C=10.0, gamma=10.0, class_weight="balanced")
    ours = cross_validate(est, X, y, cv=cv, return_estimator=True)
    assert len(gathered) == len(splits)
    for index, (train, _), model in zip(gathered, splits, ours["estimator"]):
        np.testing.assert_array_equal(index, train)
        assert model.check_kkt() <= 1e-9
    theirs = sk_cross_validate(SVC(C=10.0, gamma=10.0, class_weight="balanced", tol=1e-12), X, y, cv=cv)
    np.testing.assert_array_equal(ours["test_score"], theirs["test_score"])
    assert gpath._smo._shared.get() is None  # (only within cross_validate)


def test_cross_validate_folds_whose_update_refits_start_from_smo_on_rows_gathered_in_the_refit_order(monkeypatch):
    import gpath._smo

    X, y = dataset("bananas")
    rows = np.random.default_rng(0).permutation(len(y))[:2500]
    X, y = X[rows], y[rows]
    gathered = []
    subset = gpath._smo.KernelRows.subset
    monkeypatch.setattr(gpath._smo.KernelRows, "subset",
                        lambda self, index, *args: gathered.append(index.copy()) or subset(self, index, *args))
    # Every refit starts from SMO, whose rows are computed already (Bananas' margin sets are
    # small: without them, the refits would start from the fold's previous α, without SMO).
    cv = KFold(5, shuffle=True, random_state=0)
    ours = cross_validate(IncrementalSVC(C=10.0, gamma=1.0), X, y, cv=cv, return_estimator=True)
    assert [m.last_update_.method for m in ours["estimator"]] == ["fit"] + ["refit"] * 4
    assert len(gathered) == 5
    for index, (train, _), model in zip(gathered, cv.split(X, y), ours["estimator"]):
        np.testing.assert_array_equal(np.sort(index), train)
        np.testing.assert_array_equal(model.state_.X, X[index])  # the refit's rows, in its order
        assert model.check_kkt() <= 1e-9
    theirs = sk_cross_validate(SVC(C=10.0, gamma=1.0, tol=1e-12), X, y, cv=cv)
    np.testing.assert_array_equal(ours["test_score"], theirs["test_score"])


def test_cross_validate_options_and_fallback():
    X, y = waterflow(200, seed=1)
    groups = np.arange(len(y)) % 4
    scoring = ["accuracy", "balanced_accuracy"]
    mine = cross_validate(IncrementalSVC(C=1.0, gamma="scale"), X, y, groups=groups, cv=GroupKFold(4),
                          scoring=scoring, return_train_score=True, return_estimator=True)
    assert {"test_accuracy", "test_balanced_accuracy", "train_accuracy", "train_balanced_accuracy"} <= set(mine)
    # gamma="scale" is resolved once, on the whole X: every fold has the same kernel.
    gammas = {m.kernel_.gamma for m in mine["estimator"]}
    assert gammas == {1.0 / (X.shape[1] * X.var())}
    sk = sk_cross_validate(SimpleSVC(C=1.0, gamma=gammas.pop()), X, y, groups=groups, cv=GroupKFold(4),
                           scoring=scoring, return_train_score=True)
    for key in ("test_accuracy", "test_balanced_accuracy", "train_accuracy"):
        np.testing.assert_array_equal(mine[key], sk[key])
    # Anything but an IncrementalSVC goes to scikit-learn's cross_validate.
    ours = cross_validate(SVC(C=3.0), X, y, cv=3)
    theirs = sk_cross_validate(SVC(C=3.0), X, y, cv=3)
    np.testing.assert_array_equal(ours["test_score"], theirs["test_score"])


def test_cross_validate_of_a_multiclass_model_updates_its_pairs_exactly():
    # Every fold's one-vs-one model by an update of the fold before, each the exact model of its
    # training rows; a fold without one of the classes is fitted.
    from sklearn.datasets import load_wine

    X, y = load_wine(return_X_y=True)
    X = (X - X.mean(0)) / X.std(0)
    splits = list(StratifiedKFold(4, shuffle=True, random_state=0).split(X, y))
    no_class_2 = np.flatnonzero(y != 2)
    splits.insert(2, (no_class_2[::2], no_class_2[1::2]))  # two classes only
    est = IncrementalSVC(C=10.0, gamma=0.05)
    result = cross_validate(est, X, y, cv=splits, return_estimator=True)
    ways = []
    for model, (train, test), score in zip(result["estimator"], splits, result["test_score"]):
        fresh = IncrementalSVC(C=10.0, gamma=0.05).fit(X[train], y[train])
        np.testing.assert_array_equal(model.classes_, np.unique(y[train]))
        assert model.check_kkt() <= 1e-9
        f, g = model.decision_function(X), fresh.decision_function(X)
        assert np.abs(f - g).max() <= 1e-7 * np.abs(g).max()
        assert score == np.mean(fresh.predict(X[test]) == y[test])
        ways.append(model.last_update_.method)
    assert ways.count("fit") == 3 and "path" in ways  # the first fold, the two-class fold and the one after it
    sk = sk_cross_validate(IncrementalSVC(C=10.0, gamma=0.05), X, y, cv=splits)
    np.testing.assert_array_equal(result["test_score"], sk["test_score"])


def test_cross_validate_refuses_bad_input():
    X, y = waterflow(60, seed=2)
    order = np.argsort(y, kind="stable")
    with pytest.raises(ValueError, match=r"training fold \d holds only the class"):
        cross_validate(IncrementalSVC(), X[order], y[order], cv=KFold(2))
    with pytest.raises(ValueError, match="return_estimator must be a bool"):
        cross_validate(IncrementalSVC(), X, y, return_estimator="yes")
    with pytest.raises(ValueError, match="two classes"):
        cross_validate(IncrementalSVC(), X, np.zeros(len(y)))


# ---------------------------------------------------------------------- the CV error curve
def test_cv_error_path_equals_reference_errors_at_random_C(backend):
    X, y = waterflow(200, seed=3)
    cv = StratifiedKFold(4, shuffle=True, random_state=1)
    splits = list(cv.split(X, y))
    curve = cv_error_path(backend.asarray(X), backend.asarray(y), cv=cv, C_min=0.1, C_max=100.0, gamma=10.0)
    assert curve.Cs[0] == 0.1 and curve.Cs[-1] == 100.0 and np.all(np.diff(curve.Cs) > 0)
    assert curve.error.shape == (curve.Cs.size - 1,) and curve.fold_errors.shape == (4, curve.Cs.size - 1)
    np.testing.assert_allclose(curve.error, curve.fold_errors.mean(axis=0))
    assert curve.best_error == curve.error.min() and curve.gamma == 10.0 and curve.n_breakpoints.shape == (4,)
    i = int(np.argmin(curve.error))
    assert curve.Cs[i] < curve.best_C < curve.Cs[i + 1]
    for C in [curve.best_C, *np.exp(np.random.default_rng(5).uniform(np.log(0.1), np.log(100.0), 6))]:
        ref_errors, unsure = reference_fold_errors(X, y, splits, C, 10.0)
        j = int(np.searchsorted(curve.Cs, C, side="right")) - 1
        counts = np.array([len(te) for _, te in splits])
        diff = np.abs(np.round(curve.fold_errors[:, j] * counts) - np.round(ref_errors * counts)).sum()
        assert diff <= unsure, (C, curve.fold_errors[:, j], ref_errors)


def test_cv_error_path_checks_each_folds_path_from_scratch(monkeypatch):
    # Each fold's C path ends checked from scratch at C_max, as SVCPath's: the measure is the
    # model's (SVCPath.check_kkt), and a fold beyond 1e-9 raises rather than give its errors.
    from gpath import PathError, cpath

    X, y = waterflow(80, seed=2)
    measured = []
    kkt_at = cpath.kkt_at

    def recording(*args):
        measured.append(kkt_at(*args))
        return measured[-1]

    monkeypatch.setattr(cpath, "kkt_at", recording)
    cv_error_path(X, y, cv=3, C_min=0.1, C_max=100.0, gamma=10.0)
    assert len(measured) == 3 and max(measured) <= 1e-12
    monkeypatch.setattr(cpath, "kkt_at", lambda *args: 1e-6)
    with pytest.raises(PathError, match="the path at C_max=100 violates the KKT conditions by 1e-06"):
        cv_error_path(X, y, cv=3, C_min=0.1, C_max=100.0, gamma=10.0)


def test_a_fold_whose_decremental_start_is_not_exact_starts_from_scratch(backend):
    # Each fold starts from the solution on all rows with its held-out rows removed by one
    # decremental path. On breast cancer with a linear kernel and features of size 1e6 that
    # path missed the fold's optimum in 3 of 5 folds, and the first of their C paths ended
    # 2.5e-2 of its scale from the KKT conditions at C_max: cv_error_path raised a PathError
    # where SVCPath fits each fold. A start beyond the check now starts from scratch (SimpleSVM on
    # the fold's rows), and every fold's errors equal those of SVCPath fitted on its rows.
    from sklearn.datasets import load_breast_cancer

    from gpath import SVCPath

    X, y = load_breast_cancer(return_X_y=True)
    X = (X[:120] - X[:120].mean(0)) / X[:120].std(0) * 1e6
    y = y[:120]
    splits = list(StratifiedKFold(5).split(X, y))
    out = cv_error_path(backend.asarray(X), y, cv=splits, C_min=10.0, C_max=1000.0, kernel="linear")
    for C in (20.0, 150.0, 900.0):
        i = int(np.searchsorted(out.Cs, C, side="right")) - 1
        for fold, (train, test) in enumerate(splits):
            path = SVCPath(C_min=10.0, C_max=1000.0, kernel="linear").fit(X[np.sort(train)], y[np.sort(train)])
            assert path.check_kkt(C=C) <= 1e-9
            expected = np.mean(path.predict(X[test], C=C) != y[test])
            assert out.fold_errors[fold, i] == pytest.approx(expected, abs=1e-15)


def test_cv_error_path_refuses_bad_ranges():
    X, y = waterflow(60, seed=4)
    with pytest.raises(ValueError, match="C_min must be <= C_max"):
        cv_error_path(X, y, C_min=10.0, C_max=1.0)
    with pytest.raises(ValueError, match="C_max must be a finite real number > 0"):
        cv_error_path(X, y, C_min=1.0, C_max=-1.0)
    with pytest.raises(ValueError, match="gamma"):
        cv_error_path(X, y, C_min=1.0, C_max=2.0, gamma="wide")


# ---------------------------------------------------------------------- grid search
@pytest.fixture(scope="module")
def grid_problem():
    X, y = waterflow(300, seed=6)
    cv = StratifiedKFold(5, shuffle=True, random_state=2)
    gammas = [1.0, 10.0, 30.0]
    return X, y, cv, gammas


@pytest.fixture(scope="module")
def local_search(grid_problem):
    X, y, cv, gammas = grid_problem
    return SVCPathCV(C_min=0.1, C_max=100.0, gammas=gammas, cv=cv).fit(X, y)


def test_svcpathcv_is_never_worse_than_grid_search(grid_problem, local_search):
    X, y, cv, gammas = grid_problem
    search = local_search
    grid = GridSearchCV(SVC(tol=1e-10), {"C": np.logspace(-1, 2, 8), "gamma": gammas}, cv=cv).fit(X, y)
    assert search.best_score_ >= grid.best_score_
    # The claimed CV accuracy is the one of the exact models at (best_C_, best_gamma_).
    check = cross_val_score(SVC(C=search.best_C_, gamma=search.best_gamma_, tol=1e-10), X, y, cv=cv)
    assert check.mean() == pytest.approx(search.best_score_, abs=1e-12)
    assert len(search.cv_error_paths_) == 3 and search.best_gamma_ == gammas[search.best_index_]
    best = search.best_estimator_
    assert isinstance(best, IncrementalSVC) and best.C == search.best_C_ and best.kernel_.gamma == search.best_gamma_
    np.testing.assert_array_equal(search.predict(X[:20]), best.predict(X[:20]))


def test_svcpathcv_on_every_backend_equals_numpy(backend):
    """On every backend the claimed CV accuracy is that of the exact reference models at
    (best_C_, best_gamma_); on every backend but NumPy the search also equals NumPy's."""
    X, y = waterflow(150, seed=9)
    cv = StratifiedKFold(3, shuffle=True, random_state=4)
    mine = SVCPathCV(C_min=0.1, C_max=100.0, gammas=[1.0, 10.0], cv=cv).fit(backend.asarray(X), backend.asarray(y))
    ref_errors, unsure = reference_fold_errors(X, y, list(cv.split(X, y)), mine.best_C_, mine.best_gamma_)
    assert unsure == 0
    assert 1.0 - mine.best_score_ == pytest.approx(ref_errors.mean(), abs=1e-12)
    if backend.name != "numpy":  # NumPy against itself would compare a run with its own copy
        ref = SVCPathCV(C_min=0.1, C_max=100.0, gammas=[1.0, 10.0], cv=cv).fit(X, y)
        assert (mine.best_gamma_, mine.best_score_) == (ref.best_gamma_, ref.best_score_)
        assert mine.best_C_ == pytest.approx(ref.best_C_, rel=1e-9)
        for a, b in zip(mine.cv_error_paths_, ref.cv_error_paths_, strict=True):
            np.testing.assert_allclose(a.Cs, b.Cs, rtol=1e-9)
            np.testing.assert_array_equal(a.error, b.error)
    backend.check(mine.decision_function(backend.asarray(X[:4])), (4,))


def test_svcpathcv_on_a_dask_cluster_equals_the_local_run():
    """joblib's Dask backend on a LocalCluster of 2 worker processes (as CI runs it)."""
    distributed = pytest.importorskip("distributed")
    import joblib

    X, y = waterflow(160, seed=8)
    cv = StratifiedKFold(3, shuffle=True, random_state=3)
    local = SVCPathCV(C_min=0.1, C_max=100.0, gammas=[1.0, 10.0], cv=cv).fit(X, y)
    import dask

    # Forked workers start in a fraction of a second (spawned ones import everything anew).
    with dask.config.set({"distributed.worker.multiprocessing-method": "fork"}), \
            distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client, joblib.parallel_backend("dask"):
        remote = SVCPathCV(C_min=0.1, C_max=100.0, gammas=[1.0, 10.0], cv=cv).fit(X, y)
        assert len(client.scheduler_info()["workers"]) == 2
    assert (remote.best_C_, remote.best_gamma_, remote.best_score_) == (local.best_C_, local.best_gamma_,
                                                                         local.best_score_)
    for a, b in zip(remote.cv_error_paths_, local.cv_error_paths_):
        np.testing.assert_array_equal(a.Cs, b.Cs)
        np.testing.assert_array_equal(a.error, b.error)


def test_svcpathcv_refuses_bad_parameters():
    X, y = waterflow(60, seed=7)
    for kw, needle in [(dict(gammas=[]), "gammas"), (dict(gammas="scale"), "gammas"), (dict(gammas=[1.0, -1.0]), r"gammas\[1\]: gamma must be"),
                       (dict(kernel="sigmoid"), "kernel='sigmoid' is taken by SimpleSVC and IncrementalSVC"),
                       (dict(refit="no"), "refit"), (dict(C_min=0.0), "C_min")]:
        with pytest.raises(ValueError, match=needle):
            SVCPathCV(**kw).fit(X, y)
    search = SVCPathCV(C_min=1.0, C_max=10.0, gammas=[10.0], cv=3, refit=False).fit(X, y)
    with pytest.raises(AttributeError, match="refit=False"):
        search.predict(X)
