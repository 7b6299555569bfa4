// The bytecode translator: symbolic execution of CPython 3.11 code objects.
//
// One `Frame` per code object being run (the captured frame and every inlined
// callee). Each opcode has a handler (one opcode family per file:
// TranslateStack.cpp, TranslateCalls.cpp, ...); an opcode without a handler, or
// a handler that meets something it cannot model, *fails* with a graph-break
// row (`fail(GB::Print, detail)`: xacc/capture/GraphBreaks.def) and a detail, and
// translation stops at that instruction. The translator never runs user code:
// torch calls run on meta tensors through the `Host` (which observes them with
// libtorch's dispatcher and records ATen nodes), user functions and
// `nn.Module.forward` are inlined, everything else is a break. Values read from
// the frame are wrapped by `wrap`, which adds guards on their sources.
//
// Errors are returned, not thrown: a handler returns false (or a null VarRef)
// after `fail(...)`; the first failure wins and carries the innermost user
// location. A Python error raised by a call the translator makes is turned
// into a failure and cleared, never left pending.
#pragma once

#include <Python.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "Bytecode.h"
#include "Value.h"
#include "xacc/capture/GraphBreaks.h"
#include "xacc/capture/Guards.h"

namespace xacc::capture::translate {

/// What the translator asks of the Python side: tensor inputs, torch calls on
/// metas, and the graph values bound to metas. Implemented by the bindings
/// over the recorder (xacc/_src/capture/recorder.py).
/// A symbolic number computed from a dynamic size (Note [Symbolic sizes] in
/// TranslateScalars.cpp).
bool isSizeSym(const VarRef& v);

class Host {
public:
  virtual ~Host() = default;
  /// Meta twin of `tensor`, bound to a new graph input read from guard node
  /// `node` (with tensor guards unless `guard` is false). Null + `detail` on
  /// failure.
  virtual PyRef tensorInput(PyObject* tensor, int node, bool guard, std::string& code,
                            std::string& detail) = 0;
  /// `tensorInput` for several tensors in one call (Note [Tensor arguments in
  /// one call]): `items` is a list of (tensor, node, guard) tuples; returns a
  /// list of their metas in order, ending at the first that failed with the
  /// exception it raised (its `code` and `detail`). Null + code/detail on error.
  virtual PyRef tensorInputs(PyObject* items, std::string& code, std::string& detail) = 0;
  /// Runs `fn(*args, **kwargs)` on metas, recording the ATen ops it dispatches.
  virtual PyRef record(PyObject* fn, PyObject* args, PyObject* kwargs, std::string& code,
                       std::string& detail) = 0;
  /// Graph value bound to `meta`, or -1 with `detail`.
  virtual int valueOf(PyObject* meta, std::string& detail) = 0;
  /// Index of `obj` among the entry constants (added when new).
  virtual int constIndex(PyObject* obj) = 0;
  /// The source location recorded on the next nodes.
  virtual void setLoc(PyObject* file, int line) = 0;
  /// A new graph input for a Python number read from guard node `node`.
  virtual int scalarInput(int node, bool isInt) = 0;
  /// Adds `op` (an `arith.*` op) on graph values; its result id, -1 on error.
  virtual int arith(const char* op, const std::vector<int>& operands, const char* type) = 0;
  /// A constant number as a graph value.
  virtual int scalarConst(PyObject* value, const char* type) = 0;
  /// The marker object standing for symbolic number `i` in record arguments.
  virtual PyRef marker(int i) = 0;
  /// Probes whether the numbers stay symbolic through `fn` (see scalars.py):
  /// a list of sentinels (one per marker), None when they must specialize,
  /// or null on error.
  virtual PyRef probe(PyObject* fn, PyObject* args, PyObject* kwargs, PyObject* values) = 0;
  /// `record` with markers replaced by `sentinels`, bound to graph values `vids`.
  virtual PyRef recordSym(PyObject* fn, PyObject* args, PyObject* kwargs, PyObject* sentinels,
                          const std::vector<int>& vids, std::string& code, std::string& detail) = 0;
  /// Enters or leaves a grad-mode region (`with torch.no_grad():`); false +
  /// `detail` when the mode cannot be expressed in the graph.
  virtual bool setGrad(bool enabled, std::string& code, std::string& detail) = 0;
  /// Calls host method `method(*args)` (captured control flow: regions, the
  /// recorder's bindings; see TranslateControl.cpp). Null + code/detail on error.
  virtual PyRef call(const char* method, PyObject* args, std::string& code, std::string& detail) = 0;
  /// Whether the symbolic size `vid` may be used as a plain number: true when it
  /// does not depend on a dynamic dim (same value in the shadow run), false
  /// (the compile falls back to static shapes) otherwise, -1 on error.
  virtual int sizeConcrete(int vid) = 0;
};

/// Instructions one translation may execute (unrolled loops included).
inline constexpr size_t kMaxSteps = 200000;
/// `for i in range(n)` loops with more iterations become one ctrl.loop
/// (Translator::rangeLoop) when their body allows it; shorter ones unroll.
inline constexpr size_t kUnrollBound = 64;

/// Where and why translation stopped.
struct Failure {
  std::string code;    ///< GBnnn: gbCode() of a GraphBreaks.def row
  std::string detail;
  std::string file, function;
  int line = 0;
  int offset = -1;     ///< top-frame instruction offset, -1 if before the first one
  bool internal = false;  ///< an unexpected state (GB020): the frame runs in Python
  /// Translation stopped cleanly *before* the instruction at `offset` of the
  /// top frame (a break found by an earlier attempt): the frame can be split.
  bool replayed = false;
  /// Note [Traced exceptions]: the exception eager Python raises here, when the
  /// translator knows it exactly (null otherwise); `excFrame` is the frame whose
  /// instruction at `excOffset` it is leaving (a handler there may catch it).
  VarRef exc;
  const void* excFrame = nullptr;
  int excOffset = -1;
  /// Note [AttributeError of a Python __getattribute__]: the failure is the
  /// AttributeError of object's lookup of a missing name, and no handler or
  /// wrapper on its way out has been passed since.
  bool missingAttr = false;
};

struct Frame;

/// A class of xacc/_src/capture/polyfills*.py: its objects stand in for a library's
/// and are never shown (Note [Context managers] in TranslateContext.cpp).
bool isPolyfillClass(PyObject* cls);
/// Globals of a module xacc/_src/capture/polyfills*.py (Note [Breaks inside polyfills] in Translator.cpp).
bool isPolyfillGlobals(PyObject* globals);
/// The library class a polyfill model class stands for (`_xacc_type`), borrowed;
/// null for any other class (Note [Modelled library objects] in TranslateModels.cpp).
PyObject* modelledType(PyObject* cls);
/// The model's `_xacc_rebuild` function (borrowed), null when it has none.
PyObject* modelRebuilder(PyObject* cls);
/// The function inside a staticmethod/classmethod (borrowed), null when none.
PyObject* wrappedFunc(PyObject* descr);

/// How deep inlined calls nest.
constexpr size_t kMaxInlineDepth = 32;
/// How often one function may be on the inline stack at once: a container
/// nests the same forward (nn.Sequential inside nn.Sequential, a model's
/// layer wrapper around each stage and each block), which is not recursion
/// without end. Python recursion over a constant depth (`depth(n - 1)` down to
/// a base case) is inlined up to this many levels; deeper recursion stops here
/// or at kMaxInlineDepth (GB016). "One function" is its code together with its
/// closure (InlineEntry): a decorator's wrapper has one code object for every
/// function it wraps, each with its own closure cells, and wrappers nesting
/// around nested forwards are not recursion either.
constexpr long kMaxSameCode = 8;

/// One inlined frame on the inline stack: its code, and what tells the
/// function apart from others sharing that code (its closure; nullptr when it
/// has none).
struct InlineEntry {
  PyCodeObject* code;
  const void* closure;
  bool operator==(const InlineEntry& o) const { return code == o.code && closure == o.closure; }
};

struct Options {
  std::string device = "cpu";
  /// Breaks found by earlier attempts, by top-frame offset: translation stops
  /// before these instructions (so the prefix never half-runs them).
  std::map<int, Failure> breakAt;
  /// Python ints/floats among the frame's arguments become graph inputs
  /// (guarded by type only) instead of constants.
  bool symbolicScalars = true;
};

class Translator {
public:
  Translator(Host& host, GuardTree& tree, Options opts);
  ~Translator();

