// The fused linear GRPO++ loss on the GPU: the plan of loss/tile_plan.h with these kernels
// for its element-wise steps and the caller's GEMM (cuBLAS) for the tiles. CPU twin:
// native/src/loss/cpu_twin.cc. Every reduction here has a fixed order; the one place that
// may use atomics is the loss sums in fast mode (Problem::deterministic = false).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdlib>

#include "core/cuda_check.cuh"
#include "loss/fused_kernels.h"

namespace swerl::cuda {

namespace {

using fused::BackwardIO;
using fused::Dtype;
using fused::ForwardIO;
using fused::Op;
using fused::Problem;

constexpr int kRowThreads = 256;     // one block per row of a tile
constexpr int kTokenThreads = 256;   // token terms: one token per thread
constexpr int kSelectThreads = 1024; // the one block that compacts active tokens
constexpr int kGradThreads = 256;
constexpr int kGradVectors = 2;      // float4s per thread in the vectorized dZ pass
constexpr int kGradColumns = kGradThreads * 4 * kGradVectors;  // columns of dZ per block

__device__ inline void store(float v, float* p) { *p = v; }
__device__ inline void store(float v, __nv_bfloat16* p) { *p = __float2bfloat16_rn(v); }
__device__ inline void store(float v, __half* p) { *p = __float2half_rn(v); }

__device__ inline RowSoftmax shuffle_down(const RowSoftmax& a, int offset) {
  return RowSoftmax{__shfl_down_sync(0xffffffffu, a.max, offset),
                    __shfl_down_sync(0xffffffffu, a.sum_exp, offset),
                    __shfl_down_sync(0xffffffffu, a.sum_exp_shifted, offset), 0.0f};
}

// Merges every thread's state in a fixed tree; the block's total ends in thread 0.
__device__ RowSoftmax block_merge(RowSoftmax mine) {
  __shared__ RowSoftmax per_warp[kRowThreads / 32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  for (int offset = 16; offset > 0; offset >>= 1) row_softmax_merge(mine, shuffle_down(mine, offset));
  if (lane == 0) per_warp[warp] = mine;
  __syncthreads();
  if (warp == 0) {
    mine = lane < kRowThreads / 32 ? per_warp[lane] : row_softmax_empty();
    for (int offset = 16; offset > 0; offset >>= 1) row_softmax_merge(mine, shuffle_down(mine, offset));
  }
  return mine;
}

__global__ void init_rows_kernel(RowSoftmax* rows, int64_t n) {
  const int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r < n) rows[r] = row_softmax_empty();
}

// One logit no larger than a.max.
__device__ inline void add_term(RowSoftmax& a, float s) {
  const float d = s - a.max, e = expf(d);
  a.sum_exp += e;
  a.sum_exp_shifted += e * d;
}

// Folds four logits at once: one rescale for the largest, then four terms (row_softmax_push
// one at a time would branch and may rescale on each).
__device__ inline void row_softmax_push4(RowSoftmax& a, const float4& v) {
  const float m = fmaxf(fmaxf(v.x, v.y), fmaxf(v.z, v.w));
  if (a.sum_exp == 0.0f) {
    a.max = m;  // the sums stay 0 until the terms below; exp(0) = 1 makes sum_exp nonzero
  } else if (m > a.max) {
    const float d = a.max - m, f = expf(d);
    a.sum_exp_shifted = f * (a.sum_exp_shifted + d * a.sum_exp);
    a.sum_exp = f * a.sum_exp;
    a.max = m;
  }
  add_term(a, v.x);
  add_term(a, v.y);
  add_term(a, v.z);
  add_term(a, v.w);
}

// One block per row of the tile: each thread folds a strided slice of the row, the block
// merges the slices, thread 0 folds the tile into the row's running state. `vectorized`
// (cols a multiple of 4, rows 16-byte aligned): 16-byte loads, two in flight per thread,
// because one 4-byte load at a time leaves the memory system mostly idle (the first H200
// run measured 3-4x the bandwidth floor with scalar loads).
__global__ void absorb_tile_kernel(const float* __restrict__ scores, int64_t cols,
                                   const int64_t* __restrict__ targets, int64_t v0,
                                   RowSoftmax* __restrict__ state, bool vectorized) {
  const int64_t r = blockIdx.x;
  const float* s = scores + r * cols;
  RowSoftmax mine = row_softmax_empty();
  if (vectorized) {
    const float4* s4 = reinterpret_cast<const float4*>(s);
    const int64_t quads = cols / 4;
    int64_t j = threadIdx.x;
    for (; j + kRowThreads < quads; j += 2 * kRowThreads) {
      const float4 a = s4[j], b = s4[j + kRowThreads];
      row_softmax_push4(mine, a);
      row_softmax_push4(mine, b);
    }
    if (j < quads) row_softmax_push4(mine, s4[j]);
  } else {
    for (int64_t j = threadIdx.x; j < cols; j += kRowThreads) row_softmax_push(mine, s[j]);
  }
  mine = block_merge(mine);
  if (threadIdx.x == 0) {
    RowSoftmax row = state[r];
    row_softmax_merge(row, mine);
    const int64_t local = targets[r] - v0;
    if (local >= 0 && local < cols) row.target_logit = s[local];
    state[r] = row;
  }
}

__global__ void finish_rows_kernel(const RowSoftmax* __restrict__ state, int64_t rows,
                                   float* lse, float* entropy, float* logprobs) {
  const int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r < rows) row_softmax_finish(state[r], lse[r], entropy[r], logprobs[r]);
}

// LossSums has default member initializers, which __shared__ arrays may not have: raw storage.
struct SharedSums {
  alignas(LossSums) unsigned char bytes[sizeof(LossSums) * kTokenThreads];
  __device__ LossSums* at() { return reinterpret_cast<LossSums*>(bytes); }
};

__device__ void atomic_add_sums(LossSums* into, const LossSums& s) {
  atomicAdd(&into->loss, s.loss);
  atomicAdd(&into->ratio_sum, s.ratio_sum);
  // ratio >= 0, and non-negative doubles order like their bit patterns.
  atomicMax(reinterpret_cast<unsigned long long*>(&into->ratio_max),
            static_cast<unsigned long long>(__double_as_longlong(s.ratio_max)));
  atomicAdd(&into->old_minus_new_sum, s.old_minus_new_sum);
  atomicAdd(&into->entropy_sum, s.entropy_sum);
  atomicAdd(&into->masked, s.masked);
  atomicAdd(&into->clipped_low, s.clipped_low);
  atomicAdd(&into->clipped_high, s.clipped_high);
}

// Per token: coefficients and its share of the sums; per block: the sums in a fixed tree, then
// either a partial (deterministic: reduced by reduce_sums_kernel) or an atomic add (fast).
__global__ void token_terms_kernel(int64_t n, ForwardIO io, LossSums* partials) {
  __shared__ SharedSums shared;
  LossSums* sums = shared.at();
  const int64_t t = int64_t(blockIdx.x) * kTokenThreads + threadIdx.x;
  LossSums mine;
  if (t < n) {
    const float ref = io.options.has_kl() ? io.ref_logprobs[t] : 0.0f;
    const TokenOutcome o = token_outcome(io.logprobs[t], io.entropy[t], io.old_logprobs[t],
                                         io.advantages[t], io.weights[t], ref, io.options);
    io.logit_coef[t] = o.logit_coef;
    io.entropy_coef[t] = o.entropy_coef;
    add_token(mine, o, io.entropy[t]);
  }
  sums[threadIdx.x] = mine;
  __syncthreads();
  for (int stride = kTokenThreads / 2; stride > 0; stride >>= 1) {
    if (threadIdx.x < stride) add_sums(sums[threadIdx.x], sums[threadIdx.x + stride]);
    __syncthreads();
  }
  if (threadIdx.x != 0) return;
  if (partials) {
    partials[blockIdx.x] = sums[0];
  } else {
    atomic_add_sums(io.sums, sums[0]);
  }
}

// One block: each thread adds a strided set of partials in order, then a fixed tree.
__global__ void reduce_sums_kernel(const LossSums* partials, int64_t count, LossSums* out) {
  __shared__ SharedSums shared;
  LossSums* sums = shared.at();
  LossSums mine;
  for (int64_t i = threadIdx.x; i < count; i += kTokenThreads) add_sums(mine, partials[i]);
  sums[threadIdx.x] = mine;
  __syncthreads();
  for (int stride = kTokenThreads / 2; stride > 0; stride >>= 1) {
    if (threadIdx.x < stride) add_sums(sums[threadIdx.x], sums[threadIdx.x + stride]);
    __syncthreads();
  }
  if (threadIdx.x == 0) *out = sums[0];
}

// One block walks the tokens in chunks of its width and writes the indices of those with a
// nonzero coefficient in ascending order (a ballot and a prefix over warps per chunk).
__global__ void select_active_kernel(int64_t n, const float* __restrict__ coef,
                                     const float* __restrict__ entropy_coef, bool has_entropy_term,
                                     int32_t* __restrict__ active, int32_t* __restrict__ count) {
  __shared__ int32_t warp_offset[kSelectThreads / 32];
  __shared__ int32_t chunk_total;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  int32_t base = 0;  // the same in every thread
  for (int64_t start = 0; start < n; start += kSelectThreads) {
    const int64_t t = start + threadIdx.x;
    const bool keep = t < n && (coef[t] != 0.0f || (has_entropy_term && entropy_coef[t] != 0.0f));
    const unsigned ballot = __ballot_sync(0xffffffffu, keep);
    if (lane == 0) warp_offset[warp] = __popc(ballot);
    __syncthreads();
    if (threadIdx.x == 0) {
      int32_t acc = 0;
      for (int w = 0; w < kSelectThreads / 32; ++w) {
        const int32_t c = warp_offset[w];
        warp_offset[w] = acc;
        acc += c;
      }
      chunk_total = acc;
    }
    __syncthreads();
    if (keep) active[base + warp_offset[warp] + __popc(ballot & ((1u << lane) - 1u))] = int32_t(t);
    base += chunk_total;
    __syncthreads();  // warp_offset and chunk_total are rewritten by the next chunk
  }
  if (threadIdx.x == 0) *count = base;
}

template <typename Word>
__global__ void gather_rows_kernel(const Word* __restrict__ from, int64_t width,
                                   const int32_t* __restrict__ ids, Word* __restrict__ to) {
  const int64_t r = blockIdx.x;
  const Word* src = from + int64_t(ids[r]) * width;
  Word* dst = to + r * width;
  for (int64_t i = threadIdx.x; i < width; i += blockDim.x) dst[i] = src[i];
}

// Four gradients to four consecutive elements in one store (16 bytes in fp32, 8 in bf16/fp16).
__device__ inline void store4(const float4& g, float* p) { *reinterpret_cast<float4*>(p) = g; }
__device__ inline void store4(const float4& g, __nv_bfloat16* p) {
  const __nv_bfloat162 lo = __floats2bfloat162_rn(g.x, g.y), hi = __floats2bfloat162_rn(g.z, g.w);
  *reinterpret_cast<uint2*>(p) = make_uint2(*reinterpret_cast<const unsigned*>(&lo), *reinterpret_cast<const unsigned*>(&hi));
}
__device__ inline void store4(const float4& g, __half* p) {
  const __half2 lo = __floats2half2_rn(g.x, g.y), hi = __floats2half2_rn(g.z, g.w);
  *reinterpret_cast<uint2*>(p) = make_uint2(*reinterpret_cast<const unsigned*>(&lo), *reinterpret_cast<const unsigned*>(&hi));
}

// Block (row r, column block y): dZ over kGradColumns columns. `vectorized` (cols a multiple
// of 4, rows aligned for 16-byte loads and 4-element stores): each thread loads both its
// float4s before computing, so two 16-byte loads are in flight per thread.
template <typename Out>
// In fp32, grad_logits is scores itself (loss/tile_plan.h): no __restrict__ on those two.
__global__ void logit_grad_kernel(const float* scores, int64_t cols,
                                  const int32_t* __restrict__ ids, int64_t v0,
                                  const int64_t* __restrict__ targets, BackwardIO io,
                                  Out* grad_logits, bool vectorized) {
  const int64_t r = blockIdx.x;
  const int32_t t = ids[r];
  const float lse = io.lse[t], entropy = io.entropy[t], c = io.logit_coef[t], e = io.entropy_coef[t];
  const float scale = io.grad_scale ? *io.grad_scale : 1.0f;
  const int64_t target = targets[t] - v0;
  const int64_t first = int64_t(blockIdx.y) * kGradColumns;
  const float* row = scores + r * cols;
  Out* out = grad_logits + r * cols;
  const auto grad = [&](float s, int64_t j) {
    return logit_grad(s, lse, entropy, c, e, io.has_entropy_term, j == target, scale);
  };
  if (vectorized) {
    constexpr int kStride = kGradColumns / kGradVectors;  // columns between a thread's float4s
    float4 in[kGradVectors];
#pragma unroll
    for (int u = 0; u < kGradVectors; ++u) {
      const int64_t j = first + u * kStride + 4 * threadIdx.x;
      if (j < cols) in[u] = *reinterpret_cast<const float4*>(row + j);
    }
#pragma unroll
    for (int u = 0; u < kGradVectors; ++u) {
      const int64_t j = first + u * kStride + 4 * threadIdx.x;
      if (j >= cols) continue;
      store4(make_float4(grad(in[u].x, j), grad(in[u].y, j + 1), grad(in[u].z, j + 2), grad(in[u].w, j + 3)),
             out + j);
    }
  } else {
    for (int i = threadIdx.x; i < kGradColumns; i += blockDim.x) {
      const int64_t j = first + i;
      if (j >= cols) break;
      store(grad(row[j], j), out + j);
    }
  }
}

template <typename Out>
__global__ void scatter_rows_kernel(const float* __restrict__ grad_rows, int64_t width,
                                    const int32_t* __restrict__ ids, Out* __restrict__ grad_hidden) {
  const int64_t r = blockIdx.x;
  const float* src = grad_rows + r * width;
  Out* dst = grad_hidden + int64_t(ids[r]) * width;
  for (int64_t i = threadIdx.x; i < width; i += blockDim.x) store(src[i], dst + i);
}

// SWERL_LOSS_SCALAR_PASSES=1 keeps the element-wise passes on their scalar loops (the first
// version's access pattern), so a benchmark can compare both on the same card in one run.
bool scalar_passes_forced() {
  static const bool forced = [] {
    const char* v = std::getenv("SWERL_LOSS_SCALAR_PASSES");
    return v != nullptr && v[0] == '1';
  }();
  return forced;
}

// Whether every row of a [rows, cols] buffer starting at `base` can be read or written four
// elements at a time with `quad_bytes`-sized accesses.
bool quads_fit(const void* base, int64_t cols, size_t quad_bytes) {
  return !scalar_passes_forced() && cols % 4 == 0 && reinterpret_cast<uintptr_t>(base) % quad_bytes == 0;
}

struct CudaBackend {
  cudaStream_t stream;
  Gemm blas;

