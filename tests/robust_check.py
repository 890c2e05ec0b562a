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
