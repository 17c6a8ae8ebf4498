"""The one dispatch point from a device to its backend.

Estimators resolve their ``device`` parameter once (:func:`resolve_device`: ``"auto"``
becomes ``cuda:0`` where the GPU's smoke test passes, else the CPU) and ask here for the
backend of that :class:`~gpurules.device.Device`; what a backend can do (e.g.
``requires_binned_features``) is an attribute of its class, read through
:func:`backend_class` before anything is constructed. Importing the CUDA classes imports
neither CuPy nor ``numba.cuda`` (``gpurules.backends.cuda``); constructing them, or the
smoke test, does. Nothing probes a GPU at import.
"""

import logging

from gpurules.device import CPU, Device, parse_device

logger = logging.getLogger("gpurules")

_CUDA_STATUS = {}  # device index -> (usable, reason): the smoke test runs once per process


def cuda_status(index=0):
    """Whether CUDA device ``index`` can run a fit. Returns (usable: bool, reason: str).

    Runs the smoke test of ``gpurules.backends.cuda.readiness`` (CuPy, the device, its
    compute capability, numba.cuda, a tiny Numba CUDA kernel, the RawModule of our kernels)
    the first time it is asked about ``index`` in a process; later calls return that result.
    A failure's reason names the part that failed.
    """
    index = int(index)
    if index not in _CUDA_STATUS:
        from gpurules.backends.cuda.readiness import smoke_test

        _CUDA_STATUS[index] = smoke_test(index)
    return _CUDA_STATUS[index]


def resolve_device(device):
    """The device a fit runs on: a :class:`~gpurules.device.Device` of kind ``"cpu"`` or
    ``"cuda"``.

    ``device`` is what ``gpurules.device.parse_device`` accepts. ``"auto"`` picks ``cuda:0``
    when it is usable and logs one INFO line saying which device was chosen and why;
    ``"cuda"`` raises ``RuntimeError`` saying why it cannot be used.
    """
    return resolve_device_and_reason(device)[0]


def resolve_device_and_reason(device):
    """:func:`resolve_device` (which it logs the same way), and why ``"auto"`` chose the
    CPU: (Device, str or None; None unless ``device`` is ``"auto"`` and the CPU was
    chosen)."""
    parsed = parse_device(device)
    if parsed.kind == "cpu":
        return parsed, None
    index = parsed.index if parsed.is_cuda else 0
    usable, reason = cuda_status(index)
    if parsed.is_cuda:
        if not usable:
            raise RuntimeError(f"device={device!r} cannot be used: {reason}")
        return parsed, None
    if usable:
        logger.info("gpurules: device='auto' uses cuda:%d", index)
        return Device("cuda", index), None
    logger.info("gpurules: device='auto' uses the CPU (%s)", reason)
    return CPU, reason


def backend_class(device):
    """The class of the rule-learning backend (``backends.base.Backend``) of ``device``.

    Args:
        device: a :class:`~gpurules.device.Device` or device string of kind ``"cpu"`` or
            ``"cuda"`` (resolve ``"auto"`` first).
    """
    if _resolved(device).is_cuda:
        from gpurules.backends import cuda

        return cuda.CudaBackend  # looked up per call: tests substitute the class
    from gpurules.backends.cpu import CpuBackend

    return CpuBackend


def get_backend(device, threads=None):
    """A new rule-learning backend for one fit on ``device``.

    Args:
        device: as for :func:`backend_class`.
        threads: mapping with ``"search"`` and ``"update"``, the most threads of the CPU's
            search and statistics update (``*_params.resolve_config``); default one each.
            The CUDA backend ignores it.
    """
    device = _resolved(device)
    cls = backend_class(device)
    if device.is_cuda:
        return cls(device.index)
    threads = threads or {}
    return cls(threads.get("search", 1), threads.get("update", 1))


def get_class_histograms(device, data):
    """TURS's evaluator of candidate literals (``learners.turs``) for ``device``.

    Args:
        device: as for :func:`backend_class`.
        data: ``learners.turs_data.TursData`` of the fit.
    """
    device = _resolved(device)
    if device.is_cuda:
        from gpurules.backends.cuda.class_histograms import CudaClassHistograms

        return CudaClassHistograms(data, device.index)
    from gpurules.backends.cpu.class_histograms import CpuClassHistograms

    return CpuClassHistograms(data)


def _resolved(device):
    """``device`` parsed; ValueError for ``"auto"``, which only ``resolve_device`` turns
    into a device."""
    device = parse_device(device)
    if device.kind == "auto":
        raise ValueError("device='auto' must be resolved first "
                         "(gpurules.backends.factory.resolve_device)")
    return device
