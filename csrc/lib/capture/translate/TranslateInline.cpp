// Inlining: a user function (or code object with its defaults and cells)
// called from the translated code runs in a new Frame with its arguments
// bound to slots, as CPython binds them; a generator call makes a lazy
// generator instead (Note [Lazy generators]).
#include <algorithm>
#include <cstring>

#include "PyTypes.h"
#include "Translator.h"

namespace xacc::capture::translate {

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
  // Note [Inlined globals]: an inlined function's globals are read through
  // `proxy.__globals__`, a weak proxy of the function held as an entry
  // constant, not through its globals dict held as one. Entries live in a
  // code object's co_extra, which the collector cannot traverse: a helper
  // defined next to the captured function would otherwise keep that
  // function's globals, hence the function and its code, alive forever (Note
  // [Generated code holds no globals] in CodegenImpl.h). `__globals__` is
  // read-only, so the source reads what the function reads; once the function
  // died the source fails to resolve and so does the guard. A function made
  // while tracing (MAKE_FUNCTION) reads its globals as the frame that made it
  // does (Var::globalSource).
  std::function<SourceRef(PyObject*, bool)> globalSource;
  if (auto it = localClassMethods_.find(fnObj); it != localClassMethods_.end()) {
    globalSource = it->second;  // Note [Local classes]: it reads the globals of the frame that made its class
  } else if (PyObject* proxy = PyWeakref_NewProxy(fnObj, nullptr)) {
    static PyObject* globalsName = PyUnicode_InternFromString("__globals__");
    const int pi = host_.constIndex(proxy);  // the host keeps it (and the same proxy while it lives)
    Py_DECREF(proxy);
    PyObject* builtins = PyDict_GetItemString(fn->func_globals, "__builtins__");
    if (builtins && PyModule_Check(builtins)) builtins = PyModule_GetDict(builtins);
    if (!builtins || !PyDict_Check(builtins)) builtins = PyEval_GetBuiltins();
    globalSource = [this, pi, builtins](PyObject* n, bool builtin) -> SourceRef {
      if (builtin) return Source::item(Source::root(Access::Const, host_.constIndex(builtins)), n);
      return Source::item(Source::attr(Source::root(Access::Const, pi), globalsName), n);
    };
  } else {
    PyErr_Clear();  // the globals dict is held, as for a code object's
  }
  return inlineCode(reinterpret_cast<PyCodeObject*>(fn->func_code), fn->func_globals, defaults, kwdefaults,
                    cells, std::move(args), std::move(kwargs), source, name, fn->func_closure,
                    std::move(globalSource));
}

bool Translator::inlineTooDeep(const InlineEntry& e) const {
  return inlineStack_.size() >= kMaxInlineDepth ||
         std::count(inlineStack_.begin(), inlineStack_.end(), e) >= kMaxSameCode;
}

VarRef Translator::inlineCode(PyCodeObject* code, PyObject* globals, const std::vector<VarRef>& defaults,
                              const std::vector<std::pair<PyRef, VarRef>>& kwdefaults,
                              const std::vector<VarRef>& cells, std::vector<VarRef> args,
                              std::vector<std::pair<PyRef, VarRef>> kwargs, const SourceRef& source,
                              const std::string& name, const void* closure,
                              std::function<SourceRef(PyObject* name, bool builtin)> globalSource) {
  (void)source;
  if (code->co_flags & (CO_COROUTINE | CO_ITERABLE_COROUTINE | CO_ASYNC_GENERATOR)) {
    fail(GB::GeneratorBreak, "coroutine " + name);
    return nullptr;
  }
  bool generator = code->co_flags & CO_GENERATOR;
  if (inlineTooDeep({code, closure})) {
    fail(GB::DepthLimit, "inlining " + name);
    return nullptr;
  }
  std::string error;
  const Bytecode* bc = Bytecode::of(code, error);
  if (!bc) {
    fail(GB::Internal, error);
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
    fail(GB::RaisesException, "too many arguments to " + name);
    return nullptr;
  }
  auto extra = makeVar(Var::Kind::Dict);
  for (auto& [k, v] : kwargs) {
    int slot = -1;
    for (int i = code->co_posonlyargcount; i < nargs + nkw; ++i)
      if (PyUnicode_Compare(PyTuple_GET_ITEM(names, i), k.get()) == 0) slot = i;
    if (slot >= 0) {
      if (slots[static_cast<size_t>(slot)]) {
        fail(GB::RaisesException, "duplicate argument to " + name);
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
    fail(GB::RaisesException, "unexpected keyword arguments to " + name);
    return nullptr;
  }
  const int nd = static_cast<int>(defaults.size());
  for (int i = 0; i < nargs; ++i) {
    if (slots[static_cast<size_t>(i)]) continue;
    int j = i - (nargs - nd);
    if (j < 0) {
      fail(GB::RaisesException, "missing argument to " + name);
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
      fail(GB::RaisesException, "missing keyword argument to " + name);
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
  f.closure = closure;
  f.line = code->co_firstlineno;
  // Note [Traced exceptions]: user code's exceptions reach the caller's handlers;
  // a polyfill's (xacc's own reference code) do not.
  PyObject* modName0 = PyDict_GetItemString(globals, "__name__");
  f.passesExceptions = !(modName0 && PyUnicode_Check(modName0) &&
                         std::string(PyUnicode_AsUTF8(modName0)).rfind("xacc.", 0) == 0);
  // Globals of torch's own modules are trusted (not guarded); user globals are
  // guarded through the globals dict held as an entry constant.
  PyObject* modName = PyDict_GetItemString(globals, "__name__");
  bool trusted = modName && PyUnicode_Check(modName) &&
                 std::string(PyUnicode_AsUTF8(modName)).rfind("torch", 0) == 0;
  if (!trusted && globalSource) {
    f.globalSource = std::move(globalSource);  // Note [Inlined globals]
  } else if (!trusted) {
    int gi = host_.constIndex(globals);
    f.globalSource = [this, gi, builtins](PyObject* n, bool builtin) -> SourceRef {
      int idx = builtin ? host_.constIndex(builtins) : gi;
      return Source::item(Source::root(Access::Const, idx), n);
    };
  }
  if (generator) {  // See Note [Lazy generators]
    f.lazy = true;
    // Its exceptions would go to whichever frame resumes it, not to `parent`.
    f.passesExceptions = false;
    auto it = makeVar(Var::Kind::Iter);
    it->iter = Var::IterOf::Generator;
    it->gen = std::make_shared<GenFrame>();
    it->gen->frame = std::move(frame);
    it->gen->name = name;
    return it;
  }
  inlineStack_.push_back({code, closure});
  VarRef result;
  bool ok = runFrame(f, result);
  inlineStack_.pop_back();
  if (!ok) return nullptr;
  return result;
}
}  // namespace xacc::capture::translate
