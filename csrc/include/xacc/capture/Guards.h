// Guard trees: the checks that decide whether a cache entry of a captured frame
// may run for the current call. A tree has one node per *source* (how to fetch a
// value again from a frame: an argument slot, a global, a closure cell, an
// entry constant, then attribute and item steps below those); nodes with the
// same path are shared, so `L[0].fc1.weight` and `L[0].fc1.bias` share the
// `L[0]` and `L[0].fc1` prefixes. Each node carries leaf checks (type, id,
// equality, tensor metadata, length, attribute or mapping key present or
// absent). Checking resolves every node once, in insertion order (parents
// before children), and hands the resolved objects back so graph inputs,
// which are sources too, are read without a second lookup. Nothing here is
// generated as Python code; a check never calls back into Python except for
// attribute/item access, `in` and `==` on constants (`type(x)` is no attribute
// access: Access::TypeOf).
//
// Invariant: a node's parent has a smaller index than the node.
#pragma once

#include <Python.h>

#include <cstdint>
#include <string>
#include <vector>

namespace xacc::capture {

/// What a check reads its root sources from.
struct FrameView {
  PyObject* const* args = nullptr;  ///< argument slots (positional, kw-only, *args, **kw)
  size_t nargs = 0;
  PyObject* globals = nullptr;   ///< borrowed
  PyObject* builtins = nullptr;  ///< borrowed
  PyObject* closure = nullptr;   ///< tuple of cells or null (borrowed)
  PyObject* const* consts = nullptr;  ///< the entry's constants
  size_t nconsts = 0;

  /// A view of a frame's slots; `consts` is a tuple of the entry's constants or null.
  static FrameView of(PyObject* const* args, size_t nargs, PyObject* globals, PyObject* builtins,
                      PyObject* closure, PyObject* consts) {
    FrameView v;
    v.args = args;
    v.nargs = nargs;
    v.globals = globals;
    v.builtins = builtins;
    v.closure = closure;
    if (consts) {
      v.consts = &PyTuple_GET_ITEM(consts, 0);
      v.nconsts = static_cast<size_t>(PyTuple_GET_SIZE(consts));
    }
    return v;
  }
};

/// How a node fetches its value (from the frame for roots, else from its parent).
/// AsTensor: `torch.from_numpy(parent)` (zero-copy) of a writable ndarray.
/// DictItem: `dict.__getitem__(parent, key)`, the entry in a dict's own storage
/// (a dict subclass's own __getitem__ is not run; no entry, or a parent that is
/// no dict: the guard fails).
/// Deref: `parent()` of a weakref.ref of that exact type (its referent, None
/// once it died; a parent of any other type fails the guard). Note [Weakref calls].
/// TypeOf: `type(parent)`, read from the object header (Py_TYPE): no
/// `__class__` attribute lookup, so no user code runs.
/// ClassAttr: the attribute `key` of the class `parent` as its MRO holds it
/// (_PyType_Lookup: no metaclass, no descriptor's __get__), what CPython's
/// special-method and method lookups find; absent, or a parent that is no
/// class: the guard fails. Note [Guard reads of the type].
enum class Access : uint8_t { Local, Global, Closure, Const, Attr, Item, AsTensor, DictItem, Deref, TypeOf, ClassAttr };

/// One leaf check on a node's value.
///   Keys:     the value is a dict whose keys, in order, equal the tuple `obj`
///             (a container module's `_modules`: its length, names and order);
///   SameAs:   the value is (obj == Py_True) or is not (Py_False) the value of
///             node `n` (an identity the graph relied on: `a is b`, one input
///             read through two sources);
///   Distinct: the values of all nodes carrying this leaf are pairwise distinct
///             objects (tensor inputs the graph treats as separate tensors).
struct Leaf {
  enum class Kind : uint8_t { Type, Id, Equals, Tensor, Length, NotTensor, HasAttr, HasKey, Keys, SameAs, Distinct };
  Kind kind = Kind::Type;
  /// Type: the type; Id/Equals: the object; HasAttr: the name; HasKey: the key;
  /// Keys: a tuple of keys; SameAs: Py_True or Py_False (strong)
  PyObject* obj = nullptr;
  /// Length; HasAttr/HasKey: 1 when the attribute/key must exist, 0 when it must not
  /// (HasKey: `key in value`, a dict's own lookup for exact dicts); SameAs: the
  /// other node (smaller than this leaf's node)
  int64_t n = 0;
  // Tensor metadata (Kind::Tensor); -1 in sizes/strides means "any".
  PyTypeObject* tensorType = nullptr;
  uint64_t keySet = 0;
  int8_t dtype = 0;
  int8_t deviceType = 0;
  int8_t deviceIndex = -1;
  bool requiresGrad = false;
  /// Set when some dim is dynamic: the tensor must be contiguous (strides are
  /// then not compared one by one).
  bool contiguous = false;
  /// -1: any size; -2: any size >= 2 (a dynamic dim; 0 and 1 stay static
  /// because broadcasting and empty tensors trace differently).
  std::vector<int64_t> sizes, strides;
  /// Type and Id: `obj` is a weak reference to the object (GuardTree::addLeaf;
  /// Note [Identity guards hold weakly]).
  bool weak = false;
  /// Type and Id: the object compared with (borrowed), null when it died.
  PyObject* target() const {
    if (!weak) return obj;
    PyObject* o = PyWeakref_GET_OBJECT(obj);
    return o == Py_None ? nullptr : o;  // None takes no weak reference: it means dead
  }
};

class GuardTree {
public:
  GuardTree() = default;
  GuardTree(const GuardTree&) = delete;
  GuardTree& operator=(const GuardTree&) = delete;
  ~GuardTree();

