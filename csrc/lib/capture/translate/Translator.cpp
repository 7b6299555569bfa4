// The translator's driver and value model: frame setup, the instruction loop,
// failures, guards on sources, and how Python values become trackers (wrap)
// and trackers become Python values again (constOf, pythonValue). See
// Translator.h.
#include "Translator.h"

#include <algorithm>

#include "Codegen.h"

#include "PyTypes.h"

namespace xacc::capture::translate {

std::string pyText(PyObject* o) {
  if (!o) return "";
  const char* s = PyUnicode_Check(o) ? PyUnicode_AsUTF8(o) : nullptr;
  std::string out;
  if (s) {
    out = s;
  } else {
    PyErr_Clear();
    PyObject* r = PyObject_Str(o);
    const char* u = r ? PyUnicode_AsUTF8(r) : nullptr;
    out = u ? u : "?";
    Py_XDECREF(r);
  }
  if (PyErr_Occurred()) PyErr_Clear();
  return out;
}

PyObject* moduleAttr(const char* module, const char* name) {
  PyObject* m = PyImport_ImportModule(module);
  if (!m) return nullptr;
  PyObject* a = PyObject_GetAttrString(m, name);
  Py_DECREF(m);
  return a;
}

const PyTypes* pyTypes() {
  static PyTypes* table = [] {
    auto* t = new PyTypes();
    t->tensor = moduleAttr("torch", "Tensor");
    t->parameter = moduleAttr("torch.nn", "Parameter");
    t->module = moduleAttr("torch.nn", "Module");
    t->moduleList = moduleAttr("torch.nn", "ModuleList");
    t->sequential = moduleAttr("torch.nn", "Sequential");
    t->moduleDict = moduleAttr("torch.nn", "ModuleDict");
    t->size = moduleAttr("torch", "Size");
    t->dtype = moduleAttr("torch", "dtype");
    t->device = moduleAttr("torch", "device");
    t->torchDevice = t->device;
    t->memoryFormat = moduleAttr("torch", "memory_format");
    t->layout = moduleAttr("torch", "layout");
    t->opOverload = moduleAttr("torch._ops", "OpOverload");
    t->opOverloadPacket = moduleAttr("torch._ops", "OpOverloadPacket");
    t->tensorBase = moduleAttr("torch._C", "TensorBase");
    t->cudaSynchronize = moduleAttr("torch.cuda", "synchronize");
    t->noGrad = moduleAttr("torch", "no_grad");
    t->enableGrad = moduleAttr("torch", "enable_grad");
    t->isGradEnabled = moduleAttr("torch", "is_grad_enabled");
    t->moduleModule = PyImport_ImportModule("torch.nn.modules.module");
    t->mathModule = PyImport_ImportModule("math");
    t->symSize = moduleAttr("xacc._src.capture.host", "SymSize");
    t->symShape = moduleAttr("xacc._src.capture.host", "SymShape");
    t->operatorModule = PyImport_ImportModule("operator");
    PyObject* b = PyEval_GetBuiltins();  // borrowed
    auto bi = [&](const char* n) {
      PyObject* o = PyDict_GetItemString(b, n);
      Py_XINCREF(o);
      return o;
    };
    t->len = bi("len"), t->range = bi("range"), t->enumerate = bi("enumerate"), t->zip = bi("zip");
    t->reversed = bi("reversed"), t->iter = bi("iter"), t->next = bi("next");
    t->isinstance = bi("isinstance"), t->type = bi("type"), t->getattr = bi("getattr");
    t->getattrFn = t->getattr;
    t->hasattr = bi("hasattr"), t->tuple = bi("tuple"), t->list = bi("list"), t->dict = bi("dict");
    t->sum = bi("sum"), t->min = bi("min"), t->max = bi("max"), t->abs = bi("abs");
    t->intFn = bi("int"), t->floatFn = bi("float"), t->boolFn = bi("bool"), t->callable = bi("callable");
    t->print = bi("print"), t->str = bi("str"), t->round = bi("round"), t->sorted = bi("sorted");
    t->any = bi("any"), t->all = bi("all"), t->slice = bi("slice"), t->divmod = bi("divmod");
    t->super = bi("super"), t->set = bi("set"), t->frozenset = bi("frozenset");
    t->pow = bi("pow"), t->issubclass = bi("issubclass"), t->repr = bi("repr"), t->hash = bi("hash");
    if (PyErr_Occurred()) PyErr_Clear();
    t->fromNumpy = moduleAttr("torch", "from_numpy");
    t->asTensor = moduleAttr("torch", "as_tensor");
    t->torchAsarray = moduleAttr("torch", "asarray");
    t->torchTensor = moduleAttr("torch", "tensor");
    t->finfo = moduleAttr("torch", "finfo");
    t->iinfo = moduleAttr("torch", "iinfo");
    t->partial = moduleAttr("functools", "partial");
    t->polyfills = moduleAttr("xacc._src.capture.polyfills", "REFERENCE");
    t->listIterAt = moduleAttr("xacc._src.capture.iterators", "list_iter_at");
    t->reversedAt = moduleAttr("xacc._src.capture.iterators", "reversed_at");
    t->dictIterAt = moduleAttr("xacc._src.capture.iterators", "dict_iter_at");
    t->inspectSignature = moduleAttr("inspect", "signature");
    t->osEnviron = moduleAttr("os", "environ");
    t->viewOf = moduleAttr("xacc._src.capture.convert", "view_of");
    if (PyObject* mapping = moduleAttr("collections.abc", "Mapping")) {
      t->mappingGet = PyObject_GetAttrString(mapping, "get");
      t->mappingContains = PyObject_GetAttrString(mapping, "__contains__");
      Py_DECREF(mapping);
    }
    if (PyErr_Occurred()) PyErr_Clear();
    t->numpyRun = moduleAttr("xacc._src.capture.numpy_ops", "run");
    if (t->numpyRun) {
      t->ndarray = moduleAttr("numpy", "ndarray");
      t->npGeneric = moduleAttr("numpy", "generic");
      t->npUfunc = moduleAttr("numpy", "ufunc");
      t->npDtype = moduleAttr("numpy", "dtype");
      t->npCheckDtype = moduleAttr("xacc._src.capture.numpy_ops", "check_dtype");
      t->npDtypeOf = moduleAttr("xacc._src.capture.numpy_ops", "np_dtype");
      t->npToArray = moduleAttr("xacc._src.capture.numpy_ops", "to_numpy");
      t->npToScalar = moduleAttr("xacc._src.capture.numpy_ops", "to_numpy_scalar");
    }
    if (PyErr_Occurred()) PyErr_Clear();
    return t;
  }();
  return table->tensor ? table : nullptr;
}

Translator::Translator(Host& host, GuardTree& tree, Options opts)
    : host_(host), tree_(tree), opts_(std::move(opts)) {}

Translator::~Translator() = default;

bool Translator::fail(GB code, const std::string& detail) {
  if (failure_.code.empty()) {
    failure_.code = gbCode(code);
    failure_.detail = detail;
    failure_.internal = code == GB::Internal;
    // The innermost frame being executed is where the user looks.
    // Note [Breaks inside polyfills]: a reference of polyfills*.py stands for
    // a C function the user called, so a break raised inside one is reported
    // at the line of the call that entered it (the innermost frame that is not
    // a reference's: user code a reference calls back, a `key=` function or a
    // class's own __reduce__, is reported where it is).
    Frame* at = current_;
    while (at && at->parent && isPolyfillGlobals(at->globals)) at = at->parent;
    if (at) {
      failure_.file = pyText(at->code->co_filename);
      failure_.function = pyText(at->code->co_name);
      failure_.line = at->line;
    }
    if (top_) failure_.offset = top_->offset;
  }
  return false;
}

bool Translator::failPy(GB code, const std::string& what) {
  PyObject *et, *ev, *etb;
  PyErr_Fetch(&et, &ev, &etb);
  std::string msg = what;
  if (et) {
    msg += ": " + std::string(reinterpret_cast<PyTypeObject*>(et)->tp_name);
    if (ev) {
      std::string s = pyText(ev);
      if (!s.empty()) msg += ": " + s.substr(0, s.find('\n'));
    }
  }
  Py_XDECREF(et);
  Py_XDECREF(ev);
  Py_XDECREF(etb);
  return fail(code, msg);
}

// -- values -----------------------------------------------------------------------------

// Note [Classes as dict keys]: a dict read from outside may be keyed by
// classes (copyreg.dispatch_table, a registry) when each class hashes and
// compares by identity (its metaclass keeps type's __hash__ and __eq__): such
// a key is as fixed as a str, found again by `is`, and the keys guard
// (guardKeys) compares them alike; the guard holds the classes.
static bool identityKeyedClass(PyObject* k) {
  return PyType_Check(k) && Py_TYPE(k)->tp_hash == PyType_Type.tp_hash &&
         Py_TYPE(k)->tp_richcompare == PyType_Type.tp_richcompare;
}

static bool isConstType(PyObject* v, const PyTypes* T) {
  return v == Py_None || v == Py_Ellipsis || PyBool_Check(v) || PyLong_Check(v) || PyFloat_Check(v) ||
         PyUnicode_Check(v) || PyComplex_Check(v) || PyBytes_Check(v) ||
         PyObject_TypeCheck(v, reinterpret_cast<PyTypeObject*>(T->dtype)) ||
         PyObject_TypeCheck(v, reinterpret_cast<PyTypeObject*>(T->device)) ||
         PyObject_TypeCheck(v, reinterpret_cast<PyTypeObject*>(T->memoryFormat)) ||
         PyObject_TypeCheck(v, reinterpret_cast<PyTypeObject*>(T->layout));
}

// A frame argument or an item of a tuple or list in one, reached by integer
// indices only (`L['shape'][0]`, `L['__xacc_stack0'][3][0]`): a number there is
// a symbolic scalar like an argument itself, guarded by its type and by its
// value only where the code uses it as a plain number (concrete). A resume
// function gets the frame's live values this way, sizes among them (Note
// [Fragment groups] in dynamic.py): guarding every item by value made each
// new batch size recompile it.
static bool argumentItem(const SourceRef& source) {
  const Source* s = source.get();
  while (s && s->access == Access::Item && !s->key) s = s->parent.get();
  return s && s->access == Access::Local && !s->parent;
}

VarRef Translator::wrap(PyObject* value, const SourceRef& source) {
  const PyTypes* T = pyTypes();
  PyTypeObject* tp = Py_TYPE(value);
  if (PyObject_TypeCheck(value, reinterpret_cast<PyTypeObject*>(T->tensor))) {
    // Note [Tensor input identity]: one tensor read through two sources (an
    // argument that is also a parameter, tied weights, `f(x, x)`) is one graph
    // input and one tracker, so `a is b` and in-place ops see one tensor; the
    // second source is guarded to be the same object. Tensors that are distinct
    // objects here are guarded distinct (Leaf::Kind::Distinct).
    auto seen = source ? tensorInputs_.find(value) : tensorInputs_.end();
    if (seen != tensorInputs_.end()) {
      guardSame(source, seen->second->source, true);
      return seen->second;
    }
    std::string code, detail;
    SourceRef src = source;
    PyRef meta;
    bool made = source && takePrefetched(value, src, meta, code, detail);  // Note [Tensor arguments in one call]
    int n = -1;
    if (src) n = node(src);
    if (!made) meta = host_.tensorInput(value, n, src != nullptr, code, detail);
    if (!meta) {
      fail(hostBreak(code, GB::UnsupportedType), detail);
      return nullptr;
    }
    auto v = makeVar(Var::Kind::Tensor, std::move(meta), src);
    if (src) {
      inputMetas_.emplace(v->obj.get(), InputMeta{v->obj, src, PyRef::borrow(reinterpret_cast<PyObject*>(tp))});
      // Once per node: a descriptor may give a new tensor per read of one source.
      bool marked = false;
      for (const Leaf& l : tree_.nodeLeaves(n)) marked = marked || l.kind == Leaf::Kind::Distinct;
      Leaf l;
      l.kind = Leaf::Kind::Distinct;
      if (!marked) tree_.addLeaf(n, std::move(l));
      tensorInputs_.emplace(value, v);
      inputRefs_.push_back(PyRef::borrow(value));
      if (node(source) != n) guardSame(source, src, true);
    }
    // Note [Tensor types]: the meta twin is a plain tensor; `isinstance` and
    // `type()` answer with the input's own type (nn.Parameter), which its
    // tensor guard checks exactly.
    if (tp != reinterpret_cast<PyTypeObject*>(T->tensor))
      tensorTypes_[v->obj.get()] = PyRef::borrow(reinterpret_cast<PyObject*>(tp));
    return v;
  }
  if (T->ndarray && PyObject_TypeCheck(value, reinterpret_cast<PyTypeObject*>(T->ndarray)))
    return numpyInput(value, source);
  if (T->npGeneric && PyObject_TypeCheck(value, reinterpret_cast<PyTypeObject*>(T->npGeneric))) {
    // A NumPy scalar: a constant of its exact type (np.float64 is also a float).
    guardEquals(source, value);
    return makeVar(Var::Kind::Const, PyRef::borrow(value), source);
  }
  if ((PyLong_CheckExact(value) || PyFloat_CheckExact(value)) && opts_.symbolicScalars && argumentItem(source)) {
    guardType(source, value);
    if (PyLong_CheckExact(value)) {
      // An int argument of a resume function or loop body keeps a size history;
      // once it changed like a dim, a symbolic size of its own (Note [Size arguments]).
      std::string code, detail;
      PyObject* args = Py_BuildValue("(iO)", node(source), value);
      PyRef r = args ? host_.call("size_argument", args, code, detail) : PyRef();
      Py_XDECREF(args);
      if (!r) {
        fail(GB::Internal, "size_argument: " + detail);
        return nullptr;
      }
      if (PyLong_CheckExact(r.get())) return makeConst(r);  // the shadow run: its perturbed value
      if (r.get() != Py_None) {
        VarRef v = fromPython(r.get());
        if (v) v->source = source;
        return v;
      }
    }
    return makeVar(Var::Kind::SymScalar, PyRef::borrow(value), source);
  }
  if (isConstType(value, T)) {
    if (value == Py_None || value == Py_Ellipsis)
      guardId(source, value);
    else
      guardEquals(source, value);
    return makeVar(Var::Kind::Const, PyRef::borrow(value), source);
  }
  if ((tp == &PyList_Type || tp == &PyDict_Type) && source)
    if (VarRef seen = containerSeen(value, source)) return seen;  // Note [Replayed container mutation]
  // A list, tuple, dict or OrderedDict (a model output) that contains itself
  // (`l.append(l)`, an instance dict stored in one of its own attributes) would
  // be wrapped without end: trackers of a cyclic input are not modelled, so it
  // is a break.
  static thread_local std::vector<PyObject*> wrapping;
  struct Enter {
    std::vector<PyObject*>* stack = nullptr;
    ~Enter() {
      if (stack) stack->pop_back();
    }
  } enter;
  if (tp == &PyTuple_Type || tp == &PyList_Type || tp == &PyDict_Type || PyODict_Check(value)) {
    if (std::find(wrapping.begin(), wrapping.end(), value) != wrapping.end()) {
      fail(GB::UnsupportedType, std::string("a ") + tp->tp_name + " that contains itself");
      return nullptr;
    }
    wrapping.push_back(value);
    enter.stack = &wrapping;
  }
  if (tp == &PyTuple_Type || tp == &PyList_Type || tp == reinterpret_cast<PyTypeObject*>(T->size)) {
    guardType(source, value);
    Py_ssize_t n = PySequence_Fast_GET_SIZE(value);
    guardLen(source, n);
    std::vector<VarRef> items;
    items.reserve(static_cast<size_t>(n));
    for (Py_ssize_t i = 0; i < n; ++i) {
      VarRef v = wrap(PySequence_Fast_GET_ITEM(value, i), Source::itemIndex(source, i));
      if (!v) return nullptr;
      items.push_back(std::move(v));
    }
    VarRef seq = makeSeq(tp == &PyList_Type ? Var::Kind::List : Var::Kind::Tuple, std::move(items), source);
    // Note [Symbolic shapes keep their type]
    // ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
    // A torch.Size whose items may be symbolic (a shape read from a tensor with
    // a dynamic dim, or one passed to a resume function) is a Tuple tracker
    // flagged torchSize: its items are trackers like a tuple's (an int item is
    // guarded by value only where the code uses it as a plain number), while
    // type(), isinstance, slicing, `+`/`*` and the value rebuilt at a return
    // or break are torch.Size's, as in eager. Without the flag the shape was a
    // plain tuple under dynamic shapes: `type(x.shape[:-1])` was `tuple`.
    seq->torchSize = tp == reinterpret_cast<PyTypeObject*>(T->size);
    return tp == &PyList_Type && source ? containerInput(value, seq) : seq;
  }
  if (tp == &PySet_Type || tp == &PyFrozenSet_Type) {
    bool consts = true;
    PyObject* it = PyObject_GetIter(value);
    if (!it) {
      failPy(GB::UnsupportedType, "iterating a set");
      return nullptr;
    }
    while (PyObject* e = PyIter_Next(it)) {
      consts = consts && isConstType(e, T);
      Py_DECREF(e);
    }
    Py_DECREF(it);
    if (PyErr_Occurred()) {
      failPy(GB::UnsupportedType, "iterating a set");
      return nullptr;
    }
    if (consts) {
      guardType(source, value);
      // Compared against a copy: the set itself may change after capture.
      PyRef copy = PyRef::steal(tp == &PySet_Type ? PySet_New(value) : PyFrozenSet_New(value));
      guardEquals(source, copy.get());
      PyRef own = tp == &PySet_Type ? PyRef::steal(PySet_New(value)) : PyRef::borrow(value);
      return makeVar(Var::Kind::Set, own, source);
    }
  }
  if (source && PyODict_Check(value)) {  // Note [Model outputs as inputs] (TranslateDataclass.cpp)
    if (VarRef seen = containerSeen(value, source)) return seen;
    if (VarRef m = modelOutputInput(value, source); m || failed()) return m;
  }
  if (tp == &PyDict_Type) {
    PyObject *k, *v;
    Py_ssize_t pos = 0;
    while (PyDict_Next(value, &pos, &k, &v))
      if (!PyUnicode_CheckExact(k) && !PyLong_CheckExact(k) && !identityKeyedClass(k)) {
        fail(GB::UnsupportedType, "dict with non-constant keys");
        return nullptr;
      }
    guardType(source, value);
    guardKeys(source, value);  // iteration order and length
    auto d = makeVar(Var::Kind::Dict, {}, source);
    pos = 0;
    while (PyDict_Next(value, &pos, &k, &v)) {
      VarRef item = wrap(v, Source::item(source, k));
      if (!item) return nullptr;
      d->keys.push_back(PyRef::borrow(k));
      d->items.push_back(std::move(item));
    }
    return source ? containerInput(value, d) : d;
  }
  if (PyObject_TypeCheck(value, reinterpret_cast<PyTypeObject*>(T->module))) {
    // Instances of one class share entries: what the graph reads is guarded
    // through its own source.
    guardType(source, value);
    return makeVar(Var::Kind::Object, PyRef::borrow(value), source);
  }
  if (PyMethod_Check(value) && source) {
    // A bound method: the function is fixed, the bound object may vary.
    guardType(source, value);
    static PyObject* funcName = PyUnicode_InternFromString("__func__");
    guardId(Source::attr(source, funcName), PyMethod_GET_FUNCTION(value));
    return makeVar(Var::Kind::Object, PyRef::borrow(value), source);
  }
  VarRef method;
  if (boundTensorMethod(value, source, method)) return method;  // Note [Bound tensor methods as inputs]
  if (PyCFunction_Check(value) && PyCFunction_GET_SELF(value) && !PyModule_Check(PyCFunction_GET_SELF(value)) &&
      source) {
    // A builtin method bound to an object or a class (`dict.fromkeys`, `lst.append`):
    // a new object at every attribute read; equal (same C function, same bound
    // object) is what the code relies on.
    guardEquals(source, value);
    return makeVar(Var::Kind::Object, PyRef::borrow(value), source);
  }
  if (PyFunction_Check(value) || PyCFunction_Check(value) || PyModule_Check(value) || PyType_Check(value) ||
      PyMethod_Check(value) || PyObject_TypeCheck(value, reinterpret_cast<PyTypeObject*>(T->opOverload)) ||
      PyObject_TypeCheck(value, reinterpret_cast<PyTypeObject*>(T->opOverloadPacket))) {
    guardId(source, value);
    return makeVar(Var::Kind::Object, PyRef::borrow(value), source);
  }
  guardType(source, value);
  return makeVar(Var::Kind::Object, PyRef::borrow(value), source);
}

bool Translator::isConst(const VarRef& v) const {
  if (v->is(Var::Kind::Const)) return true;
  if (v->is(Var::Kind::Tuple) && !v->obj) {  // a tuple subclass's instance is no constant
    for (const VarRef& i : v->items)
      if (!isConst(i)) return false;
    return true;
  }
  return false;
}

// A Size-flagged tuple's constant is a torch.Size (Note [Symbolic shapes keep
// their type]): str(), repr() and type() of it are torch.Size's.
static PyRef sizeTyped(const VarRef& v, PyRef t) {
  if (!t || !v->torchSize) return t;
  return PyRef::steal(PyObject_CallOneArg(pyTypes()->size, t.get()));
}

PyRef Translator::constOf(const VarRef& v) {
  switch (v->kind) {
    case Var::Kind::SymScalar:
      return concrete(v)->obj;
    case Var::Kind::Const:
      if (v->name == "symslice")
        for (const VarRef& p : v->items) concrete(p);  // a plain slice: its sizes specialize
      return v->obj;
    case Var::Kind::Object:
      return v->obj;
    case Var::Kind::Set:  // a snapshot: the tracked set may change later
      if (!setOrderKnown(v, "a constant")) return {};
      return PyRef::steal(PySet_CheckExact(v->obj.get()) ? PySet_New(v->obj.get()) : PyFrozenSet_New(v->obj.get()));
    case Var::Kind::Tuple: {
      PyRef t = PyRef::steal(PyTuple_New(static_cast<Py_ssize_t>(v->items.size())));
      for (size_t i = 0; i < v->items.size(); ++i) {
        if (!isConst(v->items[i])) break;
        PyRef e = constOf(v->items[i]);
        if (!e) return {};
        PyTuple_SET_ITEM(t.get(), static_cast<Py_ssize_t>(i), e.release());
        if (i + 1 == v->items.size()) return sizeTyped(v, std::move(t));
      }
      if (v->items.empty()) return sizeTyped(v, std::move(t));
      break;
    }
    default:
      break;
  }
  fail(GB::UnsupportedType, std::string("a ") + (v->is(Var::Kind::Tensor) ? "tensor" : "non-constant value") +
                    " where a constant is needed");
  return {};
}

VarRef Translator::fromConst(PyObject* value) {
  const PyTypes* T = pyTypes();
  if (PyTuple_CheckExact(value)) {
    std::vector<VarRef> items;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(value); ++i) {
      PyObject* e = PyTuple_GET_ITEM(value, i);
      if (!isConstType(e, T)) return makeConst(PyRef::borrow(value));
      items.push_back(makeConst(PyRef::borrow(e)));
    }
    return makeSeq(Var::Kind::Tuple, std::move(items));
  }
  if (PyList_CheckExact(value)) {
    // A list computed at capture time (sorted(...), ...): a fresh list per call.
    std::vector<VarRef> items;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(value); ++i) items.push_back(fromConst(PyList_GET_ITEM(value, i)));
    return makeSeq(Var::Kind::List, std::move(items));
  }
  return makeConst(PyRef::borrow(value));
}

