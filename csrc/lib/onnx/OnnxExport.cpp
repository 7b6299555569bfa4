// GIR `aten.*` -> ONNX (opset 17). See Note [The tensor part of a graph] in
// OnnxExport.h. Each translated op binds its schema arguments the way the
// ATen backend does for the ops listed here (attribute with the argument's
// name, else the next operand, else the default), casts operands to the
// dtype ATen's type promotion gives (the node's result dtype for arithmetic,
// the promoted operand dtype for comparisons), and emits one or a few ONNX
// nodes.
//
// The translation rules are in OnnxRules.cpp; both share OnnxExportImpl.h.
#include "OnnxExportImpl.h"
#include "xacc/support/CoreDiags.h"

#include <algorithm>
#include <cmath>
#include <fstream>

using xacc::support::coreCode;
using xacc::support::CoreDiag;

namespace xacc::onnx::detail {

namespace {

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

}  // namespace

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

/// The `tensor::` function a node calls, or "".
std::string tensorBuiltin(const Node& n) {
  if (!n.op().is(ir::CoreOp::Builtin) && !n.op().is(ir::CoreOp::BuiltinEffect)) return {};
  const Attr* name = n.attr("name");
  if (!name || name->kind() != Attr::Kind::Str || name->getStr().rfind("tensor::", 0) != 0) return {};
  return name->getStr().substr(8);
}

bool Exporter::fail(const Node& n, const std::string& msg) {
  std::string fn = tensorBuiltin(n);
  diags_.error(coreCode(CoreDiag::OnnxNoTranslation), locOf(n),
               "std::onnx: " + (fn.empty() ? n.opName() : "tensor::" + fn) + ": " + msg);
  return false;
}

std::string Exporter::node(const std::string& opType, const std::vector<std::string>& inputs,
                 const std::vector<std::string>& outputs, pb::Message attrs,
                 std::vector<pb::Message> moreAttrs) {
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
int64_t Exporter::rankOfName(const std::string& name) const {
  auto it = rank_.find(name);
  return it == rank_.end() ? -1 : it->second;
}

void Exporter::setRank(const std::string& name, int64_t r) {
  if (r >= 0) rank_[name] = r;
}

void Exporter::trackRank(const std::string& op, const std::vector<std::string>& in, const std::vector<std::string>& out) {
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

pb::Message Exporter::intAttr(const std::string& name, int64_t v) {
  pb::Message a;
  a.bytesField(f::kAttrName, name);
  a.int64Field(f::kAttrI, v);
  a.int64Field(f::kAttrType, f::kAttrTypeInt);
  return a;
}

pb::Message Exporter::floatAttr(const std::string& name, float v) {
  pb::Message a;
  a.bytesField(f::kAttrName, name);
  a.floatField(f::kAttrF, v);
  a.int64Field(f::kAttrType, f::kAttrTypeFloat);
  return a;
}

pb::Message Exporter::intsAttr(const std::string& name, const std::vector<int64_t>& vs) {
  pb::Message a;
  a.bytesField(f::kAttrName, name);
  for (int64_t v : vs) a.int64Field(f::kAttrInts, v);
  a.int64Field(f::kAttrType, f::kAttrTypeInts);
  return a;
}

bool Exporter::initializer(const Node& n, const std::string& name, DType d, const std::vector<int64_t>& dims,
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

bool Exporter::scalarConst(const Node& n, DType d, double v, std::string& out) {
  return initializer(n, fresh("const"), d, {}, {v}, out);
}

bool Exporter::intsConst(const Node& n, const std::vector<int64_t>& vs, std::string& out) {
  std::vector<double> ds(vs.begin(), vs.end());
  return initializer(n, fresh("ints"), DType::I64, {int64_t(vs.size())}, ds, out);
}

bool Exporter::dtypeOf(const Arg& a, DType& d) const {
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

bool Exporter::tensorOf(const Node& n, const Arg& a, DType want, std::string& out) {
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

bool Exporter::attrNumber(const Attr& a, double& v) {
  switch (a.kind()) {
    case Attr::Kind::Int: v = double(a.getInt()); return true;
    case Attr::Kind::Float: v = a.getFloat(); return true;
    case Attr::Kind::Bool: v = a.getBool() ? 1 : 0; return true;
    default: return false;
  }
}

bool Exporter::constNumber(const Value* v, double& out) {
  const Node* d = v->definingNode();
  if (!d || !d->op().is(ir::CoreOp::Const)) return false;
  const Attr* a = d->attr("value");
  return a && attrNumber(*a, out);
}

bool Exporter::constArray(const Value* v, size_t depth, std::vector<int64_t>& dims, std::vector<double>& out) {
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

bool Exporter::constInts(const Arg& a, std::vector<int64_t>& out) {
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

bool Exporter::constInt(const Node& n, const Arg& a, int64_t dflt, int64_t& out, const char* what) {
  if (!a.present()) {
    out = dflt;
    return true;
  }
  std::vector<int64_t> v;
  if (!constInts(a, v) || v.size() != 1) return fail(n, std::string(what) + " must be a compile-time integer");
  out = v[0];
  return true;
}

bool Exporter::constBool(const Node& n, const Arg& a, bool dflt, bool& out) {
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

int64_t Exporter::rankOf(const Value* v) {
  Type t = v->type();
  return t.isTensor() && t.ranked() ? int64_t(t.dims().size()) : -1;
}

size_t Exporter::resultBase(const Node& n) {
  return n.numResults() > 0 && n.result(0)->type().isToken() ? 1 : 0;
}

std::string Exporter::resultName(const Node& n, size_t i) {
  const Value* v = n.result(i + resultBase(n));
  std::string name = baseName(v, "t");
  names_[v] = name;
  return name;
}

std::string Exporter::baseName(const Value* v, const char* hint) {
  std::string s = v->name().empty() ? std::string(hint) : v->name();
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
  std::string name = s;
  while (used_.count(name)) name = s + "_" + std::to_string(counter_++);
  used_.insert(name);
  return name;
}

bool Exporter::nameOf(const Node& n, const Value* v, std::string& out) {
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

std::string Exporter::inputDoc(const Value* v) const {
  if (v->isParam()) return "parameter " + std::to_string(v->index()) + " of @" + g_.name();
  const Node* d = v->definingNode();
  return "result of " + d->opName() + (d->loc().valid() ? " at " + d->loc().str() : std::string());
}

pb::Message Exporter::valueInfo(const std::string& name, Type t, const std::string& doc, int64_t rank,
                             const std::vector<int64_t>& staticDims) {
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

bool Exporter::isPart(const Node& n) const {
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

bool Exporter::bind(const Node& n, const Rule& r, std::vector<Arg>& args) {
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

bool Exporter::run(std::string& bytes, ExportSummary* summary) {
  std::unordered_set<const Node*> part;
  for (Node* n : g_)
    if (isPart(*n)) part.insert(n);
  if (part.empty()) {
    diags_.error(coreCode(CoreDiag::OnnxNothingToExport),
                 g_.front() ? g_.front()->loc() : support::SourceLoc{},
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
    diags_.error(coreCode(CoreDiag::OnnxNothingToExport),
                 g_.front() ? g_.front()->loc() : support::SourceLoc{},
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

}  // namespace xacc::onnx::detail

namespace xacc::onnx {

using namespace detail;

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
    diags.error(coreCode(CoreDiag::OnnxWriteFailed), {}, "std::onnx: cannot write " + path);
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
