"""Checks of user input. Every error names the argument, what was expected and what came."""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np

from ._array_api import _NUMPY_NAMESPACE as _NUMPY
from ._array_api import get_namespace_and_device, is_array_api, is_numpy, scalars, to_device, to_host
from ._sparse import check_sparse, is_sparse

__all__ = [
    "check_X",
    "check_bool",
    "check_choice",
    "check_feature_names",
    "check_ids",
    "check_int",
    "check_labels",
    "check_nonpositive",
    "check_positive",
    "check_rows",
    "check_sample_weight",
    "check_targets",
    "feature_names",
    "host_values",
    "numeric_targets",
]


def check_X(X, name="X", n_features=None, xp=None, device=None, owner=None, accept_sparse=False):
    """Validate a 2-D finite real array and return it as float64 in its namespace.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Any array-API array, or anything NumPy turns into a numeric array (lists, pandas
        frames, object arrays of numbers); a SciPy sparse matrix where ``accept_sparse``.
    name : str
        Argument name used in messages.
    n_features : int or None
        Expected number of columns.
    xp, device : namespace and device the array must already live in (None: any).
    owner : str or None
        Estimator name for the feature-count message (scikit-learn's wording).
    accept_sparse : bool
        Whether a sparse X is taken: it comes back as a new float64 CSR matrix with sorted
        indices (:func:`gpath._sparse.check_sparse`), its namespace NumPy's, on the host.

    Returns
    -------
    X : array of shape (n_samples, n_features), float64
    xp, device

    Raises
    ------
    TypeError
        If X is sparse (without ``accept_sparse``), not numeric, or lives in another namespace or on another device than
        the model.
    ValueError
        If X is complex, not 2-D, has no rows or no columns, has the wrong number of columns,
        or holds NaN or inf.
    """
    if (type(X) is np.ndarray and X.dtype == np.float64 and X.ndim == 2 and X.size
            and (n_features is None or X.shape[1] == n_features) and (xp is None or is_numpy(xp))):
        # The common case (a stream's rows, NumPy in and out), checked in a few µs.
        if not np.isfinite(X).all():
            raise ValueError(f"{name} must be finite; got NaN or inf")
        return X.copy(), (xp or _NUMPY), "cpu" if xp is None else device  # a copy, as astype below
    if is_sparse(X):
        if accept_sparse:
            if xp is not None and not is_numpy(xp):
                raise TypeError(f"{name} is a sparse {type(X).__name__} (host); the model's arrays are "
                                f"{xp.__name__!r} on {device!r}")
            _check_shape(X, name, n_features, owner)
            return check_sparse(X, name), _NUMPY, "cpu"
        raise TypeError(
            f"{name} is a sparse {type(X).__name__}; sparse input is taken by SimpleSVC and IncrementalSVC only "
            f"(fit, and the updates of a model fitted on sparse rows): pass a dense array here"
        )
    if not is_array_api(X):
        try:
            X = np.asarray(X)
        except (TypeError, ValueError) as exc:  # ragged lists and the like
            raise ValueError(f"{name} must be a 2-D array of numbers; got {type(X).__name__} ({exc})") from None
    if isinstance(X, np.ndarray) and X.dtype == object:
        try:
            X = X.astype(np.float64)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{name} must hold real numbers; {exc}") from None
    xq, dev = get_namespace_and_device(X)
    if xp is not None and (xq.__name__ != xp.__name__ or str(dev) != str(device)):
        raise TypeError(
            f"{name} must be in the model's array namespace {xp.__name__!r} on device {device!r}; "
            f"got {xq.__name__!r} on {dev!r}"
        )
    if xq.isdtype(X.dtype, "complex floating"):
        raise ValueError(f"{name} must hold real numbers: Complex data not supported (dtype {X.dtype})")
    if not (xq.isdtype(X.dtype, "real floating") or xq.isdtype(X.dtype, "integral")
            or xq.isdtype(X.dtype, "bool")):
        raise TypeError(f"{name} must hold real numbers; got dtype {X.dtype}")
    _check_shape(X, name, n_features, owner)
    X = xq.astype(X, xq.float64)
    if not scalars(xq, xq.all(xq.isfinite(X)))[0]:
        raise ValueError(f"{name} must be finite; got NaN or inf")
    return X, xq, dev


