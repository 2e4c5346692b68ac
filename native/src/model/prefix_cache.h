// Keys and values of finished sequences, kept so that a later prompt extending one (an agent's
// next turn: its last prompt, the sampled reply, the observation) prefills only the tokens past
// the longest stored prefix. Matching is on token prefixes, so the agent loop, swerl serve's
// clients that resend a conversation, and the samples of one prompt all share it without a
// handle. Least recently used entries go first past the byte budget; the generator clears it
// whenever the weights change (the stored keys and values belong to the old ones).
#pragma once
#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

#include "model/kv_cache.h"

namespace swerl {

struct PrefixCacheStats {
  int64_t lookups = 0;          // prompts admitted while the cache was on
  int64_t hits = 0;             // prompts that reused a stored prefix
  int64_t reused_tokens = 0;    // positions copied instead of prefilled
  int64_t prefilled_tokens = 0; // positions prefilled (hits' remainders and misses)
  int64_t evictions = 0;
  int64_t entries = 0;  // filled in by stats()
  int64_t bytes = 0;
};

class PrefixCache {
 public:
  explicit PrefixCache(int64_t budget_bytes = 0) : budget_(budget_bytes) {}

  void set_budget(int64_t bytes);
  bool enabled() const { return budget_ > 0; }

  struct Match {
    int64_t entry = -1;
    int64_t length = 0;  // positions to reuse; at least one prompt token is left to prefill
  };
  // The longest stored prefix of `prompt` (counted in lookups and hits).
  Match match(const std::vector<int32_t>& prompt);
  // Copies a match's keys and values into positions [0, length) of `slot`.
  void restore(const Match& match, KvCache& cache, int64_t slot);
  // Keeps positions [0, tokens.size()) of `slot`, unless a stored entry already covers them.
  void store(const std::vector<int32_t>& tokens, KvCache& cache, int64_t slot);
  void clear();

  void count_prefilled(int64_t tokens) { stats_.prefilled_tokens += tokens; }
  PrefixCacheStats stats() const;

 private:
  struct Entry {
    std::vector<int32_t> tokens;
    std::vector<at::Tensor> keys, values;  // per layer [kv_heads, length, D]
    int64_t bytes = 0;
    uint64_t used = 0;
  };

  void evict_to(int64_t bytes);

  int64_t budget_;
  uint64_t clock_ = 0;
  std::vector<Entry> entries_;
  PrefixCacheStats stats_;
};

}  // namespace swerl
