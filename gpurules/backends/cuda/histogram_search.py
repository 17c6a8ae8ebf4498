"""The threshold scan of the CUDA histogram search, for every head mode: the twin of the scan
in ``cpu/histogram_search.py``, with every bin boundary scored in parallel.

Given the histograms of the sampled features (``kernels/histogram.cu``), one search runs:

1. **Prefix sums in place** (:func:`_tile_sums`, :func:`_scan_tile_sums`,
   :func:`_prefix_sums`): every histogram column of slot ``j`` (the K gradient sums, the W
   Hessian sums and the count) becomes its inclusive prefix over the slot's bins, computed
   by short tiles of ``tile`` bins: each tile's sum (one thread per (slot, tile, column)),
   those sums scanned into each tile's offset (one block per (slot, column)), then a
   running sum over each tile from its offset (one thread per (slot, tile, column)); the
   first two launches are left out when a slot fits in one tile. Integer sums: exact,
   whatever the order, so every sum below equals the CPU's bit for bit. (Until
   2026-11-30 the tiles were about sqrt(B) bins and each thread summed the earlier tiles
   itself: on the H200 two launches of 38,656 threads walking 131 rows each, 180 us a step
   at n = 1e5, 13 % achieved occupancy.)
2. **Every candidate scored, the best chosen** (``complete_candidates``,
   ``label_candidates`` or ``system_candidates``, a kernel for each kind of
   head): grid (tiles of
   ``blockDim.x`` candidates, slots); candidate ``c = 2 b + side`` of slot ``j`` is the
   boundary below bin ``b`` (numerical: ``<=`` at ``side = 0``, ``>`` at ``side = 1``,
   covering the bins below ``b`` or their complement) or the value of bin ``b`` (nominal:
   ``==``/``!=``). As on the CPU, a candidate exists only at a non-empty bin (numerical:
   with a non-empty bin below it) and only when it is ``thresholds.admissible``: it covers
   at least ``max(1, min_coverage)`` examples and fewer than the rule (``state[COVERED]``);
   it competes only with a quality above ``min_quality``. Each block reduces its
   candidates to the best one (larger quality, then smaller ``c``), writes it to
   ``part_*[j, tile]``, and the last block of the slot to finish (``tickets[j]``, 0 before
   and after) reduces the tiles in the same order and writes the slot's ``out_*`` record.
   The order "larger quality, then smaller ``c``" is the CPU scan's: a later candidate must
   be strictly better (numerical), or be better, then have a smaller threshold, then the
   smaller op (nominal; bins are in ascending order of their values, ``==`` before ``!=``).

The quality of a candidate is ``objectives.quality.side_quality``'s, computed by the thread
(``candidate_quality``).

Shapes and dtypes (S sampled features, R = slot_offset[S] histogram rows, K labels, W >= K
Hessian columns, m head labels, C = K + W + 1 histogram columns, T threads per block):
    features int64 (S,); slot_offset int64 (S + 1,) (slot j's rows slot_offset[j] ..
    slot_offset[j + 1] - 1, one per bin of features[j]); bin_offset int64 (A + 1,);
    bin_min, bin_max float32 (B,); nominal bool (A,); hist_g int64 (R, K), hist_h int64
    (R, W), hist_count int64 (R,); sums int64 (S, tiles, C); labels int32 (m,); params
    float64 (P,); work_f float64 (F, rows), work_i int64 (I, rows) (the SeCo partial head's
    label values, F >= m, or the head work of ``multi_output.work_sizes``; rows >= the
    threads of a launch for those heads, else at least 1); run_i int64 (K + W, rows) (a
    nominal bin's own sums for the system heads); the scratch is thread-minor: thread
    ``row``'s values are column ``row``, so a warp's 32 threads reading or writing the same
    value of their rows touch 256 adjacent bytes (2 cache lines), where rows of their own
    (a thread's ``multi_output.work_sizes`` values contiguous, 5 kB for m = 14) put every
    access of a warp on 32 lines; part_q float64
    (S, P), part_c int64 (S, P), part_label int32 (S, P) (P >= the slot's tiles, a multiple
    of 32: each slot's entries on cache lines of their own); tickets int32 (S,); out_* as
    in ``cpu/exact_search.py``, out_g (S, K), out_h (S, W).
"""

