// The fused linear GRPO++ loss as a plan over tiles, shared by the CUDA kernels
// (loss/fused_loss.cu) and their CPU twin (cpu_twin.cc): the same tiling, the
// same GEMMs with the same arguments, the same workspace layout. A backend supplies the GEMM
// (cuBLAS column-major conventions) and the element-wise steps; this file owns the loops.
//
// Forward, per token chunk [t0, t0 + rows): for each vocabulary tile [v0, v0 + cols):
//   S = (W_v X_c^T)^T / tau  (fp32, rows x cols)  ->  fold S into each row's RowSoftmax.
// Then lse, entropy and logprob per row; then every token's coefficients and the loss sums.
// Backward, over the tokens with a nonzero coefficient only (compacted), per chunk:
//   S again  ->  dZ = logit_grad(S) in the operand dtype  ->  dX_c += dZ W_v (fp32 workspace),
//   dW_v += dZ^T X_c (fp32 output)  ->  dX_c scattered into grad_hidden in the operand dtype.
// Extra memory is the workspace: O(token_tile x (vocab_tile + H) + T), never T x V.
// Torch-free: nvcc compiles it without libtorch.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/swerl_error.h"
#include "loss/options.h"
#include "loss/row_softmax.h"
#include "loss/token_math.h"

namespace swerl::fused {

enum class Dtype : int { F32 = 0, BF16 = 1, F16 = 2 };
enum class Op : int { N = 0, T = 1 };  // as cuBLAS's transa / transb

inline size_t dtype_bytes(Dtype d) { return d == Dtype::F32 ? 4 : 2; }

// What forward and backward share. Pointers are in the backend's memory (device for CUDA).
struct Problem {
  int64_t tokens = 0, hidden_size = 0, vocab = 0;
  Dtype dtype = Dtype::F32;        // of hidden, weight, dZ and grad_hidden
  const void* hidden = nullptr;    // [T, H] row-major
  const void* weight = nullptr;    // [V, H] row-major
  const int64_t* targets = nullptr;  // [T], in [0, V)
  double temperature = 1.0;
  int64_t token_tile = 0, vocab_tile = 0;  // >= 1; clamped to T and V
  bool deterministic = true;  // no floating-point atomics in any reduction
};

struct ForwardIO {
  const float *old_logprobs = nullptr, *advantages = nullptr, *weights = nullptr;
  const float* ref_logprobs = nullptr;  // read only when options.has_kl()
  LossOptions options;
  float *logprobs = nullptr, *entropy = nullptr, *lse = nullptr;  // [T] outputs
  float *logit_coef = nullptr, *entropy_coef = nullptr;           // [T] outputs
  LossSums* sums = nullptr;  // one, output
};

struct BackwardIO {
  const float *lse = nullptr, *entropy = nullptr, *logit_coef = nullptr, *entropy_coef = nullptr;
  bool has_entropy_term = false;
  const float* grad_scale = nullptr;  // one value (the upstream gradient), or null for 1
  void* grad_hidden = nullptr;        // [T, H] in dtype, overwritten
  float* grad_weight = nullptr;       // [V, H] fp32
  bool accumulate_grad_weight = false;  // add into grad_weight instead of overwriting it
};

inline int64_t token_rows(const Problem& p) { return p.token_tile < p.tokens ? p.token_tile : p.tokens; }
inline int64_t vocab_cols(const Problem& p) { return p.vocab_tile < p.vocab ? p.vocab_tile : p.vocab; }

inline void check_problem(const Problem& p) {
  if (p.tokens < 1 || p.hidden_size < 1 || p.vocab < 1)
    throw_invalid("fused loss: tokens, hiddenSize and vocabSize must be >= 1");
  if (p.token_tile < 1 || p.vocab_tile < 1)
    throw_invalid("fused loss: chunk sizes (chunkSize.tokens, chunkSize.vocab) must be >= 1");
  constexpr int64_t kIntMax = 2147483647;  // GEMM sizes and token indices are int32
  if (p.tokens > kIntMax || p.hidden_size > kIntMax || p.vocab > kIntMax ||
      token_rows(p) * vocab_cols(p) > kIntMax)
    throw_invalid("fused loss: T, H, V and chunk tokens x chunk vocab must each fit in int32");
  if (!p.hidden || !p.weight || !p.targets) throw_invalid("fused loss: missing hidden, weight or targets");
  if (!(p.temperature > 0)) throw_invalid("fused loss: temperature must be > 0");
}

// Carves one workspace into aligned pieces, in a fixed order; with base = nullptr it only
// counts, which is how the sizes below are computed.
class Carver {
 public:
  explicit Carver(void* base) : base_(static_cast<char*>(base)) {}
  template <typename T>
  T* take(int64_t count) {
    const size_t at = offset_;
    offset_ += (size_t(count) * sizeof(T) + 255) / 256 * 256;
    return base_ ? reinterpret_cast<T*>(base_ + at) : nullptr;
  }
  size_t bytes() const { return offset_; }

