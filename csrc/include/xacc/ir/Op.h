// Op descriptions and the op registry. Core ops are declared once in Ops.def;
// families of ops (`aten.*`) are registered by the component that owns them and
// materialised on first lookup. Passes ask about traits and effects, never about
// op names.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "xacc/ir/Attribute.h"
#include "xacc/ir/Datum.h"
#include "xacc/ir/Type.h"

namespace xacc::support {
class DiagnosticEngine;
}

namespace xacc::ir {

class Graph;
class Node;
class Interpreter;

enum OpTrait : uint32_t {
  kPure = 1u << 0,          ///< no side effects: CSE, DCE and folding may touch it
  kEffect = 1u << 1,        ///< operand 0 and result 0 are !token; see Note [Effect tokens]
  kCommutative = 1u << 2,   ///< the first two operands may be swapped
  kConstantLike = 1u << 3,  ///< value depends on attributes only
  kNondeterministic = 1u << 4,  ///< may give different results per run (random)
  kCallLike = 1u << 5,      ///< refers to a graph through the `callee` attribute
  kHasRegions = 1u << 6,    ///< carries nested graphs
};

/// Inputs of type inference: operand types, attributes and region signatures.
struct InferInput {
  const std::vector<Type>& operands;
  const AttrDict& attrs;
  const std::vector<std::unique_ptr<Graph>>* regions;
  const std::vector<Type>* declared;  ///< result types as written (may be null)
};

/// Core op ids, in Ops.def order.
enum class CoreOp : uint16_t {
#define XACC_OP(Id, Name, Traits, MinOps, MaxOps, NumRes, NumRegions, Summary) Id,
#include "xacc/ir/Ops.def"
#undef XACC_OP
  NumCoreOps
};
/// Name of a core op ("arith.add").
const char* coreOpName(CoreOp op);

/// Computes result types; on failure returns false and sets `error`.
using InferFn = std::function<bool(const InferInput&, std::vector<Type>& results, std::string& error)>;
/// Executes a node. `args` are the operand datums; pushes one datum per result.
using InterpFn =
    std::function<bool(Interpreter&, const Node&, std::vector<Datum>& args, std::vector<Datum>& results)>;

struct OpInfo {
  std::string name;
  uint32_t traits = 0;
  int minOperands = 0;
  int maxOperands = -1;  ///< -1: variadic
  int numResults = -1;   ///< -1: variadic / given by the node
  int numRegions = 0;
  std::string summary;
  InferFn infer;   ///< may be empty: result types are taken as written
  InterpFn interp; ///< may be empty: the interpreter reports "cannot execute"
  std::vector<std::string> requiredAttrs;
  int coreId = -1;  ///< CoreOp for core ops, -1 for families

  bool is(CoreOp op) const { return coreId == int(op); }

  bool has(OpTrait t) const { return (traits & t) != 0; }
};

/// A family of ops sharing a name prefix whose descriptions are created on
/// demand (for example `aten.` backed by the c10 dispatcher).
using OpFamilyFn = std::function<std::unique_ptr<OpInfo>(std::string_view name, std::string& error)>;

class OpRegistry {
public:
  static OpRegistry& get();

  /// Registers (or replaces) an op description. Returns the stored pointer.
  const OpInfo* add(std::unique_ptr<OpInfo> info);
  void addFamily(std::string prefix, OpFamilyFn fn);
  bool hasFamily(std::string_view prefix) const;
  /// Finds or materialises an op; nullptr with `error` set if unknown.
  const OpInfo* lookup(std::string_view name, std::string* error = nullptr);
  /// Core ops in name order (for --help and docs).
  std::vector<const OpInfo*> all() const;
  /// Hook that lets interpreter-level code attach execution to an op later.
  OpInfo* mutableLookup(std::string_view name);
  /// The core op `op` (never null).
  const OpInfo* core(CoreOp op) const;

private:
  OpRegistry();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace xacc::ir
