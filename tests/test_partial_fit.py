"""IncrementalSVC.partial_fit as scikit-learn's SGDClassifier (issue 13.4): with ``classes``,
calls before the first fit that hold one class are kept until a fit is possible, so that
river's scikit-learn wrapper trains from the first sample on."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_exact, dataset, snapshot
from sklearn.exceptions import NotFittedError
from test_multiclass import assert_pairs_exact, real

from gpath import IncrementalSVC


def test_single_class_calls_are_kept_until_a_fit_is_possible():
    X, y = dataset("breast_cancer")
    zeros, ones = np.flatnonzero(y == 0)[:30], np.flatnonzero(y == 1)[:30]
    model = IncrementalSVC(C=1.0, gamma=0.05)
    model.partial_fit(X[zeros[:10]], y[zeros[:10]], classes=[0, 1])
    model.partial_fit(X[zeros[10:]], y[zeros[10:]], classes=[0, 1])
    with pytest.raises(NotFittedError):
        model.predict(X[:3])
    assert not hasattr(model, "classes_")
    model.partial_fit(X[ones], y[ones])  # classes may be left out after the first call
    rows = np.r_[zeros, ones]
    np.testing.assert_array_equal(model.sample_ids_, np.arange(60))
    assert_exact(model, X[rows], y[rows])
    fitted = IncrementalSVC(C=1.0, gamma=0.05).fit(X[rows], y[rows])
    np.testing.assert_array_equal(model.alpha_, fitted.alpha_)
    model.partial_fit(X[100:110], y[100:110], classes=[1, 0])
    assert_exact(model, X[np.r_[rows, 100:110]], y[np.r_[rows, 100:110]])


def test_declared_classes_join_as_they_arrive(backend):
    X, y = real("wine")
    model = IncrementalSVC(C=5.0, gamma=0.1)
    order = np.r_[np.flatnonzero(y == 1)[:20], np.flatnonzero(y == 0)[:20], np.flatnonzero(y == 2)[:20]]
    for lo in range(0, 60, 10):
        rows = order[lo : lo + 10]
        model.partial_fit(backend.asarray(X[rows]), backend.asarray(y[rows]), classes=backend.asarray([0, 1, 2]))
        if lo == 10:
            assert not hasattr(model, "classes_")  # 20 points, all of class 1
        if lo == 20:
            np.testing.assert_array_equal(model.classes_, [0, 1])  # classes_: the classes seen so far
    np.testing.assert_array_equal(model.classes_, [0, 1, 2])
    backend.check(model.dual_coef_, (2, len(model.support_)))
    assert_pairs_exact(model, X[order], y[order], X_device=backend.asarray(X[order]))


def test_labels_outside_the_declared_classes_are_refused():
    X, y = real("wine")
    model = IncrementalSVC(gamma=0.1)
    model.partial_fit(X[:5], y[:5], classes=[0, 1])
    before = snapshot(model)
    with pytest.raises(ValueError, match=r"y holds labels \[2\] that are not in classes=\[0, 1\]"):
        model.partial_fit(X[-5:], y[-5:], classes=[0, 1])
    with pytest.raises(ValueError, match=r"classes=\[0, 1, 2\] differ from the classes \[0, 1\] given to the first"):
        model.partial_fit(X[-5:], y[-5:], classes=[0, 1, 2])
    with pytest.raises(ValueError, match="X has 5 features, but IncrementalSVC is expecting 13"):
        model.partial_fit(X[5:10, :5], y[5:10], classes=[0, 1])
    assert snapshot(model) == before
    model.partial_fit(X[60:70], y[60:70], classes=[0, 1])  # class 1 arrives: fitted
    before = snapshot(model)
    with pytest.raises(ValueError, match=r"y holds labels \[2\] that are not in classes=\[0, 1\]"):
        model.partial_fit(X[-5:], y[-5:])
    assert snapshot(model) == before


def test_without_classes_the_first_call_must_hold_two():
    X, y = dataset("breast_cancer")
    model = IncrementalSVC(gamma=0.05)
    with pytest.raises(ValueError, match="at least two classes for an SVC; got 1 class"):
        model.partial_fit(X[y == 0][:10], y[y == 0][:10])
    assert model.__dict__ == IncrementalSVC(gamma=0.05).__dict__


def test_partial_fit_with_sample_weight():
    X, y = dataset("breast_cancer")
    w = np.linspace(0.0, 2.0, 140)
    model = IncrementalSVC(C=1.0, gamma=0.05)
    model.partial_fit(X[y == 0][:20], y[y == 0][:20], classes=[0, 1], sample_weight=w[:20])
    model.partial_fit(X[y == 1][:20], y[y == 1][:20], sample_weight=w[20:40])
    rows = np.r_[np.flatnonzero(y == 0)[:20], np.flatnonzero(y == 1)[:20]]
    model.partial_fit(X[200:300], y[200:300], sample_weight=w[40:])
    rows = np.r_[rows, 200:300]
    assert_pairs_exact(model, X[rows], y[rows], weights=w)


def test_river_trains_the_wrapped_model():
    pytest.importorskip("river")
    from river import compat

    X, y = real("wine")
    order = np.r_[np.flatnonzero(y == 2)[:5], np.random.default_rng(0).permutation(len(y))]
    order = order[np.r_[np.arange(5), 5 + np.flatnonzero(~np.isin(order[5:], order[:5]))]]
    learner = compat.convert_sklearn_to_river(IncrementalSVC(C=5.0, gamma=0.1), classes=[0, 1, 2])
    correct = 0
    for n, r in enumerate(order):
        x = {f"f{j}": float(v) for j, v in enumerate(X[r])}
        correct += learner.predict_one(x) == y[r] if n >= 40 else 0
        learner.learn_one(x, int(y[r]))
    model = learner.estimator
    np.testing.assert_array_equal(model.classes_, [0, 1, 2])
    assert correct / (len(order) - 40) > 0.9  # online accuracy of the exact SVC
    assert_pairs_exact(model, X[order], y[order])


def test_classes_given_after_fit_are_kept():
    X, y = real("wine")
    model = IncrementalSVC(gamma=0.1).fit(X[y < 2], y[y < 2])
    with pytest.raises(ValueError, match=r"classes=\[0, 2\] differ from the model's \[0, 1\]: they lack \[1\]"):
        model.partial_fit(X[-3:], y[-3:], classes=[0, 2])
    model.partial_fit(X[-3:], y[-3:], classes=[0, 1, 2])
    np.testing.assert_array_equal(model.classes_, [0, 1, 2])
    with pytest.raises(ValueError, match=r"y holds labels \[7\] that are not in classes=\[0, 1, 2\]"):
        model.partial_fit(X[-3:], np.full(3, 7))
