#include "math/cuda_math.h"

#include "core/cuda_build.h"
#include "core/swerl_error.h"

#ifdef SWERL_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

#include "math/cuda_kernels.h"
#endif

namespace swerl {

#ifdef SWERL_WITH_CUDA
namespace {

// a and b: one value per trajectory (or token) each, of these dtypes, on one CUDA device.
void check_cuda_pair(const at::Tensor& a, at::ScalarType a_type, const at::Tensor& b,
                     at::ScalarType b_type, const char* message) {
  if (!a.is_cuda() || a.scalar_type() != a_type || b.scalar_type() != b_type || a.dim() != 1 ||
      b.sizes() != a.sizes() || b.device() != a.device())
    throw_invalid(message);
}

}  // namespace
#endif

at::Tensor cuda_advantages(const at::Tensor& rewards_in, const at::Tensor& groups_in, int estimator) {
#ifdef SWERL_WITH_CUDA
  check_cuda_pair(rewards_in, at::kFloat, groups_in, at::kInt,
                  "cuda_advantages: rewards float32 [n] and groups int32 [n] on one CUDA device");
  const c10::cuda::CUDAGuard guard(rewards_in.device());
  const at::Tensor rewards = rewards_in.contiguous(), groups = groups_in.contiguous();
  at::Tensor out = at::empty_like(rewards);
  cuda::advantages(rewards.data_ptr<float>(), groups.data_ptr<int32_t>(), rewards.numel(),
                   AdvantageEstimator(estimator), out.data_ptr<float>(),
                   at::cuda::getCurrentCUDAStream());
  return out;
#else
  throw_no_cuda_kernels();
#endif
}

at::Tensor cuda_token_weights(const at::Tensor& mask_in, const at::Tensor& ids_in, int32_t num_sequences,
                              int aggregation, double max_length, double global_sequences,
                              double global_masked_tokens) {
#ifdef SWERL_WITH_CUDA
  check_cuda_pair(mask_in, at::kByte, ids_in, at::kInt,
                  "cuda_token_weights: mask uint8 [T] and sequence ids int32 [T] on one CUDA device");
  const c10::cuda::CUDAGuard guard(mask_in.device());
  const at::Tensor mask = mask_in.contiguous(), ids = ids_in.contiguous();
  at::Tensor out = at::empty(mask.sizes(), mask.options().dtype(at::kFloat));
  const at::Tensor space = at::empty({int64_t(cuda::token_weights_workspace_bytes(num_sequences))},
                                     mask.options().dtype(at::kByte));
  TokenWeightOptions options{Aggregation(aggregation), max_length, global_sequences, global_masked_tokens};
  cuda::token_weights(mask.data_ptr<uint8_t>(), ids.data_ptr<int32_t>(), mask.numel(), num_sequences,
                      options, out.data_ptr<float>(), space.data_ptr(), at::cuda::getCurrentCUDAStream());
  return out;
#else
  throw_no_cuda_kernels();
#endif
}

}  // namespace swerl
