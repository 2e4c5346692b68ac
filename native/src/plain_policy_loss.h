// The GRPO++ loss written with plain libtorch ops over materialized logits, differentiated by
// autograd: the independent check of the fused path's gradients (tests), never the fast path.
#pragma once
#include <ATen/ATen.h>

#include "policy_loss.h"

namespace swerl {

// hidden [N, H] (rows predicting inputs.targets), weight [V, H]; returns the 0-dim loss
// sum_t w_t (L_t - eta H_t + beta KL_t).
at::Tensor plain_policy_loss(const at::Tensor& hidden, const at::Tensor& weight,
                             const PolicyLossInputs& inputs, const LossOptions& options);

}  // namespace swerl
