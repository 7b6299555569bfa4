// Guard trees: resolution of sources and leaf checks. See Guards.h.
#include "xacc/capture/Guards.h"

#include <torch/csrc/autograd/python_variable.h>
#include <ATen/PythonTorchFunctionTLS.h>
#include <ATen/autocast_mode.h>
#include <c10/core/impl/TorchDispatchModeTLS.h>
#include <torch/csrc/PyInterpreter.h>
#include <c10/core/GradMode.h>
#include <c10/core/InferenceMode.h>
#include <torch/csrc/utils/tensor_numpy.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace xacc::capture {

GuardTree::~GuardTree() {
  if (!Py_IsInitialized()) return;
  PyGILState_STATE g = PyGILState_Ensure();
  for (Node& n : nodes_) {
    Py_XDECREF(n.key);
    for (Leaf& l : n.leaves) Py_XDECREF(l.obj);
  }
  for (PyObject* t : fnModeTypes_) Py_DECREF(t);
  PyGILState_Release(g);
}

// Note [Mode stacks]
// ~~~~~~~~~~~~~~~~~~
// A TorchFunctionMode sees every torch call the program makes and may change
// its result; a TorchDispatchMode sees every ATen op. A graph runs its ops
// below both (the ATen executor, or compiled kernels that never dispatch), so
// a graph is only valid for the mode stacks it was captured under. Every entry
// is guarded on them: the function-mode stack holds modes of the same types,
// bottom first, and the dispatch-mode stack as many modes as at capture.
// convert.callback captures only under no mode but xjit's own EraseDevice
// (whose rewrites the recorder makes itself: device.py), whose every instance
// behaves alike, so types suffice; under any other mode the frame runs in
// Python (an entry guarded on that stack, which Python runs exactly).
// Before this guard, a frame captured outside a mode that negates Tensor.add
// returned the unnegated sum when called under it, and a frame first captured
// under it kept negating after the mode was left (tests/python/capture/test_mode_stacks.py).
void GuardTree::setModes(const std::vector<PyObject*>& fnModeTypes, int64_t dispatchModes) {
  for (PyObject* t : fnModeTypes_) Py_DECREF(t);
  fnModeTypes_ = fnModeTypes;
  for (PyObject* t : fnModeTypes_) Py_INCREF(t);
  dispatchModes_ = dispatchModes;
  modesGuarded_ = true;
}

/// The type of the thread's i-th TorchFunctionMode, bottom first (borrowed).
static PyObject* fnModeTypeAt(int64_t i) {
  PyObject* mode = at::impl::PythonTorchFunctionTLS::get_stack_at(i)->ptr(getPyInterpreter());
  return reinterpret_cast<PyObject*>(Py_TYPE(mode));
}

std::vector<PyObject*> GuardTree::currentFnModeTypes() {
  std::vector<PyObject*> out;
  int64_t n = at::impl::PythonTorchFunctionTLS::stack_len();
  for (int64_t i = 0; i < n; ++i) {
    PyObject* t = fnModeTypeAt(i);
    Py_INCREF(t);
    out.push_back(t);
  }
  return out;
}

int64_t GuardTree::currentDispatchModes() { return c10::impl::TorchDispatchModeTLS::stack_len(); }

bool GuardTree::modesMatch() const {
  int64_t n = at::impl::PythonTorchFunctionTLS::stack_len();
  if (n != static_cast<int64_t>(fnModeTypes_.size())) return false;
  for (int64_t i = 0; i < n; ++i)
    if (fnModeTypeAt(i) != fnModeTypes_[i]) return false;
  return c10::impl::TorchDispatchModeTLS::stack_len() == dispatchModes_;
}

/// `torch.from_numpy(array)` for a writable ndarray (the graph may write
/// through it as NumPy code would), else null with no error set.
static PyObject* fromNumpy(PyObject* array) {
  Py_buffer view;
  if (PyObject_GetBuffer(array, &view, PyBUF_WRITABLE | PyBUF_STRIDES) < 0) {
    PyErr_Clear();
    return nullptr;
  }
  PyBuffer_Release(&view);
  try {
    return THPVariable_Wrap(torch::utils::tensor_from_numpy(array, /*warn_if_not_writeable=*/false));
  } catch (const std::exception&) {
    PyErr_Clear();
    return nullptr;
  }
}

