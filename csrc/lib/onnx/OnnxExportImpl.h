// Private to the ONNX export (OnnxExport.cpp: the Exporter; OnnxRules.cpp: the
// translation rules): the rule type, the helpers both use and the Exporter
// class the rules call back into. No libprotobuf (Protobuf.h).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "Protobuf.h"
#include "xacc/ir/Op.h"
#include "xacc/onnx/OnnxExport.h"

namespace xacc::onnx::detail {

using ir::Attr;
using ir::DType;
using ir::Node;
using ir::Type;
using ir::Value;

// TensorProto.DataType.
int onnxDType(DType d);

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
std::string tensorBuiltin(const Node& n);

class Exporter {
public:
  Exporter(const ir::Graph& g, const ExportOptions& o, support::DiagnosticEngine& d)
      : g_(g), opts_(o), diags_(d) {}

  bool run(std::string& bytes, ExportSummary* summary);

  // ---- Helpers for the rules -------------------------------------------------
  support::SourceLoc locOf(const Node& n) const { return opts_.locs ? opts_.locs->of(n) : n.loc(); }
  bool fail(const Node& n, const std::string& msg);
  std::string fresh(const std::string& hint) { return hint + "_" + std::to_string(counter_++); }

  /// Adds an ONNX node; returns its first output's name.
  std::string node(const std::string& opType, const std::vector<std::string>& inputs,
                   const std::vector<std::string>& outputs, pb::Message attrs = {},
                   std::vector<pb::Message> moreAttrs = {});
  int64_t rankOfName(const std::string& name) const;
  void setRank(const std::string& name, int64_t r);
  void trackRank(const std::string& op, const std::vector<std::string>& in, const std::vector<std::string>& out);

  static pb::Message intAttr(const std::string& name, int64_t v);
  static pb::Message floatAttr(const std::string& name, float v);
  static pb::Message intsAttr(const std::string& name, const std::vector<int64_t>& vs);

  /// An initializer of dtype `d` and shape `dims`; returns its name.
  bool initializer(const Node& n, const std::string& name, DType d, const std::vector<int64_t>& dims,
                   const std::vector<double>& values, std::string& out);
  bool scalarConst(const Node& n, DType d, double v, std::string& out);
  bool intsConst(const Node& n, const std::vector<int64_t>& vs, std::string& out);

  /// The dtype an argument would have as a tensor (scalars by their type).
  bool dtypeOf(const Arg& a, DType& d) const;
  bool isTensorArg(const Arg& a) const { return a.value && a.value->type().isTensor(); }

  /// ONNX name of an argument as a tensor of dtype `want` (casting when the
  /// value's dtype differs; attribute scalars are written in `want` directly).
  bool tensorOf(const Node& n, const Arg& a, DType want, std::string& out);

  static bool attrNumber(const Attr& a, double& v);
  /// The value of an `arith.const` scalar.
  static bool constNumber(const Value* v, double& out);
  /// A rectangular nested `list.make` of number constants: its dims and values.
  static bool constArray(const Value* v, size_t depth, std::vector<int64_t>& dims, std::vector<double>& out);
  /// An int or int list argument known at compile time (attribute, constant,
  /// list/tuple of constants).
  static bool constInts(const Arg& a, std::vector<int64_t>& out);
  bool constInt(const Node& n, const Arg& a, int64_t dflt, int64_t& out, const char* what);
  bool constBool(const Node& n, const Arg& a, bool dflt, bool& out);
  static int64_t rankOf(const Value* v);
  /// 1 when result 0 is an effect token (func.builtin_effect), else 0.
  static size_t resultBase(const Node& n);
  /// The result name of node result `i` (tokens not counted; registers it).
  std::string resultName(const Node& n, size_t i);
  DType resultDType(const Node& n, size_t i) const { return n.result(i + resultBase(n))->type().dtype(); }
  size_t numTensorResults(const Node& n) const { return n.numResults() - resultBase(n); }

private:
  std::string baseName(const Value* v, const char* hint);
  /// ONNX name of an operand: an exported result, or a new graph input.
  bool nameOf(const Node& n, const Value* v, std::string& out);
  std::string inputDoc(const Value* v) const;
  static pb::Message valueInfo(const std::string& name, Type t, const std::string& doc, int64_t rank = -1,
                               const std::vector<int64_t>& staticDims = {});

  bool isPart(const Node& n) const;
  bool bind(const Node& n, const Rule& r, std::vector<Arg>& args);

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

}  // namespace xacc::onnx::detail
