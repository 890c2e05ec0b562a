"""ε-SVR benchmark: gpath's IncrementalSVR against the exact online SVR peer (OnlineSVR, Ma,
Theiler & Perkins 2003, wrapped as ``pyonlinesvr``) and scikit-learn / scikit-learn-intelex
``SVR`` retrains, measured side by side in one run (a peer that does not import is a skipped
column).

1. WaterFlow (river), standardized, 7 lags -> the next hour, a window of 600, C = 10,
   ε = 0.1, γ = 1/7: window updates of m = ℓ = 1 and 30 (MID, gpath's single-point update,
   OnlineSVR's ``partial_fit`` + ``forget``, the retrains of the new window), with the floor
   of one breakpoint at this size (benchmarks/floor.py).
2. scikit-learn's ``make_friedman1`` at n = 10,000 (10 features, noise 1), y standardized,
   C = 10, ε = 0.1, γ = 0.1, its features as drawn and standardized: the fit (the faster of
   two, for gpath and each peer alike: a process's first touch of fresh memory cost 2–3 ns a
   byte on the development container, up to a second of the first fit's), and
   m = ℓ = 100 updates (``method="auto"``: the path, or a warm-started refit where that is
   cheaper; the table says which) against the retrains.
3. The exact C path (``SVRPath``) over [1e-2, 1e3] (the fastest of three) against 50 fits of
   each retrain peer at log-spaced C, on WaterFlow (600), diabetes (442) and make_friedman1
   (2,000), its solution checked from scratch at 7 C; and the exact 10-fold CV mean squared
   error over the whole range (``cv_mse_path``) against scikit-learn's ``GridSearchCV`` over
   20 C on the same folds.

Every gpath model is checked from scratch (``check_kkt`` <= 1e-9), and OnlineSVR's and the
retrains' predictions are compared with gpath's (the largest difference on the window).

    python benchmarks/svr.py                 # the RESULTS.md tables
    python benchmarks/svr.py --updates 5     # quicker
    python benchmarks/svr.py --part 3        # the C path only
    python benchmarks/svr.py --part 2 --device cuda   # part 2 with gpath's arrays on the GPU
"""

from __future__ import annotations

import argparse
import pickle
import platform
import time

import numpy as np
from floor import breakpoint_floor
from sklearn.datasets import load_diabetes, make_friedman1
from sklearn.svm import SVR

from gpath import IncrementalSVR, SVRPath
from gpath.datasets import load_waterflow_regression


def _retrain_peers():
    """``{name: make(C, epsilon, gamma) -> unfitted regressor}`` of the retrain peers that import."""
    out = {"SVR": lambda C, e, g: SVR(C=C, epsilon=e, gamma=g)}
    try:
        from sklearnex.svm import SVR as IntelSVR

        out["sklearnex SVR"] = lambda C, e, g: IntelSVR(C=C, epsilon=e, gamma=g)
    except ImportError:
        pass
    return out


def _online_svr(C, epsilon, gamma):
    try:
        from pyonlinesvr import OnlineSVR
    except ImportError:
        return None
    return OnlineSVR(C=C, epsilon=epsilon, gamma=gamma, tol=1e-3)


def _ms(seconds):
    return f"{1e3 * seconds:.2f}"


