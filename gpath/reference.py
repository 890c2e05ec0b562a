"""Exact C-SVC and ε-SVR references that do not use gpath's path code, for tests, the demo
and the benchmarks.

LIBSVM (scikit-learn's SVC with a precomputed kernel ``K + ridge·I`` and ``tol=1e-9``)
supplies the index sets; its α are only float32-precise (LIBSVM keeps kernel values in
float32), so the margin equations for those sets are re-solved here in float64. At large C
LIBSVM's sets are sometimes wrong (its float32 kernel and stopping rule cannot tell a point on
the margin from one just off it); the sets are then repaired by a dense primal active-set
iteration (move toward the solution of the current sets, stop at the first bound, add the
worst violator; written here, independent of gpath's path code) until the KKT conditions hold.
The result's own KKT violation is reported, so that a test can tell a wrong reference from a
wrong model: ``certified`` says whether it holds to 1e-9 relative to the problem's scale (never
where the repair did not converge: its violation is then reported as ``inf``).

ε-SVR (:func:`exact_svr`) is solved the same way in LIBSVM's doubled form (each point twice,
α and α*, labels ±1, each row's own margin level ``r_i = y'_i y_i − ε`` in place of 1:
the ε-SVR section of :mod:`gpath.svr`), from the index sets of scikit-learn's ``SVR``.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from scipy.sparse import issparse
from scipy.spatial.distance import cdist
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics.pairwise import linear_kernel, polynomial_kernel, rbf_kernel, sigmoid_kernel
from sklearn.svm import SVC, SVR


def kernel_matrix(X1, X2, kernel, gamma, degree=3, coef0=0.0):
    """Independent float64 kernel (scikit-learn's pairwise kernels; SciPy's distances).

    The RBF kernel's squared distances are summed from the differences themselves
    (``scipy.spatial.distance.cdist``), not from scikit-learn's expansion
    ‖x‖² + ‖z‖² − 2⟨x, z⟩, which cancels where the data sit far from the origin: its
    round-off, ε‖x‖², is multiplied by coefficients up to C in every margin, and at large C it
    moved a reference's solution further from the true one than the model it checked.
    """
    if kernel == "rbf":
        if issparse(X1) or issparse(X2):
            return rbf_kernel(X1, X2, gamma=gamma)
        return np.exp(-gamma * cdist(np.asarray(X1, dtype=np.float64), np.asarray(X2, dtype=np.float64),
                                     "sqeuclidean"))
    if kernel == "linear":
        return linear_kernel(X1, X2)
    if kernel == "poly":
        return polynomial_kernel(X1, X2, degree=degree, gamma=gamma, coef0=coef0)
    if kernel == "sigmoid":
        return sigmoid_kernel(X1, X2, gamma=gamma, coef0=coef0)
    raise ValueError(f"kernel must be 'rbf', 'linear', 'poly' or 'sigmoid'; got {kernel!r}")


__all__ = ["Reference", "SVRReference", "exact_svc", "exact_svc_gram", "exact_svr", "kernel_matrix",
           "kkt_violation"]


@dataclass
class Reference:
    """The re-solved solution: α (n,), bias b, and its own KKT violation."""

    alpha: np.ndarray  # (n,)
    b: float
    kkt: float  # largest KKT violation of the re-solved solution (relative, as check_kkt's)
    X: np.ndarray
    y: np.ndarray  # ±1
    params: dict
    repairs: int = 0  # active-set corrections LIBSVM's sets needed

    @property
    def certified(self) -> bool:
        """Whether the reference satisfies its KKT conditions to 1e-9 (relative)."""
        return self.kkt <= 1e-9

    def decision_function(self, Xt):
        """f(x) = Σ_j α_j y_j K(x, x_j) + b for host rows Xt of shape (m, d); shape (m,)."""
        K = kernel_matrix(Xt, self.X, **self.params)
        return K @ (self.y * self.alpha) + self.b


def margin_violation(Q, y, alpha, b, C, level=1.0) -> float:
    """Largest violation of the C-SVC stationarity conditions in units of y f (0 if none):
    y f = Q α + y b ≥ ``level`` where α < C, ≤ ``level`` where α > 0. ``Q`` of shape (n, n),
    ``y``, ``alpha`` of shape (n,), host float64; ``C`` and ``level`` scalars or per point."""
    C = np.broadcast_to(np.asarray(C, dtype=np.float64), alpha.shape)
    g = Q @ alpha + y * b - level
    return float(max(np.max(np.where(alpha < C, -g, -np.inf)), np.max(np.where(alpha > 0, g, -np.inf)), 0.0))


def kkt_violation(Q, y, alpha, b, C, level=1.0):
    """Largest violation of the C-SVC KKT conditions, as :meth:`gpath.IncrementalSVC.check_kkt`
    measures it: the stationarity violations (units of y f) divided by ``1 + max_i Σ_j |Q_ij|
    α_j``, and those of yᵀα = 0 and the box divided by C. ``C`` may be per point; ``level``
    (per point) is each margin's level, 1 for C-SVC (ε-SVR: ``y'_i y_i − ε``, and the scale
    adds ``max |level_i − 1|``, as :meth:`gpath.IncrementalSVR.check_kkt`)."""
    C = np.broadcast_to(np.asarray(C, dtype=np.float64), alpha.shape)
    level = np.broadcast_to(np.asarray(level, dtype=np.float64), alpha.shape)
    stat = margin_violation(Q, y, alpha, b, C, level)
    scale = 1.0 + float(np.max(np.abs(Q) @ alpha)) + float(np.max(np.abs(level - 1.0)))
    feas = max(abs(y @ alpha), np.max(-alpha), np.max(alpha - C)) / max(float(C.max()), 1e-300)
    return float(max(stat / scale, feas, 0.0))


def _solve_sets(Q, y, C, at_c, free, level):
    """α and b of the index sets: α = C on ``at_c``, 0 off the sets, and on ``free`` the margin
    equations [[0, y_Mᵀ], [y_M, Q_MM]] [b; α_M] = [−y_Iᵀ C_I; r_M − Q_MI C_I] in float64 (r: the
    levels); with no free point, b is the middle of its interval (as gpath takes it)."""
    alpha = np.where(at_c, C, 0.0)
    m = np.flatnonzero(free)
    if m.size:
        big = np.zeros((m.size + 1, m.size + 1))
        big[0, 1:] = y[m]
        big[1:, 0] = y[m]
        big[1:, 1:] = Q[np.ix_(m, m)]
        rhs = np.concatenate([[-(y * alpha)[at_c].sum()], level[m] - Q[np.ix_(m, np.flatnonzero(at_c))] @ alpha[at_c]])
        try:
            sol = np.linalg.solve(big, rhs)
        except np.linalg.LinAlgError:  # duplicate margin points with ridge = 0
            sol = np.linalg.lstsq(big, rhs, rcond=None)[0]
        return alpha, float(sol[0]), m, sol[1:]
    b = _middle_bias(Q, y, C, alpha, level)
    return alpha, b, m, np.zeros(0)


def _middle_bias(Q, y, C, alpha, level):
    t = y * (level - Q @ alpha)  # the bias that puts each point on the margin
    low = (alpha < C) & (y > 0) | (alpha > 0) & (y < 0)
    high = (alpha < C) & (y < 0) | (alpha > 0) & (y > 0)
    lo = np.max(t[low], initial=-np.inf)
    hi = np.min(t[high], initial=np.inf)
    return float(0.5 * (lo + hi)) if np.isfinite(lo) and np.isfinite(hi) else float(lo if np.isfinite(lo) else hi)


# LIBSVM's most iterations here. Its sets are only a start: where it stops short (at 1e8, on
# problems it crawled through for over a quarter of an hour in a randomized search), the
# repair finishes from its sets, and ``certified`` still tells.
_LIBSVM_MAX_ITER = 10**8

# The KKT violation (relative) the repair stops at, and above which LIBSVM's re-solved sets are
# repaired. At 1e-11 (before), weighted linear problems on features of 10–1,000 kept wrong sets
# at 3e-13 to 1e-11, certified yet up to 4.6e-3 from the optimum in f (tests/test_reference.py).
_REPAIR_LEVEL = 1e-13


def _libsvm_fit(model, *args, **kwargs):
    """``model.fit`` (LIBSVM), quiet where it stops at ``_LIBSVM_MAX_ITER``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return model.fit(*args, **kwargs)


