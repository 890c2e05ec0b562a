"""Backends every algorithm test runs on: NumPy, array_api_strict on a non-default device
(so that device mistakes fail on a CPU-only machine), and CuPy where a GPU exists."""

from __future__ import annotations

import numpy as np
import pytest

from gpath._array_api import to_host


class Backend:
    def __init__(self, name, xp, device):
        self.name, self.xp, self.device = name, xp, device

    def asarray(self, a):
        """Host NumPy data -> this backend's array (labels and features alike)."""
        a = np.asarray(a)
        if self.name == "numpy":
            return a
        return self.xp.asarray(a, device=self.device)

    def check(self, arr, shape=None):
        """Assert ``arr`` is this backend's array, on its device, float64, of ``shape``."""
        import array_api_compat

        if self.name == "numpy":
            assert isinstance(arr, np.ndarray), type(arr)
        else:
            assert array_api_compat.array_namespace(arr).__name__.endswith(self.xp.__name__.split(".")[-1])
            assert str(array_api_compat.device(arr)) == str(self.device)
        assert arr.dtype == self.xp.float64
        if shape is not None:
            assert tuple(arr.shape) == tuple(shape)
        return to_host(arr)


def _backends():
    yield pytest.param("numpy", id="numpy")
    yield pytest.param("array_api_strict", id="array_api_strict")
    yield pytest.param("cupy", id="cupy", marks=pytest.mark.cupy)


def make_backend(name):
    if name == "numpy":
        return Backend("numpy", np, "cpu")
    if name == "array_api_strict":
        xp = pytest.importorskip("array_api_strict")
        return Backend(name, xp, xp.Device("device1"))
    cp = pytest.importorskip("cupy")
    try:
        if cp.cuda.runtime.getDeviceCount() == 0:
            pytest.skip("no CUDA device")
    except Exception as exc:  # noqa: BLE001 (no driver at all: any CUDA error means no GPU)
        pytest.skip(f"no CUDA device ({type(exc).__name__})")
    import array_api_compat.cupy as xp

    return Backend("cupy", xp, cp.cuda.Device(0))


@pytest.fixture(params=list(_backends()))
def backend(request):
    return make_backend(request.param)
