// The GRPO++ policy loss, forward and backward in one pass (docs/loss.md): the one header the
// bindings, the model and the tools include. Every entry checks its inputs and options first
// (check_policy_loss_inputs, the one place options are checked); the work then runs on the
// operands' device (device_dispatch.cc): the CPU twin (cpu_twin.cc) or the CUDA kernels.
//  - policy_loss: over materialized logits [T, V].
//  - fused_linear_policy_loss_*: over hidden states [T, H] and the LM head [V, H], streaming
//    (token chunk x vocab chunk) tiles (tile_plan.h): the forward keeps only lse and entropy
//    per token, the backward recomputes each tile and skips tokens whose coefficients are zero.
#pragma once
#include <ATen/ATen.h>

#include "loss/autograd.h"      // both losses as libtorch autograd functions, for C++ models
#include "loss/plain_loss.h"    // the same loss in plain libtorch ops: the independent check
#include "loss/types.h"         // inputs, options, tiles, results, stats and buffers
#include "loss/value_checks.h"  // values in range before the loss, finite after it

namespace swerl {

// The options' bounds, every field set (LossOptions has no defaults); throws swerl::Error naming
// the field. check_policy_loss_inputs runs it; a caller that reads the options before the loss
// does (Policy::train_step) runs it first.
void check_loss_options(const LossOptions& options);

// Shape and dtype checks every loss runs first, and the options' bounds; throws swerl::Error
// naming the field.
void check_policy_loss_inputs(const PolicyLossInputs& inputs, int64_t tokens, int64_t vocab,
                              const LossOptions& options);

PolicyLossResult policy_loss(const at::Tensor& logits, const PolicyLossInputs& inputs,
                             const LossOptions& options);

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

}  // namespace swerl
