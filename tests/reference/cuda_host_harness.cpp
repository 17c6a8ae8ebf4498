// Runs the CUDA C kernels of kernels/histogram.cu on the host, for tests without a GPU.
//
// Built by tests/test_cuda_simulator.py as a shared library (g++ -std=c++20 -pthread
// -DKERNEL_SOURCE='"<path>/histogram.cu"') and called through ctypes. The CUDA built-ins are
// emulated: every block of a grid runs after the other, the threads of a block run
// concurrently as std::threads, __syncthreads is a std::barrier (__syncwarp one per warp of
// 32 threads), atomicAdd is a
// std::atomic_ref fetch_add, and the block's dynamic shared memory is one buffer whose bytes
// past the launch's shared_mem are checked to be untouched. Like the Numba simulator, this
// cannot find races between blocks; it does run the threads of a block truly in parallel.

#include <atomic>
#include <barrier>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

struct uint3 { unsigned x, y, z; };
struct dim3 { unsigned x, y, z; };

static thread_local uint3 threadIdx, blockIdx;
static thread_local dim3 blockDim, gridDim;
static std::barrier<>* block_barrier = nullptr;
static thread_local std::barrier<>* warp_barrier = nullptr;

static void __syncthreads() { block_barrier->arrive_and_wait(); }
static void __syncwarp() { warp_barrier->arrive_and_wait(); }

static unsigned long long atomicAdd(unsigned long long* target, unsigned long long value) {
    return std::atomic_ref<unsigned long long>(*target).fetch_add(value);
}

static unsigned atomicAdd(unsigned* target, unsigned value) {
    return std::atomic_ref<unsigned>(*target).fetch_add(value);
}

constexpr std::size_t SHARED_WORDS = 1 << 16;
constexpr long long SENTINEL = 0x5a5a5a5a5a5a5a5aLL;
extern "C" {
alignas(16) long long shared[SHARED_WORDS];  // the kernels' `extern __shared__` buffer
}

#define __global__
#define __device__
#define __shared__
#define __forceinline__ inline

#include KERNEL_SOURCE

template <class Body>
static int launch(unsigned gx, unsigned gy, unsigned bx, std::size_t shared_bytes, Body body) {
    if (shared_bytes > sizeof(shared)) return -2;
    const std::size_t used = (shared_bytes + 7) / 8;
    for (unsigned by_ = 0; by_ < gy; ++by_) {
        for (unsigned bx_ = 0; bx_ < gx; ++bx_) {
            for (std::size_t w = 0; w < SHARED_WORDS; ++w) shared[w] = SENTINEL;
            std::barrier<> barrier(bx);
            block_barrier = &barrier;
            std::vector<std::unique_ptr<std::barrier<>>> warps;
            for (unsigned first = 0; first < bx; first += 32)
                warps.push_back(std::make_unique<std::barrier<>>(bx - first < 32 ? bx - first
                                                                                 : 32));
            std::vector<std::thread> threads;
            for (unsigned tx = 0; tx < bx; ++tx) {
                std::barrier<>* warp = warps[tx / 32].get();
                threads.emplace_back([=] {
                    warp_barrier = warp;
                    threadIdx = {tx, 0, 0};
                    blockIdx = {bx_, by_, 0};
                    blockDim = {bx, 1, 1};
                    gridDim = {gx, gy, 1};
                    body();
                });
            }
            for (auto& t : threads) t.join();
            for (std::size_t w = used; w < SHARED_WORDS; ++w) {
                if (shared[w] != SENTINEL) return -1;  // wrote past its shared memory
            }
        }
    }
    return 0;
}

extern "C" int run_zero_histograms(unsigned gx, unsigned gy, unsigned bx,
                                   const i64* slot_offset, int S, int K, int W, i64* hist_g,
                                   i64* hist_h, i64* hist_count) {
    return launch(gx, gy, bx, 0, [=] {
        zero_histograms(slot_offset, S, K, W, hist_g, hist_h, hist_count);
    });
}

extern "C" int run_histogram(int kernel_id, unsigned gx, unsigned gy, unsigned bx,
                             std::size_t shared_bytes, const i64* features,
                             const i64* slot_offset, const i64* groups, const int* bin_index,
                             const int* lists, const int* lens, int ring, const i64* cursor,
                             const int* weights, const i64* g, const i64* h, int K, int W,
                             int n, int A, i64* hist_g, i64* hist_h, i64* hist_count) {
    // 0: histogram_global, 1: histogram_shared, 2: histogram_global_by_slot
    auto kernel = kernel_id == 1 ? histogram_shared
                  : kernel_id == 2 ? histogram_global_by_slot : histogram_global;
    return launch(gx, gy, bx, kernel_id == 1 ? shared_bytes : 0, [=] {
        kernel(features, slot_offset, groups, bin_index, lists, lens, ring, cursor, weights,
               g, h, K, W, n, A, hist_g, hist_h, hist_count);
    });
}

extern "C" int run_histogram_sorted(unsigned gx, unsigned gy, unsigned bx,
                                    std::size_t shared_bytes, const i64* features,
                                    const i64* slot_offset, const i64* groups,
                                    const i64* sorted, const i64* sorted_row, const int* mask,
                                    const i64* cursor, const int* weights, const i64* g,
                                    const i64* h, int K, int W, int n, int A, int span,
                                    i64* hist_g, i64* hist_h, i64* hist_count) {
    return launch(gx, gy, bx, shared_bytes, [=] {
        histogram_sorted(features, slot_offset, groups, sorted, sorted_row, mask, cursor,
                         weights, g, h, K, W, n, A, span, hist_g, hist_h, hist_count);
    });
}

extern "C" int run_pack_sorted(unsigned gx, unsigned gy, unsigned bx, const i64* order,
                               const int* bins, int n, i64* out) {
    return launch(gx, gy, bx, 0, [=] { pack_sorted(order, bins, n, out); });
}
