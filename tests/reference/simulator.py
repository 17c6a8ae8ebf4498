"""How the isolated checking process runs numba-cuda's simulator
(``NUMBA_ENABLE_CUDASIM=1``): ``cuda_support.run_checks`` calls
:func:`run_threads_one_at_a_time` before the checks. The pytest process never imports it.

The simulator runs every CUDA thread of a block as a Python thread. numba-cuda's (0.30)
``BlockManager.run`` starts them all at once and polls them in a busy loop until each has
returned or reached ``syncthreads``: the simulated threads and the poller take turns at the
GIL, and the poller keeps a second core busy. Run that way, two simulated modules beside a
busy core took 126 s; run one thread at a time (:func:`run_threads_one_at_a_time`), 77 s
(``docs/benchmarks.md``, session 39). With one simulated thread running at any time, the
simulator's ``cuda.shared.array`` (made without a lock at a block's first call) and its
atomics cannot race, and the interpreter's switch interval plays no part.
"""

import threading

import numpy as np


def run_threads_one_at_a_time():
    """Replace ``BlockManager.run`` and ``BlockThread.syncthreads`` of numba-cuda's simulator
    (module docstring): a block's threads run one at a time, each until it reaches
    ``syncthreads`` or returns, and then hands on to the next (:func:`_hand_on`); once every
    thread has, the waiting ones go on again one at a time. One legal order of CUDA's
    semantics (threads between barriers run in no order; no kernel here waits on another
    thread but at a barrier). The first exception aborts the other threads and is raised in
    the launching thread, as in numba-cuda's. One simulated thread runs at any time, so
    none waits for the GIL, and the launching thread sleeps until the block is done.
    Idempotent."""
    from numba.cuda.simulator import kernel

    if getattr(kernel.BlockManager.run, "gpurules_one_at_a_time", False):
        return
    thread_run = kernel.BlockThread.run

    def syncthreads(self):
        if self.abort:
            raise RuntimeError("abort flag set on syncthreads call")
        self.syncthreads_blocked = True
        _hand_on(self._manager)
        self.syncthreads_event.wait()
        self.syncthreads_event.clear()
        if self.abort:
            raise RuntimeError("abort flag set on syncthreads clear")

    def run_thread(self):
        try:
            thread_run(self)  # (stores the thread's exception in self.exception)
        finally:
            self.gpurules_ended = True
            if self.exception:
                self._manager.gpurules_failed = self
                self._manager.gpurules_done.set()
            else:
                _hand_on(self._manager)

    def run(self, grid_point, *args):
        def target():
            self._f(*args)

        threads = [kernel.BlockThread(target, self, grid_point, point, self._debug)
                   for point in np.ndindex(*self._block_dim)]
        for t in threads:
            t.gpurules_ended = False
        self.gpurules_order, self.gpurules_next = threads, 0
        self.gpurules_failed, self.gpurules_done = None, threading.Event()
        _hand_on(self)
        self.gpurules_done.wait()
        failed = self.gpurules_failed
        if failed is not None:
            for t in threads:  # (not joined, as numba-cuda's, to leave them to a debugger)
                t.abort = True
                t.syncthreads_blocked = False
                t.syncthreads_event.set()
            raise failed.exception[0].with_traceback(failed.exception[1])

    kernel.BlockThread.syncthreads = syncthreads
    kernel.BlockThread.run = run_thread
    kernel.BlockManager.run = run
    run.gpurules_one_at_a_time = True


def _hand_on(manager):
    """Let the next thread of ``manager``'s block run (start it, or release it from its
    ``syncthreads``), after the last one of a round the first that has not returned, or
    wake the launching thread when every thread has returned. Called by the one thread
    running (or by the launching thread to begin); it touches nothing after the release."""
    if manager.gpurules_next == len(manager.gpurules_order):
        manager.gpurules_order = [t for t in manager.gpurules_order if not t.gpurules_ended]
        manager.gpurules_next = 0
        if not manager.gpurules_order:
            manager.gpurules_done.set()
            return
    t = manager.gpurules_order[manager.gpurules_next]
    manager.gpurules_next += 1
    if t.ident is None:
        t.start()
    else:
        t.syncthreads_blocked = False
        t.syncthreads_event.set()
