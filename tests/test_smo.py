"""The SMO start of the exact trainer (gpath._smo): its float32 kernel matrix, SMO's
approximate solution against an independent float64 check, and the exact finish from it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from helpers import assert_exact, dataset

import gpath._simplesvm
import gpath._smo
from gpath import IncrementalSVC, SimpleSVC
from gpath._array_api import to_host
from gpath._smo import KernelRows, kernel_matrix, smo
from gpath.kernels import Kernel
from gpath.reference import exact_svc, exact_svr
from gpath.reference import kernel_matrix as reference_kernel


def _pm(y):
    return np.where(y == 1, 1.0, -1.0)


@pytest.mark.parametrize("kind,gamma,degree,coef0", [("rbf", 0.05, 3, 0.0), ("linear", 1.0, 3, 0.0),
                                                     ("poly", 0.02, 3, 1.0), ("poly", 1e-3, 1, 0.5),
                                                     ("sigmoid", 1e-7, 3, 0.5)])
def test_kernel_matrix_is_the_kernel_in_float32(kind, gamma, degree, coef0):
    X, _ = dataset("breast_cancer")
    X = X + 1e3  # far from the origin: the RBF matrix is computed from centred rows
    K = kernel_matrix(X, Kernel(kind, gamma, degree, coef0), 0.5)
    assert K.dtype == np.float32 and K.shape == (len(X), len(X))
    ref = reference_kernel(X, X, kind, gamma, degree, coef0) + 0.5 * np.eye(len(X))
    scale = np.abs(ref).max()
    # float32 products of (centred) rows: relative error of a few 1e-7 of the largest |entry|
    # (|x|² for the uncentred linear and polynomial kernels, which lose more to cancellation).
    assert np.abs(K - ref).max() <= 1e-5 * scale


@pytest.mark.parametrize("kind,degree", [("rbf", 2), ("linear", 2), ("poly", 2), ("poly", 5), ("sigmoid", 2)])
def test_kernel_matrix_of_few_features_is_the_kernel_in_float32(kind, degree):
    # Bananas (2 features) takes the direct pass, not the matrix product.
    X, _ = dataset("bananas")
    X = X[:800] + 100.0
    gamma = 1e-5 if kind == "sigmoid" else 0.5  # (a sigmoid not saturated at ±1)
    assert X.shape[1] <= gpath._smo._DIRECT_FEATURES
    K = kernel_matrix(X, Kernel(kind, gamma, degree, 1.0), 0.5)
    ref = reference_kernel(X, X, kind, gamma, degree, 1.0) + 0.5 * np.eye(len(X))
    assert np.abs(K - ref).max() <= 1e-5 * np.abs(ref).max()


def test_kernel_matrix_that_float32_cannot_hold_is_none():
    X, _ = dataset("breast_cancer")
    assert kernel_matrix(X * 1e20, Kernel("linear"), 0.0) is None  # |x|² ≈ 1e41 > float32's 3.4e38
    assert kernel_matrix(X[:, :2] * 1e20, Kernel("linear"), 0.0) is None  # the direct pass too


@pytest.mark.filterwarnings("ignore:overflow encountered in cast")  # the 1e20 features' float32 entries
@pytest.mark.parametrize("kind,gamma,degree,coef0", [("rbf", 0.05, 3, 0.0), ("linear", 1.0, 3, 0.0),
                                                     ("poly", 0.02, 3, 1.0), ("sigmoid", 1e-4, 3, 0.5)])
def test_kernel_matrix_on_the_device_is_the_kernel_in_float32(backend, kind, gamma, degree, coef0, monkeypatch):
    # Entries computed on X's device, copied block by block (blocks of a few rows here, and a
    # last block shorter than the others).
    monkeypatch.setattr(gpath._smo, "_DEVICE_BLOCK", 7 * 569)
    X, _ = dataset("breast_cancer")
    X = X + 1e3
    kernel = Kernel(kind, gamma, degree, coef0)
    K = kernel_matrix(backend.asarray(X), kernel, 0.5, on_device=True)
    assert isinstance(K, np.ndarray) and K.dtype == np.float32 and K.shape == (len(X), len(X))
    ref = kernel(X, X) + 0.5 * np.eye(len(X))
    assert np.abs(K - ref).max() <= 1e-6 * np.abs(ref).max()  # float64 entries rounded once
    assert kernel_matrix(backend.asarray(X * 1e20), Kernel("linear"), 0.0, on_device=True) is None


@pytest.mark.parametrize("kind", ["rbf", "poly", "precomputed"])
@pytest.mark.parametrize("on_device", [False, True])
def test_kernel_rows_are_computed_once_when_first_asked_for(backend, kind, on_device):
    # SMO by blocks asks for the rows of its working sets, in any order and with repeats
    # (ε-SVR's twins share a point); each is computed once, stored in the next free row.
    from gpath.kernels import with_index

    X, _ = dataset("breast_cancer")
    kernel = Kernel("rbf", 0.05) if kind == "rbf" else Kernel("poly", 0.02, 2, 1.0)
    full = kernel(X, X)
    if kind == "precomputed":
        if on_device:
            pytest.skip("a precomputed kernel's rows are gathered on the host")
        X, kernel = with_index(full), Kernel("precomputed")
    rows = KernelRows(backend.asarray(X) if on_device else X, kernel, 0.5, on_device=on_device)
    assert rows.n_evaluations == 0
    points = np.array([400, 3, 3, 77, 568, 0])
    first = rows.rows(points)
    assert rows.n_evaluations == 5 * len(full) and sorted(set(first)) == list(range(5))
    assert first[1] == first[2]
    again = rows.rows(np.array([77, 1, 400]))
    assert rows.n_evaluations == 6 * len(full) and again[0] == first[3] and again[2] == first[0]
    expected = full + 0.5 * np.eye(len(full))
    for p, r in zip([*points, 1], [*first, again[1]]):
        assert np.abs(rows.values[r] - expected[p]).max() <= 1e-5 * np.abs(expected).max()
    whole = rows.matrix()  # every row, in point order, the computed ones not again
    assert rows.n_evaluations == len(full) ** 2 and whole.shape == full.shape
    assert np.abs(whole - expected).max() <= 1e-5 * np.abs(expected).max()


def test_a_subset_of_kernel_rows_gathers_rows_computed_once_for_every_subset():
    X, _ = dataset("breast_cancer")
    kernel = Kernel("rbf", 0.05)
    expected = kernel(X, X) + 0.5 * np.eye(len(X))
    parent = KernelRows(X, kernel, 0.5, capacity=40)
    index = np.random.default_rng(0).permutation(len(X))[:300]
    sub = parent.subset(index, capacity=30)
    assert sub.values.shape == (30, 300)

    def assert_rows(rows, points, index):
        held = rows.rows(points)
        assert np.abs(rows.values[held] - expected[np.ix_(index[points], index)]).max() <= 1e-5

    points = np.array([5, 299, 0, 5])
    assert_rows(sub, points, index)  # the diagonal (the ridge) once, at the subset's own points
    assert sub.n_evaluations == parent.n_evaluations == 3 * len(X)  # the parent's rows, computed there
    other = parent.subset(index[::-1].copy())
    assert_rows(other, np.array([294, 0, 250]), index[::-1])  # rows 5 and 299 of the first: held already
    assert other.n_evaluations == 1 * len(X) and parent.n_evaluations == 4 * len(X)
    # Beyond both capacities, rows give way in each and are computed (or gathered) again.
    assert_rows(sub, np.arange(30), index)
    assert_rows(sub, np.arange(30, 60), index)
    # (index[49], the other subset's, is held: 28 + 29 new rows)
    assert sub.n_evaluations + other.n_evaluations == parent.n_evaluations == 61 * len(X)


def test_shared_kernel_rows_serve_only_fits_on_exactly_their_rows():
    from gpath._smo import shared_kernel_rows

    X, y = dataset("breast_cancer")
    kernel = Kernel("rbf", 0.05)
    rows = np.random.default_rng(1).permutation(len(X))[:400]
    with shared_kernel_rows(X) as store:
        assert store.subset(X[rows], kernel, 0.5, 400) is None  # no rows set: nothing shared
        store.index = rows
        moved = X[rows].copy()
        moved[7, 3] += 1e-9
        assert store.subset(moved, kernel, 0.5, 400) is None  # not X's rows
        assert store.subset(X[rows[:-1]], kernel, 0.5, 400) is None
        sub = store.subset(X[rows], kernel, 0.5, 400)
        np.testing.assert_allclose(sub.matrix(), KernelRows(X[rows], kernel, 0.5).matrix(), rtol=0, atol=1e-5)
        # One parent per kernel; the next subset takes the spent one's memory.
        next_one = store.subset(X[rows], kernel, 0.5, 400)
        assert next_one.parent is sub.parent and np.shares_memory(next_one.values, sub.values)
        np.testing.assert_allclose(next_one.matrix(), KernelRows(X[rows], kernel, 0.5).matrix(), rtol=0, atol=1e-5)
        assert store.subset(X[rows], Kernel("rbf", 0.1), 0.5, 400).parent is not sub.parent
        # Fits inside the block on exactly those rows gather SMO's float32 rows and their
        # start's float64 columns: the first computes them over all of X's points, the next
        # none (only the columns of its own iterations).
        model = SimpleSVC(C=10.0, gamma=0.05).fit(X[rows], y[rows])
        again = SimpleSVC(C=10.0, gamma=0.05).fit(X[rows], y[rows])
        assert model.check_kkt(X[rows], y[rows]) <= 1e-9 and again.check_kkt(X[rows], y[rows]) <= 1e-9
    assert gpath._smo._shared.get() is None
    alone = SimpleSVC(C=10.0, gamma=0.05).fit(X[rows], y[rows])
    assert model.fit_stats_.start == again.fit_stats_.start == alone.fit_stats_.start == "smo"
    own = {id(f): f.fit_stats_.n_columns * 400 for f in (model, again, alone)}
    assert alone.fit_stats_.n_kernel_evaluations == own[id(alone)] + 400**2
    shared = model.fit_stats_.n_kernel_evaluations - own[id(model)]
    assert shared % len(X) == 0 and shared > 400 * len(X)
    assert again.fit_stats_.n_kernel_evaluations == own[id(again)] < own[id(alone)]
    np.testing.assert_array_equal(model.support_, alone.support_)
    scale = np.abs(alone.dual_coef_).max()
    assert np.abs(model.dual_coef_ - alone.dual_coef_).max() <= 1e-9 * scale


def test_smo_from_a_nearby_point_starts_there_and_the_finish_is_exact():
    from gpath._simplesvm import simple_svm

    X, y = dataset("breast_cancer")
    y_pm = np.where(y == 1, 1.0, -1.0)
    kernel, C = Kernel("rbf", 0.05), 10.0
    cold, cold_stats = simple_svm(X, y_pm, kernel, C, 1e-6)
    scale = C * len(y)
    # From the solution itself SMO has nothing to do; from a point off the boxes and off
    # yᵀα = 0 (clipped and balanced first) it does; both finish at the same exact solution.
    exact, exact_stats = simple_svm(X, y_pm, kernel, C, 1e-6, smo_from=cold.alpha)
    rough = cold.alpha + np.random.default_rng(0).normal(0.0, C, len(y))
    moved, moved_stats = simple_svm(X, y_pm, kernel, C, 1e-6, smo_from=rough)
    assert cold_stats.start == exact_stats.start == moved_stats.start == "smo"
    assert exact_stats.n_smo_iter == 0 < moved_stats.n_smo_iter and cold_stats.n_smo_iter > 0
    for state, stats in ((exact, exact_stats), (moved, moved_stats)):
        assert stats.converged and stats.max_violation <= 1e-9
        assert np.abs(state.alpha - cold.alpha).max() <= 1e-9 * C and abs(state.b - cold.b) <= 1e-9 * scale


@pytest.mark.parametrize("kernel", [Kernel("rbf", 0.05), Kernel("poly", 0.02, 3, 1.0), Kernel("linear")])
def test_shared_float64_columns_are_the_folds_own_to_round_off(kernel):
    from gpath._simplesvm import simple_svm
    from gpath._smo import shared_kernel_rows

    X, y = dataset("breast_cancer")
    y_pm = np.where(y == 1, 1.0, -1.0)
    rows = np.random.default_rng(2).permutation(len(X))[:400]
    state, _ = simple_svm(X[rows], y_pm[rows], kernel, 10.0, 0.25)  # outside the block: its own columns
    with shared_kernel_rows(X) as store:
        store.index = rows
        cols = np.array([0, 5, 399, 17])
        block, computed = store.q_columns(state, cols)
        assert computed == 4 * len(X)  # rows of every point of X
        expected = to_host(state.q_training_block(cols))  # y_r y_c K + the ridge on the diagonal
        assert np.abs(block - expected).max() <= 1e-13 * np.abs(expected).max()
        block, computed = store.q_columns(state, np.array([5, 6]))
        assert computed == len(X) and np.abs(block - to_host(state.q_training_block(np.array([5, 6])))).max() <= (
            1e-13 * np.abs(expected).max())
        # The sums over columns (a start's bound coefficients), the ridge on their own rows.
        cols, coef = np.array([3, 5, 250, 6]), np.array([0.5, 2.0, 10.0, 1.0])
        signed, share, computed = store.q_sums(state, cols, coef)
        assert computed == 2 * len(X)  # (5 and 6 held)
        want = state.engine.q_matvecs(state.kernel, state.X, cols, [coef, coef], state.y, state.ridge, (False, True))
        for got, ref in zip((signed, share), want):
            assert np.abs(got - to_host(ref)).max() <= 1e-13 * np.abs(to_host(ref)).max()


def test_shared_kernel_rows_refuse_what_they_cannot_serve_and_stay_in_their_memory(monkeypatch):
    from gpath._simplesvm import simple_svm
    from gpath._smo import shared_kernel_rows

    X, y = dataset("breast_cancer")
    y_pm = np.where(y == 1, 1.0, -1.0)
    kernel = Kernel("linear")
    rows = np.arange(300)
    with shared_kernel_rows(X) as store:
        store.index = rows
        X_rows = X[rows]
        assert store.serves(X_rows)
        X_rows[0, 0] += 1.0  # changed in place: not X's rows any more
        assert not store.serves(X_rows)
        store.index = np.array([0, 1, 2, 2, 3])  # a row twice would take the ridge twice
        assert not store.serves(X[store.index])
    # A point the fits do not train on overflows float32: the fit's own rows decide.
    big = X.copy()
    big[399] *= 1e40
    with shared_kernel_rows(big) as store:
        store.index = rows
        model = SimpleSVC(C=10.0, kernel="linear").fit(big[rows], y[rows])
        assert model.fit_stats_.start == "smo" and store._failed
        assert gpath._smo.shared_kernel_rows_of(big[rows]) is None  # (no refit is steered to them)
        assert model.check_kkt(big[rows], y[rows]) <= 1e-9
    # Where SMO cannot run at all, a seed is SimpleSVM's own start.
    huge = X[rows] * 1e25
    cold, _ = simple_svm(X[rows], y_pm[rows], kernel, 10.0, 1e-6)
    _, stats = simple_svm(huge, y_pm[rows], kernel, 10.0, 1e-6, smo_from=cold.alpha)
    assert stats.start == "warm" and stats.converged and stats.max_violation <= 1e-9
    # Both precisions together in a quarter of the memory available when first needed.
    monkeypatch.setattr(gpath._smo, "available_memory", lambda: 64.0 * 2**20)
    with shared_kernel_rows(X) as store:
        store.index = rows
        sub = store.subset(X[rows], Kernel("rbf", 0.05), 0.5, 300)
        assert store.q_columns(cold, np.array([1, 2])) is not None
        used = sub.parent.values.nbytes + store._exact[1].values.nbytes
        assert used <= 0.25 * 64.0 * 2**20


def test_kernel_rows_beyond_their_capacity_give_way_least_recently_used_first():
    X, _ = dataset("breast_cancer")
    kernel = Kernel("rbf", 0.05)
    expected = kernel(X, X) + 0.5 * np.eye(len(X))
    rows = KernelRows(X, kernel, 0.5, capacity=5)
    assert rows.values.shape == (5, len(X))
    rows.rows(np.array([10, 11, 12]))
    rows.rows(np.array([13, 14]))  # full
    rows.rows(np.array([10]))  # 10 used again: 11 is now the least recently used

    def assert_rows(points, slots):
        assert np.abs(rows.values[slots] - expected[points]).max() <= 1e-5

    points = np.array([20, 21, 13])
    assert_rows(points, rows.rows(points))  # 11 and 12 give way, never 13 (asked for now)
    assert rows.slot[11] == rows.slot[12] == -1 and (rows.slot[[10, 13, 14, 20, 21]] >= 0).all()
    assert rows.n_evaluations == 7 * len(X)
    points = np.array([11, 12, 20, 21, 14])
    assert_rows(points, rows.rows(points))  # 11 and 12 computed again, in place of 10 and 13
    assert rows.n_evaluations == 9 * len(X) and rows.slot[10] == rows.slot[13] == -1
    assert sorted(rows.owner) == [11, 12, 14, 20, 21]


@pytest.mark.parametrize("capacity", [64, 10])
def test_smo_by_blocks_in_a_few_rows_of_memory(capacity, monkeypatch):
    # Blocks of 32 points from 128 points on; a memory share of 64 rows (two working sets)
    # recomputes rows that gave way and ends at the exact model; of 10 rows it cannot hold one
    # working set, and the paper's start runs instead.
    monkeypatch.setattr(gpath._smo, "_BLOCK", 32)
    monkeypatch.setattr(gpath._smo, "row_capacity", lambda n: capacity)
    X, y = dataset("bananas")
    X, y = X[:700], y[:700]
    model = SimpleSVC(C=10.0, gamma=1.0, init="smo").fit(X, y)
    assert model.fit_stats_.start == ("smo" if capacity == 64 else "closest_pair")
    assert_exact(model, X, y)


@pytest.mark.parametrize("model", ["svc", "svr"])
def test_smo_by_blocks_reads_the_shared_rows_through_its_map_of_points(model, monkeypatch):
    # Blocks of 32 points from 128 points on: inside shared_kernel_rows a fit's SMO reads the
    # rows of all the points themselves (no subset), each coefficient mapped to its point of
    # the shared X (ε-SVR: both twins to one point), and the fits are exact.
    from gpath import IncrementalSVR
    from gpath._smo import shared_kernel_rows

    monkeypatch.setattr(gpath._smo, "_BLOCK", 32)
    X, y = dataset("bananas")
    X, y = X[:900], y[:900]
    rows = np.random.default_rng(3).permutation(900)[:700]
    target = X[:, 0] + np.sin(X[:, 1])
    with shared_kernel_rows(X) as store:
        store.index = rows
        if model == "svc":
            fitted = SimpleSVC(C=10.0, gamma=1.0, init="smo").fit(X[rows], y[rows])
            assert fitted.fit_stats_.start == "smo"
            assert_exact(fitted, X[rows], y[rows])
        else:
            fitted = IncrementalSVR(C=10.0, epsilon=0.1, gamma=1.0).fit(X[rows], target[rows])
            assert fitted.check_kkt() <= 1e-9
        parent = store._rows[1]
        assert store._memory is None and parent.n_evaluations > 0  # the shared rows, no subset
        held = parent.owner[parent.owner >= 0]
        assert np.isin(held, rows).all()  # rows of the fit's own points only


def _gap(alpha, K, y, upper):
    """The maximal violating pair's gap of α, from the float64 kernel (independent of SMO)."""
    F = y - K @ (y * alpha)  # −y ∘ ∇
    up = np.where(y > 0, alpha < upper, alpha > 0)
    low = np.where(y > 0, alpha > 0, alpha < upper)
    return F[up].max() - F[low].min()


