"""Property-based tests (hypothesis): random small problems, duplicates and ties included."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from robust_check import gram, svc_violation

from gpath import IncrementalSVC, RobustSVC
from gpath.reference import kernel_matrix


def _kkt(X, y_pm, alpha, b, C, gamma, ridge):
    """Independent KKT check of a C-SVC with bias (fresh kernel values, float64)."""
    K = kernel_matrix(X, X, "rbf", gamma) + ridge * np.eye(len(y_pm))
    yf = y_pm * (K @ (y_pm * alpha) + b)
    g = yf - 1.0
    stat = np.concatenate([np.where(alpha < C, -g, -np.inf), np.where(alpha > 0, g, -np.inf)])
    feas = max(abs(y_pm @ alpha), np.max(-alpha), np.max(alpha - C)) / C
    return float(max(stat.max(), feas, 0.0))


@st.composite
def problems(draw):
    n = draw(st.integers(4, 24))
    # Points on a coarse grid: duplicates, duplicates with opposite labels and ties happen.
    X = np.array(draw(st.lists(st.tuples(st.integers(-3, 3), st.integers(-3, 3)), min_size=n, max_size=n)),
                 dtype=np.float64) / 2
    y = np.array(draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)))
    y[0], y[1] = 0, 1
    C = draw(st.sampled_from([0.1, 1.0, 10.0, 1000.0]))
    gamma = draw(st.sampled_from([0.1, 1.0, 5.0]))
    ops = draw(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4), st.integers(0, 2**31 - 1)), max_size=5))
    pool = np.array(draw(st.lists(st.tuples(st.integers(-3, 3), st.integers(-3, 3)), min_size=20, max_size=20)),
                    dtype=np.float64) / 2
    pool_y = np.array(draw(st.lists(st.integers(0, 1), min_size=20, max_size=20)))
    return X, y, C, gamma, ops, pool, pool_y


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems(), st.sampled_from(["multiple", "single"]))
def test_updated_model_is_the_batch_solution(problem, method):
    X, y, C, gamma, ops, pool, pool_y = problem
    model = IncrementalSVC(C=C, gamma=gamma, method=method).fit(X, y)
    data = {i: (X[i], y[i]) for i in range(len(y))}
    next_id, used = len(y), 0
    for n_add, n_remove, seed in ops:
        rng = np.random.default_rng(seed)
        add = np.arange(used, min(used + n_add, len(pool_y)))
        used += len(add)
        ids = np.array(list(data))
        remove = rng.choice(ids, min(n_remove, len(ids) - 2), replace=False)
        labels_left = {data[i][1] for i in ids if i not in remove} | set(pool_y[add].tolist())
        if labels_left != {0, 1}:
            continue
        kw = dict(X_add=pool[add], y_add=pool_y[add]) if len(add) else {}
        model.update(**kw, remove=remove)
        for i in remove:
            del data[int(i)]
        for j in add:
            data[next_id] = (pool[j], pool_y[j])
            next_id += 1
    np.testing.assert_array_equal(model.sample_ids_, list(data))
    Xc = np.array([data[i][0] for i in data])
    yc = np.where(np.array([data[i][1] for i in data]) == 1, 1.0, -1.0)
    # With ridge > 0 the dual is strictly convex: a KKT point is the batch solution.
    assert _kkt(Xc, yc, model.alpha_, float(model.intercept_[0]), C, model.kernel_.gamma, model.ridge) <= 1e-9


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems(), st.sampled_from(["theta", "s"]))
def test_outlier_path_ends_locally_optimal(problem, path):
    X, y, C, gamma, _, _, _ = problem
    model = RobustSVC(C=C, gamma=gamma, path=path).fit(X, y)
    p = model.path_
    K = gram(model, X)
    y_pm = np.where(y == 1, 1.0, -1.0)
    theta, s = (0.0, p.s) if path == "theta" else (0.0, p.params[-1])
    v, _ = svc_violation(p.alpha[-1], K, y_pm, C, theta, s, strict=True)
    assert v <= 1e-9
    for i in np.flatnonzero(p.discontinuous):
        assert p.objective[i] < p.objective[i - 1]
