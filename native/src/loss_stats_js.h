// A loss's monitoring stats as the JS object lib/native.ts's NativeLossStats describes.
#pragma once
#include <napi.h>

#include "policy_loss.h"

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

}  // namespace swerl::js
