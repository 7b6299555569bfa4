// Break and resume functions. See Codegen.h; loop-body functions are in CodegenLoops.cpp.
#include "Codegen.h"

#include "CodegenImpl.h"
#include "PyTypes.h"

namespace xacc::capture::translate {

namespace codegen {

ResumeRegistry& registry() {
  static auto* r = new ResumeRegistry();
  return *r;
}

}  // namespace codegen

using namespace codegen;

namespace {

/// (sizes, strides, storage offset from its base) of the view tracked by `v`
/// at capture: what view_of falls back to when the graph's output is a copy.
/// None when they cannot be read.
PyRef geometry(const VarRef& v) {
  PyObject* m = v->obj.get();
  PyRef size = PyRef::steal(PyObject_CallMethod(m, "size", nullptr));
  PyRef stride = PyRef::steal(PyObject_CallMethod(m, "stride", nullptr));
  PyRef off = PyRef::steal(PyObject_CallMethod(m, "storage_offset", nullptr));
  PyRef base = PyRef::steal(PyObject_GetAttrString(m, "_base"));
  PyRef baseOff = base ? PyRef::steal(PyObject_CallMethod(base.get(), "storage_offset", nullptr)) : PyRef();
  PyRef sizes = size ? PyRef::steal(PySequence_Tuple(size.get())) : PyRef();
  if (!sizes || !stride || !off || !baseOff) {
    PyErr_Clear();
    return PyRef::borrow(Py_None);
  }
  PyRef rel = PyRef::steal(PyLong_FromLongLong(PyLong_AsLongLong(off.get()) - PyLong_AsLongLong(baseOff.get())));
  return PyRef::steal(PyTuple_Pack(3, sizes.get(), stride.get(), rel.get()));
}

/// What the break function rebuilds values from.
struct Emitter {
  Translator& t;
  BreakHost& host;
  PyCodeObject* code;
  Asm asm_;
  PyRef consts;    ///< list
  PyRef names;     ///< list
  PyRef varnames;  ///< list
  Py_ssize_t origConsts = 0;
  std::vector<VarRef> keep;  ///< trackers made while emitting (replayMutations)
  std::map<int, int> outIndex;  ///< graph value -> output index
  int outLocal = -1;
  Failure* fallback = nullptr;
  /// Mutable containers already rebuilt, by tracker: the local holding the one
  /// object, so a list on the stack and in a local stay the same list.
  std::map<const Var*, int> built;
  std::set<const Var*> converting;  ///< modelled library objects being rebuilt (rebuildUser)
  /// Note [Cells across a break]: the frame's cells and free variables, by
  /// tracker: how to push the cell object (Asm::cellAt's argument).
  std::map<const Var*, int> cellLoads;
  /// Cells of the frame whose content the break function stores, in order
  /// (each once): all of them before a resume, those a rebuilt function
  /// holds at a return.
  std::vector<const Var*> cellsToStore;
  PyObject* globals = nullptr;  ///< the frame's (a rebuilt function's must be these)

  Emitter(Translator& tr, BreakHost& h, PyCodeObject* c, int line)
      : t(tr), host(h), code(c), asm_(line, c->co_firstlineno) {
    consts = PyRef::steal(PySequence_List(c->co_consts));
    origConsts = PyList_GET_SIZE(consts.get());
    names = PyRef::steal(PySequence_List(c->co_names));
    PyObject* vn = PyObject_GetAttrString(reinterpret_cast<PyObject*>(c), "co_varnames");
    varnames = PyRef::steal(PySequence_List(vn));
    Py_XDECREF(vn);
  }

  bool failWith(GB code, const std::string& detail) {
    fallback->code = gbCode(code);
    fallback->detail = detail;
    return false;
  }

  int local(const char* name) {
    PyRef n = PyRef::steal(PyUnicode_FromString(name));
    Py_ssize_t i = PySequence_Index(varnames.get(), n.get());
    if (i >= 0) return static_cast<int>(i);
    PyErr_Clear();
    PyList_Append(varnames.get(), n.get());
    return static_cast<int>(PyList_GET_SIZE(varnames.get()) - 1);
  }
  int constant(PyObject* obj) {
    for (Py_ssize_t i = origConsts; i < PyList_GET_SIZE(consts.get()); ++i)
      if (PyList_GET_ITEM(consts.get(), i) == obj) return static_cast<int>(i);
    PyList_Append(consts.get(), obj);
    return static_cast<int>(PyList_GET_SIZE(consts.get()) - 1);
  }
  int name(PyObject* n) {
    Py_ssize_t i = PySequence_Index(names.get(), n);
    if (i >= 0) return static_cast<int>(i);
    PyErr_Clear();
    PyList_Append(names.get(), n);
    return static_cast<int>(PyList_GET_SIZE(names.get()) - 1);
  }

  bool source(const SourceRef& s) {
    switch (s->access) {
      case Access::Local: asm_.op(Op::LOAD_FAST, static_cast<int>(s->index)); return true;
      case Access::Global: asm_.op(Op::LOAD_GLOBAL, name(s->key.get()) << 1); return true;
      case Access::Closure: asm_.op(Op::LOAD_DEREF, -1 - static_cast<int>(s->index)); return true;
      case Access::Const: {
        PyObject* c = host.constAt(static_cast<int>(s->index));
        if (!c) return failWith(GB::Internal, "entry constant");
        asm_.op(Op::LOAD_CONST, constant(c));
        return true;
      }
      case Access::Attr:
        if (!source(s->parent)) return false;
        asm_.loadAttr(name(s->key.get()));
        return true;
      case Access::Item: {
        if (!source(s->parent)) return false;
        PyRef key = s->key ? s->key : PyRef::steal(PyLong_FromLongLong(s->index));
        asm_.op(Op::LOAD_CONST, constant(key.get()));
        asm_.op(Op::BINARY_SUBSCR);
        return true;
      }
      case Access::AsTensor: return failWith(GB::Internal, "rebuilding a from_numpy source");
      case Access::ClassAttr: return failWith(GB::Internal, "rebuilding a guard-only class lookup");
      case Access::DictItem: {  // dict.__getitem__(parent, key)
        static PyObject* dictGetitem =
            PyObject_GetAttrString(reinterpret_cast<PyObject*>(&PyDict_Type), "__getitem__");
        asm_.loadCallable(Op::LOAD_CONST, constant(dictGetitem));
        if (!source(s->parent)) return false;
        asm_.op(Op::LOAD_CONST, constant(s->key.get()));
        asm_.call(2);
        return true;
      }
      case Access::Deref:     // parent(): the weakref called
      case Access::TypeOf: {  // type(parent)
        static PyObject* refCall = PyObject_GetAttrString(reinterpret_cast<PyObject*>(&_PyWeakref_RefType), "__call__");
        PyObject* fn = s->access == Access::Deref ? refCall : reinterpret_cast<PyObject*>(&PyType_Type);
        asm_.loadCallable(Op::LOAD_CONST, constant(fn));
        if (!source(s->parent)) return false;
        asm_.call(1);
        return true;
      }
    }
    return false;
  }

