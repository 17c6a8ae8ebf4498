"""The threshold scan of the CUDA histogram search, for every head mode: the twin of the scan
in ``cpu/histogram_search.py``, with every bin boundary scored in parallel.

Given the histograms of the sampled features (``kernels/histogram.cu``), one search runs:

1. **Tile offsets** (``bin_prefix.tile_offsets``): the bins of slot ``j``
   in short tiles; each tile's sum of each column (the K gradient sums, the W Hessian sums
   and the count; one thread per (slot, tile, column)), those sums scanned into each
   tile's offset, the slot's total last (one block per (slot, column)); left out when a
   slot fits in one tile. Then, **fused** (the default, :func:`fused_layout`), each block
   of the candidates kernel reads its tile's rows once into shared memory and sums them
   onto the tile's offset there (:func:`_table`): the histograms are read once a step
   after they are built. Where a tile's table would not fit in ``TABLE_BYTES`` (wide
   non-decomposable rows), or with ``fused=False``, **the prefix sums are made in place**
   first (``bin_prefix.prefix``: a running sum over each tile from its offset, one thread
   per (slot, tile, column)), which reads and writes every row once more. Integer sums:
   exact, whatever the order, so every sum below equals the CPU's bit for bit. (Until
   2026-11-30 the tiles were about sqrt(B) bins and each thread summed the earlier tiles
   itself: on the H200 two launches of 38,656 threads walking 131 rows each, 180 us a step
   at n = 1e5, 13 % achieved occupancy; until 2026-12-01 the prefix sums were always made
   in place: 371 us of a step's ~1 ms search at n = 1e6 on the H200, 47 us of 0.27 ms at
   n = 1e5.)
2. **Every candidate scored, the best chosen** (``complete_candidates``,
   ``label_candidates`` or ``system_candidates``, a kernel for each kind of head, and each
   with a ``fused_`` twin: ``CANDIDATES``): grid (tiles of ``blockDim.x`` candidates,
   slots; a fused tile's bins are its candidates' bins); candidate ``c = 2 b + side`` of
   slot ``j`` is the boundary below bin ``b`` (numerical: ``<=`` at ``side = 0``, ``>`` at
   ``side = 1``, covering the bins below ``b`` or their complement) or the value of bin
   ``b`` (nominal: ``==``/``!=``). As on the CPU, a candidate exists only at a non-empty bin
   (numerical: with a non-empty bin below it) and only when it is ``thresholds.admissible``:
   it covers at least ``max(1, min_coverage)`` examples and fewer than the rule
   (``state[COVERED]``); it competes only with a quality above ``min_quality``. Each block
   reduces its candidates to the best one (larger quality, then smaller ``c``), writes it,
   its count and the sums of the side it covers to ``part_*[j, tile]``, and the last block
   of the slot to finish (``tickets[j]``, 0 before and after) reduces the tiles in the same
   order and writes the slot's ``out_*`` record.
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
    (R, W), hist_count int64 (R,); sums int64 (S, tiles + 1, C); labels int32 (m,); params
    float64 (P,); work_f float64 (F, rows), work_i int64 (I, rows) (the SeCo partial head's
    label values, F >= m, or the head work of ``multi_output.work_sizes``; rows >= the
    threads of a launch for those heads, else at least 1); run_i int64 (K + W, rows) (a
    nominal bin's own sums for the system heads); the scratch is thread-minor: thread
    ``row``'s values are column ``row``, so a warp's 32 threads reading or writing the same
    value of their rows touch 256 adjacent bytes (2 cache lines), where rows of their own
    (a thread's ``multi_output.work_sizes`` values contiguous, 5 kB for m = 14) put every
    access of a warp on 32 lines; part_q float64
    (S, P), part_c int64 (S, P), part_label int32 (S, P), part_n int64 (S, P), part_g int64
    (S, P, K), part_h int64 (S, P, W) (P >= the slot's tiles, a multiple of 32: each slot's
    entries on cache lines of their own); tickets int32 (S,); out_* as
    in ``cpu/exact_search.py``, out_g (S, K), out_h (S, W).
"""

