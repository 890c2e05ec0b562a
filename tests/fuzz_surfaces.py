"""A random search for wrong results on the ways in that ``fuzz_references.py`` does not draw:
gpath's models reached through a precomputed kernel, sparse rows, a saved and loaded model,
class weights, ``partial_fit``, SimpleSVM's other losses, river's windows, a small kernel
cache and a callable kernel, each against the exact references. Run by hand (not collected by pytest: it takes minutes and draws anew).

Each trial draws its rows as ``fuzz_references.py`` does (8–120 points in 1–5 features,
Gaussian, rounded, scaled by 10⁻³ to 10⁹, or a third of them one repeated point), a kernel
(RBF, linear, polynomial of degree 2 or 3 with coef0 0, 1 or in (0, 2)), C from 10⁻³ to 10⁴
(LIBSVM, the reference's start, takes minutes beyond), and one of:

- ``precomputed``: ``IncrementalSVC(kernel="precomputed")`` fit on the Gram matrix, then up
  to four updates whose added rows are kernel values against the model's points and then
  against themselves;
- ``sparse``: ``IncrementalSVC`` or ``SimpleSVC`` fit on CSR rows (about half the entries
  zero), the former updated with CSR rows;
- ``saved``: ``IncrementalSVC`` or ``IncrementalSVR`` fit and updated, saved
  (:func:`gpath.save`), loaded and updated on;
- ``class_weight``: ``IncrementalSVC`` or ``SimpleSVC`` with a dict of class weights (and
  sometimes sample weights), the former updated;
- ``partial_fit``: ``IncrementalSVC.partial_fit`` on three to six chunks of the rows;
- ``loss``: ``SimpleSVC(loss="squared_hinge")``, or the hard margin (``C=inf``) on rows a
  linear function separates;
- ``river``: ``SlidingWindowSVC`` or ``SlidingWindowSVR`` learning a stream one point at a
  time (window 8–60, batch 1–10);
- ``cache``: ``IncrementalSVC`` (``method`` "multiple" or "single") or ``IncrementalSVR``
  with a ``cache_size`` of 2–40 kernel columns, so that the path evicts columns (a
  ``CacheFullError``, the margin set needing more, is a clear refusal);
- ``callable``: ``IncrementalSVC`` or ``IncrementalSVR`` with the kernel as a Python
  function of two row blocks, fit and updated.

After every fit and update ``check_kkt()`` from scratch must hold to 1e-9, and the decision
values (every pair's for several classes) must equal the certified reference's
(:func:`gpath.reference.exact_svc`, ``exact_svc_gram``, ``exact_svr``) to 1e-6 of their scale
plus float64's bound on the error of f's own sum, as in ``fuzz_references.py``. A failure
prints its seed; ``--seed`` replays one. A clear error (``PathError`` for a problem float64
cannot resolve, a ``SingularMarginError``) is printed, not counted.

    python tests/fuzz_surfaces.py --seconds 600
    python tests/fuzz_surfaces.py --seed 4000123
"""

from __future__ import annotations

import collections
import io
import itertools

import numpy as np
import scipy.sparse
from fuzz_references import EPS, TOLERANCE, draw, search

import gpath
from gpath import IncrementalSVC, IncrementalSVR, PathError, SimpleSVC
from gpath.linalg import SingularMarginError
from gpath.reference import exact_svc, exact_svc_gram, exact_svr, kernel_matrix
from gpath.river import SlidingWindowSVC, SlidingWindowSVR

KINDS = ("rbf", "linear", "poly")
WAYS = ("precomputed", "sparse", "saved", "class_weight", "partial_fit", "loss", "river", "cache", "callable")
RIDGE = 1e-6
DRAWN = collections.Counter()  # trials of each way


def _error(f, f_ref, terms, n):
    """The difference of two decision-value vectors in f's scale (``fuzz_references.py``)."""
    return float(np.abs(f - f_ref).max() / (1.0 + np.abs(f_ref).max() + n * EPS * terms / TOLERANCE))


def _reference_params(params):
    return {k: params[k] for k in ("kernel", "gamma", "degree", "coef0")}


def _terms(X, X_ref, coef, params):
    """The largest sum of absolute terms Σ_j |K(x, x_j) coef_j| of a decision value."""
    return float(np.max(np.abs(kernel_matrix(X, X_ref, **_reference_params(params))) @ np.abs(coef)))


