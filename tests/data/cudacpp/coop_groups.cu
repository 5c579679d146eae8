// Each element replaced by the mean of its tile of tile_size threads, reduced with cooperative
// groups (cg::reduce over a thread_block_tile): 1.0 everywhere for an input of ones.
//
// Geometry: ProblemSize[0] / block_size_x blocks of block_size_x threads (n is a multiple).

#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

namespace cg = cooperative_groups;

#ifndef tile_size
#define tile_size 32
#endif

extern "C" __global__ void tile_mean(float* out, const float* in, int n) {
    const cg::thread_block block = cg::this_thread_block();
    const cg::thread_block_tile<tile_size> tile = cg::tiled_partition<tile_size>(block);
    const int i = blockIdx.x * block_size_x + threadIdx.x;
    const float v = i < n ? in[i] : 0.0f;
    const float sum = cg::reduce(tile, v, cg::plus<float>());
    if (i < n)
        out[i] = sum / tile.size();
}
