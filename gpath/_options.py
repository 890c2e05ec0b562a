"""The values of the ``gpath`` command's options, checked: argparse ``type=`` functions that
:mod:`gpath.cli` gives argparse and :mod:`gpath.experiments` calls on its Python arguments (one
rule for both), and :class:`UsageError`."""

from __future__ import annotations

import argparse
import math
import os
from pathlib import Path

from ._extras import MissingExtraError, require

__all__ = ["TASKS", "UsageError", "checked", "gamma_value", "int_at_least", "nonnegative_float", "plot_file",
           "positive_float", "seed_value", "task_name"]


class UsageError(ValueError):
    """An argument of ``gpath demo`` / ``gpath path`` / ``gpath select`` (or of
    :func:`run_demo`, :func:`run_path`, :func:`run_select`) that cannot work, found before anything runs; the command line turns it
    into an argparse error."""


# ---------------------------------------------------------------------- option values
# argparse ``type=`` functions: each takes the text of an option (or an already typed value,
# when run_demo/run_path check their arguments) and returns the value, or raises
# argparse.ArgumentTypeError saying what was expected and what came.
def _finite_float(text, zero_allowed: bool) -> float:
    """A finite real number > 0 (or >= 0 where ``zero_allowed``)."""
    try:
        value = float(text)
    except (TypeError, ValueError):
        value = math.nan
    if not (math.isfinite(value) and (value > 0 or (zero_allowed and value == 0))):
        raise argparse.ArgumentTypeError(f"must be a finite number {'>=' if zero_allowed else '>'} 0; got {text!r}")
    return value


def positive_float(text) -> float:
    """A finite real number > 0."""
    return _finite_float(text, zero_allowed=False)


def nonnegative_float(text) -> float:
    """A finite real number >= 0."""
    return _finite_float(text, zero_allowed=True)


TASKS = ("classification", "regression")


def task_name(text) -> str:
    """The demo's task: one of :data:`TASKS`."""
    if text not in TASKS:
        raise argparse.ArgumentTypeError(f"must be one of {', '.join(TASKS)}; got {text!r}")
    return text


def gamma_value(text):
    """``"scale"``, ``"auto"`` or a finite number > 0 (the RBF kernel's gamma)."""
    if text in ("scale", "auto"):
        return text
    try:
        return positive_float(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"must be 'scale', 'auto' or a finite number > 0; got {text!r}") from None


def int_at_least(minimum: int):
    """A ``type=`` function for integers >= ``minimum``."""
    def parse(text) -> int:
        try:
            value = int(text) if not isinstance(text, (bool, float)) else None
        except (TypeError, ValueError):
            value = None
        if value is None or value < minimum:
            raise argparse.ArgumentTypeError(f"must be an integer >= {minimum}; got {text!r}")
        return value

    parse.__name__ = f"integer >= {minimum}"
    return parse


def seed_value(text) -> int:
    """A seed of NumPy's legacy RandomState: an integer in [0, 2**32 - 1]."""
    try:
        value = int_at_least(0)(text)
    except argparse.ArgumentTypeError:
        value = None
    if value is None or value > 2**32 - 1:
        raise argparse.ArgumentTypeError(f"must be an integer in [0, 2**32 - 1]; got {text!r}")
    return value


def plot_file(text) -> str:
    """A file matplotlib can write: an existing, writable folder and a suffix among
    matplotlib's formats (png, pdf, svg, ...); matplotlib comes with the ``demo`` extra."""
    try:
        FigureCanvasBase = require("matplotlib.backend_bases", "demo", "--plot").FigureCanvasBase
    except MissingExtraError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    path = Path(os.fspath(text))
    formats = sorted(FigureCanvasBase.get_supported_filetypes())
    suffix = path.suffix[1:].lower()
    if suffix not in formats:
        raise argparse.ArgumentTypeError(
            f"must end in a suffix matplotlib can write ({', '.join('.' + f for f in formats)}); got {str(text)!r}"
        )
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise argparse.ArgumentTypeError(f"folder {str(folder)!r} does not exist; got {str(text)!r}")
    if not os.access(folder, os.W_OK):
        raise argparse.ArgumentTypeError(f"folder {str(folder)!r} is not writable; got {str(text)!r}")
    return str(text)


def checked(option: str, parse, value):
    """``parse(value)``, or UsageError naming the option."""
    try:
        return parse(value)
    except argparse.ArgumentTypeError as exc:
        raise UsageError(f"{option} {exc}") from None
