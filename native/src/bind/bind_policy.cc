// The policy as a JS object (PolicyHandle): construction, weights and optimizer state in and
// out, generation steps, scoring and training steps. Long work runs in PromiseWorkers that
// hold the policy by shared_ptr (so dispose() during a step is safe) and take its lock.
#include <c10/core/GradMode.h>
#include <c10/core/DeviceGuard.h>

#include <memory>

#include "bind/bindings.h"
#include "bind/loss_js.h"
#include "bind/napi_util.h"
#include "bind/promise_worker.h"
#include "core/swerl_error.h"
#include "model/policy.h"

namespace swerl::js {

namespace {

ModelConfig read_config(const Napi::Object& o) {
  ModelConfig c;
  c.vocab_size = int64_t(number_field(o, "vocabSize"));
  c.hidden_size = int64_t(number_field(o, "hiddenSize"));
  c.intermediate_size = int64_t(number_field(o, "intermediateSize"));
  c.num_layers = int64_t(number_field(o, "numLayers"));
  c.num_heads = int64_t(number_field(o, "numHeads"));
  c.num_kv_heads = int64_t(number_field(o, "numKvHeads"));
  c.head_dim = int64_t(number_field(o, "headDim"));
  c.rope_theta = number_field(o, "ropeTheta");
  c.rms_norm_eps = number_field(o, "rmsNormEps");
  c.tie_word_embeddings = bool_field(o, "tieWordEmbeddings");
  c.qk_norm = bool_field(o, "qkNorm");
  c.attention_bias = bool_field(o, "attentionBias");
  if (has_field(o, "ropeScaling")) {
    if (!o.Get("ropeScaling").IsObject()) throw_invalid("config.ropeScaling must be an object");
    const Napi::Object r = o.Get("ropeScaling").As<Napi::Object>();
    const std::string kind = string_field(r, "kind");
    if (kind == "yarn") c.rope_scaling.kind = RopeScaling::Kind::Yarn;
    else if (kind == "llama3") c.rope_scaling.kind = RopeScaling::Kind::Llama3;
    else if (kind != "none") throw_invalid("config.ropeScaling.kind must be 'none', 'yarn' or 'llama3'");
    if (c.rope_scaling.kind != RopeScaling::Kind::None) {
      c.rope_scaling.factor = number_field(r, "factor");
      c.rope_scaling.original_max_positions = number_field(r, "originalMaxPositions");
      c.rope_scaling.attention_factor = number_field(r, "attentionFactor");
      c.rope_scaling.beta_fast = number_field(r, "betaFast");
      c.rope_scaling.beta_slow = number_field(r, "betaSlow");
      c.rope_scaling.truncate = bool_field(r, "truncate");
      c.rope_scaling.low_freq_factor = number_field(r, "lowFreqFactor");
      c.rope_scaling.high_freq_factor = number_field(r, "highFreqFactor");
    }
  }
  check_model_config(c);
  return c;
}

at::ScalarType dtype_of(const std::string& name, const char* field) {
  if (name == "F32" || name == "float32") return at::kFloat;
  if (name == "BF16" || name == "bfloat16") return at::kBFloat16;
  if (name == "F16" || name == "float16") return at::kHalf;
  throw_invalid(std::string(field) + " must be float32, bfloat16 or float16 (F32, BF16, F16)");
}

StateKind state_kind_of(const std::string& kind) {
  if (kind == "parameter") return StateKind::Parameter;
  if (kind == "exp_avg") return StateKind::ExpAvg;
  if (kind == "exp_avg_sq") return StateKind::ExpAvgSq;
  throw_invalid("kind must be 'parameter', 'exp_avg' or 'exp_avg_sq'");
}

// The (kind, index, dtype) that setState and getState start with.
struct StateSlot {
  StateKind kind;
  int64_t index;
  at::ScalarType dtype;
};

StateSlot state_slot(const Napi::CallbackInfo& info) {
  return StateSlot{state_kind_of(info[0].As<Napi::String>().Utf8Value()),
                   info[1].As<Napi::Number>().Int64Value(),
                   dtype_of(info[2].As<Napi::String>().Utf8Value(), "dtype")};
}

void check_parameter_index(int64_t index, const Policy& policy) {
  if (index < 0 || index >= int64_t(policy.model().specs().size())) throw_invalid("parameter index out of range");
}

Napi::Array specs_to_js(Napi::Env env, const std::vector<ParameterSpec>& specs) {
  Napi::Array out = Napi::Array::New(env, specs.size());
  for (size_t i = 0; i < specs.size(); ++i) {
    Napi::Object spec = Napi::Object::New(env);
    spec.Set("name", specs[i].name);
    Napi::Array shape = Napi::Array::New(env, specs[i].shape.size());
    for (size_t d = 0; d < specs[i].shape.size(); ++d) shape.Set(uint32_t(d), double(specs[i].shape[d]));
    spec.Set("shape", shape);
    out.Set(uint32_t(i), spec);
  }
  return out;
}

PackedSequences read_sequences(const Napi::Object& o) {
  PackedSequences seqs;
  const auto tokens = int32_field(o, "tokens");
  const auto offsets = int32_field(o, "offsets");
  seqs.tokens.assign(tokens.data, tokens.data + tokens.length);
  seqs.offsets.assign(offsets.data, offsets.data + offsets.length);
  if (seqs.offsets.size() < 1 || seqs.offsets.front() != 0 ||
      seqs.offsets.back() != int64_t(seqs.tokens.size()))
    throw_invalid("offsets must start at 0 and end at tokens.length");
  for (size_t i = 1; i < seqs.offsets.size(); ++i)
    if (seqs.offsets[i] < seqs.offsets[i - 1]) throw_invalid("offsets must not decrease");
  return seqs;
}

std::vector<float> read_floats(const Napi::Object& o, const char* field, size_t expected) {
  const auto view = float32_field(o, field);
  if (view.length != expected)
    throw_invalid(std::string(field) + " must have " + std::to_string(expected) + " entries (one per token)");
  return std::vector<float>(view.data, view.data + view.length);
}

// Everything a worker needs of its policy: the object (kept alive) and its device.
struct PolicyRef {
  std::shared_ptr<Policy> policy;
  at::Device device = at::kCPU;
};

// Runs body on the worker thread with the policy's lock and device set.
template <typename Body>
void locked(PolicyRef& ref, Body&& body) {
  std::lock_guard<std::mutex> lock(ref.policy->mutex());
  c10::OptionalDeviceGuard device_guard;
  if (!ref.device.is_cpu()) device_guard.reset_device(ref.device);
  body(*ref.policy);
}

class PolicyHandle : public Napi::ObjectWrap<PolicyHandle> {
 public:
  static Napi::Function define(Napi::Env env) {
    return DefineClass(env, "PolicyHandle",
                       {InstanceMethod("parameterSpecs", &PolicyHandle::ParameterSpecs),
                        InstanceMethod("initRandom", &PolicyHandle::InitRandom),
                        InstanceMethod("setState", &PolicyHandle::SetState),
                        InstanceMethod("getState", &PolicyHandle::GetState),
                        InstanceMethod("hasOptimizerState", &PolicyHandle::HasOptimizerState),
                        InstanceMethod("optimizerStep", &PolicyHandle::OptimizerStep),
                        InstanceMethod("setOptimizerStep", &PolicyHandle::SetOptimizerStep),
                        InstanceMethod("generateStep", &PolicyHandle::GenerateStep),
                        InstanceMethod("logprobs", &PolicyHandle::Logprobs),
                        InstanceMethod("trainStep", &PolicyHandle::TrainStep),
                        InstanceMethod("joinGroup", &PolicyHandle::JoinGroup),
                        InstanceMethod("allReduce", &PolicyHandle::AllReduce),
                        InstanceMethod("groupInfo", &PolicyHandle::GroupInfo),
                        InstanceMethod("weightsFingerprint", &PolicyHandle::WeightsFingerprint),
                        InstanceMethod("dispose", &PolicyHandle::Dispose)});
  }

