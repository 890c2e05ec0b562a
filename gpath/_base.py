"""What gpath's exact kernel SVCs share: scikit-learn's one-vs-one attributes, prediction,
probabilities, and the KKT check recomputed from scratch.

A model of k classes is k(k−1)/2 exact binary C-SVCs, one per pair of classes
(:mod:`gpath._multiclass`); two classes are the single pair (0, 1). A subclass solves each
pair (α on the pair's rows, host float64, bias b; label +1 for the later class of the pair),
publishes the solutions with :meth:`OneVsOneSVC._fitted_attributes`, says which problem they
solve through :meth:`OneVsOneSVC._kkt_problem` and where its training data are through
:meth:`OneVsOneSVC._pair_training_data`.
"""

from __future__ import annotations

import contextlib
import functools
import operator
import threading
import weakref

import numpy as np
import scipy.sparse
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import NotFittedError
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from . import _sparse, persistence
from ._array_api import get_namespace_and_device, scalars, to_device, to_host
from ._multiclass import (
    ovo_layout,
    ovr_decision,
    pair_coefficients,
    pair_decisions,
    pair_rows,
    pair_sign,
    pairs,
    vote,
)
from ._path import PathError, kkt_violation
from ._platt import couple, sigmoid_predict
from ._validation import check_choice, check_labels, check_rows, is_precomputed
from .kernels import PRECOMPUTED, kernel_products, with_index
from .linalg import SingularMarginError
from .persistence import SaveMixin

__all__ = ["Locked", "MemoizedParams", "OneVsOneSVC", "PublishedOnRead", "check_every_class_weighted", "serialized"]

DECISION_SHAPES = ("ovr", "ovo")


_LOCKS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def serialized(method):
    """Run ``method`` holding the model's lock, so that a call from one thread never sees a
    model another thread is changing: a prediction during an update gets the model from
    before it or after it, never a mix (calls on one model run one at a time)."""

    @functools.wraps(method)
    def locked(self, *args, **kwargs):
        with self._lock():
            return method(self, *args, **kwargs)

    return locked


def update_or_refit(update, *args, **kwargs):
    """``update(*args, **kwargs)``, an estimator's update; where a path of it fails (an error
    marked by :func:`path_failed`), the same update with every changed pair refitted exactly,
    warm-started from its current solution (``refit=True``; ``last_update_.method`` then says
    "refit"), whose own failure is raised. The failed try left the model as it was. (A refit's
    or a fit's own error is raised at once: it would fail again.)"""
    try:
        return update(*args, **kwargs)
    except _PATH_FAILURES as error:
        if not getattr(error, "path_failed", False):
            raise
        return update(*args, refit=True, **kwargs)


# What a path can fail with where an exact fit of the same rows does not (each found by a
# randomized search): a PathError, degenerate cycling among duplicate points at a large C with
# a tiny ridge; a SingularMarginError, a margin set whose matrix is numerically singular (a
# linear kernel of large features: |M| = 5 in three features, Q_kk up to 1e7 against the ridge
# 1e-6), which the path cannot step through and SimpleSVM steps along (its null direction).
_PATH_FAILURES = (PathError, SingularMarginError)


@contextlib.contextmanager
def path_failed():
    """Mark a :class:`PathError` or :class:`SingularMarginError` raised within as a path's
    (:func:`update_or_refit`)."""
    try:
        yield
    except _PATH_FAILURES as error:
        error.path_failed = True
        raise


class Locked:
    """A model whose public methods run one at a time (:func:`serialized`)."""

    def _lock(self) -> threading.RLock:
        """The model's lock (:func:`serialized`), made on first use. Kept beside the model,
        not in it: it is no part of its state (pickles, copies and saved files hold none)."""
        return _LOCKS.setdefault(self, threading.RLock())


