"""The C regularization path of the C-SVC (Hastie, Rosset, Tibshirani & Zhu 2004), followed in
the notation of MID-SVM (Karasuyama & Takeuchi 2009, section 3). The estimator is
:class:`gpath.SVCPath` (:mod:`gpath.cpath`).

With the kernel fixed, the points of O keep α = 0 and those of I keep α at their box, which
moves with C: ``α_i = C w_i`` (``w_i = 1`` unless the point is weighted). Between two events
the margin equations ``y_Mᵀα_M + C y_Iᵀw_I = 0`` and ``Q_MM α_M + C Q_MI w_I + y_M b = 1``
(../shared/DESIGN.md, "The C path") therefore move linearly in C:

    𝐌 [db/dC; dα_M/dC] = −[δ; u_M],   δ = y_Iᵀw_I,   u = Q[:, I] w_I

and every margin moves at ``dy f/dC = ψ = y·db/dC + Q[:, M] dα_M/dC + u``, which is MID's
eq. 11 with the driver u in place of ``Q_{:,A}(C1 − α_A)``. The events are MID's: a margin
coefficient reaching 0 or its moving box ``C w_j`` (``α_j + tφ_j = (C + t) w_j``), and a point
of O or I reaching y f = 1. The margin set may be empty (section 3.3): then yᵀα = C δ forces
δ = 0, the bias is only bounded, and the path keeps it until a point reaches the margin. The ratio test runs in C itself
(step t = ΔC), with the one tie rule of :mod:`gpath._ratio`; u and δ change by one kernel
column when a point enters or leaves I (as SimpleSVM keeps its ``uC``).

So α(C) and b(C) are piecewise linear with kinks at the breakpoints, which :func:`c_path`
records; so is every decision value f(x; C), and where a held-out decision value changes sign
is solved in closed form on its segment (:func:`error_steps`): the exact validation error as a
function of C is a step function.

svmpath (Hastie et al.) parametrizes by λ = 1/C with α scaled to [0, 1]; both views give the
same breakpoints.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from . import _cpath_numba
from ._array_api import get_namespace_and_device, scalars, to_device, to_host
from ._path import _REFINE_TOL, I, M, O, PathError, SVCState
from ._ratio import EPS, first_bound_hit, first_event, rate_is_round_off
from .linalg import single_threaded_host_blas
from .persistence import record

__all__ = ["CPath", "CVErrorPath", "MSEPath", "c_path", "decision_values", "error_steps", "interpolate", "mean_error_steps",
           "mean_squared_error_paths", "path_error_steps", "squared_error_path"]

# The margin equations are re-checked (one n × |M| product) every this many breakpoints, and
# repaired when their residual, relative to the scale of y f, exceeds _CHECK_TOL. At the
# start, which every later point follows from, and at C_max, which the model keeps, they are
# held to round-off, as the end of every fit and update holds them (_ROUND_OFF): with 𝐌's
# condition near 1e10, residuals of 1e-11 there moved decision values by 1e-4
# (tests/test_cpath.py). Both then take one more step of iterative refinement
# (:meth:`_CPathRun._correct`).
_CHECK_EVERY = 64
_CHECK_TOL = 1e-10
_ROUND_OFF = _REFINE_TOL
# The driver u may come from the start's margins while their round-off over C is below this
# share of u, about u's own (else from kernel blocks: :meth:`_CPathRun._driver_from_margins`).
_DRIVER_TOL = 1e-14
_FLOAT_EPS = float(np.finfo(np.float64).eps)


@record
@dataclass(frozen=True)
class CPath:
    """The C regularization path: the exact solution at C_min, at every breakpoint, and at C_max.

    Between consecutive points α and b are linear in C, so linear interpolation gives the
    exact solution anywhere in [C_min, C_max] (:func:`interpolate`).

    Attributes
    ----------
    Cs : ndarray of shape (n_points,), float64
        C at each path point, increasing: C_min, the breakpoints (several events at one C
        make one point), C_max.
    alpha : ndarray of shape (n_points, n_samples), float64
        Dual coefficients at each point, in training order.
    intercept : ndarray of shape (n_points,), float64
        The bias b at each point.
    margin_size : ndarray of shape (n_points,), int64
        |M| after each point.
    n_breakpoints : int
        Events passed (index-set changes).
    n_refinements : int
        Times the margin equations were repaired (refactor and fresh margins) for round-off
        between the start and C_max (the two ends' step of iterative refinement not counted).
    time : float
        Wall time in seconds: the start (SimpleSVM at C_min) and the path.
    """

    Cs: np.ndarray
    alpha: np.ndarray
    intercept: np.ndarray
    margin_size: np.ndarray
    n_breakpoints: int
    n_refinements: int
    time: float


@single_threaded_host_blas
def c_path(state: SVCState, C_max: float, *, start_time=None, events=None) -> CPath:
    """Follow the exact solution ``state`` (at ``state.C``) along C up to ``C_max``.

    Parameters
    ----------
    state : SVCState
        An exact C-SVC solution at C = ``state.C`` (SimpleSVM's, after
        ``release_bounded_margin``); each point's box ``upper`` is ``C w_i`` with weights
        ``w_i ≥ 0`` that stay fixed along the path. Moved in place to the solution at C_max.
        It may carry a linear term (``shift``: ε-SVR's doubled rows, :mod:`gpath.svr`): the
        levels it sets do not move with C, so the path is the same (Gunter & Zhu 2007).
    C_max : float
        End of the path, ≥ ``state.C``.
    start_time : float or None
        ``time.perf_counter()`` at the start of the fit (None: now), for ``CPath.time``.
    events : list or None
        A list to log ``(kind, point)`` of every event in (tests), or None.

    Returns
    -------
    CPath

    Raises
    ------
    PathError
        On cycling among degenerate breakpoints, or a broken invariant (an empty margin set
        with y_Iᵀw_I ≠ 0).
    SingularMarginError
        If 𝐌 becomes singular (duplicate margin points with ``ridge=0``).

    References
    ----------
    T. Hastie, S. Rosset, R. Tibshirani and J. Zhu, "The entire regularization path for the
    support vector machine", JMLR 5 (2004), sections 3–4 (the path is piecewise linear in
    λ = 1/C; its events). Karasuyama & Takeuchi (2009), eqs. 10–11 (the direction in this
    notation) and section 3.3 (the empty margin, here always its case δ = 0). L. Gunter and
    J. Zhu, "Efficient computation and model selection for the support vector regression",
    Neural Computation 19(6), 2007 (the ε-SVR path in λ = 1/C).
    """
    start = time.perf_counter() if start_time is None else start_time
    run = _CPathRun(state, float(C_max), events)
    run.run()
    return run.result(time.perf_counter() - start)


class _CPathRun:
    """The working variables of one C path on ``state`` (moved in place).

    ``w`` are the weights (box ``C w_i``), ``in_I`` marks the set I on the host, ``u`` is
    ``Q[:, I] w_I`` on the device and ``delta`` is ``y_Iᵀw_I``; the record grows
    geometrically and is trimmed at the end.
    """

    def __init__(self, state: SVCState, C_max: float, events=None):
        s = self.s = state
        if C_max < s.C:
            raise ValueError(f"C_max must be >= the state's C={s.C!r}; got {C_max!r}")
        self.C_max = C_max
        self.events = events
        self.w = s.upper / s.C
        self.in_I = s.where == I
        # The driver comes from the start's margins: they must hold to round-off (as a fit
        # leaves them; a start may also be loaded). Each unit of C carries u's share of their
        # error on to the margins: a start at 2.1e-11 moved decision values 1e-4 by 37,000
        # times C_min.
        s.refine(_ROUND_OFF)
        self._correct()
        self.u = self._driver_from_margins()
        self.delta = float(s.y_host[self.in_I] @ self.w[self.in_I])
        # max_k Q_kk and the largest level offset |shift|, for the scale of y f (as
        # SVCState.kkt_scale), read once.
        self.q_max = scalars(s.xp, s.xp.max(s.kernel.diagonal(s.X)))[0] + s.ridge if s.n else 0.0
        self.shift_max = 0.0 if s.shift is None or not s.n else scalars(s.xp, s.xp.max(s.xp.abs(s.shift)))[0]
        self.delta_tiny = EPS * (1.0 + float(np.sum(self.w)))  # |δ| below this is round-off
        self.n_breakpoints = self.zero_steps = self.n_refinements = 0
        # The record: C, b, |M| and α of each path point, grown geometrically (a list of
        # arrays that the compiled loop writes into as well), and the number of points.
        self.rec = self._record_arrays(64)
        self._record()

    # -- the driver u = Q[:, I] w_I ----------------------------------------------
    def _upper_share(self, rows: np.ndarray):
        """``Q[:, rows] w_rows`` on the device, from fresh kernel blocks."""
        return self.s.q_matvec(rows, self.w[rows])

    def _driver_from_margins(self):
        """u from the exact margins of the start: ``y f = Q[:, M] α_M + C Q[:, I] w_I + y b``, so
        ``u = (y f − Q[:, M] α_M − y b) / C`` (one product with the cached margin columns, no
        kernel evaluation). Its round-off, ε·(1 + C Σ|Q|)/C, is that of y f over C (the start
        is refined to round-off first): relative to u, the size of y f's own. The periodic
        check repairs the rest (:meth:`_refine`).

        A state with a linear term (ε-SVR) stores ``y f + shift``, and its shift (the targets)
        can dwarf ``C Q[:, I] w_I`` at a small C_min: taking the shift off leaves u the
        round-off of the targets over C (targets of 3e6 at C = 1e-3: KKT violations of 2e-5
        inside the path). Where that round-off passes ``_DRIVER_TOL`` of u, u comes from
        kernel blocks of I instead."""
        s = self.s
        xp = s.xp
        if not self.in_I.any():
            return xp.zeros(s.n, dtype=xp.float64, device=s.device)
        members = s.active.members
        coef = np.zeros(s.cache.capacity)
        coef[s.active.slots] = s.alpha[members]
        yf = s.yf if s.shift is None else s.yf - s.shift
        u = (yf - s.cache.matvec(coef) - s.b * s.y) / s.C
        if s.shift is not None:
            size, stored, shift = scalars(xp, xp.max(xp.abs(u)), xp.max(xp.abs(s.yf)), xp.max(xp.abs(s.shift)))
            if _FLOAT_EPS * (stored + shift) / s.C > _DRIVER_TOL * size:
                u = self._upper_share(np.flatnonzero(self.in_I))
        return u

    def _column(self, k: int):
        """Q[:, k] of a margin point (cached)."""
        s = self.s
        return s.cache.column(s.cache.slot_of[k])

    # -- moving C ------------------------------------------------------------------
    def _sync(self) -> None:
        """The boxes ``C w`` and α = C w on I at the current C. The loop itself reads α and
        the boxes of the margin points only; this brings the rest up to date for the checks
        and repairs of :class:`SVCState` and for the end."""
        s = self.s
        s.upper = s.C * self.w
        s.alpha[self.in_I] = s.upper[self.in_I]

    def _bound_hit(self, members, alpha, phi):
        """First margin coefficient to reach 0 or its moving box, ``α_j + tφ_j = 0`` or
        ``α_j + tφ_j = (C + t) w_j``: the ratio test of :func:`gpath._ratio.first_bound_hit`
        (one tie rule) on α_j ∈ [0, ∞) and on the slack ``C w_j − α_j ∈ [0, ∞)``, which moves at
        ``w_j − φ_j``. Returns (t, point, upward)."""
        m = members.size
        w = self.w[members]
        values = np.empty(2 * m)
        values[:m], values[m:] = alpha, self.s.C * w - alpha
        rates = np.empty(2 * m)
        rates[:m], rates[m:] = phi, w - phi
        ids = np.empty(2 * m, dtype=np.int64)
        ids[:m], ids[m:] = members, members
        t, j, _ = first_bound_hit(values, rates, np.zeros(2 * m), np.full(2 * m, np.inf), ids, 1.0)
        if j < 0:
            return np.inf, -1, True
        return t, int(members[j % m]), j >= m

    # -- the loop --------------------------------------------------------------
    def run(self) -> None:
        """Follow C to C_max (the structure of :meth:`gpath._path._PathRun.run`). NumPy arrays
        run the compiled loop (:mod:`gpath._cpath_numba`), every other namespace this readable
        one."""
        s = self.s
        if s.engine.name == "numba":
            _cpath_numba.follow(self, _CHECK_EVERY)
        else:
            self._run()
        self._refine(_ROUND_OFF)
        self._correct()
        self._record(replace=self.rec[0][self.rec[4][0] - 1] == s.C)

    def _run(self) -> None:
        s = self.s
        engine, active = s.engine, s.active
        max_breakpoints = 50 * (s.n + 10)
        while True:
            if self.n_breakpoints > max_breakpoints or self.zero_steps > 2 * s.n + 10:
                raise self.cycling()
            delta = self.delta if abs(self.delta) > self.delta_tiny else 0.0  # round-off of a balanced I
            members = active.members
            if not members.size and delta != 0.0:
                raise self.empty_margin_error()
            # Direction per unit of C: [db; dα_M] = φ, dy f = ψ (module docstring).
            if members.size:
                rhs = np.empty(members.size + 1)
                rhs[0] = delta
                rhs[1:] = engine.gather(self.u, members)
                phi = -active.solve(rhs)
                alpha_m = s.alpha[members]
                bound = self._bound_hit(members, alpha_m, phi[1:])
            else:
                phi = np.zeros(1)
                bound = (np.inf, -1, True)
            limit = self.C_max - s.C
            crossing = self._crossing(phi, min(bound[0], limit))
            t, event = first_event(bound, crossing, limit)
            # Move C, α_M and b by t (the boxes of I with C: _sync); y f moved in the engine's pass.
            s.C = self.C_max if event is None else s.C + t
            if members.size:
                # Rates below round-off are not events (first_bound_hit); clip what they move.
                s.alpha[members] = np.minimum(np.maximum(alpha_m + t * phi[1:], 0.0), s.C * self.w[members])
            s.b += t * float(phi[0])
            if event is None:
                return
            self.n_breakpoints += 1
            self.zero_steps = self.zero_steps + 1 if t == 0.0 else 0
            if self.events is not None:
                self.events.append((event[0], event[1]))
            self._apply(event)
            self.after_event(t)

    def _crossing(self, phi, limit: float) -> tuple:
        """The first crossing of the segment with rates φ and the move of the margins to it
        (:meth:`gpath._engine.Engine.step`), where a zero-length crossing whose rate is
        round-off of its own terms (:func:`gpath._ratio.rate_is_round_off`) is no event: that
        point's level is lifted for this segment, the test run again, and the level put back."""
        s = self.s
        lifted = []
        while True:
            t, k, up = crossing = s.engine.step(s.yf, s.lo, s.hi, s.cache, s.active.slots, phi[1:], phi[0], s.y,
                                                1.0, self.u, limit)
            if t != 0.0 or k < 0 or not self._round_off_rate(k, phi):
                break
            lifted.append(k)
            if up:
                s.hi[k] = math.inf
            else:
                s.lo[k] = -math.inf
        for k in lifted:
            s.place(k, int(s.where[k]))
        return crossing

    def _round_off_rate(self, k: int, phi) -> bool:
        """Whether point k's margin rate along φ is round-off of its terms (host)."""
        s = self.s
        row = s.cache.row_entries(k, s.active.slots)
        u_k = scalars(s.xp, self.u[k])[0]
        return bool(rate_is_round_off(row, np.ascontiguousarray(phi[1:]), float(phi[0]), float(s.y_host[k]), u_k))

    def after_event(self, t: float) -> None:
        """After an event at step t: record the point (unless the step was zero: the same
        solution), and every ``_CHECK_EVERY`` breakpoints check the round-off."""
        if t > 0.0:
            self._record()
        if self.n_breakpoints % _CHECK_EVERY == 0:
            self._refine()

    def _apply(self, event) -> None:
        kind, k, upward = event
        s = self.s
        if kind == "crossing":
            self._margin_insert(k)
        elif upward:  # α_k reached its box: M -> I, its column joins u
            column = self._column(k)
            s.active.leave(k)
            s.alpha[k] = s.C * self.w[k]
            s.place(k, I)
            self.in_I[k] = True
            self.u = self.u + float(self.w[k]) * column
            self.delta += s.y_host[k] * self.w[k]
        else:  # α_k reached 0: M -> O
            s.active.leave(k)
            s.alpha[k] = 0.0
            s.place(k, O)

    def _margin_insert(self, k: int) -> None:
        """Point k (of O or I) reached y f = 1: it enters M; from I its column leaves u."""
        s = self.s
        s.active.enter(k, s.y_host[k])
        if self.in_I[k]:
            s.alpha[k] = s.C * self.w[k]
            self.in_I[k] = False
            self.u = self.u - float(self.w[k]) * self._column(k)
            self.delta -= s.y_host[k] * self.w[k]
        s.place(k, M)
        s.yf[k] = 1.0

    def empty_margin_error(self) -> PathError:
        """An empty margin set with δ ≠ 0. At an exact solution it cannot occur: with M empty,
        ``yᵀα = C y_Iᵀw_I = C δ`` must vanish. So the empty margin of the C path is always
        section 3.3's case δ = 0, where b is only bounded; the path keeps it fixed (an optimal
        choice) until a point reaches the margin and enters M."""
        return PathError(f"broken invariant: the margin set is empty but y_I^T w_I = {self.delta:.3g} != 0 "
                         f"(y^T alpha would not vanish) at C = {self.s.C:.6g}")

    def _refine(self, tol: float = _CHECK_TOL) -> None:
        """Check the margin equations against α (:meth:`SVCState.margin_residual`, one product
        with the margin columns) relative to the scale of y f, ``1 + max_k Q_kk Σ α``; past
        ``tol`` repair them (:meth:`SVCState.refine`: refactor, correct, fresh margins)
        and recompute the driver u from kernel blocks."""
        s = self.s
        self._sync()
        scale = 1.0 + self.q_max * float(np.sum(s.alpha)) + self.shift_max
        residual = float(np.abs(s.margin_residual()).max()) / scale
        if residual > tol:
            s.refine(tol)
            self.n_refinements += 1
            self.u = self._upper_share(np.flatnonzero(self.in_I))

    def _correct(self) -> None:
        """One step of iterative refinement of the margin equations, whatever their residual:
        the residual from α (:meth:`SVCState.margin_residual`, the cached margin columns), one
        solve with the factor, and every margin moved by the correction (the same columns),
        O(n·|M|). A residual below :data:`_ROUND_OFF` (45 ε of the scale, where a repair stops)
        still moved an ε-SVR path on raw WaterFlow rows (ten margin points in seven correlated
        features, terms of 2.3e9) 5.5e-4 from its sets' float64 re-solve at C_max; this step
        leaves it 1.6e-5 off (tests/test_svrpath.py). A correction that would leave a box is
        not taken: it is round-off of a point at its bound, which the path's events and repairs
        handle (:meth:`SVCState.refine`). The driver u, taken from the margins less the margin
        set's share, does not move."""
        s = self.s
        members = s.active.members
        if not members.size:
            return
        self._sync()
        delta = s.factor.solve(s.margin_residual())
        corrected = s.alpha[members] + delta[1:]
        if np.any(corrected < 0.0) or np.any(corrected > s.upper[members]):
            return
        coef = np.zeros(s.cache.capacity)
        coef[s.active.slots] = delta[1:]
        s.yf = s.yf + s.cache.matvec(coef) + float(delta[0]) * s.y
        s.alpha[members] = corrected
        s.b += float(delta[0])

    def cycling(self) -> PathError:
        return PathError(
            f"the C path did not reach C_max after {self.n_breakpoints} breakpoints "
            f"({self.zero_steps} of them zero-length in a row): degenerate cycling"
        )

    # -- the record ----------------------------------------------------------------
    def _record_arrays(self, capacity: int) -> list:
        n = self.s.n
        return [np.zeros(capacity), np.zeros(capacity), np.zeros(capacity, dtype=np.int64),
                np.zeros((capacity, n)), np.zeros(1, dtype=np.int64)]

    def _resize_record(self, capacity: int) -> None:
        """Give the record room for exactly ``capacity`` points, in place where NumPy can.

        The α record of a long path is large: points × n floats, 61 MB for Bananas 2,000's
        3,838 breakpoints. Grown by doubling copies and copied once more to its length, its
        copies took 0.18–0.33 s of the first such path in a process (under the profiler), as
        much as the path itself. ``ndarray.resize`` reallocates instead, which the C library
        does without a copy where it can (and a shrunk block gives its tail back). NumPy
        refuses while anything else refers to the array (a view would dangle); such an array
        is copied instead."""
        for i in range(4):  # (no loop variable holding an array: NumPy would refuse)
            shape = (capacity,) + self.rec[i].shape[1:]
            try:
                self.rec[i].resize(shape)
            except ValueError:
                kept = min(capacity, self.rec[i].shape[0])
                grown = np.zeros(shape, dtype=self.rec[i].dtype)
                grown[:kept] = self.rec[i][:kept]
                self.rec[i] = grown

    def record_with_room(self) -> tuple:
        """The record (a tuple of its arrays, for the compiled loop), grown (doubled) if it
        has no room for one more point."""
        if self.rec[4][0] == self.rec[0].shape[0]:
            self._resize_record(2 * self.rec[0].shape[0])
        return tuple(self.rec)

    def _record(self, replace: bool = False) -> None:
        """Append the current point (α = C w on I), or overwrite the last one."""
        s = self.s
        Cs, b, m, alpha, count = self.record_with_room()
        r = int(count[0]) - 1 if replace else int(count[0])
        Cs[r], b[r], m[r] = s.C, s.b, s.active.size
        alpha[r] = np.where(self.in_I, s.C * self.w, s.alpha)
        count[0] = r + 1

    def result(self, seconds: float) -> CPath:
        self._resize_record(int(self.rec[4][0]))
        Cs, b, m, alpha, _ = self.rec
        return CPath(Cs=Cs, alpha=alpha, intercept=b, margin_size=m, n_breakpoints=self.n_breakpoints,
                     n_refinements=self.n_refinements, time=seconds)


# ---------------------------------------------------------------------- evaluation
def segment(params: np.ndarray, at: float) -> tuple[int, float]:
    """Where ``at`` lies on a piecewise-linear path whose points are at ``params``: the C path
    (:class:`CPath`) and the outlier paths (:class:`gpath._outlier.OutlierPath`).

    Parameters
    ----------
    params : ndarray of shape (n_points,), float64
        The parameter at each point, monotone along the path in either direction; a value
        repeats at a jump (the outlier path's D-step), and ``at`` there names the last point.
    at : float
        Between ``params[0]`` and ``params[-1]`` (the caller checks).

    Returns
    -------
    i : int
    w : float
        The solution at ``at`` is ``(1 − w)·v[i] + w·v[i + 1]`` for every quantity v linear
        along the path (α, b); w = 0 exactly at a point (then ``i + 1`` may not exist).
    """
    order = 1.0 if params[-1] >= params[0] else -1.0
    ts, t = order * params, order * float(at)
    i = min(max(int(np.searchsorted(ts, t, side="right")) - 1, 0), ts.shape[0] - 1)
    if ts[i] == t or i == ts.shape[0] - 1:
        return i, 0.0
    return i, float((t - ts[i]) / (ts[i + 1] - ts[i]))


def interpolate(path: CPath, C: float) -> tuple[np.ndarray, float]:
    """α and b at C, exactly: linear between the path points around C (a coefficient at the box
    C, or at −C for ε-SVR's β, at both ends of the segment is C, or −C, exactly).

    Parameters
    ----------
    path : CPath
    C : float
        In [path.Cs[0], path.Cs[-1]].

    Returns
    -------
    alpha : ndarray of shape (n_samples,)
    b : float
    """
    Cs = path.Cs
    i, w = segment(Cs, C)
    if w == 0.0:
        return path.alpha[i], float(path.intercept[i])
    a0, a1 = path.alpha[i], path.alpha[i + 1]
    alpha = (1.0 - w) * a0 + w * a1
    # A coefficient at its box at both ends (±C: ε-SVR's β) is there all along; the weighted
    # sum could land an ulp inside the box and make a point of I look free to a KKT check.
    alpha[(a0 == Cs[i]) & (a1 == Cs[i + 1])] = C
    alpha[(a0 == -Cs[i]) & (a1 == -Cs[i + 1])] = -C
    return alpha, float((1.0 - w) * path.intercept[i] + w * path.intercept[i + 1])


def decision_values(kernel, X_train, y_host, alpha, b, X, xp, device):
    """Decision values of the rows X for one or several coefficient vectors.

    Parameters
    ----------
    kernel : Kernel
    X_train : device array of shape (n_samples, n_features)
    y_host : ndarray of shape (n_samples,), ±1
    alpha : ndarray of shape (k, n_samples)
        Coefficient vectors (path points).
    b : ndarray of shape (k,)
    X : device array of shape (n_rows, n_features)

    Returns
    -------
    F : device array of shape (n_rows, k)
        ``F[:, j] = Σ_i α_ji y_i K(X, x_i) + b_j``.
    """
    used = np.flatnonzero(np.any(alpha != 0.0, axis=0))
    bias = to_device(np.asarray(b, dtype=np.float64), xp, device)
    if not used.size:
        return xp.zeros((X.shape[0], alpha.shape[0]), dtype=xp.float64, device=device) + bias[None, :]
    if used.size < alpha.shape[1]:
        alpha, y_host = alpha[:, used], y_host[used]
        X_train = xp.take(X_train, to_device(used, xp, device), axis=0)
    K = kernel(X, X_train) * to_device(y_host, xp, device)[None, :]
    return K @ to_device(alpha, xp, device).T + bias[None, :]


def path_error_steps(path: CPath, kernel, X_train, y_host, X_val, positive: np.ndarray):
    """The exact errors of the held-out rows ``X_val`` (device; ``positive``: host bools, the
    label is the positive class) over the C path ``path`` of the training rows ``X_train``
    (device) with labels ``y_host`` (±1): :func:`error_steps` of their decision values at the
    path points. Returns ``(knots, errors)``."""
    xp, device = get_namespace_and_device(X_train)
    F = to_host(decision_values(kernel, X_train, y_host, path.alpha, path.intercept, X_val, xp, device))
    return error_steps(path.Cs, F, positive)


def error_steps(Cs: np.ndarray, F: np.ndarray, positive: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The exact number of errors of held-out points as a step function of C.

    Each decision value is linear in C between path points, so its sign changes where the
    line through its values at the two ends crosses 0: ``C* = C_j + (C_{j+1} − C_j)·f_j /
    (f_j − f_{j+1})``. A point is predicted positive where f > 0, as :meth:`predict` does.

    Parameters
    ----------
    Cs : ndarray of shape (n_points,)
        The path's C values (non-decreasing).
    F : ndarray of shape (n_val, n_points)
        Decision values of the held-out points at the path points (host).
    positive : ndarray of shape (n_val,), bool
        Whether each point's label is the positive class.

    Returns
    -------
    knots : ndarray of shape (n_knots,)
        C_min, every C where some prediction changes, and C_max (sorted, distinct; two
        equal values [C, C] for a path of one point).
    errors : ndarray of shape (n_knots − 1,), int64
        Misclassified held-out points on each open interval between consecutive knots (for
        a path of one point: at that point).
    """
    pred = F > 0.0
    wrong = pred != positive[:, None]
    errors0 = int(np.count_nonzero(wrong[:, 0]))
    if Cs.size == 1 or Cs[0] == Cs[-1]:
        return np.array([Cs[0], Cs[-1]]), np.array([int(np.count_nonzero(wrong[:, -1]))])
    i, j = np.nonzero(pred[:, 1:] != pred[:, :-1])
    f0, f1 = F[i, j], F[i, j + 1]
    c0, c1 = Cs[j], Cs[j + 1]
    share = np.clip(f0 / (f0 - f1), 0.0, 1.0)
    at = np.where(c1 > c0, c0 + (c1 - c0) * share, c0)
    at = np.minimum(np.maximum(at, c0), c1)
    toggle = np.where(wrong[i, j + 1], 1, -1)
    knots = np.unique(np.concatenate([[Cs[0]], at, [Cs[-1]]]))
    where = np.searchsorted(knots, at)
    change = np.bincount(where, weights=toggle, minlength=knots.size).astype(np.int64)
    errors = errors0 + np.cumsum(change)[:-1]
    return knots, errors


@record
@dataclass(frozen=True)
class CVErrorPath:
    """The exact held-out 0-1 error as a step function of C, for one kernel.

    Attributes
    ----------
    Cs : ndarray of shape (n_knots,), float64
        The knots: C_min, every C at which some held-out prediction changes, and C_max
        (sorted, distinct; ``[C, C]`` when C_min = C_max).
    error : ndarray of shape (n_knots − 1,), float64
        Mean over folds of the fraction of misclassified held-out points, on each open
        interval ``(Cs[i], Cs[i + 1])`` (constant there: a step function).
    fold_errors : ndarray of shape (n_folds, n_knots − 1), float64
        The same per fold.
    best_C : float
        The geometric middle ``sqrt(Cs[i] Cs[i + 1])`` of the interval of least mean error
        (the one of smallest C among ties): a C inside it, where the error is exactly
        ``best_error``.
    best_error : float
    gamma : float
        The kernel's gamma (resolved).
    n_breakpoints : ndarray of shape (n_folds,), int64
        Breakpoints of each fold's C path.
    time : float
        Wall time of the start at C_min and of the fold paths and their evaluation, summed
        (seconds).
    """

    Cs: np.ndarray
    error: np.ndarray
    fold_errors: np.ndarray
    best_C: float
    best_error: float
    gamma: float
    n_breakpoints: np.ndarray
    time: float


def mean_error_steps(folds, gamma: float, n_breakpoints, seconds: float) -> CVErrorPath:
    """Average the step functions of several folds on the union of their knots.

    Parameters
    ----------
    folds : list of (knots, errors, n_val)
        Each fold's :func:`error_steps` and its number of held-out points; every fold's knots
        start at the same C_min and end at the same C_max.
    gamma : float
    n_breakpoints : sequence of int
    seconds : float

    Returns
    -------
    CVErrorPath
    """
    knots = np.unique(np.concatenate([k for k, _, _ in folds]))
    if knots.size == 1:  # C_min = C_max: one point
        knots = np.array([knots[0], knots[0]])
        fold_errors = np.array([[e[0] / n] for _, e, n in folds])
    else:
        left = knots[:-1]
        fold_errors = np.array([e[np.searchsorted(k, left, side="right") - 1] / n for k, e, n in folds])
    error = fold_errors.mean(axis=0)
    i = int(np.argmin(error))
    best_C = float(np.sqrt(knots[i] * knots[i + 1]))
    return CVErrorPath(Cs=knots, error=error, fold_errors=fold_errors, best_C=best_C,
                       best_error=float(error[i]), gamma=float(gamma),
                       n_breakpoints=np.asarray(n_breakpoints, dtype=np.int64), time=float(seconds))


@record
@dataclass(frozen=True)
class MSEPath:
    """The exact held-out mean squared error of a regression path as a function of C.

    Each decision value is linear in C between path points, so the mean squared error is a
    quadratic in C on each segment: ``error(C) = coef[i, 0] + coef[i, 1] τ + coef[i, 2] τ²``
    with ``τ = (C − Cs[i]) / (Cs[i + 1] − Cs[i])`` on ``[Cs[i], Cs[i + 1]]``.

    Attributes
    ----------
    Cs : ndarray of shape (n_points,), float64
        The path's points (``[C, C]`` for a path of one point; for a cross-validation curve
        the union of the folds' points).
    coef : ndarray of shape (n_points − 1, 3), float64
        The quadratic of each segment, in τ.
    best_C : float
        Where the error is least (the smallest such C among ties): the vertex of a segment's
        quadratic, or a path point.
    best_error : float
        The error there.
    time : float
        Wall time of the evaluation (seconds).
    """

    Cs: np.ndarray
    coef: np.ndarray
    best_C: float
    best_error: float
    time: float

    def error_at(self, C: float) -> float:
        """The mean squared error at C, in [Cs[0], Cs[-1]] (exact: the segment's quadratic)."""
        i = min(max(int(np.searchsorted(self.Cs, C, side="right")) - 1, 0), self.coef.shape[0] - 1)
        width = self.Cs[i + 1] - self.Cs[i]
        tau = (C - self.Cs[i]) / width if width > 0 else 0.0
        a, b, c = self.coef[i]
        return float(a + b * tau + c * tau * tau)


def squared_error_path(Cs: np.ndarray, F: np.ndarray, y: np.ndarray, seconds: float = 0.0) -> MSEPath:
    """The held-out mean squared error over C, exactly, and where it is least.

    Parameters
    ----------
    Cs : ndarray of shape (n_points,)
        The path's C values (non-decreasing).
    F : ndarray of shape (n_val, n_points)
        Predictions of the held-out points at the path points (host).
    y : ndarray of shape (n_val,)
        Their targets.
    seconds : float
        For ``MSEPath.time``.

    Returns
    -------
    MSEPath
        On a segment the residuals move as ``r + τ d`` (``d`` the change to the next point),
        so the error is ``mean(r²) + 2τ mean(r d) + τ² mean(d²)``, least at
        ``τ = −mean(r d) / mean(d²)`` when that lies inside.
    """
    R = F - y[:, None]
    if Cs.size == 1:
        return _least(np.array([Cs[0], Cs[0]]), np.array([[float(np.mean(R[:, 0] ** 2)), 0.0, 0.0]]), seconds)
    r, d = R[:, :-1], R[:, 1:] - R[:, :-1]
    coef = np.stack([np.mean(r * r, axis=0), 2.0 * np.mean(r * d, axis=0), np.mean(d * d, axis=0)], axis=1)
    return _least(Cs.copy(), coef, seconds)


def mean_squared_error_paths(curves, seconds: float) -> MSEPath:
    """The mean of several folds' :class:`MSEPath` (one C range), exactly: each fold's quadratic
    re-expressed on every interval between the union of their path points, then averaged.

    Parameters
    ----------
    curves : list of MSEPath
        Every curve starts at the same C_min and ends at the same C_max.
    seconds : float

    Returns
    -------
    MSEPath
    """
    knots = np.unique(np.concatenate([c.Cs for c in curves]))
    if knots.size == 1:
        return _least(np.array([knots[0], knots[0]]), np.mean([c.coef[:1] for c in curves], axis=0), seconds)
    left, right = knots[:-1], knots[1:]
    total = np.zeros((left.size, 3))
    for c in curves:
        # The fold's segment under each interval, and the interval in that segment's τ.
        i = np.clip(np.searchsorted(c.Cs, left, side="right") - 1, 0, c.coef.shape[0] - 1)
        width = c.Cs[i + 1] - c.Cs[i]
        safe = np.where(width > 0, width, 1.0)
        t0, span = (left - c.Cs[i]) / safe, (right - left) / safe
        a, b, q = c.coef[i].T
        total += np.stack([a + b * t0 + q * t0 * t0, (b + 2.0 * q * t0) * span, q * span * span], axis=1)
    return _least(knots, total / len(curves), seconds)


def _least(Cs: np.ndarray, coef: np.ndarray, seconds: float) -> MSEPath:
    """The MSEPath of the quadratics ``coef`` on the intervals of ``Cs``, with where it is least
    (a vertex inside an interval or an end; the smallest such C among ties)."""
    a, b, c = coef.T
    with np.errstate(divide="ignore", invalid="ignore"):
        vertex = np.where(c > 0.0, np.clip(-b / (2.0 * c), 0.0, 1.0), 0.0)
    candidates = np.stack([np.zeros_like(a), vertex, np.ones_like(a)], axis=1)
    values = a[:, None] + b[:, None] * candidates + c[:, None] * candidates**2
    at = Cs[:-1, None] + candidates * (Cs[1:] - Cs[:-1])[:, None]
    values, at = values.ravel(), at.ravel()
    best = np.flatnonzero(values == values.min())
    i = best[np.argmin(at[best])]
    return MSEPath(Cs=Cs, coef=coef, best_C=float(at[i]), best_error=float(values[i]), time=float(seconds))