def _pair_values(model, X, y, weights, C, params):
    """(gpath's decision values, the reference's, whether it is certified, f's terms) per
    pair of classes."""
    classes = model.classes_
    for p, (a, b) in enumerate(itertools.combinations(range(len(classes)), 2)):
        rows = np.flatnonzero((y == classes[a]) | (y == classes[b]))
        y_pm = np.where(y[rows] == classes[b], 1.0, -1.0)
        ref = exact_svc(X[rows], y_pm, C, sample_weight=None if weights is None else weights[rows],
                        **_reference_params(params))
        if len(classes) == 2:
            f = model.decision_function(X)
        elif hasattr(model, "states_"):
            state = model.states_[p]
            f = kernel_matrix(X, X[rows], **_reference_params(params)) @ (y_pm * np.asarray(state.alpha)) + state.b
        else:
            continue
        yield f, ref.decision_function(X), ref.certified, _terms(X, ref.X, ref.y * ref.alpha, params)


def _svc_fails(model, X, y, C, params, weights=None, kkt=None):
    """What is wrong with a classifier on rows (X, y) against the reference, or None."""
    kkt = model.check_kkt() if kkt is None else kkt
    errors = [_error(f, f_ref, terms, len(y))
              for f, f_ref, ok, terms in _pair_values(model, X, y, weights, C, params) if ok]
    if kkt > 1e-9 or (errors and max(errors) > TOLERANCE):
        return f"kkt {kkt:.1e}, largest difference from the reference {max(errors, default=0.0):.1e}"
    return None


def _svr_fails(model, X, y, C, eps, params):
    kkt = model.check_kkt()
    ref = exact_svr(X, y, C, epsilon=eps, **_reference_params(params))
    error = _error(model.predict(X), ref.predict(X), _terms(X, ref.X, ref.beta, params), len(y))
    if kkt > 1e-9 or (ref.certified and error > TOLERANCE):
        return f"kkt {kkt:.1e}, difference from the reference {error:.1e}"
    return None


def _labels(rng, X, classes=2):
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=len(X)) > 0, 1, -1)
    return rng.integers(0, 3, size=len(X)) if classes == 3 else y


def _steps(rng, rows, total, y=None, weights=None):
    """Up to four random updates: (added rows, positions removed, rows after); they stop
    before one that would leave ``y`` (if given) with fewer than two classes, or a class
    without a point of positive ``weights`` (if given), which the models refuse."""
    for _ in range(int(rng.integers(1, 5))):
        m, ell = int(rng.integers(0, 12)), int(rng.integers(0, max(1, min(12, len(rows) - 3))))
        start = max(rows) + 1
        added = list(range(start, min(start + m, total)))
        picked = rng.choice(len(rows), size=ell, replace=False) if ell else np.zeros(0, dtype=int)
        gone = set(picked.tolist())
        after = [r for i, r in enumerate(rows) if i not in gone] + added
        positive = after if weights is None else [r for r in after if weights[r] > 0]
        classes = 0 if y is None else len(np.unique(y[after]))
        if (not added and not ell) or (y is not None and (classes < 2 or len(np.unique(y[positive])) < classes)):
            return
        yield added, picked, after
        rows = after


def _walk(rng, model, X, y, rows, fails, labels=True, added_rows=None, weights=None):
    """``fails(rows)`` of ``model`` as fitted on ``rows``, then after each of :func:`_steps`'s
    updates (``labels``: classes, each update keeping two): the first problem, or None.
    ``added_rows(added, rows)`` gives an update's ``X_add`` (default ``X[added]``);
    ``weights``, its ``sample_weight_add``."""
    problem = fails(rows)
    for step, (added, picked, after) in enumerate(_steps(rng, rows, len(X), y if labels else None, weights)):
        if problem:
            break
        kw = {}
        if added:
            kw = {"X_add": X[added] if added_rows is None else added_rows(added, rows), "y_add": y[added]}
            if weights is not None:
                kw["sample_weight_add"] = weights[added]
        model.update(**kw, remove=model.sample_ids_[picked])
        rows = after
        problem = fails(rows)
        problem = problem and f"after update {step + 1}: {problem}"
    return problem


