// A stand-in kernel for tst_spec: the spec tests only check that KernelFile exists.
extern "C" __global__ void sgemm(float* C, const float* A, const float* B, float alpha, int m, int k) {}
