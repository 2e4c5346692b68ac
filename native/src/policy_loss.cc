#include "policy_loss.h"

#include "logit_tile.h"
#include "swerl_error.h"

namespace swerl {

LossStats stats_of(const LossSums& s) {
  LossStats out;
  out.loss = s.loss;
  out.masked_tokens = int64_t(s.masked);
  if (s.masked > 0) {
    out.ratio_mean = s.ratio_sum / s.masked;
    out.ratio_max = s.ratio_max;
    out.approx_kl = s.old_minus_new_sum / s.masked;
    out.entropy_mean = s.entropy_sum / s.masked;
    out.clip_frac_low = s.clipped_low / s.masked;
    out.clip_frac_high = s.clipped_high / s.masked;
  }
  return out;
}

namespace {
void check_vector(const at::Tensor& t, int64_t n, at::ScalarType type, const char* name) {
  if (!t.defined() || t.dim() != 1 || t.size(0) != n || t.scalar_type() != type ||
      !t.device().is_cpu())
    throw_invalid(std::string(name) + " must be a CPU tensor of " + std::to_string(n) + " " +
                  c10::toString(type) + " values");
}
}  // namespace

void check_policy_loss_inputs(const PolicyLossInputs& in, int64_t tokens, int64_t vocab,
                              const LossOptions& options) {
  check_loss_options(options);
  check_vector(in.targets, tokens, at::kLong, "targets");
  check_vector(in.old_logprobs, tokens, at::kFloat, "oldLogprobs");
  check_vector(in.advantages, tokens, at::kFloat, "advantages");
  check_vector(in.weights, tokens, at::kFloat, "weights");
  if (options.has_kl()) check_vector(in.ref_logprobs, tokens, at::kFloat, "kl.refLogprobs");
  if (tokens > 0) {
    const int64_t lo = in.targets.min().item<int64_t>(), hi = in.targets.max().item<int64_t>();
    if (lo < 0 || hi >= vocab)
      throw_invalid("targets must lie in [0, " + std::to_string(vocab) + ")");
  }
}

PolicyLossResult policy_loss(const at::Tensor& logits, const PolicyLossInputs& in,
                             const LossOptions& options) {
  if (logits.dim() != 2 || logits.scalar_type() != at::kFloat || !logits.device().is_cpu())
    throw_invalid("logits must be a CPU float32 tensor [T, V]");
  const int64_t tokens = logits.size(0), vocab = logits.size(1);
  check_policy_loss_inputs(in, tokens, vocab, options);

  // One tile spanning the whole vocabulary: this is the materialized path.
  at::Tensor scaled = logits.mul(1.0 / options.temperature);
  RunningSoftmax softmax(tokens, scaled);
  softmax.absorb(scaled, in.targets, 0);
  PolicyLossResult out;
  at::Tensor lse;
  softmax.finish(lse, out.entropy);
  out.logprobs = softmax.target_logit - lse;

  const TokenTerms terms = token_terms(out.logprobs, out.entropy, in.old_logprobs,
                                       in.advantages, in.weights, in.ref_logprobs, options);
  out.stats = stats_of(terms.sums);
  out.grad_logits = logit_grad_tile(std::move(scaled), lse, out.entropy, terms.logit_coef,
                                    terms.entropy_coef, options.entropy_coef != 0.0, in.targets, 0);
  return out;
}

}  // namespace swerl
