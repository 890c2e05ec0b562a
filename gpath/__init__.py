"""gpath: exact SVM solutions and solution paths by path following, on the array API."""

from . import (
    _compile_notice,  # noqa: F401 (registers the line on stderr while Numba compiles gpath's code)
    _numba_cache,  # noqa: F401 (before any compiled code loads: drops cached code older than a gpath source)
    model_selection,
)
from ._path import PathError, PathStats
from .cache import CacheFullError
from .cpath import CPath, SVCPath
from .incremental import IncrementalSVC
from .linalg import SingularMarginError
from .persistence import load, save
from .robust import CCCPRobustSVC, CCCPRobustSVR, OutlierPath, RobustSVC, RobustSVR
from .simple import NotSeparableError, SimpleStats, SimpleSVC
from .svr import IncrementalSVR
from .svrpath import SVRPath

__version__ = "0.1.0"

__all__ = [
    "CCCPRobustSVC",
    "CCCPRobustSVR",
    "CPath",
    "CacheFullError",
    "IncrementalSVC",
    "IncrementalSVR",
    "NotSeparableError",
    "OutlierPath",
    "PathError",
    "PathStats",
    "RobustSVC",
    "RobustSVR",
    "SVCPath",
    "SVRPath",
    "SimpleSVC",
    "SimpleStats",
    "SingularMarginError",
    "__version__",
    "load",
    "model_selection",
    "save",
]
