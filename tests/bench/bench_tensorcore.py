#!/usr/bin/env python3
"""Tensor-core kernels side by side, on the GPU machine: kernels/hgemm, kernels/gemv (and the FP32
kernels/sgemm, kind sgemm) against
PyTorch (cuBLAS), Triton (a matmul tuned by triton.autotune over a usual config list) and the
device-to-device copy, in one run, with one timing method.

For each kernel, the configs to run come from results databases of `tilescope-cli tune` (the
best verified config of the newest session, `--db KIND=FILE`, KIND one of hgemm_bf16,
hgemm_fp16, gemv_bf16, gemv_fp16) or from the kernel's defaults. Each config is built with nvcc
into a small library (the kernel file as it is, its parameters as -D, as Tilescope's NVRTC
build passes them), checked against torch on the same inputs (every config, every shape) and
then timed: L2 flushed before every launch (a 256 MB memset), CUDA events around each launch,
the median of the samples after a warm-up. The same for torch.matmul / F.linear, for the Triton
matmul once autotune has chosen its config (outside the timing), and for a device-to-device
copy of the bytes the kernel must read. Prints a table with TFLOP/s or GB/s and the ratios;
exits 1 when a kernel's output is wrong (ours or Triton's).

    python3 tests/bench/bench_tensorcore.py --db hgemm_bf16=hgemm.db --db gemv_bf16=gemv.db
"""

import argparse
import ctypes
import json
import os
import subprocess
import sys
import tempfile

import torch
import triton
import triton.language as tl

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

KINDS = {
    "hgemm_bf16": ("kernels/hgemm/hgemm.cu", "hgemm", torch.bfloat16, []),
    "hgemm_fp16": ("kernels/hgemm/hgemm.cu", "hgemm", torch.float16, ["-DHGEMM_FP16"]),
    "hgemm_bf16_bt": ("kernels/hgemm/hgemm.cu", "hgemm", torch.bfloat16, ["-DB_TRANS=1"]),
    "hgemm_fp16_bt": ("kernels/hgemm/hgemm.cu", "hgemm", torch.float16, ["-DHGEMM_FP16", "-DB_TRANS=1"]),
    "sgemm": ("kernels/sgemm/sgemm.cu", "sgemm", torch.float32, []),
    "hgemm_fp8": ("kernels/hgemm/hgemm.cu", "hgemm", torch.float8_e4m3fn, ["-DHGEMM_FP8", "-DB_TRANS=1"]),
    "gemv_bf16": ("kernels/gemv/gemv.cu", "gemv", torch.bfloat16, []),
    "gemv_fp16": ("kernels/gemv/gemv.cu", "gemv", torch.float16, ["-DGEMV_FP16"]),
    "softmax": ("kernels/softmax/softmax.cu", "softmax", torch.float32, []),
    "softmax_bf16": ("kernels/softmax/softmax.cu", "softmax", torch.bfloat16, ["-DSOFTMAX_BF16=1"]),
}
GEMM_SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192), (8192, 8192, 1024)]  # M, N, K
GEMV_SHAPES = [(1, 4096, 16384), (1, 16384, 4096), (4, 4096, 16384), (16, 4096, 16384)]  # M, K, N
SOFTMAX_SHAPES = [(8192, 8192), (32768, 1024), (4096, 32768)]  # rows, cols

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


def build(kind, config, workdir):
    path, name, _, options = KINDS[kind]
    tag = kind + "_" + "_".join(f"{k}{v}" for k, v in sorted(config.items()))
    so = os.path.join(workdir, tag + ".so")
    if not os.path.exists(so):
        src = os.path.join(workdir, tag + ".cu")
        with open(src, "w") as f:
            launcher = {"hgemm": HGEMM_LAUNCHER, "softmax": SOFTMAX_LAUNCHER, "sgemm": SGEMM_LAUNCHER}.get(name, LAUNCHER)
            f.write(launcher % {"kernel": os.path.join(ROOT, path), "name": name})
        defines = [f"-D{k}={v}" for k, v in config.items()]
        subprocess.run(["nvcc", "-O3", "-std=c++17", "-gencode", "arch=compute_90a,code=sm_90a", "-shared", "-Xcompiler", "-fPIC", *options,
                        *defines, "-o", so, src, "-lcuda"], check=True)
    lib = ctypes.CDLL(so)
    lib.launch.argtypes = [ctypes.c_int] * 6 + [ctypes.c_void_p] * 3
    return lib


