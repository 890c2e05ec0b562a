"""One-vs-one multiclass classification as LIBSVM and scikit-learn's ``SVC`` do it.

A model of k classes is k(k−1)/2 binary models, one per pair of classes i < j (pair order
(0, 1), (0, 2), …, (0, k−1), (1, 2), …), each trained on the points of its two classes. This
module holds what the estimators share about that layout, on the host:

- gpath's own binary convention inside each pair: label +1 for the later class j, −1 for i,
  so that the binary case is the pair (0, 1) with ``classes_[1]`` positive;
- scikit-learn's published layout (``SVC``): support vectors grouped by class, ``dual_coef_``
  of shape (k−1, n_SV), ``intercept_`` of shape (k(k−1)/2,), and the sign of each pairwise
  decision value — positive for the *first* class i when k > 2 (LIBSVM's), positive for
  ``classes_[1]`` when k = 2 (scikit-learn flips LIBSVM's binary sign);
- the vote of :meth:`predict` and the "ovr" decision values.

References
----------
C.-W. Hsu and C.-J. Lin, "A comparison of methods for multiclass support vector machines",
IEEE Transactions on Neural Networks 13(2), 2002, section II.C (one-against-one, the "Max
Wins" vote). C.-C. Chang and C.-J. Lin, "LIBSVM: a library for support vector machines",
ACM TIST 2(3), 2011, section 7 (the one-against-one layout of the model).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._array_api import get_namespace_and_device, to_device

__all__ = [
    "class_weights",
    "new_class_weight",
    "ovo_layout",
    "ovr_decision",
    "pair_index",
    "pair_sign",
    "pairs",
    "rows_from_pairs",
    "vote",
]


def pairs(k: int) -> list[tuple[int, int]]:
    """The class pairs (i, j), i < j, in LIBSVM's order."""
    return [(i, j) for i in range(k) for j in range(i + 1, k)]


def pair_rows(class_index: np.ndarray, i: int, j: int, k: int) -> np.ndarray:
    """Rows (training order, host int64) of the pair (i, j) of k classes, given each row's
    class index (n,): every row for two classes."""
    if k == 2:
        return np.arange(class_index.shape[0])
    return np.flatnonzero((class_index == i) | (class_index == j))


def pair_index(k: int, i: int, j: int) -> int:
    """Position of the pair (i, j), i < j, in :func:`pairs` (k)."""
    return i * k - i * (i + 1) // 2 + (j - i - 1)


def pair_sign(k: int) -> float:
    """Sign between gpath's pairwise decision (positive for the later class j) and the
    published one: +1 for two classes (positive for ``classes_[1]``, as ``SVC``), −1 for more
    (positive for the first class i, as ``SVC``'s "ovo" decision values)."""
    return 1.0 if k == 2 else -1.0


def ovo_layout(class_index: np.ndarray, k: int, pair_alpha: list[np.ndarray], pair_b: list[float]) -> dict:
    """scikit-learn's one-vs-one attributes of k(k−1)/2 pairwise solutions.

    Parameters
    ----------
    class_index : ndarray of shape (n_samples,), int
        Class of each training row (index into ``classes_``), in training order.
    k : int
        Number of classes, ≥ 2.
    pair_alpha : list of ndarray
        For each pair (i, j) in :func:`pairs` order, α of its rows: the rows of classes i and
        j in training order.
    pair_b : list of float
        The bias of each pair, in gpath's convention (label +1 for class j).

    Returns
    -------
    dict
        ``support_`` (n_SV,) int32: rows with α > 0 in some pair, grouped by class (class 0
        first), in training order within a class; ``n_support_`` (k,) int32;
        ``dual_coef`` (k−1, n_SV) float64 host: the coefficient of support vector s of class
        c in the pair (c, d) is in row d−1 if c < d and in row d if c > d (LIBSVM's layout),
        signed as the published decision values (:func:`pair_sign`); ``intercept`` (k(k−1)/2,)
        float64 host, signed likewise; ``alpha_`` (n_samples,) for k = 2, else
        (k(k−1)/2, n_samples) float64 (0 outside a pair's rows).
    """
    if k == 2:  # the binary layout directly, compiled (it is on the path of every update)
        alpha = pair_alpha[0]
        support, n_support, dual = _binary_layout(alpha, np.ascontiguousarray(class_index, dtype=np.int64))
        return {
            "support_": support,
            "n_support_": n_support,
            "dual_coef": dual[None, :],
            "intercept": np.array([float(pair_b[0])]),
            "alpha_": alpha.copy(),
        }
    n = class_index.shape[0]
    sign = pair_sign(k)
    n_pairs = k * (k - 1) // 2
    alpha_full = np.zeros((n_pairs, n))
    for p, (i, j) in enumerate(pairs(k)):
        alpha_full[p, pair_rows(class_index, i, j, k)] = pair_alpha[p]
    is_sv = np.any(alpha_full > 0, axis=0)
    support = np.concatenate([np.flatnonzero(is_sv & (class_index == c)) for c in range(k)]).astype(np.int32)
    sv_class = class_index[support]
    n_support = np.bincount(sv_class, minlength=k).astype(np.int32)
    dual = np.zeros((k - 1, support.shape[0]))
    for p, (i, j) in enumerate(pairs(k)):
        a = alpha_full[p, support]
        # gpath's y α: −α for class i, +α for class j; published with `sign`.
        on_i, on_j = sv_class == i, sv_class == j
        dual[j - 1, on_i] = -sign * a[on_i]
        dual[i, on_j] = sign * a[on_j]
    return {
        "support_": support,
        "n_support_": n_support,
        "dual_coef": dual,
        "intercept": sign * np.asarray(pair_b, dtype=np.float64),
        "alpha_": alpha_full,
    }


