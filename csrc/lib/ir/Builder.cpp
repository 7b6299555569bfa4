// Builder implementation.
#include "xacc/ir/Builder.h"

namespace xacc::ir {

AttrDict attrs(std::initializer_list<std::pair<std::string_view, Attr>> items) {
  AttrDict d;
  for (auto& [k, v] : items) d.set(k, v);
  return d;
}

Node* Builder::create(const OpInfo* op, const std::vector<Value*>& operands, AttrDict a,
                      std::vector<Type> resultTypes) {
  if (!op) {
    error_ = "unknown operation";
    return nullptr;
  }
  if (resultTypes.empty() && op->infer && op->numResults != 0) {
    std::vector<Type> operandTypes;
    operandTypes.reserve(operands.size());
    for (Value* v : operands) operandTypes.push_back(v ? v->type() : Type::any());
    std::string err;
    InferInput in{operandTypes, a, nullptr, nullptr};
    if (!op->infer(in, resultTypes, err)) {
      error_ = op->name + ": " + err;
      return nullptr;
    }
    for (Type t : resultTypes)
      if (!t) {
        error_ = op->name + ": result types must be given explicitly";
        return nullptr;
      }
  }
  Node* n = g_->create(op, operands, resultTypes, before_);
  n->attrs() = std::move(a);
  n->setLoc(loc_);
  return n;
}

Node* Builder::create(CoreOp op, const std::vector<Value*>& operands, AttrDict a,
                      std::vector<Type> resultTypes) {
  return create(OpRegistry::get().core(op), operands, std::move(a), std::move(resultTypes));
}

Node* Builder::create(std::string_view opName, const std::vector<Value*>& operands, AttrDict a,
                      std::vector<Type> resultTypes) {
  std::string err;
  const OpInfo* op = OpRegistry::get().lookup(opName, &err);
  if (!op) {
    error_ = err;
    return nullptr;
  }
  return create(op, operands, std::move(a), std::move(resultTypes));
}

Value* Builder::value(CoreOp op, const std::vector<Value*>& operands, AttrDict a,
                      std::vector<Type> resultTypes) {
  Node* n = create(op, operands, std::move(a), std::move(resultTypes));
  return n && n->numResults() ? n->result(0) : nullptr;
}

Value* Builder::constant(const Attr& a, Type t) {
  AttrDict d;
  d.set("value", a);
  return value(CoreOp::Const, {}, std::move(d), {t});
}

Value* Builder::constInt(int64_t v, Type t) { return constant(Attr::integer(v), t); }
Value* Builder::constFloat(double v, Type t) { return constant(Attr::real(v), t); }
Value* Builder::constBool(bool v) { return constant(Attr::boolean(v), Type::boolean()); }
Value* Builder::constStr(std::string v) { return constant(Attr::string(std::move(v)), Type::string()); }
Value* Builder::constNull() { return constant(Attr::none(), Type::null()); }

}  // namespace xacc::ir
