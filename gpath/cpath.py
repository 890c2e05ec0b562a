"""SVCPath: the exact C regularization path of a kernel C-SVC (Hastie et al. 2004).

The estimator validates its input and publishes the path; the path itself is
:func:`gpath._cpath.c_path`, started from SimpleSVM's exact solution at C_min.
"""

from __future__ import annotations

import time
from numbers import Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from . import persistence
from ._array_api import get_namespace_and_device, to_device, to_host
from ._cpath import (
    CPath,
    CVErrorPath,
    c_path,
    decision_values,
    interpolate,
    mean_error_steps,
    path_error_steps,
)
from ._path import PathError, check_resolution, kkt_violation
from ._simplesvm import exact_state
from ._validation import (
    check_labels,
    check_positive,
    check_rows,
    check_X,
    feature_names,
    signed_labels,
)
from .kernels import Kernel, kernel_products
from .persistence import SaveMixin

__all__ = ["CPath", "CVErrorPath", "PathEvaluation", "SVCPath"]

# A loaded path must satisfy the KKT conditions at its ends to this, relative to the scale of y f.
_LOADED_TOL = 1e-9


def start_state(X, y, kernel, C_min, ridge):
    """The exact solution at C_min by SimpleSVM, as the C path starts from it.

    Parameters
    ----------
    X : device array of shape (n_samples, n_features), float64
    y : device array of shape (n_samples,), float64, ±1 (both signs)
    kernel : Kernel
    C_min, ridge : float

    Returns
    -------
    SVCState
        With an unambiguous margin set (``release_bounded_margin``), compacted cache and
        margins refined from α.

    Raises
    ------
    PathError
        SimpleSVM's; the start's KKT conditions (from its margins refined from α) violated
        beyond 1e-9 of the problem's scale (the check of a loaded path's ends); or margins
        that float64 does not resolve (:func:`gpath._path.check_resolution`).
    """
    state, _ = exact_state(X, y, kernel, C_min, ridge)
    violation, _ = state.kkt_check(_LOADED_TOL)
    if violation > _LOADED_TOL:
        raise PathError(f"the exact start at C_min={C_min:g} violates the KKT conditions by {violation:.3g} "
                        f"(relative to the scale of y f) > {_LOADED_TOL:g}; standardize the features or raise "
                        f"ridge; the estimator is unchanged")
    check_resolution(state)  # (as every fit of gpath: a KKT check below round-off certifies nothing)
    return state


def kkt_at(kernel, X, y_host, ridge, alpha, b, C, block=2048) -> float:
    """:meth:`SVCPath.check_kkt`'s measure of one point (α, b) of a C path at C.

    The margins ``y_i f(x_i) + ridge·α_i`` of the training rows X (device) from fresh kernel
    values (blocks of ``block`` rows against the points with α ≠ 0), and the rule of
    :func:`gpath._path.kkt_violation` with the scale ``max_i Σ_j |Q_ij| α_j``.
    """
    xp, device = get_namespace_and_device(X)
    used = np.flatnonzero(alpha)
    f, size = kernel_products(kernel, X, xp.take(X, to_device(used, xp, device), axis=0),
                              to_device(alpha[used] * y_host[used], xp, device), block)
    yf = y_host * (f + float(b)) + ridge * alpha
    scale = float(np.max(size + ridge * alpha, initial=0.0))
    return kkt_violation(yf, y_host, alpha, np.full(alpha.shape[0], float(C)), scale, float(C))


