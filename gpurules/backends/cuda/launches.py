"""Numba CUDA launches whose array arguments are marshalled once (``launcher="prepared"``).

numba-cuda's ``kernel[grid, block, stream](*args)`` types every argument, looks the
compiled kernel up and marshals every argument again at every launch. On an H200
(numba-cuda 0.30.4, ``docs/gpu-validation.md``, 2026-11-26) that cost 0.65 ms of host time
per launch of a search kernel (~25 arguments), 100 times the device work of a refinement at
n = 1e5. The backend's arguments are few distinct objects: its Numba views are made once
per fit buffer (``CudaBackend._nb``), only the scalars change from launch to launch. So a
:class:`PreparedLaunches` keeps, per kernel and argument pattern, the compiled kernel, the
device function handle and each array's marshalled values (what numba-cuda's own
``_Kernel._prepare_args`` gives for it, computed once), and per launch converts only the
scalars (with the ctypes class numba-cuda used for that scalar type) and calls
``cuda.core.launch`` as numba-cuda does, on the stream converted to a cuda.core ``Stream``
once. The compiled kernel is looked up by the ids of the arguments' (interned) Numba types:
on an H200 (2026-11-28) hashing the types themselves, in Python, took about a third of the
launch, and cuda.core's conversion of a foreign stream warned at every launch. On this
repository's 2-core CPU box, with cuda.core's launch a no-op (``tests/test_cuda_launches``'s
stand-ins, 16 arrays and 2 scalars), that host work fell from 10.5 to 5.9 us per launch.

This uses numba-cuda internals (``CUDADispatcher.overloads``, ``_Kernel.argument_types``,
``_Kernel._prepare_args``, ``_codelibrary.get_cufunc().kernel``), checked when the launcher
is made (:func:`check_internals`, a clear error if a numba-cuda release changed them). The
first launch of a kernel with a new argument pattern goes through numba-cuda itself (it
compiles); the simulator has no compiled kernels, so this launcher needs a GPU. It is the
default where it can run (``CudaBackend(launcher="auto")``): on an H200 (2026-11-26,
``docs/gpu-validation.md``) it took 24 us per launch of 16 arrays against numba-cuda's 80 us
with the same views, and a 100-rule fit at n = 1e5 took 10.4 s against 15.4 s, the same
model as numba-cuda's launches and the CPU's.
"""

import contextlib
import warnings

# numba-cuda's internals, in the versions this module was written against
SUPPORTED_NUMBA_CUDA = "0.30"


@contextlib.contextmanager
def small_grids_quiet():
    """Silence numba-cuda's low-occupancy warning ("Grid size N will likely result in GPU
    under-utilization") inside the block: gpurules launches small grids by design (a few
    candidates, a block's selection, a smoke test), and the warning would reach the user at
    every fit."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*under-utilization")
        yield



def check_internals():
    """Raise RuntimeError unless numba-cuda offers what :class:`PreparedLaunches` uses:
    a real (not simulated) CUDA target with ``cuda.core``'s ``launch``, ``LaunchConfig`` and
    ``Stream.from_handle`` and the dispatcher's ``overloads``."""
    from numba import config

    if config.ENABLE_CUDASIM:
        raise RuntimeError("launcher='prepared' launches compiled kernels; the Numba CUDA "
                           "simulator has none (use launcher='numba')")
    try:
        from cuda.core import LaunchConfig, Stream, launch  # noqa: F401 - availability
        from numba.cuda.dispatcher import CUDADispatcher, _Kernel
    except ImportError as exc:
        raise RuntimeError(f"launcher='prepared' needs numba-cuda {SUPPORTED_NUMBA_CUDA} "
                           f"with cuda.core ({exc}); use launcher='numba'") from exc
    missing = [name for name, owner in (("_prepare_args", _Kernel), ("launch", _Kernel),
                                        ("typeof_pyval", CUDADispatcher),
                                        ("from_handle", Stream))
               if not hasattr(owner, name)]
    if missing:
        raise RuntimeError(f"launcher='prepared': this numba-cuda lacks {missing} (written "
                           f"for {SUPPORTED_NUMBA_CUDA}); use launcher='numba'")


