#include "model/transformer.h"

#include <c10/core/GradMode.h>
#include <ATen/CPUGeneratorImpl.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/autograd/custom_function.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>

#include "core/profile.h"
#include "core/swerl_error.h"
#include "model/attention.h"
#include "model/norm.h"
#include "model/rope.h"

namespace swerl {

at::Tensor linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  if (x.numel() == x.size(-1) && x.device().is_cpu()) {
    // One row (decoding one sequence): a CPU GEMM would first pack all of W, which costs more
    // than the product itself (measured: 59 ms of a 64 ms decode step of a 48M model); a
    // matrix-vector product reads W once.
    std::vector<int64_t> shape = x.sizes().vec();
    shape.back() = weight.size(0);
    at::Tensor y = at::mv(weight, x.reshape({-1}));
    if (bias.defined()) y = y + bias;
    return y.view(shape);
  }
  return bias.defined() ? at::linear(x, weight, bias) : at::linear(x, weight);
}

Transformer::Transformer(const ModelConfig& config, at::Device device, at::ScalarType dtype)
    : config_(config), device_(device), dtype_(dtype) {
  check_model_config(config_);
  specs_ = parameter_specs(config_);
  const auto options = at::TensorOptions().dtype(dtype_).device(device_);
  for (const ParameterSpec& spec : specs_) parameters_.push_back(at::zeros(spec.shape, options));
  auto get = [&](const std::string& name) { return parameters_[parameter_index(name)]; };
  auto maybe = [&](const std::string& name, bool present) {
    return present ? get(name) : at::Tensor();
  };
  embed_ = get("model.embed_tokens.weight");
  final_norm_ = get("model.norm.weight");
  lm_head_ = config_.tie_word_embeddings ? embed_ : get("lm_head.weight");
  for (int64_t i = 0; i < config_.num_layers; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".";
    const bool bias = config_.attention_bias, qk = config_.qk_norm;
    layers_.push_back(LayerWeights{
        get(p + "input_layernorm.weight"), get(p + "self_attn.q_proj.weight"),
        maybe(p + "self_attn.q_proj.bias", bias), get(p + "self_attn.k_proj.weight"),
        maybe(p + "self_attn.k_proj.bias", bias), get(p + "self_attn.v_proj.weight"),
        maybe(p + "self_attn.v_proj.bias", bias), get(p + "self_attn.o_proj.weight"),
        maybe(p + "self_attn.q_norm.weight", qk), maybe(p + "self_attn.k_norm.weight", qk),
        get(p + "post_attention_layernorm.weight"), get(p + "mlp.gate_proj.weight"),
        get(p + "mlp.up_proj.weight"), get(p + "mlp.down_proj.weight")});
  }
  const RotaryFrequencies rotary = rotary_frequencies(config_);
  inv_freq_ = rotary.inv_freq.to(device_);
  rotary_attention_factor_ = rotary.attention_factor;
}

int64_t Transformer::parameter_index(const std::string& name) const {
  for (size_t i = 0; i < specs_.size(); ++i)
    if (specs_[i].name == name) return int64_t(i);
  throw Error("ERR_SWERL_CHECKPOINT", "the model has no parameter named '" + name + "'");
}

void Transformer::rotary_tables(const at::Tensor& positions, at::Tensor& cos, at::Tensor& sin) const {
  profile::Phase phase("rotary");
  const at::Tensor freqs = positions.to(at::kFloat).unsqueeze(-1) * inv_freq_;  // [..., D/2]
  const at::Tensor angles = at::cat({freqs, freqs}, -1);
  if (rotary_attention_factor_ == 1.0) {
    cos = angles.cos().to(dtype_);
    sin = angles.sin().to(dtype_);
  } else {
    // YaRN's mscale, on cos and sin in float32 before the cast, as Hugging Face applies it.
    cos = (angles.cos() * rotary_attention_factor_).to(dtype_);
    sin = (angles.sin() * rotary_attention_factor_).to(dtype_);
  }
}

