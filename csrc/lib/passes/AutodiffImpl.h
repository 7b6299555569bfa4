// Internals of the reverse-mode autodiff shared by its two translation units:
// Autodiff.cpp (the transform: activity, the reverse sweep, ctrl.if, the public
// entry points) and AutodiffRules.cpp (the per-op rule table). Not installed;
// include only from those two files.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "xacc/ir/Builder.h"
#include "xacc/ir/Builtins.h"
#include "xacc/passes/Autodiff.h"
#include "xacc/support/CoreDiags.h"

namespace xacc::passes::autodiff {

using ir::Attr;
using ir::AttrDict;
using ir::Node;
using ir::Type;
using ir::Value;

// ---------------------------------------------------------------------------
// Schema arguments of the ops that have rules.

enum class AK : uint8_t {
  T,    ///< Tensor (a number operand also fits, as a wrapped number)
  TOpt, ///< Tensor?
  S,    ///< Scalar / int / float / bool (optional ones too)
  IL,   ///< int[] / int[]?
  X,    ///< str, ScalarType?, ... (attribute or null operand)
};

struct ArgSpec {
  const char* name;
  AK kind;
  Attr dflt = Attr::none();
};

struct Arg {
  Value* v = nullptr;  ///< supplied by an operand
  Attr a;              ///< otherwise by an attribute or default (none: absent)
  bool isNone() const { return v ? v->type() == Type::null() : a.isNone(); }
};

inline bool fits(AK k, Type t) {
  switch (k) {
    case AK::T: return t.isTensor() || t.isNumeric() || t.kind() == ir::TypeKind::Bool;
    case AK::TOpt: return t.isTensor() || t == Type::null();
    case AK::S: return t.isNumeric() || t.kind() == ir::TypeKind::Bool || t == Type::null();
    case AK::IL:
      return t.kind() == ir::TypeKind::List || t.kind() == ir::TypeKind::Tuple || t.isInt() ||
             t == Type::null();
    case AK::X: return t.kind() == ir::TypeKind::Str || t == Type::null();
  }
  return false;
}

/// Constant value of an operand defined by `arith.const`.
inline const Attr* constOf(Value* v) {
  if (!v || v->isParam()) return nullptr;
  Node* d = v->definingNode();
  if (d->op().is(ir::CoreOp::Const)) return d->attr("value");
  return nullptr;
}

inline bool attrDouble(const Attr& a, double& out) {
  if (a.kind() == Attr::Kind::Int) return out = double(a.getInt()), true;
  if (a.kind() == Attr::Kind::Float) return out = a.getFloat(), true;
  if (a.kind() == Attr::Kind::Bool) return out = a.getBool() ? 1.0 : 0.0, true;
  return false;
}

inline bool argDouble(const Arg& a, double& out) {
  if (a.v) {
    const Attr* c = constOf(a.v);
    return c && attrDouble(*c, out);
  }
  return attrDouble(a.a, out);
}

inline bool argInt(const Arg& a, int64_t& out) {
  const Attr* c = a.v ? constOf(a.v) : &a.a;
  if (c && c->kind() == Attr::Kind::Int) return out = c->getInt(), true;
  return false;
}

inline bool argBool(const Arg& a, bool dflt) {
  const Attr* c = a.v ? constOf(a.v) : &a.a;
  if (c && c->kind() == Attr::Kind::Bool) return c->getBool();
  return dflt;
}

/// int[] argument as a vector; `none` is true for an absent/None list.
inline bool argIntList(const Arg& a, std::vector<int64_t>& out, bool& none) {
  none = false;
  out.clear();
  if (a.isNone()) return none = true, true;
  const Attr* c = a.v ? constOf(a.v) : &a.a;
  if (!c) return false;
  if (c->kind() == Attr::Kind::Int) return out.push_back(c->getInt()), true;
  if (c->kind() != Attr::Kind::Array) return false;
  for (const Attr& e : c->getArray()) {
    if (e.kind() != Attr::Kind::Int) return false;
    out.push_back(e.getInt());
  }
  return true;
}

inline Attr intArray(const std::vector<int64_t>& v) {
  Attr::Array a;
  for (int64_t x : v) a.push_back(Attr::integer(x));
  return Attr::array(std::move(a));
}

/// Normalised rule key: "add.Tensor", "relu" (default overload), "arith.add",
/// "math::sqrt" (a Camel float builtin).
inline std::string ruleKey(const Node& n) {
  const std::string& name = n.opName();
  if (name.rfind("aten.", 0) == 0) {
    std::string k = name.substr(5);
    if (k.size() > 8 && k.compare(k.size() - 8, 8, ".default") == 0) k.resize(k.size() - 8);
    return k;
  }
  if (n.op().is(ir::CoreOp::Builtin)) return n.attrs().getStr("name");
  return name;
}

class Autodiff;

/// What a rule sees: the node, its bound arguments and its result gradients.
struct RuleCtx {
  Autodiff& ad;
  Node* n;
  const std::vector<ArgSpec>& spec;
  std::vector<Arg> args;
  Value* g;    ///< gradient of result 0 (may be null when only others have one)
  Value* out;  ///< result 0
  /// For a list result: its elements' gradients (by index); g is then null.
  std::map<int64_t, Value*>* elems = nullptr;

