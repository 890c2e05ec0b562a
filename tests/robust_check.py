"""Independent checks of robust SVM solutions: the KKT conditions of a partition (eq. 16 /
eq. 25) and the local-optimality conditions (Theorem 4 / Theorem 5), from α and fresh kernel
values (scikit-learn's), not from gpath's path state."""

from __future__ import annotations

import numpy as np

from gpath.reference import kernel_matrix


def gram(model, X):
    k = model.kernel_
    K = kernel_matrix(X, X, k.kind, k.gamma, k.degree, k.coef0) + k.offset
    return K + model.ridge_ * np.eye(len(X))


def svc_violation(alpha, K, y, C, theta, s, strict=False):
    """Largest violation of eq. 16 (units of y f, and of α / C) at margins z = Q α.

    A point exactly at z = s may be an inlier (α ≥ C) or outlier (α ≤ Cθ); with ``strict``
    (Theorem 4, (19e)) no point may sit at s at all.
    """
    z = (y[:, None] * y[None, :] * K) @ alpha
    tol = 1e-9
    viol = []
    for zi, a in zip(z, alpha):
        if strict and abs(zi - s) <= tol:
            viol.append(1.0)  # (19e)
        elif abs(zi - s) <= tol:  # on the boundary: α between the outlier's Cθ and the inlier's C
            viol.append(max(a - C, C * theta - a, 0.0) / C)
        elif zi < s:
            viol.append(abs(a - C * theta) / C)
        else:
            g = zi - 1.0
            v = max(-g if a < C * (1 - 1e-12) else 0.0, g if a > C * 1e-12 else 0.0)
            v = max(v, max(-a, a - C, 0.0) / C)
            viol.append(v)
    return float(max(viol)), z


def svr_violation(alpha, K, y, C, theta, s, strict=False):
    """Largest violation of eq. 25 at f = K α (residual r = y − f)."""
    f = K @ alpha
    r = y - f
    tol = 1e-9
    viol = []
    for ri, a in zip(r, alpha):
        if strict and abs(abs(ri) - s) <= tol:
            viol.append(1.0)  # (26d)
        elif abs(abs(ri) - s) <= tol:  # on the boundary: sign(r) α between θC and C
            sg = np.sign(ri)
            viol.append(max(sg * a - C, C * theta - sg * a, 0.0) / C)
        elif abs(ri) > s:
            viol.append(abs(a - np.sign(ri) * theta * C) / C)
        elif abs(ri) <= tol:
            viol.append(max(abs(a) - C, 0.0) / C)
        else:
            viol.append(max(abs(a - np.sign(ri) * C) / C, abs(ri) if abs(ri) < tol else 0.0))
    return float(max(viol)), f


def partition_distance(model, X, y):
    """How far the path's points lie from their own partitions solved anew: at each point,
    the coefficients at a piece of the loss (eq. 16: 0, C, Cθ; eq. 25: ±C, ±θC) are kept, the
    others (points at a kink, z = 1 or s; r = 0 or ±s, also where a nonzero coefficient
    within 1e-12 C of 0 has its margin on a kink level) solve their kink equations by a dense
    float64 solve with fresh kernel values, and the decision values of the two are compared.
    Returns the largest distance over the points relative to the random searches' bound:
    1e-6 of the largest |f| plus 1,000 ε of the scale of the margins (``check_kkt``'s). At
    most 1 where each point is the exact solution of its partition."""
    K = gram(model, X)
    K_f = K - model.ridge_ * np.eye(len(X))  # the decision values use the kernel alone
    regression = not hasattr(model, "classes_")
    y_pm = y if regression else np.where(y == model.classes_[1], 1.0, -1.0)
    Q = K if regression else y_pm[:, None] * y_pm[None, :] * K
    C, p, eps = model.C, model.path_, np.finfo(np.float64).eps
    worst = 0.0
    for i in range(len(p.params)):
        theta, s = (p.params[i], p.s) if p.kind == "theta" else (0.0, p.params[i])
        alpha = p.alpha[i]
        z = Q @ alpha
        if regression:
            pieces, levels, unit = np.array([C, -C, theta * C, -theta * C]), y[:, None] - np.array([0.0, s, -s]), \
                np.abs(y).max() + s
        else:
            pieces, levels, unit = np.array([0.0, C, theta * C]), np.broadcast_to([1.0, s], (len(y), 2)), 1.0
        scale = float(np.max(np.abs(Q) @ np.abs(alpha))) + unit
        # At a kink: a coefficient at no piece value, or a nonzero one within 1e-12 C of 0
        # whose margin is on a kink level to 1e-13 of the scale (the path's refinement). Where
        # the coefficients are tiny beside C (1e-9 against C = 2.9e3 with features of 2.6e7 and
        # a linear kernel) every coefficient at a kink is that close to the piece 0. (Not on
        # any level: a duplicate of a kink point at exactly C ties with the level; an outlier
        # at θC, moved there with θ, may sit 2,000–4,000 ε of the scale off the wall just
        # before it reaches it, and forced onto it moves f by more than the bound.)
        off_piece = np.min(np.abs(alpha[:, None] - pieces[None, :]), axis=1)
        at_kink = np.min(np.abs(z[:, None] - levels), axis=1) <= 1e-13 * scale
        fixed = (off_piece <= 1e-12 * C) & ~((alpha != 0.0) & (np.abs(alpha) <= 1e-12 * C) & at_kink)
        free, kept = np.flatnonzero(~fixed), np.flatnonzero(fixed)
        level = levels[free, np.argmin(np.abs(z[free, None] - levels[free]), axis=1)]
        solved = alpha.copy()
        solved[free] = np.linalg.solve(Q[np.ix_(free, free)], level - Q[np.ix_(free, kept)] @ alpha[kept])
        coef = (lambda a: a) if regression else (lambda a: y_pm * a)
        f, f_solved = K_f @ coef(alpha), K_f @ coef(solved)
        bound = 1e-6 * float(np.max(np.abs(f_solved))) + 1e3 * eps * scale
        worst = max(worst, float(np.max(np.abs(f - f_solved))) / bound)
    return worst