def check_end(path, state, ridge) -> None:
    """The C path's end at C_max checked from scratch (:func:`kkt_at`) at 1e-9, as its start
    (:func:`start_state`) and a loaded path's ends are, and resolved by float64
    (:func:`gpath._path.check_resolution`; the margins' terms grow with C); ``state``: the
    one the path followed, now at C_max.

    Raises
    ------
    PathError
        Beyond 1e-9 of the scale of y f, or margins float64 does not resolve.
    """
    check_resolution(state)
    violation = kkt_at(state.kernel, state.X, state.y_host, ridge, path.alpha[-1], path.intercept[-1], path.Cs[-1])
    if violation > _LOADED_TOL:
        raise PathError(f"the path at C_max={path.Cs[-1]:g} violates the KKT conditions by {violation:.3g} (relative "
                        f"to the scale of y f, recomputed from scratch) > {_LOADED_TOL:g}; standardize the features or "
                        f"raise ridge; the estimator is unchanged")


def check_C_range(C_min, C_max) -> tuple[float, float]:
    """``(C_min, C_max)`` as floats: both finite and > 0, C_min ≤ C_max; ValueError otherwise."""
    C_min, C_max = check_positive(C_min, "C_min"), check_positive(C_max, "C_max")
    if C_min > C_max:
        raise ValueError(f"C_min must be <= C_max; got C_min={C_min!r} and C_max={C_max!r}")
    return C_min, C_max


class PathEvaluation:
    """The checks of a fitted C path's inputs (:class:`SVCPath`, :class:`gpath.SVRPath`): a C on
    the path, and rows in the training data's namespace, device and features."""

    def _check_C(self, C) -> float:
        Cs = self.path_.Cs
        if not (isinstance(C, Real) and not isinstance(C, bool) and Cs[0] <= C <= Cs[-1]):
            raise ValueError(f"C must be a real number in [C_min, C_max] = [{Cs[0]:g}, {Cs[-1]:g}] of the "
                             f"fitted path; got {C!r}")
        return float(C)

    def _check_input(self, X, name="X"):
        return check_rows(self, X, self._X, name)