def _check_shape(X, name, n_features, owner) -> None:
    """X (dense or sparse) 2-D, with rows, with columns, and ``n_features`` of them (None: any);
    scikit-learn's messages. Raises ValueError."""
    if X.ndim != 2:
        hint = (" Reshape your data either using array.reshape(-1, 1) if it has a single feature "
                "or array.reshape(1, -1) if it holds a single sample.") if X.ndim == 1 else ""
        raise ValueError(f"{name} must be 2-D (n_samples, n_features); got shape {tuple(X.shape)}.{hint}")
    for axis, what in ((0, "sample"), (1, "feature")):
        if X.shape[axis] == 0:
            raise ValueError(
                f"{name} has 0 {what}(s) (shape={tuple(X.shape)}) while a minimum of 1 is required."
            )
    if n_features is not None and X.shape[1] != n_features:
        raise ValueError(
            f"{name} has {X.shape[1]} features, but {owner or 'the model'} is expecting "
            f"{n_features} features as input."
        )


def check_rows(estimator, X, like, name="X", accept_sparse=False):
    """X checked as rows for a fitted ``estimator``: its column names as in ``fit``
    (:func:`check_feature_names`), ``estimator.n_features_in_`` features, the namespace and
    device of the model's array ``like``; float64 (sparse rows where ``accept_sparse``).

    Raises
    ------
    ValueError, TypeError
        As :func:`check_X` and :func:`check_feature_names`.
    """
    check_feature_names(estimator, X, name)
    xp, device = get_namespace_and_device(like)
    return check_X(X, name, estimator.n_features_in_, xp, device, owner=type(estimator).__name__,
                   accept_sparse=accept_sparse)[0]


def feature_names(X):
    """Column names of X as scikit-learn reads them (``feature_names_in_`` of a model fitted
    on X): an object array of str for a frame with string column names, else None.

    Raises
    ------
    TypeError
        If the column names mix strings and other types (scikit-learn's rule).
    """
    from sklearn.utils.validation import _get_feature_names

    return _get_feature_names(X)


def check_feature_names(estimator, X, name="X") -> None:
    """Check X's column names against ``estimator.feature_names_in_`` as scikit-learn does.

    scikit-learn's own check (``sklearn.utils.validation._check_feature_names`` with
    ``reset=False``) and its messages: fitted on a frame, X must have the same names in the
    same order (ValueError saying which are unseen, missing, or out of order); X with names
    given to a model fitted without them, or the reverse, warns (UserWarning). Nothing on
    the estimator changes. For an argument other than ``X`` the messages name it.

    Raises
    ------
    ValueError
        If the names differ from those seen in fit.
    """
    if type(X) is np.ndarray and not hasattr(estimator, "feature_names_in_"):
        return  # no names on either side: nothing to compare (and scikit-learn's check costs ~0.1 ms)
    try:
        from sklearn.utils.validation import _check_feature_names
    except ImportError:  # scikit-learn < 1.6: a method of BaseEstimator
        def _check_feature_names(est, X, *, reset):
            return est._check_feature_names(X, reset=reset)

    if name == "X":
        _check_feature_names(estimator, X, reset=False)
        return
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            _check_feature_names(estimator, X, reset=False)
        except ValueError as exc:
            raise ValueError(str(exc).replace("The feature names ", f"The feature names of {name} ", 1)) from None
    for w in caught:
        message = str(w.message)
        if message.startswith("X "):
            message = f"{name} {message[2:]}"
        warnings.warn(message, w.category, stacklevel=3)


