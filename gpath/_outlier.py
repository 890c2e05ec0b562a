"""The outlier-path drivers of Suzumura, Ogawa, Sugiyama, Karasuyama & Takeuchi (2015): OP-θ,
OP-s and the CCCP baseline, on the bias-free kink path of :mod:`gpath._kinkpath`.

The two problems (robust SVC, section 2.1; robust LAD regression, section 2.2) are described
by their loss tables (:class:`Classification`, :class:`Regression`); the drivers move a
:class:`gpath._kinkpath.KinkPath` along θ or s, take the D-step at each point where the
solution stops being locally optimal (Theorem 3, eq. 17), and record the path points. The
estimators are in :mod:`gpath.robust`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ._array_api import to_host
from ._kinkpath import KinkPath, table_rows
from ._path import PathError
from .persistence import record

__all__ = ["Classification", "OutlierPath", "Recorder", "Regression", "cccp", "op_s", "op_theta", "start",
           "violation"]

INF = np.inf


@record
@dataclass(frozen=True)
class OutlierPath:
    """A computed path of solutions, in path order.

    Attributes
    ----------
    params : ndarray of shape (n_points,)
        θ or s at each path point (monotone along the path; a value repeats at a
        discontinuity: the point before the D-step jump, then the point after it).
    alpha : ndarray of shape (n_points, n_samples), float64
        Dual coefficients at each point: α ≥ 0 with f = Σ α_j y_j K(·, x_j) for
        classification; signed α with f = Σ α_j K(·, x_j) for regression. Every point is
        the optimum of its partition into inliers and outliers, so α lies in the loss's
        range: [0, C] for classification, [−C, C] for regression. Of a chain of D-steps at
        one parameter value (Algorithm 3 repeats while the new solution is again on a
        boundary) only the two ends are points: the solution that reached the boundary and
        the locally optimal one the chain ends at.
    discontinuous : ndarray of shape (n_points,), bool
        True for the point right after a D-step jump (the end of the chain).
    objective : ndarray of shape (n_points,)
        The robust objective (eq. 2 or 6) at each point, with the kernel K + ridge·I, from
        margins recomputed with fresh kernel values when the path is fitted.
    kind : str
        ``"theta"`` or ``"s"``.
    theta, s : float or None
        The fixed other parameter (s for an OP-θ path, θ for an OP-s path).
    validation_error : ndarray of shape (n_points,) or None
        Filled by ``select``: 0-1 error (classification) or mean absolute error (regression).
    n_breakpoints : int
        Breakpoints passed, those of the D-steps' μ-paths included.
    time : float
        Wall time of the path, seconds.
    C : float or None
        The C every point solves for (None in files written before it was recorded).
    """

    params: np.ndarray
    alpha: np.ndarray
    discontinuous: np.ndarray
    objective: np.ndarray
    kind: str
    theta: float | None
    s: float | None
    validation_error: np.ndarray | None = None
    n_breakpoints: int = 0
    time: float = 0.0
    C: float | None = None

    @property
    def selectable(self) -> np.ndarray:
        """Which points ``select`` may choose: bool array of shape (n_points,).

        False for the point before each D-step jump — it has a point on the boundary
        y f = s (resp. |y − f| = s), so it is optimal for its partition but not locally
        optimal (Theorem 3; (19e) or (26d) fails) — and for any earlier point with the same
        parameter value. So every parameter value names one selectable point, the one
        ``decision_function(X, at=value)`` evaluates: the model selected at ``param_`` is
        the one ``at=param_`` gives.
        """
        params = np.asarray(self.params)
        last = np.ones(params.shape[0], dtype=bool)
        last[:-1] = params[1:] != params[:-1]
        return last


class Recorder:
    """Collects the path points of one run (host copies of α)."""

    def __init__(self):
        self.params, self.alpha, self.disc, self.obj = [], [], [], []

    def add(self, param, alpha, objective, discontinuous=False):
        self.params.append(float(param))
        self.alpha.append(alpha.copy())
        self.obj.append(float(objective))
        self.disc.append(bool(discontinuous))

    def result(self, kind, theta, s, n_breakpoints, start_time) -> OutlierPath:
        """The recorded points as an :class:`OutlierPath` (``start_time``: ``time.perf_counter()``
        when the path began)."""
        return OutlierPath(np.array(self.params), np.array(self.alpha), np.array(self.disc),
                           np.array(self.obj), kind, theta, s, None, n_breakpoints,
                           time.perf_counter() - start_time)


# ---------------------------------------------------------------------- the two problems
class Classification:
    """Robust SVC (section 2.1): z = y f, kinks of eq. 16 (walls at s, hinge at 1)."""

    direction = 1.0  # OP-s moves s upward, from min y f to 0

    def __init__(self, C):
        self.C = C

    def plain(self, m, y=None):
        """Hinge loss: the ordinary SVC without bias (θ = 1)."""
        return table_rows(m, [1.0], [0.0], [self.C, 0.0])

    def inlier(self, m, y=None):
        return table_rows(m, [0.0, 1.0], [1.0, 0.0], [INF, self.C, 0.0])

    def outlier(self, m, y=None, side=None):
        return table_rows(m, [0.0], [1.0], [0.0, -INF], [self.C, 0.0])

    def partition(self, z, y, s):
        """Robust tables for margins z: inliers y f ≥ s, outliers below."""
        rows = self.inlier(z.shape[0])
        out = np.flatnonzero(z < s)
        if out.size:
            o = self.outlier(out.size)
            for a, b in zip(rows, o):
                a[out] = b
        return rows

    def flip(self, path: KinkPath, k: int):
        """Eq. 17: the table across point k's wall."""
        return [a[0] for a in (self.outlier(1) if path.tables.vbase[k, 0] == INF else self.inlier(1))]

    def cccp(self, z, y, theta, s):
        """CCCP linearization at margins z (Yuille & Rangarajan): the concave part
        −(1 − θ)[s − z]_+ of the ramp loss is replaced by its tangent, so points with z < s
        get the convex loss [1 − z]_+ + (1 − θ) z (α ∈ [−C(1 − θ), Cθ])."""
        C = self.C
        rows = self.plain(z.shape[0])
        out = np.flatnonzero(z < s)
        if out.size:
            o = table_rows(out.size, [1.0], [0.0], [C * theta, -C * (1.0 - theta)])
            for a, b in zip(rows, o):
                a[out] = b
        return rows

    def objective(self, alpha, z, y, theta, s):
        """Eq. 2 with loss (5), written continuous at z = s: 1 − θz − (1 − θ)s below s (the
        paper's 1 − θz − s agrees with it at s = 0 and at θ = 0, the two paths it traces; at
        θ = 1 this is the hinge loss for every s, as section 2.1 says)."""
        loss = np.where(z >= s, np.maximum(0.0, 1.0 - z), 1.0 - theta * z - (1.0 - theta) * s)
        return 0.5 * float(alpha @ z) + self.C * float(loss.sum())

    def start_s(self, z, y):
        return float(z.min())

    def conditions(self, y, theta, s):
        """The optimality conditions of eq. 16 as the graph of α_i against z_i = y_i f(x_i),
        for :func:`violation`: outliers z < s have α = Cθ, inliers the hinge's α (C below 1,
        anywhere in [0, C] at 1, 0 above), and a point at z = s, on the boundary of both
        partitions, α between Cθ and C."""
        C = self.C
        return [((-INF, s), (C * theta, C * theta)), ((s, s), (C * theta, C)), ((s, 1.0), (C, C)),
                ((1.0, 1.0), (0.0, C)), ((1.0, INF), (0.0, 0.0))]


