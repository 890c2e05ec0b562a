"""The experiment of Suzumura et al. (2015), section 5, on data we can ship.

Generalization (Tables 3-6 layout): 10 random 40/30/30 splits with the paper's noise
(`gpath.datasets.noisy_split`: 15 % flipped labels, or 5 % input/output outliers for
regression); C from {0.01, 0.1, 1, 10, 100} and θ or s chosen together on the validation
set; mean (standard deviation) of the test error (0-1 for classification, L1 for
regression) for C-SVC/SVR (the path's start: the ordinary SVM without bias), CCCP-θ, OP-θ,
CCCP-s and OP-s. CCCP uses the paper's 5-point grids; OP uses every path point.

Time (Figure 6): one OP path against CCCP with 5, 10, 20 and 50 grid points, side by side.

    python benchmarks/outlier_path.py                 # the RESULTS.md tables
    python benchmarks/outlier_path.py --splits 2 --data breast_cancer   # quick
"""

from __future__ import annotations

import argparse
import platform
import time

import numpy as np

from gpath import CCCPRobustSVC, CCCPRobustSVR, RobustSVC, RobustSVR
from gpath.datasets import load_path_data, noisy_split

CONFIGS = [("breast_cancer", "linear"), ("breast_cancer", "rbf"), ("digits", "rbf"),
           ("diabetes", "linear"), ("diabetes", "rbf"), ("waterflow", "rbf")]
C_GRID = [0.01, 0.1, 1.0, 10.0, 100.0]
METHODS = ["SVM", "CCCP-θ", "OP-θ", "CCCP-s", "OP-s"]


def _estimators(task, kernel, gamma, C):
    common = {"C": C, "kernel": kernel, "gamma": gamma}
    if task == "classification":
        return {"CCCP-θ": CCCPRobustSVC(path="theta", **common), "OP-θ": RobustSVC(path="theta", **common),
                "CCCP-s": CCCPRobustSVC(path="s", **common), "OP-s": RobustSVC(path="s", **common)}
    # Regression: OP-θ at s = 1 (targets standardized); s paths over [s_R, 0.2 s_R] (section 5.2).
    return {"CCCP-θ": CCCPRobustSVR(path="theta", s=1.0, **common), "OP-θ": RobustSVR(path="theta", s=1.0, **common),
            "CCCP-s": CCCPRobustSVR(path="s", **common), "OP-s": RobustSVR(path="s", **common)}


def _test_error(model, task, X, y, index):
    f = model._decision(X, model.path_.alpha[index][:, None])[:, 0]
    if task == "classification":
        return float(np.mean((f > 0) != (y == 1)))
    return float(np.mean(np.abs(y - f)))


def generalization(data, kernel, splits):
    X, y, task = load_path_data(data)
    gamma = 1.0 / X.shape[1]
    errors = {m: [] for m in METHODS}
    for seed in range(splits):
        (Xtr, ytr), (Xva, yva), (Xte, yte) = noisy_split(X, y, task, random_state=seed)
        best = {m: (np.inf, None) for m in METHODS}
        for C in C_GRID:
            for name, est in _estimators(task, kernel, gamma, C).items():
                est.fit(Xtr, ytr).select(Xva, yva)
                val = est.path_.validation_error
                candidates = {name: est.selected_index_}  # never the point before a jump
                if name == "OP-θ":  # the path's first point is the ordinary SVM (θ = 1)
                    candidates["SVM"] = 0
                for m, i in candidates.items():
                    if val[i] < best[m][0]:
                        best[m] = (val[i], _test_error(est, task, Xte, yte, i))
        for m in METHODS:
            errors[m].append(best[m][1])
    return task, {m: (np.mean(v), np.std(v)) for m, v in errors.items()}


def timing(data, kernel, C=1.0, seed=0):
    X, y, task = load_path_data(data)
    gamma = 1.0 / X.shape[1]
    (Xtr, ytr), _, _ = noisy_split(X, y, task, random_state=seed)
    rows = []
    for path in ("theta", "s"):
        est = _estimators(task, kernel, gamma, C)["OP-θ" if path == "theta" else "OP-s"]
        t = time.perf_counter()
        est.fit(Xtr, ytr)
        op = time.perf_counter() - t
        cccp = []
        for grid in (5, 10, 20, 50):
            c = _estimators(task, kernel, gamma, C)["CCCP-θ" if path == "theta" else "CCCP-s"].set_params(grid=grid)
            t = time.perf_counter()
            c.fit(Xtr, ytr)
            cccp.append(time.perf_counter() - t)
        rows.append((path, op, len(est.path_.params), cccp))
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--splits", type=int, default=10)
    parser.add_argument("--data", nargs="+", default=None, help="restrict to these data sets")
    parser.add_argument("--timing-only", action="store_true", help="skip the generalization table")
    args = parser.parse_args(argv)
    configs = [c for c in CONFIGS if args.data is None or c[0] in args.data]
    print(f"# Outlier path experiment: {args.splits} splits; {platform.machine()}, {time.strftime('%Y-%m-%d')}")
    if not args.timing_only:
        print("\n## Test error, mean (std) over splits\n")
        print("| data | kernel | task | " + " | ".join(METHODS) + " |")
        print("|---|---|---|" + "---|" * len(METHODS))
    for data, kernel in [] if args.timing_only else configs:
        task, res = generalization(data, kernel, args.splits)
        cells = " | ".join(f"{res[m][0]:.3f} ({res[m][1]:.3f})" for m in METHODS)
        print(f"| {data} | {kernel} | {task} | {cells} |", flush=True)
    print("\n## Time of one path vs CCCP over grids (seconds, C = 1, split 0)\n")
    print("| data | kernel | path | OP (points) | CCCP 5 | CCCP 10 | CCCP 20 | CCCP 50 | CCCP 50 / OP |")
    print("|---|---|---|---|---|---|---|---|---|")
    for data, kernel in configs:
        for path, op, n_points, cccp in timing(data, kernel):
            print(f"| {data} | {kernel} | {path} | {op:.3f} ({n_points}) | "
                  + " | ".join(f"{t:.3f}" for t in cccp) + f" | {cccp[-1] / op:.1f} |", flush=True)


if __name__ == "__main__":
    main()
