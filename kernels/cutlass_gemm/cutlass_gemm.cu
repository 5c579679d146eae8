// A bf16 GEMM built from CUTLASS 3.x's collective builders for Hopper (sm_90a), tuned over its
// template parameters: D = A * B^T, A M x K row-major, B N x K row-major (K-major, "TN"), D M x N
// row-major, fp32 accumulation. Compiled by nvcc ("Tilescope": {"Compiler": "nvcc"}) with the
// headers of the CUTLASS in $CUTLASS_DIR/include; nothing of CUTLASS is kept here.
//
// Tuning parameters (defines, as every Tilescope kernel gets them):
//   TILE_M, TILE_N   the CTA's tile (TILE_K is 64: one 128-byte swizzle atom of bf16)
//   CLUSTER_M, CLUSTER_N   the thread block cluster (A is multicast along N, B along M)
//   STAGES           the mainloop's pipeline stages, 0 for CUTLASS's StageCountAuto
//   SCHEDULE         0 KernelTmaWarpSpecializedCooperative, 1 KernelTmaWarpSpecializedPingpong
//   RASTER           the persistent tile scheduler's order: 0 along M, 1 along N
//   SWIZZLE          the scheduler's max swizzle size (1, 2, 4, 8)
//   EPILOGUE         0: D stored from registers (NoSmemWarpSpecialized); 1: D staged in shared memory
//                    and stored by TMA (TmaWarpSpecialized[Cooperative], CUTLASS's default for Hopper).
//
// How it runs as a plain kernel. CUTLASS's kernels take one Params struct that the host builds,
// with TMA descriptors in it, and read the descriptors where the Params lie (kernel parameters,
// or global memory). The worker launches kernels with the T1 Arguments, and builds TMA
// descriptors of its own (TensorMap arguments). So cutlass_gemm below is an extern "C" kernel
// taking the problem's arguments: its first thread builds the Params that CUTLASS's host code
// would (the mainloop's TMA copies with the worker's descriptors in them, the epilogue's
// pointers, the persistent scheduler's divisors) in a global slot of its own CTA, makes the
// descriptors visible to the TMA unit (the tensormap proxy fences), and the CTA then runs
// CUTLASS's GemmUniversal kernel (its producer warp's TMA loads, the collective mainloop's
// WGMMA, the epilogue) on them. The descriptors the worker builds must be the ones CUTLASS's
// make_tma_copy would: the same rank (K, M or N, and a batch of 1), extents and box, with the
// 128-byte swizzle; the box is the tile over the CTAs that share it by multicast, so the problem
// passes one map per box size, and the checks below hold that at compile time. The TMA epilogue
// stores D through the worker's mapD_64 or mapD_128: rank 3 (N, M, batch), a box of the epilogue
// tile (32 values of N by 128 rows for the cooperative schedule or 64 for ping-pong), the 64-byte
// swizzle.

#include <cuda.h>

#include <new>

#include <cute/tensor.hpp>
#include <cutlass/cutlass.h>
#include <cutlass/epilogue/collective/collective_builder.hpp>
#include <cutlass/gemm/collective/collective_builder.hpp>
#include <cutlass/gemm/dispatch_policy.hpp>
#include <cutlass/gemm/kernel/gemm_universal.hpp>

#ifndef kernel_tuner // defaults for reading the file alone
#define TILE_M 128
#define TILE_N 256
#define CLUSTER_M 2
#define CLUSTER_N 1
#define STAGES 0
#define SCHEDULE 0
#define RASTER 0
#define SWIZZLE 1
#define EPILOGUE 0
#endif

