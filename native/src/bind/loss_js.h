// The loss's options and stats as they cross the boundary (lib/native.ts: NativeLossOptions,
// NativeLossStats), shared by every binding that runs the loss.
#pragma once
#include <napi.h>

#include <cmath>
#include <string>

#include "bind/napi_util.h"
#include "core/swerl_error.h"
#include "loss/loss.h"

namespace swerl::js {

inline Napi::Object stats_to_js(Napi::Env env, const LossStats& s) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("approxKl", s.approx_kl);
  o.Set("clipFracLow", s.clip_frac_low);
  o.Set("clipFracHigh", s.clip_frac_high);
  o.Set("ratioMean", s.ratio_mean);
  o.Set("ratioMax", s.ratio_max);
  o.Set("entropyMean", s.entropy_mean);
  o.Set("maskedTokens", double(s.masked_tokens));
  return o;
}

inline KlKind kl_kind_of(const std::string& kind) {
  if (kind == "k1") return KlKind::K1;
  if (kind == "k2") return KlKind::K2;
  if (kind == "k3") return KlKind::K3;
  throw_invalid("kl.kind must be 'k1', 'k2' or 'k3'");
}

// A tile size: an integer in [1, 2^31) (as int64, NaN or 1e300 would be undefined behaviour).
inline int64_t chunk_field(const Napi::Object& o, const char* field) {
  const double x = number_field(o, field);
  if (!(x >= 1 && x <= 2147483647.0 && x == std::floor(x)))
    throw_invalid(std::string(field) + " must be an integer in [1, 2^31)");
  return int64_t(x);
}

// The options object JS sends: flat and fully defaulted (lib/math/policy-loss.ts). Their bounds
// are the loss's to check, at its entry (loss/loss.cc).
inline void read_loss_options(const Napi::Object& o, LossOptions& options, FusedChunks& chunks) {
  const std::string objective = string_field(o, "objective");
  if (objective != "policy-gradient" && objective != "nll") throw_invalid("objective must be 'policy-gradient' or 'nll'");
  options.objective = objective == "nll" ? Objective::Nll : Objective::PolicyGradient;
  options.clip_low = number_field(o, "clipLow");
  options.clip_high = number_field(o, "clipHigh");
  options.dual_clip = number_field(o, "dualClip");
  options.temperature = number_field(o, "temperature");
  options.entropy_coef = number_field(o, "entropyCoef");
  options.kl_coef = number_field(o, "klCoef");
  options.kl_kind = kl_kind_of(string_field(o, "klKind"));
  chunks.tokens = chunk_field(o, "chunkTokens");
  chunks.vocab = chunk_field(o, "chunkVocab");
  chunks.deterministic = bool_field(o, "deterministic");
}

}  // namespace swerl::js