import math

import numpy as np
from numba import cuda, types

from gpurules.backends.cuda.candidate_quality import (COMPLETE_HEAD, LABEL_HEADS,
                                                      SYSTEM_HEADS, candidate, covered_sum,
                                                      score)
from gpurules.backends.cuda import bin_prefix
from gpurules.backends.cuda.bin_prefix import (prefix, prefix_sums, scan_tile_sums,
                                               tile_offsets, tile_sums)
from gpurules.backends.cuda.device_math import bin_threshold, kernel, signature_types
from gpurules.backends.cuda.search_state import COVERED, FINISHED, NUM_LABELS
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
PAD = 32  # part_* columns are padded to a multiple of this
SCRATCH_BYTES = 64 << 20  # the most head work rows of one candidates launch
# the most shared memory of a fused candidates block's table: a block's 48 kB (the most
# without an opt-in) less its static arrays (``_block_best``'s 20 bytes a thread of BLOCK,
# the ticket; ptxas: 2,576 bytes of static shared memory, with room to spare)
TABLE_BYTES = (48 << 10) - 20 * BLOCK - 64
MAX_GRID_Y = 65535
# heads scored label by label (statistics of width W = K) and those solved as systems
LABEL_HEAD_MODES = (HEAD_COMPLETE, HEAD_SINGLE, HEAD_SECO_SINGLE, HEAD_SECO_PARTIAL)
SYSTEM_HEAD_MODES = (HEAD_MULTI_OUTPUT, HEAD_ND_SINGLE)
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
def _at(rows, K, W, i, c):
    """Where column ``c`` of row ``i`` is in a table of ``rows`` rows (:func:`_table`)."""
    if c < K:
        return i * K + c
    if c < K + W:
        return rows * K + i * W + (c - K)
    return rows * (K + W) + i


@cuda.jit(device=True)
def _table(j, tile, num_tiles, lo, bins, K, W, flat_g, flat_h, hist_count, sums, table):
    """Fill ``table`` (the block's dynamic shared memory, int64, at least (TB + 2) (K + W +
    1) values, TB = blockDim.x / 2) with the prefix rows of candidate tile ``tile`` of slot
    ``j``, whose bins are rows ``lo .. lo + bins - 1`` of the histograms (their own sums;
    ``flat_g``, ``flat_h``: hist_g and hist_h flat): TB + 2 rows of the K gradient sums,
    then the W Hessian sums, then the counts (:func:`_at`); row 0 the sums of the slot's
    bins below the tile (``sums[j, tile]`` of ``bin_prefix.tile_offsets``; 0 for the first
    tile), row 1 + i the inclusive prefix through the tile's bin i (bins past the slot add
    0), row TB + 1 the slot's total (``sums[j, num_tiles]``; with one tile a slot, the
    tile's last prefix). The tile's rows are read once, coalesced (a slot's rows are
    contiguous), then one thread sums each column along the tile. Every thread of the
    block must call it; all of them see the whole table on return."""
    T = cuda.blockDim.x
    TB = T // 2
    rows = TB + 2
    t = cuda.threadIdx.x
    b0 = tile * TB
    n = min(TB, max(bins - b0, 0))  # the tile's bins in the slot
    r0 = lo + b0
    for e in range(t, TB * K, T):  # row 1 + i begins at (1 + i) K
        table[K + e] = flat_g[r0 * K + e] if e < n * K else 0
    for e in range(t, TB * W, T):
        table[rows * K + W + e] = flat_h[r0 * W + e] if e < n * W else 0
    for e in range(t, TB, T):
        table[rows * (K + W) + 1 + e] = hist_count[r0 + e] if e < n else 0
    cuda.syncthreads()
    for c in range(t, K + W + 1, T):
        run = sums[j, tile, c] if num_tiles > 1 else 0
        table[_at(rows, K, W, 0, c)] = run
        for i in range(1, TB + 1):
            at = _at(rows, K, W, i, c)
            run += table[at]
            table[at] = run
        table[_at(rows, K, W, TB + 1, c)] = sums[j, num_tiles, c] if num_tiles > 1 else run
    cuda.syncthreads()


