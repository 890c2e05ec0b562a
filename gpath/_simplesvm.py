"""The SimpleSVM core: exact SVM training by the active-set method of Vishwanathan, Smola &
Murty (2003). The estimator is :class:`gpath.SimpleSVC` (:mod:`gpath.simple`).

The dual (the paper's eq. 2, with A = yᵀ and b = 0)

    min ½ αᵀHα − 1ᵀα   s.t.   0 ≤ α ≤ U,   yᵀα = 0

covers the C-SVC (H = Q, U = C), the quadratic soft margin (H = Q + I/C, U = ∞) and the hard
margin (H = Q, U = ∞), with ``Q_ij = y_i y_j K(x_i, x_j) + ridge·[i = j]``. The variables are
split into S0 (α = 0), SC (α = U) and Swork (free) — the sets O, I and M of
:class:`gpath._path.SVCState`, whose fields hold the whole iteration: α and the sets on the
host, the margins ``y f = Hα + y b`` and the cached columns ``H[:, Swork]`` on the device, the
factor of the working-set matrix 𝐌 = [[0, y_Wᵀ], [y_W, H_WW]] (the paper's system (5)) on the
host. Each iteration (section 2.1):

1. adds the variable that violates its optimality condition most (section 2.3: α_i = 0 with
   g_i < 0, or α_i = U with g_i > 0, where g_i = y_i f_i − 1) to Swork — one row and column
   more in 𝐌, an O(|Swork|²) update of its Cholesky factor (:mod:`gpath.linalg`). By
   default the worst violators enter together — up to ``block_size``, one per 16 points of
   Swork — their kernel columns computed as one block (a matrix product); the step of 3.
   moves them all, and a variable the step sends back to a bound leaves again. A block
   whose step moves nothing is followed by the paper's single violator (which always
   moves), so the iteration keeps its descent;
2. solves the equality-constrained problem on Swork (eq. 4: 𝐌 [b; α_W] = [−U y_SCᵀ1;
   1 − U H_{W,SC} 1]);
3. if that solution leaves the box, moves from the current point toward it until the first
   variable hits a bound, moves that variable to S0 or SC and solves again (section 2.2).

The iteration is exact from any feasible start (section 2). By default it starts from SMO's
approximate solution on a float32 kernel matrix (:mod:`gpath._smo`), whose sets are nearly
the exact ones: from there it finishes in a few iterations, where from the paper's start
(the closest pair, section 3.1) it takes thousands at n = 10,000.

The margins are recomputed after every iteration from α itself, ``y f = H[:, W] α_W +
U·H[:, SC] 1 + y b`` (one device product with the cached columns, the same cost as an
update by ``H[:, W] Δα``), so they carry no accumulated drift; ``H[:, SC] 1`` is kept as a
device n-vector, changed by one cached column when a variable enters or leaves SC.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass

import numpy as np
from sklearn.utils import check_random_state

from ._array_api import get_namespace_and_device, scalars, to_device, to_host
from ._path import (
    _FLOAT64_EPS,
    RESOLUTION,
    I,
    M,
    O,
    PathEnd,
    PathError,
    SVCState,
    _levels,
    follow_update,
    rates_round_off,
)
from ._ratio import first_bound_hit
from ._smo import SMO_TOL, shared_kernel_rows_of, smo_start
from .kernels import Kernel
from .linalg import SingularMarginError, single_threaded_host_blas
from .persistence import record

# The kernels SMO's start computes (gpath._smo.kernel_matrix).
_SMO_KERNELS = ("linear", "rbf", "poly", "sigmoid", "precomputed")

__all__ = ["INITS", "LOSSES", "LazyRandomState", "NotSeparableError", "SimpleStats", "exact_state", "polish", "simple_svm", "smo_point",
           "warm_simple_svm"]

log = logging.getLogger("gpath")

LOSSES = ("hinge", "squared_hinge")
INITS = ("auto", "smo", "closest_pair", "randomized")

# The exact finish: after the paper's criterion is met, the search goes on until no KKT
# violation exceeds this (units of y f), so that the index sets, and with them the solution
# of the working-set system, are the exact ones.
_EXACT = 1e-10
# Violations below this multiple of eps·(1 + |b| + max_k H_kk · Σα) are round-off of the
# margins y f = Hα + y b and are never acted on (acting on them could cycle).
_ROUNDOFF = 32 * np.finfo(np.float64).eps
# A stalled run (the violators leave Swork as they enter) is accepted as exact when its
# violation relative to the scale of y f is below this (the estimators' checks are 1e-9, 1e-8).
_STALL_RELATIVE = 1e-10
# A run that cycles to its cap counts as stalled only where its violation is also round-off in
# units of y f: below RESOLUTION beyond this multiple of the scale of y f. (At the scales float64
# still resolves, up to 4.5e9, 1e-10 of it is up to 0.45 units of y f: a cycle at K ~ 1e12
# passed as a stall with a violation of 0.025, its decision values 0.3 % off. A stall proper
# is the solves' limit, not the iteration's: a degree-16 polynomial kernel, 𝐌 of condition
# 1e12, stalls at 2.4e-4 on the exact index sets.)
_CYCLE_ROUND_OFF = 1e3 * _FLOAT64_EPS
# Section 3.1, randomized method: the closest of 59 random opposite pairs lies among the
# closest 5 % of all pairs with probability 1 − 0.95⁵⁹ > 0.95.
_N_RANDOM_PAIRS = 59
# Violators entered per iteration by default: on Adult (n = 3,000 and 10,000, C from 0.1 to
# 100) 16 took 0.55–0.9 of the paper's one-at-a-time time, 8 and 32 no less (benchmarks/RESULTS.md).
_BLOCK = 16
# A block holds at most one entering point per this many points of Swork.
_SWORK_PER_ENTRY = 16
# SMO's tolerance from a nearby solution (smo_point): its sets need less than a cold start's,
# and SMO's slow tail costs more than the finish it saves (make_friedman1 n = 10,000
# standardized, m = ℓ = 100 refit: SMO 6.0 s and the finish 3.1 s at 1e-3, 1.8 s and 4.5 s here).
_WARM_SMO_TOL = 10 * SMO_TOL


class NotSeparableError(ValueError):
    """A hard-margin SVC (C = inf with the hinge loss) was asked for on data that are not
    separable in the kernel's feature space."""


@record
@dataclass(frozen=True)
class SimpleStats:
    """What one SimpleSVM run did.

    Attributes
    ----------
    n_iter : int
        Iterations: variables added to Swork (with an empty Swork, the most violating pair is
        added as one iteration; the initial pair is iteration 1).
    n_bound_steps : int
        Steps cut short by a bound (section 2.2): a variable left Swork for S0 or SC.
    n_kernel_evaluations : int
        Kernel values computed: n per kernel column, plus the kernel diagonal and the pair
        distances of the initialization (section 3.1), or the n per row of SMO's float32
        matrix that SMO computed (every row by pairs; by blocks the rows of the points that
        entered a block).
    n_columns : int
        Kernel columns computed (a column that left Swork and comes back costs none while the
        cache still holds it).
    init_pair : tuple of int
        The starting pair (positive point, negative point); ``()`` for a start from a point.
    working_set_size : int
        |Swork| at the end (the free support vectors).
    max_violation : float
        Largest KKT violation of the maintained margins at the end (units of y f).
    converged : bool
        False when ``max_iter`` stopped the search first.
    time : float
        Wall time in seconds.
    start : {"smo", "closest_pair", "randomized", "warm"}
        Where the iteration started: SMO's approximate solution, the paper's starting pair,
        or a given point (:func:`warm_simple_svm`).
    n_smo_iter : int
        SMO's pair updates before the start (0 without SMO).
    """

    n_iter: int
    n_bound_steps: int
    n_kernel_evaluations: int
    n_columns: int
    init_pair: tuple
    working_set_size: int
    max_violation: float
    converged: bool
    time: float
    start: str = "closest_pair"
    n_smo_iter: int = 0


