"""Saving and loading models in a versioned, NumPy-only format (no pickle).

A model file is a NumPy ``.npz`` archive of plain arrays and one JSON string. Loading uses
``numpy.load(..., allow_pickle=False)``, so a file from an untrusted source cannot run code.
The whole incremental state is stored — training rows, labels, α, b, index sets, the margin
set in factor order and the margins y f — so a loaded model goes on updating exactly where the
saved one stopped; the factor of 𝐌 and the kernel columns of the margin set are rebuilt on
load (O(|M|³) and n·|M| kernel evaluations).

Format ``gpath.IncrementalSVC`` version 1 (keys of the archive):

========== ================== ==============================================================
key        dtype, shape       meaning
========== ================== ==============================================================
meta       str, ()            JSON: format, version, estimator parameters, kernel, b,
                              next id, last update record
X          float64, (n, d)    training rows, in training order
y          float64, (n,)      labels as ±1 (+1 is ``classes[1]``)
alpha      float64, (n,)      dual coefficients
yf         float64, (n,)      maintained margins y_i f(x_i) (ridge included)
where      int8, (n,)         index set of each point: 0 = O, 1 = M, 2 = I
margin     int64, (|M|,)      rows of the margin set, in factor order
ids        int64, (n,)        sample ids
classes    any, (2,)          the two labels (numbers or strings)
========== ================== ==============================================================
"""

from __future__ import annotations

import dataclasses
import json

import numpy as np

from ._array_api import get_namespace_and_device, is_array_api, to_device, to_host
from ._path import I, M, O, PathStats, SVCState
from .cache import max_columns
from .kernels import Kernel

__all__ = ["FORMAT", "VERSION", "load", "save"]

FORMAT = "gpath.IncrementalSVC"
VERSION = 1
# The other estimators (SimpleSVC, RobustSVC, RobustSVR, CCCPRobustSVC, CCCPRobustSVR) are
# stored as their fitted attributes: arrays as entries ``attr:<name>``, everything else in
# the JSON under "attributes" (kernels and result records by their fields).
FITTED_FORMAT = "gpath.fitted"


def _estimators():
    from . import robust, simple

    return {c.__name__: c for c in (simple.SimpleSVC, robust.RobustSVC, robust.RobustSVR,
                                    robust.CCCPRobustSVC, robust.CCCPRobustSVR)}


def _records():
    from . import robust, simple

    return {"OutlierPath": robust.OutlierPath, "SimpleStats": simple.SimpleStats, "PathStats": PathStats}


# Attributes that live in the model's namespace and on its device (the rest is host data).
DEVICE_ATTRIBUTES = {"support_vectors_", "dual_coef_", "intercept_", "_X"}


def _encode(value, name, arrays):
    """A JSON-able description of ``value``; arrays go to ``arrays`` under ``name``."""
    if name in DEVICE_ATTRIBUTES:
        arrays[f"attr:{name}"] = to_host(value)
        return {"device_array": name}
    if isinstance(value, Kernel):
        return {"kernel": dataclasses.asdict(value)}
    if dataclasses.is_dataclass(value):
        return {"record": type(value).__name__,
                "fields": {f.name: _encode(getattr(value, f.name), f"{name}.{f.name}", arrays)
                           for f in dataclasses.fields(value)}}
    if isinstance(value, np.ndarray):
        if value.dtype == object:
            value = value.astype(str)
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
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise TypeError(f"cannot save attribute {name!r} of type {type(value).__name__}")


def _decode(spec, data, xp, device):
    if isinstance(spec, list):
        return [_decode(v, data, xp, device) for v in spec]
    if not isinstance(spec, dict):
        return spec
    if "kernel" in spec:
        return Kernel(**spec["kernel"])
    if "record" in spec:
        cls = _records().get(spec["record"])
        if cls is None:
            raise ValueError(f"corrupt gpath model file: unknown record {spec['record']!r}")
        return cls(**{k: _decode(v, data, xp, device) for k, v in spec["fields"].items()})
    if "array" in spec:
        return data[f"attr:{spec['array']}"]
    if "device_array" in spec:
        return to_device(data[f"attr:{spec['device_array']}"], xp, device)
    if "tuple" in spec:
        return tuple(_decode(v, data, xp, device) for v in spec["tuple"])
    raise ValueError(f"corrupt gpath model file: cannot read {spec!r}")


class SaveMixin:
    """``save(file)`` for every gpath estimator."""

    def save(self, file) -> None:
        """Write the fitted model to ``file`` (a path or binary file) in gpath's versioned,
        NumPy-only format; :func:`gpath.load` reads it back, onto any device.

        Raises
        ------
        TypeError
            If the model is not fitted, or its labels are neither numbers nor strings.
        """
        save(self, file)


