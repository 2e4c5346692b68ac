// Group-relative advantages from outcome rewards (docs/loss.md, "Advantages").
#pragma once
#include <math.h>

#include <cstdint>
#include <vector>

#include "core/swerl_hd.h"

namespace swerl {

enum class AdvantageEstimator { Grpo = 0, DrGrpo = 1, Rloo = 2, MaxRl = 3 };

inline bool is_advantage_estimator(AdvantageEstimator e) {
  return e == AdvantageEstimator::Grpo || e == AdvantageEstimator::DrGrpo ||
         e == AdvantageEstimator::Rloo || e == AdvantageEstimator::MaxRl;
}

// One trajectory's advantage from its group's statistics (group size >= 2): centered = R_i -
// mean, squared_deviation = sum over the group of (R_j - mean)^2 (read by grpo only).
// maxrl divides by the group's mean reward (MaxRL's: a task solved at rate p weighs w(p), about
// 1/p, docs/loss.md); a group with no reward above 0 has nothing to learn from and gets 0.
SWERL_HD inline float advantage_of(AdvantageEstimator estimator, double centered, double size,
                                   double mean, double squared_deviation) {
  switch (estimator) {
    case AdvantageEstimator::Grpo:
      return float(centered / (sqrt(squared_deviation / (size - 1.0)) + 1e-6));
    case AdvantageEstimator::DrGrpo:
      return float(centered);
    case AdvantageEstimator::Rloo:
      return float(size / (size - 1.0) * centered);
    case AdvantageEstimator::MaxRl:
      return mean > 0.0 ? float(centered / mean) : 0.0f;
  }
  return 0.0f;
}

// rewards[i] belongs to group groups[i] (any int32 id). A group of one gets 0.
std::vector<float> compute_advantages(const float* rewards, const int32_t* groups, int64_t n,
                                      AdvantageEstimator estimator);

// Dense group index per trajectory (0..G-1, in order of first appearance) and G.
std::vector<int32_t> dense_group_index(const int32_t* groups, int64_t n, int32_t* num_groups);

}  // namespace swerl