@pytest.mark.parametrize("block", [None, 64])  # 64: by blocks of 64 points (_smo_blocks), kept half and half
@pytest.mark.parametrize("C", [0.01, 1.0, 100.0])
def test_smo_reaches_its_tolerance_and_nearly_the_exact_sets(C, block, monkeypatch):
    if block is not None:
        monkeypatch.setattr(gpath._smo, "_BLOCK", block)
    X, y = dataset("breast_cancer")
    y = _pm(y)
    kernel = Kernel("rbf", 0.05)
    upper = np.full(len(y), C)
    upper[:20] *= 3.0  # per-point boxes (sample weights)
    upper[20:25] = 0.0  # weight 0: inert
    alpha, n_iter = smo(kernel_matrix(X, kernel, 1e-6), y, upper)
    assert n_iter > 0
    assert np.all(alpha >= 0) and np.all(alpha <= upper) and np.all(alpha[20:25] == 0)
    assert abs(y @ alpha) <= 1e-12 * C * len(y)
    K = reference_kernel(X, X, "rbf", 0.05) + 1e-6 * np.eye(len(y))
    # LIBSVM's stopping rule, 1e-3, met up to the float32 kernel's share (|Δ(Kα)| ≤ 1e-6·Σα).
    assert _gap(alpha, K, y, upper) <= 1e-3 + 1e-6 * alpha.sum()
    # Against the exact solution: the sets nearly agree (a start, not an answer).
    ref = exact_svc(X, y, C, "rbf", 0.05, ridge=1e-6, sample_weight=upper / C)
    assert ref.kkt <= 1e-9
    assert np.mean((alpha > 0) != (ref.alpha > 0)) <= 0.02
    np.testing.assert_allclose(alpha, ref.alpha, atol=0.05 * upper.max())


