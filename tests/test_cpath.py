"""SVCPath: the C regularization path against the exact reference at random C, KKT at every
breakpoint, and the edges (unbalanced classes, duplicates, C_min = C_max, C up to 1e6)."""

from __future__ import annotations

import io

import numpy as np
import pytest
from conftest import make_backend
from helpers import dataset, resolved_values, snapshot
from sklearn.exceptions import NotFittedError

import gpath
from gpath import SimpleSVC, SVCPath
from gpath._array_api import to_host
from gpath._cpath import _CPathRun, c_path, error_steps, interpolate
from gpath._engine import Engine
from gpath.cpath import start_state
from gpath.kernels import Kernel
from gpath.reference import exact_svc, kernel_matrix


def subset(name, n, seed=0):
    X, y = dataset(name)
    rows = np.random.default_rng(seed).permutation(len(y))[:n]
    return X[rows], y[rows]


def kkt_from_scratch(X, y_pm, alpha, b, C, gamma, ridge=1e-6, kernel="rbf", degree=3, coef0=0.0):
    """The largest KKT violation of (α, b) at C, from a fresh float64 kernel, relative to the
    scale of y f (``1 + max_i Σ_j |Q_ij| α_j``), and of yᵀα = 0 and the box relative to C."""
    K = kernel_matrix(X, X, kernel, gamma, degree, coef0)
    Q = np.outer(y_pm, y_pm) * (K + ridge * np.eye(len(y_pm)))
    g = Q @ alpha + y_pm * b - 1.0
    scale = 1.0 + float(np.max(np.abs(Q) @ alpha))
    stat = max(np.max(np.where(alpha < C * (1 - 1e-12), -g, -np.inf)), np.max(np.where(alpha > 0, g, -np.inf)))
    feas = max(abs(y_pm @ alpha), np.max(-alpha), np.max(alpha - C)) / C
    return max(stat / scale, feas, 0.0)


def check_against_reference(model, X, y, Cs, rtol=1e-7, X_device=None, rows=None):
    """At each C: α equals the reference's (to 1e-7 C), the decision values too (relative to
    their size) where the reference's bias is unique (a free margin point), and the path's
    solution is KKT-exact from scratch. ``rows``: each point's first duplicate; α is then
    compared summed over duplicates (their split is fixed only by the ridge: float64 round-off
    of the margins moves it by ~ε·C·n·max K / ridge, above 1e-7 C for ridge 1e-6)."""
    y_pm = np.where(y == model.classes_[1], 1.0, -1.0)
    k = model.kernel_
    params = dict(kernel=k.kind, degree=k.degree, coef0=k.coef0)
    for C in Cs:
        ref = exact_svc(X, y_pm, C, gamma=k.gamma, ridge=model.ridge, **params)
        assert ref.kkt <= 1e-9, f"reference not exact at C={C:g} (KKT {ref.kkt:.1e})"
        alpha, b = interpolate(model.path_, C)
        a, a_ref = (alpha, ref.alpha) if rows is None else (np.bincount(rows, alpha), np.bincount(rows, ref.alpha))
        np.testing.assert_allclose(a, a_ref, rtol=0, atol=1e-7 * C, err_msg=f"alpha at C={C:g}")
        assert kkt_from_scratch(X, y_pm, alpha, b, C, k.gamma, model.ridge, **params) <= 1e-9, f"KKT at C={C:g}"
        free = np.any((ref.alpha > 1e-9 * C) & (ref.alpha < C * (1 - 1e-9)))
        if free:
            f = to_host(model.decision_function(X if X_device is None else X_device, C))
            f_ref = ref.decision_function(X)
            err = np.abs(f - f_ref).max() / np.abs(f_ref).max()
            assert err <= rtol, f"decision values at C={C:g} differ by {err:.1e} (relative)"