at::Tensor Transformer::layer(int64_t index, const at::Tensor& x, const at::Tensor& cos,
                              const at::Tensor& sin, const Attend& attend) const {
  const LayerWeights& w = layers_[index];
  const int64_t B = x.size(0), T = x.size(1), D = config_.head_dim;
  at::Tensor q, k, v, mid;
  {
    profile::Phase phase("attention.proj");
    const at::Tensor h = rms_norm(x, w.input_norm, config_.rms_norm_eps);
    q = linear(h, w.q, w.q_bias).view({B, T, config_.num_heads, D});
    k = linear(h, w.k, w.k_bias).view({B, T, config_.num_kv_heads, D});
    v = linear(h, w.v, w.v_bias).view({B, T, config_.num_kv_heads, D}).transpose(1, 2);
    q = norm_rotary(q, config_.qk_norm ? w.q_norm : at::Tensor(), cos, sin, config_.rms_norm_eps).transpose(1, 2);
    k = norm_rotary(k, config_.qk_norm ? w.k_norm : at::Tensor(), cos, sin, config_.rms_norm_eps).transpose(1, 2);
  }
  at::Tensor attended;
  {
    profile::Phase phase("attention");
    attended = attend(q, k, v).transpose(1, 2).reshape({B, T, config_.num_heads * D});
  }
  {
    profile::Phase phase("attention.proj");
    mid = x + linear(attended, w.o, at::Tensor());
  }
  at::Tensor out;
  {
    profile::Phase phase("mlp");
    const at::Tensor g = rms_norm(mid, w.post_norm, config_.rms_norm_eps);
    out = mid + linear(at::silu(linear(g, w.gate, at::Tensor())) * linear(g, w.up, at::Tensor()), w.down, at::Tensor());
  }
  if (profile::active() && out.requires_grad()) {
    // The backward reaches a layer's output first, then (its MLP done) the attention block's.
    out.register_hook([](const at::Tensor& grad) {
      profile::switch_to("backward.mlp");
      return grad;
    });
    mid.register_hook([](const at::Tensor& grad) {
      profile::switch_to("backward.attention");
      return grad;
    });
  }
  return out;
}

