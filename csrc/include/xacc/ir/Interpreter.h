// The reference interpreter: executes any graph whose ops have an InterpFn
// (every core op; `aten.*` ops once the ATen backend is registered). It is the
// semantic oracle for constant folding, macros and backend tests, so it favours
// clarity over speed, but it is demand-driven like the language: only nodes
// that a result (or the final effect token) depends on run.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "xacc/ir/Datum.h"
#include "xacc/ir/Graph.h"
#include "xacc/support/Diagnostic.h"

namespace xacc::ir {

class Interpreter {
public:
  explicit Interpreter(support::DiagnosticEngine& diag, const Module* module = nullptr);
  virtual ~Interpreter();

  /// Runs `g` on `args`. On failure reports a located runtime error and returns false.
  virtual bool run(const Graph& g, const std::vector<Datum>& args, std::vector<Datum>& results);
  /// Calls a function datum (closure over a graph).
  /// Builtins that take function values (map, filter, ...) call back through
  /// this; a runtime overrides it to run the callee on its own engine.
  virtual bool apply(const Datum& fn, const std::vector<Datum>& args, std::vector<Datum>& results,
             const Node* site = nullptr);
  /// Calls graph `name` of the module.
  virtual bool call(std::string_view name, const std::vector<Datum>& args, std::vector<Datum>& results,
            const Node* site = nullptr);

  /// Results of parameterless graph `name`, computed on first use and then
  /// reused for the rest of this interpreter's life (module-level bindings;
  /// a mutable global is a cell object created once and shared).
  virtual bool once(std::string_view name, std::vector<Datum>& results, const Node* site = nullptr);

  /// Runs `body(I, begin, end)` on chunks covering [0, n), each index once:
  /// higher-order builtins (map, foreach, filter, para.unordered_*) call the
  /// element function `fn` through it. A parallel runtime may run chunks
  /// concurrently, each on its own interpreter `I`, when `fn` may run
  /// concurrently (pure, or only `concurrent` effects) and the work is large
  /// enough; the body must then write only to its own indices. On failure the
  /// diagnostics of the first failing chunk (in index order) are reported, as
  /// if the chunks had run in order. This default runs [0, n) here, in order.
  virtual bool forEachChunk(const Datum& fn, size_t n,
                            const std::function<bool(Interpreter& I, size_t begin, size_t end)>& body);

  /// Reports a runtime error located at `n`; always returns false.
  virtual bool fail(const Node& n, std::string code, std::string message);

  const Module* module() const { return module_; }
  void setModule(const Module* m) { module_ = m; }
  support::DiagnosticEngine& diag() { return diag_; }

  /// Sink for `io.print` (default: stdout).
  void setOutput(std::function<void(std::string_view)> out) { out_ = std::move(out); }
  void write(std::string_view s);

  void setMaxDepth(unsigned d) { maxDepth_ = d; }

private:
  struct Plan;
  const Plan& planFor(const Graph& g);

  support::DiagnosticEngine& diag_;
  const Module* module_;
  std::function<void(std::string_view)> out_;
  std::unordered_map<const Graph*, std::unique_ptr<Plan>> plans_;
  std::unordered_map<std::string, std::vector<Datum>> onceResults_;
  unsigned depth_ = 0;
  unsigned maxDepth_ = 2000;
  /// Calls being run (call/apply sites with a location), innermost last.
  std::vector<const Node*> sites_;
  struct SiteScope {
    std::vector<const Node*>& s;
    bool pushed;
    SiteScope(std::vector<const Node*>& v, const Node* site)
        : s(v), pushed(site && site->loc().valid()) {
      if (pushed) s.push_back(site);
    }
    ~SiteScope() {
      if (pushed) s.pop_back();
    }
  };
};

/// Converts a constant attribute into a datum (null if not convertible).
bool attrToDatum(const Attr& a, Type t, Datum& out);
/// Converts a scalar/str/list/tuple datum to an attribute for folding; false for
/// heap objects that have no attribute form (tensors, lists are allowed).
bool datumToAttr(const Datum& d, Attr& out);

}  // namespace xacc::ir
