// Classes made inside traced code by a class factory of the standard library
// (Note [Fresh classes]): `collections.namedtuple("Pair", ["a", "b"])` in a
// function body is made at capture time as a template; where it escapes,
// Codegen rebuilds it by calling the factory again, as eager does at that point.
// A class statement whose body only fills the namespace is made the same way
// (Note [Local classes]).
#include <cstring>

#include "Translator.h"
#include "PyTypes.h"

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

// Note [Local classes]
// ~~~~~~~~~~~~~~~~~~~~
// A `class` statement inside traced code (LOAD_BUILD_CLASS, then
// `__build_class__(body, name, *bases)`) makes a new class on every call in
// eager. When running its body can do nothing but fill the class namespace,
// the class is made at capture time by the real `__build_class__`, as a
// template tracked like a fresh class (Note [Fresh classes]): an Object tracker
// with no source whose `self` is `__build_class__` and whose items are its
// arguments. The body may only store constants and functions made from its own
// code objects (methods; `__class__` cells for super()) and read `__name__`
// (the module name, guarded); anything else it could run (a decorator, a
// global read, an annotation, a free variable of the enclosing function) is a
// GB002 break, as are keywords (metaclass=) and bases whose metaclass is not
// `type` or that define `__init_subclass__` (user code run by class creation).
// Instances are user objects of the template (Note [User objects]); its
// methods, inlined, read globals as the frame that made the class does (they
// share its globals dict), so no guard holds the template (reads of its own
// namespace are unguarded, Translator::classAttr), which lives for the
// translation only: held by an entry, its functions would keep the frame's
// globals alive from a code object's co_extra (Note [Generated code holds no
// globals]). Where the class escapes (a return, a break while it is live) it
// would have to be rebuilt from the body function, which Codegen does not
// rebuild: the frame is not split there (GB025 at codegen) and runs in Python.
PyObject* buildClassBuiltin() {
  static PyObject* bc = [] {
    PyObject* m = PyImport_ImportModule("builtins");
    PyObject* o = m ? PyObject_GetAttrString(m, "__build_class__") : nullptr;  // kept for the process
    Py_XDECREF(m);
    if (!o) PyErr_Clear();
    return o;
  }();
  return bc;
}

namespace {

/// Whether `name` is one of `code`'s cell variables (co_cellvars).
bool isCellVar(PyCodeObject* code, PyObject* name) {
  PyRef cells = PyRef::steal(PyObject_GetAttrString(reinterpret_cast<PyObject*>(code), "co_cellvars"));
  if (!cells || !PyTuple_Check(cells.get())) {
    PyErr_Clear();
    return false;
  }
  int found = PySequence_Contains(cells.get(), name);
  if (found < 0) PyErr_Clear();
  return found == 1;
}

/// Why running class body `code` could do more than fill its namespace; empty when it cannot.
std::string classBodyProblem(PyCodeObject* code) {
  static const char* kAllowed[] = {"MAKE_CELL", "RESUME", "NOP", "CACHE", "EXTENDED_ARG", "LOAD_CONST",
                                   "STORE_NAME", "MAKE_FUNCTION", "SET_FUNCTION_ATTRIBUTE", "LOAD_CLOSURE",
                                   "BUILD_TUPLE", "BUILD_CONST_KEY_MAP", "COPY", "RETURN_VALUE",
                                   "RETURN_CONST", "POP_TOP"};
  if (code->co_nfreevars != 0)
    return "a class body that reads variables of the enclosing function";
  static PyObject* getInstructions = [] {
    PyObject* m = PyImport_ImportModule("dis");
    PyObject* f = m ? PyObject_GetAttrString(m, "get_instructions") : nullptr;  // kept for the process
    Py_XDECREF(m);
    return f;
  }();
  if (!getInstructions) {
    PyErr_Clear();
    return "dis.get_instructions";
  }
  PyRef ins = PyRef::steal(PyObject_CallOneArg(getInstructions, reinterpret_cast<PyObject*>(code)));
  PyRef it = ins ? PyRef::steal(PyObject_GetIter(ins.get())) : PyRef();
  if (!it) {
    PyErr_Clear();
    return "dis.get_instructions";
  }
  while (PyRef i = PyRef::steal(PyIter_Next(it.get()))) {
    PyRef opname = PyRef::steal(PyObject_GetAttrString(i.get(), "opname"));
    PyRef argval = PyRef::steal(PyObject_GetAttrString(i.get(), "argval"));
    if (!opname || !argval) break;
    std::string op = PyUnicode_AsUTF8(opname.get());
    bool ok = false;
    for (const char* a : kAllowed) ok = ok || op == a;
    if (op == "LOAD_NAME" && PyUnicode_Check(argval.get()) &&
        PyUnicode_CompareWithASCIIString(argval.get(), "__name__") == 0)
      ok = true;
    // A cell variable's slot holds its cell (MAKE_CELL): reading it is
    // LOAD_CLOSURE, which 3.13 spells LOAD_FAST (a pseudo-instruction there).
    if (op == "LOAD_FAST" && isCellVar(code, argval.get())) ok = true;
    if (!ok) return "a class body that runs " + op + (op == "LOAD_NAME" ? " " + pyText(argval.get()) : "");
  }
  if (PyErr_Occurred()) {
    PyErr_Clear();
    return "dis.get_instructions";
  }
  return {};
}

/// Why class creation with base `b` could run user code; empty when it cannot.
std::string baseProblem(PyObject* b) {
  if (!PyType_Check(b)) return "a base that is not a class";
  if (Py_TYPE(b) != &PyType_Type) return "a base with a metaclass";
  static PyObject* initSubclass = PyUnicode_InternFromString("__init_subclass__");
  if (_PyType_Lookup(reinterpret_cast<PyTypeObject*>(b), initSubclass) !=
      _PyType_Lookup(&PyBaseObject_Type, initSubclass))
    return "a base that defines __init_subclass__";
  return {};
}

}  // namespace

