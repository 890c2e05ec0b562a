"""SVRPath (issue 19, item 2): the exact ε-SVR C path against the exact reference at random C,
KKT from scratch at every breakpoint and between them, the exact validation minimum, and the
edges (ε = 0, a tube wider than the targets, C_min = C_max, duplicates, C from 1e-3 to 1e8,
features of size 1e9)."""

from __future__ import annotations

import io
import pickle

import numpy as np
import pytest
from helpers import snapshot
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.metrics import r2_score

import gpath
from gpath import IncrementalSVR, SVRPath
from gpath._array_api import to_host
from gpath._cpath import interpolate, squared_error_path
from gpath.persistence import ModelFileError
from gpath.reference import exact_svr, kernel_matrix


def _standardized(X, y):
    return (X - X.mean(0)) / X.std(0), (y - y.mean()) / y.std()


def diabetes(n=200):
    from sklearn.datasets import load_diabetes

    X, y = _standardized(*load_diabetes(return_X_y=True))
    return X[:n], y[:n]


def waterflow(n=200):
    from gpath.datasets import load_waterflow_regression

    X, y = _standardized(*load_waterflow_regression())
    return X[:n], y[:n]


def kkt_from_scratch(X, y, beta, b, C, epsilon, gamma, ridge=1e-6):
    """An independent check: the doubled dual's KKT conditions (rows 2i: α_i = β_i⁺, label +1;
    2i + 1: α*_i = β_i⁻, label −1; level ``y'_i y_i − ε``) from a fresh float64 kernel, relative
    to the scale of the terms of a margin; Σβ = 0 and the box relative to C."""
    K = kernel_matrix(X, X, "rbf", gamma)
    n = len(y)
    s = np.tile([1.0, -1.0], n)
    alpha = np.stack([np.maximum(beta, 0.0), np.maximum(-beta, 0.0)], axis=1).ravel()
    Q = np.outer(s, s) * np.kron(K, np.ones((2, 2))) + ridge * np.eye(2 * n)
    level = s * np.repeat(y, 2) - epsilon
    g = Q @ alpha + s * b - level
    stat = max(np.max(np.where(alpha < C, -g, -np.inf)), np.max(np.where(alpha > 0, g, -np.inf)))
    scale = 1.0 + float(np.max(np.abs(Q) @ alpha)) + float(np.max(np.abs(level - 1.0)))
    feas = max(abs(beta.sum()), np.max(np.abs(beta) - C)) / C
    return max(stat / scale, feas, 0.0)


@pytest.mark.parametrize("data", [diabetes, waterflow])
@pytest.mark.parametrize("epsilon", [0.0, 0.1, 1.0])
def test_path_equals_the_exact_reference_at_random_C(backend, data, epsilon):
    X, y = data()
    gamma = 0.1
    model = SVRPath(C_min=1e-2, C_max=1e4, epsilon=epsilon, gamma=gamma).fit(backend.asarray(X), y)
    backend.check(model._X)
    Cs = np.exp(np.random.default_rng(1).uniform(np.log(1e-2), np.log(1e4), 8))
    K = kernel_matrix(X, X, "rbf", gamma)
    for C in np.concatenate([[1e-2, 1e4], Cs]):
        ref = exact_svr(X, y, C, epsilon, gamma=gamma)
        assert ref.certified, ref.kkt
        beta, b = interpolate(model.path_, C)
        if data is diabetes:  # WaterFlow's lags are near-collinear: β itself is ill-conditioned, f is not
            np.testing.assert_allclose(beta, ref.beta, rtol=0, atol=1e-9 * C, err_msg=f"beta at C={C:g}")
        assert kkt_from_scratch(X, y, beta, b, C, epsilon, gamma) <= 1e-9, f"KKT at C={C:g}"
        assert model.check_kkt(C) <= 1e-9
        on_edge = np.any((np.abs(ref.beta) > 1e-9 * C) & (np.abs(ref.beta) < C * (1 - 1e-9)))
        if on_edge:  # b is unique: the predictions are the reference's
            f = backend.check(model.predict(backend.asarray(X), C), (len(y),))
            scale = 1.0 + np.abs(y).max() + np.max(np.abs(K) @ np.abs(ref.beta))  # the terms of f
            assert np.abs(f - ref.predict(X)).max() <= 1e-9 * scale, f"f at C={C:g}"


