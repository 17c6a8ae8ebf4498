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
scalars and calls ``cuda.core.launch`` as numba-cuda does.

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

# numba-cuda's internals, in the versions this module was written against
SUPPORTED_NUMBA_CUDA = "0.30"


def check_internals():
    """Raise RuntimeError unless numba-cuda offers what :class:`PreparedLaunches` uses:
    a real (not simulated) CUDA target with ``cuda.core``'s ``launch`` and ``LaunchConfig``
    and the dispatcher's ``overloads``."""
    from numba import config

    if config.ENABLE_CUDASIM:
        raise RuntimeError("launcher='prepared' launches compiled kernels; the Numba CUDA "
                           "simulator has none (use launcher='numba')")
    try:
        from cuda.core import LaunchConfig, launch  # noqa: F401 - availability
        from numba.cuda.dispatcher import CUDADispatcher, _Kernel
    except ImportError as exc:
        raise RuntimeError(f"launcher='prepared' needs numba-cuda {SUPPORTED_NUMBA_CUDA} "
                           f"with cuda.core ({exc}); use launcher='numba'") from exc
    missing = [name for name, owner in (("_prepare_args", _Kernel), ("launch", _Kernel),
                                        ("typeof_pyval", CUDADispatcher))
               if not hasattr(owner, name)]
    if missing:
        raise RuntimeError(f"launcher='prepared': this numba-cuda lacks {missing} (written "
                           f"for {SUPPORTED_NUMBA_CUDA}); use launcher='numba'")


class PreparedLaunches:
    """Launches of Numba CUDA dispatchers with marshalled arrays kept (see the module).

    ``launch(dispatcher, config, args)`` runs ``dispatcher[config](*args)``; ``config`` is
    (grid, block, stream) as numba-cuda takes it. Device arrays (Numba views) are recognised
    by identity: one must not change its shape, strides or address while it is kept
    (``forget`` drops them; the backend calls it whenever it drops its Numba views). A
    scalar's Numba type is its Python type's (``typeof`` of the first value seen: ints are
    int64, as numba-cuda types them unless they exceed int64).
    """

    def __init__(self):
        from cuda.core import LaunchConfig, launch
        from numba.cuda import types
        from numba.cuda._compat import CUDA_CORE_GE_1_0
        from numba.cuda.typing.typeof import Purpose, typeof

        self._launch, self._launch_config = launch, LaunchConfig
        self._cooperative_key = "is_cooperative" if CUDA_CORE_GE_1_0 else "cooperative_launch"
        self._array_type = types.Array
        self._typeof = lambda value: typeof(value, Purpose.argument)
        self._kernels = {}  # (dispatcher id, argument types) -> (dispatcher, kernel, function)
        self._scalar_types = {}  # Python type -> Numba type
        self._arrays = {}  # id(array) -> (array, its marshalled values)
        self._configs = {}
        self.prepared = 0  # launches that went through the kept marshalling (tests)

    def forget(self):
        """Drop the kept arrays (their memory may be freed next) and kernels."""
        self._arrays.clear()
        self._kernels.clear()

    def launch(self, dispatcher, config, args):
        grid, block, stream = config
        types = self._argument_types(args)
        entry = self._kernels.get((id(dispatcher), types))
        if entry is None or entry[0] is not dispatcher:
            dispatcher[config](*args)  # numba-cuda's own launch: compiles if needed
            kernel = dispatcher.overloads.get(types)
            if kernel is not None:
                self._kernels[(id(dispatcher), types)] = (
                    dispatcher, kernel, kernel._codelibrary.get_cufunc().kernel)
            return
        _, kernel, function = entry
        kernelargs = []
        for ty, value in zip(types, args):
            if isinstance(ty, self._array_type):
                kernelargs.extend(self._marshalled(kernel, ty, value, stream))
            else:
                kernel._prepare_args(ty, value, stream, [], kernelargs)
        self._launch(stream, self._config(grid, block, kernel.cooperative), function,
                     *kernelargs)
        self.prepared += 1

    def _argument_types(self, args):
        """The Numba types of ``args`` as numba-cuda's dispatcher types them: a device
        array's own (cached) ``_numba_type_``, a scalar's by its Python type."""
        out = []
        for value in args:
            ty = getattr(value, "_numba_type_", None)
            if ty is None:
                if hasattr(value, "__cuda_array_interface__"):
                    raise TypeError(f"a prepared launch takes Numba device arrays, got a "
                                    f"{type(value).__name__} (use CudaBackend._nb)")
                ty = self._scalar_types.get(type(value))
                if ty is None:
                    ty = self._scalar_types[type(value)] = self._typeof(value)
            out.append(ty)
        return tuple(out)

    def _marshalled(self, kernel, ty, array, stream):
        kept = self._arrays.get(id(array))
        if kept is None or kept[0] is not array:
            values = []
            kernel._prepare_args(ty, array, stream, [], values)
            kept = self._arrays[id(array)] = (array, values)
        return kept[1]

    def _config(self, grid, block, cooperative):
        key = (grid, block, cooperative)
        config = self._configs.get(key)
        if config is None:
            config = self._configs[key] = self._launch_config(
                grid=_dim3(grid), block=_dim3(block), shmem_size=0,
                **{self._cooperative_key: cooperative})
        return config


def _dim3(dims):
    """numba-cuda's grid/block form: an int or a tuple of up to 3 ints -> a 3-tuple."""
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    return dims + (1,) * (3 - len(dims))


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