int GuardTree::node(int parent, Access access, int64_t index, PyObject* key) {
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const Node& n = nodes_[i];
    if (n.parent != parent || n.access != access || n.index != index) continue;
    if (n.key == key) return static_cast<int>(i);
    if (n.key && key) {
      int eq = PyObject_RichCompareBool(n.key, key, Py_EQ);
      if (eq < 0) PyErr_Clear();
      if (eq == 1 && Py_TYPE(n.key) == Py_TYPE(key)) return static_cast<int>(i);
    }
  }
  Node n;
  n.parent = parent;
  n.access = access;
  n.index = index;
  n.key = key;
  Py_XINCREF(key);
  nodes_.push_back(std::move(n));
  return static_cast<int>(nodes_.size() - 1);
}

// Note [Identity guards hold weakly]: a guard tree lives in a code object's
// cache (co_extra), which the garbage collector cannot traverse. An identity
// guard on a function, a class or a module defined next to the guarded
// function (a helper it calls, the class of an argument) would hold that
// object strongly, and through its __globals__ (or its methods') the guarded
// function and its code object: a cycle never collected when the globals dict
// dies (test_memory_bound's private-globals case). Type and Id leaves
// therefore keep a weak reference when the object takes one (a static type
// cannot die and is kept as is). The check stays exact: a live value is the
// object only while the object lives, and a dead referent fails the guard, so
// an address reused by a new object never passes.
void GuardTree::addLeaf(int id, Leaf leaf) {
  if ((leaf.kind == Leaf::Kind::Id || leaf.kind == Leaf::Kind::Type) && leaf.obj && !leaf.weak &&
      PyType_SUPPORTS_WEAKREFS(Py_TYPE(leaf.obj)) &&
      (leaf.kind == Leaf::Kind::Id || PyType_HasFeature(reinterpret_cast<PyTypeObject*>(leaf.obj), Py_TPFLAGS_HEAPTYPE))) {
    PyObject* ref = PyWeakref_NewRef(leaf.obj, nullptr);
    if (ref) {
      Py_DECREF(leaf.obj);
      leaf.obj = ref;
      leaf.weak = true;
    } else {
      PyErr_Clear();
    }
  }
  nodes_[id].leaves.push_back(std::move(leaf));
}

size_t GuardTree::numLeaves() const {
  size_t n = (gradMode_ >= 0 ? 1 : 0) + (autocast_ >= 0 ? 1 : 0) + (inferenceMode_ >= 0 ? 1 : 0) +
             (modesGuarded_ ? 1 : 0);
  for (const Node& node : nodes_) n += node.leaves.size();
  n += dimEqs_.size();
  return n;
}

static std::string reprOf(PyObject* o) {
  PyObject* r = PyObject_Repr(o);
  if (!r) {
    PyErr_Clear();
    return "<?>";
  }
  const char* s = PyUnicode_AsUTF8(r);
  std::string out = s ? s : "<?>";
  if (!s) PyErr_Clear();
  Py_DECREF(r);
  return out;
}

std::string GuardTree::path(int id) const {
  const Node& n = nodes_[id];
  std::string base = n.parent >= 0 ? path(n.parent) : std::string();
  switch (n.access) {
    case Access::Local:
      if (n.index < static_cast<int64_t>(localNames_.size()))
        return "L['" + localNames_[n.index] + "']";
      return "L[" + std::to_string(n.index) + "]";
    case Access::Global: return "G[" + reprOf(n.key) + "]";
    case Access::Closure: return "C[" + std::to_string(n.index) + "]";
    case Access::Const: return "K[" + std::to_string(n.index) + "]";
    case Access::Attr: return base + "." + (PyUnicode_Check(n.key) ? PyUnicode_AsUTF8(n.key) : "?");
    case Access::Item: return base + "[" + (n.key ? reprOf(n.key) : std::to_string(n.index)) + "]";
    case Access::AsTensor: return base + ".<from_numpy>";
    case Access::DictItem: return "dict.__getitem__(" + base + ", " + reprOf(n.key) + ")";
    case Access::Deref: return base + "()";
    case Access::TypeOf: return "type(" + base + ")";
    case Access::ClassAttr: return base + ".__mro__[" + (PyUnicode_Check(n.key) ? PyUnicode_AsUTF8(n.key) : "?") + "]";
  }
  return base;
}