  void gemm(Op op_a, Op op_b, int64_t m, int64_t n, int64_t k, float alpha, const void* a,
            Dtype a_type, int64_t lda, const void* b, Dtype b_type, int64_t ldb, float beta,
            float* c, int64_t ldc) {
    const int status = blas.fn(blas.context, op_a, op_b, m, n, k, alpha, a, a_type, lda, b, b_type,
                               ldb, beta, c, ldc);
    if (status != 0)
      throw Error("ERR_SWERL_CUDA", "fused loss: GEMM " + std::to_string(m) + "x" +
                                        std::to_string(n) + "x" + std::to_string(k) +
                                        " failed with status " + std::to_string(status));
  }

  void init_rows(RowSoftmax* rows, int64_t n) {
    init_rows_kernel<<<blocks_for(n, 256), 256, 0, stream>>>(rows, n);
    check_launch("init_rows_kernel");
  }

  void absorb_tile(const float* scores, int64_t rows, int64_t cols, const int64_t* targets,
                   int64_t v0, RowSoftmax* state) {
    absorb_tile_kernel<<<unsigned(rows), kRowThreads, 0, stream>>>(scores, cols, targets, v0, state,
                                                                  quads_fit(scores, cols, 16));
    check_launch("absorb_tile_kernel");
  }

