"""SimpleSVC (Vishwanathan, Smola & Murty 2003): exact active-set training."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_exact, count_condition_estimates, dataset, reference_svc, resolved_values, snapshot
from sklearn.utils.estimator_checks import check_estimator

import gpath._smo
from gpath import IncrementalSVC, NotSeparableError, PathError, SimpleSVC
from gpath._array_api import to_host
from gpath.datasets import load_digits_binary
from gpath.reference import exact_svc, kernel_matrix


def _data(name):
    if name == "digits":
        return load_digits_binary()
    X, y = dataset(name)
    return (X[:1000], y[:1000]) if name == "bananas" else (X, y)


@pytest.mark.parametrize("name,gamma", [("breast_cancer", 0.05), ("digits", "scale"), ("bananas", 1.0)])
@pytest.mark.parametrize("C", [0.01, 1.0, 100.0])
def test_exact_on_real_data(backend, name, gamma, C):
    X, y = _data(name)
    model = SimpleSVC(C=C, gamma=gamma, random_state=0).fit(backend.asarray(X), backend.asarray(y))
    assert_exact(model, X, y, X_device=backend.asarray(X))
    backend.check(model.dual_coef_, (1, len(model.support_)))
    assert model.n_iter_ > 0
    # Kernel evaluations (the paper's measure, under the paper's rule): far fewer than the n²
    # of a full kernel.
    paper = SimpleSVC(C=C, gamma=gamma, random_state=0, init="closest_pair", block_size=1).fit(X, y)
    assert 0 < paper.n_kernel_evaluations_ < len(y) ** 2
    np.testing.assert_allclose(paper.alpha_, model.alpha_, rtol=1e-6, atol=1e-9 * C)


@pytest.mark.parametrize("name,gamma", [("breast_cancer", 0.05), ("bananas", 1.0)])
@pytest.mark.parametrize("C", [1e-3, 1.0, 1e5])
def test_every_block_size_gives_the_exact_model(backend, name, gamma, C):
    # The paper's rule (one violator per iteration), gpath's default block, an odd one and
    # one larger than most working sets: the same exact solution, on numpy and on
    # array_api_strict (whose kernel blocks take the generic, centred-once path).
    X, y = _data(name)
    X, y = X[:600], y[:600]
    Xd, yd = backend.asarray(X), backend.asarray(y)
    alphas, iterations = [], []
    for block_size in (1, 3, None, 200):
        model = SimpleSVC(C=C, gamma=gamma, random_state=0, init="closest_pair", block_size=block_size).fit(Xd, yd)
        working_set = model.fit_stats_.working_set_size
        assert_exact(model, X, y, X_device=Xd)
        alphas.append(model.alpha_)
        iterations.append(model.n_iter_)
    # SMO's start (the default on NumPy; a host copy of X on other namespaces): the same model.
    model = SimpleSVC(C=C, gamma=gamma, init="smo").fit(Xd, yd)
    assert model.fit_stats_.start == "smo" and model.fit_stats_.n_smo_iter > 0
    assert_exact(model, X, y, X_device=Xd)
    alphas.append(model.alpha_)
    for alpha in alphas[1:]:
        np.testing.assert_allclose(alpha, alphas[0], rtol=1e-6, atol=1e-9 * C)
    assert iterations[-1] <= iterations[0]  # blocks: fewer, larger iterations
    if working_set >= 64:  # (blocks enter one point per 16 of Swork; none below 32)
        assert iterations[-1] < iterations[0]


def test_same_problem_as_incremental():
    X, y = dataset("breast_cancer")
    a = SimpleSVC(C=10.0, gamma=0.05).fit(X[:300], y[:300])
    b = IncrementalSVC(C=10.0, gamma=0.05).fit(X[:300], y[:300])
    np.testing.assert_allclose(a.alpha_, b.alpha_, atol=1e-10)
    np.testing.assert_allclose(a.decision_function(X[300:]), b.decision_function(X[300:]), atol=1e-10)


def test_squared_hinge_is_hard_margin_on_k_plus_identity_over_c(backend):
    X, y = dataset("breast_cancer")
    X, y = X[:250], y[:250]
    C = 2.0
    model = SimpleSVC(C=C, gamma=0.05, loss="squared_hinge").fit(backend.asarray(X), backend.asarray(y))
    y_pm = np.where(y == 1, 1.0, -1.0)
    # The quadratic soft margin is the hard margin on K + I/C: LIBSVM with a huge C on it.
    ref = exact_svc(X, y_pm, 1e12, "rbf", 0.05, ridge=model.ridge + 1.0 / C)
    assert ref.kkt <= 1e-9
    f = backend.check(model.decision_function(backend.asarray(X)), (len(y),))
    np.testing.assert_allclose(f, ref.decision_function(X), atol=1e-8)
    assert to_host(model.alpha_).max() > C  # no upper bound


def test_hard_margin_on_separable_data_and_error_otherwise(backend):
    X, y = dataset("breast_cancer")
    model = SimpleSVC(C=np.inf, gamma=0.05).fit(backend.asarray(X), backend.asarray(y))
    y_pm = np.where(y == 1, 1.0, -1.0)
    alpha = to_host(model.alpha_)
    K = kernel_matrix(X, X, "rbf", 0.05) + model.ridge * np.eye(len(y))
    yf = y_pm * (K @ (y_pm * alpha) + float(to_host(model.intercept_)[0]))
    assert yf.min() >= 1 - 1e-9  # every point outside the margin: separated
    np.testing.assert_allclose(yf[alpha > 0], 1.0, atol=1e-9)
    # The model's own decision values (new rows: no ridge), on the backend's device.
    f = backend.check(model.decision_function(backend.asarray(X)), (len(y),))
    f_host = kernel_matrix(X, X, "rbf", 0.05) @ (y_pm * alpha) + float(to_host(model.intercept_)[0])
    np.testing.assert_allclose(f, f_host, rtol=0, atol=1e-9 * np.abs(f_host).max())
    Xb, yb = dataset("bananas")
    with pytest.raises(NotSeparableError, match="not separable"):
        SimpleSVC(C=np.inf, gamma=0.05).fit(backend.asarray(Xb[:300]), backend.asarray(yb[:300]))


@pytest.mark.parametrize("init", ["closest_pair", "smo"])
def test_numpy_and_array_api_strict_agree(init):
    from conftest import make_backend

    X, y = dataset("breast_cancer")
    results = []
    for name in ("numpy", "array_api_strict"):
        b = make_backend(name)
        m = SimpleSVC(C=1.0, gamma=0.05, init=init, random_state=3).fit(b.asarray(X), b.asarray(y))
        assert m.fit_stats_.start == init
        results.append((m.alpha_, to_host(m.decision_function(b.asarray(X))), m.n_iter_))
    np.testing.assert_allclose(results[0][0], results[1][0], atol=1e-12)
    np.testing.assert_allclose(results[0][1], results[1][1], atol=1e-12)
    assert results[0][2] == results[1][2]


@pytest.mark.parametrize("ridge", [1e-6, 0.0])
def test_duplicates_and_opposite_duplicates(ridge):
    X, y = dataset("bananas")
    X = np.vstack([X[:150], X[:60], X[:40]])
    y = np.concatenate([y[:150], y[:60], 1 - y[:40]])  # copies, and copies with flipped labels
    model = SimpleSVC(C=1.0, gamma=1.0, ridge=ridge).fit(X, y)
    assert model.check_kkt(X, y) <= 1e-9
    if ridge:
        assert_exact(model, X, y)


@pytest.mark.parametrize("params,match", [
    (dict(loss="log"), "loss must be one of"), (dict(C=0.0), "C must be"), (dict(tol=-1.0), "tol must be"),
    (dict(init="nearest"), "init must be one of"), (dict(max_iter=0), "max_iter must be"),
])
def test_bad_parameters(params, match):
    X, y = dataset("breast_cancer")
    with pytest.raises(ValueError, match=match):
        SimpleSVC(**params).fit(X[:50], y[:50])


def test_refit_failure_keeps_the_previous_model():
    X, y = dataset("breast_cancer")
    model = SimpleSVC(C=1.0, gamma=0.05).fit(X[:100], y[:100])
    before = snapshot(model)
    with pytest.raises(ValueError, match="must be finite"):
        model.fit(np.where(np.arange(30)[:, None] == 3, np.nan, X[:30]), y[:30])
    assert snapshot(model) == before


@pytest.mark.parametrize("estimator", [SimpleSVC(), IncrementalSVC()], ids=lambda e: type(e).__name__)
def test_scikit_learn_estimator_checks(estimator):
    # Every check of check_estimator passes (check_array_api_input, which scikit-learn skips
    # unless SCIPY_ARRAY_API=1, runs in a subprocess below).
    # As scikit-learn's own SVC: weights are not repeated rows (gamma="scale" is computed from
    # the rows, and the ridge on the kernel diagonal treats a copy as another point).
    why = "sample_weight is not equivalent to removing or repeating samples (gamma='scale', ridge)"
    expected = {"check_sample_weight_equivalence_on_dense_data": why,
                "check_sample_weight_equivalence_on_sparse_data": why}
    results = check_estimator(estimator, on_fail=None, expected_failed_checks=expected)
    failed = [(r["check_name"], str(r["exception"])[:200]) for r in results if r["status"] == "failed"]
    assert failed == []


def test_scikit_learn_array_api_check_in_a_fresh_interpreter():
    # The one check scikit-learn skips above needs SCIPY_ARRAY_API=1 before SciPy is
    # imported: run it in a subprocess with the variable set.
    import os
    import subprocess
    import sys

    code = (
        "from sklearn.utils.estimator_checks import check_array_api_input\n"
        "from gpath import IncrementalSVC, SimpleSVC\n"
        "for est in (SimpleSVC(), IncrementalSVC()):\n"
        "    check_array_api_input(type(est).__name__, est, array_namespace='numpy',\n"
        "                          expect_only_array_outputs=False)\n"
        "print('passed')\n"
    )
    env = {**os.environ, "SCIPY_ARRAY_API": "1"}
    out = subprocess.run([sys.executable, "-c", code], check=False, env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0 and out.stdout.strip() == "passed", out.stderr[-2000:]


# ---------------------------------------------------------------- large C, kernels
@pytest.mark.parametrize("kernel,params,C", [
    ("rbf", {"gamma": 0.05}, 1e4), ("linear", {}, 0.1), ("poly", {"degree": 2, "coef0": 1.0, "gamma": 0.02}, 1.0),
])
def test_exact_large_c_and_other_kernels(kernel, params, C):
    X, y = dataset("breast_cancer")
    model = SimpleSVC(C=C, kernel=kernel, random_state=1, **params).fit(X, y)
    assert_exact(model, X, y)


@pytest.mark.parametrize("estimator", [SimpleSVC, IncrementalSVC])
def test_a_linear_kernel_in_two_features_needs_no_condition_estimates(monkeypatch, backend, estimator):
    # Bananas (two features, scaled by 17.3), linear, C = 1.2: 254 points end in the working
    # set, whose matrix has rank 3 but for the ridge. Every point past the third entered with
    # a pivot near the ridge, "tiny" beside the diagonal, and took a condition estimate and a
    # new factor, O(|W|³) each (417 of each; at 2,285 points 45 s of a 48 s fit). The ridge
    # bounds those pivots from below (the factor's floor): none is needed, and the model is
    # the exact one: its KKT conditions hold from scratch and its decision values are the
    # certified reference's. (Not its α: a matrix of condition ~1e12 determines α_M only to
    # some 0.04 along its near-null directions, which move f by the ridge's 1e-6 share of
    # them; the old code's α were as far from the reference's, and as exact.)

    estimates = count_condition_estimates(monkeypatch)
    X, y = dataset("bananas")
    X, y = X[:600] * 17.3, y[:600]
    Xd = backend.asarray(X)
    model = estimator(C=1.2, kernel="linear").fit(Xd, backend.asarray(y))
    assert estimates == []
    if estimator is SimpleSVC:
        assert model.fit_stats_.working_set_size > 100
    assert (model.check_kkt(Xd, y) if estimator is SimpleSVC else model.check_kkt()) <= 1e-9
    ref = reference_svc(X, np.where(y == model.classes_[1], 1.0, -1.0), 1.2, "linear", 1.0, 3, 0.0, model.ridge)
    assert ref.certified
    f_ref = ref.decision_function(X)
    assert np.abs(to_host(model.decision_function(Xd)) - f_ref).max() <= 1e-7 * np.abs(f_ref).max()


@pytest.mark.parametrize("scale", [100.0, 510.0])
def test_the_iteration_does_not_depend_on_the_kernels_scale(backend, scale):
    # Breast cancer's raw features (up to 4e3) times 100 or 510 on a linear kernel, C divided
    # by the scale's square: K up to 1e12 instead of 5e7, the same problem as the unscaled one
    # with the ridge divided by the scale's square. Its margin matrix read as singular (its
    # condition number grew with K's square: see test_linalg's
    # test_whether_a_tiny_pivot_is_singular_does_not_depend_on_the_kernels_scale): SimpleSVM
    # stepped along null directions that were none, its objective rose, and it cycled to its
    # cap of 7,000 iterations, where unscaled it takes some 50, and took what it had for a
    # stall at round-off: check_kkt() read 1e-11 (relative to y f's scale, 1e9), its decision
    # values were 0.3–0.5 % off the exact ones. (fuzz_real_data seed 22,124 cycled into a
    # PathError.) Now it iterates as unscaled, to the model that its index sets certify
    # (LIBSVM agrees, in 15–40 s a problem).
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    X, y = X[:300], y[:300]
    C, ridge = 26.01 / scale**2, 1e-6
    unscaled = SimpleSVC(C=C * scale**2, kernel="linear", ridge=ridge / scale**2, random_state=0).fit(X, y)
    X = X * scale
    Xd = backend.asarray(X)
    model = SimpleSVC(C=C, kernel="linear", ridge=ridge, random_state=0).fit(Xd, backend.asarray(y))
    assert model.fit_stats_.converged and model.n_iter_[0] <= 2 * unscaled.n_iter_[0] + 10
    assert model.check_kkt(Xd, y) <= 1e-9
    alpha = np.zeros(len(y))
    alpha[to_host(model.support_)] = np.abs(to_host(model.dual_coef_)[0])
    f_ref, kkt, _ = resolved_values(kernel_matrix(X, X, "linear", 1.0), np.where(y == 1, 1.0, -1.0), alpha, C, ridge)
    assert kkt <= 1e-9
    assert np.abs(to_host(model.decision_function(Xd)) - f_ref).max() <= 1e-6 * np.abs(f_ref).max()


@pytest.mark.parametrize("estimator", [SimpleSVC, IncrementalSVC])
def test_zero_rows_beside_features_of_size_1e7_are_fitted_exactly(backend, estimator):
    # One feature of size up to 1.8e7 with seven exact zeros, a linear kernel at C = 0.004
    # (fuzz_surfaces seed 5,002,000): the zero rows' Q_kk is the ridge 1e-6, beside Q_kk up
    # to 3e14. The factor's shift ρ y yᵀ, ρ the largest diagonal, drowned the zero rows (and
    # its tiny-pivot test and condition estimate, against the largest diagonal, took them for
    # singular): SimpleSVM cycled among them, 4e-9 off in units of y f, and the fit was
    # refused. Five of the zero rows are on the margin of the exact solution.
    x = [0.0, -17985069.99513217, 12497719.766440714, -0.0, -0.0, -11658120.669246716, -0.0, 0.0,
         5035198.1968409885, 0.0, -0.0, 17657788.228601836, 8285861.251772702]
    X, y = np.array(x)[:, None], np.array([-1, -1, 1, -1, 1, -1, -1, -1, 1, -1, 1, 1, 1])
    C, ridge = 0.004072057571047787, 1e-6
    model = estimator(C=C, kernel="linear").fit(backend.asarray(X), backend.asarray(y))
    alpha = np.zeros(len(y))
    alpha[to_host(model.support_)] = np.abs(to_host(model.dual_coef_)[0])
    assert np.sum((alpha > 0) & (alpha < C) & (X[:, 0] == 0.0)) == 5
    f_ref, kkt, _ = resolved_values(kernel_matrix(X, X, "linear", 1.0), np.where(y == 1, 1.0, -1.0), alpha, C, ridge)
    assert kkt <= 1e-12
    f = to_host(model.decision_function(backend.asarray(X)))
    assert np.abs(f - f_ref).max() <= 1e-12 * np.abs(f_ref).max()


def test_a_cycle_to_the_cap_is_not_passed_off_as_a_stall(monkeypatch):
    # The problem above with the old, unscaled condition estimate: SimpleSVM cycles to its cap
    # of 7,000 iterations with a violation of 0.025 units of y f, 1e-11 of the scale of y f.
    # That passed as a stall at round-off (relative to that scale, below 1e-10) and the model,
    # 0.3 % off, was returned; a cycle must be round-off in units of y f too, and raises.
    # (NumPy only: the rule is the host's, and the cap's 7,000 iterations take 22 s on
    # array_api_strict; the test above runs both.)
    from sklearn.datasets import load_breast_cancer

    from gpath.linalg import BorderedFactor

    monkeypatch.setattr(BorderedFactor, "_equilibration",
                        lambda self, diagonal: (1.0 if self.bordered else 0.0, np.ones(diagonal.shape[0])))
    X, y = load_breast_cancer(return_X_y=True)
    X, y = X[:300] * 100.0, y[:300]
    model = SimpleSVC(C=26.01 / 1e4, kernel="linear")
    with pytest.raises(PathError, match="did not finish after 7000 iterations.*the model is unchanged"):
        model.fit(X, y)
    assert not hasattr(model, "dual_coef_")


def test_an_iterations_block_enters_by_one_factor_step_or_one_point_at_a_time_alike(monkeypatch, backend):
    # Several violators entering together go into the factor by one block step (level 3: R
    # read once); where the block meets a tiny pivot they go one at a time. Both ways give the
    # same exact model (Bananas × 17.3, linear: |Swork| = 254, blocks of up to 14).
    from gpath.linalg import BorderedFactor

    X, y = dataset("bananas")
    X, y = X[:600] * 17.3, y[:600]
    Xd, yd = backend.asarray(X), backend.asarray(y)
    original, blocks = BorderedFactor.insert_block, []
    monkeypatch.setattr(BorderedFactor, "insert_block",
                        lambda self, points, *args: blocks.append(len(points)) or original(self, points, *args))
    by_blocks = SimpleSVC(C=1.2, kernel="linear", init="closest_pair", random_state=0).fit(Xd, yd)
    assert len(blocks) > 10 and max(blocks) > 8
    monkeypatch.setattr(BorderedFactor, "insert_block", lambda self, *args: False)
    by_points = SimpleSVC(C=1.2, kernel="linear", init="closest_pair", random_state=0).fit(Xd, yd)
    # (Exact as the test above has it: the KKT conditions from scratch and the reference's
    # decision values; α_M is determined only to some 0.04 along the near-null directions.)
    ref = reference_svc(X, np.where(y == by_blocks.classes_[1], 1.0, -1.0), 1.2, "linear", 1.0, 3, 0.0,
                        by_blocks.ridge)
    assert ref.certified
    f_ref = ref.decision_function(X)
    for model in (by_blocks, by_points):
        assert model.check_kkt(Xd, y) <= 1e-9
        assert np.abs(to_host(model.decision_function(Xd)) - f_ref).max() <= 1e-7 * np.abs(f_ref).max()


# ---------------------------------------------------------------- the paper's measures
def test_kernel_evaluations_are_counted_exactly(monkeypatch):
    # Every kernel value computed during fit goes through Kernel.__call__, Kernel.paired or an
    # engine's q_column: count them independently and compare with the model's own count.
    from gpath._engine import NumbaEngine
    from gpath.kernels import Kernel

    counted = [0]
    call, paired = Kernel.__call__, Kernel.paired

    def counting_call(self, X1, X2, rows=None):
        counted[0] += X1.shape[0] * X2.shape[0]
        return call(self, X1, X2, rows)

    def counting_paired(self, X1, X2):
        counted[0] += X1.shape[0]
        return paired(self, X1, X2)

    def counting_column(original):
        def column(self, kernel, X, k, y=None, ridge=0.0):
            counted[0] += X.shape[0]
            return original(self, kernel, X, k, y, ridge)

        return column

    monkeypatch.setattr(Kernel, "__call__", counting_call)
    monkeypatch.setattr(Kernel, "paired", counting_paired)
    monkeypatch.setattr(NumbaEngine, "q_column", counting_column(NumbaEngine.q_column))

    def counting_block(self, kernel, X, cols, y=None, ridge=0.0, rows=None):
        counted[0] += X.shape[0] * len(cols)
        return block(self, kernel, X, cols, y, ridge, rows)

    block = NumbaEngine.q_block
    monkeypatch.setattr(NumbaEngine, "q_block", counting_block)
    # The generic engine's column goes through Kernel.__call__ already.
    # SMO's float32 rows, n values each, wherever they are computed.
    compute = gpath._smo.KernelRows._compute
    smo_rows = [0]

    def counting_compute(self, new):
        counted[0] += new.size * self.n
        smo_rows[0] += new.size
        return compute(self, new)

    monkeypatch.setattr(gpath._smo.KernelRows, "_compute", counting_compute)
    X, y = dataset("breast_cancer")
    for init, block_size, smo_block in (("closest_pair", 1, None), ("randomized", 1, None),
                                        ("closest_pair", None, None), ("smo", None, None), ("smo", None, 32)):
        if smo_block is not None:  # SMO by blocks of 32 points from 128 points on
            monkeypatch.setattr(gpath._smo, "_BLOCK", smo_block)
        counted[0] = smo_rows[0] = 0
        model = SimpleSVC(C=1.0, gamma=0.05, init=init, random_state=2, block_size=block_size).fit(X, y)
        assert model.n_kernel_evaluations_ == counted[0]
        stats = model.fit_stats_
        # n per column, plus the diagonal (closest pair), 3 values per random pair, or SMO's n
        # per row: every row by pairs, the rows of the points that entered a block by blocks.
        other = {"closest_pair": len(y), "randomized": 3 * 59, "smo": len(y) * smo_rows[0]}[init]
        assert model.n_kernel_evaluations_ == len(y) * stats.n_columns + other
        if init == "smo":
            assert (smo_rows[0] == len(y)) == (smo_block is None)


def test_closest_pair_is_mutually_nearest_and_init_does_not_change_the_model():
    # Algorithm 2 ends at a pair where each point is the other's nearest opposite point in
    # feature space (checked here with the full distance matrix the algorithm never forms).
    X, y = dataset("bananas")
    X, y = X[:800], y[:800]
    K = kernel_matrix(X, X, "rbf", 1.0)
    d2 = np.diag(K)[:, None] + np.diag(K)[None, :] - 2 * K
    models = []
    for seed in range(3):
        m = SimpleSVC(C=10.0, gamma=1.0, init="closest_pair", random_state=seed).fit(X, y)
        p, q = m.fit_stats_.init_pair
        assert y[p] == 1 and y[q] == 0
        assert d2[p, q] == pytest.approx(d2[y == 1, q].min(), abs=1e-12)
        assert d2[p, q] == pytest.approx(d2[p, y == 0].min(), abs=1e-12)
        models.append(m)
    models.append(SimpleSVC(C=10.0, gamma=1.0, init="randomized", random_state=0).fit(X, y))
    models.append(SimpleSVC(C=10.0, gamma=1.0, init="smo").fit(X, y))
    assert models[-1].fit_stats_.init_pair == ()
    for m in models[1:]:
        np.testing.assert_allclose(m.alpha_, models[0].alpha_, atol=1e-9)


def test_solution_is_a_path_state():
    # simple_svm leaves a state the incremental path can move on: its factor holds exactly
    # [[0, y_Mᵀ], [y_M, Q_MM]] in margin order, its cache the columns Q[:, M], its margins y f
    # the fresh values, its levels the sets (O above 1, I below 1, M unbounded).
    from gpath._path import I, M, O
    from gpath._simplesvm import simple_svm
    from gpath.kernels import Kernel

    X, y = dataset("breast_cancer")
    y_pm = np.where(y == 1, 1.0, -1.0)
    ridge = 1e-6
    state, stats = simple_svm(X, y_pm, Kernel("rbf", 0.05), 1.0, ridge, random_state=np.random.RandomState(0))
    Q = y_pm[:, None] * y_pm[None, :] * kernel_matrix(X, X, "rbf", 0.05) + ridge * np.eye(len(y))
    m = np.array(state.margin)
    assert stats.working_set_size == m.size > 0
    expected = np.zeros((m.size + 1, m.size + 1))
    expected[0, 1:] = expected[1:, 0] = y_pm[m]
    expected[1:, 1:] = Q[np.ix_(m, m)]
    np.testing.assert_allclose(state.factor.matrix, expected, atol=1e-12)
    for k in m:
        np.testing.assert_allclose(to_host(state.cache.column(state.cache.slot_of[k])), Q[:, k], atol=1e-12)
    np.testing.assert_allclose(to_host(state.yf), Q @ state.alpha + y_pm * state.b, atol=1e-12)
    np.testing.assert_array_equal(state.where == M, np.isin(np.arange(len(y)), m))
    lo, hi = to_host(state.lo), to_host(state.hi)
    np.testing.assert_array_equal(lo[state.where == O], 1.0)
    np.testing.assert_array_equal(hi[state.where == O], np.inf)
    np.testing.assert_array_equal(lo[state.where == I], -np.inf)
    np.testing.assert_array_equal(hi[state.where == I], 1.0)
    np.testing.assert_array_equal(lo[state.where == M], -np.inf)
    np.testing.assert_array_equal(hi[state.where == M], np.inf)
    assert np.all(state.alpha[state.where == I] == 1.0) and np.all(state.alpha[state.where == O] == 0.0)


# ---------------------------------------------------------------- hard margin, degenerate data
def test_hard_margin_unbounded_dual_detected_with_ridge_zero():
    # ridge = 0: a duplicate with the opposite label, or XOR with a linear kernel, makes the
    # dual unbounded along a null direction of the working-set matrix: an error, not a loop.
    X, y = dataset("breast_cancer")
    Xd, yd = np.vstack([X[:200], X[:1]]), np.concatenate([y[:200], 1 - y[:1]])
    with pytest.raises(NotSeparableError, match="unbounded"):
        SimpleSVC(C=np.inf, gamma=0.05, ridge=0.0).fit(Xd, yd)
    with pytest.raises(NotSeparableError, match=r"y f\(x\) = .* <= 0"):  # ridge > 0: detected after
        SimpleSVC(C=np.inf, gamma=0.05).fit(Xd, yd)
    rng = np.random.default_rng(0)
    Xx = rng.standard_normal((200, 2))
    with pytest.raises(NotSeparableError, match="not separable"):
        SimpleSVC(C=np.inf, kernel="linear", ridge=0.0).fit(Xx, (Xx[:, 0] * Xx[:, 1] > 0).astype(int))



def test_a_squared_hinge_beyond_float64_is_not_called_inseparable():
    # Features of 1e9 (K up to 1.6e18), copies with opposite labels: ridge + 1/C is below
    # float64's resolution next to K, and the working-set matrix is singular in float64 only.
    # The error said "C=inf (hard margin) ... use a finite C or loss='squared_hinge'" to a user
    # who had both. (A randomized search.)
    X = np.array([[1.2624499136577036e9], [1.2624499136577036e9], [4.7196459866747367e8]])
    y = np.array([3, 0, 3])
    model = SimpleSVC(kernel="linear", loss="squared_hinge", C=1.0)
    with pytest.raises(PathError, match="singular in float64") as error:
        model.fit(X, y)
    assert not isinstance(error.value, NotSeparableError) and "model is unchanged" in str(error.value)
    assert not hasattr(model, "dual_coef_")

def test_hard_margin_linear_separable_ridge_zero():
    rng = np.random.default_rng(1)
    X = np.vstack([rng.standard_normal((100, 2)) + 3.0, rng.standard_normal((100, 2)) - 3.0])
    y = np.r_[np.ones(100), np.zeros(100)].astype(int)
    model = SimpleSVC(C=np.inf, kernel="linear", ridge=0.0).fit(X, y)
    assert model.check_kkt(X, y) <= 1e-12
    ref = exact_svc(X, np.where(y == 1, 1.0, -1.0), 1e6, "linear", 1.0, ridge=0.0)
    assert ref.alpha.max() < 1e6  # the box is inactive: the reference is the hard margin
    np.testing.assert_allclose(model.decision_function(X), ref.decision_function(X), atol=1e-9)


@pytest.mark.parametrize("C", [0.1, 10.0])
def test_ridge_zero_duplicates_exact(C):
    # Same-label duplicates with ridge = 0 make the working-set matrix singular: SimpleSVM
    # steps along its null direction; the result is the exact solution all the same.
    X, y = dataset("breast_cancer")
    X, y = np.vstack([X[:200], X[:50]]), np.concatenate([y[:200], y[:50]])
    model = SimpleSVC(C=C, gamma=0.05, ridge=0.0, random_state=0).fit(X, y)
    ref = exact_svc(X, np.where(y == 1, 1.0, -1.0), C, "rbf", 0.05, ridge=0.0)
    assert ref.kkt <= 1e-9 and model.check_kkt(X, y) <= 1e-9
    f, f_ref = model.decision_function(X), ref.decision_function(X)
    assert np.abs(f - f_ref).max() <= 1e-7 * np.abs(f_ref).max()


def test_max_iter_warns_and_returns_a_feasible_point():
    from sklearn.exceptions import ConvergenceWarning

    X, y = dataset("breast_cancer")
    with pytest.warns(ConvergenceWarning, match="max_iter=5"):
        model = SimpleSVC(C=1.0, gamma=0.05, init="closest_pair", max_iter=5).fit(X, y)
    assert model.n_iter_ == 5
    y_pm = np.where(y == 1, 1.0, -1.0)
    assert abs(y_pm @ model.alpha_) <= 1e-12 and model.alpha_.min() >= 0 and model.alpha_.max() <= 1.0
    assert model.check_kkt(X, y) > 1e-3


# ---------------------------------------------------------------- bad input
@pytest.mark.parametrize("make,error,match", [
    (lambda X, y: (np.where(np.arange(40)[:, None] == 2, np.inf, X), y), ValueError, "X must be finite"),
    (lambda X, y: (X[:, 0], y), ValueError, "X must be 2-D"),
    (lambda X, y: (X[:, :0], y), ValueError, r"0 feature\(s\)"),
    (lambda X, y: (X.astype(complex), y), ValueError, "Complex data not supported"),
    (lambda X, y: (np.full(X.shape, "a"), y), TypeError, "X must hold real numbers"),
    (lambda X, y: (X, y[:39]), ValueError, r"y must have shape \(40,\)"),
    (lambda X, y: (X, None), ValueError, "requires y to be passed"),
    (lambda X, y: (X, np.zeros(40)), ValueError, "got 1 class"),
    (lambda X, y: (X, np.linspace(0, 1, 40)), ValueError, "Unknown label type: continuous"),
])
def test_bad_fit_input(make, error, match):
    X, y = dataset("breast_cancer")
    Xb, yb = make(X[:40], y[:40])
    with pytest.raises(error, match=match):
        SimpleSVC().fit(Xb, yb)


@pytest.mark.parametrize("params,match", [
    (dict(C=-1.0), "C must be a real number"), (dict(C="1"), "C must be"), (dict(ridge=-1e-3), "ridge must be"),
    (dict(max_iter=2.5), "max_iter must be an integer"), (dict(gamma=-1.0), "gamma must be"),
    (dict(block_size=0), "block_size must be"), (dict(block_size=2.5), "block_size must be an integer"),
    (dict(kernel="laplacian"), "kernel must be one of"), (dict(degree=0, kernel="poly"), "degree must be"),
])
def test_more_bad_parameters(params, match):
    X, y = dataset("breast_cancer")
    with pytest.raises(ValueError, match=match):
        SimpleSVC(**params).fit(X[:50], y[:50])


def test_bad_predict_and_check_kkt_input():
    from conftest import make_backend

    X, y = dataset("breast_cancer")
    model = SimpleSVC(gamma=0.05).fit(X[:100], y[:100])
    with pytest.raises(ValueError, match="X has 5 features, but SimpleSVC is expecting 30"):
        model.predict(X[:10, :5])
    with pytest.raises(ValueError, match="needs the training data"):
        model.check_kkt()
    with pytest.raises(ValueError, match="the 100 training rows"):
        model.check_kkt(X[:90], y[:90])
    strict = make_backend("array_api_strict")
    with pytest.raises(TypeError, match="model's array namespace"):
        model.decision_function(strict.asarray(X[:10]))
    on_device = SimpleSVC(gamma=0.05).fit(strict.asarray(X[:100]), strict.asarray(y[:100]))
    with pytest.raises(TypeError, match="on device"):
        on_device.decision_function(strict.xp.asarray(X[:10], device=strict.xp.Device("device2")))


def test_incremental_partial_fit_classes():
    X, y = dataset("breast_cancer")
    model = IncrementalSVC(gamma=0.05).partial_fit(X[:100], y[:100], classes=[0, 1])
    model.partial_fit(X[100:120], y[100:120], classes=[1, 0])
    assert_exact(model, X[:120], y[:120])
    with pytest.raises(ValueError, match=r"classes=\[0, 2\] differ from the classes \[0, 1\] given to the first call"):
        model.partial_fit(X[120:130], y[120:130], classes=[0, 2])
    with pytest.raises(ValueError, match="at least two labels"):
        IncrementalSVC().partial_fit(X[:100], y[:100], classes=[0])


@pytest.mark.parametrize("C", [0.1, 1.0])  # (at C = 10 LIBSVM's own index sets are wrong here)
def test_zero_row_with_a_linear_kernel_and_no_ridge(C):
    # Q_kk = 0 for the origin: the factor's shift must not come from that diagonal alone.
    rng = np.random.default_rng(5)
    X = np.round(rng.standard_normal((40, 2)), 1)
    X[[3, 17]] = 0.0
    y = (X[:, 0] + 0.3 * rng.standard_normal(40) > 0).astype(int)
    model = SimpleSVC(kernel="linear", C=C, ridge=0.0, random_state=1).fit(X, y)
    assert model.check_kkt(X, y) <= 1e-9
    ref = exact_svc(X, np.where(y == 1, 1.0, -1.0), C, "linear", 1.0, ridge=0.0)
    assert ref.kkt <= 1e-9  # else LIBSVM's index sets were wrong and the comparison proves nothing
    f_ref = ref.decision_function(X)
    np.testing.assert_allclose(model.decision_function(X), f_ref, rtol=0, atol=1e-7 * np.abs(f_ref).max())
