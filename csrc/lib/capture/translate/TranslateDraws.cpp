// Draws from NumPy's and Python's global random generators, made at run time.
//
// Note [Global RNG draws at run time]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// `np.random.uniform(0, 1)` is a method of NumPy's global RandomState
// (numpy.random.mtrand._rand), `random.random()` one of Python's global Random
// (random._inst): each call advances a state the graph does not hold, so it
// cannot run at trace time (the state would advance once, the number would be
// a constant). A call of such a method (a draw of kDraws) with constant
// arguments, outside a tensor branch or loop region, is a Drawn tracker: the
// frame's code (Codegen's break function, or the split at RETURN_VALUE of a
// frame that completes, as for replayed attribute writes) makes the same call
// right after the graph, the frame's draws in program order, and stores the
// number where the frame holds it (a local, the stack, a returned value). The
// generator's state then advances by the same calls as in eager, and the
// number is eager's. What runs between the draws in eager cannot see the
// state: it is graph code, and any other use of the generator (`seed`,
// `get_state`, a draw with traced arguments) is a break, before which the
// break function makes the draws so far.
//
// The translator never knows the number, so nothing may read it: an
// instruction of the frame that would consume a Drawn on its stack (compare,
// arithmetic, truth test, call argument, container, attribute store: anything
// but moving it between the stack and locals, dropping it and returning it)
// is a break at that instruction (drawUsed, from runFrame): the break function
// draws, rebuilds the stack with the number, and runs the instruction in
// Python. LayerDrop's `p = np.random.uniform(0, 1)` read only under
// `self.training and p < layerdrop` is no break in eval mode, one in training.
//
// The call must not raise where eager's would not have: it is first made on a
// fresh generator of the same type seeded 0 (argument checks do not depend on
// the state), and a call that raises there, or returns anything but a Python
// or NumPy number, stays what it was (NumPy's GB021, ...). The frame's code
// calls a xacc._src.capture.draws.Draw: an AOT artifact stores it by the
// generator's names (a bound method would pickle a copy of the generator).
#include <cstring>

#include "PyTypes.h"
#include "Translator.h"

