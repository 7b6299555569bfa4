// GIR -> kernel IR: the per-op lowering rules for `aten.*` nodes (one table in
// AtenLowering.cpp) and the translation of a whole region. No MLIR here.
#pragma once

#include <string>
#include <vector>

#include "KernelIR.h"
#include "xacc/ir/Graph.h"

namespace xacc::backend::mlir {

/// A region: nodes in topological order, the values they read from outside
/// (tensors and i64/f64/bool scalars, in first-use order) and the values the
/// rest of the graph needs from them.
struct Region {
  std::vector<const ir::Node*> nodes;
  std::vector<ir::Value*> inputs;
  std::vector<ir::Value*> outputs;
};

/// Run-time facts about one region input.
struct InputDesc {
  bool isTensor = true;
  ir::DType dtype = ir::DType::F32;  ///< tensors; scalars use I64/F64/Bool
  std::vector<int64_t> shape;
  bool contiguous = true;
};

/// Whether the backend has a rule for `n` and its operand/result types are ones
/// the kernels handle. Static check used by the partitioner; `reason` says why not.
bool canLowerNode(const ir::Node& n, std::string& reason);

/// Describes region inputs from their GIR types; dynamic dims get `dynamicSize`.
std::vector<InputDesc> describeInputs(const Region& r, int64_t dynamicSize);

/// Translates `r` for inputs described by `in` (one per r.inputs). Fills
/// `k.inputs`/`k.scalars` in r.inputs order and `k.outputs` in r.outputs order.
bool buildKernel(const Region& r, const std::vector<InputDesc>& in, KernelIR& k, std::string& error);

/// While alive on this thread, buildKernel lowers at probe sizes (Note
/// [Size-generic kernels]): an `expand` to a literal size that the input's
/// dim no longer has keeps the input's dim instead of failing.
class ProbeLowering {
public:
  ProbeLowering();
  ~ProbeLowering();
  ProbeLowering(const ProbeLowering&) = delete;
  ProbeLowering& operator=(const ProbeLowering&) = delete;

private:
  bool prev_;
};

/// The op names with lowering rules.
std::vector<std::string> loweredOpNames();

}  // namespace xacc::backend::mlir
