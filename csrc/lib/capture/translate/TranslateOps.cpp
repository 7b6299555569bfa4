// Opcode handlers of the translator, by family: this file holds the dispatch
// table and the locals/constants/globals/stack family; TranslateOpsOperators.cpp
// (attributes, operators), TranslateOpsContainers.cpp and TranslateOpsFlow.cpp
// (control flow, calls) the others. Opcodes without a row fail with GB001 (see
// Translator.h); handlers that meet an unsupported value fail with the matching
// break code.
//
// Note [Opcode families]: Frame::step looks the instruction's Op up in one
// table (kFamilies below: opcode -> family handler) and calls that handler,
// whose switch has a case per opcode of its family. Op is xacc's numbering of
// every supported version's opcodes (Note [Opcode numbering] in Bytecode.h), so
// an opcode only one version has is one row and one case, never an #if.
#include <algorithm>
#include <array>
#include <cstring>

#include "BytecodeFacts.h"
#include "PyTypes.h"
#include "Translator.h"

namespace xacc::capture::translate {

namespace {

VarRef cellOf(VarRef content) {
  auto c = makeVar(Var::Kind::Cell);
  c->self = std::move(content);
  c->pos = 1;  // made by MAKE_CELL while tracing: STORE_DEREF may write it (see there)
  return c;
}

}  // namespace

PyObject* operatorFn(const char* name) {
  // Interned per name for the process lifetime (the operator module is never unloaded).
  static std::vector<std::pair<std::string, PyObject*>> cache;
  for (auto& [n, f] : cache)
    if (n == name) return f;
  PyObject* f = moduleAttr("operator", name);
  if (!f) return nullptr;
  cache.emplace_back(name, f);
  return f;
}

PyObject* binaryOperator(int arg) {
  static const char* kNames[] = {"add",      "and_",     "floordiv",  "lshift",   "matmul",
                                 "mul",      "mod",      "or_",       "pow",      "rshift",
                                 "sub",      "truediv",  "xor",       "iadd",     "iand",
                                 "ifloordiv", "ilshift", "imatmul",   "imul",     "imod",
                                 "ior",      "ipow",     "irshift",   "isub",     "itruediv",
                                 "ixor"};
  if (arg < 0 || arg >= static_cast<int>(sizeof(kNames) / sizeof(kNames[0]))) return nullptr;
  return operatorFn(kNames[arg]);
}

PyObject* compareOperator(int arg) {
  static const char* kNames[] = {"lt", "le", "eq", "ne", "gt", "ge"};
  if (arg < 0 || arg >= 6) return nullptr;
  return operatorFn(kNames[arg]);
}

namespace {

using Family = bool (Frame::*)(const Instr&, bool&, VarRef&);

struct FamilyRow {
  Op op;
  Family family;
};

// Every opcode the translator models, and the family handler that models it.
constexpr FamilyRow kFamilies[] = {
    {Op::NOP, &Frame::stepLocals},
    {Op::RESUME, &Frame::stepLocals},
    {Op::EXTENDED_ARG, &Frame::stepLocals},
    {Op::PRECALL, &Frame::stepLocals},
    {Op::CACHE, &Frame::stepLocals},
    {Op::COPY_FREE_VARS, &Frame::stepLocals},
    {Op::MAKE_CELL, &Frame::stepLocals},
    {Op::LOAD_FAST, &Frame::stepLocals},
    {Op::STORE_FAST, &Frame::stepLocals},
    {Op::DELETE_FAST, &Frame::stepLocals},
    {Op::LOAD_CONST, &Frame::stepLocals},
    {Op::LOAD_GLOBAL, &Frame::stepLocals},
    {Op::IMPORT_NAME, &Frame::stepLocals},
    {Op::IMPORT_FROM, &Frame::stepLocals},
    {Op::STORE_GLOBAL, &Frame::stepLocals},
    {Op::LOAD_DEREF, &Frame::stepLocals},
    {Op::LOAD_CLASSDEREF, &Frame::stepLocals},
    {Op::STORE_DEREF, &Frame::stepLocals},
    {Op::LOAD_CLOSURE, &Frame::stepLocals},
    {Op::POP_TOP, &Frame::stepLocals},
    {Op::PUSH_NULL, &Frame::stepLocals},
    {Op::COPY, &Frame::stepLocals},
    {Op::SWAP, &Frame::stepLocals},
    {Op::LOAD_ATTR, &Frame::stepAttributes},
    {Op::LOAD_METHOD, &Frame::stepAttributes},
    {Op::STORE_ATTR, &Frame::stepAttributes},
    {Op::DELETE_ATTR, &Frame::stepAttributes},
    {Op::BINARY_OP, &Frame::stepOperators},
    {Op::COMPARE_OP, &Frame::stepOperators},
    {Op::UNARY_NEGATIVE, &Frame::stepOperators},
    {Op::UNARY_POSITIVE, &Frame::stepOperators},
    {Op::UNARY_INVERT, &Frame::stepOperators},
    {Op::UNARY_NOT, &Frame::stepOperators},
    {Op::IS_OP, &Frame::stepOperators},
    {Op::CONTAINS_OP, &Frame::stepOperators},
    {Op::BINARY_SUBSCR, &Frame::stepOperators},
    {Op::STORE_SUBSCR, &Frame::stepOperators},
    {Op::DELETE_SUBSCR, &Frame::stepOperators},
    {Op::BUILD_TUPLE, &Frame::stepContainers},
    {Op::BUILD_LIST, &Frame::stepContainers},
    {Op::BUILD_SET, &Frame::stepContainers},
    {Op::SET_ADD, &Frame::stepContainers},
    {Op::SET_UPDATE, &Frame::stepContainers},
    {Op::BUILD_MAP, &Frame::stepContainers},
    {Op::BUILD_CONST_KEY_MAP, &Frame::stepContainers},
    {Op::BUILD_SLICE, &Frame::stepContainers},
    {Op::BUILD_STRING, &Frame::stepContainers},
    {Op::FORMAT_VALUE, &Frame::stepContainers},
    {Op::LIST_APPEND, &Frame::stepContainers},
    {Op::LIST_EXTEND, &Frame::stepContainers},
    {Op::LIST_TO_TUPLE, &Frame::stepContainers},
    {Op::MAP_ADD, &Frame::stepContainers},
    {Op::DICT_UPDATE, &Frame::stepContainers},
    {Op::DICT_MERGE, &Frame::stepContainers},
    {Op::UNPACK_SEQUENCE, &Frame::stepContainers},
    {Op::UNPACK_EX, &Frame::stepContainers},
    {Op::JUMP_FORWARD, &Frame::stepControl},
    {Op::JUMP_BACKWARD, &Frame::stepControl},
    {Op::JUMP_BACKWARD_NO_INTERRUPT, &Frame::stepControl},
    {Op::POP_JUMP_FORWARD_IF_TRUE, &Frame::stepControl},
    {Op::POP_JUMP_BACKWARD_IF_TRUE, &Frame::stepControl},
    {Op::POP_JUMP_FORWARD_IF_FALSE, &Frame::stepControl},
    {Op::POP_JUMP_BACKWARD_IF_FALSE, &Frame::stepControl},
    {Op::POP_JUMP_FORWARD_IF_NONE, &Frame::stepControl},
    {Op::POP_JUMP_BACKWARD_IF_NONE, &Frame::stepControl},
    {Op::POP_JUMP_FORWARD_IF_NOT_NONE, &Frame::stepControl},
    {Op::POP_JUMP_BACKWARD_IF_NOT_NONE, &Frame::stepControl},
    {Op::JUMP_IF_TRUE_OR_POP, &Frame::stepControl},
    {Op::JUMP_IF_FALSE_OR_POP, &Frame::stepControl},
    {Op::GET_ITER, &Frame::stepControl},
    {Op::FOR_ITER, &Frame::stepControl},
    {Op::RETURN_VALUE, &Frame::stepControl},
    {Op::RETURN_GENERATOR, &Frame::stepControl},
    {Op::YIELD_VALUE, &Frame::stepControl},
    {Op::KW_NAMES, &Frame::stepCalls},
    {Op::CALL, &Frame::stepCalls},
    {Op::CALL_FUNCTION_EX, &Frame::stepCalls},
    {Op::MAKE_FUNCTION, &Frame::stepCalls},
    {Op::LOAD_BUILD_CLASS, &Frame::stepCalls},
    {Op::BEFORE_WITH, &Frame::stepCalls},
    {Op::RAISE_VARARGS, &Frame::stepExceptions},
    {Op::PUSH_EXC_INFO, &Frame::stepExceptions},
    {Op::CHECK_EXC_MATCH, &Frame::stepExceptions},
    {Op::POP_EXCEPT, &Frame::stepExceptions},
    {Op::RERAISE, &Frame::stepExceptions},
    {Op::LOAD_ASSERTION_ERROR, &Frame::stepCalls},
    // Opcodes of CPython 3.12 on (Opcodes312.def).
    {Op::LOAD_FAST_CHECK, &Frame::stepLocals},
    {Op::LOAD_FAST_AND_CLEAR, &Frame::stepLocals},
    {Op::BINARY_SLICE, &Frame::stepOperators},
    {Op::STORE_SLICE, &Frame::stepOperators},
    {Op::POP_JUMP_IF_TRUE, &Frame::stepControl},
    {Op::POP_JUMP_IF_FALSE, &Frame::stepControl},
    {Op::POP_JUMP_IF_NONE, &Frame::stepControl},
    {Op::POP_JUMP_IF_NOT_NONE, &Frame::stepControl},
    {Op::END_FOR, &Frame::stepControl},
    {Op::GET_YIELD_FROM_ITER, &Frame::stepControl},
    {Op::SEND, &Frame::stepControl},
    {Op::END_SEND, &Frame::stepControl},
    {Op::RETURN_CONST, &Frame::stepControl},
    {Op::CALL_INTRINSIC_1, &Frame::stepCalls},
    {Op::LOAD_SUPER_ATTR, &Frame::stepAttributes},
    // Opcodes of CPython 3.13 on (Opcodes313.def); the others it has are 3.12's.
    {Op::LOAD_FAST_LOAD_FAST, &Frame::stepFused},
    {Op::STORE_FAST_LOAD_FAST, &Frame::stepFused},
    {Op::STORE_FAST_STORE_FAST, &Frame::stepFused},
    {Op::CALL_KW, &Frame::stepFused},
    {Op::TO_BOOL, &Frame::stepFused},
    {Op::FORMAT_SIMPLE, &Frame::stepFused},
    {Op::FORMAT_WITH_SPEC, &Frame::stepFused},
    {Op::CONVERT_VALUE, &Frame::stepFused},
    {Op::SET_FUNCTION_ATTRIBUTE, &Frame::stepFused},
};

const std::array<Family, static_cast<size_t>(Op::kNumOps)>& familyTable() {
  static const auto table = [] {
    std::array<Family, static_cast<size_t>(Op::kNumOps)> t{};
    for (const FamilyRow& r : kFamilies) t[static_cast<size_t>(r.op)] = r.family;
    return t;
  }();
  return table;
}

}  // namespace

bool Frame::step(const Instr& ins, bool& done, VarRef& result) {
  const Family family = familyTable()[static_cast<size_t>(ins.op)];
  if (!family) return t.fail(GB::UnsupportedInstruction, ins.name());
  return (this->*family)(ins, done, result);
}

void Frame::pushCallable(VarRef fn) {
  if (bytecodeFacts().nullAfterCallable) {
    push(std::move(fn));
    push(makeVar(Var::Kind::Null));
  } else {
    push(makeVar(Var::Kind::Null));
    push(std::move(fn));
  }
}

bool Frame::need(const Instr& ins, size_t n) {
  if (stack.size() < n) return t.fail(GB::Internal, std::string("stack underflow at ") + ins.name());
  return true;
}

std::string Frame::localName(int i) const {
  const char* s = PyUnicode_AsUTF8(PyTuple_GET_ITEM(code->co_localsplusnames, i));
  return s ? s : "?";
}

bool Frame::misrouted(const Instr& ins) {
  return t.fail(GB::Internal, std::string("internal: ") + ins.name() + " reached the wrong opcode family");
}

bool Frame::stepLocals(const Instr& ins, bool& done, VarRef& result) {
  switch (ins.op) {
    case Op::NOP:
    case Op::RESUME:
    case Op::EXTENDED_ARG:
    case Op::PRECALL:
    case Op::CACHE:
    case Op::COPY_FREE_VARS:  // free variables are bound when the frame is made
      return true;
    case Op::MAKE_CELL:
      slots[ins.arg] = cellOf(slots[ins.arg]);
      return true;

    // -- locals, constants, globals ------------------------------------------
    case Op::LOAD_FAST:
    case Op::LOAD_FAST_CHECK: {  // 3.12: LOAD_FAST where the local may be unbound
      const VarRef& v = slots[ins.arg];
      if (!v) return t.fail(GB::UnsupportedInstruction, "read of unbound local '" + localName(ins.arg) + "'");
      push(v);
      return true;
    }
    case Op::LOAD_FAST_AND_CLEAR: {
      // 3.12 (PEP 709): an inlined comprehension saves the local its variable
      // shadows, unbound included (a NULL, which STORE_FAST puts back as unbound).
      VarRef v = slots[ins.arg] ? slots[ins.arg] : makeVar(Var::Kind::Null);
      slots[ins.arg] = nullptr;
      push(std::move(v));
      return true;
    }
    case Op::STORE_FAST:
      if (!need(ins, 1)) return false;
      slots[ins.arg] = pop();
      if (slots[ins.arg] && slots[ins.arg]->is(Var::Kind::Null)) slots[ins.arg] = nullptr;  // LOAD_FAST_AND_CLEAR
      return true;
    case Op::DELETE_FAST:
      slots[ins.arg] = nullptr;
      return true;
    case Op::LOAD_CONST: {
      VarRef v = t.fromConst(PyTuple_GET_ITEM(code->co_consts, ins.arg));
      if (!v) return false;
      push(std::move(v));
      return true;
    }
    case Op::LOAD_GLOBAL: {
      PyObject* name = PyTuple_GET_ITEM(code->co_names, ins.arg >> 1);
      bool builtin = false;
      PyObject* value = PyDict_GetItemWithError(globals, name);  // borrowed
      if (!value && !PyErr_Occurred()) {
        builtin = true;
        value = PyDict_GetItemWithError(builtins, name);
      }
      if (!value) {
        if (PyErr_Occurred()) return t.failPy(GB::UnsupportedInstruction, "global lookup");
        return t.fail(GB::UnsupportedInstruction, std::string("name '") + PyUnicode_AsUTF8(name) + "' is not defined");
      }
      VarRef v = t.wrap(value, globalSource ? globalSource(name, builtin) : nullptr);
      if (!v) return false;
      if (ins.arg & 1)
        pushCallable(std::move(v));  // the NULL of a call: below it or above it
      else
        push(std::move(v));
      return true;
    }
    case Op::IMPORT_NAME: {
      // `import m` / `from m import x` inside a function: a lookup in
      // sys.modules when the module is already imported (no import side
      // effects can happen then); a first import stays a break.
      if (!need(ins, 2)) return false;
      VarRef fromlist = pop(), level = pop();
      PyObject* name = PyTuple_GET_ITEM(code->co_names, ins.arg);
      if (!level->is(Var::Kind::Const) || !PyLong_Check(level->obj.get()) || !t.isConst(fromlist))
        return t.fail(GB::UnsupportedInstruction, "IMPORT_NAME with computed arguments");
      PyRef from = t.constOf(fromlist);
      if (!from) return false;
      std::string mod = PyUnicode_AsUTF8(name);
      long lvl = PyLong_AsLong(level->obj.get());
      if (lvl > 0) {
        PyObject* pkg = PyDict_GetItemString(globals, "__package__");  // borrowed
        if (!pkg || !PyUnicode_Check(pkg)) return t.fail(GB::UnsupportedInstruction, "relative import without __package__");
        std::string base = PyUnicode_AsUTF8(pkg);
        for (long i = 1; i < lvl; ++i) {
          size_t dot = base.rfind('.');
          if (dot == std::string::npos) return t.fail(GB::UnsupportedInstruction, "relative import beyond the top package");
          base.resize(dot);
        }
        mod = mod.empty() ? base : base + "." + mod;
      }
      PyObject* modules = PyImport_GetModuleDict();  // borrowed
      PyObject* m = PyDict_GetItemString(modules, mod.c_str());  // borrowed
      if (!m || !PyModule_Check(m)) return t.fail(GB::UnsupportedInstruction, "import of module '" + mod + "' not imported yet");
      PyObject* pushed = m;
      if (from.get() == Py_None || (PyTuple_Check(from.get()) && PyTuple_GET_SIZE(from.get()) == 0)) {
        if (lvl == 0) {  // `import a.b` binds `a`
          std::string top = mod.substr(0, mod.find('.'));
          pushed = PyDict_GetItemString(modules, top.c_str());
          if (!pushed || !PyModule_Check(pushed)) return t.fail(GB::UnsupportedInstruction, "import of module '" + top + "' not imported yet");
        }
      }
      push(makeVar(Var::Kind::Object, PyRef::borrow(pushed)));
      return true;
    }
    case Op::IMPORT_FROM: {
      if (!need(ins, 1)) return false;
      VarRef m = stack.back();
      PyObject* name = PyTuple_GET_ITEM(code->co_names, ins.arg);
      if (!m->is(Var::Kind::Object) || !PyModule_Check(m->obj.get())) return t.fail(GB::UnsupportedInstruction, "IMPORT_FROM");
      PyObject* v = PyObject_GetAttr(m->obj.get(), name);
      if (!v) {
        PyErr_Clear();
        // `from pkg import sub` of a submodule that is imported but not yet
        // bound as an attribute is left to Python.
        return t.fail(GB::UnsupportedInstruction, std::string("from-import of '") + PyUnicode_AsUTF8(name) + "'");
      }
      PyRef vr = PyRef::steal(v);
      // Only names that are fixed once a module is loaded: modules, functions
      // and classes (a module-level flag may change between calls and has no
      // source to guard it through).
      if (!PyModule_Check(v) && !PyFunction_Check(v) && !PyCFunction_Check(v) && !PyType_Check(v))
        return t.fail(GB::UnsupportedInstruction, std::string("from-import of the value '") + PyUnicode_AsUTF8(name) + "'");
      push(makeVar(Var::Kind::Object, vr));
      return true;
    }
    case Op::STORE_GLOBAL:
      return t.fail(GB::GlobalWrite, std::string("global ") + PyUnicode_AsUTF8(PyTuple_GET_ITEM(code->co_names, ins.arg)));
    case Op::LOAD_DEREF:
    case Op::LOAD_CLASSDEREF: {
      const VarRef& c = slots[ins.arg];
      if (!c || !c->is(Var::Kind::Cell) || !c->self)
        return t.fail(GB::UnsupportedInstruction, "free variable '" + localName(ins.arg) + "' is unbound");
      push(c->self);
      return true;
    }
    case Op::STORE_DEREF: {
      const VarRef& c = slots[ins.arg];
      bool free = ins.arg >= code->co_nlocalsplus - code->co_nfreevars;
      if (!c || !c->is(Var::Kind::Cell) || (!parent && free))
        return t.fail(GB::GlobalWrite, "nonlocal " + localName(ins.arg));
      // A cell of a function made before the call (its closure, read through
      // inlineFunction) is a tracker per inlined call: a write to it would reach
      // neither the real cell nor the other functions that share it. Only
      // cells made by MAKE_CELL while tracing (pos 1) are written.
      if (c->pos != 1)
        return t.fail(GB::GlobalWrite, "nonlocal " + localName(ins.arg) + " of a function made before the call");
      if (!need(ins, 1)) return false;
      c->self = pop();
      return true;
    }
    case Op::LOAD_CLOSURE: {
      const VarRef& c = slots[ins.arg];
      if (!c || !c->is(Var::Kind::Cell)) return t.fail(GB::UnsupportedInstruction, "closure '" + localName(ins.arg) + "'");
      auto r = makeVar(Var::Kind::CellRef);
      r->self = c;
      push(std::move(r));
      return true;
    }

    // -- stack -----------------------------------------------------------------
    case Op::POP_TOP:
      if (!need(ins, 1)) return false;
      stack.pop_back();
      return true;
    case Op::PUSH_NULL:
      push(makeVar(Var::Kind::Null));
      return true;
    case Op::COPY:
      if (!need(ins, static_cast<size_t>(ins.arg))) return false;
      push(stack[stack.size() - ins.arg]);
      return true;
    case Op::SWAP:
      if (!need(ins, static_cast<size_t>(ins.arg))) return false;
      std::swap(stack.back(), stack[stack.size() - ins.arg]);
      return true;
    default:
      return misrouted(ins);
  }
}

}  // namespace xacc::capture::translate
