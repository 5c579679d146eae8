// A 2D convolution in Kernel Tuner's style: the filter in constant memory, each thread
// computing tile_size_x x tile_size_y outputs, defaults kept under #ifndef kernel_tuner.
#ifndef kernel_tuner
#define block_size_x 16
#define block_size_y 16
#define tile_size_x 1
#define tile_size_y 1
#endif

#define filter_width 5
#define filter_height 5

__constant__ float d_filter[filter_width * filter_height];

__global__ void convolution_kernel(float *output, const float *input, const float *filter, int width, int height) {
    int x0 = blockIdx.x * block_size_x * tile_size_x + threadIdx.x;
    int y0 = blockIdx.y * block_size_y * tile_size_y + threadIdx.y;
    int input_width = width + filter_width - 1;
    for (int ty = 0; ty < tile_size_y; ty++) {
        for (int tx = 0; tx < tile_size_x; tx++) {
            int x = x0 + tx * block_size_x;
            int y = y0 + ty * block_size_y;
            if (x < width && y < height) {
                float sum = 0.0f;
                for (int i = 0; i < filter_height; i++) {
                    for (int j = 0; j < filter_width; j++) {
                        sum += input[(y + i) * input_width + x + j] * d_filter[i * filter_width + j];
                    }
                }
                output[y * width + x] = sum;
            }
        }
    }
}
