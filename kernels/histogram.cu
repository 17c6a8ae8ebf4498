// Histograms of the covered examples' fixed-point statistics per (feature, bin).
//
// Compiled at run time by CuPy (RawModule, NVRTC, --std=c++17); no headers. Layout (see
// gpurules/data/binning.py and gpurules/backends/cpu/statistics.py):
//   features     int64 (S,)     sampled feature indices
//   slot_offset  int64 (S + 1,) sampled feature s owns histogram rows slot_offset[s] ..
//                               slot_offset[s + 1] - 1, one per bin of the feature
//   groups       int64 (1 + G + 1,) the launch's groups: groups[0] = G, then group y
//                               holds the slots groups[1 + y] .. groups[2 + y] - 1
//                               (consecutive, so its rows are too; a group may be empty)
//   bin_index    int32 (A, n)   feature-major, -1 = missing
//   lists        int32 (2, n)   the compacted lists of the covered examples' indices (any
//                               order) that the backend keeps, so the work follows the
//                               coverage: refinement step s = cursor[0] reads list s % 2,
//                               its first lens[s % ring] entries (lens int32 (ring,))
//   weights      int32 (n,)     examples with weight 0 are left out
//   g            int64 (n, K)   row-major fixed-point gradients
//   h            int64 (n, W)   row-major fixed-point Hessians, W >= K: W = K for decomposable
//                               losses and counts, W = K (K + 1) / 2 for the packed Hessians
//                               of non-decomposable losses
//   hist_g int64 (R, K), hist_h int64 (R, W), hist_count int64 (R,), R = slot_offset[S]
// The histograms are sized to the sampled features, not to every feature of the data set.
// For every sampled feature f = features[s] and listed example i with weights[i] != 0 and
// b = bin_index[f, i] >= 0, row r = slot_offset[s] + b receives weights[i] * g[i, :],
// weights[i] * h[i, :] and a count of 1. The sums are integers, so the result does not depend
// on the order of the atomics: it equals the CPU's bit for bit. Signed int64 sums use
// atomicAdd on unsigned long long, which is exact for two's-complement addition.
//
// One pass over the statistics per group: a thread reads an entry (j, c) of the list's
// statistics once and adds it to the histograms of every feature of its group, so g and h
// are read once per group, not once per sampled feature.
//
// Launch configuration, the histogram kernels: any grid (x, y) of NB blocks. The work is
// G x C tasks, C = max(1, NB / G) chunks per group: block b (= blockIdx.y * gridDim.x +
// blockIdx.x) takes the tasks b, b + NB, ...; task t is chunk t / G of group t % G, and a
// chunk's threads stride over the flat index e = j * W + c (list entry j, column c) with
// stride C * blockDim.x, so consecutive threads read consecutive entries of a row of h (and
// of g, whose K columns are the first K of the W). G, the list and its length are read on
// the device, so one launch configuration serves every refinement step of a fit (and a
// captured CUDA graph can replay it); NB >= G keeps every block on one task.
// zero_histograms clears the rows slot_offset[0] .. slot_offset[S] - 1 with any grid (x, y).
//   block = (threads,), a multiple of 32, e.g. 256.
// histogram_shared additionally needs dynamic shared memory of
//   (group_rows * (K + W + 1)) * 8 bytes,
// group_rows = the most rows of one group of the launch (above 48 KiB the kernel's
// MaxDynamicSharedMemorySize must be raised first); features whose bins do not fit go to
// histogram_global (or histogram_global_by_slot, the same sums slot by slot) instead. The
// output rows of the sampled features must be zero before a histogram kernel runs
// (zero_histograms does that).

typedef long long i64;
typedef unsigned long long u64;

__device__ __forceinline__ void add_i64(i64* target, i64 value) {
    atomicAdd(reinterpret_cast<u64*>(target), static_cast<u64>(value));
}

// What flat index e = j * W + k of the list's statistics adds to the histograms of every
// feature, i = covered[j]: nothing when the weight is 0 (valid false), else w * h[i, k] to
// column k of the example's bin, w * g[i, k] too when k < K (always, for W = K), and a count
// of 1 through the entry of column 0.
struct Entry {
    bool valid;
    int i, k;
    i64 g, h;
};