  // new PolicyHandle(config, {device, computeDtype, prefixCacheBytes?, prefillChunkTokens?, decodeGraphs?})
  explicit PolicyHandle(const Napi::CallbackInfo& info) : Napi::ObjectWrap<PolicyHandle>(info) {
    guard(info.Env(), [&]() -> Napi::Value {
      const ModelConfig config = read_config(object_arg(info, 0, "config"));
      const Napi::Object o = object_arg(info, 1, "options");
      PolicyOptions options;
      options.device = at::Device(string_field(o, "device"));
      options.compute_dtype = dtype_of(string_field(o, "computeDtype"), "computeDtype");
      if (has_field(o, "prefixCacheBytes")) options.prefix_cache_bytes = int64_t(number_field(o, "prefixCacheBytes"));
      if (options.prefix_cache_bytes < 0) throw_invalid("options.prefixCacheBytes must be >= 0");
      if (has_field(o, "prefillChunkTokens")) options.prefill_chunk_tokens = int64_t(number_field(o, "prefillChunkTokens"));
      if (options.prefill_chunk_tokens < 1) throw_invalid("options.prefillChunkTokens must be >= 1");
      if (has_field(o, "decodeGraphs")) options.decode_graphs = bool_field(o, "decodeGraphs");
      c10::NoGradGuard no_grad;
      ref_.policy = std::make_shared<Policy>(config, options);
      ref_.device = options.device;
      return info.Env().Undefined();
    });
  }

