#include "bind/torch_threads.h"

#include <ATen/Parallel.h>

#include <atomic>
#include <thread>

namespace swerl {

namespace {
std::atomic<int> configured_threads{0};
thread_local int applied_threads = -1;

void apply(int threads) {
  if (applied_threads == threads) return;
  at::set_num_threads(threads);
  applied_threads = threads;
}
}  // namespace

void set_torch_threads(int threads) {
  if (threads <= 0) threads = int(std::max(1u, std::thread::hardware_concurrency()));
  configured_threads = threads;
  apply(threads);
}

int torch_threads() { return configured_threads.load(); }

TorchThreadScope::TorchThreadScope(bool grad_mode) : grad_mode_(grad_mode) {
  const int threads = configured_threads.load();
  if (threads > 0) apply(threads);
}

}  // namespace swerl
