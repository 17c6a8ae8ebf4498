"""Every cached CPU kernel has cache entries of its own (``jit/variants.py``)."""

import importlib
import os
import pkgutil
import subprocess
import sys
from pathlib import Path

import numba as nb
import numpy as np
import pytest
from numba.core.registry import CPUDispatcher

import gpurules
from gpurules.jit import cache as _jit_cache
from gpurules.jit.cache import LockedCacheFile, PackageCache
from gpurules.jit.threads import thread_limit
from gpurules.jit.variants import Kernel, variant


def _cached_dispatchers():
    """(module name, attribute, dispatcher) of every cached CPU dispatcher in gpurules
    (the CUDA modules excluded: they need CuPy/numba-cuda)."""
    return [(module, name, disp) for module, name, disp in package_dispatchers()
            if _is_cached(disp)]


def _is_cached(disp):
    """Whether the dispatcher ``disp`` keeps its compiled code on disk."""
    return disp._cache is not None and type(disp._cache).__name__ != "NullCache"


def package_dispatchers():
    """(module name, attribute, dispatcher) of every CPU dispatcher in gpurules, the forms
    of its ``jit.Kernel`` objects included (the CUDA modules excluded: they need
    CuPy/numba-cuda)."""
    found = []
    for info in pkgutil.walk_packages(gpurules.__path__, "gpurules."):
        if ".cuda" in info.name:
            continue
        module = importlib.import_module(info.name)
        values = list(vars(module).items())
        if info.name.endswith("refine"):
            values += [(f"REFINE[{key.__name__}]", k) for key, k in module.REFINE.items()]
        for name, value in values:
            if isinstance(value, Kernel):  # both forms, made (not compiled) here
                values += [(f"{name}.form({p})", value.form(p)) for p in (False, True)]
            elif isinstance(value, tuple):  # e.g. class_histograms' (serial, parallel)
                values += [(f"{name}[{i}]", v) for i, v in enumerate(value)]
            elif isinstance(value, CPUDispatcher):
                found.append((info.name, name, value))
    return found


def test_no_two_cached_kernels_share_cache_entries():
    seen = {}
    for module, name, disp in _cached_dispatchers():
        index = disp._cache._cache_file._index_name
        other = seen.setdefault(index, (module, name, disp))
        assert other[2] is disp, \
            f"{module}.{name} and {other[0]}.{other[1]} share the cache index {index}"
    assert len(seen) > 20


def test_no_cached_kernel_closes_over_a_dispatcher():
    """A closure cell holding a dispatcher pickles with a per-process id: the kernel would
    miss the disk cache in every new process."""
    for module, name, disp in _cached_dispatchers():
        cells = disp.py_func.__closure__ or ()
        assert not any(isinstance(c.cell_contents, nb.core.dispatcher.Dispatcher)
                       for c in cells), f"{module}.{name}"


def _driver(x):
    return _KERNEL(x) + 1  # noqa: F821 (bound by variant)


def test_variants_bind_their_own_constants_and_cache_entries():
    double = nb.njit(lambda x: 2 * x)
    square = nb.njit(lambda x: x * x)
    a = nb.njit(cache=True)(variant(_driver, "double", _KERNEL=double))
    b = nb.njit(cache=True)(variant(_driver, "square", _KERNEL=square))
    assert a(np.int64(5)) == 11 and b(np.int64(5)) == 26
    assert a._cache._cache_file._index_name != b._cache._cache_file._index_name
    assert a.py_func.__qualname__ == "_driver_double"


def _column_sums(x, out):
    for j in nb.prange(x.shape[1]):
        total = 0.0
        for i in range(x.shape[0]):
            total += x[i, j]
        out[j] = total


def test_kernel_forms_have_their_own_cache_entries_and_agree():
    kernel = Kernel(_column_sums, "test")
    serial, parallel = kernel.form(False), kernel.form(True)
    assert serial.py_func.__qualname__ == "_column_sums_test_serial"
    assert serial._cache._cache_file._index_name != parallel._cache._cache_file._index_name
    assert not serial.targetoptions.get("parallel")
    assert parallel.targetoptions.get("parallel")
    x = np.random.default_rng(0).random((50, 7))
    a, b = np.empty(7), np.empty(7)
    serial(x, a)
    parallel(x, b)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, x.sum(0))


