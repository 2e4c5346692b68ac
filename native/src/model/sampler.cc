#include "model/sampler.h"

#include <algorithm>
#include <limits>

#include "core/profile.h"

namespace swerl {

namespace {

uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// The per-row parameters, as the columns of the one host-to-device copy.
enum Column : int64_t { kInvTemperature, kUniform, kGreedy, kTopK, kTopP, kColumns };

// Keeps each row's top_k largest (0: all) and then the smallest set whose probability reaches
// its top_p (>= 1: all); the rest become -inf. logp [n, V]; rows as uploaded.
at::Tensor restrict_support(const at::Tensor& logp, const at::Tensor& rows, int64_t max_top_k, bool any_top_p) {
  const double neg_inf = -std::numeric_limits<double>::infinity();
  const int64_t V = logp.size(1);
  at::Tensor out = logp;
  if (max_top_k > 0) {
    const at::Tensor k = rows.select(1, kTopK).to(at::kLong);
    const at::Tensor largest = std::get<0>(logp.topk(std::min(max_top_k, V), /*dim=*/1));
    const at::Tensor kth = largest.gather(1, (k.clamp(1, std::min(max_top_k, V)) - 1).unsqueeze(1));
    const at::Tensor keep_all = ((k <= 0) | (k >= V)).unsqueeze(1);
    out = out.masked_fill((logp < kth) & keep_all.logical_not(), neg_inf);
  }
  if (any_top_p) {
    const at::Tensor p = rows.select(1, kTopP).to(at::kFloat).unsqueeze(1);
    // Stable: tokens of equal probability (common in bf16 logits) keep vocabulary order, so
    // which of them the cut keeps is the same on every device.
    auto [sorted, order] = at::sort(out, /*stable=*/true, /*dim=*/1, /*descending=*/true);
    const at::Tensor mass = sorted.exp();
    const at::Tensor drop_sorted = ((mass.cumsum(1) - mass) >= p) & (p < 1.0f);  // the first token stays
    out = out.masked_fill(at::zeros_like(drop_sorted).scatter(1, order, drop_sorted), neg_inf);
  }
  return out;
}

// The first index whose cumulative mass reaches target [n, 1], over weights [n, V] >= 0, in two
// levels: blocks of kBlock tokens, then the chosen block, so no cumulative sum runs over the
// whole vocabulary. target is clamped into the mass found, so the index always has weight > 0.
constexpr int64_t kBlock = 1024;
at::Tensor inverse_cdf(const at::Tensor& weights, const at::Tensor& target) {
  const int64_t n = weights.size(0), V = weights.size(1), blocks = (V + kBlock - 1) / kBlock;
  const at::Tensor padded = at::constant_pad_nd(weights, {0, blocks * kBlock - V}).view({n, blocks, kBlock});
  const at::Tensor block_cdf = padded.sum(2).cumsum(1);
  const at::Tensor block = at::searchsorted(block_cdf, target).clamp_max_(blocks - 1);
  const at::Tensor before =
      at::where(block > 0, block_cdf.gather(1, (block - 1).clamp_min(0)), at::zeros_like(target));
  const at::Tensor inner = padded.gather(1, block.unsqueeze(2).expand({n, 1, kBlock})).squeeze(1).cumsum(1);
  const at::Tensor rest = at::minimum(target - before, inner.narrow(1, kBlock - 1, 1));
  const at::Tensor offset = at::searchsorted(inner, rest).clamp_max_(kBlock - 1);
  return (block * kBlock + offset).clamp_max_(V - 1);
}

}  // namespace

double uniform_draw(uint64_t seed, uint64_t index) {
  const uint64_t bits = splitmix64(splitmix64(seed) ^ (index * 0xD1B54A32D192ED03ull));
  return double((bits >> 11) + 1) * 0x1.0p-53;
}

SampledTokens sample_tokens(const at::Tensor& logits, const std::vector<SamplingParams>& params,
                            const std::vector<uint64_t>& draws) {
  profile::Phase phase("sampler");
  const int64_t n = logits.size(0);
  SampledTokens out;
  out.tokens.resize(n);
  out.logprobs.resize(n);
  if (n == 0) return out;

  // Every row's parameters in one copy (pinned on CUDA, so it does not wait for the device).
  at::Tensor host = at::empty({n, kColumns}, at::kDouble);
  if (logits.is_cuda()) host = host.pin_memory();
  double* row = host.data_ptr<double>();
  int64_t max_top_k = 0;
  bool any_top_p = false;
  for (int64_t i = 0; i < n; ++i, row += kColumns) {
    const SamplingParams& p = params[i];
    row[kInvTemperature] = float(p.temperature > 0 ? 1.0 / p.temperature : 1.0);
    row[kUniform] = uniform_draw(p.seed, draws[i]);
    row[kGreedy] = p.temperature == 0 ? 1.0 : 0.0;
    row[kTopK] = double(p.top_k);
    row[kTopP] = p.top_p;
    max_top_k = std::max(max_top_k, p.top_k);
    any_top_p |= p.top_p < 1.0;
  }
  at::Tensor rows;
  {
    profile::Phase copy("host-copy");
    rows = host.to(logits.device(), /*non_blocking=*/true);
  }
  const at::Tensor scale = rows.select(1, kInvTemperature).to(at::kFloat).unsqueeze(1);
  const at::Tensor logp = at::log_softmax(logits.to(at::kFloat) * scale, -1);
  const at::Tensor support = max_top_k > 0 || any_top_p ? restrict_support(logp, rows, max_top_k, any_top_p) : logp;
  const at::Tensor mass = support.exp();
  const at::Tensor u = rows.select(1, kUniform).to(at::kFloat).unsqueeze(1);
  const at::Tensor sampled = inverse_cdf(mass, u * mass.sum(1, /*keepdim=*/true));
  const at::Tensor greedy = rows.select(1, kGreedy).unsqueeze(1) > 0.5;
  const at::Tensor chosen = at::where(greedy, logp.argmax(-1, true), sampled);
  // Token and logprob of every row in one copy back (token ids are exact in a double).
  at::Tensor result;
  {
    profile::Phase copy("host-copy");
    result = at::cat({chosen.to(at::kDouble), logp.gather(1, chosen).to(at::kDouble)}, 1).cpu();
  }
  const double* r = result.data_ptr<double>();
  for (int64_t i = 0; i < n; ++i) {
    out.tokens[i] = int32_t(r[2 * i]);
    out.logprobs[i] = float(r[2 * i + 1]);
  }
  return out;
}

}  // namespace swerl
