// The module's entry: registers every binding and the addon's own settings.
#include <ATen/Parallel.h>
#include <ATen/Version.h>
#include <napi.h>
#include <torch/csrc/api/include/torch/version.h>

#include <climits>
#include <cstdlib>
#include <cstring>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "bind/bindings.h"
#include "bind/napi_util.h"
#include "bind/torch_threads.h"
#include "parallel/process_group.h"

namespace swerl::js {

namespace {

// Why: glibc serves every allocation over its dynamic mmap threshold (at most 32 MB) with a
// fresh mmap and unmaps it on free, so a training step faults its activations in again, page
// by page: half of a small model's CPU step (bench/README, "Where a CPU step's time goes").
// Keeping tensors under 32 MB in the heap, and the heap's freed top, halved the step time.
// A setting of the user's own (MALLOC_*_ in the environment) wins; SWERL_MALLOC_TUNING=0
// leaves the allocator alone.
bool allocator_tuned = false;

void TuneAllocator() {
#if defined(__GLIBC__)
  const char* tuning = std::getenv("SWERL_MALLOC_TUNING");
  if (tuning != nullptr && std::strcmp(tuning, "0") == 0) return;
  allocator_tuned = true;
  if (std::getenv("MALLOC_MMAP_THRESHOLD_") == nullptr) mallopt(M_MMAP_THRESHOLD, 32 << 20);
  if (std::getenv("MALLOC_TRIM_THRESHOLD_") == nullptr) mallopt(M_TRIM_THRESHOLD, INT_MAX);
  if (std::getenv("MALLOC_TOP_PAD_") == nullptr) mallopt(M_TOP_PAD, 1 << 30);
#endif
}

Napi::Value SetErrorClass(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    if (info.Length() < 1 || !info[0].IsFunction())
      throw make_error(info.Env(), "ERR_SWERL_INVALID_ARG", "setErrorClass needs a class");
    set_error_class(info.Env(), info[0].As<Napi::Function>());
    return info.Env().Undefined();
  });
}

Napi::Value BuildInfo(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Object out = Napi::Object::New(env);
  out.Set("torchVersion", TORCH_VERSION);
  out.Set("torchSource", SWERL_TORCH_SOURCE);
  out.Set("torchDir", SWERL_TORCH_DIR);
  out.Set("torchLibDir", SWERL_TORCH_LIB_DIR);
#ifdef SWERL_WITH_CUDA
  out.Set("cuda", true);
#else
  out.Set("cuda", false);
#endif
  out.Set("processGroups", process_groups_available());
  out.Set("nccl", nccl_available());
  out.Set("parallelInfo", at::get_parallel_info());
  out.Set("threads", torch_threads());
  out.Set("allocatorTuned", allocator_tuned);
  const char* core = blas_core();
  out.Set("blasCore", core ? Napi::Value(Napi::String::New(info.Env(), core)) : info.Env().Null());
  return out;
}

Napi::Value SetNumThreads(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    if (info.Length() < 1 || !info[0].IsNumber())
      throw make_error(info.Env(), "ERR_SWERL_INVALID_ARG", "threads must be a number");
    set_torch_threads(info[0].As<Napi::Number>().Int32Value());
    return Napi::Number::New(info.Env(), torch_threads());
  });
}

Napi::Value SetBlasThreads(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    if (info.Length() < 1 || !info[0].IsNumber() || info[0].As<Napi::Number>().Int32Value() < 1)
      throw make_error(info.Env(), "ERR_SWERL_INVALID_ARG", "blas threads must be a number >= 1");
    return Napi::Number::New(info.Env(), set_blas_threads(info[0].As<Napi::Number>().Int32Value()));
  });
}

Napi::Value BlasThreads(const Napi::CallbackInfo& info) { return Napi::Number::New(info.Env(), blas_threads()); }

}  // namespace

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  TuneAllocator();
  // libtorch may start with one intra-op thread here; use every core unless told otherwise.
  const char* threads = std::getenv("SWERL_NUM_THREADS");
  set_torch_threads(threads ? std::atoi(threads) : 0);
  exports.Set("setErrorClass", Napi::Function::New(env, SetErrorClass));
  exports.Set("buildInfo", Napi::Function::New(env, BuildInfo));
  exports.Set("setNumThreads", Napi::Function::New(env, SetNumThreads));
  exports.Set("setBlasThreads", Napi::Function::New(env, SetBlasThreads));
  exports.Set("blasThreads", Napi::Function::New(env, BlasThreads));
  register_math(env, exports);
  register_loss(env, exports);
  register_bench(env, exports);
  register_policy(env, exports);
  register_group(env, exports);
  return exports;
}

}  // namespace swerl::js

static Napi::Object InitSwerl(Napi::Env env, Napi::Object exports) {
  return swerl::js::Init(env, exports);
}

NODE_API_MODULE(swerl_native, InitSwerl)