_SUMS = None  # bound per driver (``variant``)


def _sums_driver(x, out):
    _SUMS(x, out)
    return out.sum()


def test_a_driver_compiles_without_parallel_and_calls_the_parallel_kernel():
    """A driver (no ``prange`` of its own) compiles both forms without ``parallel``, so
    Numba has no parallel transformation to warn about; its parallel form calls the
    kernel's parallel form, which splits the work. The package's drivers are such
    kernels, and every kernel with a ``prange`` compiles its parallel form in parallel."""
    import warnings

    from numba.core.errors import NumbaPerformanceWarning

    from gpurules.backends.cpu import histogram_search, refine

    columns = Kernel(_column_sums, "driven")
    driver = Kernel(_sums_driver, "test", _SUMS=columns)
    assert not driver.has_prange and columns.has_prange
    x = np.random.default_rng(1).integers(0, 10, (40, 5)).astype(np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("error", NumbaPerformanceWarning)
        got = driver.form(True)(x, np.empty(5))
    assert not driver.form(True).targetoptions.get("parallel")
    assert columns.form(True).targetoptions.get("parallel")
    assert driver.form(True).py_func.__globals__["_SUMS"] is columns.form(True)
    assert got == x.sum()
    drivers = [histogram_search.search, *refine.REFINE.values()]
    assert not any(kernel.has_prange for kernel in drivers)
    kernels = [value for module in list(sys.modules.values())
               if module is not None and module.__name__.startswith("gpurules.")
               for value in vars(module).values() if isinstance(value, Kernel)]
    assert sum(kernel.has_prange for kernel in kernels) >= 8


def test_a_one_thread_call_compiles_only_the_serial_form():
    kernel = Kernel(_column_sums, "one_thread")
    with thread_limit(1):
        kernel(np.ones((3, 2)), np.empty(2))
    assert kernel.form(False).signatures
    assert not kernel.form(True).signatures


def test_every_cached_kernel_uses_the_package_cache():
    """No cached kernel uses Numba's own cache: its directory is not keyed by our sources
    and its index is not locked against concurrent compiles (``jit/cache.py``)."""
    dispatchers = _cached_dispatchers()
    assert len(dispatchers) > 20
    for module, name, disp in dispatchers:
        assert isinstance(disp._cache, PackageCache), f"{module}.{name}"
        assert isinstance(disp._cache._cache_file, LockedCacheFile), f"{module}.{name}"
        assert disp._cache.cache_path.startswith(_jit_cache._package_directory())


def test_every_kernel_compiled_on_its_own_is_cached():
    """Inner kernels too (the per-feature searches, their totals, the binning's steps): a
    process that compiles a new signature of an outer kernel loads the inner ones another
    process compiled instead of compiling them again (``jit/cache.py``). Only the kernels
    that Numba inlines into their callers' IR compile nothing on their own."""
    uncached = [f"{module}.{name}" for module, name, disp in package_dispatchers()
                if disp.targetoptions.get("inline", "never") == "never"
                and not _is_cached(disp)]
    assert uncached == []


def test_importing_gpurules_leaves_numbas_cache_setting_alone(tmp_path):
    code = ("import numba, gpurules, gpurules.backends.cpu.backend; "
            "print(repr(numba.config.CACHE_DIR))")
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["XDG_CACHE_HOME"] = str(tmp_path)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True).stdout
    assert out.strip() == "''"


