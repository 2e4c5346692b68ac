// Per-token loss weights (docs/loss.md, "Token weights"): the loss is sum_t w_t L_t.
#pragma once
#include <cstdint>
#include <vector>

namespace swerl {

enum class Aggregation { TokenMean = 0, SeqMeanTokenMean = 1, SeqMeanTokenSumNorm = 2 };

struct TokenWeightOptions {
  Aggregation aggregation = Aggregation::SeqMeanTokenSumNorm;
  double max_length = 0;           // L of seq-mean-token-sum-norm
  double global_sequences = 0;     // B summed over ranks; 0 = this batch's count
  double global_masked_tokens = 0; // sum of m over ranks; 0 = this batch's sum
};

// mask[t] in {0, 1}; sequence_ids[t] in [0, num_sequences).
std::vector<float> token_weights(const uint8_t* mask, const int32_t* sequence_ids, int64_t tokens,
                                 int32_t num_sequences, const TokenWeightOptions& options);

}  // namespace swerl
