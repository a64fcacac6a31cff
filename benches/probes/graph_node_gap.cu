// What a kernel node of a CUDA graph costs back to back on this GPU, and whether calibrate's
// paced 1 us kernel can hold its pace in a batch (issue 10: batch error <= 5 % at 1 us; the
// H100 read +7.5 %, session 4).
//
//   nvcc -O3 -arch=sm_90 -o graph_node_gap benches/probes/graph_node_gap.cu && ./graph_node_gap
//
// Kernels, one thread each, as apex-host's built-ins:
//   empty      returns at once (no memory access)
//   store      out[1] += 1 (a load, then a store the kernel's end must flush)
//   red        atomicAdd(out + 1, 1): a store without a load
//   spin N     spins N ns from its own start, writes two words (calibrate's `isolated`)
//   paced N    calibrate's `paced` metronome: holds the stream until the previous call's
//              deadline + N ns (a load of that deadline, then after the spin a load and store of
//              the call count); C calls last C*N ns exactly while the calls keep the pace
//   paced_red  the same with the count added by a fire-and-forget atomic (one load on the path)
//   slotted N  no load: each call ends at the next multiple of N ns of the global timer
// Each row: CALLS calls per sample as graphs of G kernel nodes launched CALLS/G times (G = CALLS:
// one graph, as apex-host's batch timer builds it), 30 samples, the chain reset before each; us
// per call as the median and min of the samples (cudaEvent around the launches); for the paced
// kernels the error against N, and for `paced` the mean lag: ns by which its calls started after
// their deadline, on average over the last sample (a late call delays every later deadline).
#include <algorithm>
#include <cstdio>
#include <vector>

__device__ __forceinline__ unsigned long long gt() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__global__ void k_empty() {}
__global__ void k_store(unsigned long long* out) { out[1] += 1; }
__global__ void k_red(unsigned long long* out) { atomicAdd(out + 1, 1ull); }
__global__ void k_spin(unsigned long long ns, unsigned long long* out) {
    unsigned long long t0 = gt(), t;
    do { t = gt(); } while (t - t0 < ns);
    out[0] = t - t0;
    out[1] += 1;
}
// state[0]: the chain's deadline, state[1]: calls, state[2]: the first call's start, state[3]:
// the sum over calls of the lag (ns a call started after its deadline).
__global__ void k_paced(unsigned long long ns, unsigned long long* state) {
    volatile unsigned long long* s = state;
    unsigned long long now = gt();
    unsigned long long prev = s[0];
    if (prev == 0) s[2] = now;
    unsigned long long deadline = (prev == 0 ? now : prev) + ns;
    if (now > deadline) s[3] = s[3] + (now - deadline);
    while (gt() < deadline) { }
    s[0] = deadline;
    s[1] = s[1] + 1;
}
// calibrate's paced kernel with its call count added by a fire-and-forget atomic (one load, of
// the previous deadline, left on the call's path instead of two).
__global__ void k_paced_red(unsigned long long ns, unsigned long long* state) {
    volatile unsigned long long* s = state;
    unsigned long long now = gt();
    unsigned long long prev = s[0];
    unsigned long long deadline = (prev == 0 ? now : prev) + ns;
    while (gt() < deadline) { }
    s[0] = deadline;
    atomicAdd(state + 1, 1ull);
}
// No load at all: each call ends at the next multiple of N ns of the global timer (a call that
// starts in its slot ends with it; one that starts late loses the rest of a slot).
__global__ void k_slotted(unsigned long long ns, unsigned long long* state) {
    unsigned long long deadline = (gt() / ns + 1) * ns;
    while (gt() < deadline) { }
    atomicAdd(state + 1, 1ull);
}

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
    printf("%s: %s\n", #x, cudaGetErrorString(e)); return 1; } } while (0)

enum Kind { EMPTY, STORE, RED, SPIN, PACED, PACED_RED, SLOTTED };
static const char* names[] = {"empty", "store", "red", "spin", "paced", "paced_red", "slotted"};

int run(Kind kind, unsigned long long ns, int calls, int g, unsigned long long* state,
        cudaStream_t st) {
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeRelaxed));
    for (int i = 0; i < g; ++i) {
        switch (kind) {
            case EMPTY: k_empty<<<1, 1, 0, st>>>(); break;
            case STORE: k_store<<<1, 1, 0, st>>>(state); break;
            case SPIN: k_spin<<<1, 1, 0, st>>>(ns, state); break;
            case PACED: k_paced<<<1, 1, 0, st>>>(ns, state); break;
            case RED: k_red<<<1, 1, 0, st>>>(state); break;
            case PACED_RED: k_paced_red<<<1, 1, 0, st>>>(ns, state); break;
            case SLOTTED: k_slotted<<<1, 1, 0, st>>>(ns, state); break;
        }
    }
    CK(cudaStreamEndCapture(st, &graph));
    CK(cudaGraphInstantiate(&exec, graph, 0));
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    const int launches = calls / g;
    std::vector<float> us;
    double late_ns = 0;
    for (int s = -2; s < 30; ++s) {
        CK(cudaMemsetAsync(state, 0, 4 * sizeof(unsigned long long), st));
        CK(cudaEventRecord(a, st));
        for (int l = 0; l < launches; ++l) CK(cudaGraphLaunch(exec, st));
        CK(cudaEventRecord(b, st));
        CK(cudaStreamSynchronize(st));
        float ms;
        CK(cudaEventElapsedTime(&ms, a, b));
        if (s >= 0) us.push_back(ms * 1e3f / (launches * g));
        if (kind == PACED && s == 29) {
            unsigned long long h[4];
            CK(cudaMemcpy(h, state, sizeof h, cudaMemcpyDeviceToHost));
            late_ns = (double)h[3];
        }
    }
    std::sort(us.begin(), us.end());
    printf("%-9s %6llu ns  calls %5d  graph nodes %5d  us/call median %7.4f  min %7.4f",
           names[kind], ns, launches * g, g, us[us.size() / 2], us[0]);
    if (kind == PACED) printf("  mean lag %.0f ns", late_ns / (launches * g));
    if (kind >= PACED) printf("  error %+6.2f %%", (us[us.size() / 2] * 1e3 / ns - 1) * 100);
    printf("\n");
    CK(cudaGraphExecDestroy(exec));
    CK(cudaGraphDestroy(graph));
    return 0;
}

int main() {
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, 0));
    printf("%s\n", p.name);
    unsigned long long* state;
    CK(cudaMalloc(&state, 4 * sizeof(unsigned long long)));
    cudaStream_t st;
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    const int calls = 1024;
    for (int g : {1024, 64}) {
        for (Kind k : {EMPTY, STORE, RED}) {
            if (run(k, 0, calls, g, state, st)) return 1;
        }
    }
    for (unsigned long long ns : {1000ull, 1500ull, 2000ull, 10000ull}) {
        for (Kind k : {SPIN, PACED, PACED_RED, SLOTTED}) {
            if (run(k, ns, ns >= 10000 ? 128 : calls, ns >= 10000 ? 128 : 1024, state, st)) return 1;
        }
    }
    return 0;
}
