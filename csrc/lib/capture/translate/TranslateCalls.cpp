// Calls: torch functions and Tensor methods (recorded through the host on
// metas), Python builtins on trackers, container methods, nn.Module calls and
// user functions (inlined into a new Frame with bound arguments).
// Device-moving Tensor methods are erased: every captured tensor lives on the
// capture target, so `.cuda()`, `.cpu()` and device-only `.to()` are
// identities and a dtype-changing `.to()` keeps only its dtype.
#include <algorithm>
#include <cstring>

#include "PyTypes.h"
#include "Translator.h"

namespace xacc::capture::translate {

namespace {


bool isA(PyObject* o, PyObject* type) {
  return PyObject_TypeCheck(o, reinterpret_cast<PyTypeObject*>(type));
}

std::string moduleOf(PyObject* fn) {
  PyObject* m = PyObject_GetAttrString(fn, "__module__");
  if (!m) {
    PyErr_Clear();
    return "";
  }
  std::string out = PyUnicode_Check(m) && PyUnicode_AsUTF8(m) ? PyUnicode_AsUTF8(m) : "";
  Py_DECREF(m);
  return out;
}

std::string nameOf(PyObject* fn) {
  for (const char* a : {"__qualname__", "__name__"}) {
    PyObject* m = PyObject_GetAttrString(fn, a);
    if (!m) {
      PyErr_Clear();
      continue;
    }
    std::string out = PyUnicode_Check(m) && PyUnicode_AsUTF8(m) ? PyUnicode_AsUTF8(m) : "";
    Py_DECREF(m);
    if (!out.empty()) return out;
  }
  return Py_TYPE(fn)->tp_name;
}

bool startsWith(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }

/// torch callables that change global state and must never run while tracing.
bool blocked(const std::string& full) {
  static const char* kBlock[] = {"manual_seed", "seed",  "save",     "load",          "set_",
                                 "use_deterministic", "compile", "jit", "autograd.grad",
                                 "backward",    "set_grad_enabled"};
  for (const char* b : kBlock)
    if (full.find(b) != std::string::npos) return true;
  return false;
}

bool isTorchOp(PyObject* fn) {
  const PyTypes* T = pyTypes();
  if (isA(fn, T->opOverload) || isA(fn, T->opOverloadPacket)) return true;
  if (PyType_Check(fn)) return false;
  std::string mod = moduleOf(fn);
  if (startsWith(mod, "torch") && !startsWith(mod, "torch.nn.modules"))
    return !blocked(mod + "." + nameOf(fn));
  PyObject* oc = PyObject_GetAttrString(fn, "__objclass__");
  if (!oc) {
    PyErr_Clear();
    return false;
  }
  bool r = PyType_Check(oc) && PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(oc),
                                                 reinterpret_cast<PyTypeObject*>(T->tensorBase));
  Py_DECREF(oc);
  return r;
}

bool isDeviceLike(const VarRef& v) {
  if (!v->is(Var::Kind::Const)) return false;
  PyObject* o = v->obj.get();
  if (isA(o, pyTypes()->device)) return true;
  if (PyUnicode_Check(o)) {
    PyObject* d = PyObject_CallOneArg(pyTypes()->torchDevice, o);
    if (!d) {
      PyErr_Clear();
      return false;
    }
    Py_DECREF(d);
    return true;
  }
  return PyLong_CheckExact(o);  // .cuda(0) / .to(0)
}

/// Whether `o` is a method of an immutable builtin type bound to (or, as a
/// method descriptor, called on) a value of that type: `name.startswith(p)`,
/// `str.lower(s)`, `(1, 2).index(2)`. On constant arguments such a call
/// depends on nothing but them, so it runs at capture time.
bool immutableBuiltinMethod(PyObject* o) {
  PyTypeObject* cls = nullptr;
  if (PyCFunction_Check(o)) {
    PyObject* self = PyCFunction_GET_SELF(o);
    if (!self || PyType_Check(self) || PyModule_Check(self)) return false;
    cls = Py_TYPE(self);
  } else if (Py_IS_TYPE(o, &PyMethodDescr_Type)) {
    cls = PyDescr_TYPE(o);
  } else {
    return false;
  }
  return cls == &PyUnicode_Type || cls == &PyBytes_Type || cls == &PyLong_Type || cls == &PyFloat_Type ||
         cls == &PyBool_Type || cls == &PyTuple_Type || cls == &PyFrozenSet_Type || cls == &PyComplex_Type ||
         cls == &PySlice_Type || cls == reinterpret_cast<PyTypeObject*>(pyTypes()->size);  // torch.Size: a tuple
}

/// What a function marked as a trace-time constant may answer: None, bool,
/// int, float or str.
bool scalarConstant(PyObject* v) {
  return v == Py_None || PyBool_Check(v) || PyLong_CheckExact(v) || PyFloat_CheckExact(v) ||
         PyUnicode_CheckExact(v);
}

/// A result that is a plain constant (None, bool, int, float, str, bytes, or
/// a tuple or fresh list of those: `name.split("|")`).
bool plainConstant(PyObject* v) {
  if (v == Py_None || PyBool_Check(v) || PyLong_CheckExact(v) || PyFloat_CheckExact(v) || PyUnicode_CheckExact(v) ||
      PyBytes_CheckExact(v))
    return true;
  if (PyTuple_CheckExact(v)) {
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(v); ++i)
      if (!plainConstant(PyTuple_GET_ITEM(v, i))) return false;
    return true;
  }
  if (PyList_CheckExact(v)) {
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(v); ++i)
      if (!plainConstant(PyList_GET_ITEM(v, i))) return false;
    return true;
  }
  return false;
}

/// Answers of "am I being traced?" queries as a tracer gives them while a
/// frame is translated (the graph only ever runs as that trace): compiling
/// yes; TorchScript tracing, scripting, export and stream capture no. Null
/// when `fn` is not such a query. The functions are looked up in modules that
/// are already imported, never imported here.
PyObject* tracerQuery(PyObject* fn) {
  struct Q {
    const char* module;
    const char* name;
    bool answer;
  };
  static const Q kQueries[] = {
      {"torch.compiler", "is_compiling", true},        {"torch.compiler", "is_dynamo_compiling", true},
      {"torch._dynamo", "is_compiling", true},         {"torch._dynamo.external_utils", "is_compiling", true},
      {"torch._utils", "is_compiling", true},          {"torch.compiler", "is_exporting", false},
      {"torch.jit", "is_tracing", false},              {"torch.jit", "is_scripting", false},
      {"torch._jit_internal", "is_scripting", false},  {"torch.cuda", "is_current_stream_capturing", false},
      {"torch.xpu", "is_current_stream_capturing", false},
  };
  if (!PyCallable_Check(fn)) return nullptr;
  PyObject* modules = PyImport_GetModuleDict();
  for (const Q& q : kQueries) {
    PyObject* m = PyDict_GetItemString(modules, q.module);  // borrowed
    if (!m) continue;
    PyObject* f = PyObject_GetAttrString(m, q.name);
    if (!f) {
      PyErr_Clear();
      continue;
    }
    bool same = f == fn;
    Py_DECREF(f);
    if (same) return q.answer ? Py_True : Py_False;
  }
  return nullptr;
}