@pytest.mark.parametrize("name,n,gamma", [("waterflow", 160, 10.0), ("bananas", 160, 1.0), ("breast_cancer", 120, 0.05)])
def test_path_equals_reference_at_20_random_C(backend, name, n, gamma):
    X, y = subset(name, n)
    model = SVCPath(C_min=1e-2, C_max=1e3, gamma=gamma).fit(backend.asarray(X), backend.asarray(y))
    p = model.path_
    assert p.Cs[0] == 1e-2 and p.Cs[-1] == 1e3 and np.all(np.diff(p.Cs) >= 0)
    assert p.alpha.shape == (p.Cs.size, n) and p.intercept.shape == (p.Cs.size,)
    assert p.n_breakpoints >= p.Cs.size - 2 > 0
    Cs = np.exp(np.random.default_rng(1).uniform(np.log(1e-2), np.log(1e3), 20))
    check_against_reference(model, X, y, Cs, X_device=backend.asarray(X))
    backend.check(model.decision_function(backend.asarray(X[:5]), 3.0), (5,))


@pytest.mark.parametrize("kernel,params", [("linear", {}), ("poly", dict(degree=2, coef0=1.0, gamma=0.02))])
def test_other_kernels(kernel, params):
    X, y = subset("breast_cancer", 150, seed=14)
    model = SVCPath(C_min=1e-3, C_max=1e2, kernel=kernel, **params).fit(X, y)
    check_against_reference(model, X, y, np.exp(np.random.default_rng(6).uniform(np.log(1e-3), np.log(1e2), 8)))


def test_every_breakpoint_is_kkt_exact():
    X, y = subset("waterflow", 200, seed=3)
    model = SVCPath(C_min=1e-3, C_max=1e4, gamma=10.0).fit(X, y)
    p = model.path_
    y_pm = np.where(y == 1, 1.0, -1.0)
    worst = max(kkt_from_scratch(X, y_pm, a, b, C, 10.0) for a, b, C in zip(p.alpha, p.intercept, p.Cs))
    assert worst <= 1e-9, worst
    # Between breakpoints the solution is linear in C: the middle of every segment is exact too.
    mids = 0.5 * (p.Cs[1:] + p.Cs[:-1])
    worst = max(kkt_from_scratch(X, y_pm, *interpolate(p, C), C, 10.0) for C in mids[::5])
    assert worst <= 1e-9, worst
    # The model's own check (the same rule, its kernel) agrees at both, to round-off.
    for C in np.concatenate([p.Cs[::7], mids[::5]]):
        own, ref = model.check_kkt(float(C)), kkt_from_scratch(X, y_pm, *interpolate(p, C), C, 10.0)
        assert own <= 1e-12 and abs(own - ref) <= 1e-13
    assert model.check_kkt() == model.check_kkt(1e4)  # at C_


def test_check_kkt_measures_a_wrong_alpha_and_refuses_a_C_off_the_path():
    import dataclasses

    X, y = subset("breast_cancer", 80, seed=2)
    model = SVCPath(C_min=0.1, C_max=10.0, gamma=0.05)
    with pytest.raises(NotFittedError):
        model.check_kkt()
    model.fit(X, y)
    before = snapshot(model)
    for C in (0.01, 11.0, "1", True):
        with pytest.raises(ValueError, match=r"C must be a real number in \[C_min, C_max\]"):
            model.check_kkt(C)
    assert snapshot(model) == before
    # α of a margin point moved by 1e-6 C: yᵀα is off by that share of C, its margin by
    # Q_kk·1e-6 C; the check reports it as the test's own float64 check does.
    p = model.path_
    alpha = p.alpha.copy()
    k = int(np.flatnonzero((alpha[-1] > 0) & (alpha[-1] < p.Cs[-1]))[0])
    alpha[-1, k] += 1e-6 * p.Cs[-1]
    model.path_ = dataclasses.replace(p, alpha=alpha)
    expected = kkt_from_scratch(X, np.where(y == model.classes_[1], 1.0, -1.0), alpha[-1], p.intercept[-1], 10.0, 0.05)
    assert expected >= 0.999e-6 and model.check_kkt() == pytest.approx(expected, rel=1e-9)  # (1e-6 to round-off)


