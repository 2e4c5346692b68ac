#include <algorithm>

#include "logit_tile.h"
#include "policy_loss.h"
#include "swerl_error.h"

namespace swerl {

namespace {

void check_fused_operands(const at::Tensor& hidden, const at::Tensor& weight,
                          const FusedChunks& chunks) {
  if (hidden.dim() != 2 || hidden.scalar_type() != at::kFloat)
    throw_invalid("hidden must be a float32 tensor [T, H]");
  if (weight.dim() != 2 || weight.scalar_type() != at::kFloat)
    throw_invalid("weight must be a float32 tensor [V, H]");
  if (hidden.device() != weight.device())
    throw_invalid("hidden and weight must be on the same device");
  if (weight.size(1) != hidden.size(1))
    throw_invalid("weight [V, H] and hidden [T, H] must share H (hiddenSize)");
  if (chunks.tokens < 1 || chunks.vocab < 1) throw_invalid("chunk sizes must be >= 1");
}

// Scaled logits of one tile: (X_c W_v^T) / tau.
at::Tensor tile_logits(const at::Tensor& hidden_chunk, const at::Tensor& weight_chunk,
                       double temperature) {
  at::Tensor s = at::mm(hidden_chunk, weight_chunk.t());
  if (temperature != 1.0) s.mul_(1.0 / temperature);
  return s;
}

}  // namespace

FusedLinearForward fused_linear_policy_loss_forward(const at::Tensor& hidden_in,
                                                     const at::Tensor& weight_in,
                                                     const PolicyLossInputs& in,
                                                     const LossOptions& options,
                                                     const FusedChunks& chunks) {
  check_fused_operands(hidden_in, weight_in, chunks);
  const at::Tensor hidden = hidden_in.contiguous(), weight = weight_in.contiguous();
  const int64_t tokens = hidden.size(0), vocab = weight.size(0);
  check_policy_loss_inputs(in, tokens, vocab, options);

  // Tiles run on the operands' device; the O(T) per-token terms on the CPU (token_terms).
  FusedLinearForward out;
  out.lse = at::empty({tokens}, hidden.options());
  out.entropy = at::empty({tokens}, hidden.options());
  out.logprobs = at::empty({tokens}, hidden.options());
  const at::Tensor targets = in.targets.to(hidden.device());
  for (int64_t t0 = 0; t0 < tokens; t0 += chunks.tokens) {
    const int64_t rows = std::min(chunks.tokens, tokens - t0);
    const at::Tensor x = hidden.narrow(0, t0, rows);
    const at::Tensor y = targets.narrow(0, t0, rows);
    RunningSoftmax softmax(rows, x);
    for (int64_t v0 = 0; v0 < vocab; v0 += chunks.vocab) {
      const int64_t cols = std::min(chunks.vocab, vocab - v0);
      softmax.absorb(tile_logits(x, weight.narrow(0, v0, cols), options.temperature), y, v0);
    }
    at::Tensor lse, entropy;
    softmax.finish(lse, entropy);
    out.lse.narrow(0, t0, rows).copy_(lse);
    out.entropy.narrow(0, t0, rows).copy_(entropy);
    out.logprobs.narrow(0, t0, rows).copy_(softmax.target_logit - lse);
  }

  const TokenTerms terms = token_terms(out.logprobs.cpu(), out.entropy.cpu(), in.old_logprobs,
                                       in.advantages, in.weights, in.ref_logprobs, options);
  out.logit_coef = terms.logit_coef.to(hidden.device());
  out.entropy_coef = terms.entropy_coef.to(hidden.device());
  out.has_entropy_term = options.entropy_coef != 0.0;
  out.stats = stats_of(terms);
  return out;
}

FusedLinearGrads fused_linear_policy_loss_backward(const at::Tensor& hidden_in,
                                                    const at::Tensor& weight_in,
                                                    const at::Tensor& targets_in,
                                                    const FusedLinearForward& fwd,
                                                    double temperature, double grad_scale,
                                                    const FusedChunks& chunks) {
  check_fused_operands(hidden_in, weight_in, chunks);
  const at::Tensor hidden = hidden_in.contiguous(), weight = weight_in.contiguous();
  const int64_t vocab = weight.size(0);
  FusedLinearGrads out{at::zeros_like(hidden), at::zeros_like(weight)};
  const at::Tensor targets = targets_in.to(hidden.device());

  at::Tensor coef = fwd.logit_coef, ecoef = fwd.entropy_coef;
  if (grad_scale != 1.0) {
    coef = coef * grad_scale;
    ecoef = ecoef * grad_scale;
  }
  // Only tokens that move the loss enter the backward.
  const at::Tensor active = fwd.has_entropy_term ? (coef != 0).logical_or_(ecoef != 0) : (coef != 0);
  const at::Tensor active_tokens = active.nonzero().squeeze(1);
  const int64_t n_active = active_tokens.numel();

  for (int64_t a0 = 0; a0 < n_active; a0 += chunks.tokens) {
    const at::Tensor idx = active_tokens.narrow(0, a0, std::min(chunks.tokens, n_active - a0));
    const at::Tensor x = hidden.index_select(0, idx);
    const at::Tensor y = targets.index_select(0, idx);
    const at::Tensor lse = fwd.lse.index_select(0, idx);
    const at::Tensor entropy = fwd.entropy.index_select(0, idx);
    const at::Tensor c = coef.index_select(0, idx), e = ecoef.index_select(0, idx);
    at::Tensor grad_x = at::zeros_like(x);
    for (int64_t v0 = 0; v0 < vocab; v0 += chunks.vocab) {
      const int64_t cols = std::min(chunks.vocab, vocab - v0);
      const at::Tensor w = weight.narrow(0, v0, cols);
      const at::Tensor grad_z = logit_grad_tile(tile_logits(x, w, temperature), lse, entropy, c,
                                                e, fwd.has_entropy_term, y, v0);
      grad_x.addmm_(grad_z, w);
      out.grad_weight.narrow(0, v0, cols).addmm_(grad_z.t(), x);
    }
    out.grad_hidden.index_copy_(0, idx, grad_x);
  }
  return out;
}

}  // namespace swerl