def _precomputed(rng, X, n, C, params):
    y = _labels(rng, X, 2 if rng.random() < 0.7 else 3)
    G = kernel_matrix(X, X, **_reference_params(params))
    rows = list(range(n))
    if len(np.unique(y[rows])) < 2:
        return None
    model = IncrementalSVC(kernel="precomputed", C=C, method=str(rng.choice(["multiple", "auto"])))
    model.fit(G[np.ix_(rows, rows)], y[rows])

    def fails(rows):
        K = G[np.ix_(rows, rows)]
        kkt = model.check_kkt(K, y[rows])
        errors = []
        classes = model.classes_
        for p, (a, b) in enumerate(itertools.combinations(range(len(classes)), 2)):
            own = np.flatnonzero((y[rows] == classes[a]) | (y[rows] == classes[b]))
            y_pm = np.where(y[rows][own] == classes[b], 1.0, -1.0)
            alpha, b0, ref_kkt, _ = exact_svc_gram(K[np.ix_(own, own)] + RIDGE * np.eye(own.size), y_pm, C)
            if ref_kkt > 1e-9:
                continue
            f_ref = K[:, own] @ (y_pm * alpha) + b0
            if len(classes) == 2:
                f = model.decision_function(K)
            else:
                state = model.states_[p]
                f = K[:, own] @ (y_pm * np.asarray(state.alpha)) + state.b
            errors.append(_error(f, f_ref, float(np.abs(K[:, own]).max() * np.abs(alpha).sum()), own.size))
        if kkt > 1e-9 or (errors and max(errors) > TOLERANCE):
            return f"kkt {kkt:.1e}, largest difference from the reference {max(errors, default=0.0):.1e}"
        return None

    return _walk(rng, model, X, y, rows, fails, added_rows=lambda added, rows: G[np.ix_(added, rows + added)])


def _sparse(rng, X, n, C, params):
    X = X * (rng.random(X.shape) < 0.5)
    y = _labels(rng, X)
    rows = list(range(n))
    if len(np.unique(y[rows])) < 2:
        return None
    simple = rng.random() < 0.3
    model = SimpleSVC(**params, C=C) if simple else IncrementalSVC(**params, C=C)
    model.fit(scipy.sparse.csr_matrix(X[rows]), y[rows])
    if simple:
        kkt = model.check_kkt(scipy.sparse.csr_matrix(X[rows]), y[rows])
        return _svc_fails(model, X[rows], y[rows], C, params, kkt=kkt)
    return _walk(rng, model, X, y, rows, lambda rows: _svc_fails(model, X[rows], y[rows], C, params),
                 added_rows=lambda added, _: scipy.sparse.csr_matrix(X[added]))


def _saved(rng, X, n, C, params):
    svr = rng.random() < 0.4
    if svr:
        y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=len(X))
        eps = float(rng.choice([0.0, 0.05, 0.3]))
        model = IncrementalSVR(**params, C=C, epsilon=eps)
    else:
        y = _labels(rng, X, 2 if rng.random() < 0.7 else 3)
        model = IncrementalSVC(**params, C=C)
    rows = list(range(n))
    if not svr and len(np.unique(y[rows])) < 2:
        return None
    model.fit(X[rows], y[rows])
    steps = list(_steps(rng, rows, len(X), None if svr else y))
    save_at = int(rng.integers(0, len(steps) + 1))
    for step in range(len(steps) + 1):
        if step == save_at:
            buffer = io.BytesIO()
            gpath.save(model, buffer)
            buffer.seek(0)
            model = gpath.load(buffer)
            problem = (_svr_fails(model, X[rows], y[rows], C, eps, params) if svr else
                       _svc_fails(model, X[rows], y[rows], C, params))
            if problem:
                return f"after loading ({step} updates before): {problem}"
        if step == len(steps):
            return None
        added, picked, rows = steps[step]
        kw = {"X_add": X[added], "y_add": y[added]} if added else {}
        model.update(**kw, remove=model.sample_ids_[picked])
        problem = (_svr_fails(model, X[rows], y[rows], C, eps, params) if svr else
                   _svc_fails(model, X[rows], y[rows], C, params))
        if problem:
            return f"after update {step + 1} (saved after {save_at}): {problem}"