class PublishedOnRead(Locked):
    """A model whose update may leave the attributes of ``_PUBLISHED_ON_READ`` (its support
    vectors and coefficients: the layout of the state's α) to be built when first read. A
    stream predicts from the state (:mod:`gpath.river`) and would pay for them at every
    update for nothing: 20–25 µs of a window's 350 µs update (SVC). An update that leaves
    them sets ``_unpublished`` among its attributes (:meth:`_set_fitted`); :meth:`_publish`
    builds them from the state. Copies and pickles carry the mark and publish from their own
    state; a saved file holds them (the model publishes them first)."""

    _PUBLISHED_ON_READ: tuple[str, ...] = ()

    def __getattr__(self, name):
        # (Called only for a name not found the usual way.)
        if name in type(self)._PUBLISHED_ON_READ and self.__dict__.get("_unpublished"):
            with self._lock():  # (read under the lock too: an update in another thread holds it)
                self._published()
                return self.__dict__[name]
        # Python's own error, again: a property's (``coef_`` of a nonlinear kernel) or the
        # plain one's.
        return object.__getattribute__(self, name)

    def _published(self) -> None:
        """Publish what an update left unpublished, if anything. The caller holds the lock
        (a reader in another thread then waits for the update that left them, which held it)."""
        if self.__dict__.get("_unpublished"):
            self.__dict__.update(self._publish())
            del self.__dict__["_unpublished"]

    def _publish(self) -> dict:
        """The attributes of ``_PUBLISHED_ON_READ``, from the state."""
        raise NotImplementedError

    def _set_fitted(self, attrs: dict) -> None:
        """:meth:`SaveMixin._set_fitted`; ``attrs["_unpublished"]`` True: the attributes of
        ``_PUBLISHED_ON_READ`` are published when first read, until attributes that include
        them are set. The mark is set before they are dropped and dropped after they are set,
        so that a reader in another thread finds one or the other."""
        attrs = dict(attrs)
        if attrs.pop("_unpublished", False):
            self._unpublished = True
            attrs.update(dict.fromkeys(self._PUBLISHED_ON_READ))
            super()._set_fitted(attrs)
            return
        super()._set_fitted(attrs)
        if not attrs.keys().isdisjoint(self._PUBLISHED_ON_READ):  # (the mark goes once they are set)
            self.__dict__.pop("_unpublished", None)


class MemoizedParams:
    """Parameter checks that every update repeats, memoized. The checks are a pure function of
    the values of ``_CHECKED`` (and of their types: 1 == True), so the values the last
    successful fit or update checked return its result: ``_params_memo``, set with that call's
    other attributes (a rejected call changes nothing; a fit's memo serves its first update).
    Subclasses define ``_CHECKED`` and ``_checked_params``, the checks themselves."""

    _CHECKED: tuple[str, ...] = ()

    def _check_params(self) -> dict:
        memo = self.__dict__.get("_params_memo")
        if memo is not None:
            try:
                same = memo[0] == self._params_key()
            except (TypeError, ValueError):  # (a value that does not compare, e.g. in an array)
                same = False
            if same:
                return dict(memo[1])
        return self._checked_params()

    def _params_key(self) -> tuple:
        """The checked parameters' (type, value) pairs (one attribute getter: a stream's update
        took 6 µs for them, one name at a time)."""
        if not self._CHECKED:
            return ()
        values = _getter(self._CHECKED)(self)
        values = values if len(self._CHECKED) > 1 else (values,)
        return tuple(zip(map(type, values), values))

    def _memo_of(self, params: dict) -> dict:
        """The attribute that memoizes ``params`` for the next update, to set with the update's
        others; none where the memo that served this update's check holds them already, or
        where a checked value cannot be kept as a key (unhashable)."""
        memo = self.__dict__.get("_params_memo")
        if memo is not None and memo[1] == params:
            return {}
        key = self._params_key()
        try:
            hash(key)
        except TypeError:
            return {}
        return {"_params_memo": (key, dict(params))}


@functools.cache
def _getter(names: tuple[str, ...]):
    return operator.attrgetter(*names)


