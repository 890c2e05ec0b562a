"""Streaming with river: an exact kernel SVC or ε-SVR on a sliding window, as river models.

:class:`SlidingWindowSVC` buffers the points river gives to ``learn_one``; every ``batch``
points, one multiple incremental decremental update (Karasuyama & Takeuchi 2009, section 3.2,
:class:`gpath.IncrementalSVC`) adds them and removes the oldest beyond ``window``, unless the
batch provably leaves the SVM as it is (safe screening, below). The model's decision function
is always that of the exact C-SVC of the window; :class:`SlidingWindowSVR` does the same for
ε-SVR (:class:`gpath.IncrementalSVR`). It needs river (``pip install 'gpath[river]'``).

Safe screening. A point added with α = 0 strictly beyond the margin (y f(x) > 1; for ε-SVR
strictly inside the tube, |y − f(x)| < ε) satisfies its KKT conditions without moving any
coefficient, and removing a point with α = 0 off the margin (set O) leaves every other
point's conditions as they were: the solution of the old points is the solution of the new
ones (Cauwenberghs & Poggio's first test of an incremental step). Where the margin set is not
empty, the bias is fixed by its equations and stays too (an empty one leaves b an interval,
whose middle the points move). A batch that passes takes no update: its points wait, with the
SVM's points that left the window, until the next batch that moves the SVM (one update then
adds and removes them all) or until ``svc_``/``svr_`` is read. A stream then pays for an update
only where its SVM may change.
"""

from __future__ import annotations

import math
from numbers import Real

import numpy as np

from ._array_api import get_namespace_and_device, to_device, to_host
from ._engine import decision_values
from ._extras import require
from ._multiclass import _binary_layout
from ._path import O, PathError
from ._validation import check_int
from .cache import CacheFullError
from .incremental import IncrementalSVC
from .kernels import Kernel
from .linalg import SingularMarginError
from .svr import IncrementalSVR, support_layout

__all__ = ["SlidingWindowSVC", "SlidingWindowSVR"]

base = require("river.base", "river", "gpath.river")


def _sort_key(name):
    """Column order of feature names of any (mixed) type: by type name, then repr."""
    return type(name).__name__, repr(name)