/// A function marked as a trace-time constant (`torch._dynamo.
/// assume_constant_result`, transformers' `_make_compile_constant`, possibly
/// under `functools.lru_cache`): called once at capture time on constant
/// arguments, its result becomes a constant of the graph.
bool markedConstant(PyObject* fn) {
  PyObject* f = fn;
  PyRef wrapped;
  for (int i = 0; i < 2 && f; ++i) {
    if (PyFunction_Check(f)) {
      PyObject* d = reinterpret_cast<PyFunctionObject*>(f)->func_dict;  // borrowed, may be null
      if (!d) return false;
      PyObject* m = PyDict_GetItemString(d, "_dynamo_marked_constant");
      return m == Py_True;
    }
    PyObject* w = PyObject_GetAttrString(f, "__wrapped__");
    if (!w) {
      PyErr_Clear();
      return false;
    }
    wrapped = PyRef::steal(w);
    f = w;
  }
  return false;
}

}  // namespace

/// A function decorated with `@torch.no_grad()` / `@torch.enable_grad()`
/// (torch.utils._contextlib's `decorate_context` closure): the wrapped
/// function inlined inside a grad-mode region. Null without failure when `o`
/// is not one.
VarRef Translator::gradDecorated(Frame& f, PyObject* o, std::vector<VarRef>& args,
                                 std::vector<std::pair<PyRef, VarRef>>& kwargs) {
  const PyTypes* T = pyTypes();
  static PyObject* decorateCode = [] {
    // The code of torch.utils._contextlib.context_decorator's inner
    // `decorate_context` (one of its constants).
    PyObject* code = nullptr;
    PyObject* m = PyImport_ImportModule("torch.utils._contextlib");
    PyObject* cd = m ? PyObject_GetAttrString(m, "context_decorator") : nullptr;
    if (cd && PyFunction_Check(cd)) {
      PyObject* consts = reinterpret_cast<PyCodeObject*>(PyFunction_GET_CODE(cd))->co_consts;
      for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(consts); ++i) {
        PyObject* c = PyTuple_GET_ITEM(consts, i);
        if (PyCode_Check(c) &&
            PyUnicode_CompareWithASCIIString(reinterpret_cast<PyCodeObject*>(c)->co_name, "decorate_context") == 0) {
          code = c;
          Py_INCREF(code);  // kept for the process
        }
      }
    }
    Py_XDECREF(cd);
    Py_XDECREF(m);
    if (PyErr_Occurred()) PyErr_Clear();
    return code;
  }();
  if (!decorateCode || !PyFunction_Check(o) || PyFunction_GET_CODE(o) != decorateCode) return nullptr;
  auto* code = reinterpret_cast<PyCodeObject*>(decorateCode);
  PyObject* closure = PyFunction_GET_CLOSURE(o);
  PyObject *func = nullptr, *factory = nullptr;
  for (int i = 0; closure && i < code->co_nfreevars; ++i) {
    PyObject* name = PyTuple_GET_ITEM(code->co_localsplusnames, code->co_nlocalsplus - code->co_nfreevars + i);
    PyObject* content = PyCell_GET(PyTuple_GET_ITEM(closure, i));
    if (PyUnicode_CompareWithASCIIString(name, "func") == 0) func = content;
    if (PyUnicode_CompareWithASCIIString(name, "ctx_factory") == 0) factory = content;
  }
  PyObject* ctx = factory && PyMethod_Check(factory) ? PyMethod_GET_SELF(factory) : nullptr;
  if (!func || !PyFunction_Check(func) || !isUserFunction(func) || !ctx) return nullptr;
  int enabled;
  if (Py_TYPE(ctx) == reinterpret_cast<PyTypeObject*>(T->noGrad))
    enabled = 0;
  else if (Py_TYPE(ctx) == reinterpret_cast<PyTypeObject*>(T->enableGrad))
    enabled = 1;
  else
    return nullptr;
  (void)f;
  bool prev = gradEnabled();
  if (!setGrad(enabled != 0)) return nullptr;
  VarRef r = inlineFunction(func, std::move(args), std::move(kwargs), nullptr);
  if (!r) return nullptr;
  if (!setGrad(prev)) return nullptr;
  return r;
}

const char* mappingMixin(PyObject* fn) {
  const PyTypes* T = pyTypes();
  if (!fn || !T) return nullptr;
  if (fn == T->mappingGet) return "get";
  if (fn == T->mappingContains) return "__contains__";
  return nullptr;
}

/// Whether a Python function is user code to inline (torch.nn modules'
/// Python code counts as user code; the rest of torch and the standard
/// library do not).
bool isUserFunction(PyObject* fn) {
  std::string mod = moduleOf(fn);
  if (startsWith(mod, "xacc._src.capture.polyfills")) return true;  // reference implementations are inlined
  if (startsWith(mod, "torch.nn.modules") || startsWith(mod, "torch.nn.utils.parametrize")) return true;
  static const char* kLibs[] = {"torch",  "xacc",        "xjit",    "numpy",     "typing",
                                "functools", "abc",      "collections", "dataclasses", "contextlib",
                                "inspect", "logging",    "threading", "copy"};
  // A library's own modules (`numpy`, `numpy.linalg`), not every module whose
  // name starts alike (a user's `numpy_utils`); torch's prefix also covers
  // torchvision and friends.
  if (startsWith(mod, "torch")) return false;
  for (const char* l : kLibs)
    if (startsWith(mod, l) && (mod.size() == strlen(l) || mod[strlen(l)] == '.')) return false;
  return true;
}

VarRef Translator::record(PyObject* fn, const std::vector<VarRef>& args,
                          const std::vector<std::pair<PyRef, VarRef>>& kwargs) {
  bool handled = false;
  VarRef sym = recordSym(fn, args, kwargs, handled);
  if (handled || failed()) return sym;
  PyRef tuple = PyRef::steal(PyTuple_New(static_cast<Py_ssize_t>(args.size())));
  for (size_t i = 0; i < args.size(); ++i) {
    PyRef v = pythonValue(args[i]);
    if (!v) return nullptr;
    PyTuple_SET_ITEM(tuple.get(), static_cast<Py_ssize_t>(i), v.release());
  }
  PyRef kw;
  if (!kwargs.empty()) {
    kw = PyRef::steal(PyDict_New());
    for (const auto& [k, v] : kwargs) {
      PyRef pv = pythonValue(v);
      if (!pv) return nullptr;
      PyDict_SetItem(kw.get(), k.get(), pv.get());
    }
  }
  std::string code, detail;
  PyRef r = host_.record(fn, tuple.get(), kw.get(), code, detail);
  if (!r) {
    fail(code.empty() ? "GB006" : code, detail);
    return nullptr;
  }
  return fromPython(r.get());
}

