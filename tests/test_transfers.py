"""Per breakpoint only O(|M|) numbers may cross from the device to the host (DESIGN.md).

Every device-to-host copy in gpath goes through ``gpath._array_api.to_host``; the path
modules are run with a counting wrapper around it, on array_api_strict's non-default device
(which refuses implicit conversions, so nothing can slip past the wrapper)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import make_backend
from helpers import dataset

import gpath._array_api as aa
import gpath._kinkpath as kinkpath
import gpath._path as path_module
import gpath.robust as robust_module
from gpath import IncrementalSVC, RobustSVC


@pytest.fixture
def transfers(monkeypatch):
    sizes: list[int] = []

    def counting(x):
        out = aa.to_host(x)
        sizes.append(int(np.size(out)))
        return out

    for module in (path_module, kinkpath, robust_module):
        monkeypatch.setattr(module, "to_host", counting)
    return sizes


def test_update_moves_only_margin_sized_vectors(transfers):
    strict = make_backend("array_api_strict")
    X, y = dataset("bananas")
    n, m = 600, 40
    model = IncrementalSVC(C=100.0, gamma=1.0).fit(strict.asarray(X[:n]), strict.asarray(y[:n]))
    transfers.clear()
    model.update(X_add=strict.asarray(X[n : n + m]), y_add=strict.asarray(y[n : n + m]),
                 remove=model.sample_ids_[:m])
    stats = model.last_update_
    assert stats.n_breakpoints > 20
    big = [s for s in transfers if s > 2 * stats.margin_size + m + 10]
    assert big == [], f"n-sized device-to-host copies during an update: {big}"
    assert len(transfers) <= 3 * stats.n_breakpoints + 10


def test_outlier_path_breakpoints_move_only_active_sized_vectors(transfers):
    strict = make_backend("array_api_strict")
    X, y = dataset("breast_cancer")
    n = 250
    model = RobustSVC(C=1.0, gamma=1 / 30, path="theta").fit(strict.asarray(X[:n]), strict.asarray(1 - y[:n] * (np.arange(n) % 7 > 0)))
    # Path-point records copy the margins (n) once per recorded point, by design; the
    # breakpoints of the D-steps' μ-paths are not recorded and must copy only O(|E|).
    n_big = sum(s >= n for s in transfers)
    assert model.path_.n_breakpoints > len(model.path_.params) + 20
    assert n_big <= len(model.path_.params) + 5
