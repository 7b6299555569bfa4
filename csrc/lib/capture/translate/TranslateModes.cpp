// Note [Function modes in the frame]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// `with M():` where M is a torch.overrides.TorchFunctionMode: while the mode is
// on the stack, every torch function and Tensor method or attribute the block
// reaches (at any inlining depth) calls `M.__torch_function__(func, types,
// args, kwargs)` instead, with M popped while it runs; its result is the
// call's. The translator models that stack itself:
//
//  * TorchFunctionMode's own methods (torch/overrides.py: __init__,
//    __enter__, __exit__) are inlined like user code (isUserFunction), and
//    the `_push_mode(m)` / `_pop_mode()` they call push and pop the
//    translator's stack (functionModes_), never the real one: the graph holds
//    no mode. Host.set_function_modes tells the host the depth.
//  * A torch call while the stack is not empty (Translator::record) asks the
//    host (Host.mode_probe) to make it on the metas under a probe mode, which
//    stops at the first __torch_function__ torch itself makes: then `func`,
//    `types`, `args` and `kwargs` are exactly what eager's mode would get
//    (Tensor.add for `t + 1`, the getset's `__get__` for `t.shape`, ...), and
//    the top mode's `__torch_function__` is inlined with them, the mode popped
//    around it. A call that reaches no __torch_function__ (eager does not
//    consult the mode either) was recorded by the probe run itself.
//  * Arguments handed back are the translator's own values where they are
//    the objects it passed (a list keeps its identity), else made from the
//    Python value (a meta, a constant); anything else is a break.
//  * Every other way a tensor is used (a branch on it, a known value read, a
//    NumPy call, a rewritten method such as `.cuda()`, the host's own record
//    paths) breaks while the stack is not empty (noFunctionMode, and the host
//    refuses them): eager would call the mode there, the graph would not.
//  * A frame that ends, or breaks, with a mode it pushed still on the stack
//    runs in Python (runTopFrame): the resume code would run without it.
#include "PyTypes.h"
#include "Translator.h"

namespace xacc::capture::translate {

bool callArgs(const std::vector<VarRef>& args, const std::vector<std::pair<PyRef, VarRef>>& kwargs,
              const std::function<PyRef(const VarRef&)>& convert, PyRef& tuple, PyRef& kw);

namespace {

bool hasSym(const VarRef& v) {
  if (v->is(Var::Kind::SymScalar)) return true;
  if (v->is(Var::Kind::Tuple) || v->is(Var::Kind::List) || v->is(Var::Kind::Dict) ||
      (v->is(Var::Kind::Const) && v->name == "symslice"))
    for (const VarRef& i : v->items)
      if (hasSym(i)) return true;
  return false;
}

PyObject* overridesFn(const char* name) {
  PyObject* m = PyImport_ImportModule("torch.overrides");
  if (!m) {
    PyErr_Clear();
    return nullptr;
  }
  PyObject* f = PyObject_GetAttrString(m, name);  // kept alive for the process
  Py_DECREF(m);
  if (!f) PyErr_Clear();
  return f;
}

}  // namespace

bool Translator::noFunctionMode(const char* what) {
  if (functionModes_.empty()) return true;
  fail(GB::UnmodeledContextManager, std::string(what) + " while a TorchFunctionMode entered in the frame is "
                                                        "on the stack (eager would call the mode)");
  return false;
}

VarRef Translator::modeStackCall(PyObject* o, std::vector<VarRef>& args,
                                 std::vector<std::pair<PyRef, VarRef>>& kwargs, bool& handled) {
  static PyObject* push = overridesFn("_push_mode");
  static PyObject* pop = overridesFn("_pop_mode");
  static PyObject* modeClass = overridesFn("TorchFunctionMode");
  handled = false;
  if (!o || (o != push && o != pop)) return nullptr;
  handled = true;
  if (!kwargs.empty() || args.size() != (o == push ? 1u : 0u)) {
    fail(GB::UnmodeledContextManager, nameOf(o) + " with other arguments");
    return nullptr;
  }
  VarRef popped;
  if (o == push) {
    const VarRef& m = args[0];
    if (!m->is(Var::Kind::UserObject) || !m->self || !m->self->obj || !modeClass ||
        !PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(m->self->obj.get()),
                          reinterpret_cast<PyTypeObject*>(modeClass))) {
      fail(GB::UnmodeledContextManager, "_push_mode of a mode not made in the frame");
      return nullptr;
    }
    functionModes_.push_back(m);
  } else {
    if (functionModes_.empty()) {
      // The entry's stack holds no user mode (Note [Mode stacks]); an infra
      // mode, or eager's error, is Python's.
      fail(GB::UnmodeledContextManager, "_pop_mode of a mode the frame did not push");
      return nullptr;
    }
    popped = functionModes_.back();
    functionModes_.pop_back();
  }
  if (!syncFunctionModes()) return nullptr;
  return popped ? popped : makeConst(PyRef::borrow(Py_None));
}

bool Translator::syncFunctionModes() {
  std::string code, detail;
  PyRef n = PyRef::steal(Py_BuildValue("(n)", static_cast<Py_ssize_t>(functionModes_.size())));
  if (host_.call("set_function_modes", n.get(), code, detail)) return true;
  fail(hostBreak(code, GB::UnmodeledContextManager), detail);
  return false;
}

