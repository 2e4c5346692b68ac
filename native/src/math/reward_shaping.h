// Reward shaping and group filters applied to whole trajectories before advantages
// (docs/loss.md, "Truncation policies" and "Group filters").
#pragma once
#include <cstdint>
#include <vector>

namespace swerl {

// Same order as TERMINATION_REASONS in lib/math/reward-shaping.ts.
enum class Termination : uint8_t {
  Submitted = 0, MaxSteps = 1, MaxContext = 2, Timeout = 3, EnvTimeout = 4, Error = 5
};
constexpr uint8_t kTerminationCount = 6;

// DeepSWE compact filtering: true for max_context, max_steps and timeout.
bool is_compact_filtered(Termination reason);

struct CompactFilterResult {
  std::vector<float> rewards;     // 0 for filtered trajectories
  std::vector<uint8_t> filtered;  // 1 = the trajectory's tokens leave the loss
};
CompactFilterResult compact_filter(const float* rewards, const uint8_t* reasons, int64_t n);

// Zeroes mask[t] for every token whose sequence is filtered.
std::vector<uint8_t> mask_filtered_sequences(const uint8_t* mask, const int32_t* sequence_ids,
                                             int64_t tokens, const std::vector<uint8_t>& filtered);

// Nebius turn penalty: 0 if turns < threshold, else (threshold - turns) / (max_turns - threshold).
std::vector<float> turn_penalty(const float* rewards, const int32_t* turns, int64_t n,
                                double threshold, double max_turns);

// DAPO soft overlong penalty over response lengths.
std::vector<float> overlong_penalty(const float* rewards, const int32_t* lengths, int64_t n,
                                    double max_length, double buffer_length);

// DAPO dynamic sampling: keep[i] = 0 for every member of a group whose rewards are all equal.
std::vector<uint8_t> keep_informative_groups(const float* rewards, const int32_t* groups,
                                             int64_t n);

// Nebius: keep[i] = 0 where the advantage is exactly 0.
std::vector<uint8_t> keep_nonzero_advantages(const float* advantages, int64_t n);

}  // namespace swerl
