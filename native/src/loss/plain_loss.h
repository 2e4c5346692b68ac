// The GRPO++ loss written with plain libtorch ops over materialized logits, differentiated by
// autograd: the independent check of the fused path's gradients (tests, swerl_kernel_check),
// never the fast path.
#pragma once
#include <ATen/ATen.h>

#include "loss/types.h"

namespace swerl {

// The loss and the per-token values it is made of, in the operands' precision (float32, or
// float64 for a reference; narrower operands compute in float32).
struct PlainLossTerms {
  at::Tensor loss;            // 0-dim: sum_t w_t (L_t - eta H_t + beta KL_t), differentiable
  at::Tensor logits;          // [N, V] z (before the temperature)
  at::Tensor logprobs;        // [N]
  at::Tensor entropy;         // [N]
  at::Tensor ratio;           // [N] exp(clamp(l - l_old))
  at::Tensor weighted_terms;  // [N] w_t (L_t - eta H_t + beta KL_t)
};

// hidden [N, H] (rows predicting inputs.targets), weight [V, H]. Inputs and options are checked
// as every loss's are (check_policy_loss_inputs).
PlainLossTerms plain_policy_loss_terms(const at::Tensor& hidden, const at::Tensor& weight,
                                       const PolicyLossInputs& inputs, const LossOptions& options);

// plain_policy_loss_terms(...).loss.
at::Tensor plain_policy_loss(const at::Tensor& hidden, const at::Tensor& weight,
                             const PolicyLossInputs& inputs, const LossOptions& options);

}  // namespace swerl
