"""The compiled engines against the readable array-API code they replace (issue 10).

NumPy arrays run the compiled MID loop (gpath._mid_numba) and the compiled passes of
SimpleSVM and the kink path (gpath._engine.NumbaEngine); every other namespace runs the
generic code; CuPy arrays run the fused CuPy engine (gpath._engine.CupyEngine; those
cases skip without a CUDA device). Each must pass the same breakpoints, event for event, and end at the same
solution to round-off, on real data and with both update methods."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from conftest import make_backend
from helpers import dataset

import gpath._path as path_module
from gpath import IncrementalSVC, RobustSVC, SimpleSVC
from gpath._array_api import to_host
from gpath._engine import CupyEngine, Engine, NumbaEngine

CASES = [
    ("breast_cancer", 10.0, 0.05, 250, 30),
    ("bananas", 100.0, 1.0, 400, 40),
    ("waterflow", 10.0, "scale", 600, 30),
    ("waterflow", 1e4, 0.1, 300, 30),
]


@pytest.fixture
def recorded(monkeypatch):
    """Every path's events, in order: a list per path (kind, point). Every path runs through
    :class:`gpath._path._PathRun` (a small update's compiled whole path, which logs none, is
    held to it bit for bit in test_one_point.py)."""
    monkeypatch.setattr(path_module, "ONE_POINT", False)
    paths: list[list] = []
    original = path_module._PathRun.__init__

    def recording(self, *args, **kwargs):
        original(self, *args, **kwargs)
        self.events = []
        paths.append(self.events)

    monkeypatch.setattr(path_module._PathRun, "__init__", recording)
    return paths


def _generic(model):
    """The same model on the readable loop (NumPy arrays through the generic engine)."""
    twin = copy.copy(model)
    twin.state_.engine = Engine(twin.state_.xp, twin.state_.device)
    return twin


def _assert_same_paths(recorded, fast, to_backend, X, y, C, n, m):
    """Three updates of ``fast`` and of its twin on the generic engine, each from the same
    start (rounding differs with the order of sums): the same events, the same solution."""
    for step in range(3):
        generic = _generic(fast)
        lo, hi = n + step * m, n + (step + 1) * m
        X_add, y_add = to_backend(X[lo:hi]), to_backend(y[lo:hi])
        recorded.clear()
        fast.update(X_add=X_add, y_add=y_add, remove=fast.sample_ids_[:m])
        events_fast = [list(p) for p in recorded if p]
        recorded.clear()
        generic.update(X_add=X_add, y_add=y_add, remove=generic.sample_ids_[:m])
        assert sum(map(len, events_fast)) > 0
        # (The paths without an event: NumPy builds a point's update that moves nothing
        # directly, with no path; the generic engine follows its empty path.)
        assert events_fast == [p for p in recorded if p]
        # 1e-12 relative, or the round-off that the margin matrix's condition allows, if more
        # (kernel values summed in another order differ by a few ulps).
        tol = max(1e-12, 10 * np.finfo(float).eps * np.linalg.cond(fast.state_.factor.matrix))
        np.testing.assert_allclose(fast.alpha_, generic.alpha_, rtol=0, atol=tol * C)
        X_seen = to_backend(X[:hi])
        f, f_generic = to_host(fast.decision_function(X_seen)), to_host(generic.decision_function(X_seen))
        np.testing.assert_allclose(f, f_generic, rtol=0, atol=tol * (1.0 + np.abs(f).max()))


@pytest.mark.parametrize("method", ["multiple", "single"])
@pytest.mark.parametrize(("data", "C", "gamma", "n", "m"), CASES)
def test_compiled_mid_passes_the_same_breakpoints(recorded, data, C, gamma, n, m, method):
    X, y = dataset(data)
    compiled = IncrementalSVC(C=C, gamma=gamma, method=method).fit(X[:n], y[:n])
    assert isinstance(compiled.state_.engine, NumbaEngine)
    _assert_same_paths(recorded, compiled, np.asarray, X, y, C, n, m)


@pytest.mark.cupy
@pytest.mark.parametrize(("data", "C", "gamma", "n", "m"), CASES)
def test_cupy_engine_passes_the_same_breakpoints(recorded, data, C, gamma, n, m):
    gpu = make_backend("cupy")  # skips without a CUDA device
    X, y = dataset(data)
    fused = IncrementalSVC(C=C, gamma=gamma).fit(gpu.asarray(X[:n]), gpu.asarray(y[:n]))
    assert isinstance(fused.state_.engine, CupyEngine)
    _assert_same_paths(recorded, fused, gpu.asarray, X, y, C, n, m)


def test_compiled_mid_on_numpy_matches_the_generic_loop_on_array_api_strict(recorded):
    strict = make_backend("array_api_strict")
    X, y = dataset("breast_cancer")
    compiled = IncrementalSVC(C=10.0, gamma=0.05).fit(X[:250], y[:250])
    other = IncrementalSVC(C=10.0, gamma=0.05).fit(strict.asarray(X[:250]), strict.asarray(y[:250]))
    np.testing.assert_allclose(compiled.alpha_, other.alpha_, atol=1e-11)
    recorded.clear()
    compiled.update(X_add=X[250:300], y_add=y[250:300], remove=compiled.sample_ids_[:50])
    events = [list(p) for p in recorded]
    recorded.clear()
    other.update(X_add=strict.asarray(X[250:300]), y_add=strict.asarray(y[250:300]),
                 remove=other.sample_ids_[:50])
    assert events == recorded
    np.testing.assert_allclose(compiled.alpha_, other.alpha_, atol=1e-11)


@pytest.mark.parametrize("data", ["breast_cancer", "bananas"])
def test_simplesvm_passes_agree(monkeypatch, data):
    X, y = dataset(data)
    X, y = X[:500], y[:500]
    compiled = SimpleSVC(C=10.0, gamma=1.0 if data == "bananas" else 0.05, random_state=0).fit(X, y)
    monkeypatch.setattr("gpath._path.engine_for", lambda xp, device, kernel=None: Engine(xp, device))
    generic = SimpleSVC(C=10.0, gamma=1.0 if data == "bananas" else 0.05, random_state=0).fit(X, y)
    assert compiled.fit_stats_.n_iter == generic.fit_stats_.n_iter
    assert compiled.fit_stats_.n_bound_steps == generic.fit_stats_.n_bound_steps
    np.testing.assert_allclose(compiled.alpha_, generic.alpha_, rtol=0, atol=1e-12 * 10.0)


@pytest.mark.parametrize("path", ["theta", "s"])
def test_kink_path_passes_agree(monkeypatch, path):
    X, y = dataset("breast_cancer")
    X, y = X[:200], 1 - y[:200] * (np.arange(200) % 7 > 0)
    compiled = RobustSVC(C=1.0, gamma=1 / 30, path=path).fit(X, y)
    monkeypatch.setattr("gpath._kinkpath.engine_for", lambda xp, device, kernel=None: Engine(xp, device))
    generic = RobustSVC(C=1.0, gamma=1 / 30, path=path).fit(X, y)
    assert compiled.path_.n_breakpoints == generic.path_.n_breakpoints
    np.testing.assert_array_equal(compiled.path_.discontinuous, generic.path_.discontinuous)
    np.testing.assert_allclose(compiled.path_.params, generic.path_.params, rtol=1e-12, atol=1e-12)
    # The engines sum in different orders (the compiled reductions vectorize by the processor's
    # SIMD width) and the path carries that round-off through its breakpoints: 1.5e-12 of
    # C = 1 apart with Numba and OpenBLAS on AVX (Sandybridge) code, 1e-13 on AVX2.
    np.testing.assert_allclose(compiled.path_.alpha, generic.path_.alpha, rtol=0, atol=1e-10)


def test_compiled_loop_reads_the_arrays_an_event_handled_in_python_rebinds(monkeypatch):
    # Remove every margin point and three positive points of I: the margin empties and the
    # bias must jump (MID section 3.3). With every cache slot in use when the update began,
    # the compiled loop hands that event to Python, which rebinds y f; the loop must go on
    # with the new array, and end where the generic code ends.
    from gpath.cache import QColumnCache
    from gpath.cpath import start_state
    from gpath.kernels import Kernel

    X, y = dataset("breast_cancer")
    X, y = X[:100], np.where(y[:100] == 1, 1.0, -1.0)
    kernel = Kernel.from_params("rbf", 0.5, 3, 0.0, X)
    protected = QColumnCache._protected

    def every_slot_protected(cache):
        kept = protected(cache)
        return np.ones_like(kept) if kept.size else kept

    ends = {}
    for name in ("compiled", "generic"):
        s = start_state(X, y, kernel, 1.0, 1e-6)
        if name == "generic":
            s.engine = Engine(np, "cpu")
        remove = np.concatenate([s.active.members, np.flatnonzero((s.where == 2) & (y > 0))[:3]])
        with monkeypatch.context() as patch:
            patch.setattr(QColumnCache, "_protected", every_slot_protected)
            ends[name], _ = s.follow(X[:0], y[:0], remove)
    assert ends["compiled"].kkt_violation() <= 1e-12
    assert ends["compiled"].b == pytest.approx(ends["generic"].b, abs=1e-12)
    np.testing.assert_allclose(ends["compiled"].alpha, ends["generic"].alpha, rtol=0, atol=1e-12)


@pytest.mark.parametrize("kernel", ["rbf", "linear", "poly"])
@pytest.mark.parametrize("estimator", ["IncrementalSVC", "IncrementalSVR"])
def test_fit_loads_every_compiled_function_an_update_reaches(estimator, kernel):
    # Issue 18: the first update after fit in a new process loaded the path's compiled loop and
    # the kernel-column code from Numba's cache (26-37 ms against a steady 0.8 ms). In a fresh
    # interpreter, fit alone must leave them loaded: an update then loads nothing more.
    import subprocess
    import sys

    # Every compiled function of the package counts, also those the path's loop hands back to
    # Python (a point entering M without a free cache slot, a removed point leaving M: 7 ms seen
    # mid-stream), over a stream of one-, five- and thirty-point updates and predictions (the
    # river models' too).
    script = f"""
