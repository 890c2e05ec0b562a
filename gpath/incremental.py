"""IncrementalSVC: an exact C-SVC that adds and removes many points along one path."""

from __future__ import annotations

import copy
import time
import warnings

import numpy as np
from sklearn.utils.validation import check_is_fitted

from . import persistence
from ._array_api import get_namespace_and_device, to_device, to_host
from ._base import BinarySVC
from ._path import PathError, PathStats, SVCState, restored
from ._simplesvm import polish, simple_svm
from ._validation import (
    check_choice,
    check_feature_names,
    check_ids,
    check_labels,
    check_positive,
    check_X,
    feature_names,
    host_values,
    signed_labels,
)
from .cache import max_columns
from .kernels import Kernel

__all__ = ["IncrementalSVC"]


class IncrementalSVC(BinarySVC):
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
        or one path per point, additions first ("single", SID-SVM). :meth:`fit` trains by
        SimpleSVM (:class:`gpath.SimpleSVC`) whatever the method.
    ridge : float, default 1e-6
        Added to the kernel diagonal so that duplicate points on the margin keep 𝐌
        nonsingular (the paper's choice, section 4). The model is the exact solution for the
        kernel ``K + ridge·I`` on the training points; predictions use ``K``. 0 is allowed
        for data without duplicate margin points.
    tol : float, default 1e-9
        After every fit/update the maintained margins must satisfy the KKT conditions to
        ``tol`` (units of y f); otherwise the call fails and the model is kept.
    cache_size : float, default 1024
        Most device memory, in MB, for the cached kernel columns of the margin set (as
        scikit-learn's SVC). An update of n points by m added and ℓ removed needs on the
        device about ``8·(n·d + c·r + n·(m + ℓ) + 6·n)`` bytes, with float64 values: X, the
        c ≤ 2|M| cached columns of r ≤ 1.25·(n + m) + m buffer rows (:mod:`gpath.cache`),
        the columns of the added and removed points, and a few n-vectors; on the host about
        ``40·|M|²`` bytes (Q_MM with its spare capacity, its Cholesky factor, temporaries;
        :mod:`gpath.linalg`). When the margin set needs more columns than ``cache_size``
        allows, the call raises ``gpath.CacheFullError`` and the model is kept.

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
        Breakpoints, points added and removed, wall time (s) and final |M| of the last call
        (after ``fit``: SimpleSVM's iterations in place of breakpoints).
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,), object
        Column names of the pandas DataFrame given to ``fit`` (only then): ``X_add`` and
        every later input must have the same names in the same order (ValueError), as in
        scikit-learn.

    References
    ----------
    M. Karasuyama and I. Takeuchi, "Multiple incremental decremental learning of support
    vector machines", NIPS 2009, sections 3.2–3.3. G. Cauwenberghs and T. Poggio,
    "Incremental and decremental support vector machine learning", NIPS 2001.
    """

    def __init__(self, C=1.0, kernel="rbf", gamma="scale", degree=3, coef0=0.0,
                 method="multiple", ridge=1e-6, tol=1e-9, cache_size=1024):
        self.cache_size = cache_size
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
        """Train on (X, y) from scratch, by SimpleSVM.

        The exact solution comes from the active-set method of :class:`gpath.SimpleSVC`
        (hinge loss, the same C and ridge; its working set, factor and cached columns are the
        margin set, factor and cache that :meth:`update` moves on).

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
            Non-numeric X, or a DataFrame whose column names mix strings and other types.
        PathError, SingularMarginError
            A numerical failure; the estimator is unchanged.
        """
        start = time.perf_counter()
        name = type(self).__name__
        params = self._check_params()
        names = feature_names(X)
        X, xp, device = check_X(X, owner=name)
        labels, classes = check_labels(y, X.shape[0], owner=name)
        kernel = Kernel.from_params(self.kernel, self.gamma, self.degree, self.coef0, X)
        ys = signed_labels(labels, classes, xp, device)
        # A fixed start for the closest-pair search: fit is deterministic.
        state, simple = simple_svm(X, ys, kernel, params["C"], params["ridge"],
                                   random_state=np.random.RandomState(0))
        state.release_bounded_margin()
        state.active.compact()
        state.cache = state.cache.with_spare_rows()  # room for the first updates
        state.cache.max_columns = max_columns(params["cache_size"], X.shape[0])
        state.cache.check_limit()
        state.refine()
        self._check_state(state)
        stats = PathStats(simple.n_iter, X.shape[0], 0, time.perf_counter() - start, state.active.size)
        attrs = self._attributes(state, classes, kernel, np.arange(X.shape[0], dtype=np.int64), X.shape[0], stats)
        self._commit({**attrs, "feature_names_in_": names, "_kernel_params": self._kernel_params_now()})
        return self

    def partial_fit(self, X, y, classes=None):
        """Add the rows (X, y) to the model (``fit`` if it is not fitted yet).

        Parameters
        ----------
        X, y
            As ``X_add``, ``y_add`` of :meth:`update` (as in :meth:`fit` on the first call).
        classes : array-like of shape (2,) or None
            scikit-learn's argument: the two labels of the whole stream. The first call must
            still see both (an SVC needs both classes to exist); later calls must name the
            same ones.

        Returns
        -------
        self

        Raises
        ------
        ValueError
            ``classes`` not two labels, or not those of the model; otherwise as :meth:`fit`
            (first call) or :meth:`update`.
        """
        if classes is not None:
            classes = np.unique(to_host(classes))
            if classes.shape[0] != 2:
                raise ValueError(f"classes must hold exactly two labels; got {classes.tolist()}")
        if not hasattr(self, "state_"):
            if classes is not None and y is not None:  # checked before fit changes anything
                seen = np.unique(host_values(y))
                if not np.array_equal(seen, classes):
                    raise ValueError(f"y holds the classes {seen[:5].tolist()}, not classes={classes.tolist()}")
            return self.fit(X, y)
        if classes is not None and not np.array_equal(classes, self.classes_):
            raise ValueError(f"classes={classes.tolist()} differ from the model's {self.classes_.tolist()}")
        s = self.state_
        check_feature_names(self, X)
        check_X(X, "X", s.X.shape[1], s.xp, s.device, owner=type(self).__name__)
        with warnings.catch_warnings():  # said above about X; update would say it about X_add
            warnings.filterwarnings("ignore", message="X_add (has|does not have valid) feature names",
                                    category=UserWarning)
            return self.update(X_add=X, y_add=y)

    def update(self, X_add=None, y_add=None, remove=None):
        """Add the rows (X_add, y_add) and remove the points ``remove`` in one path.

        Parameters
        ----------
        X_add : array of shape (m, n_features) or None
            New points, in the namespace and on the device of the training data.
        y_add : array-like of shape (m,) or None
            Their labels, each one of ``classes_``.
        remove : int, array-like of int of shape (ℓ,), or None
            Sample ids (see ``sample_ids_``) of the points to remove: one id (a Python or
            NumPy integer, e.g. ``model.sample_ids_[0]``) or several (list, tuple, range,
            array of any namespace).

        Returns
        -------
        self

        Raises
        ------
        ValueError
            Mis-shaped or non-finite X_add, X_add with other column names or another column
            order than in ``fit`` (a DataFrame), a label not in ``classes_``, X_add without
            y_add, repeated ids, an update that would leave a single class, or C, ridge or a
            kernel parameter (kernel, gamma, degree, coef0) changed by ``set_params`` since
            ``fit`` (call fit again).
        KeyError
            An id in ``remove`` that is not in the model.
        TypeError
            X_add in another namespace or on another device than the model, or ``remove``
            not integers.
        PathError, SingularMarginError
            A numerical failure part-way; the model is unchanged.

        Notes
        -----
        A failed call, for any reason (a ``KeyboardInterrupt`` included), leaves the model
        exactly as it was: the path works on a copy that replaces the model at the end.
        """
        check_is_fitted(self, "state_")
        params = self._check_params()
        self._check_kernel_unchanged()
        state = self.state_
        xp, device = state.xp, state.device
        if (X_add is None) != (y_add is None):
            raise ValueError("X_add and y_add must be given together; got only one of them")
        if X_add is not None:
            check_feature_names(self, X_add, "X_add")
            X_add, _, _ = check_X(X_add, "X_add", state.X.shape[1], xp, device, owner=type(self).__name__)
            labels, _ = check_labels(y_add, X_add.shape[0], "y_add", self.classes_, x_name="X_add")
            y_add = signed_labels(labels, self.classes_, xp, device)
        else:
            X_add = xp.zeros((0, state.X.shape[1]), dtype=xp.float64, device=device)
            y_add = xp.zeros(0, dtype=xp.float64, device=device)
        rows = check_ids([] if remove is None else remove, self.sample_ids_)
        kept = np.delete(state.y_host, rows)
        classes_left = set(np.unique(kept)) | set(np.unique(to_host(y_add)))
        if classes_left != {-1.0, 1.0}:
            left = [self.classes_[int(c > 0)] for c in sorted(classes_left)]
            what = f"only class {np.asarray(left).tolist()}" if left else "no points"
            raise ValueError(
                f"the update would leave {what} in the model; "
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
        # The new state writes into the old one's cache buffer: until the new state and every
        # attribute are ready, a failure puts the old columns back.
        with state.cache.transaction():
            limit = max_columns(params["cache_size"], state.n + m)
            state, n_bp = _follow(state, X_add, y_add, rows, limit, params["method"])
            state.refine()
            if state.kkt_violation() > params["tol"]:
                # The path's float64 steps missed events (C·max K beyond what they resolve):
                # SimpleSVM's iteration from the path's sets finishes it exactly.
                polish(state)
                state.release_bounded_margin()
                state.refine()
            self._check_state(state)
            ids = np.concatenate([np.delete(self.sample_ids_, rows), new_ids])
            stats = PathStats(n_bp, m, len(rows), time.perf_counter() - start, state.active.size)
            attrs = self._attributes(state, self.classes_, self.kernel_, ids, self._next_id + m, stats)
        spent = self.state_
        self._commit(attrs)
        # The state the update started from is spent (its cache buffer is the new state's): its
        # factor's arrays take the next update's copy of the factor.
        state.factor.spare = spent.factor
        return self

    # ------------------------------------------------------------------ internals
    def _check_params(self) -> dict:
        return {
            "C": check_positive(self.C, "C"),
            "ridge": check_positive(self.ridge, "ridge", allow_zero=True),
            "tol": check_positive(self.tol, "tol"),
            "method": check_choice(self.method, "method", ("multiple", "single")),
            "cache_size": check_positive(self.cache_size, "cache_size"),
        }

    _KERNEL_PARAMS = ("kernel", "gamma", "degree", "coef0")

    def _kernel_params_now(self) -> dict:
        return {key: getattr(self, key) for key in self._KERNEL_PARAMS}

    def _check_kernel_unchanged(self) -> None:
        """The kernel parameters must be those given to fit: an update keeps the fitted
        kernel (its Q columns and margins), so a new one would be silently ignored."""
        fitted = getattr(self, "_kernel_params", None)
        now = self._kernel_params_now()
        if fitted is None or fitted == now:
            return
        changed = [key for key in self._KERNEL_PARAMS if fitted.get(key) != now[key]]
        was = ", ".join(f"{key}={fitted.get(key)!r}" for key in changed)
        is_ = ", ".join(f"{key}={now[key]!r}" for key in changed)
        raise ValueError(
            f"kernel parameters cannot change between fit and update (fitted with {was}; now {is_}); "
            "call fit again"
        )

    def _check_state(self, state: SVCState) -> None:
        """The maintained margins must satisfy the KKT conditions to ``tol``, relative to the
        scale of y f (:meth:`gpath._path.SVCState.kkt_violation`)."""
        tol = check_positive(self.tol, "tol")
        viol = state.kkt_violation()
        if viol > tol:
            raise PathError(
                f"the path ended with a KKT violation of {viol:.3g} (relative to the scale of y f, "
                f"{state.kkt_scale():.3g}) > tol={tol:g}; the model is unchanged. The margin system is "
                f"too ill-conditioned for float64 at C={state.C:g}: raise ridge (e.g. ridge=1e-4), "
                f"lower C, or standardize the features"
            )

    def _attributes(self, state, classes, kernel, ids, next_id, stats) -> dict:
        """Every fitted attribute of the new state, computed before the first one is set."""
        attrs = self._fitted_attributes(state.X, state.y_host, state.alpha, state.b, classes, kernel)
        return {**attrs, "state_": state, "sample_ids_": ids, "_next_id": int(next_id), "last_update_": stats}

    def _commit(self, attrs: dict) -> None:
        self._set_fitted(attrs)

    def __copy__(self):
        """An independent model: ``state_`` is copied too (an update reuses the device cache
        of the state it starts from, so two models must not share one)."""
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        if hasattr(self, "state_"):
            new.state_ = copy.deepcopy(self.state_)
        return new

    def _kkt_problem(self) -> tuple[float, float]:
        return self.state_.C, self.state_.ridge

    # ------------------------------------------------------------------ persistence
    def _to_saved(self):
        """The whole incremental state (format ``gpath.IncrementalSVC``, see
        :mod:`gpath.persistence`), so that a loaded model goes on updating exactly."""
        if not hasattr(self, "state_"):
            raise TypeError(f"model must be a fitted gpath estimator; {type(self).__name__} is not fitted")
        s = self.state_
        classes = np.asarray(self.classes_)
        if classes.dtype == object:
            classes = classes.astype(str)
        if classes.dtype.kind not in "biufU":
            raise TypeError(f"classes_ must be numbers or strings to be saved; got dtype {classes.dtype}")
        k = self.kernel_
        meta = {
            "format": persistence.FORMAT,
            "version": persistence.VERSION,
            "params": self.get_params(),
            "kernel": {"kind": k.kind, "gamma": k.gamma, "degree": k.degree, "coef0": k.coef0, "offset": k.offset},
            "C": s.C,
            "ridge": s.ridge,
            "b": s.b,
            "next_id": self._next_id,
            "last_update": self.last_update_.__dict__,
        }
        arrays = dict(X=to_host(s.X), y=s.y_host, alpha=s.alpha, yf=to_host(s.yf), where=s.where,
                      margin=s.margin.astype(np.int64), ids=self.sample_ids_, classes=classes)
        if hasattr(self, "feature_names_in_"):
            arrays["feature_names"] = np.asarray(self.feature_names_in_, dtype=str)
        return meta, arrays

    @classmethod
    def _from_saved(cls, meta, data, like):
        """The saved model, checked: plain finite arrays of matching shapes, consistent index
        sets, α in [0, C], and the KKT conditions recomputed from scratch (:meth:`_check_loaded`).

        Raises
        ------
        gpath.persistence.ModelFileError
        """
        invalid = persistence.ModelFileError
        if meta.get("version") != persistence.VERSION:
            raise invalid(f"unknown {persistence.FORMAT} format version {meta.get('version')!r}; "
                          f"this gpath reads {persistence.VERSION}")
        for key in ("params", "kernel", "C", "ridge", "b", "next_id", "last_update"):
            if key not in meta:
                raise invalid(f"'meta' has no {key!r}")
        model = cls(**meta["params"])
        try:
            model._check_params()
            C = check_positive(meta["C"], "C")
            ridge = check_positive(meta["ridge"], "ridge", allow_zero=True)
        except ValueError as exc:
            raise invalid(f"bad parameter: {exc}") from None
        b = meta["b"]
        if not (isinstance(b, (int, float)) and not isinstance(b, bool) and np.isfinite(b)):
            raise invalid(f"the bias b must be a finite number; got {b!r}")
        X = persistence.finite_array(data, "X", "f", ndim=2)
        n, d = X.shape
        y = persistence.finite_array(data, "y", "f", shape=(n,))
        alpha = persistence.finite_array(data, "alpha", "f", shape=(n,))
        yf = persistence.finite_array(data, "yf", "f", shape=(n,))
        where = persistence.finite_array(data, "where", "iu", shape=(n,))
        margin = persistence.finite_array(data, "margin", "iu", ndim=1)
        ids = persistence.finite_array(data, "ids", "iu", shape=(n,))
        classes = persistence.finite_array(data, "classes", "biufU", shape=(2,))
        names = data.get("feature_names")
        if names is not None and (names.dtype.kind != "U" or names.shape != (d,)):
            raise invalid(f"entry 'feature_names' must hold {d} strings; got dtype {names.dtype}, shape {names.shape}")
        if n < 2 or d < 1 or set(np.unique(y).tolist()) != {-1.0, 1.0}:
            raise invalid(f"y must hold -1 and +1 labels of n >= 2 points; got {np.unique(y)[:5].tolist()} "
                          f"for X of shape {X.shape}")
        if np.unique(classes).size != 2:
            raise invalid(f"classes must be two distinct labels; got {classes.tolist()}")
        if np.unique(ids).size != n or not isinstance(meta["next_id"], int) or meta["next_id"] <= ids.max():
            raise invalid(f"sample ids must be distinct and below next_id={meta['next_id']!r}")
        # Index sets: O (0) at α = 0, I (2) at α = C, M (1) exactly the rows of `margin`.
        if np.any((where < 0) | (where > 2)):
            raise invalid(f"index sets must be 0 (O), 1 (M) or 2 (I); got {np.unique(where).tolist()}")
        if (np.unique(margin).size != margin.size or np.any((margin < 0) | (margin >= n))
                or np.count_nonzero(where == 1) != margin.size or np.any(where[margin] != 1)):
            raise invalid(f"the margin rows {margin[:5].tolist()}... (|M| = {margin.size}) are not the "
                          f"{np.count_nonzero(where == 1)} distinct rows in [0, {n}) marked M")
        slack = model.tol * C  # the box to the model's tolerance, as every update checks it
        if np.any(alpha < -slack) or np.any(alpha > C + slack):
            bad = np.flatnonzero((alpha < -slack) | (alpha > C + slack))
            raise invalid(f"alpha must lie in [0, C={C:g}]; got {alpha[bad[:3]].tolist()} at rows {bad[:3].tolist()}")
        if np.any(alpha[where == 0] != 0.0) or np.any(alpha[where == 2] != C):
            raise invalid(f"alpha must be 0 on the set O and C={C:g} on the set I")
        xp, device = get_namespace_and_device(like)
        kernel = Kernel(**meta["kernel"])
        try:
            if kernel != Kernel.from_params(kernel.kind, kernel.gamma, kernel.degree, kernel.coef0, X):
                raise ValueError(f"offset must be 0; got {kernel.offset!r}")
            if not np.isfinite(kernel.gamma):
                raise ValueError(f"gamma must be finite; got {kernel.gamma!r}")
        except ValueError as exc:
            raise invalid(f"bad kernel {meta['kernel']!r}: {exc}") from None
        state = restored(xp, device, to_device(X, xp, device), to_device(y, xp, device), kernel, C, ridge,
                         alpha, b, where, yf, margin)
        state.cache = state.cache.with_spare_rows()  # room for the next updates, as after fit
        state.cache.max_columns = max_columns(model.cache_size, n)
        attrs = model._attributes(state, classes, kernel, ids.astype(np.int64), meta["next_id"],
                                  PathStats(**meta["last_update"]))
        model._commit({**attrs, "feature_names_in_": None if names is None else names.astype(object),
                       "_kernel_params": {key: meta["params"][key] for key in cls._KERNEL_PARAMS}})
        model._check_loaded()
        return model

    def _check_loaded(self) -> None:
        """The KKT conditions, recomputed from scratch (:meth:`check_kkt`'s violation), hold to
        ``tol · (1 + max_i Σ_j |Q_ij| α_j)``; the saved margins y f (which the next update
        starts from) agree with the recomputed ones to the same tolerance, and pass the check
        every update makes (to ``tol``).

        Raises
        ------
        gpath.persistence.ModelFileError
        """
        s = self.state_
        yf, scale = self._margins_from_scratch(s.X, s.y_host)
        limit = self.tol * (1.0 + scale)
        violation = self._kkt_violation(yf, s.y_host, scale)
        if violation > self.tol:
            raise persistence.ModelFileError(
                f"alpha and b violate the KKT conditions by {violation:.3g} relative to the scale "
                f"1 + max_i sum_j |Q_ij| alpha_j = {1 + scale:.3g}, recomputed from scratch (allowed: tol={self.tol:g})"
            )
        drift = float(np.max(np.abs(yf - to_host(s.yf))))
        if drift > limit:
            raise persistence.ModelFileError(
                f"the saved margins y f differ by {drift:.3g} from those recomputed from X, y, alpha and b "
                f"(allowed: tol*(1 + max_i sum_j |Q_ij| alpha_j) = {limit:.3g})"
            )
        try:
            self._check_state(s)
        except PathError:
            raise persistence.ModelFileError(
                f"the saved margins y f violate the KKT conditions of their index sets by more than "
                f"tol={self.tol:g} (the check every update makes)"
            ) from None

    def _training_data(self, X, y):
        """The model's own training rows and labels where X and y are None."""
        if X is None and y is None:
            return self.state_.X, self.state_.y_host
        return super()._training_data(X, y)


def _follow(state, X_add, y_add, rows, limit, method):
    """The new state and its number of breakpoints: one path (MID) or one per point (SID)."""
    if method == "multiple":
        state, stats = state.follow(X_add, y_add, rows, max_columns=limit)
        return state, stats.n_breakpoints
    n_bp = 0
    for j in range(X_add.shape[0]):
        state, stats = state.follow(X_add[j : j + 1, :], y_add[j : j + 1], np.zeros(0, dtype=np.int64),
                                    max_columns=limit)
        n_bp += stats.n_breakpoints
    # Rows shift as points leave: find each by its position among the survivors.
    alive = np.ones(state.n, dtype=bool)
    for r in rows:
        row = int(np.count_nonzero(alive[:r]))
        state, stats = state.follow(X_add[:0, :], y_add[:0], np.array([row]), max_columns=limit)
        alive[r] = False
        n_bp += stats.n_breakpoints
    return state, n_bp