VarRef Translator::fromPython(PyObject* value) {
  const PyTypes* T = pyTypes();
  if (T->symSize && Py_TYPE(value) == reinterpret_cast<PyTypeObject*>(T->symSize)) {
    // A size that depends on a dynamic dim (see Note [Symbolic sizes] in
    // TranslateScalars.cpp): a graph value computed from the tensor at run time.
    PyObject* val = PyObject_GetAttrString(value, "value");
    PyObject* vid = val ? PyObject_GetAttrString(value, "vid") : nullptr;
    if (!vid) {
      Py_XDECREF(val);
      failPy(GB::Internal, "symbolic size");
      return nullptr;
    }
    auto s = makeVar(Var::Kind::SymScalar, PyRef::steal(val));
    s->vid = static_cast<int>(PyLong_AsLong(vid));
    s->name = "size";
    Py_DECREF(vid);
    return s;
  }
  if (PyObject_TypeCheck(value, reinterpret_cast<PyTypeObject*>(T->tensor)))
    return makeVar(Var::Kind::Tensor, PyRef::borrow(value));
  if (PyObject_TypeCheck(value, reinterpret_cast<PyTypeObject*>(T->device))) {
    PyObject* d = PyObject_CallFunction(T->torchDevice, "s", opts_.device.c_str());
    if (!d) {
      failPy(GB::Internal, "torch.device");
      return nullptr;
    }
    return makeConst(PyRef::steal(d));
  }
  if (isConstType(value, T) || Py_TYPE(value) == reinterpret_cast<PyTypeObject*>(T->size))
    return makeConst(PyRef::borrow(value));
  if (PyTuple_Check(value)) {
    std::vector<VarRef> items;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(value); ++i) {
      VarRef v = fromPython(PyTuple_GET_ITEM(value, i));
      if (!v) return nullptr;
      items.push_back(std::move(v));
    }
    VarRef t = makeSeq(Var::Kind::Tuple, std::move(items));
    if (T->symShape && Py_TYPE(value) == reinterpret_cast<PyTypeObject*>(T->symShape)) {
      t->torchSize = true;  // Note [Symbolic shapes keep their type]
      return t;
    }
    if (!PyTuple_CheckExact(value)) {
      // named tuples and torch.return_types: attribute access by field name
      PyObject* f = PyObject_GetAttrString(reinterpret_cast<PyObject*>(Py_TYPE(value)), "_fields");
      if (!f) {
        PyErr_Clear();
        f = PyObject_GetAttrString(reinterpret_cast<PyObject*>(Py_TYPE(value)), "__match_args__");
      }
      if (!f) PyErr_Clear();
      t->fields = PyRef::steal(f);
    }
    return t;
  }
  if (PyList_Check(value)) {
    std::vector<VarRef> items;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(value); ++i) {
      VarRef v = fromPython(PyList_GET_ITEM(value, i));
      if (!v) return nullptr;
      items.push_back(std::move(v));
    }
    return makeSeq(Var::Kind::List, std::move(items));
  }
  if (PyDict_Check(value)) {
    auto d = makeVar(Var::Kind::Dict);
    PyObject *k, *v;
    Py_ssize_t pos = 0;
    while (PyDict_Next(value, &pos, &k, &v)) {
      VarRef item = fromPython(v);
      if (!item) return nullptr;
      d->keys.push_back(PyRef::borrow(k));
      d->items.push_back(std::move(item));
    }
    return d;
  }
  fail(GB::NoMetaKernel, std::string("torch call returned a ") + Py_TYPE(value)->tp_name);
  return nullptr;
}