import math

import numpy as np
from numba import cuda, types

from gpurules.backends.cuda.candidate_quality import (COMPLETE_HEAD, LABEL_HEADS,
                                                      SYSTEM_HEADS, candidate, covered_run,
                                                      score)
from gpurules.backends.cuda.device_math import bin_threshold, kernel, signature_types
from gpurules.conditions import OP_EQ, OP_GR, OP_LEQ, OP_NEQ
from gpurules.jit.variants import variant
from gpurules.objectives.heads import HEAD_COMPLETE, HEAD_SINGLE
from gpurules.objectives.heuristics import HEAD_SECO_PARTIAL, HEAD_SECO_SINGLE
from gpurules.objectives.multi_output import HEAD_MULTI_OUTPUT, HEAD_ND_SINGLE, work_sizes

BLOCK = 128  # the most threads per block of the candidates (a power of two)
# ... and of the heads whose threads work through scratch of their own (the systems, SeCo's
# partial head: kilobytes a thread, thousands of dependent steps): small blocks spread a
# small search over every SM (yeast: 7 slots of at most 495 bins made 56 blocks of 128
# threads for the H200's 132 SMs; 217 of 32), and each SM's L1 holds fewer threads' scratch
SCRATCH_BLOCK = 32
SCAN_BLOCK = 1024  # the most threads per block of _scan_tile_sums
MIN_TILE = 16  # bins per tile of the prefix sums, at least ...
MAX_TILES = 2048  # ... and as many as it takes to keep a slot within this many tiles
PAD = 32  # part_* columns are padded to a multiple of this
SCRATCH_BYTES = 64 << 20  # the most head work rows of one candidates launch
MAX_GRID_Y = 65535
MAX_GRID = 1 << 16  # the most blocks of _scan_tile_sums (grid-stride)
# heads scored label by label (statistics of width W = K) and those solved as systems
LABEL_HEAD_MODES = (HEAD_COMPLETE, HEAD_SINGLE, HEAD_SECO_SINGLE, HEAD_SECO_PARTIAL)
SYSTEM_HEAD_MODES = (HEAD_MULTI_OUTPUT, HEAD_ND_SINGLE)
# the search's state record, int32 (STATE_SIZE,), on the device: steps a device-resident
# block recorded, whether the rule is finished (the kernels then do nothing), how many of
# the labels are searched, whether a single-label head's label was fixed, how many examples
# the rule covers (non-zero weight: a candidate must cover fewer, ``thresholds.admissible``);
# read by the search kernels, written by a block's selection (``refine.py``)
STEPS, FINISHED, NUM_LABELS, LABEL_FIXED, COVERED = range(5)
STATE_SIZE = 5


# -- 1. prefix sums ------------------------------------------------------------------------
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
    """``sums[j, t, c]`` = the sum of column ``c`` over tile ``t`` of slot ``j``'s rows
    (nothing once ``state`` says the rule is finished)."""
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
    for e in range(cuda.grid(1), S * tiles * C, cuda.gridsize(1)):
        j, t, c, lo, hi = _tile_item(e, slot_offset, tiles, tile, C)
        run = sums[j, t, c] if tiles > 1 else 0
        for r in range(lo, hi):
            run += _get(hist_g, hist_h, hist_count, r, c)
            _put(hist_g, hist_h, hist_count, r, c, run)


# -- 2. candidates (scored by ``candidate_quality``) ----------------------------------
@cuda.jit(device=True)
def _before(q, c, other_q, other_c):
    """Whether candidate (q, c) precedes (other_q, other_c): a candidate (c >= 0) before
    none, then the larger quality, then the smaller index."""
    if c < 0:
        return False
    return other_c < 0 or q > other_q or (q == other_q and c < other_c)


