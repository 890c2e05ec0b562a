"""Input validation, error messages and misuse (issue 11): every rejected call says what was
expected and what came, and leaves the model exactly as it was."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import dataset, snapshot

import gpath
from gpath import IncrementalSVC


@pytest.fixture
def fitted():
    X, y = dataset("breast_cancer")
    return IncrementalSVC(C=1.0, gamma=0.05).fit(X[:200], y[:200]), X, y


# ---------------------------------------------------------------- 4: sample ids
@pytest.mark.parametrize("make_ids", [
    lambda ids: ids[0],                       # NumPy integer
    lambda ids: int(ids[0]),                  # Python integer
    lambda ids: np.uint32(ids[0]),            # another NumPy integer type
    lambda ids: ids[:2],                      # NumPy array
    lambda ids: ids[:2].tolist(),             # list
    lambda ids: tuple(ids[:2].tolist()),      # tuple
    lambda ids: range(int(ids[0]), int(ids[0]) + 2),
    lambda ids: ids[:2].astype(np.int32),
], ids=["np.int64", "int", "np.uint32", "ndarray", "list", "tuple", "range", "int32 array"])
def test_update_accepts_scalar_and_array_like_ids(fitted, make_ids):
    model, X, y = fitted
    remove = make_ids(model.sample_ids_)
    expected = np.atleast_1d(np.asarray(remove)).tolist()
    model.update(remove=remove)
    assert model.last_update_.n_removed == len(expected)
    assert not set(expected) & set(model.sample_ids_.tolist())


def test_update_accepts_ids_from_another_namespace(fitted):
    strict = pytest.importorskip("array_api_strict")
    model, X, y = fitted
    model.update(remove=strict.asarray(np.array([4, 9])))
    assert 4 not in model.sample_ids_ and 9 not in model.sample_ids_
    model.update(remove=strict.asarray(11))
    assert 11 not in model.sample_ids_


@pytest.mark.parametrize("remove,error,match", [
    (np.float64(3.0), TypeError, "remove must be integer sample ids"),
    ([[1, 2]], TypeError, r"remove must be integer sample ids.*shape \(1, 2\)"),
    (True, TypeError, "remove must be integer sample ids"),
    ("3", TypeError, "remove must be integer sample ids"),
    (np.int64(10_000), KeyError, r"not in the model: \[10000\]"),
])
def test_bad_ids_leave_the_model_unchanged(fitted, remove, error, match):
    model, X, y = fitted
    before = snapshot(model)
    with pytest.raises(error, match=match):
        model.update(remove=remove)
    assert snapshot(model) == before


# ---------------------------------------------------------------- 5: unfitted robust estimators
@pytest.mark.parametrize("method", ["predict", "score", "decision_function", "select"])
@pytest.mark.parametrize("cls", [gpath.RobustSVC, gpath.RobustSVR, gpath.CCCPRobustSVC, gpath.CCCPRobustSVR],
                         ids=lambda c: c.__name__)
def test_unfitted_robust_estimators_raise_not_fitted(cls, method):
    from sklearn.exceptions import NotFittedError

    X, y = dataset("breast_cancer")
    model = cls()
    args = (X[:20],) if method in ("predict", "decision_function") else (X[:20], y[:20])
    with pytest.raises(NotFittedError, match=f"This {cls.__name__} instance is not fitted yet"):
        getattr(model, method)(*args)
    assert model.__dict__ == cls().__dict__
