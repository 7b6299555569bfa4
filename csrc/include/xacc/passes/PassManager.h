// Passes are Module -> Module rewrites with a name; the PassManager runs a
// pipeline of them with optional verification and IR printing after each, and
// collects statistics. Passes ask about traits and effects, never op names.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "xacc/ir/Graph.h"
#include "xacc/ir/Parser.h"
#include "xacc/support/Diagnostic.h"

namespace xacc::passes {

/// The standard pipeline: what `camel run` applies by default and the
/// `std::opt` reducer runs (behaviour-preserving).
inline constexpr const char* kStandardPipeline = "inline,canonicalize,const-fold,cse,dce";

/// Named counters ("cse.nodes-merged" -> 12).
using Statistics = std::map<std::string, int64_t>;

/// Pass options as `key=value` strings (`device=cpu`), shared by the pipeline.
using PassOptions = std::map<std::string, std::string, std::less<>>;

struct PassContext {
  support::DiagnosticEngine& diag;
  Statistics& stats;
  const ir::TextLocations* locs = nullptr;
  const PassOptions* options = nullptr;
  /// The value of option `key`, or `dflt` when it was not given.
  std::string option(std::string_view key, std::string dflt = {}) const {
    if (options) {
      auto it = options->find(key);
      if (it != options->end()) return it->second;
    }
    return dflt;
  }
};

class Pass {
public:
  virtual ~Pass() = default;
  virtual std::string_view name() const = 0;
  /// Returns false after reporting a diagnostic if the pass cannot proceed.
  virtual bool run(ir::Module& m, PassContext& ctx) = 0;
};

struct PassInfo {
  std::string name;
  std::string description;
  std::function<std::unique_ptr<Pass>()> create;
};

/// All registered passes, in declaration order.
const std::vector<PassInfo>& passRegistry();
std::unique_ptr<Pass> createPass(std::string_view name);

class PassManager {
public:
  explicit PassManager(support::DiagnosticEngine& diag) : diag_(diag) {}

  /// Parses "a,b,c"; reports unknown names and returns false.
  bool addPipeline(std::string_view pipeline);
  void add(std::unique_ptr<Pass> p) { passes_.push_back(std::move(p)); }

  void setVerifyEach(bool b) { verifyEach_ = b; }
  /// Called after each pass with its name (e.g. to print the IR).
  void setAfterPass(std::function<void(std::string_view, const ir::Module&)> cb) {
    afterPass_ = std::move(cb);
  }
  void setTextLocations(const ir::TextLocations* l) { locs_ = l; }
  void setOption(std::string key, std::string value) { options_[std::move(key)] = std::move(value); }

  bool run(ir::Module& m);
  const Statistics& stats() const { return stats_; }
  /// Wall time per pass in seconds, in pipeline order.
  const std::vector<std::pair<std::string, double>>& timings() const { return timings_; }

private:
  support::DiagnosticEngine& diag_;
  std::vector<std::unique_ptr<Pass>> passes_;
  bool verifyEach_ = false;
  std::function<void(std::string_view, const ir::Module&)> afterPass_;
  const ir::TextLocations* locs_ = nullptr;
  PassOptions options_;
  Statistics stats_;
  std::vector<std::pair<std::string, double>> timings_;
};

// Factories (one pass per file).
#define XACC_PASS(Name, Cli, Desc) std::unique_ptr<Pass> create##Name##Pass();
#include "xacc/passes/Passes.def"
#undef XACC_PASS

/// Applies `fn` to `g` and every region nested in it (post-order: regions first).
void forEachGraph(ir::Graph& g, const std::function<void(ir::Graph&)>& fn);

}  // namespace xacc::passes
