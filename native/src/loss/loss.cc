// The loss's entry over libtorch tensors: the checks (options here and nowhere else; values in
// range before the loss, finite after it), device placement and the plan's raw views
// (tile_plan.h), and where the plan runs: the CPU twin on the CPU, the CUDA kernels
// (loss/fused_loss.cu) with cuBLAS on the current CUDA stream. The workspace comes from
// libtorch's allocator (the caching allocator on CUDA), so it is reused across calls.
#include "loss/loss.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <numeric>
#include <utility>
#include <vector>

#include "core/cuda_build.h"
#include "core/swerl_error.h"
#include "loss/cpu_twin.h"

#ifdef SWERL_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <cublas_v2.h>

#include "loss/fused_kernels.h"
#endif

namespace swerl {

// ---- value checks: per-token inputs in range, every number handed back finite ------------

namespace {

// As JavaScript prints it: NaN, Infinity, -Infinity, else the shortest round trip of a float.
std::string js_number(double x) {
  if (std::isnan(x)) return "NaN";
  if (std::isinf(x)) return x > 0 ? "Infinity" : "-Infinity";
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", x);
  return text;
}

std::string indexed(const char* name, int64_t i) { return std::string(name) + "[" + std::to_string(i) + "]"; }

const char* dtype_name(at::ScalarType t) {
  return t == at::kHalf ? "float16" : t == at::kBFloat16 ? "bfloat16" : "float32";
}

[[noreturn]] void throw_numeric(const NumericScope& scope, const std::string& what, double value) {
  const std::string fix =
      scope.dtype == at::kHalf
          ? "float16 overflows past 65504: use dtype \"bfloat16\" (float32's range) or \"float32\", "
            "or scale the advantages and weights down"
          : "the inputs are past float32's range: scale the advantages, weights or logits down "
            "(advantages normalized per group and weights summing to 1 keep every term O(1))";
  throw Error("ERR_SWERL_NUMERIC", scope.api + ": " + what + " is " + js_number(value) + " in " +
                                       dtype_name(scope.dtype) + "; " + fix);
}

}  // namespace

void check_token_values(int64_t n, const float* old_logprobs, const float* advantages,
                        const float* weights, const float* ref_logprobs) {
  const auto logprobs = [&](const float* values, const char* name) {
    for (int64_t i = 0; i < n; ++i) {
      if (!std::isfinite(values[i]))
        throw_invalid(indexed(name, i) + " is " + js_number(values[i]) + "; every value must be a finite number");
      if (values[i] > kLogprobSlack)
        throw_invalid(indexed(name, i) + " is " + js_number(values[i]) +
                      ", which no log-probability can be; logprobs are <= 0 (1e-4 of slack)");
    }
  };
  logprobs(old_logprobs, "oldLogprobs");
  if (ref_logprobs) logprobs(ref_logprobs, "refLogprobs");
  for (int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(advantages[i]))
      throw_invalid(indexed("advantages", i) + " is " + js_number(advantages[i]) + "; every value must be a finite number");
    if (!(weights[i] >= 0.0f && std::isfinite(weights[i])))
      throw_invalid(indexed("weights", i) + " is " + js_number(weights[i]) + "; weights are finite and >= 0");
  }
}

void require_finite(const at::Tensor& t, const char* name, const NumericScope& scope) {
  if (t.numel() == 0) return;
  // A sum meets every Inf and NaN (Inf + x = Inf, Inf - Inf = NaN), so a finite sum proves
  // every element finite in one pass with no temporary. A sum past the dtype's range proves
  // nothing; only then is each element looked at.
  if (std::isfinite(t.sum().item<double>())) return;
  const at::Tensor flat = t.reshape({-1});
  const at::Tensor bad = at::isfinite(flat).logical_not().nonzero();
  if (bad.numel() == 0) return;
  const int64_t i = bad[0][0].item<int64_t>();
  throw_numeric(scope, indexed(name, i), flat[i].item<double>());
}

void require_finite_forward(const LossStats& s, const at::Tensor& logprobs,
                            const at::Tensor& entropy, const NumericScope& scope) {
  if (!std::isfinite(s.loss)) throw_numeric(scope, "the loss", s.loss);
  for (const auto& [name, value] :
       {std::pair{"stats.approxKl", s.approx_kl}, {"stats.ratioMean", s.ratio_mean},
        {"stats.ratioMax", s.ratio_max}, {"stats.entropyMean", s.entropy_mean},
        {"stats.clipFracLow", s.clip_frac_low}, {"stats.clipFracHigh", s.clip_frac_high}}) {
    if (!std::isfinite(value)) throw_numeric(scope, name, value);
  }
  require_finite(logprobs, "logprobs", scope);
  require_finite(entropy, "entropy", scope);
}

bool fused_grad_weight_bounded(const FusedLinearForward& f, const at::Tensor& hidden) {
  if (hidden.numel() == 0) return true;
  at::Tensor dz = f.logit_coef.abs().to(at::kDouble);
  if (f.has_entropy_term)
    dz = dz + f.entropy_coef.abs().to(at::kDouble) * (f.entropy.abs().to(at::kDouble) + 1.0 / M_E);
  const double bound =
      double(hidden.size(0)) * dz.max().item<double>() * hidden.abs().max().item<double>();
  // A factor 4 below float32's largest value covers the rounding of every product and sum.
  return std::isfinite(bound) && bound < double(std::numeric_limits<float>::max()) / 4;
}

