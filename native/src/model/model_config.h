// The decoder's architecture as plain fields (lib/model/model-config.ts reads a Hugging Face
// config.json, validates and defaults it, and sends exactly these).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace swerl {

// Rotary scaling for long contexts (Hugging Face's rope_scaling), every field resolved in
// lib/model/rope-scaling.ts: YaRN (Qwen3's 131k setting) and Llama 3.1's. `none` is plain RoPE.
struct RopeScaling {
  enum class Kind { None, Yarn, Llama3 } kind = Kind::None;
  double factor = 1.0;
  double original_max_positions = 0;  // the pre-scaling context length
  double attention_factor = 1.0;      // multiplies cos and sin (YaRN's mscale)
  double beta_fast = 32, beta_slow = 1;  // YaRN's correction range, in rotations
  bool truncate = true;                  // YaRN: round the correction range to whole dims
  double low_freq_factor = 1, high_freq_factor = 4;  // Llama 3.1's wavelength bands
};

struct ModelConfig {
  int64_t vocab_size = 0;
  int64_t hidden_size = 0;
  int64_t intermediate_size = 0;
  int64_t num_layers = 0;
  int64_t num_heads = 0;
  int64_t num_kv_heads = 0;
  int64_t head_dim = 0;
  double rope_theta = 10000.0;
  double rms_norm_eps = 1e-6;
  bool tie_word_embeddings = false;
  bool qk_norm = false;         // Qwen3: RMSNorm over head_dim on q and k, before rotary
  bool attention_bias = false;  // Qwen2: biases on q, k and v projections
  RopeScaling rope_scaling;
};

void check_model_config(const ModelConfig& config);  // throws swerl::Error naming the field

struct ParameterSpec {
  std::string name;  // Hugging Face's name, e.g. model.layers.0.self_attn.q_proj.weight
  std::vector<int64_t> shape;
};

// Every parameter of the model, in a fixed order, named as Hugging Face checkpoints name them.
std::vector<ParameterSpec> parameter_specs(const ModelConfig& config);

}  // namespace swerl