class PreparedLaunches:
    """Launches of Numba CUDA dispatchers with marshalled arrays kept (see the module).

    ``launch(dispatcher, config, args)`` runs ``dispatcher[config](*args)``; ``config`` is
    (grid, block, stream) or (grid, block, stream, dynamic shared memory bytes) as
    numba-cuda takes it. Device arrays (Numba views) are recognised
    by identity: one must not change its shape, strides or address while it is kept
    (``forget`` drops them; the backend calls it whenever it drops its Numba views). A
    scalar's Numba type is its Python type's (``typeof`` of the first value seen: ints are
    int64, as numba-cuda types them unless they exceed int64).
    """

    def __init__(self):
        import ctypes

        from cuda.core import LaunchConfig, Stream, launch
        from numba.cuda import types
        from numba.cuda._compat import CUDA_CORE_GE_1_0
        from numba.cuda.typing.typeof import Purpose, typeof

        self._launch, self._launch_config = launch, LaunchConfig
        self._from_handle = Stream.from_handle
        self._ctypes_scalar = ctypes._SimpleCData
        self._cooperative_key = "is_cooperative" if CUDA_CORE_GE_1_0 else "cooperative_launch"
        self._array_type = types.Array
        self._typeof = lambda value: typeof(value, Purpose.argument)
        # (dispatcher id, ids of the argument types) -> (dispatcher, kernel, function, the
        # argument types: kept, so that no other type object can take one of their ids)
        self._kernels = {}
        self._scalars = {}  # Python type -> [Numba type, its ctypes class or None (unknown)]
        self._arrays = {}  # id(array) -> (array, its Numba type, its marshalled values)
        self._streams = {}  # id(stream) -> (stream, its cuda.core Stream)
        self._configs = {}
        self.prepared = 0  # launches that went through the kept marshalling (tests)

    def forget(self):
        """Drop the kept arrays (their memory may be freed next), kernels and streams."""
        self._arrays.clear()
        self._kernels.clear()
        self._streams.clear()

    def launch(self, dispatcher, config, args):
        described, key, entry = self._entry(dispatcher, args)
        if entry is None:
            self._first_launch(dispatcher, config, args, described, key)
        else:
            self._prepared_launch(entry, described, config, args)

    def _first_launch(self, dispatcher, config, args, described, key):
        """numba-cuda's own launch (it compiles if needed); the compiled kernel is kept."""
        dispatcher[config](*args)
        types = tuple(ty for ty, _ in described)
        kernel = dispatcher.overloads.get(types)
        if kernel is not None:
            self._kernels[key] = (dispatcher, kernel, kernel._codelibrary.get_cufunc().kernel,
                                  types)

    def _prepared_launch(self, entry, described, config, args):
        """The launch through cuda.core of a kept kernel ``entry`` (see :meth:`_entry`)."""
        grid, block, stream, shared = _config_parts(config)
        _, kernel, function, _ = entry
        kernelargs = []
        for (ty, kept), value in zip(described, args):
            if kept is not None:  # a scalar's ctypes class, or an array's marshalled values
                if isinstance(kept, list):
                    kernelargs.extend(kept)
                else:
                    kernelargs.append(kept(value))
            elif isinstance(ty, self._array_type):
                kernelargs.extend(self._marshalled(kernel, ty, value, stream))
            else:
                self._marshal_scalar(kernel, ty, value, stream, kernelargs)
        self._launch(self._core_stream(stream),
                     self._config(grid, block, kernel.cooperative, shared), function,
                     *kernelargs)
        self.prepared += 1

    def _entry(self, dispatcher, args):
        """(each argument's :meth:`_described`, the kernel's key in ``_kernels``, its kept
        (dispatcher, kernel, function, types), or None before its first launch)."""
        described = [self._described(value) for value in args]
        key = (id(dispatcher), *[id(ty) for ty, _ in described])
        entry = self._kernels.get(key)
        return described, key, entry if entry is not None and entry[0] is dispatcher else None

    def _described(self, value):
        """(Numba type of ``value`` as numba-cuda's dispatcher types it, what marshals it):
        a kept array's marshalled values (list), a scalar's ctypes class once known, else
        None. An array's type is its own (cached) ``_numba_type_``, a scalar's its Python
        type's."""
        kept = self._arrays.get(id(value))
        if kept is not None and kept[0] is value:
            return kept[1], kept[2]
        scalar = self._scalars.get(type(value))
        if scalar is not None:
            return scalar[0], scalar[1]
        ty = getattr(value, "_numba_type_", None)
        if ty is not None:
            return ty, None
        if hasattr(value, "__cuda_array_interface__"):
            raise TypeError(f"a prepared launch takes Numba device arrays, got a "
                            f"{type(value).__name__} (use CudaBackend._nb)")
        ty = self._typeof(value)
        self._scalars[type(value)] = [ty, None]
        return ty, None

    def _marshalled(self, kernel, ty, array, stream):
        values = []
        kernel._prepare_args(ty, array, stream, [], values)
        self._arrays[id(array)] = (array, ty, values)
        return values

    def _marshal_scalar(self, kernel, ty, value, stream, kernelargs):
        """numba-cuda's marshalling of a scalar; when that gives one ctypes value (ints and
        floats: ``ctypes.c_<type>(value)``), its class is kept and called from then on."""
        start = len(kernelargs)
        kernel._prepare_args(ty, value, stream, [], kernelargs)
        made = kernelargs[start:]
        if len(made) == 1 and isinstance(made[0], self._ctypes_scalar):
            self._scalars[type(value)][1] = type(made[0])

    def _core_stream(self, stream):
        """``stream`` as a cuda.core ``Stream`` (made once per stream object): cuda.core
        converts a foreign stream at every launch, with a DeprecationWarning. The default
        stream (0 or None) passes as it is."""
        if not hasattr(stream, "__cuda_stream__"):
            return stream
        return _converted(self._streams, stream, self._from_handle)

    def _config(self, grid, block, cooperative, shared):
        key = (grid, block, cooperative, shared)
        config = self._configs.get(key)
        if config is None:
            config = self._configs[key] = self._launch_config(
                grid=_dim3(grid), block=_dim3(block), shmem_size=shared,
                **{self._cooperative_key: cooperative})
        return config


