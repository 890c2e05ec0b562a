"""gpath: exact SVM solutions and solution paths by path following, on the array API."""

from ._path import PathError, PathStats
from .incremental import IncrementalSVC
from .linalg import SingularMarginError

__version__ = "0.1.0"

__all__ = ["IncrementalSVC", "PathError", "PathStats", "SingularMarginError", "__version__"]
