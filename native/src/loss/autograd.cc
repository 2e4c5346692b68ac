#include "loss/autograd.h"

#include <torch/csrc/autograd/custom_function.h>

#include "core/profile.h"
#include "loss/loss.h"

namespace swerl {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

at::Tensor stats_tensor(const LossStats& s) {
  return at::tensor({s.loss, s.approx_kl, s.clip_frac_low, s.clip_frac_high, s.ratio_mean,
                     s.ratio_max, s.entropy_mean, double(s.masked_tokens)},
                    at::kDouble);
}

LossStats stats_from_tensor(const at::Tensor& t) {
  const double* v = t.data_ptr<double>();
  return LossStats{v[0], v[1], v[2], v[3], v[4], v[5], v[6], int64_t(v[7])};
}

// Forward computes dLoss/dlogits with the loss (one pass) and keeps it for the backward.
struct PolicyLossFunction : public torch::autograd::Function<PolicyLossFunction> {
  static variable_list forward(AutogradContext* ctx, const at::Tensor& logits,
                               PolicyLossInputs inputs, LossOptions options) {
    const auto input_type = logits.scalar_type();
    PolicyLossResult r = swerl::policy_loss(logits.to(at::kFloat).contiguous(), inputs, options);
    ctx->saved_data["grad_logits"] = r.grad_logits.to(input_type);
    const at::Tensor loss = at::scalar_tensor(r.stats.loss, logits.options());
    const at::Tensor stats = stats_tensor(r.stats);
    ctx->mark_non_differentiable({r.logprobs, r.entropy, stats});
    return {loss, r.logprobs, r.entropy, stats};
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const at::Tensor grad_logits = ctx->saved_data["grad_logits"].toTensor();
    return {grad_logits * grad_outputs[0], at::Tensor(), at::Tensor()};
  }
};

// Forward keeps lse/entropy/coefficients (O(T)); backward recomputes the logit tiles. Both
// run where the operands are: the CPU twin or the CUDA kernels.
struct FusedLinearPolicyLossFunction
    : public torch::autograd::Function<FusedLinearPolicyLossFunction> {
  static variable_list forward(AutogradContext* ctx, const at::Tensor& hidden,
                               const at::Tensor& weight, PolicyLossInputs inputs,
                               LossOptions options, FusedChunks chunks) {
    FusedLinearForward f = fused_linear_policy_loss_forward(hidden, weight, inputs, options, chunks);
    ctx->save_for_backward({hidden, weight});
    ctx->saved_data["targets"] = inputs.targets;
    ctx->saved_data["lse"] = f.lse;
    ctx->saved_data["entropy"] = f.entropy;
    ctx->saved_data["logit_coef"] = f.logit_coef;
    ctx->saved_data["entropy_coef"] = f.entropy_coef;
    ctx->saved_data["has_entropy_term"] = f.has_entropy_term;
    ctx->saved_data["temperature"] = options.temperature;
    ctx->saved_data["chunk_tokens"] = chunks.tokens;
    ctx->saved_data["chunk_vocab"] = chunks.vocab;
    ctx->saved_data["deterministic"] = chunks.deterministic;
    const at::Tensor loss = at::scalar_tensor(f.stats.loss, hidden.options());
    const at::Tensor stats = stats_tensor(f.stats);
    ctx->mark_non_differentiable({f.logprobs, f.entropy, stats});
    return {loss, f.logprobs, f.entropy, stats};
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    profile::Phase phase("loss.backward");
    const auto saved = ctx->get_saved_variables();
    const at::Tensor& hidden = saved[0];
    const at::Tensor& weight = saved[1];
    FusedLinearForward f;
    f.lse = ctx->saved_data["lse"].toTensor();
    f.entropy = ctx->saved_data["entropy"].toTensor();
    f.logit_coef = ctx->saved_data["logit_coef"].toTensor();
    f.entropy_coef = ctx->saved_data["entropy_coef"].toTensor();
    f.has_entropy_term = ctx->saved_data["has_entropy_term"].toBool();
    const FusedChunks chunks{ctx->saved_data["chunk_tokens"].toInt(),
                             ctx->saved_data["chunk_vocab"].toInt(),
                             ctx->saved_data["deterministic"].toBool()};
    FusedLinearGrads g = fused_linear_policy_loss_backward(
        hidden, weight, ctx->saved_data["targets"].toTensor(), f,
        ctx->saved_data["temperature"].toDouble(), grad_outputs[0], chunks);
    // grad_weight is fp32 (accumulated over token tiles); the parameter may be narrower.
    return {g.grad_hidden, g.grad_weight.to(weight.scalar_type()), at::Tensor(), at::Tensor(),
            at::Tensor()};
  }
};

DifferentiableLoss unpack(const variable_list& out) {
  return DifferentiableLoss{out[0], out[1], out[2], stats_from_tensor(out[3])};
}

}  // namespace

DifferentiableLoss differentiable_policy_loss(const at::Tensor& logits,
                                             const PolicyLossInputs& inputs,
                                             const LossOptions& options) {
  return unpack(PolicyLossFunction::apply(logits, inputs, options));
}

DifferentiableLoss differentiable_fused_linear_policy_loss(const at::Tensor& hidden,
                                                          const at::Tensor& weight,
                                                          const PolicyLossInputs& inputs,
                                                          const LossOptions& options,
                                                          const FusedChunks& chunks) {
  return unpack(FusedLinearPolicyLossFunction::apply(hidden, weight, inputs, options, chunks));
}

}  // namespace swerl
