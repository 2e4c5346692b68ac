#include "model/attention.h"

#include "core/swerl_error.h"

#include <torch/csrc/api/include/torch/version.h>
#include <torch/csrc/autograd/custom_function.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#ifdef SWERL_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#endif

namespace swerl {

at::Tensor causal_mask(int64_t tokens, at::Device device) {
  return at::ones({tokens, tokens}, at::TensorOptions().dtype(at::kBool).device(device))
      .tril()
      .view({1, 1, tokens, tokens});
}

namespace {

// The query heads of a group share one matmul with their KV head, so K and V are never
// repeated in memory; softmax(q k^T / sqrt(D)) v with the softmax in fp32, as Hugging Face's
// eager attention does. Scores take [B, nh, Tq, Tk]: for one query per sequence (decode) or
// a short square.
at::Tensor grouped_matmul_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                    const at::Tensor& allowed) {
  const int64_t B = q.size(0), nh = q.size(1), Tq = q.size(2), D = q.size(3);
  const int64_t nkv = k.size(1), Tk = k.size(2), groups = nh / nkv;
  const at::Tensor qg = q.reshape({B, nkv, groups * Tq, D});
  at::Tensor scores = at::matmul(qg, k.transpose(-1, -2)).view({B, nkv, groups, Tq, Tk});
  scores = scores.to(at::kFloat).mul_(1.0 / std::sqrt(double(D)));
  scores.masked_fill_(allowed.unsqueeze(1).logical_not(), -std::numeric_limits<float>::infinity());
  const at::Tensor probs = at::softmax(scores, -1).to(q.scalar_type());
  return at::matmul(probs.view({B, nkv, groups * Tq, Tk}), v).view({B, nh, Tq, D});
}

}  // namespace

at::Tensor decode_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& allowed) {
  // Not SDPA on 2.x: with a mask it runs the memory-efficient or math kernel, neither of which
  // groups query heads, so every step would copy the whole cache out to all heads.
  return grouped_matmul_attention(q, k, v, allowed);
}

#if TORCH_VERSION_MAJOR >= 2
namespace {

#define SWERL_SDPA_HAS_GQA (TORCH_VERSION_MAJOR > 2 || TORCH_VERSION_MINOR >= 5)

#ifdef SWERL_WITH_CUDA
enum class AttentionKernel { Auto, Flash, Sdpa };

// SWERL_ATTENTION_KERNEL: 'auto' (default), 'flash', or 'sdpa' (libtorch's own choice); read once.
AttentionKernel attention_kernel_setting() {
  static const AttentionKernel setting = [] {
    const char* env = std::getenv("SWERL_ATTENTION_KERNEL");
    const std::string value = env ? env : "auto";
    if (value == "auto") return AttentionKernel::Auto;
    if (value == "flash") return AttentionKernel::Flash;
    if (value == "sdpa") return AttentionKernel::Sdpa;
    throw_invalid("SWERL_ATTENTION_KERNEL must be auto, flash or sdpa, not '" + value + "'");
  }();
  return setting;
}

// Whether a causal, unmasked call runs flash attention directly rather than SDPA's first choice.
// On Hopper libtorch 2.x picks cuDNN's kernel, the fastest on a shape it has seen (4 x 4096 on
// an H200: 0.48 ms a layer forward against flash's 0.91), but it builds an execution plan for
// every new shape, tens of milliseconds, and RL batches bring new lengths every step: on the
// H200 a FrozenLake update of the tiny model took 3.4 s on CUDA against 0.5 on the CPU, and a
// train step of the same model at one fixed shape 11 ms. So: flash for a shape's first use and
// for short sequences (under 2048 keys, where cuDNN saves microseconds); SDPA's choice for a
// long shape used before, whose plan then pays for itself.
bool run_flash(const at::Tensor& q, const at::Tensor& k) {
  const AttentionKernel setting = attention_kernel_setting();
  if (setting == AttentionKernel::Sdpa || !q.is_cuda()) return false;
  const int64_t D = q.size(3);
  const bool fits = (q.scalar_type() == at::kBFloat16 || q.scalar_type() == at::kHalf) && D % 8 == 0 && D <= 256 &&
                    q.size(1) % k.size(1) == 0 && at::cuda::getDeviceProperties(q.device().index())->major >= 8;
  if (!fits) return false;
  if (setting == AttentionKernel::Flash || k.size(2) < 2048) return true;
  static std::mutex mutex;
  static std::map<std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int>, int64_t> uses;
  std::lock_guard<std::mutex> lock(mutex);
  if (uses.size() > 4096) uses.clear();
  return uses[{q.size(0), q.size(1), k.size(1), q.size(2), k.size(2), D, int(q.scalar_type())}]++ == 0;
}

// Flash attention with its causal mask, which it aligns to the last key: query i of n attends
// keys up to keys - n + i, so queries after cached positions need no mask tensor (PyTorch's
// lower-right causal bias runs flash the same way).
at::Tensor flash_causal(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
  return std::get<0>(at::_scaled_dot_product_flash_attention(q, k, v, 0.0, /*is_causal=*/true, false, std::nullopt));
}
#endif

// SDPA over grouped heads: enable_gqa where libtorch has it (2.5+; flash attention reads the
// shared KV head in place), else the KV heads repeated out to one per query head.
at::Tensor grouped_sdpa(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& allowed,
                        bool is_causal) {
#ifdef SWERL_WITH_CUDA
  if (!allowed.defined() && is_causal && run_flash(q, k)) return flash_causal(q, k, v);
#endif
#if SWERL_SDPA_HAS_GQA
  const bool gqa = k.size(1) != q.size(1);
  if (allowed.defined()) return at::scaled_dot_product_attention(q, k, v, allowed, 0.0, is_causal, std::nullopt, gqa);
  return at::scaled_dot_product_attention(q, k, v, {}, 0.0, is_causal, std::nullopt, gqa);
#else
  const auto repeat_kv = [heads = q.size(1)](const at::Tensor& t) {
    const int64_t B = t.size(0), nkv = t.size(1), Tk = t.size(2), D = t.size(3), groups = heads / nkv;
    return groups == 1 ? t : t.unsqueeze(2).expand({B, nkv, groups, Tk, D}).reshape({B, heads, Tk, D});
  };
  if (allowed.defined()) return at::scaled_dot_product_attention(q, repeat_kv(k), repeat_kv(v), allowed, 0.0, is_causal);
  return at::scaled_dot_product_attention(q, repeat_kv(k), repeat_kv(v), {}, 0.0, is_causal);
#endif
}

}  // namespace