  /// Translates `func` called with `args` (one per argument slot). On success
  /// returns the tracker of the return value; else null with failure() set.
  VarRef run(PyObject* func, PyObject* args);
  const Failure& failure() const { return failure_; }
  /// The top frame (kept after run() for emitting a break function).
  Frame* topFrame() { return topFrame_.get(); }
  /// Graph value of a tensor tracker (-1 + failure when unknown).
  int valueOf(const VarRef& v);
  /// Where a tensor tracker's object comes from when it is an input of the frame:
  /// its source, or the source of the input it is the very object of (`x.to(x.dtype)`,
  /// `x.contiguous()` return `x`); null for a tensor the graph computes. Such a
  /// tensor is rebuilt from its source, never from a graph output, so the caller
  /// gets the input object back (Note [Distinct outputs] in GraphBuilder.cpp).
  SourceRef inputSource(const VarRef& v) const;
  /// Note [Returned views]: a tensor the graph computes that eager Python would
  /// hand back as a view (`x.view(-1)`, `x[0]`, `y.t()`) must come back as a view
  /// of the same base object, or the caller's writes through it go nowhere.
  /// The base of tracker `v`'s meta twin when `v` is such a view: `baseSource`
  /// set when the base is a frame input, else `baseVid` its graph value (the
  /// caller checks that the base is live). False when `v` is no view.
  bool viewBase(const VarRef& v, SourceRef& baseSource, int& baseVid);

  /// Note [Replayed attribute writes]: `obj.name = value` on a plain Python
  /// object reached from a source (transformers' output collector writes
  /// `_active_collector.global_var`) is no break: the translator remembers the
  /// write (later reads in the frame see `value`) and the frame's code replays
  /// it after the graph (Codegen's break function; a frame that completes is
  /// split at its RETURN_VALUE so that one does). Objects whose type sets
  /// attributes in its own way (`__setattr__`, descriptors, slots), writes
  /// inside a captured tensor branch, and values that cannot be rebuilt stay
  /// GB007.
  struct AttrWrite {
    VarRef obj;
    PyRef name;
    VarRef value;
  };
  const std::vector<AttrWrite>& attrWrites() const { return attrWrites_; }
  /// Note [Global RNG draws at run time] (TranslateDraws.cpp): the frame's
  /// draws from NumPy's or Python's global generator, in program order, each a
  /// Drawn tracker the frame's code calls after the graph.
  const std::vector<VarRef>& draws() const { return draws_; }
  /// `fn(args...)` as a deferred draw when `fn` is a draw of a global random
  /// generator on constants (null otherwise, a failure set only on error).
  VarRef globalDraw(PyObject* fn, const std::vector<VarRef>& args,
                    const std::vector<std::pair<PyRef, VarRef>>& kwargs);
  /// The callable that makes Drawn `d`'s call (a xacc._src.capture.draws.Draw).
  PyRef drawCall(const VarRef& d);
  /// Fails (a break at `ins`) when `ins` would consume a Drawn tracker of frame `f`.
  bool drawUsed(const Frame& f, const Instr& ins);
  /// The replayed write of `obj.name` recorded in this frame (null when none).
  const AttrWrite* attrWritten(const VarRef& obj, PyObject* name) const;
  /// Records `obj.name = value`; false with the failure set when it cannot be replayed.
  bool storeAttr(const VarRef& obj, PyObject* name, const VarRef& value);
  /// `name` on an nn.Module `obj` (reached from a source): whether the write is one
  /// storeAttr replays after the graph (TranslateModuleAttrs.cpp); fails (GB007) when not.
  bool moduleAttrWritable(const VarRef& obj, PyObject* name, const VarRef& value);
  /// `value` (read at `source`) is a Tensor method bound to a tensor: `out` is its
  /// TensorMethod tracker, null after a break (Note [Bound tensor methods as inputs]).
  bool boundTensorMethod(PyObject* value, const SourceRef& source, VarRef& out);
  /// Note [Replayed container mutation]: a list or plain dict passed in from
  /// outside (a tracker with a source) that the frame mutates. The tracker
  /// changes as a container made in the frame does; the frame's code replaces
  /// the caller's container's contents with the tracker's after the graph
  /// (`lst[:] = [...]`, `d.clear(); d.update({...})`), so the caller's object
  /// keeps its identity and holds what eager leaves in it.
  const std::vector<VarRef>& mutatedInputs() const { return mutatedInputs_; }
  /// Called before `c` (a List or Dict tracker with a source) is mutated: records
  /// it, or fails with GB009 when the mutation cannot be replayed.
  bool mutateInput(const VarRef& c, const char* what);
  /// Registers list/dict input `v` (by identity, with a Distinct guard); returns it.
  VarRef containerInput(PyObject* value, const VarRef& v);
  /// The tracker of list/dict `value` read before through another source (guarded SameAs), else null.
  VarRef containerSeen(PyObject* value, const SourceRef& source);

