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
//  * Attribute reads run type(obj).__getattribute__ (Note [Attribute
//    protocol]); object's resolves as follows: a data descriptor on
//    the MRO first (a property's getter is inlined; a `__slots__` member reads
//    the instance's storage; other data descriptors break), then the instance
//    dict, then the class attribute (a function binds to the object,
//    staticmethod/classmethod unwrap, other values are read through the
//    class's source, so they are guarded), then `__getattr__` inlined.
//  * Writes run type(obj).__setattr__: one written in Python is inlined (a
//    frozen dataclass's raises, a break); object's (also when called as
//    `object.__setattr__(obj, ...)`) goes to a data descriptor (a property's
//    setter is inlined), a `__slots__` member (kept with the dict entries), or
//    the instance dict (an AttributeError, a break, without one).
//  * Operators, len(), indexing and truth run the class's dunder methods
//    (Note [Operator protocols]).
//  * Classes whose instances behave in ways this does not model break with
//    GB002 when called (userClassProblem): a metaclass with its own __call__,
//    abstract classes, builtin bases other than object and tuple (nn.Module,
//    Tensor, dict subclasses, exceptions), and classes defining __del__; for
//    tuple subclasses also any method that changes tuple behaviour.
//
// At a break or a return the object is rebuilt once (Codegen's Emitter):
// `object.__new__(cls)`, then each attribute stored with STORE_ATTR, or with
// `object.__setattr__(obj, name, value)` when the class has a __setattr__ of
// its own (either reaches a slot's member descriptor and no other data
// descriptor); a tuple subclass is `tuple.__new__(cls, items)`. Every reference to the tracker gets
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
    if (!typeDict(k)) continue;
    PyObject* v = PyDict_GetItemWithError(typeDict(k), name);
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
/// (__setattr__ written in Python is inlined by userStoreAttr, __delattr__ by delAttr.)
const char* const kUnmodelled[] = {"__del__"};
/// ... and, for tuple subclasses, the ones that change what a tuple does.
const char* const kTupleUnmodelled[] = {"__getattribute__", "__getitem__", "__iter__", "__len__", "__contains__", "__eq__",
                                        "__ne__",      "__lt__",   "__le__",  "__gt__",       "__ge__",
                                        "__hash__",    "__bool__", "__add__", "__mul__",      "__rmul__",
                                        "__reversed__", "__getattr__", "__init__"};

std::string tpName(PyTypeObject* tp) { return tp->tp_name; }

/// The `__get__` of a non-data descriptor whose type defines it in Python
/// code the translator inlines (no `__set__`/`__delete__`), else nullptr.
PyObject* pythonDescriptorGet(PyObject* attr) {
  PyTypeObject* dt = Py_TYPE(attr);
  if (!(dt->tp_flags & Py_TPFLAGS_HEAPTYPE) || dt->tp_descr_set) return nullptr;
  static PyObject* getName = interned("__get__");
  PyObject* get = _PyType_Lookup(dt, getName);  // borrowed
  return get && PyFunction_Check(get) && isUserFunction(get) ? get : nullptr;
}

}  // namespace

PyObject* wrappedFunc(PyObject* descr) {
  PyObject* f = PyObject_GetAttrString(descr, "__func__");
  if (!f) {
    PyErr_Clear();
    return nullptr;
  }
  Py_DECREF(f);  // the descriptor keeps it alive
  return f;
}

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
      if (PyDict_GetItemString(typeDict(k), n)) return tpName(k) + " defines " + n;
    if (isTuple)
      for (const char* n : kTupleUnmodelled)
        if (PyDict_GetItemString(typeDict(k), n)) return "a tuple subclass defining " + std::string(n);
  }
  return "";
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

