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

import json

import numpy as np

from ._array_api import get_namespace_and_device, to_device, to_host
from ._path import I, M, O, PathStats, SVCState
from .kernels import Kernel

__all__ = ["FORMAT", "VERSION", "load", "save"]

FORMAT = "gpath.IncrementalSVC"
VERSION = 1


def save(model, file) -> None:
    """Write a fitted :class:`gpath.IncrementalSVC` to ``file`` (a path or a binary file).

    Parameters
    ----------
    model : IncrementalSVC
        Fitted; its arrays may live on any device (they are copied to the host).
    file : str, os.PathLike or binary file object

    Raises
    ------
    TypeError
        If ``model`` is not a fitted IncrementalSVC, or its labels are neither numbers nor
        strings.
    """
    from .incremental import IncrementalSVC

    if not isinstance(model, IncrementalSVC) or not hasattr(model, "state_"):
        raise TypeError(f"model must be a fitted gpath.IncrementalSVC; got {type(model).__name__}")
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
    model : IncrementalSVC
        Equal to the saved one (same α, b, sets, ids and parameters) and ready to update.

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
            arrays = {key: data[key] for key in ("X", "y", "alpha", "yf", "where", "margin", "ids", "classes")}
        except KeyError as exc:
            raise ValueError(f"not a gpath model file: missing {exc}") from None
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
    model._commit(state, arrays["classes"], kernel, arrays["ids"].astype(np.int64), meta["next_id"],
                  PathStats(**meta["last_update"]))
    return model


def _enter_margin(state: SVCState, k: int) -> None:
    """Add row k to the margin set's factor and column cache (in the saved order)."""
    xp = state.xp
    col = state.q_column(k)
    state.cache.store(k, col)
    q = to_host(xp.take(col, to_device(np.array(state.margin + [k]), xp, state.device)))
    state.factor.insert(state.y_host[k], q[:-1], q[-1])
    state.margin.append(k)
