// Scalar GIR graphs -> MLIR text (func/arith/scf/math plus a few LLVM dialect
// ops for the context pointer and the stack check). No MLIR headers here; see
// ScalarLowering.h for what is compiled and the bail-out protocol.
//
// Each graph is emitted on its own first (emission is also the check: an
// unsupported type or op stops it with a reason), then graphs calling a graph
// that did not make it are dropped until nothing changes. Symbols are the graph
// names (escaped), so a graph's text does not depend on which others compile.
//
// GraphEmitter (ScalarLoweringImpl.h) is defined in three parts: this file
// (emission of a graph, self-call inlining, the text helpers), ScalarLoopForm.cpp
// (the loop form of self-recursive graphs and its termination proof) and
// ScalarNodes.cpp (one node at a time: arithmetic, casts, calls, ctrl.if/loop).
#include "ScalarLoweringImpl.h"

#include <cstring>

#include <fmt/format.h>

namespace xacc::backend::mlir::scalar {

bool scalarKind(ir::Type t, ScalarKind& k) {
  if (t.isNull()) return false;
  if (t.isInt() && t.bitWidth() == 64) k = ScalarKind::I64;
  else if (t.isFloat() && t.bitWidth() == 64) k = ScalarKind::F64;
  else if (t.kind() == ir::TypeKind::Bool) k = ScalarKind::Bool;
  else return false;
  return true;
}

const char* mlirType(ScalarKind k) {
  switch (k) {
    case ScalarKind::I64: return "i64";
    case ScalarKind::F64: return "f64";
    case ScalarKind::Bool: return "i1";
  }
  return "i64";
}

/// `@"cml.<name>"` with every character outside [A-Za-z0-9_:.$] written as %XX
/// (so distinct graph names stay distinct symbols).
std::string symbol(const std::string& graph) {
  std::string s = "@\"cml.";
  for (unsigned char c : graph) {
    if (std::isalnum(c) || c == '_' || c == ':' || c == '.' || c == '$') s += char(c);
    else s += fmt::format("%{:02X}", c);
  }
  return s + "\"";
}

std::string f64Const(double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return fmt::format("0x{:016X}", bits);
}

bool GraphEmitter::emit(const ir::Graph& g, std::string& out, std::set<std::string>& callees, std::string& why) {
  callees_ = &callees;
  if (g.results().size() != 1) return fail("returns " + std::to_string(g.results().size()) + " values", why);
  ScalarKind rk;
  if (!scalarKind(g.results()[0]->type(), rk))
    return fail("result type " + g.results()[0]->type().str() + " is not i64, f64 or bool", why);
  std::string sig = "%ctx: !llvm.ptr";
  for (size_t i = 0; i < g.numParams(); ++i) {
    ScalarKind k;
    if (!scalarKind(g.param(i)->type(), k))
      return fail("parameter " + std::to_string(i) + " has type " + g.param(i)->type().str(), why);
    std::string n = fresh();
    names_[g.param(i)] = n;
    sig += fmt::format(", {}: {}", n, mlirType(k));
  }
  indent_ = "    ";
  // The stack pointer (llvm.stacksave is a plain read of it on x86-64 and AArch64).
  line("%spp = llvm.intr.stacksave : !llvm.ptr");
  line("%sp = llvm.ptrtoint %spp : !llvm.ptr to i64");
  line("%lim = llvm.load %ctx : !llvm.ptr -> i64");
  line("%low = arith.cmpi ult, %sp, %lim : i64");
  bail("%low", ScalarAbi::StackLow);
  self_ = &g;
  resultKind_ = rk;
  markTail(g, g.results()[0]);
  planLoop(g);
  inlineSelf_ = !loopForm_ && selfInlinable(g);
  std::vector<std::string> res;
  if (loopForm_) {
    std::vector<std::string> params;
    for (size_t i = 0; i < g.numParams(); ++i) params.push_back(names_.at(g.param(i)));
    res.emplace_back();
    if (!emitLoop(params, res[0], why)) return false;
  } else if (!body(g, res, why)) {
    return false;
  }
  out += fmt::format("  // graph @{}\n  func.func private {}({}) -> {} {{\n", g.name(), symbol(g.name()),
                     sig, mlirType(rk));
  out += text_;
  out += fmt::format("    return {} : {}\n  }}\n", res[0], mlirType(rk));
  return true;
}

void GraphEmitter::markTail(const ir::Graph& g, const ir::Value* v) {
  tail_.insert(v);
  const ir::Node* lastSelf = nullptr;  // accumulator: the latest self-call operand of a tail add/mul
  for (const ir::Node* n : g) {
    if (isSelfCall(*n)) {
      for (const ir::Node* u : g)
        if ((u->op().coreId == int(CoreOp::Add) || u->op().coreId == int(CoreOp::Mul)) && u->numResults() == 1 &&
            u->result(0) == v && u->result(0)->type().isInt())
          for (const ir::Value* o : u->operands())
            if (o == n->result(0)) lastSelf = n;
    }
    if (n->op().coreId != int(CoreOp::If) || n->numRegions() != 2) continue;
    for (size_t i = 0; i < n->numResults(); ++i)
      if (n->result(i) == v)
        for (size_t arm = 0; arm < 2; ++arm)
          if (i < n->region(arm)->results().size()) markTail(*n->region(arm), n->region(arm)->results()[i]);
  }
  if (lastSelf) tail_.insert(lastSelf->result(0));
}

void GraphEmitter::measure(const ir::Graph& g, size_t& nodes, size_t& selfCalls) {
  for (const ir::Node* n : g) {
    ++nodes;
    if (isSelfCall(*n) && !tail_.count(n->result(0))) ++selfCalls;
    for (size_t i = 0; i < n->numRegions(); ++i) measure(*n->region(i), nodes, selfCalls);
  }
}

bool GraphEmitter::isSelfCall(const ir::Node& n) const {
  if (n.op().coreId != int(CoreOp::Call) || n.numResults() != 1) return false;
  const ir::Attr* callee = n.attr("callee");
  return callee && callee->kind() == ir::Attr::Kind::Symbol && module_.lookup(callee->getSymbol()) == self_;
}

bool GraphEmitter::selfInlinable(const ir::Graph& g) {
  size_t nodes = 0, selfCalls = 0;
  measure(g, nodes, selfCalls);
  return selfCalls > 0 && selfCalls <= 4 && nodes <= 48;
}

bool GraphEmitter::inlineSelfCall(const ir::Node& n, const std::vector<std::string>& a, std::string& why) {
  auto saved = names_;  // the copy rebinds the same ir::Values
  ++inlineDepth_;
  std::vector<std::string> res;
  bool ok = inlineRegion(*self_, a, res, why);
  --inlineDepth_;
  if (!ok) return false;
  if (res.size() != 1) return fail("an inlined self-call yields the wrong number of values", why);
  names_ = std::move(saved);
  names_[n.result(0)] = res[0];
  return true;
}

std::string GraphEmitter::join(const std::vector<std::string>& xs, size_t from) {
  std::string s;
  for (size_t i = from; i < xs.size(); ++i) s += (i > from ? ", " : "") + xs[i];
  return s;
}

ScalarKind GraphEmitter::kindOf(const ir::Value* v) {
  ScalarKind k = ScalarKind::I64;
  scalarKind(v->type(), k);
  return k;
}

bool GraphEmitter::fail(std::string reason, std::string& why) {
  why = std::move(reason);
  return false;
}

std::string GraphEmitter::constant(const std::string& v, const char* type) {
  std::string n = fresh();
  if (std::strcmp(type, "i1") == 0) line(fmt::format("{} = arith.constant {}", n, v));  // true / false
  else line(fmt::format("{} = arith.constant {} : {}", n, v, type));
  return n;
}

void GraphEmitter::bail(const std::string& cond, int code) {
  line(fmt::format("scf.if {} {{", cond));
  std::string c = fresh();
  line(fmt::format("  {} = arith.constant {} : i32", c, code));
  line(fmt::format("  llvm.call @xacc_scalar_bail(%ctx, {}) : (!llvm.ptr, i32) -> ()", c));
  line("}");
}

std::string GraphEmitter::op2(const char* op, const std::string& a, const std::string& b, const char* type) {
  std::string n = fresh();
  line(fmt::format("{} = {} {}, {} : {}", n, op, a, b, type));
  return n;
}

std::string GraphEmitter::cmp(const char* op, const char* pred, const std::string& a, const std::string& b, const char* type) {
  std::string n = fresh();
  line(fmt::format("{} = {} {}, {}, {} : {}", n, op, pred, a, b, type));
  return n;
}

std::string GraphEmitter::select(const std::string& c, const std::string& a, const std::string& b, const char* type) {
  std::string n = fresh();
  line(fmt::format("{} = arith.select {}, {}, {} : {}", n, c, a, b, type));
  return n;
}

bool GraphEmitter::body(const ir::Graph& g, std::vector<std::string>& results, std::string& why) {
  for (const ir::Node* n : g)
    if (!node(*n, why)) return false;
  for (const ir::Value* v : g.results()) {
    auto it = names_.find(v);
    if (it == names_.end()) return fail("a result is not defined in the graph", why);
    results.push_back(it->second);
  }
  return true;
}

}  // namespace xacc::backend::mlir::scalar