PyRef Translator::pythonValue(const VarRef& v) {
  const PyTypes* T = pyTypes();
  switch (v->kind) {
    case Var::Kind::SymScalar:
      if (markSyms_) {
        auto it = std::find(markSyms_->begin(), markSyms_->end(), v);
        if (it != markSyms_->end()) return host_.marker(static_cast<int>(it - markSyms_->begin()));
      }
      return concrete(v)->obj;
    case Var::Kind::Tensor:
      if (v->isNumpy() != numpyArgs_) {
        fail(numpyArgs_ ? GB::NumpyOperation : GB::UnsupportedTorchArgument,
             numpyArgs_ ? "a torch.Tensor passed to a NumPy operation (convert it with .numpy())"
                        : "an ndarray passed to a torch function (convert it with torch.from_numpy)");
        return {};
      }
      return v->obj;
    case Var::Kind::Const:
      if (v->name == "symslice") {
        // A slice with symbolic sizes: markers where they are probed, else plain values.
        PyRef p[3];
        for (size_t i = 0; i < v->items.size() && i < 3; ++i)
          if (!(p[i] = pythonValue(v->items[i]))) return {};
        PyObject* s = PySlice_New(p[0].get(), p[1].get(), v->items.size() == 3 ? p[2].get() : nullptr);
        if (!s) failPy(GB::UnsupportedType, "slice");
        return PyRef::steal(s);
      }
      return v->obj;
    case Var::Kind::Tuple:
    case Var::Kind::List: {
      Py_ssize_t n = static_cast<Py_ssize_t>(v->items.size());
      PyRef out = PyRef::steal(v->is(Var::Kind::Tuple) ? PyTuple_New(n) : PyList_New(n));
      for (Py_ssize_t i = 0; i < n; ++i) {
        PyRef e = pythonValue(v->items[static_cast<size_t>(i)]);
        if (!e) return {};
        if (v->is(Var::Kind::Tuple))
          PyTuple_SET_ITEM(out.get(), i, e.release());
        else
          PyList_SET_ITEM(out.get(), i, e.release());
      }
      return out;
    }
    case Var::Kind::Dict: {
      PyRef d = PyRef::steal(PyDict_New());
      for (size_t i = 0; i < v->keys.size(); ++i) {
        PyRef e = pythonValue(v->items[i]);
        if (!e) return {};
        PyDict_SetItem(d.get(), v->keys[i].get(), e.get());
      }
      return d;
    }
    case Var::Kind::Object:
      if (PyObject_TypeCheck(v->obj.get(), reinterpret_cast<PyTypeObject*>(T->dtype)) ||
          PyObject_TypeCheck(v->obj.get(), reinterpret_cast<PyTypeObject*>(T->device)))
        return v->obj;
      if (numpyArgs_ && PyType_Check(v->obj.get()))
        return v->obj;  // dtype-like (np.float32, float); numpy_ops.run checks it

      break;
    default:
      break;
  }
  fail(GB::UnsupportedTorchArgument, "an unsupported value passed to a torch function");
  return {};
}

