// The storage type of a kernel's tensors and its two conversions, one definition for every CUDA
// plugin (apex_plugin_api::cuda::STORAGE_CUH; a program puts it after its `#define DTYPE`).
//
// DTYPE 0 fp32, 1 fp16, 2 bf16 (apex_plugin_api::cuda::dtype_code). S is `float`, or the raw
// 16-bit pattern as `unsigned short`. No CUDA header is included: fp16 converts with PTX `cvt`
// and bf16 with integer round-to-nearest-even (any NaN becomes the quiet NaN 0x7fc0), which
// NVRTC accepts for any architecture.

#if DTYPE == 0
typedef float S;
#elif DTYPE == 1 || DTYPE == 2
typedef unsigned short S;
#else
#error "DTYPE must be 0 (fp32), 1 (fp16) or 2 (bf16)"
#endif

// A stored value as f32 (exact for every storage).
__device__ __forceinline__ float to_f32(S v) {
#if DTYPE == 0
    return v;
#elif DTYPE == 1
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(v));
    return f;
#else
    return __uint_as_float(((unsigned int)v) << 16);
#endif
}

// An f32 value rounded to the storage, to nearest even.
__device__ __forceinline__ S from_f32(float f) {
#if DTYPE == 0
    return f;
#elif DTYPE == 1
    unsigned short h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h;
#else
    unsigned int u = __float_as_uint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (unsigned short)0x7fc0u;
    u += 0x7fffu + ((u >> 16) & 1u);
    return (unsigned short)(u >> 16);
#endif
}
