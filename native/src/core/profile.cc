#include "core/profile.h"

#include <chrono>
#include <map>

#include "core/swerl_error.h"

#ifdef SWERL_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <cuda_runtime.h>
#endif

namespace swerl::profile {

namespace {

// A boundary: when it happened (the host clock, and an event on CUDA) and which phase the
// time after it belongs to.
struct Mark {
  size_t clock;  // index into the recorder's events or host times
  const char* after;
};

struct Recorder {
  at::Device device;
  std::vector<const char*> stack;
  std::vector<Mark> marks;
  std::vector<const char*> entered;  // phase names as entered, for the counts
  std::vector<std::chrono::steady_clock::time_point> host_times;  // one per mark
#ifdef SWERL_WITH_CUDA
  std::vector<cudaEvent_t> events;  // a pool: reused after each collect()
#endif

  explicit Recorder(at::Device d) : device(d) {}

  const char* top() const { return stack.empty() ? "other" : stack.back(); }

  void mark() {
    size_t clock = marks.size();
    host_times.push_back(std::chrono::steady_clock::now());
    if (device.is_cuda()) {
#ifdef SWERL_WITH_CUDA
      if (clock == events.size()) {
        cudaEvent_t e;
        if (cudaEventCreate(&e) != cudaSuccess) throw Error("ERR_SWERL_CUDA", "profile: cudaEventCreate failed");
        events.push_back(e);
      }
      cudaEventRecord(events[clock], at::cuda::getCurrentCUDAStream(device.index()));
#endif
    }
    marks.push_back(Mark{clock, top()});
  }

  double host_ms(size_t from, size_t to) const {
    return std::chrono::duration<double, std::milli>(host_times[to] - host_times[from]).count();
  }

  double device_ms(size_t from, size_t to) const {
#ifdef SWERL_WITH_CUDA
    if (device.is_cuda()) {
      float ms = 0;
      cudaEventElapsedTime(&ms, events[from], events[to]);
      return double(ms);
    }
#endif
    return host_ms(from, to);
  }
};

Recorder* recorder = nullptr;
int paused = 0;

bool recording() { return recorder != nullptr && paused == 0; }

}  // namespace

Recording::Recording(at::Device device) {
  if (recorder) throw_invalid("profile: a recording is already open");
#ifndef SWERL_WITH_CUDA
  if (device.is_cuda()) throw_invalid("profile: this build has no CUDA support to time a CUDA device");
#endif
  recorder = new Recorder(device);
  recorder->mark();
}

Recording::~Recording() {
#ifdef SWERL_WITH_CUDA
  for (cudaEvent_t e : recorder->events) cudaEventDestroy(e);
#endif
  delete recorder;
  recorder = nullptr;
}

std::vector<PhaseTime> Recording::collect() {
  Recorder& r = *recorder;
  r.mark();
#ifdef SWERL_WITH_CUDA
  if (r.device.is_cuda()) cudaEventSynchronize(r.events[r.marks.back().clock]);
#endif
  std::vector<PhaseTime> out{PhaseTime{"other"}};
  std::map<std::string, size_t> where{{"other", 0}};
  auto slot = [&](const char* name) -> PhaseTime& {
    auto [it, fresh] = where.emplace(name, out.size());
    if (fresh) out.push_back(PhaseTime{name});
    return out[it->second];
  };
  for (const char* name : r.entered) ++slot(name).count;
  for (size_t i = 0; i + 1 < r.marks.size(); ++i) {
    PhaseTime& phase = slot(r.marks[i].after);
    phase.ms += r.device_ms(r.marks[i].clock, r.marks[i + 1].clock);
    phase.host_ms += r.host_ms(r.marks[i].clock, r.marks[i + 1].clock);
  }
  r.marks.clear();
  r.entered.clear();
  r.host_times.clear();
  r.mark();
  return out;
}

bool active() { return recording(); }

Pause::Pause() { ++paused; }
Pause::~Pause() { --paused; }

Phase::Phase(const char* name) : open_(recording()) {
  if (!open_) return;
  recorder->stack.push_back(name);
  recorder->entered.push_back(name);
  recorder->mark();
}

Phase::~Phase() {
  if (!open_ || !recorder) return;
  if (!recorder->stack.empty()) recorder->stack.pop_back();
  recorder->mark();
}

void switch_to(const char* name) {
  if (!recording()) return;
  if (recorder->stack.empty()) recorder->stack.push_back(name);
  else recorder->stack.back() = name;
  recorder->entered.push_back(name);
  recorder->mark();
}

}  // namespace swerl::profile
