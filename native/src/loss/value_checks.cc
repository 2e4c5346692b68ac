#include "loss/value_checks.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <utility>

#include "core/swerl_error.h"

namespace swerl {

namespace {

// As JavaScript prints it: NaN, Infinity, -Infinity, else the shortest round trip of a float.
std::string js_number(double x) {
  if (std::isnan(x)) return "NaN";
  if (std::isinf(x)) return x > 0 ? "Infinity" : "-Infinity";
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", x);
  return text;
}

std::string indexed(const char* name, int64_t i) { return std::string(name) + "[" + std::to_string(i) + "]"; }

const char* dtype_name(at::ScalarType t) {
  return t == at::kHalf ? "float16" : t == at::kBFloat16 ? "bfloat16" : "float32";
}

[[noreturn]] void throw_numeric(const NumericScope& scope, const std::string& what, double value) {
  const std::string fix =
      scope.dtype == at::kHalf
          ? "float16 overflows past 65504: use dtype \"bfloat16\" (float32's range) or \"float32\", "
            "or scale the advantages and weights down"
          : "the inputs are past float32's range: scale the advantages, weights or logits down "
            "(advantages normalized per group and weights summing to 1 keep every term O(1))";
  throw Error("ERR_SWERL_NUMERIC", scope.api + ": " + what + " is " + js_number(value) + " in " +
                                       dtype_name(scope.dtype) + "; " + fix);
}

}  // namespace

void check_token_values(int64_t n, const float* old_logprobs, const float* advantages,
                        const float* weights, const float* ref_logprobs) {
  const auto logprobs = [&](const float* values, const char* name) {
    for (int64_t i = 0; i < n; ++i) {
      if (!std::isfinite(values[i]))
        throw_invalid(indexed(name, i) + " is " + js_number(values[i]) + "; every value must be a finite number");
      if (values[i] > kLogprobSlack)
        throw_invalid(indexed(name, i) + " is " + js_number(values[i]) +
                      ", which no log-probability can be; logprobs are <= 0 (1e-4 of slack)");
    }
  };
  logprobs(old_logprobs, "oldLogprobs");
  if (ref_logprobs) logprobs(ref_logprobs, "refLogprobs");
  for (int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(advantages[i]))
      throw_invalid(indexed("advantages", i) + " is " + js_number(advantages[i]) + "; every value must be a finite number");
    if (!(weights[i] >= 0.0f && std::isfinite(weights[i])))
      throw_invalid(indexed("weights", i) + " is " + js_number(weights[i]) + "; weights are finite and >= 0");
  }
}

void require_finite(const at::Tensor& t, const char* name, const NumericScope& scope) {
  if (t.numel() == 0) return;
  // A sum meets every Inf and NaN (Inf + x = Inf, Inf - Inf = NaN), so a finite sum proves
  // every element finite in one pass with no temporary. A sum past the dtype's range proves
  // nothing; only then is each element looked at.
  if (std::isfinite(t.sum().item<double>())) return;
  const at::Tensor flat = t.reshape({-1});
  const at::Tensor bad = at::isfinite(flat).logical_not().nonzero();
  if (bad.numel() == 0) return;
  const int64_t i = bad[0][0].item<int64_t>();
  throw_numeric(scope, indexed(name, i), flat[i].item<double>());
}

void require_finite_forward(const LossStats& s, const at::Tensor& logprobs,
                            const at::Tensor& entropy, const NumericScope& scope) {
  if (!std::isfinite(s.loss)) throw_numeric(scope, "the loss", s.loss);
  for (const auto& [name, value] :
       {std::pair{"stats.approxKl", s.approx_kl}, {"stats.ratioMean", s.ratio_mean},
        {"stats.ratioMax", s.ratio_max}, {"stats.entropyMean", s.entropy_mean},
        {"stats.clipFracLow", s.clip_frac_low}, {"stats.clipFracHigh", s.clip_frac_high}}) {
    if (!std::isfinite(value)) throw_numeric(scope, name, value);
  }
  require_finite(logprobs, "logprobs", scope);
  require_finite(entropy, "entropy", scope);
}

bool fused_grad_weight_bounded(const FusedLinearForward& f, const at::Tensor& hidden) {
  if (hidden.numel() == 0) return true;
  at::Tensor dz = f.logit_coef.abs().to(at::kDouble);
  if (f.has_entropy_term)
    dz = dz + f.entropy_coef.abs().to(at::kDouble) * (f.entropy.abs().to(at::kDouble) + 1.0 / M_E);
  const double bound =
      double(hidden.size(0)) * dz.max().item<double>() * hidden.abs().max().item<double>();
  // A factor 4 below float32's largest value covers the rounding of every product and sum.
  return std::isfinite(bound) && bound < double(std::numeric_limits<float>::max()) / 4;
}

}  // namespace swerl
