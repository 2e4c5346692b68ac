// RMSNorm, and the q/k norm fused with rotary embeddings, as CUDA kernels (model/norm.cu) behind
// an ABI of raw device pointers, sizes and a stream: no libtorch, so norm.cu compiles alone with
// nvcc. Their CPU twins are model/norm.cc's norm_rows_forward / norm_rows_backward.
//
// The work is `rows` rows of `width` values. Row r belongs to token r / heads (heads = 1 for the
// hidden-state norm, the number of heads for q and k); its rotary row is token % rotary_rows
// (rotary_rows = T for tables shared by every sequence, B * T for one table per row).
// Forward, per row, rounding where Hugging Face's bf16 modules round:
//   n = x * rsqrt(mean(x^2) + eps)            (float32)
//   v = weight ? round(w * round(n)) : x      (Qwen3RMSNorm: weight * n.to(dtype))
//   y = rotary ? round(round(v * cos) + round(rotate_half(v) * sin)) : v
// Backward in float32 without intermediate rounding; dweight is summed per block into
// `partials` [blocks, width] (the caller adds the blocks up).
#pragma once
#include <cstddef>
#include <cstdint>

#include "core/cuda_stream.h"

namespace swerl {

enum class NormDtype { Float32, BFloat16 };

struct NormRows {
  NormDtype dtype = NormDtype::Float32;
  int64_t rows = 0, width = 0;
  int64_t heads = 1;        // rows per token
  int64_t rotary_rows = 0;  // rows of cos and sin; 0: no rotary
  float eps = 1e-6f;
};

namespace cuda {

// The widest row norm_rows_* take with rotary (a warp stages its row in shared memory).
constexpr int64_t kMaxRotaryWidth = 1024;
// Blocks of the backward, hence rows of `partials`, for this shape.
int norm_rows_backward_blocks(const NormRows& shape);

// weight, cos, sin may be null (no norm; no rotary when rotary_rows == 0); rstd [rows] may be
// null (nothing kept for a backward).
void norm_rows_forward(const NormRows& shape, const void* x, const void* weight, const void* cos,
                       const void* sin, void* y, float* rstd, cudaStream_t stream);
// dy, x as the forward's; dx [rows, width]; partials [norm_rows_backward_blocks, width] float32
// when weight is given.
void norm_rows_backward(const NormRows& shape, const void* dy, const void* x, const void* weight,
                        const void* cos, const void* sin, const float* rstd, void* dx,
                        float* partials, cudaStream_t stream);

}  // namespace cuda
}  // namespace swerl
