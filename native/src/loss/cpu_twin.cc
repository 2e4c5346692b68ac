#include "loss/cpu_twin.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <cstring>
#include <vector>

namespace swerl::fused {

namespace {

at::ScalarType scalar_type(Dtype d) {
  switch (d) {
    case Dtype::F32: return at::kFloat;
    case Dtype::BF16: return at::kBFloat16;
    case Dtype::F16: return at::kHalf;
  }
  throw_invalid("unknown dtype");
}

// A column-major matrix [rows, cols] with leading dimension ld, as a float32 tensor.
at::Tensor col_major(const void* data, Dtype d, int64_t rows, int64_t cols, int64_t ld) {
  const at::Tensor stored = at::from_blob(const_cast<void*>(data), {cols, rows}, {ld, 1},
                                          at::TensorOptions().dtype(scalar_type(d)));
  return stored.t().to(at::kFloat);
}

template <typename Element>
void write_row(const float* from, int64_t n, void* to) {
  Element* out = static_cast<Element*>(to);
  for (int64_t i = 0; i < n; ++i) out[i] = Element(from[i]);  // c10 types round to nearest even
}

void write_converted(const float* from, int64_t n, void* to, Dtype d) {
  switch (d) {
    case Dtype::F32:
      if (to != from) std::memcpy(to, from, size_t(n) * sizeof(float));
      return;
    case Dtype::BF16: write_row<c10::BFloat16>(from, n, to); return;
    case Dtype::F16: write_row<c10::Half>(from, n, to); return;
  }
}

struct CpuBackend {
  void gemm(Op op_a, Op op_b, int64_t m, int64_t n, int64_t k, float alpha, const void* a,
            Dtype a_type, int64_t lda, const void* b, Dtype b_type, int64_t ldb, float beta,
            float* c, int64_t ldc) {
    const at::Tensor A = op_a == Op::N ? col_major(a, a_type, m, k, lda) : col_major(a, a_type, k, m, lda).t();
    const at::Tensor B = op_b == Op::N ? col_major(b, b_type, k, n, ldb) : col_major(b, b_type, n, k, ldb).t();
    // C^T is row-major [n, m] with row stride ldc: C^T = op(B)^T op(A)^T.
    at::Tensor Ct = at::from_blob(c, {n, m}, {ldc, 1}, at::kFloat);
    if (beta == 0.0f) {
      at::mm_out(Ct, B.t(), A.t());
      if (alpha != 1.0f) Ct.mul_(alpha);
    } else {
      Ct.addmm_(B.t(), A.t(), beta, alpha);
    }
  }

  void init_rows(RowSoftmax* rows, int64_t n) {
    for (int64_t r = 0; r < n; ++r) rows[r] = row_softmax_empty();
  }

  // The tile's per-row max and sums as vectorized libtorch ops (the scalar exp of a loop is
  // several times slower on [tokens x vocab] tiles), a block of rows at a time so that the
  // temporaries stay small, merged into each row's state.
  void absorb_tile(const float* scores, int64_t rows, int64_t cols, const int64_t* targets,
                   int64_t v0, RowSoftmax* state) {
    constexpr int64_t kRowBlock = 64;
    for (int64_t r0 = 0; r0 < rows; r0 += kRowBlock) {
      const int64_t n = std::min(kRowBlock, rows - r0);
      const at::Tensor s = at::from_blob(const_cast<float*>(scores) + r0 * cols, {n, cols}, at::kFloat);
      const at::Tensor max = std::get<0>(s.max(1));
      const at::Tensor shifted = s - max.unsqueeze(1);
      at::Tensor e = shifted.exp();
      const at::Tensor sum_exp = e.sum(1);
      const at::Tensor sum_exp_shifted = e.mul_(shifted).sum(1);
      const float* m = max.data_ptr<float>();
      const float* se = sum_exp.data_ptr<float>();
      const float* sse = sum_exp_shifted.data_ptr<float>();
      for (int64_t i = 0; i < n; ++i) {
        const int64_t r = r0 + i;
        row_softmax_merge(state[r], RowSoftmax{m[i], se[i], sse[i], 0.0f});
        const int64_t local = targets[r] - v0;
        if (local >= 0 && local < cols) state[r].target_logit = scores[r * cols + local];
      }
    }
  }

  void finish_rows(const RowSoftmax* state, int64_t rows, float* lse, float* entropy,
                   float* logprobs) {
    for (int64_t r = 0; r < rows; ++r) row_softmax_finish(state[r], lse[r], entropy[r], logprobs[r]);
  }

  size_t token_scratch_bytes(int64_t) const { return 0; }

  void token_terms(int64_t n, const ForwardIO& io, bool, void*) {
    *io.sums = cpu_token_terms(n, io.logprobs, io.entropy, io.old_logprobs, io.advantages,
                               io.weights, io.options.has_kl() ? io.ref_logprobs : nullptr,
                               io.options, io.logit_coef, io.entropy_coef);
  }

  void zero(void* data, size_t bytes) { std::memset(data, 0, bytes); }

