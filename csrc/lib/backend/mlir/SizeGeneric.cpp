// Note [Size-generic kernels]
// Kernels are lowered for concrete shapes (AtenLowering.cpp works on sizes:
// broadcasting, decompositions, view index arithmetic), so a region whose
// inputs change size (a dynamic batch, a sequence that grows during
// generation) or the unrolled steps of a loop (regions of one graph with the
// same kernel at other sizes) would compile one kernel per size. Instead
// (Executable.cpp, genericVariant), when a region declares dynamic dims or its
// kernel skeleton (skeletonKey: the kernel IR without extents) was seen before
// at other sizes:
//
//   1. derivePattern picks the symbolic input dims: declared dynamic or of a
//      different size than the earlier signature (size-1 dims never: they
//      broadcast);
//   2. the region is lowered at two probe signatures where each symbol gets
//      another size (primes that are no size of the signature), and the three
//      kernels are walked together (Joiner): they must agree on everything but
//      extents, and each extent must be the same in all three (a fixed size)
//      or be exactly one symbol's size in each (printed `?`, read from an
//      argument at run time, MlirEmitter.cpp);
//      A float constant that is a symbol's size plus a small integer (the
//      count n of a mean, n - 1 of an unbiased var) becomes a symbolic
//      constant (KNode::symbol), computed from the size at run time;
//   3. a kernel that depends on a size in any other way (a view offset
//      n - 1, an extent or count n * m, a reshape to sizes written in the
//      graph, a decomposition chosen by size) is refused, and the skeleton
//      keeps per-size kernels. At probe sizes an
//      `expand` to a literal size the input no longer has keeps the input's
//      dim (ProbeLowering): static graphs expand to the traced sizes, and the
//      check below keeps this from ever changing a result.
//
// Generic kernels are shared process-wide by skeleton. Every use, including
// the first, checks instanceOf: the region's own kernel IR at its sizes must
// be the generic kernel with the symbols at those sizes, so a generic kernel
// only ever runs where it computes exactly what the per-size kernel would;
// the probes decide which extents are symbolic, not whether it is correct.
#include "SizeGeneric.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>

namespace xacc::backend::mlir {
namespace {

using ir::DType;

bool sameStructure(const std::vector<InputDesc>& a, const std::vector<InputDesc>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].isTensor != b[i].isTensor || a[i].dtype != b[i].dtype) return false;
    if (!a[i].isTensor) continue;
    if (a[i].contiguous != b[i].contiguous || a[i].shape.size() != b[i].shape.size()) return false;
    for (size_t j = 0; j < a[i].shape.size(); ++j)
      if ((a[i].shape[j] == 1) != (b[i].shape[j] == 1)) return false;
  }
  return true;
}

bool declaredDynamic(const Region& r, size_t i, size_t j) {
  const ir::Type& t = r.inputs[i]->type();
  return t.isTensor() && j < t.dims().size() && !t.dims()[j].isStatic();
}

/// The sizes symbol k takes in a probe: primes that are no size of `sig`.
std::vector<int64_t> probeSizes(const SizePattern& p, int which) {
  static const int64_t kPrimes[] = {97,  101, 103, 107, 109, 113, 127, 131, 137, 139, 149, 151, 157,
                                    163, 167, 173, 179, 181, 191, 193, 197, 199, 211, 223, 227, 229,
                                    233, 239, 241, 251, 257, 263, 269, 271, 277, 281, 283, 293};
  std::set<int64_t> used;
  for (const auto& d : p.sig)
    for (int64_t n : d.shape) used.insert(n);
  std::vector<int64_t> out;
  size_t next = which == 0 ? 0 : std::size(kPrimes) / 2;
  for (int k = 0; k < p.symbols(); ++k) {
    while (next < std::size(kPrimes) && used.count(kPrimes[next])) ++next;
    out.push_back(next < std::size(kPrimes) ? kPrimes[next++] : 1009 + 2 * (k + 1) * (which + 1));
  }
  return out;
}

/// Joins the three kernels into `g` (see the Note). `sizes[v]` are the sizes
/// of the symbols in kernel v (0: concrete, 1 and 2: probes).
class Joiner {
public:
  Joiner(const std::vector<int64_t>* sizes) : sizes_(sizes) {}

