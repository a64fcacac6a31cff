// How fast can anything move the bytes of issue 14's two short cases, at their own size?
//
//   LayerNorm bf16 8192 x 1024: 16 MiB read + 16 MiB written a call (87 % of calibrate's 1 GiB
//     copy line; it matches our float4 copy kernel at the same size, session 11);
//   MSE bf16 8192 x 4096: two 64 MiB inputs read a call (92 % of the 1 GiB read line).
//
//   nvcc -O3 -arch=sm_90 -o same_size_bounds benches/probes/same_size_bounds.cu && ./same_size_bounds [mse]
//   (mse: the 1 GiB lines and the MSE section only)
//
// Every candidate is timed the way apex-host's batch mode times a kernel: DRAM-cold buffer sets
// (together at least 3 x L2, used round-robin), G calls captured in one CUDA graph, the graph
// replayed 15 times between events; microseconds a call, median (and min) over the replays, and
// the same figure as a share of the best 1 GiB line of this run (copy: memcpy or a copy kernel;
// read: the read kernel). Candidates:
//   memcpy            cudaMemcpyAsync device to device (the driver's copy)
//   copy U/B [pdl]    16-byte copy, U vectors a thread in flight, B blocks of 256 a SM, striding
//                     (B = 0: one pass, as many blocks as the vectors need); pdl: launched with
//                     programmatic stream serialization, waiting at the start and letting the
//                     next call in at once (as nn_ops launches)
//   tma S             cp.async.bulk loads of 16 KiB chunks into S shared-memory buffers and bulk
//                     stores out of them, one issuing thread a block, 3 blocks a SM
//   read2 U/B         both 64 MiB inputs read as MSE reads them (a float sum of squared
//                     differences a thread), each block's partial stored (no grid reduction)
//   read1 U/B         the same bytes as one 128 MiB input
//   mse U/B MODE      read2 plus MSE's grid reduction: publish (each block's partial in a 64-bit
//                     slot with a landed bit, nobody collects), block0 (block 0 collects after its
//                     own share: nn_ops' scheme), last (a counter elects the last block), block0
//                     nowait (block 0 reads the slots once without waiting: wrong sums, timing
//                     only), extra collector (one more block, with no share, collects), warp0
//                     polls all (block 0's first warp alone polls every slot each round, warp
//                     reduction), block0 sleeps (block 0 as nn_ops, 100 ns between polls)
//   read2 U/B hH, mse U/B hH block0
//                     read2 and mse block0 with cache hints on the 16-byte loads (ldh<H>: 1 nc,
//                     2 nc + L2 256-byte prefetch, 3 as 2 + L1 no_allocate, 4 as 3 with an L2
//                     evict_first policy, 5 nc + L2 128-byte prefetch). Fifteenth session, call
//                     2: h1-h3 took MSE from 46.2 to 45.1-45.3 us; not the hints themselves
//                     (plain loads are ld.global.nc already) but the loads' order in the SASS:
//                     at 32 registers ptxas issues a step's loads in halves
//   mse bulk SxCH     MSE by TMA bulk loads: each block streams its balanced contiguous share of
//                     both inputs through S shared-memory stages of CH bytes an input, sums out
//                     of shared memory, block 0 collects (or publish only). Fifteenth session,
//                     call 1: 50.5-55.9 us, slower than every register kernel
//   ln tma SxCH       LayerNorm bf16 8192 x 1024 (gamma, beta) on the TMA copy's pipeline: chunks
//                     of rows land in S buffers by bulk copies, warps normalise rows in place,
//                     one thread bulk-stores the chunk (checked against the host on every 37th
//                     row)
// Each copy candidate's output is compared with its input once before it is timed.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CHECK(x)                                                                             \
    do {                                                                                     \
        cudaError_t e_ = (x);                                                                \
        if (e_ != cudaSuccess) {                                                             \
            std::printf("%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));   \
            std::exit(1);                                                                    \
        }                                                                                    \
    } while (0)

__device__ __forceinline__ void pdl_start() {
    asm volatile("griddepcontrol.wait;" ::: "memory");
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
}

template <int U, bool PDL>
__global__ void __launch_bounds__(256) k_copy(const uint4* __restrict__ in, uint4* __restrict__ out, long long n) {
    if (PDL) pdl_start();
    const long long step = (long long)gridDim.x * 256 * U;
    for (long long b = (long long)blockIdx.x * 256 * U + threadIdx.x; b < n; b += step) {
        uint4 v[U];
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const long long i = b + (long long)u * 256;
            if (i < n) v[u] = in[i];
        }
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const long long i = b + (long long)u * 256;
            if (i < n) out[i] = v[u];
        }
    }
}

__device__ __forceinline__ float sq_diff(uint4 a, uint4 b) {
    // 8 bf16 lanes each: (a - b)^2 in f32, as MSE computes them.
    const unsigned int wa[4] = {a.x, a.y, a.z, a.w}, wb[4] = {b.x, b.y, b.z, b.w};
    float acc = 0.0f;
#pragma unroll
    for (int k = 0; k < 4; ++k) {
        const float d0 = __uint_as_float(wa[k] << 16) - __uint_as_float(wb[k] << 16);
        const float d1 = __uint_as_float(wa[k] & 0xffff0000u) - __uint_as_float(wb[k] & 0xffff0000u);
        acc = fmaf(d0, d0, fmaf(d1, d1, acc));
    }
    return acc;
}

// A 16-byte load with cache hints. H: 0 plain; 1 ld.global.nc; 2 nc, L2 256-byte prefetch;
// 3 nc, L1 no_allocate, L2 256-byte prefetch; 4 as 3 with an L2 evict_first policy; 5 nc, L2 128-byte prefetch.
template <int H>
__device__ __forceinline__ uint4 ldh(const uint4* p) {
    uint4 r;
    if (H == 0) return *p;
    if (H == 1) asm volatile("ld.global.nc.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "l"(p));
    if (H == 2) asm volatile("ld.global.nc.L2::256B.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "l"(p));
    if (H == 3) asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "l"(p));
    if (H == 4) {
        unsigned long long pol;
        asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
        asm volatile("ld.global.nc.L1::no_allocate.L2::cache_hint.L2::256B.v4.u32 {%0,%1,%2,%3}, [%4], %5;"
                     : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
                     : "l"(p), "l"(pol));
    }
    if (H == 5) asm volatile("ld.global.nc.L2::128B.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "l"(p));
    return r;
}

// The sum of one value a thread over the 256-thread block, valid on thread 0: warp shuffles, then
// thread 0 adds the eight warps' sums in order.
template <typename T>
__device__ __forceinline__ T block_sum(T v) {
    __shared__ T red[8];
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = v;
    __syncthreads();
    T s = 0;
    if (threadIdx.x == 0)
        for (int w = 0; w < 8; ++w) s += red[w];
    return s;
}

// Two inputs of n vectors (TWO) or one of 2n (one stream), each block's float partial to out.
template <int U, bool TWO, int H = 0>
__global__ void __launch_bounds__(256) k_read(const uint4* __restrict__ a, const uint4* __restrict__ b,
                                              float* __restrict__ out, long long n) {
    pdl_start();
    float acc = 0.0f;
    const long long total = TWO ? n : 2 * n, step = (long long)gridDim.x * 256 * U;
    for (long long s = (long long)blockIdx.x * 256 * U + threadIdx.x; s < total; s += step) {
        uint4 x[U], y[U];
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const long long i = s + (long long)u * 256;
            const bool ok = i < total;
            if (TWO) {
                x[u] = ok ? ldh<H>(a + i) : make_uint4(0, 0, 0, 0);
                y[u] = ok ? ldh<H>(b + i) : make_uint4(0, 0, 0, 0);
            } else {
                x[u] = ok ? ldh<H>(a + i) : make_uint4(0, 0, 0, 0);
                y[u] = make_uint4(0, 0, 0, 0);
            }
        }
#pragma unroll
        for (int u = 0; u < U; ++u) acc += sq_diff(x[u], y[u]);
    }
    const float s = block_sum(acc);
    if (threadIdx.x == 0) out[blockIdx.x] = s;
}

// The block's float partial `acc` (one per thread) summed and published in its 64-bit slot with
// the landed bit (nn_ops' partial_publish). Every thread of the 256 calls it.
__device__ __forceinline__ void publish_partial(float acc, unsigned long long* slots) {
    const float s = block_sum(acc);
    if (threadIdx.x == 0) {
        const unsigned long long word = (1ull << 63) | __float_as_uint(s);
        asm volatile("st.relaxed.gpu.global.b64 [%0], %1;" ::"l"(slots + blockIdx.x), "l"(word) : "memory");
    }
}

// The collecting block: its threads poll slots i, i + 256, ... below nslots until each has
// landed (POLL 0: wait; 1: read once, no wait; 2: wait, 100 ns between polls), return them to 0,
// and sum them in f64; thread 0 writes the mean over the 8 n elements to loss.
template <int POLL>
__device__ __forceinline__ void collect_slots(unsigned long long* slots, unsigned int nslots, float* loss, long long n) {
    double sum = 0.0;
    for (unsigned int i = threadIdx.x; i < nslots; i += 256) {
        unsigned long long w;
        do {
            asm volatile("ld.relaxed.gpu.global.b64 %0, [%1];" : "=l"(w) : "l"(slots + i) : "memory");
            if (POLL == 2 && (w >> 63) == 0ull) __nanosleep(100);
        } while (POLL != 1 && (w >> 63) == 0ull);
        slots[i] = 0ull;
        sum += (double)__uint_as_float((unsigned int)w);
    }
    const double t = block_sum(sum);
    if (threadIdx.x == 0) loss[0] = (float)(t / (double)(8 * n));
}

// MSE's grid reduction on top of read2: COLLECT 1: every block publishes its partial in a
// 64-bit slot with a landed bit and block 0 collects them after its own share (nn_ops'
// partial_publish / partial_collect); 2: the last block to finish (a counter) collects.
template <int U, int COLLECT, int H = 0>
__global__ void __launch_bounds__(256) k_mse(const uint4* __restrict__ a, const uint4* __restrict__ b,
                                             float* __restrict__ loss, unsigned long long* __restrict__ slots,
                                             unsigned int* __restrict__ counter, long long n) {
    pdl_start();
    float acc = 0.0f;
    const unsigned int workers = COLLECT == 4 ? gridDim.x - 1 : gridDim.x;
    const long long step = (long long)workers * 256 * U;
    for (long long s = (long long)blockIdx.x * 256 * U + threadIdx.x; blockIdx.x < workers && s < n; s += step) {
        uint4 x[U], y[U];
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const long long i = s + (long long)u * 256;
            const bool ok = i < n;
            x[u] = ok ? ldh<H>(a + i) : make_uint4(0, 0, 0, 0);
            y[u] = ok ? ldh<H>(b + i) : make_uint4(0, 0, 0, 0);
        }
#pragma unroll
        for (int u = 0; u < U; ++u) acc += sq_diff(x[u], y[u]);
    }
    __shared__ unsigned int last;
    publish_partial(acc, slots);
    if (COLLECT == 2 && threadIdx.x == 0) {
        __threadfence();
        last = atomicAdd(counter, 1u) == gridDim.x - 1;
    }
    bool collects = COLLECT == 4 ? blockIdx.x == gridDim.x - 1 : blockIdx.x == 0;
    if (COLLECT == 2) {
        __syncthreads();
        collects = last;
    }
    if (COLLECT == 0 || !collects) return;
    if (COLLECT == 5) {
        // Warp 0 alone: every lane polls its slots (lane, lane + 32, ...) together each round.
        if (threadIdx.x >= 32) return;
        constexpr int PER = 24;  // up to 768 slots
        unsigned long long w[PER];
        bool pending;
        do {
#pragma unroll
            for (int k = 0; k < PER; ++k) {
                const unsigned int i = min(threadIdx.x + 32u * k, gridDim.x - 1);
                asm volatile("ld.relaxed.gpu.global.b64 %0, [%1];" : "=l"(w[k]) : "l"(slots + i) : "memory");
            }
            pending = false;
#pragma unroll
            for (int k = 0; k < PER; ++k) pending |= threadIdx.x + 32u * k < gridDim.x && (w[k] >> 63) == 0ull;
        } while (__any_sync(0xffffffffu, pending));
        double t = 0.0;
#pragma unroll
        for (int k = 0; k < PER; ++k) {
            const unsigned int i = threadIdx.x + 32u * k;
            if (i < gridDim.x) {
                slots[i] = 0ull;
                t += (double)__uint_as_float((unsigned int)w[k]);
            }
        }
        for (int o = 16; o > 0; o >>= 1) t += __shfl_xor_sync(0xffffffffu, t, o);
        if (threadIdx.x == 0) loss[0] = (float)(t / (double)(8 * n));
        return;
    }
    collect_slots<COLLECT == 3 ? 1 : COLLECT == 6 ? 2 : 0>(slots, COLLECT == 4 ? gridDim.x - 1 : gridDim.x, loss, n);
    if (COLLECT == 2 && threadIdx.x == 0) *counter = 0u;
}

// ---- TMA bulk copy: one thread a block (a warp launched), S buffers of CH bytes.
__device__ __forceinline__ unsigned int sa(const void* p) { return (unsigned int)__cvta_generic_to_shared(p); }

template <int S, int CH>
__global__ void __launch_bounds__(32) k_tma(const char* __restrict__ in, char* __restrict__ out, long long chunks) {
    pdl_start();
    extern __shared__ __align__(128) char buf[];
    __shared__ __align__(8) unsigned long long bar[S];
    if (threadIdx.x != 0) return;
    for (int s = 0; s < S; ++s) asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(sa(&bar[s])) : "memory");
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    auto load = [&](long long c, int s) {
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(sa(&bar[s])), "r"(CH) : "memory");
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                         sa(buf + s * CH)),
                     "l"(in + c * CH), "r"(CH), "r"(sa(&bar[s]))
                     : "memory");
    };
    const long long first = blockIdx.x, stride = gridDim.x;
    long long mine = first < chunks ? (chunks - 1 - first) / stride + 1 : 0;
    for (int s = 0; s < S - 1 && s < mine; ++s) load(first + s * stride, s);
    for (long long it = 0; it < mine; ++it) {
        if (it + S - 1 < mine) {
            // Buffer (it - 1) % S gets chunk it + S - 1 once the store out of it has read it.
            if (it >= 1) asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
            load(first + (it + S - 1) * stride, (int)((it + S - 1) % S));
        }
        const int s = (int)(it % S);
        const unsigned int parity = (unsigned int)((it / S) & 1);
        unsigned int done;
        do {
            asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}"
                         : "=r"(done)
                         : "r"(sa(&bar[s])), "r"(parity)
                         : "memory");
        } while (!done);
        asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(out + (first + it * stride) * CH),
                     "r"(sa(buf + s * CH)), "r"(CH)
                     : "memory");
        asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    }
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
}


