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

// Causal attention over a fresh sequence (training, prefill) without a [T, T] mask. libtorch
// 2.x: SDPA with is_causal (flash / memory-efficient kernels on CUDA). libtorch 1.x: up to
// four blocks of queries, the masked dense path (as before); beyond, query blocks against their
// keys only, with a backward that recomputes each block's probabilities from the saved
// log-sum-exp, so memory grows with T x block, not T x T. block_tokens 0: the default,
// causal_block_tokens().
at::Tensor causal_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, int64_t block_tokens = 0);

// Queries per block of the blockwise path: $SWERL_ATTENTION_BLOCK, else 512.
int64_t causal_block_tokens();

}  // namespace swerl