@single_threaded_host_blas
def simple_svm(X, y, kernel: Kernel, C: float, ridge: float, *, loss="hinge", tol=1e-5,
               max_iter=None, init="auto", random_state=None, weights=None,
               block_size=None, smo_from=None) -> tuple[SVCState, SimpleStats]:
    """Solve the SVC dual exactly by SimpleSVM.

    Parameters
    ----------
    X : array of shape (n_samples, n_features), float64
        Training inputs in any array-API namespace; everything n-sized stays on their device.
    y : array of shape (n_samples,), float64
        Labels ±1, same namespace and device; both signs present.
    kernel : Kernel
    C : float
        > 0; ``inf`` is the hard margin.
    ridge : float
        ≥ 0, added to the kernel diagonal in Q.
    loss : {"hinge", "squared_hinge"}
        "hinge": box 0 ≤ α ≤ C. "squared_hinge": the quadratic soft margin, H = Q + I/C and no
        upper bound (section 1.1).
    tol : float
        The paper's stopping criterion (section 4.1): every point's contribution to the KKT
        gap, ``α_i max(y_i f_i − 1, 0) + (U − α_i) max(1 − y_i f_i, 0)`` (the factor U − α_i
        read as 1 when U = ∞), at most ``tol``. The search then goes on until no KKT violation
        exceeds 1e-10 in units of y f (or the round-off level of the margins, if larger), so
        that the returned sets and solution are the exact ones.
    max_iter : int or None
        Most iterations; None: 20·(n + 50), beyond which a run counts as cycling. It caps
        the SMO start's pair updates too (as LIBSVM's ``max_iter`` does; None: 30 n).
    init : {"auto", "smo", "closest_pair", "randomized"}
        The start. "closest_pair" and "randomized" are the paper's starting pairs (section
        3.1): the iterative closest-pair search (Algorithm 2), or the closest of 59 random
        opposite pairs. "smo": SMO's approximate solution (LIBSVM's tolerance 1e-3) on the
        float32 kernel matrix, held in host memory (:func:`gpath._smo.smo_start`; its
        entries computed on X's device), balanced and put in its sets; the iteration then
        finishes exactly from there. It needs the hinge loss, a finite C and a kernel of
        ``_SMO_KERNELS`` (the built-in ones and "precomputed"); where the matrix (by pairs)
        or two working sets' rows of it (by blocks) would take more than a quarter of the
        available memory, or float32 cannot hold the kernel, the closest pair starts instead
        (``start`` in the stats says which). "auto": "smo" where it applies, on every namespace (on a
        GPU the matrix's entries are computed there and copied to the host as float32; SMO
        runs on the host, the finish on the device), else "closest_pair".
    random_state : numpy.random.RandomState, LazyRandomState, int or None
        Draws the start of Algorithm 2, or the random pairs (as scikit-learn's
        ``check_random_state`` reads it; a :class:`LazyRandomState` as it is).
    weights : host array of shape (n_samples,) or None
        Each point's box is ``C · weights_i`` (hinge loss; sample and class weights as in
        scikit-learn's SVC); None: C for every point. Weights of 0 make a point inert.
    block_size : int or None
        Most violators entered per iteration (≥ 1): 1 is the paper's rule (section 2.1);
        more enter the worst ones together, one per 16 points of Swork up to ``block_size``,
        their kernel columns computed as one block; None: 16.
    smo_from : host array of shape (n_samples,), float64, or None
        A point SMO's start begins from (``init="smo"``), clipped to the boxes and balanced
        (:func:`_balanced`), run to the looser tolerance of a nearby start (``_WARM_SMO_TOL``):
        the solution of a nearby problem, as a refit's previous α on its kept rows (a fold of
        cross-validation); where SMO cannot run, SimpleSVM starts from that point itself
        (``start`` "warm"). Ignored unless SMO is the start (``init``). None: α = 0.

    Returns
    -------
    state : SVCState
        The solution: ``alpha``, ``b``, sets ``where`` (O = S0, M = Swork, I = SC), ``margin``
        (Swork in factor order), ``factor``, ``cache``, margins ``yf`` and ``side``; its ``C``
        is the box bound U and its ``ridge`` the whole constant on H's diagonal.
    stats : SimpleStats

    Raises
    ------
    ValueError
        For ``init="smo"`` without the hinge loss, a finite C or a built-in kernel.
    NotSeparableError
        Hard margin (hinge, C = inf) on data not separable in the kernel's feature space:
        with ridge = 0 detected as an unbounded direction of the dual; with ridge > 0 when the
        solution, which then separates the points in the feature space of K + ridge·I, does
        not separate them with K (some y_i f(x_i) ≤ 0).
    PathError
        If ``max_iter`` is None and the search does not end after 20·(n + 50) iterations.
    SingularMarginError
        Never from a duplicate point (a singular working-set matrix is stepped along its
        null direction, section 2.2's move along the boundary); only on a numerically broken
        factor.

    References
    ----------
    S. V. N. Vishwanathan, A. J. Smola and M. N. Murty, "SimpleSVM", ICML 2003:
    sections 2.1–2.3 (the active-set iteration, eqs. 2–6), 3.1 (initialization) and 4.1
    (stopping criterion). J. C. Platt (1998), R.-E. Fan, P.-H. Chen and C.-J. Lin (JMLR 2005),
    C.-C. Chang and C.-J. Lin (LIBSVM, 2011): the SMO start (:mod:`gpath._smo`).
    """
    start = time.perf_counter()
    xp, device = get_namespace_and_device(X, y)
    rng = random_state if isinstance(random_state, LazyRandomState) else check_random_state(random_state)
    smo_applies = loss == "hinge" and np.isfinite(C) and kernel.kind in _SMO_KERNELS
    if init == "smo" and not smo_applies:
        raise ValueError(f"init='smo' needs loss='hinge', a finite C and a kernel of {_SMO_KERNELS}; "
                         f"got loss={loss!r}, C={C!r}, kernel={kernel.kind!r}")
    if init == "auto":
        init = "smo" if smo_applies else "closest_pair"
    if loss == "squared_hinge":
        upper, diag = np.inf, ridge + (1.0 / C if np.isfinite(C) else 0.0)
    else:
        upper, diag = float(C), float(ridge)
    if weights is not None and loss != "hinge":
        raise ValueError(f"weights need loss='hinge' (a squared hinge would need a weighted diagonal); got loss={loss!r}")
    boxes = None if weights is None else upper * np.asarray(weights, dtype=np.float64)
    state = SVCState.at_zero(xp, device, X, y, kernel, upper, diag, boxes)
    n = state.n
    cap = 20 * (n + 50)
    run = _SimpleRun(state, tol / upper if np.isfinite(upper) else tol,
                     cap if max_iter is None else max_iter, rng, _BLOCK if block_size is None else block_size)
    found = seed = None
    if init == "smo":
        seed = None if smo_from is None else _balanced(
            np.clip(np.asarray(smo_from, dtype=np.float64), 0.0, state.upper), state.y_host, state.upper)
        found, evaluated = smo_start(X, state.y_host, kernel, state.upper, diag, max_iter, start=seed,
                                     tol=SMO_TOL if seed is None else _WARM_SMO_TOL)
        run.n_other_evaluations += evaluated
    if found is not None:
        alpha, run.n_smo_iter = found
        run.start_at(_balanced(np.clip(alpha, 0.0, state.upper), state.y_host, state.upper))
        init, pair = "smo", ()
    elif seed is not None:  # SMO could not run (its float32 matrix): SimpleSVM from the seed itself
        run.start_at(seed)
        init, pair = "warm", ()
    else:
        init = "randomized" if init == "randomized" else "closest_pair"
        pair = run.closest_pair() if init == "closest_pair" else run.randomized_pair()
    status, violation = run.run(pair)
    return state, _concluded(run, status, violation, max_iter is None, loss, pair, start, init)


