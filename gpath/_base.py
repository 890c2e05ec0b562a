"""What gpath's exact binary SVCs share: the scikit-learn fitted attributes, prediction, and
the KKT check recomputed from scratch.

A subclass fits a dual solution α (host, float64) with bias b on training rows X (device) and
publishes it with :meth:`BinarySVC._fitted_attributes`; it says which problem α solves through
:meth:`BinarySVC._kkt_problem` (box bound and the constant on the Q diagonal) and where its
training data are through :meth:`BinarySVC._training_data`.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from . import persistence
from ._array_api import get_namespace_and_device, to_device, to_host
from ._validation import check_feature_names, check_labels, check_X
from .persistence import SaveMixin

__all__ = ["BinarySVC"]


class BinarySVC(SaveMixin, ClassifierMixin, BaseEstimator):
    """Base class of gpath's binary kernel SVCs (not public).

    Fitted attributes (scikit-learn's ``SVC`` names, set by :meth:`_fitted_attributes`):
    ``classes_``, ``kernel_``, ``n_features_in_``, ``alpha_``, ``support_``,
    ``support_vectors_``, ``dual_coef_``, ``intercept_``, ``n_support_``, and
    ``feature_names_in_`` where ``fit`` got a pandas DataFrame with string column names.
    """

    def _set_fitted(self, attrs: dict) -> None:
        """Set the fitted attributes all at once; ``feature_names_in_=None`` removes that
        attribute (a refit on data without column names), as scikit-learn does."""
        for key, value in attrs.items():
            if key == "feature_names_in_" and value is None:
                self.__dict__.pop(key, None)
            else:
                setattr(self, key, value)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    # ------------------------------------------------------------------ publishing
    @staticmethod
    def _fitted_attributes(X, y_host, alpha, b, classes, kernel) -> dict:
        """The scikit-learn attributes of the solution α, b on the training rows X.

        Parameters
        ----------
        X : device array of shape (n_samples, n_features), float64
        y_host : ndarray of shape (n_samples,), float64, entries ±1 (+1 is ``classes[1]``)
        alpha : ndarray of shape (n_samples,), float64
        b : float
        classes : ndarray of shape (2,)
        kernel : Kernel

        Returns
        -------
        dict
            Attribute name -> value; set them all at once (nothing is set here, so that a
            failure leaves the estimator as it was).
        """
        xp, device = get_namespace_and_device(X)
        support = np.flatnonzero(alpha > 0)
        sv_dev = to_device(support, xp, device)
        dual = to_device(y_host[support] * alpha[support], xp, device)
        pos = y_host[support] > 0
        return {
            "classes_": classes,
            "kernel_": kernel,
            "n_features_in_": int(X.shape[1]),
            "alpha_": alpha.copy(),
            "support_": support,
            "support_vectors_": xp.take(X, sv_dev, axis=0),
            "dual_coef_": xp.reshape(dual, (1, -1)),
            "intercept_": xp.asarray([float(b)], dtype=xp.float64, device=device),
            "n_support_": np.array([np.count_nonzero(~pos), np.count_nonzero(pos)], dtype=np.int32),
        }

    # ------------------------------------------------------------------ prediction
    def decision_function(self, X):
        """Signed distance to the separating surface: ``f(x) = Σ_j y_j α_j K(x, x_j) + b``.

        Parameters
        ----------
        X : array of shape (n_samples, n_features)
            In the model's namespace and on its device.

        Returns
        -------
        f : array of shape (n_samples,), float64
            Positive for ``classes_[1]``.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            Before ``fit``.
        ValueError
            X not 2-D, with another number of features than in ``fit``, with NaN or inf, or
            (fitted on a pandas DataFrame) with other column names or another column order
            than in ``fit``.
        TypeError
            X not numeric, or in another namespace or on another device than the model.

        Warns
        -----
        UserWarning
            X has column names and the model was fitted without, or the reverse (as
            scikit-learn).
        """
        check_is_fitted(self, "dual_coef_")
        check_feature_names(self, X)
        xp, device = get_namespace_and_device(self.support_vectors_)
        X, _, _ = check_X(X, "X", self.n_features_in_, xp, device, owner=type(self).__name__)
        return self.kernel_(X, self.support_vectors_) @ self.dual_coef_[0, :] + self.intercept_[0]

    def predict(self, X):
        """Class labels of X: ``classes_[1]`` where ``decision_function(X) > 0``.

        Parameters
        ----------
        X : array of shape (n_samples, n_features)

        Returns
        -------
        labels : ndarray of shape (n_samples,) (host NumPy; labels may be strings)

        Raises
        ------
        As :meth:`decision_function`.
        """
        f = self.decision_function(X)
        return self.classes_[(to_host(f) > 0).astype(int)]

    def score(self, X, y, sample_weight=None):
        """Mean accuracy of :meth:`predict` on (X, y).

        Parameters
        ----------
        X : array of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,) or None

        Returns
        -------
        accuracy : float
        """
        labels = to_host(y)
        return float(np.average(self.predict(X) == labels, weights=sample_weight))

    # ------------------------------------------------------------------ KKT check
    def check_kkt(self, X=None, y=None) -> float:
        """Largest KKT violation of the model, recomputed from scratch, relative to the scale
        of the problem.

        Recomputes every margin ``y_i f(x_i)`` from α with fresh kernel values (O(n·n_SV)
        kernel evaluations), adds the constant ``d`` on the diagonal of the solved problem's
        Q (``ridge``, plus 1/C for the quadratic soft margin), and returns the largest of:

        - the stationarity violations (``1 − y f`` where α < the box bound, ``y f − 1`` where
          α > 0) divided by ``1 + max_i Σ_j |Q_ij| α_j``: a margin y_i f(x_i) sums terms of
          that size, so its round-off grows with it (with C, and with the size of the
          features for a linear or polynomial kernel);
        - the feasibility violations of ``yᵀα = 0`` and of the box, divided by C (by
          max(1, max α) without an upper bound).

        A model exact to float64 round-off gives about 1e-15 … 1e-12 whatever C; every fit
        and update of gpath's estimators ends with the same rule on its maintained margins
        (and fails, leaving the model as it was, above its ``tol``).

        Parameters
        ----------
        X : array of shape (n_samples, n_features) or None
            The training inputs given to ``fit``, in the model's namespace and on its device
            (None where the model keeps them).
        y : array-like of shape (n_samples,) or None
            Their labels.

        Returns
        -------
        violation : float

        Raises
        ------
        ValueError
            If the training data are needed and not given, or do not match the model.
        """
        check_is_fitted(self, "dual_coef_")
        X, y_pm = self._training_data(X, y)
        yf, scale = self._margins_from_scratch(X, y_pm)
        return self._kkt_violation(yf, y_pm, scale)

    def _margins_from_scratch(self, X, y_pm, block=2048) -> tuple[np.ndarray, float]:
        """The margins ``y_i f(x_i) + d α_i`` of the training rows X from fresh kernel values,
        and the scale of the problem, ``max_i Σ_j |Q_ij| α_j`` (Q with d on its diagonal).

        Kernel blocks of ``block`` rows against the support vectors (O(n·n_SV) kernel
        evaluations, ``8·block·n_SV`` bytes at a time); one host copy per block.

        Returns
        -------
        yf : ndarray of shape (n_samples,), float64
        scale : float
        """
        xp, device = get_namespace_and_device(self.support_vectors_)
        _, diag = self._kkt_problem()
        alpha = self.alpha_
        alpha_sv = to_device(alpha[self.support_], xp, device)
        f, size = [], []
        n = X.shape[0]
        for lo in range(0, n, block):
            K = self.kernel_(X[lo : min(lo + block, n), :], self.support_vectors_)
            f.append(to_host(K @ self.dual_coef_[0, :] + self.intercept_[0]))
            size.append(to_host(xp.abs(K) @ alpha_sv))
        yf = y_pm * np.concatenate(f) + diag * alpha
        scale = float(np.max(np.concatenate(size) + diag * alpha, initial=0.0))
        return yf, scale

    def _kkt_violation(self, yf, y_pm, scale) -> float:
        """The largest KKT violation of α given the margins ``yf`` (diagonal term included) and
        the scale ``max_i Σ_j |Q_ij| α_j``: the one implementation behind :meth:`check_kkt` and
        the check of a loaded model (the rule is :meth:`check_kkt`'s)."""
        upper, _ = self._kkt_problem()
        alpha = self.alpha_
        g = yf - 1.0
        stat = max(np.max(np.where(alpha < upper, -g, -np.inf)), np.max(np.where(alpha > 0, g, -np.inf)))
        box = upper if np.isfinite(upper) else max(1.0, float(np.max(alpha)))
        over = float(np.max(alpha - upper)) if np.isfinite(upper) else 0.0
        feas = max(abs(float(y_pm @ alpha)), float(np.max(-alpha)), over) / box
        return float(max(stat / (1.0 + scale), feas, 0.0))

    def _check_loaded(self) -> None:
        """A loaded model's attributes fit together: shapes, support = {i: α_i > 0},
        dual_coef_ = ±α on the support, α in its box and ``Σ_i y_i α_i = 0`` to
        1.5e-8 · (1 + Σ α) (the training data are not in the file, so the other KKT
        conditions cannot be checked; :class:`IncrementalSVC` keeps them and checks them all).

        Raises
        ------
        gpath.persistence.ModelFileError
        """
        invalid, attr = persistence.ModelFileError, persistence.fitted_attribute
        if not isinstance(getattr(self, "n_features_in_", None), int) or self.n_features_in_ < 1:
            raise invalid(f"n_features_in_ must be an int >= 1; got {getattr(self, 'n_features_in_', None)!r}")
        persistence.check_kernel(getattr(self, "kernel_", None))
        classes = attr(self, "classes_", (2,), "biufU")
        if np.unique(classes).size != 2:
            raise invalid(f"classes_ must be two distinct labels; got {classes.tolist()}")
        alpha = attr(self, "alpha_", (None,))
        support = attr(self, "support_", (None,), "iu")
        n_sv = support.shape[0]
        attr(self, "support_vectors_", (n_sv, self.n_features_in_))
        dual = attr(self, "dual_coef_", (1, n_sv))[0]
        attr(self, "intercept_", (1,))
        upper, _ = self._kkt_problem()
        if not np.array_equal(support, np.flatnonzero(alpha > 0)):
            raise invalid("support_ must be the rows where alpha_ > 0")
        if np.any(alpha > upper):
            raise invalid(f"alpha_ must lie in [0, {upper:g}]; got max {alpha.max():g}")
        if not np.array_equal(np.abs(dual), alpha[support]):
            raise invalid("dual_coef_ must be +-alpha_ on the support vectors")
        if abs(float(dual.sum())) > 1.5e-8 * (1.0 + float(alpha.sum())):
            raise invalid(f"sum_i y_i alpha_i must be 0; got {float(dual.sum()):.3g}")
        counts = attr(self, "n_support_", (2,), "iu")
        if counts.tolist() != [int(np.count_nonzero(dual < 0)), int(np.count_nonzero(dual > 0))]:
            raise invalid(f"n_support_ {counts.tolist()} does not count the support vectors per class")

    def _kkt_problem(self) -> tuple[float, float]:
        """``(upper, d)``: the box bound on α (inf for none) and the constant on Q's diagonal."""
        raise NotImplementedError

    def _training_data(self, X, y):
        """The training rows (device) and their labels as host ±1, validated against the model."""
        name = type(self).__name__
        if X is None or y is None:
            raise ValueError(f"{name}.check_kkt needs the training data: pass the X and y given to fit")
        check_feature_names(self, X)
        xp, device = get_namespace_and_device(self.support_vectors_)
        X, _, _ = check_X(X, "X", self.n_features_in_, xp, device, owner=name)
        n = self.alpha_.shape[0]
        if X.shape[0] != n:
            raise ValueError(f"X must be the {n} training rows given to fit; got {X.shape[0]} rows")
        labels, _ = check_labels(y, n, "y", self.classes_, owner=name)
        return X, np.where(labels == self.classes_[1], 1.0, -1.0)
