"""A random search for wrong results: gpath's models on random problems against the exact
references, run by hand (not collected by pytest: it takes minutes and draws anew).

Each trial draws 8–180 points in 1–5 features of one of four kinds (Gaussian; rounded to one
decimal, so ties and duplicates; scaled by 10⁻³ to 10⁹; a third of the points one repeated
point), a kernel (RBF, linear, degree-2 polynomial), C from 10⁻³ to 10⁶, and one of:

- ``svc``: an ``IncrementalSVC`` fit (two or three classes, sample weights with some 0), then
  up to five updates adding and removing up to 14 points, removals in any order;
- ``svr``: the same for ``IncrementalSVR`` (ε ∈ {0, 0.05, 0.3, 2});
- ``simple``: a ``SimpleSVC`` fit;
- ``path``: the C path of ``SVCPath`` (two classes) or ``SVRPath`` over a random range in
  [10⁻³, 10⁵] (``SVRPath``: [10⁻³, 10³]), checked at its two ends, a C drawn inside it and
  the middles of two segments;
- ``cv`` (C up to 10³): ``gpath.model_selection.cross_validate`` of an ``IncrementalSVC`` or
  ``IncrementalSVR`` (3 or 5 folds, each fold's model an update of the one before): every
  fold's model against the reference on its training rows; or ``cv_error_path``: each fold's
  held-out error at two C drawn in its range against the reference's, fitted on the fold's
  training rows at that C (a fold whose bias is only bounded, or with a held-out decision
  value within round-off of 0, is skipped);
- ``robust`` (C up to 10⁴): the outlier path of ``RobustSVC`` or ``RobustSVR`` (in θ or in
  s, with or without an intercept), ``check_kkt`` from scratch at every point of it, and
  every point against its own partition re-solved in float64 (``robust_check.partition_distance``:
  the decision values to 1e-6 of |f| plus 1,000 ε of the scale; no reference beyond that:
  its points are local optima of a non-convex problem).

A quarter of the seeds draw a path, 15 % of the others an outlier path, 15 % of the rest
cross-validation, each from a draw of its own, so that the other seeds' problems are as
before.

Half the ``svc`` and ``svr`` trials (drawn apart, so that a seed's problem is as before)
slide a window instead: 3–12 updates that each add the next point and remove the oldest, the
streaming update that one compiled call follows (:mod:`gpath._one_point`); the KKT check
after each, the reference after the last.

After every fit and update, ``check_kkt()`` from scratch must hold to 1e-9 and every pair's
decision values must equal the certified reference's (:func:`gpath.reference.exact_svc`,
``exact_svr``) to 1e-6 of their scale, plus float64's bound on the error of f's own sum (``EPS``
below). On a path, where the bias may be any point of an interval (no coefficient strictly
inside its box: the path keeps b linear, a fit takes the middle), the decision values are
compared less their mean difference from the reference's, the bias being checked by
``check_kkt(C)``. A failure prints its seed; ``--seed`` replays one.
A clear error (``PathError`` for a problem float64 cannot resolve) is printed, not counted.

    python tests/fuzz_references.py --seconds 600
    python tests/fuzz_references.py --seed 700123
"""

from __future__ import annotations

import argparse
import itertools
import time
import warnings

import numpy as np
from robust_check import partition_distance
from sklearn.model_selection import StratifiedKFold

from gpath import IncrementalSVC, IncrementalSVR, RobustSVC, RobustSVR, SimpleSVC, SVCPath, SVRPath
from gpath.model_selection import cross_validate, cv_error_path
from gpath.reference import exact_svc, exact_svr, kernel_matrix

KINDS = ("rbf", "linear", "poly")
# A difference counts beyond 1e-6 of f's scale plus float64's bound on the error of f's own
# sum, n ε Σ_j |K(x, x_j) coef_j| (Higham, "Accuracy and Stability of Numerical Algorithms",
# 2002, eq. 3.5): where f cancels down from terms 10⁹ larger, no float64 solution resolves it
# better. (A long-double solve of the same margin equations put gpath's f 4.2 ε·Σ|terms| from
# it on the ε-SVR problem that once flagged, seed 36,002,228; the reference's 0.35.)
EPS = float(np.finfo(np.float64).eps)
TOLERANCE = 1e-6