def save(model, file) -> None:
    """Write a fitted gpath estimator to ``file`` (a path or a binary file).

    Parameters
    ----------
    model : IncrementalSVC, SimpleSVC, RobustSVC, RobustSVR, CCCPRobustSVC or CCCPRobustSVR
        Fitted; its arrays may live on any device (they are copied to the host).
    file : str, os.PathLike or binary file object

    Raises
    ------
    TypeError
        If ``model`` is not a fitted gpath estimator, or its labels are neither numbers nor
        strings.
    """
    from .incremental import IncrementalSVC

    if type(model).__name__ in _estimators() and type(model) is _estimators()[type(model).__name__]:
        return _save_fitted(model, file)
    if not isinstance(model, IncrementalSVC) or not hasattr(model, "state_"):
        raise TypeError(f"model must be a fitted gpath estimator; got {type(model).__name__}")
    s = model.state_
    classes = np.asarray(model.classes_)
    if classes.dtype == object:
        classes = classes.astype(str)
    if classes.dtype.kind not in "biufU":
        raise TypeError(f"classes_ must be numbers or strings to be saved; got dtype {classes.dtype}")
    k = model.kernel_
    meta = {
        "format": FORMAT,
        "version": VERSION,
        "params": model.get_params(),
        "kernel": {"kind": k.kind, "gamma": k.gamma, "degree": k.degree, "coef0": k.coef0, "offset": k.offset},
        "C": s.C,
        "ridge": s.ridge,
        "b": s.b,
        "next_id": model._next_id,
        "last_update": model.last_update_.__dict__,
    }
    np.savez(
        file,
        meta=np.array(json.dumps(meta)),
        X=to_host(s.X), y=s.y_host, alpha=s.alpha, yf=to_host(s.yf), where=s.where,
        margin=np.array(s.margin, dtype=np.int64), ids=model.sample_ids_, classes=classes,
    )


def load(file, like=None):
    """Read a model written by :func:`save`.

    Parameters
    ----------
    file : str, os.PathLike or binary file object
    like : array or None
        The loaded model's arrays go to the namespace and device of ``like`` (e.g.
        ``cupy.empty(0)`` to load onto the GPU); None: NumPy.

    Returns
    -------
    model : gpath estimator
        Equal to the saved one (an IncrementalSVC with the same α, b, sets, ids and
        parameters, ready to update; the others with the same fitted attributes).

    Raises
    ------
    ValueError
        If the file is not a gpath model file, or of an unknown format version, or its
        arrays do not fit together.
    """
    from .incremental import IncrementalSVC

    with np.load(file, allow_pickle=False) as data:
        try:
            meta = json.loads(str(data["meta"]))
            if meta.get("format") == FITTED_FORMAT:
                file = dict(data)
            else:
                arrays = {key: data[key] for key in ("X", "y", "alpha", "yf", "where", "margin", "ids", "classes")}
        except KeyError as exc:
            raise ValueError(f"not a gpath model file: missing {exc}") from None
    if meta.get("format") == FITTED_FORMAT:
        return _load_fitted(file, meta, like)
    if meta.get("format") != FORMAT:
        raise ValueError(f"not a gpath model file: format {meta.get('format')!r}, expected {FORMAT!r}")
    if meta.get("version") != VERSION:
        raise ValueError(f"unknown {FORMAT} format version {meta.get('version')!r}; this gpath reads {VERSION}")
    X, y, alpha = arrays["X"], arrays["y"], arrays["alpha"]
    n = X.shape[0]
    if not (y.shape == alpha.shape == arrays["yf"].shape == arrays["where"].shape == arrays["ids"].shape == (n,)):
        raise ValueError("corrupt gpath model file: per-point arrays of different lengths")
    xp, device = get_namespace_and_device(like)
    kernel = Kernel(**meta["kernel"])
    Xd = to_device(X, xp, device)
    state = SVCState.at_zero(xp, device, Xd, to_device(y, xp, device), kernel, meta["C"], meta["ridge"])
    state.alpha, state.b, state.where = alpha.copy(), float(meta["b"]), arrays["where"].astype(np.int8)
    state.yf = to_device(arrays["yf"], xp, device)
    side = np.where(state.where == O, 1.0, np.where(state.where == I, -1.0, 0.0))
    state.side = to_device(side, xp, device)
    for k in arrays["margin"].tolist():
        if state.where[k] != M:
            raise ValueError(f"corrupt gpath model file: margin row {k} is not in the margin set")
        _enter_margin(state, int(k))
    model = IncrementalSVC(**meta["params"])
    state.cache = state.cache.with_spare_rows()  # room for the next updates, as after fit
    state.cache.max_columns = max_columns(model.cache_size, n)
    model._commit(model._attributes(state, arrays["classes"], kernel, arrays["ids"].astype(np.int64),
                                    meta["next_id"], PathStats(**meta["last_update"])))
    return model


def _enter_margin(state: SVCState, k: int) -> None:
    """Add row k to the margin set's factor and column cache (in the saved order)."""
    slot = state.cache.store(k, state.q_column(k))
    q = to_host(state.cache.entries(slot, np.append(state.factor.basis, k)))
    state.factor.insert(k, state.y_host[k], q[:-1], q[-1])
    state.margin.append(k)


def _save_fitted(model, file) -> None:
    params = model.get_params()
    if not hasattr(model, "n_features_in_"):
        raise TypeError(f"model must be a fitted gpath estimator; {type(model).__name__} is not fitted")
    arrays: dict = {}
    attributes = {name: _encode(value, name, arrays) for name, value in vars(model).items()
                  if name not in params}
    meta = {"format": FITTED_FORMAT, "version": VERSION, "estimator": type(model).__name__,
            "params": params, "attributes": attributes}
    np.savez(file, meta=np.array(json.dumps(meta)), **arrays)


def _load_fitted(data, meta, like):
    if meta.get("version") != VERSION:
        raise ValueError(f"unknown {FITTED_FORMAT} format version {meta.get('version')!r}; this gpath reads {VERSION}")
    cls = _estimators().get(meta.get("estimator"))
    if cls is None:
        raise ValueError(f"not a gpath model file: unknown estimator {meta.get('estimator')!r}")
    xp, device = get_namespace_and_device(like)
    model = cls(**meta["params"])
    for name, spec in meta["attributes"].items():
        setattr(model, name, _decode(spec, data, xp, device))
    return model