  bool output(int vid) {
    auto it = outIndex.find(vid);
    if (it == outIndex.end()) return false;
    asm_.op(Op::LOAD_FAST, outLocal);
    PyRef k = PyRef::steal(PyLong_FromLong(it->second));
    asm_.op(Op::LOAD_CONST, constant(k.get()));
    asm_.op(Op::BINARY_SUBSCR);
    return true;
  }

  bool rebuild(const VarRef& v) {
    using K = Var::Kind;
    // Mutable values made in the frame are built once and shared by every reference.
    bool shared = !v->source && (v->is(K::List) || v->is(K::Dict) || v->is(K::Iter) || v->is(K::UserObject) ||
                                 v->is(K::Function) || v->is(K::Drawn) ||
                                 isFreshObject(v) ||
                                 (v->is(K::Tuple) && v->obj) || (v->is(K::Set) && PySet_CheckExact(v->obj.get())));
    if (converting.count(v.get()))
      return failWith(GB::CannotSplit, "a modelled library object that holds itself");
    if (shared) {
      auto it = built.find(v.get());
      if (it != built.end()) {
        asm_.op(Op::LOAD_FAST, it->second);
        return true;
      }
    }
    if (!rebuildOnce(v)) return false;
    if (shared && !v->is(K::UserObject)) {  // a user object registers itself (rebuildUser)
      int slot = local(("__xacc_obj" + std::to_string(built.size())).c_str());
      asm_.op(Op::COPY, 1);
      asm_.op(Op::STORE_FAST, slot);
      built[v.get()] = slot;
    }
    return true;
  }

  /// `fn(args...)` with fn a constant callable.
  bool callConst(PyObject* fn, const std::vector<VarRef>& args, const std::vector<PyObject*>& consts = {}) {
    asm_.loadCallable(Op::LOAD_CONST, constant(fn));
    for (const VarRef& a : args)
      if (!rebuild(a)) return false;
    for (PyObject* c : consts) asm_.op(Op::LOAD_CONST, constant(c));
    asm_.call(static_cast<int>(args.size() + consts.size()));
    return true;
  }

  /// An iterator as eager holds it at this point: over the same list at the same
  /// index (list iterators stay live views), enumerate/zip over their inner
  /// iterators, or the items not yet taken.
  bool rebuildIter(const VarRef& v) {
    using IterOf = Var::IterOf;
    const PyTypes* T = pyTypes();
    switch (v->iter) {
      case IterOf::List:
      case IterOf::DictView: {
        // iter(obj) at index 0; else the same kind of iterator advanced to pos.
        if (v->pos == 0) {
          if (!rebuild(v->self)) return false;
          asm_.op(Op::GET_ITER);
          return true;
        }
        PyRef pos = PyRef::steal(PyLong_FromSize_t(v->pos));
        return callConst(v->iter == IterOf::List ? T->listIterAt : T->dictIterAt, {v->self}, {pos.get()});
      }
      case IterOf::Reversed: {
        if (!v->self) return callConst(T->reversedAt, {makeSeq(Var::Kind::List, {})}, {Py_None});
        PyRef index = PyRef::steal(PyLong_FromLongLong(static_cast<long long>(v->pos) - 1));
        return callConst(T->reversedAt, {v->self}, {index.get()});
      }
      case IterOf::Enumerate: {
        PyRef count = PyRef::steal(PyLong_FromLongLong(v->count));
        return callConst(T->enumerate, {v->self}, {count.get()});
      }
      case IterOf::Zip: {
        if (v->count != 1) return callConst(T->zip, v->items);
        static PyObject* strictZip = [] {  // functools.partial(zip, strict=True), kept for the process
          PyRef functools = PyRef::steal(PyImport_ImportModule("functools"));
          PyRef partial = functools ? PyRef::steal(PyObject_GetAttrString(functools.get(), "partial")) : PyRef();
          PyRef kw = PyRef::steal(Py_BuildValue("{s:O}", "strict", Py_True));
          PyRef a = PyRef::steal(PyTuple_Pack(1, pyTypes()->zip));
          PyObject* r = partial && kw && a ? PyObject_Call(partial.get(), a.get(), kw.get()) : nullptr;
          if (!r) PyErr_Clear();
          return r;
        }();
        if (!strictZip) return failWith(GB::CannotSplit, "zip(strict=True) cannot be rebuilt");
        return callConst(strictZip, v->items);
      }
      case IterOf::Generator:  // See Note [Lazy generators]
        return failWith(GB::CannotSplit, "a generator suspended at a break cannot be rebuilt");
      case IterOf::Items:
        break;
    }
    for (size_t i = v->pos; i < v->items.size(); ++i)
      if (!rebuild(v->items[i])) return false;
    asm_.op(Op::BUILD_TUPLE, static_cast<int>(v->items.size() - v->pos));
    asm_.op(Op::GET_ITER);
    return true;
  }