// ---- LayerNorm bf16 over rows of 1,024 moved as the TMA copy moves bytes: chunks of CH bytes
// (CH / 2 KiB rows) land by bulk copies in S shared-memory buffers; each warp normalises a row at
// a time in place (two passes over its 32 values a lane in registers; gamma and beta kept as
// packed bf16 in registers); one thread then bulk-stores the chunk, and refills the buffer the
// previous chunk's store has finished reading.
__device__ __forceinline__ float bf_lo(unsigned int w) { return __uint_as_float(w << 16); }
__device__ __forceinline__ float bf_hi(unsigned int w) { return __uint_as_float(w & 0xffff0000u); }
__device__ __forceinline__ unsigned int pack_bf2(float lo, float hi) {
    unsigned int r;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
}
__device__ __forceinline__ void bar_wait(unsigned long long* bar, unsigned int parity) {
    unsigned int done;
    do {
        asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}"
                     : "=r"(done)
                     : "r"(sa(bar)), "r"(parity)
                     : "memory");
    } while (!done);
}

template <int S, int CH>
__global__ void __launch_bounds__(256) k_ln_tma(const char* __restrict__ x, char* __restrict__ y,
                                                const uint4* __restrict__ gamma, const uint4* __restrict__ beta,
                                                long long chunks, float eps) {
    constexpr int D = 1024, VPR = D / 8, KV = VPR / 32, RC = CH / (2 * D);
    pdl_start();
    extern __shared__ __align__(128) char buf[];
    __shared__ __align__(8) unsigned long long bar[S];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    uint4 g[KV], b[KV];
#pragma unroll
    for (int k = 0; k < KV; ++k) {
        g[k] = gamma[lane + 32 * k];
        b[k] = beta[lane + 32 * k];
    }
    const long long first = blockIdx.x, stride = gridDim.x;
    const long long mine = first < chunks ? (chunks - 1 - first) / stride + 1 : 0;
    auto load = [&](long long c, int s) {
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(sa(&bar[s])), "r"(CH) : "memory");
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                         sa(buf + s * CH)),
                     "l"(x + c * CH), "r"(CH), "r"(sa(&bar[s]))
                     : "memory");
    };
    if (threadIdx.x == 0) {
        for (int s = 0; s < S; ++s) asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(sa(&bar[s])) : "memory");
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
        for (int s = 0; s < S && s < mine; ++s) load(first + s * stride, s);
    }
    __syncthreads();
    for (long long it = 0; it < mine; ++it) {
        const int s = (int)(it % S);
        bar_wait(&bar[s], (unsigned int)((it / S) & 1));
        uint4* rows = reinterpret_cast<uint4*>(buf + s * CH);
        for (int r = warp; r < RC; r += 8) {
            float f[KV][8];
            float sum = 0.0f;
#pragma unroll
            for (int k = 0; k < KV; ++k) {
                const uint4 v = rows[r * VPR + lane + 32 * k];
                const unsigned int w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    f[k][2 * e] = bf_lo(w[e]);
                    f[k][2 * e + 1] = bf_hi(w[e]);
                    sum += f[k][2 * e] + f[k][2 * e + 1];
                }
            }
            for (int o = 16; o > 0; o >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);
            const float mean = sum * (1.0f / D);
            float sq = 0.0f;
#pragma unroll
            for (int k = 0; k < KV; ++k)
#pragma unroll
                for (int e = 0; e < 8; ++e) sq += (f[k][e] - mean) * (f[k][e] - mean);
            for (int o = 16; o > 0; o >>= 1) sq += __shfl_xor_sync(0xffffffffu, sq, o);
            const float inv = rsqrtf(sq * (1.0f / D) + eps);
#pragma unroll
            for (int k = 0; k < KV; ++k) {
                const unsigned int gw[4] = {g[k].x, g[k].y, g[k].z, g[k].w};
                const unsigned int bw[4] = {b[k].x, b[k].y, b[k].z, b[k].w};
                unsigned int o4[4];
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    const float lo = fmaf((f[k][2 * e] - mean) * inv, bf_lo(gw[e]), bf_lo(bw[e]));
                    const float hi = fmaf((f[k][2 * e + 1] - mean) * inv, bf_hi(gw[e]), bf_hi(bw[e]));
                    o4[e] = pack_bf2(lo, hi);
                }
                rows[r * VPR + lane + 32 * k] = make_uint4(o4[0], o4[1], o4[2], o4[3]);
            }
        }
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
        __syncthreads();
        if (threadIdx.x == 0) {
            asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(y + (first + it * stride) * CH),
                         "r"(sa(buf + s * CH)), "r"(CH)
                         : "memory");
            asm volatile("cp.async.bulk.commit_group;" ::: "memory");
            // The previous chunk's buffer takes the chunk S further on once its store has read it.
            if (it >= 1 && it - 1 + S < mine) {
                asm volatile("cp.async.bulk.wait_group.read 1;" ::: "memory");
                load(first + (it - 1 + S) * stride, (int)((it - 1) % S));
            }
        }
    }
    if (threadIdx.x == 0) asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
}