  /// Finds or adds the node `parent -> access(index | key)`; `parent` is -1 for
  /// a root. `key` (a str for Global/Attr, any hashable for Item on dicts) is
  /// borrowed and retained. Returns the node id.
  int node(int parent, Access access, int64_t index, PyObject* key);
  /// Adds a leaf to node `id` (takes ownership of leaf.obj's new reference).
  /// A Type or Id leaf keeps its object weakly when it can (Note [Identity
  /// guards hold weakly]).
  void addLeaf(int id, Leaf leaf);
  /// Requires torch's grad mode to equal `enabled` when checked.
  void setGradMode(bool enabled) { gradMode_ = enabled ? 1 : 0; }
  /// Requires torch's autocast state (autocastState()) to equal `state` when
  /// checked; -1 leaves it unguarded. Graphs are traced on meta tensors, which
  /// autocast never touches, so an entry is only valid for the state it saw.
  void setAutocast(int64_t state) { autocast_ = state; }
  /// Requires torch's inference mode to equal `enabled` when checked (an entry
  /// that models an inference_mode region: Note [Entry-guarded modes]).
  void setInferenceMode(bool enabled) { inferenceMode_ = enabled ? 1 : 0; }
  /// -1: inference mode not guarded; 0/1: required disabled/enabled.
  int inferenceMode() const { return inferenceMode_; }
  /// Requires torch's mode stacks to be the ones seen at capture (Note [Mode
  /// stacks]): the TorchFunctionMode stack holds modes of exactly the types in
  /// `fnModeTypes` (bottom first; new references taken), and the
  /// TorchDispatchMode stack `dispatchModes` modes.
  void setModes(const std::vector<PyObject*>& fnModeTypes, int64_t dispatchModes);
  /// Whether setModes was called, and its arguments (borrowed), for serialization.
  bool modesGuarded() const { return modesGuarded_; }
  const std::vector<PyObject*>& fnModeTypes() const { return fnModeTypes_; }
  int64_t dispatchModes() const { return dispatchModes_; }
  /// The thread's TorchFunctionMode types, bottom first (new references), and
  /// its TorchDispatchMode count.
  static std::vector<PyObject*> currentFnModeTypes();
  static int64_t currentDispatchModes();
  /// The thread's autocast state: for each device type torch autocasts (cpu,
  /// cuda, xpu, ...), whether it is enabled and its dtype, plus the cache flag;
  /// 0 when autocast is off everywhere.
  static int64_t autocastState();
  /// Guards that dim `dimA` of the tensor at node `a` equals dim `dimB` of the
  /// tensor at node `b` (dynamic dims sharing a symbol; checked after the leaves).
  void addDimEquality(int a, int dimA, int b, int dimB, std::string symbol) {
    dimEqs_.push_back({a, dimA, b, dimB, std::move(symbol)});
  }
  /// Guards a relation a branch relied on between dim `dimA` of the tensor at
  /// node `a` and dim `dimB` of the tensor at node `b`, or the constant `value`
  /// when `b` is -1 (`s0 <= 2048`, `s0 != s1`): `op` is one of == != < <= > >=.
  /// `what` names the sizes in messages. Checked after the leaves.
  void addDimRelation(int a, int dimA, const std::string& op, int b, int dimB, int64_t value, std::string what);

