#!/usr/bin/env python3
"""Tensor-core kernels side by side, on the GPU machine: kernels/hgemm and kernels/gemv against
PyTorch (cuBLAS) and the device-to-device copy, in one run, with one timing method.

For each kernel, the configs to run come from results databases of `tilescope-cli tune` (the
best verified config of the newest session, `--db KIND=FILE`, KIND one of hgemm_bf16,
hgemm_fp16, gemv_bf16, gemv_fp16) or from the kernel's defaults. Each config is built with nvcc
into a small library (the kernel file as it is, its parameters as -D, as Tilescope's NVRTC
build passes them), checked against torch on the same inputs (every config, every shape) and
then timed: L2 flushed before every launch (a 256 MB memset), CUDA events around each launch,
the median of the samples after a warm-up. The same for torch.matmul / F.linear and for a
device-to-device copy of the bytes the kernel must read. Prints a table with TFLOP/s or GB/s
and the ratios; exits 1 when a kernel's output is wrong.

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

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

KINDS = {
    "hgemm_bf16": ("kernels/hgemm/hgemm.cu", "hgemm", torch.bfloat16, []),
    "hgemm_fp16": ("kernels/hgemm/hgemm.cu", "hgemm", torch.float16, ["-DHGEMM_FP16"]),
    "hgemm_bf16_bt": ("kernels/hgemm/hgemm.cu", "hgemm", torch.bfloat16, ["-DB_TRANS=1"]),
    "gemv_bf16": ("kernels/gemv/gemv.cu", "gemv", torch.bfloat16, []),
    "gemv_fp16": ("kernels/gemv/gemv.cu", "gemv", torch.float16, ["-DGEMV_FP16"]),
}
GEMM_SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192), (8192, 8192, 1024)]  # M, N, K
GEMV_SHAPES = [(1, 4096, 16384), (1, 16384, 4096), (4, 4096, 16384), (16, 4096, 16384)]  # M, K, N

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
            f.write(LAUNCHER % {"kernel": os.path.join(ROOT, path), "name": name})
        defines = [f"-D{k}={v}" for k, v in config.items()]
        subprocess.run(["nvcc", "-O3", "-std=c++17", "-gencode", "arch=compute_90a,code=sm_90a", "-shared", "-Xcompiler", "-fPIC", *options,
                        *defines, "-o", so, src], check=True)
    lib = ctypes.CDLL(so)
    lib.launch.argtypes = [ctypes.c_int] * 6 + [ctypes.c_void_p] * 3
    return lib


def geometry(kind, config, shape):
    if kind.startswith("hgemm"):
        M, N, K = shape
        algo = config.get("ALGO", 0)
        threads = config["WARPS_M"] * config["WARPS_N"] * 32 if algo == 0 else config["BLOCK_M"] // 64 * 128
        smem = config["STAGES"] * (config["BLOCK_M"] + config["BLOCK_N"]) * config["BLOCK_K"] * 2 + 1024 * algo
        return (M // config["BLOCK_M"]) * (N // config["BLOCK_N"]), threads, smem
    M, K, N = shape
    return N // (config["WARPS"] * config["ROWS"]), config["WARPS"] * 32, 0


def fits(kind, config, shape):
    if kind.startswith("hgemm"):
        M, N, K = shape
        return M % config["BLOCK_M"] == 0 and N % config["BLOCK_N"] == 0 and K % config["BLOCK_K"] == 0
    M, K, N = shape
    mt = config["MT"]
    return (M <= mt < 2 * M and N % (config["WARPS"] * config["ROWS"]) == 0
            and K % (256 * config["UNROLL"]) == 0)


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
              "ALGO": 0},
    "gemv": {"WARPS": 4, "ROWS": 1, "UNROLL": 4, "HINT": 1},
}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--db", action="append", default=[], help="KIND=FILE: the best config of a tuned session")
    p.add_argument("--cli", default=os.path.join(ROOT, "build/release/app/tilescope-cli"))
    p.add_argument("--set", action="append", default=[],
                   help="KIND:NAME=V,NAME=V: run this config of KIND (repeat for several); instead of --db or the defaults")
    p.add_argument("--kinds", default="hgemm_bf16,hgemm_fp16,hgemm_bf16_bt,gemv_bf16,gemv_fp16")
    p.add_argument("--json", help="also write the rows to FILE")
    args = p.parse_args()
    configs = {}  # kind -> the configs to run
    for item in args.db:
        kind, db = item.split("=", 1)
        configs[kind] = [best_config(db, args.cli)]
    for item in args.set:
        kind, values = item.split(":", 1)
        config = dict(DEFAULTS[KINDS[kind][1]])
        config.update({k: int(v) for k, v in (pair.split("=") for pair in values.split(","))})
        configs.setdefault(kind, []).append(config)
    torch.manual_seed(0)
    wrong = 0
    rows = []
    with tempfile.TemporaryDirectory() as workdir:
        for kind in args.kinds.split(","):
            _, name, dtype, _ = KINDS[kind]
            shapes = GEMM_SHAPES if name == "hgemm" else GEMV_SHAPES
            for shape, config in [(s_, c_) for s_ in shapes for c_ in configs.get(kind, [DEFAULTS[name]])]:
                config = dict(config)
                if name == "gemv":
                    config["MT"] = 1 << (shape[0] - 1).bit_length()
                if not fits(kind, config, shape):
                    print(f"{kind} {shape}: the config {config} does not fit the shape; skipped")
                    continue
                lib = build(kind, config, workdir)
                gx, bx, smem = geometry(kind, config, shape)
                if name == "hgemm":
                    M, N, K = shape
                    a = torch.randn(M, K, device="cuda", dtype=dtype)
                    transposed = kind.endswith("_bt")
                    b = torch.randn(N, K, device="cuda", dtype=dtype) if transposed else \
                        torch.randn(K, N, device="cuda", dtype=dtype)
                    c = torch.full((M, N), float("nan"), device="cuda", dtype=dtype)  # unwritten shows
                    ours = lambda: lib.launch(gx, bx, smem, M, N, K, a.data_ptr(), b.data_ptr(), c.data_ptr())  # noqa: E731
                    theirs = (lambda: torch.nn.functional.linear(a, b)) if transposed else (lambda: torch.matmul(a, b))
                    work, unit, scale = 2.0 * M * N * K, "TFLOP/s", 1e12
                    read = (M * K + K * N) * a.element_size()
                else:
                    M, K, N = shape
                    a = torch.randn(M, K, device="cuda", dtype=dtype)
                    b = torch.randn(N, K, device="cuda", dtype=dtype)
                    c = torch.full((M, N), float("nan"), device="cuda", dtype=dtype)  # unwritten shows
                    ours = lambda: lib.launch(gx, bx, smem, M, N, K, a.data_ptr(), b.data_ptr(), c.data_ptr())  # noqa: E731
                    theirs = lambda: torch.nn.functional.linear(a, b)  # noqa: E731
                    work, unit, scale = 2.0 * N * K, "GB/s", 1e9
                    read = N * K * b.element_size()
                if ours() != 0:
                    raise SystemExit(f"{kind} {shape} {config}: the launch failed")
                torch.cuda.synchronize()
                expected = theirs().float()
                error = (c.float() - expected).abs().max().item() / max(expected.abs().max().item(), 1e-30)
                tolerance = 2e-2 if dtype == torch.bfloat16 else 5e-3
                ok = error <= tolerance
                wrong += 0 if ok else 1
                src = torch.empty(read, dtype=torch.uint8, device="cuda")
                dst = torch.empty_like(src)
                ms_ours, ms_torch = timed(ours), timed(theirs)
                ms_copy = timed(lambda: dst.copy_(src))
                row = {"kind": kind, "shape": list(shape), "config": config, "error": error, "ok": ok,
                       "ours": work / ms_ours / 1e-3 / scale, "torch": work / ms_torch / 1e-3 / scale,
                       "copy_gbs": 2 * read / ms_copy / 1e-3 / 1e9, "unit": unit}
                rows.append(row)
                copy = f", copy {row['copy_gbs']:.0f} GB/s (read + write), ours {row['ours'] / row['copy_gbs']:.1%} of it" \
                    if unit == "GB/s" else ""
                print(f"{kind:11} {'x'.join(map(str, shape)):16} ours {row['ours']:7.1f} {unit}  torch "
                      f"{row['torch']:7.1f}  ratio {row['ours'] / row['torch']:.3f}{copy}  max error "
                      f"{error:.1e} {'ok' if ok else 'WRONG'}  {config}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