class _Window:
    """What the sliding-window models share: points as feature dicts (the window, oldest
    first, and the batch pending), their columns, and the device of the model's arrays."""

    @staticmethod
    def _value(value, key, name) -> float:
        """``name[key]``'s value as a float, checked: a real number, finite. Callers let a finite
        float through without the call (an isinstance check against the Real ABC: ~1 µs a value)."""
        if type(value) is not float:
            if not isinstance(value, Real):
                raise TypeError(f"{name}[{key!r}] must be a real number; got {type(value).__name__} {value!r} "
                                f"(encode categories first, e.g. river.preprocessing.OneHotEncoder)")
            try:
                value = float(value)
            except OverflowError:  # (an int beyond float64)
                raise ValueError(f"{name}[{key!r}] must be finite; got {type(value).__name__} beyond float64's "
                                 f"range") from None
        if not math.isfinite(value):
            raise ValueError(f"{name}[{key!r}] must be finite; got {value!r}")
        return value

    @classmethod
    def _vector_dict(cls, x, name) -> dict:
        """A copy of x with float values, checked (nothing else is kept of x)."""
        if not isinstance(x, dict):
            raise TypeError(f"{name} must be a dict of feature name -> number; got {type(x).__name__}")
        return {key: value if type(value) is float and math.isfinite(value) else cls._value(value, key, name)
                for key, value in x.items()}

    @staticmethod
    def _matrix(points, features) -> np.ndarray:
        """Host float64 rows of the points' feature dicts over ``features`` (missing: 0)."""
        X = np.zeros((len(points), len(features)))
        column = {f: j for j, f in enumerate(features)}
        for i, (p, _) in enumerate(points):  # (by the points' own keys: one-hot rows hold few)
            for key, value in p.items():
                j = column.get(key)
                if j is not None:
                    X[i, j] = value
        return X

    def _start(self) -> None:
        """No SVM and no point yet."""
        self._svm = None  # the SVM (svc_, svr_: read through _synced)
        self.features_ = []
        self.n_updates_ = self.n_refits_ = self.n_screened_ = 0
        self._window = []  # (feature dict, target) of the SVM's points, oldest first
        self._deferred = []  # the same for the points of the window that screening set aside
        self._pending = []  # the same for the points learned since the last full batch
        self._support_of = None  # (state, support vectors, coefficients, b) of _support

    def __getstate__(self):
        # (_support's arrays are the state's, rebuilt when next needed.)
        return {key: value for key, value in self.__dict__.items() if key != "_support_of"}

    def __setstate__(self, state):
        # A model pickled before screening kept its SVM as svc_/svr_ (now properties).
        for legacy in ("svc_", "svr_"):
            if legacy in state:
                state["_svm"] = state.pop(legacy)
        self.__dict__.update({"_deferred": [], "n_screened_": 0, **state, "_support_of": None})

    def _device(self, X):
        if self.like is None:
            return X
        xp, device = get_namespace_and_device(self.like)
        return to_device(X, xp, device)

    def _row(self, x):
        """x as one row over ``features_`` (unknown names ignored, missing ones 0)."""
        if not isinstance(x, dict):
            raise TypeError(f"x must be a dict of feature name -> number; got {type(x).__name__}")
        features = self.features_
        row = [x.get(f, 0.0) for f in features]
        for value in row:
            if type(value) is not float or not math.isfinite(value):
                # Checked in x's own order, as learn_one checks x, each named by x's key.
                columns = set(features)
                point = {k: self._value(v, k, "x") for k, v in x.items() if k in columns}
                row = [point.get(f, 0.0) for f in features]
                break
        return self._device(np.array([row]))

    def _decisions(self, model, rows) -> np.ndarray:
        """``f(x) = Σ_j coef_j K(x, x_j) + b`` of the window's model (``decision_function`` of a
        binary SVC, ``predict`` of an SVR) for k rows that :meth:`_matrix` or :meth:`_row`
        built, as a host array (k,): their kernel rows against the support vectors
        (:meth:`_support`), without the estimator's checks of X, which rows of the model's own
        features, finite by construction, pass (they were half the time of a prediction, which
        a stream makes for every point). On NumPy each row is one compiled pass over the support
        vectors (:func:`gpath._engine.decision_values`: 4.5 µs against 44 for the kernel block
        and its product, Phishing, window 300)."""
        support_vectors, coef, b = self._support(model)
        f = decision_values(model.kernel_, rows, support_vectors, coef, b)
        return f if f is not None else to_host(model.kernel_(rows, support_vectors) @ coef + b)

    def _support(self, model) -> tuple:
        """The model's support vectors, their coefficients (1-D) and b, as published. Where
        its update left them unpublished (:class:`gpath._base.PublishedOnRead`), on NumPy, they
        are read from the state (:meth:`_layout`): the same arrays, in the same order, without
        the rest of what publishing builds, once per state."""
        state = self._state(model)
        held = self._support_of
        if held is not None and held[0] is state:
            return held[1:]
        if "_unpublished" not in model.__dict__ or not isinstance(state.X, np.ndarray):
            return model.support_vectors_, model.dual_coef_[0, :], model.intercept_[0]
        rows, support, coef = self._layout(model, state)
        self._support_of = (state, np.take(rows, support, axis=0), coef, state.b)
        return self._support_of[1:]

    def _decision(self, model, row) -> float:
        """:meth:`_decisions` of the one row that :meth:`_row` built."""
        return float(self._decisions(model, row)[0])

    @property
    def n_pending_(self) -> int:
        return len(self._pending)

    def _screened(self, batch, targets) -> bool:
        """Whether taking in the full ``batch`` (host ``targets(points)``) leaves the SVM as it
        is (the module docstring's safe screening): a margin set that is not empty, every
        point of the SVM that the batch pushes out of the window at α = 0 in O, and every
        point of the batch strictly beyond the margin (:meth:`_beyond_margin`)."""
        model = self._svm
        if model is None or not {key for p, _ in batch for key in p} <= set(self.features_):
            return False
        state = self._state(model)
        gone = len(self._window) + len(self._deferred) + len(batch) - self.window
        rows = self._rows_per_point * max(gone, 0)
        # (The arrays' own any() and all(): cheaper than np.all of a comparison, for every point
        # a stream screens.)
        if (state.active.size == 0 or gone > len(self._window)
                or state.alpha[:rows].any() or (state.where[:rows] != O).any()):
            return False
        f = self._decisions(model, self._device(self._matrix(batch, self.features_)))
        return bool(self._beyond_margin(model, f, targets(batch)).all())

    def _take_batch(self, batch, targets, can_fit=True) -> None:
        """Take the full ``batch`` in: set it aside if it leaves the SVM as it is
        (:meth:`_screened`), else one update (or a fit from scratch) with every point set
        aside and the batch (:meth:`_slide`). Every attribute is set at the end, so a failure
        changes nothing (``update`` leaves its model as it was when it fails)."""
        if can_fit and self._screened(batch, targets):
            self._deferred = self._deferred + batch
            self.n_screened_ += 1
        else:
            self._catch_up(self._deferred + batch, targets, can_fit)
        self._pending = []

    def _catch_up(self, points, targets, can_fit=True) -> None:
        """The SVM moved onto the window after ``points`` (:meth:`_slide`), no point set aside."""
        model, features, keep, n_updates, n_refits = self._slide(self._svm if can_fit else None, points, targets,
                                                                 can_fit)
        self._svm, self.features_, self._window, self._deferred = model, features, keep, []
        self.n_updates_, self.n_refits_ = n_updates, n_refits

    def _synced(self):
        """The SVM holding exactly the window's points: the points set aside by screening
        taken in by one update (nothing moves), then the SVM (None without one)."""
        if self._deferred:
            self._catch_up(self._deferred, self._targets)
        return self._svm

    def _slide(self, model, pending, targets, can_fit=True):
        """The window after the batch ``pending``: its points, and ``model`` moved there by one
        multiple incremental decremental update, or fitted anew (``_estimator().fit``) where the
        update cannot go (no model, a feature not seen before: a new column for every point,
        or a numerical failure) and ``can_fit``. ``targets(points)`` gives the host targets.

        Returns ``(model, features, keep, n_updates, n_refits)``; nothing is set here, so a
        failure of the fit changes nothing (an update that fails leaves its model as it was).
        """
        points = self._window + pending
        keep = points[max(0, len(points) - self.window):]
        features, n_updates, n_refits = self.features_, self.n_updates_, self.n_refits_
        if model is not None and not {key for p, _ in pending for key in p} <= set(features):
            model = None
        if model is not None:
            added = pending[max(0, len(pending) - len(keep)):]
            try:
                self._update(model, self._device(self._matrix(added, features)), targets(added), len(points) - len(keep))
                n_updates += 1
            except (PathError, SingularMarginError, CacheFullError):
                model = None
        if model is None and can_fit:
            features = sorted({key for p, _ in keep for key in p}, key=_sort_key)
            model = self._estimator().fit(self._device(self._matrix(keep, features)), targets(keep))
            n_refits += 1
        return model, features, keep, n_updates, n_refits


