"""The package's Numba helpers, below every other layer (they import nothing else of
gpurules): ``cache`` (``njit``: the package's on-disk cache, a directory per version of the
sources, locked against concurrent compiles), ``helpers`` (``register_jitable`` and
``overload``, whose CPU code LLVM optimises once, in the kernel that calls it), ``variants``
(serial and parallel forms of the ``prange`` kernels), ``threads`` (how many Numba threads
a phase may use) and ``rows`` (row copies without NumPy's shape-mismatch error path)."""