  bool extent(int64_t a, int64_t b, int64_t c, int64_t& out) {
    if (a == b && b == c) {
      out = a;
      return true;
    }
    for (size_t k = 0; k < sizes_[0].size(); ++k)
      if (a == sizes_[0][k] && b == sizes_[1][k] && c == sizes_[2][k]) {
        out = symbolicExtent(static_cast<int>(k));
        return true;
      }
    return fail("an extent " + std::to_string(a) + " that is not one symbolic size");
  }

  bool shape(const std::vector<int64_t>& a, const std::vector<int64_t>& b, const std::vector<int64_t>& c,
             std::vector<int64_t>& out) {
    if (a.size() != b.size() || a.size() != c.size()) return fail("ranks that depend on sizes");
    out.resize(a.size());
    for (size_t j = 0; j < a.size(); ++j)
      if (!extent(a[j], b[j], c[j], out[j])) return false;
    return true;
  }

  bool node(const KNode& a, const KNode& b, const KNode& c, KNode& out) {
    auto same = [&](auto get) { return get(a) == get(b) && get(a) == get(c); };
    std::string what = a.op.empty() ? "" : " (" + a.op + ")";
    if (!same([](const KNode& n) { return n.kind; }) || !same([](const KNode& n) { return n.op; }) ||
        !same([](const KNode& n) { return n.dtype; }) || !same([](const KNode& n) { return n.args; }) ||
        !same([](const KNode& n) { return n.index; }))
      return fail("a decomposition that depends on sizes");
    if (!same([](const KNode& n) { return n.dims; }) || !same([](const KNode& n) { return n.keepDim; }))
      return fail("reduced dims that depend on sizes" + what);
    // (A float Const's ival is its value truncated, never printed.)
    bool floatConst = a.kind == KNode::Const && ir::isFloatingDType(a.dtype);
    if (!floatConst && !same([](const KNode& n) { return n.ival; }))
      return fail("a constant that depends on sizes" + what);
    // Float constants compare bitwise (NaN included); one that is a symbol's
    // size plus the same offset in all three (mean's count n, var's n - 1)
    // becomes a symbolic constant.
    out = a;
    if (std::memcmp(&a.fval, &b.fval, sizeof a.fval) || std::memcmp(&a.fval, &c.fval, sizeof a.fval)) {
      bool found = false;
      if (floatConst)
        for (size_t k = 0; k < sizes_[0].size() && !found; ++k) {
          double off = a.fval - static_cast<double>(sizes_[0][k]);
          if (b.fval == static_cast<double>(sizes_[1][k]) + off && c.fval == static_cast<double>(sizes_[2][k]) + off &&
              off == std::floor(off) && std::abs(off) <= 2) {
            out.symbol = static_cast<int>(k);
            out.fval = off;
            found = true;
          }
        }
      if (!found) return fail("a constant that depends on sizes" + what);
    }
    if (!same([](const KNode& n) { return n.viewIndex; })) return fail("a view index that depends on sizes");
    if (!same([](const KNode& n) { return n.coef; })) return fail("an index value that depends on sizes");
    return shape(a.shape, b.shape, c.shape, out.shape);
  }

  bool kernel(const KernelIR& a, const KernelIR& b, const KernelIR& c, KernelIR& out) {
    if (a.nodes.size() != b.nodes.size() || a.nodes.size() != c.nodes.size())
      return fail("a decomposition that depends on sizes");
    if (a.scalars != b.scalars || a.outputs != b.outputs || a.scalars != c.scalars || a.outputs != c.outputs ||
        a.inputs.size() != b.inputs.size() || a.inputs.size() != c.inputs.size())
      return fail("kernel arguments that depend on sizes");
    out = KernelIR{};
    out.scalars = a.scalars;
    out.outputs = a.outputs;
    for (size_t i = 0; i < a.nodes.size(); ++i) {
      KNode n;
      if (!node(a.nodes[i], b.nodes[i], c.nodes[i], n)) return false;
      out.nodes.push_back(std::move(n));
    }
    for (size_t i = 0; i < a.inputs.size(); ++i) {
      KInput in = a.inputs[i];
      if (!shape(a.inputs[i].shape, b.inputs[i].shape, c.inputs[i].shape, in.shape)) return false;
      out.inputs.push_back(std::move(in));
    }
    return true;
  }

  std::string why;

private:
  bool fail(std::string w) {
    if (why.empty()) why = std::move(w);
    return false;
  }
  const std::vector<int64_t>* sizes_;
};

