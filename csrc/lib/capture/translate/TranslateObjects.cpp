// Note [User objects]
// ~~~~~~~~~~~~~~~~~~~
// An instance of a user-defined class created while tracing is a translator
// value, not a break: `cls(...)` runs type.__call__'s protocol symbolically.
//
//  * `__new__`: object.__new__ makes a UserObject tracker (self: the class
//    tracker, keys/items: the instance __dict__ in insertion order); a
//    `__new__` written in Python (namedtuple's) is inlined, and tuple.__new__
//    inside it makes a Tuple tracker whose obj is the class (a tuple subclass).
//  * `__init__`: the first one on the MRO is inlined as an ordinary call
//    (@dataclass's generated __init__, its __post_init__ and default factories
//    are plain Python code too); object.__init__ does nothing, and rejects
//    arguments when __new__ is object's (a TypeError: a break).
//  * Attribute reads resolve like object.__getattribute__: a data descriptor on
//    the MRO first (a property's getter is inlined; other data descriptors,
//    `__slots__` members included, break), then the instance dict, then the
//    class attribute (a function binds to the object, staticmethod/classmethod
//    unwrap, other values are read through the class's source, so they are
//    guarded), then `__getattr__` inlined. Writes go to the instance dict
//    unless a data descriptor takes them (a property's setter is inlined).
//  * Classes whose instances behave in ways this does not model break with
//    GB002 when called (userClassProblem): a metaclass with its own __call__,
//    abstract classes, builtin bases other than object and tuple (nn.Module,
//    Tensor, dict subclasses, exceptions), __slots__ without a __dict__, and
//    classes defining __getattribute__, __setattr__, __delattr__ or __del__;
//    for tuple subclasses also any method that changes tuple behaviour.
//
// At a break or a return the object is rebuilt once (Codegen's Emitter):
// `object.__new__(cls)`, then each attribute stored with STORE_ATTR (which
// is object.__setattr__ here, and reaches no data descriptor); a tuple
// subclass is `tuple.__new__(cls, items)`. Every reference to the tracker gets
// that one object, so identity is preserved.
#include <cstring>

#include "PyTypes.h"
#include "Translator.h"

namespace xacc::capture::translate {

namespace {

/// `name` on the MRO of `tp` without running descriptors (borrowed), and the class holding it.
PyObject* mroLookup(PyTypeObject* tp, PyObject* name, PyTypeObject** owner = nullptr) {
  PyObject* mro = tp->tp_mro;
  if (!mro) return nullptr;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(mro); ++i) {
    auto* k = reinterpret_cast<PyTypeObject*>(PyTuple_GET_ITEM(mro, i));
    if (!k->tp_dict) continue;
    PyObject* v = PyDict_GetItemWithError(k->tp_dict, name);
    if (v) {
      if (owner) *owner = k;
      return v;
    }
    if (PyErr_Occurred()) PyErr_Clear();
  }
  return nullptr;
}

PyObject* interned(const char* s) { return PyUnicode_InternFromString(s); }

/// Methods whose presence makes the class's instances behave in ways a UserObject does not model.
const char* const kUnmodelled[] = {"__getattribute__", "__setattr__", "__delattr__", "__del__"};
/// ... and, for tuple subclasses, the ones that change what a tuple does.
const char* const kTupleUnmodelled[] = {"__getitem__", "__iter__", "__len__", "__contains__", "__eq__",
                                        "__ne__",      "__lt__",   "__le__",  "__gt__",       "__ge__",
                                        "__hash__",    "__bool__", "__add__", "__mul__",      "__rmul__",
                                        "__reversed__", "__getattr__", "__init__"};

std::string tpName(PyTypeObject* tp) { return tp->tp_name; }

/// The function inside a staticmethod/classmethod (borrowed), null when none.
PyObject* wrappedFunc(PyObject* descr) {
  PyObject* f = PyObject_GetAttrString(descr, "__func__");
  if (!f) {
    PyErr_Clear();
    return nullptr;
  }
  Py_DECREF(f);  // the descriptor keeps it alive
  return f;
}

}  // namespace

