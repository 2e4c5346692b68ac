// The GRPO++ policy loss, forward and backward in one pass (docs/loss.md): the one header the
// bindings, the model and the tools include. Every entry checks its inputs and options first
// (check_policy_loss_inputs, the one place options are checked); the work then runs on the
// operands' device (loss.cc): the CPU twin (cpu_twin.cc) or the CUDA kernels.
//  - policy_loss: over materialized logits [T, V].
//  - fused_linear_policy_loss_*: over hidden states [T, H] and the LM head [V, H], streaming
//    (token chunk x vocab chunk) tiles (tile_plan.h): the forward keeps only lse and entropy
//    per token, the backward recomputes each tile and skips tokens whose coefficients are zero.
#pragma once
#include <ATen/ATen.h>

#include <string>

#include "loss/autograd.h"      // both losses as libtorch autograd functions, for C++ models
#include "loss/plain_loss.h"    // the same loss in plain libtorch ops: the independent check
#include "loss/types.h"         // inputs, options, tiles, results, stats and buffers

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

// ---- the loss API's value guards (native/src/bind/bind_loss.cc runs them; lib/math/ checks the
// inputs first): per-token inputs in range before the loss, and every number handed back finite
// after it, or ERR_SWERL_NUMERIC naming the first one that is not. The checks after the loss cost
// O(T) and O(T x H) on the operands' device, never a pass over T x V or V x H, unless a bound
// says the gradient could have overflowed (docs/loss.md, "Inputs and options").

// How far above 0 a logprob may be: fp32 log-softmax rounds a near-certain token's logprob a
// few ulps above 0, never more (lib/math/validate.ts LOGPROB_SLACK is the same).
constexpr double kLogprobSlack = 1e-4;

// oldLogprobs, refLogprobs (null when no KL) finite and <= kLogprobSlack; advantages finite;
// weights finite and >= 0. n values each. Throws ERR_SWERL_INVALID_ARG naming name[i].
void check_token_values(int64_t n, const float* old_logprobs, const float* advantages,
                        const float* weights, const float* ref_logprobs);

// Names what is checked in an error: the API ("fusedLinearPolicyLoss") and the operands'
// dtype, whose range the fix depends on.
struct NumericScope {
  std::string api;
  at::ScalarType dtype = at::kFloat;
};

// The loss and stats, then logprobs and entropy [T]: finite, else ERR_SWERL_NUMERIC.
void require_finite_forward(const LossStats& stats, const at::Tensor& logprobs,
                            const at::Tensor& entropy, const NumericScope& scope);

// Every element of t finite (one reduction; the index is found only on failure).
void require_finite(const at::Tensor& t, const char* name, const NumericScope& scope);

// Whether dW = dZ^T X of the fused backward is finite without looking at it: true when its
// dZ is finite (gradHidden = dZ W came back finite) and T max|dZ| max|X| stays well inside
// float32, with |dZ_tj| <= |c_t| + |e_t| (1/e + |H_t|) from the forward's per-token terms.
bool fused_grad_weight_bounded(const FusedLinearForward& forward, const at::Tensor& hidden);

}  // namespace swerl
