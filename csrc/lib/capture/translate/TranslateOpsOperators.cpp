// Opcode families (Note [Opcode families] in TranslateOps.cpp): attribute
// reads and writes, unary, binary, comparison, identity and membership operators.
#include <algorithm>
#include <cstring>

#include "BytecodeFacts.h"
#include "PyTypes.h"
#include "Translator.h"

namespace xacc::capture::translate {

bool Frame::stepAttributes(const Instr& ins, bool& done, VarRef& result) {
  switch (ins.op) {
    // -- attributes --------------------------------------------------------------
    case Op::LOAD_ATTR: {
      if (!need(ins, 1)) return false;
      const bool methodBit = bytecodeFacts().loadAttrMethodBit;
      if (methodBit && (ins.arg & 1)) {
        // 3.12 folded LOAD_METHOD into LOAD_ATTR: the low bit asks for its
        // stack shape, the name is arg >> 1.
        Instr method = ins;
        method.op = Op::LOAD_METHOD;
        method.arg = ins.arg >> 1;
        return stepAttributes(method, done, result);
      }
      VarRef v = t.getattr(pop(), PyTuple_GET_ITEM(code->co_names, methodBit ? ins.arg >> 1 : ins.arg));
      if (!v) return false;
      push(std::move(v));
      return true;
    }
    case Op::LOAD_METHOD: {
      if (!need(ins, 1)) return false;
      VarRef obj = pop();
      VarRef v = t.getattr(obj, PyTuple_GET_ITEM(code->co_names, ins.arg));
      if (!v) return false;
      pushCallable(std::move(v));  // [NULL, bound attribute] (3.13: [attribute, NULL])
      return true;
    }
    case Op::LOAD_SUPER_ATTR: {
      // 3.12: `super().name` and `super(C, o).name` in one instruction. On the
      // stack: the global `super`, the class (the __class__ cell, or C) and the
      // instance (the first argument's current value, or o); arg >> 2 names
      // the attribute, bit 0 asks for LOAD_METHOD's stack shape. With the
      // builtin super this is super(class, instance).name, as modelled for 3.11's
      // call of super().
      if (!need(ins, 3)) return false;
      VarRef self = pop(), cls = pop(), sup = pop();
      if (!sup->is(Var::Kind::Object) || sup->obj.get() != reinterpret_cast<PyObject*>(&PySuper_Type))
        return t.fail(GB::UnsupportedInstruction, "LOAD_SUPER_ATTR with a `super` that is not the builtin");
      std::vector<VarRef> args{cls, self};
      VarRef sv = t.superOf(*this, args);
      if (!sv) return false;
      VarRef v = t.getattr(sv, PyTuple_GET_ITEM(code->co_names, ins.arg >> 2));
      if (!v) return false;
      if (ins.arg & 1)
        pushCallable(std::move(v));
      else
        push(std::move(v));
      return true;
    }
    case Op::STORE_ATTR: {
      if (!need(ins, 2)) return false;
      VarRef obj = pop(), value = pop();
      return t.storeAttr(obj, PyTuple_GET_ITEM(code->co_names, ins.arg), value);
    }
    case Op::DELETE_ATTR:  // Note [Deleting attributes]
      if (!need(ins, 1)) return false;
      return t.delAttr(pop(), PyTuple_GET_ITEM(code->co_names, ins.arg));
    default:
      return misrouted(ins);
  }
}

bool Frame::stepOperators(const Instr& ins, bool& done, VarRef& result) {
  switch (ins.op) {
    // -- operators -----------------------------------------------------------------
    case Op::BINARY_OP: {
      if (!need(ins, 2)) return false;
      PyObject* op = binaryOperator(ins.arg);
      if (!op) return t.failPy(GB::Internal, "BINARY_OP argument");
      VarRef b = pop(), a = pop();
      VarRef r = t.binary(op, a, b);
      if (!r) return false;
      push(std::move(r));
      return true;
    }
    case Op::COMPARE_OP: {
      if (!need(ins, 2)) return false;
      PyObject* op = compareOperator(ins.arg >> bytecodeFacts().compareShift);
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
      if (!need(ins, 1)) return false;
      const char* n = ins.op == Op::UNARY_NEGATIVE ? "neg" : ins.op == Op::UNARY_POSITIVE ? "pos" : "invert";
      VarRef r = t.unary(operatorFn(n), pop());
      if (!r) return false;
      push(std::move(r));
      return true;
    }
    case Op::UNARY_NOT: {
      if (!need(ins, 1)) return false;
      int b = t.truth(pop());
      if (b < 0) return false;
      push(makeConst(PyRef::borrow(b ? Py_False : Py_True)));
      return true;
    }
    case Op::IS_OP: {
      if (!need(ins, 2)) return false;
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
        // Containers read through two sources: trackers do not hold the
        // objects. Two that are both inputs of containerInput are two objects
        // (one object read twice gets one tracker), kept apart by their
        // Distinct guards; of any other the identity is not known.
        if (!t.isDistinctInput(a) || !t.isDistinctInput(b))
          return t.fail(GB::UnsupportedType, "'is' between two containers read from outside the frame");
        same = false;
      } else if (a->is(Var::Kind::Tensor) && b->is(Var::Kind::Tensor)) {
        same = a->obj.get() == b->obj.get() && a->np == b->np;
      } else if ((a->is(Var::Kind::Const) && a->obj.get() == Py_None) ||
                 (b->is(Var::Kind::Const) && b->obj.get() == Py_None)) {
        same = false;  // a tracked non-constant is never None
      } else if (a->is(Var::Kind::InstanceDict) && b->is(Var::Kind::InstanceDict)) {
        // Each read of `obj.__dict__` makes a view tracker, but Python has one
        // dict per object (Note [Instance dicts]): the same object, the same dict.
        same = a->self.get() == b->self.get();
      } else {
        same = a.get() == b.get();
      }
      push(makeConst(PyRef::borrow(same != (ins.arg != 0) ? Py_True : Py_False)));
      return true;
    }
    case Op::CONTAINS_OP: {
      if (!need(ins, 2)) return false;
      VarRef container = pop(), item = pop();
      // `k in d.keys()` is `k in d` (the view is live); values and items views compare
      // their items by ==, which only constants answer here.
      if (container->is(Var::Kind::DictView)) {
        if (container->name == "keys" && container->self->is(Var::Kind::UserObject))  // Note [Instance dicts]
          container = t.instanceDict(container->self);
        else
          container = container->name == "keys" ? container->self : makeSeq(Var::Kind::List, viewItems(*container));
        if (!container) return false;
      }
      auto answer = [&](int r) {
        push(makeConst(PyRef::borrow((r != 0) != (ins.arg != 0) ? Py_True : Py_False)));
        return true;
      };
      if (container->is(Var::Kind::InstanceDict)) container = t.instanceDictNow(container);  // Note [Instance dicts]
      int r = t.objectContains(container, item);  // an object read from outside the frame
      if (r == -1) return false;
      if (r >= 0) return answer(r);
      auto intLike = [&](const VarRef& v) {
        return (v->is(Var::Kind::SymScalar) || t.isConst(v)) && v->obj && PyLong_CheckExact(v->obj.get());
      };
      if ((container->is(Var::Kind::List) || container->is(Var::Kind::Tuple)) && intLike(item) &&
          std::all_of(container->items.begin(), container->items.end(), intLike) &&
          std::any_of(container->items.begin(), container->items.end(),
                      [](const VarRef& i) { return i->is(Var::Kind::SymScalar); })) {
        // `0 in x.shape[:d] + (n, k)` with symbolic sizes: Python's `==` per
        // item, left to right (between ints identity decides nothing more), so a
        // size compares as a relation (Note [Size relations]) and stays symbolic.
        for (const VarRef& i : container->items) {
          VarRef eq = t.binary(operatorFn("eq"), i, item);
          if (!eq) return false;
          int b = t.truth(eq);
          if (b < 0) return false;
          if (b) return answer(1);
        }
        return answer(0);
      }
      PyRef k = container->is(Var::Kind::Set) ? t.setKey(item) : t.constOf(item);
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
    case Op::BINARY_SLICE:
    case Op::STORE_SLICE: {
      // 3.12: container[start:end] (= value) is BUILD_SLICE 2 on the two
      // bounds, then BINARY_SUBSCR (STORE_SUBSCR) on the slice.
      if (!need(ins, ins.op == Op::STORE_SLICE ? 4 : 3)) return false;
      Instr part = ins;
      part.op = Op::BUILD_SLICE;
      part.arg = 2;
      if (!step(part, done, result)) return false;
      part.op = ins.op == Op::STORE_SLICE ? Op::STORE_SUBSCR : Op::BINARY_SUBSCR;
      part.arg = 0;
      return step(part, done, result);
    }
    case Op::BINARY_SUBSCR: {
      if (!need(ins, 2)) return false;
      VarRef idx = pop(), obj = pop();
      VarRef r = t.subscr(obj, idx);
      if (!r) return false;
      push(std::move(r));
      return true;
    }
    case Op::STORE_SUBSCR: {
      if (!need(ins, 3)) return false;
      VarRef idx = stack[stack.size() - 1], obj = stack[stack.size() - 2], val = stack[stack.size() - 3];
      if (!t.storeSubscr(obj, idx, val)) return false;
      popn(3);
      return true;
    }
    case Op::DELETE_SUBSCR: {
      // del on a list or a plain dict: polyfills.py's list/dict.__delitem__.
      if (!need(ins, 2)) return false;
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
    default:
      return misrouted(ins);
  }
}

}  // namespace xacc::capture::translate