VarRef Translator::tensorMethod(const VarRef& tm, std::vector<VarRef>& args,
                                std::vector<std::pair<PyRef, VarRef>>& kwargs) {
  const std::string& name = tm->name;
  const VarRef& t = tm->self;
  if (t->isNumpy()) return numpyMethod(tm, args, kwargs);
  if (name == "numpy" && numpyEnabled()) return tensorToNumpy(t, args, kwargs);
  if (name == "cuda" || name == "cpu" || name == "xpu") return t;
  if (name == "type") return tensorType(t, args, kwargs);
  if (name == "to") {
    std::vector<std::pair<PyRef, VarRef>> kw;
    for (auto& [k, v] : kwargs) {
      const char* s = PyUnicode_AsUTF8(k.get());
      if (strcmp(s, "device") && strcmp(s, "non_blocking")) kw.emplace_back(k, v);
    }
    std::vector<VarRef> rest;
    for (auto& a : args)
      if (!isDeviceLike(a)) rest.push_back(a);
    if (!rest.empty() && rest[0]->is(Var::Kind::Tensor)) {
      PyObject* dt = PyObject_GetAttrString(rest[0]->obj.get(), "dtype");
      if (!dt) {
        failPy("GB020", "dtype");
        return nullptr;
      }
      rest[0] = makeConst(PyRef::steal(dt));
    }
    if (rest.empty() && kw.empty()) return t;
    args = std::move(rest);
    kwargs = std::move(kw);
  }
  if (name == "item" && args.empty() && kwargs.empty()) {
    VarRef v = itemForBranch(t);  // `if t.item() > c:` -> a ctrl.if on the tensor
    if (v || failed()) return v;
  }
  static const char* kReadBack[] = {"item", "tolist", "numpy", "__bool__", "__int__", "__float__"};
  for (const char* r : kReadBack)
    if (name == r) {
      fail("GB005", "Tensor." + name + "()");
      return nullptr;
    }
  // requires_grad_ and detach_ change the caller's tensor itself, which a graph cannot:
  // they run in Python.
  static const char* kOpaque[] = {"backward", "register_hook", "retain_grad", "data_ptr", "storage",
                                  "untyped_storage", "requires_grad_", "detach_"};
  for (const char* r : kOpaque)
    if (name == r) {
      fail("GB002", "Tensor." + name + "()");
      return nullptr;
    }
  PyObject* m = PyObject_GetAttrString(pyTypes()->tensor, name.c_str());
  if (!m) {
    failPy("GB010", "Tensor." + name);
    return nullptr;
  }
  PyRef method = PyRef::steal(m);
  std::vector<VarRef> all{t};
  all.insert(all.end(), args.begin(), args.end());
  return record(method.get(), all, kwargs);
}

VarRef Translator::tensorType(const VarRef& t, std::vector<VarRef>& args,
                              std::vector<std::pair<PyRef, VarRef>>& kwargs) {
  // Tensor.type(dtype=None, non_blocking=False): without a type, its name
  // ("torch.FloatTensor"); else the tensor converted to that type (the tensor
  // itself when it has it already). The type may be a dtype, a name or a legacy
  // tensor class. Captured tensors are CPU tensors.
  auto bad = [&](const std::string& what, bool py = false) -> VarRef {
    if (py) failPy("GB011", what);
    else fail("GB011", what);
    return nullptr;
  };
  VarRef type = args.empty() ? nullptr : args[0];
  if (args.size() > 2) return bad("Tensor.type arguments");
  for (auto& [k, v] : kwargs) {
    const char* s = PyUnicode_AsUTF8(k.get());
    if (!strcmp(s, "dtype")) type = v;
    else if (strcmp(s, "non_blocking")) return bad(std::string("Tensor.type(") + s + "=...)");
  }
  // A CPU tensor of the same dtype answers for the meta twin (whose name is "torch.meta.FloatTensor").
  PyRef dtype = PyRef::steal(PyObject_GetAttrString(t->obj.get(), "dtype"));
  PyRef empty = PyRef::steal(moduleAttr("torch", "empty"));
  PyRef probe = dtype && empty ? PyRef::steal(PyObject_CallFunction(empty.get(), "i", 0)) : PyRef();
  if (probe) probe = PyRef::steal(PyObject_CallMethod(probe.get(), "to", "O", dtype.get()));
  if (!probe) return bad("Tensor.type", true);
  if (!type || (type->is(Var::Kind::Const) && type->obj.get() == Py_None)) {
    PyObject* r = PyObject_CallMethod(probe.get(), "type", nullptr);
    if (!r) return bad("Tensor.type()", true);
    return makeConst(PyRef::steal(r));
  }
  if (!type->is(Var::Kind::Const) && !(type->is(Var::Kind::Object) && PyType_Check(type->obj.get())))
    return bad("Tensor.type of a value that is not a constant");
  PyRef converted = PyRef::steal(PyObject_CallMethod(probe.get(), "type", "O", type->obj.get()));
  if (!converted) return bad("Tensor.type", true);
  PyRef isCpu = PyRef::steal(PyObject_GetAttrString(converted.get(), "is_cpu"));
  if (isCpu.get() != Py_True) return bad("Tensor.type to a type that is not a CPU type");
  PyRef target = PyRef::steal(PyObject_GetAttrString(converted.get(), "dtype"));
  PyRef to = PyRef::steal(PyObject_GetAttrString(pyTypes()->tensor, "to"));
  if (!target || !to) return bad("Tensor.type", true);
  return record(to.get(), {t, makeConst(target)}, {});
}

