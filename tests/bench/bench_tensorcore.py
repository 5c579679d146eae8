#!/usr/bin/env python3
"""Tensor-core kernels side by side, on the GPU machine: kernels/hgemm, kernels/gemv, kernels/softmax,
kernels/attention, kernels/cutlass_gemm (and the FP32 kernels/sgemm, kinds sgemm and sgemm_warp) against PyTorch
(cuBLAS, cublasLt, and scaled_dot_product_attention's backends), Triton and the device-to-device copy, in one run, with
one timing method.

For each kernel, the configs to run come from results databases of `tilescope-cli tune` (the
best verified config of the newest session, `--db KIND=FILE`, KIND one of the kinds below) or
from the kernel's defaults. Each config is built with nvcc
into a small library (the kernel file as it is, its parameters as -D, as Tilescope's NVRTC
build passes them), checked against torch on the same inputs (every config, every shape) and
then timed: L2 flushed before every launch (a 256 MB memset), CUDA events around each launch,
the median of the samples after a warm-up. The same for torch.matmul / F.linear, for the Triton
kernels once their configs are chosen (outside the timing), and for a device-to-device copy of
the bytes the kernel must read. Prints a table with TFLOP/s or GB/s and the ratios; exits 1 when
a kernel's output is wrong (ours or Triton's).

The Triton anchor of the bf16/fp16 GEMM rows is a kernel in the style of Triton's matmul tutorial
(03-matrix-multiplication: tiles of C walked in bands of GROUP_M tile rows, offsets wrapped modulo
M and N, only the K tail masked, fp32 accumulation), run on both layouts of B whatever the row's
own layout: "triton(rm)", B K x N row-major (the tutorial's), and "triton(bt)", B N x K row-major
(F.linear's weight, passed as its K x N view). Each layout is tuned once per dtype and shape,
outside the timed region, by this bench itself: every config of the grid is compiled and launched
(a config that fails to compile or launch, or whose output is wrong, is skipped), timed as
everything else here with 10 samples, and the best 3 timed again with 30; the winner is then timed
like the other columns. `--triton-grid tutorial` is the 12 tiles this bench used before (the
tutorial's 8 CUDA configs and 4 more large tiles); `wide` (the default) adds every
BLOCK_M, BLOCK_N in 64/128/256, BLOCK_K 32/64, num_stages 3-5, num_warps 4/8 (GROUP_M 8), less the
configs Triton's own early_config_prune would drop for shared memory (num_stages * (BLOCK_M +
BLOCK_N) * BLOCK_K * element size above the device's limit) and those whose fp32 accumulator
alone needs 256 registers a thread or more: 85 configs for 2-byte types. "ours/triton" is against
the better of the two layouts. The decode GEMV and softmax rows keep one Triton column (a
triton.autotune'd kernel of their own).

The attention rows (attention_bf16, attention_bf16_causal: kernels/attention/attention.cu, the
causal build with -DCAUSAL=1) run the forward pass O = softmax(Q K^T / sqrt(D)) V on Q, K, V, O
contiguous [B, H, S, D] bf16 (batch 8, 16 heads, sequence 4096 and 2048, head dimension 128),
grid (S / BLOCK_M, B * H), block size and dynamic shared memory evaluated from the problem file's
LocalSize and SharedMemory expressions (kernels/attention/<kind>.json where there is one, else
attention_bf16.json) with the config and the shape as variables; a kind whose kernel or problem
file is not there is skipped with a message. Compared with torch's scaled_dot_product_attention
under each backend (FLASH_ATTENTION, EFFICIENT_ATTENTION, CUDNN_ATTENTION; one that raises is
reported unavailable), timed the same way; the best backend is named. TFLOP/s for both count
4 B H S^2 D flops, half of that causal. Inputs torch.randn, Q times 2 (logits of standard deviation
2 after the scale 1/sqrt(D) the kernel is passed). Checked against SDPA's output (flash backend,
else the first that runs) with a bf16 tolerance, |O - O_sdpa| <= 1e-2 + 2e-2 |O_sdpa| element by
element; the max abs error is printed. A backend outside that tolerance is not counted as the best.

The cutlass_gemm rows (kernels/cutlass_gemm/cutlass_gemm.cu: CUTLASS 3.x's Hopper collective
builders behind an extern "C" kernel) are the GEMM of hgemm_bf16_bt, D = A B^T in bf16 with B N x K
row-major and fp32 accumulation, on the GEMM shapes, against F.linear and both Triton layouts,
checked and timed as those rows are. Built by nvcc as the worker builds the problem
(kernels/cutlass_gemm/cutlass_gemm.json: -Dkernel_tuner=1, --expt-relaxed-constexpr, -DNDEBUG,
-I$CUTLASS_DIR/include): the kind is skipped where CUTLASS_DIR is not set, and is in the default
--kinds only where it is. The grid is the problem file's GlobalSize (persistent, clusters compiled
in), the block its LocalSize, the dynamic shared memory its SharedMemory, evaluated with the config
and M, N, K as names; the eight TMA tensor maps (A and B, boxes of 64 x 32 to 256, 128-byte swizzle)
are encoded as the worker encodes the problem's TensorMap arguments, once per set of buffers.
Without --db or --set: 128 x 256 tiles, a 2 x 1 cluster, CUTLASS's automatic stage count, the
cooperative schedule, SMS the device's SM count.

    python3 tests/bench/bench_tensorcore.py --db hgemm_bf16=hgemm.db --db gemv_bf16=gemv.db \
        --db attention_bf16=attn.db --db attention_bf16_causal=attn_causal.db [--triton-grid tutorial]
    CUTLASS_DIR=/path/to/cutlass python3 tests/bench/bench_tensorcore.py --kinds hgemm_bf16_bt,cutlass_gemm \
        --db cutlass_gemm=cutlass.db
"""

import argparse
import ctypes
import hashlib
import itertools
import json
import math
import os
import subprocess
import sys
import tempfile
import time

import triton
import triton.language as tl

torch = None  # imported by main() once the arguments are read, so that --help runs without it

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# kind -> (kernel file, kernel name, torch dtype's name, nvcc options)
KINDS = {
    "hgemm_bf16": ("kernels/hgemm/hgemm.cu", "hgemm", "bfloat16", []),
    "hgemm_fp16": ("kernels/hgemm/hgemm.cu", "hgemm", "float16", ["-DHGEMM_FP16"]),
    "hgemm_bf16_bt": ("kernels/hgemm/hgemm.cu", "hgemm", "bfloat16", ["-DB_TRANS=1"]),
    "hgemm_fp16_bt": ("kernels/hgemm/hgemm.cu", "hgemm", "float16", ["-DHGEMM_FP16", "-DB_TRANS=1"]),
    "sgemm": ("kernels/sgemm/sgemm.cu", "sgemm", "float32", []),
    "sgemm_warp": ("kernels/sgemm/sgemm_warp.cu", "sgemm_warp", "float32", []),
    "hgemm_fp8": ("kernels/hgemm/hgemm.cu", "hgemm", "float8_e4m3fn", ["-DHGEMM_FP8", "-DB_TRANS=1"]),
    "gemv_bf16": ("kernels/gemv/gemv.cu", "gemv", "bfloat16", []),
    "gemv_fp16": ("kernels/gemv/gemv.cu", "gemv", "float16", ["-DGEMV_FP16"]),
    "softmax": ("kernels/softmax/softmax.cu", "softmax", "float32", []),
    "softmax_bf16": ("kernels/softmax/softmax.cu", "softmax", "bfloat16", ["-DSOFTMAX_BF16=1"]),
    "attention_bf16": ("kernels/attention/attention.cu", "attention", "bfloat16", []),
    "attention_bf16_causal": ("kernels/attention/attention.cu", "attention", "bfloat16", ["-DCAUSAL=1"]),
    # the problem file's CompilerOptions less the architecture (build()'s) and -I$CUTLASS_DIR/include
    # (main() passes it); kernel_tuner 1 as the worker defines it, else the file keeps its own defaults
    "cutlass_gemm": ("kernels/cutlass_gemm/cutlass_gemm.cu", "cutlass_gemm", "bfloat16",
                     ["--expt-relaxed-constexpr", "-DNDEBUG", "-Dkernel_tuner=1"]),
}
GEMM_SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192), (8192, 8192, 1024)]  # M, N, K
GEMV_SHAPES = [(1, 4096, 16384), (1, 16384, 4096), (4, 4096, 16384), (16, 4096, 16384)]  # M, K, N
SOFTMAX_SHAPES = [(8192, 8192), (32768, 1024), (4096, 32768)]  # rows, cols
ATTENTION_SHAPES = [(8, 16, 4096, 128), (8, 16, 2048, 128)]  # batch, heads, sequence, head dimension
ATTENTION_ATOL, ATTENTION_RTOL = 1e-2, 2e-2  # O against SDPA's, element by element (attention_row)

