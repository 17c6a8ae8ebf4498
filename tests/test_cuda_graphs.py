"""CUDA graphs of refinement blocks (``backends/cuda/graphs.py``) without a GPU.

A graph replays the launches it captured, arguments and all. So the test that matters here
is that every launch of a block's step ``r`` is the same in every block with the same key:
the simulated checks (a fresh interpreter under the Numba CUDA simulator, with
``tests/reference/fake_cupy.py`` as CuPy) record every launch of whole BOOMER fits, block by
block, and compare them. The capture and replay logic runs here with a stand-in stream; a
real capture runs in ``tests/test_cuda_gpu.py`` (a GPU fit with graphs equals the CPU's).
"""

import contextlib

import numpy as np
import pytest

from gpurules.backends.cuda.graphs import BlockGraphs, run_steps
from tests.reference.cuda_support import run_simulated_checks, simulated_tests

CHECKS = {}


def check(fn):
    CHECKS[fn.__name__] = fn
    return fn


class _Graph:
    def __init__(self, stream, launches):
        self._stream, self._launches = stream, launches
        self.uploaded = False

    def upload(self, stream):
        self.uploaded = True

    def launch(self, stream):
        assert stream is self._stream and self.uploaded
        stream.ran.extend(self._launches)


class _Stream:
    """A CuPy stream as ``BlockGraphs`` uses it: launches go to ``ran``, or to the graph
    being captured."""

    def __init__(self):
        self.ran, self._capturing = [], None

    def launch(self, what):
        (self.ran if self._capturing is None else self._capturing).append(what)

    def begin_capture(self):
        assert self._capturing is None
        self._capturing = []

    def end_capture(self):
        graph, self._capturing = _Graph(self, self._capturing), None
        return graph


def test_first_block_launches_second_captures_then_replays():
    stream = _Stream()
    graphs = BlockGraphs(stream)
    calls = []

    def launch_step(r):
        calls.append(r)
        stream.launch(("step", r))

    for _ in range(4):
        run_steps(graphs, "key", 3, launch_step)
    # launched directly once, then captured once (not run), then four runs' worth replayed
    assert calls == [0, 1, 2, 0, 1, 2]
    assert stream.ran == [("step", r) for r in range(3)] * 4
    assert (graphs.captured, graphs.replayed) == (1, 3)
    run_steps(graphs, "key", 2, launch_step)  # another length: a graph of its own
    run_steps(graphs, "other", 3, launch_step)  # another key too
    assert graphs.captured == 1 and calls[6:] == [0, 1, 0, 1, 2]
    graphs.clear()
    run_steps(graphs, "key", 3, launch_step)
    assert calls[-3:] == [0, 1, 2] and graphs.captured == 1  # launched directly again


def test_an_error_during_capture_ends_the_capture():
    stream = _Stream()
    graphs = BlockGraphs(stream)

    def failing(r):
        if r == 1:
            raise ValueError("boom")
        stream.launch(r)

    run_steps(graphs, "key", 1, failing)
    with pytest.raises(ValueError, match="boom"):
        run_steps(graphs, "key", 2, failing)  # first time: direct
    with pytest.raises(ValueError, match="boom"):
        run_steps(graphs, "key", 2, failing)  # captured: fails inside the capture
    assert stream._capturing is None
    stream.ran.clear()
    run_steps(graphs, "key", 1, failing)  # the stream is usable: capture of the 1-step block
    run_steps(graphs, "key", 1, failing)
    assert stream.ran == [0, 0] and graphs.captured == 1


def test_without_graphs_every_step_is_launched():
    calls = []
    for _ in range(2):
        run_steps(None, "key", 2, calls.append)
    assert calls == [0, 1, 0, 1]


# -- every launch of a block's step the same in every block with its key (simulator) -------
def _describe(value):
    """What a launch argument is to a replayed graph: a device array by address, shape,
    strides and dtype (fake CuPy and simulated Numba arrays are NumPy arrays), anything
    else by type and value."""
    if isinstance(value, np.ndarray):
        return ("array", value.__array_interface__["data"][0], value.shape, value.strides,
                value.dtype.str)
    if isinstance(value, (tuple, list)):
        return tuple(_describe(v) for v in value)
    return (type(value).__name__, value if np.isscalar(value) else id(value))


