// TMA bulk copies between global and shared memory (sm_90 and later), for the kernels that stage
// their data in shared memory instead of registers (cross-entropy's SMEM plan; LayerNorm's bulk
// schedule, which also stores from shared memory). A copy is one instruction of one thread, so
// the bytes in flight do not depend on how many registers the block's threads can spare.
// Included after common.cuh (Raw); nothing here is emitted unless a kernel calls it.

__device__ __forceinline__ unsigned int smem_addr(const void* p) {
    return (unsigned int)__cvta_generic_to_shared(p);
}

// An mbarrier whose phases complete with one arrival and the bytes of the copies it expects.
// Call from one thread, then `bulk_fence` and a __syncthreads before any copy or wait uses it.
__device__ __forceinline__ void barrier_init(unsigned long long* bar) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_addr(bar)) : "memory");
}

// Makes this thread's barrier initialisations (and its earlier shared-memory accesses) visible
// to the copies (the async proxy). The other threads see them after the next __syncthreads.
__device__ __forceinline__ void bulk_fence() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }

// Copies `bytes` (a multiple of 16, both addresses 16-byte aligned) from global memory to this
// block's shared memory; `bar`'s current phase completes when they have landed. One thread per
// barrier and phase.
__device__ __forceinline__ void bulk_load(void* dst, const void* src, unsigned int bytes,
                                          unsigned long long* bar) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(bar)), "r"(bytes)
                 : "memory");
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                     smem_addr(dst)),
                 "l"(src), "r"(bytes), "r"(smem_addr(bar))
                 : "memory");
}

// One 16-byte vector of shared memory. A volatile asm load, so that each walk reads shared memory
// again instead of the compiler keeping an earlier walk's vectors live in registers. A template
// so that programs whose Raw is narrower than 16 bytes (and never call it) still compile.
template <class R>
__device__ __forceinline__ R shared_vec(const R* p) {
    static_assert(sizeof(R) == 16, "shared_vec moves 16-byte vectors");
    R r;
    asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
                 : "r"(smem_addr(p)));
    return r;
}

// Waits until the phase of `bar` with parity `parity` (0 for its first use, then alternating)
// has completed; the data of that phase's copies is then visible to this thread.
__device__ __forceinline__ void barrier_wait(unsigned long long* bar, unsigned int parity) {
    unsigned int done;
    do {
        asm volatile(
            "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}"
            : "=r"(done)
            : "r"(smem_addr(bar)), "r"(parity)
            : "memory");
    } while (!done);
}

// Copies `bytes` (a multiple of 16, both addresses 16-byte aligned) from this block's shared
// memory to global memory as one bulk copy in the thread's current bulk group. The shared memory
// must have been written before a `bulk_fence` by each writing thread and a __syncthreads.
__device__ __forceinline__ void bulk_store(void* dst, const void* src, unsigned int bytes) {
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(dst), "r"(smem_addr(src)),
                 "r"(bytes)
                 : "memory");
}

// Closes the thread's current bulk group (the stores issued since the last commit).
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }

// Waits until at most N of the thread's committed bulk groups have not yet read their shared
// memory (which may then be overwritten).
template <int N>
__device__ __forceinline__ void bulk_wait_read() {
    asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
}

// Waits until every committed bulk group of the thread has completed (its writes done).
__device__ __forceinline__ void bulk_wait_all() { asm volatile("cp.async.bulk.wait_group 0;" ::: "memory"); }
