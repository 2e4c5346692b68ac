// swerl_policy_bench: the native policy's train step and generation, timed without Node, with
// --profile saying where each step's time goes (core/profile.h: phases timed by CUDA events on
// the GPU, by the host clock on the CPU). Runs where the addon's Node is not installed (a GPU
// machine); bench:policy-cuda is the same measurement through the JS API.
//
//   swerl_policy_bench [--device cuda|cpu] [--model qwen3-0.6b|tiny] [--train 4x4096,1x16384|none]
//                      [--batches 1,16,64] [--prompt 128] [--new 64] [--repeats 3] [--profile]
//                      [--decode off|static|graphs] [--ragged] [--out FILE.json]
//
// --ragged: each train step's sequences get lengths drawn from [length/2, 3 length/2] (the mean
// is the shape's), new ones every step, as RL batches bring them; without it every sequence has
// the shape's length and every step the same shapes.
//
// --decode: how decode steps run (model/decode_graphs.h); the default is the policy's own
// (graphs on CUDA, off on the CPU).
//
// Train steps: random tokens, on-policy old logprobs, the fused GRPO++ loss, AdamW; bf16 compute
// with fp32 masters on CUDA, fp32 on the CPU. Generation: `batch` requests of `prompt` random
// tokens admitted together, each sampled at temperature 1 to `new` tokens (prefill included in
// tokens/s, as bench:policy-cuda counts it); the profile covers the decode steps. MFU counts
// 6 x parameters per token plus causal attention (6 L heads head_dim T^2 per sequence) against
// 989 TFLOP/s (H100/H200 SXM dense bf16); the loss's recompute is not counted.
#include <ATen/ATen.h>
#include <c10/core/GradMode.h>
#include <torch/version.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#ifdef SWERL_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <cuda_runtime.h>
#endif

#include "core/profile.h"
#include "model/policy.h"
#include "tool_args.h"
#include "loss_cases.h"

namespace {

using namespace swerl;
using tools::median;
using tools::parse_list;

constexpr double kPeakFlops = 989e12;

struct TrainShape {
  int64_t sequences, length;
};

struct Config {
  std::string device = "cuda", model = "qwen3-0.6b", out;
  std::vector<TrainShape> train = {{4, 4096}, {1, 16384}};
  std::vector<int64_t> batches = {1, 16, 64};
  int64_t prompt = 128, fresh = 64;
  int repeats = 3;
  bool profile = false, ragged = false;
  std::string decode;  // empty: the policy's default
};

ModelConfig model_config(const std::string& name) {
  ModelConfig m;
  m.vocab_size = 151936, m.hidden_size = 1024, m.intermediate_size = 3072, m.num_layers = 28;
  m.num_heads = 16, m.num_kv_heads = 8, m.head_dim = 128, m.rope_theta = 1e6, m.rms_norm_eps = 1e-6;
  m.tie_word_embeddings = true, m.qk_norm = true;
  if (name == "tiny") {
    m.vocab_size = 512, m.hidden_size = 64, m.intermediate_size = 128, m.num_layers = 2;
    m.num_heads = 4, m.num_kv_heads = 2, m.head_dim = 16;
  } else if (name != "qwen3-0.6b") {
    throw std::runtime_error("--model must be qwen3-0.6b or tiny, not '" + name + "'");
  }
  return m;
}

std::vector<TrainShape> parse_shapes(const std::string& s) {
  std::vector<TrainShape> out;
  if (s == "none") return out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');) {
    const size_t x = item.find('x');
    if (x == std::string::npos) throw std::runtime_error("--train takes SEQUENCESxLENGTH,..., e.g. 4x4096");
    out.push_back({std::stoll(item.substr(0, x)), std::stoll(item.substr(x + 1))});
  }
  return out;
}

void synchronize(const at::Device& device) {
#ifdef SWERL_WITH_CUDA
  if (device.is_cuda()) cudaDeviceSynchronize();
#endif
}

