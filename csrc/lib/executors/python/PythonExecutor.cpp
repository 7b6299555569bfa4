// The `python` executor: embedded CPython for Camel. It provides the standard
// module `python` (spec 15.18: PyObject, py_import, py_attr, py_call,
// py_eval, py_exec, py_run, py_print/py_println, py_wrap, py_unwrap) and the
// `python://` scheme of `outer` functors:
//
//     outer func mean(xs: float[]): float = "python://stats_helpers.py::mean"
//     outer func sqrt(x: float): float = "python://math::sqrt"
//
// The target is a `.py` file (relative to the declaring .cml file) or a
// module name; the symbol a (dotted) attribute of it. Arguments are converted
// from their declared Camel types and the result to the declared result type
// (PyValues.h); Camel function values become Python callables, so Python can
// call back into Camel.
//
// Inside a Python process (xacc._C registers this executor statically) it uses
// the running interpreter. In the `camel` executable the plugin links libpython
// and initialises it on load: no signal handlers, the active VIRTUAL_ENV's
// site-packages added, and the GIL released so that any runtime thread can take
// it. The directory of the Camel file that calls into Python (the main file's
// for the main module) is prepended to sys.path before the call, so `py_import`
// and `python://` find modules next to the program.
//
// Every builtin is effectful and never folded: Python code runs at run time, in
// program order. A Python exception becomes a Camel runtime error (E3020) at
// the Camel call, with the exception type, message and innermost Python frame.
// Camel's buffered standard output is flushed before Python runs and Python's
// after, so the two streams interleave in program order.
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>

#include "PyValues.h"
#include "StdlibImpl.h"
#include "xacc/camel/Compiler.h"
#include "xacc/camel/Executor.h"

