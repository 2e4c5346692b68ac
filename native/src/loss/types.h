// The loss's data as it crosses its public entry (loss.h): per-token inputs, options, how the
// fused loss is tiled, results, stats and the buffers a caller may supply.
#pragma once
#include <ATen/ATen.h>

#include "loss/options.h"

namespace swerl {

// Per-token inputs, [T] each, CPU, contiguous. targets int64; the rest float32.
// ref_logprobs is needed only when options.has_kl().
struct PolicyLossInputs {
  at::Tensor targets, old_logprobs, advantages, weights, ref_logprobs;
};

// Means over the masked tokens (0 when there are none).
struct LossStats {
  double loss = 0, approx_kl = 0, clip_frac_low = 0, clip_frac_high = 0;
  double ratio_mean = 0, ratio_max = 0, entropy_mean = 0;
  int64_t masked_tokens = 0;
};

struct PolicyLossResult {
  at::Tensor logprobs, entropy;  // [T] fp32
  LossStats stats;
  at::Tensor grad_logits;  // [T, V] fp32 (policy_loss only)
};

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
  at::Tensor logit_coef, entropy_coef; // [T] fp32 (token_math.h's TokenOutcome)
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

struct FusedLinearGrads {
  at::Tensor grad_hidden;  // [T, H] in the operands' dtype
  at::Tensor grad_weight;  // [V, H] float32 (accumulated over token tiles in fp32)
};

}  // namespace swerl
