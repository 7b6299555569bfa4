// The unboxed interpreter loop (runRaw) over 8-byte slots, and which programs
// may run in it (rawReady).
#include "RuntimeImpl.h"

using xacc::support::coreCode;
using xacc::support::CoreDiag;

namespace xacc::runtime {

bool Runtime::rawReady(const Program& p) {
  Program::Raw known = p.raw.get();
  if (known != Program::Raw::Unknown) return known == Program::Raw::Yes;
  // Everything reachable through direct calls must be rawable; then each of
  // them is raw too (its reachable set is a subset).
  std::vector<const Program*> work{&p}, seen{&p};
  for (size_t k = 0; k < work.size(); ++k) {
    const Program* q = work[k];
    Program::Raw qr = q->raw.get();
    if (qr == Program::Raw::Yes) continue;
    if (!q->rawable || qr == Program::Raw::No) {
      p.raw.set(Program::Raw::No);
      return false;
    }
    for (const Instr& in : q->code) {
      if (in.code != Code::Call) continue;
      const Program* cp = in.prog.get();
      if (!cp) in.prog.set(cp = &programFor(*in.target, q->parallel));
      if (in.opCount != cp->numParams || in.nres != cp->resultSlots.size()) {
        p.raw.set(Program::Raw::No);
        return false;
      }
      if (std::find(seen.begin(), seen.end(), cp) == seen.end()) {
        seen.push_back(cp);
        work.push_back(cp);
      }
    }
  }
  for (const Program* q : seen) q->raw.set(Program::Raw::Yes);
  return true;
}

// The unboxed interpreter: the same instructions as execute() over 8-byte
// slots (ints, floats, bools as 0/1, null and tokens as 0), on its own
// explicit frame stack. Only rawReady programs get here, so there are no
// heap values, no generic rules and no re-entry.
bool Runtime::runRaw(const Program& entry0, const ir::Datum* args, const uint32_t* ops,
                     ir::Datum* out, const ir::Node* site) {
  // This runtime's depth in the task tree does not change while this loop
  // runs (tasks run in nested calls), so either every group in it spawns or
  // none does: then it runs the sequential form, with no ParCall to step over.
  const Program* ep = &entry0;
  if (entry0.parallel && !spawnsHere()) {
    const Program& s = seqOf(entry0);
    if (&s != ep && (s.raw.get() == Program::Raw::Yes || rawReady(s))) ep = &s;
  }
  const Program& entry = *ep;
  auto need = [&](size_t n) {
    if (rawStack_.size() < n) rawStack_.resize(std::max(n, rawStack_.size() * 2 + 1024));
  };
  size_t frames0 = rawFrames_.size();
  // A leaf (no calls; closures that builtins run per element) runs on a few
  // slots of the C++ stack, without touching the raw frame stack.
  RawSlot local[32];
  bool leafMode = entry.leaf && entry.numSlots <= 32;
  size_t base = 0;
  RawSlot* S = local;
  if (!leafMode) {
    base = rawFrames_.empty() ? 0 : rawFrames_.back().base + rawFrames_.back().prog->numSlots;
    need(base + entry.numSlots);
    S = rawStack_.data();
  }
  for (uint32_t i = 0; i < entry.numParams; ++i) {
    const ir::Datum& d = ops ? args[ops[i]] : args[i];
    RawSlot& r = S[base + i];
    switch (entry.paramKinds[i]) {
      case ir::TypeKind::Float: r.f = d.asFloat(); break;
      case ir::TypeKind::Bool: r.i = d.asBool() ? 1 : 0; break;
      case ir::TypeKind::Int: r.i = d.asInt(); break;
      default: r.i = 0; break;
    }
  }
  if (!leafMode) rawFrames_.push_back(RawFrame{&entry, nullptr, base, 0, site});
  const Program* p = &entry;
  const Instr* code = p->code.data();
  const Instr* ip = code;
  const uint32_t* opnd = p->operandSlots.data();
  RawSlot* F = S + base;
  size_t top = base + entry.numSlots;
  uint64_t calls = 0, tails = 0;
  auto enter = [&](const Program* cp) {
    p = cp;
    code = ip = cp->code.data();
    opnd = cp->operandSlots.data();
  };
  for (;;) {
    const Instr& in = *ip++;
    RawSlot* D = F + in.dst;
#define XACC_I1 (in.hasImm ? in.imm : F[in.b].i)
#define XACC_ARITH_I(C, OP) \
  case Code::C: D->i = int64_t(uint64_t(F[in.a].i) OP uint64_t(XACC_I1)); break;
#define XACC_CMP_I(C, OP) \
  case Code::C: D->i = F[in.a].i OP XACC_I1; break;
#define XACC_BR(C, OP)                 \
  case Code::C: {                      \
    bool c = F[in.a].i OP XACC_I1;     \
    D->i = c;                          \
    if (c) ++ip;                       \
    else ip = code + in.jump;          \
    break;                             \
  }
#define XACC_ARITH_F(C, OP) \
  case Code::C: D->f = F[in.a].f OP F[in.b].f; break;
#define XACC_CMP_F(C, OP) \
  case Code::C: D->i = F[in.a].f OP F[in.b].f; break;
    switch (in.code) {
      case Code::Const: D->i = in.imm; break;
      XACC_RT_INT_ARITH(XACC_ARITH_I)
      XACC_RT_INT_CMP(XACC_CMP_I)
      XACC_RT_INT_BRANCH(XACC_BR)
      XACC_RT_FLOAT_ARITH(XACC_ARITH_F)
      XACC_RT_FLOAT_CMP(XACC_CMP_F)
      case Code::DivI:
      case Code::RemI: {
        int64_t q = XACC_I1;
        if (q == 0) {
          stats_.calls += calls;
          return failRaw(*in.node, coreCode(CoreDiag::IntegerDivisionByZero),
                         "integer division by zero", frames0, leafMode ? &entry : nullptr, site);
        }
        D->i = intDivRem(in.code == Code::DivI, F[in.a].i, q);
        break;
      }
      case Code::Not: D->i = !F[in.a].i; break;
      case Code::And: D->i = F[in.a].i && F[in.b].i; break;
      case Code::Or: D->i = F[in.a].i || F[in.b].i; break;
      case Code::Select: *D = F[in.a].i ? F[in.b] : F[opnd[in.opBegin + 2]]; break;
      case Code::Branch: if (!F[in.a].i) ip = code + in.jump; break;
      case Code::Move: *D = F[in.a]; break;
      case Code::Jump: ip = code + in.jump; break;
      case Code::Call: {
        const Program* cp = in.prog.get();  // resolved by rawReady
        const uint32_t* o = opnd + in.opBegin;
        ++calls;
        if (in.tail) {
          // Replace the frame: park the arguments, then copy them down.
          RawSlot tmp[16];
          for (uint32_t i = 0; i < in.opCount; ++i) tmp[i] = F[o[i]];
          size_t b = rawFrames_.back().base;
          need(b + cp->numSlots);
          S = rawStack_.data();
          F = S + b;
          for (uint32_t i = 0; i < in.opCount; ++i) F[i] = tmp[i];
          top = b + cp->numSlots;
          rawFrames_.back().prog = cp;
          ++tails;
          enter(cp);
          break;
        }
        size_t limit = maxFrames_ > frames_.size() ? maxFrames_ - frames_.size() : 0;
        if (rawFrames_.size() - frames0 >= limit) {
          stats_.calls += calls;
          return failRaw(*in.node, coreCode(CoreDiag::StackOverflow),
                         "stack overflow: more than " + std::to_string(maxFrames_) +
                             " nested calls",
                         frames0, nullptr, nullptr);
        }
        if (bool overflow = false; checkpoint(rawFrames_.size()) && stopSlow(overflow)) {
          stats_.calls += calls;
          if (overflow)
            return failRaw(*in.node, coreCode(CoreDiag::StackOverflow),
                           "stack overflow: more than " + std::to_string(maxFrames_) +
                               " nested calls (all parallel tasks together)",
                           frames0, nullptr, nullptr);
          rawFrames_.resize(frames0);
          return false;
        }
        size_t nb = top;
        size_t ret = size_t(F - S) + in.dst;
        need(nb + cp->numSlots);
        S = rawStack_.data();
        F = S + rawFrames_.back().base;
        RawSlot* N = S + nb;
        for (uint32_t i = 0; i < in.opCount; ++i) N[i] = F[o[i]];
        rawFrames_.back().ip = ip;
        rawFrames_.push_back(RawFrame{cp, nullptr, nb, ret, in.node});
        F = N;
        top = nb + cp->numSlots;
        enter(cp);
        break;
      }
      case Code::Ret: {
        const uint32_t* rs = p->resultSlots.data();
        size_t n = p->resultSlots.size();
        if (leafMode || rawFrames_.size() == frames0 + 1) {
          for (size_t i = 0; i < n; ++i) {
            RawSlot v = F[rs[i]];
            switch (p->resultKinds[i]) {
              case ir::TypeKind::Int: out[i] = ir::Datum::integer(v.i); break;
              case ir::TypeKind::Float: out[i] = ir::Datum::real(v.f); break;
              case ir::TypeKind::Bool: out[i] = ir::Datum::boolean(v.i != 0); break;
              case ir::TypeKind::Token: out[i] = ir::Datum::token(); break;
              default: out[i] = ir::Datum(); break;
            }
          }
          if (!leafMode) rawFrames_.pop_back();
          stats_.calls += calls;
          stats_.tailCalls += tails;
          return true;
        }
        size_t ret = rawFrames_.back().ret;
        for (size_t i = 0; i < n; ++i) S[ret + i] = F[rs[i]];
        top = rawFrames_.back().base;
        rawFrames_.pop_back();
        const RawFrame& c = rawFrames_.back();
        p = c.prog;
        code = p->code.data();
        opnd = p->operandSlots.data();
        ip = static_cast<const Instr*>(c.ip);
        F = S + c.base;
        break;
      }
      case Code::ParCall: {
        // Parallel scheduler, shallow enough: the group's calls run as tasks
        // (this frame's slots are read and written by index: the raw stack
        // may move while they run); otherwise they run in order.
        if (!spawnsHere()) break;
        size_t fb = rawFrames_.back().base;
        uint32_t pc = uint32_t(ip - code);
        if (!runRawGroup(*p, pc, &fb)) {
          stats_.calls += calls;
          stats_.tailCalls += tails;
          rawFrames_.resize(frames0);
          return false;
        }
        S = rawStack_.data();
        F = S + fb;
        ip = code + pc + in.jump;
        break;
      }
      default:
        // Not reachable for rawReady programs.
        return failRaw(*in.node, coreCode(CoreDiag::NoExecutionRule),
                       "internal: no unboxed rule for '" + in.node->opName() + "'", frames0,
                       leafMode ? &entry : nullptr, site);
    }
#undef XACC_ARITH_I
#undef XACC_CMP_I
#undef XACC_BR
#undef XACC_ARITH_F
#undef XACC_CMP_F
#undef XACC_I1
  }
}
}  // namespace xacc::runtime
