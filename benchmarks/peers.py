"""The retraining peers the benchmarks measure gpath against, where they import."""

from __future__ import annotations

from sklearn.svm import SVC


def peers(libsvm_tols=(1e-3,)):
    """``{name: make(C, gamma, kernel="rbf") -> unfitted classifier}``: LIBSVM (scikit-learn's
    SVC) at each tolerance, scikit-learn-intelex's SVC and ThunderSVM (CPU) if installed."""
    out = {}
    for tol in libsvm_tols:
        name = "LIBSVM" if len(libsvm_tols) == 1 else f"LIBSVM {tol:.0e}"
        out[name] = lambda C, g, kernel="rbf", tol=tol: SVC(C=C, gamma=g, kernel=kernel, tol=tol)
    try:
        from sklearnex.svm import SVC as IntelSVC

        out["sklearnex"] = lambda C, g, kernel="rbf": IntelSVC(C=C, gamma=g, kernel=kernel)
    except ImportError:
        pass
    try:
        from thundersvm import SVC as ThunderSVC

        out["ThunderSVM"] = lambda C, g, kernel="rbf": ThunderSVC(C=C, gamma=g, kernel=kernel)
    except ImportError:
        pass
    return out