// libtorch 2.x: the fused kernels (flash / memory-efficient on CUDA) through SDPA.
at::Tensor grouped_query_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                   const at::Tensor& allowed) {
  return grouped_sdpa(q, k, v, allowed, false);
}
#else
// libtorch 1.x has no fused attention.
at::Tensor grouped_query_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                   const at::Tensor& allowed) {
  return grouped_matmul_attention(q, k, v, allowed);
}
#endif

int64_t causal_block_tokens() {
  static const int64_t block = [] {
    const char* env = std::getenv("SWERL_ATTENTION_BLOCK");
    const long long value = env ? std::atoll(env) : 0;
    return value > 0 ? int64_t(value) : int64_t(512);
  }();
  return block;
}

#if TORCH_VERSION_MAJOR >= 2
at::Tensor causal_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, int64_t) {
  return grouped_sdpa(q, k, v, at::Tensor(), /*is_causal=*/true);
}

at::Tensor causal_attention_after(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, int64_t start,
                                  int64_t) {
  const int64_t n = q.size(2), keys = start + n;
#ifdef SWERL_WITH_CUDA
  if (k.size(2) == keys && run_flash(q, k)) return flash_causal(q, k, v);
#endif
  const auto longs = q.options().dtype(at::kLong);
  const at::Tensor allowed =
      (at::arange(keys, longs).view({1, keys}) <= (at::arange(n, longs) + start).view({n, 1})).view({1, 1, n, keys});
  return grouped_query_attention(q, k, v, allowed);
}
#else
namespace {

// The block of queries [start, start + n) of q [B, nh, T, D], grouped under their KV head:
// [B, nkv, groups * n, D] (head-major within a group, as the dense path lays them out).
at::Tensor query_block(const at::Tensor& q, int64_t nkv, int64_t start, int64_t n) {
  const int64_t B = q.size(0), nh = q.size(1), D = q.size(3);
  return q.narrow(2, start, n).reshape({B, nkv, (nh / nkv) * n, D});
}

// true where query start + i may see key j (j <= start + i), [n, start + n].
at::Tensor block_mask(int64_t start, int64_t n, const at::TensorOptions& options) {
  const auto longs = options.dtype(at::kLong);
  return at::arange(start + n, longs).view({1, start + n}) <= (at::arange(n, longs) + start).view({n, 1});
}

// Scores of the query block [start, start + n) of q against keys [0, offset + start + n),
// scaled and masked, in float32: [B, nkv, groups, n, offset + start + n]. offset: the position
// of q's first query (0 for a fresh sequence).
at::Tensor block_scores(const at::Tensor& q, const at::Tensor& k, int64_t start, int64_t n, int64_t offset = 0) {
  const int64_t B = q.size(0), nkv = k.size(1), groups = q.size(1) / nkv, D = q.size(3), keys = offset + start + n;
  at::Tensor scores = at::matmul(query_block(q, nkv, start, n), k.narrow(2, 0, keys).transpose(-1, -2))
                          .view({B, nkv, groups, n, keys})
                          .to(at::kFloat)
                          .mul_(1.0 / std::sqrt(double(D)));
  return scores.masked_fill_(block_mask(offset + start, n, q.options()).logical_not(),
                             -std::numeric_limits<float>::infinity());
}

class BlockwiseCausalAttention : public torch::autograd::Function<BlockwiseCausalAttention> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& q, const at::Tensor& k,
                            const at::Tensor& v, int64_t block) {
    const int64_t B = q.size(0), nh = q.size(1), T = q.size(2), D = q.size(3), nkv = k.size(1), groups = nh / nkv;
    at::Tensor out = at::empty_like(q);
    at::Tensor lse = at::empty({B, nkv, groups, T}, q.options().dtype(at::kFloat));
    for (int64_t start = 0; start < T; start += block) {
      const int64_t n = std::min(block, T - start), keys = start + n;
      const at::Tensor scores = block_scores(q, k, start, n);
      const at::Tensor block_lse = at::logsumexp(scores, -1, true);
      const at::Tensor probs = (scores - block_lse).exp_().to(q.scalar_type());
      out.narrow(2, start, n).copy_(at::matmul(probs.view({B, nkv, groups * n, keys}), v.narrow(2, 0, keys))
                                        .view({B, nh, n, D}));
      lse.narrow(3, start, n).copy_(block_lse.squeeze(-1));
    }
    ctx->save_for_backward({q, k, v, out, lse});
    ctx->saved_data["block"] = block;
    return out;
  }

  // Flash attention's backward, a block at a time and in float32: P from the scores and the
  // saved log-sum-exp, dV += P^T dO, dS = P (dO V^T - rowsum(dO O)) / sqrt(D), dQ = dS K,
  // dK += dS^T Q.
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor &q = saved[0], &k = saved[1], &v = saved[2], &out = saved[3], &lse = saved[4];
    const int64_t block = ctx->saved_data["block"].toInt();
    const int64_t B = q.size(0), nh = q.size(1), T = q.size(2), D = q.size(3), nkv = k.size(1), groups = nh / nkv;
    const at::Tensor grad_out = grads[0].to(at::kFloat);
    const at::Tensor delta = (grad_out * out.to(at::kFloat)).sum(-1).view({B, nkv, groups, T});
    const at::Tensor k32 = k.to(at::kFloat), v32 = v.to(at::kFloat), q32 = q.to(at::kFloat);
    at::Tensor grad_q = at::empty({B, nh, T, D}, q.options().dtype(at::kFloat));
    at::Tensor grad_k = at::zeros({B, nkv, T, D}, q.options().dtype(at::kFloat));
    at::Tensor grad_v = at::zeros({B, nkv, T, D}, q.options().dtype(at::kFloat));
    const double scale = 1.0 / std::sqrt(double(D));
    for (int64_t start = 0; start < T; start += block) {
      const int64_t n = std::min(block, T - start), keys = start + n;
      const at::Tensor probs = (block_scores(q, k, start, n) - lse.narrow(3, start, n).unsqueeze(-1)).exp_()
                                   .view({B, nkv, groups * n, keys});
      const at::Tensor d_out = query_block(grad_out, nkv, start, n);
      grad_v.narrow(2, 0, keys).add_(at::matmul(probs.transpose(-1, -2), d_out));
      const at::Tensor d_probs = at::matmul(d_out, v32.narrow(2, 0, keys).transpose(-1, -2));
      const at::Tensor d_scores = probs * (d_probs - delta.narrow(3, start, n).reshape({B, nkv, groups * n, 1})) * scale;
      grad_q.narrow(2, start, n).copy_(at::matmul(d_scores, k32.narrow(2, 0, keys)).view({B, nh, n, D}));
      grad_k.narrow(2, 0, keys).add_(at::matmul(d_scores.transpose(-1, -2), query_block(q32, nkv, start, n)));
    }
    return {grad_q.to(q.scalar_type()), grad_k.to(k.scalar_type()), grad_v.to(v.scalar_type()), at::Tensor()};
  }
};

}  // namespace