class SlidingWindowSVC(_Window, base.Classifier):
    """Exact binary kernel SVC on a sliding window of a stream, for river.

    ``learn_one(x, y)`` buffers the point. Every ``batch`` points, one multiple incremental
    decremental update (:meth:`gpath.IncrementalSVC.update`) adds the buffered points and
    removes the oldest points beyond ``window``: the model is then the exact C-SVC (KKT
    conditions to float64 round-off) of the last ``window`` points learned up to the last
    full batch, as a fit from scratch would give. A batch that provably leaves the SVM as it
    is takes no update (safe screening, :mod:`gpath.river`): each of its points strictly
    beyond the margin, each point it pushes out of the window a non-support vector off the
    margin, and a margin set that is not empty. It waits for two classes: until the window
    holds both, and whenever it holds only one, there is no SVM and the model predicts the
    class frequencies of the points it has. It works inside ``river.compose.Pipeline`` (for
    example after ``river.preprocessing.StandardScaler``) and with
    ``river.evaluate.progressive_val_score``.

    Features: ``x`` is a dict of numbers (bools count as 0/1). The columns are the feature
    names seen in the window when the SVM is fitted from scratch, in a fixed order (by type
    name, then ``repr``), so the order of a dict's keys does not matter. A missing feature
    counts as 0. A feature name not seen before makes the next batch refit from scratch on
    the window with the new column (0 for the points that lacked it); at prediction time an
    unknown feature is ignored.

    Parameters
    ----------
    window : int, default 1000
        Most points in the model (>= 2).
    batch : int, default 30
        Points per update (1 <= batch <= window).
    C, kernel, gamma, degree, coef0, method, ridge, tol, cache_size
        As in :class:`gpath.IncrementalSVC` (``kernel`` a name in any case or a callable).
        ``gamma="scale"`` is resolved on the window of each fit from scratch and stays fixed
        for the updates after it.
    classes : tuple of two labels or None, default None
        The two labels of the stream, if known: ``classes[1]`` is the positive class, and
        ``predict_proba_one`` names both from the start (river's checks of binary classifiers
        expect ``(False, True)`` for boolean labels). None: the labels are learned from the
        stream, ordered by ``sorted`` where they compare (else in order of arrival).
    like : array or None, default None
        The model's arrays go to the namespace and device of ``like`` (``cupy.empty(0)``:
        the GPU); None: NumPy. river gives dicts, so each batch is copied there once.

    Attributes
    ----------
    svc_ : IncrementalSVC or None
        The SVM of the window (labels coded 0, 1 for ``classes_[0]``, ``classes_[1]``);
        None before two classes have been seen in the window. Reading it (or ``X_window_``,
        ``y_window_``) takes in the points that screening set aside: one update, in which
        nothing moves, counted in ``n_updates_`` (or, where it fails numerically, a fit from
        scratch; if that fails too, the read raises what ``learn_one`` raises and changes
        nothing).
    classes_ : list
        The labels seen (or ``classes``), at most two.
    features_ : list
        The feature names, in column order.
    X_window_ : ndarray of shape (n_window, n_features), float64
        The points of ``svc_`` in its training order (oldest first; host copy).
    y_window_ : ndarray of shape (n_window,)
        Their labels.
    n_pending_ : int
        Points learned since the last full batch (fewer than ``batch``).
    n_updates_, n_refits_ : int
        MID updates, and fits from scratch (the first, after a window with one class, after
        a new feature, or after an update that failed numerically).
    n_screened_ : int
        Batches taken in without an update (safe screening).

    Notes
    -----
    ``predict_one`` is the SVM's label, ``classes_[1]`` where the decision value f(x) > 0.
    ``predict_proba_one`` is the logistic of the decision value,
    ``P(classes_[1]) = 1 / (1 + exp(−f(x)))``: a monotone score (0.5 on the decision boundary,
    so its argmax is ``predict_one``), not a calibrated probability. Without an SVM both give
    the class frequencies of the points held (the window and the pending batch).

    References
    ----------
    M. Karasuyama and I. Takeuchi, "Multiple incremental decremental learning of support
    vector machines", NIPS 2009, sections 3.2 and 4.2 (the online time-series experiment).

    Examples
    --------
    >>> from river import compose, datasets, evaluate, metrics, preprocessing
    >>> from gpath.river import SlidingWindowSVC
    >>> model = compose.Pipeline(preprocessing.StandardScaler(),
    ...                          SlidingWindowSVC(window=300, batch=25, C=10.0))
    >>> evaluate.progressive_val_score(datasets.Phishing(), model, metrics.Accuracy())  # doctest: +SKIP
    Accuracy: 88.31%
    """

    def __init__(self, window=1000, batch=30, C=1.0, kernel="rbf", gamma="scale", degree=3, coef0=0.0,
                 method="auto", ridge=1e-6, tol=1e-9, cache_size=1024, classes=None, like=None):
        self.window = window
        self.batch = batch
        self.C = C
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.method = method
        self.ridge = ridge
        self.tol = tol
        self.cache_size = cache_size
        self.classes = classes
        self.like = like
        self._check_params()
        self.classes_ = [] if classes is None else list(classes)
        self._start()

    # ------------------------------------------------------------------ parameters
    def _check_params(self) -> None:
        """Every parameter, checked at construction (ValueError naming it)."""
        check_int(self.window, "window", 2)
        check_int(self.batch, "batch", 1)
        if self.batch > self.window:
            raise ValueError(f"batch must be at most window={self.window!r}; got {self.batch!r}")
        self._estimator()._check_params()
        Kernel.from_params(self.kernel, self.gamma, self.degree, self.coef0, np.zeros((1, 1)))
        if self.classes is not None:
            try:
                labels = list(self.classes)
                distinct = len(labels) == 2 and len(set(labels)) == 2
            except TypeError:  # not iterable, or unhashable labels
                distinct = False
            if not distinct:
                raise ValueError(f"classes must be two distinct hashable labels or None; got {self.classes!r}")
        if self.like is not None:
            get_namespace_and_device(self.like)

    @property
    def svc_(self) -> IncrementalSVC | None:
        return self._synced()

    def _targets(self, points) -> np.ndarray:
        return self._labels(points, self.classes_)

    _rows_per_point = 1  # the state's rows of one point

    @staticmethod
    def _state(model):
        return model.states_[0]

    @staticmethod
    def _beyond_margin(model, f, codes) -> np.ndarray:
        return np.where(codes == 1, f, -f) > 1.0

    @staticmethod
    def _layout(model, state) -> tuple:
        """The state's rows, its support vectors' rows among them and their coefficients, as
        the model publishes them (:meth:`_Window._support`)."""
        support, _, coef = _binary_layout(state.alpha, model._class_index)
        return state.X, support, coef

    @staticmethod
    def _update(model, X_add, codes, n_oldest) -> None:
        # The rows, codes and ids are the window's own: the update without the checks they pass.
        model._window_update(X_add, codes, n_oldest)

    def _estimator(self) -> IncrementalSVC:
        return IncrementalSVC(C=self.C, kernel=self.kernel, gamma=self.gamma, degree=self.degree,
                              coef0=self.coef0, method=self.method, ridge=self.ridge, tol=self.tol,
                              cache_size=self.cache_size)

    @classmethod
    def _unit_test_params(cls):
        yield {"window": 100, "batch": 10, "classes": (False, True)}

    # ------------------------------------------------------------------ learning
    def learn_one(self, x, y) -> None:
        """Buffer (x, y); every ``batch`` points, update the SVM (or fit it from scratch).

        Parameters
        ----------
        x : dict
            Feature name -> number.
        y : hashable
            The label: one of ``classes`` (if given), and at most two distinct labels over
            the stream.

        Raises
        ------
        TypeError
            ``x`` not a dict, a value that is not a real number, or an unhashable label.
        ValueError
            A non-finite value, a label not in ``classes``, or a third label.
        PathError, SingularMarginError, CacheFullError
            If both the update and a fit from scratch fail.

        A rejected or failed call changes nothing.
        """
        point = self._vector_dict(x, "x")
        classes = self._classes_with(y)
        pending = [*self._pending, (point, y)]
        if len(pending) < self.batch:
            self._pending, self.classes_ = pending, classes
        else:
            self._flush(pending, classes)

    def _classes_with(self, y) -> list:
        """``classes_`` once y is known (a new list when y is a new label), or an error."""
        try:
            hash(y)
        except TypeError:
            raise TypeError(f"y must be a hashable label; got {type(y).__name__}") from None
        if y is None or (isinstance(y, Real) and not math.isfinite(y)):
            raise ValueError(f"y must be a label; got {y!r}")
        if any(y == label for label in self.classes_):
            return self.classes_
        if self.classes is not None:
            raise ValueError(f"y={y!r} is not one of classes={tuple(self.classes)!r}")
        if len(self.classes_) == 2:
            raise ValueError(f"SlidingWindowSVC is a binary classifier; got a third label y={y!r} "
                             f"after {self.classes_!r}")
        labels = [*self.classes_, y]
        try:
            return sorted(labels)
        except TypeError:
            return labels

    def _labels(self, points, classes) -> np.ndarray:
        """Codes 0/1 of the points' labels (1: ``classes[1]``)."""
        return np.array([int(y == classes[1]) for _, y in points], dtype=np.int64)

    def _flush(self, pending, classes) -> None:
        """Take the full batch ``pending`` in (:meth:`_take_batch`); every attribute is set at
        the end, so a failure changes nothing."""
        points = self._window + self._deferred + pending
        recent = points[max(0, len(points) - self.window):]
        # At most two labels ever (_classes_with): both are in the window once one label
        # differs from the first (found within a few points, where a set of all took 15 µs).
        two_classes = any(y != recent[0][1] for _, y in recent)
        # One class in the window: no SVM until both are back.
        self._take_batch(pending, lambda pts: self._labels(pts, classes), can_fit=two_classes)
        self.classes_ = classes

    # ------------------------------------------------------------------ prediction
    def _prior(self) -> dict:
        """Class frequencies of the points held (uniform over ``classes`` before any)."""
        labels = [y for _, y in self._window + self._deferred + self._pending]
        if not labels:
            return {label: 1.0 / len(self.classes_) for label in self.classes_}
        return {label: sum(y == label for y in labels) / len(labels) for label in self.classes_}

    def predict_proba_one(self, x) -> dict:
        """Scores of both labels for x (see Notes).

        Parameters
        ----------
        x : dict
            Feature name -> number (unknown names are ignored, missing ones count as 0).

        Returns
        -------
        dict
            Label -> probability (summing to 1): the logistic of the decision value; without
            an SVM, the class frequencies of the points held (empty before the first label,
            unless ``classes`` is given).

        Raises
        ------
        TypeError, ValueError
            A feature of the model with a value that is not a finite real number.
        """
        if self._svm is None:
            return self._prior()
        f = self._decision(self._svm, self._row(x))
        # Stable for either sign; kept over scipy.special.expit, which rounds differently (a few
        # ulps) and gives 0 below f ≈ -709.8, where this gives the subnormal value.
        p1 = 1.0 / (1.0 + math.exp(-f)) if f >= 0 else math.exp(f) / (1.0 + math.exp(f))
        return {self.classes_[0]: 1.0 - p1, self.classes_[1]: p1}

    def predict_one(self, x):
        """The SVM's label for x: ``classes_[1]`` where f(x) > 0 (see Notes).

        Parameters
        ----------
        x : dict

        Returns
        -------
        label or None
            None before any label was learned (and no ``classes``).
        """
        if self._svm is None:
            prior = self._prior()
            return max(prior, key=prior.get) if prior else None
        return self.classes_[int(self._decision(self._svm, self._row(x)) > 0)]

    # ------------------------------------------------------------------ the window
    @property
    def X_window_(self) -> np.ndarray:
        """The SVM's points (oldest first), shape (n_window, n_features), host float64
        (no rows without an SVM)."""
        return self._matrix(self._window if self.svc_ is not None else [], self.features_)

    @property
    def y_window_(self) -> np.ndarray:
        """Their labels, shape (n_window,)."""
        labels = [y for _, y in self._window] if self.svc_ is not None else []
        out = np.empty(len(labels), dtype=object)
        out[:] = labels
        return out


