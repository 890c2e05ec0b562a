"""An exact C-SVC reference that does not use gpath's path code, for tests, the demo and
the benchmarks.

LIBSVM (scikit-learn's SVC with a precomputed kernel ``K + ridge·I`` and ``tol=1e-12``)
supplies the index sets; its α are only float32-precise (LIBSVM keeps kernel values in
float32), so the margin equations for those sets are re-solved here in float64 and the
result's own KKT conditions are reported, so that a test can tell a wrong reference from a
wrong model.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.metrics.pairwise import linear_kernel, polynomial_kernel, rbf_kernel
from sklearn.svm import SVC


def kernel_matrix(X1, X2, kernel, gamma, degree=3, coef0=0.0):
    """Independent float64 kernel (scikit-learn's pairwise kernels)."""
    if kernel == "rbf":
        return rbf_kernel(X1, X2, gamma=gamma)
    if kernel == "linear":
        return linear_kernel(X1, X2)
    return polynomial_kernel(X1, X2, degree=degree, gamma=gamma, coef0=coef0)


__all__ = ["Reference", "exact_svc", "kernel_matrix", "kkt_violation"]


@dataclass
class Reference:
    """The re-solved solution: α (n,), bias b, and its own KKT violation."""

    alpha: np.ndarray  # (n,)
    b: float
    kkt: float  # largest KKT violation of the re-solved solution (units of y f)
    X: np.ndarray
    y: np.ndarray  # ±1
    params: dict

    def decision_function(self, Xt):
        """f(x) = Σ_j α_j y_j K(x, x_j) + b for host rows Xt of shape (m, d); shape (m,)."""
        K = kernel_matrix(Xt, self.X, **self.params)
        return K @ (self.y * self.alpha) + self.b


def kkt_violation(Q, y, alpha, b, C, upper=None):
    """Largest violation of the C-SVC KKT conditions (units of y f), and of yᵀα = 0, box / C
    (``upper``: each point's box C_i, None for C)."""
    upper = C if upper is None else upper
    yf = Q @ alpha + y * b
    g = yf - 1.0
    stat = max(np.max(np.where(alpha < upper, -g, -np.inf)), np.max(np.where(alpha > 0, g, -np.inf)))
    feas = max(abs(y @ alpha), np.max(-alpha), np.max(alpha - upper)) / C
    return float(max(stat, feas, 0.0))


def exact_svc(X, y, C, kernel="rbf", gamma=1.0, degree=3, coef0=0.0, ridge=1e-6, sample_weight=None):
    """Exact C-SVC on host data (X, y), y = ±1: LIBSVM's index sets, margin equations in float64.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,), entries ±1
    C, kernel, gamma, degree, coef0 : as in :class:`gpath.IncrementalSVC` (gamma numeric)
    ridge : float
        Added to the kernel diagonal, as in gpath.
    sample_weight : ndarray of shape (n_samples,) or None
        Each point's box is ``C_i = C · sample_weight_i`` (LIBSVM's per-point C, which takes
        class weights folded in); weights of 0 make a point inert (α_i = 0). None: C for all.

    Returns
    -------
    Reference
        Its ``kkt`` says whether LIBSVM's index sets were right (≈ 1e-13) or not.
    """
    y = np.asarray(y, dtype=np.float64)
    params = dict(kernel=kernel, gamma=gamma, degree=degree, coef0=coef0)
    K = kernel_matrix(X, X, **params) + ridge * np.eye(len(y))
    upper = np.full(len(y), float(C)) if sample_weight is None else C * np.asarray(sample_weight, dtype=np.float64)
    # LIBSVM (scikit-learn's copy) drops the points of weight 0; give it the others only, so
    # that its support indices are rows of this problem.
    rows = np.flatnonzero(upper > 0)
    svc = SVC(kernel="precomputed", C=C, tol=1e-12, max_iter=-1, cache_size=500)
    if sample_weight is None:
        svc.fit(K, y)
    else:
        svc.fit(K[np.ix_(rows, rows)], y[rows], sample_weight=upper[rows] / C)
    a = np.zeros(len(y))
    a[rows[svc.support_]] = np.abs(svc.dual_coef_[0])
    at_c = (a >= upper * (1 - 1e-12)) & (upper > 0)
    free = (a > 0) & ~at_c
    Q = (y[:, None] * y[None, :]) * K
    alpha = np.where(at_c, upper, 0.0)
    m = np.flatnonzero(free)
    if m.size:
        # [[0, y_Mᵀ], [y_M, Q_MM]] [b; α_M] = [−y_Iᵀ C_I; 1 − Q_MI C_I]
        big = np.zeros((m.size + 1, m.size + 1))
        big[0, 1:] = y[m]
        big[1:, 0] = y[m]
        big[1:, 1:] = Q[np.ix_(m, m)]
        u = upper[at_c]
        rhs = np.concatenate([[-(y[at_c] @ u)], 1.0 - Q[np.ix_(m, np.flatnonzero(at_c))] @ u])
        sol = np.linalg.solve(big, rhs)
        b, alpha[m] = sol[0], sol[1:]
    else:
        # No free SV: take the middle of the bias interval, as gpath does.
        yf0 = Q @ alpha
        t = y * (1.0 - yf0)  # the bias that puts each point on the margin
        low = (alpha < upper) & (y > 0) | (alpha > 0) & (y < 0)
        high = (alpha < upper) & (y < 0) | (alpha > 0) & (y > 0)
        b = 0.5 * (np.max(t[low]) + np.min(t[high]))
    return Reference(alpha, float(b), kkt_violation(Q, y, alpha, b, C, upper), X, y, params)