def test_every_breakpoint_and_every_point_between_is_kkt_exact():
    # At a bound at both ends of a segment, β stays exactly at ±C in between (an ulp inside
    # would make the point look free to a KKT check: 1.17 at C = 0.2 on this data before).
    from sklearn.datasets import load_diabetes

    X, y = load_diabetes(return_X_y=True)
    model = SVRPath(C_min=0.1, C_max=1e4, epsilon=5.0, gamma=0.1).fit(X[:300], y[:300])
    p = model.path_
    mids = np.sqrt(p.Cs[:-1] * p.Cs[1:])
    assert max(model.check_kkt(float(C)) for C in np.concatenate([p.Cs, mids, [0.2]])) <= 1e-9
    assert np.all(np.abs(p.alpha) <= p.Cs[:, None]) and np.abs(p.alpha.sum(axis=1)).max() <= 1e-9 * p.Cs.max()


def test_targets_far_from_zero_at_a_small_C_min():
    # Targets near 3e6 and C_min = 1e-3: the path's driver must not come from margins that hold
    # the targets (their round-off over C_min gave KKT violations of 2e-5 inside the path).
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = 1e5 * (np.sin(X[:, 0]) + 0.1 * rng.normal(size=60)) + 3e6
    model = SVRPath(C_min=1e-3, C_max=1e6, epsilon=100.0, gamma=0.5).fit(X, y)
    p = model.path_
    between = np.sqrt(p.Cs[:-1] * p.Cs[1:])
    assert max(model.check_kkt(float(C)) for C in np.concatenate([p.Cs, between])) <= 1e-9
    K = kernel_matrix(X, X, "rbf", 0.5)
    for C in (3.4e3, 1e5):
        ref = exact_svr(X, y, C, 100.0, gamma=0.5)
        assert ref.certified
        scale = 1.0 + np.abs(y).max() + np.max(np.abs(K) @ np.abs(ref.beta))
        assert np.abs(model.predict(X, C) - ref.predict(X)).max() <= 1e-9 * scale


def test_the_path_equals_incremental_svr_where_b_is_unique():
    X, y = waterflow(150)
    model = SVRPath(C_min=0.1, C_max=100.0, epsilon=0.1, gamma=0.5).fit(X, y)
    for C in (0.3, 3.0, 30.0):
        fit = IncrementalSVR(C=C, epsilon=0.1, gamma=0.5).fit(X, y)
        beta, _ = interpolate(model.path_, C)
        expected = np.zeros(len(y))
        expected[fit.support_] = fit.dual_coef_[0]
        np.testing.assert_allclose(beta, expected, rtol=0, atol=1e-9 * C)
        np.testing.assert_allclose(model.predict(X, C), fit.predict(X), rtol=0, atol=1e-9 * (1 + np.abs(y).max()))


def test_compiled_and_readable_loops_give_the_same_path():
    xps = pytest.importorskip("array_api_strict")
    X, y = diabetes()
    numpy_path = SVRPath(C_min=0.01, C_max=1e3, gamma=0.1).fit(X, y).path_
    strict_path = SVRPath(C_min=0.01, C_max=1e3, gamma=0.1).fit(xps.asarray(X, device=xps.Device("device1")), y).path_
    for C in np.geomspace(0.01, 1e3, 15):
        a, b = interpolate(numpy_path, C)
        a2, b2 = interpolate(strict_path, C)
        np.testing.assert_allclose(a, a2, rtol=0, atol=1e-9 * C)
        assert abs(b - b2) <= 1e-9 * (1 + np.abs(y).max())


@pytest.mark.parametrize("case", ["epsilon=0", "tube wider than y", "C_min=C_max", "duplicates", "constant y",
                                  "C 1e-3..1e8", "features 1e9"])
