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


def test_a_launch_with_dynamic_shared_memory_passes_its_bytes(prepared):
    launcher, dispatcher, log = prepared
    a = FakeArray("a")
    for step in range(2):  # the first compiles, the second is prepared
        launcher.launch(dispatcher, (4, 32, 0, 4096), (a, step))
    assert log[0] == ("numba", (4, 32, 0, 4096))
    launched = [entry for entry in log if entry[0] == "launch"]
    assert len(launched) == 1 and launched[0][2].shmem_size == 4096
    launcher.launch(dispatcher, (4, 32, 0), (a, 2))  # three parts: none
    assert [entry for entry in log if entry[0] == "launch"][-1][2].shmem_size == 0


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


def test_backend_refuses_an_unknown_wide_histograms():
    from gpurules.backends.cuda import CudaBackend

    with pytest.raises(ValueError, match="wide_histograms must be one of"):
        CudaBackend(0, wide_histograms="atomic")


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


class FakeDriver:
    """cuda.bindings' driver as DirectLaunches uses it: ``cuLaunchKernel`` records the
    launch and the parameters it would read (the pointer array at ``kernelParams``)."""

    class CUresult:
        CUDA_SUCCESS = 0

    def __init__(self, counts):
        self.counts, self.calls = counts, []  # counts: parameters per launch, in order

    @staticmethod
    def CUfunction(handle):
        return ("CUfunction", handle)

    @staticmethod
    def CUstream(handle):
        return ("CUstream", handle)

    def cuLaunchKernel(self, f, gx, gy, gz, bx, by, bz, shmem, stream, params, extra):
        import ctypes

        n = self.counts.pop(0)
        pointers = (ctypes.c_void_p * n).from_address(params)
        self.calls.append((f, (gx, gy, gz), (bx, by, bz), shmem, stream, extra,
                           [ctypes.c_int64.from_address(p).value for p in pointers]))
        return (0,)


class ArrayKernel(NumbaScalarKernel):
    """A compiled kernel whose arrays marshal as numba-cuda's do (meminfo, parent, size,
    itemsize, pointer, shape, strides: 7 Python ints for a vector) and whose handle is an
    int."""

    def __init__(self, argument_types, log):
        super().__init__(argument_types, log)
        function = pytypes.SimpleNamespace(kernel=pytypes.SimpleNamespace(handle=0xF00))
        self._codelibrary = pytypes.SimpleNamespace(get_cufunc=lambda: function)

    def _prepare_args(self, ty, value, stream, retr, kernelargs):
        if isinstance(ty, types.Array):
            self.log.append(("marshal", value.name))
            kernelargs.extend([0, 0, 10, 8, value.address, 10, 8])
        else:
            super()._prepare_args(ty, value, stream, retr, kernelargs)


@pytest.fixture
def direct():
    pytest.importorskip("cuda.bindings")
    log = []
    launcher = launches.DirectLaunches()
    launcher._launch = lambda stream, config, function, *args: log.append(("core", args))
    return launcher, FakeDispatcher(log), log


def test_direct_launches_pack_each_pattern_once_and_rewrite_the_scalars(direct):
    import numpy as np

    launcher, dispatcher, log = direct
    a, b = FakeArray("a"), FakeArray("b")
    a.address, b.address = 0x1000, 0x2000
    argtypes = (VEC, types.int64, types.int32, types.float64)
    dispatcher.overloads[argtypes] = ArrayKernel(argtypes, log)
    launcher._driver = driver = FakeDriver([10] * 5)
    stream = Stream()
    for step in range(4):  # the first compiles (numba-cuda's launch), then 3 direct ones
        launcher.launch(dispatcher, ((4, 2), 64, stream), (a, step, np.int32(-step), 2.0))
    launcher.launch(dispatcher, (1, 32, stream), (b, 9, np.int32(5), 0.25))
    assert launcher.direct == 4 and not [e for e in log if e[0] == "core"]
    (f, grid, block, shmem, cu_stream, extra, values), *_ = driver.calls
    assert f == ("CUfunction", 0xF00) and cu_stream == ("CUstream", 0xBEEF)
    assert grid == (4, 2, 1) and block == (64, 1, 1) and shmem == 0 and extra == 0
    assert [call[6][:7] for call in driver.calls] == [[0, 0, 10, 8, 0x1000, 10, 8]] * 3 + [
        [0, 0, 10, 8, 0x2000, 10, 8]]
    assert [call[6][7] for call in driver.calls] == [1, 2, 3, 9]
    # the int32 and the double as their own C types (read here as int64: low bits)
    assert [call[6][8] & 0xFFFFFFFF for call in driver.calls] == [
        (-s) & 0xFFFFFFFF for s in (1, 2, 3)] + [5]
    import struct
    assert [struct.unpack("d", struct.pack("q", call[6][9]))[0]
            for call in driver.calls] == [2.0, 2.0, 2.0, 0.25]
    assert len(launcher._sites) == 2  # one pattern per array set, made once
    launcher.launch(dispatcher, (1, 32, stream, 2048), (b, 9, np.int32(5), 0.25))
    assert driver.calls[-1][3] == 2048  # dynamic shared memory
    launcher.forget()
    assert not launcher._sites and not launcher._cu_streams


def test_direct_launches_leave_what_they_cannot_pack_to_cuda_core(direct):
    launcher, dispatcher, log = direct
    a = FakeArray("a")
    a.address = 0x1000
    argtypes = (VEC, types.boolean)
    dispatcher.overloads[argtypes] = ArrayKernel(argtypes, log)
    launcher._driver = FakeDriver([])
    for flag in (True, False, True):
        launcher.launch(dispatcher, (1, 32, 0), (a, flag))
    assert launcher.direct == 0 and launcher.prepared == 2
    assert [e[1][-1] for e in log if e[0] == "core"] == [False, True]


def test_param_holders_are_the_c_values_of_the_marshalled_arguments():
    import ctypes

    holders = launches.param_holders([0, 7, -3, 1 << 63, ctypes.c_int32(-2),
                                      ctypes.c_double(0.5)])
    assert [type(h) for h in holders] == [ctypes.c_int64] * 3 + [
        ctypes.c_uint64, ctypes.c_int32, ctypes.c_double]
    assert [h.value for h in holders] == [0, 7, -3, 1 << 63, -2, 0.5]
    assert launches.param_holders([1, True]) is None
    assert launches.param_holders([1, 2.5]) is None
