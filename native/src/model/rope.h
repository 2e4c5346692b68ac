// The rotary embedding's inverse frequencies and the factor on cos and sin, for plain RoPE and
// its long-context scalings (YaRN, Llama 3.1), computed as Hugging Face's modeling_rope_utils
// computes them: in float32 tensors, with the scalar formulas in double.
#pragma once
#include <ATen/ATen.h>

#include "model/model_config.h"

namespace swerl {

struct RotaryFrequencies {
  at::Tensor inv_freq;  // [head_dim / 2], float32, on the CPU
  double attention_factor = 1.0;
};

RotaryFrequencies rotary_frequencies(const ModelConfig& config);

}  // namespace swerl