// ---- where the plan runs --------------------------------------------------------------------

namespace {

at::Tensor workspace(const at::Device& device, size_t bytes) {
  return at::empty({int64_t(bytes)}, at::TensorOptions().dtype(at::kByte).device(device));
}

// The caller's workspace if it has one, checked; else a new one.
at::Tensor workspace_for(const at::Device& device, size_t bytes, const at::Tensor& given) {
  if (!given.defined()) return workspace(device, bytes);
  if (given.device() != device || given.scalar_type() != at::kByte || !given.is_contiguous() ||
      size_t(given.numel()) < bytes)
    throw_invalid("fused loss: the workspace must be a contiguous uint8 tensor of at least " +
                  std::to_string(bytes) + " bytes on " + device.str());
  return given;
}

// A device that neither the CPU twin nor (in this build) the CUDA kernels serve.
[[noreturn]] void unsupported(const at::Device& device) {
  if (device.is_cuda()) throw_no_cuda_kernels();
  throw_invalid("the fused loss runs on the CPU or CUDA, not " + device.str());
}

#ifdef SWERL_WITH_CUDA
cudaDataType_t cuda_type(fused::Dtype d) {
  switch (d) {
    case fused::Dtype::F32: return CUDA_R_32F;
    case fused::Dtype::BF16: return CUDA_R_16BF;
    case fused::Dtype::F16: return CUDA_R_16F;
  }
  return CUDA_R_32F;
}

int cublas_gemm(void* context, fused::Op op_a, fused::Op op_b, int64_t m, int64_t n, int64_t k,
                float alpha, const void* a, fused::Dtype a_type, int64_t lda, const void* b,
                fused::Dtype b_type, int64_t ldb, float beta, float* c, int64_t ldc) {
  const auto op = [](fused::Op o) { return o == fused::Op::N ? CUBLAS_OP_N : CUBLAS_OP_T; };
  return int(cublasGemmEx(static_cast<cublasHandle_t>(context), op(op_a), op(op_b), int(m), int(n),
                          int(k), &alpha, a, cuda_type(a_type), int(lda), b, cuda_type(b_type),
                          int(ldb), &beta, c, CUDA_R_32F, int(ldc), CUBLAS_COMPUTE_32F,
                          CUBLAS_GEMM_DEFAULT));
}

cuda::Gemm current_gemm() {
  return cuda::Gemm{cublas_gemm, at::cuda::getCurrentCUDABlasHandle()};
}
#endif


size_t fused_workspace_bytes(const at::Device& device, const fused::Problem& p, bool backward) {
  if (device.is_cpu())
    return backward ? fused::cpu_backward_workspace_bytes(p) : fused::cpu_forward_workspace_bytes(p);
#ifdef SWERL_WITH_CUDA
  if (device.is_cuda())
    return backward ? cuda::fused_backward_workspace_bytes(p) : cuda::fused_forward_workspace_bytes(p);
#endif
  unsupported(device);
}

LossSums run_fused_forward(const at::Device& device, const fused::Problem& p, fused::ForwardIO io,
                           const at::Tensor& given = {}) {
  fused::check_problem(p);
  const size_t bytes = fused_workspace_bytes(device, p, /*backward=*/false);
  if (device.is_cpu()) {
    LossSums sums;
    io.sums = &sums;
    const at::Tensor space = workspace_for(device, bytes, given);
    fused::cpu_forward(p, io, space.data_ptr());
    return sums;
  }
#ifdef SWERL_WITH_CUDA
  if (device.is_cuda()) {
    const c10::cuda::CUDAGuard guard(device);
    const at::Tensor sums = workspace(device, sizeof(LossSums));
    io.sums = static_cast<LossSums*>(sums.data_ptr());
    const at::Tensor space = workspace_for(device, bytes, given);
    cuda::fused_forward(p, io, space.data_ptr(), at::cuda::getCurrentCUDAStream(), current_gemm());
    LossSums host;
    std::memcpy(&host, sums.cpu().data_ptr(), sizeof(LossSums));
    return host;
  }
#endif
  unsupported(device);
}

void run_fused_backward(const at::Device& device, const fused::Problem& p,
                        const fused::BackwardIO& io, const at::Tensor& given = {}) {
  fused::check_problem(p);
  const size_t bytes = fused_workspace_bytes(device, p, /*backward=*/true);
  if (device.is_cpu()) {
    const at::Tensor space = workspace_for(device, bytes, given);
    fused::cpu_backward(p, io, space.data_ptr());
    return;
  }
#ifdef SWERL_WITH_CUDA
  if (device.is_cuda()) {
    const c10::cuda::CUDAGuard guard(device);
    const at::Tensor space = workspace_for(device, bytes, given);
    cuda::fused_backward(p, io, space.data_ptr(), at::cuda::getCurrentCUDAStream(), current_gemm());
    return;
  }
#endif
  unsupported(device);
}

}  // namespace

// ---- the entry --------------------------------------------------------------------------------

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