  int index(const char* name) const {
    for (size_t i = 0; i < spec.size(); ++i)
      if (std::string_view(spec[i].name) == name) return int(i);
    return -1;
  }
  const Arg& arg(const char* name) const { return args[size_t(index(name))]; }
  /// The argument as a value: its operand, or a number attribute as an f64
  /// constant (a wrapped number in aten ops, `aten.mul.Tensor(%x) {other = 2.5}`).
  Value* val(const char* name) const;
  bool active(const char* name) const;
  /// Adds `contrib` to the gradient of argument `name` (when it is an active operand).
  void give(const char* name, Value* contrib);
  bool fail(const std::string& why);
};

using RuleFn = std::function<bool(RuleCtx&)>;

struct Rule {
  std::vector<ArgSpec> args;
  RuleFn fn;
};

// ---------------------------------------------------------------------------

class Autodiff {
public:
  Autodiff(ir::Graph& g, support::DiagnosticEngine& diag,
           const std::function<support::SourceLoc(const Node&)>& locOf)
      : g_(g), b_(g), diag_(diag), locOf_(locOf) {}

  bool failed() const { return failed_; }
  void setCurrent(Node* n, const Node* orig) {
    cur_ = n;
    curOrig_ = orig;
    b_.setLoc(n ? n->loc() : support::SourceLoc{});
  }

  bool error(const std::string& msg, const std::string& suggestion = {}) {
    support::SourceLoc loc = curOrig_ ? (locOf_ ? locOf_(*curOrig_) : curOrig_->loc()) : support::SourceLoc{};
    auto &d = diag_.error(support::coreCode(support::CoreDiag::AutodiffError), loc, msg);
    if (!suggestion.empty()) d.suggestion = suggestion;
    failed_ = true;
    return false;
  }

  // --- emitting -----------------------------------------------------------
  Value* op(std::string_view name, const std::vector<Value*>& operands, AttrDict attrs = {}) {
    for (Value* v : operands)
      if (!v) return nullptr;
    Node* n = b_.create(name, operands, std::move(attrs));
    if (!n) {
      error("cannot differentiate '" + (cur_ ? cur_->opName() : std::string()) + "': building " +
            std::string(name) + " failed: " + b_.error());
      return nullptr;
    }
    return n->result(n->numResults() - 1);
  }
  /// A multi-result op (the `*_backward` ops returning one gradient per input).
  Node* opNode(std::string_view name, const std::vector<Value*>& operands, AttrDict attrs = {}) {
    for (Value* v : operands)
      if (!v) return nullptr;
    Node* n = b_.create(name, operands, std::move(attrs));
    if (!n)
      error("cannot differentiate '" + (cur_ ? cur_->opName() : std::string()) + "': building " +
            std::string(name) + " failed: " + b_.error());
    return n;
  }
  Value* core(ir::CoreOp o, const std::vector<Value*>& operands, Type t = Type()) {
    for (Value* v : operands)
      if (!v) return nullptr;
    Node* n = b_.create(o, operands, {}, t ? std::vector<Type>{t} : std::vector<Type>{});
    if (!n) {
      error("cannot differentiate '" + (cur_ ? cur_->opName() : std::string()) + "': " + b_.error());
      return nullptr;
    }
    return n->result(0);
  }
  Value* fconst(double v, Type t = Type::f64()) { return b_.constFloat(v, t); }

  static bool isT(Value* v) { return v && v->type().isTensor(); }

