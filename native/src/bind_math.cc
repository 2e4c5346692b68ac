// Bindings of the per-trajectory and per-token math: advantages, token weights, reward
// shaping and group filters. Cheap (O(N) or O(T)), so synchronous.
#include "bindings.h"

#include "advantages.h"
#include "napi_util.h"
#include "reward_shaping.h"
#include "swerl_error.h"
#include "token_weights.h"

namespace swerl::js {

namespace {

AdvantageEstimator estimator_of(const std::string& name) {
  if (name == "grpo") return AdvantageEstimator::Grpo;
  if (name == "drgrpo") return AdvantageEstimator::DrGrpo;
  if (name == "rloo") return AdvantageEstimator::Rloo;
  throw_invalid("estimator must be 'grpo', 'drgrpo' or 'rloo'");
}

Aggregation aggregation_of(const std::string& name) {
  if (name == "token-mean") return Aggregation::TokenMean;
  if (name == "seq-mean-token-mean") return Aggregation::SeqMeanTokenMean;
  if (name == "seq-mean-token-sum-norm") return Aggregation::SeqMeanTokenSumNorm;
  throw_invalid(
      "aggregation must be 'token-mean', 'seq-mean-token-mean' or 'seq-mean-token-sum-norm'");
}

void check_same_length(size_t a, size_t b, const char* what) {
  if (a != b) throw_invalid(std::string(what) + " must have the same length");
}

Napi::Value ComputeAdvantages(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    const Napi::Object args = object_arg(info, 0, "arguments");
    const auto rewards = float32_field(args, "rewards");
    const auto groups = int32_field(args, "groups");
    check_same_length(rewards.length, groups.length, "rewards and groups");
    return to_js(info.Env(), compute_advantages(rewards.data, groups.data, int64_t(rewards.length),
                                                estimator_of(string_field(args, "estimator"))));
  });
}

Napi::Value TokenWeights(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    const Napi::Object args = object_arg(info, 0, "arguments");
    const auto mask = uint8_field(args, "mask");
    const auto ids = int32_field(args, "sequenceIds");
    check_same_length(mask.length, ids.length, "mask and sequenceIds");
    TokenWeightOptions options;
    options.aggregation = aggregation_of(string_field(args, "aggregation"));
    options.max_length = number_field(args, "maxLength");
    options.global_sequences = number_field(args, "globalSequences");
    options.global_masked_tokens = number_field(args, "globalMaskedTokens");
    return to_js(info.Env(), token_weights(mask.data, ids.data, int64_t(mask.length),
                                           int32_t(number_field(args, "numSequences")), options));
  });
}

Napi::Value CompactFilter(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    const Napi::Object args = object_arg(info, 0, "arguments");
    const auto rewards = float32_field(args, "rewards");
    const auto reasons = uint8_field(args, "terminations");
    check_same_length(rewards.length, reasons.length, "rewards and terminations");
    CompactFilterResult r = compact_filter(rewards.data, reasons.data, int64_t(rewards.length));
    Napi::Object out = Napi::Object::New(info.Env());
    if (has_field(args, "mask")) {
      const auto mask = uint8_field(args, "mask");
      const auto ids = int32_field(args, "sequenceIds");
      check_same_length(mask.length, ids.length, "mask and sequenceIds");
      out.Set("mask", to_js(info.Env(), mask_filtered_sequences(mask.data, ids.data,
                                                                int64_t(mask.length), r.filtered)));
    }
    out.Set("rewards", to_js(info.Env(), r.rewards));
    out.Set("filtered", to_js(info.Env(), r.filtered));
    return out;
  });
}

Napi::Value TurnPenalty(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    const Napi::Object args = object_arg(info, 0, "arguments");
    const auto rewards = float32_field(args, "rewards");
    const auto turns = int32_field(args, "turns");
    check_same_length(rewards.length, turns.length, "rewards and turns");
    return to_js(info.Env(), turn_penalty(rewards.data, turns.data, int64_t(rewards.length),
                                          number_field(args, "threshold"),
                                          number_field(args, "maxTurns")));
  });
}

Napi::Value OverlongPenalty(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    const Napi::Object args = object_arg(info, 0, "arguments");
    const auto rewards = float32_field(args, "rewards");
    const auto lengths = int32_field(args, "lengths");
    check_same_length(rewards.length, lengths.length, "rewards and lengths");
    return to_js(info.Env(), overlong_penalty(rewards.data, lengths.data, int64_t(rewards.length),
                                              number_field(args, "maxLength"),
                                              number_field(args, "bufferLength")));
  });
}

Napi::Value KeepInformativeGroups(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    const Napi::Object args = object_arg(info, 0, "arguments");
    const auto rewards = float32_field(args, "rewards");
    const auto groups = int32_field(args, "groups");
    check_same_length(rewards.length, groups.length, "rewards and groups");
    return to_js(info.Env(),
                 keep_informative_groups(rewards.data, groups.data, int64_t(rewards.length)));
  });
}

Napi::Value KeepNonzeroAdvantages(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    const auto advantages = float32_field(object_arg(info, 0, "arguments"), "advantages");
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