  int64_t select_active(int64_t n, const BackwardIO& io, int32_t* active, int32_t* count) {
    int32_t k = 0;
    for (int64_t t = 0; t < n; ++t) {
      if (io.logit_coef[t] != 0.0f || (io.has_entropy_term && io.entropy_coef[t] != 0.0f))
        active[k++] = int32_t(t);
    }
    *count = k;
    return k;
  }

  void gather_rows(const void* hidden, Dtype d, int64_t width, const int32_t* ids, int64_t rows,
                   void* out) {
    const size_t row_bytes = size_t(width) * dtype_bytes(d);
    for (int64_t r = 0; r < rows; ++r)
      std::memcpy(static_cast<char*>(out) + r * row_bytes,
                  static_cast<const char*>(hidden) + ids[r] * row_bytes, row_bytes);
  }

  // row_softmax.h's logit_grad, as vectorized libtorch ops over the tile (in place).
  void logit_grad_tile(float* scores, int64_t rows, int64_t cols, const int32_t* ids, int64_t v0,
                       const int64_t* targets, const BackwardIO& io, void* grad_logits, Dtype d) {
    const at::Tensor index = at::from_blob(const_cast<int32_t*>(ids), {rows}, at::kInt).to(at::kLong);
    const int64_t span = index.max().item<int64_t>() + 1;  // the per-token arrays this tile reads
    const auto per_row = [&](const float* values) {
      return at::from_blob(const_cast<float*>(values), {span}, at::kFloat).index_select(0, index).unsqueeze(1);
    };
    const at::Tensor lse = per_row(io.lse), coef = per_row(io.logit_coef);
    at::Tensor g = at::from_blob(scores, {rows, cols}, at::kFloat);
    g.sub_(lse);  // s - lse
    if (io.has_entropy_term) {
      const at::Tensor p = g.exp();
      g.add_(per_row(io.entropy)).mul_(per_row(io.entropy_coef)).add_(coef).mul_(p);
    } else {
      g.exp_().mul_(coef);
    }
    float* out = g.data_ptr<float>();
    for (int64_t r = 0; r < rows; ++r) {  // - c at the target: c (p - 1)
      const int64_t local = targets[ids[r]] - v0;
      if (local >= 0 && local < cols) out[r * cols + local] -= io.logit_coef[ids[r]];
    }
    if (io.grad_scale && *io.grad_scale != 1.0f) g.mul_(*io.grad_scale);
    if (d != Dtype::F32 || grad_logits != scores)
      at::from_blob(grad_logits, {rows, cols}, at::TensorOptions().dtype(scalar_type(d))).copy_(g);
  }

  void scatter_rows(const float* grad_rows, int64_t width, const int32_t* ids, int64_t rows,
                    void* grad_hidden, Dtype d) {
    const size_t row_bytes = size_t(width) * dtype_bytes(d);
    at::parallel_for(0, rows, 16, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r)
        write_converted(grad_rows + r * width, width,
                        static_cast<char*>(grad_hidden) + ids[r] * row_bytes, d);
    });
  }
};

}  // namespace

size_t cpu_forward_workspace_bytes(const Problem& p) {
  return forward_workspace_bytes(p, CpuBackend{}.token_scratch_bytes(p.tokens));
}
size_t cpu_backward_workspace_bytes(const Problem& p) { return backward_workspace_bytes(p); }

void cpu_forward(const Problem& p, const ForwardIO& io, void* workspace) {
  CpuBackend be;
  forward(be, p, io, workspace);
}

void cpu_backward(const Problem& p, const BackwardIO& io, void* workspace) {
  CpuBackend be;
  backward(be, p, io, workspace);
}

void cpu_absorb_tile(const float* scores, int64_t rows, int64_t cols, const int64_t* targets,
                     int64_t v0, RowSoftmax* state) {
  CpuBackend{}.absorb_tile(scores, rows, cols, targets, v0, state);
}

void cpu_logit_grad_tile(float* scores, int64_t rows, int64_t cols, const int32_t* ids, int64_t v0,
                         const int64_t* targets, const BackwardIO& io) {
  CpuBackend{}.logit_grad_tile(scores, rows, cols, ids, v0, targets, io, scores, Dtype::F32);
}

LossSums cpu_token_terms(int64_t n, const float* lp, const float* ent, const float* old,
                         const float* adv, const float* w, const float* ref,
                         const LossOptions& options, float* coef, float* ecoef) {
  std::vector<TokenOutcome> outcomes(n);
  at::parallel_for(0, n, 1024, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      outcomes[t] = token_outcome(lp[t], ent[t], old[t], adv[t], w[t], ref ? ref[t] : 0.0f, options);
      coef[t] = outcomes[t].logit_coef;
      ecoef[t] = outcomes[t].entropy_coef;
    }
  });
  // Serial reduction in double: T is small next to the T x V work, and the order is fixed.
  LossSums sums;
  for (int64_t t = 0; t < n; ++t) add_token(sums, outcomes[t], ent[t]);
  return sums;
}

}  // namespace swerl::fused