def check_labels(y, n_samples, name="y", classes=None, owner=None, x_name="X", multiclass=False, min_classes=2):
    """Validate class labels; return them as a host NumPy array and the classes.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        A column vector (n_samples, 1) is accepted with a ``DataConversionWarning``.
    n_samples : int
        Rows of the matching X.
    classes : ndarray of shape (n_classes,) or None
        Classes seen in ``fit``; every label must be one of them. None: ``y`` must hold
        exactly two distinct labels (two or more with ``multiclass``), which become the
        classes (sorted).
    owner : str or None
        Estimator name for the message when ``y`` is None.
    x_name : str
        Name of the matching X argument, for the shape message.
    multiclass : bool
        Whether more than two classes are allowed.
    min_classes : int
        With ``multiclass``: the fewest classes ``y`` may hold (1 for labels added to a
        fitted model).

    Returns
    -------
    labels : ndarray of shape (n_samples,)
    classes : ndarray of shape (n_classes,)

    Raises
    ------
    ValueError
        If y is None, has a wrong shape, holds NaN or continuous values ("Unknown label
        type"), holds a single class, more than two without ``multiclass`` ("Only binary
        classification is supported"), or a label not in ``classes``.
    """
    from sklearn.exceptions import DataConversionWarning
    from sklearn.utils.multiclass import type_of_target

    if y is None:
        raise ValueError(f"{owner or 'this estimator'} requires y to be passed, but the target y is None")
    labels = host_values(y)
    if labels.ndim == 2 and labels.shape[1] == 1:
        warnings.warn(
            f"A column-vector y was passed when a 1d array was expected. Please change the shape "
            f"of {name} to (n_samples,), for example using ravel().",
            DataConversionWarning, stacklevel=3,
        )
        labels = labels[:, 0]
    if labels.ndim != 1 or labels.shape[0] != n_samples:
        raise ValueError(f"{name} must have shape ({n_samples},) to match {x_name}; got shape {labels.shape}")
    if labels.dtype.kind == "f" and not np.all(np.isfinite(labels)):
        raise ValueError(f"{name} must not hold NaN or inf labels; got them at rows {_rows(~np.isfinite(labels))}")
    if labels.dtype.kind not in "biufUSO":
        raise ValueError(f"{name} must hold class labels; got dtype {labels.dtype}")
    if classes is not None:
        # Labels of a fitted model: each must be one of its classes (a continuous value is not).
        unseen = np.setdiff1d(labels, classes)
        if unseen.size:
            raise ValueError(
                f"{name} holds labels not seen in fit: {unseen[:5].tolist()}; "
                f"expected only {classes.tolist()}"
            )
        return labels, classes
    if labels.dtype.kind in "biuU" or (
            labels.dtype.kind == "f" and np.all((labels == np.floor(labels)) & (np.abs(labels) < 2.0**53))):
        # Discrete labels, as type_of_target finds them without its checks (0.8 ms of a 3 ms
        # fit of 130 points); it decides the others (objects, bytes, fractions, huge floats).
        target_type = "binary" if np.unique(labels).size <= 2 else "multiclass"
    else:
        target_type = type_of_target(labels, input_name=name)
    if target_type not in ("binary", "multiclass"):
        raise ValueError(
            f"Unknown label type: {target_type}. {name} must hold discrete class labels; "
            f"got {target_type} values"
        )
    classes = np.unique(labels)
    if multiclass and classes.shape[0] < min_classes:
        raise ValueError(
            f"{name} must hold at least two classes for an SVC; got 1 class: {classes.tolist()}"
        )
    if multiclass:
        return labels, classes
    if classes.shape[0] > 2:
        raise ValueError(
            f"Only binary classification is supported. The type of the target is {target_type}: "
            f"{name} must hold exactly two classes for a binary SVC; got {classes.shape[0]}: "
            f"{classes[:5].tolist()}"
        )
    if classes.shape[0] < 2:
        raise ValueError(
            f"{name} must hold exactly two classes for a binary SVC; got 1 class: "
            f"{classes.tolist()}"
        )
    return labels, classes