def _wss2_smo(K, y, upper, tol):
    """LIBSVM's SMO written plainly (Fan, Chen & Lin 2005, WSS 2; the pair step is gpath's):
    the last point of each maximum, the decrease (F_i − F_t)² / curvature."""
    n = len(y)
    Kd = K.astype(np.float64)
    KD = np.diag(Kd).copy()
    alpha, F = np.zeros(n), y.copy()
    for n_iter in range(100 * n):
        up = np.where(y > 0, alpha < upper, alpha > 0)
        low = np.where(y > 0, alpha > 0, alpha < upper)
        if not up.any():
            return alpha, n_iter
        g_max = F[up].max()
        i = np.flatnonzero(up & (F == g_max))[-1]
        if g_max - F[low].min() < tol:
            return alpha, n_iter
        b = g_max - F
        curvature = KD[i] + KD - 2.0 * Kd[i]
        curvature = np.where(curvature > 0.0, curvature, 1e-12)
        r = np.where(low & (b > 0.0), b * b / curvature, 0.0)
        if r.max() <= 0.0:
            return alpha, n_iter
        j = np.flatnonzero(low & (r == r.max()))[-1]
        d_i, d_j = gpath._smo._pair_step(K, KD, y, alpha, F, upper, i, j)
        F -= K[i] * (y[i] * d_i) + K[j] * (y[j] * d_j)
    return alpha, 100 * n