namespace tilescope_gemm {

using namespace cute;

using ElementA = cutlass::bfloat16_t;
using ElementB = cutlass::bfloat16_t;
using ElementD = cutlass::bfloat16_t;
using ElementAccumulator = float;
using LayoutA = cutlass::layout::RowMajor;    // M x K, K contiguous
using LayoutB = cutlass::layout::ColumnMajor; // K x N in BLAS terms: N x K, K contiguous
using LayoutD = cutlass::layout::RowMajor;
constexpr int kAlignment = 128 / cutlass::sizeof_bits<ElementA>::value; // 16-byte TMA rows

using TileShape = Shape<Int<TILE_M>, Int<TILE_N>, _64>;
using ClusterShape = Shape<Int<CLUSTER_M>, Int<CLUSTER_N>, _1>;
using KernelSchedule = cute::conditional_t<SCHEDULE == 0, cutlass::gemm::KernelTmaWarpSpecializedCooperative,
                                           cutlass::gemm::KernelTmaWarpSpecializedPingpong>;
// C is void: D = A * B. EPILOGUE 1 stages D in shared memory for TMA stores; EPILOGUE 0 stores it
// from registers, and its Params are plain pointers.
using EpilogueSchedule =
    cute::conditional_t<EPILOGUE == 0, cutlass::epilogue::NoSmemWarpSpecialized,
                        cute::conditional_t<SCHEDULE == 0, cutlass::epilogue::TmaWarpSpecializedCooperative,
                                            cutlass::epilogue::TmaWarpSpecialized>>;

using CollectiveEpilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,
    cutlass::epilogue::collective::EpilogueTileAuto, ElementAccumulator, ElementAccumulator, void, LayoutD, kAlignment,
    ElementD, LayoutD, kAlignment, EpilogueSchedule>::CollectiveOp;

using StageCount = cute::conditional_t<STAGES == 0,
                                       cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(
                                           sizeof(typename CollectiveEpilogue::SharedStorage))>,
                                       cutlass::gemm::collective::StageCount<(STAGES == 0 ? 2 : STAGES)>>;

using CollectiveMainloop = typename cutlass::gemm::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, ElementA, LayoutA, kAlignment, ElementB, LayoutB, kAlignment,
    ElementAccumulator, TileShape, ClusterShape, StageCount, KernelSchedule>::CollectiveOp;

using GemmKernel =
    cutlass::gemm::kernel::GemmUniversal<Shape<int, int, int, int>, CollectiveMainloop, CollectiveEpilogue>;
using Params = typename GemmKernel::Params;
using Scheduler = typename GemmKernel::TileScheduler;
using SchedulerParams = typename Scheduler::Params;

// The shared memory the kernel needs (the problem's SharedMemory gives the most a block can have).
static_assert(GemmKernel::SharedStorageSize <= 227 * 1024, "the stages do not fit in shared memory");

// What CUTLASS's make_tma_copy would encode for A and B, read from the types it makes: a
// descriptor of rank 3 (K, M or N, L) whose box is (64, the tile's rows over the CTAs that share
// the tile by multicast, 1), with a 128-byte swizzle. The worker's maps are held to it.
using TmaA = typename CollectiveMainloop::Params::TMA_A;
using TmaB = typename CollectiveMainloop::Params::TMA_B;
template <class Tma>
using AuxParams = decltype(Tma{}.aux_params_);
template <class Tma>
using GmemBasis = cute::remove_cvref_t<typename AuxParams<Tma>::TmaGmemBasis>;
template <class Tma>
using TmaSwizzle = cute::remove_cvref_t<typename AuxParams<Tma>::TmaSwizzle>;
static_assert(decltype(rank(GmemBasis<TmaA>{}))::value == 3 && decltype(rank(GmemBasis<TmaB>{}))::value == 3,
              "CUTLASS's TMA for A and B is not of rank 3 (K, rows, batch)");
static_assert(decltype(size<0>(GmemBasis<TmaA>{}))::value == 64 && decltype(size<0>(GmemBasis<TmaB>{}))::value == 64,
              "CUTLASS's TMA box is not 64 values of K");
static_assert(decltype(size<1>(GmemBasis<TmaA>{}))::value == TILE_M &&
                  decltype(size<1>(GmemBasis<TmaB>{}))::value == TILE_N,
              "CUTLASS's TMA box does not span the tile's rows");
static_assert(cute::is_same_v<TmaSwizzle<TmaA>, Swizzle<3, 4, 3>> &&
                  cute::is_same_v<TmaSwizzle<TmaB>, Swizzle<3, 4, 3>>,
              "CUTLASS's shared memory layout is not the 128-byte swizzle the tensor maps have");
// The coordinates CUTLASS issues come from static strides only: nothing of the host's make_tma_copy
// is missing from a default-made copy but the descriptor.
static_assert(is_static<typename AuxParams<TmaA>::GmemStrides>::value &&
                  is_static<typename AuxParams<TmaB>::GmemStrides>::value,
              "CUTLASS's TMA copies carry run-time parameters");

// The TMA epilogue's store of D, held to the worker's mapD in the same way: rank 3 (N, M, L),
// a box of the epilogue tile, the 64-byte swizzle.
constexpr int kEpilogueM = SCHEDULE == 0 ? (TILE_M < 128 ? TILE_M : 128) : (TILE_M < 64 ? TILE_M : 64);
#if EPILOGUE == 1
using TmaD = typename CollectiveEpilogue::Params::TMA_D;
static_assert(decltype(rank(GmemBasis<TmaD>{}))::value == 3, "CUTLASS's TMA for D is not of rank 3 (N, M, batch)");
static_assert(decltype(size<0>(GmemBasis<TmaD>{}))::value == 32 &&
                  decltype(size<1>(GmemBasis<TmaD>{}))::value == kEpilogueM,
              "CUTLASS's TMA box of D is not the epilogue tile mapD has");
static_assert(cute::is_same_v<TmaSwizzle<TmaD>, Swizzle<2, 4, 3>>,
              "CUTLASS's shared memory layout of D is not the 64-byte swizzle mapD has");
static_assert(is_static<typename AuxParams<TmaD>::GmemStrides>::value,
              "CUTLASS's TMA store carries run-time parameters");
#endif

constexpr int kBoxA = TILE_M / CLUSTER_N; // A's tile is loaded in CLUSTER_N slices, one per CTA, and multicast
constexpr int kBoxB = TILE_N / CLUSTER_M;
// One Params per CTA: TMA descriptors must lie in global, constant or parameter memory. A
// persistent grid has at most a CTA per SM.
constexpr int kMaxCtas = 1024;
// Raw bytes: a __device__ variable cannot have a constructor that runs.
__device__ alignas(alignof(Params)) unsigned char g_params[kMaxCtas][sizeof(Params)];

// PersistentTileSchedulerSm90Params::initialize, host code in CUTLASS, for the device.
__device__ SchedulerParams schedulerParams(int m, int n) {
    using RasterOrder = typename SchedulerParams::RasterOrder;
    SchedulerParams p;
    const dim3 blocks = SchedulerParams::get_tiled_cta_shape_mnl(cutlass::gemm::BatchedGemmCoord(m, n, 1, 1),
                                                                 cutlass::gemm::GemmCoord(TILE_M, TILE_N, 64),
                                                                 cutlass::gemm::GemmCoord(CLUSTER_M, CLUSTER_N, 1));
    const int logSwizzle = SchedulerParams::get_log_swizzle_size(blocks.x, blocks.y, SWIZZLE);
    const auto blocksM = cutlass::round_up(blocks.x, (1 << logSwizzle) * CLUSTER_M);
    const auto blocksN = cutlass::round_up(blocks.y, (1 << logSwizzle) * CLUSTER_N);
    p.problem_tiles_m_ = blocksM / CLUSTER_M;
    p.problem_tiles_n_ = blocksN / CLUSTER_N;
    p.problem_tiles_l_ = blocks.z;
    p.cluster_shape_m_ = CLUSTER_M;
    p.cluster_shape_n_ = CLUSTER_N;
    p.blocks_per_problem_ = uint64_t(blocksM) * blocksN * blocks.z;
    p.log_swizzle_size_ = logSwizzle;
    p.raster_order_ = RASTER == 1 ? RasterOrder::AlongN : RasterOrder::AlongM;
    p.divmod_batch_ = cutlass::FastDivmodU64(uint64_t(blocksM) * blocksN);
    if (RASTER == 1) {
        p.divmod_cluster_shape_major_ = cutlass::FastDivmodU64Pow2(CLUSTER_N);
        p.divmod_cluster_shape_minor_ = cutlass::FastDivmodU64Pow2(CLUSTER_M);
        p.divmod_cluster_blk_major_ = cutlass::FastDivmodU64(blocksN / CLUSTER_N);
    } else {
        p.divmod_cluster_shape_major_ = cutlass::FastDivmodU64Pow2(CLUSTER_M);
        p.divmod_cluster_shape_minor_ = cutlass::FastDivmodU64Pow2(CLUSTER_N);
        p.divmod_cluster_blk_major_ = cutlass::FastDivmodU64(blocksM / CLUSTER_M);
    }
    return p;
}

// GemmKernel::to_underlying_arguments, host code in CUTLASS, for the device.
__device__ void buildParams(Params& p, const CUtensorMap& mapA, const CUtensorMap& mapB, const CUtensorMap& mapD,
                            ElementD* d, int m, int n, int k) {
    p.mode = cutlass::gemm::GemmUniversalMode::kGemm;
    p.problem_shape = make_shape(m, n, k, 1);
    p.mainloop = typename CollectiveMainloop::Params{}; // the transaction bytes: static
    p.mainloop.tma_load_a.tma_desc_ = mapA;
    p.mainloop.tma_load_b.tma_desc_ = mapB;
    typename CollectiveEpilogue::Params epilogue{};
#if EPILOGUE == 1
    (void)d;
    // D = alpha * acc + beta * C with alpha 1 and beta 0, written into the visitor tree's Params (what
    // LinearCombination's host-side Arguments become): op_0 beta, op_1 C, op_2 the node alpha * acc
    // (its op_0 alpha), op_3 the multiply-add; the scalar leaves are Sm90ScalarBroadcast's Params.
    // Built through the tree's to_underlying_arguments in device code, they came out all zero on an
    // H100 (alpha 0: D was signed zeros), so the two scalars are set where the kernel reads them.
    using Scalar = typename cutlass::epilogue::fusion::Sm90ScalarBroadcast<ElementAccumulator,
                                                                           Stride<_0, _0, int64_t>>::Params;
    static_assert(cute::is_same_v<decltype(epilogue.thread.op_0), Scalar> &&
                      cute::is_same_v<decltype(epilogue.thread.op_2.op_0), Scalar>,
                  "CUTLASS's LinearCombination is not the tree (beta, C, (alpha, acc)) this kernel fills");
    epilogue.thread.op_0 = Scalar{};
    epilogue.thread.op_0.scalars[0] = ElementAccumulator(0);
    epilogue.thread.op_2.op_0 = Scalar{};
    epilogue.thread.op_2.op_0.scalars[0] = ElementAccumulator(1);
    epilogue.tma_store_d.tma_desc_ = mapD; // C is void: its load is never issued, nor its descriptor read
#else
    (void)mapD;
    epilogue.thread = {ElementAccumulator(1), ElementAccumulator(0)}; // alpha, beta
    epilogue.ptr_C = nullptr;
    epilogue.ptr_D = d;
    epilogue.dD = typename CollectiveEpilogue::StrideD{int64_t(n), Int<1>{}, int64_t(m) * n}; // row-major, packed
    epilogue.dC = epilogue.dD;
#endif
    p.epilogue = epilogue;
    p.hw_info = cutlass::KernelHardwareInfo{0, int(gridDim.x * gridDim.y * gridDim.z), 0};
    p.scheduler = schedulerParams(m, n);
}

} // namespace tilescope_gemm