std::vector<InputDesc> withSizes(const SizePattern& p, const std::vector<int64_t>& sizes) {
  std::vector<InputDesc> out = p.sig;
  for (size_t i = 0; i < out.size(); ++i)
    for (size_t j = 0; j < p.sym[i].size(); ++j)
      if (p.sym[i][j] >= 0) out[i].shape[j] = sizes[static_cast<size_t>(p.sym[i][j])];
  return out;
}

}  // namespace

bool derivePattern(const Region& r, const std::vector<InputDesc>& ref, const std::vector<InputDesc>& in,
                   const SizePattern* prev, SizePattern& out) {
  if (!sameStructure(ref, in) || in.size() != r.inputs.size()) return false;
  out = SizePattern{};
  out.sig = in;
  out.sym.resize(in.size());
  std::map<std::pair<int64_t, int64_t>, int> ids;  // (size in `in`, size in `ref`) -> symbol
  for (size_t i = 0; i < in.size(); ++i) {
    if (!in[i].isTensor) continue;
    out.sym[i].assign(in[i].shape.size(), -1);
    for (size_t j = 0; j < in[i].shape.size(); ++j) {
      int64_t n = in[i].shape[j];
      bool wasSymbolic = prev && i < prev->sym.size() && j < prev->sym[i].size() && prev->sym[i][j] >= 0;
      if (n < 2 || !(declaredDynamic(r, i, j) || ref[i].shape[j] != n || wasSymbolic)) continue;
      auto [it, fresh] = ids.emplace(std::make_pair(n, ref[i].shape[j]), static_cast<int>(ids.size()));
      if (fresh) out.symbolAt.emplace_back(static_cast<int>(i), static_cast<int>(j));
      out.sym[i][j] = it->second;
    }
  }
  return out.symbols() > 0;
}

bool matchesPattern(const SizePattern& p, const std::vector<InputDesc>& in) {
  if (!sameStructure(p.sig, in)) return false;
  for (size_t i = 0; i < in.size(); ++i)
    for (size_t j = 0; j < p.sym[i].size(); ++j) {
      int k = p.sym[i][j];
      int64_t n = in[i].shape[j];
      if (k < 0 ? n != p.sig[i].shape[j] : n < 2) return false;
      if (k >= 0 && n != symbolSize(p, in, k)) return false;
    }
  return true;
}

bool buildSizeGenericKernel(const Region& r, const SizePattern& p, const KernelIR& concrete, KernelIR& generic,
                            std::string& why) {
  std::vector<int64_t> sizes[3];
  for (const auto& [i, j] : p.symbolAt)
    sizes[0].push_back(p.sig[static_cast<size_t>(i)].shape[static_cast<size_t>(j)]);
  sizes[1] = probeSizes(p, 0);
  sizes[2] = probeSizes(p, 1);
  KernelIR probe[2];
  ProbeLowering probing;
  for (int v = 0; v < 2; ++v)
    if (!buildKernel(r, withSizes(p, sizes[v + 1]), probe[v], why)) {
      why = "lowering at other sizes failed: " + why;
      return false;
    }
  Joiner j(sizes);
  if (concrete.dynRows >= 0 || !j.kernel(concrete, probe[0], probe[1], generic)) {
    why = j.why.empty() ? "dynamic rows" : j.why;
    return false;
  }
  if (!instanceOf(generic, p, p.sig, concrete)) {
    why = "the generic kernel is not the region's kernel at its own sizes";
    return false;
  }
  return true;
}

bool declaredGenericKernel(const Region& r, KernelIR& generic, SizePattern& pattern, std::string& why) {
  why = "no dims declared dynamic";
  for (int merge = 0; merge < 2; ++merge) {
    std::vector<InputDesc> in = describeInputs(r, 0);
    std::map<std::string, int64_t> named;
    int64_t next = 1001;
    bool any = false;
    for (size_t i = 0; i < in.size(); ++i) {
      const ir::Type& t = r.inputs[i]->type();
      if (!t.isTensor()) continue;
      for (size_t j = 0; j < t.dims().size(); ++j) {
        const ir::Dim& d = t.dims()[j];
        if (d.isStatic()) continue;
        any = true;
        if (!d.sym.empty())
          in[i].shape[j] = named.emplace(d.sym, next + static_cast<int64_t>(named.size()) + 100).first->second;
        else
          in[i].shape[j] = merge ? 1000 : next++;
      }
    }
    if (!any) return false;
    KernelIR concrete;
    if (!derivePattern(r, in, in, nullptr, pattern) || !buildKernel(r, in, concrete, why)) continue;
    if (buildSizeGenericKernel(r, pattern, concrete, generic, why)) return true;
  }
  return false;
}

