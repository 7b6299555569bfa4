// transformers' ModelOutput: an OrderedDict subclass that is also a dataclass
// (every model's forward returns one). Tracked as a Dict whose `obj` is the
// class and whose `fields` are all the dataclass's field names: the dict holds
// the fields that are not None, in field order (what ModelOutput.__post_init__
// stores); attributes read the fields (None when unset); an int or slice
// index reads `to_tuple()`. At a break or as a return value it is rebuilt as
// `cls(**dict)`, which gives the same object.
//
// `out.name = value` runs ModelOutput.__setattr__: a field's item is set and
// the attribute too. Modelled when the class's __setattr__ is ModelOutput's,
// the object was built in the frame (outside a tensor branch) and the new
// value is not None (None sets the attribute only, leaving the item: the two
// diverge). A field that holds a value (a key) is replaced in place. For a
// field without one, transformers versions differ (5.x adds the item at the
// end, 4.x sets the attribute only): which one this is, is asked of the class's
// own __setattr__ on a scratch instance (cls.__new__, no __init__); an added
// item is modelled only where it is also last in field order, so that the
// rebuilt `cls(**dict)` has eager's key order. Anything else stays GB007.
//
// Only the dataclass-generated `__init__` with ModelOutput's own
// `__post_init__` is modelled. With only the first field set and not a tensor,
// __post_init__ iterates it: a first field whose type and first element are
// known and that is no source of key/value pairs (a tuple of tensors, a number)
// is its own item, as in the usual path (firstFieldIsItsOwnItem); key/value
// pairs, a dict, an empty iterable, and anything less certain, and the methods
// ModelOutput forbids (pop, update, ...), are graph breaks.
//
// Note [Model outputs as inputs]: an instance that enters the frame through a
// source (a local of a resume function after a break, an argument) is the same
// Dict tracker, read from the object (modelOutputInput): its exact type and
// its keys in the OrderedDict's own order are guarded, each item is read from
// the dict storage (`dict.__getitem__`: guards run no method of the class),
// and each field's attribute is guarded to be its item (a key) or None (no
// key). The tracker answers attribute reads from its items, which is what the
// object answers only while the two agree: ModelOutput.__setattr__ keeps them
// so, except that setting None leaves the item, and `object.__setattr__` or
// `dict.__setitem__` can set one alone; an object where they disagree, or
// with a key that is no field, stays a plain object (as before). Writes to
// it are breaks (mutateInput, modelOutputStoreAttr), and a return or a break
// hands back the object itself, through its source (Codegen).
#include <cstring>

#include "PyTypes.h"
#include "Translator.h"

