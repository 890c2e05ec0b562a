"""The C-path loop compiled for NumPy arrays (:mod:`gpath._cpath`).

:meth:`gpath._cpath._CPathRun.run` is the readable loop, run for every other namespace; this is
the same loop, step for step and with the same tie rule, compiled with Numba, so that a
breakpoint costs its arithmetic and no interpreter time. It keeps the books of the Python side
in place (the factor's arrays, the active set's slots, the cache's bookkeeping, the state's
margins, levels, α and sets, the run's driver u, δ and set I, and the path record) and uses the
compiled pieces of the MID loop to enter and leave the margin set
(:func:`gpath._mid_numba._enter`, :func:`gpath._mid_numba._leave`). It returns to Python at
the end, or before what it does not handle — an entry that needs a new cache slot or factor
row, a tiny pivot, a factor to refactor, the periodic round-off check, a full record — and
Python does that step with the readable code and carries on (or raises, for a broken
invariant); on several cores, also a product large enough to split between them (as
:func:`gpath._mid_numba.run`). Tests hold the two loops to the same events.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ._engine import _ratio, threaded_product_size
from ._mid_numba import (
    BOUND_LOWER,
    BOUND_UPPER,
    CROSSING,
    _by_point,
    _enter,
    _leave,
    _log,
    _place,
    loop_arrays,
    loop_kernel,
    product,
    threaded_product,
    twin_arrays,
)
from ._ratio import first_bound_hit, rate_is_round_off
from .linalg import _MAX_RESIDUAL, factor_solve

__all__ = ["follow"]

# What the loop returns.
DONE, APPLY, REFACTOR, CYCLING, EMPTY, REFINE, GROW, PRODUCT = range(8)
_O, _M, _I = 0, 1, 2


@njit(cache=True)
def _add_column(u, scale, data, slot, rows):
    """u += scale · Q[:, owner of slot] (the column in training order)."""
    identity = rows.shape[0] == 0
    for i in range(u.shape[0]):
        u[i] += scale * data[slot, i if identity else rows[i]]


@njit(cache=True)
def _record(rec, C, b, m, alpha, in_I, w):
    """Append the path point (C, α with α = C w on I, b, |M|)."""
    rec_C, rec_b, rec_m, rec_alpha, rints = rec
    r = rints[0]
    rec_C[r], rec_b[r], rec_m[r] = C, b, m
    for i in range(alpha.shape[0]):
        rec_alpha[r, i] = C * w[i] if in_I[i] else alpha[i]
    rints[0] = r + 1


@njit(cache=True)
def _round_off_rate(k, data, rows, slots, x, y, u, row):
    """:func:`gpath._ratio.rate_is_round_off` of point k along ``x`` = [db; dα_M] (``row``: room
    for Q[k, M])."""
    m = slots.shape[0]
    r = k if rows.shape[0] == 0 else rows[k]
    for j in range(m):
        row[j] = data[slots[j], r]
    return rate_is_round_off(row[:m], x[1 : m + 1], x[0], y[k], u[k])


@njit(cache=True)
def run(state, factor, slots, cache, kernel, columns, cpath, work, events, rec):
    """Follow C until C_max (DONE) or until Python is needed (the other statuses; for APPLY the
    event is in ``cints`` 4–6 and its step in ``cfloats`` 5).

    ``cpath`` = (u, w, in_I, cints, cfloats) with cints = [breakpoints, zero-length steps in a
    row, events logged, most breakpoints, event kind, point, upward, check every, 1 if the
    factor was just refactored (its next solve is taken: :func:`gpath._mid_numba.follow`), the
    product's size from which Python computes ψ (PRODUCT; 0: never), 1 if ψ is there (the loop
    resumes at the ratio test), the first bound hit's point and whether upward] and cfloats =
    [C, C_max, b, δ, round-off level of δ, last step, the first bound hit's step, max |ψ|];
    ``rec`` = (Cs, b, |M|, α, [points recorded]) with room for at least one more point."""
    yf, lo, hi, y, alpha, upper, where = state
    R, Q, fy, g, basis, qs, fwork, xs, buf, fints, ffloats = factor
    data, top, rows, owner, used, slot_of, free, counts, protected, written, limits = cache
    u, w, in_I, cints, cfloats = cpath
    psi, prod, rhs, x, col = work
    n = yf.shape[0]
    lifted, row = np.empty(n, dtype=np.int64), np.empty(R.shape[0])
    twins = twin_arrays(0, 0)
    while True:
        C, C_max, b = cfloats[0], cfloats[1], cfloats[2]
        m = fints[0]
        members = basis[:m]
        limit = C_max - C
        if cints[10]:  # ψ of this direction, computed by Python on every core (PRODUCT)
            cints[10] = 0
            t_b, k_b, up_b, big = cfloats[6], cints[11], cints[12] == 1, cfloats[7]
        else:
            if rec[4][0] == rec[0].shape[0]:
                return GROW
            if cints[0] > cints[3] or cints[1] > 2 * n + 10:
                return CYCLING
            delta = cfloats[3] if abs(cfloats[3]) > cfloats[4] else 0.0
            if m == 0 and delta != 0.0:
                return EMPTY
            t_b, k_b, up_b = math.inf, -1, True
            if m:
                rhs[0] = delta
                for i in range(m):
                    rhs[1 + i] = u[members[i]]
                residual = factor_solve(R, Q, fy, g, basis, qs, fwork, xs, buf, fints, ffloats, rhs[: m + 1],
                                        x[: m + 1], True)
                if residual > _MAX_RESIDUAL and cints[8] == 0:
                    return REFACTOR
                cints[8] = 0
                for i in range(m + 1):
                    x[i] = -x[i]
                # gpath._cpath._CPathRun._bound_hit: α_j ∈ [0, ∞) and the slack C w_j − α_j ∈ [0, ∞).
                values, rates = np.empty(2 * m), np.empty(2 * m)
                ids = np.empty(2 * m, dtype=np.int64)
                for i in range(m):
                    p = members[i]
                    values[i], values[m + i] = alpha[p], C * w[p] - alpha[p]
                    rates[i], rates[m + i] = x[1 + i], w[p] - x[1 + i]
                    ids[i], ids[m + i] = p, p
                t_b, j, _ = first_bound_hit(values, rates, np.zeros(2 * m), np.full(2 * m, np.inf), ids, 1.0)
                if j >= 0:
                    k_b, up_b = members[j % m], j >= m
            else:
                x[0] = 0.0
            if 0 < cints[9] <= m * top and not _by_point(kernel, n, m):  # worth every core: Python computes ψ
                cfloats[6], cints[11], cints[12] = t_b, k_b, up_b
                return PRODUCT
            big, twins = product(kernel, data, top, rows, slots[:m], members, x[1 : m + 1], x[0], y, 1.0, u, prod,
                                 psi, twins)
        t_c, k_c, up_c = _ratio(yf, lo, hi, psi, big, min(t_b, limit), 1.0)
        # gpath._cpath._CPathRun._crossing: a zero-length crossing at a rate that is round-off
        # of its own terms is no event (its level lifted for the segment, then put back). The
        # ratio test runs again on the same ψ (a zero-length step moved no margin).
        n_lifted = 0
        while t_c == 0.0 and k_c >= 0 and _round_off_rate(k_c, data, rows, slots[:m], x, y, u, row):
            lifted[n_lifted] = k_c
            n_lifted += 1
            if up_c:
                hi[k_c] = math.inf
            else:
                lo[k_c] = -math.inf
            t_c, k_c, up_c = _ratio(yf, lo, hi, psi, big, min(t_b, limit), 1.0)
        for i in range(n_lifted):
            _place(lifted[i], where[lifted[i]], where, lo, hi, upper)
        # gpath._ratio.first_event, not taken at the limit.
        if t_c < t_b or (t_c == t_b and k_c < k_b):
            t, kind, k, up = t_c, CROSSING, k_c, up_c
        else:
            t, kind, k, up = t_b, (BOUND_UPPER if up_b else BOUND_LOWER), k_b, up_b
        if t > limit or t == limit or k < 0:
            t, k = limit, -1
        C_new = C_max if k < 0 else C + t
        for i in range(m):
            p = members[i]
            alpha[p] = min(max(alpha[p] + t * x[1 + i], 0.0), C_new * w[p])
        cfloats[2] = b + t * x[0]
        cfloats[0] = C_new
        cfloats[5] = t
        if k < 0:
            return DONE
        cints[0] += 1
        cints[1] = cints[1] + 1 if t == 0.0 else 0
        cints[4], cints[5], cints[6] = kind, k, up
        _log(events, cints[2:3], kind, k)
        if kind == CROSSING:
            # gpath._cpath._CPathRun._margin_insert
            if _enter(k, state, factor, slots, cache, kernel, columns, col):
                return APPLY
            if in_I[k]:
                alpha[k] = C_new * w[k]
                in_I[k] = False
                _add_column(u, -w[k], data, slot_of[k], rows)
                cfloats[3] -= y[k] * w[k]
            _place(k, _M, where, lo, hi, upper)
            yf[k] = 1.0
        else:
            if up:  # M -> I: its column joins u
                _add_column(u, w[k], data, slot_of[k], rows)
                cfloats[3] += y[k] * w[k]
                in_I[k] = True
                alpha[k] = C_new * w[k]
            else:
                alpha[k] = 0.0
            _leave(k, factor, slots, cache)
            _place(k, _I if up else _O, where, lo, hi, upper)
        if t > 0.0:
            _record(rec, C_new, cfloats[2], fints[0], alpha, in_I, w)
        if cints[0] % cints[7] == 0:
            return REFINE


def follow(path_run, check_every: int) -> None:
    """Run a :class:`gpath._cpath._CPathRun` on NumPy arrays with the compiled loop, checking the
    round-off every ``check_every`` breakpoints as the readable loop does. Raises what the
    readable loop raises."""
    s = path_run.s
    n = s.n
    kernel = loop_kernel(s)
    # No added points' columns (those of a MID path); a count of the columns computed.
    columns = (np.zeros((n, 1)), np.full(n, -1, dtype=np.int64), np.zeros(1, dtype=np.int64))
    recording = path_run.events is not None
    max_breakpoints = 50 * (n + 10)
    events = np.zeros((2, max_breakpoints + 2 if recording else 0), dtype=np.int64)
    names = {BOUND_LOWER: "bound", BOUND_UPPER: "bound", CROSSING: "crossing"}
    fresh = 0
    while True:
        state, cache_arrays, work = loop_arrays(s)
        cache, factor = s.cache, s.factor
        cints = np.array([path_run.n_breakpoints, path_run.zero_steps, 0, max_breakpoints, 0, 0, 0, check_every,
                          fresh, threaded_product_size(), 0, 0, 0], dtype=np.int64)
        cfloats = np.array([s.C, path_run.C_max, s.b, path_run.delta, path_run.delta_tiny, 0.0, 0.0, 0.0])
        arrays = (state, factor.arrays, s.active._slots, cache_arrays, kernel, columns,
                  (path_run.u, path_run.w, path_run.in_I, cints, cfloats), work, events)
        status = run(*arrays, path_run.record_with_room())  # (not kept: a reference would stop it growing in place)
        while status == PRODUCT:
            cfloats[7] = threaded_product(s, cache_arrays, work, 1.0, path_run.u)
            cints[10] = 1
            status = run(*arrays, path_run.record_with_room())
        path_run.n_breakpoints, path_run.zero_steps = int(cints[0]), int(cints[1])
        s.C, s.b, path_run.delta = float(cfloats[0]), float(cfloats[2]), float(cfloats[3])
        cache.n_columns_computed += int(columns[2][0])
        columns[2][0] = 0
        if recording:
            path_run.events.extend((names[int(kind)], int(point)) for kind, point in events[:, : cints[2]].T)
        if status == DONE:
            return
        if status == GROW:
            continue  # record_with_room grows it
        fresh = int(status == REFACTOR)
        if status == REFACTOR:
            factor.refactor()
        elif status == CYCLING:
            raise path_run.cycling()
        elif status == EMPTY:
            raise path_run.empty_margin_error()
        elif status == REFINE:
            path_run._refine()
        else:  # APPLY: the event the loop could not apply, then what follows it there
            kind = "crossing" if cints[4] == CROSSING else "bound"
            path_run._apply((kind, int(cints[5]), bool(cints[6])))
            path_run.after_event(float(cfloats[5]))