@pytest.mark.parametrize("C", [0.1, 10.0])
def test_smo_takes_libsvms_pairs(C):
    # The compiled SMO against LIBSVM's rule written plainly: the same pairs, so the same α to
    # the last bit and the same count of pair updates.
    X, y = dataset("breast_cancer")
    X, y = X[:150], _pm(y[:150])
    K = kernel_matrix(X, Kernel("rbf", 0.05), 1e-6)
    upper = np.full(len(y), C)
    upper[:10] *= 2.0
    alpha, F = np.zeros(len(y)), y.copy()
    done, status = gpath._smo._smo_dense(K, y, upper, alpha, F, 1e-3, 10**6, 2**62, False)
    expected, n_iter = _wss2_smo(K, y, upper, 1e-3)
    assert status == gpath._smo._CONVERGED and done == n_iter > 10
    np.testing.assert_array_equal(alpha, expected)


def _doubled_svr(C):
    """Diabetes' ε-SVR doubled problem (LIBSVM's: α_i with label +1, α*_i with −1, both on
    x_i): (X, z, y, target, upper, source), the first five twins inert (weight 0)."""
    from sklearn.datasets import load_diabetes

    X, z = load_diabetes(return_X_y=True)
    X, z = (X - X.mean(0)) / X.std(0), (z - z.mean()) / z.std()
    n = len(z)
    y = np.tile([1.0, -1.0], n)
    target = np.repeat(z, 2) - y * 0.1  # −y ∘ p at α = 0: z_i − ε for α_i, z_i + ε for α*_i
    upper = np.full(2 * n, C)
    upper[:10] = 0.0
    return X, z, y, target, upper, np.repeat(np.arange(n), 2)


