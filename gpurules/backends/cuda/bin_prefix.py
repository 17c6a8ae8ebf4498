"""Sums over the bins of the CUDA histogram search's slots (``histogram_search``): each
tile's sums and their scan into each tile's offset and each slot's total
(:func:`tile_offsets`), and the prefix sums in place (:func:`prefix`).

The bins of slot ``j`` are cut into short tiles of ``tile`` bins: each tile's sum of each
column (the K gradient sums, the W Hessian sums and the count; one thread per (slot, tile,
column)), those sums scanned into each tile's offset with the slot's total last (one block
per (slot, column)); the prefix sums in place then run over each tile from its offset (one
thread per (slot, tile, column)). Integer sums: exact, whatever the order, so every sum
equals the CPU's bit for bit.

Shapes and dtypes (S sampled features, R = slot_offset[S] histogram rows, C = K + W + 1
columns): slot_offset int64 (S + 1,); hist_g int64 (R, K), hist_h int64 (R, W),
hist_count int64 (R,); sums int64 (S, tiles + 1, C); state int32 (``search_state``).
"""

import numpy as np
from numba import cuda, types

from gpurules.backends.cuda.device_math import kernel, signature_types
from gpurules.backends.cuda.search_state import FINISHED

SCAN_BLOCK = 1024  # the most threads per block of _scan_tile_sums
MIN_TILE = 16  # bins per tile of the prefix sums, at least ...
MAX_TILES = 2048  # ... and as many as it takes to keep a slot within this many tiles
MAX_GRID = 1 << 16  # the most blocks of _scan_tile_sums (grid-stride)


@cuda.jit(device=True)
def _get(hist_g, hist_h, hist_count, r, c):
    """Column ``c`` of histogram row ``r``: hist_g, then hist_h, then the count."""
    K = hist_g.shape[1]
    if c < K:
        return hist_g[r, c]
    if c < K + hist_h.shape[1]:
        return hist_h[r, c - K]
    return hist_count[r]


@cuda.jit(device=True)
def _put(hist_g, hist_h, hist_count, r, c, value):
    """Set column ``c`` of histogram row ``r`` (see :func:`_get`)."""
    K = hist_g.shape[1]
    if c < K:
        hist_g[r, c] = value
    elif c < K + hist_h.shape[1]:
        hist_h[r, c - K] = value
    else:
        hist_count[r] = value


@cuda.jit(device=True)
def _tile_item(e, slot_offset, tiles, tile, C):
    """Item ``e`` of the prefix launches: (slot j, tile t, column c, first row, row stop)."""
    c = e % C
    jt = e // C
    t = jt % tiles
    j = jt // tiles
    lo = slot_offset[j] + t * tile
    return j, t, c, lo, min(lo + tile, slot_offset[j + 1])


def _tile_sums(state, slot_offset, tile, hist_g, hist_h, hist_count, sums):
    """``sums[j, t, c]`` = the sum of column ``c`` over tile ``t`` of slot ``j``'s rows, 0
    for the last ``t`` (past every slot's rows: after :func:`_scan_tile_sums`, the slot's
    total); nothing once ``state`` says the rule is finished."""
    if state[FINISHED] != 0:
        return
    S, tiles, C = sums.shape
    for e in range(cuda.grid(1), S * tiles * C, cuda.gridsize(1)):
        j, t, c, lo, hi = _tile_item(e, slot_offset, tiles, tile, C)
        total = 0
        for r in range(lo, hi):
            total += _get(hist_g, hist_h, hist_count, r, c)
        sums[j, t, c] = total


def _scan_tile_sums(state, sums):
    """``sums[j, t, c]`` becomes the sum of tiles ``0 .. t - 1`` of column ``c`` of slot
    ``j`` (an exclusive scan over ``t``), one block per (j, c) pair (grid-stride): each
    thread scans a run of consecutive tiles, the block scans the runs' totals in shared
    memory (at most ``SCAN_BLOCK`` threads), each thread writes its run's offsets (nothing
    once ``state`` says the rule is finished)."""
    if state[FINISHED] != 0:
        return
    S, tiles, C = sums.shape
    T = cuda.blockDim.x
    i = cuda.threadIdx.x
    per = (tiles + T - 1) // T
    lo = i * per
    hi = min(lo + per, tiles)
    part = cuda.shared.array(SCAN_BLOCK, types.int64)
    for p in range(cuda.blockIdx.x, S * C, cuda.gridDim.x):
        j = p // C
        c = p - j * C
        total = 0
        for t in range(lo, hi):
            total += sums[j, t, c]
        part[i] = total
        cuda.syncthreads()
        d = 1
        while d < T:  # inclusive scan of the runs' totals (Hillis and Steele)
            before = part[i - d] if i >= d else 0
            cuda.syncthreads()
            part[i] += before
            cuda.syncthreads()
            d *= 2
        run = part[i] - total
        for t in range(lo, hi):
            own = sums[j, t, c]
            sums[j, t, c] = run
            run += own
        cuda.syncthreads()  # ``part`` is reused by the next pair


