// Opcode handlers of the translator: one case per CPython 3.11 opcode the
// translator models. Opcodes without a case fail with GB001 (see
// Translator.h); handlers that meet an unsupported value fail with the
// matching break code.
#include <algorithm>
#include <cstring>

#include "PyTypes.h"
#include "Translator.h"

namespace xacc::capture::translate {

namespace {

VarRef cellOf(VarRef content) {
  auto c = makeVar(Var::Kind::Cell);
  c->self = std::move(content);
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

bool Frame::step(const Instr& ins, bool& done, VarRef& result) {
  auto argName = [&](PyObject* tuple, int i) { return PyTuple_GET_ITEM(tuple, i); };
  auto localName = [&](int i) -> std::string {
    const char* s = PyUnicode_AsUTF8(PyTuple_GET_ITEM(code->co_localsplusnames, i));
    return s ? s : "?";
  };
  auto need = [&](size_t n) {
    if (stack.size() < n) return t.fail(GB::Internal, std::string("stack underflow at ") + ins.name());
    return true;
  };
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
    case Op::LOAD_FAST: {
      const VarRef& v = slots[ins.arg];
      if (!v) return t.fail(GB::UnsupportedInstruction, "read of unbound local '" + localName(ins.arg) + "'");
      push(v);
      return true;
    }
    case Op::STORE_FAST:
      if (!need(1)) return false;
      slots[ins.arg] = pop();
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
      PyObject* name = argName(code->co_names, ins.arg >> 1);
      if (ins.arg & 1) push(makeVar(Var::Kind::Null));
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
      push(std::move(v));
      return true;
    }
    case Op::IMPORT_NAME: {
      // `import m` / `from m import x` inside a function: a lookup in
      // sys.modules when the module is already imported (no import side
      // effects can happen then); a first import stays a break.
      if (!need(2)) return false;
      VarRef fromlist = pop(), level = pop();
      PyObject* name = argName(code->co_names, ins.arg);
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
      if (!need(1)) return false;
      VarRef m = stack.back();
      PyObject* name = argName(code->co_names, ins.arg);
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
      return t.fail(GB::GlobalWrite, std::string("global ") + PyUnicode_AsUTF8(argName(code->co_names, ins.arg)));
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
      if (!need(1)) return false;
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
      if (!need(1)) return false;
      stack.pop_back();
      return true;
    case Op::PUSH_NULL:
      push(makeVar(Var::Kind::Null));
      return true;
    case Op::COPY:
      if (!need(static_cast<size_t>(ins.arg))) return false;
      push(stack[stack.size() - ins.arg]);
      return true;
    case Op::SWAP:
      if (!need(static_cast<size_t>(ins.arg))) return false;
      std::swap(stack.back(), stack[stack.size() - ins.arg]);
      return true;

    // -- attributes --------------------------------------------------------------
    case Op::LOAD_ATTR: {
      if (!need(1)) return false;
      VarRef v = t.getattr(pop(), argName(code->co_names, ins.arg));
      if (!v) return false;
      push(std::move(v));
      return true;
    }
    case Op::LOAD_METHOD: {
      if (!need(1)) return false;
      VarRef obj = pop();
      push(makeVar(Var::Kind::Null));
      VarRef v = t.getattr(obj, argName(code->co_names, ins.arg));
      if (!v) return false;
      push(std::move(v));
      return true;
    }
    case Op::STORE_ATTR: {
      if (!need(2)) return false;
      VarRef obj = pop(), value = pop();
      return t.storeAttr(obj, argName(code->co_names, ins.arg), value);
    }
    case Op::DELETE_ATTR:
      return t.fail(GB::AttributeWrite, std::string("del .") + PyUnicode_AsUTF8(argName(code->co_names, ins.arg)));

    // -- operators -----------------------------------------------------------------
    case Op::BINARY_OP: {
      if (!need(2)) return false;
      PyObject* op = binaryOperator(ins.arg);
      if (!op) return t.failPy(GB::Internal, "BINARY_OP argument");
      VarRef b = pop(), a = pop();
      VarRef r = t.binary(op, a, b);
      if (!r) return false;
      push(std::move(r));
      return true;
    }
    case Op::COMPARE_OP: {
      if (!need(2)) return false;
      PyObject* op = compareOperator(ins.arg);
      if (!op) return t.failPy(GB::Internal, "COMPARE_OP argument");
      VarRef b = pop(), a = pop();
      VarRef r = t.binary(op, a, b);
      if (!r) return false;
      push(std::move(r));
      return true;
    }
    case Op::UNARY_NEGATIVE:
    case Op::UNARY_POSITIVE:
    case Op::UNARY_INVERT: {
      if (!need(1)) return false;
      const char* n = ins.op == Op::UNARY_NEGATIVE ? "neg" : ins.op == Op::UNARY_POSITIVE ? "pos" : "invert";
      VarRef r = t.unary(operatorFn(n), pop());
      if (!r) return false;
      push(std::move(r));
      return true;
    }
    case Op::UNARY_NOT: {
      if (!need(1)) return false;
      int b = t.truth(pop());
      if (b < 0) return false;
      push(makeConst(PyRef::borrow(b ? Py_False : Py_True)));
      return true;
    }
    case Op::IS_OP: {
      if (!need(2)) return false;
      VarRef b = pop(), a = pop();
      bool same;
      auto plain = [](const VarRef& v) { return v->is(Var::Kind::Object) || v->is(Var::Kind::Const); };
      auto container = [](const VarRef& v) {
        return v->is(Var::Kind::List) || v->is(Var::Kind::Dict) || v->is(Var::Kind::Tuple);
      };
      if (plain(a) && plain(b)) {
        same = a->obj.get() == b->obj.get();
        // Two values read from the frame: the answer holds while they alias as now.
        if (a->source && b->source) t.guardSame(a->source, b->source, same);
      } else if (container(a) && container(b) && a->source && b->source && a.get() != b.get()) {
        // Containers read through two sources: trackers do not hold the objects.
        return t.fail(GB::UnsupportedType, "'is' between two containers read from outside the frame");
      } else if (a->is(Var::Kind::Tensor) && b->is(Var::Kind::Tensor)) {
        same = a->obj.get() == b->obj.get() && a->np == b->np;
      } else if ((a->is(Var::Kind::Const) && a->obj.get() == Py_None) ||
                 (b->is(Var::Kind::Const) && b->obj.get() == Py_None)) {
        same = false;  // a tracked non-constant is never None
      } else {
        same = a.get() == b.get();
      }
      push(makeConst(PyRef::borrow(same != (ins.arg != 0) ? Py_True : Py_False)));
      return true;
    }
    case Op::CONTAINS_OP: {
      if (!need(2)) return false;
      VarRef container = pop(), item = pop();
      // `k in d.keys()` is `k in d` (the view is live); values and items views compare
      // their items by ==, which only constants answer here.
      if (container->is(Var::Kind::DictView)) {
        container = container->name == "keys" ? container->self : makeSeq(Var::Kind::List, viewItems(*container));
      }
      auto answer = [&](int r) {
        push(makeConst(PyRef::borrow((r != 0) != (ins.arg != 0) ? Py_True : Py_False)));
        return true;
      };
      int r = t.objectContains(container, item);  // an object read from outside the frame
      if (r == -1) return false;
      if (r >= 0) return answer(r);
      PyRef k = t.constOf(item);
      if (!k) return false;
      if (container->is(Var::Kind::Set)) {
        r = PySet_Contains(container->obj.get(), k.get());
        if (r < 0) return t.failPy(GB::RaisesException, "'in'");
      } else if (container->is(Var::Kind::Dict)) {
        r = 0;
        for (const PyRef& key : container->keys) {
          int eq = PyObject_RichCompareBool(key.get(), k.get(), Py_EQ);
          if (eq < 0) return t.failPy(GB::UnsupportedType, "'in'");
          if (eq) {
            r = 1;
            break;
          }
        }
      } else if ((container->is(Var::Kind::List) || container->is(Var::Kind::Tuple)) &&
                 std::all_of(container->items.begin(), container->items.end(),
                             [&](const VarRef& i) { return t.isConst(i); })) {
        // `"c2p" in self.pos_att_type` (a list read from a module: its items are guarded)
        r = 0;
        for (const VarRef& i : container->items) {
          PyRef e = t.constOf(i);
          if (!e) return false;
          int eq = PyObject_RichCompareBool(e.get(), k.get(), Py_EQ);
          if (eq < 0) return t.failPy(GB::RaisesException, "'in'");
          if (eq) {
            r = 1;
            break;
          }
        }
      } else {
        PyRef c = t.constOf(container);
        if (!c) return false;
        r = PySequence_Contains(c.get(), k.get());
        if (r < 0) return t.failPy(GB::RaisesException, "'in'");
      }
      return answer(r);
    }
    case Op::BINARY_SUBSCR: {
      if (!need(2)) return false;
      VarRef idx = pop(), obj = pop();
      VarRef r = t.subscr(obj, idx);
      if (!r) return false;
      push(std::move(r));
      return true;
    }
    case Op::STORE_SUBSCR: {
      if (!need(3)) return false;
      VarRef idx = stack[stack.size() - 1], obj = stack[stack.size() - 2], val = stack[stack.size() - 3];
      if (!t.storeSubscr(obj, idx, val)) return false;
      popn(3);
      return true;
    }
    case Op::DELETE_SUBSCR: {
      // del on a list or a plain dict: polyfills.py's list/dict.__delitem__.
      if (!need(2)) return false;
      VarRef idx = stack[stack.size() - 1], obj = stack[stack.size() - 2];
      static PyObject* delName = PyUnicode_InternFromString("__delitem__");
      PyObject* tp = (obj->is(Var::Kind::List) || (obj->is(Var::Kind::Dict) && !obj->obj)) ? t.typeOf(obj) : nullptr;
      if (PyObject* desc = tp ? _PyType_Lookup(reinterpret_cast<PyTypeObject*>(tp), delName) : nullptr) {
        std::vector<VarRef> all{obj, idx};
        std::vector<std::pair<PyRef, VarRef>> kw;
        if (t.polyfill(desc, all, kw)) {
          popn(2);
          return true;
        }
        if (t.failed()) return false;
      }
      return t.fail(GB::OuterContainerMutation, "del x[i]");
    }

    // -- containers ------------------------------------------------------------------
    case Op::BUILD_TUPLE:
    case Op::BUILD_LIST:
      if (!need(static_cast<size_t>(ins.arg))) return false;
      push(makeSeq(ins.op == Op::BUILD_TUPLE ? Var::Kind::Tuple : Var::Kind::List, popn(ins.arg)));
      return true;
    case Op::BUILD_SET: {
      if (!need(static_cast<size_t>(ins.arg))) return false;
      VarRef s = t.makeSet(popn(ins.arg), false);
      if (!s) return false;
      push(std::move(s));
      return true;
    }
    case Op::SET_ADD:
    case Op::SET_UPDATE: {
      if (!need(1 + static_cast<size_t>(ins.arg))) return false;
      VarRef v = pop();
      VarRef s = stack[stack.size() - ins.arg];
      if (!t.mutableSet(s)) return false;
      std::vector<VarRef> items;
      if (ins.op == Op::SET_ADD) {
        items.push_back(v);
      } else {
        VarRef it = t.iterate(v);
        if (!it || !t.unpack(it, items)) return false;
      }
      for (const VarRef& i : items) {
        PyRef k = t.setKey(i);
        if (!k) return false;
        if (PySet_Add(s->obj.get(), k.get()) < 0) return t.failPy(GB::UnsupportedType, "set add");
      }
      return true;
    }
    case Op::BUILD_MAP: {
      if (!need(2 * static_cast<size_t>(ins.arg))) return false;
      auto items = popn(2 * ins.arg);
      auto d = makeVar(Var::Kind::Dict);
      for (size_t i = 0; i < items.size(); i += 2) {
        PyRef k = t.constOf(items[i]);
        if (!k) return false;
        d->keys.push_back(std::move(k));
        d->items.push_back(items[i + 1]);
      }
      push(std::move(d));
      return true;
    }
    case Op::BUILD_CONST_KEY_MAP: {
      if (!need(1 + static_cast<size_t>(ins.arg))) return false;
      PyRef keys = t.constOf(pop());
      if (!keys || !PyTuple_Check(keys.get()) || PyTuple_GET_SIZE(keys.get()) != ins.arg)
        return t.failed() ? false : t.fail(GB::Internal, "BUILD_CONST_KEY_MAP keys");
      auto vals = popn(ins.arg);
      auto d = makeVar(Var::Kind::Dict);
      for (int i = 0; i < ins.arg; ++i) {
        d->keys.push_back(PyRef::borrow(PyTuple_GET_ITEM(keys.get(), i)));
        d->items.push_back(vals[i]);
      }
      push(std::move(d));
      return true;
    }
    case Op::BUILD_SLICE: {
      if (!need(static_cast<size_t>(ins.arg))) return false;
      auto parts = popn(ins.arg);
      PyRef p[3];
      bool sym = false;
      for (size_t i = 0; i < parts.size(); ++i) {
        if (isSizeSym(parts[i])) {
          p[i] = parts[i]->obj;  // See Note [Symbolic sizes]: a slice of a tensor keeps it symbolic
          sym = true;
        } else if (!(p[i] = t.constOf(parts[i]))) {
          return false;
        }
      }
      PyObject* s = PySlice_New(p[0].get(), p[1].get(), parts.size() == 3 ? p[2].get() : nullptr);
      if (!s) return t.failPy(GB::UnsupportedType, "slice");
      VarRef v = makeConst(PyRef::steal(s));
      if (sym) {
        v->name = "symslice";
        v->items = std::move(parts);
      }
      push(std::move(v));
      return true;
    }
    case Op::BUILD_STRING: {
      if (!need(static_cast<size_t>(ins.arg))) return false;
      auto parts = popn(ins.arg);
      PyRef tuple = PyRef::steal(PyTuple_New(ins.arg));
      for (int i = 0; i < ins.arg; ++i) {
        PyRef s = t.constOf(parts[i]);
        if (!s) return false;
        PyTuple_SET_ITEM(tuple.get(), i, s.release());
      }
      PyRef empty = PyRef::steal(PyUnicode_FromString(""));
      PyObject* r = PyUnicode_Join(empty.get(), tuple.get());
      if (!r) return t.failPy(GB::RaisesException, "string join");
      push(makeConst(PyRef::steal(r)));
      return true;
    }
    case Op::FORMAT_VALUE: {
      PyRef spec;
      if (ins.arg & 0x04) {
        if (!need(1) || !(spec = t.constOf(pop()))) return false;
      }
      if (!need(1)) return false;
      PyRef v = t.constOf(pop());
      if (!v) return false;
      int conv = ins.arg & 0x03;
      if (conv) {
        PyObject* c = conv == 1 ? PyObject_Str(v.get()) : conv == 2 ? PyObject_Repr(v.get()) : PyObject_ASCII(v.get());
        if (!c) return t.failPy(GB::RaisesException, "format");
        v = PyRef::steal(c);
      }
      PyObject* r = PyObject_Format(v.get(), spec.get());
      if (!r) return t.failPy(GB::RaisesException, "format");
      push(makeConst(PyRef::steal(r)));
      return true;
    }
    case Op::LIST_APPEND:
    case Op::LIST_EXTEND: {
      if (!need(1 + static_cast<size_t>(ins.arg))) return false;
      VarRef v = pop();
      VarRef& lst = stack[stack.size() - ins.arg];
      if (!lst->is(Var::Kind::List)) return t.fail(GB::UnsupportedType, "append to a non-list");
      if (lst->source) return t.fail(GB::OuterContainerMutation, "list passed in from outside");
      if (ins.op == Op::LIST_APPEND) {
        lst->items.push_back(std::move(v));
      } else {
        std::vector<VarRef> items;
        if (!t.unpack(v, items)) return false;
        lst->items.insert(lst->items.end(), items.begin(), items.end());
      }
      return true;
    }
    case Op::LIST_TO_TUPLE: {
      if (!need(1)) return false;
      std::vector<VarRef> items;
      if (!t.unpack(pop(), items)) return false;
      push(makeSeq(Var::Kind::Tuple, std::move(items)));
      return true;
    }
    case Op::MAP_ADD: {
      if (!need(2 + static_cast<size_t>(ins.arg))) return false;
      VarRef v = pop(), k = pop();
      VarRef& d = stack[stack.size() - ins.arg];
      if (!d->is(Var::Kind::Dict) || d->source) return t.fail(GB::OuterContainerMutation, "dict update");
      PyRef key = t.constOf(k);
      if (!key) return false;
      for (size_t i = 0; i < d->keys.size(); ++i) {
        if (PyObject_RichCompareBool(d->keys[i].get(), key.get(), Py_EQ) == 1) {
          d->items[i] = v;
          return true;
        }
      }
      d->keys.push_back(std::move(key));
      d->items.push_back(std::move(v));
      return true;
    }
    case Op::DICT_UPDATE:
    case Op::DICT_MERGE: {
      if (!need(1 + static_cast<size_t>(ins.arg))) return false;
      VarRef v = pop();
      VarRef& d = stack[stack.size() - ins.arg];
      if (!d->is(Var::Kind::Dict) || !v->is(Var::Kind::Dict) || d->source) return t.fail(GB::OuterContainerMutation, "dict update");
      for (size_t j = 0; j < v->keys.size(); ++j) {
        bool found = false;
        for (size_t i = 0; i < d->keys.size(); ++i) {
          if (PyObject_RichCompareBool(d->keys[i].get(), v->keys[j].get(), Py_EQ) == 1) {
            d->items[i] = v->items[j];
            found = true;
            break;
          }
        }
        if (!found) {
          d->keys.push_back(v->keys[j]);
          d->items.push_back(v->items[j]);
        }
      }
      return true;
    }
    case Op::UNPACK_SEQUENCE: {
      if (!need(1)) return false;
      std::vector<VarRef> items;
      if (!t.unpack(pop(), items)) return false;
      if (items.size() != static_cast<size_t>(ins.arg)) return t.fail(GB::RaisesException, "unpack length mismatch");
      for (auto it = items.rbegin(); it != items.rend(); ++it) push(*it);
      return true;
    }
    case Op::UNPACK_EX: {
      if (!need(1)) return false;
      std::vector<VarRef> items;
      if (!t.unpack(pop(), items)) return false;
      size_t before = ins.arg & 0xFF, after = static_cast<size_t>(ins.arg) >> 8;
      if (items.size() < before + after) return t.fail(GB::RaisesException, "unpack length mismatch");
      std::vector<VarRef> out(items.begin(), items.begin() + static_cast<std::ptrdiff_t>(before));
      out.push_back(makeSeq(Var::Kind::List, std::vector<VarRef>(items.begin() + static_cast<std::ptrdiff_t>(before),
                                                                  items.end() - static_cast<std::ptrdiff_t>(after))));
      out.insert(out.end(), items.end() - static_cast<std::ptrdiff_t>(after), items.end());
      for (auto it = out.rbegin(); it != out.rend(); ++it) push(*it);
      return true;
    }

    // -- control flow ------------------------------------------------------------------
    case Op::JUMP_FORWARD:
    case Op::JUMP_BACKWARD:
    case Op::JUMP_BACKWARD_NO_INTERRUPT:
      ip = static_cast<size_t>(bc->indexOf(ins.target));
      return true;
    case Op::POP_JUMP_FORWARD_IF_TRUE:
    case Op::POP_JUMP_BACKWARD_IF_TRUE:
    case Op::POP_JUMP_FORWARD_IF_FALSE:
    case Op::POP_JUMP_BACKWARD_IF_FALSE: {
      if (!need(1)) return false;
      bool want = ins.op == Op::POP_JUMP_FORWARD_IF_TRUE || ins.op == Op::POP_JUMP_BACKWARD_IF_TRUE;
      if (stack.back()->is(Var::Kind::ItemOf)) stack.back() = stack.back()->self;  // its tensor
      if (stack.back()->is(Var::Kind::Tensor) && !stack.back()->isNumpy() &&
          bc->indexOf(ins.target) > static_cast<int>(ip))
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
    case Op::POP_JUMP_BACKWARD_IF_NOT_NONE: {
      if (!need(1)) return false;
      VarRef v = pop();
      bool isNone = v->is(Var::Kind::Const) && v->obj.get() == Py_None;
      bool want = ins.op == Op::POP_JUMP_FORWARD_IF_NONE || ins.op == Op::POP_JUMP_BACKWARD_IF_NONE;
      if (isNone == want) ip = static_cast<size_t>(bc->indexOf(ins.target));
      return true;
    }
    case Op::JUMP_IF_TRUE_OR_POP:
    case Op::JUMP_IF_FALSE_OR_POP: {
      if (!need(1)) return false;
      int b = t.truth(stack.back());
      if (b < 0) return false;
      if ((b != 0) == (ins.op == Op::JUMP_IF_TRUE_OR_POP))
        ip = static_cast<size_t>(bc->indexOf(ins.target));
      else
        stack.pop_back();
      return true;
    }
    case Op::GET_ITER: {
      if (!need(1)) return false;
      VarRef it = t.iterate(pop());
      if (!it) return false;
      push(std::move(it));
      return true;
    }
    case Op::FOR_ITER: {
      if (!need(1)) return false;
      VarRef& it = stack.back();
      if (!it->is(Var::Kind::Iter)) return t.fail(GB::UnsupportedType, "iteration over an unknown iterator");
      if (it->obj && PyRange_Check(it->obj.get()) && it->pos == 0 && it->items.size() > kUnrollBound) {
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
        stack.pop_back();
        ip = static_cast<size_t>(bc->indexOf(ins.target));
      }
      return true;
    }
    case Op::RETURN_VALUE:
      if (!need(1)) return false;
      result = pop();
      done = true;
      return true;
    case Op::RETURN_GENERATOR:
      if (!lazy) return t.fail(GB::GeneratorBreak, "generator");
      push(makeConst(PyRef::borrow(Py_None)));
      return true;
    case Op::YIELD_VALUE:
      if (lazy) {  // See Note [Lazy generators]: suspend with the value
        if (!need(1)) return false;
        result = pop();
        push(makeConst(PyRef::borrow(Py_None)));  // what the yield expression gives on resume
        suspended = true;
        done = true;
        return true;
      }
      return t.fail(GB::GeneratorBreak, "yield");

    // -- calls ----------------------------------------------------------------------------
    case Op::KW_NAMES:
      kwNames = PyRef::borrow(PyTuple_GET_ITEM(code->co_consts, ins.arg));
      return true;
    case Op::CALL: {
      if (!need(2 + static_cast<size_t>(ins.arg))) return false;
      std::vector<VarRef> args = popn(ins.arg);
      VarRef b = pop(), a = pop();
      VarRef fn;
      if (a->is(Var::Kind::Null)) {
        fn = b;
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
        if (!need(1)) return false;
        kwv = pop();
      }
      if (!need(2)) return false;
      VarRef argv = pop(), fn = pop();
      if (!stack.empty() && stack.back()->is(Var::Kind::Null)) stack.pop_back();
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
    case Op::MAKE_FUNCTION: {
      if (!need(1)) return false;
      VarRef codeVar = pop();
      if (!codeVar->is(Var::Kind::Const) || !PyCode_Check(codeVar->obj.get()))
        return t.fail(GB::Internal, "MAKE_FUNCTION without a code object");
      auto fn = makeVar(Var::Kind::Function, codeVar->obj);
      fn->globals = PyRef::borrow(globals);
      if (ins.arg & 0x08) {
        VarRef cl = pop();
        for (const VarRef& c : cl->items) {
          if (!c->is(Var::Kind::CellRef)) return t.fail(GB::Internal, "closure without cells");
          fn->cells.push_back(c->self);
        }
      }
      // Annotations are dropped: the tracker has no attributes to read them
      // through, and calling the function does not look at them.
      if (ins.arg & 0x04) pop();
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
      if (!need(1)) return false;
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
    case Op::RAISE_VARARGS:
      return t.fail(GB::RaiseStatement, "raise");
    case Op::LOAD_ASSERTION_ERROR:
      return t.fail(GB::RaiseStatement, "assert failed");
    default:
      return t.fail(GB::UnsupportedInstruction, ins.name());
  }
}

}  // namespace xacc::capture::translate