  /// Note [User objects]: `object.__new__(cls)`, kept in a local before its
  /// attributes are rebuilt (they may refer back to it), then `value; obj;
  /// STORE_ATTR name` for each attribute in insertion order.
  /// Note [Replayed container mutation]: the caller's lists and dicts the
  /// frame mutated get the trackers' contents. Runs after every other value
  /// was loaded (a value read through a mutated container, `t = xs[0]` before
  /// `xs.insert(0, y)`, is fetched before the change), and builds all new
  /// contents before changing any container: `lst[:] = new`, or
  /// `dict.clear(d); dict.update(d, new)`.
  bool replayMutations() {
    const auto& ms = t.mutatedInputs();
    for (const VarRef& c : ms) {
      VarRef fresh = makeSeq(c->kind, c->items);
      fresh->keys = c->keys;
      keep.push_back(fresh);  // `built` is keyed by address: the tracker must outlive the emission
      if (!rebuild(fresh)) return false;
    }
    static PyObject* all = PySlice_New(nullptr, nullptr, nullptr);
    static PyObject* dictClear = PyObject_GetAttrString(reinterpret_cast<PyObject*>(&PyDict_Type), "clear");
    static PyObject* dictUpdate = PyObject_GetAttrString(reinterpret_cast<PyObject*>(&PyDict_Type), "update");
    for (auto it = ms.rbegin(); it != ms.rend(); ++it) {  // the new contents sit on the stack, last on top
      const VarRef& c = *it;
      if (c->is(Var::Kind::List)) {
        if (!source(c->source)) return false;
        asm_.op(Op::LOAD_CONST, constant(all));
        asm_.op(Op::STORE_SUBSCR);
        continue;
      }
      asm_.loadCallable(Op::LOAD_CONST, constant(dictClear));
      if (!source(c->source)) return false;
      asm_.call(1);
      asm_.op(Op::POP_TOP);
      asm_.loadCallable(Op::LOAD_CONST, constant(dictUpdate));
      if (!source(c->source)) return false;
      asm_.op(Op::COPY, 4);  // the new contents
      asm_.call(2);
      asm_.op(Op::POP_TOP);
      asm_.op(Op::POP_TOP);
    }
    return true;
  }

  bool rebuildUser(const VarRef& v) {
    if (v->self) {
      if (PyObject* make = modelRebuilder(v->self->obj.get())) {
        // Note [Modelled library objects]: the model object, then the real one
        // made from it, which replaces it in the shared slot. A model that
        // holds itself would hold the model object: not rebuilt.
        asm_.loadCallable(Op::LOAD_CONST, constant(make));
        converting.insert(v.get());
        bool ok = rebuildUserObject(v);
        converting.erase(v.get());
        if (!ok) return false;
        asm_.call(1);
        asm_.op(Op::COPY, 1);
        asm_.op(Op::STORE_FAST, built.at(v.get()));
        return true;
      }
      if (isPolyfillClass(v->self->obj.get()))  // Note [Context managers]
        return failWith(GB::UnsupportedType, "a library object the translator modelled cannot be rebuilt");
    }
    return rebuildUserObject(v);
  }

  bool rebuildUserObject(const VarRef& v) {
    static PyObject* objectNew = PyObject_GetAttrString(reinterpret_cast<PyObject*>(&PyBaseObject_Type), "__new__");
    asm_.loadCallable(Op::LOAD_CONST, constant(objectNew));
    if (!rebuild(v->self)) return false;
    asm_.call(1);
    int slot = local(("__xacc_obj" + std::to_string(built.size())).c_str());
    asm_.op(Op::COPY, 1);
    asm_.op(Op::STORE_FAST, slot);
    built[v.get()] = slot;
    // Note [Rebuilt instance dicts]: an attribute goes into the instance dict
    // itself, `instance_dict(obj)[key] = value` (no __setattr__, descriptor
    // or __getattribute__ runs); a __slots__ member through object.__setattr__
    // (the member descriptor's own store).
    static PyObject* objectSetattr = PyObject_GetAttrString(reinterpret_cast<PyObject*>(&PyBaseObject_Type), "__setattr__");
    auto* tp = reinterpret_cast<PyTypeObject*>(v->self->obj.get());
    for (size_t i = 0; i < v->keys.size(); ++i) {
      PyObject* member = _PyType_Lookup(tp, v->keys[i].get());  // borrowed
      if (member && Py_TYPE(member) == &PyMemberDescr_Type) {
        asm_.loadCallable(Op::LOAD_CONST, constant(objectSetattr));
        asm_.op(Op::LOAD_FAST, slot);
        asm_.op(Op::LOAD_CONST, constant(v->keys[i].get()));
        if (!rebuild(v->items[i])) return false;
        asm_.call(3);
        asm_.op(Op::POP_TOP);
        continue;
      }
      if (!rebuild(v->items[i])) return false;  // value, instance_dict(obj), key: STORE_SUBSCR
      asm_.loadCallable(Op::LOAD_CONST, constant(instanceDictReader()));
      asm_.op(Op::LOAD_FAST, slot);
      asm_.call(1);
      asm_.op(Op::LOAD_CONST, constant(v->keys[i].get()));
      asm_.op(Op::STORE_SUBSCR);
    }
    return true;
  }

  /// A function the traced code made (MAKE_FUNCTION): made again from its
  /// code over the frame's own cells (Note [Cells across a break]), with its
  /// defaults and annotations. Its globals must be the frame's.
  bool rebuildFunction(const VarRef& v) {
    if (v->globals.get() != globals) return failWith(GB::CannotSplit, "a function made by an inlined call");
    if (v->pos == 1) return failWith(GB::CannotSplit, "a function whose annotations are not constants");
    std::vector<int> cells;
    for (const VarRef& c : v->cells) {
      auto it = cellLoads.find(c.get());
      if (it == cellLoads.end()) return failWith(GB::CannotSplit, "a closure over cells of an inlined call");
      cells.push_back(it->second);
      if (it->second >= 0 && std::find(cellsToStore.begin(), cellsToStore.end(), c.get()) == cellsToStore.end())
        cellsToStore.push_back(c.get());
    }
    int flags = 0;
    if (!v->items.empty()) {
      flags |= 0x01;
      for (const VarRef& d : v->items)
        if (!rebuild(d)) return false;
      asm_.op(Op::BUILD_TUPLE, static_cast<int>(v->items.size()));
    }
    if (!v->keys.empty()) {
      flags |= 0x02;
      for (size_t i = 0; i < v->keys.size(); ++i) {
        asm_.op(Op::LOAD_CONST, constant(v->keys[i].get()));
        if (!rebuild(v->kwItems[i])) return false;
      }
      asm_.op(Op::BUILD_MAP, static_cast<int>(v->keys.size()));
    }
    if (v->fields) {
      flags |= 0x04;
      asm_.op(Op::LOAD_CONST, constant(v->fields.get()));
    }
    if (!cells.empty()) {
      flags |= 0x08;
      for (int c : cells) asm_.cellAt(c);
      asm_.op(Op::BUILD_TUPLE, static_cast<int>(cells.size()));
    }
    asm_.op(Op::LOAD_CONST, constant(v->obj.get()));
    if (opcodeByte(Op::SET_FUNCTION_ATTRIBUTE) < 0) {
      asm_.op(Op::MAKE_FUNCTION, flags);
      return true;
    }
    asm_.op(Op::MAKE_FUNCTION, 0);  // 3.13: each attribute set on the function, the last pushed first
    for (int f : {0x08, 0x04, 0x02, 0x01})
      if (flags & f) asm_.op(Op::SET_FUNCTION_ATTRIBUTE, f);
    return true;
  }

