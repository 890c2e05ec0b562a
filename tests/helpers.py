"""Shared test data and the exactness assertion."""

from __future__ import annotations

import functools
import hashlib
import pickle

import numpy as np

from gpath._array_api import to_host
from gpath.reference import _solve_sets, exact_svc, kkt_violation, margin_violation


@functools.cache
def dataset(name: str):
    """Real data (host NumPy): X standardized or scaled as in the demo, y in {0, 1}."""
    if name == "breast_cancer":
        from sklearn.datasets import load_breast_cancer

        X, y = load_breast_cancer(return_X_y=True)
        return (X - X.mean(0)) / X.std(0), y
    if name == "bananas":
        from gpath.datasets import load_bananas

        return load_bananas()
    if name == "waterflow":
        from gpath.datasets import load_waterflow_direction

        return load_waterflow_direction()
    raise KeyError(name)


_REFERENCES: dict = {}


def reference_svc(X, y_pm, C, kind, gamma, degree, coef0, ridge):
    """:func:`gpath.reference.exact_svc` of a problem, computed once per test process: a
    test that holds several models of one problem to it (every block size of SimpleSVM) asks
    for the same reference each time, and LIBSVM takes half a minute for it at C = 1e5
    (Bananas, 600 points). The key is the problem's bytes and parameters."""
    X, y_pm = np.ascontiguousarray(X, dtype=np.float64), np.ascontiguousarray(y_pm, dtype=np.float64)
    key = (X.shape, hashlib.sha256(X).hexdigest(), hashlib.sha256(y_pm).hexdigest(),
           *(float(v) for v in (C, gamma, degree, coef0, ridge)), kind)
    if key not in _REFERENCES:
        _REFERENCES[key] = exact_svc(X, y_pm, C, kind, gamma, degree, coef0, ridge=ridge)
    return _REFERENCES[key]


def resolved_values(K, y_pm, alpha, C, ridge, level=1.0):
    """The decision values on the training points (Gram matrix ``K``, host, shape (n, n)) of
    the solution that α's index sets give (α ≥ (1 − 1e-12) C: at C; 0 < α below that: free),
    their margin equations re-solved in float64 (the reference's dense solve); its KKT
    violation from scratch, relative (:func:`gpath.reference.kkt_violation`) and in units of
    y f (:func:`gpath.reference.margin_violation`): the sets certified by it, the numbers
    independent of how gpath found them. (LIBSVM, the usual reference, takes 10–40 s on the
    ill-conditioned problems that use this.) ``level``: each margin's level, 1 for C-SVC
    (ε-SVR's doubled problem: ``y'_i z_i − ε``, see :func:`svr_doubled`)."""
    Q = np.outer(y_pm, y_pm) * (K + ridge * np.eye(len(y_pm)))
    at_c = alpha >= C * (1.0 - 1e-12)
    level = np.broadcast_to(np.asarray(level, dtype=np.float64), alpha.shape)
    coef, b, m, solution = _solve_sets(Q, y_pm, C, at_c, (alpha > 0) & ~at_c, level)
    coef[m] = solution
    return (K @ (y_pm * coef) + b, kkt_violation(Q, y_pm, coef, b, C, level),
            margin_violation(Q, y_pm, coef, b, C, level))


def svr_doubled(K, z, beta, epsilon):
    """ε-SVR as the C-SVC-form problem :func:`gpath.reference.exact_svr` states: row 2i is
    α_i = max(β_i, 0) (label +1), row 2i + 1 is α*_i = max(−β_i, 0) (label −1), each row's
    margin level y'_i z_i − ε. Returns the doubled Gram matrix (2n, 2n), labels, α and levels
    (2n,); with the ridge, ``Q = y'y'ᵀ ⊙ (K₂ + ridge·I)``, as :func:`resolved_values` builds it."""
    n = z.shape[0]
    twice = np.repeat(np.arange(n), 2)
    y2 = np.tile([1.0, -1.0], n)
    alpha = np.stack([np.maximum(beta, 0.0), np.maximum(-beta, 0.0)], axis=1).reshape(-1)
    return K[np.ix_(twice, twice)], y2, alpha, y2 * z[twice] - epsilon