def _concluded(run, status: str, violation: float, capped: bool, loss: str, pair: tuple, start: float,
               init: str = "warm") -> SimpleStats:
    """The stats of a finished run, or the error that its status means.

    Raises
    ------
    PathError, NotSeparableError
        As :func:`simple_svm`.
    """
    state = run.s
    xp = state.xp
    judged = status == "stalled" or (status == "max_iter" and capped and state.kernel.kind != "sigmoid")
    scale = relative = math.inf
    if judged:
        scale = abs(state.b) + state.kkt_scale()
        relative = violation / scale
    if (status == "max_iter" and judged and relative <= _STALL_RELATIVE
            and violation <= RESOLUTION + _CYCLE_ROUND_OFF * scale):
        # Cycling among ties at round-off: duplicate points whose margin matrix only the
        # ridge keeps regular (six copies of one point, K = 3e6, ridge 1e-6: condition 1e13)
        # swap in and out with violations of 1e-13 of the scale of y f, above the iteration's
        # 32 ε but as exact as a stall (the randomized search of the 27th session).
        status = "stalled"
    if status == "stalled":
        # The violators leave the working set as soon as they enter it: the solves of 𝐌 can
        # resolve y f no better. That is exact if it is round-off relative to the scale of y f
        # (check_kkt's rule; ill-conditioned kernels, high polynomial degrees, get here).
        if relative > _STALL_RELATIVE:
            raise PathError(
                f"SimpleSVM stalled with a KKT violation of {violation:.3g} (units of y f; {relative:.3g} "
                f"relative to the scale of y f): the violating points leave the working set as soon as "
                f"they enter it (the working-set system is too ill-conditioned for float64): standardize "
                f"the features, or lower gamma or the degree of a polynomial kernel; the model is unchanged"
            )
        status = "converged"
    if status == "max_iter" and capped:
        if state.kernel.kind == "sigmoid":
            raise PathError(
                f"SimpleSVM did not finish after {run.max_iter} iterations (largest KKT violation {violation:.3g} "
                f"in units of y f): the sigmoid kernel is not positive semi-definite, its dual is not convex, and "
                f"the active-set iteration can cycle without reaching a KKT point; try a smaller C or gamma, "
                f"another coef0 (a negative one, say), or a positive semi-definite kernel; the model is unchanged"
            )
        k_max = scalars(xp, xp.max(state.kernel.diagonal(state.X)))[0]
        raise PathError(
            f"SimpleSVM did not finish after {run.max_iter} iterations (largest KKT violation "
            f"{violation:.3g} in units of y f): degenerate cycling, or a problem beyond float64 "
            f"(the largest kernel value K(x, x) is {k_max:.3g}): standardize the features, or lower "
            f"gamma or the degree of a polynomial kernel; the model is unchanged"
        )
    if loss == "hinge" and not np.isfinite(state.C) and state.active.size:
        run.check_separated()
    stats = SimpleStats(
        n_iter=run.n_iter,
        n_bound_steps=run.n_bound_steps,
        n_kernel_evaluations=state.n * state.cache.n_columns_computed + run.n_other_evaluations,
        n_columns=state.cache.n_columns_computed,
        init_pair=pair,
        start=init,
        n_smo_iter=run.n_smo_iter,
        working_set_size=state.active.size,
        max_violation=violation,
        converged=status == "converged",
        time=time.perf_counter() - start,
    )
    log.debug("SimpleSVM: %s", stats)
    return stats


@single_threaded_host_blas
def warm_simple_svm(X, y, kernel: Kernel, C: float, ridge: float, alpha, *, weights=None,
                    block_size=None, shift=None, twins=False) -> tuple[SVCState, SimpleStats]:
    """Solve the C-SVC dual exactly by SimpleSVM started from the point ``alpha`` (a warm
    start: the solution of a nearby problem, such as the model before an update or the
    full-data model for one of its folds).

    ``alpha`` is clipped to the boxes and made to satisfy ``yᵀα = 0`` by moving the
    coefficients strictly inside their boxes first (then the others) by what the constraint
    needs (:func:`_balanced`). The sets follow from it: SC where α = C_i, Swork strictly
    inside, S0 at 0. The iteration of section 2 then runs from there, each step from a
    feasible point, so the result is the exact solution whatever the start; a good start
    only makes it short. (SMO does not move the start first, as in :func:`simple_svm`: from a
    fold's start, Adult n = 10,000, C = 0.1–100, SMO and then this iteration took 0.44–0.69 s,
    this iteration alone 0.29–0.72 s; from the exact solution 0.6–1.0 s against 0.3 s.)

    Parameters
    ----------
    X, y, kernel, C, ridge, weights, block_size
        As :func:`simple_svm` (hinge loss, C finite).
    alpha : host array of shape (n_samples,), float64
        The starting point (any values; clipped to [0, C_i]).
    shift : device array of shape (n_samples,) or None
        ``p + 1`` for the dual's linear term p, ``min ½ αᵀQα + pᵀα`` (:mod:`gpath._path`;
        ε-SVR's doubled problem); None: C-SVC's p = −1.
    twins : bool
        Whether rows 2i and 2i + 1 of X are the same point (ε-SVR's doubled problem): the
        start's bound columns are then computed once per point (:meth:`_SimpleRun.start_at`).

    Returns
    -------
    state : SVCState
    stats : SimpleStats
        ``init_pair`` is ``()``; ``n_iter`` counts the iterations after the start.

    Raises
    ------
    PathError
        As :func:`simple_svm`.

    References
    ----------
    Vishwanathan, Smola & Murty (2003), section 2 (the iteration from any feasible point
    with its sets).
    """
    start = time.perf_counter()
    xp, device = get_namespace_and_device(X, y)
    boxes = None if weights is None else float(C) * np.asarray(weights, dtype=np.float64)
    state = SVCState.at_zero(xp, device, X, y, kernel, float(C), float(ridge), boxes, shift)
    alpha = _balanced(np.clip(np.asarray(alpha, dtype=np.float64), 0.0, state.upper), state.y_host, state.upper)
    run = _SimpleRun(state, _EXACT, 20 * (state.n + 50), None, _BLOCK if block_size is None else block_size)
    state.twins = twins
    run.start_at(alpha, twins)
    status, violation = run.run(())
    return state, _concluded(run, status, violation, True, "hinge", (), start)


