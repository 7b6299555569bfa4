// Calls: the dispatch of a call by what is called (CALL and friends): torch
// functions (recorded through the host on metas), Python builtins on
// trackers, grad-mode decorators, nn.Module calls and user functions (inlined,
// TranslateInline.cpp). Methods of tensors, containers and super() are in
// TranslateMethods.cpp; calls answered at capture time (polyfills, constant
// calls) in TranslatePolyfills.cpp.
#include <algorithm>
#include <cstring>

#include "AttributeProtocol.h"
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

bool startsWith(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }

/// torch's Python packages whose code is inlined like a user's (classes built,
/// methods and functions traced), not recorded as one torch call: nn modules,
/// parametrizations, and torch.distributions (its objects are plain Python
/// classes whose methods call torch ops: built as user objects, Note [User
/// objects]; their lazy_property is Note [Non-data descriptors]; argument
/// validation branches on tensors, a break where eager would raise).
bool inlinedTorchModule(const std::string& mod) {
  static const char* kInlined[] = {"torch.nn.modules", "torch.nn.utils.parametrize", "torch.distributions"};
  for (const char* p : kInlined)
    if (startsWith(mod, p) && (mod.size() == strlen(p) || mod[strlen(p)] == '.')) return true;
  return false;
}

/// torch callables that change global state and must never run while tracing.
bool blocked(const std::string& full) {
  static const char* kBlock[] = {"manual_seed", "seed",  "save",     "load",          "set_",
                                 "use_deterministic", "compile", "jit", "autograd.grad",
                                 "backward",    "set_grad_enabled"};
  for (const char* b : kBlock)
    if (full.find(b) != std::string::npos) return true;
  return false;
}

// Note [Legacy tensor constructors]: `torch.IntTensor(data)`, `torch.FloatTensor`,
// ... (instances of torch's `tensortype`) called with one list or tuple of
// Python numbers build what `torch.tensor(data, dtype=cls.dtype, device="cpu")`
// builds: the same dtype, values (floats truncated toward zero, bools as 0/1),
// shape and errors (overflow, ragged lists); a CPU type ignores the default
// device and dtype, as these explicit arguments do. It is recorded as that
// call, so its aten.lift_fresh makes a known value (Note [Known tensor values]
// in known.py): `torch.IntTensor([n])[0]` used as a slice bound is eager's
// number. Every other form keeps its break: sizes (`IntTensor(2, 3)`,
// `IntTensor(3)`, a torch.Size: uninitialized memory), a tensor, an ndarray
// or storage, `device=`, a CUDA or sparse type, data that is not constants.
bool legacyConst(PyObject* o, int depth) {
  if (PyLong_CheckExact(o) || PyFloat_CheckExact(o) || PyBool_Check(o)) return depth > 0;
  if (!PyTuple_CheckExact(o) || depth > 8) return false;  // a torch.Size is no exact tuple
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(o); ++i)
    if (!legacyConst(PyTuple_GET_ITEM(o, i), depth + 1)) return false;
  return true;
}

/// `v` is data for a legacy constructor: a list or tuple (nested) of Python
/// ints, floats and bools; a number on its own (`IntTensor(3)`) is a size.
bool legacyData(const VarRef& v, int depth) {
  if (depth > 8) return false;
  if (v->is(Var::Kind::Const)) return legacyConst(v->obj.get(), depth);
  bool seq = v->is(Var::Kind::List) || (v->is(Var::Kind::Tuple) && !v->obj && !v->torchSize);
  if (!seq) return false;
  for (const VarRef& e : v->items)
    if (!legacyData(e, depth + 1)) return false;
  return true;
}

bool attrIsFalse(PyObject* o, const char* name) {
  PyObject* a = PyObject_GetAttrString(o, name);
  if (!a) {
    PyErr_Clear();
    return false;
  }
  bool f = a == Py_False;
  Py_DECREF(a);
  return f;
}

