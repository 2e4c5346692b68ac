#include "model/rope.h"

#include <algorithm>
#include <cmath>

namespace swerl {

namespace {

const double kPi = 3.14159265358979323846;

// base ** (arange(0, D, 2) / D) in float32: plain RoPE's per-pair wavelength factors.
at::Tensor position_frequencies(double base, int64_t D) {
  return at::pow(base, at::arange(0, D, 2, at::TensorOptions().dtype(at::kLong)).to(at::kFloat) / double(D));
}

// YaRN: interpolated (divided by factor) below the correction range, extrapolated (as trained)
// above it, a linear ramp between; the range is where a pair turns beta_fast..beta_slow times
// over the original context.
at::Tensor yarn(const ModelConfig& c) {
  const RopeScaling& r = c.rope_scaling;
  const int64_t D = c.head_dim;
  const at::Tensor pos_freqs = position_frequencies(c.rope_theta, D);
  const at::Tensor extrapolation = pos_freqs.reciprocal();
  const at::Tensor interpolation = (r.factor * pos_freqs).reciprocal();
  auto correction_dim = [&](double rotations) {
    return (double(D) * std::log(r.original_max_positions / (rotations * 2 * kPi))) / (2 * std::log(c.rope_theta));
  };
  double low = correction_dim(r.beta_fast), high = correction_dim(r.beta_slow);
  if (r.truncate) {
    low = std::floor(low);
    high = std::ceil(high);
  }
  low = std::max(low, 0.0);
  high = std::min(high, double(D - 1));
  if (low == high) high += 0.001;  // a ramp of zero width
  const at::Tensor ramp = ((at::arange(D / 2, at::TensorOptions().dtype(at::kFloat)) - low) / (high - low)).clamp(0, 1);
  const at::Tensor extrapolated = 1 - ramp;
  return interpolation * (1 - extrapolated) + extrapolation * extrapolated;
}

// Llama 3.1: wavelengths longer than original / low_freq_factor are divided by factor, shorter
// than original / high_freq_factor kept, and the band between smoothly blended.
at::Tensor llama3(const ModelConfig& c) {
  const RopeScaling& r = c.rope_scaling;
  const at::Tensor inv_freq = position_frequencies(c.rope_theta, c.head_dim).reciprocal();
  const double low_freq_wavelen = r.original_max_positions / r.low_freq_factor;
  const double high_freq_wavelen = r.original_max_positions / r.high_freq_factor;
  const at::Tensor wavelen = (2 * kPi) / inv_freq;
  at::Tensor scaled = at::where(wavelen > low_freq_wavelen, inv_freq / r.factor, inv_freq);
  const at::Tensor smooth = (r.original_max_positions / wavelen - r.low_freq_factor) / (r.high_freq_factor - r.low_freq_factor);
  const at::Tensor smoothed = (1 - smooth) * scaled / r.factor + smooth * scaled;
  const at::Tensor medium = (wavelen >= high_freq_wavelen).logical_and(wavelen <= low_freq_wavelen);
  return at::where(medium, smoothed, scaled);
}

}  // namespace

RotaryFrequencies rotary_frequencies(const ModelConfig& c) {
  switch (c.rope_scaling.kind) {
    case RopeScaling::Kind::Yarn:
      return {yarn(c), c.rope_scaling.attention_factor};
    case RopeScaling::Kind::Llama3:
      return {llama3(c), 1.0};
    case RopeScaling::Kind::None:
      break;
  }
  // Hugging Face computes the inverse frequencies in float32; so do we.
  return {position_frequencies(c.rope_theta, c.head_dim).reciprocal(), 1.0};
}

}  // namespace swerl
