// 2D convolution, written the way Kernel Tuner's convolution example is: the tuner
// defines block_size_x/y, tile_size_x/y and filter_width/height as macros and copies
// the filter into the __constant__ symbol d_filter. The kernel also takes the filter
// as its third argument (Kernel Tuner passes constant-memory arguments both ways),
// but reads the constant copy.
//
// Geometry (GlobalSizeType OpenCL): ceil(image_width / tile_size_x) x
// ceil(image_height / tile_size_y) threads in blocks of block_size_x x block_size_y,
// so one block covers (block_size_x * tile_size_x) x (block_size_y * tile_size_y)
// output pixels. Every output write and input read is bounds-checked, so a grid
// with extra blocks (e.g. ProblemSize / block_size without the tile) is also safe.

#ifndef image_width
#define image_width 2048
#endif
#ifndef image_height
#define image_height 2048
#endif
#ifndef filter_width
#define filter_width 7
#endif
#ifndef filter_height
#define filter_height 7
#endif
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

#define input_width (image_width + filter_width - 1)
#define input_height (image_height + filter_height - 1)
#define out_tile_w (block_size_x * tile_size_x)
#define out_tile_h (block_size_y * tile_size_y)
#define sh_w (out_tile_w + filter_width - 1)
#define sh_h (out_tile_h + filter_height - 1)

__constant__ float d_filter[filter_width * filter_height];

__global__ void __launch_bounds__(block_size_x * block_size_y)
    convolution_kernel(float *output, const float *__restrict__ input, const float *filter) {
    __shared__ float sh_input[sh_h][sh_w];

    const int tx = threadIdx.x;
    const int ty = threadIdx.y;
    const int x0 = blockIdx.x * out_tile_w;
    const int y0 = blockIdx.y * out_tile_h;

    for (int i = ty; i < sh_h; i += block_size_y) {
        for (int j = tx; j < sh_w; j += block_size_x) {
            const int y = y0 + i;
            const int x = x0 + j;
            sh_input[i][j] = (y < input_height && x < input_width) ? input[y * input_width + x] : 0.0f;
        }
    }
    __syncthreads();

    float sum[tile_size_y][tile_size_x];
#pragma unroll
    for (int ti = 0; ti < tile_size_y; ti++)
#pragma unroll
        for (int tj = 0; tj < tile_size_x; tj++)
            sum[ti][tj] = 0.0f;

#pragma unroll
    for (int i = 0; i < filter_height; i++) {
#pragma unroll
        for (int j = 0; j < filter_width; j++) {
            const float f = d_filter[i * filter_width + j];
#pragma unroll
            for (int ti = 0; ti < tile_size_y; ti++)
#pragma unroll
                for (int tj = 0; tj < tile_size_x; tj++)
                    sum[ti][tj] += sh_input[ty + ti * block_size_y + i][tx + tj * block_size_x + j] * f;
        }
    }

#pragma unroll
    for (int ti = 0; ti < tile_size_y; ti++) {
#pragma unroll
        for (int tj = 0; tj < tile_size_x; tj++) {
            const int y = y0 + ty + ti * block_size_y;
            const int x = x0 + tx + tj * block_size_x;
            if (y < image_height && x < image_width)
                output[y * image_width + x] = sum[ti][tj];
        }
    }
}
