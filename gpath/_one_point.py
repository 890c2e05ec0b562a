"""A small update's whole path on NumPy in one compiled call (issue 18).

A stream's update adds a point and removes the oldest (Karasuyama & Takeuchi 2009, section
3.2; with m = ℓ = 1 the path of Cauwenberghs & Poggio's single update, section 3.1). Its
path costs some tens of microseconds; the Python steps around it (the state's rows appended,
the cache's books derived, the sets placed, the rates and u of the path's start, the rows
dropped at its end: some forty NumPy calls) cost several times that. :func:`followed` does
all of them and the compiled loop (:func:`gpath._mid_numba.run`) in one call, on new arrays,
and leaves the state it started from untouched; :meth:`gpath._path.SVCState._followed` then
builds the new state from them.

It takes updates of up to 64 added and 64 removed rows (:data:`gpath._path._FEW_POINTS`): a
stream's, one point at a time, a batch of a window (river's ``batch``, ε-SVR's 30 points of
60 rows), or a few points of which the others were screened out (:mod:`gpath.river`). It is
the readable code's arithmetic, step for step: the same compiled helpers
(:func:`gpath._path._appended_rows`, :func:`gpath._path._path_sets`, the loop,
:func:`gpath._path._kept_rows`), and the path's start u = Q[:, A] d_A − Q[:, R] d_R and
δ₀ = y_A d_A − y_R d_R. Where at most one added and one removed point move (the others go
straight to O, or had α = 0) it computes them here, of one column each, which BLAS's products
(the other columns' rates are 0) compute exactly so; where more move, the caller passes them
in, computed as the readable path computes them (:func:`gpath._path._path_start`). Tests hold
the two to the same bits. Where the loop stops for an event that Python applies (a cache
without a free slot, a factor without room, a tiny pivot, a refactor), it returns the path so
far, and Python carries on from there as it does for the readable path's own loop.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from . import _mid_numba
from ._path import (
    _REFINE_TOL,
    _appended_rows,
    _balanced_at_bounds,
    _kept_rows,
    _path_sets,
    _refined_margins,
    _release_due,
    rates_round_off,
)
from .cache import _renumbered, identity_rows, rows_rebuilt

_R = 4  # gpath._path.R
# What :func:`followed` returns where more than one added or removed point moves.
MOVES_MORE = -1
# The parts of the path so far that :func:`_packed` packs: float64, then int64 with the int8 sets.
_PATH_FLOATS, _PATH_INTS = 9, 4
# :func:`_path_end`'s result where it did not run.
_NOT_ENDED = (False, 0.0, 0.0, False, False, 0.0, False)


@njit(cache=True)
def _packed(floats, ints, where):  # pragma: no cover - compiled
    """The path so far in two arrays (:func:`unpacked`): the float64 arrays ``floats`` end to
    end; the parts' lengths, then the int64 arrays ``ints`` and the int8 ``where`` end to end.
    Each array a compiled call returns is an object to make, about 1 µs each, and the path's
    thirteen are read only where the loop stopped at an event (:func:`followed` returns two
    empty arrays in their place where the update ends)."""
    lengths = [a.shape[0] for a in floats] + [a.shape[0] for a in ints] + [where.shape[0]]
    n_floats = len(floats)
    out_f = np.empty(sum(lengths[:n_floats]))
    out_i = np.empty(len(lengths) + sum(lengths[n_floats:]), dtype=np.int64)
    t = 0
    for a in floats:
        out_f[t : t + a.shape[0]] = a
        t += a.shape[0]
    t = len(lengths)
    out_i[:t] = np.array(lengths)
    for a in ints:
        out_i[t : t + a.shape[0]] = a
        t += a.shape[0]
    for k in range(where.shape[0]):
        out_i[t + k] = where[k]
    return out_f, out_i


def unpacked(packed) -> tuple:
    """:func:`_packed`'s path as :func:`followed` left it, each part its own array:
    ``(alpha, upper, where, yf, lo, hi, shift, a_col, a_left, d_left, u, pints, pfloats)``."""
    floats, ints = packed
    n_floats, n_parts = _PATH_FLOATS, _PATH_FLOATS + _PATH_INTS
    lengths = ints[:n_parts].tolist()
    if floats.size != sum(lengths[:n_floats]) or ints.size != n_parts + sum(lengths[n_floats:]):
        raise RuntimeError(f"a packed path of {floats.size} floats and {ints.size} ints does not hold the "
                           f"{n_parts} parts of lengths {lengths}")  # (_packed and this out of step)
    parts, t = [], 0
    for k in lengths[:n_floats]:
        parts.append(floats[t : t + k].copy())
        t += k
    t = n_parts
    for k in lengths[n_floats:]:
        parts.append(ints[t : t + k].copy())
        t += k
    alpha, upper, yf, lo, hi, shift, d_left, u, pfloats, a_col, a_left, pints, where = parts
    return alpha, upper, where.astype(np.int8), yf, lo, hi, shift, a_col, a_left, d_left, u, pints, pfloats


@njit(cache=True)
def _path_end(alpha, y, upper, members, data, slots, rows, top, b, shift, yf, lo, hi, C, end):  # pragma: no cover - compiled
    """The end of a path, on the new state's arrays, as Python takes it after the path and in
    the same order: :meth:`gpath._path.SVCState.release_bounded_margin`'s first pass (α
    balanced in place) and its test; then, where ``end`` = (tol, max Q_kk, the path's rates,
    the product size from which products are threaded, −1: never) asks,
    :meth:`gpath._path.SVCState.refined_check`'s compiled step
    (:func:`gpath._path._refined_margins`) on the cached columns ``data`` at the members'
    ``slots`` and the buffer ``rows`` (empty: the identity). ``tol`` or max Q_kk below 0: not
    asked. Not taken either where Python's steps before the check would change what it reads
    (a release due moves α and the sets; a path whose rates' round-off may exceed ``tol``,
    :func:`gpath._simplesvm._path_unresolved`, has its margins taken from α afresh: decided
    here with a margin of 2, which the order of α's sum cannot cross) or where Python would
    sum its dots otherwise (split between the cores).

    Returns ``(release, max α, max C_i, at_bounds, checked, violation, taken)``: whether the
    release is due (:meth:`gpath._path.SVCState._release`, with the next three), and whether
    the refined check was taken here, with its result."""
    a_max, c_max, at_bounds = _balanced_at_bounds(alpha, y, upper, members, 1e-8)
    release = _release_due(alpha, upper, members, a_max, c_max, at_bounds)
    tol, diag, rates, threaded = end[0], end[1], end[2], end[3]
    if release or tol < 0.0 or diag < 0.0 or (threaded >= 0.0 and top * members.shape[0] >= threaded):
        return release, a_max, c_max, at_bounds, False, 0.0, False
    alpha_sum = 0.0
    for i in range(alpha.shape[0]):
        alpha_sum += alpha[i]
    if not rates_round_off(diag, rates) <= 0.5 * (tol * (1.0 + diag * alpha_sum)):
        return release, a_max, c_max, at_bounds, False, 0.0, False
    violation, taken = _refined_margins(alpha, y, upper, members, data, slots, rows, top, b, shift, yf, lo, hi, C,
                                        _REFINE_TOL)
    return release, a_max, c_max, at_bounds, True, violation, taken


@njit(cache=True)
def followed(n_old, remove, y, alpha, upper, where, yf, lo, hi, shift, upper_add, yf_add, shift_add, QA, factor,
             slots, books, data, top, rows, protected, written, record, limits, kernel, b, C, u_start, d_start,
             start, end):  # pragma: no cover - compiled
    """The path of an update adding the rows ``n_old..`` (their columns ``QA``, (n_old + m, m),
    Fortran-ordered as the kernel blocks make them, read by column; margins ``yf_add`` and boxes
    ``upper_add``, (m,)) and removing the rows ``remove``, from the
    state's host arrays (``y`` with the added rows; the others without them).

    ``shift`` and ``shift_add`` are the linear term's (empty: none). ``factor`` is a copy of the
    state's factor (:attr:`gpath.linalg.BorderedFactor.arrays`) and ``slots`` its active set's
    slots (capacity-sized), both changed in place; ``books`` the cache's (owner, used, slot_of,
    free, counts), copied here; ``data``, ``top``, ``rows`` (empty: the identity) its buffer,
    whose rows ``top..top + m − 1`` are written with the added points' entries;
    ``protected`` and ``limits`` as :func:`gpath._mid_numba.loop_arrays`; ``written`` (zeros)
    marks the slots the loop writes, and ``record`` (the open transaction's record of the slots
    written, or empty) gets them too, before the call returns (an interrupt after it finds
    them there); ``kernel`` the loop's kernel tuple (:func:`gpath._mid_numba.loop_kernel`, X
    with the added rows). Where more than one added or removed point moves, the path's start
    is the caller's (:func:`gpath._path._path_start`, as the readable path computes it): u
    ``u_start`` (n,), the moving added rows' distances ``d_start`` and ``start`` = (δ₀, the
    size of the rates); empty where the caller has none.

    ``end`` (4,) asks for the path's end checks (:func:`_path_end`'s ``end``).

    Returns ``(status, unmoved, breakpoints, columns computed, b, keep, kept, books, top,
    rows, r_rows, column, path, ended)``: :data:`gpath._mid_numba.DONE`, :data:`MOVES_MORE` (nothing
    moved: the caller starts over), or the event the loop stopped at; whether no coefficient
    moved; after the path, the rows kept and their ``(new_index, y, α, C_i, where,
    consecutive, yf, lo, hi, shift)`` (:func:`gpath._path._kept_rows`), the new books, the
    buffer's rows in use, the kept rows' buffer rows, and the removed rows that move with the
    column Q[:, R] of the one that does (empty where the caller gave the start: it holds
    Q[:, R]). At an event, no row is kept and ``rows`` are every
    row's buffer row, and ``path`` holds the path so far for Python to carry on with
    (:meth:`gpath._path.SVCState._one_point_resumed`), packed (:func:`unpacked` gives it back): the
    rows' α, C_i, sets, margins, levels and shift, each added row's column of ``QA``, the added
    rows still moving and their rates, u, and the loop's ints and floats
    (:func:`gpath._mid_numba.run`); where the update ended, two empty arrays. ``ended``:
    where the update ended and Python would call
    :meth:`gpath._path.SVCState.release_bounded_margin` (the new state not ``unmoved``),
    :func:`_path_end`'s result, its check asked where ``end`` asks, a coefficient moved and the
    cache keeps its buffer (:func:`gpath.cache.rows_rebuilt`: a rebuilt one sums the dots in
    another order); else :data:`_NOT_ENDED`.
    """
    m = QA.shape[1]
    n = n_old + m
    owner0, used0, slot_of0, free0, counts0 = books
    # The rows appended (SVCState._extended): α = 0 in set A.
    alpha2 = np.zeros(n)
    alpha2[:n_old] = alpha
    upper2, where2, yf2, lo2, hi2, shift2 = _appended_rows(upper, where, yf, lo, hi, upper_add, yf_add, shift,
                                                           shift_add)
    # The cache's books derived for n points, the new rows written from ``top`` for every slot
    # holding a column (QColumnCache.with_rows_appended).
    owner, used, free, counts = owner0.copy(), used0.copy(), free0.copy(), counts0.copy()
    slot_of = np.full(n, -1, dtype=np.int64)
    held = min(n, slot_of0.shape[0])
    slot_of[:held] = slot_of0[:held]
    for s in range(owner.shape[0]):
        for j in range(m):
            data[s, top + j] = QA[owner[s], j] if owner[s] >= 0 else 0.0
    identity = rows.shape[0] == 0
    buffer_rows = np.empty(n, dtype=np.int64)
    for i in range(n_old):
        buffer_rows[i] = i if identity else rows[i]
    for j in range(m):
        buffer_rows[n_old + j] = top + j
    top2 = top + m
    loop_rows = buffer_rows
    if identity and top == n_old:
        loop_rows = rows  # still the identity
    cache = (data, top2, loop_rows, owner, used, slot_of, free, counts, protected, written, limits)
    # The path's sets (_PathRun.__init__); the removed margin points leave M.
    a_rows, a_col, r_rows, in_margin = _path_sets(n_old, remove, yf2, lo2, hi2, where2, upper2, alpha2)
    n_a, n_r = a_rows.shape[0], r_rows.shape[0]
    status, breakpoints, computed = _mid_numba.DONE, 0, 0
    many = n_a > 1 or n_r > 1
    if many and (u_start.shape[0] != n or d_start.shape[0] != n_a):
        status = MOVES_MORE  # (the caller's start is of other sets, or it has none)
    else:
        for k in in_margin:
            _mid_numba._leave(k, factor, slots, cache)
    unmoved = n_a == 0 and n_r == 0
    column = np.empty(n if n_r and not many and status == _mid_numba.DONE else 0)  # Q[:, R] of the one that moves
    u, a_left, d_left = np.zeros(n), np.zeros(1, dtype=np.int64), np.zeros(1)
    pints, pfloats = np.zeros(16, dtype=np.int64), np.zeros(7)  # (pints[11] = 0: every product here)
    if status == _mid_numba.DONE and not unmoved and many:
        u[:] = u_start
        a_left, d_left = a_rows.copy(), d_start.copy()
        pints[0], pints[8], pints[9] = n_a, n_r, 50 * (n + 10)
        pfloats[0], pfloats[1], pfloats[2], pfloats[3], pfloats[4] = 1.0, start[0], b, C, start[1]
    elif status == _mid_numba.DONE and not unmoved:
        d_a = upper2[a_rows[0]] - alpha2[a_rows[0]] if n_a else 0.0
        d_r = alpha2[r_rows[0]] if n_r else 0.0
        rate_scale = max(d_a, d_r)
        delta0 = (y[a_rows[0]] * d_a if n_a else 0.0) - (y[r_rows[0]] * d_r if n_r else 0.0)
        if n_a:
            c = a_col[a_rows[0]]
            for i in range(n):
                u[i] = QA[i, c] * d_a
        if n_r:
            _mid_numba._kernel_column(kernel, r_rows[0], y, column)
            for i in range(n):
                u[i] = u[i] - column[i] * d_r if n_a else -(column[i] * d_r)
        if n_a:
            a_left[0], d_left[0] = a_rows[0], d_a
        pints[0], pints[8], pints[9] = n_a, n_r, 50 * (n + 10)
        pfloats[0], pfloats[1], pfloats[2], pfloats[3], pfloats[4] = 1.0, delta0, b, C, rate_scale
    if status == _mid_numba.DONE and not unmoved:
        capacity = factor[0].shape[0]
        work = (np.empty(n), np.empty(data.shape[1]), np.empty(capacity + 1), np.empty(capacity + 1), np.empty(n))
        status = _mid_numba.run((yf2, lo2, hi2, y, alpha2, upper2, where2), factor, slots, cache, kernel,
                                (u, QA, a_col, a_left, d_left, pints, pfloats), work,
                                np.zeros((2, 0), dtype=np.int64))
        breakpoints, computed, b = pints[1], pints[3], pfloats[2]
        for slot in range(min(record.shape[0], written.shape[0])):
            if written[slot]:
                record[slot] = True
        if status != _mid_numba.DONE:  # the path so far, for Python to carry on with
            return (status, False, breakpoints, computed, b, np.zeros(0, dtype=np.int64),
                    _kept_rows(np.zeros(0, dtype=np.int64), y, alpha2, upper2, where2, yf2, lo2, hi2, shift2),
                    (owner, used, slot_of, free, counts), top2, buffer_rows, r_rows, column,
                    _packed((alpha2, upper2, yf2, lo2, hi2, shift2, d_left, u, pfloats), (a_col, a_left, pints), where2),
                    _NOT_ENDED)
        # At η = 1 (_PathRun.finish): the rest of A at C_i (I), R at 0.
        for j in range(pints[0]):
            alpha2[a_left[j]] = upper2[a_left[j]]
            where2[a_left[j]] = 2  # I
        for k in r_rows:
            alpha2[k] = 0.0
    # The rows kept (SVCState.take_rows); none where more points move (the caller starts over).
    n_keep = 0
    for k in range(n if status == _mid_numba.DONE else 0):
        n_keep += where2[k] != _R
    keep = np.empty(n_keep, dtype=np.int64)
    t = 0
    for k in range(n if n_keep else 0):
        if where2[k] != _R:
            keep[t] = k
            t += 1
    kept = _kept_rows(keep, y, alpha2, upper2, where2, yf2, lo2, hi2, shift2)
    new_index = kept[0]
    kept_rows = np.empty(n_keep, dtype=np.int64)
    for t in range(n_keep):
        kept_rows[t] = buffer_rows[keep[t]]
    if n_keep:
        basis = factor[4]
        for i in range(factor[9][0]):
            basis[i] = new_index[basis[i]]
        slot_of = _renumbered(owner, new_index)
    ended = _NOT_ENDED
    size = factor[9][0]
    if status == _mid_numba.DONE and (not unmoved or size == 0):  # (Python: not SVCState.unmoved)
        # The end of the path (SVCState.release_bounded_margin, the end checks of
        # gpath._simplesvm.exact_update) on the cache as QColumnCache.with_books makes it: its
        # rows the identity where they are, the check left to Python where it rebuilds them.
        asked = end
        if unmoved or rows_rebuilt(top2, n_keep):
            asked = np.full(4, -1.0)
        ended = _path_end(kept[2], kept[1], kept[3], factor[4][:size], data, slots[:size],
                          kept_rows[:0] if identity_rows(kept_rows, top2) else kept_rows, top2, b, kept[9], kept[6],
                          kept[7], kept[8], C, asked)
    return (status, unmoved, breakpoints, computed, b, keep, kept, (owner, used, slot_of, free, counts), top2,
            kept_rows, r_rows, column, (np.zeros(0), np.zeros(0, dtype=np.int64)), ended)