@cuda.jit(device=True)
def _block_best(q, c, label, sq, sc, sl):
    """The block's first candidate by :func:`_before` among the threads' (q, c, label);
    every thread gets it. ``sq``, ``sc``, ``sl``: shared scratch of blockDim.x (a power of
    two) entries. Every thread of the block must call it."""
    t = cuda.threadIdx.x
    sq[t] = q
    sc[t] = c
    sl[t] = label
    cuda.syncthreads()
    half = cuda.blockDim.x // 2
    while half > 0:
        if t < half and _before(sq[t + half], sc[t + half], sq[t], sc[t]):
            sq[t] = sq[t + half]
            sc[t] = sc[t + half]
            sl[t] = sl[t + half]
        cuda.syncthreads()
        half //= 2
    q, c, label = sq[0], sc[0], sl[0]
    cuda.syncthreads()  # the scratch is reused by the next call
    return q, c, label


@cuda.jit(device=True)
def _write_out(j, q, c, label, f, slot_offset, bin_offset, bin_min, bin_max, is_nominal,
               hist_g, hist_h, hist_count, min_coverage, covered, out_q, out_op, out_thr,
               out_cnt, out_label, out_g, out_h):
    """Slot ``j``'s record: candidate ``c`` (-1: none) with quality ``q`` and ``label``,
    its threshold and the sums of the side it covers. Every thread of the block calls it."""
    t = cuda.threadIdx.x
    if c < 0:
        if t == 0:
            out_op[j] = -1
        return
    r, side, count = candidate(j, c, slot_offset, is_nominal, hist_count, min_coverage,
                               covered)
    b = bin_offset[f] + r - slot_offset[j]  # the bin's global index
    first = r == slot_offset[j]
    last = slot_offset[j + 1] - 1
    if t == 0:
        out_q[j] = q
        out_cnt[j] = count
        out_label[j] = label
        if is_nominal:
            out_op[j] = OP_NEQ if side == 1 else OP_EQ
            out_thr[j] = bin_min[b]
        else:
            out_op[j] = OP_GR if side == 1 else OP_LEQ
            out_thr[j] = bin_threshold(bin_min, bin_max, b)
    K = hist_g.shape[1]
    for k in range(t, K + hist_h.shape[1], cuda.blockDim.x):
        if k < K:
            run = covered_run(hist_g, r, k, is_nominal, first)
            out_g[j, k] = hist_g[last, k] - run if side == 1 else run
        else:
            run = covered_run(hist_h, r, k - K, is_nominal, first)
            out_h[j, k - K] = hist_h[last, k - K] - run if side == 1 else run


