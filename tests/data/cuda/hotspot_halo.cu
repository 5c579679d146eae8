// The hotspot thermal stencil with temporal tiling, indexed as Kernel Tuner's hotspot benchmark
// indexes it, for the static buffer-edge check (tests/core/spec/tst_launchplan.cpp) and guarded
// runs. One launch advances temporal_tiling_factor time steps: a block stages its tile of
// (block_size_x * tile_size_x) x (block_size_y * tile_size_y) cells plus a halo of
// temporal_tiling_factor cells on each side in shared memory, and each step computes a ring less.
//
// The inputs (temperature and power) carry a halo of max_tfactor cells on each side, so a row of
// them is grid_width + 2 * max_tfactor cells. A launch with a smaller factor reads from a pointer
// moved max_tfactor - temporal_tiling_factor rows and columns in, and checks its reads against the
// inputs' width and height only: hotspot_halo.json, whose inputs have the halo and whose tiles
// divide the grid, reads up to the inputs' last cell and no further; hotspot_halo_small.json,
// whose inputs are sized as the grid alone, reads past them. Where a tile does not divide the
// grid, the last blocks' halo reads run past even the right size by up to max_tfactor -
// temporal_tiling_factor rows (the check is on the moved pointer's coordinates).
//
// A launch computes temporal_tiling_factor time steps, so configs of different factors have
// different outputs: verification against one reference splits by it (run with --no-verify, or
// compare within a factor).

#ifndef kernel_tuner
#define grid_width 1024
#define grid_height 1024
#define block_size_x 32
#define block_size_y 8
#define tile_size_x 1
#define tile_size_y 1
#define temporal_tiling_factor 1
#define max_tfactor 8
#define sh_power 0
#endif

// A block's tile and the halo its time steps consume (unparenthesized, as Kernel Tuner's are: the
// check expands macros as the preprocessor does).
#define tile_width block_size_x * tile_size_x + temporal_tiling_factor * 2
#define tile_height block_size_y * tile_size_y + temporal_tiling_factor * 2

#define input_width (grid_width + max_tfactor * 2)
#define input_height (grid_height + max_tfactor * 2)

#define amb_temp 80.0f

__global__ void calculate_temp(float* power, float* temp, float* temp_dst, const float Rx_1, const float Ry_1,
                               const float Rz_1, const float step_div_cap) {
    // Where this factor's tiles start within the inputs' halo.
    float* power_src = power + (max_tfactor - temporal_tiling_factor) * input_width + max_tfactor -
                       temporal_tiling_factor;
    float* temp_src = temp + (max_tfactor - temporal_tiling_factor) * input_width + max_tfactor -
                      temporal_tiling_factor;

    const int tx = threadIdx.x;
    const int ty = threadIdx.y;

    __shared__ float now[tile_height][tile_width];
    __shared__ float next[tile_height][tile_width];
#if sh_power == 1
    __shared__ float heat[tile_height][tile_width];
#endif

    // The tile and its halo, strided over the block's threads; cells past the inputs are 0.
    for (int j = ty; j < tile_height; j += block_size_y) {
        for (int i = tx; i < tile_width; i += block_size_x) {
            int x = tile_size_x * block_size_x * blockIdx.x + i;
            int y = tile_size_y * block_size_y * blockIdx.y + j;
            if (x < input_width && y < input_height) {
                now[j][i] = temp_src[y * input_width + x];
#if sh_power == 1
                heat[j][i] = power_src[y * input_width + x];
#endif
            } else {
                now[j][i] = 0.0f;
#if sh_power == 1
                heat[j][i] = 0.0f;
#endif
            }
            next[j][i] = now[j][i];
        }
    }
    __syncthreads();

    for (int step = 1; step <= temporal_tiling_factor; step++) {
        for (int j = ty + step; j < tile_height - step; j += block_size_y) {
            for (int i = tx + step; i < tile_width - step; i += block_size_x) {
#if sh_power == 1
                const float p = heat[j][i];
#else
                int x = tile_size_x * block_size_x * blockIdx.x + i;
                int y = tile_size_y * block_size_y * blockIdx.y + j;
                float p = 0.0f;
                if (x < input_width && y < input_height)
                    p = power_src[y * input_width + x];
#endif
                const float t = now[j][i];
                next[j][i] = t + step_div_cap * (p + (now[j + 1][i] + now[j - 1][i] - 2.0f * t) * Ry_1 +
                                                 (now[j][i + 1] + now[j][i - 1] - 2.0f * t) * Rx_1 +
                                                 (amb_temp - t) * Rz_1);
            }
        }
        __syncthreads();
        for (int j = ty + step; j < tile_height - step; j += block_size_y) {
            for (int i = tx + step; i < tile_width - step; i += block_size_x)
                now[j][i] = next[j][i];
        }
        __syncthreads();
    }

    // The tile without its halo: one cell a thread per tile step.
    for (int tj = 0; tj < tile_size_y; tj++) {
        for (int ti = 0; ti < tile_size_x; ti++) {
            int x = tile_size_x * block_size_x * blockIdx.x + ti * block_size_x + tx;
            int y = tile_size_y * block_size_y * blockIdx.y + tj * block_size_y + ty;
            if (x < grid_width && y < grid_height) {
                temp_dst[y * grid_width + x] =
                    now[tj * block_size_y + ty + temporal_tiling_factor][ti * block_size_x + tx + temporal_tiling_factor];
            }
        }
    }
}