VarRef Translator::containerMethod(const VarRef& obj, const std::string& name, std::vector<VarRef>& args,
                                   std::vector<std::pair<PyRef, VarRef>>& kwargs) {
  if (PyObject* tp = typeOf(obj); tp && !(obj->is(Var::Kind::Dict) && obj->obj)) {
    // A method with a Python reference (polyfills.py: list.sort, dict.popitem ...),
    // looked up on the value's exact type, runs as that reference.
    PyObject* nameObj = PyUnicode_FromString(name.c_str());
    PyObject* desc = nameObj ? _PyType_Lookup(reinterpret_cast<PyTypeObject*>(tp), nameObj) : nullptr;  // borrowed
    Py_XDECREF(nameObj);
    if (desc) {
      std::vector<VarRef> all{obj};
      all.insert(all.end(), args.begin(), args.end());
      if (VarRef r = polyfill(desc, all, kwargs); r || failed()) return r;
    }
  }
  if (!kwargs.empty() && !(obj->is(Var::Kind::Dict) && name == "update")) {
    fail("GB011", "keyword arguments to ." + name);
    return nullptr;
  }
  auto none = [] { return makeConst(PyRef::borrow(Py_None)); };
  auto needArgs = [&](size_t n) {
    if (args.size() < n) {
      fail("GB011", "missing argument to ." + name);
      return false;
    }
    return true;
  };
  if (obj->is(Var::Kind::List)) {
    if (name == "append" || name == "extend" || name == "insert" || name == "pop" || name == "clear" ||
        name == "reverse") {
      if (obj->source) {
        fail("GB009", "list passed in from outside");
        return nullptr;
      }
      auto& items = obj->items;
      if (name == "append") {
        if (!needArgs(1)) return nullptr;
        items.push_back(args[0]);
      } else if (name == "extend") {
        std::vector<VarRef> more;
        if (!needArgs(1) || !unpack(args[0], more)) return nullptr;
        items.insert(items.end(), more.begin(), more.end());
      } else if (name == "insert") {
        if (!needArgs(2)) return nullptr;
        PyRef i = constOf(args[0]);
        if (!i) return nullptr;
        Py_ssize_t n = static_cast<Py_ssize_t>(items.size()), k = PyLong_AsSsize_t(i.get());
        if (k < 0) k = std::max<Py_ssize_t>(0, k + n);
        k = std::min(k, n);
        items.insert(items.begin() + k, args[1]);
      } else if (name == "pop") {
        Py_ssize_t n = static_cast<Py_ssize_t>(items.size()), k = -1;
        if (!args.empty()) {
          PyRef i = constOf(args[0]);
          if (!i) return nullptr;
          k = PyLong_AsSsize_t(i.get());
        }
        if (k < 0) k += n;
        if (k < 0 || k >= n) {
          fail("GB011", "pop index out of range");
          return nullptr;
        }
        VarRef v = items[static_cast<size_t>(k)];
        items.erase(items.begin() + k);
        return v;
      } else if (name == "clear") {
        items.clear();
      } else {
        std::reverse(items.begin(), items.end());
      }
      return none();
    }
    if (name == "copy") return makeSeq(Var::Kind::List, obj->items);
  }
  if ((obj->is(Var::Kind::List) || obj->is(Var::Kind::Tuple)) && (name == "index" || name == "count")) {
    auto tuple = makeSeq(Var::Kind::Tuple, obj->items);
    PyRef vals = constOf(tuple);
    if (!vals || !needArgs(1)) return nullptr;
    PyRef a = constOf(args[0]);
    if (!a) return nullptr;
    PyObject* r = PyObject_CallMethod(vals.get(), name.c_str(), "O", a.get());
    if (!r) {
      failPy("GB011", "." + name);
      return nullptr;
    }
    return makeConst(PyRef::steal(r));
  }
  if (isModelOutputVar(obj)) {
    if (name == "to_tuple" && args.empty()) return makeSeq(Var::Kind::Tuple, obj->items);
    if (name != "get" && name != "keys" && name != "values" && name != "items") {
      fail("GB011", "." + name + " of a " + reinterpret_cast<PyTypeObject*>(obj->obj.get())->tp_name);
      return nullptr;
    }
  }
  if (obj->is(Var::Kind::Dict)) {
    if (name == "get") {
      if (!needArgs(1)) return nullptr;
      PyRef k = constOf(args[0]);
      if (!k) return nullptr;
      for (size_t j = 0; j < obj->keys.size(); ++j)
        if (PyObject_RichCompareBool(obj->keys[j].get(), k.get(), Py_EQ) == 1) return obj->items[j];
      return args.size() > 1 ? args[1] : none();
    }
    if (name == "keys" || name == "values" || name == "items") {
      if (!args.empty()) {
        fail("GB011", "." + name + " with arguments");
        return nullptr;
      }
      auto view = makeVar(Var::Kind::DictView);
      view->self = obj;
      view->name = name;
      return view;
    }
    if (name == "copy") {
      auto d = makeVar(Var::Kind::Dict);
      d->keys = obj->keys;
      d->items = obj->items;
      return d;
    }
    if (name == "update" || name == "pop" || name == "setdefault" || name == "clear") {
      if (obj->source) {
        fail("GB009", "dict passed in from outside");
        return nullptr;
      }
      auto find = [&](PyObject* k) -> int {
        for (size_t j = 0; j < obj->keys.size(); ++j)
          if (PyObject_RichCompareBool(obj->keys[j].get(), k, Py_EQ) == 1) return static_cast<int>(j);
        return -1;
      };
      if (name == "clear") {
        obj->keys.clear();
        obj->items.clear();
        return none();
      }
      if (name == "update") {
        if (args.size() > 1 || (args.size() == 1 && !args[0]->is(Var::Kind::Dict))) {
          fail("GB011", "dict.update of a non-dict");
          return nullptr;
        }
        std::vector<std::pair<PyRef, VarRef>> all;
        if (!args.empty())
          for (size_t j = 0; j < args[0]->keys.size(); ++j) all.emplace_back(args[0]->keys[j], args[0]->items[j]);
        all.insert(all.end(), kwargs.begin(), kwargs.end());
        for (auto& [k, v] : all) {
          int j = find(k.get());
          if (j >= 0) {
            obj->items[static_cast<size_t>(j)] = v;
          } else {
            obj->keys.push_back(k);
            obj->items.push_back(v);
          }
        }
        return none();
      }
      if (!needArgs(1)) return nullptr;
      PyRef k = constOf(args[0]);
      if (!k) return nullptr;
      int j = find(k.get());
      if (name == "pop") {
        if (j < 0) {
          if (args.size() > 1) return args[1];
          fail("GB011", "dict.pop of a missing key (raises KeyError)");
          return nullptr;
        }
        VarRef v = obj->items[static_cast<size_t>(j)];
        obj->keys.erase(obj->keys.begin() + j);
        obj->items.erase(obj->items.begin() + j);
        return v;
      }
      if (j >= 0) return obj->items[static_cast<size_t>(j)];
      obj->keys.push_back(k);
      obj->items.push_back(args.size() > 1 ? args[1] : none());
      return obj->items.back();
    }
  }
  fail(name == "append" || name == "update" || name == "pop" ? "GB009" : "GB011", "container ." + name);
  return nullptr;
}

VarRef Translator::callModule(const VarRef& mod, std::vector<VarRef>& args,
                              std::vector<std::pair<PyRef, VarRef>>& kwargs) {
  PyObject* m = mod->obj.get();
  // A class with its own __call__ (its type is guarded) is called through it.
  static PyObject* callName = PyUnicode_InternFromString("__call__");
  PyObject* call = _PyType_Lookup(Py_TYPE(m), callName);  // borrowed
  if (call != _PyType_Lookup(reinterpret_cast<PyTypeObject*>(pyTypes()->module), callName)) {
    if (!call || !PyFunction_Check(call) || !isUserFunction(call)) {
      fail("GB012", std::string(Py_TYPE(m)->tp_name) + ".__call__");
      return nullptr;
    }
    PyRef keep = PyRef::borrow(call);
    std::vector<VarRef> all{mod};
    all.insert(all.end(), args.begin(), args.end());
    return inlineFunction(call, std::move(all), std::move(kwargs), nullptr);
  }
  // Hooks run arbitrary Python around forward: a module that has any (its own or
  // the global ones on torch.nn.Module) is called natively; their absence is
  // guarded (Note [Module hooks]).
  if (!guardNoHooks(mod)) return nullptr;
  // __call__ runs `self.forward`: one set on the instance is not the class's.
  static PyObject* forwardName = PyUnicode_InternFromString("forward");
  static PyObject* dictName = PyUnicode_InternFromString("__dict__");
  PyObject** dp = _PyObject_GetDictPtr(m);
  if (dp && *dp && PyDict_GetItemWithError(*dp, forwardName)) {
    fail("GB012", std::string(Py_TYPE(m)->tp_name) + ".forward set on the instance");
    return nullptr;
  }
  PyErr_Clear();
  guardHas(Source::attr(mod->source, dictName), Leaf::Kind::HasKey, forwardName, false);
  PyObject* fwd = PyObject_GetAttrString(reinterpret_cast<PyObject*>(Py_TYPE(m)), "forward");
  if (!fwd) {
    failPy("GB002", "forward");
    return nullptr;
  }
  PyRef forward = PyRef::steal(fwd);
  if (!PyFunction_Check(fwd)) {
    fail("GB002", std::string(Py_TYPE(m)->tp_name) + ".forward");
    return nullptr;
  }
  std::vector<VarRef> all{mod};
  all.insert(all.end(), args.begin(), args.end());
  if (VarRef r = gradDecorated(*current_, fwd, all, kwargs); r || failed()) return r;  // @torch.no_grad() forward
  return inlineFunction(fwd, std::move(all), std::move(kwargs), nullptr);
}

