// The FF frame's eager path: one kernel per op, in the order PyTorch eager runs the FFModule
// (spec/apex-x-kernels.md §2.3), every intermediate a whole f32 tensor in global memory. The
// selection runs on the host and its ids are copied to the device inside the frame, as the
// original's per-sample Python loop does. Appended to the fast path's program, cuda/fast/*.cu
// (its helpers: S, to_f32, from_f32, Level, the gate and token formulas), so one module per
// storage type holds both paths.
//
// Every kernel is a grid-stride loop over its output (1-D grid, THREADS threads) unless it says
// otherwise. Shapes: maps [B,C,H,W], proxies [B,H,W], tiles [B,K,C,t,t] ("BK" = B*K rows),
// tokens [BK,C], the FiLM output [BK,2C], the pointwise output [BK,2C,t,t].

#define GRID_STRIDE(i, n) \
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < (n); \
         i += (long long)gridDim.x * blockDim.x)

// dst = src as f32 (the input map, the level's base).
extern "C" __global__ void e_to_f32(const S* __restrict__ src, float* __restrict__ dst, long long n) {
    GRID_STRIDE(i, n) dst[i] = to_f32(src[i]);
}

// dst = src (a clone).
extern "C" __global__ void e_copy(const float* __restrict__ src, float* __restrict__ dst, long long n) {
    GRID_STRIDE(i, n) dst[i] = src[i];
}

// dst = src rounded to the storage (the outputs).
extern "C" __global__ void e_store(const float* __restrict__ src, S* __restrict__ dst, long long n) {
    GRID_STRIDE(i, n) dst[i] = from_f32(src[i]);
}

// TilePack: packed[b,k,c,:,:] = map[b,c, tile ids[b,k]].
extern "C" __global__ void e_gather(const float* __restrict__ map, const int* __restrict__ ids,
                                    float* __restrict__ packed, int C, int H, int W, int t, int gw,
                                    int K, long long n) {
    const int P = t * t;
    GRID_STRIDE(i, n) {
        const long long bkc = i / P;
        const int p = (int)(i - bkc * P), c = (int)(bkc % C);
        const long long bk = bkc / C;
        const int b = (int)(bk / K), id = ids[bk];
        const int y = (id / gw) * t + p / t, x = (id % gw) * t + p % t;
        packed[i] = map[(((long long)b * C + c) * H + y) * W + x];
    }
}

// Token means: tokens[bk,c] = mean over the tile's pixels (a warp per row of P values).
extern "C" __global__ void e_mean(const float* __restrict__ packed, float* __restrict__ tokens,
                                  int P, long long rows) {
    const int lane = threadIdx.x & 31;
    for (long long r = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / 32; r < rows;
         r += (long long)gridDim.x * blockDim.x / 32) {
        float s = 0.0f;
        for (int p = lane; p < P; p += 32) s += packed[r * P + p];
        s = warp_sum(s);
        if (lane == 0) tokens[r] = s / (float)P;
    }
}

// One scan direction over the K tiles of each frame: thread per (b, c); dir 0 forward (params
// rows 0..4), 1 backward (rows 5..9). y[b,k,c] = out_gain * state after step k.
extern "C" __global__ void e_scan(const float* __restrict__ tokens, const float* __restrict__ weights,
                                  float* __restrict__ y, int C, int K, int dir, long long n) {
    const Level l = level_at(weights, C);
    GRID_STRIDE(i, n) {
        const int c = (int)(i % C);
        const long long b = i / C;
        const float* p = l.scan + dir * 5 * C;
        const float a = p[c], oma = p[C + c], ig = p[2 * C + c], sb = p[3 * C + c], og = p[4 * C + c];
        float s = 0.0f;
        for (int j = 0; j < K; ++j) {
            const int k = dir == 0 ? j : K - 1 - j;
            const long long at = (b * K + k) * C + c;
            s = a * s + oma * (ig * clean_token(tokens[at]) + sb);
            y[at] = og * s;
        }
    }
}

// mixed = g*y_f + (1-g)*y_b, then the FiLM's token cleaning (nan -> 0, clamp).
extern "C" __global__ void e_merge(const float* __restrict__ yf, const float* __restrict__ yb,
                                   const float* __restrict__ weights, float* __restrict__ x, int C,
                                   long long n) {
    const Level l = level_at(weights, C);
    GRID_STRIDE(i, n) {
        const int c = (int)(i % C);
        x[i] = clean_token(l.scan[10 * C + c] * yf[i] + l.scan[11 * C + c] * yb[i]);
    }
}