// Note [Guard reads of the type]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// Python looks special methods (`len(x)`, `k in x`, `x[k]`), the class
// attribute a bound method comes from and a module's forward up on type(x),
// the object header's type: no attribute lookup, so neither a class's
// __getattribute__ nor a `__class__` property (or a proxy answering another
// class) runs. The sources the translator makes for those lookups
// (TranslateValues.cpp, TranslateObjects.cpp, TranslateCalls.cpp) read the
// class the same way, Access::TypeOf (fetched with Py_TYPE; rebuilt by
// Codegen.cpp as `type(x)`; serialized as kind "Y", AOT FORMAT 4), and never
// `x.__class__`, which would run that user code on every guard check where
// plain Python runs none. User code that reads `x.__class__` still gets an
// Attr source: Python runs __getattribute__ for it. The method itself is read
// from the class as those lookups read it, Access::ClassAttr (_PyType_Lookup,
// printed `type(x).__mro__[__len__]`, kind "M"): an Attr step on the class
// would run a metaclass's __getattribute__ or a Python __get__ of whatever
// replaced the method. A module's forward (TranslateCalls.cpp) stays an Attr
// step of type(m), `type(m).forward`, as Python reads it (a source its
// closure cells are read and rebuilt through).

/// `parent[key]` (a new reference): an exact dict's own lookup, anything else
/// its __getitem__.
static PyObject* keyedItem(PyObject* parent, PyObject* key) {
  if (!PyDict_CheckExact(parent)) return PyObject_GetItem(parent, key);
  PyObject* v = PyDict_GetItemWithError(parent, key);
  Py_XINCREF(v);
  return v;
}

PyObject* GuardTree::fetch(const Node& n, const FrameView& view, PyObject** resolved) const {
  PyObject* parent = n.parent >= 0 ? resolved[n.parent] : nullptr;
  switch (n.access) {
    case Access::Local:
      if (n.index >= static_cast<int64_t>(view.nargs) || !view.args[n.index]) return nullptr;
      Py_INCREF(view.args[n.index]);
      return view.args[n.index];
    case Access::Global: {
      PyObject* v = view.globals ? PyDict_GetItemWithError(view.globals, n.key) : nullptr;
      if (!v && !PyErr_Occurred() && view.builtins && PyDict_Check(view.builtins))
        v = PyDict_GetItemWithError(view.builtins, n.key);
      Py_XINCREF(v);
      return v;
    }
    case Access::Closure: {
      if (!view.closure || n.index >= PyTuple_GET_SIZE(view.closure)) return nullptr;
      PyObject* v = PyCell_GET(PyTuple_GET_ITEM(view.closure, n.index));
      Py_XINCREF(v);
      return v;
    }
    case Access::Const:
      if (n.index >= static_cast<int64_t>(view.nconsts)) return nullptr;
      Py_INCREF(view.consts[n.index]);
      return view.consts[n.index];
    case Access::Attr:
      return parent ? PyObject_GetAttr(parent, n.key) : nullptr;
    case Access::Item:
      if (!parent) return nullptr;
      if (n.key) return keyedItem(parent, n.key);
      if (PyTuple_CheckExact(parent)) {
        if (n.index >= PyTuple_GET_SIZE(parent)) return nullptr;
        PyObject* v = PyTuple_GET_ITEM(parent, n.index);
        Py_INCREF(v);
        return v;
      }
      if (PyList_CheckExact(parent)) {
        if (n.index >= PyList_GET_SIZE(parent)) return nullptr;
        PyObject* v = PyList_GET_ITEM(parent, n.index);
        Py_INCREF(v);
        return v;
      }
      if (PyDict_Check(parent)) {
        // An int key (Source::item keeps one as its index): `d[0]` is the
        // key 0, which a sequence read never finds (the guard always failed).
        PyObject* k = PyLong_FromLongLong(n.index);
        if (!k) return nullptr;
        PyObject* v = keyedItem(parent, k);
        Py_DECREF(k);
        return v;
      }
      return PySequence_GetItem(parent, n.index);
    case Access::AsTensor:
      return parent ? fromNumpy(parent) : nullptr;
    case Access::DictItem: {
      if (!parent || !PyDict_Check(parent) || !n.key) return nullptr;
      PyObject* v = PyDict_GetItemWithError(parent, n.key);  // the storage: no __getitem__, no __missing__
      Py_XINCREF(v);
      return v;
    }
    case Access::Deref: {  // ref(): the referent, None once it died (a subclass may override __call__)
      if (!parent || !PyWeakref_CheckRefExact(parent)) return nullptr;
      PyObject* v = PyWeakref_GET_OBJECT(parent);
      Py_INCREF(v);
      return v;
    }
    case Access::TypeOf: {  // Note [Guard reads of the type]
      if (!parent) return nullptr;
      PyObject* t = reinterpret_cast<PyObject*>(Py_TYPE(parent));
      Py_INCREF(t);
      return t;
    }
    case Access::ClassAttr: {  // Note [Guard reads of the type]
      if (!parent || !PyType_Check(parent) || !n.key) return nullptr;
      PyObject* v = _PyType_Lookup(reinterpret_cast<PyTypeObject*>(parent), n.key);  // borrowed; sets no error
      Py_XINCREF(v);
      return v;
    }
  }
  return nullptr;
}

