"""A random search aimed at updates whose coefficients are tiny beside their boxes, run by hand
(not collected by pytest).

Linear and degree-2 polynomial kernels on 1–3 features scaled by 10³ to 10¹² make the kernel
values huge and the solution's α tiny (1e-20 beside C = 1), where the path's rates (C for an
added point) move the margins by terms that dwarf the solution's. Each trial fits an
``IncrementalSVC`` or ``IncrementalSVR`` (ε ∈ {0, 0.05, 0.3}; separable or noisy targets) on
8–60 points, then makes up to four updates that remove support vectors and other points and
add up to three; after the fit and after each update, ``check_kkt()`` from scratch must hold
to 1e-9. A clear refusal (``PathError``: a problem beyond float64; ``SingularMarginError``) is
not flagged. A failure prints its seed; ``--seed`` replays one and prints each update.

    python tests/fuzz_tiny_coefficients.py --seconds 300
    python tests/fuzz_tiny_coefficients.py --seed 2006037
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from gpath import IncrementalSVC, IncrementalSVR, PathError
from gpath.linalg import SingularMarginError


def trial(seed: int, verbose: bool = False) -> str | None:
    """One random problem; a description of what went wrong, or None."""
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(8, 60)), int(rng.integers(1, 4))
    scale = 10.0 ** rng.uniform(3, 12)
    X = rng.normal(size=(n + 20, d)) * scale
    kernel = str(rng.choice(["linear", "poly"]))
    C = float(10 ** rng.uniform(-3, 4))
    svr = rng.random() < 0.3
    noise = rng.choice([0.0, 0.3])
    method = None
    if svr:
        y = X[:, 0] / scale + noise * rng.normal(size=n + 20)
        epsilon = float(rng.choice([0, 0.05, 0.3]))
        method = str(rng.choice(["multiple", "single", "auto"]))
        model = IncrementalSVR(C=C, kernel=kernel, gamma=1.0, degree=2, epsilon=epsilon, method=method)
    else:
        y = np.where(X[:, 0] + noise * scale * rng.normal(size=n + 20) > 0, 1, 0)
        if len(np.unique(y[:n])) < 2:
            return None
        method = str(rng.choice(["multiple", "single", "auto"]))
        model = IncrementalSVC(C=C, kernel=kernel, gamma=1.0, degree=2, method=method)
    what = f"{'svr' if svr else 'svc'} {kernel} features of size {scale:.1e} C={C:.2g} method={method}"
    try:
        model.fit(X[:n], y[:n])
        kkt = model.check_kkt()
        if kkt > 1e-9:
            return f"{what}: after fit: KKT {kkt:.2e}"
        rows, next_row = list(range(n)), n
        for step in range(4):
            if svr:
                alpha = model.state_.alpha
                alpha = np.abs(alpha[0::2] - alpha[1::2])
            else:
                alpha = model.alpha_
            support = np.flatnonzero(alpha > 0)
            picked = list(rng.choice(support, size=min(int(rng.integers(0, 3)), support.size), replace=False))
            picked += list(rng.choice(len(rows), size=int(rng.integers(0, 3)), replace=False))
            picked = sorted({int(p) for p in picked})
            added = list(range(next_row, min(next_row + int(rng.integers(0, 4)), n + 20)))
            next_row += len(added)
            after = [r for i, r in enumerate(rows) if i not in picked] + added
            if len(after) < 3 or (not svr and len(np.unique(y[after])) < 2):
                return None
            kw = {"X_add": X[added], "y_add": y[added]} if added else {}
            model.update(**kw, remove=model.sample_ids_[picked])
            rows = after
            kkt = model.check_kkt()
            if verbose:
                print(f"update {step + 1}: removed rows {picked}, added {added}: {model.last_update_}, KKT {kkt:.2e}")
            if kkt > 1e-9:
                return f"{what}: after update {step + 1} ({model.last_update_.method}): KKT {kkt:.2e}"
    except (PathError, SingularMarginError):  # clear refusals, documented
        return None
    return None


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=300.0, help="how long to search")
    parser.add_argument("--start", type=int, default=2_000_000, help="first seed")
    parser.add_argument("--seed", type=int, help="replay this seed only")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    if args.seed is not None:
        print(f"seed {args.seed}: {trial(args.seed, verbose=True) or 'exact'}")
        return
    start, seed, wrong = time.perf_counter(), args.start, 0
    while time.perf_counter() - start < args.seconds:
        problem = trial(seed)
        if problem:
            wrong += 1
            print(f"seed {seed}: WRONG: {problem}", flush=True)
        seed += 1
    print(f"{seed - args.start} problems (seeds {args.start}–{seed - 1}), {wrong} wrong")


if __name__ == "__main__":
    main()
