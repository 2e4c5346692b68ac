// The loss options the C++ checks and benchmarks run with. LossOptions has no defaults (JS
// resolves every field), so a tool names each value it tests: here the GRPO++ case, DeepSWE's
// clip-higher 0.2 / 0.28 with nothing else on.
#pragma once
#include "loss/options.h"

namespace swerl {

inline LossOptions grpo_pp_case() {
  LossOptions o;
  o.objective = Objective::PolicyGradient;
  o.clip_low = 0.2;
  o.clip_high = 0.28;
  o.dual_clip = 0.0;
  o.temperature = 1.0;
  o.entropy_coef = 0.0;
  o.kl_coef = 0.0;
  o.kl_kind = KlKind::K3;
  return o;
}

}  // namespace swerl
