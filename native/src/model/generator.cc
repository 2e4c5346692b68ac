#include "model/generator.h"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "core/profile.h"
#include "core/swerl_error.h"

namespace swerl {

namespace {

// SWERL_PREFIX_EXTENSIONS=together: prompts extending stored prefixes, admitted in one step, are
// prefilled in one forward. Off by default: a row's logprobs then depend on which rows share its
// forward (1e-6), so a data-parallel group no longer samples one process's exact logprobs.
bool extensions_together_by_default() {
  static const bool together = [] {
    const char* env = std::getenv("SWERL_PREFIX_EXTENSIONS");
    return env != nullptr && std::string(env) == "together";
  }();
  return together;
}

}  // namespace

Generator::Generator(const Transformer& model)
    : model_(model),
      cache_(model.config().num_layers, model.config().num_kv_heads, model.config().head_dim,
             at::TensorOptions().dtype(model.dtype()).device(model.device())),
      extend_together_(extensions_together_by_default()),
      decode_mode_(model.device().is_cuda() ? DecodeMode::Graphs : DecodeMode::Off) {}

void Generator::reset() {
  sequences_.clear();
  cache_.clear();
  prefixes_.clear();
  graphs_.clear();
}

void Generator::poison_unused(float value) {
  for (int64_t l = 0; l < cache_.layers(); ++l) {
    for (at::Tensor* t : {&cache_.keys(l), &cache_.values(l)}) {
      if (!t->defined()) continue;
      const int64_t capacity = t->size(2);
      for (int64_t slot = 0; slot < t->size(0); ++slot) {
        const int64_t live = slot < active() ? sequences_[slot].length : 0;
        t->select(0, slot).narrow(1, live, capacity - live).fill_(value);
      }
    }
  }
}

void Generator::release(int64_t id) {
  auto it = std::find_if(sequences_.begin(), sequences_.end(),
                         [&](const Sequence& s) { return s.id == id; });
  if (it == sequences_.end()) return;  // already gone (cancelled before it was admitted)
  const int64_t slot = it - sequences_.begin(), last = int64_t(sequences_.size()) - 1;
  prefixes_.store(it->tokens, cache_, slot);
  if (slot != last) {
    cache_.move_slot(last, slot, sequences_[last].length);
    sequences_[slot] = sequences_[last];
  }
  sequences_.pop_back();
}

std::vector<GeneratedToken> Generator::sample(const at::Tensor& hidden, size_t first) {
  const size_t n = size_t(hidden.size(0));
  at::Tensor logits;
  {
    profile::Phase phase("lm-head");
    logits = linear(hidden, model_.lm_head(), at::Tensor());
  }
  std::vector<SamplingParams> params(n);
  std::vector<uint64_t> draws(n);
  for (size_t i = 0; i < n; ++i) {
    params[i] = sequences_[first + i].sampling;
    draws[i] = sequences_[first + i].draws;
  }
  const SampledTokens sampled = sample_tokens(logits, params, draws);
  std::vector<GeneratedToken> out(n);
  for (size_t i = 0; i < n; ++i) {
    Sequence& s = sequences_[first + i];
    s.pending = sampled.tokens[i];
    ++s.draws;
    out[i] = GeneratedToken{s.id, sampled.tokens[i], sampled.logprobs[i]};
  }
  return out;
}

std::vector<GeneratedToken> Generator::decode_all() {
  const int64_t n = int64_t(sequences_.size());
  if (n == 0) return {};
  std::vector<int64_t> ids(n), positions(n);
  int64_t longest = 0;
  for (int64_t i = 0; i < n; ++i) {
    ids[i] = sequences_[i].pending;
    positions[i] = sequences_[i].length;
    longest = std::max(longest, sequences_[i].length + 1);
  }
  at::Tensor hidden;
  if (decode_mode_ == DecodeMode::Off) {
    cache_.reserve(n, longest);
    const auto cpu_long = at::TensorOptions().dtype(at::kLong);
    hidden = model_.decode(at::from_blob(ids.data(), {n}, cpu_long), at::from_blob(positions.data(), {n}, cpu_long),
                           cache_, longest);
  } else {
    cache_.reserve(DecodeGraphs::bucket(n), longest);
    hidden = graphs_.decode(model_, cache_, decode_mode_, ids, positions);
  }
  for (Sequence& s : sequences_) {
    ++s.length;
    s.tokens.push_back(s.pending);
  }
  return sample(hidden, 0);
}

// Prompts that extend a stored prefix prefill only their remainder: alone, or with
// set_extend_together together (an agent's next turns, one per episode: on CUDA one call each is
// a forward of launches apiece), in groups whose attention scores stay under kExtendScores;
// prompts whose remainder is longer than a chunk go alone, a chunk at a time; the others are
// prefilled together, right-padded.
std::vector<GeneratedToken> Generator::prefill(const std::vector<GenerationRequest>& all) {
  std::vector<GenerationRequest> admit;
  std::vector<std::pair<const GenerationRequest*, PrefixCache::Match>> extending, alone;
  for (const GenerationRequest& r : all) {
    const PrefixCache::Match m = prefixes_.match(r.prompt);
    if (int64_t(r.prompt.size()) - m.length > prefill_chunk_ || (m.entry >= 0 && !extend_together_))
      alone.emplace_back(&r, m);
    else if (m.entry >= 0) extending.emplace_back(&r, m);
    else admit.push_back(r);
  }
  std::vector<GeneratedToken> out = prefill_batch(admit);
  const auto append = [&out](const std::vector<GeneratedToken>& more) { out.insert(out.end(), more.begin(), more.end()); };
  // Scores one group of extensions may hold at once (B x heads x rows x keys, float32 where
  // attention materializes them): 256 MiB.
  constexpr int64_t kExtendScores = int64_t(1) << 26;
  // A group's forward is [group size, heads, its longest remainder, its longest start + that].
  std::vector<std::pair<const GenerationRequest*, PrefixCache::Match>> group;
  int64_t rows = 0, start = 0;
  for (const auto& item : extending) {
    const int64_t n = int64_t(item.first->prompt.size()) - item.second.length;
    int64_t next_rows = std::max(rows, n), next_start = std::max(start, item.second.length);
    if (!group.empty() && int64_t(group.size() + 1) * model_.config().num_heads * next_rows *
                                  (next_start + next_rows) > kExtendScores) {
      append(extend_together(group));
      group.clear();
      next_rows = n;
      next_start = item.second.length;
    }
    group.push_back(item);
    rows = next_rows;
    start = next_start;
  }
  if (!group.empty()) append(extend_together(group));
  for (const auto& [request, match] : alone) append(extend(*request, match));
  return out;
}

std::vector<GeneratedToken> Generator::extend_together(
    const std::vector<std::pair<const GenerationRequest*, PrefixCache::Match>>& group) {
  if (group.size() == 1) return extend(*group[0].first, group[0].second);
  const int64_t first = int64_t(sequences_.size()), B = int64_t(group.size());
  int64_t L = 0;
  std::vector<int64_t> starts, last;
  for (const auto& [r, m] : group) {
    L = std::max(L, int64_t(r->prompt.size()) - m.length);
    starts.push_back(m.length);
  }
  cache_.reserve(first + B, *std::max_element(starts.begin(), starts.end()) + L + 1);
  std::vector<int64_t> ids(size_t(B * L), 0);
  for (int64_t b = 0; b < B; ++b) {
    const auto& [r, m] = group[size_t(b)];
    prefixes_.restore(m, cache_, first + b);
    const int64_t n = int64_t(r->prompt.size()) - m.length;
    if (prefixes_.enabled()) prefixes_.count_prefilled(n);
    std::copy(r->prompt.begin() + m.length, r->prompt.end(), ids.begin() + b * L);
    last.push_back(b * L + n - 1);
  }
  const auto cpu_long = at::TensorOptions().dtype(at::kLong);
  const at::Tensor hidden = model_.extend_batch(at::from_blob(ids.data(), {B, L}, cpu_long), cache_, first, starts);
  const at::Tensor rows = at::from_blob(last.data(), {B}, cpu_long).to(model_.device());
  for (const auto& [r, m] : group)
    sequences_.push_back(Sequence{r->id, int64_t(r->prompt.size()), -1, 0, r->sampling, r->prompt});
  extended_together_ += B;
  return sample(hidden.reshape({B * L, hidden.size(2)}).index_select(0, rows), size_t(first));
}

std::vector<GeneratedToken> Generator::extend(const GenerationRequest& r, const PrefixCache::Match& match) {
  const int64_t slot = int64_t(sequences_.size()), length = int64_t(r.prompt.size());
  cache_.reserve(slot + 1, length + 1);
  if (match.entry >= 0) prefixes_.restore(match, cache_, slot);
  if (prefixes_.enabled()) prefixes_.count_prefilled(length - match.length);
  const auto cpu_long = at::TensorOptions().dtype(at::kLong);
  at::Tensor last;
  for (int64_t start = match.length; start < length; start += prefill_chunk_) {
    const int64_t n = std::min(prefill_chunk_, length - start);
    std::vector<int64_t> ids(r.prompt.begin() + start, r.prompt.begin() + start + n);
    last = model_.extend(at::from_blob(ids.data(), {1, n}, cpu_long), cache_, slot, start).select(0, 0).narrow(0, n - 1, 1);
  }
  sequences_.push_back(Sequence{r.id, length, -1, 0, r.sampling, r.prompt});
  return sample(last, size_t(slot));
}

std::vector<GeneratedToken> Generator::prefill_batch(const std::vector<GenerationRequest>& admit) {
  const int64_t first = int64_t(sequences_.size()), B = int64_t(admit.size());
  if (B == 0) return {};
  int64_t longest = 0;
  for (const GenerationRequest& r : admit) longest = std::max(longest, int64_t(r.prompt.size()));
  cache_.reserve(first + B, longest + 1);
  std::vector<int64_t> ids(size_t(B * longest), 0);
  std::vector<int64_t> last(size_t(B), 0);
  for (int64_t b = 0; b < B; ++b) {
    const auto& prompt = admit[b].prompt;
    std::copy(prompt.begin(), prompt.end(), ids.begin() + b * longest);
    last[b] = b * longest + int64_t(prompt.size()) - 1;
  }
  const auto cpu_long = at::TensorOptions().dtype(at::kLong);
  const at::Tensor hidden = model_.prefill(at::from_blob(ids.data(), {B, longest}, cpu_long), cache_, first);
  const at::Tensor rows = at::from_blob(last.data(), {B}, cpu_long).to(model_.device());
  for (const GenerationRequest& r : admit) {
    sequences_.push_back(Sequence{r.id, int64_t(r.prompt.size()), -1, 0, r.sampling, r.prompt});
    if (prefixes_.enabled()) prefixes_.count_prefilled(int64_t(r.prompt.size()));
  }
  return sample(hidden.reshape({B * longest, hidden.size(2)}).index_select(0, rows), size_t(first));
}

std::vector<GeneratedToken> Generator::step(const std::vector<int64_t>& release_ids,
                                            const std::vector<GenerationRequest>& admit) {
  // Everything is checked before anything changes, so a bad request leaves the batch intact.
  for (const GenerationRequest& r : admit) {
    const std::string which = "request " + std::to_string(r.id);
    if (r.prompt.empty()) throw_invalid("the prompt of " + which + " is empty");
    for (int32_t v : r.prompt)
      if (v < 0 || v >= model_.config().vocab_size)
        throw_invalid("the prompt of " + which + " has token " + std::to_string(v) +
                      " outside the vocabulary [0, " + std::to_string(model_.config().vocab_size) + ")");
    for (const Sequence& s : sequences_)
      if (s.id == r.id && std::find(release_ids.begin(), release_ids.end(), r.id) == release_ids.end())
        throw_invalid(which + " is already decoding");
  }
  for (int64_t id : release_ids) release(id);
  std::vector<GeneratedToken> out = decode_all();
  std::vector<GeneratedToken> fresh = prefill(admit);
  out.insert(out.end(), fresh.begin(), fresh.end());
  return out;
}

}  // namespace swerl