  bool rebuildOnce(const VarRef& v) {
    using K = Var::Kind;
    switch (v->kind) {
      case K::Null: asm_.op(Op::PUSH_NULL); return true;
      case K::Tensor: {
        if (SourceRef s = t.inputSource(v)) return source(s);  // the input object itself
        if (v->source) return source(v->source);
        int vid = t.valueOf(v);
        if (v->isNumpy()) {
          // The graph's tensor as the ndarray (or NumPy scalar) the code expects.
          const PyTypes* T = pyTypes();
          asm_.loadCallable(Op::LOAD_CONST, constant(v->np == Var::Np::Scalar ? T->npToScalar : T->npToArray));
          if (vid < 0 || !output(vid)) return failWith(GB::Internal, "ndarray with no source and no graph output");
          asm_.call(1);
          return true;
        }
        if (vid >= 0 && outIndex.count(vid)) {
          // A view of an input or of another live tensor: view_of(base, out) (Note [Returned views]).
          SourceRef baseSource;
          int baseVid = -1;
          if (t.viewBase(v, baseSource, baseVid) && (baseSource || outIndex.count(baseVid)) && pyTypes()->viewOf) {
            asm_.loadCallable(Op::LOAD_CONST, constant(pyTypes()->viewOf));
            if (!(baseSource ? source(baseSource) : output(baseVid)) || !output(vid)) return false;
            asm_.op(Op::LOAD_CONST, constant(geometry(v).get()));
            asm_.call(3);
            return true;
          }
          return output(vid);
        }
        return failWith(GB::Internal, "tensor with no source and no graph output");
      }
      case K::SymScalar:
        if (v->source) return source(v->source);
        if (v->vid >= 0 && output(v->vid)) return true;
        return failWith(GB::Internal, "number with no source and no graph output");
      case K::Const: asm_.op(Op::LOAD_CONST, constant(v->obj.get())); return true;
      default: break;
    }
    if ((v->is(K::List) || v->is(K::Dict) || v->is(K::Tuple) || v->is(K::Object) || v->is(K::Set)) && v->source)
      return source(v->source);
    switch (v->kind) {
      case K::UserObject:
        return rebuildUser(v);
      case K::Tuple:
        if (v->torchSize) return callConst(pyTypes()->size, {makeSeq(K::Tuple, v->items)});  // torch.Size((items...))
        if (v->obj) {  // a tuple subclass's instance: tuple.__new__(cls, (items...))
          static PyObject* tupleNew = PyObject_GetAttrString(reinterpret_cast<PyObject*>(&PyTuple_Type), "__new__");
          return callConst(tupleNew, {v->self, makeSeq(K::Tuple, v->items)});
        }
        [[fallthrough]];
      case K::List:
        for (const VarRef& i : v->items)
          if (!rebuild(i)) return false;
        asm_.op(v->is(K::Tuple) ? Op::BUILD_TUPLE : Op::BUILD_LIST, static_cast<int>(v->items.size()));
        return true;
      case K::Dict:
        if (isDictSubclassVar(v)) {  // Note [Dict subclasses]: its storage in a new instance
          auto storage = std::make_shared<Var>(*v);
          storage->obj = PyRef();
          storage->self = nullptr;
          return callConst(dictSubclassRebuilder(), {v->self, storage});
        }
        if (v->obj) {  // a ModelOutput: cls(**{...})
          asm_.loadCallable(Op::LOAD_CONST, constant(v->obj.get()));
          asm_.op(Op::BUILD_TUPLE, 0);
        }
        for (size_t i = 0; i < v->keys.size(); ++i) {
          asm_.op(Op::LOAD_CONST, constant(v->keys[i].get()));
          if (!rebuild(v->items[i])) return false;
        }
        asm_.op(Op::BUILD_MAP, static_cast<int>(v->keys.size()));
        if (v->obj) asm_.op(Op::CALL_FUNCTION_EX, 1);
        return true;
      case K::Set: {
        if (setHoldsTensors(v->obj.get()))  // Note [Sets of tensors]
          return failWith(GB::UnsupportedType, "a set holding tensors cannot be rebuilt");
        if (PyFrozenSet_CheckExact(v->obj.get())) {
          asm_.op(Op::LOAD_CONST, constant(v->obj.get()));
          return true;
        }
        PyRef items = PyRef::steal(PySequence_List(v->obj.get()));
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(items.get()); ++i)
          asm_.op(Op::LOAD_CONST, constant(PyList_GET_ITEM(items.get(), i)));
        asm_.op(Op::BUILD_SET, static_cast<int>(PyList_GET_SIZE(items.get())));
        return true;
      }
      case K::Object:
        if (isFreshObject(v)) {  // Note [Fresh modules], [Fresh classes]: a new cls(*args, **kwargs)
          asm_.nullBelow();
          if (!rebuild(v->self)) return false;
          asm_.nullAbove();
          for (const VarRef& a : v->items)
            if (!rebuild(a)) return false;
          asm_.op(Op::BUILD_TUPLE, static_cast<int>(v->items.size()));
          for (size_t i = 0; i < v->keys.size(); ++i) {
            asm_.op(Op::LOAD_CONST, constant(v->keys[i].get()));
            if (!rebuild(v->kwItems[i])) return false;
          }
          asm_.op(Op::BUILD_MAP, static_cast<int>(v->keys.size()));
          asm_.op(Op::CALL_FUNCTION_EX, 1);
          return true;
        }
        asm_.op(Op::LOAD_CONST, constant(v->obj.get()));
        return true;
      case K::TensorMethod:
      case K::ContainerMethod: {
        if (!rebuild(v->self)) return false;
        PyRef n = PyRef::steal(PyUnicode_FromString(v->name.c_str()));
        asm_.loadAttr(name(n.get()));
        return true;
      }
      case K::DictView: {  // the rebuilt dict's own view: d.keys()
        // A view of a user object's instance dict (Note [Instance dicts]):
        // instance_dict(obj).keys() (Note [Rebuilt instance dicts]).
        if (v->self->is(K::UserObject) ? !callConst(instanceDictReader(), {v->self}) : !rebuild(v->self)) return false;
        PyRef n = PyRef::steal(PyUnicode_FromString(v->name.c_str()));
        asm_.loadMethod(name(n.get()));
        asm_.call(0);
        return true;
      }
      case K::BoundMethod: {
        if (v->self && v->self->is(K::UserObject) && v->self->self && modelRebuilder(v->self->self->obj.get())) {
          // A model's method (Note [Modelled library objects]): the library
          // object's method of the same name, `real.<name>`, as eager holds it.
          PyRef n = PyRef::steal(PyObject_GetAttrString(v->obj.get(), "__name__"));
          if (!n || !PyUnicode_Check(n.get()) || PyUnicode_AsUTF8(n.get())[0] == '_') {
            PyErr_Clear();
            return failWith(GB::CannotSplit, "a method of a modelled library object with no library counterpart");
          }
          if (!rebuild(v->self)) return false;
          asm_.loadAttr(name(n.get()));
          return true;
        }
        asm_.loadCallable(Op::LOAD_CONST, constant(reinterpret_cast<PyObject*>(&PyMethod_Type)));
        asm_.op(Op::LOAD_CONST, constant(v->obj.get()));
        if (!rebuild(v->self)) return false;
        asm_.call(2);
        return true;
      }
      case K::Iter:
        return rebuildIter(v);
      case K::Function:
        return rebuildFunction(v);
      case K::InstanceDict:  // the rebuilt object's own dict (Note [Rebuilt instance dicts])
        return callConst(instanceDictReader(), {v->self});
      case K::Exception:  // Note [Traced exceptions]: cls(*args), made again
        if (v->pos) return failWith(GB::CannotSplit, "an exception raised before (its traceback is not rebuilt)");
        asm_.nullBelow();
        if (!rebuild(v->self)) return false;
        asm_.nullAbove();
        for (const VarRef& a : v->items)
          if (!rebuild(a)) return false;
        asm_.call(static_cast<int>(v->items.size()));
        return true;
      default:
        return failWith(GB::CannotSplit, "cannot rebuild this value at a break");
    }
  }
};

/// Graph outputs: every computed tensor or number live on the stack or in a local.
void collectOutputs(Translator& t, const VarRef& v, std::set<const Var*>& seen, std::vector<int>& outs,
                    bool& bad) {
  if (!v || !seen.insert(v.get()).second) return;
  using K = Var::Kind;
  switch (v->kind) {
    case K::Tensor:
      if (!v->source && !t.inputSource(v)) {
        int vid = t.valueOf(v);
        if (vid < 0) bad = true;
        else if (std::find(outs.begin(), outs.end(), vid) == outs.end()) outs.push_back(vid);
      }
      break;
    case K::SymScalar:
      if (!v->source && v->vid >= 0 && std::find(outs.begin(), outs.end(), v->vid) == outs.end())
        outs.push_back(v->vid);
      break;
    case K::Tuple:
    case K::List:
    case K::Dict:
    case K::UserObject:
      for (const VarRef& i : v->items) collectOutputs(t, i, seen, outs, bad);
      break;
    case K::Iter:
      for (size_t i = v->iter == Var::IterOf::Zip ? 0 : v->pos; i < v->items.size(); ++i)
        collectOutputs(t, v->items[i], seen, outs, bad);
      collectOutputs(t, v->self, seen, outs, bad);
      break;
    case K::TensorMethod:
    case K::BoundMethod:
    case K::ContainerMethod:
    case K::DictView:
    case K::Cell:
      collectOutputs(t, v->self, seen, outs, bad);
      break;
    case K::Function:  // rebuilt with its defaults and over its cells (rebuildFunction)
      for (const VarRef& i : v->items) collectOutputs(t, i, seen, outs, bad);
      for (const VarRef& i : v->kwItems) collectOutputs(t, i, seen, outs, bad);
      for (const VarRef& c : v->cells) collectOutputs(t, c, seen, outs, bad);
      break;
    default:
      break;
  }
}

}  // namespace

