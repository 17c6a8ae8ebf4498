"""Compiling the CPU kernels whose loop over features or examples is ``nb.prange``.

Each such kernel is a :class:`Kernel`: compiled on its first call, in the form the call
needs, and run on as many Numba threads as the caller allows (``threads.thread_limit``):

- the **serial** form (``parallel=False``, its ``prange`` a plain loop) runs whenever the
  call has one thread: the default for small searches and fits (``CpuBackend`` asks
  ``threads.threads_for``) and for ``parallel_*='false'``;
- the **parallel** form (``parallel=True``) is compiled only once a call runs on more than
  one thread.

Compiling a parallel form costs several times a serial one: Numba types a ``prange`` body
twice (once in the enclosing function with an ``int64`` index, once as the gufunc with a
``uint64`` one), and each typing compiles every function the body calls — the per-feature
search with all the inlined head math. A cold first BOOMER fit on emotions compiled for
120 CPU-s with parallel forms only (``docs/benchmarks.md``, "Cold start").

The two forms are copies of the kernel under distinct names (:func:`variant`, suffixes
``serial`` and ``parallel``): Numba's on-disk cache keys a function's entries by its name,
signature and bytecode only, not by the compile flags, so a serial and a parallel
dispatcher of the *same* Python function share cache entries and one silently runs the
other's code (this happened: the "parallel" search ran serially, or the serial one on every
core, depending on which had been compiled first).

A ``prange`` body types its loop index as ``int64`` in the enclosing function and as
``uint64`` in the gufunc, so a function called with the bare index is compiled twice (the
per-feature search: ~30 CPU-s each). The kernels pass ``np.int64(j)``: one signature.

The parallel form was measured 12-35 % faster than a plain ``njit`` of the search kernels
*on one thread* (no-alias arguments in the gufunc let LLVM vectorise the inlined
per-feature search); the serial form here is measured against it in ``docs/benchmarks.md``.

A caveat of the parallel form: Numba's ``workqueue`` threading layer (used only when neither
TBB nor OpenMP is available) does not allow parallel kernels to be launched concurrently
from several Python threads; the ``omp`` and ``tbb`` layers do.
"""

import types

import numba as nb

from gpurules.jit.cache import njit
from gpurules.jit.threads import thread_limit


SERIAL, PARALLEL = False, True


class Kernel:
    """A ``prange`` kernel compiled lazily in a serial and a parallel form (module docstring).

    Args:
        py_func: the kernel's Python function (its loop is ``nb.prange``).
        suffix: an extra name part for several kernels made from one function (e.g. one
            per search they drive); the forms are named ``<qualname>[_<suffix>]_serial``
            and ``..._parallel``.
        constants: globals the forms see in place of the module's (:func:`variant`); a
            ``Kernel`` among them is replaced by its form of the same kind, so a serial
            driver calls serial kernels. Every form also sees ``IN_PARALLEL_FORM`` (a
            constant: True in the parallel form), so code that only splits work among
            threads can stay out of the serial form (Numba drops a branch on a constant
            before typing it, and with it that code's compilation).

    Calling a ``Kernel`` runs the form of ``numba.get_num_threads()``: serial on one
    thread, parallel on more. Jitted code calls a form: bind it with ``constants``.

    A *driver* (a function without a ``prange`` of its own, which calls other kernels:
    ``refine._refine_py``, ``histogram_search._search_py``) compiles both forms with
    ``parallel=False``; its parallel form differs only in calling the parallel forms of the
    kernels it is given, whose own compiled code splits the work among the threads.
    Compiled with ``parallel=True``, a driver gains nothing, and Numba warns its user that
    no transformation for parallel execution was possible (a two-thread histogram fit
    printed that warning on its first fit).
    """

    def __init__(self, py_func, suffix="", **constants):
        self.py_func = py_func
        self.suffix = suffix
        self.constants = constants
        self._forms = {}
        # ``nb.prange`` or a bare ``prange``: the name is among the code's names either way
        self.has_prange = "prange" in py_func.__code__.co_names

    def form(self, parallel):
        """The dispatcher of the parallel (True) or serial (False) form; made on first use,
        compiled on its first call (then cached on disk like any ``cache=True`` function)."""
        parallel = bool(parallel)
        if parallel not in self._forms:
            kind = "parallel" if parallel else "serial"
            name = f"{self.suffix}_{kind}" if self.suffix else kind
            constants = {key: value.form(parallel) if isinstance(value, Kernel) else value
                         for key, value in self.constants.items()}
            copy = variant(self.py_func, name, IN_PARALLEL_FORM=parallel, **constants)
            self._forms[parallel] = njit(parallel=parallel and self.has_prange)(copy)
        return self._forms[parallel]

    def compiled_forms(self):
        """{True/False: dispatcher} of the forms made so far (for tests and the compile
        log)."""
        return dict(self._forms)

    def __call__(self, *args):
        return self.form(nb.get_num_threads() > 1)(*args)

    def run(self, n_threads, *args):
        """Call the kernel on at most ``n_threads`` threads: as ``with
        thread_limit(n_threads): self(*args)``, but one thread calls the serial form
        directly (reading and setting Numba's thread count costs ~3 us a call, as much as a
        refinement step of a small search)."""
        if n_threads <= 1:
            return self.form(SERIAL)(*args)
        with thread_limit(n_threads):
            return self(*args)


def parallel_kernel(py_func, suffix="", **constants):
    """The :class:`Kernel` of ``py_func`` (its loop is ``nb.prange``)."""
    return Kernel(py_func, suffix, **constants)


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
# (``inline="always"``) of the quality functions (today ``forceinline``: compiled apart, as
# callees, and inlined by LLVM) gave every inlined array argument a new
# variable with an atomic incref/decref pair, which its reference-count pruning could not
# remove from the search loops: ~20 pairs per candidate, and the default dense BOOMER fit
# on scene took 14.5 s instead of 5.7 s (bisected to the commit that made the quality
# pluggable). Those functions allocate nothing (a slice copy or ``np.empty`` in them fails
# to compile, which keeps it so); their callers hold the arrays.
#
# What such a function calls without inlining is compiled under its flags, without reference
# counting too, and Numba hands that overload to every later caller of the signature, in
# memory and in the disk cache (keyed by the signature only). A callee that returns an array
# would then make reference-counted callers release references they never got: heap
# corruption. So every callee returning an array is inlined (``kernels.work_views``); the
# test ``test_no_overload_compiled_without_reference_counting_returns_a_reference`` checks
# every compiled overload of the package.
