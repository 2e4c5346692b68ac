#include "model/policy.h"

#include <c10/core/GradMode.h>
#include <torch/csrc/autograd/autograd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

#include "core/profile.h"
#include "core/swerl_error.h"
#include "loss/loss.h"

namespace swerl {

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// How a micro-batch's sequences sit in the forward's input.
struct MicroBatch {
  at::Tensor ids;                  // [rows, width]
  std::vector<int64_t> first_row;  // per chosen sequence: its first token's row of hidden.view({-1, H})
  std::vector<int64_t> segments;   // packed: the sequences' lengths along the one row
};

// Packed: the chosen sequences end to end in one row. Padded: a row each, right-padded with
// token 0 to the longest.
MicroBatch lay_out(const PackedSequences& seqs, const std::vector<int64_t>& chosen, bool packed) {
  MicroBatch mb;
  int64_t rows = 1, width = 0;
  if (packed) {
    for (int64_t s : chosen) {
      mb.first_row.push_back(width);
      mb.segments.push_back(seqs.length(s));
      width += seqs.length(s);
    }
  } else {
    rows = int64_t(chosen.size());
    for (int64_t s : chosen) width = std::max(width, seqs.length(s));
    for (int64_t b = 0; b < rows; ++b) mb.first_row.push_back(b * width);
  }
  mb.ids = at::zeros({rows, width}, at::kLong);
  int64_t* out = mb.ids.data_ptr<int64_t>();
  for (size_t b = 0; b < chosen.size(); ++b) {
    const int64_t s = chosen[b];
    for (int64_t j = 0; j < seqs.length(s); ++j) out[mb.first_row[b] + j] = seqs.tokens[seqs.offsets[s] + j];
  }
  return mb;
}

// The hidden-state rows that predict the weighted tokens of a micro-batch (every token but a
// sequence's first when weights is null), and where those tokens sit in the packed arrays.
struct LossRows {
  std::vector<int64_t> hidden_rows;  // into hidden.view({-1, H})
  std::vector<int64_t> packed;       // into the batch's per-token arrays
};

LossRows loss_rows(const PackedSequences& seqs, const std::vector<float>* weights,
                   const std::vector<int64_t>& chosen, const MicroBatch& mb) {
  LossRows rows;
  for (size_t b = 0; b < chosen.size(); ++b) {
    const int64_t s = chosen[b], o = seqs.offsets[s];
    for (int64_t j = 1; j < seqs.length(s); ++j) {
      if (weights && (*weights)[o + j] == 0.0f) continue;
      rows.hidden_rows.push_back(mb.first_row[b] + j - 1);
      rows.packed.push_back(o + j);
    }
  }
  return rows;
}

at::Tensor gather_floats(const std::vector<float>& values, const std::vector<int64_t>& at_index) {
  at::Tensor out = at::empty({int64_t(at_index.size())}, at::kFloat);
  float* o = out.data_ptr<float>();
  for (size_t i = 0; i < at_index.size(); ++i) o[i] = values[at_index[i]];
  return out;
}

void add_stats(LossStats& total, const LossStats& part) {
  total.loss += part.loss;
  const double n = double(part.masked_tokens);
  total.approx_kl += part.approx_kl * n;
  total.clip_frac_low += part.clip_frac_low * n;
  total.clip_frac_high += part.clip_frac_high * n;
  total.ratio_mean += part.ratio_mean * n;
  total.entropy_mean += part.entropy_mean * n;
  total.ratio_max = std::max(total.ratio_max, part.ratio_max);
  total.masked_tokens += part.masked_tokens;
}

void finish_stats(LossStats& total) {
  if (total.masked_tokens == 0) return;
  const double n = double(total.masked_tokens);
  total.approx_kl /= n;
  total.clip_frac_low /= n;
  total.clip_frac_high /= n;
  total.ratio_mean /= n;
  total.entropy_mean /= n;
}

}  // namespace

std::vector<std::vector<int64_t>> plan_micro_batches(const PackedSequences& seqs, int64_t budget, bool packed) {
  std::vector<int64_t> order(size_t(seqs.count()));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return seqs.length(a) > seqs.length(b); });
  std::vector<std::vector<int64_t>> plan;
  if (packed) {
    // First fit, longest first: each sequence joins the first micro-batch it still fits in.
    std::vector<int64_t> used;
    for (int64_t s : order) {
      size_t bin = 0;
      while (bin < plan.size() && used[bin] + seqs.length(s) > budget) ++bin;
      if (bin == plan.size()) {
        plan.emplace_back();
        used.push_back(0);
      }
      plan[bin].push_back(s);
      used[bin] += seqs.length(s);
    }
    return plan;
  }
  int64_t longest = 0;
  for (int64_t s : order) {
    if (!plan.empty() && int64_t(plan.back().size() + 1) * longest <= budget) {
      plan.back().push_back(s);
    } else {
      plan.push_back({s});
      longest = seqs.length(s);
    }
  }
  return plan;
}