def smo_point(X, y, kernel: Kernel, C: float, ridge: float, *, weights=None, shift=None,
              source=None, start=None) -> np.ndarray:
    """A start for :func:`warm_simple_svm` on a dual with a linear term (ε-SVR's doubled
    problem): SMO's approximate solution (:func:`gpath._smo.smo_start`, LIBSVM's tolerance)
    where it applies (a finite C, a kernel of ``_SMO_KERNELS``, the float32 matrix in memory),
    else α = 0.

    From α = 0 SimpleSVM enters the margin set one block of violators at a time; from SMO's
    point it starts near the sets of the solution (make_friedman1 n = 10,000: |M| = 163 with
    thousands of points at C; see ``benchmarks/svr.py``).

    Parameters
    ----------
    X, y, kernel, C, ridge, weights, shift
        As :func:`warm_simple_svm` (X and y, shift on any device), except that with a
        ``source`` X holds the points, one row for all their coefficients.
    source : host array of shape (n_samples,), int64, or None
        Each coefficient's row of X (ε-SVR: ``repeat(arange(n), 2)``, the twins α_i, α*_i of
        x_i, so that SMO's kernel matrix is the points'; :func:`gpath._smo.smo`); None: X has
        a row per coefficient.
    start : host array of shape (n_samples,), float64, or None
        SMO's own start (clipped to the boxes and balanced, as :func:`warm_simple_svm`
        does), such as the model before a large update, from which SMO stops at ten times
        LIBSVM's tolerance; None: α = 0. Where SMO does not apply, this start is returned.

    Returns
    -------
    alpha : ndarray of shape (n_samples,), float64 (host)
        In the boxes, ``yᵀα = 0`` to round-off (SMO's point), or ``start`` as given / 0.

    References
    ----------
    C.-C. Chang and C.-J. Lin, "LIBSVM", ACM TIST 2(3), 2011, section 2.4 (ε-SVR as the
    doubled dual with a linear term, which SMO solves as C-SVC's) and sections 4.1–5 (SMO);
    Vishwanathan, Smola & Murty (2003), section 2 (SimpleSVM's iteration from any feasible
    point, which finishes from this one).
    """
    n = y.shape[0]
    fallback = np.zeros(n) if start is None else np.asarray(start, dtype=np.float64)
    if not (np.isfinite(C) and kernel.kind in _SMO_KERNELS):
        return fallback
    y_host = to_host(y).astype(np.float64)
    upper = float(C) * (np.ones(n) if weights is None else np.asarray(weights, dtype=np.float64))
    if start is not None:
        start = _balanced(np.clip(fallback, 0.0, upper), y_host, upper)
    found, _ = smo_start(X, y_host, kernel, upper, float(ridge),
                         shift=None if shift is None else to_host(shift).astype(np.float64), source=source,
                         start=start, tol=SMO_TOL if start is None else _WARM_SMO_TOL)
    return fallback if found is None else found[0]


class LazyRandomState:
    """``numpy.random.RandomState(seed)``'s ``choice``, the state made when first drawn from:
    making one takes some 0.2 ms, most of the exact start of a small pair (a one-vs-one fit
    makes one per pair), and SMO's start draws nothing."""

    def __init__(self, seed: int):
        self.seed, self._rng = seed, None

    def choice(self, *args, **kwargs):
        if self._rng is None:
            self._rng = np.random.RandomState(self.seed)
        return self._rng.choice(*args, **kwargs)


def exact_state(X, y, kernel: Kernel, C: float, ridge: float, *, start=None, random_state=None,
                **options) -> tuple[SVCState, SimpleStats]:
    """The exact solution of one SVC dual as a path state, as every exact fit starts: SimpleSVM
    from its default start (:func:`simple_svm`) or warm-started from the host point ``start``
    (:func:`warm_simple_svm`); where it converged, the cache compacted, the margins
    recomputed from α where they drifted (``refine``) and one more step of iterative
    refinement taken (``refine_step``), ready for the caller's KKT check from them
    (:func:`gpath._path.check_state`, the check ``check_kkt()`` makes) and for updates.

    Parameters
    ----------
    X, y, kernel, C, ridge
        As :func:`simple_svm`.
    start : host array of shape (n_samples,), float64, or None
        The warm start, or None for SimpleSVM's default start.
    random_state : RandomState, LazyRandomState or None
        The closest-pair start's draw (cold start); None: a fixed one (``LazyRandomState(0)``),
        so that a fit is deterministic.
    **options
        The other keyword arguments of :func:`simple_svm` (cold) or :func:`warm_simple_svm`
        (warm).

    Returns
    -------
    state : SVCState
    stats : SimpleStats
        ``stats.converged`` False (``max_iter`` reached): the state as SimpleSVM left it.

    Raises
    ------
    PathError
        As :func:`simple_svm`.
    """
    if start is None:
        state, stats = simple_svm(X, y, kernel, C, ridge, random_state=(
            LazyRandomState(0) if random_state is None else random_state), **options)
    else:
        state, stats = warm_simple_svm(X, y, kernel, C, ridge, start, **options)
    if stats.converged:
        state.active.compact()
        state.refine()
        state.refine_step()
    return state, stats