// ---- MSE by TMA bulk loads: block i owns the vectors [n i / grid, n (i + 1) / grid) of both
// inputs (balanced to 16 bytes) and streams them in chunks of CH bytes a input through S
// shared-memory stages (one bulk copy of each input a stage, one mbarrier phase); the block's
// threads sum the squared differences out of shared memory; then MSE's grid reduction as
// k_mse (COLLECT 0: publish only; 1: block 0 collects).
template <int S, int CH, int COLLECT>
__global__ void __launch_bounds__(256) k_mse_bulk(const char* __restrict__ a, const char* __restrict__ b,
                                                  float* __restrict__ loss, unsigned long long* __restrict__ slots,
                                                  long long n) {
    pdl_start();
    extern __shared__ __align__(128) char buf[];
    __shared__ __align__(8) unsigned long long bar[S];
    const long long lo = n * blockIdx.x / gridDim.x, hi = n * (blockIdx.x + 1) / gridDim.x;
    const long long bytes = (hi - lo) * 16, nch = (bytes + CH - 1) / CH;
    const char* pa = a + lo * 16;
    const char* pb = b + lo * 16;
    auto issue = [&](long long c) {
        const int s = (int)(c % S);
        const unsigned int len = (unsigned int)min((long long)CH, bytes - c * CH);
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(sa(&bar[s])), "r"(2 * len) : "memory");
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                         sa(buf + s * 2 * CH)),
                     "l"(pa + c * CH), "r"(len), "r"(sa(&bar[s]))
                     : "memory");
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                         sa(buf + s * 2 * CH + CH)),
                     "l"(pb + c * CH), "r"(len), "r"(sa(&bar[s]))
                     : "memory");
    };
    if (threadIdx.x == 0) {
        for (int s = 0; s < S; ++s) asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(sa(&bar[s])) : "memory");
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
#pragma unroll 1
        for (long long c = 0; c < S && c < nch; ++c) issue(c);
    }
    __syncthreads();
    float acc = 0.0f;
