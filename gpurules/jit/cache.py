"""Where and how Numba keeps the compiled code of gpurules: :func:`njit`.

Every CPU kernel of the package that compiles on its own (all but the functions Numba
inlines into their callers' IR, ``inline="always"``) is made by :func:`njit` (``numba.njit``
with ``cache=True``, whose cache is :class:`PackageCache`), and every Numba CUDA kernel is
given the same kind of cache by :func:`cache_cuda_kernel` (numba-cuda's ``CUDACache`` with
the package's directory and locks; numba-cuda keeps its own copy of Numba's cache classes,
so both are made by the same class factories). Two things differ from Numba's own
``cache=True``, and neither touches Numba's process-wide configuration, so a user's own
Numba code is cached where it always was:

**A directory per version of the sources.** Numba invalidates a cached function only when
the file that defines it changes. Our kernels inline the learning math from other modules
(``objectives/*`` into the searches, the statistics and the CUDA kernels), so after an edit
of ``objectives/heads.py`` — or an upgrade that changes only such a file — the searches
would keep running the old machine code: silently wrong or slow. Keying the cache
directory by a hash of every source file of the package makes any change start from an
empty cache. The hash also covers Numba's settings that change the machine code but not
its cache's key (:data:`CODEGEN_SETTINGS`: the optimisation level, bounds checks, debug
information), so a process that debugs with ``NUMBA_BOUNDSCHECK=1`` gets checked code and
leaves no slow code behind for the next. The directory is ``$NUMBA_CACHE_DIR/gpurules-<hash>``
when the user set ``NUMBA_CACHE_DIR``, else ``$XDG_CACHE_HOME/gpurules/numba/<hash>``
(``~/.cache`` by default); if it cannot be created, Numba's own locations apply
(``__pycache__`` beside the sources, then its user-wide directory).

**Processes that compile at once cannot corrupt it.** Numba's cache file
(``IndexDataCacheFile``) reads the function's index, adds an entry with the first free
data-file number and writes index and data back, without a lock. Two processes that
compile two signatures of one function at the same time (two pytest-xdist workers, two
Dask or joblib workers on their first fit) both pick number 1: the index then maps one
signature to the other's machine code (or loses one signature), and every later process
that loads it calls compiled code with the wrong argument layout
(``tests/test_jit_cache.py`` shows the lost entry). :class:`LockedCacheFile` holds an
exclusive lock on the cache directory while it saves (index and data) and a shared one
while it loads (``fcntl.flock`` on POSIX, ``msvcrt.locking`` on Windows).

**Inner kernels are cached too.** A kernel loaded from the cache holds the machine code of
everything it calls, so the kernels that only other kernels call (the per-feature searches,
``exact_search._search_feature`` and its twins, their totals, the binning's steps) seemed
not to need a cache of their own. But a process that compiles a new signature of an outer
kernel (a rule loop, a refinement) compiles the inner ones it calls again unless they are
cached themselves, although another process compiled the same signatures before: the test
suite's two workers both compiled 257 (function, signature) pairs (149 CPU-s), 186 of them
more than 30 s after the other worker had (session 57, ``docs/benchmarks.md``); a user's
second configuration does the same.

These classes subclass Numba's cache internals (``numba.core.caching``), which are not a
public API: ``tests/test_jit_cache.py`` checks that every cached kernel uses them.
"""

import contextlib
import functools
import hashlib
import logging
import os
from pathlib import Path

import numba
from numba.core import caching

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None
    import msvcrt

# the gpurules package (this module is gpurules/jit/cache.py): every source file of it keys
# the cache directory, not only those of gpurules/jit
_PACKAGE = Path(__file__).resolve().parent.parent
LOCK_NAME = ".gpurules.lock"