def test_events_are_the_paths_and_match_the_numpy_path(backend):
    """Every event kind of the C path occurs on noisy data (margin coefficients reaching 0 and
    the moving box, points of O and I reaching the margin), and every backend follows the very
    same events as NumPy's compiled loop: array_api_strict (the readable loop) as it is, NumPy
    through the generic engine (the readable loop on NumPy arrays), so that each param compares
    two different codes."""
    X, y = subset("waterflow", 150, seed=2)
    y_pm = np.where(y == 1, 1.0, -1.0)
    kernel = Kernel("rbf", 10.0)
    reference = start_state(X, y_pm, kernel, 0.01, 1e-6)
    assert reference.engine.name == "numba"
    mine = start_state(backend.asarray(X), backend.asarray(y_pm), kernel, 0.01, 1e-6)
    if backend.name == "numpy":
        mine.engine = Engine(mine.xp, mine.device)
    assert mine.engine.name != "numba"
    logs = {"numpy compiled": [], backend.name: []}
    c_path(reference, 100.0, events=logs["numpy compiled"])
    c_path(mine, 100.0, events=logs[backend.name])
    assert len(logs["numpy compiled"]) > 0
    assert logs["numpy compiled"] == logs[backend.name]
    kinds = {kind for kind, _ in logs["numpy compiled"]}
    assert {"bound", "crossing"} <= kinds


@pytest.mark.parametrize(("name", "n", "gamma", "C_min", "C_max"), [
    ("waterflow", 400, 10.0, 1e-3, 1e4), ("bananas", 400, 1.0, 1e-2, 1e3), ("breast_cancer", 300, 0.05, 1e-2, 1e3),
])
def test_compiled_loop_passes_the_same_breakpoints_as_the_readable_one(name, n, gamma, C_min, C_max):
    """NumPy runs the compiled loop (gpath._cpath_numba), every other namespace the readable
    one: on NumPy arrays through the generic engine they must pass the same events and record
    the same path to round-off (its periodic repairs, record growth and returns to Python for
    new cache slots and factor rows included)."""
    X, y = subset(name, n, seed=11)
    y_pm = np.where(y == 1, 1.0, -1.0)
    kernel = Kernel("rbf", gamma)
    compiled, readable = start_state(X, y_pm, kernel, C_min, 1e-6), start_state(X, y_pm, kernel, C_min, 1e-6)
    readable.engine = Engine(readable.xp, readable.device)
    assert compiled.engine.name == "numba" and readable.engine.name == "generic"
    logs = [], []
    paths = [c_path(s, C_max, events=log) for s, log in zip((compiled, readable), logs)]
    assert logs[0] == logs[1] and len(logs[0]) > 64
    # To round-off: at C = 1e4 the margin matrix's condition leaves α (and so the breakpoints
    # in C, where a margin reaches its level) good to ~1e-8 relative (the compiled sums are
    # ordered otherwise than the generic ones; 1.9e-9 seen with NumPy 2.4).
    np.testing.assert_allclose(paths[0].Cs, paths[1].Cs, rtol=1e-8)
    np.testing.assert_allclose(paths[0].alpha, paths[1].alpha, rtol=0, atol=1e-8 * C_max)
    np.testing.assert_array_equal(paths[0].margin_size, paths[1].margin_size)


def test_a_repair_that_would_take_a_coefficient_out_of_its_box_leaves_the_path_exact(backend):
    """Bananas (two features) with a linear kernel at small C: hundreds of points on the
    margin of a rank-2 kernel, 𝐌 regular only through the ridge. The path's last repair of a
    round-off residual moved one margin coefficient past its box, and the clipped correction
    left the end 1e-3 off its KKT conditions: the path was refused (``fuzz_real_data.py``
    seed 47,696). The repair now keeps the coefficients where its clipped correction is worse."""
    X, y = subset("bananas", 1200, seed=0)
    model = SVCPath(C_min=1e-3, C_max=1e-2, kernel="linear").fit(backend.asarray(X), backend.asarray(y))
    assert model.path_.margin_size.max() > 100
    y_pm = np.where(y == model.classes_[1], 1.0, -1.0)
    for C in (1e-3, 2e-3, 5e-3, 1e-2):
        alpha, b = interpolate(model.path_, C)
        assert kkt_from_scratch(X, y_pm, alpha, b, C, 1.0, model.ridge, kernel="linear") <= 1e-9, C
        assert model.check_kkt(C=C) <= 1e-9