def draw(rng, n):
    """Rows of one of four kinds, and their number of features."""
    d = int(rng.integers(1, 6))
    X = rng.normal(size=(n, d))
    kind = int(rng.integers(4))
    if kind == 1:
        X = np.round(X, 1)
    elif kind == 2:
        X = X * 10.0 ** int(rng.integers(-3, 10))
    elif kind == 3:
        X[: n // 3] = X[0]
    return X, d


def drawn(seed: int):
    """What every trial of ``seed`` draws first: ``(rng, n, X, kernel, C, gamma)``, X with n + 60
    rows (the rng goes on to draw the rest of the trial)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(8, 120))
    X, d = draw(rng, n + 60)
    kernel = KINDS[int(rng.integers(3))]
    C = float(10.0 ** rng.uniform(-3, 6))  # (LIBSVM, the reference's start, takes minutes beyond)
    gamma = 1.0 if kernel == "linear" else float(10.0 ** rng.uniform(-2, 1)) / max(1.0, float(X.var()) * d)
    return rng, n, X, kernel, C, gamma


def trial(seed: int) -> str | None:
    """One random problem; a description of what went wrong, or None."""
    rng, n, X, kernel, C, gamma = drawn(seed)
    params = dict(C=C, kernel=kernel, gamma=gamma, degree=2)
    what = ("svc", "svr", "simple")[int(rng.integers(3))]
    if np.random.default_rng([seed, 3]).random() < 0.25:  # (drawn apart: a seed's other trials are as before)
        return _path_trial(np.random.default_rng([seed, 4]), X[:n], kernel, gamma)
    if np.random.default_rng([seed, 5]).random() < 0.15:
        return _robust_trial(seed)
    if np.random.default_rng([seed, 7]).random() < 0.15:
        return _cv_trial(np.random.default_rng([seed, 8]), X[:n], kernel, gamma, min(C, 1e3))  # (k references)
    if what == "svr":
        y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=len(X))
        eps = float(rng.choice([0.0, 0.05, 0.3, 2.0]))
        model = IncrementalSVR(epsilon=eps, method=str(rng.choice(["multiple", "auto", "single"])), **params)
        weights = None
    else:
        y = np.where(X[:, 0] + 0.5 * rng.normal(size=len(X)) > 0, 1, -1)
        if rng.random() < 0.3:
            y = rng.integers(0, 3, size=len(X))
        weights = None if rng.random() < 0.6 else np.exp(rng.uniform(-1.5, 1.5, len(X))) * (rng.random(len(X)) > 0.1)
        model = (SimpleSVC(**params) if what == "simple" else
                 IncrementalSVC(method=str(rng.choice(["multiple", "auto", "single"])), **params))
    rows = list(range(n))

    def fails():
        Xr, yr = X[rows], y[rows]
        wr = None if weights is None else weights[rows]
        if what == "svr":
            ref = exact_svr(Xr, yr, C, epsilon=eps, kernel=kernel, gamma=gamma, degree=2)
            kkt, pairs = model.check_kkt(), [(model.predict(Xr), ref.predict(Xr), ref.certified,
                                              _terms(Xr, ref.X, ref.beta, ref.params))]
        else:
            kkt = model.check_kkt(Xr, yr) if what == "simple" else model.check_kkt()
            pairs = list(_pair_values(model, Xr, yr, wr, C, kernel, gamma))
        errors = [_difference(f - f_ref, f_ref, terms) for f, f_ref, ok, terms in pairs if ok]
        if kkt > 1e-9 or (errors and max(errors) > TOLERANCE):
            return f"kkt {kkt:.1e}, largest difference from the reference {max(errors, default=0.0):.1e}"
        return None

    if len(np.unique(y[rows])) < 2:
        return None
    model.fit(X[rows], y[rows], **({} if weights is None else {"sample_weight": weights[rows]}))
    problem = fails()
    if what != "simple" and np.random.default_rng([seed, 1]).random() < 0.5:
        return _slid(model, X, y, weights, rows, what, problem, fails, kernel, C)
    for step in range(0 if what == "simple" else int(rng.integers(1, 6))):
        if problem:
            break
        m, ell = int(rng.integers(0, 15)), int(rng.integers(0, min(15, len(rows) - 2)))
        start = max(rows) + 1
        added = list(range(start, min(start + m, len(X))))
        picked = rng.choice(len(rows), size=ell, replace=False) if ell else np.zeros(0, dtype=int)
        after = [r for i, r in enumerate(rows) if i not in set(picked.tolist())] + added
        if (not added and not ell) or (what != "svr" and len(np.unique(y[after])) < 2):
            break
        kw = {"X_add": X[added], "y_add": y[added]} if added else {}
        if added and weights is not None:
            kw["sample_weight_add"] = weights[added]
        model.update(**kw, remove=model.sample_ids_[picked])
        rows = after
        problem = fails()
        if problem:
            problem = f"after update {step + 1}: {problem}"
    return None if problem is None else f"{what} {kernel} C={C:.3g} n={len(rows)}: {problem}"


def _slid(model, X, y, weights, rows, what, problem, fails, kernel, C):
    """The window trial: one-point updates (the next point in, the oldest out), the KKT check
    from scratch after each, the reference after the last."""
    rng = np.random.default_rng([rows[-1], len(X), 2])
    steps = 0
    for steps in range(1, int(rng.integers(3, 13)) + 1):
        if problem or rows[-1] + 1 >= len(X):
            break
        added, after = rows[-1] + 1, rows[1:] + [rows[-1] + 1]
        if what != "svr" and len(np.unique(y[after])) < 2:
            break
        kw = {} if weights is None else {"sample_weight_add": weights[added : added + 1]}
        model.update(X[added : added + 1], y[added : added + 1], remove=model.sample_ids_[:1], **kw)
        rows[:] = after
        kkt = model.check_kkt()
        if kkt > 1e-9:
            problem = f"after window update {steps}: kkt {kkt:.1e}"
    if not problem:
        problem = fails()
        problem = problem and f"after {steps} window updates: {problem}"
    return None if problem is None else f"{what} (window) {kernel} C={C:.3g} n={len(rows)}: {problem}"


def _path_trial(rng, X, kernel, gamma):
    """The C path of ``SVCPath`` or ``SVRPath`` on X, checked at C_min, C_max, a C drawn
    between them and the middles of two segments between breakpoints."""
    regression = rng.random() < 0.5
    C_min = float(10.0 ** rng.uniform(-3, 3))
    # (LIBSVM, the reference, runs for minutes at large C: over ten for one ε-SVR at C ≈ 7,000.)
    C_max = min(1e3 if regression else 1e5, C_min * float(10.0 ** rng.uniform(0, 4)))
    params = dict(C_min=C_min, C_max=C_max, kernel=kernel, gamma=gamma, degree=2)
    if regression:
        y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=len(X))
        eps = float(rng.choice([0.0, 0.05, 0.3]))
        model = SVRPath(epsilon=eps, **params).fit(X, y)
    else:
        y = np.where(X[:, 0] + 0.5 * rng.normal(size=len(X)) > 0, 1, -1)
        if len(np.unique(y)) < 2:
            return None
        model = SVCPath(**params).fit(X, y)
    knots = np.unique(np.asarray(model.path_.Cs, dtype=float))
    middles = np.sqrt(knots[:-1] * knots[1:])
    picks = middles[rng.permutation(middles.size)[:2]] if middles.size else middles
    what = f"{'SVRPath' if regression else 'SVCPath'} {kernel} C in [{C_min:.3g}, {C_max:.3g}] n={len(X)}"
    for C in [C_min, C_max, float(np.exp(rng.uniform(np.log(C_min), np.log(C_max)))), *picks.tolist()]:
        kkt = model.check_kkt(C=C)
        if regression:
            f, ref = model.predict(X, C=C), exact_svr(X, y, C, epsilon=eps, kernel=kernel, gamma=gamma, degree=2,
                                                      ridge=model.ridge)
            f_ref = ref.predict(X)
        else:
            f, ref = model.decision_function(X, C=C), exact_svc(X, y, C, kernel=kernel, gamma=gamma, degree=2,
                                                                ridge=model.ridge)
            f_ref = ref.decision_function(X)
        gap = f - f_ref
        coef = ref.beta if regression else ref.y * ref.alpha
        error = _difference(gap - gap.mean(), f_ref, _terms(X, ref.X, coef, ref.params)) if ref.certified else 0.0
        if kkt > 1e-9 or error > TOLERANCE:
            return f"{what}: at C={C:.6g}: kkt {kkt:.1e}, largest difference from the reference {error:.1e}"
    return None


def _cv_trial(rng, X, kernel, gamma, C):
    """Exact k-fold cross-validation: half the trials ``cv_error_path``
    (:func:`_cv_error_trial`); the others ``cross_validate``, each fold's model (an update of
    the one before) against the reference on its training rows, and its ``check_kkt()``."""
    regression = rng.random() < 0.5
    if rng.random() < 0.5:
        return _cv_error_trial(rng, X, kernel, gamma, C)
    params = dict(C=C, kernel=kernel, gamma=gamma, degree=2)
    if regression:
        y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=len(X))
        eps = float(rng.choice([0.0, 0.05, 0.3]))
        estimator = IncrementalSVR(epsilon=eps, **params)
    else:
        y = np.where(X[:, 0] + 0.5 * rng.normal(size=len(X)) > 0, 1, -1)
        if min(np.count_nonzero(y == 1), np.count_nonzero(y == -1)) < 6:
            return None  # (every training set of 5 folds must hold both classes)
        estimator = IncrementalSVC(**params)
    k = int(rng.choice([3, 5]))
    out = cross_validate(estimator, X, y, cv=k, return_estimator=True, return_indices=True)
    for fold, (model, train) in enumerate(zip(out["estimator"], out["indices"]["train"])):
        Xt, yt = X[train], y[train]
        if regression:
            ref = exact_svr(Xt, yt, C, epsilon=eps, kernel=kernel, gamma=gamma, degree=2)
            f, f_ref = model.predict(X), ref.predict(X)
        else:
            ref = exact_svc(Xt, yt.astype(float), C, kernel=kernel, gamma=gamma, degree=2)
            f, f_ref = model.decision_function(X), ref.decision_function(X)
        kkt = model.check_kkt()
        error = np.abs(f - f_ref).max() / (1.0 + np.abs(f_ref).max()) if ref.certified else 0.0
        if kkt > 1e-9 or error > 1e-6:
            return (f"cross_validate {type(model).__name__} {kernel} C={C:.3g} n={len(X)} fold {fold + 1} of {k}: "
                    f"kkt {kkt:.1e}, largest difference from the reference {error:.1e}")
    return None


def _cv_error_trial(rng, X, kernel, gamma, C):
    """``cv_error_path`` over [C/100, C]: each fold's held-out error at two C inside, against
    the reference fitted on the fold's training rows at that C."""
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=len(X)) > 0, 1, -1)
    k = int(rng.choice([3, 5]))
    if min(np.count_nonzero(y == 1), np.count_nonzero(y == -1)) < k + 1:
        return None  # (every training set must hold both classes)
    splits = list(StratifiedKFold(k).split(X, y))
    C_min, C_max = C / 100.0, C
    out = cv_error_path(X, y, cv=splits, C_min=C_min, C_max=C_max, kernel=kernel, gamma=gamma, degree=2)
    for C_at in np.exp(rng.uniform(np.log(C_min), np.log(C_max), size=2)):
        i = min(int(np.searchsorted(out.Cs, C_at, side="right")) - 1, out.error.size - 1)
        for fold, (train, test) in enumerate(splits):
            ref = exact_svc(X[train], y[train].astype(float), float(C_at), kernel=kernel, gamma=gamma, degree=2)
            f = ref.decision_function(X)[test]
            free = (ref.alpha > 1e-10 * C_at) & (ref.alpha < (1.0 - 1e-10) * C_at)
            if not ref.certified or not free.any() or np.abs(f).min() <= 1e-6 * (1.0 + np.abs(f).max()):
                # (A held-out point on the boundary: its side is round-off. No α strictly inside
                # its box: the bias is any point of an interval, the path's is not the fit's.)
                continue
            expected = np.count_nonzero((f > 0) != (y[test] == 1)) / test.size
            if out.fold_errors[fold, i] != expected:
                return (f"cv_error_path {kernel} C in [{C_min:.3g}, {C_max:.3g}] n={len(X)} fold {fold + 1} of {k}: "
                        f"at C={C_at:.6g} error {out.fold_errors[fold, i]:.4f}, the reference's {expected:.4f}")
    return None


