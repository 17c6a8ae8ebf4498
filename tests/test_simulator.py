"""``tests/reference/simulator.py``, the way the isolated simulator process runs a block's
threads (greenlets, one at a time), checked in such a process (``python -m
tests.test_simulator`` with ``NUMBA_ENABLE_CUDASIM=1``, as ``test_cuda_simulator.py``): the
replacement is installed; barriers, votes, an early return, a thread's indices and an
exception behave as CUDA (and numba-cuda's own simulator) has them."""

import numpy as np

from tests.reference.cuda_support import run_simulated_checks, simulated_tests


def threads_one_at_a_time_keep_barriers_and_errors():
    """``tests/reference/simulator.py``'s way of running a block: each thread reads what the
    others wrote before a barrier (two rounds, a thread returning early between them), and a
    thread's exception reaches the launch with the thread's and block's indices, the others
    run no further."""
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
        assert "tid=[3, 0, 0] ctaid=[0, 0, 0]: thread 3" in str(error)
    else:
        raise AssertionError("no ValueError")


def votes_and_indices_per_thread():
    """``syncthreads_count``, ``_and`` and ``_or`` count every thread's value of the block
    (two blocks of 2 x 3 threads), and each thread reads its own indices and lane."""
    global cuda
    from numba import cuda

    @cuda.jit
    def vote(out):
        t = cuda.threadIdx.x + 2 * cuda.threadIdx.y
        b = cuda.blockIdx.x
        i = 6 * b + t
        out[i, 0] = cuda.syncthreads_count(t < 2 + b)
        out[i, 1] = cuda.syncthreads_and(t < 6 - b)
        out[i, 2] = cuda.syncthreads_or(t == 6 * b)
        out[i, 3] = cuda.laneid

    out = np.zeros((12, 4), np.int64)
    vote[2, (2, 3)](out)
    np.testing.assert_array_equal(out, [[2 + b, 1 - b, 1 - b, t]
                                        for b in range(2) for t in range(6)])


CHECKS = {"threads_one_at_a_time_keep_barriers_and_errors":
          threads_one_at_a_time_keep_barriers_and_errors,
          "votes_and_indices_per_thread": votes_and_indices_per_thread}
simulator_results, test_under_simulator = simulated_tests(__name__, CHECKS)


if __name__ == "__main__":
    run_simulated_checks(CHECKS)
