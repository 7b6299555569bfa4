// Opcode families (Note [Opcode families] in TranslateOps.cpp): jumps, loops,
// returns, yields; calls, function creation, with blocks and raises.
#include <algorithm>
#include <cstring>

#include "BytecodeFacts.h"
#include "PyTypes.h"
#include "Translator.h"

namespace xacc::capture::translate {

void setFunctionAnnotations(Var& fn, const VarRef& ann) {
  // A tuple of names and values (MAKE_FUNCTION's 0x04), kept as one constant:
  // its values are constants or objects the frame read (and guarded).
  fn.fields = PyRef();
  fn.pos = 1;  // not rebuildable unless every item is an object
  if (!ann || !ann->is(Var::Kind::Tuple) || ann->obj) return;
  PyRef t = PyRef::steal(PyTuple_New(static_cast<Py_ssize_t>(ann->items.size())));
  if (!t) return PyErr_Clear();
  for (size_t i = 0; i < ann->items.size(); ++i) {
    const VarRef& v = ann->items[i];
    if (!v || !(v->is(Var::Kind::Const) || v->is(Var::Kind::Object)) || !v->obj) return;
    Py_INCREF(v->obj.get());
    PyTuple_SET_ITEM(t.get(), static_cast<Py_ssize_t>(i), v->obj.get());
  }
  fn.fields = std::move(t);
  fn.pos = 0;
}

bool Frame::stepControl(const Instr& ins, bool& done, VarRef& result) {
  switch (ins.op) {
    // -- control flow ------------------------------------------------------------------
    case Op::JUMP_FORWARD:
    case Op::JUMP_BACKWARD:
    case Op::JUMP_BACKWARD_NO_INTERRUPT:
      ip = static_cast<size_t>(bc->indexOf(ins.target));
      return true;
    case Op::POP_JUMP_FORWARD_IF_TRUE:
    case Op::POP_JUMP_BACKWARD_IF_TRUE:
    case Op::POP_JUMP_FORWARD_IF_FALSE:
    case Op::POP_JUMP_BACKWARD_IF_FALSE:
    case Op::POP_JUMP_IF_TRUE:    // 3.12: one direction per jump opcode, the
    case Op::POP_JUMP_IF_FALSE: {  // jump's flags say which (Bytecode.cpp)
      if (!need(ins, 1)) return false;
      bool want = ins.op == Op::POP_JUMP_FORWARD_IF_TRUE || ins.op == Op::POP_JUMP_BACKWARD_IF_TRUE ||
                  ins.op == Op::POP_JUMP_IF_TRUE;
      if (stack.back()->is(Var::Kind::ItemOf)) stack.back() = stack.back()->self;  // its tensor
      if (stack.back()->is(Var::Kind::Tensor) && !stack.back()->isNumpy() &&
          bc->indexOf(ins.target) > static_cast<int>(ip) && regionsModelled() &&
          !t.knownValue(stack.back(), "bool"))  // a known value jumps as a constant (truth)
        return t.branch(*this, ins, want, done, result);  // a ctrl.if, or GB004
      int b = t.truth(stack.back());  // fails (GB004) before popping a tensor
      if (b < 0) return false;
      stack.pop_back();
      if ((b != 0) == want) ip = static_cast<size_t>(bc->indexOf(ins.target));
      return true;
    }
    case Op::POP_JUMP_FORWARD_IF_NONE:
    case Op::POP_JUMP_BACKWARD_IF_NONE:
    case Op::POP_JUMP_FORWARD_IF_NOT_NONE:
    case Op::POP_JUMP_BACKWARD_IF_NOT_NONE:
    case Op::POP_JUMP_IF_NONE:
    case Op::POP_JUMP_IF_NOT_NONE: {
      if (!need(ins, 1)) return false;
      VarRef v = pop();
      bool isNone = v->is(Var::Kind::Const) && v->obj.get() == Py_None;
      bool want = ins.op == Op::POP_JUMP_FORWARD_IF_NONE || ins.op == Op::POP_JUMP_BACKWARD_IF_NONE ||
                  ins.op == Op::POP_JUMP_IF_NONE;
      if (isNone == want) ip = static_cast<size_t>(bc->indexOf(ins.target));
      return true;
    }
    case Op::JUMP_IF_TRUE_OR_POP:
    case Op::JUMP_IF_FALSE_OR_POP: {
      if (!need(ins, 1)) return false;
      int b = t.truth(stack.back());
      if (b < 0) return false;
      if ((b != 0) == (ins.op == Op::JUMP_IF_TRUE_OR_POP))
        ip = static_cast<size_t>(bc->indexOf(ins.target));
      else
        stack.pop_back();
      return true;
    }
    case Op::GET_ITER: {
      if (!need(ins, 1)) return false;
      VarRef it = t.iterate(pop());
      if (!it) return false;
      push(std::move(it));
      return true;
    }
    case Op::FOR_ITER: {
      if (!need(ins, 1)) return false;
      VarRef& it = stack.back();
      if (!it->is(Var::Kind::Iter)) return t.fail(GB::UnsupportedType, "iteration over an unknown iterator");
      if (it->obj && PyRange_Check(it->obj.get()) && it->pos == 0 && it->items.size() > kUnrollBound &&
          regionsModelled()) {
        int r = t.rangeLoop(*this, ins);
        if (r < 0) return false;
        if (r > 0) return true;
        // Not captured as a loop: unrolled (the stack was restored, `it` may dangle).
        if (stack.empty() || !stack.back()->is(Var::Kind::Iter)) return t.fail(GB::Internal, "internal: range loop state");
      }
      VarRef iter = stack.back();
      VarRef v;
      if (!t.advance(iter, v)) return false;
      if (v) {
        push(std::move(v));
      } else {
        // Exhausted: 3.11 pops the iterator; 3.12 leaves it and a placeholder
        // for END_FOR at the target to pop (BytecodeFacts::forIterJumpEffect).
        if (bytecodeFacts().forIterJumpEffect < 0)
          stack.pop_back();
        else
          push(makeVar(Var::Kind::Null));
        ip = static_cast<size_t>(bc->indexOf(ins.target));
      }
      return true;
    }
    case Op::END_FOR: {
      const size_t n = static_cast<size_t>(bytecodeFacts().endForPops);
      if (!need(ins, n)) return false;
      stack.resize(stack.size() - n);
      return true;
    }
    case Op::RETURN_VALUE:
      if (!need(ins, 1)) return false;
      result = pop();
      done = true;
      return true;
    case Op::RETURN_CONST: {  // 3.12: LOAD_CONST then RETURN_VALUE
      Instr part = ins;
      part.op = Op::LOAD_CONST;
      if (!step(part, done, result)) return false;
      part.op = Op::RETURN_VALUE;
      return step(part, done, result);
    }
    case Op::RETURN_GENERATOR:
      if (!lazy) return t.fail(GB::GeneratorBreak, "generator");
      push(makeConst(PyRef::borrow(Py_None)));
      return true;
    case Op::YIELD_VALUE:
      if (lazy) {  // See Note [Lazy generators]: suspend with the value
        if (!need(ins, 1)) return false;
        result = pop();
        push(makeConst(PyRef::borrow(Py_None)));  // what the yield expression gives on resume
        suspended = true;
        done = true;
        return true;
      }
      return t.fail(GB::GeneratorBreak, "yield");
    // Note [Yield from]: `yield from it` in a lazily run generator is
    // GET_YIELD_FROM_ITER (iter(it); a generator is its own iterator), then a
    // SEND loop: SEND steps the sub-iterator with the value sent in (always
    // None here: a lazy frame resumes its yields with None, and gen.send() is
    // not modelled), YIELD_VALUE hands each item out of this generator and the
    // loop jumps back to SEND. Once the sub-iterator is exhausted SEND puts what
    // it returned (a generator's return value, else None) in place and jumps
    // out: 3.11 replaces the receiver with it; 3.12 on leave the receiver below
    // it for END_SEND, at the jump's target, to delete.
    case Op::GET_YIELD_FROM_ITER: {
      if (!lazy) return t.fail(GB::GeneratorBreak, "yield from");
      if (!need(ins, 1)) return false;
      VarRef it = t.iterate(pop());
      if (!it) return false;
      push(std::move(it));
      return true;
    }
    case Op::SEND: {
      if (!lazy) return t.fail(GB::GeneratorBreak, "yield from");
      if (!need(ins, 2)) return false;
      const VarRef& sent = stack.back();
      if (!sent->is(Var::Kind::Const) || sent->obj.get() != Py_None)
        return t.fail(GB::UnsupportedInstruction, "send() of a value into a sub-generator");
      VarRef receiver = stack[stack.size() - 2];
      if (!receiver->is(Var::Kind::Iter)) return t.fail(GB::UnsupportedType, "yield from an unknown iterator");
      VarRef v;
      if (!t.advance(receiver, v)) return false;
      if (v) {
        stack.back() = std::move(v);
        return true;
      }
      VarRef ret = receiver->gen && receiver->gen->returned ? receiver->gen->returned
                                                            : makeConst(PyRef::borrow(Py_None));
      size_t at = static_cast<size_t>(bc->indexOf(ins.target));
      stack.pop_back();
      if (bc->instrs()[at].op != Op::END_SEND) stack.pop_back();  // 3.11: no END_SEND
      push(std::move(ret));
      ip = at;
      return true;
    }
    case Op::END_SEND:
      if (!need(ins, 2)) return false;
      stack.erase(stack.end() - 2);
      return true;
    default:
      return misrouted(ins);
  }
}

bool Frame::stepCalls(const Instr& ins, bool& done, VarRef& result) {
  switch (ins.op) {
    // -- calls ----------------------------------------------------------------------------
    case Op::CALL_INTRINSIC_1: {
      // 3.12: the unary operations that lost their opcodes; each modelled one is
      // the opcode 3.11 had for it.
      const BytecodeFacts& facts = bytecodeFacts();
      Instr as = ins;
      as.arg = 0;
      if (ins.arg == facts.intrinsicUnaryPositive)
        as.op = Op::UNARY_POSITIVE;
      else if (ins.arg == facts.intrinsicListToTuple)
        as.op = Op::LIST_TO_TUPLE;
      else
        return t.fail(GB::UnsupportedInstruction, "CALL_INTRINSIC_1 " + std::to_string(ins.arg));
      return step(as, done, result);
    }
    case Op::KW_NAMES:
      kwNames = PyRef::borrow(PyTuple_GET_ITEM(code->co_consts, ins.arg));
      return true;
    case Op::CALL: {
      if (!need(ins, 2 + static_cast<size_t>(ins.arg))) return false;
      std::vector<VarRef> args = popn(ins.arg);
      // Below the arguments: [NULL, callable] or [callable, self] (3.11,
      // 3.12), [callable, NULL] or [callable, self] (3.13). Either way the one
      // that is not NULL is the callable, and two values are callable and self.
      VarRef b = pop(), a = pop();
      VarRef fn;
      if (a->is(Var::Kind::Null)) {
        fn = b;
      } else if (b->is(Var::Kind::Null)) {
        fn = a;
      } else {
        fn = a;
        args.insert(args.begin(), b);
      }
      std::vector<std::pair<PyRef, VarRef>> kw;
      if (kwNames) {
        Py_ssize_t nk = PyTuple_GET_SIZE(kwNames.get());
        size_t first = args.size() - static_cast<size_t>(nk);
        for (Py_ssize_t i = 0; i < nk; ++i)
          kw.emplace_back(PyRef::borrow(PyTuple_GET_ITEM(kwNames.get(), i)), args[first + i]);
        args.resize(first);
        kwNames = PyRef();
      }
      VarRef r = t.call(*this, fn, std::move(args), std::move(kw));
      if (!r) return false;
      push(std::move(r));
      return true;
    }
    case Op::CALL_FUNCTION_EX: {
      VarRef kwv;
      if (ins.arg & 1) {
        if (!need(ins, 1)) return false;
        kwv = pop();
      }
      if (!need(ins, 2)) return false;
      // [NULL, callable, args] (3.11, 3.12) or [callable, NULL, args] (3.13).
      VarRef argv = pop(), fn = pop();
      if (fn->is(Var::Kind::Null)) {
        if (!need(ins, 1)) return false;
        fn = pop();
      } else if (!stack.empty() && stack.back()->is(Var::Kind::Null)) {
        stack.pop_back();
      }
      std::vector<std::pair<PyRef, VarRef>> kw;
      if (kwv) {
        if (!kwv->is(Var::Kind::Dict)) return t.fail(GB::UnsupportedType, "**kwargs of unknown type");
        for (size_t i = 0; i < kwv->keys.size(); ++i) kw.emplace_back(kwv->keys[i], kwv->items[i]);
      }
      std::vector<VarRef> args;
      if (!t.unpack(argv, args)) return false;
      VarRef r = t.call(*this, fn, std::move(args), std::move(kw));
      if (!r) return false;
      push(std::move(r));
      return true;
    }
    case Op::LOAD_BUILD_CLASS: {  // Note [Local classes] in TranslateFreshClasses.cpp
      PyObject* bc = PyDict_GetItemString(builtins, "__build_class__");  // borrowed
      if (!bc || bc != buildClassBuiltin()) return t.fail(GB::UntraceableCall, "a replaced builtins.__build_class__");
      push(makeVar(Var::Kind::Object, PyRef::borrow(bc)));
      return true;
    }
    case Op::MAKE_FUNCTION: {
      if (!need(ins, 1)) return false;
      VarRef codeVar = pop();
      if (!codeVar->is(Var::Kind::Const) || !PyCode_Check(codeVar->obj.get()))
        return t.fail(GB::Internal, "MAKE_FUNCTION without a code object");
      auto fn = makeVar(Var::Kind::Function, codeVar->obj);
      fn->globals = PyRef::borrow(globals);
      fn->globalSource = globalSource;
      if (ins.arg & 0x08) {
        VarRef cl = pop();
        for (const VarRef& c : cl->items) {
          if (!c->is(Var::Kind::CellRef)) return t.fail(GB::Internal, "closure without cells");
          fn->cells.push_back(c->self);
        }
      }
      // Annotations are kept for a break to make the function again with them
      // (rebuildFunction in Codegen.cpp); calling the function does not read them.
      if (ins.arg & 0x04) setFunctionAnnotations(*fn, pop());
      if (ins.arg & 0x02) {
        VarRef kd = pop();
        fn->keys = kd->keys;
        fn->kwItems = kd->items;
      }
      if (ins.arg & 0x01) {
        if (!t.unpack(pop(), fn->items)) return false;
      }
      PyObject* qn = reinterpret_cast<PyCodeObject*>(codeVar->obj.get())->co_name;
      fn->name = PyUnicode_AsUTF8(qn);
      push(std::move(fn));
      return true;
    }

    // -- with / exceptions (breaks) ---------------------------------------------------------
    case Op::BEFORE_WITH: {
      if (!need(ins, 1)) return false;
      VarRef mgr = stack.back();
      if (!mgr->is(Var::Kind::GradMode)) {  // Note [Context managers] in TranslateContext.cpp
        VarRef exit, entered;
        if (!t.enterContext(*this, mgr, exit, entered)) return false;
        stack.pop_back();
        push(std::move(exit));
        push(std::move(entered));
        return true;
      }
      // A grad-mode region: __exit__ (called on the normal path with three
      // Nones) restores the mode; the exception path is never traced.
      auto exit = makeVar(Var::Kind::GradExit);
      exit->pos = t.gradEnabled() ? 1 : 0;
      if (!t.setGrad(mgr->pos != 0)) return false;
      stack.pop_back();
      push(std::move(exit));
      push(makeConst(PyRef::borrow(Py_None)));
      return true;
    }
    case Op::LOAD_ASSERTION_ERROR:  // a failed assert raises AssertionError (Note [Traced exceptions])
      push(makeVar(Var::Kind::Object, PyRef::borrow(PyExc_AssertionError)));
      return true;
    default:
      return misrouted(ins);
  }
}

}  // namespace xacc::capture::translate
