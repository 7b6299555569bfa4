// Private to the aten.* lowering (AtenLowering.cpp and the rule files
// AtenElementwiseRules.cpp, AtenReductionRules.cpp, AtenViewRules.cpp): the
// binding of node arguments to schema arguments, the Lowerer that builds one
// kernel, the Args accessors rules read, and the helpers more than one rule
// family uses. The rule table is one std::map filled by one function per op
// family, in that order. No MLIR, no torch.
#pragma once

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "Lowering.h"
#include "xacc/backend/aten/AtenOps.h"

namespace xacc::backend::mlir::lowering {

/// Lowering a region at probe sizes (ProbeLowering, SizeGeneric.cpp).
extern thread_local bool tProbe;

using ir::DType;
using ir::Type;

inline bool isFloatD(DType d) { return ir::isFloatingDType(d); }
inline DType opmath(DType d) { return d == DType::F16 || d == DType::BF16 ? DType::F32 : d; }

inline int category(DType d) { return d == DType::Bool ? 0 : isFloatD(d) ? 2 : 1; }
inline int rankWithin(DType d) {
  switch (d) {
    case DType::Bool: return 0;
    case DType::I8: return 1; case DType::I16: return 2; case DType::I32: return 3; case DType::I64: return 4;
    case DType::F16: return 1; case DType::BF16: return 2; case DType::F32: return 3; case DType::F64: return 4;
    default: return 0;
  }
}

/// Where each schema argument of a node comes from (bindNode, AtenLowering.cpp).
struct Bound {
  const ir::Node* node = nullptr;
  std::vector<aten::AtenArgInfo> args;
  std::vector<int> operand;                 // operand index or -1
  std::vector<const ir::Attr*> attr;        // attribute or null
  int find(std::string_view name) const {
    for (size_t i = 0; i < args.size(); ++i)
      if (args[i].name == name) return static_cast<int>(i);
    return -1;
  }
};

std::vector<int64_t> broadcastShapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                                     bool& ok);

struct Failure {
  std::string why;
};

/// The state of one translation: the kernel being built and the value map.
class Lowerer {
public:
  explicit Lowerer(KernelIR& k) : k_(k) {}
  KernelIR& k_;
  std::unordered_map<const ir::Value*, int> values;

  const KNode& at(int i) const { return k_.at(i); }
  DType dtype(int i) const { return k_.at(i).dtype; }
  const std::vector<int64_t>& shape(int i) const { return k_.at(i).shape; }
  bool isScalarLike(int i) const {
    auto k = k_.at(i).kind;
    return k == KNode::Scalar || k == KNode::Const;
  }

  int constant(double v, DType d) {
    KNode n;
    n.kind = KNode::Const;
    n.dtype = d;
    n.fval = v;
    n.ival = static_cast<int64_t>(v);
    return k_.add(n);
  }
  int cast(int x, DType to) {
    if (dtype(x) == to) return x;
    if (at(x).kind == KNode::Const) return constant(at(x).fval, to);
    KNode n;
    n.op = "cast";
    n.dtype = to;
    n.shape = shape(x);
    n.args = {x};
    return k_.add(n);
  }
  int map(const std::string& op, DType d, std::vector<int> args) {
    KNode n;
    n.op = op;
    n.dtype = d;
    bool ok = true;
    for (int a : args) n.shape = broadcastShapes(n.shape, shape(a), ok);
    if (!ok) throw Failure{"shapes do not broadcast"};
    bool cmp = op.rfind("cmp.", 0) == 0;
    for (size_t i = 0; i < args.size(); ++i) {
      if (op == "select" && i == 0) continue;
      if (op != "cast" && !cmp) args[i] = cast(args[i], d);
    }
    if (op == "select") args[0] = cast(args[0], DType::Bool);
    n.args = std::move(args);
    return k_.add(n);
  }
  // Shorthands used by rules: arithmetic in dtype d.
  int un(const char* op, int x) { return map(op, dtype(x), {x}); }
  int bin(const char* op, int x, int y) { return map(op, dtype(x), {x, y}); }
  int cnst(double v, int like) { return constant(v, dtype(like)); }
  int cmp(const char* pred, int x, int y) {
    DType d = promote({x, y});
    return map(std::string("cmp.") + pred, DType::Bool, {cast(x, d), cast(y, d)});
  }
  int select(int c, int x, int y) { return map("select", dtype(x), {c, x, y}); }
  int reduce(const char* op, int x, std::vector<int> dims, bool keepDim) {
    // Bool reductions (max = any, min = all, prod = all) run on the i8
    // storage values, which are 0 or 1.
    if (dtype(x) == DType::Bool) return cast(reduce(op, cast(x, DType::I8), std::move(dims), keepDim), DType::Bool);
    KNode n;
    n.kind = KNode::Reduce;
    n.op = op;
    n.dtype = dtype(x);
    n.args = {x};
    int r = static_cast<int>(shape(x).size());
    for (int& d : dims) {
      if (d < 0) d += r;
      if (d < 0 || d >= r) throw Failure{"reduction dim out of range"};
    }
    std::sort(dims.begin(), dims.end());
    dims.erase(std::unique(dims.begin(), dims.end()), dims.end());
    // A size-1 dim reduces to itself. Kept in the Reduce, its loop would appear
    // in no index map when the operand is a view that maps it to a constant
    // (x.reshape(1, C, -1) of a [C, K, 1, 1] weight): MLIR rejects such a
    // linalg.generic (non-invertible maps). So it is reduced as kept and, for
    // !keepDim, dropped by a view afterwards.
    std::vector<int> nonUnit;
    for (int d : dims)
      if (shape(x)[d] != 1) nonUnit.push_back(d);
    if (nonUnit.size() != dims.size()) {
      int y = nonUnit.empty() ? x : reduce(op, x, nonUnit, true);
      if (keepDim) return y;
      std::vector<int64_t> out;
      for (int i = 0; i < r; ++i)
        if (!std::binary_search(dims.begin(), dims.end(), i)) out.push_back(shape(x)[i]);
      return reshapeUnitDims(y, out);
    }
    for (int i = 0; i < r; ++i) {
      bool red = std::find(dims.begin(), dims.end(), i) != dims.end();
      if (!red) n.shape.push_back(shape(x)[i]);
      else if (keepDim) n.shape.push_back(1);
    }
    n.dims = std::move(dims);
    n.keepDim = keepDim;
    return k_.add(n);
  }
  /// reshape(*this, x, sizes): adds or removes size-1 dims (AtenViewRules.cpp).
  int reshapeUnitDims(int x, std::vector<int64_t> sizes);
  int view(int x, std::vector<int64_t> outShape, std::vector<AffineIndex> index) {
    KNode n;
    n.kind = KNode::View;
    n.dtype = dtype(x);
    n.shape = std::move(outShape);
    n.args = {x};
    n.viewIndex = std::move(index);
    return k_.add(n);
  }

