# A small Triton kernel for Tilescope's tests: out = x + y * scale, in blocks of BLOCK values.
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr,  # the first input
               y_ptr, out_ptr,
               n,  # values in each
               scale,
               BLOCK: tl.constexpr,
               EVEN: tl.constexpr = False):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    tl.static_assert(BLOCK <= 4096)
    if EVEN:
        x = tl.load(x_ptr + offsets)
        y = tl.load(y_ptr + offsets)
        tl.store(out_ptr + offsets, x + y * scale)
    else:
        mask = offsets < n
        x = tl.load(x_ptr + offsets, mask=mask)
        y = tl.load(y_ptr + offsets, mask=mask)
        tl.store(out_ptr + offsets, x + y * scale, mask=mask)