namespace xacc::capture::translate {

namespace {

/// transformers.utils.generic.ModelOutput when transformers is imported.
PyObject* modelOutputBase() {
  PyObject* m = PyDict_GetItemString(PyImport_GetModuleDict(), "transformers.utils.generic");  // borrowed
  if (!m) return nullptr;
  PyObject* c = PyObject_GetAttrString(m, "ModelOutput");
  if (!c) {
    PyErr_Clear();
    return nullptr;
  }
  Py_DECREF(c);  // the module keeps it alive
  return PyType_Check(c) ? c : nullptr;
}

bool isGeneratedFunction(PyObject* f) {
  if (!PyFunction_Check(f)) return false;
  PyObject* fn = reinterpret_cast<PyCodeObject*>(PyFunction_GET_CODE(f))->co_filename;
  return PyUnicode_Check(fn) && PyUnicode_CompareWithASCIIString(fn, "<string>") == 0;
}

/// Whether `f` is the wrapper transformers' ModelOutput metaclass
/// (_BCCacheNameMeta, transformers >= 5.2x) puts around every dataclass __init__:
/// it renames the keyword arguments `past_key_values`/`cache_params` to `cache`
/// (with a one-time warning) and calls the generated __init__ (`__wrapped__`).
bool isCacheNameWrapper(PyObject* f) {
  if (!PyFunction_Check(f)) return false;
  // functools.wraps copied the wrapped function's names; the code object keeps its own.
  auto* code = reinterpret_cast<PyCodeObject*>(PyFunction_GET_CODE(f));
  PyObject* file = code->co_filename;
  if (!PyUnicode_Check(code->co_qualname) || !PyUnicode_Check(file) ||
      PyUnicode_CompareWithASCIIString(code->co_qualname, "_BCCacheNameMeta.__setattr__.<locals>.__init__") != 0)
    return false;
  PyRef suffix = PyRef::steal(PyUnicode_FromString("transformers/utils/generic.py"));
  return PyUnicode_Tailmatch(file, suffix.get(), 0, PY_SSIZE_T_MAX, 1) == 1;
}

/// The class's __init__ is the one @dataclass generated, or that one inside the
/// metaclass's name-compatibility wrapper (`*wrapped` says which).
bool generatedInit(PyObject* cls, bool* wrapped) {
  *wrapped = false;
  PyObject* init = PyObject_GetAttrString(cls, "__init__");
  if (!init) {
    PyErr_Clear();
    return false;
  }
  PyRef i = PyRef::steal(init);
  if (isGeneratedFunction(init)) return true;
  if (!isCacheNameWrapper(init)) return false;
  PyObject* inner = PyObject_GetAttrString(init, "__wrapped__");
  if (!inner) {
    PyErr_Clear();
    return false;
  }
  PyRef in = PyRef::steal(inner);
  *wrapped = isGeneratedFunction(inner);
  return *wrapped;
}

/// Whether a real constant is a (list, tuple) instance of two items whose first is
/// a str: the key/value pair ModelOutput.__post_init__ looks for.
bool isKeyValuePair(PyObject* o) {
  if (PyTuple_Check(o)) return PyTuple_GET_SIZE(o) == 2 && PyUnicode_Check(PyTuple_GET_ITEM(o, 0));
  if (PyList_Check(o)) return PyList_GET_SIZE(o) == 2 && PyUnicode_Check(PyList_GET_ITEM(o, 0));
  return false;
}

/// ModelOutput.__post_init__ with every field but the first None and a first field
/// that is not a tensor: a dict, or an iterable whose first element is a (str, value)
/// pair, sets fields from its pairs; an empty iterable leaves no item (the attribute
/// None); any other iterable, and a value iter() refuses, becomes the first field's
/// item, as when other fields are set. True only in that last case, and only where the
/// translator knows the type and first element exactly: a plain tuple or list tracker,
/// or an exact int/float/bool/complex/str/bytes/tuple constant. Anything else
/// (dict, a tuple subclass, an object whose __iter__ it would have to run) is false.
bool firstFieldIsItsOwnItem(const VarRef& first) {
  if (first->is(Var::Kind::SymScalar)) return true;  // an int or float: iter() raises TypeError
  if (first->is(Var::Kind::Const)) {
    PyObject* o = first->obj.get();
    if (PyLong_CheckExact(o) || PyFloat_CheckExact(o) || PyBool_Check(o) || PyComplex_CheckExact(o)) return true;
    if (PyUnicode_CheckExact(o)) return PyUnicode_GET_LENGTH(o) > 0;  // items are 1-char strings
    if (PyBytes_CheckExact(o)) return PyBytes_GET_SIZE(o) > 0;        // items are ints
    if (PyTuple_CheckExact(o)) return PyTuple_GET_SIZE(o) > 0 && !isKeyValuePair(PyTuple_GET_ITEM(o, 0));
    return false;
  }
  bool plainTuple = first->is(Var::Kind::Tuple) && !first->fields && !first->obj && !first->self;
  if (!plainTuple && !first->is(Var::Kind::List)) return false;
  if (first->items.empty()) return false;
  const VarRef& e = first->items[0];
  switch (e->kind) {
    case Var::Kind::Tensor:
    case Var::Kind::SymScalar:
    case Var::Kind::Dict:  // a dict or a ModelOutput: not a list or tuple
      return true;
    case Var::Kind::Const:
      return !isKeyValuePair(e->obj.get());
    case Var::Kind::Tuple:
      if (e->fields || e->obj || e->self) return false;  // a subclass: its own __len__ may differ
      [[fallthrough]];
    case Var::Kind::List:
      return !(e->items.size() == 2 && e->items[0]->is(Var::Kind::Const) && PyUnicode_Check(e->items[0]->obj.get()));
    default:
      return false;
  }
}

}  // namespace

bool isModelOutputClass(PyObject* cls) {
  PyObject* base = modelOutputBase();
  if (!base || !PyType_Check(cls) || cls == base) return false;
  if (!PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(cls), reinterpret_cast<PyTypeObject*>(base))) return false;
  PyObject* post = PyObject_GetAttrString(cls, "__post_init__");
  PyObject* basePost = PyObject_GetAttrString(base, "__post_init__");
  bool wrapped = false;
  bool ok = post && basePost && post == basePost && generatedInit(cls, &wrapped) &&
            PyObject_HasAttrString(cls, "__dataclass_fields__");
  Py_XDECREF(post);
  Py_XDECREF(basePost);
  if (PyErr_Occurred()) PyErr_Clear();
  return ok;
}