std::string userClassProblem(PyTypeObject* tp) {
  const PyTypes* T = pyTypes();
  if (Py_TYPE(tp)->tp_call != PyType_Type.tp_call) return "a metaclass with its own __call__";
  if (tp->tp_flags & Py_TPFLAGS_IS_ABSTRACT) return "an abstract class";
  if (!(tp->tp_flags & Py_TPFLAGS_HEAPTYPE)) return "a builtin type";
  if (T->module && PyType_IsSubtype(tp, reinterpret_cast<PyTypeObject*>(T->module)))
    return "an nn.Module built inside the traced code";
  bool isTuple = PyType_IsSubtype(tp, &PyTuple_Type);
  PyObject* mro = tp->tp_mro;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(mro); ++i) {
    auto* k = reinterpret_cast<PyTypeObject*>(PyTuple_GET_ITEM(mro, i));
    if (k == &PyBaseObject_Type || (isTuple && k == &PyTuple_Type)) continue;
    if (!(k->tp_flags & Py_TPFLAGS_HEAPTYPE)) return "a subclass of " + tpName(k);
    for (const char* n : kUnmodelled)
      if (PyDict_GetItemString(k->tp_dict, n)) return tpName(k) + " defines " + n;
    if (isTuple)
      for (const char* n : kTupleUnmodelled)
        if (PyDict_GetItemString(k->tp_dict, n)) return "a tuple subclass defining " + std::string(n);
  }
  if (!isTuple && tp->tp_dictoffset == 0) return "instances without a __dict__ (__slots__)";
  return "";
}

namespace {

/// A value a fresh module may hold in its instance dict: an immutable constant.
bool immutableConst(PyObject* v) {
  if (v == Py_None || PyBool_Check(v) || PyLong_CheckExact(v) || PyFloat_CheckExact(v) || PyUnicode_CheckExact(v))
    return true;
  if (!PyTuple_CheckExact(v)) return false;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(v); ++i)
    if (!immutableConst(PyTuple_GET_ITEM(v, i))) return false;
  return true;
}

/// Whether `v` is an empty dict or set (a fresh module's hook dicts, `_parameters`, ...).
bool emptyStore(PyObject* v) {
  return (PyDict_Check(v) && PyDict_GET_SIZE(v) == 0) || (PyAnySet_Check(v) && PySet_GET_SIZE(v) == 0);
}

}  // namespace

bool isFreshModule(const VarRef& v) { return v->is(Var::Kind::Object) && v->name == kFreshModule; }

bool freshModuleValue(PyObject* v) { return immutableConst(v); }

