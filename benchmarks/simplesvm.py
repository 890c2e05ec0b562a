"""SimpleSVM against LIBSVM and other SVC trainers (Vishwanathan, Smola & Murty 2003, section 4).

Kernel evaluations and wall time of SimpleSVC over a range of C (small C: many bounded
support vectors; large C: few), against scikit-learn's SVC (LIBSVM) at tol 1e-3 and 1e-10,
scikit-learn-intelex's SVC and ThunderSVM (CPU) where they import, in one run, with the
paper's rule (one violator per iteration, ``block_size=1``) and the floor of an exact fit
(``floor.fit_floor``: the support vectors' kernel columns as BLAS-3 blocks and one factor of
the working set). SimpleSVC's
solutions are exact (KKT column); the others stop at their tolerance. LIBSVM does not report
its kernel evaluations; n² (a full kernel) is printed for scale.

    python benchmarks/simplesvm.py
    python benchmarks/simplesvm.py --quick       # a smoke run: breast cancer only
"""

from __future__ import annotations

import argparse
import platform
import time

import numpy as np
from floor import fit_floor
from peers import peers

from gpath import SimpleSVC
from gpath.datasets import load_adult, load_bananas

SETS = [("breast_cancer", 569), ("bananas", 2000), ("adult", 1000), ("adult", 3000), ("adult", 10000)]
CS = [0.1, 1.0, 10.0, 100.0]


def data(name, n):
    if name == "breast_cancer":
        from sklearn.datasets import load_breast_cancer

        X, y = load_breast_cancer(return_X_y=True)
        return (X - X.mean(0)) / X.std(0), y
    X, y = load_bananas() if name == "bananas" else load_adult()
    rows = np.random.default_rng(0).permutation(len(y))[:n]
    return X[rows], y[rows]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="breast cancer only (a smoke run)")
    args = parser.parse_args(argv)
    available = peers(libsvm_tols=(1e-3, 1e-10))
    print(f"# SimpleSVC vs peers; {platform.machine()}, {time.strftime('%Y-%m-%d')}; RBF, gamma='scale'")
    print("| data | n | C | SimpleSVC s | kernel evals / n² | iterations | KKT | paper's rule (block 1) s "
          "| floor s | Simple/floor | " + " | ".join(f"{p} s | Simple/{p}" for p in available) + " |")
    print("|" + "---|" * (10 + 2 * len(available)))
    for name, n in SETS[:1] if args.quick else SETS:
        X, y = data(name, n)
        for C in CS:
            if name == "adult" and n >= 10000 and C >= 100:
                continue  # LIBSVM at tol 1e-10 takes many minutes here
            t = time.perf_counter()
            model = SimpleSVC(C=C, random_state=0).fit(X, y)
            t_simple = time.perf_counter() - t
            g = model.kernel_.gamma
            t = time.perf_counter()
            SimpleSVC(C=C, random_state=0, block_size=1).fit(X, y)
            t_paper = time.perf_counter() - t
            floor = fit_floor(np.asarray(X, dtype=float), np.asarray(model.support_),
                              model.fit_stats_.working_set_size, g)
            cells = [f"{t_paper:.3f} | {floor:.3f} | {t_simple / floor:.2f}"]
            for make in available.values():
                t = time.perf_counter()
                make(C, g).fit(X, y)
                dt = time.perf_counter() - t
                cells.append(f"{dt:.3f} | {t_simple / dt:.2f}")
            print(f"| {name} | {len(y)} | {C:g} | {t_simple:.3f} | {model.n_kernel_evaluations_ / len(y) ** 2:.3f} "
                  f"| {model.n_iter_} | {model.check_kkt(X, y):.0e} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
