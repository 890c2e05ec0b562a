"""Exact at every scale (issue 11): large C, features far from the origin or of huge size."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_exact, dataset

from gpath import CCCPRobustSVC, IncrementalSVC, RobustSVC, RobustSVR, SimpleSVC


@pytest.mark.parametrize("C", [1e4, 1e6, 1e8])
def test_large_C_fit_and_updates_on_real_data(C):
    # y f sums terms up to C·max K: the KKT checks are relative to that scale, so large C fits
    # and updates end exact instead of failing an absolute tolerance.
    X, y = dataset("waterflow")
    model = IncrementalSVC(C=C, gamma=0.1).fit(X[:300], y[:300])
    assert model.check_kkt() <= 1e-9
    for step in range(3):
        lo = 300 + 30 * step
        model.update(X_add=X[lo : lo + 30], y_add=y[lo : lo + 30], remove=model.sample_ids_[:30])
        assert model.check_kkt() <= 1e-9
    reference = SimpleSVC(C=C, gamma=0.1).fit(X[90:390], y[90:390])
    f, f_ref = model.decision_function(X[90:390]), reference.decision_function(X[90:390])
    cond = np.linalg.cond(model.state_.factor.matrix)
    assert np.abs(f - f_ref).max() <= max(1e-9, 100 * np.finfo(float).eps * cond) * np.abs(f_ref).max()


ESTIMATORS = {
    "IncrementalSVC": lambda: IncrementalSVC(C=10.0, gamma=0.05),
    "SimpleSVC": lambda: SimpleSVC(C=10.0, gamma=0.05),
    "RobustSVC": lambda: RobustSVC(C=1.0, gamma=0.05, path="s"),
    "CCCPRobustSVC": lambda: CCCPRobustSVC(C=1.0, gamma=0.05),
    "RobustSVR": lambda: RobustSVR(C=1.0, gamma=0.05, s=0.5),
}


@pytest.mark.parametrize("offset", [1e6, 1e9])
@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_data_far_from_the_origin_give_the_model_of_the_data_moved_back(name, offset):
    # RBF models are shift invariant: data offset by 1e6 or 1e9 (timestamps, map coordinates)
    # give the model of the same (rounded) data moved back, without cancellation in ‖x − z‖².
    X, y = dataset("breast_cancer")
    X, y = X[:250], (y[:250] if name != "RobustSVR" else X[:250, 0])
    far = X + offset
    back = far - offset
    values = lambda model, X: np.asarray(getattr(model, "decision_function", model.predict)(X))
    f_far = values(ESTIMATORS[name]().fit(far, y), far)
    f_back = values(ESTIMATORS[name]().fit(back, y), back)
    assert np.abs(f_far - f_back).max() <= 1e-9 * np.abs(f_back).max()


@pytest.mark.parametrize("method", ["multiple", "single"])
def test_huge_linear_features_fit_and_update_exactly(method):
    # Features of size 1e12 with a linear kernel: K ~ 1e24, α ~ 1e-24. The path's float64 steps
    # cannot resolve every event there; the update ends exact all the same (SimpleSVM finishes
    # the path's sets) and equals a fit from scratch.
    X, y = dataset("breast_cancer")
    X, y = X[:300] * 1e12, y[:300]
    model = IncrementalSVC(C=10.0, kernel="linear", method=method).fit(X[:250], y[:250])
    assert model.check_kkt() <= 1e-9 and model.state_.active.size > 0
    model.update(X_add=X[250:], y_add=y[250:], remove=np.arange(30))
    assert model.check_kkt() <= 1e-9
    scratch = SimpleSVC(C=10.0, kernel="linear").fit(X[30:], y[30:])
    f, f_ref = model.decision_function(X[30:]), scratch.decision_function(X[30:])
    assert np.abs(f - f_ref).max() <= 1e-9 * np.abs(f_ref).max()
    assert_exact(model, X[30:], y[30:], rtol=1e-6)
