"""SimpleSVC: an exact SVC trained by SimpleSVM (Vishwanathan, Smola & Murty 2003).

The estimator validates its input and publishes scikit-learn's attributes (one-vs-one for
more than two classes); the active-set iteration itself is :func:`gpath._simplesvm.simple_svm`.
"""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state

from ._array_api import get_namespace_and_device, to_device
from ._base import OneVsOneSVC, check_every_class_weighted, serialized
from ._multiclass import class_weights, pair_rows, pairs
from ._path import check_state
from ._platt import cv_decision_values, sigmoid_train
from ._simplesvm import INITS, LOSSES, LazyRandomState, NotSeparableError, SimpleStats, exact_state
from ._sparse import check_memory, is_sparse, pair_training_rows, take_rows, training_kernel
from ._validation import (
    check_choice,
    check_gram,
    check_int,
    check_labels,
    check_max_iter,
    check_positive,
    check_sample_weight,
    check_X,
    feature_names,
    is_precomputed,
)
from .kernels import KERNELS, PRECOMPUTED, Kernel

__all__ = ["NotSeparableError", "SimpleSVC", "SimpleStats"]


class SimpleSVC(OneVsOneSVC):
    """Exact SVC trained by SimpleSVM, the active-set method of Vishwanathan, Smola & Murty
    (2003); one-vs-one for more than two classes, as scikit-learn's ``SVC``.

    Solves ``min ½ αᵀHα − 1ᵀα`` s.t. ``0 ≤ α_i ≤ U_i``, ``yᵀα = 0`` exactly (to float64
    round-off), with ``H = Q`` and ``U_i = C_i`` for the hinge loss, ``H = Q + I/C`` and no
    upper bound for the squared hinge (the quadratic soft margin), and ``U = ∞`` for the hard
    margin (``C=numpy.inf``); ``Q_ij = y_i y_j K(x_i, x_j) + ridge·[i = j]`` and
    ``C_i = C · sample_weight_i · class_weight[y_i]`` (as ``SVC``). With the hinge loss and
    the same C and ridge it solves the same problem as :class:`gpath.IncrementalSVC`. k > 2
    classes give k(k−1)/2 such problems, one per pair of classes on the points of those two
    classes (one-against-one, Hsu & Lin 2002), combined by voting.

    The working set grows by one violating variable per iteration, and the equality-
    constrained problem on it is solved through a Cholesky factor of the shifted bordered matrix
    [[0, y_Wᵀ], [y_W, H_WW]] updated in O(|W|²) (:class:`gpath.linalg.BorderedFactor`, on the
    host in float64); the kernel columns of the working set are computed on the device of
    ``X`` and cached (:class:`gpath.cache.QColumnCache`); the margins y f are an n-vector on
    that device. The iteration is exact from any feasible start; by default (``init="auto"``,
    every namespace) it starts from an approximate SMO solution on the float32 kernel matrix,
    from which it needs a few iterations instead of thousands (:mod:`gpath._smo`); the
    paper's start (the closest pair, ``init="closest_pair"``) forms no n × n matrix.

    Parameters
    ----------
    C : float, default 1.0
        > 0; ``numpy.inf`` is the hard margin (with either loss).
    kernel : {"rbf", "linear", "poly", "sigmoid", "precomputed"} or callable, default "rbf"
        As in scikit-learn's SVC. ``"sigmoid"``, tanh(gamma ⟨x, z⟩ + coef0), is not positive
        semi-definite: its dual is not convex, and the model is a KKT point of it (a local
        solution, as LIBSVM's, exact to round-off; not always the one LIBSVM reaches), or
        ``fit`` raises PathError where the active-set iteration cycles. It needs the hinge
        loss and a finite C (ValueError otherwise: only the box bounds its dual). ``"precomputed"``:
        ``fit`` takes the n × n Gram matrix as X, ``predict`` and the others the m × n kernel
        values of their points against the training points (checked: a square X, m × n
        later); ``support_vectors_`` then hold the support vectors' Gram rows and their index
        (:mod:`gpath.kernels`), where SVC's are empty.
    gamma : float or {"scale", "auto"}, default "scale"
        As in scikit-learn's SVC.
    degree : int, default 3
    coef0 : float, default 0.0
    loss : {"hinge", "squared_hinge"}, default "hinge"
        "hinge": the C-SVC (linear soft margin); "squared_hinge": the quadratic soft margin
        of section 1.1, the hard margin on the kernel K + I/C.
    tol : float, default 1e-5
        The paper's stopping criterion (section 4.1): every point's contribution to the KKT
        gap, ``α_i max(y_i f_i − 1, 0) + (U_i − α_i) max(1 − y_i f_i, 0)`` (with U_i − α_i
        read as 1 where U_i = ∞), is at most ``tol``. SimpleSVM then finishes exactly: it goes
        on until no KKT violation exceeds 1e-10 in units of y f (or, on very large or
        ill-scaled problems, the round-off level of the margins), so the returned index sets
        are the exact ones and the solution of their system is exact; ``tol`` only makes a
        difference where tol/C < 1e-10.
    max_iter : int or None, default None
        Most iterations (blocks of variables added to the working set) of each pairwise
        problem, and of the SMO start's pair updates. A run stopped by it warns
        (``ConvergenceWarning``, "Solver terminated early", as ``SVC``) and returns the
        current, feasible but inexact, solution. None or -1 (``SVC``'s "no limit"): no limit
        but a guard against cycling at 20·(n + 50) iterations, which raises.
    init : {"auto", "smo", "closest_pair", "randomized"}, default "auto"
        Where SimpleSVM starts; the solution is the same exact one from every start.
        "closest_pair" and "randomized" are the paper's starting pairs of opposite-class
        points (section 3.1): the iterative search of Algorithm 2 (a few kernel columns), or
        the closest of 59 random pairs (177 kernel values). "smo": SMO's approximate solution
        (LIBSVM's algorithm and tolerance, 1e-3; beyond 8,192 points by blocks of 2,048) on
        the kernel matrix in float32, held in host memory (up to 4·n² bytes per pair of
        classes; by blocks only the rows of the points that enter a block are computed, in at
        most a quarter of the available memory, the least recently used rows giving way to
        new ones; its entries computed on X's device), whose sets are nearly the exact ones:
        SimpleSVM then finishes in a few iterations. It needs the hinge loss, a finite C and
        a built-in kernel (ValueError otherwise), and falls back to "closest_pair" where the
        matrix (by pairs) or 4,096 of its rows (by blocks) would take more than a quarter of
        the available memory, or float32 cannot hold the kernel (``fit_stats_.start`` says
        which start ran). "auto" (gpath's fastest
        exact trainer): "smo" where it applies (NumPy, CuPy or any array-API input; the
        finish stays on X's device), else "closest_pair". To reproduce the paper's
        experiments use ``init="closest_pair", block_size=1``.
    random_state : int, RandomState instance or None, default None
        Random start of the closest-pair search, or the random pairs, and the shuffling of
        the cross-validation folds of ``probability=True``. The solution does not depend on
        it (it is unique for ridge > 0); the iterations and the probabilities may.
    ridge : float, default 1e-6
        Added to the kernel diagonal (Q_ii includes it), as in :class:`IncrementalSVC`; the
        model is the exact solution for ``K + ridge·I`` on the training points, predictions
        use ``K``. 0 is allowed: duplicate points then make the working-set matrix singular,
        which SimpleSVM steps around.
    class_weight : dict, "balanced" or None, default None
        Multiplies C per class, as in ``SVC``: a dict label -> weight (> 0; 1 for the labels
        it does not name), or "balanced": ``n_samples / (n_classes · count(class))``. Needs
        the hinge loss and a finite C.
    decision_function_shape : {"ovr", "ovo"}, default "ovr"
        The shape of :meth:`decision_function` for more than two classes, as in ``SVC``.
    probability : bool, default False
        Fit Platt's sigmoids on 5-fold cross-validated decision values at ``fit``, as LIBSVM
        (5 more exact fits per pair of classes), for :meth:`predict_proba` and
        :meth:`predict_log_proba`.
    block_size : int or None, default None
        Most violators added to the working set per iteration (one per 16 points of the
        working set, up to ``block_size``), their kernel columns computed as one block (a
        matrix product): 1 is the paper's rule (section 2.1: the worst violator alone; its
        ``n_kernel_evaluations_`` are the paper's measure); None takes gpath's default, 16
        (fewer, larger iterations where the working set is large; see
        ``benchmarks/RESULTS.md``). The solution is the same exact one for every block size.
    break_ties : bool, default False
        As ``SVC``: with more than two classes and ``decision_function_shape="ovr"``,
        :meth:`predict` breaks ties of the votes by the "ovr" decision values (else the lowest
        class index wins).
    shrinking : bool, default True
        Accepted for ``SVC`` code; no effect (SimpleSVM refreshes every margin each
        iteration and ends only when the KKT conditions hold on all of them).
    cache_size : float, default 200
        Accepted for ``SVC`` code (MB); no effect: SimpleSVM keeps the kernel columns of its
        working set, all of which it needs (the factor's memory is checked instead, see
        ``MemoryError`` below).
    verbose : bool or int, default False
        Print one line per pair of classes at the end of its solve (iterations, support
        vectors, those at C, time), as LIBSVM's output of ``SVC(verbose=True)``.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The labels, sorted; for two classes ``classes_[1]`` is the positive one (decision
        > 0).
    support_ : ndarray of shape (n_SV,), int32
        Rows of the support vectors (α > 0 in some pair), grouped by class in the order of
        ``classes_``, in training order within a class (as ``SVC``).
    support_vectors_ : array of shape (n_SV, n_features)
        In the namespace and on the device of the training X.
    dual_coef_ : array of shape (n_classes − 1, n_SV)
        Two classes: ``y_i α_i`` of the support vectors (y = +1 for ``classes_[1]``). More:
        LIBSVM's layout: the coefficient of a support vector of class c in the pair (c, d)
        is in row d − 1 if c < d, in row d if c > d, positive for the first class of the
        pair.
    intercept_ : array of shape (n_classes·(n_classes − 1)/2,)
        The bias of each pair (signed like ``dual_coef_``).
    n_support_ : ndarray of shape (n_classes,), int32
        Support vectors per class, in the order of ``classes_``.
    alpha_ : ndarray of shape (n_samples,) for two classes, else
        (n_classes·(n_classes − 1)/2, n_samples), float64
        Dual coefficients of every training point (in each pair; 0 outside its classes).
    class_weight_ : ndarray of shape (n_classes,), float64
        The class weights used (1 without ``class_weight``).
    probA_, probB_ : ndarray of shape (n_classes·(n_classes − 1)/2,), float64
        Platt's sigmoid of each pair, ``P(first class | d) = 1 / (1 + exp(probA_ d + probB_))``
        (``probability=True`` only).
    coef_ : array of shape (n_classes·(n_classes − 1)/2, n_features)
        Linear kernel only: the weights of each pairwise hyperplane (``(1, n_features)`` for
        two classes).
    n_iter_ : ndarray of shape (n_classes·(n_classes − 1)/2,), int32
        Iterations of SimpleSVM (blocks of variables added to the working set) of each
        pair, as ``SVC.n_iter_``.
    fit_status_ : int
        0: every pair was solved exactly (a failure raises); 1: ``max_iter`` stopped some
        pair early (as ``SVC``).
    shape_fit_ : tuple of int
        ``(n_samples, n_features)`` of the training X.
    n_kernel_evaluations_ : int
        Kernel values computed during the training of the model (the paper's speed measure,
        section 4), summed over the pairs (the cross-validation fits of ``probability=True``
        not included).
    fit_stats_ : SimpleStats, or list of SimpleStats for more than two classes
        Iterations, bound steps, kernel evaluations, columns, starting pair, final working-set
        size and violation, and wall time (s) of each pair's SimpleSVM run.
    kernel_ : Kernel
        The kernel with ``gamma`` resolved.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,), object
        Column names of the pandas DataFrame given to ``fit`` (only then): later inputs
        must have the same names in the same order (ValueError), as in scikit-learn.

    References
    ----------
    S. V. N. Vishwanathan, A. J. Smola and M. N. Murty, "SimpleSVM", ICML 2003, sections 2–4.
    C.-W. Hsu and C.-J. Lin, "A comparison of methods for multiclass support vector
    machines", IEEE Trans. Neural Networks 13(2), 2002 (one-against-one). J. C. Platt (1999),
    H.-T. Lin, C.-J. Lin and R. C. Weng (2007): the probabilities (:mod:`gpath._platt`).
    """

    _FITTED_ATTRIBUTES = frozenset({
        "classes_", "class_weight_", "support_", "support_vectors_", "dual_coef_", "intercept_", "n_support_",
        "alpha_", "kernel_", "n_features_in_", "feature_names_in_", "n_iter_", "n_kernel_evaluations_",
        "fit_stats_", "probA_", "probB_", "_problem", "_weights", "fit_status_", "shape_fit_",
    })

    def __init__(self, C=1.0, kernel="rbf", gamma="scale", degree=3, coef0=0.0, loss="hinge",
                 tol=1e-5, max_iter=None, init="auto", random_state=None, ridge=1e-6,
                 class_weight=None, decision_function_shape="ovr", probability=False, block_size=None,
                 break_ties=False, shrinking=True, cache_size=200, verbose=False):
        self.C = C
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.loss = loss
        self.tol = tol
        self.max_iter = max_iter
        self.block_size = block_size
        self.init = init
        self.random_state = random_state
        self.ridge = ridge
        self.class_weight = class_weight
        self.decision_function_shape = decision_function_shape
        self.probability = probability
        self.break_ties = break_ties
        self.shrinking = shrinking
        self.cache_size = cache_size
        self.verbose = verbose

    @serialized
    def fit(self, X, y, sample_weight=None):
        """Train on (X, y).

        Parameters
        ----------
        X : array of shape (n_samples, n_features)
            Any array-API array (NumPy, CuPy, ...) or array-like; converted to float64. The
            model's arrays live in its namespace and on its device. Or a SciPy sparse matrix
            (any format; host): each pair of classes trained through its kernel matrix
            computed from its sparse rows (8 n_p² bytes for n_p points; :mod:`gpath._sparse`),
            with ``support_vectors_``, ``dual_coef_`` and ``coef_`` sparse as in ``SVC``.
        y : array-like of shape (n_samples,)
            Two or more distinct labels (numbers or strings).
        sample_weight : array-like of shape (n_samples,) or None
            Point i's box is ``C · sample_weight_i · class_weight_[y_i]``, as in ``SVC``. A
            point of weight ≤ 0 is kept but inert (α_i = 0; ``SVC`` drops it: the same
            model). Needs the hinge loss and a finite C.

        Returns
        -------
        self

        Raises
        ------
        ValueError
            A bad parameter (naming it), X not 2-D, empty, complex or with NaN or inf, y of
            another length or with fewer than two classes, ``sample_weight`` of another
            length, NaN or all ≤ 0, a class without a point of positive weight,
            weights with the squared hinge or C = inf, ``kernel="sigmoid"`` with either, or
            ``init="smo"`` with either or a callable kernel.
        NotSeparableError (a ValueError)
            Hard margin (``C=inf``, hinge) on data not separable in feature space.
        TypeError
            X not numeric, a DataFrame whose column names mix strings and other types, or
            sparse with ``kernel="precomputed"``.
        PathError
            ``max_iter=None`` and the iteration cycles (20·(n + 50) iterations) with a KKT
            violation above 1e-10 of the scale of y f (cycling within round-off of it, among
            copies of one point, ends there with the model), or it ends with a KKT violation
            above 1e-8; or the working-set matrix is singular in float64 though its diagonal
            term (ridge, plus 1/C for the squared hinge) makes it regular (features of 10⁹).
            The model is not returned then.
        MemoryError
            Sparse X whose pairs' kernel matrices (and their working copies) would take more
            than half the available memory; or the working set's factor (16·|W|² bytes on the
            host) would not fit in the available memory. Each message gives the sizes, the
            bytes and what to do; the estimator is unchanged.

        Warns
        -----
        ConvergenceWarning
            ``max_iter`` stopped the search before the exact solution.
        """
        name = type(self).__name__
        params = self._check_params()
        names = feature_names(X)
        X, xp, device = check_X(X, owner=name, accept_sparse=True)
        labels, classes = check_labels(y, X.shape[0], owner=name, multiclass=True)
        weights = check_sample_weight(sample_weight, X.shape[0], inert_negative=True)
        if is_precomputed(self.kernel):
            X = check_gram(X, name)
        kernel = Kernel.from_params(self.kernel, self.gamma, self.degree, self.coef0, X, svc=True)
        train_kernel = training_kernel(kernel, X)
        class_index = np.searchsorted(classes, labels)
        cw = class_weights(self.class_weight, classes, labels)
        weighted = weights is not None or self.class_weight is not None
        if kernel.kind == "sigmoid" and (params["loss"] != "hinge" or not np.isfinite(params["C"])):
            # Without the box the dual of an indefinite kernel need not be bounded below: there
            # may be no solution at all (the hard margin's, and the squared hinge's H = Q + I/C).
            raise ValueError(f"kernel='sigmoid' needs loss='hinge' and a finite C: the kernel is not positive "
                             f"semi-definite, and only the box 0 <= alpha <= C keeps its dual bounded; got "
                             f"loss={params['loss']!r}, C={params['C']!r}")
        if weighted and (params["loss"] != "hinge" or not np.isfinite(params["C"])):
            raise ValueError(f"sample_weight and class_weight need loss='hinge' and a finite C (they scale "
                             f"each point's box C); got loss={params['loss']!r}, C={params['C']!r}")
        if params["init"] == "smo" and (params["loss"] != "hinge" or not np.isfinite(params["C"])
                                        or train_kernel.kind not in (*KERNELS, PRECOMPUTED)):
            raise ValueError(f"init='smo' needs loss='hinge', a finite C and a 'linear', 'rbf', 'poly', "
                             f"'sigmoid' or 'precomputed' kernel; "
                             f"got loss={params['loss']!r}, C={params['C']!r}, kernel={self.kernel!r}")
        relative = cw[class_index] * (1.0 if weights is None else weights)
        check_every_class_weighted(relative, class_index, classes)
        rng = check_random_state(self.random_state)
        k = classes.shape[0]
        if is_sparse(X):
            check_memory([pair_rows(class_index, i, j, k).size for i, j in pairs(k)], params["probability"], name)
        problems, alphas, biases, all_stats = [], [], [], []
        for i, j in pairs(k):
            rows = pair_rows(class_index, i, j, k)
            X_p = pair_training_rows(X, None if k == 2 else rows, kernel, xp, device)
            y_p = np.where(class_index[rows] == j, 1.0, -1.0)
            alpha, b, stats, problem = self._solve_pair(X_p, y_p, train_kernel, params, rng,
                                                         relative[rows] if weighted else None)
            self._report(params, (classes[i], classes[j]), stats.n_iter, alpha, problem[0] * relative[rows],
                         stats.time)
            problems.append((X_p, y_p, relative[rows]))
            alphas.append(alpha)
            biases.append(b)
            all_stats.append(stats)
        probability = self._calibrate(problems, train_kernel, params, rng, weighted) if params["probability"] else {}
        attrs = self._fitted_attributes(
            class_index, alphas, biases, classes, kernel,
            lambda rows: take_rows(X, rows, xp, device), X.shape[1], relative, cw)
        attrs.update(n_iter_=np.array([s.n_iter for s in all_stats], dtype=np.int32),
                     fit_status_=int(not all(s.converged for s in all_stats)),
                     shape_fit_=(int(X.shape[0]), attrs["n_features_in_"]),
                     n_kernel_evaluations_=sum(s.n_kernel_evaluations for s in all_stats),
                     fit_stats_=all_stats[0] if k == 2 else all_stats, _problem=problem,
                     feature_names_in_=names, probA_=probability.get("A"), probB_=probability.get("B"))
        self._set_fitted(attrs)
        return self

    def _solve_pair(self, X, y_host, kernel, params, rng, weights):
        """α (host, every row), b, SimpleSVM's record and ``(box bound, diagonal)`` of one
        pairwise problem (``weights``: each row's box over C). Rows of weight 0 are inert
        (α = 0): SimpleSVM runs on the others, so that its start is a pair of points that can
        move."""
        xp, device = get_namespace_and_device(X)
        n = X.shape[0]
        used = None if weights is None or np.all(weights > 0) else np.flatnonzero(weights > 0)
        if used is not None:
            X, y_host, weights = xp.take(X, to_device(used, xp, device), axis=0), y_host[used], weights[used]
        state, stats = self._solve(X, to_device(y_host, xp, device), kernel, params, rng,
                                   None if weights is None or np.all(weights == 1.0) else weights)
        alpha = state.alpha
        if used is not None:
            alpha = np.zeros(n)
            alpha[used] = state.alpha
            stats = dataclasses.replace(stats, init_pair=tuple(int(used[p]) for p in stats.init_pair))
        return alpha, state.b, stats, (state.C, state.ridge)

    def _solve(self, X, y, kernel, params, rng, weights):
        """The exact solution of one pairwise problem (``weights``: each point's box over C)."""
        # One draw of rng whatever the start (SMO's takes none): the folds of probability=True,
        # drawn next, are then the same for every start and namespace.
        start_rng = LazyRandomState(rng.randint(np.iinfo(np.int32).max))
        state, stats = exact_state(
            X, y, kernel, params["C"], params["ridge"], loss=params["loss"], tol=params["tol"],
            max_iter=params["max_iter"], init=params["init"], random_state=start_rng, weights=weights,
            block_size=params["block_size"],
        )
        if not stats.converged:
            warnings.warn(
                # SVC's first sentence, word for word (SVC code matches it), then what is known here.
                f"Solver terminated early (max_iter={params['max_iter']}).  Consider pre-processing your data with "
                f"StandardScaler or MinMaxScaler. SimpleSVC stopped with a KKT violation of "
                f"{stats.max_violation:.3g} (units of y f); the solution is feasible but not exact: raise max_iter "
                f"or leave it None",
                ConvergenceWarning, stacklevel=3,
            )
        else:
            check_state(state, 1e-8, what="SimpleSVM")
        return state, stats

    def _calibrate(self, problems, kernel, params, rng, weighted) -> dict:
        """Platt's sigmoid of every pair ``(X, y ±1, box weights)`` on 5-fold cross-validated
        decision values."""
        A, B = [], []

        def solve(X_sub, y_sub, weights_sub, rows):
            return self._solve(X_sub, y_sub, kernel, params, rng, weights_sub if weighted else None)[0]

        for X_p, y_p, weights in problems:
            dec, first = cv_decision_values(X_p, y_p, weights, solve, kernel, rng)
            a, b = sigmoid_train(dec, first)
            A.append(a)
            B.append(b)
        return {"A": np.array(A), "B": np.array(B)}

    def _check_params(self) -> dict:
        return {
            "C": check_positive(self.C, "C", allow_inf=True),
            "ridge": check_positive(self.ridge, "ridge", allow_zero=True),
            "tol": check_positive(self.tol, "tol"),
            "loss": check_choice(self.loss, "loss", LOSSES),
            "init": check_choice(self.init, "init", INITS),
            "max_iter": check_max_iter(self.max_iter),
            "block_size": None if self.block_size is None else check_int(self.block_size, "block_size", 1),
            "cache_size": check_positive(self.cache_size, "cache_size"),
            **self._more_checked_params(),
        }

    def _kkt_problem(self) -> tuple[float, float]:
        return self._problem

    def _from_binary_layout_of_gpath_0_1(self) -> None:
        """The attributes of a binary model file of gpath 0.1 in today's layout."""
        from .persistence import fitted_attribute

        alpha = fitted_attribute(self, "alpha_", (None,))
        dual = fitted_attribute(self, "dual_coef_", (1, None))[0]
        self._weights = np.ones(alpha.shape[0])
        order = np.argsort(dual > 0, kind="stable")  # classes_[0] (y α < 0) first
        xp, device = get_namespace_and_device(self.support_vectors_)
        index = to_device(order, xp, device)
        self.support_ = np.asarray(self.support_)[order].astype(np.int32)
        self.support_vectors_ = xp.take(self.support_vectors_, index, axis=0)
        self.dual_coef_ = xp.take(self.dual_coef_, index, axis=1)

    def _check_loaded(self) -> None:
        from .persistence import ModelFileError

        problem = getattr(self, "_problem", None)
        if not (isinstance(problem, tuple) and len(problem) == 2
                and all(isinstance(v, (int, float)) and not np.isnan(v) and v >= 0 for v in problem)
                and problem[0] > 0):
            raise ModelFileError(f"the solved problem (box bound, diagonal) is not two numbers >= 0; got {problem!r}")
        # Files of gpath 0.1 (binary, no weights): every box is the bound, every class weight 1,
        # and the support vectors in training order (now grouped by class, as SVC's).
        if not hasattr(self, "_weights"):
            self._from_binary_layout_of_gpath_0_1()
        if not hasattr(self, "class_weight_"):
            self.class_weight_ = np.ones(np.asarray(getattr(self, "classes_", np.zeros(0))).shape[0])
        super()._check_loaded()