class SVCPath(PathEvaluation, SaveMixin, ClassifierMixin, BaseEstimator):
    """The exact C regularization path of a binary kernel C-SVC.

    Solves ``min ½ αᵀQα − 1ᵀα`` s.t. ``0 ≤ α ≤ C``, ``yᵀα = 0`` (``Q_ij = y_i y_j K(x_i, x_j)
    + ridge·[i = j]``) for every C in [C_min, C_max] at once. With the kernel fixed, α(C) and
    b(C) are piecewise linear in C: :meth:`fit` starts from the exact solution at C_min
    (SimpleSVM, :class:`gpath.SimpleSVC`) and follows C to C_max, passing one breakpoint per
    change of the index sets O, M, I (a margin coefficient reaching 0 or C, a point of O or I
    reaching y f = 1, an empty margin set). Between breakpoints linear interpolation is exact,
    so :meth:`decision_function` and :meth:`predict` are exact at any C in the range, and
    :meth:`select` finds the exact validation error as a function of C.

    Where no coefficient is strictly inside its box (small C: an empty margin set, or a margin
    point pinned at 0 or C along a segment), the optimal bias is not unique but any value of
    an interval. The path keeps b linear along such a segment, from where it began, so that
    every decision value stays linear in C (what :meth:`select` solves in closed form); a fit
    at that C (:class:`gpath.IncrementalSVC`, LIBSVM) takes the middle of the interval. Both
    are exact solutions; their decision values there differ by at most the interval's width.

    Arrays stay in the namespace and on the device of the ``X`` given to :meth:`fit`; the path
    record (``path_``) and the small linear systems are on the host, in float64.

    Parameters
    ----------
    C_min : float, default 0.01
        Start of the path, finite and > 0.
    C_max : float, default 1000.0
        End of the path, finite, ≥ C_min (C_min = C_max gives a path of one point).
    kernel : {"rbf", "linear", "poly"}, default "rbf"
    gamma : float or {"scale", "auto"}, default "scale"
        As in scikit-learn's SVC (``"scale"`` resolved on the X given to :meth:`fit`).
    degree : int, default 3
    coef0 : float, default 0.0
    ridge : float, default 1e-6
        Added to the kernel diagonal, as in :class:`gpath.IncrementalSVC`: duplicate margin
        points keep the margin matrix 𝐌 nonsingular. The path is the exact one for the kernel
        ``K + ridge·I`` on the training points; predictions use ``K``.

    Attributes
    ----------
    path_ : CPath
        ``Cs`` (n_points,), ``alpha`` (n_points, n_samples), ``intercept`` (n_points,),
        ``margin_size``, ``n_breakpoints``, ``n_refinements`` and ``time`` (seconds, start
        included).
    C_ : float
        The C that :meth:`predict` and :meth:`decision_function` use by default: C_max after
        :meth:`fit`, the selected C after :meth:`select`.
    validation_error_ : CVErrorPath
        After :meth:`select`: the exact validation error over C (one "fold").
    classes_ : ndarray of shape (2,)
    kernel_ : Kernel
        The kernel with ``gamma`` resolved.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,), object
        Column names of the pandas DataFrame given to ``fit`` (only then).

    References
    ----------
    T. Hastie, S. Rosset, R. Tibshirani and J. Zhu, "The entire regularization path for the
    support vector machine", JMLR 5 (2004) 1391–1415 (the path in λ = 1/C, sections 3–4).
    M. Karasuyama and I. Takeuchi, "Multiple incremental decremental learning of support
    vector machines", NIPS 2009, eqs. 10–11 and section 3.3 (the direction and the empty
    margin, in the notation used here). S. V. N. Vishwanathan, A. J. Smola and M. N. Murty,
    "SimpleSVM", ICML 2003 (the start at C_min).

    Examples
    --------
    >>> from gpath import SVCPath
    >>> from gpath.datasets import load_waterflow_direction
    >>> X, y = load_waterflow_direction()
    >>> model = SVCPath(C_min=0.1, C_max=100.0, gamma=10.0).fit(X[:300], y[:300])
    >>> model.select(X[300:600], y[300:600]).C_  # doctest: +SKIP
    """

    _FITTED_ATTRIBUTES = frozenset({"path_", "C_", "validation_error_", "classes_", "kernel_", "n_features_in_",
                                    "feature_names_in_", "_X", "_y_host", "_ridge"})

    def __init__(self, C_min=0.01, C_max=1000.0, kernel="rbf", gamma="scale", degree=3, coef0=0.0, ridge=1e-6):
        self.C_min = C_min
        self.C_max = C_max
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.ridge = ridge

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    def _check_params(self) -> dict:
        C_min, C_max = check_C_range(self.C_min, self.C_max)
        return {"C_min": C_min, "C_max": C_max, "ridge": check_positive(self.ridge, "ridge", allow_zero=True)}

    # ------------------------------------------------------------------ fitting
    def fit(self, X, y):
        """Compute the C path on (X, y).

        Parameters
        ----------
        X : array of shape (n_samples, n_features)
            Any array-API array (NumPy, CuPy, ...) or array-like; converted to float64.
        y : array-like of shape (n_samples,)
            Exactly two distinct labels.

        Returns
        -------
        self

        Raises
        ------
        ValueError
            A bad parameter (naming it: C_min, C_max, ridge, kernel, gamma, degree, coef0),
            C_min > C_max, X not 2-D or with NaN or inf, y of another length or without
            exactly two classes. Checked before anything is computed; a failed fit leaves
            the estimator as it was.
        TypeError
            X sparse or not numeric.
        PathError, SingularMarginError
            A numerical failure (degenerate cycling; an end of the path beyond 1e-9 of the
            KKT check, or whose margins float64 does not resolve to 1e-6; duplicate margin
            points with ``ridge=0``); the estimator is then unchanged.
        """
        start = time.perf_counter()
        name = type(self).__name__
        params = self._check_params()
        names = feature_names(X)
        X, xp, device = check_X(X, owner=name)
        labels, classes = check_labels(y, X.shape[0], owner=name)
        kernel = Kernel.from_params(self.kernel, self.gamma, self.degree, self.coef0, X)
        state = start_state(X, signed_labels(labels, classes, xp, device), kernel, params["C_min"], params["ridge"])
        path = c_path(state, params["C_max"], start_time=start)
        check_end(path, state, params["ridge"])
        # Published all at once, so that a failure changes nothing.
        fitted = {"path_": path, "C_": float(path.Cs[-1]), "classes_": classes, "kernel_": state.kernel,
                  "n_features_in_": int(state.X.shape[1]), "_X": state.X, "_y_host": state.y_host.copy(),
                  "_ridge": params["ridge"], "feature_names_in_": names, "validation_error_": None}
        self._set_fitted(fitted)
        return self

    # ------------------------------------------------------------------ evaluation
    def check_kkt(self, C=None) -> float:
        """Largest KKT violation of the solution at C, recomputed from scratch, relative to
        the scale of the problem.

        :meth:`gpath.IncrementalSVC.check_kkt`'s rule on the training rows with fresh kernel
        values (O(n·n_SV) kernel evaluations): the stationarity violations (``1 − y f`` where
        α_i < C, ``y f − 1`` where α_i > 0, y f with ``ridge·α_i``) divided by
        ``1 + max_i Σ_j |Q_ij| α_j``, those of yᵀα = 0 and of the box [0, C] divided by C.
        Exact between breakpoints too (α and b are linear in C there). ``fit`` checks the
        path's end at C_max this way at 1e-9 (its start at C_min, by the same rule on margins
        refined from α), and so does ``gpath.load`` at both ends.

        Parameters
        ----------
        C : float or None
            In [C_min, C_max]; None: ``C_``.

        Returns
        -------
        violation : float
            About 1e-16 … 1e-12 for an exact solution.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            Before ``fit``.
        ValueError
            C outside the path or not a real number.
        """
        check_is_fitted(self, "path_")
        C = self.C_ if C is None else self._check_C(C)
        alpha, b = interpolate(self.path_, C)
        return kkt_at(self.kernel_, self._X, self._y_host, self._fitted_ridge(), alpha, b, C)

    def _fitted_ridge(self) -> float:
        """The ridge of the fit (a file written before it was kept: the parameter's)."""
        return self._ridge if hasattr(self, "_ridge") else self._check_params()["ridge"]

    def decision_function(self, X, C=None):
        """Decision values ``f(x) = Σ_j α_j(C) y_j K(x, x_j) + b(C)`` on the path.

        Parameters
        ----------
        X : array of shape (n_samples, n_features)
            In the namespace and on the device of the training X.
        C : float or None
            Where on the path, in [C_min, C_max]; α(C), b(C) are interpolated linearly
            between the breakpoints around C, which is exact. None: ``C_``.

        Returns
        -------
        f : array of shape (n_samples,), float64
            Positive for ``classes_[1]``; in the namespace and on the device of X.

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
        alpha, b = interpolate(self.path_, C)
        xp, device = get_namespace_and_device(self._X)
        return decision_values(self.kernel_, self._X, self._y_host, alpha[None, :], [b], X, xp, device)[:, 0]

    def predict(self, X, C=None):
        """Class labels at C: ``classes_[1]`` where ``decision_function(X, C) > 0``.

        Parameters
        ----------
        X : array of shape (n_samples, n_features)
        C : float or None
            As in :meth:`decision_function`.

        Returns
        -------
        labels : ndarray of shape (n_samples,) (host NumPy)

        Raises
        ------
        As :meth:`decision_function`.
        """
        f = self.decision_function(X, C)
        return self.classes_[(to_host(f) > 0).astype(int)]

    def _validation_steps(self, X_val, y_val):
        """``(knots, errors, n_val)``: the misclassified points of (X_val, y_val) as a step
        function of C (:func:`gpath._cpath.error_steps`), and the number of points.

        Raises
        ------
        As :meth:`select`.
        """
        check_is_fitted(self, "path_")
        X_val = self._check_input(X_val, "X_val")
        labels, _ = check_labels(y_val, X_val.shape[0], "y_val", self.classes_, x_name="X_val")
        knots, errors = path_error_steps(self.path_, self.kernel_, self._X, self._y_host, X_val,
                                         labels == self.classes_[1])
        return knots, errors, int(X_val.shape[0])

    def select(self, X_val, y_val):
        """Pick the C of least validation error; sets ``C_`` and ``validation_error_``.

        The validation error is exact at every C: each validation decision value is linear
        in C between breakpoints, so the C where it changes sign is solved in closed form, and
        the error is a step function of C with a knot at each such C. ``C_`` is the
        geometric middle of the best interval (the one of smallest C among ties).

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
            NaN or inf; y_val not of shape (n_val,) or with a label not in ``classes_``. The
            model is then unchanged.
        TypeError
            X_val not numeric, or in another namespace or on another device than the model.
        """
        start = time.perf_counter()
        steps = self._validation_steps(X_val, y_val)
        p = self.path_
        curve = mean_error_steps([steps], self.kernel_.gamma, [p.n_breakpoints], time.perf_counter() - start)
        self.validation_error_ = curve
        self.C_ = curve.best_C
        return self

    # ------------------------------------------------------------------ loaded models
    def _check_loaded(self) -> None:
        """A loaded path fits together: the shapes of the path and of the training data,
        increasing Cs with ``C_`` among them, α in its box [0, C] at every point, and the KKT
        conditions at both ends recomputed from scratch from X, y, α and b, to
        ``_LOADED_TOL`` (:meth:`check_kkt`'s measure).

        Raises
        ------
        gpath.persistence.ModelFileError
        """
        invalid, attr = persistence.ModelFileError, persistence.fitted_attribute
        d = persistence.fitted_n_features(self)
        persistence.check_kernel(getattr(self, "kernel_", None))
        n = attr(self, "_X", (None, d)).shape[0]
        y = attr(self, "_y_host", (n,))
        classes = attr(self, "classes_", (2,), "biufUO")
        if classes[0] == classes[1] or not np.all(np.abs(y) == 1.0) or np.unique(y).size != 2:
            raise invalid("classes_ must be two labels and _y_host -1 and +1 labels of both classes")
        p = getattr(self, "path_", None)
        if not isinstance(p, CPath):
            raise invalid(f"path_ must be a CPath; got {type(p).__name__}")
        Cs = attr(p, "Cs", (None,))
        k = Cs.shape[0]
        alpha, b = attr(p, "alpha", (k, n)), attr(p, "intercept", (k,))
        attr(p, "margin_size", (k,), "iu")
        if k < 1 or Cs[0] <= 0 or np.any(np.diff(Cs) < 0):
            raise invalid("path_.Cs must be one or more increasing C > 0")
        if not (isinstance(self.C_, float) and Cs[0] <= self.C_ <= Cs[-1]):
            raise invalid(f"C_ must be a float in [{Cs[0]:g}, {Cs[-1]:g}]; got {self.C_!r}")
        if np.any(alpha < 0) or np.any(alpha > Cs[:, None]):
            raise invalid("path_.alpha must lie in [0, C] at every point of the path")
        curve = getattr(self, "validation_error_", None)
        if curve is not None and not isinstance(curve, CVErrorPath):
            raise invalid(f"validation_error_ must be a CVErrorPath; got {type(curve).__name__}")
        try:
            ridge = self._fitted_ridge()
        except ValueError as exc:
            raise invalid(f"bad parameter: {exc}") from None
        for end in (0, k - 1):
            C = Cs[end]
            violation = kkt_at(self.kernel_, self._X, y, ridge, alpha[end], b[end], C)
            if violation > _LOADED_TOL:
                raise invalid(f"the path at C={C:g} violates the KKT conditions by {violation:.3g} relative to the "
                              f"scale of y f, recomputed from scratch (allowed: {_LOADED_TOL:g})")

