"""How the isolated checking process runs numba-cuda's simulator
(``NUMBA_ENABLE_CUDASIM=1``): ``cuda_support.run_checks`` calls
:func:`run_threads_one_at_a_time` before the checks. The pytest process never imports it.

numba-cuda's (0.30) simulator runs every CUDA thread of a block as an operating-system
thread: ``BlockManager.run`` starts them all at once and polls them in a busy loop until
each has returned or reached ``syncthreads``. Run that way, two simulated modules beside a
busy core took 126 s. Session 39 ran the threads one at a time, each handing on to the next
(77 s); even so, a new OS thread per simulated thread cost about 0.1 ms and each hand-over
at a barrier about 30 us (a block of 32 threads: 3.7 ms without a barrier, 7.5 ms with four),
and the simulated checks run hundreds of thousands of both (``docs/benchmarks.md``, session
58).

Here every simulated thread of a block is a *greenlet* (the ``greenlet`` package: stacks
switched within one OS thread, a switch about a microsecond) run by the launching thread,
one at a time: each runs until it reaches ``syncthreads`` (which switches back to the
launching thread) or returns, in thread order, then the waiting ones go on again in the
same order, round after round. That is one legal order of CUDA's semantics (threads
between barriers run in no order; no kernel here waits on another thread but at a
barrier). No two simulated threads ever run at once, so the simulator's unlocked
``cuda.shared.array`` and its atomics cannot race.

numba-cuda's simulator reads a thread's ``threadIdx``, ``blockIdx``, lane and barriers from
``threading.current_thread()``; here ``FakeCUDAModule``'s properties and barrier functions
read the simulated thread that runs (:data:`_RUNNING`). ``cuda.shared.array`` identifies an
array by its caller's file and line, found from a whole extracted stack at every call;
:func:`_shared_array` reads the caller's frame only, the same key.
"""

import functools
import sys

import numpy as np

_RUNNING = [None]  # the _Simulated thread running, None between them


def run_threads_one_at_a_time():
    """Make numba-cuda's simulator run a block's threads as greenlets, one at a time
    (module docstring). The first exception of a thread is raised in the launching thread
    with the thread's and block's indices in its message, as numba-cuda's; the block's other
    threads are not run further. ``cuda.jit(debug=True)``'s NumPy divide errors are not
    raised (no kernel here is compiled with ``debug``). Idempotent."""
    from numba.cuda.simulator import kernel, kernelapi

    if getattr(kernel.BlockManager.run, "gpurules_one_at_a_time", False):
        return
    module = kernelapi.FakeCUDAModule
    module.threadIdx = property(lambda self: _RUNNING[0].thread_index)
    module.blockIdx = property(lambda self: _RUNNING[0].block_index)
    module.laneid = property(lambda self: _RUNNING[0].thread_id % 32)
    module.syncthreads = lambda self: _barrier()
    module.syncthreads_count = lambda self, value: _vote(value, np.count_nonzero)
    module.syncthreads_and = lambda self, value: _vote(value, lambda v: int(np.all(v)))
    module.syncthreads_or = lambda self, value: _vote(value, lambda v: int(np.any(v)))
    kernelapi.FakeCUDAShared.array = _shared_array(kernelapi.FakeCUDAShared.array)

    def run(self, grid_point, *args):
        _run_block(self, kernelapi.Dim3, grid_point, args)

    kernel.BlockManager.run = run
    run.gpurules_one_at_a_time = True


class _Simulated:
    """One simulated thread of a block: its indices (``Dim3``), its linear index in the
    block and its greenlet."""

    __slots__ = ("manager", "block_index", "thread_index", "thread_id", "greenlet")

    def __init__(self, manager, block_index, thread_index, greenlet):
        self.manager, self.block_index, self.thread_index = manager, block_index, thread_index
        x, y, z = thread_index
        self.thread_id = x + manager._block_dim[0] * (y + manager._block_dim[1] * z)
        self.greenlet = greenlet


def _run_block(manager, dim3, grid_point, args):
    """Run the block at ``grid_point`` of ``manager`` (numba-cuda's ``BlockManager``: the
    kernel ``_f``, ``_block_dim``, ``block_state``) with ``args``, round after round."""
    import greenlet

    block_index = dim3(*grid_point)
    kernel = functools.partial(manager._f, *args)
    threads = [_Simulated(manager, block_index, dim3(*point), greenlet.greenlet(kernel))
               for point in np.ndindex(*manager._block_dim)]
    while threads:
        for simulated in threads:
            _RUNNING[0] = simulated
            try:
                simulated.greenlet.switch()
            except Exception as error:
                raise _located(error, simulated).with_traceback(sys.exc_info()[2]) from None
            finally:
                _RUNNING[0] = None
        threads = [simulated for simulated in threads if not simulated.greenlet.dead]


def _barrier():
    """``cuda.syncthreads()``: the running thread waits for the block's next round."""
    _RUNNING[0].greenlet.parent.switch()


def _vote(value, count):
    """``cuda.syncthreads_count``/``_and``/``_or``: ``count`` of the block's ``value``s,
    after every thread has given its own (numba-cuda's ``block_state``)."""
    simulated = _RUNNING[0]
    state = simulated.manager.block_state
    state[tuple(simulated.thread_index)] = value
    _barrier()
    result = count(state)
    _barrier()
    return result


def _located(error, simulated):
    """``error`` with the thread and block in its message, as numba-cuda's
    ``BlockThread.run`` reports it."""
    where = f"tid={list(simulated.thread_index)} ctaid={list(simulated.block_index)}"
    return type(error)(where if str(error) == "" else f"{where}: {error}")


def _shared_array(array):
    """``FakeCUDAShared.array`` keyed by its caller's file and line read from the caller's
    frame, not from an extracted stack (module docstring); dynamic shared memory (shape 0)
    and an alignment go to the simulator's own."""
    def shared_array(self, shape, dtype, alignment=None):
        if shape == 0 or alignment is not None:
            return array(self, shape, dtype, alignment)
        from numba.core import types
        from numba.np import numpy_support

        if isinstance(dtype, types.Type):
            dtype = numpy_support.as_dtype(dtype)
        caller = sys._getframe(1)
        key = (caller.f_code.co_filename, caller.f_lineno)
        made = self._allocations.get(key)
        if made is None:
            made = self._allocations[key] = np.empty(shape, dtype)
        return made

    return shared_array
