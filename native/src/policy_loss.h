// The GRPO++ policy loss, forward and backward in one pass (docs/loss.md).
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
// Means over the masked tokens (0 when there are none).
LossStats stats_of(const LossSums& sums);

struct PolicyLossResult {
  at::Tensor logprobs, entropy;  // [T] fp32
  LossStats stats;
  at::Tensor grad_logits;  // [T, V] fp32 (policy_loss only)
};

PolicyLossResult policy_loss(const at::Tensor& logits, const PolicyLossInputs& inputs,
                             const LossOptions& options);

// How the fused loss is cut into tiles (tokens x vocabulary entries; the CUDA kernels want
// larger tiles than the CPU: lib/math/policy-loss.ts picks per device), and whether its
// reductions must be bitwise reproducible (no floating-point atomics).
struct FusedChunks {
  int64_t tokens = 1024;
  int64_t vocab = 4096;
  bool deterministic = true;
};

// What the forward keeps for the backward: O(T), never O(T x V). Tensors are on the
// operands' device.
struct FusedLinearForward {
  at::Tensor logprobs, entropy, lse;   // [T] fp32
  at::Tensor logit_coef, entropy_coef; // [T] fp32 (see TokenTerms)
  bool has_entropy_term = false;
  LossStats stats;
};

// Buffers a caller may supply (each one left undefined is allocated): to reuse memory, to
// accumulate dW over micro-batches, or (swerl_kernel_check) to poison every output first.
// Per-token outputs are float32 [T] and the workspace uint8 of at least
// fused_linear_workspace_bytes, all on the operands' device.
struct FusedForwardBuffers {
  at::Tensor logprobs, entropy, lse, logit_coef, entropy_coef, workspace;
};
struct FusedBackwardBuffers {
  at::Tensor grad_hidden;  // [T, H] in the operands' dtype
  at::Tensor grad_weight;  // [V, H] float32
  at::Tensor workspace;
  bool accumulate_grad_weight = false;  // add dW into grad_weight instead of overwriting it
};

// hidden [T, H] and weight [V, H]: float32, bfloat16 or float16 (the same), on the CPU or a
// CUDA device; inputs on the CPU (moved to the operands' device here).
FusedLinearForward fused_linear_policy_loss_forward(const at::Tensor& hidden,
                                                     const at::Tensor& weight,
                                                     const PolicyLossInputs& inputs,
                                                     const LossOptions& options,
                                                     const FusedChunks& chunks,
                                                     const FusedForwardBuffers& buffers = {});

// Bytes of workspace the forward (or backward) needs for these operands and tiles.
size_t fused_linear_workspace_bytes(const at::Tensor& hidden, const at::Tensor& weight,
                                    const FusedChunks& chunks, bool backward);

struct FusedLinearGrads {
  at::Tensor grad_hidden;  // [T, H] in the operands' dtype
  at::Tensor grad_weight;  // [V, H] float32 (accumulated over token tiles in fp32)
};

// grad_scale (a one-element tensor, or undefined for 1) multiplies both gradients: the
// upstream gradient of the loss, read on the device without a synchronization.
FusedLinearGrads fused_linear_policy_loss_backward(const at::Tensor& hidden,
                                                    const at::Tensor& weight,
                                                    const at::Tensor& targets,
                                                    const FusedLinearForward& forward,
                                                    double temperature,
                                                    const at::Tensor& grad_scale,
                                                    const FusedChunks& chunks,
                                                    const FusedBackwardBuffers& buffers = {});

// Shape and dtype checks shared by both losses; throws swerl::Error naming the field.
void check_policy_loss_inputs(const PolicyLossInputs& inputs, int64_t tokens, int64_t vocab,
                              const LossOptions& options);

}  // namespace swerl
