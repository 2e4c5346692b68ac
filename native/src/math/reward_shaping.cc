#include "math/reward_shaping.h"

#include "core/swerl_error.h"
#include "math/advantages.h"

namespace swerl {

bool is_compact_filtered(Termination reason) {
  return reason == Termination::MaxContext || reason == Termination::MaxSteps ||
         reason == Termination::Timeout;
}

CompactFilterResult compact_filter(const float* rewards, const uint8_t* reasons, int64_t n) {
  CompactFilterResult out{std::vector<float>(rewards, rewards + n), std::vector<uint8_t>(n, 0)};
  for (int64_t i = 0; i < n; ++i) {
    if (reasons[i] >= kTerminationCount) throw_invalid("termination reason code out of range");
    if (is_compact_filtered(Termination(reasons[i]))) {
      out.rewards[i] = 0.0f;
      out.filtered[i] = 1;
    }
  }
  return out;
}

std::vector<uint8_t> mask_filtered_sequences(const uint8_t* mask, const int32_t* sequence_ids,
                                             int64_t tokens, const std::vector<uint8_t>& filtered) {
  std::vector<uint8_t> out(tokens);
  const int64_t sequences = int64_t(filtered.size());
  for (int64_t t = 0; t < tokens; ++t) {
    const int32_t s = sequence_ids[t];
    if (s < 0 || s >= sequences) throw_invalid("sequence id out of range");
    out[t] = filtered[s] ? 0 : (mask[t] ? 1 : 0);
  }
  return out;
}

std::vector<float> turn_penalty(const float* rewards, const int32_t* turns, int64_t n,
                                double threshold, double max_turns) {
  if (!(max_turns > threshold)) throw_invalid("maxTurns must be greater than threshold");
  std::vector<float> out(n);
  for (int64_t i = 0; i < n; ++i) {
    const double penalty = turns[i] < threshold ? 0.0 : (threshold - turns[i]) / (max_turns - threshold);
    out[i] = float(rewards[i] + penalty);
  }
  return out;
}

std::vector<float> overlong_penalty(const float* rewards, const int32_t* lengths, int64_t n,
                                    double max_length, double buffer_length) {
  if (!(buffer_length > 0 && buffer_length <= max_length))
    throw_invalid("bufferLength must be in (0, maxLength]");
  const double soft_start = max_length - buffer_length;
  std::vector<float> out(n);
  for (int64_t i = 0; i < n; ++i) {
    double penalty = 0.0;
    if (lengths[i] > max_length) penalty = -1.0;
    else if (lengths[i] > soft_start) penalty = (soft_start - lengths[i]) / buffer_length;
    out[i] = float(rewards[i] + penalty);
  }
  return out;
}

std::vector<uint8_t> keep_informative_groups(const float* rewards, const int32_t* groups,
                                             int64_t n) {
  int32_t num_groups = 0;
  const std::vector<int32_t> g = dense_group_index(groups, n, &num_groups);
  std::vector<int64_t> first(num_groups, -1);
  std::vector<uint8_t> varies(num_groups, 0);
  for (int64_t i = 0; i < n; ++i) {
    if (first[g[i]] < 0) first[g[i]] = i;
    else if (rewards[i] != rewards[first[g[i]]]) varies[g[i]] = 1;
  }
  std::vector<uint8_t> keep(n);
  for (int64_t i = 0; i < n; ++i) keep[i] = varies[g[i]];
  return keep;
}

std::vector<uint8_t> keep_nonzero_advantages(const float* advantages, int64_t n) {
  std::vector<uint8_t> keep(n);
  for (int64_t i = 0; i < n; ++i) keep[i] = advantages[i] != 0.0f;
  return keep;
}

}  // namespace swerl