def source_digest(root=_PACKAGE):
    """Hex digest (16 characters) of the names and contents of every ``*.py`` under
    ``root``, in a fixed order."""
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode())
        digest.update(b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


#: Numba's settings that change the machine code it makes but are not part of its cache's
#: key (the signature, the CPU's name and features, the function's bytecode): with them
#: unkeyed, a process with ``NUMBA_BOUNDSCHECK=1`` loaded code compiled without the checks
#: (and checked nothing), and code compiled with ``NUMBA_OPT=0`` slowed every later fit
CODEGEN_SETTINGS = ("OPT", "LOOP_VECTORIZE", "SLP_VECTORIZE", "BOUNDSCHECK",
                    "DEBUGINFO_DEFAULT", "EXTEND_VARIABLE_LIFETIMES")


def codegen_settings(config=None):
    """``((name, value as text), ...)`` of :data:`CODEGEN_SETTINGS` in ``config`` (default:
    ``numba.core.config``, which Numba reads from the ``NUMBA_*`` environment at import)."""
    if config is None:
        from numba.core import config
    return tuple((name, str(int(value)) if name == "OPT" else str(value))
                 for name in CODEGEN_SETTINGS
                 for value in [getattr(config, name, None)])


def cache_directory(environ=os.environ, root=_PACKAGE, settings=None):
    """The cache directory for the sources under ``root`` compiled with Numba's
    ``settings`` (default: :func:`codegen_settings`; see the module docstring)."""
    settings = codegen_settings() if settings is None else settings
    tag = hashlib.sha256(f"{source_digest(root)} {settings!r}".encode()).hexdigest()[:16]
    if environ.get("NUMBA_CACHE_DIR"):
        return os.path.join(environ["NUMBA_CACHE_DIR"], f"gpurules-{tag}")
    base = environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "gpurules", "numba", tag)


@functools.lru_cache(maxsize=None)
def _package_directory():
    """:func:`cache_directory` of this process (the sources are hashed once)."""
    return cache_directory()


def _package_locator(user_provided):
    """A subclass of numba's (or numba-cuda's) locator for a user-given directory,
    ``user_provided``, given :func:`cache_directory` instead of the configured
    ``CACHE_DIR``. ``from_function`` returns None (the next locator applies) when the
    directory cannot be created or written."""

    class PackageLocator(user_provided):
        def __init__(self, py_func, py_file):
            self._py_file = py_file
            self._lineno = py_func.__code__.co_firstlineno
            self._cache_path = os.path.join(_package_directory(),
                                            self.get_suitable_cache_subpath(py_file))

        @classmethod
        def from_function(cls, py_func, py_file):
            # skip the user-provided locator's test of the configured CACHE_DIR
            return super(user_provided, cls).from_function(py_func, py_file)

    PackageLocator.__doc__ = _package_locator.__doc__
    return PackageLocator


def _package_impl(impl, user_provided):
    """A subclass of the cache implementation ``impl`` that locates with
    :func:`_package_locator` first, then with ``impl``'s own locators but
    ``user_provided``."""
    locator = _package_locator(user_provided)
    return type(f"Package{impl.__name__}", (impl,), {
        "_locator_classes": [locator] + [c for c in impl._locator_classes
                                         if c is not user_provided]})


PackageLocator = _package_locator(caching.UserProvidedCacheLocator)
_PackageCacheImpl = _package_impl(caching.CompileResultCacheImpl,
                                  caching.UserProvidedCacheLocator)


@contextlib.contextmanager
def directory_lock(directory, exclusive):
    """Hold a lock on ``directory`` (the file ``LOCK_NAME`` in it) for the block: shared
    (readers) or exclusive (a writer). Blocks until it is granted."""
    with open(os.path.join(directory, LOCK_NAME), "a+b") as f:
        if fcntl is not None:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        else:  # msvcrt has exclusive locks only; LK_LOCK retries for 10 s, then raises
            f.seek(0)
            msvcrt.locking(f.fileno(), msvcrt.LK_LOCK, 1)
        try:
            yield
        finally:
            if fcntl is not None:
                fcntl.flock(f.fileno(), fcntl.LOCK_UN)
            else:
                f.seek(0)
                msvcrt.locking(f.fileno(), msvcrt.LK_UNLCK, 1)