int Translator::truth(const VarRef& v) {
  const PyTypes* T = pyTypes();
  if (v->is(Var::Kind::SymScalar)) {
    // An int size's truth is `size != 0` (`all(x.shape)`): a relation of sizes
    // (Note [Size relations]), which a dynamic dim's `>= 2` guard decides.
    if (isSizeSym(v) && PyLong_CheckExact(v->obj.get()))
      if (VarRef c = sizeCompare(operatorFn("ne"), v, makeConst(PyRef::steal(PyLong_FromLong(0))))) return truth(c);
    return truth(concrete(v));
  }
  switch (v->kind) {
    case Var::Kind::Tensor:
      if (PyRef k = knownValue(v, "bool")) return k.get() == Py_True ? 1 : 0;
      fail(GB::DataDependentBranch, "branch on a tensor");
      return -1;
    case Var::Kind::Const: {
      int r = PyObject_IsTrue(v->obj.get());
      if (r < 0) failPy(GB::UnsupportedType, "truth value");
      return r;
    }
    case Var::Kind::Tuple:
    case Var::Kind::List:
    case Var::Kind::Dict:
      return v->items.empty() ? 0 : 1;
    case Var::Kind::DictView:
      return v->self->items.empty() ? 0 : 1;
    case Var::Kind::UserObject:
      return userTruth(v);
    case Var::Kind::Object: {
      PyObject* o = v->obj.get();
      PyTypeObject* tp = Py_TYPE(o);
      // bool() looks __bool__ and __len__ up on the class's MRO (the slots),
      // never on its metaclass nor through a metaclass's __getattribute__.
      static PyObject* lenName = PyUnicode_InternFromString("__len__");
      static PyObject* boolName = PyUnicode_InternFromString("__bool__");
      if (PyObject_TypeCheck(o, reinterpret_cast<PyTypeObject*>(T->module))) {
        if (_PyType_Lookup(tp, lenName)) {
          Py_ssize_t n = PyObject_Length(o);
          if (n < 0) {
            failPy(GB::UnsupportedType, "len of a module");
            return -1;
          }
          return n > 0;
        }
        return 1;
      }
      if (!_PyType_Lookup(tp, boolName) && !_PyType_Lookup(tp, lenName)) return 1;
      break;
    }
    case Var::Kind::Function:
    case Var::Kind::BoundMethod:
    case Var::Kind::TensorMethod:
      return 1;
    case Var::Kind::Set:
      return PySet_GET_SIZE(v->obj.get()) > 0;
    default:
      break;
  }
  fail(GB::UnsupportedType, "truth value of an unsupported value");
  return -1;
}

