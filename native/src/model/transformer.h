// A decoder-only transformer of the Qwen3 family (Qwen3, Qwen2/2.5, Llama by config): RMSNorm,
// rotary embeddings, grouped-query causal attention, per-head q/k norm (Qwen3), SwiGLU MLP.
// The forward ends at the final hidden states; the LM head belongs to the loss (fused) or to
// the sampler, which applies it only to the rows it needs.
#pragma once
#include <ATen/ATen.h>

#include <functional>
#include <string>
#include <vector>

#include "model/kv_cache.h"
#include "model/model_config.h"

namespace swerl {

struct LayerWeights {
  at::Tensor input_norm, q, q_bias, k, k_bias, v, v_bias, o, q_norm, k_norm;
  at::Tensor post_norm, gate, up, down;
};

class Transformer {
 public:
  // Parameters start as zeros; the caller fills them (checkpoint or init_random).
  Transformer(const ModelConfig& config, at::Device device, at::ScalarType dtype);

  const ModelConfig& config() const { return config_; }
  at::Device device() const { return device_; }
  at::ScalarType dtype() const { return dtype_; }
  const std::vector<ParameterSpec>& specs() const { return specs_; }
  // In specs() order; leaf tensors the optimizer and the checkpoint code read and write.
  const std::vector<at::Tensor>& parameters() const { return parameters_; }
  int64_t parameter_index(const std::string& name) const;  // throws naming the tensor
  // The output projection [V, H] (the embedding itself when tied).
  const at::Tensor& lm_head() const { return lm_head_; }

  // Training and scoring: ids [B, T] (right-padded; padding never influences real tokens
  // because attention is causal), positions 0..T-1. Returns normed hidden states [B, T, H].
  // checkpoint: keep only each layer's input for the backward and recompute the rest.
  // segments (packed): ids [1, T] holds sequences of these lengths end to end; each attends
  // to itself only and its positions start at 0, so its hidden states are those it has alone.
  at::Tensor forward(const at::Tensor& ids, bool checkpoint, const std::vector<int64_t>& segments = {}) const;

  // Prefill for generation: ids [B, T] right-padded prompts placed into cache slots
  // [first_slot, first_slot + B). Returns hidden states [B, T, H].
  at::Tensor prefill(const at::Tensor& ids, KvCache& cache, int64_t first_slot) const;
  // Prefills ids [1, n] at positions start.. of cache slot `slot`, whose first `start` positions
  // already hold the sequence's keys and values (a reused prefix); attends over [0, start + n).
  // Returns the final hidden states [1, n, H].
  at::Tensor extend(const at::Tensor& ids, KvCache& cache, int64_t slot, int64_t start) const;
  // extend for B sequences at once: row b of ids [B, L] (right-padded) goes to positions
  // starts[b].. of slot first_slot + b and attends over its own [0, starts[b] + j]. Padding
  // writes keys past a row's end, inside the cache's capacity (reserve max(starts) + L), where
  // nothing reads them before a decode step overwrites them. Returns hidden states [B, L, H].
  at::Tensor extend_batch(const at::Tensor& ids, KvCache& cache, int64_t first_slot,
                          const std::vector<int64_t>& starts) const;
  // One decode step for cache slots 0..B-1: ids [B] at positions [B] (each row's current
  // length; either on any device). Writes each row's key/value at its position, attends over
  // the first `keys` cache positions (> every position; those past a row's are masked) and
  // returns hidden states [B, H]. With device inputs and keys fixed, every shape is static and
  // nothing waits for the host: a step CUDA graphs can capture (model/decode_graphs.h).
  at::Tensor decode(const at::Tensor& ids, const at::Tensor& positions, KvCache& cache, int64_t keys) const;

  // Layer `index` of forward() (activation checkpointing runs it again in the backward).
  at::Tensor forward_layer(int64_t index, const at::Tensor& x, const at::Tensor& cos,
                           const at::Tensor& sin, const std::vector<int64_t>& segments) const;

 private:
  using Attend = std::function<at::Tensor(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v)>;
  // One layer from its input; attend gets (q, k, v) after rotary, [B, heads, T, D], and
  // returns [B, nh, T, D].
  at::Tensor layer(int64_t index, const at::Tensor& x, const at::Tensor& cos,
                   const at::Tensor& sin, const Attend& attend) const;
  at::Tensor embed(const at::Tensor& ids) const;  // ids on any device: rows of the embedding
  void rotary_tables(const at::Tensor& positions, at::Tensor& cos, at::Tensor& sin) const;

  ModelConfig config_;
  at::Device device_;
  at::ScalarType dtype_;
  std::vector<ParameterSpec> specs_;
  std::vector<at::Tensor> parameters_;
  at::Tensor embed_, final_norm_, lm_head_, inv_freq_;
  double rotary_attention_factor_ = 1.0;  // YaRN's factor on cos and sin (model/rope.h)
  std::vector<LayerWeights> layers_;
};

// y = x W^T (+ b) over the last dimension of x; single rows on the CPU take a
// matrix-vector product.
at::Tensor linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias);

// Fills every parameter for training from scratch: normal(0, std) matrices, ones for norms,
// zeros for biases (what Hugging Face's _init_weights does), from a seeded generator.
void init_random(Transformer& model, double std, uint64_t seed);

}  // namespace swerl
