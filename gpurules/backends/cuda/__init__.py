"""The CUDA backend (CuPy + Numba CUDA).

Importing this package imports neither CuPy nor ``numba.cuda`` and never probes a GPU:
they are imported when a :class:`CudaBackend` is constructed (``backend.py``) or when
``kernels``/``device_math`` are imported explicitly (the backend and the tests only).
"""

from gpurules.backends.cuda.backend import CudaBackend

__all__ = ["CudaBackend"]
