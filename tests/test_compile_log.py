"""The compile log line (``gpurules/compile_log.py``)."""

import logging

import numba as nb
import numpy as np

from gpurules.compile_log import STARTING, CompileLog


def test_a_compile_is_logged_with_its_duration_and_a_warm_call_is_silent(caplog):
    fresh = nb.njit(lambda x: x + 1)  # not cached: compiled on its first call
    with caplog.at_level(logging.INFO, logger="gpurules"):
        with CompileLog("test") as log:
            assert fresh(np.int64(1)) == 2
        assert log.compiles == 1 and log.seconds > 0 and log.cpu_seconds > 0
        messages = [r.getMessage() for r in caplog.records]
        assert messages[0] == f"test: {STARTING}"
        assert messages[1].startswith("test: compiled the CPU kernels in ")
        caplog.clear()
        with CompileLog("test") as log:
            fresh(np.int64(2))
        assert log.compiles == 0 and caplog.records == []


def test_an_inner_log_leaves_the_counting_to_the_outer_one(caplog):
    fresh = nb.njit(lambda x: x * 3)
    with caplog.at_level(logging.INFO, logger="gpurules"):
        with CompileLog("outer") as outer:
            with CompileLog("inner") as inner:
                fresh(np.int64(1))
    assert outer.compiles == 1 and inner.compiles == 0
    assert all(r.getMessage().startswith("outer: ") for r in caplog.records)