int64_t symbolSize(const SizePattern& p, const std::vector<InputDesc>& in, int k) {
  auto [i, j] = p.symbolAt[static_cast<size_t>(k)];
  return in[static_cast<size_t>(i)].shape[static_cast<size_t>(j)];
}

bool declaresDynamicDims(const Region& r) {
  for (const ir::Value* v : r.inputs)
    if (v->type().isTensor())
      for (const auto& d : v->type().dims())
        if (!d.isStatic()) return true;
  return false;
}

bool instanceOf(const KernelIR& generic, const SizePattern& p, const std::vector<InputDesc>& in,
                const KernelIR& concrete) {
  const KernelIR &g = generic, &c = concrete;
  if (g.nodes.size() != c.nodes.size() || g.inputs.size() != c.inputs.size() || g.scalars != c.scalars ||
      g.outputs != c.outputs || c.dynRows >= 0)
    return false;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const KNode &a = g.nodes[i], &b = c.nodes[i];
    double value = a.fval + (a.symbol >= 0 ? static_cast<double>(symbolSize(p, in, a.symbol)) : 0.0);
    if (a.kind != b.kind || a.op != b.op || a.dtype != b.dtype || a.args != b.args || a.index != b.index ||
        (a.symbol < 0 && a.ival != b.ival) || std::memcmp(&value, &b.fval, sizeof value) || a.dims != b.dims ||
        a.keepDim != b.keepDim || a.viewIndex != b.viewIndex || concreteShape(a.shape, p, in) != b.shape)
      return false;
  }
  for (size_t i = 0; i < g.inputs.size(); ++i)
    if (g.inputs[i].dtype != c.inputs[i].dtype || g.inputs[i].contiguous != c.inputs[i].contiguous ||
        concreteShape(g.inputs[i].shape, p, in) != c.inputs[i].shape)
      return false;
  return true;
}

std::string skeletonKey(const KernelIR& k) {
  std::string s;
  auto shape = [&](const std::vector<int64_t>& sh) {
    s += "[";
    for (int64_t e : sh) s += e == 1 ? '1' : 'n';
    s += "]";
  };
  for (const KInput& in : k.inputs) {
    s += ir::dtypeName(in.dtype);
    s += in.contiguous ? "" : "s";
    shape(in.shape);
  }
  s += "|";
  for (DType d : k.scalars) s += std::string(ir::dtypeName(d)) + ",";
  s += "|";
  for (int o : k.outputs) s += std::to_string(o) + ",";
  char buf[32];
  for (const KNode& n : k.nodes) {
    s += "\n" + std::to_string(n.kind) + n.op + ":" + ir::dtypeName(n.dtype);
    shape(n.shape);
    for (int a : n.args) s += std::to_string(a) + ",";
    uint64_t bits;
    std::memcpy(&bits, &n.fval, sizeof bits);
    std::snprintf(buf, sizeof buf, "#%llx", static_cast<unsigned long long>(bits));
    s += buf + std::string("i") + std::to_string(n.ival) + "x" + std::to_string(n.index) + "d";
    for (int d : n.dims) s += std::to_string(d) + ",";
    s += n.keepDim ? "k" : "";
    for (const AffineIndex& a : n.viewIndex)
      s += "v" + std::to_string(a.dim) + "*" + std::to_string(a.mul) + "+" + std::to_string(a.add);
  }
  return s;
}

std::vector<int64_t> concreteShape(std::vector<int64_t> shape, const SizePattern& p,
                                   const std::vector<InputDesc>& in) {
  for (int64_t& e : shape)
    if (isSymbolicExtent(e)) e = symbolSize(p, in, symbolIndex(e));
  return shape;
}

std::string patternText(const SizePattern& p) {
  std::string s;
  for (size_t i = 0; i < p.sig.size(); ++i) {
    s += ir::dtypeName(p.sig[i].dtype);
    if (!p.sig[i].isTensor) continue;
    s += "[";
    for (size_t j = 0; j < p.sig[i].shape.size(); ++j)
      s += (j ? "," : "") + (p.sym[i][j] >= 0 ? "s" + std::to_string(p.sym[i][j])
                                                : std::to_string(p.sig[i].shape[j]));
    s += "]";
  }
  return s;
}

}  // namespace xacc::backend::mlir