_CHILD = """
import os, sys, time
from numba.core import caching
from gpurules.jit import cache as _jit_cache

save_index = caching.IndexDataCacheFile._save_index

def slow_save_index(self, overloads):  # widen the read-modify-write window of the index
    time.sleep(1.0)
    save_index(self, overloads)

caching.IndexDataCacheFile._save_index = slow_save_index
if os.environ.get("UNLOCKED"):  # to see this test fail without the lock
    import contextlib
    _jit_cache.directory_lock = lambda directory, exclusive: contextlib.nullcontext()
sys.path.insert(0, sys.argv[1])
import added
open(os.path.join(sys.argv[1], "ready-" + sys.argv[2]), "w").close()
while len([f for f in os.listdir(sys.argv[1]) if f.startswith("ready-")]) < 2:
    time.sleep(0.01)
arg = 1 if sys.argv[2] == "int" else 1.5
print(added.add(arg, arg))
"""

_CHECK = """
import sys
sys.path.insert(0, sys.argv[1])
import added
print(added.add(1, 1), added.add(1.5, 1.5), added.add._cache_hits.total())
"""


def test_processes_compiling_one_kernel_at_once_keep_each_signature_its_own_code(tmp_path):
    """Two processes save two signatures of one function at the same time; a third loads
    both. Without the lock both pick data file 1: one signature's entry is lost or, in
    another interleaving, runs the other's code (``UNLOCKED=1`` in the environment drops
    the lock in the children: this test then fails)."""
    (tmp_path / "added.py").write_text(
        "from gpurules.jit.cache import njit\n\n\n@njit\ndef add(a, b):\n    return a + b\n")
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    children = [subprocess.Popen([sys.executable, "-c", _CHILD, str(tmp_path), kind],
                                 env=env, stdout=subprocess.PIPE, text=True)
                for kind in ("int", "float")]
    outputs = [child.communicate(timeout=120)[0].split() for child in children]
    assert outputs == [["2"], ["3.0"]]
    check = subprocess.run([sys.executable, "-c", _CHECK, str(tmp_path)], env=env,
                           capture_output=True, text=True, check=True)
    assert check.stdout.split() == ["2", "3.0", "2"]  # both loaded from the cache, right


def test_the_cache_directory_follows_every_source_file_of_the_package(tmp_path):
    """The directory key hashes all of gpurules, not only ``gpurules/jit`` (where this module
    lives since session 9): an edit of ``objectives/quality.py``, which the searches inline,
    must start from an empty cache. (With the key over ``jit/`` alone, an edited single-head
    rule kept running the cached old search.)"""
    import shutil

    import gpurules
    from gpurules.jit import cache

    package = Path(gpurules.__file__).resolve().parent
    assert cache._PACKAGE == package
    copy = tmp_path / "gpurules"
    shutil.copytree(package, copy, ignore=shutil.ignore_patterns("__pycache__"))
    before = cache.source_digest(copy)
    quality = copy / "objectives" / "quality.py"
    quality.write_text(quality.read_text() + "\n# an edit\n")
    assert cache.source_digest(copy) != before
    environ = {"NUMBA_CACHE_DIR": str(tmp_path / "nb")}
    assert cache.cache_directory(environ, copy) != cache.cache_directory(environ, package)


_OUT_OF_BOUNDS = """
import sys
import numpy as np
sys.path.insert(0, sys.argv[1])
import reader
try:
    print(reader.read(np.zeros(3), 4))
except IndexError:
    print("IndexError")
"""


def test_bounds_checks_are_not_loaded_from_a_cache_made_without_them(tmp_path):
    """Numba's cache keys no setting that changes the code (``cache.CODEGEN_SETTINGS``):
    a process with ``NUMBA_BOUNDSCHECK=1`` after one without it loaded the unchecked code
    and read past the array. The package's directory is keyed by them, so it compiles
    checked code, and a process without the checks after it loads none of it."""
    (tmp_path / "reader.py").write_text(
        "from gpurules.jit.cache import njit\n\n\n@njit\ndef read(a, i):\n"
        "    return a[i]\n")
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "nb"),
               PYTHONPATH=os.pathsep.join([str(Path(gpurules.__file__).parents[1])]
                                          + sys.path))
    env.pop("NUMBA_BOUNDSCHECK", None)

    def run(**settings):
        out = subprocess.run([sys.executable, "-c", _OUT_OF_BOUNDS, str(tmp_path)],
                             env=dict(env, **settings), capture_output=True, text=True,
                             check=True, timeout=120)
        return out.stdout.strip()

    assert run() != "IndexError"  # (no checks: whatever lies past the array)
    assert run(NUMBA_BOUNDSCHECK="1") == "IndexError"
    assert run() != "IndexError"
    assert len(list((tmp_path / "nb").glob("gpurules-*"))) == 2


