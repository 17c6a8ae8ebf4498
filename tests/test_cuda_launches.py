"""``launches.PreparedLaunches`` (``CudaBackend(launcher="prepared")``) with stand-ins for
numba-cuda's dispatcher and compiled kernel, on the host: the first launch of an argument
pattern goes through the dispatcher (it compiles), later ones through ``cuda.core.launch``
with each array marshalled once by the kernel's own ``_prepare_args`` and the scalars every
time; ``forget`` and a new array at a reused address re-marshal. Whether the marshalled
values are what the device expects is numba-cuda's (its own ``_prepare_args``); a GPU run
checks the launcher end to end (``tests/test_cuda_gpu.py``, ``benchmarks/gpu_diagnose.py``).
"""

import types as pytypes

import pytest

pytest.importorskip("cuda.core")
pytest.importorskip("numba_cuda")

from numba.cuda import types  # noqa: E402

from gpurules.backends.cuda import launches  # noqa: E402

VEC = types.float64[::1]


class FakeArray:
    """A Numba device array as the launcher sees one: its Numba type and the CUDA array
    interface."""

    def __init__(self, name):
        self.name = name
        self._numba_type_ = VEC
        self.__cuda_array_interface__ = {}


class FakeCupyArray:
    __cuda_array_interface__ = {}


class FakeKernel:
    """numba-cuda's compiled ``_Kernel``: ``_prepare_args`` appends (type, value) markers."""

    cooperative = False

    def __init__(self, argument_types, log):
        self.argument_types, self.log = argument_types, log
        function = pytypes.SimpleNamespace(kernel="cufunc")
        self._codelibrary = pytypes.SimpleNamespace(get_cufunc=lambda: function)

    def _prepare_args(self, ty, value, stream, retr, kernelargs):
        self.log.append(("marshal", getattr(value, "name", value)))
        kernelargs.append((str(ty), getattr(value, "name", value)))


class FakeDispatcher:
    """A ``CUDADispatcher``: ``[config](*args)`` is numba-cuda's launch; it compiles the
    kernel of the arguments' types into ``overloads`` on first use."""

    def __init__(self, log):
        self.log, self.overloads = log, {}

    def __getitem__(self, config):
        def launch(*args):
            self.log.append(("numba", config))
            argtypes = tuple(a._numba_type_ if hasattr(a, "_numba_type_") else types.int64
                             for a in args)
            self.overloads.setdefault(argtypes, FakeKernel(argtypes, self.log))
        return launch


@pytest.fixture
def prepared():
    log = []
    launcher = launches.PreparedLaunches()
    launcher._launch = lambda stream, config, function, *args: log.append(
        ("launch", stream, config, function, args))
    return launcher, FakeDispatcher(log), log


def test_first_launch_compiles_then_arrays_are_marshalled_once(prepared):
    launcher, dispatcher, log = prepared
    a, b = FakeArray("a"), FakeArray("b")
    config = (4, 32, "stream")
    launcher.launch(dispatcher, config, (a, 7, b))
    assert log == [("numba", config)] and launcher.prepared == 0
    for step in (1, 2, 3):
        launcher.launch(dispatcher, config, (a, step, b))
    launched = [entry for entry in log if entry[0] == "launch"]
    assert len(launched) == 3 and launcher.prepared == 3
    assert [entry[4] for entry in launched] == [
        ((str(VEC), "a"), ("int64", step), (str(VEC), "b")) for step in (1, 2, 3)]
    assert all(entry[1] == "stream" and entry[3] == "cufunc" for entry in launched)
    config_object = launched[0][2]
    assert tuple(config_object.grid) == (4, 1, 1) and tuple(config_object.block) == (32, 1, 1)
    marshalled = [entry[1] for entry in log if entry[0] == "marshal"]
    assert marshalled == ["a", 1, "b", 2, 3]  # each array once, each scalar every launch


