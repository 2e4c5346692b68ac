// N-API plumbing shared by every binding: the JS error class, exception conversion,
// typed-array access and zero-copy tensor results.
#pragma once
#include <ATen/ATen.h>
#include <napi.h>

#include <exception>
#include <string>
#include <vector>

namespace swerl::js {

// The JS class (lib/errors.ts SwerlError) that native errors are made of: new Cls(code, message).
void set_error_class(Napi::Env env, Napi::Function error_class);
Napi::Error make_error(Napi::Env env, const std::string& code, const std::string& message);

struct ErrorInfo {
  std::string code, message;
};
// What a caught exception says, as a SwerlError code: swerl::Error keeps its code,
// c10::Error is ERR_SWERL_TORCH, bad_alloc ERR_SWERL_OUT_OF_MEMORY, the rest ERR_SWERL_NATIVE.
ErrorInfo describe_exception(std::exception_ptr error);

// Runs body at an N-API entry; every C++ exception leaves as a JS SwerlError.
template <typename Body>
Napi::Value guard(Napi::Env env, Body&& body) {
  try {
    return body();
  } catch (const Napi::Error&) {
    throw;
  } catch (...) {
    const ErrorInfo info = describe_exception(std::current_exception());
    throw make_error(env, info.code, info.message);
  }
}

// Fields of option objects that JS has validated and defaulted; a missing or mistyped field
// still throws (ERR_SWERL_INVALID_ARG naming it) rather than crashing.
Napi::Object object_arg(const Napi::CallbackInfo& info, size_t index, const char* name);
bool has_field(const Napi::Object& object, const char* field);
double number_field(const Napi::Object& object, const char* field);
bool bool_field(const Napi::Object& object, const char* field);
std::string string_field(const Napi::Object& object, const char* field);

template <typename T>
struct ArrayView {
  T* data;
  size_t length;
  Napi::Object owner;  // keep it referenced while data is used off the main thread
};
ArrayView<float> float32_field(const Napi::Object& object, const char* field);
ArrayView<int32_t> int32_field(const Napi::Object& object, const char* field);
ArrayView<uint8_t> uint8_field(const Napi::Object& object, const char* field);

Napi::Float32Array to_js(Napi::Env env, const std::vector<float>& values);
Napi::Uint8Array to_js(Napi::Env env, const std::vector<uint8_t>& values);
Napi::Float64Array to_js(Napi::Env env, const std::vector<double>& values);
// A Float64Array argument, copied (a job may outlive the array's owner).
std::vector<double> float64_arg(const Napi::CallbackInfo& info, size_t index, const char* name);
// Hands a contiguous float32 CPU tensor to JS without copying; the tensor lives as long as
// the returned array's buffer.
Napi::Float32Array tensor_to_js(Napi::Env env, const at::Tensor& tensor);

}  // namespace swerl::js
