"""Outlier path: robust SV classification and LAD regression by homotopy, and CCCP.

Suzumura, Ogawa, Sugiyama, Karasuyama & Takeuchi, "Homotopy continuation approaches for
robust SV classification and regression" (2015; ICML 2014 "Outlier path"). The robust loss
(eq. 5 for classification, eq. 9 for regression) bridges the convex SVM (θ = 1, or s at the
far end) and the fully robust one (θ = 0, s = 0). gpath traces the path of *local optima*
exactly: C-steps follow the piecewise-linear solution inside one partition of the points into
inliers and outliers (eq. 27; section 4.3), and at a point y f = s, where the solution stops
being locally optimal (Theorem 3), a D-step flips the boundary points (eq. 17) and reaches the
strictly better solution of the new partition by the μ-path of Appendix C.

As in the paper there is no bias: f(x) = Σ_j α_j y_j K(x, x_j) (classification) or
Σ_j α_j K(x, x_j) (regression). ``fit_intercept=True`` adds 1 to the kernel, which models an
intercept regularized like the weights.
"""

from __future__ import annotations

import dataclasses
import time
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.validation import check_is_fitted

from . import _outlier
from ._array_api import get_namespace_and_device, scalars, to_device, to_host
from ._cpath import segment
from ._outlier import Classification, OutlierPath, Regression
from ._path import PathError
from ._validation import (
    check_bool,
    check_choice,
    check_int,
    check_labels,
    check_nonpositive,
    check_positive,
    check_rows,
    check_targets,
    check_X,
    feature_names,
    host_values,
    numeric_targets,
    signed_labels,
)
from .kernels import Kernel, kernel_products
from .linalg import single_threaded_host_blas
from .persistence import SaveMixin

__all__ = ["CCCPRobustSVC", "CCCPRobustSVR", "OutlierPath", "RobustSVC", "RobustSVR"]


# Every point of a fitted path satisfies its conditions to this share of their scale (check_kkt's
# measure); the fit raises otherwise (SimpleSVC's limit).
_FIT_LIMIT = 1e-8


# OP-s of regression needs a start s (the largest residual of the LAD regression) above this
# share of the targets' scale: below it the loss's levels y ± s are y's round-off.
_S_RESOLUTION = 1e-9


