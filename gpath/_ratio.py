"""The ratio test shared by the path algorithms: where does the next breakpoint fall?

Along a path segment every margin moves linearly, ``z(t) = z + t ψ``, and every active
coefficient too, ``α(t) = α + t φ``. A breakpoint is the smallest t at which a point outside
the active set reaches one of the two levels bounding its region (``lo``/``hi``, on the
device: :mod:`gpath._engine`), or an active coefficient reaches one end of its range (host:
:func:`first_bound_hit`).

One tie rule everywhere (Bland's smallest-index rule, which cannot cycle): among events at
the same t the one of the smallest point id wins; a rate below ``EPS`` times the size of the
rates is round-off, not an event (a zero-length breakpoint driven by such a rate is what
makes degenerate paths cycle). A zero-length crossing is checked once more against the
round-off of its own point's rate (:func:`rate_is_round_off`): on a margin matrix that only a
ridge keeps regular, a rate of a few ε times its terms is above the global threshold and yet
of no sign.
"""

from __future__ import annotations

import math

from numba import njit

__all__ = ["EPS", "first_bound_hit", "first_event", "rate_is_round_off"]

EPS = 1e-12
_FLOAT64_EPS = 2.0**-52


@njit(cache=True)
def first_bound_hit(alpha, phi, lower, upper, ids, scale):
    """First active coefficient to reach an end of its range ``[lower, upper]`` (host).

    Parameters
    ----------
    alpha, phi, lower, upper : ndarray of shape (m,), float64
        Coefficients, their rates, and the ends of their ranges (±inf for none).
    ids : ndarray of shape (m,), int64
        Point id of each coefficient (ties go to the smallest).
    scale : float
        Size of a coefficient (C): rates below ``EPS * max(max |φ|, scale)`` are round-off.

    Returns
    -------
    t : float
        Step to the first hit (``inf`` if none); a coefficient already past its end counts 0.
    j : int
        Its position in the active set (-1 if none).
    upward : bool
        True if it reaches ``upper``.
    """
    m = alpha.shape[0]
    big = scale
    for j in range(m):
        big = max(big, abs(phi[j]))
    tiny = EPS * big
    best, best_j, best_up = math.inf, -1, True
    for j in range(m):
        p = phi[j]
        if p > tiny:
            t, up = max(upper[j] - alpha[j], 0.0) / p, True
        elif p < -tiny:
            t, up = max(alpha[j] - lower[j], 0.0) / -p, False
        else:
            continue
        if t < best or (best_j >= 0 and t == best and ids[j] < ids[best_j]):
            best, best_j, best_up = t, j, up
    return best, best_j, best_up


def first_event(bound, crossing, limit, take_at_limit=False):
    """The next event of a segment by the tie rule.

    Parameters
    ----------
    bound : tuple (t, id, upward)
        The first bound hit of an active coefficient (``id`` its point; t = inf for none).
    crossing : tuple (t, id, upward)
        The first level crossing of a point outside the active set.
    limit : float
        The end of the segment.
    take_at_limit : bool
        Whether an event exactly at ``limit`` is taken (True) or the segment simply ends there.

    Returns
    -------
    t : float
        The step: the event's t, or ``limit``.
    event : tuple (kind, id, upward) or None
        ``kind`` is ``"bound"`` or ``"crossing"``; None when the segment ends first.
    """
    (t_b, k_b, up_b), (t_c, k_c, up_c) = bound, crossing
    if t_c < t_b or (t_c == t_b and k_c < k_b):
        t, event = t_c, ("crossing", k_c, up_c)
    else:
        t, event = t_b, ("bound", k_b, up_b)
    if t > limit or (t == limit and not take_at_limit) or event[1] < 0:
        return limit, None
    return t, event


@njit(cache=True)
def rate_is_round_off(row, phi, a, y_k, u_k):
    """Whether a point's margin rate ``ψ_k = a·y_k + Σ_j row_j φ_j + u_k`` is round-off of its
    own terms: at most (m + 2) ε times their absolute sum, the error bound of a sum of m + 2
    terms (Higham, *Accuracy and Stability of Numerical Algorithms*, chapter 4), so that not even
    its sign is known.

    The path loops ask it of a point that would cross its level at a zero-length step
    (:func:`gpath._engine.Engine.step` checks the rates against the largest one only). Taken
    as an event, such a crossing can cycle: on Bananas (1,705 standardized rows, a linear
    kernel, C = 0.0015) a point of I with ψ_k = 6e-13, four ε of its terms, entered M at a
    zero-length step and left it at the next, its α rate as unsure on a margin matrix that
    only the ridge keeps regular, 3,421 times. Not taking it moves the point's margin by
    round-off of its own.

    Parameters
    ----------
    row : ndarray of shape (m,), float64
        ``Q[k, M]``, the point's row against the margin points.
    phi : ndarray of shape (m,), float64
        The margin points' rates.
    a, y_k, u_k : float
        The bias rate, the point's label and its driver entry (the C path's ``u_k``).
    """
    psi, size = a * y_k + u_k, abs(a) + abs(u_k)
    for j in range(row.shape[0]):
        term = row[j] * phi[j]
        psi += term
        size += abs(term)
    return abs(psi) <= (row.shape[0] + 2) * _FLOAT64_EPS * size
