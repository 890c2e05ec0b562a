"""Soak test: a long stream of small random updates must stay exact, fast and flat in memory.

A window of about 500 points of river's Bananas data slides through `--updates` updates
(each adds 1-5 random points of the data, duplicates included, and removes 1-5 random
points of the window). Every `--check-every` updates the model's KKT violation is recomputed
from scratch; at the end the model is compared with the exact reference (LIBSVM's index sets
re-solved in float64). Resident memory is sampled to show it stays flat after warm-up.

    python benchmarks/soak.py                  # 10,000 updates (RESULTS.md)
    python benchmarks/soak.py --updates 500    # quick
"""

from __future__ import annotations

import argparse
import platform
import resource
import time
import tracemalloc

import numpy as np

from gpath import IncrementalSVC
from gpath.datasets import load_bananas
from gpath.reference import exact_svc


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() / 2**20


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--updates", type=int, default=10_000)
    parser.add_argument("--window", type=int, default=500)
    parser.add_argument("--check-every", type=int, default=500)
    parser.add_argument("--C", type=float, default=10.0)
    parser.add_argument("--gamma", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    X, y = load_bananas()
    rng = np.random.default_rng(args.seed)
    rows = list(rng.choice(len(y), args.window, replace=False))
    model = IncrementalSVC(C=args.C, gamma=args.gamma).fit(X[rows], y[rows])
    window = dict(zip(model.sample_ids_.tolist(), rows))
    tracemalloc.start()
    worst_kkt, times, samples = 0.0, np.zeros(args.updates), []
    start = time.perf_counter()
    for u in range(1, args.updates + 1):
        add = rng.choice(len(y), int(rng.integers(1, 6)))
        ids = np.array(list(window))
        remove = rng.choice(ids, int(rng.integers(1, 6)), replace=False)
        if len(window) - len(remove) + len(add) < args.window - 20:
            remove = remove[:1]
        kept_labels = {int(y[window[i]]) for i in ids if i not in set(remove.tolist())} | set(y[add].tolist())
        if kept_labels != {0, 1}:
            continue
        model.update(X_add=X[add], y_add=y[add], remove=remove)
        for i in remove:
            del window[int(i)]
        for i, r in zip(model.sample_ids_[-len(add):], add):
            window[int(i)] = int(r)
        times[u - 1] = model.last_update_.time
        if u % args.check_every == 0:
            worst_kkt = max(worst_kkt, model.check_kkt())
            samples.append((u, rss_mb(), tracemalloc.get_traced_memory()[0] / 2**20))
    total = time.perf_counter() - start
    times = times[times > 0]
    rows = np.array([window[i] for i in model.sample_ids_])
    y_pm = np.where(y[rows] == 1, 1.0, -1.0)
    ref = exact_svc(X[rows], y_pm, args.C, gamma=args.gamma, ridge=model.ridge)
    f, f_ref = model.decision_function(X[rows]), ref.decision_function(X[rows])
    diff = float(np.abs(f - f_ref).max() / np.abs(f_ref).max())
    print(f"# soak: {args.updates} updates, window ~{args.window}, Bananas, C={args.C}, gamma={args.gamma}; "
          f"{platform.machine()}, {time.strftime('%Y-%m-%d')}")
    print(f"total {total:.1f} s; update time mean {1e3 * np.mean(times):.2f} ms, "
          f"first 1,000 {1e3 * np.mean(times[:1000]):.2f} ms, last 1,000 {1e3 * np.mean(times[-1000:]):.2f} ms")
    print(f"max KKT violation over the stream (from scratch, every {args.check_every}): {worst_kkt:.2e}; "
          f"at the end: {model.check_kkt():.2e}")
    print(f"end vs exact reference: |f - f_exact| / max|f_exact| = {diff:.2e} (reference KKT {ref.kkt:.1e})")
    print("| update | RSS MB | traced Python MB |")
    print("|---|---|---|")
    for u, rss, traced in samples:
        print(f"| {u} | {rss:.1f} | {traced:.2f} |")


if __name__ == "__main__":
    main()
