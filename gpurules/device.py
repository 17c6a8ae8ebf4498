"""Device strings (``"auto"``, ``"cpu"``, ``"cuda"``, ``"cuda:N"``) and lazy GPU detection.

:func:`parse_device` is the one place that reads a device string; everything after it
holds a :class:`Device`. :func:`resolve_device` turns ``"auto"`` into the device a fit
runs on. Nothing here touches CUDA at import time; ``cuda_status`` runs its smoke test
(CuPy, Numba CUDA, our kernels) only when asked, once per process and device.
"""

import logging
import re
from typing import NamedTuple, Optional

logger = logging.getLogger("gpurules")

_DEVICE_RE = re.compile(r"^(auto|cpu|cuda)(?::(\d+))?$")
_SUPPORTED = "use 'auto', 'cpu', 'cuda' or 'cuda:N' (N >= 0)"

# Whether this build contains a CUDA backend for the learners (BOOMER's histogram search).
CUDA_BACKEND_AVAILABLE = True


class Device(NamedTuple):
    """A parsed device.

    Attributes:
        kind: ``"cpu"``, ``"cuda"``, or ``"auto"`` (a request only: :func:`resolve_device`
            turns it into one of the other two; backends never see it).
        index: int, the CUDA device of kind ``"cuda"``; None for ``"cpu"`` and ``"auto"``.

    ``str()`` gives the device string: ``"cpu"``, ``"cuda:N"`` or ``"auto"``.
    """

    kind: str
    index: Optional[int] = None

    def __str__(self):
        return f"cuda:{self.index}" if self.kind == "cuda" else self.kind

    @property
    def is_cuda(self):
        """Whether this is a CUDA device."""
        return self.kind == "cuda"


CPU = Device("cpu")


def parse_device(device):
    """Validate a device. Returns a :class:`Device`.

    Args:
        device: a string (``"auto"``, ``"cpu"``, ``"cuda"`` = ``"cuda:0"``, ``"cuda:N"``;
            case and surrounding blanks ignored) or a :class:`Device` (checked, returned).

    Raises:
        TypeError: ``device`` is neither a string nor a Device (None included).
        ValueError: a string or Device that names no supported device; the message names
            the value.
    """
    if isinstance(device, Device):
        return _checked(device)
    if not isinstance(device, str):
        raise TypeError(f"device must be a str such as 'auto', 'cpu', 'cuda' or 'cuda:0', "
                        f"got {type(device).__name__}")
    m = _DEVICE_RE.match(device.strip().lower())
    if m is None or (m.group(2) is not None and m.group(1) != "cuda"):
        raise ValueError(f"device={device!r} is not supported; {_SUPPORTED}")
    if m.group(1) != "cuda":
        return Device(m.group(1))
    return Device("cuda", int(m.group(2) or 0))


def _checked(device):
    """``device`` (a Device) if it is one that :func:`parse_device` can return."""
    index = device.index
    valid_index = isinstance(index, int) and not isinstance(index, bool) and index >= 0
    if (device.kind == "cuda" and valid_index) or \
            (device.kind in ("cpu", "auto") and index is None):
        return device
    raise ValueError(f"device={device!r} is not supported; {_SUPPORTED}")


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
    """The device a fit runs on: a :class:`Device` of kind ``"cpu"`` or ``"cuda"``.

    ``device`` is what :func:`parse_device` accepts. ``"auto"`` picks ``cuda:0`` when it is
    usable and logs one INFO line saying which device was chosen and why; ``"cuda"`` raises
    ``RuntimeError`` saying why it cannot be used.
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
        if not CUDA_BACKEND_AVAILABLE:
            raise RuntimeError(f"device={device!r}: a GPU is usable but this version of "
                               f"gpurules has no CUDA backend for this learner; use 'cpu'")
        return parsed, None
    if usable and CUDA_BACKEND_AVAILABLE:
        logger.info("gpurules: device='auto' uses cuda:%d", index)
        return Device("cuda", index), None
    why = reason if not usable else "this version has no CUDA backend for this learner"
    logger.info("gpurules: device='auto' uses the CPU (%s)", why)
    return CPU, why
