// A convenience API for constructing graphs: creates nodes at an insertion
// point, infers result types with each op's type rule, and stamps the current
// source location. Used by the Camel lowering, the capture translator, passes
// and tests.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "xacc/ir/Graph.h"

namespace xacc::ir {

class Builder {
public:
  explicit Builder(Graph& g, Node* insertBefore = nullptr) : g_(&g), before_(insertBefore) {}

  Graph& graph() const { return *g_; }
  void setInsertionPoint(Graph& g, Node* before = nullptr) {
    g_ = &g;
    before_ = before;
  }
  void setLoc(support::SourceLoc loc) { loc_ = loc; }
  const support::SourceLoc& loc() const { return loc_; }

  /// Creates a node; when `resultTypes` is empty the op's type rule decides.
  /// Returns null (and sets error()) when the rule rejects the operands.
  Node* create(const OpInfo* op, const std::vector<Value*>& operands, AttrDict attrs = {},
               std::vector<Type> resultTypes = {});
  Node* create(CoreOp op, const std::vector<Value*>& operands, AttrDict attrs = {},
               std::vector<Type> resultTypes = {});
  /// Looks the op up by name (e.g. "aten.add.Tensor").
  Node* create(std::string_view opName, const std::vector<Value*>& operands, AttrDict attrs = {},
               std::vector<Type> resultTypes = {});
  /// Single-result shorthand.
  Value* value(CoreOp op, const std::vector<Value*>& operands, AttrDict attrs = {},
               std::vector<Type> resultTypes = {});

  Value* constInt(int64_t v, Type t = Type::i64());
  Value* constFloat(double v, Type t = Type::f64());
  Value* constBool(bool v);
  Value* constStr(std::string v);
  Value* constNull();
  Value* constant(const Attr& a, Type t);

  const std::string& error() const { return error_; }

private:
  Graph* g_;
  Node* before_;
  support::SourceLoc loc_;
  std::string error_;
};

/// Attribute dictionary from an initializer list: attrs({{"index", Attr::integer(0)}}).
AttrDict attrs(std::initializer_list<std::pair<std::string_view, Attr>> items);

}  // namespace xacc::ir