def _doubled_gap(alpha, X, y, target, upper, source):
    """The maximal violating pair's gap of the doubled problem, in float64 on the 2n × 2n
    doubled kernel built here (independent of SMO's twin map)."""
    F = target - reference_kernel(X, X, "rbf", 0.1)[np.ix_(source, source)] @ (y * alpha)
    up = np.where(y > 0, alpha < upper, alpha > 0)
    low = np.where(y > 0, alpha > 0, alpha < upper)
    return F[up].max() - F[low].min()


@pytest.mark.parametrize("block", [None, 64])
@pytest.mark.parametrize("C", [0.1, 1.0, 10.0])  # SMO converges within its cap (30 n) here
def test_smo_solves_the_doubled_svr_dual_on_the_points_matrix(C, block, monkeypatch):
    # The linear term and the twin map (SMO on the n × n matrix of the points), dense and by blocks.
    if block is not None:
        monkeypatch.setattr(gpath._smo, "_BLOCK", block)
    X, z, y, target, upper, source = _doubled_svr(C)
    alpha, n_iter = smo(kernel_matrix(X, Kernel("rbf", 0.1), 0.0), y, upper, shift=1.0 - y * target,
                        source=source)
    assert n_iter > 0
    assert np.all(alpha >= 0) and np.all(alpha <= upper) and np.all(alpha[:10] == 0)
    assert abs(y @ alpha) <= 1e-12 * C * len(y)
    assert _doubled_gap(alpha, X, y, target, upper, source) <= 1e-3 + 1e-6 * alpha.sum()
    ref = exact_svr(X, z, C, 0.1, "rbf", 0.1, ridge=0.0, sample_weight=(upper[0::2] > 0).astype(float))
    assert ref.certified
    beta = alpha[0::2] - alpha[1::2]
    assert np.mean((beta != 0) != (ref.beta != 0)) <= 0.02
    np.testing.assert_allclose(beta, ref.beta, atol=0.05 * C)