@pytest.mark.parametrize("loop", ["compiled", "readable", "array_api_strict"])
def test_a_crossing_at_a_rate_of_round_off_is_no_event_and_the_path_does_not_cycle(loop):
    """Bananas, 1,705 standardized rows, a linear kernel at C from 0.0015: 770 points on the
    margin of a rank-2 kernel. One point of I, its margin rate 6e-13 (four ε of its own
    terms), entered M at a zero-length step and left it at the next, its α rate as unsure on
    a margin matrix that only the ridge keeps regular: 3,421 times, and the path was refused
    as cycling (a targeted search, seed 96). Such a crossing is now no event; the path is
    KKT-exact from scratch along its whole length, by either loop: the compiled one, the
    readable one on NumPy arrays, and the readable one on array_api_strict's non-default
    device (where this path happens not to cycle even before, but runs every check)."""
    X, y = dataset("bananas")
    rng = np.random.default_rng(96)
    n = int(rng.integers(300, 2000))  # the search's draws, in its order
    rows = rng.permutation(len(y))[:n]
    X, y = X[rows], y[rows]
    X = (X - X.mean(0)) / X.std(0)
    y_pm = np.where(y == 1, 1.0, -1.0)
    C_min, C_max = 0.00148, 0.0147
    on = make_backend("array_api_strict") if loop == "array_api_strict" else make_backend("numpy")
    state = start_state(on.asarray(X), on.asarray(y_pm), Kernel("linear"), C_min, 1e-6)
    if loop == "readable":
        state.engine = Engine(state.xp, state.device)
    assert (state.engine.name == "numba") == (loop == "compiled")
    path = c_path(state, C_max)
    assert n == 1705 and path.margin_size.max() > 500
    for C in np.geomspace(C_min, C_max, 5):
        alpha, b = interpolate(path, C)
        assert kkt_from_scratch(X, y_pm, alpha, b, C, 1.0, 1e-6, kernel="linear") <= 1e-9, C


def test_the_record_grows_in_place_and_copies_an_array_only_while_something_else_holds_it():
    """The record of a long path (C, b, |M| and α at every point) is resized in place, with
    every point recorded so far and zeros after them; where a view holds one of its arrays,
    NumPy refuses to move it and that array alone is copied, the view left reading the old."""
    run = object.__new__(_CPathRun)
    alpha = np.arange(12.0).reshape(4, 3)
    run.rec = [np.arange(4.0), np.arange(4.0) + 10, np.arange(4), alpha.copy(), np.array([4])]
    ids = [id(a) for a in run.rec]
    run._resize_record(8)
    assert [id(a) for a in run.rec] == ids
    np.testing.assert_array_equal(run.rec[3], np.vstack([alpha, np.zeros((4, 3))]))
    np.testing.assert_array_equal(run.rec[2], [0, 1, 2, 3, 0, 0, 0, 0])
    view = run.rec[3][:2]
    run._resize_record(3)
    assert [id(a) for a in run.rec[:3]] == ids[:3] and id(run.rec[3]) != ids[3]
    np.testing.assert_array_equal(run.rec[3], alpha[:3])
    np.testing.assert_array_equal(run.rec[0], [0.0, 1.0, 2.0])
    np.testing.assert_array_equal(view, alpha[:2])


def test_empty_margin_segment_keeps_an_optimal_bias():
    """Balanced classes at tiny C: every point in I and M empty (section 3.3 with δ = 0, the
    only empty margin a C path meets, since yᵀα = C y_Iᵀ1 must vanish); the bias is only
    bounded there, the path keeps one optimal value until a point reaches the margin."""
    X, y = subset("breast_cancer", 400, seed=12)
    rows = np.concatenate([np.flatnonzero(y == 0)[:60], np.flatnonzero(y == 1)[:60]])
    X, y = X[rows], y[rows]
    model = SVCPath(C_min=1e-4, C_max=10.0, gamma=0.05).fit(X, y)
    p = model.path_
    assert p.margin_size[0] == 0 and np.all(p.alpha[0] == 1e-4)
    check_against_reference(model, X, y, [1e-4, 2e-4, 1e-3, 0.05, 1.0, 7.0])