class SlidingWindowSVR(_Window, base.Regressor):
    """Exact kernel ε-SVR on a sliding window of a stream, for river.

    ``learn_one(x, y)`` buffers the point. Every ``batch`` points, one multiple incremental
    decremental update (:meth:`gpath.IncrementalSVR.update`) adds the buffered points and
    removes the oldest points beyond ``window``: the model is then the exact ε-SVR (KKT
    conditions to float64 round-off) of the last ``window`` points learned up to the last full
    batch, as a fit from scratch would give. A batch that provably leaves the SVR as it is
    takes no update (safe screening, :mod:`gpath.river`): each of its points strictly inside
    the ε-tube, each point it pushes out of the window a non-support vector off the tube's
    edges, and a margin set that is not empty. It works inside ``river.compose.Pipeline`` (for
    example after ``river.preprocessing.StandardScaler``) and with
    ``river.evaluate.progressive_val_score``.

    Features are read as by :class:`SlidingWindowSVC`: a dict of numbers, columns in a fixed
    order, a missing feature 0, a new feature name a fit from scratch with the new column, an
    unknown one ignored at prediction time.

    Parameters
    ----------
    window : int, default 1000
        Most points in the model (>= 1).
    batch : int, default 30
        Points per update (1 <= batch <= window).
    C, epsilon, kernel, gamma, degree, coef0, method, ridge, tol, cache_size
        As in :class:`gpath.IncrementalSVR`. ``gamma="scale"`` is resolved on the window of
        each fit from scratch and stays fixed for the updates after it.
    like : array or None, default None
        The model's arrays go to the namespace and device of ``like``; None: NumPy.

    Attributes
    ----------
    svr_ : IncrementalSVR or None
        The SVR of the window; None before the first batch. Reading it (or ``X_window_``,
        ``y_window_``) takes in the points that screening set aside: one update, in which
        nothing moves, counted in ``n_updates_`` (or, where it fails numerically, a fit from
        scratch; if that fails too, the read raises what ``learn_one`` raises and changes
        nothing).
    features_ : list
        The feature names, in column order.
    X_window_ : ndarray of shape (n_window, n_features), float64
        The points of ``svr_`` (oldest first; host copy).
    y_window_ : ndarray of shape (n_window,), float64
        Their targets.
    n_pending_ : int
        Points learned since the last full batch (fewer than ``batch``).
    n_updates_, n_refits_ : int
        MID updates, and fits from scratch (the first, after a new feature, or after an
        update that failed numerically).
    n_screened_ : int
        Batches taken in without an update (safe screening).

    Notes
    -----
    Before the first batch, ``predict_one`` is the mean of the targets learned (0 before any).

    References
    ----------
    M. Karasuyama and I. Takeuchi, "Multiple incremental decremental learning of support
    vector machines", NIPS 2009, sections 3.2 and 4.2 (the online time-series experiment);
    J. Ma, J. Theiler and S. Perkins, "Accurate on-line support vector regression", Neural
    Computation 15(11), 2003.

    Examples
    --------
    >>> from river import compose, datasets, evaluate, metrics, preprocessing
    >>> from gpath.river import SlidingWindowSVR
    >>> model = compose.Pipeline(preprocessing.StandardScaler(),
    ...                          SlidingWindowSVR(window=300, batch=10, C=10.0, epsilon=0.1))
    >>> evaluate.progressive_val_score(datasets.WaterFlow(), model, metrics.MAE())  # doctest: +SKIP
    """

    def __init__(self, window=1000, batch=30, C=1.0, epsilon=0.1, kernel="rbf", gamma="scale", degree=3,
                 coef0=0.0, method="auto", ridge=1e-6, tol=1e-9, cache_size=1024, like=None):
        self.window = window
        self.batch = batch
        self.C = C
        self.epsilon = epsilon
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.method = method
        self.ridge = ridge
        self.tol = tol
        self.cache_size = cache_size
        self.like = like
        check_int(self.window, "window", 1)
        check_int(self.batch, "batch", 1)
        if self.batch > self.window:
            raise ValueError(f"batch must be at most window={self.window!r}; got {self.batch!r}")
        self._estimator()._check_params()
        Kernel.from_params(self.kernel, self.gamma, self.degree, self.coef0, np.zeros((1, 1)))
        if self.like is not None:
            get_namespace_and_device(self.like)
        self._start()

    @property
    def svr_(self) -> IncrementalSVR | None:
        return self._synced()

    @staticmethod
    def _targets(points) -> np.ndarray:
        return np.array([t for _, t in points], dtype=np.float64)

    _rows_per_point = 2  # a point's rows α and α* (gpath.svr)

    @staticmethod
    def _state(model):
        return model.state_

    @staticmethod
    def _beyond_margin(model, f, targets) -> np.ndarray:
        return np.abs(targets - f) < model.epsilon

    @staticmethod
    def _layout(model, state) -> tuple:
        """The state's points (each one row of its doubled rows), its support vectors among
        them and their β, as the model publishes them (:meth:`_Window._support`)."""
        support, coef = support_layout(state.alpha)
        return state.X[0::2, :], support, coef

    @staticmethod
    def _update(model, X_add, targets, n_oldest) -> None:
        # The rows, targets and ids are the window's own: the update without the checks they pass.
        model._window_update(X_add, targets, n_oldest)

    def _estimator(self) -> IncrementalSVR:
        return IncrementalSVR(C=self.C, epsilon=self.epsilon, kernel=self.kernel, gamma=self.gamma,
                              degree=self.degree, coef0=self.coef0, method=self.method, ridge=self.ridge,
                              tol=self.tol, cache_size=self.cache_size)

    @classmethod
    def _unit_test_params(cls):
        yield {"window": 100, "batch": 10}

    def learn_one(self, x, y) -> None:
        """Buffer (x, y); every ``batch`` points, update the SVR (or fit it from scratch).

        Parameters
        ----------
        x : dict
            Feature name -> number.
        y : float
            The target, a finite real number.

        Raises
        ------
        TypeError
            ``x`` not a dict, or a value or y that is not a real number.
        ValueError
            A non-finite value or y.
        PathError, SingularMarginError, CacheFullError
            If both the update and a fit from scratch fail.

        A rejected or failed call changes nothing.
        """
        point = self._vector_dict(x, "x")
        if not isinstance(y, Real) or isinstance(y, bool):
            raise TypeError(f"y must be a real number; got {type(y).__name__} {y!r}")
        if not math.isfinite(y):
            raise ValueError(f"y must be finite; got {y!r}")
        pending = [*self._pending, (point, float(y))]
        if len(pending) < self.batch:
            self._pending = pending
            return
        self._take_batch(pending, self._targets)

    def predict_one(self, x) -> float:
        """The SVR's f(x) (see Notes before the first batch).

        Parameters
        ----------
        x : dict
            Feature name -> number (unknown names are ignored, missing ones count as 0).

        Returns
        -------
        float

        Raises
        ------
        TypeError, ValueError
            A feature of the model with a value that is not a finite real number.
        """
        if self._svm is None:
            targets = [t for _, t in self._pending]
            return float(np.mean(targets)) if targets else 0.0
        return self._decision(self._svm, self._row(x))

    @property
    def X_window_(self) -> np.ndarray:
        """The SVR's points (oldest first), shape (n_window, n_features), host float64."""
        self._synced()
        return self._matrix(self._window, self.features_)

    @property
    def y_window_(self) -> np.ndarray:
        """Their targets, shape (n_window,)."""
        self._synced()
        return self._targets(self._window)
