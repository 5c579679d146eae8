// 7-point 3D stencil (one Jacobi sweep): on interior points
//   out = c0 * in + c1 * (sum of the 6 face neighbours),
// boundary points are copied. Arrays are nz x ny x nx floats, x fastest.
// A block of block_size_x x block_size_y x block_size_z threads covers
// block_size_z * tile_size_z planes; a thread updates tile_size_z points, block_size_z
// planes apart. use_ldg = 1 reads through the read-only cache.
//
// Geometry (no GlobalSizeType): ProblemSize [nx, ny, nz] over GridDivX/Y/Z.

#ifndef block_size_x
#define block_size_x 64
#endif
#ifndef block_size_y
#define block_size_y 4
#endif
#ifndef block_size_z
#define block_size_z 1
#endif
#ifndef tile_size_z
#define tile_size_z 1
#endif
#ifndef use_ldg
#define use_ldg 0
#endif

#if use_ldg == 1
#define LOAD(p) __ldg(p)
#else
#define LOAD(p) (*(p))
#endif

__global__ void __launch_bounds__(block_size_x * block_size_y * block_size_z)
    stencil7(float *out, const float *__restrict__ in, int nx, int ny, int nz, float c0, float c1) {
    const int x = blockIdx.x * block_size_x + threadIdx.x;
    const int y = blockIdx.y * block_size_y + threadIdx.y;
    const int z0 = blockIdx.z * block_size_z * tile_size_z + threadIdx.z;
    if (x >= nx || y >= ny)
        return;
    const long plane = (long)nx * ny;
#pragma unroll
    for (int t = 0; t < tile_size_z; t++) {
        const int z = z0 + t * block_size_z;
        if (z >= nz)
            break;
        const long idx = z * plane + (long)y * nx + x;
        if (x == 0 || y == 0 || z == 0 || x == nx - 1 || y == ny - 1 || z == nz - 1) {
            out[idx] = LOAD(in + idx);
        } else {
            const float sum = LOAD(in + idx - 1) + LOAD(in + idx + 1) + LOAD(in + idx - nx) + LOAD(in + idx + nx) +
                              LOAD(in + idx - plane) + LOAD(in + idx + plane);
            out[idx] = c0 * LOAD(in + idx) + c1 * sum;
        }
    }
}
