// The translator's driver: the top frame's set-up from a function and its
// arguments (Translator::run) and the instruction loop every frame runs
// (runFrame), plus the grad-mode switch the loop's regions use. The value
// model (wrap, constOf, truth, iteration) is in Translator.cpp.
#include "Translator.h"

#include "Codegen.h"
#include "PyTypes.h"

namespace xacc::capture::translate {

// -- driver ---------------------------------------------------------------------------

VarRef Translator::run(PyObject* func, PyObject* args) {
  if (!pyTypes()) {
    PyErr_Clear();
    fail(GB::Internal, "torch is not importable");
    return nullptr;
  }
  auto* fn = reinterpret_cast<PyFunctionObject*>(func);
  auto* code = reinterpret_cast<PyCodeObject*>(fn->func_code);
  std::string error;
  // Resume code (a copy of the whole original per break) is decoded for this
  // translation only: caching it would keep O(code) memory per break.
  if (resumeOrigin(code, nullptr)) resumeBc_ = decodeResume(code, error);
  const Bytecode* bc = resumeBc_ ? resumeBc_.get() : Bytecode::of(code, error);
  if (!bc) {
    fail(GB::Internal, error);
    return nullptr;
  }
  PyObject* builtins = PyDict_GetItemString(fn->func_globals, "__builtins__");
  if (builtins && PyModule_Check(builtins)) builtins = PyModule_GetDict(builtins);
  if (!builtins || !PyDict_Check(builtins)) builtins = PyEval_GetBuiltins();
  topFrame_ = std::make_unique<Frame>(*this, code, bc, fn->func_globals, builtins);
  Frame& f = *topFrame_;
  f.line = code->co_firstlineno;
  f.slots.resize(static_cast<size_t>(code->co_nlocalsplus));
  Py_ssize_t nargs = PyTuple_GET_SIZE(args);
  std::vector<std::string> names;
  for (Py_ssize_t i = 0; i < nargs; ++i) {
    names.push_back(pyText(PyTuple_GET_ITEM(code->co_localsplusnames, i)));
  }
  tree_.setLocalNames(names);
  PyObject* g = PyObject_CallNoArgs(pyTypes()->isGradEnabled);
  gradEnabled_ = g == Py_True;
  Py_XDECREF(g);
  if (!g) PyErr_Clear();
  top_ = &f;
  current_ = &f;
  if (!prefetchTensorArgs(args)) return nullptr;
  for (Py_ssize_t i = 0; i < nargs; ++i) {
    VarRef v = wrap(PyTuple_GET_ITEM(args, i), Source::root(Access::Local, i));
    if (!v) return nullptr;
    f.slots[static_cast<size_t>(i)] = std::move(v);
  }
  if (code->co_flags & CO_VARKEYWORDS) {
    // The `**kwargs` dict is made by CPython for this call and seen by no one
    // else: the frame may mutate it (`kwargs.pop(...)`). Its items keep their
    // sources (guards); the dict itself is rebuilt from them at a break.
    Py_ssize_t slot = code->co_argcount + code->co_kwonlyargcount + ((code->co_flags & CO_VARARGS) ? 1 : 0);
    if (slot < nargs) {
      VarRef& kw = f.slots[static_cast<size_t>(slot)];
      if (kw && kw->is(Var::Kind::Dict) && kw->source) {
        auto own = std::make_shared<Var>(*kw);
        own->source = nullptr;
        kw = std::move(own);
      }
    }
  }
  int nfree = code->co_nfreevars;
  for (int i = 0; i < nfree; ++i) {
    auto cell = makeVar(Var::Kind::Cell);
    PyObject* c = fn->func_closure ? PyTuple_GET_ITEM(fn->func_closure, i) : nullptr;
    PyObject* content = c ? PyCell_GET(c) : nullptr;
    if (content) {
      cell->self = wrap(content, Source::root(Access::Closure, i));
      if (!cell->self) return nullptr;
    }
    f.slots[static_cast<size_t>(code->co_nlocalsplus - nfree + i)] = std::move(cell);
  }
  f.globalSource = [](PyObject* name, bool builtin) -> SourceRef {
    // Builtins are read through the frame's builtins dict (Access::Global
    // falls back to builtins when the name is not a global).
    (void)builtin;
    return Source::root(Access::Global, 0, name);
  };
  VarRef result;
  if (!runTopFrame(f, result)) return nullptr;  // TranslateContext.cpp
  return result;
}

// Note [Tensor arguments in one call]: the top frame's tensor arguments
// (each tensor object once, in parameter order) become graph inputs through
// one Host::tensorInputs call, which runs Host.tensor_input for each in that
// order, as the argument loop below would, and stops at the first that fails.
// wrap then takes the meta of each argument (or its failure) where it would
// have called tensorInput: the guards, graph inputs and recorder bindings are
// those of one call per tensor, in the same order among the tensors. Node ids
// of other arguments come after those of the tensor arguments. A tensor that
// an earlier argument holds too (`f([x], x)`) is read there first: it is the
// later argument's input, and the item is guarded to be the same object.
bool Translator::prefetchTensorArgs(PyObject* args) {
  const PyTypes* T = pyTypes();
  std::vector<std::pair<PyObject*, SourceRef>> tensors;
  PyRef items = PyRef::steal(PyList_New(0));
  if (!items) return failPy(GB::Internal, "tensor arguments");
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(args); ++i) {
    PyObject* v = PyTuple_GET_ITEM(args, i);
    if (!PyObject_TypeCheck(v, reinterpret_cast<PyTypeObject*>(T->tensor))) continue;
    bool dup = false;
    for (const auto& t : tensors) dup = dup || t.first == v;
    if (dup) continue;
    SourceRef src = Source::root(Access::Local, static_cast<int>(i));
    PyRef item = PyRef::steal(Py_BuildValue("(OiO)", v, node(src), Py_True));
    if (!item || PyList_Append(items.get(), item.get()) < 0) return failPy(GB::Internal, "tensor arguments");
    tensors.emplace_back(v, std::move(src));
  }
  if (tensors.empty()) return true;
  std::string code, detail;
  PyRef metas = host_.tensorInputs(items.get(), code, detail);
  if (!metas || !PyList_Check(metas.get()) || PyList_GET_SIZE(metas.get()) > static_cast<Py_ssize_t>(tensors.size()))
    return fail(hostBreak(code, GB::UnsupportedType), metas ? "tensor_inputs: not a list" : detail);
  for (Py_ssize_t k = 0; k < PyList_GET_SIZE(metas.get()); ++k) {
    PyObject* m = PyList_GET_ITEM(metas.get(), k);
    Prefetched p;
    p.source = tensors[static_cast<size_t>(k)].second;
    if (PyObject_TypeCheck(m, reinterpret_cast<PyTypeObject*>(T->tensor))) {
      p.meta = PyRef::borrow(m);
    } else {  // the exception tensor_input raised (a GraphBreak: its code and detail)
      PyRef c = PyRef::steal(PyObject_GetAttrString(m, "code"));
      PyRef d = PyRef::steal(PyObject_GetAttrString(m, "detail"));
      PyErr_Clear();
      p.code = c && PyUnicode_Check(c.get()) ? PyUnicode_AsUTF8(c.get()) : "";
      p.detail = d && PyUnicode_Check(d.get()) ? PyUnicode_AsUTF8(d.get()) : "tensor_input failed";
    }
    prefetched_[tensors[static_cast<size_t>(k)].first] = std::move(p);
  }
  return true;
}