def test_edges(case):
    X, y = diabetes()
    params = {"C_min": 1e-2, "C_max": 1e3, "gamma": 0.1, "epsilon": 0.1}
    if case == "epsilon=0":
        params["epsilon"] = 0.0
    elif case == "tube wider than y":
        params["epsilon"] = float(np.ptp(y))
    elif case == "C_min=C_max":
        params["C_min"] = params["C_max"] = 3.0
    elif case == "duplicates":
        X, y = np.vstack([X[:60], X[:60]]), np.concatenate([y[:60], y[:60]])
    elif case == "constant y":
        y = np.full(len(y), 3.0)
    elif case == "C 1e-3..1e8":
        params["C_min"], params["C_max"] = 1e-3, 1e8
    else:
        X, params["gamma"] = X * 1e9, "scale"
    model = SVRPath(**params).fit(X, y)
    p = model.path_
    for C in np.geomspace(p.Cs[0], p.Cs[-1], 12):
        assert model.check_kkt(float(C)) <= 1e-9, (case, C)
    if case == "tube wider than y" or case == "constant y":
        assert not np.any(p.alpha)
    if case == "C_min=C_max":
        assert p.Cs.size == 1
        ref = exact_svr(X, y, 3.0, 0.1, gamma=0.1)
        np.testing.assert_allclose(p.alpha[0], ref.beta, rtol=0, atol=1e-9 * 3.0)


def test_squared_error_path_on_a_hand_made_path():
    # Two validation points, three path points: residuals (1, −1) → (0, 1) → (2, 1).
    Cs = np.array([1.0, 2.0, 4.0])
    F = np.array([[1.0, 0.0, 2.0], [-1.0, 1.0, 1.0]])
    curve = squared_error_path(Cs, F, np.zeros(2))
    # Segment 0: r = (1 − τ, −1 + 2τ), mse = ((1 − τ)² + (2τ − 1)²) / 2, least at τ = 0.6.
    np.testing.assert_allclose(curve.coef[0], [1.0, -3.0, 2.5])
    assert curve.best_C == pytest.approx(1.6) and curve.best_error == pytest.approx(0.1)
    for C in (1.0, 1.3, 2.0, 3.0, 4.0):
        tau_f = [np.interp(C, Cs, F[i]) for i in range(2)]
        assert curve.error_at(C) == pytest.approx(np.mean(np.square(tau_f)))
    one = squared_error_path(Cs[:1], F[:, :1], np.zeros(2))
    assert one.best_C == 1.0 and one.best_error == 1.0


def test_select_finds_the_exact_validation_minimum():
    X, y = waterflow(400)
    model = SVRPath(C_min=0.01, C_max=1e3, epsilon=0.1, gamma=0.5).fit(X[:250], y[:250])
    model.select(X[250:], y[250:])
    curve = model.validation_error_
    mse = lambda C: float(np.mean((model.predict(X[250:], C) - y[250:]) ** 2))
    grid = np.geomspace(0.01, 1e3, 400)
    assert curve.best_error <= min(mse(C) for C in grid) + 1e-12
    assert mse(model.C_) == pytest.approx(curve.best_error, rel=1e-9)
    for C in grid[::40]:
        assert curve.error_at(C) == pytest.approx(mse(C), rel=1e-9)
    assert model.score(X[250:], y[250:]) == pytest.approx(r2_score(y[250:], model.predict(X[250:])))


def test_bad_parameters_and_inputs_are_refused_and_change_nothing():
    X, y = diabetes(100)
    model = SVRPath(C_min=0.1, C_max=10.0, gamma=0.1)
    with pytest.raises(NotFittedError):
        model.predict(X)
    model.fit(X, y)
    before = snapshot(model)
    for params, match in [({"C_min": 10.0, "C_max": 1.0}, "C_min must be <= C_max"), ({"epsilon": -1.0}, "epsilon"),
                          ({"C_min": 0.0}, "C_min"), ({"ridge": np.nan}, "ridge"), ({"gamma": np.inf}, "gamma")]:
        with pytest.raises(ValueError, match=match):
            clone(model).set_params(**params).fit(X, y)
    for Xb, yb, match in [(X, y[:-1], "y"), (X, np.where(np.arange(100) == 3, np.nan, y), "y"),
                          (X, ["a"] * 100, "y"), (X[:, :, None], y, "X")]:
        with pytest.raises((ValueError, TypeError), match=match):
            model.fit(Xb, yb)
    with pytest.raises(ValueError, match="C must be a real number in"):
        model.predict(X, C=100.0)
    with pytest.raises(ValueError, match="features"):
        model.predict(X[:, :3])
    with pytest.raises(ValueError, match="y_val"):
        model.select(X, y[:5])
    assert snapshot(model) == before


