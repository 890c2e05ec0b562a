"""Load the compiled update code before a stream needs it.

Numba loads a compiled function from its on-disk cache (or compiles it) on the first call.
A fit runs SimpleSVM's compiled code, not the path's, so without this the first update after
``fit`` in a new process paid for loading the path's loop and the kernel-column code (26–37 ms
against a steady 0.8 ms, WaterFlow, n = 600): a pause in the middle of a stream. The first
NumPy fit (or load) of a process therefore runs a one-point update on a problem of eight
points, and one of two, which reach the same compiled functions with the same argument types
(the kernel's kind is a run-time argument, not a type), and moves one point into the margin
set and out again from Python, as the events the compiled loop hands back do.
"""

from __future__ import annotations

import copy
import threading

import numpy as np

__all__ = ["warm_compiled_update"]

_done = threading.Event()
_lock = threading.Lock()


def warm_compiled_update(xp) -> None:
    """Once per process, for NumPy models: fit and update a tiny IncrementalSVC so that
    every compiled function an update reaches is loaded. Other namespaces run no compiled
    code (nothing to load)."""
    from ._array_api import is_numpy

    if _done.is_set() or not is_numpy(xp):
        return
    with _lock:
        if _done.is_set():
            return
        _done.set()  # first: the tiny fit below must not come back here
        from .incremental import IncrementalSVC

        X = np.array([[0.0, 0.0], [1.0, 0.2], [0.1, 1.0], [1.2, 1.1], [0.5, 0.4], [0.9, 0.8],
                      [0.2, 0.6], [0.7, 0.1], [0.4, 0.9], [0.8, 0.5], [0.3, 0.2]])
        y = np.array([0, 1, 0, 1, 0, 1, 1, 0, 1, 1, 0])
        model = IncrementalSVC(C=10.0, gamma=1.0, method="multiple").fit(X[:8], y[:8])
        # One point (the new points' kernel block is then a single column, which Numba types
        # as C-ordered), then two (a Fortran-ordered block, as every larger update and each
        # ε-SVR point's two rows), on the readable path (gpath._path's _PathRun, which takes the
        # updates of more rows than gpath._path._FEW_POINTS), and then on a small update's
        # compiled whole path (gpath._one_point).
        from . import _path

        chosen = _path.ONE_POINT
        for one_point in (False, True):
            _path.ONE_POINT = one_point
            try:
                fitted = model if one_point else copy.deepcopy(model)
                fitted.update(X_add=X[8:9], y_add=y[8:9], remove=fitted.sample_ids_[:1])
                fitted.update(X_add=X[9:], y_add=y[9:], remove=fitted.sample_ids_[:2])
            finally:
                _path.ONE_POINT = chosen
        model.predict(X[:2])
        from ._engine import decision_values  # (the river models' predictions)

        decision_values(model.kernel_, X[:1], X[:2], np.ones(2), 0.0)
        # What the path hands back to Python (a point entering M where the compiled loop has no
        # free cache slot or factor room; a removed point leaving M) calls the factor's and the
        # kernel column's compiled functions from Python: load those too (7 ms seen mid-stream).
        from ._path import M

        state = model.states_[0]
        k = int(np.flatnonzero(state.where != M)[0])
        state.active.enter(k, state.y_host[k])
        state.active.leave(k)
        state.factor.refactor()  # what a solve whose check finds drift calls
        # A refit of more than _BLOCKS_FROM · _BLOCK rows starts from SMO by blocks
        # (_smo._smo_blocks): its gather and its gradient move, which no small fit reaches.
        from ._smo import _gather, _move_gradients

        K, rows = np.eye(2, dtype=np.float32), np.arange(2, dtype=np.int64)
        _gather(0, 2, K, rows, rows, np.empty((2, 2), dtype=np.float32))
        _move_gradients(0, 2, K, rows, np.zeros(2), np.zeros(2))
        # ε-SVR's update blocks (NumbaEngine.twin_block): a block of one column is typed
        # C-ordered, a wider one Fortran-ordered (one removed row; one added point's two rows),
        # and blocks of more columns from the kernel values of their points.
        from ._engine import _twin_columns, _twin_expand, _twin_points

        for width in (1, 2):
            _twin_columns(np.ones((4, 2)), np.arange(width, dtype=np.int64), 0, 1.0, 3.0, 0.0, 0.0, np.ones(4), 0.0,
                          np.empty((4, width), order="F"))
        _twin_points(np.arange(3, dtype=np.int64))
        from .svr import _rows_after  # (its points' bookkeeping)

        _rows_after(rows[:1], np.ones(2), np.ones(2), rows, np.ones(1), np.ones(1), 2)
        _twin_expand(np.asfortranarray(np.ones((2, 2))), np.zeros(3, dtype=np.int64), np.ones(4),
                     np.zeros(3, dtype=np.int64), 0.0, np.empty((4, 3), order="F"))
        # The new points' margins and their share of the KKT scale, from a block of one column
        # (typed C-ordered) or more (Fortran-ordered); an update that moves nothing.
        from ._engine import _absolute_rows_dot, _added_margins
        from ._path import _beyond_levels, _moving_rows, _removable, _shifted_rows

        for width in (1, 2):
            block = np.ones((3, width), order="F")
            _added_margins(np.ones(2), block, 0.0, np.ones(width), np.zeros(0))
            _absolute_rows_dot(block, rows, np.ones(2))
        _removable(rows[:1], np.zeros(2), np.zeros(2, dtype=np.int8), np.zeros(0))
        _beyond_levels(np.ones(1), np.ones(1))
        _moving_rows(1, rows[:1], np.ones(1), np.ones(1), np.ones(1))
        none = np.zeros(0)
        _shifted_rows(rows[:1], np.ones(2), np.zeros(2), np.ones(2), np.zeros(2, dtype=np.int8), np.ones(2),
                      np.ones(2), np.ones(2), none, np.ones(1), np.ones(1), np.ones(1), none)
        # The scale of the KKT check with many margin columns (cache.QColumnCache.matvec).
        from .cache import _absolute_product

        _absolute_product(0, 2, np.eye(2), rows, np.ones(2), np.empty(2))
        # Last, with everything loaded, one more one-point update of each estimator: loading
        # left the caches and CPython's specialized bytecode cold, and the first update of a
        # stream paid for it (WaterFlow, window 600: 1.14–1.56 ms against a steady 0.46–0.64
        # ms; 0.87–0.90 ms with this update).
        model.update(X_add=X[:1], y_add=y[:1], remove=model.sample_ids_[:1])
        from .svr import IncrementalSVR

        target = X[:, 0] - X[:, 1]
        regressor = IncrementalSVR(C=10.0, epsilon=0.01, gamma=1.0).fit(X[:8], target[:8])
        regressor.update(X[8:9], target[8:9], remove=regressor.sample_ids_[:1])
        regressor.update(X[9:], target[9:], remove=regressor.sample_ids_[:2])
        regressor.predict(X[:2])
