// The loss API's value guards (native/src/bind/bind_loss.cc runs them; lib/math/ checks the
// inputs first): per-token inputs in range before the loss, and every number handed back finite
// after it, or ERR_SWERL_NUMERIC naming the first one that is not. The checks after the loss cost
// O(T) and O(T x H) on the operands' device, never a pass over T x V or V x H, unless a bound
// says the gradient could have overflowed (docs/loss.md, "Inputs and options").
#pragma once
#include <ATen/ATen.h>

#include <string>

#include "loss/types.h"

namespace swerl {

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