/// The names of the dataclass fields of `cls` (a new tuple), or null with no error set.
static PyRef fieldNames(PyObject* cls) {
  PyRef dc = PyRef::steal(PyImport_ImportModule("dataclasses"));
  PyRef fl = dc ? PyRef::steal(PyObject_CallMethod(dc.get(), "fields", "O", cls)) : PyRef();
  if (!fl || !PyTuple_Check(fl.get())) {
    PyErr_Clear();
    return {};
  }
  Py_ssize_t n = PyTuple_GET_SIZE(fl.get());
  PyRef names = PyRef::steal(PyTuple_New(n));
  for (Py_ssize_t i = 0; names && i < n; ++i) {
    PyObject* name = PyObject_GetAttrString(PyTuple_GET_ITEM(fl.get(), i), "name");
    if (!name || !PyUnicode_CheckExact(name)) {
      Py_XDECREF(name);
      PyErr_Clear();
      return {};
    }
    PyTuple_SET_ITEM(names.get(), i, name);
  }
  return names;
}

VarRef Translator::modelOutputInput(PyObject* value, const SourceRef& source) {
  PyObject* cls = reinterpret_cast<PyObject*>(Py_TYPE(value));
  if (!source || !PyODict_Check(value) || !isModelOutputClass(cls)) return nullptr;
  PyRef names = fieldNames(cls);
  PyRef keys = PyRef::steal(PySequence_List(value));  // the OrderedDict's own order
  if (!names || !keys || PyTuple_GET_SIZE(names.get()) == 0) {
    PyErr_Clear();
    return nullptr;
  }
  // Every key a field; every field's attribute its item or None (see the Note).
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(keys.get()); ++i) {
    int in = PySequence_Contains(names.get(), PyList_GET_ITEM(keys.get(), i));
    if (in != 1) {
      PyErr_Clear();
      return nullptr;
    }
  }
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(names.get()); ++i) {
    PyObject* f = PyTuple_GET_ITEM(names.get(), i);
    PyObject* item = PyDict_GetItemWithError(value, f);  // borrowed
    PyRef attr = PyRef::steal(PyObject_GetAttr(value, f));
    if (!attr || PyErr_Occurred() || attr.get() != (item ? item : Py_None)) {
      PyErr_Clear();
      return nullptr;
    }
  }
  guardType(source, value);
  guardKeys(source, value);
  auto d = makeVar(Var::Kind::Dict, PyRef::borrow(cls), source);
  d->fields = names;
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(keys.get()); ++i) {
    PyObject* k = PyList_GET_ITEM(keys.get(), i);
    PyObject* v = PyDict_GetItemWithError(value, k);  // borrowed
    if (!v) {
      failPy(GB::Internal, "a ModelOutput item");
      return nullptr;
    }
    VarRef item = wrap(v, Source::dictItem(source, k));
    if (!item) return nullptr;
    d->keys.push_back(PyRef::borrow(k));
    d->items.push_back(std::move(item));
  }
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(names.get()); ++i) {
    PyObject* f = PyTuple_GET_ITEM(names.get(), i);
    SourceRef a = Source::attr(source, f);
    if (PyDict_GetItemWithError(value, f))
      guardSame(a, Source::dictItem(source, f), true);
    else
      guardId(a, Py_None);
  }
  return containerInput(value, d);
}