class Regression:
    """Robust LAD regression (section 2.2): z = f, kinks at y − s, y, y + s (eq. 25)."""

    direction = -1.0  # OP-s moves s downward, from max |y − f|

    def __init__(self, C):
        self.C = C

    def plain(self, m, y):
        """Absolute loss: LAD regression without bias (θ = 1)."""
        return table_rows(m, [y], [0.0], [self.C, -self.C])

    def inlier(self, m, y):
        C = self.C
        return table_rows(m, [y, y, y], [-1.0, 0.0, 1.0], [INF, C, -C, -INF])

    def outlier(self, m, y, side):
        """side +1: residual ≥ s (f ≤ y − s, α = θC); −1: residual ≤ −s (α = −θC)."""
        if side > 0:
            return table_rows(m, [y], [-1.0], [0.0, -INF], [self.C, 0.0])
        return table_rows(m, [y], [1.0], [INF, 0.0], [0.0, -self.C])

    def partition(self, z, y, s):
        r = y - z
        rows = self.inlier(z.shape[0], y)
        for side in (1.0, -1.0):
            out = np.flatnonzero(side * r > s)
            if out.size:
                for a, b in zip(rows, self.outlier(out.size, y[out], side)):
                    a[out] = b
        return rows

    def flip(self, path: KinkPath, k: int):
        t = path.tables
        y = t.kbase[k, 0]
        if np.isfinite(t.kbase[k, 2]):  # inlier at its lower (j = 0) or upper (j = 2) wall
            side = 1.0 if path.pos[k] // 2 == 0 else -1.0
            return [a[0] for a in self.outlier(1, y, side)]
        return [a[0] for a in self.inlier(1, y)]

    def cccp(self, z, y, theta, s):
        """CCCP linearization of |r| − (1 − θ)[|r| − s]_+ at residuals r = y − z."""
        C = self.C
        r = y - z
        sigma = np.where(np.abs(r) > s, np.sign(r), 0.0)
        return table_rows(z.shape[0], [y], [0.0],
                          [C * (1.0 - (1.0 - theta) * sigma), C * (-1.0 - (1.0 - theta) * sigma)])

    def objective(self, alpha, z, y, theta, s):
        """Eq. 6 with loss (9)."""
        a = np.abs(y - z)
        loss = np.where(a < s, a, (a - s) * theta + s)
        return 0.5 * float(alpha @ z) + self.C * float(loss.sum())

    def start_s(self, z, y):
        return float(np.abs(y - z).max())

    def conditions(self, y, theta, s):
        """The optimality conditions of eq. 25 as the graph of α_i against z_i = f(x_i), for
        :func:`violation`: α = C·sign(r) for a residual r = y − f with 0 < |r| < s, anywhere
        in [−C, C] at r = 0, sign(r)·θC beyond s, and between θC and C (times sign(r)) at
        |r| = s, on the boundary of both partitions."""
        C, tc = self.C, self.C * theta
        return [((-INF, y - s), (tc, tc)), ((y - s, y - s), (tc, C)), ((y - s, y), (C, C)), ((y, y), (-C, C)),
                ((y, y + s), (-C, -C)), ((y + s, y + s), (-C, -tc)), ((y + s, INF), (-tc, -tc))]