Policy::Policy(const ModelConfig& config, const PolicyOptions& options)
    : options_(options),
      model_(std::make_unique<Transformer>(config, options.device, options.compute_dtype)),
      generator_(*model_) {
  generator_.prefixes().set_budget(options.prefix_cache_bytes);
  generator_.set_prefill_chunk(options.prefill_chunk_tokens);
  if (!options.decode_graphs) generator_.set_decode_mode(DecodeMode::Off);
  for (size_t i = 0; i < model_->specs().size(); ++i) {
    const at::Tensor& p = model_->parameters()[i];
    p.requires_grad_(true);
    master_.push_back(options.compute_dtype == at::kFloat ? p : at::zeros_like(p, at::kFloat));
    const std::string& name = model_->specs()[i].name;
    decay_.push_back(!ends_with(name, "norm.weight") && !ends_with(name, ".bias"));
  }
}

void Policy::copy_master_to_model() {
  if (options_.compute_dtype == at::kFloat) return;
  c10::NoGradGuard no_grad;
  for (size_t i = 0; i < master_.size(); ++i) model_->parameters()[i].copy_(master_[i]);
}

void Policy::init_random(double std, uint64_t seed) {
  swerl::init_random(*model_, std, seed);
  if (options_.compute_dtype != at::kFloat) {
    // Draw in fp32 for the master copy, so fp32 and bf16 policies of one seed agree.
    Transformer fp32(model_->config(), at::kCPU, at::kFloat);
    swerl::init_random(fp32, std, seed);
    c10::NoGradGuard no_grad;
    for (size_t i = 0; i < master_.size(); ++i) master_[i].copy_(fp32.parameters()[i]);
    copy_master_to_model();
  }
  generator_.reset();
}

void Policy::set_state(StateKind kind, int64_t index, const at::Tensor& values) {
  c10::NoGradGuard no_grad;
  const at::Tensor v = values.to(options_.device, at::kFloat);
  switch (kind) {
    case StateKind::Parameter:
      master_[index].copy_(v);
      if (options_.compute_dtype != at::kFloat) model_->parameters()[index].copy_(v);
      generator_.reset();
      return;
    case StateKind::ExpAvg:
    case StateKind::ExpAvgSq:
      if (adam_.exp_avg.empty()) {
        for (const at::Tensor& p : master_) {
          adam_.exp_avg.push_back(at::zeros_like(p));
          adam_.exp_avg_sq.push_back(at::zeros_like(p));
        }
      }
      (kind == StateKind::ExpAvg ? adam_.exp_avg : adam_.exp_avg_sq)[index].copy_(v);
      return;
  }
}

at::Tensor Policy::get_state(StateKind kind, int64_t index) const {
  switch (kind) {
    case StateKind::Parameter:
      return master_[index].detach().to(at::kCPU, at::kFloat).contiguous();
    case StateKind::ExpAvg:
    case StateKind::ExpAvgSq:
      if (adam_.exp_avg.empty()) throw_invalid("the optimizer has no state yet (no step taken)");
      return (kind == StateKind::ExpAvg ? adam_.exp_avg : adam_.exp_avg_sq)[index]
          .to(at::kCPU, at::kFloat)
          .contiguous();
  }
  throw_invalid("unknown state kind");
}

void Policy::join_group(std::shared_ptr<ProcessGroup> group) {
  c10::NoGradGuard no_grad;
  group->broadcast(master_, 0);
  copy_master_to_model();
  // AdamW's state too (a resumed rank 0 has it, the others start fresh): whether there is
  // any, and its step count, then the moments.
  const bool lead = group->rank() == 0;
  std::vector<double> meta{lead && has_optimizer_state() ? 1.0 : 0.0, lead ? double(adam_.step) : 0.0};
  group->all_reduce_sum(meta);
  if (meta[0] > 0) {
    if (adam_.exp_avg.empty()) {
      for (const at::Tensor& p : master_) {
        adam_.exp_avg.push_back(at::zeros_like(p));
        adam_.exp_avg_sq.push_back(at::zeros_like(p));
      }
    }
    group->broadcast(adam_.exp_avg, 0);
    group->broadcast(adam_.exp_avg_sq, 0);
  } else {
    adam_.exp_avg.clear();
    adam_.exp_avg_sq.clear();
  }
  adam_.step = int64_t(meta[1]);
  generator_.reset();
  group_ = std::move(group);
}

