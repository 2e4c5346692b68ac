// Bindings of the two policy losses (async: O(T x V) work) and of the autograd probe.
#include <torch/csrc/autograd/autograd.h>

#include <cmath>

#include "bind/bindings.h"
#include "bind/loss_js.h"
#include "bind/napi_util.h"
#include "bind/promise_worker.h"
#include "core/swerl_error.h"
#include "loss/loss.h"

namespace swerl::js {

namespace {

struct LossJob {
  // Inputs: raw views into JS typed arrays (kept alive by the worker) and plain values.
  int64_t tokens = 0, vocab = 0, hidden_size = 0, input_size = 0;
  float* logits = nullptr;      // policyLoss
  float* hidden = nullptr;      // fusedLinearPolicyLoss
  float* weight = nullptr;      // fused and probe
  float* input = nullptr;       // probe
  float* projection = nullptr;  // probe
  bool probe_fused = true;
  at::ScalarType operand_type = at::kFloat;  // fusedLinearPolicyLoss: hidden and weight rounded to it
  at::Device device = at::kCPU;
  std::vector<int64_t> targets;
  float *old_logprobs = nullptr, *advantages = nullptr, *weights = nullptr,
        *ref_logprobs = nullptr;
  LossOptions options;
  FusedChunks chunks;
  // Results: what every loss returns, then its gradients by their JS names (CPU tensors).
  LossStats stats;
  at::Tensor logprobs, entropy;
  std::vector<std::pair<const char*, at::Tensor>> gradients;
};

at::Tensor view(float* data, at::IntArrayRef shape) {
  return at::from_blob(data, shape, at::TensorOptions().dtype(at::kFloat));
}

template <typename T>
T* sized(const ArrayView<T>& a, int64_t expected, const char* name) {
  if (int64_t(a.length) != expected)
    throw_invalid(std::string(name) + " must have " + std::to_string(expected) + " elements");
  return a.data;
}


at::ScalarType scalar_type_of(const std::string& dtype) {
  if (dtype == "float32") return at::kFloat;
  if (dtype == "bfloat16") return at::kBFloat16;
  if (dtype == "float16") return at::kHalf;
  throw_invalid("dtype must be 'float32', 'bfloat16' or 'float16'");
}

at::Device device_of(const std::string& device) {
  if (device == "cpu") return at::kCPU;
  if (device == "cuda") return at::Device(at::kCUDA, 0);
  throw_invalid("device must be 'cpu' or 'cuda'");
}

// Per-token inputs shared by every loss; T is the length of targets.
void read_token_inputs(const Napi::Object& in, LossJob& job, std::vector<Napi::Object>& owners) {
  const auto targets = int32_field(in, "targets");
  job.tokens = int64_t(targets.length);
  job.targets.assign(targets.data, targets.data + targets.length);
  const auto old_lp = float32_field(in, "oldLogprobs");
  const auto adv = float32_field(in, "advantages");
  const auto w = float32_field(in, "weights");
  job.old_logprobs = sized(old_lp, job.tokens, "oldLogprobs");
  job.advantages = sized(adv, job.tokens, "advantages");
  job.weights = sized(w, job.tokens, "weights");
  owners.insert(owners.end(), {old_lp.owner, adv.owner, w.owner});
  if (job.options.has_kl()) {
    const auto ref = float32_field(in, "refLogprobs");
    job.ref_logprobs = sized(ref, job.tokens, "kl.refLogprobs");
    owners.push_back(ref.owner);
  }
  check_token_values(job.tokens, job.old_logprobs, job.advantages, job.weights, job.ref_logprobs);
}

// A size JS has checked (a positive integer); NaN or 1e300 would be undefined behaviour as int64.
int64_t size_field(const Napi::Object& o, const char* name) {
  const double x = number_field(o, name);
  if (!(x >= 1 && x <= 2147483647.0 && x == std::floor(x)))
    throw_invalid(std::string(name) + " must be an integer in [1, 2^31)");
  return int64_t(x);
}

PolicyLossInputs token_tensors(LossJob& job) {
  PolicyLossInputs in;
  in.targets = at::from_blob(job.targets.data(), {job.tokens}, at::kLong);
  in.old_logprobs = view(job.old_logprobs, {job.tokens});
  in.advantages = view(job.advantages, {job.tokens});
  in.weights = view(job.weights, {job.tokens});
  if (job.ref_logprobs) in.ref_logprobs = view(job.ref_logprobs, {job.tokens});
  return in;
}

// What every loss binding reads first: its options and the per-token inputs.
struct LossCall {
  std::unique_ptr<LossJob> job = std::make_unique<LossJob>();
  std::vector<Napi::Object> owners;
  Napi::Object inputs;
};

LossCall begin_loss_call(const Napi::CallbackInfo& info) {
  LossCall call;
  call.inputs = object_arg(info, 0, "inputs");
  read_loss_options(object_arg(info, 1, "options"), call.job->options, call.job->chunks);
  read_token_inputs(call.inputs, *call.job, call.owners);
  call.job->vocab = size_field(call.inputs, "vocabSize");
  return call;
}

Napi::Value loss_result(Napi::Env env, LossJob& job) {
  Napi::Object out = Napi::Object::New(env);
  out.Set("loss", job.stats.loss);
  out.Set("logprobs", tensor_to_js(env, job.logprobs));
  out.Set("entropy", tensor_to_js(env, job.entropy));
  out.Set("stats", stats_to_js(env, job.stats));
  for (const auto& [name, gradient] : job.gradients) out.Set(name, tensor_to_js(env, gradient));
  return out;
}

// Runs the loss off the event loop; the promise resolves to loss_result.
Napi::Value start_loss(Napi::Env env, LossCall& call, bool grad_mode, void (*run)(LossJob&)) {
  return PromiseWorker<LossJob>::start(env, std::move(call.job), call.owners, grad_mode, run, loss_result);
}

Napi::Value PolicyLoss(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    LossCall call = begin_loss_call(info);
    LossJob& job = *call.job;
    const auto logits = float32_field(call.inputs, "logits");
    job.logits = sized(logits, job.tokens * job.vocab, "logits");
    call.owners.push_back(logits.owner);
    return start_loss(info.Env(), call, /*grad_mode=*/false, [](LossJob& j) {
      PolicyLossResult r = policy_loss(view(j.logits, {j.tokens, j.vocab}), token_tensors(j), j.options);
      const NumericScope scope{"policyLoss", at::kFloat};
      require_finite_forward(r.stats, r.logprobs, r.entropy, scope);
      require_finite(r.grad_logits, "gradLogits", scope);
      j.stats = r.stats;
      j.logprobs = r.logprobs;
      j.entropy = r.entropy;
      j.gradients = {{"gradLogits", r.grad_logits}};
    });
  });
}

