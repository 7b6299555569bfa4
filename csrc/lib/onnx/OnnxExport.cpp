// GIR `aten.*` -> ONNX (opset 17). See Note [The tensor part of a graph] in
// OnnxExport.h. Each translated op binds its schema arguments the way the
// ATen backend does for the ops listed here (attribute with the argument's
// name, else the next operand, else the default), casts operands to the
// dtype ATen's type promotion gives (the node's result dtype for arithmetic,
// the promoted operand dtype for comparisons), and emits one or a few ONNX
// nodes.
#include "xacc/onnx/OnnxExport.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "Protobuf.h"
#include "xacc/ir/Op.h"

namespace xacc::onnx {

namespace {

using ir::Attr;
using ir::DType;
using ir::Node;
using ir::Type;
using ir::Value;

// onnx.proto field numbers.
namespace f {
constexpr int kModelIrVersion = 1, kModelProducerName = 2, kModelProducerVersion = 3,
              kModelGraph = 7, kModelOpset = 8;
constexpr int kOpsetDomain = 1, kOpsetVersion = 2;
constexpr int kGraphNode = 1, kGraphName = 2, kGraphInitializer = 5, kGraphDoc = 10,
              kGraphInput = 11, kGraphOutput = 12;
constexpr int kNodeInput = 1, kNodeOutput = 2, kNodeName = 3, kNodeOpType = 4,
              kNodeAttribute = 5, kNodeDoc = 6;
constexpr int kAttrName = 1, kAttrF = 2, kAttrI = 3, kAttrInts = 8, kAttrType = 20;
constexpr int kAttrTypeFloat = 1, kAttrTypeInt = 2, kAttrTypeInts = 7;
constexpr int kTensorDims = 1, kTensorDataType = 2, kTensorName = 8, kTensorRawData = 9;
constexpr int kValueInfoName = 1, kValueInfoType = 2, kValueInfoDoc = 3;
constexpr int kTypeTensor = 1, kTensorTypeElem = 1, kTensorTypeShape = 2;
constexpr int kShapeDim = 1, kDimValue = 1, kDimParam = 2;
}  // namespace f

constexpr int64_t kIrVersion = 8;
constexpr int64_t kOpsetVersion = 17;

// TensorProto.DataType.
int onnxDType(DType d) {
  switch (d) {
    case DType::F32: return 1;
    case DType::U8: return 2;
    case DType::I8: return 3;
    case DType::I16: return 5;
    case DType::I32: return 6;
    case DType::I64: return 7;
    case DType::Bool: return 9;
    case DType::F16: return 10;
    case DType::F64: return 11;
    case DType::C64: return 14;
    case DType::C128: return 15;
    case DType::BF16: return 16;
  }
  return 0;
}

/// The tensor dtype a scalar GIR type stands for (i64 -> I64, f64 -> F64, ...).
bool scalarDType(Type t, DType& out) {
  if (t.isInt()) {
    out = t.bitWidth() == 32 ? DType::I32 : DType::I64;
    return true;
  }
  if (t.isFloat()) {
    out = t.bitWidth() == 32 ? DType::F32 : DType::F64;
    return true;
  }
  if (t.kind() == ir::TypeKind::Bool) {
    out = DType::Bool;
    return true;
  }
  return false;
}

/// Little-endian bytes of `values` converted to `d`; false for dtypes we do
/// not encode (half, complex).
bool encode(DType d, const std::vector<double>& values, std::string& raw) {
  auto put = [&raw](const auto& x) { raw.append(reinterpret_cast<const char*>(&x), sizeof x); };
  for (double v : values) {
    switch (d) {
      case DType::F32: put(float(v)); break;
      case DType::F64: put(v); break;
      case DType::I64: put(int64_t(v)); break;
      case DType::I32: put(int32_t(v)); break;
      case DType::I16: put(int16_t(v)); break;
      case DType::I8: put(int8_t(v)); break;
      case DType::U8: put(uint8_t(v)); break;
      case DType::Bool: put(uint8_t(v != 0)); break;
      default: return false;
    }
  }
  return true;
}

/// Where one schema argument of a node comes from.
struct Arg {
  const Attr* attr = nullptr;
  Value* value = nullptr;
  std::vector<Value*> list;  ///< a Tensor[] argument
  bool present() const { return attr || value || !list.empty(); }
};

/// One translation rule: the op's schema argument names (a leading `*` marks a
/// Tensor[] argument) and the emitter.
class Exporter;
using Emit = std::function<bool(Exporter&, const Node&, std::vector<Arg>&)>;
struct Rule {
  std::vector<std::string> args;
  Emit emit;
};
const std::map<std::string, Rule>& rules();
/// Camel `tensor` module builtins (`func.builtin {name = "tensor::add"}`), by function name.
const std::map<std::string, Rule>& tensorRules();

/// The `tensor::` function a node calls, or "".
std::string tensorBuiltin(const Node& n) {
  if (!n.op().is(ir::CoreOp::Builtin) && !n.op().is(ir::CoreOp::BuiltinEffect)) return {};
  const Attr* name = n.attr("name");
  if (!name || name->kind() != Attr::Kind::Str || name->getStr().rfind("tensor::", 0) != 0) return {};
  return name->getStr().substr(8);
}

class Exporter {
public:
  Exporter(const ir::Graph& g, const ExportOptions& o, support::DiagnosticEngine& d)
      : g_(g), opts_(o), diags_(d) {}

  bool run(std::string& bytes, ExportSummary* summary);

  // ---- Helpers for the rules -------------------------------------------------
  support::SourceLoc locOf(const Node& n) const { return opts_.locs ? opts_.locs->of(n) : n.loc(); }
  bool fail(const Node& n, const std::string& msg) {
    std::string fn = tensorBuiltin(n);
    diags_.error("E0801", locOf(n), "std::onnx: " + (fn.empty() ? n.opName() : "tensor::" + fn) + ": " + msg);
    return false;
  }
  std::string fresh(const std::string& hint) { return hint + "_" + std::to_string(counter_++); }

