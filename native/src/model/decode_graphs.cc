#include "model/decode_graphs.h"

#include <c10/core/GradMode.h>

#include "core/profile.h"
#include "core/swerl_error.h"

#ifdef SWERL_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#endif

namespace swerl {

// One batch bucket: its static inputs (device), its output, and its graph once captured.
struct DecodeGraphs::Bucket {
  at::Tensor ids, positions;  // [bucket] long, on the model's device
  at::Tensor hidden;          // [bucket, H]: the captured step's output, rewritten by each replay
#ifdef SWERL_WITH_CUDA
  std::unique_ptr<at::cuda::CUDAGraph> graph;
#endif
};

DecodeGraphs::DecodeGraphs() = default;
DecodeGraphs::~DecodeGraphs() = default;

int64_t DecodeGraphs::bucket(int64_t rows) {
  int64_t b = 1;
  while (b < rows) b *= 2;
  return b;
}

void DecodeGraphs::clear() {
  buckets_.clear();
  cache_generation_ = -1;
}

at::Tensor DecodeGraphs::decode(const Transformer& model, KvCache& cache, DecodeMode mode,
                                const std::vector<int64_t>& ids, const std::vector<int64_t>& positions) {
  const int64_t n = int64_t(ids.size()), padded = bucket(n);
  if (cache.slot_capacity() < padded) throw_invalid("decode graphs: the cache holds fewer slots than the padded batch");
  const int64_t keys = cache.length_capacity();
  if (cache.generation() != cache_generation_) {
    clear();  // the cache has new storage: graphs captured over the old one would write freed memory
    cache_generation_ = cache.generation();
  }
  std::unique_ptr<Bucket>& slot = buckets_[padded];
  const auto device_long = at::TensorOptions().dtype(at::kLong).device(model.device());
  if (!slot) {
    slot = std::make_unique<Bucket>();
    slot->ids = at::zeros({padded}, device_long);
    slot->positions = at::zeros({padded}, device_long);
  }
  Bucket& b = *slot;
  {
    // Padding rows decode token 0 at position 0 of the free slots n.. (no live row reads
    // them: each row attends to its own slot). One upload for ids and positions together.
    profile::Phase phase("host-copy");
    at::Tensor host = at::zeros({2, padded}, at::kLong);
    if (model.device().is_cuda()) host = host.pin_memory();
    int64_t* h = host.data_ptr<int64_t>();
    std::copy(ids.begin(), ids.end(), h);
    std::copy(positions.begin(), positions.end(), h + padded);
    const at::Tensor both = host.to(model.device(), /*non_blocking=*/true);
    b.ids.copy_(both[0]);
    b.positions.copy_(both[1]);
  }
  c10::NoGradGuard no_grad;
  if (mode != DecodeMode::Graphs || !model.device().is_cuda()) {
    return model.decode(b.ids, b.positions, cache, keys).narrow(0, 0, n);
  }
#ifdef SWERL_WITH_CUDA
  if (!b.graph) {
    // Captured on a side stream after one eager run there (cuBLAS and the allocator set up
    // outside the capture), as torch.cuda.graphs does; the eager run's writes are the same
    // ones the replay below makes again. Timed as one phase: the capture's own kernels and
    // events are not a step's.
    profile::Phase phase("decode.capture");
    profile::Pause pause;
    const at::cuda::CUDAStream main = at::cuda::getCurrentCUDAStream();
    const at::cuda::CUDAStream side = at::cuda::getStreamFromPool();
    at::cuda::CUDAEvent inputs_ready;
    inputs_ready.record(main);
    inputs_ready.block(side);
    {
      at::cuda::CUDAStreamGuard on_side(side);
      model.decode(b.ids, b.positions, cache, keys);
      b.graph = std::make_unique<at::cuda::CUDAGraph>();
      b.graph->capture_begin();
      b.hidden = model.decode(b.ids, b.positions, cache, keys);
      b.graph->capture_end();
    }
    at::cuda::CUDAEvent captured;
    captured.record(side);
    captured.block(main);
    ++captures_;
  }
  {
    profile::Phase phase("decode.graph");
    b.graph->replay();
  }
  return b.hidden.narrow(0, 0, n);
#else
  throw_invalid("decode graphs need a CUDA build");
#endif
}

}  // namespace swerl
