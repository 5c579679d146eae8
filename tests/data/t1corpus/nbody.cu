// All-pairs N-body accelerations. bodies holds n float4 (x, y, z, mass); accel gets n
// float4 (ax, ay, az, 0). Bodies are streamed through shared memory in tiles of
// TILE = block_size_x * shared_fraction bodies (shared_fraction is a float tuning
// parameter: 0.5, 1.0 or 1.5), loaded by the whole block; the inner loop is unrolled
// by unroll_factor, which the conditions make a divisor of TILE.
//
// Geometry (no GlobalSizeType): ceil(n / block_size_x) blocks; threads past n still
// help load the tiles and then write nothing.

#ifndef block_size_x
#define block_size_x 128
#endif
#ifndef shared_fraction
#define shared_fraction 1.0
#endif
#ifndef unroll_factor
#define unroll_factor 1
#endif
#ifndef use_rsqrt
#define use_rsqrt 1
#endif

constexpr int TILE = (int)(block_size_x * shared_fraction);

__global__ void __launch_bounds__(block_size_x)
    nbody_accel(float4 *accel, const float4 *bodies, int n, float softening_sq) {
    __shared__ float4 sh_bodies[TILE];
    const int i = blockIdx.x * block_size_x + threadIdx.x;
    const float4 me = i < n ? bodies[i] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    float ax = 0.0f, ay = 0.0f, az = 0.0f;

    for (int base = 0; base < n; base += TILE) {
        for (int k = threadIdx.x; k < TILE; k += block_size_x) {
            const int j = base + k;
            // Bodies past n get zero mass and add nothing.
            sh_bodies[k] = j < n ? bodies[j] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        }
        __syncthreads();
#pragma unroll unroll_factor
        for (int k = 0; k < TILE; k++) {
            const float4 other = sh_bodies[k];
            const float dx = other.x - me.x;
            const float dy = other.y - me.y;
            const float dz = other.z - me.z;
            const float d2 = dx * dx + dy * dy + dz * dz + softening_sq;
#if use_rsqrt == 1
            const float inv = rsqrtf(d2);
#else
            const float inv = 1.0f / sqrtf(d2);
#endif
            const float s = fabsf(other.w) * inv * inv * inv;
            ax += dx * s;
            ay += dy * s;
            az += dz * s;
        }
        __syncthreads();
    }
    if (i < n)
        accel[i] = make_float4(ax, ay, az, 0.0f);
}