@njit(cache=True)
def _binary_layout(alpha, class_index):  # pragma: no cover - compiled
    """:func:`ovo_layout`'s ``support_``, ``n_support_`` and dual coefficients for two classes:
    the rows with α > 0 of class 0, then of class 1, in training order; y α signed +1 for
    class 1."""
    n_sv = n_neg = 0
    for i in range(alpha.shape[0]):
        if alpha[i] > 0:
            n_sv += 1
            n_neg += class_index[i] != 1
    support = np.empty(n_sv, dtype=np.int32)
    dual = np.empty(n_sv)
    at = np.array([0, n_neg])
    for i in range(alpha.shape[0]):
        if alpha[i] > 0:
            c = 1 if class_index[i] == 1 else 0
            support[at[c]] = i
            dual[at[c]] = alpha[i] if c else -alpha[i]
            at[c] += 1
    return support, np.array([n_neg, n_sv - n_neg], dtype=np.int32), dual


def pair_coefficients(dual_coef, n_support: np.ndarray, k: int, p: int, xp):
    """The support vectors and coefficients of pair p in the published layout.

    Returns
    -------
    sv : ndarray of shape (n_i + n_j,), int
        Positions in ``support_vectors_`` of the support vectors of the pair's classes.
    coef : array of shape (n_i + n_j,)
        Their coefficients in the pair (0 for a support vector of another pair only), in the
        namespace of ``dual_coef``.
    """
    i, j = pairs(k)[p]
    start = np.concatenate([[0], np.cumsum(n_support)])
    sv = np.concatenate([np.arange(start[i], start[i + 1]), np.arange(start[j], start[j + 1])])
    if k == 2:
        return sv, dual_coef[0, :]
    coef = xp.concat([dual_coef[j - 1, int(start[i]) : int(start[i + 1])],
                      dual_coef[i, int(start[j]) : int(start[j + 1])]])
    return sv, coef


def pair_decisions(K, dual_coef, n_support: np.ndarray, intercept, k: int, xp):
    """Published decision values of every pair from the kernel values ``K`` (n, n_SV) against
    ``support_vectors_``: array of shape (n, k(k−1)/2) in the namespace of K."""
    if k == 2:
        return xp.reshape(K @ dual_coef[0, :] + intercept[0], (-1, 1))
    start = np.concatenate([[0], np.cumsum(n_support)]).tolist()
    columns = []
    for p, (i, j) in enumerate(pairs(k)):
        f = (K[:, start[i] : start[i + 1]] @ dual_coef[j - 1, start[i] : start[i + 1]]
             + K[:, start[j] : start[j + 1]] @ dual_coef[i, start[j] : start[j + 1]])
        columns.append(f + intercept[p])
    return xp.stack(columns, axis=1)


def vote(dec: np.ndarray, k: int) -> np.ndarray:
    """LIBSVM's vote ("Max Wins", Hsu & Lin 2002): pair (i, j) votes for i where its
    published decision value is > 0, else for j; the class with the most votes wins, the
    lowest index among ties.

    Parameters
    ----------
    dec : ndarray of shape (n_samples, k(k−1)/2)
        Published decision values (k > 2: positive for the first class of the pair).

    Returns
    -------
    ndarray of shape (n_samples,), int
    """
    votes = np.zeros((dec.shape[0], k), dtype=np.int64)
    for p, (i, j) in enumerate(pairs(k)):
        wins = dec[:, p] > 0
        votes[:, i] += wins
        votes[:, j] += ~wins
    return np.argmax(votes, axis=1)


