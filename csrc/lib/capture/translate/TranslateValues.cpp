// Value semantics shared by the opcode handlers: attribute reads (modules,
// user objects, tensors, constants), operators and subscripts. Tensor
// operations are recorded through the host; operations on constants run in
// Python on the constant values; anything else is a break.
#include <cstring>

#include "AttributeProtocol.h"
#include "PyTypes.h"
#include "Translator.h"

namespace xacc::capture::translate {

namespace {

bool isA(PyObject* o, PyObject* type) {
  return PyObject_TypeCheck(o, reinterpret_cast<PyTypeObject*>(type));
}

/// The attribute `name` as found on the type's MRO without running
/// descriptors (inspect.getattr_static for instances), borrowed or null.
PyObject* staticLookup(PyTypeObject* tp, PyObject* name) {
  PyObject* mro = tp->tp_mro;
  if (!mro) return nullptr;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(mro); ++i) {
    PyObject* d = typeDict(reinterpret_cast<PyTypeObject*>(PyTuple_GET_ITEM(mro, i)));
    if (!d) continue;
    PyObject* v = PyDict_GetItemWithError(d, name);
    if (v) return v;
    if (PyErr_Occurred()) PyErr_Clear();
  }
  return nullptr;
}

/// One side a NumPy dtype, the other a constant or a type (`np.float32`, `float`).
bool isNumpyDtypeCompare(const VarRef& a, const VarRef& b) {
  auto isDtype = [](const VarRef& v) {
    PyObject* t = pyTypes()->npDtype;
    // A dtype is immutable: a constant, or an object made at capture time
    // (`np.dtype("float32")`, a pure call of constants).
    return t && (v->is(Var::Kind::Const) || v->is(Var::Kind::Object)) &&
           PyObject_TypeCheck(v->obj.get(), reinterpret_cast<PyTypeObject*>(t));
  };
  auto plain = [&](const VarRef& v) {
    return v->is(Var::Kind::Const) || (v->is(Var::Kind::Object) && (PyType_Check(v->obj.get()) || isDtype(v)));
  };
  return plain(a) && plain(b) && (isDtype(a) || isDtype(b));
}

bool instanceDictHas(PyObject* o, PyObject* name) {
  PyObject** dp = _PyObject_GetDictPtr(o);
  if (!dp || !*dp) return false;
  return PyDict_GetItemWithError(*dp, name) != nullptr;
}

/// The built-in type whose methods a List/Tuple/Dict/Set tracker answers.
PyTypeObject* containerType(const VarRef& c) {
  if (c->is(Var::Kind::List)) return &PyList_Type;
  if (c->is(Var::Kind::Tuple)) return &PyTuple_Type;
  if (c->is(Var::Kind::Dict)) return &PyDict_Type;
  if (c->obj && PyAnySet_Check(c->obj.get())) return Py_TYPE(c->obj.get());
  return &PySet_Type;
}

const char* containerTypeName(const VarRef& c) { return containerType(c)->tp_name; }

/// Whether the built-in type of container tracker `c` has attribute `name`.
bool containerHasAttr(const VarRef& c, PyObject* name) { return _PyType_Lookup(containerType(c), name) != nullptr; }
}  // namespace

bool isUserFunction(PyObject* fn);

VarRef Translator::moduleChild(const VarRef& mod, PyObject* name, bool& found) {
  found = false;
  PyObject* m = mod->obj.get();
  PyObject** dp = _PyObject_GetDictPtr(m);
  if (!dp || !*dp) return nullptr;
  static const char* kDicts[] = {"_parameters", "_buffers", "_modules"};
  for (const char* dn : kDicts) {
    PyObject* dd = PyDict_GetItemString(*dp, dn);
    if (!dd || !PyDict_Check(dd)) continue;
    PyObject* value = PyDict_GetItemWithError(dd, name);
    if (!value) {
      if (PyErr_Occurred()) PyErr_Clear();
      continue;
    }
    found = true;
    if (isFreshModule(mod)) {  // its children are built in the frame too (Note [Fresh modules])
      auto it = freshTemplates_.find(value);
      if (it != freshTemplates_.end()) return it->second;
      fail(GB::UnmodeledAttribute, std::string("a child of a module built inside the traced code"));
      return nullptr;
    }
    PyRef dname = PyRef::steal(PyUnicode_InternFromString(dn));
    SourceRef src = Source::item(Source::attr(mod->source, dname.get()), name);
    if (value == Py_None) {  // `bias=False`: another instance may have one
      guardId(src, Py_None);
      return makeConst(PyRef::borrow(Py_None));
    }
    return wrap(value, src);
  }
  return nullptr;
}

