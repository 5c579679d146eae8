// One explicit step of 2D heat diffusion (a 5-point stencil) on a 1024 x 1024 grid, written the
// way Kernel Tuner's tutorials write kernels: the tuning parameters are macros Kernel Tuner
// defines, with defaults for compiling the file on its own kept under #ifndef kernel_tuner, a
// constexpr unroll factor among them, and "#pragma unroll loop_unroll_factor_y" on the tile loop.
// Each thread updates tile_size_x x tile_size_y points, block_size_x (block_size_y) apart.

#ifndef kernel_tuner
#define block_size_x 16
#define block_size_y 16
#define tile_size_x 1
#define tile_size_y 1
const int loop_unroll_factor_y = 1;
#endif

#define nx 1024
#define ny 1024
#define dt 0.225f

__global__ void diffuse_kernel(float *u_new, const float *u) {
    const int x = blockIdx.x * block_size_x * tile_size_x + threadIdx.x;
    const int y = blockIdx.y * block_size_y * tile_size_y + threadIdx.y;

#pragma unroll loop_unroll_factor_y
    for (int ty = 0; ty < tile_size_y; ty++) {
        const int j = y + ty * block_size_y;
#pragma unroll
        for (int tx = 0; tx < tile_size_x; tx++) {
            const int i = x + tx * block_size_x;
            if (i > 0 && j > 0 && i < nx - 1 && j < ny - 1) {
                const float c = u[j * nx + i];
                u_new[j * nx + i] = c + dt * (u[(j + 1) * nx + i] + u[(j - 1) * nx + i] + u[j * nx + i + 1] +
                                              u[j * nx + i - 1] - 4.0f * c);
            } else if (i < nx && j < ny) {
                u_new[j * nx + i] = u[j * nx + i]; // the boundary keeps its value
            }
        }
    }
}
