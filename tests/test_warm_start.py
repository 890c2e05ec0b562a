"""SimpleSVM warm-started from a given point, and the update that refits by it when that is
cheaper than the path (issue 17, item 2)."""

from __future__ import annotations

import re

import numpy as np
import pytest
from helpers import assert_exact, dataset

from gpath import IncrementalSVC, incremental
from gpath._array_api import to_host
from gpath._simplesvm import _balanced, warm_simple_svm
from gpath.kernels import Kernel
from gpath.reference import exact_svc


@pytest.mark.parametrize("C", [1e-3, 1.0, 1e4])
@pytest.mark.parametrize("start", ["random", "at C", "zero"])
def test_warm_start_from_any_point_reaches_the_exact_solution(backend, C, start):
    X, y = dataset("breast_cancer")
    X, y = X[:250], np.where(y[:250] == 1, 1.0, -1.0)
    rng = np.random.default_rng(0)
    alpha0 = {"random": rng.uniform(-0.5, 1.5, size=y.size) * C, "at C": np.full(y.size, C),
              "zero": np.zeros(y.size)}[start]
    kernel = Kernel.from_params("rbf", 0.05, 3, 0.0, X)
    state, stats = warm_simple_svm(backend.asarray(X), backend.asarray(y), kernel, C, 1e-6, alpha0)
    backend.check(state.yf, (y.size,))
    ref = exact_svc(X, y, C, "rbf", 0.05, ridge=1e-6)
    assert ref.kkt <= 1e-9
    assert state.kkt_violation() <= 1e-9
    np.testing.assert_allclose(state.alpha, ref.alpha, rtol=0, atol=1e-7 * C)
    assert stats.init_pair == () and stats.converged


@pytest.mark.parametrize("n,C,gamma,min_sv", [(800, 10.0, 1.0, 0), (1500, 1e3, 5.0, 300)])
def test_warm_start_from_the_solution_takes_one_iteration_and_each_column_once(n, C, gamma, min_sv):
    # The free points enter in blocks; a block's columns once overwrote each other in the
    # cache and were computed again, one at a time (Adult 10,000, C = 10: 4,601 for 3,577).
    X, y = dataset("bananas")
    X, y = X[:n], np.where(y[:n] == 1, 1.0, -1.0)
    ref = exact_svc(X, y, C, "rbf", gamma, ridge=1e-6)
    kernel = Kernel.from_params("rbf", gamma, 3, 0.0, X)
    state, stats = warm_simple_svm(X, y, kernel, C, 1e-6, ref.alpha)
    assert stats.n_iter == 1 and state.kkt_violation() <= 1e-9
    assert np.count_nonzero(ref.alpha > 0) > min_sv
    assert stats.n_columns == np.count_nonzero(state.alpha > 0)


def test_warm_start_keeps_weights_and_inert_rows():
    X, y = dataset("breast_cancer")
    X, y = X[:200], np.where(y[:200] == 1, 1.0, -1.0)
    weights = np.random.default_rng(1).uniform(0.0, 2.0, size=y.size)
    weights[::7] = 0.0
    kernel = Kernel.from_params("rbf", 0.05, 3, 0.0, X)
    state, _ = warm_simple_svm(X, y, kernel, 5.0, 1e-6, np.full(y.size, 3.0), weights=weights)
    ref = exact_svc(X, y, 5.0, "rbf", 0.05, ridge=1e-6, sample_weight=weights)
    assert state.kkt_violation() <= 1e-9
    np.testing.assert_allclose(state.alpha, ref.alpha, rtol=0, atol=5e-7)
    assert np.all(state.alpha[::7] == 0.0)


def test_the_start_is_made_feasible_in_its_box():
    rng = np.random.default_rng(2)
    for _ in range(200):
        n = int(rng.integers(2, 30))
        y = rng.choice([-1.0, 1.0], size=n)
        y[:2] = [-1.0, 1.0]
        upper = rng.uniform(0.0, 3.0, size=n) * (rng.random(n) > 0.1)
        alpha = np.clip(rng.uniform(-1, 4, size=n), 0.0, upper)
        balanced = _balanced(alpha, y, upper)
        assert abs(y @ balanced) <= 1e-12 * (1 + upper.sum())
        assert np.all(balanced >= 0.0) and np.all(balanced <= upper)


def _pair(model, X, y, start, stop):
    return model.update(X_add=X[start:stop], y_add=y[start:stop], remove=model.sample_ids_[: stop - start])


@pytest.fixture
def small_refits(monkeypatch):
    """The refit rule on the few hundred rows of these tests (it starts at 2,000 rows)."""
    monkeypatch.setattr(incremental, "_REFIT_MIN_ROWS", 0)


@pytest.fixture(params=["warm", "smo"])
def refit_start(request, monkeypatch):
    """Both starts of a refit: the current α, or SMO's (a large margin set)."""
    monkeypatch.setattr(incremental, "_SMO_REFIT_SHARE", 0.0 if request.param == "smo" else np.inf)
    return request.param


