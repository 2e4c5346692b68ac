// Grouped-query scaled dot-product attention. q [B, nh, Tq, D]; k, v [B, nkv, Tk, D] with
// nh a multiple of nkv (query head h reads KV head h / (nh / nkv)). allowed: bool
// [B or 1, 1, Tq, Tk], true where a query may attend. Returns [B, nh, Tq, D].
#pragma once
#include <ATen/ATen.h>

namespace swerl {

at::Tensor grouped_query_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                   const at::Tensor& allowed);

// [1, 1, T, T] lower-triangular: the causal mask of a fresh sequence.
at::Tensor causal_mask(int64_t tokens, at::Device device);

}  // namespace swerl
