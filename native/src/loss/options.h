// Options of the policy-gradient loss, as plain typed fields (validated and defaulted in JS;
// checked again at the loss's entry, loss.cc, which refuses any left unset). Plain data: the CUDA kernels take it by value.
#pragma once
#include <cmath>
#include <limits>

#include "core/swerl_hd.h"

namespace swerl {

enum class KlKind { Unset = 0, K1 = 1, K2 = 2, K3 = 3 };

// What each token's loss is: the clipped policy-gradient surrogate (RL), or its negative
// log-likelihood (SFT, rejection fine-tuning), where the advantage and the clip play no part.
enum class Objective { Unset = -1, PolicyGradient = 0, Nll = 1 };

// A field nobody set. There are no defaults here: JS resolves every field (LOSS_DEFAULTS in
// lib/math/policy-loss.ts is their one table), and the loss's entry (loss.cc) refuses a field
// left unset, so a caller that forgets one gets an error rather than a value chosen in C++.
inline constexpr double kUnsetOption = std::numeric_limits<double>::quiet_NaN();

struct LossOptions {
  Objective objective = Objective::Unset;
  double clip_low = kUnsetOption;      // epsilon_low
  double clip_high = kUnsetOption;     // epsilon_high; +infinity allowed
  double dual_clip = kUnsetOption;     // c > 1 enables the dual clip; 0 = off
  double temperature = kUnsetOption;
  double entropy_coef = kUnsetOption;  // eta: the loss gets -eta * sum_t w_t H_t
  double kl_coef = kUnsetOption;       // beta: the loss gets +beta * sum_t w_t KL_t (needs ref logprobs)
  KlKind kl_kind = KlKind::Unset;

  SWERL_HD bool has_dual_clip() const { return dual_clip > 0.0; }
  SWERL_HD bool has_kl() const { return kl_coef != 0.0; }
};

}  // namespace swerl
