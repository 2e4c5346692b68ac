#include "parallel/process_group.h"

#include "core/swerl_error.h"

// Gloo (CPU ranks: Debian's libgloo-dev; PyTorch's wheels ship no Gloo headers) and NCCL (CUDA
// ranks: PyTorch's libtorch with the nvidia-nccl wheel) are built independently; either gives
// process groups, over the same TCPStore rendezvous.
#if defined(SWERL_WITH_GLOO) || defined(SWERL_WITH_NCCL)
#define SWERL_WITH_PROCESS_GROUPS 1
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#endif
#ifdef SWERL_WITH_GLOO
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#endif
#ifdef SWERL_WITH_NCCL
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include <cstring>
#include <functional>

namespace swerl {

#ifdef SWERL_WITH_PROCESS_GROUPS

namespace {

// Consecutive runs of tensors whose bytes add up to at most `budget` (a larger tensor alone).
std::vector<std::vector<at::Tensor>> buckets(const std::vector<at::Tensor>& tensors, int64_t budget) {
  std::vector<std::vector<at::Tensor>> out;
  int64_t used = 0;
  for (const at::Tensor& t : tensors) {
    if (t.scalar_type() != at::kFloat || !t.is_contiguous())
      throw Error("ERR_SWERL_INVALID_ARG", "a collective takes contiguous fp32 tensors");
    const int64_t bytes = int64_t(t.nbytes());
    if (out.empty() || used + bytes > budget) {
      out.emplace_back();
      used = 0;
    }
    out.back().push_back(t);
    used += bytes;
  }
  return out;
}

// Flattens a bucket, runs `collective` on the flat tensor, copies the result back.
void over_buckets(const std::vector<at::Tensor>& tensors, int64_t budget,
                  const std::function<void(at::Tensor&)>& collective) {
  for (const std::vector<at::Tensor>& bucket : buckets(tensors, budget)) {
    std::vector<at::Tensor> flat_views;
    for (const at::Tensor& t : bucket) flat_views.push_back(t.reshape({-1}));
    at::Tensor flat = at::cat(flat_views);
    collective(flat);
    int64_t at = 0;
    for (const at::Tensor& t : bucket) {
      const int64_t n = t.numel();
      t.copy_(flat.narrow(0, at, n).view(t.sizes()));
      at += n;
    }
  }
}

}  // namespace

#ifdef SWERL_WITH_GLOO
bool process_groups_available() { return true; }
#else
bool process_groups_available() { return false; }
#endif

#ifdef SWERL_WITH_NCCL
bool nccl_available() { return true; }
#else
bool nccl_available() { return false; }
#endif

// One of the two backends; both take the same collectives (their common base differs between
// libtorch 1.x and 2.x, so each is held as itself).
struct ProcessGroup::Impl {
  c10::intrusive_ptr<c10d::Store> store;
#ifdef SWERL_WITH_GLOO
  c10::intrusive_ptr<c10d::ProcessGroupGloo> gloo;
#endif
#ifdef SWERL_WITH_NCCL
  c10::intrusive_ptr<c10d::ProcessGroupNCCL> nccl;
#endif

  void allreduce(std::vector<at::Tensor>& tensors) {
#ifdef SWERL_WITH_NCCL
    if (nccl) {
      nccl->allreduce(tensors)->wait();
      return;
    }
#endif
#ifdef SWERL_WITH_GLOO
    gloo->allreduce(tensors)->wait();
#endif
  }

