"""How many Numba threads a parallel CPU phase may use."""

import contextlib

import numba


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