def robust_problem(seed: int):
    """The outlier-path problem of ``seed`` (:func:`_robust_trial`'s): ``(estimator class, X, y,
    parameters)``, X with its n rows."""
    _, n, X, kernel, C, gamma = drawn(seed)
    X, rng = X[:n], np.random.default_rng([seed, 6])
    regression = rng.random() < 0.5
    path, intercept = str(rng.choice(["theta", "s"])), bool(rng.random() < 0.5)
    params = dict(C=min(C, 1e4), kernel=kernel, gamma=gamma, degree=2, path=path, fit_intercept=intercept)
    if regression:
        y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=len(X))
        y[rng.random(len(X)) < 0.1] += 5.0  # outliers
        return RobustSVR, X, y, {**params, "s": float(rng.choice([0.5, 1.0, 2.0]))}
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=len(X)) > 0, 1, -1)
    y[rng.random(len(X)) < 0.1] *= -1  # flipped labels
    return RobustSVC, X, y, {**params, "s": float(rng.choice([0.0, -0.5, -1.0])),
                             "s_max": float(rng.choice([0.0, -0.5]))}


def _robust_trial(seed: int):
    """The outlier path of ``RobustSVC`` or ``RobustSVR`` (:func:`robust_problem`), ``check_kkt``
    at each point and each point against its own partition
    (:func:`robust_check.partition_distance`)."""
    estimator, X, y, params = robust_problem(seed)
    if len(np.unique(y)) < 2:
        return None
    model = estimator(**params).fit(X, y)
    kernel, path, intercept, C = params["kernel"], params["path"], params["fit_intercept"], params["C"]
    for at in np.unique(np.asarray(model.path_.params, dtype=float)):
        kkt = model.check_kkt(at=float(at))
        if kkt > 1e-9:
            return (f"{type(model).__name__} {kernel} path={path} intercept={intercept} C={C:.3g} n={len(X)}: "
                    f"at {path}={at:.6g}: kkt {kkt:.1e}")
    distance = partition_distance(model, X, y)
    if distance > 1.0:
        return (f"{type(model).__name__} {kernel} path={path} intercept={intercept} C={C:.3g} n={len(X)}: "
                f"a point {distance:.3g} times the bound from its partition's float64 solution")
    return None