// LayerNorm(C) of each row (a block per row, in place).
extern "C" __global__ void e_layernorm(float* __restrict__ x, const float* __restrict__ weights, int C,
                                       long long rows) {
    __shared__ float red[33];
    const Level l = level_at(weights, C);
    for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
        float* row = x + r * C;
        float part = 0.0f;
        for (int c = threadIdx.x; c < C; c += blockDim.x) part += row[c];
        const float mean = block_sum(part, red) / (float)C;
        part = 0.0f;
        for (int c = threadIdx.x; c < C; c += blockDim.x) part += (row[c] - mean) * (row[c] - mean);
        const float inv = rsqrtf(block_sum(part, red) / (float)C + (float)NORM_EPS);
        for (int c = threadIdx.x; c < C; c += blockDim.x)
            row[c] = (row[c] - mean) * inv * l.ln_w[c] + l.ln_b[c];
        __syncthreads();
    }
}

// y[r,o] = b[o] + w[o,:] . x[r,:] (thread per output): which = 0 fc1 (C -> C), 1 fc2 (C -> 2C).
extern "C" __global__ void e_linear(const float* __restrict__ x, const float* __restrict__ weights,
                                    float* __restrict__ y, int C, int which, long long n) {
    const Level l = level_at(weights, C);
    const int out = which == 0 ? C : 2 * C;
    const float* w = which == 0 ? l.fc1 : l.fc2;
    const float* bias = which == 0 ? l.fc1_b : l.fc2_b;
    GRID_STRIDE(i, n) {
        const int o = (int)(i % out);
        const long long r = i / out;
        float z = bias[o];
        for (int j = 0; j < C; ++j) z += w[(long long)o * C + j] * x[r * C + j];
        y[i] = z;
    }
}

// Elementwise ops of the FiLM (in place): 0 SiLU; 1 tanh of the first half of each 2C row.
extern "C" __global__ void e_activate(float* __restrict__ x, int C, int op, long long n) {
    GRID_STRIDE(i, n) {
        if (op == 0) x[i] = x[i] * sigmoidf_(x[i]);
        else if (i % (2 * C) < C) x[i] = tanhf(x[i]);
    }
}

// m = (1 + gamma) * packed + beta.
extern "C" __global__ void e_modulate(const float* __restrict__ packed, const float* __restrict__ film,
                                      float* __restrict__ m, int C, int P, long long n) {
    GRID_STRIDE(i, n) {
        const long long bkc = i / P;
        const int c = (int)(bkc % C);
        const float* f = film + (bkc / C) * 2 * C;
        m[i] = (1.0f + f[c]) * packed[i] + f[C + c];
    }
}

// Depthwise 3x3 with bias, zero padding at the tile's edges.
extern "C" __global__ void e_dwconv(const float* __restrict__ m, const float* __restrict__ weights,
                                    float* __restrict__ out, int C, int t, long long n) {
    const Level l = level_at(weights, C);
    const int P = t * t;
    GRID_STRIDE(i, n) {
        const long long bkc = i / P;
        const int p = (int)(i - bkc * P), c = (int)(bkc % C), y = p / t, x = p % t;
        const float* plane = m + bkc * P;
        float acc = l.dw_b[c];
        for (int di = 0; di < 3; ++di)
            for (int dj = 0; dj < 3; ++dj) {
                const int yy = y - 1 + di, xx = x - 1 + dj;
                if (yy >= 0 && yy < t && xx >= 0 && xx < t)
                    acc += l.dw_w[c * 9 + di * 3 + dj] * plane[yy * t + xx];
            }
        out[i] = acc;
    }
}

// Pointwise 1x1 C -> 2C with bias (thread per output; pw: the f32 weights [2C][C] in their own
// buffer, since the fast path's 16-bit layouts hold mma fragments).
extern "C" __global__ void e_pwconv(const float* __restrict__ dw, const float* __restrict__ pw,
                                    const float* __restrict__ weights, float* __restrict__ out,
                                    int C, int P, long long n) {
    const Level l = level_at(weights, C);
    GRID_STRIDE(i, n) {
        const long long bko = i / P;
        const int p = (int)(i - bko * P), o = (int)(bko % (2 * C));
        const float* src = dw + (bko / (2 * C)) * C * P + p;
        float z = l.pw_b[o];
        for (int c = 0; c < C; ++c) z += pw[(long long)o * C + c] * src[(long long)c * P];
        out[i] = z;
    }
}