Napi::Value FusedLinearPolicyLoss(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    LossCall call = begin_loss_call(info);
    LossJob& job = *call.job;
    job.hidden_size = size_field(call.inputs, "hiddenSize");
    const auto hidden = float32_field(call.inputs, "hidden");
    const auto weight = float32_field(call.inputs, "weight");
    job.hidden = sized(hidden, job.tokens * job.hidden_size, "hidden");
    job.weight = sized(weight, job.vocab * job.hidden_size, "weight");
    call.owners.insert(call.owners.end(), {hidden.owner, weight.owner});
    const Napi::Object options = object_arg(info, 1, "options");
    job.operand_type = scalar_type_of(string_field(options, "dtype"));
    job.device = device_of(string_field(options, "device"));
    return start_loss(info.Env(), call, /*grad_mode=*/false, [](LossJob& j) {
      const auto operand = [&](float* data, int64_t rows) {
        return view(data, {rows, j.hidden_size}).to(j.operand_type).to(j.device);
      };
      const at::Tensor hidden = operand(j.hidden, j.tokens), weight = operand(j.weight, j.vocab);
      const PolicyLossInputs in = token_tensors(j);
      FusedLinearForward f = fused_linear_policy_loss_forward(hidden, weight, in, j.options, j.chunks);
      // On the operands' device, before anything is copied back: the forward's O(T)
      // results, then gradHidden [T, H]; gradWeight [V, H] only past its bound.
      const NumericScope scope{"fusedLinearPolicyLoss", j.operand_type};
      require_finite_forward(f.stats, f.logprobs, f.entropy, scope);
      FusedLinearGrads g = fused_linear_policy_loss_backward(
          hidden, weight, in.targets, f, j.options.temperature, at::Tensor(), j.chunks);
      require_finite(g.grad_hidden, "gradHidden", scope);
      if (!fused_grad_weight_bounded(f, hidden)) require_finite(g.grad_weight, "gradWeight", scope);
      j.stats = f.stats;
      j.logprobs = f.logprobs.cpu();
      j.entropy = f.entropy.cpu();
      j.gradients = {{"gradHidden", g.grad_hidden.cpu()}, {"gradWeight", g.grad_weight.cpu()}};
    });
  });
}

