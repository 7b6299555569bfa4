// Lowering rules for `aten.*` nodes into kernel IR, one small rule per op (or
// per family), each with a one-line comment of the algebra it performs when it
// is a decomposition. Node arguments are bound to schema arguments exactly as
// the ATen executor binds them (Note [ATen operands and attributes] in
// AtenOps.h): attribute by name, else the next operand that fits, else the
// default; a rule names the defaults it relies on.
//
// Dtypes follow ATen: arithmetic computes in the node's result dtype (half
// types in f32, as ATen's opmath does), comparisons in the promoted dtype of
// their operands; rules insert explicit `cast` nodes so the kernel IR's Map
// invariant holds (see KernelIR.h).
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <cstdlib>
#include <map>
#include <optional>
#include <unordered_map>

#include "Lowering.h"
#include "xacc/support/TestFault.h"
#include "xacc/backend/aten/AtenOps.h"

namespace xacc::backend::mlir {
namespace {

/// Lowering a region at probe sizes (ProbeLowering, SizeGeneric.cpp).
thread_local bool tProbe = false;

using ir::DType;
using ir::Type;

bool isFloatD(DType d) { return ir::isFloatingDType(d); }
bool supportedDType(DType d) {
  switch (d) {
    case DType::F16: case DType::BF16: case DType::F32: case DType::F64: case DType::I64:
    case DType::I32: case DType::I16: case DType::I8: case DType::Bool: return true;
    default: return false;
  }
}
DType opmath(DType d) { return d == DType::F16 || d == DType::BF16 ? DType::F32 : d; }

int category(DType d) { return d == DType::Bool ? 0 : isFloatD(d) ? 2 : 1; }
int rankWithin(DType d) {
  switch (d) {
    case DType::Bool: return 0;
    case DType::I8: return 1; case DType::I16: return 2; case DType::I32: return 3; case DType::I64: return 4;
    case DType::F16: return 1; case DType::BF16: return 2; case DType::F32: return 3; case DType::F64: return 4;
    default: return 0;
  }
}

// ---------------------------------------------------------------------------
// Binding node operands/attributes to schema arguments.

enum class Cls { Tensor, Int, Float, Bool, Str, None, IntList, Other };

Cls classOfType(Type t) {
  if (t.isTensor()) return Cls::Tensor;
  switch (t.kind()) {
    case ir::TypeKind::Int: return Cls::Int;
    case ir::TypeKind::Float: return Cls::Float;
    case ir::TypeKind::Bool: return Cls::Bool;
    case ir::TypeKind::Str: return Cls::Str;
    case ir::TypeKind::Null: return Cls::None;
    default: return Cls::Other;
  }
}

bool fits(const aten::AtenArgInfo& a, Cls c) {
  std::string t = a.type;
  bool optional = !t.empty() && t.back() == '?';
  if (optional) t.pop_back();
  if (c == Cls::None) return optional;
  if (t == "Tensor") return c == Cls::Tensor || (!optional && (c == Cls::Int || c == Cls::Float || c == Cls::Bool));
  if (t == "int" || t == "SymInt") return c == Cls::Int || c == Cls::Bool;
  if (t == "float") return c == Cls::Float || c == Cls::Int;
  if (t == "bool") return c == Cls::Bool;
  if (t == "Scalar") return c == Cls::Int || c == Cls::Float || c == Cls::Bool;
  if (t == "str" || t == "ScalarType" || t == "Device" || t == "Layout" || t == "MemoryFormat")
    return c == Cls::Str;
  if (t.rfind("int[", 0) == 0 || t.rfind("SymInt[", 0) == 0) return c == Cls::Int;
  return false;
}

/// Where each schema argument of a node comes from.
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

bool bindNode(const ir::Node& n, Bound& b, std::string& error) {
  aten::AtenOpSchemaInfo info;
  if (!aten::atenSchemaInfo(n.opName(), info, error)) return false;
  if (info.effect || info.random) {
    error = "effectful or random op";
    return false;
  }
  b.node = &n;
  b.args = info.args;
  b.operand.assign(b.args.size(), -1);
  b.attr.assign(b.args.size(), nullptr);
  size_t next = 0;
  for (size_t i = 0; i < b.args.size(); ++i) {
    const auto& a = b.args[i];
    if (const ir::Attr* at = n.attr(a.name)) {
      b.attr[i] = at;
      continue;
    }
    if (next < n.numOperands() && fits(a, classOfType(n.operand(next)->type()))) {
      b.operand[i] = static_cast<int>(next++);
      continue;
    }
    if (!a.hasDefault && !a.optional) {
      error = "cannot bind argument '" + a.name + "'";
      return false;
    }
  }
  if (next != n.numOperands()) {
    error = "operands left after binding";
    return false;
  }
  return true;
}

// ---------------------------------------------------------------------------
// Building kernel IR.

std::vector<int64_t> broadcastShapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                                     bool& ok) {
  size_t r = std::max(a.size(), b.size());
  std::vector<int64_t> out(r);
  for (size_t i = 0; i < r; ++i) {
    int64_t x = i < r - a.size() ? 1 : a[i - (r - a.size())];
    int64_t y = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (x != y && x != 1 && y != 1) ok = false;
    out[i] = x == 1 ? y : x;
  }
  return out;
}

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
    for (int i = 0; i < r; ++i) {
      bool red = std::find(dims.begin(), dims.end(), i) != dims.end();
      if (!red) n.shape.push_back(shape(x)[i]);
      else if (keepDim) n.shape.push_back(1);
    }
    n.dims = std::move(dims);
    n.keepDim = keepDim;
    return k_.add(n);
  }
  int view(int x, std::vector<int64_t> outShape, std::vector<AffineIndex> index) {
    KNode n;
    n.kind = KNode::View;
    n.dtype = dtype(x);
    n.shape = std::move(outShape);
    n.args = {x};
    n.viewIndex = std::move(index);
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

int self(Lowerer& L, const Args& a) { return a.value("self"); }
/// Computes in the result dtype's opmath type and rounds to the result dtype.
int finish(Lowerer& L, const Args& a, int v) { return L.cast(v, a.resultDType()); }
int in(Lowerer& L, const Args& a, const char* name) {
  return L.cast(a.value(name), opmath(a.resultDType()));
}

int normDim(int64_t d, size_t rank) {
  int64_t r = static_cast<int64_t>(rank);
  if (d < 0) d += std::max<int64_t>(r, 1);
  if (d < 0 || (r > 0 && d >= r) || (r == 0 && d > 0)) throw Failure{"dim out of range"};
  return static_cast<int>(d);
}

std::vector<int> reduceDims(const Args& a, const char* name, size_t rank) {
  std::vector<int64_t> ds = a.ints(name);
  std::vector<int> out;
  if (ds.empty())
    for (size_t i = 0; i < rank; ++i) out.push_back(static_cast<int>(i));
  for (int64_t d : ds) out.push_back(normDim(d, rank));
  return out;
}

double sizeOf(const Lowerer& L, int x, const std::vector<int>& dims) {
  double n = 1;
  for (int d : dims) n *= double(L.shape(x)[d]);
  return n;
}

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

/// gelu: x * 0.5 * (1 + erf(x / sqrt 2)), or the tanh approximation.
int gelu(Lowerer& L, int x, const std::string& approx) {
  int half = L.bin("mul", x, L.cnst(0.5, x));
  if (approx == "tanh") {
    int x3 = L.bin("mul", L.bin("mul", x, x), x);
    int inner = L.bin("mul", L.bin("add", x, L.bin("mul", x3, L.cnst(0.044715, x))),
                      L.cnst(std::sqrt(2.0 / M_PI), x));
    return L.bin("mul", half, L.bin("add", L.un("tanh", inner), L.cnst(1, x)));
  }
  int e = L.un("erf", L.bin("mul", x, L.cnst(M_SQRT1_2, x)));
  return L.bin("mul", half, L.bin("add", e, L.cnst(1, x)));
}

int sigmoid(Lowerer& L, int x) {
  // 1 / (1 + exp(-x))
  return L.bin("div", L.cnst(1, x), L.bin("add", L.cnst(1, x), L.un("exp", L.un("neg", x))));
}

/// Python-style remainder: fmod corrected to the divisor's sign.
int remainder(Lowerer& L, int x, int y) {
  int r = L.bin("fmod", x, y);
  int z = L.cnst(0, r);
  int fix = L.map("and", DType::Bool, {L.cmp("ne", r, z), L.cmp("ne", L.cmp("lt", r, z), L.cmp("lt", y, z))});
  return L.select(fix, L.bin("add", r, y), r);
}

/// `rule(L, a, x)` for unary float-or-int ops computed in opmath.
Rule unary(std::function<int(Lowerer&, const Args&, int)> f) {
  return [f](Lowerer& L, const Args& a) { return std::vector<int>{finish(L, a, f(L, a, in(L, a, "self")))}; };
}
Rule unaryOp(const char* op) {
  return unary([op](Lowerer& L, const Args&, int x) { return L.un(op, x); });
}
/// Binary op of self and `other`, in the result's opmath dtype.
Rule binary(std::function<int(Lowerer&, const Args&, int, int)> f) {
  return [f](Lowerer& L, const Args& a) {
    return std::vector<int>{finish(L, a, f(L, a, in(L, a, "self"), in(L, a, "other")))};
  };
}
Rule binaryOp(const char* op) {
  return binary([op](Lowerer& L, const Args&, int x, int y) { return L.bin(op, x, y); });
}
/// Integer division traps on a zero divisor where ATen raises an error, so
/// integer division-like ops stay on the ATen path.
void floatOnly(const Lowerer& L, int x, const char* what) {
  if (!isFloatD(L.dtype(x))) throw Failure{std::string(what) + " on integers (ATen checks for zero divisors)"};
}
Rule divLike(const char* op) {
  return binary([op](Lowerer& L, const Args&, int x, int y) {
    floatOnly(L, x, op);
    return L.bin(op, x, y);
  });
}
Rule compare(const char* pred) {
  return [pred](Lowerer& L, const Args& a) { return std::vector<int>{L.cmp(pred, a.value("self"), a.value("other"))}; };
}
Rule logical(const char* op) {
  return [op](Lowerer& L, const Args& a) {
    int x = L.cast(a.value("self"), DType::Bool), y = L.cast(a.value("other"), DType::Bool);
    return std::vector<int>{L.cast(L.map(op, DType::Bool, {x, y}), a.resultDType())};
  };
}
Rule bitwise(const char* op) {
  return [op](Lowerer& L, const Args& a) {
    DType d = a.resultDType();
    if (isFloatD(d)) throw Failure{"bitwise op on floats"};
    return std::vector<int>{L.map(op, d, {a.value("self"), a.value("other")})};
  };
}
/// add/sub with alpha: self op alpha * other.
Rule addLike(const char* op) {
  return binary([op](Lowerer& L, const Args& a, int x, int y) {
    if (a.present("alpha") && a.number("alpha", 1) != 1) y = L.bin("mul", y, L.cast(a.value("alpha"), L.dtype(y)));
    return L.bin(op, x, y);
  });
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

/// permute: out dim i reads input dim perm[i].
int permute(Lowerer& L, int x, const std::vector<int64_t>& perm) {
  size_t r = L.shape(x).size();
  if (perm.size() != r) throw Failure{"permute: wrong number of dims"};
  std::vector<int64_t> shape(r);
  std::vector<AffineIndex> idx(r);
  for (size_t i = 0; i < r; ++i) {
    int p = normDim(perm[i], r);
    shape[i] = L.shape(x)[p];
    idx[p] = AffineIndex{static_cast<int>(i), 1, 0};
  }
  return L.view(x, shape, idx);
}

/// reshape that only adds or removes size-1 dims (anything else falls back).
int reshape(Lowerer& L, int x, std::vector<int64_t> sizes) {
  const auto& s = L.shape(x);
  int64_t n = numelOf(s), known = 1;
  int infer = -1;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == -1) infer = static_cast<int>(i);
    else known *= sizes[i];
  }
  if (infer >= 0) sizes[infer] = known ? n / known : 0;
  if (numelOf(sizes) != n) throw Failure{"reshape: size mismatch"};
  std::vector<AffineIndex> idx;
  size_t o = 0;
  for (size_t j = 0; j < s.size(); ++j) {
    if (s[j] == 1) {
      idx.push_back(AffineIndex{-1, 1, 0});
      continue;
    }
    while (o < sizes.size() && sizes[o] == 1) ++o;
    if (o >= sizes.size() || sizes[o] != s[j]) throw Failure{"reshape that splits or merges dims"};
    idx.push_back(AffineIndex{static_cast<int>(o++), 1, 0});
  }
  return L.view(x, sizes, idx);
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

const std::map<std::string, Rule>& rules() {
  static const std::map<std::string, Rule> table = [] {
    std::map<std::string, Rule> t;
    // Elementwise binary arithmetic (Tensor and Scalar overloads bind alike).
    for (const char* o : {"Tensor", "Scalar"}) {
      std::string s = std::string(".") + o;
      t["aten.add" + s] = addLike("add");
      t["aten.sub" + s] = addLike("sub");
      t["aten.mul" + s] = binaryOp("mul");
      t["aten.div" + s] = binaryOp("div");
      t["aten.remainder" + s] = binary([](Lowerer& L, const Args&, int x, int y) {
        floatOnly(L, x, "remainder");
        return remainder(L, x, y);
      });
      t["aten.fmod" + s] = divLike("fmod");
      t["aten.eq" + s] = compare("eq");
      t["aten.ne" + s] = compare("ne");
      t["aten.lt" + s] = compare("lt");
      t["aten.le" + s] = compare("le");
      t["aten.gt" + s] = compare("gt");
      t["aten.ge" + s] = compare("ge");
      t["aten.bitwise_and" + s] = bitwise("and");
      t["aten.bitwise_or" + s] = bitwise("or");
      t["aten.bitwise_xor" + s] = bitwise("xor");
      // rsub: other - alpha * self.
      t["aten.rsub" + s] = binary([](Lowerer& L, const Args& a, int x, int y) {
        if (a.present("alpha")) x = L.bin("mul", x, L.cast(a.value("alpha"), L.dtype(x)));
        return L.bin("sub", y, x);
      });
    }
    t["aten.div.Tensor_mode"] = t["aten.div.Scalar_mode"] = binary([](Lowerer& L, const Args& a, int x, int y) {
      std::string mode = a.str("rounding_mode");
      if (mode.empty()) return L.bin("div", x, y);
      floatOnly(L, x, "div");
      if (mode == "floor") return L.bin("floordiv", x, y);
      int q = L.bin("div", x, y);
      return isFloatD(L.dtype(q)) ? L.un("trunc", q) : q;
    });
    t["aten.floor_divide.default"] = t["aten.floor_divide.Scalar"] = divLike("floordiv");
    t["aten.maximum.default"] = binaryOp("max");
    t["aten.minimum.default"] = binaryOp("min");
    t["aten.atan2.default"] = binaryOp("atan2");
    t["aten.pow.Tensor_Tensor"] = [](Lowerer& L, const Args& a) {
      int x = in(L, a, "self"), e = in(L, a, "exponent");
      if (!isFloatD(L.dtype(x))) throw Failure{"integer pow (ATen checks negative exponents)"};
      return std::vector<int>{finish(L, a, L.bin("pow", x, e))};
    };
    // x ** c: the exponents ATen's CPU kernel special-cases
    // (pow_tensor_scalar_optimized_kernel: 2, 3, 0.5, -0.5, -1, -2) become
    // the same multiplications, reciprocal square roots and divides, so results follow
    // it and no `math.powf` (a scalar libm call per element, not
    // vectorised) is emitted: transformers' tanh GELU computes x ** 3.0, and
    // its fused kernel took 1 ms per [32, 3072] call with powf, ATen 0.5 ms.
    t["aten.pow.Tensor_Scalar"] = [](Lowerer& L, const Args& a) {
      int x = in(L, a, "self");
      std::optional<double> e = a.optNumber("exponent");
      if (e && *e == 1) return std::vector<int>{finish(L, a, x)};
      if (e && *e == 2) return std::vector<int>{finish(L, a, L.bin("mul", x, x))};
      if (e && *e == 3) return std::vector<int>{finish(L, a, L.bin("mul", L.bin("mul", x, x), x))};
      if (e && *e == -0.5 && isFloatD(L.dtype(x)))
        return std::vector<int>{finish(L, a, L.un("rsqrt", x))};
      if (e && *e == -2 && isFloatD(L.dtype(x)))
        return std::vector<int>{finish(L, a, L.bin("div", L.cnst(1, x), L.bin("mul", x, x)))};
      if (e && *e == 0.5 && isFloatD(L.dtype(x))) return std::vector<int>{finish(L, a, L.un("sqrt", x))};
      if (e && *e == -1 && isFloatD(L.dtype(x)))
        return std::vector<int>{finish(L, a, L.bin("div", L.cnst(1, x), x))};
      return std::vector<int>{finish(L, a, L.bin("pow", x, L.cast(a.value("exponent"), L.dtype(x))))};
    };
    t["aten.pow.Scalar"] = [](Lowerer& L, const Args& a) {
      DType d = opmath(a.resultDType());
      return std::vector<int>{finish(L, a, L.bin("pow", L.cast(a.value("self"), d), in(L, a, "exponent")))};
    };
    t["aten.logical_and.default"] = logical("and");
    t["aten.logical_or.default"] = logical("or");
    t["aten.logical_xor.default"] = logical("xor");
    t["aten.logical_not.default"] = [](Lowerer& L, const Args& a) {
      return std::vector<int>{L.cast(L.un("not", L.cast(a.value("self"), DType::Bool)), a.resultDType())};
    };
    t["aten.bitwise_not.default"] = [](Lowerer& L, const Args& a) {
      if (isFloatD(a.resultDType())) throw Failure{"bitwise_not on floats"};
      return std::vector<int>{L.un("not", a.value("self"))};
    };

    // Elementwise unary.
    for (const char* op : {"exp", "log", "tanh", "sqrt", "rsqrt", "sin", "cos", "tan", "erf", "erfc",
                           "log1p", "expm1", "exp2", "log2", "log10", "atan", "asin", "acos", "sinh",
                           "cosh"})
      t[std::string("aten.") + op + ".default"] = unary([op](Lowerer& L, const Args& a, int x) {
        if (!isFloatD(L.dtype(x))) throw Failure{"integer input to a float op"};
        return L.un(op, x);
      });
    for (const char* op : {"floor", "ceil", "round", "trunc"})
      t[std::string("aten.") + op + ".default"] = unary([op](Lowerer& L, const Args&, int x) {
        return isFloatD(L.dtype(x)) ? L.un(op, x) : x;
      });
    t["aten.neg.default"] = unaryOp("neg");
    t["aten.abs.default"] = unaryOp("abs");
    t["aten.reciprocal.default"] = unary([](Lowerer& L, const Args&, int x) { return L.bin("div", L.cnst(1, x), x); });
    t["aten.square.default"] = unary([](Lowerer& L, const Args&, int x) { return L.bin("mul", x, x); });
    t["aten.frac.default"] = unary([](Lowerer& L, const Args&, int x) { return L.bin("sub", x, L.un("trunc", x)); });
    t["aten.sigmoid.default"] = unary([](Lowerer& L, const Args&, int x) { return sigmoid(L, x); });
    t["aten.relu.default"] = unary([](Lowerer& L, const Args&, int x) { return L.bin("max", x, L.cnst(0, x)); });
    // relu6 = min(max(x, 0), 6)
    t["aten.relu6.default"] = unary([](Lowerer& L, const Args&, int x) {
      return L.bin("min", L.bin("max", x, L.cnst(0, x)), L.cnst(6, x));
    });
    t["aten.silu.default"] = unary([](Lowerer& L, const Args&, int x) { return L.bin("mul", x, sigmoid(L, x)); });
    t["aten.gelu.default"] = unary([](Lowerer& L, const Args& a, int x) { return gelu(L, x, a.str("approximate", "none")); });
    // leaky_relu: x > 0 ? x : slope * x
    t["aten.leaky_relu.default"] = unary([](Lowerer& L, const Args& a, int x) {
      int s = L.cast(a.value("negative_slope", 0.01), L.dtype(x));
      return L.select(L.cmp("gt", x, L.cnst(0, x)), x, L.bin("mul", x, s));
    });
    t["aten.hardtanh.default"] = unary([](Lowerer& L, const Args& a, int x) {
      int lo = L.cast(a.value("min_val", -1.0), L.dtype(x)), hi = L.cast(a.value("max_val", 1.0), L.dtype(x));
      return L.bin("min", L.bin("max", x, lo), hi);
    });
    // elu: x > 0 ? scale * x : scale * alpha * (exp(x * input_scale) - 1)
    t["aten.elu.default"] = unary([](Lowerer& L, const Args& a, int x) {
      double alpha = a.number("alpha", 1), scale = a.number("scale", 1), is = a.number("input_scale", 1);
      int neg = L.bin("mul", L.un("expm1", L.bin("mul", x, L.cnst(is, x))), L.cnst(alpha * scale, x));
      return L.select(L.cmp("gt", x, L.cnst(0, x)), L.bin("mul", x, L.cnst(scale, x)), neg);
    });
    // selu: scale * (x > 0 ? x : alpha * expm1(x)), with SELU's fixed alpha and scale.
    t["aten.selu.default"] = unary([](Lowerer& L, const Args&, int x) {
      const double alpha = 1.6732632423543772848170429916717, scale = 1.0507009873554804934193349852946;
      int neg = L.bin("mul", L.un("expm1", x), L.cnst(alpha * scale, x));
      return L.select(L.cmp("gt", x, L.cnst(0, x)), L.bin("mul", x, L.cnst(scale, x)), neg);
    });
    // celu: x > 0 ? x : alpha * expm1(x / alpha)
    t["aten.celu.default"] = unary([](Lowerer& L, const Args& a, int x) {
      double alpha = a.number("alpha", 1);
      int neg = L.bin("mul", L.un("expm1", L.bin("div", x, L.cnst(alpha, x))), L.cnst(alpha, x));
      return L.select(L.cmp("gt", x, L.cnst(0, x)), x, neg);
    });
    // softplus: x * beta > threshold ? x : log1p(exp(x * beta)) / beta
    t["aten.softplus.default"] = unary([](Lowerer& L, const Args& a, int x) {
      double beta = a.number("beta", 1), th = a.number("threshold", 20);
      int bx = L.bin("mul", x, L.cnst(beta, x));
      int soft = L.bin("div", L.un("log1p", L.un("exp", bx)), L.cnst(beta, x));
      return L.select(L.cmp("gt", bx, L.cnst(th, x)), x, soft);
    });
    // hardsigmoid: clamp(x / 6 + 1/2, 0, 1); hardswish: x * hardsigmoid(x)
    auto hardsigmoid = [](Lowerer& L, int x) {
      int y = L.bin("add", L.bin("div", x, L.cnst(6, x)), L.cnst(0.5, x));
      return L.bin("min", L.bin("max", y, L.cnst(0, x)), L.cnst(1, x));
    };
    t["aten.hardsigmoid.default"] = unary([hardsigmoid](Lowerer& L, const Args&, int x) { return hardsigmoid(L, x); });
    t["aten.hardswish.default"] = unary([hardsigmoid](Lowerer& L, const Args&, int x) {
      return L.bin("mul", x, hardsigmoid(L, x));
    });
    // mish: x * tanh(softplus(x)), softplus with threshold 20
    t["aten.mish.default"] = unary([](Lowerer& L, const Args&, int x) {
      int sp = L.select(L.cmp("gt", x, L.cnst(20, x)), x, L.un("log1p", L.un("exp", x)));
      return L.bin("mul", x, L.un("tanh", sp));
    });
    // sign: (x > 0) - (x < 0)
    t["aten.sign.default"] = t["aten.sgn.default"] = unary([](Lowerer& L, const Args&, int x) {
      if (L.dtype(x) == DType::Bool) return x;
      return L.bin("sub", L.cast(L.cmp("gt", x, L.cnst(0, x)), L.dtype(x)),
                   L.cast(L.cmp("lt", x, L.cnst(0, x)), L.dtype(x)));
    });
    t["aten.isnan.default"] = [](Lowerer& L, const Args& a) {
      int x = a.value("self");
      if (!isFloatD(L.dtype(x))) return std::vector<int>{L.cmp("ne", x, x)};
      return std::vector<int>{L.cmp("ne", x, x)};
    };
    // threshold: x > threshold ? x : value
    t["aten.threshold.default"] = unary([](Lowerer& L, const Args& a, int x) {
      int th = L.cast(a.value("threshold"), L.dtype(x)), v = L.cast(a.value("value"), L.dtype(x));
      return L.select(L.cmp("gt", x, th), x, v);
    });
    t["aten.clamp.default"] = t["aten.clamp.Tensor"] = unary([](Lowerer& L, const Args& a, int x) {
      if (a.present("min")) x = L.bin("max", x, L.cast(a.value("min"), L.dtype(x)));
      if (a.present("max")) x = L.bin("min", x, L.cast(a.value("max"), L.dtype(x)));
      return x;
    });
    t["aten.clamp_min.default"] = unary([](Lowerer& L, const Args& a, int x) {
      return L.bin("max", x, L.cast(a.value("min"), L.dtype(x)));
    });
    t["aten.clamp_max.default"] = unary([](Lowerer& L, const Args& a, int x) {
      return L.bin("min", x, L.cast(a.value("max"), L.dtype(x)));
    });
    // where(c, x, y)
    t["aten.where.self"] = t["aten.where.ScalarOther"] = t["aten.where.ScalarSelf"] = t["aten.where.Scalar"] =
        [](Lowerer& L, const Args& a) {
          DType d = opmath(a.resultDType());
          int v = L.select(a.value("condition"), L.cast(a.value("self"), d), L.cast(a.value("other"), d));
          return std::vector<int>{finish(L, a, v)};
        };
    // masked_fill(x, mask, value) = where(mask, value, x)
    t["aten.masked_fill.Scalar"] = t["aten.masked_fill.Tensor"] = [](Lowerer& L, const Args& a) {
      DType d = opmath(a.resultDType());
      int x = L.cast(a.value("self"), d);
      return std::vector<int>{finish(L, a, L.select(a.value("mask"), L.cast(a.value("value"), d), x))};
    };
    // lerp: self + weight * (end - self)
    t["aten.lerp.Scalar"] = t["aten.lerp.Tensor"] = [](Lowerer& L, const Args& a) {
      int x = in(L, a, "self"), e = in(L, a, "end"), w = L.cast(a.value("weight"), L.dtype(x));
      return std::vector<int>{finish(L, a, L.bin("add", x, L.bin("mul", w, L.bin("sub", e, x))))};
    };
    // addcmul: self + value * t1 * t2; addcdiv: self + value * t1 / t2
    for (const char* op : {"mul", "div"})
      t[std::string("aten.addc") + op + ".default"] = [op](Lowerer& L, const Args& a) {
        int x = in(L, a, "self"), t1 = in(L, a, "tensor1"), t2 = in(L, a, "tensor2");
        int v = L.bin("mul", L.cast(a.value("value", 1.0), L.dtype(x)), L.bin(op, t1, t2));
        return std::vector<int>{finish(L, a, L.bin("add", x, v))};
      };
    // Copies and dtype conversions.
    t["aten.clone.default"] = t["aten.contiguous.default"] = t["aten.alias.default"] =
        [](Lowerer& L, const Args& a) { return std::vector<int>{a.value("self")}; };
    t["aten._to_copy.default"] = t["aten.to.dtype"] = [](Lowerer& L, const Args& a) {
      return std::vector<int>{L.cast(a.value("self"), a.resultDType())};
    };

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
    // layer_norm: (x - mean) * rsqrt(var + eps) * weight + bias over the last
    // dims. native_layer_norm also returns mean and rstd: lowered only when
    // nothing uses them (canLowerNode), so its rule returns the output alone.
    t["aten.layer_norm.default"] = t["aten.native_layer_norm.default"] = [](Lowerer& L, const Args& a) {
      return std::vector<int>{finish(L, a, layerNorm(L, a, in(L, a, "input")))};
    };
    // Batch norm in inference (running statistics), per channel (dim 1), as
    // ATen's CPU kernel computes it: alpha = weight / sqrt(var + eps),
    // beta = bias - mean * alpha, y = x * alpha + beta. The saved statistics
    // (results 1, 2) must be unused (canLowerNode).
    t["aten.native_batch_norm.default"] = t["aten._native_batch_norm_legit_no_training.default"] =
        [](Lowerer& L, const Args& a) {
          if (a.present("training") && a.flag("training", false)) throw Failure{"batch_norm in training mode"};
          if (!a.present("running_mean") || !a.present("running_var"))
            throw Failure{"batch_norm without running statistics"};
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
          int invstd = L.bin("div", L.cnst(1, x), L.un("sqrt", L.bin("add", perChannel("running_var"),
                                                                        L.cnst(a.number("eps", 1e-5), x))));
          int alpha = a.present("weight") ? L.bin("mul", invstd, perChannel("weight")) : invstd;
          int beta = L.bin("mul", L.un("neg", perChannel("running_mean")), alpha);
          if (a.present("bias")) beta = L.bin("add", perChannel("bias"), beta);
          return std::vector<int>{finish(L, a, L.bin("add", L.bin("mul", x, alpha), beta))};
        };
    // max_pool2d without padding: the max over the kh*kw strided views
    // x[..., a*dh :: sh, b*dw :: sw] (each an affine index map). The indices
    // of max_pool2d_with_indices must be unused (canLowerNode).
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
      int acc = -1;
      for (int64_t i = 0; i < k[0]; ++i)
        for (int64_t j = 0; j < k[1]; ++j) {
          std::vector<AffineIndex> idx;
          for (size_t d = 0; d + 2 < r; ++d) idx.push_back(AffineIndex{static_cast<int>(d), 1, 0});
          idx.push_back(AffineIndex{static_cast<int>(r - 2), st[0], i * dil[0]});
          idx.push_back(AffineIndex{static_cast<int>(r - 1), st[1], j * dil[1]});
          int v = L.view(x, out, idx);
          acc = acc < 0 ? v : L.bin("max", acc, v);
        }
      return std::vector<int>{acc};
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

    // Views: index maps, no data movement.
    t["aten.permute.default"] = [](Lowerer& L, const Args& a) {
      return std::vector<int>{permute(L, a.value("self"), a.ints("dims"))};
    };
    t["aten.transpose.int"] = [](Lowerer& L, const Args& a) {
      int x = a.value("self");
      size_t r = L.shape(x).size();
      std::vector<int64_t> perm(r);
      for (size_t i = 0; i < r; ++i) perm[i] = static_cast<int64_t>(i);
      if (r > 0) std::swap(perm[normDim(int64_t(a.number("dim0", 0)), r)], perm[normDim(int64_t(a.number("dim1", 0)), r)]);
      return std::vector<int>{permute(L, x, perm)};
    };
    t["aten.t.default"] = [](Lowerer& L, const Args& a) {
      int x = a.value("self");
      if (L.shape(x).size() < 2) return std::vector<int>{x};
      return std::vector<int>{permute(L, x, {1, 0})};
    };
    t["aten.unsqueeze.default"] = [](Lowerer& L, const Args& a) {
      int x = a.value("self");
      auto s = L.shape(x);
      int d = normDim(int64_t(a.number("dim", 0)), s.size() + 1);
      s.insert(s.begin() + d, 1);
      return std::vector<int>{reshape(L, x, s)};
    };
    t["aten.squeeze.dim"] = t["aten.squeeze.dims"] = t["aten.squeeze.default"] = [](Lowerer& L, const Args& a) {
      int x = a.value("self");
      auto s = L.shape(x);
      std::vector<int> dims = reduceDims(a, "dim", s.size());
      std::vector<int64_t> out;
      for (size_t i = 0; i < s.size(); ++i)
        if (!(s[i] == 1 && std::find(dims.begin(), dims.end(), int(i)) != dims.end())) out.push_back(s[i]);
      return std::vector<int>{reshape(L, x, out)};
    };
    t["aten.view.default"] = t["aten.reshape.default"] = t["aten._unsafe_view.default"] =
        [](Lowerer& L, const Args& a) {
          // view/_unsafe_view name the sizes `size`, reshape names them `shape`.
          return std::vector<int>{reshape(L, a.value("self"), a.ints(a.present("shape") ? "shape" : "size"))};
        };
    // expand: size-1 dims (and new leading dims) repeat.
    t["aten.expand.default"] = [](Lowerer& L, const Args& a) {
      int x = a.value("self");
      auto s = L.shape(x);
      std::vector<int64_t> sizes = a.ints("size");
      if (sizes.size() < s.size()) throw Failure{"expand to fewer dims"};
      size_t lead = sizes.size() - s.size();
      std::vector<AffineIndex> idx;
      for (size_t j = 0; j < s.size(); ++j) {
        int64_t& o = sizes[lead + j];
        if (o == -1) o = s[j];
        if (s[j] == o) idx.push_back(AffineIndex{static_cast<int>(lead + j), 1, 0});
        else if (s[j] == 1) idx.push_back(AffineIndex{-1, 1, 0});
        // At probe sizes, a literal size of the graph (a static graph's
        // expand to the traced sizes) keeps the input's dim: the generic
        // kernel is only ever used where instanceOf finds it equal to the
        // region's own kernel, which this rule does not change.
        else if (tProbe) o = s[j], idx.push_back(AffineIndex{static_cast<int>(lead + j), 1, 0});
        else throw Failure{"expand: size mismatch"};
      }
      return std::vector<int>{L.view(x, sizes, idx)};
    };
    // slice(dim, start, end, step): in = start + step * out
    t["aten.slice.Tensor"] = [](Lowerer& L, const Args& a) {
      int x = a.value("self");
      auto s = L.shape(x);
      int d = normDim(a.integer("dim", 0), s.size());
      int64_t n = s[d], step = a.integer("step", 1);
      int64_t start = a.present("start") ? a.integer("start", 0) : 0;
      int64_t end = a.present("end") ? a.integer("end", 0) : n;
      if (step <= 0) throw Failure{"slice step must be positive"};
      if (start < 0) start += n;
      if (end < 0) end += n;
      start = std::clamp<int64_t>(start, 0, n);
      end = std::clamp<int64_t>(end, start, n);
      std::vector<AffineIndex> idx;
      for (size_t j = 0; j < s.size(); ++j) idx.push_back(AffineIndex{static_cast<int>(j), 1, 0});
      idx[d] = AffineIndex{d, step, start};
      s[d] = (end - start + step - 1) / step;
      return std::vector<int>{L.view(x, s, idx)};
    };
    // select(dim, index): that dim reads a constant.
    t["aten.select.int"] = [](Lowerer& L, const Args& a) {
      int x = a.value("self");
      auto s = L.shape(x);
      int d = normDim(int64_t(a.number("dim", 0)), s.size());
      int64_t i = int64_t(a.number("index", 0));
      if (i < 0) i += s[d];
      if (i < 0 || i >= s[d]) throw Failure{"select: index out of range"};
      std::vector<AffineIndex> idx;
      std::vector<int64_t> out;
      int o = 0;
      for (size_t j = 0; j < s.size(); ++j) {
        if (int(j) == d) {
          idx.push_back(AffineIndex{-1, 1, i});
        } else {
          idx.push_back(AffineIndex{o++, 1, 0});
          out.push_back(s[j]);
        }
      }
      return std::vector<int>{L.view(x, out, idx)};
    };
    return t;
  }();
  return table;
}

const Rule* findRule(const std::string& name) {
  const auto& t = rules();
  auto it = t.find(name);
  if (it == t.end() && name.find('.', 5) == std::string::npos) it = t.find(name + ".default");
  return it == t.end() ? nullptr : &it->second;
}

}  // namespace