def check_sample_weight(sample_weight, n_samples, name="sample_weight", allow_all_zero=False,
                        inert_negative=False):
    """Validate per-sample weights with scikit-learn's ``_check_sample_weight``.

    Parameters
    ----------
    sample_weight : array-like of shape (n_samples,), number or None
        Any array-API array or array-like of real numbers; a number weights every sample
        alike.
    n_samples : int
        Rows of the matching X.
    name : str
        Argument name used in messages.
    allow_all_zero : bool
        Whether weights that are all 0 are accepted (an update may add inert points only).
    inert_negative : bool
        Read a negative weight as 0 (the point is inert), as LIBSVM and ``SVC`` do, instead
        of refusing it.

    Returns
    -------
    weights : ndarray of shape (n_samples,), float64, or None
        None when ``sample_weight`` is None.

    Raises
    ------
    ValueError
        Weights of another shape, NaN, inf or (unless ``inert_negative``) negative weights,
        or (unless ``allow_all_zero``) weights that are all 0, or all ≤ 0 with
        ``inert_negative`` (scikit-learn's messages, naming ``name``; SVC's "Invalid input -
        all samples have zero or negative weights.").
    """
    from sklearn.utils.validation import _check_sample_weight

    if sample_weight is None:
        return None
    values = sample_weight if isinstance(sample_weight, Real) else host_values(sample_weight)
    if isinstance(values, np.ndarray) and values.dtype.kind not in "biuf":
        raise ValueError(f"{name} must hold real numbers; got dtype {values.dtype}")
    try:
        weights = _check_sample_weight(values, np.empty((n_samples, 0)), dtype=np.float64,
                                       ensure_non_negative=not inert_negative,
                                       allow_all_zero_weights=allow_all_zero or inert_negative)
    except ValueError as exc:
        message = str(exc)
        if name != "sample_weight":
            message = message.replace("sample_weight", name).replace("Sample weights", f"{name}")
        raise ValueError(message) from None
    weights = np.asarray(weights, dtype=np.float64)
    if inert_negative:
        weights = np.maximum(weights, 0.0)
        if not allow_all_zero and n_samples and not np.any(weights > 0):
            raise ValueError(f"Invalid input - all samples have zero or negative weights. ({name} must have a "
                             f"positive weight somewhere)")
    return weights


def numeric_targets(y):
    """Targets in a NumPy object array (numbers stored as objects) as float64, as
    scikit-learn reads them; anything else unchanged (:func:`check_targets` judges it)."""
    if isinstance(y, np.ndarray) and y.dtype == object:
        try:
            return y.astype(np.float64)
        except (TypeError, ValueError):
            return y
    return y


def check_targets(y, n_samples, name="y", x_name="X"):
    """Validate real regression targets; return them as a host float64 vector.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Any array-API array or array-like of real numbers. A column vector (n_samples, 1) is
        accepted with a ``DataConversionWarning``, as in scikit-learn.
    n_samples : int
        Rows of the matching X.
    name, x_name : str
        Names of the argument and of the matching X, for messages.

    Returns
    -------
    y : ndarray of shape (n_samples,), float64

    Raises
    ------
    ValueError
        If y is None, does not have the shape (n_samples,), does not hold real numbers, or
        holds NaN or inf (the message names the first rows).
    """
    if type(y) is np.ndarray and y.dtype == np.float64 and y.shape == (n_samples,) and np.isfinite(y).all():
        return y.copy()  # the usual case (a stream's update: a few µs of checks less; not a masked array)
    from sklearn.exceptions import DataConversionWarning

    if y is None:
        raise ValueError(f"{name} must be given: real targets of shape ({n_samples},); got None")
    values = host_values(y)
    if values.ndim == 2 and values.shape[1] == 1 and values.shape[0] == n_samples:
        warnings.warn(
            f"A column-vector y was passed when a 1d array was expected. Please change the shape "
            f"of {name} to (n_samples,), for example using ravel().",
            DataConversionWarning, stacklevel=3,
        )
        values = values[:, 0]
    if values.ndim != 1 or values.shape[0] != n_samples:
        raise ValueError(f"{name} must have shape ({n_samples},) to match {x_name}; got shape {values.shape}")
    if values.dtype.kind not in "biuf":
        raise ValueError(f"{name} must hold real numbers; got dtype {values.dtype}")
    values = values.astype(np.float64)
    bad = ~np.isfinite(values)
    if np.any(bad):
        raise ValueError(f"{name} must be finite; got NaN or inf at rows {_rows(bad)}")
    return values


def _rows(mask) -> str:
    """The first rows where ``mask`` holds, and how many of how many: "[5, 17] (2 of 40)"."""
    rows = np.flatnonzero(mask)
    more = ", ..." if rows.size > 5 else ""
    return f"{rows[:5].tolist()}"[:-1] + f"{more}] ({rows.size} of {mask.size})"


def signed_labels(labels, classes, xp, device):
    """Labels as float64 ±1 on the device (classes[1] -> +1)."""
    return to_device(np.where(labels == classes[1], 1.0, -1.0), xp, device)


