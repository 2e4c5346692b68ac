// The loss's entry over libtorch tensors: checks (options here and nowhere else), device
// placement and the plan's raw views (tile_plan.h); the work runs in the CPU twin or the CUDA
// kernels (device_dispatch.h).
#include "loss/loss.h"

#include <cmath>
#include <numeric>
#include <vector>

#include "core/swerl_error.h"
#include "loss/cpu_twin.h"
#include "loss/device_dispatch.h"

namespace swerl {

namespace {


void check_vector(const at::Tensor& t, int64_t n, at::ScalarType type, const char* name) {
  if (!t.defined() || t.dim() != 1 || t.size(0) != n || t.scalar_type() != type ||
      !t.device().is_cpu())
    throw_invalid(std::string(name) + " must be a CPU tensor of " + std::to_string(n) + " " +
                  c10::toString(type) + " values");
}

// The materialized loss reads the per-token inputs in place.
void check_contiguous_tokens(const PolicyLossInputs& in, int64_t n, const LossOptions& options) {
  for (auto [t, name] : {std::pair{&in.old_logprobs, "oldLogprobs"}, {&in.advantages, "advantages"},
                         {&in.weights, "weights"}, {&in.ref_logprobs, "kl.refLogprobs"}}) {
    if (t == &in.ref_logprobs && !options.has_kl()) continue;
    if (!t->is_contiguous())
      throw_invalid(std::string(name) + " must be a contiguous CPU float32 tensor of " +
                    std::to_string(n) + " tokens");
  }
}

// Means over the masked tokens (0 when there are none).
LossStats stats_of(const LossSums& s) {
  LossStats out;
  out.loss = s.loss;
  out.masked_tokens = int64_t(s.masked);
  if (s.masked > 0) {
    out.ratio_mean = s.ratio_sum / s.masked;
    out.ratio_max = s.ratio_max;
    out.approx_kl = s.old_minus_new_sum / s.masked;
    out.entropy_mean = s.entropy_sum / s.masked;
    out.clip_frac_low = s.clipped_low / s.masked;
    out.clip_frac_high = s.clipped_high / s.masked;
  }
  return out;
}

fused::Dtype dtype_of(const at::Tensor& t) {
  switch (t.scalar_type()) {
    case at::kFloat: return fused::Dtype::F32;
    case at::kBFloat16: return fused::Dtype::BF16;
    case at::kHalf: return fused::Dtype::F16;
    default: throw_invalid("hidden and weight must be float32, bfloat16 or float16");
  }
}

void check_fused_operands(const at::Tensor& hidden, const at::Tensor& weight) {
  if (hidden.dim() != 2) throw_invalid("hidden must be a tensor [T, H]");
  if (weight.dim() != 2) throw_invalid("weight must be a tensor [V, H]");
  dtype_of(hidden);
  if (hidden.scalar_type() != weight.scalar_type())
    throw_invalid("hidden and weight must have the same dtype");
  if (hidden.device() != weight.device())
    throw_invalid("hidden and weight must be on the same device");
  if (weight.size(1) != hidden.size(1))
    throw_invalid("weight [V, H] and hidden [T, H] must share H (hiddenSize)");
}

fused::Problem problem_of(const at::Tensor& hidden, const at::Tensor& weight,
                          const at::Tensor& targets, double temperature, const FusedChunks& chunks) {
  fused::Problem p;
  p.tokens = hidden.size(0);
  p.hidden_size = hidden.size(1);
  p.vocab = weight.size(0);
  p.dtype = dtype_of(hidden);
  p.hidden = hidden.data_ptr();
  p.weight = weight.data_ptr();
  p.targets = targets.data_ptr<int64_t>();
  p.temperature = temperature;
  p.token_tile = chunks.tokens;
  p.vocab_tile = chunks.vocab;
  p.deterministic = chunks.deterministic;
  return p;
}

at::Tensor on(const at::Tensor& t, const at::Device& device) { return t.to(device).contiguous(); }

// The caller's buffer, checked, or a new one.
at::Tensor buffer(const at::Tensor& given, at::IntArrayRef shape, const at::TensorOptions& options,
                  const char* name) {
  if (!given.defined()) return at::empty(shape, options);
  if (given.sizes() != shape || given.scalar_type() != options.dtype().toScalarType() ||
      given.device() != options.device() || !given.is_contiguous())
    throw_invalid(std::string("the ") + name + " buffer must be a contiguous " +
                  c10::toString(options.dtype().toScalarType()) + " tensor of shape " +
                  c10::str(shape) + " on " + options.device().str());
  return given;
}

}  // namespace

void check_loss_options(const LossOptions& o) {
  if (o.objective != Objective::PolicyGradient && o.objective != Objective::Nll)
    throw_invalid("objective must be 'policy-gradient' or 'nll'");
  if (!(o.clip_low >= 0.0 && o.clip_low < 1.0)) throw_invalid("clipLow must be in [0, 1)");
  if (!(o.clip_high >= 0.0)) throw_invalid("clipHigh must be >= 0 (Infinity allowed)");
  if (!(o.dual_clip == 0.0 || (o.dual_clip > 1.0 && std::isfinite(o.dual_clip))))
    throw_invalid("dualClip must be 0 (off) or a finite number > 1");
  // The same bounds as lib/math/policy-loss.ts's LOSS_FIELDS (test/lib/train/loss-bounds.test.ts).
  if (!(o.temperature >= 0.01 && o.temperature <= 10.0))
    throw_invalid("temperature must be in [0.01, 10]");
  if (!(std::fabs(o.entropy_coef) <= 100.0)) throw_invalid("entropyCoef must be in [-100, 100]");
  if (!(o.kl_coef >= 0.0 && o.kl_coef <= 100.0)) throw_invalid("kl.coef must be in [0, 100]");
  if (o.kl_kind != KlKind::K1 && o.kl_kind != KlKind::K2 && o.kl_kind != KlKind::K3)
    throw_invalid("kl.kind must be k1, k2 or k3");
}

void check_policy_loss_inputs(const PolicyLossInputs& in, int64_t tokens, int64_t vocab,
                              const LossOptions& options) {
  check_loss_options(options);
  check_vector(in.targets, tokens, at::kLong, "targets");
  check_vector(in.old_logprobs, tokens, at::kFloat, "oldLogprobs");
  check_vector(in.advantages, tokens, at::kFloat, "advantages");
  check_vector(in.weights, tokens, at::kFloat, "weights");
  if (options.has_kl()) check_vector(in.ref_logprobs, tokens, at::kFloat, "kl.refLogprobs");
  if (tokens > 0) {
    const int64_t lo = in.targets.min().item<int64_t>(), hi = in.targets.max().item<int64_t>();
    if (lo < 0 || hi >= vocab)
      throw_invalid("targets must lie in [0, " + std::to_string(vocab) + ")");
  }
}

PolicyLossResult policy_loss(const at::Tensor& logits, const PolicyLossInputs& in,
                             const LossOptions& options) {
  if (logits.dim() != 2 || logits.scalar_type() != at::kFloat || !logits.device().is_cpu())
    throw_invalid("logits must be a CPU float32 tensor [T, V]");
  const int64_t tokens = logits.size(0), vocab = logits.size(1);
  check_policy_loss_inputs(in, tokens, vocab, options);
  check_contiguous_tokens(in, tokens, options);

  // One tile spanning the whole vocabulary, through the CPU twin's steps.
  at::Tensor scaled = logits.mul(1.0 / options.temperature).contiguous();  // becomes the gradient
  const at::Tensor targets = in.targets.contiguous();
  std::vector<RowSoftmax> rows(tokens, row_softmax_empty());
  fused::cpu_absorb_tile(scaled.data_ptr<float>(), tokens, vocab, targets.data_ptr<int64_t>(), 0,
                         rows.data());
  PolicyLossResult out;
  at::Tensor lse = at::empty({tokens}, at::kFloat);
  out.entropy = at::empty({tokens}, at::kFloat);
  out.logprobs = at::empty({tokens}, at::kFloat);
  for (int64_t t = 0; t < tokens; ++t)
    row_softmax_finish(rows[t], lse.data_ptr<float>()[t], out.entropy.data_ptr<float>()[t],
                       out.logprobs.data_ptr<float>()[t]);

  const at::Tensor logit_coef = at::empty({tokens}, at::kFloat);
  const at::Tensor entropy_coef = at::empty({tokens}, at::kFloat);
  out.stats = stats_of(fused::cpu_token_terms(
      tokens, out.logprobs.data_ptr<float>(), out.entropy.data_ptr<float>(),
      in.old_logprobs.data_ptr<float>(), in.advantages.data_ptr<float>(),
      in.weights.data_ptr<float>(), options.has_kl() ? in.ref_logprobs.data_ptr<float>() : nullptr,
      options, logit_coef.data_ptr<float>(), entropy_coef.data_ptr<float>()));
  fused::BackwardIO io;
  io.lse = lse.data_ptr<float>();
  io.entropy = out.entropy.data_ptr<float>();
  io.logit_coef = logit_coef.data_ptr<float>();
  io.entropy_coef = entropy_coef.data_ptr<float>();
  io.has_entropy_term = options.entropy_coef != 0.0;
  std::vector<int32_t> ids(tokens);
  std::iota(ids.begin(), ids.end(), 0);
  fused::cpu_logit_grad_tile(scaled.data_ptr<float>(), tokens, vocab, ids.data(), 0,
                             targets.data_ptr<int64_t>(), io);
  out.grad_logits = scaled;
  return out;
}

FusedLinearForward fused_linear_policy_loss_forward(const at::Tensor& hidden_in,
                                                     const at::Tensor& weight_in,
                                                     const PolicyLossInputs& in,
                                                     const LossOptions& options,
                                                     const FusedChunks& chunks,
                                                     const FusedForwardBuffers& buffers) {
  check_fused_operands(hidden_in, weight_in);
  const at::Tensor hidden = hidden_in.contiguous(), weight = weight_in.contiguous();
  check_policy_loss_inputs(in, hidden.size(0), weight.size(0), options);
  const at::Device device = hidden.device();

  const at::Tensor targets = on(in.targets, device), old = on(in.old_logprobs, device),
                   advantages = on(in.advantages, device), weights = on(in.weights, device);
  const at::Tensor ref = options.has_kl() ? on(in.ref_logprobs, device) : at::Tensor();
  const auto per_token = [&](const at::Tensor& given, const char* name) {
    return buffer(given, {hidden.size(0)}, hidden.options().dtype(at::kFloat), name);
  };
  FusedLinearForward out;
  out.logprobs = per_token(buffers.logprobs, "logprobs");
  out.entropy = per_token(buffers.entropy, "entropy");
  out.lse = per_token(buffers.lse, "lse");
  out.logit_coef = per_token(buffers.logit_coef, "logit_coef");
  out.entropy_coef = per_token(buffers.entropy_coef, "entropy_coef");
  out.has_entropy_term = options.entropy_coef != 0.0;

  fused::ForwardIO io;
  io.old_logprobs = old.data_ptr<float>();
  io.advantages = advantages.data_ptr<float>();
  io.weights = weights.data_ptr<float>();
  io.ref_logprobs = ref.defined() ? ref.data_ptr<float>() : nullptr;
  io.options = options;
  io.logprobs = out.logprobs.data_ptr<float>();
  io.entropy = out.entropy.data_ptr<float>();
  io.lse = out.lse.data_ptr<float>();
  io.logit_coef = out.logit_coef.data_ptr<float>();
  io.entropy_coef = out.entropy_coef.data_ptr<float>();
  out.stats = stats_of(run_fused_forward(
      device, problem_of(hidden, weight, targets, options.temperature, chunks), io, buffers.workspace));
  return out;
}

size_t fused_linear_workspace_bytes(const at::Tensor& hidden, const at::Tensor& weight,
                                    const FusedChunks& chunks, bool backward) {
  check_fused_operands(hidden, weight);
  const at::Tensor no_targets = at::empty({0}, hidden.options().dtype(at::kLong));  // sizes only
  return fused_workspace_bytes(hidden.device(), problem_of(hidden, weight, no_targets, 1.0, chunks), backward);
}

FusedLinearGrads fused_linear_policy_loss_backward(
    const at::Tensor& hidden_in, const at::Tensor& weight_in, const at::Tensor& targets_in,
    const FusedLinearForward& fwd, double temperature, const at::Tensor& grad_scale_in,
    const FusedChunks& chunks, const FusedBackwardBuffers& buffers) {
  check_fused_operands(hidden_in, weight_in);
  const at::Tensor hidden = hidden_in.contiguous(), weight = weight_in.contiguous();
  const at::Device device = hidden.device();
  const int64_t tokens = hidden.size(0);
  for (const at::Tensor* t : {&fwd.lse, &fwd.entropy, &fwd.logit_coef, &fwd.entropy_coef}) {
    if (!t->defined() || t->numel() != tokens || t->device() != device || t->scalar_type() != at::kFloat)
      throw_invalid("the forward's per-token results must match hidden (run the forward first)");
  }
  const at::Tensor targets = on(targets_in.to(at::kLong), device);
  if (targets.numel() != tokens) throw_invalid("targets must have one entry per token");
  const at::Tensor grad_scale =
      grad_scale_in.defined() ? on(grad_scale_in.reshape({1}).to(at::kFloat), device) : at::Tensor();

  if (buffers.accumulate_grad_weight && !buffers.grad_weight.defined())
    throw_invalid("accumulate_grad_weight needs the grad_weight buffer to add into");
  FusedLinearGrads out{buffer(buffers.grad_hidden, hidden.sizes(), hidden.options(), "grad_hidden"),
                       buffer(buffers.grad_weight, weight.sizes(), weight.options().dtype(at::kFloat), "grad_weight")};
  fused::BackwardIO io;
  io.lse = fwd.lse.data_ptr<float>();
  io.entropy = fwd.entropy.data_ptr<float>();
  io.logit_coef = fwd.logit_coef.data_ptr<float>();
  io.entropy_coef = fwd.entropy_coef.data_ptr<float>();
  io.has_entropy_term = fwd.has_entropy_term;
  io.grad_scale = grad_scale.defined() ? grad_scale.data_ptr<float>() : nullptr;
  io.grad_hidden = out.grad_hidden.data_ptr();
  io.grad_weight = out.grad_weight.data_ptr<float>();
  io.accumulate_grad_weight = buffers.accumulate_grad_weight;
  run_fused_backward(device, problem_of(hidden, weight, targets, temperature, chunks), io, buffers.workspace);
  return out;
}

}  // namespace swerl
