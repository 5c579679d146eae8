// A CLBlast-style SGEMM in CUDA: C = alpha * A^T B + beta * C with
// agm[k * M + m], bgm[k * N + n] and cgm[n * M + m] (all column-major, as CLBlast's
// Xgemm sees them after its pre-processing kernels).
//
// Parameters (macros, CLBlast names): a block of MDIMC x NDIMC threads computes an
// MWG x NWG tile of C, looping over K in steps of KWG (unrolled by KWI). A thread owns
// (MWG / MDIMC) x (NWG / NDIMC) results; with STRM/STRN = 0 its rows/columns are
// contiguous, with 1 they are strided in units of VWM/VWN. SA/SB stage the A/B tiles
// in shared memory, loaded by the threads re-shaped as MDIMA x (MDIMC*NDIMC/MDIMA)
// and NDIMB x (MDIMC*NDIMC/NDIMB).
//
// Geometry (Language CUDA, GlobalSizeType OpenCL): M * MDIMC / MWG x N * NDIMC / NWG
// threads in blocks of MDIMC x NDIMC, i.e. M / MWG x N / NWG blocks. The conditions make
// MWG a multiple of MDIMC * VWM (and likewise for N), so the index maps below are
// bijections onto the tile; every global access is still bounds-checked.

#ifndef MWG
#define MWG 64
#endif
#ifndef NWG
#define NWG 64
#endif
#ifndef KWG
#define KWG 16
#endif
#ifndef MDIMC
#define MDIMC 16
#endif
#ifndef NDIMC
#define NDIMC 16
#endif
#ifndef MDIMA
#define MDIMA 16
#endif
#ifndef NDIMB
#define NDIMB 16
#endif
#ifndef KWI
#define KWI 2
#endif
#ifndef VWM
#define VWM 1
#endif
#ifndef VWN
#define VWN 1
#endif
#ifndef STRM
#define STRM 0
#endif
#ifndef STRN
#define STRN 0
#endif
#ifndef SA
#define SA 0
#endif
#ifndef SB
#define SB 0
#endif

#define MWI (MWG / MDIMC)
#define NWI (NWG / NDIMC)
#define THREADS (MDIMC * NDIMC)
#define KDIMA (THREADS / MDIMA)
#define KDIMB (THREADS / NDIMB)

// Row (within the MWG tile) of the thread's mi-th result.
__device__ __forceinline__ int tile_row(int tid_m, int mi) {
#if STRM == 0
    return tid_m * MWI + mi;
#else
    return (mi / VWM) * (MDIMC * VWM) + tid_m * VWM + (mi % VWM);
#endif
}

__device__ __forceinline__ int tile_col(int tid_n, int ni) {
#if STRN == 0
    return tid_n * NWI + ni;
#else
    return (ni / VWN) * (NDIMC * VWN) + tid_n * VWN + (ni % VWN);
#endif
}

extern "C" __global__ void __launch_bounds__(THREADS)
    Xgemm(const int kSizeM, const int kSizeN, const int kSizeK, const float alpha, const float beta,
          const float *__restrict__ agm, const float *__restrict__ bgm, float *cgm) {
    const int tid_m = threadIdx.x;
    const int tid_n = threadIdx.y;
#if SA == 1 || SB == 1
    const int tid = tid_n * MDIMC + tid_m;  // flat id for the cooperative tile loads
#endif
    const int m0 = blockIdx.x * MWG;
    const int n0 = blockIdx.y * NWG;

#if SA == 1
    __shared__ float alm[KWG][MWG];
#endif
#if SB == 1
    __shared__ float blm[KWG][NWG];
#endif

    float acc[MWI][NWI];
#pragma unroll
    for (int mi = 0; mi < MWI; mi++)
#pragma unroll
        for (int ni = 0; ni < NWI; ni++)
            acc[mi][ni] = 0.0f;

    for (int kwg = 0; kwg < kSizeK; kwg += KWG) {
#if SA == 1
        {
            const int la_m = tid % MDIMA;
            const int la_k = tid / MDIMA;
            for (int k = la_k; k < KWG; k += KDIMA)
                for (int m = la_m; m < MWG; m += MDIMA) {
                    const int gk = kwg + k, gm = m0 + m;
                    alm[k][m] = (gk < kSizeK && gm < kSizeM) ? agm[gk * kSizeM + gm] : 0.0f;
                }
        }
#endif
#if SB == 1
        {
            const int lb_n = tid % NDIMB;
            const int lb_k = tid / NDIMB;
            for (int k = lb_k; k < KWG; k += KDIMB)
                for (int n = lb_n; n < NWG; n += NDIMB) {
                    const int gk = kwg + k, gn = n0 + n;
                    blm[k][n] = (gk < kSizeK && gn < kSizeN) ? bgm[gk * kSizeN + gn] : 0.0f;
                }
        }
#endif
#if SA == 1 || SB == 1
        __syncthreads();
#endif
        for (int pwi = 0; pwi < KWG; pwi += KWI) {
#pragma unroll
            for (int pit = 0; pit < KWI; pit++) {
                const int k = pwi + pit;
#if SA == 0 || SB == 0
                const int gk = kwg + k;
#endif
                float apm[MWI];
                float bpm[NWI];
#pragma unroll
                for (int mi = 0; mi < MWI; mi++) {
                    const int m = tile_row(tid_m, mi);
#if SA == 1
                    apm[mi] = alm[k][m];
#else
                    apm[mi] = (gk < kSizeK && m0 + m < kSizeM) ? agm[gk * kSizeM + m0 + m] : 0.0f;
#endif
                }
#pragma unroll
                for (int ni = 0; ni < NWI; ni++) {
                    const int n = tile_col(tid_n, ni);
#if SB == 1
                    bpm[ni] = blm[k][n];
#else
                    bpm[ni] = (gk < kSizeK && n0 + n < kSizeN) ? bgm[gk * kSizeN + n0 + n] : 0.0f;
#endif
                }
#pragma unroll
                for (int mi = 0; mi < MWI; mi++)
#pragma unroll
                    for (int ni = 0; ni < NWI; ni++)
                        acc[mi][ni] += apm[mi] * bpm[ni];
            }
        }
#if SA == 1 || SB == 1
        __syncthreads();
#endif
    }

#pragma unroll
    for (int mi = 0; mi < MWI; mi++) {
#pragma unroll
        for (int ni = 0; ni < NWI; ni++) {
            const int gm = m0 + tile_row(tid_m, mi);
            const int gn = n0 + tile_col(tid_n, ni);
            if (gm < kSizeM && gn < kSizeN) {
                const int idx = gn * kSizeM + gm;
                cgm[idx] = alpha * acc[mi][ni] + beta * cgm[idx];
            }
        }
    }
}