VarRef Translator::freshModule(const VarRef& clsVar, std::vector<VarRef>& args,
                               std::vector<std::pair<PyRef, VarRef>>& kwargs) {
  // Note [Fresh modules]: `nn.Softmax(dim=-1)` inside forward. torch.nn's own
  // module classes build deterministically from constant arguments, so the
  // instance is made now, as a template that answers attribute reads; it must
  // hold no parameters, buffers, children or hooks, and only immutable
  // constants, so nothing the graph does can change it (attribute writes on it
  // break: it has no source). Where it escapes it is rebuilt as a new
  // `cls(*args, **kwargs)`, the object eager has made at this point.
  PyObject* cls = clsVar->obj.get();
  auto* tp = reinterpret_cast<PyTypeObject*>(cls);
  PyRef mod = PyRef::steal(PyObject_GetAttrString(cls, "__module__"));
  if (!mod) PyErr_Clear();
  if (!mod || !PyUnicode_Check(mod.get()) || PyUnicode_Tailmatch(mod.get(), PyRef::steal(PyUnicode_FromString("torch.nn.modules.")).get(), 0, PY_SSIZE_T_MAX, -1) != 1) {
    fail(GB::UntraceableCall, tpName(tp) + "(): an nn.Module class from outside torch.nn built inside the traced code");
    return nullptr;
  }
  PyRef a = PyRef::steal(PyTuple_New(static_cast<Py_ssize_t>(args.size())));
  for (size_t i = 0; i < args.size(); ++i) {
    if (!isConst(args[i])) {
      fail(GB::UntraceableCall, tpName(tp) + "() with a non-constant argument");
      return nullptr;
    }
    PyRef c = constOf(args[i]);
    if (!c) return nullptr;
    PyTuple_SET_ITEM(a.get(), static_cast<Py_ssize_t>(i), c.release());
  }
  PyRef kw = PyRef::steal(PyDict_New());
  for (auto& [k, v] : kwargs) {
    if (!isConst(v)) {
      fail(GB::UntraceableCall, tpName(tp) + "() with a non-constant argument");
      return nullptr;
    }
    PyRef c = constOf(v);
    if (!c) return nullptr;
    PyDict_SetItem(kw.get(), k.get(), c.get());
  }
  // Built under `with torch.device("meta"):` so that a module with parameters
  // (refused below) draws no random numbers and allocates nothing.
  PyRef meta = PyRef::steal(PyObject_CallFunction(pyTypes()->torchDevice, "s", "meta"));
  PyRef entered = meta ? PyRef::steal(PyObject_CallMethod(meta.get(), "__enter__", nullptr)) : PyRef();
  if (!entered) {
    failPy(GB::Internal, "torch.device('meta') as a context manager");
    return nullptr;
  }
  PyObject* inst = PyObject_Call(cls, a.get(), kw.get());
  PyObject *et, *ev, *tb;
  PyErr_Fetch(&et, &ev, &tb);
  PyRef exited = PyRef::steal(PyObject_CallMethod(meta.get(), "__exit__", "OOO", Py_None, Py_None, Py_None));
  if (!exited) {  // the default-device mode may still be set: nothing more runs in this translation
    Py_XDECREF(et);
    Py_XDECREF(ev);
    Py_XDECREF(tb);
    Py_XDECREF(inst);
    failPy(GB::Internal, "leaving torch.device('meta')");
    failWhole();
    return nullptr;
  }
  PyErr_Restore(et, ev, tb);
  if (!inst) {
    failPy(GB::RaisesException, tpName(tp) + "() raised");
    return nullptr;
  }
  PyRef m = PyRef::steal(inst);
  PyObject** dp = _PyObject_GetDictPtr(inst);
  if (!dp || !*dp) {
    fail(GB::UntraceableCall, tpName(tp) + "(): a module without a __dict__");
    return nullptr;
  }
  PyObject *key, *val;
  Py_ssize_t pos = 0;
  while (PyDict_Next(*dp, &pos, &key, &val)) {
    if (immutableConst(val) || emptyStore(val)) continue;
    fail(GB::UntraceableCall, tpName(tp) + "(): a module with state (" + PyUnicode_AsUTF8(key) + ") built inside the traced code");
    return nullptr;
  }
  VarRef v = makeVar(Var::Kind::Object, m);
  v->name = kFreshModule;
  v->self = clsVar;
  v->items = args;
  for (auto& [k, val] : kwargs) {
    v->keys.push_back(k);
    v->kwItems.push_back(val);
  }
  return v;
}

