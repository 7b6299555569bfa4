// Note [Context managers]
// ~~~~~~~~~~~~~~~~~~~~~~~
// `with m:` on a translator value runs the protocol BEFORE_WITH runs: the
// special methods `__enter__` and `__exit__` are looked up on the type (not
// the instance), `__enter__` is called (inlined) and its result pushed above
// the bound `__exit__`, which the normal exit path calls with three Nones.
//
//  * `torch.no_grad()`/`enable_grad()` are GradMode values (TranslateOps.cpp);
//  * any UserObject (Note [User objects]) whose class defines both methods
//    in Python: a user's context manager class, and the reference classes of
//    polyfills_context.py (contextlib.nullcontext, suppress, contextmanager,
//    torch.set_grad_enabled).
//
// Only the path without an exception is traced: an exception raised inside
// the block is a break there, and a break inside a with block makes the frame
// run in Python (GB014, Codegen), so `__exit__` never sees an exception here.
//
// Objects of a polyfill class stand in for the library's own (a
// `_NullContext` for a `contextlib.nullcontext`): their type is never
// answered (typeOf) and they are never rebuilt after a break or at a return
// (Codegen), so the stand-in is never seen. Their attributes are named
// `_xacc_*`; reading the library class's own attribute names finds nothing
// and breaks.
//
// Note [Entry-guarded modes]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~
// Modes whose state a graph cannot set are modelled from the state the entry
// is guarded on (polyfills_context.py holds the reference classes):
//
//  * torch.autocast: every entry is guarded with autocast off everywhere
//    (convert.callback runs frames under autocast in Python). A manager that
//    is disabled, keeps the dtype and the cache flag, and would construct
//    without raising, sets on entry exactly the state already there and
//    restores it on exit; the cast cache it may clear is empty while autocast
//    is off. It enters and leaves with nothing recorded. Any other autocast
//    casts, or changes what get_autocast_dtype answers: GB023.
//  * torch.inference_mode(mode) is c10::InferenceMode: the grad mode becomes
//    `not mode` (a grad-mode region, as no_grad/enable_grad) and the
//    inference mode `mode`. Modelled only from an entry outside inference
//    mode, which the entry then guards (GuardTree::setInferenceMode; Host
//    set_inference). Inside a region with mode True, ops run on the meta
//    tensors under inference mode, so a result is an inference tensor exactly
//    when eager's is, and what eager refuses on one (an in-place update or a
//    save for backward outside the mode, ...) fails on the meta tensor too: a
//    break, then Python raises eager's error. The graph's executor makes
//    ordinary tensors, so an inference tensor never leaves the graph: as an
//    output (a return, a value live at a break, a replayed write) it is a
//    GB023 break instead (Host.value_of). inference_mode(False) outside
//    inference mode only enables grad.
#include "PyTypes.h"
#include "Translator.h"

