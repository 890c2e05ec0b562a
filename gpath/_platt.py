"""Probabilities of a one-vs-one SVC as LIBSVM computes them.

1. For each pair of classes (i, j), decision values of its points from 5-fold
   cross-validation: each fold's points are predicted by an SVC trained on the other folds
   (LIBSVM's ``svm_binary_svc_probability``). gpath trains those SVCs exactly too.
2. A sigmoid ``P(i | x) = 1 / (1 + exp(A d(x) + B))`` fitted to them by the Newton method with
   backtracking of Lin, Lin & Weng (2007), which minimizes Platt's regularized cross-entropy
   in a numerically stable form (``sigmoid_train``); ``d`` is LIBSVM's pairwise decision
   value (positive for the first class i).
3. The pairwise probabilities r_ij, clipped to [1e-7, 1 − 1e-7], coupled into class
   probabilities by the second method of Wu, Lin & Weng (2004): the minimizer of
   ``Σ_i Σ_{j≠i} (r_ji p_i − r_ij p_j)²`` subject to ``Σ_i p_i = 1``. LIBSVM approaches it by
   a fixed-point iteration stopped at 0.005/k; gpath solves its optimality conditions (a
   (k+1) × (k+1) linear system per sample) exactly. With two classes the probabilities are
   (r_01, r_10).

References
----------
J. C. Platt, "Probabilistic outputs for support vector machines and comparisons to
regularized likelihood methods", in Advances in Large Margin Classifiers, MIT Press, 1999
(sections 2.1–2.2: the sigmoid, its targets (N₊ + 1)/(N₊ + 2) and 1/(N₋ + 2), and
cross-validated decision values). H.-T. Lin, C.-J. Lin and R. C. Weng, "A note on Platt's
probabilistic outputs for support vector machines", Machine Learning 68, 2007 (section 3 and
Algorithm 1 / appendix pseudo-code: the Newton method with backtracking line search and the
stable evaluation of log(1 + exp(·))). T.-F. Wu, C.-J. Lin and R. C. Weng, "Probability
estimates for multi-class classification by pairwise coupling", JMLR 5, 2004 (section 4,
eq. (15)–(16): the second method).
"""

from __future__ import annotations

import warnings

import numpy as np

from ._array_api import get_namespace_and_device, to_device, to_host
from ._cpath import decision_values
from ._multiclass import pairs
from ._smo import shared_kernel_rows
from .kernels import PRECOMPUTED

__all__ = ["MIN_PROB", "N_FOLDS", "couple", "cv_decision_values", "sigmoid_predict", "sigmoid_train"]

N_FOLDS = 5
MIN_PROB = 1e-7  # LIBSVM's clip of the pairwise probabilities


def sigmoid_train(dec: np.ndarray, first: np.ndarray) -> tuple[float, float]:
    """Fit ``P(first | d) = 1 / (1 + exp(A d + B))`` to decision values (Lin, Lin & Weng 2007).

    Parameters
    ----------
    dec : ndarray of shape (n,), float64
        Decision values, positive for the "first" class.
    first : ndarray of shape (n,), bool
        Whether each point is of the first class.

    Returns
    -------
    A, B : float
        Minimizers of Platt's cross-entropy with the regularized targets
        ``(N₊ + 1)/(N₊ + 2)`` and ``1/(N₋ + 2)``; Newton's method with a backtracking line
        search, stopped as the paper's pseudo-code (and LIBSVM) do: gradient below 1e-5, a
        step below 1e-10, or 100 iterations.
    """
    dec = np.asarray(dec, dtype=np.float64)
    prior1 = float(np.count_nonzero(first))
    prior0 = float(first.size) - prior1
    t = np.where(first, (prior1 + 1.0) / (prior1 + 2.0), 1.0 / (prior0 + 2.0))
    A, B = 0.0, float(np.log((prior0 + 1.0) / (prior1 + 1.0)))

    def objective(a, b):
        f = dec * a + b  # Σ t f + log(1 + exp(−f)) without overflow (the paper's eq. 6)
        return float(np.sum(np.where(f >= 0, t * f, (t - 1.0) * f) + np.log1p(np.exp(-np.abs(f)))))

    fval = objective(A, B)
    for _ in range(100):
        f = dec * A + B
        e = np.exp(-np.abs(f))
        p = np.where(f >= 0, e, 1.0) / (1.0 + e)  # 1 / (1 + exp(f)), stably
        q = 1.0 - p
        d2 = p * q
        h11 = 1e-12 + float(dec * dec @ d2)
        h22 = 1e-12 + float(np.sum(d2))
        h21 = float(dec @ d2)
        d1 = t - p
        g1, g2 = float(dec @ d1), float(np.sum(d1))
        if abs(g1) < 1e-5 and abs(g2) < 1e-5:
            break
        det = h11 * h22 - h21 * h21
        dA = -(h22 * g1 - h21 * g2) / det
        dB = -(-h21 * g1 + h11 * g2) / det
        gd = g1 * dA + g2 * dB
        step = 1.0
        while step >= 1e-10:
            new = objective(A + step * dA, B + step * dB)
            if new < fval + 1e-4 * step * gd:
                A, B, fval = A + step * dA, B + step * dB, new
                break
            step /= 2.0
        else:
            break  # line search failed: the paper stops here
    return float(A), float(B)


def sigmoid_predict(dec, A, B, xp):
    """``1 / (1 + exp(A d + B))`` elementwise, without overflow, clipped to
    [1e-7, 1 − 1e-7] (LIBSVM). ``dec`` of any shape in namespace ``xp``; A and B scalars or
    arrays broadcasting with it."""
    f = dec * A + B
    e = xp.exp(-xp.abs(f))
    p = xp.where(f >= 0, e, xp.ones_like(e)) / (1.0 + e)
    return xp.clip(p, MIN_PROB, 1.0 - MIN_PROB)


