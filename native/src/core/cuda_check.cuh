// CUDA runtime errors as swerl::Error (code ERR_SWERL_CUDA), naming the step that failed.
#pragma once
#include <cuda_runtime.h>

#include <string>

#include "core/swerl_error.h"

namespace swerl::cuda {

inline void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess)
    throw Error("ERR_SWERL_CUDA", std::string(what) + ": " + cudaGetErrorName(status) + " (" +
                                      cudaGetErrorString(status) + ")");
}

// After a kernel launch: a bad configuration shows here, a fault at the next synchronization.
inline void check_launch(const char* kernel) { check(cudaGetLastError(), kernel); }

inline unsigned blocks_for(int64_t n, int threads) { return unsigned((n + threads - 1) / threads); }

}  // namespace swerl::cuda
