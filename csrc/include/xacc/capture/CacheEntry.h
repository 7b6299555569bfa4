// What a captured frame turns into: a compiled graph (GIR + its ATen
// executable) and the cache entries that the eval-frame hook keeps per code
// object. An entry pairs a guard tree with one of three actions:
//   Graph   - the whole frame was captured: read the graph inputs from the
//             resolved sources, run the graph, build the return value from a
//             template (tensors from graph outputs, constants, tuples, lists,
//             dicts); the original bytecode never runs;
//   Code    - the frame has graph breaks: call a generated function (same
//             argument slots as the frame) whose bytecode runs the prefix graph,
//             the unsupported instruction natively and a resume function;
//   Default - run the original bytecode (nothing worth capturing under these
//             guards).
// Entries hold strong references to every Python object they name; the hook
// releases them with the code object's extra slot.
#pragma once

#include <Python.h>

#include <atomic>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "xacc/capture/Backend.h"
#include "xacc/capture/Guards.h"
#include "xacc/ir/Graph.h"

namespace xacc::capture {

/// A GIR graph prepared for execution. Inputs are Python objects (tensors,
/// ints, floats, bools) in parameter order with token parameters skipped;
/// outputs come back the same way.
class CompiledGraph {
public:
  /// Takes the module holding `graph` and prepares it. Null with `error` set
  /// when some node cannot be executed.
  /// `device` picks the registered backend that prepares and runs it (Note
  /// [Backend interface]).
  static std::shared_ptr<CompiledGraph> create(std::unique_ptr<ir::Module> module, ir::Graph* graph,
                                               std::string& error, const std::string& device = "cpu",
                                               const BackendOptions& options = {});

  /// Holds `graph` for what a cache entry reports (text, id, nodes, inputs,
  /// device) without preparing it for a backend: the graph of an entry whose
  /// runner runs other graphs (a training graph split at DDP buckets, Note
  /// [Bucket split]). describe() is `plan`; call and run fail.
  static std::shared_ptr<CompiledGraph> unprepared(std::unique_ptr<ir::Module> module, ir::Graph* graph,
                                                   const std::string& device, std::string plan);

  /// Runs the graph. Returns a new tuple of the non-token results, or null with
  /// a Python exception set. Releases the GIL while ATen runs.
  PyObject* call(PyObject* const* inputs, size_t n) const;
  /// The same, leaving the results as IValues (for entries that rebuild a value).
  /// False with `error` set, or with a Python exception set when an exception
  /// escaped the backend (it never propagates).
  bool run(PyObject* const* inputs, size_t n, std::vector<c10::IValue>& outs, std::string& error) const;
  /// The same on inputs that are IValues already (the non-token ones, in
  /// order), callable with or without the GIL (a compiled backward runs on the
  /// autograd engine's thread, Note [Native training runner]): nothing here
  /// touches Python but the graph tap, which takes the GIL. False with `error`
  /// set; an exception that escaped the backend is kept in `escaped` (not
  /// raised), an op's failure is noted as run() notes it (takeRunFailure).
  bool runValues(std::vector<c10::IValue> inputs, std::vector<c10::IValue>& outs, std::string& error,
                 std::exception_ptr& escaped) const;

  const ir::Graph& graph() const { return *graph_; }
  const ir::Module& module() const { return *module_; }
  size_t numInputs() const { return numInputs_; }
  bool hasEffects() const { return hasEffects_; }
  std::string text() const;
  const std::string& device() const { return device_; }
  /// The backend's plan (BackendExecutable::describe).
  std::string describe() const { return exe_ ? exe_->describe() : plan_; }
  /// The backend's profile (BackendExecutable::profileJson); "{}" when unprepared.
  std::string profileJson() const { return exe_ ? exe_->profileJson() : std::string("{}"); }
  /// Stable identity for the graph tap (the object's address).
  uintptr_t id() const { return reinterpret_cast<uintptr_t>(this); }

private:
  void setGraph(std::unique_ptr<ir::Module> module, ir::Graph* graph);
  /// Prepared, and called with `n` inputs; else false with `error` set.
  bool checkCall(size_t n, std::string& error) const;
  /// Runs the executable on `args` (token parameters included), the calling
  /// thread's capture state Off, catching every exception into `escaped`;
  /// `outs` gets the non-token results, then the graph tap sees them. Needs no
  /// GIL (the tap takes it).
  bool execute(std::vector<c10::IValue>& args, std::vector<c10::IValue>& outs, std::string& error,
               std::exception_ptr& escaped) const;

