// Benchmark driver for the CPU losses, the addon's benchPolicyLoss (bench/loss.ts, npm run
// bench, calls it): times forward + backward through libtorch autograd (fused-linear vs. logits
// materialized with libtorch's matmul) and measures the peak resident memory each adds. Inputs
// are made here, so nothing crosses from JS but the shape and the loss's options (resolved in JS).
#include <c10/core/GradMode.h>
#include <ATen/CPUGeneratorImpl.h>
#include <malloc.h>
#include <torch/csrc/autograd/autograd.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <string>

#include "bind/bindings.h"
#include "bind/loss_js.h"
#include "bind/napi_util.h"
#include "bind/promise_worker.h"
#include "core/swerl_error.h"
#include "loss/loss.h"

namespace swerl::js {

namespace {

struct BenchJob {
  int64_t tokens = 0, hidden_size = 0, vocab = 0;
  bool fused = true;
  int repeats = 5, warmup = 1;
  uint64_t seed = 0;
  LossOptions options;
  FusedChunks chunks;
  std::vector<double> times_ms;
  int64_t peak_extra_bytes = 0;
  double loss = 0;
};

// Resident memory from /proc/self/status (bytes); field is "VmRSS" or "VmHWM".
int64_t proc_status_bytes(const std::string& field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::stoll(line.substr(field.size() + 1)) * 1024;
  }
  throw Error("ERR_SWERL_NATIVE", "/proc/self/status has no " + field);
}

void reset_peak_rss() {
  std::ofstream clear_refs("/proc/self/clear_refs");
  clear_refs << "5";  // resets VmHWM to the current RSS (Linux >= 4.0)
}

void run_bench(BenchJob& job) {
  // A fixed mmap threshold returns large freed blocks to the OS, so each repeat starts clean.
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
  at::Generator gen = at::detail::createCPUGenerator(job.seed);
  const at::Tensor hidden = at::randn({job.tokens, job.hidden_size}, gen, at::kFloat);
  const at::Tensor weight =
      at::randn({job.vocab, job.hidden_size}, gen, at::kFloat).mul_(1.0 / std::sqrt(job.hidden_size));
  PolicyLossInputs in;
  in.targets = at::randint(job.vocab, {job.tokens}, gen, at::kLong);
  in.advantages = at::randn({job.tokens}, gen, at::kFloat);
  in.weights = at::full({job.tokens}, 1.0 / double(job.tokens), at::kFloat);
  const LossOptions& options = job.options;
  {
    // On-policy old logprobs (ratio 1): every token is active in the backward, the worst case.
    c10::NoGradGuard no_grad;
    in.old_logprobs = at::zeros({job.tokens}, at::kFloat);  // any value: only logprobs are kept
    in.old_logprobs = fused_linear_policy_loss_forward(hidden, weight, in, options, job.chunks)
                          .logprobs;
  }

  const at::Tensor x = hidden.clone().requires_grad_(true);
  const at::Tensor w = weight.clone().requires_grad_(true);
  for (int i = 0; i < job.warmup + job.repeats; ++i) {
    x.mutable_grad() = at::Tensor();
    w.mutable_grad() = at::Tensor();
    reset_peak_rss();
    const int64_t before = proc_status_bytes("VmRSS");
    const auto start = std::chrono::steady_clock::now();
    {
      DifferentiableLoss out =
          job.fused ? differentiable_fused_linear_policy_loss(x, w, in, options, job.chunks)
                    : differentiable_policy_loss(at::mm(x, w.t()), in, options);
      torch::autograd::backward({out.loss});
      job.loss = out.stats.loss;
    }
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    const int64_t peak = proc_status_bytes("VmHWM") - before;
    if (i >= job.warmup) {
      job.times_ms.push_back(ms);
      job.peak_extra_bytes = std::max(job.peak_extra_bytes, peak);
    }
  }
}

Napi::Value BenchPolicyLoss(const Napi::CallbackInfo& info) {
  return guard(info.Env(), [&]() -> Napi::Value {
    const Napi::Object c = object_arg(info, 0, "config");
    auto job = std::make_unique<BenchJob>();
    job->tokens = int64_t(number_field(c, "tokens"));
    job->hidden_size = int64_t(number_field(c, "hiddenSize"));
    job->vocab = int64_t(number_field(c, "vocabSize"));
    job->fused = string_field(c, "path") == "fused";
    job->repeats = int(number_field(c, "repeats"));
    job->warmup = int(number_field(c, "warmup"));
    job->seed = uint64_t(number_field(c, "seed"));
    read_loss_options(c, job->options, job->chunks);
    if (job->tokens < 1 || job->hidden_size < 1 || job->vocab < 1 || job->repeats < 1)
      throw_invalid("tokens, hiddenSize, vocabSize and repeats must be >= 1");
    return PromiseWorker<BenchJob>::start(
        info.Env(), std::move(job), {}, /*grad_mode=*/true, run_bench,
        [](Napi::Env env, BenchJob& j) -> Napi::Value {
          Napi::Object out = Napi::Object::New(env);
          Napi::Array times = Napi::Array::New(env, j.times_ms.size());
          for (size_t i = 0; i < j.times_ms.size(); ++i) times.Set(uint32_t(i), j.times_ms[i]);
          out.Set("timesMs", times);
          out.Set("peakExtraBytes", double(j.peak_extra_bytes));
          out.Set("gradientBytes", double((j.tokens + j.vocab) * j.hidden_size * 4));
          out.Set("loss", j.loss);
          return out;
        });
  });
}

}  // namespace

void register_bench(Napi::Env env, Napi::Object exports) {
  exports.Set("benchPolicyLoss", Napi::Function::New(env, BenchPolicyLoss));
}

}  // namespace swerl::js