at::Tensor causal_attention_after(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, int64_t offset,
                                  int64_t block_tokens) {
  const int64_t block = block_tokens > 0 ? block_tokens : causal_block_tokens();
  const int64_t B = q.size(0), nh = q.size(1), n = q.size(2), D = q.size(3), nkv = k.size(1), groups = nh / nkv;
  at::Tensor out = at::empty_like(q);
  for (int64_t start = 0; start < n; start += block) {
    const int64_t rows = std::min(block, n - start), keys = offset + start + rows;
    const at::Tensor probs = at::softmax(block_scores(q, k, start, rows, offset), -1).to(q.scalar_type());
    out.narrow(2, start, rows)
        .copy_(at::matmul(probs.view({B, nkv, groups * rows, keys}), v.narrow(2, 0, keys)).view({B, nh, rows, D}));
  }
  return out;
}

at::Tensor causal_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, int64_t block_tokens) {
  const int64_t block = block_tokens > 0 ? block_tokens : causal_block_tokens();
  const int64_t T = q.size(2);
  // Up to four blocks the [T, T] square costs little (2048 tokens at the default block), and
  // the dense path computes bit for bit what it always has (the demo's curve stays).
  if (T <= 4 * block) return grouped_query_attention(q, k, v, causal_mask(T, q.device()));
  return BlockwiseCausalAttention::apply(q, k, v, block);
}
#endif