# hgemm takes TMA tensor maps of A and B after C (read by its ALGO 2 family), built here as the
# worker builds them from the problem's TensorMap arguments: boxes of 64 rows of 128 bytes,
# 128-byte swizzle. They are encoded once per set of buffers, outside the timed launches. FP8
# builds take the two per-tensor scales after the maps (set_scales).
HGEMM_LAUNCHER = r"""
#include <cuda.h>
#include <cuda_runtime.h>
#include <cstring>
#include "%(kernel)s"
#if HGEMM_8BIT
static float scaleA = 1.0f, scaleB = 1.0f;
#endif
extern "C" void set_scales(float a, float b) {
#if HGEMM_8BIT
    scaleA = a;
    scaleB = b;
#else
    (void)a;
    (void)b;
#endif
}
static int encode(TensorMap* out, const void* p, unsigned long long inner, unsigned long long outer) {
    CUtensorMap m;
    cuuint64_t dims[2] = {inner, outer};
    cuuint64_t strides[1] = {inner * sizeof(in_t)};
    cuuint32_t box[2] = {128 / (cuuint32_t)sizeof(in_t), 64}, unit[2] = {1, 1};
#if HGEMM_8BIT
    const CUtensorMapDataType type = CU_TENSOR_MAP_DATA_TYPE_UINT8;
#elif defined(HGEMM_FP16)
    const CUtensorMapDataType type = CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
#else
    const CUtensorMapDataType type = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
#endif
    CUresult r = cuTensorMapEncodeTiled(&m, type, 2, const_cast<void*>(p), dims, strides, box, unit,
                                        CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                        CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    std::memcpy(out, &m, sizeof m);
    return (int)r;
}
extern "C" int launch(int gx, int bx, int smem, int M, int N, int K, const void* a, const void* b, void* c) {
    static TensorMap mapA, mapB;
    static const void *lastA = nullptr, *lastB = nullptr;
    if (a != lastA || b != lastB) {
        if (encode(&mapA, a, K, M) != 0)
            return -1;
#if B_TRANS
        if (encode(&mapB, b, K, N) != 0)
#else
        if (encode(&mapB, b, N, K) != 0)
#endif
            return -1;
        lastA = a;
        lastB = b;
    }
    if (smem > 48 * 1024)
        cudaFuncSetAttribute(%(name)s, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
#if HGEMM_8BIT
    %(name)s<<<gx, bx, smem>>>(M, N, K, (const in_t*)a, (const in_t*)b, (elem_t*)c, mapA, mapB, scaleA, scaleB);
#else
    %(name)s<<<gx, bx, smem>>>(M, N, K, (const in_t*)a, (const in_t*)b, (elem_t*)c, mapA, mapB);
#endif
    return (int)cudaGetLastError();
}
"""

SOFTMAX_LAUNCHER = r"""
#include <cuda_runtime.h>
#include "%(kernel)s"
extern "C" int launch(int gx, int bx, int smem, int rows, int cols, int unused, const void* x, const void* unused2, void* y) {
    %(name)s<<<gx, bx, smem>>>(rows, cols, (const elem_t*)x, (elem_t*)y);
    return (int)cudaGetLastError();
}
"""

# sgemm's grid is two-dimensional: tiles of N by tiles of M.
SGEMM_LAUNCHER = r"""
#include <cuda_runtime.h>
#include "%(kernel)s"
extern "C" int launch(int gx, int bx, int smem, int M, int N, int K, const void* a, const void* b, void* c) {
    %(name)s<<<dim3(N / BLOCK_N, M / BLOCK_M), bx, smem>>>(M, N, K, (const float*)a, (const float*)b, (float*)c);
    return (int)cudaGetLastError();
}
"""

# sgemm_warp's grid is one-dimensional (tiles in GROUP_M order), its shared memory static.
SGEMM_WARP_LAUNCHER = r"""
#include <cuda_runtime.h>
#include "%(kernel)s"
extern "C" int launch(int gx, int bx, int smem, int M, int N, int K, const void* a, const void* b, void* c) {
    %(name)s<<<gx, bx, smem>>>(M, N, K, (const float*)a, (const float*)b, (float*)c);
    return (int)cudaGetLastError();
}
"""

LAUNCHER = r"""
#include <cuda_runtime.h>
#include "%(kernel)s"
extern "C" int launch(int gx, int bx, int smem, int M, int N, int K, const void* a, const void* b, void* c) {
    if (smem > 48 * 1024)
        cudaFuncSetAttribute(%(name)s, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    %(name)s<<<gx, bx, smem>>>(M, N, K, (const elem_t*)a, (const elem_t*)b, (elem_t*)c);
    return (int)cudaGetLastError();
}
"""


# attention's grid is (S / BLOCK_M, B * H); its dynamic shared memory (the problem file's
# SharedMemory) is allowed past 48 KB once per size, before the launch.
ATTENTION_LAUNCHER = r"""
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include "%(kernel)s"
extern "C" int launch(int gx, int gy, int bx, int smem, int S, float scale, const void* q, const void* k,
                      const void* v, void* o) {
    static int allowed = 48 * 1024;
    if (smem > allowed) {
        cudaError_t e = cudaFuncSetAttribute(%(name)s, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
        if (e != cudaSuccess)
            return (int)e;
        allowed = smem;
    }
    %(name)s<<<dim3(gx, gy), bx, smem>>>((const __nv_bfloat16*)q, (const __nv_bfloat16*)k, (const __nv_bfloat16*)v,
                                         (__nv_bfloat16*)o, S, scale);
    return (int)cudaGetLastError();
}
"""

# cutlass_gemm takes eight TMA tensor maps after D, one per box size of A and of B (the kernel
# picks the one its tile and cluster need), and mapD for its TMA epilogue, encoded here as the worker
# encodes the problem's TensorMap arguments (core/measure/cuda/device/workerruntime.cpp,
# encodeTensorMap): A's and B's dims (K, rows, 1), byte strides of dims 1 and 2, box (64, 32 to 256,
# 1), 128-byte swizzle; D's dims (N, M, 1), box (32, 64 or 128: the epilogue tile's rows, 1), 64-byte swizzle;
# L2 promotion 256B. They are encoded once per set of buffers, sizes and epilogue tile, outside the
# timed launches. The cluster dims are compiled into the kernel, so a plain launch makes clusters of
# the (multiple-of-cluster) grid.
CUTLASS_LAUNCHER = r"""
#include <cuda.h>
#include <cuda_runtime.h>
#include "%(kernel)s"
static CUresult encode(CUtensorMap* map, const void* p, int inner, int rows, int boxInner, int boxRows,
                       CUtensorMapSwizzle swizzle) {
    cuuint64_t dims[3] = {(cuuint64_t)inner, (cuuint64_t)rows, 1};
    cuuint64_t strides[2] = {(cuuint64_t)inner * 2, (cuuint64_t)rows * inner * 2};
    cuuint32_t boxes[3] = {(cuuint32_t)boxInner, (cuuint32_t)boxRows, 1}, unit[3] = {1, 1, 1};
    return cuTensorMapEncodeTiled(map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 3, const_cast<void*>(p), dims, strides, boxes,
                                  unit, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
                                  CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
}
// 0, a CUDA error, or -1 - i where the driver refused map i (mapA_32 .. mapB_256, mapD_64, mapD_128)
extern "C" int launch(int gx, int gy, int bx, int smem, int M, int N, int K, const void* a, const void* b, void* d) {
    static CUtensorMap maps[10];  // mapA_32, _64, _128, _256, mapB_32, _64, _128, _256, mapD_64, _128
    static const void *lastA = nullptr, *lastB = nullptr, *lastD = nullptr;
    static int lastM = 0, lastN = 0, lastK = 0;
    if (a != lastA || b != lastB || d != lastD || M != lastM || N != lastN || K != lastK) {
        lastA = nullptr;  // encoded again on the next call if one is refused
        for (int i = 0; i < 8; ++i)
            if (encode(&maps[i], i < 4 ? a : b, K, i < 4 ? M : N, 64, 32 << (i %% 4), CU_TENSOR_MAP_SWIZZLE_128B) !=
                CUDA_SUCCESS)
                return -1 - i;
        for (int i = 8; i < 10; ++i)
            if (encode(&maps[i], d, N, M, 32, 64 << (i - 8), CU_TENSOR_MAP_SWIZZLE_64B) != CUDA_SUCCESS)
                return -1 - i;
        lastA = a;
        lastB = b;
        lastD = d;
        lastM = M;
        lastN = N;
        lastK = K;
    }
    static int allowed = 48 * 1024;
    if (smem > allowed) {
        cudaError_t e = cudaFuncSetAttribute(%(name)s, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
        if (e != cudaSuccess)
            return (int)e;
        allowed = smem;
    }
    %(name)s<<<dim3(gx, gy), bx, smem>>>(M, N, K, (const cutlass::bfloat16_t*)a, (const cutlass::bfloat16_t*)b,
                                         (cutlass::bfloat16_t*)d, maps[0], maps[1], maps[2], maps[3], maps[4],
                                         maps[5], maps[6], maps[7], maps[8], maps[9]);
    return (int)cudaGetLastError();
}
"""


