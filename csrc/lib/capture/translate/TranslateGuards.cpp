// Guards on sources: the leaves the translator adds to the guard tree for
// what a translation read or relied on (types, identities, values, lengths,
// dict keys, presence of attributes and keys, aliasing between sources, empty
// hook dicts). Each is added at most once per node and kind. See Guards.h for
// what a leaf checks and xacc/_src/capture/README.md (Guards) for what is guarded.
#include <algorithm>
#include <iterator>

#include "PyTypes.h"
#include "Translator.h"

namespace xacc::capture::translate {

namespace {
enum GuardKind { kGuardType, kGuardId, kGuardEquals, kGuardLen, kGuardKeys };
}  // namespace

int Translator::node(const SourceRef& s) {
  int parent = s->parent ? node(s->parent) : -1;
  return tree_.node(parent, s->access, s->index, s->key.get());
}

bool Translator::guardOnce(const SourceRef& s, int kind) {
  int n = node(s);
  return guarded_.insert({n, kind}).second;
}

void Translator::guardType(const SourceRef& s, PyObject* value) {
  if (!s || !guardOnce(s, kGuardType)) return;
  Leaf l;
  l.kind = Leaf::Kind::Type;
  l.obj = reinterpret_cast<PyObject*>(Py_TYPE(value));
  Py_INCREF(l.obj);
  tree_.addLeaf(node(s), std::move(l));
}

void Translator::guardId(const SourceRef& s, PyObject* value) {
  if (!s || !guardOnce(s, kGuardId)) return;
  Leaf l;
  l.kind = Leaf::Kind::Id;
  l.obj = value;
  Py_INCREF(value);
  tree_.addLeaf(node(s), std::move(l));
}

void Translator::guardEquals(const SourceRef& s, PyObject* value) {
  if (!s || !guardOnce(s, kGuardEquals)) return;
  Leaf l;
  l.kind = Leaf::Kind::Equals;
  l.obj = value;
  Py_INCREF(value);
  tree_.addLeaf(node(s), std::move(l));
}

void Translator::guardHas(const SourceRef& s, Leaf::Kind kind, PyObject* what, bool has) {
  if (!s) return;
  for (const Leaf& l : tree_.nodeLeaves(node(s))) {  // the same name or key asked twice: one leaf
    if (l.kind != kind || (l.n != 0) != has || Py_TYPE(l.obj) != Py_TYPE(what)) continue;
    int eq = PyObject_RichCompareBool(l.obj, what, Py_EQ);
    if (eq < 0) PyErr_Clear();
    if (eq == 1) return;
  }
  Leaf l;
  l.kind = kind;
  l.obj = what;
  Py_INCREF(what);
  l.n = has ? 1 : 0;
  tree_.addLeaf(node(s), std::move(l));
}

void Translator::guardLen(const SourceRef& s, Py_ssize_t n) {
  if (!s || !guardOnce(s, kGuardLen)) return;
  Leaf l;
  l.kind = Leaf::Kind::Length;
  l.n = n;
  tree_.addLeaf(node(s), std::move(l));
}

void Translator::guardKeys(const SourceRef& s, PyObject* dict) {
  if (!s || !PyDict_Check(dict) || !guardOnce(s, kGuardKeys)) return;
  // An OrderedDict's keys in its own order (keysEqual in Guards.cpp).
  PyRef keys = PyRef::steal(PyODict_Check(dict) ? PySequence_List(dict) : PyDict_Keys(dict));
  Leaf l;
  l.kind = Leaf::Kind::Keys;
  l.obj = keys ? PyList_AsTuple(keys.get()) : nullptr;
  if (!l.obj) {
    PyErr_Clear();
    return;
  }
  tree_.addLeaf(node(s), std::move(l));
}

void Translator::guardModuleKeys(const VarRef& mod) {
  static PyObject* modulesName = PyUnicode_InternFromString("_modules");
  if (!mod->source) return;
  PyRef mods = PyRef::steal(PyObject_GetAttr(mod->obj.get(), modulesName));
  if (!mods) {
    PyErr_Clear();
    return;
  }
  guardKeys(Source::attr(mod->source, modulesName), mods.get());
}

void Translator::guardSame(const SourceRef& s, const SourceRef& other, bool same) {
  if (!s || !other) return;
  int a = node(s), b = node(other);
  if (a == b) return;
  int later = std::max(a, b), earlier = std::min(a, b);
  for (const Leaf& l : tree_.nodeLeaves(later))
    if (l.kind == Leaf::Kind::SameAs && l.n == earlier) return;
  Leaf l;
  l.kind = Leaf::Kind::SameAs;
  l.n = earlier;
  l.obj = same ? Py_True : Py_False;
  Py_INCREF(l.obj);
  tree_.addLeaf(later, std::move(l));
}

bool Translator::guardEmptyDicts(PyObject* owner, const SourceRef& src, const char* const* names, size_t n,
                                 const std::string& what) {
  // The dicts are read as items of the owner's `__dict__` (one dict lookup
  // each on a cache hit, the `__dict__` node shared with other guards).
  static PyObject* dictName = PyUnicode_InternFromString("__dict__");
  PyRef ns = PyRef::steal(PyObject_GetAttr(owner, dictName));
  if (!ns || !PyDict_CheckExact(ns.get())) {
    PyErr_Clear();
    return fail(GB::ModuleHooks, what + " without a __dict__");
  }
  SourceRef nsSrc = Source::attr(src, dictName);
  for (size_t i = 0; i < n; ++i) {
    PyRef name = PyRef::steal(PyUnicode_InternFromString(names[i]));
    PyObject* d = PyDict_GetItemWithError(ns.get(), name.get());  // borrowed
    if (!d) {  // a torch without this dict
      PyErr_Clear();
      continue;
    }
    Py_ssize_t len = PyObject_Length(d);
    if (len < 0) return failPy(GB::ModuleHooks, what);
    if (len > 0) return fail(GB::ModuleHooks, what);
    guardLen(Source::item(nsSrc, name.get()), 0);
  }
  return true;
}

bool Translator::guardNoRegistrationHooks() {
  // Note [Fresh modules]: nn.Module.__setattr__/register_* run these when a
  // module is built; building the template would run them at capture time only.
  static const char* const kRegistrationHookDicts[] = {"_global_module_registration_hooks",
                                                       "_global_parameter_registration_hooks",
                                                       "_global_buffer_registration_hooks"};
  PyObject* mm = pyTypes()->moduleModule;
  int ci = mm ? host_.constIndex(mm) : -1;
  if (ci < 0) return fail(GB::ModuleHooks, "torch.nn.modules.module");
  return guardEmptyDicts(mm, Source::root(Access::Const, ci), kRegistrationHookDicts,
                         std::size(kRegistrationHookDicts), "global module registration hooks");
}

}  // namespace xacc::capture::translate
