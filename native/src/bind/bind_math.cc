// Bindings of the per-trajectory and per-token math: advantages, token weights, reward
// shaping and group filters. Cheap (O(N) or O(T)), so synchronous.
#include "bind/bindings.h"
#include "bind/napi_util.h"
#include "core/swerl_error.h"
#include "math/advantages.h"
#include "math/reward_shaping.h"
#include "math/token_weights.h"

namespace swerl::js {

namespace {

AdvantageEstimator estimator_of(const std::string& name) {
  if (name == "grpo") return AdvantageEstimator::Grpo;
  if (name == "drgrpo") return AdvantageEstimator::DrGrpo;
  if (name == "rloo") return AdvantageEstimator::Rloo;
  if (name == "maxrl") return AdvantageEstimator::MaxRl;
  throw_invalid("estimator must be 'grpo', 'drgrpo', 'rloo' or 'maxrl'");
}

Aggregation aggregation_of(const std::string& name) {
  if (name == "token-mean") return Aggregation::TokenMean;
  if (name == "seq-mean-token-mean") return Aggregation::SeqMeanTokenMean;
  if (name == "seq-mean-token-sum-norm") return Aggregation::SeqMeanTokenSumNorm;
  throw_invalid(
      "aggregation must be 'token-mean', 'seq-mean-token-mean' or 'seq-mean-token-sum-norm'");
}

void check_same_length(size_t a, size_t b, const std::string& what) {
  if (a != b) throw_invalid(what + " must have the same length");
}

// Every math binding: its one arguments object in, a SwerlError for any failure.
template <typename Body>
Napi::Value with_arguments(const Napi::CallbackInfo& info, Body&& body) {
  return guard(info.Env(), [&]() -> Napi::Value { return body(object_arg(info, 0, "arguments")); });
}

// The per-trajectory functions' arguments: rewards [n] and an int32 array beside them.
struct Trajectories {
  const Napi::Object& args;
  const float* rewards;
  const int32_t* per_trajectory;  // groups, turns or lengths
  int64_t n;
};

// Runs body over rewards and the int32 array `field`, their lengths checked; its result is
// handed to JS.
template <typename Body>
Napi::Value over_trajectories(const Napi::CallbackInfo& info, const char* field, Body&& body) {
  return with_arguments(info, [&](const Napi::Object& args) -> Napi::Value {
    const auto rewards = float32_field(args, "rewards");
    const auto other = int32_field(args, field);
    check_same_length(rewards.length, other.length, "rewards and " + std::string(field));
    return to_js(info.Env(), body(Trajectories{args, rewards.data, other.data, int64_t(rewards.length)}));
  });
}

// The per-token mask and the sequence each token belongs to, of one length.
struct MaskedTokens {
  ArrayView<uint8_t> mask;
  ArrayView<int32_t> ids;
};

MaskedTokens masked_tokens(const Napi::Object& args) {
  MaskedTokens t{uint8_field(args, "mask"), int32_field(args, "sequenceIds")};
  check_same_length(t.mask.length, t.ids.length, "mask and sequenceIds");
  return t;
}

Napi::Value ComputeAdvantages(const Napi::CallbackInfo& info) {
  return over_trajectories(info, "groups", [](const Trajectories& t) {
    return compute_advantages(t.rewards, t.per_trajectory, t.n, estimator_of(string_field(t.args, "estimator")));
  });
}

Napi::Value TokenWeights(const Napi::CallbackInfo& info) {
  return with_arguments(info, [&](const Napi::Object& args) -> Napi::Value {
    const MaskedTokens tokens = masked_tokens(args);
    TokenWeightOptions options;
    options.aggregation = aggregation_of(string_field(args, "aggregation"));
    options.max_length = number_field(args, "maxLength");
    options.global_sequences = number_field(args, "globalSequences");
    options.global_masked_tokens = number_field(args, "globalMaskedTokens");
    return to_js(info.Env(), token_weights(tokens.mask.data, tokens.ids.data, int64_t(tokens.mask.length),
                                           int32_t(number_field(args, "numSequences")), options));
  });
}

Napi::Value CompactFilter(const Napi::CallbackInfo& info) {
  return with_arguments(info, [&](const Napi::Object& args) -> Napi::Value {
    const auto rewards = float32_field(args, "rewards");
    const auto reasons = uint8_field(args, "terminations");
    check_same_length(rewards.length, reasons.length, "rewards and terminations");
    CompactFilterResult r = compact_filter(rewards.data, reasons.data, int64_t(rewards.length));
    Napi::Object out = Napi::Object::New(info.Env());
    if (has_field(args, "mask")) {
      const MaskedTokens tokens = masked_tokens(args);
      out.Set("mask", to_js(info.Env(), mask_filtered_sequences(tokens.mask.data, tokens.ids.data,
                                                                int64_t(tokens.mask.length), r.filtered)));
    }
    out.Set("rewards", to_js(info.Env(), r.rewards));
    out.Set("filtered", to_js(info.Env(), r.filtered));
    return out;
  });
}

Napi::Value TurnPenalty(const Napi::CallbackInfo& info) {
  return over_trajectories(info, "turns", [](const Trajectories& t) {
    return turn_penalty(t.rewards, t.per_trajectory, t.n, number_field(t.args, "threshold"),
                        number_field(t.args, "maxTurns"));
  });
}

Napi::Value OverlongPenalty(const Napi::CallbackInfo& info) {
  return over_trajectories(info, "lengths", [](const Trajectories& t) {
    return overlong_penalty(t.rewards, t.per_trajectory, t.n, number_field(t.args, "maxLength"),
                            number_field(t.args, "bufferLength"));
  });
}

Napi::Value KeepInformativeGroups(const Napi::CallbackInfo& info) {
  return over_trajectories(info, "groups", [](const Trajectories& t) {
    return keep_informative_groups(t.rewards, t.per_trajectory, t.n);
  });
}

Napi::Value KeepNonzeroAdvantages(const Napi::CallbackInfo& info) {
  return with_arguments(info, [&](const Napi::Object& args) -> Napi::Value {
    const auto advantages = float32_field(args, "advantages");
    return to_js(info.Env(), keep_nonzero_advantages(advantages.data, int64_t(advantages.length)));
  });
}

}  // namespace

void register_math(Napi::Env env, Napi::Object exports) {
  exports.Set("computeAdvantages", Napi::Function::New(env, ComputeAdvantages));
  exports.Set("tokenWeights", Napi::Function::New(env, TokenWeights));
  exports.Set("compactFilter", Napi::Function::New(env, CompactFilter));
  exports.Set("turnPenalty", Napi::Function::New(env, TurnPenalty));
  exports.Set("overlongPenalty", Napi::Function::New(env, OverlongPenalty));
  exports.Set("keepInformativeGroups", Napi::Function::New(env, KeepInformativeGroups));
  exports.Set("keepNonzeroAdvantages", Napi::Function::New(env, KeepNonzeroAdvantages));
}

}  // namespace swerl::js