def _locked_cache_file(index_data_file):
    """A subclass of numba's (or numba-cuda's) ``IndexDataCacheFile``: a function's index
    and data files, read and written under :func:`directory_lock`, so that an index entry
    always names its own machine code."""

    class LockedCacheFile(index_data_file):
        def save(self, key, data):
            with directory_lock(self._cache_path, exclusive=True):
                super().save(key, data)

        def load(self, key):
            try:
                with directory_lock(self._cache_path, exclusive=False):
                    return super().load(key)
            except FileNotFoundError:  # the directory was removed since: a miss, as Numba's
                return None

    LockedCacheFile.__doc__ = _locked_cache_file.__doc__
    return LockedCacheFile


LockedCacheFile = _locked_cache_file(caching.IndexDataCacheFile)


def _lock_cache_file(cache, locked):
    """Give ``cache`` (a numba ``Cache``, just made) a ``locked`` cache file in place of its
    own, for the same files."""
    cache._cache_file = locked(cache_path=cache._cache_path,
                               filename_base=cache._impl.filename_base,
                               source_stamp=cache._impl.locator.get_source_stamp())


class PackageCache(caching.FunctionCache):
    """The on-disk cache of a gpurules kernel (module docstring)."""

    _impl_class = _PackageCacheImpl

    def __init__(self, py_func):
        super().__init__(py_func)
        _lock_cache_file(self, LockedCacheFile)


def njit(py_func=None, **options):
    """``numba.njit(cache=True, **options)`` with the package's cache (module docstring).

    Used as ``@njit``, ``@njit(parallel=True)`` or ``njit(inline="always")(function)``;
    returns the dispatcher."""
    if py_func is None:
        return functools.partial(njit, **options)
    dispatcher = numba.njit(**options)(py_func)
    dispatcher._cache = PackageCache(py_func)  # what cache=True does: Dispatcher.enable_caching
    return dispatcher


@functools.lru_cache(maxsize=None)
def _cuda_cache_class():
    """:class:`PackageCache`'s twin for numba-cuda's kernels (``CUDACache``, whose
    locators and cache files are numba-cuda's own copies of Numba's), made on first use:
    importing numba-cuda belongs to the CUDA backend only."""
    from numba.cuda.core import caching as cuda_caching
    from numba.cuda.dispatcher import CUDACache, CUDACacheImpl

    impl = _package_impl(CUDACacheImpl, cuda_caching._UserProvidedCacheLocator)
    locked = _locked_cache_file(cuda_caching.IndexDataCacheFile)

    class CudaPackageCache(CUDACache):
        """The on-disk cache of a gpurules CUDA kernel (the module docstring; a kernel
        compiled for one GPU architecture is kept apart from another's by numba-cuda's
        index key)."""

        _impl_class = impl

        def __init__(self, py_func):
            super().__init__(py_func)
            _lock_cache_file(self, locked)

    return CudaPackageCache


def cache_cuda_kernel(dispatcher):
    """Keep the kernels that numba-cuda compiles for ``dispatcher`` (a ``CUDADispatcher``
    made by ``cuda.jit``, not the simulator's) in the package's cache, as
    ``cuda.jit(cache=True)`` would in numba-cuda's own locations; returns ``dispatcher``.
    Without it every new process compiles every kernel of a fit again (43 s for all of
    them on the H200 of 2026-11-28). A numba-cuda whose cache classes are not where 0.30
    keeps them leaves the kernels uncached, and says so once in an INFO line on the
    ``gpurules.cuda`` logger. A kernel made from a string (``exec``) has no source file to
    key a cache by and is left uncached (numba-cuda would raise)."""
    try:
        cache_class = _cuda_cache_class()
    except (ImportError, AttributeError) as exc:
        _log_uncached(f"{type(exc).__name__}: {exc}")
        return dispatcher
    if not os.path.isfile(dispatcher.py_func.__code__.co_filename):
        return dispatcher  # made from a string (exec): no file to key a cache by
    dispatcher._cache = cache_class(dispatcher.py_func)  # as enable_caching does
    return dispatcher


@functools.lru_cache(maxsize=None)
def _log_uncached(reason):
    logging.getLogger("gpurules.cuda").info(
        "CUDA kernels are compiled in every process (no disk cache for this numba-cuda: %s)",
        reason)
