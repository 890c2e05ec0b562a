"""The exact fit against LIBSVM and the fastest SVC trainers (issue 17; the SimpleSVM paper's
section 4 comparison).

Wall time of ``SimpleSVC`` (its default: SMO's start on the float32 kernel matrix, then the
exact active-set finish) and ``IncrementalSVC.fit`` (the same trainer) over a range of C, in
one run and side by side with: SimpleSVC from the paper's start (``init="closest_pair"``,
gpath's trainer before the SMO start; not run at n = 30,000), scikit-learn's SVC (LIBSVM, tol 1e-3), scikit-learn-intelex's SVC and
ThunderSVM (CPU) where they import, and the floor of an exact fit (``floor.fit_floor``: the
support vectors' kernel columns as BLAS-3 blocks and one factor of the working set). SimpleSVC's
solutions are exact (KKT column: the largest violation recomputed from scratch, relative to
the problem's scale); the peers stop at their tolerance. "SMO pairs" and "finish it." are the
pair updates of the start and the active-set iterations after it.

    python benchmarks/simplesvm.py
    python benchmarks/simplesvm.py --quick       # a smoke run: breast cancer only
    python benchmarks/simplesvm.py --no-large    # without Adult n = 30,000
    python benchmarks/simplesvm.py --n 10000     # only the sets of these sizes
    python benchmarks/simplesvm.py --sparse      # Adult as a SciPy CSR matrix (88 % zeros), every
                                                 # trainer on the sparse rows
    python benchmarks/simplesvm.py --device cuda # the same trainer on CuPy arrays (issue 17, item 4)
                                                 # against itself on NumPy and the peers, one machine
    python benchmarks/simplesvm.py --linear      # a linear kernel on features as users pass them,
                                                 # raw or standardized; peers stopped at 120 s

Every time is the faster of two fits (one at n = 30,000), for gpath and the peers alike.
"""

from __future__ import annotations

import argparse
import itertools
import platform
import time

import numpy as np
from floor import fit_floor
from peers import peers

from gpath import IncrementalSVC, SimpleSVC
from gpath.datasets import load_adult, load_bananas

CS = [0.1, 1.0, 10.0, 100.0]
# (data, n, values of C); the first is the quick run, the last the large one.
SETS = [("breast_cancer", 569, CS), ("bananas", 5000, CS), ("adult", 3000, CS), ("adult", 10000, CS),
        ("adult", 30000, [1.0])]


def data(name, n):
    if name == "breast_cancer":
        from sklearn.datasets import load_breast_cancer

        X, y = load_breast_cancer(return_X_y=True)
        return (X - X.mean(0)) / X.std(0), y
    X, y = load_bananas() if name == "bananas" else load_adult()
    rows = np.random.default_rng(0).permutation(len(y))[:n]
    return X[rows], y[rows]


def _timed(model, X, y, repeat=2):
    """The fitted model and the faster of ``repeat`` fits: the first fit of a size in a process
    also pays the operating system's first touch of fresh memory (in the development microVM
    about 1.25 ns a byte: 0.5 s for Adult n = 10,000's float32 matrix), every trainer alike."""
    best = np.inf
    for _ in range(repeat):
        t = time.perf_counter()
        model.fit(X, y)
        best = min(best, time.perf_counter() - t)
    return model, best


def sparse_table(sizes=(3000, 10000)):
    """SimpleSVC on sparse rows (Adult's one-hot codes and numbers as CSR) against the peers on
    the same CSR matrix, and against SimpleSVC on the dense rows."""
    import scipy.sparse

    # ThunderSVM-CPU takes CSR input but is slow on it (39 s a fit at n = 3,000, C = 0.1; its dense
    # fit there is about 1 s): measured once and left out.
    available = {name: make for name, make in peers().items() if name != "ThunderSVM"}
    print(f"# SimpleSVC on sparse rows vs peers; {platform.machine()}, {time.strftime('%Y-%m-%d')}; Adult as CSR, "
          "RBF, gamma = 1/d")
    print("| n | C | SimpleSVC sparse s | KKT | SimpleSVC dense s | "
          + " | ".join(f"{p} sparse s | Simple/{p}" for p in available) + " |")
    print("|" + "---|" * (5 + 2 * len(available)))
    for n in sizes:
        X, y = data("adult", n)
        Xs = scipy.sparse.csr_matrix(X)
        g = 1.0 / X.shape[1]
        SimpleSVC(gamma=g).fit(Xs, y)  # the first fit of a size also pays the first touch of its memory
        for C in CS:
            model, t_sparse = _timed(SimpleSVC(C=C, gamma=g, random_state=0), Xs, y)
            kkt = model.check_kkt(Xs, y)
            _, t_dense = _timed(SimpleSVC(C=C, gamma=g, random_state=0), X, y)
            cells = []
            for make in available.values():
                try:  # each peer on its own copy: ThunderSVM rounds a CSR matrix's values to float32 in place
                    _, dt = _timed(make(C, g), Xs.copy(), y)
                    cells.append(f"{dt:.3f} | {t_sparse / dt:.2f}")
                except (TypeError, ValueError) as exc:  # a peer without sparse input: a skipped column
                    cells.append(f"— ({type(exc).__name__}) | —")
            print(f"| {n} | {C:g} | {t_sparse:.3f} | {kkt:.0e} | {t_dense:.3f} | "
                  + " | ".join(cells) + " |", flush=True)


