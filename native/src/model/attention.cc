#include "model/attention.h"

#include <torch/csrc/api/include/torch/version.h>

#include <cmath>
#include <limits>

namespace swerl {

at::Tensor causal_mask(int64_t tokens, at::Device device) {
  return at::ones({tokens, tokens}, at::TensorOptions().dtype(at::kBool).device(device))
      .tril()
      .view({1, 1, tokens, tokens});
}

#if TORCH_VERSION_MAJOR >= 2
// libtorch 2.x: the fused kernels (flash / memory-efficient on CUDA) through SDPA.
at::Tensor grouped_query_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                   const at::Tensor& allowed) {
  const int64_t B = k.size(0), nkv = k.size(1), Tk = k.size(2), D = k.size(3);
  const int64_t groups = q.size(1) / nkv;
  auto expand = [&](const at::Tensor& t) {
    return groups == 1 ? t : t.unsqueeze(2).expand({B, nkv, groups, Tk, D}).reshape({B, nkv * groups, Tk, D});
  };
  return at::scaled_dot_product_attention(q, expand(k), expand(v), allowed, 0.0, false);
}
#else
// libtorch 1.x has no fused attention: softmax(q k^T / sqrt(D)) v, the softmax in fp32 as
// Hugging Face's eager attention does. The query heads of a group share one matmul with
// their KV head, so K and V are never repeated in memory.
at::Tensor grouped_query_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
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
#endif

}  // namespace swerl