def _pair_values(model, X, y, weights, C, kernel, gamma):
    """(gpath's decision values, the reference's, whether it is certified) per pair of classes."""
    classes = model.classes_
    for p, (a, b) in enumerate(itertools.combinations(range(len(classes)), 2)):
        rows = np.flatnonzero((y == classes[a]) | (y == classes[b]))
        y_pm = np.where(y[rows] == classes[b], 1.0, -1.0)
        ref = exact_svc(X[rows], y_pm, C, kernel=kernel, gamma=gamma, degree=2,
                        sample_weight=None if weights is None else weights[rows])
        if len(classes) == 2:
            f = model.decision_function(X)
        elif hasattr(model, "states_"):
            state = model.states_[p]
            f = kernel_matrix(X, X[rows], kernel=kernel, gamma=gamma, degree=2) @ (y_pm * np.asarray(state.alpha))
            f = f + state.b
        else:
            continue
        yield f, ref.decision_function(X), ref.certified, _terms(X, ref.X, ref.y * ref.alpha, ref.params)


def _difference(gap, f_ref, terms):
    """The largest difference ``gap`` of decision values from the reference's ``f_ref`` (shape
    (n,)) relative to their scale, in which float64's bound on the error of f's own sum,
    n ε Σ|terms|, counts 1/TOLERANCE times: a difference up to that bound stays below
    TOLERANCE."""
    return float(np.abs(gap).max()) / (1.0 + float(np.abs(f_ref).max()) + gap.size * EPS * terms / TOLERANCE)


