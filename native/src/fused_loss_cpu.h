// The CPU twin of the CUDA fused loss (native/cuda/fused_loss.cu): the same plan
// (fused_loss_plan.h) over host memory, with OpenBLAS GEMMs through libtorch and the
// element-wise steps as loops over rows. It is also the CPU path of the fused loss.
#pragma once
#include "fused_loss_plan.h"

namespace swerl::fused {

size_t cpu_forward_workspace_bytes(const Problem& problem);
size_t cpu_backward_workspace_bytes(const Problem& problem);
void cpu_forward(const Problem& problem, const ForwardIO& io, void* workspace);
void cpu_backward(const Problem& problem, const BackwardIO& io, void* workspace);

}  // namespace swerl::fused
