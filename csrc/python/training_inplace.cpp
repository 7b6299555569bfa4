// Note [Fresh in-place ops in training graphs]
//
// A model that writes into a tensor it has just computed (`h += residual`,
// `x.mul_(scale)`, `out.relu_()` in ResNet, MPNet or an LSTM cell) puts an
// effect node in the captured graph: `%tok1, %h1 = aten.add_.Tensor(%tok0, %h0,
// %r)`, later code reading %h1. The autodiff has no rule for effects (Note
// [Training graphs]), so such a graph used to replay with eager autograd.
//
// When the written tensor %h0 is fresh and nothing else can see it, the write is
// not observable: the node becomes its out-of-place form `%h1 = aten.add.Tensor(
// %h0, %r)`, the token passes through, and the graph is differentiated as
// usual. Fresh and unseen means, all checked from ATen's schemas and the graph:
//   * %h0 is the result of an aten op without effects whose results alias
//     nothing (not a view: a view's base would see the write) and that is not
//     a graph input;
//   * the in-place node is %h0's only use (no other reader, no view of it, not
//     returned: a reader after the write would see the new value, one before it
//     the old one, and only the graph's order tells them apart);
//   * the out-of-place op exists with the same arguments, writes nothing and
//     returns a fresh tensor, and the in-place op is not random;
//   * %h0 is floating point and every other tensor operand has its dtype, and
//     the other operands are ints, floats or bools: the out-of-place result then
//     has %h0's dtype, as the in-place one does.
// The rewrite is applied to the copy of the graph that training compiles
// (training_graphs); inference graphs keep their in-place ops (no extra buffer).

#include <string>
#include <vector>

#include "xacc/backend/aten/AtenOps.h"
#include "xacc/ir/Graph.h"
#include "xacc/ir/Op.h"

namespace ir = xacc::ir;

namespace {

bool freshAtenResult(const ir::Value* v) {
  if (v->isParam()) return false;
  const ir::Node* p = v->definingNode();
  if (p->hasEffects() || p->numRegions() || p->opName().rfind("aten.", 0) != 0) return false;
  xacc::backend::aten::AtenOpSchemaInfo info;
  std::string error;
  if (!xacc::backend::aten::atenSchemaInfo(p->opName(), info, error) || info.effect) return false;
  for (const auto& r : info.returns)
    if (!r.aliasSet.empty() || r.written) return false;
  return true;
}

/// The out-of-place op of in-place node `n` when the rewrite is exact (see the
/// Note), else "".
std::string outOfPlaceName(const ir::Node* n) {
  const std::string& name = n->opName();
  if (name.rfind("aten.", 0) != 0 || !n->hasEffects() || n->numResults() != 2 || n->numOperands() < 2 ||
      n->numRegions())
    return "";
  std::string rest = name.substr(5);
  size_t dot = rest.find('.');
  std::string fn = rest.substr(0, dot);
  if (fn.size() < 2 || fn.back() != '_' || fn[fn.size() - 2] == '_') return "";  // `add_`, not `__iadd__`
  std::string out = "aten." + fn.substr(0, fn.size() - 1) + (dot == std::string::npos ? "" : rest.substr(dot));
  xacc::backend::aten::AtenOpSchemaInfo in, pure;
  std::string error;
  if (!xacc::backend::aten::atenSchemaInfo(name, in, error) || in.random || in.args.empty() ||
      !in.args[0].written)
    return "";
  if (!xacc::backend::aten::atenSchemaInfo(out, pure, error) || pure.effect || pure.random ||
      pure.args.size() != in.args.size() || pure.returns.size() != 1 || !pure.returns[0].aliasSet.empty())
    return "";
  for (size_t i = 0; i < in.args.size(); ++i) {
    if (in.args[i].name != pure.args[i].name || in.args[i].type != pure.args[i].type || pure.args[i].written)
      return "";
    if (i > 0 && in.args[i].written) return "";
  }
  return out;
}

bool rewrite(ir::Graph& g, ir::Node* n) {
  std::string out = outOfPlaceName(n);
  if (out.empty()) return false;
  ir::Value* self = n->operand(1);  // operand 0 is the token
  ir::Type t = self->type();
  if (!t.isTensor() || !ir::isFloatingDType(t.dtype()) || self->numUses() != 1 || !freshAtenResult(self))
    return false;
  for (size_t i = 2; i < n->numOperands(); ++i) {
    ir::Type o = n->operand(i)->type();
    if (o.isTensor() ? o.dtype() != t.dtype() : !(o.isInt() || o.isFloat() || o.kind() == ir::TypeKind::Bool))
      return false;
  }
  ir::Value* result = n->result(1);
  if (!result->type().isTensor() || result->type().dtype() != t.dtype()) return false;
  const ir::OpInfo* op = ir::OpRegistry::get().lookup(out);
  if (!op) return false;
  std::vector<ir::Value*> operands;
  for (size_t i = 1; i < n->numOperands(); ++i) operands.push_back(n->operand(i));
  ir::Node* m = g.create(op, operands, {result->type()}, n);
  m->attrs() = n->attrs();
  m->setLoc(n->loc());
  result->replaceAllUsesWith(m->result(0));
  n->result(0)->replaceAllUsesWith(n->operand(0));
  g.erase(n);
  return true;
}

}  // namespace

/// See Note [Fresh in-place ops in training graphs]; the number of nodes rewritten.
size_t functionalizeFreshInplace(ir::Graph& g) {
  size_t count = 0;
  for (ir::Node* n = g.front(); n;) {
    ir::Node* next = n->next();
    if (rewrite(g, n)) ++count;
    n = next;
  }
  return count;
}
