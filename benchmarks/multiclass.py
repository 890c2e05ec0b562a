"""Multiclass fits (LIBSVM's one-vs-one pairs) against the peers, side by side in one run
(issue 17: a drop-in for ``SVC`` code fits every pair exactly).

scikit-learn's digits (1,797 points, 64 features scaled to [0, 1], 10 classes: 45 pairs of
about 360 points) and wine (178 points, 13 standardized features, 3 classes), RBF with
``gamma="scale"``. Each time is the median of ``--repeats`` fits; the peers are LIBSVM
(scikit-learn's ``SVC``, tol 1e-3), scikit-learn-intelex's ``SVC`` and ThunderSVM where they
import (a missing one is a skipped column). "agree" is the share of the training points where
gpath's prediction equals LIBSVM's; "KKT" the largest relative violation of gpath's pairs,
from scratch (``check_kkt``). A tiny fit first loads gpath's compiled code.

    python benchmarks/multiclass.py
    python benchmarks/multiclass.py --quick      # a smoke run: wine, C = 1, one fit each
"""

from __future__ import annotations

import argparse
import platform
import time

import numpy as np
from peers import peers
from sklearn.datasets import load_digits, load_wine

from gpath import IncrementalSVC, SimpleSVC


def _data(name):
    if name == "digits":
        X, y = load_digits(return_X_y=True)
        return X / 16.0, y
    X, y = load_wine(return_X_y=True)
    return (X - X.mean(0)) / X.std(0), y


def _median_fit(make, args, X, y, repeats):
    """``make(*args)`` fitted ``repeats`` times on (X, y): the last model and the median time."""
    times, model = [], None
    for _ in range(repeats):
        model = make(*args)
        t = time.perf_counter()
        model.fit(X, y)
        times.append(time.perf_counter() - t)
    return model, float(np.median(times))


def _gpath(estimator, C):
    return estimator(C=C, gamma="scale")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="wine, C = 1, one fit each (a smoke run)")
    parser.add_argument("--repeats", type=int, default=5, help="fits per time (median)")
    args = parser.parse_args(argv)
    repeats = 1 if args.quick else args.repeats
    available = peers()
    names = list(available)
    print(f"# multiclass fits; {platform.machine()}, {time.strftime('%Y-%m-%d')}; RBF, gamma='scale', "
          f"median of {repeats}")
    head = ["data", "n", "classes", "C", "IncrementalSVC s", "SimpleSVC s", *[f"{p} s" for p in names],
            "IncrementalSVC ÷ fastest peer", "agree", "KKT"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    X0, y0 = _data("wine")
    IncrementalSVC().fit(X0[:60], y0[:60])
    for data in ("wine",) if args.quick else ("wine", "digits"):
        X, y = _data(data)
        gamma = 1.0 / (X.shape[1] * X.var())
        for C in (1.0,) if args.quick else (1.0, 10.0, 100.0):
            inc, t_inc = _median_fit(_gpath, (IncrementalSVC, C), X, y, repeats)
            _, t_simple = _median_fit(_gpath, (SimpleSVC, C), X, y, repeats)
            times, libsvm = {}, None
            for name, make in available.items():
                model, times[name] = _median_fit(make, (C, gamma), X, y, repeats)
                if name == "LIBSVM":
                    libsvm = model
            agree = float(np.mean(inc.predict(X) == libsvm.predict(X))) if libsvm is not None else float("nan")
            fastest = min(times.values())
            cells = [data, str(len(y)), str(len(np.unique(y))), f"{C:g}", f"{t_inc:.3f}", f"{t_simple:.3f}",
                     *[f"{times[p]:.3f}" for p in names], f"{t_inc / fastest:.1f}", f"{agree:.3f}",
                     f"{inc.check_kkt():.1e}"]
            print("| " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
