"""The experiments behind the ``gpath`` command, as Python functions: :func:`run_demo`
(``gpath demo``), :func:`run_path` (``gpath path``) and :func:`run_select` (``gpath select``).

:func:`run_demo`: the online time-series experiment of Karasuyama & Takeuchi (2009),
section 4.2, on river's WaterFlow series: a sliding window updated by MID-SVM and by
SID-SVM, against a LIBSVM retrain of the same window, with every model checked;
``task="regression"`` does the same for the ε-SVR (the next hour's flow against ``SVR``).

:func:`run_path`: an outlier path (Suzumura et al. 2015) on a real data set with the paper's
noise protocol, model selection on the validation set, and a plot of the path.

:func:`run_select`: the exact 10-fold cross-validation error over C for several gammas (the
paper's section 4.2, Figure 7, continuous in C instead of 7 values) and the chosen (C, gamma).

Each checks its arguments as the command line does (:mod:`gpath._options`) and raises
:class:`gpath._options.UsageError` (a ValueError) before anything runs.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ._extras import require
from ._options import (
    UsageError,
    checked,
    gamma_value,
    int_at_least,
    nonnegative_float,
    plot_file,
    positive_float,
    seed_value,
    task_name,
)

__all__ = ["SELECT_DATA", "StepRecord", "run_demo", "run_path", "run_select"]


@dataclass
class StepRecord:
    """One update of the demo: times (s), breakpoints, the online score (accuracy, or the
    regression's mean absolute error) and the checks' values (KKT and relative distances to the
    exact reference, the raw LIBSVM retrain and the single-point update)."""

    step: int
    mid_time: float
    sid_time: float
    libsvm_time: float
    mid_breakpoints: int
    sid_breakpoints: int
    score: float  # on the step's new points, before they are added
    kkt: float
    reference_diff: float  # NaN where the reference is not certified
    reference_kkt: float
    libsvm_raw_diff: float
    sid_diff: float
    condition: float  # of the margin matrix: two exact solvers agree to about condition·ε


def _namespace(device: str):
    if device not in ("cpu", "cuda"):
        raise UsageError(f"--device must be 'cpu' or 'cuda'; got {device!r}")
    if device == "cpu":
        return None
    try:
        import cupy
    except ImportError:
        raise UsageError("--device cuda needs CuPy: pip install 'gpath[cuda]'") from None
    if cupy.cuda.runtime.getDeviceCount() == 0:
        raise UsageError("--device cuda: no CUDA device found")
    return cupy


def _check_windows(y, window: int, step: int, n_updates: int, classes: bool) -> None:
    """The series is long enough, and (classification) every window the demo fits or updates
    to holds both classes (an SVC needs both)."""
    if window + step > y.shape[0]:
        raise UsageError(f"--window {window} + --step {step} exceeds the {y.shape[0]} rows of WaterFlow")
    for k in range(n_updates + 1) if classes else ():
        lo = k * step
        if np.unique(y[lo : lo + window]).size < 2:
            raise UsageError(f"--window {window}: rows {lo}..{lo + window - 1} of WaterFlow hold only one class "
                             f"(the flow never changes direction there); use a larger window")


@dataclass(frozen=True)
class _DemoTask:
    """What the demo's loop needs of one task: the data, the estimator, the retrain peer, the
    exact reference, the model's values (decision function or prediction) and the online
    score on each step's new points."""

    title: str
    peer: str  # the retrain peer's name in the table
    score_name: str
    X: np.ndarray
    y: np.ndarray
    make: Callable  # method -> unfitted gpath estimator
    retrain: Callable  # (Xw, yw, gamma) -> fitted scikit-learn estimator
    reference: Callable  # (Xw, yw, model) -> exact reference with .certified, .kkt
    values: Callable  # (model or reference or peer, X) -> host values
    score: Callable  # (model, X, y) -> float, before the points are added


def _classification(C, gamma, epsilon) -> _DemoTask:
    from sklearn.svm import SVC

    from ._array_api import to_host
    from .datasets import load_waterflow_direction
    from .incremental import IncrementalSVC
    from .reference import exact_svc

    if epsilon is not None:
        raise UsageError(f"--epsilon is the ε-SVR's tube (--task regression); got --epsilon {epsilon!r} "
                         f"with --task classification")
    X, y = load_waterflow_direction()

    def reference(Xw, yw, model):
        # LIBSVM's index sets on K + ridge·I (repaired where wrong), margin equations in float64.
        return exact_svc(Xw, np.where(yw == model.classes_[1], 1.0, -1.0), C, gamma=model.kernel_.gamma,
                         ridge=model.ridge)

    return _DemoTask(
        title=f"WaterFlow (river): {X.shape[0]} hourly rows, 7 lags -> will the flow rise next hour?",
        peer="LIBSVM", score_name="acc", X=X, y=y,
        make=lambda method: IncrementalSVC(C=C, gamma=gamma, method=method),
        retrain=lambda Xw, yw, g: SVC(C=C, gamma=g).fit(Xw, yw),
        reference=reference,
        values=lambda model, Xt: to_host(model.decision_function(Xt)),
        score=lambda model, Xt, yt: float(np.mean(to_host(model.predict(Xt)) == yt)),
    )


def _regression(C, gamma, epsilon, window) -> _DemoTask:
    from sklearn.svm import SVR

    from ._array_api import to_host
    from .datasets import load_waterflow_regression
    from .reference import exact_svr
    from .svr import IncrementalSVR

    epsilon = 0.1 if epsilon is None else checked("--epsilon", nonnegative_float, epsilon)
    X, y = load_waterflow_regression()
    # In units of the first window's flow (no look-ahead): the lags and the target share them.
    mean, std = float(y[:window].mean()), float(y[:window].std()) or 1.0
    X, y = (X - mean) / std, (y - mean) / std

    def reference(Xw, yw, model):
        return exact_svr(Xw, yw, C, epsilon, gamma=model.kernel_.gamma, ridge=model.ridge)

    def values(model, Xt):
        return to_host(model.predict(Xt))

    return _DemoTask(
        title=f"WaterFlow (river): {X.shape[0]} hourly rows, 7 lags -> the next hour's flow (ε-SVR, "
              f"epsilon={epsilon:g} in units of the first window's flow, std {std:.3g})",
        peer="SVR", score_name="MAE", X=X, y=y,
        make=lambda method: IncrementalSVR(C=C, epsilon=epsilon, gamma=gamma, method=method),
        retrain=lambda Xw, yw, g: SVR(C=C, epsilon=epsilon, gamma=g).fit(Xw, yw),
        reference=reference, values=values,
        # The forecast error in the flow's own units.
        score=lambda model, Xt, yt: std * float(np.mean(np.abs(values(model, Xt) - yt))),
    )


def run_demo(C=10.0, gamma="scale", window=600, step=30, device="cpu", plot=None,
             max_updates=None, progress=True, out=None, task="classification",
             epsilon=None) -> list[StepRecord]:
    """Run the sliding-window experiment; return one record per update.

    Parameters
    ----------
    C : float, default 10.0
        Box constraint, finite and > 0.
    gamma : float or {"scale", "auto"}, default "scale"
        RBF gamma.
    window : int, default 600
        Points in the window (>= 2; for classification every window must hold both classes).
    step : int, default 30
        Points added and removed per update (>= 1).
    device : {"cpu", "cuda"}, default "cpu"
    plot : str or None
        PNG (or any format matplotlib writes, by its suffix) of time and breakpoints per
        update, in an existing folder.
    max_updates : int or None
        At most this many updates (>= 1); None: as many as the series allows.
    progress : bool
        Show a progress bar on stderr.
    out : file or None
        Where the table goes (stdout).
    task : {"classification", "regression"}, default "classification"
        "classification": will the flow rise next hour? (:class:`gpath.IncrementalSVC` against
        scikit-learn's ``SVC``; the score is the online accuracy). "regression": the next
        hour's flow (:class:`gpath.IncrementalSVR` against scikit-learn's ``SVR``; the series in
        units of the first window's flow: (flow − mean) / std of the first ``window`` targets;
        the score is the online mean absolute error in the flow's own units).
    epsilon : float or None
        The ε-SVR's tube (regression only; ≥ 0, in the standardized units); None: 0.1.

    Raises
    ------
    UsageError (a ValueError)
        A bad argument, found before anything runs: the message names the option.
    gpath._extras.MissingExtraError (a ModuleNotFoundError)
        river or tqdm missing: the message names ``pip install 'gpath[demo]'``.
    SystemExit
        With a message, when a model fails its checks: its KKT violation recomputed from
        scratch above 1e-9 (relative to the scale of y f, as ``check_kkt``), values further
        from the exact reference (:func:`gpath.reference.exact_svc` or
        :func:`gpath.reference.exact_svr`: LIBSVM's index sets, repaired where wrong, margin
        equations re-solved in float64) than ``max(1e-7, 100·ε·κ)`` relative, or MID and
        single-point further apart than ``max(1e-9, 100·ε·κ)``, with κ the condition number of
        the margin matrix (two exact solvers of one problem agree to about κ·ε, since their
        kernel values differ in the last bits). Where the reference cannot certify itself (its
        own KKT above 1e-9), the update is checked without it.
    """
    out = sys.stdout if out is None else out
    task = checked("--task", task_name, task)
    C = checked("--C", positive_float, C)
    gamma = checked("--gamma", gamma_value, gamma)
    window = checked("--window", int_at_least(2), window)
    step = checked("--step", int_at_least(1), step)
    if max_updates is not None:
        max_updates = checked("--max-updates", int_at_least(1), max_updates)
    if plot:
        plot = checked("--plot", plot_file, plot)
    cp = _namespace(device)
    require("river", "demo", "gpath demo")
    tqdm = require("tqdm", "demo", "gpath demo").tqdm
    job = _classification(C, gamma, epsilon) if task == "classification" else _regression(C, gamma, epsilon, window)
    X, y = job.X, job.y
    n_updates = max(X.shape[0] - window, 0) // step
    if max_updates is not None:
        n_updates = min(n_updates, max_updates)
    _check_windows(y, window, step, n_updates, classes=task == "classification")
    Xd = X if cp is None else cp.asarray(X)
    # Load (on a fresh install: compile) the code of both methods before anything is timed.
    for method in ("multiple", "single"):
        job.make(method).fit(Xd[:60], y[:60]).update(X_add=Xd[60:70], y_add=y[60:70], remove=[0, 1])
    mid = job.make("multiple").fit(Xd[:window], y[:window])
    sid = job.make("single").fit(Xd[:window], y[:window])
    g = mid.kernel_.gamma
    print(f"{job.title}\n"
          f"window {window}, step {step} (add {step} new, remove {step} oldest), C={C}, gamma={g:.4g}, "
          f"device {device}, {n_updates} updates", file=out)
    records = []
    for k in tqdm(range(n_updates), disable=not progress, desc="updates", file=sys.stderr):
        lo, hi = window + k * step, window + (k + 1) * step
        score = job.score(mid, Xd[lo:hi], y[lo:hi])
        mid.update(X_add=Xd[lo:hi], y_add=y[lo:hi], remove=mid.sample_ids_[:step])
        sid.update(X_add=Xd[lo:hi], y_add=y[lo:hi], remove=sid.sample_ids_[:step])
        Xw, yw = X[lo + step - window : hi], y[lo + step - window : hi]
        t = time.perf_counter()
        raw = job.retrain(Xw, yw, g)
        libsvm_time = time.perf_counter() - t
        ref = job.reference(Xw, yw, mid)
        f_mid = job.values(mid, Xd[lo + step - window : hi])
        f_ref = job.values(ref, Xw)
        scale = max(np.abs(f_ref).max(), 1.0)
        matrix = mid.state_.factor.matrix
        rec = StepRecord(
            k + 1, mid.last_update_.time, sid.last_update_.time, libsvm_time,
            mid.last_update_.n_breakpoints, sid.last_update_.n_breakpoints, score,
            mid.check_kkt(), float(np.abs(f_mid - f_ref).max() / scale) if ref.certified else float("nan"),
            ref.kkt, float(np.abs(f_mid - job.values(raw, Xw)).max() / scale),
            float(np.abs(f_mid - job.values(sid, Xd[lo + step - window : hi])).max() / scale),
            float(np.linalg.cond(matrix)) if matrix.shape[0] > 1 else 1.0,
        )
        records.append(rec)
        agree = 100 * np.finfo(float).eps * rec.condition
        if rec.kkt > 1e-9 or rec.reference_diff > max(1e-7, agree) or rec.sid_diff > max(1e-9, agree):
            raise SystemExit(f"update {rec.step} FAILED its checks: KKT {rec.kkt:.2e} (limit 1e-9), "
                             f"|f - f_exact| {rec.reference_diff:.2e} (limit {max(1e-7, agree):.1e}; the "
                             f"reference's own KKT {rec.reference_kkt:.1e}), |f_MID - f_SID| {rec.sid_diff:.2e} "
                             f"(limit {max(1e-9, agree):.1e})")
    _print_table(records, out, job)
    if plot:
        _plot(records, plot, job.peer)
        print(f"plot written to {plot}", file=out)
    return records


def _print_table(records, out, job: _DemoTask) -> None:
    peer, score = job.peer, job.score_name
    head = (f"{'update':>6} {'MID ms':>8} {'SID ms':>8} {peer + ' ms':>9} "
            f"{'bp MID':>6} {'bp SID':>6} {score:>5} {'KKT':>8} {'Δ exact':>8} {'Δ ' + peer:>8}")
    print(head, file=out)
    for r in records:
        exact = f"{r.reference_diff:>8.1e}" if np.isfinite(r.reference_diff) else f"{'uncert.':>8}"
        print(f"{r.step:>6} {1e3 * r.mid_time:>8.1f} {1e3 * r.sid_time:>8.1f} {1e3 * r.libsvm_time:>9.1f} "
              f"{r.mid_breakpoints:>6} {r.sid_breakpoints:>6} "
              f"{r.score:>5.2f} {r.kkt:>8.1e} {exact} {r.libsvm_raw_diff:>8.1e}", file=out)
    mean = lambda name: float(np.mean([getattr(r, name) for r in records]))
    certified = [r.reference_diff for r in records if np.isfinite(r.reference_diff)]
    agree = 100 * np.finfo(float).eps * max(r.condition for r in records)
    print(f"\nmean per update: MID {1e3 * mean('mid_time'):.1f} ms, SID {1e3 * mean('sid_time'):.1f} ms, "
          f"{peer} retrain {1e3 * mean('libsvm_time'):.1f} ms (scikit-learn {peer if peer == 'SVR' else 'SVC'}, "
          f"default tol 1e-3)\n"
          f"breakpoints: MID {mean('mid_breakpoints'):.1f}, SID {mean('sid_breakpoints'):.1f} "
          f"(MID/SID = {mean('mid_breakpoints') / mean('sid_breakpoints'):.2f}); "
          + (f"online accuracy {mean('score'):.3f}\n" if score == "acc" else
             f"online MAE {mean('score'):.3f} (the flow's units; the next hour forecast before each update)\n")
          + f"checks passed on every update: KKT <= {max(r.kkt for r in records):.1e} (limit 1e-9, relative to "
          f"the scale of y f), "
          + (f"|f - f_exact| <= {max(certified):.1e} (limit {max(1e-7, agree):.1e})" if certified else
             "no certified reference")
          + (f" [{len(records) - len(certified)} of {len(records)} updates without a certified reference: "
             "checked by their KKT conditions alone]" if len(certified) < len(records) else "")
          + f", MID = SID to {max(r.sid_diff for r in records):.1e} (limit {max(1e-9, agree):.1e}; margin "
          f"matrix condition <= {max(r.condition for r in records):.1e})\n"
          f"(f_exact: LIBSVM's index sets on K + ridge*I, repaired where wrong, margin equations re-solved "
          f"in float64; "
          f"raw {peer} differs by up to {max(r.libsvm_raw_diff for r in records):.1e}: it keeps kernel "
          f"values in float32 and stops at tol 1e-3)", file=out)


def _plot(records, path, peer: str = "LIBSVM") -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps = [r.step for r in records]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    for name, label in (("mid_time", "MID-SVM"), ("sid_time", "SID-SVM"),
                        ("libsvm_time", f"{peer} retrain")):
        ax1.plot(steps, [1e3 * getattr(r, name) for r in records], marker="o", ms=3, label=label)
    ax1.set(xlabel="update", ylabel="time per update (ms)", yscale="log", title="Time per update")
    ax1.legend()
    ax2.plot(steps, [r.mid_breakpoints for r in records], marker="o", ms=3, label="MID-SVM")
    ax2.plot(steps, [r.sid_breakpoints for r in records], marker="o", ms=3, label="SID-SVM")
    ax2.set(xlabel="update", ylabel="breakpoints", title="Breakpoints per update")
    ax2.legend()
    fig.suptitle("gpath demo: WaterFlow sliding window")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def run_path(data="breast_cancer", path="theta", C=1.0, kernel="rbf", seed=0, plot=None, out=None):
    """Compute one outlier path with the paper's protocol (section 5.1) and report it.

    Parameters
    ----------
    data : {"breast_cancer", "digits", "diabetes", "waterflow"}, default "breast_cancer"
    path : {"theta", "s"}, default "theta"
    C : float, default 1.0
        Finite and > 0.
    kernel : {"linear", "rbf"}, default "rbf"
    seed : int, default 0
        Seed of the split and the noise, in [0, 2**32 - 1].
    plot : str or None
        Figure of the path and the validation curve (format by its suffix), in an existing
        folder.
    out : file or None

    Returns
    -------
    model : RobustSVC or RobustSVR
        Fitted, with the point of least validation error selected.

    Raises
    ------
    UsageError (a ValueError)
        A bad argument, found before anything runs: the message names the option.
    gpath._extras.MissingExtraError (a ModuleNotFoundError)
        ``data="waterflow"`` without river, or ``plot`` without matplotlib: the message names
        ``pip install 'gpath[demo]'``.
    """
    from .datasets import PATH_DATA, load_path_data, noisy_split
    from .robust import RobustSVC, RobustSVR

    out = sys.stdout if out is None else out
    for option, value, choices in (("--data", data, sorted(PATH_DATA)), ("--path", path, ["theta", "s"]),
                                   ("--kernel", kernel, ["linear", "rbf"])):
        if value not in choices:
            raise UsageError(f"{option} must be one of {choices}; got {value!r}")
    C = checked("--C", positive_float, C)
    seed = checked("--seed", seed_value, seed)
    if plot:
        plot = checked("--plot", plot_file, plot)
    if data == "waterflow":
        require("river", "demo", "gpath path --data waterflow")
    X, y, task = load_path_data(data)
    (Xtr, ytr), (Xva, yva), (Xte, yte) = noisy_split(X, y, task, random_state=seed)
    gamma = 1.0 / X.shape[1]  # the paper's γ = 1/d
    if task == "classification":
        model = RobustSVC(C=C, kernel=kernel, gamma=gamma, path=path)
    else:
        model = RobustSVR(C=C, kernel=kernel, gamma=gamma, path=path, s=1.0)
    model.fit(Xtr, ytr).select(Xva, yva)
    p = model.path_
    # The path's first point is the ordinary SVM (θ = 1, or OP-s before its first jump, which
    # may come at the very first s: at=p.params[0] would be the point after that jump).
    if task == "classification":
        test = float(np.mean(model.predict(Xte) != yte))
        start = float(np.mean(model.classes_[(model.path_decision_function(Xte)[:, 0] > 0).astype(int)] != yte))
        measure = "0-1 test error"
    else:
        test = float(np.mean(np.abs(model.predict(Xte) - yte)))
        start = float(np.mean(np.abs(model.path_predict(Xte)[:, 0] - yte)))
        measure = "L1 test error"
    name = "θ" if path == "theta" else "s"
    print(f"{data}: {Xtr.shape[0]} training points ({task}, noisy), kernel {kernel}, C={C}\n"
          f"OP-{name}: {len(p.params)} path points, {int(p.discontinuous.sum())} D-step jumps, "
          f"{p.n_breakpoints} breakpoints, {p.time:.2f} s; every point checked from scratch (eq. "
          f"{16 if task == 'classification' else 25})\n"
          f"selected {name} = {model.param_:.4g} (validation error "
          f"{p.validation_error[model.selected_index_]:.3f}, KKT from scratch {model.check_kkt():.1e}); "
          f"{measure}: {test:.3f} (ordinary SVM at the path's start: {start:.3f})", file=out)
    if plot:
        _plot_path(model, plot, name, data)
        print(f"plot written to {plot}", file=out)
    return model


def _plot_path(model, path_file, name, data) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    p = model.path_
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.5))
    moving = np.flatnonzero(np.ptp(p.alpha, axis=0) > 0)
    for j in moving[:60]:
        ax1.plot(p.params, p.alpha[:, j], lw=0.8)
    for x in p.params[p.discontinuous]:
        ax1.axvline(x, color="k", ls=":", lw=0.7)
        ax2.axvline(x, color="k", ls=":", lw=0.7)
    ax1.set(xlabel=name, ylabel="α", title=f"Outlier path on {data} (dotted: D-step jumps)")
    ax2.plot(p.params, p.validation_error, marker=".", ms=3)
    ax2.axvline(model.param_, color="r", lw=1, label=f"selected {name} = {model.param_:.3g}")
    ax2.set(xlabel=name, ylabel="validation error", title="Validation curve")
    ax2.legend()
    if p.kind == "theta":
        ax1.invert_xaxis()
        ax2.invert_xaxis()
    fig.tight_layout()
    fig.savefig(path_file, dpi=110)
    plt.close(fig)