  size_t size() const { return nodes_.size(); }
  /// Human-readable source path of node `id`, e.g. `L['x'].weight`.
  std::string path(int id) const;
  /// Names used for root `Local` nodes in paths and messages.
  void setLocalNames(std::vector<std::string> names) { localNames_ = std::move(names); }

  /// Resolves every node and runs every leaf. `resolved` must hold size()
  /// slots; on return it holds new references (or null) that the caller
  /// releases with release(). On failure returns false and, when `why` is
  /// given, describes the first failing guard. Never leaves a Python error set.
  bool check(const FrameView& view, PyObject** resolved, std::string* why) const;
  /// Resolves nodes without running leaves (graph inputs of a checked entry).
  bool resolve(const FrameView& view, PyObject** resolved) const;
  void release(PyObject** resolved) const;

  /// One line per leaf, `path: check` (for explain and XACC_LOG=guards).
  std::vector<std::string> describe() const;
  size_t numLeaves() const;

  // Read-only access for serialization (AOT artifacts, xacc/_src/aot): a tree
  // rebuilt by calling node() and addLeaf() in node order is the same tree.
  int nodeParent(int id) const { return nodes_[id].parent; }
  Access nodeAccess(int id) const { return nodes_[id].access; }
  int64_t nodeIndex(int id) const { return nodes_[id].index; }
  PyObject* nodeKey(int id) const { return nodes_[id].key; }  ///< borrowed; may be null
  const std::vector<Leaf>& nodeLeaves(int id) const { return nodes_[id].leaves; }
  /// -1: grad mode not guarded; 0/1: required disabled/enabled.
  int gradMode() const { return gradMode_; }
  /// -1: autocast not guarded; else the state required (setAutocast).
  int64_t autocast() const { return autocast_; }
  const std::vector<std::string>& localNames() const { return localNames_; }
  /// The dim guards in the order added, for serialization: `op` is "" for an
  /// equality added by addDimEquality (its `what` is the shared symbol), else the
  /// operator given to addDimRelation. Replaying them in order gives the same guards.
  struct DimGuard {
    int a, dimA;
    std::string op;
    int b, dimB;
    int64_t value;
    std::string what;
  };
  std::vector<DimGuard> dimGuards() const;

private:
  struct Node {
    int parent = -1;
    Access access = Access::Local;
    int64_t index = 0;
    PyObject* key = nullptr;
    std::vector<Leaf> leaves;
  };
  PyObject* fetch(const Node& n, const FrameView& view, PyObject** resolved) const;
  bool runLeaf(const Leaf& l, PyObject* v, PyObject* const* resolved) const;
  std::string leafText(const Leaf& l) const;

  struct DimEq {
    int a, dimA, b, dimB;
    std::string symbol;
    /// A relation (addDimRelation): 0 means equality with dim `dimB` of `b`.
    enum class Op : uint8_t { None, Eq, Ne, Lt, Le, Gt, Ge } op = Op::None;
    int64_t value = 0;  ///< the constant compared with when b == -1
  };
  std::string dimEqText(const DimEq& e) const;

  std::vector<Node> nodes_;
  std::vector<DimEq> dimEqs_;
  std::vector<std::string> localNames_;
  int gradMode_ = -1;  ///< -1: not guarded
  int64_t autocast_ = -1;  ///< -1: not guarded
  int inferenceMode_ = -1;  ///< -1: not guarded
  bool modesGuarded_ = false;
  std::vector<PyObject*> fnModeTypes_;  ///< owned references
  int64_t dispatchModes_ = 0;
  bool modesMatch() const;
};

}  // namespace xacc::capture