VarRef Translator::constructUser(const VarRef& clsVar, std::vector<VarRef>& args,
                                 std::vector<std::pair<PyRef, VarRef>>& kwargs) {
  auto* tp = reinterpret_cast<PyTypeObject*>(clsVar->obj.get());
  const PyTypes* T = pyTypes();
  if (T->module && PyType_IsSubtype(tp, reinterpret_cast<PyTypeObject*>(T->module)) &&
      Py_TYPE(tp)->tp_call == PyType_Type.tp_call)
    return freshModule(clsVar, args, kwargs);
  std::string why = userClassProblem(tp);
  if (!why.empty()) {
    fail(GB::UntraceableCall, tpName(tp) + "(): " + why);
    return nullptr;
  }
  static PyObject* newName = interned("__new__");
  static PyObject* initName = interned("__init__");
  PyTypeObject* owner = nullptr;
  PyObject* newAttr = mroLookup(tp, newName, &owner);
  VarRef self;
  if (tp->tp_new == PyBaseObject_Type.tp_new) {
    self = makeVar(Var::Kind::UserObject);
    self->self = clsVar;
  } else if (newAttr && Py_TYPE(newAttr) == &PyStaticMethod_Type && (owner->tp_flags & Py_TPFLAGS_HEAPTYPE)) {
    PyObject* fn = wrappedFunc(newAttr);
    if (!fn || !PyFunction_Check(fn) || !isUserFunction(fn)) {
      fail(GB::UntraceableCall, tpName(tp) + ".__new__ is not Python code");
      return nullptr;
    }
    PyRef keep = PyRef::borrow(fn);
    std::vector<VarRef> all{clsVar};
    all.insert(all.end(), args.begin(), args.end());
    self = inlineFunction(fn, std::move(all), kwargs, nullptr);
    if (!self) return nullptr;
    // type.__call__ runs __init__ only when __new__ returned an instance of the class.
    PyObject* rt = typeOf(self);
    if (!rt) {
      fail(GB::UntraceableCall, tpName(tp) + ".__new__ returned an untracked value");
      return nullptr;
    }
    if (!PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(rt), tp)) return self;
  } else {
    fail(GB::UntraceableCall, tpName(tp) + "(): __new__ of " + (owner ? tpName(owner) : std::string("?")));
    return nullptr;
  }
  PyObject* init = mroLookup(tp, initName, &owner);
  if (!init || owner == &PyBaseObject_Type) {
    if ((!args.empty() || !kwargs.empty()) && tp->tp_new == PyBaseObject_Type.tp_new) {
      fail(GB::RaisesException, tpName(tp) + "() takes no arguments (TypeError)");
      return nullptr;
    }
    return self;
  }
  if (!PyFunction_Check(init) || !isUserFunction(init)) {
    fail(GB::UntraceableCall, tpName(tp) + ".__init__ is a " + Py_TYPE(init)->tp_name);
    return nullptr;
  }
  PyRef keep = PyRef::borrow(init);
  std::vector<VarRef> all{self};
  all.insert(all.end(), args.begin(), args.end());
  VarRef r = inlineFunction(init, std::move(all), std::move(kwargs), nullptr);
  if (!r) return nullptr;
  if (!r->is(Var::Kind::Const) || r->obj.get() != Py_None) {
    fail(GB::RaisesException, tpName(tp) + ".__init__ returned a value (TypeError)");
    return nullptr;
  }
  return self;
}

VarRef Translator::tupleNew(std::vector<VarRef>& args, std::vector<std::pair<PyRef, VarRef>>& kwargs) {
  if (args.size() != 2 || !kwargs.empty() || !args[0]->is(Var::Kind::Object) || !PyType_Check(args[0]->obj.get())) {
    fail(GB::UntraceableCall, "tuple.__new__ arguments");
    return nullptr;
  }
  auto* tp = reinterpret_cast<PyTypeObject*>(args[0]->obj.get());
  std::string why = PyType_IsSubtype(tp, &PyTuple_Type) ? userClassProblem(tp) : "not a tuple subclass";
  if (!why.empty()) {
    fail(GB::UntraceableCall, "tuple.__new__(" + tpName(tp) + "): " + why);
    return nullptr;
  }
  std::vector<VarRef> items;
  VarRef it = iterate(args[1]);
  if (!it || !unpack(it, items)) return nullptr;
  VarRef t = makeSeq(Var::Kind::Tuple, std::move(items));
  t->obj = args[0]->obj;
  t->self = args[0];
  PyObject* f = PyObject_GetAttrString(args[0]->obj.get(), "_fields");
  if (!f) PyErr_Clear();
  if (f && !PyTuple_Check(f)) Py_CLEAR(f);
  t->fields = PyRef::steal(f);
  return t;
}

