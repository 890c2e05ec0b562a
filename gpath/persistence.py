"""Saving and loading models in a versioned, NumPy-only format (no pickle).

A model file is a NumPy ``.npz`` archive of plain arrays and one JSON string. Loading uses
``numpy.load(..., allow_pickle=False)``, so a file from an untrusted source cannot run code.
The whole incremental state is stored — training rows, labels, α, b, index sets, the margin
set in factor order and the margins y f — so a loaded model goes on updating exactly where the
saved one stopped; the factor of 𝐌 and the kernel columns of the margin set are rebuilt on
load (O(|M|³) and n·|M| kernel evaluations).

Format ``gpath.IncrementalSVC`` version 2 (keys of the archive). A model of k classes holds
one state per pair of classes (i, j), i < j, in the order (0, 1), (0, 2), …, (1, 2), …; the
rows of a pair are the rows of its two classes in training order (all rows for k = 2), and
its per-row arrays are stored one pair after the other:

============= ================== ===========================================================
key           dtype, shape       meaning
============= ================== ===========================================================
meta          str, ()            JSON: format, version, estimator parameters, kernel, C,
                                 ridge, b (one bias per pair, label +1 for its class j),
                                 next id, last update record, the class_weight of fit,
                                 classes_dtype ("object" for string labels fit got as
                                 Python objects; absent or null otherwise)
X             float64, (n, d)    training rows, in training order (a model fitted on sparse
                                 rows: ``X.data``, ``X.indices``, ``X.indptr``, their CSR
                                 arrays, and ``X_sparse_shape`` [n, d] in meta)
y             int64, (n,)        class of each row (index into ``classes``)
weights       float64, (n,)      each row's box over C (sample weight × class weight)
ids           int64, (n,)        sample ids
classes       any, (k,)          the labels (numbers or strings), increasing
class_weight  float64, (k,)      ``class_weight_``
alpha         float64, (N,)      dual coefficients of every pair's rows (N = Σ_pairs rows)
yf            float64, (N,)      maintained margins y_i f(x_i) (ridge included)
where         int8, (N,)         index set of each pair's row: 0 = O, 1 = M, 2 = I
margin        int64, (Σ |M|,)    each pair's margin rows (pair-local), in factor order
margin_sizes  int64, (k(k−1)/2,) |M| of each pair
probA, probB  float64, (k(k−1)/2,) optional: Platt's sigmoids (``probability=True``)
feature_names str, (d,)          optional: ``feature_names_in_``, the column names seen
                                 in fit
============= ================== ===========================================================

Version 1 (gpath before multiclass; still read) held one pair: ``y`` as ±1 labels, one box
C for every point, ``b`` a number, no ``weights``, ``class_weight``, ``margin_sizes``.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import os
import zipfile
import zlib

import numpy as np
import scipy.sparse

from ._array_api import get_namespace_and_device, is_array_api, is_numpy, to_device, to_host
from ._sparse import is_sparse
from .kernels import Kernel

__all__ = [
    "FORMAT",
    "VERSION",
    "ModelFileError",
    "SaveMixin",
    "check_kernel",
    "finite_array",
    "fitted_attribute",
    "fitted_n_features",
    "load",
    "record",
    "save",
]

FORMAT = "gpath.IncrementalSVC"
VERSION = 1  # of FITTED_FORMAT (the IncrementalSVC format has its own, gpath._incremental_file.VERSION)
# The other estimators (SimpleSVC, SVCPath, SVRPath, SVCPathCV, RobustSVC, RobustSVR,
# CCCPRobustSVC, CCCPRobustSVR) are stored as their fitted attributes: arrays as entries ``attr:<name>``
# (arrays of strings held as Python objects marked "dtype": "object"), a fitted estimator
# inside (SVCPathCV's best_estimator_) in its own format with its entries under ``<name>/``,
# a SciPy sparse matrix (a model fitted on sparse rows) as its CSR arrays ``attr:<name>.data``,
# ``.indices``, ``.indptr`` with its shape and type in the JSON, everything else in the JSON
# under "attributes" (kernels and result records by their fields).
FITTED_FORMAT = "gpath.fitted"

# Every public estimator (a SaveMixin subclass) and result record, by class name: how a file
# names what it holds, without this module importing the estimators.
_ESTIMATORS: dict[str, type] = {}
_RECORDS: dict[str, type] = {}


def json_params(params: dict) -> dict:
    """An estimator's ``get_params()`` as JSON values, each by :func:`_json_param`;
    :func:`params_from_json` undoes it."""
    return {name: _json_param(value, name) for name, value in params.items()}


def params_from_json(params: dict) -> dict:
    """The ``get_params()`` that :func:`json_params` stored."""
    return {name: _param_from_json(value) for name, value in params.items()}


def _json_param(value, name):
    """One parameter as a JSON value: a dict (``class_weight``) becomes ``{"dict": [[key,
    value], ...]}`` (JSON object keys are strings, and labels may be numbers), a tuple
    ``{"tuple": [...]}``, a scikit-learn splitter (``cv``) ``{"splitter": class name,
    "params": its parameters}``; other values are kept (``json.dumps`` refuses what is not
    JSON)."""
    if isinstance(value, dict):
        return json_class_weight(value) if name == "class_weight" else {"dict": [[_item(k), _json_param(v, name)]
                                                                                 for k, v in value.items()]}
    if isinstance(value, tuple):
        return {"tuple": [_json_param(v, name) for v in value]}
    splitter = _splitters().get(type(value).__name__)
    if splitter is not None and type(value) is splitter:
        names = [p for p in inspect.signature(splitter.__init__).parameters if p != "self"]
        if all(hasattr(value, p) for p in names):  # else json.dumps refuses it, naming it
            return {"splitter": splitter.__name__, "params": json_params({p: getattr(value, p) for p in names})}
    return _item(value)


def _param_from_json(value):
    if isinstance(value, dict) and "dict" in value:
        return {k: _param_from_json(v) for k, v in value["dict"]}
    if isinstance(value, dict) and "tuple" in value:
        return tuple(_param_from_json(v) for v in value["tuple"])
    if isinstance(value, dict) and "splitter" in value:
        cls = _splitters().get(value["splitter"])
        if cls is None:
            raise ModelFileError(f"unknown cross-validation splitter {value['splitter']!r}")
        return cls(**params_from_json(value["params"]))
    return value


def _splitters() -> dict:
    """scikit-learn's cross-validation splitters by class name (what a ``cv`` parameter may
    be saved as): the classes of :mod:`sklearn.model_selection` with ``split`` and
    ``get_n_splits`` and without ``fit``."""
    import sklearn.model_selection as ms

    found = {}
    for name in ms.__all__:
        try:
            cls = getattr(ms, name)
        except ImportError:  # the experimental searches
            continue
        if isinstance(cls, type) and hasattr(cls, "split") and hasattr(cls, "get_n_splits") and not hasattr(cls, "fit"):
            found[name] = cls
    return found


def _item(value):
    """A NumPy scalar as the Python number it holds; anything else unchanged."""
    return value.item() if isinstance(value, np.generic) else value


def json_class_weight(class_weight):
    """``class_weight`` (dict, "balanced" or None) as a JSON value (see :func:`json_params`)."""
    if isinstance(class_weight, dict):
        return {"dict": [[k.item() if hasattr(k, "item") else k, float(v)] for k, v in class_weight.items()]}
    return class_weight


def class_weight_from_json(value):
    """The ``class_weight`` that :func:`json_class_weight` stored."""
    if isinstance(value, dict) and "dict" in value:
        return {k: v for k, v in value["dict"]}
    return value


class ModelFileError(ValueError):
    """A file that is not a valid gpath model file; :func:`load` names the file and the reason.

    The ``_from_saved`` hooks raise it (with the reason only); any other error raised while a
    file's content is read becomes one too.
    """


def finite_array(arrays, key, dtype_kinds="f", ndim=None, shape=None) -> np.ndarray:
    """``arrays[key]`` checked: present, of one of ``dtype_kinds``, of ``ndim`` dimensions or
    ``shape`` (None entries: any length), finite if floating.

    Raises
    ------
    ModelFileError
    """
    if key not in arrays:
        raise ModelFileError(f"entry {key!r} is missing")
    a = arrays[key]
    if a.dtype.kind not in dtype_kinds:
        raise ModelFileError(f"entry {key!r} has dtype {a.dtype}; expected kind {dtype_kinds!r}")
    if ndim is not None and a.ndim != ndim:
        raise ModelFileError(f"entry {key!r} has shape {a.shape}; expected {ndim} dimension(s)")
    if shape is not None and (a.ndim != len(shape) or any(n is not None and m != n for m, n in zip(a.shape, shape))):
        expected = tuple("n" if n is None else n for n in shape)
        raise ModelFileError(f"entry {key!r} has shape {a.shape}; expected {expected}")
    if a.dtype.kind == "f" and not np.all(np.isfinite(a)):
        raise ModelFileError(f"entry {key!r} holds NaN or inf")
    return a


def check_kernel(kernel, offsets=(0.0,), svc: bool = False) -> None:
    """Raise :class:`ModelFileError` unless ``kernel`` is a resolved kernel that
    :meth:`Kernel.from_params` could have made (finite gamma > 0, degree, coef0), with an
    offset among ``offsets``; ``svc``: the estimator takes the C-SVCs' kernels ("sigmoid",
    "precomputed")."""
    if not isinstance(kernel, Kernel):
        raise ModelFileError(f"the kernel must be a Kernel; got {type(kernel).__name__}")
    try:
        rebuilt = Kernel.from_params(kernel.kind, kernel.gamma, kernel.degree, kernel.coef0, np.empty((0, 1)),
                                     svc=svc)
        ok = (rebuilt == dataclasses.replace(kernel, offset=0.0) and kernel.offset in offsets
              and bool(np.isfinite(kernel.gamma)) and bool(np.isfinite(kernel.coef0)))
    except (TypeError, ValueError, OverflowError) as exc:
        raise ModelFileError(f"bad kernel {kernel}: {exc}") from None
    if not ok:
        raise ModelFileError(f"bad kernel {kernel}: not one gpath fits (offset in {offsets}, finite gamma > 0)")


def fitted_attribute(model, name, shape=None, kinds="f"):
    """A loaded attribute (host copy of a device array; a sparse matrix as it is), present and
    of ``shape`` (None entries: any length) and dtype kind.

    Raises
    ------
    ModelFileError
    """
    if not hasattr(model, name):
        raise ModelFileError(f"attribute {name!r} is missing")
    value = getattr(model, name)
    if is_sparse(value):  # a model fitted on sparse rows: its stored values and its shape (kept sparse)
        finite_array({name: value.data}, name, kinds)
        if shape is not None and (len(shape) != 2 or any(n is not None and m != n for m, n in zip(value.shape, shape))):
            raise ModelFileError(f"entry {name!r} has shape {value.shape}; expected "
                                 f"{tuple('n' if n is None else n for n in shape)}")
        return value
    a = to_host(value) if is_array_api(value) and not isinstance(value, np.ndarray) else np.asarray(value)
    return finite_array({name: a}, name, kinds, shape=shape)


def fitted_n_features(model) -> int:
    """A loaded model's ``n_features_in_``, an int ≥ 1.

    Raises
    ------
    ModelFileError
    """
    d = getattr(model, "n_features_in_", None)
    if not isinstance(d, int) or isinstance(d, bool) or d < 1:
        raise ModelFileError(f"n_features_in_ must be an int >= 1; got {d!r}")
    return d


def record(cls):
    """Class decorator: a frozen result dataclass that fitted attributes may hold (saved by
    its fields)."""
    _RECORDS[cls.__name__] = cls
    return cls


# Attributes that live in the model's namespace and on its device (the rest is host data).
DEVICE_ATTRIBUTES = {"support_vectors_", "dual_coef_", "intercept_", "_X"}


def _encode(value, name, arrays):
    """A JSON-able description of ``value``; arrays go to ``arrays`` under ``name``."""
    if is_sparse(value):  # a model fitted on sparse rows: its CSR arrays
        arrays.update(csr_entries(value, f"attr:{name}"))
        return {"sparse": name, "shape": list(value.shape),
                "type": "csr_array" if isinstance(value, scipy.sparse.sparray) else "csr_matrix"}
    if name in DEVICE_ATTRIBUTES:
        arrays[f"attr:{name}"] = to_host(value)
        return {"device_array": name}
    if isinstance(value, Kernel):
        return {"kernel": dataclasses.asdict(value)}
    if dataclasses.is_dataclass(value):
        return {"record": type(value).__name__,
                "fields": {f.name: _encode(getattr(value, f.name), f"{name}.{f.name}", arrays)
                           for f in dataclasses.fields(value)}}
    if isinstance(value, SaveMixin):  # a fitted estimator inside (SVCPathCV.best_estimator_)
        from .kernels import check_saveable

        check_saveable(getattr(value, "kernel_", None), type(value).__name__)
        meta, inner = value._to_saved()
        arrays.update({f"{name}/{key}": a for key, a in inner.items()})
        return {"estimator": type(value).__name__, "meta": meta}
    if isinstance(value, np.ndarray):
        if value.dtype == object:  # labels or column names: strings, kept as object
            if not all(isinstance(v, str) for v in value.flat):
                raise TypeError(f"cannot save attribute {name!r}: an object array must hold strings")
            arrays[f"attr:{name}"] = value.astype(str)
            return {"array": name, "dtype": "object"}
        arrays[f"attr:{name}"] = value
        return {"array": name}
    if is_array_api(value):
        arrays[f"attr:{name}"] = to_host(value)
        return {"device_array": name}
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, tuple):
        return {"tuple": [_encode(v, f"{name}.{i}", arrays) for i, v in enumerate(value)]}
    if isinstance(value, list):
        return [_encode(v, f"{name}.{i}", arrays) for i, v in enumerate(value)]
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {"dict": {k: _encode(v, f"{name}.{k}", arrays) for k, v in value.items()}}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise TypeError(f"cannot save attribute {name!r} of type {type(value).__name__}")


def _decode(spec, data, like, name):
    xp, device = get_namespace_and_device(like)
    if isinstance(spec, list):
        return [_decode(v, data, like, f"{name}.{i}") for i, v in enumerate(spec)]
    if not isinstance(spec, dict):
        return spec
    if "kernel" in spec:
        return Kernel(**spec["kernel"])
    if "record" in spec:
        cls = _RECORDS.get(spec["record"])
        if cls is None:
            raise ModelFileError(f"unknown record {spec['record']!r}")
        return cls(**{k: _decode(v, data, like, f"{name}.{k}") for k, v in spec["fields"].items()})
    if "estimator" in spec:
        cls = _ESTIMATORS.get(spec["estimator"])
        if cls is None or not isinstance(spec.get("meta"), dict):
            raise ModelFileError(f"attribute {name!r} names unknown estimator {spec['estimator']!r}")
        prefix = f"{name}/"
        return cls._from_saved(spec["meta"], {k[len(prefix):]: a for k, a in data.items() if k.startswith(prefix)},
                               like)
    if "array" in spec:
        a = finite_array(data, f"attr:{spec['array']}", "biufU")
        return a.astype(object) if spec.get("dtype") == "object" else a
    if "sparse" in spec:
        matrix = csr_from_entries(data, f"attr:{spec['sparse']}", spec.get("shape"), xp)
        return scipy.sparse.csr_array(matrix) if spec.get("type") == "csr_array" else matrix
    if "device_array" in spec:
        return to_device(finite_array(data, f"attr:{spec['device_array']}", "f"), xp, device)
    if "tuple" in spec:
        return tuple(_decode(v, data, like, f"{name}.{i}") for i, v in enumerate(spec["tuple"]))
    if isinstance(spec.get("dict"), dict):
        return {k: _decode(v, data, like, f"{name}.{k}") for k, v in spec["dict"].items()}
    raise ModelFileError(f"cannot read attribute description {spec!r}")


class _LikeError(TypeError):
    """``like`` does not suit the model in the file (the caller's error, not the file's)."""


def csr_entries(matrix, key: str) -> dict:
    """The arrays of a sparse matrix as file entries ``<key>.data``, ``.indices``, ``.indptr``
    (CSR); :func:`csr_from_entries` reads them back."""
    csr = scipy.sparse.csr_matrix(matrix)
    return {f"{key}.{part}": getattr(csr, part) for part in ("data", "indices", "indptr")}


def csr_from_entries(data, key: str, shape, xp):
    """The CSR matrix of shape ``shape`` that :func:`csr_entries` stored under ``key``,
    checked; host only (sparse rows live there).

    Raises
    ------
    ModelFileError
        Its arrays are missing, not finite, or not a valid CSR matrix of that shape.
    TypeError
        ``xp`` (load's ``like``) is not NumPy.
    """
    if not is_numpy(xp):
        raise _LikeError(f"a model fitted on sparse rows is loaded on the host: like must be None or a NumPy array; "
                         f"got a {xp.__name__} array")
    if not (isinstance(shape, list) and len(shape) == 2
            and all(isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in shape)):
        raise ModelFileError(f"the sparse {key!r} needs a shape of two ints >= 1; got {shape!r}")
    parts = [finite_array(data, f"{key}.{part}", kinds, ndim=1)
             for part, kinds in (("data", "f"), ("indices", "iu"), ("indptr", "iu"))]
    try:
        matrix = scipy.sparse.csr_matrix(tuple(parts), shape=tuple(shape))
        matrix.check_format(full_check=True)
    except (ValueError, TypeError) as exc:
        raise ModelFileError(f"the sparse {key!r} is not a valid CSR matrix: {exc}") from None
    return matrix


class SaveMixin:
    """``save(file)`` for every gpath estimator; public subclasses register themselves for
    :func:`load`.

    An estimator with its own format overrides ``_to_saved(self) -> (meta, arrays)`` and the
    class method ``_from_saved(meta, arrays, like)``; the default stores the fitted attributes
    named in ``_FITTED_ATTRIBUTES``, and :func:`load` refuses a file naming any other.
    """

    # The attributes beyond the parameters that a fitted model may hold (the default format).
    _FITTED_ATTRIBUTES: frozenset = frozenset()

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if not cls.__name__.startswith("_") and cls.__module__.startswith("gpath."):
            _ESTIMATORS[cls.__name__] = cls

    # Optional fitted attributes: a value None given to _set_fitted removes them.
    _OPTIONAL_ATTRIBUTES = ("feature_names_in_", "probA_", "probB_", "validation_error_", "best_estimator_")

    def _set_fitted(self, attrs: dict) -> None:
        """Publish a fit's (or an update's) attributes, computed beforehand, all at once, so that
        a failure before this changes nothing. A value None for an optional attribute removes
        it, as scikit-learn does: ``feature_names_in_`` after a refit without column names,
        ``probA_``/``probB_`` without probabilities, ``validation_error_`` of a path fitted
        anew, ``best_estimator_`` with ``refit=False``."""
        for key, value in attrs.items():
            if value is None and key in self._OPTIONAL_ATTRIBUTES:
                self.__dict__.pop(key, None)
            else:
                setattr(self, key, value)

    def save(self, file) -> None:
        """Write the fitted model to ``file`` in gpath's versioned, NumPy-only format;
        :func:`gpath.load` reads it back, onto any device.

        Parameters
        ----------
        file : str, os.PathLike or binary file object
            A path is used exactly as given: no suffix is added (``save("model")`` writes
            ``model``; ``.npz`` is the customary suffix).

        Raises
        ------
        TypeError
            If the model is not fitted, its labels are neither numbers nor strings, or a
            parameter is not a JSON value (a ``RandomState`` instance, say).
        """
        save(self, file)

    def _to_saved(self):
        """``(meta, arrays)``: the fitted attributes (see the module docstring)."""
        params = self.get_params()
        if not hasattr(self, "n_features_in_"):
            raise TypeError(f"model must be a fitted gpath estimator; {type(self).__name__} is not fitted")
        arrays: dict = {}
        names = [name for name in vars(self) if name not in params]
        undeclared = sorted(set(names) - self._FITTED_ATTRIBUTES)
        if undeclared:  # a new attribute not added to the format: the file could not be read back
            raise TypeError(f"cannot save {type(self).__name__}: attributes {undeclared} are not in its file format")
        attributes = {name: _encode(getattr(self, name), name, arrays) for name in names}
        meta = {"format": FITTED_FORMAT, "version": VERSION, "estimator": type(self).__name__,
                "params": json_params(params), "attributes": attributes}
        return meta, arrays

    @classmethod
    def _from_saved(cls, meta, data, like):
        """The model stored in ``(meta, data)``, its arrays in the namespace and on the device
        of ``like``; checked by :meth:`_check_loaded` before it is returned.

        Raises
        ------
        ModelFileError
        """
        if meta.get("version") != VERSION:
            raise ModelFileError(f"unknown {FITTED_FORMAT} format version {meta.get('version')!r}; "
                                 f"this gpath reads {VERSION}")
        params, attributes = meta.get("params"), meta.get("attributes")
        if not isinstance(params, dict) or not isinstance(attributes, dict):
            raise ModelFileError("'meta' lacks the estimator's params or attributes")
        unknown = sorted(set(attributes) - cls._FITTED_ATTRIBUTES)
        if unknown:
            raise ModelFileError(f"unknown attributes {unknown[:5]} for {cls.__name__} "
                                 f"(it has {sorted(cls._FITTED_ATTRIBUTES)})")
        model = cls(**params_from_json(params))
        for name, spec in attributes.items():
            value = _decode(spec, data, like, name)
            if name == "feature_names_in_":  # files before the "dtype" mark kept them as str
                value = np.asarray(value, dtype=object)
            setattr(model, name, value)
        model._check_loaded()
        return model

    def _check_loaded(self) -> None:
        """Raise :class:`ModelFileError` unless the loaded attributes fit together (each
        estimator checks what it can without its training data)."""


def save(model, file) -> None:
    """Write a fitted gpath estimator to ``file`` (a path or a binary file).

    Parameters
    ----------
    model : IncrementalSVC, IncrementalSVR, SimpleSVC, SVCPath, SVRPath, SVCPathCV, RobustSVC, RobustSVR,
        CCCPRobustSVC or CCCPRobustSVR
        Fitted; its arrays may live on any device (they are copied to the host). Parameters
        are stored as JSON values; tuples, ``class_weight`` dicts and scikit-learn's
        cross-validation splitters (``cv``) come back as they were.
    file : str, os.PathLike or binary file object
        A path is used exactly as given, as :func:`load` reads it: no suffix is added
        (``save(model, "model")`` writes ``model``, not ``model.npz``; ``.npz`` is the
        customary suffix). An existing file is replaced.

    Raises
    ------
    TypeError
        If ``model`` is not a fitted gpath estimator, its labels are neither numbers nor
        strings, or a parameter is not a JSON value (a ``RandomState`` instance, say).
        Nothing is written then.
    """
    if _ESTIMATORS.get(type(model).__name__) is not type(model):
        raise TypeError(f"model must be a fitted gpath estimator; got {type(model).__name__}")
    from .kernels import check_saveable

    check_saveable(getattr(model, "kernel_", None), type(model).__name__)
    meta, arrays = model._to_saved()
    try:
        text = json.dumps(meta)
    except TypeError as exc:  # e.g. random_state=np.random.RandomState(0)
        raise TypeError(f"cannot save {type(model).__name__}: its parameters must be JSON values "
                        f"(numbers, strings, None); {exc}") from None
    if isinstance(file, (str, os.PathLike)):
        # np.savez would append ".npz" to a name without it; load reads the name as given.
        with open(file, "wb") as f:
            np.savez(f, meta=np.array(text), **arrays)
    else:
        np.savez(file, meta=np.array(text), **arrays)


def load(file, like=None):
    """Read a model written by :func:`save`, checking it on the way.

    Parameters
    ----------
    file : str, os.PathLike or binary file object
        A path is used exactly as given: no suffix is added (as :func:`save` writes it).
    like : array or None
        The loaded model's arrays go to the namespace and device of ``like`` (e.g.
        ``cupy.empty(0)`` to load onto the GPU); None: NumPy.

    Returns
    -------
    model : gpath estimator
        Equal to the saved one (an IncrementalSVC with the same α, b, sets, ids, boxes and
        parameters for every pair of classes, ready to update; the others with the same fitted
        attributes).

    Raises
    ------
    ValueError
        If the file is not a valid gpath model file, saying why: not an ``.npz`` archive
        (empty, truncated, a ``.npy`` array, random bytes), an entry holding pickled
        objects (never read: the format has no pickle), ``meta`` missing or not JSON, an
        unknown format or version, or a state that does not hold together: arrays not
        finite or of the wrong shapes, index sets inconsistent, α outside its box [0, C_i], or
        (an IncrementalSVC) the KKT conditions of a pair recomputed from scratch from X, y, α and b
        violated by more than ``tol · (1 + max_i Σ_j |Q_ij| α_j)`` (``tol``: the model's),
        or the saved margins y f further than that from the recomputed ones (an SVCPath: at
        both ends of its path), or an attribute the estimator does not have.
    FileNotFoundError, PermissionError, IsADirectoryError
        If the path cannot be opened.
    TypeError
        If ``like`` is not an array of a supported namespace, or is not NumPy for a model
        fitted on sparse rows (sparse rows live on the host).
    """
    if like is not None and not is_array_api(like):
        raise TypeError(f"like must be an array (its namespace and device take the loaded model), or None; "
                        f"got {type(like).__name__}")
    get_namespace_and_device(like)  # a bad `like` is the caller's error, not the file's
    where = repr(os.fspath(file)) if isinstance(file, (str, os.PathLike)) else "the file object"
    try:
        meta, arrays = _read(file)
        if meta.get("format") == FITTED_FORMAT:
            name = meta.get("estimator")
        elif meta.get("format") == FORMAT:
            name = "IncrementalSVC"
        else:
            raise ModelFileError(f"format {meta.get('format')!r}, expected {FORMAT!r} or {FITTED_FORMAT!r}")
        cls = _ESTIMATORS.get(name)
        if cls is None:
            raise ModelFileError(f"unknown estimator {name!r}")
        try:
            return cls._from_saved(meta, arrays, like)
        except (ModelFileError, _LikeError):
            raise
        except (KeyError, TypeError, ValueError, IndexError, AttributeError, ArithmeticError,
                np.linalg.LinAlgError, RuntimeError) as exc:
            # Whatever a damaged file makes the readers trip over (PathError is a RuntimeError).
            raise ModelFileError(f"its content does not describe a valid {name} ({type(exc).__name__}: {exc})") from None
    except ModelFileError as exc:
        raise ValueError(f"{where} is not a valid gpath model file: {exc}") from None


def _read(file) -> tuple[dict, dict]:
    """``(meta, arrays)`` of an ``.npz`` model file: every entry read as a plain array.

    Raises
    ------
    ModelFileError
        For anything but a complete ``.npz`` archive of plain arrays with a JSON ``meta``.
    """
    try:
        data = np.load(file, allow_pickle=False)
    except (FileNotFoundError, PermissionError, IsADirectoryError):
        raise
    except EOFError:
        raise ModelFileError("the file is empty") from None
    except ValueError:
        # np.load took it for a pickle (its message advises allow_pickle: never, here).
        raise ModelFileError("not an .npz archive (neither a zip archive nor a NumPy array; "
                             "gpath files never hold pickled data)") from None
    except (zipfile.BadZipFile, OSError) as exc:
        raise ModelFileError(f"not a complete .npz archive, truncated or damaged ({exc})") from None
    if not isinstance(data, np.lib.npyio.NpzFile):
        raise ModelFileError(f"a single .npy array (shape {getattr(data, 'shape', '?')}), not an .npz archive")
    with data:
        arrays = {}
        for key in data.files:
            try:
                arrays[key] = data[key]
            except ValueError as exc:
                if "pickle" in str(exc) or "Object arrays" in str(exc):
                    raise ModelFileError(f"entry {key!r} holds pickled Python objects, which gpath never "
                                         "writes and never loads") from None
                raise ModelFileError(f"entry {key!r} is not a readable array ({exc})") from None
            except (zipfile.BadZipFile, EOFError, OSError, zlib.error) as exc:
                raise ModelFileError(f"entry {key!r} is truncated or damaged ({exc})") from None
    if "meta" not in arrays:
        raise ModelFileError(f"no 'meta' entry (entries: {sorted(arrays)[:5]})")
    raw = arrays.pop("meta")
    if raw.dtype.kind != "U" or raw.ndim != 0:
        raise ModelFileError(f"'meta' must be a JSON string; got dtype {raw.dtype}, shape {raw.shape}")
    try:
        meta = json.loads(str(raw))
    except json.JSONDecodeError as exc:
        raise ModelFileError(f"'meta' is not valid JSON ({exc})") from None
    if not isinstance(meta, dict):
        raise ModelFileError(f"'meta' must be a JSON object; got {type(meta).__name__}")
    return meta, arrays
