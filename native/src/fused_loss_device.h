// Runs the fused-loss plan where its tensors live: the CPU twin on the CPU, the CUDA kernels
// (native/cuda) with cuBLAS on the current CUDA stream. The workspace comes from libtorch's
// allocator (the caching allocator on CUDA), so it is reused across calls.
#pragma once
#include <ATen/ATen.h>

#include "fused_loss_plan.h"

namespace swerl {

// Fills io.sums itself (and returns them, on the host). workspace: kByte on the device of at
// least fused_workspace_bytes, or undefined to allocate one.
LossSums run_fused_forward(const at::Device& device, const fused::Problem& problem,
                           fused::ForwardIO io, const at::Tensor& workspace = {});
void run_fused_backward(const at::Device& device, const fused::Problem& problem,
                        const fused::BackwardIO& io, const at::Tensor& workspace = {});
size_t fused_workspace_bytes(const at::Device& device, const fused::Problem& problem, bool backward);

// The advantages and token-weights kernels over CUDA tensors (rewards float32, groups int32;
// mask uint8, sequence ids int32); results on the same device.
at::Tensor cuda_advantages(const at::Tensor& rewards, const at::Tensor& groups, int estimator);
at::Tensor cuda_token_weights(const at::Tensor& mask, const at::Tensor& sequence_ids,
                              int32_t num_sequences, int aggregation, double max_length,
                              double global_sequences, double global_masked_tokens);

// Whether this build has the CUDA kernels (SWERL_WITH_CUDA).
bool has_cuda_kernels();

}  // namespace swerl
