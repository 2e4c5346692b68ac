// The CUDA kernels' ABI: plain structs, raw device pointers, sizes and a stream; no libtorch
// and no cuBLAS types, so each .cu file compiles alone with nvcc (CI compiles every one on
// every run) and the same plan runs on the CPU (native/src/loss/cpu_twin.cc, the twin).
// Errors throw swerl::Error with code ERR_SWERL_CUDA (or ERR_SWERL_INVALID_ARG).
#pragma once
#include <cstddef>
#include <cstdint>

#include "math/advantages.h"
#include "loss/tile_plan.h"
#include "math/token_weights.h"

typedef struct CUstream_st* cudaStream_t;  // as cuda_runtime_api.h declares it

namespace swerl::cuda {

// The GEMM the fused loss is built on, supplied by the caller (cuBLAS in the addon and the
// benchmark): C = alpha op(A) op(B) + beta C, column-major, C fp32, beta = 0 ignores C.
// Returns 0 on success, else the library's status code.
struct Gemm {
  int (*fn)(void* context, fused::Op op_a, fused::Op op_b, int64_t m, int64_t n, int64_t k,
            float alpha, const void* a, fused::Dtype a_type, int64_t lda, const void* b,
            fused::Dtype b_type, int64_t ldb, float beta, float* c, int64_t ldc);
  void* context;
};

// The fused linear GRPO++ loss (loss/tile_plan.h). Every pointer of problem and io is on the
// device, io.sums included. The workspace is device memory of the size the query returns.
size_t fused_forward_workspace_bytes(const fused::Problem& problem);
size_t fused_backward_workspace_bytes(const fused::Problem& problem);
void fused_forward(const fused::Problem& problem, const fused::ForwardIO& io, void* workspace,
                   cudaStream_t stream, Gemm gemm);
// Synchronizes the stream once, to learn how many tokens have a nonzero coefficient.
void fused_backward(const fused::Problem& problem, const fused::BackwardIO& io, void* workspace,
                    cudaStream_t stream, Gemm gemm);

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