  // -- used by the opcode handlers ------------------------------------------
  /// Records a failure (the first one wins). Always returns false.
  bool fail(GB code, const std::string& detail);
  /// Turns the pending Python error into a failure with `code`.
  bool failPy(GB code, const std::string& what);
  /// fail(GB010) for the AttributeError of object's lookup of a missing name,
  /// marked (Note [AttributeError of a Python __getattribute__], TranslateAttributes.cpp).
  bool failMissingAttr(const std::string& detail);
  /// Note [Traced exceptions]: fails with GB024, recording that eager raises
  /// `exc` (an Exception tracker) at the current instruction. Always false.
  bool raiseException(const VarRef& exc, const std::string& detail);
  /// raiseException with `cls(*args)` (constants), when `cls` is a plain
  /// exception class; a plain GB024 failure otherwise. Always false.
  bool raiseNew(PyObject* cls, std::vector<PyRef> args, const std::string& detail);
  /// failPy(GB024) that keeps the pending Python error as the exception raised
  /// when its class is plain (the operation ran on constants, as eager runs it).
  bool failPyRaise(const std::string& what);
  /// An exception `cls(*args)` made by the traced code (null + failure when
  /// `cls` is no plain exception class or the call is not BaseException's).
  VarRef newException(const VarRef& cls, std::vector<VarRef>& args,
                      std::vector<std::pair<PyRef, VarRef>>& kwargs);
  /// After instruction `ins` of `f` failed with an exception: jumps to the
  /// frame's handler for it (true, failure cleared) or leaves the failure for
  /// the caller (false), marking it as leaving through `f`'s caller.
  bool catchException(Frame& f, const Instr& ins);
  bool failed() const { return !failure_.code.empty(); }
  /// Marks the failure as one the frame cannot be split at (no offset): it runs in Python.
  void failWhole() { failure_.offset = -1; }

  VarRef wrap(PyObject* value, const SourceRef& source);
  /// Makes the tensor arguments of the top frame graph inputs in one host call
  /// (Note [Tensor arguments in one call]); false after a failure.
  bool prefetchTensorArgs(PyObject* args);
  /// The meta (or failure) prefetchTensorArgs made for tensor `value`, and
  /// `src`, the argument it was made for; false when none.
  bool takePrefetched(PyObject* value, SourceRef& src, PyRef& meta, std::string& code, std::string& detail);
  VarRef getattr(const VarRef& obj, PyObject* name);
  VarRef binary(PyObject* op, const VarRef& a, const VarRef& b);
  VarRef unary(PyObject* op, const VarRef& v);
  VarRef subscr(const VarRef& obj, const VarRef& idx);
  /// `key in obj` for an object reached from a source, answered through code
  /// that guards what it reads: `os.environ` guards that key alone being
  /// present or absent; Mapping.__contains__ is `self[key]` (KeyError: False);
  /// a __contains__ written in Python is inlined; any other is a GB011 break.
  /// -2 when `obj` is no such object, -1 after a failure, else 0 or 1.
  int objectContains(const VarRef& obj, const VarRef& key);
  bool storeSubscr(const VarRef& obj, const VarRef& idx, const VarRef& val);
  VarRef call(Frame& f, const VarRef& fn, std::vector<VarRef> args,
              std::vector<std::pair<PyRef, VarRef>> kwargs);
  VarRef record(PyObject* fn, const std::vector<VarRef>& args,
                const std::vector<std::pair<PyRef, VarRef>>& kwargs);
  /// Note [Function modes in the frame] (TranslateModes.cpp): a torch call made
  /// while a TorchFunctionMode the frame entered is on its stack.
  VarRef modeDispatch(PyObject* fn, const std::vector<VarRef>& args,
                      const std::vector<std::pair<PyRef, VarRef>>& kwargs);
  /// `_push_mode(m)` / `_pop_mode()` of torch.overrides; null when `o` is neither.
  VarRef modeStackCall(PyObject* o, std::vector<VarRef>& args,
                       std::vector<std::pair<PyRef, VarRef>>& kwargs, bool& handled);
  /// A failure when a TorchFunctionMode is on the frame's stack: `what` does
  /// not reach it the way eager's call would. True when there is none.
  bool noFunctionMode(const char* what);
  bool functionModeActive() const { return !functionModes_.empty(); }
  /// Tells the host the depth of functionModes_ (Host.set_function_modes); false
  /// (the failure set) when it cannot.
  bool syncFunctionModes();
  /// Truth value of a tracker (-1 after a failure).
  int truth(const VarRef& v);
  /// The Python value of a constant-like tracker (new ref, null + failure).
  PyRef constOf(const VarRef& v);
  bool unpack(const VarRef& v, std::vector<VarRef>& out);
  VarRef iterate(const VarRef& v);
  /// The next item of iterator `it` into `out` (null once exhausted, as eager's
  /// next() would raise StopIteration); false with a failure set when it cannot.
  bool advance(const VarRef& it, VarRef& out);
  VarRef fromPython(PyObject* value);
  VarRef fromConst(PyObject* value);
  bool isConst(const VarRef& v) const;
  VarRef inlineFunction(PyObject* fn, std::vector<VarRef> args,
                        std::vector<std::pair<PyRef, VarRef>> kwargs, const SourceRef& source);
  VarRef inlineCode(PyCodeObject* code, PyObject* globals, const std::vector<VarRef>& defaults,
                    const std::vector<std::pair<PyRef, VarRef>>& kwdefaults,
                    const std::vector<VarRef>& cells, std::vector<VarRef> args,
                    std::vector<std::pair<PyRef, VarRef>> kwargs, const SourceRef& source,
                    const std::string& name, const void* closure = nullptr,
                    std::function<SourceRef(PyObject* name, bool builtin)> globalSource = {});
  /// Whether inlining one more frame of `e` passes kMaxInlineDepth or kMaxSameCode.
  bool inlineTooDeep(const InlineEntry& e) const;
  bool runFrame(Frame& f, VarRef& result);
  /// A conditional jump on a tensor: both sides traced as the arms of one
  /// ctrl.if (TranslateControl.cpp); on failure a GB004 break at the jump.
  bool branch(Frame& f, const Instr& ins, bool jumpIfTrue, bool& done, VarRef& result);
  /// `t.item()` when the code only compares it with a constant and jumps on
  /// the result: an ItemOf tracker; null (no failure) otherwise.
  VarRef itemForBranch(const VarRef& t);
  /// A comparison with an ItemOf operand (the other a constant number).
  VarRef itemCompare(PyObject* op, const VarRef& a, const VarRef& b);
  /// Python's `conv` ("bool", "int", "float", "index", "item") of a tensor whose
  /// value the capture knows, with its guards (Note [Known tensor values] in
  /// xacc/_src/capture/known.py); null (no failure) when it is not known.
  PyRef knownValue(const VarRef& t, const char* conv);
  /// min()/max() of constants and known tensors (TranslateBuiltins.cpp); null
  /// when an item is neither (no failure) or a comparison failed.
  VarRef knownMinMax(bool isMax, const std::vector<VarRef>& xs);