#pragma unroll 1
    for (long long c = 0; c < nch; ++c) {
        const int s = (int)(c % S);
        bar_wait(&bar[s], (unsigned int)((c / S) & 1));
        const int nv = (int)(min((long long)CH, bytes - c * CH) / 16);
        const uint4* va = reinterpret_cast<const uint4*>(buf + s * 2 * CH);
        const uint4* vb = reinterpret_cast<const uint4*>(buf + s * 2 * CH + CH);
        if (nv == CH / 16) {
#pragma unroll
            for (int k = 0; k < CH / 16 / 256; ++k) acc += sq_diff(va[threadIdx.x + 256 * k], vb[threadIdx.x + 256 * k]);
        } else {
            for (int v = threadIdx.x; v < nv; v += 256) acc += sq_diff(va[v], vb[v]);
        }
        __syncthreads();
        if (threadIdx.x == 0 && c + S < nch) issue(c + S);
    }
    publish_partial(acc, slots);
    if (COLLECT == 0 || blockIdx.x != 0) return;
    collect_slots<0>(slots, gridDim.x, loss, n);
}

__global__ void k_count_diff(const uint4* a, const uint4* b, long long n, unsigned long long* bad) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        const uint4 x = a[i], y = b[i];
        if (x.x != y.x || x.y != y.y || x.z != y.z || x.w != y.w) atomicAdd(bad, 1ull);
    }
}

struct Sets {
    std::vector<char*> in, out;
};

static int g_sms;

// One candidate: `enqueue(set)` puts one call on the stream. Returns the median us a call.
template <class F>
static float time_calls(int G, int sets, F enqueue, float* min_us) {
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaGraph_t graph;
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    for (int i = 0; i < G; ++i) enqueue(s, i % sets);
    CHECK(cudaStreamEndCapture(s, &graph));
    cudaGraphExec_t exec;
    CHECK(cudaGraphInstantiate(&exec, graph, 0));
    cudaEvent_t a, b;
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));
    CHECK(cudaGraphLaunch(exec, s));
    CHECK(cudaStreamSynchronize(s));
    std::vector<float> us;
    for (int r = 0; r < 15; ++r) {
        CHECK(cudaEventRecord(a, s));
        CHECK(cudaGraphLaunch(exec, s));
        CHECK(cudaEventRecord(b, s));
        CHECK(cudaEventSynchronize(b));
        float ms;
        CHECK(cudaEventElapsedTime(&ms, a, b));
        us.push_back(ms * 1000.0f / G);
    }
    std::sort(us.begin(), us.end());
    *min_us = us[0];
    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphDestroy(graph));
    CHECK(cudaEventDestroy(a));
    CHECK(cudaEventDestroy(b));
    CHECK(cudaStreamDestroy(s));
    return us[us.size() / 2];
}

