#include "math/token_weights.h"

#include <ATen/Parallel.h>

#include "core/swerl_error.h"

namespace swerl {

std::vector<float> token_weights(const uint8_t* mask, const int32_t* sequence_ids, int64_t tokens,
                                 int32_t num_sequences, const TokenWeightOptions& options) {
  std::vector<double> masked_per_sequence(num_sequences, 0.0);
  double masked_total = 0;
  for (int64_t t = 0; t < tokens; ++t) {
    const int32_t s = sequence_ids[t];
    if (s < 0 || s >= num_sequences) throw_invalid("sequence id out of range");
    masked_per_sequence[s] += mask[t] ? 1.0 : 0.0;
    masked_total += mask[t] ? 1.0 : 0.0;
  }
  const double sequences =
      options.global_sequences > 0 ? options.global_sequences : double(num_sequences);
  const double all_masked =
      options.global_masked_tokens > 0 ? options.global_masked_tokens : masked_total;
  if (options.aggregation == Aggregation::SeqMeanTokenSumNorm && !(options.max_length > 0))
    throw_invalid("maxLength must be > 0 for seq-mean-token-sum-norm");

  std::vector<float> weights(tokens, 0.0f);
  at::parallel_for(0, tokens, 4096, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      if (!mask[t]) continue;
      switch (options.aggregation) {
        case Aggregation::TokenMean:
          weights[t] = float(1.0 / all_masked);
          break;
        case Aggregation::SeqMeanTokenMean:
          weights[t] = float(1.0 / (sequences * masked_per_sequence[sequence_ids[t]]));
          break;
        case Aggregation::SeqMeanTokenSumNorm:
          weights[t] = float(1.0 / (sequences * options.max_length));
          break;
      }
    }
  });
  return weights;
}

}  // namespace swerl