bool canLowerNode(const ir::Node& n, std::string& reason) {
  const std::string& name = n.opName();
  if (name.rfind("aten.", 0) != 0) {
    reason = "not an aten op";
    return false;
  }
  if (!findRule(name)) {
    reason = "no lowering rule";
    return false;
  }
  if (n.numRegions() || n.hasEffects()) {
    reason = "effects or regions";
    return false;
  }
  for (size_t i = 0; i < n.numResults(); ++i) {
    Type t = n.result(i)->type();
    if (!t.isTensor() || !t.ranked() || !supportedDType(t.dtype())) {
      reason = "result type " + t.str() + " not handled";
      return false;
    }
  }
  for (ir::Value* v : n.operands()) {
    Type t = v->type();
    if (t.isTensor() && (!t.ranked() || !supportedDType(t.dtype()))) {
      reason = "operand type " + t.str() + " not handled";
      return false;
    }
    if (!t.isTensor() && !t.isInt() && !t.isFloat() && t.kind() != ir::TypeKind::Bool &&
        t.kind() != ir::TypeKind::Null) {
      reason = "operand type " + t.str() + " not handled";
      return false;
    }
  }
  // A reshape that splits or merges dims is no affine index map: left to
  // ATen, where it is a free view of the (contiguous) producer, it keeps the
  // rest of the region lowerable (typically linear -> view -> pointwise).
  if ((name == "aten.view.default" || name == "aten.reshape.default" || name == "aten._unsafe_view.default") &&
      n.numOperands() > 0 && n.numResults() == 1) {
    Type in = n.operand(0)->type(), out = n.result(0)->type();
    auto nonUnit = [](const Type& t, std::vector<int64_t>& dims) {
      for (const auto& d : t.dims()) {
        if (!d.isStatic()) return false;
        if (d.size != 1) dims.push_back(d.size);
      }
      return true;
    };
    std::vector<int64_t> a, b;
    if (in.isTensor() && nonUnit(in, a) && nonUnit(out, b) && a != b) {
      reason = "reshape that splits or merges dims (kept as an ATen view)";
      return false;
    }
  }
  // Ops whose rule computes result 0 only (inference forms): the others
  // (pooling indices, normalisation statistics) must have no uses.
  static const std::unordered_map<std::string, const char*> firstOnly = {
      {"aten.max_pool2d_with_indices.default", "the indices"},
      {"aten.native_layer_norm.default", "mean/rstd"},
      {"aten.native_batch_norm.default", "the saved statistics"},
      {"aten._native_batch_norm_legit_no_training.default", "the saved statistics"}};
  if (auto it = firstOnly.find(name); it != firstOnly.end())
    for (size_t i = 1; i < n.numResults(); ++i)
      if (!n.result(i)->uses().empty()) {
        reason = std::string("uses ") + it->second + " (result " + std::to_string(i) + ")";
        return false;
      }
  Bound b;
  if (!bindNode(n, b, reason)) return false;
  return true;
}

