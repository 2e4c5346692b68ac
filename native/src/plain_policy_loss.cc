#include "plain_policy_loss.h"

#include "token_loss.h"

namespace swerl {

at::Tensor plain_policy_loss(const at::Tensor& hidden, const at::Tensor& weight,
                             const PolicyLossInputs& in, const LossOptions& o) {
  const at::Device device = hidden.device();
  const at::Tensor logits = at::matmul(hidden.to(at::kFloat), weight.to(at::kFloat).t()) / o.temperature;
  const at::Tensor logp = at::log_softmax(logits, -1);
  const at::Tensor lp = logp.gather(1, in.targets.to(device).unsqueeze(1)).squeeze(1);
  const at::Tensor old = in.old_logprobs.to(device), adv = in.advantages.to(device);
  const at::Tensor w = in.weights.to(device);

  const at::Tensor ratio = (lp - old).clamp(-kLogRatioClamp, kLogRatioClamp).exp();
  const at::Tensor clipped = ratio.clamp(1.0 - o.clip_low, 1.0 + o.clip_high);
  at::Tensor per_token = at::maximum(-adv * ratio, -adv * clipped);
  if (o.has_dual_clip())
    per_token = at::where(adv < 0, at::minimum(per_token, -adv * o.dual_clip), per_token);
  if (o.entropy_coef != 0.0) {
    const at::Tensor entropy = -(logp.exp() * logp).sum(-1);
    per_token = per_token - o.entropy_coef * entropy;
  }
  if (o.has_kl()) {
    const at::Tensor d = lp - in.ref_logprobs.to(device);
    at::Tensor kl;
    switch (o.kl_kind) {
      case KlKind::K1: kl = d; break;
      case KlKind::K2: kl = 0.5 * d * d; break;
      case KlKind::K3: kl = (-d).exp() + d - 1.0; break;
    }
    per_token = per_token + o.kl_coef * kl;
  }
  return (w * per_token).sum();
}

}  // namespace swerl
