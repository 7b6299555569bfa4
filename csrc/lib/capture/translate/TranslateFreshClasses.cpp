// Classes made inside traced code by a class factory of the standard library
// (Note [Fresh classes]): `collections.namedtuple("Pair", ["a", "b"])` in a
// function body is made at capture time as a template; where it escapes,
// Codegen rebuilds it by calling the factory again, as eager does at that point.
#include <cstring>

#include "Translator.h"

namespace xacc::capture::translate {

// Note [Fresh classes]
// ~~~~~~~~~~~~~~~~~~~~
// `Pair = collections.namedtuple("Pair", ["a", "b"])` inside a function makes
// a new class on every call in eager. Such a factory (a row of kFactories) is
// called at capture time when every argument is a constant; the class it
// returns is a *template* tracked like a fresh module (Note [Fresh modules]):
// an Object tracker with no source whose `self` is the factory and whose
// items/keys/kwItems are the arguments. Constructing it (`Pair(x, y)`) inlines
// its Python `__new__` as for any class, so instances are tuple-subclass
// trackers whose class tracker is the template; attribute reads answer
// immutable constants only (`Pair._fields`). Where the class, or an instance,
// escapes (a return, a break), Codegen rebuilds it once per frame as
// `factory(*args, **kwargs)`: a new class per call, as in eager, shared by
// every reference (never the template itself, which would be one class for
// all calls). A factory that records its caller's module (namedtuple reads
// `sys._getframe(1).f_globals['__name__']`) is given that name explicitly, the
// name of the frame that calls it, both at capture and in the rebuilt call,
// so `__module__` is eager's. The template is held as an entry constant: the
// guards of its inlined `__new__` read its globals through a weak proxy.
// A factory with a non-constant argument stays a GB002 break.
namespace {

struct Factory {
  const char* module;
  const char* name;
  const char* callerModuleKw;  ///< keyword naming the caller's module (or null)
};

/// Pure class factories: they run no user code and change no global state.
constexpr Factory kFactories[] = {
    {"collections", "namedtuple", "module"},
};

const Factory* factoryOf(PyObject* fn) {
  static std::vector<std::pair<PyObject*, const Factory*>> known = [] {
    std::vector<std::pair<PyObject*, const Factory*>> out;
    for (const Factory& f : kFactories) {
      PyObject* m = PyImport_ImportModule(f.module);
      PyObject* o = m ? PyObject_GetAttrString(m, f.name) : nullptr;  // kept for the process
      Py_XDECREF(m);
      if (!o) PyErr_Clear();
      else out.emplace_back(o, &f);
    }
    return out;
  }();
  for (const auto& [o, f] : known)
    if (o == fn) return f;
  return nullptr;
}

}  // namespace

bool isFreshObject(const VarRef& v) {
  return v->is(Var::Kind::Object) && (v->name == kFreshModule || v->name == kFreshClass);
}

VarRef Translator::freshClass(const VarRef& fn, std::vector<VarRef>& args,
                              std::vector<std::pair<PyRef, VarRef>>& kwargs) {
  const Factory* f = factoryOf(fn->obj.get());
  if (!f) return nullptr;
  std::vector<std::pair<PyRef, VarRef>> kw = kwargs;
  if (f->callerModuleKw) {
    bool given = false;
    for (auto& [k, v] : kw)
      given = given || (PyUnicode_CompareWithASCIIString(k.get(), f->callerModuleKw) == 0 &&
                        !(v->is(Var::Kind::Const) && v->obj.get() == Py_None));
    if (!given) {
      PyObject* g = current_ ? current_->globals : nullptr;
      PyObject* name = g ? PyDict_GetItemString(g, "__name__") : nullptr;  // borrowed
      PyRef caller = name ? PyRef::borrow(name) : PyRef::steal(PyUnicode_FromString("__main__"));
      for (auto it = kw.begin(); it != kw.end();)
        it = PyUnicode_CompareWithASCIIString(it->first.get(), f->callerModuleKw) == 0 ? kw.erase(it) : it + 1;
      kw.emplace_back(PyRef::steal(PyUnicode_FromString(f->callerModuleKw)), makeConst(caller));
    }
  }
  // Each argument as the factory gets it and the tracker Codegen rebuilds it
  // from: a list of constants is snapshot (it may change after the call).
  auto convert = [&](const VarRef& v, PyRef& py, VarRef& snap) -> bool {
    if (isConst(v)) {
      py = constOf(v);
      snap = v;
      return static_cast<bool>(py);
    }
    if (v->is(Var::Kind::List)) {
      py = PyRef::steal(PyList_New(static_cast<Py_ssize_t>(v->items.size())));
      for (size_t i = 0; py && i < v->items.size(); ++i) {
        if (!v->items[i]->is(Var::Kind::Const)) return false;
        PyList_SET_ITEM(py.get(), static_cast<Py_ssize_t>(i), Py_NewRef(v->items[i]->obj.get()));
      }
      snap = makeSeq(Var::Kind::List, v->items);
      return static_cast<bool>(py);
    }
    return false;
  };
  PyRef tuple = PyRef::steal(PyTuple_New(static_cast<Py_ssize_t>(args.size())));
  PyRef dict = PyRef::steal(PyDict_New());
  std::vector<VarRef> argSnaps, kwSnaps;
  for (size_t i = 0; i < args.size() + kw.size(); ++i) {
    const VarRef& a = i < args.size() ? args[i] : kw[i - args.size()].second;
    PyRef py;
    VarRef snap;
    if (!convert(a, py, snap)) {
      fail(GB::UntraceableCall, std::string(f->name) + "() with an argument that is not a constant");
      return nullptr;
    }
    if (i < args.size()) {
      PyTuple_SET_ITEM(tuple.get(), static_cast<Py_ssize_t>(i), py.release());
      argSnaps.push_back(std::move(snap));
    } else {
      PyDict_SetItem(dict.get(), kw[i - args.size()].first.get(), py.get());
      kwSnaps.push_back(std::move(snap));
    }
  }
  PyRef cls = PyRef::steal(PyObject_Call(fn->obj.get(), tuple.get(), dict.get()));
  if (!cls) {
    failPyRaise(std::string(f->name) + "()");
    return nullptr;
  }
  if (!PyType_Check(cls.get())) {
    fail(GB::UntraceableCall, std::string(f->name) + "() returned no class");
    return nullptr;
  }
  host_.constIndex(cls.get());  // Note [Fresh classes]: the template lives as long as the entry
  VarRef v = makeVar(Var::Kind::Object, cls);
  v->name = kFreshClass;
  v->self = fn;
  v->items = std::move(argSnaps);
  for (size_t i = 0; i < kw.size(); ++i) {
    v->keys.push_back(kw[i].first);
    v->kwItems.push_back(kwSnaps[i]);
  }
  return v;
}

}  // namespace xacc::capture::translate
