// A kernel that reads its input as deep as a header's LENGTH says, for the guarded-buffer tests
// (tests/gpu/tst_guarded.cpp) and the static buffer-edge check (tests/tst_launchplan.cpp):
// out[i] = 2 * in[i] + 1 for i < LENGTH. overrun.json declares `in` with Size 1, as a problem
// written without looking at the header would: every thread past the first reads beyond it.
//
// On guarded buffers the 1-element input ends 252 bytes before an unmapped page (the start is
// aligned to 256 bytes), so the threads from i = 64 on fault every time. Under compute-sanitizer
// the read of in[1] is already reported, with this file's line.

#include "overrun_sizes.h"

#ifndef BLOCK
#define BLOCK 256
#endif

extern "C" __global__ void overrun(float* out, const float* in) {
    const int i = static_cast<int>(blockIdx.x) * BLOCK + static_cast<int>(threadIdx.x);
    if (i < LENGTH)
        out[i] = 2.0f * in[i] + 1.0f;
}
