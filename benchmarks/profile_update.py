"""Where the time of one sliding-window update goes, against the floor of its breakpoints.

Same data and settings as `speed.py`. One model slides once (warm-up), then once under
cProfile; the update's time is split into

- set-up: the new points' kernel block Q[:, A] (and their rows of the cached columns), the
  removed points' block Q[:, R] for the path's direction, the copy of the state;
- the path loop (compiled for NumPy), of which: kernel columns of points entering M that
  were not cached (their count × the measured time of one column), and the floor of its
  breakpoints (`floor.py`: the n × |M| product, 4 triangular solves, one pass over n);
- finish: dropping the removed rows, release of bounded margin points, the refinement check
  and the KKT check;
- the rest: validation, bookkeeping of ids and classes, the new attributes.

    python benchmarks/profile_update.py                     # the rows of RESULTS.md
    python benchmarks/profile_update.py --data adult --n 3000 --m 1000
    python benchmarks/profile_update.py --data adult --n 3000 --m 100 --top 25   # and cProfile's table
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time

import numpy as np
from floor import breakpoint_floor
from speed import load

from gpath import IncrementalSVC

# (data, n, m, C, gamma) as in speed.py
ROWS = [
    ("bananas", 5000, 50, 100.0, 1.0),
    ("adult", 1000, 100, 1.0, "scale"),
    ("adult", 3000, 1000, 1.0, "scale"),
    ("adult", 10000, 100, 1.0, "scale"),
    ("gaussians", 100000, 100, 1.0, 0.1),
]
SETUP = ("_extended", "__init__")  # SVCState._extended, _PathRun.__init__ (in gpath/_path.py)
FINISH = ("take_rows", "release_bounded_margin", "refine", "kkt_violation")


def _cumulative(stats, path_suffix, names) -> float:
    return sum(v[3] for (file, _, name), v in stats.stats.items() if file.endswith(path_suffix) and name in names)


def breakdown(data, n, m, C, gamma, top=0) -> dict:
    X, y = load(data, n + 3 * m)
    model = IncrementalSVC(C=C, gamma=gamma, method="multiple").fit(X[:n], y[:n])
    model.update(X_add=X[n : n + m], y_add=y[n : n + m], remove=model.sample_ids_[:m])  # warm-up
    state = model.states_[0]
    columns_before = state.cache.n_columns_computed
    prof = cProfile.Profile()
    t = time.perf_counter()
    prof.enable()
    model.update(X_add=X[n + m : n + 2 * m], y_add=y[n + m : n + 2 * m], remove=model.sample_ids_[:m])
    prof.disable()
    total = time.perf_counter() - t
    s = model.last_update_
    stats = pstats.Stats(prof)
    loop = _cumulative(stats, "_mid_numba.py", ("follow",))
    setup = _cumulative(stats, "_path.py", SETUP)
    finish = _cumulative(stats, "_path.py", FINISH)
    new_state = model.states_[0]
    columns = new_state.cache.n_columns_computed - columns_before  # derived caches carry the count
    one_column = _median(lambda: new_state.engine.q_column(new_state.kernel, new_state.X, 0, new_state.y, 0.0))
    floor = breakpoint_floor(np, new_state.n, max(s.margin_size, 1))["total"]
    if top:
        stats.sort_stats("tottime").print_stats(top)
    return {"total": total, "bp": s.n_breakpoints, "M": s.margin_size, "setup": setup, "loop": loop,
            "columns": columns, "column_s": one_column, "floor": floor, "finish": finish}


def _median(fn, repeats=20) -> float:
    fn()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return float(np.median(times))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", choices=("bananas", "adult", "gaussians"))
    parser.add_argument("--n", type=int)
    parser.add_argument("--m", type=int)
    parser.add_argument("--top", type=int, default=0, help="also print cProfile's top functions")
    args = parser.parse_args(argv)
    rows = ROWS
    if args.data:
        C, gamma = next((C, g) for d, _, _, C, g in ROWS if d == args.data)
        rows = [(args.data, args.n or 3000, args.m or 100, C, gamma)]
    breakdown("bananas", 300, 10, 100.0, 1.0)  # warm-up: the compiled code is loaded once per process
    print(f"# update breakdown (ms); {time.strftime('%Y-%m-%d')}; cProfile on, so totals run a little slow")
    print("| data | n | m = ℓ | bp | \\|M\\| | update | set-up | path loop | of which new columns | "
          "of which bp × floor | loop rest per bp | finish | rest |")
    print("|" + "---|" * 13)
    for data, n, m, C, gamma in rows:
        r = breakdown(data, n, m, C, gamma, args.top)
        cols = r["columns"] * r["column_s"]
        floors = r["bp"] * r["floor"]
        rest_per_bp = (r["loop"] - cols - floors) / max(r["bp"], 1)
        other = r["total"] - r["setup"] - r["loop"] - r["finish"]
        print(f"| {data} | {n} | {m} | {r['bp']} | {r['M']} | {1e3 * r['total']:.1f} | {1e3 * r['setup']:.1f} | "
              f"{1e3 * r['loop']:.1f} | {1e3 * cols:.1f} ({r['columns']}) | {1e3 * floors:.1f} | "
              f"{1e3 * rest_per_bp:.3f} | {1e3 * r['finish']:.1f} | {1e3 * other:.1f} |", flush=True)


if __name__ == "__main__":
    main()
