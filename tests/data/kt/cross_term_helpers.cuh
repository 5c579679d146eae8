// Included as <cross_term_helpers.cuh>: found through the script's compiler option -I.
#pragma once

__device__ __forceinline__ double gaussian(double d, double scale) {
    return exp(-d * d / scale);
}
