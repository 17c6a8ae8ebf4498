"""The one dispatch point from a device to its backend.

Estimators resolve their ``device`` parameter once (``gpurules.device.resolve_device``)
and ask here for the backend of that :class:`~gpurules.device.Device`; what a backend can
do (e.g. ``requires_binned_features``) is an attribute of its class, read through
:func:`backend_class` before anything is constructed. Importing the CUDA classes imports
neither CuPy nor ``numba.cuda`` (``gpurules.backends.cuda``); constructing them does.
"""

from gpurules.device import parse_device


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
                         "(gpurules.device.resolve_device)")
    return device