// Median wall seconds of f, the device drained before and after each run, after one warm-up.
double time_seconds(const at::Device& device, int repeats, const std::function<void()>& f) {
  f();
  std::vector<double> times;
  for (int i = 0; i < repeats; ++i) {
    synchronize(device);
    const auto t0 = std::chrono::steady_clock::now();
    f();
    synchronize(device);
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return median(times);
}

std::string json_string(const std::string& s) { return "\"" + s + "\""; }

// Phases of `steps` steps of f, per step: a table, and the JSON array.
std::string profile_phases(const at::Device& device, int64_t steps, const std::function<void()>& f, const std::string& title) {
  std::vector<profile::PhaseTime> phases;
  {
    synchronize(device);
    profile::Recording recording(device);
    f();
    phases = recording.collect();
  }
  double total = 0;
  for (const auto& p : phases) total += p.ms;
  std::sort(phases.begin() + 1, phases.end(), [](const auto& a, const auto& b) { return a.ms > b.ms; });
  std::printf("\n%s: %.3f ms a step under the profiler, %.1f%% in named phases\n", title.c_str(),
              total / double(steps), 100.0 * (1.0 - phases[0].ms / total));
  std::printf("  %-20s %10s %7s %13s %9s\n", "phase", "ms/step", "share", "host ms/step", "entries");
  std::ostringstream json;
  json.precision(10);
  json << "[";
  for (size_t i = 0; i < phases.size(); ++i) {
    const auto& p = phases[i];
    std::printf("  %-20s %10.3f %6.1f%% %13.3f %9.1f\n", p.name.c_str(), p.ms / double(steps), 100.0 * p.ms / total,
                p.host_ms / double(steps), double(p.count) / double(steps));
    json << (i ? "," : "") << "{\"phase\":" << json_string(p.name) << ",\"msPerStep\":" << p.ms / double(steps)
         << ",\"hostMsPerStep\":" << p.host_ms / double(steps)
         << ",\"share\":" << p.ms / total << ",\"entriesPerStep\":" << double(p.count) / double(steps) << "}";
  }
  json << "]";
  return json.str();
}

}  // namespace

int main(int argc, char** argv) try {
  Config c;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto next = [&] { return tools::flag_value(i, argc, argv); };
    if (a == "--device") c.device = next();
    else if (a == "--model") c.model = next();
    else if (a == "--train") c.train = parse_shapes(next());
    else if (a == "--batches") c.batches = parse_list(next());
    else if (a == "--prompt") c.prompt = std::stoll(next());
    else if (a == "--new") c.fresh = std::stoll(next());
    else if (a == "--repeats") c.repeats = std::stoi(next());
    else if (a == "--profile") c.profile = true;
    else if (a == "--ragged") c.ragged = true;
    else if (a == "--decode") c.decode = next();
    else if (a == "--out") c.out = next();
    else {
      std::fprintf(stderr,
                   "usage: swerl_policy_bench [--device cuda|cpu] [--model qwen3-0.6b|tiny] [--train 4x4096,...] "
                   "[--batches 1,16,64] [--prompt N] [--new N] [--repeats N] [--profile] [--decode off|static|graphs] [--ragged] [--out FILE]\n");
      return 2;
    }
  }
  if (c.device != "cuda" && c.device != "cpu") throw std::runtime_error("--device must be cuda or cpu");
  if (c.repeats < 1 || c.prompt < 1 || c.fresh < 2) throw std::runtime_error("--repeats, --prompt >= 1 and --new >= 2");
  const at::Device device = c.device == "cuda" ? at::Device(at::kCUDA, 0) : at::Device(at::kCPU);
  const ModelConfig mc = model_config(c.model);
  PolicyOptions po;
  po.device = device;
  po.compute_dtype = device.is_cuda() ? at::kBFloat16 : at::kFloat;
  Policy policy(mc, po);
  policy.init_random(0.02, 1);
  int64_t params = 0;
  for (const at::Tensor& p : policy.model().parameters()) params += p.numel();
  std::mt19937_64 random(1234);
  const auto token = [&] { return int32_t(random() % uint64_t(mc.vocab_size)); };

  std::string device_name = c.device;
#ifdef SWERL_WITH_CUDA
  if (device.is_cuda()) device_name = at::cuda::getCurrentDeviceProperties()->name;