__device__ __forceinline__ Entry entry(i64 e, const int* covered, const int* weights,
                                       const i64* g, const i64* h, int K, int W) {
    Entry x;
    const i64 j = e / W;
    x.i = covered[j];
    const int w = weights[x.i];
    x.valid = w != 0;
    if (!x.valid) return x;
    x.k = static_cast<int>(e - j * W);
    x.g = x.k < K ? static_cast<i64>(w) * g[static_cast<i64>(x.i) * K + x.k] : 0;
    x.h = static_cast<i64>(w) * h[static_cast<i64>(x.i) * W + x.k];
    return x;
}

// The bin of example i for slot s's feature, or -1 (missing, or a feature index out of range).
__device__ __forceinline__ int slot_bin(int s, int i, const i64* features, const int* bin_index,
                                        int n, int A) {
    const i64 f = features[s];
    if (f < 0 || f >= A) return -1;
    return bin_index[f * n + i];
}

extern "C" __global__ void zero_histograms(
        const i64* slot_offset, int S, int K, int W, i64* hist_g, i64* hist_h,
        i64* hist_count) {
    const i64 lo = slot_offset[0], hi = slot_offset[S];
    const i64 block = static_cast<i64>(blockIdx.y) * gridDim.x + blockIdx.x;
    const i64 start = block * blockDim.x + threadIdx.x;
    const i64 stride = static_cast<i64>(gridDim.x) * gridDim.y * blockDim.x;
    for (i64 r = lo * K + start; r < hi * K; r += stride) hist_g[r] = 0;
    for (i64 r = lo * W + start; r < hi * W; r += stride) hist_h[r] = 0;
    for (i64 r = lo + start; r < hi; r += stride) hist_count[r] = 0;
}

// What a launch of a histogram kernel does: the list of the refinement step cursor[0]
// (lists, lens, ring: see the layout above), its flat entries (length * W), the launch's
// groups and how many chunks of entries each group is split into (see the configuration).
struct Work {
    const int* covered;
    i64 total, chunks, tasks, blocks;
    int G;
};

__device__ __forceinline__ Work work_of(const i64* groups, const int* lists, const int* lens,
                                        int ring, const i64* cursor, int n, int W) {
    Work w;
    const i64 step = cursor[0];
    w.covered = lists + (step % 2) * static_cast<i64>(n);
    w.total = static_cast<i64>(lens[step % ring]) * W;
    w.G = static_cast<int>(groups[0]);
    w.blocks = static_cast<i64>(gridDim.x) * gridDim.y;
    w.chunks = w.G > 0 && w.blocks > w.G ? w.blocks / w.G : 1;
    w.tasks = static_cast<i64>(w.G) * w.chunks;
    return w;
}

__device__ __forceinline__ i64 block_index() {
    return static_cast<i64>(blockIdx.y) * gridDim.x + blockIdx.x;
}

// Entry x's contribution to slot s's row of its bin, straight to global memory.
__device__ __forceinline__ void add_global(const Entry& x, int s, const i64* features,
                                           const i64* slot_offset, const int* bin_index,
                                           int K, int W, int n, int A, i64* hist_g,
                                           i64* hist_h, i64* hist_count) {
    const int b = slot_bin(s, x.i, features, bin_index, n, A);
    if (b < 0) return;
    const i64 r = slot_offset[s] + b;
    if (x.k < K) add_i64(&hist_g[r * K + x.k], x.g);
    add_i64(&hist_h[r * W + x.k], x.h);
    if (x.k == 0) add_i64(&hist_count[r], 1);
}

