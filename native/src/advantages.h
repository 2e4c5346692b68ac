// Group-relative advantages from outcome rewards (specs/loss.md, "Advantages").
#pragma once
#include <cstdint>
#include <vector>

namespace swerl {

enum class AdvantageEstimator { Grpo = 0, DrGrpo = 1, Rloo = 2 };

// rewards[i] belongs to group groups[i] (any int32 id). A group of one gets 0.
std::vector<float> compute_advantages(const float* rewards, const int32_t* groups, int64_t n,
                                      AdvantageEstimator estimator);

// Dense group index per trajectory (0..G-1, in order of first appearance) and G.
std::vector<int32_t> dense_group_index(const int32_t* groups, int64_t n, int32_t* num_groups);

}  // namespace swerl
