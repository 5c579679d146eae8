// 2D convolution with a filter in constant memory (Kernel Tuner style).
// Tuning parameters arrive as macros (-Dname=value). Each thread block computes a
// (block_size_x * tile_size_x) x (block_size_y * tile_size_y) tile of the output,
// staging the input tile plus its halo in shared memory.
//
// input_image is (image_height + filter_height - 1) rows of (image_width + filter_width - 1)
// floats; the JSON allocates it for the largest filter, so every filter size fits.

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
#ifndef use_padding
#define use_padding 0
#endif
#ifndef read_only
#define read_only 0
#endif

#define max_filter_size 49  // 7 x 7, the largest filter in the search space

#define out_tile_w (block_size_x * tile_size_x)
#define out_tile_h (block_size_y * tile_size_y)
#define sh_w (out_tile_w + filter_width - 1 + use_padding)
#define sh_h (out_tile_h + filter_height - 1)

#if read_only == 1
#define LOAD(p) __ldg(p)
#else
#define LOAD(p) (*(p))
#endif

__constant__ float d_filter[max_filter_size];

__global__ void __launch_bounds__(block_size_x * block_size_y)
    convolution_kernel(float *output_image, const float *__restrict__ input_image, const float *filter,
                       int image_width, int image_height) {
    __shared__ float sh_input[sh_h][sh_w];

    const int tx = threadIdx.x;
    const int ty = threadIdx.y;
    const int x0 = blockIdx.x * out_tile_w;
    const int y0 = blockIdx.y * out_tile_h;
    const int input_width = image_width + filter_width - 1;
    const int input_height = image_height + filter_height - 1;

    // Stage the input tile and its halo; outside the image reads as zero.
    for (int i = ty; i < sh_h; i += block_size_y) {
        for (int j = tx; j < sh_w - use_padding; j += block_size_x) {
            const int y = y0 + i;
            const int x = x0 + j;
            float v = 0.0f;
            if (y < input_height && x < input_width)
                v = LOAD(input_image + y * input_width + x);
            sh_input[i][j] = v;
        }
    }
    __syncthreads();

#pragma unroll
    for (int ti = 0; ti < tile_size_y; ti++) {
#pragma unroll
        for (int tj = 0; tj < tile_size_x; tj++) {
            const int ly = ty + ti * block_size_y;
            const int lx = tx + tj * block_size_x;
            const int y = y0 + ly;
            const int x = x0 + lx;
            if (y < image_height && x < image_width) {
                float sum = 0.0f;
#pragma unroll
                for (int i = 0; i < filter_height; i++)
#pragma unroll
                    for (int j = 0; j < filter_width; j++)
                        sum += sh_input[ly + i][lx + j] * d_filter[i * filter_width + j];
                output_image[y * image_width + x] = sum;
            }
        }
    }
}