  void finish_rows(const RowSoftmax* state, int64_t rows, float* lse, float* entropy,
                   float* logprobs) {
    finish_rows_kernel<<<blocks_for(rows, 256), 256, 0, stream>>>(state, rows, lse, entropy, logprobs);
    check_launch("finish_rows_kernel");
  }

  size_t token_scratch_bytes(int64_t n) const {
    return size_t(blocks_for(n, kTokenThreads)) * sizeof(LossSums);
  }

  void token_terms(int64_t n, const ForwardIO& io, bool deterministic, void* scratch) {
    const unsigned blocks = blocks_for(n, kTokenThreads);
    if (deterministic) {
      auto* partials = static_cast<LossSums*>(scratch);
      token_terms_kernel<<<blocks, kTokenThreads, 0, stream>>>(n, io, partials);
      check_launch("token_terms_kernel");
      reduce_sums_kernel<<<1, kTokenThreads, 0, stream>>>(partials, blocks, io.sums);
      check_launch("reduce_sums_kernel");
    } else {
      check(cudaMemsetAsync(io.sums, 0, sizeof(LossSums), stream), "zeroing the loss sums");
      token_terms_kernel<<<blocks, kTokenThreads, 0, stream>>>(n, io, nullptr);
      check_launch("token_terms_kernel");
    }
  }