def test_forget_and_a_new_array_marshal_again(prepared):
    launcher, dispatcher, log = prepared
    a = FakeArray("a")
    for step in range(3):
        launcher.launch(dispatcher, (1, 32, 0), (a, step))
    launcher.forget()
    launcher.launch(dispatcher, (1, 32, 0), (a, 5))  # numba-cuda's launch again
    launcher.launch(dispatcher, (1, 32, 0), (a, 6))
    c = FakeArray("c")
    launcher.launch(dispatcher, (1, 32, 0), (c, 7))
    marshalled = [entry[1] for entry in log if entry[0] == "marshal"]
    assert marshalled == ["a", 1, 2, "a", 6, "c", 7]
    assert [kind for kind, *_ in log if kind == "numba"] == ["numba", "numba"]


def test_a_cupy_array_is_refused(prepared):
    launcher, dispatcher, _ = prepared
    with pytest.raises(TypeError, match="Numba device arrays"):
        launcher.launch(dispatcher, (1, 32, 0), (FakeCupyArray(), 1))


def test_module_routes_only_its_kernels():
    calls = []

    class Launches:
        def launch(self, dispatcher, config, args):
            calls.append((dispatcher, config, args))

    module = pytypes.SimpleNamespace(KERNELS={"k": "dispatcher"}, k="dispatcher", RING=16)
    routed = launches.prepared_module(module, Launches())
    routed.k[2, 64, "s"](1, 2)
    assert calls == [("dispatcher", (2, 64, "s"), (1, 2))]
    assert routed.RING == 16


def test_backend_refuses_an_unknown_launcher():
    from gpurules.backends.cuda import CudaBackend

    with pytest.raises(ValueError, match="launcher must be one of"):
        CudaBackend(0, launcher="graph")


class NumbaScalarKernel(FakeKernel):
    """A compiled kernel whose scalars are marshalled by numba-cuda's own
    ``_Kernel._prepare_args`` (ctypes values), its arrays by the stand-in's markers."""

    extensions = []

    def _prepare_args(self, ty, value, stream, retr, kernelargs):
        from numba.cuda.dispatcher import _Kernel

        if isinstance(ty, types.Array):
            return super()._prepare_args(ty, value, stream, retr, kernelargs)
        self.log.append(("marshal", value))
        _Kernel._prepare_args(self, ty, value, stream, retr, kernelargs)


class Stream:
    """numba-cuda's (external) stream as cuda.core sees a foreign one."""

    def __cuda_stream__(self):
        return (0, 0xBEEF)


def test_scalars_as_numba_marshals_them_and_the_stream_converted_once(prepared):
    import ctypes

    import numpy as np

    launcher, dispatcher, log = prepared
    dispatcher.overloads = {}
    made = []
    launcher._from_handle = lambda handle: made.append(handle) or ("core stream", handle)
    a, stream = FakeArray("a"), Stream()
    argtypes = (VEC, types.int64, types.int32, types.float64, types.boolean)
    dispatcher.overloads[argtypes] = NumbaScalarKernel(argtypes, log)
    for step in range(4):
        launcher.launch(dispatcher, (1, 32, stream), (a, step, np.int32(-step), 0.5 * step,
                                                      step % 2 == 0))
    launched = [entry for entry in log if entry[0] == "launch"]
    assert len(launched) == 3 and made == [0xBEEF]
    assert all(entry[1] == ("core stream", 0xBEEF) for entry in launched)
    for step, entry in zip((1, 2, 3), launched):
        marker, *scalars = entry[4]
        assert marker == (str(VEC), "a")
        assert [(type(x), getattr(x, "value", x)) for x in scalars] == [
            (ctypes.c_int64, step), (ctypes.c_int32, -step), (ctypes.c_double, 0.5 * step),
            (bool, step % 2 == 0)]
    # numba-cuda marshals each scalar type once; bools (no ctypes value) every launch
    marshalled = [entry[1] for entry in log if entry[0] == "marshal"]
    assert marshalled == ["a", 1, np.int32(-1), 0.5, False, True, False]