static cudaLaunchConfig_t config(dim3 grid, dim3 block, size_t smem, cudaStream_t s, bool pdl) {
    static cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t c = {};
    c.gridDim = grid;
    c.blockDim = block;
    c.dynamicSmemBytes = smem;
    c.stream = s;
    c.attrs = pdl ? attr : nullptr;
    c.numAttrs = pdl ? 1 : 0;
    return c;
}

struct Row {
    const char* section;
    char name[48];
    float med, mn;
    double bytes;
};
static std::vector<Row> rows;

static void report(const char* section, const char* name, float med, float mn, double bytes) {
    Row r{section, {}, med, mn, bytes};
    std::snprintf(r.name, sizeof r.name, "%s", name);
    rows.push_back(r);
    std::printf("%-6s %-22s %9.3f us (min %9.3f)  %7.0f GB/s\n", section, name, med, mn, bytes / med / 1e3);
    std::fflush(stdout);
}

template <int U, bool PDL>
static void copy_kernel(const char* sec, Sets& st, size_t bytes, int sets, int G, int bps) {
    const long long n = bytes / 16;
    const int grid = bps == 0 ? (int)((n + 256 * U - 1) / (256 * U)) : bps * g_sms;
    auto enq = [&](cudaStream_t s, int i) {
        cudaLaunchConfig_t c = config(dim3(grid), dim3(256), 0, s, PDL);
        CHECK(cudaLaunchKernelEx(&c, k_copy<U, PDL>, (const uint4*)st.in[i], (uint4*)st.out[i], n));
    };
    // Check once on set 0.
    CHECK(cudaMemset(st.out[0], 0, bytes));
    enq(0, 0);
    unsigned long long* bad;
    CHECK(cudaMallocManaged(&bad, 8));
    *bad = 0;
    k_count_diff<<<4 * g_sms, 256>>>((const uint4*)st.in[0], (const uint4*)st.out[0], n, bad);
    CHECK(cudaDeviceSynchronize());
    if (*bad) std::printf("copy %d/%d: %llu vectors differ\n", U, bps, *bad);
    CHECK(cudaFree(bad));
    char name[48];
    std::snprintf(name, sizeof name, "copy %d/%d%s", U, bps, PDL ? " pdl" : "");
    float mn, med = time_calls(G, sets, enq, &mn);
    report(sec, name, med, mn, 2.0 * bytes);
}

template <int S, int CH>
static void tma_copy(const char* sec, Sets& st, size_t bytes, int sets, int G) {
    const long long chunks = bytes / CH;
    const size_t smem = (size_t)S * CH;
    CHECK(cudaFuncSetAttribute(k_tma<S, CH>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    int bps = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&bps, k_tma<S, CH>, 32, smem));
    const int grid = (int)std::min<long long>(chunks, (long long)bps * g_sms);
    auto enq = [&](cudaStream_t s, int i) {
        cudaLaunchConfig_t c = config(dim3(grid), dim3(32), smem, s, true);
        CHECK(cudaLaunchKernelEx(&c, k_tma<S, CH>, (const char*)st.in[i], st.out[i], chunks));
    };
    CHECK(cudaMemset(st.out[0], 0, bytes));
    enq(0, 0);
    unsigned long long* bad;
    CHECK(cudaMallocManaged(&bad, 8));
    *bad = 0;
    k_count_diff<<<4 * g_sms, 256>>>((const uint4*)st.in[0], (const uint4*)st.out[0], bytes / 16, bad);
    CHECK(cudaDeviceSynchronize());
    if (*bad) std::printf("tma %d: %llu vectors differ\n", S, *bad);
    CHECK(cudaFree(bad));
    char name[48];
    std::snprintf(name, sizeof name, "tma %dx%dK (%d/SM)", S, CH >> 10, bps);
    float mn, med = time_calls(G, sets, enq, &mn);
    report(sec, name, med, mn, 2.0 * bytes);
}

template <int U, bool TWO, int H = 0>
static void read_kernel(const char* sec, Sets& st, size_t bytes_each, int sets, int G, int bps, float* out) {
    const long long n = bytes_each / 16;
    const int grid = bps * g_sms;
    auto enq = [&](cudaStream_t s, int i) {
        cudaLaunchConfig_t c = config(dim3(grid), dim3(256), 0, s, true);
        // TWO: the set's "in" and "out" buffers are the two inputs; one stream: "in" of 2n.
        CHECK(cudaLaunchKernelEx(&c, k_read<U, TWO, H>, (const uint4*)st.in[i], (const uint4*)st.out[i], out, n));
    };
    char name[48];
    std::snprintf(name, sizeof name, "%s %d/%d%s", TWO ? "read2" : "read1", U, bps, H ? " h" : "");
    if (H) std::snprintf(name + std::strlen(name), sizeof name - std::strlen(name), "%d", H);
    float mn, med = time_calls(G, sets, enq, &mn);
    report(sec, name, med, mn, 2.0 * bytes_each);
}

template <int U, int COLLECT, int H = 0>
static void mse_kernel(const char* sec, Sets& st, size_t bytes_each, int sets, int G, int bps, float* out) {
    const long long n = bytes_each / 16;
    const int grid = bps * g_sms + (COLLECT == 4 ? 1 : 0);
    unsigned long long* slots;
    unsigned int* counter;
    CHECK(cudaMalloc(&slots, 8 * grid));
    CHECK(cudaMemset(slots, 0, 8 * grid));
    CHECK(cudaMalloc(&counter, 4));
    CHECK(cudaMemset(counter, 0, 4));
    auto enq = [&](cudaStream_t s, int i) {
        cudaLaunchConfig_t c = config(dim3(grid), dim3(256), 0, s, true);
        CHECK(cudaLaunchKernelEx(&c, k_mse<U, COLLECT, H>, (const uint4*)st.in[i], (const uint4*)st.out[i], out,
                                 slots, counter, n));
    };
    char name[48];
    std::snprintf(name, sizeof name, H ? "mse %d/%d h%d %s" : "mse %d/%d%.0d %s", U, bps, H, COLLECT == 0 ? "publish" : COLLECT == 1 ? "block0" : COLLECT == 2 ? "last" : COLLECT == 3 ? "block0 nowait" : COLLECT == 4 ? "extra collector" : COLLECT == 5 ? "warp0 polls all" : "block0 sleeps");
    float mn, med = time_calls(G, sets, enq, &mn);
    report(sec, name, med, mn, 2.0 * bytes_each);
    CHECK(cudaFree(slots));
    CHECK(cudaFree(counter));
}


