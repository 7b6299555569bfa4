// Lowering rules for reductions and normalisations (sum/mean, max/min, prod,
// var/std, softmax, layer/batch/rms norm, max_pool2d) into kernel IR Reduce
// nodes and the elementwise algebra around them; see AtenLowering.cpp for how
// arguments bind and how dtypes follow ATen.
#include <limits>

#include "AtenLoweringImpl.h"

namespace xacc::backend::mlir::lowering {

namespace {

/// softmax along `dim`: exp(x - max) / sum(exp(x - max)). With `safe`,
/// ATen's _safe_softmax (what scaled_dot_product_attention's math path
/// uses): rows whose elements are all -inf (fully masked) give 0, not NaN.
/// A row is all -inf exactly when its max is -inf (a NaN makes the max NaN,
/// and such a row stays NaN in both), so the max computed for the softmax
/// decides it and the fix costs one compare and select per element.
int softmax(Lowerer& L, int x, int dim, bool log, bool safe = false) {
  int m = L.reduce("max", x, {dim}, true);
  int s = L.bin("sub", x, m);
  int e = L.un("exp", s);
  int z = L.reduce("sum", e, {dim}, true);
  int y = log ? L.bin("sub", s, L.un("log", z)) : L.bin("div", e, z);
  if (!safe) return y;
  int masked = L.cmp("eq", m, L.cnst(-std::numeric_limits<double>::infinity(), m));
  return L.select(masked, L.cnst(0, y), y);
}

Rule sumRule(bool mean) {
  return [mean](Lowerer& L, const Args& a) {
    int x = a.value("self");
    DType rd = a.resultDType();
    DType acc = isFloatD(rd) ? opmath(rd) : DType::I64;
    x = L.cast(x, acc);
    std::vector<int> dims = reduceDims(a, "dim", L.shape(x).size());
    int s = L.reduce("sum", x, dims, a.flag("keepdim", false));
    if (mean) s = L.bin("div", s, L.cnst(sizeOf(L, x, dims), s));
    return std::vector<int>{L.cast(s, rd)};
  };
}
Rule minmaxReduce(const char* op) {
  return [op](Lowerer& L, const Args& a) {
    int x = L.cast(a.value("self"), opmath(a.resultDType()));
    std::vector<int> dims = reduceDims(a, "dim", L.shape(x).size());
    if (numelOf(L.shape(x)) == 0) throw Failure{"max/min of an empty tensor"};
    return std::vector<int>{finish(L, a, L.reduce(op, x, dims, a.flag("keepdim", false)))};
  };
}
Rule softmaxRule(bool log, bool safe = false) {
  return [log, safe](Lowerer& L, const Args& a) {
    int x = in(L, a, "self");
    int dim = normDim(static_cast<int64_t>(a.number("dim", 0)), L.shape(x).size());
    if (L.shape(x).empty()) throw Failure{"softmax of a 0-dim tensor"};
    return std::vector<int>{finish(L, a, softmax(L, x, dim, log, safe))};
  };
}
/// _softmax_backward_data / _log_softmax_backward_data of grad_output g and the
/// forward's output y: y * (g - sum(g * y)), or g - exp(y) * sum(g).
Rule softmaxBackwardRule(bool log) {
  return [log](Lowerer& L, const Args& a) {
    int g = in(L, a, "grad_output"), y = in(L, a, "output");
    if (L.shape(y).empty()) throw Failure{"softmax backward of a 0-dim tensor"};
    std::vector<int> dims{normDim(static_cast<int64_t>(a.number("dim", 0)), L.shape(y).size())};
    int s = L.reduce("sum", log ? g : L.bin("mul", g, y), dims, true);
    int dx = log ? L.bin("sub", g, L.bin("mul", L.un("exp", y), s)) : L.bin("mul", y, L.bin("sub", g, s));
    return std::vector<int>{finish(L, a, dx)};
  };
}
/// var/std: sum((x - mean)^2) / (N - correction).
Rule varRule(bool sqrtOf) {
  return [sqrtOf](Lowerer& L, const Args& a) {
    int x = in(L, a, "self");
    std::vector<int> dims = reduceDims(a, "dim", L.shape(x).size());
    double corr = a.present("correction") ? a.number("correction", 1) : (a.flag("unbiased", true) ? 1 : 0);
    double n = sizeOf(L, x, dims);
    int mean = L.bin("div", L.reduce("sum", x, dims, true), L.cnst(n, x));
    int d = L.bin("sub", x, mean);
    int v = L.bin("div", L.reduce("sum", L.bin("mul", d, d), dims, a.flag("keepdim", false)),
                  L.cnst(std::max(n - corr, 0.0), x));
    return std::vector<int>{finish(L, a, sqrtOf ? L.un("sqrt", v) : v)};
  };
}

/// layer_norm over the last len(normalized_shape) dims of x:
/// (x - mean) * rsqrt(var + eps) * weight + bias.
int layerNorm(Lowerer& L, const Args& a, int x) {
  std::vector<int64_t> ns = a.ints("normalized_shape");
  size_t r = L.shape(x).size();
  if (ns.size() > r || ns.empty()) throw Failure{"layer_norm: bad normalized_shape"};
  std::vector<int> dims;
  for (size_t i = r - ns.size(); i < r; ++i) dims.push_back(static_cast<int>(i));
  double n = sizeOf(L, x, dims);
  int mean = L.bin("div", L.reduce("sum", x, dims, true), L.cnst(n, x));
  int d = L.bin("sub", x, mean);
  int var = L.bin("div", L.reduce("sum", L.bin("mul", d, d), dims, true), L.cnst(n, x));
  int y = L.bin("mul", d, L.un("rsqrt", L.bin("add", var, L.cnst(a.number("eps", 1e-5), x))));
  if (a.present("weight")) y = L.bin("mul", y, L.cast(a.value("weight"), L.dtype(x)));
  if (a.present("bias")) y = L.bin("add", y, L.cast(a.value("bias"), L.dtype(x)));
  return y;
}

}  // namespace

void addReductionRules(RuleTable& t) {
  // Reductions and normalisations.
  t["aten.sum.default"] = t["aten.sum.dim_IntList"] = sumRule(false);
  t["aten.mean.default"] = t["aten.mean.dim"] = sumRule(true);
  t["aten.amax.default"] = minmaxReduce("max");
  t["aten.amin.default"] = minmaxReduce("min");
  t["aten.max.default"] = minmaxReduce("max");
  t["aten.min.default"] = minmaxReduce("min");
  t["aten.prod.default"] = [](Lowerer& L, const Args& a) {
    DType rd = a.resultDType();
    int x = L.cast(a.value("self"), isFloatD(rd) ? opmath(rd) : DType::I64);
    std::vector<int> dims = reduceDims(a, "dim", L.shape(x).size());
    return std::vector<int>{L.cast(L.reduce("prod", x, dims, false), rd)};
  };
  t["aten.var.correction"] = t["aten.var.dim"] = t["aten.var.default"] = varRule(false);
  t["aten.std.correction"] = t["aten.std.dim"] = t["aten.std.default"] = varRule(true);
  t["aten._softmax.default"] = t["aten.softmax.int"] = softmaxRule(false);
  t["aten._log_softmax.default"] = t["aten.log_softmax.int"] = softmaxRule(true);
  t["aten._safe_softmax.default"] = softmaxRule(false, true);
  // Their backward ops (training graphs), in the result's opmath type:
  // softmax dx = y * (g - sum(g * y)), log_softmax dx = g - exp(y) * sum(g).
  t["aten._softmax_backward_data.default"] = softmaxBackwardRule(false);
  t["aten._log_softmax_backward_data.default"] = softmaxBackwardRule(true);
  // layer_norm: (x - mean) * rsqrt(var + eps) * weight + bias over the last
  // dims. native_layer_norm also returns mean and rstd: lowered only when
  // nothing uses them (canLowerNode), so its rule returns the output alone.
  t["aten.layer_norm.default"] = t["aten.native_layer_norm.default"] = [](Lowerer& L, const Args& a) {
    return std::vector<int>{finish(L, a, layerNorm(L, a, in(L, a, "input")))};
  };
  // Batch norm per channel (dim 1), as ATen's CPU kernel computes it: alpha =
  // weight * invstd, beta = bias - mean * alpha, y = x * alpha + beta. In
  // inference mean and var are the running statistics; in training mode the
  // batch's (mean over every dim but 1, biased var), lowered only when no
  // running statistics are given, which ATen would update in place (the
  // weight standardisation of BiT's and ResNetV2's convolutions is such a
  // call). The saved statistics (results 1, 2) must be unused (canLowerNode).
  t["aten.native_batch_norm.default"] = t["aten._native_batch_norm_legit_no_training.default"] =
      [](Lowerer& L, const Args& a) {
        bool training = a.present("training") && a.flag("training", false);
        bool running = a.present("running_mean") && a.present("running_var");
        if (training && (a.present("running_mean") || a.present("running_var")))
          throw Failure{"batch_norm in training mode updating running statistics"};
        if (!training && !running) throw Failure{"batch_norm without running statistics"};
        int x = in(L, a, "input");
        const std::vector<int64_t> s = L.shape(x);  // a copy: adding nodes moves the node vector
        if (s.size() < 2) throw Failure{"batch_norm of a tensor of rank < 2"};
        std::vector<int64_t> chan(s.size() - 1, 1);
        chan[0] = s[1];
        DType d = L.dtype(x);
        auto perChannel = [&](const char* name) {
          int v = L.cast(a.value(name), d);
          if (L.shape(v).size() != 1 || L.shape(v)[0] != s[1]) throw Failure{std::string("batch_norm: ") + name + " is not of size C"};
          return reshape(L, v, chan);
        };
        int mean = -1, var = -1;
        if (training) {
          std::vector<int> dims;
          for (size_t i = 0; i < s.size(); ++i)
            if (i != 1) dims.push_back(static_cast<int>(i));
          double n = sizeOf(L, x, dims);
          if (n < 1) throw Failure{"batch_norm of an empty batch"};
          mean = L.bin("div", L.reduce("sum", x, dims, true), L.cnst(n, x));
          int dev = L.bin("sub", x, mean);
          var = L.bin("div", L.reduce("sum", L.bin("mul", dev, dev), dims, true), L.cnst(n, x));
        } else {
          mean = perChannel("running_mean");
          var = perChannel("running_var");
        }
        int invstd = L.bin("div", L.cnst(1, x), L.un("sqrt", L.bin("add", var, L.cnst(a.number("eps", 1e-5), x))));
        int alpha = a.present("weight") ? L.bin("mul", invstd, perChannel("weight")) : invstd;
        int beta = L.bin("mul", L.un("neg", mean), alpha);
        if (a.present("bias")) beta = L.bin("add", perChannel("bias"), beta);
        return std::vector<int>{finish(L, a, L.bin("add", L.bin("mul", x, alpha), beta))};
      };
  // max_pool2d without padding: the kh*kw strided views x[..., a*dh :: sh,
  // b*dw :: sw] (each an affine index map), scanned in ATen's order (window
  // rows, then columns): a position replaces the running maximum when it is
  // greater or NaN, so ties keep the first position and the last NaN wins,
  // and -0.0/+0.0 ties keep the first, as ATen's CPU kernel does (a
  // maximumf chain would return +0.0). The indices of
  // max_pool2d_with_indices, when used, are the flat positions within each
  // [H, W] plane: the window's row-major origin (an Iota over the output's
  // last two dims) plus the chosen position's offset in the window.
  t["aten.max_pool2d.default"] = t["aten.max_pool2d_with_indices.default"] = [](Lowerer& L, const Args& a) {
    int x = a.value("self");
    std::vector<int64_t> s = L.shape(x);
    size_t r = s.size();
    if (r != 3 && r != 4) throw Failure{"max_pool2d of a tensor of rank " + std::to_string(r)};
    if (!isFloatD(L.dtype(x))) throw Failure{"max_pool2d of a non-float tensor"};
    auto pair = [&](const char* name, std::vector<int64_t> dflt) {
      std::vector<int64_t> v = a.ints(name, dflt);
      if (v.size() == 1) v.push_back(v[0]);
      if (v.size() != 2) throw Failure{std::string("max_pool2d: bad ") + name};
      return v;
    };
    std::vector<int64_t> k = pair("kernel_size", {});
    std::vector<int64_t> st = a.ints("stride");
    st = st.empty() ? k : pair("stride", {});
    std::vector<int64_t> pad = pair("padding", {0, 0}), dil = pair("dilation", {1, 1});
    if (pad[0] != 0 || pad[1] != 0) throw Failure{"max_pool2d with padding"};
    if (k[0] * k[1] > 16 || k[0] < 1 || k[1] < 1 || st[0] < 1 || st[1] < 1 || dil[0] < 1 || dil[1] < 1)
      throw Failure{"max_pool2d: kernel, stride or dilation out of the lowered range"};
    std::vector<int64_t> out = s;
    for (int i = 0; i < 2; ++i) {
      int64_t span = dil[i] * (k[i] - 1) + 1, n = s[r - 2 + i];
      if (n < span) throw Failure{"max_pool2d: input smaller than the window"};
      int64_t floorOut = (n - span) / st[i] + 1;
      // ceil_mode adds a last, partial window when one starts inside the input.
      if (a.flag("ceil_mode", false) && (n - span) % st[i] != 0 && (floorOut * st[i]) < n)
        throw Failure{"max_pool2d: ceil_mode with a partial window"};
      out[r - 2 + i] = floorOut;
    }
    if (numelOf(out) == 0) throw Failure{"max_pool2d of an empty tensor"};
    const ir::Node& node = a.node();
    bool indices = node.numResults() > 1 && !node.result(1)->uses().empty();
    int64_t width = s[r - 1];
    int acc = -1, at = -1;
    for (int64_t i = 0; i < k[0]; ++i)
      for (int64_t j = 0; j < k[1]; ++j) {
        std::vector<AffineIndex> idx;
        for (size_t d = 0; d + 2 < r; ++d) idx.push_back(AffineIndex{static_cast<int>(d), 1, 0});
        idx.push_back(AffineIndex{static_cast<int>(r - 2), st[0], i * dil[0]});
        idx.push_back(AffineIndex{static_cast<int>(r - 1), st[1], j * dil[1]});
        int v = L.view(x, out, idx);
        int offset = indices ? L.constant(static_cast<double>(i * dil[0] * width + j * dil[1]), DType::I64) : -1;
        if (acc < 0) {
          acc = v, at = offset;
          continue;
        }
        int take = L.bin("or", L.cmp("gt", v, acc), L.cmp("ne", v, v));
        acc = L.select(take, v, acc);
        if (indices) at = L.select(take, offset, at);
      }
    if (!indices) return std::vector<int>{acc};
    std::vector<int64_t> coef(r, 0);
    coef[r - 2] = st[0] * width;
    coef[r - 1] = st[1];
    return std::vector<int>{acc, L.bin("add", L.iota(out, coef), at)};
  };
  // rms_norm: x * rsqrt(mean(x^2) + eps) * weight
  t["aten.rms_norm.default"] = [](Lowerer& L, const Args& a) {
    int x = in(L, a, "input");
    std::vector<int64_t> ns = a.ints("normalized_shape");
    size_t r = L.shape(x).size();
    if (ns.size() > r || ns.empty()) throw Failure{"rms_norm: bad normalized_shape"};
    std::vector<int> dims;
    for (size_t i = r - ns.size(); i < r; ++i) dims.push_back(static_cast<int>(i));
    // eps defaults to torch.finfo(dtype).eps of the input.
    double eps = a.present("eps") ? a.number("eps", 0)
                 : L.dtype(x) == DType::F64 ? 2.220446049250313e-16
                 : L.dtype(x) == DType::F32 ? 1.1920928955078125e-07
                 : L.dtype(x) == DType::BF16 ? 0.0078125 : 0.0009765625;
    int ms = L.bin("div", L.reduce("sum", L.bin("mul", x, x), dims, true), L.cnst(sizeOf(L, x, dims), x));
    int y = L.bin("mul", x, L.un("rsqrt", L.bin("add", ms, L.cnst(eps, x))));
    if (a.present("weight")) y = L.bin("mul", y, L.cast(a.value("weight"), L.dtype(x)));
    return std::vector<int>{finish(L, a, y)};
  };
}

}  // namespace xacc::backend::mlir::lowering
