#include "bind/napi_util.h"

#include <c10/util/Exception.h>

#include <new>

#include "core/swerl_error.h"

namespace swerl::js {

namespace {
struct AddonData {
  Napi::FunctionReference error_class;
};

AddonData* addon_data(Napi::Env env) {
  AddonData* data = env.GetInstanceData<AddonData>();
  if (!data) {
    data = new AddonData();
    env.SetInstanceData(data);
  }
  return data;
}

[[noreturn]] void throw_field(const char* field, const std::string& what) {
  throw Error("ERR_SWERL_INVALID_ARG", std::string(field) + " " + what);
}

Napi::Value field(const Napi::Object& object, const char* name) {
  Napi::Value v = object.Get(name);
  if (v.IsUndefined()) throw_field(name, "is required");
  return v;
}

template <typename T>
ArrayView<T> typed_field(const Napi::Object& object, const char* name, napi_typedarray_type type,
                         const char* type_name) {
  Napi::Value v = field(object, name);
  if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != type)
    throw_field(name, std::string("must be a ") + type_name);
  auto array = v.As<Napi::TypedArrayOf<T>>();
  return ArrayView<T>{array.Data(), array.ElementLength(), array};
}
}  // namespace

void set_error_class(Napi::Env env, Napi::Function error_class) {
  addon_data(env)->error_class = Napi::Persistent(error_class);
}

Napi::Error make_error(Napi::Env env, const std::string& code, const std::string& message) {
  AddonData* data = addon_data(env);
  if (!data->error_class.IsEmpty()) {
    Napi::Object error = data->error_class.New(
        {Napi::String::New(env, code), Napi::String::New(env, message)});
    return Napi::Error(env, error);
  }
  Napi::Error error = Napi::Error::New(env, message);
  error.Set("code", Napi::String::New(env, code));
  return error;
}

ErrorInfo describe_exception(std::exception_ptr error) {
  try {
    std::rethrow_exception(error);
  } catch (const Error& e) {
    return {e.code(), e.what()};
  } catch (const c10::Error& e) {
    return {"ERR_SWERL_TORCH", e.what_without_backtrace()};
  } catch (const std::bad_alloc&) {
    return {"ERR_SWERL_OUT_OF_MEMORY", "out of memory in the native core"};
  } catch (const std::exception& e) {
    return {"ERR_SWERL_NATIVE", e.what()};
  } catch (...) {
    return {"ERR_SWERL_NATIVE", "unknown native exception"};
  }
}

Napi::Object object_arg(const Napi::CallbackInfo& info, size_t index, const char* name) {
  if (info.Length() <= index || !info[index].IsObject()) throw_field(name, "must be an object");
  return info[index].As<Napi::Object>();
}

bool has_field(const Napi::Object& object, const char* name) {
  return !object.Get(name).IsUndefined();
}

double number_field(const Napi::Object& object, const char* name) {
  Napi::Value v = field(object, name);
  if (!v.IsNumber()) throw_field(name, "must be a number");
  return v.As<Napi::Number>().DoubleValue();
}

bool bool_field(const Napi::Object& object, const char* name) {
  Napi::Value v = field(object, name);
  if (!v.IsBoolean()) throw_field(name, "must be a boolean");
  return v.As<Napi::Boolean>().Value();
}

std::string string_field(const Napi::Object& object, const char* name) {
  Napi::Value v = field(object, name);
  if (!v.IsString()) throw_field(name, "must be a string");
  return v.As<Napi::String>().Utf8Value();
}

ArrayView<float> float32_field(const Napi::Object& object, const char* name) {
  return typed_field<float>(object, name, napi_float32_array, "Float32Array");
}
ArrayView<int32_t> int32_field(const Napi::Object& object, const char* name) {
  return typed_field<int32_t>(object, name, napi_int32_array, "Int32Array");
}
ArrayView<uint8_t> uint8_field(const Napi::Object& object, const char* name) {
  return typed_field<uint8_t>(object, name, napi_uint8_array, "Uint8Array");
}

Napi::Float32Array to_js(Napi::Env env, const std::vector<float>& values) {
  Napi::Float32Array out = Napi::Float32Array::New(env, values.size());
  std::copy(values.begin(), values.end(), out.Data());
  return out;
}

Napi::Float64Array to_js(Napi::Env env, const std::vector<double>& values) {
  Napi::Float64Array out = Napi::Float64Array::New(env, values.size());
  std::copy(values.begin(), values.end(), out.Data());
  return out;
}

std::vector<double> float64_arg(const Napi::CallbackInfo& info, size_t index, const char* name) {
  if (info.Length() <= index || !info[index].IsTypedArray() || info[index].As<Napi::TypedArray>().TypedArrayType() != napi_float64_array)
    throw_field(name, "must be a Float64Array");
  const Napi::Float64Array values = info[index].As<Napi::Float64Array>();
  return std::vector<double>(values.Data(), values.Data() + values.ElementLength());
}

Napi::Uint8Array to_js(Napi::Env env, const std::vector<uint8_t>& values) {
  Napi::Uint8Array out = Napi::Uint8Array::New(env, values.size());
  std::copy(values.begin(), values.end(), out.Data());
  return out;
}

Napi::Float32Array tensor_to_js(Napi::Env env, const at::Tensor& tensor) {
  at::Tensor t = tensor.to(at::kFloat).contiguous();
  const int64_t bytes = int64_t(t.nbytes());
  if (t.numel() == 0) return Napi::Float32Array::New(env, 0);
  auto* holder = new at::Tensor(t);
  Napi::ArrayBuffer buffer = Napi::ArrayBuffer::New(
      env, t.data_ptr(), size_t(bytes),
      [bytes](Napi::Env env, void*, at::Tensor* held) {
        Napi::MemoryManagement::AdjustExternalMemory(env, -bytes);
        delete held;
      },
      holder);
  Napi::MemoryManagement::AdjustExternalMemory(env, bytes);
  return Napi::Float32Array::New(env, size_t(t.numel()), buffer, 0);
}

}  // namespace swerl::js