def test_the_cache_directory_follows_numbas_code_settings():
    """:func:`cache.cache_directory` differs when any one of
    :data:`cache.CODEGEN_SETTINGS` differs; its default is this process's settings, the
    level as Numba read it from ``NUMBA_OPT``."""
    from types import SimpleNamespace

    from gpurules.jit import cache

    environ = {"NUMBA_CACHE_DIR": "/nb"}
    default = cache.codegen_settings()
    assert dict(default)["OPT"] == str(int(nb.core.config.OPT))
    directories = {cache.cache_directory(environ, settings=default)}
    for name in cache.CODEGEN_SETTINGS:
        values = {n: getattr(nb.core.config, n) for n in cache.CODEGEN_SETTINGS}
        changed = cache.codegen_settings(SimpleNamespace(**dict(values, **{name: 7})))
        directories.add(cache.cache_directory(environ, settings=changed))
    assert len(directories) == len(cache.CODEGEN_SETTINGS) + 1
    assert cache.cache_directory(environ) == cache.cache_directory(environ, settings=default)


def test_kernel_run_uses_the_serial_form_on_one_thread(monkeypatch):
    """``Kernel.run(1, ...)`` calls the serial form without touching Numba's thread count;
    more threads run under ``thread_limit`` (the parallel form where Numba has them)."""
    import numba

    from gpurules.jit import variants

    calls = []
    kernel = variants.Kernel(lambda x: x)
    monkeypatch.setattr(kernel, "form", lambda parallel: (lambda x: calls.append(parallel)))
    monkeypatch.setattr(numba, "set_num_threads",
                        lambda n: (_ for _ in ()).throw(AssertionError("set_num_threads")))
    kernel.run(1, 0)
    assert calls == [False]
    monkeypatch.undo()
    monkeypatch.setattr(kernel, "form", lambda parallel: (lambda x: calls.append(parallel)))
    kernel.run(2, 0)
    assert calls == [False, numba.config.NUMBA_NUM_THREADS > 1]


IN_PARALLEL_FORM = None  # bound per form by Kernel (the test below)


def _which_form(x):
    if IN_PARALLEL_FORM:
        return x + 1
    return x - 1


@pytest.mark.filterwarnings("ignore::numba.core.errors.NumbaPerformanceWarning")  # no prange
def test_each_form_sees_which_it_is():
    """Every form of a ``Kernel`` sees the constant ``IN_PARALLEL_FORM`` (code that only
    splits work among threads is compiled in the parallel form alone: Numba drops the
    other branch before typing it)."""
    kernel = Kernel(_which_form, "which_form")
    assert kernel.form(False)(10) == 9
    assert kernel.form(True)(10) == 11


def test_a_numba_cuda_without_the_cache_classes_leaves_kernels_uncached(monkeypatch, caplog):
    """``cache_cuda_kernel`` on a numba-cuda whose cache classes moved: the kernel keeps its
    own (no) cache and an INFO line says why, once."""
    import logging
    import types

    def moved():
        raise ImportError("no module named 'numba.cuda.core.caching' (test)")

    monkeypatch.setattr(_jit_cache, "_cuda_cache_class", moved)
    kernels = [types.SimpleNamespace(py_func=len, _cache="own") for _ in range(2)]
    with caplog.at_level(logging.INFO, logger="gpurules.cuda"):
        assert [_jit_cache.cache_cuda_kernel(k) for k in kernels] == kernels
    assert [k._cache for k in kernels] == ["own", "own"]
    lines = [r.getMessage() for r in caplog.records if "no disk cache" in r.getMessage()]
    assert len(lines) == 1 and "numba.cuda.core.caching' (test)" in lines[0]