int64_t GuardTree::autocastState() {
  // Bits 0-15: enabled per device type autocast supports; 16: the cast cache;
  // 24-31, 32-39, 40-47: the dtypes of cpu, cuda and xpu when enabled.
  int64_t s = 0;
  const auto& devices = at::autocast::_AUTOCAST_SUPPORTED_DEVICES;
  for (size_t i = 0; i < devices.size() && i < 16; ++i)
    if (at::autocast::is_autocast_enabled(devices[i])) s |= int64_t{1} << i;
  if (s == 0) return 0;
  if (at::autocast::is_autocast_cache_enabled()) s |= int64_t{1} << 16;
  const c10::DeviceType withDtype[] = {at::kCPU, at::kCUDA, at::kXPU};
  for (int i = 0; i < 3; ++i)
    if (at::autocast::is_autocast_enabled(withDtype[i]))
      s |= static_cast<int64_t>(static_cast<uint8_t>(at::autocast::get_autocast_dtype(withDtype[i])))
           << (24 + 8 * i);
  return s;
}

namespace {
/// Whether `v` is a dict whose keys are, in order, the items of tuple `keys`.
bool keysEqual(PyObject* v, PyObject* keys) {
  if (!PyDict_Check(v) || PyDict_GET_SIZE(v) != PyTuple_GET_SIZE(keys)) return false;
  if (PyODict_Check(v)) {
    // An OrderedDict's order is its own (move_to_end, `prepend=True` hooks),
    // not the order of the dict storage PyDict_Next walks.
    PyObject* order = PySequence_Tuple(v);
    int eq = order ? PyObject_RichCompareBool(order, keys, Py_EQ) : -1;
    Py_XDECREF(order);
    if (eq < 0) PyErr_Clear();
    return eq == 1;
  }
  PyObject *k, *item;
  Py_ssize_t pos = 0, i = 0;
  while (PyDict_Next(v, &pos, &k, &item)) {
    PyObject* want = PyTuple_GET_ITEM(keys, i++);
    if (k == want) continue;
    if (Py_TYPE(k) != Py_TYPE(want)) return false;
    int eq = PyObject_RichCompareBool(k, want, Py_EQ);
    if (eq != 1) {
      if (eq < 0) PyErr_Clear();
      return false;
    }
  }
  return true;
}
}  // namespace

