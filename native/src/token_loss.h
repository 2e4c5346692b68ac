// The per-token part of the GRPO++ loss (specs/loss.md, "Per-token loss" and "Gradient"):
// everything that depends on a token's logprob but not on its whole distribution.
// Shared by the materialized and fused losses (and the CUDA kernels' CPU twin).
#pragma once
#include <ATen/ATen.h>

#include "loss_options.h"

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

TokenLoss clipped_surrogate(double logprob, double old_logprob, double advantage,
                            const LossOptions& options);
TokenKl kl_penalty(double logprob, double ref_logprob, KlKind kind);

// Per-token quantities of a batch, from the logprobs and entropies of the forward pass.
struct TokenTerms {
  at::Tensor logit_coef;    // c_t: d Loss / d z_tj = c_t (p_tj - [j = y_t]) + ...   [T] fp32
  at::Tensor entropy_coef;  // e_t = eta w_t / tau: ... + e_t p_tj (s_tj - lse_t + H_t)  [T] fp32
  double loss = 0;          // the whole loss, every term included
  double approx_kl = 0, clip_frac_low = 0, clip_frac_high = 0;
  double ratio_mean = 0, ratio_max = 0, entropy_mean = 0;
  int64_t masked_tokens = 0;  // tokens with weight > 0: the ones stats average over
};

// logprobs, entropy, old_logprobs, advantages, weights, ref_logprobs (undefined when no KL):
// [T] fp32 on CPU, contiguous. Parallel over tokens.
TokenTerms token_terms(const at::Tensor& logprobs, const at::Tensor& entropy,
                       const at::Tensor& old_logprobs, const at::Tensor& advantages,
                       const at::Tensor& weights, const at::Tensor& ref_logprobs,
                       const LossOptions& options);

}  // namespace swerl
