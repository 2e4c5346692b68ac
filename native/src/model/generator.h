// Continuous batching over one model: sequences join (prefill) and leave between steps, and
// every step samples one token for each sequence in the batch. The caller (the JS scheduler
// in lib/model/generation.ts) decides when a sequence is done and releases it.
#pragma once
#include <ATen/ATen.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "model/decode_graphs.h"
#include "model/kv_cache.h"
#include "model/prefix_cache.h"
#include "model/sampler.h"
#include "model/transformer.h"

namespace swerl {

struct GenerationRequest {
  int64_t id = 0;
  std::vector<int32_t> prompt;
  SamplingParams sampling;
};

struct GeneratedToken {
  int64_t id;
  int32_t token;
  float logprob;
};

class Generator {
 public:
  explicit Generator(const Transformer& model);

  // Drops `release`, admits `admit` (their prompts are prefilled), then samples the next
  // token of every sequence in the batch. A sequence's sampled token enters the cache at
  // its next step.
  std::vector<GeneratedToken> step(const std::vector<int64_t>& release,
                                   const std::vector<GenerationRequest>& admit);
  // Forgets every sequence, frees the cache and empties the prefix cache (the weights changed).
  void reset();

  int64_t active() const { return int64_t(sequences_.size()); }
  // Overwrites every cache position that holds no live sequence's key or value (past each
  // slot's length, and every slot past the active ones) with `value`: checks use it to show
  // that no stale position reaches a result.
  void poison_unused(float value);
  int64_t cache_bytes() const { return cache_.bytes(); }
  PrefixCache& prefixes() { return prefixes_; }
  // Whether prompts extending stored prefixes, admitted in one step, share one forward (default:
  // SWERL_PREFIX_EXTENSIONS=together; otherwise each has its own, grouping-independent logprobs).
  void set_extend_together(bool on) { extend_together_ = on; }
  // Prompts admitted with their stored prefixes' remainders prefilled together (extend_together).
  int64_t extended_together() const { return extended_together_; }
  // Prompt positions prefilled in one forward at most; longer prompts go a chunk at a time,
  // so a long prompt's activations take a chunk's memory, not the whole prompt's.
  void set_prefill_chunk(int64_t tokens) { prefill_chunk_ = tokens; }
  // How decode steps run (model/decode_graphs.h); the default is Graphs on CUDA, Off on the CPU.
  void set_decode_mode(DecodeMode mode) { decode_mode_ = mode; }
  DecodeMode decode_mode() const { return decode_mode_; }
  int64_t graph_captures() const { return graphs_.captures(); }

 private:
  struct Sequence {
    int64_t id;
    int64_t length;      // positions in the cache
    int32_t pending;     // sampled, not yet in the cache
    uint64_t draws;      // tokens sampled so far (the random stream's index)
    SamplingParams sampling;
    std::vector<int32_t> tokens;  // the tokens whose keys and values are in the cache
  };

  void release(int64_t id);
  std::vector<GeneratedToken> decode_all();
  std::vector<GeneratedToken> prefill(const std::vector<GenerationRequest>& admit);
  std::vector<GeneratedToken> prefill_batch(const std::vector<GenerationRequest>& admit);
  // One prompt in its own slot: a stored prefix restored (when matched), the rest prefilled a
  // chunk at a time.
  std::vector<GeneratedToken> extend(const GenerationRequest& request, const PrefixCache::Match& match);
  // Prompts with stored prefixes in consecutive new slots, their remainders (each at most a
  // chunk) prefilled in one forward (Transformer::extend_batch).
  std::vector<GeneratedToken> extend_together(
      const std::vector<std::pair<const GenerationRequest*, PrefixCache::Match>>& group);
  std::vector<GeneratedToken> sample(const at::Tensor& hidden, size_t first);

  const Transformer& model_;
  KvCache cache_;
  PrefixCache prefixes_;
  std::vector<Sequence> sequences_;  // sequences_[i] lives in cache slot i
  int64_t prefill_chunk_ = 8192;
  int64_t extended_together_ = 0;
  bool extend_together_;
  DecodeMode decode_mode_;
  DecodeGraphs graphs_;
};

}  // namespace swerl