def geometry(kind, config, shape):
    if kind == "sgemm":
        return 0, (config["BLOCK_M"] // config["THREAD_M"]) * (config["BLOCK_N"] // config["THREAD_N"]), 0
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
    return N // (config["WARPS"] * config["ROWS"]), config["WARPS"] * 32, 0


def fits(kind, config, shape):
    if kind == "sgemm":
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
    if config.get("ALGO", 0) == 1:
        return (M <= mt < 2 * M and N % (16 * config["ROWS"]) == 0
                and K % (32 * config["UNROLL"] * config["WARPS"]) == 0)
    return (M <= mt < 2 * M and N % (config["WARPS"] * config["ROWS"]) == 0
            and K % (256 * config["UNROLL"]) == 0)


@triton.jit
def triton_matmul(a, b, c, M, N, K, sam, sak, sbk, sbn, scm, scn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                  BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    # C = A B in fp32 accumulation, tiles rasterised in groups of GROUP_M rows; K a multiple of BLOCK_K.
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


def triton_configs(gemv):
    """The usual lists: the GEMM tiles of Triton's matmul tutorial and its autotuned kernels; for the
    decode step, tl.dot's smallest M (16) with a sweep of N and K tiles."""
    if gemv:
        shapes = [(16, n, k, s, 4) for n in (32, 64, 128) for k in (128, 256, 512) for s in (3, 4)]
    else:
        shapes = [(128, 256, 64, 3, 8), (256, 128, 64, 3, 8), (128, 256, 64, 4, 8), (256, 128, 64, 4, 8),
                  (128, 128, 64, 4, 4), (128, 128, 32, 4, 4), (64, 256, 32, 4, 4), (128, 64, 32, 4, 4),
                  (64, 128, 32, 4, 4), (128, 32, 32, 4, 4), (64, 32, 32, 5, 2), (32, 64, 32, 5, 2)]
    return [triton.Config({"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k, "GROUP_M": 8}, num_stages=s, num_warps=w)
            for m, n, k, s, w in shapes]


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


def triton_call(a, b_kn, c, gemv):
    """C = A B with B given as a K x N view (any strides), through triton.autotune (which tunes on
    its first call, per M, N, K)."""
    if gemv not in TUNED:
        TUNED[gemv] = triton.autotune(configs=triton_configs(gemv), key=["M", "N", "K"])(triton_matmul)
    kernel = TUNED[gemv]
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
    "gemv": {"ALGO": 0, "WARPS": 4, "ROWS": 1, "UNROLL": 4, "HINT": 1},
    "softmax": {"TPR": 256, "RPB": 1, "VEC": 4, "CACHE_ROW": 1},
}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--db", action="append", default=[],
                   help="KIND=FILE: the best config of a tuned session (KIND@I=FILE: for shape I of KIND only)")
    p.add_argument("--cli", default=os.path.join(ROOT, "build/release/app/tilescope-cli"))
    p.add_argument("--set", action="append", default=[],
                   help="KIND:NAME=V,NAME=V: run this config of KIND (repeat for several); instead of --db or the defaults")
    p.add_argument("--kinds", default="hgemm_bf16,hgemm_fp16,hgemm_bf16_bt,hgemm_fp16_bt,gemv_bf16,gemv_fp16,"
                                      "softmax,softmax_bf16")
    p.add_argument("--json", help="also write the rows to FILE")
    args = p.parse_args()
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
            _, name, dtype, _ = KINDS[kind]
            shapes = {"hgemm": GEMM_SHAPES, "sgemm": GEMM_SHAPES, "gemv": GEMV_SHAPES, "softmax": SOFTMAX_SHAPES}[name]
            runs = [(s_, c_) for i, s_ in enumerate(shapes)
                    for c_ in configs.get(f"{kind}@{i}", configs.get(kind, [DEFAULTS[name]]))]
            for shape, config in runs:
                config = dict(config)
                if name == "gemv":
                    config["MT"] = 1 << (shape[0] - 1).bit_length()
                if not fits(kind, config, shape):
                    print(f"{kind} {shape}: the config {config} does not fit the shape; skipped")
                    continue
                lib = build(kind, config, workdir)
                gx, bx, smem = geometry(kind, config, shape)
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
                elif name == "sgemm":
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
                elif name == "hgemm":
                    M, N, K = shape
                    a = torch.randn(M, K, device="cuda", dtype=dtype)
                    transposed = kind.endswith("_bt")
                    b = torch.randn(N, K, device="cuda", dtype=dtype) if transposed else \
                        torch.randn(K, N, device="cuda", dtype=dtype)
                    c = torch.full((M, N), float("nan"), device="cuda", dtype=dtype)  # unwritten shows
                    ours = lambda: lib.launch(gx, bx, smem, M, N, K, a.data_ptr(), b.data_ptr(), c.data_ptr())  # noqa: E731
                    theirs = (lambda: torch.nn.functional.linear(a, b)) if transposed else (lambda: torch.matmul(a, b))
                    tc = torch.empty(M, N, device="cuda", dtype=dtype)
                    tri = triton_call(a, b.t() if transposed else b, tc, False)
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
                    tri = triton_call(a, b.t(), tc, True)
                    work, unit, scale = 2.0 * N * K, "GB/s", 1e9
                    read = N * K * b.element_size()
                if ours() != 0:
                    raise SystemExit(f"{kind} {shape} {config}: the launch failed")
                torch.cuda.synchronize()
                expected = theirs().float()
                error = (c.float() - expected).abs().max().item() / max(expected.abs().max().item(), 1e-30)
                # FP8: both sides accumulate in fp32 and round to bf16 (the inputs are the same bytes)
                tolerance = {torch.bfloat16: 2e-2, torch.float16: 5e-3, torch.float32: 1e-5,
                             torch.float8_e4m3fn: 2e-2}[dtype]
                if name == "sgemm":
                    tolerance = 1e-4  # fp32 sums of 1,024 to 8,192 products in another order
                ok = error <= tolerance
                wrong += 0 if ok else 1
                tri_error = float("nan")
                if tri is not None:
                    tri()  # autotune tunes here, outside the timing
                    torch.cuda.synchronize()
                    tri_error = (tc.float() - expected).abs().max().item() / max(expected.abs().max().item(), 1e-30)
                    wrong += 0 if tri_error <= tolerance else 1
                src = torch.empty(read, dtype=torch.uint8, device="cuda")
                dst = torch.empty_like(src)
                ms_ours, ms_torch = timed(ours), timed(theirs)
                ms_triton = timed(tri) if tri is not None else float("nan")
                ms_copy = timed(lambda: dst.copy_(src))
                row = {"kind": kind, "shape": list(shape), "config": config, "error": error, "ok": ok,
                       "ours": work / ms_ours / 1e-3 / scale, "torch": work / ms_torch / 1e-3 / scale,
                       "triton": work / ms_triton / 1e-3 / scale, "triton_error": tri_error,
                       "triton_config": str(TUNED["softmax" if name == "softmax" else name == "gemv"].best_config)
                       if tri is not None else None,
                       "copy_gbs": 2 * read / ms_copy / 1e-3 / 1e9, "unit": unit}
                rows.append(row)
                copy = f", copy {row['copy_gbs']:.0f} GB/s (read + write), ours {row['ours'] / row['copy_gbs']:.1%} of it" \
                    if unit == "GB/s" else ""
                print(f"{kind:11} {'x'.join(map(str, shape)):16} ours {row['ours']:7.1f} {unit}  torch "
                      f"{row['torch']:7.1f}  triton {row['triton']:7.1f}  ours/torch {row['ours'] / row['torch']:.3f}"
                      f"  ours/triton {row['ours'] / row['triton']:.3f}{copy}  max error {error:.1e} "
                      f"{'ok' if ok else 'WRONG'} (triton {tri_error:.1e})  {config}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
