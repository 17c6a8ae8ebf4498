"""In-process Dask clusters for the tests, without the workers' statistical profiler.

A ``distributed`` worker samples every thread's stack with ``sys._current_frames()`` every
10 ms. On CPython before 3.11.9 (this project's CI has 3.11.7) that call can deadlock the
interpreter (python/cpython#106883): it holds the runtime's thread-list lock while a garbage
collection runs ``distributed``'s gc callback, which may hand the GIL to a thread that is
starting or ending and then waits for that lock while holding the GIL. The simulated CUDA
fits start one Python thread per simulated GPU thread, thousands per fit, so the
simulator's distributed check hung there (seen in session 22 with gdb: the worker's
profiler thread in ``_PyThread_CurrentFrames`` -> GC -> ``_gc_callback`` waiting for the
GIL, the simulator's launcher in ``start_new_thread`` waiting for the lock). The tests do
not read the profiles, so they turn the profiler off."""

import contextlib

import dask
import distributed

NO_PROFILER = {"distributed.worker.profile.enabled": False}


@contextlib.contextmanager
def local_cluster(n_workers):
    """A ``distributed.LocalCluster`` of ``n_workers`` one-thread workers that are threads of
    this interpreter (``processes=False``), with the profiler off (module docstring)."""
    with dask.config.set(NO_PROFILER), \
            distributed.LocalCluster(processes=False, n_workers=n_workers,
                                     threads_per_worker=1, dashboard_address=":0") as cluster:
        yield cluster


@contextlib.contextmanager
def in_process_client(n_workers):
    """A ``distributed.Client`` of :func:`local_cluster` (``n_workers`` in-process workers)."""
    with local_cluster(n_workers) as cluster, distributed.Client(cluster) as client:
        yield client