/// The dtype (a new reference) when `cls(args)` is a CPU legacy constructor
/// called on data, else null.
PyObject* legacyTensorDtype(PyObject* cls, const std::vector<VarRef>& args,
                            const std::vector<std::pair<PyRef, VarRef>>& kwargs) {
  static PyTypeObject* legacyType = [] {
    PyObject* ft = moduleAttr("torch", "FloatTensor");
    PyTypeObject* tp = ft ? Py_TYPE(ft) : nullptr;  // torch's tensortype, alive for the process
    Py_XDECREF(ft);
    if (PyErr_Occurred()) PyErr_Clear();
    return tp;
  }();
  if (!legacyType || Py_TYPE(cls) != legacyType || args.size() != 1 || !kwargs.empty() ||
      !legacyData(args[0], 0) || !attrIsFalse(cls, "is_cuda") || !attrIsFalse(cls, "is_sparse"))
    return nullptr;
  PyObject* dtype = PyObject_GetAttrString(cls, "dtype");
  if (dtype && isA(dtype, pyTypes()->dtype)) return dtype;
  Py_XDECREF(dtype);
  PyErr_Clear();
  return nullptr;
}

bool isTorchOp(PyObject* fn) {
  const PyTypes* T = pyTypes();
  if (isA(fn, T->opOverload) || isA(fn, T->opOverloadPacket)) return true;
  if (PyType_Check(fn)) return false;
  if (Py_TYPE(fn) == methodWrapperType()) {
    // `Tensor.shape.__get__` bound to a getset of Tensor's: what a
    // TorchFunctionMode gets for an attribute read (Note [Function modes in the frame]).
    PyObject* self = PyObject_GetAttrString(fn, "__self__");
    if (!self) {
      PyErr_Clear();
      return false;
    }
    bool r = Py_IS_TYPE(self, &PyGetSetDescr_Type) &&
             PyType_IsSubtype(PyDescr_TYPE(self), reinterpret_cast<PyTypeObject*>(T->tensorBase));
    Py_DECREF(self);
    return r;
  }
  std::string mod = moduleOf(fn);
  if (startsWith(mod, "torch") && !inlinedTorchModule(mod))
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

/// Answers of "am I being traced?" queries as a tracer gives them while a
/// frame is translated (the graph only ever runs as that trace): compiling
/// yes; TorchScript tracing, scripting, export and stream capture no. Library
/// code then takes its compile-friendly path, written to be traced whole; the
/// compile-only APIs it calls there (torch._higher_order_ops) have references
/// in polyfills_hops.py, so that path is captured, not broken. Null
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
  if (mod == "xacc._src.capture.polyfills" || startsWith(mod, "xacc._src.capture.polyfills_"))
    return true;  // reference implementations are inlined
  if (inlinedTorchModule(mod)) return true;
  if (mod == "torch.overrides" && PyFunction_Check(fn)) {
    // TorchFunctionMode's own __init__/__enter__/__exit__: plain Python whose
    // _push_mode/_pop_mode the translator models (Note [Function modes in the frame]).
    PyObject* q = reinterpret_cast<PyCodeObject*>(PyFunction_GET_CODE(fn))->co_qualname;
    if (q && PyUnicode_Check(q) && startsWith(PyUnicode_AsUTF8(q), "TorchFunctionMode.")) return true;
  }
  if (mod == "collections" && PyFunction_Check(fn)) {
    // The methods collections.namedtuple defines for each class (_make,
    // _replace, _asdict) are plain Python code over the tuple: inlined.
    PyObject* q = reinterpret_cast<PyCodeObject*>(PyFunction_GET_CODE(fn))->co_qualname;
    if (q && PyUnicode_Check(q) && startsWith(PyUnicode_AsUTF8(q), "namedtuple.<locals>.")) return true;
    // UserDict's and UserList's methods are plain Python over the instance's
    // `data` (a dict or list): inlined, so a subclass of one built in the frame
    // is a UserObject whose `data` is a tracked container (transformers'
    // KVSharingDict).
    if (q && PyUnicode_Check(q) &&
        (startsWith(PyUnicode_AsUTF8(q), "UserDict.") || startsWith(PyUnicode_AsUTF8(q), "UserList.")))
      return true;
  }
  // The mixin methods of collections.abc's classes (Sequence.__iter__,
  // __contains__, index, count, __reversed__; Set's operators; MutableMapping's
  // update, pop, setdefault) are plain Python over the class's own abstract
  // methods: inlined, so a user class built on them is modelled by running them.
  if (mod == "collections.abc" && PyFunction_Check(fn)) return true;
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

bool callArgs(const std::vector<VarRef>& args, const std::vector<std::pair<PyRef, VarRef>>& kwargs,
              const std::function<PyRef(const VarRef&)>& convert, PyRef& tuple, PyRef& kw) {
  tuple = PyRef::steal(PyTuple_New(static_cast<Py_ssize_t>(args.size())));
  for (size_t i = 0; i < args.size(); ++i) {
    PyRef v = convert(args[i]);
    if (!v) return false;
    PyTuple_SET_ITEM(tuple.get(), static_cast<Py_ssize_t>(i), v.release());
  }
  if (!kwargs.empty()) {
    kw = PyRef::steal(PyDict_New());
    for (const auto& [k, v] : kwargs) {
      PyRef pv = convert(v);
      if (!pv) return false;
      PyDict_SetItem(kw.get(), k.get(), pv.get());
    }
  }
  return true;
}

VarRef Translator::record(PyObject* fn, const std::vector<VarRef>& args,
                          const std::vector<std::pair<PyRef, VarRef>>& kwargs) {
  if (!functionModes_.empty()) return modeDispatch(fn, args, kwargs);  // Note [Function modes in the frame]
  bool handled = false;
  VarRef sym = recordSym(fn, args, kwargs, handled);
  if (handled || failed()) return sym;
  PyRef tuple, kw;
  if (!callArgs(args, kwargs, [this](const VarRef& v) { return pythonValue(v); }, tuple, kw)) return nullptr;
  std::string code, detail;
  PyRef r = host_.record(fn, tuple.get(), kw.get(), code, detail);
  if (!r) {
    fail(hostBreak(code, GB::NoMetaKernel), detail);
    return nullptr;
  }
  return fromPython(r.get());
}

VarRef Translator::callModule(const VarRef& mod, std::vector<VarRef>& args,
                              std::vector<std::pair<PyRef, VarRef>>& kwargs) {
  PyObject* m = mod->obj.get();
  // A class with its own __call__ (its type is guarded) is called through it.
  static PyObject* callName = PyUnicode_InternFromString("__call__");
  PyObject* call = _PyType_Lookup(Py_TYPE(m), callName);  // borrowed
  if (call != _PyType_Lookup(reinterpret_cast<PyTypeObject*>(pyTypes()->module), callName)) {
    if (!call || !PyFunction_Check(call) || !isUserFunction(call)) {
      fail(GB::ModuleHooks, std::string(Py_TYPE(m)->tp_name) + ".__call__");
      return nullptr;
    }
    PyRef keep = PyRef::borrow(call);
    std::vector<VarRef> all{mod};
    all.insert(all.end(), args.begin(), args.end());
    return inlineFunction(call, std::move(all), std::move(kwargs), nullptr);
  }
  // nn.Module.__call__ runs the hooks (its own and torch's global ones) around
  // forward: Note [Module hooks] in TranslateModuleHooks.cpp.
  return callModuleHooks(mod, args, kwargs);
}

VarRef Translator::callForward(const VarRef& mod, std::vector<VarRef>& args,
                               std::vector<std::pair<PyRef, VarRef>>& kwargs) {
  PyObject* m = mod->obj.get();
  // __call__ runs `self.forward`: one set on the instance is not the class's.
  static PyObject* forwardName = PyUnicode_InternFromString("forward");
  static PyObject* dictName = PyUnicode_InternFromString("__dict__");
  PyObject** dp = _PyObject_GetDictPtr(m);
  if (dp && *dp && PyDict_GetItemWithError(*dp, forwardName)) {
    fail(GB::ModuleHooks, std::string(Py_TYPE(m)->tp_name) + ".forward set on the instance");
    return nullptr;
  }
  PyErr_Clear();
  guardHas(Source::attr(mod->source, dictName), Leaf::Kind::HasKey, forwardName, false);
  PyObject* fwd = PyObject_GetAttrString(reinterpret_cast<PyObject*>(Py_TYPE(m)), "forward");
  if (!fwd) {
    failPy(GB::UntraceableCall, "forward");
    return nullptr;
  }
  PyRef forward = PyRef::steal(fwd);
  if (!PyFunction_Check(fwd)) {
    fail(GB::UntraceableCall, std::string(Py_TYPE(m)->tp_name) + ".forward");
    return nullptr;
  }
  std::vector<VarRef> all{mod};
  all.insert(all.end(), args.begin(), args.end());
  if (VarRef r = gradDecorated(*current_, fwd, all, kwargs); r || failed()) return r;  // @torch.no_grad() forward
  // The forward is read where Python reads it, `type(m).forward`: its closure
  // cells' contents (a decorator's wrapped function and arguments) are read
  // and guarded through that source.
  SourceRef fwdSource = mod->source ? Source::attr(Source::typeOf(mod->source), forwardName) : nullptr;
  if (!fwdSource && isFreshModule(mod) && mod->self->source) {  // Note [Fresh modules]: its class's forward
    fwdSource = Source::attr(mod->self->source, forwardName);
    guardId(fwdSource, fwd);
  }
  return inlineFunction(fwd, std::move(all), std::move(kwargs), fwdSource);
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
          fail(GB::UntraceableCall, std::string("Mapping.") + mix + " arguments");
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
        if (!r && failure_.code == gbCode(GB::RaisesException) && failure_.detail == "missing key (raises KeyError)" &&
            before.code.empty()) {
          failure_ = before;
          if (get) return args.size() > 1 ? args[1] : makeConst(PyRef::borrow(Py_None));
          return makeConst(PyRef::borrow(Py_False));
        }
        if (!r) return nullptr;
        return get ? r : makeConst(PyRef::borrow(Py_True));
      }
      if (Py_TYPE(fn->obj.get()) == &PyWrapperDescr_Type &&
          PyDescr_TYPE(fn->obj.get()) == &PyBaseObject_Type) {
        // object's __getattribute__/__setattr__ bound by superAttr: `object.__getattribute__(self, ...)`.
        std::vector<VarRef> all{fn->self};
        all.insert(all.end(), args.begin(), args.end());
        return callObject(f, makeVar(Var::Kind::Object, fn->obj), all, kwargs);
      }
      std::vector<VarRef> all{fn->self};
      all.insert(all.end(), args.begin(), args.end());
      return inlineFunction(fn->obj.get(), std::move(all), std::move(kwargs), nullptr);
    }
    case Var::Kind::Function: {
      std::vector<std::pair<PyRef, VarRef>> kwd;
      for (size_t i = 0; i < fn->keys.size(); ++i) kwd.emplace_back(fn->keys[i], fn->kwItems[i]);
      return inlineCode(reinterpret_cast<PyCodeObject*>(fn->obj.get()), fn->globals.get(), fn->items, kwd,
                        fn->cells, std::move(args), std::move(kwargs), nullptr, fn->name,
                        fn->cells.empty() ? nullptr : fn->cells.front().get(), fn->globalSource);
    }
    case Var::Kind::ContainerMethod:
      if (fn->self->is(Var::Kind::Set)) {
        if (!kwargs.empty()) {
          fail(GB::UnsupportedType, "keyword arguments to set." + fn->name);
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
        fail(GB::UntraceableCall, "object.__init__ with arguments");
        return nullptr;
      }
      return makeConst(PyRef::borrow(Py_None));
    case Var::Kind::Object:
      return callObject(f, fn, args, kwargs);
    case Var::Kind::UserObject:
      return callUser(fn, args, kwargs);
    default:
      fail(GB::UntraceableCall, "call of an unsupported value");
      return nullptr;
  }
}

