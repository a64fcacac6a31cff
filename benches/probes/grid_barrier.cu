// What one grid-wide barrier costs on this GPU, and what one all-reduce of two doubles across the
// grid costs (poisson's cg_persistent needs one of each per CG iteration).
//
//   nvcc -O3 -arch=sm_90 -o grid_barrier benches/probes/grid_barrier.cu && ./grid_barrier
//
// Every variant runs ITERS barriers in one cooperative launch of B blocks x 256 threads and
// reports microseconds per barrier (cudaEvent time of the launch / ITERS; the launch's own cost,
// a few microseconds, is spread over 2,000 iterations). Variants:
//   red+acq   poisson's barrier: red.release.gpu.add on one counter, ld.acquire.gpu polling by
//             thread 0, __syncthreads around it
//   cg        cooperative_groups::this_grid().sync()
//   red+acq+allreduce   the barrier, then every block adds the per-block partials (2 doubles per
//             block) in a fixed order, as cg_persistent does
//   +ddiv     the same plus cg_persistent's three dependent double divisions
//   +pass N   the same plus a pass that loads 3 words at 7 points and stores 5 words per point
//             over N points (L2-resident), as cg_persistent's pass does
#include <cooperative_groups.h>
#include <cstdio>
#include <vector>

namespace cg = cooperative_groups;

constexpr int ITERS = 2000;

__device__ __forceinline__ unsigned int load_acquire(const unsigned int* p) {
    unsigned int v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ void grid_barrier(unsigned int* count, unsigned int& target) {
    __syncthreads();
    target += gridDim.x;
    if (threadIdx.x == 0) {
        asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(count) : "memory");
        while (load_acquire(count) < target) {
        }
    }
    __syncthreads();
}

__device__ __forceinline__ void partials(double u, double v, double* pu, double* pv) {
    __shared__ double sums[2][8];
    for (int o = 16; o > 0; o >>= 1) {
        u += __shfl_down_sync(0xffffffffu, u, o);
        v += __shfl_down_sync(0xffffffffu, v, o);
    }
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) {
        sums[0][warp] = u;
        sums[1][warp] = v;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        double a = 0.0, c = 0.0;
        for (int w = 0; w < 8; ++w) {
            a += sums[0][w];
            c += sums[1][w];
        }
        pu[blockIdx.x] = a;
        pv[blockIdx.x] = c;
    }
}

__device__ __forceinline__ void totals(const double* pu, const double* pv, double& u, double& v) {
    __shared__ double t[2];
    if (threadIdx.x < 32) {
        double a = 0.0, c = 0.0;
        for (int b = threadIdx.x; b < (int)gridDim.x; b += 32) {
            a += __ldcg(pu + b);
            c += __ldcg(pv + b);
        }
        for (int o = 16; o > 0; o >>= 1) {
            a += __shfl_down_sync(0xffffffffu, a, o);
            c += __shfl_down_sync(0xffffffffu, c, o);
        }
        if (threadIdx.x == 0) {
            t[0] = a;
            t[1] = c;
        }
    }
    __syncthreads();
    u = t[0];
    v = t[1];
    __syncthreads();
}

// mode 0: red+acq; 1: cg sync; 2: + allreduce; 3: + ddiv; 4: + pass over n points.
__global__ void __launch_bounds__(256) probe(int mode, unsigned int* count, double* part,
                                             float* buf, long long n, double* out) {
    unsigned int target = 0;
    double g = 1.0, d = 2.0, a_prev = 1.0, g_prev = 1.0;
    for (int it = 0; it < ITERS; ++it) {
        double gg = 0.0, dd = 0.0;
        if (mode == 4) {
            const int parity = it & 1;
            const float* in = buf + (long long)parity * 3 * n;
            float* o = buf + (long long)(parity ^ 1) * 3 * n;
            for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
                 i += (long long)gridDim.x * blockDim.x) {
                float s = 0.f;
#pragma unroll
                for (int k = -3; k <= 3; ++k) {
                    long long j = i + k * 64;
                    j = j < 0 ? j + n : (j >= n ? j - n : j);
                    s += __ldca(in + j) - 0.5f * (__ldca(in + n + j) + __ldca(in + 2 * n + j));
                }
                o[i] = s * 1e-3f;
                o[n + i] = s * 2e-3f;
                o[2 * n + i] = s * 3e-3f;
                gg += (double)s * s;
                dd += (double)s;
            }
        }
        if (mode == 1) {
            cg::this_grid().sync();
            continue;
        }
        if (mode >= 2) partials(gg + 1.0, dd + 1.0, part + (it & 1) * 2 * gridDim.x,
                                part + (it & 1) * 2 * gridDim.x + gridDim.x);
        grid_barrier(count, target);
        if (mode >= 2) {
            double u, v;
            totals(part + (it & 1) * 2 * gridDim.x, part + (it & 1) * 2 * gridDim.x + gridDim.x,
                   u, v);
            g = u;
            d = v;
        }
        if (mode >= 3) {
            const double bk = g / g_prev;
            a_prev = g / (d - bk * g / a_prev);
            g_prev = g;
        }
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) *out = g + d + a_prev;
}

int main() {
    int sms = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    int occ = 0;
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, probe, 256, 0);
    unsigned int* count;
    double *part, *out;
    float* buf;
    const long long n_max = 64 * 64 * 64;
    cudaMalloc(&count, 4);
    cudaMalloc(&part, 4 * 4096 * sizeof(double));
    cudaMalloc(&out, 8);
    cudaMalloc(&buf, 6 * n_max * sizeof(float));
    cudaMemset(buf, 0, 6 * n_max * sizeof(float));
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    printf("device SMs %d, probe occupancy %d blocks of 256 per SM\n", sms, occ);
    printf("%-28s %7s %10s\n", "variant", "blocks", "us/iter");
    const char* names[] = {"red+acq", "cg.sync", "red+acq+allreduce", "+ddiv", "+pass"};
    std::vector<int> grids = {32, 132, 264, 396, 528};
    for (int mode = 0; mode < 5; ++mode) {
        for (int blocks : grids) {
            if (blocks > sms * occ) continue;
            for (long long n : (mode == 4 ? std::vector<long long>{4096, n_max}
                                          : std::vector<long long>{0})) {
                int m = mode;
                long long nn = n;
                void* args[] = {&m, &count, &part, &buf, &nn, &out};
                float best = 1e30f;
                for (int rep = 0; rep < 5; ++rep) {
                    cudaMemset(count, 0, 4);
                    cudaEventRecord(e0);
                    cudaError_t err = cudaLaunchCooperativeKernel((void*)probe, blocks, 256, args,
                                                                  0, nullptr);
                    cudaEventRecord(e1);
                    cudaEventSynchronize(e1);
                    if (err != cudaSuccess) {
                        printf("launch failed: %s\n", cudaGetErrorString(err));
                        return 1;
                    }
                    float ms = 0.f;
                    cudaEventElapsedTime(&ms, e0, e1);
                    best = ms < best ? ms : best;
                }
                char label[64];
                if (mode == 4) snprintf(label, sizeof label, "%s %lld", names[mode], n);
                else snprintf(label, sizeof label, "%s", names[mode]);
                printf("%-28s %7d %10.3f\n", label, blocks, best * 1e3 / ITERS);
            }
        }
    }
    cudaError_t err = cudaDeviceSynchronize();
    printf("status: %s\n", cudaGetErrorString(err));
    return err == cudaSuccess ? 0 : 1;
}