VarRef Translator::tensorAttr(const VarRef& t, PyObject* nameObj) {
  const PyTypes* T = pyTypes();
  std::string name = PyUnicode_AsUTF8(nameObj);
  if (!functionModes_.empty() && name != "__class__") {
    // Eager reads it through the mode (a getset's __get__, Note [Function
    // modes in the frame]); a method is looked up as it is without one. The
    // facts answered below without the meta twin (its device, autograd) break.
    for (const char* n : {"is_cuda", "is_meta", "is_xpu", "is_mps", "is_cpu", "is_leaf", "grad_fn", "grad",
                          "_version", "__array__"})
      if (name == n) {
        noFunctionMode(("Tensor." + name).c_str());
        return nullptr;
      }
    PyObject* cls = staticLookup(reinterpret_cast<PyTypeObject*>(T->tensor), nameObj);
    if (!(cls && PyCallable_Check(cls) && !PyObject_TypeCheck(cls, &PyProperty_Type)))
      return record(T->getattrFn, {t, makeConst(PyRef::borrow(nameObj))}, {});
  }
  if (name == "is_cuda" || name == "is_meta" || name == "is_xpu" || name == "is_mps")
    return makeConst(PyRef::borrow(Py_False));
  if (name == "is_cpu") return makeConst(PyRef::borrow(opts_.device == "cpu" ? Py_True : Py_False));
  if (name == "__class__") return makeVar(Var::Kind::Object, PyRef::borrow(typeOf(t)));  // Note [Tensor types]
  if (name == "is_leaf" || name == "grad_fn") {
    // A tensor the graph made: its meta twin's autograd facts are eager's. An
    // input's twin is a fresh leaf: only its guarded requires_grad decides
    // (False: a leaf without grad_fn). Note [Tensors made leaves] in host.py.
    PyRef rg = PyRef::steal(PyObject_GetAttrString(t->obj.get(), "requires_grad"));
    PyRef fn = PyRef::steal(PyObject_GetAttrString(t->obj.get(), "grad_fn"));
    const bool known = rg && fn && ((!t->source && !inputSource(t)) || rg.get() == Py_False);
    if (known && name == "is_leaf") return makeConst(PyRef::borrow(fn.get() == Py_None ? Py_True : Py_False));
    if (known && fn.get() == Py_None) return makeConst(PyRef::borrow(Py_None));
    PyErr_Clear();
    fail(GB::UnmodeledAttribute, "Tensor." + name + " (an autograd node, or an input that requires grad)");
    return nullptr;
  }
  if (name == "grad" || name == "_version" || name == "__array__") {
    fail(GB::UnmodeledAttribute, "Tensor." + name);
    return nullptr;
  }
  PyObject* cls = staticLookup(reinterpret_cast<PyTypeObject*>(T->tensor), nameObj);
  if (name == "cuda" || name == "cpu" || name == "to" || name == "type" ||
      (cls && PyCallable_Check(cls) && !PyObject_TypeCheck(cls, &PyProperty_Type))) {
    auto m = makeVar(Var::Kind::TensorMethod);
    m->self = t;
    m->name = name;
    return m;
  }
  PyRef args = PyRef::steal(PyTuple_Pack(2, t->obj.get(), nameObj));
  std::string code, detail;
  PyRef r = host_.record(T->getattrFn, args.get(), nullptr, code, detail);
  if (!r) {
    fail(hostBreak(code, GB::UnmodeledAttribute), detail);
    return nullptr;
  }
  return fromPython(r.get());
}