// A tensor read first through another source than its argument (an item of
// an earlier argument) is that argument's input; wrap guards the source it
// was read through to be the same object.
bool Translator::takePrefetched(PyObject* value, SourceRef& src, PyRef& meta, std::string& code,
                                std::string& detail) {
  auto pre = prefetched_.find(value);
  if (pre == prefetched_.end()) return false;
  src = pre->second.source;
  meta = std::move(pre->second.meta);
  code = std::move(pre->second.code);
  detail = std::move(pre->second.detail);
  prefetched_.erase(pre);
  return true;
}

bool Translator::runFrame(Frame& f, VarRef& result) {
  Frame* saved = current_;
  current_ = &f;
  const auto& instrs = f.bc->instrs();
  bool done = false;
  bool ok = true;
  while (ok && !done) {
    if (f.ip >= instrs.size()) {
      ok = fail(GB::Internal, "ran past the end of the code");
      break;
    }
    const Instr& ins = instrs[f.ip];
    f.line = ins.line > 0 ? ins.line : f.line;
    f.offset = ins.offset;
    if (&f == top_ && !opts_.breakAt.empty()) {
      auto it = opts_.breakAt.find(ins.offset);
      if (it != opts_.breakAt.end()) {
        failure_ = it->second;
        failure_.replayed = true;
        failure_.offset = ins.offset;
        ok = false;
        break;
      }
    }
    if (!draws_.empty() && !drawUsed(f, ins)) {  // Note [Global RNG draws at run time]
      ok = false;
      break;
    }
    if (++steps > kMaxSteps) {
      ok = fail(GB::DepthLimit, "too many instructions (unbounded loop?)");
      break;
    }
    f.ip++;
    host_.setLoc(f.code->co_filename, f.line);
    const bool gradBefore = gradEnabled_;
    ok = f.step(ins, done, result);
    if (!ok && failure_.missingAttr &&
        (f.bc->inTry(ins.offset) || !f.passesExceptions || gradEnabled_ != gradBefore))
      failure_.missingAttr = false;  // Note [AttributeError of a Python __getattribute__]
    if (!ok && failure_.exc) {
      // Note [Traced exceptions]: a handler of this frame may catch it; a
      // grad mode left changed by the failing instruction is not undone.
      if (gradEnabled_ != gradBefore) failure_.exc = nullptr;
      else if (catchException(f, ins)) ok = true;
    }
    if (!ok && !failed()) fail(GB::Internal, std::string("internal: ") + ins.name() + " failed without a reason");
  }
  current_ = saved;
  return ok;
}

bool Translator::setGrad(bool enabled) {
  std::string code, detail;
  if (!host_.setGrad(enabled, code, detail)) return fail(hostBreak(code, GB::UnmodeledContextManager), detail);
  gradEnabled_ = enabled;
  return true;
}

}  // namespace xacc::capture::translate