  void zero(void* data, size_t bytes) { check(cudaMemsetAsync(data, 0, bytes, stream), "zeroing a gradient"); }

  int64_t select_active(int64_t n, const BackwardIO& io, int32_t* active, int32_t* count) {
    select_active_kernel<<<1, kSelectThreads, 0, stream>>>(n, io.logit_coef, io.entropy_coef,
                                                          io.has_entropy_term, active, count);
    check_launch("select_active_kernel");
    int32_t host = 0;
    check(cudaMemcpyAsync(&host, count, sizeof(host), cudaMemcpyDeviceToHost, stream),
          "reading the active token count");
    check(cudaStreamSynchronize(stream), "fused loss backward (kernels before the active count)");
    return host;
  }

  void gather_rows(const void* hidden, Dtype d, int64_t width, const int32_t* ids, int64_t rows,
                   void* out) {
    if (d == Dtype::F32) {
      gather_rows_kernel<float><<<unsigned(rows), 256, 0, stream>>>(
          static_cast<const float*>(hidden), width, ids, static_cast<float*>(out));
    } else {
      gather_rows_kernel<uint16_t><<<unsigned(rows), 256, 0, stream>>>(
          static_cast<const uint16_t*>(hidden), width, ids, static_cast<uint16_t*>(out));
    }
    check_launch("gather_rows_kernel");
  }

