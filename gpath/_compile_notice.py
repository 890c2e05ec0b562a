"""A line on standard error while Numba compiles gpath's code.

gpath's compiled functions (``numba.njit(cache=True)``) are compiled on their first call after
an installation and loaded from Numba's on-disk cache by every later process. That first
compile takes about a minute (a first ``IncrementalSVC.fit`` after installing: 70 s on the
2-core development container, against 0.9 s once cached), which a new user would otherwise
take for a hang (issue 18: "a fresh install compiles once, with a progress message if it takes
more than a second"). This module listens to Numba's compile events (``numba.core.event``,
sent only when a function is compiled, never when it is loaded from the cache) for gpath's
own functions, and once such compiling has gone on for a second, says so; when it stops (no
compile for a second, or the process ends), it says how long it took. Other code's compiles
are not reported. The lines go to standard error where a person reads them (a terminal, or a
Jupyter kernel); not into a pipe or a captured stream (a CI log, pytest's capture), where a
progress line would be noise in output that programs read.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
import time

from numba.core import event

__all__ = ["NOTICE", "CompileNotice"]

# Seconds of compiling before the first line, and of quiet after a compile before the second.
_AFTER = 1.0


class CompileNotice(event.Listener):
    """The listener: counts gpath's compiles in progress and prints the two lines."""

    def __init__(self, stream=None, after: float = _AFTER):
        self.stream, self.after = stream, after
        self.reset()

    def reset(self) -> None:
        """No compile in progress, nothing announced (also in a forked child, where the
        parent's lock may have been held and its timer thread does not exist)."""
        timer = getattr(self, "_timer", None)
        if timer is not None:
            timer.cancel()
        self._lock = threading.Lock()
        self._active = 0  # compiles in progress (they nest: a function compiles its callees)
        self._started = None  # when the current burst of compiles began
        self._announced = False  # whether the current burst's first line was printed
        self._timer = None

    @staticmethod
    def _ours(ev) -> bool:
        dispatcher = (ev.data or {}).get("dispatcher")
        module = getattr(getattr(dispatcher, "py_func", None), "__module__", "") or ""
        return module == "gpath" or module.startswith("gpath.")

    def on_start(self, ev) -> None:
        if not self._ours(ev):
            return
        with self._lock:
            self._active += 1
            if self._started is None:  # a new burst
                self._started = time.perf_counter()
                self._arm(self._announce)
            elif self._active == 1 and self._announced:
                self._cancel()  # the burst goes on: no "done" yet

    def on_end(self, ev) -> None:
        if not self._ours(ev):
            return
        with self._lock:
            self._active = max(self._active - 1, 0)  # (0: a compile begun before a reset)
            if self._active == 0 and self._announced:
                self._arm(self._finish)

    def _arm(self, action) -> None:
        self._cancel()
        self._timer = threading.Timer(self.after, action)
        self._timer.daemon = True
        self._timer.start()

    def _cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _announce(self) -> None:
        with self._lock:
            if self._started is None or self._announced:
                return
            if self._active == 0:  # a short burst, over within the second: nothing to say
                self._started = None
                return
            self._announced = True
        self._print("gpath: compiling its Numba code for this machine, once per installation (about a minute; "
                    "later processes load it from Numba's cache) ...")

    def _finish(self, waited: bool = True) -> None:
        """The second line, after ``waited`` the second of quiet (the timer's call) or not."""
        with self._lock:
            if self._active or self._started is None or not self._announced:
                return
            if not waited:
                self._cancel()
            seconds = time.perf_counter() - self._started - (self.after if waited else 0.0)
            self._started, self._announced, self._timer = None, False, None
        self._print(f"gpath: compiled in {seconds:.0f} s")

    def flush(self) -> None:
        """The second line now, if compiling was announced and has stopped (at exit)."""
        self._finish(waited=False)

    def _print(self, line: str) -> None:
        stream = self.stream
        if stream is None:
            stream = sys.stderr
            if stream is None or not (_isatty(stream) or "ipykernel" in sys.modules):
                return
        try:
            print(line, file=stream, flush=True)
        except (OSError, ValueError):  # a closed stream (interpreter shutdown): nothing to tell
            pass


def _isatty(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, OSError, ValueError):
        return False


NOTICE = CompileNotice()
event.register("numba:compile", NOTICE)
atexit.register(NOTICE.flush)
if hasattr(os, "register_at_fork"):  # (not on Windows)
    os.register_at_fork(after_in_child=NOTICE.reset)
