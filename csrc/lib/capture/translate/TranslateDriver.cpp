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
    if (++steps > kMaxSteps) {
      ok = fail(GB::DepthLimit, "too many instructions (unbounded loop?)");
      break;
    }
    f.ip++;
    host_.setLoc(f.code->co_filename, f.line);
    const bool gradBefore = gradEnabled_;
    ok = f.step(ins, done, result);
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