@pytest.mark.parametrize("block", [None, 64])
def test_smo_from_a_nearby_solution_meets_its_tolerance_sooner(block, monkeypatch):
    # A large update's refit: the solution with 40 twins' coefficients zeroed (as new points
    # enter) and rebalanced, SMO's start.
    if block is not None:
        monkeypatch.setattr(gpath._smo, "_BLOCK", block)
    X, _, y, target, upper, source = _doubled_svr(1.0)
    K, shift = kernel_matrix(X, Kernel("rbf", 0.1), 0.0), 1.0 - y * target
    cold, n_cold = smo(K, y, upper, shift=shift, source=source)
    start = cold.copy()
    start[100:180] = 0.0
    start = gpath._simplesvm._balanced(start, y, upper)
    assert _doubled_gap(start, X, y, target, upper, source) > 1e-2
    alpha, n_warm = smo(K, y, upper, shift=shift, source=source, start=start)
    assert 0 < n_warm < n_cold
    assert np.all(alpha >= 0) and np.all(alpha <= upper) and abs(y @ alpha) <= 1e-12 * len(y)
    assert _doubled_gap(alpha, X, y, target, upper, source) <= 1e-3 + 1e-6 * alpha.sum()


@pytest.mark.parametrize("capacity", [None, 128])
def test_smo_by_blocks_on_rows_computed_when_asked_for(capacity, monkeypatch):
    # ε-SVR's twins (two coefficients a row) and a warm start, by blocks of 64 coefficients,
    # on rows computed when a block first asks for them (and in 128 rows that give way to new
    # ones): SMO meets its tolerance as on the whole matrix, and near the same point.
    monkeypatch.setattr(gpath._smo, "_BLOCK", 64)
    X, _, y, target, upper, source = _doubled_svr(1.0)
    kernel, shift = Kernel("rbf", 0.1), 1.0 - y * target
    K = kernel_matrix(X, kernel, 0.0)
    start = smo(K, y, upper, shift=shift, source=source)[0]
    start[100:180] = 0.0
    start = gpath._simplesvm._balanced(start, y, upper)
    for first in (None, start):
        expected, _ = smo(K, y, upper, shift=shift, source=source, start=first)
        rows = KernelRows(X, kernel, 0.0, capacity=capacity)
        alpha, n_iter = smo(rows, y, upper, shift=shift, source=source, start=first)
        assert n_iter > 0 and np.all(alpha >= 0) and np.all(alpha <= upper) and abs(y @ alpha) <= 1e-12 * len(y)
        assert _doubled_gap(alpha, X, y, target, upper, source) <= 1e-3 + 1e-6 * alpha.sum()
        beta, beta_expected = alpha[0::2] - alpha[1::2], expected[0::2] - expected[1::2]
        np.testing.assert_allclose(beta, beta_expected, atol=0.05)
        held = np.count_nonzero(rows.slot >= 0)
        if capacity is None:  # each row computed once, if at all
            assert rows.n_evaluations == held * len(X)
        else:  # every row held, and more computed (some again, after they gave way)
            assert held == capacity and rows.n_evaluations > capacity * len(X)


