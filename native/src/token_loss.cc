#include "token_loss.h"

#include <ATen/Parallel.h>

#include <cmath>
#include <vector>

#include "swerl_error.h"

namespace swerl {

void check_loss_options(const LossOptions& o) {
  if (!(o.clip_low >= 0.0 && o.clip_low < 1.0)) throw_invalid("clipLow must be in [0, 1)");
  if (!(o.clip_high >= 0.0)) throw_invalid("clipHigh must be >= 0 (Infinity allowed)");
  if (!(o.dual_clip == 0.0 || (o.dual_clip > 1.0 && std::isfinite(o.dual_clip))))
    throw_invalid("dualClip must be 0 (off) or a finite number > 1");
  // The same bounds as lib/math/policy-loss.ts's LOSS_FIELDS (test/lib/train/loss-bounds.test.ts).
  if (!(o.temperature >= 0.01 && o.temperature <= 10.0))
    throw_invalid("temperature must be in [0.01, 10]");
  if (!(std::fabs(o.entropy_coef) <= 100.0)) throw_invalid("entropyCoef must be in [-100, 100]");
  if (!(o.kl_coef >= 0.0 && o.kl_coef <= 100.0)) throw_invalid("kl.coef must be in [0, 100]");
  if (o.kl_kind != KlKind::K1 && o.kl_kind != KlKind::K2 && o.kl_kind != KlKind::K3)
    throw_invalid("kl.kind must be k1, k2 or k3");
}

namespace {

void check_token_tensor(const at::Tensor& t, int64_t n, const char* name) {
  if (!t.defined() || t.scalar_type() != at::kFloat || t.dim() != 1 || t.size(0) != n ||
      !t.is_contiguous() || !t.device().is_cpu())
    throw_invalid(std::string(name) + " must be a contiguous CPU float32 tensor of " +
                  std::to_string(n) + " tokens");
}

}  // namespace

LossSums token_terms_into(int64_t n, const float* lp, const float* ent, const float* old,
                          const float* adv, const float* w, const float* ref,
                          const LossOptions& options, float* coef, float* ecoef) {
  std::vector<TokenOutcome> outcomes(n);
  at::parallel_for(0, n, 1024, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      outcomes[t] = token_outcome(lp[t], ent[t], old[t], adv[t], w[t], ref ? ref[t] : 0.0f, options);
      coef[t] = outcomes[t].logit_coef;
      ecoef[t] = outcomes[t].entropy_coef;
    }
  });
  // Serial reduction in double: T is small next to the T x V work, and the order is fixed.
  LossSums sums;
  for (int64_t t = 0; t < n; ++t) add_token(sums, outcomes[t], ent[t]);
  return sums;
}

TokenTerms token_terms(const at::Tensor& logprobs, const at::Tensor& entropy,
                       const at::Tensor& old_logprobs, const at::Tensor& advantages,
                       const at::Tensor& weights, const at::Tensor& ref_logprobs,
                       const LossOptions& options) {
  check_loss_options(options);
  const int64_t n = logprobs.numel();
  for (auto [t, name] : {std::pair{&logprobs, "logprobs"}, {&entropy, "entropy"},
                         {&old_logprobs, "oldLogprobs"}, {&advantages, "advantages"},
                         {&weights, "weights"}})
    check_token_tensor(*t, n, name);
  if (options.has_kl()) check_token_tensor(ref_logprobs, n, "kl.refLogprobs");

  TokenTerms out;
  out.logit_coef = at::empty({n}, at::kFloat);
  out.entropy_coef = at::empty({n}, at::kFloat);
  out.sums = token_terms_into(n, logprobs.data_ptr<float>(), entropy.data_ptr<float>(),
                              old_logprobs.data_ptr<float>(), advantages.data_ptr<float>(),
                              weights.data_ptr<float>(),
                              options.has_kl() ? ref_logprobs.data_ptr<float>() : nullptr, options,
                              out.logit_coef.data_ptr<float>(), out.entropy_coef.data_ptr<float>());
  return out;
}

}  // namespace swerl
