// Shared device code of the nn ops. Expects VEC (elements per vector access), BLOCK (threads per
// block) and GRID (blocks), after plugin-api's storage header (S, to_f32, from_f32 for DTYPE 0
// fp32, 1 fp16, 2 bf16; program.rs: assemble), whose conversions the CPU path reproduces bit for
// bit.

// -inf in the storage's bits.
#if DTYPE == 0
#define S_NEG_INF_BITS 0xff800000u
#elif DTYPE == 1
#define S_NEG_INF_BITS 0xfc00u
#else
#define S_NEG_INF_BITS 0xff80u
#endif

#define NEG_INF __int_as_float(0xff800000)
#define LOG2E 1.4426950408889634f
#define LN2 0.6931471805599453f

__device__ __forceinline__ S s_neg_inf() {
#if DTYPE == 0
    return __uint_as_float(S_NEG_INF_BITS);
#else
    return (S)S_NEG_INF_BITS;
#endif
}

// 2^x (MUFU; relative error about 2^-22).
__device__ __forceinline__ float ex2(float x) {
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}

template <int BYTES> struct RawOf;
template <> struct RawOf<16> { typedef uint4 T; };
template <> struct RawOf<8> { typedef uint2 T; };
template <> struct RawOf<4> { typedef unsigned int T; };
template <> struct RawOf<2> { typedef unsigned short T; };

// One vector of VEC elements, moved as a single 16/8/4/2-byte access (aligned: every row start
// and every allocation is a multiple of the vector size).
typedef RawOf<VEC * sizeof(S)>::T Raw;
union Lanes {
    Raw raw;
    S s[VEC];
};

__device__ __forceinline__ Raw load_raw(const S* __restrict__ p) { return *reinterpret_cast<const Raw*>(p); }
__device__ __forceinline__ void store_raw(S* __restrict__ p, Raw v) { *reinterpret_cast<Raw*>(p) = v; }

__device__ __forceinline__ void unpack_f32(Raw r, float (&out)[VEC]) {
    Lanes u;
    u.raw = r;
#pragma unroll
    for (int i = 0; i < VEC; ++i) out[i] = to_f32(u.s[i]);
}

// Packs VEC floats. 16-bit types with an even VEC use the paired conversion of sm_80+
// (cvt.rn.{bf16,f16}x2.f32: one instruction per two elements, round to nearest even like
// from_f32); the integer rounding of from_f32 made bf16 LayerNorm and GELU ALU-heavy.
__device__ __forceinline__ Raw pack_f32(const float (&in)[VEC]) {
#if DTYPE != 0 && (VEC % 2 == 0) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    union {
        Raw raw;
        unsigned int w[VEC / 2];
    } u;
#pragma unroll
    for (int i = 0; i < VEC / 2; ++i) {
#if DTYPE == 1
        asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(u.w[i]) : "f"(in[2 * i + 1]), "f"(in[2 * i]));
#else
        asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(u.w[i]) : "f"(in[2 * i + 1]), "f"(in[2 * i]));
#endif
    }
    return u.raw;
#else
    Lanes u;
#pragma unroll
    for (int i = 0; i < VEC; ++i) u.s[i] = from_f32(in[i]);
    return u.raw;
#endif
}

__device__ __forceinline__ void load_f32(const S* __restrict__ p, float (&out)[VEC]) { unpack_f32(load_raw(p), out); }
__device__ __forceinline__ void store_f32(S* __restrict__ p, const float (&in)[VEC]) { store_raw(p, pack_f32(in)); }

__device__ __forceinline__ Raw fill_raw(S v) {
    Lanes u;
#pragma unroll
    for (int i = 0; i < VEC; ++i) u.s[i] = v;
    return u.raw;
}

// ---- Reductions over a group of G consecutive threads (G a power of two, G <= BLOCK). For
// G <= 32 the group lies inside one warp (xor shuffles stay inside aligned groups); for G > 32 it
// is G/32 whole warps combined through `red` (one slot per warp of the block), and then every
// thread of the block must call it (it synchronizes the block). Fixed trees and a fixed order:
// the result does not depend on timing.
struct Sum {
    template <class T> __device__ __forceinline__ T operator()(T a, T b) const { return a + b; }
};
struct Max {
    __device__ __forceinline__ float operator()(float a, float b) const { return fmaxf(a, b); }
};

template <int G, class T, class Op>
__device__ __forceinline__ T group_reduce(T v, Op op, double* red_storage) {
    constexpr int W = G < 32 ? G : 32;
#pragma unroll
    for (int o = W / 2; o > 0; o >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
    if constexpr (G > 32) {
        T* red = reinterpret_cast<T*>(red_storage);
        const int warp = threadIdx.x >> 5;
        if ((threadIdx.x & 31) == 0) red[warp] = v;
        __syncthreads();
        constexpr int WARPS = G / 32;
        const int first = (warp / WARPS) * WARPS;
        T acc = red[first];
#pragma unroll
        for (int i = 1; i < WARPS; ++i) acc = op(acc, red[first + i]);
        __syncthreads();
        v = acc;
    }
    return v;
}

// ---- Grid coordination in one launch, through zeroed u32 scratch words that every kernel
// returns to zero before it ends (so a CUDA graph can replay it with no memset node):
//   W_TICKET   work tickets: a block's work item is the order in which it started, so a block
//              only ever waits for blocks that are already running (no deadlock, whatever order
//              the hardware starts blocks in);
//   W_FINISH   blocks done; the last one reduces the per-block partials and resets the words;
//   W_COUNTED, W_NVALID   cross-entropy's count of non-ignored targets (see cross_entropy.cu).
#define W_TICKET 0
#define W_FINISH 1
#define W_COUNTED 2
#define W_NVALID 3
#define W_ARRAYS 8

__device__ __forceinline__ unsigned int ld_volatile(const unsigned int* p) {
    return *reinterpret_cast<const volatile unsigned int*>(p);
}

// Spins until *p >= n (p is written by other blocks with atomics after a __threadfence).
__device__ __forceinline__ void wait_at_least(const unsigned int* p, unsigned int n) {
    while (ld_volatile(p) < n) {
#if __CUDA_ARCH__ >= 700
        __nanosleep(100);
#endif
    }
    __threadfence();
}

// Every thread gets the block's ticket (work item).
__device__ __forceinline__ unsigned int take_ticket(unsigned int* scratch, unsigned int* s_ticket) {
    if (threadIdx.x == 0) *s_ticket = atomicAdd(scratch + W_TICKET, 1u);
    __syncthreads();
    return *s_ticket;
}

// Call after this block's results are stored (every thread). True in every thread of the block
// that finished last; its reads of other blocks' results must bypass L1 (__ldcg).
__device__ __forceinline__ bool finished_last(unsigned int* scratch, unsigned int* s_flag) {
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        const unsigned int prev = atomicAdd(scratch + W_FINISH, 1u);
        *s_flag = prev == GRID - 1 ? 1u : 0u;
    }
    __syncthreads();
    const bool last = *s_flag != 0u;
    if (last) __threadfence();
    return last;
}