def assert_exact(model, X, y, rtol=1e-7, kkt=1e-9, X_device=None):
    """The model equals the exact reference on its training set (X, y host, y in classes_).

    Decision values within ``rtol`` of the largest |value|; the model's recomputed KKT
    violation at most ``kkt``; and the reference itself exact (else LIBSVM's index sets
    were wrong and the comparison would prove nothing). ``X_device``: the training rows in
    the model's namespace (default: the model's own, or X).
    """
    y_pm = np.where(y == model.classes_[1], 1.0, -1.0)
    k = model.kernel_
    ref = reference_svc(X, y_pm, model.C, k.kind, k.gamma, k.degree, k.coef0, model.ridge)
    assert ref.kkt <= 1e-9, f"reference not exact (KKT {ref.kkt:.2e}): LIBSVM's index sets are off"
    if X_device is None:
        X_device = model.state_.X if hasattr(model, "state_") else X
    violation = model.check_kkt(X_device, y) if not hasattr(model, "state_") else model.check_kkt()
    assert violation <= kkt, f"model KKT violation {violation:.2e}"
    f = to_host(model.decision_function(X_device))
    f_ref = ref.decision_function(X)
    err = np.abs(f - f_ref).max() / np.abs(f_ref).max()
    assert err <= rtol, f"decision values differ from the exact reference by {err:.2e} (relative)"
    np.testing.assert_allclose(model.alpha_, ref.alpha, atol=1e-7 * model.C)
    return err


def snapshot(model) -> bytes:
    """Every fitted attribute and the whole path state, as bytes."""
    return pickle.dumps(model.__dict__)


class Pool:
    """The test's own record of which pool rows the model holds, by sample id (the rows
    go to ``backend``'s namespace, or stay NumPy without one)."""

    def __init__(self, X, y, backend=None):
        self.X, self.y, self.backend = X, y, backend
        self.rows: dict[int, int] = {}
        self.next_id = 0

    def put(self, a):
        return a if self.backend is None else self.backend.asarray(a)

    def fit(self, model, rows, **kw):
        model.fit(self.put(self.X[rows]), self.put(self.y[rows]), **kw)
        self.rows = {i: int(r) for i, r in enumerate(rows)}
        self.next_id = len(rows)

    def update(self, model, add, remove_ids, **kw):
        args = dict(X_add=self.put(self.X[add]), y_add=self.put(self.y[add])) if len(add) else {}
        model.update(**args, remove=remove_ids, **kw)
        for i in remove_ids:
            del self.rows[int(i)]
        for r in add:
            self.rows[self.next_id] = int(r)
            self.next_id += 1

    def current(self, model):
        ids = list(self.rows)
        np.testing.assert_array_equal(model.sample_ids_, ids)
        rows = np.array([self.rows[i] for i in ids])
        return self.X[rows], self.y[rows]


def count_condition_estimates(monkeypatch) -> list:
    """A list that gets an entry for each condition estimate a margin factor makes (LAPACK's,
    from a factor of 𝐌 of its own, or the one from the factor in hand)."""
    import gpath.linalg

    estimates = []
    lapack = gpath.linalg._reciprocal_condition
    from_factor = gpath.linalg.BorderedFactor._reciprocal_condition_from_factor
    monkeypatch.setattr(gpath.linalg, "_reciprocal_condition", lambda M: estimates.append(1) or lapack(M))
    monkeypatch.setattr(gpath.linalg.BorderedFactor, "_reciprocal_condition_from_factor",
                        lambda self, tiny: estimates.append(1) or from_factor(self, tiny))
    return estimates