@cuda.jit(device=True)
def _candidate_rows(fused, table, b, j, tile, slot_offset, K, W, flat_g, flat_h, hist_count):
    """(rows, counts, first) of bin ``b`` (in the slot) of slot ``j``, as
    ``candidate_quality.score`` takes them: where the prefix sums of the bins below ``b``,
    through ``b`` and of the whole slot begin, and their counts, in the block's ``table``
    (``fused``, :func:`_table`; tile ``tile`` holds ``b``) or in the histograms (``flat_g``,
    ``flat_h``: hist_g and hist_h flat, prefix sums in place); ``first``: no bin below
    ``b`` (the below offsets are then any row's, not read)."""
    if fused:
        TB = cuda.blockDim.x // 2
        G = (TB + 2) * K
        H = (TB + 2) * (K + W)
        i = b - tile * TB + 1  # row 0: the bins below the tile
        last = TB + 1
        rows = (table, table, (i - 1) * K, i * K, last * K, G + (i - 1) * W, G + i * W,
                G + last * W)
        return rows, (table[H + i - 1], table[H + i], table[H + last]), False
    r = slot_offset[j] + b
    last = slot_offset[j + 1] - 1
    below = r - 1 if b > 0 else r
    rows = (flat_g, flat_h, below * K, r * K, last * K, below * W, r * W, last * W)
    return rows, (hist_count[below], hist_count[r], hist_count[last]), b == 0


@cuda.jit(device=True)
def _keep_best(fused, table, j, tile, c, slot_offset, is_nominal, K, W, flat_g, flat_h,
               hist_count, min_coverage, covered, part_g, part_h, part_n):
    """The block's best candidate ``c`` (-1: none) of slot ``j``: its covered count and the
    sums of the side it covers to ``part_n[j, tile]``, ``part_g[j, tile]``,
    ``part_h[j, tile]``, from the rows it was scored on. Every thread of the block calls
    it."""
    if c < 0:
        return
    b = c // 2
    side = c - 2 * b
    rows, counts, first = _candidate_rows(fused, table, b, j, tile, slot_offset, K, W,
                                          flat_g, flat_h, hist_count)
    t = cuda.threadIdx.x
    if t == 0:
        part_n[j, tile] = candidate(side, first, counts, is_nominal, min_coverage, covered)
    for k in range(t, K + W, cuda.blockDim.x):
        value = covered_sum(rows, K, k, side, is_nominal, first)
        if k < K:
            part_g[j, tile, k] = value
        else:
            part_h[j, tile, k - K] = value


@cuda.jit(device=True)
def _write_out(j, q, c, label, f, slot_offset, bin_offset, bin_min, bin_max, is_nominal,
               part_g, part_h, part_n, out_q, out_op, out_thr, out_cnt, out_label, out_g,
               out_h):
    """Slot ``j``'s record: candidate ``c`` (-1: none) with quality ``q`` and ``label``,
    its threshold and the sums of the side it covers (kept by its block,
    :func:`_keep_best`). Every thread of the block calls it."""
    t = cuda.threadIdx.x
    if c < 0:
        if t == 0:
            out_op[j] = -1
        return
    tile = c // cuda.blockDim.x
    b_slot = c // 2
    side = c - 2 * b_slot
    b = bin_offset[f] + b_slot  # the bin's global index
    if t == 0:
        out_q[j] = q
        out_cnt[j] = part_n[j, tile]
        out_label[j] = label
        if is_nominal:
            out_op[j] = OP_NEQ if side == 1 else OP_EQ
            out_thr[j] = bin_min[b]
        else:
            out_op[j] = OP_GR if side == 1 else OP_LEQ
            out_thr[j] = bin_threshold(bin_min, bin_max, b)
    K = out_g.shape[1]
    for k in range(t, K + out_h.shape[1], cuda.blockDim.x):
        if k < K:
            out_g[j, k] = part_g[j, tile, k]
        else:
            out_h[j, k - K] = part_h[j, tile, k - K]


