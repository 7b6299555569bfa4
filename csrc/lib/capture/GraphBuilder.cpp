// GraphBuilder implementation. See GraphBuilder.h.
#include "xacc/capture/GraphBuilder.h"

#include "xacc/ir/Printer.h"
#include "xacc/ir/Verifier.h"
#include "xacc/passes/PassManager.h"

namespace xacc::capture {

GraphBuilder::GraphBuilder(std::string name)
    : module_(std::make_unique<ir::Module>()),
      graph_(module_->add(std::make_unique<ir::Graph>(std::move(name)))),
      builder_(*graph_) {}

int GraphBuilder::addInput(ir::Type type, std::string name) {
  values_.push_back(graph_->addParam(type, std::move(name)));
  return static_cast<int>(values_.size() - 1);
}

void GraphBuilder::setLoc(const std::string& file, uint32_t line) {
  support::SourceLoc loc;
  loc.file = support::SourceManager::global().internName(file);
  loc.line = line;
  loc.col = 0;
  builder_.setLoc(loc);
}

bool GraphBuilder::addOp(std::string_view opName, const std::vector<int>& operands,
                         ir::AttrDict attrs, std::vector<ir::Type> resultTypes,
                         std::vector<int>& results, std::string& error) {
  const ir::OpInfo* op = ir::OpRegistry::get().lookup(opName, &error);
  if (!op) return false;
  bool effect = op->has(ir::kEffect);
  std::vector<ir::Value*> vals;
  if (effect) {
    if (!token_) token_ = graph_->addParam(ir::Type::token(), "token");
    vals.push_back(token_);
  }
  for (int id : operands) {
    if (id < 0 || id >= static_cast<int>(values_.size())) {
      error = "unknown value id " + std::to_string(id);
      return false;
    }
    vals.push_back(values_[id]);
  }
  if (effect && !resultTypes.empty()) resultTypes.insert(resultTypes.begin(), ir::Type::token());
  ir::Node* n = builder_.create(op, vals, std::move(attrs), std::move(resultTypes));
  if (!n) {
    error = builder_.error();
    return false;
  }
  size_t first = 0;
  if (effect) {
    token_ = n->result(0);
    first = 1;
  }
  for (size_t i = first; i < n->numResults(); ++i) {
    values_.push_back(n->result(i));
    results.push_back(static_cast<int>(values_.size() - 1));
  }
  return true;
}

int GraphBuilder::addConst(const ir::Attr& value, ir::Type type) {
  values_.push_back(builder_.constant(value, type));
  return static_cast<int>(values_.size() - 1);
}

void GraphBuilder::setOutputs(const std::vector<int>& ids) {
  std::vector<ir::Value*> vs;
  for (int id : ids) vs.push_back(values_[id]);
  if (token_) vs.push_back(token_);
  graph_->setResults(vs);
  std::vector<ir::Type> types;
  for (ir::Value* v : vs) types.push_back(v->type());
  graph_->setResultTypes(types);
  graph_->setHasReturn(true);
}

std::string GraphBuilder::text() const { return ir::printModule(*module_); }

bool GraphBuilder::runPasses(std::string_view pipeline, std::string& error,
                              const std::map<std::string, std::string>& options) {
  support::DiagnosticEngine diag;
  passes::PassManager pm(diag);
  for (const auto& [k, v] : options) pm.setOption(k, v);
  if (!pm.addPipeline(pipeline) || !pm.run(*module_)) {
    error = diag.renderAllText();
    return false;
  }
  values_.clear();  // ids are invalid once passes have rewritten the graph
  return true;
}

std::shared_ptr<CompiledGraph> GraphBuilder::compile(std::string& error, const std::string& device,
                                                     const std::map<std::string, std::string>& options) {
  values_.clear();
  ir::Graph* g = graph_;
  return CompiledGraph::create(std::move(module_), g, error, device, options);
}

}  // namespace xacc::capture