def _class_weight(rng, X, n, C, params):
    y = _labels(rng, X, 2 if rng.random() < 0.6 else 3)
    classes = np.unique(y)
    class_weight = {int(c): float(np.exp(rng.uniform(-2, 2))) for c in classes}
    weights = None if rng.random() < 0.5 else np.exp(rng.uniform(-1, 1, len(X))) * (rng.random(len(X)) > 0.1)
    rows = list(range(n))
    positive = rows if weights is None else [r for r in rows if weights[r] > 0]
    if len(np.unique(y[rows])) < 2 or len(np.unique(y[positive])) < len(np.unique(y[rows])):
        return None
    simple = rng.random() < 0.3
    model = (SimpleSVC if simple else IncrementalSVC)(**params, C=C, class_weight=class_weight)
    model.fit(X[rows], y[rows], **({} if weights is None else {"sample_weight": weights[rows]}))

    def fails(rows):
        w = np.array([class_weight[int(c)] for c in y[rows]]) * (1.0 if weights is None else weights[rows])
        kkt = model.check_kkt(X[rows], y[rows]) if simple else None
        return _svc_fails(model, X[rows], y[rows], C, params, w, kkt=kkt)

    return fails(rows) if simple else _walk(rng, model, X, y, rows, fails, weights=weights)


def _partial_fit(rng, X, n, C, params):
    y = _labels(rng, X, 2 if rng.random() < 0.7 else 3)
    cuts = np.sort(rng.choice(np.arange(1, n), size=int(rng.integers(2, 6)), replace=False))
    model = IncrementalSVC(**params, C=C)
    classes = np.unique(y[:n])
    if classes.size < 2:
        return None
    seen = 0
    for step, (lo, hi) in enumerate(zip(np.r_[0, cuts], np.r_[cuts, n])):
        model.partial_fit(X[lo:hi], y[lo:hi], classes=classes)
        seen = hi
        if len(np.unique(y[:seen])) < 2:
            continue
        problem = _svc_fails(model, X[:seen], y[:seen], C, params)
        if problem:
            return f"after chunk {step + 1}: {problem}"
    return None


def _loss(rng, X, n, C, params):
    if rng.random() < 0.5:
        y = _labels(rng, X)[:n]
        if len(np.unique(y)) < 2:
            return None
        model = SimpleSVC(**params, C=C, loss="squared_hinge").fit(X[:n], y)
        extra = 1.0 / C  # the quadratic soft margin: the hard margin on K + I/C
        box = np.inf
    else:
        w = rng.normal(size=X.shape[1])
        f = X[:n] @ w
        if not (f > 0).any() or not (f < 0).any():
            return None
        gap = 0.1 * np.abs(f).max()
        keep = np.abs(f) > gap
        X, y = X[:n][keep], np.where(f[keep] > 0, 1, -1)
        if len(np.unique(y)) < 2:
            return None
        params = dict(params, kernel="linear")
        model = SimpleSVC(**params, C=np.inf).fit(X, y)
        extra, box = 0.0, np.inf
    X, n = X[: len(y)], len(y)
    kkt = model.check_kkt(X, y)
    K = kernel_matrix(X, X, **_reference_params(params)) + (RIDGE + extra) * np.eye(n)
    y_pm = np.where(y == model.classes_[1], 1.0, -1.0)
    # A box far above any α of the problem stands for ∞ in LIBSVM; the reference's own KKT
    # check then says whether it held.
    alpha, b, ref_kkt, _ = exact_svc_gram(K, y_pm, 1e6 * (1.0 + np.abs(K).max()) if box == np.inf else box)
    errors = []
    if ref_kkt <= 1e-9 and (alpha < 1e6 * (1.0 + np.abs(K).max()) * 0.5).all():
        f_ref = kernel_matrix(X, X, **_reference_params(params)) @ (y_pm * alpha) + b
        errors.append(_error(model.decision_function(X), f_ref, float(np.abs(K).max() * alpha.sum()), n))
    if kkt > 1e-9 or (errors and max(errors) > TOLERANCE):
        return f"kkt {kkt:.1e}, difference from the reference {max(errors, default=0.0):.1e}"
    return None


