// A kernel that spills when its registers are capped (--maxrregcount=32): 48 accumulators live
// across a loop, and a local array indexed at run time (a local array's loads and stores, not spills).
extern "C" __global__ void spill(float *out, const float *in, int n, int k) {
    float acc[48];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
#pragma unroll
    for (int j = 0; j < 48; ++j)
        acc[j] = in[i + j * n];
    float table[16];
    for (int j = 0; j < 16; ++j)
        table[j] = in[i * 3 + j] * 2.0f;
    for (int t = 0; t < k; ++t) {
#pragma unroll
        for (int j = 0; j < 48; ++j)
            acc[j] = acc[j] * acc[(j + 5) % 48] + in[t * n + j];
    }
    float s = table[k & 15];
#pragma unroll
    for (int j = 0; j < 48; ++j)
        s += acc[j];
    out[i] = s;
}
