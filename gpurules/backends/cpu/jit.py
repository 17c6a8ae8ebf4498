"""Compiling the CPU kernels whose loop over features or examples is ``nb.prange``.

Each such kernel is compiled once, with ``parallel=True``, and run on as many Numba threads
as the caller allows (``threads.thread_limit``; one thread for the "serial" setting):

- Numba's on-disk cache keys a function's entries by its name, signature and bytecode only,
  not by the compile flags, so a serial and a parallel dispatcher of the *same* Python
  function share cache entries and one silently runs the other's code (this happened: the
  "parallel" search ran serially, or the serial one on every core, depending on which had
  been compiled first).
- The parallel form is also the faster one on a single thread (the search kernels by
  12-35 % on yeast, scene and emotions): Numba compiles the body of a ``prange`` loop with
  no-alias arguments, which LLVM uses when it inlines the per-feature search.
- One form instead of two halves the compile time of a cold cache.

A caveat of the parallel form: Numba's ``workqueue`` threading layer (used only when neither
TBB nor OpenMP is available) does not allow parallel kernels to be launched concurrently
from several Python threads; the ``omp`` and ``tbb`` layers do.
"""

import types

import numba as nb


def parallel_kernel(py_func):
    """The cached ``parallel=True`` dispatcher of ``py_func`` (its loop is ``nb.prange``)."""
    return nb.njit(cache=True, parallel=True)(py_func)


def variant(py_func, suffix, **constants):
    """A copy of ``py_func`` named ``<qualname>_<suffix>`` whose globals are the module's
    plus ``constants``, for a driver compiled once per kernel it calls (the constants).

    A closure over the kernels would do the same but miss the cache in every new process:
    Numba keys a closure's cache entries by its pickled cells, and a dispatcher pickles with
    a per-process random id. The copy's own name gives it cache entries of its own; its
    globals are a snapshot taken now."""
    glb = dict(py_func.__globals__)
    glb.update(constants)
    copy = types.FunctionType(py_func.__code__, glb, f"{py_func.__name__}_{suffix}",
                              py_func.__defaults__, py_func.__closure__)
    copy.__qualname__ = f"{py_func.__qualname__}_{suffix}"
    copy.__module__ = py_func.__module__
    copy.__doc__ = py_func.__doc__
    return copy


# Reference counting: the per-feature search functions (``exact_search._search_feature``,
# ``histogram_search._scan_feature``, ``sparse_search._search_sparse_feature`` and
# ``exact_search._evaluate``) are compiled with ``_nrt=False``. Numba's IR-level inlining
# (``inline="always"``) of the quality functions gives every inlined array argument a new
# variable with an atomic incref/decref pair, which its reference-count pruning could not
# remove from the search loops: ~20 pairs per candidate, and the default dense BOOMER fit
# on scene took 14.5 s instead of 5.7 s (bisected to the commit that made the quality
# pluggable). Those functions allocate nothing (a slice copy or ``np.empty`` in them fails
# to compile, which keeps it so); their callers hold the arrays.