import importlib, pkgutil
import numpy as np
import gpath
from numba.core.registry import CPUDispatcher
from gpath import {estimator}
from gpath.datasets import load_waterflow_direction
compiled = [obj for info in pkgutil.iter_modules(gpath.__path__)
            for obj in vars(importlib.import_module("gpath." + info.name)).values() if isinstance(obj, CPUDispatcher)]
X, y = load_waterflow_direction()
if "{estimator}" == "IncrementalSVR":
    y = X[:, -1].copy()
model = {estimator}(C=10.0, kernel="{kernel}", method="multiple",
                    **({{"epsilon": 0.05}} if "{estimator}" == "IncrementalSVR" else {{}}))
model.fit(X[:600], y[:600])
loaded = {{f.py_func.__module__ + "." + f.py_func.__name__: len(f.signatures) for f in compiled}}
assert loaded["gpath._mid_numba.run"] and loaded["gpath._engine._feature_block"], loaded
lo = 600
for m in [1] * 40 + [30] * 8 + [5] * 8:
    model.update(X_add=X[lo : lo + m], y_add=y[lo : lo + m], remove=model.sample_ids_[:m])
    lo += m
model.predict(X[:1]), model.predict(X[:5])
# The river models' predictions and screening (one compiled pass a row).
from gpath._engine import decision_values
assert decision_values(model.kernel_, X[:1], model.support_vectors_, model.dual_coef_[0, :], 0.0) is not None
now = {{f.py_func.__module__ + "." + f.py_func.__name__: len(f.signatures) for f in compiled}}
assert now == loaded, {{k: (loaded[k], now[k]) for k in now if now[k] != loaded[k]}}
"""
    done = subprocess.run([sys.executable, "-c", script], check=False, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]


@pytest.mark.parametrize("kind", ["rbf", "linear", "poly"])
@pytest.mark.parametrize("labels", [True, False])
def test_the_product_block_equals_the_generic_block(kind, labels):
    # Many features and a large block: the compiled engine takes one matrix product and
    # finishes its entries in place; the generic engine builds them with array-API calls.
    from gpath.kernels import CenteredRows, Kernel

    X, _ = dataset("breast_cancer")
    X = np.hstack([X, X[:, :10] ** 2]) + 5.0  # 40 features, away from the origin
    assert X.shape[1] > 32  # the product's branch, with centred rows or with 32 columns or more
    rng = np.random.default_rng(0)
    y = np.where(rng.random(len(X)) < 0.5, 1.0, -1.0) if labels else None
    kernel = Kernel(kind, gamma=0.01, degree=3, coef0=1.0, offset=0.25)
    for size in (1, 5, 120):  # 1 and 5 without centred rows: a column at a time
        cols = np.sort(rng.choice(len(X), size, replace=False))
        rows = CenteredRows(X) if kind == "rbf" else None
        fast = NumbaEngine(np, None).q_block(kernel, X, cols, y, 1e-3, rows)
        generic = Engine(np, None).q_block(kernel, X, cols, y, 1e-3, rows)
        assert fast.shape == generic.shape == (len(X), cols.size)
        np.testing.assert_allclose(fast, generic, rtol=1e-13, atol=1e-13 * np.abs(generic).max())
        if kind == "rbf":  # the same without the prepared rows
            np.testing.assert_allclose(NumbaEngine(np, None).q_block(kernel, X, cols, y, 1e-3), generic,
                                       rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("shifted", [False, True])
def test_the_compiled_stationarity_check_equals_the_generic_one(shifted):
    # The end-of-update KKT check of the maintained margins (SVCState.kkt_check): one compiled
    # pass against the array-API expression, with levels of every set, a linear term's shift,
    # and a NaN margin, which must read as a violation (inf), never as 0.
    rng = np.random.default_rng(3)
    n = 200
    yf = 1.0 + rng.normal(scale=1e-3, size=n)
    codes = rng.integers(0, 4, n)  # O, M, I, A
    lo = np.where(codes == 0, 1.0, -np.inf)
    hi = np.where((codes == 2) | (codes == 3), 1.0, np.inf)
    members = np.flatnonzero(codes == 1)
    shift = rng.normal(scale=1e3, size=n) if shifted else None
    for scale in (1.0, 37.5):
        fast = NumbaEngine(np, None).stationarity(yf, lo, hi, members, shift, scale)
        generic = Engine(np, None).stationarity(yf, lo, hi, members, shift, scale)
        assert fast > 0.0
        assert fast == pytest.approx(generic, rel=1e-15)
    for bad in (np.nan, np.inf):  # inf at a point of O: inf − inf is NaN in the level test
        wrong = yf.copy()
        wrong[np.flatnonzero(codes == 0)[0]] = bad
        assert NumbaEngine(np, None).stationarity(wrong, lo, hi, members, shift, 1.0) == np.inf
        assert Engine(np, None).stationarity(wrong, lo, hi, members, shift, 1.0) == np.inf
    yf[members[3]] = np.nan
    assert NumbaEngine(np, None).stationarity(yf, lo, hi, members, shift, 1.0) == np.inf
    assert Engine(np, None).stationarity(yf, lo, hi, members, shift, 1.0) == np.inf


@pytest.mark.parametrize("labels", [True, False])
def test_the_few_feature_rbf_block_equals_the_generic_block(labels):
    # Few features: the compiled exponents, NumPy's exponential over the block and a compiled
    # finish (a window's new points), against the generic engine, from 1 to 30 columns.
    from gpath.kernels import Kernel

    X, _ = dataset("waterflow")
    X = X[:630] + 3.0
    rng = np.random.default_rng(1)
    y = np.where(rng.random(len(X)) < 0.5, 1.0, -1.0) if labels else None
    kernel = Kernel("rbf", gamma=2.0, offset=0.25)
    for size in (1, 2, 30):
        cols = np.sort(rng.choice(len(X), size, replace=False))
        fast = NumbaEngine(np, None).q_block(kernel, X, cols, y, 1e-3)
        generic = Engine(np, None).q_block(kernel, X, cols, y, 1e-3)
        assert fast.shape == generic.shape == (len(X), size)
        np.testing.assert_allclose(fast, generic, rtol=1e-14, atol=1e-15)
        for c, k in enumerate(cols):  # and the compiled loop's own column
            np.testing.assert_allclose(fast[:, c], NumbaEngine(np, None).q_column(kernel, X, int(k), y, 1e-3),
                                       rtol=1e-14, atol=1e-15)


@pytest.mark.parametrize("kind", ["rbf", "linear", "poly"])
@pytest.mark.parametrize("d", [7, 40])
def test_the_appended_points_columns_are_the_three_steps_bit_for_bit(kind, d):
    # A stream's new point or two: labels, kernel columns and margins in one compiled call
    # (NumbaEngine.appended_columns), against the steps it replaces (SVCState._appended): the
    # same bits, the block Fortran-ordered as q_block makes it; more points take the steps.
    from gpath.kernels import Kernel

    rng = np.random.default_rng(d)
    X, y = rng.normal(size=(302, d)) * 0.5, np.where(rng.random(302) < 0.5, 1.0, -1.0)
    kernel = Kernel(kind, gamma=0.3, degree=3, coef0=1.0, offset=0.25)
    engine = NumbaEngine(np, None)
    for m, shift in ((1, None), (2, None), (2, rng.normal(size=2))):
        n = 302 - m
        alpha = rng.random(n) * (rng.random(n) < 0.3)
        labels, QA, yf = engine.appended_columns(kernel, X, y[:n], y[n:], alpha, 0.7, 1e-3, shift)
        want_labels = np.concatenate([y[:n], y[n:]])
        want_QA = engine.q_block(kernel, X, np.arange(n, n + m), want_labels, 1e-3)
        want_yf = engine.added_margins(alpha, want_QA, 0.7, y[n:], shift)
        for got, want in ((labels, want_labels), (QA, want_QA), (yf, want_yf)):
            assert got.shape == want.shape and got.tobytes(order="A") == want.tobytes(order="A")
        assert QA.flags.f_contiguous
    assert engine.appended_columns(kernel, X, y[:299], y[299:], np.zeros(299), 0.0, 0.0, None) is None
    assert Engine(np, None).appended_columns(kernel, X, y[:301], y[301:], np.zeros(301), 0.0, 0.0, None) is None


@pytest.mark.parametrize("kind", ["rbf", "linear", "poly"])
def test_the_twin_block_equals_the_doubled_block(backend, kind):
    # ε-SVR's doubled rows 2i and 2i + 1 are one point: an update's blocks compute each kernel
    # value once and sign it by the labels of its row and column (Engine.twin_block). The
    # entries must be those of the block of the doubled rows, the ridge on each column's own
    # row only (not on its twin's): for the columns of an added point's two rows (a quarter of
    # the kernel values) and for single removed rows (half).
    from sklearn.datasets import load_diabetes

    from gpath.kernels import Kernel
    from gpath.svr import doubled

    X = load_diabetes().data[:120]
    rng = np.random.default_rng(3)
    t = rng.standard_normal(X.shape[0])
    X2, y2, _ = doubled(backend.asarray(X), t, 0.1)
    kernel = Kernel(kind, gamma=0.3, degree=3, coef0=1.0, offset=0.25)
    engine = NumbaEngine(np, None) if backend.name == "numpy" else Engine(backend.xp, backend.device)
    if backend.name == "cupy":
        engine = CupyEngine(backend.xp, backend.device)
    reference = Engine(np, None).q_block(kernel, to_host(X2), np.arange(240), to_host(y2), 1e-3)
    for cols in (np.arange(236, 240), np.array([7, 40, 41, 101]), np.array([0]), np.array([200, 201])):
        block = backend.check(engine.twin_block(kernel, X2, cols, y2, 1e-3), (240, cols.size))
        expected = reference[:, cols]
        np.testing.assert_allclose(block, expected, rtol=1e-13, atol=1e-13 * np.abs(expected).max())
        # The ridge sits on each column's own row: its twin's entry is the same value negated.
        for c, row in enumerate(cols.tolist()):
            assert block[row, c] + block[row ^ 1, c] == pytest.approx(1e-3, rel=1e-6)


@pytest.mark.parametrize("kind", ["rbf", "linear", "poly"])
def test_a_column_of_doubled_rows_has_the_bits_of_the_full_column(kind):
    # A point entering ε-SVR's margin set gets its column of the doubled rows with each kernel
    # value computed once (gpath._mid_numba._kernel_column with twins): the entries of the
    # column computed over every row, bit for bit, so that the compiled loops and the Python
    # steps between them, which compute such columns by either route, follow the same path.
    from gpath._engine import _KINDS, _q_column
    from gpath._mid_numba import _kernel_column
    from gpath.svr import doubled

    rng = np.random.default_rng(11)
    for scale in (1e-3, 1.0, 1e3):
        X2, y2, _ = doubled(scale * rng.standard_normal((150, 7)), rng.standard_normal(150), 0.1)
        for k in (0, 1, 57, 298, 299):
            full, once = np.empty(300), np.empty(300)
            args = (X2, _KINDS[kind], 0.3 / scale**2, 2.0, 1.0, 0.25)
            _q_column(X2, k, *args[1:], y2, 1e-3, full)
            _kernel_column((*args, 1e-3, True, 0), k, y2, once)
            assert np.array_equal(once, full)


@pytest.mark.parametrize("epsilon", [0.0, 0.1])
def test_the_product_by_point_equals_the_full_product(epsilon):
    # A breakpoint's product over ε-SVR's doubled rows reads one entry a point
    # (gpath._engine.twin_combine): each row's sum must be the full product's but for the
    # margin rows' ridge, added last, so within a few ulps of the scale; a point whose two rows
    # are not each other's negation (a column from elsewhere) is read from the columns.
    from gpath import IncrementalSVR
    from gpath._engine import _combine, twin_combine
    from gpath._mid_numba import twin_arrays
    from gpath.datasets import load_waterflow_regression

    X, y = load_waterflow_regression()
    X, y = (X - X.mean(0)) / X.std(0), (y - y.mean()) / y.std()
    model = IncrementalSVR(C=10.0, epsilon=epsilon, gamma=1 / 7, ridge=1e-3).fit(X[:500], y[:500])
    model.update(X[500:540], y[500:540], remove=model.sample_ids_[:40])  # (rows in the buffer's own order)
    s = model.state_
    m = s.active.size
    slots, members = s.active.slots.copy(), s.active.members.copy()
    rows = np.zeros(0, dtype=np.int64) if s.cache.rows_host is None else s.cache.rows_host
    data = s.cache.data.copy()
    assert m > 10 and rows.size == s.n
    rng = np.random.default_rng(5)
    phi, u = rng.standard_normal(m), rng.standard_normal(s.n)
    prod, full, by_point = np.empty(data.shape[1]), np.empty(s.n), np.empty(s.n)
    for case in ("as cached", "odd rows"):
        if case == "odd rows":  # one point's second row off by a rounding in two columns
            i = int(np.flatnonzero(~np.isin(np.arange(s.n // 2), members // 2))[3])
            data[slots[:2], rows[2 * i + 1]] *= 1.0 + 2.0**-40
        big = _combine(data, s.cache.top, rows, slots, phi, 0.3, s.y, 0.7, u, prod, full)
        mine = twin_arrays(data.shape[0], s.n // 2)
        assert twin_combine(data, rows, slots, members, phi, 0.3, s.y, 0.7, u, s.ridge, mine, prod, by_point) == \
            pytest.approx(big, rel=1e-15)
        np.testing.assert_allclose(by_point, full, rtol=0, atol=8 * np.finfo(float).eps * big)
        assert np.flatnonzero(mine[2]).tolist() == ([i] if case == "odd rows" else [])
        other = ~np.isin(np.arange(s.n), np.concatenate([2 * (members // 2), 2 * (members // 2) + 1]))
        np.testing.assert_array_equal(by_point[other], full[other])  # (only the margin points' rows differ)


@pytest.mark.parametrize("data", ["waterflow", "diabetes"])
def test_updates_and_a_c_path_by_point_are_exact_and_equal_the_full_products(monkeypatch, data):
    # The compiled loops read the doubled rows by point from 2**17 entries on (a window of
    # thousands of points); here from the first product, so that every breakpoint of these
    # small problems takes that route. Each model must be exact and equal the full products'
    # to round-off; SVRPath's recorded points too. (NumPy only: other namespaces run the
    # readable loop, whose products are the namespace's own.)
    from sklearn.datasets import load_diabetes

    import gpath._engine as engine_module
    from gpath import IncrementalSVR, SVRPath
    from gpath.datasets import load_waterflow_regression

    X, y = load_waterflow_regression() if data == "waterflow" else load_diabetes(return_X_y=True)
    X, y = (X - X.mean(0)) / X.std(0), (y - y.mean()) / y.std()
    n = 300
    models = {}
    for by_point in (False, True):
        monkeypatch.setattr(engine_module, "TWIN_PRODUCT", 1 if by_point else 2**62)
        model = IncrementalSVR(C=100.0, epsilon=0.05, gamma=0.5, method="multiple").fit(X[:n], y[:n])
        for lo in range(n, n + 120, 30):
            model.update(X[lo : lo + 30], y[lo : lo + 30], remove=model.sample_ids_[:30])
            assert model.check_kkt() < 1e-9
        one = IncrementalSVR(C=100.0, epsilon=0.05, gamma=0.5).fit(X[:n], y[:n])
        for lo in range(n, n + 10):
            one.update(X[lo : lo + 1], y[lo : lo + 1], remove=one.sample_ids_[:1])
            assert one.check_kkt() < 1e-9
        path = SVRPath(C_min=0.1, C_max=1e3, epsilon=0.05, gamma=0.5).fit(X[:n], y[:n])
        models[by_point] = model, one, path
    assert models[True][0].last_update_.n_breakpoints > 0
    for full, by_point in zip(models[False][:2], models[True][:2]):
        np.testing.assert_allclose(by_point.dual_coef_, full.dual_coef_, rtol=0, atol=1e-9 * 100.0)
        np.testing.assert_allclose(by_point.intercept_, full.intercept_, rtol=0, atol=1e-9)
    full, by_point = models[False][2], models[True][2]
    np.testing.assert_allclose(by_point.path_.Cs, full.path_.Cs, rtol=1e-9)
    for C in (0.1, 3.0, 1e3):
        assert by_point.check_kkt(C) < 1e-9
        np.testing.assert_allclose(by_point.predict(X[:n], C=C), full.predict(X[:n], C=C), rtol=0, atol=1e-9)


def _built_state(model) -> dict:
    """What an update leaves in the model, as host arrays: the state's rows, sets, margins and
    levels, its margin set with the cached columns of its points, and the published solution."""
    s = model.state_
    out = {name: np.asarray(getattr(s, name)) for name in ("X", "y_host", "alpha", "upper", "where", "yf", "lo",
                                                           "hi")}
    out.update(b=np.float64(s.b), shift=np.zeros(0) if s.shift is None else np.asarray(s.shift),
               members=s.active.members.copy(), ids=np.asarray(model.sample_ids_),
               columns=np.array([np.asarray(s.cache.column(int(slot))) for slot in s.active.slots]),
               support=np.asarray(model.support_), dual_coef=np.asarray(model.dual_coef_),
               intercept=np.asarray(model.intercept_),
               share=np.asarray(s.__dict__.get("_share", np.zeros(0))))  # (the KKT scale's kept share)
    return out


@pytest.mark.parametrize("estimator", ["IncrementalSVC", "IncrementalSVR"])
def test_an_update_that_moves_nothing_is_built_as_its_path_builds_it(monkeypatch, estimator):
    # NumPy builds an update that moves no coefficient directly (SVCState._shifted: the new
    # points beyond their level, the removed ones at α = 0 outside M), without the path's
    # appended-then-dropped rows. Its model must be the one the path builds, bit for bit, and
    # stay so along a stream: a window, removals from the middle, additions alone, removals
    # alone, a point of weight 0, two points at once.
    from gpath import IncrementalSVR
    from gpath.datasets import load_waterflow_direction, load_waterflow_regression

    if estimator == "IncrementalSVR":
        X, y = load_waterflow_regression()
        X, y = (X - X.mean(0)) / X.std(0), (y - y.mean()) / y.std()
        fast, path = (IncrementalSVR(C=10.0, epsilon=0.1, gamma=1 / 7).fit(X[:600], y[:600]) for _ in range(2))
    else:
        X, y = load_waterflow_direction()
        fast, path = (IncrementalSVC(C=10.0, gamma=1.0, method="multiple").fit(X[:600], y[:600]) for _ in range(2))
    # (Two fits, not a copy: a copy holds its cache in another layout, and the path's sums
    # then round some margins 1 ulp apart.)
    built = {"directly": 0}
    shifted = path_module.SVCState._shifted

    def counting(self, *args):
        state, appended = shifted(self, *args)
        built["directly"] += state is not None
        return state, appended

    monkeypatch.setattr(path_module.SVCState, "_shifted", counting)

    def both(**kwargs):
        fast.update(**kwargs)
        with monkeypatch.context() as m:
            m.setattr(path_module.SVCState, "_shifted", lambda self, *args: (None, None))
            path.update(**kwargs)
        ours, theirs = _built_state(fast), _built_state(path)
        for name in ours:
            np.testing.assert_array_equal(ours[name], theirs[name], err_msg=name)
        assert fast.last_update_.n_breakpoints == path.last_update_.n_breakpoints

    def beyond(rows):  # the rows whose points the model puts beyond its margin (in the tube)
        if estimator == "IncrementalSVR":
            return rows[np.abs(y[rows] - np.asarray(fast.predict(X[rows]))) < 0.09]
        return rows[np.where(y[rows] == fast.classes_[1], 1.0, -1.0) * np.asarray(fast.decision_function(X[rows])) > 1.01]

    lo = 600
    for _ in range(60):  # a window of one point
        both(X_add=X[lo : lo + 1], y_add=y[lo : lo + 1], remove=fast.sample_ids_[:1])
        lo += 1
    at_zero = np.flatnonzero(np.asarray(fast.state_.alpha).reshape(-1, 2 if estimator == "IncrementalSVR" else 1)
                             .max(axis=1) == 0.0)
    middle = fast.sample_ids_[at_zero[len(at_zero) // 2 : len(at_zero) // 2 + 2]]
    both(remove=middle)  # removals alone, from the middle: the row buffer's view is left
    new = beyond(np.arange(lo, lo + 200))[:2]
    assert new.size == 2
    both(X_add=X[new], y_add=y[new])  # additions alone
    both(X_add=X[lo + 200 : lo + 201], y_add=y[lo + 200 : lo + 201], sample_weight_add=[0.0])  # weight 0
    lo += 201
    for _ in range(20):  # a window of two points
        both(X_add=X[lo : lo + 2], y_add=y[lo : lo + 2], remove=fast.sample_ids_[:2])
        lo += 2
    # A removed point at α = 0 whose coefficient in the kept share of the KKT scale is stale
    # (the coefficients of the scale's last read: a path may have moved the point to 0 since),
    # set alike in both models: the path takes its share out, so it must go the path's way.
    twins = 2 if estimator == "IncrementalSVR" else 1
    point = int(np.flatnonzero(fast.state_.alpha.reshape(-1, twins).max(axis=1) == 0.0)[0])
    for model in (fast, path):
        state = model.state_
        state.kkt_scale()  # a read: the share is kept
        state._share = state._share + 0.5 * np.abs(state.q_rows_block(np.array([twins * point]))[:, 0])
        state._share_coef[twins * point] = 0.5
    both(remove=fast.sample_ids_[point : point + 1])
    assert built["directly"] >= (40 if estimator == "IncrementalSVR" else 3)
    assert fast.check_kkt() <= 1e-9


@pytest.mark.parametrize("estimator", ["IncrementalSVC", "IncrementalSVR"])
@pytest.mark.parametrize("how", ["fit", "load"])
def test_a_fit_or_load_makes_the_memory_its_first_update_writes(tmp_path, estimator, how):
    # Issue 18: the first update after a fit paid for fresh pages (a row buffer for X, the
    # factor's arrays): SVCState.prepare_updates makes them at fit and load, and the first
    # update writes into them.
    import gpath
    from gpath import IncrementalSVR

    X, y = dataset("waterflow")
    if estimator == "IncrementalSVR":
        model = IncrementalSVR(C=10.0, epsilon=0.1, gamma=1.0).fit(X[:300], X[1:301, 0])
        y = X[1:, 0]
    else:
        model = IncrementalSVC(C=10.0, gamma=1.0).fit(X[:300], y[:300])
    if how == "load":
        model.save(tmp_path / "model.npz")
        model = gpath.load(tmp_path / "model.npz")
    state = model.state_
    buffer, spare = state._x_rows[0], state.factor.spare
    assert state._x_rows[2] is state.X and spare is not None
    for lo in range(300, 310):  # moved or not, each update appends its rows in the buffer
        model.update(X_add=X[lo : lo + 1], y_add=y[lo : lo + 1], remove=model.sample_ids_[:1])
        assert model.state_._x_rows[0] is buffer
    assert spare in (model.state_.factor, model.state_.factor.spare)  # the factor's arrays went round
    assert model.check_kkt() <= 1e-9


@pytest.mark.parametrize("kind", ["rbf", "linear", "poly"])
def test_decision_values_equal_the_kernel_blocks_product(kind):
    # The river models' predictions: one compiled pass a row instead of the kernel block.
    from gpath._engine import decision_values
    from gpath.kernels import Kernel

    rng = np.random.default_rng(3)
    X, Z = rng.normal(size=(7, 5)) * 3.0, rng.normal(size=(40, 5)) * 3.0
    coef = rng.normal(size=40)
    kernel = Kernel.from_params(kind, gamma=0.3, degree=3, coef0=1.5, X=Z)
    f = decision_values(kernel, X, Z, coef, -0.7)
    expected = kernel(X, Z) @ coef - 0.7
    assert np.abs(f - expected).max() <= 1e-12 * (np.abs(kernel(X, Z)) @ np.abs(coef)).max()
    # Where it does not apply, None (the caller takes the kernel block).
    assert decision_values(Kernel.from_params("sigmoid", 0.3, 3, 0.0, Z, svc=True), X, Z, coef, 0.0) is None
    assert decision_values(kernel, X.astype(np.float32), Z, coef, 0.0) is None
