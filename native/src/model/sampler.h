// Next-token sampling with the sampler's exact logprobs. Each sequence draws from its own
// counter-based random stream (seed, token index), so what it samples does not depend on
// which other sequences share its batch.
#pragma once
#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

namespace swerl {

struct SamplingParams {
  double temperature = 1.0;  // 0 = greedy (argmax)
  int64_t top_k = 0;         // 0 = off
  double top_p = 1.0;        // 1 = off
  uint64_t seed = 0;
};

struct SampledTokens {
  std::vector<int32_t> tokens;
  // log softmax(z / temperature)[token] over the full vocabulary (temperature 1 when
  // greedy): what the learner recomputes. top-k / top-p only restrict which tokens can be
  // drawn.
  std::vector<float> logprobs;
};

// A uniform draw in (0, 1] for (seed, index): splitmix64 of the pair.
double uniform_draw(uint64_t seed, uint64_t index);

// logits [n, V] (any float dtype, any device); draws[i] = the token index of row i.
SampledTokens sample_tokens(const at::Tensor& logits, const std::vector<SamplingParams>& params,
                            const std::vector<uint64_t>& draws);

}  // namespace swerl
