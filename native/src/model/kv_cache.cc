#include "model/kv_cache.h"

#include <algorithm>

namespace swerl {

KvCache::KvCache(int64_t layers, int64_t kv_heads, int64_t head_dim, at::TensorOptions options)
    : layers_(layers), kv_heads_(kv_heads), head_dim_(head_dim), options_(options),
      keys_(layers), values_(layers) {}

void KvCache::reserve(int64_t slots, int64_t length) {
  if (slots <= slots_ && length <= length_) return;
  const int64_t new_slots = slots <= slots_ ? slots_ : std::max(slots, 2 * slots_);
  const int64_t new_length = length <= length_ ? length_ : std::max({length, 2 * length_, int64_t(64)});
  for (int64_t l = 0; l < layers_; ++l) {
    for (at::Tensor* t : {&keys_[l], &values_[l]}) {
      // Zeros, not empty: positions past a sequence's length are masked out of the scores, but
      // their values still meet a zero probability in probs @ V, and 0 * NaN garbage is NaN.
      at::Tensor grown = at::zeros({new_slots, kv_heads_, new_length, head_dim_}, options_);
      if (t->defined() && slots_ > 0 && length_ > 0)
        grown.narrow(0, 0, slots_).narrow(2, 0, length_).copy_(*t);
      *t = grown;
    }
  }
  slots_ = new_slots;
  length_ = new_length;
  ++generation_;
}

void KvCache::move_slot(int64_t from, int64_t to, int64_t length) {
  if (from == to || length == 0) return;
  for (int64_t l = 0; l < layers_; ++l) {
    keys_[l].select(0, to).narrow(1, 0, length).copy_(keys_[l].select(0, from).narrow(1, 0, length));
    values_[l].select(0, to).narrow(1, 0, length).copy_(values_[l].select(0, from).narrow(1, 0, length));
  }
}

void KvCache::clear() {
  for (int64_t l = 0; l < layers_; ++l) keys_[l] = values_[l] = at::Tensor();
  slots_ = length_ = 0;
  ++generation_;
}

int64_t KvCache::bytes() const {
  int64_t total = 0;
  for (int64_t l = 0; l < layers_; ++l)
    if (keys_[l].defined()) total += int64_t(keys_[l].nbytes() + values_[l].nbytes());
  return total;
}

}  // namespace swerl