std::vector<double> Policy::weights_fingerprint() const {
  c10::NoGradGuard no_grad;
  std::vector<double> out;
  for (const at::Tensor& m : master_) {
    const at::Tensor d = m.to(at::kDouble);
    out.push_back(d.sum().item<double>());
    out.push_back(d.pow(2).sum().item<double>());
  }
  return out;
}

void Policy::set_optimizer_step(int64_t step) {
  if (step < 0) throw_invalid("optimizer step must be >= 0");
  adam_.step = step;
}

TrainResult Policy::train_step(const TrainBatch& batch, const TrainOptions& options) {
  check_loss_options(options.loss);
  const auto started = std::chrono::steady_clock::now();
  const PackedSequences& seqs = batch.sequences;
  const int64_t vocab = model_->config().vocab_size;
  for (int32_t token : seqs.tokens)
    if (token < 0 || token >= vocab)
      throw_invalid("batch.tokens has token " + std::to_string(token) + " outside the vocabulary [0, " +
                    std::to_string(vocab) + ")");
  generator_.reset();  // the cached keys and values belong to the old weights
  TrainResult result;
  result.tokens = int64_t(seqs.tokens.size());

  const std::vector<at::Tensor>& params = model_->parameters();
  // fp32 gradient sums, kept from step to step (one allocation per run, not per step).
  std::vector<at::Tensor>& grads = gradients_;
  {
    profile::Phase phase("grad.zero");
    if (grads.empty())
      for (const at::Tensor& m : master_) grads.push_back(at::zeros_like(m));
    else
      at::_foreach_zero_(grads);
    for (const at::Tensor& p : params) p.mutable_grad() = at::Tensor();
  }

  for (const std::vector<int64_t>& chosen : plan_micro_batches(seqs, options.micro_batch_tokens, options.pack)) {
    MicroBatch mb;
    LossRows rows;
    {
      profile::Phase phase("batch.layout");
      mb = lay_out(seqs, chosen, options.pack);
      rows = loss_rows(seqs, &batch.weights, chosen, mb);
    }
    if (rows.packed.empty()) continue;  // nothing weighted: no forward needed
    ++result.micro_batches;

    const at::Tensor hidden = model_->forward(mb.ids, options.activation_checkpointing, mb.segments);
    PolicyLossInputs in;
    at::Tensor picked;
    {
      profile::Phase phase("loss.inputs");  // the weighted rows picked, per-token arrays uploaded
      const at::Tensor index = at::from_blob(const_cast<int64_t*>(rows.hidden_rows.data()),
                                             {int64_t(rows.hidden_rows.size())}, at::kLong)
                                   .to(options_.device);
      picked = hidden.reshape({-1, hidden.size(2)}).index_select(0, index);
      std::vector<int64_t> targets(rows.packed.size());
      for (size_t i = 0; i < rows.packed.size(); ++i) targets[i] = seqs.tokens[rows.packed[i]];
      in.targets = at::from_blob(targets.data(), {int64_t(targets.size())}, at::kLong).clone();
      in.old_logprobs = gather_floats(batch.old_logprobs, rows.packed);
      in.advantages = gather_floats(batch.advantages, rows.packed);
      in.weights = gather_floats(batch.weights, rows.packed);
      if (options.loss.has_kl()) in.ref_logprobs = gather_floats(batch.ref_logprobs, rows.packed);
    }

    at::Tensor loss;
    {
      profile::Phase phase("loss");
      if (options.path == LossPath::Fused) {
        DifferentiableLoss out = differentiable_fused_linear_policy_loss(
            picked, model_->lm_head(), in, options.loss, options.chunks);
        add_stats(result.stats, out.stats);
        loss = out.loss;
      } else {
        loss = plain_policy_loss(picked, model_->lm_head(), in, options.loss);
        result.stats.loss += loss.item<double>();
      }
    }
    {
      profile::Phase phase("backward");
      torch::autograd::backward({loss});
    }
    profile::Phase phase("grad.accumulate");
    c10::NoGradGuard no_grad;
    for (size_t i = 0; i < params.size(); ++i) {
      if (!params[i].grad().defined()) continue;
      grads[i].add_(params[i].grad().to(at::kFloat));
      params[i].mutable_grad() = at::Tensor();
    }
  }
  c10::NoGradGuard no_grad;
  if (group_) {
    // Token weights carry the global denominators: the sum over ranks is the global gradient.
    group_->all_reduce_sum(grads);
    // The stats are still sums (finish_stats divides): they add up over ranks too; ratio_max
    // stays this rank's.
    LossStats& st = result.stats;
    std::vector<double> sums{st.loss, st.approx_kl, st.clip_frac_low, st.clip_frac_high, st.ratio_mean, st.entropy_mean, double(st.masked_tokens)};
    group_->all_reduce_sum(sums);
    st.loss = sums[0], st.approx_kl = sums[1], st.clip_frac_low = sums[2], st.clip_frac_high = sums[3];
    st.ratio_mean = sums[4], st.entropy_mean = sums[5], st.masked_tokens = int64_t(sums[6]);
  }
  finish_stats(result.stats);

  {
    // Each tensor's norm on the device, one read back for all (not one per tensor).
    profile::Phase phase("grad.norm");
    const at::Tensor norms = at::stack(at::_foreach_norm(grads)).to(at::kDouble);
    result.grad_norm = norms.pow(2).sum().sqrt().item<double>();
  }
  if (options.return_gradients)
    for (const at::Tensor& g : grads) result.gradients.push_back(g.to(at::kCPU).clone());
  if (options.apply_update) {
    if (!std::isfinite(result.grad_norm))
      throw Error("ERR_SWERL_NUMERIC", "the gradient norm is " + std::to_string(result.grad_norm) +
                                           "; the update was skipped and the weights are unchanged");
    if (options.max_grad_norm > 0 && result.grad_norm > options.max_grad_norm) {
      const double scale = options.max_grad_norm / (result.grad_norm + 1e-6);
      profile::Phase phase("grad.clip");
      at::_foreach_mul_(grads, scale);
    }
    adamw_step(master_, grads, decay_, adam_, options.adamw);
    profile::Phase phase("weights.copy");
    copy_master_to_model();
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return result;
}

std::vector<float> Policy::logprobs(const PackedSequences& seqs, double temperature,
                                    int64_t micro_batch_tokens, bool pack) {
  c10::NoGradGuard no_grad;
  const int64_t vocab = model_->config().vocab_size;
  for (int32_t token : seqs.tokens)
    if (token < 0 || token >= vocab)
      throw_invalid("sequences have token " + std::to_string(token) + " outside the vocabulary [0, " +
                    std::to_string(vocab) + ")");
  std::vector<float> out(seqs.tokens.size(), 0.0f);
  // Logit rows per chunk: about 32 M floats of logits at a time.
  const int64_t rows_per_chunk = std::max<int64_t>(1, (int64_t(1) << 25) / vocab);
  for (const std::vector<int64_t>& chosen : plan_micro_batches(seqs, micro_batch_tokens, pack)) {
    const MicroBatch mb = lay_out(seqs, chosen, pack);
    const at::Tensor hidden =
        model_->forward(mb.ids, false, mb.segments).reshape({-1, model_->config().hidden_size});
    LossRows scored = loss_rows(seqs, nullptr, chosen, mb);
    std::vector<int64_t>& rows = scored.hidden_rows;
    const std::vector<int64_t>& packed = scored.packed;
    std::vector<int64_t> targets;
    for (int64_t p : packed) targets.push_back(seqs.tokens[p]);
    for (size_t r0 = 0; r0 < rows.size(); r0 += size_t(rows_per_chunk)) {
      const int64_t n = std::min<int64_t>(rows_per_chunk, int64_t(rows.size() - r0));
      const auto cpu_long = at::TensorOptions().dtype(at::kLong);
      const at::Tensor index = at::from_blob(rows.data() + r0, {n}, cpu_long).to(options_.device);
      const at::Tensor target = at::from_blob(targets.data() + r0, {n, 1}, cpu_long).to(options_.device);
      const at::Tensor logits = at::matmul(hidden.index_select(0, index), model_->lm_head().t());
      const at::Tensor lp = at::log_softmax(logits.to(at::kFloat) / temperature, -1)
                                .gather(1, target)
                                .squeeze(1)
                                .cpu()
                                .contiguous();
      const float* v = lp.data_ptr<float>();
      for (int64_t i = 0; i < n; ++i) out[packed[r0 + i]] = v[i];
    }
  }
  return out;
}

}  // namespace swerl