VarRef Translator::modelOutput(PyObject* cls, std::vector<VarRef>& args,
                               std::vector<std::pair<PyRef, VarRef>>& kwargs) {
  const PyTypes* T = pyTypes();
  PyObject* dc = PyImport_ImportModule("dataclasses");
  if (!dc) {
    failPy(GB::Internal, "import dataclasses");
    return nullptr;
  }
  PyRef dcm = PyRef::steal(dc);
  PyObject* fl = PyObject_CallMethod(dc, "fields", "O", cls);
  if (!fl) {
    failPy(GB::UntraceableCall, "dataclasses.fields");
    return nullptr;
  }
  PyRef fields = PyRef::steal(fl);
  PyRef missing = PyRef::steal(PyObject_GetAttrString(dc, "MISSING"));
  Py_ssize_t n = PyTuple_GET_SIZE(fl);
  if (n == 0 || static_cast<Py_ssize_t>(args.size()) > n) {
    fail(GB::UntraceableCall, std::string(reinterpret_cast<PyTypeObject*>(cls)->tp_name) + " with unexpected arguments");
    return nullptr;
  }
  std::vector<VarRef> values(static_cast<size_t>(n));
  PyRef names = PyRef::steal(PyTuple_New(n));
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* f = PyTuple_GET_ITEM(fl, i);
    PyObject* name = PyObject_GetAttrString(f, "name");
    if (!name) {
      failPy(GB::Internal, "dataclass field name");
      return nullptr;
    }
    PyTuple_SET_ITEM(names.get(), i, name);
    if (i < static_cast<Py_ssize_t>(args.size())) values[static_cast<size_t>(i)] = args[static_cast<size_t>(i)];
  }
  bool wrapped = false;
  generatedInit(cls, &wrapped);
  for (auto& [k, v] : kwargs) {
    // The metaclass's wrapper renames these (and warns once): left to Python.
    if (wrapped && (PyUnicode_CompareWithASCIIString(k.get(), "past_key_values") == 0 ||
                    PyUnicode_CompareWithASCIIString(k.get(), "cache_params") == 0)) {
      fail(GB::UntraceableCall, std::string("argument '") + PyUnicode_AsUTF8(k.get()) + "' renamed by " +
                        reinterpret_cast<PyTypeObject*>(cls)->tp_name + ".__init__");
      return nullptr;
    }
    bool found = false;
    for (Py_ssize_t i = 0; i < n && !found; ++i) {
      if (PyUnicode_Compare(PyTuple_GET_ITEM(names.get(), i), k.get()) != 0) continue;
      if (values[static_cast<size_t>(i)]) {
        fail(GB::RaisesException, std::string("argument '") + PyUnicode_AsUTF8(k.get()) + "' given twice");
        return nullptr;
      }
      values[static_cast<size_t>(i)] = v;
      found = true;
    }
    if (!found) {
      fail(GB::RaisesException, std::string("unexpected argument '") + PyUnicode_AsUTF8(k.get()) + "'");
      return nullptr;
    }
  }
  for (Py_ssize_t i = 0; i < n; ++i) {
    if (values[static_cast<size_t>(i)]) continue;
    PyObject* def = PyObject_GetAttrString(PyTuple_GET_ITEM(fl, i), "default");
    if (!def) {
      failPy(GB::Internal, "dataclass field default");
      return nullptr;
    }
    PyRef d = PyRef::steal(def);
    if (def == missing.get()) {  // a required field not given, or a default_factory
      fail(GB::UntraceableCall, std::string(reinterpret_cast<PyTypeObject*>(cls)->tp_name) + " field without a value");
      return nullptr;
    }
    if (def != Py_None && !PyLong_CheckExact(def) && !PyFloat_CheckExact(def) && !PyBool_Check(def) &&
        !PyUnicode_CheckExact(def)) {
      fail(GB::UntraceableCall, std::string(reinterpret_cast<PyTypeObject*>(cls)->tp_name) + " field default of another type");
      return nullptr;
    }
    values[static_cast<size_t>(i)] = makeConst(d);
  }
  auto isNone = [](const VarRef& v) { return v->is(Var::Kind::Const) && v->obj.get() == Py_None; };
  bool othersNone = true;
  for (Py_ssize_t i = 1; i < n; ++i) othersNone = othersNone && isNone(values[static_cast<size_t>(i)]);
  const VarRef& first = values[0];
  if (othersNone && !isNone(first) && !(first->is(Var::Kind::Tensor) && !first->isNumpy()) &&
      !firstFieldIsItsOwnItem(first)) {
    // __post_init__ would read the first field as key/value pairs (or drop an empty one).
    fail(GB::UntraceableCall, std::string(reinterpret_cast<PyTypeObject*>(cls)->tp_name) + " built from one non-tensor value");
    return nullptr;
  }
  (void)T;
  auto d = makeVar(Var::Kind::Dict, PyRef::borrow(cls));
  d->fields = names;
  for (Py_ssize_t i = 0; i < n; ++i) {
    if (isNone(values[static_cast<size_t>(i)])) continue;
    d->keys.push_back(PyRef::borrow(PyTuple_GET_ITEM(names.get(), i)));
    d->items.push_back(values[static_cast<size_t>(i)]);
  }
  return d;
}