def host_values(a) -> np.ndarray:
    """Host NumPy array of user values: NumPy arrays and scalars, array-likes (lists, tuples,
    ranges, pandas objects) and arrays of any array-API namespace or device.

    ``to_host`` alone would send a NumPy scalar (``numpy.int64``, which array-api-compat counts
    as a NumPy array) through DLPack, which NumPy scalars do not support.
    """
    if isinstance(a, (np.ndarray, np.generic)) or not is_array_api(a):
        return np.asarray(a)
    return to_host(a)


class UnknownIdError(KeyError, ValueError):
    """A sample id that is not in the model (a ValueError, as every bad argument, and a
    KeyError, as a missing key)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


def check_ids(remove, current_ids, name="remove"):
    """Map sample ids to row indices; return a host int array of rows.

    Parameters
    ----------
    remove : int or array-like of int of shape (n_ids,)
        One sample id (a Python or NumPy integer) or several (a list, tuple, range, NumPy
        array or array of any array-API namespace).
    current_ids : ndarray of shape (n_samples,), int64
        The model's ``sample_ids_``.
    name : str
        Argument name used in messages.

    Returns
    -------
    rows : ndarray of shape (n_ids,), int64

    Raises
    ------
    TypeError
        If the ids are not integers (booleans, floats and strings included) or not 0-D/1-D.
    ValueError
        If an id is repeated.
    UnknownIdError
        (a ValueError and a KeyError) If an id is not in the model.
    """
    ids = np.atleast_1d(host_values(remove))
    if ids.size == 0 and ids.ndim == 1:
        return np.zeros(0, dtype=np.int64)
    if ids.shape == (1,) and ids.dtype.kind in "iu" and current_ids.size:
        # One id (a stream's update): fit and update keep the ids increasing, so one binary
        # search finds it (checked: a miss takes the general route below).
        row = int(np.searchsorted(current_ids, ids[0]))
        if row < current_ids.size and current_ids[row] == ids[0]:
            return np.array([row], dtype=np.int64)
    if ids.ndim != 1 or ids.dtype.kind not in "iu":
        raise TypeError(
            f"{name} must be integer sample ids (one integer or a 1-D sequence of them); "
            f"got {type(remove).__name__} of dtype {ids.dtype} and shape {ids.shape}"
        )
    ordered = np.sort(ids)
    repeated = ordered[1:][ordered[1:] == ordered[:-1]]
    if repeated.size:
        raise ValueError(f"{name} repeats sample ids: {np.unique(repeated)[:5].tolist()}")
    if current_ids.size:
        # Increasing ids (as fit and update keep them): one binary search each, checked (a
        # miss takes the general route below); not an argsort of every id per update.
        rows = np.minimum(np.searchsorted(current_ids, ids), current_ids.size - 1)
        if (current_ids[rows] == ids).all():
            return rows.astype(np.int64)
    order = np.argsort(current_ids)
    pos = np.searchsorted(current_ids, ids, sorter=order)
    pos = np.minimum(pos, len(current_ids) - 1)
    rows = order[pos]
    missing = ids[current_ids[rows] != ids]
    if missing.size:
        raise UnknownIdError(f"{name} names sample ids not in the model: {missing[:5].tolist()}")
    return rows.astype(np.int64)


def check_positive(value, name, allow_zero=False, allow_inf=False):
    """A real number > 0 (or ≥ 0); returns it as float. Raises ValueError otherwise."""
    ok = isinstance(value, Real) and not isinstance(value, bool) and not np.isnan(value)
    ok = ok and (value >= 0 if allow_zero else value > 0) and (allow_inf or np.isfinite(value))
    if not ok:
        bound = ">= 0" if allow_zero else "> 0"
        kind = "real number (inf allowed)" if allow_inf else "finite real number"
        raise ValueError(f"{name} must be a {kind} {bound}; got {value!r}")
    return float(value)


def check_nonpositive(value, name, owner=None):
    """A finite real number ≤ 0 (NumPy scalars included); returns it as float. Raises
    ValueError otherwise."""
    ok = isinstance(value, Real) and not isinstance(value, (bool, np.bool_)) and bool(np.isfinite(value))
    if not (ok and value <= 0):
        where = f" for {owner}" if owner else ""
        raise ValueError(f"{name} must be a finite real number <= 0{where}; got {value!r}")
    return float(value)


def check_bool(value, name):
    """A Python or NumPy bool; returns it as bool. Raises ValueError otherwise."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be a bool; got {value!r}")
    return bool(value)


