"""Device strings (``"auto"``, ``"cpu"``, ``"cuda"``, ``"cuda:N"``) and lazy GPU detection.

Nothing here touches CUDA at import time; ``cuda_status`` runs its smoke test (CuPy, Numba
CUDA, our kernels) only when asked, once per process and device.
"""

import logging
import re

logger = logging.getLogger("gpurules")

_DEVICE_RE = re.compile(r"^(auto|cpu|cuda)(?::(\d+))?$")

# Whether this build contains a CUDA backend for the learners (BOOMER's histogram search).
CUDA_BACKEND_AVAILABLE = True


def parse_device(device):
    """Validate a device string. Returns (kind, index) with kind in {"auto", "cpu", "cuda"}."""
    if not isinstance(device, str):
        raise TypeError(f"device must be a str such as 'auto', 'cpu', 'cuda' or 'cuda:0', "
                        f"got {type(device).__name__}")
    m = _DEVICE_RE.match(device.strip().lower())
    if m is None or (m.group(2) is not None and m.group(1) != "cuda"):
        raise ValueError(f"device={device!r} is not supported; use 'auto', 'cpu', 'cuda' or "
                         f"'cuda:N'")
    index = int(m.group(2)) if m.group(2) is not None else 0
    return m.group(1), index


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
    """The device a fit runs on: ``"cpu"`` or ``"cuda:N"``.

    ``"auto"`` picks CUDA when it is usable and logs one INFO line saying which device was
    chosen and why; ``"cuda"`` raises ``RuntimeError`` saying why it cannot be used.
    """
    kind, index = parse_device(device)
    if kind == "cpu":
        return "cpu"
    usable, reason = cuda_status(index)
    if kind == "cuda":
        if not usable:
            raise RuntimeError(f"device={device!r} cannot be used: {reason}")
        if not CUDA_BACKEND_AVAILABLE:
            raise RuntimeError(f"device={device!r}: a GPU is usable but this version of "
                               f"gpurules has no CUDA backend for this learner; use 'cpu'")
        return f"cuda:{index}"
    if usable and CUDA_BACKEND_AVAILABLE:
        logger.info("gpurules: device='auto' uses cuda:%d", index)
        return f"cuda:{index}"
    why = reason if not usable else "this version has no CUDA backend for this learner"
    logger.info("gpurules: device='auto' uses the CPU (%s)", why)
    return "cpu"
