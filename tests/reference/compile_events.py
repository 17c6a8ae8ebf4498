"""The names of the functions Numba compiles, for probes that run in a fresh process."""

from numba.core import event


def record_compiles():
    """A list that receives the Python name of every function Numba starts compiling from
    now on in this process (its ``numba:compile`` events); the caller clears it."""
    names = []

    class Listener(event.Listener):
        def on_start(self, ev):
            names.append(ev.data["dispatcher"].py_func.__name__)

        def on_end(self, ev):
            pass

    event.register("numba:compile", Listener())
    return names
