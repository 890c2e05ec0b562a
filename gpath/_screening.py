"""Safe screening of a breakpoint's rows: at most every other breakpoint's product over the few
rows that can reach their level within its step (issue 18).

Each breakpoint of the MID path (:func:`gpath._mid_numba.run`; Karasuyama & Takeuchi 2009,
eqs. 10–11) moves every margin by ψ = a·y + Q[:, M] x + r·u, and the n × |M| product reads
the cached columns of M once a breakpoint: on a large problem, most of the path's time (Adult
n = 10,000, |M| ≈ 500: 1.5 ms a breakpoint, this machine's memory speed). Screening, in the
sense of Ogawa, Suzuki & Takeuchi ("Safe screening of non-support vectors in pathwise SVM
computation", ICML 2013), spends a breakpoint's product only on the rows that may reach their
level in its step; the others are proven not to.

After a breakpoint s whose product the loop computed for every row (the *sync*), it keeps
g_s = Q[:, M] x_s of every row and the direction x_s. At the next breakpoint l it bounds the
difference of the new product from g_s in every row at once: Q[i, M] x_l − g_s,i is the value at
x_i of h_l − h_s, h = Σ_j x_j y_j k(·, x_j) in the kernel's feature space, so by Cauchy–Schwarz

    |Q[i, M] x_l − g_s,i| ≤ κ ‖h_l − h_s‖ ≤ κ √(dᵀ Q_MM d),    d = x_l − x_s on M,

with κ² = k(x_i, x_i) = 1 + offset (a positive semi-definite RBF kernel; the others do not
screen) and Q_MM the factor's margin matrix (its ridge only adds); the bound also takes the
two products' own round-off (:func:`_drift`). A row whose level lies farther than its known move (a·y_i + r·u_i + g_s,i
times the step) plus this bound can be reached by no step up to the first bound hit of α_M:
such a *far* row is moved by its known rate. The rows that may reach their level (*near*;
the margin set's rows never do) take their exact ψ, each from its row of the cached columns,
and the ratio test runs over them, so the breakpoint finds the event the full product would
find. A breakpoint screens only where the near rows are few (:data:`_NEAR_SHARE`), else it
computes every row.

The next breakpoint computes every row again, with the far rows' correction
Q[i, M] η (x_l − x_s) summed in the same pass over the columns (:func:`_product_rows2`), and
syncs anew; an end, or an event that Python applies, adds the correction by its own product. A
margin point that leaves M at the screened breakpoint has its row corrected at once (its
level is then finite); one that leaves at the sync's own event takes its term out of g_s. A
path screens from :data:`SCREEN_ENTRIES` product entries, not where ε-SVR's product reads one
entry a point (:func:`gpath._mid_numba.product`). The margins so equal the full product's to round-off, and the events
are the same (ties at round-off aside, as between any two orders of summation).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ._blas import dsymv
from ._engine import _FAST, _ratio
from ._ratio import EPS

# From this many entries (rows × margin columns) of a breakpoint's product, the path screens
# every other breakpoint (:func:`gpath._mid_numba.loop_kernel` reads it, so that a test can
# lower it). Below, the columns stay in the processor's caches and the product costs little.
SCREEN_ENTRIES = 2**20
# A breakpoint screens where at most n // _NEAR_SHARE + 16 rows are near: their rows of the
# columns are read one entry a cache line, so many of them cost as much as every row.
_NEAR_SHARE = 128
# A far row is taken as at its level this much (relative to 1 + |z|) before it is: the full
# product's ratio test could find it there within its own round-off.
_SAFETY = 1e-12
# ints[0]: nothing kept, a sync kept, a screened step's correction pending.
IDLE, SYNCED, PENDING = 0, 1, 2
# ints: [state, near rows, the slot of a point that left M after the screened step (-1: none)]


@njit(cache=True)
def arrays(n, n_slots, factor_capacity, kappa):  # pragma: no cover - compiled
    """A path's screening arrays for ``n`` rows, the cache's ``n_slots`` slots and a factor of
    ``factor_capacity`` slots, with the kernel's κ = √k(x, x) (zeros: none):
    ``(ints, kappa, g_s, rate, x_s, acc, is_near, near, psi, d, work)``."""
    ints = np.zeros(3, dtype=np.int64)
    ints[2] = -1
    capacity = n // _NEAR_SHARE + 16 if n else 0
    return (ints, np.full(1, kappa), np.empty(n), np.empty(n), np.zeros(n_slots), np.zeros(n_slots),
            np.zeros(n, dtype=np.bool_), np.empty(capacity + 1, dtype=np.int64), np.empty(capacity),
            np.zeros(factor_capacity), np.zeros(factor_capacity))


@njit(cache=True)
def _buffer_row(rows, i):  # pragma: no cover - compiled
    return i if rows.shape[0] == 0 else rows[i]


@njit(cache=True)
def sync(scr, prod, rows, x, slots):  # pragma: no cover - compiled
    """After a breakpoint's product over every row (``prod``: Q[:, M] x on the buffer's rows,
    direction ``x`` = [a; x_M] on the columns ``slots``): g_s and x_s kept."""
    ints, g_s, x_s = scr[0], scr[2], scr[4]
    for i in range(g_s.shape[0]):
        g_s[i] = prod[_buffer_row(rows, i)]
    for s in range(x_s.shape[0]):
        x_s[s] = 0.0
    for j in range(slots.shape[0]):
        x_s[slots[j]] = x[1 + j]
    ints[0] = SYNCED


@njit(cache=True)
def left_synced(scr, slot, data, rows):  # pragma: no cover - compiled
    """The point in ``slot`` left M at the sync's own event: its term taken out of g_s (h_s
    then holds the points of M only)."""
    g_s, x_s = scr[2], scr[4]
    c = x_s[slot]
    if c != 0.0:
        column = data[slot]
        for i in range(g_s.shape[0]):
            g_s[i] -= c * column[_buffer_row(rows, i)]
    x_s[slot] = 0.0


@njit(cache=True)
def _drift(scr, x, slots, Q, qs, top, ridge):  # pragma: no cover - compiled
    """κ ‖h_l − h_s‖ for the direction ``x`` (module docstring), from the factor's margin
    matrix ``Q`` (its slots ``qs``, ``top`` in use), with the quadratic form's round-off, plus
    the round-off of the two products it compares (g_s, and the full product's own sums,
    each of m terms up to κ² |x_j|): a far row is then far of what either product computes."""
    kappa, x_s, d, work = scr[1][0], scr[4], scr[9], scr[10]
    m = slots.shape[0]
    for i in range(top):
        d[i] = 0.0
    total, size = 0.0, 0.0
    for i in range(m):
        v = x[1 + i] - x_s[slots[i]]
        d[qs[i]] = v
        total += abs(v)
        size += abs(x[1 + i])
    dsymv(Q, top, d, work)
    quad = 0.0
    for i in range(m):
        quad += d[qs[i]] * work[qs[i]]
    quad = max(quad, 0.0) + (m + 2) * EPS * total * total * (kappa * kappa + ridge)
    products = 4.0 * (m + 2) * EPS * (kappa * kappa + ridge) * (2.0 * size + total)
    return (kappa * math.sqrt(quad) + products) * (1.0 + 1e-12)


@njit(cache=True)
def screened_ratio(scr, yf, lo, hi, a, y, r, u, x, slots, Q, qs, top, ridge, horizon, data, rows):  # pragma: no cover
    """The breakpoint after a sync, screened: the rows that may reach their level within
    ``horizon`` (the first bound hit's step, at most 1) made near and their ψ computed from
    their rows of the columns ``slots``; the far rows' known rates kept. Returns (screened,
    t, row, upward) of :func:`gpath._engine._ratio` over the near rows, which it moves by
    min(t, ``horizon``); not screened (nothing changed) where the near rows would be too many."""
    ints, g_s, rate, is_near, near, psi = scr[0], scr[2], scr[3], scr[6], scr[7], scr[8]
    bound = _drift(scr, x, slots, Q, qs, top, ridge)
    n, m, capacity = yf.shape[0], slots.shape[0], psi.shape[0]
    count, big = 0, 0.0
    for i in range(n):
        z = yf[i]
        v = a * y[i] + r * u[i] + g_s[i]
        rate[i] = v
        guard = _SAFETY * (1.0 + abs(z))
        if (hi[i] - z - guard <= horizon * (v + bound)) or (z - lo[i] - guard <= horizon * (bound - v)):
            if count == capacity:
                for k in range(count):
                    is_near[near[k]] = False
                return False, 0.0, -1, True
            near[count] = i
            is_near[i] = True
            count += 1
        else:
            big = max(big, abs(v) + bound)  # (at least its |ψ|: the rates' round-off level, as _ratio's)
    ints[1] = count
    # Their rows of the columns, column by column (the columns are the cache's rows: a near
    # row's entries lie a column's length apart, each on a page of its own).
    where = np.empty(count, dtype=np.int64)
    for k in range(count):
        psi[k] = 0.0
        where[k] = _buffer_row(rows, near[k])
    for j in range(m):
        column, f = data[slots[j]], x[1 + j]
        for k in range(count):
            psi[k] += f * column[where[k]]
    for k in range(count):
        i = near[k]
        p = psi[k] + a * y[i] + r * u[i]
        psi[k] = p
        big = max(big, abs(p))
    # gpath._engine._ratio over the near rows, gathered in increasing row order (its ties go to
    # the lowest), their margins moved back.
    z, lo_near, hi_near = np.empty(count), np.empty(count), np.empty(count)
    for k in range(count):
        i = near[k]
        z[k], lo_near[k], hi_near[k] = yf[i], lo[i], hi[i]
    best, k_best, up = _ratio(z, lo_near, hi_near, psi[:count], big, horizon, 1.0)
    for k in range(count):
        yf[near[k]] = z[k]
    return True, best, near[k_best] if k_best >= 0 else -1, up


@njit(cache=True)
def screened_step(scr, yf, eta, x, slots):  # pragma: no cover - compiled
    """The screened breakpoint's step η: the far rows moved by their known rates, their
    correction's coefficients η (x_l − x_s) kept by slot for the next product."""
    ints, rate, x_s, acc, is_near = scr[0], scr[3], scr[4], scr[5], scr[6]
    if eta > 0.0:
        for i in range(yf.shape[0]):
            if not is_near[i]:
                yf[i] += eta * rate[i]
    for j in range(slots.shape[0]):
        s = slots[j]
        acc[s] = eta * (x[1 + j] - x_s[s])
    ints[0] = PENDING
    ints[2] = -1


