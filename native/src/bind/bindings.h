// Each bind_*.cc adds its functions to the module's exports.
#pragma once
#include <napi.h>

namespace swerl::js {
void register_math(Napi::Env env, Napi::Object exports);
void register_loss(Napi::Env env, Napi::Object exports);
void register_bench(Napi::Env env, Napi::Object exports);
void register_policy(Napi::Env env, Napi::Object exports);
void register_group(Napi::Env env, Napi::Object exports);
}  // namespace swerl::js