 private:
  Policy& policy(Napi::Env env) {
    if (!ref_.policy) throw make_error(env, "ERR_SWERL_DISPOSED", "this policy was disposed; load a new one");
    return *ref_.policy;
  }

  Napi::Value ParameterSpecs(const Napi::CallbackInfo& info) {
    return guard(info.Env(), [&]() -> Napi::Value {
      return specs_to_js(info.Env(), policy(info.Env()).model().specs());
    });
  }

  Napi::Value InitRandom(const Napi::CallbackInfo& info) {
    return guard(info.Env(), [&]() -> Napi::Value {
      const Napi::Object o = object_arg(info, 0, "init");
      Policy& p = policy(info.Env());
      std::lock_guard<std::mutex> lock(p.mutex());
      p.init_random(number_field(o, "std"), uint64_t(number_field(o, "seed")));
      return info.Env().Undefined();
    });
  }

  // setState(kind, index, dtype, bytes: Uint8Array): little-endian values of the spec's shape.
  Napi::Value SetState(const Napi::CallbackInfo& info) {
    return guard(info.Env(), [&]() -> Napi::Value {
      Policy& p = policy(info.Env());
      const StateSlot slot = state_slot(info);
      if (!info[3].IsTypedArray()) throw_invalid("bytes must be a Uint8Array");
      auto bytes = info[3].As<Napi::Uint8Array>();
      check_parameter_index(slot.index, p);
      const ParameterSpec& spec = p.model().specs()[slot.index];
      const at::Tensor values = at::empty(spec.shape, at::TensorOptions().dtype(slot.dtype));
      if (values.nbytes() != bytes.ByteLength())
        throw Error("ERR_SWERL_CHECKPOINT", spec.name + " has " + std::to_string(bytes.ByteLength()) +
                                                " bytes; its shape and dtype need " + std::to_string(values.nbytes()));
      std::memcpy(values.data_ptr(), bytes.Data(), values.nbytes());
      std::lock_guard<std::mutex> lock(p.mutex());
      p.set_state(slot.kind, slot.index, values);
      return info.Env().Undefined();
    });
  }

  // getState(kind, index, dtype) -> Uint8Array of little-endian values.
  Napi::Value GetState(const Napi::CallbackInfo& info) {
    return guard(info.Env(), [&]() -> Napi::Value {
      Policy& p = policy(info.Env());
      const StateSlot slot = state_slot(info);
      check_parameter_index(slot.index, p);
      at::Tensor values;
      {
        std::lock_guard<std::mutex> lock(p.mutex());
        values = p.get_state(slot.kind, slot.index).to(slot.dtype).contiguous();
      }
      Napi::Uint8Array out = Napi::Uint8Array::New(info.Env(), values.nbytes());
      std::memcpy(out.Data(), values.data_ptr(), values.nbytes());
      return out;
    });
  }

  Napi::Value HasOptimizerState(const Napi::CallbackInfo& info) {
    return guard(info.Env(), [&]() -> Napi::Value {
      return Napi::Boolean::New(info.Env(), policy(info.Env()).has_optimizer_state());
    });
  }

  Napi::Value OptimizerStep(const Napi::CallbackInfo& info) {
    return guard(info.Env(), [&]() -> Napi::Value {
      return Napi::Number::New(info.Env(), double(policy(info.Env()).optimizer_step()));
    });
  }

