// cuda/fast/base.cu: the base pass (ff_base). One part of the fast path's program (prelude.cu lists
// the parts).
// ---------------------------------------------------------------------------------------------
// ff_base: heavy = dense and detail = 0 over [B,C,H,W] where no refine writes them, alpha =
// gate(boundary, uncertainty) over [B,H,W] (the L1 level's gate: the reported alpha is the L1
// path's). It runs after ff_select, whose coverage map `cover` [B, G] marks per L0 tile bit 0
// selected (a refine writes heavy at every pixel of the tile: L0's, or, where it is split, the
// L1 refine at its children's) and bit 1 split (its four L1 children cover it, and the L1 refine
// writes heavy and detail at every pixel of theirs; the fused L0 refines then write only its f32
// result, refine_fused.cu: keeps_l0): the pass skips
// those bytes, and the dense reads of the first (at the profile, 20 of the 64 tiles' heavy).
// Nothing else reads what it writes, so the host runs it beside the levels, in few blocks
// (device/streams.rs: one per 16 bands). The work is B * H / t0 * ceil(C / BASE_CHANNELS)
// bands, band ((b, r), channel group) being tile row r (t0 rows of W) of BASE_CHANNELS
// consecutive planes of frame b, which share their coverage; block i copies bands i, i +
// gridDim.x, ... (base_band), then the blocks share alpha's pixels.
#define BASE_CHANNELS 8

// One band (C a multiple of BASE_CHANNELS: the fast path's C is one of 16, device/sizing.rs): a
// thread looks up the coverage of its columns once and copies them in every plane, all its loads
// in flight. Threads go over the band's 16-byte vectors where t0 and W are multiples of a
// vector's elements (a vector then never straddles a tile), over its elements elsewhere. A block a band (one vector a thread at the profile) spent ~200 instructions a warp
// on its indices: 20 % of a B=8 frame's instructions (H100, 2026-11-27), issue slots the levels
// beside it need. The vectors stream (ld/st.global.cs, evict-first): beside the levels the base's
// bytes would otherwise push the levels' packed tiles and weights out of L2 (H100, apex-host: B=8
// 170.2-170.6 us against 175.0-175.2 with plain loads and stores, 256x256 77.2 against 86.8-87.1;
// twenty-third session, call 4).
__device__ __forceinline__ void base_band(const S* __restrict__ dense,
                                          const unsigned char* __restrict__ cover,
                                          S* __restrict__ heavy, S* __restrict__ detail, int band,
                                          int c0, int C, int H, int W, int t0) {
    const int gh = H / t0, gw = W / t0;
    const int b = band / gh, r = band - b * gh;
    const unsigned char* row = cover + (long long)band * gw;  // cover[b, r * gw ..]
    const long long plane = (long long)H * W;
    const long long at0 = ((long long)b * C + c0) * plane + (long long)r * t0 * W;
    const S* d = dense + at0;
    S* h = heavy + at0;
    S* z = detail + at0;
    const int per = 16 / sizeof(S);
    if (W % per == 0 && t0 % per == 0) {
        const int vpr = W / per, tv = t0 / per, n = t0 * vpr;
        const long long pv = plane / per;  // a plane in vectors
        const uint4* d4 = reinterpret_cast<const uint4*>(d);
        uint4* h4 = reinterpret_cast<uint4*>(h);
        uint4* z4 = reinterpret_cast<uint4*>(z);
        for (int j = threadIdx.x; j < n; j += blockDim.x) {
            const int cov = row[(j % vpr) / tv];
            if (!(cov & 1)) {
                uint4 v[BASE_CHANNELS];
#pragma unroll
                for (int i = 0; i < BASE_CHANNELS; ++i) v[i] = __ldcs(&d4[i * pv + j]);
#pragma unroll
                for (int i = 0; i < BASE_CHANNELS; ++i) __stcs(&h4[i * pv + j], v[i]);
            }
            if (!(cov & 2)) {
#pragma unroll
                for (int i = 0; i < BASE_CHANNELS; ++i)
                    __stcs(&z4[i * pv + j], make_uint4(0u, 0u, 0u, 0u));
            }
        }
    } else {
        const int n = t0 * W;
        for (int e = threadIdx.x; e < n; e += blockDim.x) {
            const int cov = row[(e % W) / t0];
            for (int i = 0; i < BASE_CHANNELS; ++i) {
                if (!(cov & 1)) h[i * plane + e] = d[i * plane + e];
                if (!(cov & 2)) z[i * plane + e] = from_f32(0.0f);
            }
        }
    }
}

// At most 64 registers (four blocks a SM): a block then takes the registers of one lean refine
// CTA on its SM, not two (99 unbounded).
extern "C" __global__ void __launch_bounds__(THREADS, 4) ff_base(
    const S* __restrict__ dense, const S* __restrict__ boundary, const S* __restrict__ uncertainty,
    const float* __restrict__ weights_l1, const unsigned char* __restrict__ cover,
    S* __restrict__ heavy, S* __restrict__ detail, S* __restrict__ alpha, long long pixels, int C,
    int H, int W, int t0) {
    FF_TL(TL_BASE, heavy);
    FF_AFTER_PREDECESSOR();
    const int groups = (C + BASE_CHANNELS - 1) / BASE_CHANNELS;
    const int bands = (int)(pixels / ((long long)W * t0)) * groups;
    for (int i = blockIdx.x; i < bands; i += gridDim.x) {
        const int band = i / groups;
        base_band(dense, cover, heavy, detail, band, (i - band * groups) * BASE_CHANNELS, C, H, W,
                  t0);
    }
    const long long stride = (long long)gridDim.x * blockDim.x;
    const long long first = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (first - threadIdx.x >= pixels) return;
    const Level l1 = level_at(weights_l1, C);
    for (long long i = first; i < pixels; i += stride) {
        alpha[i] = from_f32(gate_alpha(l1.gate, to_f32(boundary[i]), to_f32(uncertainty[i])));
    }
}
