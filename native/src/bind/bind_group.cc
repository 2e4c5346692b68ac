// A process group of its own, outside any policy: a second collective channel beside the one a
// policy trains on (asynchronous rollouts gather their trajectories on it while the learner
// all-reduces gradients on the policy's), so it never waits for the policy's lock.
//   groupJoin({masterAddr, masterPort, rank, worldSize, timeoutMs}) -> Promise<handle>
//   groupAllReduce(handle, Float64Array) -> Promise<Float64Array>   (the sums over the ranks)
//   groupClose(handle)                                               (idempotent)
#include <napi.h>

#include <memory>

#include "bind/bindings.h"
#include "bind/napi_util.h"
#include "bind/promise_worker.h"
#include "core/swerl_error.h"
#include "parallel/process_group.h"

namespace swerl::js {
namespace {

// What a handle holds: the group until closed (a collective in flight keeps its own reference).
struct GroupBox {
  std::shared_ptr<ProcessGroup> group;
};

std::shared_ptr<ProcessGroup> group_of(const Napi::Value& value) {
  if (!value.IsExternal()) throw_invalid("group must be a handle from groupJoin");
  GroupBox* box = value.As<Napi::External<GroupBox>>().Data();
  if (!box->group) throw Error("ERR_SWERL_DISPOSED", "this process group was closed");
  return box->group;
}

Napi::Value GroupJoin(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    const Napi::Object o = object_arg(info, 0, "group");
    struct Job {
      GroupOptions options;
      std::shared_ptr<ProcessGroup> group;
    };
    auto job = std::make_unique<Job>();
    job->options.master_addr = string_field(o, "masterAddr");
    job->options.port = int(number_field(o, "masterPort"));
    job->options.rank = int(number_field(o, "rank"));
    job->options.world_size = int(number_field(o, "worldSize"));
    job->options.timeout = std::chrono::milliseconds(int64_t(number_field(o, "timeoutMs")));
    return PromiseWorker<Job>::start(
        info.Env(), std::move(job), {}, /*grad_mode=*/false,
        [](Job& j) { j.group = std::make_shared<ProcessGroup>(j.options); },
        [](Napi::Env env, Job& j) -> Napi::Value {
          return Napi::External<GroupBox>::New(env, new GroupBox{std::move(j.group)},
                                               [](Napi::Env, GroupBox* box) { delete box; });
        });
  });
}

Napi::Value GroupAllReduce(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    struct Job {
      std::shared_ptr<ProcessGroup> group;
      std::vector<double> values;
    };
    auto job = std::make_unique<Job>();
    job->group = group_of(info[0]);
    job->values = float64_arg(info, 1, "values");
    return PromiseWorker<Job>::start(
        info.Env(), std::move(job), {}, /*grad_mode=*/false, [](Job& j) { j.group->all_reduce_sum(j.values); },
        [](Napi::Env env, Job& j) -> Napi::Value { return to_js(env, j.values); });
  });
}

Napi::Value GroupClose(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    if (!info[0].IsExternal()) throw_invalid("group must be a handle from groupJoin");
    info[0].As<Napi::External<GroupBox>>().Data()->group.reset();
    return info.Env().Undefined();
  });
}

}  // namespace

void register_group(Napi::Env env, Napi::Object exports) {
  exports.Set("groupJoin", Napi::Function::New(env, GroupJoin));
  exports.Set("groupAllReduce", Napi::Function::New(env, GroupAllReduce));
  exports.Set("groupClose", Napi::Function::New(env, GroupClose));
}

}  // namespace swerl::js
