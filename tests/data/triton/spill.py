# A Triton kernel that spills registers on purpose, for Tilescope's tests of spills by source line:
# each program keeps a ROWS x COLS tile of float32 live across a loop, far more values than a
# thread's registers hold at a few warps, so ptxas spills them to local memory.
import triton
import triton.language as tl


@triton.jit
def spill_kernel(x_ptr, out_ptr, n,
                 ROWS: tl.constexpr, COLS: tl.constexpr, STEPS: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, COLS)
    offsets = rows[:, None] * COLS + cols[None, :]
    mask = offsets < n
    tile = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    acc = tl.zeros((ROWS, COLS), dtype=tl.float32)
    for step in range(STEPS):
        acc = acc * tile + tl.sin(acc + step)
    tl.store(out_ptr + offsets, acc, mask=mask)
