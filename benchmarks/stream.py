"""Streaming benchmark (issue 18): progressive validation of `SlidingWindowSVC` against river's
own classifiers, accuracy and samples per second, measured side by side in one run.

Every model runs in a river Pipeline after a StandardScaler, through
`river.evaluate.progressive_val_score` (predict each sample, then learn it), on river's
Phishing (1,250 samples) and RandomRBF (seed 7, 10 features, `--n` samples). SlidingWindowSVC
(exact C-SVC of the last `window` points, RBF, gamma "scale", C = 10) at window 300 and 1,000,
batch 1 and 25; river's `KNNClassifier` at the same windows; `HoeffdingTreeClassifier` and
`LogisticRegression`. Samples/s is the whole stream's count over its wall time (model
construction included, the first fit included). Before the first stream, a tiny fit loads
gpath's compiled code once for the process (Numba's on-disk cache; about 0.1–0.3 s), which
would otherwise fall on the first row only.

A second table does the same for regression (issue 19): WaterFlow's next hourly value from
its last 7 (`gpath.datasets.load_waterflow_regression`, targets standardized), MAE and
samples/s, `SlidingWindowSVR` (C = 10, ε = 0.1, γ = 1/7) at the same windows and batches
against river's `KNNRegressor`, `HoeffdingTreeRegressor` and `LinearRegression`. Both tables
give the share of gpath's batches that safe screening took in without an update.

    python benchmarks/stream.py                 # the RESULTS.md tables
    python benchmarks/stream.py --n 1000        # quick
"""

from __future__ import annotations

import argparse
import itertools
import platform
import time

from river import compose, datasets, evaluate, linear_model, metrics, neighbors, preprocessing, tree
from river import stream as river_stream
from river.datasets import synth

from gpath.datasets import load_waterflow_regression
from gpath.river import SlidingWindowSVC, SlidingWindowSVR


def streams(n_rbf):
    return {
        "Phishing": lambda: datasets.Phishing(),
        "RandomRBF": lambda: itertools.islice(synth.RandomRBF(seed_model=7, seed_sample=7, n_classes=2,
                                                              n_features=10), n_rbf),
    }


def models(windows, batches):
    out = {}
    for window in windows:
        for batch in batches:
            out[f"SlidingWindowSVC(window={window}, batch={batch})"] = (
                lambda w=window, b=batch: SlidingWindowSVC(window=w, batch=b, C=10.0))
        out[f"river KNNClassifier(window={window})"] = (
            lambda w=window: neighbors.KNNClassifier(engine=neighbors.LazySearch(window_size=w)))
    out["river HoeffdingTreeClassifier"] = tree.HoeffdingTreeClassifier
    out["river LogisticRegression"] = linear_model.LogisticRegression
    return out


def regressors(windows, batches):
    out = {}
    for window in windows:
        for batch in batches:
            out[f"SlidingWindowSVR(window={window}, batch={batch})"] = (
                lambda w=window, b=batch: SlidingWindowSVR(window=w, batch=b, C=10.0, epsilon=0.1, gamma=1 / 7))
        out[f"river KNNRegressor(window={window})"] = (
            lambda w=window: neighbors.KNNRegressor(engine=neighbors.LazySearch(window_size=w)))
    out["river HoeffdingTreeRegressor"] = tree.HoeffdingTreeRegressor
    out["river LinearRegression"] = linear_model.LinearRegression
    return out


def waterflow():
    X, y = load_waterflow_regression()
    return river_stream.iter_array(X, (y - y.mean()) / y.std())


def run(stream, make, metric=metrics.Accuracy):
    """(score, samples/s, share of batches screened or None) of one model on one stream."""
    last = make()
    model = compose.Pipeline(preprocessing.StandardScaler(), last)
    data = list(stream())
    start = time.perf_counter()
    score = evaluate.progressive_val_score(data, model, metric())
    seconds = time.perf_counter() - start
    batches = sum(getattr(last, name, 0) for name in ("n_updates_", "n_refits_", "n_screened_"))
    screened = getattr(last, "n_screened_", 0) / batches if batches else None
    return score.get(), len(data) / seconds, screened


def _share(screened):
    return "" if screened is None else f"{screened:.2f}"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=3000, help="RandomRBF samples (default 3000)")
    parser.add_argument("--windows", type=int, nargs="+", default=[300, 1000])
    parser.add_argument("--batches", type=int, nargs="+", default=[1, 25])
    args = parser.parse_args(argv)
    print(f"Machine: {platform.machine()}, {platform.processor() or 'cpu'}, Python {platform.python_version()}")
    import numpy as np

    from gpath import IncrementalSVC, IncrementalSVR

    # Load the compiled code (Numba's on-disk cache) once, not on the first stream's first row.
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    IncrementalSVC().fit(X, np.array([0, 1, 0, 1]))
    IncrementalSVR().fit(X, X[:, 0]).update(X[:1], np.array([0.5]), remove=[0])
    print("| stream | model | accuracy | samples/s | batches screened |")
    print("|---|---|---|---|---|")
    for name, stream in streams(args.n).items():
        for label, make in models(args.windows, args.batches).items():
            accuracy, rate, screened = run(stream, make)
            print(f"| {name} | {label} | {accuracy:.4f} | {rate:,.0f} | {_share(screened)} |", flush=True)
    print()
    print("| stream | model | MAE | samples/s | batches screened |")
    print("|---|---|---|---|---|")
    for label, make in regressors(args.windows, args.batches).items():
        mae, rate, screened = run(waterflow, make, metrics.MAE)
        print(f"| WaterFlow | {label} | {mae:.4f} | {rate:,.0f} | {_share(screened)} |", flush=True)


if __name__ == "__main__":
    main()