// Note [Enum members]
// ~~~~~~~~~~~~~~~~~~~
// `Mode("train")` runs EnumType.__call__, which for one argument is the
// member lookup Enum.__new__ starts with: the value itself when it is a member
// of the class, else `cls._value2member_map_[value]`. The class is guarded by
// identity (its source) and its members are fixed when it is made, so with a
// constant value the member is answered now, as a constant object (rebuilt as
// itself); `.name`/`.value` then read its attributes. A value found no other
// way (`_missing_`, unhashable values, the functional API's extra arguments)
// is a break.
VarRef Translator::enumMember(const VarRef& cls, std::vector<VarRef>& args,
                              std::vector<std::pair<PyRef, VarRef>>& kwargs, bool& isEnum) {
  static PyObject* enumType = [] {
    PyObject* m = PyImport_ImportModule("enum");
    PyObject* t = m ? PyObject_GetAttrString(m, "EnumType") : nullptr;
    Py_XDECREF(m);
    if (!t) PyErr_Clear();
    return t;
  }();
  PyObject* o = cls->obj.get();
  isEnum = enumType && PyObject_TypeCheck(o, reinterpret_cast<PyTypeObject*>(enumType));
  if (!isEnum) return nullptr;
  auto* tp = reinterpret_cast<PyTypeObject*>(o);
  // EnumType.__call__ and Enum.__new__ themselves (a heap metaclass's tp_call
  // is the same slot function whatever its __call__, so the methods are compared).
  static PyObject* callName = interned("__call__");
  static PyObject* newName = interned("__new__");
  static PyObject* enumNew = [] {
    PyObject* m = PyImport_ImportModule("enum");
    PyObject* e = m ? PyObject_GetAttrString(m, "Enum") : nullptr;
    Py_XDECREF(m);
    // A made class holds the function itself (EnumType puts Enum.__new__ there).
    PyObject* sm = e ? PyDict_GetItemString(typeDict(reinterpret_cast<PyTypeObject*>(e)), "__new__") : nullptr;
    PyObject* n = sm ? PyObject_GetAttrString(sm, "__func__") : nullptr;
    Py_XDECREF(e);
    if (!n) PyErr_Clear();
    return n;
  }();
  if (mroLookup(Py_TYPE(o), callName) != mroLookup(reinterpret_cast<PyTypeObject*>(enumType), callName) ||
      !enumNew || mroLookup(tp, newName) != enumNew) {
    fail(GB::UntraceableCall, tpName(tp) + "(): an enum with its own metaclass __call__ or __new__");
    return nullptr;
  }
  if (args.size() != 1 || !kwargs.empty() || !cls->source) {
    fail(GB::UntraceableCall, tpName(tp) + "(): the functional enum API or a class with no source");
    return nullptr;
  }
  if (args[0]->is(Var::Kind::Object) && Py_TYPE(args[0]->obj.get()) == tp) return args[0];  // a member itself
  if (!isConst(args[0])) {
    fail(GB::UntraceableCall, tpName(tp) + "() of a value that is not a constant");
    return nullptr;
  }
  PyRef v = constOf(args[0]);
  if (!v) return nullptr;
  PyRef map = PyRef::steal(PyObject_GetAttrString(o, "_value2member_map_"));
  PyObject* member = map && PyDict_Check(map.get()) ? PyDict_GetItemWithError(map.get(), v.get()) : nullptr;
  if (PyErr_Occurred()) PyErr_Clear();
  if (!member || Py_TYPE(member) != tp) {
    fail(GB::UntraceableCall, tpName(tp) + "() of a value with no member (_missing_ or ValueError)");
    return nullptr;
  }
  // An IntEnum/StrEnum member is also an int or str: a constant like any other.
  if (PyLong_Check(member) || PyUnicode_Check(member) || PyFloat_Check(member)) return makeConst(PyRef::borrow(member));
  return makeVar(Var::Kind::Object, PyRef::borrow(member));
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
  // not run the old graph. A class reached with no source (read from a trusted
  // torch global inside an inlined torch function: torch.distributions'
  // `constraints.less_than(...)`) is read through a weak proxy of it held as an
  // entry constant: the guards read the same class dict (and fail once the
  // class is gone); the class's own identity is fixed by the code that made
  // the object, which is guarded as before.
  //
  // A name in the own namespace of a class made by a class statement of this
  // translation (Note [Local classes]) needs no guard: its body could only
  // store constants and functions of its own code there, which every call's
  // class has alike, and a guard on the template (which lives for the
  // translation only) would fail once it is collected.
  const bool ownLocal = isLocalClassTemplate(clsVar->obj.get()) &&
                        PyDict_GetItemWithError(reinterpret_cast<PyTypeObject*>(clsVar->obj.get())->tp_dict, name) == attr;
  if (PyErr_Occurred()) PyErr_Clear();
  SourceRef clsSrc = clsVar->source;
  if (ownLocal) {
    if (PyFunction_Check(attr)) {
      auto m = makeVar(Var::Kind::BoundMethod, PyRef::borrow(attr));
      m->self = self;
      return m;
    }
    if (!Py_TYPE(attr)->tp_descr_get) return wrap(attr, nullptr);
  }
  if (!clsSrc && clsVar->obj && PyType_Check(clsVar->obj.get())) {
    if (PyObject* proxy = PyWeakref_NewProxy(clsVar->obj.get(), nullptr)) {
      clsSrc = Source::root(Access::Const, host_.constIndex(proxy));
      Py_DECREF(proxy);
    } else {
      PyErr_Clear();
    }
  }
  if (!clsSrc) {
    fail(GB::UnmodeledAttribute, std::string(".") + PyUnicode_AsUTF8(name) + ": an attribute of a class with no source");
    return nullptr;
  }
  SourceRef attrSrc = Source::attr(clsSrc, name);
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
  } else if (PyObject* get = pythonDescriptorGet(attr)) {
    // Note [Non-data descriptors]: the instance dict did not have the name
    // (the caller looked first), so Python calls
    // `type(attr).__get__(attr, obj, type(obj))`; a __get__ written in Python
    // is inlined like any method (torch.distributions' lazy_property computes
    // the value and stores it on the instance with setattr). The descriptor is
    // read from the class dict that holds it (`cls.__mro__[i].__dict__[name]`:
    // reading `cls.name` would call __get__ again), so replacing it recompiles.
    PyRef keepGet = PyRef::borrow(get);
    static PyObject* mroName = interned("__mro__");
    static PyObject* dictName = interned("__dict__");
    auto* tp = reinterpret_cast<PyTypeObject*>(clsVar->obj.get());
    SourceRef raw;
    for (Py_ssize_t i = 0; !raw && tp->tp_mro && i < PyTuple_GET_SIZE(tp->tp_mro); ++i) {
      auto* k = reinterpret_cast<PyTypeObject*>(PyTuple_GET_ITEM(tp->tp_mro, i));
      if (typeDict(k) && PyDict_GetItemWithError(typeDict(k), name) == attr)
        raw = Source::item(Source::attr(Source::itemIndex(Source::attr(clsSrc, mroName), i), dictName), name);
    }
    if (!raw) {
      fail(GB::UnmodeledAttribute, std::string(".") + PyUnicode_AsUTF8(name) + ": a descriptor not found in the class dicts");
      return nullptr;
    }
    VarRef d = wrap(attr, raw);
    if (!d) return nullptr;
    return inlineFunction(get, {d, self, clsVar}, {}, nullptr);
  }
  fail(GB::UnmodeledAttribute, std::string(".") + PyUnicode_AsUTF8(name) + " is a " + Py_TYPE(attr)->tp_name);
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
  // type(obj).__setattr__ written in Python (a frozen dataclass's) is inlined;
  // object's is objectSetAttr.
  static PyObject* setattrName = interned("__setattr__");
  auto* tp = reinterpret_cast<PyTypeObject*>(obj->self->obj.get());
  PyTypeObject* owner = nullptr;
  PyObject* sa = mroLookup(tp, setattrName, &owner);
  if (!sa || owner == &PyBaseObject_Type) return objectSetAttr(obj, name, value);
  PyRef keep = PyRef::borrow(sa);
  if (!PyFunction_Check(sa) || !isUserFunction(sa))
    return fail(GB::AttributeWrite, std::string(".") + PyUnicode_AsUTF8(name) + " = ... through " + tpName(owner) +
                             ".__setattr__, a " + Py_TYPE(sa)->tp_name);
  VarRef bound = classAttr(obj, obj->self, sa, setattrName);
  if (!bound) return false;
  return inlineFunction(bound->obj.get(), {obj, makeConst(PyRef::borrow(name)), value}, {}, nullptr) != nullptr;
}