namespace {

// Consecutive sequences of one length, as [first index, count].
std::vector<std::pair<size_t, int64_t>> equal_length_runs(const std::vector<int64_t>& segments) {
  std::vector<std::pair<size_t, int64_t>> runs;
  for (size_t i = 0; i < segments.size(); ++i) {
    if (!runs.empty() && segments[runs.back().first] == segments[i]) ++runs.back().second;
    else runs.emplace_back(i, 1);
  }
  return runs;
}

// count sequences of `length` tokens packed in t [1, heads, count * length, D] as a batch
// [count, heads, length, D]. The projections lay t out as [1, T, heads, D] in memory, so for
// them this is a view, and the batch is laid out as an unpacked batch is.
at::Tensor as_batch(const at::Tensor& t, int64_t count, int64_t length) {
  return t.transpose(1, 2).reshape({count, length, t.size(1), t.size(3)}).transpose(1, 2);
}

// The inverse: [count, heads, length, D] back to [1, heads, count * length, D].
at::Tensor as_packed(const at::Tensor& t) {
  return t.transpose(1, 2).reshape({1, t.size(0) * t.size(2), t.size(1), t.size(3)}).transpose(1, 2);
}

bool one_sequence_at_a_time() {
  static const bool each = [] {
    const char* env = std::getenv("SWERL_PACKED_ATTENTION");
    return env && std::string(env) == "each";
  }();
  return each;
}

}  // namespace

at::Tensor packed_causal_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                   const std::vector<int64_t>& segments) {
  if (segments.size() <= 1) return causal_attention(q, k, v);
  // The work is the sum of the sequences' squares, not the square of their sum. Consecutive
  // sequences of one length attend as one batch (one fused call: 4 x 4096 tokens took 0.80 ms a
  // layer one at a time on an H200 against cuDNN's 0.48 for the batch); the rest one at a time.
  // On the CPU, one at a time: libtorch's CPU kernels took 6x longer for the batch (the tiny
  // model's 32 x 550 train step 9.3 s against 1.5 s one at a time, 2 threads).
  // SWERL_PACKED_ATTENTION=each puts every sequence in a call of its own, for comparison.
  // Split, not narrowed: a split's backward writes the gradient once (a concatenation of the
  // pieces'), where each narrow's backward fills a whole-length tensor of zeros and autograd
  // adds them up.
  std::vector<std::pair<size_t, int64_t>> runs;
  if (one_sequence_at_a_time() || !q.is_cuda())
    for (size_t i = 0; i < segments.size(); ++i) runs.emplace_back(i, 1);
  else
    runs = equal_length_runs(segments);
  std::vector<int64_t> sizes;
  for (const auto& [first, count] : runs) sizes.push_back(segments[first] * count);
  const std::vector<at::Tensor> qs = q.split_with_sizes(sizes, 2), ks = k.split_with_sizes(sizes, 2),
                                vs = v.split_with_sizes(sizes, 2);
  std::vector<at::Tensor> outs;
  for (size_t r = 0; r < runs.size(); ++r) {
    const int64_t count = runs[r].second, length = segments[runs[r].first];
    outs.push_back(count == 1 ? causal_attention(qs[r], ks[r], vs[r])
                              : as_packed(causal_attention(as_batch(qs[r], count, length),
                                                           as_batch(ks[r], count, length),
                                                           as_batch(vs[r], count, length))));
  }
  return outs.size() == 1 ? outs[0] : at::cat(outs, 2);
}

}  // namespace swerl
