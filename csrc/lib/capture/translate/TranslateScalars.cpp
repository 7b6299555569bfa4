// Python ints and floats as graph values (see SymScalar in Value.h and the
// design note in xacc/_src/capture/scalars.py). An int or float argument of
// the captured frame is a graph input guarded by its type only. It stays
// symbolic through Python arithmetic (`arith.*` nodes) and through torch calls
// that pass it straight to an ATen Scalar/float argument, which the host
// probes with sentinel values; every other use needs the concrete value and
// specializes it (an equality guard on each argument it came from).
#include <algorithm>

#include "PyTypes.h"
#include "Translator.h"

namespace xacc::capture::translate {

namespace {

const char* arithName(PyObject* op) {
  struct Entry {
    const char* fn;
    const char* arith;
  };
  static const Entry kTable[] = {{"add", "arith.add"},      {"iadd", "arith.add"},     {"sub", "arith.sub"},
                                 {"isub", "arith.sub"},     {"mul", "arith.mul"},      {"imul", "arith.mul"},
                                 {"truediv", "arith.div"},  {"itruediv", "arith.div"}, {"floordiv", "arith.floordiv"},
                                 {"ifloordiv", "arith.floordiv"}, {"mod", "arith.mod"}, {"imod", "arith.mod"}};
  for (const Entry& e : kTable)
    if (operatorFn(e.fn) == op) return e.arith;
  return nullptr;
}

bool isNumber(PyObject* o) { return PyLong_CheckExact(o) || PyFloat_CheckExact(o); }

void collectSyms(const VarRef& v, std::vector<VarRef>& out) {
  if (v->is(Var::Kind::SymScalar)) {
    if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  } else if (v->is(Var::Kind::Tuple) || v->is(Var::Kind::List) || v->is(Var::Kind::Dict) ||
             (v->is(Var::Kind::Const) && v->name == "symslice")) {
    for (const VarRef& i : v->items) collectSyms(i, out);
  }
}

}  // namespace

// Note [Symbolic sizes]: under dynamic shapes (xacc/_src/capture/dynamic.py)
// a size Python reads from a tensor (`x.shape`, `x.size(1)`, `len(x)`) that
// differs from the shadow run's is a SymScalar named "size" whose graph value
// is `aten.sym_size.int` of that tensor. Arithmetic on it is `arith.*` nodes
// like any symbolic number; torch calls receive the capture-time values and
// the recorder turns every ATen int argument that differs from the shadow
// run's into the graph value with the same (real, shadow) pair. Using such a
// size as a plain number (a branch, `range`, a builtin) is only allowed when
// its value does not depend on a dynamic dim; otherwise the compile falls
// back to static shapes.
bool isSizeSym(const VarRef& v) {
  if (!v->is(Var::Kind::SymScalar)) return false;
  if (v->name == "size") return true;
  for (const VarRef& r : v->items)
    if (r->name == "size") return true;
  return false;
}

VarRef Translator::concrete(const VarRef& v) {
  if (!v->is(Var::Kind::SymScalar)) return v;
  auto isIndex = [](const VarRef& x) { return x->name == "loop index"; };
  auto isCarried = [](const VarRef& x) { return x->name == "loop carried"; };  // Note [Loop-carried numbers]
  if (isIndex(v) || std::any_of(v->items.begin(), v->items.end(), isIndex))
    fail(GB::DataDependentBranch, "the index of a range loop captured as ctrl.loop used as a plain Python number");
  else if (isCarried(v) || std::any_of(v->items.begin(), v->items.end(), isCarried))
    fail(GB::DataDependentBranch, "a number carried by a while loop captured as ctrl.loop used as a plain Python number");
  if (isSizeSym(v)) {
    int ok = host_.sizeConcrete(v->vid);
    if (ok < 0) failPy(GB::Internal, "symbolic size");
    else if (ok == 0) fail(GB::DynamicSizeAsNumber, "a size that depends on a dynamic dim used as a plain number");
  }
  if (v->items.empty()) {
    guardEquals(v->source, v->obj.get());
  } else {
    for (const VarRef& r : v->items) guardEquals(r->source, r->obj.get());
  }
  return makeConst(v->obj);
}

// Note [Size relations]: a branch on a comparison of symbolic sizes
// (`if batch_size != position_ids.shape[0]`, `if seq_len > cached_len`) whose
// outcome is the same in the real and the shadow run becomes a guard on that
// relation (`L['x'].size(0) != 1`), so the branch stays a Python-level
// specialisation and the dims stay dynamic. The host can only name sizes that
// are a dynamic input dim (or constants); anything else, and an outcome that
// the sizes change, falls back to `concrete` (GB022: static shapes).
VarRef Translator::sizeCompare(PyObject* op, const VarRef& a, const VarRef& b) {
  static const struct {
    const char* fn;
    const char* sym;
  } kOps[] = {{"lt", "<"}, {"le", "<="}, {"eq", "=="}, {"ne", "!="}, {"gt", ">"}, {"ge", ">="}};
  const char* sym = nullptr;
  for (const auto& e : kOps)
    if (operatorFn(e.fn) == op) sym = e.sym;
  if (!sym) return nullptr;
  auto operand = [&](const VarRef& v, long& vid, PyObject*& c) {
    if (isSizeSym(v)) {
      vid = v->vid;
      c = v->obj.get();
      return vid >= 0 && PyLong_CheckExact(c);
    }
    vid = -1;
    c = v->obj.get();
    return v->is(Var::Kind::Const) && PyLong_CheckExact(c);
  };
  long va, vb;
  PyObject *ca, *cb;
  if (!operand(a, va, ca) || !operand(b, vb, cb)) return nullptr;
  std::string code, detail;
  PyObject* args = Py_BuildValue("(slOlO)", sym, va, ca, vb, cb);
  if (!args) {
    PyErr_Clear();
    return nullptr;
  }
  PyRef r = host_.call("size_compare", args, code, detail);
  Py_DECREF(args);
  if (!r) return nullptr;  // the size specializes (concrete) and reports why
  if (r.get() != Py_True && r.get() != Py_False) return nullptr;
  return makeConst(r);
}

int Translator::scalarVid(const VarRef& v) {
  if (v->vid < 0) v->vid = host_.scalarInput(node(v->source), PyLong_CheckExact(v->obj.get()));
  return v->vid;
}

VarRef Translator::scalarBinary(PyObject* op, const VarRef& a, const VarRef& b, bool& handled) {
  handled = false;
  const char* name = arithName(op);
  if (!name) return nullptr;
  for (const VarRef* v : {&a, &b})
    if (!(*v)->is(Var::Kind::SymScalar) && !((*v)->is(Var::Kind::Const) && isNumber((*v)->obj.get()))) return nullptr;
  PyObject* r = PyObject_CallFunctionObjArgs(op, a->obj.get(), b->obj.get(), nullptr);
  if (!r) {
    PyErr_Clear();  // the eager program raises it: let Python do so with concrete values
    return nullptr;
  }
  PyRef result = PyRef::steal(r);
  if (!isNumber(r)) return nullptr;
  bool ints = PyLong_CheckExact(a->obj.get()) && PyLong_CheckExact(b->obj.get());
  std::string n = name;
  if ((n == "arith.floordiv" || n == "arith.mod") && !ints) return nullptr;
  const char* rt = PyLong_CheckExact(r) ? "i64" : "f64";
  std::vector<int> ids;
  for (const VarRef* v : {&a, &b}) {
    int id;
    if ((*v)->is(Var::Kind::Const)) {
      PyRef c = PyLong_CheckExact((*v)->obj.get()) && std::string(rt) == "f64"
                    ? PyRef::steal(PyFloat_FromDouble(PyLong_AsDouble((*v)->obj.get())))
                    : (*v)->obj;
      id = host_.scalarConst(c.get(), rt);
    } else {
      id = scalarVid(*v);
      if (std::string(rt) == "f64" && PyLong_CheckExact((*v)->obj.get())) id = host_.arith("arith.cast", {id}, "f64");
    }
    if (id < 0) {
      handled = true;
      fail(GB::Internal, "scalar graph value");
      return nullptr;
    }
    ids.push_back(id);
  }
  int vid = host_.arith(name, ids, rt);
  if (vid < 0) {
    handled = true;
    fail(GB::Internal, std::string("recording ") + name);
    return nullptr;
  }
  auto s = makeVar(Var::Kind::SymScalar, result);
  s->vid = vid;
  for (const VarRef* v : {&a, &b}) {
    if (!(*v)->is(Var::Kind::SymScalar)) continue;
    if ((*v)->items.empty()) {
      if (std::find(s->items.begin(), s->items.end(), *v) == s->items.end()) s->items.push_back(*v);
    } else {
      for (const VarRef& root : (*v)->items)
        if (std::find(s->items.begin(), s->items.end(), root) == s->items.end()) s->items.push_back(root);
    }
  }
  handled = true;
  return s;
}

VarRef Translator::scalarUnary(PyObject* op, const VarRef& v, bool& handled) {
  handled = true;
  if (op == operatorFn("pos")) return v;
  if (op == operatorFn("neg")) {
    const char* rt = PyLong_CheckExact(v->obj.get()) ? "i64" : "f64";
    int id = host_.arith("arith.neg", {scalarVid(v)}, rt);
    if (id < 0) {
      fail(GB::Internal, "recording arith.neg");
      return nullptr;
    }
    PyObject* r = PyNumber_Negative(v->obj.get());
    if (!r) {
      failPy(GB::Internal, "negation");
      return nullptr;
    }
    auto s = makeVar(Var::Kind::SymScalar, PyRef::steal(r));
    s->vid = id;
    s->items = v->items.empty() ? std::vector<VarRef>{v} : v->items;
    return s;
  }
  handled = false;
  return nullptr;
}

VarRef Translator::recordSym(PyObject* fn, const std::vector<VarRef>& args,
                             const std::vector<std::pair<PyRef, VarRef>>& kwargs, bool& handled) {
  handled = false;
  std::vector<VarRef> syms;
  for (const VarRef& a : args) collectSyms(a, syms);
  for (const auto& kv : kwargs) collectSyms(kv.second, syms);
  if (syms.empty()) return nullptr;
  // Symbolic sizes (Note [Symbolic sizes]) go in as their values and are
  // matched at the ATen level; other numbers then specialize.
  bool sizes = std::any_of(syms.begin(), syms.end(), isSizeSym);
  if (sizes) syms.erase(std::remove_if(syms.begin(), syms.end(), [](const VarRef& v) { return !isSizeSym(v); }),
                        syms.end());
  handled = true;
  markSyms_ = &syms;
  PyRef tuple = PyRef::steal(PyTuple_New(static_cast<Py_ssize_t>(args.size())));
  PyRef kw = PyRef::steal(PyDict_New());
  bool ok = true;
  for (size_t i = 0; ok && i < args.size(); ++i) {
    PyRef v = pythonValue(args[i]);
    ok = static_cast<bool>(v);
    if (ok) PyTuple_SET_ITEM(tuple.get(), static_cast<Py_ssize_t>(i), v.release());
  }
  for (const auto& [k, v] : kwargs) {
    if (!ok) break;
    PyRef pv = pythonValue(v);
    ok = static_cast<bool>(pv);
    if (ok) PyDict_SetItem(kw.get(), k.get(), pv.get());
  }
  markSyms_ = nullptr;
  if (!ok) return nullptr;
  PyRef values = PyRef::steal(PyList_New(static_cast<Py_ssize_t>(syms.size())));
  for (size_t i = 0; i < syms.size(); ++i) {
    Py_INCREF(syms[i]->obj.get());
    PyList_SET_ITEM(values.get(), static_cast<Py_ssize_t>(i), syms[i]->obj.get());
  }
  // Sizes: the values themselves, as a tuple (the host's cue for size mode).
  PyRef sent = sizes ? PyRef::steal(PyList_AsTuple(values.get())) : host_.probe(fn, tuple.get(), kw.get(), values.get());
  if (!sent) {
    failPy(GB::Internal, "probing symbolic numbers");
    return nullptr;
  }
  if (sent.get() == Py_None) {
    handled = false;  // the numbers specialize: the caller records with values
    return nullptr;
  }
  std::vector<int> vids;
  for (const VarRef& s : syms) vids.push_back(scalarVid(s));
  std::string code, detail;
  PyRef r = host_.recordSym(fn, tuple.get(), kw.get(), sent.get(), vids, code, detail);
  if (!r) {
    fail(hostBreak(code, GB::NoMetaKernel), detail);
    return nullptr;
  }
  return fromPython(r.get());
}

}  // namespace xacc::capture::translate