// The global-atomics sums of a launch: one pass over the list's entries for all the slots of
// a group (BySlot false), or one pass per slot (true).
template <bool BySlot>
__device__ __forceinline__ void global_sums(
        const i64* features, const i64* slot_offset, const i64* groups, const int* bin_index,
        const int* lists, const int* lens, int ring, const i64* cursor, const int* weights,
        const i64* g, const i64* h, int K, int W, int n, int A, i64* hist_g, i64* hist_h,
        i64* hist_count) {
    const Work w = work_of(groups, lists, lens, ring, cursor, n, W);
    for (i64 t = block_index(); t < w.tasks; t += w.blocks) {
        const int s0 = static_cast<int>(groups[1 + t % w.G]);
        const int s1 = static_cast<int>(groups[2 + t % w.G]);
        const i64 start = (t / w.G) * blockDim.x + threadIdx.x;
        for (int p0 = s0; p0 < s1; p0 = BySlot ? p0 + 1 : s1) {  // the passes
            const int p1 = BySlot ? p0 + 1 : s1;  // the pass's slots: p0 .. p1 - 1
            for (i64 e = start; e < w.total; e += w.chunks * blockDim.x) {
                const Entry x = entry(e, w.covered, weights, g, h, K, W);
                if (!x.valid) continue;
                for (int s = p0; s < p1; ++s)
                    add_global(x, s, features, slot_offset, bin_index, K, W, n, A, hist_g,
                               hist_h, hist_count);
            }
        }
    }
}

// Global-atomics variant: every contribution is added straight to global memory, each entry
// to every slot of its group in turn.
extern "C" __global__ void histogram_global(
        const i64* features, const i64* slot_offset, const i64* groups, const int* bin_index,
        const int* lists, const int* lens, int ring, const i64* cursor, const int* weights,
        const i64* g, const i64* h, int K, int W, int n, int A, i64* hist_g, i64* hist_h,
        i64* hist_count) {
    global_sums<false>(features, slot_offset, groups, bin_index, lists, lens, ring, cursor,
                       weights, g, h, K, W, n, A, hist_g, hist_h, hist_count);
}

// The same sums one slot at a time: a block adds its share of the entries to slot s0's rows,
// then to s0 + 1's, ... Blocks are not synchronised, but all of them move through the slots
// at about the same pace, so the rows being added to are about one slot's: they can stay in
// the L2 cache where every slot's together do not (n = 1e6 on an H200: about 168,000 bins x
// 41 int64 columns = 55 MB a slot, 386 MB for 7; histogram_global there moved 4.8 GB of
// DRAM a step for its scattered atomics). The price: each entry's statistics are read once
// per slot of its group instead of once.
extern "C" __global__ void histogram_global_by_slot(
        const i64* features, const i64* slot_offset, const i64* groups, const int* bin_index,
        const int* lists, const int* lens, int ring, const i64* cursor, const int* weights,
        const i64* g, const i64* h, int K, int W, int n, int A, i64* hist_g, i64* hist_h,
        i64* hist_count) {
    global_sums<true>(features, slot_offset, groups, bin_index, lists, lens, ring, cursor,
                      weights, g, h, K, W, n, A, hist_g, hist_h, hist_count);
}

// An exact 64-bit sum in shared memory from native 32-bit atomics (a 64-bit shared atomicAdd
// compiles to a compare-and-swap loop): entry r is the pair (low word, high word) at
// words[2 r], words[2 r + 1]. Adding v adds its low 32 bits to the low word; the atomic
// returns the old low word, so the one addition that wraps it around knows it and adds the
// carry, with v's high 32 bits, to the high word. Every addition is exact modulo 2^64
// (two's complement), whatever the order, so the sums equal the CPU's bit for bit.
__device__ __forceinline__ void add_split(unsigned* words, i64 r, i64 value) {
    const u64 v = static_cast<u64>(value);
    const unsigned low = static_cast<unsigned>(v);
    const unsigned old = atomicAdd(&words[2 * r], low);
    const unsigned high = static_cast<unsigned>(v >> 32) + (old + low < old ? 1u : 0u);
    if (high != 0) atomicAdd(&words[2 * r + 1], high);
}

__device__ __forceinline__ i64 split_sum(const unsigned* words, i64 r) {
    return static_cast<i64>((static_cast<u64>(words[2 * r + 1]) << 32) | words[2 * r]);
}