def _converted(kept_streams, stream, convert):
    """``convert(handle)`` of ``stream``'s CUDA handle (0 for the default stream, 0 or None),
    made once per stream object and kept in ``kept_streams`` (id -> (stream, converted))."""
    kept = kept_streams.get(id(stream))
    if kept is None or kept[0] is not stream:
        handle = stream.__cuda_stream__()[1] if hasattr(stream, "__cuda_stream__") else 0
        kept = kept_streams[id(stream)] = (stream, convert(int(handle)))
    return kept[1]


def _config_parts(config):
    """(grid, block, stream, dynamic shared memory bytes) of a numba-cuda launch
    configuration of three or four parts (the bytes 0 where it has three)."""
    grid, block, stream, *shared = config
    return grid, block, stream, shared[0] if shared else 0


def _dim3(dims):
    """numba-cuda's grid/block form: an int or a tuple of up to 3 ints -> a 3-tuple."""
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    return dims + (1,) * (3 - len(dims))


def param_holders(kernelargs):
    """The C values of numba-cuda's marshalled kernel arguments ``kernelargs`` (what its
    ``_Kernel._prepare_args`` appends: Python ints for an array's fields and pointer, which
    cuda.core passes as 64-bit integers, and one ctypes value per int or float scalar), one
    ctypes object per kernel parameter in order, or None if one of them is of another kind
    (a bool, a NumPy scalar: :class:`DirectLaunches` then leaves the launch to cuda.core)."""
    import ctypes

    holders = []
    for value in kernelargs:
        if isinstance(value, bool) or not isinstance(value, (int, ctypes._SimpleCData)):
            return None
        if isinstance(value, ctypes._SimpleCData):
            holders.append(type(value)(value.value))
        elif -(1 << 63) <= value < (1 << 63):
            holders.append(ctypes.c_int64(value))
        else:  # an address above 2**63: the same 64 bits unsigned
            holders.append(ctypes.c_uint64(value))
    return holders


class _Site:
    """One argument pattern of one kernel for :class:`DirectLaunches`: the arrays it was
    made for (kept: their ids key it), its parameters' C values and the array of pointers
    to them that ``cuLaunchKernel`` reads, and (argument position, C value) of each scalar,
    rewritten at every launch. ``holders`` None: cuda.core launches this pattern."""

    def __init__(self, arrays, holders=None, scalars=(), function=None):
        import ctypes

        self.arrays, self.holders, self.scalars, self.function = arrays, holders, scalars, \
            function
        if holders is not None:
            self.pointers = (ctypes.c_void_p * len(holders))(
                *[ctypes.addressof(h) for h in holders])
            self.address = ctypes.addressof(self.pointers)


