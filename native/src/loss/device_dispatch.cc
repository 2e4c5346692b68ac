#include "loss/device_dispatch.h"

#include <cstring>

#include "core/cuda_build.h"
#include "core/swerl_error.h"
#include "loss/cpu_twin.h"

#ifdef SWERL_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <cublas_v2.h>

#include "kernels.h"  // native/cuda/kernels.h
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

// A device that neither the CPU twin nor (in this build) the CUDA kernels serve.
[[noreturn]] void unsupported(const at::Device& device) {
  if (device.is_cuda()) throw_no_cuda_kernels();
  throw_invalid("the fused loss runs on the CPU or CUDA, not " + device.str());
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

size_t fused_workspace_bytes(const at::Device& device, const fused::Problem& p, bool backward) {
  if (device.is_cpu())
    return backward ? fused::cpu_backward_workspace_bytes(p) : fused::cpu_forward_workspace_bytes(p);
#ifdef SWERL_WITH_CUDA
  if (device.is_cuda())
    return backward ? cuda::fused_backward_workspace_bytes(p) : cuda::fused_forward_workspace_bytes(p);
#endif
  unsupported(device);
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
  unsupported(device);
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
  unsupported(device);
}

}  // namespace swerl