  // Arithmetic that works on tensors (aten) and floats (arith).
  /// A commutative op: the tensor form with the tensor first, or the core op
  /// on two floats.
  Value* commutative(const char* aten, ir::CoreOp scalar, Value* a, Value* b) {
    if (!a || !b) return nullptr;
    if (isT(a) || isT(b)) return op(aten, {isT(a) ? a : b, isT(a) ? b : a});
    return core(scalar, {a, b});
  }
  Value* add(Value* a, Value* b) { return commutative("aten.add.Tensor", ir::CoreOp::Add, a, b); }
  Value* sub(Value* a, Value* b) {
    if (!a || !b) return nullptr;
    if (isT(a)) return op("aten.sub.Tensor", {a, b});
    if (isT(b)) return neg(op("aten.sub.Tensor", {b, a}));
    return core(ir::CoreOp::Sub, {a, b});
  }
  Value* mul(Value* a, Value* b) { return commutative("aten.mul.Tensor", ir::CoreOp::Mul, a, b); }
  Value* div(Value* a, Value* b) {
    if (!a || !b) return nullptr;
    if (isT(a)) return op("aten.div.Tensor", {a, b});
    if (isT(b)) return op("aten.mul.Tensor", {op("aten.reciprocal", {b}), a});
    return core(ir::CoreOp::Div, {a, b});
  }
  Value* neg(Value* a) {
    if (!a) return nullptr;
    return isT(a) ? op("aten.neg", {a}) : core(ir::CoreOp::Neg, {a});
  }
  /// a * c for a constant c.
  Value* mulc(Value* a, double c) {
    if (!a) return nullptr;
    if (c == 1.0) return a;
    if (c == -1.0) return neg(a);
    if (isT(a)) return op("aten.mul.Scalar", {a}, ir::attrs({{"other", Attr::real(c)}}));
    return core(ir::CoreOp::Mul, {a, fconst(c, a->type())});
  }
  /// a * s for a scalar argument (operand or attribute).
  Value* mulArg(Value* a, const Arg& s) {
    double c;
    if (!s.v && argDouble(s, c)) return mulc(a, c);
    if (s.v) return mul(a, s.v->type().isInt() && !isT(a) ? core(ir::CoreOp::Cast, {s.v}, a->type()) : s.v);
    return a;
  }
  /// Scalar argument as a value usable in arithmetic with `like`.
  Value* scalarValue(const Arg& s, Value* like) {
    if (s.v) {
      if (!isT(like) && s.v->type().isInt()) return core(ir::CoreOp::Cast, {s.v}, like->type());
      return s.v;
    }
    double c = 0;
    argDouble(s, c);
    return fconst(c);
  }
  Value* onesLike(Value* v) {
    return isT(v) ? op("aten.ones_like", {v}) : fconst(1.0, v->type());
  }
  Value* zerosLike(Value* v) {
    return isT(v) ? op("aten.zeros_like", {v}) : fconst(0.0, v->type());
  }
  /// where(mask, g, 0) for a boolean tensor mask (or a bool scalar with select).
  Value* maskGrad(Value* mask, Value* g) {
    if (!mask || !g) return nullptr;
    if (isT(g)) return op("aten.where.ScalarOther", {mask, g}, ir::attrs({{"other", Attr::real(0.0)}}));
    return core(ir::CoreOp::Select, {mask, g, fconst(0.0, g->type())});
  }