// Shared-memory privatised variant: each block accumulates its share of the examples for the
// features of one group in shared memory (entries as add_split pairs; layout for the group's
// rows: g [rows * K], h [rows * W], count [rows]) and flushes the non-zero entries to global
// memory with 64-bit atomics.
extern "C" __global__ void histogram_shared(
        const i64* features, const i64* slot_offset, const i64* groups, const int* bin_index,
        const int* lists, const int* lens, int ring, const i64* cursor, const int* weights,
        const i64* g, const i64* h, int K, int W, int n, int A, i64* hist_g, i64* hist_h,
        i64* hist_count) {
    extern __shared__ i64 shared[];
    unsigned* words = reinterpret_cast<unsigned*>(shared);
    const Work w = work_of(groups, lists, lens, ring, cursor, n, W);
    for (i64 t = block_index(); t < w.tasks; t += w.blocks) {
        const int s0 = static_cast<int>(groups[1 + t % w.G]);
        const int s1 = static_cast<int>(groups[2 + t % w.G]);
        const i64 first = (t / w.G) * blockDim.x;  // the chunk's first entry
        if (s0 >= s1 || first >= w.total) continue;  // the same for every thread of the block
        const i64 start = first + threadIdx.x;
        const i64 lo = slot_offset[s0];
        const i64 rows = slot_offset[s1] - lo;
        unsigned* sh_g = words;
        unsigned* sh_h = words + 2 * rows * K;
        unsigned* sh_count = sh_h + 2 * rows * W;
        for (i64 r = threadIdx.x; r < 2 * rows * (K + W + 1); r += blockDim.x) words[r] = 0;
        __syncthreads();
        for (i64 e = start; e < w.total; e += w.chunks * blockDim.x) {
            const Entry x = entry(e, w.covered, weights, g, h, K, W);
            if (!x.valid) continue;
            for (int s = s0; s < s1; ++s) {
                const int b = slot_bin(s, x.i, features, bin_index, n, A);
                if (b < 0) continue;
                const i64 r = slot_offset[s] - lo + b;
                if (x.k < K) add_split(sh_g, r * K + x.k, x.g);
                add_split(sh_h, r * W + x.k, x.h);
                if (x.k == 0) add_split(sh_count, r, 1);
            }
        }
        __syncthreads();
        for (i64 r = threadIdx.x; r < rows * W; r += blockDim.x) {
            const i64 sum_h = split_sum(sh_h, r);
            if (r < rows * K) {
                const i64 sum_g = split_sum(sh_g, r);
                if (sum_g != 0) add_i64(&hist_g[lo * K + r], sum_g);
            }
            if (sum_h != 0) add_i64(&hist_h[lo * W + r], sum_h);
        }
        for (i64 r = threadIdx.x; r < rows; r += blockDim.x) {
            const i64 count = split_sum(sh_count, r);
            if (count != 0) add_i64(&hist_count[lo + r], count);
        }
        __syncthreads();  // the shared buffers are reused for the next task
    }
}

// ---- Wide features from their examples in bin order (histogram_sorted) -------------------
// Additional layout:
//   sorted      int64 (F, n)   for F of the data set's features, each feature's examples in
//                              order of their bins (missing ones, bin -1, first), entry p
//                              = (bin << 32) | example, the bin as a signed 32-bit int
//                              (pack_sorted); feature f's row is sorted_row[f] (int64 (A,),
//                              -1 = none)
//   mask         int32 (n,)    example i is covered iff mask[i] == cursor[1] (the backend
//                              keeps it with the covered lists)
//   span         int           sorted positions per task, a multiple of 32
// histogram_sorted sums the slots groups[1] .. groups[1 + G] - 1 of the launch from their
// features' sorted rows. A task is a span of one row's positions and a pass of PASS_COLUMNS
// of the K + W + 1 columns (g, h, count); a warp walks its span in order with a running sum
// per column, and where the bin changes writes the run's sums to the bin's row: a plain store
// for a bin wholly inside the span (no other warp has it), an atomic add for the span's first
// and last bins (they may continue in the neighbouring spans). So no atomics contend, the
// rows are written in order (once, not once per example), and the work on the statistics
// follows the coverage: a covered example's row is read once per slot, a position costs 12
// bytes (its entry and mask word) whatever the coverage. The sums are integers: bit for bit
// those of the other kernels. Launch: any grid (x, y) of blocks of whole warps, with
// blockDim.x * 16 bytes of dynamic shared memory (each warp's staged entries); the slots'
// rows zeroed first. Tasks t = warp, warp + warps, ...: slot t / (spans * passes), span
// (t / passes) % spans, pass t % passes.