std::vector<InputDesc> describeInputs(const Region& r, int64_t dynamicSize) {
  std::vector<InputDesc> out;
  for (ir::Value* v : r.inputs) {
    InputDesc d;
    Type t = v->type();
    if (t.isTensor()) {
      d.dtype = t.dtype();
      for (const auto& dim : t.dims()) d.shape.push_back(dim.isStatic() ? dim.size : dynamicSize);
    } else {
      d.isTensor = false;
      d.dtype = t.isInt() ? DType::I64 : t.isFloat() ? DType::F64 : DType::Bool;
    }
    out.push_back(d);
  }
  return out;
}

bool buildKernel(const Region& r, const std::vector<InputDesc>& in, KernelIR& k, std::string& error) {
  k = KernelIR{};
  Lowerer L(k);
  try {
    for (size_t i = 0; i < r.inputs.size(); ++i) {
      KNode n;
      n.dtype = in[i].dtype;
      if (in[i].isTensor) {
        n.kind = KNode::Input;
        n.shape = in[i].shape;
        n.index = static_cast<int>(k.inputs.size());
        k.inputs.push_back(KInput{in[i].dtype, in[i].shape, in[i].contiguous});
      } else {
        n.kind = KNode::Scalar;
        n.index = static_cast<int>(k.scalars.size());
        k.scalars.push_back(in[i].dtype);
      }
      L.values[r.inputs[i]] = k.add(n);
    }
    for (const ir::Node* node : r.nodes) {
      const Rule* rule = findRule(node->opName());
      if (!rule) throw Failure{"no lowering rule for " + node->opName()};
      Bound b;
      std::string why;
      if (!bindNode(*node, b, why)) throw Failure{node->opName() + ": " + why};
      Args args(L, b);
      std::vector<int> res = (*rule)(L, args);
      // See Note [Test fault injection] (AtenExecutable.cpp): the same switch makes
      // this lowering wrong, so xacc.debug.compare can be tested on the xpu path.
      // The kernel text changes, so its kernel cache key does too.
      if (!res.empty() && node->result(0)->type().isTensor() && node->opName() == support::testFaultOp())
        res[0] = L.bin("add", res[0], L.cnst(1, res[0]));
      for (size_t i = 0; i < res.size() && i < node->numResults(); ++i) {
        int v = res[i];
        // Results keep the dtype the graph declares.
        Type t = node->result(i)->type();
        if (t.isTensor() && k.at(v).dtype != t.dtype()) v = L.cast(v, t.dtype());
        if (t.isTensor() && k.at(v).shape.size() != t.dims().size())
          throw Failure{node->opName() + ": rank differs from the declared type"};
        L.values[node->result(i)] = v;
      }
    }
    for (ir::Value* v : r.outputs) {
      auto it = L.values.find(v);
      if (it == L.values.end()) throw Failure{"region output has no kernel value"};
      int id = it->second;
      // Kernel outputs are tensors of the declared rank; scalars broadcast to rank 0.
      if (k.at(id).kind == KNode::Scalar || k.at(id).kind == KNode::Const) id = L.cast(id, k.at(id).dtype);
      k.outputs.push_back(id);
    }
  } catch (const Failure& f) {
    error = f.why;
    return false;
  }
  return true;
}

std::vector<std::string> loweredOpNames() {
  std::vector<std::string> out;
  for (const auto& [name, rule] : rules()) out.push_back(name);
  return out;
}

ProbeLowering::ProbeLowering() : prev_(tProbe) { tProbe = true; }
ProbeLowering::~ProbeLowering() { tProbe = prev_; }

}  // namespace xacc::backend::mlir
