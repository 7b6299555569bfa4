// Modules built inside traced code (Note [Fresh modules]): `nn.Softmax(dim=-1)`
// in a forward is made at capture time as a template that answers attribute
// reads and whose forward is inlined; where it escapes, Codegen rebuilds it as
// a new `cls(*args, **kwargs)`, the object eager makes at that point.
#include <functional>

#include "PyTypes.h"
#include "Translator.h"

namespace xacc::capture::translate {

namespace {

std::string tpName(PyTypeObject* tp) { return tp->tp_name; }

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

// Note [Fresh modules]
// ~~~~~~~~~~~~~~~~~~~~
// `nn.Softmax(dim=-1)(x)`, `nn.Sequential(nn.ReLU(), nn.Tanh())`, transformers'
// `ACT2FN["silu"]` (a `SiLUActivation()` made per call) inside forward. In eager
// each call makes a new object; its constructor could draw random numbers
// (nn.Linear's init), register global state or run arbitrary Python. A module
// is built inside traced code only when its construction provably runs torch.nn's
// own code and nothing else, and leaves no state the graph could change:
//
//  * every class on its MRO other than `object` either comes from
//    `torch.nn.modules` or defines none of the methods construction runs
//    (`__init__`, `__new__`, `__setattr__`, `__getattr__`, `__getattribute__`,
//    `__delattr__`) and no data descriptor (which `self.x = v` would reach);
//    `call_super_init` is a plain bool; the metaclass is `type`
//    (constructorProblem); with such a class on the MRO, the constructor that
//    runs is nn.Module's own (other torch.nn constructors call overridable
//    methods: nn.Linear's reset_parameters). So a subclass of nn.Module that
//    only adds a `forward` (SiLUActivation) qualifies, one with its own
//    `__init__`, or a subclass of nn.Linear, does not;
//  * its arguments are constants, modules built this way, modules read from a
//    source (existing objects, guarded as usual; a child keeps its own
//    parameters), or lists, tuples and dicts of those (a container's children);
//  * torch's global module/parameter/buffer registration hooks are empty
//    (guarded: building would run them);
//  * the result holds no parameters, buffers or hooks, only immutable
//    constants and, in `_modules`, the modules it was given.
//
// The instance is made now, under `torch.device("meta")` (a module with
// parameters, refused afterwards, draws no random numbers), as a *template*:
// attribute reads answer its constants, a child read from it (iteration,
// indexing, attribute) is the child's own tracker (freshTemplates_), calls
// inline its class's forward (guarded as `cls.forward` when the class has a
// source). It has no source, so writes to it, and methods read from it, break;
// nothing the graph does can change it. Where it escapes (a break, a return) it
// is rebuilt as a new `cls(*args, **kwargs)`, the object eager has made at this
// point; its arguments are rebuilt from snapshots taken at the call (a list
// mutated afterwards does not change the children), and every reference to a
// child, inside the container or not, gets that one rebuilt object.
// Anything else is a GB002 break at the constructor call.
namespace {

bool fromTorchNn(PyTypeObject* k) {
  PyObject* mod = typeDict(k) ? PyDict_GetItemString(typeDict(k), "__module__") : nullptr;  // borrowed
  return mod && PyUnicode_Check(mod) &&
         PyUnicode_Tailmatch(mod, PyRef::steal(PyUnicode_FromString("torch.nn.modules.")).get(), 0, PY_SSIZE_T_MAX,
                             -1) == 1;
}

/// Why building an instance of module class `tp` may run code other than
/// torch.nn's own constructors; empty when it cannot (Note [Fresh modules]).
std::string constructorProblem(PyTypeObject* tp) {
  static const char* const kConstruction[] = {"__init__",         "__new__",    "__setattr__", "__getattr__",
                                              "__getattribute__", "__delattr__"};
  if (Py_TYPE(tp)->tp_call != PyType_Type.tp_call) return "a metaclass with its own __call__";
  PyObject* mro = tp->tp_mro;
  for (Py_ssize_t i = 0; mro && i < PyTuple_GET_SIZE(mro); ++i) {
    auto* k = reinterpret_cast<PyTypeObject*>(PyTuple_GET_ITEM(mro, i));
    if (k == &PyBaseObject_Type || fromTorchNn(k)) continue;
    if (!(k->tp_flags & Py_TPFLAGS_HEAPTYPE) || !typeDict(k)) return "a subclass of " + tpName(k);
    for (const char* n : kConstruction)
      if (PyDict_GetItemString(typeDict(k), n)) return tpName(k) + " defines " + n;
    PyObject *name, *val;
    Py_ssize_t pos = 0;
    while (PyDict_Next(typeDict(k), &pos, &name, &val)) {
      if (!Py_TYPE(val)->tp_descr_set || PyUnicode_CompareWithASCIIString(name, "__dict__") == 0 ||
          PyUnicode_CompareWithASCIIString(name, "__weakref__") == 0)
        continue;
      return tpName(k) + " has a data descriptor " + PyUnicode_AsUTF8(name);
    }
  }
  // torch.nn's constructors other than Module's call methods a subclass may
  // override (nn.Linear's reset_parameters): with a class from elsewhere on the
  // MRO, the constructor that runs must be nn.Module's own.
  static PyObject* initName = PyUnicode_InternFromString("__init__");
  PyObject* moduleCls = pyTypes()->module;
  bool foreign = false;
  for (Py_ssize_t i = 0; mro && i < PyTuple_GET_SIZE(mro); ++i) {
    auto* k = reinterpret_cast<PyTypeObject*>(PyTuple_GET_ITEM(mro, i));
    foreign = foreign || (k != &PyBaseObject_Type && !fromTorchNn(k));
  }
  if (foreign && (!moduleCls || _PyType_Lookup(tp, initName) !=
                                    _PyType_Lookup(reinterpret_cast<PyTypeObject*>(moduleCls), initName)))
    return "a subclass of a torch.nn module with a constructor of its own";
  PyRef superInit = PyRef::steal(PyUnicode_InternFromString("call_super_init"));
  PyObject* csi = _PyType_Lookup(tp, superInit.get());  // borrowed
  if (csi && !PyBool_Check(csi)) return "call_super_init is not a bool";
  return "";
}

}  // namespace

VarRef Translator::freshModule(const VarRef& clsVar, std::vector<VarRef>& args,
                               std::vector<std::pair<PyRef, VarRef>>& kwargs) {
  PyObject* cls = clsVar->obj.get();
  auto* tp = reinterpret_cast<PyTypeObject*>(cls);
  std::string why = constructorProblem(tp);
  if (!why.empty()) {
    fail(GB::UntraceableCall, tpName(tp) + "(): " + why + " (a module built inside the traced code)");
    return nullptr;
  }
  // Each argument as the constructor gets it (`py`) and the tracker Codegen
  // rebuilds it from (a snapshot of a list or dict: Note [Fresh modules]).
  std::function<bool(const VarRef&, PyRef&, VarRef&)> convert = [&](const VarRef& v, PyRef& py, VarRef& snap) {
    if (isFreshModule(v)) {
      py = v->obj;
      snap = v;
      return true;
    }
    if (v->is(Var::Kind::Object) && v->source && pyTypes()->module &&
        PyObject_TypeCheck(v->obj.get(), reinterpret_cast<PyTypeObject*>(pyTypes()->module))) {
      // A module that exists already (guarded through its source): the container holds it as is.
      py = v->obj;
      snap = v;
      freshTemplates_[v->obj.get()] = v;
      return true;
    }
    bool seq = v->is(Var::Kind::List) || (v->is(Var::Kind::Tuple) && !v->obj);
    if (seq) {
      std::vector<VarRef> items;
      PyRef out = PyRef::steal(v->is(Var::Kind::List) ? PyList_New(static_cast<Py_ssize_t>(v->items.size()))
                                                      : PyTuple_New(static_cast<Py_ssize_t>(v->items.size())));
      for (size_t i = 0; i < v->items.size(); ++i) {
        PyRef p;
        VarRef s;
        if (!convert(v->items[i], p, s)) return false;
        if (v->is(Var::Kind::List)) PyList_SET_ITEM(out.get(), static_cast<Py_ssize_t>(i), p.release());
        else PyTuple_SET_ITEM(out.get(), static_cast<Py_ssize_t>(i), p.release());
        items.push_back(std::move(s));
      }
      py = std::move(out);
      snap = makeSeq(v->kind, std::move(items));
      return true;
    }
    if (v->is(Var::Kind::Dict) && !v->obj && !v->source) {
      PyRef out = PyRef::steal(PyDict_New());
      VarRef d = makeVar(Var::Kind::Dict);
      for (size_t i = 0; i < v->keys.size(); ++i) {
        PyRef p;
        VarRef s;
        if (!convert(v->items[i], p, s)) return false;
        if (PyDict_SetItem(out.get(), v->keys[i].get(), p.get()) < 0) {
          failPy(GB::Internal, "dict of modules");
          return false;
        }
        d->keys.push_back(v->keys[i]);
        d->items.push_back(std::move(s));
      }
      py = std::move(out);
      snap = std::move(d);
      return true;
    }
    if (!isConst(v)) {
      fail(GB::UntraceableCall, tpName(tp) + "() with an argument that is not a constant or a module built this way");
      return false;
    }
    py = constOf(v);
    snap = v;
    return static_cast<bool>(py);
  };
  std::vector<VarRef> argSnaps, kwSnaps;
  PyRef a = PyRef::steal(PyTuple_New(static_cast<Py_ssize_t>(args.size())));
  for (size_t i = 0; i < args.size(); ++i) {
    PyRef c;
    VarRef s;
    if (!convert(args[i], c, s)) return nullptr;
    PyTuple_SET_ITEM(a.get(), static_cast<Py_ssize_t>(i), c.release());
    argSnaps.push_back(std::move(s));
  }
  PyRef kw = PyRef::steal(PyDict_New());
  for (auto& [k, v] : kwargs) {
    PyRef c;
    VarRef s;
    if (!convert(v, c, s)) return nullptr;
    PyDict_SetItem(kw.get(), k.get(), c.get());
    kwSnaps.push_back(std::move(s));
  }
  if (!guardNoRegistrationHooks()) return nullptr;
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
  static PyObject* modulesName = PyUnicode_InternFromString("_modules");
  while (PyDict_Next(*dp, &pos, &key, &val)) {
    if (immutableConst(val) || emptyStore(val)) continue;
    if (PyUnicode_Compare(key, modulesName) == 0 && PyDict_CheckExact(val)) {
      PyObject *ck, *cv;
      Py_ssize_t cp = 0;
      bool own = true;  // every child is a module built this way
      while (own && PyDict_Next(val, &cp, &ck, &cv)) own = freshTemplates_.count(cv) > 0;
      if (own) continue;
    }
    fail(GB::UntraceableCall, tpName(tp) + "(): a module with state (" + PyUnicode_AsUTF8(key) + ") built inside the traced code");
    return nullptr;
  }
  VarRef v = makeVar(Var::Kind::Object, m);
  v->name = kFreshModule;
  v->self = clsVar;
  v->items = std::move(argSnaps);
  for (size_t i = 0; i < kwargs.size(); ++i) {
    v->keys.push_back(kwargs[i].first);
    v->kwItems.push_back(kwSnaps[i]);
  }
  freshTemplates_[m.get()] = v;
  return v;
}

}  // namespace xacc::capture::translate