def test_save_load_and_a_tampered_file_is_refused(tmp_path):
    X, y = diabetes(150)
    model = SVRPath(C_min=0.1, C_max=100.0, gamma=0.1).fit(X[:100], y[:100]).select(X[100:], y[100:])
    gpath.save(model, tmp_path / "m.gpath")
    loaded = gpath.load(tmp_path / "m.gpath")
    assert type(loaded) is SVRPath and loaded.get_params() == model.get_params() and loaded.C_ == model.C_
    np.testing.assert_array_equal(loaded.predict(X[100:]), model.predict(X[100:]))
    assert loaded.validation_error_.best_C == model.validation_error_.best_C
    bad = pickle.loads(pickle.dumps(model))
    bad.path_.alpha[-1, :2] += [1e-3, -1e-3]  # Σβ = 0 still, but not the KKT conditions at C_max
    buffer = io.BytesIO()
    gpath.save(bad, buffer)
    buffer.seek(0)
    with pytest.raises(ValueError, match="violates the KKT conditions"):
        gpath.load(buffer)
    with pytest.raises(ModelFileError, match="violates the KKT conditions"):
        bad._check_loaded()


def test_clone_pickle_and_score_like_a_scikit_learn_regressor(backend):
    X, y = diabetes(120)
    model = SVRPath(C_min=0.1, C_max=10.0, gamma=0.1).fit(backend.asarray(X), y)
    assert clone(model).get_params() == model.get_params()
    f = to_host(model.predict(backend.asarray(X)))
    assert model.score(backend.asarray(X), y) == pytest.approx(r2_score(y, f))
    assert model.score(backend.asarray(X), y, C=0.5) == pytest.approx(r2_score(y, to_host(model.predict(
        backend.asarray(X), 0.5))))
    if backend.name == "numpy":
        again = pickle.loads(pickle.dumps(model))
        np.testing.assert_array_equal(to_host(again.predict(X)), f)


def test_cross_validated_mse_is_the_mean_of_the_folds_paths(backend):
    from sklearn.model_selection import KFold

    from gpath.model_selection import cv_mse_path

    X, y = waterflow(240)
    cv = KFold(4, shuffle=True, random_state=0)
    curve = cv_mse_path(backend.asarray(X), y, cv=cv, C_min=0.01, C_max=100.0, epsilon=0.1, gamma=0.5)
    # The folds' own paths on the same backend (where no point is on the tube's edge b is only
    # bounded, and each start may pick another optimal b there).
    folds = [(SVRPath(C_min=0.01, C_max=100.0, epsilon=0.1, gamma=0.5).fit(backend.asarray(X[tr]), y[tr]), te)
             for tr, te in cv.split(X)]

    def mean_mse(C):
        return float(np.mean([np.mean((to_host(model.predict(backend.asarray(X[te]), C)) - y[te]) ** 2)
                              for model, te in folds]))

    grid = np.concatenate([np.geomspace(0.01, 100.0, 300), curve.Cs[::7]])
    values = np.array([mean_mse(C) for C in grid])
    np.testing.assert_allclose([curve.error_at(C) for C in grid], values, rtol=1e-9)
    assert curve.best_error <= values.min() + 1e-12
    assert mean_mse(curve.best_C) == pytest.approx(curve.best_error, rel=1e-9)
    assert curve.Cs[0] == 0.01 and curve.Cs[-1] == 100.0


def test_cross_validated_mse_refuses_bad_input():
    from gpath.model_selection import cv_mse_path

    X, y = diabetes(60)
    for kwargs, match in [({"C_min": 10.0, "C_max": 1.0}, "C_min must be <= C_max"), ({"epsilon": -1.0}, "epsilon"),
                          ({"ridge": -1.0}, "ridge"), ({"gamma": 0.0}, "gamma")]:
        with pytest.raises(ValueError, match=match):
            cv_mse_path(X, y, **{"C_min": 0.1, "C_max": 10.0, **kwargs})
    with pytest.raises(ValueError, match="y"):
        cv_mse_path(X, y[:-1], C_min=0.1, C_max=10.0)


