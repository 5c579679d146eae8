// The decode step's y = x * W^T: x is M x K (M = 1 to 16 tokens), W is N x K row-major (as
// nn.Linear keeps its weight), y is M x N; bf16 (fp16 with -DGEMV_FP16), fp32 accumulation.
// Reading W once is the whole cost: the objective is the bandwidth of that read.
//
// A block of WARPS warps; each warp owns ROWS consecutive rows of W and walks K with 16-byte
// loads, UNROLL of them in flight per row, every lane holding MT (the smallest power of two
// >= M) x ROWS partial sums; a shuffle reduction ends each row. HINT 1 reads W with
// ld.global.nc.L1::no_allocate (streamed, kept out of L1), 0 through the read-only cache.

#ifndef WARPS
#define WARPS 4
#endif
#ifndef ROWS
#define ROWS 1
#endif
#ifndef UNROLL
#define UNROLL 4
#endif
#ifndef MT
#define MT 1
#endif
#ifndef HINT
#define HINT 1
#endif

typedef unsigned short elem_t; // the bits of a bf16 or fp16 value

__device__ __forceinline__ uint4 loadWeights(const elem_t* p) {
    uint4 v;
#if HINT
    asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p));
#else
    v = __ldg(reinterpret_cast<const uint4*>(p));
#endif
    return v;
}

// The two 16-bit values of `u` as floats (low half first).
__device__ __forceinline__ float2 unpack2(unsigned u) {
#ifdef GEMV_FP16
    float2 f;
    asm("{\n .reg .f16 l, h;\n mov.b32 {l, h}, %2;\n cvt.f32.f16 %0, l;\n cvt.f32.f16 %1, h;\n}\n"
        : "=f"(f.x), "=f"(f.y)
        : "r"(u));
    return f;
#else
    return make_float2(__uint_as_float(u << 16), __uint_as_float(u & 0xffff0000u));
#endif
}

__device__ __forceinline__ elem_t pack1(float v) {
    unsigned short r;
#ifdef GEMV_FP16
    asm("cvt.rn.f16.f32 %0, %1;\n" : "=h"(r) : "f"(v));
#else
    asm("cvt.rn.bf16.f32 %0, %1;\n" : "=h"(r) : "f"(v));
#endif
    return r;
}

// The eight 16-bit values of `v` as floats.
__device__ __forceinline__ void unpack8(uint4 v, float (&f)[8]) {
    const unsigned u[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const float2 p = unpack2(u[i]);
        f[2 * i] = p.x;
        f[2 * i + 1] = p.y;
    }
}

extern "C" __global__ void __launch_bounds__(WARPS * 32)
    gemv(int M, int N, int K, const elem_t* __restrict__ x, const elem_t* __restrict__ W, elem_t* __restrict__ y) {
    const int lane = threadIdx.x % 32;
    const int row0 = (blockIdx.x * WARPS + threadIdx.x / 32) * ROWS;

    float acc[MT][ROWS];
#pragma unroll
    for (int m = 0; m < MT; ++m)
#pragma unroll
        for (int r = 0; r < ROWS; ++r)
            acc[m][r] = 0.0f;

    const elem_t* w = W + static_cast<long long>(row0) * K + lane * 8;
    for (int k0 = lane * 8; k0 < K; k0 += 256 * UNROLL) {
        uint4 wv[UNROLL][ROWS];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u)
#pragma unroll
            for (int r = 0; r < ROWS; ++r)
                wv[u][r] = loadWeights(w + static_cast<long long>(r) * K + (k0 - lane * 8) + u * 256);
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            // Each weight is unpacked once and used for every token.
            float wf[ROWS][8];
#pragma unroll
            for (int r = 0; r < ROWS; ++r)
                unpack8(wv[u][r], wf[r]);
#pragma unroll
            for (int m = 0; m < MT; ++m) {
                if (m < M) {
                    float xf[8];
                    unpack8(__ldg(reinterpret_cast<const uint4*>(x + static_cast<long long>(m) * K + k0 + u * 256)), xf);
#pragma unroll
                    for (int r = 0; r < ROWS; ++r)
#pragma unroll
                        for (int i = 0; i < 8; ++i)
                            acc[m][r] = fmaf(xf[i], wf[r][i], acc[m][r]);
                }
            }
        }
    }

#pragma unroll
    for (int m = 0; m < MT; ++m) {
#pragma unroll
        for (int r = 0; r < ROWS; ++r) {
            float v = acc[m][r];
#pragma unroll
            for (int offset = 16; offset > 0; offset /= 2)
                v += __shfl_xor_sync(0xffffffffu, v, offset);
            if (lane == 0 && m < M)
                y[static_cast<long long>(m) * N + row0 + r] = pack1(v);
        }
    }
}
