// Compiled form of a graph for the runtime (private to csrc/lib/runtime).
#pragma once

#include <vector>

#include "xacc/ir/Datum.h"
#include "xacc/ir/Graph.h"

namespace xacc::runtime {

enum class Code : uint8_t {
  Const,
  // Typed fast paths on i64 / f64 / bool operands.
  AddI, SubI, MulI, LtI, LeI, GtI, GeI, EqI, NeI,
  AddF, SubF, MulF, DivF, LtF, LeF, GtF, GeF,
  Not, And, Or, Select,
  // Control: calls and branches push frames.
  Call, Apply, FuncRef, Loop,
  // ctrl.if arms are compiled inline: Branch jumps to `jump` when operand 0
  // is false; Move copies one slot; Jump continues at `jump`.
  Branch, Move, Jump,
  // ParCall: the next `jump` instructions are independent pure calls that a
  // parallel scheduler may run concurrently; a sequential one falls through.
  ParCall,
  Generic,  // the op's interpreter rule
};

struct Program;

struct Instr {
  Code code = Code::Generic;
  bool tail = false;          ///< Call/If/Apply whose results are the graph's results
  uint32_t dst = 0;           ///< first result slot
  uint32_t nres = 0;
  uint32_t opBegin = 0;       ///< into Program::operandSlots
  uint32_t opCount = 0;
  uint32_t jump = 0;          ///< Branch/Jump target pc
  const ir::Node* node = nullptr;
  const ir::Graph* target = nullptr;   ///< Call: callee
  mutable const Program* prog = nullptr;   ///< compiled `target`, resolved on first use
  ir::Datum constant;
  bool hasImm = false;  ///< integer fast ops: operand 1 is `imm`, not a slot
  int64_t imm = 0;
};

struct Program {
  const ir::Graph* graph = nullptr;
  uint32_t numParams = 0;
  uint32_t numSlots = 0;
  std::vector<Instr> code;
  std::vector<uint32_t> operandSlots;
  std::vector<uint32_t> resultSlots;
};

/// Compiles `g`. Never fails: ops without a fast path become Generic.
/// `parallel`: emit ParCall markers for groups of independent calls.
std::unique_ptr<Program> compileProgram(const ir::Graph& g, bool parallel = false);

}  // namespace xacc::runtime
