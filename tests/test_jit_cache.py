"""Every cached CPU kernel has cache entries of its own (``backends/cpu/jit.py``)."""

import importlib
import pkgutil

import numba as nb
import numpy as np
from numba.core.registry import CPUDispatcher

import gpurules
from gpurules.backends.cpu.jit import variant


def _cached_dispatchers():
    """(module name, attribute, dispatcher) of every cached CPU dispatcher in gpurules
    (the CUDA modules excluded: they need CuPy/numba-cuda)."""
    found = []
    for info in pkgutil.walk_packages(gpurules.__path__, "gpurules."):
        if ".cuda" in info.name:
            continue
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if isinstance(value, CPUDispatcher) and value._cache is not None and \
                    type(value._cache).__name__ != "NullCache":
                found.append((info.name, name, value))
        if info.name.endswith("refine"):
            found += [(info.name, f"REFINE[{key}]", d) for key, d in module.REFINE.items()]
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