@pytest.mark.parametrize("block", [None, 128])
@pytest.mark.parametrize("C", [1e-3, 1.0, 1e3])
def test_the_exact_finish_from_smo_is_the_exact_model(backend, C, block, monkeypatch):
    if block is not None:
        monkeypatch.setattr(gpath._smo, "_BLOCK", block)
    X, y = dataset("bananas")
    X, y = X[:700], y[:700]
    model = SimpleSVC(C=C, gamma=1.0, init="smo").fit(backend.asarray(X), backend.asarray(y))
    assert model.fit_stats_.start == "smo"
    assert_exact(model, X, y, X_device=backend.asarray(X))


@pytest.mark.parametrize("block", [None, 128])
def test_smo_stopped_by_its_iteration_cap_still_starts_the_exact_model(block, monkeypatch):
    # C = 1e8 on Bananas: SMO crawls (LIBSVM takes minutes here) and hands over at 30 n pair
    # updates; the finish is exact all the same, the model the paper's start gives.
    if block is not None:
        monkeypatch.setattr(gpath._smo, "_BLOCK", block)
    X, y = dataset("bananas")
    X, y = X[:700], y[:700]
    model = SimpleSVC(C=1e8, gamma=1.0, init="smo").fit(X, y)
    assert model.fit_stats_.start == "smo" and model.fit_stats_.n_smo_iter == 30 * len(y)
    paper = SimpleSVC(C=1e8, gamma=1.0, init="closest_pair").fit(X, y)
    assert model.check_kkt(X, y) <= 1e-9 and paper.check_kkt(X, y) <= 1e-9
    f, f_paper = model.decision_function(X), paper.decision_function(X)
    assert np.abs(f - f_paper).max() <= 1e-7 * np.abs(f_paper).max()


def test_auto_takes_smo_on_every_namespace(backend):
    X, y = dataset("breast_cancer")
    model = SimpleSVC(C=1.0, gamma=0.05).fit(backend.asarray(X), backend.asarray(y))
    assert model.fit_stats_.start == "smo"
    assert model.n_kernel_evaluations_ >= len(y) ** 2
    assert_exact(model, X, y, X_device=backend.asarray(X))
    inc = IncrementalSVC(C=1.0, gamma=0.05).fit(X, y)  # the exact fit behind the path models
    np.testing.assert_allclose(inc.alpha_, model.alpha_, atol=1e-9)


