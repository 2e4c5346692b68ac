#include "logit_tile.h"

#include <limits>

namespace swerl {

RunningSoftmax::RunningSoftmax(int64_t rows, const at::Tensor& like)
    : max(at::full({rows}, -std::numeric_limits<float>::infinity(), like.options().dtype(at::kFloat))),
      sum_exp(at::zeros({rows}, like.options().dtype(at::kFloat))),
      sum_exp_logit(at::zeros({rows}, like.options().dtype(at::kFloat))),
      target_logit(at::zeros({rows}, like.options().dtype(at::kFloat))) {}

void RunningSoftmax::absorb(const at::Tensor& s, const at::Tensor& targets, int64_t v0) {
  const int64_t cols = s.size(1);
  const at::Tensor new_max = at::maximum(max, std::get<0>(s.max(1)));
  const at::Tensor rescale = (max - new_max).exp_();
  const at::Tensor e = (s - new_max.unsqueeze(1)).exp_();
  sum_exp.mul_(rescale).add_(e.sum(1));
  sum_exp_logit.mul_(rescale).add_(e.mul_(s).sum(1));
  max = new_max;

  const at::Tensor local = targets - v0;
  const at::Tensor here = (local >= 0).logical_and_(local < cols);
  const at::Tensor picked = s.gather(1, local.clamp(0, cols - 1).unsqueeze(1)).squeeze(1);
  target_logit = at::where(here, picked, target_logit);
}

void RunningSoftmax::finish(at::Tensor& lse, at::Tensor& entropy) const {
  lse = max + sum_exp.log();
  entropy = lse - sum_exp_logit / sum_exp;
}

at::Tensor logit_grad_tile(at::Tensor s, const at::Tensor& lse, const at::Tensor& entropy,
                           const at::Tensor& logit_coef, const at::Tensor& entropy_coef,
                           bool has_entropy_term, const at::Tensor& targets, int64_t v0) {
  const int64_t cols = s.size(1);
  const at::Tensor lse_col = lse.unsqueeze(1);
  at::Tensor grad;
  if (has_entropy_term) {
    // p (c + e (s - lse + H)), with p = exp(s - lse)
    at::Tensor p = (s - lse_col).exp_();
    grad = s.sub_(lse_col).add_(entropy.unsqueeze(1)).mul_(entropy_coef.unsqueeze(1));
    grad.add_(logit_coef.unsqueeze(1)).mul_(p);
  } else {
    grad = s.sub_(lse_col).exp_().mul_(logit_coef.unsqueeze(1));
  }

  const at::Tensor local = targets - v0;
  const at::Tensor rows = ((local >= 0).logical_and_(local < cols)).nonzero().squeeze(1);
  if (rows.numel() > 0) {
    grad.index_put_({rows, local.index_select(0, rows)}, -logit_coef.index_select(0, rows),
                    /*accumulate=*/true);
  }
  return grad;
}

}  // namespace swerl