VarRef Translator::getattr(const VarRef& obj, PyObject* name) {
  const PyTypes* T = pyTypes();
  switch (obj->kind) {
    case Var::Kind::Tensor:
      if (obj->isNumpy()) return numpyAttr(obj, name);
      if (PyUnicode_CompareWithASCIIString(name, "device") == 0) {
        PyObject* d = PyObject_CallFunction(T->torchDevice, "s", opts_.device.c_str());
        if (!d) {
          failPy(GB::Internal, "torch.device");
          return nullptr;
        }
        return makeConst(PyRef::steal(d));
      }
      return tensorAttr(obj, name);
    case Var::Kind::Object: {
      PyObject* o = obj->obj.get();
      PyTypeObject* tp = Py_TYPE(o);
      if (const AttrWrite* w = attrWritten(obj, name)) return w->value;
      if (PyUnicode_CompareWithASCIIString(name, "__dict__") == 0) {
        // Note [Instance dicts of outside objects]
        // ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
        // `o.__dict__` (and `vars(o)`) of an object from outside the frame is
        // its real dict, read at trace time, while the frame's attribute writes
        // to it are replayed only after the graph (Note [Replayed attribute
        // writes]): a read through the dict would miss them, before or after
        // the dict was fetched. So the dict of an object with a replayed write
        // is a break, and so is a write to an object whose dict the frame read.
        // (`self.flag = 7; self.__dict__.get("flag")` gave None, eager 7.)
        for (const AttrWrite& w : attrWrites_)
          if (w.obj->obj.get() == o) {
            fail(GB::AttributeWrite, std::string(".__dict__ of a ") + tp->tp_name +
                                         " whose attribute write is replayed after the graph");
            return nullptr;
          }
        dictsRead_.insert(o);
        if (PyObject* ga = ownGetattribute(tp); ga && PyFunction_Check(ga)) {
          // Its class answers `__dict__` in Python (Note [Attribute protocol]):
          // the model above holds only where that answer is the instance dict.
          PyObject* value = PyObject_GetAttr(o, name);
          PyObject** slot = _PyObject_GetDictPtr(o);
          bool own = value && slot && *slot == value;
          Py_XDECREF(value);
          if (!own) {
            failPy(GB::UnmodeledAttribute, std::string(".__dict__ of a ") + tp->tp_name +
                                               " whose __getattribute__ answers other than its instance dict");
            return nullptr;
          }
        }
      }
      if (isA(o, T->module)) {
        PyObject* own = typeDict(tp) ? PyDict_GetItemWithError(typeDict(tp), name) : nullptr;
        if (!own) {
          if (PyErr_Occurred()) PyErr_Clear();
          bool found = false;
          VarRef c = moduleChild(obj, name, found);
          if (found) return c;
        }
      }
      if (!PyModule_Check(o) && !PyType_Check(o)) {
        PyObject* cls = staticLookup(tp, name);
        if (cls && PyFunction_Check(cls) && !instanceDictHas(o, name)) {
          // The method is the class's attribute now: guard that it still is (a
          // method replaced on the class after the first call must not run the
          // old graph). `type(o).__mro__[<name>]` reads it as the lookup does.
          // Without a source (an object a call made at trace time) the method
          // cannot be guarded, and binding it anyway would run the old method
          // after the class's is replaced: a break, as in classAttr.
          if (!obj->source) {
            fail(GB::UnmodeledAttribute, std::string(".") + PyUnicode_AsUTF8(name) + ": a method of a " + tp->tp_name +
                              " object that has no guard source (made by a call at trace time)");
            return nullptr;
          }
          guardId(Source::classAttr(Source::typeOf(obj->source), name), cls);  // Note [Guard reads of the type]
          auto m = makeVar(Var::Kind::BoundMethod, PyRef::borrow(cls));
          m->self = obj;
          return m;
        }
        if (cls && PyObject_TypeCheck(cls, &PyProperty_Type)) {
          PyObject* fget = reinterpret_cast<PyObject*>(PyObject_GetAttrString(cls, "fget"));
          if (!fget) PyErr_Clear();
          PyRef g = PyRef::steal(fget);
          if (g && PyFunction_Check(g.get()) && isUserFunction(g.get()))
            return inlineFunction(g.get(), {obj}, {}, nullptr);
        }
      }
      PyObject* value = PyObject_GetAttr(o, name);
      if (!value) {
        failPy(GB::UnmodeledAttribute, std::string(".") + PyUnicode_AsUTF8(name));
        return nullptr;
      }
      PyRef v = PyRef::steal(value);
      if (isFreshModule(obj) && freshTemplates_.count(value)) return freshTemplates_[value];  // a child
      if (isFreshObject(obj) && !freshModuleValue(value)) {  // Note [Fresh modules], [Fresh classes]
        fail(GB::UnmodeledAttribute, std::string(".") + PyUnicode_AsUTF8(name) + " of an object built inside the traced code");
        return nullptr;
      }
      SourceRef src = Source::attr(obj->source, name);
      if (!src && PyModule_Check(o)) {
        const char* mn = PyModule_GetName(o);
        if (!mn) PyErr_Clear();
        if (mn && std::string(mn).rfind("torch", 0) == 0) return makeVar(Var::Kind::Object, v);
      }
      return wrap(v.get(), src);
    }
    case Var::Kind::Const: {
      PyObject* v = obj->obj.get();
      // inspect.Signature/Parameter (immutable; see signatureOf) and their
      // read-only mappings answer attribute reads too.
      const char* tn = Py_TYPE(v)->tp_name;
      bool inspectValue = (std::strcmp(tn, "Signature") == 0 || std::strcmp(tn, "Parameter") == 0) &&
                          PyObject_HasAttrString(reinterpret_cast<PyObject*>(Py_TYPE(v)), "__module__");
      if (inspectValue) {
        PyObject* mod = PyObject_GetAttrString(reinterpret_cast<PyObject*>(Py_TYPE(v)), "__module__");
        inspectValue = mod && PyUnicode_Check(mod) && PyUnicode_CompareWithASCIIString(mod, "inspect") == 0;
        Py_XDECREF(mod);
        PyErr_Clear();
      }
      if (isA(v, T->dtype) || isA(v, T->device) || isA(v, T->size) || PyTuple_Check(v) || PyLong_Check(v) ||
          PyFloat_Check(v) || PyUnicode_Check(v) || PyComplex_Check(v) || inspectValue ||
          Py_IS_TYPE(v, &PyDictProxy_Type) || PySlice_Check(v)) {
        if (PySlice_Check(v) && !constOf(obj)) return nullptr;  // a slice of dynamic sizes specializes
        PyObject* a = PyObject_GetAttr(v, name);
        if (!a) {
          failPy(GB::UnmodeledAttribute, std::string(".") + PyUnicode_AsUTF8(name));
          return nullptr;
        }
        PyRef r = PyRef::steal(a);
        return makeVar(PyCallable_Check(a) ? Var::Kind::Object : Var::Kind::Const, r);
      }
      break;
    }
    case Var::Kind::Tuple:
      if (obj->fields) {
        PyObject* f = obj->fields.get();
        for (Py_ssize_t i = 0; i < PyTuple_Size(f); ++i)
          if (PyUnicode_Compare(PyTuple_GET_ITEM(f, i), name) == 0) return obj->items[static_cast<size_t>(i)];
      }
      if (obj->obj) {  // an instance of a tuple subclass (Note [User objects])
        bool handled = false;
        VarRef r = namedTupleAttr(obj, name, handled);
        if (handled || failed()) return r;
      }
      [[fallthrough]];
    case Var::Kind::List:
    case Var::Kind::Dict:
    case Var::Kind::Set: {
      if (isModelOutputVar(obj)) return modelOutputAttr(obj, name);
      if (isDictSubclassVar(obj)) return dictSubclassAttr(obj, name);  // Note [Dict subclasses]
      if (!containerHasAttr(obj, name)) {
        // Break at the attribute load itself, not at the call: a break at the
        // call would rebuild `obj.name` (which raises AttributeError) before
        // the frame's replayed container mutations (Note [Replayed container
        // mutation]), so the caller's container would miss them.
        fail(GB::UnmodeledAttribute, std::string(".") + PyUnicode_AsUTF8(name) + " of a " + containerTypeName(obj));
        return nullptr;
      }
      auto m = makeVar(Var::Kind::ContainerMethod);
      m->self = obj;
      m->name = PyUnicode_AsUTF8(name);
      return m;
    }
    case Var::Kind::Super:
      return superAttr(obj, name);
    case Var::Kind::UserObject:
      return userAttr(obj, name);
    case Var::Kind::InstanceDict:  // Note [Instance dicts]: its read methods and update, bound to the live view
      if (PyUnicode_CompareWithASCIIString(name, "get") == 0 || PyUnicode_CompareWithASCIIString(name, "copy") == 0 ||
          PyUnicode_CompareWithASCIIString(name, "update") == 0 || PyUnicode_CompareWithASCIIString(name, "keys") == 0 ||
          PyUnicode_CompareWithASCIIString(name, "values") == 0 || PyUnicode_CompareWithASCIIString(name, "items") == 0) {
        auto m = makeVar(Var::Kind::ContainerMethod);
        m->self = obj;
        m->name = PyUnicode_AsUTF8(name);
        return m;
      }
      break;
    default:
      break;
  }
  fail(GB::UnmodeledAttribute, std::string(".") + PyUnicode_AsUTF8(name) + " of an unsupported value");
  return nullptr;
}

