// The GRPO++ policy loss, forward and backward in one pass (specs/loss.md).
//  - policy_loss: over materialized logits [T, V].
//  - fused_linear_policy_loss_*: over hidden states [T, H] and the LM head [V, H], streaming
//    (token chunk x vocab chunk) tiles: the forward keeps only lse and entropy per token,
//    the backward recomputes each tile and skips tokens whose coefficients are zero.
#pragma once
#include <ATen/ATen.h>

#include "loss_options.h"
#include "token_loss.h"

namespace swerl {

// Per-token inputs, [T] each, CPU, contiguous. targets int64; the rest float32.
// ref_logprobs is needed only when options.has_kl().
struct PolicyLossInputs {
  at::Tensor targets, old_logprobs, advantages, weights, ref_logprobs;
};

struct LossStats {
  double loss = 0, approx_kl = 0, clip_frac_low = 0, clip_frac_high = 0;
  double ratio_mean = 0, ratio_max = 0, entropy_mean = 0;
  int64_t masked_tokens = 0;
};
LossStats stats_of(const TokenTerms& terms);

struct PolicyLossResult {
  at::Tensor logprobs, entropy;  // [T] fp32
  LossStats stats;
  at::Tensor grad_logits;  // [T, V] fp32 (policy_loss only)
};

PolicyLossResult policy_loss(const at::Tensor& logits, const PolicyLossInputs& inputs,
                             const LossOptions& options);

struct FusedChunks {
  int64_t tokens = 1024;
  int64_t vocab = 4096;
};

// What the forward keeps for the backward: O(T), never O(T x V).
struct FusedLinearForward {
  at::Tensor logprobs, entropy, lse;   // [T] fp32
  at::Tensor logit_coef, entropy_coef; // [T] fp32 (see TokenTerms)
  bool has_entropy_term = false;
  LossStats stats;
};

FusedLinearForward fused_linear_policy_loss_forward(const at::Tensor& hidden,
                                                     const at::Tensor& weight,
                                                     const PolicyLossInputs& inputs,
                                                     const LossOptions& options,
                                                     const FusedChunks& chunks);

struct FusedLinearGrads {
  at::Tensor grad_hidden;  // [T, H]
  at::Tensor grad_weight;  // [V, H]
};

// grad_scale multiplies both gradients (the upstream gradient of the loss).
FusedLinearGrads fused_linear_policy_loss_backward(const at::Tensor& hidden,
                                                    const at::Tensor& weight,
                                                    const at::Tensor& targets,
                                                    const FusedLinearForward& forward,
                                                    double temperature, double grad_scale,
                                                    const FusedChunks& chunks);

// Shape and dtype checks shared by both losses; throws swerl::Error naming the field.
void check_policy_loss_inputs(const PolicyLossInputs& inputs, int64_t tokens, int64_t vocab,
                              const LossOptions& options);

}  // namespace swerl
