"""IncrementalSVC: an exact C-SVC that adds and removes many points along one path."""

from __future__ import annotations

import copy
import time
from contextlib import ExitStack

import numpy as np
import scipy.sparse
from numba import njit
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from . import persistence
from ._array_api import get_namespace_and_device, to_device, to_host
from ._base import (
    MemoizedParams,
    OneVsOneSVC,
    PublishedOnRead,
    check_every_class_weighted,
    path_failed,
    serialized,
    update_or_refit,
)
from ._incremental_file import from_saved, to_saved
from ._multiclass import class_weights, new_class_weight, pair_index, pair_rows, pairs, rows_from_pairs
from ._path import PathError, PathStats, SVCState, check_state
from ._platt import cv_decision_values, sigmoid_train
from ._simplesvm import exact_state, exact_update
from ._smo import shared_kernel_rows_of
from ._sparse import check_memory, is_sparse, pair_training_rows, take_rows, training_kernel
from ._validation import (
    check_choice,
    check_feature_names,
    check_gram,
    check_gram_rows,
    check_ids,
    check_labels,
    check_max_iter,
    check_positive,
    check_sample_weight,
    check_X,
    feature_names,
    host_values,
    is_precomputed,
)
from ._warmup import warm_compiled_update
from .cache import max_columns
from .kernels import PRECOMPUTED, Kernel, with_index

__all__ = ["IncrementalSVC"]

# method="auto" refits only pairs of at least this many rows (_refit_is_cheaper).
_REFIT_MIN_ROWS = 2000
# A refit of a pair whose margin set holds at least this share of its support vectors starts
# from SMO, as fit does, not from the current α: SimpleSVM's steps from a start whose sets are
# off by hundreds of points each cost O(|M|²). Adult, one of ten folds exchanged, seconds
# from SMO against warm (best of two): n = 3,000, |M|/|SV| = 524/1,009: 0.12 against 0.20,
# 710/954: 0.20 against 0.25, 225/910: 0.09 against 0.07; n = 10,000, 1,221/3,282: 1.04
# against 1.22, 1,816/3,157: 2.0 against 2.8, 460/3,240: 0.62 against 0.39.
_SMO_REFIT_SHARE = 0.3


