// First pass of a sum reduction (after Kernel Tuner's reduction example): num_blocks
// blocks of block_size_x threads sweep the input with a grid-stride loop, reading
// `vector` (float, float2 or float4) elements, reduce in the block through shared
// memory (or warp shuffles for the last 32 partial sums when use_shuffle = 1), and
// block b writes its partial sum to out_array[b]. out_array holds max(num_blocks).
// n must be a multiple of the vector width (4194304 is).

#ifndef block_size_x
#define block_size_x 256
#endif
#ifndef num_blocks
#define num_blocks 64
#endif
#ifndef vector
#define vector float
#endif
#ifndef use_shuffle
#define use_shuffle 0
#endif
#ifndef loop_unroll
#define loop_unroll 1
#endif

__device__ __forceinline__ float vsum(float v) { return v; }
__device__ __forceinline__ float vsum(float2 v) { return v.x + v.y; }
__device__ __forceinline__ float vsum(float4 v) { return (v.x + v.y) + (v.z + v.w); }

__global__ void sum_floats(float *out_array, const float *in_array, int n) {
    // The grid is num_blocks blocks (GlobalSizeType CUDA); a loader that sizes the grid
    // otherwise launches extra blocks, which must not write past out_array.
    if (blockIdx.x >= num_blocks)
        return;
    __shared__ float sh_mem[block_size_x];
    const int ti = threadIdx.x;
    const int width = sizeof(vector) / sizeof(float);
    const int nv = n / width;
    const vector *in = reinterpret_cast<const vector *>(in_array);

    float sum = 0.0f;
    const int step = block_size_x * num_blocks;
#pragma unroll loop_unroll
    for (int i = blockIdx.x * block_size_x + ti; i < nv; i += step)
        sum += vsum(in[i]);

    sh_mem[ti] = sum;
    __syncthreads();

#if use_shuffle == 1
#pragma unroll
    for (int s = block_size_x / 2; s >= 32; s /= 2) {
        if (ti < s)
            sh_mem[ti] += sh_mem[ti + s];
        __syncthreads();
    }
    if (ti < 32) {
        float v = sh_mem[ti];
#pragma unroll
        for (int offset = 16; offset > 0; offset /= 2)
            v += __shfl_down_sync(0xffffffffu, v, offset);
        if (ti == 0)
            out_array[blockIdx.x] = v;
    }
#else
#pragma unroll
    for (int s = block_size_x / 2; s > 0; s /= 2) {
        if (ti < s)
            sh_mem[ti] += sh_mem[ti + s];
        __syncthreads();
    }
    if (ti == 0)
        out_array[blockIdx.x] = sh_mem[0];
#endif
}
