"""Numba's on-disk cache of gpath's compiled functions, kept to the sources of all of them.

Numba keys a cached function to its own source file (a hash of its contents), not to the
files of the compiled functions it calls, whose code it compiles in. After an edit to one of
those (an editable install, a checkout of another revision), the cached caller goes on running
the callee's old code, and answers go silently wrong: after an edit of the factor's compiled
updates in ``gpath/linalg.py``, the cached path loops of ``gpath/_mid_numba.py`` and
``gpath/_one_point.py`` called their old versions, and a stream's accuracy fell from 0.93 to
0.61.

So at import, before any compiled function is loaded, :func:`refresh` compares the hash of
all of gpath's sources with the one the cache was written for (a key file beside the cached
functions), and where they differ removes every cached gpath function: each compiles anew on
its next call (about a minute for all of them), and the key is written. An installation writes
every file, and a fresh one has no cache, so neither pays more than before. Where Numba's
cache locators are overridden (``NUMBA_CACHE_LOCATOR_CLASSES``) or no cache directory can be
written, nothing is done here.
"""

from __future__ import annotations

import contextlib
import glob
import hashlib
import os
import tempfile

from numba.core import caching, config

__all__ = ["KEY_FILE", "cache_directory", "refresh", "refresh_gpath", "sources_key"]

KEY_FILE = "gpath-sources.key"
_PACKAGE = os.path.dirname(os.path.abspath(__file__))


def sources_key(paths) -> str:
    """The hash of the files ``paths`` (their names and contents), hexadecimal."""
    digest = hashlib.sha256()
    for path in sorted(paths):
        st = os.stat(path)
        # Numba's own memoized hash of a source file: the files it loads caches for are read once.
        digest.update(os.path.basename(path).encode() + b"\0" + caching._hash_source_file(path, st.st_mtime,
                                                                                           st.st_size))
    return digest.hexdigest()


def cache_directory(path: str = __file__) -> str | None:
    """The directory in which Numba caches the compiled functions of the source file ``path``
    (its locator classes in their order), or None where they are overridden or none applies."""
    if config.CACHE_LOCATOR_CLASSES:
        return None
    for cls in caching.CacheImpl._locator_classes:
        locator = cls.from_function(cache_directory, path)
        if locator is not None:
            return locator.get_cache_path()
    return None


def refresh(directory: str | None, key: str) -> bool:
    """Remove the cached functions in ``directory`` unless its key file holds ``key``, then
    write ``key`` there; whether they were removed. Nothing is done for ``directory`` None."""
    if directory is None:
        return False
    key_file = os.path.join(directory, KEY_FILE)
    with contextlib.suppress(OSError), open(key_file, encoding="ascii") as f:
        if f.read().strip() == key:
            return False
    for pattern in ("*.nbi", "*.nbc"):
        for cached in glob.glob(os.path.join(glob.escape(directory), pattern)):
            with contextlib.suppress(OSError):  # (another process removed it first)
                os.remove(cached)
    with contextlib.suppress(OSError):  # (a directory that cannot be written holds no cache either)
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=KEY_FILE)
        with os.fdopen(fd, "w", encoding="ascii") as f:
            f.write(key)
        os.chmod(tmp, 0o644)  # (mkstemp's 0600: every user of an installation reads the key)
        os.replace(tmp, key_file)  # whole, for a process that reads it meanwhile
    return True


def refresh_gpath() -> bool:
    """:func:`refresh` for gpath's own cache directory and sources."""
    return refresh(cache_directory(), sources_key(glob.glob(os.path.join(glob.escape(_PACKAGE), "*.py"))))


refresh_gpath()