bool GuardTree::runLeaf(const Leaf& l, PyObject* v, PyObject* const* resolved) const {
  switch (l.kind) {
    case Leaf::Kind::Keys: return keysEqual(v, l.obj);
    case Leaf::Kind::SameAs: return (v == resolved[l.n]) == (l.obj == Py_True);
    case Leaf::Kind::Distinct: return true;  // checked over all its nodes in check()
    case Leaf::Kind::Type: {
      PyObject* t = l.target();
      return t && reinterpret_cast<PyObject*>(Py_TYPE(v)) == t;
    }
    case Leaf::Kind::Id: {
      PyObject* o = l.target();
      return o && v == o;
    }
    case Leaf::Kind::Equals: {
      if (v == l.obj) return true;
      if (Py_TYPE(v) != Py_TYPE(l.obj)) return false;
      if (THPVariable_CheckExact(v) && THPVariable_CheckExact(l.obj)) {
        // A known tensor value (Note [Known tensor values] in xacc/_src/capture/known.py):
        // a small integer CPU tensor compared byte for byte, without dispatching.
        const at::Tensor& a = THPVariable_Unpack(v);
        const at::Tensor& b = THPVariable_Unpack(l.obj);
        if (a.defined() && b.defined() && a.is_cpu() && b.is_cpu() && a.scalar_type() == b.scalar_type() &&
            (c10::isIntegralType(a.scalar_type(), /*includeBool=*/true)) && a.sizes() == b.sizes() &&
            a.numel() <= 16 && a.is_contiguous() && b.is_contiguous() && !a.is_conj() && !a.is_neg())
          return a.numel() == 0 || std::memcmp(a.const_data_ptr(), b.const_data_ptr(), a.nbytes()) == 0;
      }
      int eq = PyObject_RichCompareBool(v, l.obj, Py_EQ);
      if (eq < 0) PyErr_Clear();
      return eq == 1;
    }
    case Leaf::Kind::Length: {
      Py_ssize_t n = PyObject_Length(v);
      if (n < 0) PyErr_Clear();
      return n == l.n;
    }
    case Leaf::Kind::NotTensor: return !THPVariable_Check(v);
    case Leaf::Kind::HasAttr: {
      // Absent means AttributeError; any other error fails the guard.
      PyObject* a = PyObject_GetAttr(v, l.obj);
      if (a) {
        Py_DECREF(a);
        return l.n != 0;
      }
      bool absent = PyErr_ExceptionMatches(PyExc_AttributeError);
      PyErr_Clear();
      return absent && l.n == 0;
    }
    case Leaf::Kind::HasKey: {
      // An error (unhashable key, a raising __contains__) fails the guard.
      int r = PyDict_CheckExact(v) ? PyDict_Contains(v, l.obj) : PySequence_Contains(v, l.obj);
      if (r < 0) {
        PyErr_Clear();
        return false;
      }
      return (r == 1) == (l.n != 0);
    }
    case Leaf::Kind::Tensor: {
      if (Py_TYPE(v) != l.tensorType) return false;
      const at::Tensor& t = THPVariable_Unpack(v);
      if (t.key_set().raw_repr() != l.keySet) return false;
      if (static_cast<int8_t>(t.scalar_type()) != l.dtype) return false;
      c10::Device d = t.device();
      if (static_cast<int8_t>(d.type()) != l.deviceType || d.index() != l.deviceIndex) return false;
      if (t.requires_grad() != l.requiresGrad) return false;
      if (t.dim() != static_cast<int64_t>(l.sizes.size())) return false;
      auto sizes = t.sizes();
      auto strides = t.strides();
      if (l.contiguous && !t.is_contiguous()) return false;
      for (size_t i = 0; i < l.sizes.size(); ++i) {
        if (l.sizes[i] == -2 && sizes[i] < 2) return false;
        if (l.sizes[i] >= 0 && sizes[i] != l.sizes[i]) return false;
        if (!l.strides.empty() && l.strides[i] >= 0 && strides[i] != l.strides[i]) return false;
      }
      return true;
    }
  }
  return false;
}

std::string GuardTree::leafText(const Leaf& l) const {
  switch (l.kind) {
    case Leaf::Kind::Type:
      return l.target() ? std::string("type is ") + reinterpret_cast<PyTypeObject*>(l.target())->tp_name
                        : std::string("type is a class that no longer exists");
    case Leaf::Kind::Id: return "is the object seen at capture (id)";
    case Leaf::Kind::Equals: return "== " + reprOf(l.obj);
    case Leaf::Kind::Length: return "len == " + std::to_string(l.n);
    case Leaf::Kind::NotTensor: return "is not a tensor";
    case Leaf::Kind::HasAttr:
      return std::string(l.n ? "has" : "has no") + " attribute " + PyUnicode_AsUTF8(l.obj);
    case Leaf::Kind::HasKey: return std::string(l.n ? "has" : "has no") + " key " + reprOf(l.obj);
    case Leaf::Kind::Keys: return "keys == " + reprOf(l.obj);
    case Leaf::Kind::SameAs: return std::string(l.obj == Py_True ? "is " : "is not ") + path(static_cast<int>(l.n));
    case Leaf::Kind::Distinct: return "is distinct from the other tensor inputs";
    case Leaf::Kind::Tensor: {
      std::string s = "tensor(dtype=" +
                      std::string(c10::toString(static_cast<c10::ScalarType>(l.dtype))) +
                      ", device=" +
                      c10::Device(static_cast<c10::DeviceType>(l.deviceType), l.deviceIndex).str() +
                      ", size=[";
      for (size_t i = 0; i < l.sizes.size(); ++i)
        s += (i ? ", " : "") + (l.sizes[i] == -2  ? std::string(">=2")
                                : l.sizes[i] < 0 ? std::string("?")
                                                 : std::to_string(l.sizes[i]));
      s += "], stride=[";
      if (l.contiguous) s += "?";
      for (size_t i = 0; i < l.strides.size(); ++i)
        s += (i ? ", " : "") + (l.strides[i] < 0 ? std::string("?") : std::to_string(l.strides[i]));
      s += std::string("]") + (l.contiguous ? ", contiguous" : "") + std::string(", requires_grad=") + (l.requiresGrad ? "True" : "False") + ")";
      return s;
    }
  }
  return "?";
}

