// Reverse-mode autodiff (see Note [Gradient graphs] in Autodiff.h).
//
// The forward graph is cloned; a forward sweep marks the values that depend on
// a `wrt` parameter ("active"), then a reverse sweep over the original nodes
// asks each active node's rule for the contributions of its result gradient to
// its operands and accumulates them. Rules are table entries keyed by op name
// (aten ops without the `aten.` prefix, `default` overload dropped) that name
// the op's schema arguments, so a rule reads `self`, `other`, `dim` whether the
// node supplies them as operands or as attributes (Note [ATen operands and
// attributes]); this file depends on the IR only, not on libtorch.
#include "xacc/passes/Autodiff.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <unordered_map>
#include <unordered_set>

#include "xacc/ir/Builder.h"
#include "xacc/ir/Builtins.h"
#include "xacc/passes/PassManager.h"

namespace xacc::passes {

using ir::Attr;
using ir::AttrDict;
using ir::Node;
using ir::Type;
using ir::Value;

bool isDifferentiableType(Type t) {
  if (!t) return false;
  if (t.isFloat()) return true;
  return t.isTensor() && ir::isFloatingDType(t.dtype());
}

namespace {

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

bool fits(AK k, Type t) {
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
const Attr* constOf(Value* v) {
  if (!v || v->isParam()) return nullptr;
  Node* d = v->definingNode();
  if (d->op().is(ir::CoreOp::Const)) return d->attr("value");
  return nullptr;
}

bool attrDouble(const Attr& a, double& out) {
  if (a.kind() == Attr::Kind::Int) return out = double(a.getInt()), true;
  if (a.kind() == Attr::Kind::Float) return out = a.getFloat(), true;
  if (a.kind() == Attr::Kind::Bool) return out = a.getBool() ? 1.0 : 0.0, true;
  return false;
}

bool argDouble(const Arg& a, double& out) {
  if (a.v) {
    const Attr* c = constOf(a.v);
    return c && attrDouble(*c, out);
  }
  return attrDouble(a.a, out);
}

bool argInt(const Arg& a, int64_t& out) {
  const Attr* c = a.v ? constOf(a.v) : &a.a;
  if (c && c->kind() == Attr::Kind::Int) return out = c->getInt(), true;
  return false;
}

bool argBool(const Arg& a, bool dflt) {
  const Attr* c = a.v ? constOf(a.v) : &a.a;
  if (c && c->kind() == Attr::Kind::Bool) return c->getBool();
  return dflt;
}

/// int[] argument as a vector; `none` is true for an absent/None list.
bool argIntList(const Arg& a, std::vector<int64_t>& out, bool& none) {
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

Attr intArray(const std::vector<int64_t>& v) {
  Attr::Array a;
  for (int64_t x : v) a.push_back(Attr::integer(x));
  return Attr::array(std::move(a));
}

/// Normalised rule key: "add.Tensor", "relu" (default overload), "arith.add",
/// "math::sqrt" (a Camel float builtin).
std::string ruleKey(const Node& n) {
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
    auto& d = diag_.error("E0303", loc, msg);
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
  Value* add(Value* a, Value* b) {
    if (!a || !b) return nullptr;
    if (isT(a) || isT(b)) return op("aten.add.Tensor", {isT(a) ? a : b, isT(a) ? b : a});
    return core(ir::CoreOp::Add, {a, b});
  }
  Value* sub(Value* a, Value* b) {
    if (!a || !b) return nullptr;
    if (isT(a)) return op("aten.sub.Tensor", {a, b});
    if (isT(b)) return neg(op("aten.sub.Tensor", {b, a}));
    return core(ir::CoreOp::Sub, {a, b});
  }
  Value* mul(Value* a, Value* b) {
    if (!a || !b) return nullptr;
    if (isT(a) || isT(b)) return op("aten.mul.Tensor", {isT(a) ? a : b, isT(a) ? b : a});
    return core(ir::CoreOp::Mul, {a, b});
  }
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

bool RuleCtx::active(const char* name) const {
  int i = index(name);
  return i >= 0 && args[size_t(i)].v && ad.isActive(args[size_t(i)].v);
}
Value* RuleCtx::val(const char* name) const {
  const Arg& a = arg(name);
  if (a.v) return a.v;
  double d;
  if (attrDouble(a.a, d) && a.a.kind() != Attr::Kind::Bool) return ad.fconst(d);
  return nullptr;
}
void RuleCtx::give(const char* name, Value* contrib) {
  int i = index(name);
  if (i < 0 || !args[size_t(i)].v || !ad.isActive(args[size_t(i)].v)) return;
  if (!contrib) {
    if (!ad.failed()) ad.error("cannot differentiate '" + n->opName() + "' with respect to '" + name + "'");
    return;
  }
  ad.accumulate(args[size_t(i)].v, contrib);
}
bool RuleCtx::fail(const std::string& why) {
  return ad.error("cannot differentiate '" + n->opName() + "': " + why);
}

// ---------------------------------------------------------------------------
// The rules.

using A = ArgSpec;
constexpr AK T = AK::T, TO = AK::TOpt, S = AK::S, IL = AK::IL, X = AK::X;

/// Normalises a possibly negative dim against `rank`.
int64_t normDim(int64_t d, size_t rank) { return d < 0 ? d + int64_t(rank) : d; }

size_t rankOf(Value* v) { return v && v->type().isTensor() && v->type().ranked() ? v->type().dims().size() : 0; }

/// g of a reduction over `dims` (all dims when `all`) without keepdim, made
/// broadcastable against the input again.
Value* unsqueezeReduced(Autodiff& ad, Value* g, Value* x, const std::vector<int64_t>& dims, bool all,
                        bool keepdim) {
  if (keepdim || all) return g;
  size_t rank = rankOf(x);
  bool unranked = !x->type().isTensor() || !x->type().ranked();
  for (int64_t d : dims)
    if (d < 0 && unranked) {
      ad.error("cannot differentiate a reduction over a negative dim of an unranked tensor");
      return nullptr;
    }
  std::vector<int64_t> ds;
  for (int64_t d : dims) ds.push_back(normDim(d, rank));
  std::sort(ds.begin(), ds.end());
  for (int64_t d : ds) g = ad.op("aten.unsqueeze", {g}, ir::attrs({{"dim", Attr::integer(d)}}));
  return g;
}

/// Number of elements reduced (static product, or null with an error).
Value* reducedCount(RuleCtx& c, Value* x, const std::vector<int64_t>& dims, bool all, double& count) {
  Type t = x->type();
  if (!t.ranked()) return nullptr;  // the caller divides by numel at run time
  count = 1;
  size_t rank = t.dims().size();
  std::vector<int64_t> ds;
  if (all) for (size_t i = 0; i < rank; ++i) ds.push_back(int64_t(i));
  else for (int64_t d : dims) ds.push_back(normDim(d, rank));
  for (int64_t d : ds) {
    if (d < 0 || size_t(d) >= rank) return c.fail("dim out of range"), nullptr;
    if (!t.dims()[size_t(d)].isStatic()) return nullptr;  // dynamic: caller uses numel
    count *= double(t.dims()[size_t(d)].size);
  }
  return x;
}

bool matmulRule(RuleCtx& c, const char* an, const char* bn) {
  Autodiff& ad = c.ad;
  Value* a = c.val(an);
  Value* b = c.val(bn);
  if (!Autodiff::isT(a) || !Autodiff::isT(b)) return c.fail("operands must be tensors");
  size_t ra = rankOf(a), rb = rankOf(b);
  if (!a->type().ranked() || !b->type().ranked()) {
    // Ranks known only at run time: the matrix (and batched) case; a 1-d
    // operand then fails at run time with ATen's located shape error.
    if (a->type().ranked() && ra == 1) return c.fail("a 1-d operand with an unranked one is not supported");
    if (b->type().ranked() && rb == 1) return c.fail("a 1-d operand with an unranked one is not supported");
    ra = rb = 2;
  }
  Value* g = c.g;
  if (ra == 1 && rb == 1) {
    c.give(an, ad.mul(b, g));
    c.give(bn, ad.mul(a, g));
    return true;
  }
  // Lift 1-d operands to matrices, as matmul does, and g to match.
  Value* a2 = a;
  Value* b2 = b;
  if (ra == 1) {
    a2 = ad.op("aten.unsqueeze", {a}, ir::attrs({{"dim", Attr::integer(0)}}));
    g = ad.op("aten.unsqueeze", {g}, ir::attrs({{"dim", Attr::integer(-2)}}));
  }
  if (rb == 1) {
    b2 = ad.op("aten.unsqueeze", {b}, ir::attrs({{"dim", Attr::integer(1)}}));
    g = ad.op("aten.unsqueeze", {g}, ir::attrs({{"dim", Attr::integer(-1)}}));
  }
  auto tr = [&](Value* v) {
    return ad.op("aten.transpose.int", {v}, ir::attrs({{"dim0", Attr::integer(-2)}, {"dim1", Attr::integer(-1)}}));
  };
  if (c.active(an)) {
    Value* da = ad.reduceTo(ad.op("aten.matmul", {g, tr(b2)}), a2 ? a2->type() : Type());
    if (ra == 1) da = ad.op("aten.squeeze.dim", {da}, ir::attrs({{"dim", Attr::integer(0)}}));
    c.give(an, da);
  }
  if (c.active(bn)) {
    Value* db = ad.reduceTo(ad.op("aten.matmul", {tr(a2), g}), b2 ? b2->type() : Type());
    if (rb == 1) db = ad.op("aten.squeeze.dim", {db}, ir::attrs({{"dim", Attr::integer(1)}}));
    c.give(bn, db);
  }
  return true;
}

/// beta * self + alpha * (a @ b) (addmm, baddbmm): self's gradient is beta * g,
/// the product's the matmul rule's on alpha * g.
bool addmmRule(RuleCtx& c, const char* an, const char* bn) {
  Autodiff& ad = c.ad;
  c.give("self", ad.mulArg(c.g, c.arg("beta")));
  Value* g = c.g;
  c.g = ad.mulArg(g, c.arg("alpha"));
  bool ok = matmulRule(c, an, bn);
  c.g = g;
  return ok;
}

bool reduceRule(RuleCtx& c, bool mean) {
  Autodiff& ad = c.ad;
  Value* x = c.val("self");
  bool all = true, keepdim = false;
  std::vector<int64_t> dims;
  if (c.index("dim") >= 0) {
    bool none = false;
    if (!argIntList(c.arg("dim"), dims, none)) return c.fail("'dim' must be a constant");
    all = none || dims.empty();
    keepdim = argBool(c.arg("keepdim"), false);
  }
  Value* g = unsqueezeReduced(ad, c.g, x, dims, all, keepdim);
  Value* gx = ad.op("aten.expand_as", {g, x});
  if (mean) {
    double count = 0;
    if (ad.failed()) return false;
    if (reducedCount(c, x, dims, all, count)) {
      gx = ad.mulc(gx, 1.0 / count);
    } else {
      if (ad.failed()) return false;
      // Dynamic sizes: divide by numel(x) / numel(result).
      Value* nx = ad.op("aten.numel", {x});
      Value* no = ad.op("aten.numel", {c.out});
      gx = ad.op("aten.div.Tensor", {gx, ad.core(ir::CoreOp::Div, {nx, no})});
    }
  }
  c.give("self", gx);
  return true;
}

/// Static shape of a tensor value (false when unranked or a dim is dynamic).
bool staticShape(Value* v, std::vector<int64_t>& out) {
  out.clear();
  if (!v || !v->type().isTensor() || !v->type().ranked()) return false;
  for (const ir::Dim& d : v->type().dims()) {
    if (!d.isStatic()) return false;
    out.push_back(d.size);
  }
  return true;
}

Attr boolArray(const std::vector<bool>& v) {
  Attr::Array a;
  for (bool x : v) a.push_back(Attr::boolean(x));
  return Attr::array(std::move(a));
}

/// A new op's arguments, built from the rule node's own (Note [ATen operands
/// and attributes]): operands in schema order, the rest as attributes.
struct Call {
  RuleCtx& c;
  std::vector<Value*> ops;
  AttrDict attrs;
  Call(RuleCtx& c, std::vector<Value*> first) : c(c), ops(std::move(first)) {}
  /// The node's argument `name` (operand or attribute), as argument `as`.
  Call& pass(const char* name, const char* as = nullptr) {
    const Arg& a = c.arg(name);
    if (a.v) ops.push_back(a.v);
    else attrs.set(as ? as : name, a.a);
    return *this;
  }
  /// An optional tensor argument: its operand, or an explicit none.
  Call& opt(const char* name) {
    const Arg& a = c.arg(name);
    if (a.v && a.v->type().isTensor()) ops.push_back(a.v);
    else attrs.set(name, Attr::none());
    return *this;
  }
  Call& set(const char* name, Attr v) {
    attrs.set(name, std::move(v));
    return *this;
  }
  Value* emit(std::string_view op) { return c.ad.op(op, ops, attrs); }
  Node* emitNode(std::string_view op) { return c.ad.opNode(op, ops, attrs); }
};

/// The layer/group/batch norm rules' common end: `k` (the backward op's
/// operands so far) gets an output mask for input, weight and bias, and the
/// three gradients are given.
bool normBackward(RuleCtx& c, Call& k, const char* op) {
  k.set("output_mask", boolArray({true, !c.arg("weight").isNone(), !c.arg("bias").isNone()}));
  Node* m = k.emitNode(op);
  if (!m) return false;
  c.give("input", m->result(0));
  c.give("weight", m->result(1));
  c.give("bias", m->result(2));
  return true;
}

/// Zeros shaped like `x` (from its static shape when known, so the backward
/// does not keep `x` alive only for its shape).
Value* zerosOf(RuleCtx& c, Value* x) {
  std::vector<int64_t> shape;
  if (c.g && staticShape(x, shape) && c.g->type().isTensor() && c.g->type().dtype() == x->type().dtype())
    return c.ad.op("aten.new_zeros", {c.g}, ir::attrs({{"size", intArray(shape)}}));
  return c.ad.zerosLike(x);
}

/// Gradient mask of maximum/minimum: 1 where `self` wins, 0.5 on ties, 0 else.
Value* winMask(Autodiff& ad, Value* x, Value* y, bool isMax) {
  Value* s = ad.op("aten.sign", {ad.sub(x, y)});
  if (!isMax) s = ad.neg(s);
  return ad.mulc(ad.op("aten.add.Scalar", {s}, ir::attrs({{"other", Attr::real(1.0)}})), 0.5);
}

const std::unordered_map<std::string, Rule>& rules() {
  static const std::unordered_map<std::string, Rule> table = [] {
    std::unordered_map<std::string, Rule> r;
    auto def = [&](std::initializer_list<const char*> keys, std::vector<ArgSpec> args, RuleFn fn) {
      for (const char* k : keys) r[k] = Rule{args, fn};
    };

    // --- tensor arithmetic ---------------------------------------------------
    def({"add.Tensor"}, {A{"self", T}, A{"other", T}, A{"alpha", S, Attr::integer(1)}}, [](RuleCtx& c) {
      c.give("self", c.g);
      c.give("other", c.ad.mulArg(c.g, c.arg("alpha")));
      return true;
    });
    def({"sub.Tensor"}, {A{"self", T}, A{"other", T}, A{"alpha", S, Attr::integer(1)}}, [](RuleCtx& c) {
      c.give("self", c.g);
      if (c.active("other")) c.give("other", c.ad.neg(c.ad.mulArg(c.g, c.arg("alpha"))));
      return true;
    });
    def({"add.Scalar", "sub.Scalar"}, {A{"self", T}, A{"other", S}, A{"alpha", S, Attr::integer(1)}},
        [](RuleCtx& c) {
          c.give("self", c.g);
          return true;
        });
    def({"rsub.Scalar", "rsub.Tensor"}, {A{"self", T}, A{"other", T}, A{"alpha", S, Attr::integer(1)}},
        [](RuleCtx& c) {
          // other - alpha * self
          if (c.active("self")) c.give("self", c.ad.neg(c.ad.mulArg(c.g, c.arg("alpha"))));
          c.give("other", c.g);
          return true;
        });
    def({"mul.Tensor"}, {A{"self", T}, A{"other", T}}, [](RuleCtx& c) {
      if (c.active("self")) c.give("self", c.ad.mul(c.g, c.val("other")));
      if (c.active("other")) c.give("other", c.ad.mul(c.g, c.val("self")));
      return true;
    });
    def({"mul.Scalar"}, {A{"self", T}, A{"other", S}}, [](RuleCtx& c) {
      c.give("self", c.ad.mulArg(c.g, c.arg("other")));
      return true;
    });
    def({"div.Tensor"}, {A{"self", T}, A{"other", T}}, [](RuleCtx& c) {
      Autodiff& ad = c.ad;
      Value* y = c.val("other");
      if (c.active("self")) c.give("self", ad.div(c.g, y));
      if (c.active("other")) c.give("other", ad.neg(ad.div(ad.mul(c.g, c.out), y)));
      return true;
    });
    def({"div.Scalar"}, {A{"self", T}, A{"other", S}}, [](RuleCtx& c) {
      double d;
      if (!c.arg("other").v && argDouble(c.arg("other"), d)) c.give("self", c.ad.mulc(c.g, 1.0 / d));
      else c.give("self", c.ad.div(c.g, c.ad.scalarValue(c.arg("other"), c.g)));
      return true;
    });
    def({"neg"}, {A{"self", T}}, [](RuleCtx& c) {
      c.give("self", c.ad.neg(c.g));
      return true;
    });
    def({"pow.Tensor_Scalar"}, {A{"self", T}, A{"exponent", S}}, [](RuleCtx& c) {
      Autodiff& ad = c.ad;
      const Arg& e = c.arg("exponent");
      double ev;
      if (!e.v && argDouble(e, ev)) {
        if (ev == 0.0) return true;
        Value* p = ev == 2.0 ? c.val("self")
                             : ad.op("aten.pow.Tensor_Scalar", {c.val("self")},
                                     ir::attrs({{"exponent", Attr::real(ev - 1.0)}}));
        c.give("self", ad.mulc(ad.mul(c.g, p), ev));
        return true;
      }
      Value* ev1 = ad.scalarValue(e, ad.fconst(0.0));
      Value* em1 = ad.core(ir::CoreOp::Sub, {ev1, ad.fconst(1.0, ev1->type())});
      Value* p = ad.op("aten.pow.Tensor_Scalar", {c.val("self"), em1});
      c.give("self", ad.mul(ad.mul(c.g, p), ev1));
      return true;
    });
    def({"pow.Tensor_Tensor"}, {A{"self", T}, A{"exponent", T}}, [](RuleCtx& c) {
      Autodiff& ad = c.ad;
      Value* x = c.val("self");
      Value* e = c.val("exponent");
      if (c.active("self")) {
        Value* em1 = ad.op("aten.sub.Scalar", {e}, ir::attrs({{"other", Attr::real(1.0)}}));
        c.give("self", ad.mul(ad.mul(c.g, e), ad.op("aten.pow.Tensor_Tensor", {x, em1})));
      }
      if (c.active("exponent")) c.give("exponent", ad.mul(ad.mul(c.g, c.out), ad.op("aten.log", {x})));
      return true;
    });
    def({"pow.Scalar"}, {A{"self", S}, A{"exponent", T}}, [](RuleCtx& c) {
      double base;
      if (!argDouble(c.arg("self"), base)) return c.fail("the base must be a constant");
      c.give("exponent", c.ad.mulc(c.ad.mul(c.g, c.out), std::log(base)));
      return true;
    });

    // --- pointwise functions ---------------------------------------------------
    def({"exp"}, {A{"self", T}}, [](RuleCtx& c) { return c.give("self", c.ad.mul(c.g, c.out)), true; });
    def({"log"}, {A{"self", T}}, [](RuleCtx& c) { return c.give("self", c.ad.div(c.g, c.val("self"))), true; });
    def({"sqrt"}, {A{"self", T}}, [](RuleCtx& c) {
      return c.give("self", c.ad.mulc(c.ad.div(c.g, c.out), 0.5)), true;
    });
    def({"rsqrt"}, {A{"self", T}}, [](RuleCtx& c) {
      Value* o3 = c.ad.op("aten.pow.Tensor_Scalar", {c.out}, ir::attrs({{"exponent", Attr::integer(3)}}));
      return c.give("self", c.ad.mulc(c.ad.mul(c.g, o3), -0.5)), true;
    });
    def({"sin"}, {A{"self", T}}, [](RuleCtx& c) {
      return c.give("self", c.ad.mul(c.g, c.ad.op("aten.cos", {c.val("self")}))), true;
    });
    def({"cos"}, {A{"self", T}}, [](RuleCtx& c) {
      return c.give("self", c.ad.neg(c.ad.mul(c.g, c.ad.op("aten.sin", {c.val("self")})))), true;
    });
    def({"tanh"}, {A{"self", T}}, [](RuleCtx& c) {
      return c.give("self", c.ad.op("aten.tanh_backward", {c.g, c.out})), true;
    });
    def({"sigmoid"}, {A{"self", T}}, [](RuleCtx& c) {
      return c.give("self", c.ad.op("aten.sigmoid_backward", {c.g, c.out})), true;
    });
    def({"relu"}, {A{"self", T}}, [](RuleCtx& c) {
      return c.give("self", c.ad.op("aten.threshold_backward", {c.g, c.out},
                                    ir::attrs({{"threshold", Attr::integer(0)}}))),
             true;
    });
    def({"gelu"}, {A{"self", T}, A{"approximate", X, Attr::string("none")}}, [](RuleCtx& c) {
      const Arg& ap = c.arg("approximate");
      std::string mode = ap.a.kind() == Attr::Kind::Str ? ap.a.getStr() : "none";
      return c.give("self", c.ad.op("aten.gelu_backward", {c.g, c.val("self")},
                                    ir::attrs({{"approximate", Attr::string(mode)}}))),
             true;
    });
    def({"silu"}, {A{"self", T}}, [](RuleCtx& c) {
      return c.give("self", c.ad.op("aten.silu_backward", {c.g, c.val("self")})), true;
    });
    def({"abs"}, {A{"self", T}}, [](RuleCtx& c) {
      return c.give("self", c.ad.mul(c.g, c.ad.op("aten.sign", {c.val("self")}))), true;
    });
    def({"clone", "contiguous", "alias", "positive"}, {A{"self", T}, A{"memory_format", X}}, [](RuleCtx& c) {
      return c.give("self", c.g), true;
    });
    def({"clamp"}, {A{"self", T}, A{"min", S}, A{"max", S}}, [](RuleCtx& c) {
      Autodiff& ad = c.ad;
      Value* x = c.val("self");
      Value* mask = nullptr;
      auto bound = [&](const char* name, const char* cmp) {
        const Arg& a = c.arg(name);
        if (a.isNone()) return;
        Value* m = a.v ? ad.op(std::string("aten.") + cmp + ".Scalar", {x, a.v})
                       : ad.op(std::string("aten.") + cmp + ".Scalar", {x}, ir::attrs({{"other", a.a}}));
        mask = mask ? ad.op("aten.logical_and", {mask, m}) : m;
      };
      bound("min", "ge");
      bound("max", "le");
      c.give("self", mask ? ad.maskGrad(mask, c.g) : c.g);
      return true;
    });
    def({"clamp_min"}, {A{"self", T}, A{"min", S}}, [](RuleCtx& c) {
      const Arg& a = c.arg("min");
      Value* m = a.v ? c.ad.op("aten.ge.Scalar", {c.val("self"), a.v})
                     : c.ad.op("aten.ge.Scalar", {c.val("self")}, ir::attrs({{"other", a.a}}));
      return c.give("self", c.ad.maskGrad(m, c.g)), true;
    });
    def({"clamp_max"}, {A{"self", T}, A{"max", S}}, [](RuleCtx& c) {
      const Arg& a = c.arg("max");
      Value* m = a.v ? c.ad.op("aten.le.Scalar", {c.val("self"), a.v})
                     : c.ad.op("aten.le.Scalar", {c.val("self")}, ir::attrs({{"other", a.a}}));
      return c.give("self", c.ad.maskGrad(m, c.g)), true;
    });
    def({"where.self"}, {A{"condition", T}, A{"self", T}, A{"other", T}}, [](RuleCtx& c) {
      Autodiff& ad = c.ad;
      Value* cond = c.val("condition");
      if (c.active("self")) c.give("self", ad.maskGrad(cond, c.g));
      if (c.active("other"))
        c.give("other", ad.op("aten.where.ScalarSelf", {cond, c.g}, ir::attrs({{"self", Attr::real(0.0)}})));
      return true;
    });
    def({"maximum", "minimum", "fmax", "fmin"}, {A{"self", T}, A{"other", T}}, [](RuleCtx& c) {
      Autodiff& ad = c.ad;
      bool isMax = c.n->opName().find("max") != std::string::npos;
      Value* w = winMask(ad, c.val("self"), c.val("other"), isMax);
      if (c.active("self")) c.give("self", ad.mul(c.g, w));
      if (c.active("other"))
        c.give("other", ad.mul(c.g, ad.op("aten.rsub.Scalar", {w}, ir::attrs({{"other", Attr::real(1.0)}}))));
      return true;
    });
    def({"mse_loss"}, {A{"self", T}, A{"target", T}, A{"reduction", S, Attr::integer(1)}}, [](RuleCtx& c) {
      Autodiff& ad = c.ad;
      int64_t red = 1;
      argInt(c.arg("reduction"), red);
      Value* gs = ad.op("aten.mse_loss_backward", {c.g, c.val("self"), c.val("target")},
                        ir::attrs({{"reduction", Attr::integer(red)}}));
      if (c.active("self")) c.give("self", gs);
      if (c.active("target")) c.give("target", ad.neg(gs));
      return true;
    });

    // --- linear algebra ---------------------------------------------------------
    def({"matmul", "mm", "bmm", "dot", "mv"}, {A{"self", T}, A{"other", T}},
        [](RuleCtx& c) { return matmulRule(c, "self", "other"); });
    def({"addmm"},
        {A{"self", T}, A{"mat1", T}, A{"mat2", T}, A{"beta", S, Attr::integer(1)}, A{"alpha", S, Attr::integer(1)}},
        [](RuleCtx& c) { return addmmRule(c, "mat1", "mat2"); });
    def({"linear"}, {A{"input", T}, A{"weight", T}, A{"bias", TO}}, [](RuleCtx& c) {
      Autodiff& ad = c.ad;
      Value* x = c.val("input");
      Value* w = c.val("weight");
      if (rankOf(w) != 2) return c.fail("weight must be a matrix");
      if (c.active("input")) c.give("input", ad.op("aten.matmul", {c.g, w}));
      if (c.active("weight")) {
        Value* gw;
        if (rankOf(x) == 1) {
          gw = ad.mul(ad.op("aten.unsqueeze", {c.g}, ir::attrs({{"dim", Attr::integer(1)}})),
                      ad.op("aten.unsqueeze", {x}, ir::attrs({{"dim", Attr::integer(0)}})));
        } else {
          Value* gt = ad.op("aten.transpose.int", {c.g},
                            ir::attrs({{"dim0", Attr::integer(-2)}, {"dim1", Attr::integer(-1)}}));
          gw = ad.op("aten.matmul", {gt, x});  // [..., out, in]; reduceTo sums the batch dims
        }
        c.give("weight", gw);
      }
      if (c.active("bias")) c.give("bias", c.g);
      return true;
    });

    // --- views and shapes ---------------------------------------------------------
    def({"t"}, {A{"self", T}}, [](RuleCtx& c) {
      bool ranked = c.g->type().isTensor() && c.g->type().ranked();
      return c.give("self", ranked && rankOf(c.g) < 2 ? c.g : c.ad.op("aten.t", {c.g})), true;
    });
    def({"transpose.int"}, {A{"self", T}, A{"dim0", S}, A{"dim1", S}}, [](RuleCtx& c) {
      int64_t d0, d1;
      if (!argInt(c.arg("dim0"), d0) || !argInt(c.arg("dim1"), d1)) return c.fail("dims must be constants");
      return c.give("self", c.ad.op("aten.transpose.int", {c.g},
                                    ir::attrs({{"dim0", Attr::integer(d0)}, {"dim1", Attr::integer(d1)}}))),
             true;
    });
    def({"permute"}, {A{"self", T}, A{"dims", IL}}, [](RuleCtx& c) {
      std::vector<int64_t> dims;
      bool none;
      if (!argIntList(c.arg("dims"), dims, none) || none) return c.fail("'dims' must be a constant");
      std::vector<int64_t> inv(dims.size());
      for (size_t i = 0; i < dims.size(); ++i) {
        int64_t d = normDim(dims[i], dims.size());
        if (d < 0 || size_t(d) >= dims.size()) return c.fail("dim out of range");
        inv[size_t(d)] = int64_t(i);
      }
      return c.give("self", c.ad.op("aten.permute", {c.g}, ir::attrs({{"dims", intArray(inv)}}))), true;
    });
    def({"view", "reshape", "_unsafe_view", "flatten.using_ints", "squeeze", "squeeze.dim", "squeeze.dims",
         "unflatten.int", "view_as", "reshape_as"},
        {A{"self", T}, A{"size", IL}}, [](RuleCtx& c) {
          // A static shape does not read the input (which an in-place squeeze_ changed).
          Type t = c.val("self")->type();
          if (t.isTensor() && t.ranked() && t.staticNumel() >= 0) {
            std::vector<int64_t> shape;
            for (const ir::Dim& d : t.dims()) shape.push_back(d.size);
            return c.give("self", c.ad.op("aten.reshape", {c.g}, ir::attrs({{"shape", intArray(shape)}}))), true;
          }
          if (c.n->hasEffects()) return c.fail("in-place view of a tensor with dynamic shape");
          return c.give("self", c.ad.op("aten.reshape_as", {c.g, c.val("self")})), true;
        });
    def({"unsqueeze"}, {A{"self", T}, A{"dim", S}}, [](RuleCtx& c) {
      int64_t d;
      if (!argInt(c.arg("dim"), d)) return c.fail("'dim' must be a constant");
      d = d < 0 ? d + int64_t(rankOf(c.out)) : d;
      return c.give("self", c.ad.op("aten.squeeze.dim", {c.g}, ir::attrs({{"dim", Attr::integer(d)}}))), true;
    });
    def({"expand", "expand_as", "broadcast_to"}, {A{"self", T}, A{"size", IL}}, [](RuleCtx& c) {
      return c.give("self", c.g), true;  // accumulate() sums back to the input's shape
    });
    def({"sum", "sum.dim_IntList"}, {A{"self", T}, A{"dim", IL}, A{"keepdim", S, Attr::boolean(false)}, A{"dtype", X}},
        [](RuleCtx& c) { return reduceRule(c, false); });
    def({"mean", "mean.dim"}, {A{"self", T}, A{"dim", IL}, A{"keepdim", S, Attr::boolean(false)}, A{"dtype", X}},
        [](RuleCtx& c) { return reduceRule(c, true); });
    def({"_softmax", "softmax.int"}, {A{"self", T}, A{"dim", S}, A{"half_to_float", S}}, [](RuleCtx& c) {
      Autodiff& ad = c.ad;
      int64_t d;
      if (!argInt(c.arg("dim"), d)) return c.fail("'dim' must be a constant");
      Value* go = ad.mul(c.g, c.out);
      Value* s = ad.op("aten.sum.dim_IntList", {go},
                       ir::attrs({{"dim", intArray({d})}, {"keepdim", Attr::boolean(true)}}));
      return c.give("self", ad.mul(c.out, ad.sub(c.g, s))), true;
    });
    def({"_log_softmax", "log_softmax.int"}, {A{"self", T}, A{"dim", S}, A{"half_to_float", S}}, [](RuleCtx& c) {
      Autodiff& ad = c.ad;
      int64_t d;
      if (!argInt(c.arg("dim"), d)) return c.fail("'dim' must be a constant");
      Value* s = ad.op("aten.sum.dim_IntList", {c.g},
                       ir::attrs({{"dim", intArray({d})}, {"keepdim", Attr::boolean(true)}}));
      return c.give("self", ad.sub(c.g, ad.mul(ad.op("aten.exp", {c.out}), s))), true;
    });
    // Non-differentiable: integer-valued or piecewise-constant results.
    def({"sign", "round", "floor", "ceil", "trunc", "zeros_like", "ones_like", "detach", "lift_fresh",
         "lift_fresh_copy"},
        {A{"self", T}}, [](RuleCtx&) { return true; });

    // --- float scalars (Camel floats) ----------------------------------------
    def({"arith.add"}, {A{"self", T}, A{"other", T}}, [](RuleCtx& c) {
      c.give("self", c.g);
      c.give("other", c.g);
      return true;
    });
    def({"arith.sub"}, {A{"self", T}, A{"other", T}}, [](RuleCtx& c) {
      c.give("self", c.g);
      if (c.active("other")) c.give("other", c.ad.neg(c.g));
      return true;
    });
    def({"arith.mul"}, {A{"self", T}, A{"other", T}}, [](RuleCtx& c) {
      if (c.active("self")) c.give("self", c.ad.mul(c.g, c.val("other")));
      if (c.active("other")) c.give("other", c.ad.mul(c.g, c.val("self")));
      return true;
    });
    def({"arith.div"}, {A{"self", T}, A{"other", T}}, [](RuleCtx& c) {
      Autodiff& ad = c.ad;
      if (!c.out->type().isFloat()) return true;
      if (c.active("self")) c.give("self", ad.div(c.g, c.val("other")));
      if (c.active("other")) c.give("other", ad.neg(ad.div(ad.mul(c.g, c.out), c.val("other"))));
      return true;
    });
    def({"arith.neg"}, {A{"self", T}}, [](RuleCtx& c) { return c.give("self", c.ad.neg(c.g)), true; });
    def({"arith.pow"}, {A{"self", T}, A{"other", T}}, [](RuleCtx& c) {
      Autodiff& ad = c.ad;
      if (c.active("other"))
        return c.fail("the derivative with respect to the exponent needs a logarithm, which has no float op");
      Value* x = c.val("self");
      Value* e = c.val("other");
      Type ft = c.out->type();
      if (e->type() != ft) e = ad.core(ir::CoreOp::Cast, {e}, ft);
      Value* em1 = ad.core(ir::CoreOp::Sub, {e, ad.fconst(1.0, ft)});
      Value* xf = x->type() == ft ? x : ad.core(ir::CoreOp::Cast, {x}, ft);
      c.give("self", ad.mul(ad.mul(c.g, e), ad.core(ir::CoreOp::Pow, {xf, em1})));
      return true;
    });
    def({"arith.abs", "math::abs"}, {A{"self", T}}, [](RuleCtx& c) {
      Autodiff& ad = c.ad;
      Value* x = c.val("self");
      Value* lt = ad.core(ir::CoreOp::Lt, {x, ad.fconst(0.0, x->type())});
      return c.give("self", ad.core(ir::CoreOp::Select, {lt, ad.neg(c.g), c.g})), true;
    });
    def({"arith.max", "arith.min"}, {A{"self", T}, A{"other", T}}, [](RuleCtx& c) {
      Autodiff& ad = c.ad;
      bool isMax = c.n->op().is(ir::CoreOp::Max);
      Value* x = c.val("self");
      Value* y = c.val("other");
      Value* first = ad.core(isMax ? ir::CoreOp::Ge : ir::CoreOp::Le, {x, y});
      Value* zero = ad.fconst(0.0, c.g->type());
      if (c.active("self")) c.give("self", ad.core(ir::CoreOp::Select, {first, c.g, zero}));
      if (c.active("other")) c.give("other", ad.core(ir::CoreOp::Select, {first, zero, c.g}));
      return true;
    });
    def({"arith.cast"}, {A{"self", T}}, [](RuleCtx& c) {
      return c.give("self", c.g), true;  // accumulate() casts back to the operand's type
    });
    def({"ctrl.select"}, {A{"condition", T}, A{"self", T}, A{"other", T}}, [](RuleCtx& c) {
      Autodiff& ad = c.ad;
      Value* cond = c.val("condition");
      Value* zero = ad.zerosLike(c.g);
      if (c.active("self")) c.give("self", ad.core(ir::CoreOp::Select, {cond, c.g, zero}));
      if (c.active("other")) c.give("other", ad.core(ir::CoreOp::Select, {cond, zero, c.g}));
      return true;
    });
    def({"item", "_local_scalar_dense"}, {A{"self", T}}, [](RuleCtx& c) {
      Value* x = c.val("self");
      return c.give("self", c.ad.op("aten.mul.Tensor", {c.ad.op("aten.ones_like", {x}), c.g})), true;
    });
    def({"_to_copy", "to.dtype"}, {A{"self", T}}, [](RuleCtx& c) {
      Value* x = c.val("self");
      if (c.g->type().isTensor() && x->type().isTensor() && c.g->type().dtype() != x->type().dtype())
        return c.give("self", c.ad.op("aten._to_copy", {c.g},
                                      ir::attrs({{"dtype", Attr::string(ir::dtypeName(x->type().dtype()))}}))),
               true;
      return c.give("self", c.g), true;
    });
    def({"float", "f64", "f32"}, {A{"self", T}}, [](RuleCtx& c) {
      return c.give("self", c.g), true;  // accumulate() casts back to the operand's type
    });
    def({"math::sqrt"}, {A{"self", T}}, [](RuleCtx& c) {
      return c.give("self", c.ad.mulc(c.ad.div(c.g, c.out), 0.5)), true;
    });
    def({"math::exp"}, {A{"self", T}}, [](RuleCtx& c) { return c.give("self", c.ad.mul(c.g, c.out)), true; });
    def({"math::round", "math::floor", "math::ceil"}, {A{"self", T}}, [](RuleCtx&) { return true; });

    // --- training ops (XJIT captured graphs; Note [Training graphs]) ----------
    def({"_safe_softmax"}, {A{"self", T}, A{"dim", S}, A{"dtype", X}}, [](RuleCtx& c) {
      Autodiff& ad = c.ad;
      int64_t d;
      if (!argInt(c.arg("dim"), d)) return c.fail("'dim' must be a constant");
      Value* s = ad.op("aten.sum.dim_IntList", {ad.mul(c.g, c.out)},
                       ir::attrs({{"dim", intArray({d})}, {"keepdim", Attr::boolean(true)}}));
      return c.give("self", ad.mul(c.out, ad.sub(c.g, s))), true;
    });
    def({"expm1"}, {A{"self", T}}, [](RuleCtx& c) {
      Value* e = c.ad.op("aten.add.Scalar", {c.out}, ir::attrs({{"other", Attr::real(1.0)}}));
      return c.give("self", c.ad.mul(c.g, e)), true;
    });
    def({"log1p"}, {A{"self", T}}, [](RuleCtx& c) {
      Value* e = c.ad.op("aten.add.Scalar", {c.val("self")}, ir::attrs({{"other", Attr::real(1.0)}}));
      return c.give("self", c.ad.div(c.g, e)), true;
    });
    def({"reciprocal"}, {A{"self", T}}, [](RuleCtx& c) {
      return c.give("self", c.ad.neg(c.ad.mul(c.g, c.ad.mul(c.out, c.out)))), true;
    });
    def({"erf"}, {A{"self", T}}, [](RuleCtx& c) {
      Autodiff& ad = c.ad;
      Value* x = c.val("self");
      Value* e = ad.op("aten.exp", {ad.neg(ad.mul(x, x))});
      return c.give("self", ad.mulc(ad.mul(c.g, e), 2.0 / std::sqrt(M_PI))), true;
    });
    def({"hardtanh"}, {A{"self", T}, A{"min_val", S, Attr::real(-1.0)}, A{"max_val", S, Attr::real(1.0)}},
        [](RuleCtx& c) {
          Call k(c, {c.g, c.val("self")});
          k.pass("min_val").pass("max_val");
          return c.give("self", k.emit("aten.hardtanh_backward")), true;
        });
    def({"leaky_relu"}, {A{"self", T}, A{"negative_slope", S, Attr::real(0.01)}}, [](RuleCtx& c) {
      Call k(c, {c.g, c.val("self")});
      k.pass("negative_slope").set("self_is_result", Attr::boolean(false));
      return c.give("self", k.emit("aten.leaky_relu_backward")), true;
    });
    def({"elu"}, {A{"self", T}, A{"alpha", S, Attr::integer(1)}, A{"scale", S, Attr::integer(1)},
                  A{"input_scale", S, Attr::integer(1)}},
        [](RuleCtx& c) {
          Call k(c, {c.g});
          k.pass("alpha").pass("scale").pass("input_scale").set("is_result", Attr::boolean(false));
          k.ops.push_back(c.val("self"));
          return c.give("self", k.emit("aten.elu_backward")), true;
        });
    def({"softplus"}, {A{"self", T}, A{"beta", S, Attr::integer(1)}, A{"threshold", S, Attr::integer(20)}},
        [](RuleCtx& c) {
          Call k(c, {c.g, c.val("self")});
          k.pass("beta").pass("threshold");
          return c.give("self", k.emit("aten.softplus_backward")), true;
        });
    def({"masked_fill.Scalar", "masked_fill.Tensor"}, {A{"self", T}, A{"mask", T}, A{"value", T}}, [](RuleCtx& c) {
      if (c.active("value")) return c.fail("the fill value must not require grad");
      c.give("self", c.ad.op("aten.masked_fill.Scalar", {c.g, c.val("mask")}, ir::attrs({{"value", Attr::real(0.0)}})));
      return true;
    });
    def({"cat", "stack"}, {}, [](RuleCtx& c) {
      Autodiff& ad = c.ad;
      bool stack = c.n->opName().find("stack") != std::string::npos;
      int64_t d = 0;
      if (const Attr* a = c.n->attr("dim")) {
        if (a->kind() != Attr::Kind::Int) return c.fail("'dim' must be a constant");
        d = a->getInt();
      }
      size_t rank = rankOf(c.out);
      if (!c.out->type().ranked()) return c.fail("the result's rank must be known");
      d = normDim(d, rank);
      int64_t off = 0, i = 0;
      for (Value* v : c.n->operands()) {
        if (!v || !v->type().isTensor()) return c.fail("operands must be tensors");
        if (stack) {
          if (ad.isActive(v))
            ad.accumulate(v, ad.op("aten.select.int", {c.g}, ir::attrs({{"dim", Attr::integer(d)}, {"index", Attr::integer(i)}})));
          ++i;
          continue;
        }
        Type t = v->type();
        if (!t.ranked()) return c.fail("operands must have known shapes");
        if (t.dims().size() == 1 && t.dims()[0].isStatic() && t.dims()[0].size == 0 && rank != 1) continue;  // legacy empty
        if (size_t(d) >= t.dims().size() || !t.dims()[size_t(d)].isStatic())
          return c.fail("operand sizes along the dim must be static");
        int64_t sz = t.dims()[size_t(d)].size;
        if (ad.isActive(v))
          ad.accumulate(v, ad.op("aten.slice.Tensor", {c.g},
                                 ir::attrs({{"dim", Attr::integer(d)}, {"start", Attr::integer(off)},
                                            {"end", Attr::integer(off + sz)}, {"step", Attr::integer(1)}})));
        off += sz;
      }
      return !ad.failed();
    });
    def({"select.int"}, {A{"self", T}, A{"dim", S}, A{"index", S}}, [](RuleCtx& c) {
      std::vector<int64_t> shape;
      if (!staticShape(c.val("self"), shape)) return c.fail("the input's shape must be static");
      Call k(c, {c.g});
      k.set("input_sizes", intArray(shape)).pass("dim").pass("index");
      return c.give("self", k.emit("aten.select_backward")), true;
    });
    def({"slice.Tensor"}, {A{"self", T}, A{"dim", S, Attr::integer(0)}, A{"start", S}, A{"end", S},
                           A{"step", S, Attr::integer(1)}},
        [](RuleCtx& c) {
          std::vector<int64_t> shape;
          if (!staticShape(c.val("self"), shape)) return c.fail("the input's shape must be static");
          Call k(c, {c.g});
          k.set("input_sizes", intArray(shape)).pass("dim");
          if (c.arg("start").isNone()) k.set("start", Attr::integer(0));
          else k.pass("start");
          if (c.arg("end").isNone()) k.set("end", Attr::integer(INT64_MAX));
          else k.pass("end");
          k.pass("step");
          return c.give("self", k.emit("aten.slice_backward")), true;
        });
    def({"split.Tensor", "split_with_sizes", "unbind.int", "split.sizes", "chunk"},
        {A{"self", T}, A{"split_size", S}, A{"dim", S, Attr::integer(0)}}, [](RuleCtx& c) {
          Autodiff& ad = c.ad;
          std::vector<int64_t> shape;
          Value* x = c.val("self");
          if (!staticShape(x, shape)) return c.fail("the input's shape must be static");
          const std::string& name = c.n->opName();
          int64_t d = 0;
          if (const Attr* a = c.n->attr("dim")) {
            if (a->kind() != Attr::Kind::Int) return c.fail("'dim' must be a constant");
            d = a->getInt();
          }
          d = normDim(d, shape.size());
          if (d < 0 || size_t(d) >= shape.size()) return c.fail("dim out of range");
          int64_t size = shape[size_t(d)];
          std::vector<int64_t> starts, lens;
          bool unbind = name.find("unbind") != std::string::npos;
          if (unbind) {
            for (int64_t i = 0; i < size; ++i) starts.push_back(i), lens.push_back(1);
          } else if (name.find("split_with_sizes") != std::string::npos || name.find("split.sizes") != std::string::npos) {
            const Attr* a = c.n->attr("split_sizes");
            if (!a) a = c.n->attr("split_size");
            std::vector<int64_t> sizes;
            bool none;
            if (!a || !argIntList(Arg{nullptr, *a}, sizes, none) || none) return c.fail("'split_sizes' must be a constant");
            int64_t off = 0;
            for (int64_t s : sizes) starts.push_back(off), lens.push_back(s), off += s;
          } else {
            int64_t s;
            if (!argInt(c.arg("split_size"), s) || s <= 0) return c.fail("'split_size' must be a constant");
            if (name.find("chunk") != std::string::npos) s = (size + s - 1) / s;  // chunks -> chunk size
            for (int64_t off = 0; off < size; off += s) starts.push_back(off), lens.push_back(std::min(s, size - off));
          }
          Value* acc = nullptr;
          for (auto& [idx, g] : *c.elems) {
            int64_t i = idx < 0 ? idx + int64_t(starts.size()) : idx;
            if (i < 0 || size_t(i) >= starts.size()) return c.fail("element index out of range");
            Value* gi = g;
            if (unbind) gi = ad.op("aten.unsqueeze", {gi}, ir::attrs({{"dim", Attr::integer(d)}}));
            std::vector<int64_t> pad(2 * (shape.size() - size_t(d)), 0);
            // constant_pad_nd pads the last dim first: dim d is the last pair.
            size_t p = 2 * (shape.size() - 1 - size_t(d));
            pad[p] = starts[size_t(i)];
            pad[p + 1] = size - starts[size_t(i)] - lens[size_t(i)];
            Value* full = ad.op("aten.constant_pad_nd", {gi}, ir::attrs({{"pad", intArray(pad)}, {"value", Attr::integer(0)}}));
            acc = acc ? ad.add(acc, full) : full;
          }
          if (acc) c.give("self", acc);
          return !ad.failed();
        });
    def({"cumsum"}, {A{"self", T}, A{"dim", S}, A{"dtype", X}}, [](RuleCtx& c) {
      Autodiff& ad = c.ad;
      int64_t d;
      if (!argInt(c.arg("dim"), d)) return c.fail("'dim' must be a constant");
      AttrDict fa = ir::attrs({{"dims", intArray({d})}});
      Value* f = ad.op("aten.flip", {c.g}, fa);
      Value* cs = ad.op("aten.cumsum", {f}, ir::attrs({{"dim", Attr::integer(d)}}));
      return c.give("self", ad.op("aten.flip", {cs}, fa)), true;
    });
    def({"triu", "tril"}, {A{"self", T}, A{"diagonal", S, Attr::integer(0)}}, [](RuleCtx& c) {
      Call k(c, {c.g});
      k.pass("diagonal");
      return c.give("self", k.emit(c.n->opName().find("triu") != std::string::npos ? "aten.triu" : "aten.tril")), true;
    });
    def({"flip"}, {A{"self", T}, A{"dims", IL}}, [](RuleCtx& c) {
      Call k(c, {c.g});
      k.pass("dims");
      return c.give("self", k.emit("aten.flip")), true;
    });
    def({"roll"}, {A{"self", T}, A{"shifts", IL}, A{"dims", IL}}, [](RuleCtx& c) {
      std::vector<int64_t> sh;
      bool none;
      if (!argIntList(c.arg("shifts"), sh, none) || none) return c.fail("'shifts' must be a constant");
      for (int64_t& v : sh) v = -v;
      Call k(c, {c.g});
      k.set("shifts", intArray(sh)).pass("dims");
      return c.give("self", k.emit("aten.roll")), true;
    });
    def({"constant_pad_nd"}, {A{"self", T}, A{"pad", IL}, A{"value", S, Attr::integer(0)}}, [](RuleCtx& c) {
      std::vector<int64_t> pad;
      bool none;
      if (!argIntList(c.arg("pad"), pad, none) || none) return c.fail("'pad' must be a constant");
      for (int64_t& v : pad) v = -v;
      return c.give("self", c.ad.op("aten.constant_pad_nd", {c.g}, ir::attrs({{"pad", intArray(pad)}, {"value", Attr::integer(0)}}))),
             true;
    });
    def({"gather"}, {A{"self", T}, A{"dim", S}, A{"index", T}, A{"sparse_grad", S, Attr::boolean(false)}},
        [](RuleCtx& c) {
          Value* z = zerosOf(c, c.val("self"));
          Call k(c, {z});
          k.pass("dim");
          k.ops.push_back(c.val("index"));
          k.ops.push_back(c.g);
          return c.give("self", k.emit("aten.scatter_add")), true;
        });
    def({"index_select"}, {A{"self", T}, A{"dim", S}, A{"index", T}}, [](RuleCtx& c) {
      Value* z = zerosOf(c, c.val("self"));
      Call k(c, {z});
      k.pass("dim");
      k.ops.push_back(c.val("index"));
      k.ops.push_back(c.g);
      return c.give("self", k.emit("aten.index_add")), true;
    });
    def({"index.Tensor"}, {A{"self", T}}, [](RuleCtx& c) {
      // index_put(zeros, indices, g, accumulate=True): indices are the node's
      // other operands (tensors or nulls), in order.
      std::vector<Value*> ops{zerosOf(c, c.val("self"))};
      for (size_t i = 1; i < c.n->numOperands(); ++i) {
        Value* v = c.n->operand(i);
        if (v && c.ad.isActive(v)) return c.fail("indices must not require grad");
        ops.push_back(v);
      }
      ops.push_back(c.g);
      return c.give("self", c.ad.op("aten.index_put", ops, ir::attrs({{"accumulate", Attr::boolean(true)}}))), true;
    });
    def({"amax", "amin"}, {A{"self", T}, A{"dim", IL}, A{"keepdim", S, Attr::boolean(false)}}, [](RuleCtx& c) {
      Autodiff& ad = c.ad;
      Value* x = c.val("self");
      std::vector<int64_t> dims;
      bool none;
      if (!argIntList(c.arg("dim"), dims, none)) return c.fail("'dim' must be a constant");
      bool all = none || dims.empty();
      bool keep = argBool(c.arg("keepdim"), false);
      if (all) for (size_t i = 0; i < rankOf(x); ++i) dims.push_back(int64_t(i));
      Value* g = unsqueezeReduced(ad, c.g, x, dims, false, keep);
      Value* o = unsqueezeReduced(ad, c.out, x, dims, false, keep);
      Value* m = ad.op("aten.eq.Tensor", {x, o});
      Value* mf = ad.op("aten._to_copy", {m}, ir::attrs({{"dtype", Attr::string(ir::dtypeName(x->type().dtype()))}}));
      Value* cnt = ad.op("aten.sum.dim_IntList", {mf}, ir::attrs({{"dim", intArray(dims)}, {"keepdim", Attr::boolean(true)}}));
      return c.give("self", ad.mul(ad.div(g, cnt), mf)), true;
    });
    def({"max.dim", "min.dim"}, {A{"self", T}, A{"dim", S}, A{"keepdim", S, Attr::boolean(false)}}, [](RuleCtx& c) {
      std::vector<int64_t> shape;
      if (!staticShape(c.val("self"), shape)) return c.fail("the input's shape must be static");
      Call k(c, {c.g});
      k.pass("dim");
      k.ops.push_back(c.n->result(1));
      k.set("sizes", intArray(shape)).pass("keepdim");
      return c.give("self", k.emit("aten.value_selecting_reduction_backward")), true;
    });
    def({"var.correction", "std.correction", "var.dim", "std.dim"},
        {A{"self", T}, A{"dim", IL}, A{"correction", S}, A{"keepdim", S, Attr::boolean(false)}}, [](RuleCtx& c) {
          Autodiff& ad = c.ad;
          Value* x = c.val("self");
          std::vector<int64_t> dims;
          bool none;
          if (!argIntList(c.arg("dim"), dims, none)) return c.fail("'dim' must be a constant");
          bool all = none || dims.empty();
          if (all) for (size_t i = 0; i < rankOf(x); ++i) dims.push_back(int64_t(i));
          double corr = 1.0;
          const Arg& ca = c.arg("correction");
          if (c.n->opName().find(".dim") != std::string::npos) {
            if (const Attr* u = c.n->attr("unbiased")) corr = u->kind() == Attr::Kind::Bool && !u->getBool() ? 0.0 : 1.0;
          } else if (!ca.isNone() && !argDouble(ca, corr)) {
            return c.fail("'correction' must be a constant");
          }
          double count = 0;
          if (!reducedCount(c, x, dims, false, count)) return c.fail("reduced sizes must be static");
          bool keep = argBool(c.arg("keepdim"), false);
          Value* g = unsqueezeReduced(ad, c.g, x, dims, false, keep);
          Value* mean = ad.op("aten.mean.dim", {x}, ir::attrs({{"dim", intArray(dims)}, {"keepdim", Attr::boolean(true)}}));
          Value* xc = ad.sub(x, mean);
          if (c.n->opName().rfind("aten.var", 0) == 0)
            return c.give("self", ad.mulc(ad.mul(g, xc), 2.0 / (count - corr))), true;
          Value* o = unsqueezeReduced(ad, c.out, x, dims, false, keep);
          return c.give("self", ad.mulc(ad.div(ad.mul(g, xc), o), 1.0 / (count - corr))), true;
        });
    def({"baddbmm"},
        {A{"self", T}, A{"batch1", T}, A{"batch2", T}, A{"beta", S, Attr::integer(1)}, A{"alpha", S, Attr::integer(1)}},
        [](RuleCtx& c) { return addmmRule(c, "batch1", "batch2"); });
    def({"embedding"}, {A{"weight", T}, A{"indices", T}, A{"padding_idx", S, Attr::integer(-1)},
                        A{"scale_grad_by_freq", S, Attr::boolean(false)}, A{"sparse", S, Attr::boolean(false)}},
        [](RuleCtx& c) {
          std::vector<int64_t> shape;
          if (!staticShape(c.val("weight"), shape) || shape.empty()) return c.fail("the weight's shape must be static");
          Call k(c, {c.g, c.val("indices")});
          k.set("num_weights", Attr::integer(shape[0])).pass("padding_idx").pass("scale_grad_by_freq");
          return c.give("weight", k.emit("aten.embedding_dense_backward")), true;
        });
    def({"nll_loss_forward", "nll_loss2d_forward"},
        {A{"self", T}, A{"target", T}, A{"weight", TO}, A{"reduction", S, Attr::integer(1)},
         A{"ignore_index", S, Attr::integer(-100)}},
        [](RuleCtx& c) {
          Call k(c, {c.g, c.val("self"), c.val("target")});
          k.opt("weight").pass("reduction").pass("ignore_index");
          k.ops.push_back(c.n->result(1));
          bool twod = c.n->opName().find("2d") != std::string::npos;
          return c.give("self", k.emit(twod ? "aten.nll_loss2d_backward" : "aten.nll_loss_backward")), true;
        });
    def({"native_layer_norm"}, {A{"input", T}, A{"normalized_shape", IL}, A{"weight", TO}, A{"bias", TO}, A{"eps", S}},
        [](RuleCtx& c) {
          Call k(c, {c.g, c.val("input")});
          k.pass("normalized_shape");
          k.ops.push_back(c.n->result(1));
          k.ops.push_back(c.n->result(2));
          k.opt("weight").opt("bias");
          return normBackward(c, k, "aten.native_layer_norm_backward");
        });
    def({"native_group_norm"},
        {A{"input", T}, A{"weight", TO}, A{"bias", TO}, A{"N", S}, A{"C", S}, A{"HxW", S}, A{"group", S}, A{"eps", S}},
        [](RuleCtx& c) {
          Call k(c, {c.g, c.val("input"), c.n->result(1), c.n->result(2)});
          k.opt("weight").pass("N").pass("C").pass("HxW").pass("group");
          return normBackward(c, k, "aten.native_group_norm_backward");
        });
    def({"native_batch_norm", "_native_batch_norm_legit_no_training", "_native_batch_norm_legit.no_stats"},
        {A{"input", T}, A{"weight", TO}, A{"bias", TO}, A{"running_mean", TO}, A{"running_var", TO},
         A{"training", S, Attr::boolean(false)}, A{"momentum", S}, A{"eps", S}},
        [](RuleCtx& c) {
          const std::string& name = c.n->opName();
          bool train = name.find("no_training") != std::string::npos ? false
                       : name.find("no_stats") != std::string::npos  ? true
                                                                     : argBool(c.arg("training"), false);
          if (c.active("running_mean") || c.active("running_var")) return c.fail("running statistics must not require grad");
          Call k(c, {c.g, c.val("input")});
          k.opt("weight").opt("running_mean").opt("running_var");
          k.ops.push_back(c.n->result(1));
          k.ops.push_back(c.n->result(2));
          k.set("train", Attr::boolean(train)).pass("eps");
          return normBackward(c, k, "aten.native_batch_norm_backward");
        });
    def({"convolution"},
        {A{"input", T}, A{"weight", T}, A{"bias", TO}, A{"stride", IL}, A{"padding", IL}, A{"dilation", IL},
         A{"transposed", S}, A{"output_padding", IL}, A{"groups", S}},
        [](RuleCtx& c) {
          Call k(c, {c.g, c.val("input"), c.val("weight")});
          bool bias = !c.arg("bias").isNone();
          if (bias) {
            std::vector<int64_t> bs;
            if (!staticShape(c.val("bias"), bs)) return c.fail("the bias's shape must be static");
            k.set("bias_sizes", intArray(bs));
          } else {
            k.set("bias_sizes", Attr::none());
          }
          k.pass("stride").pass("padding").pass("dilation").pass("transposed").pass("output_padding").pass("groups");
          k.set("output_mask", boolArray({true, true, bias}));
          Node* m = k.emitNode("aten.convolution_backward");
          if (!m) return false;
          c.give("input", m->result(0));
          c.give("weight", m->result(1));
          c.give("bias", m->result(2));
          return true;
        });
    def({"max_pool2d_with_indices"},
        {A{"self", T}, A{"kernel_size", IL}, A{"stride", IL}, A{"padding", IL, Attr::integer(0)},
         A{"dilation", IL, Attr::integer(1)}, A{"ceil_mode", S, Attr::boolean(false)}},
        [](RuleCtx& c) {
          Call k(c, {c.g, c.val("self")});
          k.pass("kernel_size");
          if (c.arg("stride").isNone()) k.set("stride", intArray({}));
          else k.pass("stride");
          k.pass("padding").pass("dilation").pass("ceil_mode");
          k.ops.push_back(c.n->result(1));
          return c.give("self", k.emit("aten.max_pool2d_with_indices_backward")), true;
        });
    def({"avg_pool2d"},
        {A{"self", T}, A{"kernel_size", IL}, A{"stride", IL}, A{"padding", IL, Attr::integer(0)},
         A{"ceil_mode", S, Attr::boolean(false)}, A{"count_include_pad", S, Attr::boolean(true)},
         A{"divisor_override", S}},
        [](RuleCtx& c) {
          Call k(c, {c.g, c.val("self")});
          k.pass("kernel_size");
          if (c.arg("stride").isNone()) k.set("stride", intArray({}));
          else k.pass("stride");
          k.pass("padding").pass("ceil_mode").pass("count_include_pad");
          if (c.arg("divisor_override").isNone()) k.set("divisor_override", Attr::none());
          else k.pass("divisor_override");
          return c.give("self", k.emit("aten.avg_pool2d_backward")), true;
        });
    def({"_adaptive_avg_pool2d", "adaptive_avg_pool2d"}, {A{"self", T}, A{"output_size", IL}}, [](RuleCtx& c) {
      return c.give("self", c.ad.op("aten._adaptive_avg_pool2d_backward", {c.g, c.val("self")})), true;
    });
    return r;
  }();
  return table;
}

bool bindArgs(const Node& n, const std::vector<ArgSpec>& spec, std::vector<Arg>& out, std::string& err) {
  out.assign(spec.size(), Arg{});
  size_t k = 0;
  size_t nops = n.numOperands();
  if (n.hasEffects()) k = 1;  // token (only reached for rules that accept effects)
  for (size_t i = 0; i < spec.size(); ++i) {
    if (const Attr* a = n.attr(spec[i].name)) {
      out[i].a = *a;
      continue;
    }
    if (k < nops && n.operand(k) && fits(spec[i].kind, n.operand(k)->type())) {
      out[i].v = n.operand(k++);
      continue;
    }
    out[i].a = spec[i].dflt;
    if (spec[i].kind == AK::T && spec[i].dflt.isNone()) {
      err = std::string("missing argument '") + spec[i].name + "'";
      return false;
    }
  }
  return true;
}

bool Autodiff::diffIf(Node* n) {
  support::SourceLoc loc = curOrig_ ? (locOf_ ? locOf_(*curOrig_) : curOrig_->loc()) : support::SourceLoc{};
  std::vector<size_t> wrt;
  for (size_t i = 1; i < n->numOperands(); ++i)
    if (isDifferentiableType(n->operand(i)->type())) wrt.push_back(i - 1);
  if (wrt.empty()) return true;
  std::vector<std::unique_ptr<ir::Graph>> arms;
  for (size_t k = 0; k < 2; ++k) {
    GradOptions o;
    o.wrt = wrt;
    o.seedParams = true;
    o.gradsOnly = true;
    o.name = n->region(k)->name();
    o.locOf = [loc](const Node& m) { return m.loc().file ? m.loc() : loc; };
    auto dg = buildGradGraph(*n->region(k), o, diag_);
    if (!dg) {
      failed_ = true;
      return false;
    }
    arms.push_back(std::move(dg));
  }
  std::vector<Value*> operands(n->operands().begin(), n->operands().end());
  for (size_t i = 0; i < n->numResults(); ++i) {
    Value* r = n->result(i);
    if (!isDifferentiableType(r->type())) continue;
    Value* d = gradOf(r);
    operands.push_back(d ? d : zerosLike(r));
  }
  std::vector<Type> types = arms[0]->resultTypes();
  for (Value* v : operands)
    if (!v) return false;
  Node* m = g_.create(&n->op(), operands, types);
  m->setLoc(n->loc());
  for (auto& a : arms) m->addRegion(std::move(a));
  for (size_t j = 0; j < wrt.size(); ++j) accumulate(n->operand(wrt[j] + 1), m->result(j));
  return !failed_;
}

bool Autodiff::run(const std::vector<size_t>& wrt, bool seedParams, const ir::Graph& orig,
                   const std::unordered_map<const Node*, const Node*>& origOf) {
  (void)orig;
  // Forward sweep: activity.
  for (size_t i : wrt) active_.insert(g_.param(i));
  for (Node* n : g_) {
    bool any = false;
    for (Value* v : n->operands())
      if (v && active_.count(v)) any = true;
    if (!any) continue;
    for (size_t i = 0; i < n->numResults(); ++i) {
      Type t = n->result(i)->type();
      // A list of floating tensors (aten.split, unbind) carries gradients to
      // its elements: active, so that the ops reading it need rules too.
      bool list = t.kind() == ir::TypeKind::List && isDifferentiableType(t.elementType());
      if (isDifferentiableType(t) || list) active_.insert(n->result(i));
    }
  }
  // Seeds.
  Node* last = g_.back();
  std::vector<Value*> results = g_.results();
  for (Value* r : results) {
    if (!isActive(r)) {
      if (seedParams && isDifferentiableType(r ? r->type() : Type())) g_.addParam(r->type(), "");
      continue;
    }
    Value* seed = seedParams ? g_.addParam(r->type(), "") : nullptr;
    setCurrent(r->isParam() ? nullptr : r->definingNode(),
               r->isParam() ? nullptr : origOf.at(r->definingNode()));
    if (!seed) seed = onesLike(r);
    if (!seed) return false;
    auto it = grads_.find(r);
    grads_[r] = it == grads_.end() ? seed : add(it->second, seed);
  }
  // Reverse sweep over the forward nodes.
  const auto& table = rules();
  for (Node* n = last; n; n = n->prev()) {
    bool hasGrad = false;
    for (size_t i = 0; i < n->numResults(); ++i)
      if (grads_.count(n->result(i)) || listGrads_.count(n->result(i))) hasGrad = true;
    if (!hasGrad) continue;
    setCurrent(n, origOf.at(n));
    if (n->op().is(ir::CoreOp::ListGet)) {
      int64_t idx;
      const Attr* c = n->numOperands() > 1 ? constOf(n->operand(1)) : nullptr;
      if (!c || c->kind() != Attr::Kind::Int) return error("cannot differentiate 'list.get' with a non-constant index");
      idx = c->getInt();
      if (isActive(n->operand(0))) accumulateElement(n->operand(0), idx, gradOf(n->result(0)));
      continue;
    }
    if (n->op().is(ir::CoreOp::If) && !n->hasEffects()) {
      if (!diffIf(n)) return false;
      continue;
    }
    if (n->numRegions() || n->op().has(ir::kCallLike) || n->op().is(ir::CoreOp::Apply)) {
      error("cannot differentiate '" + n->opName() + "': calls and control-flow regions are not supported",
            n->op().has(ir::kCallLike) ? "inline the callee first (the `inline` pass)" : std::string());
      return false;
    }
    std::string key = ruleKey(*n);
    // An in-place op on a fresh tensor (`squeeze_` traced from a decomposition)
    // is differentiated like its out-of-place form: token in, (token, tensor) out.
    bool inplace = false;
    if (n->hasEffects() && n->opName().rfind("aten.", 0) == 0 && n->numResults() == 2) {
      size_t dot = key.find('.');
      size_t end = dot == std::string::npos ? key.size() : dot;
      // Only view-like ops: their rules never read the (mutated) input's value.
      static const std::unordered_set<std::string> views = {"squeeze_", "unsqueeze_", "t_", "transpose_"};
      if (views.count(key.substr(0, end))) {
        key.erase(end - 1, 1);
        inplace = true;
      }
    }
    auto it = table.find(key);
    if (it == table.end() || (n->hasEffects() && !inplace)) {
      error("cannot differentiate '" + (n->op().is(ir::CoreOp::Builtin) ? ruleKey(*n) : n->opName()) +
                "': no derivative rule",
            "supported ops are listed in csrc/lib/passes/Autodiff.cpp");
      return false;
    }
    Value* out = n->result(inplace ? 1 : 0);
    // Rules differentiate their first result (the others are saved statistics,
    // indices or tokens); a gradient on another one would be dropped.
    for (size_t i = 0; i < n->numResults(); ++i)
      if (n->result(i) != out && (grads_.count(n->result(i)) || listGrads_.count(n->result(i))))
        return error("cannot differentiate '" + n->opName() + "' with respect to its result #" + std::to_string(i));
    RuleCtx c{*this, n, it->second.args, {}, grads_.count(out) ? grads_[out] : nullptr, out};
    c.elems = listGrads_.count(out) ? &listGrads_[out] : nullptr;
    std::string err;
    if (!bindArgs(*n, it->second.args, c.args, err)) return error("cannot differentiate '" + n->opName() + "': " + err);
    if (!c.g && !c.elems) continue;
    if (!it->second.fn(c) || failed_) return false;
  }
  // Results: original results, then one gradient per wrt parameter.
  setCurrent(nullptr, nullptr);
  std::vector<Value*> grads;
  for (size_t i : wrt) {
    Value* p = g_.param(i);
    Value* d = gradOf(p);
    if (!d) d = zerosLike(p);
    if (!d) return false;
    grads.push_back(d);
  }
  if (gradsOnly_) {
    std::vector<Type> types;
    for (Value* d : grads) types.push_back(d->type());
    g_.setResults(grads);
    g_.setResultTypes(types);
  } else {
    for (Value* d : grads) g_.addResult(d, d->type());
  }
  return !failed_;
}

}  // namespace

bool parseWrtList(const ir::Graph& g, const std::string& spec, std::vector<size_t>& out, std::string& error) {
  out.clear();
  size_t pos = 0;
  while (pos <= spec.size()) {
    size_t comma = spec.find(',', pos);
    std::string item = spec.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    while (!item.empty() && item.front() == ' ') item.erase(item.begin());
    while (!item.empty() && item.back() == ' ') item.pop_back();
    if (!item.empty()) {
      if (item[0] == '%') item.erase(item.begin());
      bool found = false;
      for (size_t i = 0; i < g.numParams(); ++i)
        if (g.param(i)->name() == item) {
          out.push_back(i);
          found = true;
          break;
        }
      if (!found && std::all_of(item.begin(), item.end(), [](char ch) { return ch >= '0' && ch <= '9'; })) {
        size_t i = std::stoul(item);
        if (i < g.numParams()) {
          out.push_back(i);
          found = true;
        }
      }
      if (!found) {
        error = "graph @" + g.name() + " has no parameter '" + item + "'";
        return false;
      }
    }
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return true;
}

std::unique_ptr<ir::Graph> buildGradGraph(const ir::Graph& fwd, const GradOptions& opts,
                                          support::DiagnosticEngine& diag) {
  std::vector<size_t> wrt = opts.wrt;
  if (wrt.empty())
    for (size_t i = 0; i < fwd.numParams(); ++i)
      if (isDifferentiableType(fwd.param(i)->type())) wrt.push_back(i);
  for (size_t i : wrt) {
    if (i >= fwd.numParams()) {
      diag.error("E0303", {}, "graph @" + fwd.name() + " has no parameter #" + std::to_string(i));
      return nullptr;
    }
    if (!isDifferentiableType(fwd.param(i)->type())) {
      diag.error("E0303", {},
                 "cannot differentiate @" + fwd.name() + " with respect to parameter %" +
                     fwd.param(i)->name() + " of type " + fwd.param(i)->type().str() +
                     ": only floats and floating-point tensors have gradients");
      return nullptr;
    }
  }
  auto g = fwd.clone();
  g->setName(opts.name.empty() ? fwd.name() + "_grad" : opts.name);
  std::unordered_map<const Node*, const Node*> origOf;
  for (Node *a = g->front(), *b = fwd.front(); a && b; a = a->next(), b = b->next()) origOf[a] = b;
  Autodiff ad(*g, diag, opts.locOf);
  ad.gradsOnly_ = opts.gradsOnly;
  if (!ad.run(wrt, opts.seedParams, fwd, origOf)) return nullptr;
  // Clean up: the gradient graph reuses forward values; drop what it does not need.
  ir::Module tmp;
  ir::Graph* gp = tmp.add(std::move(g));
  Statistics stats;
  PassContext ctx{diag, stats};
  for (const char* p : {"canonicalize", "cse", "dce"})
    if (!createPass(p)->run(tmp, ctx)) return nullptr;
  return gp->clone();
}

namespace {

/// `copy` is a clone of `orig`: maps each value of `orig` (parameters and node
/// results, top level) to its copy.
std::unordered_map<const Value*, Value*> cloneMap(const ir::Graph& orig, const ir::Graph& copy) {
  std::unordered_map<const Value*, Value*> m;
  for (size_t i = 0; i < orig.numParams(); ++i) m[orig.param(i)] = copy.param(i);
  for (Node *a = orig.front(), *b = copy.front(); a && b; a = a->next(), b = b->next())
    for (size_t i = 0; i < a->numResults(); ++i) m[a->result(i)] = b->result(i);
  return m;
}

bool cleanup(std::unique_ptr<ir::Graph>& g, support::DiagnosticEngine& diag) {
  ir::Module tmp;
  ir::Graph* gp = tmp.add(std::move(g));
  Statistics stats;
  PassContext ctx{diag, stats};
  if (!createPass("dce")->run(tmp, ctx)) return false;
  g = gp->clone();
  return true;
}

}  // namespace

bool buildTrainingGraphs(const ir::Graph& fwd, const std::vector<size_t>& wrt, TrainingGraphs& out,
                         support::DiagnosticEngine& diag,
                         const std::function<support::SourceLoc(const ir::Node&)>& locOf) {
  GradOptions go;
  go.wrt = wrt;
  go.seedParams = true;
  go.locOf = locOf;
  go.name = fwd.name() + "_joint";
  std::unique_ptr<ir::Graph> joint = buildGradGraph(fwd, go, diag);
  if (!joint) return false;
  const size_t n0 = fwd.numParams(), m = fwd.results().size(), nw = wrt.size();
  if (joint->results().size() != m + nw) {
    diag.error("E0303", {}, "internal: the joint graph of @" + fwd.name() + " has an unexpected result count");
    return false;
  }
  out.numResults = m;
  out.cotangent.clear();
  for (Value* r : fwd.results()) out.cotangent.push_back(r && isDifferentiableType(r->type()));
  {
    static const std::unordered_set<std::string> cut = {
        "detach", "zeros_like", "ones_like", "empty_like", "full_like", "rand_like", "randn_like",
        "randint_like", "new_zeros", "new_ones", "new_empty", "new_full", "lift_fresh"};
    std::unordered_set<const Value*> req;
    for (size_t i : wrt) req.insert(fwd.param(i));
    for (const Node* n : fwd) {
      bool any = false;
      for (Value* v : n->operands())
        if (v && req.count(v)) any = true;
      if (!any) continue;
      std::string key = ruleKey(*n);
      if (cut.count(key.substr(0, key.find('.')))) continue;
      for (size_t i = 0; i < n->numResults(); ++i) {
        Type t = n->result(i)->type();
        if (isDifferentiableType(t) || (t.kind() == ir::TypeKind::List && isDifferentiableType(t.elementType())))
          req.insert(n->result(i));
      }
    }
    out.requiresGrad.clear();
    for (Value* r : fwd.results()) out.requiresGrad.push_back(r && req.count(r) && r->type().isTensor());
  }
  // Backward values: those depending on a cotangent parameter.
  std::unordered_set<const Value*> bw;
  for (size_t i = n0; i < joint->numParams(); ++i) bw.insert(joint->param(i));
  std::vector<Value*> residuals;
  std::unordered_set<const Value*> isResidual;
  auto save = [&](Value* v) {
    if (v && !v->isParam() && !bw.count(v) && isResidual.insert(v).second) residuals.push_back(v);
  };
  for (Node* n : *joint) {
    bool any = false;
    for (Value* v : n->operands())
      if (v && bw.count(v)) any = true;
    if (!any) continue;
    for (size_t i = 0; i < n->numResults(); ++i) bw.insert(n->result(i));
    for (Value* v : n->operands()) save(v);
  }
  for (size_t j = 0; j < nw; ++j) save(joint->results()[m + j]);
  for (size_t i = 0; i < m; ++i)
    if (bw.count(joint->results()[i])) {
      diag.error("E0303", {}, "internal: a result of @" + fwd.name() + " depends on a cotangent");
      return false;
    }
  out.numResiduals = residuals.size();

  // Forward: the results, then the residuals; the backward nodes and the
  // cotangent parameters dropped.
  {
    auto f = joint->clone();
    auto map = cloneMap(*joint, *f);
    std::vector<Value*> rs;
    std::vector<Type> ts;
    for (size_t i = 0; i < m; ++i) rs.push_back(map.at(joint->results()[i]));
    for (Value* r : residuals) rs.push_back(map.at(r));
    for (Value* r : rs) ts.push_back(r->type());
    f->setResults(rs);
    f->setResultTypes(ts);
    f->setName(fwd.name() + "_forward");
    if (!cleanup(f, diag)) return false;
    for (size_t i = f->numParams(); i-- > n0;) {
      if (f->param(i)->hasUses()) {
        diag.error("E0303", {}, "internal: the forward graph of @" + fwd.name() + " reads a cotangent");
        return false;
      }
      f->eraseParam(i);
    }
    out.forward = std::move(f);
  }
  // Backward: residuals become parameters; the forward parameters it does not
  // read are dropped.
  {
    auto b = joint->clone();
    auto map = cloneMap(*joint, *b);
    std::unordered_map<const Value*, Value*> param;
    for (Value* r : residuals) {
      Value* p = b->addParam(r->type(), "");
      map.at(r)->replaceAllUsesWith(p);
      param[r] = p;
    }
    std::vector<Value*> rs;
    std::vector<Type> ts;
    for (size_t j = 0; j < nw; ++j) {
      Value* d = joint->results()[m + j];
      auto it = param.find(d);
      rs.push_back(it != param.end() ? it->second : map.at(d));
      ts.push_back(rs.back()->type());
    }
    b->setResults(rs);
    b->setResultTypes(ts);
    b->setName(fwd.name() + "_backward");
    // The forward nodes are the forward graph's: none of their values is read
    // any more, and their effects (a BatchNorm's counter update) must not run twice.
    std::unordered_set<const Node*> keep;
    for (Node *a = joint->front(), *c = b->front(); a && c; a = a->next(), c = c->next())
      if (a->numResults() && bw.count(a->result(0))) keep.insert(c);
    for (Node* n = b->back(); n;) {
      Node* prev = n->prev();
      if (!keep.count(n)) {
        for (size_t i = 0; i < n->numResults(); ++i)
          if (n->result(i)->hasUses()) {
            diag.error("E0303", {}, "internal: the backward graph of @" + fwd.name() + " reads a forward value");
            return false;
          }
        b->erase(n);
      }
      n = prev;
    }
    if (!cleanup(b, diag)) return false;
    out.savedParams.clear();
    for (size_t i = n0; i-- > 0;) {
      if (b->param(i)->hasUses()) out.savedParams.insert(out.savedParams.begin(), i);
      else b->eraseParam(i);
    }
    out.backward = std::move(b);
  }
  return true;
}

}  // namespace xacc::passes