  // Grad-mode regions (see Host::setGrad).
  bool gradEnabled() const { return gradEnabled_; }
  bool setGrad(bool enabled);
  /// Enters or leaves a torch.inference_mode region (Note [Entry-guarded modes]).
  bool setInference(bool enabled);
  VarRef gradDecorated(Frame& f, PyObject* o, std::vector<VarRef>& args,
                       std::vector<std::pair<PyRef, VarRef>>& kwargs);
  // transformers' ModelOutput dataclasses (TranslateDataclass.cpp).
  VarRef modelOutput(PyObject* cls, std::vector<VarRef>& args, std::vector<std::pair<PyRef, VarRef>>& kwargs);
  VarRef modelOutputAttr(const VarRef& obj, PyObject* name);
  /// An instance read from `source` (Note [Model outputs as inputs]); null with
  /// no failure when it is not modelled.
  VarRef modelOutputInput(PyObject* value, const SourceRef& source);
  /// `out.name = value` on a ModelOutput built in the frame (ModelOutput.__setattr__).
  bool modelOutputStoreAttr(const VarRef& obj, PyObject* name, const VarRef& value);
  // Instances of dict subclasses made while tracing (TranslateDictSubclass.cpp;
  // Note [Dict subclasses]).
  VarRef constructDict(const VarRef& clsVar, std::vector<VarRef>& args,
                       std::vector<std::pair<PyRef, VarRef>>& kwargs);
  VarRef dictSubclassAttr(const VarRef& obj, PyObject* name);
  /// Whether `d[k]` / `d[k] = v` runs a __getitem__ / __setitem__ of the class's own.
  bool dictOverrides(const VarRef& obj, const char* dunder) const;
  // Instances of user classes (TranslateObjects.cpp; see Note [User objects]).
  /// `cls(*args, **kwargs)` for a class tracker: __new__, then __init__ inlined.
  VarRef constructUser(const VarRef& clsVar, std::vector<VarRef>& args,
                       std::vector<std::pair<PyRef, VarRef>>& kwargs);
  /// Note [Instance dicts] (TranslateVars.cpp): `obj.__dict__` of a user object
  /// (null + failure when its class keeps attributes elsewhere), and the dict
  /// as it is now, for one read (`d[k]`, `k in d`, `len(d)`, `d.get(k)`).
  VarRef instanceDict(const VarRef& obj);
  VarRef instanceDictNow(const VarRef& d);
  /// `tuple.__new__(cls, iterable)` (a named tuple's __new__).
  VarRef tupleNew(std::vector<VarRef>& args, std::vector<std::pair<PyRef, VarRef>>& kwargs);
  VarRef userAttr(const VarRef& obj, PyObject* name);
  /// userAttr of an object whose class has a Python __getattribute__, for
  /// hasattr and getattr with a default: the value; else null, with `missing`
  /// set and no failure left when it raised object's missing-name
  /// AttributeError (Note [AttributeError of a Python __getattribute__]).
  VarRef userAttrOrMissing(const VarRef& obj, PyObject* name, bool& missing);
  /// hasattr(obj, name) of a user object (TranslateObjects.cpp): 1/0, -1 failed
  /// (a lookup that runs code and did not give a value), -2 not answered.
  int userHasattr(const VarRef& obj, PyObject* name);
  /// getattr(obj, name, default) of a user object when nothing is found without running code (TranslateObjects.cpp).
  /// `object.__new__(cls)` of a class whose instances are user objects (TranslateObjects.cpp).
  VarRef objectNew(std::vector<VarRef>& args, std::vector<std::pair<PyRef, VarRef>>& kwargs);
  /// A container read from outside and registered by containerInput (a Distinct guard keeps it apart).
  bool isDistinctInput(const VarRef& v) const;
  VarRef userGetattrDefault(const VarRef& obj, PyObject* name, const VarRef& dflt);
  /// Class attribute `attr` (found on the MRO, no data descriptor) as read through `self`.
  VarRef classAttr(const VarRef& self, const VarRef& clsVar, PyObject* attr, PyObject* name);
  /// An attribute of a tuple subclass's instance found on a user class (`handled`), else null.
  VarRef namedTupleAttr(const VarRef& obj, PyObject* name, bool& handled);
  bool userStoreAttr(const VarRef& obj, PyObject* name, const VarRef& value);
  /// `object.__setattr__(obj, name, value)` on a user object: a data descriptor's
  /// setter, a __slots__ member, else the instance dict.
  bool objectSetAttr(const VarRef& obj, PyObject* name, const VarRef& value);
  /// `del obj.name` (Note [Deleting attributes] in TranslateVars.cpp): type(obj).__delattr__, then object's.
  bool delAttr(const VarRef& obj, PyObject* name);
  bool objectDelAttr(const VarRef& obj, PyObject* name);
  VarRef callUser(const VarRef& obj, std::vector<VarRef>& args, std::vector<std::pair<PyRef, VarRef>>& kwargs);
  int userTruth(const VarRef& obj);
  /// iter(obj) / `x in obj` on a user object through its class's __iter__ /
  /// __contains__ (Note [Modelled library objects]); userContains answers -2
  /// when the class has no __contains__ of its own.
  VarRef userIter(const VarRef& obj);
  int userContains(const VarRef& obj, const VarRef& key);
  /// `Color(value)` for an enum class (`isEnum`): the member, when `value` is a
  /// constant the class maps to one (Note [Enum members]).
  VarRef enumMember(const VarRef& cls, std::vector<VarRef>& args, std::vector<std::pair<PyRef, VarRef>>& kwargs,
                    bool& isEnum);
  /// `type(obj).<name>(obj, *args)` when the class defines `name` in Python
  /// (`handled`), else null with `handled` false (Note [Operator protocols]).
  VarRef userDunder(const VarRef& obj, PyObject* name, std::vector<VarRef> args, bool& handled);
  /// `a op b` with a user object operand: __op__, then the reflected __rop__ (Note [Operator protocols]).
  VarRef userBinary(PyObject* op, const VarRef& a, const VarRef& b);
  VarRef userUnary(PyObject* op, const VarRef& v);
  /// len(), obj[i] and obj[i] = v on a user object (Note [Operator protocols]).
  VarRef userLen(const VarRef& obj);
  /// len() of an object from outside the frame whose class defines __len__ in Python (Note [len of outside objects]).
  VarRef objectLen(const VarRef& obj);
  VarRef userSubscr(const VarRef& obj, const VarRef& idx);
  bool userStoreSubscr(const VarRef& obj, const VarRef& idx, const VarRef& val);
  /// `nn.X(...)` of a module class whose construction runs only torch.nn's code (Note [Fresh modules]).
  VarRef freshModule(const VarRef& clsVar, std::vector<VarRef>& args,
                     std::vector<std::pair<PyRef, VarRef>>& kwargs);
  /// A class factory's call (`collections.namedtuple(...)`) on constants: its class
  /// as a template (Note [Fresh classes]); null, without failing, for other callees.
  VarRef freshClass(const VarRef& fn, std::vector<VarRef>& args, std::vector<std::pair<PyRef, VarRef>>& kwargs);
  /// `__build_class__(body, name, *bases)` of a class statement (Note [Local classes]):
  /// the class made now as a template, or null after a break.
  VarRef buildClass(std::vector<VarRef>& args, std::vector<std::pair<PyRef, VarRef>>& kwargs);
  // Sets of constants and tensors (TranslateSets.cpp).
  /// A set element for `v`: its constant, or a tensor's meta twin (Note [Sets of tensors]).
  PyRef setKey(const VarRef& v);
  /// True when set tracker `s`'s order is eager's (it holds no tensor); else fails (GB011) naming `what`.
  bool setOrderKnown(const VarRef& s, const char* what);
  VarRef makeSet(const std::vector<VarRef>& items, bool frozen);
  bool mutableSet(const VarRef& v);
  VarRef setMethod(const VarRef& s, const std::string& name, std::vector<VarRef>& args);
  VarRef setBinary(PyObject* op, const VarRef& a, const VarRef& b);
  /// The Python type of a tracked value (borrowed), null if unknown.
  PyObject* typeOf(const VarRef& v);
  // Symbolic numbers (TranslateScalars.cpp).
  /// `v` itself, or for a symbolic number its capture-time value as a
  /// constant, guarding every argument it came from by value.
  VarRef concrete(const VarRef& v);
  int scalarVid(const VarRef& v);
  VarRef scalarBinary(PyObject* op, const VarRef& a, const VarRef& b, bool& handled);
  /// A comparison of symbolic sizes (or a size and an int constant) whose
  /// outcome the dynamic sizes do not change: its value, with a guard on the
  /// relation; null (nothing recorded) when it cannot be one.
  VarRef sizeCompare(PyObject* op, const VarRef& a, const VarRef& b);
  VarRef scalarUnary(PyObject* op, const VarRef& v, bool& handled);
  VarRef recordSym(PyObject* fn, const std::vector<VarRef>& args,
                   const std::vector<std::pair<PyRef, VarRef>>& kwargs, bool& handled);