  /// The i64 tensor of `shape` whose element at index d is `base + sum_j coef[j] * d[j]`.
  int iota(std::vector<int64_t> outShape, std::vector<int64_t> coef, int64_t base = 0) {
    KNode n;
    n.kind = KNode::Iota;
    n.dtype = DType::I64;
    n.shape = std::move(outShape);
    n.coef = std::move(coef);
    n.ival = base;
    return k_.add(n);
  }

  /// ATen's result_type over kernel values: dimensioned tensors outrank
  /// zero-dim tensors, which outrank scalars, unless a weaker one is of a higher
  /// category (bool < int < float), which then gives that category's default.
  DType promote(const std::vector<int>& xs) const {
    int best[3] = {-1, -1, -1};
    DType bestD[3] = {DType::Bool, DType::Bool, DType::Bool};
    for (int x : xs) {
      int tier = isScalarLike(x) ? 2 : shape(x).empty() ? 1 : 0;
      DType d = dtype(x);
      if (tier == 2 && category(d) == 1) d = DType::I64;
      if (tier == 2 && category(d) == 2) d = DType::F32;  // default dtype for float scalars
      if (best[tier] < 0 || category(d) > category(bestD[tier]) ||
          (category(d) == category(bestD[tier]) && rankWithin(d) > rankWithin(bestD[tier]))) {
        best[tier] = 1;
        bestD[tier] = d;
      }
    }
    DType r = DType::Bool;
    bool have = false;
    for (int t = 0; t < 3; ++t) {
      if (best[t] < 0) continue;
      if (!have) r = bestD[t], have = true;
      else if (category(bestD[t]) > category(r))
        r = category(bestD[t]) == 2 ? (t == 2 ? DType::F32 : bestD[t]) : bestD[t];
    }
    return r;
  }
};

