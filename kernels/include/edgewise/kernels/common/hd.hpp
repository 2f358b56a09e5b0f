// EW_HD marks functions that both the CPU backend and CUDA threads run.
#pragma once

#if defined(__CUDACC__)
#define EW_HD __host__ __device__
#define EW_HD_INLINE __host__ __device__ __forceinline__
#else
#define EW_HD
#define EW_HD_INLINE inline
#endif