def check_choice(value, name, choices):
    """Raise ValueError unless ``value`` is one of ``choices``."""
    if value not in choices:
        raise ValueError(f"{name} must be one of {choices}; got {value!r}")
    return value


def check_max_iter(value, name="max_iter"):
    """An iteration limit as ``SVC``'s: -1 or None for none (returns None), else an integer
    >= 1 (returned as int). Raises ValueError otherwise."""
    if value is None or (isinstance(value, Integral) and not isinstance(value, bool) and value == -1):
        return None
    if not isinstance(value, Integral) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, or -1 for no limit; got {value!r}")
    return int(value)


def check_int(value, name, minimum):
    """An integer ≥ ``minimum``; returns it as int. Raises ValueError otherwise."""
    if not isinstance(value, Integral) or isinstance(value, bool) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}; got {value!r}")
    return int(value)


def is_precomputed(kernel) -> bool:
    """Whether the ``kernel`` parameter asks for a precomputed Gram matrix."""
    return isinstance(kernel, str) and kernel.lower() == "precomputed"


def check_gram(X, owner: str):
    """The training Gram matrix X (checked by :func:`check_X`) as gpath keeps it, ``[G | index]``
    (:func:`gpath.kernels.with_index`).

    Raises
    ------
    ValueError
        X not square, as scikit-learn's ``SVC`` (``kernel="precomputed"``) says, or not
        symmetric beyond round-off (1e-10 of its largest entry): the exact solvers read a
        column of Q as a row, and a test-against-training block passed to ``fit`` would be
        solved as something else.
    """
    from .kernels import with_index

    if is_sparse(X):
        raise TypeError(f"Sparse precomputed kernels are not supported: {owner}(kernel='precomputed') needs the "
                        f"Gram matrix as a dense array (X.toarray())")
    if X.shape[0] != X.shape[1]:
        raise ValueError(f"{owner}(kernel='precomputed') needs X to be the square Gram matrix K(x_i, x_j) of the "
                         f"training points; got X of shape {tuple(X.shape)}")
    xp, _ = get_namespace_and_device(X)
    asymmetry, size = scalars(xp, xp.max(xp.abs(X - X.T)), xp.max(xp.abs(X))) if X.shape[0] else (0.0, 0.0)
    if asymmetry > 1e-10 * size:
        raise ValueError(f"{owner}(kernel='precomputed') needs X to be a symmetric Gram matrix K(x_i, x_j); "
                         f"got max |X - X.T| = {asymmetry:.3g} (largest entry {size:.3g}). A Gram matrix "
                         f"computed in float32 is symmetric only to ~1e-7: pass (X + X.T) / 2")
    return with_index(X, 0)


def check_gram_rows(K_add, n: int, name: str, owner: str) -> None:
    """Check the kernel values of m points added to a precomputed kernel's n training points
    (checked by :func:`check_X`): shape (m, n + m), against the training points then the new
    points, the m × m block symmetric beyond round-off (as :func:`check_gram`).

    Raises
    ------
    ValueError
        Another shape, or an asymmetric m × m block.
    """
    m = K_add.shape[0]
    if K_add.shape[1] != n + m:
        raise ValueError(f"{owner}(kernel='precomputed') needs {name} to hold the kernel values of its m points "
                         f"against the n = {n} training points (in training order, sample_ids_) and then against "
                         f"themselves: shape (m, n + m) = ({m}, {n + m}); got {tuple(K_add.shape)}")
    xp, _ = get_namespace_and_device(K_add)
    block = K_add[:, n:]
    asymmetry, size = scalars(xp, xp.max(xp.abs(block - block.T)), xp.max(xp.abs(K_add)))
    if asymmetry > 1e-10 * size:
        raise ValueError(f"{owner}(kernel='precomputed') needs the new points' kernel values among themselves "
                         f"({name}[:, {n}:]) to be symmetric; got max |K - K.T| = {asymmetry:.3g} (largest entry "
                         f"{size:.3g})")
