"""The breakpoint-count law of section 3.4 on the paper's artificial data (section 4.1).

Adding (or removing) m points that end (or start) at α = C, MID-SVM follows the diagonal of
the m-dimensional cube and SID-SVM its edges, so their breakpoint counts are in the ratio
√m : m (Karasuyama & Takeuchi 2009, section 3.4; figure 5).
"""

import numpy as np
import pytest

from gpath import IncrementalSVC
from gpath.datasets import make_two_gaussians


@pytest.fixture(scope="module")
def problem():
    X, y = make_two_gaussians(540, random_state=1)
    full = IncrementalSVC(C=1.0, gamma=1.0).fit(X, y)
    at_c = np.flatnonzero(full.alpha_ == 1.0)
    assert len(at_c) >= 40
    return X, y, at_c


def _breakpoints(X, y, base, add, remove, method):
    model = IncrementalSVC(C=1.0, gamma=1.0, method=method).fit(X[base], y[base])
    kw = dict(X_add=X[add], y_add=y[add]) if len(add) else {}
    model.update(**kw, remove=np.flatnonzero(np.isin(base, remove)))
    assert model.check_kkt() <= 1e-9
    return model.last_update_.n_breakpoints


@pytest.mark.parametrize("scenario", ["add", "remove"])
def test_mid_to_sid_breakpoints_follow_sqrt_m_law(problem, scenario):
    X, y, at_c = problem
    ratios = {}
    for m in (1, 4, 16, 36):
        pts = at_c[:m]
        if scenario == "add":
            base, add, remove = np.setdiff1d(np.arange(len(y)), pts), pts, pts[:0]
        else:
            base, add, remove = np.arange(len(y)), pts[:0], pts
        mid = _breakpoints(X, y, base, add, remove, "multiple")
        sid = _breakpoints(X, y, base, add, remove, "single")
        ratios[m] = mid / sid
    assert ratios[1] == 1.0  # one point: the two methods are the same algorithm
    for m in (4, 16, 36):
        # √m : m within a factor 1.6 either way (the law assumes evenly spread breakpoints).
        assert 1 / 1.6 <= ratios[m] * np.sqrt(m) <= 1.6, ratios
    assert ratios[36] < ratios[4]