def _terms(X, X_ref, coef, params):
    """The largest sum of absolute terms Σ_j |K(x, x_j) coef_j| of a decision value on rows X:
    float64 resolves f only to about ε times it, however exact the solution."""
    return float(np.max(np.abs(kernel_matrix(X, X_ref, **params)) @ np.abs(coef)))


def search(trial_of, doc: str, argv=None, clear=(Exception,)) -> int:
    """The command line of a random search: ``trial_of(seed)`` on seeds from ``--start`` for
    ``--seconds`` (or the one ``--seed``), printing each wrong result's seed and each error
    of the types ``clear`` (a clear refusal, not counted; any other error stops the search).
    Returns the number of wrong results."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=300.0, help="how long to search")
    parser.add_argument("--start", type=int, default=int(time.time()) % 10**6 * 1000, help="first seed")
    parser.add_argument("--seed", type=int, help="replay this seed only")
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")
    seeds = [args.seed] if args.seed is not None else iter(range(args.start, args.start + 10**9))
    end, tried, failed = time.perf_counter() + args.seconds, 0, 0
    for seed in seeds:
        if args.seed is None and time.perf_counter() > end:
            break
        tried += 1
        try:
            problem = trial_of(seed)
        except clear as exc:
            print(f"seed {seed}: {type(exc).__name__}: {str(exc)[:160]}", flush=True)
            continue
        if problem:
            failed += 1
            print(f"seed {seed}: WRONG: {problem}", flush=True)
        if tried % 10 == 0:  # (a last problem can run long past the deadline in LIBSVM)
            print(f"... {tried} problems so far (last seed {seed}), {failed} wrong", flush=True)
    print(f"{tried} problems, {failed} wrong", flush=True)
    return failed


def main(argv=None):
    search(trial, __doc__, argv)  # (every error a clear one: a refusal is reported, not counted)


if __name__ == "__main__":
    main()