bool Translator::unpack(const VarRef& v, std::vector<VarRef>& out) {
  const PyTypes* T = pyTypes();
  switch (v->kind) {
    case Var::Kind::Tuple:
    case Var::Kind::List:
      out = v->items;
      return true;
    case Var::Kind::Iter: {
      out.clear();
      for (;;) {
        VarRef x;
        if (!advance(v, x)) return false;
        if (!x) return true;
        out.push_back(std::move(x));
      }
    }
    case Var::Kind::Dict:
      out.clear();
      for (const PyRef& k : v->keys) out.push_back(makeConst(k));
      return true;
    case Var::Kind::DictView:
      out = viewItems(*v);
      return true;
    case Var::Kind::UserObject: {  // through its __iter__ (Note [Modelled library objects])
      VarRef it = userIter(v);
      return it && unpack(it, out);
    }
    case Var::Kind::Set: {
      if (!setOrderKnown(v, "iteration")) return false;
      PyObject* it = PyObject_GetIter(v->obj.get());
      if (!it) return failPy(GB::UnsupportedType, "iterating a set");
      out.clear();
      while (PyObject* e = PyIter_Next(it)) {
        PyRef r = PyRef::steal(e);
        out.push_back(isConstType(e, T) || PyTuple_Check(e) ? fromConst(e) : makeVar(Var::Kind::Object, r));
      }
      Py_DECREF(it);
      if (PyErr_Occurred()) return failPy(GB::UnsupportedType, "iterating a set");
      return true;
    }
    case Var::Kind::Const: {
      PyObject* o = v->obj.get();
      if (PyTuple_Check(o) || PyList_Check(o) || PyRange_Check(o) || PyUnicode_Check(o) || PyAnySet_Check(o)) {
        PyObject* it = PyObject_GetIter(o);
        if (!it) return failPy(GB::UnsupportedType, "unpacking");
        out.clear();
        while (PyObject* e = PyIter_Next(it)) out.push_back(makeConst(PyRef::steal(e)));
        Py_DECREF(it);
        if (PyErr_Occurred()) return failPy(GB::UnsupportedType, "unpacking");
        return true;
      }
      break;
    }
    case Var::Kind::Tensor: {
      // Eager iterates through Tensor.__iter__, which a mode would see.
      if (!noFunctionMode("iteration over a tensor")) return false;
      if (v->isNumpy()) {
        // Iterating an ndarray: its items along the first axis, as NumPy does.
        PyObject* dim = PyObject_CallMethod(v->obj.get(), "dim", nullptr);
        long nd = dim ? PyLong_AsLong(dim) : -1;
        Py_XDECREF(dim);
        if (nd <= 0) return nd < 0 ? failPy(GB::Internal, "dim") : fail(GB::NumpyOperation, "iteration over a 0-d array");
        PyObject* n0 = PyObject_CallMethod(v->obj.get(), "size", "i", 0);
        long n = n0 ? PyLong_AsLong(n0) : -1;
        Py_XDECREF(n0);
        if (n < 0) return failPy(GB::Internal, "size");
        out.clear();
        for (long i = 0; i < n; ++i) {
          VarRef e = subscr(v, makeConst(PyRef::steal(PyLong_FromLong(i))));
          if (!e) return false;
          out.push_back(std::move(e));
        }
        return true;
      }
      static PyObject* unbind = [] {
        PyObject* t = pyTypes()->tensor;
        return PyObject_GetAttrString(t, "unbind");
      }();
      // How many items there are is a Python-level fact (each becomes a value
      // of its own): in a translation with dynamic dims (the plan's, asked
      // first), a dim 0 that depends on one falls back to static shapes, as a
      // size used as a plain number does (Note [Symbolic sizes]).
      if (dynamicShapes_ < 0) {
        std::string code, detail;
        PyRef dyn = host_.call("dynamic_shapes", PyRef::steal(PyTuple_New(0)).get(), code, detail);
        if (!dyn) return fail(GB::Internal, "dynamic_shapes: " + detail);
        dynamicShapes_ = PyObject_IsTrue(dyn.get());
        if (dynamicShapes_ < 0) return failPy(GB::Internal, "dynamic_shapes");
      }
      if (dynamicShapes_ && PyObject_Size(v->obj.get()) < 0) {
        PyErr_Clear();  // a 0-d tensor has no items: unbind raises as eager does
      } else if (dynamicShapes_) {
        VarRef n = record(pyTypes()->len, {v}, {});
        if (!n || (concrete(n), failed())) return false;
      }
      VarRef r = record(unbind, {v}, {});
      if (!r) return false;
      return unpack(r, out);
    }
    case Var::Kind::Object: {
      PyObject* o = v->obj.get();
      if (PyObject_TypeCheck(o, reinterpret_cast<PyTypeObject*>(T->moduleList)) ||
          PyObject_TypeCheck(o, reinterpret_cast<PyTypeObject*>(T->sequential))) {
        PyObject* mods = PyObject_GetAttrString(o, "_modules");
        if (!mods) return failPy(GB::UnsupportedType, "_modules");
        guardModuleKeys(v);  // a child appended later must not be skipped
        out.clear();
        PyObject *k, *m;
        Py_ssize_t pos = 0;
        bool ok = true;
        while (ok && PyDict_Next(mods, &pos, &k, &m)) {
          bool found = false;
          VarRef c = moduleChild(v, k, found);
          if (!c) ok = false;
          else out.push_back(std::move(c));
        }
        Py_DECREF(mods);
        return ok;
      }
      // nn.ParameterList: its __iter__ yields self[i] for i in range(len(self)),
      // which is getattr(self, str(i)) below self._size; read as the frame
      // would read them (guarded module attributes). A subclass that changes
      // how the items are reached is not modelled.
      static PyObject* parameterList = moduleAttr("torch.nn", "ParameterList");
      if (parameterList && PyObject_TypeCheck(o, reinterpret_cast<PyTypeObject*>(parameterList))) {
        bool same = true;
        for (const char* m : {"__iter__", "__getitem__", "__len__", "__getattr__", "__getattribute__"}) {
          PyRef n = PyRef::steal(PyUnicode_InternFromString(m));
          same = same && _PyType_Lookup(Py_TYPE(o), n.get()) ==
                             _PyType_Lookup(reinterpret_cast<PyTypeObject*>(parameterList), n.get());
        }
        if (same) {
          PyRef sizeName = PyRef::steal(PyUnicode_InternFromString("_size"));
          VarRef n = getattr(v, sizeName.get());
          if (!n) return false;
          if (!n->is(Var::Kind::Const) || !PyLong_CheckExact(n->obj.get()))
            return fail(GB::UnsupportedType, "a ParameterList whose length is not a number");
          const long size = PyLong_AsLong(n->obj.get());
          std::vector<VarRef> items;
          for (long i = 0; i < size; ++i) {
            PyRef key = PyRef::steal(PyUnicode_FromFormat("%ld", i));
            VarRef item = getattr(v, key.get());
            if (!item) return false;
            items.push_back(std::move(item));
          }
          out = std::move(items);
          return true;
        }
      }
      break;
    }
    default:
      break;
  }
  return fail(GB::UnsupportedType, "unpacking an unsupported value");
}