  // NumPy capture (TranslateNumpy.cpp; see Note [NumPy capture]).
  bool numpyEnabled() const;
  bool isNumpyCallable(PyObject* o) const;
  VarRef numpyInput(PyObject* array, const SourceRef& source);
  /// One NumPy operation through numpy_ops.run: kind "fn", "method", "attr" or "op".
  VarRef numpyRun(const char* kind, PyObject* target, const std::vector<VarRef>& args,
                  const std::vector<std::pair<PyRef, VarRef>>& kwargs);
  VarRef numpyAttr(const VarRef& a, PyObject* name);
  VarRef numpyMethod(const VarRef& tm, std::vector<VarRef>& args,
                     std::vector<std::pair<PyRef, VarRef>>& kwargs);
  /// NumPy callables and torch <- numpy conversions; `handled` false otherwise.
  VarRef numpyCall(PyObject* fn, std::vector<VarRef>& args, std::vector<std::pair<PyRef, VarRef>>& kwargs,
                   bool& handled);
  VarRef tensorToNumpy(const VarRef& t, std::vector<VarRef>& args,
                       std::vector<std::pair<PyRef, VarRef>>& kwargs);
  /// np.ndarray or the NumPy scalar type of a flagged tensor (borrowed).
  PyObject* numpyType(const VarRef& v);

