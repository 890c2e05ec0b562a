"""The C-SVC solution path of Karasuyama & Takeuchi (2009), section 3.

:class:`SVCState` holds an optimal C-SVC solution together with what is needed to move it:
the margins ``y ⊙ f`` of every point (on the device), the coefficients α and the index sets
(on the host), the factor of the bordered margin matrix 𝐌 (host) and the device cache of the
margin columns ``Q[:, M]``. :meth:`SVCState.follow` adds the points A and removes the points R
along one multi-parametric path (eqs. 3–11), with the empty-margin case of section 3.3.
It returns a new state and changes nothing the state it is called on reads, except columns of
the shared device cache, which it saves first: a failure part-way puts them back and leaves
that state as it was; after a success that state is spent (:mod:`gpath.cache`).

Notation (../shared/DESIGN.md): ``Q_ij = y_i y_j K(x_i, x_j) + ridge·[i = j]``; index sets
O (α = 0, y f > 1), M (y f = 1), I (α = C, y f < 1), A (being added), R (being removed).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ._array_api import namespace_by_name, to_device, to_host
from ._ratio import EPS as _EPS
from ._ratio import next_bound_hit, next_side_crossing
from .cache import QColumnCache
from .kernels import Kernel, q_columns
from .linalg import BorderedFactor, single_threaded_host_blas
from .persistence import record

__all__ = ["A", "I", "M", "O", "PathError", "PathStats", "R", "SVCState"]

# Set codes of the host array ``where``.
O, M, I, A, R = 0, 1, 2, 3, 4


class PathError(RuntimeError):
    """The path could not be followed (cycling among degenerate breakpoints, or a broken
    invariant); the model it started from is unchanged."""


@record
@dataclass(frozen=True)
class PathStats:
    """What one path (one ``fit`` or ``update``) did.

    Attributes
    ----------
    n_breakpoints : int
        Breakpoints passed: each change of an index set during the path (eq. 11's events),
        including the bias jumps of the empty-margin case (section 3.3).
    n_added, n_removed : int
        Points added and removed.
    time : float
        Wall time in seconds.
    margin_size : int
        |M| at the end.
    """

    n_breakpoints: int
    n_added: int
    n_removed: int
    time: float
    margin_size: int


class SVCState:
    """An exact C-SVC solution that can be moved along the incremental/decremental path.

    Parameters
    ----------
    xp, device
        Namespace and device of every n-sized array.
    kernel : Kernel
    C : float
        Box constraint, > 0.
    ridge : float
        Constant added to the kernel diagonal (Q_ii includes it everywhere, also in y f).
    n_features : int
    """

    def __init__(self, xp, device, kernel: Kernel, C: float, ridge: float, n_features: int):
        self.xp, self.device = xp, device
        self.kernel, self.C, self.ridge = kernel, float(C), float(ridge)
        f64 = xp.float64
        self.X = xp.zeros((0, n_features), dtype=f64, device=device)
        self.X_sq = xp.zeros(0, dtype=f64, device=device)  # kernel.row_norms(X), kept with X
        self.y = xp.zeros(0, dtype=f64, device=device)
        self.yf = xp.zeros(0, dtype=f64, device=device)
        # side_i = +1 on O (y f must stay > 1), -1 on I and A (< 1), 0 on M and R.
        self.side = xp.zeros(0, dtype=f64, device=device)
        self.y_host = np.zeros(0)
        self.alpha = np.zeros(0)
        self.where = np.zeros(0, dtype=np.int8)
        self.b = 0.0
        self.margin: list[int] = []
        self.factor = BorderedFactor()
        self.cache = QColumnCache(xp, device, 0)

    def __getstate__(self):
        return {**self.__dict__, "xp": self.xp.__name__}

    def __setstate__(self, state):
        self.__dict__.update(state, xp=namespace_by_name(state["xp"]))

    @property
    def n(self) -> int:
        return self.alpha.shape[0]

    # ------------------------------------------------------------------ Q columns
    def q_block(self, X_cols, y_cols, col_rows: np.ndarray):
        """Columns ``Q[:, cols]`` (n × k, device) for points with inputs ``X_cols`` (k × d),
        labels ``y_cols`` (device, ±1) and row indices ``col_rows`` (host; -1 if not a row)."""
        return q_columns(self.kernel, self.X, X_cols, col_rows, self.ridge, self.y, y_cols, self.X_sq)

    def q_column(self, k: int):
        """Column ``Q[:, k]`` (device, shape (n,)) for training point k."""
        cols = self.q_block(self.X[k : k + 1, :], self.y[k : k + 1], np.array([k]))
        self.cache.n_columns_computed += 1
        return cols[:, 0]

    # ------------------------------------------------------------------ copies
    def _extended(self, X_add, y_add) -> tuple[SVCState, object]:
        """A copy of the state with the rows ``X_add`` appended (α = 0, set A), and the device
        block ``Q[:, A]`` of the new points (n_new × m)."""
        xp = self.xp
        new = object.__new__(SVCState)
        new.__dict__.update(self.__dict__)
        m = X_add.shape[0]
        n_old = self.n
        new.X = xp.concat([self.X, X_add], axis=0)
        new.X_sq = xp.concat([self.X_sq, self.kernel.row_norms(X_add)])
        new.y = xp.concat([self.y, y_add], axis=0)
        new.y_host = np.concatenate([self.y_host, to_host(y_add)])
        new.alpha = np.concatenate([self.alpha, np.zeros(m)])
        new.where = np.concatenate([self.where, np.full(m, A, dtype=np.int8)])
        new.margin = list(self.margin)
        new.factor = self.factor.copy()
        QA = new.q_block(X_add, y_add, np.arange(n_old, n_old + m))
        if m:
            # Margins of the new points: y_A f(x_A) = Q[:, A]ᵀ α + y_A b (α_A = 0).
            alpha_dev = to_device(new.alpha, xp, self.device)
            yf_add = alpha_dev @ QA + self.b * y_add
            new.yf = xp.concat([self.yf, yf_add])
            new.side = xp.concat([self.side, -xp.ones(m, dtype=xp.float64, device=self.device)])
            # Rows of the new points in the cached columns: Q[A, p] = Q[p, A].
            owners = np.maximum(self.cache.owner, 0)
            rows = xp.take(QA, to_device(owners, xp, self.device), axis=0)
            held = to_device((self.cache.owner >= 0).astype(np.float64), xp, self.device)
            new.cache = self.cache.with_rows_appended(rows * held[:, None])
        else:
            new.yf = xp.asarray(self.yf, copy=True)
            new.side = xp.asarray(self.side, copy=True)
            new.cache = self.cache.with_rows_kept(np.arange(n_old))
        return new, QA

    def take_rows(self, keep: np.ndarray) -> None:
        """Keep the points ``keep`` (host int array of row indices), in that order."""
        xp = self.xp
        keep_dev = to_device(keep, xp, self.device)
        self.X = xp.take(self.X, keep_dev, axis=0)
        self.X_sq = xp.take(self.X_sq, keep_dev)
        self.y = xp.take(self.y, keep_dev)
        self.yf = xp.take(self.yf, keep_dev)
        self.side = xp.take(self.side, keep_dev)
        new_index = np.full(self.n, -1, dtype=np.int64)
        new_index[keep] = np.arange(keep.shape[0])
        self.y_host, self.alpha, self.where = self.y_host[keep], self.alpha[keep], self.where[keep]
        self.margin = [int(new_index[k]) for k in self.margin]
        self.factor.renumber(new_index)
        self.cache = self.cache.with_rows_kept(keep)
        self.cache.renumber(new_index)

    # ------------------------------------------------------------------ the path
    @single_threaded_host_blas
    def follow(self, X_add, y_add, remove: np.ndarray, max_columns=None) -> tuple[SVCState, PathStats]:
        """Add the rows ``X_add`` and remove the rows ``remove`` along one path.

        Parameters
        ----------
        X_add : device array of shape (m, n_features), float64
        y_add : device array of shape (m,), float64, entries ±1
        remove : host int array of shape (ℓ,)
            Row indices of the points to remove.
        max_columns : int or None
            Limit of the kernel-column cache (see :class:`QColumnCache`).

        Returns
        -------
        state : SVCState
            The new optimal solution: the kept rows in their order, then the added rows.
        stats : PathStats

        Raises
        ------
        PathError
            On cycling or a broken invariant (``self`` is as it was, the cache columns put back
            by the transaction this runs in).
        SingularMarginError
            If 𝐌 becomes singular (duplicate margin points with ``ridge=0``).

        References
        ----------
        Karasuyama & Takeuchi (2009), section 3.2 (eqs. 3–11) and 3.3 (empty margin).
        """
        start = time.perf_counter()
        with self.cache.transaction():  # the new state writes into the shared cache buffer
            state, QA = self._extended(X_add, y_add)
            state.cache.max_columns = max_columns
            state.cache.check_limit()
            run = _PathRun(state, QA, self.n, np.asarray(remove, dtype=np.int64))
            n_breakpoints = run.run()
            keep = np.flatnonzero(state.where != R)
            state.take_rows(keep)
            state.release_bounded_margin()
            state.cache.compact()
        stats = PathStats(
            n_breakpoints=n_breakpoints,
            n_added=int(X_add.shape[0]),
            n_removed=len(remove),
            time=time.perf_counter() - start,
            margin_size=len(state.margin),
        )
        return state, stats

    def bias_interval(self):
        """Bounds ``(lo, hi)`` on the bias that keep every point of O, I and A in its set
        (section 3.3, eq. 12), with the index attaining each (-1 where no point bounds)."""
        xp = self.xp
        inf = float("inf")
        # b + y_i (1 - y_i f_i) is the bias at which point i would sit on the margin.
        t = self.b + self.y * (1.0 - self.yf)
        sy = self.side * self.y
        lo_vals = xp.where(sy == 1.0, t, -inf)
        hi_vals = xp.where(sy == -1.0, t, inf)
        i_lo, i_hi = int(xp.argmax(lo_vals)), int(xp.argmin(hi_vals))
        lo, hi = float(lo_vals[i_lo]), float(hi_vals[i_hi])
        return (lo, i_lo if lo > -inf else -1), (hi, i_hi if hi < inf else -1)

    def release_bounded_margin(self) -> None:
        """If no margin coefficient is strictly inside (0, C), the bias is not unique: move
        those points to O or I and take the middle of the bias interval, as LIBSVM does."""
        C = self.C
        a = self.alpha[self.margin]
        at_0, at_c = a <= 1e-12 * C, a >= C * (1.0 - 1e-12)
        if not np.all(at_0 | at_c):
            return
        for k, zero in zip(list(self.margin), at_0):
            self.factor.delete(self.margin.index(k))
            self.margin.remove(k)
            self.cache.release(k)
            self.alpha[k] = 0.0 if zero else C
            self.where[k] = O if zero else I
            self.side[k] = 1.0 if zero else -1.0
        self._center_bias()

    def margin_residual(self) -> np.ndarray:
        """Residual ``[−yᵀα; 1 − y_M f(x_M)]`` of the margin equations with y f recomputed
        from α (one product with the cached margin columns, O(n·|M|)): the drift of the
        incremental state."""
        xp = self.xp
        r_eq = -float(self.y_host @ self.alpha)
        if not self.margin:
            return np.array([r_eq])
        slots = np.array([self.cache.slot_of[k] for k in self.margin])
        alpha = to_device(self.alpha, xp, self.device)
        yf_m = to_host(self.cache.column_dots(slots, alpha)) + self.y_host[self.margin] * self.b
        return np.concatenate([[r_eq], 1.0 - yf_m])

    def refine(self, tol: float = 1e-10) -> float:
        """Repair accumulated round-off (iterative refinement).

        When the margin equations' residual (:meth:`margin_residual`) exceeds ``tol``: refactor
        𝐌, correct (b, α_M) by one solve with it, and recompute every y f from α with fresh
        kernel values. Large C makes this necessary: the MID direction C − α_A is then huge
        and each breakpoint's η ψ carries an error of order ε·C.

        Returns
        -------
        residual : float
            The largest residual before the repair.
        """
        r = self.margin_residual()
        worst = float(np.abs(r).max())
        if worst <= tol:
            return worst
        if self.margin:
            self.factor.refactor()
            delta = self.factor.solve(r)
            self.b += float(delta[0])
            self.alpha[self.margin] = np.clip(self.alpha[self.margin] + delta[1:], 0.0, self.C)
        self.yf = self.margins_from_alpha()
        return worst

    def margins_from_alpha(self):
        """``y ⊙ f`` on the training rows from α with fresh kernel values (device, (n,))."""
        xp = self.xp
        sv = np.flatnonzero(self.alpha)
        yf = self.y * self.b + self.ridge * to_device(self.alpha, xp, self.device)
        for start in range(0, sv.size, 2048):
            part = sv[start : start + 2048]
            part_dev = to_device(part, xp, self.device)
            coef = to_device(self.y_host[part] * self.alpha[part], xp, self.device)
            yf = yf + self.y * (self.kernel(self.X, xp.take(self.X, part_dev, axis=0), self.X_sq) @ coef)
        return yf

    def _center_bias(self) -> None:
        """With an empty margin the bias is only bounded; take the middle of its interval
        (as LIBSVM does), or the finite end when the interval is a half-line."""
        if self.n == 0:
            return
        (lo, _), (hi, _) = self.bias_interval()
        if np.isfinite(lo) and np.isfinite(hi):
            b = 0.5 * (lo + hi)
        elif np.isfinite(lo) or np.isfinite(hi):
            b = lo if np.isfinite(lo) else hi
        else:
            return
        self.yf = self.yf + self.y * (b - self.b)
        self.b = b

    @classmethod
    def at_zero(cls, xp, device, X, y, kernel: Kernel, C: float, ridge: float) -> SVCState:
        """The feasible point α = 0 on the rows (X, y): every point in O, M empty, b = 0.

        SimpleSVM (:mod:`gpath.simple`) starts here and moves this state, in place, to the
        optimum: its sets S0, Swork, SC are O, M, I, its working-set factor is ``factor`` and
        its working-set columns are in ``cache``, so the result is a state :meth:`follow` can
        move on.

        Parameters
        ----------
        xp, device
            Namespace and device of X and y.
        X : device array of shape (n_samples, n_features), float64
        y : device array of shape (n_samples,), float64, entries ±1
        kernel : Kernel
        C : float
            Box constraint, > 0 (inf: no upper bound).
        ridge : float
            Constant on the diagonal of Q.
        """
        state = cls(xp, device, kernel, C, ridge, X.shape[1])
        n = X.shape[0]
        state.X, state.y = X, y
        state.X_sq = kernel.row_norms(X)
        state.y_host = to_host(y).astype(np.float64)
        state.yf = xp.zeros(n, dtype=xp.float64, device=device)
        state.side = xp.ones(n, dtype=xp.float64, device=device)
        state.alpha = np.zeros(n)
        state.where = np.full(n, O, dtype=np.int8)
        state.cache = QColumnCache(xp, device, n)
        return state


def restored(xp, device, X, y, kernel, C, ridge, alpha, b, where, yf, margin) -> SVCState:
    """The state of a saved model: α, b, sets and margins as saved, the margin set entered in
    its saved (factor) order, which rebuilds the factor and the cached columns.

    Raises
    ------
    ValueError
        If a margin row is not marked as a margin point.
    """
    state = SVCState.at_zero(xp, device, X, y, kernel, C, ridge)
    state.alpha, state.b, state.where = alpha.copy(), float(b), where.astype(np.int8)
    state.yf = to_device(yf, xp, device)
    side = np.where(state.where == O, 1.0, np.where(state.where == I, -1.0, 0.0))
    state.side = to_device(side, xp, device)
    for k in margin.tolist():
        if state.where[k] != M:
            raise ValueError(f"corrupt gpath model file: margin row {k} is not in the margin set")
        slot = state.cache.store(k, state.q_column(k))
        q = to_host(state.cache.entries(slot, np.append(state.factor.basis, k)))
        state.factor.insert(k, state.y_host[k], q[:-1], q[-1])
        state.margin.append(k)
    return state


class _PathRun:
    """One multi-parametric path: the working variables of :meth:`SVCState.follow`.

    η always runs over [0, 1] for the *remaining* distance: after each breakpoint the
    directions d_A = C − α_A and d_R = α_R are what is left to move (DESIGN.md pitfalls).
    """

    def __init__(self, state: SVCState, QA, n_old: int, remove: np.ndarray):
        self.s = state
        self.QA = QA
        xp, C = state.xp, state.C
        # Points of A already satisfying (1a) go straight to O (section 3.2).
        a_rows = np.arange(n_old, state.n)
        yf_a = to_host(state.yf[n_old:]) if a_rows.size else np.zeros(0)
        to_o = a_rows[yf_a >= 1.0 - _EPS]  # on the margin to round-off: KKT holds at α = 0
        for k in to_o:
            self._set_side(int(k), 1.0)
        state.where[to_o] = O
        self.a_rows = list(a_rows[yf_a < 1.0 - _EPS])
        self.a_col = {int(k): j for j, k in enumerate(a_rows)}  # column of QA
        # Points of R leave every set now; those with α = 0 have no influence at all.
        self.r_rows = [int(k) for k in remove if state.alpha[k] > 0.0]
        for k in remove:
            k = int(k)
            if state.where[k] == M:
                self._margin_delete(k)
            state.where[k] = R
            self._set_side(k, 0.0)
        self.dA = np.full(len(self.a_rows), C) - state.alpha[self.a_rows]
        self.dR = state.alpha[self.r_rows].copy()
        # u = Q[:, A] d_A − Q[:, R] d_R: the part of ψ (eq. 11) that does not involve M.
        u = xp.zeros(state.n, dtype=xp.float64, device=state.device)
        if self.a_rows:
            cols = to_device(np.array([self.a_col[k] for k in self.a_rows]), xp, state.device)
            u = u + xp.take(QA, cols, axis=1) @ to_device(self.dA, xp, state.device)
        if self.r_rows:
            r = np.array(self.r_rows)
            QR = state.q_block(xp.take(state.X, to_device(r, xp, state.device), axis=0),
                               xp.take(state.y, to_device(r, xp, state.device)), r)
            u = u - QR @ to_device(self.dR, xp, state.device)
        self.u = u

    # -- small helpers ---------------------------------------------------------
    def _set_side(self, k: int, value: float) -> None:
        self.s.side[k] = value

    def _margin_delete(self, k: int) -> None:
        s = self.s
        s.factor.delete(s.margin.index(k))
        s.margin.remove(k)
        s.cache.release(k)

    def _margin_insert(self, k: int) -> None:
        """Point k enters M: its Q column goes to the cache and a row/column to 𝐌."""
        s, xp = self.s, self.s.xp
        slot = s.cache.lookup(k)
        if slot is None:
            col = xp.take(self.QA, to_device(np.array([self.a_col[k]]), xp, s.device), axis=1)[:, 0] \
                if k in self.a_col else s.q_column(k)
            slot = s.cache.store(k, col)
        q = to_host(s.cache.entries(slot, np.append(s.factor.basis, k)))
        s.factor.insert(k, s.y_host[k], q[:-1], q[-1])
        s.margin.append(k)
        s.where[k] = M
        s.yf[k] = 1.0
        self._set_side(k, 0.0)

    def _leave_a(self, k: int) -> None:
        """Point k of A stops moving with η: drop its term from u and δ."""
        j = self.a_rows.index(k)
        xp, s = self.s.xp, self.s
        col = xp.take(self.QA, to_device(np.array([self.a_col[k]]), xp, s.device), axis=1)[:, 0]
        self.u = self.u - float(self.dA[j]) * col
        del self.a_rows[j]
        self.dA = np.delete(self.dA, j)

    def _delta(self) -> float:
        """δ(α) of section 3.3: the change of yᵀα asked for by the remaining path."""
        yh = self.s.y_host
        return float(yh[self.a_rows] @ self.dA - yh[self.r_rows] @ self.dR)

    # -- the loop --------------------------------------------------------------
    def run(self) -> int:
        s, xp, C = self.s, self.s.xp, self.s.C
        n_breakpoints = 0
        zero_steps = 0
        max_breakpoints = 50 * (s.n + 10)
        while self.a_rows or self.r_rows:
            if n_breakpoints > max_breakpoints or zero_steps > 2 * s.n + 10:
                raise PathError(
                    f"the path did not finish after {n_breakpoints} breakpoints "
                    f"({zero_steps} of them zero-length in a row): degenerate cycling"
                )
            delta = self._delta()
            if abs(delta) <= _EPS * C * (len(self.a_rows) + len(self.r_rows)):
                delta = 0.0  # round-off of a balanced update: treat it as balanced everywhere
            if not s.margin and delta != 0.0:
                self._enter_empty_margin(delta)
                n_breakpoints += 1
                zero_steps += 1
                continue
            # Direction (eqs. 10–11): [Δb; Δα_M] = η φ and y ⊙ Δf = η ψ.
            if s.margin:
                m_dev = to_device(np.array(s.margin), xp, s.device)
                rhs = np.concatenate([[delta], to_host(xp.take(self.u, m_dev))])
                phi = -s.factor.solve(rhs)
                coef = np.zeros(s.cache.capacity)
                coef[[s.cache.slot_of[k] for k in s.margin]] = phi[1:]
                psi = float(phi[0]) * s.y + s.cache.matvec(coef) + self.u
            else:
                phi = np.zeros(1)
                psi = self.u
            eta, event = self._ratio_test(phi, psi)
            # Move every variable by η (eqs. 3, 4, 10, 11).
            margin = np.array(s.margin, dtype=np.int64)
            # Rates below round-off are not events (_ratio_test); clip what they move.
            s.alpha[margin] = np.clip(s.alpha[margin] + eta * phi[1:], 0.0, C)
            s.alpha[self.a_rows] += eta * self.dA
            s.alpha[self.r_rows] -= eta * self.dR
            s.b += eta * float(phi[0])
            s.yf = s.yf + eta * psi
            self.u = (1.0 - eta) * self.u
            self.dA *= 1.0 - eta
            self.dR *= 1.0 - eta
            if event is None:
                s.alpha[self.a_rows] = C
                s.where[self.a_rows] = I
                s.alpha[self.r_rows] = 0.0
                break
            n_breakpoints += 1
            zero_steps = zero_steps + 1 if eta == 0.0 else 0
            self._apply(event)
        return n_breakpoints

    def _ratio_test(self, phi, psi):
        """Smallest η ∈ [0, 1] at which an inequality of (8)–(9) becomes an equality.

        Returns ``(η, event)`` with ``event = (k, kind)`` (kind "bound0", "boundC" for a margin
        point, "margin" for a point of O, I or A reaching y f = 1), or ``(1.0, None)``.
        Ties go to the smallest point index (deterministic, Bland-like).
        """
        s, xp, C = self.s, self.s.xp, self.s.C
        best_eta, best = 1.0, None
        if s.margin:
            t, j, up = next_bound_hit(s.alpha[s.margin], phi[1:], np.zeros(len(s.margin)),
                                      np.full(len(s.margin), C), C)
            if t < best_eta:
                best_eta, best = t, (s.margin[j], "boundC" if up else "bound0")
        # O, I, A: slack side·(y f − 1) ≥ 0 shrinks at rate −side·ψ (device reductions).
        eta_k, k = next_side_crossing(xp, s.yf, psi, s.side)
        if eta_k < best_eta or (best is not None and eta_k == best_eta and k < best[0]):
            best_eta, best = eta_k, (k, "margin")
        return best_eta, best

    def _apply(self, event) -> None:
        s, C = self.s, self.s.C
        k, kind = event
        if kind == "margin":
            if s.where[k] == A:
                self._leave_a(k)
            self._margin_insert(k)
        else:
            self._margin_delete(k)
            to_o = kind == "bound0"
            s.alpha[k] = 0.0 if to_o else C
            s.where[k] = O if to_o else I
            self._set_side(k, 1.0 if to_o else -1.0)

    def _enter_empty_margin(self, delta: float) -> None:
        """Empty margin with δ(α) ≠ 0 (section 3.3): move the bias to the end of its interval
        that lets the point there take up −δ, and put that point in M."""
        s = self.s
        (lo, i_lo), (hi, i_hi) = s.bias_interval()
        b_new, k = (hi, i_hi) if delta > 0 else (lo, i_lo)
        if k < 0:
            raise PathError(
                "the margin set is empty and no point can restore yᵀα = 0: "
                "the training set would hold a single class"
            )
        s.yf = s.yf + s.y * (b_new - s.b)
        s.b = b_new
        if s.where[k] == A:
            self._leave_a(k)
        self._margin_insert(k)