class _RecordingGraphs:
    """Stands in for ``BlockGraphs``: runs every block's steps directly and checks that
    the launches of step ``r`` under a key are the same in every block (``compared``
    counts the steps checked against an earlier block)."""

    def __init__(self):
        self.steps, self.compared, self.current = {}, 0, None

    def clear(self):
        self.steps.clear()

    def run(self, key, steps, launch_step):
        for r in range(steps):
            self.current = []
            launch_step(r)
            seen = self.steps.setdefault((key, r), self.current)
            if seen is not self.current:
                assert seen == self.current, (key, r, _first_difference(seen, self.current))
                self.compared += 1
        self.current = None

    def record(self, name, config, args, shared_mem=0):
        if self.current is not None:
            self.current.append((name, _describe(config), _describe(args), shared_mem))


def _first_difference(a, b):
    for x, y in zip(a, b):
        if x != y:
            return x, y
    return len(a), len(b)


def _recording(backend, recorder):
    """Route every launch of ``backend`` through ``recorder.record``."""
    from gpurules.backends.cuda.launches import WrappedKernels

    class Raw:
        def __init__(self, name, kernel):
            self._name, self._kernel = name, kernel

        def __getattr__(self, attr):
            return getattr(self._kernel, attr)

        def __call__(self, grid, block, args, shared_mem=0):
            recorder.record(self._name, (grid, block), args, shared_mem)
            return self._kernel(grid, block, args, shared_mem=shared_mem)

    class Dispatcher:
        def __init__(self, name, kernel):
            self._name, self._kernel = name, kernel

        def __getitem__(self, config):
            launch = self._kernel[config]

            def recorded(*args):
                recorder.record(self._name, config[:2], args)
                return launch(*args)
            return recorded

    def wrap(module):
        names = {id(k): name for name, k in module.KERNELS.items()}
        return WrappedKernels(module, lambda k: Dispatcher(names[id(k)], k))

    backend._hist = {name: Raw(name, k) for name, k in backend._hist.items()}
    backend._kernels, backend._search_module = (wrap(backend._kernels),
                                                wrap(backend._search_module))
    backend._graphs = recorder


def _recorded_fit(X, Y, nominal, **params):
    """A simulated CUDA BOOMER fit with every block's launches recorded and compared; the
    CPU backend's model of the same fit must be the same. Returns the recorder."""
    from gpurules import BoomerClassifier
    from gpurules.backends.cpu import CpuBackend
    from gpurules.estimators.boomer_params import resolve_config
    from gpurules.learners.boosting import BoostingLearner
    from tests.reference.cuda_reference import exact_bins
    from tests.reference.cuda_support import simulated_backend_class

    backend_class, _ = simulated_backend_class()
    config, _ = resolve_config(BoomerClassifier(random_state=1, **params))
    binned = exact_bins(X, nominal)  # one bin per distinct value
    gpu, recorder = backend_class(0, block_size=32), _RecordingGraphs()
    _recording(gpu, recorder)
    cpu_model, gpu_model = (
        BoostingLearner(config, backend, np.random.default_rng(1)).fit(
            binned, Y, np.ones(X.shape[0])).build()
        for backend in (CpuBackend(), gpu))
    for name in ("cond_feature", "cond_op", "cond_threshold", "head_label", "head_score"):
        np.testing.assert_array_equal(getattr(gpu_model, name), getattr(cpu_model, name),
                                      err_msg=name)
    return recorder


def _problem(seed, n=40, A=6, K=3):
    from tests.reference.cuda_reference import random_problem

    rng = np.random.default_rng(seed)
    X, nominal, *_ = random_problem(rng, n, A, 1, n_distinct=6, nominal=(2,))
    # one feature of many bins: its histograms go global (fake_cupy.SHARED_OPTIN), and its
    # candidates need more tiles (32 threads a block) than the others': draws differ
    X[:, 4] = rng.permutation(n) * 0.5
    Y = (rng.random((n, K)) < 0.4).astype(np.uint8)
    return X, Y, nominal


@check
def complete_head_blocks_repeat_their_launches():
    """Complete heads, features and examples sampled (instance weights), groups of shared
    and global histograms: every block's step launches what the same step of an earlier
    block with its key launched."""
    X, Y, nominal = _problem(3)
    recorder = _recorded_fit(X, Y, nominal, max_rules=4, head_type="complete",
                             feature_sampling="without-replacement{sample_size=0.5}",
                             instance_sampling="with-replacement{sample_size=0.7}")
    assert recorder.compared >= 6, recorder.compared


