#include "loss/plain_loss.h"

#include "loss/loss.h"
#include "loss/token_math.h"
#include "core/swerl_error.h"

namespace swerl {

PlainLossTerms plain_policy_loss_terms(const at::Tensor& hidden, const at::Tensor& weight,
                                       const PolicyLossInputs& in, const LossOptions& o) {
  check_policy_loss_inputs(in, hidden.size(0), weight.size(0), o);
  const at::Device device = hidden.device();
  const at::ScalarType type = hidden.scalar_type() == at::kDouble ? at::kDouble : at::kFloat;
  const auto token = [&](const at::Tensor& t) { return t.to(device).to(type); };
  PlainLossTerms out;
  out.logits = at::matmul(hidden.to(type), weight.to(type).t());
  const at::Tensor logp = at::log_softmax(out.logits / o.temperature, -1);
  out.logprobs = logp.gather(1, in.targets.to(device).unsqueeze(1)).squeeze(1);
  out.entropy = -(logp.exp() * logp).sum(-1);
  const at::Tensor old = token(in.old_logprobs), adv = token(in.advantages);

  out.ratio = (out.logprobs - old).clamp(-kLogRatioClamp, kLogRatioClamp).exp();
  at::Tensor per_token;
  if (o.objective == Objective::Nll) {
    per_token = -out.logprobs;
  } else {
    const at::Tensor clipped = out.ratio.clamp(1.0 - o.clip_low, 1.0 + o.clip_high);
    per_token = at::maximum(-adv * out.ratio, -adv * clipped);
    if (o.has_dual_clip())
      per_token = at::where(adv < 0, at::minimum(per_token, -adv * o.dual_clip), per_token);
  }
  if (o.entropy_coef != 0.0) per_token = per_token - o.entropy_coef * out.entropy;
  if (o.has_kl()) {
    const at::Tensor d = out.logprobs - token(in.ref_logprobs);
    at::Tensor kl;
    switch (o.kl_kind) {
      case KlKind::K1: kl = d; break;
      case KlKind::K2: kl = 0.5 * d * d; break;
      case KlKind::K3: kl = (-d).exp() + d - 1.0; break;
      case KlKind::Unset: throw_invalid("kl.kind is unset");  // refused at the loss's entry first
    }
    per_token = per_token + o.kl_coef * kl;
  }
  out.weighted_terms = token(in.weights) * per_token;
  out.loss = out.weighted_terms.sum();
  return out;
}

at::Tensor plain_policy_loss(const at::Tensor& hidden, const at::Tensor& weight,
                             const PolicyLossInputs& in, const LossOptions& o) {
  return plain_policy_loss_terms(hidden, weight, in, o).loss;
}

}  // namespace swerl
