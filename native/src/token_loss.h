// The per-token part of the GRPO++ loss over a batch, on the CPU (the per-token math itself
// is token_math.h, shared with the CUDA kernels).
#pragma once
#include <ATen/ATen.h>

#include "loss_options.h"
#include "token_math.h"

namespace swerl {

// Per-token quantities of a batch, from the logprobs and entropies of the forward pass.
struct TokenTerms {
  at::Tensor logit_coef;    // c_t (TokenOutcome)  [T] fp32
  at::Tensor entropy_coef;  // e_t (TokenOutcome)  [T] fp32
  LossSums sums;            // the loss, every term included, and the stats' sums
};

// The same over raw [n] arrays (ref_logprobs null when no KL): fills logit_coef and
// entropy_coef, returns the sums. The CPU twin of the CUDA token-terms kernel.
LossSums token_terms_into(int64_t n, const float* logprobs, const float* entropy,
                          const float* old_logprobs, const float* advantages,
                          const float* weights, const float* ref_logprobs,
                          const LossOptions& options, float* logit_coef, float* entropy_coef);

// logprobs, entropy, old_logprobs, advantages, weights, ref_logprobs (undefined when no KL):
// [T] fp32 on CPU, contiguous. Parallel over tokens; the sums are reduced serially in token
// order, so the result does not depend on the thread count.
TokenTerms token_terms(const at::Tensor& logprobs, const at::Tensor& entropy,
                       const at::Tensor& old_logprobs, const at::Tensor& advantages,
                       const at::Tensor& weights, const at::Tensor& ref_logprobs,
                       const LossOptions& options);

}  // namespace swerl
