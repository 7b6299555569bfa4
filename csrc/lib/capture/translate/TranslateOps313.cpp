// Opcode family (Note [Opcode families] in TranslateOps.cpp): the opcodes
// CPython 3.13 added that are older instructions fused into one or one older
// instruction split in two. Each is modelled as the instructions it stands for,
// so their semantics are declared once (facts from the 3.13 `dis` docs):
//
//   LOAD_FAST_LOAD_FAST a<<4|b    LOAD_FAST a; LOAD_FAST b
//   STORE_FAST_LOAD_FAST a<<4|b   STORE_FAST a; LOAD_FAST b
//   STORE_FAST_STORE_FAST a<<4|b  STORE_FAST a; STORE_FAST b
//   CALL_KW n                     3.12's KW_NAMES (the names are on the stack) + CALL n
//   FORMAT_SIMPLE                 FORMAT_VALUE 0; FORMAT_WITH_SPEC: FORMAT_VALUE 4
//   CONVERT_VALUE c               FORMAT_VALUE's conversion c (1 str, 2 repr, 3 ascii)
//   SET_FUNCTION_ATTRIBUTE f      one of MAKE_FUNCTION's flags (3.13's MAKE_FUNCTION
//                                 takes only the code), applied to the function on top
//   TO_BOOL                       bool(TOS); see the case below
#include "BytecodeFacts.h"
#include "Translator.h"

namespace xacc::capture::translate {

namespace {

/// The first instruction at index `ip` or later, EXTENDED_ARG prefixes
/// skipped, or null at the end of the code. A handler runs with the frame's ip
/// already past its own instruction: instrFrom(bc, ip) is the next one.
const Instr* instrFrom(const Bytecode& bc, size_t ip) {
  const auto& instrs = bc.instrs();
  for (size_t i = ip; i < instrs.size(); ++i)
    if (instrs[i].op != Op::EXTENDED_ARG) return &instrs[i];
  return nullptr;
}

}  // namespace

bool Frame::stepFused(const Instr& ins, bool& done, VarRef& result) {
  // One of the instructions this one stands for, with argument `arg`.
  auto as = [&](Op op, int arg) {
    Instr part = ins;
    part.op = op;
    part.arg = arg;
    return step(part, done, result);
  };
  switch (ins.op) {
    case Op::LOAD_FAST_LOAD_FAST:
    case Op::STORE_FAST_LOAD_FAST:
    case Op::STORE_FAST_STORE_FAST: {
      const FusedLocals* f = fusedLocals(ins.op);  // kFusedLocals (BytecodeFacts.h)
      return as(f->first, ins.arg >> 4) && as(f->second, ins.arg & 15);
    }
    case Op::CALL_KW: {
      // [callable, self or NULL, positional args, keyword args, names]
      if (!need(ins, 3 + static_cast<size_t>(ins.arg))) return false;
      PyRef names = t.constOf(pop());  // LOAD_CONST's tuple (a Tuple tracker of strings)
      if (!names) return false;
      if (!PyTuple_CheckExact(names.get()) || PyTuple_GET_SIZE(names.get()) > ins.arg)
        return t.fail(GB::Internal, "internal: CALL_KW without a tuple of names");
      kwNames = names;
      return as(Op::CALL, ins.arg);
    }
    case Op::FORMAT_SIMPLE:
      return as(Op::FORMAT_VALUE, 0);
    case Op::FORMAT_WITH_SPEC:
      return as(Op::FORMAT_VALUE, 0x04);
    case Op::CONVERT_VALUE: {
      if (!need(ins, 1)) return false;
      PyRef v = t.constOf(pop());
      if (!v) return false;
      PyObject* c = ins.arg == 1   ? PyObject_Str(v.get())
                    : ins.arg == 2 ? PyObject_Repr(v.get())
                    : ins.arg == 3 ? PyObject_ASCII(v.get())
                                   : nullptr;
      if (!c) {
        if (!PyErr_Occurred()) return t.fail(GB::Internal, "internal: CONVERT_VALUE " + std::to_string(ins.arg));
        return t.failPy(GB::RaisesException, "format");
      }
      push(makeConst(PyRef::steal(c)));
      return true;
    }
    case Op::SET_FUNCTION_ATTRIBUTE: {
      // [value, function] -> [function]
      if (!need(ins, 2)) return false;
      VarRef fn = pop(), value = pop();
      if (!fn->is(Var::Kind::Function)) return t.fail(GB::Internal, "internal: SET_FUNCTION_ATTRIBUTE without a function");
      switch (ins.arg) {
        case 0x01:  // positional defaults
          fn->items.clear();
          if (!t.unpack(value, fn->items)) return false;
          break;
        case 0x02:  // keyword-only defaults
          if (!value->is(Var::Kind::Dict)) return t.fail(GB::UnsupportedType, "keyword defaults of unknown type");
          fn->keys = value->keys;
          fn->kwItems = value->items;
          break;
        case 0x04:  // annotations: kept, as MAKE_FUNCTION's handler does
          setFunctionAnnotations(*fn, value);
          break;
        case 0x08:  // the closure: 3.13 loads a cell with LOAD_FAST (3.12's LOAD_CLOSURE)
          fn->cells.clear();
          for (const VarRef& c : value->items) {
            if (c->is(Var::Kind::CellRef))
              fn->cells.push_back(c->self);
            else if (c->is(Var::Kind::Cell))
              fn->cells.push_back(c);
            else
              return t.fail(GB::Internal, "closure without cells");
          }
          break;
        default:
          return t.fail(GB::UnsupportedInstruction, "SET_FUNCTION_ATTRIBUTE " + std::to_string(ins.arg));
      }
      push(std::move(fn));
      return true;
    }
    case Op::TO_BOOL: {
      // The compiler puts TO_BOOL before a conditional jump and before `not`,
      // which take the truth of their operand themselves: the value stays, so
      // that a jump on a tensor reaches the branch handler as on 3.12. Before
      // anything else TOS becomes the bool (a tensor's truth is a break).
      if (!need(ins, 1)) return false;
      const Instr* next = instrFrom(*bc, ip);
      if (next && (next->op == Op::POP_JUMP_IF_TRUE || next->op == Op::POP_JUMP_IF_FALSE || next->op == Op::UNARY_NOT))
        return true;
      int b = t.truth(stack.back());
      if (b < 0) return false;
      stack.back() = makeConst(PyRef::borrow(b ? Py_True : Py_False));
      return true;
    }
    default:
      return misrouted(ins);
  }
}

}  // namespace xacc::capture::translate
