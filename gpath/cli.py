"""Command-line interface: ``gpath demo``, ``gpath path``, ``gpath select`` and ``gpath --version``.

The parser only: every option is checked before anything runs (bad values are argparse
errors, exit code 2; :mod:`gpath._options`), and each command runs its experiment of
:mod:`gpath.experiments` (:func:`run_demo`, :func:`run_path`, :func:`run_select`, which check
their arguments the same way and raise :class:`UsageError`, a ValueError).
"""

from __future__ import annotations

import argparse
import sys

from ._extras import MissingExtraError
from ._options import (
    UsageError,
    gamma_value,
    int_at_least,
    nonnegative_float,
    plot_file,
    positive_float,
    seed_value,
    task_name,
)
from ._path import PathError
from .experiments import SELECT_DATA, run_demo, run_path, run_select

__all__ = ["UsageError", "build_parser", "main", "run_demo", "run_path", "run_select"]


DESCRIPTION = """\
Exact SVM solution paths on NumPy or CuPy: the experiments of gpath's papers, run on real
data with every model checked against an exact reference.

  gpath demo   sliding-window MID-SVM vs SID-SVM vs a LIBSVM retrain on the WaterFlow
               series (Karasuyama & Takeuchi 2009, section 4.2); --task regression:
               the same for the ε-SVR forecasting the next hour's flow
  gpath path   an outlier path of robust SVC/SVR with model selection and a plot
               (Suzumura et al. 2015)
  gpath select the exact 10-fold CV error over C for several gammas and the chosen
               (C, gamma) (Hastie et al. 2004; Karasuyama & Takeuchi 2009, Figure 7)

Run 'gpath <command> --help' for its options."""


class _HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Defaults shown after each option's help (options without a default say in words what
    happens)."""

    def _get_help_string(self, action):
        if action.default is None:
            return action.help
        return super()._get_help_string(action)


class _TopHelpFormatter(_HelpFormatter, argparse.RawDescriptionHelpFormatter):
    """The top-level help: the description's command table kept as written."""


