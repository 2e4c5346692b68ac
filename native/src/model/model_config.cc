#include "model/model_config.h"

#include "core/swerl_error.h"

namespace swerl {

void check_model_config(const ModelConfig& c) {
  auto positive = [](int64_t v, const char* field) {
    if (v < 1) throw_invalid(std::string("config.") + field + " must be >= 1");
  };
  positive(c.vocab_size, "vocabSize");
  positive(c.hidden_size, "hiddenSize");
  positive(c.intermediate_size, "intermediateSize");
  positive(c.num_heads, "numHeads");
  positive(c.num_kv_heads, "numKvHeads");
  positive(c.head_dim, "headDim");
  if (c.num_layers < 0) throw_invalid("config.numLayers must be >= 0");
  if (c.num_heads % c.num_kv_heads != 0)
    throw_invalid("config.numHeads must be a multiple of config.numKvHeads");
  if (c.head_dim % 2 != 0) throw_invalid("config.headDim must be even (rotary embeddings)");
  if (!(c.rope_theta > 0)) throw_invalid("config.ropeTheta must be > 0");
  if (!(c.rms_norm_eps > 0)) throw_invalid("config.rmsNormEps must be > 0");
  const RopeScaling& r = c.rope_scaling;
  if (r.kind != RopeScaling::Kind::None) {
    if (!(r.factor >= 1)) throw_invalid("config.ropeScaling.factor must be >= 1");
    if (!(r.original_max_positions >= 1)) throw_invalid("config.ropeScaling.originalMaxPositions must be >= 1");
    if (!(r.attention_factor > 0)) throw_invalid("config.ropeScaling.attentionFactor must be > 0");
  }
  if (r.kind == RopeScaling::Kind::Llama3 && !(r.high_freq_factor > r.low_freq_factor))
    throw_invalid("config.ropeScaling.highFreqFactor must be > lowFreqFactor");
}

std::vector<ParameterSpec> parameter_specs(const ModelConfig& c) {
  const int64_t H = c.hidden_size, I = c.intermediate_size, D = c.head_dim;
  const int64_t q_out = c.num_heads * D, kv_out = c.num_kv_heads * D;
  std::vector<ParameterSpec> specs;
  specs.push_back({"model.embed_tokens.weight", {c.vocab_size, H}});
  for (int64_t i = 0; i < c.num_layers; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".";
    specs.push_back({p + "input_layernorm.weight", {H}});
    specs.push_back({p + "self_attn.q_proj.weight", {q_out, H}});
    if (c.attention_bias) specs.push_back({p + "self_attn.q_proj.bias", {q_out}});
    specs.push_back({p + "self_attn.k_proj.weight", {kv_out, H}});
    if (c.attention_bias) specs.push_back({p + "self_attn.k_proj.bias", {kv_out}});
    specs.push_back({p + "self_attn.v_proj.weight", {kv_out, H}});
    if (c.attention_bias) specs.push_back({p + "self_attn.v_proj.bias", {kv_out}});
    specs.push_back({p + "self_attn.o_proj.weight", {H, q_out}});
    if (c.qk_norm) {
      specs.push_back({p + "self_attn.q_norm.weight", {D}});
      specs.push_back({p + "self_attn.k_norm.weight", {D}});
    }
    specs.push_back({p + "post_attention_layernorm.weight", {H}});
    specs.push_back({p + "mlp.gate_proj.weight", {I, H}});
    specs.push_back({p + "mlp.up_proj.weight", {I, H}});
    specs.push_back({p + "mlp.down_proj.weight", {H, I}});
  }
  specs.push_back({"model.norm.weight", {H}});
  if (!c.tie_word_embeddings) specs.push_back({"lm_head.weight", {c.vocab_size, H}});
  return specs;
}

}  // namespace swerl
