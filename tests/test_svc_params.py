"""SVC's parameters and attributes on gpath's SVCs (issue 20, part 3)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.svm import SVC

from gpath import IncrementalSVC, PathError, SimpleSVC

ESTIMATORS = [SimpleSVC, IncrementalSVC]


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_svc_parameters_are_accepted_and_attributes_published(cls, capsys):
    X, y = load_iris(return_X_y=True)
    params = {k: v for k, v in SVC().get_params().items() if k != "probability"}
    model = cls(**{**params, "verbose": True}).fit(X, y)
    assert capsys.readouterr().out.count("exact solution after") == 3  # one line per pair
    assert model.n_iter_.shape == (3,) and model.n_iter_.dtype == np.int32 and np.all(model.n_iter_ > 0)
    assert model.fit_status_ == 0 and model.shape_fit_ == X.shape
    np.testing.assert_array_equal(model.predict(X), SVC().fit(X, y).predict(X))
    with pytest.raises(ValueError, match="break_ties"):
        cls(break_ties="yes").fit(X, y)


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_break_ties_takes_the_largest_ovr_value(cls):
    X, y = load_iris(return_X_y=True)
    grid = np.random.default_rng(0).uniform(X.min(0), X.max(0), size=(400, 4))
    model = cls(gamma=30.0, break_ties=True).fit(X, y)
    np.testing.assert_array_equal(model.predict(grid), model.classes_[np.argmax(model.decision_function(grid), 1)])
    with pytest.raises(ValueError, match="break_ties must be False"):
        cls(break_ties=True, decision_function_shape="ovo").fit(X, y).predict(grid)


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_coef_is_read_only(cls):
    X, y = load_iris(return_X_y=True)
    model = cls(kernel="linear").fit(X, y)
    with pytest.raises(ValueError, match="read-only"):
        model.coef_[0, 0] = 1.0


def test_incremental_max_iter_refuses_an_inexact_model():
    X, y = load_iris(return_X_y=True)
    model = IncrementalSVC(max_iter=1)
    with pytest.raises(PathError, match="max_iter=1"):
        model.fit(X, y)
    assert not hasattr(model, "dual_coef_")
    fitted = IncrementalSVC(max_iter=1000).fit(X, y)
    assert fitted.check_kkt() <= 1e-9
    fitted.update(X_add=X[:5] + 0.05, y_add=y[:5], remove=fitted.sample_ids_[-5:])
    assert fitted.n_iter_.shape == (3,) and fitted.shape_fit_ == X.shape


def test_simple_max_iter_minus_one_is_no_limit():
    X, y = load_iris(return_X_y=True)
    a, b = SimpleSVC(max_iter=-1, random_state=0).fit(X, y), SimpleSVC(random_state=0).fit(X, y)
    np.testing.assert_array_equal(a.n_iter_, b.n_iter_)
    assert a.fit_status_ == 0
    with pytest.warns(Warning, match="Solver terminated early"):
        stopped = SimpleSVC(max_iter=1, init="closest_pair").fit(X, y)
    assert stopped.fit_status_ == 1
