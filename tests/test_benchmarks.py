"""The benchmark scripts run: each at its smallest setting, in a process of its own, exits 0
and prints its table. (`benchmarks/probability.py` patched a function that had left
`gpath.incremental`, and failed at its first row for several sessions without anyone
seeing it.) Their times are not checked here: benchmarks are not tests."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"

# script -> its smallest setting (run.py --quick runs speed.py, large_update.py, simplesvm.py,
# outlier_path.py --timing-only and grid.py at theirs)
SMALLEST = {
    "run.py": "--quick",
    "probability.py": "--quick",
    "model_selection.py": "--quick",
    "multiclass.py": "--quick",
    "svr.py": "--part 1 --updates 2",
    "stream.py": "--n 300 --windows 100 --batches 25",
    "sliding_window.py": "--sizes 300 --steps 10 --updates 2",
    "soak.py": "--updates 50 --window 100",
    "profile_update.py": "--data bananas --n 1000 --m 10",
    "simplesvm.py": "--linear --quick",  # (its RBF table runs in run.py --quick)
}
# Helpers the scripts import, with no command line of their own.
MODULES = ("floor", "peers")


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], check=False, cwd=BENCHMARKS, capture_output=True, text=True,
                          timeout=900)


@pytest.mark.parametrize("script", [
    pytest.param(name, marks=pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc"))
    if name == "soak.py" else name for name in sorted(SMALLEST)])
def test_a_benchmark_runs_at_its_smallest_setting(script):
    done = _run(script, *SMALLEST[script].split())
    assert done.returncode == 0, f"{script} {SMALLEST[script]} failed:\n{done.stderr[-3000:]}"
    assert "|---" in done.stdout, f"{script} printed no table:\n{done.stdout[-2000:]}"


# Every script's --help, in one process (each import of gpath and its peers takes seconds).
_HELP = """
import runpy, sys
for script in sys.argv[1:]:
    sys.argv = [script, "--help"]
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as done:
        assert done.code == 0, f"{script} --help exited {done.code}"
    else:
        raise AssertionError(f"{script} --help printed no usage and went on")
"""


def test_every_benchmark_script_parses_its_arguments_and_the_helpers_import():
    scripts = sorted(p.name for p in BENCHMARKS.glob("*.py") if p.stem not in MODULES)
    # fit_phases.py times gpath's own functions, which it looks up by name only when it runs.
    phases = "import fit_phases\nassert all(hasattr(owner, name) for owner, name, _ in fit_phases._PHASES)\n"
    done = _run("-c", f"import {', '.join(MODULES)}\n" + phases + _HELP, *scripts)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.count("usage:") == len(scripts)