# ---------------------------------------------------------------------- estimators
class _RobustBase(SaveMixin, BaseEstimator):
    """Shared fitting, evaluation along the path, and model selection."""

    _classification = True
    _FITTED_ATTRIBUTES = frozenset({
        "path_", "alpha_", "param_", "selected_index_", "classes_", "kernel_", "ridge_", "n_iter_",
        "n_features_in_", "feature_names_in_", "_X", "_y_host",
    })

    def _check_params(self) -> dict:
        """Every parameter, checked before anything is computed: C, ridge, path,
        fit_intercept, the fixed ``s`` and the end of OP-s (``s_end``: s_max or s_min), and
        what a subclass adds (:meth:`_check_more`)."""
        params = {
            "C": check_positive(self.C, "C"),
            "ridge": check_positive(self.ridge, "ridge", allow_zero=True),
            "path": check_choice(self.path, "path", ("theta", "s")),
            "fit_intercept": check_bool(self.fit_intercept, "fit_intercept"),
        }
        params["s"], params["s_end"] = self._check_s()
        params.update(self._check_more(params["path"]))
        return params

    def _check_more(self, path) -> dict:
        return {}

    def _followed(self, X, y, follow):
        """``follow(params, problem, path, fitted)``'s result and the fitted attributes, on
        a path started by :meth:`_prepare`. Where a path whose margins were repaired
        (:meth:`gpath._kinkpath.KinkPath.refine`) then cycles among ties (sharper margins
        sit exactly on kinks the drifted ones missed: 3 of 9,200 random problems, RobustSVR's
        OP-s with a ridge of 1e-9), it is followed again without the repair, as before it."""
        params, problem, path, fitted = self._prepare(X, y)
        try:
            return follow(params, problem, path, fitted), fitted
        except PathError:
            if not path.n_repairs:
                raise
        params, problem, path, fitted = self._prepare(X, y, refines=False)
        return follow(params, problem, path, fitted), fitted

    def _prepare(self, X, y, refines=True):
        """Validate, and start the path at the ordinary SVM without bias (θ = 1)."""
        params = self._check_params()
        name = type(self).__name__
        if y is None:
            raise ValueError(f"{name} requires y to be passed, but the target y is None")
        names = feature_names(X)
        X, xp, device = check_X(X, owner=name)
        kernel = Kernel.from_params(self.kernel, self.gamma, self.degree, self.coef0, X)
        if params["fit_intercept"]:
            kernel = dataclasses.replace(kernel, offset=1.0)
        if self._classification:
            labels, classes = check_labels(y, X.shape[0], owner=name)
            y_dev = signed_labels(labels, classes, xp, device)
            problem = Classification(params["C"])
        else:
            y_dev, classes = to_device(check_targets(numeric_targets(y), X.shape[0]), xp, device), None
            problem = Regression(params["C"])
        # The ridge keeps Q_EE nonsingular; relative to the kernel's scale it does so at any scale
        # of the features (an absolute 1e-6 vanishes in float64 next to a linear kernel of
        # features of size 1e12).
        k_max = scalars(xp, xp.max(kernel.diagonal(X)))[0]
        ridge = params["ridge"] * (k_max if k_max > 0 else 1.0)
        # Fitted attributes are set by _finish only, so a failed fit changes nothing.
        fitted = {"kernel_": kernel, "n_features_in_": X.shape[1], "feature_names_in_": names, "_X": X,
                  "_y_host": to_host(y_dev), "ridge_": ridge}
        if classes is not None:
            fitted["classes_"] = classes
        path = _outlier.start(xp, device, X, y_dev, fitted["_y_host"], kernel, problem, params["C"], ridge, refines)
        return params, problem, path, fitted

    # ---- evaluation ----
    def _alpha_at(self, at):
        p = self.path_
        if at is None:
            return p.alpha[self.selected_index_]
        at = _checked_at(at)
        order = self._order(p)
        if not order * p.params[0] <= order * float(at) <= order * p.params[-1]:
            raise ValueError(f"at must lie on the path, between {p.params[0]:.6g} and {p.params[-1]:.6g}; got {at!r}")
        i, w = segment(p.params, at)
        return p.alpha[i] if w == 0.0 else (1.0 - w) * p.alpha[i] + w * p.alpha[i + 1]

    def _order(self, p) -> float:
        """+1 if the parameter increases along the path, −1 if it decreases."""
        return 1.0 if p.params[-1] >= p.params[0] else -1.0

    def _check_input(self, X, name="X"):
        """X validated against the model (column names, features, namespace, device), float64."""
        return check_rows(self, X, self._X, name)

    def _decision(self, X, coef_matrix):
        """Decision values for several coefficient vectors: (n_test, k); X as returned by
        :meth:`_check_input`."""
        xp, device = get_namespace_and_device(self._X)
        w = coef_matrix * (self._y_host[:, None] if self._classification else 1.0)
        used = np.flatnonzero(np.any(w != 0, axis=1))
        K = self.kernel_(X, xp.take(self._X, to_device(used, xp, device), axis=0))
        return K @ to_device(np.ascontiguousarray(w[used]), xp, device)

    def _values(self, X, at=None):
        """f(x) at ``at`` (None: the selected point), validated: what ``decision_function``
        (classification) and ``predict`` (regression) return."""
        check_is_fitted(self, "path_")
        return self._decision(self._check_input(X), self._alpha_at(at)[:, None])[:, 0]

    def _path_values(self, X):
        """f(x) at every point of the path, shape (n_samples, n_points)."""
        check_is_fitted(self, "path_")
        return self._decision(self._check_input(X), self.path_.alpha.T)

    def select(self, X_val, y_val):
        """Pick the path point with the least validation error; sets ``param_``.

        Classification: 0-1 error; regression: mean absolute error. Only locally optimal
        points are candidates (``path_.selectable``: never the point before a D-step jump,
        which sits on the boundary y f = s), so ``decision_function(X, at=param_)`` (or
        ``predict``) is exactly the selected model. Ties go to the earliest point on the
        path. ``path_.validation_error`` gets the whole curve (every point).

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
            X_val with another number of features or other column names than in ``fit``,
            or with NaN or inf; y_val
            not of shape (n_val,), with NaN or inf, or (classification) with a label not in
            ``classes_``. The model is then unchanged.
        """
        check_is_fitted(self, "path_")
        X_val = self._check_input(X_val, "X_val")
        n_val = X_val.shape[0]
        if self._classification:
            labels, _ = check_labels(y_val, n_val, "y_val", self.classes_, x_name="X_val")
            y_pm = np.where(labels == self.classes_[1], 1.0, -1.0)
        else:
            yv = check_targets(numeric_targets(y_val), n_val, "y_val", x_name="X_val")
        F = to_host(self._decision(X_val, self.path_.alpha.T))
        if self._classification:
            pred = np.where(F > 0, 1.0, -1.0)
            err = np.mean(pred != y_pm[:, None], axis=0)
        else:
            err = np.mean(np.abs(yv[:, None] - F), axis=0)
        # Never the point before a jump (not locally optimal), so that at=param_ is the model.
        self.selected_index_ = int(np.argmin(np.where(self.path_.selectable, err, np.inf)))
        self.param_ = float(self.path_.params[self.selected_index_])
        self.path_ = dataclasses.replace(self.path_, validation_error=err)
        return self

    def check_kkt(self, at=None) -> float:
        """Largest violation of the optimality conditions at a point of the path, recomputed
        from scratch, relative to the scale of the problem.

        Recomputes the margins ``z = Q α`` (``Q = diag(y) K diag(y)``, z = y f, for
        classification; ``Q = K``, z = f, for regression; K with ``ridge_`` on its diagonal,
        the problem the path solves) with fresh kernel values (O(n·n_α) kernel evaluations,
        n_α the points with α ≠ 0), and measures how far each point's (z_i, α_i) lies from
        the graph of the robust loss's conditions at the point's θ and s: eq. 16
        (classification: α = Cθ below s, C between s and 1, in [0, C] at 1, 0 above) or
        eq. 25 (regression: α = C sign(r) inside s, sign(r) θC beyond, r = y − f), with
        α anywhere between the two sides' values at a kink. Distances in z are divided by
        ``max_i Σ_j |Q_ij α_j|`` plus the unit of the kinks (1 for classification, whose
        kinks are 1 and s; max_i |y_i| + s for regression, in the units of y): a margin sums
        terms of that size, so its round-off grows with it; distances in α by C.

        Every path point, the one before a jump included (it is the optimum of its
        partition, with its boundary points at α = C), gives about 1e-16 … 1e-12 when
        exact. Local optimality (Theorem 4 / 5: no point exactly at z = s) is a strict
        inequality that round-off cannot judge, and is not part of the measure. CCCP's
        points are fixed points of its linearization, which satisfy the same conditions.

        Parameters
        ----------
        at : float or None
            θ or s, as in ``decision_function`` / ``predict``; None: the selected point
            (``param_``).

        Returns
        -------
        violation : float

        Raises
        ------
        sklearn.exceptions.NotFittedError
            Before ``fit``.
        ValueError
            If ``at`` is off the path (or not a grid value of a CCCP model).
        TypeError
            If ``at`` is not a real number.

        References
        ----------
        Suzumura et al. 2015, eqs. 16 and 25 (sections 3.2, 3.3).
        """
        check_is_fitted(self, "path_")
        alpha = self._alpha_at(at)
        p = self.path_
        param = p.params[self.selected_index_] if at is None else _checked_at(at)
        # The C of the fit (a file written before OutlierPath held it: the parameter's).
        C = p.C if p.C is not None else float(self.C)
        return float(_violations(self.kernel_, self._X, self._y_host, self.ridge_, self._classification, C,
                                 alpha[None, :], *_theta_s(p, np.array([param])))[0][0])

    def _check_loaded(self) -> None:
        """A loaded path fits together: finite arrays, shapes of the path and the training
        data, the selected point on the path, a kernel gpath fits. (α's box, [0, C] or [−C, C],
        is not checked here.)

        Raises
        ------
        gpath.persistence.ModelFileError
        """
        from . import persistence

        invalid, attr = persistence.ModelFileError, persistence.fitted_attribute
        d = persistence.fitted_n_features(self)
        persistence.check_kernel(getattr(self, "kernel_", None), offsets=(0.0, 1.0))
        n = attr(self, "_X", (None, d)).shape[0]
        y = attr(self, "_y_host", (n,))
        p = getattr(self, "path_", None)
        if not isinstance(p, OutlierPath) or p.kind not in ("theta", "s"):
            raise invalid("path_ must be an OutlierPath of kind 'theta' or 's'")
        k = attr(p, "params", (None,)).shape[0]
        alpha = attr(p, "alpha", (k, n))
        attr(p, "discontinuous", (k,), "b")
        if k < 1:
            raise invalid("path_ must have at least one point")
        if not np.array_equal(attr(self, "alpha_", (n,)), alpha[-1]):
            raise invalid("alpha_ must be the last point of path_")
        i = getattr(self, "selected_index_", None)
        if not isinstance(i, int) or not 0 <= i < k or self.param_ != float(p.params[i]):
            raise invalid(f"selected_index_={i!r} and param_ must name a point of the path ({k} points)")
        if not p.selectable[i]:
            raise invalid(f"selected_index_={i} names the point before a D-step jump (not locally optimal)")
        if self._classification:
            attr(self, "classes_", (2,), "biufUO")
            if not np.all(np.abs(y) == 1.0):
                raise invalid("_y_host must hold -1 and +1 labels")

    def _finish(self, fitted, path_record):
        """Set the fitted attributes, once every point of the path passes :meth:`check_kkt`'s
        measure at ``_FIT_LIMIT``.

        Raises
        ------
        PathError
            A point beyond the limit; the estimator is unchanged.
        """
        C = check_positive(self.C, "C")
        p = path_record
        y = fitted["_y_host"]
        thetas, ss = _theta_s(p, p.params)
        v, z = _violations(fitted["kernel_"], fitted["_X"], y, fitted["ridge_"], self._classification, C, p.alpha,
                           thetas, ss)
        worst = int(np.argmax(v))
        if v[worst] > _FIT_LIMIT:
            raise PathError(
                f"the path's point at {'θ' if p.kind == 'theta' else 's'}={p.params[worst]:.6g} violates its "
                f"optimality conditions (eq. {16 if self._classification else 25}) by {v[worst]:.3g} of their scale "
                f"(limit {_FIT_LIMIT:g}); the estimator is unchanged. The margins are too ill-conditioned for "
                f"float64 here: raise ridge (e.g. ridge=1e-4), lower C, or standardize the features")
        # The objective from the same fresh margins (the path's own carry their round-off × C·n).
        problem = Classification(C) if self._classification else Regression(C)
        objective = np.array([problem.objective(p.alpha[i], z[:, i], y, thetas[i], ss[i]) for i in range(len(thetas))])
        path_record = dataclasses.replace(p, objective=objective, C=C)
        self._set_fitted({**fitted, "path_": path_record, "selected_index_": len(path_record.params) - 1,
                          "param_": float(path_record.params[-1]), "alpha_": path_record.alpha[-1]})
        return self


