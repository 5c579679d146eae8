// A kernel that fails on purpose, for the GPU test suite: out[i] = 2 * in[i] + 1 over n floats,
// one element per thread, with MODE choosing how it goes wrong. What Tilescope must record:
//
//   MODE 0  correct                                                             -> ok
//   MODE 1  one thread stores 4 TiB past `out` (an unmapped address): the
//           launch fails with CUDA_ERROR_ILLEGAL_ADDRESS, which is sticky and
//           poisons the context, so the worker must be replaced                 -> crashed
//   MODE 2  one thread spins for ever on a volatile flag nobody sets: the
//           launch never completes and the watchdog must kill the worker        -> timeout
//   MODE 3  every element with i % 1000 == 7 gets 2 * in[i] + 1.5 (off by 0.5,
//           far beyond fp32 rounding); the launch itself succeeds               -> wrong_result
//   MODE 4  one thread executes __trap(): the launch fails with
//           CUDA_ERROR_LAUNCH_FAILED, and the context is lost as with MODE 1    -> crashed
//
// Every MODE computes the correct value for every other element, so only the failure differs.
// Seen on the H200 (driver 580, BLOCK 256, N = 2^20): those two error codes, each returned again
// by the next driver call (cuMemAlloc) in the same context; MODE 2 still running after 20 s;
// MODE 3 with 1049 elements off.
// MODE 3 is only detectable against a correct reference: a test must measure a MODE 0 config
// first (the first config that runs without error becomes the worker's reference).
//
// BLOCK (threads per block) only varies the launch; faults.json's condition N % BLOCK == 0 lets
// the grid of N / BLOCK blocks cover N exactly.

#ifndef BLOCK
#define BLOCK 256
#endif
#ifndef MODE
#define MODE 0
#endif

static_assert(MODE >= 0 && MODE <= 4, "MODE must be 0..4");

#if MODE == 2
// Never written by anyone. volatile makes every iteration of the wait below a real load, so
// the compiler can neither hoist the read out of the loop nor treat the loop as free of side
// effects (C++'s forward-progress rule would let it delete an empty infinite loop).
__device__ volatile int gRelease = 0;
#endif

extern "C" __global__ void __launch_bounds__(BLOCK)
    faults(int n, const float* __restrict__ in, float* __restrict__ out) {
    const int i = static_cast<int>(blockIdx.x) * BLOCK + static_cast<int>(threadIdx.x);
    if (i >= n)
        return;
    float v = 2.0f * in[i] + 1.0f;
#if MODE == 1
    // The element index depends on n, a launch argument, so the store cannot be folded away.
    if (i == n / 2)
        out[static_cast<long long>(i) + (1ll << 40)] = v;
#elif MODE == 2
    if (i == n / 2) {
        while (gRelease == 0) {
        }
    }
#elif MODE == 3
    if (i % 1000 == 7)
        v = 2.0f * in[i] + 1.5f;
#elif MODE == 4
    if (i == n / 2)
        __trap();
#endif
    out[i] = v;
}
