// Brute-force incoherent dedispersion (after the AMBER/Kernel Tuner dedispersion kernel).
// output[dm][sample] = sum over channels of input[channel][sample + shift(dm, channel)].
//
// The delay table is replaced by a closed form so the test needs no extra input:
// shift(dm, channel) = (dm * channel) / 64, at most 255 * 255 / 64 = 1016 samples for
// 256 DMs and 256 channels. input holds nr_channels rows of input_stride = nr_samples
// + 1024 samples (256 x 3072 floats), so every read is in bounds.
//
// Geometry (GlobalSizeType CUDA): ceil(nr_samples / (block_size_x * tile_size_x)) x
// ceil(nr_dms / (block_size_y * tile_size_y)) blocks; a thread computes tile_size_x
// samples x tile_size_y DMs, contiguous (tile_stride = 0) or block-strided (1).

#ifndef block_size_x
#define block_size_x 128
#endif
#ifndef block_size_y
#define block_size_y 1
#endif
#ifndef tile_size_x
#define tile_size_x 1
#endif
#ifndef tile_size_y
#define tile_size_y 1
#endif
#ifndef tile_stride_x
#define tile_stride_x 0
#endif
#ifndef tile_stride_y
#define tile_stride_y 0
#endif
#ifndef loop_unroll_factor_channel
#define loop_unroll_factor_channel 0
#endif
#ifndef blocks_per_sm
#define blocks_per_sm 0
#endif

#if blocks_per_sm > 0
#define LAUNCH_BOUNDS __launch_bounds__(block_size_x * block_size_y, blocks_per_sm)
#else
#define LAUNCH_BOUNDS __launch_bounds__(block_size_x * block_size_y)
#endif

__device__ __forceinline__ int dm_shift(int dm, int channel) {
    return (dm * channel) / 64;
}

__global__ void LAUNCH_BOUNDS dedispersion_kernel(float *output, const float *input, int nr_samples, int nr_dms,
                                                  int nr_channels, int input_stride) {
    int sample[tile_size_x];
    int dm[tile_size_y];
#pragma unroll
    for (int i = 0; i < tile_size_x; i++) {
#if tile_stride_x == 1
        sample[i] = blockIdx.x * block_size_x * tile_size_x + threadIdx.x + i * block_size_x;
#else
        sample[i] = (blockIdx.x * block_size_x + threadIdx.x) * tile_size_x + i;
#endif
    }
#pragma unroll
    for (int j = 0; j < tile_size_y; j++) {
#if tile_stride_y == 1
        dm[j] = blockIdx.y * block_size_y * tile_size_y + threadIdx.y + j * block_size_y;
#else
        dm[j] = (blockIdx.y * block_size_y + threadIdx.y) * tile_size_y + j;
#endif
    }

    float sum[tile_size_y][tile_size_x];
#pragma unroll
    for (int j = 0; j < tile_size_y; j++)
#pragma unroll
        for (int i = 0; i < tile_size_x; i++)
            sum[j][i] = 0.0f;

#if loop_unroll_factor_channel > 0
#pragma unroll loop_unroll_factor_channel
#endif
    for (int channel = 0; channel < nr_channels; channel++) {
        const float *row = input + channel * input_stride;
#pragma unroll
        for (int j = 0; j < tile_size_y; j++) {
            if (dm[j] < nr_dms) {
                const int shift = dm_shift(dm[j], channel);
#pragma unroll
                for (int i = 0; i < tile_size_x; i++) {
                    if (sample[i] < nr_samples)
                        sum[j][i] += row[sample[i] + shift];
                }
            }
        }
    }

#pragma unroll
    for (int j = 0; j < tile_size_y; j++)
#pragma unroll
        for (int i = 0; i < tile_size_x; i++)
            if (dm[j] < nr_dms && sample[i] < nr_samples)
                output[dm[j] * nr_samples + sample[i]] = sum[j][i];
}
