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
  /// Verifies and runs a pass pipeline ("dce,cse") on the graph.
  bool runPasses(std::string_view pipeline, std::string& error,
                 const std::map<std::string, std::string>& options = {});
  /// Prepares the graph for execution on `device` ("cpu": the ATen executor;
  /// "xpu0": the MLIR backend, when registered); the builder is empty afterwards.
  /// `options` go to the device runner (DeviceOptions).
  std::shared_ptr<CompiledGraph> compile(std::string& error, const std::string& device = "cpu",
                                         const std::map<std::string, std::string>& options = {});

private:
  std::unique_ptr<ir::Module> module_;
  ir::Graph* graph_;
  ir::Builder builder_;
  std::vector<ir::Value*> values_;
  ir::Value* token_ = nullptr;
};

}  // namespace xacc::capture
