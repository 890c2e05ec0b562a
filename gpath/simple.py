"""SimpleSVC: an exact binary SVC trained by SimpleSVM (Vishwanathan, Smola & Murty 2003).

The estimator validates its input and publishes scikit-learn's attributes; the active-set
iteration itself is :func:`gpath._simplesvm.simple_svm`.
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state

from ._base import BinarySVC
from ._simplesvm import INITS, LOSSES, NotSeparableError, SimpleStats, simple_svm
from ._validation import (
    check_choice,
    check_int,
    check_labels,
    check_positive,
    check_X,
    feature_names,
    signed_labels,
)
from .kernels import Kernel

__all__ = ["NotSeparableError", "SimpleSVC", "SimpleStats"]


class SimpleSVC(BinarySVC):
    """Exact binary SVC trained by SimpleSVM, the active-set method of Vishwanathan, Smola &
    Murty (2003).

    Solves ``min ½ αᵀHα − 1ᵀα`` s.t. ``0 ≤ α ≤ U``, ``yᵀα = 0`` exactly (to float64
    round-off), with ``H = Q`` and ``U = C`` for the hinge loss, ``H = Q + I/C`` and no upper
    bound for the squared hinge (the quadratic soft margin), and ``U = ∞`` for the hard margin
    (``C=numpy.inf``); ``Q_ij = y_i y_j K(x_i, x_j) + ridge·[i = j]``. With the hinge loss and
    the same C and ridge it solves the same problem as :class:`gpath.IncrementalSVC`.

    The working set grows by one violating variable per iteration, and the equality-
    constrained problem on it is solved through a Cholesky factor of the shifted bordered matrix
    [[0, y_Wᵀ], [y_W, H_WW]] updated in O(|W|²) (:class:`gpath.linalg.BorderedFactor`, on the
    host in float64); the kernel columns of the working set are computed on the device of
    ``X`` and cached (:class:`gpath.cache.QColumnCache`); the margins y f are an n-vector on
    that device. No n × n kernel matrix is ever formed.

    Parameters
    ----------
    C : float, default 1.0
        > 0; ``numpy.inf`` is the hard margin (with either loss).
    kernel : {"rbf", "linear", "poly"}, default "rbf"
    gamma : float or {"scale", "auto"}, default "scale"
        As in scikit-learn's SVC.
    degree : int, default 3
    coef0 : float, default 0.0
    loss : {"hinge", "squared_hinge"}, default "hinge"
        "hinge": the C-SVC (linear soft margin); "squared_hinge": the quadratic soft margin
        of section 1.1, the hard margin on the kernel K + I/C.
    tol : float, default 1e-5
        The paper's stopping criterion (section 4.1): every point's contribution to the KKT
        gap, ``α_i max(y_i f_i − 1, 0) + (U − α_i) max(1 − y_i f_i, 0)`` (with U − α_i read as
        1 where U = ∞), is at most ``tol``. SimpleSVM then finishes exactly: it goes on until
        no KKT violation exceeds 1e-10 in units of y f (or, on very large or ill-scaled
        problems, the round-off level of the margins), so the returned index sets are the
        exact ones and the solution of their system is exact; ``tol`` only makes a difference
        where tol/C < 1e-10.
    max_iter : int or None, default None
        Most iterations (variables added to the working set). A run stopped by it warns
        (``ConvergenceWarning``) and returns the current, feasible but inexact, solution.
        None: no limit but a guard against cycling at 20·(n + 50) iterations, which raises.
    init : {"closest_pair", "randomized"}, default "closest_pair"
        The starting pair of opposite-class points (section 3.1): "closest_pair" runs the
        iterative search of Algorithm 2 (a few kernel columns); "randomized" takes the
        closest of 59 random pairs (177 kernel values).
    random_state : int, RandomState instance or None, default None
        Random start of the closest-pair search, or the random pairs. The solution does not
        depend on it (it is unique for ridge > 0); the iterations may.
    ridge : float, default 1e-6
        Added to the kernel diagonal (Q_ii includes it), as in :class:`IncrementalSVC`; the
        model is the exact solution for ``K + ridge·I`` on the training points, predictions
        use ``K``. 0 is allowed: duplicate points then make the working-set matrix singular,
        which SimpleSVM steps around.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        The two labels; ``classes_[1]`` is the positive class (decision > 0).
    support_ : ndarray of shape (n_SV,), int
        Rows of the support vectors (α > 0).
    support_vectors_ : array of shape (n_SV, n_features)
        In the namespace and on the device of the training X.
    dual_coef_ : array of shape (1, n_SV)
        ``y_i α_i`` of the support vectors (y = ±1).
    intercept_ : array of shape (1,)
        The bias b.
    n_support_ : ndarray of shape (2,), int32
        Support vectors per class, in the order of ``classes_``.
    alpha_ : ndarray of shape (n_samples,), float64
        Dual coefficients of every training point.
    n_iter_ : int
        Iterations of SimpleSVM (variables added to the working set).
    n_kernel_evaluations_ : int
        Kernel values computed during ``fit`` (the paper's speed measure, section 4).
    fit_stats_ : SimpleStats
        Iterations, bound steps, kernel evaluations, columns, starting pair, final working-set
        size and violation, and wall time (s) of ``fit``.
    kernel_ : Kernel
        The kernel with ``gamma`` resolved.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,), object
        Column names of the pandas DataFrame given to ``fit`` (only then): later inputs
        must have the same names in the same order (ValueError), as in scikit-learn.

    References
    ----------
    S. V. N. Vishwanathan, A. J. Smola and M. N. Murty, "SimpleSVM", ICML 2003, sections 2–4.
    """

    def __init__(self, C=1.0, kernel="rbf", gamma="scale", degree=3, coef0=0.0, loss="hinge",
                 tol=1e-5, max_iter=None, init="closest_pair", random_state=None, ridge=1e-6):
        self.C = C
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.loss = loss
        self.tol = tol
        self.max_iter = max_iter
        self.init = init
        self.random_state = random_state
        self.ridge = ridge

    def fit(self, X, y):
        """Train on (X, y).

        Parameters
        ----------
        X : array of shape (n_samples, n_features)
            Any array-API array (NumPy, CuPy, ...) or array-like; converted to float64. The
            model's arrays live in its namespace and on its device.
        y : array-like of shape (n_samples,)
            Exactly two distinct labels.

        Returns
        -------
        self

        Raises
        ------
        ValueError
            A bad parameter (naming it), X not 2-D, empty, complex or with NaN or inf, y of
            another length or without exactly two classes.
        NotSeparableError (a ValueError)
            Hard margin (``C=inf``, hinge) on data not separable in feature space.
        TypeError
            X sparse or not numeric, or a DataFrame whose column names mix strings and
            other types.
        PathError
            ``max_iter=None`` and the iteration cycles (20·(n + 50) iterations).

        Warns
        -----
        ConvergenceWarning
            ``max_iter`` stopped the search before the exact solution.
        """
        name = type(self).__name__
        params = self._check_params()
        names = feature_names(X)
        X, xp, device = check_X(X, owner=name)
        labels, classes = check_labels(y, X.shape[0], owner=name)
        kernel = Kernel.from_params(self.kernel, self.gamma, self.degree, self.coef0, X)
        ys = signed_labels(labels, classes, xp, device)
        state, stats = simple_svm(
            X, ys, kernel, params["C"], params["ridge"], loss=params["loss"], tol=params["tol"],
            max_iter=params["max_iter"], init=params["init"],
            random_state=check_random_state(self.random_state),
        )
        if not stats.converged:
            warnings.warn(
                f"SimpleSVC stopped at max_iter={params['max_iter']} iterations with a KKT "
                f"violation of {stats.max_violation:.3g} (units of y f); the solution is feasible "
                f"but not exact: raise max_iter or leave it None",
                ConvergenceWarning, stacklevel=2,
            )
        attrs = self._fitted_attributes(X, state.y_host, state.alpha, state.b, classes, kernel)
        attrs.update(n_iter_=stats.n_iter, n_kernel_evaluations_=stats.n_kernel_evaluations,
                     fit_stats_=stats, _problem=(state.C, state.ridge), feature_names_in_=names)
        self._set_fitted(attrs)
        return self

    def _check_params(self) -> dict:
        max_iter = None if self.max_iter is None else check_int(self.max_iter, "max_iter", 1)
        return {
            "C": check_positive(self.C, "C", allow_inf=True),
            "ridge": check_positive(self.ridge, "ridge", allow_zero=True),
            "tol": check_positive(self.tol, "tol"),
            "loss": check_choice(self.loss, "loss", LOSSES),
            "init": check_choice(self.init, "init", INITS),
            "max_iter": max_iter,
        }

    def _kkt_problem(self) -> tuple[float, float]:
        return self._problem

    def _check_loaded(self) -> None:
        from .persistence import ModelFileError

        problem = getattr(self, "_problem", None)
        if not (isinstance(problem, tuple) and len(problem) == 2
                and all(isinstance(v, (int, float)) and not np.isnan(v) and v >= 0 for v in problem)
                and problem[0] > 0):
            raise ModelFileError(f"the solved problem (box bound, diagonal) is not two numbers >= 0; got {problem!r}")
        super()._check_loaded()