@cuda.jit(device=True)
def _candidates(kind, tile0, num_tiles, state, features, slot_offset, bin_offset, bin_min,
                bin_max, nominal, hist_g, hist_h, hist_count, all_labels, head_mode, params,
                inv_scale, min_coverage, min_quality, work_f, work_i, run_i, part_q, part_c,
                part_label, tickets, out_q, out_op, out_thr, out_cnt, out_label, out_g,
                out_h):
    """Score the candidates of tiles ``tile0 + blockIdx.x`` (of ``num_tiles`` per slot, over
    all launches) of slots ``blockIdx.y, blockIdx.y + gridDim.y, ...``; the last block of a
    slot writes its record (module docstring). ``kind``: the kernel's kind of head
    (``candidate_quality.score``). The head's labels: the first ``state[NUM_LABELS]`` of
    ``all_labels``; ``min_quality`` float64 (1,); nothing once ``state[FINISHED]`` is
    set."""
    if state[FINISHED] != 0:
        return
    labels = all_labels[:state[NUM_LABELS]]
    covered = state[COVERED]
    min_quality = min_quality[0]
    t = cuda.threadIdx.x
    tile = tile0 + cuda.blockIdx.x
    row = (cuda.blockIdx.y * cuda.gridDim.x + cuda.blockIdx.x) * cuda.blockDim.x + t
    sq = cuda.shared.array(BLOCK, types.float64)
    sc = cuda.shared.array(BLOCK, types.int64)
    sl = cuda.shared.array(BLOCK, types.int32)
    last = cuda.shared.array(1, types.int32)
    for j in range(cuda.blockIdx.y, features.shape[0], cuda.gridDim.y):
        f = features[j]
        is_nominal = nominal[f]
        c = tile * cuda.blockDim.x + t
        q, label = score(kind, j, c, slot_offset, is_nominal, hist_g, hist_h, hist_count,
                         labels, head_mode, params, inv_scale, min_coverage, covered, row,
                         work_f, work_i, run_i)
        if not q > min_quality:
            c = -1
        q, c, label = _block_best(q, c, label, sq, sc, sl)
        if t == 0:
            part_q[j, tile] = q
            part_c[j, tile] = c
            part_label[j, tile] = label
        cuda.threadfence()  # the tile's result is visible to every block ...
        cuda.syncthreads()  # ... before its ticket is drawn
        if t == 0:
            last[0] = cuda.atomic.add(tickets, j, 1) == num_tiles - 1
        cuda.syncthreads()
        if last[0]:
            q, c, label = -math.inf, -1, -1
            for u in range(t, num_tiles, cuda.blockDim.x):
                if _before(part_q[j, u], part_c[j, u], q, c):
                    q, c, label = part_q[j, u], part_c[j, u], part_label[j, u]
            q, c, label = _block_best(q, c, label, sq, sc, sl)
            _write_out(j, q, c, label, f, slot_offset, bin_offset, bin_min, bin_max,
                       is_nominal, hist_g, hist_h, hist_count, min_coverage, covered, out_q,
                       out_op, out_thr, out_cnt, out_label, out_g, out_h)
            if t == 0:
                tickets[j] = 0
        cuda.syncthreads()  # ``last`` is reused by the next slot


_KIND = COMPLETE_HEAD  # the kind of head of :func:`_candidates_of` (each variant its own)


def _candidates_of(tile0, num_tiles, state, features, slot_offset, bin_offset, bin_min,
                   bin_max, nominal, hist_g, hist_h, hist_count, all_labels, head_mode, params,
                   inv_scale, min_coverage, min_quality, work_f, work_i, run_i, part_q, part_c,
                   part_label, tickets, out_q, out_op, out_thr, out_cnt, out_label, out_g,
                   out_h):
    """:func:`_candidates` of the heads of kind ``_KIND``, a constant of each kernel made
    from it (``jit.variants.variant``): ``complete_candidates`` (``HEAD_COMPLETE``),
    ``label_candidates`` (any head scored label by label, ``LABEL_HEAD_MODES``) and
    ``system_candidates`` (the heads solved as systems, ``SYSTEM_HEAD_MODES``)."""
    _candidates(_KIND, tile0, num_tiles, state, features, slot_offset, bin_offset, bin_min,
                bin_max, nominal, hist_g, hist_h, hist_count, all_labels, head_mode, params,
                inv_scale, min_coverage, min_quality, work_f, work_i, run_i, part_q, part_c,
                part_label, tickets, out_q, out_op, out_thr, out_cnt, out_label, out_g, out_h)


tile_sums = kernel(_tile_sums)
scan_tile_sums = kernel(_scan_tile_sums)
prefix_sums = kernel(_prefix_sums)
label_candidates = kernel(variant(_candidates_of, "label", _KIND=LABEL_HEADS))
complete_candidates = kernel(variant(_candidates_of, "complete", _KIND=COMPLETE_HEAD))
system_candidates = kernel(variant(_candidates_of, "system", _KIND=SYSTEM_HEADS))