namespace {

/// Whether the break function can rebuild `v` after the graph (Codegen's
/// Emitter::rebuild): graph values, constants, values with a source, and
/// containers made in the frame from those.
bool replayable(const VarRef& v, int depth = 0) {
  using K = Var::Kind;
  if (!v || depth > 8) return false;
  if (v->source) return true;
  switch (v->kind) {
    case K::Tensor:
    case K::Const:
    case K::SymScalar:
      return true;
    case K::Tuple:
    case K::List:
    case K::Dict:
    case K::UserObject:
      if (v->obj && !v->is(K::Tuple)) return false;  // a ModelOutput
      for (const VarRef& i : v->items)
        if (!replayable(i, depth + 1)) return false;
      return true;
    default:
      return false;
  }
}

}  // namespace

bool Translator::storeAttr(const VarRef& obj, PyObject* name, const VarRef& value) {
  const PyTypes* T = pyTypes();
  std::string what = std::string(".") + PyUnicode_AsUTF8(name) + " = ...";
  if (obj->is(Var::Kind::UserObject)) return userStoreAttr(obj, name, value);
  if (isModelOutputVar(obj)) return modelOutputStoreAttr(obj, name, value);
  if (!obj->is(Var::Kind::Object) || !obj->source) return fail(GB::AttributeWrite, what);
  PyObject* o = obj->obj.get();
  PyTypeObject* tp = Py_TYPE(o);
  if (isA(o, T->module)) {
    if (!moduleAttrWritable(obj, name, value)) return false;
  } else if (isA(o, T->tensor) || PyModule_Check(o) || PyType_Check(o) ||
             tp->tp_setattro != PyObject_GenericSetAttr || !_PyObject_GetDictPtr(o)) {
    return fail(GB::AttributeWrite, what);
  }
  PyObject* cls = staticLookup(tp, name);
  if (cls && Py_TYPE(cls)->tp_descr_set) return fail(GB::AttributeWrite, what + " (a descriptor on the class)");
  if (branchDepth_ > 0) return fail(GB::AttributeWrite, what + " inside a tensor branch");
  if (dictsRead_.count(o))  // Note [Instance dicts of outside objects]
    return fail(GB::AttributeWrite, what + " on an object whose __dict__ the frame read");
  if (!replayable(value)) return fail(GB::AttributeWrite, what + " (a value that cannot be rebuilt after the graph)");
  if (const AttrWrite* w = attrWritten(obj, name)) attrWrites_.erase(attrWrites_.begin() + (w - attrWrites_.data()));
  attrWrites_.push_back({obj, PyRef::borrow(name), value});
  return true;
}

// Note [Replayed container mutation] (Translator.h): one list or dict read
// through two sources is one tracker (a mutation through one is seen through
// the other), the second source guarded to be the same object; containers that
// are distinct objects here are guarded distinct, like tensor inputs.
VarRef Translator::containerSeen(PyObject* value, const SourceRef& source) {
  auto seen = containerInputs_.find(value);
  if (seen == containerInputs_.end()) return nullptr;
  guardSame(source, seen->second->source, true);
  return seen->second;
}

bool Translator::isDistinctInput(const VarRef& v) const {
  for (const auto& entry : containerInputs_)
    if (entry.second.get() == v.get()) return true;
  return false;
}

VarRef Translator::containerInput(PyObject* value, const VarRef& v) {
  int n = node(v->source);
  bool marked = false;
  for (const Leaf& l : tree_.nodeLeaves(n)) marked = marked || l.kind == Leaf::Kind::Distinct;
  if (!marked) {
    Leaf l;
    l.kind = Leaf::Kind::Distinct;
    tree_.addLeaf(n, std::move(l));
  }
  containerInputs_.emplace(value, v);
  inputRefs_.push_back(PyRef::borrow(value));
  return v;
}

bool Translator::mutateInput(const VarRef& c, const char* what) {
  if (!c->source) return true;
  bool plain = c->is(Var::Kind::List) || (c->is(Var::Kind::Dict) && !c->obj);
  if (!plain) return fail(GB::OuterContainerMutation, what);
  if (branchDepth_ > 0) return fail(GB::OuterContainerMutation, std::string(what) + " inside a tensor branch");
  for (const VarRef& m : mutatedInputs_)
    if (m.get() == c.get()) return true;
  mutatedInputs_.push_back(c);
  return true;
}

const Translator::AttrWrite* Translator::attrWritten(const VarRef& obj, PyObject* name) const {
  // At most one write per (object, name): a later write replaces the earlier one.
  for (const AttrWrite& w : attrWrites_)
    if (w.obj->obj.get() == obj->obj.get() && PyUnicode_Compare(w.name.get(), name) == 0) return &w;
  return nullptr;
}

