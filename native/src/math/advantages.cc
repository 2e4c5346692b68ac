#include "math/advantages.h"

#include <cmath>
#include <unordered_map>

#include "core/swerl_error.h"

namespace swerl {

std::vector<int32_t> dense_group_index(const int32_t* groups, int64_t n, int32_t* num_groups) {
  std::unordered_map<int32_t, int32_t> index;
  std::vector<int32_t> dense(n);
  for (int64_t i = 0; i < n; ++i) {
    auto [it, inserted] = index.try_emplace(groups[i], int32_t(index.size()));
    dense[i] = it->second;
  }
  *num_groups = int32_t(index.size());
  return dense;
}

std::vector<float> compute_advantages(const float* rewards, const int32_t* groups, int64_t n,
                                      AdvantageEstimator estimator) {
  if (!is_advantage_estimator(estimator)) throw_invalid("unknown advantage estimator");
  int32_t num_groups = 0;
  const std::vector<int32_t> g = dense_group_index(groups, n, &num_groups);

  std::vector<double> sum(num_groups, 0.0), count(num_groups, 0.0), sq_dev(num_groups, 0.0);
  for (int64_t i = 0; i < n; ++i) {
    sum[g[i]] += rewards[i];
    count[g[i]] += 1.0;
  }
  std::vector<double> mean(num_groups);
  for (int32_t k = 0; k < num_groups; ++k) mean[k] = sum[k] / count[k];
  for (int64_t i = 0; i < n; ++i) {
    const double d = rewards[i] - mean[g[i]];
    sq_dev[g[i]] += d * d;
  }

  std::vector<float> out(n);
  for (int64_t i = 0; i < n; ++i) {
    const int32_t k = g[i];
    const double size = count[k], centered = rewards[i] - mean[k];
    if (size < 2) {
      out[i] = 0.0f;
      continue;
    }
    out[i] = advantage_of(estimator, centered, size, mean[k], sq_dev[k]);
  }
  return out;
}

}  // namespace swerl
