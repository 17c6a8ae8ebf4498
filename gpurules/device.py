"""Device strings (``"auto"``, ``"cpu"``, ``"cuda"``, ``"cuda:N"``).

:func:`parse_device` is the one place that reads a device string; everything after it
holds a :class:`Device`. Turning ``"auto"`` into the device a fit runs on needs the GPU's
smoke test, which belongs to the backends: ``backends.factory.resolve_device``. This module
imports nothing of gpurules.
"""

import re
from typing import NamedTuple, Optional

_DEVICE_RE = re.compile(r"^(auto|cpu|cuda)(?::(\d+))?$")
_SUPPORTED = "use 'auto', 'cpu', 'cuda' or 'cuda:N' (N >= 0)"


class Device(NamedTuple):
    """A parsed device.

    Attributes:
        kind: ``"cpu"``, ``"cuda"``, or ``"auto"`` (a request only:
            ``backends.factory.resolve_device`` turns it into one of the other two;
            backends never see it).
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
