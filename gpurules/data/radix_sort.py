"""A stable LSD radix sort of float32 values (Numba), for the pre-sorts of large data.

NumPy's stable sort of float32 is a merge sort: about 120 ms per column of 10^6 values
on the 2-core VM of ``docs/benchmarks.md``, where this sort takes about 14 ms (three passes
of 11 bits over uint32 keys). The pre-sort of the exact search (``data.presorted``) and the
equal-frequency binning (``data.binning``) use it; both keep the order of equal values
(stable), as ``np.argsort(..., kind="stable")`` does.
"""

import numba as nb
import numpy as np

from gpurules.jit.cache import njit
from gpurules.jit.rows import copy_row

RADIX_BITS = 11
_RADIX_MASK = (1 << RADIX_BITS) - 1
#: the key of every NaN: larger than every value's, so NaNs sort last
NAN_KEY = 0xFFFFFFFF
_SIGN = 0x80000000
#: the key of +0.0 and of -0.0
ZERO_KEY = _SIGN


@nb.njit(inline="always")
def to_keys(keys):
    """float32 bit patterns (uint32 (n,), in place) -> keys in the order of the values;
    -0.0 becomes the key of +0.0 (the two are equal) and every NaN :data:`NAN_KEY`."""
    for i in range(keys.shape[0]):
        b = keys[i]
        if (b & 0x7FFFFFFF) > 0x7F800000:
            keys[i] = NAN_KEY
        elif b == _SIGN:
            keys[i] = _SIGN
        elif b & _SIGN:
            keys[i] = b ^ 0xFFFFFFFF
        else:
            keys[i] = b | _SIGN


@nb.njit(inline="always")
def key_bits(key):
    """The float32 bit pattern of a key of :func:`to_keys` (the value's own, except that
    :data:`ZERO_KEY` gives +0.0 and :data:`NAN_KEY` a NaN)."""
    return key ^ _SIGN if key & _SIGN else key ^ 0xFFFFFFFF


@nb.njit(inline="always")
def from_keys(keys):
    """Inverse of :func:`to_keys` (in place, by :func:`key_bits`)."""
    for i in range(keys.shape[0]):
        keys[i] = key_bits(keys[i])


@njit
def radix_argsort(keys, order):
    """Stable LSD radix sort of uint32 ``keys`` (n,) in place; ``order`` (n,) int32 gets
    the permutation (``order[p]`` = original position of the p-th smallest key)."""
    n = keys.shape[0]
    for i in range(n):
        order[i] = i
    src_k, src_o = keys, order
    dst_k, dst_o = np.empty_like(keys), np.empty_like(order)
    count = np.empty(_RADIX_MASK + 1, dtype=np.int64)
    swapped = False
    for shift in range(0, 32, RADIX_BITS):
        count[:] = 0
        for i in range(n):
            count[(src_k[i] >> shift) & _RADIX_MASK] += 1
        if n == 0 or count.max() == n:
            continue  # every key has the same digit: the pass would not move anything
        total = 0
        for d in range(_RADIX_MASK + 1):
            total, count[d] = total + count[d], total
        for i in range(n):
            d = (src_k[i] >> shift) & _RADIX_MASK
            dst_k[count[d]] = src_k[i]
            dst_o[count[d]] = src_o[i]
            count[d] += 1
        src_k, dst_k = dst_k, src_k
        src_o, dst_o = dst_o, src_o
        swapped = not swapped
    if swapped:
        copy_row(keys, src_k)  # not keys[:] = src_k: jit/rows.py
        copy_row(order, src_o)
