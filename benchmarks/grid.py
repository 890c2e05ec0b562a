"""The online time-series experiment of Karasuyama & Takeuchi (2009), section 4.2, Figure 6:
MID-SVM, SID-SVM and LIBSVM retrains over the paper's C × γ grid, in one run.

River's WaterFlow series as the demo poses it (7 lagged hourly flows → will the flow rise next
hour?), window 600, each update adds the next m = 30 points and removes the 30 oldest. For
every cell of C ∈ {0.1, 1, …, 10⁵} × γ ∈ {10⁻³, 10⁻², 10⁻¹, 1}: the mean time of `--updates`
MID updates and SID updates (from the same fitted model), LIBSVM (scikit-learn's SVC) retrained
on each new window at tol 10⁻³, 10⁻⁶ and 10⁻⁹, breakpoints, |M|, and the time per MID
breakpoint against its floor (`floor.py`), measured in the same process. Every MID model is
checked (KKT from scratch, relative to the problem's scale, ≤ 1e-9).

    python benchmarks/grid.py                      # the RESULTS.md table
    python benchmarks/grid.py --plot grid.png      # and the paper's Figure 6 as a plot
    python benchmarks/grid.py --quick              # two cells
"""

from __future__ import annotations

import argparse
import platform
import time

import numpy as np
from floor import breakpoint_floor
from sklearn.svm import SVC

from gpath import IncrementalSVC
from gpath.datasets import load_waterflow_direction

CS = [0.1, 1.0, 10.0, 1e2, 1e3, 1e4, 1e5]
GAMMAS = [1e-3, 1e-2, 1e-1, 1.0]
TOLS = [1e-3, 1e-6, 1e-9]


def cell(X, y, C, gamma, window, step, updates):
    """One cell: mean seconds per update of MID, SID and LIBSVM at each tol, and path figures."""
    mid = IncrementalSVC(C=C, gamma=gamma).fit(X[:window], y[:window])
    sid = IncrementalSVC(C=C, gamma=gamma, method="single").fit(X[:window], y[:window])
    t_mid, t_sid, t_lib, bps, bps_sid, sizes, kkt = [], [], {tol: [] for tol in TOLS}, [], [], [], 0.0
    for k in range(updates):
        lo, hi = window + k * step, window + (k + 1) * step
        for model, times, counts in ((mid, t_mid, bps), (sid, t_sid, bps_sid)):
            t = time.perf_counter()
            model.update(X_add=X[lo:hi], y_add=y[lo:hi], remove=model.sample_ids_[:step])
            times.append(time.perf_counter() - t)
            counts.append(model.last_update_.n_breakpoints)
        sizes.append(mid.last_update_.margin_size)
        kkt = max(kkt, mid.check_kkt())
        for tol in TOLS:
            t = time.perf_counter()
            SVC(C=C, gamma=gamma, tol=tol, max_iter=-1).fit(X[hi - window : hi], y[hi - window : hi])
            t_lib[tol].append(time.perf_counter() - t)
    return {"mid": np.mean(t_mid), "sid": np.mean(t_sid), "lib": {tol: np.mean(v) for tol, v in t_lib.items()},
            "bp": np.mean(bps), "bp_sid": np.mean(bps_sid), "M": int(np.mean(sizes)), "kkt": kkt}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--updates", type=int, default=4, help="updates timed per cell (default 4)")
    parser.add_argument("--window", type=int, default=600)
    parser.add_argument("--step", type=int, default=30)
    parser.add_argument("--quick", action="store_true", help="two cells only (a smoke run)")
    parser.add_argument("--plot", metavar="FILE", help="write the paper's Figure 6 (time against C per γ)")
    args = parser.parse_args(argv)
    X, y = load_waterflow_direction()
    cell(X, y, 1.0, 0.1, 200, 10, 1)  # warm-up: the compiled code is loaded once per process
    grid = [(10.0, 0.1), (1e4, 1.0)] if args.quick else [(C, g) for g in GAMMAS for C in CS]
    print(f"# grid: WaterFlow, window {args.window}, m = ℓ = {args.step}, {args.updates} updates per cell; "
          f"{platform.machine()}; {time.strftime('%Y-%m-%d')}")
    print("| C | γ | MID ms | SID ms | LIBSVM 1e-3 ms | 1e-6 ms | 1e-9 ms | MID/LIBSVM(1e-3) | bp MID | bp SID "
          "| \\|M\\| | ms/bp | floor ms | bp/floor | KKT |")
    print("|" + "---|" * 15)
    rows = []
    for C, gamma in grid:
        r = cell(X, y, C, gamma, args.window, args.step, args.updates)
        per_bp = r["mid"] / max(r["bp"], 1)
        floor = breakpoint_floor(np, args.window, r["M"])["total"]
        ratio = r["mid"] / r["lib"][1e-3]
        rows.append((C, gamma, r, ratio))
        print(f"| {C:g} | {gamma:g} | {1e3 * r['mid']:.2f} | {1e3 * r['sid']:.2f} | "
              + " | ".join(f"{1e3 * r['lib'][tol]:.2f}" for tol in TOLS)
              + f" | {ratio:.2f} | {r['bp']:.0f} | {r['bp_sid']:.0f} | {r['M']} | {1e3 * per_bp:.3f} | "
              f"{1e3 * floor:.3f} | {per_bp / floor:.1f} | {r['kkt']:.0e} |", flush=True)
    big = [ratio for C, _, _, ratio in rows if C >= 10]
    if big:
        print(f"\nC >= 10: MID faster than LIBSVM (tol 1e-3) in {sum(r < 1 for r in big)} of {len(big)} cells; "
              f"median MID/LIBSVM {np.median(big):.2f}, largest {max(big):.2f}")
    if args.plot:
        _plot(rows, args.plot)
        print(f"plot written to {args.plot}")


def _plot(rows, path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    gammas = sorted({g for _, g, _, _ in rows})
    fig, axes = plt.subplots(1, len(gammas), figsize=(4 * len(gammas), 3.6), sharey=True, squeeze=False)
    for ax, g in zip(axes[0], gammas):
        cells = [(C, r) for C, gg, r, _ in rows if gg == g]
        Cs = [C for C, _ in cells]
        ax.plot(Cs, [1e3 * r["mid"] for _, r in cells], "o-", label="MID-SVM")
        ax.plot(Cs, [1e3 * r["sid"] for _, r in cells], "s-", label="SID-SVM")
        for tol, style in zip(TOLS, (":", "--", "-.")):
            ax.plot(Cs, [1e3 * r["lib"][tol] for _, r in cells], "k" + style, label=f"LIBSVM tol {tol:g}")
        ax.set(xscale="log", yscale="log", xlabel="C", title=f"γ = {g:g}")
    axes[0][0].set_ylabel("ms per update")
    axes[0][-1].legend(fontsize=7)
    fig.suptitle("WaterFlow, window 600, 30 points in and out per update (Karasuyama & Takeuchi 2009, Fig. 6)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    main()
