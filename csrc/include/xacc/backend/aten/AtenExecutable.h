// The ATen executor for captured graphs (the "cpu" backend; capture reaches it
// only through the backend interface, Note [Backend interface]): a GIR graph prepared once into a flat
// list of steps over value slots. Each `aten.*` node is one boxed call through
// the c10 dispatcher with its constant arguments converted ahead of time (any
// ATen op, no per-op code); list/tuple projections run natively; any other core
// op runs through its reference-interpreter rule. Effectful nodes run in node
// order, which follows their token chain (see Note [Effect tokens]), so
// in-place updates of inputs happen exactly once and in program order.
// Autograd works because the calls enter the dispatcher above the autograd key.
//
// A prepared executable holds no per-call state: `run` is reentrant and may be
// called from several threads at once.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <ATen/core/ivalue.h>

#include "xacc/ir/Graph.h"

namespace xacc::backend::aten {

class AtenExecutable {
public:
  /// Prepares `g`; the graph must outlive the executable.
  static std::unique_ptr<AtenExecutable> create(const ir::Graph& g, std::string& error);
  ~AtenExecutable();

  /// One IValue per graph parameter in, one per graph result out (tokens are
  /// None). Returns false with `error` set when an op throws.
  bool run(std::vector<c10::IValue>& inputs, std::vector<c10::IValue>& outputs,
           std::string& error) const;

  size_t numSteps() const;

  struct Step;

private:
  AtenExecutable() = default;
  const ir::Graph* graph_ = nullptr;
  size_t numSlots_ = 0;
  std::vector<Step> steps_;
  std::vector<int> resultSlots_;
};

}  // namespace xacc::backend::aten
