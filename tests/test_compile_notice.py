"""The line on standard error while Numba compiles gpath's code (issue 18: a fresh install
compiles for about a minute, which must not look like a hang)."""

from __future__ import annotations

import io
import time

import numba
import numpy as np
from numba.core import event

from gpath._compile_notice import CompileNotice


def _gpath_function():
    """A function Numba takes for gpath's (its module's name), compiled anew on each call of
    this helper (no cache): a real compile, with Numba's own events."""

    def add_one(x):
        return x + 1.0

    add_one.__module__ = "gpath._a_test_function"
    return numba.njit(add_one)


def _wait_for(predicate, seconds=10.0):
    end = time.perf_counter() + seconds
    while not predicate() and time.perf_counter() < end:
        time.sleep(0.01)


def test_a_long_compile_of_gpath_code_is_announced_then_timed():
    stream = io.StringIO()
    notice = CompileNotice(stream=stream, after=0.05)
    compiled = _gpath_function()
    with event.install_listener("numba:compile", notice):
        # A compile that takes longer than ``after`` (Numba's event around our own wait).
        with event.trigger_event("numba:compile", data={"dispatcher": compiled}):
            time.sleep(0.3)
        _wait_for(lambda: "compiled in" in stream.getvalue())
    lines = stream.getvalue().splitlines()
    assert len(lines) == 2, lines
    assert lines[0].startswith("gpath: compiling its Numba code for this machine, once per installation")
    assert lines[1].startswith("gpath: compiled in ") and lines[1].endswith(" s")


def test_numbas_own_compile_events_reach_the_notice():
    seen = []

    class Recording(CompileNotice):
        def on_start(self, ev):
            seen.append(("start", self._ours(ev)))
            super().on_start(ev)

        def on_end(self, ev):
            seen.append(("end", self._ours(ev)))
            super().on_end(ev)

    notice = Recording(stream=io.StringIO(), after=60.0)
    compiled = _gpath_function()
    with event.install_listener("numba:compile", notice):
        assert compiled(np.float64(1.0)) == 2.0  # compiled here: Numba sends the events
        assert compiled(np.float64(2.0)) == 3.0  # compiled already: no event
    assert seen == [("start", True), ("end", True)]
    assert notice._active == 0


def test_a_short_compile_and_other_code_say_nothing():
    stream = io.StringIO()
    notice = CompileNotice(stream=stream, after=0.2)
    compiled = _gpath_function()
    theirs = numba.njit(lambda x: x)  # another module's function
    with event.install_listener("numba:compile", notice):
        with event.trigger_event("numba:compile", data={"dispatcher": compiled}):
            pass  # over within ``after``
        with event.trigger_event("numba:compile", data={"dispatcher": theirs}):
            time.sleep(0.4)  # long, but not gpath's
        time.sleep(0.5)
        notice.flush()
    assert stream.getvalue() == ""


def test_compiling_that_goes_on_after_a_pause_is_one_announcement():
    # The compiles of a first fit come one function at a time, with the fit's work between.
    stream = io.StringIO()
    notice = CompileNotice(stream=stream, after=0.1)
    compiled = _gpath_function()
    with event.install_listener("numba:compile", notice):
        for _ in range(3):
            with event.trigger_event("numba:compile", data={"dispatcher": compiled}):
                time.sleep(0.15)
            time.sleep(0.03)  # less than ``after``: the same burst
        notice.flush()  # the process ends before the second of quiet
    lines = stream.getvalue().splitlines()
    first = ("gpath: compiling its Numba code for this machine, once per installation (about a minute; later "
             "processes load it from Numba's cache) ...")
    assert [line.split(" in ")[0] for line in lines] == [first, "gpath: compiled"]


def test_no_line_into_a_captured_stream(capsys):
    # The default stream is standard error, and only where a person reads it: not pytest's capture.
    notice = CompileNotice(after=0.0)
    compiled = _gpath_function()
    with event.install_listener("numba:compile", notice):
        with event.trigger_event("numba:compile", data={"dispatcher": compiled}):
            time.sleep(0.1)
        time.sleep(0.1)
        notice.flush()
    assert capsys.readouterr().err == ""


def test_a_forked_child_starts_with_no_compile_in_progress():
    # A fork during a compile in another thread: the child has neither that thread nor the
    # timer's, and the lock may have been held at the fork (os.register_at_fork runs reset in
    # the child); the child's own compiles are then announced as in a new process.
    stream = io.StringIO()
    notice = CompileNotice(stream=stream, after=0.05)
    compiled = _gpath_function()
    notice.on_start(event.Event("numba:compile", event.EventStatus.START, data={"dispatcher": compiled}))
    notice._lock.acquire()  # held by the parent's compiling thread at the fork
    notice.reset()
    assert notice._lock.acquire(timeout=1.0)
    notice._lock.release()
    assert notice._active == 0 and notice._started is None
    with event.install_listener("numba:compile", notice):
        with event.trigger_event("numba:compile", data={"dispatcher": compiled}):
            time.sleep(0.3)
        _wait_for(lambda: "compiled in" in stream.getvalue())
    assert [line.split(" in ")[0] for line in stream.getvalue().splitlines()][1:] == ["gpath: compiled"]
