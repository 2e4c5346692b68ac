#include "policy_loss.h"

#include <numeric>
#include <vector>

#include "fused_loss_cpu.h"
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

  // One tile spanning the whole vocabulary, through the fused loss's CPU steps.
  at::Tensor scaled = logits.mul(1.0 / options.temperature).contiguous();  // becomes the gradient
  const at::Tensor targets = in.targets.contiguous();
  std::vector<RowSoftmax> rows(tokens, row_softmax_empty());
  fused::cpu_absorb_tile(scaled.data_ptr<float>(), tokens, vocab, targets.data_ptr<int64_t>(), 0,
                         rows.data());
  PolicyLossResult out;
  at::Tensor lse = at::empty({tokens}, at::kFloat);
  out.entropy = at::empty({tokens}, at::kFloat);
  out.logprobs = at::empty({tokens}, at::kFloat);
  for (int64_t t = 0; t < tokens; ++t)
    row_softmax_finish(rows[t], lse.data_ptr<float>()[t], out.entropy.data_ptr<float>()[t],
                       out.logprobs.data_ptr<float>()[t]);

  const TokenTerms terms = token_terms(out.logprobs, out.entropy, in.old_logprobs,
                                       in.advantages, in.weights, in.ref_logprobs, options);
  out.stats = stats_of(terms.sums);
  fused::BackwardIO io;
  io.lse = lse.data_ptr<float>();
  io.entropy = out.entropy.data_ptr<float>();
  io.logit_coef = terms.logit_coef.data_ptr<float>();
  io.entropy_coef = terms.entropy_coef.data_ptr<float>();
  io.has_entropy_term = options.entropy_coef != 0.0;
  std::vector<int32_t> ids(tokens);
  std::iota(ids.begin(), ids.end(), 0);
  fused::cpu_logit_grad_tile(scaled.data_ptr<float>(), tokens, vocab, ids.data(), 0,
                             targets.data_ptr<int64_t>(), io);
  out.grad_logits = scaled;
  return out;
}

}  // namespace swerl
