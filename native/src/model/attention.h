// Grouped-query scaled dot-product attention. q [B, nh, Tq, D]; k, v [B, nkv, Tk, D] with
// nh a multiple of nkv (query head h reads KV head h / (nh / nkv)). allowed: bool
// [B or 1, 1, Tq, Tk], true where a query may attend. Returns [B, nh, Tq, D].
#pragma once
#include <ATen/ATen.h>

#include <vector>

namespace swerl {

at::Tensor grouped_query_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                   const at::Tensor& allowed);

// One query per sequence (decode: q [B, nh, 1, D]) against the cache, on every libtorch as
// a grouped matmul: the query heads of a group read their KV head in place.
at::Tensor decode_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& allowed);

// [1, 1, T, T] lower-triangular: the causal mask of a fresh sequence.
at::Tensor causal_mask(int64_t tokens, at::Device device);

// Causal attention over a fresh sequence (training, prefill) without a [T, T] mask. libtorch
// 2.x: SDPA with is_causal (flash / memory-efficient kernels on CUDA). libtorch 1.x: up to
// four blocks of queries, the masked dense path (as before); beyond, query blocks against their
// keys only, with a backward that recomputes each block's probabilities from the saved
// log-sum-exp, so memory grows with T x block, not T x T. block_tokens 0: the default,
// causal_block_tokens().
at::Tensor causal_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, int64_t block_tokens = 0);

// Causal attention of the queries at positions [start, start + n) over the keys [0, start + n):
// a prompt's next chunk after the positions already in the cache. q [B, nh, n, D]; k, v
// [B, nkv, start + n, D]. For generation (no backward). libtorch 2.x: SDPA with the mask;
// 1.x: a block of queries at a time, so the scores take block x (start + n), never n x (start + n).
at::Tensor causal_attention_after(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, int64_t start,
                                  int64_t block_tokens = 0);

// Causal attention over sequences packed along dimension 2 (T = the sum of `segments`, the
// sequences' lengths): each attends to itself only, as if it were alone (block-diagonal
// causal). Empty segments: one sequence.
at::Tensor packed_causal_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                   const std::vector<int64_t>& segments);

// Queries per block of the blockwise path: $SWERL_ATTENTION_BLOCK, else 512.
int64_t causal_block_tokens();

}  // namespace swerl
