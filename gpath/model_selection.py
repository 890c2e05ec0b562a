"""Exact model selection for kernel SVMs: k-fold cross-validation by MID updates, the exact
cross-validation error as a function of C (C-SVC and ε-SVR), and grid search over gamma on
joblib (and so on Dask).

- :func:`cross_validate` has scikit-learn's signature and result. For an
  :class:`gpath.IncrementalSVC` the fold models come from one another by multiple incremental
  decremental updates (Karasuyama & Takeuchi 2009): from the model of one fold's training set
  to the next one's, remove the next fold's held-out points and add back the current fold's;
  each fold model is the exact model of its training folds. Other estimators go to
  scikit-learn's ``cross_validate``.
- :func:`cv_error_path` follows one C path per fold (:class:`gpath.SVCPath`; Hastie et al.
  2004). Each held-out decision value is linear in C between the breakpoints of its fold's
  path, so the C where it changes sign is solved in closed form: the mean held-out 0-1 error
  is a step function of C, known exactly, with a knot at every such C.
- :func:`cv_mse_path` does the same for ε-SVR (:class:`gpath.SVRPath`; Gunter & Zhu 2007):
  each held-out prediction is linear in C between breakpoints, so the mean held-out squared
  error is a quadratic in C on each interval between the folds' breakpoints, known exactly.
- :class:`SVCPathCV` computes that curve for every gamma of a list, the (gamma, fold) paths in
  parallel through joblib: ``with joblib.parallel_backend("dask"):`` runs them on a Dask
  cluster.

Every kernel parameter is resolved once on the whole X (``gamma="scale"`` included, unlike
scikit-learn's SVC, which resolves it on each training fold): all folds evaluate the same
kernel, which the MID updates of :func:`cross_validate` need anyway.
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.model_selection import check_cv
from sklearn.utils.validation import check_is_fitted

from ._array_api import get_namespace_and_device, is_array_api, is_numpy, to_device, to_host
from ._cpath import CVErrorPath, MSEPath, c_path, mean_error_steps, mean_squared_error_paths, path_error_steps
from ._multiclass import class_weights
from ._path import PathError, check_resolution, restored
from ._smo import shared_kernel_rows
from ._validation import (
    check_bool,
    check_labels,
    check_positive,
    check_targets,
    check_X,
    is_precomputed,
    numeric_targets,
    signed_labels,
)
from .cpath import _LOADED_TOL, check_C_range, check_end, start_state
from .incremental import IncrementalSVC
from .kernels import Kernel
from .linalg import SingularMarginError
from .persistence import ModelFileError, SaveMixin, fitted_attribute, fitted_n_features
from .svr import IncrementalSVR
from .svrpath import SVRPath

__all__ = ["CVErrorPath", "MSEPath", "SVCPathCV", "cross_validate", "cv_error_path", "cv_mse_path"]


# ---------------------------------------------------------------------- helpers
def _take_rows(X, rows: np.ndarray, columns: np.ndarray | None = None):
    """Rows of X (and its columns ``columns`` where given: a Gram matrix's) as X's own kind:
    a pandas frame stays a frame, an array-API array stays in its namespace and on its
    device, anything else becomes a NumPy array."""
    if hasattr(X, "iloc"):
        return X.iloc[rows] if columns is None else X.iloc[rows, columns]
    if is_array_api(X) and not isinstance(X, np.ndarray):
        xp, device = get_namespace_and_device(X)
        if not is_numpy(xp):
            out = xp.take(X, to_device(rows, xp, device), axis=0)
            return out if columns is None else xp.take(out, to_device(columns, xp, device), axis=1)
    return np.asarray(X)[rows] if columns is None else np.asarray(X)[np.ix_(rows, columns)]


def _split_input(X):
    """What the splitter sees as X: X itself, or a host stand-in of its shape where X lives
    on another device (a splitter only counts its rows)."""
    if is_array_api(X) and not isinstance(X, np.ndarray):
        xp, _ = get_namespace_and_device(X)
        if not is_numpy(xp):
            return np.zeros((X.shape[0], 1))
    return X


def _splits(cv, X, labels, groups, classifier=True):
    """The (train, test) row indices of scikit-learn's splitter for ``cv`` (stratified for a
    classifier when ``cv`` is an int), as lists of host int arrays.

    Raises
    ------
    ValueError
        If a classifier's training fold holds one class only (an SVC needs two).
    """
    splitter = check_cv(cv, labels, classifier=classifier)
    splits = [(np.asarray(tr, dtype=np.int64), np.asarray(te, dtype=np.int64))
              for tr, te in splitter.split(_split_input(X), labels, groups)]
    for k, (train, _) in enumerate(splits if classifier else ()):
        seen = np.unique(labels[train])
        if seen.size < 2:
            raise ValueError(f"cv: training fold {k} holds only the class {seen.tolist()}; every training fold "
                             "must hold at least two classes")
    return splits


def _resolved_gamma(kernel, gamma, degree, coef0, X, svc: bool = False) -> float:
    """gamma as a number, resolved on all of X (``"scale"``, ``"auto"``); ValueError for bad
    kernel parameters (``svc``: an IncrementalSVC's, :meth:`gpath.kernels.Kernel.from_params`)."""
    return Kernel.from_params(kernel, gamma, degree, coef0, X, svc=svc).gamma


# ---------------------------------------------------------------------- cross_validate
def cross_validate(estimator, X, y, *, groups=None, cv=5, scoring=None, return_train_score=False,
                   return_estimator=False, return_indices=False):
    """Evaluate an estimator by k-fold cross-validation, with exact fold models updated from one
    another.

    For an :class:`gpath.IncrementalSVC` or :class:`gpath.IncrementalSVR` the first fold's model
    is fitted on its training set; each next fold's model comes from the current one by one
    :meth:`~gpath.IncrementalSVC.update`
    that removes the next fold's held-out points (those the current training set holds) and
    adds back the current held-out points that the next training set holds. Each fold model is
    the exact model of its training folds, as a fit on them would be. Any other estimator (a
    pipeline, :class:`gpath.SimpleSVC`, ...) is passed to scikit-learn's ``cross_validate``
    with the same arguments.

    Parameters
    ----------
    estimator : estimator
        An :class:`gpath.IncrementalSVC` or :class:`gpath.IncrementalSVR` (cloned; ``gamma="scale"`` is resolved once on the
        whole X and set as a number on the clone, since the kernel must stay fixed between
        updates), or any scikit-learn estimator.
    X : array of shape (n_samples, n_features)
        Any array-API array, a pandas DataFrame, or an array-like. For an IncrementalSVC of
        ``kernel="precomputed"``, the (n_samples, n_samples) Gram matrix: each fold takes
        its rows and the columns of its model's training points, as scikit-learn does for
        pairwise estimators.
    y : array-like of shape (n_samples,)
        Class labels, two or more (for an IncrementalSVC: each fold's model is one-vs-one,
        as its fit), real targets (for an IncrementalSVR).
    groups : array-like of shape (n_samples,) or None
        Group labels for a group splitter.
    cv : int, cross-validation generator or iterable, default 5
        Anything scikit-learn's ``check_cv`` accepts: an int is a ``StratifiedKFold`` for
        classes, a ``KFold`` for regression (no shuffling).
    scoring : str, callable, list, tuple, dict or None
        As in scikit-learn: None is the estimator's ``score`` (accuracy; R² for an
        IncrementalSVR); several metrics
        give one ``test_<name>`` entry each.
    return_train_score : bool, default False
    return_estimator : bool, default False
        Also return each fold's model (a copy taken before the next update).
    return_indices : bool, default False
        Also return each fold's train and test indices.

    Returns
    -------
    scores : dict of float arrays of shape (n_splits,)
        ``test_score`` (or ``test_<name>`` per metric), ``fit_time`` and ``score_time``
        (seconds; for the MID chain, the first fold's fit and then each update), and where
        asked ``train_score`` / ``train_<name>``, ``estimator`` (list) and ``indices``
        (dict of lists ``"train"``, ``"test"``).

    Raises
    ------
    ValueError
        Bad X or y (fewer than two classes, NaN or inf, mismatched lengths, a Gram matrix that is
        not square for ``kernel="precomputed"``), a training fold with
        one class only, ``return_*`` not a bool, or an argument scikit-learn's
        ``check_cv``/``check_scoring`` refuse (their messages).
    TypeError
        X not numeric.
    PathError, SingularMarginError
        A numerical failure of a fit or an update.

    References
    ----------
    M. Karasuyama and I. Takeuchi, "Multiple incremental decremental learning of support
    vector machines", NIPS 2009, section 3 (the update) and section 4.2 (10-fold
    cross-validation error over C and gamma, its Figure 7).
    """
    return_train_score = check_bool(return_train_score, "return_train_score")
    return_estimator = check_bool(return_estimator, "return_estimator")
    return_indices = check_bool(return_indices, "return_indices")
    if not isinstance(estimator, (IncrementalSVC, IncrementalSVR)):
        from sklearn.model_selection import cross_validate as sk_cross_validate

        return sk_cross_validate(estimator, X, y, groups=groups, cv=cv, scoring=scoring,
                                 return_train_score=return_train_score, return_estimator=return_estimator,
                                 return_indices=return_indices)
    from sklearn.metrics import check_scoring

    name = type(estimator).__name__
    X_checked, _, _ = check_X(X, owner=name)
    regression = isinstance(estimator, IncrementalSVR)
    if regression:
        labels = check_targets(numeric_targets(y), X_checked.shape[0])
    else:
        labels, _ = check_labels(y, X_checked.shape[0], owner=name, multiclass=True)
    scorer = check_scoring(estimator, scoring=scoring)
    est = clone(estimator)
    pairwise = is_precomputed(est.kernel)
    if pairwise and X_checked.shape[0] != X_checked.shape[1]:
        raise ValueError(f"X should be a square kernel matrix: {name}(kernel='precomputed') takes the Gram "
                         f"matrix K(x_i, x_j) of all the samples; got X of shape {tuple(X_checked.shape)}")
    if not pairwise:
        est.set_params(gamma=_resolved_gamma(est.kernel, est.gamma, est.degree, est.coef0, X_checked,
                                             svc=isinstance(est, IncrementalSVC)))

    def rows_of(rows, model_rows):
        """The rows ``rows`` of X as the model takes them: a Gram matrix's columns are the
        model's training points, ``model_rows`` (rows of X)."""
        return _take_rows(X, rows, model_rows if pairwise else None)

    splits = _splits(cv, X, labels, groups, classifier=not regression)
    results: dict[str, list] = {"fit_time": [], "score_time": [], "test": [], "train": [], "estimator": []}
    row_of_id = np.zeros(0, dtype=np.int64)  # training row of each sample id of the model
    # Every fold's fit or refit gathers its kernel values (SMO's float32 rows, the exact start's
    # float64 columns) from rows computed once, on all the rows, for every fold (feature rows
    # on the host).
    with shared_kernel_rows(X_checked, feature_rows=not pairwise) as store:
        for k, (train, test) in enumerate(splits):
            start = time.perf_counter()
            if k == 0 or not (regression or _same_classes_and_weights(est, labels[train])):
                # class_weight="balanced" weighs the classes by their counts in the training rows:
                # a fold with other counts has other boxes for every point, which no MID path
                # (fixed boxes) reaches; it is fitted, as is a fold without one of the model's
                # classes (or with one it lacks).
                if store is not None:
                    store.index = train
                est.fit(rows_of(train, train), labels[train])
                row_of_id = train.copy()
            else:
                held = row_of_id[est.sample_ids_]
                remove = est.sample_ids_[~np.isin(held, train)]
                add = np.setdiff1d(train, held)
                kw = dict(X_add=rows_of(add, np.concatenate([held, add])), y_add=labels[add]) if add.size else {}
                if store is not None:  # the rows of a refit: the kept ones in their order, then the added
                    store.index = np.concatenate([held[np.isin(held, train)], add])
                est.update(**kw, remove=remove)
                new_ids = est.sample_ids_[est.sample_ids_.size - add.size :]  # update appends the added rows
                grown = np.full(int(est.sample_ids_.max()) + 1, -1, dtype=np.int64)
                grown[: row_of_id.size] = row_of_id
                row_of_id = grown
                row_of_id[new_ids] = add
                if getattr(est, "probability", False):
                    est.calibrate()  # the sigmoid of this fold's training rows (no other fold's labels)
            results["fit_time"].append(time.perf_counter() - start)
            start = time.perf_counter()
            model_rows = row_of_id[est.sample_ids_]  # the model's training points, in training order
            results["test"].append(scorer(est, rows_of(test, model_rows), labels[test]))
            results["score_time"].append(time.perf_counter() - start)
            if return_train_score:
                results["train"].append(scorer(est, rows_of(train, model_rows), labels[train]))
            if return_estimator:
                results["estimator"].append(_snapshot(est))
    out = {"fit_time": np.array(results["fit_time"]), "score_time": np.array(results["score_time"])}
    out.update(_score_entries("test", results["test"]))
    if return_train_score:
        out.update(_score_entries("train", results["train"]))
    if return_estimator:
        out["estimator"] = results["estimator"]
    if return_indices:
        out["indices"] = {"train": [tr for tr, _ in splits], "test": [te for _, te in splits]}
    return out


def _same_classes_and_weights(model: IncrementalSVC, labels: np.ndarray) -> bool:
    """Whether a fit on rows with ``labels`` gives ``model``'s classes and class weights."""
    if not np.array_equal(np.unique(labels), model.classes_):
        return False
    if model.class_weight != "balanced":
        return True
    return np.array_equal(class_weights("balanced", model.classes_, labels), model.class_weight_)


def _snapshot(est):
    """An independent copy of a fitted IncrementalSVC or IncrementalSVR (its state shares no buffer with the
    model that goes on updating)."""
    import copy

    return copy.deepcopy(est)


def _score_entries(prefix, scores) -> dict:
    """``{prefix}_score`` for single scores, ``{prefix}_{name}`` for each metric of a dict."""
    if scores and isinstance(scores[0], dict):
        return {f"{prefix}_{key}": np.array([s[key] for s in scores]) for key in scores[0]}
    return {f"{prefix}_score": np.array(scores, dtype=np.float64)}


# ---------------------------------------------------------------------- CV error over C
def _kernel(params, X) -> Kernel:
    return Kernel.from_params(params["kernel"], params["gamma"], params["degree"], params["coef0"], X)


def _start(X, labels, classes, params) -> tuple[dict, float]:
    """The exact solution on all the rows at C_min (SimpleSVM), as host arrays a fold's task
    can rebuild it from (:func:`gpath._path.restored`), and the seconds it took."""
    start = time.perf_counter()
    xp, device = get_namespace_and_device(X)
    state = start_state(X, signed_labels(labels, classes, xp, device), _kernel(params, X), params["C_min"],
                        params["ridge"])
    saved = {"alpha": state.alpha.copy(), "b": state.b, "where": state.where.copy(), "yf": to_host(state.yf).copy(),
             "margin": state.margin}
    return saved, time.perf_counter() - start


def _fold_steps(X, labels, classes, train, test, params, saved):
    """One (gamma, fold) task: the exact solution of the fold's training rows at C_min, its C
    path, and the exact errors of its held-out points over C. Returns ``((knots, errors,
    n_test), n_breakpoints, seconds)``.

    The start is the solution on all rows with the other rows removed along one decremental
    MID path (:func:`_decremental_start`). Where that start fails its check, or the C path
    from it fails at C_max, the fold starts again from SimpleSVM on its own rows, as
    :class:`gpath.SVCPath` does; only that path's failure is raised."""
    start = time.perf_counter()
    xp, device = get_namespace_and_device(X)
    y = signed_labels(labels, classes, xp, device)
    kernel = _kernel(params, X)
    for state in (_decremental_start(X, y, kernel, train, params, saved), None):
        from_scratch = state is None
        if from_scratch:
            kept = np.sort(train)  # (the decremental start's row order)
            state = start_state(_take_rows(X, kept), xp.take(y, to_device(kept, xp, device)), kernel,
                                params["C_min"], params["ridge"])
        try:
            path = c_path(state, params["C_max"], start_time=start)
            check_end(path, state, params["ridge"])
            break
        except (PathError, SingularMarginError):
            # (A start within its check whose path ended beyond it at C_max, 1e-8: a polynomial
            # kernel at C = 0.01 in the random search.)
            if from_scratch:
                raise
    knots, errors = path_error_steps(path, state.kernel, state.X, state.y_host, _take_rows(X, test),
                                     labels[test] == classes[1])
    return (knots, errors, int(test.size)), path.n_breakpoints, time.perf_counter() - start


def _decremental_start(X, y, kernel, train, params, saved):
    """The solution on all rows at C_min (``saved``, :func:`_start`) with the rows not in
    ``train`` removed along one decremental MID path, checked as
    :func:`gpath.cpath.start_state` checks its own; None where the path fails or its end is
    beyond the check (a linear kernel on features of size 3e8 in the random search: a start
    off by 2 of its scale)."""
    xp, device = get_namespace_and_device(X)
    state = restored(xp, device, X, y, kernel, params["C_min"], params["ridge"], saved["alpha"], saved["b"],
                     saved["where"], saved["yf"], saved["margin"])
    others = np.setdiff1d(np.arange(X.shape[0]), train)
    try:
        state, _ = state.follow(X[:0, :], state.y[:0], others)  # the kept rows stay in order: sorted(train)
        state.refine()
    except (PathError, SingularMarginError):
        return None
    if state.kkt_check(_LOADED_TOL)[0] > _LOADED_TOL:
        return None
    check_resolution(state)
    return state


def _check_data(X, y, owner):
    """X validated (float64, its namespace) and y as host labels of two classes."""
    X, _, _ = check_X(X, owner=owner)
    labels, classes = check_labels(y, X.shape[0], owner=owner)
    return X, labels, classes


def _error_paths(X, labels, classes, gammas, splits, params, n_jobs):
    """The CV error path of each gamma. Through joblib: one task per gamma for the solution on
    all rows at C_min, then one per (gamma, fold) for the fold's path."""
    per_gamma = [{**params, "gamma": g} for g in gammas]
    starts = Parallel(n_jobs=n_jobs)(delayed(_start)(X, labels, classes, p) for p in per_gamma)
    tasks = [(g, k) for g in range(len(gammas)) for k in range(len(splits))]
    out = Parallel(n_jobs=n_jobs)(
        delayed(_fold_steps)(X, labels, classes, splits[k][0], splits[k][1], per_gamma[g], starts[g][0])
        for g, k in tasks
    )
    paths = []
    for g, gamma in enumerate(gammas):
        mine = [out[i] for i, (h, _) in enumerate(tasks) if h == g]
        seconds = starts[g][1] + sum(s for _, _, s in mine)
        paths.append(mean_error_steps([steps for steps, _, _ in mine], gamma, [bp for _, bp, _ in mine], seconds))
    return paths


def cv_error_path(X, y, *, cv=5, C_min, C_max, kernel="rbf", gamma="scale", degree=3, coef0=0.0,
                  ridge=1e-6, groups=None, n_jobs=None) -> CVErrorPath:
    """The exact k-fold cross-validation error of a C-SVC as a function of C.

    Per fold, one C path of its training set (:class:`gpath.SVCPath` from C_min to C_max).
    Each held-out decision value is linear in C between the breakpoints of that path, so the C
    at which it changes sign is solved exactly; the held-out 0-1 error of the fold is a step
    function of C with a knot at each such C, and so is its mean over the folds.

    Parameters
    ----------
    X : array of shape (n_samples, n_features)
        Any array-API array (the paths run on its device) or array-like.
    y : array-like of shape (n_samples,)
        Two class labels; every training fold must hold both.
    cv : int, cross-validation generator or iterable, default 5
        Anything scikit-learn's ``check_cv`` accepts (an int: ``StratifiedKFold``).
    C_min, C_max : float
        The range of C: finite, > 0, C_min ≤ C_max.
    kernel, gamma, degree, coef0, ridge
        As in :class:`gpath.SVCPath`; ``gamma`` is resolved once on the whole X.
    groups : array-like of shape (n_samples,) or None
        Group labels for a group splitter.
    n_jobs : int or None
        Folds run in parallel through joblib (None: 1 unless a ``joblib.parallel_backend``
        context says otherwise).

    Returns
    -------
    CVErrorPath
        ``Cs`` (knots), ``error`` (mean held-out error on each interval between knots),
        ``fold_errors``, ``best_C``, ``best_error``, ``gamma``, ``n_breakpoints`` (per fold),
        ``time`` (seconds: the start at C_min and the fold paths, summed).

    Raises
    ------
    ValueError
        A bad C range or kernel parameter (naming it), bad X or y, a training fold with one
        class only, or a ``cv`` scikit-learn refuses.
    TypeError
        X not numeric.
    PathError, SingularMarginError
        A numerical failure of a fold's path from its own start (SimpleSVM on its rows, where
        the start shared with the other folds failed), or margins float64 does not resolve.

    Notes
    -----
    Where a fold's bias is not unique (no coefficient strictly inside its box, which yᵀα = 0
    allows only where the points at C weigh the same in both classes), its path keeps b
    linear in C (:class:`gpath.SVCPath`): an exact optimum, but not the middle of the bias
    interval that a fit at that C takes (LIBSVM, ``IncrementalSVC``). There a held-out
    point near the boundary can fall on the other side, and the curve can differ from the
    cross-validation error of fits at that C. The random search found one fold of 30
    held-out points where it read 0.367 at C = 0.0011 against the fits' 0.333. Where every
    fold has a coefficient inside its box, the two agree. On breast cancer, for example,
    every fold has one from C = 10⁻⁴, and the curve equals the fits' errors there.

    References
    ----------
    T. Hastie, S. Rosset, R. Tibshirani and J. Zhu, "The entire regularization path for the
    support vector machine", JMLR 5 (2004), sections 3–4 and 6 (the path and its use for
    choosing C). Karasuyama & Takeuchi (2009), section 4.2 and Figure 7 (10-fold CV error over
    C and gamma, there at 7 values of C).
    """
    C_min, C_max = check_C_range(C_min, C_max)
    params = {"C_min": C_min, "C_max": C_max, "kernel": kernel, "degree": degree, "coef0": coef0,
              "ridge": check_positive(ridge, "ridge", allow_zero=True)}
    X_checked, labels, classes = _check_data(X, y, "cv_error_path")
    gamma = _resolved_gamma(kernel, gamma, degree, coef0, X_checked)
    splits = _splits(cv, X, labels, groups)
    return _error_paths(X_checked, labels, classes, [gamma], splits, params, n_jobs)[0]


def cv_mse_path(X, y, *, cv=5, C_min, C_max, epsilon=0.1, kernel="rbf", gamma="scale", degree=3, coef0=0.0,
                ridge=1e-6, groups=None, n_jobs=None) -> MSEPath:
    """The exact k-fold cross-validation mean squared error of an ε-SVR as a function of C.

    Per fold, one C path of its training set (:class:`gpath.SVRPath` from C_min to C_max;
    Gunter & Zhu 2007). Each held-out prediction is linear in C between the breakpoints of
    that path, so each fold's held-out mean squared error is a quadratic in C on every
    segment, and so is their mean over the folds on the union of the folds' breakpoints: the
    curve and its least point are exact.

    Parameters
    ----------
    X : array of shape (n_samples, n_features)
        Any array-API array (the paths run on its device) or array-like.
    y : array-like of shape (n_samples,)
        Real targets.
    cv : int, cross-validation generator or iterable, default 5
        Anything scikit-learn's ``check_cv`` accepts (an int: ``KFold``, not shuffled).
    C_min, C_max : float
        The range of C: finite, > 0, C_min ≤ C_max.
    epsilon, kernel, gamma, degree, coef0, ridge
        As in :class:`gpath.SVRPath`; ``gamma`` is resolved once on the whole X.
    groups : array-like of shape (n_samples,) or None
        Group labels for a group splitter.
    n_jobs : int or None
        Folds run in parallel through joblib (None: 1 unless a ``joblib.parallel_backend``
        context says otherwise).

    Returns
    -------
    MSEPath
        ``Cs`` (the union of the folds' path points), ``coef`` (the mean error's quadratic on
        each interval between them: :meth:`MSEPath.error_at`), ``best_C``, ``best_error``,
        ``time`` (seconds: the folds' paths and their evaluation, summed).

    Raises
    ------
    ValueError
        A bad C range, epsilon, ridge or kernel parameter (naming it), bad X or y, or a
        ``cv`` scikit-learn refuses.
    TypeError
        X not numeric.
    PathError, SingularMarginError
        A numerical failure of a fold's path.

    References
    ----------
    L. Gunter and J. Zhu, "Efficient computation and model selection for the support vector
    regression", Neural Computation 19(6), 2007 (the path, and choosing C on it).
    """
    C_min, C_max = check_C_range(C_min, C_max)
    X_checked, _, _ = check_X(X, owner="cv_mse_path")
    targets = check_targets(numeric_targets(y), X_checked.shape[0])
    gamma = _resolved_gamma(kernel, gamma, degree, coef0, X_checked)
    params = {"C_min": C_min, "C_max": C_max, "epsilon": epsilon, "kernel": kernel, "gamma": gamma,
              "degree": degree, "coef0": coef0, "ridge": ridge}
    SVRPath(**params)._check_params()  # epsilon and ridge, before any fold runs
    splits = _splits(cv, X, targets, groups, classifier=False)
    curves = Parallel(n_jobs=n_jobs)(delayed(_fold_mse)(X_checked, targets, train, test, params)
                                     for train, test in splits)
    return mean_squared_error_paths(curves, sum(c.time for c in curves))


def _fold_mse(X, y, train, test, params) -> MSEPath:
    """One fold: the C path of its training rows and its held-out squared error over C."""
    start = time.perf_counter()
    model = SVRPath(**params).fit(_take_rows(X, train), y[train])
    curve = model.select(_take_rows(X, test), y[test]).validation_error_
    return dataclasses.replace(curve, time=time.perf_counter() - start)


# ---------------------------------------------------------------------- grid search
class SVCPathCV(SaveMixin, ClassifierMixin, BaseEstimator):
    """Choose C and gamma of an RBF (or other kernel) C-SVC by the exact cross-validation error.

    For every gamma of ``gammas`` the exact k-fold CV error over all of [C_min, C_max]
    (:func:`cv_error_path`); the best (C, gamma) is the one of least CV error (the first
    gamma, then the smallest C, among ties), and :class:`gpath.IncrementalSVC` is refitted
    on all the data there. The (gamma, fold) paths run in parallel through joblib, so that
    ``with joblib.parallel_backend("dask"):`` distributes them over a Dask cluster
    (``dask.distributed``; on a GPU workstation a ``dask_cuda.LocalCUDACluster`` gives one
    worker per GPU).

    Parameters
    ----------
    C_min : float, default 0.01
    C_max : float, default 1000.0
        The range of C: finite, > 0, C_min ≤ C_max.
    gammas : sequence of float or {"scale", "auto"}, default ("scale",)
        The kernel widths to try (each resolved once on the whole X).
    cv : int, cross-validation generator or iterable, default 5
        As in scikit-learn (an int: ``StratifiedKFold``).
    kernel : {"rbf", "linear", "poly"}, default "rbf"
    degree : int, default 3
    coef0 : float, default 0.0
    ridge : float, default 1e-6
    n_jobs : int or None, default None
        joblib's ``n_jobs`` for the (gamma, fold) tasks.
    refit : bool, default True
        Fit ``best_estimator_`` on all the data.

    Attributes
    ----------
    best_C_ : float
        A C inside the interval of least CV error (its geometric middle).
    best_gamma_ : float
    best_index_ : int
        Position of the best gamma in ``gammas``.
    best_score_ : float
        1 − the least CV error (mean accuracy over folds, as ``GridSearchCV.best_score_``).
    cv_error_paths_ : list of CVErrorPath
        One per gamma, in the order of ``gammas``.
    best_estimator_ : IncrementalSVC
        Refitted on all the data at (best_C_, best_gamma_) (with ``refit=True``).
    classes_ : ndarray of shape (2,)
    n_features_in_ : int

    References
    ----------
    Hastie et al. (2004), JMLR 5, section 6; Karasuyama & Takeuchi (2009), section 4.2.
    """

    _FITTED_ATTRIBUTES = frozenset({"cv_error_paths_", "best_index_", "best_C_", "best_gamma_", "best_score_",
                                    "best_estimator_", "classes_", "n_features_in_"})

    def __init__(self, C_min=0.01, C_max=1000.0, gammas=("scale",), cv=5, kernel="rbf", degree=3,
                 coef0=0.0, ridge=1e-6, n_jobs=None, refit=True):
        self.C_min = C_min
        self.C_max = C_max
        self.gammas = gammas
        self.cv = cv
        self.kernel = kernel
        self.degree = degree
        self.coef0 = coef0
        self.ridge = ridge
        self.n_jobs = n_jobs
        self.refit = refit

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    def _check_gammas(self, X) -> list[float]:
        gammas = self.gammas
        if isinstance(gammas, (str, bytes)) or not hasattr(gammas, "__len__") or len(gammas) == 0:
            raise ValueError(f"gammas must be a non-empty sequence of numbers > 0, 'scale' or 'auto'; got {gammas!r}")
        Kernel.from_params(self.kernel, 1.0, self.degree, self.coef0, X)  # kernel, degree, coef0 first
        resolved = []
        for i, g in enumerate(gammas):
            try:
                resolved.append(_resolved_gamma(self.kernel, g, self.degree, self.coef0, X))
            except ValueError as exc:
                raise ValueError(f"gammas[{i}]: {exc}") from None
        return resolved

    def fit(self, X, y, groups=None):
        """Compute the exact CV error over C for every gamma and pick the best (C, gamma).

        Parameters
        ----------
        X : array of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Two class labels.
        groups : array-like of shape (n_samples,) or None
            Group labels for a group splitter.

        Returns
        -------
        self

        Raises
        ------
        ValueError
            A bad parameter (naming it: C_min, C_max, gammas, ridge, kernel, degree, coef0,
            refit), bad X or y, a training fold with one class only, or a ``cv`` scikit-learn
            refuses. Checked before any path runs; a failed fit leaves the estimator as it was.
        TypeError
            X not numeric.
        PathError, SingularMarginError
            A numerical failure of a fold's path.
        """
        C_min, C_max = check_C_range(self.C_min, self.C_max)
        params = {"C_min": C_min, "C_max": C_max, "kernel": self.kernel, "degree": self.degree,
                  "coef0": self.coef0, "ridge": check_positive(self.ridge, "ridge", allow_zero=True)}
        refit = check_bool(self.refit, "refit")
        X_checked, labels, classes = _check_data(X, y, type(self).__name__)
        gammas = self._check_gammas(X_checked)
        splits = _splits(self.cv, X, labels, groups)
        paths = _error_paths(X_checked, labels, classes, gammas, splits, params, self.n_jobs)
        best = min(range(len(paths)), key=lambda g: (paths[g].best_error, g))
        fitted = {
            "cv_error_paths_": paths,
            "best_index_": best,
            "best_C_": paths[best].best_C,
            "best_gamma_": gammas[best],
            "best_score_": 1.0 - paths[best].best_error,
            "classes_": classes,
            "n_features_in_": int(X_checked.shape[1]),
        }
        if refit:
            fitted["best_estimator_"] = IncrementalSVC(
                C=fitted["best_C_"], kernel=self.kernel, gamma=fitted["best_gamma_"], degree=self.degree,
                coef0=self.coef0, ridge=params["ridge"],
            ).fit(X, y)
        self._set_fitted({"best_estimator_": None, **fitted})
        return self

    def _best(self):
        check_is_fitted(self, "cv_error_paths_")
        if not hasattr(self, "best_estimator_"):
            raise AttributeError("SVCPathCV was fitted with refit=False: there is no best_estimator_ to predict with")
        return self.best_estimator_

    def decision_function(self, X):
        """Decision values of ``best_estimator_``.

        Parameters
        ----------
        X : array of shape (n_samples, n_features)
            In the namespace and on the device of the X given to :meth:`fit`.

        Returns
        -------
        f : array of shape (n_samples,), float64
            Positive for ``classes_[1]``.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            Before ``fit``.
        AttributeError
            After ``fit`` with ``refit=False``.
        ValueError, TypeError
            As :meth:`gpath.IncrementalSVC.decision_function`.
        """
        return self._best().decision_function(X)

    def predict(self, X):
        """Class labels from ``best_estimator_``.

        Parameters
        ----------
        X : array of shape (n_samples, n_features)

        Returns
        -------
        labels : ndarray of shape (n_samples,) (host NumPy)

        Raises
        ------
        As :meth:`decision_function`.
        """
        return self._best().predict(X)

    def _check_loaded(self) -> None:
        """A loaded search fits together: one CV error curve per gamma, the best point the
        curve's best, and ``best_estimator_`` (checked by its own loader) fitted there on
        data of the same classes and features.

        Raises
        ------
        gpath.persistence.ModelFileError
        """
        d = fitted_n_features(self)
        classes = fitted_attribute(self, "classes_", (2,), "biufUO")
        paths = getattr(self, "cv_error_paths_", None)
        if not (isinstance(paths, list) and paths and all(isinstance(p, CVErrorPath) for p in paths)):
            raise ModelFileError("cv_error_paths_ must be a non-empty list of CVErrorPath")
        best = getattr(self, "best_index_", None)
        if not (isinstance(best, int) and 0 <= best < len(paths)):
            raise ModelFileError(f"best_index_ must name one of the {len(paths)} gammas; got {best!r}")
        curve = paths[best]
        if (self.best_C_, self.best_gamma_, self.best_score_) != (curve.best_C, curve.gamma, 1.0 - curve.best_error):
            raise ModelFileError("best_C_, best_gamma_ and best_score_ must be those of cv_error_paths_[best_index_]")
        model = getattr(self, "best_estimator_", None)
        if model is not None:
            if not isinstance(model, IncrementalSVC):
                raise ModelFileError(f"best_estimator_ must be an IncrementalSVC; got {type(model).__name__}")
            if (model.n_features_in_ != d or not np.array_equal(model.classes_, classes)
                    or (model.C, model.gamma) != (self.best_C_, self.best_gamma_)
                    or model.kernel_.kind != Kernel.from_params(self.kernel, 1.0, self.degree, self.coef0,
                                                                np.zeros((1, d))).kind):
                raise ModelFileError("best_estimator_ must be fitted at (best_C_, best_gamma_) on the same classes "
                                     "and features")
