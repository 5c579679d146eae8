// Not compiled: the space benchmark needs only the problem file.
extern "C" __global__ void gemm() {}
