// The trainable policy: a Transformer in its compute dtype, fp32 master weights (the same
// tensors when computing in fp32), AdamW state, and the generator. One operation at a time:
// every entry point takes the lock.
#pragma once
#include <ATen/ATen.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "loss/loss.h"
#include "model/adamw.h"
#include "model/generator.h"
#include "model/transformer.h"
#include "parallel/process_group.h"

namespace swerl {

struct PolicyOptions {
  at::Device device = at::kCPU;
  at::ScalarType compute_dtype = at::kFloat;
  int64_t prefix_cache_bytes = 0;  // finished sequences' keys and values kept for reuse (0: off)
  int64_t prefill_chunk_tokens = 8192;  // prompt positions per prefill forward at most
  bool decode_graphs = true;  // CUDA: decode steps replayed as captured graphs (model/decode_graphs.h)
};

// Sequences packed end to end: sequence i is tokens[offsets[i], offsets[i+1]).
struct PackedSequences {
  std::vector<int32_t> tokens;
  std::vector<int64_t> offsets;
  int64_t count() const { return int64_t(offsets.size()) - 1; }
  int64_t length(int64_t i) const { return offsets[i + 1] - offsets[i]; }
};

// Per-token arrays are aligned with `tokens`: entry j belongs to token j, predicted from the
// tokens before it; the first token of a sequence has nothing predicting it (weight 0).
struct TrainBatch {
  PackedSequences sequences;
  std::vector<float> weights, old_logprobs, advantages, ref_logprobs;
};

enum class LossPath { Fused, Autograd };

struct TrainOptions {
  LossOptions loss;
  FusedChunks chunks;
  int64_t micro_batch_tokens = 8192;  // tokens per forward (padded: rows x longest)
  bool pack = true;                   // sequences end to end in a row, not a padded row each
  bool activation_checkpointing = false;
  AdamWOptions adamw;
  double max_grad_norm = 1.0;  // 0 = no clipping
  bool apply_update = true;    // false: gradients only (diagnostics)
  bool return_gradients = false;
  LossPath path = LossPath::Fused;  // Autograd: plain libtorch ops over materialized logits
};

struct TrainResult {
  LossStats stats;          // loss summed over micro-batches; means over weighted tokens
  double grad_norm = 0;     // before clipping
  int64_t tokens = 0;       // tokens in the batch
  int64_t micro_batches = 0;
  double seconds = 0;
  std::vector<at::Tensor> gradients;  // fp32 CPU, parameter order (when asked)
};

enum class StateKind { Parameter, ExpAvg, ExpAvgSq };

class Policy {
 public:
  Policy(const ModelConfig& config, const PolicyOptions& options);

  std::mutex& mutex() { return mutex_; }
  at::Device device() const { return options_.device; }
  const Transformer& model() const { return *model_; }
  Generator& generator() { return generator_; }

  void init_random(double std, uint64_t seed);
  // Checkpoint I/O of fp32 master weights and optimizer state (CPU tensors of the spec's shape).
  void set_state(StateKind kind, int64_t index, const at::Tensor& values);
  at::Tensor get_state(StateKind kind, int64_t index) const;  // fp32, CPU
  bool has_optimizer_state() const { return !adam_.exp_avg.empty(); }
  int64_t optimizer_step() const { return adam_.step; }
  void set_optimizer_step(int64_t step);

  // Data parallelism: from now on every train step sums its gradients (and loss) over the
  // group's ranks before clipping and AdamW. Rank 0's weights and AdamW state are broadcast
  // first, so every rank starts from the same ones.
  void join_group(std::shared_ptr<ProcessGroup> group);
  ProcessGroup* group() const { return group_.get(); }
  // Each fp32 master tensor's sum and sum of squares (in float64): ranks that hold the same
  // weights have the same bits here, cheaply compared across a group.
  std::vector<double> weights_fingerprint() const;

  TrainResult train_step(const TrainBatch& batch, const TrainOptions& options);
  // log softmax(z / temperature)[token] of every token but each sequence's first (0 there).
  std::vector<float> logprobs(const PackedSequences& sequences, double temperature,
                              int64_t micro_batch_tokens, bool pack);

 private:
  void copy_master_to_model();

  std::mutex mutex_;
  PolicyOptions options_;
  std::unique_ptr<Transformer> model_;
  std::vector<at::Tensor> master_;  // fp32; aliases model_->parameters() when compute is fp32
  std::vector<bool> decay_;         // weight decay on matrices, not on norms and biases
  AdamWState adam_;
  std::vector<at::Tensor> gradients_;  // fp32, master_'s shapes: train_step's sums
  Generator generator_;
  std::shared_ptr<ProcessGroup> group_;
};

// Micro-batches of sequence indices, longest first, each holding at most `budget` tokens:
// packed, the sum of their lengths; padded, rows x the longest. A sequence longer than the
// budget goes alone.
std::vector<std::vector<int64_t>> plan_micro_batches(const PackedSequences& sequences, int64_t budget, bool packed);

}  // namespace swerl
