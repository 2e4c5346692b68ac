// Data parallelism's one collective channel: PyTorch's own c10d, a TCPStore rendezvous at
// master_addr:master_port (rank 0 serves it) and a process group: Gloo over TCP (CPU ranks),
// or NCCL (CUDA ranks, one device each; built where libtorch has CUDA and nccl.h is found).
// Collectives must be called in the same order on every rank; a rank that dies makes the
// others' next collective fail (or time out) with ERR_SWERL_DIST rather than hang forever.
#pragma once
#include <ATen/ATen.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace swerl {

enum class GroupBackend { Gloo, Nccl };

struct GroupOptions {
  GroupBackend backend = GroupBackend::Gloo;
  // NCCL: the rank's CUDA device (its tensors live there; so do the float64 sums' buffers).
  at::Device device = at::kCPU;
  std::string master_addr = "127.0.0.1";
  int port = 29500;
  int rank = 0;
  int world_size = 1;
  std::chrono::milliseconds timeout{300000};  // rendezvous and each collective
  int64_t bucket_bytes = int64_t(25) << 20;  // gradients flattened into buckets of at most this
};

// Whether this build has a process group backend (Gloo's headers were found at build time).
bool process_groups_available();
// Whether this build has NCCL process groups (CUDA ranks).
bool nccl_available();

class ProcessGroup {
 public:
  explicit ProcessGroup(const GroupOptions& options);  // blocks until every rank has joined
  ~ProcessGroup();
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  int rank() const { return options_.rank; }
  int world_size() const { return options_.world_size; }

  // Sums every tensor across ranks, in place: fp32 tensors flattened into buckets of at most
  // bucket_bytes, one all-reduce a bucket.
  void all_reduce_sum(const std::vector<at::Tensor>& tensors);
  // Sums a few float64 numbers across ranks (counts, metrics), in place.
  void all_reduce_sum(std::vector<double>& values);
  // Rank `root`'s values into every rank's tensors, in place, bucketed the same way.
  void broadcast(const std::vector<at::Tensor>& tensors, int root);

 private:
  struct Impl;
  GroupOptions options_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace swerl