  Host& host() { return host_; }
  GuardTree& tree() { return tree_; }
  const Options& options() const { return opts_; }
  size_t steps = 0;

private:
  int node(const SourceRef& s);
  void guardType(const SourceRef& s, PyObject* value);
  void guardId(const SourceRef& s, PyObject* value);
  void guardEquals(const SourceRef& s, PyObject* value);
  void guardLen(const SourceRef& s, Py_ssize_t n);
  /// The dict at `s` has exactly the keys of `dict`, in the same order (its
  /// length included): what iterating it, or indexing by position, relied on.
  void guardKeys(const SourceRef& s, PyObject* dict);
  /// A container module's (Sequential, ModuleList, ModuleDict) `_modules` keys
  /// (guardKeys): iterating it, its length, or a child by position relied on them.
  void guardModuleKeys(const VarRef& mod);
  /// The value at `s` is (or is not) the value at `other` (Leaf::Kind::SameAs).
  void guardSame(const SourceRef& s, const SourceRef& other, bool same);
  /// Note [Fresh modules]: torch's global module/parameter/buffer registration hooks are empty.
  bool guardNoRegistrationHooks();
  /// Each dict `names[i]` of `owner.__dict__` (read at `src`) is empty; `what` names them in a break.
  bool guardEmptyDicts(PyObject* owner, const SourceRef& src, const char* const* names, size_t n,
                       const std::string& what);
  /// The value at `s` has (or has not) the attribute or key `what`: kind HasAttr
  /// (getattr with a default, hasattr) or HasKey (`os.environ` keys read with
  /// .get or `in`). Asking twice adds one leaf.
  void guardHas(const SourceRef& s, Leaf::Kind kind, PyObject* what, bool has);
  /// Note [os.environ reads]: `env[key]`'s entry in `os.environ._data`, guarded
  /// per key. Returns 1 (present; `*value` set to env[key] when `value` is
  /// given), 0 (absent) or -1 after a failure.
  int environEntry(const VarRef& env, PyObject* key, PyRef* value);
  bool guardOnce(const SourceRef& s, int kind);
  /// inspect.signature(f) of a function known at capture time: a constant.
  VarRef signatureOf(const VarRef& v);
  /// `o` called now on constant arguments, its result a constant: a function
  /// marked as a trace-time constant (`marked`: the result must be None, bool,
  /// int, float or str) or a method of an immutable builtin value (any plain
  /// constant, tuples and lists of them included).
  VarRef callOnConstants(PyObject* o, std::vector<VarRef>& args,
                         std::vector<std::pair<PyRef, VarRef>>& kwargs, bool marked);
  VarRef callObject(Frame& f, const VarRef& fn, std::vector<VarRef>& args,
                    std::vector<std::pair<PyRef, VarRef>>& kwargs);
  /// A call of a builtin or stdlib helper that xacc/_src/capture/polyfills.py
  /// has a Python reference for: that function inlined (null when there is none,
  /// or when the original is evaluated on constant arguments instead).
  VarRef polyfill(PyObject* f, std::vector<VarRef>& args, std::vector<std::pair<PyRef, VarRef>>& kwargs);
  /// A question polyfills.py asks about the translator's own values (its
  /// REFERENCE entry names it, e.g. "made_while_tracing"): a constant answer.
  /// A tensor's index as eager indexing reads it: a flat list of Python ints
  /// is the int64 index tensor torch makes of it, as a constant; anything
  /// else is `idx` itself.
  VarRef listIndexAsTensor(const VarRef& idx);
  /// A tensor's index as torch's indexing reads it: listIndexAsTensor on the
  /// index, or on each item of a plain tuple index.
  VarRef tensorIndex(const VarRef& idx);
  /// BEFORE_WITH on a UserObject (Note [Context managers] in TranslateContext.cpp):
  /// its __enter__ inlined (`enteredOut`), its bound __exit__ (`exitOut`).
  /// runFrame on the captured frame, which must leave the grad mode as it found it.
  bool runTopFrame(Frame& f, VarRef& result);
  bool enterContext(Frame& f, const VarRef& mgr, VarRef& exitOut, VarRef& enteredOut);
  /// `torch.no_grad()(fn)` / `torch.enable_grad()(fn)` on a plain function:
  /// polyfills_context.py's wrapper that runs `fn` in that grad mode.
  VarRef gradModeDecorator(const VarRef& mode, std::vector<VarRef>& args,
                           std::vector<std::pair<PyRef, VarRef>>& kwargs);
  VarRef polyfillQuery(PyObject* query, const std::vector<VarRef>& args,
                       const std::vector<std::pair<PyRef, VarRef>>& kwargs);
  VarRef numpyOnConstants(PyObject* fn, const std::vector<VarRef>& args,
                          const std::vector<std::pair<PyRef, VarRef>>& kwargs);
  VarRef callBuiltin(PyObject* f, std::vector<VarRef>& args,
                     std::vector<std::pair<PyRef, VarRef>>& kwargs, bool& handled);
  VarRef callModule(const VarRef& mod, std::vector<VarRef>& args,
                    std::vector<std::pair<PyRef, VarRef>>& kwargs);
  /// Note [Module hooks]: the module's forward with nn.Module.__call__'s forward
  /// (pre-)hooks around it, or a GB012 break for hooks it does not model.
  VarRef callModuleHooks(const VarRef& mod, std::vector<VarRef>& args,
                         std::vector<std::pair<PyRef, VarRef>>& kwargs);
  /// `self.forward(*args, **kwargs)` as nn.Module.__call__ runs it: the class's forward, inlined.
  VarRef callForward(const VarRef& mod, std::vector<VarRef>& args,
                     std::vector<std::pair<PyRef, VarRef>>& kwargs);
  VarRef containerMethod(const VarRef& obj, const std::string& name, std::vector<VarRef>& args,
                         std::vector<std::pair<PyRef, VarRef>>& kwargs);
  VarRef tensorMethod(const VarRef& tm, std::vector<VarRef>& args,
                      std::vector<std::pair<PyRef, VarRef>>& kwargs);
  VarRef tensorAttr(const VarRef& t, PyObject* name);
  /// `t.type(...)`: its type name, or `t` converted (TranslateMethods.cpp).
  VarRef tensorType(const VarRef& t, std::vector<VarRef>& args, std::vector<std::pair<PyRef, VarRef>>& kwargs);
  VarRef moduleChild(const VarRef& mod, PyObject* name, bool& found);
  PyRef pythonValue(const VarRef& v);
  VarRef superOf(Frame& f, std::vector<VarRef>& args);
  VarRef superAttr(const VarRef& sv, PyObject* name);