// MSE by bulk loads; checks its loss against k_mse<4, 1>'s on set 0 once.
template <int S, int CH, int COLLECT>
static void mse_bulk(const char* sec, Sets& st, size_t bytes_each, int sets, int G, float* out) {
    const long long n = bytes_each / 16;
    const size_t smem = (size_t)S * 2 * CH;
    CHECK(cudaFuncSetAttribute(k_mse_bulk<S, CH, COLLECT>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    int bps = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&bps, k_mse_bulk<S, CH, COLLECT>, 256, smem));
    const int grid = bps * g_sms;
    unsigned long long* slots;
    unsigned int* counter;
    CHECK(cudaMalloc(&slots, 8 * grid));
    CHECK(cudaMemset(slots, 0, 8 * grid));
    CHECK(cudaMalloc(&counter, 4));
    CHECK(cudaMemset(counter, 0, 4));
    auto enq = [&](cudaStream_t s, int i) {
        cudaLaunchConfig_t c = config(dim3(grid), dim3(256), smem, s, true);
        CHECK(cudaLaunchKernelEx(&c, k_mse_bulk<S, CH, COLLECT>, (const char*)st.in[i], (const char*)st.out[i], out,
                                 slots, n));
    };
    char name[48];
    std::snprintf(name, sizeof name, "mse bulk %dx%dK %s (%d/SM)", S, CH >> 10, COLLECT ? "block0" : "publish", bps);
    if (COLLECT) {
        float want = 0.0f, got = 0.0f;
        auto reg = [&](cudaStream_t s, int i) {
            cudaLaunchConfig_t c = config(dim3(4 * g_sms), dim3(256), 0, s, true);
            CHECK(cudaLaunchKernelEx(&c, k_mse<4, 1>, (const uint4*)st.in[i], (const uint4*)st.out[i], out, slots,
                                     counter, n));
        };
        CHECK(cudaMemset(slots, 0, 8 * grid));
        reg(0, 0);
        CHECK(cudaDeviceSynchronize());
        CHECK(cudaMemcpy(&want, out, 4, cudaMemcpyDeviceToHost));
        CHECK(cudaMemset(out, 0, 4));
        enq(0, 0);
        CHECK(cudaDeviceSynchronize());
        CHECK(cudaMemcpy(&got, out, 4, cudaMemcpyDeviceToHost));
        std::printf("       %s: loss %.9g, register kernel %.9g%s\n", name, got, want,
                    std::fabs(got - want) <= 1e-3f * std::fabs(want) ? "" : "  FAIL");
    }
    float mn, med = time_calls(G, sets, enq, &mn);
    report(sec, name, med, mn, 2.0 * bytes_each);
    CHECK(cudaFree(slots));
    CHECK(cudaFree(counter));
}

