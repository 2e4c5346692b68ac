// Per-token loss weights on the GPU (CPU twin: native/src/math/token_weights.cc). Masked-token
// counts per sequence are integer atomics, which are exact in any order; the weights then
// use the same double-precision formulas as the CPU.
#include <cuda_runtime.h>

#include "core/cuda_check.cuh"
#include "math/cuda_kernels.h"

namespace swerl::cuda {

namespace {

// counts[0..S) per sequence, counts[S] in all, counts[S + 1] = 1 if an id is out of range.
__global__ void count_masked_kernel(const uint8_t* __restrict__ mask,
                                    const int32_t* __restrict__ sequence_ids, int64_t tokens,
                                    int32_t num_sequences, unsigned long long* counts) {
  const int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= tokens) return;
  const int32_t s = sequence_ids[t];
  if (s < 0 || s >= num_sequences) {
    counts[num_sequences + 1] = 1;
    return;
  }
  if (!mask[t]) return;
  atomicAdd(&counts[s], 1ull);
  atomicAdd(&counts[num_sequences], 1ull);
}

__global__ void weights_kernel(const uint8_t* __restrict__ mask,
                               const int32_t* __restrict__ sequence_ids, int64_t tokens,
                               int32_t num_sequences, TokenWeightOptions options,
                               const unsigned long long* __restrict__ counts,
                               float* __restrict__ out) {
  const int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= tokens) return;
  const int32_t s = sequence_ids[t];
  if (!mask[t] || s < 0 || s >= num_sequences) {
    out[t] = 0.0f;
    return;
  }
  const double sequences =
      options.global_sequences > 0 ? options.global_sequences : double(num_sequences);
  const double all_masked = options.global_masked_tokens > 0 ? options.global_masked_tokens
                                                             : double(counts[num_sequences]);
  switch (options.aggregation) {
    case Aggregation::TokenMean:
      out[t] = float(1.0 / all_masked);
      break;
    case Aggregation::SeqMeanTokenMean:
      out[t] = float(1.0 / (sequences * double(counts[s])));
      break;
    case Aggregation::SeqMeanTokenSumNorm:
      out[t] = float(1.0 / (sequences * options.max_length));
      break;
  }
}

}  // namespace

size_t token_weights_workspace_bytes(int32_t num_sequences) {
  return (size_t(num_sequences) + 2) * sizeof(unsigned long long);
}

void token_weights(const uint8_t* mask, const int32_t* sequence_ids, int64_t tokens,
                   int32_t num_sequences, const TokenWeightOptions& options, float* out,
                   void* workspace, cudaStream_t stream) {
  if (tokens < 0 || num_sequences < 0) throw_invalid("token weights: sizes must be >= 0");
  if (options.aggregation == Aggregation::SeqMeanTokenSumNorm && !(options.max_length > 0))
    throw_invalid("maxLength must be > 0 for seq-mean-token-sum-norm");
  if (tokens == 0) return;
  auto* counts = static_cast<unsigned long long*>(workspace);
  check(cudaMemsetAsync(counts, 0, token_weights_workspace_bytes(num_sequences), stream),
        "zeroing token counts");
  count_masked_kernel<<<blocks_for(tokens, 256), 256, 0, stream>>>(mask, sequence_ids, tokens,
                                                                  num_sequences, counts);
  check_launch("count_masked_kernel");
  unsigned long long out_of_range = 0;
  check(cudaMemcpyAsync(&out_of_range, counts + num_sequences + 1, sizeof(out_of_range),
                        cudaMemcpyDeviceToHost, stream),
        "reading the sequence id check");
  check(cudaStreamSynchronize(stream), "token weights (counting)");
  if (out_of_range) throw_invalid("sequence id out of range");
  weights_kernel<<<blocks_for(tokens, 256), 256, 0, stream>>>(mask, sequence_ids, tokens,
                                                             num_sequences, options, counts, out);
  check_launch("weights_kernel");
}

}  // namespace swerl::cuda