  void broadcast(std::vector<at::Tensor>& tensors, const c10d::BroadcastOptions& options) {
#ifdef SWERL_WITH_NCCL
    if (nccl) {
      nccl->broadcast(tensors, options)->wait();
      return;
    }
#endif
#ifdef SWERL_WITH_GLOO
    gloo->broadcast(tensors, options)->wait();
#endif
  }
};

// c10d reports a lost peer or a timeout as c10::Error (gloo's messages inside): one code for all.
template <typename Fn>
void collective_or_throw(const std::string& what, int rank, Fn&& fn) {
  try {
    fn();
  } catch (const c10::Error& e) {
    throw Error("ERR_SWERL_DIST", what + " failed on rank " + std::to_string(rank) + " (did a rank stop, or time out?): " +
                                      e.what_without_backtrace());
  } catch (const std::exception& e) {
    throw Error("ERR_SWERL_DIST", what + " failed on rank " + std::to_string(rank) + " (did a rank stop, or time out?): " + e.what());
  }
}

ProcessGroup::ProcessGroup(const GroupOptions& options) : options_(options), impl_(std::make_unique<Impl>()) {
  if (options.world_size < 1) throw Error("ERR_SWERL_INVALID_ARG", "worldSize must be >= 1");
  if (options.rank < 0 || options.rank >= options.world_size)
    throw Error("ERR_SWERL_INVALID_ARG", "rank must be in [0, worldSize)");
  if (options.port < 1 || options.port > 65535) throw Error("ERR_SWERL_INVALID_ARG", "masterPort must be in [1, 65535]");
  collective_or_throw("the rendezvous at " + options.master_addr + ":" + std::to_string(options.port), options.rank, [&] {
    c10d::TCPStoreOptions store_options;
    store_options.port = uint16_t(options.port);
    store_options.isServer = options.rank == 0;
    store_options.numWorkers = size_t(options.world_size);
    store_options.waitWorkers = true;
    store_options.timeout = options.timeout;
    impl_->store = c10::make_intrusive<c10d::TCPStore>(options.master_addr, store_options);
    if (options.backend == GroupBackend::Nccl) {
#ifdef SWERL_WITH_NCCL
      if (!options.device.is_cuda()) throw Error("ERR_SWERL_INVALID_ARG", "an NCCL process group needs a CUDA device");
      auto nccl_options = c10d::ProcessGroupNCCL::Options::create();
      nccl_options->timeout = options.timeout;
      impl_->nccl = c10::make_intrusive<c10d::ProcessGroupNCCL>(impl_->store, options.rank, options.world_size, nccl_options);
#else
      throw Error("ERR_SWERL_DIST", "this build of swerl's addon has no NCCL process groups: build it with CUDA against a libtorch that has NCCL (PyTorch's), with nccl.h findable (NCCL_HOME)");
#endif
    } else {
#ifdef SWERL_WITH_GLOO
      auto gloo_options = c10d::ProcessGroupGloo::Options::create(options.timeout);
      gloo_options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname(options.master_addr));
      gloo_options->threads = 2;
      impl_->gloo = c10::make_intrusive<c10d::ProcessGroupGloo>(impl_->store, options.rank, options.world_size, gloo_options);
#else
      throw Error("ERR_SWERL_DIST", "this build of swerl's addon has no Gloo process groups (CPU ranks): Gloo's headers were not "
                                    "found when it was built (PyTorch's wheels ship none). Use backend 'nccl' on CUDA ranks, or "
                                    "build against Debian's libtorch-dev with libgloo-dev installed");
#endif
    }
  });
}

ProcessGroup::~ProcessGroup() = default;

void ProcessGroup::all_reduce_sum(const std::vector<at::Tensor>& tensors) {
  over_buckets(tensors, options_.bucket_bytes, [&](at::Tensor& flat) {
    collective_or_throw("an all-reduce", options_.rank, [&] {
      std::vector<at::Tensor> one{flat};
      impl_->allreduce(one);
    });
  });
}

void ProcessGroup::all_reduce_sum(std::vector<double>& values) {
  if (values.empty()) return;
  // NCCL reduces device memory only: the numbers go to the rank's device and back.
  const at::Device where = options_.backend == GroupBackend::Nccl ? options_.device : at::Device(at::kCPU);
  at::Tensor t = at::from_blob(values.data(), {int64_t(values.size())}, at::kDouble).to(where, /*non_blocking=*/false, /*copy=*/true);
  collective_or_throw("an all-reduce", options_.rank, [&] {
    std::vector<at::Tensor> one{t};
    impl_->allreduce(one);
  });
  t = t.to(at::kCPU).contiguous();
  std::memcpy(values.data(), t.data_ptr<double>(), values.size() * sizeof(double));
}

void ProcessGroup::broadcast(const std::vector<at::Tensor>& tensors, int root) {
  over_buckets(tensors, options_.bucket_bytes, [&](at::Tensor& flat) {
    collective_or_throw("a broadcast", options_.rank, [&] {
      std::vector<at::Tensor> one{flat};
      c10d::BroadcastOptions opts;
      opts.rootRank = root;
      impl_->broadcast(one, opts);
    });
  });
}

#else

bool process_groups_available() { return false; }
bool nccl_available() { return false; }

struct ProcessGroup::Impl {};

ProcessGroup::ProcessGroup(const GroupOptions& options) : options_(options) {
  throw Error("ERR_SWERL_DIST",
              "this build of swerl's addon has no process groups: neither Gloo's headers (Debian: apt install "
              "libgloo-dev) nor NCCL (a CUDA build against PyTorch's libtorch, nccl.h findable through NCCL_HOME) "
              "were found when it was built. Install one and rebuild (npx cmake-js compile)");
}

ProcessGroup::~ProcessGroup() = default;
void ProcessGroup::all_reduce_sum(const std::vector<at::Tensor>&) {}
void ProcessGroup::all_reduce_sum(std::vector<double>&) {}
void ProcessGroup::broadcast(const std::vector<at::Tensor>&, int) {}

#endif

}  // namespace swerl