namespace {

// Activation checkpointing: the forward keeps only the layer's input; the backward runs the
// layer again with grad on and back-propagates through it (re-entrantly, so the layer's
// parameters, which are leaves, accumulate their gradients as usual).
struct CheckpointedLayer : public torch::autograd::Function<CheckpointedLayer> {
  static torch::autograd::variable_list forward(torch::autograd::AutogradContext* ctx,
                                                const at::Tensor& x, const at::Tensor& cos,
                                                const at::Tensor& sin, int64_t index,
                                                int64_t model_address, const std::vector<int64_t>& segments) {
    const auto* model = reinterpret_cast<const Transformer*>(model_address);
    ctx->save_for_backward({x, cos, sin});
    ctx->saved_data["index"] = index;
    ctx->saved_data["model"] = model_address;
    ctx->saved_data["segments"] = segments;
    c10::NoGradGuard no_grad;
    return {model->forward_layer(index, x, cos, sin, segments)};
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto* model = reinterpret_cast<const Transformer*>(ctx->saved_data["model"].toInt());
    const at::Tensor x = saved[0].detach().requires_grad_(true);
    at::Tensor out;
    {
      c10::AutoGradMode grad_on(true);
      out = model->forward_layer(ctx->saved_data["index"].toInt(), x, saved[1], saved[2],
                                 ctx->saved_data["segments"].toIntVector());
    }
    torch::autograd::backward({out}, {grads[0]});
    return {x.grad(), at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

}  // namespace

at::Tensor Transformer::forward_layer(int64_t index, const at::Tensor& x, const at::Tensor& cos,
                                      const at::Tensor& sin, const std::vector<int64_t>& segments) const {
  return layer(index, x, cos, sin, [&](const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
    return packed_causal_attention(q, k, v, segments);
  });
}

at::Tensor Transformer::forward(const at::Tensor& ids, bool checkpoint, const std::vector<int64_t>& segments) const {
  const int64_t T = ids.size(1);
  const auto long_options = at::TensorOptions().dtype(at::kLong).device(device_);
  at::Tensor positions;
  if (!segments.empty() && (ids.size(0) != 1 || std::accumulate(segments.begin(), segments.end(), int64_t(0)) != T))
    throw_invalid("packed segments must tile one row of ids end to end");
  if (segments.size() <= 1) {
    positions = at::arange(T, long_options);
  } else {
    std::vector<at::Tensor> each;
    for (int64_t n : segments) each.push_back(at::arange(n, long_options));
    positions = at::cat(each);
  }
  at::Tensor cos, sin;
  rotary_tables(positions, cos, sin);  // [T, D], broadcast over batch and heads
  at::Tensor x = embed(ids);
  for (int64_t i = 0; i < config_.num_layers; ++i) {
    if (checkpoint && x.requires_grad()) {
      x = CheckpointedLayer::apply(x, cos, sin, i, reinterpret_cast<int64_t>(this), segments)[0];
    } else {
      x = forward_layer(i, x, cos, sin, segments);
    }
  }
  return rms_norm(x, final_norm_, config_.rms_norm_eps);
}

at::Tensor Transformer::prefill(const at::Tensor& ids, KvCache& cache, int64_t first_slot) const {
  const int64_t B = ids.size(0), T = ids.size(1);
  const at::Tensor positions = at::arange(T, at::TensorOptions().dtype(at::kLong).device(device_));
  at::Tensor cos, sin;
  rotary_tables(positions, cos, sin);
  at::Tensor x = embed(ids);
  for (int64_t i = 0; i < config_.num_layers; ++i) {
    x = layer(i, x, cos, sin, [&](const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
      {
        profile::Phase phase("kv-cache");
        cache.keys(i).narrow(0, first_slot, B).narrow(2, 0, T).copy_(k);
        cache.values(i).narrow(0, first_slot, B).narrow(2, 0, T).copy_(v);
      }
      return causal_attention(q, k, v);
    });
  }
  return rms_norm(x, final_norm_, config_.rms_norm_eps);
}

at::Tensor Transformer::extend(const at::Tensor& ids, KvCache& cache, int64_t slot, int64_t start) const {
  const int64_t n = ids.size(1), keys = start + n;
  const auto long_options = at::TensorOptions().dtype(at::kLong).device(device_);
  at::Tensor cos, sin;
  rotary_tables(at::arange(start, keys, long_options), cos, sin);
  at::Tensor x = embed(ids);
  for (int64_t i = 0; i < config_.num_layers; ++i) {
    x = layer(i, x, cos, sin, [&](const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
      {
        profile::Phase phase("kv-cache");
        cache.keys(i).narrow(0, slot, 1).narrow(2, start, n).copy_(k);
        cache.values(i).narrow(0, slot, 1).narrow(2, start, n).copy_(v);
      }
      return causal_attention_after(q, cache.keys(i).narrow(0, slot, 1).narrow(2, 0, keys),
                                    cache.values(i).narrow(0, slot, 1).narrow(2, 0, keys), start);
    });
  }
  return rms_norm(x, final_norm_, config_.rms_norm_eps);
}

at::Tensor Transformer::extend_batch(const at::Tensor& ids, KvCache& cache, int64_t first_slot,
                                     const std::vector<int64_t>& starts) const {
  const int64_t B = ids.size(0), L = ids.size(1);
  const int64_t keys = *std::max_element(starts.begin(), starts.end()) + L;
  const auto long_options = at::TensorOptions().dtype(at::kLong).device(device_);
  at::Tensor positions;
  {
    profile::Phase phase("host-copy");
    positions = at::tensor(at::ArrayRef<int64_t>(starts), at::kLong).to(device_).view({B, 1}) +
                at::arange(L, long_options).view({1, L});  // [B, L]
  }
  at::Tensor cos, sin;
  rotary_tables(positions, cos, sin);  // [B, L, D]: a table per row
  at::Tensor slots, allowed;
  {
    profile::Phase phase("attention.mask");
    slots = at::arange(first_slot, first_slot + B, long_options).view({B, 1});
    allowed = (at::arange(keys, long_options).view({1, 1, keys}) <= positions.unsqueeze(-1)).unsqueeze(1);
  }
  at::Tensor x = embed(ids);
  using at::indexing::Slice;
  for (int64_t i = 0; i < config_.num_layers; ++i) {
    x = layer(i, x, cos, sin, [&](const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
      {
        // k, v [B, nkv, L, D] go to (slot first_slot + b, every head, position starts[b] + j).
        profile::Phase phase("kv-cache");
        cache.keys(i).index_put_({slots, Slice(), positions}, k.transpose(1, 2));
        cache.values(i).index_put_({slots, Slice(), positions}, v.transpose(1, 2));
      }
      return grouped_query_attention(q, cache.keys(i).narrow(0, first_slot, B).narrow(2, 0, keys),
                                     cache.values(i).narrow(0, first_slot, B).narrow(2, 0, keys), allowed);
    });
  }
  return rms_norm(x, final_norm_, config_.rms_norm_eps);
}

at::Tensor Transformer::decode(const at::Tensor& ids, const at::Tensor& positions_in, KvCache& cache,
                               int64_t keys) const {
  const int64_t B = ids.size(0);
  at::Tensor positions;
  {
    profile::Phase phase("host-copy");
    positions = positions_in.to(device_, at::kLong);
  }
  at::Tensor cos, sin;
  rotary_tables(positions.view({B, 1}), cos, sin);  // [B, 1, D]: a table per row (T = 1)
  const auto long_options = at::TensorOptions().dtype(at::kLong).device(device_);
  at::Tensor slots, allowed;
  {
    profile::Phase phase("attention.mask");
    slots = at::arange(B, long_options);
    allowed = (at::arange(keys, long_options).view({1, keys}) <= positions.view({B, 1})).view({B, 1, 1, keys});
  }
  at::Tensor x = embed(ids.view({B, 1}));
  using at::indexing::Slice;
  for (int64_t i = 0; i < config_.num_layers; ++i) {
    x = layer(i, x, cos, sin, [&](const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
      {
        // k, v [B, nkv, 1, D] go to (slot b, every head, position p_b).
        profile::Phase phase("kv-cache");
        cache.keys(i).index_put_({slots, Slice(), positions}, k.squeeze(2));
        cache.values(i).index_put_({slots, Slice(), positions}, v.squeeze(2));
      }
      return decode_attention(q, cache.keys(i).narrow(0, 0, B).narrow(2, 0, keys),
                                     cache.values(i).narrow(0, 0, B).narrow(2, 0, keys), allowed);
    });
  }
  return rms_norm(x, final_norm_, config_.rms_norm_eps).squeeze(1);
}

at::Tensor Transformer::embed(const at::Tensor& ids) const {
  profile::Phase phase("embedding");
  return at::embedding(embed_, ids.to(device_, at::kLong));
}

void init_random(Transformer& model, double std, uint64_t seed) {
  c10::NoGradGuard no_grad;
  at::Generator generator = at::make_generator<at::CPUGeneratorImpl>(seed);
  const auto& specs = model.specs();
  for (size_t i = 0; i < specs.size(); ++i) {
    const at::Tensor& p = model.parameters()[i];
    const std::string& name = specs[i].name;
    const bool is_norm = name.size() > 12 && name.compare(name.size() - 11, 11, "norm.weight") == 0;
    const bool is_bias = name.size() > 5 && name.compare(name.size() - 5, 5, ".bias") == 0;
    if (is_norm) {
      p.fill_(1.0);
    } else if (is_bias) {
      p.zero_();
    } else {
      at::Tensor values = at::empty(p.sizes(), at::kFloat);
      values.normal_(0.0, std, generator);
      p.copy_(values);
    }
  }
}

}  // namespace swerl
