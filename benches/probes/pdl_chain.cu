// What programmatic dependent launch (PDL) buys a chain of bandwidth-bound kernels in a CUDA
// graph, DRAM-cold and L2-hot (issue 14: LayerNorm bf16 8192 x 1024 sits at 100 % of a
// same-size copy, 85 % of calibrate's 1 GiB copy line; the seed's 2 M-element shapes miss 3 us).
//
//   nvcc -O3 -arch=sm_90 -o pdl_chain benches/probes/pdl_chain.cu && ./pdl_chain
//
// The kernel is a float4 copy, grid-stride over `n4` vectors, 2 waves of 256-thread blocks a
// SM's worth. Modes:
//   plain      cudaLaunchKernelEx with no attribute (apex-host's batch graph as today)
//   pdl        + cudaLaunchAttributeProgrammaticStreamSerialization; the kernel runs
//              `griddepcontrol.wait` before touching memory and `griddepcontrol.launch_dependents`
//              at its start, so the next call's blocks may become resident while this one drains
//              and are released the moment its memory is visible
//   pdl_late   the same attribute, the trigger left implicit (at the kernel's end)
// Each row: bytes a direction, sets (1: L2-hot; else sets x 2 x bytes >= 3 x L2: DRAM-cold, the
// sets used round-robin as apex-host rotates them), one graph of G kernel nodes captured from
// the stream, 25 samples of one graph launch each; us per call as the median and min.
#include <algorithm>
#include <cstdio>
#include <vector>

#define CHECK(x)                                                                        \
    do {                                                                                \
        cudaError_t e_ = (x);                                                           \
        if (e_ != cudaSuccess) {                                                        \
            std::printf("%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
            std::exit(1);                                                               \
        }                                                                               \
    } while (0)

template <bool Wait, bool Trigger>
__global__ void __launch_bounds__(256) k_copy(const float4* __restrict__ in, float4* __restrict__ out,
                                              long long n4) {
    if (Wait) asm volatile("griddepcontrol.wait;" ::: "memory");
    if (Trigger) asm volatile("griddepcontrol.launch_dependents;");
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n4;
         i += (long long)gridDim.x * blockDim.x)
        out[i] = in[i];
}

static float run(int mode, size_t bytes, int sets, int G, int grid, std::vector<float4*>& ins,
                 std::vector<float4*>& outs, float* min_us) {
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    const long long n4 = bytes / 16;
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(grid);
    cfg.blockDim = dim3(256);
    cfg.stream = s;
    cfg.attrs = mode == 0 ? nullptr : attr;
    cfg.numAttrs = mode == 0 ? 0 : 1;
    cudaGraph_t graph;
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    for (int i = 0; i < G; ++i) {
        const float4* in = ins[i % sets];
        float4* out = outs[i % sets];
        if (mode == 0) CHECK(cudaLaunchKernelEx(&cfg, k_copy<false, false>, in, out, n4));
        if (mode == 1) CHECK(cudaLaunchKernelEx(&cfg, k_copy<true, true>, in, out, n4));
        if (mode == 2) CHECK(cudaLaunchKernelEx(&cfg, k_copy<true, false>, in, out, n4));
    }
    CHECK(cudaStreamEndCapture(s, &graph));
    cudaGraphExec_t exec;
    CHECK(cudaGraphInstantiate(&exec, graph, 0));
    cudaEvent_t a, b;
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));
    CHECK(cudaGraphLaunch(exec, s));  // warm-up
    CHECK(cudaStreamSynchronize(s));
    std::vector<float> us;
    for (int r = 0; r < 25; ++r) {
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
    CHECK(cudaStreamDestroy(s));
    return us[us.size() / 2];
}

int main() {
    int dev = 0, sms = 0;
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    int l2 = 0;
    CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
    cudaDeviceProp p;
    CHECK(cudaGetDeviceProperties(&p, dev));
    std::printf("%s, %d SMs, L2 %d MiB\n", p.name, sms, l2 >> 20);
    const size_t sizes[] = {4194304, 8388608, 16777216, 33554432, 1073741824 / 4};
    const char* names[] = {"plain", "pdl", "pdl_late"};
    std::printf("%12s %5s %5s | %9s %9s | %9s %9s | %9s %9s | pdl/plain\n", "bytes/dir", "sets",
                "G", "plain", "min", "pdl", "min", "pdl_late", "min");
    for (size_t bytes : sizes) {
        for (int hot = 0; hot < 2; ++hot) {
            if (hot && bytes > (size_t)l2 / 4) continue;
            int sets = hot ? 1 : (int)std::max<size_t>(2, (3 * (size_t)l2 + 2 * bytes - 1) / (2 * bytes));
            const int G = bytes >= (1u << 28) ? 20 : 400;
            std::vector<float4*> ins(sets), outs(sets);
            for (int i = 0; i < sets; ++i) {
                CHECK(cudaMalloc(&ins[i], bytes));
                CHECK(cudaMalloc(&outs[i], bytes));
                CHECK(cudaMemset(ins[i], 0x3c, bytes));
                CHECK(cudaMemset(outs[i], 0, bytes));
            }
            int bps = 0;
            CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&bps, k_copy<true, true>, 256, 0));
            const int grid = sms * bps;
            float med[3], mn[3];
            for (int m = 0; m < 3; ++m) med[m] = run(m, bytes, sets, G, grid, ins, outs, &mn[m]);
            std::printf("%12zu %5d %5d | %9.3f %9.3f | %9.3f %9.3f | %9.3f %9.3f | %.3f  (%s, %.0f GB/s plain)\n",
                        bytes, sets, G, med[0], mn[0], med[1], mn[1], med[2], mn[2], med[1] / med[0],
                        hot ? "L2-hot" : "DRAM-cold", 2.0 * bytes / med[0] / 1e3);
            (void)names;
            for (int i = 0; i < sets; ++i) {
                CHECK(cudaFree(ins[i]));
                CHECK(cudaFree(outs[i]));
            }
        }
    }
    return 0;
}
