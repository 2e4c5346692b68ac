// Runs the fused-loss plan where its tensors live: the CPU twin on the CPU, the CUDA kernels
// (native/cuda) with cuBLAS on the current CUDA stream. The workspace comes from libtorch's
// allocator (the caching allocator on CUDA), so it is reused across calls.
#pragma once
#include <ATen/ATen.h>

#include "loss/tile_plan.h"

namespace swerl {

// Fills io.sums itself (and returns them, on the host). workspace: kByte on the device of at
// least fused_workspace_bytes, or undefined to allocate one.
LossSums run_fused_forward(const at::Device& device, const fused::Problem& problem,
                           fused::ForwardIO io, const at::Tensor& workspace = {});
void run_fused_backward(const at::Device& device, const fused::Problem& problem,
                        const fused::BackwardIO& io, const at::Tensor& workspace = {});
size_t fused_workspace_bytes(const at::Device& device, const fused::Problem& problem, bool backward);

}  // namespace swerl
