#include "model/prefix_cache.h"

#include <algorithm>

namespace swerl {

namespace {

int64_t common_prefix(const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
  const size_t n = std::min(a.size(), b.size());
  size_t i = 0;
  while (i < n && a[i] == b[i]) ++i;
  return int64_t(i);
}

}  // namespace

void PrefixCache::set_budget(int64_t bytes) {
  budget_ = std::max<int64_t>(0, bytes);
  evict_to(budget_);
}

PrefixCache::Match PrefixCache::match(const std::vector<int32_t>& prompt) {
  Match best;
  if (!enabled()) return best;
  ++stats_.lookups;
  // At least the prompt's last token is prefilled: its hidden state gives the first logits.
  const int64_t most = int64_t(prompt.size()) - 1;
  for (size_t i = 0; i < entries_.size(); ++i) {
    const int64_t length = std::min(common_prefix(prompt, entries_[i].tokens), most);
    if (length > best.length) best = Match{int64_t(i), length};
  }
  if (best.entry >= 0) {
    ++stats_.hits;
    stats_.reused_tokens += best.length;
    entries_[size_t(best.entry)].used = ++clock_;
  }
  return best;
}

void PrefixCache::restore(const Match& match, KvCache& cache, int64_t slot) {
  const Entry& e = entries_.at(size_t(match.entry));
  for (size_t l = 0; l < e.keys.size(); ++l) {
    cache.keys(int64_t(l)).select(0, slot).narrow(1, 0, match.length).copy_(e.keys[l].narrow(1, 0, match.length));
    cache.values(int64_t(l)).select(0, slot).narrow(1, 0, match.length).copy_(e.values[l].narrow(1, 0, match.length));
  }
}

void PrefixCache::store(const std::vector<int32_t>& tokens, KvCache& cache, int64_t slot) {
  if (!enabled() || tokens.empty()) return;
  const int64_t length = int64_t(tokens.size());
  for (Entry& e : entries_) {
    if (int64_t(e.tokens.size()) >= length && common_prefix(e.tokens, tokens) == length) {
      e.used = ++clock_;  // already covered by a longer (or equal) entry
      return;
    }
  }
  // An entry this one extends is covered by it: every prompt matching the old one matches
  // the new one at least as far.
  entries_.erase(std::remove_if(entries_.begin(), entries_.end(),
                                [&](const Entry& e) {
                                  const bool covered = common_prefix(e.tokens, tokens) == int64_t(e.tokens.size());
                                  if (covered) stats_.bytes -= e.bytes;
                                  return covered;
                                }),
                 entries_.end());
  Entry entry;
  entry.tokens = tokens;
  entry.used = ++clock_;
  for (int64_t l = 0; l < cache.layers(); ++l) {
    entry.keys.push_back(cache.keys(l).select(0, slot).narrow(1, 0, length).clone());
    entry.values.push_back(cache.values(l).select(0, slot).narrow(1, 0, length).clone());
    entry.bytes += int64_t(entry.keys.back().nbytes() + entry.values.back().nbytes());
  }
  if (entry.bytes > budget_) return;  // one sequence larger than the whole budget
  evict_to(budget_ - entry.bytes);
  stats_.bytes += entry.bytes;
  entries_.push_back(std::move(entry));
}

void PrefixCache::evict_to(int64_t bytes) {
  while (!entries_.empty() && stats_.bytes > bytes) {
    auto oldest = std::min_element(entries_.begin(), entries_.end(),
                                   [](const Entry& a, const Entry& b) { return a.used < b.used; });
    stats_.bytes -= oldest->bytes;
    entries_.erase(oldest);
    ++stats_.evictions;
  }
}

void PrefixCache::clear() {
  entries_.clear();
  stats_.bytes = 0;
}

PrefixCacheStats PrefixCache::stats() const {
  PrefixCacheStats out = stats_;
  out.entries = int64_t(entries_.size());
  return out;
}

}  // namespace swerl