namespace xacc::capture::translate {

bool isPolyfillClass(PyObject* cls) {
  if (!cls || !PyType_Check(cls)) return false;
  PyObject* mod = PyObject_GetAttrString(cls, "__module__");
  if (!mod) {
    PyErr_Clear();
    return false;
  }
  bool r = PyUnicode_Check(mod) && PyUnicode_AsUTF8(mod) &&
           std::string(PyUnicode_AsUTF8(mod)).rfind("xacc._src.capture.polyfills", 0) == 0;
  Py_DECREF(mod);
  return r;
}

bool isPolyfillGlobals(PyObject* globals) {
  if (!globals || !PyDict_Check(globals)) return false;
  PyObject* name = PyDict_GetItemString(globals, "__name__");  // borrowed
  const char* n = name && PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : nullptr;
  if (!n) {
    PyErr_Clear();
    return false;
  }
  return std::string(n).rfind("xacc._src.capture.polyfills", 0) == 0;
}

bool Translator::enterContext(Frame& f, const VarRef& mgr, VarRef& exitOut, VarRef& enteredOut) {
  if (!mgr->is(Var::Kind::UserObject) || !mgr->self || !mgr->self->obj)
    return fail(GB::UnmodeledContextManager, "with statement on a value that is not a context manager the translator models");
  static PyObject* enterName = PyUnicode_InternFromString("__enter__");
  static PyObject* exitName = PyUnicode_InternFromString("__exit__");
  auto* tp = reinterpret_cast<PyTypeObject*>(mgr->self->obj.get());
  PyObject* enter = _PyType_Lookup(tp, enterName);  // borrowed
  PyObject* exit = _PyType_Lookup(tp, exitName);
  if (!enter || !exit || !PyFunction_Check(enter) || !PyFunction_Check(exit))
    return fail(GB::UnmodeledContextManager, std::string("with statement: ") + tp->tp_name +
                             " has no __enter__/__exit__ written in Python");
  auto bound = [&](PyObject* fn) {
    auto m = makeVar(Var::Kind::BoundMethod, PyRef::borrow(fn));
    m->self = mgr;
    return m;
  };
  exitOut = bound(exit);
  enteredOut = call(f, bound(enter), {}, {});
  return enteredOut != nullptr;
}

bool Translator::runTopFrame(Frame& f, VarRef& result) {
  const bool entryGrad = gradEnabled_;
  bool ran = runFrame(f, result);
  if (!functionModes_.empty()) {
    // A TorchFunctionMode the frame pushed is still on the stack at its
    // return or break: the code after it would run without it (Note
    // [Function modes in the frame]).
    if (ran) fail(GB::UnmodeledContextManager, "the frame returns with a TorchFunctionMode it entered still on the stack");
    failWhole();
    return false;
  }
  if (gradEnabled_ == entryGrad && !inferenceEnabled_) return ran;
  // The grad mode changed by the traced code (torch.set_grad_enabled(m)
  // outside a with) is a region of the graph, not a change of the global
  // mode: a return or a break with it still changed leaves the whole frame
  // to Python.
  if (ran) fail(GB::UnmodeledContextManager, "the frame returns with the grad or inference mode changed");
  failWhole();
  return false;
}

bool Translator::setInference(bool enabled) {
  std::string code, detail;
  PyRef args = PyRef::steal(PyTuple_Pack(1, enabled ? Py_True : Py_False));
  escapeChecks_ = true;  // Note [Escape checks] in Translator.h
  if (!host_.call("set_inference", args.get(), code, detail))
    return fail(hostBreak(code, GB::UnmodeledContextManager), detail);
  inferenceEnabled_ = enabled;
  return true;
}

VarRef Translator::gradModeDecorator(const VarRef& mode, std::vector<VarRef>& args,
                                     std::vector<std::pair<PyRef, VarRef>>& kwargs) {
  // torch's context_decorator wraps a plain function in one that enters a
  // fresh copy of the mode per call; generator functions and classes get
  // other wrappers, which are left to Python.
  const int kLazy = CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR | CO_ITERABLE_COROUTINE;
  PyObject* code = nullptr;
  if (args.size() == 1 && kwargs.empty()) {
    const VarRef& fn = args[0];
    if (fn->is(Var::Kind::Function)) code = fn->obj.get();
    else if (fn->is(Var::Kind::Object) && PyFunction_Check(fn->obj.get())) code = PyFunction_GET_CODE(fn->obj.get());
  }
  PyObject* entry = pyTypes()->polyfills ? PyDict_GetItemString(pyTypes()->polyfills, "grad_mode_decorator") : nullptr;
  if (!code || (reinterpret_cast<PyCodeObject*>(code)->co_flags & kLazy) || !entry) {
    fail(GB::UntraceableCall, "no_grad/enable_grad called on something that is not a plain function");
    return nullptr;
  }
  std::vector<VarRef> all{makeConst(PyRef::borrow(mode->pos ? Py_True : Py_False)), args[0]};
  return inlineFunction(PyTuple_GET_ITEM(entry, 0), std::move(all), {}, nullptr);
}

VarRef Translator::polyfillQuery(PyObject* query, const std::vector<VarRef>& args,
                                 const std::vector<std::pair<PyRef, VarRef>>& kwargs) {
  auto is = [&](const char* q, size_t n) {
    return PyUnicode_CompareWithASCIIString(query, q) == 0 && args.size() == n && kwargs.empty();
  };
  if (is("made_while_tracing", 1)) {
    // A function the traced code defined: its attributes are never answered
    // (GB010) and it is never rebuilt (GB011), so what is stored on it is unseen.
    bool made = args[0]->is(Var::Kind::Function);
    return makeConst(PyRef::borrow(made ? Py_True : Py_False));
  }
  if (is("plain_mapping", 1)) {
    // Note [Modelled library objects]: whether the collections models read the
    // argument as a mapping (keys() and []) or as an iterable. A plain dict and
    // the dict models are mappings; lists, tuples, iterators, sets, views,
    // tensors and constant strings/ranges are not; anything else (a mapping
    // class of the user's, a dict read from outside) breaks.
    using K = Var::Kind;
    const VarRef& v = args[0];
    auto answer = [](bool b) { return makeConst(PyRef::borrow(b ? Py_True : Py_False)); };
    if (v->is(K::Dict) && !v->obj) return answer(true);
    if (v->is(K::UserObject)) {
      if (PyObject* lib = modelledType(v->self->obj.get()))
        return answer(PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(lib), &PyDict_Type) != 0);
    } else if (v->is(K::List) || v->is(K::Tuple) || v->is(K::Iter) || v->is(K::DictView) || v->is(K::Tensor) ||
               (v->is(K::Set) && !v->source)) {
      return answer(false);
    } else if (v->is(K::Const)) {
      PyObject* o = v->obj.get();
      if (PyUnicode_Check(o) || PyTuple_CheckExact(o) || PyRange_Check(o) || PyBytes_Check(o) || PyFrozenSet_Check(o))
        return answer(false);
    }
    fail(GB::UnsupportedType, "a collections container built from a value of a type its model does not read");
    return nullptr;
  }
  if (is("grad_enabled", 0)) return makeConst(PyRef::borrow(gradEnabled() ? Py_True : Py_False));
  if (is("set_grad", 1)) {
    // torch._C._set_grad_enabled(mode) on a constant bool; the frame must
    // leave the mode as it found it (checked where the frame returns).
    if (!isConst(args[0]) || !PyBool_Check(args[0]->obj.get())) {
      fail(GB::UntraceableCall, "torch.set_grad_enabled on a value that is not a constant bool");
      return nullptr;
    }
    if (!setGrad(args[0]->obj.get() == Py_True)) return nullptr;
    return makeConst(PyRef::borrow(Py_None));
  }
  if (is("unmodeled_mode", 1) && isConst(args[0]) && PyUnicode_Check(args[0]->obj.get())) {
    fail(GB::UnmodeledContextManager, PyUnicode_AsUTF8(args[0]->obj.get()));
    return nullptr;
  }
  if (is("unmodelled_call", 1) && isConst(args[0]) && PyUnicode_Check(args[0]->obj.get())) {
    // A reference met a case it does not model (polyfills_hops.py): the
    // original runs in Python, where the break puts the call.
    fail(GB::UntraceableCall, PyUnicode_AsUTF8(args[0]->obj.get()));
    return nullptr;
  }
  if (is("inference_enabled", 0)) return makeConst(PyRef::borrow(inferenceEnabled_ ? Py_True : Py_False));
  if (is("set_inference", 1)) {
    if (!isConst(args[0]) || !PyBool_Check(args[0]->obj.get())) {
      fail(GB::UnmodeledContextManager, "torch.inference_mode on a value that is not a constant bool");
      return nullptr;
    }
    if (!setInference(args[0]->obj.get() == Py_True)) return nullptr;
    return makeConst(PyRef::borrow(Py_None));
  }
  fail(GB::Internal, std::string("unknown polyfill query ") + PyUnicode_AsUTF8(query));
  return nullptr;
}

}  // namespace xacc::capture::translate