  Host& host_;
  GuardTree& tree_;
  Options opts_;
  Failure failure_;
  std::set<std::pair<int, int>> guarded_;
  /// Note [Tensor input identity]: the tracker of each tensor read from a source.
  std::map<PyObject*, VarRef> tensorInputs_;
  /// Lists and dicts read through a source, by identity (Note [Replayed container mutation]).
  std::map<PyObject*, VarRef> containerInputs_;
  std::vector<VarRef> mutatedInputs_;
  std::vector<PyRef> inputRefs_;  ///< keeps tensorInputs_' keys alive
  /// Note [Tensor arguments in one call]: the metas (or the failure) the host
  /// made for the top frame's tensor arguments, by tensor, until wrap takes them.
  struct Prefetched {
    SourceRef source;  ///< the argument it was made for
    PyRef meta;        ///< null: the host's failure
    std::string code, detail;
  };
  std::map<PyObject*, Prefetched> prefetched_;
  /// Note [Tensor types]: meta twin -> the input's type, when not torch.Tensor.
  std::map<PyObject*, PyRef> tensorTypes_;
  /// Note [Fresh modules]: each template instance -> the tracker of the module eager builds; an
  /// existing module given to a container built in the frame -> its tracker (a child read back).
  std::map<PyObject*, VarRef> freshTemplates_;
  /// Note [Local classes]: the templates made by class statements (kept for the translation
  /// only), and each function of their namespaces -> how the frame that made it reads globals.
  std::vector<PyRef> localClasses_;
  /// Whether `cls` is one of localClasses_ (Note [Local classes]).
  bool isLocalClassTemplate(PyObject* cls) const {
    for (const PyRef& c : localClasses_)
      if (c.get() == cls) return cls != nullptr;
    return false;
  }
  std::map<PyObject*, std::function<SourceRef(PyObject*, bool)>> localClassMethods_;
  std::vector<InlineEntry> inlineStack_;
  Frame* top_ = nullptr;
  std::unique_ptr<Frame> topFrame_;
  std::unique_ptr<Bytecode> resumeBc_;  ///< the top frame's code when it is resume code (Bytecode::decode)
  Frame* current_ = nullptr;
  bool gradEnabled_ = true;
  bool inferenceEnabled_ = false;  ///< inside a modelled inference_mode region (the entry is guarded outside one)
  /// Note [Escape checks]: set once the host was asked to model an
  /// inference_mode region or a tensor made a leaf (`set_inference`,
  /// `set_requires_grad`), the only ways a graph value can become one that may
  /// not leave the graph; until then `valueOf` asks the host nothing more.
  bool escapeChecks_ = false;
  /// The TorchFunctionModes the frame pushed, bottom first (Note [Function
  /// modes in the frame]); the entry's own stack holds none (Note [Mode stacks]).
  std::vector<VarRef> functionModes_;
  /// Whether this translation has dynamic dims (Host.dynamic_shapes): fixed for
  /// a translation, so asked once, when a tensor is first unpacked (-1: not yet).
  int dynamicShapes_ = -1;
  const std::vector<VarRef>* markSyms_ = nullptr;  ///< pythonValue: numbers given as markers
  bool numpyArgs_ = false;  ///< pythonValue: building a NumPy call (flagged tensors only)
  std::vector<AttrWrite> attrWrites_;  ///< Note [Replayed attribute writes], in program order
  std::vector<VarRef> draws_;  ///< Note [Global RNG draws at run time], in program order
  /// Objects from outside whose real `__dict__` the frame read (Note [Instance
  /// dicts of outside objects], TranslateValues.cpp): no write of theirs is replayed.
  std::set<PyObject*> dictsRead_;
  struct InputMeta {
    PyRef meta;
    SourceRef source;
    PyRef type;  ///< the input's own type (nn.Parameter, a subclass), guarded with it
  };
  std::map<PyObject*, InputMeta> inputMetas_;  ///< inputs by meta twin
  int branchDepth_ = 0;     ///< nested ctrl.if arms being traced
  // TranslateControl.cpp helpers.
  struct Snapshot;
  struct ArmEnd;
  struct MergeCtx;
  PyRef hostCall(const char* method, PyObject* args);  ///< steals `args`; failure -> GB004
  void save(Frame& f, Snapshot& s);
  void restore(Frame& f, const Snapshot& s);
  /// Closes a loop body's region (hb: its handle) when the body left the state before it
  /// (`pre`) unchanged but for carried tensors; else the reason (empty: a failure already set).
  std::optional<std::string> endLoopBody(const Snapshot& pre, PyRef& hb);
  /// Opens a loop body's region: `bodyIds` (begin_region's list: the index or
  /// condition, then one id per carried slot) into `ids`, and each carried slot
  /// of `f` rebound to a fresh meta of its id. False: a host call failed.
  bool bindLoopCarried(Frame& f, const std::vector<size_t>& carried, PyObject* bodyIds, std::vector<int>& ids);
  bool runArm(Frame& f, size_t start, const std::function<bool(size_t)>& stop, ArmEnd& end);
  VarRef mergeVar(const VarRef& a, const VarRef& b, MergeCtx& m);
  bool notCaptured(Frame& f, int line, int offset, const std::string& why);
  bool whileLoop(Frame& f, size_t bodyIp, size_t exitIp, int line, int offset);
public:
  /// A range loop at its FOR_ITER (`ins`) as one ctrl.loop: 1 done, 0 not
  /// (unroll it), -1 internal failure.
  int rangeLoop(Frame& f, const Instr& ins);
private:
  friend struct Frame;
};

/// Symbolic state of one code object being translated.
struct Frame {
  Translator& t;
  PyCodeObject* code;
  const Bytecode* bc;
  PyObject* globals;   ///< borrowed (the function keeps it alive)
  PyObject* builtins;  ///< borrowed
  /// Source of a global read by name (null for frames whose globals are trusted).
  std::function<SourceRef(PyObject* name, bool builtin)> globalSource;
  std::vector<VarRef> slots;  ///< localsplus: locals, then cells and free variables
  std::vector<VarRef> stack;
  PyRef kwNames;
  Frame* parent = nullptr;
  /// The function's closure identity (InlineEntry), for a lazy generator's resumptions.
  const void* closure = nullptr;
  size_t ip = 0;
  int line = 0;
  int offset = -1;  ///< offset of the instruction being executed
  /// A lazily run generator (GenFrame): YIELD_VALUE suspends the frame (runFrame
  /// returns with `suspended` and the value); ctrl.if and ctrl.loop are not
  /// formed inside such a frame (TranslateControl.cpp gives up there).
  bool lazy = false;
  bool suspended = false;
  /// Whether this frame's exceptions may leave it for its caller's handlers
  /// (Note [Traced exceptions]): user code inlined by inlineCode.
  bool passesExceptions = false;

  Frame(Translator& tr, PyCodeObject* c, const Bytecode* b, PyObject* g, PyObject* bi)
      : t(tr), code(c), bc(b), globals(g), builtins(bi) {}
  VarRef pop() {
    VarRef v = std::move(stack.back());
    stack.pop_back();
    return v;
  }
  std::vector<VarRef> popn(size_t n) {
    std::vector<VarRef> out(stack.end() - static_cast<std::ptrdiff_t>(n), stack.end());
    stack.resize(stack.size() - n);
    return out;
  }
  void push(VarRef v) { stack.push_back(std::move(v)); }
  /// Pushes callable `fn` and the NULL of a call without `self` in the order
  /// of the build's version (BytecodeFacts::nullAfterCallable).
  void pushCallable(VarRef fn);
  /// Executes one instruction; `done` is set by RETURN_VALUE with `result`.
  /// Dispatches through the opcode -> family table (Note [Opcode families]).
  bool step(const Instr& ins, bool& done, VarRef& result);