// GroupNorm(1) statistics of each tile's 2C*P values (a block per tile, two passes): mean, 1/std.
extern "C" __global__ void e_gn_stats(const float* __restrict__ x, float* __restrict__ stat, int n_tile,
                                      long long tiles) {
    __shared__ float red[33];
    for (long long r = blockIdx.x; r < tiles; r += gridDim.x) {
        const float* v = x + r * n_tile;
        float part = 0.0f;
        for (int i = threadIdx.x; i < n_tile; i += blockDim.x) part += v[i];
        const float mean = block_sum(part, red) / (float)n_tile;
        part = 0.0f;
        for (int i = threadIdx.x; i < n_tile; i += blockDim.x) part += (v[i] - mean) * (v[i] - mean);
        const float var = block_sum(part, red) / (float)n_tile;
        if (threadIdx.x == 0) {
            stat[2 * r] = mean;
            stat[2 * r + 1] = rsqrtf(var + (float)NORM_EPS);
        }
        __syncthreads();
    }
}

// GroupNorm apply with the affine terms (in place over [BK,2C,P]).
extern "C" __global__ void e_gn_apply(float* __restrict__ x, const float* __restrict__ stat,
                                      const float* __restrict__ weights, int C, int P, long long n) {
    const Level l = level_at(weights, C);
    GRID_STRIDE(i, n) {
        const long long bko = i / P;
        const int o = (int)(bko % (2 * C));
        const long long bk = bko / (2 * C);
        x[i] = (x[i] - stat[2 * bk]) * stat[2 * bk + 1] * l.gn_w[o] + l.gn_b[o];
    }
}

// r = a * relu(b): a = channels 0..C, b = C..2C of the normed [BK,2C,P].
extern "C" __global__ void e_arelu(const float* __restrict__ normed, float* __restrict__ r, int C,
                                   int P, long long n) {
    GRID_STRIDE(i, n) {
        const long long bkc = i / P;
        const int p = (int)(i - bkc * P), c = (int)(bkc % C);
        const float* base = normed + (bkc / C) * 2 * C * P;
        r[i] = base[(long long)c * P + p] * fmaxf(base[(long long)(C + c) * P + p], 0.0f);
    }
}

// z = x + y.
extern "C" __global__ void e_add(const float* __restrict__ x, const float* __restrict__ y,
                                 float* __restrict__ z, long long n) {
    GRID_STRIDE(i, n) z[i] = x[i] + y[i];
}

// TileUnpack (override): map[b,c, tile ids[b,k]] = tiles[b,k,c].
extern "C" __global__ void e_scatter(const float* __restrict__ tiles, const int* __restrict__ ids,
                                     float* __restrict__ map, int C, int H, int W, int t, int gw,
                                     int K, long long n) {
    const int P = t * t;
    GRID_STRIDE(i, n) {
        const long long bkc = i / P;
        const int p = (int)(i - bkc * P), c = (int)(bkc % C);
        const long long bk = bkc / C;
        const int b = (int)(bk / K), id = ids[bk];
        const int y = (id / gw) * t + p / t, x = (id % gw) * t + p % t;
        map[(((long long)b * C + c) * H + y) * W + x] = tiles[i];
    }
}

// FusionGate's alpha over the whole [B,H,W].
extern "C" __global__ void e_alpha(const S* __restrict__ boundary, const S* __restrict__ uncertainty,
                                   const float* __restrict__ weights, float* __restrict__ alpha, int C,
                                   long long n) {
    const Level l = level_at(weights, C);
    GRID_STRIDE(i, n) alpha[i] = gate_alpha(l.gate, to_f32(boundary[i]), to_f32(uncertainty[i]));
}

// fused = base + alpha * (heavy - base) over the whole map.
extern "C" __global__ void e_fuse(const float* __restrict__ base, const float* __restrict__ heavy,
                                  const float* __restrict__ alpha, float* __restrict__ out, int C,
                                  long long hw, long long n) {
    GRID_STRIDE(i, n) {
        const long long b = i / (C * hw), px = i % hw;
        const float a = alpha[b * hw + px];
        out[i] = base[i] + a * (heavy[i] - base[i]);
    }
}

// z = x - y (the detail map).
extern "C" __global__ void e_sub(const float* __restrict__ x, const float* __restrict__ y,
                                 float* __restrict__ z, long long n) {
    GRID_STRIDE(i, n) z[i] = x[i] - y[i];
}