VarRef Translator::binary(PyObject* op, const VarRef& a, const VarRef& b) {
  if (a->is(Var::Kind::UserObject) || b->is(Var::Kind::UserObject)) return userBinary(op, a, b);
  if (a->isNumpy() || b->isNumpy()) {
    if ((a->is(Var::Kind::Tensor) && !a->isNumpy()) || (b->is(Var::Kind::Tensor) && !b->isNumpy())) {
      fail(GB::NumpyOperation, "operator between an ndarray and a torch.Tensor (convert one of them explicitly)");
      return nullptr;
    }
    return numpyRun("op", op, {a, b}, {});
  }
  if (a->is(Var::Kind::ItemOf) || b->is(Var::Kind::ItemOf)) return itemCompare(op, a, b);
  if (a->is(Var::Kind::Tensor) || b->is(Var::Kind::Tensor)) return record(op, {a, b}, {});
  if (a->is(Var::Kind::SymScalar) || b->is(Var::Kind::SymScalar)) {
    bool handled = false;
    VarRef r = scalarBinary(op, a, b, handled);
    if (handled) return r;
    if (isSizeSym(a) || isSizeSym(b)) {
      if (VarRef c = sizeCompare(op, a, b)) return c;
    }
    return binary(op, concrete(a), concrete(b));
  }
  if (isConst(a) && isConst(b)) {
    PyRef x = constOf(a), y = constOf(b);
    if (!x || !y) return nullptr;
    PyObject* r = PyObject_CallFunctionObjArgs(op, x.get(), y.get(), nullptr);
    if (!r) {
      failPyRaise("operator on constants raised");
      return nullptr;
    }
    PyRef rr = PyRef::steal(r);
    return fromConst(rr.get());
  }
  if (a->is(Var::Kind::Set) && b->is(Var::Kind::Set)) return setBinary(op, a, b);
  PyObject* add = operatorFn("add");
  PyObject* iadd = operatorFn("iadd");
  bool seqA = a->is(Var::Kind::Tuple) || a->is(Var::Kind::List);
  bool seqB = b->is(Var::Kind::Tuple) || b->is(Var::Kind::List);
  if ((op == add || op == iadd) && seqA != seqB && isConst(seqA ? b : a)) {
    // A sequence tracker and a constant tuple, list or torch.Size (`(n, h) +
    // mask.shape` with n symbolic, the shape a constant): the constant's items
    // as trackers, then the rules below (Python's TypeError for tuple + list
    // stays a break there).
    PyRef c = constOf(seqA ? b : a);
    PyTypeObject* tp = c ? Py_TYPE(c.get()) : nullptr;
    bool size = tp == reinterpret_cast<PyTypeObject*>(pyTypes()->size);
    if (tp == &PyTuple_Type || tp == &PyList_Type || size) {
      std::vector<VarRef> items;
      for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(c.get()); ++i)
        items.push_back(makeConst(PyRef::borrow(PySequence_Fast_GET_ITEM(c.get(), i))));
      VarRef seq = makeSeq(tp == &PyList_Type ? Var::Kind::List : Var::Kind::Tuple, std::move(items));
      seq->torchSize = size;
      return seqA ? binary(op, a, seq) : binary(op, seq, b);
    }
  }
  if (seqA && seqB && (op == add || op == iadd) && a->kind == b->kind) {
    if (op == iadd && a->is(Var::Kind::List)) {
      if (!mutateInput(a, "list passed in from outside")) return nullptr;
      a->items.insert(a->items.end(), b->items.begin(), b->items.end());
      return a;
    }
    std::vector<VarRef> items = a->items;
    items.insert(items.end(), b->items.begin(), b->items.end());
    VarRef r = makeSeq(a->kind, std::move(items));
    // torch.Size + tuple, and tuple + torch.Size (the subclass's reflected add
    // runs first), are torch.Sizes: Note [Symbolic shapes keep their type].
    r->torchSize = a->torchSize || (b->torchSize && !a->obj);
    return r;
  }
  if (((seqA && isConst(b)) || (seqB && isConst(a))) && op == operatorFn("mul")) {  // [x] * n, n * [x]
    const VarRef& seq = seqA && isConst(b) ? a : b;
    PyRef n = constOf(seqA && isConst(b) ? b : a);
    if (n && PyLong_Check(n.get()) && !PyBool_Check(n.get())) {
      long k = PyLong_AsLong(n.get());
      if (k < 0) k = 0;  // a count below 0 gives an empty sequence
      if (!PyErr_Occurred() && k <= 4096) {
        std::vector<VarRef> items;
        for (long i = 0; i < k; ++i) items.insert(items.end(), seq->items.begin(), seq->items.end());
        VarRef r = makeSeq(seq->kind, std::move(items));
        r->torchSize = seq->torchSize;
        return r;
      }
      PyErr_Clear();
    }
  }
  if ((op == operatorFn("eq") || op == operatorFn("ne")) && isNumpyDtypeCompare(a, b)) {
    // `a.dtype == np.float32`: NumPy dtypes compare with dtype-likes by value.
    PyObject* r = PyObject_RichCompare(a->obj.get(), b->obj.get(), op == operatorFn("eq") ? Py_EQ : Py_NE);
    if (!r) {
      failPy(GB::UnsupportedType, "dtype comparison");
      return nullptr;
    }
    return fromConst(PyRef::steal(r).get());
  }
  if ((op == operatorFn("eq") || op == operatorFn("ne")) && a->is(Var::Kind::Object) &&
      (b->is(Var::Kind::Object) || b->is(Var::Kind::Const))) {
    PyObject* eq = staticLookup(Py_TYPE(a->obj.get()), PyUnicode_InternFromString("__eq__"));
    // An attribute lookup (the descriptor itself): from 3.12 object's tp_dict is NULL.
    static PyObject* objEq = PyObject_GetAttrString(reinterpret_cast<PyObject*>(&PyBaseObject_Type), "__eq__");
    if (eq == objEq) {
      bool same = a->obj.get() == b->obj.get();
      return makeConst(PyRef::borrow(same == (op == operatorFn("eq")) ? Py_True : Py_False));
    }
    // Builtin functions and bound slot wrappers compare their function and
    // the identity of their `__self__` (C code, no side effect): the func a
    // TorchFunctionMode gets against `torch.add` or `Tensor.shape.__get__`.
    PyTypeObject* ta = Py_TYPE(a->obj.get());
    if ((ta == &PyCFunction_Type || ta == methodWrapperType()) && b->is(Var::Kind::Object)) {
      PyObject* r = PyObject_RichCompare(a->obj.get(), b->obj.get(), op == operatorFn("eq") ? Py_EQ : Py_NE);
      if (!r) {
        failPy(GB::UnsupportedType, "comparison of builtin functions");
        return nullptr;
      }
      return fromConst(PyRef::steal(r).get());
    }
  }
  auto container = [](const VarRef& v) {
    return v->is(Var::Kind::List) || v->is(Var::Kind::Tuple) || v->is(Var::Kind::Dict) || v->is(Var::Kind::DictView);
  };
  if (container(a) && container(b)) {
    // Comparisons and `|` of containers: polyfills.py's ("containers", op) references.
    static PyObject* tag = PyUnicode_InternFromString("containers");
    PyRef key = PyRef::steal(PyTuple_Pack(2, tag, op));
    std::vector<VarRef> args{a, b};
    std::vector<std::pair<PyRef, VarRef>> kw;
    if (VarRef r = key ? polyfill(key.get(), args, kw) : nullptr; r || failed()) return r;
  }
  fail(GB::UnsupportedType, "operator on unsupported values");
  return nullptr;
}