bool Translator::objectSetAttr(const VarRef& obj, PyObject* name, const VarRef& value) {
  auto* tp = reinterpret_cast<PyTypeObject*>(obj->self->obj.get());
  std::string what = std::string(".") + PyUnicode_AsUTF8(name) + " = ...";
  if (PyUnicode_CompareWithASCIIString(name, "__class__") == 0 ||
      PyUnicode_CompareWithASCIIString(name, "__dict__") == 0)
    return fail(GB::AttributeWrite, what);
  PyObject* cattr = mroLookup(tp, name);
  bool slot = cattr && Py_TYPE(cattr) == &PyMemberDescr_Type;  // a __slots__ member: stored like a dict entry
  if (!slot && tp->tp_dictoffset == 0)
    return fail(GB::AttributeWrite, what + " (a " + tpName(tp) + " has no __dict__: AttributeError)");
  if (slot) cattr = nullptr;
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

// Note [Operator protocols]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~
// Operators on a user object run the methods its class defines, as CPython's
// slots do: `a + b` is `type(a).__add__(a, b)`, and when that is missing or
// returns NotImplemented, `type(b).__radd__(b, a)` (first when type(b) is a
// proper subclass of type(a) that overrides it; never for the same type);
// `a += b` tries `__iadd__` first. `==`/`!=` fall back to identity (object's
// __eq__), `len(o)` is `__len__` (an int >= 0), `o[i]` `__getitem__`,
// `o[i] = v` `__setitem__`, truth `__bool__` (a bool) then `__len__`. Each
// method is a class attribute read through the class's source, so it is
// guarded like any method (a class with no source breaks). The left operand
// of a reflected call may be a constant (int, float, str: their slots return
// NotImplemented for a user object); any other value breaks, as does a method
// that is not Python code. The table below is the operator module's name ->
// the method, its reflection and the in-place form.
namespace {

struct OpSlot {
  const char* op;       ///< operator module function
  const char* method;   ///< __op__
  const char* reflect;  ///< __rop__ (for comparisons the mirrored one), null when none
  const char* base;     ///< for an in-place operator: the plain operator it falls back to
};

const OpSlot kOpSlots[] = {
    {"add", "__add__", "__radd__", nullptr},
    {"sub", "__sub__", "__rsub__", nullptr},
    {"mul", "__mul__", "__rmul__", nullptr},
    {"truediv", "__truediv__", "__rtruediv__", nullptr},
    {"floordiv", "__floordiv__", "__rfloordiv__", nullptr},
    {"mod", "__mod__", "__rmod__", nullptr},
    {"pow", "__pow__", "__rpow__", nullptr},
    {"matmul", "__matmul__", "__rmatmul__", nullptr},
    {"and_", "__and__", "__rand__", nullptr},
    {"or_", "__or__", "__ror__", nullptr},
    {"xor", "__xor__", "__rxor__", nullptr},
    {"lshift", "__lshift__", "__rlshift__", nullptr},
    {"rshift", "__rshift__", "__rrshift__", nullptr},
    {"iadd", "__iadd__", nullptr, "add"},
    {"isub", "__isub__", nullptr, "sub"},
    {"imul", "__imul__", nullptr, "mul"},
    {"itruediv", "__itruediv__", nullptr, "truediv"},
    {"ifloordiv", "__ifloordiv__", nullptr, "floordiv"},
    {"imod", "__imod__", nullptr, "mod"},
    {"ipow", "__ipow__", nullptr, "pow"},
    {"imatmul", "__imatmul__", nullptr, "matmul"},
    {"iand", "__iand__", nullptr, "and_"},
    {"ior", "__ior__", nullptr, "or_"},
    {"ixor", "__ixor__", nullptr, "xor"},
    {"ilshift", "__ilshift__", nullptr, "lshift"},
    {"irshift", "__irshift__", nullptr, "rshift"},
    {"eq", "__eq__", "__eq__", nullptr},
    {"ne", "__ne__", "__ne__", nullptr},
    {"lt", "__lt__", "__gt__", nullptr},
    {"le", "__le__", "__ge__", nullptr},
    {"gt", "__gt__", "__lt__", nullptr},
    {"ge", "__ge__", "__le__", nullptr},
};

const OpSlot* opSlot(PyObject* op) {
  for (const OpSlot& s : kOpSlots)
    if (operatorFn(s.op) == op) return &s;
  return nullptr;
}

/// The type of a tracked value for the protocols: a user object's class, else null.
PyTypeObject* userType(const VarRef& v) {
  return v->is(Var::Kind::UserObject) || isDictSubclassVar(v) ? reinterpret_cast<PyTypeObject*>(v->self->obj.get())
                                                               : nullptr;
}

bool isNotImplemented(const VarRef& v) { return v->is(Var::Kind::Const) && v->obj.get() == Py_NotImplemented; }

}  // namespace

VarRef Translator::userDunder(const VarRef& obj, PyObject* name, std::vector<VarRef> args, bool& handled) {
  handled = false;
  PyTypeObject* tp = userType(obj);
  if (!tp) return nullptr;
  PyTypeObject* owner = nullptr;
  PyObject* m = mroLookup(tp, name, &owner);
  if (!m || owner == &PyBaseObject_Type) return nullptr;  // object's own: the caller's default
  handled = true;
  PyRef keep = PyRef::borrow(m);
  if (!PyFunction_Check(m) || !isUserFunction(m)) {
    fail(GB::UnsupportedType, tpName(tp) + "." + PyUnicode_AsUTF8(name) + " is a " + Py_TYPE(m)->tp_name);
    return nullptr;
  }
  VarRef bound = classAttr(obj, obj->self, m, name);  // guarded through the class's source
  if (!bound) return nullptr;
  std::vector<VarRef> all{obj};
  all.insert(all.end(), args.begin(), args.end());
  return inlineFunction(bound->obj.get(), std::move(all), {}, nullptr);
}

VarRef Translator::userBinary(PyObject* op, const VarRef& a, const VarRef& b) {
  const OpSlot* s = opSlot(op);
  if (!s) {
    fail(GB::UnsupportedType, "an operator on a user object");
    return nullptr;
  }
  PyRef name = PyRef::steal(PyUnicode_InternFromString(s->method));
  bool handled = false;
  if (s->base) {  // in place: __iop__, else the plain operator
    VarRef r = userDunder(a, name.get(), {b}, handled);
    if (failed()) return nullptr;
    if (handled && !isNotImplemented(r)) return r;
    return userBinary(operatorFn(s->base), a, b);
  }
  PyRef rname = PyRef::steal(PyUnicode_InternFromString(s->reflect));
  PyTypeObject *ta = userType(a), *tb = userType(b);
  // Comparisons try the mirrored method of the right operand even for the same
  // type (do_richcompare); arithmetic only for another type (SLOT1BINFULL).
  const bool compare = s->method == s->reflect || std::strcmp(s->op, "lt") == 0 || std::strcmp(s->op, "le") == 0 ||
                       std::strcmp(s->op, "gt") == 0 || std::strcmp(s->op, "ge") == 0;
  bool reflectable = tb && (compare || tb != ta) && (ta || isConst(a));
  if (!ta && !reflectable) {
    fail(GB::UnsupportedType, std::string("operator ") + s->op + " between a " + (tb ? tpName(tb) : "?") + " and an unsupported value");
    return nullptr;
  }
  static PyObject* eqName = interned("__eq__");
  // `self.<m>(other)`: done when it gave something other than NotImplemented;
  // object's __ne__ inverts __eq__ when the class defines one.
  auto attempt = [&](const VarRef& self, PyObject* m, const VarRef& other, bool& done) -> VarRef {
    done = false;
    bool h = false;
    VarRef r = userDunder(self, m, {other}, h);
    if (failed()) return nullptr;
    if (!h && PyUnicode_CompareWithASCIIString(m, "__ne__") == 0) {
      r = userDunder(self, eqName, {other}, h);
      if (failed()) return nullptr;
      if (h && !isNotImplemented(r)) {
        r = concrete(r);
        if (failed()) return nullptr;
        if (!r->is(Var::Kind::Const)) {
          fail(GB::UnsupportedType, "!= through a __eq__ that returned no constant");
          return nullptr;
        }
        int t = PyObject_IsTrue(r->obj.get());
        if (t < 0) {
          failPy(GB::UnsupportedType, "truth of __eq__'s result");
          return nullptr;
        }
        done = true;
        return makeConst(PyRef::borrow(t ? Py_False : Py_True));
      }
    }
    done = h && !isNotImplemented(r);
    return done ? r : nullptr;
  };
  bool done = false;
  if (reflectable && ta && tb != ta && PyType_IsSubtype(tb, ta) &&
      (compare || mroLookup(tb, rname.get()) != mroLookup(ta, rname.get()))) {
    VarRef r = attempt(b, rname.get(), a, done);  // the subclass's reflected method first
    if (done || failed()) return r;
    reflectable = false;
  }
  if (ta) {
    VarRef r = attempt(a, name.get(), b, done);
    if (done || failed()) return r;
  }
  if (reflectable) {
    VarRef r = attempt(b, rname.get(), a, done);
    if (done || failed()) return r;
  }
  bool plain = (ta || isConst(a)) && (tb || isConst(b));  // values whose __eq__ we know
  if (plain && (op == operatorFn("eq") || op == operatorFn("ne"))) {  // object's __eq__: identity
    bool same = a.get() == b.get();
    return makeConst(PyRef::borrow(same == (op == operatorFn("eq")) ? Py_True : Py_False));
  }
  fail(GB::UnsupportedType, std::string("operator ") + s->op + " not supported by " + (ta ? tpName(ta) : tpName(tb)) +
                    " (TypeError)");
  return nullptr;
}

VarRef Translator::userUnary(PyObject* op, const VarRef& v) {
  static const std::pair<const char*, const char*> kUnary[] = {
      {"neg", "__neg__"}, {"pos", "__pos__"}, {"invert", "__invert__"}, {"abs", "__abs__"}};
  for (auto& [o, m] : kUnary) {
    if (operatorFn(o) != op) continue;
    PyRef name = PyRef::steal(PyUnicode_InternFromString(m));
    bool handled = false;
    VarRef r = userDunder(v, name.get(), {}, handled);
    if (handled || failed()) return r;
  }
  fail(GB::UnsupportedType, "unary operator on a " + tpName(userType(v)));
  return nullptr;
}

namespace {

/// An exact non-negative int constant (what __len__ must return), -1 otherwise.
Py_ssize_t lenResult(const VarRef& r) {
  if (!r || !r->is(Var::Kind::Const) || !PyLong_Check(r->obj.get())) return -1;
  Py_ssize_t n = PyLong_AsSsize_t(r->obj.get());
  if (n < 0 && PyErr_Occurred()) PyErr_Clear();
  return n;
}

}  // namespace

VarRef Translator::userLen(const VarRef& obj) {
  static PyObject* lenName = interned("__len__");
  bool handled = false;
  VarRef r = userDunder(obj, lenName, {}, handled);
  if (failed()) return nullptr;
  if (!handled) {
    fail(GB::UnsupportedType, "len() of a " + tpName(userType(obj)) + " (TypeError)");
    return nullptr;
  }
  r = concrete(r);
  if (failed()) return nullptr;
  Py_ssize_t n = lenResult(r);
  if (n < 0) {
    fail(GB::UnsupportedType, tpName(userType(obj)) + ".__len__ returned no int >= 0");
    return nullptr;
  }
  return makeConst(PyRef::steal(PyLong_FromSsize_t(n)));
}

// Note [len of outside objects]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// len(obj) of an object read from outside the frame (an input, a global, an
// attribute: a Var of kind Object with a source) runs type(obj).__len__, the
// slot CPython calls; an instance attribute named __len__ is never consulted.
// When the class defines it in Python it is inlined, so its reads of the
// object's state are guarded like any inlined method's, and the function
// itself is guarded by identity through `type(obj).__len__` (a __len__
// replaced on the class later recompiles). Its result must be an int >= 0, as
// len() requires (a negative or non-int result raises in Python: a break). A
// __len__ in C, or an object without a source, stays a GB011 break.
VarRef Translator::objectLen(const VarRef& obj) {
  static PyObject* lenName = interned("__len__");
  PyTypeObject* tp = Py_TYPE(obj->obj.get());
  PyObject* fn = _PyType_Lookup(tp, lenName);  // borrowed
  if (!fn || !PyFunction_Check(fn) || !isUserFunction(fn) || !obj->source) {
    fail(GB::UnsupportedType, "len() of an unsupported value");
    return nullptr;
  }
  PyRef keep = PyRef::borrow(fn);
  guardId(Source::classAttr(Source::typeOf(obj->source), lenName), fn);  // Note [Guard reads of the type]
  VarRef r = inlineFunction(fn, {obj}, {}, nullptr);
  if (!r || failed()) return nullptr;
  r = concrete(r);
  if (failed()) return nullptr;
  Py_ssize_t n = lenResult(r);
  if (n < 0) {
    fail(GB::UnsupportedType, tpName(tp) + ".__len__ returned no int >= 0");
    return nullptr;
  }
  return makeConst(PyRef::steal(PyLong_FromSsize_t(n)));
}

VarRef Translator::userSubscr(const VarRef& obj, const VarRef& idx) {
  static PyObject* getName = interned("__getitem__");
  bool handled = false;
  VarRef r = userDunder(obj, getName, {idx}, handled);
  if (!handled && !failed()) fail(GB::UnsupportedType, "a " + tpName(userType(obj)) + " is not subscriptable");
  return r;
}

bool Translator::userStoreSubscr(const VarRef& obj, const VarRef& idx, const VarRef& val) {
  static PyObject* setName = interned("__setitem__");
  bool handled = false;
  VarRef r = userDunder(obj, setName, {idx, val}, handled);
  if (!handled && !failed()) fail(GB::UnsupportedType, "a " + tpName(userType(obj)) + " does not support item assignment");
  return r != nullptr;
}

int Translator::userTruth(const VarRef& obj) {
  static PyObject* boolName = interned("__bool__");
  static PyObject* lenName = interned("__len__");
  auto* tp = userType(obj);
  bool handled = false;
  VarRef r = userDunder(obj, boolName, {}, handled);
  if (failed()) return -1;
  if (handled) {
    r = concrete(r);
    if (failed()) return -1;
    if (!r->is(Var::Kind::Const) || !PyBool_Check(r->obj.get())) {
      fail(GB::UnsupportedType, tpName(tp) + ".__bool__ returned no constant bool");
      return -1;
    }
    return r->obj.get() == Py_True ? 1 : 0;
  }
  if (!mroLookup(tp, lenName)) return 1;
  VarRef n = userLen(obj);
  if (!n) return -1;
  return PyObject_IsTrue(n->obj.get());
}

}  // namespace xacc::capture::translate