VarRef Translator::classAttr(const VarRef& self, const VarRef& clsVar, PyObject* attr, PyObject* name) {
  // What the class holds under `name` is guarded through the class's source, so
  // that a method or attribute replaced on the class after the first call does
  // not run the old graph; without a source it cannot be guarded.
  if (!clsVar->source) {
    fail(GB::UnmodeledAttribute, std::string(".") + PyUnicode_AsUTF8(name) + ": an attribute of a class with no source");
    return nullptr;
  }
  SourceRef attrSrc = Source::attr(clsVar->source, name);
  if (PyFunction_Check(attr)) {
    guardId(attrSrc, attr);  // the class gives the function itself
  } else if (Py_TYPE(attr) == &PyStaticMethod_Type) {
    if (PyObject* fn = wrappedFunc(attr)) guardId(attrSrc, fn);  // likewise
  } else if (Py_TYPE(attr) == &PyClassMethod_Type) {
    static PyObject* funcName = PyUnicode_InternFromString("__func__");
    if (PyObject* fn = wrappedFunc(attr)) guardId(Source::attr(attrSrc, funcName), fn);  // a new bound method each read
  }
  if (PyFunction_Check(attr)) {
    auto m = makeVar(Var::Kind::BoundMethod, PyRef::borrow(attr));
    m->self = self;
    return m;
  }
  if (Py_TYPE(attr) == &PyStaticMethod_Type) {
    if (PyObject* fn = wrappedFunc(attr)) return makeVar(Var::Kind::Object, PyRef::borrow(fn));
  } else if (Py_TYPE(attr) == &PyClassMethod_Type) {
    PyObject* fn = wrappedFunc(attr);
    if (fn && PyFunction_Check(fn)) {
      auto m = makeVar(Var::Kind::BoundMethod, PyRef::borrow(fn));
      m->self = clsVar;
      return m;
    }
  } else if (!Py_TYPE(attr)->tp_descr_get) {
    // A plain class attribute, read (and guarded) through the class's source.
    return wrap(attr, attrSrc);
  }
  fail(GB::UnmodeledAttribute, std::string(".") + PyUnicode_AsUTF8(name) + " is a " + Py_TYPE(attr)->tp_name);
  return nullptr;
}

VarRef Translator::userAttr(const VarRef& obj, PyObject* name) {
  const VarRef& clsVar = obj->self;
  auto* tp = reinterpret_cast<PyTypeObject*>(clsVar->obj.get());
  if (PyUnicode_CompareWithASCIIString(name, "__class__") == 0) return clsVar;
  if (PyUnicode_CompareWithASCIIString(name, "__dict__") == 0) {
    fail(GB::UnmodeledAttribute, ".__dict__ of a " + tpName(tp));
    return nullptr;
  }
  PyObject* cattr = mroLookup(tp, name);
  PyRef keep = PyRef::borrow(cattr);
  if (cattr && Py_TYPE(cattr)->tp_descr_set) {  // a data descriptor wins over the instance dict
    if (Py_TYPE(cattr) == &PyProperty_Type) {
      PyRef g = PyRef::steal(PyObject_GetAttrString(cattr, "fget"));
      if (!g) PyErr_Clear();
      if (g && PyFunction_Check(g.get()) && isUserFunction(g.get())) return inlineFunction(g.get(), {obj}, {}, nullptr);
    }
    fail(GB::UnmodeledAttribute, std::string(".") + PyUnicode_AsUTF8(name) + " is a " + Py_TYPE(cattr)->tp_name);
    return nullptr;
  }
  for (size_t j = 0; j < obj->keys.size(); ++j)
    if (PyUnicode_Compare(obj->keys[j].get(), name) == 0) return obj->items[j];
  if (cattr) return classAttr(obj, clsVar, cattr, name);
  static PyObject* getattrName = interned("__getattr__");
  if (PyObject* ga = mroLookup(tp, getattrName)) {
    if (PyFunction_Check(ga) && isUserFunction(ga)) {
      PyRef k = PyRef::borrow(ga);
      return inlineFunction(ga, {obj, makeConst(PyRef::borrow(name))}, {}, nullptr);
    }
  }
  fail(GB::UnmodeledAttribute, std::string(".") + PyUnicode_AsUTF8(name) + " of a " + tpName(tp) + " (AttributeError)");
  return nullptr;
}

