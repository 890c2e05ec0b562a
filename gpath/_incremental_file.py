"""The file format of :class:`gpath.IncrementalSVC` and :class:`gpath.IncrementalSVR`'s pair
states: writing the whole incremental state and reading it back, checked (the format's table
is in :mod:`gpath.persistence`).
"""

from __future__ import annotations

import numpy as np

from . import persistence
from ._array_api import get_namespace_and_device, to_device, to_host
from ._base import check_every_class_weighted
from ._multiclass import pair_rows, pairs, rows_from_pairs
from ._path import PathStats, restored
from ._sparse import check_memory, is_sparse, pair_training_rows, training_kernel
from ._validation import check_positive
from ._warmup import warm_compiled_update
from .cache import max_columns
from .kernels import Kernel

__all__ = ["VERSION", "from_saved", "restored_pair", "to_saved"]

# The version of the format this gpath writes (version 1 files are still read).
VERSION = 2


def to_saved(model):
    """``(meta, arrays)``: the whole incremental state of the fitted ``model`` (format
    ``gpath.IncrementalSVC`` version 2, see :mod:`gpath.persistence`), so that a loaded model
    goes on updating exactly.

    Raises
    ------
    TypeError
        The model is not fitted, or its labels are neither numbers nor strings.
    """
    if "states_" not in model.__dict__:
        raise TypeError(f"model must be a fitted gpath estimator; {type(model).__name__} is not fitted")
    states = model.states_
    s0 = states[0]
    classes = np.asarray(model.classes_)
    labels_dtype = str(classes.dtype)
    if classes.dtype == object and all(isinstance(c, str) for c in classes):
        classes = classes.astype(str)
    if classes.dtype.kind not in "biufU":
        raise TypeError(f"classes_ must be numbers or strings to be saved; got dtype {classes.dtype}")
    k = model.kernel_
    meta = {
        "format": persistence.FORMAT,
        "version": VERSION,
        "params": persistence.json_params(model.get_params()),
        "kernel": {"kind": k.kind, "gamma": k.gamma, "degree": k.degree, "coef0": k.coef0, "offset": k.offset},
        "C": s0.C,
        "ridge": s0.ridge,
        "b": [s.b for s in states],
        "next_id": model._next_id,
        "last_update": model.last_update_.__dict__,
        "fitted_class_weight": persistence.json_class_weight(getattr(model, "_fitted_class_weight", None)),
        "classes_dtype": "object" if labels_dtype == "object" else None,
        "n_iter": [int(getattr(s, "n_iter", 0)) for s in states],
    }
    sparse_rows = getattr(model, "_X_sparse", None)
    if sparse_rows is None:
        rows = {"X": to_host(rows_from_pairs(states, model._class_index, len(classes), np.arange(model._class_index.shape[0])))}
    else:  # the sparse training rows (the states hold their Gram rows, rebuilt on load)
        rows = persistence.csr_entries(sparse_rows, "X")
        meta["X_sparse_shape"] = list(sparse_rows.shape)
    arrays = dict(
        **rows,
        y=model._class_index.astype(np.int64), weights=model._weights, ids=model.sample_ids_, classes=classes,
        class_weight=model.class_weight_,
        alpha=np.concatenate([s.alpha for s in states]),
        yf=np.concatenate([to_host(s.yf) for s in states]),
        where=np.concatenate([s.where for s in states]).astype(np.int8),
        margin=np.concatenate([s.margin for s in states]).astype(np.int64),
        margin_sizes=np.array([s.active.size for s in states], dtype=np.int64),
    )
    if hasattr(model, "probA_"):
        arrays["probA"], arrays["probB"] = model.probA_, model.probB_
    if hasattr(model, "feature_names_in_"):
        arrays["feature_names"] = np.asarray(model.feature_names_in_, dtype=str)
    return meta, arrays


