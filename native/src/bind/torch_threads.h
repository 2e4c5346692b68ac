// libtorch thread settings. Grad mode and OpenMP's thread count are per thread, so every
// worker thread sets them before it runs torch code.
#pragma once
#include <ATen/ATen.h>

namespace swerl {

// 0 = use the machine's core count. Also applied to the calling thread.
void set_torch_threads(int threads);
int torch_threads();

class TorchThreadScope {
 public:
  explicit TorchThreadScope(bool grad_mode);

 private:
  at::AutoGradMode grad_mode_;
};

}  // namespace swerl