VarRef Translator::namedTupleAttr(const VarRef& obj, PyObject* name, bool& handled) {
  handled = false;
  PyTypeObject* owner = nullptr;
  PyObject* cattr = mroLookup(reinterpret_cast<PyTypeObject*>(obj->obj.get()), name, &owner);
  // tuple's own methods (count, index) are container methods.
  if (!cattr || !(owner->tp_flags & Py_TPFLAGS_HEAPTYPE)) return nullptr;
  handled = true;
  PyRef keep = PyRef::borrow(cattr);
  if (Py_TYPE(cattr) == &PyProperty_Type) {
    PyRef g = PyRef::steal(PyObject_GetAttrString(cattr, "fget"));
    if (!g) PyErr_Clear();
    if (g && PyFunction_Check(g.get()) && isUserFunction(g.get())) return inlineFunction(g.get(), {obj}, {}, nullptr);
  }
  return classAttr(obj, obj->self, cattr, name);
}

bool Translator::userStoreAttr(const VarRef& obj, PyObject* name, const VarRef& value) {
  auto* tp = reinterpret_cast<PyTypeObject*>(obj->self->obj.get());
  std::string what = std::string(".") + PyUnicode_AsUTF8(name) + " = ...";
  if (PyUnicode_CompareWithASCIIString(name, "__class__") == 0 ||
      PyUnicode_CompareWithASCIIString(name, "__dict__") == 0)
    return fail(GB::AttributeWrite, what);
  PyObject* cattr = mroLookup(tp, name);
  if (cattr && Py_TYPE(cattr)->tp_descr_set) {
    if (Py_TYPE(cattr) == &PyProperty_Type) {
      PyRef s = PyRef::steal(PyObject_GetAttrString(cattr, "fset"));
      if (!s) PyErr_Clear();
      if (s && PyFunction_Check(s.get()) && isUserFunction(s.get()))
        return inlineFunction(s.get(), {obj, value}, {}, nullptr) != nullptr;
    }
    return fail(GB::AttributeWrite, what + " (a " + Py_TYPE(cattr)->tp_name + " on " + tpName(tp) + ")");
  }
  for (size_t j = 0; j < obj->keys.size(); ++j)
    if (PyUnicode_Compare(obj->keys[j].get(), name) == 0) {
      obj->items[j] = value;
      return true;
    }
  obj->keys.push_back(PyRef::borrow(name));
  obj->items.push_back(value);
  return true;
}

VarRef Translator::callUser(const VarRef& obj, std::vector<VarRef>& args,
                            std::vector<std::pair<PyRef, VarRef>>& kwargs) {
  static PyObject* callName = interned("__call__");
  auto* tp = reinterpret_cast<PyTypeObject*>(obj->self->obj.get());
  PyObject* c = mroLookup(tp, callName);
  if (!c || !PyFunction_Check(c) || !isUserFunction(c)) {
    fail(GB::UntraceableCall, c ? tpName(tp) + ".__call__ is not Python code" : "a " + tpName(tp) + " is not callable");
    return nullptr;
  }
  PyRef keep = PyRef::borrow(c);
  std::vector<VarRef> all{obj};
  all.insert(all.end(), args.begin(), args.end());
  return inlineFunction(c, std::move(all), std::move(kwargs), nullptr);
}

int Translator::userTruth(const VarRef& obj) {
  auto* tp = reinterpret_cast<PyTypeObject*>(obj->self->obj.get());
  for (const char* n : {"__bool__", "__len__"}) {
    PyRef name = PyRef::steal(PyUnicode_FromString(n));
    if (mroLookup(tp, name.get())) {
      fail(GB::UnsupportedType, "truth value of a " + tpName(tp) + " with " + n);
      return -1;
    }
  }
  return 1;
}

}  // namespace xacc::capture::translate
