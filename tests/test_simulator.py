"""``tests/reference/simulator.py``, the way the isolated simulator process runs a block's
threads (one at a time), checked in such a process (``python -m tests.test_simulator``
with ``NUMBA_ENABLE_CUDASIM=1``, as ``test_cuda_simulator.py``): the replacement is
installed, barriers, an early return and an exception behave as CUDA (and numba-cuda's own
simulator) has them."""

import numpy as np

from tests.reference.cuda_support import run_simulated_checks, simulated_tests


def threads_one_at_a_time_keep_barriers_and_errors():
    """``tests/reference/simulator.py``'s way of running a block: each thread reads what the
    others wrote before a barrier (two rounds, a thread returning early between them), and a
    thread's exception reaches the launch, the others aborted."""
    global cuda  # a global of the kernel's module, which the simulator swaps for its own
    from numba import cuda, int64
    from numba.cuda.simulator import kernel

    assert kernel.BlockManager.run.gpurules_one_at_a_time

    @cuda.jit
    def rotate(out, fail):
        shared = cuda.shared.array(8, int64)
        t = cuda.threadIdx.x
        shared[t] = t
        cuda.syncthreads()
        out[t] = shared[(t + 1) % 8]
        cuda.syncthreads()
        if t == 7:
            return
        shared[t] = 10 * out[t]
        cuda.syncthreads()
        out[t] += shared[(t + 2) % 7]
        if t == fail:
            raise ValueError("thread 3")

    out = np.zeros(8, np.int64)
    rotate[1, 8](out, -1)
    expected = np.arange(1, 9) % 8
    expected[:7] += 10 * expected[(np.arange(7) + 2) % 7]
    np.testing.assert_array_equal(out, expected)
    try:
        rotate[1, 8](out, 3)
    except ValueError as error:
        assert "thread 3" in str(error)
    else:
        raise AssertionError("no ValueError")


CHECKS = {"threads_one_at_a_time_keep_barriers_and_errors":
          threads_one_at_a_time_keep_barriers_and_errors}
simulator_results, test_under_simulator = simulated_tests(__name__, CHECKS)


if __name__ == "__main__":
    run_simulated_checks(CHECKS)
