"""Speed of a window update against its floor and against retraining peers, in one run.

For each setting a model is fitted on a window of n points, then `--updates` updates add
the next m points and remove the oldest ℓ = m. Printed side by side:

- the update time against retraining the new window with LIBSVM (scikit-learn's SVC,
  default tol 1e-3), scikit-learn-intelex's SVC and ThunderSVM (CPU) where they import;
- the time per breakpoint against the floor of the method, the bare n × |M| matrix-vector
  product at the same n and |M| measured in the same process (on the GPU also the bytes of
  that product divided by the measured device bandwidth).

    python benchmarks/speed.py                     # CPU (RESULTS.md)
    python benchmarks/speed.py --device cuda       # the same on the GPU, plus the bandwidth floor
"""

from __future__ import annotations

import argparse
import platform
import time

import numpy as np
from peers import peers

from gpath import IncrementalSVC
from gpath.datasets import load_adult, load_bananas

SETTINGS = [  # (data, n, m, C, gamma)
    ("bananas", 5000, 50, 100.0, 1.0),
    ("adult", 3000, 10, 1.0, "scale"),
    ("adult", 3000, 100, 1.0, "scale"),
    ("adult", 10000, 10, 1.0, "scale"),
    ("adult", 10000, 100, 1.0, "scale"),
    ("adult", 10000, 1000, 1.0, "scale"),
]


def timer(xp_name):
    if xp_name == "cupy":
        import cupy

        def now():
            cupy.cuda.Device().synchronize()
            return time.perf_counter()

        return now
    return time.perf_counter


def matvec_floor(xp, n, m, now, repeats=20):
    """Median seconds of a bare (n × m) @ (m,) float64 product on the device."""
    A = xp.ones((n, m), dtype=xp.float64)
    v = xp.ones(m, dtype=xp.float64)
    A @ v
    times = []
    for _ in range(repeats):
        t = now()
        A @ v
        times.append(now() - t)
    return float(np.median(times))


def bandwidth(xp, now):
    """Device memory bandwidth (bytes/s, read + write) from copying 1 GiB."""
    a = xp.ones(2**27, dtype=xp.float64)
    b = a + 0.0
    t = now()
    for _ in range(5):
        b = a + 0.0
    del b
    return 5 * 2 * a.nbytes / (now() - t)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--updates", type=int, default=3)
    args = parser.parse_args(argv)
    if args.device == "cuda":
        import cupy as xp
    else:
        xp = np
    now = timer(xp.__name__)
    data = {"bananas": load_bananas(), "adult": None}
    Xa, ya = load_adult()
    order = np.random.default_rng(0).permutation(len(ya))
    data["adult"] = (Xa[order], ya[order])
    Xb, yb = data["bananas"]
    order = np.random.default_rng(0).permutation(len(yb))
    data["bananas"] = (Xb[order], yb[order])
    bw = bandwidth(xp, now) if args.device == "cuda" else None
    available = peers()
    print(f"# speed: gpath on {args.device}; {platform.machine()}; {time.strftime('%Y-%m-%d')}"
          + (f"; measured device bandwidth {bw / 1e9:.0f} GB/s" if bw else ""))
    cols = " | ".join(f"{p} s | update/{p}" for p in available)
    print(f"| data | n | m = ℓ | C | update s | {cols} | bp | \\|M\\| | ms/bp | matvec ms | bp/matvec "
          + ("| floor ms | bp/floor " if bw else "") + "|")
    print("|" + "---|" * (8 + 2 * len(available) + (2 if bw else 0) + 1))
    for name, n, m, C, gamma in SETTINGS:
        X, y = data[name]
        Xd = xp.asarray(X)
        model = IncrementalSVC(C=C, gamma=gamma).fit(Xd[:n], y[:n])
        g = model.kernel_.gamma
        upd, bps, msize, peer_t = [], [], [], {p: [] for p in available}
        for u in range(args.updates):
            lo = n + u * m
            t = now()
            model.update(X_add=Xd[lo : lo + m], y_add=y[lo : lo + m], remove=model.sample_ids_[:m])
            upd.append(now() - t)
            bps.append(model.last_update_.n_breakpoints)
            msize.append(model.last_update_.margin_size)
            for p, make in available.items():
                t = time.perf_counter()
                make(C, g).fit(X[lo + m - n : lo + m], y[lo + m - n : lo + m])
                peer_t[p].append(time.perf_counter() - t)
        assert model.check_kkt() <= 1e-9
        t_upd, n_bp, size = np.mean(upd), np.mean(bps), int(np.mean(msize))
        per_bp = t_upd / max(n_bp, 1)
        mv = matvec_floor(xp, n, max(size, 1), now)
        cells = " | ".join(f"{np.mean(peer_t[p]):.4f} | {t_upd / np.mean(peer_t[p]):.3f}" for p in available)
        line = (f"| {name} | {n} | {m} | {C:g} | {t_upd:.4f} | {cells} | {n_bp:.0f} | {size} | "
                f"{1e3 * per_bp:.3f} | {1e3 * mv:.3f} | {per_bp / mv:.1f} |")
        if bw:
            floor = 8.0 * n * size / bw
            line += f" {1e3 * floor:.4f} | {per_bp / floor:.0f} |"
        print(line, flush=True)


if __name__ == "__main__":
    main()