class OneVsOneSVC(Locked, SaveMixin, ClassifierMixin, BaseEstimator):
    """Base class of gpath's kernel SVCs (not public).

    Fitted attributes (scikit-learn's ``SVC`` names and shapes, set by
    :meth:`_fitted_attributes`): ``classes_``, ``kernel_``, ``n_features_in_``, ``alpha_``,
    ``support_``, ``support_vectors_``, ``dual_coef_``, ``intercept_``, ``n_support_``,
    ``class_weight_``, ``probA_`` and ``probB_`` (``probability=True``), and
    ``feature_names_in_`` where ``fit`` got a pandas DataFrame with string column names;
    the private ``_weights`` holds each training point's box over C, ``C_i / C``.
    """

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # A precomputed kernel's X is a Gram matrix: scikit-learn's splitters cut its columns too.
        tags.input_tags.pairwise = is_precomputed(self.kernel)
        tags.input_tags.sparse = not is_precomputed(self.kernel)  # SciPy sparse rows (gpath._sparse)
        return tags

    def _more_checked_params(self) -> dict:
        """The parameters every gpath SVC shares with ``SVC``, checked (every fit):
        ``decision_function_shape``, ``probability``, ``break_ties``, ``verbose`` and
        ``shrinking`` (accepted for ``SVC`` code, without effect on an exact solver)."""
        from ._validation import check_bool

        verbose = self.verbose
        if not isinstance(verbose, (bool, np.bool_, int, np.integer)):
            raise ValueError(f"verbose must be a bool or an int; got {verbose!r}")
        return {
            "decision_function_shape": check_choice(self.decision_function_shape, "decision_function_shape",
                                                    DECISION_SHAPES),
            "probability": check_bool(self.probability, "probability"),
            "break_ties": check_bool(self.break_ties, "break_ties"),
            "shrinking": check_bool(self.shrinking, "shrinking"),
            "verbose": bool(verbose),
        }

    def _report(self, params: dict, pair: tuple, n_iter: int, alpha: np.ndarray, upper: np.ndarray,
                seconds: float) -> None:
        """With ``verbose``, one line per pair of classes on stdout (as LIBSVM's
        "optimization finished" lines): iterations, support vectors, those at their bound."""
        if params["verbose"]:
            n_sv = int(np.count_nonzero(alpha > 0))
            n_bsv = int(np.count_nonzero((alpha > 0) & (alpha >= upper)))
            print(f"{type(self).__name__}: classes {pair[0]} and {pair[1]}: exact solution after {n_iter} iterations, "
                  f"{n_sv} support vectors ({n_bsv} at C), {seconds:.3f} s", flush=True)

    # ------------------------------------------------------------------ publishing
    @staticmethod
    def _fitted_attributes(class_index, pair_alpha, pair_b, classes, kernel, take_rows, n_features,
                           weights, class_weight) -> dict:
        """The scikit-learn attributes of the pairwise solutions.

        Parameters
        ----------
        class_index : ndarray of shape (n_samples,), int
            Class of each training row (index into ``classes``), in training order.
        pair_alpha : list of ndarray
            α of each pair (pair order of :func:`gpath._multiclass.pairs`) on its rows (the
            rows of its two classes, in training order), host float64.
        pair_b : list of float
            The bias of each pair (label +1 for the later class of the pair).
        classes : ndarray of shape (n_classes,)
        kernel : Kernel
        take_rows : callable
            ``take_rows(rows)`` -> device array of the training rows ``rows`` (host ints).
        n_features : int
            Columns of the rows as the trainers hold them (``kernel="precomputed"``: n + 1,
            :func:`gpath.kernels.with_index`).
        weights : ndarray of shape (n_samples,), float64
            Each training point's box over C, ``sample_weight_i · class_weight[y_i]``
            (its box is ``C * weights_i``, computed so everywhere).
        class_weight : ndarray of shape (n_classes,), float64

        Returns
        -------
        dict
            Attribute name -> value; set them all at once (nothing is set here, so that a
            failure leaves the estimator as it was).
        """
        k = classes.shape[0]
        layout = ovo_layout(class_index, k, pair_alpha, pair_b)
        sv_rows = take_rows(layout["support_"])
        xp, device = get_namespace_and_device(sv_rows)
        sparse = _sparse.is_sparse(sv_rows)  # fitted on sparse rows: SVC's sparse attributes
        return {
            "classes_": classes,
            "kernel_": kernel,
            "n_features_in_": int(n_features) - (kernel.kind == PRECOMPUTED),  # less the index column
            "alpha_": layout["alpha_"],
            "support_": layout["support_"],
            "support_vectors_": _sparse.as_published(sv_rows) if sparse else sv_rows,
            "dual_coef_": (_sparse.as_published(layout["dual_coef"]) if sparse
                           else to_device(layout["dual_coef"], xp, device)),
            "intercept_": to_device(layout["intercept"], xp, device),
            "n_support_": layout["n_support_"],
            "class_weight_": np.asarray(class_weight, dtype=np.float64),
            "_weights": weights,
        }

    # ------------------------------------------------------------------ prediction
    def _checked_input(self, X):
        check_is_fitted(self, "dual_coef_")
        return self._as_rows(self._checked_rows(X), -1), get_namespace_and_device(self.support_vectors_)[0]

    def _checked_rows(self, X, name="X"):
        """X checked against the model: its column names, namespace, device and features; sparse rows for a
        model fitted on sparse rows (dense ones too), refused by one fitted on dense rows
        (scikit-learn's ``SVC`` rule and message)."""
        fitted_sparse = _sparse.is_sparse(self.support_vectors_)
        if _sparse.is_sparse(X) and not fitted_sparse:
            raise ValueError(f"cannot use sparse input in 'SVC' trained on dense data: this {type(self).__name__} "
                             f"was fitted on a dense X (as scikit-learn's SVC, it then takes dense rows only); "
                             f"pass {name}.toarray(), or fit on sparse rows")
        return check_rows(self, X, self.support_vectors_, name, accept_sparse=fitted_sparse)

    def _as_rows(self, X, first: int):
        """Checked input X as the model's rows: with a precomputed kernel, X's kernel values
        and the rows' indices among the training points (``first``; −1: not training points),
        :func:`gpath.kernels.with_index`; else X itself."""
        return with_index(X, first) if self.kernel_.kind == PRECOMPUTED else X

    def _ovo_decision(self, X, xp):
        """The published pairwise decision values of validated rows X: (n, k(k−1)/2)."""
        K = self.kernel_(X, self.support_vectors_)
        return pair_decisions(K, _sparse.dense(self.dual_coef_), self.n_support_, self.intercept_, len(self.classes_),
                              xp)

    @serialized
    def decision_function(self, X):
        """Decision values of X, as scikit-learn's ``SVC``.

        Two classes: the signed distance to the separating surface,
        ``f(x) = Σ_j y_j α_j K(x, x_j) + b``, positive for ``classes_[1]``. More classes: the
        k(k−1)/2 pairwise values (``decision_function_shape="ovo"``; column p for the p-th
        pair (i, j), i < j, in the order (0, 1), (0, 2), …, (1, 2), …, positive for class i),
        or (``"ovr"``) per class its votes plus its summed pairwise confidence mapped into
        (−1/3, 1/3), scikit-learn's ``_ovr_decision_function``.

        Parameters
        ----------
        X : array of shape (n_samples, n_features)
            In the model's namespace and on its device.

        Returns
        -------
        f : array of shape (n_samples,) for two classes, (n_samples, n_classes) for "ovr",
            (n_samples, n_classes·(n_classes−1)/2) for "ovo"; float64, in the model's
            namespace.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            Before ``fit``.
        ValueError
            X not 2-D, with another number of features than in ``fit``, with NaN or inf, or
            (fitted on a pandas DataFrame) with other column names or another column order
            than in ``fit``; ``decision_function_shape`` neither "ovr" nor "ovo".
        TypeError
            X not numeric, or in another namespace or on another device than the model.

        Warns
        -----
        UserWarning
            X has column names and the model was fitted without, or the reverse (as
            scikit-learn).

        References
        ----------
        Hsu & Lin (2002), section II.C (one-against-one).
        """
        X, xp = self._checked_input(X)
        k = len(self.classes_)
        if k == 2:
            return self.kernel_(X, self.support_vectors_) @ _sparse.dense(self.dual_coef_)[0, :] + self.intercept_[0]
        shape = check_choice(self.decision_function_shape, "decision_function_shape", DECISION_SHAPES)
        dec = self._ovo_decision(X, xp)
        return dec if shape == "ovo" else ovr_decision(dec, k, xp)

    @serialized
    def predict(self, X):
        """Class labels of X: for two classes ``classes_[1]`` where ``decision_function(X) >
        0``; for more, the class with the most pairwise votes (pair (i, j) votes for i where
        its "ovo" value is > 0, else for j; ties go to the lowest index, or with
        ``break_ties=True`` to the class of the largest "ovr" decision value), as ``SVC``.

        Parameters
        ----------
        X : array of shape (n_samples, n_features)

        Returns
        -------
        labels : ndarray of shape (n_samples,) (host NumPy; labels may be strings)

        Raises
        ------
        ValueError
            ``break_ties=True`` with ``decision_function_shape="ovo"`` (as ``SVC``); else as
            :meth:`decision_function`.

        References
        ----------
        Hsu & Lin (2002), section II.C ("Max Wins" voting).
        """
        break_ties = getattr(self, "break_ties", False)
        if break_ties and self.decision_function_shape == "ovo":
            raise ValueError("break_ties must be False when decision_function_shape is 'ovo'")
        X, xp = self._checked_input(X)
        k = len(self.classes_)
        dec = to_host(self._ovo_decision(X, xp))
        if k == 2:
            return self.classes_[(dec[:, 0] > 0).astype(int)]
        if break_ties:  # the most votes, ties broken by the summed confidence ("ovr" values)
            return self.classes_[np.argmax(ovr_decision(dec, k, np), axis=1)]
        return self.classes_[vote(dec, k)]

    def _check_proba(self):
        if not self.probability:
            raise AttributeError("predict_proba is not available when probability=False")
        return True

    @available_if(_check_proba)
    @serialized
    def predict_proba(self, X):
        """Class probabilities of X by Platt scaling, as LIBSVM (``probability=True``).

        Each pair (i, j)'s decision value d (positive for i) becomes
        ``r_ij = 1 / (1 + exp(probA_ d + probB_))``, clipped to [1e-7, 1 − 1e-7]; two classes
        give (r_01, 1 − r_01), more are coupled by the second method of Wu, Lin & Weng (2004),
        solved exactly (:mod:`gpath._platt`). The sigmoids were fitted on cross-validated
        decision values at ``fit`` or :meth:`calibrate`.

        Parameters
        ----------
        X : array of shape (n_samples, n_features)

        Returns
        -------
        proba : array of shape (n_samples, n_classes), float64
            Columns in the order of ``classes_``; rows sum to 1; in the model's namespace.

        Raises
        ------
        AttributeError
            ``probability=False``.
        sklearn.exceptions.NotFittedError
            Before ``fit``, or with ``probability`` set to True after a fit without it (call
            ``calibrate``).
        ValueError, TypeError
            As :meth:`decision_function`.

        References
        ----------
        Platt (1999); Lin, Lin & Weng (2007); Wu, Lin & Weng (2004), section 4.
        """
        X, xp = self._checked_input(X)
        if not hasattr(self, "probA_"):
            raise NotFittedError(f"predict_proba is not available when fitted with probability=False: this "
                                 f"{type(self).__name__} has no probability model; call calibrate() (or fit) with "
                                 "probability=True")
        k = len(self.classes_)
        _, device = get_namespace_and_device(X)
        dec = self._ovo_decision(X, xp)
        if k == 2:
            dec = -dec  # LIBSVM's binary value is positive for classes_[0]
        A, B = to_device(self.probA_, xp, device), to_device(self.probB_, xp, device)
        return couple(sigmoid_predict(dec, A, B, xp), k, xp)

    @available_if(_check_proba)
    @serialized
    def predict_log_proba(self, X):
        """Logarithm of :meth:`predict_proba`.

        Parameters
        ----------
        X : array of shape (n_samples, n_features)

        Returns
        -------
        log_proba : array of shape (n_samples, n_classes), float64

        Raises
        ------
        As :meth:`predict_proba`.
        """
        p = self.predict_proba(X)
        xp, _ = get_namespace_and_device(p)
        return xp.log(p)

    @property
    def coef_(self):
        """Weights of the linear kernel's pairwise separating hyperplanes, as ``SVC.coef_``.

        Returns
        -------
        coef : array of shape (1, n_features) for two classes, else
            (n_classes·(n_classes−1)/2, n_features): row p is ``Σ_s dual_coef · x_s`` over the
            support vectors of pair p, so that its "ovo" decision value is
            ``X @ coef_[p] + intercept_[p]``. In the model's namespace; read-only for NumPy
            (computed from the dual coefficients, a write would change nothing). Fitted on
            sparse rows: a CSR matrix of the type of ``support_vectors_``, as ``SVC``'s (a new
            one at every read).

        Raises
        ------
        AttributeError
            The kernel is not linear, or the model is not fitted.
        """
        check_is_fitted(self, "dual_coef_")
        if self.kernel_.kind != "linear" or self.kernel_.offset != 0.0:
            raise AttributeError("coef_ is only available when using a linear kernel")
        xp, device = get_namespace_and_device(self.support_vectors_)
        k = len(self.classes_)
        dual = _sparse.dense(self.dual_coef_)
        sparse = _sparse.is_sparse(self.support_vectors_)
        rows = []
        for p in range(k * (k - 1) // 2):
            sv, pair_coef = pair_coefficients(dual, self.n_support_, k, p, xp)
            SV = _sparse.take_rows(self.support_vectors_, sv, xp, device)
            # Fitted on sparse rows: a sparse row (1, d), as SVC's, never a dense one.
            rows.append(scipy.sparse.csr_matrix(pair_coef[None, :]) @ SV if sparse else pair_coef @ SV)
        if sparse:
            return _sparse.as_published(scipy.sparse.vstack(rows, format="csr"), like=self.support_vectors_)
        coef = xp.stack(rows, axis=0)
        if isinstance(coef, np.ndarray):
            # Computed from the dual: a write to it would change nothing, so it is refused (as SVC).
            coef.flags.writeable = False
        return coef

    @serialized
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
    @serialized
    def check_kkt(self, X=None, y=None) -> float:
        """Largest KKT violation of the model, recomputed from scratch, relative to the scale
        of the problem (the largest over the pairwise problems of a multiclass model).

        Recomputes every margin ``y_i f(x_i)`` of each pair from the published dual
        coefficients with fresh kernel values (O(n·n_SV) kernel evaluations), adds the
        constant ``d`` on the diagonal of the solved problem's Q (``ridge``, plus 1/C for the
        quadratic soft margin), and returns the largest of:

        - the stationarity violations (``1 − y f`` where α_i < C_i, ``y f − 1`` where
          α_i > 0; C_i is point i's box, C times its sample and class weights) divided by
          ``1 + max_i Σ_j |Q_ij| α_j``: a margin y_i f(x_i) sums terms of that size, so its
          round-off grows with it (with C, and with the size of the features for a linear or
          polynomial kernel);
        - the feasibility violations of ``yᵀα = 0`` and of the boxes, divided by C (by
          max(1, max α) without an upper bound).

        A model exact to float64 round-off gives about 1e-15 … 1e-12 whatever C. Every fit
        and update of gpath's estimators ends with the same rule and the same scale on its
        maintained margins (:meth:`gpath._path.SVCState.kkt_violation`; the margin set's share
        of the scale from its cached columns, the rest kept between calls), and fails, leaving
        the model as it was, above a limit (``IncrementalSVC``: its ``tol``; ``SimpleSVC``:
        1e-8).

        The conditions are those of the C-SVC dual, Karasuyama & Takeuchi (2009), section 2,
        eqs. 1a–1d.

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
        sklearn.exceptions.NotFittedError
            Before ``fit``.
        ValueError
            If the training data are needed and not given, or do not match the model (number
            of features, column names, labels, NaN or inf).
        TypeError
            X in another namespace or on another device than the model.
        """
        check_is_fitted(self, "dual_coef_")
        k = len(self.classes_)
        worst = 0.0
        for p, (X_p, y_pm, rows) in enumerate(self._pair_training_data(X, y)):
            alpha = self.alpha_[rows] if k == 2 else self.alpha_[p, rows]
            yf, scale = self._margins_from_scratch(p, X_p, y_pm, alpha)
            worst = max(worst, self._kkt_violation(yf, y_pm, alpha, self._boxes(rows), scale))
        return worst

    def _margins_from_scratch(self, p, X, y_pm, alpha, block=2048) -> tuple[np.ndarray, float]:
        """The margins ``y_i f(x_i) + d α_i`` of pair p's training rows X from fresh kernel
        values, and the scale of its problem, ``max_i Σ_j |Q_ij| α_j`` (Q with d on its
        diagonal).

        Kernel blocks of ``block`` rows against the pair's support vectors (O(n·n_SV)
        kernel evaluations, ``8·block·n_SV`` bytes at a time); one host copy per block.

        Returns
        -------
        yf : ndarray of shape (n_samples,), float64
        scale : float
        """
        xp, device = get_namespace_and_device(self.support_vectors_)
        _, diag = self._kkt_problem()
        k = len(self.classes_)
        sv, coef = pair_coefficients(_sparse.dense(self.dual_coef_), self.n_support_, k, p, xp)
        SV = _sparse.take_rows(self.support_vectors_, sv, xp, device)
        f, size = kernel_products(self.kernel_, X, SV, coef, block)
        b = float(scalars(xp, self.intercept_[p])[0])
        yf = y_pm * pair_sign(k) * (f + b) + diag * alpha
        scale = float(np.max(size + diag * alpha, initial=0.0))
        return yf, scale

    def _kkt_violation(self, yf, y_pm, alpha, upper, scale) -> float:
        """The largest KKT violation of α with boxes ``upper`` given the margins ``yf``
        (diagonal term included) and the scale ``max_i Σ_j |Q_ij| α_j``: the one
        implementation behind :meth:`check_kkt` and the check of a loaded model (the rule is
        :meth:`check_kkt`'s)."""
        C, _ = self._kkt_problem()
        box = C if np.isfinite(C) else max(1.0, float(np.max(alpha)))
        return kkt_violation(yf, y_pm, alpha, upper, scale, box)

    def _pair_training_data(self, X, y):
        """For each pair: its training rows X (device), their labels ±1 (host, +1 for the
        later class) and their row indices; from X and y given by the user, checked."""
        name = type(self).__name__
        if X is None or y is None:
            raise ValueError(f"{name}.check_kkt needs the training data: pass the X and y given to fit")
        xp, device = get_namespace_and_device(self.support_vectors_)
        X = self._checked_rows(X)
        n = self._weights.shape[0]
        if X.shape[0] != n:
            raise ValueError(f"X must be the {n} training rows given to fit; got {X.shape[0]} rows")
        X = self._as_rows(X, 0)
        labels, _ = check_labels(y, n, "y", self.classes_, owner=name, multiclass=True)
        class_index = np.searchsorted(self.classes_, labels)
        k = len(self.classes_)
        out = []
        for i, j in pairs(k):
            rows = pair_rows(class_index, i, j, k)
            X_p = X if k == 2 else _sparse.take_rows(X, rows, xp, device)
            out.append((X_p, np.where(class_index[rows] == j, 1.0, -1.0), rows))
        return out

    def _kkt_problem(self) -> tuple[float, float]:
        """``(C, d)``: the model's box bound C (inf for none) and the constant on Q's
        diagonal."""
        raise NotImplementedError

    def _boxes(self, rows) -> np.ndarray:
        """The boxes C_i = C · weights_i of the training rows ``rows`` (inf without a bound)."""
        C, _ = self._kkt_problem()
        w = self._weights[rows]
        return np.full(w.shape, np.inf) if not np.isfinite(C) else C * w

    # ------------------------------------------------------------------ loaded models
    def _check_loaded(self) -> None:
        """A loaded model's attributes fit together: shapes; support_ = the rows with α > 0
        in some pair, grouped by class; dual_coef_ = ±α on the support in LIBSVM's layout;
        α in its boxes and ``Σ_i y_i α_i = 0`` per pair to 1.5e-8 · (1 + Σ α) (the training
        data are not in the file, so the other KKT conditions cannot be checked;
        :class:`IncrementalSVC` keeps them and checks them all).

        Raises
        ------
        gpath.persistence.ModelFileError
        """
        invalid, attr = persistence.ModelFileError, persistence.fitted_attribute
        persistence.fitted_n_features(self)
        persistence.check_kernel(getattr(self, "kernel_", None), svc=True)
        classes = attr(self, "classes_", (None,), "biufUO")
        k = classes.shape[0]
        if k < 2 or np.unique(classes).size != k or not np.array_equal(np.sort(classes), classes):
            raise invalid(f"classes_ must be two or more distinct labels in increasing order; got {classes.tolist()[:5]}")
        n_pairs = k * (k - 1) // 2
        alpha = attr(self, "alpha_", (None,) if k == 2 else (n_pairs, None))
        alpha_pairs = alpha[None, :] if k == 2 else alpha
        n = alpha_pairs.shape[1]
        support = attr(self, "support_", (None,), "iu")
        n_sv = support.shape[0]
        sv = attr(self, "support_vectors_", (n_sv, self.n_features_in_ + (self.kernel_.kind == PRECOMPUTED)))
        if self.kernel_.kind == PRECOMPUTED and not np.array_equal(sv[:, -1], support):
            raise invalid("a precomputed kernel's support_vectors_ must end with each support vector's index "
                          "(support_)")
        dual = _sparse.dense(attr(self, "dual_coef_", (k - 1, n_sv)))
        attr(self, "intercept_", (n_pairs,))
        counts = attr(self, "n_support_", (k,), "iu")
        weights = np.asarray(getattr(self, "_weights", None), dtype=np.float64)
        if weights.shape != (n,) or not np.all(np.isfinite(weights)) or np.any(weights < 0):
            raise invalid(f"the box weights _weights must be {n} finite numbers >= 0; got shape {weights.shape}")
        upper = self._boxes(np.arange(n))
        class_weight = attr(self, "class_weight_", (k,))
        if np.any(class_weight <= 0):
            raise invalid(f"class_weight_ must be > 0; got {class_weight.tolist()}")
        if int(counts.sum()) != n_sv or np.any(counts < 0):
            raise invalid(f"n_support_ {counts.tolist()} does not count the {n_sv} support vectors per class")
        if np.any(alpha_pairs < 0) or np.any(alpha_pairs > upper[None, :]):
            raise invalid(f"alpha_ must lie in [0, C_i]; got values in [{alpha_pairs.min():g}, {alpha_pairs.max():g}] "
                          f"(largest box {upper.max(initial=0):g})")
        if not np.array_equal(np.sort(support), np.flatnonzero(np.any(alpha_pairs > 0, axis=0))):
            raise invalid("support_ must be the rows where alpha_ > 0")
        start = np.concatenate([[0], np.cumsum(counts)])
        sv_class = np.repeat(np.arange(k), counts)
        if any(np.any(np.diff(support[start[c] : start[c + 1]]) <= 0) for c in range(k)):
            raise invalid("support_ must list each class's support vectors in training order")
        sign = pair_sign(k)
        for p, (i, j) in enumerate(pairs(k)):
            a = alpha_pairs[p, support]
            if np.any(a[(sv_class != i) & (sv_class != j)] != 0):
                raise invalid(f"alpha_ of pair ({i}, {j}) must be 0 outside the classes {i} and {j}")
            coef = np.where(sv_class == i, dual[j - 1], dual[i])
            expected = np.where(sv_class == i, -sign * a, sign * a)
            mine = (sv_class == i) | (sv_class == j)
            if not np.array_equal(coef[mine], expected[mine]):
                raise invalid(f"dual_coef_ must be +-alpha_ of pair ({i}, {j}) on its support vectors")
            if abs(float(coef[mine].sum())) > 1.5e-8 * (1.0 + float(a.sum())):
                raise invalid(f"sum_i y_i alpha_i of pair ({i}, {j}) must be 0; got {float(coef[mine].sum()):.3g}")
        if hasattr(self, "probA_") or hasattr(self, "probB_"):
            attr(self, "probA_", (n_pairs,))
            attr(self, "probB_", (n_pairs,))


def check_every_class_weighted(weights, class_index, classes) -> None:
    """Every class needs a point with a positive box: without one, yᵀα = 0 forces α = 0 in
    each of its pairs, which then have no solution with two classes.

    Raises
    ------
    ValueError
    """
    positive = weights > 0
    # Every weight positive (the usual case, on every update): every class with a point.
    present = np.bincount(class_index if positive.all() else class_index[positive], minlength=classes.shape[0]) > 0
    if not np.all(present):
        same = ("Invalid input - all samples with positive weights belong to the same class "
                if np.count_nonzero(present) == 1 else "")
        raise ValueError(
            f"{same}(every point of class {classes[~present].tolist()[:5]} has weight <= 0; each class needs a "
            f"point of positive weight: weight-0 points are kept but inert)"
        )