VarRef Translator::unary(PyObject* op, const VarRef& v) {
  if (v->is(Var::Kind::UserObject)) return userUnary(op, v);
  if (v->isNumpy()) return numpyRun("op", op, {v}, {});
  if (v->is(Var::Kind::Tensor)) return record(op, {v}, {});
  if (v->is(Var::Kind::SymScalar)) {
    bool handled = false;
    VarRef r = scalarUnary(op, v, handled);
    if (handled) return r;
    return unary(op, concrete(v));
  }
  if (isConst(v)) {
    PyRef x = constOf(v);
    PyObject* r = PyObject_CallFunctionObjArgs(op, x.get(), nullptr);
    if (!r) {
      failPyRaise("operator on a constant raised");
      return nullptr;
    }
    PyRef rr = PyRef::steal(r);
    return makeConst(rr);
  }
  fail(GB::UnsupportedType, "unary operator on an unsupported value");
  return nullptr;
}

namespace {

bool isEnviron(const VarRef& v) {
  const PyTypes* T = pyTypes();
  return T && T->osEnviron && v->is(Var::Kind::Object) && v->source && v->obj.get() == T->osEnviron;
}

}  // namespace

// Note [os.environ reads]
// ~~~~~~~~~~~~~~~~~~~~~~~
// `os.environ[k]`, `os.environ.get(k, d)` (and os.getenv, which calls it) and
// `k in os.environ` inside a captured frame (transformers' sdpa_attention
// reads a flag per call) answer now, as constants, guarded by that key alone:
// its raw entry in `os.environ._data` (the dict os.environ wraps, keyed by
// `os.environ.encodekey(k)`: bytes on POSIX) equals the one seen (a node
// `..._data[key]` with an equality leaf), or the key is absent (a HasKey leaf,
// for .get's default and `in`), or present (HasKey, for `in`). Setting or
// deleting another variable leaves the entry valid; a hit costs one dict
// lookup per key read.
int Translator::environEntry(const VarRef& env, PyObject* key, PyRef* value) {
  PyRef data = PyRef::steal(PyObject_GetAttrString(env->obj.get(), "_data"));
  if (!data || !PyDict_Check(data.get())) {
    PyErr_Clear();
    fail(GB::UnsupportedType, "os.environ without its _data dict");
    return -1;
  }
  PyRef raw = PyRef::steal(PyObject_CallMethod(env->obj.get(), "encodekey", "O", key));
  if (!raw) {
    failPy(GB::UnsupportedType, "os.environ key");
    return -1;
  }
  PyRef dataName = PyRef::steal(PyUnicode_InternFromString("_data"));
  SourceRef dataSrc = Source::attr(env->source, dataName.get());
  PyObject* entry = PyDict_GetItemWithError(data.get(), raw.get());  // borrowed
  if (!entry) {
    if (PyErr_Occurred()) {
      failPy(GB::UnsupportedType, "os.environ lookup");
      return -1;
    }
    guardHas(dataSrc, Leaf::Kind::HasKey, raw.get(), false);
    return 0;
  }
  if (!value) {
    guardHas(dataSrc, Leaf::Kind::HasKey, raw.get(), true);
    return 1;
  }
  guardEquals(Source::item(dataSrc, raw.get()), entry);
  PyObject* v = PyObject_GetItem(env->obj.get(), key);  // decoded as os.environ does
  if (!v) {
    failPy(GB::UnsupportedType, "os.environ lookup");
    return -1;
  }
  *value = PyRef::steal(v);
  return 1;
}