VarRef Translator::modelOutputAttr(const VarRef& obj, PyObject* name) {
  for (size_t j = 0; j < obj->keys.size(); ++j)
    if (PyUnicode_Compare(obj->keys[j].get(), name) == 0) return obj->items[j];
  PyObject* f = obj->fields.get();
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(f); ++i)
    if (PyUnicode_Compare(PyTuple_GET_ITEM(f, i), name) == 0) return makeConst(PyRef::borrow(Py_None));
  const char* n = PyUnicode_AsUTF8(name);
  for (const char* ok : {"to_tuple", "keys", "values", "items", "get"})
    if (std::strcmp(n, ok) == 0) {
      auto m = makeVar(Var::Kind::ContainerMethod);
      m->self = obj;
      m->name = n;
      return m;
    }
  fail(GB::UnmodeledAttribute, std::string(".") + n + " of a " + reinterpret_cast<PyTypeObject*>(obj->obj.get())->tp_name);
  return nullptr;
}

bool Translator::modelOutputStoreAttr(const VarRef& obj, PyObject* name, const VarRef& value) {
  auto* tp = reinterpret_cast<PyTypeObject*>(obj->obj.get());
  std::string what = std::string(".") + PyUnicode_AsUTF8(name) + " = ... on a " + tp->tp_name;
  static PyObject* setattrName = PyUnicode_InternFromString("__setattr__");
  PyObject* base = modelOutputBase();
  if (!base || _PyType_Lookup(tp, setattrName) != _PyType_Lookup(reinterpret_cast<PyTypeObject*>(base), setattrName))
    return fail(GB::AttributeWrite, what + " (its own __setattr__)");
  if (obj->source || branchDepth_ > 0) return fail(GB::AttributeWrite, what);
  // transformers renames these (past_key_values -> cache) in some versions.
  if (PyUnicode_CompareWithASCIIString(name, "past_key_values") == 0 ||
      PyUnicode_CompareWithASCIIString(name, "cache_params") == 0)
    return fail(GB::AttributeWrite, what + " (a renamed cache field)");
  if (value->is(Var::Kind::Const) && value->obj.get() == Py_None)
    return fail(GB::AttributeWrite, what + " (None: the item keeps its value)");
  for (size_t j = 0; j < obj->keys.size(); ++j) {
    int eq = PyUnicode_Compare(obj->keys[j].get(), name);
    if (eq == -1 && PyErr_Occurred()) PyErr_Clear();
    if (eq != 0) continue;
    obj->items[j] = value;
    return true;
  }
  // A field without a value: its position in field order, after every key's.
  PyObject* f = obj->fields.get();
  Py_ssize_t at = -1, lastKey = -1;
  for (Py_ssize_t i = 0; f && i < PyTuple_GET_SIZE(f); ++i) {
    PyObject* fn = PyTuple_GET_ITEM(f, i);
    if (PyUnicode_Compare(fn, name) == 0) at = i;
    for (const PyRef& k : obj->keys)
      if (PyUnicode_Compare(fn, k.get()) == 0) lastKey = i;
  }
  if (at < 0) return fail(GB::AttributeWrite, what + " (not a field)");
  if (at < lastKey) return fail(GB::AttributeWrite, what + " (a new item before a later field's)");
  PyRef empty = PyRef::steal(PyTuple_New(0));
  PyRef scratch = PyRef::steal(tp->tp_new(tp, empty.get(), nullptr));
  PyRef marker = PyRef::steal(PyLong_FromLong(1));
  int added = scratch && PyObject_SetAttr(scratch.get(), name, marker.get()) == 0
                  ? PyDict_Contains(scratch.get(), name)
                  : -1;
  if (added < 0) return failPy(GB::AttributeWrite, what + " (asking the class's __setattr__)");
  if (!added) return fail(GB::AttributeWrite, what + " (this ModelOutput sets the attribute only)");
  obj->keys.push_back(PyRef::borrow(name));
  obj->items.push_back(value);
  return true;
}

}  // namespace xacc::capture::translate
