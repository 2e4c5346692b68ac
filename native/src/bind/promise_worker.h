// Long native work off the event loop. The main thread reads every JS input into a plain
// job (raw pointers into typed arrays it keeps referenced, numbers, enums); Execute touches
// only that job; OnOK builds the JS result. Rejections are SwerlErrors.
#pragma once
#include <napi.h>

#include <functional>
#include <memory>
#include <vector>

#include "bind/napi_util.h"
#include "bind/torch_threads.h"

namespace swerl::js {

template <typename Job>
class PromiseWorker : public Napi::AsyncWorker {
 public:
  using Run = std::function<void(Job&)>;
  using Resolve = std::function<Napi::Value(Napi::Env, Job&)>;

  // Queues the work and returns its promise. owners: typed arrays whose memory the job reads.
  static Napi::Promise start(Napi::Env env, std::unique_ptr<Job> job,
                             const std::vector<Napi::Object>& owners, bool grad_mode, Run run,
                             Resolve resolve) {
    auto* worker = new PromiseWorker(env, std::move(job), grad_mode, std::move(run),
                                     std::move(resolve));
    for (const Napi::Object& owner : owners) worker->owners_.push_back(Napi::Persistent(owner));
    worker->Queue();
    return worker->deferred_.Promise();
  }

  void Execute() override {
    try {
      TorchThreadScope scope(grad_mode_);
      run_(*job_);
    } catch (...) {
      error_ = describe_exception(std::current_exception());
      SetError(error_.message);
    }
  }

  void OnOK() override {
    Napi::Env env = Env();
    try {
      deferred_.Resolve(resolve_(env, *job_));
    } catch (const Napi::Error& e) {
      deferred_.Reject(e.Value());
    } catch (...) {
      const ErrorInfo info = describe_exception(std::current_exception());
      deferred_.Reject(make_error(env, info.code, info.message).Value());
    }
  }

  void OnError(const Napi::Error&) override {
    deferred_.Reject(make_error(Env(), error_.code, error_.message).Value());
  }

 private:
  PromiseWorker(Napi::Env env, std::unique_ptr<Job> job, bool grad_mode, Run run, Resolve resolve)
      : Napi::AsyncWorker(env, "swerl"),
        deferred_(Napi::Promise::Deferred::New(env)),
        job_(std::move(job)),
        grad_mode_(grad_mode),
        run_(std::move(run)),
        resolve_(std::move(resolve)) {}

  Napi::Promise::Deferred deferred_;
  std::unique_ptr<Job> job_;
  bool grad_mode_;
  Run run_;
  Resolve resolve_;
  std::vector<Napi::ObjectReference> owners_;
  ErrorInfo error_;
};

}  // namespace swerl::js