def from_saved(cls, meta, data, like):
    """The saved model of class ``cls`` (its arrays in the namespace and on the device of
    ``like``), checked: plain finite arrays of matching shapes, consistent index
    sets, α in its boxes, and the KKT conditions of every pair recomputed from scratch
    (:meth:`_check_loaded`). Reads versions 1 (two classes, one box C) and 2.

    Raises
    ------
    gpath.persistence.ModelFileError
    """
    invalid = persistence.ModelFileError
    version = meta.get("version")
    if version not in (1, VERSION):
        raise invalid(f"unknown {persistence.FORMAT} format version {version!r}; "
                      f"this gpath reads 1 and {VERSION}")
    for key in ("params", "kernel", "C", "ridge", "b", "next_id", "last_update"):
        if key not in meta:
            raise invalid(f"'meta' has no {key!r}")
    model = cls(**persistence.params_from_json(meta["params"]))
    try:
        params = model._check_params()
        C = check_positive(meta["C"], "C")
        ridge = check_positive(meta["ridge"], "ridge", allow_zero=True)
    except ValueError as exc:
        raise invalid(f"bad parameter: {exc}") from None
    sparse_shape = meta.get("X_sparse_shape")
    xp, device = get_namespace_and_device(like)
    X = (persistence.finite_array(data, "X", "f", ndim=2) if sparse_shape is None
         else persistence.csr_from_entries(data, "X", sparse_shape, xp))
    n, d = X.shape
    ids = persistence.finite_array(data, "ids", "iu", shape=(n,))
    names = data.get("feature_names")
    if names is not None and (names.dtype.kind != "U" or names.shape != (d,)):
        raise invalid(f"entry 'feature_names' must hold {d} strings; got dtype {names.dtype}, shape {names.shape}")
    if version == 1:
        classes = persistence.finite_array(data, "classes", "biufU", shape=(2,))
        y = persistence.finite_array(data, "y", "f", shape=(n,))
        if n < 2 or d < 1 or set(np.unique(y).tolist()) != {-1.0, 1.0}:
            raise invalid(f"y must hold -1 and +1 labels of n >= 2 points; got {np.unique(y)[:5].tolist()} "
                          f"for X of shape {X.shape}")
        class_index = (y > 0).astype(np.int64)
        weights = np.ones(n)
        cw = np.ones(2)
        bs = [meta["b"]]
        sizes = np.array([persistence.finite_array(data, "margin", "iu", ndim=1).shape[0]])
        fitted_cw = None
    else:
        classes = persistence.finite_array(data, "classes", "biufU", ndim=1)
        class_index = persistence.finite_array(data, "y", "iu", shape=(n,)).astype(np.int64)
        weights = persistence.finite_array(data, "weights", "f", shape=(n,))
        cw = persistence.finite_array(data, "class_weight", "f", shape=classes.shape)
        bs = meta["b"]
        sizes = persistence.finite_array(data, "margin_sizes", "iu", ndim=1)
        fitted_cw = persistence.class_weight_from_json(meta.get("fitted_class_weight"))
    if meta.get("classes_dtype") == "object":  # string labels that fit got as objects
        classes = classes.astype(object)
    k = classes.shape[0]
    if k < 2 or np.unique(classes).size != k or not np.array_equal(np.sort(classes), classes):
        raise invalid(f"classes must be two or more distinct labels in increasing order; got {classes.tolist()[:5]}")
    if np.any(class_index >= k) or np.any(np.bincount(class_index, minlength=k) == 0):
        raise invalid(f"y must give each of the {n} rows one of the {k} classes, each class at least once")
    if np.any(weights < 0) or np.any(cw <= 0):
        raise invalid("the box weights must be >= 0 and the class weights > 0")
    n_pairs = k * (k - 1) // 2
    if not (isinstance(bs, list) and len(bs) == n_pairs) or sizes.shape != (n_pairs,):
        raise invalid(f"'meta' b and the margin sizes must have one entry per pair of classes ({n_pairs})")
    for b in bs:
        if not (isinstance(b, (int, float)) and not isinstance(b, bool) and np.isfinite(b)):
            raise invalid(f"the bias b must be a finite number; got {b!r}")
    n_iters = meta.get("n_iter", [0] * n_pairs)  # files before n_iter_: 0 per pair
    if not (isinstance(n_iters, list) and len(n_iters) == n_pairs
            and all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in n_iters)):
        raise invalid(f"'meta' n_iter must be {n_pairs} integers >= 0; got {n_iters!r}")
    if np.unique(ids).size != n or not isinstance(meta["next_id"], int) or meta["next_id"] <= ids.max():
        raise invalid(f"sample ids must be distinct and below next_id={meta['next_id']!r}")
    rows_of_pairs = [pair_rows(class_index, i, j, k) for i, j in pairs(k)]
    total = sum(r.size for r in rows_of_pairs)
    alpha = persistence.finite_array(data, "alpha", "f", shape=(total,))
    yf = persistence.finite_array(data, "yf", "f", shape=(total,))
    where = persistence.finite_array(data, "where", "iu", shape=(total,))
    margin = persistence.finite_array(data, "margin", "iu", shape=(int(sizes.sum()),))
    try:
        check_every_class_weighted(weights, class_index, classes)
    except ValueError as exc:
        raise invalid(str(exc)) from None
    kernel = Kernel(**meta["kernel"])
    try:
        if kernel != Kernel.from_params(kernel.kind, kernel.gamma, kernel.degree, kernel.coef0, X,
                                        svc=True):
            raise ValueError(f"offset must be 0; got {kernel.offset!r}")
        if not np.isfinite(kernel.gamma):
            raise ValueError(f"gamma must be finite; got {kernel.gamma!r}")
    except ValueError as exc:
        raise invalid(f"bad kernel {meta['kernel']!r}: {exc}") from None
    train_kernel = training_kernel(kernel, X)
    if is_sparse(X):
        check_memory([r.size for r in rows_of_pairs], False, cls.__name__)
    X_dev = X if is_sparse(X) else to_device(X, xp, device)
    states, at, at_m = [], 0, 0
    for p, ((i, j), rows) in enumerate(zip(pairs(k), rows_of_pairs)):
        size = rows.size
        part = slice(at, at + size)
        m_part = margin[at_m : at_m + int(sizes[p])]
        at, at_m = at + size, at_m + int(sizes[p])
        y_p = np.where(class_index[rows] == j, 1.0, -1.0)
        X_p = pair_training_rows(X_dev, None if k == 2 else rows, kernel, xp, device)
        state = restored_pair(xp, device, X_p, y_p, train_kernel, C, ridge, alpha[part], bs[p], where[part],
                               yf[part], m_part, C * weights[rows], model.tol, (int(i), int(j)) if k > 2 else None)
        state.cache = state.cache.with_spare_rows()  # room for the next updates, as after fit
        state.cache.max_columns = max_columns(model._pair_cache_size(params, k), size)
        state.n_iter = n_iters[p]
        state.prepare_updates()
        states.append(state)
    attrs = model._attributes(states, class_index, classes, kernel, ids.astype(np.int64), meta["next_id"],
                              PathStats(**meta["last_update"]), weights, cw, X if is_sparse(X) else None)
    extra = {}
    if "probA" in data or "probB" in data:
        extra = {"probA_": persistence.finite_array(data, "probA", "f", shape=(n_pairs,)),
                 "probB_": persistence.finite_array(data, "probB", "f", shape=(n_pairs,))}
    model._set_fitted({**attrs, **extra, "feature_names_in_": None if names is None else names.astype(object),
                   "_kernel_params": {key: meta["params"][key] for key in cls._KERNEL_PARAMS},
                   "_fitted_class_weight": fitted_cw, "_declared_classes": None, "_buffer": None})
    model._check_loaded()
    return model


