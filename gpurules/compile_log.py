"""Saying when Numba compiles, so that a first fit is never mistaken for a hang.

The first fit of a configuration compiles its CPU kernels (tens of seconds on a small
machine); later fits, in this process or a new one, load them from Numba's disk cache
(``jit/cache.py``). Numba fires a ``numba:compile`` event only when a dispatcher misses both
its in-memory overloads and the disk cache, so listening to it costs nothing on a warm fit.

:func:`logs_compilation` wraps an estimator's ``fit``: at the first compile it logs (logger
``"gpurules"``, INFO) that kernels are being compiled, and when the fit ends how long the
compiles took. :class:`CompileLog` is the same as a context manager that also keeps the
figures (the demo reports compile and fit time apart).
"""

import functools
import logging
import threading
import time

from numba.core import event

logger = logging.getLogger("gpurules")

STARTING = ("compiling the CPU kernels for this configuration (first fit only; cached "
            "afterwards)...")

_active = threading.local()  # the outermost CompileLog of this thread, if any


class CompileLog(event.Listener):
    """Listens to Numba's compile events while active (``with CompileLog(name):``).

    Attributes (after the block): ``seconds`` and ``cpu_seconds``, wall and process CPU
    time of the outermost compiles; ``compiles``, their number (0 on a warm cache).
    A ``CompileLog`` inside another one of the same thread stays silent: the outer one
    logs and counts.
    """

    def __init__(self, name="gpurules"):
        self.name = name
        self.seconds = self.cpu_seconds = 0.0
        self.compiles = 0
        self._depth = 0
        self._started = None
        self._owner = None  # the thread that entered: other threads' compiles are theirs

    def __enter__(self):
        self._outer = getattr(_active, "log", None) is None
        self._owner = threading.current_thread()
        if self._outer:
            _active.log = self
            event.register("numba:compile", self)
        return self

    def __exit__(self, *exc):
        if self._outer:
            event.unregister("numba:compile", self)
            _active.log = None
            if self.compiles:
                logger.info("%s: compiled the CPU kernels in %.1f s (%d functions; cached "
                            "for the next fits)", self.name, self.seconds, self.compiles)
        return False

    def on_start(self, ev):
        if threading.current_thread() is not self._owner:
            return
        if self._depth == 0:
            if self.compiles == 0:
                logger.info("%s: %s", self.name, STARTING)
            self._started = (time.perf_counter(), time.process_time())
        self._depth += 1

    def on_end(self, ev):
        if threading.current_thread() is not self._owner:
            return
        self._depth -= 1
        if self._depth == 0 and self._started is not None:
            wall, cpu = self._started
            self.seconds += time.perf_counter() - wall
            self.cpu_seconds += time.process_time() - cpu
            self.compiles += 1
            self._started = None


def logs_compilation(fit):
    """Decorator of an estimator's ``fit``: a :class:`CompileLog` named after the estimator
    around it."""
    @functools.wraps(fit)
    def logged_fit(self, *args, **kwargs):
        with CompileLog(type(self).__name__):
            return fit(self, *args, **kwargs)
    return logged_fit