bool GuardTree::resolve(const FrameView& view, PyObject** resolved) const {
  for (size_t i = 0; i < nodes_.size(); ++i) resolved[i] = nullptr;
  bool ok = true;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    resolved[i] = fetch(nodes_[i], view, resolved);
    if (!resolved[i]) {
      PyErr_Clear();
      ok = false;
    }
  }
  return ok;
}

bool GuardTree::check(const FrameView& view, PyObject** resolved, std::string* why) const {
  for (size_t i = 0; i < nodes_.size(); ++i) resolved[i] = nullptr;
  if (gradMode_ >= 0 && c10::GradMode::is_enabled() != (gradMode_ == 1)) {
    if (why) *why = std::string("grad mode is ") + (gradMode_ ? "enabled" : "disabled");
    return false;
  }
  if (inferenceMode_ >= 0 && c10::InferenceMode::is_enabled() != (inferenceMode_ == 1)) {
    if (why) *why = std::string("inference mode is ") + (inferenceMode_ ? "enabled" : "disabled");
    return false;
  }
  if (autocast_ >= 0 && autocastState() != autocast_) {
    if (why) *why = autocast_ == 0 ? "autocast is disabled" : "autocast state is the one seen at capture";
    return false;
  }
  if (modesGuarded_ && !modesMatch()) {
    if (why) *why = "the torch function and dispatch mode stacks are the ones seen at capture";
    return false;
  }
  PyObject* smallDistinct[16];
  std::vector<PyObject*> bigDistinct;
  size_t numDistinct = 0;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const Node& n = nodes_[i];
    PyObject* v = fetch(n, view, resolved);
    if (!v) {
      PyErr_Clear();
      if (why) *why = path(static_cast<int>(i)) + " exists";
      return false;
    }
    resolved[i] = v;
    for (const Leaf& l : n.leaves) {
      if (l.kind == Leaf::Kind::Distinct) {
        if (numDistinct < 16) smallDistinct[numDistinct] = v;
        else {
          if (bigDistinct.empty()) bigDistinct.assign(smallDistinct, smallDistinct + 16);
          bigDistinct.push_back(v);
        }
        ++numDistinct;
        continue;
      }
      if (!runLeaf(l, v, resolved)) {
        if (why) *why = path(static_cast<int>(i)) + ": " + leafText(l);
        return false;
      }
    }
  }
  if (numDistinct > 1) {
    PyObject** ptrs = numDistinct <= 16 ? smallDistinct : bigDistinct.data();
    std::sort(ptrs, ptrs + numDistinct);
    if (std::adjacent_find(ptrs, ptrs + numDistinct) != ptrs + numDistinct) {
      if (why) *why = "tensor inputs seen as distinct objects at capture are distinct";
      return false;
    }
  }
  for (const DimEq& e : dimEqs_) {
    // Both nodes carry tensor leaves (or, for dim -1, an int's type leaf),
    // checked above: plain tensors of enough rank, exact ints. Dim -1 stands
    // for the node's own value, an int (Note [Size arguments] in host.py).
    PyObject* a = resolved[e.a];
    PyObject* b = e.b >= 0 ? resolved[e.b] : nullptr;
    auto sizeOk = [](PyObject* o, int dim) { return dim < 0 ? PyLong_CheckExact(o) : THPVariable_Check(o); };
    auto sizeOf = [](PyObject* o, int dim) {
      return dim < 0 ? static_cast<int64_t>(PyLong_AsLongLong(o)) : THPVariable_Unpack(o).size(dim);
    };
    bool ok = sizeOk(a, e.dimA) && (e.b < 0 || sizeOk(b, e.dimB));
    int64_t x = 0, y = 0;
    if (ok) {
      x = sizeOf(a, e.dimA);
      y = e.b >= 0 ? sizeOf(b, e.dimB) : e.value;
      if (PyErr_Occurred()) {  // an int too large for int64: no size
        PyErr_Clear();
        ok = false;
      }
    }
    if (ok) {
      switch (e.op) {
        case DimEq::Op::None:
        case DimEq::Op::Eq: ok = x == y; break;
        case DimEq::Op::Ne: ok = x != y; break;
        case DimEq::Op::Lt: ok = x < y; break;
        case DimEq::Op::Le: ok = x <= y; break;
        case DimEq::Op::Gt: ok = x > y; break;
        case DimEq::Op::Ge: ok = x >= y; break;
      }
    }
    if (!ok) {
      if (why) *why = dimEqText(e);
      return false;
    }
  }
  return true;
}

