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
//
// This file binds arguments, assembles the rule table and translates regions;
// the rules themselves live in one file per op family (AtenElementwiseRules.cpp,
// AtenReductionRules.cpp, AtenViewRules.cpp) and share AtenLoweringImpl.h.
#include "AtenLoweringImpl.h"
#include "xacc/support/TestFault.h"

namespace xacc::backend::mlir {
namespace lowering {

thread_local bool tProbe = false;

namespace {

bool supportedDType(DType d) {
  switch (d) {
    case DType::F16: case DType::BF16: case DType::F32: case DType::F64: case DType::I64:
    case DType::I32: case DType::I16: case DType::I8: case DType::Bool: return true;
    default: return false;
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

}  // namespace

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

namespace {

const RuleTable& rules() {
  static const RuleTable table = [] {
    RuleTable t;
    addElementwiseRules(t);
    addReductionRules(t);
    addViewRules(t);
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
}  // namespace lowering

using namespace lowering;

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
  // (normalisation statistics) must have no uses.
  static const std::unordered_map<std::string, const char*> firstOnly = {
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
