// Out-of-place matrix transpose: input is height rows of width floats, output is
// width rows of height floats, output[x * height + y] = input[y * width + x].
// A block of block_size_x x block_size_y threads handles a tile of
// (block_size_x * tile_size_x) columns by (block_size_y * tile_size_y) rows.
// With use_shared = 1 the tile goes through shared memory (use_padding = 1 adds a column to
// avoid bank conflicts) so both the reads and the writes are coalesced; with 0 the
// threads read coalesced and write strided.
//
// Geometry (no GlobalSizeType): ProblemSize [width, height] over GridDivX/GridDivY.

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
#define tile_size_y 4
#endif
#ifndef use_shared
#define use_shared 1
#endif
#ifndef use_padding
#define use_padding 0
#endif

#define TW (block_size_x * tile_size_x)
#define TH (block_size_y * tile_size_y)

__global__ void __launch_bounds__(block_size_x * block_size_y)
    transpose_kernel(float *output, const float *input, int width, int height) {
    const int x0 = blockIdx.x * TW;
    const int y0 = blockIdx.y * TH;
#if use_shared == 1
    __shared__ float tile[TH][TW + use_padding];
#pragma unroll
    for (int i = 0; i < tile_size_y; i++) {
#pragma unroll
        for (int j = 0; j < tile_size_x; j++) {
            const int ly = threadIdx.y + i * block_size_y;
            const int lx = threadIdx.x + j * block_size_x;
            const int y = y0 + ly, x = x0 + lx;
            if (y < height && x < width)
                tile[ly][lx] = input[y * width + x];
        }
    }
    __syncthreads();
    // The output tile is TW rows (input columns) of TH values (input rows); a linear
    // walk over it with the block's threads keeps the writes along a row coalesced.
    const int tid = threadIdx.y * block_size_x + threadIdx.x;
    for (int k = tid; k < TW * TH; k += block_size_x * block_size_y) {
        const int r = k / TH;  // input column within the tile
        const int c = k % TH;  // input row within the tile
        const int x = x0 + r, y = y0 + c;
        if (y < height && x < width)
            output[x * height + y] = tile[c][r];
    }
#else
#pragma unroll
    for (int i = 0; i < tile_size_y; i++) {
#pragma unroll
        for (int j = 0; j < tile_size_x; j++) {
            const int y = y0 + threadIdx.y + i * block_size_y;
            const int x = x0 + threadIdx.x + j * block_size_x;
            if (y < height && x < width)
                output[x * height + y] = input[y * width + x];
        }
    }
#endif
}
