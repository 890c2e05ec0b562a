"""gpath's Numba cache follows every gpath source, not only each function's own file
(gpath._numba_cache)."""

import os
import subprocess
import sys
import textwrap

import gpath._mid_numba
from gpath import _numba_cache

CALLEE = "from numba import njit\n\n\n@njit(cache=True)\ndef g():\n    return {}\n"
CALLER = "from numba import njit\n\nfrom pkg.callee import g\n\n\n@njit(cache=True)\ndef f():\n    return g()\n"
# One process: the package's cache refreshed as gpath refreshes its own (or not), then f().
RUN = textwrap.dedent("""
    import glob, os, sys
    from gpath import _numba_cache
    pkg = os.path.join(sys.argv[1], "pkg")
    if sys.argv[2] == "refresh":
        _numba_cache.refresh(_numba_cache.cache_directory(os.path.join(pkg, "caller.py")),
                             _numba_cache.sources_key(glob.glob(os.path.join(pkg, "*.py"))))
    from pkg.caller import f
    print(f())
""")


def _write_callee(pkg, value, stamp):
    path = pkg / "callee.py"
    path.write_text(CALLEE.format(value))
    os.utime(path, (stamp, stamp))  # (a later modification time, whatever the clock's resolution)


def _run(root, how) -> str:
    env = {**os.environ, "PYTHONPATH": str(root) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    env.pop("NUMBA_CACHE_DIR", None)
    done = subprocess.run([sys.executable, "-c", RUN, str(root), how], env=env, capture_output=True, text=True,
                          timeout=300, check=True)
    return done.stdout.strip()


def test_an_edit_of_a_callee_reaches_its_cached_caller_only_through_the_refresh(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "caller.py").write_text(CALLER)
    _write_callee(pkg, 1, 1_700_000_000)
    assert _run(tmp_path, "refresh") == "1"  # compiled and cached
    _write_callee(pkg, 2, 1_700_000_100)
    # Numba's own rule: the caller's file did not change, so its cache (the old g inside) loads.
    assert _run(tmp_path, "plain") == "1"
    assert _run(tmp_path, "refresh") == "2"
    assert _run(tmp_path, "refresh") == "2"  # cached again, and kept


def test_refresh_removes_the_cached_functions_once_per_key(tmp_path):
    for name in ("a.f-1.py311.nbi", "a.f-1.py311.1.nbc", "a.cpython-311.pyc"):
        (tmp_path / name).write_text("x")
    assert _numba_cache.refresh(str(tmp_path), "k1")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.cpython-311.pyc", _numba_cache.KEY_FILE]
    (tmp_path / "a.f-1.py311.nbi").write_text("new")
    assert not _numba_cache.refresh(str(tmp_path), "k1")
    assert (tmp_path / "a.f-1.py311.nbi").exists()
    assert _numba_cache.refresh(str(tmp_path), "k2")
    assert not (tmp_path / "a.f-1.py311.nbi").exists()
    assert not _numba_cache.refresh(None, "k3")


def test_the_key_follows_contents_and_names(tmp_path):
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    a.write_text("x = 1\n")
    b.write_text("y = 1\n")
    key = _numba_cache.sources_key([str(a), str(b)])
    assert _numba_cache.sources_key([str(b), str(a)]) == key
    a.write_text("x = 2\n")
    os.utime(a, (1_700_000_000, 1_700_000_000))
    assert _numba_cache.sources_key([str(a), str(b)]) != key


def test_gpath_refreshes_the_directory_numba_caches_it_in():
    assert _numba_cache.cache_directory() == gpath._mid_numba.run._cache._cache_path