namespace {
/// The first item of the last constant of a loop's break function: (this, offset of the body call).
constexpr const char* kLoopDriverMarker = "<xacc loop driver>";
}  // namespace

int loopDriverCall(PyCodeObject* code) {
  PyObject* consts = code->co_consts;
  const Py_ssize_t n = consts && PyTuple_Check(consts) ? PyTuple_GET_SIZE(consts) : 0;
  if (n == 0) return -1;
  PyObject* last = PyTuple_GET_ITEM(consts, n - 1);
  if (!PyTuple_CheckExact(last) || PyTuple_GET_SIZE(last) != 2 || !PyUnicode_Check(PyTuple_GET_ITEM(last, 0)) ||
      !PyLong_Check(PyTuple_GET_ITEM(last, 1)) ||
      PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(last, 0), kLoopDriverMarker) != 0)
    return -1;
  return static_cast<int>(PyLong_AsLong(PyTuple_GET_ITEM(last, 1)));
}

PyRef emitBreak(Translator& t, Frame& top, const Instr& ins, PyObject* func, BreakHost& host, Failure& fallback) {
  auto* fn = reinterpret_cast<PyFunctionObject*>(func);
  PyCodeObject* code = top.code;
  auto bail = [&](GB c, const std::string& d) -> PyRef {
    fallback.code = gbCode(c);
    fallback.detail = d;
    return {};
  };
  int shift = 0;
  PyCodeObject* orig = resumeOrigin(code, &shift);
  if (!orig) orig = code;
  const int off = ins.offset;
  // A split at RETURN_VALUE (a return value or attribute writes rebuilt by
  // bytecode) needs no resume function and no locals: closure cells are fine.
  const bool atReturn = ins.op == Op::RETURN_VALUE || ins.op == Op::RETURN_CONST;
  // Note [Cells across a break]: the frame's cells (only an original code has
  // cells) are made in the break function and shared with what continues it.
  const ClosureSlots cells = closureSlots(code);
  const ClosureSlots origCells = orig == code ? cells : closureSlots(orig);
  if (orig != code && off < resumePrologueEnd(top.bc)) return bail(GB::CannotSplit, "break inside a resume prologue");
  if (top.bc->inTry(off)) return bail(GB::BreakInTry, "break inside a try/with block");
  // A break inside a loop: split at the outermost loop's header (Note [Loop bodies]).
  // A value read back from a tensor leaves the loop to Python (Note [Loops left to Python]).
  LoopPlan loop;
  const bool loopAsPython = t.failure().code == gbCode(GB::TensorReadBack);
  if (top.bc->inLoop(off)) {
    std::string error;
    const Bytecode* obc = orig == code ? top.bc : Bytecode::of(orig, error);
    if (!obc) return bail(GB::Internal, error);
    auto [head, end] = outermostLoop(obc, off - shift);
    std::string why;
    const int stackSize = off - shift == head ? static_cast<int>(top.stack.size()) : 0;
    if (head < 0 || !planLoop(orig, obc, head, end, stackSize, loop, why))
      return bail(GB::BreakInLoop, t.failure().code + " inside a loop, which cannot run as a function of its own: " +
                               (why.empty() ? "no loop found" : why));
    if (off - shift != head) {
      // Translate again, stopping before the loop's first iteration.
      fallback.code = "LOOP";
      fallback.detail = loopAsPython ? "the loop runs in Python, its body too"
                                     : "the loop runs in Python, its body is captured per iteration";
      fallback.offset = head + shift;
      fallback.line = obc->instrs()[static_cast<size_t>(obc->indexOf(head))].line;
      return {};
    }
  }
  const bool isLoop = loop.head >= 0;
  Op cond = forwardCond(ins.op);
  bool isJump = opcodeInfo(ins.op).flags & (kJumpForward | kJumpBackward);
  if (!isLoop && (notBreakable(ins.op) || (isJump && cond == Op::NOP)))
    return bail(GB::CannotSplit, std::string("cannot split the frame at ") + ins.name());
  const int origOff = off - shift;
  if (!atReturn && origCells.ncells > 0) {  // Note [Cells across a break]
    std::string error;
    const Bytecode* obc = orig == code ? top.bc : Bytecode::of(orig, error);
    const std::string cell = obc ? cellStoredFrom(orig, obc, isLoop ? loop.head : origOff) : "?";
    if (!cell.empty()) return bail(GB::ClosureCells, "the frame stores its closure cell '" + cell + "' after the break");
  }
  const int nargs = code->co_argcount + code->co_kwonlyargcount + ((code->co_flags & CO_VARARGS) ? 1 : 0) +
                    ((code->co_flags & CO_VARKEYWORDS) ? 1 : 0);
  const int nlocals = code->co_nlocals;

  std::vector<int> outs;
  std::set<const Var*> seen;
  bool bad = false;
  for (const VarRef& v : top.stack) collectOutputs(t, v, seen, outs, bad);
  if (!atReturn) {
    for (int i = 0; i < nlocals; ++i) collectOutputs(t, top.slots[static_cast<size_t>(i)], seen, outs, bad);
    for (int r = 0; r < cells.ncells; ++r) collectOutputs(t, top.slots[static_cast<size_t>(cells.slots[r])], seen, outs, bad);
  }
  for (const auto& w : t.attrWrites()) collectOutputs(t, w.value, seen, outs, bad);
  for (const VarRef& c : t.mutatedInputs())
    for (const VarRef& i : c->items) collectOutputs(t, i, seen, outs, bad);
  if (bad) return t.failed() ? bail(hostBreak(t.failure().code, GB::Internal), t.failure().detail)
                             : bail(GB::Internal, "a live tensor that is not a graph value");
  PyRef graphFn = host.finishGraph(outs);
  if (!graphFn) {
    PyErr_Clear();
    return bail(GB::Internal, "finishing the prefix graph");
  }
  bool hasGraph = graphFn.get() != Py_None;
  if (!hasGraph && !outs.empty()) return bail(GB::Internal, "live tensors without a graph");

  Emitter em(t, host, code, top.line);
  em.fallback = &fallback;
  em.globals = fn->func_globals;
  em.outLocal = em.local("__xacc_out");
  for (size_t k = 0; k < outs.size(); ++k) em.outIndex[outs[k]] = static_cast<int>(k);
  Asm& a = em.asm_;
  if (code->co_nfreevars) a.op(Op::COPY_FREE_VARS, code->co_nfreevars);
  a.op(Op::RESUME, 0);
  // The frame's cells, each in a hidden local (an argument's value copied in
  // first: its own slot keeps the plain value, which sources load), then
  // its free variables: the closure of every function made here.
  std::vector<int> hidden, closure;
  for (int r = 0; r < cells.ncells; ++r) {
    const int j = cells.slots[static_cast<size_t>(r)];
    hidden.push_back(em.local(("__xacc_cell" + std::to_string(r)).c_str()));
    if (j < code->co_nlocals) {
      a.op(Op::LOAD_FAST, j);
      a.op(Op::STORE_FAST, hidden.back());
    }
    a.op(Op::MAKE_CELL, hidden.back());
    closure.push_back(hidden.back());
  }
  for (int k = 0; k < code->co_nfreevars; ++k) closure.push_back(-1 - k);
  for (int r = 0; r < cells.size(); ++r) {
    const VarRef& c = top.slots[static_cast<size_t>(cells.slots[static_cast<size_t>(r)])];
    if (c && c->is(Var::Kind::Cell)) em.cellLoads[c.get()] = closure[static_cast<size_t>(r)];
  }
  if (!atReturn)
    for (int r = 0; r < cells.ncells; ++r) {
      const VarRef& c = top.slots[static_cast<size_t>(cells.slots[static_cast<size_t>(r)])];
      if (c && c->is(Var::Kind::Cell)) em.cellsToStore.push_back(c.get());
    }
  if (hasGraph) {
    a.loadCallable(Op::LOAD_CONST, em.constant(graphFn.get()));
    for (int i = 0; i < nargs; ++i) a.op(Op::LOAD_FAST, i);
    a.call(nargs);
    a.op(Op::STORE_FAST, em.outLocal);
  }
  // 0. the prefix's random draws (in a local each), then the attribute writes
  // it made (Note [Replayed attribute writes]),
  // in program order: `value; obj; STORE_ATTR name`.
  for (const VarRef& d : t.draws()) {  // Note [Global RNG draws at run time]
    PyRef call = t.drawCall(d);
    if (!call && !em.failWith(GB::Internal, "a random draw's call")) return {};
    a.loadCallable(Op::LOAD_CONST, em.constant(call.get()));
    a.call(0);
    em.built[d.get()] = em.local(("__xacc_draw" + std::to_string(em.built.size())).c_str());
    a.op(Op::STORE_FAST, em.built[d.get()]);
  }
  for (const auto& w : t.attrWrites()) {
    if (!em.rebuild(w.value) || !em.source(w.obj->source)) return {};
    a.op(Op::STORE_ATTR, em.name(w.name.get()));
  }
  // 1. the stack, 2. the locals (all loads before any store), 3. store locals.
  for (const VarRef& v : top.stack)
    if (!em.rebuild(v)) return {};
  std::vector<int> bound;
  for (int i = 0; i < nlocals && !atReturn; ++i) {
    const VarRef& v = top.slots[static_cast<size_t>(i)];
    if (v && !v->is(Var::Kind::Cell)) bound.push_back(i);
  }
  for (int i : bound)
    if (!em.rebuild(top.slots[static_cast<size_t>(i)])) return {};
  // The cells' contents (a function rebuilt here may add its cells to the list).
  std::vector<int> cellStores;
  for (size_t k = 0; k < em.cellsToStore.size(); ++k) {
    const Var* c = em.cellsToStore[k];
    const int slot = em.cellLoads.at(c);
    if (!c->self || slot < 0) continue;  // empty, or a free variable (never written: GB008)
    if (!em.rebuild(c->self)) return {};
    cellStores.push_back(slot);
  }
  if (!em.replayMutations()) return {};
  for (auto it = cellStores.rbegin(); it != cellStores.rend(); ++it) a.op(Op::STORE_DEREF, *it);
  for (auto it = bound.rbegin(); it != bound.rend(); ++it) a.op(Op::STORE_FAST, *it);
  // What the rest runs natively sees the user's locals only (f_locals): not the
  // graph's outputs and rebuilt containers, and no argument slot the frame had
  // unbound at the break (a resume frame's stack values and unbound locals).
  for (int i = 0; i < nargs && !atReturn; ++i)
    if (std::find(bound.begin(), bound.end(), i) == bound.end()) a.op(Op::DELETE_FAST, i);
  if (hasGraph) a.op(Op::DELETE_FAST, em.outLocal);
  for (const auto& [var, slot] : em.built) a.op(Op::DELETE_FAST, slot);

  // The resume function takes every original local, then the stack values.
  const int origLocals = orig->co_nlocals;
  std::vector<int> unbound;
  for (int i = 0; i < origLocals; ++i) {
    // Locals of a resume frame keep their indices (its extra locals come after).
    if (std::find(bound.begin(), bound.end(), i) == bound.end()) unbound.push_back(i);
  }
  // Locals only the loop body binds: the sentinel, deleted by resume prologues if still there.
  std::vector<int> maybe;
  if (isLoop) {
    for (int i : loop.stored) {
      auto it = std::find(unbound.begin(), unbound.end(), i);
      if (it == unbound.end()) continue;
      unbound.erase(it);
      unbound.push_back(-1 - i);
      maybe.push_back(i);
    }
  }
  std::vector<bool> layout;
  for (const VarRef& v : top.stack) layout.push_back(!v->is(Var::Kind::Null));

  int tempCount = 0;
  auto callResume = [&](int target, const std::vector<bool>& lay) -> bool {
    auto& reg = registry();
    auto key = std::make_tuple(orig, target, lay, unbound);
    PyRef resumeCode = registeredCode(reg.fns, key);
    if (!resumeCode) {
      std::string error;
      PyRef rcode = makeResume(orig, target, lay, unbound, error);
      if (!rcode) {
        if (PyErr_Occurred()) PyErr_Clear();
        return em.failWith(GB::Internal, "resume function: " + error);
      }
      resumeCode = registerCode(reg.fns, key, rcode.get(), orig);
    }
    std::vector<int> temps;
    for (size_t i = 0; i < lay.size(); ++i) {
      std::string n = "__xacc_tmp" + std::to_string(tempCount + static_cast<int>(i));
      temps.push_back(em.local(n.c_str()));
    }
    tempCount += static_cast<int>(lay.size());
    for (auto it = temps.rbegin(); it != temps.rend(); ++it) a.op(Op::STORE_FAST, *it);
    // Returned to the hook's trampoline, which makes the call (Note [Resume
    // trampoline] in EvalFrame311.cpp): `return (resume, locals..., stack...)`.
    // The resume function is made here, of this frame's globals and cells
    // (Note [Generated code holds no globals] in CodegenImpl.h).
    emitMakeFunction(a, em.constant(resumeCode.get()), closure);
    for (int i = 0; i < origLocals; ++i) {
      if (std::find(unbound.begin(), unbound.end(), i) != unbound.end()) {
        a.op(Op::LOAD_CONST, em.constant(Py_None));
      } else {
        a.op(Op::LOAD_FAST, i);
      }
    }
    int nvals = 0;
    for (size_t i = 0; i < lay.size(); ++i)
      if (lay[i]) {
        a.op(Op::LOAD_FAST, temps[i]);
        ++nvals;
      }
    a.op(Op::BUILD_TUPLE, 1 + origLocals + nvals);
    a.op(Op::RETURN_VALUE);
    return true;
  };

  const int kBodyCallLabel = 50;  // the loop's call of its body (below 100: not an exit label)
  if (isLoop) {
    // The loop, run natively around the body function (Note [Loop bodies]).
    std::vector<int> params;
    for (int i = 0; i < origLocals; ++i) {
      bool isBound = std::find(bound.begin(), bound.end(), i) != bound.end();
      if (loop.assignedFirst.count(i)) continue;
      if (loop.stored.count(i) || (isBound && loop.referenced.count(i))) params.push_back(i);
    }
    std::string why, error;
    const Bytecode* obc = orig == code ? top.bc : Bytecode::of(orig, error);
    PyRef body = obc ? loopBody(orig, obc, loop, params, loopAsPython, why) : PyRef();
    if (!body) return bail(GB::BreakInLoop, "loop body function: " + (obc ? why : error));
    // The body function, made once per run of the loop from this frame's
    // globals and cells (Note [Generated code holds no globals]).
    const int bodyLocal = em.local("__xacc_loop_body");
    emitMakeFunction(a, em.constant(body.get()), closure);
    a.op(Op::STORE_FAST, bodyLocal);
    for (int i : maybe) {
      a.op(Op::LOAD_CONST, em.constant(unboundSentinel()));
      a.op(Op::STORE_FAST, i);
    }
    std::vector<int> values;
    for (int k = 0; k < loop.values; ++k) values.push_back(em.local(("__xacc_loop_value" + std::to_string(k)).c_str()));
    const int flag = em.local("__xacc_loop_flag"), payload = em.local("__xacc_loop_payload");
    std::vector<bool> belowLayout(layout.begin(), layout.end() - (loop.isFor ? 1 : 0));
    PyRef zero = PyRef::steal(PyLong_FromLong(0)), one = PyRef::steal(PyLong_FromLong(1));
    auto storeAssigned = [&] {
      a.op(Op::LOAD_FAST, payload);
      a.op(Op::UNPACK_SEQUENCE, static_cast<int>(loop.stored.size()));
      for (int i : loop.stored) a.op(Op::STORE_FAST, i);
    };
    auto flagIs = [&](PyObject* k, int skipLabel) {
      a.op(Op::LOAD_FAST, flag);
      a.op(Op::LOAD_CONST, em.constant(k));
      a.compareEq();
      a.jumpIf(JumpTest::kFalse, skipLabel);
    };
    enum { kLoop = 10, kNotNext, kDone, kExit0 = 100 };
    a.label(kLoop);
    if (loop.isFor) a.jump(Op::FOR_ITER, kDone);
    if (loop.unpacked) a.op(Op::UNPACK_SEQUENCE, loop.values);
    for (int v : values) a.op(Op::STORE_FAST, v);
    a.loadCallable(Op::LOAD_FAST, bodyLocal);
    for (int i : params) a.op(Op::LOAD_FAST, i);
    for (int v : values) a.op(Op::LOAD_FAST, v);
    const int nargsBody = static_cast<int>(params.size() + values.size());
    a.call(nargsBody, kBodyCallLabel);
    a.op(Op::UNPACK_SEQUENCE, 2);
    a.op(Op::STORE_FAST, flag);
    a.op(Op::STORE_FAST, payload);
    flagIs(zero.get(), kNotNext);
    storeAssigned();
    a.jump(Op::JUMP_BACKWARD, kLoop);
    a.label(kNotNext);
    if (loop.isFor) a.op(Op::POP_TOP);  // the iterator
    // Without exits the body returns flag 0 or 1 only: no test. (A label for the
    // other flags placed at the loop's end would join the exhausted FOR_ITER's
    // path, which on 3.12 still holds the iterator and its value there.)
    if (!loop.exits.empty()) flagIs(one.get(), kExit0);
    for (size_t k = 0; k < belowLayout.size(); ++k) a.op(Op::POP_TOP);
    a.op(Op::LOAD_FAST, payload);
    a.op(Op::RETURN_VALUE);
    for (size_t k = 0; k < loop.exits.size(); ++k) {
      a.label(kExit0 + static_cast<int>(k));
      PyRef fk = PyRef::steal(PyLong_FromLong(2 + static_cast<long>(k)));
      if (k + 1 < loop.exits.size()) flagIs(fk.get(), kExit0 + static_cast<int>(k) + 1);
      storeAssigned();
      if (!callResume(loop.exits[k], belowLayout)) return {};
    }
    if (loop.isFor) {
      a.forEnd(kDone);
      if (!callResume(loop.done, belowLayout)) return {};
    }
  } else if (atReturn) {
    // The returned value is the stack's top (a RETURN_CONST's constant too:
    // the split at a return pushes what the frame returns).
    a.op(Op::RETURN_VALUE);
  } else if (cond != Op::NOP) {
    std::vector<bool> rest(layout.begin(), layout.end() - 1);
    a.jumpIf(jumpTest(ins.op), 1);
    if (!callResume(ins.next - shift, rest)) return {};
    a.label(1);
    if (!callResume(ins.target - shift, rest)) return {};
  } else {
    PyRef origCode = codeBytes(orig);
    if (!origCode) return bail(GB::Internal, "cannot read co_code");
    auto [start, end] = instructionGroup(PyBytes_AS_STRING(origCode.get()), origOff);
    std::string raw(PyBytes_AS_STRING(origCode.get()) + start, static_cast<size_t>(end - start));
    int effect = 0;
    for (size_t i = 0; i + 1 < raw.size(); i += 2) {
      auto op = static_cast<uint8_t>(raw[i]);
      if (op == opByte(Op::CACHE) || op == opByte(Op::EXTENDED_ARG)) continue;
      int arg = op == opByte(ins.op) ? ins.arg : static_cast<uint8_t>(raw[i + 1]);
      effect += PyCompile_OpcodeStackEffectWithJump(op, (opcodeInfo(op).flags & kHasArg) ? arg : 0, 0);
    }
    const int pushed = pushes(ins);
    if (pushed < 0) return bail(GB::CannotSplit, std::string("cannot split the frame at ") + ins.name());
    int consumed = pushed - effect;
    if (consumed > static_cast<int>(layout.size()) || consumed < 0)
      return bail(GB::Internal, std::string("stack effect of ") + ins.name());
    std::vector<bool> after(layout.begin(), layout.end() - consumed);
    for (int i = 0; i < pushed; ++i) after.push_back(true);
    // The temps callResume stores into exist before the copy is made, so the
    // copy's closure opargs can be moved past every added local now.
    for (size_t i = 0; i < after.size(); ++i) em.local(("__xacc_tmp" + std::to_string(i)).c_str());
    // The copy's slots: a cell of this frame is its hidden local; a free
    // variable of the break function (a cell or free variable of the
    // original, Note [Cells across a break]) follows every local.
    int nvarFinal = static_cast<int>(PyList_GET_SIZE(em.varnames.get()));
    auto slotOf = [&](int j) {
      const int r = origCells.rank(j);
      if (r < 0) return j;
      if (orig != code) return nvarFinal + r;
      return r < cells.ncells ? hidden[static_cast<size_t>(r)] : nvarFinal + (r - cells.ncells);
    };
    if (!remapSlots(raw, slotOf)) return bail(GB::CannotSplit, "closure index needs EXTENDED_ARG");
    a.raw(raw);
    if (!callResume(end, after)) return {};
  }
  a.patchDerefs(static_cast<int>(PyList_GET_SIZE(em.varnames.get())));
  std::string bytes, lt;
  a.assemble(bytes, lt);
  if (isLoop) {
    // Last: the marker by which the hook drops this frame from a traceback
    // through the body call (Note [Loop driver frames] in EvalFrame311.cpp).
    PyRef marker = PyRef::steal(Py_BuildValue("(si)", kLoopDriverMarker, a.opOffset(kBodyCallLabel)));
    PyList_Append(em.consts.get(), marker.get());
  }
  PyRef noCells = PyRef::steal(PyTuple_New(0));
  CodeParts parts{std::move(bytes), std::move(lt), "", em.consts.get(), em.names.get(), em.varnames.get(), nargs,
                  noCells.get()};
  std::string why;
  PyRef newCode = makeCode(code, orig, parts, why);
  if (!newCode) return bail(GB::Internal, "break function: " + why);
  PyObject* f = PyFunction_New(newCode.get(), fn->func_globals);
  if (!f) {
    PyErr_Clear();
    return bail(GB::Internal, "break function object");
  }
  if (fn->func_closure) PyFunction_SetClosure(f, fn->func_closure);
  return PyRef::steal(f);
}

}  // namespace xacc::capture::translate
