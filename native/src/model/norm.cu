// RMSNorm and the q/k norm with rotary on the GPU (CPU twin: model/norm.cc). One warp per row:
// a row's sum of squares is a warp reduction, rotary partners meet in the warp's shared-memory
// copy of the row, and the backward's dweight is summed per block in shared memory.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>

#include "core/cuda_check.cuh"
#include "model/norm_kernels.h"

namespace swerl::cuda {

namespace {

constexpr int kWarps = 4;  // rows a block works on at once
constexpr int kThreads = kWarps * 32;

__device__ __forceinline__ float load(const float* p, int64_t i) { return p[i]; }
__device__ __forceinline__ float load(const __nv_bfloat16* p, int64_t i) { return __bfloat162float(p[i]); }
__device__ __forceinline__ void store(float* p, int64_t i, float v) { p[i] = v; }
__device__ __forceinline__ void store(__nv_bfloat16* p, int64_t i, float v) { p[i] = __float2bfloat16_rn(v); }
// v as the tensor dtype would hold it.
__device__ __forceinline__ float round_to(const float*, float v) { return v; }
__device__ __forceinline__ float round_to(const __nv_bfloat16*, float v) {
  return __bfloat162float(__float2bfloat16_rn(v));
}

__device__ __forceinline__ float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

template <typename T, bool kRotary>
__global__ void __launch_bounds__(kThreads) norm_rows_forward_kernel(
    NormRows shape, const T* __restrict__ x, const T* __restrict__ weight,
    const T* __restrict__ cos, const T* __restrict__ sin, T* __restrict__ y,
    float* __restrict__ rstd_out) {
  extern __shared__ float stage_all[];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t row = int64_t(blockIdx.x) * kWarps + warp;
  if (row >= shape.rows) return;
  const int64_t W = shape.width, base = row * W;
  float rstd = 1.0f;
  if (weight != nullptr) {
    float squares = 0.0f;
    for (int64_t h = lane; h < W; h += 32) {
      const float v = load(x, base + h);
      squares += v * v;
    }
    rstd = rsqrtf(warp_sum(squares) / float(W) + shape.eps);
    if (rstd_out != nullptr && lane == 0) rstd_out[row] = rstd;
  }
  float* stage = stage_all + warp * W;
  for (int64_t h = lane; h < W; h += 32) {
    const float xv = load(x, base + h);
    const float v = weight != nullptr ? round_to(x, load(weight, h) * round_to(x, xv * rstd)) : xv;
    if (kRotary) {
      stage[h] = v;
    } else {
      store(y, base + h, v);
    }
  }
  if (!kRotary) return;
  __syncwarp();
  const int64_t half = W / 2, table = ((row / shape.heads) % shape.rotary_rows) * W;
  for (int64_t h = lane; h < W; h += 32) {
    const float rotated = h < half ? -stage[h + half] : stage[h - half];
    const float out = round_to(x, stage[h] * load(cos, table + h)) + round_to(x, rotated * load(sin, table + h));
    store(y, base + h, out);
  }
}

template <typename T, bool kRotary>
__global__ void __launch_bounds__(kThreads) norm_rows_backward_kernel(
    NormRows shape, const T* __restrict__ dy, const T* __restrict__ x, const T* __restrict__ weight,
    const T* __restrict__ cos, const T* __restrict__ sin, const float* __restrict__ rstd_in,
    T* __restrict__ dx, float* __restrict__ partials) {
  extern __shared__ float shared[];
  const int64_t W = shape.width;
  float* dweight = shared;  // [W] this block's sum, when weight is given
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  float* dy_sin = shared + W + warp * 2 * W;  // kRotary: dy * sin, then d(normed)
  float* dv = dy_sin + W;
  if (weight != nullptr)
    for (int64_t h = threadIdx.x; h < W; h += kThreads) dweight[h] = 0.0f;
  __syncthreads();
  const int64_t half = W / 2;
  for (int64_t row = int64_t(blockIdx.x) * kWarps + warp; row < shape.rows; row += int64_t(gridDim.x) * kWarps) {
    const int64_t base = row * W;
    // d(v): the rotary's transpose applied to dy, or dy itself.
    auto dv_at = [&](int64_t h) { return kRotary ? dv[h] : load(dy, base + h); };
    if (kRotary) {
      const int64_t table = ((row / shape.heads) % shape.rotary_rows) * W;
      for (int64_t h = lane; h < W; h += 32) dy_sin[h] = load(dy, base + h) * load(sin, table + h);
      __syncwarp();
      for (int64_t h = lane; h < W; h += 32)
        dv[h] = load(dy, base + h) * load(cos, table + h) + (h < half ? dy_sin[h + half] : -dy_sin[h - half]);
      __syncwarp();
    }
    if (weight == nullptr) {
      for (int64_t h = lane; h < W; h += 32) store(dx, base + h, dv_at(h));
    } else {
      const float rstd = rstd_in[row];
      float dot = 0.0f;
      for (int64_t h = lane; h < W; h += 32) dot += dv_at(h) * load(weight, h) * (load(x, base + h) * rstd);
      dot = warp_sum(dot) / float(W);
      for (int64_t h = lane; h < W; h += 32) {
        const float n = load(x, base + h) * rstd, g = dv_at(h);
        store(dx, base + h, rstd * (g * load(weight, h) - n * dot));
        atomicAdd(&dweight[h], g * round_to(x, n));
      }
    }
    if (kRotary) __syncwarp();  // dy_sin and dv are rewritten for the next row
  }
  if (weight == nullptr) return;
  __syncthreads();
  for (int64_t h = threadIdx.x; h < W; h += kThreads) partials[int64_t(blockIdx.x) * W + h] = dweight[h];
}

int device_multiprocessors() {
  int device = 0, count = 0;
  check(cudaGetDevice(&device), "reading the current device");
  check(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device), "reading the multiprocessor count");
  return count;
}

void check_shape(const NormRows& s) {
  if (s.rows < 0 || s.width <= 0 || s.heads <= 0 || s.rotary_rows < 0)
    throw_invalid("norm rows: rows >= 0, width > 0, heads > 0 and rotary_rows >= 0");
  if (s.rotary_rows > 0 && (s.width % 2 != 0 || s.width > kMaxRotaryWidth))
    throw_invalid("norm rows: rotary needs an even width of at most " + std::to_string(kMaxRotaryWidth));
}

size_t forward_shared_bytes(const NormRows& s) { return s.rotary_rows > 0 ? size_t(kWarps) * s.width * sizeof(float) : 0; }
size_t backward_shared_bytes(const NormRows& s) {
  return (size_t(s.width) + (s.rotary_rows > 0 ? size_t(kWarps) * 2 * s.width : 0)) * sizeof(float);
}

template <typename Kernel>
void allow_shared(Kernel kernel, size_t bytes) {
  if (bytes > 48 * 1024)
    check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)),
          "raising the norm kernel's shared memory");
}

