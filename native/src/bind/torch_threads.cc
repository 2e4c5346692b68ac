#include "bind/torch_threads.h"

#include <ATen/Parallel.h>
#include <dlfcn.h>

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

namespace {
// OpenBLAS's own entry points, looked up at run time: libtorch calls whatever libblas.so.3 is
// (OpenBLAS, the reference BLAS, MKL), so they may not exist. The addon's libraries are loaded
// without RTLD_GLOBAL, hence the look-up in the library itself before the global scope.
void* openblas_symbol(const char* name) {
  static void* const library = dlopen("libopenblas.so.0", RTLD_LAZY | RTLD_NOLOAD);
  void* symbol = library ? dlsym(library, name) : nullptr;
  return symbol ? symbol : dlsym(RTLD_DEFAULT, name);
}
}  // namespace

int set_blas_threads(int threads) {
  auto set = reinterpret_cast<void (*)(int)>(openblas_symbol("openblas_set_num_threads"));
  if (!set) return -1;
  set(threads);
  return blas_threads();
}

int blas_threads() {
  auto get = reinterpret_cast<int (*)()>(openblas_symbol("openblas_get_num_threads"));
  return get ? get() : -1;
}

const char* blas_core() {
  auto get = reinterpret_cast<char* (*)()>(openblas_symbol("openblas_get_corename"));
  return get ? get() : nullptr;
}

TorchThreadScope::TorchThreadScope(bool grad_mode) : grad_mode_(grad_mode) {
  const int threads = configured_threads.load();
  if (threads > 0) apply(threads);
}

}  // namespace swerl
