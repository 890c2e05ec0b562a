"""Saving and loading models in a versioned, NumPy-only format (no pickle).

A model file is a NumPy ``.npz`` archive of plain arrays and one JSON string. Loading uses
``numpy.load(..., allow_pickle=False)``, so a file from an untrusted source cannot run code.
The whole incremental state is stored — training rows, labels, α, b, index sets, the margin
set in factor order and the margins y f — so a loaded model goes on updating exactly where the
saved one stopped; the factor of 𝐌 and the kernel columns of the margin set are rebuilt on
load (O(|M|³) and n·|M| kernel evaluations).

Format ``gpath.IncrementalSVC`` version 1 (keys of the archive):

============= ================== ===========================================================
key           dtype, shape       meaning
============= ================== ===========================================================
meta          str, ()            JSON: format, version, estimator parameters, kernel, b,
                                 next id, last update record
X             float64, (n, d)    training rows, in training order
y             float64, (n,)      labels as ±1 (+1 is ``classes[1]``)
alpha         float64, (n,)      dual coefficients
yf            float64, (n,)      maintained margins y_i f(x_i) (ridge included)
where         int8, (n,)         index set of each point: 0 = O, 1 = M, 2 = I
margin        int64, (|M|,)      rows of the margin set, in factor order
ids           int64, (n,)        sample ids
classes       any, (2,)          the two labels (numbers or strings)
feature_names str, (d,)          optional: ``feature_names_in_``, the column names seen
                                 in fit
============= ================== ===========================================================
"""

from __future__ import annotations

import dataclasses
import json

import numpy as np

from ._array_api import get_namespace_and_device, is_array_api, to_device, to_host
from .kernels import Kernel

__all__ = ["FORMAT", "VERSION", "SaveMixin", "load", "record", "save"]

FORMAT = "gpath.IncrementalSVC"
VERSION = 1
# The other estimators (SimpleSVC, RobustSVC, RobustSVR, CCCPRobustSVC, CCCPRobustSVR) are
# stored as their fitted attributes: arrays as entries ``attr:<name>``, everything else in
# the JSON under "attributes" (kernels and result records by their fields).
FITTED_FORMAT = "gpath.fitted"

# Every public estimator (a SaveMixin subclass) and result record, by class name: how a file
# names what it holds, without this module importing the estimators.
_ESTIMATORS: dict[str, type] = {}
_RECORDS: dict[str, type] = {}


def record(cls):
    """Class decorator: a frozen result dataclass that fitted attributes may hold (saved by
    its fields)."""
    _RECORDS[cls.__name__] = cls
    return cls


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
        cls = _RECORDS.get(spec["record"])
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
    """``save(file)`` for every gpath estimator; public subclasses register themselves for
    :func:`load`.

    An estimator with its own format overrides ``_to_saved(self) -> (meta, arrays)`` and the
    class method ``_from_saved(meta, arrays, like)``; the default stores the fitted attributes.
    """

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if not cls.__name__.startswith("_") and cls.__module__.startswith("gpath."):
            _ESTIMATORS[cls.__name__] = cls

    def save(self, file) -> None:
        """Write the fitted model to ``file`` (a path or binary file) in gpath's versioned,
        NumPy-only format; :func:`gpath.load` reads it back, onto any device.

        Raises
        ------
        TypeError
            If the model is not fitted, or its labels are neither numbers nor strings.
        """
        save(self, file)

    def _to_saved(self):
        """``(meta, arrays)``: the fitted attributes (see the module docstring)."""
        params = self.get_params()
        if not hasattr(self, "n_features_in_"):
            raise TypeError(f"model must be a fitted gpath estimator; {type(self).__name__} is not fitted")
        arrays: dict = {}
        attributes = {name: _encode(value, name, arrays) for name, value in vars(self).items()
                      if name not in params}
        meta = {"format": FITTED_FORMAT, "version": VERSION, "estimator": type(self).__name__,
                "params": params, "attributes": attributes}
        return meta, arrays

    @classmethod
    def _from_saved(cls, meta, data, like):
        if meta.get("version") != VERSION:
            raise ValueError(f"unknown {FITTED_FORMAT} format version {meta.get('version')!r}; this gpath reads {VERSION}")
        xp, device = get_namespace_and_device(like)
        model = cls(**meta["params"])
        for name, spec in meta["attributes"].items():
            value = _decode(spec, data, xp, device)
            if name == "feature_names_in_":  # saved as str, scikit-learn keeps object
                value = np.asarray(value, dtype=object)
            setattr(model, name, value)
        return model


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
    if _ESTIMATORS.get(type(model).__name__) is not type(model):
        raise TypeError(f"model must be a fitted gpath estimator; got {type(model).__name__}")
    meta, arrays = model._to_saved()
    np.savez(file, meta=np.array(json.dumps(meta)), **arrays)


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
    with np.load(file, allow_pickle=False) as data:
        try:
            meta = json.loads(str(data["meta"]))
        except KeyError as exc:
            raise ValueError(f"not a gpath model file: missing {exc}") from None
        arrays = dict(data)
    if meta.get("format") == FITTED_FORMAT:
        name = meta.get("estimator")
    elif meta.get("format") == FORMAT:
        name = "IncrementalSVC"
    else:
        raise ValueError(f"not a gpath model file: format {meta.get('format')!r}, expected {FORMAT!r}")
    cls = _ESTIMATORS.get(name)
    if cls is None:
        raise ValueError(f"not a gpath model file: unknown estimator {name!r}")
    return cls._from_saved(meta, arrays, like)