  /// Sums `g` down to the shape of `target` (undoing broadcasting).
  Value* reduceTo(Value* g, Type target) {
    if (!g) return nullptr;
    Type gt = g->type();
    // Equal ranked types need nothing; equal unranked ones may still differ at
    // run time (broadcasting), so they are reduced below when the operand is known.
    if (gt == target && !(target.isTensor() && !target.ranked() && targetValue_)) return g;
    if (!target.isTensor()) {
      if (!gt.isTensor()) {
        if (gt != target) return core(ir::CoreOp::Cast, {g}, target);
        return g;
      }
      // A float operand of a tensor op (a wrapped number): sum the gradient.
      if (!target.isFloat()) {
        error("cannot differentiate '" + (cur_ ? cur_->opName() : std::string()) +
              "' with respect to its " + target.str() + " operand");
        return nullptr;
      }
      Value* s = op("aten.item", {op("aten.sum", {g})});
      return s && s->type() != target ? core(ir::CoreOp::Cast, {s}, target) : s;
    }
    if (!gt.isTensor()) {
      // A float gradient flowing into a tensor (e.g. through a 0-d tensor).
      return op("aten.mul.Tensor", {op("aten.ones_like", {curTensorOperandOfType(target)}), g});
    }
    if (!gt.ranked() || !target.ranked()) {
      // Shapes known only at run time: sum_to_size(g, size(target)).
      Value* t = targetValue_;
      if (gt == target && (!t || t->type() != target)) return g;
      if (!t || t->type() != target) {
        error("cannot differentiate '" + (cur_ ? cur_->opName() : std::string()) +
              "': reducing a gradient to an unranked tensor type needs the operand");
        return nullptr;
      }
      // ATen has no dispatcher op returning a tensor's sizes; Camel's tensor
      // module registers the builtin `tensor::shape` that does.
      if (!ir::BuiltinRegistry::get().lookup("tensor::shape")) {
        error("cannot differentiate '" + (cur_ ? cur_->opName() : std::string()) +
              "': reducing a gradient to an unranked tensor needs its shape at run time (builtin tensor::shape)");
        return nullptr;
      }
      Node* sz = b_.create(ir::CoreOp::Builtin, {t}, ir::attrs({{"name", Attr::string("tensor::shape")}}),
                           {Type::list(Type::i64())});
      if (!sz) return error("cannot build tensor::shape: " + b_.error()), nullptr;
      return op("aten.sum_to_size", {g, sz->result(0)});
    }
    const auto& gd = gt.dims();
    const auto& td = target.dims();
    if (gd.size() < td.size()) {
      error("cannot differentiate '" + (cur_ ? cur_->opName() : std::string()) + "': gradient " +
            gt.str() + " has lower rank than operand " + target.str());
      return nullptr;
    }
    size_t lead = gd.size() - td.size();
    Value* r = g;
    if (lead) {
      std::vector<int64_t> dims;
      for (size_t i = 0; i < lead; ++i) dims.push_back(int64_t(i));
      r = op("aten.sum.dim_IntList", {r},
             ir::attrs({{"dim", intArray(dims)}, {"keepdim", Attr::boolean(false)}}));
    }
    std::vector<int64_t> ones;
    for (size_t i = 0; i < td.size(); ++i)
      if (td[i].isStatic() && td[i].size == 1 && !(gd[i + lead].isStatic() && gd[i + lead].size == 1))
        ones.push_back(int64_t(i));
    if (!ones.empty())
      r = op("aten.sum.dim_IntList", {r},
             ir::attrs({{"dim", intArray(ones)}, {"keepdim", Attr::boolean(true)}}));
    if (r && r->type().isTensor() && r->type().dtype() != target.dtype())
      r = op("aten._to_copy", {r}, ir::attrs({{"dtype", Attr::string(ir::dtypeName(target.dtype()))}}));
    return r;
  }

  /// Accumulates `contrib` into the gradient of `v`.
  void accumulate(Value* v, Value* contrib) {
    if (!v || !contrib || !active_.count(v)) return;
    targetValue_ = v;
    contrib = reduceTo(contrib, v->type());
    targetValue_ = nullptr;
    if (!contrib) return;
    auto it = grads_.find(v);
    if (it == grads_.end()) grads_[v] = contrib;
    else it->second = add(it->second, contrib);
  }

  bool isActive(Value* v) const { return v && active_.count(v); }
  /// Gradients of the elements taken out of a list value (`list.get` with a
  /// constant index), keyed by list value and index.
  std::unordered_map<Value*, std::map<int64_t, Value*>> listGrads_;
  void accumulateElement(Value* list, int64_t index, Value* contrib) {
    if (!list || !contrib) return;
    auto& m = listGrads_[list];
    auto it = m.find(index);
    if (it == m.end()) m[index] = contrib;
    else it->second = add(it->second, contrib);
  }
  Value* gradOf(Value* v) const {
    auto it = grads_.find(v);
    return it == grads_.end() ? nullptr : it->second;
  }

  bool run(const std::vector<size_t>& wrt, bool seedParams, const ir::Graph& orig,
           const std::unordered_map<const Node*, const Node*>& origOf);
  /// ctrl.if(c, xs) -> ys: ctrl.if(c, xs, dys) -> dxs whose arms are the arms' gradient graphs.
  bool diffIf(Node* n);

private:
  Value* curTensorOperandOfType(Type t) {
    if (cur_)
      for (Value* v : cur_->operands())
        if (v && v->type() == t) return v;
    return nullptr;
  }

  ir::Graph& g_;
  ir::Builder b_;
  support::DiagnosticEngine& diag_;
  std::function<support::SourceLoc(const Node&)> locOf_;
  Node* cur_ = nullptr;
  const Node* curOrig_ = nullptr;
  bool failed_ = false;
  Value* targetValue_ = nullptr;  ///< the operand reduceTo() reduces to, when known

public:
  bool gradsOnly_ = false;

private:
  std::unordered_set<Value*> active_;
  std::unordered_map<Value*, Value*> grads_;
  friend struct RuleCtx;
};


/// The rule table, keyed by ruleKey() (AutodiffRules.cpp).
const std::unordered_map<std::string, Rule>& rules();

}  // namespace xacc::passes::autodiff
