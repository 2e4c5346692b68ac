// SWERL_HD marks small inline functions that the CPU core and the CUDA kernels share, so
// both compute the same per-token and per-element math from one definition.
#pragma once

#ifdef __CUDACC__
#define SWERL_HD __host__ __device__
#else
#define SWERL_HD
#endif
