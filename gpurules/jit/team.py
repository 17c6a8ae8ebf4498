"""A team of threads: a leader runs a compiled loop, helpers take the tasks it publishes.

Each ``prange`` region wakes the pool's idle workers, and with sleeping workers (OpenMP
with ``OMP_WAIT_POLICY=passive``, the comparisons' setting) that costs 55-88 us on the 2-core
VM of ``docs/benchmarks.md``: as much as a small search, so a rule loop that opened a region
per search gained nothing from a second thread (sessions 35 and 37). A team is started once
for a whole batch of rules instead (:func:`run`): the calling thread runs the *leader*, a
compiled loop that, where it has independent tasks (the features of a search), *publishes*
a phase of them and takes them one at a time itself; each *helper* (a Python thread running
a compiled loop without the GIL) spins until a phase is open and takes its tasks the same
way. The leader waits only for tasks a helper has taken, never for a helper to arrive: a
helper that starts late, or not at all, only means the leader does more itself. Which thread
runs a task changes nothing in its result: tasks write their own slots and the leader reads
them in order, so a team's model is the serial loop's, bit for bit. (The threads are Python
threads, not Numba's pool: a ``prange`` region over the team passes the loop's variables to
its body one by one, and cannot pass tuples that hold arrays.)

The state is an int64 array of :data:`STATE_SIZE` (:func:`new_state`), its counters on
cache lines of their own. ``CLAIM`` holds the phase's generation times :data:`SPAN` plus the
number of its tasks taken: a helper takes task ``c`` by a compare-and-exchange of that word,
so a helper that read a finished phase can never take a task of the next one. The leader
opens a phase by first closing the word under the new generation, then writing the task
count, then opening the word: a helper that found the word open then reads that phase's
count (:func:`publish`).

A helper spins while the leader works alone (the rule's head, the statistics update): its
core is busy for the whole batch, so a team is for fits large enough to gain from it
(``backends/cpu/backend.py`` decides).
"""

import threading

import numba as nb
import numpy as np

from gpurules.jit.atomics import (compare_exchange, fetch_add, load_acquire, spin_pause,
                                  store_release)

SPAN = 1 << 32  # the generation's unit in CLAIM (tasks of a phase: fewer than _CLOSED)
_CLOSED = SPAN - 1  # CLAIM's count while the leader opens a phase: no task to take
_CLAIM, _DONE, _TASKS, _STOPPED = 0, 8, 16, 24  # one cache line each
STATE_SIZE = 32
NO_TASK, STOPPED = -1, -2  # what :func:`offered` returns besides a task


def new_state():
    """A team's state: int64 (STATE_SIZE,), no phase open, the leader not stopped."""
    return np.zeros(STATE_SIZE, np.int64)


class _Seats:
    """The threads of the process's running teams, leaders and helpers, against the cores
    (Numba's thread count): a team gets only the helpers the cores have room for, so fits
    run at once in several Python threads (a thread pool, joblib's threading backend)
    never have more threads spinning than there are cores. A bound, not a measured
    speed-up (session 42's comparison had measured one checkout against itself;
    docs/benchmarks.md, session 43)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._taken = 0

    @staticmethod
    def cores():
        """The seats: Numba's thread count (``NUMBA_NUM_THREADS``, the cores by default)."""
        return nb.config.NUMBA_NUM_THREADS

    def take(self, threads):
        """Seat a new team's leader and up to ``threads - 1`` helpers; returns the helpers
        seated (give all back with :meth:`give_back`)."""
        with self._lock:
            helpers = max(0, min(threads - 1, self.cores() - self._taken - 1))
            self._taken += 1 + helpers
            return helpers

    def give_back(self, helpers):
        """Free the seats of a team's leader and its ``helpers``."""
        with self._lock:
            self._taken -= 1 + helpers


SEATS = _Seats()


def run(state, threads, leader, leader_args, helper, helper_args):
    """``leader(*leader_args)`` on this thread with up to ``threads - 1`` helper threads
    running ``helper(*helper_args)`` (both compiled without the GIL: ``nogil=True``),
    fewer while other teams of the process hold the cores (:data:`SEATS`); returns the
    leader's result. The helpers are told to stop once the leader returns or raises, and
    joined."""
    seated = SEATS.take(threads)
    started = []
    try:
        for k in range(1, 1 + seated):
            thread = threading.Thread(target=helper, args=helper_args, daemon=True,
                                      name=f"gpurules-team-{k}")
            thread.start()
            started.append(thread)
        return leader(*leader_args)
    finally:
        state[_STOPPED] = 1  # (a plain store: the helpers read it atomically)
        for thread in started:
            thread.join()
        SEATS.give_back(seated)


@nb.njit(inline="always")
def publish(state, tasks):
    """Leader: open a phase of ``tasks`` tasks, after writing what they read; returns the
    phase's generation (for :func:`take`)."""
    generation = load_acquire(state, _CLAIM) // SPAN + 1
    # first close the last phase: a helper that read its word and then this phase's task
    # count could otherwise take an index past the last phase's tasks, by a
    # compare-and-exchange that still finds that word (a test ran such a task twice)
    store_release(state, _CLAIM, generation * SPAN + _CLOSED)
    store_release(state, _TASKS, tasks)
    store_release(state, _DONE, 0)
    store_release(state, _CLAIM, generation * SPAN)
    return generation


@nb.njit(inline="always")
def take(state, generation):
    """Leader: the index of a task of the open phase it takes (``>=`` the phase's tasks:
    none left)."""
    return fetch_add(state, _CLAIM, 1) - generation * SPAN


@nb.njit(inline="always")
def finish(state, tasks, done):
    """Leader: count the ``done`` tasks it ran and wait until the phase's ``tasks`` are all
    done (the helpers' results then visible to it)."""
    fetch_add(state, _DONE, done)
    while load_acquire(state, _DONE) < tasks:
        spin_pause()


@nb.njit(inline="always")
def offered(state):
    """Helper: take a task of the open phase: its index, or NO_TASK (none open now: spin
    and ask again) or STOPPED (the leader returned: leave)."""
    word = load_acquire(state, _CLAIM)
    task = word % SPAN
    if word >= SPAN and task < load_acquire(state, _TASKS):
        if compare_exchange(state, _CLAIM, word, word + 1):
            return task
        return NO_TASK
    if load_acquire(state, _STOPPED) != 0:
        return STOPPED
    spin_pause()
    return NO_TASK


@nb.njit(inline="always")
def done(state):
    """Helper: count a task it took as done (after writing its results)."""
    fetch_add(state, _DONE, 1)