  /// Adds an ONNX node; returns its first output's name.
  std::string node(const std::string& opType, const std::vector<std::string>& inputs,
                   const std::vector<std::string>& outputs, pb::Message attrs = {},
                   std::vector<pb::Message> moreAttrs = {}) {
    trackRank(opType, inputs, outputs);
    pb::Message m;
    for (const auto& i : inputs) m.bytesField(f::kNodeInput, i);
    for (const auto& o : outputs) m.bytesField(f::kNodeOutput, o);
    m.bytesField(f::kNodeName, opType + "_" + std::to_string(nodes_.size()));
    m.bytesField(f::kNodeOpType, opType);
    if (!attrs.bytes().empty()) m.messageField(f::kNodeAttribute, attrs);
    for (const auto& a : moreAttrs) m.messageField(f::kNodeAttribute, a);
    if (!currentDoc_.empty()) m.bytesField(f::kNodeDoc, currentDoc_);
    nodes_.push_back(std::move(m));
    onnxOps_.push_back(opType);
    return outputs.empty() ? std::string() : outputs[0];
  }
  // Note [Ranks of unranked values]: Camel's tensors are typed unranked
  // (tensor<f64, *, cpu>), but ONNX wants every graph input and output to have
  // a rank. Ranks follow from the initializers' dims and the constant shape
  // arguments, so they are propagated through the emitted nodes; reductions
  // set theirs with setRank (they know their axes and keepdim).
  int64_t rankOfName(const std::string& name) const {
    auto it = rank_.find(name);
    return it == rank_.end() ? -1 : it->second;
  }
  void setRank(const std::string& name, int64_t r) {
    if (r >= 0) rank_[name] = r;
  }
  void trackRank(const std::string& op, const std::vector<std::string>& in, const std::vector<std::string>& out) {
    if (out.empty()) return;
    auto r = [&](size_t i) { return i < in.size() ? rankOfName(in[i]) : -1; };
    int64_t result = -1;
    if (op == "MatMul") {
      int64_t a = r(0), b = r(1);
      if (a >= 0 && b >= 0) result = a == 1 && b == 1 ? 0 : a == 1 ? b - 1 : b == 1 ? a - 1 : std::max(a, b);
    } else if (op == "Reshape") {
      auto it = intsLen_.find(in.size() > 1 ? in[1] : "");
      if (it != intsLen_.end()) result = it->second;
    } else if (op == "Gather") {
      if (r(0) > 0) result = r(0) - 1;
    } else if (op == "Unsqueeze" || op == "Squeeze") {
      auto it = intsLen_.find(in.size() > 1 ? in[1] : "");
      if (r(0) >= 0 && it != intsLen_.end()) result = op == "Unsqueeze" ? r(0) + it->second : r(0) - it->second;
    } else if (op.rfind("Reduce", 0) == 0 || op == "ArgMax" || op == "ArgMin") {
      result = -1;  // set by the rule
    } else {  // elementwise, casts, transposes, concatenation: the broadest input
      for (size_t i = 0; i < in.size(); ++i) {
        if (r(i) < 0) {
          result = -1;
          break;
        }
        result = std::max(result, r(i));
      }
    }
    for (const auto& o : out) setRank(o, result);
  }

  static pb::Message intAttr(const std::string& name, int64_t v) {
    pb::Message a;
    a.bytesField(f::kAttrName, name);
    a.int64Field(f::kAttrI, v);
    a.int64Field(f::kAttrType, f::kAttrTypeInt);
    return a;
  }
  static pb::Message floatAttr(const std::string& name, float v) {
    pb::Message a;
    a.bytesField(f::kAttrName, name);
    a.floatField(f::kAttrF, v);
    a.int64Field(f::kAttrType, f::kAttrTypeFloat);
    return a;
  }
  static pb::Message intsAttr(const std::string& name, const std::vector<int64_t>& vs) {
    pb::Message a;
    a.bytesField(f::kAttrName, name);
    for (int64_t v : vs) a.int64Field(f::kAttrInts, v);
    a.int64Field(f::kAttrType, f::kAttrTypeInts);
    return a;
  }

  /// An initializer of dtype `d` and shape `dims`; returns its name.
  bool initializer(const Node& n, const std::string& name, DType d, const std::vector<int64_t>& dims,
                   const std::vector<double>& values, std::string& out) {
    std::string raw;
    if (!encode(d, values, raw))
      return fail(n, std::string("cannot write a constant of dtype ") + ir::dtypeName(d));
    pb::Message t;
    for (int64_t x : dims) t.int64Field(f::kTensorDims, x);
    t.int64Field(f::kTensorDataType, onnxDType(d));
    t.bytesField(f::kTensorName, name);
    t.bytesField(f::kTensorRawData, raw);
    initializers_.push_back(std::move(t));
    setRank(name, int64_t(dims.size()));
    if (d == DType::I64 && dims.size() == 1) intsLen_[name] = dims[0];
    initNames_.push_back(name);
    initSet_.insert(name);
    out = name;
    return true;
  }
  bool scalarConst(const Node& n, DType d, double v, std::string& out) {
    return initializer(n, fresh("const"), d, {}, {v}, out);
  }
  bool intsConst(const Node& n, const std::vector<int64_t>& vs, std::string& out) {
    std::vector<double> ds(vs.begin(), vs.end());
    return initializer(n, fresh("ints"), DType::I64, {int64_t(vs.size())}, ds, out);
  }

  /// The dtype an argument would have as a tensor (scalars by their type).
  bool dtypeOf(const Arg& a, DType& d) const {
    if (a.value) {
      Type t = a.value->type();
      if (t.isTensor()) {
        d = t.dtype();
        return true;
      }
      return scalarDType(t, d);
    }
    if (a.attr) {
      switch (a.attr->kind()) {
        case Attr::Kind::Int: d = DType::I64; return true;
        case Attr::Kind::Float: d = DType::F64; return true;
        case Attr::Kind::Bool: d = DType::Bool; return true;
        default: return false;
      }
    }
    return false;
  }
  bool isTensorArg(const Arg& a) const { return a.value && a.value->type().isTensor(); }

  /// ONNX name of an argument as a tensor of dtype `want` (casting when the
  /// value's dtype differs; attribute scalars are written in `want` directly).
  bool tensorOf(const Node& n, const Arg& a, DType want, std::string& out) {
    if (a.attr) {
      double v;
      if (!attrNumber(*a.attr, v)) return fail(n, "expected a number, got " + a.attr->str());
      return scalarConst(n, want, v, out);
    }
    if (!a.value) return fail(n, "missing tensor argument");
    // A nested array of constants (`reshape([1.0, 2.0], [2])`) is an initializer.
    if (a.value->type().kind() == ir::TypeKind::List) {
      std::vector<int64_t> dims;
      std::vector<double> vs;
      if (!constArray(a.value, 0, dims, vs))
        return fail(n, "an array operand must be a compile-time constant (rectangular, numbers)");
      return initializer(n, fresh("array"), want, dims, vs, out);
    }
    DType have;
    if (!dtypeOf(a, have)) return fail(n, "operand of type " + a.value->type().str() + " is not a tensor or number");
    // A constant scalar operand is written in the wanted dtype directly.
    if (!a.value->type().isTensor()) {
      double v;
      if (constNumber(a.value, v)) return scalarConst(n, want, v, out);
    }
    std::string name;
    if (!nameOf(n, a.value, name)) return false;
    if (a.value->type().isTensor() && a.value->type().ranked()) setRank(name, int64_t(a.value->type().dims().size()));
    if (have == want) {
      out = name;
      return true;
    }
    out = node("Cast", {name}, {fresh("cast")}, intAttr("to", onnxDType(want)));
    return true;
  }

