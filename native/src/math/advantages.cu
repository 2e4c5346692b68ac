// Group-relative advantages on the GPU (CPU twin: native/src/math/advantages.cc). One thread per
// trajectory scans the whole batch for its group in index order, so each group's mean and
// deviation are summed in the same order as on the CPU, with no atomics.
#include <cuda_runtime.h>

#include "core/cuda_check.cuh"
#include "math/cuda_kernels.h"

namespace swerl::cuda {

namespace {

__global__ void advantages_kernel(const float* __restrict__ rewards,
                                  const int32_t* __restrict__ groups, int64_t n,
                                  AdvantageEstimator estimator, float* __restrict__ out) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const int32_t group = groups[i];
  double sum = 0, size = 0;
  for (int64_t j = 0; j < n; ++j) {
    if (groups[j] != group) continue;
    sum += rewards[j];
    size += 1;
  }
  if (size < 2) {
    out[i] = 0.0f;
    return;
  }
  const double mean = sum / size;
  double sq_dev = 0;
  if (estimator == AdvantageEstimator::Grpo) {
    for (int64_t j = 0; j < n; ++j) {
      if (groups[j] != group) continue;
      const double d = rewards[j] - mean;
      sq_dev += d * d;
    }
  }
  out[i] = advantage_of(estimator, rewards[i] - mean, size, mean, sq_dev);
}

}  // namespace

void advantages(const float* rewards, const int32_t* groups, int64_t n,
                AdvantageEstimator estimator, float* out, cudaStream_t stream) {
  if (n < 0) throw_invalid("advantages: n must be >= 0");
  if (!is_advantage_estimator(estimator)) throw_invalid("unknown advantage estimator");
  if (n == 0) return;
  advantages_kernel<<<blocks_for(n, 256), 256, 0, stream>>>(rewards, groups, n, estimator, out);
  check_launch("advantages_kernel");
}

}  // namespace swerl::cuda
