"""SVRPath: the exact C regularization path of a kernel ε-SVR (Gunter & Zhu 2007).

ε-SVR on its doubled rows is the C-SVC dual with a linear term (:mod:`gpath.svr`), and the
levels that term sets, ``y'_i y_i − ε``, do not move with C: the C path of
:func:`gpath._cpath.c_path` runs on it unchanged, from the exact solution at C_min
(SMO's start, then SimpleSVM, on the doubled rows, as :meth:`gpath.IncrementalSVR.fit`). This module validates the
input, publishes the path in β = α − α*, and evaluates it.
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.metrics import r2_score
from sklearn.utils.validation import check_is_fitted

from . import persistence
from ._array_api import get_namespace_and_device, to_device, to_host
from ._cpath import CPath, MSEPath, c_path, decision_values, interpolate, squared_error_path
from ._path import PathError, check_resolution
from ._simplesvm import exact_state, smo_point
from ._validation import (
    check_positive,
    check_targets,
    check_X,
    feature_names,
    numeric_targets,
)
from .cpath import PathEvaluation, check_C_range
from .kernels import Kernel
from .persistence import SaveMixin
from .svr import doubled, kkt_violation_svr, resolution_unit

__all__ = ["MSEPath", "SVRPath"]

# Both ends of a fitted or loaded path must satisfy the KKT conditions to this, recomputed from
# scratch, relative to the scale of f (IncrementalSVR.check_kkt's rule).
_TOL = 1e-9


class SVRPath(PathEvaluation, SaveMixin, RegressorMixin, BaseEstimator):
    """The exact C regularization path of a kernel ε-SVR.

    Solves ``min ½ βᵀ(K + ridge·I)β + ε Σ|β_i| − yᵀβ`` s.t. ``−C ≤ β_i ≤ C``, ``Σβ = 0``
    (:class:`gpath.IncrementalSVR`'s problem, the ridge on each of a point's two rows) for every
    C in [C_min, C_max] at once. With the kernel and ε fixed, β(C) and b(C) are piecewise
    linear in C: :meth:`fit` starts from the exact solution at C_min and follows C to C_max,
    passing one breakpoint per change of the index sets (a point reaching the edge of the tube,
    ``|y_i − f(x_i)| = ε``, or its β_i reaching 0 or ±C). Between breakpoints linear
    interpolation is exact, so :meth:`predict` is exact at any C in the range, and
    :meth:`select` finds the exact least validation squared error over C.

    Where no β_i is strictly inside its box (0 < |β_i| < C: a point on the tube's edge, which
    pins b), the optimal bias is any value of an interval; the path keeps b linear along such
    a segment (as :class:`gpath.SVCPath` does), a fit at that C takes the interval's middle,
    as LIBSVM. Both are exact; their predictions there differ by at most the interval's width.

    Arrays stay in the namespace and on the device of the ``X`` given to :meth:`fit`; the path
    record (``path_``) and the small linear systems are on the host, in float64.

    Parameters
    ----------
    C_min : float, default 0.01
        Start of the path, finite and > 0.
    C_max : float, default 1000.0
        End of the path, finite, ≥ C_min (C_min = C_max gives a path of one point).
    epsilon : float, default 0.1
        Half-width of the ε-insensitive tube, ≥ 0 (units of y), fixed along the path.
    kernel : {"rbf", "linear", "poly"} or callable, default "rbf"
    gamma : float or {"scale", "auto"}, default "scale"
    degree : int, default 3
    coef0 : float, default 0.0
        As in scikit-learn's ``SVR`` (``"scale"`` resolved on the X given to :meth:`fit`).
    ridge : float, default 1e-6
        ≥ 0, added to the diagonal of the doubled problem's Q, as in
        :class:`gpath.IncrementalSVR`: the path is the exact one for that problem; predictions
        use K.

    Attributes
    ----------
    path_ : CPath
        ``Cs`` (n_points,): C_min, the breakpoints, C_max; ``alpha`` (n_points, n_samples):
        β = α − α* at each point (in [−C, C], training order); ``intercept`` (n_points,): b;
        ``margin_size``: points on the edge of the tube; ``n_breakpoints``,
        ``n_refinements``, ``time`` (seconds, start included).
    C_ : float
        The C that :meth:`predict` and :meth:`check_kkt` use by default: C_max after
        :meth:`fit`, the selected C after :meth:`select`.
    validation_error_ : MSEPath
        After :meth:`select`: the exact validation mean squared error over C.
    kernel_ : Kernel
        The kernel with ``gamma`` resolved.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,), object
        Column names of the pandas DataFrame given to ``fit`` (only then).

    References
    ----------
    L. Gunter and J. Zhu, "Efficient computation and model selection for the support vector
    regression", Neural Computation 19(6), 2007 (the ε-SVR path in λ = 1/C). T. Hastie,
    S. Rosset, R. Tibshirani and J. Zhu, JMLR 5 (2004) (the C-SVC path). M. Karasuyama and
    I. Takeuchi, NIPS 2009, eqs. 10–11 and section 3.3 (the direction and the empty margin, in
    the notation used here).

    Examples
    --------
    >>> from sklearn.datasets import load_diabetes
    >>> from gpath import SVRPath
    >>> X, y = load_diabetes(return_X_y=True)
    >>> model = SVRPath(C_min=0.1, C_max=1e4, epsilon=5.0, gamma=0.1).fit(X[:300], y[:300])
    >>> model.select(X[300:], y[300:]).C_  # doctest: +SKIP
    """

    _FITTED_ATTRIBUTES = frozenset({"path_", "C_", "validation_error_", "kernel_", "n_features_in_",
                                    "feature_names_in_", "_X", "_y", "_epsilon", "_ridge"})

    def __init__(self, C_min=0.01, C_max=1000.0, epsilon=0.1, kernel="rbf", gamma="scale", degree=3, coef0=0.0,
                 ridge=1e-6):
        self.C_min = C_min
        self.C_max = C_max
        self.epsilon = epsilon
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.ridge = ridge

    def _check_params(self) -> dict:
        C_min, C_max = check_C_range(self.C_min, self.C_max)
        return {"C_min": C_min, "C_max": C_max,
                "epsilon": check_positive(self.epsilon, "epsilon", allow_zero=True),
                "ridge": check_positive(self.ridge, "ridge", allow_zero=True)}

    # ------------------------------------------------------------------ fitting
    def fit(self, X, y):
        """Compute the C path on (X, y).

        Parameters
        ----------
        X : array of shape (n_samples, n_features)
            Any array-API array (NumPy, CuPy, ...) or array-like; converted to float64.
        y : array-like of shape (n_samples,)
            Real targets.

        Returns
        -------
        self

        Raises
        ------
        ValueError
            A bad parameter (naming it: C_min, C_max, epsilon, ridge, kernel, gamma, degree,
            coef0), C_min > C_max, X not 2-D or with NaN or inf, y of another length, not
            real numbers or not finite. Checked before anything is computed; a failed fit
            leaves the estimator as it was.
        TypeError
            X sparse or not numeric.
        PathError, SingularMarginError
            A numerical failure (degenerate cycling; an end of the path that fails the KKT
            check from scratch, or whose predictions float64 does not resolve to 1e-6 of the
            targets' spread; duplicate points on the tube's edge with ``ridge=0``); the
            estimator is then unchanged.
        """
        start = time.perf_counter()
        name = type(self).__name__
        params = self._check_params()
        names = feature_names(X)
        X, _, _ = check_X(X, owner=name)
        if y is None:
            raise ValueError(f"{name} requires y to be passed, but the target y is None")
        y = check_targets(numeric_targets(y), X.shape[0])
        kernel = Kernel.from_params(self.kernel, self.gamma, self.degree, self.coef0, X)
        X2, y2, shift = doubled(X, y, params["epsilon"])
        start_point = smo_point(X, y2, kernel, params["C_min"], params["ridge"], shift=shift,
                                source=np.repeat(np.arange(X.shape[0]), 2))
        state, _ = exact_state(X2, y2, kernel, params["C_min"], params["ridge"], start=start_point, shift=shift,
                               twins=True)
        # Float64 must resolve f at both ends (the terms grow with C), as in every fit of gpath: a
        # KKT check below round-off certifies nothing. (c_path moves the state to C_max.)
        check_resolution(state, *resolution_unit(state, y, params["epsilon"]))
        doubled_path = c_path(state, params["C_max"], start_time=start)
        check_resolution(state, *resolution_unit(state, y, params["epsilon"]))
        alpha = doubled_path.alpha
        path = dataclasses.replace(doubled_path, alpha=alpha[:, 0::2] - alpha[:, 1::2])
        for end in (0, -1):
            violation = _violation(path.alpha[end], path.intercept[end], path.Cs[end], kernel, X, y,
                                   params["epsilon"], params["ridge"])
            if violation > _TOL:
                raise PathError(f"the path at C={path.Cs[end]:g} violates the KKT conditions by {violation:.3g} "
                                f"recomputed from scratch (allowed: {_TOL:g})")
        fitted = {"path_": path, "C_": float(path.Cs[-1]), "kernel_": kernel, "n_features_in_": int(X.shape[1]),
                  "_X": X, "_y": y.copy(), "_epsilon": params["epsilon"], "_ridge": params["ridge"]}
        self._set_fitted({**fitted, "feature_names_in_": names, "validation_error_": None})
        return self

    # ------------------------------------------------------------------ evaluation
    def _values(self, beta, b, X):
        """Predictions ``K(X, X_train) β + b`` for the coefficient rows ``beta`` (k, n)."""
        xp, device = get_namespace_and_device(self._X)
        return decision_values(self.kernel_, self._X, np.ones(self._y.shape[0]), beta, b, X, xp, device)

    def predict(self, X, C=None):
        """``f(x) = Σ_j β_j(C) K(x, x_j) + b(C)`` on the path.

        Parameters
        ----------
        X : array of shape (n_samples, n_features)
            In the namespace and on the device of the training X.
        C : float or None
            Where on the path, in [C_min, C_max]; β(C), b(C) are interpolated linearly
            between the breakpoints around C, which is exact. None: ``C_``.

        Returns
        -------
        f : array of shape (n_samples,), float64
            In the namespace and on the device of X.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            Before ``fit``.
        ValueError
            C outside [C_min, C_max] or not a real number; X with another number of features
            than in ``fit``, with NaN or inf, or (fitted on a DataFrame) other column names.
        TypeError
            X not numeric, or in another namespace or on another device than the model.
        """
        check_is_fitted(self, "path_")
        C = self.C_ if C is None else self._check_C(C)
        X = self._check_input(X)
        beta, b = interpolate(self.path_, C)
        return self._values(beta[None, :], [b], X)[:, 0]

    def score(self, X, y, sample_weight=None, C=None):
        """R² of ``predict(X, C)`` against y (scikit-learn's ``r2_score``, on the host).

        Parameters
        ----------
        X : array of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,) or None
        C : float or None
            As in :meth:`predict`.

        Returns
        -------
        float

        Raises
        ------
        ValueError
            As :meth:`predict`, or y not real numbers of X's length.
        """
        f = to_host(self.predict(X, C))
        y = check_targets(numeric_targets(y), f.shape[0])
        return float(r2_score(y, f, sample_weight=sample_weight))

    def check_kkt(self, C=None) -> float:
        """Largest KKT violation of the solution at C, recomputed from scratch.

        :meth:`gpath.IncrementalSVR.check_kkt`'s rule on the training rows with fresh kernel
        values: stationarity violations (units of f) relative to the size of the terms of f,
        those of Σβ = 0 and of the box relative to C.

        Parameters
        ----------
        C : float or None
            In [C_min, C_max]; None: ``C_``.

        Returns
        -------
        violation : float

        Raises
        ------
        sklearn.exceptions.NotFittedError
        ValueError
            C outside the path or not a real number.
        """
        check_is_fitted(self, "path_")
        C = self.C_ if C is None else self._check_C(C)
        beta, b = interpolate(self.path_, C)
        return _violation(beta, b, C, self.kernel_, self._X, self._y, self._epsilon, self._ridge)

    def select(self, X_val, y_val):
        """Pick the C of least validation squared error; sets ``C_`` and ``validation_error_``.

        The validation error is exact at every C: each prediction is linear in C between
        breakpoints, so the mean squared error is a quadratic in C on each segment
        (:func:`gpath._cpath.squared_error_path`), and ``C_`` is its least point (a segment's
        vertex or a breakpoint; the smallest such C among ties).

        Parameters
        ----------
        X_val : array of shape (n_val, n_features)
        y_val : array-like of shape (n_val,)

        Returns
        -------
        self

        Raises
        ------
        sklearn.exceptions.NotFittedError
            Before ``fit``.
        ValueError
            X_val with another number of features or column names than in ``fit``, or with
            NaN or inf; y_val not of shape (n_val,), not real numbers or not finite. The model
            is then unchanged.
        TypeError
            X_val not numeric, or in another namespace or on another device than the model.
        """
        start = time.perf_counter()
        check_is_fitted(self, "path_")
        X_val = self._check_input(X_val, "X_val")
        y_val = check_targets(numeric_targets(y_val), X_val.shape[0], "y_val", "X_val")
        p = self.path_
        F = to_host(self._values(p.alpha, p.intercept, X_val))
        curve = squared_error_path(p.Cs, F, y_val, time.perf_counter() - start)
        self.validation_error_ = curve
        self.C_ = curve.best_C
        return self

    # ------------------------------------------------------------------ loaded models
    def _check_loaded(self) -> None:
        """A loaded path fits together: the shapes of the path and of the training data,
        increasing Cs with ``C_`` among them, β in its box [−C, C] with Σβ = 0 at every point
        (to round-off), and the KKT conditions at both ends recomputed from scratch to ``_TOL``.

        Raises
        ------
        gpath.persistence.ModelFileError
        """
        invalid, attr = persistence.ModelFileError, persistence.fitted_attribute
        d = persistence.fitted_n_features(self)
        persistence.check_kernel(getattr(self, "kernel_", None))
        n = attr(self, "_X", (None, d)).shape[0]
        y = attr(self, "_y", (n,))
        p = getattr(self, "path_", None)
        if not isinstance(p, CPath):
            raise invalid(f"path_ must be a CPath; got {type(p).__name__}")
        Cs = attr(p, "Cs", (None,))
        k = Cs.shape[0]
        beta = attr(p, "alpha", (k, n))
        attr(p, "intercept", (k,))
        attr(p, "margin_size", (k,), "iu")
        if k < 1 or Cs[0] <= 0 or np.any(np.diff(Cs) < 0):
            raise invalid("path_.Cs must be one or more increasing C > 0")
        if not (isinstance(self.C_, float) and Cs[0] <= self.C_ <= Cs[-1]):
            raise invalid(f"C_ must be a float in [{Cs[0]:g}, {Cs[-1]:g}]; got {self.C_!r}")
        if np.any(np.abs(beta) > Cs[:, None]) or np.any(np.abs(beta.sum(axis=1)) > 1e-9 * Cs * max(n, 1)):
            raise invalid("path_.alpha (beta) must lie in [-C, C] and sum to 0 at every point of the path")
        curve = getattr(self, "validation_error_", None)
        if curve is not None and not isinstance(curve, MSEPath):
            raise invalid(f"validation_error_ must be an MSEPath; got {type(curve).__name__}")
        epsilon, ridge = getattr(self, "_epsilon", None), getattr(self, "_ridge", None)
        if not all(isinstance(v, float) and np.isfinite(v) and v >= 0 for v in (epsilon, ridge)):
            raise invalid(f"_epsilon and _ridge must be floats >= 0; got {epsilon!r} and {ridge!r}")
        for end in (0, k - 1):
            violation = _violation(p.alpha[end], p.intercept[end], Cs[end], self.kernel_, self._X, y, epsilon, ridge)
            if violation > _TOL:
                raise invalid(f"the path at C={Cs[end]:g} violates the KKT conditions by {violation:.3g} relative to "
                              f"the scale of f, recomputed from scratch (allowed: {_TOL:g})")


def _violation(beta, b, C, kernel, X, y, epsilon, ridge) -> float:
    """check_kkt's rule (:func:`gpath.svr.kkt_violation_svr`) for β (host, n), b and C on the
    training rows X (device) and targets y (host)."""
    xp, device = get_namespace_and_device(X)
    C = float(C)
    support = np.flatnonzero(beta)
    X_sv = xp.take(X, to_device(support, xp, device), axis=0)
    alpha = np.stack([np.maximum(beta, 0.0), np.maximum(-beta, 0.0)], axis=1).reshape(-1)
    return kkt_violation_svr(kernel, X_sv, to_device(beta[support], xp, device), float(b), X, y, alpha,
                             np.full(alpha.size, C), epsilon, ridge, C)
