"""The CUDA backend (CuPy + Numba CUDA).

Importing this package imports neither CuPy nor ``numba.cuda`` and never probes a GPU:
they are imported when a :class:`CudaBackend` is constructed (``backend.py``) or when
``kernels``/``device_math`` are imported explicitly (the backend and the tests only). It does
restore ``numpy.row_stack`` on NumPy >= 2.5 for numba-cuda (see ``numpy_compat``).
"""

from gpurules.backends.cuda.numpy_compat import restore_row_stack

restore_row_stack()

from gpurules.backends.cuda.backend import CudaBackend  # noqa: E402 (after the NumPy fix)

__all__ = ["CudaBackend"]
