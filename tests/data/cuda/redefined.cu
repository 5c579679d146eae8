// A kernel that redefines one of its tuning parameters for every config: its default for
// compiling the file on its own is not guarded with #ifndef kernel_tuner, so tile_size is 4
// whatever the config says, while block_size_x, guarded, follows the config.

#ifndef kernel_tuner
#define block_size_x 128
#endif
#define tile_size 4

extern "C" __global__ void scale(float *out, const float *in, int n) {
    const int first = (blockIdx.x * block_size_x + threadIdx.x) * tile_size;
    for (int t = 0; t < tile_size; t++) {
        if (first + t < n)
            out[first + t] = 2.0f * in[first + t];
    }
}