void GuardTree::addDimRelation(int a, int dimA, const std::string& op, int b, int dimB, int64_t value,
                               std::string what) {
  static const std::pair<const char*, DimEq::Op> kOps[] = {{"==", DimEq::Op::Eq}, {"!=", DimEq::Op::Ne},
                                                           {"<", DimEq::Op::Lt},  {"<=", DimEq::Op::Le},
                                                           {">", DimEq::Op::Gt},  {">=", DimEq::Op::Ge}};
  DimEq e{a, dimA, b, dimB, std::move(what)};
  for (const auto& [name, code] : kOps)
    if (op == name) e.op = code;
  if (e.op == DimEq::Op::None) throw std::invalid_argument("dim relation: unknown operator " + op);
  e.value = value;
  dimEqs_.push_back(std::move(e));
}

namespace {
/// DimEq::Op spelled as addDimRelation takes it ("" for an equality of shared symbols).
const char* const kDimOpNames[] = {"", "==", "!=", "<", "<=", ">", ">="};
}  // namespace

std::vector<GuardTree::DimGuard> GuardTree::dimGuards() const {
  std::vector<DimGuard> out;
  out.reserve(dimEqs_.size());
  for (const DimEq& e : dimEqs_)
    out.push_back({e.a, e.dimA, kDimOpNames[static_cast<int>(e.op)], e.b, e.dimB, e.value, e.symbol});
  return out;
}

std::string GuardTree::dimEqText(const DimEq& e) const {
  // Dim -1: the node is an int (a size argument, Note [Size arguments] in host.py).
  auto size = [&](int node, int dim) {
    return dim < 0 ? path(node) : path(node) + ".size(" + std::to_string(dim) + ")";
  };
  if (e.op != DimEq::Op::None) {
    std::string rhs = e.b >= 0 ? size(e.b, e.dimB) : std::to_string(e.value);
    return size(e.a, e.dimA) + " " + kDimOpNames[static_cast<int>(e.op)] + " " + rhs + " (" + e.symbol + ")";
  }
  return size(e.a, e.dimA) + " == " + size(e.b, e.dimB) + " (both are " + e.symbol + ")";
}

void GuardTree::release(PyObject** resolved) const {
  for (size_t i = 0; i < nodes_.size(); ++i) Py_XDECREF(resolved[i]);
}

std::vector<std::string> GuardTree::describe() const {
  std::vector<std::string> out;
  if (gradMode_ >= 0) out.push_back(std::string("grad mode ") + (gradMode_ ? "enabled" : "disabled"));
  if (inferenceMode_ >= 0) out.push_back(std::string("inference mode ") + (inferenceMode_ ? "enabled" : "disabled"));
  if (autocast_ >= 0) out.push_back(autocast_ == 0 ? "autocast disabled" : "autocast state " + std::to_string(autocast_));
  if (modesGuarded_) {
    std::string fn;
    for (PyObject* t : fnModeTypes_) fn += (fn.empty() ? "" : ", ") + std::string(reinterpret_cast<PyTypeObject*>(t)->tp_name);
    out.push_back("torch function modes [" + fn + "], " + std::to_string(dispatchModes_) + " dispatch modes");
  }
  for (size_t i = 0; i < nodes_.size(); ++i)
    for (const Leaf& l : nodes_[i].leaves) out.push_back(path(static_cast<int>(i)) + ": " + leafText(l));
  for (const DimEq& e : dimEqs_) out.push_back(dimEqText(e));
  return out;
}

}  // namespace xacc::capture
