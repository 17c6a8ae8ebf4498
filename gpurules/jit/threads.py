"""How many Numba threads a parallel CPU phase may use."""

import contextlib

import numba

# Below this many element visits a parallel phase runs on one thread (and the serial form of
# its kernel, ``jit.Kernel``, which is also the cheaper one to compile): waking the pool for
# a parallel region costs ~10-100 us on a loaded machine (OpenMP with
# OMP_WAIT_POLICY=passive sleeps between regions), as much as ~10^5 visits. Measured:
# BOOMER on scene (1,211 examples, 9 sampled features) took 4.2 s on 2 threads, 3.4 s on 1.
MIN_PARALLEL_WORK = 100_000


def threads_for(work, n_threads):
    """``n_threads`` for a phase of ``work`` element visits, or 1 below
    ``MIN_PARALLEL_WORK``."""
    return n_threads if work >= MIN_PARALLEL_WORK else 1


@contextlib.contextmanager
def thread_limit(n_threads):
    """Run the enclosed Numba parallel code on at most ``n_threads`` threads."""
    n = max(1, min(int(n_threads), numba.config.NUMBA_NUM_THREADS))
    previous = numba.get_num_threads()
    numba.set_num_threads(n)
    try:
        yield
    finally:
        numba.set_num_threads(previous)