def test_unbalanced_classes_and_duplicates():
    X, y = subset("bananas", 400, seed=5)
    keep = np.flatnonzero(y == 0)[:150].tolist() + np.flatnonzero(y == 1)[:25].tolist()  # 6 : 1
    X, y = X[keep], y[keep]
    X = np.concatenate([X, X[:20], X[-10:]])  # duplicate rows of both classes
    y = np.concatenate([y, y[:20], y[-10:]])
    model = SVCPath(C_min=1e-3, C_max=1e3, gamma=1.0).fit(X, y)
    Cs = np.exp(np.random.default_rng(4).uniform(np.log(1e-3), np.log(1e3), 12))
    first = np.unique(X, axis=0, return_inverse=True)[1].ravel()
    check_against_reference(model, X, y, Cs, rows=first)


def test_c_min_equals_c_max():
    X, y = subset("breast_cancer", 100)
    model = SVCPath(C_min=2.0, C_max=2.0, gamma=0.05).fit(X, y)
    assert model.path_.Cs.tolist() == [2.0] and model.path_.n_breakpoints == 0
    check_against_reference(model, X, y, [2.0])
    model.select(X[:50], y[:50])
    assert model.C_ == 2.0
    assert model.validation_error_.Cs.tolist() == [2.0, 2.0]
    assert model.validation_error_.error.shape == (1,)


def test_wide_range_up_to_1e6_stays_exact():
    """Large C: terms of y f up to C max K; the repairs keep the path exact relative to that
    scale. At C = 2.5e5 and 1e6 the exact reference (LIBSVM's sets re-solved in float64 and
    repaired) must certify itself; the path equals it to the accuracy the margin matrix's
    condition allows, and agrees with SimpleSVC's exact fit too."""
    X, y = subset("waterflow", 120, seed=7)
    model = SVCPath(C_min=1e-3, C_max=1e6, gamma=30.0).fit(X, y)
    check_against_reference(model, X, y, [1e-3, 0.37, 55.0, 4e3])
    y_pm = np.where(y == 1, 1.0, -1.0)
    p = model.path_
    worst = max(kkt_from_scratch(X, y_pm, a, b, C, 30.0) for a, b, C in zip(p.alpha, p.intercept, p.Cs))
    assert worst <= 1e-9, worst
    Q = np.outer(y_pm, y_pm) * (kernel_matrix(X, X, "rbf", 30.0) + model.ridge * np.eye(len(y)))
    for C in (2.5e5, 1e6):
        alpha, _ = interpolate(p, C)
        f = model.decision_function(X, C)
        ref = exact_svc(X, y_pm, C, gamma=30.0, ridge=model.ridge)
        assert ref.certified, f"reference not exact at C={C:g} (KKT {ref.kkt:.1e})"
        # Here the margin matrix [[0, y_Mᵀ], [y_M, Q_MM]] of the reference's free set has a
        # condition number near 1e8: α itself is determined only to about 1e-7 C, the decision
        # values to max(1e-7, 100 eps cond) relative (as tests/test_reference.py allows).
        m = np.flatnonzero((ref.alpha > 1e-9 * C) & (ref.alpha < C * (1 - 1e-9)))
        assert m.size > 0
        big = np.zeros((m.size + 1, m.size + 1))
        big[0, 1:] = big[1:, 0] = y_pm[m]
        big[1:, 1:] = Q[np.ix_(m, m)]
        cond = np.linalg.cond(big)
        np.testing.assert_allclose(alpha, ref.alpha, rtol=0, atol=1e-6 * C, err_msg=f"alpha at C={C:g}")
        f_ref = ref.decision_function(X)
        err = np.abs(f - f_ref).max() / np.abs(f_ref).max()
        assert err <= max(1e-7, 100 * np.finfo(float).eps * cond), (C, err, cond)
        # SimpleSVC (gpath's other exact solver) agrees as well.
        simple = SimpleSVC(C=C, gamma=30.0).fit(X, y)
        np.testing.assert_allclose(alpha, simple.alpha_, rtol=0, atol=1e-6 * C)
        f_simple = simple.decision_function(X)
        assert np.abs(f - f_simple).max() <= 1e-7 * np.abs(f_simple).max()


