"""The packed records that cross between the host and the device (one copy each).

A record is host arrays laid back to back in one uint8 buffer (:func:`pack`); the same
layout read on either side gives views of the same dtypes and shapes (:func:`views`). Fields
of 8-byte types come first, so that every field is aligned.

Records of the CUDA backend: the upload of a search (``CudaBackend._upload_record``), a
search's ``out_*`` arrays (:func:`out_views`, filled on the device, read by
``find_best_refinement``) and the record of a device-resident block (``refine``).

Importing this module touches neither CuPy nor a GPU.
"""

import numpy as np

# the ``out_*`` record of a search in this order: name, dtype, columns (0: one value per
# slot, 1: K, 2: W)
OUT_FIELDS = (("q", np.float64, 0), ("cnt", np.int64, 0), ("g", np.int64, 1),
              ("h", np.int64, 2), ("thr", np.float32, 0), ("label", np.int32, 0),
              ("op", np.int8, 0))


def pack(arrays):
    """(uint8 host record, byte offsets int64 (len(arrays) + 1,)) of ``arrays`` (host, any
    dtypes) back to back. Each array's size in bytes must be a multiple of 8, or the arrays
    after it must have smaller types (their views must stay aligned)."""
    offsets = np.cumsum([0] + [a.nbytes for a in arrays])
    host = np.empty(int(offsets[-1]), np.uint8)
    for a, lo in zip(arrays, offsets):
        host[lo:lo + a.nbytes] = np.ascontiguousarray(a).view(np.uint8).reshape(-1)
    return host, offsets


def views(buffer, arrays, offsets):
    """Views of the uint8 ``buffer`` (host or device) laid out as ``arrays`` at ``offsets``
    (:func:`pack`): the same dtypes and shapes, in a list."""
    return [buffer[lo:lo + a.nbytes].view(a.dtype).reshape(a.shape)
            for a, lo in zip(arrays, offsets)]


def out_bytes(S, K, W):
    """Bytes of the ``out_*`` record of ``S`` slots, ``K`` gradients and ``W`` Hessians."""
    return S * (8 + 8 + 8 * K + 8 * W + 4 + 4 + 1)


def out_views(buffer, S, K, W):
    """(q float64 (S,), op int8 (S,), thr float32 (S,), cnt int64 (S,), label int32 (S,),
    g int64 (S, K), h int64 (S, W)): views of the packed uint8 ``buffer`` (device or host,
    at least ``out_bytes(S, K, W)`` bytes)."""
    fields, lo = {}, 0
    for name, dtype, columns in OUT_FIELDS:
        shape = (S,) if columns == 0 else (S, K if columns == 1 else W)
        size = int(np.prod(shape)) * np.dtype(dtype).itemsize
        fields[name] = buffer[lo:lo + size].view(dtype).reshape(shape)
        lo += size
    return tuple(fields[name] for name in ("q", "op", "thr", "cnt", "label", "g", "h"))
