"""The learning math, written once: losses, heads and their qualities.

Every function here is plain Python on scalars and arrays so that it can be compiled
for the CPU (``numba.njit``) and for the GPU (``numba.cuda.jit(device=True)``) from the
same source. Nothing in this package allocates or touches a device.
"""
