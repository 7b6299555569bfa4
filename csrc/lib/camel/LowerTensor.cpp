// Tensor code (spec 15.17) as ATen ops: the operators on `Tensor` operands
// lower to `aten.<op>.<overload>` nodes named after the ATen schemas
// (`a + b` -> aten.add.Tensor, `a @ b` -> aten.matmul.default, `a < 1` ->
// aten.lt.Tensor with a wrapped number), and module functions with a lowering
// recipe (Note [Op lowering recipes] in Executor.h) lower the same way. Result
// types come from the aten op family's meta inference, so shapes are static
// wherever the operands' are; a combination that ATen rejects at compile time
// is E2130, one only known at run time fails there (E0602).
#include <sstream>

#include "LowerImpl.h"
#include "xacc/camel/Executor.h"

namespace xacc::camel::sema {

using ir::CoreOp;
using ir::Type;
using ir::TypeKind;
using ir::Value;

namespace {

bool isNumber(Type t) { return t.isNumeric(); }

/// `v` as an attribute when it is a compile-time constant (int, float, or a
/// list literal of ints).
bool constAttr(Value* v, bool wantList, ir::Attr& out) {
  ir::Node* n = v ? v->definingNode() : nullptr;
  if (!n) return false;
  if (n->op().is(CoreOp::Const)) {
    const ir::Attr* a = n->attr("value");
    if (!a || (a->kind() != ir::Attr::Kind::Int && a->kind() != ir::Attr::Kind::Float)) return false;
    out = wantList && a->kind() == ir::Attr::Kind::Int ? ir::Attr::array({*a}) : *a;
    return true;
  }
  if (n->op().is(CoreOp::ListMake)) {
    ir::Attr::Array items;
    for (unsigned i = 0; i < n->numOperands(); ++i) {
      ir::Node* e = n->operand(i)->definingNode();
      const ir::Attr* a = e && e->op().is(CoreOp::Const) ? e->attr("value") : nullptr;
      if (!a || a->kind() != ir::Attr::Kind::Int) return false;
      items.push_back(*a);
    }
    out = ir::Attr::array(std::move(items));
    return true;
  }
  return false;
}

std::string operandsText(const std::vector<LV>& args) {
  std::string s;
  for (size_t i = 0; i < args.size(); ++i) s += (i ? ", " : "") + camelTypeName(args[i].t);
  return args.size() == 1 ? s : "(" + s + ")";
}

}  // namespace

ir::Node* Lowerer::atenNode(const std::string& op, const std::vector<Value*>& operands,
                            ir::AttrDict attrs, const std::string& shown,
                            const std::vector<LV>& args, const SourceRange& at) {
  setLoc(at);
  for (Value* v : operands)
    if (!v) return nullptr;
  ir::Node* n = b_.create(op, operands, std::move(attrs));
  if (!n) report(diags_, Diag::TensorOpMismatch, at.loc(), {shown, operandsText(args), b_.error()});
  return n;
}

bool Lowerer::tensorBinary(BinaryOp op, LV a, LV b, const SourceRange& at, const char* spelling,
                           LV& out) {
  out = {};
  if (!a || !b) return false;
  bool ta = a.t.isTensor(), tb = b.t.isTensor();
  if (!ta && !tb) return false;
  if (!(ta || isNumber(a.t)) || !(tb || isNumber(b.t))) return false;  // E2102 by the caller
  std::string name;
  bool arithmetic = true;
  switch (op) {
    case BinaryOp::Add: name = "aten.add.Tensor"; break;
    case BinaryOp::Sub: name = "aten.sub.Tensor"; break;
    case BinaryOp::Mul: name = "aten.mul.Tensor"; break;
    case BinaryOp::Div: name = "aten.div.Tensor"; break;
    case BinaryOp::Mod: name = "aten.remainder.Tensor"; break;
    case BinaryOp::Pow:
      name = ta && tb ? "aten.pow.Tensor_Tensor" : ta ? "aten.pow.Tensor_Scalar" : "aten.pow.Scalar";
      break;
    case BinaryOp::MatMul:
      if (!ta || !tb) return false;
      name = "aten.matmul.default";
      break;
    case BinaryOp::Lt: name = "aten.lt.Tensor"; arithmetic = false; break;
    case BinaryOp::Le: name = "aten.le.Tensor"; arithmetic = false; break;
    case BinaryOp::Gt: name = "aten.gt.Tensor"; arithmetic = false; break;
    case BinaryOp::Ge: name = "aten.ge.Tensor"; arithmetic = false; break;
    case BinaryOp::Eq: name = "aten.eq.Tensor"; arithmetic = false; break;
    case BinaryOp::Ne: name = "aten.ne.Tensor"; arithmetic = false; break;
    default: return false;
  }
  std::vector<LV> args{a, b};
  // Tensor<bool> in arithmetic counts as 0/1 floats (spec 15.17).
  auto asF64 = [&](LV v) -> Value* {
    if (!arithmetic || !v.t.isTensor() || v.t.dtype() != ir::DType::Bool) return v.v;
    ir::Node* n = atenNode("aten._to_copy.default", {v.v},
                           ir::attrs({{"dtype", ir::Attr::string("f64")}}), spelling, args, at);
    return n ? n->result(0) : nullptr;
  };
  // Comparisons with the number first swap (1 < t is t > 1).
  Value* x = asF64(a);
  Value* y = asF64(b);
  if (!x || !y) return true;
  if (!arithmetic && !ta) {
    std::swap(x, y);
    if (op == BinaryOp::Lt) name = "aten.gt.Tensor";
    else if (op == BinaryOp::Le) name = "aten.ge.Tensor";
    else if (op == BinaryOp::Gt) name = "aten.lt.Tensor";
    else if (op == BinaryOp::Ge) name = "aten.le.Tensor";
  }
  ir::AttrDict attrs;
  std::vector<Value*> ops{x, y};
  if (name == "aten.pow.Tensor_Scalar") {
    ops = {x};
    ir::Attr c;
    if (constAttr(y, false, c)) attrs = ir::attrs({{"exponent", c}});
    else ops.push_back(y);
  } else if (name == "aten.pow.Scalar") {
    ops = {};
    ir::Attr c;
    if (constAttr(x, false, c)) attrs = ir::attrs({{"self", c}});
    else ops.push_back(x);
    ops.push_back(y);
  }
  ir::Node* n = atenNode(name, ops, std::move(attrs), spelling, args, at);
  if (n) out = {n->result(0), n->result(0)->type()};
  return true;
}

bool Lowerer::tensorRecipe(const std::string& gir, const std::string& shown, std::vector<LV>& args,
                           const SourceRange& at, LV& out) {
  const std::string* recipes = opLowering(gir);
  if (!recipes) return false;
  // Alternatives separated by `|`: the first whose parameter count fits.
  std::stringstream alts(*recipes);
  std::string r;
  while (std::getline(alts, r, '|'))
    if (tensorRecipeOne(r, shown, args, at, out)) return true;
  return false;
}

bool Lowerer::tensorRecipeOne(const std::string& r, const std::string& shown, std::vector<LV>& args,
                              const SourceRange& at, LV& out) {
  // op(params) attrs -> post
  size_t open = r.find('('), close = r.find(')');
  if (open == std::string::npos || close == std::string::npos || close < open) return false;
  std::string op = r.substr(0, open);
  op.erase(0, op.find_first_not_of(' '));
  std::vector<std::string> params;
  {
    std::string inner = r.substr(open + 1, close - open - 1);
    std::stringstream ss(inner);
    std::string p;
    while (std::getline(ss, p, ',')) {
      size_t b = p.find_first_not_of(' '), e = p.find_last_not_of(' ');
      params.push_back(b == std::string::npos ? "" : p.substr(b, e - b + 1));
    }
  }
  if (params.size() != args.size()) return false;
  std::string rest = r.substr(close + 1), post;
  if (size_t arrow = rest.find("->"); arrow != std::string::npos) {
    post = rest.substr(arrow + 2);
    post.erase(0, post.find_first_not_of(' '));
    post.erase(post.find_last_not_of(' ') + 1);
    rest = rest.substr(0, arrow);
  }
  for (size_t i = 0; i < params.size(); ++i)
    if (params[i] == "%" && !args[i].t.isTensor()) return false;
  std::vector<Value*> ops;
  ir::AttrDict attrs;
  for (size_t i = 0; i < params.size(); ++i) {
    std::string p = params[i];
    bool list = p.size() > 2 && p.compare(p.size() - 2, 2, "[]") == 0;
    if (list) p.resize(p.size() - 2);
    ir::Attr c;
    if (p != "%" && p != "*" && constAttr(args[i].v, list, c))
      attrs.set(p, c);
    else
      ops.push_back(args[i].v);
  }
  std::stringstream ss(rest);
  std::string kv;
  while (ss >> kv) {
    size_t eq = kv.find('=');
    if (eq == std::string::npos) continue;
    std::string k = kv.substr(0, eq), v = kv.substr(eq + 1);
    bool isInt = !v.empty() && v.find_first_not_of("-0123456789") == std::string::npos;
    attrs.set(k, isInt ? ir::Attr::integer(std::stoll(v)) : ir::Attr::string(v));
  }
  ir::Node* n = atenNode(op, ops, std::move(attrs), shown, args, at);
  if (!n) {
    out = {};
    return true;
  }
  Value* v = n->result(0);
  // The steps after `->`, in order: `f64` converts a tensor that is not f64
  // already (Camel's Tensor is f64), `item` reads a 0-d tensor's scalar.
  std::stringstream steps(post);
  std::string step;
  while (v && steps >> step) {
    ir::Node* m = nullptr;
    if (step == "item") {
      m = atenNode("aten.item.default", {v}, {}, shown, args, at);
    } else if (step == "f64") {
      if (v->type().isTensor() && v->type().dtype() == ir::DType::F64) continue;
      m = atenNode("aten._to_copy.default", {v}, ir::attrs({{"dtype", ir::Attr::string("f64")}}),
                   shown, args, at);
    }
    v = m ? m->result(0) : nullptr;
  }
  out = v ? LV{v, v->type()} : LV{};
  return true;
}

}  // namespace xacc::camel::sema
