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


@pytest.mark.parametrize("make", [lambda C: RobustSVC(C=C, kernel="linear", path="s"),
                                  lambda C: RobustSVC(C=C, kernel="linear", path="theta"),
                                  lambda C: CCCPRobustSVC(C=C, kernel="linear")], ids=["OP-s", "OP-theta", "CCCP"])
def test_robust_paths_are_equivariant_under_feature_scale(make):
    # The ridge is relative to the kernel's scale, so features multiplied by s give the model
    # of C·s² on the original features (K and the ridge both scale by s²); at s = 1e12 an
    # absolute ridge vanished in float64 next to K and Q_EE was singular (SingularMarginError).
    X, y = dataset("breast_cancer")
    X, y = X[:250], y[:250]
    f_small = make(1e6).fit(X, y).decision_function(X)
    f_scaled = make(1.0).fit(X * 1e3, y).decision_function(X * 1e3)
    # Agreement to the round-off that C = 1e6 leaves (the condition of its margin matrix).
    np.testing.assert_allclose(f_scaled, f_small, rtol=0, atol=1e-5 * np.abs(f_small).max())
    # At s = 1e12 (the problem of C = 1e24 on X) the fit no longer fails, and it is exact: the
    # start's μ-path removes an offset of 1e26 and leaves margins of pure round-off (a drift of
    # 1e12 where their scale is 1e6), which two or three repairs of the margins bring back.
    huge = make(1.0).fit(X * 1e12, y)
    assert max(huge.check_kkt(at=float(at)) for at in np.unique(huge.path_.params)) <= 1e-12
    # In its box to round-off relative to C, at check_kkt's tolerance for the feasibility rule
    # (1e-9 of C): the α of its margin points come from solves of a matrix of entries 1e24,
    # 8e-11 below 0 on an AMD EPYC's OpenBLAS (Haswell kernels), within 1e-12 of the box on
    # Intel's (SkylakeX).
    assert np.all((huge.path_.alpha >= -1e-9) & (huge.path_.alpha <= 1.0 + 1e-9))
