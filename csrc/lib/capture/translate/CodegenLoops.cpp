// Loop-body functions: a graph break inside a loop splits the frame at the
// loop header and the body becomes a function of its own (Note [Loop bodies]).
#include "CodegenImpl.h"

#include "PyTypes.h"

namespace xacc::capture::translate::codegen {

// Note [Loop bodies]
// A graph break inside a `for` loop does not drop the frame. The frame is
// split at the header of the outermost loop around the break (its FOR_ITER,
// reached once: the translation restarts with a break recorded there), and
// the break function runs the loop natively:
//
//     prefix graph; rebuild stack (the iterator) and locals
//   loop:
//     FOR_ITER done
//     flag, payload = body(<locals the body uses>, value)
//     flag 0 (next iteration): store the locals the body assigns; loop
//     flag 1 (return):         return payload
//     flag 2+k (break):        store the locals; resume at exit k
//   done:
//     resume after the loop
//
// `body` is a function of its own, made from the loop body's instructions
// (re-assembled: locals renumbered, jumps to the header and out of the loop
// sent to epilogues that return (flag, locals), RETURN_VALUE to one that
// returns (1, value)). The hook captures it like any function, so each
// iteration runs its graphs around the break (the body's own break function
// and resume functions), in the order eager runs them. Locals that only the
// body binds start as a sentinel object (a Python read of one before its first
// assignment sees the sentinel, not UnboundLocalError); resume functions after
// the loop delete those still holding it. Not split (GB015 with the reason):
// a try or with block, yield or `del` inside the body, generator frames. A
// `while` loop is split the same way at the first instruction of its body
// (after the first test of its condition, which the prefix runs); its body
// function ends with the test and has no iterator and no value.
//
// Note [Loops left to Python]
// When the break inside the loop is a value read back from a tensor (GB005:
// `.item()`, `int(t)`, `bool(t)`, an op whose output size depends on the
// data, in the body or in a function it calls), the body is not captured:
// its function is made as above (a code object of its own, registered by
// loopBodyRunsAsPython) and the capture callback marks it skip, so the hook
// runs every iteration as plain Python. The frame still keeps its graphs
// before the loop and after it (the resume function at the loop's exit), and
// functions the body calls are captured by themselves. The value read back
// differs from iteration to iteration in general (it is data), and the
// fragments after it would specialise on it: a body captured per iteration
// paid a break of its own on top of the loop's, and a recompile of its resume
// function for every new value or data-dependent size (a size that slices a
// static tensor cannot become dynamic), up to the recompile limit. Left to
// Python, the loop costs the frame one break and no recompile.
namespace {

/// The forward form of jump `op` on the build's version (Note [Codegen versions]).
Op forwardJump(Op op) {
  if (op == Op::JUMP_BACKWARD) return Op::JUMP_FORWARD;
  const JumpTest t = jumpTest(op);
  return t == JumpTest::kNoTest ? op : forwardJumpIf(t);
}

/// Whether `op` reads or writes a local by index (LOAD_FAST and 3.12's
/// LOAD_FAST_CHECK / LOAD_FAST_AND_CLEAR, STORE_FAST, DELETE_FAST, 3.13's
/// kFusedLocals).
bool isLocalOp(Op op) { return (opcodeInfo(op).flags & kArgLocal) != 0; }

/// The one-local instructions `ins` is, in order, as (op, local): itself, or
/// the pair a kFusedLocals instruction stands for; none for other instructions.
std::vector<std::pair<Op, int>> localParts(const Instr& ins) {
  if (const FusedLocals* f = fusedLocals(ins.op)) return {{f->first, ins.arg >> 4}, {f->second, ins.arg & 15}};
  if (isLocalOp(ins.op)) return {{ins.op, ins.arg}};
  return {};
}

}  // namespace

/// The outermost loop of `bc` around `off`: [head, end] with `head` the jump
/// target and `end` the last backward jump to it; head -1 when none.
std::pair<int, int> outermostLoop(const Bytecode* bc, int off) {
  std::map<int, int> ends;
  // A backward jump outside every loop closes no cycle (an except handler's jump
  // to the code after its try: Note [Loops are cycles] in Bytecode.cpp); one inside
  // a loop is never the outermost around `off`.
  for (const Instr& ins : bc->instrs())
    if ((opcodeInfo(ins.op).flags & kJumpBackward) && bc->inLoop(ins.offset))
      ends[ins.target] = std::max(ends.count(ins.target) ? ends[ins.target] : -1, ins.offset);
  std::pair<int, int> best{-1, -1};
  for (auto [h, e] : ends)
    if (h <= off && off <= e && (best.first < 0 || h < best.first)) best = {h, e};
  return best;
}

/// Checks that the loop at `head` can run as a loop-body function and fills `p`.
bool planLoop(PyCodeObject* orig, const Bytecode* bc, int head, int end, int stackSize, LoopPlan& p,
              std::string& why) {
  const auto& instrs = bc->instrs();
  const int hi = bc->indexOf(head);
  int ei = bc->indexOf(end);
  if (hi < 0 || ei < 0) return (why = "internal: loop offsets"), false;
  p.isFor = instrs[hi].op == Op::FOR_ITER;
  p.done = p.isFor ? instrs[hi].target : -1;
  if (p.isFor && forIterSkips() > 0) {
    // 3.12, 3.13: FOR_ITER's target is the loop's END_FOR, which an exhausted
    // iterator skips (with 3.13's POP_TOP after it: forIterSkips). Everything
    // before it is the body, blocks placed after the last jump back included
    // (a return or break the compiler moved there); the loop continues after
    // the skipped instructions.
    const int di = bc->indexOf(p.done);
    const int last = di + forIterSkips() - 1;
    if (di <= ei || last >= static_cast<int>(instrs.size()) || instrs[static_cast<size_t>(di)].op != Op::END_FOR)
      return (why = "internal: loop shape"), false;
    for (int k = di + 1; k <= last; ++k)
      if (instrs[static_cast<size_t>(k)].op != Op::POP_TOP) return (why = "internal: loop shape"), false;
    ei = di - 1;
    end = instrs[static_cast<size_t>(ei)].offset;
    p.done = instrs[static_cast<size_t>(last)].next;
  }
  if (!p.isFor && !(opcodeInfo(instrs[ei].op).flags & kJumpBackward))
    return (why = "internal: loop shape"), false;
  if (orig->co_flags & (CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR | CO_ITERABLE_COROUTINE))
    return (why = "a loop in a generator or coroutine"), false;
  p.head = head;
  p.end = end;
  // Stack values under the iterator (a for loop) or at the header (a while loop).
  const int below = std::max(0, stackSize - (p.isFor ? 1 : 0));
  p.below = below;
  p.first = p.isFor ? hi + 1 : hi;
  if (!p.isFor) {
    p.values = 0;
    // The loop's condition at the end: falling through it leaves the loop.
    if (!endsBlock(instrs[ei].op)) {
      if (static_cast<size_t>(ei + 1) >= instrs.size()) return (why = "internal: loop end"), false;
      p.exits.push_back(instrs[ei + 1].offset);
    }
  }
  // `for a, b in ...`: the value is passed unpacked, so numbers in it are
  // arguments of their own (symbolic, not specialized per iteration).
  if (p.isFor && hi + 1 <= ei && instrs[hi + 1].op == Op::UNPACK_SEQUENCE && instrs[hi + 1].arg >= 1 &&
      instrs[hi + 1].arg <= 8) {
    p.values = instrs[hi + 1].arg;
    p.unpacked = true;
  }
  const int nlocals = orig->co_nlocals;
  const ClosureSlots closure = closureSlots(orig);
  auto inBody = [&](int off) { return off > head && off <= end; };
  for (int k = 0; k < static_cast<int>(instrs.size()); ++k) {
    const Instr& ins = instrs[k];
    if (k > hi && k <= ei) continue;
    if (ins.target >= 0 && inBody(ins.target)) return (why = "a jump into the loop body"), false;
  }
  for (int k = p.first; k <= ei; ++k) {
    const Instr& ins = instrs[k];
    if (bc->inTry(ins.offset)) return (why = "a try or with block inside the loop"), false;
    switch (ins.op) {
      case Op::YIELD_VALUE: case Op::SEND: case Op::RETURN_GENERATOR: case Op::JUMP_BACKWARD_NO_INTERRUPT:
      case Op::GET_YIELD_FROM_ITER: case Op::BEFORE_WITH: case Op::MAKE_CELL: case Op::LOAD_CLOSURE:
        return (why = std::string(ins.name()) + " inside the loop"), false;
      case Op::DELETE_FAST: return (why = "`del` of a local inside the loop"), false;
      default:
        for (auto [op, i] : localParts(ins)) {
          if (i >= nlocals) return (why = "internal: local index"), false;
          // 3.13 loads an argument's cell with LOAD_FAST for a closure.
          if (closure.rank(i) >= 0) return (why = "a cell read as a local inside the loop"), false;
          p.referenced.insert(i);
          if (op == Op::STORE_FAST || op == Op::LOAD_FAST_AND_CLEAR) p.stored.insert(i);
        }
        break;
    }
    if (ins.target >= 0 && !inBody(ins.target) && ins.target != head) {
      if (ins.target < head) return (why = "a jump out of the loop backwards"), false;
      if (std::find(p.exits.begin(), p.exits.end(), ins.target) == p.exits.end()) p.exits.push_back(ins.target);
    }
  }
  // Locals the body's straight-line start stores before reading them (the
  // loop target): never passed in.
  std::set<int> targets, read;
  for (const Instr& ins : instrs)
    if (ins.target >= 0) targets.insert(ins.target);
  for (int k = p.first; k <= ei; ++k) {
    const Instr& ins = instrs[k];
    if (targets.count(ins.offset) || ins.target >= 0 || endsBlock(ins.op)) break;
    for (auto [op, i] : localParts(ins)) {
      if (op == Op::STORE_FAST) {
        if (!read.count(i)) p.assignedFirst.insert(i);
      } else {
        read.insert(i);
      }
    }
  }
  // Stack depths: the body starts with (iterator, value); a jump back to the
  // header leaves the iterator, a jump out leaves nothing, a return its value.
  std::vector<int> depth(instrs.size(), -1);
  // A while loop has neither: it starts with `below` and goes back with it.
  const int back = p.isFor ? below + 1 : below;
  std::vector<int> work{p.first};
  depth[static_cast<size_t>(p.first)] = p.isFor ? below + 2 : below;
  auto setDepth = [&](int idx, int d) {
    if (depth[static_cast<size_t>(idx)] < 0) {
      depth[static_cast<size_t>(idx)] = d;
      work.push_back(idx);
      return true;
    }
    return depth[static_cast<size_t>(idx)] == d;
  };
  while (!work.empty()) {
    int k = work.back();
    work.pop_back();
    const Instr& ins = instrs[static_cast<size_t>(k)];
    const int d = depth[static_cast<size_t>(k)];
    const auto op = opByte(ins.op);
    if (ins.op == Op::EXTENDED_ARG) {
      if (k + 1 > ei || !setDepth(k + 1, d)) return (why = "internal: stack depths"), false;
      continue;
    }
    if (ins.op == Op::RETURN_VALUE || ins.op == Op::RETURN_CONST) {
      if (d != (ins.op == Op::RETURN_VALUE ? 1 : 0)) return (why = "a return with values left on the stack"), false;
      continue;
    }
    const int arg = (opcodeInfo(ins.op).flags & kHasArg) ? ins.arg : 0;
    if (ins.target >= 0) {
      int e = PyCompile_OpcodeStackEffectWithJump(op, arg, 1);
      if (e == PY_INVALID_STACK_EFFECT) return (why = std::string("stack effect of ") + ins.name()), false;
      if (ins.target == head) {
        if (d + e != back) return (why = "a jump back to the loop header with other stack values"), false;
      } else if (!inBody(ins.target)) {
        if (d + e != below) return (why = "a jump out of the loop with stack values"), false;
      } else if (!setDepth(bc->indexOf(ins.target), d + e)) {
        return (why = "internal: stack depths"), false;
      }
    }
    if (endsBlock(ins.op)) continue;
    int e = PyCompile_OpcodeStackEffectWithJump(op, arg, 0);
    if (e == PY_INVALID_STACK_EFFECT) return (why = std::string("stack effect of ") + ins.name()), false;
    if (k + 1 > ei) {
      if (p.isFor || d + e != below) return (why = "the loop body falls through its end"), false;
      continue;  // a while loop's condition was false: the fall-through exit
    }
    if (!setDepth(k + 1, d + e)) return (why = "internal: stack depths"), false;
  }
  return true;
}

/// The code of the loop body of `p`, a function of (params..., value) ->
/// (flag, payload) (Note [Loop bodies]); cached per loop and parameter list.
PyRef loopBody(PyCodeObject* orig, const Bytecode* bc, const LoopPlan& p, const std::vector<int>& params,
               bool asPython, std::string& why) {
  auto& reg = registry();
  auto key = std::make_tuple(orig, p.head, params, asPython);
  if (PyRef known = registeredCode(reg.bodyFns, key)) return known;
  // New local numbering: the parameters, the loop value, the other locals the body uses.
  std::map<int, int> slot;
  for (int i : params) slot[i] = static_cast<int>(slot.size());
  const int valueSlot = static_cast<int>(params.size());
  int next = valueSlot + p.values;
  for (int i : p.referenced)
    if (!slot.count(i)) slot[i] = next++;
  const int nvar = next;
  PyObject* vn = PyObject_GetAttrString(reinterpret_cast<PyObject*>(orig), "co_varnames");
  if (!vn) return (why = "co_varnames"), PyRef();
  PyRef origNames = PyRef::steal(vn);
  PyRef names = PyRef::steal(PyList_New(nvar));
  for (auto [i, j] : slot) {
    PyObject* n = PyTuple_GET_ITEM(origNames.get(), i);
    Py_INCREF(n);
    PyList_SET_ITEM(names.get(), j, n);
  }
  for (int k = 0; k < p.values; ++k)
    PyList_SET_ITEM(names.get(), valueSlot + k, PyUnicode_FromFormat("__xacc_loop_value%d", k));
  PyRef consts = PyRef::steal(PySequence_List(orig->co_consts));
  auto constant = [&](PyObject* o) {
    PyList_Append(consts.get(), o);
    return static_cast<int>(PyList_GET_SIZE(consts.get()) - 1);
  };
  const auto& instrs = bc->instrs();
  const int hi = bc->indexOf(p.head), ei = bc->indexOf(p.end);
  Asm a(instrs[static_cast<size_t>(hi)].line, orig->co_firstlineno);
  // Note [Cells across a break]: the original's cells and free variables are
  // the body's free variables, after its locals.
  const ClosureSlots closure = closureSlots(orig);
  if (closure.size()) a.op(Op::COPY_FREE_VARS, closure.size());
  a.op(Op::RESUME, 0);
  for (int k = 0; k < p.below + (p.isFor ? 1 : 0); ++k) a.op(Op::LOAD_CONST, constant(Py_None));  // the iterators
  for (int k = 0; k < p.values; ++k) a.op(Op::LOAD_FAST, valueSlot + k);
  // On the stack now: unbound, so that the frame's f_locals (a traceback's)
  // holds the user's locals only.
  for (int k = 0; k < p.values; ++k) a.op(Op::DELETE_FAST, valueSlot + k);
  if (p.unpacked) a.op(Op::BUILD_TUPLE, p.values);
  enum { kNext = -2, kRet = -3 };
  auto exitLabel = [&](int target) -> int {
    if (target == p.head) return kNext;
    auto it = std::find(p.exits.begin(), p.exits.end(), target);
    return it == p.exits.end() ? -100 : -10 - static_cast<int>(it - p.exits.begin());
  };
  // Labels: instruction offsets for internal targets, negatives for epilogues
  // (shifted to non-negative ids for the assembler).
  auto lab = [&](int l) { return l >= 0 ? l : 1000000 - l; };
  for (int k = p.first; k <= ei; ++k) {
    const Instr& ins = instrs[static_cast<size_t>(k)];
    if (ins.op == Op::EXTENDED_ARG) continue;
    a.setLine(ins.line > 0 ? ins.line : -1);
    a.label(lab(ins.offset));
    const uint16_t flags = opcodeInfo(ins.op).flags;
    if (ins.op == Op::RETURN_VALUE) {
      a.jump(Op::JUMP_FORWARD, lab(kRet));
    } else if (ins.op == Op::RETURN_CONST) {  // 3.12; consts keep their indices
      a.op(Op::LOAD_CONST, ins.arg);
      a.jump(Op::JUMP_FORWARD, lab(kRet));
    } else if (isLocalOp(ins.op)) {
      for (auto [op, i] : localParts(ins)) a.op(op, slot.at(i));
    } else if (flags & kArgFree) {
      if (closure.rank(ins.arg) < 0) return (why = "internal: closure slot"), PyRef();
      a.op(ins.op, closure.derived(ins.arg, nvar));
    } else if (ins.target >= 0) {
      bool inside = ins.target > p.head && ins.target <= p.end;
      if (inside) {
        int t = bc->indexOf(ins.target);
        while (instrs[static_cast<size_t>(t)].op == Op::EXTENDED_ARG) ++t;
        a.jump(ins.op, lab(instrs[static_cast<size_t>(t)].offset));
      } else {
        int l = exitLabel(ins.target);
        if (l == -100) return (why = "internal: loop exit"), PyRef();
        a.jump(forwardJump(ins.op), lab(l));
      }
    } else {
      a.op(ins.op, ins.arg);
    }
  }
  if (!p.isFor && !endsBlock(instrs[static_cast<size_t>(ei)].op)) {
    a.jump(Op::JUMP_FORWARD, lab(exitLabel(instrs[static_cast<size_t>(ei) + 1].offset)));
  }
  // Epilogues: (flag, (assigned locals...)) or (1, return value).
  a.setLine(-1);
  auto locals = [&] {
    for (int i : p.stored) a.op(Op::LOAD_FAST, slot.at(i));
    a.op(Op::BUILD_TUPLE, static_cast<int>(p.stored.size()));
  };
  PyRef zero = PyRef::steal(PyLong_FromLong(0)), one = PyRef::steal(PyLong_FromLong(1));
  a.label(lab(kNext));
  for (int k = 0; k < p.below + (p.isFor ? 1 : 0); ++k) a.op(Op::POP_TOP);
  a.op(Op::LOAD_CONST, constant(zero.get()));
  locals();
  a.op(Op::BUILD_TUPLE, 2);
  a.op(Op::RETURN_VALUE);
  for (size_t k = 0; k < p.exits.size(); ++k) {
    a.label(lab(-10 - static_cast<int>(k)));
    for (int j = 0; j < p.below; ++j) a.op(Op::POP_TOP);
    PyRef flag = PyRef::steal(PyLong_FromLong(2 + static_cast<long>(k)));
    a.op(Op::LOAD_CONST, constant(flag.get()));
    locals();
    a.op(Op::BUILD_TUPLE, 2);
    a.op(Op::RETURN_VALUE);
  }
  a.label(lab(kRet));
  a.op(Op::LOAD_CONST, constant(one.get()));
  a.op(Op::SWAP, 2);
  a.op(Op::BUILD_TUPLE, 2);
  a.op(Op::RETURN_VALUE);
  std::string bytes, lt;
  a.assemble(bytes, lt);
  PyRef freevars = derivedFreevars(orig);
  PyRef noCells = PyRef::steal(PyTuple_New(0));
  if (!freevars || !noCells) return (why = "closure names"), PyRef();
  CodeParts parts{std::move(bytes), std::move(lt), "", consts.get(), nullptr, names.get(), valueSlot + p.values,
                  noCells.get(), freevars.get()};
  PyRef code = makeCode(orig, orig, parts, why);
  if (!code) return (why = "building the loop body's code: " + why), PyRef();
  PyRef f = registerCode(reg.bodyFns, key, code.get(), orig);
  std::lock_guard<std::mutex> lock(reg.mu);
  if (reg.bodies.insert(reinterpret_cast<PyCodeObject*>(code.get())).second) Py_INCREF(code.get());
  if (asPython) reg.pythonBodies.insert(reinterpret_cast<PyCodeObject*>(code.get()));
  return f;
}

}  // namespace xacc::capture::translate::codegen