def window_table(X, y, W, steps, updates, C, eps, gamma):
    """Rows of the WaterFlow window table."""
    base = IncrementalSVR(C=C, epsilon=eps, gamma=gamma, method="multiple").fit(X[:W], y[:W])
    blob = pickle.dumps(base)
    peers = _retrain_peers()
    rows = []
    for m in steps:
        mid, sid = pickle.loads(blob), pickle.loads(blob)
        sid.set_params(method="single")
        osvr = _online_svr(C, eps, gamma)
        if osvr is not None:
            osvr.fit(X[:W], y[:W])
        rec = {key: [] for key in ("mid", "sid", "osvr", "bp", "kkt", *peers)}
        diff = {key: 0.0 for key in ("osvr", *peers)}
        windows = [W + u * m for u in range(min(updates, (len(y) - W) // m))]  # as many as the series holds
        # gpath's updates first, then each peer's: a peer's threads (scikit-learn-intelex's TBB
        # pool spins after a fit) would otherwise share the cores with the next timed update.
        # Each model runs its own loop, as each peer does: its update (timed), then its checks
        # and its prediction of the window (the peers': a prediction).
        predictions = []
        for model, key in ((mid, "mid"), (sid, "sid")):
            for lo in windows:
                t = time.perf_counter()
                model.update(X[lo : lo + m], y[lo : lo + m], remove=model.sample_ids_[:m])
                rec[key].append(time.perf_counter() - t)
                rec["kkt"].append(model.check_kkt())
                if key == "mid":
                    rec["bp"].append(mid.last_update_.n_breakpoints)
                    predictions.append(mid.predict(X[lo + m - W : lo + m]))
        for lo, f in zip(windows, predictions):
            Xa, ya = X[lo : lo + m], y[lo : lo + m]
            Xw, yw = X[lo + m - W : lo + m], y[lo + m - W : lo + m]
            if osvr is not None:
                t = time.perf_counter()
                osvr.partial_fit(Xa, ya)
                osvr.forget(np.arange(m))  # the oldest m: OnlineSVR keeps its samples in arrival order
                rec["osvr"].append(time.perf_counter() - t)
                diff["osvr"] = max(diff["osvr"], float(np.max(np.abs(osvr.predict(Xw) - f))))
        for name, make in peers.items():
            for lo, f in zip(windows, predictions):
                Xw, yw = X[lo + m - W : lo + m], y[lo + m - W : lo + m]
                t = time.perf_counter()
                peer = make(C, eps, gamma).fit(Xw, yw)
                rec[name].append(time.perf_counter() - t)
                diff[name] = max(diff[name], float(np.max(np.abs(peer.predict(Xw) - f))))
        floor = breakpoint_floor(np, 2 * W, max(mid.last_update_.margin_size, 1))["total"]
        med = {key: float(np.median(v)) if v else float("nan") for key, v in rec.items()}
        fastest = min(med[name] for name in peers)
        rows.append((m, med, fastest, floor, diff, max(rec["kkt"])))
    return rows, list(peers)


def _standardized(X, y):
    return (X - X.mean(0)) / X.std(0), (y - y.mean()) / y.std()


def path_table():
    """Part 3: SVRPath over [1e-2, 1e3] against 50 fits of each retrain peer."""
    X_w, y_w = _standardized(*load_waterflow_regression())
    X_f, y_f = make_friedman1(n_samples=2000, n_features=10, noise=1.0, random_state=0)
    sets = [("WaterFlow", X_w[:600], y_w[:600], 1.0 / 7), ("diabetes", *_standardized(*load_diabetes(return_X_y=True)),
                                                           0.1), ("friedman1", X_f, (y_f - y_f.mean()) / y_f.std(), 0.1)]
    peers = _retrain_peers()
    Cs = np.logspace(-2, 3, 50)
    SVRPath(C_min=1e-2, C_max=10.0, gamma=1.0 / 7).fit(X_w[:100], y_w[:100])  # Numba's cache loaded, untimed
    print("\n## The ε-SVR C path over [1e-2, 1e3] (ε = 0.1) against 50 fits at log-spaced C (s)\n")
    head = ["data", "n", "γ", "SVRPath", "breakpoints", "max \\|M\\|", "max KKT (7 C)", *[f"50 {p} fits" for p in peers],
            "path ÷ one fit of the fastest", "path ÷ 10 fits of the fastest"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for name, X, y, gamma in sets:
        t_path = np.inf
        for _ in range(3):  # the fastest of three: one path of WaterFlow takes a few hundredths of a second
            t = time.perf_counter()
            model = SVRPath(C_min=1e-2, C_max=1e3, epsilon=0.1, gamma=gamma).fit(X, y)
            t_path = min(t_path, time.perf_counter() - t)
        worst = max(model.check_kkt(float(C)) for C in np.logspace(-2, 3, 7))
        peer_time = {}
        for peer, make in peers.items():
            t = time.perf_counter()
            for C in Cs:
                make(C, 0.1, gamma).fit(X, y)
            peer_time[peer] = time.perf_counter() - t
        one = min(peer_time.values()) / Cs.size
        p = model.path_
        cells = [name, str(len(y)), f"{gamma:.3g}", f"{t_path:.2f}", str(p.n_breakpoints), str(p.margin_size.max()),
                 f"{worst:.0e}", *[f"{v:.2f}" for v in peer_time.values()], f"{t_path / one:.1f}",
                 f"{t_path / (10 * one):.2f}"]
        print("| " + " | ".join(cells) + " |", flush=True)
    cv_table(sets, peers)


def cv_table(sets, peers):
    """Part 3, continued: the exact 10-fold CV mean squared error over [1e-2, 1e3]
    (``cv_mse_path``) against scikit-learn's GridSearchCV of each retrain peer over 20 C."""
    from sklearn.model_selection import GridSearchCV, KFold

    from gpath.model_selection import cv_mse_path

    print("\n## 10-fold CV mean squared error over [1e-2, 1e3]: cv_mse_path (every C) against GridSearchCV (20 C)\n")
    head = ["data", "n", "cv_mse_path s", "its best C", "its CV MSE", *[f"GridSearchCV({p}) s" for p in peers],
            *[f"{p} best C" for p in peers], *[f"{p} CV MSE" for p in peers], "time ÷ fastest grid"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    cv = KFold(10, shuffle=True, random_state=0)
    for name, X, y, gamma in sets:
        t = time.perf_counter()
        curve = cv_mse_path(X, y, cv=cv, C_min=1e-2, C_max=1e3, epsilon=0.1, gamma=gamma)
        t_path = time.perf_counter() - t
        grid_time, grid_C, grid_mse = {}, {}, {}
        for peer, make in peers.items():
            search = GridSearchCV(make(1.0, 0.1, gamma), {"C": np.logspace(-2, 3, 20)}, cv=cv,
                                  scoring="neg_mean_squared_error")
            t = time.perf_counter()
            search.fit(X, y)
            grid_time[peer] = time.perf_counter() - t
            grid_C[peer], grid_mse[peer] = search.best_params_["C"], -search.best_score_
        cells = [name, str(len(y)), f"{t_path:.2f}", f"{curve.best_C:.4g}", f"{curve.best_error:.5f}",
                 *[f"{v:.2f}" for v in grid_time.values()], *[f"{v:.4g}" for v in grid_C.values()],
                 *[f"{v:.5f}" for v in grid_mse.values()], f"{t_path / min(grid_time.values()):.2f}"]
        print("| " + " | ".join(cells) + " |", flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--updates", type=int, default=30, help="updates timed per setting (medians)")
    parser.add_argument("--large-updates", type=int, default=3, help="updates timed at n = 10,000")
    parser.add_argument("--n-large", type=int, default=10000)
    parser.add_argument("--part", type=int, choices=(1, 2, 3), nargs="+", default=[1, 2, 3])
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu",
                        help="part 2: where gpath's arrays live (CuPy for cuda; the peers run on the host CPU)")
    args = parser.parse_args(argv)
    print(f"# {platform.processor() or platform.machine()}, {time.strftime('%Y-%m-%d')}; "
          f"OnlineSVR {'installed' if _online_svr(1.0, 0.1, 1.0) is not None else 'not installed (skipped)'}")
    if 1 in args.part:
        window_part(args)
    if 2 in args.part:
        large_part(args)
    if 3 in args.part:
        path_table()


def window_part(args):
    """Part 1: window updates on WaterFlow."""

    X, y = load_waterflow_regression()
    X, y = (X - X.mean(0)) / X.std(0), (y - y.mean()) / y.std()
    W, C, eps, gamma = 600, 10.0, 0.1, 1.0 / 7
    rows, peers = window_table(X, y, W, (1, 30), args.updates, C, eps, gamma)
    print(f"\n## WaterFlow, window {W}, C = {C:g}, ε = {eps}, γ = 1/7 (medians of {args.updates} updates, or of as many as the series holds, ms)\n")
    head = ["m = ℓ", "MID", "single", "OnlineSVR", *peers, "floor (1 bp)", "bp MID",
            "OnlineSVR ÷ MID", "MID ÷ fastest retrain", "largest difference from MID: OnlineSVR", *peers, "max KKT"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for m, med, fastest, floor, diff, kkt in rows:
        cells = [str(m), _ms(med["mid"]), _ms(med["sid"]), _ms(med["osvr"]), *[_ms(med[p]) for p in peers],
                 f"{1e3 * floor:.3f}", f"{med['bp']:.0f}", f"{med['osvr'] / med['mid']:.1f}",
                 f"{med['mid'] / fastest:.2f}", f"{diff['osvr']:.1e}", *[f"{diff[p]:.1e}" for p in peers],
                 f"{kkt:.1e}"]
        print("| " + " | ".join(cells) + " |")


def large_part(args):
    """Part 2: the fit and m = ℓ = 100 updates at n = 10,000: make_friedman1's features as
    drawn (uniform on [0, 1]: a small margin set) and standardized, as after a StandardScaler
    (a margin set twenty times larger)."""
    n = args.n_large
    X, y = make_friedman1(n_samples=n + 100 * args.large_updates, n_features=10, noise=1.0, random_state=0)
    y = (y - y.mean()) / y.std()
    C, eps, gamma = 10.0, 0.1, 0.1
    print(f"\n## make_friedman1, n = {n}, 10 features, C = {C:g}, ε = {eps}, γ = {gamma} (s; gpath on {args.device})\n")
    peers = list(_retrain_peers())
    head = ["features", "gpath fit", *[f"{p} fit" for p in peers], "gpath fit ÷ fastest", "\\|SV\\|", "\\|M\\|",
            "m = ℓ = 100 update (median)", "way", "bp", "update ÷ fastest retrain", "max KKT"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    on_device, _ = _gpath_arrays(args.device)
    IncrementalSVR(C=C, epsilon=eps, gamma=gamma).fit(on_device(X[:300]), y[:300])  # code and kernels loaded, untimed
    for features, X_run in (("as drawn", X), ("standardized", (X - X.mean(0)) / X.std(0))):
        cells = _large_row(X_run, y, n, C, eps, gamma, args.large_updates, args.device)
        print("| " + " | ".join([features, *cells]) + " |", flush=True)


def _gpath_arrays(device):
    """(to_device, synchronize) for gpath's arrays on ``device`` ("cpu" or "cuda")."""
    if device == "cuda":
        import cupy

        return cupy.asarray, cupy.cuda.Device().synchronize
    return (lambda X: X), (lambda: None)


def _large_row(X, y, n, C, eps, gamma, updates, device="cpu"):
    """The cells of one row of the n = 10,000 table (gpath's X on ``device``; the GPU's
    times taken after a device synchronize)."""
    on_device, synchronize = _gpath_arrays(device)
    X_gpath = on_device(X)
    fit_time = np.inf
    for _ in range(2):  # the faster of two fits, for gpath and each peer (the first pays for cold memory)
        synchronize()
        t = time.perf_counter()
        model = IncrementalSVR(C=C, epsilon=eps, gamma=gamma).fit(X_gpath[:n], y[:n])  # method="auto", as a user's
        synchronize()
        fit_time = min(fit_time, time.perf_counter() - t)
    fit_kkt = model.check_kkt()
    peer_fit = {}
    for name, make in _retrain_peers().items():
        peer_fit[name] = np.inf
        for _ in range(2):
            t = time.perf_counter()
            make(C, eps, gamma).fit(X[:n], y[:n])
            peer_fit[name] = min(peer_fit[name], time.perf_counter() - t)
    upd, kkt, bps, ways = [], [], [], set()
    for u in range(updates):
        lo = n + 100 * u
        synchronize()
        t = time.perf_counter()
        model.update(X_gpath[lo : lo + 100], y[lo : lo + 100], remove=model.sample_ids_[:100])
        synchronize()
        upd.append(time.perf_counter() - t)
        bps.append(model.last_update_.n_breakpoints)
        ways.add(model.last_update_.method)
        kkt.append(model.check_kkt())
    fastest = min(peer_fit.values())
    med = float(np.median(upd))
    return [f"{fit_time:.2f}", *[f"{v:.2f}" for v in peer_fit.values()], f"{fit_time / fastest:.2f}",
            str(model.support_.size), str(model.state_.active.size), f"{med:.3f}", " and ".join(sorted(ways)),
            f"{np.median(bps):.0f}", f"{med / fastest:.3f}", f"{max(fit_kkt, *kkt):.1e}"]


if __name__ == "__main__":
    main()