def _repair(Q, y, C, at_c, free, max_iter, level=1.0):
    """Correct the index sets by a dense primal active-set iteration until the KKT conditions
    hold: from the feasible point of the current sets, move toward the solution of their margin
    equations, stop at the first bound (that variable leaves the free set), and when the
    solution is in the box add the worst violator to the free set. ``level``: each row's
    margin level (1: C-SVC). Returns α, b, the number of corrections, and whether the KKT
    conditions were reached within ``max_iter`` corrections.

    A violator whose margin equation the others pin (duplicates of one point, say: yᵀα = 0
    fixes its α at the bound it comes from) leaves the free set again at once, without a step;
    entered again as the worst violator, it would cycle. Such a point is passed over for the
    next worst until a step moves α (it is taken again where only such points violate)."""
    level = np.broadcast_to(np.asarray(level, dtype=np.float64), y.shape)
    alpha, b, m, sol = _solve_sets(Q, y, C, at_c, free, level)
    alpha[m] = np.clip(sol, 0.0, C[m])
    corrections, entered = 0, -1
    passed_over = np.zeros(y.shape, dtype=bool)
    for _ in range(max_iter):
        _, b_new, m, sol = _solve_sets(Q, y, C, at_c, free, level)
        d = sol - alpha[m]
        with np.errstate(divide="ignore", invalid="ignore"):
            steps = np.where(d < 0, alpha[m] / -d, np.where(d > 0, (C[m] - alpha[m]) / d, np.inf))
        j = int(np.argmin(steps)) if m.size else -1
        if m.size and steps[j] < 1.0:
            step = max(steps[j], 0.0)
            alpha[m] = np.clip(alpha[m] + step * d, 0.0, C[m])
            k = m[j]
            if step > 0.0:
                passed_over[:] = False
            elif k == entered:
                passed_over[k] = True
            free[k] = False
            at_c[k] = d[j] > 0
            alpha[k] = C[k] if at_c[k] else 0.0
            corrections += 1
            continue
        alpha[m], b = sol, b_new
        g = Q @ alpha + y * b - level
        viol = np.where(free, 0.0, np.where(at_c, np.maximum(g, 0.0), np.maximum(-g, 0.0)))
        viol[C == 0.0] = 0.0
        if viol.max() <= _REPAIR_LEVEL * (1.0 + float(np.max(np.abs(Q) @ alpha)) + float(np.max(np.abs(level - 1.0)))):
            return alpha, b, corrections, True
        others = np.where(passed_over, 0.0, viol)
        k = int(np.argmax(others if others.max() > 0.0 else viol))
        free[k], at_c[k], entered = True, False, k
        corrections += 1
    return alpha, b, corrections, False


