"""IncrementalSVR: an exact ε-SVR that adds and removes many points along one path.

ε-SVR in the notation of ../shared/DESIGN.md (which has no section of its own for it: this is
that section). Its dual, ``min ½ βᵀKβ + ε Σ|β_i| − yᵀβ`` s.t. ``−C_i ≤ β_i ≤ C_i``,
``1ᵀβ = 0``, is C-SVC's with a linear term once each point is written twice (LIBSVM's form):
row 2i holds α_i (label +1), row 2i + 1 holds α*_i (label −1), β_i = α_i − α*_i, and each
row's margin level is ``y'_i y_i − ε`` instead of 1. gpath's path state keeps each stored
margin shifted by ``1 − level`` (:attr:`gpath._path.SVCState.shift`), so every level reads 1
and the machinery of C-SVC runs on it unchanged:

- the sets: a point strictly inside the tube has both rows in O; a point on an edge of the
  tube (``y_i − f(x_i) = ±ε``) has one row in M; a point outside it one row at its bound C_i
  in I (the other row in O); at ε = 0 both rows of a point on f sit at their level, so the
  doubled problem admits α_i, α*_i both positive, and every fit and update ends by keeping
  one of them (:func:`one_row_per_point`);
- the direction and the events of the MID path (Karasuyama & Takeuchi 2009, eqs. 10–11,
  section 3.2) are those of the doubled problem: a margin coefficient reaching 0 or C_i, a
  row's margin reaching its level (a point reaching an edge of the tube);
- the empty margin (section 3.3): with no point on an edge, b is only bounded (an interval
  set by the rows at their bounds); an update moves b by section 3.3's rule until a row
  reaches its level, the C path keeps b fixed until one does (an optimal choice), and a fit
  takes the middle of the interval;
- along C (:mod:`gpath.svrpath`, Gunter & Zhu 2007) the levels do not move, so the C path
  of :mod:`gpath._cpath` is the ε-SVR path as well.

A fit starts from SMO's approximate solution of the doubled problem (LIBSVM's tolerance, on
the n × n float32 matrix of the points, :func:`gpath._smo.smo`), and SimpleSVM finishes it
exactly; the engines, the cache and the ratio test are the ones of C-SVC, with no second copy
of the path.
"""

from __future__ import annotations

import copy
import time
from contextlib import ExitStack

import numpy as np
from numba import njit
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.metrics import r2_score
from sklearn.utils.validation import check_is_fitted

from ._array_api import get_namespace_and_device, scalars, to_device, to_host
from ._base import MemoizedParams, PublishedOnRead, path_failed, serialized, update_or_refit
from ._incremental_file import restored_pair
from ._path import (
    I,
    M,
    O,
    PathError,
    PathStats,
    SVCState,
    check_resolution,
    check_state,
    kkt_violation,
    resolves,
)
from ._simplesvm import exact_state, exact_update, refined_or_polished, smo_point
from ._validation import (
    check_choice,
    check_feature_names,
    check_ids,
    check_positive,
    check_rows,
    check_sample_weight,
    check_targets,
    check_X,
    feature_names,
    numeric_targets,
)
from ._warmup import warm_compiled_update
from .cache import max_columns
from .incremental import _refit_is_cheaper
from .kernels import Kernel, check_saveable, kernel_products
from .persistence import ModelFileError, SaveMixin

__all__ = ["IncrementalSVR"]

_KERNEL_PARAMS = ("kernel", "gamma", "degree", "coef0")


