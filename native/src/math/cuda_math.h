// The advantages and token-weights kernels (math/advantages.cu, math/token_weights.cu) over
// CUDA tensors; results on the same device. Their CPU twins are advantages.cc and
// token_weights.cc. In a build without the CUDA kernels both throw ERR_SWERL_CUDA.
#pragma once
#include <ATen/ATen.h>

namespace swerl {

// rewards float32 [n], groups int32 [n]; estimator as AdvantageEstimator.
at::Tensor cuda_advantages(const at::Tensor& rewards, const at::Tensor& groups, int estimator);
// mask uint8 [T], sequence ids int32 [T]; aggregation as Aggregation.
at::Tensor cuda_token_weights(const at::Tensor& mask, const at::Tensor& sequence_ids,
                              int32_t num_sequences, int aggregation, double max_length,
                              double global_sequences, double global_masked_tokens);

}  // namespace swerl