constexpr int WARP = 32;
constexpr int LANE_COLUMNS = 2;  // columns a lane sums in a pass
constexpr int PASS_COLUMNS = WARP * LANE_COLUMNS;
constexpr int UNROLL = 4;  // staged entries whose statistics are loaded before any is added

__device__ __forceinline__ int entry_bin(i64 v) { return static_cast<int>(v >> 32); }

__device__ __forceinline__ int entry_example(i64 v) {
    return static_cast<int>(static_cast<unsigned>(static_cast<u64>(v) & 0xffffffffu));
}

// Column c of example i's histogram contribution with weight w: the gradient (c < K), the
// Hessian (c < K + W), the count (c = K + W); 0 past the columns.
__device__ __forceinline__ i64 column_value(int c, int i, i64 w, const i64* g, const i64* h,
                                            int K, int W) {
    if (c < K) return w * g[static_cast<i64>(i) * K + c];
    if (c < K + W) return w * h[static_cast<i64>(i) * W + (c - K)];
    return c == K + W ? 1 : 0;
}

// Where column c of histogram row r is, or nullptr past the columns.
__device__ __forceinline__ i64* column_at(i64 r, int c, int K, int W, i64* hist_g,
                                          i64* hist_h, i64* hist_count) {
    if (c < K) return &hist_g[r * K + c];
    if (c < K + W) return &hist_h[r * W + (c - K)];
    return c == K + W ? &hist_count[r] : nullptr;
}

// A warp's run of consecutive entries of one bin: the lane's sums of its columns c0,
// c0 + WARP, ...
struct Run {
    int bin;
    i64 sum[LANE_COLUMNS];
};

// Write a run's non-zero sums to its bin's row of the slot whose rows start at row0: added
// atomically where another warp may have the bin (contended), else stored.
__device__ __forceinline__ void flush(const Run& run, bool contended, i64 row0, int c0, int K,
                                      int W, i64* hist_g, i64* hist_h, i64* hist_count) {
    if (run.bin < 0) return;
    for (int k = 0; k < LANE_COLUMNS; ++k) {
        i64* at = column_at(row0 + run.bin, c0 + k * WARP, K, W, hist_g, hist_h, hist_count);
        if (at == nullptr || run.sum[k] == 0) continue;
        if (contended) add_i64(at, run.sum[k]);
        else *at = run.sum[k];
    }
}

// The staged entries j0 .. j0 + UNROLL - 1 (< m) of a warp: their statistics loaded first
// (independent loads in flight together), then added to the run in order; a new bin flushes
// the run before it (first_bin, last_bin: the span's, whose rows other warps may share).
__device__ __forceinline__ void add_staged(Run& run, const i64* entries, const i64* weights,
                                           int j0, int m, int first_bin, int last_bin,
                                           i64 row0, int c0, const i64* g, const i64* h,
                                           int K, int W, i64* hist_g, i64* hist_h,
                                           i64* hist_count) {
    i64 value[UNROLL][LANE_COLUMNS];
    for (int u = 0; u < UNROLL; ++u) {
        const int j = j0 + u;
        const i64 w = j < m ? weights[j] : 0;
        for (int k = 0; k < LANE_COLUMNS; ++k)
            value[u][k] = w != 0 ? column_value(c0 + k * WARP, entry_example(entries[j]), w,
                                                g, h, K, W) : 0;
    }
    for (int u = 0; u < UNROLL; ++u) {
        const int j = j0 + u;
        if (j >= m || weights[j] == 0) continue;
        const int b = entry_bin(entries[j]);
        if (b != run.bin) {
            flush(run, run.bin == first_bin || run.bin == last_bin, row0, c0, K, W, hist_g,
                  hist_h, hist_count);
            run.bin = b;
            for (int k = 0; k < LANE_COLUMNS; ++k) run.sum[k] = 0;
        }
        for (int k = 0; k < LANE_COLUMNS; ++k) run.sum[k] += value[u][k];
    }
}