  void logit_grad_tile(float* scores, int64_t rows, int64_t cols, const int32_t* ids, int64_t v0,
                       const int64_t* targets, const BackwardIO& io, void* grad_logits, Dtype d) {
    const dim3 grid(unsigned(rows), blocks_for(cols, kGradColumns));
    const bool vectorized = quads_fit(scores, cols, 16) && quads_fit(grad_logits, cols, 4 * fused::dtype_bytes(d));
    switch (d) {
      case Dtype::F32:
        logit_grad_kernel<<<grid, kGradThreads, 0, stream>>>(scores, cols, ids, v0, targets, io,
                                                   static_cast<float*>(grad_logits), vectorized);
        break;
      case Dtype::BF16:
        logit_grad_kernel<<<grid, kGradThreads, 0, stream>>>(scores, cols, ids, v0, targets, io,
                                                   static_cast<__nv_bfloat16*>(grad_logits), vectorized);
        break;
      case Dtype::F16:
        logit_grad_kernel<<<grid, kGradThreads, 0, stream>>>(scores, cols, ids, v0, targets, io,
                                                   static_cast<__half*>(grad_logits), vectorized);
        break;
    }
    check_launch("logit_grad_kernel");
  }

  void scatter_rows(const float* grad_rows, int64_t width, const int32_t* ids, int64_t rows,
                    void* grad_hidden, Dtype d) {
    switch (d) {
      case Dtype::F32:
        scatter_rows_kernel<<<unsigned(rows), 256, 0, stream>>>(grad_rows, width, ids,
                                                               static_cast<float*>(grad_hidden));
        break;
      case Dtype::BF16:
        scatter_rows_kernel<<<unsigned(rows), 256, 0, stream>>>(
            grad_rows, width, ids, static_cast<__nv_bfloat16*>(grad_hidden));
        break;
      case Dtype::F16:
        scatter_rows_kernel<<<unsigned(rows), 256, 0, stream>>>(grad_rows, width, ids,
                                                               static_cast<__half*>(grad_hidden));
        break;
    }
    check_launch("scatter_rows_kernel");
  }
};

}  // namespace

size_t fused_forward_workspace_bytes(const Problem& p) {
  return fused::forward_workspace_bytes(p, CudaBackend{}.token_scratch_bytes(p.tokens));
}

size_t fused_backward_workspace_bytes(const Problem& p) { return fused::backward_workspace_bytes(p); }

void fused_forward(const Problem& p, const ForwardIO& io, void* workspace, cudaStream_t stream,
                   Gemm gemm) {
  CudaBackend be{stream, gemm};
  fused::forward(be, p, io, workspace);
}

void fused_backward(const Problem& p, const BackwardIO& io, void* workspace, cudaStream_t stream,
                    Gemm gemm) {
  CudaBackend be{stream, gemm};
  fused::backward(be, p, io, workspace);
}

}  // namespace swerl::cuda