@cuda.jit(device=True)
def _candidates(kind, fused, tile0, num_tiles, state, features, slot_offset, bin_offset,
                bin_min, bin_max, nominal, flat_g, flat_h, hist_count, sums, all_labels,
                head_mode, params, inv_scale, min_coverage, min_quality, work_f, work_i, run_i,
                part_q, part_c, part_label, part_g, part_h, part_n, tickets, out_q, out_op,
                out_thr, out_cnt, out_label, out_g, out_h):
    """Score the candidates of tiles ``tile0 + blockIdx.x`` (of ``num_tiles`` per slot, over
    all launches) of slots ``blockIdx.y, blockIdx.y + gridDim.y, ...``; the last block of a
    slot writes its record (module docstring). ``kind``: the kernel's kind of head
    (``candidate_quality.score``). ``flat_g``, ``flat_h``: hist_g and hist_h flat (int64
    (R K,), (R W,)). ``fused``: the histograms hold each bin's own sums and ``sums`` the
    tiles' offsets (:func:`_table`), else their prefix sums in place.
    The head's labels: the first ``state[NUM_LABELS]`` of ``all_labels``; ``min_quality``
    float64 (1,); nothing once ``state[FINISHED]`` is set."""
    if state[FINISHED] != 0:
        return
    labels = all_labels[:state[NUM_LABELS]]
    K, W = out_g.shape[1], out_h.shape[1]
    covered = state[COVERED]
    min_quality = min_quality[0]
    t = cuda.threadIdx.x
    tile = tile0 + cuda.blockIdx.x
    row = (cuda.blockIdx.y * cuda.gridDim.x + cuda.blockIdx.x) * cuda.blockDim.x + t
    sq = cuda.shared.array(BLOCK, types.float64)
    sc = cuda.shared.array(BLOCK, types.int64)
    sl = cuda.shared.array(BLOCK, types.int32)
    last = cuda.shared.array(1, types.int32)
    table = cuda.shared.array(0, types.int64)  # fused: the tile's prefix rows
    for j in range(cuda.blockIdx.y, features.shape[0], cuda.gridDim.y):
        f = features[j]
        is_nominal = nominal[f]
        lo = slot_offset[j]
        bins = slot_offset[j + 1] - lo
        if fused:
            _table(j, tile, num_tiles, lo, bins, K, W, flat_g, flat_h, hist_count, sums,
                   table)
        c = tile * cuda.blockDim.x + t
        b = c // 2
        q, label = -math.inf, -1
        if b < bins:
            rows, counts, first = _candidate_rows(fused, table, b, j, tile, slot_offset, K,
                                                  W, flat_g, flat_h, hist_count)
            q, label = score(kind, K, W, c - 2 * b, first, rows, counts, is_nominal, labels,
                             head_mode, params, inv_scale, min_coverage, covered, row,
                             work_f, work_i, run_i)
        if not q > min_quality:
            c = -1
        q, c, label = _block_best(q, c, label, sq, sc, sl)
        if t == 0:
            part_q[j, tile] = q
            part_c[j, tile] = c
            part_label[j, tile] = label
        _keep_best(fused, table, j, tile, c, slot_offset, is_nominal, K, W, flat_g, flat_h,
                   hist_count, min_coverage, covered, part_g, part_h, part_n)
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
                       is_nominal, part_g, part_h, part_n, out_q, out_op, out_thr, out_cnt,
                       out_label, out_g, out_h)
            if t == 0:
                tickets[j] = 0
        cuda.syncthreads()  # ``last`` and the table are reused by the next slot


_KIND = COMPLETE_HEAD  # the kind of head of :func:`_candidates_of` (each variant its own)
_FUSED = True  # whether it sums its tiles' bins itself (each variant its own)