@check
def single_label_blocks_repeat_their_launches():
    """Single-label heads (the label fixed after the first condition), every feature, no
    instance sampling (a smaller problem: every feature is searched at every step)."""
    X, Y, nominal = _problem(4, n=30, A=5)
    recorder = _recorded_fit(X, Y, nominal, max_rules=3, head_type="single",
                             feature_sampling="none", instance_sampling="none")
    assert recorder.compared >= 2, recorder.compared


@check
def non_decomposable_blocks_repeat_their_launches():
    """Packed Hessians and the complete head solved as a system (per-thread scratch)."""
    X, Y, nominal = _problem(5, A=5)
    recorder = _recorded_fit(X, Y, nominal, max_rules=2, head_type="complete",
                             loss="logistic-non-decomposable")
    assert recorder.compared >= 2, recorder.compared


@check
def partial_head_blocks_repeat_their_launches():
    """Partial heads (fixed: a block ends where the head is fixed; dynamic), label binning
    (GBLB) and sequential post-optimization (rules refined again over subsets of the
    examples), which the default ``graphs="auto"`` replays as well."""
    X, Y, nominal = _problem(6, n=30, A=5, K=4)
    for rules, params in (
            (3, dict(head_type="partial-fixed")),
            (3, dict(head_type="partial-dynamic", label_binning="equal-width")),
            (2, dict(head_type="complete", post_optimization="sequential{num_iterations=1}"))):
        recorder = _recorded_fit(X, Y, nominal, max_rules=rules, **params)
        assert recorder.compared >= 4, (params, recorder.compared)


@check
def graphs_need_a_gpu():
    """``graphs=True`` under the simulator: a clear RuntimeError when the backend is made."""
    from tests.reference.cuda_support import simulated_backend_class

    backend_class, _ = simulated_backend_class()
    with pytest.raises(RuntimeError, match="simulator"):
        backend_class(0, block_size=32, graphs=True)
    backend = backend_class(0, block_size=32)  # graphs="auto": none under the simulator
    assert backend.graphs == "auto" and backend._graphs is None
    for wrong in ("always", 1, None):
        with pytest.raises(ValueError, match="graphs must be one of"):
            backend.set_graphs(wrong)


simulator_results, test_launches_under_simulator = simulated_tests(__name__, CHECKS)


@pytest.mark.parametrize("tool", ["counters", "profiler"])
def test_counting_and_profiling_refuse_graphs(tool):
    """The device counters and the phase profiler count and time launches, which a graph
    replays unseen: a clear ValueError, before anything is attached."""
    import types

    from gpurules.backends.cuda.counters import DeviceCounters
    from gpurules.backends.cuda.profiling import PhaseProfiler

    backend = types.SimpleNamespace(_graphs=BlockGraphs(_Stream()), cp=object())
    make = DeviceCounters if tool == "counters" else PhaseProfiler
    with pytest.raises(ValueError, match="graphs=False"):
        make(backend).attach()
    assert backend.cp is not None and not hasattr(backend, "_hist")


@pytest.mark.parametrize("tool", ["counters", "profiler"])
def test_counting_and_profiling_switch_auto_graphs_off_while_attached(tool):
    """With ``graphs="auto"`` the counters and the profiler launch one by one while
    attached, then the backend has its graphs again, emptied (buffers may have moved)."""
    import types

    from gpurules.backends.cuda.counters import DeviceCounters
    from gpurules.backends.cuda.profiling import PHASES, PhaseProfiler

    kept = BlockGraphs(_Stream())
    kept._graphs["entry"] = "a graph"
    backend = types.SimpleNamespace(_graphs=kept, graphs="auto", cp=object())
    if tool == "counters":  # what each one wraps
        backend.__dict__.update(_hist={}, _kernels=None, _search_module=None,
                                _upload=None, _wrap=None, build_histograms=None)
    else:
        backend.__dict__.update({name: len for name in PHASES})
    made = (DeviceCounters if tool == "counters" else PhaseProfiler)(backend)
    with made:
        assert backend._graphs is None
    assert backend._graphs is kept and not kept._graphs


def test_recorder_finds_a_changed_launch():
    """The comparison can fail: a scalar that changes from block to block is found."""
    recorder = _RecordingGraphs()
    for value in (np.int32(1), np.int32(2)):
        def launch_step(r, value=value):
            recorder.record("k", ((1, 1), (32,)), (np.zeros(2), value))
        with pytest.raises(AssertionError) if value == 2 else contextlib.nullcontext():
            recorder.run("key", 1, launch_step)


if __name__ == "__main__":
    run_simulated_checks(CHECKS)