template <typename T>
void forward_as(const NormRows& s, const void* x, const void* weight, const void* cos, const void* sin,
                void* y, float* rstd, cudaStream_t stream) {
  const unsigned blocks = blocks_for(s.rows, kWarps);
  const size_t bytes = forward_shared_bytes(s);
  auto args = [&](auto kernel) {
    allow_shared(kernel, bytes);
    kernel<<<blocks, kThreads, bytes, stream>>>(s, static_cast<const T*>(x), static_cast<const T*>(weight),
                                                static_cast<const T*>(cos), static_cast<const T*>(sin),
                                                static_cast<T*>(y), rstd);
  };
  if (s.rotary_rows > 0) args(norm_rows_forward_kernel<T, true>); else args(norm_rows_forward_kernel<T, false>);
  check_launch("norm_rows_forward_kernel");
}

template <typename T>
void backward_as(const NormRows& s, const void* dy, const void* x, const void* weight, const void* cos,
                 const void* sin, const float* rstd, void* dx, float* partials, cudaStream_t stream) {
  const unsigned blocks = unsigned(norm_rows_backward_blocks(s));
  const size_t bytes = backward_shared_bytes(s);
  auto args = [&](auto kernel) {
    allow_shared(kernel, bytes);
    kernel<<<blocks, kThreads, bytes, stream>>>(s, static_cast<const T*>(dy), static_cast<const T*>(x),
                                                static_cast<const T*>(weight), static_cast<const T*>(cos),
                                                static_cast<const T*>(sin), rstd, static_cast<T*>(dx), partials);
  };
  if (s.rotary_rows > 0) args(norm_rows_backward_kernel<T, true>); else args(norm_rows_backward_kernel<T, false>);
  check_launch("norm_rows_backward_kernel");
}

}  // namespace

int norm_rows_backward_blocks(const NormRows& shape) {
  // Enough blocks to fill the card a few times over; each adds one row of partials.
  const int64_t wanted = std::max<int64_t>(1, (shape.rows + kWarps - 1) / kWarps);
  return int(std::min<int64_t>(wanted, int64_t(device_multiprocessors()) * 4));
}

void norm_rows_forward(const NormRows& shape, const void* x, const void* weight, const void* cos,
                       const void* sin, void* y, float* rstd, cudaStream_t stream) {
  check_shape(shape);
  if (shape.rows == 0) return;
  if (shape.dtype == NormDtype::BFloat16) forward_as<__nv_bfloat16>(shape, x, weight, cos, sin, y, rstd, stream);
  else forward_as<float>(shape, x, weight, cos, sin, y, rstd, stream);
}

void norm_rows_backward(const NormRows& shape, const void* dy, const void* x, const void* weight,
                        const void* cos, const void* sin, const float* rstd, void* dx, float* partials,
                        cudaStream_t stream) {
  check_shape(shape);
  if (shape.rows == 0) return;
  if (shape.dtype == NormDtype::BFloat16) backward_as<__nv_bfloat16>(shape, dy, x, weight, cos, sin, rstd, dx, partials, stream);
  else backward_as<float>(shape, dy, x, weight, cos, sin, rstd, dx, partials, stream);
}

}  // namespace swerl::cuda
