"""IncrementalSVC: an exact C-SVC that adds and removes many points along one path."""

from __future__ import annotations

import time

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from ._array_api import to_device, to_host
from ._path import I, M, O, PathStats, SVCState
from ._validation import (
    check_choice, check_ids, check_labels, check_positive, check_X, signed_labels,
)
from .kernels import Kernel

__all__ = ["IncrementalSVC"]


class IncrementalSVC(ClassifierMixin, BaseEstimator):
    """Exact binary C-SVC, updated by multiple incremental decremental learning.

    Solves ``min ½ αᵀQα − 1ᵀα`` s.t. ``0 ≤ α ≤ C``, ``yᵀα = 0`` with
    ``Q_ij = y_i y_j K(x_i, x_j) + ridge·[i = j]`` exactly (to float64 round-off), and keeps it
    exact while points are added and removed. ``update`` adds m points and removes ℓ points
    along one multi-parametric path (Karasuyama & Takeuchi 2009, section 3.2); with
    ``method="single"`` it applies the single-point update of Cauwenberghs & Poggio (2001)
    once per point instead (the baseline; section 3.1).

    Arrays stay in the namespace and on the device of the ``X`` given to :meth:`fit`
    (NumPy, CuPy, or any array-API library); the small linear systems are solved on the host
    in float64.

    Parameters
    ----------
    C : float, default 1.0
        Box constraint, finite and > 0.
    kernel : {"rbf", "linear", "poly"}, default "rbf"
    gamma : float or {"scale", "auto"}, default "scale"
        As in scikit-learn's SVC; ``"scale"`` is 1 / (n_features · X.var()) of the data given
        to :meth:`fit`, and stays fixed for later updates.
    degree : int, default 3
    coef0 : float, default 0.0
    method : {"multiple", "single"}, default "multiple"
        How :meth:`update` follows the path: one path for all points ("multiple", MID-SVM),
        or one path per point, additions first ("single", SID-SVM). :meth:`fit` always uses
        one path.
    ridge : float, default 1e-6
        Added to the kernel diagonal so that duplicate points on the margin keep 𝐌
        nonsingular (the paper's choice, section 4). The model is the exact solution for the
        kernel ``K + ridge·I`` on the training points; predictions use ``K``. 0 is allowed
        for data without duplicate margin points.
    tol : float, default 1e-9
        After every fit/update the maintained margins must satisfy the KKT conditions to
        ``tol`` (units of y f); otherwise the call fails and the model is kept.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        The two labels; ``classes_[1]`` is the positive class (decision > 0).
    support_ : ndarray of shape (n_SV,), int
        Rows (training order) of the support vectors (α > 0).
    support_vectors_ : array of shape (n_SV, n_features)
    dual_coef_ : array of shape (1, n_SV)
        ``y_i α_i`` of the support vectors (y = ±1).
    intercept_ : array of shape (1,)
        The bias b.
    n_support_ : ndarray of shape (2,), int32
        Support vectors per class, in the order of ``classes_``.
    sample_ids_ : ndarray of shape (n_samples,), int64
        Stable id of each training point, in training order: ``fit`` gives 0..n−1, each
        ``update`` gives the next unused ids to the added rows.
    alpha_ : ndarray of shape (n_samples,), float64
        Dual coefficients of every training point, in training order.
    last_update_ : PathStats
        Breakpoints, points added and removed, wall time (s) and final |M| of the last call.
    n_features_in_ : int

    References
    ----------
    M. Karasuyama and I. Takeuchi, "Multiple incremental decremental learning of support
    vector machines", NIPS 2009, sections 3.2–3.3. G. Cauwenberghs and T. Poggio,
    "Incremental and decremental support vector machine learning", NIPS 2001.
    """

    def __init__(self, C=1.0, kernel="rbf", gamma="scale", degree=3, coef0=0.0,
                 method="multiple", ridge=1e-6, tol=1e-9):
        self.C = C
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.method = method
        self.ridge = ridge
        self.tol = tol

    # ------------------------------------------------------------------ fitting
    def fit(self, X, y):
        """Train on (X, y) from scratch, along the incremental path.

        The first point of each class forms a two-point model; all other points are then
        added along one path (section 3.2), and the rows are put back in input order.

        Parameters
        ----------
        X : array of shape (n_samples, n_features)
            Any array-API array (NumPy, CuPy, ...) or array-like; converted to float64.
        y : array-like of shape (n_samples,)
            Exactly two distinct labels.

        Returns
        -------
        self

        Raises
        ------
        ValueError
            Bad parameters, non-finite or mis-shaped X, or y without exactly two classes.
        TypeError
            Non-numeric X.
        PathError, SingularMarginError
            A numerical failure; the estimator is unchanged.
        """
        start = time.perf_counter()
        params = self._check_params()
        X, xp, device = check_X(X)
        labels, classes = check_labels(y, X.shape[0])
        kernel = Kernel.from_params(self.kernel, self.gamma, self.degree, self.coef0, X)
        ys = signed_labels(labels, classes, xp, device)
        y_host = to_host(ys)
        state = SVCState(xp, device, kernel, params["C"], params["ridge"], X.shape[1])
        seed = np.array(sorted([int(np.argmax(y_host > 0)), int(np.argmax(y_host < 0))]))
        rest = np.setdiff1d(np.arange(X.shape[0]), seed)
        order = np.concatenate([seed, rest])
        n_bp = 0
        for rows in (seed, rest):
            if rows.size:
                rows_dev = to_device(rows, xp, device)
                state, stats = state.follow(xp.take(X, rows_dev, axis=0), xp.take(ys, rows_dev),
                                            np.zeros(0, dtype=np.int64))
                n_bp += stats.n_breakpoints
        state.take_rows(np.argsort(order))
        self._check_state(state)
        stats = PathStats(n_bp, X.shape[0], 0, time.perf_counter() - start, len(state.margin))
        self._commit(state, classes, kernel, np.arange(X.shape[0], dtype=np.int64), X.shape[0], stats)
        return self

    def partial_fit(self, X, y):
        """Add the rows (X, y) to the model (``fit`` if it is not fitted yet).

        Parameters and errors as in :meth:`update` (``X_add``, ``y_add``); returns self.
        """
        if not hasattr(self, "state_"):
            return self.fit(X, y)
        return self.update(X_add=X, y_add=y)

    def update(self, X_add=None, y_add=None, remove=None):
        """Add the rows (X_add, y_add) and remove the points ``remove`` in one path.

        Parameters
        ----------
        X_add : array of shape (m, n_features) or None
            New points, in the namespace and on the device of the training data.
        y_add : array-like of shape (m,) or None
            Their labels, each one of ``classes_``.
        remove : sequence of int of shape (ℓ,) or None
            Sample ids (see ``sample_ids_``) of the points to remove.

        Returns
        -------
        self

        Raises
        ------
        ValueError
            Mis-shaped or non-finite X_add, a label not in ``classes_``, X_add without y_add,
            repeated ids, or an update that would leave a single class.
        KeyError
            An id in ``remove`` that is not in the model.
        TypeError
            X_add in another namespace or on another device than the model.
        PathError, SingularMarginError
            A numerical failure part-way; the model is unchanged.

        Notes
        -----
        A failed call, for any reason (a ``KeyboardInterrupt`` included), leaves the model
        exactly as it was: the path works on a copy that replaces the model at the end.
        """
        check_is_fitted(self, "state_")
        params = self._check_params()
        state = self.state_
        xp, device = state.xp, state.device
        if (X_add is None) != (y_add is None):
            raise ValueError("X_add and y_add must be given together; got only one of them")
        if X_add is not None:
            X_add, _, _ = check_X(X_add, "X_add", state.X.shape[1], xp, device)
            labels, _ = check_labels(y_add, X_add.shape[0], "y_add", self.classes_)
            y_add = signed_labels(labels, self.classes_, xp, device)
        else:
            X_add = xp.zeros((0, state.X.shape[1]), dtype=xp.float64, device=device)
            y_add = xp.zeros(0, dtype=xp.float64, device=device)
        rows = check_ids([] if remove is None else remove, self.sample_ids_)
        kept = np.delete(state.y_host, rows)
        classes_left = set(np.unique(kept)) | set(np.unique(to_host(y_add)))
        if classes_left != {-1.0, 1.0}:
            raise ValueError(
                f"the update would leave only class {sorted(classes_left)} in the model; "
                f"an SVC needs both classes {self.classes_.tolist()}"
            )
        if params["C"] != state.C or params["ridge"] != state.ridge:
            raise ValueError(
                "C and ridge cannot change between fit and update "
                f"(fitted with C={state.C}, ridge={state.ridge}; now C={params['C']}, "
                f"ridge={params['ridge']}); call fit again"
            )
        start = time.perf_counter()
        m = X_add.shape[0]
        new_ids = self._next_id + np.arange(m, dtype=np.int64)
        if params["method"] == "multiple":
            state, stats = state.follow(X_add, y_add, rows)
            n_bp = stats.n_breakpoints
        else:
            n_bp = 0
            for j in range(m):
                state, stats = state.follow(X_add[j : j + 1, :], y_add[j : j + 1], np.zeros(0, dtype=np.int64))
                n_bp += stats.n_breakpoints
            # Rows shift as points leave: find each by its position among the survivors.
            alive = np.ones(state.n, dtype=bool)
            for r in rows:
                row = int(np.count_nonzero(alive[:r]))
                state, stats = state.follow(X_add[:0, :], y_add[:0], np.array([row]))
                alive[r] = False
                n_bp += stats.n_breakpoints
        self._check_state(state)
        ids = np.concatenate([np.delete(self.sample_ids_, rows), new_ids])
        stats = PathStats(n_bp, m, len(rows), time.perf_counter() - start, len(state.margin))
        self._commit(state, self.classes_, self.kernel_, ids, self._next_id + m, stats)
        return self

    # ------------------------------------------------------------------ prediction
    def decision_function(self, X):
        """Signed distance to the separating surface: ``f(x) = Σ_j y_j α_j K(x, x_j) + b``.

        Parameters
        ----------
        X : array of shape (n_samples, n_features)
            In the model's namespace and on its device.

        Returns
        -------
        f : array of shape (n_samples,), float64
            Positive for ``classes_[1]``.

        Raises
        ------
        ValueError, TypeError
            As :meth:`fit` for X.
        """
        check_is_fitted(self, "state_")
        s = self.state_
        X, _, _ = check_X(X, "X", s.X.shape[1], s.xp, s.device)
        return self.kernel_(X, self.support_vectors_) @ self.dual_coef_[0, :] + self.intercept_[0]

    def predict(self, X):
        """Class labels of X: ``classes_[1]`` where ``decision_function(X) > 0``.

        Returns
        -------
        labels : ndarray of shape (n_samples,) (host NumPy; labels may be strings)
        """
        return self.classes_[(to_host(self.decision_function(X)) > 0).astype(int)]

    def score(self, X, y, sample_weight=None):
        """Mean accuracy of :meth:`predict` on (X, y)."""
        labels = to_host(y) if not isinstance(y, (list, tuple)) else np.asarray(y)
        return float(np.average(self.predict(X) == labels, weights=sample_weight))

    def check_kkt(self) -> float:
        """Largest KKT violation of the model, recomputed from scratch.

        Recomputes every margin ``y_i f(x_i)`` from α with fresh kernel values (O(n·n_SV)
        kernel evaluations) and returns the largest of: the stationarity violations
        (``1 − y f`` where α < C, ``y f − 1`` where α > 0; units of y f) and the
        feasibility violations of ``yᵀα = 0`` and ``0 ≤ α ≤ C`` divided by C.

        Returns
        -------
        violation : float
        """
        check_is_fitted(self, "state_")
        s = self.state_
        f = self.kernel_(s.X, self.support_vectors_) @ self.dual_coef_[0, :] + s.b
        yf = to_host(s.y * f) + s.ridge * s.alpha
        g = yf - 1.0
        alpha, C = s.alpha, s.C
        stat = np.concatenate([np.where(alpha < C, -g, -np.inf), np.where(alpha > 0, g, -np.inf)])
        feas = max(abs(float(s.y_host @ alpha)), float(np.max(-alpha)), float(np.max(alpha - C))) / C
        return float(max(stat.max(), feas, 0.0))

    # ------------------------------------------------------------------ internals
    def _check_params(self) -> dict:
        return {
            "C": check_positive(self.C, "C"),
            "ridge": check_positive(self.ridge, "ridge", allow_zero=True),
            "tol": check_positive(self.tol, "tol"),
            "method": check_choice(self.method, "method", ("multiple", "single")),
        }

    def _check_state(self, state: SVCState) -> None:
        """Cheap check of the maintained margins against the KKT conditions (units of y f)."""
        xp, tol = state.xp, check_positive(self.tol, "tol")
        viol = float(xp.max(state.side * (1.0 - state.yf))) if state.n else 0.0
        if state.margin:
            m_dev = to_device(np.array(state.margin), xp, state.device)
            viol = max(viol, float(xp.max(xp.abs(xp.take(state.yf, m_dev) - 1.0))))
        a = state.alpha
        feas = max(abs(float(state.y_host @ a)), float(np.max(-a, initial=0)), float(np.max(a - state.C, initial=0)))
        viol = max(viol, feas / state.C)
        if viol > tol:
            from ._path import PathError

            raise PathError(
                f"the path ended with a KKT violation of {viol:.3g} > tol={tol:g}; "
                "the model is unchanged"
            )

    def _commit(self, state, classes, kernel, ids, next_id, stats) -> None:
        xp = state.xp
        support = np.flatnonzero(state.alpha > 0)
        sv_dev = to_device(support, xp, state.device)
        dual = to_device(state.y_host[support] * state.alpha[support], xp, state.device)
        support_vectors = xp.take(state.X, sv_dev, axis=0)
        intercept = xp.asarray([state.b], dtype=xp.float64, device=state.device)
        pos = state.y_host[support] > 0
        # Everything is computed before the first attribute is set.
        self.state_ = state
        self.classes_ = classes
        self.kernel_ = kernel
        self.n_features_in_ = int(state.X.shape[1])
        self.sample_ids_ = ids
        self._next_id = int(next_id)
        self.alpha_ = state.alpha.copy()
        self.support_ = support
        self.support_vectors_ = support_vectors
        self.dual_coef_ = xp.reshape(dual, (1, -1))
        self.intercept_ = intercept
        self.n_support_ = np.array([np.count_nonzero(~pos), np.count_nonzero(pos)], dtype=np.int32)
        self.last_update_ = stats
