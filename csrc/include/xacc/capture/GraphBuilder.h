// Building the GIR graph of one captured region. The translator (see
// csrc/lib/capture/translate and its host, xacc/_src/capture/host.py) adds graph inputs for the tensors and numbers it reads
// from sources, one node per recorded ATen call, and the region's outputs;
// effectful nodes are threaded on one token chain in recording order (see Note
// [Effect tokens]), so the graph's final token keeps them alive through DCE.
// Values are referred to by small integer ids that stay valid until passes run.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "xacc/capture/CacheEntry.h"
#include "xacc/ir/Builder.h"
#include "xacc/ir/Graph.h"

namespace xacc::capture {

class GraphBuilder {
public:
  explicit GraphBuilder(std::string name);

  /// Adds a graph parameter; returns its value id.
  int addInput(ir::Type type, std::string name);
  /// Adds a node of `op` with operands (value ids) and attributes. Result types
  /// are `resultTypes` when given (tokens excluded), else inferred. Effectful
  /// ops get the current token prepended and advance it. On success appends
  /// the ids of the non-token results to `results`.
  bool addOp(std::string_view op, const std::vector<int>& operands, ir::AttrDict attrs,
             std::vector<ir::Type> resultTypes, std::vector<int>& results, std::string& error);
  int addConst(const ir::Attr& value, ir::Type type);
  /// Sets the graph results; the final token is appended when there are effects.
  void setOutputs(const std::vector<int>& ids);
  void setLoc(const std::string& file, uint32_t line);

  ir::Type typeOf(int id) const { return values_[id]->type(); }
  size_t numNodes() const { return graph_->numNodes(); }
  bool hasEffects() const { return token_ != nullptr; }
  std::string text() const;
  /// A copy of the module being built (for passes that work on their own copy:
  /// training graphs, mixed-precision variants), with no text in between.
  std::unique_ptr<ir::Module> cloneModule() const {
    auto m = std::make_unique<ir::Module>();
    for (const auto& g : module_->graphs()) m->add(g->clone());
    return m;
  }
  /// Verifies and runs a pass pipeline ("dce,cse") on the graph.
  bool runPasses(std::string_view pipeline, std::string& error,
                 const std::map<std::string, std::string>& options = {});
  /// Prepares the graph for execution on `device` ("cpu": the ATen executor;
  /// "xpu0": the MLIR backend, when registered); the builder is empty afterwards.
  /// `options` go to the backend (BackendOptions).
  std::shared_ptr<CompiledGraph> compile(std::string& error, const std::string& device = "cpu",
                                         const std::map<std::string, std::string>& options = {});

  // -- Regions (Note [Captured control flow]) ------------------------------
  /// Starts a region nested in the current one (a ctrl.if arm, a loop's
  /// ^cond or ^body): nodes and constants go there until endRegion. Values of
  /// enclosing levels used inside become region parameters (captures).
  /// `inputs`: leading parameters that are not captures (a loop's carried
  /// values); their ids are appended to `inputIds`.
  void beginRegion(const std::string& label, const std::vector<ir::Type>& inputs,
                   std::vector<int>& inputIds);
  /// Ends the current region; returns its handle (results are given when the
  /// region is attached by addIf/addLoop).
  int endRegion();
  /// Drops the current region (an arm that was given up).
  void abandonRegion();
  size_t regionDepth() const { return open_.size(); }
  /// ctrl.if(cond, captures...) with arms `thenH`/`elseH` yielding `thenIds` /
  /// `elseIds` (same types; tokens are threaded when an arm has effects).
  /// Appends the non-token result ids.
  bool addIf(int cond, int thenH, int elseH, const std::vector<int>& thenIds,
             const std::vector<int>& elseIds, std::vector<int>& results, std::string& error);
  /// ctrl.loop over carried values `init` (the regions' inputs) with regions
  /// `condH` (yielding `condId`, a bool) and `bodyH` (yielding `bodyIds`, one
  /// per carried value). The regions' captures are carried unchanged after
  /// `init`. Appends the result ids of `init`'s values.
  bool addLoop(const std::vector<int>& init, int condH, int bodyH, int condId,
               const std::vector<int>& bodyIds, std::vector<int>& results, std::string& error);

private:
  struct Region {
    std::unique_ptr<ir::Graph> graph;
    std::vector<ir::Value*> captures;  ///< enclosing-level value per leading parameter
    std::vector<ir::Value*> params;    ///< the matching parameters
    ir::Value* token = nullptr;        ///< current token inside (null: no effect yet)
    ir::Value* tokenIn = nullptr;      ///< the parameter the token came in as
    size_t numInputs = 0;              ///< leading parameters that are not captures (loops)
  };
  /// `v` as seen in open region `level` (0 = the graph), capturing it through
  /// every region between its owner and `level`; null if not visible.
  ir::Value* visible(ir::Value* v, size_t level);
  ir::Value* capture(Region& r, ir::Value* outer);
  ir::Value* tokenAt(size_t level);
  Region* doneRegion(int handle, std::string& error);
  bool setRegionResults(Region& r, const std::vector<ir::Value*>& lead, const std::vector<int>& ids,
                        std::string& error);
  /// Gives regions `rs` the same capture parameters (the union, in `all`).
  void unifyCaptures(const std::vector<Region*>& rs, std::vector<ir::Value*>& all);
  /// Makes `n`'s results values (ids appended to `results`); with `effect` its first
  /// result is the new current token instead.
  void bindResults(ir::Node* n, bool effect, std::vector<int>& results);
  ir::Value*& currentToken() { return open_.empty() ? token_ : open_.back()->token; }
  ir::Graph& currentGraph() { return open_.empty() ? *graph_ : *open_.back()->graph; }
  std::vector<std::unique_ptr<Region>> open_;
  std::vector<std::unique_ptr<Region>> done_;


  std::unique_ptr<ir::Module> module_;
  ir::Graph* graph_;
  ir::Builder builder_;
  std::vector<ir::Value*> values_;
  ir::Value* token_ = nullptr;
};

}  // namespace xacc::capture