  // One handler per opcode family (TranslateOps*.cpp).
  bool stepLocals(const Instr& ins, bool& done, VarRef& result);
  bool stepAttributes(const Instr& ins, bool& done, VarRef& result);
  bool stepOperators(const Instr& ins, bool& done, VarRef& result);
  bool stepContainers(const Instr& ins, bool& done, VarRef& result);
  bool stepControl(const Instr& ins, bool& done, VarRef& result);
  bool stepCalls(const Instr& ins, bool& done, VarRef& result);
  bool stepExceptions(const Instr& ins, bool& done, VarRef& result);  // TranslateExceptions.cpp
  /// CPython 3.13's opcodes that are older instructions fused or split
  /// (TranslateOps313.cpp).
  bool stepFused(const Instr& ins, bool& done, VarRef& result);
  /// False (GB020) unless the stack holds at least `n` values.
  bool need(const Instr& ins, size_t n);
  std::string localName(int i) const;
  /// A family handler was given an opcode the table routes elsewhere (GB020).
  bool misrouted(const Instr& ins);
};

/// Note [Lazy generators]: an inlined generator function runs nothing when it is
/// called; each step of its iterator (FOR_ITER, next(), list(), ...) resumes its
/// frame up to the next yield, as eager Python does, so side effects of the
/// generator body and of the code consuming it interleave as in eager. The frame
/// state is part of the translator's snapshots (ctrl.if arms, loop bodies); a
/// generator still suspended at a graph break cannot be rebuilt, so such a break
/// is refused (GB011) and the frame runs in Python.
struct GenFrame {
  std::unique_ptr<Frame> frame;
  bool finished = false;
  /// What the generator returned once finished (StopIteration.value: what
  /// `yield from` gives); null before.
  VarRef returned;
  std::string name;
  /// What a snapshot restores.
  struct State {
    std::vector<VarRef> slots, stack;
    size_t ip = 0;
    int line = 0;
    bool finished = false;
    VarRef returned;
  };
  State save() const { return {frame->slots, frame->stack, frame->ip, frame->line, finished, returned}; }
  void load(const State& s) {
    frame->slots = s.slots;
    frame->stack = s.stack;
    frame->ip = s.ip;
    frame->line = s.line;
    finished = s.finished;
    returned = s.returned;
  }
};

/// Whether a Python function is user code to inline (TranslateCalls.cpp).
bool isUserFunction(PyObject* fn);
/// `collections.abc.Mapping`'s `get` / `__contains__` (borrowed), null if not one.
const char* mappingMixin(PyObject* fn);
/// A callable's __qualname__ (or __name__, or its type's name), for messages
/// (TranslateCalls.cpp).
std::string nameOf(PyObject* fn);
/// str(o) as text: a str's own text, else str() of it, "?" when that fails
/// (the error cleared), "" for null.
std::string pyText(PyObject* o);
/// `args` and `kwargs` as the arguments of a Python call (a tuple; a dict, or
/// null without keywords), each value converted by `convert`. False when a
/// conversion returns null (it has failed the translation).
bool callArgs(const std::vector<VarRef>& args, const std::vector<std::pair<PyRef, VarRef>>& kwargs,
              const std::function<PyRef(const VarRef&)>& convert, PyRef& tuple, PyRef& kw);

/// Var::name of an Object tracker for a module built in the graph (Note [Fresh modules]
/// in TranslateObjects.cpp): self = its class, items/keys/kwItems = its constructor's arguments.
inline constexpr const char* kFreshModule = "fresh module";
bool isFreshModule(const VarRef& v);
/// Var::name of an Object tracker for a class made by a class factory (Note [Fresh
/// classes] in TranslateFreshClasses.cpp): self = the factory, items/keys/kwItems = its arguments.
inline constexpr const char* kFreshClass = "fresh class";
/// A fresh module or class: made at capture time, rebuilt as `self(*items, **kw)` where it escapes.
bool isFreshObject(const VarRef& v);
/// Whether a fresh module's attribute value may be read as a constant.
bool freshModuleValue(PyObject* v);
/// Why instances of `tp` are not modelled as user objects; empty when they are.
std::string userClassProblem(PyTypeObject* tp);
/// Whether `cls` is a ModelOutput dataclass the translator models.
bool isModelOutputClass(PyObject* cls);
/// A Dict tracker standing for a ModelOutput instance (obj: its class, fields: its field names).
inline bool isModelOutputVar(const VarRef& v) { return v->is(Var::Kind::Dict) && v->obj && v->fields; }
/// A Dict tracker standing for an instance of another dict subclass (Note [Dict
/// subclasses]): obj: its class, self: the class tracker.
inline bool isDictSubclassVar(const VarRef& v) { return v->is(Var::Kind::Dict) && v->obj && !v->fields; }
/// Why instances of `tp` (a dict subclass) are not modelled; empty when they are.
std::string dictClassProblem(PyTypeObject* tp);
/// `rebuild(cls, storage)`: `dict.__new__(cls)` filled with dict's own update (borrowed).
PyObject* dictSubclassRebuilder();
/// `instance_dict(obj)`: the object's own instance dict, read without the
/// attribute protocol (PyObject_GenericGetDict; Note [Rebuilt instance dicts]
/// in TranslateVars.cpp) (borrowed).
PyObject* instanceDictReader();

/// `builtins.__build_class__` (borrowed), what LOAD_BUILD_CLASS pushes.
PyObject* buildClassBuiltin();
/// Whether a set tracker's real set holds a tensor's meta twin (Note [Sets of tensors]).
bool setHoldsTensors(PyObject* set);

/// Name of the `operator` module function for BINARY_OP's argument.
PyObject* binaryOperator(int arg);
/// `operator.lt` ... for COMPARE_OP's argument.
PyObject* compareOperator(int arg);
/// `operator.<name>` (borrowed; the module stays imported).
PyObject* operatorFn(const char* name);
/// Keeps MAKE_FUNCTION's annotations tuple `ann` on function tracker `fn`
/// (fields: the tuple; pos 1 when an item is not an object and the function
/// cannot be made again at a break).
void setFunctionAnnotations(Var& fn, const VarRef& ann);

}  // namespace xacc::capture::translate