static unsigned short to_bf16(float f) {
    unsigned int u;
    std::memcpy(&u, &f, 4);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (unsigned short)(u >> 16);
}
static float from_bf16(unsigned short h) {
    unsigned int u = (unsigned int)h << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

// LayerNorm bf16 8192 x 1024 by k_ln_tma<S, CH>, checked on rows of set 0 against the host.
template <int S, int CH>
static void ln_tma(const char* sec, Sets& st, size_t bytes, int sets, int G, const uint4* gamma, const uint4* beta,
                   const std::vector<unsigned short>& hx, const std::vector<unsigned short>& hg,
                   const std::vector<unsigned short>& hb) {
    const long long chunks = bytes / CH;
    const size_t smem = (size_t)S * CH;
    CHECK(cudaFuncSetAttribute(k_ln_tma<S, CH>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    int bps = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&bps, k_ln_tma<S, CH>, 256, smem));
    const int grid = (int)std::min<long long>(chunks, (long long)bps * g_sms);
    auto enq = [&](cudaStream_t s, int i) {
        cudaLaunchConfig_t c = config(dim3(grid), dim3(256), smem, s, true);
        CHECK(cudaLaunchKernelEx(&c, k_ln_tma<S, CH>, (const char*)st.in[i], st.out[i], gamma, beta, chunks, 1e-5f));
    };
    CHECK(cudaMemset(st.out[0], 0xff, bytes));
    enq(0, 0);
    CHECK(cudaDeviceSynchronize());
    std::vector<unsigned short> hy(bytes / 2);
    CHECK(cudaMemcpy(hy.data(), st.out[0], bytes, cudaMemcpyDeviceToHost));
    double worst = 0.0;
    const int D = 1024, R = (int)(bytes / 2 / D);
    for (int r = 0; r < R; r += 37) {
        double m = 0, v = 0;
        for (int c = 0; c < D; ++c) m += from_bf16(hx[(size_t)r * D + c]);
        m /= D;
        for (int c = 0; c < D; ++c) v += (from_bf16(hx[(size_t)r * D + c]) - m) * (from_bf16(hx[(size_t)r * D + c]) - m);
        const double inv = 1.0 / std::sqrt(v / D + 1e-5);
        for (int c = 0; c < D; ++c) {
            const double ref = (from_bf16(hx[(size_t)r * D + c]) - m) * inv * from_bf16(hg[c]) + from_bf16(hb[c]);
            const double err = std::fabs(from_bf16(hy[(size_t)r * D + c]) - ref) / (1.0 + std::fabs(ref));
            if (!(err <= worst)) worst = err;  // NaN-safe
        }
    }
    char name[48];
    std::snprintf(name, sizeof name, "ln tma %dx%dK (%d/SM)", S, CH >> 10, bps);
    float mn, med = time_calls(G, sets, enq, &mn);
    report(sec, name, med, mn, 2.0 * bytes);
    std::printf("       %s: worst relative error %.2e over every 37th row (bf16 half-ulp 3.9e-3)%s\n", name, worst,
                worst < 8e-3 ? "" : "  FAIL");
}

static Sets alloc(size_t in_bytes, size_t out_bytes, int sets) {
    Sets s;
    for (int i = 0; i < sets; ++i) {
        char *a, *b;
        CHECK(cudaMalloc(&a, in_bytes));
        CHECK(cudaMalloc(&b, out_bytes));
        CHECK(cudaMemset(a, 0x3c, in_bytes));
        CHECK(cudaMemset(b, 0x1d, out_bytes));
        s.in.push_back(a);
        s.out.push_back(b);
    }
    return s;
}
static void release(Sets& s) {
    for (auto p : s.in) CHECK(cudaFree(p));
    for (auto p : s.out) CHECK(cudaFree(p));
}

static int sets_for(size_t bytes_per_set, int l2) {
    return (int)std::max<size_t>(2, (3 * (size_t)l2 + bytes_per_set - 1) / bytes_per_set);
}

int main(int argc, char** argv) {
    // `same_size_bounds mse`: the 1 GiB lines and the MSE section only.
    const bool mse_only = argc > 1 && !std::strcmp(argv[1], "mse");
    int l2 = 0;
    CHECK(cudaDeviceGetAttribute(&g_sms, cudaDevAttrMultiProcessorCount, 0));
    CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
    cudaDeviceProp p;
    CHECK(cudaGetDeviceProperties(&p, 0));
    std::printf("%s, %d SMs, L2 %d MiB\n", p.name, g_sms, l2 >> 20);
    float* partials;
    CHECK(cudaMalloc(&partials, 1 << 20));

    // The 1 GiB lines (one set: 1 GiB is far past L2).
    {
        const size_t big = 1ull << 30;
        Sets st = alloc(big, big, 1);
        auto memcpy_enq = [&](cudaStream_t s, int i) {
            CHECK(cudaMemcpyAsync(st.out[i], st.in[i], big, cudaMemcpyDeviceToDevice, s));
        };
        float mn, med = time_calls(10, 1, memcpy_enq, &mn);
        report("line", "memcpy", med, mn, 2.0 * big);
        copy_kernel<4, true>("line", st, big, 1, 10, 2);
        copy_kernel<4, true>("line", st, big, 1, 10, 4);
        copy_kernel<8, true>("line", st, big, 1, 10, 2);
        // read line: one stream of 1 GiB (in), and two of 512 MiB (in, out as inputs).
        read_kernel<4, false>("rline", st, big / 2, 1, 10, 4, partials);
        read_kernel<8, false>("rline", st, big / 2, 1, 10, 4, partials);
        read_kernel<4, true>("rline", st, big, 1, 10, 4, partials);
        release(st);
    }
    // LayerNorm bf16 8192 x 1024's bytes.
    if (!mse_only) {
        const size_t bytes = 16ull << 20;
        const int sets = sets_for(2 * bytes, l2), G = 200;
        Sets st = alloc(bytes, bytes, sets);
        auto memcpy_enq = [&](cudaStream_t s, int i) {
            CHECK(cudaMemcpyAsync(st.out[i], st.in[i], bytes, cudaMemcpyDeviceToDevice, s));
        };
        float mn, med = time_calls(G, sets, memcpy_enq, &mn);
        report("copy16", "memcpy", med, mn, 2.0 * bytes);
        copy_kernel<1, true>("copy16", st, bytes, sets, G, 0);
        copy_kernel<2, true>("copy16", st, bytes, sets, G, 0);
        copy_kernel<4, true>("copy16", st, bytes, sets, G, 0);
        copy_kernel<4, false>("copy16", st, bytes, sets, G, 0);
        copy_kernel<8, true>("copy16", st, bytes, sets, G, 0);
        copy_kernel<1, true>("copy16", st, bytes, sets, G, 4);
        copy_kernel<1, true>("copy16", st, bytes, sets, G, 8);
        copy_kernel<2, true>("copy16", st, bytes, sets, G, 2);
        copy_kernel<2, true>("copy16", st, bytes, sets, G, 4);
        copy_kernel<4, true>("copy16", st, bytes, sets, G, 1);
        copy_kernel<4, true>("copy16", st, bytes, sets, G, 2);
        copy_kernel<4, true>("copy16", st, bytes, sets, G, 4);
        copy_kernel<8, true>("copy16", st, bytes, sets, G, 1);
        copy_kernel<8, true>("copy16", st, bytes, sets, G, 2);
        tma_copy<2, 16384>("copy16", st, bytes, sets, G);
        tma_copy<4, 16384>("copy16", st, bytes, sets, G);
        tma_copy<6, 16384>("copy16", st, bytes, sets, G);
        tma_copy<8, 16384>("copy16", st, bytes, sets, G);
        tma_copy<12, 16384>("copy16", st, bytes, sets, G);
        tma_copy<4, 32768>("copy16", st, bytes, sets, G);
        tma_copy<6, 32768>("copy16", st, bytes, sets, G);
        tma_copy<8, 8192>("copy16", st, bytes, sets, G);
        tma_copy<16, 8192>("copy16", st, bytes, sets, G);
        // LayerNorm's inputs: every set a copy of set 0's random rows; gamma, beta random.
        std::vector<unsigned short> hx(bytes / 2), hg(1024), hb(1024);
        unsigned long long rng = 0x9e3779b97f4a7c15ull;
        auto uni = [&]() {
            rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
            return (float)((rng >> 11) * (1.0 / 9007199254740992.0)) * 4.0f - 2.0f;
        };
        for (auto& v : hx) v = to_bf16(uni());
        for (int c = 0; c < 1024; ++c) hg[c] = to_bf16(1.0f + 0.25f * uni()), hb[c] = to_bf16(0.5f * uni());
        for (int i = 0; i < sets; ++i) CHECK(cudaMemcpy(st.in[i], hx.data(), bytes, cudaMemcpyHostToDevice));
        uint4 *gamma, *beta;
        CHECK(cudaMalloc(&gamma, 2048));
        CHECK(cudaMalloc(&beta, 2048));
        CHECK(cudaMemcpy(gamma, hg.data(), 2048, cudaMemcpyHostToDevice));
        CHECK(cudaMemcpy(beta, hb.data(), 2048, cudaMemcpyHostToDevice));
        ln_tma<4, 32768>("ln16", st, bytes, sets, G, gamma, beta, hx, hg, hb);
        ln_tma<6, 16384>("ln16", st, bytes, sets, G, gamma, beta, hx, hg, hb);
        ln_tma<3, 32768>("ln16", st, bytes, sets, G, gamma, beta, hx, hg, hb);
        ln_tma<8, 16384>("ln16", st, bytes, sets, G, gamma, beta, hx, hg, hb);
        ln_tma<6, 32768>("ln16", st, bytes, sets, G, gamma, beta, hx, hg, hb);
        ln_tma<4, 16384>("ln16", st, bytes, sets, G, gamma, beta, hx, hg, hb);
        ln_tma<8, 8192>("ln16", st, bytes, sets, G, gamma, beta, hx, hg, hb);
        CHECK(cudaFree(gamma));
        CHECK(cudaFree(beta));
        release(st);
    }
    // MSE bf16 8192 x 4096's bytes: two 64 MiB inputs.
    {
        const size_t each = 64ull << 20;
        const int sets = sets_for(2 * each, l2), G = 60;
        Sets st = alloc(each, each, sets);
        for (int bps : {2, 4, 8}) {
            read_kernel<2, true>("read64", st, each, sets, G, bps, partials);
            read_kernel<4, true>("read64", st, each, sets, G, bps, partials);
            read_kernel<8, true>("read64", st, each, sets, G, bps, partials);
        }
        for (int r = 0; r < 2; ++r) {
            mse_kernel<4, 0>("read64", st, each, sets, G, 4, partials);
            mse_kernel<4, 1>("read64", st, each, sets, G, 4, partials);
            mse_kernel<4, 2>("read64", st, each, sets, G, 4, partials);
            mse_kernel<4, 3>("read64", st, each, sets, G, 4, partials);
            mse_kernel<4, 4>("read64", st, each, sets, G, 4, partials);
            mse_kernel<4, 5>("read64", st, each, sets, G, 4, partials);
            mse_kernel<4, 6>("read64", st, each, sets, G, 4, partials);
        }
        for (int r = 0; r < 2; ++r) {
            read_kernel<4, true, 0>("read64", st, each, sets, G, 4, partials);
            read_kernel<4, true, 1>("read64", st, each, sets, G, 4, partials);
            read_kernel<4, true, 2>("read64", st, each, sets, G, 4, partials);
            read_kernel<4, true, 3>("read64", st, each, sets, G, 4, partials);
            read_kernel<4, true, 4>("read64", st, each, sets, G, 4, partials);
            read_kernel<4, true, 5>("read64", st, each, sets, G, 4, partials);
            read_kernel<8, true, 2>("read64", st, each, sets, G, 4, partials);
            read_kernel<2, true, 2>("read64", st, each, sets, G, 8, partials);
            mse_kernel<4, 1, 0>("read64", st, each, sets, G, 4, partials);
            mse_kernel<4, 1, 1>("read64", st, each, sets, G, 4, partials);
            mse_kernel<4, 1, 2>("read64", st, each, sets, G, 4, partials);
            mse_kernel<4, 1, 3>("read64", st, each, sets, G, 4, partials);
            mse_kernel<4, 1, 4>("read64", st, each, sets, G, 4, partials);
        }
        for (int r = 0; r < 2; ++r) {
            mse_kernel<4, 1>("read64", st, each, sets, G, 4, partials);
            mse_bulk<4, 8192, 0>("read64", st, each, sets, G, partials);
            mse_bulk<4, 8192, 1>("read64", st, each, sets, G, partials);
            mse_bulk<6, 8192, 1>("read64", st, each, sets, G, partials);
            mse_bulk<3, 16384, 0>("read64", st, each, sets, G, partials);
            mse_bulk<3, 16384, 1>("read64", st, each, sets, G, partials);
            mse_bulk<4, 16384, 1>("read64", st, each, sets, G, partials);
            mse_bulk<6, 16384, 1>("read64", st, each, sets, G, partials);
            mse_bulk<3, 32768, 1>("read64", st, each, sets, G, partials);
            mse_bulk<8, 4096, 1>("read64", st, each, sets, G, partials);
            mse_bulk<12, 4096, 1>("read64", st, each, sets, G, partials);
        }
        release(st);
        Sets one = alloc(2 * each, 16, sets);
        read_kernel<4, false>("read64", one, each, sets, G, 4, partials);
        read_kernel<8, false>("read64", one, each, sets, G, 4, partials);
        release(one);
    }

    // Summary: each section's best, as a share of the best line of its kind.
    float copy_line = 1e30f, read_line = 1e30f;
    double copy_bytes = 0, read_bytes = 0;
    for (auto& r : rows) {
        if (!std::strcmp(r.section, "line") && r.bytes / r.med > copy_bytes / copy_line) copy_line = r.med, copy_bytes = r.bytes;
        if (!std::strcmp(r.section, "rline") && r.bytes / r.med > read_bytes / read_line) read_line = r.med, read_bytes = r.bytes;
    }
    const double copy_gbps = copy_bytes / copy_line / 1e3, read_gbps = read_bytes / read_line / 1e3;
    std::printf("\nbest 1 GiB copy line %.0f GB/s, read line %.0f GB/s\n", copy_gbps, read_gbps);
    for (const char* sec : {"copy16", "ln16", "read64"}) {
        const Row* best = nullptr;
        for (auto& r : rows)
            if (!std::strcmp(r.section, sec) && (!best || r.med < best->med)) best = &r;
        if (!best) continue;
        const double line = !std::strcmp(sec, "read64") ? read_gbps : copy_gbps;
        std::printf("%-6s best %-22s %9.3f us = %.1f %% of the line\n", sec, best->name, best->med,
                    100.0 * best->bytes / best->med / 1e3 / line);
    }
    return 0;
}