SourceRef Translator::inputSource(const VarRef& v) const {
  if (!v->is(Var::Kind::Tensor) || v->isNumpy()) return nullptr;
  if (v->source) return v->source;
  auto it = inputMetas_.find(v->obj.get());
  return it == inputMetas_.end() ? nullptr : it->second.source;
}

bool Translator::viewBase(const VarRef& v, SourceRef& baseSource, int& baseVid) {
  baseSource = nullptr;
  baseVid = -1;
  std::string detail;  // a lookup only: whether `v` may leave the graph is asked by its caller
  if (!v->is(Var::Kind::Tensor) || v->isNumpy() || inputSource(v) || host_.valueOf(v->obj.get(), detail) < 0) {
    if (PyErr_Occurred()) PyErr_Clear();
    return false;
  }
  PyRef base = PyRef::steal(PyObject_GetAttrString(v->obj.get(), "_base"));
  if (!base || base.get() == Py_None) {
    PyErr_Clear();
    return false;
  }
  auto it = inputMetas_.find(base.get());
  if (it != inputMetas_.end()) {
    baseSource = it->second.source;
    return true;
  }
  baseVid = host_.valueOf(base.get(), detail);
  if (PyErr_Occurred()) PyErr_Clear();
  return baseVid >= 0;
}

int Translator::valueOf(const VarRef& v) {
  std::string detail;
  int id = host_.valueOf(v->obj.get(), detail);
  if (id < 0) fail(GB::UnsupportedTorchArgument, detail);
  if (id < 0 || !escapeChecks_) return id;
  std::string code;  // may the value leave the graph (Host.check_escape)?
  PyRef meta = PyRef::steal(PyTuple_Pack(1, v->obj.get()));
  if (host_.call("check_escape", meta.get(), code, detail)) return id;
  fail(hostBreak(code, GB::UnsupportedTorchArgument), detail);
  return -1;
}

}  // namespace xacc::capture::translate