class IncrementalSVR(MemoizedParams, PublishedOnRead, SaveMixin, RegressorMixin, BaseEstimator):
    """Exact ε-SVR, updated by multiple incremental decremental learning.

    Solves ``min ½ βᵀ(K + ridge·I)β + ε Σ|β_i| − yᵀβ`` s.t. ``−C_i ≤ β_i ≤ C_i``, ``Σβ = 0``
    (``C_i = C · sample_weight_i``; the ridge on each of a point's two rows, see
    :func:`gpath.reference.exact_svr`) exactly, to float64 round-off, with
    ``f(x) = Σ_j β_j K(x, x_j) + b``, scikit-learn's ``SVR``, and keeps it exact while points
    are added and removed: ``update`` adds m points and removes ℓ points along one
    multi-parametric path (Karasuyama & Takeuchi 2009, section 3.2, on ε-SVR's doubled
    dual: module docstring); ``method="single"`` moves one point at a time instead (the
    accurate online SVR of Ma, Theiler & Perkins 2003: the baseline).

    Parameters
    ----------
    C : float, default=1.0
        Box constraint, > 0.
    epsilon : float, default=0.1
        Half-width of the ε-insensitive tube, ≥ 0 (units of y).
    kernel : {"linear", "rbf", "poly"} or callable, default="rbf"
    gamma : float or {"scale", "auto"}, default="scale"
    degree : int, default=3
    coef0 : float, default=0.0
        As in scikit-learn's ``SVR``; ``"scale"`` and ``"auto"`` are resolved on the rows given
        to :meth:`fit` and stay fixed for later updates (``kernel_.gamma``).
    method : {"auto", "multiple", "single"}, default="auto"
        How ``update`` moves the solution: "multiple", one path for all its points; "single",
        one path per point (added in order, then removed); "auto", the path, or SimpleSVM
        warm-started from the current β where a large update makes that the cheaper way
        (:class:`gpath.IncrementalSVC`'s rule, on the doubled rows; SMO first moves the current
        β, at ten times LIBSVM's tolerance).
    ridge : float, default=1e-6
        ≥ 0, added to the diagonal of the doubled Q (keeps the margin matrix regular with
        duplicate points).
    tol : float, default=1e-9
        Every fit and update ends with the maintained margins' KKT violation at most ``tol``
        relative to their scale, or fails and leaves the model unchanged.
    cache_size : float, default=1024
        MB of kernel columns kept on the device (2n values each).

    Attributes
    ----------
    support_ : ndarray of shape (n_SV,), int64
        Rows (training order) with β_i ≠ 0.
    support_vectors_ : array of shape (n_SV, n_features)
        Their inputs (the model's namespace and device).
    dual_coef_ : array of shape (1, n_SV)
        Their β_i.
    intercept_ : array of shape (1,)
        b.
    n_support_ : ndarray of shape (1,), int32
    sample_ids_ : ndarray of shape (n_samples,), int64
        Id of each training row, in training order (``update``'s ``remove`` takes them);
        ``fit`` numbers the rows 0..n−1, each update numbers its points on from there.
    kernel_ : Kernel
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features,)
        Where ``fit`` got a DataFrame with string column names.
    n_iter_ : int
        SimpleSVM iterations (``fit``, a refit) or breakpoints (``update``) that made the model.
    fit_status_ : int
        0.
    shape_fit_ : tuple
        (n_samples, n_features) of the model's rows.
    last_update_ : PathStats
        What the last ``fit`` or ``update`` did.
    state_ : SVCState
        The path state of the doubled problem (rows 2i and 2i + 1 of training row i).

    References
    ----------
    M. Karasuyama and I. Takeuchi, "Multiple incremental decremental learning of support
    vector machines", NIPS 2009 / IEEE TNN 2010, section 3. J. Ma, J. Theiler and S. Perkins,
    "Accurate on-line support vector regression", Neural Computation 15(11), 2003.
    S. V. N. Vishwanathan, A. J. Smola and M. N. Murty, "SimpleSVM", ICML 2003 (the fit).
    """

    _FITTED_ATTRIBUTES = frozenset({
        "support_", "support_vectors_", "dual_coef_", "intercept_", "n_support_", "sample_ids_", "kernel_",
        "n_features_in_", "feature_names_in_", "n_iter_", "fit_status_", "shape_fit_", "last_update_",
        "_X", "_y", "_weights", "_next_id", "_epsilon", "_kernel_params", "_saved_state",
    })
    # What an update leaves to publish when first read (PublishedOnRead): the layout of β.
    _PUBLISHED_ON_READ = ("support_", "support_vectors_", "dual_coef_", "intercept_", "n_support_")
    _OPTIONAL_ATTRIBUTES = SaveMixin._OPTIONAL_ATTRIBUTES + _PUBLISHED_ON_READ

    def __init__(self, C=1.0, epsilon=0.1, kernel="rbf", gamma="scale", degree=3, coef0=0.0, method="auto",
                 ridge=1e-6, tol=1e-9, cache_size=1024):
        self.C = C
        self.epsilon = epsilon
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.method = method
        self.ridge = ridge
        self.tol = tol
        self.cache_size = cache_size

    @property
    def state_(self) -> SVCState:
        """The path state of the doubled problem (rows 2i and 2i + 1 of training row i).

        Raises
        ------
        AttributeError
            Before ``fit``.
        """
        state = self.__dict__.get("_state")
        if state is None:
            raise AttributeError("state_ is set by fit")
        return state

    # ------------------------------------------------------------------ fitting
    @serialized
    def fit(self, X, y, sample_weight=None):
        """Train on (X, y) from scratch: SMO's approximate solution of the doubled dual, then
        SimpleSVM from it to the exact one (module docstring).

        Parameters
        ----------
        X : array of shape (n_samples, n_features)
            Any array-API array (NumPy, CuPy, ...) or array-like; converted to float64.
        y : array-like of shape (n_samples,)
            Real targets.
        sample_weight : array-like of shape (n_samples,) or None
            Point i's box is ``C · sample_weight_i``; a point of weight ≤ 0 is kept (it has an
            id and can be removed) but inert (β_i = 0), as ``SVR`` reads it.

        Returns
        -------
        self

        Raises
        ------
        ValueError
            Bad parameters, non-finite or mis-shaped X or y, y not real numbers,
            ``sample_weight`` of another length, NaN or all ≤ 0.
        TypeError
            Non-numeric X.
        PathError, SingularMarginError, CacheFullError
            A numerical failure; the estimator is unchanged.
        """
        params = self._check_params()
        name = type(self).__name__
        names = feature_names(X)
        X, _, _ = check_X(X, owner=name)
        if y is None:
            raise ValueError(f"{name} requires y to be passed, but the target y is None")
        y = check_targets(numeric_targets(y), X.shape[0])
        weights = check_sample_weight(sample_weight, X.shape[0], inert_negative=True)
        weights = np.ones(X.shape[0]) if weights is None else weights
        start = time.perf_counter()
        kernel = Kernel.from_params(self.kernel, self.gamma, self.degree, self.coef0, X)
        state, n_iter = self._trained(X, y, weights, kernel, params, None)
        state.prepare_updates()  # (before the attributes: _X is a view of its rows)
        n = X.shape[0]
        stats = PathStats(n_iter, n, 0, time.perf_counter() - start, state.active.size, "fit")
        attrs = self._attributes(state, y, weights, np.arange(n, dtype=np.int64), n, stats, n_iter,
                                 self._published_of(state))
        attrs["_epsilon"] = params["epsilon"]
        self._set_fitted({**attrs, "kernel_": kernel, "feature_names_in_": names,
                          "_kernel_params": {key: getattr(self, key) for key in _KERNEL_PARAMS},
                          **self._memo_of(params)})  # (the first update's parameter checks: fit's)
        warm_compiled_update(get_namespace_and_device(X)[0])  # the first update costs what later ones do
        return self

    def _trained(self, X, y, weights, kernel, params, start) -> tuple[SVCState, int]:
        """The exact state on (X, y) by SimpleSVM from SMO's approximate solution
        (:func:`gpath._simplesvm.smo_point`) started at the doubled point ``start`` (host, 2n;
        None: 0), ready to update, and its iterations.

        SMO first also from a nearby solution (a large update's refit): SimpleSVM from that
        point enters and drops margin points one factor update at a time (make_friedman1
        n = 10,000 standardized, m = ℓ = 100: 725 deletions from a margin set of 3,462)."""
        X2, y2, shift = doubled(X, y, params["epsilon"])
        w2 = np.repeat(weights, 2)
        w2 = None if np.all(w2 == 1.0) else w2
        start = smo_point(X, y2, kernel, params["C"], params["ridge"], weights=w2, shift=shift,
                          source=np.repeat(np.arange(X.shape[0]), 2), start=start)
        state, simple = exact_state(X2, y2, kernel, params["C"], params["ridge"], start=start,
                                    weights=w2, shift=shift, twins=True)
        state.cache = state.cache.with_spare_rows()  # room for the first updates
        state.cache.max_columns = max_columns(params["cache_size"], state.n)
        state.cache.check_limit()
        one_row_per_point(state, y, params)
        _check_state(state, y, params)
        return state, simple.n_iter

    @serialized
    def partial_fit(self, X, y, sample_weight=None):
        """Add the rows (X, y) to the model: :meth:`fit` on the first call, :meth:`update`
        after.

        Parameters
        ----------
        X : array of shape (m, n_features)
        y : array-like of shape (m,)
        sample_weight : array-like of shape (m,) or None

        Returns
        -------
        self

        Raises
        ------
        ValueError, TypeError, PathError
            As :meth:`fit` (first call) or :meth:`update`.
        """
        if "_state" not in self.__dict__:
            return self.fit(X, y, sample_weight)
        return update_or_refit(self._update, X, y, None, sample_weight, "X", "y", "sample_weight")

    @serialized
    def update(self, X_add=None, y_add=None, remove=None, sample_weight_add=None):
        """Add the rows (X_add, y_add) and remove the points ``remove`` along one path.

        Parameters
        ----------
        X_add : array of shape (m, n_features) or None
            New points, in the namespace and on the device of the training data.
        y_add : array-like of shape (m,) or None
            Their targets.
        remove : int, array-like of int of shape (ℓ,), or None
            Sample ids (``sample_ids_``) of the points to remove.
        sample_weight_add : array-like of shape (m,) or None
            Weights of the added points (boxes ``C · w``; ≤ 0: inert); None: 1.

        Returns
        -------
        self

        Raises
        ------
        ValueError
            Mis-shaped or non-finite X_add or y_add, X_add without y_add, repeated ids, an
            update that would leave no point, bad ``sample_weight_add``, or C, epsilon, ridge
            or a kernel parameter changed by ``set_params`` since ``fit`` (call fit again).
        KeyError
            An id in ``remove`` that is not in the model.
        TypeError
            X_add in another namespace or on another device than the model, or ``remove``
            not integers.
        PathError, SingularMarginError, CacheFullError
            A numerical failure part-way; the model is unchanged. (A path that fails with a
            PathError, degenerate cycling among duplicate points, or a SingularMarginError, a
            margin matrix numerically singular, is taken over by an exact refit of each
            changed pair, warm-started: ``last_update_.method`` "refit"; only that refit's
            own failure is raised.)

        Notes
        -----
        A failed call, for any reason, leaves the model exactly as it was: the path works on a
        copy of the state, which replaces the model's at the end.
        """
        if "_state" not in self.__dict__:  # (scikit-learn's check, which reads the tags, took 2 µs)
            check_is_fitted(self, "_state")
        return update_or_refit(self._update, X_add, y_add, remove, sample_weight_add, "X_add", "y_add",
                               "sample_weight_add")

    @serialized
    def _window_update(self, X_add, targets: np.ndarray, n_oldest: int):
        """:meth:`update` for :mod:`gpath.river`'s window, which built its arguments itself: the
        rows ``X_add`` (finite float64 rows of the model's features, in its namespace and on its
        device) with their finite float64 ``targets`` added, the ``n_oldest`` oldest points
        removed, no weights, and the model's parameters as it fitted them. The checks of
        :meth:`update` that these pass by construction are not made (issue 18); the update
        itself is :meth:`update`'s."""
        return update_or_refit(self._update, X_add, targets, n_oldest, None, "X_add", "y_add", "sample_weight_add",
                               trusted=True)

    def _update(self, X_add, y_add, remove, sample_weight_add, x_name, y_name, w_name, refit=False,
                trusted=False):
        params = self._check_params()
        if not trusted:
            self._check_unchanged(params)
        state = self._state
        xp, device = state.xp, state.device
        name = type(self).__name__
        d = state.X.shape[1]
        if X_add is not None and y_add is None and x_name == "X":
            raise ValueError(f"{name} requires y to be passed, but the target y is None")
        if (X_add is None) != (y_add is None):
            raise ValueError(f"{x_name} and {y_name} must be given together")
        if X_add is None:
            if sample_weight_add is not None:
                raise ValueError(f"{w_name} needs {x_name}: it weights the added points")
            X_add, y_new = xp.zeros((0, d), dtype=xp.float64, device=device), np.zeros(0)
        elif trusted:  # (_window_update)
            y_new = y_add
        else:
            check_feature_names(self, X_add, x_name)
            X_add, _, _ = check_X(X_add, x_name, d, xp, device, owner=name)
            y_new = check_targets(numeric_targets(y_add), X_add.shape[0], y_name, x_name)
        m = X_add.shape[0]
        if trusted:
            w_add, rows = np.ones(m), np.arange(remove, dtype=np.int64)
        else:
            w_add = check_sample_weight(sample_weight_add, m, w_name, allow_all_zero=True, inert_negative=True)
            w_add = np.ones(m) if w_add is None else w_add
            rows = check_ids([] if remove is None else remove, self.sample_ids_)
        if rows.size > 1:
            rows = np.sort(rows)
        n_after = self._y.shape[0] - rows.size + m
        if n_after == 0:
            raise ValueError(f"the update would leave no point in the model (it holds {self._y.shape[0]}, "
                             f"removes {rows.size}, adds none)")
        weights, y, ids, remove2 = _rows_after(rows, self._weights, self._y, self.sample_ids_, w_add,
                                               np.ascontiguousarray(y_new, dtype=np.float64), self._next_id)
        if not (weights > 0).any():
            raise ValueError("the update would leave only points of weight 0 in the model")
        start = time.perf_counter()
        with ExitStack() as stack:
            if refit or (params["method"] == "auto" and _refit_is_cheaper(state, remove2, 2 * m)):
                kept = np.delete(np.arange(state.n), remove2)
                X_new = xp.concat([xp.take(state.X[0::2, :], to_device(np.delete(np.arange(state.n // 2), rows),
                                                                        xp, device), axis=0), X_add], axis=0)
                new, n_bp = self._trained(X_new, y, weights, self.kernel_, params,
                                          np.concatenate([state.alpha[kept], np.zeros(2 * m)]))
                way = "refit"
            else:
                stack.enter_context(state.cache.transaction())
                X2, y2, shift = doubled(X_add, y_new, params["epsilon"])
                limit = max_columns(params["cache_size"], state.n + 2 * m)
                with path_failed():
                    new, n_bp, checked = exact_update(state, X2, y2, remove2, limit, params["method"],
                                                      params["C"] * np.repeat(w_add, 2), params["tol"], shift,
                                                      rows_per_point=2)
                    if one_row_per_point(new, y, params):
                        checked = None
                    _check_state(new, y, params, checked)
                way = "path"
            stats = PathStats(n_bp, m, int(rows.size), time.perf_counter() - start, new.active.size, way)
            attrs = self._attributes(new, y, weights, ids, self._next_id + m, stats, n_bp,
                                     self._renumbered(rows) if way == "path" and new.unmoved else None)
        self._set_fitted({**attrs, **self._memo_of(params)})
        if way == "path":
            new.factor.take_spare(state.factor)  # the spent state's factor takes the next copy
        return self

    # ------------------------------------------------------------------ prediction
    @serialized
    def predict(self, X):
        """f(x) = Σ_j β_j K(x, x_j) + b.

        Parameters
        ----------
        X : array of shape (n_samples, n_features)
            In the model's namespace and on its device (or array-like, for NumPy models).

        Returns
        -------
        f : array of shape (n_samples,), float64
            In the model's namespace and on its device.

        Raises
        ------
        sklearn.exceptions.NotFittedError
        ValueError, TypeError
            As ``update``'s X_add.
        """
        check_is_fitted(self, "dual_coef_")
        X = self._checked_input(X)
        xp, device = get_namespace_and_device(self.support_vectors_)
        if not self.support_.size:
            return xp.full(X.shape[0], scalars(xp, self.intercept_[0])[0], dtype=xp.float64, device=device)
        n = X.shape[0]
        parts = [self.kernel_(X[lo : min(lo + 2048, n), :], self.support_vectors_) @ self.dual_coef_[0, :]
                 for lo in range(0, n, 2048)]
        f = xp.concat(parts) if parts else xp.zeros(0, dtype=xp.float64, device=device)
        return f + self.intercept_[0]

    def _checked_input(self, X):
        return check_rows(self, X, self.support_vectors_)

    @serialized
    def score(self, X, y, sample_weight=None):
        """R² of ``predict(X)`` against y (scikit-learn's ``r2_score``, on the host).

        Raises
        ------
        ValueError
            As :meth:`predict`, or y not real numbers of X's length.
        """
        f = to_host(self.predict(X))
        y = check_targets(numeric_targets(y), f.shape[0])
        return float(r2_score(y, f, sample_weight=sample_weight))

    @serialized
    def check_kkt(self, X=None, y=None) -> float:
        """Largest KKT violation of the model, recomputed from scratch, relative to the scale
        of the problem.

        Recomputes f on the training rows from ``dual_coef_`` and ``intercept_`` with fresh
        kernel values (O(n·n_SV) kernel evaluations) and checks the doubled dual's conditions
        (module docstring; Karasuyama & Takeuchi 2009, eqs. 1a–1d with each row's level
        ``y'_i y_i − ε``): a point inside the tube must have β_i = 0, one on its edge
        0 ≤ ±β_i ≤ C_i, one outside |β_i| = C_i. Stationarity violations (units of f) are
        divided by ``1 + max_i Σ_j |K_ij| |β_j| + max_i |1 + ε ∓ y_i|`` (the size of the terms of
        a margin), those of Σβ = 0 and of the boxes by C.

        Parameters
        ----------
        X : array of shape (n_samples, n_features) or None
            The training inputs (None: the model's own rows).
        y : array-like of shape (n_samples,) or None
            Their targets.

        Returns
        -------
        violation : float

        Raises
        ------
        sklearn.exceptions.NotFittedError
        ValueError
            X without y, or rows that do not match the model's.
        """
        check_is_fitted(self, "dual_coef_")
        if (X is None) != (y is None):
            raise ValueError("X and y must be given together (or neither: the model's own rows)")
        if X is None:
            X, y = self._X, self._y
        else:
            X = self._checked_input(X)
            y = check_targets(numeric_targets(y), X.shape[0])
            if X.shape[0] != self._y.shape[0]:
                raise ValueError(f"X must hold the model's {self._y.shape[0]} training rows; got {X.shape[0]}")
        return self._violation(X, y, self.state_.alpha)

    def _violation(self, X, y, alpha) -> float:
        """check_kkt's rule for the doubled coefficients ``alpha`` (host, 2n) on rows (X, y)."""
        b = float(to_host(self.intercept_)[0])
        s = self.state_
        return kkt_violation_svr(self.kernel_, self.support_vectors_, self.dual_coef_[0, :], b, X, y, alpha,
                                 s.C * np.repeat(self._weights, 2), self._epsilon, s.ridge, s.C)

    # ------------------------------------------------------------------ internals
    _CHECKED = ("C", "epsilon", "ridge", "tol", "method", "cache_size")

    def _checked_params(self) -> dict:
        return {
            "C": check_positive(self.C, "C"),
            "epsilon": check_positive(self.epsilon, "epsilon", allow_zero=True),
            "ridge": check_positive(self.ridge, "ridge", allow_zero=True),
            "tol": check_positive(self.tol, "tol"),
            "method": check_choice(self.method, "method", ("auto", "multiple", "single")),
            "cache_size": check_positive(self.cache_size, "cache_size"),
        }

    def _check_unchanged(self, params) -> None:
        """C, epsilon, ridge and the kernel must be those of fit: an update moves the fitted
        problem's solution."""
        s = self._state
        fitted = {"C": s.C, "epsilon": self._epsilon, "ridge": s.ridge, **self._kernel_params}
        now = {"C": params["C"], "epsilon": params["epsilon"], "ridge": params["ridge"],
               **{key: getattr(self, key) for key in _KERNEL_PARAMS}}
        changed = [key for key in fitted if fitted[key] != now[key]]
        if changed:
            was = ", ".join(f"{key}={fitted[key]!r}" for key in changed)
            is_ = ", ".join(f"{key}={now[key]!r}" for key in changed)
            raise ValueError(f"{', '.join(changed)} cannot change between fit and update (fitted with {was}; "
                             f"now {is_}); call fit again")

    def _attributes(self, state, y, weights, ids, next_id, stats, n_iter, published) -> dict:
        """Every fitted attribute of ``state``, computed before the first one is set;
        ``published``: the attributes of ``_PUBLISHED_ON_READ`` (:meth:`_published_of`), or
        None to publish them when first read."""
        X = state.X[0::2, :]
        n, d = X.shape
        return {
            "_state": state, "_X": X, "_y": y, "_weights": weights,
            **({"_unpublished": True} if published is None else published),
            "sample_ids_": ids, "_next_id": int(next_id), "last_update_": stats,
            "n_iter_": int(n_iter), "fit_status_": 0, "shape_fit_": (int(n), int(d)),
            "n_features_in_": int(d),
        }

    @staticmethod
    def _published_of(state) -> dict:
        """The support vectors and coefficients β = α − α* of ``state``."""
        xp, device = state.xp, state.device
        support, coef = support_layout(state.alpha)
        return {
            "support_": support,
            "support_vectors_": xp.take(state.X[0::2, :], to_device(support, xp, device), axis=0),
            "dual_coef_": to_device(coef[None, :], xp, device),
            "intercept_": to_device(np.array([state.b]), xp, device),
            "n_support_": np.array([support.size], dtype=np.int32),
        }

    def _publish(self) -> dict:
        return self._published_of(self._state)

    def _renumbered(self, removed: np.ndarray) -> dict | None:
        """The published solution of an update whose path moved no coefficient: this model's,
        each support vector moved up by the points ``removed`` (increasing) before it, none of
        them one; None where this model's is not published either."""
        if self.__dict__.get("_unpublished"):
            return None
        return {"support_": self.support_ - np.searchsorted(removed, self.support_),
                **{name: getattr(self, name) for name in self._PUBLISHED_ON_READ[1:]}}

    def __copy__(self):
        """An independent model: the state is copied too (an update reuses the device cache
        of the state it starts from, so two models must not share one)."""
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        if "_state" in self.__dict__:
            new._state = copy.deepcopy(self._state)
            new._X = new._state.X[0::2, :]  # a view of the state's rows, which updates write past
        return new

    # ------------------------------------------------------------------ persistence
    @serialized
    def _to_saved(self):
        """The fitted attributes and the path state's α, b, sets, margin set (factor order)
        and margins, so that a loaded model goes on updating exactly (holding the lock: it
        publishes the support vectors, then reads every attribute)."""
        if "_state" not in self.__dict__:
            raise TypeError(f"model must be a fitted gpath estimator; {type(self).__name__} is not fitted")
        check_saveable(self.kernel_, type(self).__name__)
        self._published()  # (a file holds the support vectors and coefficients)
        s = self._state
        plain = object.__new__(type(self))
        # (not the parameters' memo: a cache of the checks, made anew by the next update)
        plain.__dict__.update({k: v for k, v in self.__dict__.items() if k not in ("_state", "_params_memo")})
        plain._saved_state = {"alpha": s.alpha, "b": s.b, "C": s.C, "ridge": s.ridge,
                              "where": s.where.astype(np.int8), "margin": s.margin.astype(np.int64),
                              "yf": to_host(s.yf)}
        return SaveMixin._to_saved(plain)

    def _check_loaded(self) -> None:
        """Rebuild the path state from the file's and check it: sets against α and the boxes,
        the KKT conditions recomputed from scratch (to ``tol``), the saved margins against the
        recomputed ones.

        Raises
        ------
        ModelFileError
        """
        saved = self.__dict__.pop("_saved_state", None)
        if not isinstance(saved, dict) or set(saved) != {"alpha", "b", "C", "ridge", "where", "margin", "yf"}:
            raise ModelFileError("the file holds no IncrementalSVR path state")
        params = self._check_params()
        y, weights = np.asarray(self._y, dtype=np.float64), np.asarray(self._weights, dtype=np.float64)
        n = y.shape[0]
        if self._X.shape[0] != n or weights.shape != (n,) or np.any(weights < 0):
            raise ModelFileError(f"X, y and the weights must have one row per point ({n}); weights >= 0")
        for key in ("alpha", "yf", "where"):
            if np.asarray(saved[key]).shape != (2 * n,):
                raise ModelFileError(f"the state's {key} must have 2n = {2 * n} entries")
        C = check_positive(saved["C"], "C")
        ridge = check_positive(saved["ridge"], "ridge", allow_zero=True)
        if C != params["C"] or ridge != params["ridge"]:
            raise ModelFileError(f"the state's C={C}, ridge={ridge} differ from the parameters'")
        xp, device = get_namespace_and_device(self._X)
        X2, y2, shift = doubled(self._X, y, params["epsilon"])
        state = restored_pair(xp, device, X2, to_host(y2), self.kernel_, C, ridge, np.asarray(saved["alpha"]),
                               saved["b"], np.asarray(saved["where"]), np.asarray(saved["yf"]),
                               np.asarray(saved["margin"]), C * np.repeat(weights, 2), params["tol"], None, shift)
        state.cache = state.cache.with_spare_rows()
        state.cache.max_columns = max_columns(params["cache_size"], state.n)
        state.twins = True
        state.prepare_updates()
        self._state = state
        violation = self._violation(self._X, y, state.alpha)
        if violation > params["tol"]:
            raise ModelFileError(f"alpha and b violate the KKT conditions by {violation:.3g} relative to their "
                                 f"scale, recomputed from scratch (allowed: tol={params['tol']:g})")
        fresh = to_host(state.margins_from_alpha())
        drift = float(np.max(np.abs(fresh - to_host(state.yf)), initial=0.0))
        if drift > params["tol"] * state.kkt_scale():
            raise ModelFileError(f"the saved margins differ by {drift:.3g} from those recomputed from X, y, "
                                 f"alpha and b")
        try:
            _check_state(state, y, params)
        except PathError:
            raise ModelFileError("the saved margins violate the KKT conditions of their index sets") from None


# ---------------------------------------------------------------------- helpers
@njit(cache=True)
def _rows_after(rows, weights, y, ids, w_add, y_add, next_id):  # pragma: no cover - compiled
    """The points' weights, targets and ids after an update that removes the points ``rows``
    (increasing) and appends m new ones (ids from ``next_id``), and the doubled problem's rows
    to remove (both rows of each point): one pass, where a stream's one-point update paid for
    a dozen NumPy steps."""
    n, m, ell = weights.shape[0], w_add.shape[0], rows.shape[0]
    weights2, y2, ids2 = np.empty(n - ell + m), np.empty(n - ell + m), np.empty(n - ell + m, dtype=np.int64)
    remove2 = np.empty(2 * ell, dtype=np.int64)
    t = r = 0
    for i in range(n):
        if r < ell and rows[r] == i:
            remove2[2 * r], remove2[2 * r + 1] = 2 * i, 2 * i + 1
            r += 1
            continue
        weights2[t], y2[t], ids2[t] = weights[i], y[i], ids[i]
        t += 1
    for j in range(m):
        weights2[t + j], y2[t + j], ids2[t + j] = w_add[j], y_add[j], next_id + j
    return weights2, y2, ids2, remove2


def support_layout(alpha: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The support vectors (points of β_i = α_i − α*_i ≠ 0, increasing; int64) and their β, of
    the doubled coefficients ``alpha`` (host, 2n)."""
    beta = alpha[0::2] - alpha[1::2]
    support = np.flatnonzero(beta).astype(np.int64)
    return support, beta[support]


def one_row_per_point(state: SVCState, y, params: dict) -> bool:
    """Leave at most one of each point's two rows with a positive coefficient (in place);
    whether any point had both.

    At ε = 0 (with a ridge negligible beside K) the two rows of a point on the regression
    function have margins that sum to 2, both at the level 1, so α_i = C, α*_i = C − β_i is as
    optimal as α_i = β_i, α*_i = 0: the doubled problem does not pin the split, and the path or
    SimpleSVM can end with both rows positive (targets linear in features of size 1e4, a linear
    kernel: α_i = C, α*_i = C − 9e-9). Its own KKT check passes on the scale that the split
    inflates (C · max K for β near 1e-8), while ``check_kkt()``, on β, fails by 1e-9 to 1e-6.
    Taking min(α_i, α*_i) from both keeps β, f and yᵀα; a row left strictly inside its box
    joins the margin set (both margins are at the level), and the margin equations are
    re-solved on the smaller scale, finished by SimpleSVM where that does not meet ``tol``
    (:func:`gpath._simplesvm.refined_or_polished`).

    Parameters
    ----------
    state : SVCState
        The doubled problem's solution; rows 2i and 2i + 1 are α_i and α*_i.
    y : ndarray of shape (n_samples,)
        The targets (host), for the unit of :func:`resolution_unit`.
    params : dict
        The checked parameters (``epsilon``, ``tol``).

    Raises
    ------
    PathError
        Float64 does not resolve the margins on the split-free scale
        (:func:`gpath._path.check_resolution`), or as :func:`gpath._simplesvm.polish`.
    SingularMarginError
        A row joining the margin set makes its matrix singular.
    """
    if state.unmoved:  # (the factor is the spent state's, whose split was checked)
        return False
    alpha = state.alpha
    common = np.minimum(alpha[0::2], alpha[1::2])  # (α ≥ 0: positive where both are; 5–10 µs at n = 600)
    if not common.any():
        return False
    entering = []
    for i in np.flatnonzero(common).tolist():
        for k in (2 * i, 2 * i + 1):
            if state.where[k] == M:
                state.active.leave(k)
            alpha[k] = max(alpha[k] - common[i], 0.0)
            state.place(k, I if alpha[k] > 0.0 else O)  # (I until it enters: the scale counts its α)
            if 0.0 < alpha[k] < state.upper[k]:
                entering.append(k)
    # Where the kernel values are beyond float64 the margin matrix turns singular as the rows
    # enter: refuse such a problem as every fit does, on the scale now free of the split.
    check_resolution(state, *resolution_unit(state, y, params["epsilon"]))
    for k in entering:
        state.active.enter(k, float(state.y_host[k]))
        state.place(k, M)
    state.yf = state.margins_from_alpha()  # (β's terms, free of the split's C-sized ones)
    refined_or_polished(state, params["tol"])
    return True


def _check_state(state, y, params, checked=None) -> None:
    """:func:`gpath._path.check_state` in the units of ε-SVR (:func:`resolution_unit`)."""
    check_state(state, params["tol"], checked, *resolution_unit(state, y, params["epsilon"]))


def resolution_unit(state, y, epsilon: float) -> tuple[float, str]:
    """The unit to which float64 must resolve an ε-SVR's f, and its name, for
    :func:`gpath._path.check_resolution`: a fraction of the targets' spread (:func:`_spread`,
    or ε if larger; 1 for constant targets and ε = 0), not of the doubled problem's margin
    level, which sits at y_i ± ε. Where float64 resolves f to ε already
    (:func:`gpath._path.resolves`), ε settles it without the spread."""
    if epsilon > 0.0 and resolves(state, epsilon):
        unit = epsilon  # the unit is at least ε, and float64 resolves f to ε: no need of the spread
    else:
        unit = max(_spread(y), epsilon) or 1.0
    return unit, f"the targets' spread, {unit:.3g} (their interquartile range, or ε if larger)"


def _spread(y) -> float:
    """The interquartile range of the targets (host), their range where that is 0: a spread
    that one huge target does not set."""
    if y.size == 0:
        return 0.0
    # The quartiles as np.percentile's "linear" rule, from one partition (every update checks
    # its model in this unit; np.percentile cost ~100 µs of a 0.7 ms one-point update).
    at = np.array([0.25, 0.75]) * (y.size - 1)
    lo, hi = np.floor(at).astype(np.int64), np.ceil(at).astype(np.int64)
    v = np.partition(y, np.unique(np.concatenate([lo, hi, [0, y.size - 1]])))
    a, b, t = v[lo], v[hi], at - lo
    q25, q75 = np.where(t >= 0.5, b - (b - a) * (1.0 - t), a + (b - a) * t)  # NumPy's _lerp
    return float(q75 - q25) or float(v[-1] - v[0])


def kkt_violation_svr(kernel, X_sv, coef, b, X, y, alpha, upper, epsilon, ridge, C) -> float:
    """The largest KKT violation of an ε-SVR solution on rows (X, y), recomputed from scratch:
    :meth:`IncrementalSVR.check_kkt`'s rule (Karasuyama & Takeuchi 2009, eqs. 1a–1d on the
    doubled dual, each row's level ``y'_i y_i − ε``).

    Parameters
    ----------
    kernel : Kernel
    X_sv : device array of shape (n_SV, n_features)
        The support vectors.
    coef : device array of shape (n_SV,)
        Their β.
    b : float
    X : device array of shape (n, n_features)
    y : ndarray of shape (n,)
        The rows checked and their targets.
    alpha : ndarray of shape (2n,)
        The doubled coefficients (rows 2i: α_i, 2i + 1: α*_i), for the ridge's share.
    upper : ndarray of shape (2n,)
        Each row's box C_i.
    epsilon, ridge, C : float

    Returns
    -------
    float
        Stationarity violations (units of f) divided by ``1 + max_i Σ_j |K_ij| |β_j| + |1 + ε ∓
        y_i|``, those of Σβ = 0 and of the boxes by C.
    """
    n = X.shape[0]
    f, size = kernel_products(kernel, X, X_sv, coef)  # (no support vector: f = b)
    y2 = np.tile([1.0, -1.0], n)
    f2, y_rep = np.repeat(f + b, 2), np.repeat(y, 2)
    shift = 1.0 + epsilon - y2 * y_rep
    yf = y2 * f2 + ridge * alpha + shift  # stored form: the level is 1
    scale = float(np.max(np.repeat(size, 2) + ridge * alpha, initial=0.0)) + np.abs(shift)  # each row's own
    return kkt_violation(yf, y2, alpha, upper, scale, C)


def doubled(X, y, epsilon: float):
    """ε-SVR's doubled rows: each row of X twice (2i: α_i, label +1; 2i + 1: α*_i, label −1),
    the labels and the shift ``1 + ε − y'_i y_i`` of each row's margin (device arrays)."""
    n, d = X.shape
    y2 = np.empty(2 * n)
    y2[0::2], y2[1::2] = 1.0, -1.0
    shift = np.empty(2 * n)
    y = np.asarray(y, dtype=np.float64)
    shift[0::2], shift[1::2] = 1.0 + epsilon - y, 1.0 + epsilon + y
    if isinstance(X, np.ndarray):  # (a stream's one-point update: the namespace's lookup cost more than this)
        return np.repeat(X, 2, axis=0), y2, shift
    xp, device = get_namespace_and_device(X)
    return (xp.reshape(xp.stack([X, X], axis=1), (2 * n, d)), to_device(y2, xp, device),
            to_device(shift, xp, device))