// ---- Per-block partials that one collecting block sums, without a grid-wide counter: a block
// publishes its f32 partial (and a count below 2^31) and the fact that it has landed in one
// 64-bit store (bit 63 set; single-copy atomic), and the collector polls each slot until it is
// set, then returns it to 0 (so the next call, and a graph replay, find the slots as setup left
// them). With block 0 collecting, this saves the "last block" counter's fence and atomic round
// trip and the last block's read of every partial after it: block 0 has read all but the latest
// already (MSE bf16, 2 M elements, L2-hot: 3.88 -> 3.34 us a call, H100). Block 0 may wait for
// blocks that have not started yet: it holds one block's resources, and every other block
// finishes without waiting for it, so they all get to run.
__device__ __forceinline__ void partial_publish(unsigned long long* slot, float v, unsigned int count) {
    const unsigned long long word = (1ull << 63) | ((unsigned long long)count << 32) | __float_as_uint(v);
    asm volatile("st.relaxed.gpu.global.b64 [%0], %1;" ::"l"(slot), "l"(word) : "memory");
}

__device__ __forceinline__ float partial_value(unsigned long long word) { return __uint_as_float((unsigned int)word); }
__device__ __forceinline__ unsigned int partial_count(unsigned long long word) {
    return (unsigned int)(word >> 32) & 0x7fffffffu;
}

// Sums every slot i = threadIdx.x + k * BLOCK (k = 0, 1, ...) below NSLOTS into this thread's
// (sum, count) in ascending i (a fixed order: the same bits whenever the slots land), and
// returns each slot to 0. The thread polls up to BATCH of its slots at once, all of them again
// each round until every one has landed: one slot after another, each slot after the one that
// landed last costs the collector another L2 round trip (benches/probes/same_size_bounds.cu:
// MSE bf16 8192 x 4096 takes 46.2 us a call with block 0 collecting, 44.9 with block 0 not
// waiting at all). Measured on the H100 (2026-11-26, fourteenth session): cross-entropy's last
// block (the gradient pass, up to 128 slots a thread, all landed) 1,795 -> 1,773 us a call at
// bf16 vocab 262,144 with four at a time (call 8), 1,903 with eight (call 7). Block 0 collecting
// from the end of its own share (MSE, the cross-entropy forward) waits on the slots as they land
// and takes them one at a time: MSE's three a thread together gained 0.2 % at 8192 x 4096 but
// lost 7 % at bf16 8192 x 512 in two calls.
template <unsigned int NSLOTS, unsigned int BATCH>
__device__ __forceinline__ void partial_collect_sum(unsigned long long* slots, double& sum, unsigned int& count) {
    constexpr unsigned int PER_THREAD = (NSLOTS + BLOCK - 1) / BLOCK;
    constexpr unsigned int K = PER_THREAD < BATCH ? PER_THREAD : BATCH;
    for (unsigned int i0 = threadIdx.x; i0 < NSLOTS; i0 += K * BLOCK) {
        unsigned long long w[K];
        bool pending;
        do {
#pragma unroll
            for (unsigned int k = 0; k < K; ++k) {
                const unsigned int i = min(i0 + k * BLOCK, NSLOTS - 1);
                asm volatile("ld.relaxed.gpu.global.b64 %0, [%1];" : "=l"(w[k]) : "l"(slots + i) : "memory");
            }
            pending = false;
#pragma unroll
            for (unsigned int k = 0; k < K; ++k) pending |= i0 + k * BLOCK < NSLOTS && (w[k] >> 63) == 0ull;
        } while (pending);
#pragma unroll
        for (unsigned int k = 0; k < K; ++k) {
            const unsigned int i = i0 + k * BLOCK;
            if (i < NSLOTS) {
                slots[i] = 0ull;
                sum += (double)partial_value(w[k]);
                count += partial_count(w[k]);
            }
        }
    }
}

// Every kernel's first statement. The host launches each call programmatic-dependent
// (src/launch.rs): wait until the stream's previous kernel has completed and its writes are
// visible (this call reads and writes buffers, and the shared scratch, that it may still be
// using), then let the next call's blocks be scheduled as soon as all of this call's have
// started. Without the launch attribute both are no-ops; before sm_90 they do not exist.
__device__ __forceinline__ void dependent_launch_wait() {
#if __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

__device__ __forceinline__ void dependent_launch_start() {
    dependent_launch_wait();
#if __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