int Translator::objectContains(const VarRef& obj, const VarRef& key) {
  if (isEnviron(obj)) {  // Note [os.environ reads]
    if (!isConst(key) || !PyUnicode_Check(key->obj.get())) {
      fail(GB::UnsupportedType, "'in' os.environ with a non-constant or non-str key");
      return -1;
    }
    return environEntry(obj, key->obj.get(), nullptr);
  }
  if (obj->is(Var::Kind::UserObject)) return userContains(obj, key);  // Note [Modelled library objects]
  if (!obj->is(Var::Kind::Object) || !obj->source) return -2;
  // An object read from outside the frame may hold other keys at the next
  // call: its answer comes from code that reads (and guards) its state.
  static PyObject* containsName = PyUnicode_InternFromString("__contains__");
  PyObject* c = _PyType_Lookup(Py_TYPE(obj->obj.get()), containsName);  // borrowed
  const PyTypes* T = pyTypes();
  // Note [Dunders of outside objects]: the method the class gives is guarded
  // by identity through `type(obj).<name>` (as len() does, Note [len of
  // outside objects]): a __contains__ or __getitem__ replaced on the class
  // after the first call recompiles instead of running the old one's graph.
  // The class is read as Python's own slot lookup reads it, type(obj), never
  // through `obj.__class__` (Note [Guard reads of the type]).
  if (c && PyFunction_Check(c)) guardId(Source::classAttr(Source::typeOf(obj->source), containsName), c);
  if (c && T && c == T->mappingContains) {
    // Mapping.__contains__ is `try: self[key] except KeyError: return False`.
    Failure before = failure_;
    if (subscr(obj, key)) return 1;
    if (failure_.code == gbCode(GB::RaisesException) && failure_.detail == "missing key (raises KeyError)" &&
        before.code.empty()) {
      failure_ = before;
      return 0;
    }
    return -1;
  }
  if (c && PyFunction_Check(c) && isUserFunction(c)) {
    PyRef keep = PyRef::borrow(c);
    VarRef r = inlineFunction(c, {obj, key}, {}, nullptr);
    return r ? truth(r) : -1;
  }
  fail(GB::UnsupportedType, std::string("'in' on a ") + Py_TYPE(obj->obj.get())->tp_name +
                    " read from outside the frame (no __contains__ to trace)");
  return -1;
}

VarRef Translator::subscr(const VarRef& obj, const VarRef& idx) {
  const PyTypes* T = pyTypes();
  if (isEnviron(obj) && isConst(idx) && PyUnicode_Check(idx->obj.get())) {
    PyRef v;  // Note [os.environ reads]
    int r = environEntry(obj, idx->obj.get(), &v);
    if (r < 0) return nullptr;
    if (r == 0) {
      fail(GB::RaisesException, "missing key (raises KeyError)");  // Mapping.get answers its default
      return nullptr;
    }
    return makeConst(v);
  }
  if (obj->is(Var::Kind::UserObject)) return userSubscr(obj, idx);
  if (isDictSubclassVar(obj) && dictOverrides(obj, "__getitem__")) return userSubscr(obj, idx);
  if (obj->is(Var::Kind::InstanceDict)) return subscr(instanceDictNow(obj), idx);  // Note [Instance dicts]
  if (obj->isNumpy()) return numpyRun("op", operatorFn("getitem"), {obj, idx}, {});
  if (obj->is(Var::Kind::Tensor)) {
    VarRef i = tensorIndex(idx);  // TranslateBuiltins.cpp
    if (!i) return nullptr;
    return record(operatorFn("getitem"), {obj, i}, {});
  }
  if (obj->is(Var::Kind::Tuple) || obj->is(Var::Kind::List)) {
    PyRef i = constOf(idx);
    if (!i) return nullptr;
    Py_ssize_t n = static_cast<Py_ssize_t>(obj->items.size());
    if (PySlice_Check(i.get())) {
      Py_ssize_t start, stop, step, len;
      if (PySlice_GetIndicesEx(i.get(), n, &start, &stop, &step, &len) < 0) {
        failPy(GB::UnsupportedType, "slice");
        return nullptr;
      }
      std::vector<VarRef> items;
      for (Py_ssize_t k = 0, j = start; k < len; ++k, j += step) items.push_back(obj->items[static_cast<size_t>(j)]);
      VarRef s = makeSeq(obj->kind, std::move(items));
      s->torchSize = obj->torchSize;  // a torch.Size's slice is one
      return s;
    }
    if (!PyLong_Check(i.get())) {
      fail(GB::UnsupportedType, "non-integer index");
      return nullptr;
    }
    Py_ssize_t k = PyLong_AsSsize_t(i.get());
    if (k < 0) k += n;
    if (k < 0 || k >= n) {  // Note [Traced exceptions]
      raiseNew(PyExc_IndexError,
               {PyRef::steal(PyUnicode_FromString(obj->is(Var::Kind::List) ? "list index out of range"
                                                                           : "tuple index out of range"))},
               "index out of range (raises IndexError)");
      return nullptr;
    }
    return obj->items[static_cast<size_t>(k)];
  }
  if (isModelOutputVar(obj) && !(idx->is(Var::Kind::Const) && PyUnicode_Check(idx->obj.get())))
    return subscr(makeSeq(Var::Kind::Tuple, obj->items), idx);  // ModelOutput: to_tuple()[i]
  if (obj->is(Var::Kind::Dict)) {
    PyRef k = constOf(idx);
    if (!k) return nullptr;
    for (size_t j = 0; j < obj->keys.size(); ++j)
      if (PyObject_RichCompareBool(obj->keys[j].get(), k.get(), Py_EQ) == 1) return obj->items[j];
    raiseNew(PyExc_KeyError, {k}, "missing key (raises KeyError)");  // Note [Traced exceptions]
    return nullptr;
  }
  if (obj->is(Var::Kind::Const) && isConst(idx)) {
    PyRef k = constOf(idx);
    PyObject* r = PyObject_GetItem(obj->obj.get(), k.get());
    if (!r) {
      failPy(GB::UnsupportedType, "subscript of a constant");
      return nullptr;
    }
    PyRef rr = PyRef::steal(r);
    return fromConst(rr.get());
  }
  if (obj->is(Var::Kind::Object) && (isA(obj->obj.get(), T->moduleList) || isA(obj->obj.get(), T->sequential))) {
    PyRef i = constOf(idx);
    if (!i) return nullptr;
    guardModuleKeys(obj);  // which child a position names depends on all of them
    if (PySlice_Check(i.get()) && isA(obj->obj.get(), T->moduleList)) {
      // layers[:n]: the children as a list (what iterating the new ModuleList gives).
      PyRef mods = PyRef::steal(PyObject_GetAttrString(obj->obj.get(), "_modules"));
      if (!mods) {
        failPy(GB::UnsupportedType, "_modules");
        return nullptr;
      }
      PyRef keys = PyRef::steal(PyDict_Keys(mods.get()));
      Py_ssize_t start, stop, step, len;
      if (PySlice_GetIndicesEx(i.get(), PyList_GET_SIZE(keys.get()), &start, &stop, &step, &len) < 0) {
        failPy(GB::UnsupportedType, "slice");
        return nullptr;
      }
      std::vector<VarRef> items;
      for (Py_ssize_t k = 0, j = start; k < len; ++k, j += step) {
        bool found = false;
        VarRef c = moduleChild(obj, PyList_GET_ITEM(keys.get(), j), found);
        if (!c || !found) {
          if (!failed()) fail(GB::UnsupportedType, "ModuleList slice");
          return nullptr;
        }
        items.push_back(std::move(c));
      }
      return makeSeq(Var::Kind::List, std::move(items));
    }
    if (PyLong_Check(i.get())) {
      PyRef mods = PyRef::steal(PyObject_GetAttrString(obj->obj.get(), "_modules"));
      if (!mods) {
        failPy(GB::UnsupportedType, "_modules");
        return nullptr;
      }
      PyRef keys = PyRef::steal(PyDict_Keys(mods.get()));
      Py_ssize_t n = PyList_GET_SIZE(keys.get()), k = PyLong_AsSsize_t(i.get());
      if (k < 0) k += n;
      if (k >= 0 && k < n) {
        // Sequential indexes its children by position; ModuleList by the name
        // str(index) (the two differ once `_modules` is reordered).
        bool found = false;
        if (!isA(obj->obj.get(), T->moduleList)) return moduleChild(obj, PyList_GET_ITEM(keys.get(), k), found);
        PyRef name = PyRef::steal(PyUnicode_FromFormat("%zd", k));
        VarRef c = moduleChild(obj, name.get(), found);
        if (c || found || failed()) return c;
        fail(GB::RaisesException, "ModuleList index without its child (raises KeyError)");
        return nullptr;
      }
    }
  }
  if (obj->is(Var::Kind::Object) && isA(obj->obj.get(), T->moduleDict)) {
    PyRef k = constOf(idx);
    if (!k) return nullptr;
    bool found = false;
    VarRef c = moduleChild(obj, k.get(), found);
    if (found) return c;
  }
  if (obj->is(Var::Kind::Object) && !failed()) {
    // An object whose class defines __getitem__ in Python (a library's
    // registry or mapping class): its __getitem__ is inlined like any call.
    static PyObject* getitemName = PyUnicode_InternFromString("__getitem__");
    PyObject* gi = _PyType_Lookup(Py_TYPE(obj->obj.get()), getitemName);  // borrowed
    if (gi && PyFunction_Check(gi) && isUserFunction(gi) && obj->source) {
      PyRef keep = PyRef::borrow(gi);
      guardId(Source::classAttr(Source::typeOf(obj->source), getitemName), gi);  // Note [Dunders of outside objects]
      return inlineFunction(gi, {obj, idx}, {}, nullptr);
    }
  }
  if (!failed()) fail(GB::UnsupportedType, "subscript of an unsupported value");
  return nullptr;
}

