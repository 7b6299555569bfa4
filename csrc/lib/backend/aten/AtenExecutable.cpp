// Preparing and running captured graphs on the c10 dispatcher. See
// AtenExecutable.h. Argument binding reuses the ATen family's rules (Note [ATen
// operands and attributes]) so a node means the same here as in the reference
// interpreter; only the per-call work differs: constants are converted once.
#include "xacc/support/TestFault.h"
#include "xacc/backend/aten/AtenExecutable.h"

#include <string_view>
#include <unordered_map>

#include <ATen/ScalarOps.h>

#include "AtenOp.h"
#include "xacc/backend/aten/TensorDatum.h"
#include "xacc/ir/Interpreter.h"

namespace xacc::backend::aten {

struct AtenExecutable::Step {
  enum class Kind : uint8_t { Aten, Const, ListGet, TupleGet, If, Loop, Generic } kind = Kind::Generic;
  const aten::AtenOp* op = nullptr;
  const ir::Node* node = nullptr;
  // Aten: the argument stack with constants in place, and where operands go.
  struct Fill {
    int pos = 0;
    enum class Kind : uint8_t { Single, List, OptList, WrapScalar } kind = Kind::Single;
    std::vector<int> slots;
  };
  std::vector<c10::IValue> tmpl;
  std::vector<Fill> fills;
  std::vector<int> operands;  ///< Generic/ListGet/TupleGet operand slots
  std::vector<int> results;   ///< result slots (token included for effects)
  /// Slots whose last reader is this step (or, never read, whose writer it is):
  /// dropped once the step has read them. See Note [Executor liveness].
  std::vector<int> release;
  c10::IValue constant;       ///< Const
  int64_t index = 0;          ///< TupleGet
  bool fault = false;         ///< See Note [Test fault injection]
  aten::DirectCall direct;    ///< Aten: Note [Direct ATen calls]; kind None: the boxed call
  /// If: the ^then and ^else arms; Loop: ^cond and ^body (prepared once, run on demand).
  std::vector<std::unique_ptr<AtenExecutable>> regions;
};

AtenExecutable::~AtenExecutable() = default;

namespace {

/// A step with a direct call (Note [Direct ATen calls]) on tensor slots. False
/// with `error` empty: an operand is not a tensor this time; take the boxed call.
bool runDirectStep(const AtenExecutable::Step& s, std::vector<c10::IValue>& slots, std::string& error) {
  at::Tensor t[3];
  size_t k = 0;
  for (const auto& f : s.fills) {
    const c10::IValue& v = slots[f.slots[0]];
    if (!v.isTensor() || k == 3) return false;
    t[k++] = v.toTensor();
  }
  try {
    at::Tensor r = aten::runDirect(s.direct, t);
    if (s.fault) r = r.add(c10::Scalar(1));  // See Note [Test fault injection]
    slots[s.results[0]] = std::move(r);
  } catch (const std::exception& e) {
    error = aten::qualifiedName(s.op->schema()) + ": " + aten::exceptionMessage(e);
    aten::noteOpError(std::current_exception(), error);  // See Note [ATen error translation]
    return false;
  }
  return true;
}

}  // namespace

size_t AtenExecutable::numSteps() const { return steps_.size(); }

namespace {

bool isTensorListArg(const c10::Argument& arg, bool& optElems) {
  c10::TypePtr t = arg.real_type();
  if (t->kind() == c10::TypeKind::OptionalType) t = t->expectRef<c10::OptionalType>().getElementType();
  if (t->kind() != c10::TypeKind::ListType) return false;
  c10::TypePtr e = t->expectRef<c10::ListType>().getElementType();
  optElems = e->kind() == c10::TypeKind::OptionalType;
  if (optElems) e = e->expectRef<c10::OptionalType>().getElementType();
  return e->kind() == c10::TypeKind::TensorType;
}

bool isTensorArg(const c10::Argument& arg) {
  c10::TypePtr t = arg.real_type();
  if (t->kind() == c10::TypeKind::OptionalType) t = t->expectRef<c10::OptionalType>().getElementType();
  return t->kind() == c10::TypeKind::TensorType;
}

bool attrToConstant(const ir::Attr& a, ir::Type t, c10::IValue& out) {
  switch (a.kind()) {
    case ir::Attr::Kind::None: out = c10::IValue(); return true;
    case ir::Attr::Kind::Int: out = a.getInt(); return true;
    case ir::Attr::Kind::Float: out = a.getFloat(); return true;
    case ir::Attr::Kind::Bool: out = a.getBool(); return true;
    case ir::Attr::Kind::Str: out = a.getStr(); return true;
    default: return false;
  }
}

}  // namespace

std::unique_ptr<AtenExecutable> AtenExecutable::create(const ir::Graph& g, std::string& error) {
  std::unique_ptr<AtenExecutable> exe(new AtenExecutable());
  const std::string fault = support::testFaultOp();  // Note [Test fault injection]
  exe->graph_ = &g;
  std::unordered_map<const ir::Value*, int> slot;
  int next = 0;
  for (size_t i = 0; i < g.numParams(); ++i) slot[g.param(i)] = next++;
  std::vector<int> lastRead;  // per slot: the last step that reads it, -1 none
  std::vector<int> writer(next, -1);  // per slot: the step that writes it, -1 a param
  for (ir::Node* n : g) {
    Step s;
    s.node = n;
    const std::string& name = n->opName();
    std::vector<int> ops;
    for (ir::Value* v : n->operands()) {
      auto it = slot.find(v);
      if (it == slot.end()) {
        error = "operand of '" + name + "' is not defined before use";
        return nullptr;
      }
      ops.push_back(it->second);
    }
    const int stepIndex = static_cast<int>(exe->steps_.size());
    lastRead.resize(next + n->numResults(), -1);
    for (int o : ops) lastRead[o] = stepIndex;
    for (size_t r = 0; r < n->numResults(); ++r) {
      slot[n->result(r)] = next;
      writer.push_back(stepIndex);
      s.results.push_back(next++);
    }
    if (n->numRegions() > 0) {
      if (!n->op().is(ir::CoreOp::If) && !n->op().is(ir::CoreOp::Loop)) {
        error = "the ATen executor does not run '" + name + "' (an op with regions)";
        return nullptr;
      }
      s.kind = n->op().is(ir::CoreOp::If) ? Step::Kind::If : Step::Kind::Loop;
      s.operands = ops;
      for (const auto& r : n->regions()) {
        auto sub = create(*r, error);
        if (!sub) {
          error = name + " region ^" + r->label() + ": " + error;
          return nullptr;
        }
        s.regions.push_back(std::move(sub));
      }
    } else if (name.rfind("aten.", 0) == 0) {
      const aten::AtenOp* op = aten::resolveAtenOp(name, error);
      if (!op) return nullptr;
      s.kind = Step::Kind::Aten;
      s.op = op;
      s.fault = !fault.empty() && fault == name;
      size_t first = op->effect ? 1 : 0;
      std::vector<aten::OperandClass> classes;
      for (size_t i = first; i < n->numOperands(); ++i)
        classes.push_back(aten::classOf(n->operand(i)->type()));
      std::vector<aten::ArgSource> plan;
      if (!aten::bindArguments(op->schema(), classes, n->attrs(), plan, error)) return nullptr;
      const auto& args = op->schema().arguments();
      s.tmpl.resize(args.size());
      for (size_t i = 0; i < args.size(); ++i) {
        const aten::ArgSource& src = plan[i];
        switch (src.kind) {
          case aten::ArgSource::Attr:
            if (!aten::attrToIValue(*src.attr, args[i], c10::Device(c10::kCPU), s.tmpl[i], error))
              return nullptr;
            break;
          case aten::ArgSource::Default: s.tmpl[i] = *args[i].default_value(); break;
          case aten::ArgSource::None: break;
          case aten::ArgSource::Operand: {
            Step::Fill f;
            f.pos = static_cast<int>(i);
            f.slots.push_back(ops[first + src.first]);
            bool tensorArg = isTensorArg(args[i]);
            bool optElems = false;
            if (isTensorListArg(args[i], optElems)) {
              error = name + ": list operands for '" + args[i].name() + "' are not supported";
              return nullptr;
            }
            if (tensorArg && !n->operand(first + src.first)->type().isTensor() &&
                !n->operand(first + src.first)->type().isAny())
              f.kind = Step::Fill::Kind::WrapScalar;
            s.fills.push_back(std::move(f));
            break;
          }
          case aten::ArgSource::Operands: {
            Step::Fill f;
            f.pos = static_cast<int>(i);
            bool optElems = false;
            isTensorListArg(args[i], optElems);
            f.kind = optElems ? Step::Fill::Kind::OptList : Step::Fill::Kind::List;
            for (int k = 0; k < src.count; ++k) f.slots.push_back(ops[first + src.first + k]);
            s.fills.push_back(std::move(f));
            break;
          }
        }
      }
      // Note [Direct ATen calls]: every operand a tensor of its own Tensor argument, in order.
      std::vector<size_t> positions;
      bool tensorsOnly = !op->effect && op->schema().returns().size() == 1;
      for (const Step::Fill& f : s.fills) {
        tensorsOnly &= f.kind == Step::Fill::Kind::Single && f.slots[0] == ops[first + positions.size()] &&
                       n->operand(first + positions.size())->type().isTensor() &&
                       args[size_t(f.pos)].real_type()->kind() == c10::TypeKind::TensorType;
        positions.push_back(size_t(f.pos));
      }
      if (tensorsOnly && positions.size() + first == n->numOperands())
        aten::prepareDirect(*op, s.tmpl, positions, s.direct);
    } else if (n->op().is(ir::CoreOp::Const) && n->attr("value") &&
               attrToConstant(*n->attr("value"), n->result(0)->type(), s.constant)) {
      s.kind = Step::Kind::Const;
    } else if (n->op().is(ir::CoreOp::TupleGet) && n->attr("index")) {
      s.kind = Step::Kind::TupleGet;
      s.index = n->attr("index")->getInt();
      s.operands = ops;
    } else if (n->op().is(ir::CoreOp::ListGet)) {
      s.kind = Step::Kind::ListGet;
      s.operands = ops;
    } else {
      if (!n->op().interp) {
        error = "no way to execute '" + name + "'";
        return nullptr;
      }
      s.kind = Step::Kind::Generic;
      s.operands = ops;
    }
    exe->steps_.push_back(std::move(s));
  }
  for (ir::Value* v : g.results()) exe->resultSlots_.push_back(slot.at(v));
  exe->numSlots_ = next;
  // Liveness, once per graph (Note [Executor liveness]): each slot that is not a
  // graph result is dropped by its last reader, or by its writer when nothing
  // reads it; a parameter nothing reads is never taken from the caller.
  lastRead.resize(next, -1);
  std::vector<bool> isResult(next, false);
  for (int sl : exe->resultSlots_) isResult[sl] = true;
  exe->paramRead_.assign(g.numParams(), false);
  for (int sl = 0; sl < next; ++sl) {
    if (isResult[sl]) {
      if (writer[sl] < 0) exe->paramRead_[sl] = true;
      continue;
    }
    if (lastRead[sl] >= 0) {
      exe->steps_[lastRead[sl]].release.push_back(sl);
      if (writer[sl] < 0) exe->paramRead_[sl] = true;
    } else if (writer[sl] >= 0) {
      exe->steps_[writer[sl]].release.push_back(sl);
    }
  }
  return exe;
}

size_t AtenExecutable::numReleased() const {
  size_t n = 0;
  for (const Step& s : steps_) n += s.release.size();
  return n;
}

namespace {

bool runGeneric(const ir::Node& n, std::vector<c10::IValue>& slots, const std::vector<int>& ops,
                const std::vector<int>& results, std::string& error) {
  thread_local support::DiagnosticEngine diag;
  thread_local ir::Interpreter interp(diag);
  std::vector<ir::Datum> args, outs;
  for (size_t i = 0; i < ops.size(); ++i) {
    ir::Datum d;
    if (n.operand(i)->type().isToken()) {
      d = ir::Datum::token();
    } else if (!aten::toDatum(slots[ops[i]], d, error)) {
      return false;
    }
    args.push_back(std::move(d));
  }
  diag.clear();
  if (!n.op().interp(interp, n, args, outs)) {
    error = diag.diagnostics().empty() ? "'" + n.opName() + "' failed" : diag.diagnostics().back().message;
    return false;
  }
  for (size_t r = 0; r < results.size() && r < outs.size(); ++r) {
    if (outs[r].kind() == ir::DKind::Token) {
      slots[results[r]] = c10::IValue();
    } else if (!aten::toIValue(outs[r], slots[results[r]], error)) {
      return false;
    }
  }
  return true;
}

}  // namespace

bool AtenExecutable::run(std::vector<c10::IValue>& inputs, std::vector<c10::IValue>& outputs,
                         std::string& error) const {
  std::vector<c10::IValue> slots(numSlots_);
  for (size_t i = 0; i < inputs.size() && i < paramRead_.size(); ++i)
    if (paramRead_[i]) slots[i] = std::move(inputs[i]);
  torch::jit::Stack stack;
  // Drops the slots step `s` was the last to read. See Note [Executor liveness].
  auto release = [&slots](const Step& s) {
    for (int sl : s.release) slots[sl] = c10::IValue();
  };
  for (const Step& s : steps_) {
    switch (s.kind) {
      case Step::Kind::Const: slots[s.results[0]] = s.constant; break;
      case Step::Kind::TupleGet: {
        const c10::IValue& t = slots[s.operands[0]];
        if (t.isTuple()) slots[s.results[0]] = t.toTupleRef().elements()[s.index];
        else if (t.isList()) slots[s.results[0]] = t.toListRef()[s.index];
        else {
          error = "tuple.get on a non-tuple";
          return false;
        }
        break;
      }
      case Step::Kind::ListGet: {
        const c10::IValue& l = slots[s.operands[0]];
        const c10::IValue& i = slots[s.operands[1]];
        if (!l.isList() || !i.isInt()) {
          error = "list.get on a non-list";
          return false;
        }
        auto items = l.toListRef();
        int64_t k = i.toInt();
        if (k < 0) k += static_cast<int64_t>(items.size());
        if (k < 0 || k >= static_cast<int64_t>(items.size())) {
          error = "list index out of range";
          return false;
        }
        slots[s.results[0]] = items[k];
        break;
      }
      case Step::Kind::Generic:
        if (!runGeneric(*s.node, slots, s.operands, s.results, error)) return false;
        break;
      case Step::Kind::If: {
        const c10::IValue& c = slots[s.operands[0]];
        if (!c.isBool()) {
          error = "ctrl.if: the condition is not a bool";
          return false;
        }
        std::vector<c10::IValue> in, out;
        in.reserve(s.operands.size() - 1);
        for (size_t i = 1; i < s.operands.size(); ++i) in.push_back(slots[s.operands[i]]);
        const bool taken = c.toBool();
        release(s);  // the arm holds what it reads; it drops each at its own last use
        if (!s.regions[taken ? 0 : 1]->run(in, out, error)) return false;
        for (size_t r = 0; r < s.results.size() && r < out.size(); ++r) slots[s.results[r]] = std::move(out[r]);
        break;
      }
      case Step::Kind::Loop: {
        std::vector<c10::IValue> vals, c, next;
        vals.reserve(s.operands.size());
        for (int o : s.operands) vals.push_back(slots[o]);
        release(s);
        for (;;) {
          std::vector<c10::IValue> in = vals;
          if (!s.regions[0]->run(in, c, error)) return false;
          if (c.empty() || !c[0].isBool()) {
            error = "ctrl.loop: the condition is not a bool";
            return false;
          }
          if (!c[0].toBool()) break;
          // The body replaces every carried value: it takes the only copy, so an
          // iteration's values die inside the body at their last use.
          in = std::move(vals);
          if (!s.regions[1]->run(in, next, error)) return false;
          vals = std::move(next);
        }
        for (size_t r = 0; r < s.results.size() && r < vals.size(); ++r) slots[s.results[r]] = std::move(vals[r]);
        break;
      }
      case Step::Kind::Aten: {
        if (s.direct.kind != aten::DirectCall::Kind::None && runDirectStep(s, slots, error)) break;
        if (!error.empty()) return false;
        stack.assign(s.tmpl.begin(), s.tmpl.end());
        for (const Step::Fill& f : s.fills) {
          switch (f.kind) {
            case Step::Fill::Kind::Single: stack[f.pos] = slots[f.slots[0]]; break;
            case Step::Fill::Kind::WrapScalar: {
              const c10::IValue& v = slots[f.slots[0]];
              at::Tensor t = at::scalar_to_tensor(v.toScalar());
              t.unsafeGetTensorImpl()->set_wrapped_number(true);
              stack[f.pos] = std::move(t);
              break;
            }
            case Step::Fill::Kind::List: {
              c10::List<at::Tensor> l;
              l.reserve(f.slots.size());
              for (int k : f.slots) l.push_back(slots[k].toTensor());
              stack[f.pos] = std::move(l);
              break;
            }
            case Step::Fill::Kind::OptList: {
              c10::List<std::optional<at::Tensor>> l;
              l.reserve(f.slots.size());
              for (int k : f.slots)
                l.push_back(slots[k].isTensor() ? std::optional<at::Tensor>(slots[k].toTensor())
                                                : std::nullopt);
              stack[f.pos] = std::move(l);
              break;
            }
          }
        }
        try {
          s.op->handle.callBoxed(stack);
        } catch (const std::exception& e) {
          error = aten::qualifiedName(s.op->schema()) + ": " + aten::exceptionMessage(e);
          aten::noteOpError(std::current_exception(), error);  // See Note [ATen error translation]
          return false;
        }
        if (s.fault && !stack.empty() && stack[0].isTensor())
          stack[0] = stack[0].toTensor().add(c10::Scalar(1));  // See Note [Test fault injection]
        size_t r = 0;
        if (s.op->effect) slots[s.results[r++]] = c10::IValue();
        for (size_t k = 0; k < stack.size() && r < s.results.size(); ++k, ++r)
          slots[s.results[r]] = std::move(stack[k]);
        stack.clear();  // returns no result reads (and their aliases) die here too
        break;
      }
    }
    release(s);  // again after If/Loop: a result nothing reads is written by the region
  }
  outputs.clear();
  outputs.reserve(resultSlots_.size());
  for (int sl : resultSlots_) outputs.push_back(slots[sl]);
  return true;
}

}  // namespace xacc::backend::aten
