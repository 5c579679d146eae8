"""Triton kernels for tst_cli_triton's tests of the autotuner stand-in, written as scripts write
them: a blocked matmul autotuned over a list of configs with a grouped launch order, a row-wise
kernel with a 2-D grid, an accumulation with atomics, block pointers, a kernel under
@triton.heuristics, and one that calls a helper with a pointer."""

import triton
import triton.language as tl


def matmul_configs():
    shapes = [(128, 256, 64, 3, 8), (64, 256, 32, 4, 4), (128, 128, 32, 4, 4), (128, 64, 32, 4, 4),
              (64, 128, 32, 4, 4), (128, 32, 32, 4, 4), (64, 32, 32, 5, 2), (32, 64, 32, 5, 2)]
    return [
        triton.Config({"BLOCK_SIZE_M": m, "BLOCK_SIZE_N": n, "BLOCK_SIZE_K": k, "GROUP_SIZE_M": 8}, num_stages=s,
                      num_warps=w) for m, n, k, s, w in shapes
    ]


@triton.jit
def scale(x, factor):
    return x * factor


@triton.autotune(configs=matmul_configs(), key=["M", "N", "K"])
@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
                  GROUP_SIZE_M: tl.constexpr, ACTIVATION: tl.constexpr):
    pid = tl.program_id(axis=0)
    blocks_m = tl.cdiv(M, BLOCK_SIZE_M)
    blocks_n = tl.cdiv(N, BLOCK_SIZE_N)
    group = pid // (GROUP_SIZE_M * blocks_n)
    first_m = group * GROUP_SIZE_M
    rows_in_group = min(blocks_m - first_m, GROUP_SIZE_M)
    block_m = first_m + (pid % (GROUP_SIZE_M * blocks_n)) % rows_in_group
    block_n = (pid % (GROUP_SIZE_M * blocks_n)) // rows_in_group
    rm = (block_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
    rn = (block_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
    rk = tl.arange(0, BLOCK_SIZE_K)
    a_tile = a_ptr + rm[:, None] * stride_am + rk[None, :] * stride_ak
    b_tile = b_ptr + rk[:, None] * stride_bk + rn[None, :] * stride_bn
    acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        a = tl.load(a_tile, mask=rk[None, :] < K - k * BLOCK_SIZE_K, other=0.0)
        b = tl.load(b_tile, mask=rk[:, None] < K - k * BLOCK_SIZE_K, other=0.0)
        acc = tl.dot(a, b, acc)
        a_tile += BLOCK_SIZE_K * stride_ak
        b_tile += BLOCK_SIZE_K * stride_bk
    if ACTIVATION == "scaled":
        acc = scale(acc, 0.5)
    cm = block_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    cn = block_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    tl.store(c_ptr + stride_cm * cm[:, None] + stride_cn * cn[None, :], acc.to(tl.float16),
             mask=(cm[:, None] < M) & (cn[None, :] < N))


@triton.autotune(configs=[triton.Config({"BLOCK": 128}, num_warps=4), triton.Config({"BLOCK": 256}, num_warps=8)],
                 key=["n_cols"], reset_to_zero=["sums_ptr"], restore_value=["data_ptr"])
@triton.jit
def rows_kernel(data_ptr, sums_ptr, n_cols, row_stride, BLOCK: tl.constexpr, EVEN: tl.constexpr = False):
    row = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < n_cols
    values = tl.load(data_ptr + row * row_stride + cols, mask=mask, other=0.0)
    tl.store(data_ptr + row * row_stride + cols, values * 2, mask=mask)
    tl.atomic_add(sums_ptr + row, tl.sum(values, axis=0))


@triton.jit
def block_pointer_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    src = tl.make_block_ptr(base=x_ptr, shape=(n, ), strides=(1, ), offsets=(tl.program_id(0) * BLOCK, ),
                            block_shape=(BLOCK, ), order=(0, ))
    dst = tl.make_block_ptr(base=y_ptr, shape=(n, ), strides=(1, ), offsets=(tl.program_id(0) * BLOCK, ),
                            block_shape=(BLOCK, ), order=(0, ))
    tl.store(dst, tl.load(src, boundary_check=(0, )), boundary_check=(0, ))


@triton.jit
def store_through(ptr, offsets, value):
    tl.store(ptr + offsets, value)


@triton.jit
def helper_kernel(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    store_through(y_ptr, offsets, tl.load(x_ptr + offsets))


@triton.autotune(configs=[triton.Config({"BLOCK_K": 32, "SPLIT_K": 1}), triton.Config({"BLOCK_K": 64, "SPLIT_K": 2})],
                 key=["K"])
@triton.heuristics({"EVEN_K": lambda args: args["K"] % (args["BLOCK_K"] * args["SPLIT_K"]) == 0})
@triton.jit
def heuristic_kernel(x_ptr, y_ptr, K, BLOCK_K: tl.constexpr, SPLIT_K: tl.constexpr, EVEN_K: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_K + tl.arange(0, BLOCK_K)
    if EVEN_K:
        tl.store(y_ptr + offsets, tl.load(x_ptr + offsets) * SPLIT_K)
    else:
        tl.store(y_ptr + offsets, tl.load(x_ptr + offsets, mask=offsets < K), mask=offsets < K)
