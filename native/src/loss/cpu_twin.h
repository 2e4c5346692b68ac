// The CPU twin of the CUDA fused loss (loss/fused_loss.cu): the same plan
// (tile_plan.h) over host memory, with OpenBLAS GEMMs through libtorch and the
// element-wise steps as loops over rows. It is also the CPU path of the fused loss.
#pragma once
#include "loss/tile_plan.h"

namespace swerl::fused {

size_t cpu_forward_workspace_bytes(const Problem& problem);
size_t cpu_backward_workspace_bytes(const Problem& problem);
void cpu_forward(const Problem& problem, const ForwardIO& io, void* workspace);
void cpu_backward(const Problem& problem, const BackwardIO& io, void* workspace);

// Two of the twin's element-wise steps on their own, for the materialized loss (one tile
// spanning the vocabulary): fold scaled logits into each row's state; overwrite them with
// d Loss / d z of the tokens ids (io's per-token arrays are indexed by id).
void cpu_absorb_tile(const float* scores, int64_t rows, int64_t cols, const int64_t* targets,
                     int64_t v0, RowSoftmax* state);
void cpu_logit_grad_tile(float* scores, int64_t rows, int64_t cols, const int32_t* ids,
                         int64_t v0, const int64_t* targets, const BackwardIO& io);

// The per-token part over raw [n] arrays (ref_logprobs null when no KL): fills logit_coef and
// entropy_coef, returns the sums. The twin of the CUDA token-terms kernel. Parallel over
// tokens; the sums are reduced serially in token order, so the result does not depend on the
// thread count.
LossSums cpu_token_terms(int64_t n, const float* logprobs, const float* entropy,
                         const float* old_logprobs, const float* advantages, const float* weights,
                         const float* ref_logprobs, const LossOptions& options, float* logit_coef,
                         float* entropy_coef);

}  // namespace swerl::fused