def check_ill_conditioned(backend, model, X, y, Cs):
    """At each C: ``check_kkt`` to round-off, and the decision values within 1e-6 of the
    certified re-solve's (:func:`resolved_values`)."""
    y_pm = np.where(y == 1, 1.0, -1.0)
    k = model.kernel_
    K = kernel_matrix(X, X, k.kind, k.gamma, k.degree, k.coef0)
    for C in Cs:
        assert model.check_kkt(float(C)) <= 1e-13, C
        alpha, _ = interpolate(model.path_, float(C))
        f_ref, kkt, _ = resolved_values(K, y_pm, alpha, float(C), model.ridge)
        assert kkt <= 1e-9, (C, kkt)
        f = backend.check(model.decision_function(backend.asarray(X), float(C)), (len(y),))
        assert np.abs(f - f_ref).max() <= 1e-6 * np.abs(f_ref).max(), C


def test_a_long_segment_ends_as_exact_as_a_fit(backend):
    """One segment from C = 1 to 4,000 (no event between) with 𝐌 near-singular: a rank-one
    kernel (x x')² on 112 Gaussian points, 57 of them on the margin, the ridge 1e-6 holding
    𝐌's condition near 1e10. The step left the end's margin equations 8.6e-12 off (within
    the periodic check's 1e-10) and its decision values 1e-4 from the reference's; the end is
    refined to round-off, as a fit ends. (``fuzz_references.py`` found it, seed 36,008,150.)"""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(112, 1))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=112) > 0, 1, -1)
    model = SVCPath(C_min=1.0, C_max=4e3, kernel="poly", degree=2, gamma=7.0, coef0=0.0)
    model.fit(backend.asarray(X), backend.asarray(y))
    assert model.path_.Cs.tolist() == [1.0, 4e3] and model.path_.margin_size[-1] > 40
    check_ill_conditioned(backend, model, X, y, [4e3, 2e3])


def test_the_start_holds_its_margins_to_round_off_for_the_whole_path(backend):
    """The path takes its driver u = Q[:, I] w_I from the start's margins, and every unit of
    C carries u's error on to them. A fit refines to 1e-10; this one (138 Gaussian points,
    the rank-one kernel (3.16 x x')², the ridge 1e-6) ended at 2.1e-11, and the path's
    decision values drifted to 1e-4 from the reference's by C = 1,378, every point after
    C_min off by as much. The start is refined to round-off first. (A random search of
    ill-conditioned paths found it.)"""
    rng = np.random.default_rng(18)
    rng.integers(40, 150), rng.integers(1, 3)  # (the search's draws of n and d: 138, 1)
    X = rng.normal(size=(138, 1))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=138) > 0, 1, -1)
    model = SVCPath(C_min=0.0373, C_max=3041.0, kernel="poly", degree=2, gamma=3.16, coef0=0.0)
    model.fit(backend.asarray(X), backend.asarray(y))
    Cs = model.path_.Cs
    assert Cs.size > 5
    check_ill_conditioned(backend, model, X, y, np.sqrt(Cs[1:] * Cs[:-1]))  # every segment's middle


def test_error_steps_are_exact_on_a_hand_made_path():
    Cs = np.array([1.0, 2.0, 2.0, 4.0])
    # point 0: +1 throughout; point 1: crosses 0 at C = 1.5 going down; point 2: jumps at C = 2
    # (a repeated C), then crosses back up at C = 3.
    F = np.array([[1.0, 1.0, 1.0, 1.0], [1.0, -1.0, -1.0, -1.0], [1.0, 1.0, -1.0, 1.0]])
    positive = np.array([True, True, True])
    knots, errors = error_steps(Cs, F, positive)
    assert knots.tolist() == [1.0, 1.5, 2.0, 3.0, 4.0]
    assert errors.tolist() == [0, 1, 2, 1]
    knots, errors = error_steps(Cs, F, np.array([False, False, True]))
    assert errors.tolist() == [2, 1, 2, 1]


