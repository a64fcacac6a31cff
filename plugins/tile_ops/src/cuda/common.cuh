// Shared device code for the tile ops: 16-byte vectors and their lanes. Expects VEC (elements per
// vector access) and, before it, plugin-api's storage header (S, to_f32, from_f32 for DTYPE 0
// fp32, 1 fp16, 2 bf16; program.rs: assemble).

template <int BYTES> struct RawOf;
template <> struct RawOf<16> { typedef uint4 T; };
template <> struct RawOf<8> { typedef uint2 T; };
template <> struct RawOf<4> { typedef unsigned int T; };
template <> struct RawOf<2> { typedef unsigned short T; };

// One vector of VEC elements, moved as a single 16/8/4/2-byte access.
typedef RawOf<VEC * sizeof(S)>::T Raw;
union Lanes {
    Raw raw;
    S s[VEC];
};

// Cache policy of the 16-byte map accesses (HINT, default 0). Streaming ops touch every byte once,
// so keeping it in L1/L2 only evicts what other blocks still need:
//   0: plain ld/st;  1: .cs (evict-first) loads and stores;
//   2: loads .L1::no_allocate with a 256-byte L2 prefetch, .cs stores;  3: .cs loads with the
//   256-byte L2 prefetch, .cs stores;  4: read-only-path loads without L1 allocation, .cs stores;
//   5: plain loads, .cs stores.
// Narrower vectors (rows shorter than 16 bytes) always use plain accesses.
#ifndef HINT
#define HINT 0
#endif

template <typename R> __device__ __forceinline__ R ld_hint(const R* __restrict__ p) { return *p; }
template <typename R> __device__ __forceinline__ void st_hint(R* __restrict__ p, R v) { *p = v; }

#if HINT != 0 && HINT != 5
template <> __device__ __forceinline__ uint4 ld_hint<uint4>(const uint4* __restrict__ p) {
    uint4 v;
#if HINT == 1
    asm("ld.global.cs.v4.u32 {%0, %1, %2, %3}, [%4];"
#elif HINT == 2
    asm("ld.global.L1::no_allocate.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
#elif HINT == 3
    asm("ld.global.cs.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
#else
    asm("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
#endif
        : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
        : "l"(p));
    return v;
}
#endif
#if HINT != 0
template <> __device__ __forceinline__ void st_hint<uint4>(uint4* __restrict__ p, uint4 v) {
    asm volatile("st.global.cs.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z),
                 "r"(v.w)
                 : "memory");
}
#endif

__device__ __forceinline__ Raw load_raw(const S* __restrict__ p) {
    return ld_hint(reinterpret_cast<const Raw*>(p));
}

__device__ __forceinline__ void store_raw(S* __restrict__ p, Raw v) {
    st_hint(reinterpret_cast<Raw*>(p), v);
}

__device__ __forceinline__ void unpack_f32(Raw r, float (&out)[VEC]) {
    Lanes u;
    u.raw = r;
#pragma unroll
    for (int i = 0; i < VEC; ++i) out[i] = to_f32(u.s[i]);
}

__device__ __forceinline__ Raw pack_f32(const float (&in)[VEC]) {
    Lanes u;
#pragma unroll
    for (int i = 0; i < VEC; ++i) u.s[i] = from_f32(in[i]);
    return u.raw;
}

__device__ __forceinline__ void load_f32(const S* __restrict__ p, float (&out)[VEC]) {
    unpack_f32(load_raw(p), out);
}

__device__ __forceinline__ void store_f32(S* __restrict__ p, const float (&in)[VEC]) {
    store_raw(p, pack_f32(in));
}

__device__ __forceinline__ Raw zero_raw() {
    Lanes u;
#pragma unroll
    for (int i = 0; i < VEC; ++i) u.s[i] = (S)0;
    return u.raw;
}
