// Row-wise softmax pieces over a tile of scaled logits S = Z / tau (rows = tokens,
// columns = a slice [v0, v0 + cols) of the vocabulary). The materialized loss uses one tile
// of the whole vocabulary; the fused loss streams tiles and never holds T x V.
#pragma once
#include <ATen/ATen.h>

namespace swerl {

// Online log-sum-exp with the entropy's running dot product, per row:
// max, sum_exp = sum exp(s - max), sum_exp_logit = sum exp(s - max) * s.
struct RunningSoftmax {
  at::Tensor max, sum_exp, sum_exp_logit, target_logit;

  // Accumulators are float32 on the device of `like`.
  RunningSoftmax(int64_t rows, const at::Tensor& like);
  // Folds a tile in; picks up s_{t, y_t} for the rows whose target lies in this tile.
  void absorb(const at::Tensor& scaled_logits, const at::Tensor& targets, int64_t v0);
  // lse_t and H_t = lse_t - sum_j p_tj s_tj.
  void finish(at::Tensor& lse, at::Tensor& entropy) const;
};

// d Loss / d Z on the tile: c_t (p_tj - [j = y_t]) + e_t p_tj (s_tj - lse_t + H_t).
// Consumes scaled_logits (overwritten in place; the result aliases it).
at::Tensor logit_grad_tile(at::Tensor scaled_logits, const at::Tensor& lse,
                           const at::Tensor& entropy, const at::Tensor& logit_coef,
                           const at::Tensor& entropy_coef, bool has_entropy_term,
                           const at::Tensor& targets, int64_t v0);

}  // namespace swerl
