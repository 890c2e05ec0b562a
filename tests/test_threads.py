"""gpath._threads: compiled passes split over the cores by Python threads."""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit

from gpath import _threads
from gpath._threads import in_row_blocks


@njit(nogil=True, cache=False)
def _mark(start, stop, out):
    for i in range(start, stop):
        out[i] += 1.0
    return stop - start


@pytest.mark.parametrize("cores", [1, 2, 3, 8])
@pytest.mark.parametrize("n", [0, 1, 63, 64, 129, 1000])
def test_every_row_is_done_once_and_the_results_come_in_row_order(monkeypatch, cores, n):
    monkeypatch.setattr(_threads, "n_threads", lambda: cores)
    out = np.zeros(n)
    counts = in_row_blocks(_mark, n, out)
    np.testing.assert_array_equal(out, np.ones(n))
    assert sum(counts) == n
    assert len(counts) == min(cores, max(n // 64, 1))  # ranges of at least min_rows = 64 rows


def test_min_rows_lets_short_arrays_of_long_rows_split(monkeypatch):
    monkeypatch.setattr(_threads, "n_threads", lambda: 2)
    out = np.zeros(16)
    assert len(in_row_blocks(_mark, 16, out, min_rows=4)) == 2
    np.testing.assert_array_equal(out, np.ones(16))