def _candidates_of(tile0, num_tiles, state, features, slot_offset, bin_offset, bin_min,
                   bin_max, nominal, flat_g, flat_h, hist_count, sums, all_labels, head_mode,
                   params, inv_scale, min_coverage, min_quality, work_f, work_i, run_i,
                   part_q, part_c, part_label, part_g, part_h, part_n, tickets, out_q, out_op,
                   out_thr, out_cnt, out_label, out_g, out_h):
    """:func:`_candidates` of the heads of kind ``_KIND``, fused or not (``_FUSED``),
    constants of each kernel made from it (``jit.variants.variant``; ``CANDIDATES``):
    ``complete_candidates`` (``HEAD_COMPLETE``), ``label_candidates`` (any head scored
    label by label, ``LABEL_HEAD_MODES``) and ``system_candidates`` (the heads solved as
    systems, ``SYSTEM_HEAD_MODES``), each with a ``fused_`` twin. One kernel with both
    forms took twice the registers of one (ptxas for sm_90: 176 against 80 for the complete
    head), a search launches one form only."""
    _candidates(_KIND, _FUSED, tile0, num_tiles, state, features, slot_offset, bin_offset,
                bin_min, bin_max, nominal, flat_g, flat_h, hist_count, sums, all_labels,
                head_mode, params, inv_scale, min_coverage, min_quality, work_f, work_i, run_i,
                part_q, part_c, part_label, part_g, part_h, part_n, tickets, out_q, out_op,
                out_thr, out_cnt, out_label, out_g, out_h)


# ptxas gives the fused kernels of the label heads 140 registers a thread where the others
# have 86 to 101 (sm_90; with the bin's rows known to exist it unrolls their loop over the
# labels further): the complete head's is capped where nothing spills, so that four blocks
# of 128 threads fit an SM (``tests/test_cuda_compile.py``; the label heads' spilled 52
# bytes under the same cap and keep 139, three blocks)
MAX_REGISTERS = {(COMPLETE_HEAD, True): 128}


def _candidates_kernel(name, kind, fused):
    """The candidates kernel ``name`` of the heads of ``kind``, ``fused`` or not."""
    return kernel(variant(_candidates_of, name, _KIND=kind, _FUSED=fused),
                  max_registers=MAX_REGISTERS.get((kind, fused)))


label_candidates = _candidates_kernel("label", LABEL_HEADS, False)
complete_candidates = _candidates_kernel("complete", COMPLETE_HEAD, False)
system_candidates = _candidates_kernel("system", SYSTEM_HEADS, False)
fused_label_candidates = _candidates_kernel("fused_label", LABEL_HEADS, True)
fused_complete_candidates = _candidates_kernel("fused_complete", COMPLETE_HEAD, True)
fused_system_candidates = _candidates_kernel("fused_system", SYSTEM_HEADS, True)
# (kind of head, fused) -> the name of its candidates kernel (in ``KERNELS``)
CANDIDATES = {(kind, fused): ("fused_" if fused else "") + name + "_candidates"
              for kind, name in ((LABEL_HEADS, "label"), (COMPLETE_HEAD, "complete"),
                                 (SYSTEM_HEADS, "system")) for fused in (False, True)}


def _signatures():
    i8, i32, i64, f32, f64 = types.int8, types.int32, types.int64, types.float32, types.float64
    vec, mat = signature_types()
    cube = i64[:, :, ::1]
    return {
        # the candidates kernels (each of ``CANDIDATES``); flat_g, flat_h: int64 (R K,),
        # (R W,)
        "candidates": (i64, i64, vec[i32], vec[i64], vec[i64], vec[i64], vec[f32], vec[f32],
                       vec[types.boolean], vec[i64], vec[i64], vec[i64], cube, vec[i32], i64,
                       vec[f64], f64, i64, vec[f64], mat[f64], mat[i64], mat[i64], mat[f64],
                       mat[i64], mat[i32], cube, cube, mat[i64], vec[i32], vec[f64], vec[i8],
                       vec[f32], vec[i64], vec[i32], mat[i64], mat[i64]),
    }


