"""Light dependencies (issue 13.7): gpath without its extras, and the README's set-up commands
as CI runs them."""

from __future__ import annotations

import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
EXTRAS = ("river", "dabl", "matplotlib", "tqdm", "cupy", "dask", "distributed")

# Run in a fresh interpreter in which the extras' packages cannot be imported.
BLOCK = f"""
import importlib.abc, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {EXTRAS!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
sys.meta_path.insert(0, Block())
"""


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", BLOCK + code], capture_output=True, text=True, timeout=300,
                          cwd=ROOT, check=False)


def test_the_library_works_without_its_extras():
    out = _run("""
import numpy as np
import gpath
from gpath import IncrementalSVC, RobustSVC
from gpath.datasets import load_path_data
X, y, _ = load_path_data("breast_cancer")
X = (X - X.mean(0)) / X.std(0)
m = IncrementalSVC(gamma=0.05).fit(X[:200], y[:200]).update(X_add=X[200:220], y_add=y[200:220], remove=[0, 1])
assert m.check_kkt() < 1e-9
RobustSVC(gamma=0.05, path="s").fit(X[:100], y[:100])
from gpath import cli
assert cli.main(["path", "--data", "diabetes"]) == 0
print(sorted({name.split(".")[0] for name in sys.modules} & set(EXTRAS)))
""".replace("EXTRAS", repr(EXTRAS)))
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_a_missing_extra_names_the_command_that_installs_it():
    out = _run("""
import gpath
from gpath.datasets import load_bananas
for call in (load_bananas, lambda: __import__("gpath.river")):
    try:
        call()
    except ModuleNotFoundError as exc:
        print(exc)
    else:
        raise SystemExit("no error")
from gpath import cli
for argv in (["demo"], ["path", "--data", "waterflow"], ["path", "--plot", "path.png"]):
    try:
        cli.main(argv)
    except SystemExit as exc:
        print("exit", exc.code)
""")
    assert out.returncode == 0, out.stderr[-3000:]
    lines = out.stdout.strip().splitlines()
    assert lines[0] == ("load_bananas needs river, which is not installed (gpath installs it with its 'demo' "
                        "extra): pip install 'gpath[demo]', or from a source checkout: pip install '.[demo]'")
    assert lines[1].startswith("gpath.river needs river, which is not installed") and "pip install 'gpath[river]'" in lines[1]
    assert lines[2:] == ["exit 2"] * 3
    err = out.stderr
    assert "gpath demo: error: gpath demo needs river" in err and "Traceback" not in err
    assert "gpath path: error: gpath path --data waterflow needs river" in err
    assert "gpath path: error: argument --plot: --plot needs matplotlib" in err
    assert err.count("pip install 'gpath[demo]'") == 3


def test_dependencies_and_extras():
    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    core = {re.split(r"[<>=\[ ]", d)[0] for d in meta["dependencies"]}
    assert core == {"numpy", "scipy", "array-api-compat", "scikit-learn", "threadpoolctl", "numba"}
    extras = meta["optional-dependencies"]
    names = {k: {re.split(r"[<>=\[ ]", d)[0] for d in v} for k, v in extras.items()}
    assert names["demo"] == {"river", "dabl", "matplotlib", "tqdm"}
    assert names["river"] == {"river"} and "cupy-cuda12x" in names["cuda"]
    assert names["dask"] == {"dask", "distributed"}
    assert "gpath[demo,river,dask]" in extras["test"]


def _readme_setup_commands():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Set up", 1)[1].split("\n## ", 1)[0]
    return [line.strip() for line in section.splitlines() if line.startswith("    ") and line.strip()]


def test_ci_runs_the_readmes_commands():
    # .ci/run installs from scratch and runs each command of the README's set-up section
    # exactly as written (and checks the library without its extras first).
    commands = _readme_setup_commands()
    assert commands[0] == 'pip install ".[demo]" && gpath demo'
    assert 'pip install ".[test]" && python -m pytest -q -n auto' in commands
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    for command in commands:
        assert command in ci, f".ci/run does not run the README's {command!r}"
    assert "pip install --quiet .\n" in ci  # the library alone, first
