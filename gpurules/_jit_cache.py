"""Where Numba keeps the compiled code of gpurules: a directory per version of the sources.

Numba invalidates a cached function only when the file that defines it changes. Our
kernels inline the learning math from other modules (``objectives/*`` into the searches,
the statistics and the CUDA kernels), so after an edit of ``objectives/heads.py`` — or an
upgrade that changes only such a file — the searches would keep running the old machine
code: silently wrong or slow. Keying the cache directory by a hash of every source file of
the package makes any change start from an empty cache.

The directory is ``$NUMBA_CACHE_DIR/gpurules-<hash>`` when the user set
``NUMBA_CACHE_DIR``, else ``$XDG_CACHE_HOME/gpurules/numba/<hash>`` (``~/.cache`` by
default). If it cannot be created, Numba's own default stays in force.
"""

import hashlib
import os
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def source_digest(root=_PACKAGE):
    """Hex digest (16 characters) of the names and contents of every ``*.py`` under
    ``root``, in a fixed order."""
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode())
        digest.update(b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def cache_directory(environ=os.environ, root=_PACKAGE):
    """The cache directory for the sources under ``root`` (see the module docstring)."""
    tag = source_digest(root)
    if environ.get("NUMBA_CACHE_DIR"):
        return os.path.join(environ["NUMBA_CACHE_DIR"], f"gpurules-{tag}")
    base = environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "gpurules", "numba", tag)


def configure():
    """Point Numba's cache at :func:`cache_directory`; call before any module of the
    package defines a cached function. Returns the directory, or None if it could not be
    created (Numba's default applies)."""
    import numba

    directory = cache_directory()
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError:
        return None
    numba.config.CACHE_DIR = directory
    return directory