def test_without_memory_for_the_matrix_the_closest_pair_starts(monkeypatch):
    X, y = dataset("breast_cancer")
    monkeypatch.setattr(gpath._smo, "available_memory", lambda: 4.0 * len(y) ** 2)  # a quarter is too little
    monkeypatch.setattr(gpath._smo, "_FITS_ANYWHERE", 0.0)  # (a matrix this small is otherwise taken)
    model = SimpleSVC(C=1.0, gamma=0.05, init="smo").fit(X, y)
    assert model.fit_stats_.start == "closest_pair"
    assert_exact(model, X, y)


def test_features_float32_cannot_hold_fall_back_to_the_closest_pair():
    X, y = dataset("breast_cancer")
    X = X[:200] * 1e19  # float64 holds |x|² ≈ 1e39; float32 does not
    model = SimpleSVC(C=1e-37, kernel="linear", init="smo").fit(X, y[:200])
    assert model.fit_stats_.start == "closest_pair"
    assert model.check_kkt(X, y[:200]) <= 1e-9


@pytest.mark.parametrize("params", [dict(loss="squared_hinge"), dict(C=np.inf), dict(kernel=lambda A, B: A @ B.T)])
def test_smo_start_outside_its_problem_is_a_value_error(params):
    X, y = dataset("breast_cancer")
    model = SimpleSVC(init="smo", **params)
    with pytest.raises(ValueError, match="init='smo' needs"):
        model.fit(X, y)
    assert not hasattr(model, "support_")


def _fit_in_child(X, y):
    model = SimpleSVC(C=1.0, gamma=0.05).fit(X, y)
    return model.fit_stats_.start, model.check_kkt(X, y)


def test_the_first_fit_loads_what_smo_by_blocks_reaches():
    # A refit of more than 8,192 rows mid-stream starts from SMO by blocks: the first fit of a
    # process (its warm-up) must have loaded every compiled function that reaches, in the
    # signatures it calls them with (blocks of 64 points here, so 569 rows go by blocks).
    import subprocess
    import sys

    script = """
import numpy as np
from numba.core.registry import CPUDispatcher
import gpath._smo as smo
from gpath import IncrementalSVC
from helpers import dataset
X, y = dataset("breast_cancer")
IncrementalSVC().fit(X[:40], y[:40])
compiled = {name: f for name, f in vars(smo).items() if isinstance(f, CPUDispatcher)}
loaded = {name: len(f.signatures) for name, f in compiled.items()}
smo._BLOCK = 64
model = IncrementalSVC(C=10.0).fit(X, y)
assert model.check_kkt() <= 1e-9
now = {name: len(f.signatures) for name, f in compiled.items()}
assert now == loaded, {name: (loaded[name], now[name]) for name in now if now[name] != loaded[name]}
"""
    done = subprocess.run([sys.executable, "-c", script], check=False, capture_output=True, text=True,
                          timeout=300, cwd=str(Path(__file__).parent))
    assert done.returncode == 0, done.stderr[-2000:]


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="no fork on this platform")
def test_a_forked_child_fits_after_its_parent_did():
    # The compiled passes run on Python threads, not Numba's OpenMP layer, which terminates a
    # forked child that runs a parallel loop after its parent did (a fork pool, Dask workers).
    import multiprocessing

    X, y = dataset("breast_cancer")
    parent = SimpleSVC(C=1.0, gamma=0.05).fit(X, y)
    assert parent.fit_stats_.start == "smo"
    with multiprocessing.get_context("fork").Pool(1) as pool:
        start, kkt = pool.apply_async(_fit_in_child, (X, y)).get(timeout=120)  # a terminated child: no answer
    assert start == "smo" and kkt <= 1e-9


def test_the_threaded_passes_serve_concurrent_callers():
    # Two threads computing kernel matrices at once get what one thread gets, to float32
    # round-off: each thread's BLAS product may run on the library's own threads, since
    # OpenBLAS (0.3.30, pthreads) takes a thread count from the main thread only, and with
    # its Haswell kernels (an AMD EPYC) two threads sum some entries in another order (3e-6
    # relative at most). A race between the threads would give other rows, not round-off.
    from concurrent.futures import ThreadPoolExecutor

    X, _ = dataset("breast_cancer")
    kernel = Kernel("rbf", 0.05)
    alone = kernel_matrix(X, kernel, 0.0)
    with ThreadPoolExecutor(2) as pool:
        together = list(pool.map(lambda _: kernel_matrix(X, kernel, 0.0), range(4)))
    for K in together:
        np.testing.assert_allclose(K, alone, rtol=1e-4, atol=1e-6)