def restored_pair(xp, device, X, y, kernel, C, ridge, alpha, b, where, yf, margin, upper, tol, pair, shift=None):
    """One pair's state from a model file, its sets checked against α and the boxes.

    Raises
    ------
    gpath.persistence.ModelFileError
    """
    warm_compiled_update(xp)
    invalid = persistence.ModelFileError
    n = alpha.shape[0]
    of = "" if pair is None else f" of the pair {pair}"
    # Index sets: O (0) at α = 0, I (2) at α = C_i, M (1) exactly the rows of `margin`.
    if np.any((where < 0) | (where > 2)):
        raise invalid(f"index sets must be 0 (O), 1 (M) or 2 (I); got {np.unique(where).tolist()}")
    if (np.unique(margin).size != margin.size or np.any((margin < 0) | (margin >= n))
            or np.count_nonzero(where == 1) != margin.size or np.any(where[margin] != 1)):
        raise invalid(f"the margin rows{of} {margin[:5].tolist()}... (|M| = {margin.size}) are not the "
                      f"{np.count_nonzero(where == 1)} distinct rows in [0, {n}) marked M")
    slack = tol * C  # the box to the model's tolerance, as every update checks it
    if np.any(alpha < -slack) or np.any(alpha > upper + slack):
        bad = np.flatnonzero((alpha < -slack) | (alpha > upper + slack))
        boxes = f"C={C:g}" if np.all(upper == C) else "C_i"
        raise invalid(f"alpha{of} must lie in [0, {boxes}]; got {alpha[bad[:3]].tolist()} at rows {bad[:3].tolist()}")
    if np.any(alpha[where == 0] != 0.0) or np.any(alpha[where == 2] != upper[where == 2]):
        boxes = f"C={C:g}" if np.all(upper == C) else "its box C_i"
        raise invalid(f"alpha{of} must be 0 on the set O and {boxes} on the set I")
    state = restored(xp, device, X, to_device(y, xp, device), kernel, C, ridge, alpha, b, where, yf, margin,
                     upper, shift)
    return state