  Napi::Value SetOptimizerStep(const Napi::CallbackInfo& info) {
    return guard(info.Env(), [&]() -> Napi::Value {
      Policy& p = policy(info.Env());
      std::lock_guard<std::mutex> lock(p.mutex());
      p.set_optimizer_step(info[0].As<Napi::Number>().Int64Value());
      return info.Env().Undefined();
    });
  }

  // generateStep({release: Float64Array, admit: [{id, prompt: Int32Array, temperature, topK,
  // topP, seed}]}) -> Promise<{ids: Float64Array, tokens: Int32Array, logprobs: Float32Array}>
  Napi::Value GenerateStep(const Napi::CallbackInfo& info) {
    return guard(info.Env(), [&]() -> Napi::Value {
      policy(info.Env());
      struct Job {
        std::vector<int64_t> release;
        std::vector<GenerationRequest> admit;
        std::vector<GeneratedToken> out;
        PrefixCacheStats prefixes;
      };
      auto job = std::make_unique<Job>();
      const Napi::Object o = object_arg(info, 0, "step");
      const Napi::Value release = o.Get("release");
      if (!release.IsTypedArray() || release.As<Napi::TypedArray>().TypedArrayType() != napi_float64_array)
        throw_invalid("release must be a Float64Array");
      auto release_ids = release.As<Napi::Float64Array>();
      for (size_t i = 0; i < release_ids.ElementLength(); ++i) job->release.push_back(int64_t(release_ids[i]));
      const Napi::Value admit_value = o.Get("admit");
      if (!admit_value.IsArray()) throw_invalid("admit must be an array");
      const Napi::Array admit = admit_value.As<Napi::Array>();
      for (uint32_t i = 0; i < admit.Length(); ++i) {
        const Napi::Object r = admit.Get(i).As<Napi::Object>();
        GenerationRequest request;
        request.id = int64_t(number_field(r, "id"));
        const auto prompt = int32_field(r, "prompt");
        request.prompt.assign(prompt.data, prompt.data + prompt.length);
        request.sampling.temperature = number_field(r, "temperature");
        request.sampling.top_k = int64_t(number_field(r, "topK"));
        request.sampling.top_p = number_field(r, "topP");
        request.sampling.seed = uint64_t(number_field(r, "seed"));
        job->admit.push_back(std::move(request));
      }
      return start_locked(
          info.Env(), std::move(job), /*grad_mode=*/false,
          [](Policy& p, Job& j) {
            j.out = p.generator().step(j.release, j.admit);
            j.prefixes = p.generator().prefixes().stats();
          },
          [](Napi::Env env, Job& j) -> Napi::Value {
            const size_t n = j.out.size();
            Napi::Float64Array ids = Napi::Float64Array::New(env, n);
            Napi::Int32Array tokens = Napi::Int32Array::New(env, n);
            Napi::Float32Array logprobs = Napi::Float32Array::New(env, n);
            for (size_t i = 0; i < n; ++i) {
              ids[i] = double(j.out[i].id);
              tokens[i] = j.out[i].token;
              logprobs[i] = j.out[i].logprob;
            }
            Napi::Object out = Napi::Object::New(env);
            out.Set("ids", ids);
            out.Set("tokens", tokens);
            out.Set("logprobs", logprobs);
            Napi::Object prefixes = Napi::Object::New(env);
            const PrefixCacheStats& s = j.prefixes;
            prefixes.Set("lookups", double(s.lookups));
            prefixes.Set("hits", double(s.hits));
            prefixes.Set("reusedTokens", double(s.reused_tokens));
            prefixes.Set("prefilledTokens", double(s.prefilled_tokens));
            prefixes.Set("evictions", double(s.evictions));
            prefixes.Set("entries", double(s.entries));
            prefixes.Set("bytes", double(s.bytes));
            out.Set("prefixCache", prefixes);
            return out;
          });
    });
  }

