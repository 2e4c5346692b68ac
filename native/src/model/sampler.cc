#include "model/sampler.h"

#include <limits>

namespace swerl {

namespace {

uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Keeps the top_k largest and the smallest set whose probability reaches top_p; the rest
// become -inf. logp: one row [V] of log-probabilities.
at::Tensor restrict_support(const at::Tensor& logp, const SamplingParams& p) {
  at::Tensor out = logp.clone();
  const double neg_inf = -std::numeric_limits<double>::infinity();
  const int64_t V = logp.size(0);
  if (p.top_k > 0 && p.top_k < V) {
    const at::Tensor kth = std::get<0>(logp.topk(p.top_k)).min();
    out.masked_fill_(logp < kth, neg_inf);
  }
  if (p.top_p < 1.0) {
    auto [sorted, order] = out.sort(/*dim=*/0, /*descending=*/true);
    const at::Tensor mass_before = sorted.exp().cumsum(0) - sorted.exp();
    const at::Tensor drop_sorted = mass_before >= p.top_p;  // the first token always stays
    out.index_put_({order.masked_select(drop_sorted)}, neg_inf);
  }
  return out;
}

}  // namespace

double uniform_draw(uint64_t seed, uint64_t index) {
  const uint64_t bits = splitmix64(splitmix64(seed) ^ (index * 0xD1B54A32D192ED03ull));
  return double((bits >> 11) + 1) * 0x1.0p-53;
}

SampledTokens sample_tokens(const at::Tensor& logits, const std::vector<SamplingParams>& params,
                            const std::vector<uint64_t>& draws) {
  const int64_t n = logits.size(0);
  SampledTokens out;
  out.tokens.resize(n);
  out.logprobs.resize(n);
  if (n == 0) return out;

  std::vector<float> inv_temperature(n);
  std::vector<double> uniforms(n);
  for (int64_t i = 0; i < n; ++i) {
    const double t = params[i].temperature;
    inv_temperature[i] = float(t > 0 ? 1.0 / t : 1.0);
    uniforms[i] = uniform_draw(params[i].seed, draws[i]);
  }
  const auto cpu_float = at::TensorOptions().dtype(at::kFloat);
  const at::Tensor scale = at::from_blob(inv_temperature.data(), {n, 1}, cpu_float).to(logits.device());
  const at::Tensor logp = at::log_softmax(logits.to(at::kFloat) * scale, -1);

  // Inverse-CDF sampling on the device: first index whose cumulative mass reaches u * total.
  at::Tensor support = logp;
  bool restricted = false;
  for (int64_t i = 0; i < n; ++i) restricted |= params[i].top_k > 0 || params[i].top_p < 1.0;
  if (restricted) {
    support = logp.clone();
    for (int64_t i = 0; i < n; ++i)
      if (params[i].top_k > 0 || params[i].top_p < 1.0) support[i].copy_(restrict_support(logp[i], params[i]));
  }
  const at::Tensor cdf = support.exp().cumsum(-1);
  const at::Tensor u = at::from_blob(uniforms.data(), {n, 1}, at::TensorOptions().dtype(at::kDouble))
                           .to(logits.device(), at::kFloat);
  const at::Tensor target = u * cdf.narrow(1, cdf.size(1) - 1, 1);
  at::Tensor sampled = at::searchsorted(cdf, target).clamp_max_(logp.size(1) - 1);
  const at::Tensor greedy = logp.argmax(-1, true);
  std::vector<uint8_t> is_greedy(n);
  for (int64_t i = 0; i < n; ++i) is_greedy[i] = params[i].temperature == 0;
  const at::Tensor greedy_rows =
      at::from_blob(is_greedy.data(), {n, 1}, at::TensorOptions().dtype(at::kBool)).to(logits.device());
  const at::Tensor chosen = at::where(greedy_rows, greedy, sampled);
  const at::Tensor chosen_logp = logp.gather(1, chosen).squeeze(1).cpu();
  const at::Tensor chosen_cpu = chosen.squeeze(1).to(at::kCPU, at::kInt).contiguous();
  std::copy(chosen_cpu.data_ptr<int32_t>(), chosen_cpu.data_ptr<int32_t>() + n, out.tokens.begin());
  std::copy(chosen_logp.data_ptr<float>(), chosen_logp.data_ptr<float>() + n, out.logprobs.begin());
  return out;
}

}  // namespace swerl
