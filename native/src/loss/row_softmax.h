// Per-row softmax pieces of the fused loss over tiles of scaled logits s = z / tau, one
// definition for the CPU twin and the CUDA kernels (docs/loss.md, "Gradient").
//
// A row's state after any number of logits: m = their max, se = sum exp(s - m) and
// sse = sum exp(s - m) (s - m). Keeping s - m (not s) in the entropy's running sum avoids the
// cancellation of lse - sum p s when logits are large. States merge exactly (up to rounding),
// so a row can be split across threads, blocks and vocabulary tiles in any fixed way.
#pragma once
#include <math.h>

#include "core/swerl_hd.h"

namespace swerl {

struct RowSoftmax {
  float max;
  float sum_exp;          // se; 0 only for a row that has seen no logit
  float sum_exp_shifted;  // sse
  float target_logit;     // s_{t, y_t}, once the tile holding y_t has been seen
};

SWERL_HD inline RowSoftmax row_softmax_empty() { return RowSoftmax{-HUGE_VALF, 0.0f, 0.0f, 0.0f}; }

SWERL_HD inline void row_softmax_push(RowSoftmax& a, float s) {
  if (a.sum_exp == 0.0f) {
    a.max = s;
    a.sum_exp = 1.0f;
    a.sum_exp_shifted = 0.0f;
  } else if (s <= a.max) {
    const float d = s - a.max, e = expf(d);
    a.sum_exp += e;
    a.sum_exp_shifted += e * d;
  } else {
    const float d = a.max - s, f = expf(d);
    a.sum_exp_shifted = f * (a.sum_exp_shifted + d * a.sum_exp);
    a.sum_exp = f * a.sum_exp + 1.0f;
    a.max = s;
  }
}

// Folds b's logits into a (target_logit is not merged: callers pick it where it lies).
SWERL_HD inline void row_softmax_merge(RowSoftmax& a, const RowSoftmax& b) {
  if (b.sum_exp == 0.0f) return;
  if (a.sum_exp == 0.0f) {
    a.max = b.max;
    a.sum_exp = b.sum_exp;
    a.sum_exp_shifted = b.sum_exp_shifted;
    return;
  }
  const float m = fmaxf(a.max, b.max);
  const float da = a.max - m, db = b.max - m;
  const float fa = expf(da), fb = expf(db);
  a.sum_exp_shifted = fa * (a.sum_exp_shifted + da * a.sum_exp) + fb * (b.sum_exp_shifted + db * b.sum_exp);
  a.sum_exp = fa * a.sum_exp + fb * b.sum_exp;
  a.max = m;
}

// lse = m + log se; H = lse - sum p s = log se - sse / se; logprob = s_y - lse.
SWERL_HD inline void row_softmax_finish(const RowSoftmax& a, float& lse, float& entropy,
                                        float& logprob) {
  const float log_se = logf(a.sum_exp);
  lse = a.max + log_se;
  entropy = log_se - a.sum_exp_shifted / a.sum_exp;
  logprob = a.target_logit - lse;
}

// d Loss / d z_tj on one element, from its scaled logit s:
// scale (c (p - [j = y]) + e p (s - lse + H)), p = exp(s - lse).
SWERL_HD inline float logit_grad(float s, float lse, float entropy, float logit_coef,
                                 float entropy_coef, bool has_entropy_term, bool is_target,
                                 float scale) {
  const float shifted = s - lse, p = expf(shifted);
  float g = logit_coef * (is_target ? p - 1.0f : p);
  if (has_entropy_term) g += entropy_coef * p * (shifted + entropy);
  return scale * g;
}

}  // namespace swerl
