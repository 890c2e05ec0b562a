"""The one place where arrays change namespace or device.

Algorithm modules take their namespace and device from the user's arrays through
:func:`get_namespace_and_device`, move the few small vectors a path step needs with
:func:`to_host` / :func:`to_device`, and never call NumPy on device data themselves.
"""

from __future__ import annotations

import array_api_compat
import numpy as np
from array_api_compat import array_namespace, is_cupy_array

__all__ = [
    "get_namespace_and_device",
    "is_array_api",
    "is_numpy",
    "namespace_by_name",
    "scalars",
    "to_device",
    "to_host",
    "to_host_into",
]


def is_array_api(x) -> bool:
    """True for an array of a namespace that array-api-compat recognizes."""
    return array_api_compat.is_array_api_obj(x)


def get_namespace_and_device(*arrays):
    """Return ``(xp, device)`` of the given arrays.

    Parameters
    ----------
    *arrays : arrays or None
        Arrays of one array-API namespace on one device; ``None`` entries are skipped.
        Anything that is not an array-API array (a list, a pandas frame) counts as NumPy.

    Returns
    -------
    xp : module
        The array-API-compatible namespace (array-api-compat's wrapper for NumPy and CuPy).
    device : object
        The device of the first array.

    Raises
    ------
    TypeError
        If the arrays belong to different namespaces.
    """
    if all(type(a) is np.ndarray or a is None for a in arrays) and any(a is not None for a in arrays):
        return _NUMPY_NAMESPACE, "cpu"  # the common case, without array-api-compat's inspection
    present = [a for a in arrays if a is not None]
    arrs = [a for a in present if is_array_api(a)]
    if not arrs:
        return array_namespace(np.empty(0)), "cpu"
    if len(arrs) < len(present):
        # Mixed array-API arrays and lists: everything must be NumPy then.
        arrs = arrs + [np.empty(0)]
    try:
        xp = array_namespace(*arrs)
    except TypeError as exc:
        raise TypeError(f"all arrays must come from one array namespace; got {exc}") from None
    return xp, array_api_compat.device(arrs[0])


def to_host(x) -> np.ndarray:
    """Copy an array of any namespace/device to a NumPy array on the host."""
    if isinstance(x, np.ndarray):
        return x
    if is_cupy_array(x):
        return x.get()
    if is_array_api(x):
        return np.from_dlpack(x)
    return np.asarray(x)


def to_host_into(x, out: np.ndarray) -> None:
    """Copy an array of any namespace/device into the host array ``out`` of its shape and
    dtype (C order): CuPy writes straight into it, without the fresh host array of
    :func:`to_host` and a second copy."""
    if is_cupy_array(x) and out.flags.c_contiguous:
        x.get(out=out)
    else:
        out[...] = to_host(x)


def scalars(xp, *values) -> list[float]:
    """Device scalars (0-d or one-element arrays) as host floats, in one small copy.

    Every read of a device scalar goes through here or :func:`to_host` (never ``float(x)``
    on a device array), so that a test can count the device-to-host copies of a path.
    """
    if xp.__name__ in _NUMPY_NAMES:  # host already: no copy to count (and ~10 µs less a call)
        return [float(v) for v in values]
    parts = [xp.reshape(xp.astype(v, xp.float64), (1,)) for v in values]
    return [float(v) for v in to_host(xp.concat(parts))]


def to_device(a, xp, device, dtype=None):
    """Copy host data ``a`` (NumPy array, scalar or sequence) into namespace ``xp`` on ``device``
    (a NumPy array going to NumPy is returned as it is, or cast)."""
    if isinstance(a, np.ndarray) and xp.__name__ in _NUMPY_NAMES:
        return a if dtype is None or a.dtype == dtype else a.astype(dtype)
    if dtype is None and isinstance(a, np.ndarray) and a.dtype.kind == "f":
        dtype = getattr(xp, str(a.dtype))
    return xp.asarray(a, dtype=dtype, device=device)


_NUMPY_NAMES = ("numpy", "array_api_compat.numpy")
_NUMPY_NAMESPACE = array_namespace(np.empty(0))


def is_numpy(xp) -> bool:
    """Whether ``xp`` is NumPy (plain or array-api-compat's wrapper)."""
    return xp.__name__ in _NUMPY_NAMES


def namespace_by_name(name: str):
    """The namespace module called ``name`` (how pickled models find theirs again)."""
    import importlib

    return importlib.import_module(name)