VarRef Translator::buildClass(std::vector<VarRef>& args, std::vector<std::pair<PyRef, VarRef>>& kwargs) {
  auto refuse = [&](const std::string& why) -> VarRef {
    fail(GB::UntraceableCall, "class statement: " + why);
    return nullptr;
  };
  if (!kwargs.empty()) return refuse("keywords (metaclass=...)");
  if (args.size() < 2 || !args[0]->is(Var::Kind::Function) || !args[1]->is(Var::Kind::Const) ||
      !PyUnicode_CheckExact(args[1]->obj.get()))
    return refuse("not a class body and a name");
  const VarRef& body = args[0];
  if (!body->items.empty() || !body->keys.empty() || !body->cells.empty()) return refuse("a body with a closure");
  PyCodeObject* code = reinterpret_cast<PyCodeObject*>(body->obj.get());
  if (std::string why = classBodyProblem(code); !why.empty()) return refuse(why);
  PyRef call = PyRef::steal(PyTuple_New(static_cast<Py_ssize_t>(args.size())));
  for (size_t i = 2; i < args.size(); ++i) {
    const VarRef& b = args[i];
    if (!b->is(Var::Kind::Object)) return refuse("a base that is not a class");
    if (std::string why = baseProblem(b->obj.get()); !why.empty()) return refuse(why);
    PyTuple_SET_ITEM(call.get(), static_cast<Py_ssize_t>(i), Py_NewRef(b->obj.get()));
  }
  // The body reads `__name__` from the frame's globals (the class namespace
  // does not have it yet): its value is guarded as a global read is.
  PyObject* globals = body->globals.get();
  PyObject* modName = PyDict_GetItemString(globals, "__name__");  // borrowed
  if (!modName) return refuse("a module without __name__");
  if (body->globalSource) {
    static PyObject* nameKey = PyUnicode_InternFromString("__name__");
    if (!wrap(modName, body->globalSource(nameKey, false))) return nullptr;
  }
  PyRef fn = PyRef::steal(PyFunction_New(reinterpret_cast<PyObject*>(code), globals));
  if (!fn) {
    failPy(GB::Internal, "class body function");
    return nullptr;
  }
  PyTuple_SET_ITEM(call.get(), 0, Py_NewRef(fn.get()));
  PyTuple_SET_ITEM(call.get(), 1, Py_NewRef(args[1]->obj.get()));
  PyRef cls = PyRef::steal(PyObject_Call(buildClassBuiltin(), call.get(), nullptr));
  if (!cls) {
    failPyRaise("class statement");
    return nullptr;
  }
  if (!PyType_Check(cls.get())) return refuse("no class made");
  // Its functions read globals as this frame does (Note [Local classes]).
  PyObject* ns = typeDict(reinterpret_cast<PyTypeObject*>(cls.get()));
  PyObject *k, *v;
  Py_ssize_t pos = 0;
  while (PyDict_Next(ns, &pos, &k, &v)) {
    PyObject* f = PyFunction_Check(v) ? v : wrappedFunc(v);
    if (f && PyFunction_Check(f) && PyFunction_GET_GLOBALS(f) == globals)
      localClassMethods_[f] = body->globalSource;
  }
  localClasses_.push_back(cls);
  VarRef out = makeVar(Var::Kind::Object, cls);
  out->name = kFreshClass;
  out->self = makeVar(Var::Kind::Object, PyRef::borrow(buildClassBuiltin()));
  out->items = args;
  return out;
}

}  // namespace xacc::capture::translate