def _river(rng, X, n, C, params):
    window, batch = int(rng.integers(8, 61)), int(rng.integers(1, 11))
    batch = min(batch, window)
    svr = rng.random() < 0.4
    names = [f"x{j}" for j in range(X.shape[1])]
    if svr:
        y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=len(X))
        eps = float(rng.choice([0.0, 0.05, 0.3]))
        model = SlidingWindowSVR(window=window, batch=batch, C=C, epsilon=eps, **params)
    else:
        y = _labels(rng, X)
        model = SlidingWindowSVC(window=window, batch=batch, C=C, **params)
    for i in range(len(X)):
        model.learn_one(dict(zip(names, X[i].tolist())), float(y[i]) if svr else bool(y[i] > 0))
    inner = model.svr_ if svr else model.svc_
    if inner is None:
        return None
    Xw, yw = np.asarray(model.X_window_), np.asarray(model.y_window_)
    if svr:
        return _svr_fails(inner, Xw, yw, C, eps, params)
    codes = np.array([list(model.classes_).index(v) for v in yw])  # (river's labels; the SVM's classes)
    return _svc_fails(inner, Xw, np.asarray(inner.classes_)[codes], C, params)


def _updated(rng, model, X, y, n, C, params, svr, eps=None):
    """Fit ``model`` on the first n rows and update it up to four times, checking each."""
    rows = list(range(n))
    if not svr and len(np.unique(y[rows])) < 2:
        return None
    model.fit(X[rows], y[rows])

    def fails(rows):
        return (_svr_fails(model, X[rows], y[rows], C, eps, params) if svr else
                _svc_fails(model, X[rows], y[rows], C, params))

    return _walk(rng, model, X, y, rows, fails, labels=not svr)


def _cache(rng, X, n, C, params):
    """A cache of a few columns more than the margin set needs, so that the path evicts."""
    svr = rng.random() < 0.4
    rows_per_point = 2 if svr else 1
    columns = int(rng.integers(2, 40))
    cache_size = columns * 8 * (rows_per_point * (n + 12) * 5 // 4 + 1) / 2**20
    if svr:
        y, eps = np.sin(X[:, 0]) + 0.1 * rng.normal(size=len(X)), float(rng.choice([0.0, 0.05, 0.3]))
        model = IncrementalSVR(**params, C=C, epsilon=eps, cache_size=cache_size)
    else:
        y, eps = _labels(rng, X), None
        model = IncrementalSVC(**params, C=C, cache_size=cache_size, method=str(rng.choice(["multiple", "single"])))
    try:
        return _updated(rng, model, X, y, n, C, params, svr, eps)
    except gpath.CacheFullError:
        return None  # (a clear refusal: the margin set needs more columns than the cache holds)


def _callable(rng, X, n, C, params):
    """The kernel as a Python callable (rows, rows) → Gram block."""
    ref = _reference_params(params)

    def kernel(A, B):
        return kernel_matrix(np.asarray(A), np.asarray(B), **ref)

    svr = rng.random() < 0.4
    if svr:
        y, eps = np.sin(X[:, 0]) + 0.1 * rng.normal(size=len(X)), float(rng.choice([0.0, 0.05, 0.3]))
        model = IncrementalSVR(kernel=kernel, C=C, epsilon=eps)
    else:
        y, eps = _labels(rng, X, 2 if rng.random() < 0.7 else 3), None
        model = IncrementalSVC(kernel=kernel, C=C)
    return _updated(rng, model, X, y, n, C, params, svr, eps)


def trial(seed: int) -> str | None:
    """One random problem; a description of what went wrong, or None."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(8, 120))
    X, _ = draw(rng, n + 40)
    kernel = KINDS[int(rng.integers(3))]
    C = float(10.0 ** rng.uniform(-3, 4))
    d = X.shape[1]
    gamma = 1.0 if kernel == "linear" else float(10.0 ** rng.uniform(-2, 1)) / max(1.0, float(X.var()) * d)
    way = WAYS[int(rng.integers(len(WAYS)))]
    # (drawn apart, so that the draws above stay those of the first version)
    extra = np.random.default_rng([seed, 1])
    params = dict(kernel=kernel, gamma=gamma, degree=int(extra.integers(2, 4)),
                  coef0=float(extra.choice([0.0, 1.0, extra.uniform(0, 2)])))  # (≥ 0: a positive
    # semi-definite polynomial kernel)
    DRAWN[way] += 1
    problem = globals()["_" + way](rng, X, n, C, params)
    return None if problem is None else f"{way} {kernel} C={C:.3g} n={n}: {problem}"


def main(argv=None):
    failed = search(trial, __doc__, argv, clear=(PathError, SingularMarginError))
    print(f"trials by way: {dict(sorted(DRAWN.items()))}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