def _balanced(alpha: np.ndarray, y: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """``alpha`` (in its box) changed to satisfy ``yᵀα = 0``: the coefficients strictly
    inside their boxes absorb the residual first, then those at a bound, each by as much as
    its box allows, in row order.

    There is always room: if ``r = yᵀα > 0`` the positive coefficients alone sum to at least
    r, and they may all fall to 0 (likewise for r < 0)."""
    r = float(y @ alpha)
    if r == 0.0:
        return alpha
    # How far each coefficient can move yᵀα toward 0: down for y_k = sign(r), up otherwise.
    room = np.where(y * r > 0, alpha, upper - alpha)
    free = (alpha > 0) & (alpha < upper)
    order = np.concatenate([np.flatnonzero(free), np.flatnonzero(~free)])
    taken = np.minimum(room[order], np.maximum(abs(r) - (np.cumsum(room[order]) - room[order]), 0.0))
    alpha = alpha.copy()
    alpha[order] -= np.sign(r) * y[order] * taken
    return np.clip(alpha, 0.0, upper)


def exact_update(state: SVCState, X_add, y_add, remove: np.ndarray, limit, method: str, upper_add, tol: float,
                 shift_add=None, rows_per_point: int = 1) -> tuple[SVCState, int, tuple[float, float] | None]:
    """The state after an update by the path (:func:`gpath._path.follow_update`), its drift
    repaired (``refine``) and its KKT conditions checked from its margins; where the path's
    float64 steps missed events (C·max K beyond what they resolve), finished exactly by
    SimpleSVM's iteration from the path's sets (:func:`polish`).

    Parameters
    ----------
    state, X_add, y_add, remove, limit, method, upper_add, shift_add, rows_per_point
        As :func:`gpath._path.follow_update`.
    tol : float
        The KKT tolerance (relative to the scale of y f).

    Returns
    -------
    state : SVCState
    breakpoints : int
    checked : (violation, scale) or None
        :meth:`SVCState.kkt_check` of the returned state where taken (None after a polish),
        for :func:`gpath._path.check_state`.

    Raises
    ------
    PathError, SingularMarginError, CacheFullError
        As :meth:`SVCState.follow` and :func:`polish`.
    """
    end = PathEnd(tol)
    new, breakpoints = follow_update(state, X_add, y_add, remove, limit, method, upper_add, shift_add,
                                     rows_per_point, end)
    # (Where the path's compiled call took the end checks, the path was resolved.)
    if end.margins is None and not new.unmoved and _path_unresolved(state, new, upper_add, remove, tol):
        new.yf = new.margins_from_alpha()
    return new, breakpoints, refined_or_polished(new, tol, end.margins)


def refined_or_polished(state: SVCState, tol: float, margins=None) -> tuple[float, float] | None:
    """The margin equations refined and the KKT conditions checked
    (:meth:`SVCState.refined_check`, with its ``margins``); where they miss ``tol``, SimpleSVM
    finishes from the state's sets (:func:`polish`), in place. Returns the check, None after
    a polish.

    Raises
    ------
    PathError
        As :func:`polish`.
    """
    # (An unmoved state's drift is that of the state it came from: no refinement.)
    checked = state.refined_check(tol, refine=not state.unmoved, margins=margins)
    if checked[0] > tol:
        state.unmoved = False
        polish(state)
        state.release_bounded_margin()
        state.refine()
        checked = None
    return checked


def _path_unresolved(state: SVCState, new: SVCState, upper_add, remove: np.ndarray, tol: float) -> bool:
    """Whether the path's own steps may have moved the maintained margins by more round-off
    than the KKT check of ``new`` can pass: its rates, C_a for an added point and α_r for a
    removed one, move the margins by terms up to ``max Q_kk · (Σ C_a + Σ α_r)``, whose float64
    round-off must stay below ``tol`` of the new solution's own scale bound
    (:meth:`SVCState.scale_bound`). Where the coefficients are tiny beside the boxes
    (features of size 1e9 with a linear kernel: α near 1e-20, C near 1, K near 1e20) an added
    point's rate moves the margins by 1e20 on its way to α ≈ 1e-20, and the removed points'
    terms (about 10) vanish in its round-off: the margins must then come from α afresh."""
    rates = float(upper_add.sum()) + float(state.alpha[remove].sum())
    return rates_round_off(new._held_max_diagonal(), rates) > tol * new.scale_bound()


@single_threaded_host_blas
def polish(state: SVCState) -> int:
    """Finish a nearly optimal state exactly: SimpleSVM's iteration started from the state's
    own sets (its margin set as the working set), in place. Returns the iterations.

    The MID path's float64 steps can miss events where C·max K is very large (features of
    size 1e12 with a linear kernel: each step moves margins by terms of 1e25 that cancel to
    O(1)); its sets are then nearly right, and a few active-set iterations correct them.

    Raises
    ------
    PathError
        If the iteration does not converge (cycling) within 20·(n + 50) iterations.
    """
    run = _SimpleRun(state, _EXACT, 20 * (state.n + 50), None)
    xp = state.xp
    bounded = np.flatnonzero(state.where == I)
    run.uC = run.uC + state.q_matvec(bounded, state.upper[bounded])
    run.n_upper = int(bounded.size)
    run.sum_y_upper = float(state.y_host[bounded] @ state.upper[bounded])
    run.h_max = scalars(xp, xp.max(state.kernel.diagonal(state.X)))[0] + state.ridge if state.n else 0.0
    status, violation = run.run(())
    if status != "converged":
        raise PathError(f"SimpleSVM did not finish the path's solution ({status}; largest KKT violation "
                        f"{violation:.3g} in units of y f)")
    return run.n_iter


class _SimpleRun:
    """The working variables of one SimpleSVM run on ``state`` (moved in place).

    SC's share of the margins, ``uC = Σ_{k∈SC} U_k H[:, k]`` (device; plus the state's
    ``shift``, the constant part of every margin, if it has one), and of the equality
    constraint, ``Σ_{k∈SC} y_k U_k``, change by one cached column when a variable enters or
    leaves SC."""

    def __init__(self, state: SVCState, tol_margin: float, max_iter: int, rng, block_size: int = 1):
        s = self.s = state
        self.block_size = block_size
        self.block_budget = 2 * (state.n + 50)  # block iterations before the paper's rule
        self._rows = None  # X prepared once for the blocks of kernel columns (Kernel.centered_rows)
        # The folds of a cross-validation share the float64 kernel rows of all the points.
        self.shared = shared_kernel_rows_of(state.X) if state.engine.name == "numba" else None
        self.uC = (s.xp.zeros(s.n, dtype=s.xp.float64, device=s.device) if s.shift is None
                   else s.xp.asarray(s.shift, copy=True))
        self.n_upper = 0  # |SC|
        self.sum_y_upper = 0.0  # Σ_{SC} y_k U_k
        self.h_max = 0.0  # largest H_kk of a point that entered Swork
        self.tol_margin = min(_EXACT, tol_margin)
        self.max_iter = max_iter
        self.rng = rng
        self.n_iter = 0
        self.n_bound_steps = 0
        self.n_other_evaluations = 0
        self.n_smo_iter = 0
        self.stalled: list[int] = []

    # ------------------------------------------------------------------ initialization
    def closest_pair(self) -> tuple[int, int]:
        """Algorithm 2 (section 3.1): from a random negative point, alternately take the
        nearest point of the other class in feature space, until neither changes or the
        distance stops decreasing. Costs two kernel columns a round (kept in the cache for
        the working set), never the n² kernel matrix."""
        s, xp = self.s, self.s.xp
        diag = s.kernel.paired(s.X, s.X)  # K(x, x): d²(x, z) = K(x, x) + K(z, z) − 2 K(x, z)
        self.n_other_evaluations += s.n
        is_pos = s.y > 0
        inf = float("inf")
        i_neg = int(self.rng.choice(np.flatnonzero(s.y_host < 0)))
        best, pair = inf, None
        for _ in range(s.n):
            # Q[i, k] = −K(x_i, x_k) for points of opposite classes.
            d_pos = xp.where(is_pos, diag + 2.0 * self._column(i_neg), inf)
            i_pos = int(scalars(xp, xp.argmin(d_pos))[0])
            d = xp.where(is_pos, inf, diag + 2.0 * self._column(i_pos))
            i_new = xp.argmin(d)
            i_new, d_new, diag_pos = scalars(xp, i_new, xp.min(d), diag[i_pos])
            i_new, dist = int(i_new), d_new + diag_pos
            if dist >= best:
                break
            best, pair = dist, (i_pos, i_new)
            if i_new == i_neg:
                break
            i_neg = i_new
        return pair

    def randomized_pair(self) -> tuple[int, int]:
        """Section 3.1's randomized method: the closest of 59 random opposite pairs."""
        s, xp = self.s, self.s.xp
        p = self.rng.choice(np.flatnonzero(s.y_host > 0), _N_RANDOM_PAIRS)
        m = self.rng.choice(np.flatnonzero(s.y_host < 0), _N_RANDOM_PAIRS)
        Xp = xp.take(s.X, to_device(p, xp, s.device), axis=0)
        Xm = xp.take(s.X, to_device(m, xp, s.device), axis=0)
        k = s.kernel
        d = k.paired(Xp, Xp) + k.paired(Xm, Xm) - 2.0 * k.paired(Xp, Xm)
        self.n_other_evaluations += 3 * _N_RANDOM_PAIRS
        j = int(scalars(xp, xp.argmin(d))[0])
        return int(p[j]), int(m[j])

    @property
    def rows(self):
        """X prepared once for the run's blocks of kernel columns (:meth:`Kernel.centered_rows`)."""
        if self._rows is None:
            self._rows = self.s.kernel.centered_rows(self.s.X)
        return self._rows

    def _shared_rows(self):
        """The folds' shared rows where this run may take them: C-SVC's rows (not ε-SVR's
        doubled ones, whose start reads the points' block: :meth:`_bound_twins`), else None."""
        return None if self.s.twins or self.s.shift is not None else self.shared

    def _shared_columns(self, cols: np.ndarray):
        """``(Q[:, cols], kernel values computed)`` from the float64 rows the folds of a
        cross-validation share (:meth:`gpath._smo.SharedRows.q_columns`), or None (no such
        rows, or no room for them)."""
        shared = self._shared_rows()
        return None if shared is None else shared.q_columns(self.s, cols)

    def _shared_matvecs(self, cols: np.ndarray, coef: np.ndarray):
        """``Σ_j Q[:, j] c_j`` and ``Σ_j |Q[:, j]| c_j`` over ``cols`` from the float64 rows
        the folds of a cross-validation share (:meth:`gpath._smo.SharedRows.q_sums`), or None
        (no such rows, or no room for them)."""
        shared = self._shared_rows()
        found = None if shared is None else shared.q_sums(self.s, cols, coef)
        if found is None:
            return None
        signed, share, computed = found
        self.n_other_evaluations += computed
        return signed, share

    def _column(self, k: int):
        """Column ``H[:, k]`` (device), computed once and left in the cache, unclaimed."""
        s = self.s
        slot = s.cache.slot(k)
        if slot < 0:
            slot = s.cache.store(k, s.q_column(k))
            s.cache.release(k)
        return s.cache.column(slot)

    def start_at(self, alpha: np.ndarray, twins: bool = False) -> None:
        """Put the state (at α = 0) at the feasible point ``alpha``: SC where α = U_k (their
        share of the margins as blocks of columns, not cached), Swork where strictly inside
        (their columns as blocks, cached, and 𝐌 factored), S0 elsewhere. With ``twins``
        (ε-SVR's doubled problem: rows 2i and 2i + 1 both x_i) the bound coefficients' shares
        come from the kernel block of the points (:meth:`_bound_twins`)."""
        s, xp = self.s, self.s.xp
        bounded = np.flatnonzero((alpha >= s.upper) & (s.upper > 0.0))
        free = np.flatnonzero((alpha > 0.0) & (alpha < s.upper))
        if twins:
            self._bound_twins(bounded)
        else:
            self._bound_columns(bounded)
        s.alpha[bounded] = s.upper[bounded]
        s.where[bounded] = I
        s.lo, s.hi = (to_device(v, xp, s.device) for v in _levels(s.where, s.upper))
        self.n_upper = int(bounded.size)
        self.sum_y_upper = float(s.y_host[bounded] @ s.upper[bounded])
        s.alpha[free] = alpha[free]  # before the factor: a singular 𝐌's null step moves them
        s.cache.reserve(free.size + _BLOCK)
        s.factor.reserve(s.factor.size + free.size)
        for lo in range(0, free.size, 256):
            part = free[lo : lo + 256]
            if part.size > 1 and not s.cache.holds_any(part):
                # Stored and entered from the block in hand (not read back slot by slot).
                q_kk = s.active.enter_block(part, s.y_host[part], self._new_columns(part))
            else:
                self._enter_block(part.tolist(), factor=False)
                q_kk = s.active.enter_block(part, s.y_host[part])
            self._entered_block(part, q_kk)

    def _bound_columns(self, bounded: np.ndarray) -> None:
        """:meth:`start_at`'s shares of the bound coefficients ``bounded`` (host ints) in the
        margins (u_C) and in the KKT scale: the sums of their columns, ``Σ_j Q[:, j] U_j`` and
        ``Σ_j |Q[:, j]| U_j``, from fresh blocks (:meth:`gpath._engine.Engine.q_matvecs`),
        counted among the columns computed."""
        s, U = self.s, self.s.upper[bounded]
        shared = self._shared_matvecs(bounded, U)
        if shared is not None:
            signed, share = shared
        else:
            signed, share = s.engine.q_matvecs(s.kernel, s.X, bounded, [U, U], s.y, s.ridge, (False, True), self.rows)
            s.cache.n_columns_computed += bounded.size
        self.uC = self.uC + signed
        s.add_bound_share(bounded, share, U)

    def _bound_twins(self, bounded: np.ndarray) -> None:
        """:meth:`start_at`'s shares of the bound coefficients ``bounded`` (host ints) in
        ε-SVR's doubled problem, from the kernel block of the n points, half the rows of the
        doubled columns: ``Q[2i + a, k] = y'_{2i+a} y'_k K(x_i, x_{k//2})``, plus the ridge
        where ``2i + a = k``. Each point's bound coefficients (one of α_i, α*_i for ε > 0)
        share its column. At make_friedman1 n = 10,000 as drawn (7,000 coefficients at C)
        this start took 0.30–0.37 s, against 0.67–1.01 s from the doubled columns."""
        s, xp = self.s, self.s.xp
        X = s.X[0::2, :]
        n = X.shape[0]
        point, U = bounded // 2, s.upper[bounded]
        signed = np.bincount(point, weights=s.y_host[bounded] * U, minlength=n)
        unsigned = np.bincount(point, weights=U, minlength=n)
        points = np.unique(point)
        # f = Σ_k y'_k U_k K(x_i, x_{k//2}) and h = Σ_k U_k |K(x_i, x_{k//2})|, over the points.
        f, h = s.engine.q_matvecs(s.kernel, X, points, [signed[points], unsigned[points]], None, 0.0,
                                  (False, True), s.kernel.centered_rows(X))
        self.n_other_evaluations += n * points.size
        # The ridge sits on the doubled diagonal only: Q_kk = K(x_i, x_i) + ridge.
        k_ii = to_host(s.kernel.diagonal(xp.take(X, to_device(point, xp, s.device), axis=0)))
        uC_diag, share_diag = np.zeros(s.n), np.zeros(s.n)
        uC_diag[bounded] = s.ridge * U
        share_diag[bounded] = (np.abs(k_ii + s.ridge) - np.abs(k_ii)) * U
        twin_of = to_device(np.arange(s.n) // 2, xp, s.device)
        self.uC = self.uC + s.y * xp.take(f, twin_of) + to_device(uC_diag, xp, s.device)
        s.add_bound_share(bounded, xp.take(h, twin_of) + to_device(share_diag, xp, s.device), U)

    # ------------------------------------------------------------------ the iteration
    def run(self, entering) -> tuple[str, float]:
        """Iterate from the pair ``entering`` (or from the state's own sets, given ``()``) to
        the optimum; return the status ("converged", "max_iter" or "stalled") and the largest
        KKT violation left (units of y f)."""
        s = self.s
        entering = list(entering)
        while True:
            self._enter_block(entering)
            self.n_iter += 1
            # A block whose step pushes every entering point straight back out is followed
            # by the paper's rule (one violator, or SMO's pair), which always moves.
            single = not self._solve_and_move(entering) and len(entering) > 2
            k, violation = self._refresh_yf()
            if not s.active.size:
                (lo, i_lo), (hi, i_hi) = s.bias_interval()
                violation = max(0.5 * (lo - hi), 0.0)
                threshold = self._threshold(violation)
                if violation <= threshold:
                    return self._finish(threshold)
                # Empty Swork: the bias is only bounded and the bounds cross; the most
                # violating pair is a feasible descent direction (as SMO's working pair). (A
                # block here was measured to crawl: its step sends all but a pair back to
                # their bounds, and Swork stays empty.)
                entering = [i_lo, i_hi]
            else:
                threshold = self._threshold(violation)
                if violation <= threshold:
                    return self._finish(threshold)
                # A block saves margin refreshes, O(n·|Swork|) each, and wastes kernel columns
                # and factor updates on the points its step sends straight back: worth it only
                # for a large Swork (measured: Bananas, |Swork| ≈ 60, ran 4× slower with 16).
                count = 1 if single else min(self.block_size, max(1, s.active.size // _SWORK_PER_ENTRY))
                entering = [k] if count == 1 else self._violators(threshold, count)
            if self.n_iter >= self.max_iter:
                self._restore_stalled()
                return "max_iter", self._max_violation()
            if self.block_size > 1 and self.n_iter >= self.block_budget:
                # Blocks that keep moving without converging (measured on ill-conditioned
                # kernels: high polynomial degrees): the paper's rule finishes from here.
                log.debug("SimpleSVM: %d block iterations, on with one violator", self.n_iter)
                self.block_size = 1

    def _finish(self, threshold: float) -> tuple[str, float]:
        s = self.s
        self._restore_stalled()
        # No free working variable: the bias is only bounded; take the middle of its interval.
        s.release_bounded_margin()
        violation = self._max_violation()
        return ("converged" if violation <= threshold else "stalled"), violation

    def _violators(self, threshold: float, count: int) -> list[int]:
        """The ``count`` points outside Swork that violate their condition most (beyond
        ``threshold``), most violating first."""
        s = self.s
        return s.engine.violators(s.yf, s.lo, s.hi, threshold, count).tolist()

    def _enter_block(self, entering: list[int], factor: bool = True) -> None:
        """Enter the points ``entering``: into the factor as one block where there are
        several, else (or where the block meets a tiny pivot) one at a time (:meth:`_enter`);
        the kernel columns that are not cached are computed as one block (a matrix product,
        not one column at a time). ``factor=False``: only cache their columns."""
        s = self.s
        new = np.array([k for k in entering if s.cache.slot(k) < 0], dtype=np.int64)
        if new.size > 1:
            # All claimed before any is released: a released slot is free to take, and the
            # block's later columns would overwrite its earlier ones when few slots are free.
            s.cache.store_block(new, self._new_columns(new))
            for k in new.tolist():
                s.cache.release(k)
        elif new.size:
            self._column(int(new[0]))
        if not factor:
            return
        if len(entering) > 1:
            # One block step of the factor (level 3: R read once, where one point at a time
            # reads it per point; Bananas, linear, |Swork| ≈ 1,500: 0.37 ms a point).
            block = np.array(entering, dtype=np.int64)
            self._entered_block(block, s.active.enter_block(block, s.y_host[block]))
        elif entering:
            self._enter(entering[0])

    def _entered_block(self, block: np.ndarray, q_kk) -> None:
        """Finish entering ``block`` (host ints), which :meth:`gpath._active.ActiveSet.enter_block`
        put into the factor (``q_kk``: their Q[k, k]); where it met a tiny pivot (``q_kk``
        None, the factor as it was), enter them one at a time (:meth:`_enter`), which decides
        on each."""
        if q_kk is None:
            for k in block.tolist():
                self._enter(k)
            return
        s = self.s
        for k in block.tolist():
            if s.where[k] == I:  # leaves SC: its share of uC goes
                self._upper_share(k, self._column(k), -1.0)
        s.place_all(block, M)
        self.h_max = max(self.h_max, float(q_kk.max()))

    def _new_columns(self, new: np.ndarray):
        """The columns ``H[:, new]`` (device, shape (n, len(new))) of points whose columns are
        not cached, as one block: from the rows the folds of a cross-validation share, or
        computed."""
        shared = self._shared_columns(new)
        if shared is None:
            return self.s.q_training_block(new, self.rows)
        block, computed = shared
        self.n_other_evaluations += computed
        return block

    def _enter(self, k: int) -> None:
        """Variable k (at a bound) joins Swork: its H column (cached, or computed once) and
        one row and column of 𝐌. A singular 𝐌 (k's column dependent on Swork's: duplicate
        points with ridge = 0) has a null direction along which every working margin stays
        put and the objective falls at rate |g_k|: move along it to the first bound and
        try again (or stop there, if k itself reaches its other bound)."""
        s = self.s
        col = self._column(k)
        sign = 1.0
        if s.where[k] == I:  # leaves SC: its share of uC goes
            self._upper_share(k, col, -1.0)
            sign = -1.0
        while True:
            try:
                h_kk = s.active.enter(k, s.y_host[k])
            except SingularMarginError:
                if self._null_step(k, sign, col):
                    return
                continue
            s.place(k, M)
            self.h_max = max(self.h_max, h_kk)
            return

    def _upper_share(self, k: int, col, sign: float) -> None:
        """Add (sign +1) or remove (−1) k's share U_k H[:, k] of uC."""
        s = self.s
        u_k = float(s.upper[k])
        self.uC = self.uC + (sign * u_k) * col
        s.set_bound_column(k, col, u_k if sign > 0 else 0.0)
        self.n_upper += int(sign)
        self.sum_y_upper += sign * s.y_host[k] * u_k

    def _null_step(self, k: int, sign: float, col) -> bool:
        """Move along the null direction of the singular 𝐌 with k; True if k hit its bound."""
        s = self.s
        W = s.active.members.copy()
        q_kW = s.engine.gather(col, W)
        z = s.active.solve(np.concatenate([[s.y_host[k]], q_kW]))
        dW = -sign * z[1:]
        a_k = s.alpha[k]
        idx = np.append(W, k)
        t, j, _ = first_bound_hit(s.alpha[idx], np.append(dW, sign), np.zeros(idx.size), s.upper[idx], idx, 0.0)
        if not np.isfinite(t) and s.ridge > 0.0:
            # K + ridge·I (the squared hinge's ridge + 1/C) is positive definite: its dual is
            # bounded, and a null direction is float64's, not the data's.
            k_max = scalars(s.xp, s.xp.max(s.kernel.diagonal(s.X)))[0]
            raise PathError(
                f"the working-set matrix is singular in float64: its diagonal term {s.ridge:.3g} (the ridge, "
                f"plus 1/C for loss='squared_hinge') is below float64's resolution next to kernel values of "
                f"{k_max:.3g}: standardize the features, or raise ridge; the model is unchanged"
            )
        if not np.isfinite(t):
            raise NotSeparableError(
                "C=inf (hard margin): the training data are not separable in the kernel's "
                "feature space (the dual is unbounded: a combination of the support vectors "
                f"with point {k} cancels in feature space); use a finite C or "
                "loss='squared_hinge'"
            )
        s.alpha[W] = np.clip(s.alpha[W] + t * dW, 0.0, s.upper[W])
        s.alpha[k] = a_k + sign * t
        if idx[j] == k:
            self._to_bound(k, sign > 0, col)
            return True
        self._leave(int(W[j]), dW[j] > 0)
        return False

    def _solve_and_move(self, entering: list[int]) -> bool:
        """Solve the working-set problem (eq. 4) and move toward its solution, dropping the
        first variable to hit a bound and solving again, until the solution is in the box.
        Returns whether α moved."""
        s = self.s
        moved, first = False, True
        while s.active.size:
            W = s.active.members.copy()
            rhs = np.ones(W.size + 1)
            rhs[0] = -self.sum_y_upper
            if self.n_upper or s.shift is not None:
                rhs[1:] -= s.engine.gather(self.uC, W)
            # The first solve of an iteration (after the inserts) checks the factor; the
            # re-solves after each bound step (deletes, orthogonal updates) skip the check.
            sol = s.active.solve(rhs, check=first)
            first = False
            a_W, u_W = s.alpha[W], s.upper[W]
            d = sol[1:] - a_W
            t, j, up = first_bound_hit(a_W, d, np.zeros(W.size), u_W, W, 0.0)
            if t >= 1.0:
                s.alpha[W] = np.clip(sol[1:], 0.0, u_W)
                s.b = float(sol[0])
                moved = True
                # Points set aside below ("entered and left at once") return once α moved:
                # beside another entering point the step can send back one whose violation
                # is real (measured: a pair of violators of a Platt fold, the other one
                # 75 times larger); left aside, the run ended without it and stalled.
                self._restore_stalled()
                break
            s.alpha[W] = np.clip(a_W + t * d, 0.0, u_W)
            k = int(W[j])
            self._leave(k, up)
            if t > 0.0:
                moved = True
                self._restore_stalled()
            elif not moved and k in entering and len(entering) <= 2:
                # k entered and left at once: its violation is round-off (the exact step
                # moves a lone entering variable, or SMO's pair, into the box). Skip it until
                # something moves.
                self.stalled.append(k)
                s.lo[k], s.hi[k] = -np.inf, np.inf
        if s.active.size == 1:
            # A lone working variable is pinned by yᵀα = 0; with one box for every point that
            # is a multiple of it, a bound, and it leaves; with per-point boxes it may be pinned
            # strictly inside its own box, and stays.
            k = int(s.active.members[0])
            a, u = s.alpha[k], s.upper[k]
            if a <= 1e-12 * u or a >= u * (1.0 - 1e-12):
                self._leave(k, a > 0.5 * u, count=False)
        return moved

    def _leave(self, k: int, upper: bool, count: bool = True) -> None:
        s = self.s
        s.active.leave(k)
        self._to_bound(k, upper, s.cache.column(s.cache.slot_of[k]))
        self.n_bound_steps += count

    def _to_bound(self, k: int, upper: bool, col) -> None:
        """Put k at α = U_k (SC) or α = 0 (S0) (its column stays cached)."""
        s = self.s
        s.alpha[k] = s.upper[k] if upper else 0.0
        s.place(k, I if upper else O)
        if upper:
            self._upper_share(k, col, 1.0)

    def _restore_stalled(self) -> None:
        for k in self.stalled:
            self.s.place(k, self.s.where[k])
        self.stalled.clear()

    # ------------------------------------------------------------------ margins and checks
    def _refresh_yf(self) -> tuple[int, float]:
        """y f = H[:, W] α_W + uC + y b, on the device, from α itself (one pass), and the most
        violating point outside Swork with its violation (units of y f)."""
        s = self.s
        W = s.active.members
        return s.engine.margins(s.yf, s.lo, s.hi, s.cache, s.active.slots, s.alpha[W], s.b, s.y, 1.0,
                                self.uC if self.n_upper or s.shift is not None else None)

    def _threshold(self, violation: float) -> float:
        """The violation (units of y f) below which the margins are exact: ``tol_margin``, or
        the round-off level of y f = Hα + y b, ``_ROUNDOFF·(|b| + kkt_scale())``, if larger.

        The scale is first bounded by ``1 + |b| + max_k H_kk·Σα`` (free); it is computed (a
        product with the cached columns) only where that bound would let ``violation`` pass,
        since the bound can exceed it by many orders of magnitude (polynomial kernels)."""
        s = self.s
        bound = max(self.tol_margin, _ROUNDOFF * (1.0 + abs(s.b) + self.h_max * float(np.sum(s.alpha))))
        if violation > bound:
            return bound
        return max(self.tol_margin, _ROUNDOFF * (abs(s.b) + s.kkt_scale()))

    def _max_violation(self) -> float:
        s, xp = self.s, self.s.xp
        outside = xp.max(xp.maximum(xp.maximum(s.lo - s.yf, s.yf - s.hi), 0.0))
        W = s.active.members
        if not W.size:
            return scalars(xp, outside)[0]
        on = xp.max(xp.abs(xp.take(s.yf, to_device(W, xp, s.device)) - 1.0))
        return max(scalars(xp, outside, on))

    def check_separated(self) -> None:
        """Hard margin with ridge > 0: the points are separated in the feature space of
        K + ridge·I always; they are separated with K iff every y_i f(x_i) > 0, where
        y_i f(x_i) = 1 − ridge·α_i on Swork (y f ≥ 1 on S0)."""
        s = self.s
        W = s.active.members
        j = int(np.argmax(s.alpha[W]))
        margin_k = 1.0 - s.ridge * s.alpha[W[j]]
        if margin_k <= 0.0:
            raise NotSeparableError(
                f"C=inf (hard margin): the training data are not separable in the kernel's "
                f"feature space: the hard-margin solution on K + ridge·I (ridge={s.ridge:g}) has "
                f"y f(x) = {margin_k:.3g} <= 0 with K at training point {int(W[j])}; use a finite C "
                f"or loss='squared_hinge'"
            )