# ---------------------------------------------------------------------- prediction
class _RobustClassifier(ClassifierMixin):
    """Prediction of the robust classifiers (RobustSVC, CCCPRobustSVC). They are binary by
    nature: the ramp loss of eq. 5 is a loss of the margin y f with y = ±1, and the path is
    one path of one binary problem (scikit-learn's ``multi_class`` tag is False)."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    def _check_s(self):
        """``(s, s_max)``, both finite and <= 0."""
        name = type(self).__name__
        return check_nonpositive(self.s, "s", owner=name), check_nonpositive(self.s_max, "s_max", owner=name)

    def _s_range(self, min_margin, s_max, y):
        """OP-s runs s from min_i y_i f(x_i) up to s_max. If no margin lies below s_max, the
        ordinary SVM is already the solution at s_max: the path is that single point. (``y``,
        the labels, is the regressor's argument: margins have no unit to test against.)"""
        return min(min_margin, s_max), s_max

    def decision_function(self, X, at=None):
        """f(x) = Σ_j α_j y_j K(x, x_j) at a point of the path.

        Parameters
        ----------
        X : array of shape (n_samples, n_features)
            In the namespace and on the device of the training data.
        at : float or None
            θ or s. RobustSVC: anywhere between the path's ends; between breakpoints the
            solution is linear in θ (constant in s), and at a discontinuity it is the
            solution after the jump, the one ``select`` can choose. CCCPRobustSVC: one of
            the grid values. None: the selected point (``param_``).

        Returns
        -------
        f : array of shape (n_samples,), float64
            Positive for ``classes_[1]``; in the namespace and on the device of X.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            Before ``fit``.
        ValueError
            If ``at`` is off the path (or not a grid value), or X has another number of
            features than in ``fit``, holds NaN or inf, or (fitted on a DataFrame) has other
            column names or another column order.
        TypeError
            X in another namespace or on another device than the training data, or ``at``
            not a real number (a string, a bool).
        """
        return self._values(X, at)

    def path_decision_function(self, X):
        """f(x) at every point of the path, in path order.

        Column ``i`` is the model ``path_.alpha[i]``. Column 0 is the ordinary hinge SVM
        without bias where the path starts (θ = 1, or the start of OP-s), also where the path
        jumps at its first parameter value (``decision_function(X, at=path_.params[0])``
        is then the point after that jump).

        Parameters
        ----------
        X : array of shape (n_samples, n_features)

        Returns
        -------
        F : array of shape (n_samples, n_points), float64
            In the namespace and on the device of X.

        Raises
        ------
        As :meth:`decision_function`.
        """
        return self._path_values(X)

    def predict(self, X, at=None):
        """Labels: ``classes_[1]`` where ``decision_function(X, at) > 0``.

        Parameters
        ----------
        X : array of shape (n_samples, n_features)
        at : float or None
            As in :meth:`decision_function`.

        Returns
        -------
        labels : ndarray of shape (n_samples,) (host NumPy)

        Raises
        ------
        As :meth:`decision_function`.
        """
        f = self.decision_function(X, at)  # checks that the model is fitted, first
        return self.classes_[(to_host(f) > 0).astype(int)]


class _RobustRegressor(RegressorMixin):
    """Prediction of the robust regressors (RobustSVR, CCCPRobustSVR). As every scikit-learn
    regressor they have no ``decision_function``: ``predict`` returns f(x)."""

    def _check_s(self):
        """``(s, s_min)``: s finite and > 0; s_min None or finite and > 0."""
        s_min = None if self.s_min is None else check_positive(self.s_min, "s_min")
        return check_positive(self.s, "s"), s_min

    def _s_range(self, max_residual, s_min, y):
        """OP-s runs s from max_i |y_i − f(x_i)| down to s_min (default 0.2 × the start).

        Raises
        ------
        ValueError
            If s_min lies above the start: the path would not move; or the start is round-off
            of the targets (the LAD regression fits every y_i: a large C or ridge, a kernel
            that interpolates): the levels y_i ± s of the loss would not differ from y_i in
            float64.
        """
        if max_residual <= _S_RESOLUTION * float(np.max(np.abs(y))):
            raise ValueError(
                f"{type(self).__name__}: the LAD regression without bias where OP-s starts fits every target "
                f"(largest residual {max_residual:.3g}, round-off of targets up to {float(np.max(np.abs(y))):.3g}), "
                f"so there is no residual for s to start from: lower C or ridge (both let it fit the targets), or "
                f"use path='theta'")
        if s_min is None:
            return max_residual, 0.2 * max_residual
        if s_min > max_residual:
            raise ValueError(
                f"s_min={self.s_min!r} is above the start of OP-s, max_i |y_i - f(x_i)| = {max_residual:.6g} "
                f"of the LAD regression on this data (s runs down from there): pass s_min < "
                f"{max_residual:.6g}, or None for 0.2 x the start"
            )
        return max_residual, s_min

    def predict(self, X, at=None):
        """f(x) = Σ_j α_j K(x, x_j) at a point of the path.

        Parameters
        ----------
        X : array of shape (n_samples, n_features)
            In the namespace and on the device of the training data.
        at : float or None
            θ or s. RobustSVR: anywhere between the path's ends; between breakpoints the
            solution is linear in θ (constant in s), and at a discontinuity it is the
            solution after the jump, the one ``select`` can choose. CCCPRobustSVR: one of
            the grid values. None: the selected point (``param_``).

        Returns
        -------
        f : array of shape (n_samples,), float64
            In the namespace and on the device of X.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            Before ``fit``.
        ValueError
            If ``at`` is off the path (or not a grid value), or X has another number of
            features than in ``fit``, holds NaN or inf, or (fitted on a DataFrame) has other
            column names or another column order.
        TypeError
            X in another namespace or on another device than the training data, or ``at``
            not a real number (a string, a bool).
        """
        return self._values(X, at)

    def path_predict(self, X):
        """f(x) at every point of the path, in path order: column ``i`` is the model
        ``path_.alpha[i]`` (column 0: the LAD regression without bias where the path starts).

        Parameters
        ----------
        X : array of shape (n_samples, n_features)

        Returns
        -------
        F : array of shape (n_samples, n_points), float64
            In the namespace and on the device of X.

        Raises
        ------
        As :meth:`predict`.
        """
        return self._path_values(X)


class _OutlierPathEstimator(_RobustBase):
    @single_threaded_host_blas
    def fit(self, X, y):
        """Compute the outlier path on (X, y).

        Parameters
        ----------
        X : array of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Two class labels (RobustSVC) or real targets (RobustSVR).

        Returns
        -------
        self

        Raises
        ------
        ValueError
            For a bad parameter (naming it: C, ridge, path, s, s_max/s_min, fit_intercept),
            RobustSVR's ``s_min`` above the start of OP-s or a start that is round-off of the
            targets (the LAD regression fits every one: 1e-9 of their scale), or bad data (X
            not 2-D or with NaN or inf; y of another length, with NaN or inf, or not two
            classes for RobustSVC).
            Parameters are checked before anything is computed; a failed fit leaves the
            estimator as it was.
        PathError
            If the path cycles (degenerate data), also when followed again without the
            repair of its margins (a path that cycles only after that repair is followed
            without it), or a point of the path violates its optimality conditions by more
            than 1e-8 of their scale (:meth:`check_kkt`'s measure, taken at every point before
            the path is returned); the estimator is then unchanged.
        """
        start = time.perf_counter()

        def follow(params, problem, path, fitted):
            y_h = fitted["_y_host"]
            if params["path"] == "theta":
                return _outlier.op_theta(path, problem, y_h, params["s"], start)
            s_start, s_end = self._s_range(problem.start_s(to_host(path.z), y_h), params["s_end"], y_h)
            return _outlier.op_s(path, problem, y_h, s_start, s_end, start)

        record, fitted = self._followed(X, y, follow)
        return self._finish(fitted, record)


class RobustSVC(_RobustClassifier, _OutlierPathEstimator):
    """Robust (ramp-loss) SV classification along the outlier path (OP-θ or OP-s).

    The loss of eq. 5, ``ℓ(z) = [1 − z]_+`` for z ≥ s and ``1 − θz − s`` below, bridges the
    hinge SVM (θ = 1) and the ramp loss (θ = 0); ``path_.objective`` evaluates it as
    ``1 − θz − (1 − θ)s`` below s, continuous at z = s (equal to eq. 5 at s = 0 and at
    θ = 0). ``path="theta"`` traces θ from 1 to 0 at
    fixed ``s`` (OP-θ); ``path="s"`` traces s from min_i y_i f(x_i) of the ordinary SVM up to
    ``s_max`` at θ = 0 (OP-s). The path points are every breakpoint, and the two ends of
    each jump (the solution on the boundary y f = s, and the locally optimal one after the
    D-steps); ``select`` picks a locally optimal one by validation error.

    Parameters
    ----------
    C : float, default 1.0
    kernel : {"rbf", "linear", "poly"} (any case) or callable, default "rbf"
        A callable ``kernel(X, Z)`` returns the (n, m) block of kernel values in the
        namespace and on the device of X and Z (:class:`gpath.kernels.Kernel`); such a
        model pickles but cannot be saved in gpath's model format (TypeError).
    gamma, degree, coef0
        As in :class:`gpath.IncrementalSVC`.
    path : {"theta", "s"}, default "theta"
    s : float, default 0.0
        The fixed s of OP-θ (≤ 0).
    s_max : float, default 0.0
        Where OP-s stops (finite, ≤ 0). If no margin y_i f(x_i) of the ordinary SVM lies
        below s_max, that SVM is already the solution at s_max and the path is the single
        point s = s_max (no error: with the default s_max = 0 this happens on data the SVM
        separates).
    ridge : float, default 1e-6
        Relative to the kernel's scale: ``ridge · max_i k(x_i, x_i)`` is added to the kernel
        diagonal (``ridge_``; ridge itself for the RBF kernel without intercept, 2·ridge
        with it), which keeps Q_EE nonsingular with duplicate points at any scale of the
        features.
    fit_intercept : bool, default False
        Add 1 to the kernel: an intercept regularized like the weights (the paper has none).

    Attributes
    ----------
    path_ : OutlierPath
    param_ : float
        θ or s of the selected point (the end of the path until ``select`` is called).
    alpha_ : ndarray of shape (n_samples,)
        α at the end of the path.
    ridge_ : float
        The constant added to the kernel diagonal: ``ridge · max_i k(x_i, x_i)``.
    classes_ : ndarray of shape (2,)
    feature_names_in_ : ndarray of shape (n_features_in_,), object
        Column names of the pandas DataFrame given to ``fit`` (only then); later inputs must
        have the same names in the same order, as in scikit-learn (all four robust
        estimators).

    References
    ----------
    S. Suzumura, K. Ogawa, M. Sugiyama, M. Karasuyama, I. Takeuchi. Homotopy continuation
    approaches for robust SV classification and regression, 2015 (sections 2.1, 3, 4,
    Appendix C); ICML 2014 ("Outlier path").
    """

    _classification = True

    def __init__(self, C=1.0, kernel="rbf", gamma="scale", degree=3, coef0=0.0, path="theta",
                 s=0.0, s_max=0.0, ridge=1e-6, fit_intercept=False):
        self.C, self.kernel, self.gamma, self.degree, self.coef0 = C, kernel, gamma, degree, coef0
        self.path, self.s, self.s_max, self.ridge, self.fit_intercept = path, s, s_max, ridge, fit_intercept

class RobustSVR(_RobustRegressor, _OutlierPathEstimator):
    """Robust LAD regression along the outlier path (OP-θ or OP-s).

    The loss of eq. 9, ``|r|`` for |r| < s and ``(|r| − s)θ + s`` beyond, on residuals
    r = y − f(x). ``path="theta"`` traces θ from 1 to 0 at fixed ``s`` (> 0);
    ``path="s"`` traces s from max_i |r_i| of the ordinary LAD regression down to ``s_min``
    at θ = 0.

    Parameters
    ----------
    C : float, default 1.0
    kernel, gamma, degree, coef0
        As in :class:`RobustSVC`.
    path : {"theta", "s"}, default "theta"
    s : float, default 1.0
        The fixed s of OP-θ (> 0, in the units of y).
    s_min : float or None, default None
        Where OP-s stops (finite, > 0, at most the starting s = max_i |y_i − f(x_i)|; above
        it ``fit`` raises ValueError); None: 0.2 × the starting s (the paper's range,
        section 5.2).
    ridge : float, default 1e-6
        Relative to the kernel's scale, as in :class:`RobustSVC`.
    fit_intercept : bool, default False

    Attributes
    ----------
    path_ : OutlierPath
    param_ : float
    alpha_ : ndarray of shape (n_samples,)
    ridge_ : float
        The constant added to the kernel diagonal: ``ridge · max_i k(x_i, x_i)``.

    References
    ----------
    Suzumura et al. 2015, sections 2.2, 3.3 (Theorem 5), 4.
    """

    _classification = False

    def __init__(self, C=1.0, kernel="rbf", gamma="scale", degree=3, coef0=0.0, path="theta",
                 s=1.0, s_min=None, ridge=1e-6, fit_intercept=False):
        self.C, self.kernel, self.gamma, self.degree, self.coef0 = C, kernel, gamma, degree, coef0
        self.path, self.s, self.s_min, self.ridge, self.fit_intercept = path, s, s_min, ridge, fit_intercept

# ---------------------------------------------------------------------- CCCP
class _CCCPEstimator(_RobustBase):
    @single_threaded_host_blas
    def fit(self, X, y):
        """Run CCCP at every grid value, warm-started from the previous one.

        Each convex subproblem (the ramp loss with its concave part linearized at the current
        solution) is solved exactly by gpath's own path machinery; iterations stop when the
        linearization no longer changes (at most ``max_iter`` per grid value).

        Returns
        -------
        self

        Raises
        ------
        ValueError
            For a bad parameter (naming it; ``grid`` values not finite, out of the range of
            the path's parameter or not strictly monotone in its direction), ``s_min`` above
            the start of OP-s or a start that is round-off of the targets (an ``int`` grid of
            ``path="s"``), or bad data, as in :meth:`RobustSVC.fit`. A failed fit leaves
            the estimator as it was.
        PathError
            If CCCP does not settle within ``max_iter`` iterations at some grid value, or a
            grid point violates its optimality conditions by more than 1e-8 of their scale
            (:meth:`check_kkt`'s measure, taken at every point); the estimator is then
            unchanged.
        """
        start = time.perf_counter()

        def follow(params, problem, path, fitted):
            y_h = fitted["_y_host"]
            grid = params["grid"]
            if params["path"] == "theta":
                if isinstance(grid, int):
                    grid = np.linspace(1.0, 0.0, grid)
                theta_s = [(t, params["s"]) for t in grid]
            else:
                if isinstance(grid, int):
                    grid = np.linspace(*self._s_range(problem.start_s(to_host(path.z), y_h), params["s_end"], y_h), grid)
                theta_s = [(0.0, v) for v in grid]
            return _outlier.cccp(path, problem, y_h, params["path"], grid, theta_s, params["max_iter"], start)

        (record, n_iter), fitted = self._followed(X, y, follow)
        fitted["n_iter_"] = n_iter
        return self._finish(fitted, record)

    def _check_more(self, path) -> dict:
        return {"grid": self._check_grid(path), "max_iter": check_int(self.max_iter, "max_iter", 1)}

    def _check_grid(self, path):
        """The number of grid values (int >= 2), or the values themselves: finite, in the
        range of the path's parameter, and strictly monotone in the direction the path runs
        (θ from 1 down to 0; s of classification up to s_max, s of regression down to s_min),
        since each grid value is warm-started from the one before."""
        g = self.grid
        if isinstance(g, Integral) and not isinstance(g, bool):
            return check_int(g, "grid", 2)
        try:
            values = None if isinstance(g, (str, bytes, bool, np.bool_)) else host_values(g).astype(np.float64)
        except (TypeError, ValueError):
            values = None
        if values is None or values.ndim != 1 or values.size < 1:
            raise ValueError(f"grid must be an int >= 2 or a 1-D sequence of at least one value; got {g!r}")
        if not np.all(np.isfinite(values)):
            raise ValueError(f"grid must hold finite values; got {values.tolist()}")
        steps = np.diff(values)
        name = type(self).__name__
        if path == "theta":
            if np.any((values < 0) | (values > 1)):
                raise ValueError(f"grid values of the theta path must lie in [0, 1]; got {values.tolist()}")
            if np.any(steps >= 0):
                raise ValueError(f"grid values of the theta path must be strictly decreasing (theta runs from "
                                 f"1 to 0); got {values.tolist()}")
        elif self._classification:
            if np.any(values > 0):
                raise ValueError(f"grid values of the s path must be <= 0 for {name}; got {values.tolist()}")
            if np.any(steps <= 0):
                raise ValueError(f"grid values of the s path must be strictly increasing (s runs up to "
                                 f"s_max); got {values.tolist()}")
        else:
            if np.any(values <= 0):
                raise ValueError(f"grid values of the s path must be > 0 for {name}; got {values.tolist()}")
            if np.any(steps >= 0):
                raise ValueError(f"grid values of the s path must be strictly decreasing (s runs down to "
                                 f"s_min); got {values.tolist()}")
        return values

    def _alpha_at(self, at):
        if at is None:
            return self.path_.alpha[self.selected_index_]
        at = _checked_at(at)
        hit = np.flatnonzero(self.path_.params == at)
        if hit.size == 0:
            raise ValueError(f"at must be one of the grid values {self.path_.params.tolist()}; got {at!r}")
        return self.path_.alpha[hit[-1]]


class CCCPRobustSVC(_RobustClassifier, _CCCPEstimator):
    """The CCCP baseline for robust SVC (the paper's comparison, section 5).

    The concave-convex procedure (Yuille & Rangarajan 2002; Collobert et al. 2006 for the
    ramp loss) at each value of a grid of θ (``path="theta"``, s fixed) or of s
    (``path="s"``, θ = 0, from min_i y_i f(x_i) of the SVM up to ``s_max``), warm-started.

    Parameters
    ----------
    C, kernel, gamma, degree, coef0, s, s_max, ridge, fit_intercept
        As in :class:`RobustSVC`.
    path : {"theta", "s"}, default "theta"
    grid : int or sequence of float, default 5
        Number of evenly spaced grid values (≥ 2; the paper uses 5) from the start of the
        path to its end, or the values themselves: finite, θ in [0, 1] strictly decreasing
        (``path="theta"``), s ≤ 0 strictly increasing (``path="s"``), in the order CCCP
        visits them (each is warm-started from the one before).
    max_iter : int, default 100
        CCCP iterations per grid value (≥ 1).

    Attributes
    ----------
    path_ : OutlierPath
        One point per grid value (``discontinuous`` all False).
    n_iter_ : list of int
        CCCP iterations at each grid value: linearizations computed, the last one the fixed
        point's own (so at least 1; a grid value whose warm start is already a fixed point
        counts 1).
    """

    _classification = True

    def __init__(self, C=1.0, kernel="rbf", gamma="scale", degree=3, coef0=0.0, path="theta",
                 s=0.0, s_max=0.0, grid=5, max_iter=100, ridge=1e-6, fit_intercept=False):
        self.C, self.kernel, self.gamma, self.degree, self.coef0 = C, kernel, gamma, degree, coef0
        self.path, self.s, self.s_max, self.grid, self.max_iter = path, s, s_max, grid, max_iter
        self.ridge, self.fit_intercept = ridge, fit_intercept


class CCCPRobustSVR(_RobustRegressor, _CCCPEstimator):
    """The CCCP baseline for robust LAD regression (section 5).

    Parameters
    ----------
    C, kernel, gamma, degree, coef0, s, s_min, ridge, fit_intercept
        As in :class:`RobustSVR`.
    path : {"theta", "s"}, default "theta"
    grid : int or sequence of float, default 5
        As in :class:`CCCPRobustSVC`, but s > 0 strictly decreasing for ``path="s"``.
    max_iter : int, default 100

    Attributes
    ----------
    path_ : OutlierPath
    n_iter_ : list of int
        As in :class:`CCCPRobustSVC`.
    """

    _classification = False

    def __init__(self, C=1.0, kernel="rbf", gamma="scale", degree=3, coef0=0.0, path="theta",
                 s=1.0, s_min=None, grid=5, max_iter=100, ridge=1e-6, fit_intercept=False):
        self.C, self.kernel, self.gamma, self.degree, self.coef0 = C, kernel, gamma, degree, coef0
        self.path, self.s, self.s_min, self.grid, self.max_iter = path, s, s_min, grid, max_iter
        self.ridge, self.fit_intercept = ridge, fit_intercept


def _checked_at(at) -> float:
    """``at`` as a float: a real number (θ or s), not a string or a bool.

    Raises
    ------
    TypeError
        Anything else (a string such as "0.5" was read as its number before).
    """
    if isinstance(at, bool) or not isinstance(at, Real | np.floating | np.integer):
        raise TypeError(f"at must be a real number (θ or s on the path) or None; got {type(at).__name__} {at!r}")
    return float(at)


def _theta_s(path: OutlierPath, params: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(θ, s)`` at the path's parameter values ``params``, arrays of their shape (the
    parameter the path does not move is its fixed one)."""
    fixed = np.full(params.shape, path.s if path.kind == "theta" else path.theta)
    return (params, fixed) if path.kind == "theta" else (fixed, params)


def _violations(kernel, X, y, ridge, classification, C, alphas, thetas, ss,
                block=2048) -> tuple[np.ndarray, np.ndarray]:
    """:meth:`_RobustBase.check_kkt`'s measure at several points of a path at once.

    Parameters
    ----------
    kernel : Kernel
    X : device array of shape (n, d)
    y : ndarray of shape (n,)
        Labels ±1 (classification) or targets.
    ridge, C : float
    classification : bool
    alphas : ndarray of shape (n_points, n)
    thetas, ss : ndarray of shape (n_points,)
        θ and s at each point.
    block : int
        Rows of kernel values at a time, against the points with α ≠ 0 at any of the points
        (one kernel pass and two matrix products for all of them).

    Returns
    -------
    violations : ndarray of shape (n_points,)
    z : ndarray of shape (n, n_points)
        The margins from scratch (z = y f + ridge·α, or f + ridge·α), a column per point.
    """
    xp, device = get_namespace_and_device(X)
    A = alphas.T
    W = A * y[:, None] if classification else A
    used = np.flatnonzero(np.any(W != 0, axis=1))
    F, size = kernel_products(kernel, X, xp.take(X, to_device(used, xp, device), axis=0),
                              to_device(np.ascontiguousarray(W[used]), xp, device), block)
    z = (y[:, None] if classification else 1.0) * F + ridge * A
    unit = 1.0 if classification else float(np.max(np.abs(y), initial=0.0)) + ss
    scale = np.max(size + ridge * np.abs(A), axis=0, initial=0.0) + unit
    scale = np.where(scale > 0, scale, 1.0)  # (regression: y, s and α all 0)
    problem = Classification(C) if classification else Regression(C)
    return _outlier.violation(z, A, problem.conditions(y[:, None], thetas[None, :], ss[None, :]), scale, C), z