  // logprobs({tokens, offsets, temperature, microBatchTokens, packSequences}) -> Promise<Float32Array>
  Napi::Value Logprobs(const Napi::CallbackInfo& info) {
    return guard(info.Env(), [&]() -> Napi::Value {
      policy(info.Env());
      struct Job {
        PackedSequences seqs;
        double temperature = 1;
        int64_t micro_batch_tokens = 0;
        bool pack = true;
        std::vector<float> out;
      };
      auto job = std::make_unique<Job>();
      const Napi::Object o = object_arg(info, 0, "sequences");
      job->seqs = read_sequences(o);
      job->temperature = number_field(o, "temperature");
      job->micro_batch_tokens = int64_t(number_field(o, "microBatchTokens"));
      job->pack = bool_field(o, "packSequences");
      return start_locked(
          info.Env(), std::move(job), /*grad_mode=*/false,
          [](Policy& p, Job& j) { j.out = p.logprobs(j.seqs, j.temperature, j.micro_batch_tokens, j.pack); },
          [](Napi::Env env, Job& j) -> Napi::Value { return to_js(env, j.out); });
    });
  }

  // trainStep(batch {tokens, offsets, weights, oldLogprobs, advantages, refLogprobs?},
  //           options {loss fields..., microBatchTokens, packSequences, activationCheckpointing, lr, beta1,
  //                    beta2, eps, weightDecay, maxGradNorm, applyUpdate, returnGradients,
  //                    lossPath})
  Napi::Value TrainStep(const Napi::CallbackInfo& info) {
    return guard(info.Env(), [&]() -> Napi::Value {
      policy(info.Env());
      struct Job {
        TrainBatch batch;
        TrainOptions options;
        TrainResult result;
        std::vector<std::string> names;
      };
      auto job = std::make_unique<Job>();
      const Napi::Object b = object_arg(info, 0, "batch");
      const Napi::Object o = object_arg(info, 1, "options");
      TrainOptions& opt = job->options;
      read_loss_options(o, opt.loss, opt.chunks);
      opt.micro_batch_tokens = int64_t(number_field(o, "microBatchTokens"));
      opt.pack = bool_field(o, "packSequences");
      opt.activation_checkpointing = bool_field(o, "activationCheckpointing");
      opt.adamw.lr = number_field(o, "lr");
      opt.adamw.beta1 = number_field(o, "beta1");
      opt.adamw.beta2 = number_field(o, "beta2");
      opt.adamw.eps = number_field(o, "eps");
      opt.adamw.weight_decay = number_field(o, "weightDecay");
      opt.max_grad_norm = number_field(o, "maxGradNorm");
      opt.apply_update = bool_field(o, "applyUpdate");
      opt.return_gradients = bool_field(o, "returnGradients");
      opt.path = string_field(o, "lossPath") == "autograd" ? LossPath::Autograd : LossPath::Fused;

      job->batch.sequences = read_sequences(b);
      const size_t n = job->batch.sequences.tokens.size();
      job->batch.weights = read_floats(b, "weights", n);
      job->batch.old_logprobs = read_floats(b, "oldLogprobs", n);
      job->batch.advantages = read_floats(b, "advantages", n);
      if (opt.loss.has_kl()) job->batch.ref_logprobs = read_floats(b, "refLogprobs", n);
      for (const ParameterSpec& s : policy(info.Env()).model().specs()) job->names.push_back(s.name);

      return start_locked(
          info.Env(), std::move(job), /*grad_mode=*/true,
          [](Policy& p, Job& j) { j.result = p.train_step(j.batch, j.options); },
          [](Napi::Env env, Job& j) -> Napi::Value {
            const TrainResult& r = j.result;
            Napi::Object out = Napi::Object::New(env);
            out.Set("loss", r.stats.loss);
            out.Set("gradNorm", r.grad_norm);
            out.Set("stats", stats_to_js(env, r.stats));
            out.Set("tokens", double(r.tokens));
            out.Set("microBatches", double(r.micro_batches));
            out.Set("seconds", r.seconds);
            if (!r.gradients.empty()) {
              Napi::Object grads = Napi::Object::New(env);
              for (size_t i = 0; i < r.gradients.size(); ++i) grads.Set(j.names[i], tensor_to_js(env, r.gradients[i]));
              out.Set("gradients", grads);
            }
            return out;
          });
    });
  }