def test_select_finds_the_exact_validation_minimum():
    X, y = subset("waterflow", 400, seed=8)
    Xt, yt, Xv, yv = X[:250], y[:250], X[250:], y[250:]
    model = SVCPath(C_min=1e-2, C_max=1e3, gamma=10.0).fit(Xt, yt).select(Xv, yv)
    curve = model.validation_error_
    assert curve.Cs[0] <= model.C_ <= curve.Cs[-1]
    assert curve.best_error == curve.error.min()
    assert np.mean(model.predict(Xv) != yv) == pytest.approx(curve.best_error, abs=1e-15)
    # The curve at random C is the error of the exact model there.
    y_pm = np.where(yt == 1, 1.0, -1.0)
    for C in np.exp(np.random.default_rng(9).uniform(np.log(1e-2), np.log(1e3), 10)):
        ref = exact_svc(Xt, y_pm, C, gamma=10.0)
        f_ref = ref.decision_function(Xv)
        i = int(np.searchsorted(curve.Cs, C, side="right")) - 1
        sure = np.abs(f_ref) > 1e-6 * np.abs(f_ref).max()
        wrong = (f_ref > 0) != (yv == 1)
        on_curve = round(curve.error[i] * len(yv))
        assert abs(on_curve - np.count_nonzero(wrong)) <= np.count_nonzero(~sure)


def test_bad_parameters_and_inputs_are_refused_and_change_nothing():
    X, y = subset("breast_cancer", 60)
    for kw, needle in [(dict(C_min=0.0), "C_min"), (dict(C_max=np.inf), "C_max"),
                       (dict(C_min=10.0, C_max=1.0), "C_min must be <= C_max"), (dict(ridge=-1.0), "ridge"),
                       (dict(gamma="wide"), "gamma"), (dict(kernel="sigmoid"), "kernel")]:
        with pytest.raises(ValueError, match=needle):
            SVCPath(**kw).fit(X, y)
    model = SVCPath(C_min=0.1, C_max=10.0, gamma=0.05)
    with pytest.raises(NotFittedError):
        model.predict(X)
    model.fit(X, y)
    before = snapshot(model)
    for C in (0.01, 11.0, "1", np.nan):
        with pytest.raises(ValueError, match=r"C must be a real number in \[C_min, C_max\]"):
            model.decision_function(X, C)
    with pytest.raises(ValueError, match="y_val"):
        model.select(X, np.full(len(y), 7))
    with pytest.raises(ValueError, match="features"):
        model.select(X[:, :3], y)
    with pytest.raises(ValueError, match="two classes|1 class"):
        model.fit(X, np.zeros(len(y)))
    assert snapshot(model) == before


def test_clone_pickle_and_score_like_a_scikit_learn_classifier():
    import pickle

    from sklearn.base import clone

    X, y = subset("breast_cancer", 120, seed=13)
    model = SVCPath(C_min=0.5, C_max=5.0, gamma=0.05)
    assert clone(model).get_params() == model.get_params()
    model.fit(X, y)
    again = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(again.decision_function(X, 2.0), model.decision_function(X, 2.0))
    assert model.score(X, y) == np.mean(model.predict(X) == y)  # at C_ = C_max
    assert model.C_ == 5.0


def test_the_start_is_checked_as_a_loaded_path_ends_are():
    # The exact start at C_min must satisfy the KKT conditions to 1e-9 (the check of a loaded
    # path's ends), and no more: breast cancer a tenth of its raw size with a linear kernel at
    # C_min = 1000 (margins that sum terms of 6e7) fits, as the same range reached from C_min = 1
    # does, and loads. (Raw, the terms reach 6e9: float64 resolves y f to 1.3e-6 only, and the
    # path raises "beyond float64", as a fit does.)
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    for C_min in (1.0, 1e3):
        path = SVCPath(C_min=C_min, C_max=1e4, kernel="linear").fit(X[:200] / 10.0, y[:200])
        buffer = io.BytesIO()
        gpath.save(path, buffer)
        buffer.seek(0)
        gpath.load(buffer)  # re-checks the KKT conditions at both ends from scratch