def _signatures():
    i8, i32, i64, f32, f64 = types.int8, types.int32, types.int64, types.float32, types.float64
    vec, mat = signature_types()
    cube = i64[:, :, ::1]
    hists = (mat[i64], mat[i64], vec[i64])
    return {
        "tile_sums": (vec[i32], vec[i64], i64) + hists + (cube,),
        "scan_tile_sums": (vec[i32], cube),
        "prefix_sums": (vec[i32], vec[i64], i64, cube) + hists,
        "label_candidates": (i64, i64, vec[i32], vec[i64], vec[i64], vec[i64], vec[f32],
                              vec[f32], vec[types.boolean]) + hists
        + (vec[i32], i64, vec[f64], f64, i64, vec[f64], mat[f64], mat[i64], mat[i64], mat[f64],
           mat[i64], mat[i32], vec[i32], vec[f64], vec[i8], vec[f32], vec[i64], vec[i32],
           mat[i64], mat[i64]),
    }


SIGNATURES = _signatures()
SIGNATURES["complete_candidates"] = SIGNATURES["label_candidates"]
SIGNATURES["system_candidates"] = SIGNATURES["label_candidates"]
KERNELS = {"tile_sums": tile_sums, "scan_tile_sums": scan_tile_sums,
           "prefix_sums": prefix_sums, "label_candidates": label_candidates,
           "complete_candidates": complete_candidates, "system_candidates": system_candidates}


