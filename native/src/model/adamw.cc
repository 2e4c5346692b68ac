#include "model/adamw.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

#include <cmath>

#include "core/profile.h"

namespace swerl {

// Multi-tensor ops (at::_foreach_*): on CUDA a few launches for all ~300 tensors of a model
// instead of six per tensor; on the CPU the same per-tensor arithmetic as before.
void adamw_step(std::vector<at::Tensor>& params, const std::vector<at::Tensor>& grads,
                const std::vector<bool>& decay, AdamWState& state, const AdamWOptions& o) {
  profile::Phase phase("optimizer");
  c10::NoGradGuard no_grad;
  if (state.exp_avg.empty()) {
    for (const at::Tensor& p : params) {
      state.exp_avg.push_back(at::zeros_like(p));
      state.exp_avg_sq.push_back(at::zeros_like(p));
    }
  }
  ++state.step;
  const double bias1 = 1.0 - std::pow(o.beta1, double(state.step));
  const double bias2 = 1.0 - std::pow(o.beta2, double(state.step));
  const double step_size = o.lr / bias1;
  const double inv_sqrt_bias2 = 1.0 / std::sqrt(bias2);
  if (o.weight_decay != 0.0) {
    std::vector<at::Tensor> decayed;
    for (size_t i = 0; i < params.size(); ++i)
      if (decay[i]) decayed.push_back(params[i]);
    if (!decayed.empty()) at::_foreach_mul_(decayed, 1.0 - o.lr * o.weight_decay);
  }
  at::_foreach_mul_(state.exp_avg, o.beta1);
  at::_foreach_add_(state.exp_avg, grads, 1.0 - o.beta1);
  at::_foreach_mul_(state.exp_avg_sq, o.beta2);
  at::_foreach_addcmul_(state.exp_avg_sq, grads, grads, 1.0 - o.beta2);
  std::vector<at::Tensor> denom = at::_foreach_sqrt(state.exp_avg_sq);
  at::_foreach_mul_(denom, inv_sqrt_bias2);
  at::_foreach_add_(denom, o.eps);
  at::_foreach_addcdiv_(params, state.exp_avg, denom, -step_size);
}

}  // namespace swerl
