"""Kernels against scikit-learn's pairwise kernels, and the Q-column cache."""

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer
from sklearn.svm import SVC

from gpath.cache import QColumnCache
from gpath.kernels import Kernel
from gpath.reference import kernel_matrix


@pytest.fixture(scope="module")
def data():
    X, _ = load_breast_cancer(return_X_y=True)
    return (X - X.mean(0)) / X.std(0)


@pytest.mark.parametrize("kind,gamma,degree,coef0", [
    ("linear", 1.0, 3, 0.0), ("rbf", 0.05, 3, 0.0), ("poly", 0.02, 3, 1.0), ("poly", 0.1, 2, 0.5),
])
def test_kernel_block_matches_sklearn(backend, data, kind, gamma, degree, coef0):
    X1, X2 = data[:50], data[100:170]
    k = Kernel(kind, gamma, degree, coef0)
    got = backend.check(k(backend.asarray(X1), backend.asarray(X2)), (50, 70))
    expected = kernel_matrix(X1, X2, kind, gamma, degree, coef0)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


def test_gamma_scale_and_auto_match_sklearn(backend, data):
    y = np.arange(len(data)) % 2
    svc = SVC(gamma="scale").fit(data, y)
    got = Kernel.from_params("rbf", "scale", 3, 0.0, backend.asarray(data)).gamma
    assert got == pytest.approx(svc._gamma, rel=1e-12)
    assert Kernel.from_params("rbf", "auto", 3, 0.0, backend.asarray(data)).gamma == 1 / data.shape[1]


@pytest.mark.parametrize("kernel,gamma,degree,match", [
    ("sigmoid", 1.0, 3, "kernel must be one of"),
    ("rbf", -1.0, 3, "gamma must be"),
    ("rbf", "big", 3, "gamma must be"),
    ("poly", 1.0, 0, "degree must be"),
])
def test_bad_kernel_params(data, kernel, gamma, degree, match):
    with pytest.raises(ValueError, match=match):
        Kernel.from_params(kernel, gamma, degree, 0.0, data)


def test_cache_reuses_freed_columns_and_grows(backend):
    rng = np.random.default_rng(0)
    cols = rng.standard_normal((10, 40))
    cache = QColumnCache(backend.xp, backend.device, 10, capacity=2)
    for p in range(5):
        cache.store(p, backend.asarray(cols[:, p]))
    assert cache.capacity == 8
    cache.release(1)
    assert cache.lookup(1) == cache.slot_of[1]  # still there: no recomputation
    cache.release(3)
    for p in range(5, 9):  # fill the free slots, then take the one that held point 3
        cache.store(p, backend.asarray(cols[:, p]))
    assert cache.lookup(3) is None
    coef = np.zeros(cache.capacity)
    members = [0, 1, 2, 4, 5, 6, 7, 8]
    weights = rng.standard_normal(len(members))
    for p, w in zip(members, weights):
        coef[cache.slot_of[p]] = w
    got = backend.check(cache.matvec(coef), (10,))
    np.testing.assert_allclose(got, cols[:, members] @ weights, rtol=1e-13, atol=1e-13)


def test_cache_limit_raises_when_the_margin_needs_more(backend):
    from gpath.cache import CacheFullError

    cache = QColumnCache(backend.xp, backend.device, 5, capacity=2, max_columns=3)
    for p in range(3):
        cache.store(p, backend.asarray(np.full(5, float(p))))
    assert cache.capacity == 3
    cache.release(1)
    cache.store(3, backend.asarray(np.ones(5)))  # a freed slot is reused: no growth
    with pytest.raises(CacheFullError, match="raise cache_size"):
        cache.store(4, backend.asarray(np.ones(5)))


def test_cache_compaction_keeps_the_used_columns(backend):
    rng = np.random.default_rng(3)
    cols = rng.standard_normal((6, 60))
    cache = QColumnCache(backend.xp, backend.device, 6, capacity=4)
    for p in range(60):
        cache.store(p, backend.asarray(cols[:, p]))
    for p in range(60):
        if p % 10:
            cache.release(p)
    cache.compact()
    assert cache.capacity == 16
    coef = np.zeros(cache.capacity)
    for p in range(0, 60, 10):
        coef[cache.slot_of[p]] = p
    np.testing.assert_allclose(backend.check(cache.matvec(coef)), cols[:, ::10] @ np.arange(0, 60, 10))
    assert cache.lookup(5) is None  # stale columns are gone
