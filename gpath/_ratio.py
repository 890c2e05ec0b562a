"""The ratio test shared by the path algorithms: where does the next breakpoint fall?

Along a path segment every margin moves linearly, ``z(t) = z + t ψ``, and every free
coefficient too, ``α(t) = α + t φ``. A breakpoint is the smallest t at which a point that is
not in the active set reaches one of the two levels bounding its region, or an active point's
coefficient reaches one end of its range. The n-sized part is reduced on the device; only
an index and a step length cross to the host.
"""

from __future__ import annotations

import numpy as np

from ._array_api import to_host

__all__ = ["EPS", "next_bound_hit", "next_level_crossing"]

# Relative size below which a rate of change (dα/dt, dz/dt) is round-off: a zero-length
# breakpoint driven by such a rate is what makes degenerate paths cycle.
EPS = 1e-12


def next_level_crossing(xp, z, psi, lo, hi, scale=None):
    """First crossing of a level by the margins ``z + t ψ`` (device reduction).

    Parameters
    ----------
    xp : namespace
    z, psi, lo, hi : device arrays of shape (n,)
        Margins, their rates, and the levels below and above each point (``-inf``/``inf``
        where there is none, and for points in the active set).
    scale : float or None
        A bound on max |ψ| known on the host (``‖φ‖₁ · max_i Q_ii + max |u|``): rates below
        ``EPS * scale`` are round-off. None: measured on the device (one more reduction).

    Returns
    -------
    t : float
        Step length to the first crossing (``inf`` if none); slack already below zero (round-off)
        counts as zero.
    k : int
        The point that crosses.
    upward : bool
        True if it crosses its upper level ``hi``.
    """
    if z.shape[0] == 0:
        return float("inf"), -1, True
    return _first_crossing(xp, [(hi - z, psi), (z - lo, -psi)], _tiny(xp, psi, scale))


def next_side_crossing(xp, yf, psi, side, scale=None):
    """First point of O, I or A whose margin ``y f + t ψ`` reaches 1 (the MID ratio test of
    Karasuyama & Takeuchi 2009, eqs. 8–9, on the device).

    Parameters
    ----------
    xp : namespace
    yf, psi : device arrays of shape (n,)
        Margins y f and their rates.
    side : device array of shape (n,)
        +1 where y f must stay above 1 (O), −1 where below (I and A), 0 for no constraint.
    scale : float or None
        As in :func:`next_level_crossing`.

    Returns
    -------
    t : float
    k : int
    """
    if yf.shape[0] == 0:
        return float("inf"), -1
    t, k, _ = _first_crossing(xp, [(side * (yf - 1.0), -side * psi)], _tiny(xp, psi, scale))
    return t, k


def _tiny(xp, psi, scale):
    if scale is None:
        scale = float(xp.max(xp.abs(psi)))
    return EPS * max(scale, 1.0)


def _first_crossing(xp, pairs, tiny):
    """Smallest ``slack / rate`` over the pairs (slack clipped at 0, rates ≤ tiny ignored):
    the step, the index, and whether the first pair attains it. One 3-number transfer."""
    inf = float("inf")
    ts = []
    for slack, rate in pairs:
        moving = rate > tiny
        ts.append(xp.where(moving, xp.maximum(slack, 0.0) / xp.where(moving, rate, 1.0), inf))
    t = ts[0] if len(ts) == 1 else xp.minimum(ts[0], ts[1])
    k = xp.reshape(xp.argmin(t), (1,))
    first = xp.take(ts[0], k) <= (xp.take(ts[1], k) if len(ts) > 1 else xp.take(ts[0], k))
    picked = xp.concat([xp.take(t, k), xp.astype(k, t.dtype), xp.astype(first, t.dtype)])
    t_k, k_f, first_f = (float(v) for v in to_host(picked))
    return t_k, int(k_f), bool(first_f)


def next_bound_hit(alpha, phi, lower, upper, scale):
    """First coefficient of the active set to reach its range ``[lower, upper]`` (host).

    Parameters
    ----------
    alpha, phi, lower, upper : ndarray of shape (m,)
        Coefficients, their rates, and the ends of their ranges (±inf for none).
    scale : float
        Size of a coefficient (C): rates below ``EPS * max(|φ|, scale)`` are round-off.

    Returns
    -------
    t : float
        Step length (``inf`` if none).
    j : int
        Position in the active set (-1 if none).
    upward : bool
        True if it reaches ``upper``.
    """
    if alpha.shape[0] == 0:
        return float("inf"), -1, True
    tiny = EPS * max(float(np.abs(phi).max()), scale)
    with np.errstate(divide="ignore", invalid="ignore"):
        t_up = np.where(phi > tiny, np.maximum(upper - alpha, 0.0) / phi, np.inf)
        t_down = np.where(phi < -tiny, np.maximum(alpha - lower, 0.0) / -phi, np.inf)
    t = np.minimum(t_up, t_down)
    j = int(np.argmin(t))
    return float(t[j]), j, bool(t_up[j] <= t_down[j])