def build(kind, config, workdir, extra=()):
    """The kernel of `kind` with `config` as -D (and `extra` nvcc options), built into a library
    whose launch() takes the launch geometry, the sizes and the buffers."""
    path, name, _, options = KINDS[kind]
    tag = kind + "_" + "_".join(f"{k}{v}" for k, v in sorted(config.items()))
    if extra:
        tag += "_" + hashlib.sha1(" ".join(extra).encode()).hexdigest()[:10]
    so = os.path.join(workdir, tag + ".so")
    if not os.path.exists(so):
        src = os.path.join(workdir, tag + ".cu")
        with open(src, "w") as f:
            launcher = {"hgemm": HGEMM_LAUNCHER, "softmax": SOFTMAX_LAUNCHER, "sgemm": SGEMM_LAUNCHER,
                        "sgemm_warp": SGEMM_WARP_LAUNCHER,
                        "attention": ATTENTION_LAUNCHER, "cutlass_gemm": CUTLASS_LAUNCHER}.get(name, LAUNCHER)
            f.write(launcher % {"kernel": os.path.join(ROOT, path), "name": name})
        defines = [f"-D{k}={v}" for k, v in config.items()]
        subprocess.run(["nvcc", "-O3", "-std=c++17", "-gencode", "arch=compute_90a,code=sm_90a", "-shared", "-Xcompiler", "-fPIC", *options,
                        *extra, *defines, "-o", so, src, "-lcuda"], check=True)
    lib = ctypes.CDLL(so)
    if name == "attention":  # gx, gy, bx, smem, S, scale, Q, K, V, O
        lib.launch.argtypes = [ctypes.c_int] * 5 + [ctypes.c_float] + [ctypes.c_void_p] * 4
    elif name == "cutlass_gemm":  # gx, gy, bx, smem, M, N, K, A, B, D
        lib.launch.argtypes = [ctypes.c_int] * 7 + [ctypes.c_void_p] * 3
    else:
        lib.launch.argtypes = [ctypes.c_int] * 6 + [ctypes.c_void_p] * 3
    return lib


