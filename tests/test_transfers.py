"""Per breakpoint only O(|M|) numbers may cross from the device to the host (DESIGN.md).

Every device-to-host copy in gpath goes through ``gpath._array_api.to_host`` (``scalars``
uses it too); the path modules are run with a counting wrapper around it, on array_api_strict's
non-default device. An implicit read of a device scalar (``float(x)``, ``int(x)``,
``bool(x)``, an index) would bypass the wrapper, so array_api_strict's conversions are counted
as well and must not happen at all inside a path."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from conftest import make_backend
from helpers import dataset

from gpath import IncrementalSVC, RobustSVC, SimpleSVC

_MODULES = ("_array_api", "_active", "_engine", "_kinkpath", "_outlier", "_path", "_simplesvm", "_smo", "cache",
            "incremental", "robust")


@pytest.fixture
def transfers(monkeypatch):
    """``sizes``: the size of every counted device-to-host copy; ``implicit``: every implicit
    conversion of an array_api_strict array to a Python scalar."""
    import array_api_strict

    import gpath._array_api as aa

    sizes: list[int] = []
    implicit: list[str] = []
    original = aa.to_host

    def counting(x):
        out = original(x)
        sizes.append(int(np.size(out)))
        return out

    for name in _MODULES:
        module = importlib.import_module(f"gpath.{name}")
        if hasattr(module, "to_host"):
            monkeypatch.setattr(module, "to_host", counting)
    array_type = type(array_api_strict.asarray(0.0))
    for dunder in ("__float__", "__int__", "__bool__", "__index__", "__complex__"):
        conversion = getattr(array_type, dunder)

        def watched(self, _conversion=conversion, _name=dunder):
            implicit.append(_name)
            return _conversion(self)

        monkeypatch.setattr(array_type, dunder, watched)
    return sizes, implicit


def test_update_moves_only_margin_sized_vectors(transfers):
    sizes, implicit = transfers
    strict = make_backend("array_api_strict")
    X, y = dataset("bananas")
    n, m = 600, 40
    model = IncrementalSVC(C=100.0, gamma=1.0).fit(strict.asarray(X[:n]), strict.asarray(y[:n]))
    sizes.clear()
    implicit.clear()
    model.update(X_add=strict.asarray(X[n : n + m]), y_add=strict.asarray(y[n : n + m]),
                 remove=model.sample_ids_[:m])
    stats = model.last_update_
    assert stats.n_breakpoints > 20
    assert implicit == [], f"implicit device-to-host reads during an update: {implicit[:5]}"
    big = [s for s in sizes if s > 2 * stats.margin_size + m + 10]
    assert big == [], f"n-sized device-to-host copies during an update: {big}"
    # Per breakpoint: the rhs (|M|), the ratio test's 3 numbers, and a new factor row on entry.
    assert len(sizes) <= 3 * stats.n_breakpoints + 20


def test_the_counting_sees_an_implicit_read(transfers):
    # The fixture is a real check: an implicit conversion of a device scalar is caught.
    _, implicit = transfers
    strict = make_backend("array_api_strict")
    x = strict.asarray(np.arange(3.0))
    float(x[1])
    assert implicit == ["__float__"]


def test_simplesvm_reads_only_small_vectors(transfers):
    sizes, implicit = transfers
    strict = make_backend("array_api_strict")
    X, y = dataset("breast_cancer")
    model = SimpleSVC(C=10.0, gamma=0.05, random_state=0).fit(strict.asarray(X[:300]), strict.asarray(y[:300]))
    assert implicit == []
    stats = model.fit_stats_
    big = [s for s in sizes if s >= 300]
    # SMO's start copies its float32 matrix (one block of 300 × 300 here), then the labels at
    # the start and α's results: nothing n-sized per iteration.
    assert stats.start == "smo" and 300 * 300 in big
    assert len(big) <= 3
    # A few small copies per iteration, per point entering Swork and per bound step.
    assert len(sizes) <= 6 * (stats.n_iter + stats.n_bound_steps + stats.working_set_size) + 40


def test_outlier_path_breakpoints_move_only_active_sized_vectors(transfers):
    sizes, implicit = transfers
    strict = make_backend("array_api_strict")
    X, y = dataset("breast_cancer")
    n = 250
    model = RobustSVC(C=1.0, gamma=1 / 30, path="theta").fit(strict.asarray(X[:n]),
                                                              strict.asarray(1 - y[:n] * (np.arange(n) % 7 > 0)))
    assert implicit == []
    # Path-point records copy the margins (n) once per recorded point, by design, and fit's
    # check of every point copies two blocks of n × n_points (z and its scale); the breakpoints
    # of the D-steps' μ-paths are not recorded and must copy only O(|E|).
    n_big = sum(s >= n for s in sizes)
    assert model.path_.n_breakpoints > len(model.path_.params) + 20
    assert n_big <= len(model.path_.params) + 5 + 2