  static bool attrNumber(const Attr& a, double& v) {
    switch (a.kind()) {
      case Attr::Kind::Int: v = double(a.getInt()); return true;
      case Attr::Kind::Float: v = a.getFloat(); return true;
      case Attr::Kind::Bool: v = a.getBool() ? 1 : 0; return true;
      default: return false;
    }
  }
  /// The value of an `arith.const` scalar.
  static bool constNumber(const Value* v, double& out) {
    const Node* d = v->definingNode();
    if (!d || !d->op().is(ir::CoreOp::Const)) return false;
    const Attr* a = d->attr("value");
    return a && attrNumber(*a, out);
  }
  /// A rectangular nested `list.make` of number constants: its dims and values.
  static bool constArray(const Value* v, size_t depth, std::vector<int64_t>& dims, std::vector<double>& out) {
    const Node* def = v->definingNode();
    double d;
    if (constNumber(v, d)) {
      if (depth != dims.size()) return false;
      out.push_back(d);
      return true;
    }
    if (!def || !def->op().is(ir::CoreOp::ListMake)) return false;
    int64_t count = int64_t(def->numOperands());
    if (depth == dims.size()) dims.push_back(count);
    else if (dims[depth] != count) return false;
    for (Value* x : def->operands())
      if (!constArray(x, depth + 1, dims, out)) return false;
    return true;
  }
  /// An int or int list argument known at compile time (attribute, constant,
  /// list/tuple of constants).
  static bool constInts(const Arg& a, std::vector<int64_t>& out) {
    out.clear();
    if (a.attr) {
      if (a.attr->kind() == Attr::Kind::Int) {
        out.push_back(a.attr->getInt());
        return true;
      }
      if (a.attr->kind() != Attr::Kind::Array) return false;
      for (const Attr& x : a.attr->getArray()) {
        if (x.kind() != Attr::Kind::Int) return false;
        out.push_back(x.getInt());
      }
      return true;
    }
    if (!a.value) return false;
    double d;
    if (constNumber(a.value, d)) {
      out.push_back(int64_t(d));
      return true;
    }
    const Node* def = a.value->definingNode();
    if (!def || !(def->op().is(ir::CoreOp::ListMake) || def->op().is(ir::CoreOp::TupleMake)))
      return false;
    for (Value* x : def->operands()) {
      if (!constNumber(x, d)) return false;
      out.push_back(int64_t(d));
    }
    return true;
  }
  bool constInt(const Node& n, const Arg& a, int64_t dflt, int64_t& out, const char* what) {
    if (!a.present()) {
      out = dflt;
      return true;
    }
    std::vector<int64_t> v;
    if (!constInts(a, v) || v.size() != 1) return fail(n, std::string(what) + " must be a compile-time integer");
    out = v[0];
    return true;
  }
  bool constBool(const Node& n, const Arg& a, bool dflt, bool& out) {
    if (!a.present()) {
      out = dflt;
      return true;
    }
    double d;
    if (a.attr && attrNumber(*a.attr, d)) {
      out = d != 0;
      return true;
    }
    if (a.value && constNumber(a.value, d)) {
      out = d != 0;
      return true;
    }
    return fail(n, "a flag must be a compile-time bool");
  }
  static int64_t rankOf(const Value* v) {
    Type t = v->type();
    return t.isTensor() && t.ranked() ? int64_t(t.dims().size()) : -1;
  }
  /// 1 when result 0 is an effect token (func.builtin_effect), else 0.
  static size_t resultBase(const Node& n) {
    return n.numResults() > 0 && n.result(0)->type().isToken() ? 1 : 0;
  }
  /// The result name of node result `i` (tokens not counted; registers it).
  std::string resultName(const Node& n, size_t i) {
    const Value* v = n.result(i + resultBase(n));
    std::string name = baseName(v, "t");
    names_[v] = name;
    return name;
  }
  DType resultDType(const Node& n, size_t i) const { return n.result(i + resultBase(n))->type().dtype(); }
  size_t numTensorResults(const Node& n) const { return n.numResults() - resultBase(n); }

private:
  std::string baseName(const Value* v, const char* hint) {
    std::string s = v->name().empty() ? std::string(hint) : v->name();
    for (char& c : s)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
    std::string name = s;
    while (used_.count(name)) name = s + "_" + std::to_string(counter_++);
    used_.insert(name);
    return name;
  }
  /// ONNX name of an operand: an exported result, or a new graph input.
  bool nameOf(const Node& n, const Value* v, std::string& out) {
    auto it = names_.find(v);
    if (it != names_.end()) {
      out = it->second;
      return true;
    }
    Type t = v->type();
    DType d;
    if (!t.isTensor() && !scalarDType(t, d))
      return fail(n, "operand of type " + t.str() + " cannot be a model input");
    std::string name = baseName(v, v->isParam() ? "input" : "in");
    names_[v] = name;
    // An unranked tensor made by a constructor with a constant shape (tensor::random)
    // has that shape.
    std::vector<int64_t> dims;
    if (t.isTensor() && !t.ranked()) {
      const Node* def = v->definingNode();
      Arg shapeArg;
      for (size_t i = 0; def && i < def->numOperands(); ++i)
        if (!def->operand(i)->type().isToken()) {
          shapeArg.value = def->operand(i);
          break;
        }
      if (!shapeArg.value || shapeArg.value->type().kind() != ir::TypeKind::List ||
          !constInts(shapeArg, dims))
        return fail(n, "input tensor of unknown rank (" + t.str() + ", made by " +
                           (def ? def->opName() : std::string("a parameter")) + ") cannot be a model input");
      setRank(name, int64_t(dims.size()));
    } else if (t.isTensor()) {
      setRank(name, int64_t(t.dims().size()));
    } else {
      setRank(name, 0);
    }
    inputs_.push_back(valueInfo(name, t, inputDoc(v), -1, dims));
    inputNames_.push_back(name);
    out = name;
    return true;
  }
  std::string inputDoc(const Value* v) const {
    if (v->isParam()) return "parameter " + std::to_string(v->index()) + " of @" + g_.name();
    const Node* d = v->definingNode();
    return "result of " + d->opName() + (d->loc().valid() ? " at " + d->loc().str() : std::string());
  }
  static pb::Message valueInfo(const std::string& name, Type t, const std::string& doc, int64_t rank = -1,
                               const std::vector<int64_t>& staticDims = {}) {
    pb::Message shape;
    DType d = DType::F64;
    bool ranked = !t.isTensor() || t.ranked() || rank >= 0 || !staticDims.empty();
    std::vector<ir::Dim> dims;
    if (t.isTensor() && t.ranked()) dims = t.dims();
    else if (!staticDims.empty()) for (int64_t x : staticDims) dims.push_back(ir::Dim::fixed(x));
    else dims.assign(size_t(std::max<int64_t>(rank, 0)), ir::Dim::dynamic());
    if (t.isTensor()) {
      d = t.dtype();
      for (const ir::Dim& dim : dims) {
        pb::Message dm;
        if (dim.isStatic())
          dm.int64Field(f::kDimValue, dim.size);
        else if (!dim.sym.empty())
          dm.bytesField(f::kDimParam, dim.sym);
        shape.messageField(f::kShapeDim, dm);
      }
    } else {
      scalarDType(t, d);
    }
    pb::Message tensorType;
    tensorType.int64Field(f::kTensorTypeElem, onnxDType(d));
    if (ranked) tensorType.messageField(f::kTensorTypeShape, shape);  // rank 0 for scalars
    pb::Message type;
    type.messageField(f::kTypeTensor, tensorType);
    pb::Message vi;
    vi.bytesField(f::kValueInfoName, name);
    vi.messageField(f::kValueInfoType, type);
    if (!doc.empty()) vi.bytesField(f::kValueInfoDoc, doc);
    return vi;
  }