def build_parser() -> argparse.ArgumentParser:
    """The parser of the ``gpath`` command."""
    from . import __version__
    from .datasets import PATH_DATA

    parser = argparse.ArgumentParser(prog="gpath", description=DESCRIPTION, formatter_class=_TopHelpFormatter)
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}",
                        help="print the version of gpath and exit")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    demo = sub.add_parser(
        "demo", formatter_class=_HelpFormatter,
        help="sliding-window MID-SVM vs SID-SVM vs LIBSVM on WaterFlow",
        description="The online time-series experiment of Karasuyama & Takeuchi (2009), section 4.2, "
                    "on river's WaterFlow series: a sliding window updated by MID-SVM and by SID-SVM, "
                    "against a LIBSVM retrain of the same window; every model is checked (KKT, exact "
                    "reference, MID = SID) and a failed check stops the run. --task regression does "
                    "the same for the ε-SVR forecasting the next hour's flow.",
    )
    demo.add_argument("--task", type=task_name, default="classification", metavar="{classification,regression}",
                      help="classification: will the flow rise next hour? (IncrementalSVC against SVC); "
                           "regression: the next hour's flow (IncrementalSVR against SVR)")
    demo.add_argument("--C", type=positive_float, default=10.0, help="box constraint C (> 0)")
    demo.add_argument("--epsilon", type=nonnegative_float, metavar="EPSILON",
                      help="the ε-SVR's tube (>= 0; --task regression only; in units of the first window's "
                           "flow) (default: 0.1)")
    demo.add_argument("--gamma", type=gamma_value, default="scale",
                      help="RBF gamma: a number > 0, 'scale' or 'auto' (scikit-learn's meanings)")
    demo.add_argument("--window", type=int_at_least(2), default=600,
                      help="points in the sliding window (>= 2; every window must hold both classes)")
    demo.add_argument("--step", type=int_at_least(1), default=30,
                      help="points added, and oldest points removed, per update (>= 1)")
    demo.add_argument("--device", choices=("cpu", "cuda"), default="cpu",
                      help="where the arrays live ('cuda' needs CuPy and a GPU)")
    demo.add_argument("--plot", type=plot_file, metavar="FILE",
                      help="also write a figure of time and breakpoints per update to FILE (format by "
                           "suffix: .png, .pdf, .svg, ...; the folder must exist) (default: no plot)")
    demo.add_argument("--max-updates", type=int_at_least(1), metavar="N",
                      help="stop after N updates (>= 1) (default: as many as the series allows)")
    demo.add_argument("--no-progress", action="store_true", help="do not show the progress bar on stderr")
    demo.set_defaults(parser=demo)
    outlier = sub.add_parser(
        "path", formatter_class=_HelpFormatter,
        help="an outlier path (robust SVC/SVR) with model selection and a plot",
        description="One outlier path of Suzumura et al. (2015) with the paper's protocol (section 5.1): "
                    "a 40/30/30 split with label noise or outliers, the path from the ordinary SVM to the "
                    "robust one, and the point of least validation error.",
    )
    outlier.add_argument("--data", choices=sorted(PATH_DATA), default="breast_cancer",
                         help="data set (classification: breast_cancer, digits; regression: diabetes, "
                              "waterflow)")
    outlier.add_argument("--path", choices=("theta", "s"), default="theta",
                         help="the path's parameter: theta from 1 to 0 (OP-theta) or s (OP-s)")
    outlier.add_argument("--C", type=positive_float, default=1.0, help="box constraint C (> 0)")
    outlier.add_argument("--kernel", choices=("linear", "rbf"), default="rbf",
                         help="kernel (rbf with the paper's gamma = 1 / n_features)")
    outlier.add_argument("--seed", type=seed_value, default=0,
                         help="seed of the split and the noise (an integer in [0, 2**32 - 1])")
    outlier.add_argument("--plot", type=plot_file, metavar="FILE",
                         help="also write a figure of the path and the validation curve to FILE (format by "
                              "suffix: .png, .pdf, .svg, ...; the folder must exist) (default: no plot)")
    outlier.set_defaults(parser=outlier)
    select = sub.add_parser(
        "select", formatter_class=_HelpFormatter,
        help="exact k-fold CV error over C for several gammas, and the chosen (C, gamma)",
        description="The exact cross-validation error of the RBF C-SVC as a function of C (one C path per "
                    "fold, Hastie et al. 2004; every held-out sign change solved in closed form) for several "
                    "gammas: Figure 7 of Karasuyama & Takeuchi (2009), continuous in C, and the (C, gamma) of "
                    "least CV error.",
    )
    select.add_argument("--data", choices=SELECT_DATA, default="waterflow",
                        help="data set (waterflow: will the hourly flow rise? as in 'gpath demo')")
    select.add_argument("--C-min", type=positive_float, default=0.1, help="start of the C range (> 0)")
    select.add_argument("--C-max", type=positive_float, default=1e4, help="end of the C range (>= --C-min)")
    select.add_argument("--gammas", type=positive_float, nargs="+", default=[0.1, 1.0, 10.0, 100.0], metavar="G",
                        help="RBF gammas to compare (each > 0)")
    select.add_argument("--folds", type=int_at_least(2), default=10, help="stratified folds (>= 2)")
    select.add_argument("--seed", type=seed_value, default=0,
                        help="seed of the fold shuffle (an integer in [0, 2**32 - 1])")
    select.add_argument("--n-jobs", type=int_at_least(1), metavar="N",
                        help="run the (gamma, fold) paths on N processes (joblib) (default: one)")
    select.add_argument("--plot", type=plot_file, metavar="FILE",
                        help="also write the CV error curves to FILE (format by suffix: .png, .pdf, .svg, ...; "
                             "the folder must exist) (default: no plot)")
    select.set_defaults(parser=select)
    return parser


def main(argv=None) -> int:
    """Entry point of the ``gpath`` command (``gpath demo``, ``gpath path``, ``gpath select``,
    ``gpath --version``); returns 0. Bad options, and a missing package of the ``demo`` extra
    (the message names ``pip install 'gpath[demo]'``), end in an argparse error (exit code 2)
    before anything runs. A problem the estimators refuse (a ValueError such as OP-s of a
    regression that fits every target, or a PathError) is printed as one line, exit code 1."""
    args = build_parser().parse_args(argv)
    try:
        if args.command == "select":
            run_select(data=args.data, C_min=args.C_min, C_max=args.C_max, gammas=args.gammas, folds=args.folds,
                       seed=args.seed, n_jobs=args.n_jobs, plot=args.plot)
        elif args.command == "path":
            run_path(data=args.data, path=args.path, C=args.C, kernel=args.kernel, seed=args.seed, plot=args.plot)
        else:
            run_demo(C=args.C, gamma=args.gamma, window=args.window, step=args.step, device=args.device,
                     plot=args.plot, max_updates=args.max_updates, progress=not args.no_progress,
                     task=args.task, epsilon=args.epsilon)
    except (UsageError, MissingExtraError) as exc:
        args.parser.error(str(exc))
    except (ValueError, PathError) as exc:  # the data and options are valid, the problem is not
        print(f"gpath {args.command}: error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
