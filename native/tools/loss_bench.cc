// swerl_loss_bench: the fused GRPO++ loss on a CUDA GPU, forward, backward and both, against
// eager libtorch over materialized fp32 logits and against cuBLAS bf16 GEMMs of the same
// shapes (the roofline: a fused loss can at best run its four GEMMs). Built only with the
// CUDA kernels; runs without Node:
//
//   swerl_loss_bench [--out FILE.json] [--repeats 30] [--warmup 5] [--hidden 1024,2048,4096,5120]
//                    [--tokens 4096,16384,65536] [--vocab 151936] [--no-eager]
//
// Times are medians over CUDA events after warm-up. Effective TFLOP/s count 8 T H V for the
// full pass (forward 2THV; backward recompute 2THV, dX 2THV, dW 2THV) and 2THV per GEMM.
// Peak extra memory: the allocator's peak above what was allocated before the call, less the
// gradients every method must return (T x H bf16 and V x H fp32).
#include <c10/core/GradMode.h>
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <cuda_runtime.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/version.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "loss/loss.h"
#include "loss_cases.h"
#include "tool_args.h"

namespace {

using namespace swerl;
using tools::median;
using tools::parse_list;

struct Config {
  std::string out = "bench/results/loss-cuda.json";
  int repeats = 30, warmup = 5;
  std::vector<int64_t> hidden = {1024, 2048, 4096, 5120}, tokens = {4096, 16384, 65536};
  int64_t vocab = 151936;
  bool eager = true;
};

// Median milliseconds of f over CUDA events on the current stream.
double time_ms(const std::function<void()>& f, int warmup, int repeats) {
  for (int i = 0; i < warmup; ++i) f();
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  std::vector<double> times;
  for (int i = 0; i < repeats; ++i) {
    cudaEventRecord(start, stream);
    f();
    cudaEventRecord(stop, stream);
    cudaEventSynchronize(stop);
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    times.push_back(ms);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return median(times);
}

// Peak bytes the allocator held during f above what it held before.
int64_t peak_extra_bytes(const std::function<void()>& f) {
  at::cuda::getCurrentCUDAStream().synchronize();
  const auto device = c10::cuda::current_device();
  c10::cuda::CUDACachingAllocator::resetPeakStats(device);
  const int64_t before = c10::cuda::CUDACachingAllocator::getDeviceStats(device).allocated_bytes[0].current;
  f();
  at::cuda::getCurrentCUDAStream().synchronize();
  return c10::cuda::CUDACachingAllocator::getDeviceStats(device).allocated_bytes[0].peak - before;
}

struct Problem {
  at::Tensor hidden, weight;  // bf16 on the GPU
  PolicyLossInputs in;        // CPU
};

Problem make_problem(int64_t T, int64_t H, int64_t V) {
  Problem p;
  const auto cuda = at::TensorOptions().device(at::kCUDA);
  p.hidden = at::randn({T, H}, cuda.dtype(at::kFloat)).to(at::kBFloat16);
  p.weight = at::randn({V, H}, cuda.dtype(at::kFloat)).mul_(1.0 / std::sqrt(double(H))).to(at::kBFloat16);
  p.in.targets = at::randint(V, {T}, at::kLong);
  p.in.advantages = at::randn({T}, at::kFloat);
  p.in.weights = at::full({T}, 1.0 / double(T), at::kFloat);
  // On-policy old logprobs (ratio 1): every token is active in the backward, the worst case.
  p.in.old_logprobs = at::zeros({T}, at::kFloat);
  p.in.old_logprobs = fused_linear_policy_loss_forward(p.hidden, p.weight, p.in, grpo_pp_case(), FusedChunks{2048, 16384, true}).logprobs.cpu();
  return p;
}

// Eager libtorch: logits materialized in fp32, the loss in ATen ops, autograd's backward.
at::Tensor eager_loss(const at::Tensor& x, const at::Tensor& w, const PolicyLossInputs& in, const LossOptions& o) {
  const at::Tensor logits = at::mm(x, w.t()).to(at::kFloat);
  const at::Tensor logp = at::log_softmax(logits, 1);
  const at::Tensor y = in.targets.to(at::kCUDA).unsqueeze(1);
  const at::Tensor lp = logp.gather(1, y).squeeze(1);
  const at::Tensor ratio = at::clamp(lp - in.old_logprobs.to(at::kCUDA), -20.0, 20.0).exp();
  const at::Tensor adv = in.advantages.to(at::kCUDA);
  const at::Tensor per_token = at::maximum(-adv * ratio, -adv * at::clamp(ratio, 1 - o.clip_low, 1 + o.clip_high));
  return (in.weights.to(at::kCUDA) * per_token).sum();
}

std::string json_number(double v) {
  if (!std::isfinite(v)) return "null";
  std::ostringstream s;
  s.precision(6);
  s << v;
  return s.str();
}

}  // namespace

int main(int argc, char** argv) {
  Config c;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto next = [&] { return tools::flag_value(i, argc, argv); };
    if (a == "--out") c.out = next();
    else if (a == "--repeats") c.repeats = std::stoi(next());
    else if (a == "--warmup") c.warmup = std::stoi(next());
    else if (a == "--hidden") c.hidden = parse_list(next());
    else if (a == "--tokens") c.tokens = parse_list(next());
    else if (a == "--vocab") c.vocab = std::stoll(next());
    else if (a == "--no-eager") c.eager = false;
    else {
      std::fprintf(stderr, "usage: swerl_loss_bench [--out FILE] [--repeats N] [--warmup N] [--hidden a,b] [--tokens a,b] [--vocab V] [--no-eager]\n");
      return 2;
    }
  }
  if (!at::cuda::is_available()) {
    std::fprintf(stderr, "swerl_loss_bench needs a CUDA GPU\n");
    return 2;
  }
  c10::NoGradGuard no_grad;
  const cudaDeviceProp* prop = at::cuda::getCurrentDeviceProperties();
  std::printf("# %s, %d SMs, fused loss vs eager libtorch vs cuBLAS bf16 GEMMs, V = %lld, median of %d\n",
              prop->name, prop->multiProcessorCount, (long long)c.vocab, c.repeats);
  std::printf("%6s %6s | %9s %9s %9s %7s %9s | %9s %7s %9s | %9s %7s\n", "H", "T", "fwd ms", "bwd ms",
              "full ms", "TFLOP/s", "extra MiB", "eager ms", "TFLOP/s", "extra MiB", "cuBLAS ms", "TFLOP/s");
  std::ostringstream rows;
  const LossOptions options = grpo_pp_case();
  const FusedChunks chunks{2048, 16384, true};
  for (const int64_t H : c.hidden) {
    for (const int64_t T : c.tokens) {
      const int64_t V = c.vocab;
      const double flops = 8.0 * double(T) * double(H) * double(V);
      const Problem p = make_problem(T, H, V);
      const int64_t gradient_bytes = T * H * 2 + V * H * 4;

      FusedLinearForward f = fused_linear_policy_loss_forward(p.hidden, p.weight, p.in, options, chunks);
      const double fwd = time_ms([&] { f = fused_linear_policy_loss_forward(p.hidden, p.weight, p.in, options, chunks); }, c.warmup, c.repeats);
      const double bwd = time_ms([&] { fused_linear_policy_loss_backward(p.hidden, p.weight, p.in.targets, f, 1.0, {}, chunks); }, c.warmup, c.repeats);
      const auto full_pass = [&] {
        const FusedLinearForward g = fused_linear_policy_loss_forward(p.hidden, p.weight, p.in, options, chunks);
        fused_linear_policy_loss_backward(p.hidden, p.weight, p.in.targets, g, 1.0, {}, chunks);
      };
      const double full = time_ms(full_pass, c.warmup, c.repeats);
      const int64_t ours_extra = peak_extra_bytes(full_pass) - gradient_bytes;

      double eager = NAN;
      int64_t eager_extra = -1;
      std::string eager_note = "ok";
      if (c.eager) {
        try {
          const auto eager_pass = [&] {
            c10::AutoGradMode grad(true);
            const at::Tensor x = p.hidden.detach().requires_grad_(true), w = p.weight.detach().requires_grad_(true);
            torch::autograd::backward({eager_loss(x, w, p.in, options)});
          };
          eager_extra = peak_extra_bytes(eager_pass) - gradient_bytes;
          eager = time_ms(eager_pass, 2, std::max(3, c.repeats / 3));
        } catch (const c10::Error& e) {
          eager_note = std::string(e.what()).find("out of memory") != std::string::npos ? "out of memory" : "failed";
          c10::cuda::CUDACachingAllocator::emptyCache();
        }
      }

      // The roofline: the loss's four GEMMs in cuBLAS bf16 (logits twice, dX, dW).
      at::Tensor z = at::mm(p.hidden, p.weight.t());  // [T, V] bf16, reused as the gradient
      const double t_logits = time_ms([&] { at::mm_out(z, p.hidden, p.weight.t()); }, c.warmup, c.repeats);
      const double t_dx = time_ms([&] { at::mm(z, p.weight); }, c.warmup, c.repeats);
      const double t_dw = time_ms([&] { at::mm(z.t(), p.hidden); }, c.warmup, c.repeats);
      z = at::Tensor();
      c10::cuda::CUDACachingAllocator::emptyCache();
      const double roofline = 2 * t_logits + t_dx + t_dw;

      const auto tflops = [&](double ms) { return flops / (ms * 1e-3) / 1e12; };
      const double mib = 1024.0 * 1024.0;
      std::printf("%6lld %6lld | %9.2f %9.2f %9.2f %7.0f %9.0f | %9.2f %7.0f %9.0f | %9.2f %7.0f%s\n", (long long)H,
                  (long long)T, fwd, bwd, full, tflops(full), ours_extra / mib, eager, tflops(eager),
                  eager_extra < 0 ? NAN : eager_extra / mib, roofline, tflops(roofline),
                  eager_note == "ok" ? "" : ("  (eager: " + eager_note + ")").c_str());
      std::fflush(stdout);
      if (rows.tellp() > 0) rows << ",\n";
      rows << "    {\"hiddenSize\": " << H << ", \"tokens\": " << T << ", \"vocabSize\": " << V
           << ", \"flops\": " << json_number(flops) << ",\n     \"fused\": {\"forwardMs\": " << json_number(fwd)
           << ", \"backwardMs\": " << json_number(bwd) << ", \"fullMs\": " << json_number(full)
           << ", \"tflops\": " << json_number(tflops(full)) << ", \"peakExtraBytes\": " << ours_extra
           << ", \"tiles\": [" << chunks.tokens << ", " << chunks.vocab << "]},\n     \"eager\": {\"fullMs\": "
           << json_number(eager) << ", \"tflops\": " << json_number(tflops(eager)) << ", \"peakExtraBytes\": "
           << (eager_extra < 0 ? "null" : std::to_string(eager_extra)) << ", \"status\": \"" << eager_note
           << "\"},\n     \"cublas\": {\"logitsMs\": " << json_number(t_logits) << ", \"gradHiddenMs\": "
           << json_number(t_dx) << ", \"gradWeightMs\": " << json_number(t_dw) << ", \"fullMs\": "
           << json_number(roofline) << ", \"tflops\": " << json_number(tflops(roofline)) << "}}";
    }
  }
  std::ostringstream doc;
  doc << "{\n  \"device\": \"" << prop->name << "\",\n  \"torch\": \"" << TORCH_VERSION_MAJOR << "."
      << TORCH_VERSION_MINOR << "." << TORCH_VERSION_PATCH << "\",\n  \"repeats\": "
      << c.repeats << ",\n  \"rows\": [\n" << rows.str() << "\n  ]\n}\n";
  const std::string tmp = c.out + ".tmp";
  std::ofstream(tmp) << doc.str();
  if (std::rename(tmp.c_str(), c.out.c_str()) != 0) {
    std::fprintf(stderr, "could not write %s\n", c.out.c_str());
    return 1;
  }
  std::printf("# wrote %s\n", c.out.c_str());
  return 0;
}
