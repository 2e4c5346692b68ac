// The advantages and token weights as CUDA kernels (math/advantages.cu, math/token_weights.cu),
// behind an ABI of raw device pointers, sizes and a stream: no libtorch, so each .cu compiles
// alone with nvcc; their CPU twins are math/advantages.cc and math/token_weights.cc. Errors
// throw swerl::Error with code ERR_SWERL_CUDA (or ERR_SWERL_INVALID_ARG).
#pragma once
#include <cstddef>
#include <cstdint>

#include "core/cuda_stream.h"
#include "math/advantages.h"
#include "math/token_weights.h"

namespace swerl::cuda {

// Group-relative advantages, as math/advantages.h; groups are any int32 ids. O(n^2) work, one
// thread per trajectory, no atomics: fine for the thousands of trajectories of a batch.
void advantages(const float* rewards, const int32_t* groups, int64_t n,
                AdvantageEstimator estimator, float* out, cudaStream_t stream);

// Token weights, as math/token_weights.h. Synchronizes once to report an out-of-range sequence id.
size_t token_weights_workspace_bytes(int32_t num_sequences);
void token_weights(const uint8_t* mask, const int32_t* sequence_ids, int64_t tokens,
                   int32_t num_sequences, const TokenWeightOptions& options, float* out,
                   void* workspace, cudaStream_t stream);

}  // namespace swerl::cuda