def ovr_decision(dec, k: int, xp):
    """``decision_function_shape="ovr"`` from the pairwise values, as scikit-learn's ``SVC``:
    ``sklearn.utils.multiclass._ovr_decision_function(dec < 0, -dec, k)`` — each class's votes
    plus its summed confidence mapped monotonically into (−1/3, 1/3) — in the namespace of
    ``dec``.

    Parameters
    ----------
    dec : array of shape (n_samples, k(k−1)/2)
        Published decision values (positive for the first class of the pair).

    Returns
    -------
    array of shape (n_samples, k), float64
    """
    n = dec.shape[0]
    zero = xp.zeros(n, dtype=dec.dtype, device=get_namespace_and_device(dec)[1])
    votes, confidence = [zero] * k, [zero] * k
    for p, (i, j) in enumerate(pairs(k)):
        d = dec[:, p]
        first = xp.astype(d >= 0, dec.dtype)
        votes[i] = votes[i] + first
        votes[j] = votes[j] + (1.0 - first)
        confidence[i] = confidence[i] + d
        confidence[j] = confidence[j] - d
    votes, confidence = xp.stack(votes, axis=1), xp.stack(confidence, axis=1)
    return votes + confidence / (3.0 * (xp.abs(confidence) + 1.0))


# ---------------------------------------------------------------------- class weights
def class_weights(class_weight, classes: np.ndarray, labels: np.ndarray, allow_unseen=False) -> np.ndarray:
    """``class_weight_`` as scikit-learn's ``SVC`` computes it (``compute_class_weight``).

    Parameters
    ----------
    class_weight : dict, "balanced" or None
        None: 1 for every class; a dict: label -> weight (1 for labels it does not name);
        "balanced": ``n_samples / (n_classes · count(class))``.
    classes : ndarray of shape (n_classes,)
    labels : ndarray of shape (n_samples,)
    allow_unseen : bool
        Whether a dict may name labels that are not classes (yet): an incremental model's
        classes may appear in later updates.

    Returns
    -------
    ndarray of shape (n_classes,), float64

    Raises
    ------
    ValueError
        class_weight neither None, "balanced" nor a dict; a dict naming labels that are
        not classes (unless ``allow_unseen``); a weight that is not a finite number > 0.
    """
    from sklearn.utils.class_weight import compute_class_weight

    if class_weight is None:  # (compute_class_weight's ones for the classes of the labels, without its 0.6 ms of checks)
        return np.ones(len(classes))
    if class_weight != "balanced" and not isinstance(class_weight, dict):
        raise ValueError(f"class_weight must be None, 'balanced' or a dict label -> weight; got {class_weight!r}")
    if isinstance(class_weight, dict):
        _check_weight_values(class_weight)
        unknown = [key for key in class_weight if not np.any(classes == key)]
        # A label of another kind than the classes ("1" for the class 1) can never become one.
        foreign = [key for key in unknown if isinstance(key, str) != (classes.dtype.kind in "OUS")]
        if foreign or (unknown and not allow_unseen):
            raise ValueError(f"class_weight names labels that are not classes: {unknown[:5]}; "
                             f"the classes are {classes.tolist()}")
        class_weight = {key: value for key, value in class_weight.items() if np.any(classes == key)}
    weights = compute_class_weight(class_weight, classes=classes, y=labels)
    return np.asarray(weights, dtype=np.float64)


def new_class_weight(class_weight, label, n_samples: int, n_classes: int, count: int) -> float:
    """The weight of a class that first appears in an update: the dict's value (1 where it
    does not name the label) or, for "balanced", ``n_samples / (n_classes · count)`` with the
    counts of the updated model; the weights of the other classes stay as fitted."""
    if class_weight is None:
        return 1.0
    if class_weight == "balanced":
        return n_samples / (n_classes * count)
    _check_weight_values(class_weight)
    return float(class_weight.get(label.item() if hasattr(label, "item") else label, 1.0))


def _check_weight_values(class_weight: dict) -> None:
    from numbers import Real

    bad = {key: value for key, value in class_weight.items()
           if not (isinstance(value, Real) and not isinstance(value, bool) and np.isfinite(value) and value > 0)}
    if bad:
        raise ValueError(f"class_weight values must be finite numbers > 0; got {bad}")


def rows_from_pairs(states, class_index, k, rows):
    """The training rows ``rows`` (host ints, any order) on the device, read from the pair
    states (the rows of class c from the pair (c, c + 1), of the last class from (0, c))."""
    xp, device = states[0].xp, states[0].device
    if k == 2:
        return xp.take(states[0].X, to_device(rows, xp, device), axis=0)
    order = np.argsort(class_index[rows], kind="stable")
    parts = []
    for c in range(k):
        wanted = rows[order][class_index[rows[order]] == c]
        if not wanted.size:
            continue
        i, j = (c, c + 1) if c + 1 < k else (0, c)
        p = pair_index(k, i, j)
        local = np.searchsorted(pair_rows(class_index, i, j, k), wanted)
        parts.append(xp.take(states[p].X, to_device(local, xp, device), axis=0))
    grouped = xp.concat(parts, axis=0)
    inverse = np.empty_like(order)
    inverse[order] = np.arange(order.size)
    return xp.take(grouped, to_device(inverse, xp, device), axis=0)