namespace xacc::capture::translate {

namespace {

struct Generator {
  const char* module;  ///< where the global instance lives
  const char* attr;    ///< its name there
  const char* what;    ///< for messages
  GB use;              ///< the break code of a use of a drawn number
  const char* const* draws;
};

// Methods that draw from the instance's state and return one number for
// number arguments (an array for a `size`: not deferred, see the result check).
const char* const kNumpyDraws[] = {
    "random", "random_sample", "sample", "ranf", "rand", "randn", "uniform", "normal", "standard_normal",
    "randint", "exponential", "standard_exponential", "poisson", "binomial", "beta", "gamma", "standard_gamma",
    "lognormal", "laplace", "logistic", "gumbel", "geometric", "rayleigh", "weibull", "pareto", "chisquare",
    nullptr};
const char* const kPythonDraws[] = {
    "random", "uniform", "randint", "randrange", "getrandbits", "gauss", "normalvariate", "lognormvariate",
    "expovariate", "vonmisesvariate", "gammavariate", "betavariate", "paretovariate", "weibullvariate",
    "triangular", nullptr};

const Generator kGenerators[] = {
    {"numpy.random.mtrand", "_rand", "numpy.random.", GB::NumpyOperation, kNumpyDraws},
    {"random", "_inst", "random.", GB::UntraceableCall, kPythonDraws},
};

/// A Python int/float/bool or a NumPy number or bool scalar (not an array).
bool isNumber(PyObject* r) {
  if (PyFloat_Check(r) || PyLong_Check(r)) return true;
  PyObject* np = PyDict_GetItemString(PyImport_GetModuleDict(), "numpy");  // borrowed
  for (const char* t : {"number", "bool_"}) {
    PyObject* type = np ? PyObject_GetAttrString(np, t) : nullptr;
    const int is = type && PyType_Check(type) ? PyObject_IsInstance(r, type) : 0;
    Py_XDECREF(type);
    if (is == 1) return true;
    PyErr_Clear();
  }
  return false;
}

}  // namespace

VarRef Translator::globalDraw(PyObject* fn, const std::vector<VarRef>& args,
                              const std::vector<std::pair<PyRef, VarRef>>& kwargs) {
  if (!PyCFunction_Check(fn) && !PyMethod_Check(fn)) return nullptr;
  PyObject* self = PyCFunction_Check(fn) ? PyCFunction_GET_SELF(fn) : PyMethod_GET_SELF(fn);  // borrowed
  if (!self) return nullptr;
  const Generator* gen = nullptr;
  for (const Generator& g : kGenerators) {
    PyObject* mod = PyDict_GetItemString(PyImport_GetModuleDict(), g.module);  // borrowed; never imported here
    PyObject* inst = mod ? PyObject_GetAttrString(mod, g.attr) : nullptr;
    if (!inst) PyErr_Clear();
    const bool same = inst && inst == self;
    Py_XDECREF(inst);
    if (same) gen = &g;
  }
  if (!gen) return nullptr;
  PyRef name = PyRef::steal(PyObject_GetAttrString(fn, "__name__"));
  if (!name || !PyUnicode_Check(name.get())) {
    PyErr_Clear();
    return nullptr;
  }
  bool draw = false;
  for (const char* const* d = gen->draws; *d; ++d) draw = draw || PyUnicode_CompareWithASCIIString(name.get(), *d) == 0;
  if (!draw) return nullptr;
  // The method the instance's type defines, bound to the instance (an
  // instance attribute or a patched method is something else: not deferred).
  PyObject* type = reinterpret_cast<PyObject*>(Py_TYPE(self));
  PyRef own = PyRef::steal(PyObject_GetAttr(type, name.get()));
  descrgetfunc get = own ? Py_TYPE(own.get())->tp_descr_get : nullptr;
  PyRef bound = get ? PyRef::steal(get(own.get(), self, type)) : PyRef();
  const int same = bound ? PyObject_RichCompareBool(bound.get(), fn, Py_EQ) : 0;
  if (same != 1) {
    PyErr_Clear();
    return nullptr;
  }
  if (branchDepth_ > 0) return nullptr;  // an arm or loop region runs it a different number of times
  for (const VarRef& a : args)
    if (!isConst(a)) return nullptr;
  for (const auto& kv : kwargs)
    if (!isConst(kv.second)) return nullptr;
  PyRef tuple = PyRef::steal(PyTuple_New(static_cast<Py_ssize_t>(args.size())));
  for (size_t i = 0; i < args.size(); ++i) {
    PyRef c = constOf(args[i]);
    if (!c) return nullptr;
    PyTuple_SET_ITEM(tuple.get(), static_cast<Py_ssize_t>(i), c.release());
  }
  PyRef kw = PyRef::steal(PyDict_New());
  for (const auto& [k, v] : kwargs) {
    PyRef c = constOf(v);
    if (!c || PyDict_SetItem(kw.get(), k.get(), c.get()) < 0) return nullptr;
  }
  // The same method on a fresh generator of the same type: whether the call
  // raises, and what it returns, do not depend on the state.
  PyRef seed = PyRef::steal(PyLong_FromLong(0));
  PyRef fresh = PyRef::steal(PyObject_CallOneArg(type, seed.get()));
  PyRef method = fresh ? PyRef::steal(PyObject_GetAttr(fresh.get(), name.get())) : PyRef();
  PyRef trial = method ? PyRef::steal(PyObject_Call(method.get(), tuple.get(), kw.get())) : PyRef();
  if (!trial || !isNumber(trial.get())) {
    PyErr_Clear();
    return nullptr;
  }
  auto v = makeVar(Var::Kind::Drawn, PyRef::borrow(fn));
  v->items = args;
  for (const auto& [k, a] : kwargs) {
    v->keys.push_back(k);
    v->kwItems.push_back(a);
  }
  v->name = std::string(gen->what) + PyUnicode_AsUTF8(name.get());
  v->fields = PyRef::steal(Py_BuildValue("(ssO)", gen->module, gen->attr, name.get()));
  v->pos = static_cast<size_t>(gen->use);
  draws_.push_back(v);
  return v;
}

PyRef Translator::drawCall(const VarRef& d) {
  // xacc._src.capture.draws.Draw: pickled by the generator's names, not a copy of it.
  static PyObject* drawType = nullptr;
  if (!drawType) {
    PyObject* mod = PyImport_ImportModule("xacc._src.capture.draws");
    drawType = mod ? PyObject_GetAttrString(mod, "Draw") : nullptr;
    Py_XDECREF(mod);
    if (!drawType) {
      PyErr_Clear();
      return {};
    }
  }
  PyRef args = PyRef::steal(PyTuple_New(static_cast<Py_ssize_t>(d->items.size())));
  for (size_t i = 0; i < d->items.size(); ++i) {
    PyRef c = constOf(d->items[i]);
    if (!c) return {};
    PyTuple_SET_ITEM(args.get(), static_cast<Py_ssize_t>(i), c.release());
  }
  PyRef kw = PyRef::steal(PyDict_New());
  for (size_t i = 0; i < d->keys.size(); ++i) {
    PyRef c = constOf(d->kwItems[i]);
    if (!c || PyDict_SetItem(kw.get(), d->keys[i].get(), c.get()) < 0) return {};
  }
  PyRef call = PyRef::steal(
      PyObject_CallFunctionObjArgs(drawType, d->obj.get(), d->fields.get(), args.get(), kw.get(), nullptr));
  if (!call) PyErr_Clear();
  return call;
}

bool Translator::drawUsed(const Frame& f, const Instr& ins) {
  switch (ins.op) {
    case Op::LOAD_FAST:
    case Op::LOAD_FAST_CHECK:
    case Op::LOAD_CONST:
    case Op::STORE_FAST:
    case Op::POP_TOP:
    case Op::RETURN_VALUE:
    case Op::NOP:
    case Op::RESUME:
      return true;
    default:
      break;
  }
  for (const VarRef& v : f.stack)
    if (v && v->is(Var::Kind::Drawn))
      return fail(static_cast<GB>(v->pos), "the number " + v->name +
                                              "() drew is used (it is drawn at run time, after the graph)");
  return true;
}

}  // namespace xacc::capture::translate
