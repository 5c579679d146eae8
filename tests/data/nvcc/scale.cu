// A kernel NVRTC cannot compile: a host function beside it uses the C++ standard library's
// containers, which NVRTC has no headers for. The kernel is a template instantiated from the
// problem's KernelName.
#include <numeric>
#include <vector>

template <typename T, int Block>
__global__ void __launch_bounds__(Block) scale(T* x, T factor, int n) {
    const int i = blockIdx.x * Block + threadIdx.x;
    if (i < n)
        x[i] *= factor;
}

// Host code: what nvcc compiles and NVRTC cannot.
inline int hostSum(const std::vector<int>& values) {
    return std::accumulate(values.begin(), values.end(), 0);
}