def _linear_sets():
    """(name, X, y): breast cancer and the digits (≥ 5 or not) as they ship (features up to
    4,254 and 16), standardized breast cancer, Bananas (two features of size 1) and Adult
    (standardized numbers and one-hot codes), 3,000 rows each."""
    from sklearn.datasets import load_breast_cancer, load_digits

    X, y = load_breast_cancer(return_X_y=True)
    yield "breast_cancer (raw)", X, y
    yield "breast_cancer", (X - X.mean(0)) / X.std(0), y
    digits = load_digits()
    yield "digits (raw)", digits.data, (digits.target >= 5).astype(int)
    yield "bananas", *data("bananas", 3000)
    yield "adult", *data("adult", 3000)


def _limited(model, X, y, seconds):
    """The time of one fit of ``model`` in a forked process, or None past ``seconds`` (a peer
    that runs for minutes: LIBSVM and scikit-learn-intelex on unscaled linear problems)."""
    import multiprocessing

    def fit(queue):
        start = time.perf_counter()
        model.fit(X, y)
        queue.put(time.perf_counter() - start)

    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    process = context.Process(target=fit, args=(queue,))
    process.start()
    process.join(seconds)
    if process.is_alive():
        process.terminate()
        process.join()
        return None
    return queue.get()


def linear_table(quick=False, seconds=120.0):
    """SimpleSVC with a linear kernel on features as users pass them, raw or standardized,
    against the peers (each one fit, stopped past ``seconds``). Raw features make the linear
    kernel's values large and its rank low (d + 1 beside n): the margin matrix is singular but
    for the ridge, which float64 resolves while (|M| + 1) · max K stays below some 3·10⁸
    (gpath.linalg)."""
    from gpath import PathError

    available = peers()
    print(f"# SimpleSVC, linear kernel, vs peers; {platform.machine()}, {time.strftime('%Y-%m-%d')}; "
          f"peers stopped at {seconds:g} s")
    print(r"| data | n | d | C | SimpleSVC s | KKT | \|M\| | " + " | ".join(f"{p} s | Simple/{p}" for p in available) + " |")
    print("|" + "---|" * (7 + 2 * len(available)))
    small = data("breast_cancer", 569)
    SimpleSVC(kernel="linear").fit(*small)  # loads the compiled code once
    # γ is unused by a linear kernel: 1.0, since ThunderSVM takes no "scale".
    for make in available.values():  # (and each peer's, before the forks inherit it)
        make(1.0, 1.0, kernel="linear").fit(*small)
    for name, X, y in itertools.islice(_linear_sets(), 1, 2) if quick else _linear_sets():
        for C in [0.01, 1.0, 100.0]:
            try:
                model, t_simple = _timed(SimpleSVC(C=C, kernel="linear", random_state=0), X, y, 1)
                simple = f"{t_simple:.3f} | {model.check_kkt(X, y):.0e} | {model.fit_stats_.working_set_size}"
            except PathError:
                t_simple, simple = None, "refused: beyond float64 (PathError) | | "
            cells = []
            for make in available.values():
                dt = _limited(make(C, 1.0, kernel="linear"), X, y, seconds)
                shown, bound, dt = (f"> {seconds:g}", "< ", seconds) if dt is None else (f"{dt:.3f}", "", dt)
                cells.append(f"{shown} | " + ("—" if t_simple is None else f"{bound}{t_simple / dt:.2f}"))
            print(f"| {name} | {len(y)} | {X.shape[1]} | {C:g} | {simple} | " + " | ".join(cells) + " |", flush=True)


