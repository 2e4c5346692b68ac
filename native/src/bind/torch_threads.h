// libtorch's and OpenBLAS's thread settings. Grad mode and OpenMP's thread count are per thread, so every
// worker thread sets them before it runs torch code.
#pragma once
#include <c10/core/GradMode.h>
#include <ATen/ATen.h>

namespace swerl {

// 0 = use the machine's core count. Also applied to the calling thread.
void set_torch_threads(int threads);
int torch_threads();

// OpenBLAS's thread count, where libblas.so.3 is OpenBLAS (-1 where it is not). One thread
// while sandbox commands are spawned: OpenBLAS's fork handler shuts its thread pool down under
// a multi-threaded GEMM running on another thread, which then waits forever.
int set_blas_threads(int threads);
int blas_threads();
// The kernel set OpenBLAS chose when it loaded ("SkylakeX", "Haswell", "Prescott", ...); null
// where libblas.so.3 is not OpenBLAS.
const char* blas_core();

class TorchThreadScope {
 public:
  explicit TorchThreadScope(bool grad_mode);

 private:
  c10::AutoGradMode grad_mode_;
};

}  // namespace swerl
