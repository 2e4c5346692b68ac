// The fused linear loss over libtorch tensors: checks, device placement and the plan's raw
// views (fused_loss_plan.h); the work runs in the CPU twin or the CUDA kernels.
#include "fused_loss_device.h"
#include "policy_loss.h"
#include "swerl_error.h"

namespace swerl {

namespace {

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

FusedLinearGrads fused_linear_policy_loss_backward(const at::Tensor& hidden_in,
                                                    const at::Tensor& weight_in,
                                                    const at::Tensor& targets_in,
                                                    const FusedLinearForward& fwd,
                                                    double temperature,
                                                    const at::Tensor& grad_scale_in,
                                                    const FusedChunks& chunks,
                                                    const FusedBackwardBuffers& buffers) {
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
