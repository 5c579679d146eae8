// One time step of the Rodinia hotspot thermal simulation (5-point stencil), in
// the style of Kernel Tuner's hotspot benchmark. A block of block_size_x x block_size_y
// threads updates a (block_size_x * tile_size_x) x (block_size_y * tile_size_y) tile;
// the temperature tile plus a one-cell halo is staged in shared memory, and with
// sh_power = 1 the power tile is too. Cells on the chip's edge reuse their own value
// for the missing neighbour.
//
// Geometry (no GlobalSizeType): ProblemSize / GridDiv, i.e. ceil(cols / (block_size_x *
// tile_size_x)) x ceil(rows / (block_size_y * tile_size_y)) blocks; all accesses are
// bounds-checked.

#ifndef block_size_x
#define block_size_x 32
#endif
#ifndef block_size_y
#define block_size_y 8
#endif
#ifndef tile_size_x
#define tile_size_x 1
#endif
#ifndef tile_size_y
#define tile_size_y 1
#endif
#ifndef sh_power
#define sh_power 0
#endif
#ifndef blocks_per_sm
#define blocks_per_sm 0
#endif

#define tile_w (block_size_x * tile_size_x)
#define tile_h (block_size_y * tile_size_y)

#if blocks_per_sm > 0
#define LAUNCH_BOUNDS __launch_bounds__(block_size_x * block_size_y, blocks_per_sm)
#else
#define LAUNCH_BOUNDS __launch_bounds__(block_size_x * block_size_y)
#endif

__device__ __forceinline__ int clamp_index(int v, int hi) {
    return v < 0 ? 0 : (v > hi ? hi : v);
}

__global__ void LAUNCH_BOUNDS calculate_temp(float *temp_dst, const float *temp_src, const float *power,
                                             int grid_cols, int grid_rows, float step_div_cap, float Rx_1,
                                             float Ry_1, float Rz_1, float amb_temp) {
    __shared__ float sh_temp[tile_h + 2][tile_w + 2];
#if sh_power == 1
    __shared__ float sh_pow[tile_h][tile_w];
#endif

    const int x0 = blockIdx.x * tile_w;
    const int y0 = blockIdx.y * tile_h;

    for (int i = threadIdx.y; i < tile_h + 2; i += block_size_y) {
        for (int j = threadIdx.x; j < tile_w + 2; j += block_size_x) {
            const int y = clamp_index(y0 + i - 1, grid_rows - 1);
            const int x = clamp_index(x0 + j - 1, grid_cols - 1);
            sh_temp[i][j] = temp_src[y * grid_cols + x];
        }
    }
#if sh_power == 1
    for (int i = threadIdx.y; i < tile_h; i += block_size_y) {
        for (int j = threadIdx.x; j < tile_w; j += block_size_x) {
            const int y = y0 + i, x = x0 + j;
            sh_pow[i][j] = (y < grid_rows && x < grid_cols) ? power[y * grid_cols + x] : 0.0f;
        }
    }
#endif
    __syncthreads();

#pragma unroll
    for (int ti = 0; ti < tile_size_y; ti++) {
#pragma unroll
        for (int tj = 0; tj < tile_size_x; tj++) {
            const int ly = threadIdx.y + ti * block_size_y;
            const int lx = threadIdx.x + tj * block_size_x;
            const int y = y0 + ly;
            const int x = x0 + lx;
            if (y < grid_rows && x < grid_cols) {
                const float t = sh_temp[ly + 1][lx + 1];
                // Clamped loads make an edge cell its own neighbour; the stencil then sees no flow there.
                const float n = sh_temp[ly][lx + 1];
                const float s = sh_temp[ly + 2][lx + 1];
                const float w = sh_temp[ly + 1][lx];
                const float e = sh_temp[ly + 1][lx + 2];
#if sh_power == 1
                const float p = sh_pow[ly][lx];
#else
                const float p = power[y * grid_cols + x];
#endif
                temp_dst[y * grid_cols + x] = t + step_div_cap * (p + (s + n - 2.0f * t) * Ry_1 +
                                                                  (e + w - 2.0f * t) * Rx_1 + (amb_temp - t) * Rz_1);
            }
        }
    }
}
