"""How many Numba threads a parallel CPU phase may use."""

import contextlib
import os

import numba

# Whether a parallel region pays depends on what the pool's idle workers do between regions.
#
# Sleeping workers (OpenMP with OMP_WAIT_POLICY=passive, Numba's workqueue layer) must be
# woken for every region: ~15-75 us on the 2-core VM of docs/benchmarks.md, as much as ~10^5
# visits of a search. A phase then runs in parallel only from MIN_PARALLEL_WORK visits, decided
# per call. Measured: BOOMER on yeast (1,500 examples) with every step parallel took 4.4 s on
# 2 threads, 1.8 s on 1.
MIN_PARALLEL_WORK = 100_000
# Spinning workers (OpenMP's default policy, TBB) enter a region in ~2 us, but only while they
# keep spinning: a fit whose phases switch between one thread and several pays the wake-ups
# again. So the decision is per fit, from the phase's size at full coverage (``fit_work``):
# from MIN_PARALLEL_FIT visits every call of the phase runs in parallel. Measured (2 threads,
# 1,000 rules, synthetic n = 1e4): exact search 8.6 -> 5.9 s, equal-width 12.4 -> 7.2 s.
# Below it (the MULAN sets: yeast 1,500 x 7 sampled features) a fit stays serial: it would
# gain ~25 % but compile the parallel forms, several times the serial ones (jit/variants.py).
MIN_PARALLEL_FIT = 50_000


def workers_sleep():
    """True when the Numba pool's idle workers sleep between parallel regions: the
    ``workqueue`` layer, or OpenMP told so (``OMP_WAIT_POLICY=passive``, ``GOMP_SPINCOUNT=0``);
    False for OpenMP's default policy and TBB. Before the first parallel region of the
    process the layer is not chosen yet; the configured one (or OpenMP) is assumed."""
    try:
        layer = numba.threading_layer()
    except ValueError:  # no parallel region has run yet
        layer = numba.config.THREADING_LAYER
    if layer == "workqueue":
        return True
    if layer == "tbb":
        return False
    policy = os.environ.get("OMP_WAIT_POLICY", "").strip().lower()
    return policy == "passive" or os.environ.get("GOMP_SPINCOUNT", "").strip() == "0"


def threads_for(work, n_threads, fit_work=None):
    """How many of ``n_threads`` threads a phase of ``work`` element visits runs on.

    Args:
        work: int, the visits of this call.
        n_threads: int, the most threads the caller allows.
        fit_work: int or None, the visits of the same phase at full coverage in this fit;
            None for a one-off phase (prediction), decided per call.

    Returns:
        ``n_threads`` or 1: per call from ``MIN_PARALLEL_WORK`` when the workers sleep
        between regions (:func:`workers_sleep`) or ``fit_work`` is None, else per fit from
        ``MIN_PARALLEL_FIT`` (see above).
    """
    if n_threads <= 1:
        return 1
    if fit_work is None or workers_sleep():
        return n_threads if work >= MIN_PARALLEL_WORK else 1
    return n_threads if fit_work >= MIN_PARALLEL_FIT else 1


def team_threads(fit_work, n_threads):
    """How many of ``n_threads`` threads a team (``jit.team``) of a fit has whose searches
    visit ``fit_work`` elements at full coverage: all from ``MIN_PARALLEL_FIT``, else one
    (its helpers spin through the fit, as spinning workers do, whatever the pool's workers
    do between regions)."""
    return n_threads if n_threads > 1 and fit_work >= MIN_PARALLEL_FIT else 1


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
