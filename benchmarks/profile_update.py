"""Profile one sliding-window update (cProfile): where the time of a breakpoint goes.

    python benchmarks/profile_update.py --n 3000 --m 100 [--device cuda]
"""

from __future__ import annotations

import argparse
import cProfile
import pstats

import numpy as np

from gpath import IncrementalSVC
from gpath.datasets import load_adult


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=3000)
    parser.add_argument("--m", type=int, default=100)
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args(argv)
    X, y = load_adult()
    order = np.random.default_rng(0).permutation(len(y))
    X, y = X[order], y[order]
    if args.device == "cuda":
        import cupy

        X = cupy.asarray(X)
    n, m = args.n, args.m
    model = IncrementalSVC(C=1.0).fit(X[:n], y[:n])
    model.update(X_add=X[n : n + m], y_add=y[n : n + m], remove=model.sample_ids_[:m])  # warm-up
    prof = cProfile.Profile()
    prof.enable()
    model.update(X_add=X[n + m : n + 2 * m], y_add=y[n + m : n + 2 * m], remove=model.sample_ids_[:m])
    prof.disable()
    s = model.last_update_
    print(f"n={n} m=l={m} device={args.device}: {s.time:.3f} s, {s.n_breakpoints} breakpoints, "
          f"{1e3 * s.time / max(s.n_breakpoints, 1):.2f} ms per breakpoint, |M| = {s.margin_size}")
    pstats.Stats(prof).sort_stats("tottime").print_stats(args.top)


if __name__ == "__main__":
    main()
