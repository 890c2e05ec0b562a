"""The floor of a breakpoint (../shared/DESIGN.md, "The floor of a breakpoint"), measured in
the process that measures gpath.

A breakpoint must read the n × |M| cached columns once (the product Q[:, M] φ), solve with
the |M| × |M| factor (about four triangular solves of size |M|: a solve and an insert or a
delete) and make one pass over n (move the margins, find the first crossing). Its floor is
the sum of those bare operations: NumPy's (BLAS) matrix-vector product in the cache's layout,
SciPy's BLAS ``dtrsv`` and one NumPy pass over n, each the median of repeated runs (on the GPU
the product and the pass are CuPy's, the solves the host's).
"""

from __future__ import annotations

import time

import numpy as np
from scipy.linalg.blas import dtrsv


def _median(fn, now, repeats):
    fn()
    times = []
    for _ in range(repeats):
        t = now()
        fn()
        times.append(now() - t)
    return float(np.median(times))


def breakpoint_floor(xp, n: int, m: int, now=time.perf_counter, repeats: int = 30) -> dict:
    """Seconds of the bare operations of one breakpoint at n points and |M| = m.

    Returns
    -------
    dict
        ``product`` (the (m,) @ (m × n) product), ``solves`` (four triangular solves of size
        m), ``pass`` (z += t·w over n) and ``total``.
    """
    m = max(m, 1)
    A = xp.ones((m, n), dtype=xp.float64)
    v = xp.ones(m, dtype=xp.float64)
    z, w = xp.ones(n, dtype=xp.float64), xp.ones(n, dtype=xp.float64)
    rng = np.random.default_rng(0)
    R = np.asfortranarray(np.triu(rng.random((m, m))) + m * np.eye(m))
    b = rng.random(m)

    def solves():
        for trans in (0, 1, 0, 1):
            dtrsv(R, b, trans=trans)

    def one_pass():
        z.__iadd__(0.5 * w)

    out = {"product": _median(lambda: v @ A, now, repeats), "solves": _median(solves, time.perf_counter, repeats),
           "pass": _median(one_pass, now, repeats)}
    out["total"] = out["product"] + out["solves"] + out["pass"]
    return out


def fit_floor(X, support: np.ndarray, working_set_size: int, gamma: float, block: int = 256) -> float:
    """Seconds of the bare operations of an exact RBF fit (issue 17): every support vector's
    kernel column computed once, as BLAS-3 blocks of ``block`` columns (one matrix product and
    one exponential each), plus one Cholesky factor of the |W| × |W| working-set matrix.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    support : int ndarray
        Rows of the support vectors of the exact solution.
    working_set_size : int
        |W|, the free support vectors.
    gamma : float
    """
    from scipy.linalg import cholesky

    sq = np.einsum("ij,ij->i", X, X)

    def columns():
        for start in range(0, support.size, block):
            Z = X[support[start : start + block]]
            d2 = sq[:, None] + sq[support[start : start + block]][None, :] - 2.0 * (X @ Z.T)
            np.exp(-gamma * d2)

    m = max(working_set_size, 1)
    rng = np.random.default_rng(0)
    A = rng.random((m, m))
    A = A @ A.T + m * np.eye(m)
    return _median(columns, time.perf_counter, 3) + _median(lambda: cholesky(A), time.perf_counter, 3)
