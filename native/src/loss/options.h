// Options of the policy-gradient loss, as plain typed fields (validated and defaulted in JS;
// checked again at the loss's entry, loss.cc). Plain data: the CUDA kernels take it by value.
#pragma once
#include <cmath>
#include <limits>

#include "core/swerl_hd.h"

namespace swerl {

enum class KlKind { K1 = 1, K2 = 2, K3 = 3 };

// What each token's loss is: the clipped policy-gradient surrogate (RL), or its negative
// log-likelihood (SFT, rejection fine-tuning), where the advantage and the clip play no part.
enum class Objective { PolicyGradient = 0, Nll = 1 };

struct LossOptions {
  Objective objective = Objective::PolicyGradient;
  double clip_low = 0.2;    // epsilon_low
  double clip_high = 0.28;  // epsilon_high; +infinity allowed
  double dual_clip = 0.0;   // c > 1 enables the dual clip; 0 = off
  double temperature = 1.0;
  double entropy_coef = 0.0;  // eta: the loss gets -eta * sum_t w_t H_t
  double kl_coef = 0.0;       // beta: the loss gets +beta * sum_t w_t KL_t (needs ref logprobs)
  KlKind kl_kind = KlKind::K3;

  SWERL_HD bool has_dual_clip() const { return dual_clip > 0.0; }
  SWERL_HD bool has_kl() const { return kl_coef != 0.0; }
};

}  // namespace swerl
