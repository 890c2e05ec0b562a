"""Every speed benchmark of gpath in one run: the tables of benchmarks/RESULTS.md.

1. Window updates against retraining peers and against the n × |M| product (`speed.py`; the
   MID path itself, `method="multiple"`), and large updates by the path, the warm-started
   refit and `method="auto"` (`large_update.py`); the one-point update against its floor
   (`speed.py --one-point`).
2. SimpleSVC fits against the same peers (`simplesvm.py`).
3. One outlier path against CCCP at 5 to 50 grid points (`outlier_path.py --timing-only`).
4. MID, SID and LIBSVM retrains over the C × γ grid of Karasuyama & Takeuchi (2009), section
   4.2, on WaterFlow (`grid.py`), and its plot (the paper's Figure 6) as benchmarks/grid.png.

    python benchmarks/run.py                  # on the CPU
    python benchmarks/run.py --device cuda    # the window updates on the GPU (the others are
                                              # host-bound and run on the CPU as above)
    python benchmarks/run.py --quick          # a smoke run of every table

The accuracy experiments (`outlier_path.py` without `--timing-only`), MID against SID
(`sliding_window.py`), the 10,000-update soak (`soak.py`) and model selection against
scikit-learn's grid of LIBSVM fits (`model_selection.py`) are separate scripts, as is ε-SVR
against OnlineSVR and the SVR retrains (`svr.py`), and linear-kernel fits on raw and
standardized features against the peers (`simplesvm.py --linear`); `fit_phases.py` splits a fit's time among
its phases (the float32 matrix, SMO, SimpleSVM's finish) on NumPy or CuPy, and `threads.py`
times the start's kernel sums and whole fits with the process held to 1, 2, 4, … cores.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import grid
import large_update
import outlier_path
import simplesvm
import speed


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--quick", action="store_true", help="small settings only (a smoke run)")
    parser.add_argument("--n", nargs="+", default=[], help="window sizes of the update table (default: all)")
    args = parser.parse_args(argv)
    quick = ["--quick"] if args.quick else []
    print(f"# gpath benchmarks: `python {' '.join(sys.argv)}`, {time.strftime('%Y-%m-%d %H:%M')}\n")
    start = time.perf_counter()
    print("## 1. Window updates\n", flush=True)
    speed.main(["--device", args.device, *quick] + (["--n", *args.n] if args.n else []))
    if args.device == "cpu":
        if not args.quick:
            print("\n## 1a. The one-point update against its floor\n", flush=True)
            speed.main(["--one-point"])
        print("\n## 1b. Large updates: path, warm-started refit, auto\n", flush=True)
        large_update.main(quick)
        print("\n## 2. SimpleSVC fits\n", flush=True)
        simplesvm.main(quick)
        print("\n## 3. Outlier path against CCCP\n", flush=True)
        outlier_path.main(["--timing-only"] + (["--data", "diabetes"] if args.quick else []))
        print("\n## 4. The C × γ grid on WaterFlow\n", flush=True)
        grid.main(quick or ["--plot", str(Path(__file__).with_name("grid.png"))])
    print(f"\n(total {time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
