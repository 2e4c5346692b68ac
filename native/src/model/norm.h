// The transformer's RMSNorms, and the q/k norm with rotary embeddings, in one place.
//
// On CUDA (float32 or bfloat16, kernels built) each is one kernel forward and one backward
// (model/norm.cu) under an autograd function; elsewhere the ATen composition Hugging Face's
// modules spell out, which is also the reference the kernel check holds the kernels to.
// norm_rows_forward / norm_rows_backward run one shape on either device: the CUDA kernels, or
// their CPU twins (plain loops with the same rounding points), for the kernel check.
#pragma once
#include <ATen/ATen.h>

#include "model/norm_kernels.h"

namespace swerl {

// Qwen3RMSNorm over the last dimension: weight * (x * rsqrt(mean(x^2) + eps)).to(x's dtype).
at::Tensor rms_norm(const at::Tensor& x, const at::Tensor& weight, double eps);
// x [B, T, heads, D] (q or k as projected): the per-head RMSNorm when weight is defined (Qwen3's
// q/k norm), then rotary embeddings with cos and sin [T, D] (shared by every row) or [B, T, D].
// Returns [B, T, heads, D].
at::Tensor norm_rotary(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& cos,
                       const at::Tensor& sin, double eps);
// Whether rms_norm and norm_rotary take the fused kernels for tensors like x. SWERL_ATEN_NORMS=1
// in the environment turns them off, so a benchmark can time both paths on one card.
bool fused_norms(const at::Tensor& x);

struct NormForward {
  at::Tensor y, rstd;  // y as x; rstd float32 [rows] (undefined without a weight)
};
struct NormBackward {
  at::Tensor dx, dweight;  // dweight float32 [width] (undefined without a weight)
};
// x, dy [rows, width] contiguous; weight [width] or undefined; cos, sin [rotary_rows, width]
// or undefined; all of one dtype (float32 or bfloat16) on one device. shape.dtype is set here.
NormForward norm_rows_forward(NormRows shape, const at::Tensor& x, const at::Tensor& weight,
                              const at::Tensor& cos, const at::Tensor& sin);
NormBackward norm_rows_backward(NormRows shape, const at::Tensor& dy, const at::Tensor& x,
                                const at::Tensor& weight, const at::Tensor& cos,
                                const at::Tensor& sin, const at::Tensor& rstd);

}  // namespace swerl
