// Dense matrix-vector product y = A x in OpenCL C (row-major A, nrows x ncols).
// Work-item g computes rows g * work_per_thread ... g * work_per_thread + work_per_thread - 1.
// With use_local = 1 the work-group stages x in chunks of block_size_x floats in local
// memory; every work-item takes part in the staging and the barriers, also those past
// the last row.
//
// Geometry (GlobalSizeType OpenCL): ceil(nrows / work_per_thread) work-items (rounded
// up to whole work-groups by the host) in work-groups of block_size_x.

#ifndef block_size_x
#define block_size_x 64
#endif
#ifndef work_per_thread
#define work_per_thread 1
#endif
#ifndef use_local
#define use_local 0
#endif

__kernel void matvec(__global float *y, __global const float *A, __global const float *x, const int nrows,
                     const int ncols) {
    const int row0 = get_global_id(0) * work_per_thread;
    float acc[work_per_thread];
    for (int r = 0; r < work_per_thread; r++)
        acc[r] = 0.0f;

#if use_local == 1
    __local float x_chunk[block_size_x];
    const int lid = get_local_id(0);
    for (int c0 = 0; c0 < ncols; c0 += block_size_x) {
        x_chunk[lid] = (c0 + lid < ncols) ? x[c0 + lid] : 0.0f;
        barrier(CLK_LOCAL_MEM_FENCE);
        const int len = min(block_size_x, ncols - c0);
        for (int r = 0; r < work_per_thread; r++) {
            const int row = row0 + r;
            if (row < nrows) {
                __global const float *a = A + (long)row * ncols + c0;
                for (int c = 0; c < len; c++)
                    acc[r] += a[c] * x_chunk[c];
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
#else
    for (int r = 0; r < work_per_thread; r++) {
        const int row = row0 + r;
        if (row < nrows) {
            __global const float *a = A + (long)row * ncols;
            for (int c = 0; c < ncols; c++)
                acc[r] += a[c] * x[c];
        }
    }
#endif

    for (int r = 0; r < work_per_thread; r++) {
        const int row = row0 + r;
        if (row < nrows)
            y[row] = acc[r];
    }
}
