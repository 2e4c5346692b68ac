// AdamW (decoupled weight decay, Loshchilov & Hutter), as torch.optim.AdamW computes it, over
// fp32 master weights. The state is plain tensors so checkpoints can save it bit for bit.
#pragma once
#include <ATen/ATen.h>

#include <vector>

namespace swerl {

struct AdamWOptions {
  double lr = 1e-6;
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  double weight_decay = 0.0;
};

struct AdamWState {
  int64_t step = 0;
  std::vector<at::Tensor> exp_avg, exp_avg_sq;  // fp32, like the master weights
};

// One update of every parameter; decay[i] says whether weight decay applies to it.
void adamw_step(std::vector<at::Tensor>& params, const std::vector<at::Tensor>& grads,
                const std::vector<bool>& decay, AdamWState& state, const AdamWOptions& options);

}  // namespace swerl
