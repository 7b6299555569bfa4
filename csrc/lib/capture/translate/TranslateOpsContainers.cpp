// Opcode family (Note [Opcode families] in TranslateOps.cpp): subscripts,
// building and extending tuples, lists, sets, dicts, slices and strings, unpacking.
#include <algorithm>
#include <cstring>

#include "PyTypes.h"
#include "Translator.h"

namespace xacc::capture::translate {

// Whether the slice BUILD_SLICE is about to push onto `stack` only indexes a tensor already on the stack: the instructions after it
// load constants or locals and build slices and tuples until a BINARY_SUBSCR
// or STORE_SUBSCR whose index holds the slice and whose container is a tensor
// tracker. Then a tensor bound of known value (Note [Known tensor values] in
// xacc/_src/capture/known.py) may enter the slice as its number: torch's
// indexing reads it through __index__, and the slice itself is never seen.
static bool sliceIndexesTensor(const Bytecode& bc, size_t ip, const std::vector<VarRef>& stack) {
  const auto& instrs = bc.instrs();
  const size_t slice = stack.size();
  size_t h = slice + 1;  // stack height with the slice pushed
  size_t pos = slice;    // where the value holding the slice is
  size_t kept = slice;   // stack entries below this one are the frame's, untouched
  for (size_t i = ip; i < instrs.size() && i < ip + 12; ++i) {
    const Instr& in = instrs[i];
    switch (in.op) {
      case Op::LOAD_CONST:
      case Op::LOAD_FAST:
        ++h;
        break;
      case Op::BUILD_SLICE:
      case Op::BUILD_TUPLE: {
        size_t n = static_cast<size_t>(in.arg);
        if (n < 1 || n > h) return false;
        if (pos >= h - n) pos = h - n;  // consumed into the new tuple
        kept = std::min(kept, h - n);
        h = h - n + 1;
        break;
      }
      case Op::BINARY_SUBSCR:
      case Op::STORE_SUBSCR:
        // The index is TOS (holding the slice), the container below it is a
        // tensor that was on the stack before the slice.
        return pos == h - 1 && h >= 2 && h - 2 < kept && stack[h - 2]->is(Var::Kind::Tensor) &&
               !stack[h - 2]->isNumpy();
      default:
        return false;
    }
  }
  return false;
}

bool Frame::stepContainers(const Instr& ins, bool& done, VarRef& result) {
  switch (ins.op) {
    // -- containers ------------------------------------------------------------------
    case Op::BUILD_TUPLE:
    case Op::BUILD_LIST:
      if (!need(ins, static_cast<size_t>(ins.arg))) return false;
      push(makeSeq(ins.op == Op::BUILD_TUPLE ? Var::Kind::Tuple : Var::Kind::List, popn(ins.arg)));
      return true;
    case Op::BUILD_SET: {
      if (!need(ins, static_cast<size_t>(ins.arg))) return false;
      VarRef s = t.makeSet(popn(ins.arg), false);
      if (!s) return false;
      push(std::move(s));
      return true;
    }
    case Op::SET_ADD:
    case Op::SET_UPDATE: {
      if (!need(ins, 1 + static_cast<size_t>(ins.arg))) return false;
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
      if (!need(ins, 2 * static_cast<size_t>(ins.arg))) return false;
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
      if (!need(ins, 1 + static_cast<size_t>(ins.arg))) return false;
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
      if (!need(ins, static_cast<size_t>(ins.arg))) return false;
      auto parts = popn(ins.arg);
      PyRef p[3];
      bool sym = false;
      for (size_t i = 0; i < parts.size(); ++i) {
        if (isSizeSym(parts[i])) {
          p[i] = parts[i]->obj;  // See Note [Symbolic sizes]: a slice of a tensor keeps it symbolic
          sym = true;
        } else if (parts[i]->is(Var::Kind::Tensor) && sliceIndexesTensor(*bc, ip, stack) &&
                   (p[i] = t.knownValue(parts[i], "index"))) {
          // a known tensor bound of a tensor's slice: its number (sliceIndexesTensor)
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
      if (!need(ins, static_cast<size_t>(ins.arg))) return false;
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
        if (!need(ins, 1) || !(spec = t.constOf(pop()))) return false;
      }
      if (!need(ins, 1)) return false;
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
      if (!need(ins, 1 + static_cast<size_t>(ins.arg))) return false;
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
      if (!need(ins, 1)) return false;
      std::vector<VarRef> items;
      if (!t.unpack(pop(), items)) return false;
      push(makeSeq(Var::Kind::Tuple, std::move(items)));
      return true;
    }
    case Op::MAP_ADD: {
      if (!need(ins, 2 + static_cast<size_t>(ins.arg))) return false;
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
      if (!need(ins, 1 + static_cast<size_t>(ins.arg))) return false;
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
      if (!need(ins, 1)) return false;
      std::vector<VarRef> items;
      if (!t.unpack(pop(), items)) return false;
      if (items.size() != static_cast<size_t>(ins.arg)) return t.fail(GB::RaisesException, "unpack length mismatch");
      for (auto it = items.rbegin(); it != items.rend(); ++it) push(*it);
      return true;
    }
    case Op::UNPACK_EX: {
      if (!need(ins, 1)) return false;
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
    default:
      return misrouted(ins);
  }
}

}  // namespace xacc::capture::translate