namespace xacc::backend::mlir {
namespace {

using namespace scalar;

std::string dispatcher(const std::vector<ScalarFunction>& fs) {
  std::string s = fmt::format(
      "  func.func @{}(%fn: i64, %ctx: !llvm.ptr, %args: !llvm.ptr, %res: !llvm.ptr) {{\n"
      "    %i = arith.index_cast %fn : i64 to index\n    scf.index_switch %i\n",
      ScalarAbi::kDispatch);
  for (const ScalarFunction& f : fs) {
    s += fmt::format("    case {} {{\n", f.index);
    std::string args = "%ctx", types = "!llvm.ptr";
    for (size_t i = 0; i < f.params.size(); ++i) {
      s += fmt::format("      %p{0} = llvm.getelementptr %args[{0}] : (!llvm.ptr) -> !llvm.ptr, i64\n", i);
      if (f.params[i] == ScalarKind::Bool) {
        s += fmt::format("      %w{0} = llvm.load %p{0} : !llvm.ptr -> i64\n      %a{0} = arith.trunci %w{0} : i64 to i1\n", i);
      } else {
        s += fmt::format("      %a{0} = llvm.load %p{0} : !llvm.ptr -> {1}\n", i, mlirType(f.params[i]));
      }
      args += fmt::format(", %a{}", i);
      types += std::string(", ") + mlirType(f.params[i]);
    }
    s += fmt::format("      %r = func.call {}({}) : ({}) -> {}\n", symbol(f.graph), args, types, mlirType(f.result));
    if (f.result == ScalarKind::Bool) s += "      %rw = arith.extui %r : i1 to i64\n      llvm.store %rw, %res : i64, !llvm.ptr\n";
    else s += fmt::format("      llvm.store %r, %res : {}, !llvm.ptr\n", mlirType(f.result));
    s += "      scf.yield\n    }\n";
  }
  s += "    default {\n    }\n    return\n  }\n";
  return s;
}

}  // namespace

ScalarPlan planScalarModule(const ir::Module& m) {
  ScalarPlan plan;
  struct Emitted {
    std::string text;
    std::set<std::string> callees;
  };
  std::map<std::string, Emitted> ok;  // by name: a deterministic order
  std::vector<std::string> order;
  for (const auto& g : m.graphs()) {
    Emitted e;
    std::string why;
    GraphEmitter em(m);
    if (em.emit(*g, e.text, e.callees, why)) {
      order.push_back(g->name());
      ok.emplace(g->name(), std::move(e));
    } else {
      plan.rejected.emplace_back(g->name(), why);
    }
  }
  // Drop graphs that call a graph that is not compiled, until none does.
  for (bool changed = true; changed;) {
    changed = false;
    for (auto it = ok.begin(); it != ok.end();) {
      std::string missing;
      for (const std::string& c : it->second.callees)
        if (!ok.count(c)) missing = c;
      if (missing.empty()) {
        ++it;
        continue;
      }
      plan.rejected.emplace_back(it->first, "calls @" + missing + ", which is not compiled");
      it = ok.erase(it);
      changed = true;
    }
  }
  std::string funcs;
  for (const std::string& name : order) {
    auto it = ok.find(name);
    if (it == ok.end()) continue;
    ScalarFunction f;
    f.graph = name;
    f.index = uint32_t(plan.functions.size());
    const ir::Graph& g = *m.lookup(name);
    for (size_t i = 0; i < g.numParams(); ++i) scalarKind(g.param(i)->type(), f.params.emplace_back());
    scalarKind(g.results()[0]->type(), f.result);
    plan.functions.push_back(std::move(f));
    funcs += it->second.text;
  }
  if (plan.functions.empty()) return plan;
  plan.mlir = fmt::format("module attributes {{xacc.lowering = \"{}\"}} {{\n", kScalarLoweringVersion);
  plan.mlir +=
      "  llvm.func @longjmp(!llvm.ptr, i32) attributes {passthrough = [\"noreturn\"]}\n"
      "  // Gives up on the whole native call: back to the entry's setjmp. Cold\n"
      "  // and noreturn: the code after a bail-out check is the only path on.\n"
      "  llvm.func internal @xacc_scalar_bail(%ctx: !llvm.ptr, %code: i32)\n"
      "      attributes {passthrough = [\"noreturn\", \"cold\", \"noinline\"]} {\n"
      "    %p = llvm.getelementptr %ctx[1] : (!llvm.ptr) -> !llvm.ptr, i64\n"
      "    %jb = llvm.load %p : !llvm.ptr -> !llvm.ptr\n"
      "    llvm.call @longjmp(%jb, %code) : (!llvm.ptr, i32) -> ()\n"
      "    llvm.unreachable\n  }\n";
  plan.mlir += funcs;
  plan.mlir += dispatcher(plan.functions);
  plan.mlir += "}\n";
  return plan;
}

std::string describeScalarPlan(const ScalarPlan& p) {
  std::string s;
  for (const ScalarFunction& f : p.functions) s += fmt::format("compiled @{} (function {})\n", f.graph, f.index);
  for (const auto& [g, why] : p.rejected) s += fmt::format("runtime  @{}: {}\n", g, why);
  return s;
}

}  // namespace xacc::backend::mlir
