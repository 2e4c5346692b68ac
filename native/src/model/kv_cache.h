// Keys and values of the sequences being decoded, one slot per sequence. Active sequences
// always occupy slots 0..n-1 (release() moves the last one into the hole), so a decode step
// reads contiguous slices and never gathers.
#pragma once
#include <ATen/ATen.h>

#include <vector>

namespace swerl {

class KvCache {
 public:
  KvCache(int64_t layers, int64_t kv_heads, int64_t head_dim, at::TensorOptions options);

  // Makes room for `slots` sequences of up to `length` positions (grows by doubling).
  void reserve(int64_t slots, int64_t length);
  // Copies slot `from` into slot `to` (the first `length` positions).
  void move_slot(int64_t from, int64_t to, int64_t length);
  void clear();

  at::Tensor& keys(int64_t layer) { return keys_[layer]; }      // [slots, kv_heads, cap, D]
  at::Tensor& values(int64_t layer) { return values_[layer]; }  // [slots, kv_heads, cap, D]
  int64_t layers() const { return layers_; }
  int64_t slot_capacity() const { return slots_; }
  int64_t length_capacity() const { return length_; }
  int64_t bytes() const;
  // Changes whenever the tensors are replaced (grown or cleared): what captured graphs check.
  int64_t generation() const { return generation_; }

 private:
  int64_t layers_, kv_heads_, head_dim_;
  at::TensorOptions options_;
  int64_t slots_ = 0, length_ = 0;
  int64_t generation_ = 0;
  std::vector<at::Tensor> keys_, values_;
};

}  // namespace swerl
