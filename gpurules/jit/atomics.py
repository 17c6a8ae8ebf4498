"""Atomic operations on int64 array elements in compiled CPU code (Numba has none).

Each is a Numba intrinsic that emits one LLVM atomic instruction on ``arr[i]`` (a C- or
A-contiguous int64 array; no bounds check): what threads of one parallel region use to hand
work to each other (``jit.team``). The orderings are the usual pairing: a value published
with :func:`store_release` (or a read-modify-write) is seen, with everything the publishing
thread wrote before it, by a thread whose :func:`load_acquire` (or read-modify-write) reads
it. Intrinsics are compiled into their callers, so they are cached with them.
"""

import platform

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

_X86 = platform.machine().lower() in ("x86_64", "amd64", "i386", "i686", "x86")


def _element(context, builder, array_type, array, index):
    """The LLVM pointer to ``array[index]``."""
    view = context.make_array(array_type)(context, builder, array)
    return cgutils.get_item_pointer(context, builder, array_type, view, [index])


def _int64_array(array):
    if not (isinstance(array, types.Array) and array.dtype == types.int64):
        raise TypeError(f"atomics take an int64 array, got {array}")


@intrinsic
def load_acquire(typingctx, array, index):
    """``array[index]`` read atomically (acquire): int64."""
    _int64_array(array)

    def codegen(context, builder, signature, args):
        pointer = _element(context, builder, signature.args[0], args[0], args[1])
        return builder.load_atomic(pointer, "acquire", 8)
    return types.int64(array, index), codegen


@intrinsic
def store_release(typingctx, array, index, value):
    """``array[index] = value`` written atomically (release)."""
    _int64_array(array)

    def codegen(context, builder, signature, args):
        pointer = _element(context, builder, signature.args[0], args[0], args[1])
        value = context.cast(builder, args[2], signature.args[2], types.int64)
        builder.store_atomic(value, pointer, "release", 8)
        return context.get_dummy_value()
    return types.none(array, index, value), codegen


@intrinsic
def fetch_add(typingctx, array, index, value):
    """``array[index] += value`` atomically (acquire and release); returns the old value
    (int64)."""
    _int64_array(array)

    def codegen(context, builder, signature, args):
        pointer = _element(context, builder, signature.args[0], args[0], args[1])
        value = context.cast(builder, args[2], signature.args[2], types.int64)
        return builder.atomic_rmw("add", pointer, value, "acq_rel")
    return types.int64(array, index, value), codegen


@intrinsic
def compare_exchange(typingctx, array, index, expected, value):
    """If ``array[index] == expected``, set it to ``value``, atomically (acquire and
    release); returns whether it did (bool)."""
    _int64_array(array)

    def codegen(context, builder, signature, args):
        pointer = _element(context, builder, signature.args[0], args[0], args[1])
        expected = context.cast(builder, args[2], signature.args[2], types.int64)
        value = context.cast(builder, args[3], signature.args[3], types.int64)
        result = builder.cmpxchg(pointer, expected, value, "acq_rel", "acquire")
        return builder.extract_value(result, 1)
    return types.boolean(array, index, expected, value), codegen


@intrinsic
def spin_pause(typingctx):
    """A hint to the core that the thread is spinning (x86 ``pause``; nothing elsewhere):
    the sibling hyper-thread and the memory system are spared some of the loop's load."""
    def codegen(context, builder, signature, args):
        if _X86:
            pause = cgutils.get_or_insert_function(
                builder.module, ir.FunctionType(ir.VoidType(), []), "llvm.x86.sse2.pause")
            builder.call(pause, [])
        return context.get_dummy_value()
    return types.none(), codegen
