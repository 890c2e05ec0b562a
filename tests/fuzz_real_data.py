"""A random search for wrong results on real data at the sizes users fit (200–2,500 points),
run by hand (not collected by pytest: it takes minutes and draws anew).

``fuzz_references.py`` draws small problems (at most 180 points) of random rows; the ways a
fit goes wrong or stalls at a few thousand real points (SMO's start stopped at its cap, a
working set of a thousand, a margin matrix of low rank but for the ridge) need real rows at
that scale. Each trial draws rows of breast cancer, the digits (≥ 5 or not), Adult (4,000
rows of :func:`gpath.datasets.load_adult`) or Bananas, standardized or not, scaled by 1 or by
10⁻³ to 10⁹, and a kernel (RBF with γ of 0.1 to 10 over the total variance, linear, or a
degree-2 polynomial), C from 10⁻³ to 10⁸ (10⁴ for the others; a linear kernel on features
beyond 10³ has C scaled down by their square); then one of a ``SimpleSVC`` fit, an
``IncrementalSVC`` fit, or that fit and one update adding up to 400 rows and removing up to
400. Three trials in ten are ε-SVR instead (WaterFlow's next hourly value, scikit-learn's
diabetes; ε ∈ {0, 0.05, 0.3, 1} of the standardized target), fitted or fitted and updated.
One seed in five (a draw of its own: the other seeds' problems stay as they were) is a C path
instead, ``SVCPath`` (200–1,500 rows) or ``SVRPath`` (200–1,000), over [C_min, C_max] in
[10⁻³, 10⁶], standardized or raw features, checked at C_min, C_max, a C between and the
middles of two segments, by the checks below that need no published attributes.

Each model is checked on its training rows against a Gram matrix computed here
(:func:`gpath.reference.kernel_matrix`), C-SVC as it is and ε-SVR as its doubled problem
(``helpers.svr_doubled``): the KKT conditions (:func:`gpath.reference.kkt_violation`) to 1e-8
of the scale of f; the decision values of the published ``support_``, ``dual_coef_`` and
``intercept_`` against ``decision_function`` (``predict``) to 1e-9 of that scale;
``check_kkt()`` to 1e-9; the margin conditions in units of y f (ε-SVR: of y) to 1e-6 beyond
1,000 ε times the scale of f (at large scales 1e-8 of it is many units of y f); the decision
values against those of the model's own index sets re-solved in float64 and certified
(``helpers.resolved_values``: no LIBSVM, so linear kernels, large C and many rows too) to 1e-6
of the largest |f| beyond that round-off; and, where LIBSVM is quick (C-SVC, not linear,
C ≤ 10³, at most 1,500 rows), against the certified reference's
(:func:`gpath.reference.exact_svc`) to 1e-6. A clear refusal (``PathError`` beyond float64,
``SingularMarginError``) is printed, not counted. A trial that takes more than 20 s is
printed as slow (not counted: a speed to look into).

    python tests/fuzz_real_data.py --seconds 600
    python tests/fuzz_real_data.py --seed 19
"""

from __future__ import annotations

import functools
import time

import numpy as np
from fuzz_references import search
from helpers import resolved_values, svr_doubled

from gpath import IncrementalSVC, IncrementalSVR, PathError, SimpleSVC, SVCPath, SVRPath
from gpath._cpath import interpolate
from gpath.linalg import SingularMarginError
from gpath.reference import exact_svc, kernel_matrix, kkt_violation, margin_violation

SLOW = 20.0  # seconds


@functools.cache
def _data(name: str):
    from sklearn.datasets import load_breast_cancer, load_diabetes

    from gpath.datasets import load_adult, load_bananas, load_digits_binary, load_waterflow_regression

    X, y = {"cancer": lambda: load_breast_cancer(return_X_y=True), "digits": load_digits_binary,
            "adult": lambda: load_adult(4000, random_state=1), "bananas": load_bananas,
            "waterflow": load_waterflow_regression, "diabetes": lambda: load_diabetes(return_X_y=True)}[name]()
    return np.asarray(X, dtype=np.float64), np.asarray(y)


