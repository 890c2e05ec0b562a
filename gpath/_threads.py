"""Passes over the rows of a large array, on every core, by Python threads.

The few passes that are worth more than one core (the kernel blocks: their products and
finish, SMO's gradient moves and rebuild) are functions over a range of rows that release
the GIL for nearly all their time (Numba functions compiled with ``nogil=True``, or a few
calls of BLAS and NumPy's loops around them), called here once per thread on contiguous
ranges. Not
Numba's ``prange``: its OpenMP threading layer (the one a pip install gets) terminates a
forked child process that runs a parallel loop after its parent did — a fit inside
``multiprocessing``'s default fork pool, or in a forked Dask worker, after a fit in the parent —
and its workqueue layer terminates the process when two threads launch loops at once. Python
threads are safe under both: the pool is made anew in a forked child, and it serves any number
of callers.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor

__all__ = ["ENTRIES_PER_THREAD", "in_row_blocks", "n_threads"]

# A pass over a block's rows gives each thread at least this many entries (a thread's hand-off
# costs some tens of microseconds; a fit's bound columns at make_friedman1 n = 10,000 took
# 0.47 s on one core).
ENTRIES_PER_THREAD = 2**17

_lock = threading.Lock()
_pool: ThreadPoolExecutor | None = None
_pool_pid = -1


def n_threads() -> int:
    """The cores this process may run on."""
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _executor() -> ThreadPoolExecutor:
    global _pool, _pool_pid
    with _lock:
        if _pool is None or _pool_pid != os.getpid():  # a forked child has none of the threads
            _pool, _pool_pid = ThreadPoolExecutor(max_workers=n_threads(), thread_name_prefix="gpath"), os.getpid()
        return _pool


def in_row_blocks(function, n: int, *args, min_rows: int = 64) -> list:
    """``function(start, stop, *args)`` over rows ``[0, n)`` split into one contiguous range
    per core, of at least ``min_rows`` rows each (a thread's hand-off costs some tens of
    microseconds), the ranges run at once; their results in row order.

    ``function`` must release the GIL for nearly all its time (``numba.njit(nogil=True)``, or
    BLAS and NumPy calls around such passes) and write only its own rows.
    """
    parts = min(n_threads(), max(n // min_rows, 1))
    if parts == 1:
        return [function(0, n, *args)]
    bounds = [n * p // parts for p in range(parts + 1)]
    pool = _executor()
    futures = [pool.submit(function, bounds[p], bounds[p + 1], *args) for p in range(parts - 1)]
    last = function(bounds[-2], n, *args)  # the caller's own share
    return [f.result() for f in futures] + [last]