namespace xacc::executors::python {

namespace fs = std::filesystem;
using camel::RuntimeDiag;
using camel::stdlib::Datums;
using camel::stdlib::Def;
using camel::stdlib::Types;
using ir::Datum;
using ir::DKind;
using ir::Interpreter;
using ir::Node;
using ir::Type;
using ir::TypeKind;

namespace {

// ---- interpreter state -------------------------------------------------------------

/// The namespace py_eval/py_exec share (created on first use, GIL held).
PyObject* sharedGlobals() {
  static PyObject* globals = nullptr;
  if (!globals) {
    globals = PyDict_New();
    PyDict_SetItemString(globals, "__builtins__", PyEval_GetBuiltins());
    PyDict_SetItemString(globals, "__name__", PyUnicode_FromString("__camel__"));
  }
  return globals;
}

void flushPythonStdout() {
  for (const char* name : {"stdout", "stderr"}) {
    PyObject* f = PySys_GetObject(name);  // borrowed
    if (f && f != Py_None) {
      PyRef r = PyRef::steal(PyObject_CallMethod(f, "flush", nullptr));
      if (!r) PyErr_Clear();
    }
  }
}

void flushAtExit() {
  if (!Py_IsInitialized() || pyFinalizing()) return;
  Gil gil;
  flushPythonStdout();
}

/// Brackets Python code run for Camel: the GIL, output ordering, sys.path.
class PythonCall {
public:
  explicit PythonCall(const Node& n) {
    std::fflush(stdout);
    if (n.loc().file) {
      std::error_code ec;
      fs::path dir = fs::absolute(fs::path(*n.loc().file), ec).parent_path();
      if (!ec) addToSysPath(dir.string());
    }
  }
  ~PythonCall() { flushPythonStdout(); }

private:
  Gil gil_;
};

bool pyFail(Interpreter& I, const Node& n, std::string_view what, const std::string& message) {
  return camel::runtimeFail(I, n, RuntimeDiag::PythonError, {what, message});
}

/// The object a py_call/py_attr target names: a PyObject, or a string that is
/// a builtin ("len"), a name defined by py_exec, or a dotted path
/// ("math.sqrt", "pkg.mod.func"; the longest importable prefix is imported).
PyRef resolveName(const std::string& name, std::string& error) {
  if (name.empty()) {
    error = "empty name";
    return {};
  }
  size_t dot = name.find('.');
  std::string head = name.substr(0, dot);
  PyRef obj;
  if (dot == std::string::npos) {
    if (PyObject* g = PyDict_GetItemString(sharedGlobals(), name.c_str())) return PyRef::borrow(g);
    if (PyObject* b = PyDict_GetItemString(PyEval_GetBuiltins(), name.c_str())) return PyRef::borrow(b);
    obj = PyRef::steal(PyImport_ImportModule(name.c_str()));
    if (!obj) error = takePythonError();
    return obj;
  }
  // Longest importable module prefix, then attributes.
  std::vector<std::string> parts;
  for (size_t s = 0;;) {
    size_t e = name.find('.', s);
    parts.push_back(name.substr(s, e == std::string::npos ? std::string::npos : e - s));
    if (e == std::string::npos) break;
    s = e + 1;
  }
  size_t used = 0;
  if (PyObject* g = PyDict_GetItemString(sharedGlobals(), parts[0].c_str())) {
    obj = PyRef::borrow(g);
    used = 1;
  } else {
    std::string lastError;
    for (size_t k = parts.size(); k >= 1; --k) {
      std::string mod;
      for (size_t i = 0; i < k; ++i) mod += (i ? "." : "") + parts[i];
      obj = PyRef::steal(PyImport_ImportModule(mod.c_str()));
      if (obj) {
        used = k;
        break;
      }
      std::string err = takePythonError();
      if (lastError.empty()) lastError = err;
    }
    if (!obj) {
      error = lastError;
      return {};
    }
  }
  for (size_t i = used; i < parts.size(); ++i) {
    obj = PyRef::steal(PyObject_GetAttrString(obj.get(), parts[i].c_str()));
    if (!obj) {
      error = takePythonError();
      return {};
    }
  }
  return obj;
}

/// A Camel operand as a Python object: PyObjects as they are, other values
/// converted (py_call's arguments may be plain Camel values).
PyRef operandObject(const Datum& d, const CallbackScope* scope, std::string& error) {
  return PyRef::steal(toPython(d, Type(), scope, error));
}

bool checkTarget(Type t, std::string_view what, const Types& a, size_t i, std::string& err) {
  bool ok = t.kind() == TypeKind::Str || t.kind() == TypeKind::PyObj || t.isAny();
  return camel::stdlib::want(ok, a, i, what, "a string or a PyObject", err);
}

Def pyDef(const std::string& name, int params, std::string signature, std::string summary) {
  return camel::stdlib::effectDef("python", name, params, std::move(signature), std::move(summary));
}

camel::stdlib::InferRule gives(Type result, std::vector<TypeKind> kinds = {},
                               std::vector<std::string> what = {}) {
  return [result, kinds, what](const Types& a, Types& r, std::string& err) {
    for (size_t i = 0; i < kinds.size() && i < a.size(); ++i) {
      bool ok = a[i].isAny() || a[i].kind() == kinds[i];
      std::string expected = kinds[i] == TypeKind::Str ? "a string" : "a PyObject";
      if (!camel::stdlib::want(ok, a, i, what[i], expected, err)) return false;
    }
    r = {result};
    return true;
  };
}

/// Reads operand `i` as a string (kind checked at run time too).
bool strOperand(Interpreter& I, const Node& n, std::string_view fn, const Datum& d, std::string& out) {
  const std::string* s = nullptr;
  if (!camel::stdlib::getStr(I, n, fn, d, s)) return false;
  out = *s;
  return true;
}

/// Calls `callable` with positional `args` and keyword `kwargs` (may be null).
bool callObject(Interpreter& I, const Node& n, std::string_view fn, PyObject* callable, PyObject* args,
                PyObject* kwargs, Datums& r) {
  PyRef res = PyRef::steal(PyObject_Call(callable, args, kwargs));
  if (!res) return pyFail(I, n, fn, takePythonError());
  r.push_back(wrapObject(res.get()));
  return true;
}

void registerPythonModule() {
  camel::defineModuleType({"python", "PyObject",
                           [](const std::vector<Type>& args, Type& out, std::string& error) {
                             if (args.size() > 1) {
                               error = "PyObject takes one type argument (the Camel type it converts to)";
                               return false;
                             }
                             out = args.empty() ? Type::pyobj() : Type::pyobj(args[0]);
                             return true;
                           }});

  Def imp = pyDef("py_import", 1, "(name: string): PyObject", "imports a Python module");
  imp.infer = gives(Type::pyobj(), {TypeKind::Str}, {"the module name"});
  imp.fn = [](Interpreter& I, const Node& n, Datums& a, Datums& r) {
    std::string name;
    if (!strOperand(I, n, "python::py_import", a[0], name)) return false;
    PythonCall call(n);
    PyRef m = PyRef::steal(PyImport_ImportModule(name.c_str()));
    if (!m) return pyFail(I, n, "py_import(\"" + name + "\")", takePythonError());
    r.push_back(wrapObject(m.get()));
    return true;
  };
  camel::stdlib::define(std::move(imp));

  Def attr = pyDef("py_attr", 2, "(obj: PyObject, name: string): PyObject",
                   "attribute lookup; a dotted name walks a chain");
  attr.infer = gives(Type::pyobj(), {TypeKind::PyObj, TypeKind::Str}, {"the object", "the attribute name"});
  attr.fn = [](Interpreter& I, const Node& n, Datums& a, Datums& r) {
    std::string name;
    if (!strOperand(I, n, "python::py_attr", a[1], name)) return false;
    PythonCall call(n);
    PyObject* base = objectOf(a[0]);
    if (!base) return camel::stdlib::kindFail(I, n, "py_attr", "a PyObject", a[0]);
    PyRef obj = PyRef::borrow(base);
    size_t s = 0;
    while (true) {
      size_t e = name.find('.', s);
      std::string part = name.substr(s, e == std::string::npos ? std::string::npos : e - s);
      obj = PyRef::steal(PyObject_GetAttrString(obj.get(), part.c_str()));
      if (!obj) return pyFail(I, n, "py_attr(\"" + name + "\")", takePythonError());
      if (e == std::string::npos) break;
      s = e + 1;
    }
    r.push_back(wrapObject(obj.get()));
    return true;
  };
  camel::stdlib::define(std::move(attr));

  // py_call(fn, args…) and py_call(fn, args: tuple | array, kwargs: struct): the
  // second form is taken when there are exactly two operands after `fn`, a
  // tuple or array and a struct.
  Def callDef = pyDef("py_call", camel::kVariadic, "(fn: string | PyObject, args: PyObject…): PyObject",
                      "calls a Python callable (a builtin, a dotted path or a PyObject)");
  callDef.moreForms = {{0, 3, "(fn: string | PyObject, args: (PyObject, …) | PyObject[], kwargs: { name: PyObject, … }): PyObject"}};
  callDef.infer = [](const Types& a, Types& r, std::string& err) {
    if (a.empty()) {
      err = "py_call needs the function to call";
      return false;
    }
    if (!checkTarget(a[0], "the function", a, 0, err)) return false;
    r = {Type::pyobj()};
    return true;
  };
  callDef.fn = [](Interpreter& I, const Node& n, Datums& a, Datums& r) {
    PythonCall call(n);
    CallbackScope scope;
    scope.interp = &I;
    scope.site = &n;
    std::string err;
    PyRef fn;
    std::string label = "py_call";
    if (a[0].kind() == DKind::Str) {
      label = "py_call(\"" + a[0].asStr() + "\")";
      fn = resolveName(a[0].asStr(), err);
      if (!fn) return pyFail(I, n, label, err);
    } else if (PyObject* o = objectOf(a[0])) {
      fn = PyRef::borrow(o);
    } else {
      return camel::stdlib::kindFail(I, n, "py_call", "a string or a PyObject", a[0]);
    }
    bool kwForm = a.size() == 3 && (a[1].kind() == DKind::Tuple || a[1].kind() == DKind::List) &&
                  a[2].kind() == DKind::Struct;
    PyRef args, kwargs;
    if (kwForm) {
      const auto& items = a[1].kind() == DKind::Tuple ? a[1].tupleItems() : a[1].listItems();
      args = PyRef::steal(PyTuple_New(Py_ssize_t(items.size())));
      for (size_t i = 0; i < items.size(); ++i) {
        PyRef o = operandObject(items[i], &scope, err);
        if (!o) return pyFail(I, n, label, "argument " + std::to_string(i + 1) + ": " + err);
        PyTuple_SET_ITEM(args.get(), Py_ssize_t(i), o.release());
      }
      kwargs = PyRef::steal(PyDict_New());
      for (size_t i = 0; i < a[2].structNames().size(); ++i) {
        PyRef o = operandObject(a[2].structFields()[i], &scope, err);
        if (!o) return pyFail(I, n, label, "keyword " + a[2].structNames()[i] + ": " + err);
        PyDict_SetItemString(kwargs.get(), a[2].structNames()[i].c_str(), o.get());
      }
    } else {
      args = PyRef::steal(PyTuple_New(Py_ssize_t(a.size() - 1)));
      for (size_t i = 1; i < a.size(); ++i) {
        PyRef o = operandObject(a[i], &scope, err);
        if (!o) return pyFail(I, n, label, "argument " + std::to_string(i) + ": " + err);
        PyTuple_SET_ITEM(args.get(), Py_ssize_t(i - 1), o.release());
      }
    }
    return callObject(I, n, label, fn.get(), args.get(), kwargs.get(), r);
  };
  camel::stdlib::define(std::move(callDef));

  auto runCode = [](int start, const char* fnName) {
    return [start, fnName](Interpreter& I, const Node& n, Datums& a, Datums& r) {
      std::string code;
      if (!strOperand(I, n, fnName, a[0], code)) return false;
      PythonCall call(n);
      PyRef res = PyRef::steal(PyRun_String(code.c_str(), start, sharedGlobals(), sharedGlobals()));
      if (!res) return pyFail(I, n, fnName, takePythonError());
      r.push_back(wrapObject(start == Py_eval_input ? res.get() : Py_None));
      return true;
    };
  };
  Def eval = pyDef("py_eval", 1, "(expr: string): PyObject", "evaluates a Python expression");
  eval.infer = gives(Type::pyobj(), {TypeKind::Str}, {"the expression"});
  eval.fn = runCode(Py_eval_input, "py_eval");
  camel::stdlib::define(std::move(eval));

  Def exec = pyDef("py_exec", 1, "(code: string): PyObject",
                   "executes Python statements in the shared global namespace; returns None");
  exec.infer = gives(Type::pyobj(), {TypeKind::Str}, {"the code"});
  exec.fn = runCode(Py_file_input, "py_exec");
  camel::stdlib::define(std::move(exec));

  Def run = pyDef("py_run", 1, "(path: string): PyObject",
                  "runs a Python script file (relative to the calling .cml file if not found as given)");
  run.infer = gives(Type::pyobj(), {TypeKind::Str}, {"the script path"});
  run.fn = [](Interpreter& I, const Node& n, Datums& a, Datums& r) {
    std::string path;
    if (!strOperand(I, n, "python::py_run", a[0], path)) return false;
    std::error_code ec;
    if (!fs::exists(path, ec) && n.loc().file) {
      fs::path alt = fs::path(*n.loc().file).parent_path() / path;
      if (fs::exists(alt, ec)) path = alt.string();
    }
    PythonCall call(n);
    PyRef runpy = PyRef::steal(PyImport_ImportModule("runpy"));
    // run_path(path, init_globals=None, run_name=None): the name goes by keyword.
    PyRef res;
    if (runpy) {
      PyRef fn = PyRef::steal(PyObject_GetAttrString(runpy.get(), "run_path"));
      PyRef args = PyRef::steal(Py_BuildValue("(s)", path.c_str()));
      PyRef kwargs = PyRef::steal(Py_BuildValue("{s:s}", "run_name", "__main__"));
      if (fn && args && kwargs) res = PyRef::steal(PyObject_Call(fn.get(), args.get(), kwargs.get()));
    }
    if (!res) return pyFail(I, n, "py_run(\"" + path + "\")", takePythonError());
    r.push_back(wrapObject(Py_None));
    return true;
  };
  camel::stdlib::define(std::move(run));

  for (bool newline : {false, true}) {
    std::string name = newline ? "py_println" : "py_print";
    Def p = pyDef(name, camel::kVariadic, "(objs: PyObject…): void",
                  newline ? "Python print" : "Python print without a newline");
    p.infer = [](const Types&, Types& r, std::string&) {
      r = {Type::null()};
      return true;
    };
    p.fn = [newline, name](Interpreter& I, const Node& n, Datums& a, Datums& r) {
      PythonCall call(n);
      std::string err;
      PyRef args = PyRef::steal(PyTuple_New(Py_ssize_t(a.size())));
      for (size_t i = 0; i < a.size(); ++i) {
        PyRef o = operandObject(a[i], nullptr, err);
        if (!o) return pyFail(I, n, name, err);
        PyTuple_SET_ITEM(args.get(), Py_ssize_t(i), o.release());
      }
      PyRef kwargs = PyRef::steal(PyDict_New());
      if (!newline) PyDict_SetItemString(kwargs.get(), "end", PyRef::steal(PyUnicode_FromString("")).get());
      PyObject* print = PyDict_GetItemString(PyEval_GetBuiltins(), "print");
      PyRef res = PyRef::steal(PyObject_Call(print, args.get(), kwargs.get()));
      if (!res) return pyFail(I, n, name, takePythonError());
      r.push_back(Datum());
      return true;
    };
    camel::stdlib::define(std::move(p));
  }

  Def wrap = pyDef("py_wrap", 1, "(x: T): PyObject<T>",
                   "Camel -> Python: int, float, bool, string, arrays, tuples, structs, nested");
  wrap.infer = [](const Types& a, Types& r, std::string&) {
    r = {a[0].kind() == TypeKind::PyObj ? a[0] : Type::pyobj(a[0])};
    return true;
  };
  wrap.fn = [](Interpreter& I, const Node& n, Datums& a, Datums& r) {
    Gil gil;
    std::string err;
    PyRef o = PyRef::steal(toPython(a[0], Type(), nullptr, err));
    if (!o) return pyFail(I, n, "py_wrap", err);
    r.push_back(wrapObject(o.get()));
    return true;
  };
  camel::stdlib::define(std::move(wrap));

  Def unwrap = pyDef("py_unwrap", 1, "(o: PyObject<T>): T",
                     "Python -> Camel; the target type comes from the cast (`o as PyObject<int>`)");
  unwrap.infer = [](const Types& a, Types& r, std::string& err) {
    if (!camel::stdlib::want(a[0].kind() == TypeKind::PyObj || a[0].isAny(), a, 0, "the argument",
                             "a PyObject", err))
      return false;
    Type target = a[0].kind() == TypeKind::PyObj ? a[0].elementType() : Type();
    r = {target ? target : Type::any()};
    return true;
  };
  unwrap.fn = [](Interpreter& I, const Node& n, Datums& a, Datums& r) {
    PyObject* o = objectOf(a[0]);
    if (!o) return camel::stdlib::kindFail(I, n, "py_unwrap", "a PyObject", a[0]);
    Type target = n.numResults() ? n.result(n.numResults() - 1)->type() : Type();
    Gil gil;
    Datum out;
    std::string err;
    if (!fromPython(o, target, out, err)) return pyFail(I, n, "py_unwrap", err);
    r.push_back(std::move(out));
    return true;
  };
  camel::stdlib::define(std::move(unwrap));
}

// ---- python:// outer functors -------------------------------------------------------

/// Loads the target of a python:// functor: a .py file (by path) or a module name.
PyRef loadTarget(const std::string& target, const std::string& baseDir, std::string& error) {
  bool isFile = target.size() > 3 && target.compare(target.size() - 3, 3, ".py") == 0;
  if (!isFile) {
    addToSysPath(baseDir);
    PyRef m = PyRef::steal(PyImport_ImportModule(target.c_str()));
    if (!m) error = takePythonError();
    return m;
  }
  fs::path p = fs::path(target).is_absolute() ? fs::path(target) : fs::path(baseDir) / target;
  std::error_code ec;
  p = fs::weakly_canonical(p, ec);
  addToSysPath(p.parent_path().string());
  std::string stem = p.stem().string();
  // The file's module under its own name, so Python code importing it (and
  // py_import) sees the same module object.
  PyObject* modules = PyImport_GetModuleDict();  // borrowed
  if (PyObject* m = PyDict_GetItemString(modules, stem.c_str())) {
    PyRef file = PyRef::steal(PyObject_GetAttrString(m, "__file__"));
    PyErr_Clear();
    const char* f = file && PyUnicode_Check(file.get()) ? PyUnicode_AsUTF8(file.get()) : nullptr;
    std::error_code ec2;
    if (f && fs::weakly_canonical(fs::path(f), ec2) == p) return PyRef::borrow(m);
  }
  PyRef util = PyRef::steal(PyImport_ImportModule("importlib.util"));
  PyRef spec = util ? PyRef::steal(PyObject_CallMethod(util.get(), "spec_from_file_location", "ss",
                                                       stem.c_str(), p.c_str()))
                    : PyRef();
  if (!spec || spec.get() == Py_None) {
    if (!PyErr_Occurred()) error = "cannot load '" + p.string() + "'";
    else error = takePythonError();
    return {};
  }
  PyRef mod = PyRef::steal(PyObject_CallMethod(util.get(), "module_from_spec", "O", spec.get()));
  if (!mod) {
    error = takePythonError();
    return {};
  }
  PyDict_SetItemString(modules, stem.c_str(), mod.get());
  PyRef loader = PyRef::steal(PyObject_GetAttrString(spec.get(), "loader"));
  PyRef done = loader ? PyRef::steal(PyObject_CallMethod(loader.get(), "exec_module", "O", mod.get()))
                      : PyRef();
  if (!done) {
    error = takePythonError();
    PyDict_DelItemString(modules, stem.c_str());
    PyErr_Clear();
    return {};
  }
  return mod;
}

bool resolvePythonFunctor(const camel::OuterFunctor& f, ir::Builtin& out, std::string& error) {
  if (f.target.empty() || f.symbol.empty()) {
    error = "a python functor is 'python://<file.py or module>::<function>', got '" + f.uri + "'";
    return false;
  }
  bool isFile = f.target.size() > 3 && f.target.compare(f.target.size() - 3, 3, ".py") == 0;
  if (isFile) {
    fs::path p = fs::path(f.target).is_absolute() ? fs::path(f.target) : fs::path(f.baseDir) / f.target;
    std::error_code ec;
    if (!fs::is_regular_file(p, ec)) {
      error = "no Python file '" + p.string() + "'";
      return false;
    }
  }
  struct State {
    std::mutex mu;
    PyObject* fn = nullptr;  // resolved on first call, kept for the process
  };
  auto state = std::make_shared<State>();
  camel::OuterFunctor decl = f;
  out.effectful = true;
  out.deterministic = false;
  out.fn = [state, decl](Interpreter& I, const Node& n, Datums& a, Datums& r) {
    std::string label = decl.name + " (" + decl.uri + ")";
    PythonCall call(n);
    if (!state->fn) {
      std::string err;
      PyRef mod = loadTarget(decl.target, decl.baseDir, err);
      if (!mod) return pyFail(I, n, label, err);
      PyRef obj = PyRef::borrow(mod.get());
      size_t s = 0;
      while (true) {
        size_t e = decl.symbol.find('.', s);
        std::string part = decl.symbol.substr(s, e == std::string::npos ? std::string::npos : e - s);
        obj = PyRef::steal(PyObject_GetAttrString(obj.get(), part.c_str()));
        if (!obj) return pyFail(I, n, label, takePythonError());
        if (e == std::string::npos) break;
        s = e + 1;
      }
      if (!PyCallable_Check(obj.get()))
        return pyFail(I, n, label, "'" + decl.symbol + "' is not callable");
      state->fn = obj.release();
    }
    CallbackScope scope;
    scope.interp = &I;
    scope.site = &n;
    std::string err;
    PyRef args = PyRef::steal(PyTuple_New(Py_ssize_t(a.size())));
    for (size_t i = 0; i < a.size(); ++i) {
      Type t = i < decl.params.size() ? decl.params[i] : Type();
      PyRef o = PyRef::steal(toPython(a[i], t, &scope, err));
      if (!o) return pyFail(I, n, label, "argument " + std::to_string(i + 1) + ": " + err);
      PyTuple_SET_ITEM(args.get(), Py_ssize_t(i), o.release());
    }
    PyRef res = PyRef::steal(PyObject_Call(state->fn, args.get(), nullptr));
    if (!res) return pyFail(I, n, label, takePythonError());
    Datum d;
    Type want = decl.result ? decl.result : Type::null();
    if (!fromPython(res.get(), want, d, err)) return pyFail(I, n, label, "result: " + err);
    r.push_back(std::move(d));
    return true;
  };
  return true;
}

// ---- embedding ------------------------------------------------------------------------

/// In the `camel` executable: starts the interpreter (once). Returns false with
/// `error` set when it cannot.
bool ensureInterpreter(std::string& error) {
  if (Py_IsInitialized()) return true;
  // Extension modules (numpy, torch) resolve the C API from the global scope.
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&Py_InitializeFromConfig), &info) && info.dli_fname)
    dlopen(info.dli_fname, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD);
  PyConfig config;
  PyConfig_InitPythonConfig(&config);
  config.install_signal_handlers = 0;
  config.parse_argv = 0;
  PyStatus st = PyConfig_SetBytesString(&config, &config.program_name, "camel");
  if (!PyStatus_Exception(st)) st = Py_InitializeFromConfig(&config);
  PyConfig_Clear(&config);
  if (PyStatus_Exception(st)) {
    error = std::string("cannot initialise Python: ") + (st.err_msg ? st.err_msg : "unknown error");
    return false;
  }
  // sys.argv = [''] (scripts expect it); an active virtualenv's packages.
  PyRun_SimpleString(
      "import sys, os, site\n"
      "sys.argv = ['']\n"
      "_venv = os.environ.get('VIRTUAL_ENV')\n"
      "if _venv:\n"
      "    _sp = os.path.join(_venv, 'lib', 'python%d.%d' % sys.version_info[:2], 'site-packages')\n"
      "    if os.path.isdir(_sp): site.addsitedir(_sp)\n"
      "del _venv\n");
  std::atexit(flushAtExit);
  PyEval_SaveThread();  // runtime threads take the GIL with PyGILState_Ensure
  return true;
}

}  // namespace

}  // namespace xacc::executors::python

XACC_CAMEL_EXECUTOR(python) {
  using namespace xacc::executors::python;
  std::string error;
  if (!ensureInterpreter(error)) {
    ctx->fail(error);
    return false;
  }
  static std::once_flag once;
  std::call_once(once, registerPythonModule);
  ctx->provideModule("python");
  ctx->provideScheme("python", resolvePythonFunctor);
  return true;
}