VarRef Translator::call(Frame& f, const VarRef& fn, std::vector<VarRef> args,
                        std::vector<std::pair<PyRef, VarRef>> kwargs) {
  switch (fn->kind) {
    case Var::Kind::TensorMethod:
      return tensorMethod(fn, args, kwargs);
    case Var::Kind::BoundMethod: {
      if (const char* mix = mappingMixin(fn->obj.get())) {
        // Mapping.get(k, d=None) / Mapping.__contains__(k) are `try: self[k]
        // except KeyError`: a lookup that would raise KeyError answers d / False.
        if (args.empty() || args.size() > (std::strcmp(mix, "get") == 0 ? 2u : 1u) || !kwargs.empty()) {
          fail("GB002", std::string("Mapping.") + mix + " arguments");
          return nullptr;
        }
        bool get = std::strcmp(mix, "get") == 0;
        if (!get) {  // os.environ.__contains__(k): its presence alone is guarded
          int in = objectContains(fn->self, args[0]);
          if (in == -1) return nullptr;
          if (in >= 0) return makeConst(PyRef::borrow(in ? Py_True : Py_False));
        }
        Failure before = failure_;
        VarRef r = subscr(fn->self, args[0]);
        if (!r && failure_.code == "GB011" && failure_.detail == "missing key (raises KeyError)" &&
            before.code.empty()) {
          failure_ = before;
          if (get) return args.size() > 1 ? args[1] : makeConst(PyRef::borrow(Py_None));
          return makeConst(PyRef::borrow(Py_False));
        }
        if (!r) return nullptr;
        return get ? r : makeConst(PyRef::borrow(Py_True));
      }
      std::vector<VarRef> all{fn->self};
      all.insert(all.end(), args.begin(), args.end());
      return inlineFunction(fn->obj.get(), std::move(all), std::move(kwargs), nullptr);
    }
    case Var::Kind::Function: {
      std::vector<std::pair<PyRef, VarRef>> kwd;
      for (size_t i = 0; i < fn->keys.size(); ++i) kwd.emplace_back(fn->keys[i], fn->kwItems[i]);
      return inlineCode(reinterpret_cast<PyCodeObject*>(fn->obj.get()), fn->globals.get(), fn->items, kwd,
                        fn->cells, std::move(args), std::move(kwargs), nullptr, fn->name);
    }
    case Var::Kind::ContainerMethod:
      if (fn->self->is(Var::Kind::Set)) {
        if (!kwargs.empty()) {
          fail("GB011", "keyword arguments to set." + fn->name);
          return nullptr;
        }
        return setMethod(fn->self, fn->name, args);
      }
      return containerMethod(fn->self, fn->name, args, kwargs);
    case Var::Kind::GradExit:
      if (!setGrad(fn->pos != 0)) return nullptr;
      return makeConst(PyRef::borrow(Py_None));
    case Var::Kind::GradMode:  // `@torch.no_grad()` on a function: TranslateContext.cpp
      return gradModeDecorator(fn, args, kwargs);
    case Var::Kind::NoOp:
      if (!args.empty() || !kwargs.empty()) {
        fail("GB002", "object.__init__ with arguments");
        return nullptr;
      }
      return makeConst(PyRef::borrow(Py_None));
    case Var::Kind::Object:
      return callObject(f, fn, args, kwargs);
    case Var::Kind::UserObject:
      return callUser(fn, args, kwargs);
    default:
      fail("GB002", "call of an unsupported value");
      return nullptr;
  }
}

VarRef Translator::callObject(Frame& f, const VarRef& fn, std::vector<VarRef>& args,
                              std::vector<std::pair<PyRef, VarRef>>& kwargs) {
  const PyTypes* T = pyTypes();
  PyObject* o = fn->obj.get();
  if (o == T->print) {
    fail("GB003", "print()");
    return nullptr;
  }
  if (T->partial && Py_TYPE(o) == reinterpret_cast<PyTypeObject*>(T->partial) && fn->source) {
    // functools.partial read from a source (transformers' GELUTanh keeps
    // `partial(F.gelu, approximate="tanh")`): its func, args and keywords are
    // read (and guarded) through the partial's own sources, then called.
    static PyObject* names[3] = {PyUnicode_InternFromString("func"), PyUnicode_InternFromString("args"),
                                 PyUnicode_InternFromString("keywords")};
    VarRef parts[3];
    for (int i = 0; i < 3; ++i) {
      PyObject* v = PyObject_GetAttr(o, names[i]);
      if (!v) {
        failPy("GB002", "functools.partial");
        return nullptr;
      }
      PyRef vr = PyRef::steal(v);
      parts[i] = wrap(v, Source::attr(fn->source, names[i]));
      if (!parts[i]) return nullptr;
    }
    if (!parts[1]->is(Var::Kind::Tuple) || !parts[2]->is(Var::Kind::Dict)) {
      fail("GB002", "functools.partial with unusual args/keywords");
      return nullptr;
    }
    std::vector<VarRef> all = parts[1]->items;
    all.insert(all.end(), args.begin(), args.end());
    std::vector<std::pair<PyRef, VarRef>> kw;
    for (size_t i = 0; i < parts[2]->keys.size(); ++i) {
      bool overridden = false;
      for (const auto& kv : kwargs)
        overridden = overridden || PyObject_RichCompareBool(kv.first.get(), parts[2]->keys[i].get(), Py_EQ) == 1;
      if (!overridden) kw.emplace_back(parts[2]->keys[i], parts[2]->items[i]);
    }
    kw.insert(kw.end(), kwargs.begin(), kwargs.end());
    return call(f, parts[0], std::move(all), std::move(kw));
  }
  if (o == T->noGrad || o == T->enableGrad) {
    if (!args.empty() || !kwargs.empty()) {
      fail("GB002", "no_grad/enable_grad with arguments");
      return nullptr;
    }
    auto g = makeVar(Var::Kind::GradMode);
    g->pos = o == T->enableGrad ? 1 : 0;
    return g;
  }
  if (o == T->super) return superOf(f, args);
  if (PyCFunction_Check(o) && PyCFunction_GET_SELF(o) == reinterpret_cast<PyObject*>(&PyTuple_Type) &&
      std::strcmp(reinterpret_cast<PyCFunctionObject*>(o)->m_ml->ml_name, "__new__") == 0)
    return tupleNew(args, kwargs);
  if (T->ndarray) {
    bool handledNp = false;
    VarRef r = numpyCall(o, args, kwargs, handledNp);
    if (handledNp || failed()) return r;
    if (o == T->abs && args.size() == 1 && args[0]->isNumpy() && kwargs.empty())
      return numpyRun("op", operatorFn("abs"), args, {});
  }
  if (o != T->isinstance && o != T->type) {
    // Builtins and pure functions see plain values: symbolic numbers specialize.
    bool builtin = false;
    for (PyObject* b : {T->len, T->range, T->enumerate, T->zip, T->reversed, T->iter, T->next, T->getattr,
                        T->hasattr, T->tuple, T->list, T->dict, T->sum, T->min, T->max, T->abs, T->intFn,
                        T->floatFn, T->boolFn, T->callable, T->str, T->round, T->sorted, T->any, T->all,
                        T->slice, T->divmod, T->pow, T->issubclass, T->repr, T->hash, T->set, T->frozenset})
      builtin = builtin || o == b;
    if (!builtin && PyCFunction_Check(o)) {
      PyObject* self = PyCFunction_GET_SELF(o);
      builtin = self && (self == T->mathModule || self == T->operatorModule);
    }
    if (builtin) {
      for (auto& a : args) a = concrete(a);
      for (auto& kv : kwargs) kv.second = concrete(kv.second);
    }
  }
  if ((o == T->set || o == T->frozenset) && args.size() <= 1 && kwargs.empty()) {
    std::vector<VarRef> items;
    if (!args.empty()) {
      VarRef it = iterate(args[0]);
      if (!it || !unpack(it, items)) return nullptr;
    }
    return makeSet(items, o == T->frozenset);
  }
  if (T->inspectSignature && o == T->inspectSignature && args.size() == 1 && kwargs.empty())
    return signatureOf(args[0]);
  if (PyType_Check(o) && isModelOutputClass(o)) return modelOutput(o, args, kwargs);
  if (VarRef r = polyfill(o, args, kwargs); r || failed()) return r;
  bool handled = false;
  VarRef r = callBuiltin(o, args, kwargs, handled);
  if (handled) return r;
  if (isA(o, T->module)) return callModule(fn, args, kwargs);
  if (PyMethod_Check(o)) {
    PyObject* self = PyMethod_GET_SELF(o);
    static PyObject* selfName = PyUnicode_InternFromString("__self__");
    VarRef selfVar = wrap(self, Source::attr(fn->source, selfName));
    if (!selfVar) return nullptr;
    PyObject* func = PyMethod_GET_FUNCTION(o);
    if (selfVar->is(Var::Kind::Tensor)) {
      auto tm = makeVar(Var::Kind::TensorMethod);
      tm->self = selfVar;
      tm->name = nameOf(func);
      size_t dot = tm->name.rfind('.');
      if (dot != std::string::npos) tm->name = tm->name.substr(dot + 1);
      return tensorMethod(tm, args, kwargs);
    }
    if (PyFunction_Check(func) && isUserFunction(func)) {
      std::vector<VarRef> all{selfVar};
      all.insert(all.end(), args.begin(), args.end());
      return inlineFunction(func, std::move(all), std::move(kwargs), nullptr);
    }
  }
  if (PyType_Check(o) && args.size() == 1 && kwargs.empty() && isConst(args[0])) {
    // torch.finfo(dtype) / torch.iinfo(dtype): constants of the dtype.
    if ((T->finfo && o == T->finfo) || (T->iinfo && o == T->iinfo)) {
      PyRef a = constOf(args[0]);
      if (!a) return nullptr;
      PyObject* r = PyObject_CallOneArg(o, a.get());
      if (!r) {
        failPy("GB011", nameOf(o));
        return nullptr;
      }
      return makeVar(Var::Kind::Object, PyRef::steal(r));
    }
  }
  if (VarRef r = gradDecorated(f, o, args, kwargs); r || failed()) return r;
  if (PyObject* answer = tracerQuery(o)) {
    if (!args.empty() || !kwargs.empty()) {
      fail("GB002", nameOf(o) + " with arguments");
      return nullptr;
    }
    return makeConst(PyRef::borrow(answer));
  }
  if (markedConstant(o)) return callOnConstants(o, args, kwargs, /*marked=*/true);
  if (isTorchOp(o)) return record(o, args, kwargs);
  if (PyFunction_Check(o) && isUserFunction(o)) return inlineFunction(o, std::move(args), std::move(kwargs), fn->source);
  if (immutableBuiltinMethod(o)) return callOnConstants(o, args, kwargs, /*marked=*/false);
  if (PyType_Check(o)) return constructUser(fn, args, kwargs);  // Note [User objects]
  fail("GB002", nameOf(o));
  return nullptr;
}