def _prefix_sums(state, slot_offset, tile, sums, hist_g, hist_h, hist_count):
    """Every column of every slot becomes its inclusive prefix over the slot's rows: the
    tile's offset (``sums[j, t, c]`` after :func:`_scan_tile_sums`; not read when there
    is one tile per slot), then a running sum over the tile (nothing once ``state`` says
    the rule is finished)."""
    if state[FINISHED] != 0:
        return
    S, tiles, C = sums.shape
    tiles -= 1  # the last: the slot's total
    for e in range(cuda.grid(1), S * tiles * C, cuda.gridsize(1)):
        j, t, c, lo, hi = _tile_item(e, slot_offset, tiles, tile, C)
        run = sums[j, t, c] if tiles > 1 else 0
        for r in range(lo, hi):
            run += _get(hist_g, hist_h, hist_count, r, c)
            _put(hist_g, hist_h, hist_count, r, c, run)


tile_sums = kernel(_tile_sums)
scan_tile_sums = kernel(_scan_tile_sums)
prefix_sums = kernel(_prefix_sums)


def _signatures():
    i32, i64 = types.int32, types.int64
    vec, mat = signature_types()
    cube = i64[:, :, ::1]
    hists = (mat[i64], mat[i64], vec[i64])
    return {"tile_sums": (vec[i32], vec[i64], i64) + hists + (cube,),
            "scan_tile_sums": (vec[i32], cube),
            "prefix_sums": (vec[i32], vec[i64], i64, cube) + hists}


SIGNATURES = _signatures()
KERNELS = {"tile_sums": tile_sums, "scan_tile_sums": scan_tile_sums,
           "prefix_sums": prefix_sums}


# -- the host side -------------------------------------------------------------------------
def prefix_layout(B):
    """(tile, tiles): bins per tile and tiles per slot of the prefix launches for slots of at
    most ``B`` bins: ``MIN_TILE`` bins a tile, more where a slot would need more than
    ``MAX_TILES`` tiles; short tiles make many threads with short serial loops."""
    tile = max(MIN_TILE, -(-B // MAX_TILES))
    return tile, max(1, -(-B // tile))


def tile_offsets(kernels, buffer, view, blocks, max_threads, h, slot_offset, tile, tiles,
                  state, stream):
    """``sums`` device int64 (S, tiles + 1, C) after the tile sums and their scan: each
    tile's exclusive offset per column, the slot's total last; not launched (the contents
    undefined) where a slot is one tile. ``h``: the histograms' kernel views; the other
    arguments as ``histogram_search.search``'s (``kernels``: a module or stand-in with
    this module's kernels)."""
    S = slot_offset.shape[0] - 1
    C = h[0].shape[1] + h[1].shape[1] + 1
    sums = buffer("prefix_sums", (S, tiles + 1, C), np.int64, False)
    if tiles > 1:
        kernels.tile_sums[blocks(S * (tiles + 1) * C), max_threads, stream](
            view(state), view(slot_offset), tile, *h, view(sums))
        # a thread per tile at most: more would only idle (a whole block of them, simulated
        # thread by thread, when a fit has a few tiles a slot)
        kernels.scan_tile_sums[min(S * C, MAX_GRID), min(max_threads, SCAN_BLOCK, tiles + 1),
                               stream](view(state), view(sums))
    return sums


def prefix(kernels, buffer, view, blocks, max_threads, hists, slot_offset, B, state,
           stream=0):
    """Launch the prefix sums in place: every column of the S slots of ``hists`` becomes its
    inclusive prefix over the slot's rows. Arguments as ``histogram_search.search``'s;
    ``slot_offset`` device int64 (S + 1,), ``B`` the largest slot's bins (host int).
    Returns the tile sums' device buffer (:func:`tile_offsets`)."""
    S = slot_offset.shape[0] - 1
    C = hists[0].shape[1] + hists[1].shape[1] + 1
    h = tuple(view(a) for a in hists)
    tile, tiles = prefix_layout(B)
    sums = tile_offsets(kernels, buffer, view, blocks, max_threads, h, slot_offset, tile,
                        tiles, state, stream)
    kernels.prefix_sums[blocks(S * tiles * C), max_threads, stream](
        view(state), view(slot_offset), tile, view(sums), *h)
    return sums
