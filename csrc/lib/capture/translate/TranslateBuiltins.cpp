// Python builtins called on trackers (`len`, `range`, `enumerate`, `zip`,
// `isinstance`, `getattr`, `min`/`max`, ...) and pure functions evaluated at
// capture time on constant arguments (`math.*`, `operator.*`, `sorted`, ...).
#include <algorithm>
#include <iterator>

#include "AttributeProtocol.h"
#include "PyTypes.h"
#include "Translator.h"

namespace xacc::capture::translate {

namespace {

bool isA(PyObject* o, PyObject* type) {
  return PyObject_TypeCheck(o, reinterpret_cast<PyTypeObject*>(type));
}

}  // namespace

VarRef Translator::listIndexAsTensor(const VarRef& idx) {
  // torch's indexing turns a list that holds no sequence, slice, Ellipsis,
  // None or tensor into one index tensor (treatSequenceAsTuple is false for
  // it); made inside the dispatcher, that tensor would have no graph value.
  // Only lists of exact ints are made here (their dtype is int64 for
  // certain); a list of bools is a mask whose result size depends on its
  // values, and anything else goes to torch as it is.
  if (!idx->is(Var::Kind::List) || idx->items.empty()) return idx;
  for (const VarRef& v : idx->items)
    if (!isConst(v) || !PyLong_CheckExact(v->obj.get())) return idx;
  PyRef list = PyRef::steal(PyList_New(static_cast<Py_ssize_t>(idx->items.size())));
  for (size_t i = 0; i < idx->items.size(); ++i) {
    PyObject* e = idx->items[i]->obj.get();
    Py_INCREF(e);
    PyList_SET_ITEM(list.get(), static_cast<Py_ssize_t>(i), e);
  }
  PyObject* t = PyObject_CallOneArg(pyTypes()->torchTensor, list.get());
  if (!t) {
    failPy(GB::UnsupportedTorchArgument, "list index");
    return nullptr;
  }
  PyRef tensor = PyRef::steal(t);
  return wrap(tensor.get(), nullptr);  // a real tensor made while tracing: an entry constant
}

VarRef Translator::tensorIndex(const VarRef& idx) {
  if (!idx->is(Var::Kind::Tuple) || idx->obj) return listIndexAsTensor(idx);
  // Inside a tuple index (`x[..., [-2], :]`) torch makes every list an index
  // tensor, whatever it holds (a tuple index is never re-read as a sequence).
  std::vector<VarRef> items;
  for (const VarRef& e : idx->items)
    if (!items.emplace_back(listIndexAsTensor(e))) return nullptr;
  return makeSeq(Var::Kind::Tuple, std::move(items));
}

// min()/max() with tensors whose values are known (Note [Known tensor values]
// in xacc/_src/capture/known.py): Python's algorithm, the first item greater
// (max) or less (min) than the best so far replaces it, so ties keep the
// earlier item; each comparison is recorded and its known truth decides. The
// result is the winning tracker itself, as eager returns the object.
VarRef Translator::knownMinMax(bool isMax, const std::vector<VarRef>& xs) {
  bool anyTensor = false;
  for (const VarRef& x : xs) {
    if (x->is(Var::Kind::Tensor) && !x->isNumpy()) {
      anyTensor = true;
      if (!knownValue(x, "bool")) return nullptr;
    } else if (!x->is(Var::Kind::Const)) {
      return nullptr;
    }
  }
  if (!anyTensor) return nullptr;
  VarRef best = xs[0];
  for (size_t i = 1; i < xs.size(); ++i) {
    VarRef c = binary(operatorFn(isMax ? "gt" : "lt"), xs[i], best);
    if (!c) return nullptr;
    int b = truth(c);
    if (b < 0) return nullptr;
    if (b) best = xs[i];
  }
  return best;
}

VarRef Translator::callBuiltin(PyObject* f, std::vector<VarRef>& args,
                               std::vector<std::pair<PyRef, VarRef>>& kwargs, bool& handled) {
  const PyTypes* T = pyTypes();
  handled = true;
  auto constant = [](PyObject* o) { return makeConst(PyRef::steal(o)); };
  auto bad = [&](const char* what) -> VarRef {
    fail(GB::UnsupportedType, what);
    return nullptr;
  };
  auto items = [&](const VarRef& v, std::vector<VarRef>& out) {
    VarRef it = iterate(v);
    return it && unpack(it, out);
  };
  auto typeOf = [&](const VarRef& v) { return this->typeOf(v); };
  // locals(), vars() and dir() read the running frame itself: a split frame's
  // break function has locals of its own (the graph's outputs, temporaries), so
  // these cannot run there. The failure has no offset: the frame runs in Python.
  static PyObject* frameReaders[] = {moduleAttr("builtins", "locals"), moduleAttr("builtins", "vars"),
                                     moduleAttr("builtins", "dir")};
  if (args.empty() && kwargs.empty() && std::find(std::begin(frameReaders), std::end(frameReaders), f) !=
                                            std::end(frameReaders)) {
    fail(GB::UntraceableCall, std::string(PyCFunction_Check(f) ? reinterpret_cast<PyCFunctionObject*>(f)->m_ml->ml_name : "?") +
                      "() reads the frame");
    failWhole();
    return nullptr;
  }
  if (f == T->len) {
    if (args.size() != 1) return bad("len() arguments");
    const VarRef& v = args[0];
    if (v->is(Var::Kind::Tensor)) {
      PyObject* dim = PyObject_CallMethod(v->obj.get(), "dim", nullptr);
      long nd = dim ? PyLong_AsLong(dim) : -1;
      Py_XDECREF(dim);
      if (nd < 0) {
        failPy(GB::UnsupportedType, "len()");
        return nullptr;
      }
      if (nd == 0) return bad("len() of a 0-d tensor");
      // Through the host: a size read by Python (see dynamic shapes); an
      // ndarray's length is its tensor's.
      return record(T->len, {v->isNumpy() ? makeVar(Var::Kind::Tensor, v->obj) : v}, {});
    }
    if (v->is(Var::Kind::Tuple) || v->is(Var::Kind::List) || v->is(Var::Kind::Dict))
      return constant(PyLong_FromSize_t(v->items.size()));
    if (v->is(Var::Kind::DictView)) return constant(PyLong_FromSize_t(v->self->items.size()));
    if (v->is(Var::Kind::InstanceDict)) return constant(PyLong_FromSize_t(v->self->items.size()));
    if (v->is(Var::Kind::UserObject)) return userLen(v);
    if (v->is(Var::Kind::Set)) return constant(PyLong_FromSsize_t(PySet_GET_SIZE(v->obj.get())));
    if (v->is(Var::Kind::Const) || (v->is(Var::Kind::Object) && isA(v->obj.get(), T->module))) {
      if (v->is(Var::Kind::Object)) {
        if (!isA(v->obj.get(), T->moduleList) && !isA(v->obj.get(), T->sequential) &&
            !isA(v->obj.get(), T->moduleDict))
          return bad("len() of a module that is no container (its __len__ is not modelled)");
        guardModuleKeys(v);
      }
      Py_ssize_t n = PyObject_Length(v->obj.get());
      if (n < 0) {
        failPy(GB::RaisesException, "len()");
        return nullptr;
      }
      return constant(PyLong_FromSsize_t(n));
    }
    if (v->is(Var::Kind::Object)) return objectLen(v);  // Note [len of outside objects]
    return bad("len() of an unsupported value");
  }
  if (f == T->isinstance) {
    if (args.size() != 2) return bad("isinstance() arguments");
    PyRef cls;
    if (args[1]->is(Var::Kind::Tuple)) {
      // A tuple of classes (torch.Tensor, a library's own class, ...):
      // classes are constants tracked as objects.
      cls = PyRef::steal(PyTuple_New(static_cast<Py_ssize_t>(args[1]->items.size())));
      for (size_t i = 0; i < args[1]->items.size(); ++i) {
        const VarRef& c = args[1]->items[i];
        if (!c->is(Var::Kind::Const) && !(c->is(Var::Kind::Object) && PyType_Check(c->obj.get())) &&
            !c->is(Var::Kind::Tuple))
          return bad("isinstance() with a class that is not a constant");
        PyRef e = constOf(c);
        if (!e) return nullptr;
        PyTuple_SET_ITEM(cls.get(), static_cast<Py_ssize_t>(i), e.release());
      }
    } else {
      cls = constOf(args[1]);
    }
    if (!cls) return nullptr;
    const VarRef& v = args[0];
    int r;
    // A tensor answers with its input's type (Note [Tensor types] in Translator.cpp).
    if (v->is(Var::Kind::Object) || v->is(Var::Kind::Const) || v->is(Var::Kind::Set)) {
      r = PyObject_IsInstance(v->obj.get(), cls.get());
    } else {
      PyObject* tp = typeOf(v);
      if (!tp) return bad("isinstance() of an unsupported value");
      r = PyObject_IsSubclass(tp, cls.get());
      PyObject* own = v->is(Var::Kind::UserObject) && v->self ? v->self->obj.get() : nullptr;
      if (r == 0 && own && PyType_Check(own) && !isPolyfillClass(own) &&
          ownGetattribute(reinterpret_cast<PyTypeObject*>(own)))  // Note [Attribute protocol]
        return bad("isinstance() False by type of an object whose __getattribute__ answers __class__");
    }
    if (r < 0) {
      failPy(GB::RaisesException, "isinstance()");
      return nullptr;
    }
    return makeConst(PyRef::borrow(r ? Py_True : Py_False));
  }
  if (f == T->type && args.size() == 1 && kwargs.empty()) {
    PyObject* tp = typeOf(args[0]);
    if (!tp) return bad("type() of an unsupported value");
    return makeVar(Var::Kind::Object, PyRef::borrow(tp));
  }
  if (f == T->getattr && (args.size() == 2 || args.size() == 3)) {
    PyRef name = constOf(args[1]);
    if (!name || !PyUnicode_Check(name.get())) return failed() ? nullptr : bad("getattr() name");
    if (args.size() == 3 && (args[0]->is(Var::Kind::Object) || args[0]->is(Var::Kind::Const)) &&
        !PyObject_HasAttr(args[0]->obj.get(), name.get()) && !attrWritten(args[0], name.get())) {
      // getattr(None, "x", default), getattr(obj, "missing", default): the
      // attribute's absence is guarded (a later call may find it set).
      guardHas(args[0]->source, Leaf::Kind::HasAttr, name.get(), false);
      return args[2];
    }
    if (args.size() == 3 && args[0]->is(Var::Kind::UserObject) && args[0]->self) {
      if (VarRef d = userGetattrDefault(args[0], name.get(), args[2])) return d;
      if (failed()) return nullptr;
    }
    if (args.size() == 3 && args[0]->is(Var::Kind::Tensor) && !args[0]->isNumpy()) {
      // A name torch.Tensor (or the tensor's subclass) does not define: the
      // default, unless the tensor object itself holds the attribute. An input
      // tensor's instance attributes are guarded absent; a tensor computed in
      // the frame is new, and the translator never stores attributes on one.
      PyObject* tp = typeOf(args[0]);
      if (tp && !PyObject_HasAttr(tp, name.get()) && !attrWritten(args[0], name.get())) {
        if (SourceRef src = inputSource(args[0]) ? inputSource(args[0]) : args[0]->source) {
          guardHas(src, Leaf::Kind::HasAttr, name.get(), false);
          return args[2];
        }
        if (valueOf(args[0]) >= 0) return args[2];
      }
    }
    return getattr(args[0], name.get());
  }
  if (f == T->hasattr && args.size() == 2) {
    PyRef name = constOf(args[1]);
    if (!name) return nullptr;
    if (args[0]->isNumpy()) return bad("hasattr() on an ndarray");
    const VarRef& v = args[0];
    if (v->is(Var::Kind::Object) && PyUnicode_Check(name.get()) && attrWritten(v, name.get()))
      return makeConst(PyRef::borrow(Py_True));  // Note [Replayed attribute writes]
    if (v->is(Var::Kind::Object) || v->is(Var::Kind::Tensor) || v->is(Var::Kind::Const)) {
      bool has = PyObject_HasAttr(v->obj.get(), name.get());
      if (!v->is(Var::Kind::Tensor) && PyUnicode_Check(name.get()))
        guardHas(v->source, Leaf::Kind::HasAttr, name.get(), has);
      return makeConst(PyRef::borrow(has ? Py_True : Py_False));
    }
    if ((v->is(Var::Kind::Tuple) || v->is(Var::Kind::List) || v->is(Var::Kind::Dict)) && !v->obj) {
      // A container made or read by the program: its attributes are its type's
      // (named tuples' fields included).
      PyObject* tp = typeOf(v);
      if (tp) return makeConst(PyRef::borrow(PyObject_HasAttr(tp, name.get()) ? Py_True : Py_False));
    }
    if (v->is(Var::Kind::Tuple) && v->obj && PyType_Check(v->obj.get()) && PyUnicode_Check(name.get())) {
      // An instance of a tuple subclass made here (a named tuple): with no
      // instance dict, its attributes are its class's. A field's getter
      // (_tuplegetter) or a function always answers; another descriptor of the
      // class might raise AttributeError, and is not modelled.
      auto* tp = reinterpret_cast<PyTypeObject*>(v->obj.get());
      static PyObject* tupleGetter = moduleAttr("_collections", "_tuplegetter");
      PyObject* attr = _PyType_Lookup(tp, name.get());  // borrowed
      const bool plain = !attr || !Py_TYPE(attr)->tp_descr_get || PyFunction_Check(attr) ||
                         (tupleGetter && Py_TYPE(attr) == reinterpret_cast<PyTypeObject*>(tupleGetter));
      if (!v->source && tp->tp_dictoffset == 0 && tp->tp_getattro == PyObject_GenericGetAttr && plain)
        return makeConst(PyRef::borrow(attr ? Py_True : Py_False));
    }
    if (isModelOutputVar(v) && PyUnicode_Check(name.get())) {
      // transformers' ModelOutput (TranslateDataclass.cpp). One that came in
      // through a source is asked, and the answer guarded. One made here has
      // every field as an attribute (its __init__ sets them all), and no other
      // instance attribute (writing one is a break): a name that is no field
      // is found on the class or not at all, unless a __getattr__ or a
      // descriptor of the class could answer otherwise.
      if (v->source) {
        for (const auto& [obj, tracker] : containerInputs_) {
          if (tracker.get() != v.get()) continue;
          const int has = PyObject_HasAttr(obj, name.get());
          guardHas(v->source, Leaf::Kind::HasAttr, name.get(), has != 0);
          return makeConst(PyRef::borrow(has ? Py_True : Py_False));
        }
      } else {
        auto* tp = reinterpret_cast<PyTypeObject*>(v->obj.get());
        const int field = PySequence_Contains(v->fields.get(), name.get());
        if (field < 0) PyErr_Clear();
        if (field == 1) return makeConst(PyRef::borrow(Py_True));
        PyObject* attr = _PyType_Lookup(tp, name.get());  // borrowed
        const bool plain = !attr || !Py_TYPE(attr)->tp_descr_get || PyFunction_Check(attr);
        if (field == 0 && tp->tp_getattro == PyObject_GenericGetAttr && plain)
          return makeConst(PyRef::borrow(attr ? Py_True : Py_False));
      }
      return bad("hasattr() on a ModelOutput whose class answers attribute reads itself");
    }
    if (v->is(Var::Kind::UserObject)) {
      int has = userHasattr(v, name.get());
      if (has == -1) return nullptr;
      if (has >= 0) return makeConst(PyRef::borrow(has ? Py_True : Py_False));
      return bad("hasattr() on a library object's stand-in or of a name its metaclass holds");
    }
    return bad("hasattr() on a container");
  }
  if (f == T->callable && args.size() == 1) {
    // callable(v) is whether v's type has a tp_call. A UserObject is callable
    // when its class defines __call__ (it was False for every one); a
    // polyfill's stand-in for a library object (Note [Context managers])
    // answers nothing about its type: a break.
    const VarRef& v = args[0];
    int c = -1;
    switch (v->kind) {
      case Var::Kind::Object:
      case Var::Kind::Const:
        c = v->obj && PyCallable_Check(v->obj.get()) ? 1 : 0;
        break;
      case Var::Kind::Function:
      case Var::Kind::BoundMethod:
      case Var::Kind::TensorMethod:
      case Var::Kind::ContainerMethod:
      case Var::Kind::GradMode:  // torch.no_grad() & co. are decorators too
        c = 1;
        break;
      case Var::Kind::Tuple:
      case Var::Kind::List:
      case Var::Kind::Dict:
        // A subclass instance's tracker holds its class (a tuple subclass's __new__):
        // a plain container is not callable, a subclass may define __call__.
        if (v->obj && PyType_Check(v->obj.get()))
          c = reinterpret_cast<PyTypeObject*>(v->obj.get())->tp_call ? 1 : 0;
        else if (!v->obj)
          c = 0;
        break;
      case Var::Kind::Exception:  // obj: its class
        if (v->obj && PyType_Check(v->obj.get()))
          c = reinterpret_cast<PyTypeObject*>(v->obj.get())->tp_call ? 1 : 0;
        break;
      case Var::Kind::Iter:  // a builtin iterator or a generator
      case Var::Kind::Tensor:
      case Var::Kind::Set:
      case Var::Kind::DictView:
      case Var::Kind::InstanceDict:
      case Var::Kind::ItemOf:
      case Var::Kind::SymScalar:
        c = 0;
        break;
      case Var::Kind::UserObject:
        if (v->self && v->self->obj && PyType_Check(v->self->obj.get()) && !isPolyfillClass(v->self->obj.get()))
          c = reinterpret_cast<PyTypeObject*>(v->self->obj.get())->tp_call ? 1 : 0;
        break;
      default:
        break;
    }
    if (c < 0) return bad("callable() of a value whose type the translator does not answer");
    return makeConst(PyRef::borrow(c ? Py_True : Py_False));
  }
  if (f == T->cudaSynchronize) return makeConst(PyRef::borrow(Py_None));
  // The rest see plain values: symbolic numbers would be specialized here.
  if (f == T->range) {
    PyRef tuple = PyRef::steal(PyTuple_New(static_cast<Py_ssize_t>(args.size())));
    for (size_t i = 0; i < args.size(); ++i) {
      PyRef c = constOf(args[i]);
      if (!c) return nullptr;
      PyTuple_SET_ITEM(tuple.get(), static_cast<Py_ssize_t>(i), c.release());
    }
    PyObject* r = PyObject_Call(T->range, tuple.get(), nullptr);
    if (!r) {
      failPy(GB::RaisesException, "range()");
      return nullptr;
    }
    return constant(r);
  }
  if (f == T->enumerate) {
    if (args.empty() || args.size() > 2) return bad("enumerate()");
    VarRef s = args.size() > 1 ? args[1] : nullptr;
    for (auto& [k, v] : kwargs) {
      if (PyUnicode_CompareWithASCIIString(k.get(), "start") != 0 || s) return bad("enumerate() arguments");
      s = v;
    }
    int64_t start = 0;
    if (s) {
      PyRef c = constOf(s);
      if (!c) return nullptr;
      if (!PyLong_CheckExact(c.get())) return bad("enumerate() with a start that is not an int");
      start = PyLong_AsLongLong(c.get());
      if (start == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        return bad("enumerate() start out of range");
      }
    }
    VarRef inner = iterate(args[0]);
    if (!inner) return nullptr;
    auto it = makeVar(Var::Kind::Iter);
    it->iter = Var::IterOf::Enumerate;
    it->self = std::move(inner);
    it->count = start;
    return it;
  }
  if (f == T->zip) {
    // strict=False is plain zip; strict=True is too when every argument is a
    // tuple (fixed length) and the lengths agree. Otherwise the iterator checks
    // the lengths as Python does, when the first argument runs out (advance).
    bool checked = false;
    for (const auto& [k, v] : kwargs) {
      PyRef flag = isConst(v) ? constOf(v) : PyRef();
      int strict = flag && PyUnicode_CompareWithASCIIString(k.get(), "strict") == 0 ? PyObject_IsTrue(flag.get()) : -1;
      if (strict < 0) return bad("zip() with keyword arguments other than a constant strict=");
      for (const VarRef& a : args)
        if (strict && (!a->is(Var::Kind::Tuple) || a->items.size() != args[0]->items.size())) checked = true;
    }
    auto it = makeVar(Var::Kind::Iter);
    it->iter = Var::IterOf::Zip;
    it->count = checked ? 1 : 0;  // Zip: 1 for zip(strict=True) checked while iterating
    for (const VarRef& a : args) {
      VarRef inner = iterate(a);
      if (!inner) return nullptr;
      it->items.push_back(std::move(inner));
    }
    return it;
  }
  if (f == T->reversed && args.size() == 1) {
    auto it = makeVar(Var::Kind::Iter);
    if (args[0]->is(Var::Kind::List)) {
      it->iter = Var::IterOf::Reversed;
      it->self = args[0];
      it->pos = args[0]->items.size();
      return it;
    }
    if (args[0]->is(Var::Kind::Iter)) return bad("reversed() of an iterator");
    // A user object: its class's __reversed__ inlined (collections.abc.Sequence's
    // is a generator over self[i]), as reversed() calls it. Without one CPython
    // walks __len__/__getitem__ lazily: not modelled (its __iter__ alone would
    // make a snapshot where eager has a live iterator).
    if (args[0]->is(Var::Kind::UserObject)) {
      static PyObject* reversedName = PyUnicode_InternFromString("__reversed__");
      bool handled = false;
      VarRef r = userDunder(args[0], reversedName, {}, handled);
      if (failed()) return nullptr;
      if (!handled) return bad("reversed() of a user object without __reversed__");
      if (!r) return nullptr;
      if (!r->is(Var::Kind::Iter)) return bad("__reversed__ returned a value that is not an iterator the translator models");
      return r;
    }
    if (!unpack(args[0], it->items)) return nullptr;
    std::reverse(it->items.begin(), it->items.end());
    return it;
  }
  if (f == T->iter && args.size() == 1) return iterate(args[0]);
  if (f == T->next && args.size() == 1) {
    const VarRef& it = args[0];
    if (!it->is(Var::Kind::Iter)) return bad("next() on an unknown iterator");
    VarRef x;
    if (!advance(it, x)) return nullptr;
    if (!x) return bad("next() on an exhausted iterator (raises StopIteration)");
    return x;
  }
  if ((f == T->tuple || f == T->list) && args.size() <= 1 && kwargs.empty()) {
    std::vector<VarRef> xs;
    if (!args.empty() && !items(args[0], xs)) return nullptr;
    return makeSeq(f == T->tuple ? Var::Kind::Tuple : Var::Kind::List, std::move(xs));
  }
  if (f == T->dict && args.size() <= 1) {
    auto d = makeVar(Var::Kind::Dict);
    auto put = [&](PyRef k, VarRef v) {
      for (size_t j = 0; j < d->keys.size(); ++j)
        if (PyObject_RichCompareBool(d->keys[j].get(), k.get(), Py_EQ) == 1) {
          d->items[j] = std::move(v);
          return;
        }
      d->keys.push_back(std::move(k));
      d->items.push_back(std::move(v));
    };
    if (!args.empty()) {
      if (args[0]->is(Var::Kind::Dict)) {
        for (size_t j = 0; j < args[0]->keys.size(); ++j) put(args[0]->keys[j], args[0]->items[j]);
      } else if (args[0]->is(Var::Kind::UserObject) &&
                 PyObject_HasAttrString(args[0]->self->obj.get(), "keys")) {
        // A dict model (Note [Modelled library objects]): dict_merge copies a
        // dict subclass's own storage (or, for an OrderedDict, reads keys() and
        // [] in order: the same items), which the model keeps in `_xacc_d`.
        PyObject* lib = modelledType(args[0]->self->obj.get());
        VarRef store;
        for (size_t j = 0; j < args[0]->keys.size(); ++j)
          if (PyUnicode_Check(args[0]->keys[j].get()) &&
              PyUnicode_CompareWithASCIIString(args[0]->keys[j].get(), "_xacc_d") == 0)
            store = args[0]->items[j];
        if (!lib || !PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(lib), &PyDict_Type) || !store ||
            !store->is(Var::Kind::Dict) || store->obj)
          return bad("dict() of a mapping object (keys() and [] are not traced here)");
        for (size_t j = 0; j < store->keys.size(); ++j) put(store->keys[j], store->items[j]);
      } else {
        std::vector<VarRef> pairs;
        if (!items(args[0], pairs)) return nullptr;
        for (auto& p : pairs) {
          std::vector<VarRef> kv;
          if (!unpack(p, kv)) return nullptr;
          if (kv.size() != 2) return bad("dict() of non-pairs");
          PyRef k = constOf(kv[0]);
          if (!k) return nullptr;
          put(std::move(k), kv[1]);
        }
      }
    }
    for (auto& [k, v] : kwargs) put(k, v);
    return d;
  }
  if (f == T->sum && !args.empty()) {
    std::vector<VarRef> xs;
    if (!items(args[0], xs)) return nullptr;
    VarRef acc = args.size() > 1 ? args[1] : constant(PyLong_FromLong(0));
    for (auto& [k, v] : kwargs)
      if (PyUnicode_CompareWithASCIIString(k.get(), "start") == 0) acc = v;
    for (auto& x : xs) {
      acc = binary(operatorFn("add"), acc, x);
      if (!acc) return nullptr;
    }
    return acc;
  }
  if ((f == T->min || f == T->max) && !args.empty() && kwargs.empty()) {
    std::vector<VarRef> xs;
    if (args.size() > 1) {
      xs = args;
    } else if (!items(args[0], xs)) {
      return nullptr;
    }
    if (VarRef best = knownMinMax(f == T->max, xs)) return best;
    if (failed()) return nullptr;
    PyRef tuple = PyRef::steal(PyTuple_New(static_cast<Py_ssize_t>(xs.size())));
    for (size_t i = 0; i < xs.size(); ++i) {
      if (!isConst(xs[i])) return bad("min()/max() of non-constants");
      PyRef c = constOf(xs[i]);
      PyTuple_SET_ITEM(tuple.get(), static_cast<Py_ssize_t>(i), c.release());
    }
    PyObject* r = PyObject_CallOneArg(f, tuple.get());
    if (!r) {
      failPy(GB::RaisesException, "min()/max()");
      return nullptr;
    }
    return constant(r);
  }
  if (f == T->abs && args.size() == 1) return unary(f, args[0]);
  if ((f == T->sorted || f == T->any || f == T->all) && args.size() == 1 && !args[0]->is(Var::Kind::Const) &&
      !args[0]->is(Var::Kind::Object)) {
    // An iterable tracker of constants: evaluated on its items now.
    std::vector<VarRef> xs;
    if (!items(args[0], xs)) return nullptr;
    PyRef tuple = PyRef::steal(PyTuple_New(static_cast<Py_ssize_t>(xs.size())));
    for (size_t i = 0; i < xs.size(); ++i) {
      if (!isConst(xs[i])) return bad("sorted()/any()/all() of non-constants");
      PyTuple_SET_ITEM(tuple.get(), static_cast<Py_ssize_t>(i), constOf(xs[i]).release());
    }
    PyRef kw;
    if (!kwargs.empty()) {
      kw = PyRef::steal(PyDict_New());
      for (auto& [k, v] : kwargs) {
        if (!isConst(v)) return bad("sorted() with a non-constant key");
        PyDict_SetItem(kw.get(), k.get(), constOf(v).get());
      }
    }
    PyRef a = PyRef::steal(PyTuple_Pack(1, tuple.get()));
    PyObject* r = PyObject_Call(f, a.get(), kw.get());
    if (!r) {
      failPy(GB::RaisesException, "sorted()/any()/all()");
      return nullptr;
    }
    PyRef rr = PyRef::steal(r);
    return fromConst(r);
  }
  if ((f == T->intFn || f == T->floatFn || f == T->boolFn) && !args.empty() && args[0]->is(Var::Kind::Tensor)) {
    const char* conv = f == T->intFn ? "int" : f == T->floatFn ? "float" : "bool";
    if (args.size() == 1 && kwargs.empty())
      if (PyRef k = knownValue(args[0], conv)) return makeConst(std::move(k));
    fail(GB::TensorReadBack, "int()/float()/bool() of a tensor");
    return nullptr;
  }
  if ((f == T->str || f == T->repr) && args.size() == 1 && kwargs.empty() && args[0]->is(Var::Kind::Object) &&
      PyType_CheckExact(args[0]->obj.get())) {
    // str(cls): "<class 'module.Name'>", fixed for a class (guarded by id).
    PyObject* r = PyObject_Repr(args[0]->obj.get());
    if (!r) {
      failPy(GB::UnsupportedType, "str() of a class");
      return nullptr;
    }
    return makeConst(PyRef::steal(r));
  }
  // Pure functions on constant arguments: evaluated now.
  bool pure = f == T->intFn || f == T->floatFn || f == T->boolFn || f == T->str || f == T->round ||
              f == T->sorted || f == T->any || f == T->all || f == T->slice || f == T->divmod || f == T->pow ||
              f == T->issubclass || f == T->repr || f == T->hash || f == T->abs || f == T->min || f == T->max ||
              f == T->len || f == T->tuple || f == T->list || f == T->range;
  if (!pure && (PyCFunction_Check(f) || PyObject_TypeCheck(f, &PyCFunction_Type))) {
    PyObject* self = PyCFunction_GET_SELF(f);
    pure = self && (self == T->mathModule || self == T->operatorModule);
  }
  if (!pure) {
    handled = false;
    return nullptr;
  }
  PyRef tuple = PyRef::steal(PyTuple_New(static_cast<Py_ssize_t>(args.size())));
  for (size_t i = 0; i < args.size(); ++i) {
    // A class (identity guarded where it came from) is a constant to str()
    // and repr(): `str(model.__class__)` as a registry key.
    bool cls = (f == T->str || f == T->repr) && args[i]->is(Var::Kind::Object) && PyType_Check(args[i]->obj.get());
    if (!isConst(args[i]) && !args[i]->is(Var::Kind::Set) && !cls) {
      handled = false;
      return nullptr;
    }
    PyTuple_SET_ITEM(tuple.get(), static_cast<Py_ssize_t>(i), constOf(args[i]).release());
  }
  PyRef kw;
  if (!kwargs.empty()) {
    kw = PyRef::steal(PyDict_New());
    for (auto& [k, v] : kwargs) {
      if (!isConst(v)) {
        handled = false;
        return nullptr;
      }
      PyDict_SetItem(kw.get(), k.get(), constOf(v).get());
    }
  }
  PyObject* r = PyObject_Call(f, tuple.get(), kw.get());
  if (!r) {
    failPy(GB::RaisesException, "builtin raised");
    return nullptr;
  }
  PyRef rr = PyRef::steal(r);
  return fromConst(rr.get());
}

}  // namespace xacc::capture::translate