  std::unique_ptr<ir::Module> module_;
  ir::Graph* graph_ = nullptr;
  std::unique_ptr<BackendExecutable> exe_;  ///< null: unprepared
  std::string plan_;                        ///< describe() of an unprepared graph
  std::string device_ = "cpu";
  std::vector<int8_t> paramIsToken_;
  std::vector<int8_t> resultIsToken_;
  size_t numInputs_ = 0;
  bool hasEffects_ = false;
};

/// Note [Graph tap]: when set, `tap(graph_id, "in", inputs)` is called before and
/// `tap(graph_id, "out", outputs)` after every successful CompiledGraph run, with
/// the thread's capture state Off; `graph_id` is CompiledGraph::id(). Export and
/// xacc.debug.compare use it to record the values each captured graph saw. Unset
/// (null), the per-call cost is one load. The tap's exceptions are swallowed.
void setGraphTap(PyObject* tap);

/// See Note [ATen error translation]: when the pending Python error is the
/// RuntimeError that reports the failure noted on this thread (noteRunFailure),
/// replaces it by the exception eager PyTorch raises for that op (its type and
/// full message). Consumes the note either way. Call with the GIL held after an
/// executable failed.
void raiseAsEager();

/// Converts one executor output to Python (new reference; null + error set).
PyObject* ivalueToPython(const c10::IValue& v);
/// A graph input as the executables take it (tensor, bool, int, float, None);
/// false with `error` set for anything else.
bool pythonToIValue(PyObject* o, c10::IValue& out, std::string& error);

/// How a whole-frame entry rebuilds the frame's return value.
struct OutTemplate {
  /// Call: `obj(output[index])` (an ndarray from a tensor output, see Note [NumPy capture]).
  enum class Kind : uint8_t { Out, Const, Tuple, List, Dict, Call } kind = Kind::Const;
  int index = 0;            ///< Out, Call: graph output index
  PyObject* obj = nullptr;  ///< Const: the value; Dict: tuple of keys; Call: the callable (strong)
  std::vector<OutTemplate> items;
  void clear();
  PyObject* build(const std::vector<c10::IValue>& outs) const;  ///< new reference
};

class CacheEntry {
public:
  enum class Kind : uint8_t { Graph, Code, Default };
  ~CacheEntry();

  Kind kind = Kind::Default;
  std::shared_ptr<GuardTree> guards;
  PyObject* consts = nullptr;  ///< tuple, strong
  // Graph
  std::shared_ptr<CompiledGraph> graph;
  std::vector<int> inputNodes;  ///< guard-tree node of each graph input
  OutTemplate ret;
  /// Note [Training runner]: when set (strong), the graph's inputs are passed to
  /// this Python callable instead of running `graph`, and it returns the tuple of
  /// outputs (xacc/_src/capture/training.py: the compiled forward in a custom
  /// autograd function whose backward runs the compiled backward graph, Note
  /// [Native training runner]).
  PyObject* runner = nullptr;
  // Code
  /// strong: the break function's code object, made into a function per call
  /// (Note [Generated code holds no globals]), or a plain callable
  PyObject* fn = nullptr;
  std::string label;       ///< "fn#2" for logs
  mutable std::atomic<uint64_t> hits{0};

  FrameView view(PyObject* const* args, size_t nargs, PyObject* globals, PyObject* builtins,
                 PyObject* closure) const;
  /// Runs a Graph entry whose guards passed (`resolved` from the check).
  PyObject* runGraph(PyObject** resolved) const;
};

/// Calls a compiled graph with its inputs read from sources: the callable that
/// generated bytecode uses (`__xacc_graph_N(*frame_args)`). Sources rooted in
/// globals, builtins or the closure are read from the calling frame's, which
/// for a break function are the user's frame's: a GraphFunction holds none
/// (Note [Generated code holds no globals] in translate/CodegenImpl.h).
class GraphFunction {
public:
  ~GraphFunction();
  std::shared_ptr<CompiledGraph> graph;
  std::shared_ptr<GuardTree> sources;
  std::vector<int> inputNodes;
  PyObject* consts = nullptr;    ///< strong
  PyObject* runner = nullptr;    ///< strong or null: see Note [Training runner]
  /// New tuple of outputs, or null with an exception set.
  PyObject* call(PyObject* const* args, size_t nargs) const;
};

}  // namespace xacc::capture