  // joinGroup({backend, masterAddr, masterPort, rank, worldSize, timeoutMs, bucketBytes}) -> Promise<void>:
  // the rendezvous (blocks until every rank joins), then rank 0's weights to every rank.
  Napi::Value JoinGroup(const Napi::CallbackInfo& info) {
    return guard(info.Env(), [&]() -> Napi::Value {
      policy(info.Env());
      const Napi::Object o = object_arg(info, 0, "group");
      auto job = std::make_unique<GroupOptions>();
      job->master_addr = string_field(o, "masterAddr");
      job->port = int(number_field(o, "masterPort"));
      job->rank = int(number_field(o, "rank"));
      job->world_size = int(number_field(o, "worldSize"));
      job->timeout = std::chrono::milliseconds(int64_t(number_field(o, "timeoutMs")));
      job->bucket_bytes = int64_t(number_field(o, "bucketBytes"));
      const std::string backend = string_field(o, "backend");
      if (backend != "gloo" && backend != "nccl") throw_invalid("group.backend must be 'gloo' or 'nccl'");
      job->backend = backend == "nccl" ? GroupBackend::Nccl : GroupBackend::Gloo;
      job->device = policy(info.Env()).device();
      if (policy(info.Env()).group()) throw_invalid("this policy is already in a process group");
      return start_locked(
          info.Env(), std::move(job), /*grad_mode=*/false,
          [](Policy& p, GroupOptions& options) { p.join_group(std::make_shared<ProcessGroup>(options)); },
          [](Napi::Env env, GroupOptions&) -> Napi::Value { return env.Undefined(); });
    });
  }

  // allReduce(values: Float64Array) -> Promise<Float64Array>: the sums over the group's ranks.
  Napi::Value AllReduce(const Napi::CallbackInfo& info) {
    return guard(info.Env(), [&]() -> Napi::Value {
      policy(info.Env());
      auto job = std::make_unique<std::vector<double>>(float64_arg(info, 0, "values"));
      return start_locked(
          info.Env(), std::move(job), /*grad_mode=*/false,
          [](Policy& p, std::vector<double>& v) {
            if (!p.group()) throw Error("ERR_SWERL_DIST", "this policy is in no process group: call joinGroup first");
            p.group()->all_reduce_sum(v);
          },
          [](Napi::Env env, std::vector<double>& v) -> Napi::Value { return to_js(env, v); });
    });
  }

  // weightsFingerprint() -> Float64Array: each master tensor's sum and sum of squares.
  Napi::Value WeightsFingerprint(const Napi::CallbackInfo& info) {
    return guard(info.Env(), [&]() -> Napi::Value {
      Policy& p = policy(info.Env());
      std::vector<double> values;
      {
        std::lock_guard<std::mutex> lock(p.mutex());
        values = p.weights_fingerprint();
      }
      return to_js(info.Env(), values);
    });
  }

  // groupInfo() -> {rank, worldSize} | null
  Napi::Value GroupInfo(const Napi::CallbackInfo& info) {
    return guard(info.Env(), [&]() -> Napi::Value {
      const ProcessGroup* g = policy(info.Env()).group();
      if (!g) return info.Env().Null();
      Napi::Object out = Napi::Object::New(info.Env());
      out.Set("rank", g->rank());
      out.Set("worldSize", g->world_size());
      return out;
    });
  }

  // Queues run(policy, job) on a worker thread with the policy's lock and device held; the
  // worker holds the policy itself, so dispose() meanwhile is safe. resolve(env, job) builds
  // the promise's value.
  template <typename Job, typename Run, typename Resolve>
  Napi::Value start_locked(Napi::Env env, std::unique_ptr<Job> job, bool grad_mode, Run run,
                           Resolve resolve) {
    struct Locked {
      PolicyRef ref;
      std::unique_ptr<Job> job;
    };
    return PromiseWorker<Locked>::start(
        env, std::make_unique<Locked>(Locked{ref_, std::move(job)}), {}, grad_mode,
        [run](Locked& l) { locked(l.ref, [&](Policy& p) { run(p, *l.job); }); },
        [resolve](Napi::Env env, Locked& l) -> Napi::Value { return resolve(env, *l.job); });
  }

  Napi::Value Dispose(const Napi::CallbackInfo& info) {
    ref_.policy.reset();  // a step in flight keeps its own reference until it finishes
    return info.Env().Undefined();
  }

  PolicyRef ref_;
};

Napi::Value ParameterSpecsOf(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    return specs_to_js(info.Env(), parameter_specs(read_config(object_arg(info, 0, "config"))));
  });
}

}  // namespace

void register_policy(Napi::Env env, Napi::Object exports) {
  exports.Set("PolicyHandle", PolicyHandle::define(env));
  exports.Set("parameterSpecs", Napi::Function::New(env, ParameterSpecsOf));
}

}  // namespace swerl::js
