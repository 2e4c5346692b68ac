// Decode steps with static shapes, replayed as CUDA graphs: a decode step of a 0.6B model is
// ~2,300 small kernels, and launching them one by one from the host takes longer than the GPU
// needs to run them (bench/README: host time equals device time at every batch size). Here a
// step attends over the KV cache's whole capacity (masked by each row's length) and pads the
// batch up to a power of two, so one captured graph per batch bucket serves every step until
// the cache grows (then the graphs are captured again).
//
// Modes: Off (the dynamic path: attends over the longest row only), Static (the graphs' own
// static path, run eagerly: what the CPU tests compare), Graphs (CUDA: Static, captured).
#pragma once
#include <ATen/ATen.h>

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "model/kv_cache.h"
#include "model/transformer.h"

namespace swerl {

enum class DecodeMode { Off, Static, Graphs };

class DecodeGraphs {
 public:
  DecodeGraphs();
  ~DecodeGraphs();

  // Rows i < ids.size() live in cache slots 0..n-1; positions[i] is row i's length. Needs the
  // cache reserved for the padded batch (bucket(n) slots). Returns hidden states [n, H].
  at::Tensor decode(const Transformer& model, KvCache& cache, DecodeMode mode, const std::vector<int64_t>& ids,
                    const std::vector<int64_t>& positions);
  // Drops every captured graph (the weights or the cache's storage changed).
  void clear();
  int64_t captures() const { return captures_; }

  static int64_t bucket(int64_t rows);  // the padded batch: the next power of two

 private:
  struct Bucket;
  std::map<int64_t, std::unique_ptr<Bucket>> buckets_;
  int64_t cache_generation_ = -1;  // the cache storage the graphs were captured over
  int64_t captures_ = 0;
};

}  // namespace swerl