VarRef Translator::modeDispatch(PyObject* fn, const std::vector<VarRef>& argsIn,
                                const std::vector<std::pair<PyRef, VarRef>>& kwargsIn) {
  // A symbolic number goes to the mode as the Python number it is (eager's
  // int): used as a plain number, a size that depends on a dynamic dim makes
  // the frame compile static (concrete).
  std::vector<VarRef> args = argsIn;
  std::vector<std::pair<PyRef, VarRef>> kwargs = kwargsIn;
  for (VarRef& a : args)
    if (a->is(Var::Kind::SymScalar) && (a = concrete(a), failed())) return nullptr;
  for (auto& kv : kwargs)
    if (kv.second->is(Var::Kind::SymScalar) && (kv.second = concrete(kv.second), failed())) return nullptr;
  bool sym = false;
  for (const VarRef& a : args) sym = sym || hasSym(a);
  for (const auto& kv : kwargs) sym = sym || hasSym(kv.second);
  if (sym) {
    fail(GB::UnmodeledContextManager, "a symbolic number passed to a torch call under a TorchFunctionMode");
    return nullptr;
  }
  PyRef tuple, kw;
  if (!callArgs(args, kwargs, [this](const VarRef& v) { return pythonValue(v); }, tuple, kw)) return nullptr;
  std::string code, detail;
  PyRef call = PyRef::steal(PyTuple_Pack(3, fn, tuple.get(), kw ? kw.get() : Py_None));
  PyRef r = host_.call("mode_probe", call.get(), code, detail);
  if (!r) {
    fail(hostBreak(code, GB::NoMetaKernel), detail);
    return nullptr;
  }
  // ("ran", result) or ("mode", func, types, args, kwargs)
  if (!PyTuple_Check(r.get()) || PyTuple_GET_SIZE(r.get()) < 2) {
    fail(GB::Internal, "mode_probe");
    return nullptr;
  }
  if (PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(r.get(), 0), "ran") == 0)
    return fromPython(PyTuple_GET_ITEM(r.get(), 1));
  PyObject* func = PyTuple_GET_ITEM(r.get(), 1);
  PyObject* types = PyTuple_GET_ITEM(r.get(), 2);
  PyObject* pargs = PyTuple_GET_ITEM(r.get(), 3);
  PyObject* pkw = PyTuple_GET_ITEM(r.get(), 4);
  // The translator's own value for an object it passed; else one made from it.
  auto back = [&](PyObject* o) -> VarRef {
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(tuple.get()); ++i)
      if (PyTuple_GET_ITEM(tuple.get(), i) == o) return args[static_cast<size_t>(i)];
    if (kw) {
      size_t j = 0;
      for (const auto& kv : kwargs) {
        if (PyDict_GetItem(kw.get(), kv.first.get()) == o) return kwargs[j].second;
        ++j;
      }
    }
    if (PyList_Check(o) || PyDict_Check(o)) {
      fail(GB::UnmodeledContextManager, "a TorchFunctionMode handed a container the frame did not pass");
      return nullptr;
    }
    return fromPython(o);
  };
  if (!PyTuple_Check(pargs)) {
    fail(GB::UnmodeledContextManager, "a TorchFunctionMode call whose args are not a tuple");
    return nullptr;
  }
  std::vector<VarRef> argItems;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(pargs); ++i) {
    VarRef v = back(PyTuple_GET_ITEM(pargs, i));
    if (!v) return nullptr;
    argItems.push_back(std::move(v));
  }
  VarRef kwVar;
  if (pkw == Py_None) {
    kwVar = makeConst(PyRef::borrow(Py_None));
  } else if (PyDict_Check(pkw)) {
    kwVar = makeVar(Var::Kind::Dict);
    PyObject *k, *v;
    Py_ssize_t pos = 0;
    while (PyDict_Next(pkw, &pos, &k, &v)) {
      VarRef item = back(v);
      if (!item) return nullptr;
      kwVar->keys.push_back(PyRef::borrow(k));
      kwVar->items.push_back(std::move(item));
    }
  } else {
    fail(GB::UnmodeledContextManager, "a TorchFunctionMode call whose kwargs are not a dict");
    return nullptr;
  }
  std::vector<VarRef> typeItems;
  for (Py_ssize_t i = 0; PyTuple_Check(types) && i < PyTuple_GET_SIZE(types); ++i)
    typeItems.push_back(makeVar(Var::Kind::Object, PyRef::borrow(PyTuple_GET_ITEM(types, i))));
  VarRef mode = functionModes_.back();
  static PyObject* tfName = PyUnicode_InternFromString("__torch_function__");
  PyObject* handler = _PyType_Lookup(reinterpret_cast<PyTypeObject*>(mode->self->obj.get()), tfName);
  if (!handler || !PyFunction_Check(handler)) {
    fail(GB::UnmodeledContextManager, std::string(reinterpret_cast<PyTypeObject*>(mode->self->obj.get())->tp_name) +
                                          ".__torch_function__ is not a plain Python function");
    return nullptr;
  }
  PyRef keep = PyRef::borrow(handler);
  std::vector<VarRef> all{mode, makeVar(Var::Kind::Object, PyRef::borrow(func)),
                          makeSeq(Var::Kind::Tuple, std::move(typeItems)), makeSeq(Var::Kind::Tuple, std::move(argItems)),
                          kwVar};
  // The mode is off the stack while its handler runs (eager's _pop_mode_temporarily).
  std::vector<VarRef> saved = functionModes_;
  functionModes_.pop_back();
  if (!syncFunctionModes()) return nullptr;
  VarRef out = inlineFunction(handler, std::move(all), {}, nullptr);
  functionModes_ = std::move(saved);
  if (!out) return nullptr;  // the failure stands; runTopFrame sends a frame with modes to Python
  return syncFunctionModes() ? out : nullptr;
}

}  // namespace xacc::capture::translate