// The launch: the block is GemmKernel::MaxThreadsPerBlock threads, the grid persistent (at most a
// CTA per SM, in clusters of CLUSTER_M x CLUSTER_N laid out as CUTLASS's get_grid_shape lays
// them), the dynamic shared memory at least GemmKernel::SharedStorageSize. mapA_<box> and
// mapB_<box> are the worker's TMA descriptors of A and B for each box size the space uses, mapD_<rows>
// those of D for the TMA epilogue (unread with EPILOGUE 0).
extern "C" __global__ void __cluster_dims__(CLUSTER_M, CLUSTER_N, 1)
    __launch_bounds__(tilescope_gemm::GemmKernel::MaxThreadsPerBlock, 1)
        cutlass_gemm(int M, int N, int K, const cutlass::bfloat16_t* A, const cutlass::bfloat16_t* B,
                     cutlass::bfloat16_t* D, const __grid_constant__ CUtensorMap mapA_32,
                     const __grid_constant__ CUtensorMap mapA_64, const __grid_constant__ CUtensorMap mapA_128,
                     const __grid_constant__ CUtensorMap mapA_256, const __grid_constant__ CUtensorMap mapB_32,
                     const __grid_constant__ CUtensorMap mapB_64, const __grid_constant__ CUtensorMap mapB_128,
                     const __grid_constant__ CUtensorMap mapB_256, const __grid_constant__ CUtensorMap mapD_64,
                     const __grid_constant__ CUtensorMap mapD_128) {
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 900)
    using namespace tilescope_gemm;
    (void)A;
    (void)B;
    static_assert(kBoxA == 32 || kBoxA == 64 || kBoxA == 128 || kBoxA == 256, "no tensor map of A's box");
    static_assert(kBoxB == 32 || kBoxB == 64 || kBoxB == 128 || kBoxB == 256, "no tensor map of B's box");
    const CUtensorMap& mapA = kBoxA == 32 ? mapA_32 : kBoxA == 64 ? mapA_64 : kBoxA == 128 ? mapA_128 : mapA_256;
    const CUtensorMap& mapB = kBoxB == 32 ? mapB_32 : kBoxB == 64 ? mapB_64 : kBoxB == 128 ? mapB_128 : mapB_256;
    static_assert(kEpilogueM == 64 || kEpilogueM == 128, "no tensor map of D's box");
    const CUtensorMap& mapD = kEpilogueM == 64 ? mapD_64 : mapD_128;
    const unsigned cta = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    if (cta >= unsigned(kMaxCtas))
        __trap(); // a grid the problem's GlobalSize should never give
    Params& params = *reinterpret_cast<Params*>(g_params[cta]);
    if (threadIdx.x == 0) {
        new (&params) Params{};
        buildParams(params, mapA, mapB, mapD, D, M, N, K);
        // The descriptors were written as data; the TMA unit reads them through the tensormap proxy.
        cute::tma_descriptor_fence_release();
    }
    __syncthreads();
    cute::tma_descriptor_fence_acquire(&params.mainloop.tma_load_a.tma_desc_);
    cute::tma_descriptor_fence_acquire(&params.mainloop.tma_load_b.tma_desc_);
#if EPILOGUE == 1
    cute::tma_descriptor_fence_acquire(&params.epilogue.tma_store_d.tma_desc_);
#endif
    extern __shared__ char smem[];
    GemmKernel gemm;
    gemm(params, smem);
#endif
}
