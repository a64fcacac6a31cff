// LayerNorm over rows of COLS (the math of layer_norm.cu: fp32 statistics, two passes over
// registers, one rounding per store) with the data moved by TMA bulk copies (sm_90), as the
// fastest copy of the same bytes moves it (benches/probes/same_size_bounds.cu, H100: 16 MiB a
// direction in 12.0-12.3 us through shared memory against 12.6 for the best register copy).
// Expects ROWS COLS VEC CV (16-byte vectors a row) KV (vectors a lane, CV <= 32 KV) RC (rows a
// chunk) CHUNKS STAGES BLOCK MIN_BLOCKS (blocks a SM the registers must allow), and bulk.cuh.
//
// The rows are cut into CHUNKS chunks of RC consecutive rows (the last may be shorter). Each
// block takes chunks blockIdx.x, + gridDim.x, ...; thread 0 keeps STAGES of them landing in a
// ring of shared-memory buffers (one bulk copy and one mbarrier phase each). When a chunk has
// landed, each warp normalises rows of it in place (a row a warp at a time: lane l holds vectors
// l, l + 32, ... in registers), then thread 0 bulk-stores the chunk from shared memory and
// refills the buffer of the chunk before it, whose store has had a chunk's time to read it.
// Weight and bias stay in registers (KV raw vectors each) for the whole call.
//
// Dynamic shared memory: STAGES buffers of RC * COLS elements.

#define CHUNK_ELEMS ((size_t)RC * COLS)

// Bytes of chunk c (its rows cut at ROWS).
__device__ __forceinline__ unsigned int chunk_bytes(unsigned long long c) {
    const unsigned long long first = c * RC;
    const unsigned long long rows = first + RC < ROWS ? RC : ROWS - first;
    return (unsigned int)(rows * COLS * sizeof(S));
}

// Thread 0: starts the copy of chunk c into buffer `stage`.
__device__ __forceinline__ void chunk_fill(const S* __restrict__ x, unsigned long long c, unsigned int stage,
                                           S* ring, unsigned long long* bars) {
    bulk_load(ring + stage * CHUNK_ELEMS, x + c * CHUNK_ELEMS, chunk_bytes(c), &bars[stage]);
}

extern "C" __global__ void __launch_bounds__(BLOCK, MIN_BLOCKS)
layer_norm_bulk(const S* __restrict__ x, const S* __restrict__ w, const S* __restrict__ b, S* __restrict__ y,
                unsigned int* __restrict__ scratch, float eps) {
    (void)scratch;
    dependent_launch_start();
    extern __shared__ __align__(128) unsigned char ln_ring_bytes[];
    S* ring = reinterpret_cast<S*>(ln_ring_bytes);
    __shared__ __align__(8) unsigned long long bars[STAGES];
    const unsigned int tid = threadIdx.x, lane = tid & 31u, warp = tid >> 5;
    const unsigned long long first = blockIdx.x, stride = gridDim.x;
    const unsigned long long mine = first < CHUNKS ? (CHUNKS - 1 - first) / stride + 1 : 0;
    if (tid == 0) {
        for (unsigned int k = 0; k < STAGES; ++k) barrier_init(&bars[k]);
        bulk_fence();
        // Not unrolled: ptxas (CUDA 13.0) dropped the high half of x from the address of the
        // unrolled loop's first copy (x + blockIdx.x * chunk): an illegal address.
#pragma unroll 1
        for (unsigned int k = 0; k < STAGES && k < mine; ++k) chunk_fill(x, first + k * stride, k, ring, bars);
    }
    Raw wr[KV], br[KV];
#pragma unroll
    for (int k = 0; k < KV; ++k) {
        const unsigned int vi = lane + 32u * k;
        wr[k] = vi < CV ? load_raw(w + (size_t)vi * VEC) : fill_raw((S)0);
        br[k] = vi < CV ? load_raw(b + (size_t)vi * VEC) : fill_raw((S)0);
    }
    __syncthreads();
    for (unsigned long long it = 0; it < mine; ++it) {
        const unsigned long long c = first + it * stride;
        const unsigned int stage = (unsigned int)(it % STAGES);
        barrier_wait(&bars[stage], (unsigned int)((it / STAGES) & 1ull));
        Raw* rows = reinterpret_cast<Raw*>(ring + stage * CHUNK_ELEMS);
        const unsigned int nrows = chunk_bytes(c) / (COLS * sizeof(S));
        for (unsigned int r = warp; r < nrows; r += BLOCK / 32) {
            Raw v[KV];
#pragma unroll
            for (int k = 0; k < KV; ++k) {
                const unsigned int vi = lane + 32u * k;
                v[k] = vi < CV ? shared_vec(rows + (size_t)r * CV + vi) : fill_raw((S)0);
            }
            // Padding vectors hold zeros: they add nothing to the sum and are skipped below.
            float sum = 0.0f;
#pragma unroll
            for (int k = 0; k < KV; ++k) {
                float f[VEC];
                unpack_f32(v[k], f);
#pragma unroll
                for (int i = 0; i < VEC; ++i) sum += f[i];
            }
            sum = group_reduce<32>(sum, Sum(), nullptr);
            const float mean = sum / (float)COLS;
            float m2 = 0.0f;
#pragma unroll
            for (int k = 0; k < KV; ++k) {
                if (lane + 32u * k < CV) {
                    float f[VEC];
                    unpack_f32(v[k], f);
#pragma unroll
                    for (int i = 0; i < VEC; ++i) {
                        const float d = f[i] - mean;
                        m2 = fmaf(d, d, m2);
                    }
                }
            }
            m2 = group_reduce<32>(m2, Sum(), nullptr);
            const float rstd = 1.0f / sqrtf(m2 / (float)COLS + eps);
#pragma unroll
            for (int k = 0; k < KV; ++k) {
                const unsigned int vi = lane + 32u * k;
                if (vi < CV) {
                    float f[VEC], wv[VEC], bv[VEC];
                    unpack_f32(v[k], f);
                    unpack_f32(wr[k], wv);
                    unpack_f32(br[k], bv);
#pragma unroll
                    for (int i = 0; i < VEC; ++i) f[i] = fmaf((f[i] - mean) * rstd, wv[i], bv[i]);
                    rows[(size_t)r * CV + vi] = pack_f32(f);
                }
            }
        }
        // The normalised chunk, written through the generic proxy, before the bulk store reads it.
        bulk_fence();
        __syncthreads();
        if (tid == 0) {
            bulk_store(y + c * CHUNK_ELEMS, rows, chunk_bytes(c));
            bulk_commit();
            // The previous chunk's buffer takes the chunk STAGES further on once its store has
            // read it (at most this chunk's store may still be reading).
            if (it >= 1 && it - 1 + STAGES < mine) {
                bulk_wait_read<1>();
                chunk_fill(x, first + (it - 1 + STAGES) * stride, (unsigned int)((it - 1) % STAGES), ring, bars);
            }
        }
    }
    if (tid == 0) bulk_wait_all();
}
