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

    python benchmarks/stream.py                 # the RESULTS.md table
    python benchmarks/stream.py --n 1000        # quick
"""

from __future__ import annotations

import argparse
import itertools
import platform
import time

from river import compose, datasets, evaluate, linear_model, metrics, neighbors, preprocessing, tree
from river.datasets import synth

from gpath.river import SlidingWindowSVC


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


def run(stream, make):
    model = compose.Pipeline(preprocessing.StandardScaler(), make())
    data = list(stream())
    start = time.perf_counter()
    accuracy = evaluate.progressive_val_score(data, model, metrics.Accuracy())
    seconds = time.perf_counter() - start
    return accuracy.get(), len(data) / seconds


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=3000, help="RandomRBF samples (default 3000)")
    parser.add_argument("--windows", type=int, nargs="+", default=[300, 1000])
    parser.add_argument("--batches", type=int, nargs="+", default=[1, 25])
    args = parser.parse_args(argv)
    print(f"Machine: {platform.machine()}, {platform.processor() or 'cpu'}, Python {platform.python_version()}")
    import numpy as np

    from gpath import IncrementalSVC

    IncrementalSVC().fit(np.array([[0.0], [1.0], [2.0], [3.0]]), np.array([0, 1, 0, 1]))  # load the compiled code
    print("| stream | model | accuracy | samples/s |")
    print("|---|---|---|---|")
    for name, stream in streams(args.n).items():
        for label, make in models(args.windows, args.batches).items():
            accuracy, rate = run(stream, make)
            print(f"| {name} | {label} | {accuracy:.4f} | {rate:,.0f} |", flush=True)


if __name__ == "__main__":
    main()
