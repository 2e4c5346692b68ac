// The two losses as libtorch autograd functions, for C++ callers: the model's forward ends at
// hidden states and calls fused_linear_policy_loss, and loss.backward() reaches its weights.
#pragma once
#include <ATen/ATen.h>

#include "loss/types.h"

namespace swerl {

struct DifferentiableLoss {
  at::Tensor loss;               // 0-dim, differentiable
  at::Tensor logprobs, entropy;  // [T], not differentiable
  LossStats stats;
};

// logits [T, V] (requires_grad as the caller likes).
DifferentiableLoss differentiable_policy_loss(const at::Tensor& logits,
                                             const PolicyLossInputs& inputs,
                                             const LossOptions& options);

// hidden [T, H], weight [V, H] (tie it to the embedding by passing the same tensor).
DifferentiableLoss differentiable_fused_linear_policy_loss(const at::Tensor& hidden,
                                                          const at::Tensor& weight,
                                                          const PolicyLossInputs& inputs,
                                                          const LossOptions& options,
                                                          const FusedChunks& chunks = {});

}  // namespace swerl