def gpu_table(quick=False):
    """SimpleSVC with X on the GPU (CuPy) against SimpleSVC on the host's NumPy and the peers on
    the host CPU of the same machine, Adult, RBF, gamma = 'scale'. Each time is the faster of two
    fits, the GPU's taken after a device synchronize."""
    import cupy

    def timed_gpu(model, X, y):
        best = np.inf
        for _ in range(2):
            cupy.cuda.Device().synchronize()
            t = time.perf_counter()
            model.fit(X, y)
            cupy.cuda.Device().synchronize()
            best = min(best, time.perf_counter() - t)
        return model, best

    available = peers()
    rows = [("breast_cancer", 569, [1.0])] if quick else [("adult", 3000, [1.0]), ("adult", 10000, [1.0, 100.0]),
                                                          ("adult", 30000, [1.0])]
    print(f"# SimpleSVC on the GPU vs the host; {cupy.cuda.runtime.getDeviceProperties(0)['name'].decode()}, "
          f"{platform.machine()}, {time.strftime('%Y-%m-%d')}; RBF, gamma='scale'")
    print("| data | n | C | SimpleSVC CuPy s | KKT | start | SimpleSVC NumPy s | CuPy/NumPy | "
          + " | ".join(f"{p} s | CuPy/{p}" for p in available) + " |")
    print("|" + "---|" * (8 + 2 * len(available)))
    X0, y0 = data("breast_cancer", 569)
    SimpleSVC().fit(cupy.asarray(X0), y0)  # loads the compiled code and CuPy's kernels once
    for name, n, cs in rows:
        X, y = data(name, n)
        Xd = cupy.asarray(X)
        for C in cs:
            model, t_gpu = timed_gpu(SimpleSVC(C=C, random_state=0), Xd, y)
            kkt = model.check_kkt(Xd, y)
            _, t_cpu = _timed(SimpleSVC(C=C, random_state=0), X, y)
            cells = []
            for make in available.values():
                _, dt = _timed(make(C, model.kernel_.gamma), X, y, 1 if n >= 30000 else 2)
                cells.append(f"{dt:.3f} | {t_gpu / dt:.2f}")
            print(f"| {name} | {n} | {C:g} | {t_gpu:.3f} | {kkt:.0e} | {model.fit_stats_.start} | {t_cpu:.3f} | "
                  f"{t_gpu / t_cpu:.2f} | " + " | ".join(cells) + " |", flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="breast cancer only (a smoke run)")
    parser.add_argument("--no-large", action="store_true", help="without Adult n = 30,000")
    parser.add_argument("--sparse", action="store_true", help="Adult as a CSR matrix, every trainer on sparse rows")
    parser.add_argument("--n", type=int, nargs="+", help="only the sets of these sizes")
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu",
                        help="cuda: SimpleSVC on CuPy arrays against itself on NumPy and the peers")
    parser.add_argument("--linear", action="store_true",
                        help="a linear kernel on raw and standardized features (peers stopped at 120 s)")
    args = parser.parse_args(argv)
    if args.linear:
        linear_table(args.quick)
        return
    if args.device == "cuda":
        gpu_table(args.quick)
        return
    if args.sparse:
        sparse_table((500,) if args.quick else (3000, 10000))
        return
    available = peers()
    sets = SETS[:1] if args.quick else SETS[1:-1] if args.no_large else SETS[1:]
    sets = [s for s in sets if args.n is None or s[1] in args.n]
    print(f"# SimpleSVC vs peers; {platform.machine()}, {time.strftime('%Y-%m-%d')}; RBF, gamma='scale'")
    print("| data | n | C | SimpleSVC s | SMO pairs | finish it. | KKT | IncrementalSVC.fit s | closest-pair start s "
          "| floor s | Simple/floor | " + " | ".join(f"{p} s | Simple/{p}" for p in available) + " |")
    print("|" + "---|" * (11 + 2 * len(available)))
    SimpleSVC().fit(*data("breast_cancer", 569))  # loads the compiled code once
    for name, n, cs in sets:
        X, y = data(name, n)
        repeat = 1 if n >= 30000 else 2
        for C in cs:
            model, t_simple = _timed(SimpleSVC(C=C, random_state=0), X, y, repeat)
            stats, g = model.fit_stats_, model.kernel_.gamma
            incremental, t_incremental = _timed(IncrementalSVC(C=C, gamma="scale"), X, y, repeat)
            assert incremental.check_kkt() <= 1e-9
            if n < 30000:
                _, t_pair = _timed(SimpleSVC(C=C, random_state=0, init="closest_pair"), X, y, repeat)
                pair = f"{t_pair:.3f}"
            else:
                pair = "—"
            floor = fit_floor(np.asarray(X, dtype=float), np.asarray(model.support_), stats.working_set_size, g)
            cells = [f"{t_incremental:.3f} | {pair} | {floor:.3f} | {t_simple / floor:.2f}"]
            for make in available.values():
                _, dt = _timed(make(C, g), X, y, repeat)
                cells.append(f"{dt:.3f} | {t_simple / dt:.2f}")
            print(f"| {name} | {len(y)} | {C:g} | {t_simple:.3f} | {stats.n_smo_iter} | {stats.n_iter} "
                  f"| {model.check_kkt(X, y):.0e} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