#endif
  std::printf("# swerl_policy_bench: %s model (%.1fM parameters) on %s, %s compute, libtorch %s\n", c.model.c_str(),
              double(params) / 1e6, device_name.c_str(), device.is_cuda() ? "bf16" : "fp32", TORCH_VERSION);
  std::ostringstream json;
  json.precision(10);
  json << "{\"device\":" << json_string(device_name) << ",\"torch\":" << json_string(TORCH_VERSION)
       << ",\"model\":" << json_string(c.model) << ",\"params\":" << params << ",\"train\":[";

  std::printf("\n%-12s %8s %9s %10s %9s %6s\n", "train step", "tokens", "seconds", "tokens/s", "TFLOP/s", "MFU");
  for (size_t s = 0; s < c.train.size(); ++s) {
    const TrainShape shape = c.train[s];
    TrainOptions options;
    options.loss = grpo_pp_case();
    options.micro_batch_tokens = 16384;
    options.adamw.lr = 1e-6;
    // One batch, or (--ragged) one for each step timed: the warm-up, the repeats, the profile's.
    const int64_t batch_count = c.ragged ? c.repeats + 2 : 1;
    std::vector<TrainBatch> batches(batch_count);
    double tokens = 0, square_tokens = 0;  // a batch's mean tokens and sum of squared lengths
    for (TrainBatch& batch : batches) {
      batch.sequences.offsets = {0};
      std::vector<int64_t> lengths(shape.sequences, shape.length);
      if (c.ragged)
        for (int64_t& length : lengths) length = shape.length / 2 + int64_t(random() % uint64_t(shape.length + 1));
      int64_t weighted = 0;
      for (const int64_t length : lengths) weighted += length - 1;
      for (int64_t q = 0; q < shape.sequences; ++q) {
        const int64_t length = lengths[q];
        for (int64_t j = 0; j < length; ++j) batch.sequences.tokens.push_back(token());
        batch.sequences.offsets.push_back(int64_t(batch.sequences.tokens.size()));
        for (int64_t j = 0; j < length; ++j) {
          batch.weights.push_back(j == 0 ? 0.0f : float(1.0 / double(weighted)));
          batch.advantages.push_back(q % 2 ? -1.0f : 1.0f);
        }
        tokens += double(length) / double(batch_count);
        square_tokens += double(length) * double(length) / double(batch_count);
      }
      batch.old_logprobs = policy.logprobs(batch.sequences, 1.0, options.micro_batch_tokens, true);
    }
    size_t next_batch = 0;
    const auto step = [&] { policy.train_step(batches[next_batch++ % batches.size()], options); };
    const double seconds = time_seconds(device, c.repeats, step);
    const double flops = 6.0 * double(params) * tokens +
                         6.0 * double(mc.num_layers * mc.num_heads * mc.head_dim) * square_tokens;
    std::printf("%3lld x %-6lld %8.0f %9.3f %10.0f %9.1f %5.1f%%\n", (long long)shape.sequences,
                (long long)shape.length, tokens, seconds, tokens / seconds, flops / seconds / 1e12,
                100.0 * flops / seconds / kPeakFlops);
    json << (s ? "," : "") << "{\"sequences\":" << shape.sequences << ",\"length\":" << shape.length
         << ",\"ragged\":" << (c.ragged ? "true" : "false")
         << ",\"seconds\":" << seconds << ",\"tokensPerSecond\":" << tokens / seconds
         << ",\"tflops\":" << flops / seconds / 1e12 << ",\"mfu\":" << flops / seconds / kPeakFlops;
    if (c.profile) {
      const std::string title = "train step " + std::to_string(shape.sequences) + " x " + std::to_string(shape.length) +
                                (c.ragged ? " (ragged)" : "");
      json << ",\"phases\":" << profile_phases(device, 1, step, title);
    }
    json << "}";
  }

  Generator& generator = policy.generator();
  if (c.decode == "off") generator.set_decode_mode(DecodeMode::Off);
  else if (c.decode == "static") generator.set_decode_mode(DecodeMode::Static);
  else if (c.decode == "graphs") generator.set_decode_mode(DecodeMode::Graphs);
  else if (!c.decode.empty()) throw std::runtime_error("--decode must be off, static or graphs, not '" + c.decode + "'");
  const char* modes[] = {"off", "static", "graphs"};
  json << "],\"decode\":" << json_string(modes[int(generator.decode_mode())]) << ",\"generation\":[";
  for (size_t b = 0; b < c.batches.size(); ++b) {
    const int64_t batch = c.batches[b];
    std::vector<GenerationRequest> requests(static_cast<size_t>(batch));
    for (int64_t r = 0; r < batch; ++r) {
      requests[r].id = r;
      for (int64_t j = 0; j < c.prompt; ++j) requests[r].prompt.push_back(token());
      requests[r].sampling.seed = uint64_t(r + 1);
    }
    const auto decode_steps = [&] {
      for (int64_t t = 1; t < c.fresh; ++t) generator.step({}, {});
    };
    const auto generate = [&] {
      generator.reset();
      generator.step({}, requests);  // prefill and the first token
      decode_steps();
    };
    c10::NoGradGuard no_grad;
    const double seconds = time_seconds(device, c.repeats, generate);
    const double rate = double(batch * c.fresh) / seconds;
    std::printf("%sgeneration batch %-4lld prompt %lld, %lld new: %.3f s, %.1f tokens/s\n", b ? "" : "\n",
                (long long)batch, (long long)c.prompt, (long long)c.fresh, seconds, rate);
    json << (b ? "," : "") << "{\"batch\":" << batch << ",\"promptTokens\":" << c.prompt << ",\"newTokens\":" << c.fresh
         << ",\"seconds\":" << seconds << ",\"tokensPerSecond\":" << rate;
    if (c.profile) {
      generator.reset();
      generator.step({}, requests);
      json << ",\"decodePhases\":"
           << profile_phases(device, c.fresh - 1, decode_steps, "decode step, batch " + std::to_string(batch));
    }
    json << "}";
  }
  json << "]}\n";
  if (!c.out.empty()) {
    const std::string tmp = c.out + ".tmp";
    std::ofstream(tmp) << json.str();
    std::rename(tmp.c_str(), c.out.c_str());
    std::printf("\nwrote %s\n", c.out.c_str());
  }
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "swerl_policy_bench: %s\n", e.what());
  return 1;
}