  bool isPart(const Node& n) const {
    // Deterministic tensor builtins are exported even when the front end ordered
    // them with a token because they read an array (their arrays must then be
    // compile-time constants, which the rules check).
    bool tensorFn = !tensorBuiltin(n).empty() && tensorRules().count(tensorBuiltin(n));
    if ((n.opName().rfind("aten.", 0) != 0 && !tensorFn) || (n.hasEffects() && !tensorFn) ||
        n.numRegions() != 0)
      return false;
    for (size_t i = resultBase(n); i < n.numResults(); ++i)
      if (!n.result(i)->type().isTensor()) return false;
    return true;
  }
  bool bind(const Node& n, const Rule& r, std::vector<Arg>& args) {
    std::vector<Value*> ops;
    for (Value* v : n.operands())
      if (!v->type().isToken()) ops.push_back(v);
    size_t next = 0;
    args.assign(r.args.size(), Arg{});
    for (size_t i = 0; i < r.args.size(); ++i) {
      bool list = r.args[i][0] == '*';
      std::string name = list ? r.args[i].substr(1) : r.args[i];
      if (const Attr* a = n.attr(name)) {
        args[i].attr = a;
        continue;
      }
      if (list) {
        while (next < ops.size() && ops[next]->type().isTensor()) args[i].list.push_back(ops[next++]);
        continue;
      }
      if (next < ops.size()) args[i].value = ops[next++];
    }
    if (next < ops.size()) return fail(n, "more operands than the translation knows arguments");
    for (const auto& [name, attr] : n.attrs().items())
      if (!(name == "name" && !tensorBuiltin(n).empty()) && std::none_of(r.args.begin(), r.args.end(),
                       [&](const std::string& a) { return a == name || a == "*" + name; }))
        return fail(n, "attribute '" + name + "' has no ONNX translation");
    return true;
  }

