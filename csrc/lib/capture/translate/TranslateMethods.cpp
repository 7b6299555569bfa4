// Method calls: Tensor methods (recorded through the host on metas), methods
// of list, tuple and dict trackers, and super() with the attributes read
// through it. Device-moving Tensor methods are erased: every captured tensor
// lives on the capture target, so `.cuda()`, `.cpu()` and device-only `.to()`
// are identities and a dtype-changing `.to()` keeps only its dtype.
#include <algorithm>
#include <cstring>

#include "PyTypes.h"
#include "Translator.h"

namespace xacc::capture::translate {

namespace {

bool isA(PyObject* o, PyObject* type) {
  return PyObject_TypeCheck(o, reinterpret_cast<PyTypeObject*>(type));
}

bool isDeviceLike(const VarRef& v) {
  if (!v->is(Var::Kind::Const)) return false;
  PyObject* o = v->obj.get();
  if (isA(o, pyTypes()->device)) return true;
  if (PyUnicode_Check(o)) {
    PyObject* d = PyObject_CallOneArg(pyTypes()->torchDevice, o);
    if (!d) {
      PyErr_Clear();
      return false;
    }
    Py_DECREF(d);
    return true;
  }
  return PyLong_CheckExact(o);  // .cuda(0) / .to(0)
}

}  // namespace

VarRef Translator::tensorMethod(const VarRef& tm, std::vector<VarRef>& args,
                                std::vector<std::pair<PyRef, VarRef>>& kwargs) {
  const std::string& name = tm->name;
  const VarRef& t = tm->self;
  if (t->isNumpy()) return numpyMethod(tm, args, kwargs);
  if (!functionModes_.empty()) {
    // Eager calls the mode with Tensor.<name> itself: no rewrite or known
    // answer of the cases below (Note [Function modes in the frame]).
    PyRef method = PyRef::steal(PyObject_GetAttrString(pyTypes()->tensor, name.c_str()));
    if (!method) {
      failPy(GB::UnmodeledAttribute, "Tensor." + name);
      return nullptr;
    }
    std::vector<VarRef> all{t};
    all.insert(all.end(), args.begin(), args.end());
    return record(method.get(), all, kwargs);
  }
  if (name == "numpy" && numpyEnabled()) return tensorToNumpy(t, args, kwargs);
  if (name == "cuda" || name == "cpu" || name == "xpu") return t;
  if (name == "type") return tensorType(t, args, kwargs);
  if (name == "to") {
    std::vector<std::pair<PyRef, VarRef>> kw;
    for (auto& [k, v] : kwargs) {
      const char* s = PyUnicode_AsUTF8(k.get());
      if (strcmp(s, "device") && strcmp(s, "non_blocking")) kw.emplace_back(k, v);
    }
    std::vector<VarRef> rest;
    for (auto& a : args)
      if (!isDeviceLike(a)) rest.push_back(a);
    if (!rest.empty() && rest[0]->is(Var::Kind::Tensor)) {
      PyObject* dt = PyObject_GetAttrString(rest[0]->obj.get(), "dtype");
      if (!dt) {
        failPy(GB::Internal, "dtype");
        return nullptr;
      }
      rest[0] = makeConst(PyRef::steal(dt));
    }
    if (rest.empty() && kw.empty()) return t;
    args = std::move(rest);
    kwargs = std::move(kw);
  }
  static const char* const kKnown[][2] = {
      {"item", "item"}, {"__bool__", "bool"}, {"__int__", "int"}, {"__float__", "float"}, {"__index__", "index"}};
  if (args.empty() && kwargs.empty())
    for (const auto& [method, conv] : kKnown)
      if (name == method)
        if (PyRef k = knownValue(t, conv)) return makeConst(std::move(k));  // Note [Known tensor values]
  if (name == "item" && args.empty() && kwargs.empty()) {
    VarRef v = itemForBranch(t);  // `if t.item() > c:` -> a ctrl.if on the tensor
    if (v || failed()) return v;
  }
  static const char* kReadBack[] = {"item", "tolist", "numpy", "__bool__", "__int__", "__float__"};
  for (const char* r : kReadBack)
    if (name == r) {
      fail(GB::TensorReadBack, "Tensor." + name + "()");
      return nullptr;
    }
  if (name == "requires_grad_") {
    // requires_grad_(False) on a tensor that does not require grad changes
    // nothing and returns the tensor itself (its meta twin's flag is eager's:
    // input flags are guarded, grad-mode regions are recorded). Any other
    // use sets the flag, which a graph cannot: it runs in Python (below).
    VarRef flag = args.size() == 1 && kwargs.empty() ? args[0] : nullptr;
    if (args.empty() && kwargs.size() == 1 && PyUnicode_CompareWithASCIIString(kwargs[0].first.get(), "requires_grad") == 0)
      flag = kwargs[0].second;
    PyRef rg = PyRef::steal(PyObject_GetAttrString(t->obj.get(), "requires_grad"));
    if (!rg) PyErr_Clear();
    if (flag && flag->is(Var::Kind::Const) && flag->obj.get() == Py_False && rg.get() == Py_False) return t;
    if (args.empty() && kwargs.empty()) flag = makeConst(PyRef::borrow(Py_True));
    if (flag && isConst(flag) && PyBool_Check(flag->obj.get()) && !t->source && !inputSource(t)) {
      // A tensor the graph made (Note [Tensors made leaves] in host.py): the
      // flag is set on its meta twin, which then answers is_leaf,
      // requires_grad and grad_fn as eager's tensor would; no tensor whose
      // history reaches it may leave the graph.
      std::string code, detail;
      PyRef a = PyRef::steal(PyTuple_Pack(2, t->obj.get(), flag->obj.get()));
      escapeChecks_ = true;  // Note [Escape checks] in Translator.h
      if (!host_.call("set_requires_grad", a.get(), code, detail)) {
        fail(hostBreak(code, GB::UntraceableCall), detail);
        return nullptr;
      }
      return t;
    }
  }
  // requires_grad_ and detach_ change the caller's tensor itself, which a graph cannot:
  // they run in Python.
  static const char* kOpaque[] = {"backward", "register_hook", "retain_grad", "data_ptr", "storage",
                                  "untyped_storage", "requires_grad_", "detach_"};
  for (const char* r : kOpaque)
    if (name == r) {
      fail(GB::UntraceableCall, "Tensor." + name + "()");
      return nullptr;
    }
  PyObject* m = PyObject_GetAttrString(pyTypes()->tensor, name.c_str());
  if (!m) {
    failPy(GB::UnmodeledAttribute, "Tensor." + name);
    return nullptr;
  }
  PyRef method = PyRef::steal(m);
  std::vector<VarRef> all{t};
  all.insert(all.end(), args.begin(), args.end());
  return record(method.get(), all, kwargs);
}

VarRef Translator::tensorType(const VarRef& t, std::vector<VarRef>& args,
                              std::vector<std::pair<PyRef, VarRef>>& kwargs) {
  // Tensor.type(dtype=None, non_blocking=False): without a type, its name
  // ("torch.FloatTensor"); else the tensor converted to that type (the tensor
  // itself when it has it already). The type may be a dtype, a name or a legacy
  // tensor class. Captured tensors are CPU tensors.
  auto bad = [&](const std::string& what, bool py = false) -> VarRef {
    if (py) failPy(GB::UnsupportedType, what);
    else fail(GB::UnsupportedType, what);
    return nullptr;
  };
  VarRef type = args.empty() ? nullptr : args[0];
  if (args.size() > 2) return bad("Tensor.type arguments");
  for (auto& [k, v] : kwargs) {
    const char* s = PyUnicode_AsUTF8(k.get());
    if (!strcmp(s, "dtype")) type = v;
    else if (strcmp(s, "non_blocking")) return bad(std::string("Tensor.type(") + s + "=...)");
  }
  // A CPU tensor of the same dtype answers for the meta twin (whose name is "torch.meta.FloatTensor").
  PyRef dtype = PyRef::steal(PyObject_GetAttrString(t->obj.get(), "dtype"));
  PyRef empty = PyRef::steal(moduleAttr("torch", "empty"));
  PyRef probe = dtype && empty ? PyRef::steal(PyObject_CallFunction(empty.get(), "i", 0)) : PyRef();
  if (probe) probe = PyRef::steal(PyObject_CallMethod(probe.get(), "to", "O", dtype.get()));
  if (!probe) return bad("Tensor.type", true);
  if (!type || (type->is(Var::Kind::Const) && type->obj.get() == Py_None)) {
    PyObject* r = PyObject_CallMethod(probe.get(), "type", nullptr);
    if (!r) return bad("Tensor.type()", true);
    return makeConst(PyRef::steal(r));
  }
  if (!type->is(Var::Kind::Const) && !(type->is(Var::Kind::Object) && PyType_Check(type->obj.get())))
    return bad("Tensor.type of a value that is not a constant");
  PyRef converted = PyRef::steal(PyObject_CallMethod(probe.get(), "type", "O", type->obj.get()));
  if (!converted) return bad("Tensor.type", true);
  PyRef isCpu = PyRef::steal(PyObject_GetAttrString(converted.get(), "is_cpu"));
  if (isCpu.get() != Py_True) return bad("Tensor.type to a type that is not a CPU type");
  PyRef target = PyRef::steal(PyObject_GetAttrString(converted.get(), "dtype"));
  PyRef to = PyRef::steal(PyObject_GetAttrString(pyTypes()->tensor, "to"));
  if (!target || !to) return bad("Tensor.type", true);
  return record(to.get(), {t, makeConst(target)}, {});
}

VarRef Translator::containerMethod(const VarRef& obj, const std::string& name, std::vector<VarRef>& args,
                                   std::vector<std::pair<PyRef, VarRef>>& kwargs) {
  if (obj->is(Var::Kind::InstanceDict) && name == "update" && args.size() == 1 && kwargs.empty() &&
      args[0]->is(Var::Kind::Dict)) {
    // Note [Instance dicts]: `obj.__dict__.update(d)` stores each entry in the
    // instance dict as dict.update does (no descriptor, no __setattr__): an
    // existing name keeps its place, a new one goes last.
    Var& target = *obj->self;
    for (const PyRef& k : args[0]->keys)
      if (!PyUnicode_CheckExact(k.get())) {
        fail(GB::UnsupportedType, "obj.__dict__.update with a key that is not a str");
        return nullptr;
      }
    for (size_t i = 0; i < args[0]->keys.size(); ++i) {
      const PyRef& k = args[0]->keys[i];
      size_t j = 0;
      while (j < target.keys.size() && PyUnicode_Compare(target.keys[j].get(), k.get()) != 0) ++j;
      if (j < target.keys.size()) {
        target.items[j] = args[0]->items[i];
      } else {
        target.keys.push_back(k);
        target.items.push_back(args[0]->items[i]);
      }
    }
    return makeConst(PyRef::borrow(Py_None));
  }
  if (obj->is(Var::Kind::InstanceDict) && (name == "keys" || name == "values" || name == "items") && args.empty() &&
      kwargs.empty()) {
    // Note [Instance dicts]: a live view, over the object's attributes themselves.
    auto view = makeVar(Var::Kind::DictView);
    view->self = obj->self;
    view->name = name;
    return view;
  }
  if (obj->is(Var::Kind::InstanceDict)) {  // Note [Instance dicts]: get/copy read the dict as it is now
    VarRef now = instanceDictNow(obj);
    return now ? containerMethod(now, name, args, kwargs) : nullptr;
  }
  if (PyObject* tp = typeOf(obj); tp && !isModelOutputVar(obj)) {
    // A method with a Python reference (polyfills.py: list.sort, dict.popitem ...),
    // looked up on the value's exact type, runs as that reference.
    PyObject* nameObj = PyUnicode_FromString(name.c_str());
    PyObject* desc = nameObj ? _PyType_Lookup(reinterpret_cast<PyTypeObject*>(tp), nameObj) : nullptr;  // borrowed
    Py_XDECREF(nameObj);
    if (desc) {
      std::vector<VarRef> all{obj};
      all.insert(all.end(), args.begin(), args.end());
      if (VarRef r = polyfill(desc, all, kwargs); r || failed()) return r;
    }
  }
  if (!kwargs.empty() && !(obj->is(Var::Kind::Dict) && name == "update")) {
    fail(GB::UnsupportedType, "keyword arguments to ." + name);
    return nullptr;
  }
  auto none = [] { return makeConst(PyRef::borrow(Py_None)); };
  auto needArgs = [&](size_t n) {
    if (args.size() < n) {
      fail(GB::UnsupportedType, "missing argument to ." + name);
      return false;
    }
    return true;
  };
  if (obj->is(Var::Kind::List)) {
    if (name == "append" || name == "extend" || name == "insert" || name == "pop" || name == "clear" ||
        name == "reverse") {
      if (!mutateInput(obj, "list passed in from outside")) return nullptr;
      auto& items = obj->items;
      if (name == "append") {
        if (!needArgs(1)) return nullptr;
        items.push_back(args[0]);
      } else if (name == "extend") {
        std::vector<VarRef> more;
        if (!needArgs(1) || !unpack(args[0], more)) return nullptr;
        items.insert(items.end(), more.begin(), more.end());
      } else if (name == "insert") {
        if (!needArgs(2)) return nullptr;
        PyRef i = constOf(args[0]);
        if (!i) return nullptr;
        Py_ssize_t n = static_cast<Py_ssize_t>(items.size()), k = PyLong_AsSsize_t(i.get());
        if (k < 0) k = std::max<Py_ssize_t>(0, k + n);
        k = std::min(k, n);
        items.insert(items.begin() + k, args[1]);
      } else if (name == "pop") {
        Py_ssize_t n = static_cast<Py_ssize_t>(items.size()), k = -1;
        if (!args.empty()) {
          PyRef i = constOf(args[0]);
          if (!i) return nullptr;
          k = PyLong_AsSsize_t(i.get());
        }
        if (k < 0) k += n;
        if (k < 0 || k >= n) {
          fail(GB::RaisesException, "pop index out of range");
          return nullptr;
        }
        VarRef v = items[static_cast<size_t>(k)];
        items.erase(items.begin() + k);
        return v;
      } else if (name == "clear") {
        items.clear();
      } else {
        std::reverse(items.begin(), items.end());
      }
      return none();
    }
    if (name == "copy") return makeSeq(Var::Kind::List, obj->items);
  }
  if ((obj->is(Var::Kind::List) || obj->is(Var::Kind::Tuple)) && (name == "index" || name == "count")) {
    auto tuple = makeSeq(Var::Kind::Tuple, obj->items);
    PyRef vals = constOf(tuple);
    if (!vals || !needArgs(1)) return nullptr;
    PyRef a = constOf(args[0]);
    if (!a) return nullptr;
    PyObject* r = PyObject_CallMethod(vals.get(), name.c_str(), "O", a.get());
    if (!r) {
      failPy(GB::UnsupportedType, "." + name);
      return nullptr;
    }
    return makeConst(PyRef::steal(r));
  }
  if (isModelOutputVar(obj)) {
    if (name == "to_tuple" && args.empty()) return makeSeq(Var::Kind::Tuple, obj->items);
    if (name != "get" && name != "keys" && name != "values" && name != "items") {
      fail(GB::UnsupportedType, "." + name + " of a " + reinterpret_cast<PyTypeObject*>(obj->obj.get())->tp_name);
      return nullptr;
    }
  }
  if (obj->is(Var::Kind::Dict)) {
    if (name == "__getitem__") {  // dict.__getitem__ (superAttr: a dict subclass without __missing__)
      if (args.size() != 1) {
        fail(GB::RaisesException, "dict.__getitem__ takes one argument (raises TypeError)");
        return nullptr;
      }
      PyRef k = constOf(args[0]);
      if (!k) return nullptr;
      for (size_t j = 0; j < obj->keys.size(); ++j)
        if (PyObject_RichCompareBool(obj->keys[j].get(), k.get(), Py_EQ) == 1) return obj->items[j];
      raiseNew(PyExc_KeyError, {k}, "missing key (raises KeyError)");
      return nullptr;
    }
    if (name == "get") {
      if (!needArgs(1)) return nullptr;
      PyRef k = constOf(args[0]);
      if (!k) return nullptr;
      for (size_t j = 0; j < obj->keys.size(); ++j)
        if (PyObject_RichCompareBool(obj->keys[j].get(), k.get(), Py_EQ) == 1) return obj->items[j];
      return args.size() > 1 ? args[1] : none();
    }
    if (name == "keys" || name == "values" || name == "items") {
      if (!args.empty()) {
        fail(GB::UnsupportedType, "." + name + " with arguments");
        return nullptr;
      }
      auto view = makeVar(Var::Kind::DictView);
      view->self = obj;
      view->name = name;
      return view;
    }
    if (name == "copy") {
      auto d = makeVar(Var::Kind::Dict);
      d->keys = obj->keys;
      d->items = obj->items;
      return d;
    }
    if (name == "update" || name == "pop" || name == "setdefault" || name == "clear") {
      if (!mutateInput(obj, "dict passed in from outside")) return nullptr;
      auto find = [&](PyObject* k) -> int {
        for (size_t j = 0; j < obj->keys.size(); ++j)
          if (PyObject_RichCompareBool(obj->keys[j].get(), k, Py_EQ) == 1) return static_cast<int>(j);
        return -1;
      };
      if (name == "clear") {
        obj->keys.clear();
        obj->items.clear();
        return none();
      }
      if (name == "update") {
        if (args.size() > 1 || (args.size() == 1 && !args[0]->is(Var::Kind::Dict))) {
          fail(GB::UnsupportedType, "dict.update of a non-dict");
          return nullptr;
        }
        std::vector<std::pair<PyRef, VarRef>> all;
        if (!args.empty())
          for (size_t j = 0; j < args[0]->keys.size(); ++j) all.emplace_back(args[0]->keys[j], args[0]->items[j]);
        all.insert(all.end(), kwargs.begin(), kwargs.end());
        for (auto& [k, v] : all) {
          int j = find(k.get());
          if (j >= 0) {
            obj->items[static_cast<size_t>(j)] = v;
          } else {
            obj->keys.push_back(k);
            obj->items.push_back(v);
          }
        }
        return none();
      }
      if (!needArgs(1)) return nullptr;
      PyRef k = constOf(args[0]);
      if (!k) return nullptr;
      int j = find(k.get());
      if (name == "pop") {
        if (j < 0) {
          if (args.size() > 1) return args[1];
          raiseNew(PyExc_KeyError, {k}, "dict.pop of a missing key (raises KeyError)");
          return nullptr;
        }
        VarRef v = obj->items[static_cast<size_t>(j)];
        obj->keys.erase(obj->keys.begin() + j);
        obj->items.erase(obj->items.begin() + j);
        return v;
      }
      if (j >= 0) return obj->items[static_cast<size_t>(j)];
      obj->keys.push_back(k);
      obj->items.push_back(args.size() > 1 ? args[1] : none());
      return obj->items.back();
    }
  }
  fail(name == "append" || name == "update" || name == "pop" ? GB::OuterContainerMutation : GB::UnsupportedType, "container ." + name);
  return nullptr;
}

VarRef Translator::superOf(Frame& f, std::vector<VarRef>& args) {
  VarRef cls, self;
  if (args.size() == 2) {
    cls = args[0];
    self = args[1];
  } else if (args.empty()) {
    PyCodeObject* code = f.code;
    for (int i = code->co_nlocalsplus - code->co_nfreevars; i < code->co_nlocalsplus; ++i) {
      if (PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(code->co_localsplusnames, i), "__class__") == 0) {
        const VarRef& cell = f.slots[static_cast<size_t>(i)];
        if (cell && cell->is(Var::Kind::Cell)) cls = cell->self;
      }
    }
    if (code->co_argcount > 0 && f.slots[0]) {
      self = f.slots[0];
      if (self->is(Var::Kind::Cell)) self = self->self;
    }
    if (!cls || !self) {
      fail(GB::UntraceableCall, "super() outside a method");
      return nullptr;
    }
  } else {
    fail(GB::UntraceableCall, "super() with one argument");
    return nullptr;
  }
  PyObject* tp = typeOf(self);
  if (!cls->is(Var::Kind::Object) || !PyType_Check(cls->obj.get()) || !tp ||
      !PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(tp), reinterpret_cast<PyTypeObject*>(cls->obj.get()))) {
    fail(GB::UntraceableCall, "super(type, obj): obj is not an instance of type");
    return nullptr;
  }
  auto s = makeVar(Var::Kind::Super, cls->obj);
  s->self = self;
  return s;
}