class IncrementalSVC(PublishedOnRead, MemoizedParams, OneVsOneSVC):
    """Exact C-SVC, updated by multiple incremental decremental learning; one-vs-one for more
    than two classes, as scikit-learn's ``SVC``.

    Solves ``min ½ αᵀQα − 1ᵀα`` s.t. ``0 ≤ α_i ≤ C_i``, ``yᵀα = 0`` with
    ``Q_ij = y_i y_j K(x_i, x_j) + ridge·[i = j]`` and ``C_i = C · sample_weight_i ·
    class_weight[y_i]`` exactly (to float64 round-off), and keeps it exact while points are
    added and removed. ``update`` adds m points and removes ℓ points along one
    multi-parametric path (Karasuyama & Takeuchi 2009, section 3.2), each point moving to its
    own box C_i; with ``method="single"`` it applies the single-point update of Cauwenberghs
    & Poggio (2001) once per point instead (the baseline; section 3.1).

    k > 2 classes give k(k−1)/2 such models, one per pair of classes (i, j), i < j, on the
    points of those two classes (one-against-one, Hsu & Lin 2002), each updated by its own
    path: an update routes the added rows to the pairs of their class and the removals to the
    pairs that hold them. **Classes come and go with their points**: ``classes_`` are always
    the labels of the points the model holds. An update that adds a label the model does not
    hold creates its pairs with every present class, trained exactly (SimpleSVM) on the
    current points of the two classes; an update that removes the last point of a class
    drops its pairs. An update that would leave fewer than two classes is refused.

    Arrays stay in the namespace and on the device of the ``X`` given to :meth:`fit`
    (NumPy, CuPy, or any array-API library); the small linear systems are solved on the host
    in float64.

    Parameters
    ----------
    C : float, default 1.0
        Box constraint, finite and > 0.
    kernel : {"rbf", "linear", "poly", "sigmoid", "precomputed"} or callable, default "rbf"
        As in scikit-learn's SVC. ``"sigmoid"``: as :class:`gpath.SimpleSVC` (a KKT point of
        a dual that is not convex); its updates refit each changed pair, warm-started
        (``last_update_.method`` "refit": the MID path needs a positive definite margin
        matrix). ``"precomputed"``: ``fit`` takes the n × n Gram matrix as X,
        ``predict`` and the others the m × n kernel values of their points against the
        training points (in training order, ``sample_ids_``); ``update`` takes the new
        points' kernel values against the training points and themselves (see :meth:`update`;
        each changed pair is refitted, warm-started), ``partial_fit`` raises ValueError. Its
        ``support_vectors_`` hold the support vectors' Gram rows and their index
        (:mod:`gpath.kernels`), where SVC's are empty.
    gamma : float or {"scale", "auto"}, default "scale"
        As in scikit-learn's SVC; ``"scale"`` is 1 / (n_features · X.var()) of the data given
        to :meth:`fit`, and stays fixed for later updates.
    degree : int, default 3
    coef0 : float, default 0.0
    method : {"auto", "multiple", "single"}, default "auto"
        How :meth:`update` reaches the new solution: one path for all points ("multiple",
        MID-SVM), one path per point, additions first ("single", SID-SVM), or ("auto") the
        MID path unless the update moves so many points that SimpleSVM warm-started from the
        current α (kept rows as they are, added rows at 0; from SMO's start, as :meth:`fit`,
        where the margin set holds 30 % of the support vectors or more) is predicted to cost less
        (:func:`_refit_is_cheaper`); ``last_update_.method`` says which was taken. Every way
        gives the same exact model. :meth:`fit` trains by SimpleSVM (:class:`gpath.SimpleSVC`)
        whatever the method.
    ridge : float, default 1e-6
        Added to the kernel diagonal so that duplicate points on the margin keep 𝐌
        nonsingular (the paper's choice, section 4). The model is the exact solution for the
        kernel ``K + ridge·I`` on the training points; predictions use ``K``. 0 is allowed
        for data without duplicate margin points.
    tol : float, default 1e-9
        After every fit/update the maintained margins must satisfy the KKT conditions to
        ``tol``, relative to the scale of y f (``1 + max_i Σ_j |Q_ij| α_j``) and the constraints
        relative to C; otherwise the call fails and the model is kept.
    cache_size : float, default 1024
        Most device memory, in MB, for the cached kernel columns of the margin set (as
        scikit-learn's SVC; shared equally by the pairs of a multiclass model). An update of
        n points by m added and ℓ removed needs on the device about
        ``8·(n·d + c·r + n·(m + ℓ) + 6·n)`` bytes per pair (n, m, ℓ: the pair's points),
        with float64 values: X, the c ≤ 2|M| cached columns of r ≤ 1.25·(n + m) + m buffer
        rows (:mod:`gpath.cache`), the columns of the added and removed points, and a few
        n-vectors; on the host about ``40·|M|²`` bytes (Q_MM with its spare capacity, its
        Cholesky factor, temporaries; :mod:`gpath.linalg`). A multiclass model keeps each
        point in the k − 1 pairs of its class. When the margin set needs more columns than
        ``cache_size`` allows, the call raises ``gpath.CacheFullError`` and the model is
        kept.
    class_weight : dict, "balanced" or None, default None
        Multiplies C per class, as in ``SVC``: a dict label -> weight (> 0; 1 for the labels
        it does not name; it may name classes that appear later), or "balanced":
        ``n_samples / (n_classes · count(class))`` of the data given to :meth:`fit`. **The class weights are fixed at fit**: updates keep them
        (recomputing "balanced" weights would change the box of every point); a class that
        first appears in an update gets its dict weight, or its "balanced" weight from the
        counts after that update.
    decision_function_shape : {"ovr", "ovo"}, default "ovr"
        The shape of :meth:`decision_function` for more than two classes, as in ``SVC``.
    probability : bool, default False
        Fit Platt's sigmoids on 5-fold cross-validated decision values at :meth:`fit`, as
        LIBSVM (5 more exact fits per pair), for :meth:`predict_proba`. **An update keeps
        the sigmoids** (refitting them costs 5 fits per pair, far more than an update): call
        :meth:`calibrate` to refit them on the current points. The pairs of a class that
        appears in an update are calibrated by that update.
    random_state : int, RandomState instance or None, default None
        Shuffles the cross-validation folds of ``probability=True`` (as ``SVC``); nothing
        else is random.
    break_ties : bool, default False
        As ``SVC``: with more than two classes and ``decision_function_shape="ovr"``,
        :meth:`predict` breaks ties of the votes by the "ovr" decision values.
    shrinking : bool, default True
        Accepted for ``SVC`` code; no effect on an exact solver.
    max_iter : int, default -1
        Most SimpleSVM iterations of each pair in :meth:`fit` (and pair updates of its SMO
        start), as ``SVC``'s limit; -1 (or None): none. A pair that needs more fails with
        ``PathError`` and the model is left as it was: an early-stopped model is not the
        exact solution the updates move along a path (``SimpleSVC`` returns one, with a
        ``ConvergenceWarning``).
    verbose : bool or int, default False
        Print one line per pair of classes at the end of ``fit`` (iterations, support vectors,
        those at C, time).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The labels of the points the model holds, sorted; for two classes ``classes_[1]`` is
        the positive one (decision > 0).
    support_ : ndarray of shape (n_SV,), int32
        Rows (training order) of the support vectors (α > 0 in some pair), grouped by class
        in the order of ``classes_``, in training order within a class (as ``SVC``).
    support_vectors_ : array of shape (n_SV, n_features)
    dual_coef_ : array of shape (n_classes − 1, n_SV)
        Two classes: ``y_i α_i`` of the support vectors (y = +1 for ``classes_[1]``). More:
        LIBSVM's layout, positive for the first class of each pair (see
        :class:`gpath.SimpleSVC`).
    intercept_ : array of shape (n_classes·(n_classes − 1)/2,)
        The bias of each pair.
    n_support_ : ndarray of shape (n_classes,), int32
        Support vectors per class, in the order of ``classes_``.
    sample_ids_ : ndarray of shape (n_samples,), int64
        Stable id of each training point, in training order: ``fit`` gives 0..n−1, each
        ``update`` gives the next unused ids to the added rows.
    alpha_ : ndarray of shape (n_samples,) for two classes, else
        (n_classes·(n_classes − 1)/2, n_samples), float64
        Dual coefficients of every training point, in training order (in each pair; 0 outside
        its classes).
    class_weight_ : ndarray of shape (n_classes,), float64
        The class weights in use (1 without ``class_weight``).
    probA_, probB_ : ndarray of shape (n_classes·(n_classes − 1)/2,), float64
        Platt's sigmoid of each pair, ``P(first class | d) = 1 / (1 + exp(probA_ d + probB_))``
        with d the pair's decision value positive for its first class (``probability=True``).
    coef_ : array of shape (n_classes·(n_classes − 1)/2, n_features)
        Linear kernel only: the weights of each pairwise hyperplane (``(1, n_features)`` for
        two classes).
    states_ : list of SVCState
        The incremental state of each pair, in pair order; ``state_`` is the only one of a
        two-class model.
    last_update_ : PathStats
        Breakpoints (summed over the pairs), points added and removed, wall time (s), final
        |M| (summed over the pairs) and ``method`` of the last call: "path" (every changed
        pair followed its path), "refit" (every changed pair was refitted by warm-started
        SimpleSVM), "path and refit", or "fit" (after ``fit``, with SimpleSVM's iterations in
        place of breakpoints).
    n_iter_ : ndarray of shape (n_classes·(n_classes − 1)/2,), int32
        Per pair, the work of the last call that changed it: SimpleSVM's iterations (``fit``,
        a refit) or the path's breakpoints (``update``); 0 in a model loaded from a file
        written before gpath kept them.
    fit_status_ : int
        0, as ``SVC`` after a successful fit (a failure raises).
    shape_fit_ : tuple of int
        ``(n_samples, n_features)`` of the points the model holds now.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,), object
        Column names of the pandas DataFrame given to ``fit`` (only then): ``X_add`` and
        every later input must have the same names in the same order (ValueError), as in
        scikit-learn.

    References
    ----------
    M. Karasuyama and I. Takeuchi, "Multiple incremental decremental learning of support
    vector machines", NIPS 2009, sections 3.2–3.3. G. Cauwenberghs and T. Poggio,
    "Incremental and decremental support vector machine learning", NIPS 2001. C.-W. Hsu and
    C.-J. Lin, "A comparison of methods for multiclass support vector machines", IEEE Trans.
    Neural Networks 13(2), 2002. J. C. Platt (1999); H.-T. Lin, C.-J. Lin and R. C. Weng,
    "A note on Platt's probabilistic outputs for support vector machines", Machine Learning
    68, 2007 (:mod:`gpath._platt`).
    """

    def __init__(self, C=1.0, kernel="rbf", gamma="scale", degree=3, coef0=0.0,
                 method="auto", ridge=1e-6, tol=1e-9, cache_size=1024, class_weight=None,
                 decision_function_shape="ovr", probability=False, random_state=None, break_ties=False,
                 shrinking=True, max_iter=-1, verbose=False):
        self.cache_size = cache_size
        self.C = C
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.method = method
        self.ridge = ridge
        self.tol = tol
        self.class_weight = class_weight
        self.decision_function_shape = decision_function_shape
        self.probability = probability
        self.random_state = random_state
        self.break_ties = break_ties
        self.shrinking = shrinking
        self.max_iter = max_iter
        self.verbose = verbose

    # What a two-class update leaves to publish when first read (PublishedOnRead): its support
    # vectors and coefficients are the layout of the state's α.
    _PUBLISHED_ON_READ = ("alpha_", "support_", "support_vectors_", "dual_coef_", "intercept_", "n_support_")
    _OPTIONAL_ATTRIBUTES = OneVsOneSVC._OPTIONAL_ATTRIBUTES + _PUBLISHED_ON_READ

    def _publish(self) -> dict:
        """The support vectors and coefficients of the states (a two-class model's update
        left them unpublished)."""
        state = self.states_[0]
        xp, device = state.xp, state.device

        def take_rows(rows):
            return xp.take(state.X, to_device(rows, xp, device), axis=0)

        attrs = self._fitted_attributes(self._class_index, [state.alpha], [state.b], self.classes_, self.kernel_,
                                        take_rows, state.X.shape[1], self._weights, self.class_weight_)
        return {name: attrs[name] for name in self._PUBLISHED_ON_READ}

    @property
    def state_(self) -> SVCState:
        """The incremental state of a two-class model (``states_[0]``).

        Raises
        ------
        AttributeError
            Before ``fit``, or for more than two classes (see ``states_``).
        """
        states = self.__dict__.get("states_")
        if states is None:
            raise AttributeError("state_ is set by fit")
        if len(states) != 1:
            raise AttributeError(f"state_ is the state of a two-class model; this one has {len(self.classes_)} "
                                 "classes: see states_ (one state per pair of classes)")
        return states[0]

    # ------------------------------------------------------------------ fitting
    @serialized
    def fit(self, X, y, sample_weight=None):
        """Train on (X, y) from scratch, by SimpleSVM.

        The exact solution of each pair comes from the active-set method of
        :class:`gpath.SimpleSVC` (hinge loss, the same C and ridge; its working set, factor
        and cached columns are the margin set, factor and cache that :meth:`update` moves on).

        Parameters
        ----------
        X : array of shape (n_samples, n_features)
            Any array-API array (NumPy, CuPy, ...) or array-like; converted to float64. Or a
            SciPy sparse matrix (any format; host), as :meth:`gpath.SimpleSVC.fit` takes it:
            each pair of classes trained through its kernel matrix; such a model's updates
            refit (see :meth:`update`).
        y : array-like of shape (n_samples,)
            Two or more distinct labels (numbers or strings).
        sample_weight : array-like of shape (n_samples,) or None
            Point i's box is ``C · sample_weight_i · class_weight_[y_i]``, as in ``SVC``. A
            point of weight ≤ 0 is kept (it has an id and can be removed) but inert (α_i = 0;
            ``SVC`` drops it: the same model).

        Returns
        -------
        self

        Raises
        ------
        ValueError
            Bad parameters, non-finite or mis-shaped X, y with fewer than two classes,
            ``sample_weight`` of another length, NaN or all ≤ 0, or a class whose points all
            have weight ≤ 0.
        TypeError
            Non-numeric X, a DataFrame whose column names mix strings and other types, or
            sparse X with ``kernel="precomputed"``.
        PathError, SingularMarginError, CacheFullError
            A numerical failure; the estimator is unchanged.
        MemoryError
            Sparse X whose pairs' kernel matrices (and their working copies) would take more
            than half the available memory; or the factor of a pair's working (margin) set,
            16·|W|² bytes on the host, would not fit in the available memory. Each message
            gives the sizes, the bytes and what to do; the estimator is unchanged.
        """
        name = type(self).__name__
        params = self._check_params()
        names = feature_names(X)
        X, _, _ = check_X(X, owner=name, accept_sparse=True)
        labels, classes = check_labels(y, X.shape[0], owner=name, multiclass=True)
        weights = check_sample_weight(sample_weight, X.shape[0], inert_negative=True)
        if is_precomputed(self.kernel):
            X = check_gram(X, name)
        self._fit(X, labels, classes, weights, names, params, declared=None)
        return self

    def _fit(self, X, labels, classes, weights, names, params, declared):
        start = time.perf_counter()
        kernel = Kernel.from_params(self.kernel, self.gamma, self.degree, self.coef0, X, svc=True)
        train_kernel = training_kernel(kernel, X)
        xp, device = get_namespace_and_device(X)
        class_index = np.searchsorted(classes, labels)
        cw = class_weights(self.class_weight, classes, labels, allow_unseen=True)
        weights = cw[class_index] * (1.0 if weights is None else weights)  # boxes over C
        check_every_class_weighted(weights, class_index, classes)
        k = classes.shape[0]
        if is_sparse(X):
            check_memory([pair_rows(class_index, i, j, k).size for i, j in pairs(k)], params["probability"],
                         type(self).__name__)
        states, n_iter = [], 0
        for i, j in pairs(k):
            rows = pair_rows(class_index, i, j, k)
            X_p = pair_training_rows(X, None if k == 2 else rows, kernel, xp, device)
            y_p = np.where(class_index[rows] == j, 1.0, -1.0)
            pair_start = time.perf_counter()
            state, iterations = self._fit_pair(X_p, y_p, weights[rows], train_kernel, params, k)
            state.prepare_updates()  # its first update's memory (the code is warm_compiled_update's)
            self._report(params, (classes[i], classes[j]), iterations, state.alpha, state.upper,
                         time.perf_counter() - pair_start)
            states.append(state)
            n_iter += iterations
        probability = (self._calibrated(states, class_index, weights, train_kernel, params, k)
                       if params["probability"] else {})
        n = X.shape[0]
        stats = PathStats(n_iter, n, 0, time.perf_counter() - start, sum(s.active.size for s in states), "fit")
        attrs = self._attributes(states, class_index, classes, kernel, np.arange(n, dtype=np.int64), n, stats,
                                 weights, cw, X if is_sparse(X) else None)
        self._set_fitted({**attrs, "feature_names_in_": names, "_kernel_params": self._kernel_params_now(),
                      "_fitted_class_weight": copy.deepcopy(self.class_weight), "_declared_classes": declared,
                      "_buffer": None, "probA_": probability.get("A"), "probB_": probability.get("B"),
                      **self._memo_of(params)})  # (the first update's parameter checks: fit's)
        warm_compiled_update(xp)  # so that the first update costs what later ones do

    def _fit_pair(self, X, y_host, weights, kernel, params, k, start=None, smo_from=None):
        """The exact state of one pair (boxes ``C * weights``), ready to update, and SimpleSVM's
        iterations; from SimpleSVM's default start (SMO's where it applies, else the closest
        pair; SMO from the point ``smo_from``, host α, if given), or warm-started from the
        point ``start`` (host α).

        Rows of weight 0 are inert: SimpleSVM runs on the others (so that its closest-pair
        start is a pair of points that can move), the inert rows join at α = 0 (a path without
        breakpoints: their boxes are empty) and the rows are put back in training order. (A
        warm start needs no pair: the inert rows stay at 0 in S0.)"""
        xp, device = get_namespace_and_device(X)
        limit = max_columns(self._pair_cache_size(params, k), X.shape[0])
        inert = np.flatnonzero(weights == 0.0)
        used = np.flatnonzero(weights > 0.0) if inert.size and start is None else None
        X_s, y_s, w_s = (X, y_host, weights) if used is None else (
            xp.take(X, to_device(used, xp, device), axis=0), y_host[used], weights[used])
        w_s = None if np.all(w_s == 1.0) else w_s
        options = {"weights": w_s} if start is not None else {
            "weights": w_s, "max_iter": params["max_iter"],
            "smo_from": smo_from if used is None or smo_from is None else smo_from[used]}
        state, simple = exact_state(X_s, to_device(y_s, xp, device), kernel, params["C"], params["ridge"],
                                    start=start, **options)
        if not simple.converged:
            raise PathError(
                f"fit stopped at max_iter={params['max_iter']} iterations before the exact solution (KKT "
                f"violation {simple.max_violation:.3g} in units of y f): IncrementalSVC keeps only exact models, "
                f"which its updates start from; raise max_iter or leave it -1. The model is unchanged"
            )
        state.cache = state.cache.with_spare_rows()  # room for the first updates
        if used is not None:
            state, _ = state.follow(xp.take(X, to_device(inert, xp, device), axis=0),
                                    to_device(y_host[inert], xp, device), np.zeros(0, dtype=np.int64),
                                    max_columns=limit, upper_add=np.zeros(inert.size))
            state.take_rows(np.argsort(np.concatenate([used, inert]), kind="stable"))
            state.active.compact()
            state.refine()
        state.cache.max_columns = limit
        state.cache.check_limit()
        self._check_state(state)
        state.n_iter = simple.n_iter  # n_iter_ of its pair
        return state, simple.n_iter

    @staticmethod
    def _pair_cache_size(params, k) -> float:
        return params["cache_size"] / (k * (k - 1) // 2)

    @serialized
    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """Add the rows (X, y) to the model, as scikit-learn's ``SGDClassifier.partial_fit``.

        The first call that sees two classes fits (:meth:`fit` on every row given so far);
        later calls add their rows (:meth:`update`).

        Parameters
        ----------
        X : array of shape (m, n_features)
        y : array-like of shape (m,)
        classes : array-like of shape (n_classes,) or None
            scikit-learn's argument: the labels the stream may hold. With it, calls before
            the first fit that hold a single class are kept (the model stays unfitted:
            ``predict`` raises ``NotFittedError``) until the rows seen hold two classes; every
            label must be one of ``classes``, and later calls must give the same ``classes``
            (or none). ``classes_`` holds only the classes seen so far (an SVC has no model of
            a class without points); the others join when their first rows arrive.
            Without it, the first call must hold two classes (as :meth:`fit`).
        sample_weight : array-like of shape (m,) or None
            As in :meth:`fit` (first fit) or ``sample_weight_add`` of :meth:`update`.

        Returns
        -------
        self

        Raises
        ------
        ValueError
            ``classes`` with fewer than two labels or other labels than before, a label not
            in ``classes``, rows of another number of features or column names than the
            rows kept before, ``kernel="precomputed"``; otherwise as :meth:`fit` (first fit)
            or :meth:`update`.
        """
        name = type(self).__name__
        if is_precomputed(self.kernel):
            raise ValueError(f"{name}(kernel='precomputed') cannot learn by partial_fit: a call's kernel values "
                             f"would have to cover points not seen yet; call fit with the Gram matrix, then update "
                             f"with the new points' kernel values")
        declared = None
        if classes is not None:
            declared = np.unique(host_values(classes))
            if declared.ndim != 1 or declared.shape[0] < 2:
                raise ValueError(f"classes must hold at least two labels; got {np.asarray(host_values(classes)).tolist()}")
            before = getattr(self, "_declared_classes", None)
            if before is not None and not np.array_equal(before, declared):
                raise ValueError(f"classes={declared.tolist()} differ from the classes {before.tolist()} "
                                 f"given to the first call of partial_fit")
        else:
            declared = getattr(self, "_declared_classes", None)
        if hasattr(self, "states_"):
            if declared is not None:
                missing = np.setdiff1d(self.classes_, declared)
                if missing.size:
                    raise ValueError(f"classes={declared.tolist()} differ from the model's {self.classes_.tolist()}: "
                                     f"they lack {missing.tolist()}")
            update_or_refit(self._update, X, y, None, sample_weight, declared, x_name="X", y_name="y",
                            w_name="sample_weight")
            self._declared_classes = declared  # a model fitted by fit: the first classes given
            return self
        params = self._check_params()
        buffer = getattr(self, "_buffer", None)
        names = feature_names(X)
        if buffer is None:
            X, _, _ = check_X(X, owner=name, accept_sparse=True)
        else:
            kept_names = buffer["names"]
            if (names is not None or kept_names is not None) and (
                    names is None or kept_names is None or not np.array_equal(names, kept_names)):
                raise ValueError(f"X must have the column names of the rows kept by earlier calls "
                                 f"({None if kept_names is None else kept_names.tolist()}); got "
                                 f"{None if names is None else names.tolist()}")
            xp, device = get_namespace_and_device(buffer["X"])
            X, _, _ = check_X(X, "X", buffer["X"].shape[1], xp, device, owner=name,
                              accept_sparse=is_sparse(buffer["X"]))
        labels = _declared_labels(y, X.shape[0], "y", "X", declared) if declared is not None else host_values(y)
        weights = check_sample_weight(sample_weight, X.shape[0], allow_all_zero=True, inert_negative=True)
        if declared is None and buffer is None:
            if weights is not None and not np.any(weights > 0):
                check_sample_weight(weights, X.shape[0], inert_negative=True)  # SVC's message for all-zero weights
            labels, classes_seen = check_labels(y, X.shape[0], owner=name, multiclass=True)
            self._fit(X, labels, classes_seen, weights, names, params, declared=None)
            return self
        if buffer is not None:
            if is_sparse(buffer["X"]):  # sparse rows kept: the new ones join them, sparse
                X = scipy.sparse.vstack([buffer["X"], scipy.sparse.csr_matrix(X)], format="csr")
            else:
                xp, _ = get_namespace_and_device(X)
                X = xp.concat([buffer["X"], X], axis=0)
            labels = np.concatenate([buffer["labels"], labels])
            weights = _concat_weights(buffer["weights"], buffer["labels"].shape[0], weights, X.shape[0])
        seen = np.unique(labels)
        if seen.shape[0] < 2:
            self._buffer = {"X": X, "labels": labels, "weights": weights,
                            "names": names if buffer is None else buffer["names"]}
            self._declared_classes = declared
            return self
        if weights is not None and not np.any(weights > 0):
            check_sample_weight(weights, X.shape[0], inert_negative=True)
        self._fit(X, labels, seen, weights, names if buffer is None else buffer["names"], params, declared=declared)
        return self

    @serialized
    def update(self, X_add=None, y_add=None, remove=None, sample_weight_add=None):
        """Add the rows (X_add, y_add) and remove the points ``remove`` in one path (one per
        pair of classes).

        Parameters
        ----------
        X_add : array of shape (m, n_features) or None
            New points, in the namespace and on the device of the training data. A model
            fitted on sparse rows takes sparse or dense rows, and every pair the update changes
            is refitted exactly on its points' kernel matrix, warm-started from its current
            solution (the path needs feature rows): ``last_update_.method`` is "refit",
            whatever ``method``. ``kernel="precomputed"``: the kernel values of the new
            points, shape (m, n + m): against the n current training points in training
            order (``sample_ids_``; the columns of removed points included), then against
            the m new points themselves (that m × m block symmetric); every pair is refitted
            as for sparse rows, and later calls take kernel values against the training
            points after the update (kept points in order, then the new ones).
        y_add : array-like of shape (m,) or None
            Their labels. A label the model does not hold adds a class (its pairs are
            trained on the current points); see the class description.
        remove : int, array-like of int of shape (ℓ,), or None
            Sample ids (see ``sample_ids_``) of the points to remove: one id (a Python or
            NumPy integer, e.g. ``model.sample_ids_[0]``) or several (list, tuple, range,
            array of any namespace). Removing the last points of a class drops the class.
        sample_weight_add : array-like of shape (m,) or None
            Weights of the added points (their boxes are ``C · w · class_weight_[y]``;
            weight ≤ 0: kept but inert, as ``SVC`` reads it); None: 1.

        Returns
        -------
        self

        Raises
        ------
        ValueError
            Mis-shaped or non-finite X_add, X_add with other column names or another column
            order than in ``fit`` (a DataFrame), labels that are not class labels or (after
            ``partial_fit(classes=...)``) not among the declared classes, X_add without
            y_add, ``sample_weight_add`` without X_add, of another length or NaN,
            repeated ids, an update that would leave a single class or a class whose points
            all have weight 0, ``kernel="precomputed"`` kernel values of another shape than
            (m, n + m) or an asymmetric m × m block, or C, ridge, class_weight
            or a kernel parameter (kernel,
            gamma, degree, coef0) changed by ``set_params`` since ``fit`` (call fit again).
        KeyError
            An id in ``remove`` that is not in the model.
        TypeError
            X_add sparse for a model fitted on dense rows, in another namespace or on another
            device than the model, or ``remove`` not integers.
        PathError, SingularMarginError, CacheFullError
            A numerical failure part-way; the model is unchanged. (A path that fails with a
            PathError, degenerate cycling among duplicate points, or a SingularMarginError, a
            margin matrix numerically singular, is taken over by an exact refit of each
            changed pair, warm-started: ``last_update_.method`` "refit"; only that refit's
            own failure is raised.)
        MemoryError
            As in :meth:`fit`, for the margin set the update grows; the model is unchanged.

        Notes
        -----
        A failed call, for any reason (a ``KeyboardInterrupt`` included), leaves the model
        exactly as it was: each pair's path works on a copy, and the copies replace the model
        at the end.
        """
        if "states_" not in self.__dict__:  # (scikit-learn's check, which reads the tags, took 2 µs)
            check_is_fitted(self, "states_")
        return update_or_refit(self._update, X_add, y_add, remove, sample_weight_add,
                               getattr(self, "_declared_classes", None))

    @serialized
    def _window_update(self, X_add, labels: np.ndarray, n_oldest: int):
        """:meth:`update` for :mod:`gpath.river`'s window, which built its arguments itself: the
        rows ``X_add`` (finite float64 rows of the model's features, in its namespace and on its
        device) with ``labels`` (host ints, each one of ``classes_``) added, the ``n_oldest``
        oldest points removed, no weights, and the model's parameters as it fitted them. The
        checks of :meth:`update` that these pass by construction are not made (some 45 µs of a
        window's update: issue 18); the update itself is :meth:`update`'s, the same model bit
        for bit."""
        return update_or_refit(self._update, X_add, labels, n_oldest, None, None, trusted=True)

    def _pair_path(self, state, X_add, y_add: np.ndarray, remove: np.ndarray, upper_add: np.ndarray, params: dict,
                   k: int) -> SVCState:
        """The state of one pair of the k classes after the update by its path
        (:func:`gpath._simplesvm.exact_update`: the rows ``X_add``, host labels ``y_add`` ±1 and
        boxes ``upper_add`` added, its rows ``remove`` removed), checked; ``n_iter`` its
        breakpoints. The caller holds the transaction of the state's cache open."""
        limit = max_columns(self._pair_cache_size(params, k), state.n + y_add.shape[0])
        with path_failed():
            new, n_breakpoints, checked = exact_update(state, X_add, to_device(y_add, state.xp, state.device), remove,
                                                       limit, params["method"], upper_add, params["tol"])
            check_state(new, params["tol"], checked)  # (the tol checked with the other parameters)
        new.n_iter = n_breakpoints
        return new

    def _takes_two_class_path(self, params: dict, state: SVCState, rows: np.ndarray, m: int, refit: bool) -> bool:
        """Whether an update of this model (``rows`` removed, ``m`` points added, each of a
        class it keeps) is its one pair's path alone (:meth:`_two_class_path`): two classes,
        feature rows of a kernel the path takes, the fit's C, ridge and class weights, and no
        refit asked for or cheaper."""
        return not (refit or self.classes_.shape[0] != 2 or not (m or rows.size) or params["C"] != state.C
                    or params["ridge"] != state.ridge or self.kernel_.kind in (PRECOMPUTED, "sigmoid")
                    or getattr(self, "_X_sparse", None) is not None
                    or getattr(self, "_fitted_class_weight", None) != self.class_weight
                    or (params["method"] == "auto" and _refit_is_cheaper(state, rows, m)))

    def _two_class_path(self, X_add, add_index: np.ndarray, w_add: np.ndarray, rows: np.ndarray, after: tuple,
                        params: dict):
        """:meth:`_update` of a two-class model that :meth:`_takes_two_class_path`, its
        arguments checked: the pair's path (:meth:`_pair_path`; the rows ``X_add`` of classes
        ``add_index`` and boxes ``C · w_add`` added, the ``rows`` removed), the books ``after``
        (the rows kept, and the class index, weights and ids after the update), and the support
        vectors and coefficients published when first read (renumbered at once where nothing
        moved and they were published). It skips the general update's set-up for
        pairs of classes, classes that come or go, sparse rows and refits (some 10 µs of a
        one-point update's 250, WaterFlow, window 600)."""
        state, m = self.states_[0], add_index.shape[0]
        alive, class_index, weights, ids = after
        start = time.perf_counter()
        # (Everything built before the transaction closes: it leaves the state it started from
        # spent, and an interrupt after that must still find the model as it was.)
        with state.cache.transaction():
            new = self._pair_path(state, X_add, np.where(add_index == 1, 1.0, -1.0), rows, params["C"] * w_add, params,
                                  2)
            stats = PathStats(new.n_iter, m, int(rows.size), time.perf_counter() - start, new.active.size, "path")
            if new.unmoved and "_unpublished" not in self.__dict__:
                # Nothing moved and the solution is published: renumbered, not built again.
                attrs = self._attributes([new], class_index, self.classes_, self.kernel_, ids, self._next_id + m,
                                         stats, weights, self.class_weight_, None, alive)
            else:
                attrs = self._with_bookkeeping({"n_features_in_": self.n_features_in_, "_weights": weights,
                                                "_unpublished": True}, [new], None, ids, class_index,
                                               self._next_id + m, stats)
            attrs.update(self._memo_of(params))
        self._set_fitted(attrs)
        new.factor.take_spare(state.factor)
        return self

    def _update(self, X_add, y_add, remove, sample_weight_add, declared, x_name="X_add", y_name="y_add",
                w_name="sample_weight_add", refit=False, trusted=False):
        params = self._check_params()
        if not trusted:
            self._check_kernel_unchanged()
        precomputed = self.kernel_.kind == PRECOMPUTED
        sparse_rows = getattr(self, "_X_sparse", None)  # fitted on sparse rows: updates refit
        states = self.states_
        s0 = states[0]
        xp, device = s0.xp, s0.device
        name = type(self).__name__
        old_classes = self.classes_
        k_old = old_classes.shape[0]
        if (X_add is None) != (y_add is None):
            raise ValueError(f"{x_name} and {y_name} must be given together")
        n_old = self._class_index.shape[0]
        d = n_old if precomputed else s0.X.shape[1] if sparse_rows is None else sparse_rows.shape[1]
        added_names = None  # a precomputed kernel's column names of the added points
        if trusted:  # (_window_update)
            labels, known = y_add, True
        elif X_add is not None:
            if precomputed:
                added_names = self._added_point_names(X_add, x_name)
            else:
                check_feature_names(self, X_add, x_name)
            X_add, _, _ = check_X(X_add, x_name, None if precomputed else d, xp, device, owner=name,
                                  accept_sparse=sparse_rows is not None)
            if precomputed:
                check_gram_rows(X_add, n_old, x_name, name)
            labels, known = _update_labels(y_add, X_add.shape[0], y_name, x_name, old_classes, declared)
        else:
            if sample_weight_add is not None:
                raise ValueError(f"{w_name} needs {x_name}: it weights the added points")
            X_add = xp.zeros((0, d), dtype=xp.float64, device=device)
            labels, known = old_classes[:0], True
        m = X_add.shape[0]
        if trusted:
            weights_add, rows = None, np.arange(remove, dtype=np.int64)
        else:
            weights_add = check_sample_weight(sample_weight_add, m, w_name, allow_all_zero=True, inert_negative=True)
            rows = check_ids([] if remove is None else remove, self.sample_ids_)
        # The usual case, every added label among the classes: the rows, classes, boxes and ids
        # after the update in one compiled pass, which also counts each class's points (a class
        # left without one takes the general route below).
        if known:
            add_index = np.searchsorted(old_classes, labels) if m else np.zeros(0, dtype=np.int64)
            w_add = self.class_weight_[add_index] * (1.0 if weights_add is None else weights_add)  # boxes over C
            alive, class_index, weights, ids, points, weighted = _rows_after(
                rows, np.ascontiguousarray(self._class_index, dtype=np.int64),
                np.ascontiguousarray(self._weights, dtype=np.float64),
                np.ascontiguousarray(self.sample_ids_, dtype=np.int64), add_index, w_add, self._next_id, k_old)
            known = bool(points.all())
            if known and weighted.all() and self._takes_two_class_path(params, s0, rows, m, refit):
                return self._two_class_path(X_add, add_index, w_add, rows, (alive, class_index, weights, ids), params)
        if known:
            classes = old_classes
            if not weighted.all():
                check_every_class_weighted(weights, class_index, classes)  # (raises, naming the class)
        else:
            # The classes after the update: those that keep a point, and the labels added.
            alive = np.ones(self._class_index.shape[0], dtype=bool)  # the rows the update keeps
            alive[rows] = False
            kept_index = self._class_index[alive]
            present = np.bincount(kept_index, minlength=k_old) > 0
            classes = np.union1d(old_classes[present], labels)
        if classes.shape[0] < 2:
            what = f"only class {classes.tolist()}" if classes.size else "no points"
            raise ValueError(f"the update would leave {what} in the model; an SVC needs at least two classes "
                             f"(it holds {old_classes.tolist()})")
        if params["C"] != s0.C or params["ridge"] != s0.ridge:
            raise ValueError(
                "C and ridge cannot change between fit and update "
                f"(fitted with C={s0.C}, ridge={s0.ridge}; now C={params['C']}, "
                f"ridge={params['ridge']}); call fit again"
            )
        fitted_cw = getattr(self, "_fitted_class_weight", None)
        if fitted_cw != self.class_weight:
            raise ValueError(f"class_weight cannot change between fit and update (fitted with {fitted_cw!r}; "
                             f"now {self.class_weight!r}); call fit again")
        start = time.perf_counter()
        same = classes is old_classes
        k = classes.shape[0]
        cw = self.class_weight_
        if not same:
            # Class of every row after the update, in the new numbering.
            remap = np.searchsorted(classes, old_classes)  # only read for the classes still present
            add_index = np.searchsorted(classes, labels) if m else np.zeros(0, dtype=np.int64)
            class_index = np.concatenate([remap[kept_index], add_index])
            cw = self._class_weights_after(classes, old_classes, class_index)
            w_add = cw[add_index] * (1.0 if weights_add is None else weights_add)  # boxes over C
            weights = np.concatenate([self._weights[alive], w_add])
            check_every_class_weighted(weights, class_index, classes)
            ids = np.concatenate([self.sample_ids_[alive], self._next_id + np.arange(m, dtype=np.int64)])
        upper_add = params["C"] * w_add
        # A model of sparse rows or of a precomputed kernel: its rows after the update (every
        # changed pair refits on them, beside the states it starts from).
        rows_after = None
        if sparse_rows is not None:
            check_memory([s.n for s in states] + [pair_rows(class_index, i, j, k).size for i, j in pairs(k)],
                         hasattr(self, "probA_") and not same, name)
            rows_after = scipy.sparse.vstack([sparse_rows[alive], scipy.sparse.csr_matrix(X_add)], format="csr")
        elif precomputed:
            rows_after = self._gram_after(alive, X_add)
            # The names of the training points after the update: the kept ones', then the
            # added ones' (none where K_add has none to give).
            fitted_names = getattr(self, "feature_names_in_", None)
            names_after = (None if fitted_names is None or (m and added_names is None)
                           else np.concatenate([fitted_names[alive], added_names if m else fitted_names[:0]]))
        # Sparse rows, a precomputed kernel (no feature rows for the path) and the sigmoid kernel
        # (the path's factor needs a positive definite margin matrix): every change refits.
        refits = refit or rows_after is not None or self.kernel_.kind == "sigmoid"
        with ExitStack() as stack:
            new_states, followed, n_bp, ways = [], [], 0, set()
            for i, j in pairs(k):
                oi, oj = (i, j) if same else (_old(old_classes, classes[i]), _old(old_classes, classes[j]))
                if oi < 0 or oj < 0:
                    new_states.append(None)  # a new pair: trained below, once the old ones moved
                    continue
                p_old = pair_index(k_old, oi, oj)
                state = states[p_old]
                if k_old == 2:
                    local_remove = rows
                else:
                    old_rows = pair_rows(self._class_index, oi, oj, k_old)
                    local_remove = np.searchsorted(old_rows, rows[np.isin(self._class_index[rows], (oi, oj))])
                if k == 2:
                    X_p, y_p, u_p = X_add, add_index, upper_add
                else:
                    mine = np.flatnonzero((add_index == i) | (add_index == j))
                    X_p = take_rows(X_add, mine, xp, device) if mine.size < m else X_add
                    y_p, u_p = add_index[mine], upper_add[mine]
                if not local_remove.size and not y_p.size and not precomputed:
                    # Nothing of this pair changes. (A precomputed kernel's rows change for every
                    # pair: their columns are the model's points, their indices its rows.)
                    new_states.append(state)
                    continue
                if refits or (params["method"] == "auto" and _refit_is_cheaper(state, local_remove, y_p.size)):
                    kept = np.delete(np.arange(state.n), local_remove)
                    rows_new = pair_rows(class_index, i, j, k)
                    X_new = (pair_training_rows(rows_after, None if k == 2 else rows_new, self.kernel_, xp, device)
                             if rows_after is not None else
                             xp.concat([xp.take(state.X, to_device(kept, xp, device), axis=0), X_p], axis=0))
                    # The current α on the kept rows: SimpleSVM's warm start, or SMO's where SMO starts.
                    alpha = np.concatenate([state.alpha[kept], np.zeros(y_p.size)])
                    smo = _smo_refit(state, X_new)
                    new, _ = self._fit_pair(X_new, np.where(class_index[rows_new] == j, 1.0, -1.0), weights[rows_new],
                                            state.kernel, params, k, start=None if smo else alpha,
                                            smo_from=alpha if smo else None)
                    new_states.append(new)
                    ways.add("refit")
                    continue
                ways.add("path")
                stack.enter_context(state.cache.transaction())
                new = self._pair_path(state, X_p, np.where(y_p == j, 1.0, -1.0), local_remove, u_p, params, k)
                new_states.append(new)
                followed.append((new, state))
                n_bp += new.n_iter
            if any(s is None for s in new_states):
                new_states = self._new_pairs(new_states, classes, class_index, weights, states, old_classes,
                                             kept_index, rows, X_add, add_index, params, rows_after)
            if refits:  # whatever changed was refitted (or fitted, for a new pair)
                ways = {"refit"}
            stats = PathStats(n_bp, m, len(rows), time.perf_counter() - start, sum(s.active.size for s in new_states),
                              " and ".join(sorted(ways)) or "path")
            unmoved = (k == 2 and same and not refits and new_states[0].unmoved
                       and "_unpublished" not in self.__dict__)
            if k == 2 and same and rows_after is None and not unmoved:
                attrs = self._with_bookkeeping(
                    {"n_features_in_": self.n_features_in_, "class_weight_": np.asarray(cw, dtype=np.float64),
                     "_weights": weights, "_unpublished": True},
                    new_states, None, ids, class_index, self._next_id + m, stats)
            else:
                attrs = self._attributes(new_states, class_index, classes, self.kernel_, ids, self._next_id + m,
                                         stats, weights, cw, rows_after if sparse_rows is not None else None,
                                         alive if unmoved else None)
            if precomputed:
                attrs["feature_names_in_"] = names_after
            if not same:
                attrs.update(self._probability_after(new_states, class_index, weights, classes, old_classes,
                                                     params))
            attrs.update(self._memo_of(params))
        self._set_fitted(attrs)
        # The states the update started from are spent (their cache buffers are the new states'):
        # their factors' arrays take the next update's copies of the factors.
        for new, spent in followed:
            new.factor.take_spare(spent.factor)
        return self

    def _added_point_names(self, K_add, x_name):
        """The column names K_add gives the added points of a precomputed kernel (its last m),
        or None (no names on K_add, or none on the model: the training points' names are
        then dropped). Its first n names must be the training points' (``feature_names_in_``),
        in training order.

        Raises
        ------
        ValueError
            Names that do not begin with ``feature_names_in_``.
        """
        fitted, names = getattr(self, "feature_names_in_", None), feature_names(K_add)
        if fitted is None or names is None:
            return None
        n = fitted.shape[0]
        if names.shape[0] < n or not np.array_equal(names[:n], fitted):
            raise ValueError(f"the column names of {x_name} must begin with the names of the model's training "
                             f"points in training order (feature_names_in_, {n} names: "
                             f"{fitted[:3].tolist()}...); got {names[:3].tolist()}...")
        return names[n:]

    def _gram_after(self, alive, K_add):
        """A precomputed kernel's training rows after an update, ``[G | index]``
        (:func:`gpath.kernels.with_index`): the Gram matrix of the kept points (host bool
        ``alive``) and the added ones, whose kernel values ``K_add`` (m, n + m) are checked
        by :func:`gpath._validation.check_gram_rows`."""
        states = self.states_
        xp, device = states[0].xp, states[0].device
        n_old = alive.shape[0]
        k = self.classes_.shape[0]
        rows = (states[0].X if k == 2 else
                rows_from_pairs(states, self._class_index, k, np.arange(n_old, dtype=np.int64)))
        kept = to_device(np.flatnonzero(alive), xp, device)
        G = xp.take(xp.take(rows[:, :n_old], kept, axis=0), kept, axis=1)
        if K_add.shape[0]:
            across = xp.take(K_add[:, :n_old], kept, axis=1)  # the new points against the kept ones
            G = xp.concat([xp.concat([G, across.T], axis=1), xp.concat([across, K_add[:, n_old:]], axis=1)],
                          axis=0)
        return with_index(G, 0)

    def _class_weights_after(self, classes, old_classes, class_index) -> np.ndarray:
        """The class weights of the updated model: the fitted ones, and for each new class its
        dict weight or its "balanced" weight from the updated counts."""
        cw = np.empty(classes.shape[0])
        counts = np.bincount(class_index, minlength=classes.shape[0])
        for c, label in enumerate(classes):
            old = _old(old_classes, label)
            cw[c] = self.class_weight_[old] if old >= 0 else new_class_weight(
                self.class_weight, label, class_index.shape[0], classes.shape[0], int(counts[c]))
        return cw

    def _new_pairs(self, new_states, classes, class_index, weights, states, old_classes, kept_index, rows,
                   X_add, add_index, params, rows_after=None):
        """Train the pairs of the classes that appear in this update on the current points of
        their two classes (kept rows in training order, then the added ones; ``rows_after``:
        all the model's rows after the update, for a model of sparse rows)."""
        xp, device = states[0].xp, states[0].device
        k, k_old = classes.shape[0], old_classes.shape[0]
        kept_rows = np.delete(np.arange(self._class_index.shape[0]), rows)  # old rows, in the new order
        out = list(new_states)
        for p, (i, j) in enumerate(pairs(k)):
            if out[p] is not None:
                continue
            olds = [o for o in (_old(old_classes, classes[i]), _old(old_classes, classes[j])) if o >= 0]
            kept = np.flatnonzero(np.isin(kept_index, olds))
            added = np.flatnonzero((add_index == i) | (add_index == j))
            now = np.concatenate([kept, kept_rows.size + added])  # rows of the updated model
            if rows_after is not None:
                X_p = pair_training_rows(rows_after, now, self.kernel_, xp, device)
            else:
                parts = [xp.take(X_add, to_device(added, xp, device), axis=0)]
                if kept.size:
                    parts.insert(0, rows_from_pairs(states, self._class_index, k_old, kept_rows[kept]))
                X_p = xp.concat(parts, axis=0) if len(parts) > 1 else parts[0]
            y_p = np.where(class_index[now] == j, 1.0, -1.0)
            out[p], _ = self._fit_pair(X_p, y_p, weights[now], states[0].kernel, params, k)
        return out

    def _probability_after(self, new_states, class_index, weights, classes, old_classes, params) -> dict:
        """probA_ and probB_ after an update that changed the classes: the old pairs keep
        their sigmoids, new pairs are calibrated (only where the model has sigmoids)."""
        if not hasattr(self, "probA_"):
            return {}
        k, k_old = classes.shape[0], old_classes.shape[0]
        A, B = np.empty(len(new_states)), np.empty(len(new_states))
        rng = check_random_state(self.random_state)
        for p, (i, j) in enumerate(pairs(k)):
            oi, oj = _old(old_classes, classes[i]), _old(old_classes, classes[j])
            if oi >= 0 and oj >= 0:
                q = pair_index(k_old, oi, oj)
                A[p], B[p] = self.probA_[q], self.probB_[q]
            else:
                A[p], B[p] = self._sigmoid(new_states[p], weights[pair_rows(class_index, i, j, k)],
                                           new_states[p].kernel, params, rng)
        return {"probA_": A, "probB_": B}

    @serialized
    def calibrate(self):
        """Refit the Platt sigmoids (``probA_``, ``probB_``) on the current points.

        Each pair's sigmoid is fitted on 5-fold cross-validated decision values of its
        current points, each fold predicted by the exact SVC of the other folds, as at
        :meth:`fit` with ``probability=True`` (LIBSVM's method). An update keeps the sigmoids
        of the model it starts from; call this when they should follow the data.

        Returns
        -------
        self

        Raises
        ------
        sklearn.exceptions.NotFittedError
            Before ``fit``.
        ValueError
            ``probability=False`` (set it with ``set_params(probability=True)`` first).
        PathError
            A numerical failure of a cross-validation fit; the model is unchanged.

        References
        ----------
        Platt (1999), section 2.2; Lin, Lin & Weng (2007), Algorithm 1 (:mod:`gpath._platt`).
        """
        check_is_fitted(self, "states_")
        params = self._check_params()
        if not params["probability"]:
            raise ValueError("calibrate fits the probability model of probability=True; got probability=False "
                             "(call set_params(probability=True) first)")
        probability = self._calibrated(self.states_, self._class_index, self._weights, self.states_[0].kernel,
                                       params, len(self.classes_))
        self._set_fitted({"probA_": probability["A"], "probB_": probability["B"]})
        return self

    def _calibrated(self, states, class_index, weights, kernel, params, k) -> dict:
        rng = check_random_state(self.random_state)
        A, B = zip(*(self._sigmoid(state, weights[pair_rows(class_index, i, j, k)], kernel, params, rng)
                     for state, (i, j) in zip(states, pairs(k))))
        return {"A": np.array(A), "B": np.array(B)}

    def _sigmoid(self, state, weights, kernel, params, rng) -> tuple[float, float]:
        """Platt's sigmoid of one pair (``weights``: its rows' boxes over C), on its
        cross-validated decision values. Each fold's model is SimpleSVM warm-started from
        the pair's solution on the fold's rows (4/5 of them: a start close to the fold's
        solution), the same exact model as a fit from scratch; the folds share their
        kernel values (:func:`gpath._platt.cv_decision_values`).

        Not SMO from that point (as an update's refit with shared rows starts,
        :func:`_smo_refit`): on Adult, the whole fit with probabilities, n = 3,000, C = 0.1 /
        10: 0.51–0.57 / 0.48–0.51 s against 0.44–0.53 / 0.57–0.59 s from SimpleSVM's start,
        but n = 10,000, C = 1 / 10: 6.2–6.3 / 5.7–6.2 s against 4.0–4.3 / 3.2 s."""

        def solve(X_sub, y_sub, weights_sub, rows):
            sub, _ = exact_state(X_sub, y_sub, kernel, params["C"], params["ridge"], start=state.alpha[rows],
                                 weights=None if np.all(weights_sub == 1.0) else weights_sub)
            self._check_state(sub)
            return sub

        dec, first = cv_decision_values(state.X, state.y_host, weights, solve, kernel, rng)
        return sigmoid_train(dec, first)

    # ------------------------------------------------------------------ internals
    _CHECKED = ("C", "ridge", "tol", "method", "cache_size", "max_iter", "decision_function_shape",
                "probability", "break_ties", "shrinking", "verbose")

    def _checked_params(self) -> dict:
        return {
            "C": check_positive(self.C, "C"),
            "ridge": check_positive(self.ridge, "ridge", allow_zero=True),
            "tol": check_positive(self.tol, "tol"),
            "method": check_choice(self.method, "method", ("auto", "multiple", "single")),
            "cache_size": check_positive(self.cache_size, "cache_size"),
            "max_iter": check_max_iter(self.max_iter),
            **self._more_checked_params(),
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

    def _check_state(self, state: SVCState, checked=None) -> None:
        check_state(state, check_positive(self.tol, "tol"), checked)

    def _attributes(self, states, class_index, classes, kernel, ids, next_id, stats, weights, cw,
                    sparse_rows=None, unmoved_alive=None) -> dict:
        """Every fitted attribute of the new states, computed before the first one is set
        (``sparse_rows``: the training rows of a model fitted on sparse rows, whose states
        hold their Gram rows; ``unmoved_alive``: the rows a binary update kept where its path
        moved no coefficient, whose published solution is then this model's, on those rows)."""
        k = classes.shape[0]
        xp, device = states[0].xp, states[0].device
        if unmoved_alive is not None:
            # The same support vectors, coefficients and bias: only the rows renumber (the
            # removed points had α = 0, the added ones have it). Not rebuilt: at n = 10,000
            # the attributes took 0.6 ms of an update, most of it the support vectors' copy.
            support, gone_before = self.support_, np.cumsum(~unmoved_alive)
            published = {name: getattr(self, name) for name in ("classes_", "kernel_", "n_features_in_",
                                                                 "support_vectors_", "dual_coef_", "intercept_",
                                                                 "n_support_")}
            kept = self.alpha_[unmoved_alive]
            attrs = {**published, "support_": (support - gone_before[support]).astype(np.int32),
                     "alpha_": np.concatenate([kept, np.zeros(class_index.shape[0] - kept.shape[0])]),
                     "class_weight_": np.asarray(cw, dtype=np.float64), "_weights": weights}
            return self._with_bookkeeping(attrs, states, sparse_rows, ids, class_index, next_id, stats)
        if sparse_rows is not None:
            def take_rows(rows):
                return sparse_rows[rows]
        elif k == 2:
            X = states[0].X

            def take_rows(rows):
                return xp.take(X, to_device(rows, xp, device), axis=0)
        else:
            def take_rows(rows):
                return rows_from_pairs(states, class_index, k, rows)
        n_features = states[0].X.shape[1] if sparse_rows is None else sparse_rows.shape[1]
        attrs = self._fitted_attributes(class_index, [s.alpha for s in states], [s.b for s in states], classes,
                                        kernel, take_rows, n_features, weights, cw)
        return self._with_bookkeeping(attrs, states, sparse_rows, ids, class_index, next_id, stats)

    @staticmethod
    def _with_bookkeeping(attrs, states, sparse_rows, ids, class_index, next_id, stats) -> dict:
        """The published attributes ``attrs`` with the states and their bookkeeping."""
        return {**attrs, "states_": states, "_X_sparse": sparse_rows, "sample_ids_": ids, "_class_index": class_index,
                "_next_id": int(next_id), "last_update_": stats,
                "n_iter_": np.array([getattr(s, "n_iter", 0) for s in states], dtype=np.int32),
                "fit_status_": 0, "shape_fit_": (int(class_index.shape[0]), attrs["n_features_in_"])}

    def __copy__(self):
        """An independent model: ``states_`` is copied too (an update reuses the device cache
        of the state it starts from, so two models must not share one)."""
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        if "states_" in self.__dict__:
            new.states_ = copy.deepcopy(self.states_)
        return new

    def _kkt_problem(self) -> tuple[float, float]:
        return self.states_[0].C, self.states_[0].ridge

    def _pair_training_data(self, X, y):
        """The pairs' own training rows and labels where X and y are None."""
        if X is None and y is None:
            k = len(self.classes_)
            rows = [pair_rows(self._class_index, i, j, k) for i, j in pairs(k)]
            if getattr(self, "_X_sparse", None) is not None:  # the states hold Gram rows; kernel_ takes the sparse rows
                return [(self._X_sparse[r], s.y_host, r) for s, r in zip(self.states_, rows)]
            return [(s.X, s.y_host, r) for s, r in zip(self.states_, rows)]
        return super()._pair_training_data(X, y)

    # ------------------------------------------------------------------ persistence
    def _to_saved(self):
        """The whole incremental state (:func:`gpath._incremental_file.to_saved`)."""
        return to_saved(self)

    @classmethod
    def _from_saved(cls, meta, data, like):
        """The saved model, checked (:func:`gpath._incremental_file.from_saved`).

        Raises
        ------
        gpath.persistence.ModelFileError
        """
        return from_saved(cls, meta, data, like)

    def _check_loaded(self) -> None:
        """The KKT conditions of every pair, recomputed from scratch (:meth:`check_kkt`'s
        violation), hold to ``tol · (1 + max_i Σ_j |Q_ij| α_j)``; the saved margins y f
        (which the next update starts from) agree with the recomputed ones to the same
        tolerance, and pass the check every update makes (to ``tol``).

        Raises
        ------
        gpath.persistence.ModelFileError
        """
        k = len(self.classes_)
        for p, (X_p, y_pm, rows) in enumerate(self._pair_training_data(None, None)):
            s = self.states_[p]
            where = "" if k == 2 else f" of the pair {pairs(k)[p]}"
            yf, scale = self._margins_from_scratch(p, X_p, y_pm, s.alpha)
            limit = self.tol * (1.0 + scale)
            violation = self._kkt_violation(yf, y_pm, s.alpha, s.upper, scale)
            if violation > self.tol:
                raise persistence.ModelFileError(
                    f"alpha and b{where} violate the KKT conditions by {violation:.3g} relative to the scale "
                    f"1 + max_i sum_j |Q_ij| alpha_j = {1 + scale:.3g}, recomputed from scratch "
                    f"(allowed: tol={self.tol:g})"
                )
            drift = float(np.max(np.abs(yf - to_host(s.yf))))
            if drift > limit:
                raise persistence.ModelFileError(
                    f"the saved margins y f{where} differ by {drift:.3g} from those recomputed from X, y, alpha "
                    f"and b (allowed: tol*(1 + max_i sum_j |Q_ij| alpha_j) = {limit:.3g})"
                )
            try:
                self._check_state(s)
            except PathError:
                raise persistence.ModelFileError(
                    f"the saved margins y f{where} violate the KKT conditions of their index sets by more than "
                    f"tol={self.tol:g} (the check every update makes)"
                ) from None


# ---------------------------------------------------------------------- helpers
@njit(cache=True)
def _rows_after(rows, class_index, weights, ids, add_index, w_add, next_id, k):  # pragma: no cover - compiled
    """An update's bookkeeping where its labels are among the model's k classes: the rows it
    keeps (``alive``), then each point's class, box over C and id after it (the kept points,
    then the m added ones, ids from ``next_id``), and per class its points and those of
    positive weight, in one pass: with the label and id checks before it, 49 µs of a stream's
    one-point update where the dozen NumPy steps it replaces took 88 (medians, timed in one
    process). ``rows``: the removed rows, distinct (check_ids)."""
    n, m = class_index.shape[0], add_index.shape[0]
    alive = np.ones(n, dtype=np.bool_)
    for r in rows:
        alive[r] = False
    size = n - rows.shape[0] + m
    index, boxes, new_ids = np.empty(size, dtype=np.int64), np.empty(size), np.empty(size, dtype=np.int64)
    points, weighted = np.zeros(k, dtype=np.int64), np.zeros(k, dtype=np.int64)
    t = 0
    for i in range(n + m):
        if i < n:
            if not alive[i]:
                continue
            c, w, point_id = class_index[i], weights[i], ids[i]
        else:
            c, w, point_id = add_index[i - n], w_add[i - n], next_id + i - n
        index[t], boxes[t], new_ids[t] = c, w, point_id
        points[c] += 1
        weighted[c] += w > 0.0
        t += 1
    return alive, index, boxes, new_ids, points, weighted


def _old(old_classes, label) -> int:
    """Index of ``label`` among the classes of the model before an update, or −1."""
    pos = int(np.searchsorted(old_classes, label))
    return pos if pos < old_classes.shape[0] and old_classes[pos] == label else -1


def _smo_refit(state, X_new) -> bool:
    """Whether a refit of the pair ``state`` on the rows ``X_new`` starts SMO from the current
    α on those rows (seeded) rather than SimpleSVM from it, where the SMO start applies (a
    built-in kernel): a margin set of at least ``_SMO_REFIT_SHARE`` of the support vectors, or
    kernel rows shared with other fits of the same data (a fold of ``cross_validate``, whose
    rows are computed once for all the folds: :func:`gpath._smo.shared_kernel_rows_of`).
    Adult, 10-fold ``cross_validate``, SMO's start for every refit with the rows shared
    against this rule without them: n = 10,000, C = 0.1 / 1: 4.4–5.1 / 4.1 s against
    5.6–6.1 / 5.4–6.1 s; n = 3,000, C = 1: 0.55 against 0.63–0.69 s."""
    return state.kernel.kind in ("linear", "rbf", "poly", "sigmoid") and (
        state.active.size >= _SMO_REFIT_SHARE * np.count_nonzero(state.alpha > 0.0)
        or shared_kernel_rows_of(X_new) is not None)


def _refit_is_cheaper(state, remove: np.ndarray, m: int) -> bool:
    """Whether SimpleSVM warm-started from the current α (:func:`warm_simple_svm`) is
    predicted to reach the new solution faster than the MID path, for adding m points to the
    pair ``state`` (n rows) and removing its rows ``remove``: when ``(m + ℓ)·(1 + |M|/100) >
    n/2`` and n ≥ 2,000.

    The path's cost grows with the points it moves (their kernel columns, and breakpoints
    that each pass over the n·|M| cached margin values); the warm start's is about the
    kernel columns of the support vectors whatever the update, and its blocks of entering
    points make a large margin set cheap. Measured on Adult, n = 3,000 and 10,000, C from
    0.1 to 100, m = ℓ from 100 to 3,000 (benchmarks/RESULTS.md): the crossover lies near
    m + ℓ = n/2 with a small margin set and falls as |M| grows; the rule took the faster
    way (or one within 5 %) in 26 of 28 cases, the other two within 1.2× and 1.8×. Below n = 2,000 each
    of the warm start's iterations costs more in fixed (Python) work than a breakpoint of the
    compiled path: at n = 1,000 the path was the faster in every case measured.
    """
    n = state.n
    return n >= _REFIT_MIN_ROWS and (m + remove.size) * (1.0 + state.active.size / 100.0) > 0.5 * n


def _update_labels(y, m, name, x_name, classes, declared) -> tuple[np.ndarray, bool]:
    """The labels of added rows, and whether they are all among ``classes``: each one of
    ``classes`` (the usual case, checked in a few microseconds), or a new class label (of the
    declared classes, if any), checked as scikit-learn checks class labels.

    Raises
    ------
    ValueError
    """
    labels = host_values(y)
    if (labels.ndim == 1 and labels.shape[0] == m and labels.dtype.kind in "biufU"
            and labels.dtype.kind == classes.dtype.kind):
        # Each label against its place among the sorted classes (a NaN is never one of them).
        at = np.minimum(np.searchsorted(classes, labels), classes.shape[0] - 1)
        if (classes[at] == labels).all():  # (np.array_equal's wrapper took longer than the test)
            return labels, True
    if declared is not None:
        labels = _declared_labels(y, m, name, x_name, declared)
        return labels, bool(np.all(np.isin(labels, classes)))
    labels, _ = check_labels(y, m, name, x_name=x_name, multiclass=True, min_classes=1)
    kinds = {labels.dtype.kind in "biuf", np.asarray(classes).dtype.kind in "biuf"}
    if len(kinds) > 1:
        raise ValueError(f"{name} holds labels of another kind (dtype {labels.dtype}) than the classes "
                         f"{np.asarray(classes).tolist()[:5]}")
    return labels, bool(np.all(np.isin(labels, classes)))


def _declared_labels(y, m, name, x_name, declared) -> np.ndarray:
    """Labels that must be among the classes declared to ``partial_fit``.

    Raises
    ------
    ValueError
    """
    labels = host_values(y)
    if labels.ndim == 1 and labels.shape[0] == m:
        unknown = np.setdiff1d(labels, declared)
        if unknown.size:
            raise ValueError(f"{name} holds labels {unknown[:5].tolist()} that are not in classes={declared.tolist()} "
                             f"(given to partial_fit)")
    return check_labels(y, m, name, declared, x_name=x_name)[0]


def _concat_weights(before, n_before, weights, n_total):
    if before is None and weights is None:
        return None
    first = np.ones(n_before) if before is None else before
    second = np.ones(n_total - n_before) if weights is None else weights
    return np.concatenate([first, second])