def _solution_checks(K, z, coef, b, C, ridge, epsilon=None) -> list[str]:
    """What is wrong with a solution on its training rows (Gram matrix ``K``): ``coef`` is
    y ⊙ α for C-SVC (``z`` the labels ±1, ``epsilon`` None), β for ε-SVR (``z`` the targets),
    checked as its doubled problem (:func:`helpers.svr_doubled`). The KKT conditions to 1e-8
    of the scale of f; the margins in units of y f to 1e-6 beyond 1,000 ε times that scale;
    the decision values against those of the solution's own index sets re-solved in float64
    and certified, to 1e-6 of the largest |f| beyond that round-off."""
    f = K @ coef + b
    f_scale = float(np.max(np.abs(K) @ np.abs(coef))) + abs(b) + 1.0
    if epsilon is None:
        gram, labels, alpha, level = K, z, coef * z, 1.0
    else:
        gram, labels, alpha, level = svr_doubled(K, z, coef, epsilon)
    Q = labels[:, None] * labels[None, :] * (gram + ridge * np.eye(labels.shape[0]))
    wrong = []
    violation = kkt_violation(Q, labels, alpha, b, C, level)
    if violation > 1e-8:
        wrong.append(f"KKT violation {violation:.3g} from the Gram matrix")
    # Relative to the scale of f, a KKT violation of 1e-8 is up to 45 in units of y f where
    # float64 resolves y f to 1e-6 (f's scale 4.5e9, the most a fit accepts): the margins
    # must hold to their round-off in those units too.
    round_off = 1e3 * np.finfo(np.float64).eps * f_scale
    off = margin_violation(Q, labels, alpha, b, C, level)
    if off > 1e-6 + round_off:
        wrong.append(f"KKT violation {off:.3g} in units of y f (round-off {round_off:.2g})")
    # The solution's own index sets, their margin equations re-solved in float64 and certified
    # from scratch: wherever LIBSVM is slow too (linear kernels, large C, many rows).
    f_sets, sets_violation, sets_off = resolved_values(gram, labels, alpha, C, ridge, level)
    f_sets = f_sets if epsilon is None else f_sets[::2]
    certified = sets_violation <= 1e-9 and sets_off <= 1e-6 + round_off
    if certified and ((alpha > 0) & (alpha < C * (1 - 1e-12))).any():
        difference = float(np.max(np.abs(f_sets - f)))
        if difference > 1e-6 * float(np.max(np.abs(f_sets))) + round_off:
            wrong.append(f"decision values {difference:.3g} from its own sets' (certified; |f| up to "
                         f"{np.max(np.abs(f_sets)):.3g}, round-off {round_off:.2g})")
    return wrong


def path_trial(seed: int) -> str | None:
    """The C path of ``SVCPath`` or ``SVRPath`` on real rows, checked by
    :func:`_solution_checks` and ``check_kkt(C)`` at C_min, C_max, a C drawn between them and
    the middles of two segments between breakpoints; a description of what went wrong, or
    None."""
    rng = np.random.default_rng([seed, 2])
    svr = rng.random() < 0.4
    name = str(rng.choice(["waterflow", "diabetes"] if svr else ["cancer", "digits", "adult", "bananas"]))
    X, y = _data(name)
    n = min(int(rng.integers(200, 1000 if svr else 1500)), X.shape[0])
    rows = rng.permutation(X.shape[0])[:n]
    X, y = X[rows], y[rows]
    if rng.random() < 0.7:
        X = (X - X.mean(0)) / np.maximum(X.std(0), 1e-12)
    kernel = str(rng.choice(["rbf", "rbf", "linear", "poly"]))
    variance = max(float(X.var()) * X.shape[1], 1e-300)
    gamma = 1.0 / variance if kernel == "poly" else float(10 ** rng.uniform(-1, 1) / variance)
    C_min = float(10 ** rng.uniform(-3, 3))
    C_max = min(1e6, C_min * float(10 ** rng.uniform(0, 4)))
    params = dict(C_min=C_min, C_max=C_max, kernel=kernel, gamma=gamma, degree=2, coef0=1.0)
    if svr:
        z = (y - y.mean()) / y.std()
        epsilon = float(rng.choice([0.0, 0.05, 0.3, 1.0]))
        model = SVRPath(epsilon=epsilon, **params)
    else:
        y = (y == y.max()).astype(np.int64)
        epsilon, model = None, SVCPath(**params)
    what = f"{type(model).__name__} {name} n={n} {kernel} gamma={gamma:.3g} C in [{C_min:.3g}, {C_max:.3g}]"
    start = time.perf_counter()
    model.fit(X, z if svr else y)
    seconds = time.perf_counter() - start
    if seconds > SLOW:
        print(f"seed {seed}: slow, {seconds:.1f} s: {what}", flush=True)
    if not svr:
        z = np.where(y == model.classes_[1], 1.0, -1.0)
    K = kernel_matrix(X, X, kernel, gamma, 2, 1.0)
    knots = np.unique(np.asarray(model.path_.Cs, dtype=float))
    middles = np.sqrt(knots[:-1] * knots[1:])
    picks = middles[rng.permutation(middles.size)[:2]] if middles.size else middles
    wrong = []
    for C in [C_min, C_max, float(np.exp(rng.uniform(np.log(C_min), np.log(C_max)))), *picks.tolist()]:
        coefficients, b = interpolate(model.path_, C)
        coef = np.asarray(coefficients, dtype=np.float64) * (1.0 if svr else z)
        problems = _solution_checks(K, z, coef, float(b), C, model.ridge, epsilon)
        kkt = model.check_kkt(C=C)
        if kkt > 1e-9:
            problems.append(f"check_kkt {kkt:.3g}")
        wrong += [f"at C={C:.6g}: {problem}" for problem in problems]
    return f"{what}: {'; '.join(wrong)}" if wrong else None