VarRef Translator::callObject(Frame& f, const VarRef& fn, std::vector<VarRef>& args,
                              std::vector<std::pair<PyRef, VarRef>>& kwargs) {
  const PyTypes* T = pyTypes();
  PyObject* o = fn->obj.get();
  if (o == T->print) {
    fail(GB::Print, "print()");
    return nullptr;
  }
  if (VarRef cls = freshClass(fn, args, kwargs); cls || failed()) return cls;  // Note [Fresh classes]
  if (o == buildClassBuiltin()) return buildClass(args, kwargs);  // Note [Local classes]
  static PyObject* objectSetattr = PyObject_GetAttrString(reinterpret_cast<PyObject*>(&PyBaseObject_Type), "__setattr__");
  if (o == objectSetattr && args.size() == 3 && kwargs.empty() && args[0]->is(Var::Kind::UserObject) &&
      args[1]->is(Var::Kind::Const) && PyUnicode_CheckExact(args[1]->obj.get())) {  // Note [User objects]
    if (!objectSetAttr(args[0], args[1]->obj.get(), args[2])) return nullptr;
    return makeConst(PyRef::borrow(Py_None));
  }
  static PyObject* objectGetattribute =
      PyObject_GetAttrString(reinterpret_cast<PyObject*>(&PyBaseObject_Type), "__getattribute__");
  if (o == objectGetattribute && args.size() == 2 && kwargs.empty() && args[0]->is(Var::Kind::UserObject) &&
      args[1]->is(Var::Kind::Const) && PyUnicode_CheckExact(args[1]->obj.get()))  // Note [Attribute protocol]
    return objectGetAttribute(*this, args[0], args[1]->obj.get());
  static PyObject* builtinDelattr = PyDict_GetItemString(PyEval_GetBuiltins(), "delattr");  // borrowed, lives forever
  static PyObject* objectDelattr = PyObject_GetAttrString(reinterpret_cast<PyObject*>(&PyBaseObject_Type), "__delattr__");
  if ((o == builtinDelattr || o == objectDelattr) && args.size() == 2 && kwargs.empty() &&
      args[1]->is(Var::Kind::Const) && PyUnicode_CheckExact(args[1]->obj.get())) {  // Note [Deleting attributes]
    bool ok = o == objectDelattr && args[0]->is(Var::Kind::UserObject) ? objectDelAttr(args[0], args[1]->obj.get())
                                                                        : delAttr(args[0], args[1]->obj.get());
    if (!ok) return nullptr;
    return makeConst(PyRef::borrow(Py_None));
  }
  static PyObject* builtinSetattr = PyDict_GetItemString(PyEval_GetBuiltins(), "setattr");  // borrowed, lives forever
  if (o == builtinSetattr && args.size() == 3 && kwargs.empty() && args[1]->is(Var::Kind::Const) &&
      PyUnicode_CheckExact(args[1]->obj.get())) {
    // setattr(obj, "name", v) with a constant name is `obj.name = v` (both are
    // PyObject_SetAttr): the same model of the write, or the same break.
    if (!storeAttr(args[0], args[1]->obj.get(), args[2])) return nullptr;
    return makeConst(PyRef::borrow(Py_None));
  }
  static PyObject* builtinVars = PyDict_GetItemString(PyEval_GetBuiltins(), "vars");  // borrowed, lives forever
  if (o == builtinVars && args.size() == 1 && kwargs.empty() && args[0]->is(Var::Kind::UserObject)) {
    static PyObject* dictName = PyUnicode_InternFromString("__dict__");
    return userAttr(args[0], dictName);  // vars(obj) is obj.__dict__ (Note [Instance dicts], [Attribute protocol])
  }
  if (o == builtinVars && args.size() == 1 && kwargs.empty() && args[0]->is(Var::Kind::Object) &&
      args[0]->source && !PyModule_Check(args[0]->obj.get()) && !PyType_Check(args[0]->obj.get()) &&
      _PyObject_GetDictPtr(args[0]->obj.get())) {
    static PyObject* dictName = PyUnicode_InternFromString("__dict__");
    return getattr(args[0], dictName);  // Note [Instance dicts of outside objects]
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
        failPy(GB::UntraceableCall, "functools.partial");
        return nullptr;
      }
      PyRef vr = PyRef::steal(v);
      parts[i] = wrap(v, Source::attr(fn->source, names[i]));
      if (!parts[i]) return nullptr;
    }
    if (!parts[1]->is(Var::Kind::Tuple) || !parts[2]->is(Var::Kind::Dict)) {
      fail(GB::UntraceableCall, "functools.partial with unusual args/keywords");
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
      fail(GB::UntraceableCall, "no_grad/enable_grad with arguments");
      return nullptr;
    }
    auto g = makeVar(Var::Kind::GradMode);
    g->pos = o == T->enableGrad ? 1 : 0;
    return g;
  }
  if (o == T->super) return superOf(f, args);
  if (PyCFunction_Check(o) && PyCFunction_GET_SELF(o) == reinterpret_cast<PyObject*>(&PyBaseObject_Type) &&
      std::strcmp(reinterpret_cast<PyCFunctionObject*>(o)->m_ml->ml_name, "__new__") == 0)
    return objectNew(args, kwargs);  // TranslateObjects.cpp
  if (PyCFunction_Check(o) && PyCFunction_GET_SELF(o) == reinterpret_cast<PyObject*>(&PyTuple_Type) &&
      std::strcmp(reinterpret_cast<PyCFunctionObject*>(o)->m_ml->ml_name, "__new__") == 0)
    return tupleNew(args, kwargs);
  if (VarRef d = globalDraw(o, args, kwargs)) return d;  // Note [Global RNG draws at run time]
  if (failed()) return nullptr;
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
  if (PyType_Check(o)) {
    bool isEnum = false;
    VarRef m = enumMember(fn, args, kwargs, isEnum);
    if (isEnum) return m;
  }
  {
    bool handledMode = false;  // Note [Function modes in the frame]
    VarRef r = modeStackCall(o, args, kwargs, handledMode);
    if (handledMode) return r;
  }
  if (VarRef r = polyfill(o, args, kwargs); r || failed()) return r;
  if (PyType_Check(o) && PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(o), &PyDict_Type) &&
      (reinterpret_cast<PyTypeObject*>(o)->tp_flags & Py_TPFLAGS_HEAPTYPE))
    return constructDict(fn, args, kwargs);  // Note [Dict subclasses]
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
    if (!selfVar->is(Var::Kind::Tensor)) {
      // A method with a Python reference keyed by its function (polyfills_autograd.py:
      // `Fn.apply`, the classmethod Function.apply bound to the Function class, which
      // isTorchOp below would otherwise record as one op: Note [autograd.Function
      // without autograd]).
      std::vector<VarRef> all{selfVar};
      all.insert(all.end(), args.begin(), args.end());
      if (VarRef r = polyfill(func, all, kwargs); r || failed()) return r;
    }
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
        failPy(GB::UnsupportedType, nameOf(o));
        return nullptr;
      }
      return makeVar(Var::Kind::Object, PyRef::steal(r));
    }
  }
  if (VarRef r = gradDecorated(f, o, args, kwargs); r || failed()) return r;
  if (PyObject* answer = tracerQuery(o)) {
    if (!args.empty() || !kwargs.empty()) {
      fail(GB::UntraceableCall, nameOf(o) + " with arguments");
      return nullptr;
    }
    return makeConst(PyRef::borrow(answer));
  }
  if (PyWeakref_CheckRefExact(o) && fn->source && args.empty() && kwargs.empty()) {
    // Note [Weakref calls]: `ref()` of a weakref.ref read from a source is its
    // referent, or None once the referent died. The result is read again through
    // its own source, `src()` (Access::Deref), so every call's guards see the
    // referent of that call: a referent that died or a weakref replaced fails the
    // guards of whatever the graph assumed about the value (its type, identity
    // with another input, tensor metadata), exactly as for an attribute read.
    guardType(fn->source, o);
    return wrap(PyWeakref_GET_OBJECT(o), Source::deref(fn->source));
  }
  if (markedConstant(o)) return callOnConstants(o, args, kwargs, /*marked=*/true);
  if (PyObject* dtype = legacyTensorDtype(o, args, kwargs)) {  // Note [Legacy tensor constructors]
    if (!noFunctionMode("a legacy tensor constructor")) {
      Py_DECREF(dtype);
      return nullptr;
    }
    std::vector<std::pair<PyRef, VarRef>> kw;
    kw.emplace_back(PyRef::steal(PyUnicode_FromString("dtype")), makeConst(PyRef::steal(dtype)));
    kw.emplace_back(PyRef::steal(PyUnicode_FromString("device")), makeConst(PyRef::steal(PyUnicode_FromString("cpu"))));
    return record(T->torchTensor, {args[0]}, kw);
  }
  if (isTorchOp(o)) return record(o, args, kwargs);
  if (PyFunction_Check(o) && isUserFunction(o)) return inlineFunction(o, std::move(args), std::move(kwargs), fn->source);
  if (immutableBuiltinMethod(o)) return callOnConstants(o, args, kwargs, /*marked=*/false);
  if (PyType_Check(o) && PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(o), reinterpret_cast<PyTypeObject*>(PyExc_BaseException)))
    return newException(fn, args, kwargs);  // Note [Traced exceptions]
  if (PyType_Check(o)) return constructUser(fn, args, kwargs);  // Note [User objects]
  fail(GB::UntraceableCall, nameOf(o));
  return nullptr;
}
}  // namespace xacc::capture::translate