def violation(z, alpha, conditions, scale, C) -> np.ndarray:
    """The largest distance of the points (z_i, α_i) from the graph of their optimality
    conditions (:meth:`Classification.conditions`, :meth:`Regression.conditions`), at each of
    several path points: for each point the least, over the pieces of the graph, of the
    larger of its distance in z divided by ``scale`` and its distance in α divided by C.

    Parameters
    ----------
    z, alpha : ndarray of shape (n, n_points)
        Margins (z = Q α, from scratch) and coefficients, a column per path point.
    conditions : list of ``((z_lo, z_hi), (alpha_lo, alpha_hi))``
        The graph's pieces (arrays that broadcast to (n, n_points)): a horizontal piece has
        one α, a vertical one one z.
    scale : ndarray of shape (n_points,)
        The size of the terms a margin sums, so that the result is relative round-off.
    C : float

    Returns
    -------
    ndarray of shape (n_points,)
        0 for an exact solution; float64 round-off gives about 1e-16 … 1e-12.
    """
    def gap(v, lo, hi):
        return np.maximum(np.maximum(lo - v, v - hi), 0.0)

    d = np.full(z.shape, INF)
    for (z_lo, z_hi), (a_lo, a_hi) in conditions:
        d = np.minimum(d, np.maximum(gap(z, z_lo, z_hi) / scale, gap(alpha, a_lo, a_hi) / C))
    return np.max(d, axis=0, initial=0.0)


