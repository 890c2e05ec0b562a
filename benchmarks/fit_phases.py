"""Where an exact fit's time goes: the float32 kernel rows, SMO, SimpleSVM's start from SMO's
sets (the bound columns and the factor) and its iterations, for `SimpleSVC` on Adult and
`IncrementalSVR` on make_friedman1 (features as drawn), with scikit-learn-intelex's whole fit
alongside where it imports. Each phase is timed around gpath's own functions (after a device
synchronize on the GPU); each row is the second of two fits.

    python benchmarks/fit_phases.py                 # gpath on NumPy
    python benchmarks/fit_phases.py --device cuda   # gpath on CuPy, then on NumPy
"""

from __future__ import annotations

import argparse
import platform
import time

import numpy as np
from simplesvm import data
from sklearn.datasets import make_friedman1

import gpath._simplesvm
import gpath._smo
from gpath import IncrementalSVR, SimpleSVC

_PHASES = [(gpath._smo.KernelRows, "_compute", "float32 rows"), (gpath._smo, "smo", "SMO"),
           (gpath._simplesvm._SimpleRun, "start_at", "SimpleSVM's start"),
           (gpath._simplesvm._SimpleRun, "run", "iterations")]
# SMO computes the float32 rows it reads (by blocks only the working sets' rows): shown apart.
_WITHIN = {"SMO": "float32 rows"}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    args = parser.parse_args(argv)
    if args.device == "cuda":
        import cupy

        devices = [("CuPy", cupy.asarray), ("NumPy", np.asarray)]
        synchronize = cupy.cuda.Device().synchronize
    else:
        devices, synchronize = [("NumPy", np.asarray)], lambda: None
    spent = {}
    for owner, name, phase in _PHASES:
        setattr(owner, name, _timed(getattr(owner, name), phase, spent, synchronize))
    try:
        from sklearnex.svm import SVC as IntelSVC
        from sklearnex.svm import SVR as IntelSVR
    except ImportError:
        IntelSVC = IntelSVR = None
    print(f"# fit phases; {platform.machine()}, {time.strftime('%Y-%m-%d')}; the second of two fits (s)")
    phases = list(dict.fromkeys(phase for _, _, phase in _PHASES))
    print("| fit | arrays | total | " + " | ".join(phases) + " | sklearnex |")
    print("|" + "---|" * (len(phases) + 4))
    X_f, y_f = make_friedman1(n_samples=10000, n_features=10, noise=1.0, random_state=0)
    y_f = (y_f - y_f.mean()) / y_f.std()
    rows = []
    for n, C in ((10000, 1.0), (10000, 100.0), (30000, 1.0)):
        X, y = data("adult", n)
        gamma = SimpleSVC().fit(X[:100], y[:100]).kernel_.gamma  # "scale", as the peers get it
        rows.append((f"Adult {n}, C = {C:g}", X, y, SimpleSVC(C=C, gamma=gamma),
                     None if IntelSVC is None else IntelSVC(C=C, gamma=gamma)))
    rows.append(("make_friedman1 10,000, C = 10 (ε-SVR)", X_f, y_f, IncrementalSVR(C=10.0, epsilon=0.1, gamma=0.1),
                 None if IntelSVR is None else IntelSVR(C=10.0, epsilon=0.1, gamma=0.1)))
    for label, X, y, model, peer in rows:
        peer_time = "—" if peer is None else f"{_seconds(peer, X, y, synchronize)[0]:.3f}"
        for arrays, to_device in devices:
            total, split = _seconds(model, to_device(X), y, synchronize, spent)
            cells = [f"{split.get(p, 0.0):.3f}" for p in phases]
            print(f"| {label} | {arrays} | {total:.3f} | " + " | ".join(cells) + f" | {peer_time} |", flush=True)


def _timed(function, phase, spent, synchronize):
    def timed(*args, **kwargs):
        synchronize()
        start = time.perf_counter()
        out = function(*args, **kwargs)
        synchronize()
        spent[phase] = spent.get(phase, 0.0) + time.perf_counter() - start
        return out

    return timed


def _seconds(model, X, y, synchronize, spent=None):
    """(seconds, phases) of the second of two fits of ``model`` on (X, y)."""
    for _ in range(2):
        if spent is not None:
            spent.clear()
        synchronize()
        start = time.perf_counter()
        model.fit(X, y)
        synchronize()
        total = time.perf_counter() - start
    split = dict(spent or {})
    for outer, inner in _WITHIN.items():
        if outer in split:
            split[outer] -= split.get(inner, 0.0)
    return total, split


if __name__ == "__main__":
    main()