extern "C" __global__ void histogram_sorted(
        const i64* features, const i64* slot_offset, const i64* groups, const i64* sorted,
        const i64* sorted_row, const int* mask, const i64* cursor, const int* weights,
        const i64* g, const i64* h, int K, int W, int n, int A, int span, i64* hist_g,
        i64* hist_h, i64* hist_count) {
    extern __shared__ i64 shared[];
    const int lane = static_cast<int>(threadIdx.x) % WARP;
    const int warps_per_block = static_cast<int>(blockDim.x) / WARP;
    i64* entries = shared + (static_cast<int>(threadIdx.x) / WARP) * 2 * WARP;
    i64* stage_weights = entries + WARP;  // 0: not covered, or missing, or weight 0
    const int s0 = static_cast<int>(groups[1]);
    const int s1 = static_cast<int>(groups[1 + groups[0]]);
    const i64 spans = (static_cast<i64>(n) + span - 1) / span;
    const int passes = (K + W + 1 + PASS_COLUMNS - 1) / PASS_COLUMNS;
    const i64 tasks = static_cast<i64>(s1 - s0) * spans * passes;
    const i64 warps = static_cast<i64>(gridDim.x) * gridDim.y * warps_per_block;
    const i64 indicator = cursor[1];
    for (i64 t = block_index() * warps_per_block + threadIdx.x / WARP; t < tasks;
         t += warps) {
        const int s = s0 + static_cast<int>(t / (spans * passes));
        const i64 p0 = (t / passes) % spans * span;
        const int c0 = static_cast<int>(t % passes) * PASS_COLUMNS + lane;
        const i64 f = features[s];
        const i64 row = f >= 0 && f < A ? sorted_row[f] : -1;
        if (row < 0) continue;  // the same for the whole warp
        const i64* list = sorted + row * n;
        const i64 p1 = p0 + span < n ? p0 + span : n;
        const int first_bin = entry_bin(list[p0]), last_bin = entry_bin(list[p1 - 1]);
        const i64 row0 = slot_offset[s];
        Run run;
        run.bin = -1;
        for (int k = 0; k < LANE_COLUMNS; ++k) run.sum[k] = 0;
        for (i64 p = p0; p < p1; p += WARP) {
            i64 v = -1, w = 0;
            if (p + lane < p1) {
                v = list[p + lane];
                const int i = entry_example(v);
                if (entry_bin(v) >= 0 && mask[i] == indicator) w = weights[i];
            }
            entries[lane] = v;
            stage_weights[lane] = w;
            __syncwarp();
            const int m = p1 - p < WARP ? static_cast<int>(p1 - p) : WARP;
            for (int j0 = 0; j0 < m; j0 += UNROLL)
                add_staged(run, entries, stage_weights, j0, m, first_bin, last_bin, row0, c0,
                           g, h, K, W, hist_g, hist_h, hist_count);
            __syncwarp();  // the entries are staged anew next
        }
        flush(run, run.bin == first_bin || run.bin == last_bin, row0, c0, K, W, hist_g,
              hist_h, hist_count);
    }
}

// One feature's row of `sorted` from its examples in bin order: out[p] = (bins[order[p]] <<
// 32) | order[p] for p < n (order int64 (n,), a permutation of 0 .. n - 1 with bins[order]
// non-decreasing; bins int32 (n,), the feature's bin_index row). Any grid (x, y).
extern "C" __global__ void pack_sorted(const i64* order, const int* bins, int n, i64* out) {
    const i64 stride = static_cast<i64>(gridDim.x) * gridDim.y * blockDim.x;
    for (i64 p = block_index() * blockDim.x + threadIdx.x; p < n; p += stride) {
        const i64 i = order[p];
        const u64 bin = static_cast<u64>(static_cast<i64>(bins[i]));
        out[p] = static_cast<i64>((bin << 32) | static_cast<u64>(i));
    }
}