SIGNATURES = dict(bin_prefix.SIGNATURES)
SIGNATURES.update({name: _signatures()["candidates"] for name in CANDIDATES.values()})
# this module's kernels and the ones of ``bin_prefix`` it launches (``search``'s ``kernels``)
KERNELS = {"tile_sums": tile_sums, "scan_tile_sums": scan_tile_sums, "prefix_sums": prefix_sums,
           **{name: globals()[name] for name in CANDIDATES.values()}}


# -- the host side -------------------------------------------------------------------------
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


def table_bytes(T, C):
    """Bytes of dynamic shared memory of a fused candidates block of ``T`` threads over
    histogram rows of ``C`` int64 columns (``_table``: T / 2 bins and two more rows)."""
    return (T // 2 + 2) * C * 8


def fused_layout(B, C, max_threads):
    """(T, tiles) of the fused candidates (each block sums its tile's bins itself,
    ``_table``) for slots of at most ``B`` bins of ``C`` columns, ``candidate_layout``'s
    with fewer threads where its table would exceed ``TABLE_BYTES``; None where even 32
    threads' would (the prefix sums are then made in place)."""
    T, _ = candidate_layout(B, max_threads)
    while T > 32 and table_bytes(T, C) > TABLE_BYTES:
        T //= 2
    if table_bytes(T, C) > TABLE_BYTES:
        return None
    return T, max(1, -(-2 * B // T))


def search(kernels, buffer, view, blocks, max_threads, hists, slots, bins, labels, state, head,
           out, stream=0, scratch_bytes=None, fused=True, flat=None):
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
            arrays: left as they are where the search is fused, else turned into their
            prefix sums.
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
        fused: whether the candidates blocks sum their tiles' bins themselves where their
            tables fit (``fused_layout``), else the prefix sums are made in place first.
        flat: (hist_g, hist_h) as flat device arrays of the same memory, what the
            candidates kernels take (default: ``reshape(-1)`` of ``hists``' two, new
            objects at each call: the backend passes views it keeps).
    """
    scratch_bytes = SCRATCH_BYTES if scratch_bytes is None else scratch_bytes
    features, slot_offset, B = slots
    S = features.shape[0]
    K, W = hists[0].shape[1], hists[1].shape[1]
    h = tuple(view(a) for a in hists)
    head_mode, params, inv_scale, min_coverage, min_quality = head
    F, I, R, per_thread = _scratch_columns(head_mode, labels.shape[0], K, W)
    threads = min(max_threads, SCRATCH_BLOCK) if per_thread else max_threads
    layout = fused_layout(B, K + W + 1, threads) if fused else None
    if layout is None:
        sums = prefix(kernels, buffer, view, blocks, max_threads, hists, slot_offset, B,
                      state, stream)
        (T, num_tiles), shared_bytes = candidate_layout(B, threads), 0
    else:
        T, num_tiles = layout
        sums = tile_offsets(kernels, buffer, view, blocks, max_threads, h, slot_offset,
                             T // 2, num_tiles, state, stream)
        shared_bytes = table_bytes(T, K + W + 1)
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
            buffer("part_g", (S, P, K), np.int64, False),
            buffer("part_h", (S, P, W), np.int64, False),
            buffer("part_n", (S, P), np.int64, False),
            buffer("tickets", (S,), np.int32, True))
    flat = (hists[0].reshape(-1), hists[1].reshape(-1)) if flat is None else flat
    args = (view(features), view(slot_offset), *(view(a) for a in bins),
            *(view(a) for a in flat), h[2], view(sums),
            view(labels), int(head_mode), view(params), float(inv_scale), int(min_coverage),
            view(min_quality), *(view(a) for a in scratch), *(view(a) for a in part),
            *(view(a) for a in out))
    kind = (SYSTEM_HEADS if head_mode in SYSTEM_HEAD_MODES else
            COMPLETE_HEAD if head_mode == HEAD_COMPLETE else LABEL_HEADS)
    candidates = getattr(kernels, CANDIDATES[kind, layout is not None])
    for tile0 in range(0, num_tiles, step):
        x = min(step, num_tiles - tile0)
        candidates[(x, grid_y), T, stream, shared_bytes](tile0, num_tiles, view(state),
                                                         *args)