def exact_svc(X, y, C, kernel="rbf", gamma=1.0, degree=3, coef0=0.0, ridge=1e-6, sample_weight=None):
    """Exact C-SVC on host data (X, y), y = ±1: LIBSVM's index sets, margin equations in float64,
    sets repaired where LIBSVM's were wrong.

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
        Its ``kkt`` (relative, as ``check_kkt``'s) says whether the reference is exact
        (``certified``: ≤ 1e-9); ``repairs`` how many set corrections LIBSVM's sets needed.
    """
    y = np.asarray(y, dtype=np.float64)
    params = dict(kernel=kernel, gamma=gamma, degree=degree, coef0=coef0)
    K = kernel_matrix(X, X, **params) + ridge * np.eye(len(y))
    alpha, b, kkt, repairs = exact_svc_gram(K, y, C, sample_weight)
    return Reference(alpha, b, kkt, X, y, params, repairs)


def exact_svc_gram(K, y, C, sample_weight=None) -> tuple[np.ndarray, float, float, int]:
    """Exact C-SVC on a host Gram matrix (any kernel, ridge included): what :func:`exact_svc`
    solves once it has K.

    Parameters
    ----------
    K : ndarray of shape (n_samples, n_samples), float64
    y : ndarray of shape (n_samples,), entries ±1
    C : float
    sample_weight : ndarray of shape (n_samples,) or None
        As in :func:`exact_svc`.

    Returns
    -------
    alpha : ndarray of shape (n_samples,)
    b : float
    kkt : float
        The solution's own KKT violation (relative, as ``check_kkt``'s); ``inf`` where the
        repair of LIBSVM's sets did not converge (the solution then certifies nothing).
    repairs : int
        Set corrections LIBSVM's index sets needed.
    """
    y = np.asarray(y, dtype=np.float64)
    n = len(y)
    upper = np.full(n, float(C)) if sample_weight is None else C * np.asarray(sample_weight, dtype=np.float64)
    # LIBSVM (scikit-learn's copy) drops the points of weight 0; give it the others only, so
    # that its support indices are rows of this problem.
    rows = np.flatnonzero(upper > 0)
    svc = SVC(kernel="precomputed", C=C, tol=1e-9, max_iter=_LIBSVM_MAX_ITER, cache_size=500)
    if sample_weight is None:
        _libsvm_fit(svc, K, y)
    else:
        _libsvm_fit(svc, K[np.ix_(rows, rows)], y[rows], sample_weight=upper[rows] / C)
    a = np.zeros(n)
    a[rows[svc.support_]] = np.abs(svc.dual_coef_[0])
    at_c = (a >= upper * (1 - 1e-12)) & (upper > 0)
    free = (a > 0) & ~at_c
    Q = (y[:, None] * y[None, :]) * K
    return _resolved(Q, y, upper, at_c, free, np.ones(n))


