"""gpath._threads: compiled passes split over the cores by Python threads."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_exact, dataset
from numba import njit
from threadpoolctl import threadpool_info, threadpool_limits

import gpath._engine
import gpath._mid_numba
import gpath._smo
from gpath import IncrementalSVC, IncrementalSVR, SimpleSVC, SVCPath, _threads
from gpath._engine import Engine, NumbaEngine
from gpath._smo import KernelRows
from gpath._threads import in_row_blocks
from gpath.kernels import CenteredRows, Kernel
from gpath.linalg import blas_in_row_blocks
from gpath.reference import exact_svr, kernel_matrix


@njit(nogil=True, cache=False)
def _mark(start, stop, out):
    for i in range(start, stop):
        out[i] += 1.0
    return stop - start


@pytest.mark.parametrize("cores", [1, 2, 3, 8])
@pytest.mark.parametrize("n", [0, 1, 63, 64, 129, 1000])
def test_every_row_is_done_once_and_the_results_come_in_row_order(monkeypatch, cores, n):
    monkeypatch.setattr(_threads, "n_threads", lambda: cores)
    out = np.zeros(n)
    counts = in_row_blocks(_mark, n, out)
    np.testing.assert_array_equal(out, np.ones(n))
    assert sum(counts) == n
    assert len(counts) == min(cores, max(n // 64, 1))  # ranges of at least min_rows = 64 rows


def test_min_rows_lets_short_arrays_of_long_rows_split(monkeypatch):
    monkeypatch.setattr(_threads, "n_threads", lambda: 2)
    out = np.zeros(16)
    assert len(in_row_blocks(_mark, 16, out, min_rows=4)) == 2
    np.testing.assert_array_equal(out, np.ones(16))


def _blas_thread_counts(start, stop, out):
    out[start:stop] = _blas_threads()


def _blas_threads() -> int:
    return max(lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas")


def test_blas_in_row_blocks_runs_each_share_with_one_blas_thread_and_restores_them(monkeypatch):
    # A BLAS library's own threads spin after a product and take the cores from the passes
    # that follow: each thread's product runs on its thread alone.
    monkeypatch.setattr(_threads, "n_threads", lambda: 3)
    out = np.zeros(300)
    with threadpool_limits(limits=2, user_api="blas"):
        blas_in_row_blocks(_blas_thread_counts, out.size, out, min_rows=64)
        np.testing.assert_array_equal(out, np.ones(out.size))
        assert _blas_threads() == 2


@pytest.mark.parametrize("kind", ["rbf", "linear", "poly"])
@pytest.mark.parametrize("features", [3, 40])
@pytest.mark.parametrize("cores", [1, 3])
def test_kernel_blocks_split_between_threads_are_the_kernel(monkeypatch, kind, features, cores):
    # The float64 product block of the exact trainer (each thread computing and finishing its
    # own range of points, the own-row ridge included) and the float32 rows of SMO's start
    # (each thread its own rows), against scikit-learn's kernels.
    monkeypatch.setattr(_threads, "n_threads", lambda: cores)
    monkeypatch.setattr(gpath._engine, "ENTRIES_PER_THREAD", 64)
    monkeypatch.setattr(gpath._smo, "ENTRIES_PER_THREAD", 64)
    rng = np.random.default_rng(3)
    X = rng.normal(size=(700, features))
    y = np.where(rng.random(700) < 0.5, -1.0, 1.0)
    kernel, ridge = Kernel(kind, 1.0 / features, 3, 0.5), 0.25
    cols = np.arange(0, 700, 7)
    reference = kernel_matrix(X, X[cols], kind, 1.0 / features, 3, 0.5)
    Q = y[:, None] * reference * y[cols][None, :]
    Q[cols, np.arange(cols.size)] += ridge
    block = NumbaEngine(np, "cpu").q_block(kernel, X, cols, y, ridge, rows=CenteredRows(X))
    np.testing.assert_allclose(block, Q, rtol=1e-12, atol=1e-12 * np.abs(Q).max())
    rows = KernelRows(X, kernel, ridge)
    slots = rows.rows(cols[::-1])
    K = reference.T[::-1].copy()
    K[np.arange(cols.size), cols[::-1]] += ridge
    np.testing.assert_allclose(rows.values[slots], K, rtol=1e-4, atol=1e-5 * np.abs(K).max())


@pytest.mark.parametrize("kind", ["rbf", "linear", "poly"])
@pytest.mark.parametrize(("features", "centred"), [(3, False), (40, False), (40, True)])
@pytest.mark.parametrize("cores", [1, 3])
def test_kernel_matvecs_summed_by_each_thread_are_the_generic_engines(
    monkeypatch, kind, features, centred, cores
):
    # Σ_j Q[:, j] c_j and Σ_j |Q[:, j]| c_j, each thread adding its points' share of every
    # block (blocks of 9 columns here, some of them all zero; few features: the sums over the
    # features by chunks of points), against the generic engine's blocks and products. The
    # kernel has an offset (K + 0.5, as the robust models' intercept).
    monkeypatch.setattr(_threads, "n_threads", lambda: cores)
    monkeypatch.setattr(gpath._engine, "ENTRIES_PER_THREAD", 64)
    n = 1300  # past one chunk of _feature_block's points (512) on one core
    monkeypatch.setattr(gpath._engine, "_RECYCLED_BYTES", 8 * 9 * n)
    monkeypatch.setattr(gpath._engine, "_FUSED_ENTRIES", 0)  # few features: fused at any size
    rng = np.random.default_rng(4)
    X = rng.normal(size=(n, features))
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    kernel, ridge = Kernel(kind, 1.0 / features, 3, 0.5, offset=0.5), 0.25
    cols = rng.choice(n, 60, replace=False)
    c = rng.random(60) * 3.0
    c[9:18] = 0.0
    coefs, flags = [c, c, -c], (False, True, True)
    rows = CenteredRows(X) if centred else None
    taken = _counting_direct_matvecs(monkeypatch)
    fused = NumbaEngine(np, "cpu").q_matvecs(kernel, X, cols, coefs, y, ridge, flags, rows)
    assert (taken[0] > 0) == (features <= gpath._engine._BLAS_FEATURES)
    generic = Engine(np, "cpu").q_matvecs(kernel, X, cols, coefs, y, ridge, flags, rows)
    Q = y[:, None] * (kernel_matrix(X, X[cols], kind, 1.0 / features, 3, 0.5) + 0.5) * y[cols][None, :]
    Q[cols, np.arange(cols.size)] += ridge
    for got, ref, coef, flag in zip(fused, generic, coefs, flags):
        exact = (np.abs(Q) if flag else Q) @ coef
        scale = np.abs(Q) @ np.abs(coef)
        np.testing.assert_allclose(got, exact, rtol=0, atol=1e-13 * scale.max())
        np.testing.assert_allclose(ref, exact, rtol=0, atol=1e-13 * scale.max())


def _counting_direct_matvecs(monkeypatch) -> list:
    """Count the fused path's per-thread calls on the training rows' points (more than 100)."""
    taken = [0]
    direct = gpath._engine._direct_matvecs

    def counting(lo, hi, block, XT, *args):
        taken[0] += XT.shape[1] > 100
        return direct(lo, hi, block, XT, *args)

    monkeypatch.setattr(gpath._engine, "_direct_matvecs", counting)
    return taken


@pytest.mark.parametrize("cores", [1, 2])
def test_fits_whose_bound_sums_are_fused_equal_the_exact_references(monkeypatch, cores):
    # SimpleSVM's start sums the bound columns by q_matvecs: forced through the fused path of
    # few features (Bananas, 2 features; diabetes, 10), the SVC and ε-SVR fits still equal the
    # certified references, and the path was taken on their rows (not only the process's tiny
    # warm-up fit, which takes it too).
    monkeypatch.setattr(_threads, "n_threads", lambda: cores)
    monkeypatch.setattr(gpath._engine, "_FUSED_ENTRIES", 0)
    monkeypatch.setattr(gpath._engine, "ENTRIES_PER_THREAD", 256)
    fused = _counting_direct_matvecs(monkeypatch)
    X, y = dataset("bananas")
    X, y = X[:800], y[:800]
    for C in (1.0, 100.0):
        assert_exact(SimpleSVC(C=C, gamma=1.0).fit(X, y), X, y)
    assert fused[0] > 0
    fused[0] = 0
    from sklearn.datasets import load_diabetes

    X, y = load_diabetes(return_X_y=True)
    X, y = (X - X.mean(0)) / X.std(0), (y - y.mean()) / y.std()
    # C = 1: some 280 bound points, two blocks of the start's sums.
    model = IncrementalSVR(C=1.0, epsilon=0.1, gamma=0.1).fit(X, y)
    assert fused[0] > 0
    ref = exact_svr(X, y, 1.0, 0.1, gamma=0.1)
    assert ref.certified
    f_ref = ref.predict(X)
    assert np.max(np.abs(model.predict(X) - f_ref)) <= 1e-9 * (
        1.0 + np.max(np.abs(f_ref)) + np.max(np.abs(y))
    )
    assert model.check_kkt() <= 1e-9


def _products_on(monkeypatch, cores: int) -> list:
    """Every product of a breakpoint (|M| ≥ 1) handed to ``cores`` threads (one: none), each
    thread's share as small as 256 entries; the count of the products
    :func:`gpath._engine.combine_in_threads` computes (a compiled loop's handed back, or a
    readable step's)."""
    monkeypatch.setattr(_threads, "n_threads", lambda: cores)
    monkeypatch.setattr(gpath._engine, "n_threads", lambda: cores)
    monkeypatch.setattr(gpath._engine, "_THREADED_PRODUCT", 1)
    monkeypatch.setattr(gpath._engine, "ENTRIES_PER_THREAD", 256)
    taken = [0]
    original = gpath._engine.combine_in_threads

    def counting(*args):
        taken[0] += 1
        return original(*args)

    for module in (gpath._engine, gpath._mid_numba):  # (the C path's loop calls the MID loop's helper)
        monkeypatch.setattr(module, "combine_in_threads", counting)
    return taken


def _slide(model, X, y, n, sizes):
    """Updates of ``model`` adding the next rows and removing as many of the oldest; each
    update's α and b after it."""
    out, lo = [], n
    for m in sizes:
        model.update(X_add=X[lo : lo + m], y_add=y[lo : lo + m], remove=model.sample_ids_[:m])
        out.append((model.states_[0].alpha.copy(), model.states_[0].b, model.last_update_.n_breakpoints))
        lo += m
    return out


@pytest.mark.parametrize(("kind", "C", "gamma"), [("rbf", 10.0, 1.0), ("linear", 0.1, "scale"), ("rbf", 1e4, 3.0)])
def test_paths_whose_products_are_split_between_threads_are_the_one_core_paths_bit_for_bit(
        monkeypatch, kind, C, gamma):
    # Every product of a breakpoint handed to the threads (the compiled loop returns PRODUCT,
    # Python computes ψ on three cores, the loop resumes at the ratio test; the readable
    # step and SimpleSVM's margins likewise): the same sums row for row, so the same path,
    # events and solution, bit for bit, as every product on one core.
    X, y = dataset("bananas")
    n, sizes = 400, (1, 1, 30, 3, 60, 1)
    runs = {}
    for threaded in (False, True):
        taken = _products_on(monkeypatch, 3 if threaded else 1)
        model = IncrementalSVC(C=C, kernel=kind, gamma=gamma, method="multiple").fit(X[:n], y[:n])
        runs[threaded] = (model.states_[0].alpha.copy(), model.states_[0].b, _slide(model, X, y, n, sizes))
        assert (taken[0] > 0) == threaded
        assert model.check_kkt() <= 1e-9
    (alpha0, b0, one_core), (alpha1, b1, threads) = runs[False], runs[True]
    np.testing.assert_array_equal(alpha1, alpha0)
    assert b1 == b0
    assert sum(bp for _, _, bp in one_core) > 0
    for (a0, c0, bp0), (a1, c1, bp1) in zip(one_core, threads):
        np.testing.assert_array_equal(a1, a0)
        assert (c1, bp1) == (c0, bp0)


@pytest.mark.parametrize(("kind", "gamma"), [("rbf", 1.0), ("linear", "scale")])
def test_c_paths_whose_products_are_split_between_threads_are_the_one_core_paths_bit_for_bit(
        monkeypatch, kind, gamma):
    X, y = dataset("bananas")
    X, y = X[:300], y[:300]
    paths = {}
    for threaded in (False, True):
        taken = _products_on(monkeypatch, 3 if threaded else 1)
        path = SVCPath(C_min=0.05, C_max=20.0, kernel=kind, gamma=gamma).fit(X, y).path_
        assert (taken[0] > 0) == threaded
        paths[threaded] = path
    one_core, threads = paths[False], paths[True]
    assert one_core.n_breakpoints >= 10
    np.testing.assert_array_equal(threads.Cs, one_core.Cs)
    np.testing.assert_array_equal(threads.alpha, one_core.alpha)
    np.testing.assert_array_equal(threads.intercept, one_core.intercept)


def test_the_end_of_update_check_split_between_threads_is_the_one_core_check(monkeypatch):
    # The residual check of an update's end (SVCState.refined_check) with its margin
    # columns' dots split between three threads: the same balanced α and the same violation,
    # taken without the readable code's repair, as on one core.
    import copy

    import gpath._path

    X, y = dataset("bananas")
    model = IncrementalSVC(C=10.0, gamma=1.0).fit(X[:400], y[:400])
    state = model.states_[0]
    assert state.active.size > 10
    checks, alphas = {}, {}
    for cores in (1, 3):
        _products_on(monkeypatch, cores)
        repaired = [0]
        original = gpath._path.SVCState._refined

        def counting(self, tol, original=original, repaired=repaired):
            repaired[0] += 1
            return original(self, tol)

        monkeypatch.setattr(gpath._path.SVCState, "_refined", counting)
        twin = copy.deepcopy(state)
        checks[cores] = twin.refined_check(1e-9)
        alphas[cores] = twin.alpha
        assert repaired[0] == 0  # the compiled check took it
    assert checks[3] == checks[1]
    np.testing.assert_array_equal(alphas[3], alphas[1])
