// Modules built inside traced code (Note [Fresh modules]): `nn.Softmax(dim=-1)`
// in a forward is made at capture time as a template that answers attribute
// reads and whose forward is inlined; where it escapes, Codegen rebuilds it as
// a new `cls(*args, **kwargs)`, the object eager makes at that point.
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

}  // namespace xacc::capture::translate
