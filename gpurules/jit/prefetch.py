"""Software prefetch of array rows in compiled code (LLVM's ``llvm.prefetch``).

The exact search visits examples in the order of a feature's sorted values, so it reads
their statistics rows at random. Once the statistics outgrow the caches (n = 10^6 examples
with 20 labels: 320 MB), each visit waits for memory, and the search's per-candidate work
keeps the processor from looking far enough ahead to overlap those waits (issue 17).
:func:`prefetch_row` asks for a row a few visits ahead; a prefetch never faults, never
waits and changes no value, so results stay bit for bit the same.

Below :data:`PREFETCH_BYTES` of statistics everything a search reads stays in cache, and
the prefetches only cost instructions: the searches ask :func:`beyond_cache` once per loop
and prefetch only when it says so.

Outside compiled code (``NUMBA_DISABLE_JIT``) it does nothing.
"""

import numba as nb
from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic, overload

#: bytes between two prefetches along a row (a cache line)
LINE_BYTES = 64

#: statistics tables above this size (bytes) outgrow the caches. The histogram build at
#: n = 1e5, 255 bins, 20 rules, one thread: 2.56 -> 1.98 s with prefetches (session 23);
#: below it they cost fits 10-20 % (yeast's dense search, enron's and a 3,000-example,
#: 19-label sparse one, 0.9 MB of statistics; session 25, docs/benchmarks.md).
#: Compiled code holds the value of its first compile (Numba freezes globals, and the disk
#: cache, ``jit/cache.py``, keys on the sources, not on this value): set at run time, it
#: changes only the Python-side choices (``backends/cpu/representations.py``), not whether
#: a cached kernel prefetches (docs/benchmarks.md, session 64)
PREFETCH_BYTES = 1 << 20


@nb.njit(inline="always")
def beyond_cache(nbytes):
    """Whether statistics of ``nbytes`` bytes outgrow the caches (:data:`PREFETCH_BYTES`):
    only then do the searches prefetch."""
    return nbytes > PREFETCH_BYTES


@intrinsic
def _prefetch_address(typingctx, address):
    """Prefetch the cache line at ``address`` (an intp) for reading, into all levels."""
    if not isinstance(address, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        pointer = builder.inttoptr(args[0], cgutils.voidptr_t)
        int32 = ir.IntType(32)
        function = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [cgutils.voidptr_t, int32, int32,
                                                             int32]),
            "llvm.prefetch.p0")
        # read (0), high temporal locality (3), data cache (1)
        builder.call(function, [pointer, int32(0), int32(3), int32(1)])
        return context.get_dummy_value()
    return types.none(types.intp), codegen


def prefetch_row(array, i):
    """Prefetch row ``i`` of a C-contiguous ``array``: every cache line of the row of a 2-D
    array, the line holding element ``i`` of a 1-D one."""


@overload(prefetch_row, inline="always")
def _prefetch_row_typed(array, i):
    if not isinstance(array, types.Array) or array.ndim not in (1, 2):
        return None
    if array.ndim == 1:
        return lambda array, i: _prefetch_address(array.ctypes.data + i * array.itemsize)

    def impl(array, i):
        row_bytes = array.shape[1] * array.itemsize
        start = array.ctypes.data + i * row_bytes
        for offset in range(0, row_bytes + LINE_BYTES - 1, LINE_BYTES):
            _prefetch_address(start + min(offset, row_bytes - 1))
    return impl
