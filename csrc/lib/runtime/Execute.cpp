// The boxed interpreter loop (execute) over datum slots, and the calls that
// push its frames. Scalar callees run in the unboxed loop (ExecuteRaw.cpp).
#include "RuntimeImpl.h"

#include "xacc/ir/Builtins.h"
#include "xacc/ir/List.h"

using xacc::support::coreCode;
using xacc::support::CoreDiag;

namespace xacc::runtime {

bool Runtime::pushCall(const Program& p, ir::Datum* args, size_t nargs, size_t retBase,
                       uint32_t retCount, bool tail, const ir::Node* site, bool movable) {
  if (nargs != p.numParams) {
    if (site)
      return fail(*site, coreCode(CoreDiag::ArgumentCountMismatch),
                  "'" + p.graph->name() + "' expects " + std::to_string(p.numParams) +
                      " arguments, got " + std::to_string(nargs));
    return false;
  }
  ++stats_.calls;
  if (tail) {
    // Replace the current frame: its caller receives our results directly.
    ++stats_.tailCalls;
    Frame& f = frames_.back();
    if (movable) {
      // The arguments live outside the frame being replaced.
      stack_.shrink(f.base);
      stack_.reserveMore(p.numSlots);
      ir::Datum* slots = stack_.claimReserved(p.numSlots);
      for (size_t i = 0; i < nargs; ++i) slots[i] = std::move(args[i]);
      f.prog = &p;
      f.pc = 0;
      return true;
    }
    // The arguments may live in the frame being replaced: park them first.
    scratch_.assign(args, args + nargs);
    stack_.shrink(f.base);
    stack_.reserveMore(p.numSlots);
    ir::Datum* slots = stack_.claimReserved(p.numSlots);
    for (size_t i = 0; i < nargs; ++i) slots[i] = std::move(scratch_[i]);
    scratch_.clear();
    f.prog = &p;
    f.pc = 0;
    return true;
  }
  if (frames_.size() >= maxFrames_) {
    if (site)
      return fail(*site, coreCode(CoreDiag::StackOverflow),
                  "stack overflow: more than " + std::to_string(maxFrames_) + " nested calls");
    return false;
  }
  if (bool overflow = false; checkpoint(frames_.size()) && stopSlow(overflow)) {
    if (!overflow) return false;
    std::string message = "stack overflow: more than " + std::to_string(maxFrames_) +
                          " nested calls (all parallel tasks together)";
    if (site)
      return fail(*site, coreCode(CoreDiag::StackOverflow), std::move(message));
    const ir::Graph& g = *p.graph;
    diag_.error(coreCode(CoreDiag::StackOverflow),
                g.front() ? g.front()->loc() : support::SourceLoc{}, std::move(message));
    return false;
  }
  size_t base = stack_.size();
  stack_.resize(base + p.numSlots);
  ir::Datum* slots = stack_.data() + base;
  for (size_t i = 0; i < nargs; ++i) slots[i] = args[i];
  frames_.push_back(Frame{&p, 0, base, retBase, retCount, site});
  if (frames_.size() > stats_.maxDepth) stats_.maxDepth = frames_.size();
  return true;
}

// The interpreter loop. The current frame's program, code pointer and slot
// base live in locals; they are reloaded from frames_.back() whenever a frame
// is pushed or popped, and the slot base (`R`) also after anything that may
// grow the slot array (calls, re-entrant rules such as builtins running
// closures). Every program ends with Ret, so the loop needs no end check.
bool Runtime::execute(size_t baseDepth) {
  std::vector<ir::Datum> args, results;
  if (frames_.size() <= baseDepth) return true;
  Frame* f;
  const Program* p;
  const Instr* code;
  const Instr* ip;
  const uint32_t* opnd;
  ir::Datum* R;
  auto load = [&] {
    f = &frames_.back();
    p = f->prog;
    code = p->code.data();
    ip = code + f->pc;
    opnd = p->operandSlots.data();
    R = stack_.data() + f->base;
  };
  // After C++ re-entry (frames_ and stack_ may have been reallocated).
  auto reload = [&] {
    f = &frames_.back();
    R = stack_.data() + f->base;
  };
  // An op's rule, or a builtin resolved at compile time (no registry lookup).
  auto generic = [&](const Instr& in) {
    const ir::Node& n = *in.node;
    f->pc = uint32_t(ip - code);
    const ir::Builtin* b = in.builtin;
    if (!b && !n.op().interp)
      return fail(n, coreCode(CoreDiag::NoExecutionRule),
                  "no runtime rule for '" + n.opName() + "'");
    bool effect = b && n.op().is(ir::CoreOp::BuiltinEffect);
    args.clear();
    const uint32_t* ops = opnd + in.opBegin;
    for (uint32_t i = effect ? 1 : 0; i < in.opCount; ++i) args.push_back(R[ops[i]]);
    results.clear();
    if (effect) results.push_back(ir::Datum::token());
    // The rule may re-enter the runtime (builtins applying closures), which
    // can reallocate the slots and frames: reload afterwards.
    uint32_t dstSlot = in.dst;
    if (!(b ? b->fn(*ctx_, n, args, results) : n.op().interp(*ctx_, n, args, results))) return false;
    reload();
    if (results.size() != n.numResults())
      return fail(n, coreCode(CoreDiag::WrongResultCount),
                  "'" + n.opName() + "' produced " + std::to_string(results.size()) +
                      " values, expected " + std::to_string(n.numResults()));
    for (size_t r = 0; r < results.size(); ++r) R[dstSlot + r] = std::move(results[r]);
    return true;
  };
  load();
  for (;;) {
    const Instr& in = *ip++;
    ir::Datum* dst = R + in.dst;
    // Second integer operand: an immediate folded from a constant, or a slot.
#define XACC_I1 (in.hasImm ? in.imm : R[in.b].asInt())
#define XACC_ARITH_I(C, OP) \
  case Code::C: dst->setInt(int64_t(uint64_t(R[in.a].asInt()) OP uint64_t(XACC_I1))); break;
#define XACC_CMP_I(C, OP) \
  case Code::C: dst->setBool(R[in.a].asInt() OP XACC_I1); break;
#define XACC_BR(C, OP)                               \
  case Code::C: {                                    \
    bool c = R[in.a].asInt() OP XACC_I1;             \
    dst->setBool(c);                                 \
    if (c) ++ip;                                     \
    else ip = code + in.jump;                        \
    break;                                           \
  }
#define XACC_ARITH_F(C, OP) \
  case Code::C: dst->setFloat(R[in.a].asFloat() OP R[in.b].asFloat()); break;
#define XACC_CMP_F(C, OP) \
  case Code::C: dst->setBool(R[in.a].asFloat() OP R[in.b].asFloat()); break;
    switch (in.code) {
      case Code::Const: *dst = in.constant; break;
      XACC_RT_INT_ARITH(XACC_ARITH_I)
      XACC_RT_INT_CMP(XACC_CMP_I)
      XACC_RT_INT_BRANCH(XACC_BR)
      XACC_RT_FLOAT_ARITH(XACC_ARITH_F)
      XACC_RT_FLOAT_CMP(XACC_CMP_F)
#undef XACC_ARITH_I
#undef XACC_CMP_I
#undef XACC_BR
#undef XACC_ARITH_F
#undef XACC_CMP_F
      case Code::DivI:
      case Code::RemI: {
        int64_t p0 = R[in.a].asInt(), q = XACC_I1;
        if (q == 0) {
          f->pc = uint32_t(ip - code);
          return fail(*in.node, coreCode(CoreDiag::IntegerDivisionByZero),
                      "integer division by zero");
        }
        dst->setInt(intDivRem(in.code == Code::DivI, p0, q));
        break;
      }
#undef XACC_I1
      case Code::Not: dst->setBool(!R[in.a].asBool()); break;
      case Code::And: dst->setBool(R[in.a].asBool() && R[in.b].asBool()); break;
      case Code::Or: dst->setBool(R[in.a].asBool() || R[in.b].asBool()); break;
      case Code::Select: *dst = R[in.a].asBool() ? R[in.b] : R[opnd[in.opBegin + 2]]; break;
      case Code::Ret: {
        // Move the results into the caller's slots and drop the frame.
        size_t base = f->base;
        ir::Datum* out = stack_.data() + f->retBase;
        const uint32_t* rs = p->resultSlots.data();
        if (p->distinctResults)
          for (uint32_t i = 0, n = f->retCount; i < n; ++i) out[i] = std::move(R[rs[i]]);
        else
          for (uint32_t i = 0, n = f->retCount; i < n; ++i) out[i] = R[rs[i]];
        frames_.pop_back();
        if (p->scalarOnly) stack_.shrinkScalars(base);
        else stack_.shrink(base);
        if (frames_.size() <= baseDepth) return true;
        load();
        break;
      }
      case Code::Call: {
        const Program* cp = in.prog.get();
        if (!cp) in.prog.set(cp = &programFor(*in.target, p->parallel));
        Program::Raw cr = cp->raw.get();
        if (cr != Program::Raw::No && in.opCount == cp->numParams &&
            (cr == Program::Raw::Yes || rawReady(*cp))) {
          // Scalar code (and everything it calls) runs unboxed; it cannot
          // re-enter, so our slots stay where they are.
          f->pc = uint32_t(ip - code);
          if (!runRaw(*cp, R, opnd + in.opBegin, dst, in.node)) return false;
          break;
        }
        if (!in.tail && in.opCount == cp->numParams && frames_.size() < maxFrames_ &&
            !checkpoint(frames_.size())) {
          // Fast path: the callee's slots are constructed in place, its
          // parameters copied straight from our slots.
          size_t nb = stack_.size();
          stack_.reserveMore(cp->numSlots);
          R = stack_.data() + f->base;
          const uint32_t* ops = opnd + in.opBegin;
          ir::Datum* slots = stack_.claimReserved(cp->numSlots);
          for (uint32_t i = 0; i < in.opCount; ++i) slots[i] = R[ops[i]];
          f->pc = uint32_t(ip - code);
          frames_.push_back(Frame{cp, 0, nb, f->base + in.dst, in.nres, in.node});
          ++stats_.calls;
          if (frames_.size() > stats_.maxDepth) stats_.maxDepth = frames_.size();
          load();
          break;
        }
        args.clear();
        const uint32_t* ops = opnd + in.opBegin;
        if (in.tail) {
          // The frame dies: move its values out (copy a slot passed again
          // later), so shared arrays see no refcount traffic per iteration.
          for (uint32_t i = 0; i < in.opCount; ++i) {
            bool again = std::find(ops + i + 1, ops + in.opCount, ops[i]) != ops + in.opCount;
            args.push_back(again ? R[ops[i]] : std::move(R[ops[i]]));
          }
        } else {
          for (uint32_t i = 0; i < in.opCount; ++i) args.push_back(R[ops[i]]);
        }
        f->pc = uint32_t(ip - code);
        if (!pushCall(*cp, args.data(), args.size(), f->base + in.dst, in.nres, in.tail, in.node,
                      /*movable=*/true))
          return false;
        load();
        break;
      }
      case Code::ParCall:
        // Sequential scheduler or deep enough: fall through to the calls.
        if (spawnsHere()) {
          uint32_t pc = uint32_t(ip - code);
          f->pc = pc;
          if (!runParallelGroup(*p, pc, f->base, in.jump)) return false;
          reload();
          ip = code + pc + in.jump;  // skip the group's calls
        }
        break;
      case Code::Branch:
        if (R[in.a].kind() != ir::DKind::Bool) {
          f->pc = uint32_t(ip - code);
          return fail(*in.node, coreCode(CoreDiag::OperandKindMismatch),
                      "condition of 'ctrl.if' is not a bool");
        }
        if (!R[in.a].asBool()) ip = code + in.jump;
        break;
      case Code::Move: *dst = R[in.a]; break;
      case Code::Jump: ip = code + in.jump; break;
      case Code::Apply: {
        const ir::Datum& fn = R[in.a];
        f->pc = uint32_t(ip - code);
        if (fn.kind() != ir::DKind::Func)
          return fail(*in.node, coreCode(CoreDiag::NotAFunction), "called value is not a function");
        args = fn.funcCaptures();
        const uint32_t* ops = opnd + in.opBegin;
        for (uint32_t i = 1; i < in.opCount; ++i) args.push_back(R[ops[i]]);
        const Program& cp = programFor(*fn.funcGraph());
        if (!pushCall(cp, args.data(), args.size(), f->base + in.dst, in.nres, in.tail, in.node,
                      /*movable=*/true))
          return false;
        load();
        break;
      }
      case Code::FuncRef: {
        const ir::Graph* g = in.target;
        if (!g) g = module_.lookup(in.node->attr("callee")->getSymbol());
        if (!g) {
          f->pc = uint32_t(ip - code);
          return fail(*in.node, coreCode(CoreDiag::UnknownGraph),
                      "unknown graph @" + in.node->attr("callee")->getSymbol());
        }
        std::vector<ir::Datum> caps;
        const uint32_t* ops = opnd + in.opBegin;
        caps.reserve(in.opCount);
        for (uint32_t i = 0; i < in.opCount; ++i) caps.push_back(R[ops[i]]);
        *dst = ir::Datum::func(g, std::move(caps));
        break;
      }
      case Code::Loop: {
        // Loops run their regions to completion on nested frames (loops do not
        // recurse by themselves, so this uses bounded C++ stack).
        f->pc = uint32_t(ip - code);
        if (nesting_ + 1 >= kMaxNesting)
          return fail(*in.node, coreCode(CoreDiag::StackOverflow),
                      "stack overflow: more than " + std::to_string(kMaxNesting) +
                          " nested loop levels");
        std::vector<ir::Datum> vals;
        const uint32_t* ops = opnd + in.opBegin;
        for (uint32_t i = 0; i < in.opCount; ++i) vals.push_back(R[ops[i]]);
        const ir::Node* node = in.node;
        uint32_t dstSlot = in.dst, nres = in.nres;
        for (;;) {
          std::vector<ir::Datum> c, next;
          if (!run(*node->region(0), vals, c)) return false;
          if (c.empty() || c[0].kind() != ir::DKind::Bool) {
            reload();
            return fail(*node, coreCode(CoreDiag::OperandKindMismatch),
                        "loop condition is not a bool");
          }
          if (!c[0].asBool()) break;
          if (!run(*node->region(1), vals, next)) return false;
          vals = std::move(next);
        }
        reload();
        for (uint32_t i = 0; i < nres; ++i) R[dstSlot + i] = std::move(vals[i]);
        break;
      }
      case Code::ListGet: {
        const ir::Datum& l = R[in.a];
        const ir::Datum& x = R[in.b];
        if (l.kind() == ir::DKind::List && x.kind() == ir::DKind::Int) {
          const ir::ListObject* items = ir::listObj(l);
          int64_t i = x.asInt();
          switch (items->form()) {  // Note [Compact arrays]
            case ir::ListObject::Rep::Int:
              if (i >= 0 && uint64_t(i) < items->ints.size()) {
                dst->setInt(items->ints[size_t(i)]);
                continue;
              }
              break;
            case ir::ListObject::Rep::Float:
              if (i >= 0 && uint64_t(i) < items->reals.size()) {
                dst->setFloat(items->reals[size_t(i)]);
                continue;
              }
              break;
            case ir::ListObject::Rep::Boxed:
              if (i >= 0 && uint64_t(i) < items->items.size()) {
                *dst = items->items[size_t(i)];
                continue;
              }
              break;
          }
        }
        if (!generic(in)) return false;
        break;
      }
      case Code::Len: {
        const ir::Datum& x = R[in.a];
        if (x.kind() == ir::DKind::List) dst->setInt(int64_t(ir::listObj(x)->size()));
        else if (!generic(in)) return false;
        break;
      }
      case Code::Builtin:
      case Code::Generic:
        if (!generic(in)) return false;
        break;
    }
  }
}
}  // namespace xacc::runtime