bool Translator::storeSubscr(const VarRef& obj, const VarRef& idx, const VarRef& val) {
  if (obj->is(Var::Kind::UserObject)) return userStoreSubscr(obj, idx, val);
  if (isDictSubclassVar(obj) && dictOverrides(obj, "__setitem__")) return userStoreSubscr(obj, idx, val);
  if (obj->isNumpy()) return numpyRun("op", operatorFn("setitem"), {obj, idx, val}, {}) != nullptr;
  if (obj->is(Var::Kind::Tensor)) {
    VarRef i = tensorIndex(idx);
    return i && record(operatorFn("setitem"), {obj, i, val}, {}) != nullptr;
  }
  if (obj->is(Var::Kind::List)) {
    if (!mutateInput(obj, "list passed in from outside")) return false;
    PyRef i = constOf(idx);
    if (!i) return false;
    if (PySlice_Check(i.get())) {  // polyfills.py's list.__setitem__
      // Looked up as an attribute: from 3.12 a static builtin type's tp_dict is NULL.
      static PyObject* setitem = PyObject_GetAttrString(reinterpret_cast<PyObject*>(&PyList_Type), "__setitem__");
      std::vector<VarRef> all{obj, idx, val};
      std::vector<std::pair<PyRef, VarRef>> kw;
      if (polyfill(setitem, all, kw)) return true;
      return failed() ? false : fail(GB::UnsupportedType, "list slice assignment");
    }
    if (!PyLong_Check(i.get())) return fail(GB::UnsupportedType, "list subscript assignment with a non-integer index");
    Py_ssize_t n = static_cast<Py_ssize_t>(obj->items.size()), k = PyLong_AsSsize_t(i.get());
    if (k < 0) k += n;
    if (k < 0 || k >= n) return fail(GB::RaisesException, "index out of range (raises IndexError)");
    obj->items[static_cast<size_t>(k)] = val;
    return true;
  }
  if (obj->is(Var::Kind::Dict)) {
    if (!mutateInput(obj, "dict passed in from outside")) return false;
    PyRef k = constOf(idx);
    if (!k) return false;
    for (size_t j = 0; j < obj->keys.size(); ++j) {
      if (PyObject_RichCompareBool(obj->keys[j].get(), k.get(), Py_EQ) == 1) {
        obj->items[j] = val;
        return true;
      }
    }
    obj->keys.push_back(k);
    obj->items.push_back(val);
    return true;
  }
  return fail(GB::OuterContainerMutation, "item assignment on an unsupported value");
}

}  // namespace xacc::capture::translate