def geometry(kind, config, shape):
    if kind == "sgemm":
        return 0, (config["BLOCK_M"] // config["THREAD_M"]) * (config["BLOCK_N"] // config["THREAD_N"]), 0
    if kind == "sgemm_warp":
        M, N, K = shape
        return (M // config["BLOCK_M"]) * (N // config["BLOCK_N"]), config["WARPS_M"] * config["WARPS_N"] * 32, 0
    if kind.startswith("hgemm"):
        M, N, K = shape
        algo = config.get("ALGO", 0)
        threads = (config["WARPS_M"] * config["WARPS_N"] * 32 if algo == 0 else
                   config["BLOCK_M"] // 64 * 128 if algo == 1 else (config["BLOCK_M"] // 64 + 1) * 128)
        smem = (config["STAGES"] * (config["BLOCK_M"] + config["BLOCK_N"]) * (128 if algo else config["BLOCK_K"] * 2) +
                (0 if algo == 0 else 1024 + 16 * config["STAGES"]) +
                config.get("STORE", 0) * config["BLOCK_M"] * config["BLOCK_N"] * 2)
        tiles = (M // config["BLOCK_M"]) * (N // config["BLOCK_N"])
        if algo == 2:  # TILES tiles a block: a persistent grid
            tiles = (tiles + config.get("TILES", 1) - 1) // config.get("TILES", 1)
        return tiles, threads, smem
    if kind.startswith("softmax"):
        rows, cols = shape
        return rows // config["RPB"], config["TPR"] * config["RPB"], 0
    M, K, N = shape
    if config.get("ALGO", 0) == 1:  # tensor cores: 16 rows of W a tile, the warps split K
        return N // (16 * config["ROWS"]), config["WARPS"] * 32, 0
    if config.get("ALGO", 0) == 2:  # bulk copies: a producer warp more, TILES groups of ROWS rows a block
        groups = N // config["ROWS"]
        return ((groups + config["TILES"] - 1) // config["TILES"], (config["WARPS"] + 1) * 32,
                config["STAGES"] * config["ROWS"] * config["CHUNK"] * 2 + K * 2)
    return N // (config["WARPS"] * config["ROWS"]), config["WARPS"] * 32, 0


def fits(kind, config, shape):
    if kind in ("sgemm", "sgemm_warp"):
        M, N, K = shape
        return M % config["BLOCK_M"] == 0 and N % config["BLOCK_N"] == 0 and K % config["BLOCK_K"] == 0
    if kind.startswith("hgemm"):
        M, N, K = shape
        k_slice = 128 if kind == "hgemm_fp8" else config["BLOCK_K"]
        return M % config["BLOCK_M"] == 0 and N % config["BLOCK_N"] == 0 and K % k_slice == 0
    if kind.startswith("softmax"):
        rows, cols = shape
        return (config["TPR"] * config["RPB"] <= 1024 and rows % config["RPB"] == 0 and cols % config["VEC"] == 0
                and config["TPR"] * config["VEC"] <= cols and (config["CACHE_ROW"] == 0 or cols <= 32 * config["TPR"]))
    M, K, N = shape
    mt = config["MT"]
    if config.get("ALGO", 0) == 2:
        smem = config["STAGES"] * config["ROWS"] * config["CHUNK"] * 2 + K * 2 + 1024
        return (M == 1 and N % config["ROWS"] == 0 and K % config["CHUNK"] == 0
                and config["CHUNK"] % (256 * config["WARPS"]) == 0 and smem <= 227 * 1024)
    if config.get("ALGO", 0) == 1:
        return (M <= mt < 2 * M and N % (16 * config["ROWS"]) == 0
                and K % (32 * config["UNROLL"] * config["WARPS"]) == 0)
    return (M <= mt < 2 * M and N % (config["WARPS"] * config["ROWS"]) == 0
            and K % (256 * config["UNROLL"]) == 0)


@triton.jit
def triton_matmul(a, b, c, M, N, K, sam, sak, sbk, sbn, scm, scn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                  BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    # The decode step's Triton kernel (GEMV rows): C = A B in fp32 accumulation, tiles rasterised in
    # groups of GROUP_M rows; K a multiple of BLOCK_K.
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    in_group = GROUP_M * tiles_n
    first_m = (pid // in_group) * GROUP_M
    rows = tl.minimum(tiles_m - first_m, GROUP_M)
    pm = first_m + (pid % in_group) % rows
    pn = (pid % in_group) // rows
    rm = pm * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pn * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    pa = a + rm[:, None] * sam + rk[None, :] * sak
    pb = b + rk[:, None] * sbk + rn[None, :] * sbn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for _ in range(0, tl.cdiv(K, BLOCK_K)):
        acc = tl.dot(tl.load(pa, mask=rm[:, None] < M, other=0.0), tl.load(pb, mask=rn[None, :] < N, other=0.0), acc)
        pa += BLOCK_K * sak
        pb += BLOCK_K * sbk
    tl.store(c + rm[:, None] * scm + rn[None, :] * scn, acc.to(c.dtype.element_ty),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


def triton_configs():
    """The decode step's list: tl.dot's smallest M (16) with a sweep of N and K tiles."""
    shapes = [(16, n, k, s, 4) for n in (32, 64, 128) for k in (128, 256, 512) for s in (3, 4)]
    return [triton.Config({"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k, "GROUP_M": 8}, num_stages=s, num_warps=w)
            for m, n, k, s, w in shapes]


@triton.jit
def triton_tutorial_matmul(a, b, c, M, N, K, sam, sak, sbk, sbn, scm, scn, BLOCK_M: tl.constexpr,
                           BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    # C = A B laid out as Triton's matmul tutorial lays it out. Program ids go down a band of
    # GROUP_M tile rows before moving one tile column right, so that a band's rows of A and the
    # columns of B it touches stay in L2. The rows and columns a program loads wrap around M and
    # N (a tile past the edge reads valid memory, and its stores are masked), so only the K tail
    # needs a mask on the loads. B is any K x N view: row-major (sbn 1) or the transpose of a
    # row-major N x K (sbk 1).
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    band = GROUP_M * tiles_n
    band_m = (pid // band) * GROUP_M
    height = tl.minimum(tiles_m - band_m, GROUP_M)  # the last band may be shorter
    tile_m = band_m + (pid % band) % height
    tile_n = (pid % band) // height
    rows = (tile_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    cols = (tile_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    ks = tl.arange(0, BLOCK_K)
    pa = a + rows[:, None] * sam + ks[None, :] * sak
    pb = b + ks[:, None] * sbk + cols[None, :] * sbn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for step in range(0, tl.cdiv(K, BLOCK_K)):
        left = K - step * BLOCK_K
        acc = tl.dot(tl.load(pa, mask=ks[None, :] < left, other=0.0), tl.load(pb, mask=ks[:, None] < left, other=0.0),
                     acc)
        pa += BLOCK_K * sak
        pb += BLOCK_K * sbk
    out_m = tile_m * BLOCK_M + tl.arange(0, BLOCK_M)
    out_n = tile_n * BLOCK_N + tl.arange(0, BLOCK_N)
    tl.store(c + out_m[:, None] * scm + out_n[None, :] * scn, acc.to(c.dtype.element_ty),
             mask=(out_m[:, None] < M) & (out_n[None, :] < N))


# (BLOCK_M, BLOCK_N, BLOCK_K, num_stages, num_warps); GROUP_M is 8 throughout, as in the tutorial.
# "tutorial": the list this bench used before, the tutorial's 8 CUDA configs for fp16 and 4 more
# of its large tiles; "wide" adds the tutorial-sized cross product (kernels/triton/matmul_wide.json's).
TRITON_GRIDS = {
    "tutorial": [(128, 256, 64, 3, 8), (256, 128, 64, 3, 8), (128, 256, 64, 4, 8), (256, 128, 64, 4, 8),
                 (128, 128, 64, 4, 4), (128, 128, 32, 4, 4), (64, 256, 32, 4, 4), (128, 64, 32, 4, 4),
                 (64, 128, 32, 4, 4), (128, 32, 32, 4, 4), (64, 32, 32, 5, 2), (32, 64, 32, 5, 2)],
}
TRITON_GRIDS["wide"] = TRITON_GRIDS["tutorial"] + [
    c for c in itertools.product((64, 128, 256), (64, 128, 256), (32, 64), (3, 4, 5), (4, 8))
    if c not in TRITON_GRIDS["tutorial"]]


def max_shared_memory():
    """Bytes of shared memory a block may opt in to on this device."""
    try:
        props = triton.runtime.driver.active.utils.get_device_properties(torch.cuda.current_device())
        return int(props["max_shared_mem"])
    except Exception:  # an older or newer Triton: ask torch
        return int(getattr(torch.cuda.get_device_properties(torch.cuda.current_device()),
                           "shared_memory_per_block_optin", 227 * 1024))


def triton_grid(grid, element):
    """The configs of `grid` worth compiling for `element`-byte inputs, and how many were pruned:
    Triton's early_config_prune rule for shared memory (a ring of num_stages A and B slices), and
    tiles whose fp32 accumulator alone takes 256 registers a thread or more (255 is the most a
    thread has: such a config spills and cannot win)."""
    limit = max_shared_memory()
    kept = [(m, n, k, s, w) for m, n, k, s, w in TRITON_GRIDS[grid]
            if s * (m + n) * k * element <= limit and m * n // (32 * w) < 256]
    return kept, len(TRITON_GRIDS[grid]) - len(kept)


def triton_gemm_call(a, b_kn, c, tile):
    """C = A B with B a K x N view, by triton_tutorial_matmul with `tile` (BLOCK_M, BLOCK_N,
    BLOCK_K, num_stages, num_warps)."""
    m, n, k, s, w = tile
    M, K = a.shape
    N = b_kn.shape[1]
    grid = (triton.cdiv(M, m) * triton.cdiv(N, n),)
    return lambda: triton_tutorial_matmul[grid](a, b_kn, c, M, N, K, a.stride(0), a.stride(1), b_kn.stride(0),
                                                b_kn.stride(1), c.stride(0), c.stride(1), BLOCK_M=m, BLOCK_N=n,
                                                BLOCK_K=k, GROUP_M=8, num_stages=s, num_warps=w)


def tile_text(tile):
    m, n, k, s, w = tile
    return f"{m}x{n}x{k} stages {s} warps {w}"


def first_line(e):
    """An exception as one short line."""
    text = str(e).strip()
    return f"{type(e).__name__}: {text.splitlines()[0][:160] if text else ''}"


def relative_error(out, expected, scale):
    return (out.float() - expected).abs().max().item() / scale


def tune_triton_gemm(a, b_kn, c, expected, tolerance, layout, grid):
    """The fastest config of `grid` for this dtype, shape and layout (tuned once, then remembered):
    each config compiled and launched once (one that fails to compile or launch is skipped, so is
    one whose output is wrong), timed with 10 samples by timed(), the best 3 again with 30."""
    M, K = a.shape
    N = b_kn.shape[1]
    key = ("gemm", layout, grid, str(a.dtype), M, N, K)
    if key in TUNED:
        return TUNED[key]
    start = time.perf_counter()
    tiles, pruned = triton_grid(grid, a.element_size())
    scale = max(expected.abs().max().item(), 1e-30)
    measured, failed, wrong = [], [], []
    for tile in tiles:
        fn = triton_gemm_call(a, b_kn, c, tile)
        c.fill_(float("nan"))
        try:
            fn()  # compiles on the first call
            torch.cuda.synchronize()
        except Exception as e:  # noqa: BLE001 - out of resources, a compiler error: not a candidate
            failed.append(f"{tile_text(tile)}: {first_line(e)}")
            continue
        if not relative_error(c, expected, scale) <= tolerance:
            wrong.append(tile_text(tile))
            continue
        measured.append((timed(fn, samples=10, warmup=3), tile))
    if not measured:
        raise SystemExit(f"triton({layout}) {a.dtype} {M}x{N}x{K}: no config of the {grid} grid ran and was right "
                         f"({len(failed)} failed, {len(wrong)} wrong): " + "; ".join(failed[:3] + wrong[:3]))
    measured.sort(key=lambda x: x[0])
    finalists = [(timed(triton_gemm_call(a, b_kn, c, tile), samples=30, warmup=5), tile) for _, tile in measured[:3]]
    best = min(finalists, key=lambda x: x[0])[1]
    print(f"triton({layout}) {str(a.dtype).replace('torch.', '')} {M}x{N}x{K}: {grid} grid, {len(tiles)} configs "
          f"({pruned} pruned), {len(measured)} ran and were right, {len(failed)} failed to compile or launch, "
          f"{len(wrong)} wrong; best {tile_text(best)} ({time.perf_counter() - start:.1f} s)", flush=True)
    for line in failed[:3]:
        print(f"    failed: {line}")
    if wrong:
        print(f"    wrong: {', '.join(wrong[:6])}{' ...' if len(wrong) > 6 else ''}")
    TUNED[key] = best
    return best


@triton.jit
def triton_softmax(x, y, cols, BLOCK: tl.constexpr):
    # One program per row, the row in registers: one read and one write of the matrix.
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    v = tl.load(x + row * cols + offs, mask=offs < cols, other=-float("inf")).to(tl.float32)
    e = tl.exp(v - tl.max(v, axis=0))
    tl.store(y + row * cols + offs, (e / tl.sum(e, axis=0)).to(y.dtype.element_ty), mask=offs < cols)


TUNED = {}


def triton_softmax_call(x, y):
    if "softmax" not in TUNED:
        configs = [triton.Config({}, num_warps=w, num_stages=s) for w in (4, 8, 16, 32) for s in (1, 2)]
        TUNED["softmax"] = triton.autotune(configs=configs, key=["cols"])(triton_softmax)
    rows, cols = x.shape
    block = triton.next_power_of_2(cols)
    return lambda: TUNED["softmax"][(rows,)](x, y, cols, BLOCK=block)


def triton_call(a, b_kn, c):
    """The decode step's C = A B with B given as a K x N view (any strides), through
    triton.autotune (which tunes on its first call, per M, N, K)."""
    if "gemv" not in TUNED:
        TUNED["gemv"] = triton.autotune(configs=triton_configs(), key=["M", "N", "K"])(triton_matmul)
    kernel = TUNED["gemv"]
    M, K = a.shape
    N = b_kn.shape[1]
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)  # noqa: E731
    return lambda: kernel[grid](a, b_kn, c, M, N, K, a.stride(0), a.stride(1), b_kn.stride(0), b_kn.stride(1),
                                c.stride(0), c.stride(1))


FLUSH = None


def timed(fn, samples=50, warmup=10):
    """Median milliseconds of `fn`, L2 flushed before each launch, CUDA events around it."""
    global FLUSH
    if FLUSH is None:
        FLUSH = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(samples):
        FLUSH.zero_()
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    times.sort()
    return times[len(times) // 2]


def best_config(db, cli):
    out = subprocess.run([cli, "show", db, "--json", "--top", "1"], capture_output=True, text=True, check=True)
    results = [r for r in json.loads(out.stdout) if r.get("status") == "ok"]
    if not results:
        raise SystemExit(f"{db}: no verified result")
    return {k: int(v) for k, v in results[0]["config"].items()}


DEFAULTS = {
    "hgemm": {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32, "WARPS_M": 2, "WARPS_N": 2, "STAGES": 4, "GROUP_M": 8,
              "ALGO": 0, "STORE": 0, "TILES": 1},
    "sgemm": {"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 16, "THREAD_M": 16, "THREAD_N": 8, "VEC": 4, "STAGES": 2},
    "sgemm_warp": {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 8, "WARPS_M": 4, "WARPS_N": 2, "THREAD_M": 8,
                   "THREAD_N": 8, "MIN_BLOCKS": 2, "GROUP_M": 8},
    "gemv": {"ALGO": 0, "WARPS": 4, "ROWS": 1, "UNROLL": 4, "HINT": 1},
    "softmax": {"TPR": 256, "RPB": 1, "VEC": 4, "CACHE_ROW": 1},
    # attention: the values taken where the problem file has these parameters and allows them;
    # where it does not, its first valid config (attention_default)
    "attention": {"BLOCK_M": 128, "BLOCK_N": 64, "WARPS": 8, "STAGES": 2},
    # cutlass_gemm: the kernel file's own defaults (its #ifndef kernel_tuner block); SMS, the persistent
    # grid's bound, is set to the device's SM count by main()
    "cutlass_gemm": {"TILE_M": 128, "TILE_N": 256, "CLUSTER_M": 2, "CLUSTER_N": 1, "STAGES": 0, "SCHEDULE": 0,
                     "RASTER": 0, "SWIZZLE": 1, "EPILOGUE": 0, "SMS": 132},
}

# The names an attention problem file may give the shape's values (batch, heads, sequence, head
# dimension); names of its own Tilescope/Shapes entry that match ours are added to them.
ATTENTION_NAMES = {"B": 0, "BATCH": 0, "H": 1, "HEADS": 1, "NH": 1, "S": 2, "SEQ": 2, "SEQ_LEN": 2, "SEQLEN": 2,
                   "N_CTX": 2, "D": 3, "HEAD_DIM": 3, "HD": 3}
# The builtins of Tilescope's expressions (core/expr), for evaluating the problem file's in Python.
EXPR_BUILTINS = {"min": min, "max": max, "abs": abs, "ceil": math.ceil, "floor": math.floor, "log2": math.log2,
                 "sqrt": math.sqrt, "int": int, "float": float, "round": round, "len": len, "pow": pow, "bool": bool,
                 "range": range, "list": list, "tuple": tuple, "sum": sum, "sorted": sorted}
# nvcc options of the problem file's CompilerOptions that are passed on (others are NVRTC's or
# already given: -std, the architecture)
PASSED_OPTIONS = ("-D", "-U", "--use_fast_math", "-use_fast_math", "--ftz", "--prec-div", "--prec-sqrt", "--fmad",
                  "-lineinfo", "--extra-device-vectorization", "--maxrregcount", "-maxrregcount")


def evaluate(text, names):
    """A Tilescope expression of the problem file (Python syntax) with `names` as its variables."""
    # one namespace, as globals: a generator in the expression sees the names too
    return eval(str(text), {"__builtins__": {}, **EXPR_BUILTINS, **names})  # noqa: S307 - the repository's own file


def attention_problem(kind):
    """The problem file of an attention kind: kernels/attention/<kind>.json where there is one,
    else attention_bf16.json; None where neither is there."""
    for base in (kind, "attention_bf16"):
        path = os.path.join(ROOT, "kernels", "attention", base + ".json")
        if os.path.exists(path):
            with open(path) as f:
                problem = json.load(f)
            problem["_path"] = os.path.relpath(path, ROOT)
            return problem
    return None


def attention_names(problem, shape, config, causal):
    """The variables of the problem file's expressions: the shape under its usual names (and the
    problem's own names for it, from the one of its shapes that agrees with ours), CAUSAL, then
    the config."""
    names = {name: shape[i] for name, i in ATTENTION_NAMES.items()}
    names["CAUSAL"] = int(causal)
    for entry in problem.get("Tilescope", {}).get("Shapes", []):
        known = [k for k in entry if k in names]
        if known and all(names[k] == entry[k] for k in known):
            names.update({k: v for k, v in entry.items() if k not in names})
            break
    names.update(config)
    return names


def attention_geometry(problem, names):
    """(threads a block, bytes of dynamic shared memory) from the problem file's LocalSize and
    SharedMemory; the grid is the interface's, (S / BLOCK_M, B * H)."""
    spec = problem["KernelSpecification"]
    local = spec.get("LocalSize", {})
    threads = int(evaluate(local.get("X", "1"), names))
    if int(evaluate(local.get("Y", "1"), names)) != 1 or int(evaluate(local.get("Z", "1"), names)) != 1:
        raise SystemExit(f"{problem['_path']}: LocalSize has Y or Z; the attention interface's block is "
                         f"one-dimensional")
    smem = int(evaluate(spec["SharedMemory"], names)) if spec.get("SharedMemory") else 0
    return threads, smem


def attention_check_grid(problem, names, grid, threads):
    """A warning where the problem file's GlobalSize (if it has one this bench can evaluate) is not
    the interface's grid; None where it agrees or cannot be read."""
    spec = problem["KernelSpecification"]
    size = spec.get("GlobalSize")
    if not size:
        return None
    try:
        g = [int(evaluate(size.get(axis, "1"), names)) for axis in ("X", "Y", "Z")]
    except Exception as e:  # noqa: BLE001 - names the bench does not know
        return f"its GlobalSize not checked ({type(e).__name__}: {e})"
    if spec.get("GlobalSizeType") != "CUDA":  # threads: divided by the block
        g[0] //= threads
    if (g[0], g[1], g[2]) != (grid[0], grid[1], 1):
        return f"its GlobalSize gives a grid of {g}, the interface {list(grid) + [1]}; launched with the interface's"
    return None


def attention_fits(problem, config, names, threads, smem, max_smem):
    """Why `config` cannot run at this shape (the grid's and the problem's conditions, the device's
    limits); an empty list where it can. Conditions naming what the bench does not know are left out."""
    B, H, S, D = (names[k] for k in ("B", "H", "S", "D"))
    why = []
    if S % config["BLOCK_M"]:
        why.append(f"S % BLOCK_M == {S % config['BLOCK_M']}")
    if "BLOCK_N" in config and S % config["BLOCK_N"]:
        why.append(f"S % BLOCK_N == {S % config['BLOCK_N']}")
    for condition in (problem or {}).get("ConfigurationSpace", {}).get("Conditions", []):
        try:
            if not evaluate(condition["Expression"], names):
                why.append(condition["Expression"])
        except NameError:
            pass
    if threads > 1024 or threads % 32:
        why.append(f"{threads} threads a block")
    if smem > max_smem:
        why.append(f"{smem} bytes of shared memory (the device allows {max_smem})")
    return why


def space_values(parameter):
    values = parameter["Values"]
    return list(evaluate(values, {}) if isinstance(values, str) else values)


def attention_default(kind, problem):
    """The config an attention kind runs without --db or --set: DEFAULTS["attention"] where the
    problem file's space holds it (parameters it lacks taking their first value), else the space's
    first config valid at the first shape."""
    default = dict(DEFAULTS["attention"])
    params = problem["ConfigurationSpace"]["TuningParameters"]
    space = {p["Name"]: space_values(p) for p in params}
    causal = kind.endswith("_causal")
    max_smem = max_shared_memory()

    def valid(config):
        names = attention_names(problem, ATTENTION_SHAPES[0], config, causal)
        try:
            threads, smem = attention_geometry(problem, names)
        except (NameError, ZeroDivisionError):
            return False
        return not attention_fits(problem, config, names, threads, smem, max_smem)

    shape = attention_names(problem, ATTENTION_SHAPES[0], {}, causal)  # HEAD_DIM, say, is the shape's
    candidate = {name: default.get(name, shape.get(name, values[0])) for name, values in space.items()}
    if all(candidate[name] in values for name, values in space.items()) and valid(candidate):
        return candidate
    for combination in itertools.product(*space.values()):
        config = dict(zip(space, combination))
        if valid(config):
            print(f"{kind}: the bench's default {candidate} is not in {problem['_path']}'s space; "
                  f"the space's first valid config instead: {config}")
            return config
    print(f"{kind}: no config of {problem['_path']}'s space is valid at {ATTENTION_SHAPES[0]}; "
          f"trying the bench's default {candidate}")
    return candidate


def sdpa_backends():
    """(name, backend) of each scaled_dot_product_attention backend to time; the backend None
    where this torch does not have it."""
    try:
        from torch.nn.attention import SDPBackend
    except ImportError:
        SDPBackend = None
    return [(label.split("_")[0].lower(), getattr(SDPBackend, label, None))
            for label in ("FLASH_ATTENTION", "EFFICIENT_ATTENTION", "CUDNN_ATTENTION")]


def attention_row(kind, shape, config, problem, workdir):
    """Builds, checks and times one attention config at one shape against each SDPA backend;
    the row, or None where the config does not fit the shape."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    B, H, S, D = shape
    causal = kind.endswith("_causal")
    names = attention_names(problem, shape, config, causal)
    try:
        threads, smem = attention_geometry(problem, names)
    except NameError as e:
        print(f"{kind} {shape}: {problem['_path']}'s LocalSize or SharedMemory uses a name the bench does not know "
              f"({e}; it knows {sorted(names)}); skipped")
        return None
    grid = (S // config["BLOCK_M"], B * H)
    why = attention_fits(problem, config, names, threads, smem, max_shared_memory())
    if why:
        print(f"{kind} {shape}: the config {config} does not fit the shape ({'; '.join(why)}); skipped")
        return None
    note = attention_check_grid(problem, names, grid, threads)
    if note:
        print(f"{kind} {shape}: {problem['_path']}: {note}")
    extra = [o for o in problem["KernelSpecification"].get("CompilerOptions", [])
             if o.startswith(PASSED_OPTIONS) and not o.startswith("-DHEAD_DIM") and o not in KINDS[kind][3]]
    if "HEAD_DIM" not in config:
        extra.append(f"-DHEAD_DIM={D}")
    if "CAUSAL" in config:  # a parameter of the space: it says which build this is
        config["CAUSAL"] = int(causal)
    lib = build(kind, config, workdir, extra)
    scale = 1.0 / math.sqrt(D)
    # Logits Q K^T / sqrt(D) of standard deviation 2: a softmax neither flat (O near the mean of V,
    # where a wrong kernel would hide) nor one-hot (without causal, about 75 keys of 4,096 carry it).
    q = torch.randn(B, H, S, D, device="cuda", dtype=torch.bfloat16) * 2
    k = torch.randn(B, H, S, D, device="cuda", dtype=torch.bfloat16)
    v = torch.randn(B, H, S, D, device="cuda", dtype=torch.bfloat16)
    o = torch.full((B, H, S, D), float("nan"), device="cuda", dtype=torch.bfloat16)  # unwritten shows
    ours = lambda: lib.launch(grid[0], grid[1], threads, smem, S, scale, q.data_ptr(), k.data_ptr(),  # noqa: E731
                              v.data_ptr(), o.data_ptr())
    sdpa = lambda: torch.nn.functional.scaled_dot_product_attention(  # noqa: E731
        q, k, v, is_causal=causal, scale=scale)
    status = ours()
    if status != 0:
        raise SystemExit(f"{kind} {shape} {config}: the launch failed (CUDA error {status}; {threads} threads, "
                         f"{smem} bytes of shared memory)")
    torch.cuda.synchronize()
    backends, outputs, unavailable = {}, {}, {}
    for label, backend in sdpa_backends():
        if backend is None:
            unavailable[label] = "not in this torch"
            continue
        try:
            with sdpa_kernel(backend):
                outputs[label] = sdpa()
            torch.cuda.synchronize()
            backends[label] = backend
        except Exception as e:  # noqa: BLE001 - a backend that does not take these inputs here
            unavailable[label] = first_line(e)
    if "flash" in outputs:
        reference_name, reference = "flash", outputs["flash"]
    elif outputs:
        reference_name, reference = next(iter(outputs.items()))
    else:
        with sdpa_kernel(SDPBackend.MATH):
            reference_name, reference = "math", sdpa()
    reference = reference.float()
    largest = reference.abs().max().item()

    # bf16 tolerance, element by element: |O - reference| <= ATOL + RTOL |reference|. Two bf16
    # results of the same sums differ by an ulp of the output (2^-8 to 2^-7 of it) and by the
    # rounding of P to bf16 before P V; causal rows near the start average few values of V, so
    # |O| reaches 4 or more there, where a fixed 2e-2 would be under one ulp.
    def check(out):
        diff = (out.float() - reference).abs()
        return diff.max().item(), (diff - ATTENTION_RTOL * reference.abs()).max().item() <= ATTENTION_ATOL

    error, ok = check(o)
    checked = {label: check(out) for label, out in outputs.items()}
    del outputs
    wrong_backends = [label for label, (_, right) in checked.items() if not right]
    work = 4.0 * B * H * S * S * D * (0.5 if causal else 1.0)
    tflops = lambda ms: work / ms / 1e-3 / 1e12  # noqa: E731
    ms_ours = timed(ours)
    measured = {}
    for label, backend in backends.items():
        with sdpa_kernel(backend):  # entered outside the timed launches
            measured[label] = tflops(timed(sdpa))
    # the best backend among those whose output agrees with the reference's
    counted = {label: value for label, value in measured.items() if label not in wrong_backends}
    best = max(counted, key=counted.get) if counted else None
    row = {"kind": kind, "shape": list(shape), "config": config, "error": error, "ok": ok,
           "reference": reference_name, "reference_max": largest, "ours": tflops(ms_ours),
           "torch": counted[best] if best else float("nan"), "torch_backend": best, "sdpa": measured,
           "sdpa_unavailable": unavailable, "sdpa_errors": {label: e for label, (e, _) in checked.items()},
           "sdpa_wrong": wrong_backends, "triton": float("nan"), "copy_gbs": float("nan"), "unit": "TFLOP/s"}
    others = ", ".join([f"{label} {value:.1f}" for label, value in measured.items() if label != best] +
                       [f"{label} unavailable" for label in unavailable])
    ratio = row["ours"] / row["torch"] if best else float("nan")
    print(f"{kind:11} {'x'.join(map(str, shape)):16} ours {row['ours']:7.1f} TFLOP/s  sdpa {row['torch']:7.1f} "
          f"({best or 'no backend ran'}{'; ' + others if others else ''})  ours/sdpa {ratio:.3f}  max abs error "
          f"{error:.1e} against {reference_name} (|O| up to {largest:.2f}) {'ok' if ok else 'WRONG'}  {config}",
          flush=True)
    for label, message in unavailable.items():
        print(f"    sdpa {label} unavailable: {message}")
    for label in wrong_backends:
        print(f"    sdpa {label}: max abs error {checked[label][0]:.1e} against {reference_name}, outside the "
              f"tolerance; not counted as the best")
    return row


def cutlass_problem():
    """kernels/cutlass_gemm/cutlass_gemm.json, or None where it is not there."""
    path = os.path.join(ROOT, "kernels", "cutlass_gemm", "cutlass_gemm.json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        problem = json.load(f)
    problem["_path"] = os.path.relpath(path, ROOT)
    return problem


def cutlass_geometry(problem, config, shape):
    """((grid X, grid Y), threads a block, bytes of dynamic shared memory) from the problem file's
    GlobalSize, LocalSize and SharedMemory with the config and M, N, K as names: the persistent
    grid CUTLASS's tile scheduler would launch, as the worker launches it."""
    M, N, K = shape
    names = {"M": M, "N": N, "K": K, **config}
    spec = problem["KernelSpecification"]
    local = [int(evaluate(spec.get("LocalSize", {}).get(axis, "1"), names)) for axis in ("X", "Y", "Z")]
    size = [int(evaluate(spec["GlobalSize"].get(axis, "1"), names)) for axis in ("X", "Y", "Z")]
    if spec.get("GlobalSizeType") != "CUDA":  # threads: divided by the block
        size = [(g + l - 1) // l for g, l in zip(size, local)]
    if local[1:] != [1, 1] or size[2] != 1:
        raise SystemExit(f"{problem['_path']}: a block of {local} or a grid of {size}; the launcher's block is "
                         f"one-dimensional and its grid two")
    smem = int(evaluate(spec["SharedMemory"], names)) if spec.get("SharedMemory") else 0
    return (size[0], size[1]), local[0], smem


def cutlass_fits(problem, config, shape, grid, threads, smem):
    """Why `config` cannot run at this shape (the problem's conditions, TMA's and the epilogue's
    alignment, the grid against the compiled cluster, the device's limits); an empty list where it can."""
    M, N, K = shape
    names = {"M": M, "N": N, "K": K, **config}
    why = [c["Expression"] for c in problem.get("ConfigurationSpace", {}).get("Conditions", [])
           if not evaluate(c["Expression"], names)]
    if K % 8 or N % 8:  # 16-byte rows of A and B for TMA, 16-byte vectors of D
        why.append("K and N must be multiples of 8")
    if grid[0] % config["CLUSTER_M"] or grid[1] % config["CLUSTER_N"]:
        why.append(f"a grid of {grid} is not made of {config['CLUSTER_M']} x {config['CLUSTER_N']} clusters")
    if grid[0] * grid[1] > 1024:  # the kernel's slots of Params (kMaxCtas); it traps past them
        why.append(f"a grid of {grid[0] * grid[1]} blocks (the kernel has Params for 1024)")
    if threads != 384:  # GemmKernel::MaxThreadsPerBlock of both schedules, its __launch_bounds__
        why.append(f"{threads} threads a block (the kernel is built for 384)")
    if smem > max_shared_memory():
        why.append(f"{smem} bytes of shared memory (the device allows {max_shared_memory()})")
    return why


def main():
    global torch
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--db", action="append", default=[],
                   help="KIND=FILE: the best config of a tuned session (KIND@I=FILE: for shape I of KIND only)")
    p.add_argument("--cli", default=os.path.join(ROOT, "build/release/app/tilescope-cli"))
    p.add_argument("--set", action="append", default=[],
                   help="KIND:NAME=V,NAME=V: run this config of KIND (repeat for several); instead of --db or the defaults")
    # cutlass_gemm only where there is a CUTLASS to build it with
    kinds = ("hgemm_bf16,hgemm_fp16,hgemm_bf16_bt,hgemm_fp16_bt,gemv_bf16,gemv_fp16,softmax,softmax_bf16,"
             "attention_bf16,attention_bf16_causal" + (",cutlass_gemm" if os.environ.get("CUTLASS_DIR") else ""))
    p.add_argument("--kinds", default=kinds,
                   help=f"comma-separated, of: {', '.join(KINDS)} (default {kinds}; cutlass_gemm is in it where "
                        f"CUTLASS_DIR is set)")
    p.add_argument("--triton-grid", choices=sorted(TRITON_GRIDS), default="wide",
                   help="the configs Triton's GEMM kernel is tuned over, on each layout: tutorial (12) or wide (the "
                        "tutorial's and BLOCK_M, BLOCK_N 64-256, BLOCK_K 32/64, 3-5 stages, 4/8 warps; 85 after "
                        "pruning for 2-byte types; default)")
    p.add_argument("--json", help="also write the rows to FILE")
    args = p.parse_args()
    unknown = [kind for kind in args.kinds.split(",") if kind not in KINDS]
    if unknown:
        p.error(f"unknown kinds {', '.join(unknown)}; the kinds are {', '.join(KINDS)}")
    import torch  # noqa: F811 - the module's global, set here (see its definition)
    configs = {}  # kind -> the configs to run
    for item in args.db:
        kind, db = item.split("=", 1)
        configs.setdefault(kind, []).append(best_config(db, args.cli))
    for item in args.set:
        kind, values = item.split(":", 1)
        config = dict(DEFAULTS[KINDS[kind.split("@")[0]][1]])
        config.update({k: int(v) for k, v in (pair.split("=") for pair in values.split(","))})
        configs.setdefault(kind, []).append(config)
    torch.manual_seed(0)
    wrong = 0
    rows = []
    with tempfile.TemporaryDirectory() as workdir:
        for kind in args.kinds.split(","):
            path, name, dtype, _ = KINDS[kind]
            dtype = getattr(torch, dtype)
            default = DEFAULTS[name]
            problem = None
            if name == "attention":
                problem = attention_problem(kind)
                if not os.path.exists(os.path.join(ROOT, path)):
                    print(f"{kind}: {path} is not there (yet); skipped")
                    continue
                if problem is None:
                    print(f"{kind}: no problem file (kernels/attention/{kind}.json or attention_bf16.json) to take the "
                          f"block size and shared memory from; skipped")
                    continue
            cutlass_include = None
            if name == "cutlass_gemm":
                problem = cutlass_problem()
                cutlass_include = os.path.join(os.environ.get("CUTLASS_DIR", ""), "include")
                if not os.path.exists(os.path.join(ROOT, path)) or problem is None:
                    print(f"{kind}: {path} or its problem file cutlass_gemm.json is not there; skipped")
                    continue
                if not os.environ.get("CUTLASS_DIR"):
                    print(f"{kind}: CUTLASS_DIR is not set (a CUTLASS 3.x checkout, its include/ holding cute/ and "
                          f"cutlass/); skipped")
                    continue
                if not os.path.isdir(os.path.join(cutlass_include, "cute")):
                    print(f"{kind}: {cutlass_include} has no cute/ (CUTLASS_DIR is not a CUTLASS 3.x); skipped")
                    continue
                default = dict(default, SMS=torch.cuda.get_device_properties(torch.cuda.current_device())
                               .multi_processor_count)
            shapes = {"hgemm": GEMM_SHAPES, "sgemm": GEMM_SHAPES, "sgemm_warp": GEMM_SHAPES, "gemv": GEMV_SHAPES, "softmax": SOFTMAX_SHAPES,
                      "attention": ATTENTION_SHAPES, "cutlass_gemm": GEMM_SHAPES}[name]
            if name == "attention" and kind not in configs and \
                    any(f"{kind}@{i}" not in configs for i in range(len(shapes))):
                default = attention_default(kind, problem)
            runs = [(s_, c_) for i, s_ in enumerate(shapes)
                    for c_ in configs.get(f"{kind}@{i}", configs.get(kind, [default]))]
            for shape, config in runs:
                config = dict(config)
                if name == "attention":
                    row = attention_row(kind, shape, config, problem, workdir)
                    if row is not None:
                        rows.append(row)
                        wrong += 0 if row["ok"] else 1
                    continue
                if name == "gemv":
                    config["MT"] = 1 << (shape[0] - 1).bit_length()
                if name == "cutlass_gemm":
                    (gx, gy), bx, smem = cutlass_geometry(problem, config, shape)
                    why = cutlass_fits(problem, config, shape, (gx, gy), bx, smem)
                    if why:
                        print(f"{kind} {shape}: the config {config} does not fit the shape ({'; '.join(why)}); skipped")
                        continue
                    lib = build(kind, config, workdir, [f"-I{cutlass_include}"])
                else:
                    if not fits(kind, config, shape):
                        print(f"{kind} {shape}: the config {config} does not fit the shape; skipped")
                        continue
                    gx, bx, smem = geometry(kind, config, shape)
                    if smem > max_shared_memory():  # its launch would fail; the other rows still run
                        print(f"{kind} {shape}: the config {config} needs {smem} bytes of shared memory, the device "
                              f"allows {max_shared_memory()}; skipped")
                        continue
                    lib = build(kind, config, workdir)
                layouts = {}  # GEMM rows: Triton's layout -> B as a K x N view in that layout
                if kind == "hgemm_fp8":
                    # cublasLt's FP8 GEMM through torch._scaled_mm: B column-major (N x K row-major), per-tensor scales
                    M, N, K = shape
                    a = torch.randn(M, K, device="cuda").to(dtype)
                    b = torch.randn(N, K, device="cuda").to(dtype)
                    c = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)  # unwritten shows
                    sa, sb = torch.tensor(0.5, device="cuda"), torch.tensor(0.25, device="cuda")
                    lib.set_scales(ctypes.c_float(0.5), ctypes.c_float(0.25))
                    ours = lambda: lib.launch(gx, bx, smem, M, N, K, a.data_ptr(), b.data_ptr(), c.data_ptr())  # noqa: E731
                    theirs = lambda: torch._scaled_mm(a, b.t(), scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16)  # noqa: E731
                    tc, tri = None, None  # no Triton FP8 kernel here
                    work, unit, scale = 2.0 * M * N * K, "TFLOP/s", 1e12
                    read = M * K + K * N
                elif name in ("sgemm", "sgemm_warp"):
                    # FP32 on the CUDA cores against cuBLAS's SGEMM (TF32 off); no Triton row
                    torch.backends.cuda.matmul.allow_tf32 = False
                    M, N, K = shape
                    a = torch.randn(M, K, device="cuda")
                    b = torch.randn(K, N, device="cuda")
                    c = torch.full((M, N), float("nan"), device="cuda")  # unwritten shows
                    ours = lambda: lib.launch(gx, bx, smem, M, N, K, a.data_ptr(), b.data_ptr(), c.data_ptr())  # noqa: E731
                    theirs = lambda: torch.matmul(a, b)  # noqa: E731
                    tc, tri = None, None
                    work, unit, scale = 2.0 * M * N * K, "TFLOP/s", 1e12
                    read = (M * K + K * N) * 4
                elif name in ("hgemm", "cutlass_gemm"):
                    # cutlass_gemm is hgemm_bf16_bt's GEMM (B N x K row-major): the same checks and columns
                    M, N, K = shape
                    a = torch.randn(M, K, device="cuda", dtype=dtype)
                    transposed = kind.endswith("_bt") or name == "cutlass_gemm"
                    b = torch.randn(N, K, device="cuda", dtype=dtype) if transposed else \
                        torch.randn(K, N, device="cuda", dtype=dtype)
                    c = torch.full((M, N), float("nan"), device="cuda", dtype=dtype)  # unwritten shows
                    if name == "cutlass_gemm":
                        ours = lambda: lib.launch(gx, gy, bx, smem, M, N, K, a.data_ptr(), b.data_ptr(),  # noqa: E731
                                                  c.data_ptr())
                    else:
                        ours = lambda: lib.launch(gx, bx, smem, M, N, K, a.data_ptr(), b.data_ptr(), c.data_ptr())  # noqa: E731
                    theirs = (lambda: torch.nn.functional.linear(a, b)) if transposed else (lambda: torch.matmul(a, b))
                    tc = torch.empty(M, N, device="cuda", dtype=dtype)
                    tri = None
                    # Triton on both layouts of the same B, whichever this kind's own is: "rm" K x N
                    # row-major (the tutorial's), "bt" N x K row-major passed as its K x N view
                    b_nk = b if transposed else b.t().contiguous()
                    b_kn = b.t().contiguous() if transposed else b
                    layouts = {"rm": b_kn, "bt": b_nk.t()}
                    work, unit, scale = 2.0 * M * N * K, "TFLOP/s", 1e12
                    read = (M * K + K * N) * a.element_size()
                elif name == "softmax":
                    R, C = shape
                    a = torch.rand(R, C, device="cuda", dtype=dtype) * 8 - 4
                    c = torch.full((R, C), float("nan"), device="cuda", dtype=dtype)  # unwritten shows
                    ours = lambda: lib.launch(gx, bx, smem, R, C, 0, a.data_ptr(), 0, c.data_ptr())  # noqa: E731
                    theirs = lambda: torch.softmax(a, dim=1)  # noqa: E731
                    tc = torch.empty(R, C, device="cuda", dtype=dtype)
                    tri = triton_softmax_call(a, tc)
                    read = R * C * a.element_size()
                    work, unit, scale = 2.0 * read, "GB/s", 1e9
                else:
                    M, K, N = shape
                    a = torch.randn(M, K, device="cuda", dtype=dtype)
                    b = torch.randn(N, K, device="cuda", dtype=dtype)
                    c = torch.full((M, N), float("nan"), device="cuda", dtype=dtype)  # unwritten shows
                    ours = lambda: lib.launch(gx, bx, smem, M, N, K, a.data_ptr(), b.data_ptr(), c.data_ptr())  # noqa: E731
                    theirs = lambda: torch.nn.functional.linear(a, b)  # noqa: E731
                    tc = torch.empty(M, N, device="cuda", dtype=dtype)
                    tri = triton_call(a, b.t(), tc)
                    work, unit, scale = 2.0 * N * K, "GB/s", 1e9
                    read = N * K * b.element_size()
                status = ours()
                if status != 0:  # cutlass_gemm: -1 - i where the driver refused tensor map i
                    raise SystemExit(f"{kind} {shape} {config}: the launch failed (status {status})")
                torch.cuda.synchronize()
                expected = theirs().float()
                largest = max(expected.abs().max().item(), 1e-30)
                error = (c.float() - expected).abs().max().item() / largest
                # FP8: both sides accumulate in fp32 and round to bf16 (the inputs are the same bytes)
                tolerance = {torch.bfloat16: 2e-2, torch.float16: 5e-3, torch.float32: 1e-5,
                             torch.float8_e4m3fn: 2e-2}[dtype]
                if name in ("sgemm", "sgemm_warp"):
                    tolerance = 1e-4  # fp32 sums of 1,024 to 8,192 products in another order
                ok = error <= tolerance
                wrong += 0 if ok else 1
                # Triton's columns: label -> [launch, error, config]; tuned here, outside the timing
                tri_cols = {}
                for layout, b_view in layouts.items():
                    tile = tune_triton_gemm(a, b_view, tc, expected, tolerance, layout, args.triton_grid)
                    fn = triton_gemm_call(a, b_view, tc, tile)
                    tc.fill_(float("nan"))
                    fn()
                    torch.cuda.synchronize()
                    tri_cols[layout] = [fn, relative_error(tc, expected, largest), tile_text(tile)]
                if tri is not None:
                    tri()  # autotune tunes here, outside the timing
                    torch.cuda.synchronize()
                    tuned = TUNED["softmax" if name == "softmax" else "gemv"]
                    tri_cols["triton"] = [tri, relative_error(tc, expected, largest), str(tuned.best_config)]
                for col in tri_cols.values():
                    wrong += 0 if col[1] <= tolerance else 1
                src = torch.empty(read, dtype=torch.uint8, device="cuda")
                dst = torch.empty_like(src)
                ms_ours, ms_torch = timed(ours), timed(theirs)
                rates = {label: work / timed(col[0]) / 1e-3 / scale for label, col in tri_cols.items()}
                ms_copy = timed(lambda: dst.copy_(src))
                best = max(rates, key=rates.get) if rates else None
                row = {"kind": kind, "shape": list(shape), "config": config, "error": error, "ok": ok,
                       "ours": work / ms_ours / 1e-3 / scale, "torch": work / ms_torch / 1e-3 / scale,
                       "triton": rates[best] if best else float("nan"),
                       "triton_error": tri_cols[best][1] if best else float("nan"),
                       "triton_config": tri_cols[best][2] if best else None,
                       "copy_gbs": 2 * read / ms_copy / 1e-3 / 1e9, "unit": unit}
                if layouts:  # both layouts, and which was the better
                    row.update({"triton_best": best, "triton_grid": args.triton_grid})
                    for label, col in tri_cols.items():
                        row.update({f"triton_{label}": rates[label], f"triton_{label}_error": col[1],
                                    f"triton_{label}_config": col[2]})
                rows.append(row)
                copy = f", copy {row['copy_gbs']:.0f} GB/s (read + write), ours {row['ours'] / row['copy_gbs']:.1%} of it" \
                    if unit == "GB/s" else ""
                if layouts:
                    triton_text = "  ".join(f"triton({label}) {rates[label]:7.1f}" for label in tri_cols)
                    versus = f"  ours/triton {row['ours'] / row['triton']:.3f} (against {best})"
                    errors = ", ".join(f"{label} {col[1]:.1e}" for label, col in tri_cols.items())
                else:
                    triton_text = f"triton {row['triton']:7.1f}"
                    versus = f"  ours/triton {row['ours'] / row['triton']:.3f}"
                    errors = f"{row['triton_error']:.1e}"
                print(f"{kind:11} {'x'.join(map(str, shape)):16} ours {row['ours']:7.1f} {unit}  torch "
                      f"{row['torch']:7.1f}  {triton_text}  ours/torch {row['ours'] / row['torch']:.3f}"
                      f"{versus}{copy}  max error {error:.1e} "
                      f"{'ok' if ok else 'WRONG'} (triton {errors})  {config}", flush=True)
                if layouts:
                    print("    triton configs: " + ", ".join(f"{label} {col[2]}" for label, col in tri_cols.items()))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
