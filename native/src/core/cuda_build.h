// Whether this build has the CUDA kernels (native/src/**/*.cu, built with SWERL_WITH_CUDA), and the
// error a CUDA tensor meets in a build without them.
#pragma once
#include "core/swerl_error.h"

namespace swerl {

inline bool has_cuda_kernels() {
#ifdef SWERL_WITH_CUDA
  return true;
#else
  return false;
#endif
}

[[noreturn]] inline void throw_no_cuda_kernels() {
  throw Error("ERR_SWERL_CUDA",
              "this swerl addon was built without its CUDA kernels; rebuild against a CUDA "
              "libtorch with nvcc on PATH (npx cmake-js compile --CDSWERL_CUDA=ON)");
}

}  // namespace swerl