# ---------------------------------------------------------------------- drivers
def start(xp, device, X, y_dev, y_host, kernel, problem, C, ridge, refines=True) -> KinkPath:
    """The ordinary SVM without bias (θ = 1): every point jumps from α = 0 to the hinge
    (resp. absolute) loss's α, closed by one μ-path (Appendix C); ``refines``: as
    :class:`gpath._kinkpath.KinkPath`'s."""
    path = KinkPath(xp, device, X, y_dev if isinstance(problem, Classification) else None, kernel, C, ridge,
                    refines)
    path.retable(np.arange(path.n), problem.plain(path.n, y_host))
    return path


def _objective(problem, path, y_host):
    return problem.objective(path.alpha, to_host(path.z), y_host, path.theta, path.s)


def _d_steps(path, problem, rec, param, y_host) -> None:
    """D-steps (eq. 17) until the solution is locally optimal (no point on a wall); the end
    of the chain is recorded as the point after the jump.

    Only that end is recorded: a D-step that lands on a wall again (Algorithm 3 repeats) ends
    at the optimum of its partition *constrained to its polytope*, where the points held at
    the wall have α beyond the loss's range (α > C for an inlier held at y f = s) — not a
    solution of the robust problem, and no model to select.
    """
    n_flips = 0
    while path.d_step(lambda k: problem.flip(path, k)):
        n_flips += 1
        if n_flips > path.n + 10:
            raise PathError("D-steps did not reach a locally optimal solution")
    if n_flips:
        rec.add(param(), path.alpha, _objective(problem, path, y_host), discontinuous=True)


def _off_the_walls(path, problem) -> None:
    """At θ = 1, where a point's outlier and inlier tables give it the same loss (θC = C) and
    a D-step would flip a point at a wall back and forth, put each point held at a wall on the
    side the C-step takes it off: those that would ride their wall (:meth:`KinkPath.wall_riders`)
    take the other side's table, where the step's first event moves them into its piece.

    Without it such a point rode its wall down the whole C-step, its α below θC, to a point at
    θ = 0 that is not locally optimal (`fuzz_references.py` seed 36,880,852: kernel values
    below 1e-13, every margin within 1e-11 of s = 0, α = −0.012 at the end; `fit` refused)."""
    riders = path.wall_riders(-path.u_theta, -1.0)
    if riders:
        path.flip_tables(riders, lambda k: problem.flip(path, k))


class _Stall:
    """Raises once the path's parameter has not moved for more rounds of wall and D-step
    than there are points (2n + 10): a guard against a point that flips back and forth at one
    value for ever. (The case that did, a flip that moves the point's margin by less than a
    rounding, with kernel values of 1e-12 beside targets of 1, now ends its OP-s path exactly:
    :meth:`gpath._kinkpath.KinkPath.next_wall`.)"""

    def __init__(self, path):
        self.limit, self.count, self.last = 2 * path.n + 10, 0, None

    def __call__(self, param: float) -> None:
        self.count = self.count + 1 if param == self.last else 0
        self.last = param
        if self.count > self.limit:
            raise PathError("the outlier path did not advance: degenerate cycling (a point flips between "
                            "inlier and outlier at one parameter value)")