// A one-layer model, hidden = input . projection, ending in the differentiable loss (fused or
// over materialized logits); libtorch autograd carries the gradient to projection and weight.
Napi::Value ProjectedPolicyLoss(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    LossCall call = begin_loss_call(info);
    LossJob& job = *call.job;
    job.input_size = size_field(call.inputs, "inputSize");
    job.hidden_size = size_field(call.inputs, "hiddenSize");
    job.probe_fused = bool_field(call.inputs, "fused");
    const auto input = float32_field(call.inputs, "input");
    const auto projection = float32_field(call.inputs, "projection");
    const auto weight = float32_field(call.inputs, "weight");
    job.input = sized(input, job.tokens * job.input_size, "input");
    job.projection = sized(projection, job.input_size * job.hidden_size, "projection");
    job.weight = sized(weight, job.vocab * job.hidden_size, "weight");
    call.owners.insert(call.owners.end(), {input.owner, projection.owner, weight.owner});
    return start_loss(info.Env(), call, /*grad_mode=*/true, [](LossJob& j) {
      const at::Tensor input = view(j.input, {j.tokens, j.input_size});
      const at::Tensor projection =
          view(j.projection, {j.input_size, j.hidden_size}).clone().requires_grad_(true);
      const at::Tensor weight = view(j.weight, {j.vocab, j.hidden_size}).clone().requires_grad_(true);
      const at::Tensor hidden = at::mm(input, projection);
      const PolicyLossInputs in = token_tensors(j);
      DifferentiableLoss out =
          j.probe_fused ? differentiable_fused_linear_policy_loss(hidden, weight, in, j.options, j.chunks)
                        : differentiable_policy_loss(at::mm(hidden, weight.t()), in, j.options);
      const NumericScope scope{"projectedPolicyLoss", at::kFloat};
      require_finite_forward(out.stats, out.logprobs, out.entropy, scope);
      torch::autograd::backward({out.loss});
      require_finite(projection.grad(), "gradProjection", scope);
      require_finite(weight.grad(), "gradWeight", scope);
      j.stats = out.stats;
      j.logprobs = out.logprobs;
      j.entropy = out.entropy;
      j.gradients = {{"gradProjection", projection.grad()}, {"gradWeight", weight.grad()}};
    });
  });
}

}  // namespace

void register_loss(Napi::Env env, Napi::Object exports) {
  exports.Set("policyLoss", Napi::Function::New(env, PolicyLoss));
  exports.Set("fusedLinearPolicyLoss", Napi::Function::New(env, FusedLinearPolicyLoss));
  exports.Set("projectedPolicyLoss", Napi::Function::New(env, ProjectedPolicyLoss));
}

}  // namespace swerl::js