VarRef Translator::polyfill(PyObject* f, std::vector<VarRef>& args,
                            std::vector<std::pair<PyRef, VarRef>>& kwargs) {
  const PyTypes* T = pyTypes();
  if (!T->polyfills || !PyDict_Check(T->polyfills)) return nullptr;
  PyObject* entry = PyDict_GetItemWithError(T->polyfills, f);  // borrowed
  if (!entry) {
    PyErr_Clear();  // not there, or not hashable
    return nullptr;
  }
  PyObject* ref = PyTuple_GET_ITEM(entry, 0);
  if (PyUnicode_Check(ref)) return polyfillQuery(ref, args, kwargs);  // TranslateBuiltins.cpp
  if (ref == Py_None) {
    // No reference: the original is pure and its result an immutable value
    // (polyfills.py, PURE_ON_CONSTANTS), called now on constant arguments.
    std::vector<VarRef> all = args;
    for (const auto& kv : kwargs) all.push_back(kv.second);
    // Constants, classes (`np.iinfo(np.int16)`: guarded where they were read)
    // and lists of constants (passed as a fresh copy: `torch.Size([n, 1])`).
    std::function<PyRef(const VarRef&)> constant = [&](const VarRef& a) -> PyRef {
      if (isConst(a) || (a->is(Var::Kind::Object) && PyType_Check(a->obj.get()))) return constOf(a);
      if (!a->is(Var::Kind::List)) return {};
      PyRef l = PyRef::steal(PyList_New(static_cast<Py_ssize_t>(a->items.size())));
      for (size_t i = 0; i < a->items.size(); ++i) {
        PyRef e = constant(a->items[i]);
        if (!e) return {};
        PyList_SET_ITEM(l.get(), static_cast<Py_ssize_t>(i), e.release());
      }
      return l;
    };
    std::vector<PyRef> values;
    for (const VarRef& a : all) {
      values.push_back(constant(a));
      if (!values.back()) {
        if (!failed()) fail("GB002", nameOf(f) + " on a value that is not a constant");
        return nullptr;
      }
    }
    PyRef tuple = PyRef::steal(PyTuple_New(static_cast<Py_ssize_t>(args.size())));
    for (size_t i = 0; i < args.size(); ++i)
      PyTuple_SET_ITEM(tuple.get(), static_cast<Py_ssize_t>(i), values[i].release());
    PyRef kw = PyRef::steal(PyDict_New());
    for (size_t i = 0; i < kwargs.size(); ++i)
      PyDict_SetItem(kw.get(), kwargs[i].first.get(), values[args.size() + i].get());
    PyObject* r = PyObject_Call(f, tuple.get(), kw.get());
    if (!r) {
      failPy("GB002", nameOf(f));  // Python raises it again where the frame breaks
      return nullptr;
    }
    PyRef result = PyRef::steal(r);
    bool value = plainConstant(r) || PyObject_TypeCheck(r, reinterpret_cast<PyTypeObject*>(T->device)) ||
                 PyObject_TypeCheck(r, reinterpret_cast<PyTypeObject*>(T->dtype)) ||
                 Py_IS_TYPE(r, reinterpret_cast<PyTypeObject*>(T->size));
    return value ? fromConst(r) : makeVar(Var::Kind::Object, result);
  }
  if (PyObject_IsTrue(PyTuple_GET_ITEM(entry, 1))) {
    bool constant = true;
    for (const VarRef& a : args) constant = constant && isConst(a);
    for (const auto& kv : kwargs) constant = constant && isConst(kv.second);
    if (constant) return nullptr;  // the original itself, at capture time
  }
  return inlineFunction(ref, std::move(args), std::move(kwargs), nullptr);
}

