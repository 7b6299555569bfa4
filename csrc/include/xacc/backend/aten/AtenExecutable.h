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
//
// Note [Executor liveness]: `create` computes, once per graph, the last step
// that reads each value slot, and `run` drops the slot right after that step has
// read it (a value nothing reads, right after its writer; a region op's operands
// once they are copied into the region, whose own executable drops them at their
// last use there; a loop's carried values are handed to its body, not copied).
// Graph results are never dropped. So, as in eager, an intermediate tensor is
// freed at its last use, not when the graph ends, and the peak memory of a chain
// of ops is that of its widest point. Dropping a slot drops only the executor's
// reference: a view keeps its base's storage alive by itself, autograd keeps
// what it saved for backward, and the training forward returns its residuals as
// results (Note [Training runner] in CacheEntry.h), so no storage anyone can
// still see is freed.
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
  /// How many slots the steps drop before the graph ends (Note [Executor liveness]).
  size_t numReleased() const;

  struct Step;

private:
  AtenExecutable() = default;
  const ir::Graph* graph_ = nullptr;
  size_t numSlots_ = 0;
  std::vector<Step> steps_;
  std::vector<int> resultSlots_;
  std::vector<bool> paramRead_;  ///< per parameter: some step reads it or it is a result
};

}  // namespace xacc::backend::aten