# -- the host side -------------------------------------------------------------------------
def prefix_layout(B):
    """(tile, tiles): bins per tile and tiles per slot of the prefix launches for slots of at
    most ``B`` bins: ``MIN_TILE`` bins a tile, more where a slot would need more than
    ``MAX_TILES`` tiles; short tiles make many threads with short serial loops."""
    tile = max(MIN_TILE, -(-B // MAX_TILES))
    return tile, max(1, -(-B // tile))


def candidate_layout(B, max_threads):
    """(threads per block T, tiles per slot) of the candidates kernels for slots of at most
    ``B`` bins (2 B candidates); T is a power of two in [32, min(BLOCK, max_threads)]."""
    T = 32
    while T < min(BLOCK, max_threads) and T < 2 * B:
        T *= 2
    return T, max(1, -(-2 * B // T))


def _scratch_columns(head_mode, m, K, W):
    """(F, I, run values) of a thread's scratch, and whether the head needs scratch of its own
    per thread (else every array has one column)."""
    if head_mode in SYSTEM_HEAD_MODES:
        F, I = work_sizes(m)
        return max(F, 1), max(I, 1), K + W, True
    if head_mode == HEAD_SECO_PARTIAL:
        return max(m, 1), 1, 1, True
    return 1, 1, 1, False


def initial_state(num_labels, covered):
    """The host state record of a search over ``num_labels`` labels for a rule covering
    ``covered`` examples of non-zero weight (``totals[2]``): no step recorded, not finished,
    every label a candidate (int32 (STATE_SIZE,))."""
    state = np.zeros(STATE_SIZE, np.int32)
    state[NUM_LABELS] = num_labels
    state[COVERED] = covered
    return state


def prefix(kernels, buffer, view, blocks, max_threads, hists, slot_offset, B, state,
           stream=0):
    """Launch the prefix sums (module docstring, 1.): every column of the S slots of
    ``hists`` becomes its inclusive prefix over the slot's rows. Arguments as
    :func:`search`'s; ``slot_offset`` device int64 (S + 1,), ``B`` the largest slot's bins
    (host int)."""
    S = slot_offset.shape[0] - 1
    C = hists[0].shape[1] + hists[1].shape[1] + 1
    h = tuple(view(a) for a in hists)
    tile, tiles = prefix_layout(B)
    sums = buffer("prefix_sums", (S, tiles, C), np.int64, False)
    grid = blocks(S * tiles * C)
    if tiles > 1:
        kernels.tile_sums[grid, max_threads, stream](view(state), view(slot_offset), tile, *h,
                                                     view(sums))
        # a thread per tile at most: more would only idle (a whole block of them, simulated
        # thread by thread, when a fit has a few tiles a slot)
        kernels.scan_tile_sums[min(S * C, MAX_GRID), min(max_threads, SCAN_BLOCK, tiles),
                               stream](view(state), view(sums))
    kernels.prefix_sums[grid, max_threads, stream](view(state), view(slot_offset), tile,
                                                   view(sums), *h)


def search(kernels, buffer, view, blocks, max_threads, hists, slots, bins, labels, state, head,
           out, stream=0, scratch_bytes=None):
    """Launch the search over histograms that ``kernels/histogram.cu`` built: on return
    (asynchronously, in launch order) ``out`` holds each slot's best condition.

    Args:
        kernels: this module, or a stand-in whose ``tile_sums``, ``scan_tile_sums``,
            ``prefix_sums`` and the ``*_candidates`` kernels launch them (``counters``
            counts the launches so).
        buffer: ``buffer(name, shape, dtype, zero_new)`` -> a device array (contents
            undefined unless newly allocated with ``zero_new``), reused across calls.
        view: device array -> kernel argument.
        blocks: ``blocks(work)`` -> the grid of a grid-stride launch over ``work`` items.
        max_threads: the most threads per block (a multiple of 32).
        hists: (hist_g int64 (R, K), hist_h int64 (R, W), hist_count int64 (R,)) device
            arrays, turned into their prefix sums.
        slots: (features, slot_offset) device int64 (S,), (S + 1,), and B, the largest bin
            count of the sampled features (host int).
        bins: (bin_offset, bin_min, bin_max, nominal) device arrays.
        labels: device int32 (m,), the head's labels; the first ``state[NUM_LABELS]`` of
            them are searched.
        state: device int32 (STATE_SIZE,) (:func:`initial_state`); the kernels do nothing
            once ``state[FINISHED]`` is set.
        head: (head_mode, params device float64 (P,), inv_scale, min_coverage,
            min_quality device float64 (1,)).
        out: the ``out_*`` device arrays (q, op, thr, cnt, label, g, h) of S slots.
        stream: the Numba stream of every launch (0: Numba's default stream).
        scratch_bytes: the most bytes of per-thread scratch of one launch (default
            ``SCRATCH_BYTES``, read at the call).
    """
    scratch_bytes = SCRATCH_BYTES if scratch_bytes is None else scratch_bytes
    features, slot_offset, B = slots
    S = features.shape[0]
    K, W = hists[0].shape[1], hists[1].shape[1]
    prefix(kernels, buffer, view, blocks, max_threads, hists, slot_offset, B, state, stream)
    h = tuple(view(a) for a in hists)

    head_mode, params, inv_scale, min_coverage, min_quality = head
    F, I, R, per_thread = _scratch_columns(head_mode, labels.shape[0], K, W)
    T, num_tiles = candidate_layout(B, min(max_threads, SCRATCH_BLOCK) if per_thread else
                                    max_threads)
    grid_y = min(S, MAX_GRID_Y)
    step = num_tiles
    if per_thread:
        step = max(1, min(num_tiles, scratch_bytes // ((F + I + R) * 8 * T * grid_y)))
    rows = step * grid_y * T if per_thread else 1
    scratch = (buffer("work_f", (F, rows), np.float64, False),  # thread-minor (docstring)
               buffer("work_i", (I, rows), np.int64, False),
               buffer("run_i", (R, rows), np.int64, False))
    P = -(-num_tiles // PAD) * PAD
    part = (buffer("part_q", (S, P), np.float64, False),
            buffer("part_c", (S, P), np.int64, False),
            buffer("part_label", (S, P), np.int32, False),
            buffer("tickets", (S,), np.int32, True))
    args = (view(features), view(slot_offset), *(view(a) for a in bins), *h, view(labels),
            int(head_mode), view(params), float(inv_scale), int(min_coverage),
            view(min_quality), *(view(a) for a in scratch), *(view(a) for a in part),
            *(view(a) for a in out))
    candidates = (kernels.system_candidates if head_mode in SYSTEM_HEAD_MODES else
                  kernels.complete_candidates if head_mode == HEAD_COMPLETE else
                  kernels.label_candidates)
    for tile0 in range(0, num_tiles, step):
        x = min(step, num_tiles - tile0)
        candidates[(x, grid_y), T, stream](tile0, num_tiles, view(state), *args)