VarRef Translator::inlineFunction(PyObject* fnObj, std::vector<VarRef> args,
                                  std::vector<std::pair<PyRef, VarRef>> kwargs, const SourceRef& source) {
  auto* fn = reinterpret_cast<PyFunctionObject*>(fnObj);
  std::vector<VarRef> cells;
  static PyObject* closureName = PyUnicode_InternFromString("__closure__");
  static PyObject* contentsName = PyUnicode_InternFromString("cell_contents");
  if (fn->func_closure) {
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(fn->func_closure); ++i) {
      auto cell = makeVar(Var::Kind::Cell);
      PyObject* content = PyCell_GET(PyTuple_GET_ITEM(fn->func_closure, i));
      if (content) {
        SourceRef src = Source::attr(Source::itemIndex(Source::attr(source, closureName), i), contentsName);
        cell->self = wrap(content, src);
        if (!cell->self) return nullptr;
      }
      cells.push_back(std::move(cell));
    }
  }
  std::vector<VarRef> defaults;
  if (fn->func_defaults) {
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(fn->func_defaults); ++i) {
      VarRef d = wrap(PyTuple_GET_ITEM(fn->func_defaults, i), nullptr);
      if (!d) return nullptr;
      defaults.push_back(std::move(d));
    }
  }
  std::vector<std::pair<PyRef, VarRef>> kwdefaults;
  if (fn->func_kwdefaults && PyDict_Check(fn->func_kwdefaults)) {
    PyObject *k, *v;
    Py_ssize_t pos = 0;
    while (PyDict_Next(fn->func_kwdefaults, &pos, &k, &v)) {
      VarRef d = wrap(v, nullptr);
      if (!d) return nullptr;
      kwdefaults.emplace_back(PyRef::borrow(k), std::move(d));
    }
  }
  std::string name = PyUnicode_AsUTF8(fn->func_name);
  return inlineCode(reinterpret_cast<PyCodeObject*>(fn->func_code), fn->func_globals, defaults, kwdefaults,
                    cells, std::move(args), std::move(kwargs), source, name);
}

VarRef Translator::inlineCode(PyCodeObject* code, PyObject* globals, const std::vector<VarRef>& defaults,
                              const std::vector<std::pair<PyRef, VarRef>>& kwdefaults,
                              const std::vector<VarRef>& cells, std::vector<VarRef> args,
                              std::vector<std::pair<PyRef, VarRef>> kwargs, const SourceRef& source,
                              const std::string& name) {
  (void)source;
  if (code->co_flags & (CO_COROUTINE | CO_ITERABLE_COROUTINE | CO_ASYNC_GENERATOR)) {
    fail("GB013", "coroutine " + name);
    return nullptr;
  }
  bool generator = code->co_flags & CO_GENERATOR;
  if (inlineStack_.size() >= kMaxInlineDepth ||
      std::count(inlineStack_.begin(), inlineStack_.end(), code) >= kMaxSameCode) {
    fail("GB016", "inlining " + name);
    return nullptr;
  }
  std::string error;
  const Bytecode* bc = Bytecode::of(code, error);
  if (!bc) {
    fail("GB020", error);
    return nullptr;
  }
  // Bind arguments to slots (positional, keyword-only, *args, **kwargs).
  const int nargs = code->co_argcount, nkw = code->co_kwonlyargcount;
  const bool varargs = code->co_flags & CO_VARARGS, varkw = code->co_flags & CO_VARKEYWORDS;
  std::vector<VarRef> slots(static_cast<size_t>(code->co_nlocalsplus));
  PyObject* names = code->co_localsplusnames;
  size_t npos = std::min(args.size(), static_cast<size_t>(nargs));
  for (size_t i = 0; i < npos; ++i) slots[i] = args[i];
  if (varargs) {
    slots[static_cast<size_t>(nargs + nkw)] =
        makeSeq(Var::Kind::Tuple, std::vector<VarRef>(args.begin() + static_cast<std::ptrdiff_t>(npos), args.end()));
  } else if (args.size() > npos) {
    fail("GB011", "too many arguments to " + name);
    return nullptr;
  }
  auto extra = makeVar(Var::Kind::Dict);
  for (auto& [k, v] : kwargs) {
    int slot = -1;
    for (int i = code->co_posonlyargcount; i < nargs + nkw; ++i)
      if (PyUnicode_Compare(PyTuple_GET_ITEM(names, i), k.get()) == 0) slot = i;
    if (slot >= 0) {
      if (slots[static_cast<size_t>(slot)]) {
        fail("GB011", "duplicate argument to " + name);
        return nullptr;
      }
      slots[static_cast<size_t>(slot)] = v;
    } else {
      extra->keys.push_back(k);
      extra->items.push_back(v);
    }
  }
  if (varkw) {
    slots[static_cast<size_t>(nargs + nkw + (varargs ? 1 : 0))] = extra;
  } else if (!extra->keys.empty()) {
    fail("GB011", "unexpected keyword arguments to " + name);
    return nullptr;
  }
  const int nd = static_cast<int>(defaults.size());
  for (int i = 0; i < nargs; ++i) {
    if (slots[static_cast<size_t>(i)]) continue;
    int j = i - (nargs - nd);
    if (j < 0) {
      fail("GB011", "missing argument to " + name);
      return nullptr;
    }
    slots[static_cast<size_t>(i)] = defaults[static_cast<size_t>(j)];
  }
  for (int i = nargs; i < nargs + nkw; ++i) {
    if (slots[static_cast<size_t>(i)]) continue;
    bool found = false;
    for (auto& [k, v] : kwdefaults)
      if (PyUnicode_Compare(k.get(), PyTuple_GET_ITEM(names, i)) == 0) {
        slots[static_cast<size_t>(i)] = v;
        found = true;
      }
    if (!found) {
      fail("GB011", "missing keyword argument to " + name);
      return nullptr;
    }
  }
  const int nfree = code->co_nfreevars;
  for (int i = 0; i < nfree; ++i) {
    slots[static_cast<size_t>(code->co_nlocalsplus - nfree + i)] =
        static_cast<size_t>(i) < cells.size() ? cells[static_cast<size_t>(i)] : makeVar(Var::Kind::Cell);
  }
  PyObject* builtins = PyDict_GetItemString(globals, "__builtins__");
  if (builtins && PyModule_Check(builtins)) builtins = PyModule_GetDict(builtins);
  if (!builtins || !PyDict_Check(builtins)) builtins = PyEval_GetBuiltins();
  auto frame = std::make_unique<Frame>(*this, code, bc, globals, builtins);
  Frame& f = *frame;
  f.slots = std::move(slots);
  f.parent = current_;
  f.line = code->co_firstlineno;
  // Globals of torch's own modules are trusted (not guarded); user globals are
  // guarded through the globals dict held as an entry constant.
  PyObject* modName = PyDict_GetItemString(globals, "__name__");
  bool trusted = modName && PyUnicode_Check(modName) &&
                 std::string(PyUnicode_AsUTF8(modName)).rfind("torch", 0) == 0;
  if (!trusted) {
    int gi = host_.constIndex(globals);
    f.globalSource = [this, gi, builtins](PyObject* n, bool builtin) -> SourceRef {
      int idx = builtin ? host_.constIndex(builtins) : gi;
      return Source::item(Source::root(Access::Const, idx), n);
    };
  }
  if (generator) {  // See Note [Lazy generators]
    f.lazy = true;
    auto it = makeVar(Var::Kind::Iter);
    it->iter = Var::IterOf::Generator;
    it->gen = std::make_shared<GenFrame>();
    it->gen->frame = std::move(frame);
    it->gen->name = name;
    return it;
  }
  inlineStack_.push_back(code);
  VarRef result;
  bool ok = runFrame(f, result);
  inlineStack_.pop_back();
  if (!ok) return nullptr;
  return result;
}

}  // namespace xacc::capture::translate

