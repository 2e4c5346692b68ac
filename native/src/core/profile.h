// Phase timing for swerl_policy_bench --profile: where a decode or train step spends its time,
// by named phase (embedding, norms, attention, MLP, sampler, host copies, optimizer, ...).
// Off unless a Recording is open, and then only a pointer test per scope. While one is open,
// each Phase scope marks a boundary when it opens and when it closes, timed on the device's
// current stream (CUDA events: queue order, no synchronization) and by the host clock;
// the interval between two consecutive boundaries is charged to the innermost phase open
// during it, and time outside every phase to "other". So the phases add up to the whole
// recorded time, and a phase's share is its work plus the launch gaps it causes. The host
// times say what issuing each phase cost: where they add up to the device's, the step is
// bound by launches, not by the GPU.
#pragma once
#include <ATen/ATen.h>

#include <cstdint>
#include <string>
#include <vector>

namespace swerl::profile {

struct PhaseTime {
  std::string name;
  double ms = 0;       // device time, summed over every interval charged to it
  double host_ms = 0;  // the host's time in the same intervals (what launching them cost)
  int64_t count = 0;   // times it was entered
};

// One at a time per process; the code it times runs on one thread at a time (the policy's
// lock), though that may be autograd's device thread in a backward.
class Recording {
 public:
  explicit Recording(at::Device device);
  ~Recording();
  Recording(const Recording&) = delete;
  Recording& operator=(const Recording&) = delete;
  // Waits for the device, returns the time per phase since the recording opened or was last
  // collected (in order of first entry, "other" first), and starts afresh.
  std::vector<PhaseTime> collect();
};

bool active();

class Phase {
 public:
  explicit Phase(const char* name);
  ~Phase();
  Phase(const Phase&) = delete;
  Phase& operator=(const Phase&) = delete;

 private:
  bool open_;
};

// No phase is recorded in its scope: a CUDA graph capture, where an event would be a node of
// the graph, not a timestamp (the replay is timed as one phase instead).
class Pause {
 public:
  Pause();
  ~Pause();
  Pause(const Pause&) = delete;
  Pause& operator=(const Pause&) = delete;
};

// From here on, time goes to `name` in place of the innermost open phase (which keeps its
// place for the close). For points that cannot hold a scope: autograd hooks in a backward.
void switch_to(const char* name);

}  // namespace swerl::profile