class DirectLaunches(PreparedLaunches):
    """Prepared launches (``launcher="direct"``) whose parameters are packed once per
    argument pattern: per launch only the scalars' C values are rewritten and
    ``cuLaunchKernel`` (cuda.bindings) is called with the kept array of pointers to the
    parameters, where cuda.core's ``launch`` packs every parameter again (an array is 7 to
    9 of them). On an H200 (2026-11-28) a CuPy ``RawKernel`` launch, which packs 17
    pointers, took 9.4 us against 41 us for a prepared one. Not the default: it has not run
    on a GPU yet (``benchmarks/gpu_diagnose.py`` measures it, ``tests/test_cuda_gpu.py``
    fits with it); ``tests/test_cuda_compile.py`` checks that the packed parameters have
    the sizes of every kernel's PTX parameters. Patterns it cannot pack (cooperative
    kernels, bools, several C values for one scalar) go to cuda.core as prepared launches.
    """

    MAX_SITES = 4096  # argument patterns kept (then all are dropped and made again)

    def __init__(self):
        super().__init__()
        try:
            from cuda.bindings import driver
        except ImportError as exc:
            raise RuntimeError(f"launcher='direct' needs cuda.bindings ({exc}); use "
                               f"launcher='prepared'") from exc
        self._driver = driver
        self._sites = {}
        self._cu_streams = {}
        self.direct = 0  # launches through cuLaunchKernel (tests)

    def forget(self):
        super().forget()
        self._sites.clear()
        self._cu_streams.clear()

    def launch(self, dispatcher, config, args):
        grid, block, stream, shared = _config_parts(config)
        described, key, entry = self._entry(dispatcher, args)
        if entry is None:
            return self._first_launch(dispatcher, config, args, described, key)
        if entry[1].cooperative:
            return self._prepared_launch(entry, described, config, args)
        arrays = [value for (ty, _), value in zip(described, args)
                  if isinstance(ty, self._array_type)]
        site_key = (key, *map(id, arrays))
        site = self._sites.get(site_key)
        if site is None or any(a is not b for a, b in zip(site.arrays, arrays)):
            if len(self._sites) >= self.MAX_SITES:
                self._sites.clear()
            site = self._sites[site_key] = self._site(entry, described, args, arrays, stream)
        if site.holders is None:
            return self._prepared_launch(entry, described, config, args)
        for position, holder in site.scalars:
            holder.value = args[position]
        err, = self._driver.cuLaunchKernel(site.function, *_dim3(grid), *_dim3(block), shared,
                                           self._cu_stream(stream), site.address, 0)
        if err != self._driver.CUresult.CUDA_SUCCESS:
            raise RuntimeError(f"cuLaunchKernel of {dispatcher.py_func.__name__} failed: "
                               f"{err!r}")
        self.direct += 1

    def _site(self, entry, described, args, arrays, stream):
        """The :class:`_Site` of ``args`` for the kernel ``entry`` of ``_kernels``."""
        _, kernel, function, _ = entry
        kernelargs, scalars = [], []
        for position, ((ty, kept), value) in enumerate(zip(described, args)):
            if isinstance(ty, self._array_type):
                kernelargs.extend(self._marshalled(kernel, ty, value, stream)
                                  if kept is None else kept)
                continue
            start = len(kernelargs)
            kernel._prepare_args(ty, value, stream, [], kernelargs)
            if len(kernelargs) != start + 1:
                return _Site(arrays)
            scalars.append((position, start))
        holders = param_holders(kernelargs)
        if holders is None:
            return _Site(arrays)
        return _Site(arrays, holders, [(p, holders[i]) for p, i in scalars],
                     self._driver.CUfunction(int(function.handle)))

    def _cu_stream(self, stream):
        """``stream`` (numba-cuda's, or 0/None: the default stream) as a driver CUstream,
        made once per stream object."""
        return _converted(self._cu_streams, stream, self._driver.CUstream)


class WrappedKernels:
    """A kernels module (``kernels`` or ``histogram_search``) whose Numba kernels
    (``module.KERNELS``) are replaced by ``wrap(dispatcher)`` (an object indexed by the
    launch configuration, as a dispatcher is); every other attribute is the module's. The
    prepared launches and the device counters (``counters``) stand in this way."""

    def __init__(self, module, wrap):
        self._module, self._wrap = module, wrap

    def __getattr__(self, name):
        attr = getattr(self._module, name)
        if name in getattr(self._module, "KERNELS", {}):
            return self._wrap(attr)
        return attr


def prepared_module(module, launches):
    """``module`` whose Numba kernels launch through ``launches`` (a
    :class:`PreparedLaunches`)."""
    return WrappedKernels(module, lambda dispatcher: _PreparedDispatcher(dispatcher, launches))


class _PreparedDispatcher:
    def __init__(self, dispatcher, launches):
        self._dispatcher, self._launches = dispatcher, launches

    def __getitem__(self, config):
        def launch(*args):
            self._launches.launch(self._dispatcher, config, args)
        return launch