@njit(cache=True)
def leaving(scr, k, slot, slots, yf, data, rows):  # pragma: no cover - compiled
    """Margin point k leaves M from ``slot`` at the screened breakpoint's event: its own row
    corrected (its level is finite from now on), the slot's column kept for the correction of
    the other rows (``slots``: M's columns before it leaves)."""
    ints, acc, is_near, near = scr[0], scr[5], scr[6], scr[7]
    b_k = _buffer_row(rows, k)
    total = 0.0
    for j in range(slots.shape[0]):
        total += acc[slots[j]] * data[slots[j], b_k]
    yf[k] += total
    near[ints[1]] = k  # (the near rows' room has one more for it)
    ints[1] += 1
    is_near[k] = True
    ints[2] = slot


@njit(nogil=True, cache=True, fastmath=_FAST)
def _product_rows2(lo, hi, data, slots, phi, coef, prod, prod2):  # pragma: no cover - compiled
    """:func:`gpath._engine._product_rows` (``prod``, the same sums) and, in the same pass over
    the columns, ``prod2[lo:hi]`` = Q[:, slots] c with c = ``coef`` by slot."""
    for i in range(lo, hi):
        prod[i] = 0.0
        prod2[i] = 0.0
    m = slots.shape[0]
    j = 0
    while j + 4 <= m:
        c0, c1, c2, c3 = data[slots[j]], data[slots[j + 1]], data[slots[j + 2]], data[slots[j + 3]]
        f0, f1, f2, f3 = phi[j], phi[j + 1], phi[j + 2], phi[j + 3]
        g0, g1, g2, g3 = coef[slots[j]], coef[slots[j + 1]], coef[slots[j + 2]], coef[slots[j + 3]]
        for i in range(lo, hi):
            prod[i] += f0 * c0[i] + f1 * c1[i] + f2 * c2[i] + f3 * c3[i]
            prod2[i] += g0 * c0[i] + g1 * c1[i] + g2 * c2[i] + g3 * c3[i]
        j += 4
    while j < m:
        col, f, g = data[slots[j]], phi[j], coef[slots[j]]
        for i in range(lo, hi):
            prod[i] += f * col[i]
            prod2[i] += g * col[i]
        j += 1


