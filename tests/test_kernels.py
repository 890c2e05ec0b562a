"""Kernels against scikit-learn's pairwise kernels."""

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer
from sklearn.svm import SVC

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
