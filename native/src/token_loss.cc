#include "token_loss.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "swerl_error.h"

namespace swerl {

void check_loss_options(const LossOptions& o) {
  if (!(o.clip_low >= 0.0 && o.clip_low < 1.0)) throw_invalid("clipLow must be in [0, 1)");
  if (!(o.clip_high >= 0.0)) throw_invalid("clipHigh must be >= 0 (Infinity allowed)");
  if (!(o.dual_clip == 0.0 || (o.dual_clip > 1.0 && std::isfinite(o.dual_clip))))
    throw_invalid("dualClip must be 0 (off) or a finite number > 1");
  if (!(o.temperature > 0.0 && std::isfinite(o.temperature)))
    throw_invalid("temperature must be a finite number > 0");
  if (!std::isfinite(o.entropy_coef)) throw_invalid("entropyCoef must be finite");
  if (!std::isfinite(o.kl_coef)) throw_invalid("kl.coef must be finite");
}

TokenLoss clipped_surrogate(double logprob, double old_logprob, double advantage,
                            const LossOptions& o) {
  const double log_ratio = logprob - old_logprob;
  const bool ratio_unclamped = std::abs(log_ratio) < kLogRatioClamp;
  const double ratio = std::exp(std::clamp(log_ratio, -kLogRatioClamp, kLogRatioClamp));
  const double low = 1.0 - o.clip_low, high = 1.0 + o.clip_high;
  const double clipped_ratio = std::min(std::max(ratio, low), high);

  double loss = std::max(-advantage * ratio, -advantage * clipped_ratio);
  if (o.has_dual_clip() && advantage < 0) loss = std::min(loss, -advantage * o.dual_clip);

  bool active = false;
  if (advantage > 0) active = ratio <= high;
  if (advantage < 0) active = ratio >= low && (!o.has_dual_clip() || ratio <= o.dual_clip);
  active = active && ratio_unclamped;

  return TokenLoss{loss, active ? -advantage * ratio : 0.0, ratio,
                   advantage < 0 && ratio < low, advantage > 0 && ratio > high};
}

TokenKl kl_penalty(double logprob, double ref_logprob, KlKind kind) {
  const double d = logprob - ref_logprob;
  switch (kind) {
    case KlKind::K1:
      return {d, 1.0};
    case KlKind::K2:
      return {0.5 * d * d, d};
    case KlKind::K3: {
      const double e = std::exp(-d);  // exp(l_ref - l)
      return {e + d - 1.0, 1.0 - e};
    }
  }
  throw_invalid("unknown KL kind");
}

namespace {

void check_token_tensor(const at::Tensor& t, int64_t n, const char* name) {
  if (!t.defined() || t.scalar_type() != at::kFloat || t.dim() != 1 || t.size(0) != n ||
      !t.is_contiguous() || !t.device().is_cpu())
    throw_invalid(std::string(name) + " must be a contiguous CPU float32 tensor of " +
                  std::to_string(n) + " tokens");
}

struct TokenRow {
  double weighted_loss = 0;  // w (L - eta H + beta KL)
  double ratio = 0, old_minus_new = 0, entropy = 0;
  bool masked = false, clipped_low = false, clipped_high = false;
};

}  // namespace

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
  std::vector<TokenRow> rows(n);

  const float* lp = logprobs.data_ptr<float>();
  const float* ent = entropy.data_ptr<float>();
  const float* old = old_logprobs.data_ptr<float>();
  const float* adv = advantages.data_ptr<float>();
  const float* w = weights.data_ptr<float>();
  const float* ref = options.has_kl() ? ref_logprobs.data_ptr<float>() : nullptr;
  float* coef = out.logit_coef.data_ptr<float>();
  float* ecoef = out.entropy_coef.data_ptr<float>();
  const double inv_tau = 1.0 / options.temperature;

  at::parallel_for(0, n, 1024, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const TokenLoss s = clipped_surrogate(lp[t], old[t], adv[t], options);
      double dloss = s.dloss, value = s.loss - options.entropy_coef * ent[t];
      if (ref) {
        const TokenKl kl = kl_penalty(lp[t], ref[t], options.kl_kind);
        value += options.kl_coef * kl.value;
        dloss += options.kl_coef * kl.dvalue;
      }
      coef[t] = static_cast<float>(-w[t] * dloss * inv_tau);
      ecoef[t] = static_cast<float>(options.entropy_coef * w[t] * inv_tau);
      rows[t] = TokenRow{w[t] * value, s.ratio, double(old[t]) - lp[t], ent[t],
                         w[t] > 0, s.clipped_low, s.clipped_high};
    }
  });

  // Serial reduction in double: T is small next to the T x V work, and the order is fixed.
  double ratio_sum = 0, kl_sum = 0, ent_sum = 0;
  int64_t low = 0, high = 0;
  for (const TokenRow& r : rows) {
    out.loss += r.weighted_loss;
    if (!r.masked) continue;
    ++out.masked_tokens;
    ratio_sum += r.ratio;
    out.ratio_max = std::max(out.ratio_max, r.ratio);
    kl_sum += r.old_minus_new;
    ent_sum += r.entropy;
    low += r.clipped_low;
    high += r.clipped_high;
  }
  if (out.masked_tokens > 0) {
    const double m = double(out.masked_tokens);
    out.ratio_mean = ratio_sum / m;
    out.approx_kl = kl_sum / m;
    out.entropy_mean = ent_sum / m;
    out.clip_frac_low = low / m;
    out.clip_frac_high = high / m;
  }
  return out;
}

}  // namespace swerl