  const ir::Graph& g_;
  const ExportOptions& opts_;
  support::DiagnosticEngine& diags_;
  std::unordered_map<const Value*, std::string> names_;
  std::unordered_set<std::string> used_;
  std::vector<pb::Message> nodes_, initializers_, inputs_, outputs_;
  std::vector<std::string> inputNames_, outputNames_, initNames_, onnxOps_;
  std::unordered_set<std::string> initSet_;
  std::unordered_map<std::string, int64_t> rank_, intsLen_;
  std::string currentDoc_;
  uint64_t counter_ = 0;
};

bool Exporter::run(std::string& bytes, ExportSummary* summary) {
  std::unordered_set<const Node*> part;
  for (Node* n : g_)
    if (isPart(*n)) part.insert(n);
  if (part.empty()) {
    diags_.error("E0802", g_.front() ? g_.front()->loc() : support::SourceLoc{},
                 "std::onnx: graph @" + g_.name() +
                     " has no tensor operations to export (calls are exported only once inlined: "
                     "run std::opt first)");
    return false;
  }
  std::vector<const Value*> outputs;
  std::unordered_set<const Value*> isOutput;
  auto noteOutput = [&](const Value* v) {
    if (v && v->type().isTensor() && v->definingNode() && part.count(v->definingNode()) &&
        isOutput.insert(v).second)
      outputs.push_back(v);
  };
  for (Node* n : g_) {
    if (!part.count(n)) {
      for (Value* v : n->operands()) noteOutput(v);
      continue;
    }
    std::string fn = tensorBuiltin(*n);
    const Rule* rule = nullptr;
    if (!fn.empty()) {
      rule = &tensorRules().at(fn);
    } else {
      std::string op = n->opName().substr(5);
      std::string base = op.substr(0, op.find('.'));
      auto it = rules().find(op);
      if (it == rules().end()) it = rules().find(base);
      if (it == rules().end()) return fail(*n, "no ONNX translation for this op");
      rule = &it->second;
    }
    std::vector<Arg> args;
    if (!bind(*n, *rule, args)) return false;
    currentDoc_ = (fn.empty() ? n->opName() : "tensor::" + fn) +
                  (locOf(*n).valid() ? " at " + locOf(*n).str() : std::string());
    if (!rule->emit(*this, *n, args)) return false;
  }
  for (Value* v : g_.results()) noteOutput(v);
  if (outputs.empty()) {
    diags_.error("E0802", g_.front() ? g_.front()->loc() : support::SourceLoc{},
                 "std::onnx: no tensor computed in @" + g_.name() + " is used (nothing to export)");
    return false;
  }
  currentDoc_.clear();
  for (const Value* v : outputs) {
    std::string name = names_.at(v);
    if (initSet_.count(name)) name = node("Identity", {name}, {fresh(name)});
    if (v->type().isTensor() && !v->type().ranked() && rankOfName(name) < 0)
      return fail(*v->definingNode(), "cannot tell the rank of this output");
    outputs_.push_back(valueInfo(name, v->type(), "", rankOfName(name)));
    outputNames_.push_back(name);
  }

  pb::Message graph;
  for (const auto& n : nodes_) graph.messageField(f::kGraphNode, n);
  graph.bytesField(f::kGraphName, opts_.modelName.empty() ? g_.name() : opts_.modelName);
  for (const auto& t : initializers_) graph.messageField(f::kGraphInitializer, t);
  graph.bytesField(f::kGraphDoc, "tensor part of GIR graph @" + g_.name());
  for (const auto& i : inputs_) graph.messageField(f::kGraphInput, i);
  for (const auto& o : outputs_) graph.messageField(f::kGraphOutput, o);
  pb::Message opset;
  opset.bytesField(f::kOpsetDomain, "");
  opset.int64Field(f::kOpsetVersion, kOpsetVersion);
  pb::Message model;
  model.int64Field(f::kModelIrVersion, kIrVersion);
  model.bytesField(f::kModelProducerName, opts_.producer);
  model.bytesField(f::kModelProducerVersion, "0.1");
  model.messageField(f::kModelGraph, graph);
  model.messageField(f::kModelOpset, opset);
  bytes = model.bytes();
  if (summary) {
    summary->nodes = nodes_.size();
    summary->inputs = inputNames_;
    summary->outputs = outputNames_;
    summary->initializers = initNames_;
    summary->onnxOps = onnxOps_;
  }
  return true;
}

// ---- Rules ---------------------------------------------------------------------

/// dtype for the operands of a comparison: the floating tensor dtype if any
/// (the widest), else f64 when a scalar operand is floating, else the tensor's.
DType compareDType(Exporter& E, const std::vector<Arg>& args) {
  bool anyFloatTensor = false, floatScalar = false;
  DType best = DType::Bool, d;
  for (const Arg& a : args) {
    if (!a.present() || !E.dtypeOf(a, d)) continue;
    if (E.isTensorArg(a)) {
      if (ir::isFloatingDType(d)) {
        if (!anyFloatTensor || d == DType::F64) best = d;
        anyFloatTensor = true;
      } else if (!anyFloatTensor && (best == DType::Bool || d == DType::I64)) {
        best = d;
      }
    } else if (ir::isFloatingDType(d)) {
      floatScalar = true;
    }
  }
  if (!anyFloatTensor && floatScalar) return DType::F64;
  return best;
}

Emit unary(const char* onnxOp) {
  return [onnxOp](Exporter& E, const Node& n, std::vector<Arg>& a) {
    std::string x;
    if (!E.tensorOf(n, a[0], E.resultDType(n, 0), x)) return false;
    E.node(onnxOp, {x}, {E.resultName(n, 0)});
    return true;
  };
}

/// Elementwise binary op on operands cast to the result dtype (arithmetic)
/// or to the promoted operand dtype (comparisons).
Emit binary(const char* onnxOp, bool compare = false, bool negate = false) {
  return [=](Exporter& E, const Node& n, std::vector<Arg>& a) {
    DType d = compare ? compareDType(E, {a[0], a[1]}) : E.resultDType(n, 0);
    std::string x, y;
    if (!E.tensorOf(n, a[0], d, x) || !E.tensorOf(n, a[1], d, y)) return false;
    // add/sub: alpha scales `other`.
    if (a.size() > 2 && a[2].present()) {
      double alpha;
      if (!a[2].attr || !Exporter::attrNumber(*a[2].attr, alpha))
        return E.fail(n, "alpha must be a constant attribute");
      if (alpha != 1) {
        std::string c;
        if (!E.scalarConst(n, d, alpha, c)) return false;
        y = E.node("Mul", {y, c}, {E.fresh("alpha")});
      }
    }
    if (negate) {
      std::string eq = E.node(onnxOp, {x, y}, {E.fresh("eq")});
      E.node("Not", {eq}, {E.resultName(n, 0)});
    } else {
      E.node(onnxOp, {x, y}, {E.resultName(n, 0)});
    }
    return true;
  };
}

bool emitDiv(Exporter& E, const Node& n, std::vector<Arg>& a) {
  if (a[2].present()) {
    if (!(a[2].attr && a[2].attr->isNone())) return E.fail(n, "rounding_mode has no ONNX translation");
  }
  DType d = E.resultDType(n, 0);
  std::string x, y;
  if (!E.tensorOf(n, a[0], d, x) || !E.tensorOf(n, a[1], d, y)) return false;
  E.node("Div", {x, y}, {E.resultName(n, 0)});
  return true;
}

bool emitTranspose(Exporter& E, const Node& n, std::vector<Arg>& a, bool twoD) {
  std::string x;
  if (!E.tensorOf(n, a[0], E.resultDType(n, 0), x)) return false;
  int64_t rank = Exporter::rankOf(a[0].value);
  if (rank < 0) rank = E.rankOfName(x);  // Note [Ranks of unranked values]
  if (rank < 0) return E.fail(n, "input of unknown rank");
  std::vector<int64_t> perm(static_cast<size_t>(rank));
  for (int64_t i = 0; i < rank; ++i) perm[size_t(i)] = i;
  if (twoD) {
    if (rank == 2) std::swap(perm[0], perm[1]);
  } else {
    int64_t d0, d1;
    if (!E.constInt(n, a[1], 0, d0, "dim0") || !E.constInt(n, a[2], 1, d1, "dim1")) return false;
    if (d0 < 0) d0 += rank;
    if (d1 < 0) d1 += rank;
    if (d0 < 0 || d1 < 0 || d0 >= rank || d1 >= rank) return E.fail(n, "dimension out of range");
    std::swap(perm[size_t(d0)], perm[size_t(d1)]);
  }
  E.node("Transpose", {x}, {E.resultName(n, 0)}, Exporter::intsAttr("perm", perm));
  return true;
}

bool emitPermute(Exporter& E, const Node& n, std::vector<Arg>& a) {
  std::vector<int64_t> dims;
  std::string x;
  if (!E.tensorOf(n, a[0], E.resultDType(n, 0), x)) return false;
  int64_t rank = Exporter::rankOf(a[0].value);
  if (rank < 0) rank = E.rankOfName(x);
  if (!Exporter::constInts(a[1], dims) || rank < 0) return E.fail(n, "dims must be compile-time integers");
  for (int64_t& d : dims) d = d < 0 ? d + rank : d;
  E.node("Transpose", {x}, {E.resultName(n, 0)}, Exporter::intsAttr("perm", dims));
  return true;
}

bool emitReshape(Exporter& E, const Node& n, std::vector<Arg>& a) {
  std::vector<int64_t> shape;
  if (!Exporter::constInts(a[1], shape)) return E.fail(n, "the shape must be compile-time integers");
  std::string x, s;
  if (!E.tensorOf(n, a[0], E.resultDType(n, 0), x) || !E.intsConst(n, shape, s)) return false;
  E.node("Reshape", {x, s}, {E.resultName(n, 0)});
  return true;
}

/// sum/mean over all dims or `dim` (with keepdim), in the result dtype.
Emit reduce(const char* onnxOp, bool axesAsInput) {
  return [=](Exporter& E, const Node& n, std::vector<Arg>& a) {
    std::vector<int64_t> dims;
    if (a[1].present() && !(a[1].attr && a[1].attr->isNone()) && !Exporter::constInts(a[1], dims))
      return E.fail(n, "dim must be compile-time integers");
    bool keep;
    if (!E.constBool(n, a[2], false, keep)) return false;
    std::string x;
    if (!E.tensorOf(n, a[0], E.resultDType(n, 0), x)) return false;
    std::vector<std::string> ins{x};
    std::vector<pb::Message> more;
    if (!dims.empty()) {
      if (axesAsInput) {
        std::string ax;
        if (!E.intsConst(n, dims, ax)) return false;
        ins.push_back(ax);
      } else {
        more.push_back(Exporter::intsAttr("axes", dims));
      }
    }
    std::string out = E.node(onnxOp, ins, {E.resultName(n, 0)}, Exporter::intAttr("keepdims", keep ? 1 : 0), more);
    int64_t r = E.rankOfName(x);
    if (r >= 0) E.setRank(out, keep ? r : dims.empty() ? 0 : r - int64_t(dims.size()));
    return true;
  };
}

/// max/min: over all elements (one arg), elementwise (`other`), or per `dim`
/// (values and, for max.dim/min.dim, indices).
Emit extreme(bool isMax) {
  return [=](Exporter& E, const Node& n, std::vector<Arg>& a) {
    const char* reduceOp = isMax ? "ReduceMax" : "ReduceMin";
    const char* argOp = isMax ? "ArgMax" : "ArgMin";
    std::string x;
    if (!E.tensorOf(n, a[0], E.resultDType(n, 0), x)) return false;
    if (!a[1].present()) {  // max(self): all elements
      E.setRank(E.node(reduceOp, {x}, {E.resultName(n, 0)}, Exporter::intAttr("keepdims", 0)), 0);
      return true;
    }
    if (E.isTensorArg(a[1])) {  // max.other
      std::string y;
      if (!E.tensorOf(n, a[1], E.resultDType(n, 0), y)) return false;
      E.node(isMax ? "Max" : "Min", {x, y}, {E.resultName(n, 0)});
      return true;
    }
    int64_t dim;
    bool keep;
    if (!E.constInt(n, a[1], 0, dim, "dim") || !E.constBool(n, a[2], false, keep)) return false;
    int64_t r = E.rankOfName(x) < 0 ? -1 : E.rankOfName(x) - (keep ? 0 : 1);
    E.setRank(E.node(reduceOp, {x}, {E.resultName(n, 0)}, Exporter::intAttr("keepdims", keep),
                     {Exporter::intsAttr("axes", {dim})}),
              r);
    if (E.numTensorResults(n) > 1)
      E.setRank(E.node(argOp, {x}, {E.resultName(n, 1)}, Exporter::intAttr("axis", dim),
                       {Exporter::intAttr("keepdims", keep)}),
                r);
    return true;
  };
}

Emit argExtreme(const char* onnxOp) {
  return [=](Exporter& E, const Node& n, std::vector<Arg>& a) {
    bool keep;
    if (!E.constBool(n, a[2], false, keep)) return false;
    std::string x;
    if (!E.tensorOf(n, a[0], a[0].value ? a[0].value->type().dtype() : DType::F64, x)) return false;
    int64_t dim = 0;
    if (!a[1].present() || (a[1].attr && a[1].attr->isNone())) {  // over the flattened tensor
      std::string s;
      if (!E.intsConst(n, {-1}, s)) return false;
      x = E.node("Reshape", {x, s}, {E.fresh("flat")});
      keep = false;
    } else if (!E.constInt(n, a[1], 0, dim, "dim")) {
      return false;
    }
    int64_t r = E.rankOfName(x) < 0 ? -1 : E.rankOfName(x) - (keep ? 0 : 1);
    if (E.resultDType(n, 0) == DType::I64) {
      E.setRank(E.node(onnxOp, {x}, {E.resultName(n, 0)}, Exporter::intAttr("axis", dim),
                       {Exporter::intAttr("keepdims", keep)}),
                r);
    } else {  // tensor::argmax yields the indices as floats
      std::string idx = E.node(onnxOp, {x}, {E.fresh("index")}, Exporter::intAttr("axis", dim),
                               {Exporter::intAttr("keepdims", keep)});
      E.setRank(idx, r);
      E.node("Cast", {idx}, {E.resultName(n, 0)}, Exporter::intAttr("to", onnxDType(E.resultDType(n, 0))));
    }
    return true;
  };
}

bool emitCat(Exporter& E, const Node& n, std::vector<Arg>& a) {
  if (a[0].list.empty()) return E.fail(n, "expects the tensors as operands");
  int64_t dim;
  if (!E.constInt(n, a[1], 0, dim, "dim")) return false;
  std::vector<std::string> xs;
  for (Value* v : a[0].list) {
    Arg one;
    one.value = v;
    std::string x;
    if (!E.tensorOf(n, one, E.resultDType(n, 0), x)) return false;
    xs.push_back(x);
  }
  E.node("Concat", xs, {E.resultName(n, 0)}, Exporter::intAttr("axis", dim));
  return true;
}

bool emitWhere(Exporter& E, const Node& n, std::vector<Arg>& a) {
  std::string c, x, y;
  if (!E.tensorOf(n, a[0], DType::Bool, c) || !E.tensorOf(n, a[1], E.resultDType(n, 0), x) ||
      !E.tensorOf(n, a[2], E.resultDType(n, 0), y))
    return false;
  E.node("Where", {c, x, y}, {E.resultName(n, 0)});
  return true;
}

Emit softmax(const char* onnxOp) {
  return [=](Exporter& E, const Node& n, std::vector<Arg>& a) {
    int64_t dim;
    if (!E.constInt(n, a[1], -1, dim, "dim")) return false;
    std::string x;
    if (!E.tensorOf(n, a[0], E.resultDType(n, 0), x)) return false;
    E.node(onnxOp, {x}, {E.resultName(n, 0)}, Exporter::intAttr("axis", dim));
    return true;
  };
}

Emit axesOp(const char* onnxOp) {
  return [=](Exporter& E, const Node& n, std::vector<Arg>& a) {
    std::vector<int64_t> dims;
    if (!Exporter::constInts(a[1], dims)) return E.fail(n, "dim must be a compile-time integer");
    std::string x, ax;
    if (!E.tensorOf(n, a[0], E.resultDType(n, 0), x) || !E.intsConst(n, dims, ax)) return false;
    E.node(onnxOp, {x, ax}, {E.resultName(n, 0)});
    return true;
  };
}

bool emitSelect(Exporter& E, const Node& n, std::vector<Arg>& a) {
  int64_t dim, index;
  if (!E.constInt(n, a[1], 0, dim, "dim") || !E.constInt(n, a[2], 0, index, "index")) return false;
  std::string x, i;
  if (!E.tensorOf(n, a[0], E.resultDType(n, 0), x) || !E.initializer(n, E.fresh("index"), DType::I64, {}, {double(index)}, i))
    return false;
  E.node("Gather", {x, i}, {E.resultName(n, 0)}, Exporter::intAttr("axis", dim));
  return true;
}

/// Constructors with constant arguments: an initializer with their values.
Emit constructor(std::function<bool(Exporter&, const Node&, std::vector<Arg>&, std::vector<int64_t>&,
                                    std::vector<double>&)>
                     values) {
  return [values](Exporter& E, const Node& n, std::vector<Arg>& a) {
    Type t = n.result(Exporter::resultBase(n))->type();
    std::vector<int64_t> dims;
    std::vector<double> vs;
    if (!values(E, n, a, dims, vs)) return false;
    std::string name;
    return E.initializer(n, E.resultName(n, 0), t.dtype(), dims, vs, name);
  };
}

bool fillShape(Exporter& E, const Node& n, const Arg& size, double value, std::vector<int64_t>& dims,
               std::vector<double>& vs) {
  if (!Exporter::constInts(size, dims)) return E.fail(n, "the size must be compile-time integers");
  int64_t count = 1;
  for (int64_t d : dims) {
    if (d < 0) return E.fail(n, "negative size");
    count *= d;
  }
  if (count > (int64_t(1) << 26)) return E.fail(n, "constant tensor too large to embed");
  vs.assign(size_t(count), value);
  return true;
}

const std::map<std::string, Rule>& rules() {
  static const std::map<std::string, Rule> table = [] {
    std::map<std::string, Rule> r;
    for (const char* op : {"add", "sub"})
      r[op] = {{"self", "other", "alpha"}, binary(op[0] == 'a' ? "Add" : "Sub")};
    r["rsub"] = {{"self", "other", "alpha"},
                 [](Exporter& E, const Node& n, std::vector<Arg>& a) {
                   std::vector<Arg> swapped{a[1], a[0], a[2]};
                   return binary("Sub")(E, n, swapped);
                 }};
    r["mul"] = {{"self", "other"}, binary("Mul")};
    r["div"] = {{"self", "other", "rounding_mode"}, emitDiv};
    r["pow"] = {{"self", "exponent"}, binary("Pow")};
    r["maximum"] = {{"self", "other"}, binary("Max")};
    r["minimum"] = {{"self", "other"}, binary("Min")};
    for (const char* op : {"matmul", "mm", "bmm"}) r[op] = {{"self", "other"}, binary("MatMul")};
    for (auto [op, onnxOp] : std::vector<std::pair<const char*, const char*>>{
             {"lt", "Less"}, {"le", "LessOrEqual"}, {"gt", "Greater"}, {"ge", "GreaterOrEqual"},
             {"eq", "Equal"}})
      r[op] = {{"self", "other"}, binary(onnxOp, true)};
    r["ne"] = {{"self", "other"}, binary("Equal", true, true)};
    for (auto [op, onnxOp] : std::vector<std::pair<const char*, const char*>>{
             {"exp", "Exp"}, {"log", "Log"}, {"tanh", "Tanh"}, {"sigmoid", "Sigmoid"},
             {"relu", "Relu"}, {"neg", "Neg"}, {"sqrt", "Sqrt"}, {"abs", "Abs"},
             {"reciprocal", "Reciprocal"}, {"sin", "Sin"}, {"cos", "Cos"}, {"floor", "Floor"},
             {"ceil", "Ceil"}})
      r[op] = {{"self"}, unary(onnxOp)};
    // Copies and dtype conversions: Identity/Cast to the result type.
    for (const char* op : {"clone", "detach", "contiguous", "alias", "lift_fresh"})
      r[op] = {{"self", "memory_format"}, unary("Identity")};
    for (const char* op : {"_to_copy", "to"})
      r[op] = {{"self", "dtype", "layout", "device", "pin_memory", "non_blocking", "copy", "memory_format"},
               unary("Identity")};  // tensorOf casts to the result dtype
    r["t"] = {{"self"}, [](Exporter& E, const Node& n, std::vector<Arg>& a) {
                return emitTranspose(E, n, a, true);
              }};
    r["transpose"] = {{"self", "dim0", "dim1"}, [](Exporter& E, const Node& n, std::vector<Arg>& a) {
                        return emitTranspose(E, n, a, false);
                      }};
    r["permute"] = {{"self", "dims"}, emitPermute};
    r["reshape"] = {{"self", "shape"}, emitReshape};
    r["view"] = {{"self", "size"}, emitReshape};
    r["_unsafe_view"] = {{"self", "size"}, emitReshape};
    r["sum"] = {{"self", "dim", "keepdim", "dtype"}, reduce("ReduceSum", true)};
    r["mean"] = {{"self", "dim", "keepdim", "dtype"}, reduce("ReduceMean", false)};
    r["amax"] = {{"self", "dim", "keepdim"}, reduce("ReduceMax", false)};
    r["amin"] = {{"self", "dim", "keepdim"}, reduce("ReduceMin", false)};
    r["max"] = {{"self", "dim", "keepdim"}, extreme(true)};
    r["min"] = {{"self", "dim", "keepdim"}, extreme(false)};
    r["argmax"] = {{"self", "dim", "keepdim"}, argExtreme("ArgMax")};
    r["argmin"] = {{"self", "dim", "keepdim"}, argExtreme("ArgMin")};
    r["cat"] = {{"*tensors", "dim"}, emitCat};
    r["concat"] = r["cat"];
    r["where"] = {{"condition", "self", "other"}, emitWhere};
    r["softmax"] = {{"self", "dim", "dtype"}, softmax("Softmax")};
    r["_softmax"] = {{"self", "dim", "half_to_float"}, softmax("Softmax")};
    r["log_softmax"] = {{"self", "dim", "dtype"}, softmax("LogSoftmax")};
    r["_log_softmax"] = {{"self", "dim", "half_to_float"}, softmax("LogSoftmax")};
    r["unsqueeze"] = {{"self", "dim"}, axesOp("Unsqueeze")};
    r["squeeze"] = {{"self", "dim"}, axesOp("Squeeze")};
    r["select"] = {{"self", "dim", "index"}, emitSelect};
    const std::vector<std::string> factory{"dtype", "layout", "device", "pin_memory"};
    auto withFactory = [&](std::vector<std::string> a) {
      a.insert(a.end(), factory.begin(), factory.end());
      return a;
    };
    for (auto [op, value] : std::vector<std::pair<const char*, double>>{{"zeros", 0}, {"ones", 1}, {"empty", 0}})
      r[op] = {withFactory({"size"}), constructor([value](Exporter& E, const Node& n, std::vector<Arg>& a,
                                                          std::vector<int64_t>& dims, std::vector<double>& vs) {
                 return fillShape(E, n, a[0], value, dims, vs);
               })};
    r["full"] = {withFactory({"size", "fill_value"}),
                 constructor([](Exporter& E, const Node& n, std::vector<Arg>& a, std::vector<int64_t>& dims,
                                std::vector<double>& vs) {
                   double v;
                   if (!(a[1].attr && Exporter::attrNumber(*a[1].attr, v)) &&
                       !(a[1].value && Exporter::constNumber(a[1].value, v)))
                     return E.fail(n, "fill_value must be a compile-time number");
                   return fillShape(E, n, a[0], v, dims, vs);
                 })};
    r["scalar_tensor"] = {withFactory({"s"}),
                          constructor([](Exporter& E, const Node& n, std::vector<Arg>& a,
                                         std::vector<int64_t>&, std::vector<double>& vs) {
                            double v;
                            if (!(a[0].attr && Exporter::attrNumber(*a[0].attr, v)) &&
                                !(a[0].value && Exporter::constNumber(a[0].value, v)))
                              return E.fail(n, "the value must be a compile-time number");
                            vs = {v};
                            return true;
                          })};
    r["eye"] = {withFactory({"n", "m"}),
                constructor([](Exporter& E, const Node& n, std::vector<Arg>& a, std::vector<int64_t>& dims,
                               std::vector<double>& vs) {
                  int64_t rows, cols;
                  if (!E.constInt(n, a[0], 0, rows, "n")) return false;
                  if (!E.constInt(n, a[1], rows, cols, "m")) return false;
                  if (rows < 0 || cols < 0 || rows * cols > (int64_t(1) << 26))
                    return E.fail(n, "bad or too large identity size");
                  dims = {rows, cols};
                  vs.assign(size_t(rows * cols), 0.0);
                  for (int64_t i = 0; i < std::min(rows, cols); ++i) vs[size_t(i * cols + i)] = 1;
                  return true;
                })};
    r["arange"] = {withFactory({"start", "end", "step"}),
                   constructor([](Exporter& E, const Node& n, std::vector<Arg>& a, std::vector<int64_t>& dims,
                                  std::vector<double>& vs) {
                     auto num = [&](const Arg& x, double& v) {
                       return (x.attr && Exporter::attrNumber(*x.attr, v)) ||
                              (x.value && Exporter::constNumber(x.value, v));
                     };
                     double start = 0, end = 0, step = 1;
                     bool ok = num(a[0], start);
                     if (a[1].present()) ok = ok && num(a[1], end);
                     else std::swap(start, end);  // arange(end)
                     if (a[2].present()) ok = ok && num(a[2], step);
                     if (!ok || step == 0) return E.fail(n, "start, end and step must be compile-time numbers");
                     int64_t count = std::max<int64_t>(0, int64_t(std::ceil((end - start) / step)));
                     if (count > (int64_t(1) << 26)) return E.fail(n, "constant tensor too large to embed");
                     for (int64_t i = 0; i < count; ++i) vs.push_back(start + double(i) * step);
                     dims = {count};
                     return true;
                   })};
    return r;
  }();
  return table;
}

const std::map<std::string, Rule>& tensorRules() {
  static const std::map<std::string, Rule> table = [] {
    std::map<std::string, Rule> r;
    const auto& a = rules();
    for (auto [fn, op] : std::vector<std::pair<const char*, const char*>>{
             {"add", "Add"}, {"subtract", "Sub"}, {"multiply", "Mul"}, {"divide", "Div"}, {"pow", "Pow"},
             {"matmul", "MatMul"}})
      r[fn] = {{"a", "b"}, binary(op)};
    r["exp"] = a.at("exp");
    r["log"] = a.at("log");
    r["transpose"] = {{"t"}, [](Exporter& E, const Node& n, std::vector<Arg>& args) {
                        std::string x;  // tensor::transpose is 2-D only
                        if (!E.tensorOf(n, args[0], E.resultDType(n, 0), x)) return false;
                        E.node("Transpose", {x}, {E.resultName(n, 0)}, Exporter::intsAttr("perm", {1, 0}));
                        return true;
                      }};
    r["reshape"] = {{"t", "shape"}, emitReshape};
    r["sum"] = {{"t", "axis", "keepdim"}, reduce("ReduceSum", true)};  // the per-axis form (a Tensor)
    r["max"] = {{"t", "axis", "keepdim"}, extreme(true)};
    r["argmax"] = {{"t", "axis", "keepdim"}, argExtreme("ArgMax")};
    r["concat"] = {{"a", "b", "axis"}, [](Exporter& E, const Node& n, std::vector<Arg>& args) {
                     int64_t dim;
                     if (!E.constInt(n, args[2], 0, dim, "axis")) return false;
                     std::string x, y;
                     if (!E.tensorOf(n, args[0], E.resultDType(n, 0), x) ||
                         !E.tensorOf(n, args[1], E.resultDType(n, 0), y))
                       return false;
                     E.node("Concat", {x, y}, {E.resultName(n, 0)}, Exporter::intAttr("axis", dim));
                     return true;
                   }};
    for (const char* fn : {"zeros", "ones", "empty", "full", "eye"}) r[fn] = a.at(fn);
    r["range"] = a.at("arange");
    return r;
  }();
  return table;
}

}  // namespace

bool exportOnnx(const ir::Graph& g, const ExportOptions& opts, support::DiagnosticEngine& diags,
                std::string& bytes, ExportSummary* summary) {
  Exporter e(g, opts, diags);
  return e.run(bytes, summary);
}

bool writeOnnxFile(const ir::Graph& g, const std::string& path, const ExportOptions& opts,
                   support::DiagnosticEngine& diags, ExportSummary* summary) {
  std::string bytes;
  if (!exportOnnx(g, opts, diags, bytes, summary)) return false;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), std::streamsize(bytes.size()));
  out.close();
  if (!out) {
    diags.error("E0803", {}, "std::onnx: cannot write " + path);
    return false;
  }
  return true;
}

std::vector<std::string> supportedAtenOps() {
  std::vector<std::string> out;
  for (const auto& [name, rule] : rules()) out.push_back(name);
  for (const auto& [name, rule] : tensorRules()) out.push_back("tensor::" + name);
  return out;
}

}  // namespace xacc::onnx