 private:
  char* base_;
  size_t offset_ = 0;
};

struct ForwardSpace {
  float* scores;  // [rows, cols]
  RowSoftmax* rows;
  void* token_scratch;  // the backend's, for the token sums
};
inline ForwardSpace carve_forward(const Problem& p, void* base, size_t token_scratch_bytes, size_t* bytes) {
  Carver c(base);
  ForwardSpace s{c.take<float>(token_rows(p) * vocab_cols(p)), c.take<RowSoftmax>(token_rows(p)),
                 c.take<char>(int64_t(token_scratch_bytes))};
  if (bytes) *bytes = c.bytes();
  return s;
}

struct BackwardSpace {
  float* scores;       // [rows, cols]
  void* grad_logits;   // [rows, cols] in dtype (scores itself in fp32)
  void* hidden_rows;   // [rows, H] in dtype: the chunk's active tokens, gathered
  float* grad_rows;    // [rows, H] fp32: their dX, accumulated over vocabulary tiles
  int32_t* active;     // [T]: indices of tokens with a nonzero coefficient, ascending
  int32_t* active_count;  // [1]
};
inline BackwardSpace carve_backward(const Problem& p, void* base, size_t* bytes) {
  Carver c(base);
  const int64_t rows = token_rows(p), cols = vocab_cols(p), e = int64_t(dtype_bytes(p.dtype));
  BackwardSpace s;
  s.scores = c.take<float>(rows * cols);
  // In fp32, dZ overwrites S in place (each element is read, then written, by one thread).
  s.grad_logits = p.dtype == Dtype::F32 ? static_cast<void*>(s.scores) : c.take<char>(rows * cols * e);
  s.hidden_rows = c.take<char>(rows * p.hidden_size * e);
  s.grad_rows = c.take<float>(rows * p.hidden_size);
  s.active = c.take<int32_t>(p.tokens);
  s.active_count = c.take<int32_t>(1);
  if (bytes) *bytes = c.bytes();
  return s;
}

inline size_t forward_workspace_bytes(const Problem& p, size_t token_scratch_bytes) {
  size_t bytes = 0;
  carve_forward(p, nullptr, token_scratch_bytes, &bytes);
  return bytes;
}
inline size_t backward_workspace_bytes(const Problem& p) {
  size_t bytes = 0;
  carve_backward(p, nullptr, &bytes);
  return bytes;
}

inline const char* row_ptr(const void* base, int64_t row, int64_t width, Dtype d) {
  return static_cast<const char*>(base) + row * width * int64_t(dtype_bytes(d));
}

// Backend: gemm(...) computes C = alpha op(A) op(B) + beta C, column-major, C fp32
// (beta = 0 ignores C's old contents); the other members are the element-wise steps.
template <class Backend>
void forward(Backend& be, const Problem& p, const ForwardIO& io, void* workspace) {
  check_problem(p);
  const ForwardSpace ws = carve_forward(p, workspace, be.token_scratch_bytes(p.tokens), nullptr);
  const int64_t H = p.hidden_size, tile_rows = token_rows(p), tile_cols = vocab_cols(p);
  const float inv_tau = float(1.0 / p.temperature);
  for (int64_t t0 = 0; t0 < p.tokens; t0 += tile_rows) {
    const int64_t rows = std::min(tile_rows, p.tokens - t0);
    be.init_rows(ws.rows, rows);
    for (int64_t v0 = 0; v0 < p.vocab; v0 += tile_cols) {
      const int64_t cols = std::min(tile_cols, p.vocab - v0);
      be.gemm(Op::T, Op::N, cols, rows, H, inv_tau, row_ptr(p.weight, v0, H, p.dtype), p.dtype, H,
              row_ptr(p.hidden, t0, H, p.dtype), p.dtype, H, 0.0f, ws.scores, cols);
      be.absorb_tile(ws.scores, rows, cols, p.targets + t0, v0, ws.rows);
    }
    be.finish_rows(ws.rows, rows, io.lse + t0, io.entropy + t0, io.logprobs + t0);
  }
  be.token_terms(p.tokens, io, p.deterministic, ws.token_scratch);
}

template <class Backend>
void backward(Backend& be, const Problem& p, const BackwardIO& io, void* workspace) {
  check_problem(p);
  const BackwardSpace ws = carve_backward(p, workspace, nullptr);
  const int64_t H = p.hidden_size, tile_rows = token_rows(p), tile_cols = vocab_cols(p);
  const float inv_tau = float(1.0 / p.temperature);
  be.zero(io.grad_hidden, size_t(p.tokens * H) * dtype_bytes(p.dtype));
  if (!io.accumulate_grad_weight) be.zero(io.grad_weight, size_t(p.vocab * H) * sizeof(float));

  const int64_t active = be.select_active(p.tokens, io, ws.active, ws.active_count);
  for (int64_t a0 = 0; a0 < active; a0 += tile_rows) {
    const int64_t rows = std::min(tile_rows, active - a0);
    const int32_t* ids = ws.active + a0;
    be.gather_rows(p.hidden, p.dtype, H, ids, rows, ws.hidden_rows);
    for (int64_t v0 = 0; v0 < p.vocab; v0 += tile_cols) {
      const int64_t cols = std::min(tile_cols, p.vocab - v0);
      const char* w = row_ptr(p.weight, v0, H, p.dtype);
      be.gemm(Op::T, Op::N, cols, rows, H, inv_tau, w, p.dtype, H, ws.hidden_rows, p.dtype, H,
              0.0f, ws.scores, cols);
      be.logit_grad_tile(ws.scores, rows, cols, ids, v0, p.targets, io, ws.grad_logits, p.dtype);
      // dX_c^T [H, rows] (+)= W_v^T [H, cols] dZ^T [cols, rows]
      be.gemm(Op::N, Op::N, H, rows, cols, 1.0f, w, p.dtype, H, ws.grad_logits, p.dtype, cols,
              v0 == 0 ? 0.0f : 1.0f, ws.grad_rows, H);
      // dW_v^T [H, cols] += X_c^T [H, rows] dZ [rows, cols]
      be.gemm(Op::N, Op::T, H, cols, rows, 1.0f, ws.hidden_rows, p.dtype, H, ws.grad_logits,
              p.dtype, cols, 1.0f, io.grad_weight + v0 * H, H);
    }
    be.scatter_rows(ws.grad_rows, H, ids, rows, io.grad_hidden, p.dtype);
  }
}

}  // namespace swerl::fused