def op_theta(path, problem, y_host, s, start_time) -> OutlierPath:
    """OP-θ (section 4): θ from 1 down to 0 at fixed s, C-steps (eq. 27) and D-steps."""
    rec = Recorder()
    path.s = s
    path.retable(np.arange(path.n), problem.partition(to_host(path.z), y_host, path.s))
    path.settle()  # (its scale here is what the C-steps start from)
    rec.add(1.0, path.alpha, _objective(problem, path, y_host))

    def record():
        path.settle()
        rec.add(path.theta, path.alpha, _objective(problem, path, y_host))

    stalled = _Stall(path)
    while True:
        if path.theta < 1.0:
            _d_steps(path, problem, rec, lambda: path.theta, y_host)
        if path.theta <= 0.0:
            break
        stalled(path.theta)
        if path.theta == 1.0:
            _off_the_walls(path, problem)
        _, wall = path.segment(-path.u_theta, path.theta, dtheta_dt=-1.0, stop_at_wall=True,
                               on_breakpoint=record)
        if not wall:
            path.theta = 0.0
            path.settle()  # (the C-steps may have shrunk α far below the scale they ran at)
            rec.add(0.0, path.alpha, _objective(problem, path, y_host))
            break
    return rec.result("theta", None, path.s, path.n_breakpoints, start_time)


def op_s(path, problem, y_host, s_start, s_end, start_time) -> OutlierPath:
    """OP-s (section 4.3): θ = 0, s from ``s_start`` toward ``s_end``; the solution is constant
    between breakpoints, the values of s at which a point meets the wall."""
    rec = Recorder()
    path.theta = 0.0
    path.s = s_start
    path.retable(np.arange(path.n), problem.partition(to_host(path.z), y_host, path.s))
    rec.add(path.s, path.alpha, _objective(problem, path, y_host))
    d = problem.direction
    stalled = _Stall(path)
    while True:
        _d_steps(path, problem, rec, lambda: path.s, y_host)
        stalled(path.s)
        s_next, k, j = path.next_wall(d)
        if s_next is None or d * (s_next - s_end) > 0:
            path.s = s_end
            rec.add(s_end, path.alpha, _objective(problem, path, y_host))
            break
        path.s = s_next
        path.enter_wall(k, j)
        rec.add(path.s, path.alpha, _objective(problem, path, y_host))
        if s_next == s_end and not path.boundary_points():
            break
    return rec.result("s", 0.0, None, path.n_breakpoints, start_time)


def cccp(path, problem, y_host, kind, grid, theta_s, max_iter, start_time):
    """CCCP (Yuille & Rangarajan 2002) at each grid value, warm-started: relinearize the
    concave part at the current solution and solve the convex problem exactly (a μ-path),
    until the linearization no longer changes. Returns the path and the iterations per value."""
    rec = Recorder()
    n_iter = []
    for g, (theta, s) in zip(grid, theta_s):
        path.theta, path.s = theta, s
        for it in range(max_iter):
            new = problem.cccp(to_host(path.z), y_host, theta, s)
            old = path.tables.rows(np.arange(path.n))
            changed = np.flatnonzero(np.any(np.concatenate([a != b for a, b in zip(new, old)], axis=1), axis=1))
            if changed.size == 0:
                break
            path.retable(changed, tuple(a[changed] for a in new))
        else:
            raise PathError(f"CCCP did not settle in max_iter={max_iter} iterations at {kind}={g:.4g}")
        n_iter.append(it + 1)  # linearizations computed, the fixed point's included
        rec.add(g, path.alpha, problem.objective(path.alpha, to_host(path.z), y_host, theta, s))
    fixed = (None, theta_s[0][1]) if kind == "theta" else (0.0, None)
    return rec.result(kind, fixed[0], fixed[1], path.n_breakpoints, start_time), n_iter
