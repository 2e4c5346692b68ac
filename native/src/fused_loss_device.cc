#include "fused_loss_device.h"

#include <cstring>

#include "fused_loss_cpu.h"
#include "swerl_error.h"

#ifdef SWERL_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <cublas_v2.h>

#include "../cuda/kernels.h"
#endif

namespace swerl {

namespace {

at::Tensor workspace(const at::Device& device, size_t bytes) {
  return at::empty({int64_t(bytes)}, at::TensorOptions().dtype(at::kByte).device(device));
}

// The caller's workspace if it has one, checked; else a new one.
at::Tensor workspace_for(const at::Device& device, size_t bytes, const at::Tensor& given) {
  if (!given.defined()) return workspace(device, bytes);
  if (given.device() != device || given.scalar_type() != at::kByte || !given.is_contiguous() ||
      size_t(given.numel()) < bytes)
    throw_invalid("fused loss: the workspace must be a contiguous uint8 tensor of at least " +
                  std::to_string(bytes) + " bytes on " + device.str());
  return given;
}

[[noreturn]] void no_cuda() {
  throw Error("ERR_SWERL_CUDA",
              "this swerl addon was built without its CUDA kernels; rebuild against a CUDA "
              "libtorch with nvcc on PATH (npx cmake-js compile --CDSWERL_CUDA=ON)");
}

#ifdef SWERL_WITH_CUDA
cudaDataType_t cuda_type(fused::Dtype d) {
  switch (d) {
    case fused::Dtype::F32: return CUDA_R_32F;
    case fused::Dtype::BF16: return CUDA_R_16BF;
    case fused::Dtype::F16: return CUDA_R_16F;
  }
  return CUDA_R_32F;
}

int cublas_gemm(void* context, fused::Op op_a, fused::Op op_b, int64_t m, int64_t n, int64_t k,
                float alpha, const void* a, fused::Dtype a_type, int64_t lda, const void* b,
                fused::Dtype b_type, int64_t ldb, float beta, float* c, int64_t ldc) {
  const auto op = [](fused::Op o) { return o == fused::Op::N ? CUBLAS_OP_N : CUBLAS_OP_T; };
  return int(cublasGemmEx(static_cast<cublasHandle_t>(context), op(op_a), op(op_b), int(m), int(n),
                          int(k), &alpha, a, cuda_type(a_type), int(lda), b, cuda_type(b_type),
                          int(ldb), &beta, c, CUDA_R_32F, int(ldc), CUBLAS_COMPUTE_32F,
                          CUBLAS_GEMM_DEFAULT));
}

cuda::Gemm current_gemm() {
  return cuda::Gemm{cublas_gemm, at::cuda::getCurrentCUDABlasHandle()};
}
#endif

}  // namespace

bool has_cuda_kernels() {
#ifdef SWERL_WITH_CUDA
  return true;
#else
  return false;
#endif
}

size_t fused_workspace_bytes(const at::Device& device, const fused::Problem& p, bool backward) {
  if (device.is_cpu())
    return backward ? fused::cpu_backward_workspace_bytes(p) : fused::cpu_forward_workspace_bytes(p);
#ifdef SWERL_WITH_CUDA
  if (device.is_cuda())
    return backward ? cuda::fused_backward_workspace_bytes(p) : cuda::fused_forward_workspace_bytes(p);
#endif
  if (device.is_cuda()) no_cuda();
  throw_invalid("the fused loss runs on the CPU or CUDA, not " + device.str());
}

LossSums run_fused_forward(const at::Device& device, const fused::Problem& p, fused::ForwardIO io,
                           const at::Tensor& given) {
  fused::check_problem(p);
  const size_t bytes = fused_workspace_bytes(device, p, /*backward=*/false);
  if (device.is_cpu()) {
    LossSums sums;
    io.sums = &sums;
    const at::Tensor space = workspace_for(device, bytes, given);
    fused::cpu_forward(p, io, space.data_ptr());
    return sums;
  }
#ifdef SWERL_WITH_CUDA
  if (device.is_cuda()) {
    const c10::cuda::CUDAGuard guard(device);
    const at::Tensor sums = workspace(device, sizeof(LossSums));
    io.sums = static_cast<LossSums*>(sums.data_ptr());
    const at::Tensor space = workspace_for(device, bytes, given);
    cuda::fused_forward(p, io, space.data_ptr(), at::cuda::getCurrentCUDAStream(), current_gemm());
    LossSums host;
    std::memcpy(&host, sums.cpu().data_ptr(), sizeof(LossSums));
    return host;
  }
#endif
  if (device.is_cuda()) no_cuda();
  throw_invalid("the fused loss runs on the CPU or CUDA, not " + device.str());
}

void run_fused_backward(const at::Device& device, const fused::Problem& p,
                        const fused::BackwardIO& io, const at::Tensor& given) {
  fused::check_problem(p);
  const size_t bytes = fused_workspace_bytes(device, p, /*backward=*/true);
  if (device.is_cpu()) {
    const at::Tensor space = workspace_for(device, bytes, given);
    fused::cpu_backward(p, io, space.data_ptr());
    return;
  }
#ifdef SWERL_WITH_CUDA
  if (device.is_cuda()) {
    const c10::cuda::CUDAGuard guard(device);
    const at::Tensor space = workspace_for(device, bytes, given);
    cuda::fused_backward(p, io, space.data_ptr(), at::cuda::getCurrentCUDAStream(), current_gemm());
    return;
  }
#endif
  if (device.is_cuda()) no_cuda();
  throw_invalid("the fused loss runs on the CPU or CUDA, not " + device.str());
}

at::Tensor cuda_advantages(const at::Tensor& rewards_in, const at::Tensor& groups_in, int estimator) {
#ifdef SWERL_WITH_CUDA
  if (!rewards_in.is_cuda() || rewards_in.scalar_type() != at::kFloat || groups_in.scalar_type() != at::kInt ||
      rewards_in.dim() != 1 || groups_in.sizes() != rewards_in.sizes() || groups_in.device() != rewards_in.device())
    throw_invalid("cuda_advantages: rewards float32 [n] and groups int32 [n] on one CUDA device");
  const c10::cuda::CUDAGuard guard(rewards_in.device());
  const at::Tensor rewards = rewards_in.contiguous(), groups = groups_in.contiguous();
  at::Tensor out = at::empty_like(rewards);
  cuda::advantages(rewards.data_ptr<float>(), groups.data_ptr<int32_t>(), rewards.numel(),
                   AdvantageEstimator(estimator), out.data_ptr<float>(),
                   at::cuda::getCurrentCUDAStream());
  return out;
#else
  no_cuda();
#endif
}

at::Tensor cuda_token_weights(const at::Tensor& mask_in, const at::Tensor& ids_in, int32_t num_sequences,
                              int aggregation, double max_length, double global_sequences,
                              double global_masked_tokens) {
#ifdef SWERL_WITH_CUDA
  if (!mask_in.is_cuda() || mask_in.scalar_type() != at::kByte || ids_in.scalar_type() != at::kInt ||
      mask_in.dim() != 1 || ids_in.sizes() != mask_in.sizes() || ids_in.device() != mask_in.device())
    throw_invalid("cuda_token_weights: mask uint8 [T] and sequence ids int32 [T] on one CUDA device");
  const c10::cuda::CUDAGuard guard(mask_in.device());
  const at::Tensor mask = mask_in.contiguous(), ids = ids_in.contiguous();
  at::Tensor out = at::empty(mask.sizes(), mask.options().dtype(at::kFloat));
  const at::Tensor space = workspace(mask.device(), cuda::token_weights_workspace_bytes(num_sequences));
  TokenWeightOptions options{Aggregation(aggregation), max_length, global_sequences, global_masked_tokens};
  cuda::token_weights(mask.data_ptr<uint8_t>(), ids.data_ptr<int32_t>(), mask.numel(), num_sequences,
                      options, out.data_ptr<float>(), space.data_ptr(), at::cuda::getCurrentCUDAStream());
  return out;
#else
  no_cuda();
#endif
}

}  // namespace swerl