def _resolved(Q, y, upper, at_c, free, level) -> tuple[np.ndarray, float, float, int]:
    """The margin equations of the sets ``at_c``/``free`` solved in float64, and the sets
    repaired until the KKT conditions hold: α, b, the KKT violation (``inf`` where the repair
    did not converge), the repairs."""
    alpha, b, m, sol = _solve_sets(Q, y, upper, at_c, free, level)
    alpha[m] = sol
    if m.size:
        # LIBSVM's free points all solved onto a bound: the margin then pins b to one end of
        # its interval, where a fit (gpath's, LIBSVM's own) takes the middle. So does this.
        zero, full = sol <= 1e-12 * float(alpha.max()), sol >= upper[m] * (1.0 - 1e-12)
        if np.all(zero | full):
            alpha[m] = np.where(full, upper[m], 0.0)
            b = _middle_bias(Q, y, upper, alpha, level)
    kkt, repairs = kkt_violation(Q, y, alpha, b, upper, level), 0
    if kkt > _REPAIR_LEVEL:
        alpha, b, repairs, converged = _repair(Q, y, upper, at_c.copy(), free.copy(), 20 * y.size + 100, level)
        # Sets whose repair did not converge certify nothing, whatever their violation: a
        # repair that cycled on duplicate points stopped 6e-10 of the scale (2e-4 in units of
        # y f) from the optimum, within the 1e-9 of ``certified``.
        kkt = kkt_violation(Q, y, alpha, b, upper, level) if converged else np.inf
    return alpha, float(b), kkt, repairs


@dataclass
class SVRReference:
    """The re-solved ε-SVR solution: β = α − α* (n,), bias b, and its own KKT violation."""

    beta: np.ndarray  # (n,)
    b: float
    kkt: float  # largest KKT violation (relative, as IncrementalSVR.check_kkt's)
    X: np.ndarray
    params: dict
    repairs: int = 0

    @property
    def certified(self) -> bool:
        """Whether the reference satisfies its KKT conditions to 1e-9 (relative)."""
        return self.kkt <= 1e-9

    def predict(self, Xt):
        """f(x) = Σ_j β_j K(x, x_j) + b for host rows Xt of shape (m, d); shape (m,)."""
        return kernel_matrix(Xt, self.X, **self.params) @ self.beta + self.b


def exact_svr(X, y, C, epsilon=0.1, kernel="rbf", gamma=1.0, degree=3, coef0=0.0, ridge=1e-6,
              sample_weight=None) -> SVRReference:
    """Exact ε-SVR on host data (X, y): LIBSVM's index sets (scikit-learn's ``SVR``, precomputed
    kernel, tol 1e-9), the margin equations of the doubled problem solved in float64, the sets
    repaired where LIBSVM's were wrong.

    The problem is :class:`gpath.IncrementalSVR`'s: each point twice (α_i with label +1, α*_i
    with −1), ``Q = y'y'ᵀ ⊙ K + ridge·I`` over the 2n rows (the ridge on each row's own
    diagonal), each row's margin level ``y'_i y_i − ε``, boxes ``C_i = C · sample_weight_i``.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,), real targets
    C, epsilon, kernel, gamma, degree, coef0, ridge : as in :class:`gpath.IncrementalSVR`
        (gamma numeric).
    sample_weight : ndarray of shape (n_samples,) or None

    Returns
    -------
    SVRReference
        ``certified`` when its own KKT violation is at most 1e-9.
    """
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    n = y.size
    params = dict(kernel=kernel, gamma=gamma, degree=degree, coef0=coef0)
    K = kernel_matrix(X, X, **params)
    upper = np.full(n, float(C)) if sample_weight is None else C * np.asarray(sample_weight, dtype=np.float64)
    rows = np.flatnonzero(upper > 0)
    svr = SVR(kernel="precomputed", C=C, epsilon=epsilon, tol=1e-9, max_iter=_LIBSVM_MAX_ITER, cache_size=500)
    weights = None if sample_weight is None else upper[rows] / C
    _libsvm_fit(svr, K[np.ix_(rows, rows)] + ridge * np.eye(rows.size), y[rows], sample_weight=weights)
    beta = np.zeros(n)
    beta[rows[svr.support_]] = svr.dual_coef_[0]
    # The doubled problem: row 2i is α_i (label +1), row 2i + 1 is α*_i (label −1).
    twice = np.repeat(np.arange(n), 2)
    y2 = np.tile([1.0, -1.0], n)
    Q = (y2[:, None] * y2[None, :]) * K[np.ix_(twice, twice)] + ridge * np.eye(2 * n)
    upper2 = upper[twice]
    z = np.stack([np.maximum(beta, 0.0), np.maximum(-beta, 0.0)], axis=1).reshape(-1)
    at_c = (z >= upper2 * (1 - 1e-12)) & (upper2 > 0)
    free = (z > 0) & ~at_c
    level = y2 * y[twice] - epsilon
    alpha, b, kkt, repairs = _resolved(Q, y2, upper2, at_c, free, level)
    return SVRReference(alpha[0::2] - alpha[1::2], b, kkt, X, params, repairs)