namespace {

/// `name` in class `k`'s own namespace (borrowed), or null with no error set.
/// From 3.12 on a static builtin type's namespace is not its tp_dict (which is
/// null) but PyType_GetDict's.
PyObject* ownClassAttr(PyTypeObject* k, PyObject* name) {
#if PY_VERSION_HEX >= 0x030C0000
  PyObject* d = PyType_GetDict(k);  // new reference; the type keeps the dict alive
  Py_XDECREF(d);
#else
  PyObject* d = typeDict(k);
#endif
  PyObject* attr = d ? PyDict_GetItemWithError(d, name) : nullptr;
  if (!attr && PyErr_Occurred()) PyErr_Clear();
  return attr;
}

}  // namespace

VarRef Translator::superAttr(const VarRef& sv, PyObject* name) {
  PyObject* mro = reinterpret_cast<PyTypeObject*>(typeOf(sv->self))->tp_mro;
  Py_ssize_t n = PyTuple_GET_SIZE(mro), i = 0;
  while (i < n && PyTuple_GET_ITEM(mro, i) != sv->obj.get()) ++i;
  for (++i; i < n; ++i) {
    auto* k = reinterpret_cast<PyTypeObject*>(PyTuple_GET_ITEM(mro, i));
    PyObject* attr = ownClassAttr(k, name);
    if (!attr) continue;
    if (PyFunction_Check(attr)) {
      auto m = makeVar(Var::Kind::BoundMethod, PyRef::borrow(attr));
      m->self = sv->self;
      return m;
    }
    if (Py_TYPE(attr) == &PyStaticMethod_Type) {
      PyObject* fn = PyObject_GetAttrString(attr, "__func__");
      if (fn && PyFunction_Check(fn)) return makeVar(Var::Kind::Object, PyRef::steal(fn));
      Py_XDECREF(fn);
      PyErr_Clear();
    }
    if (k == &PyBaseObject_Type && PyUnicode_CompareWithASCIIString(name, "__init__") == 0)
      return makeVar(Var::Kind::NoOp);
    if (k == &PyBaseObject_Type && sv->self->is(Var::Kind::UserObject) &&
        (PyUnicode_CompareWithASCIIString(name, "__getattribute__") == 0 ||
         PyUnicode_CompareWithASCIIString(name, "__setattr__") == 0)) {
      // object's own attribute protocol, run on the user object when called (Note [Attribute protocol]).
      auto m = makeVar(Var::Kind::BoundMethod, PyRef::borrow(attr));
      m->self = sv->self;
      return m;
    }
    if (k == &PyDict_Type && sv->self->is(Var::Kind::Object) && sv->self->source &&
        PyDict_Check(sv->self->obj.get())) {
      // dict's own read methods on an instance of a dict subclass (a registry,
      // `super().__getitem__(k)` in a subclass's own __getitem__): the entries of
      // its storage as a Dict, each guarded through dict.__getitem__ (a source
      // that does not run the subclass's __getitem__).
      const char* n = PyUnicode_AsUTF8(name);
      bool read = false;
      for (const char* ok : {"get", "keys", "values", "items", "__getitem__"})
        read = read || std::strcmp(n, ok) == 0;
      static PyObject* missingName = PyUnicode_InternFromString("__missing__");
      if (read && std::strcmp(n, "__getitem__") == 0 && _PyType_Lookup(Py_TYPE(sv->self->obj.get()), missingName)) {
        fail(GB::UnmodeledAttribute, std::string("super().__getitem__ of a ") + Py_TYPE(sv->self->obj.get())->tp_name +
                                         " with __missing__");
        return nullptr;
      }
      if (read) {
        PyObject* o = sv->self->obj.get();
        const SourceRef& src = sv->self->source;
        guardKeys(src, o);  // keys(), values() and items() follow their order
        auto d = makeVar(Var::Kind::Dict);
        PyObject *key, *val;
        Py_ssize_t pos = 0;
        while (PyDict_Next(o, &pos, &key, &val)) {
          if (!PyUnicode_CheckExact(key) && !PyLong_CheckExact(key)) {
            fail(GB::UnsupportedType, "dict subclass with non-constant keys");
            return nullptr;
          }
          VarRef item = wrap(val, Source::dictItem(src, key));
          if (!item) return nullptr;
          d->keys.push_back(PyRef::borrow(key));
          d->items.push_back(std::move(item));
        }
        auto m = makeVar(Var::Kind::ContainerMethod);
        m->self = d;
        m->name = n;
        return m;
      }
    }
    fail(GB::UnmodeledAttribute, std::string("super().") + PyUnicode_AsUTF8(name) + " is a " + Py_TYPE(attr)->tp_name);
    return nullptr;
  }
  fail(GB::UnmodeledAttribute, std::string("super().") + PyUnicode_AsUTF8(name) + ": no such attribute");
  return nullptr;
}
// Note [Bound tensor methods as inputs]: a resume function can receive a
// Tensor method already bound (`hidden_states.masked_scatter` was on the stack
// when the frame broke inside its argument list). CPython makes a new bound
// builtin object at every attribute read, and two are equal only when they are
// bound to the same tensor, so guarding the object by equality failed on
// every call (a recompile per call). It is what `tensor.name` gives: a
// TensorMethod on its `__self__` (a tensor input, guarded as tensors are),
// with the builtin type and `__name__` guarded. Taken only when the C function
// is the one the tensor's type has under that name (the method a TensorMethod
// call records).
bool Translator::boundTensorMethod(PyObject* value, const SourceRef& source, VarRef& out) {
  if (!source || !PyCFunction_CheckExact(value)) return false;
  PyObject* self = PyCFunction_GET_SELF(value);
  if (!self || !isA(self, pyTypes()->tensor)) return false;
  const char* cname = reinterpret_cast<PyCFunctionObject*>(value)->m_ml->ml_name;
  PyRef name = PyRef::steal(PyUnicode_InternFromString(cname));
  PyObject* descr = name ? _PyType_Lookup(Py_TYPE(self), name.get()) : nullptr;
  if (!descr || Py_TYPE(descr) != &PyMethodDescr_Type ||
      reinterpret_cast<PyMethodDescrObject*>(descr)->d_method->ml_meth != PyCFunction_GET_FUNCTION(value)) {
    PyErr_Clear();
    return false;
  }
  static PyObject* selfName = PyUnicode_InternFromString("__self__");
  static PyObject* nameName = PyUnicode_InternFromString("__name__");
  guardType(source, value);
  guardEquals(Source::attr(source, nameName), name.get());
  VarRef t = wrap(self, Source::attr(source, selfName));
  if (!t) return true;  // wrap failed (a break): out stays null
  if (!t->is(Var::Kind::Tensor)) {
    fail(GB::UnsupportedType, std::string("a bound Tensor.") + cname + " whose tensor is not traced");
    return true;
  }
  out = makeVar(Var::Kind::TensorMethod);
  out->self = t;
  out->name = cname;
  return true;
}

}  // namespace xacc::capture::translate
