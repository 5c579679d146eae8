// Included by stencil.cu; passed to tune_kernel as the second file of kernel_source.
#define SCALE 2.0f