def trial(seed: int) -> str | None:
    """One random problem; a description of what went wrong, or None. One seed in five (by a
    draw of its own, so that the other seeds' problems stay as they were) is a C path
    (:func:`path_trial`)."""
    if np.random.default_rng([seed, 1]).random() < 0.2:
        return path_trial(seed)
    rng = np.random.default_rng(seed)
    svr = rng.random() < 0.3
    name = str(rng.choice(["waterflow", "diabetes"] if svr else ["cancer", "digits", "adult", "bananas"]))
    X, y = _data(name)
    n = min(int(rng.integers(200, 1500 if svr else 2500)), X.shape[0] - 400)
    rows = rng.permutation(X.shape[0])[: n + 400]
    X, y = X[rows], y[rows]
    if rng.random() < 0.5:
        X = (X - X.mean(0)) / np.maximum(X.std(0), 1e-12)
    scale = 10.0 ** rng.choice([0.0, 0.0, rng.uniform(-3, 9)])
    X = X * scale
    kernel = str(rng.choice(["rbf", "rbf", "linear", "poly"]))
    variance = max(float(X[:n].var()) * X.shape[1], 1e-300)
    gamma = float(10 ** rng.uniform(-1, 1) / variance)
    if kernel == "linear" and scale > 1e3:
        C = float(10 ** rng.uniform(-3, 3) / scale**2)
    else:
        C = float(10 ** rng.uniform(-3, 8 if kernel == "rbf" else 4))
    coef0 = float(rng.choice([0.0, 1.0]))
    if kernel == "poly":
        gamma, coef0 = 1.0 / variance, 1.0
    params = dict(C=C, kernel=kernel, gamma=gamma, coef0=coef0, degree=2)
    if svr:
        y = (y - y[:n].mean()) / y[:n].std()
        epsilon = float(rng.choice([0.0, 0.05, 0.3, 1.0]))
        model = IncrementalSVR(epsilon=epsilon, **params)
    else:
        y = (y == y.max()).astype(np.int64)
    way = str(rng.choice(["fit", "update"] if svr else ["fit", "update", "simple"]))
    if not svr:
        model = SimpleSVC(**params) if way == "simple" else IncrementalSVC(**params)
    what = f"{name} n={n} scale={scale:.3g} {kernel} gamma={gamma:.3g} C={C:.3g} {type(model).__name__} {way}"
    start = time.perf_counter()
    X_train, y_train = X[:n], y[:n]
    model.fit(X_train, y_train)
    if way == "update":
        m, ell = int(rng.integers(1, 400)), int(rng.integers(0, min(400, n - 20)))
        gone = rng.choice(n, size=ell, replace=False)
        model.update(X[n : n + m], y[n : n + m], remove=model.sample_ids_[gone])
        kept = np.delete(np.arange(n), gone)
        X_train, y_train = np.concatenate([X[kept], X[n : n + m]]), np.concatenate([y[kept], y[n : n + m]])
        what += f" m={m} l={ell} ({model.last_update_.method})"
    seconds = time.perf_counter() - start
    if seconds > SLOW:
        print(f"seed {seed}: slow, {seconds:.1f} s: {what}", flush=True)
    K = kernel_matrix(X_train, X_train, kernel, gamma, 2, coef0)
    coef = np.zeros(y_train.shape[0])
    coef[model.support_] = model.dual_coef_[0]
    b = float(model.intercept_[0])
    f = K @ coef + b
    f_scale = float(np.max(np.abs(K) @ np.abs(coef))) + abs(b) + 1.0
    if svr:
        z = y_train
        published = model.predict(X_train)
        own = model.check_kkt()
    else:
        z = y_pm = np.where(y_train == model.classes_[1], 1.0, -1.0)
        published = model.decision_function(X_train)
        own = model.check_kkt(X_train, y_train) if way == "simple" else model.check_kkt()
    wrong = _solution_checks(K, z, coef, b, C, model.ridge, epsilon if svr else None)
    if own > 1e-9:
        wrong.append(f"check_kkt {own:.3g}")
    consistency = float(np.max(np.abs(published - f))) / f_scale
    if consistency > 1e-9:
        wrong.append(f"decision values {consistency:.3g} from the published coefficients'")
    if not svr and kernel != "linear" and C <= 1e3 and y_train.shape[0] <= 1500:
        reference = exact_svc(X_train, y_pm, C, kernel, gamma, 2, coef0, model.ridge)
        free = (reference.alpha > 0) & (reference.alpha < C)
        if reference.certified and free.any():  # (else the bias is only bounded)
            f_reference = reference.decision_function(X_train)
            difference = float(np.max(np.abs(f_reference - f))) / (
                float(np.max(np.abs(K) @ reference.alpha)) + abs(reference.b) + 1.0)
            if difference > 1e-6:
                wrong.append(f"decision values {difference:.3g} from the certified reference's")
    return f"{what}: {'; '.join(wrong)}" if wrong else None


def main(argv=None):
    search(trial, __doc__, argv, clear=(PathError, SingularMarginError))


if __name__ == "__main__":
    main()