def test_a_polynomial_path_to_a_large_c_ends_at_its_sets_exact_solution():
    """``fuzz_real_data.py`` seed 111,338: ε-SVR on 445 WaterFlow rows, a degree-2
    polynomial kernel, C from 171 to 7.5e5, where the margins sum terms up to 8.1e7
    into values up to 6.6. The path's decision values must be those of its own index sets'
    margin equations re-solved in float64 (and certified) to the search's bound, 1e-6 of |f|
    plus 1,000 ε of f's scale: 4.7e-6 and 8.0e-6 off at 4.5e5 and 7.5e5, where a breakpoint
    product summed in another order (eight cached columns a pass, not four) ended 3.5e-5 and
    6.0e-5 off. (A test of the rounding it keeps, on a problem at float64's edge.)"""
    X, z = _path_trial_rows(111338, 445)
    gamma = 1.0 / (float(X.var()) * X.shape[1])
    model = SVRPath(C_min=170.97826671160692, C_max=749615.7005594549, epsilon=1.0, kernel="poly", gamma=gamma,
                    degree=2, coef0=1.0).fit(X, z)
    K = kernel_matrix(X, X, "poly", gamma, 2, 1.0)
    for C in (447543.0, 749615.7005594549):
        f, f_sets, f_scale, violation, off = _against_its_sets(model, K, z, C)
        assert f_scale > 1e7  # (the edge this test is about)
        round_off = 1e3 * np.finfo(np.float64).eps * f_scale
        assert violation <= 1e-9 and off <= 1e-6 + round_off  # the sets' solution is certified
        assert np.max(np.abs(f_sets - f)) <= 1e-6 * np.max(np.abs(f_sets)) + round_off
        assert model.check_kkt(C=C) <= 1e-9


def test_a_linear_path_on_raw_rows_ends_at_its_sets_exact_solution():
    """``fuzz_real_data.py`` seed 135,620: ε-SVR on 963 raw WaterFlow rows (seven lags up to
    110, strongly correlated), a linear kernel, C from 265 to 5,824, where the margins sum
    terms up to 2.3e9 into values up to 6.9 and the ten margin points determine w and b only
    through a near-singular system. The end held its margin equations to 1e-14 of the scale
    (45 ε), as an update ends, and its decision values were 5.5e-4 from those of its own index
    sets re-solved in float64, 4.1e-6 from the exact ones (their margin equations solved in 50
    digits). The start and the end now take one more step of iterative refinement, which
    leaves them 1.6e-5 from the float64 re-solve (1.2e-5 from the exact). The bound here is
    100 ε of f's scale, a tenth of the search's."""
    X, z = _path_trial_rows(135620, 963)
    C_max = 5824.030514086954
    model = SVRPath(C_min=265.3446621804502, C_max=C_max, epsilon=1.0, kernel="linear").fit(X, z)
    f, f_sets, f_scale, violation, off = _against_its_sets(model, kernel_matrix(X, X, "linear", 1.0, 3, 0.0), z, C_max)
    assert f_scale > 1e9  # (the edge this test is about)
    round_off = 100 * np.finfo(np.float64).eps * f_scale
    assert violation <= 1e-9 and off <= 1e-6 + 10 * round_off  # the sets' solution is certified
    assert np.max(np.abs(f_sets - f)) <= 1e-6 * np.max(np.abs(f_sets)) + round_off
    assert model.check_kkt(C=C_max) <= 1e-9


def _path_trial_rows(seed, n_rows):
    """The rows of ``fuzz_real_data.py``'s C-path trial ``seed`` (ε-SVR on WaterFlow, the
    features as loaded: the search drew no standardizing; ``n_rows`` of them) and its
    standardized targets."""
    from gpath.datasets import load_waterflow_regression

    X, y = load_waterflow_regression()
    rng = np.random.default_rng([seed, 2])
    rng.random(), rng.choice(2)  # (the search's draws before the rows: ε-SVR, the data set)
    n = int(rng.integers(200, 1000))
    rows = rng.permutation(X.shape[0])[:n]
    assert n == n_rows
    X, y = X[rows], y[rows]
    return X, (y - y.mean()) / y.std()


def _against_its_sets(model, K, z, C):
    """The path's decision values at C on its training rows (Gram matrix ``K``), those of its
    own index sets' margin equations re-solved in float64 (:func:`helpers.resolved_values` on
    the doubled problem), f's scale, and the re-solve's KKT violation, relative and in units
    of y."""
    from helpers import resolved_values, svr_doubled

    beta, b = interpolate(model.path_, C)
    beta = np.asarray(beta, dtype=np.float64)
    f_scale = float(np.max(np.abs(K) @ np.abs(beta))) + abs(b) + 1.0
    gram, labels, alpha, level = svr_doubled(K, z, beta, model.epsilon)
    f_sets, violation, off = resolved_values(gram, labels, alpha, C, model.ridge, level)
    return K @ beta + b, f_sets[::2], f_scale, violation, off