/// Accessors a rule uses to read its bound arguments.
class Args {
public:
  Args(Lowerer& L, const Bound& b) : L_(L), b_(b) {}
  const ir::Node& node() const { return *b_.node; }
  /// Result dtype of the node (result `i`).
  DType resultDType(size_t i = 0) const {
    Type t = b_.node->result(i)->type();
    return t.isTensor() ? t.dtype() : DType::F32;
  }
  bool present(std::string_view name) const {
    int i = b_.find(name);
    if (i < 0) return false;
    if (b_.operand[i] >= 0) return !b_.node->operand(b_.operand[i])->type().isNull() &&
                                   b_.node->operand(b_.operand[i])->type().kind() != ir::TypeKind::Null;
    return b_.attr[i] && !b_.attr[i]->isNone();
  }
  /// A tensor or scalar argument as a kernel value; `dflt` when absent.
  int value(std::string_view name, std::optional<double> dflt = std::nullopt) const {
    int i = b_.find(name);
    if (i >= 0 && b_.operand[i] >= 0) {
      const ir::Value* v = b_.node->operand(b_.operand[i]);
      if (v->type().kind() != ir::TypeKind::Null) return L_.values.at(v);
    }
    if (i >= 0 && b_.attr[i] && !b_.attr[i]->isNone()) {
      const ir::Attr& a = *b_.attr[i];
      if (a.kind() == ir::Attr::Kind::Int) return L_.constant(double(a.getInt()), DType::I64);
      if (a.kind() == ir::Attr::Kind::Float) return L_.constant(a.getFloat(), DType::F64);
      if (a.kind() == ir::Attr::Kind::Bool) return L_.constant(a.getBool() ? 1 : 0, DType::Bool);
      throw Failure{"argument '" + std::string(name) + "' is not a number"};
    }
    if (dflt) return L_.constant(*dflt, std::floor(*dflt) == *dflt ? DType::I64 : DType::F64);
    throw Failure{"argument '" + std::string(name) + "' is missing"};
  }
  /// A compile-time number (attribute or default); fails for operands.
  double number(std::string_view name, double dflt) const {
    int i = b_.find(name);
    if (i >= 0 && b_.operand[i] >= 0) throw Failure{"'" + std::string(name) + "' must be constant"};
    if (i < 0 || !b_.attr[i] || b_.attr[i]->isNone()) return dflt;
    const ir::Attr& a = *b_.attr[i];
    if (a.kind() == ir::Attr::Kind::Int) return double(a.getInt());
    if (a.kind() == ir::Attr::Kind::Float) return a.getFloat();
    if (a.kind() == ir::Attr::Kind::Bool) return a.getBool();
    throw Failure{"'" + std::string(name) + "' is not a number"};
  }
  /// A compile-time integer, exact for all of int64 (slice ends are often
  /// INT64_MAX, which a double cannot hold).
  int64_t integer(std::string_view name, int64_t dflt) const {
    int i = b_.find(name);
    if (i >= 0 && b_.operand[i] >= 0) throw Failure{"'" + std::string(name) + "' must be constant"};
    if (i < 0 || !b_.attr[i] || b_.attr[i]->isNone()) return dflt;
    const ir::Attr& a = *b_.attr[i];
    if (a.kind() == ir::Attr::Kind::Int) return a.getInt();
    if (a.kind() == ir::Attr::Kind::Bool) return a.getBool();
    throw Failure{"'" + std::string(name) + "' is not an integer"};
  }
  std::optional<double> optNumber(std::string_view name) const {
    if (!present(name)) return std::nullopt;
    return number(name, 0);
  }
  std::vector<int64_t> ints(std::string_view name, std::vector<int64_t> dflt = {}) const {
    int i = b_.find(name);
    if (i >= 0 && b_.operand[i] >= 0) throw Failure{"'" + std::string(name) + "' must be constant"};
    if (i < 0 || !b_.attr[i] || b_.attr[i]->isNone()) return dflt;
    const ir::Attr& a = *b_.attr[i];
    if (a.kind() == ir::Attr::Kind::Int) return {a.getInt()};
    if (a.kind() != ir::Attr::Kind::Array) throw Failure{"'" + std::string(name) + "' is not a list"};
    std::vector<int64_t> out;
    for (const auto& e : a.getArray()) {
      if (e.kind() != ir::Attr::Kind::Int) throw Failure{"'" + std::string(name) + "' is not an int list"};
      out.push_back(e.getInt());
    }
    return out;
  }
  std::string str(std::string_view name, std::string dflt = {}) const {
    int i = b_.find(name);
    if (i >= 0 && b_.operand[i] >= 0) throw Failure{"'" + std::string(name) + "' must be constant"};
    if (i < 0 || !b_.attr[i] || b_.attr[i]->isNone()) return dflt;
    if (b_.attr[i]->kind() != ir::Attr::Kind::Str) throw Failure{"'" + std::string(name) + "' is not a string"};
    return b_.attr[i]->getStr();
  }
  bool flag(std::string_view name, bool dflt) const { return number(name, dflt ? 1 : 0) != 0; }

private:
  Lowerer& L_;
  const Bound& b_;
};

/// A rule lowers one node and returns the kernel value of each tensor result.
using Rule = std::function<std::vector<int>(Lowerer&, const Args&)>;

/// The rule table: op name -> rule.
using RuleTable = std::map<std::string, Rule>;

/// Rule families, each filling its part of the table (one file each).
void addElementwiseRules(RuleTable& t);  // AtenElementwiseRules.cpp
void addReductionRules(RuleTable& t);    // AtenReductionRules.cpp
void addViewRules(RuleTable& t);         // AtenViewRules.cpp

// Helpers shared by the families (AtenLowering.cpp unless noted).
int self(Lowerer& L, const Args& a);
/// Computes in the result dtype's opmath type and rounds to the result dtype.
int finish(Lowerer& L, const Args& a, int v);
int in(Lowerer& L, const Args& a, const char* name);
int normDim(int64_t d, size_t rank);
std::vector<int> reduceDims(const Args& a, const char* name, size_t rank);
double sizeOf(const Lowerer& L, int x, const std::vector<int>& dims);
/// reshape that only adds or removes size-1 dims (AtenViewRules.cpp).
int reshape(Lowerer& L, int x, std::vector<int64_t> sizes);

}  // namespace xacc::backend::mlir::lowering