SELECT_DATA = ("waterflow", "breast_cancer", "digits", "bananas")


def _select_data(name: str):
    """(X, y) of a data set ``gpath select`` offers (labels 0/1)."""
    from .datasets import load_bananas, load_digits_binary, load_waterflow_direction

    if name == "waterflow":
        return load_waterflow_direction()
    if name == "digits":
        return load_digits_binary()
    if name == "bananas":
        return load_bananas()
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    return (X - X.mean(0)) / X.std(0), y


def run_select(data="waterflow", C_min=0.1, C_max=1e4, gammas=(0.1, 1.0, 10.0, 100.0), folds=10, seed=0,
               n_jobs=None, plot=None, out=None):
    """The exact k-fold CV error over C for several gammas, and the chosen (C, gamma).

    Parameters
    ----------
    data : {"waterflow", "breast_cancer", "digits", "bananas"}, default "waterflow"
        WaterFlow as in ``gpath demo`` (7 hourly lags scaled to [0, 1] -> will the flow rise?);
        breast cancer standardized; digits >= 5 (pixels in [0, 1]); Bananas (5,300 points).
    C_min, C_max : float, default 0.1 and 1e4
        The range of C (finite, > 0, C_min <= C_max).
    gammas : sequence of float, default (0.1, 1, 10, 100)
        RBF widths, each a finite number > 0.
    folds : int, default 10
        Stratified folds (>= 2), shuffled with ``seed``.
    seed : int, default 0
        In [0, 2**32 - 1].
    n_jobs : int or None
        joblib's n_jobs for the (gamma, fold) paths.
    plot : str or None
        Figure of the CV error curves (format by its suffix), in an existing folder.
    out : file or None

    Returns
    -------
    search : gpath.model_selection.SVCPathCV
        Fitted (with ``refit=False``: the command reports the choice).

    Raises
    ------
    UsageError (a ValueError)
        A bad argument, found before anything runs: the message names the option.
    gpath._extras.MissingExtraError (a ModuleNotFoundError)
        The WaterFlow or Bananas data without river: the message names
        ``pip install 'gpath[demo]'``.
    """
    from sklearn.model_selection import StratifiedKFold

    from .model_selection import SVCPathCV

    out = sys.stdout if out is None else out
    if data not in SELECT_DATA:
        raise UsageError(f"--data must be one of {list(SELECT_DATA)}; got {data!r}")
    C_min = checked("--C-min", positive_float, C_min)
    C_max = checked("--C-max", positive_float, C_max)
    if C_min > C_max:
        raise UsageError(f"--C-min must be <= --C-max; got {C_min:g} and {C_max:g}")
    gammas = [checked("--gammas", positive_float, g) for g in gammas]
    if not gammas:
        raise UsageError("--gammas needs at least one value")
    folds = checked("--folds", int_at_least(2), folds)
    seed = checked("--seed", seed_value, seed)
    if n_jobs is not None:
        n_jobs = checked("--n-jobs", int_at_least(1), n_jobs)
    if plot:
        plot = checked("--plot", plot_file, plot)
    X, y = _select_data(data)
    smallest = int(np.bincount(y).min())
    if folds > smallest:
        raise UsageError(f"--folds must be at most {smallest} (the points of the smaller class of {data}); "
                         f"got {folds}")
    cv = StratifiedKFold(folds, shuffle=True, random_state=seed)
    start = time.perf_counter()
    search = SVCPathCV(C_min=C_min, C_max=C_max, gammas=gammas, cv=cv, n_jobs=n_jobs, refit=False).fit(X, y)
    seconds = time.perf_counter() - start
    print(f"{data}: {X.shape[0]} points, {X.shape[1]} features; exact {folds}-fold CV error of the RBF C-SVC "
          f"for C in [{C_min:g}, {C_max:g}]", file=out)
    print(f"{'gamma':>8} {'best C':>10} {'CV error':>9} {'at C_min':>9} {'at C_max':>9} {'knots':>6} "
          f"{'bp/fold':>8} {'s':>6}", file=out)
    for curve in search.cv_error_paths_:
        print(f"{curve.gamma:>8g} {curve.best_C:>10.4g} {curve.best_error:>9.4f} {curve.error[0]:>9.4f} "
              f"{curve.error[-1]:>9.4f} {curve.Cs.size:>6} {curve.n_breakpoints.mean():>8.0f} {curve.time:>6.2f}",
              file=out)
    print(f"chosen: C = {search.best_C_:.6g}, gamma = {search.best_gamma_:g} (CV error {1 - search.best_score_:.4f}, "
          f"exact on the interval [{_best_interval(search)}]); {seconds:.1f} s", file=out)
    if plot:
        _plot_select(search, plot, data, folds)
        print(f"plot written to {plot}", file=out)
    return search


def _best_interval(search) -> str:
    curve = search.cv_error_paths_[search.best_index_]
    i = int(np.argmin(curve.error))
    return f"{curve.Cs[i]:.6g}, {curve.Cs[i + 1]:.6g}"


def _plot_select(search, path, data, folds) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.5))
    for curve in search.cv_error_paths_:
        ax.stairs(curve.error, curve.Cs, baseline=None, label=f"γ = {curve.gamma:g}", lw=1.2)
    ax.plot([search.best_C_], [1 - search.best_score_], "k*", ms=12,
            label=f"chosen: C = {search.best_C_:.3g}, γ = {search.best_gamma_:g}")
    ax.set(xscale="log", xlabel="C", ylabel=f"{folds}-fold CV error",
           title=f"Exact cross-validation error over C on {data} (step function, every knot exact)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
