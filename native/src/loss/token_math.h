// The per-token part of the GRPO++ loss (docs/loss.md, "Per-token loss" and "Gradient"),
// one definition for the CPU core and the CUDA kernels: everything that depends on a token's
// logprob but not on its whole distribution.
#pragma once
#include <math.h>

#include "core/swerl_hd.h"
#include "loss/options.h"

namespace swerl {

constexpr double kLogRatioClamp = 20.0;

struct TokenLoss {
  double loss;       // L_t (the clipped surrogate, before the weight)
  double dloss;      // g_t = dL_t / d logprob_t
  double ratio;      // r_t = exp(clamp(l - l_old))
  bool clipped_low;  // A < 0 and r < 1 - eps_low
  bool clipped_high; // A > 0 and r > 1 + eps_high
};

struct TokenKl {
  double value;   // KL_t
  double dvalue;  // d KL_t / d logprob_t
};

SWERL_HD inline TokenLoss clipped_surrogate(double logprob, double old_logprob, double advantage,
                                            const LossOptions& o) {
  const double log_ratio = logprob - old_logprob;
  const bool ratio_unclamped = fabs(log_ratio) < kLogRatioClamp;
  const double ratio = exp(fmin(fmax(log_ratio, -kLogRatioClamp), kLogRatioClamp));
  const double low = 1.0 - o.clip_low, high = 1.0 + o.clip_high;
  const double clipped_ratio = fmin(fmax(ratio, low), high);

  double loss = fmax(-advantage * ratio, -advantage * clipped_ratio);
  if (o.has_dual_clip() && advantage < 0) loss = fmin(loss, -advantage * o.dual_clip);

  bool active = false;
  if (advantage > 0) active = ratio <= high;
  if (advantage < 0) active = ratio >= low && (!o.has_dual_clip() || ratio <= o.dual_clip);
  active = active && ratio_unclamped;

  return TokenLoss{loss, active ? -advantage * ratio : 0.0, ratio,
                   advantage < 0 && ratio < low, advantage > 0 && ratio > high};
}

// The negative log-likelihood -l: gradient -1 whatever the advantage; the ratio against the
// old logprobs is still reported (how far the policy is from what sampled the tokens).
SWERL_HD inline TokenLoss negative_log_likelihood(double logprob, double old_logprob) {
  const double log_ratio = fmin(fmax(logprob - old_logprob, -kLogRatioClamp), kLogRatioClamp);
  return TokenLoss{-logprob, -1.0, exp(log_ratio), false, false};
}

// kind is K1, K2 or K3 (validated where options enter the loss, loss.cc).
SWERL_HD inline TokenKl kl_penalty(double logprob, double ref_logprob, KlKind kind) {
  const double d = logprob - ref_logprob;
  if (kind == KlKind::K1) return {d, 1.0};
  if (kind == KlKind::K2) return {0.5 * d * d, d};
  const double e = exp(-d);  // k3: exp(l_ref - l) - (l_ref - l) - 1
  return {e + d - 1.0, 1.0 - e};
}

// Everything the loss needs of one token, from its logprob and entropy.
struct TokenOutcome {
  float logit_coef;      // c_t: d Loss / d z_tj = c_t (p_tj - [j = y_t]) + ...
  float entropy_coef;    // e_t = eta w_t / tau: ... + e_t p_tj (s_tj - lse_t + H_t)
  double weighted_loss;  // w_t (L_t - eta H_t + beta KL_t)
  double ratio, old_minus_new;
  bool masked, clipped_low, clipped_high;  // masked: w_t > 0, the tokens stats cover
};

// ref_logprob is read only when o.has_kl().
SWERL_HD inline TokenOutcome token_outcome(float logprob, float entropy, float old_logprob,
                                           float advantage, float weight, float ref_logprob,
                                           const LossOptions& o) {
  const TokenLoss s = o.objective == Objective::Nll ? negative_log_likelihood(logprob, old_logprob)
                                                    : clipped_surrogate(logprob, old_logprob, advantage, o);
  double dloss = s.dloss, value = s.loss - o.entropy_coef * entropy;
  if (o.has_kl()) {
    const TokenKl kl = kl_penalty(logprob, ref_logprob, o.kl_kind);
    value += o.kl_coef * kl.value;
    dloss += o.kl_coef * kl.dvalue;
  }
  const double inv_tau = 1.0 / o.temperature;
  return TokenOutcome{static_cast<float>(-weight * dloss * inv_tau),
                      static_cast<float>(o.entropy_coef * weight * inv_tau),
                      weight * value,
                      s.ratio,
                      double(old_logprob) - logprob,
                      weight > 0,
                      s.clipped_low,
                      s.clipped_high};
}

// Sums over tokens that the loss and its monitoring stats are made of. The CUDA kernels
// reduce into this struct on the device; LossStats divides by masked.
struct LossSums {
  double loss = 0;  // over every token (weights of unmasked tokens are 0)
  double ratio_sum = 0, ratio_max = 0, old_minus_new_sum = 0, entropy_sum = 0;
  double masked = 0, clipped_low = 0, clipped_high = 0;  // counts, over masked tokens
};

SWERL_HD inline void add_token(LossSums& sums, const TokenOutcome& t, float entropy) {
  sums.loss += t.weighted_loss;
  if (!t.masked) return;
  sums.masked += 1;
  sums.ratio_sum += t.ratio;
  sums.ratio_max = fmax(sums.ratio_max, t.ratio);
  sums.old_minus_new_sum += t.old_minus_new;
  sums.entropy_sum += entropy;
  sums.clipped_low += t.clipped_low;
  sums.clipped_high += t.clipped_high;
}

SWERL_HD inline void add_sums(LossSums& into, const LossSums& other) {
  into.loss += other.loss;
  into.ratio_sum += other.ratio_sum;
  into.ratio_max = fmax(into.ratio_max, other.ratio_max);
  into.old_minus_new_sum += other.old_minus_new_sum;
  into.entropy_sum += other.entropy_sum;
  into.masked += other.masked;
  into.clipped_low += other.clipped_low;
  into.clipped_high += other.clipped_high;
}

}  // namespace swerl
