"""The MID path loop compiled for NumPy arrays (Karasuyama & Takeuchi 2009, sections 3.2–3.3).

:meth:`gpath._path._PathRun.run` is the readable loop, run for every other namespace; this is
the same loop, step for step and with the same tie rule, compiled with Numba, so that a
breakpoint costs its arithmetic (the n × |M| product, a few O(|M|²) factor operations and one
pass over n) and no interpreter time. Tests hold the two to the same events.

It keeps the very books the Python side keeps, in place: the factor's arrays
(:attr:`gpath.linalg.BorderedFactor.arrays`), the active set's slots, the cache's bookkeeping
(:mod:`gpath.cache`) and the state's margins, levels, α and sets. It returns to Python at the
end of the path, or before an event whose prerequisites it does not handle — a cache without
a free slot, a factor without room, a tiny pivot, a factor to refactor — leaving that event
untouched for Python to apply (:meth:`gpath._path._PathRun._apply`), after which it carries on.
On several cores it also hands a breakpoint's product back where it is large enough to be
worth them (:func:`gpath._engine.combine_in_threads`: Python's threads, not Numba's parallel
loops, :mod:`gpath._threads`), and resumes at the ratio test with the same sums. Over
ε-SVR's doubled rows a large product reads one entry a point instead (:func:`product`). On a
large problem (2²⁰ product entries: Adult n = 10,000) the breakpoint after each full product
computes only the rows that can reach their level in its step (:mod:`gpath._screening`).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from . import _engine, _screening
from ._engine import (
    _KINDS,
    _bias_interval,
    _combine,
    _finish,
    _q_column,
    _ratio,
    _twin_columns,
    combine_in_threads,
    threaded_product_size,
    twin_combine,
)
from ._ratio import EPS, first_bound_hit
from .cache import _claim, _lookup, _release
from .linalg import _MAX_RESIDUAL, factor_delete, factor_insert, factor_solve

__all__ = ["APPLY", "CYCLING", "DONE", "NO_POINT", "PRODUCT", "REFACTOR", "run"]

# What the loop returns.
DONE, APPLY, REFACTOR, CYCLING, NO_POINT, PRODUCT = range(6)
# Set codes (gpath._path) and event kinds of the event log.
_O, _M, _I, _A, _R = 0, 1, 2, 3, 4
BOUND_LOWER, BOUND_UPPER, CROSSING = 0, 1, 2
_EMPTY = 3  # an empty margin set's bias jump (section 3.3), for APPLY


def loop_kernel(s, X=None) -> tuple:
    """The compiled loops' kernel of the state ``s`` (on its rows ``X``, by default its own):
    ``(X, kind, γ, degree, coef0, offset, ridge, twins, by_point, screen)``, ``twins`` where rows 2i and
    2i + 1 are one point (ε-SVR's doubled rows, :mod:`gpath.svr`), and then from ``by_point``
    entries (points × margin columns) on a breakpoint's product reads one entry a point
    (:func:`product`; :data:`gpath._engine.TWIN_PRODUCT`, read here so that a test can lower it),
    and ``screen``, the product's entries from which the MID loop screens every other breakpoint
    (:data:`gpath._screening.SCREEN_ENTRIES`, read here too; 0: never)."""
    k = s.kernel
    return (s.X if X is None else X, _KINDS[k.kind], float(k.gamma), float(k.degree), float(k.coef0),
            float(k.offset), s.ridge, bool(s.twins), int(_engine.TWIN_PRODUCT), _screen_entries(k))


def _screen_entries(kernel) -> int:
    """The loops' screening threshold for ``kernel``: the RBF kernel's only, whose k(x, x) is
    1 + offset at every point (:mod:`gpath._screening`'s κ), and positive semi-definite (its
    bound is Cauchy–Schwarz in the kernel's feature space: not with a negative offset)."""
    return int(_screening.SCREEN_ENTRIES) if kernel.kind == "rbf" and kernel.positive_semidefinite else 0


@njit(cache=True)
def _kernel_column(kernel, k, y, out):
    """Q[:, k] of the loops' ``kernel`` (:func:`loop_kernel`) with labels ``y``, into ``out``
    (n,). Of doubled rows, each point's kernel value once (:func:`gpath._engine._twin_columns`:
    the same bits as :func:`gpath._engine._q_column`, which computes every value twice; a point
    entering M cost a window's path 7.3 µs, WaterFlow's 1,260 rows, and 5.0 µs so)."""
    X, kind, gamma, degree, coef0, offset, ridge, twins = kernel[:8]
    if twins:
        _twin_columns(X, np.array([k]), kind, gamma, degree, coef0, offset, y, ridge, out.reshape((out.shape[0], 1)))
    else:
        _q_column(X, k, kind, gamma, degree, coef0, offset, y, ridge, out)


@njit(cache=True)
def twin_arrays(capacity, n_points):
    """:func:`gpath._engine.twin_combine`'s ``twins`` for a cache of ``capacity`` slots and
    ``n_points`` points: no column yet. A loop starts from ``twin_arrays(0, 0)`` and makes its
    own at its first product by point (:func:`product`)."""
    return (np.empty((capacity, n_points)), np.full(capacity, -1, dtype=np.int64),
            np.zeros(n_points, dtype=np.bool_))


@njit(cache=True)
def _by_point(kernel, n, m):
    """Whether a loop's product over ``n`` rows and ``m`` margin columns reads one entry a point
    (:func:`gpath._engine.twin_combine`: rows in twins, enough entries to be worth it)."""
    return kernel[7] and (n // 2) * m >= kernel[8]


@njit(cache=True)
def product(kernel, data, top, rows, slots, members, phi, a, y, c, u, prod, psi, twins):
    """A loop's ψ = a·y + Q[:, slots] φ + c·u (labels ``y``; the columns of the rows ``members``) for the
    loops' ``kernel`` (:func:`loop_kernel`): :func:`gpath._engine.twin_combine` where
    :func:`_by_point`, with its ``twins`` (:func:`twin_arrays`, made here at the first and
    kept by the loop while it runs: the cache's columns change only through the loop), else
    :func:`gpath._engine._combine`. Returns (max |ψ|, twins). Its columns by point take half
    the cache's buffer in address space (slots × points), of which only the margin columns'
    rows are written (|M| × points × 8 bytes)."""
    n, m = psi.shape[0], slots.shape[0]
    if not _by_point(kernel, n, m):
        return _combine(data, top, rows, slots, phi, a, y, c, u, prod, psi), twins
    if twins[0].shape[0] != data.shape[0]:
        twins = twin_arrays(data.shape[0], n // 2)
    return twin_combine(data, rows, slots, members, phi, a, y, c, u, kernel[6], twins, prod, psi), twins


@njit(cache=True)
def _place(k, code, where, lo, hi, upper):
    """gpath._path.SVCState.place: the set and its levels."""
    where[k] = code
    lo_k, hi_k = -math.inf, math.inf
    if upper[k] > 0.0:
        if code == _O:
            lo_k = 1.0
        elif code == _I or code == _A:
            hi_k = 1.0
    lo[k] = lo_k
    hi[k] = hi_k


@njit(cache=True)
def _enter(k, state, factor, slots, cache, kernel, columns, col):
    """Point k enters M: its column (cached, from the added points' columns, or computed) and
    its factor row. ``columns`` = (QA, a_col, computed): the added points' columns of Q
    (column ``a_col[k]`` for point k, −1 for the others; the C path has none) and the count
    of columns computed here, in ``computed[0]``.

    Returns 0 if it went in, 1 if Python must apply the event (no free slot or no room in the
    factor: nothing was changed; a tiny pivot: the column stays cached, nothing else)."""
    yf, lo, hi, y, alpha, upper, where = state
    R, Q, fy, g, basis, qs, work, xs, buf, fints, ffloats = factor
    data, top, rows, owner, used, slot_of, free, counts, protected, written, limits = cache
    QA, a_col, computed = columns
    m = fints[0]
    if m == R.shape[0]:
        return 1
    slot = _lookup(owner, used, slot_of, free, counts, k)
    if slot < 0:
        n_used = 0
        for s in range(used.shape[0]):
            n_used += used[s]
        if limits[0] >= 0 and n_used >= limits[0]:
            return 1
        slot = _claim(owner, used, slot_of, free, counts, protected, k)
        if slot < 0:
            return 1
        j = a_col[k]
        if j >= 0:
            for i in range(col.shape[0]):
                col[i] = QA[i, j]
        else:
            _kernel_column(kernel, k, y, col)
            computed[0] += 1
        identity = rows.shape[0] == 0
        if not identity:
            for i in range(top):
                data[slot, i] = 0.0
        for i in range(col.shape[0]):
            data[slot, i if identity else rows[i]] = col[i]
        if written.shape[0] > slot:
            written[slot] = True
    identity = rows.shape[0] == 0
    q_kB = np.empty(m)
    for i in range(m):
        p = basis[i]
        q_kB[i] = data[slot, p if identity else rows[p]]
    q_kk = data[slot, k if identity else rows[k]]
    ok, _ = factor_insert(R, Q, fy, g, basis, qs, work, xs, buf, fints, ffloats, k, y[k], q_kB, q_kk, True)
    if not ok:
        _release(used, slot_of, free, counts, k)
        return 1
    slots[m] = slot
    return 0


@njit(cache=True)
def _leave(k, factor, slots, cache):
    """Point k leaves M (its column stays cached)."""
    R, Q, fy, g, basis, qs, work, xs, buf, fints, ffloats = factor
    data, top, rows, owner, used, slot_of, free, counts, protected, written, limits = cache
    m = fints[0]
    j = 0
    while basis[j] != k:
        j += 1
    factor_delete(R, Q, fy, g, basis, qs, work, xs, buf, fints, ffloats, j)
    for i in range(j, m - 1):
        slots[i] = slots[i + 1]
    _release(used, slot_of, free, counts, k)


@njit(cache=True)
def _leave_a(k, state, path):
    """gpath._path._PathRun._leave_a: α_k stops, its term leaves u and δ."""
    yf, lo, hi, y, alpha, upper, where = state
    u, QA, a_col, a_rows, dA, pints, pfloats = path
    na = pints[0]
    j = 0
    while a_rows[j] != k:
        j += 1
    d = dA[j]
    alpha[k] = upper[k] - pfloats[0] * d
    c = a_col[k]
    for i in range(u.shape[0]):
        u[i] -= d * QA[i, c]
    pfloats[1] -= y[k] * d
    for i in range(j, na - 1):
        a_rows[i] = a_rows[i + 1]
        dA[i] = dA[i + 1]
    pints[0] = na - 1


@njit(cache=True)
def _log(events, logged, kind, k):
    """Log the event (kind, point) while ``events`` has room (``logged[0]``: events logged)."""
    if events.shape[1] > logged[0]:
        events[0, logged[0]], events[1, logged[0]] = kind, k
        logged[0] += 1


@njit(cache=True)
def _insert_margin(k, state, factor, slots, cache, kernel, path, columns, col):
    """gpath._path._PathRun._margin_insert; 1 if Python must apply it (see :func:`_enter`)."""
    yf, lo, hi, y, alpha, upper, where = state
    if _enter(k, state, factor, slots, cache, kernel, columns, col):
        return 1
    if where[k] == _A:
        _leave_a(k, state, path)
    _place(k, _M, where, lo, hi, upper)
    yf[k] = 1.0
    return 0


@njit(cache=True)
def run(state, factor, slots, cache, kernel, path, work, events):
    """Follow the path until it ends (DONE) or needs Python (APPLY with the event in
    ``path``'s ints 4–6, REFACTOR, CYCLING, NO_POINT, or PRODUCT: ψ of the direction in
    ``work``'s x to compute on every core, :func:`follow`).

    ``path`` = (u, QA, a_col, a_rows, dA, ints, floats) with ints = [|A| left,
    breakpoints, zero-length steps in a row, columns computed, event kind, point, upward,
    events logged, |R| moving, most breakpoints, 1 if the factor was just refactored, the
    product's size (|M| times the cache's rows) from which Python computes it (0: never), 1
    if ψ is there (the loop resumes at the ratio test), the first bound hit's point and
    whether upward, breakpoints screened (:mod:`gpath._screening`)] and floats = [r, δ₀ (the
    δ of r = 1), b, C, the size of the update's own
    rates at r = 1, the first bound hit's step, max |ψ|]; ``work`` = (ψ, product buffer, rhs,
    x, column); ``events`` (2, capacity) logs (kind, point) of every event when its capacity
    allows (tests)."""
    yf, lo, hi, y, alpha, upper, where = state
    R, Q, fy, g, basis, qs, fwork, xs, buf, fints, ffloats = factor
    data, top, rows, owner, used, slot_of, free, counts, protected, written, limits = cache
    u, QA, a_col, a_rows, dA, pints, pfloats = path
    psi, prod, rhs, x, col = work
    columns = (QA, a_col, pints[3:4])
    n = yf.shape[0]
    twins = twin_arrays(0, 0)
    # gpath._screening's arrays, made where a product first reaches kernel[9] entries.
    scr, prod2 = _screening.arrays(0, 0, 0, 0.0), np.empty(0)
    while pints[0] > 0 or pints[8] > 0:
        r, b = pfloats[0], pfloats[2]
        m = fints[0]
        members = basis[:m]
        screened, synced = False, False
        if pints[12]:  # ψ of this direction, computed by Python on every core (PRODUCT)
            pints[12] = 0
            t_b, k_b, up_b, big = pfloats[5], pints[13], pints[14] == 1, pfloats[6]
            synced = True  # (its product Q[:, M] x is in prod, as _combine leaves it)
        else:
            if pints[1] > pints[9] or pints[2] > 2 * n + 10:
                _screening.correct(scr, yf, data, top, rows, slots[:m], prod)
                return CYCLING
            delta = r * pfloats[1]
            if abs(delta) <= EPS * pfloats[4] * (pints[0] + pints[8]):  # (as the readable loop: the rates' scale)
                delta = 0.0
            if m == 0 and delta != 0.0:
                _screening.correct(scr, yf, data, top, rows, slots[:0], prod)
                b_lo, i_lo, b_hi, i_hi = _bias_interval(b, y, yf, lo, hi)
                b_new, k = (b_hi, i_hi) if delta > 0.0 else (b_lo, i_lo)
                if k < 0:
                    return NO_POINT
                pints[4], pints[5], pints[6] = _EMPTY, k, 0
                if _enter(k, state, factor, slots, cache, kernel, columns, col):
                    # Python moves the bias and puts k in M (gpath._path._PathRun._enter_empty_margin).
                    return APPLY
                for i in range(n):
                    yf[i] += y[i] * (b_new - b)
                pfloats[2] = b_new
                if where[k] == _A:
                    _leave_a(k, state, path)
                _place(k, _M, where, lo, hi, upper)
                yf[k] = 1.0
                pints[1] += 1
                pints[2] += 1
                continue
            t_b, k_b, up_b = math.inf, -1, True
            if m:
                rhs[0] = delta
                for i in range(m):
                    rhs[1 + i] = r * u[members[i]]
                residual = factor_solve(R, Q, fy, g, basis, qs, fwork, xs, buf, fints, ffloats, rhs[: m + 1],
                                        x[: m + 1], True)
                if residual > _MAX_RESIDUAL and pints[10] == 0:
                    _screening.correct(scr, yf, data, top, rows, slots[:m], prod)
                    return REFACTOR
                pints[10] = 0
                for i in range(m + 1):
                    x[i] = -x[i]
                alpha_m = np.empty(m)
                upper_m = np.empty(m)
                for i in range(m):
                    alpha_m[i] = alpha[members[i]]
                    upper_m[i] = upper[members[i]]
                t_b, j, up_b = first_bound_hit(alpha_m, x[1 : m + 1], np.zeros(m), upper_m, members, r * pfloats[4])
                k_b = members[j] if j >= 0 else -1
            else:
                x[0] = 0.0
            if scr[0][0] == _screening.SYNCED and m:  # the breakpoint after a sync: screened where it can be
                screened, t_c, k_c, up_c = _screening.screened_ratio(scr, yf, lo, hi, x[0], y, r, u, x, slots[:m], Q, qs,
                                                                     fints[1], kernel[6], min(t_b, 1.0), data, rows)
            if not screened:
                if scr[0][0] == _screening.PENDING:  # after a screened one: every row, the far rows corrected
                    _screening.corrected_product(scr, yf, data, top, rows, slots[:m], x[1 : m + 1], prod, prod2)
                    big = _finish(prod, rows, x[0], y, r, u, psi)
                    synced = True
                elif 0 < pints[11] <= m * top and not _by_point(kernel, n, m):  # worth every core: Python computes ψ
                    pfloats[5], pints[13], pints[14] = t_b, k_b, up_b
                    return PRODUCT
                else:
                    big, twins = product(kernel, data, top, rows, slots[:m], members, x[1 : m + 1], x[0], y, r, u,
                                         prod, psi, twins)
                    synced = not _by_point(kernel, n, m)
        if not screened:
            t_c, k_c, up_c = _ratio(yf, lo, hi, psi, big, min(t_b, 1.0), 1.0)
        # gpath._ratio.first_event with the limit 1, not taken at the limit.
        if t_c < t_b or (t_c == t_b and k_c < k_b):
            eta, kind, k, up = t_c, CROSSING, k_c, up_c
        else:
            eta, kind, k, up = t_b, (BOUND_UPPER if up_b else BOUND_LOWER), k_b, up_b
        if eta >= 1.0 or k < 0:
            eta, k = 1.0, -1
        for i in range(m):
            p = members[i]
            alpha[p] = min(max(alpha[p] + eta * x[1 + i], 0.0), upper[p])
        pfloats[2] = b + eta * x[0]
        pfloats[0] = r * (1.0 - eta)
        if screened:
            _screening.screened_step(scr, yf, eta, x, slots[:m])
            pints[15] += 1
        if k < 0:
            _screening.correct(scr, yf, data, top, rows, slots[:m], prod)
            return DONE
        if synced and 0 < kernel[9] <= m * n:  # (g_s of this product kept for the next breakpoint)
            if scr[2].shape[0] == 0:
                scr = _screening.arrays(n, data.shape[0], Q.shape[0], math.sqrt(1.0 + kernel[5]))
                prod2 = np.empty(data.shape[1])
            _screening.sync(scr, prod, rows, x, slots[:m])
        elif not screened:
            scr[0][0] = _screening.IDLE
        pints[1] += 1
        pints[2] = pints[2] + 1 if eta == 0.0 else 0
        pints[4], pints[5], pints[6] = kind, k, up
        _log(events, pints[7:8], kind, k)
        if kind == CROSSING:
            if _insert_margin(k, state, factor, slots, cache, kernel, path, columns, col):
                _screening.correct(scr, yf, data, top, rows, slots[:m], prod)
                return APPLY
        else:
            if scr[0][0] != _screening.IDLE:
                slot = slots[_position(basis, m, k)]
                if scr[0][0] == _screening.PENDING:
                    _screening.leaving(scr, k, slot, slots[:m], yf, data, rows)
                else:
                    _screening.left_synced(scr, slot, data, rows)
            _leave(k, factor, slots, cache)
            alpha[k] = upper[k] if up else 0.0
            _place(k, _I if up else _O, where, lo, hi, upper)
    _screening.correct(scr, yf, data, top, rows, slots[: fints[0]], prod)
    return DONE


@njit(cache=True)
def _position(basis, m, k):
    """Where margin point k is in the factor's order."""
    j = 0
    while basis[j] != k:
        j += 1
    return j


_NAMES = {BOUND_LOWER: "bound", BOUND_UPPER: "bound", CROSSING: "crossing"}
_NO_EVENTS = np.zeros((2, 0), dtype=np.int64)


def follow(path_run, fresh: int = 0) -> int:
    """Run a :class:`gpath._path._PathRun` on NumPy arrays with the compiled loop; return the
    number of breakpoints. Raises what the readable loop raises. ``fresh``: 1 where the factor
    was just refactored (:func:`handled`)."""
    s = path_run.s
    n = s.n
    QA = path_run.QA if path_run.QA.shape[1] else np.zeros((n, 1))
    kernel = loop_kernel(s)
    recording = path_run.events is not None
    max_breakpoints = 50 * (n + 10)
    events = np.zeros((2, max_breakpoints + 2), dtype=np.int64) if recording else _NO_EVENTS
    while True:
        state, cache_arrays, work = loop_arrays(s)
        cache = s.cache
        na = path_run.a_rows.size
        a_rows = np.zeros(max(na, 1), dtype=np.int64)
        dA = np.zeros(max(na, 1))
        a_rows[:na], dA[:na] = path_run.a_rows, path_run.dA
        pints = np.array([na, path_run.n_breakpoints, path_run.zero_steps, 0, 0, 0, 0, 0, path_run.r_rows.size,
                          max_breakpoints, fresh, threaded_product_size(), 0, 0, 0, 0], dtype=np.int64)
        pfloats = np.array([path_run.r, path_run.delta0, s.b, s.C, path_run.rate_scale, 0.0, 0.0])
        arrays = (state, s.factor.arrays, s.active._slots, cache_arrays, kernel,
                  (path_run.u, QA, path_run.a_col, a_rows, dA, pints, pfloats), work, events)
        status = run(*arrays)
        while status == PRODUCT:
            pfloats[6] = threaded_product(s, cache_arrays, work, pfloats[0], path_run.u)
            pints[12] = 1
            status = run(*arrays)
        path_run.a_rows, path_run.dA = a_rows[: pints[0]].copy(), dA[: pints[0]].copy()
        path_run.n_breakpoints, path_run.zero_steps = int(pints[1]), int(pints[2])
        path_run.n_screened += int(pints[15])
        path_run.r, path_run.delta0, s.b = float(pfloats[0]), float(pfloats[1]), float(pfloats[2])
        cache.n_columns_computed += int(pints[3])
        if recording:
            path_run.events.extend((_NAMES[int(kind)], int(point)) for kind, point in events[:, : pints[7]].T)
            events[:, : pints[7]] = 0
        if status == DONE:
            return path_run.finish()
        fresh = handled(path_run, status, pints)


def threaded_product(s, cache_arrays, work, c: float, u) -> float:
    """What a compiled loop (this one, :func:`gpath._cpath_numba.run`) hands back as PRODUCT:
    ψ = x₀·y + Q[:, M] x_M + c·u of the direction x in ``work`` (:func:`loop_arrays`), into
    its ψ, on every core (:func:`gpath._engine.combine_in_threads`); returns max |ψ|."""
    m, x = s.factor.arrays[9][0], work[3]
    return combine_in_threads(s.cache.data, cache_arrays[1], cache_arrays[2], s.active._slots[:m], x[1 : m + 1],
                              x[0], s.y, c, u, work[1], work[0])


def handled(path_run, status: int, pints: np.ndarray) -> int:
    """Apply in Python the event the loop stopped at (``status``, not DONE; the event in
    ``pints`` 4–6), as the readable loop does. Returns 1 where the factor was refactored: the
    next solve's residual is then what a fresh factor gives (an ill-conditioned 𝐌, tiny
    kernel values, can leave it above the drift threshold however often it is refactored), so
    that solve is taken; the end of the update checks the solution."""
    if status == REFACTOR:
        path_run.s.factor.refactor()
        return 1
    if status == CYCLING:
        raise path_run.cycling()
    if status == NO_POINT or pints[4] == _EMPTY:  # (NO_POINT: raises the PathError)
        path_run._enter_empty_margin(path_run.r * path_run.delta0)
    else:
        path_run._apply(("crossing" if pints[4] == CROSSING else "bound", int(pints[5]), bool(pints[6])))
    return 0


def loop_arrays(s):
    """What a compiled loop (this one, :func:`gpath._cpath_numba.run`) reads and writes of the
    state ``s``, made on every entry (the events handled in Python may rebind the arrays):
    ``(state, cache, work)`` tuples; the active set's slots grown to the factor's capacity."""
    cache, factor, active = s.cache, s.factor, s.active
    capacity = factor.capacity
    if active._slots.shape[0] < capacity:
        active._slots = np.concatenate([active._slots, np.zeros(capacity - active._slots.shape[0], np.int64)])
    txn = cache._txn
    written = txn.written if txn is not None and txn.open and cache.data is txn.buffer else _NO_SLOTS
    limits = np.array([-1 if cache.max_columns is None else cache.max_columns], dtype=np.int64)
    cache_arrays = (cache.data, cache.top, _EMPTY_ROWS if cache.rows_host is None else cache.rows_host,
                    cache.owner, cache.used, cache.slot_of, cache.free, cache.counts, cache._protected(),
                    written, limits)
    state = (s.yf, s.lo, s.hi, s.y, s.alpha, s.upper, s.where)
    n = s.n
    work = (np.empty(n), np.empty(cache.data.shape[1]), np.empty(capacity + 1), np.empty(capacity + 1),
            np.empty(n))
    return state, cache_arrays, work


_EMPTY_ROWS = np.zeros(0, dtype=np.int64)
_NO_SLOTS = np.zeros(0, dtype=bool)
