"""Copying array rows in compiled code without NumPy's shape-mismatch error path.

A slice assignment between arrays (``dst[:] = src``, ``out[c] = row``) compiles NumPy's
broadcast check with its error message: the formatting of the shapes into a string, about
1.4 CPU-s of a first fit's compilation for each kernel that does it (issue 16; measured with
Numba's compile events on emotions, yeast and scene). :func:`copy_row` copies element by
element instead, the same result for rows of equal length.
"""

import numba as nb


@nb.njit(inline="always")
def copy_row(dst, src):
    """``dst[k] = src[k]`` for ``k < dst.shape[0]`` (1-D arrays; ``src`` at least as long)."""
    for k in range(dst.shape[0]):
        dst[k] = src[k]
