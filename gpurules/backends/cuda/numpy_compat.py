"""The one NumPy compatibility measure of the CUDA backend (NumPy 2.5 with numba-cuda 0.30).

NumPy 2.5 removed ``numpy.row_stack`` (an alias of ``numpy.vstack``, deprecated since 2.0).
numba-cuda (0.30.4 and older) registers an overload for it, unguarded, while it sets up its
CUDA target, i.e. at the first CUDA compile: every kernel launch then fails with
``AttributeError: module 'numpy' has no attribute 'row_stack'``. The package
``gpurules.backends.cuda`` calls :func:`restore_row_stack` when it is imported, before any of
its modules compiles a kernel, so ``pip install gpurules[cuda13]`` works with NumPy 2.5.
Remove this module once numba-cuda guards the overload.
"""

import numpy


def restore_row_stack(np_module=numpy):
    """Set ``np_module.row_stack = np_module.vstack`` if ``row_stack`` is missing (what NumPy
    < 2.5 has: the same function under its old name). Returns True if it was set."""
    if hasattr(np_module, "row_stack"):
        return False
    np_module.row_stack = np_module.vstack
    return True