namespace xacc::capture::translate {

VarRef Translator::superOf(Frame& f, std::vector<VarRef>& args) {
  VarRef cls, self;
  if (args.size() == 2) {
    cls = args[0];
    self = args[1];
  } else if (args.empty()) {
    PyCodeObject* code = f.code;
    for (int i = code->co_nlocalsplus - code->co_nfreevars; i < code->co_nlocalsplus; ++i) {
      if (PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(code->co_localsplusnames, i), "__class__") == 0) {
        const VarRef& cell = f.slots[static_cast<size_t>(i)];
        if (cell && cell->is(Var::Kind::Cell)) cls = cell->self;
      }
    }
    if (code->co_argcount > 0 && f.slots[0]) {
      self = f.slots[0];
      if (self->is(Var::Kind::Cell)) self = self->self;
    }
    if (!cls || !self) {
      fail("GB002", "super() outside a method");
      return nullptr;
    }
  } else {
    fail("GB002", "super() with one argument");
    return nullptr;
  }
  PyObject* tp = typeOf(self);
  if (!cls->is(Var::Kind::Object) || !PyType_Check(cls->obj.get()) || !tp ||
      !PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(tp), reinterpret_cast<PyTypeObject*>(cls->obj.get()))) {
    fail("GB002", "super(type, obj): obj is not an instance of type");
    return nullptr;
  }
  auto s = makeVar(Var::Kind::Super, cls->obj);
  s->self = self;
  return s;
}

VarRef Translator::superAttr(const VarRef& sv, PyObject* name) {
  PyObject* mro = reinterpret_cast<PyTypeObject*>(typeOf(sv->self))->tp_mro;
  Py_ssize_t n = PyTuple_GET_SIZE(mro), i = 0;
  while (i < n && PyTuple_GET_ITEM(mro, i) != sv->obj.get()) ++i;
  for (++i; i < n; ++i) {
    auto* k = reinterpret_cast<PyTypeObject*>(PyTuple_GET_ITEM(mro, i));
    PyObject* attr = k->tp_dict ? PyDict_GetItemWithError(k->tp_dict, name) : nullptr;
    if (!attr) {
      if (PyErr_Occurred()) PyErr_Clear();
      continue;
    }
    if (PyFunction_Check(attr)) {
      auto m = makeVar(Var::Kind::BoundMethod, PyRef::borrow(attr));
      m->self = sv->self;
      return m;
    }
    if (Py_TYPE(attr) == &PyStaticMethod_Type) {
      PyObject* fn = PyObject_GetAttrString(attr, "__func__");
      if (fn && PyFunction_Check(fn)) return makeVar(Var::Kind::Object, PyRef::steal(fn));
      Py_XDECREF(fn);
      PyErr_Clear();
    }
    if (k == &PyBaseObject_Type && PyUnicode_CompareWithASCIIString(name, "__init__") == 0)
      return makeVar(Var::Kind::NoOp);
    if (k == &PyDict_Type && sv->self->is(Var::Kind::Object) && sv->self->source &&
        PyDict_Check(sv->self->obj.get())) {
      // dict's own read methods on an instance of a dict subclass (a registry):
      // the entries as a Dict guarded through the instance's source.
      const char* n = PyUnicode_AsUTF8(name);
      bool read = false;
      for (const char* ok : {"get", "keys", "values", "items"})
        read = read || std::strcmp(n, ok) == 0;
      if (read) {
        PyObject* o = sv->self->obj.get();
        const SourceRef& src = sv->self->source;
        guardKeys(src, o);  // keys(), values() and items() follow their order
        auto d = makeVar(Var::Kind::Dict);
        PyObject *key, *val;
        Py_ssize_t pos = 0;
        while (PyDict_Next(o, &pos, &key, &val)) {
          if (!PyUnicode_CheckExact(key) && !PyLong_CheckExact(key)) {
            fail("GB011", "dict subclass with non-constant keys");
            return nullptr;
          }
          VarRef item = wrap(val, Source::item(src, key));
          if (!item) return nullptr;
          d->keys.push_back(PyRef::borrow(key));
          d->items.push_back(std::move(item));
        }
        auto m = makeVar(Var::Kind::ContainerMethod);
        m->self = d;
        m->name = n;
        return m;
      }
    }
    fail("GB010", std::string("super().") + PyUnicode_AsUTF8(name) + " is a " + Py_TYPE(attr)->tp_name);
    return nullptr;
  }
  fail("GB010", std::string("super().") + PyUnicode_AsUTF8(name) + ": no such attribute");
  return nullptr;
}

}  // namespace xacc::capture::translate

namespace xacc::capture::translate {

VarRef Translator::signatureOf(const VarRef& v) {
  // inspect.signature of a function known at capture time (its identity is
  // guarded where it came from an input): an immutable inspect.Signature,
  // read through constant attribute access (`len(sig.parameters)`).
  PyRef target;
  if (v->is(Var::Kind::BoundMethod) && PyFunction_Check(v->obj.get())) {
    // Bound to a tracked object: the signature without the first parameter,
    // as for any bound method (the receiver itself does not matter).
    target = PyRef::steal(PyMethod_New(v->obj.get(), Py_None));
  } else if (v->is(Var::Kind::Object) && (PyFunction_Check(v->obj.get()) || PyMethod_Check(v->obj.get()))) {
    target = v->obj;
  }
  if (!target) {
    fail("GB002", "inspect.signature of a value that is not a known function");
    return nullptr;
  }
  PyObject* m = PyImport_ImportModule("inspect");
  PyObject* sig = m ? PyObject_CallMethod(m, "signature", "O", target.get()) : nullptr;
  Py_XDECREF(m);
  if (!sig) {
    failPy("GB002", "inspect.signature");
    return nullptr;
  }
  return makeConst(PyRef::steal(sig));
}

VarRef Translator::callOnConstants(PyObject* o, std::vector<VarRef>& args,
                                   std::vector<std::pair<PyRef, VarRef>>& kwargs, bool marked) {
  // A method of an immutable builtin value: its receiver is a constant already
  // (guarded by value where it came from an input). Either way the arguments
  // must be constants too.
  auto constArg = [&](const VarRef& v) -> PyRef {
    if (isConst(v)) return constOf(v);
    bool constItems = !marked && v->is(Var::Kind::List);  // "/".join(parts): a fresh copy of the list
    for (const VarRef& i : v->items) constItems = constItems && isConst(i);
    if (constItems) {
      PyRef l = PyRef::steal(PyList_New(static_cast<Py_ssize_t>(v->items.size())));
      for (size_t i = 0; i < v->items.size(); ++i)
        PyList_SET_ITEM(l.get(), static_cast<Py_ssize_t>(i), constOf(v->items[i]).release());
      return l;
    }
    fail("GB002", nameOf(o) + (marked ? " (a trace-time constant) on a non-constant argument"
                                      : " on a value that is not a constant"));
    return {};
  };
  PyRef tuple = PyRef::steal(PyTuple_New(static_cast<Py_ssize_t>(args.size())));
  for (size_t i = 0; i < args.size(); ++i) {
    PyRef a = constArg(args[i]);
    if (!a) return nullptr;
    PyTuple_SET_ITEM(tuple.get(), static_cast<Py_ssize_t>(i), a.release());
  }
  PyRef kw;
  if (!kwargs.empty()) {
    kw = PyRef::steal(PyDict_New());
    for (auto& [k, v] : kwargs) {
      PyRef a = constArg(v);
      if (!a) return nullptr;
      PyDict_SetItem(kw.get(), k.get(), a.get());
    }
  }
  PyObject* r = PyObject_Call(o, tuple.get(), kw.get());
  if (!r) {
    failPy("GB002", nameOf(o));
    return nullptr;
  }
  PyRef result = PyRef::steal(r);
  if (marked ? !scalarConstant(r) : !plainConstant(r)) {
    fail("GB002", nameOf(o) + (marked ? " returned a non-constant value"
                                      : " returned a value that is not a plain constant"));
    return nullptr;
  }
  return fromConst(r);
}

}  // namespace xacc::capture::translate
