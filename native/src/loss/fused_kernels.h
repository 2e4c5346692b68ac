// The fused linear GRPO++ loss's CUDA kernels (loss/fused_loss.cu), behind an ABI of plain
// structs, raw device pointers, sizes and a stream: no libtorch and no cuBLAS types, so the .cu
// compiles alone with nvcc (CI compiles it on every run) and the same plan (loss/tile_plan.h)
// runs on the CPU (loss/cpu_twin.cc, the twin). Errors throw swerl::Error with code
// ERR_SWERL_CUDA (or ERR_SWERL_INVALID_ARG).
#pragma once
#include <cstddef>
#include <cstdint>

#include "core/cuda_stream.h"
#include "loss/tile_plan.h"

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

// Every pointer of problem and io is on the device, io.sums included. The workspace is device
// memory of the size the query returns.
size_t fused_forward_workspace_bytes(const fused::Problem& problem);
size_t fused_backward_workspace_bytes(const fused::Problem& problem);
void fused_forward(const fused::Problem& problem, const fused::ForwardIO& io, void* workspace,
                   cudaStream_t stream, Gemm gemm);
// Synchronizes the stream once, to learn how many tokens have a nonzero coefficient.
void fused_backward(const fused::Problem& problem, const fused::BackwardIO& io, void* workspace,
                    cudaStream_t stream, Gemm gemm);

}  // namespace swerl::cuda
