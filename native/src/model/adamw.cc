#include "model/adamw.h"

#include <c10/core/GradMode.h>
#include <cmath>

namespace swerl {

void adamw_step(std::vector<at::Tensor>& params, const std::vector<at::Tensor>& grads,
                const std::vector<bool>& decay, AdamWState& state, const AdamWOptions& o) {
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
  for (size_t i = 0; i < params.size(); ++i) {
    at::Tensor& p = params[i];
    const at::Tensor& g = grads[i];
    if (decay[i] && o.weight_decay != 0.0) p.mul_(1.0 - o.lr * o.weight_decay);
    state.exp_avg[i].mul_(o.beta1).add_(g, 1.0 - o.beta1);
    state.exp_avg_sq[i].mul_(o.beta2).addcmul_(g, g, 1.0 - o.beta2);
    const at::Tensor denom = state.exp_avg_sq[i].sqrt().mul_(inv_sqrt_bias2).add_(o.eps);
    p.addcdiv_(state.exp_avg[i], denom, -step_size);
  }
}

}  // namespace swerl
