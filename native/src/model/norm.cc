#include "model/norm.h"

#include <torch/csrc/autograd/custom_function.h>

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/cuda_build.h"
#include "core/profile.h"
#include "core/swerl_error.h"

#ifdef SWERL_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#endif

namespace swerl {

namespace {

// ---- the CPU twins of model/norm.cu: the same loops, one row at a time ----

template <typename T>
float round_to(float v) {
  return float(T(v));
}

template <typename T>
void twin_forward(const NormRows& s, const T* x, const T* weight, const T* cos, const T* sin, T* y, float* rstd_out) {
  const int64_t W = s.width, half = W / 2;
  std::vector<float> stage(static_cast<size_t>(W));
  for (int64_t row = 0; row < s.rows; ++row) {
    const T* xr = x + row * W;
    float rstd = 1.0f;
    if (weight != nullptr) {
      float squares = 0.0f;
      for (int64_t h = 0; h < W; ++h) squares += float(xr[h]) * float(xr[h]);
      rstd = 1.0f / std::sqrt(squares / float(W) + s.eps);
      if (rstd_out != nullptr) rstd_out[row] = rstd;
    }
    for (int64_t h = 0; h < W; ++h)
      stage[h] = weight != nullptr ? round_to<T>(float(weight[h]) * round_to<T>(float(xr[h]) * rstd)) : float(xr[h]);
    const T* c = cos != nullptr ? cos + ((row / s.heads) % s.rotary_rows) * W : nullptr;
    const T* sn = sin != nullptr ? sin + ((row / s.heads) % s.rotary_rows) * W : nullptr;
    for (int64_t h = 0; h < W; ++h) {
      if (s.rotary_rows == 0) {
        y[row * W + h] = T(stage[h]);
        continue;
      }
      const float rotated = h < half ? -stage[h + half] : stage[h - half];
      y[row * W + h] = T(round_to<T>(stage[h] * float(c[h])) + round_to<T>(rotated * float(sn[h])));
    }
  }
}

template <typename T>
void twin_backward(const NormRows& s, const T* dy, const T* x, const T* weight, const T* cos, const T* sin,
                   const float* rstd_in, T* dx, float* dweight) {
  const int64_t W = s.width, half = W / 2;
  std::vector<float> dv(static_cast<size_t>(W));
  for (int64_t row = 0; row < s.rows; ++row) {
    const T* dyr = dy + row * W;
    if (s.rotary_rows > 0) {
      const int64_t table = ((row / s.heads) % s.rotary_rows) * W;
      for (int64_t h = 0; h < W; ++h) {
        const int64_t partner = h < half ? h + half : h - half;
        const float sign = h < half ? 1.0f : -1.0f;
        dv[h] = float(dyr[h]) * float(cos[table + h]) + sign * float(dyr[partner]) * float(sin[table + partner]);
      }
    } else {
      for (int64_t h = 0; h < W; ++h) dv[h] = float(dyr[h]);
    }
    if (weight == nullptr) {
      for (int64_t h = 0; h < W; ++h) dx[row * W + h] = T(dv[h]);
      continue;
    }
    const float rstd = rstd_in[row];
    float dot = 0.0f;
    for (int64_t h = 0; h < W; ++h) dot += dv[h] * float(weight[h]) * (float(x[row * W + h]) * rstd);
    dot /= float(W);
    for (int64_t h = 0; h < W; ++h) {
      const float n = float(x[row * W + h]) * rstd;
      dx[row * W + h] = T(rstd * (dv[h] * float(weight[h]) - n * dot));
      dweight[h] += dv[h] * round_to<T>(n);
    }
  }
}

const void* data_or_null(const at::Tensor& t) { return t.defined() ? t.data_ptr() : nullptr; }

template <typename T>
T* typed_or_null(const at::Tensor& t) { return t.defined() ? t.data_ptr<T>() : nullptr; }

void check_rows(const NormRows& s, const at::Tensor& x, const at::Tensor& weight, const at::Tensor& cos,
                const at::Tensor& sin) {
  auto same = [&](const at::Tensor& t) {
    return !t.defined() || (t.scalar_type() == x.scalar_type() && t.device() == x.device() && t.is_contiguous());
  };
  if (x.scalar_type() != at::kFloat && x.scalar_type() != at::kBFloat16)
    throw_invalid("norm rows: x must be float32 or bfloat16");
  if (!x.is_contiguous() || x.numel() != s.rows * s.width || !same(weight) || !same(cos) || !same(sin))
    throw_invalid("norm rows: x [rows, width], weight, cos and sin contiguous, of one dtype and device");
  if (weight.defined() && weight.numel() != s.width) throw_invalid("norm rows: weight must have width values");
  if (s.rotary_rows > 0 && (!cos.defined() || !sin.defined() || cos.numel() != s.rotary_rows * s.width ||
                            sin.numel() != cos.numel()))
    throw_invalid("norm rows: cos and sin must be [rotary_rows, width]");
  if (s.rotary_rows > 0 && (s.rows / s.heads) % s.rotary_rows != 0)
    throw_invalid("norm rows: rotary rows must divide the tokens (rows / heads)");
}

NormDtype norm_dtype(const at::Tensor& x) {
  return x.scalar_type() == at::kBFloat16 ? NormDtype::BFloat16 : NormDtype::Float32;
}

}  // namespace

NormForward norm_rows_forward(NormRows s, const at::Tensor& x, const at::Tensor& weight, const at::Tensor& cos,
                              const at::Tensor& sin) {
  s.dtype = norm_dtype(x);
  check_rows(s, x, weight, cos, sin);
  NormForward out{at::empty_like(x), weight.defined() ? at::empty({s.rows}, x.options().dtype(at::kFloat)) : at::Tensor()};
  if (x.is_cuda()) {
#ifdef SWERL_WITH_CUDA
    const c10::cuda::CUDAGuard guard(x.device());
    cuda::norm_rows_forward(s, x.data_ptr(), data_or_null(weight), data_or_null(cos), data_or_null(sin),
                            out.y.data_ptr(), typed_or_null<float>(out.rstd), at::cuda::getCurrentCUDAStream());
    return out;
#else
    throw_no_cuda_kernels();
#endif
  }
  if (!x.device().is_cpu()) throw_invalid("norm rows: tensors on the CPU or a CUDA device");
  if (s.dtype == NormDtype::BFloat16) {
    using T = c10::BFloat16;
    twin_forward<T>(s, x.data_ptr<T>(), typed_or_null<T>(weight), typed_or_null<T>(cos), typed_or_null<T>(sin),
                    out.y.data_ptr<T>(), typed_or_null<float>(out.rstd));
  } else {
    twin_forward<float>(s, x.data_ptr<float>(), typed_or_null<float>(weight), typed_or_null<float>(cos),
                        typed_or_null<float>(sin), out.y.data_ptr<float>(), typed_or_null<float>(out.rstd));
  }
  return out;
}

NormBackward norm_rows_backward(NormRows s, const at::Tensor& dy, const at::Tensor& x, const at::Tensor& weight,
                                const at::Tensor& cos, const at::Tensor& sin, const at::Tensor& rstd) {
  s.dtype = norm_dtype(x);
  check_rows(s, x, weight, cos, sin);
  if (!dy.is_contiguous() || dy.sizes() != x.sizes() || dy.scalar_type() != x.scalar_type())
    throw_invalid("norm rows: dy must be contiguous and shaped and typed as x");
  if (weight.defined() && (!rstd.defined() || rstd.numel() != s.rows || rstd.scalar_type() != at::kFloat))
    throw_invalid("norm rows: the backward with a weight needs the forward's rstd");
  NormBackward out{at::empty_like(x), at::Tensor()};
  if (x.is_cuda()) {
#ifdef SWERL_WITH_CUDA
    const c10::cuda::CUDAGuard guard(x.device());
    at::Tensor partials;
    if (weight.defined())
      partials = at::empty({cuda::norm_rows_backward_blocks(s), s.width}, x.options().dtype(at::kFloat));
    cuda::norm_rows_backward(s, dy.data_ptr(), x.data_ptr(), data_or_null(weight), data_or_null(cos),
                             data_or_null(sin), typed_or_null<float>(rstd), out.dx.data_ptr(),
                             typed_or_null<float>(partials), at::cuda::getCurrentCUDAStream());
    if (weight.defined()) out.dweight = partials.sum(0);
    return out;
#else
    throw_no_cuda_kernels();
#endif
  }
  if (!x.device().is_cpu()) throw_invalid("norm rows: tensors on the CPU or a CUDA device");
  if (weight.defined()) out.dweight = at::zeros({s.width}, x.options().dtype(at::kFloat));
  float* dweight = typed_or_null<float>(out.dweight);
  if (s.dtype == NormDtype::BFloat16) {
    using T = c10::BFloat16;
    twin_backward<T>(s, dy.data_ptr<T>(), x.data_ptr<T>(), typed_or_null<T>(weight), typed_or_null<T>(cos),
                     typed_or_null<T>(sin), typed_or_null<float>(rstd), out.dx.data_ptr<T>(), dweight);
  } else {
    twin_backward<float>(s, dy.data_ptr<float>(), x.data_ptr<float>(), typed_or_null<float>(weight),
                         typed_or_null<float>(cos), typed_or_null<float>(sin), typed_or_null<float>(rstd),
                         out.dx.data_ptr<float>(), dweight);
  }
  return out;
}

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

NormRows rows_of(const at::Tensor& x, int64_t heads, int64_t rotary_rows, double eps) {
  NormRows s;
  s.width = x.size(-1);
  s.rows = s.width > 0 ? x.numel() / s.width : 0;
  s.heads = heads;
  s.rotary_rows = rotary_rows;
  s.eps = float(eps);
  return s;
}

// An autograd function's tensor inputs must all be defined (libtorch 2.11 reads each one's
// device): an absent weight, cos or sin crosses as an empty tensor.
at::Tensor or_empty(const at::Tensor& t, const at::Tensor& like) { return t.defined() ? t : at::empty({0}, like.options()); }
at::Tensor or_undefined(const at::Tensor& t) { return t.numel() > 0 ? t : at::Tensor(); }

// The kernels under autograd: x's gradient from the backward kernel, weight's from its per-block
// sums; cos and sin are constants of the positions.
struct NormRowsFunction : public torch::autograd::Function<NormRowsFunction> {
  static variable_list forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& weight_in,
                               const at::Tensor& cos_in, const at::Tensor& sin_in, int64_t heads,
                               int64_t rotary_rows, double eps) {
    const at::Tensor weight = or_undefined(weight_in), cos = or_undefined(cos_in), sin = or_undefined(sin_in);
    const NormRows s = rows_of(x, heads, rotary_rows, eps);
    NormForward f = norm_rows_forward(s, x, weight, cos, sin);
    ctx->save_for_backward({x, weight_in, cos_in, sin_in, or_empty(f.rstd, x)});
    ctx->saved_data["heads"] = heads;
    ctx->saved_data["rotary_rows"] = rotary_rows;
    ctx->saved_data["eps"] = eps;
    return {f.y};
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor& x = saved[0];
    const NormRows s = rows_of(x, ctx->saved_data["heads"].toInt(), ctx->saved_data["rotary_rows"].toInt(),
                               ctx->saved_data["eps"].toDouble());
    NormBackward b = norm_rows_backward(s, grads[0].contiguous(), x, or_undefined(saved[1]), or_undefined(saved[2]),
                                        or_undefined(saved[3]), or_undefined(saved[4]));
    at::Tensor dweight = b.dweight.defined() ? b.dweight.to(saved[1].scalar_type()) : at::Tensor();
    return {b.dx, dweight, at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

at::Tensor fused(const at::Tensor& x_in, const at::Tensor& weight_in, const at::Tensor& cos, const at::Tensor& sin,
                 int64_t heads, int64_t rotary_rows, double eps) {
  const int64_t width = x_in.size(-1);
  const at::Tensor x = x_in.contiguous().view({-1, width});
  const at::Tensor weight = weight_in.defined() ? weight_in.contiguous() : at::Tensor();
  const at::Tensor c = cos.defined() ? cos.contiguous().view({-1, width}) : at::Tensor();
  const at::Tensor s = sin.defined() ? sin.contiguous().view({-1, width}) : at::Tensor();
  const bool grad = at::GradMode::is_enabled() && (x.requires_grad() || (weight.defined() && weight.requires_grad()));
  at::Tensor y = grad ? NormRowsFunction::apply(x, or_empty(weight, x), or_empty(c, x), or_empty(s, x), heads, rotary_rows, eps)[0]
                      : norm_rows_forward(rows_of(x, heads, rotary_rows, eps), x, weight, c, s).y;
  return y.view(x_in.sizes());
}

at::Tensor aten_rms_norm(const at::Tensor& x, const at::Tensor& weight, double eps) {
  const at::Tensor x32 = x.to(at::kFloat);
  const at::Tensor normed = x32 * at::rsqrt(x32.pow(2).mean(-1, true) + eps);
  return weight * normed.to(x.scalar_type());
}

}  // namespace

bool fused_norms(const at::Tensor& x) {
  static const bool aten_asked = [] {
    const char* v = std::getenv("SWERL_ATEN_NORMS");
    return v != nullptr && std::string(v) == "1";
  }();
  return !aten_asked && has_cuda_kernels() && x.is_cuda() && (x.scalar_type() == at::kFloat || x.scalar_type() == at::kBFloat16);
}

at::Tensor rms_norm(const at::Tensor& x, const at::Tensor& weight, double eps) {
  profile::Phase phase("norm");
  if (fused_norms(x) && weight.scalar_type() == x.scalar_type())
    return fused(x, weight, at::Tensor(), at::Tensor(), 1, 0, eps);
  return aten_rms_norm(x, weight, eps);
}

at::Tensor norm_rotary(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& cos, const at::Tensor& sin,
                       double eps) {
  profile::Phase phase("rotary");
  const int64_t B = x.size(0), T = x.size(1), heads = x.size(2), D = x.size(3);
  const int64_t tables = cos.numel() / D;
  if (tables != T && tables != B * T) throw_invalid("norm_rotary: cos and sin must be [T, D] or [B, T, D]");
  if (fused_norms(x) && D <= cuda::kMaxRotaryWidth && cos.scalar_type() == x.scalar_type() &&
      (!weight.defined() || weight.scalar_type() == x.scalar_type()))
    return fused(x, weight, cos, sin, heads, tables, eps);
  const at::Tensor normed = weight.defined() ? aten_rms_norm(x, weight, eps) : x;
  // rotate_half(v) = cat(-v2, v1) over the last dimension, v = cat(v1, v2).
  const at::Tensor c = cos.reshape({tables == T ? 1 : B, T, 1, D}), s = sin.reshape({tables == T ? 1 : B, T, 1, D});
  const int64_t half = D / 2;
  const at::Tensor rotated = at::cat({normed.narrow(-1, half, half).neg(), normed.narrow(-1, 0, half)}, -1);
  return normed * c + rotated * s;
}

}  // namespace swerl
