"""Exact paths of kernel machines without a bias whose loss is piecewise linear.

The robust SVC and LAD regression of Suzumura et al. (2015), their CCCP baselines, and the
ordinary hinge SVC / LAD regression without bias all share one structure. With
``z = Q α`` (``Q = diag(y) K diag(y)`` and z = y f for classification, ``Q = K`` and z = f for
regression, plus ``ridge·I``), the optimality conditions of a fixed partition say, point by
point, that α_i is a non-increasing step function of z_i: constant on the *pieces* between
the *kinks* of point i's (conditional) loss, and anywhere in a range at a kink. A range that
is unbounded on one side is a *wall*: the polytope constraint of the partition (eq. 12) that
keeps z_i on one side of s.

Per point, a table holds up to three kinks (level = ``kbase + ksign·s``) and four piece values
(α = ``vbase + vslope·θ``; ±inf marks the far side of a wall). A point is either *in a piece*
(α fixed by the table) or *at a kink* (active: z held at the level, α free in its range).
Along a segment of a path, the active α solve ``Q_AA Δα_A = −Δu_A`` and every margin moves by
``ψ = Q[:, A] φ + u`` (the structure of eq. 27 and of Appendix C); the breakpoints are where a
point reaches a kink or an active α the end of its range. Changing tables (the D-step flip of
eq. 17, a CCCP relinearization, or starting from α = 0) is a jump of the fixed α's, closed by
the μ-homotopy of Appendix C: the margins start offset by ``g = Q (α_before − α_after)`` and the
offset shrinks to zero along a path in μ from 1 to 0.
"""

from __future__ import annotations

import numpy as np

from ._active import ActiveSet
from ._array_api import scalars, to_device, to_host
from ._engine import engine_for
from ._ratio import first_bound_hit, first_event
from .cache import QColumnCache
from .linalg import BorderedFactor

__all__ = ["KinkPath", "Tables", "table_rows"]

INF = np.inf
_EPS = float(np.finfo(np.float64).eps)
# The margins' round-off, relative to their scale, that KinkPath.refine repairs: some 450 ε.
# At 1e-12 the start of OP-s paths with a linear kernel (features up to 2,762, a margin
# system of condition 5e6) kept decision values 1.1–1.5 times the random search's bound
# (1e-6 of |f| plus 1,000 ε of the scale) from their partition's exact solution, which a
# dense float64 solve reaches (tests/test_robust.py).
_REFINE_TOL = 1e-13
# μ-paths of the repair at most (one sufficed with NumPy's compiled steps, two with the readable
# ones on the 45-point case of KinkPath.refine).
_REFINE_PASSES = 3


def table_rows(m: int, kinks, ksigns, values, slopes=(0.0,)):
    """Tables of m points as ``(kbase (m, 3), ksign (m, 3), vbase (m, 4), vslope (m, 4))``.

    ``kinks``/``ksigns`` give up to three kink levels (scalars or (m,) arrays), ``values`` and
    ``slopes`` the piece values left to right; missing trailing entries repeat the last one
    (pieces beyond the last kink are never reached).
    """
    kbase, ksign = np.full((m, 3), INF), np.zeros((m, 3))
    vbase, vslope = np.zeros((m, 4)), np.zeros((m, 4))
    for j in range(len(kinks)):
        kbase[:, j], ksign[:, j] = kinks[j], ksigns[j]
    for j in range(4):
        vbase[:, j] = values[min(j, len(values) - 1)]
        vslope[:, j] = slopes[min(j, len(slopes) - 1)]
    return kbase, ksign, vbase, vslope


class Tables:
    """Loss tables of n points (host arrays).

    Attributes
    ----------
    kbase, ksign : ndarray of shape (n, 3)
        Kink levels ``kbase + ksign·s`` in increasing order, padded with +inf.
    vbase, vslope : ndarray of shape (n, 4)
        Piece values ``vbase + vslope·θ`` (non-increasing along a row; ±inf = wall).
    """

    def __init__(self, n: int):
        self.kbase = np.full((n, 3), INF)
        self.ksign = np.zeros((n, 3))
        self.vbase = np.zeros((n, 4))
        self.vslope = np.zeros((n, 4))

    def rows(self, rows):
        """The tables of ``rows`` as a :func:`table_rows` tuple (copies)."""
        return tuple(a[rows].copy() for a in (self.kbase, self.ksign, self.vbase, self.vslope))