@pytest.mark.parametrize("C", [0.1, 10.0])
def test_a_large_update_refits_and_gives_the_path_s_model(backend, C, small_refits, refit_start):
    X, y = dataset("breast_cancer")
    auto = IncrementalSVC(C=C, gamma=0.05).fit(backend.asarray(X[:300]), y[:300])
    path = IncrementalSVC(C=C, gamma=0.05, method="multiple").fit(backend.asarray(X[:300]), y[:300])
    for model in (auto, path):
        model.update(X_add=backend.asarray(X[300:500]), y_add=y[300:500], remove=np.arange(200))
    assert auto.last_update_.method == "refit" and path.last_update_.method == "path"
    assert auto.last_update_.n_added == 200 and auto.last_update_.n_removed == 200
    rows = np.r_[200:500]
    assert_exact(auto, X[rows], y[rows])
    np.testing.assert_allclose(to_host(auto.decision_function(backend.asarray(X))),
                               to_host(path.decision_function(backend.asarray(X))), rtol=0, atol=1e-8 * (1 + C))
    np.testing.assert_array_equal(auto.sample_ids_, path.sample_ids_)
    # The refitted state goes on updating along the path, exactly.
    auto.update(X_add=backend.asarray(X[500:505]), y_add=y[500:505], remove=auto.sample_ids_[:5])
    assert auto.last_update_.method == "path"
    assert_exact(auto, X[np.r_[205:505]], y[np.r_[205:505]])


def test_a_small_update_follows_the_path():
    X, y = dataset("breast_cancer")
    model = IncrementalSVC(C=1.0, gamma=0.05).fit(X[:300], y[:300])
    model.update(X_add=X[300:310], y_add=y[300:310], remove=np.arange(10))
    assert model.last_update_.method == "path" and model.last_update_.n_breakpoints > 0


def test_multiclass_refit_pair_by_pair_equals_the_path(small_refits, refit_start):
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    keep = y < 4
    X, y = X[keep] / 16.0, y[keep]
    models = [IncrementalSVC(C=10.0, gamma=0.05, method=m, class_weight={2: 2.0}).fit(X[:300], y[:300])
              for m in ("auto", "multiple")]
    for model in models:
        model.update(X_add=X[300:450], y_add=y[300:450], remove=np.arange(150),
                     sample_weight_add=np.linspace(0.5, 1.5, 150))
    auto, path = models
    assert "refit" in auto.last_update_.method
    assert auto.check_kkt() <= 1e-9
    np.testing.assert_allclose(auto.decision_function(X), path.decision_function(X), rtol=0, atol=1e-7)
    np.testing.assert_array_equal(auto.predict(X), path.predict(X))


def test_the_refit_rule():
    class Pair:  # what the rule reads of a pair's state
        def __init__(self, n, margin):
            self.n, self.active = n, type("M", (), {"size": margin})()

    rule = incremental._refit_is_cheaper
    assert not rule(Pair(1000, 10), np.arange(900), 900)  # small pairs: always the path
    assert not rule(Pair(10_000, 20), np.arange(1000), 1000)  # 2,000 · 1.2 < 5,000
    assert rule(Pair(10_000, 20), np.arange(3000), 3000)
    assert rule(Pair(10_000, 500), np.arange(1000), 1000)  # a large margin set: 2,000 · 6 > 5,000
    assert not rule(Pair(10_000, 500), np.arange(10), 10)


def test_a_working_set_beyond_memory_is_a_memory_error_and_changes_nothing(monkeypatch):
    # The factor holds 16·|W|² bytes on the host: with too little memory left the fit stops
    # with a MemoryError that says what to do, before it allocates.
    from helpers import snapshot

    from gpath import SimpleSVC, linalg

    X, y = dataset("breast_cancer")
    X = np.vstack([X, X + 0.01])  # C = 1e4 with gamma = 0.5: most points are free support vectors
    y = np.r_[y, y]
    model = IncrementalSVC(C=1e4, gamma=0.5).fit(X[:100], y[:100])
    before = snapshot(model)
    assert linalg.available_memory() is None or linalg.available_memory() > 2**20
    monkeypatch.setattr(linalg, "available_memory", lambda: 16.0 * 300**2)  # room for 300 points
    for estimator in (model, SimpleSVC(C=1e4, gamma=0.5)):
        with pytest.raises(MemoryError, match=r"\|W\| = \d+ points; its factor on the host needs .* GiB for \d+ "
                                              r"points .* lower C, use a smaller gamma .* or fit a subsample") as error:
            estimator.fit(X, y)
        # The room asked for is what doubling from 16 reaches, no more (|W| ≤ room < 2 |W|).
        points, room = (int(v) for v in re.search(r"\|W\| = (\d+) .* for (\d+) points", str(error.value)).groups())
        assert points <= room < 2 * points and room == 16 * 2 ** int(np.ceil(np.log2(points / 16)))
    assert snapshot(model) == before
    monkeypatch.setattr(linalg, "available_memory", lambda: None)  # unknown: no check
    SimpleSVC(C=1e4, gamma=0.5).fit(X[:300], y[:300])