@njit(cache=True)
def _corrected(scr, yf, data, rows, slots, prod2):  # pragma: no cover - compiled
    """The far rows' correction (``prod2`` on the buffer's rows, plus the column of a point
    that left M) added; the screened breakpoint's books cleared."""
    ints, acc, is_near, near = scr[0], scr[5], scr[6], scr[7]
    gone = ints[2]
    for i in range(yf.shape[0]):
        if not is_near[i]:
            b_i = _buffer_row(rows, i)
            yf[i] += prod2[b_i] + (acc[gone] * data[gone, b_i] if gone >= 0 else 0.0)
    for j in range(slots.shape[0]):
        acc[slots[j]] = 0.0
    if gone >= 0:
        acc[gone] = 0.0
    for k in range(ints[1]):
        is_near[near[k]] = False
    ints[0], ints[1], ints[2] = IDLE, 0, -1


@njit(cache=True)
def corrected_product(scr, yf, data, top, rows, slots, phi, prod, prod2):  # pragma: no cover - compiled
    """The breakpoint after a screened one: ``prod`` = Q[:, slots] φ on the buffer's rows (as
    :func:`gpath._engine._product_rows`) with the far rows' correction added in the same pass."""
    _product_rows2(0, top, data, slots, phi, scr[5], prod, prod2)
    _corrected(scr, yf, data, rows, slots, prod2)


@njit(cache=True)
def correct(scr, yf, data, top, rows, slots, prod):  # pragma: no cover - compiled
    """Where the loop stops after a screened breakpoint (its end, an event Python applies):
    the far rows' correction by its own product (``prod``: room for the buffer's rows)."""
    if scr[0][0] != PENDING:
        scr[0][0] = IDLE
        return
    prod2 = np.empty(prod.shape[0])
    _product_rows2(0, top, data, slots, np.zeros(slots.shape[0]), scr[5], prod, prod2)
    _corrected(scr, yf, data, rows, slots, prod2)