class KinkPath:
    """The state of a bias-free piecewise-linear path and the operations that move it.

    Parameters
    ----------
    xp, device
        Namespace and device of the data.
    X : device array of shape (n, d), float64
    y : device array of shape (n,) or None
        Labels ±1 for classification (z = y f); None for regression (z = f).
    kernel : Kernel
    C : float
        Scale of the coefficients (for round-off thresholds).
    ridge : float
        Added to the diagonal of Q.
    refines : bool
        Whether each jump's μ-path is followed by :meth:`refine`.

    Attributes
    ----------
    z : device array of shape (n,)
        The margins Q α.
    lo, hi : device arrays of shape (n,)
        The levels below and above each point's piece at the current s (±inf where none, and
        for the points at a kink); ``lo_b + lo_s·s`` and ``hi_b + hi_s·s``.
    active : ActiveSet
        The points at a kink: their α is free in its range (factor of Q_AA, no border).
    n_repairs : int
        μ-paths :meth:`refine` has followed to remove the margins' drift (0 where none was
        needed, or ``refines`` is False).
    """

    def __init__(self, xp, device, X, y, kernel, C, ridge, refines: bool = True):
        self.xp, self.device = xp, device
        self.refines = refines  # repair the margins' drift after each jump (refine)
        self.n_repairs = 0
        self.X, self.y, self.kernel = X, y, kernel
        self.C, self.ridge = float(C), float(ridge)
        n = X.shape[0]
        self.n = n
        self.theta, self._s = 1.0, 0.0
        self.alpha = np.zeros(n)
        self.pos = np.zeros(n, dtype=np.int64)  # 2j: in piece j; 2j + 1: at kink j
        self.tables = Tables(n)
        f64 = xp.float64
        self.z = xp.zeros(n, dtype=f64, device=device)
        # Levels below/above each point's piece (device): level = base + sign·s.
        self.lo_b = xp.full(n, -INF, dtype=f64, device=device)
        self.lo_s = xp.zeros(n, dtype=f64, device=device)
        self.hi_b = xp.full(n, INF, dtype=f64, device=device)
        self.hi_s = xp.zeros(n, dtype=f64, device=device)
        self.lo = xp.full(n, -INF, dtype=f64, device=device)
        self.hi = xp.full(n, INF, dtype=f64, device=device)
        # Σ over points in θ-dependent pieces of Q[:, k]·dα_k/dθ: the driver of OP-θ.
        self.u_theta = xp.zeros(n, dtype=f64, device=device)
        self.active = ActiveSet(BorderedFactor(bordered=False), QColumnCache(xp, device, n), self._new_column)
        self.engine = engine_for(xp, device, kernel)
        self.n_breakpoints = 0
        self._peak = 0.0  # the largest scale bound seen at settle
        self._diag_max = None  # max_k |Q_kk|, once needed

    @property
    def s(self) -> float:
        """The loss parameter s; setting it moves every level that depends on it."""
        return self._s

    @s.setter
    def s(self, value: float) -> None:
        self._s = float(value)
        self.lo = self.lo_b + self.lo_s * self._s
        self.hi = self.hi_b + self.hi_s * self._s

    @property
    def cache(self) -> QColumnCache:
        return self.active.cache

    # ------------------------------------------------------------------ tables
    def kink_level(self, k: int, j: int) -> float:
        return float(self.tables.kbase[k, j] + self.tables.ksign[k, j] * self._s)

    def piece_value(self, k: int, j: int) -> float:
        return float(self.tables.vbase[k, j] + self.tables.vslope[k, j] * self.theta)

    def kink_range(self, k: int, j: int):
        """``(lower, upper)`` of α at kink j of point k."""
        return self.piece_value(k, j + 1), self.piece_value(k, j)

    def is_wall(self, k: int, j: int) -> bool:
        lower, upper = self.kink_range(k, j)
        return not (np.isfinite(lower) and np.isfinite(upper))

    def wall_riders(self, u, dtheta_dt: float) -> list[int]:
        """Active points at a wall whose α the segment with driver ``u`` (and θ's rate
        ``dtheta_dt``) would move into the wall's open side (:meth:`_riders`)."""
        act = self.active.members
        if not act.size:
            return []
        return self._riders(act, -self.active.solve(self.engine.gather(u, act)), dtheta_dt)

    def _riders(self, act: np.ndarray, phi: np.ndarray, dtheta_dt: float) -> list[int]:
        """The points of ``act`` at a wall that the rates ``phi`` would make ride it: α leaving
        the end of its range that a locally optimal point at y f = s sits on (Theorem 3: θC on
        the outliers' side, C on the inliers'), faster than that end moves with θ."""
        tiny = _EPS * max(self.C, float(np.abs(phi).max(initial=0.0)))
        riders = []
        for i, k in enumerate(act.tolist()):
            j = int(self.pos[k]) // 2
            lower, upper = self.kink_range(k, j)
            if np.isfinite(lower) and np.isfinite(upper):  # (not a wall)
                continue
            if np.isfinite(upper):  # open below: its upper end is the piece above
                if phi[i] < self.tables.vslope[k, j] * dtheta_dt - tiny:
                    riders.append(k)
            elif phi[i] > self.tables.vslope[k, j + 1] * dtheta_dt + tiny:
                riders.append(k)
        return riders

    def boundary_points(self) -> list[int]:
        """Active points at a wall: y f = s (Theorem 3), in activation order."""
        return [int(k) for k in self.active.members if self.is_wall(int(k), int(self.pos[k]) // 2)]

    def _slope(self, k: int) -> float:
        """dα_k/dθ while k sits in its piece (0 at a kink)."""
        return 0.0 if self.pos[k] % 2 else float(self.tables.vslope[k, self.pos[k] // 2])

    # ------------------------------------------------------------------ columns
    def _new_column(self, k: int):
        self.cache.n_columns_computed += 1
        return self.engine.q_column(self.kernel, self.X, k, self.y, self.ridge)

    def column(self, k: int):
        """``Q[:, k]``: from the cache if the point's column is still there."""
        slot = self.cache.slot(k)
        if slot >= 0:
            return self.cache.column(slot)
        return self._new_column(k)

    def q_matvecs(self, idx: np.ndarray, *coefs: np.ndarray):
        """``Q[:, idx] @ c`` on the device for each host vector c, from fresh kernel blocks
        (:meth:`gpath._engine.Engine.q_matvecs`)."""
        return self.engine.q_matvecs(self.kernel, self.X, idx, coefs, self.y, self.ridge)

    # ------------------------------------------------------------------ positions
    def _set_levels(self, k: int) -> None:
        """Device levels of point k from its table and position."""
        t = self.tables
        if self.pos[k] % 2:
            lo = (-INF, 0.0)
            hi = (INF, 0.0)
        else:
            j = self.pos[k] // 2
            lo = (t.kbase[k, j - 1], t.ksign[k, j - 1]) if j > 0 else (-INF, 0.0)
            hi = (t.kbase[k, j], t.ksign[k, j]) if j < 3 else (INF, 0.0)
        self.lo_b[k], self.lo_s[k] = float(lo[0]), float(lo[1])
        self.hi_b[k], self.hi_s[k] = float(hi[0]), float(hi[1])
        self.lo[k] = float(lo[0] + lo[1] * self._s)
        self.hi[k] = float(hi[0] + hi[1] * self._s)

    def _activate(self, k: int, j: int) -> None:
        """Point k joins the active set at kink j (its α stays where it is)."""
        self.active.enter(k, None)
        self.pos[k] = 2 * j + 1
        self.z[k] = self.kink_level(k, j)
        self._set_levels(k)

    def _deactivate(self, k: int, piece: int) -> None:
        """Point k leaves the active set into ``piece``; α becomes the piece value."""
        self.active.leave(k)
        self.pos[k] = 2 * piece
        self.alpha[k] = self.piece_value(k, piece)
        self._set_levels(k)

    def _drive(self, k: int, old_slope: float) -> None:
        """Keep u_θ in step with a change of point k's dα/dθ."""
        new_slope = self._slope(k)
        if new_slope != old_slope:
            self.u_theta = self.u_theta + (new_slope - old_slope) * self.column(k)
    # ------------------------------------------------------------------ jumps
    def retable(self, rows: np.ndarray, tables) -> None:
        """Give the points ``rows`` new loss tables and close the jump of α by the μ-path.

        An active point whose new table has a kink at the level it is held at stays active
        there, α clipped into the new range; every other point goes to the piece of the new
        table that holds its margin (or to a kink its margin sits exactly on). The fixed α's
        jump; the offset ``g = Q (α_before − α_after)`` is then removed along μ from 1 to 0
        (Suzumura et al. 2015, Appendix C), which ends at the conditionally optimal solution
        for the new tables.

        Parameters
        ----------
        rows : host int array of shape (m,)
        tables : tuple (kbase (m, 3), ksign (m, 3), vbase (m, 4), vslope (m, 4))
        """
        xp = self.xp
        rows = np.asarray(rows, dtype=np.int64)
        if rows.size == 0:
            return
        z_h = to_host(xp.take(self.z, to_device(rows, xp, self.device)))
        held = [self.kink_level(int(k), int(self.pos[k]) // 2) if self.pos[k] % 2 else None for k in rows]
        old_alpha = self.alpha[rows].copy()
        old_slope = np.array([self._slope(int(k)) for k in rows])
        t = self.tables
        t.kbase[rows], t.ksign[rows], t.vbase[rows], t.vslope[rows] = tables
        unit = self.level_scale()
        for i, k in enumerate(rows):
            k = int(k)
            levels = t.kbase[k] + t.ksign[k] * self.s
            if held[i] is None:
                # A margin within round-off of a kink is on it (s may come from y − z), in the
                # unit of the kinks (1 for classification, y's for regression).
                at = np.flatnonzero(np.isfinite(levels)
                                    & (np.abs(levels - z_h[i]) <= 1e-12 * np.maximum(unit, np.abs(levels))))
            else:
                at = np.flatnonzero(levels == held[i])
            if at.size:
                j = int(at[0])
                lower, upper = self.kink_range(k, j)
                self.alpha[k] = min(max(self.alpha[k], lower), upper)
                if held[i] is None:
                    self._activate(k, j)
                else:
                    self.pos[k] = 2 * j + 1
                continue
            piece = int(np.count_nonzero(levels < z_h[i]))
            if held[i] is not None:
                self._deactivate(k, piece)
            else:
                self.pos[k] = 2 * piece
                self.alpha[k] = self.piece_value(k, piece)
                self._set_levels(k)
        d_alpha = old_alpha - self.alpha[rows]
        d_slope = np.array([self._slope(int(k)) for k in rows]) - old_slope
        moved = np.flatnonzero((d_alpha != 0) | (d_slope != 0))
        if moved.size:
            order = moved[np.argsort(rows[moved])]
            g, du = self.q_matvecs(rows[order], d_alpha[order], d_slope[order])
            self.u_theta = self.u_theta + du
            if np.any(d_alpha != 0):
                breakpoints = self.n_breakpoints
                self.segment(-g, 1.0)
                # The margins' round-off from removing g, some ε·max|g| a step: refined (a
                # product with every α ≠ 0) only where that can reach the tolerance.
                xp = self.xp
                drift = _EPS * float(scalars(xp, xp.max(xp.abs(g)))[0]) * (1 + self.n_breakpoints - breakpoints)
                size = float(scalars(xp, xp.max(xp.abs(self.z)))[0]) + self.level_scale()
                if self.refines and drift > _REFINE_TOL * size:
                    self.refine()

    def level_scale(self) -> float:
        """The largest |kink level| at the current s (1 where there is none or all are 0): the
        unit of the margins, dimensionless for classification (1 and s), that of y for
        regression (y ± s), so that the tolerances on z scale with the problem."""
        levels = self.tables.kbase + self.tables.ksign * self._s
        finite = np.abs(levels[np.isfinite(levels)])
        return float(finite.max()) if finite.size and finite.max() > 0 else 1.0

    def settle(self) -> None:
        """:meth:`refine` where the coefficients have shrunk so far since the margins were last
        measured that the round-off they carry from then exceeds ``_REFINE_TOL`` of their
        scale now (scales by :meth:`_scale_bound`, no product).

        A C-step of OP-θ moves every α along one line; where θ's drive shrinks them (outliers
        at θC falling from C to 0, margin points from 5,000 to 0.0023 with C = 10⁴) the end's α
        is the difference of numbers some 10⁶ times larger, and its margins from fresh kernel
        values sit that much round-off off their levels: 1.2e-9 of the end's own scale in
        ``check_kkt`` (a degree-2 polynomial kernel on 31 points, `fuzz_references.py` seed
        36,267,187). Called before a path point is recorded; inside a C-step the step takes
        its drive anew after a repair (:meth:`segment`). (Not at every end: a repair's μ-path
        at θ = 0 can leave a point held at a wall with α beyond its range, and two paths that
        end exact were refused that way.)"""
        bound = self._scale_bound()
        self._peak = max(self._peak, bound)
        if self.refines and _EPS * self._peak > _REFINE_TOL * bound:
            self.refine()
            self._peak = self._scale_bound()

    def _scale_bound(self) -> float:
        """An upper bound of the margins' scale without a product:
        ``max_k |Q_kk| · Σ_j |α_j|`` (|Q_ij| ≤ max_k Q_kk for a positive semi-definite Q) plus
        the largest |kink level|."""
        if self._diag_max is None:
            xp = self.xp
            self._diag_max = (float(scalars(xp, xp.max(xp.abs(self.kernel.diagonal(self.X))))[0]) + abs(self.ridge)
                              if self.n else 0.0)
        return self._diag_max * float(np.abs(self.alpha).sum()) + self.level_scale()

    def refine(self, tol: float = _REFINE_TOL) -> None:
        """Repair the round-off of the margins the path keeps where it exceeds ``tol`` of their
        scale ``max_i Σ_j |Q_ij α_j|`` plus the largest |kink level| (:meth:`level_scale`).
        The margins z from fresh kernel values are what
        the conditions judge: a point in a piece must have its z between the piece's levels,
        an active point its z on its kink. Where they are not, the kept margins are replaced
        by the fresh ones moved just into the conditions (clipped into the piece; the kink's
        level), and the offset ``g`` between the two is removed like a jump's, by a μ-path
        (Appendix C) from the conditions at μ = 1 to the fresh margins at μ = 0: points whose
        fresh margin lies beyond a level, or active α that the exact margins put beyond their
        range, leave or join the active set on the way, as events of the path; its own
        round-off is ε·|g|, of the drift's size.

        The drift comes from removing a jump's offset ``g = Q (α_before − α_after)`` that can
        be far larger than the solution: from α = 0 every point jumps to its piece value
        (C), and where the kernel is large (features of 10⁶, a linear kernel) g is some 10¹⁴
        while the margins end near 1. The kept margins then carry an error of ε·|g|: 0.2 at
        C = 100 on five such points (a float64 solve of the same sets: 1e-10), 1.0 on 45;
        with features of 10⁹ the drift put margins on the wrong side of their levels (a kept
        margin −4e5 for a point whose piece lies above 1, fresh 1e6: the kept margins' own
        path never crossed the level); with features of 10¹² the kept margins are garbage (a
        drift of 1e12 where the margins' scale is 1e6) and two or three repairs bring them to
        round-off. A start whose every α is 0 (each point at a kink, or in a piece of α = 0)
        is repaired too: its fresh margins are 0, its kept ones whatever removing the jump left.
        The margins are measured again after each repair, which is repeated while they are off
        by more than ``tol`` (``_REFINE_PASSES`` at most)."""
        xp = self.xp
        for _ in range(_REFINE_PASSES):
            act = self.active.members
            nonzero = np.flatnonzero(self.alpha)
            if nonzero.size:
                z, scale = self.engine.q_matvecs(self.kernel, self.X, nonzero, [self.alpha[nonzero]] * 2, self.y,
                                                 self.ridge, [False, True])
                bound = float(scalars(xp, xp.max(scale))[0]) + self.level_scale()
            else:
                z, bound = xp.zeros_like(self.z), self.level_scale()
            held = xp.minimum(xp.maximum(z, self.lo), self.hi)  # the conditions nearest z
            for k in act.tolist():
                held[k] = self.kink_level(k, int(self.pos[k]) // 2)
            g = held - z
            if float(scalars(xp, xp.max(xp.abs(g)))[0]) <= tol * bound:
                return  # (z as it was: moving it by round-off made later paths cycle among ties)
            self.z = held
            self.n_repairs += 1
            self.segment(-g, 1.0)

    # ------------------------------------------------------------------ segments
    def _driven(self):
        """Points whose α moves with θ (in a θ-dependent piece), and dα/dθ of each."""
        idx = np.flatnonzero((self.pos % 2 == 0) & (self.tables.vslope[np.arange(self.n), self.pos // 2] != 0))
        return idx, self.tables.vslope[idx, self.pos[idx] // 2]

    def segment(self, u, t_max: float, dtheta_dt: float = 0.0, stop_at_wall: bool = False,
                on_breakpoint=None) -> tuple[float, bool]:
        """Follow the path for t ∈ [0, t_max] with driver u (device: dz/dt of the fixed α's).

        With ``dtheta_dt ≠ 0`` this is OP-θ's C-step (eq. 27): θ moves with t, and with it
        the α's of the points in θ-dependent pieces; u is then ``u_θ · dθ/dt``.

        Returns
        -------
        t : float
            How far the segment went.
        wall : bool
            True if it stopped because a point reached a wall (with ``stop_at_wall``).
        """
        t_done = 0.0
        unit = self.level_scale()  # (s is fixed along a segment)
        driven, slopes = self._driven() if dtheta_dt else (np.zeros(0, dtype=np.int64), np.zeros(0))
        zero_steps, guard = 0, 50 * (self.n + 10)
        active, engine = self.active, self.engine
        while True:
            guard -= 1
            if zero_steps > 2 * self.n + 10 or guard < 0:
                from ._path import PathError

                raise PathError("the outlier path did not advance: degenerate cycling")
            act = active.members.copy()
            remaining = t_max - t_done
            if act.size:
                phi = -active.solve(engine.gather(u, act))
                if stop_at_wall and dtheta_dt and self.theta == 1.0 and self._riders(act, phi, dtheta_dt):
                    return t_done, True  # (a point would ride its wall from θ = 1: the caller puts it off)
                ranges = np.array([self.kink_range(int(k), int(self.pos[k]) // 2) for k in act])
                t_b, jb, up_b = first_bound_hit(self.alpha[act], phi, ranges[:, 0], ranges[:, 1], act, self.C)
                bound = (t_b, int(act[jb]) if jb >= 0 else -1, up_b)
            else:
                phi = np.zeros(0)
                bound = (INF, -1, True)
            crossing = engine.step(self.z, self.lo, self.hi, self.cache, active.slots, phi, 0.0, None, 1.0, u,
                                   min(bound[0], remaining), unit)
            step, event = first_event(bound, crossing, remaining, take_at_limit=True)
            if step > 0:
                self.alpha[act] += step * phi
                if dtheta_dt:
                    self.theta += step * dtheta_dt
                    self.alpha[driven] += step * dtheta_dt * slopes
                t_done += step
                zero_steps = 0
            else:
                zero_steps += 1
            if event is None:
                return t_max, False
            kind, k, upward = event
            old = self._slope(k)
            j = int(self.pos[k]) // 2
            if kind == "bound":
                self._deactivate(k, j if upward else j + 1)
                wall = False
            else:
                j = j if upward else j - 1
                self._activate(k, j)
                wall = self.is_wall(k, j)
            self._drive(k, old)
            self.n_breakpoints += 1
            repairs = self.n_repairs
            if on_breakpoint is not None:
                on_breakpoint()  # (it may refine: settle)
            if wall and stop_at_wall:
                return t_done, True
            if dtheta_dt and (self._slope(k) != old or self.n_repairs != repairs):
                u = self.u_theta * dtheta_dt
                driven, slopes = self._driven()

    def d_step(self, flip) -> bool:
        """One D-step (Theorem 3, eq. 17): flip every boundary point between inliers and
        outliers and follow the μ-path (Appendix C) to the new conditionally optimal solution.

        Parameters
        ----------
        flip : callable ``k -> tables_row``
            The table of boundary point k on the other side of its wall; it must have a kink
            at the wall's level.

        Returns
        -------
        flipped : bool
            False if there was no boundary point.
        """
        boundary = self.boundary_points()
        if not boundary:
            return False
        self.flip_tables(boundary, flip)
        return True

    def flip_tables(self, points: list[int], flip) -> None:
        """Give each of ``points`` its table across its wall, ``flip(k)`` (eq. 17), and close
        the jump by the μ-path (:meth:`retable`)."""
        new = [flip(k) for k in points]
        self.retable(np.array(points), tuple(np.stack([row[i] for row in new]) for i in range(4)))

    def next_wall(self, direction: float):
        """OP-s C-step (section 4.3): the next s, moving in ``direction`` (±1), at which a
        point in a piece meets a wall, as ``(s, k, kink)``; ``(None, -1, -1)`` if none.

        A point already beyond its wall meets it at the current s: two points that reach
        their walls at one s (tied targets) are entered one after the other, and the D-step of
        the first can leave the second's margin a rounding beyond its level, behind the
        path's s, where it was never entered before (a wrong path, 0.065 off on diabetes).

        A point on its wall to round-off (within ``_REFINE_TOL`` of the margins' scale, on
        either side) whose wall moves away from it as s moves on does not meet it: the step
        takes it into its piece. Such a point is one a D-step has just flipped, where the flip
        moved its margin by less than a rounding (a kernel of 1e-15 beside targets of 5: its
        margin moved 3e-19, to either side of the wall); met again, it was flipped back and
        forth at one s until the path gave up (`fuzz_references.py` seeds 36,404,552 to
        37,240,342, fifteen OP-s paths of ``RobustSVR`` without an intercept)."""
        xp = self.xp
        inf = float("inf")
        cands = []
        tol = _REFINE_TOL * (float(scalars(xp, xp.max(xp.abs(self.z)))[0]) + self.level_scale()) if self.n else 0.0
        for base, sign, offset, beyond, level, away in ((self.lo_b, self.lo_s, -1, self.z < self.lo, self.lo, -1.0),
                                                        (self.hi_b, self.hi_s, 0, self.z > self.hi, self.hi, 1.0)):
            walls = sign != 0.0
            s_at = (self.z - base) / xp.where(walls, sign, 1.0)
            ahead = walls & (direction * (s_at - self._s) >= 0.0)
            score = xp.where(ahead, direction * s_at, inf)
            score = xp.where(walls & beyond, direction * self._s, score)
            receding = walls & (away * direction * sign > 0.0) & (xp.abs(self.z - level) <= tol)
            score = xp.where(receding, inf, score)
            k, best = scalars(xp, xp.argmin(score), xp.min(score))
            if best < inf:
                cands.append((best, int(k), offset))
        if not cands:
            return None, -1, -1
        score, k, offset = min(cands)
        return direction * score, k, int(self.pos[k]) // 2 + offset

    def enter_wall(self, k: int, j: int) -> None:
        """Point k, whose margin sits on wall kink j at the current s, becomes active there."""
        self._activate(k, j)
        self.n_breakpoints += 1