def couple(r, k: int, xp):
    """Class probabilities from pairwise ones (Wu, Lin & Weng 2004, second method, solved
    exactly).

    Parameters
    ----------
    r : array of shape (n_samples, k(k−1)/2)
        ``P(i | i or j, x)`` of each pair (i, j) in pair order, in [1e-7, 1 − 1e-7].
    k : int

    Returns
    -------
    array of shape (n_samples, k)
        Rows in [0, 1] summing to 1.
    """
    if k == 2:
        return xp.stack([r[:, 0], 1.0 - r[:, 0]], axis=1)
    n = r.shape[0]
    _, device = get_namespace_and_device(r)
    zero = xp.zeros(n, dtype=r.dtype, device=device)
    one = xp.ones(n, dtype=r.dtype, device=device)
    # R[a][b] = P(a beats b) for a ≠ b.
    R = [[zero] * k for _ in range(k)]
    for p, (i, j) in enumerate(pairs(k)):
        R[i][j], R[j][i] = r[:, p], 1.0 - r[:, p]
    # Q_tt = Σ_{j≠t} r_jt², Q_tj = −r_jt r_tj (eq. 16); [[Q, 1], [1ᵀ, 0]] [p; λ] = [0; 1].
    rows = []
    for t in range(k):
        diag = zero
        for j in range(k):
            if j != t:
                diag = diag + R[j][t] * R[j][t]
        rows.append([diag if j == t else -R[j][t] * R[t][j] for j in range(k)] + [one])
    rows.append([one] * k + [zero])
    M = xp.stack([xp.stack(row, axis=1) for row in rows], axis=1)  # (n, k+1, k+1)
    rhs = xp.concat([xp.zeros((n, k, 1), dtype=r.dtype, device=device),
                     xp.ones((n, 1, 1), dtype=r.dtype, device=device)], axis=1)
    p = xp.linalg.solve(M, rhs)[:, :k, 0]
    # The solution is a probability vector (the paper's Theorem 2); clip round-off.
    p = xp.clip(p, 0.0, 1.0)
    return p / xp.sum(p, axis=1, keepdims=True)


def cv_decision_values(X, y_pm: np.ndarray, weights: np.ndarray, solve, kernel, rng) -> tuple[np.ndarray, np.ndarray]:
    """Cross-validated decision values of one pair's points, as LIBSVM's
    ``svm_binary_svc_probability``.

    The points with a positive box (LIBSVM drops points of weight 0) are split into
    ``N_FOLDS`` stratified folds (at most one per point; plain folds of a permutation, as
    LIBSVM's, where neither class has a point per fold), shuffled by ``rng``; each fold is
    predicted by the exact SVC of the others (``solve``). A fold whose training part holds
    one class only gets the constant decision ±1 of that class, as in LIBSVM.

    The folds' fits share their kernel values (host feature rows: SMO's float32 rows and the
    exact start's float64 columns, :func:`gpath._smo.shared_kernel_rows`), computed once on
    the pair's points where each fold's fit would compute them on its 4/5 of them (SMO's
    rows: n² values once, against 5 × 0.64 n²).

    Parameters
    ----------
    X : array of shape (n, n_features), float64
        The pair's points, in any array-API namespace.
    y_pm : ndarray of shape (n,), float64
        gpath's pairwise labels: −1 for the first class i, +1 for j.
    weights : ndarray of shape (n,), float64
        Each point's box over C (C_i / C).
    solve : callable
        ``solve(X_sub, y_sub, weights_sub, rows) -> SVCState``: the exact SVC of the subset
        ``rows`` (host ints into the pair's points; the estimator's problem: loss, C, ridge;
        boxes C · weights_sub). ``rows`` lets it start from the full solution's α there.
    kernel : Kernel
    rng : numpy.random.RandomState

    Returns
    -------
    dec : ndarray of shape (n_used,), float64
        LIBSVM's decision values (positive for the first class i) of the used points.
    first : ndarray of shape (n_used,), bool
        Whether each used point is of class i.
    """
    from sklearn.model_selection import KFold, StratifiedKFold

    xp, device = get_namespace_and_device(X)
    used = np.flatnonzero(weights > 0)
    y_used = y_pm[used]
    dec = np.zeros(used.size)
    n_splits = min(N_FOLDS, used.size)
    if np.max(np.unique(y_used, return_counts=True)[1]) >= n_splits:
        folds = StratifiedKFold(n_splits=n_splits, shuffle=True, random_state=rng)
    else:  # both classes smaller than the folds: LIBSVM's own rule, folds of a permutation
        folds = KFold(n_splits=n_splits, shuffle=True, random_state=rng)
    with warnings.catch_warnings():  # a class with fewer than 5 points: folds without it
        warnings.filterwarnings("ignore", message="The least populated class", category=UserWarning)
        splits = list(folds.split(np.zeros(used.size), y_used))
    with shared_kernel_rows(X, feature_rows=kernel.kind != PRECOMPUTED) as store:
        for train, test in splits:
            signs = np.unique(y_used[train])
            if signs.size < 2:
                dec[test] = -signs[0] if signs.size else 0.0  # the class present: +1 for i, −1 for j
                continue
            rows = used[train]
            if store is not None:
                store.index = rows
            state = solve(xp.take(X, to_device(rows, xp, device), axis=0), to_device(y_pm[rows], xp, device),
                          weights[rows], rows)
            X_test = xp.take(X, to_device(used[test], xp, device), axis=0)
            f = decision_values(kernel, state.X, state.y_host, state.alpha[None, :], [state.b], X_test, xp, device)
            dec[test] = -to_host(f[:, 0])
    return dec, y_used < 0
