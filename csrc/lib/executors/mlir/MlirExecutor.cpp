// The Camel `mlir` executor: `camel run --backend=xpu` compiles the program's
// scalar functions (ScalarLowering.h: whole graphs over int/float/bool with
// recursion and branches) to native code through MLIR and LLVM, and leaves
// everything else on the runtime. It is a plugin so that `camel` itself links
// neither MLIR nor LLVM; it does not use libtorch or libpython either.
//
// The rewrite, per compiled graph G:
//   * G's body becomes one `func.builtin {name = "xpu.scalar:G"}` node: the
//     builtin unboxes the arguments, calls the native code, boxes the result.
//     Every caller (runtime graphs, closures, main) reaches the native code
//     through G's name, unchanged.
//   * The original body stays in the module as `G$rt` (its calls to other
//     compiled graphs renamed to their `$rt` copies). When the native code
//     bails out (division by zero, a bad conversion, the native stack running
//     low) the builtin reruns the call on `G$rt`, so results and located
//     diagnostics are the runtime's own. Compiled graphs have no effects,
//     which makes the rerun unobservable.
// The module's native code comes from the disk cache when a previous process
// compiled the same module (ScalarJit.h); XACC_LOG=mlir reports which.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <set>
#include <string>

#include <fmt/format.h>

#include "xacc/backend/mlir/ScalarJit.h"
#include "xacc/camel/Executor.h"
#include "xacc/ir/Builtins.h"
#include "xacc/ir/Interpreter.h"
#include "xacc/ir/Op.h"
#include "xacc/support/Log.h"

namespace {

using namespace xacc;
namespace xm = xacc::backend::mlir;
using support::LogLevel;

/// XACC_LOG=mlir (or all): one line per decision on stderr, as the tensor
/// half of the backend does (support/Log.h). `+mlir` adds the per-graph plan.
void logLine(LogLevel level, const std::string& s) { support::logLine(support::LogChannel::Mlir, s, level); }

const char* bailReason(int code) {
  switch (code) {
    case xm::ScalarAbi::StackLow: return "native stack low";
    case xm::ScalarAbi::DivByZero: return "division by zero";
    case xm::ScalarAbi::BadConversion: return "float does not fit an integer";
    case xm::ScalarAbi::NegativeExponent: return "negative exponent";
    case xm::ScalarAbi::TooDeep: return "more nested calls than the runtime allows";
  }
  return "unknown";
}

ir::Type typeOf(xm::ScalarKind k) {
  switch (k) {
    case xm::ScalarKind::I64: return ir::Type::i64();
    case xm::ScalarKind::F64: return ir::Type::f64();
    case xm::ScalarKind::Bool: return ir::Type::boolean();
  }
  return ir::Type::i64();
}

/// Renames `callee` attributes naming a compiled graph to its `$rt` copy.
void renameCallees(ir::Graph& g, const std::set<std::string>& compiled) {
  for (ir::Node* n : g) {
    if (const ir::Attr* c = n->attr("callee"); c && c->kind() == ir::Attr::Kind::Symbol &&
                                                compiled.count(c->getSymbol()))
      n->attrs().set("callee", ir::Attr::symbol(c->getSymbol() + "$rt"));
    for (const auto& r : n->regions()) renameCallees(*r, compiled);
  }
}

struct NativeFunction {
  std::shared_ptr<const xm::ScalarModule> module;
  xm::ScalarFunction fn;
  std::string fallback;  ///< the `$rt` graph
  mutable std::atomic<bool> bailLogged{false};  ///< the parallel scheduler calls from several threads
};

bool runNative(const NativeFunction& f, ir::Interpreter& I, std::vector<ir::Datum>& args,
               std::vector<ir::Datum>& results) {
  uint64_t slots[16];
  std::vector<uint64_t> big;
  uint64_t* a = slots;
  if (args.size() > 16) {
    big.resize(args.size());
    a = big.data();
  }
  bool ok = args.size() == f.fn.params.size();
  for (size_t i = 0; ok && i < args.size(); ++i) {
    const ir::Datum& d = args[i];
    switch (f.fn.params[i]) {
      case xm::ScalarKind::I64: ok = d.kind() == ir::DKind::Int; if (ok) a[i] = uint64_t(d.asInt()); break;
      case xm::ScalarKind::F64: {
        ok = d.kind() == ir::DKind::Float;
        double v = ok ? d.asFloat() : 0;
        std::memcpy(&a[i], &v, sizeof v);
        break;
      }
      case xm::ScalarKind::Bool: ok = d.kind() == ir::DKind::Bool; if (ok) a[i] = d.asBool(); break;
    }
  }
  if (ok) {
    uint64_t r = 0;
    int code = f.module->call(f.fn.index, a, &r);
    if (code == 0) {
      if (f.fn.result == xm::ScalarKind::I64) {
        results.push_back(ir::Datum::integer(int64_t(r)));
      } else if (f.fn.result == xm::ScalarKind::F64) {
        double v;
        std::memcpy(&v, &r, sizeof v);
        results.push_back(ir::Datum::real(v));
      } else {
        results.push_back(ir::Datum::boolean(r != 0));
      }
      return true;
    }
    if (!f.bailLogged.exchange(true)) {
      logLine(LogLevel::Info, fmt::format("@{}: native code bailed out ({}); the call reruns on the runtime", f.fn.graph,
                             bailReason(code)));
    }
  }
  const ir::Graph* g = I.module() ? I.module()->lookup(f.fallback) : nullptr;
  if (!g) return false;
  return I.run(*g, args, results);
}

/// Replaces `g`'s body by a call of the native builtin `builtin`.
std::unique_ptr<ir::Graph> stubFor(const ir::Graph& g, const std::string& builtin, ir::Type result) {
  auto stub = std::make_unique<ir::Graph>(g.name());
  std::vector<ir::Value*> params;
  for (size_t i = 0; i < g.numParams(); ++i) params.push_back(stub->addParam(g.param(i)->type(), g.param(i)->name()));
  ir::Node* n = stub->create(ir::OpRegistry::get().core(ir::CoreOp::Builtin), params, {result});
  n->attrs().set("name", ir::Attr::string(builtin));
  if (g.front()) n->setLoc(g.front()->loc());
  stub->setResultTypes(g.resultTypes());
  stub->addResult(n->result(0), g.resultTypes().empty() ? ir::Type() : g.resultTypes()[0]);
  stub->setHasReturn(g.hasReturn());
  return stub;
}

bool compileForXpu(ir::Module& m, const std::string& mainGraph, support::DiagnosticEngine& diags) {
  xm::ScalarPlan plan = xm::planScalarModule(m);
  if (support::logEnabled(support::LogChannel::Mlir, LogLevel::Debug)) {
    std::string d = xm::describeScalarPlan(plan);
    if (!d.empty() && d.back() == '\n') d.pop_back();
    logLine(LogLevel::Debug, "camel scalar plan:\n" + d);
  }
  if (plan.functions.empty()) {
    logLine(LogLevel::Info, "camel scalar code: no graph compiles to native code; everything runs on the runtime");
    return true;
  }
  xm::ScalarJitOptions jo;
  jo.cacheDir = xm::defaultCacheDir();
  xm::ScalarCompileInfo info;
  std::string error;
  std::unique_ptr<xm::ScalarModule> mod = xm::compileScalarPlan(plan, jo, info, error);
  if (!mod) {
    // Never fails the program: everything stays on the runtime.
    logLine(LogLevel::Info, "camel scalar code: compilation failed, everything runs on the runtime: " + error);
    return true;
  }
  std::string names;
  for (const auto& f : plan.functions) names += " @" + f.graph;
  logLine(LogLevel::Info, fmt::format("camel scalar code: {} graph{} ({}): {} in {:.1f} ms{}", plan.functions.size(),
                         plan.functions.size() == 1 ? "" : "s", names.substr(1),
                         info.fromDiskCache ? "cache hit, object loaded from the disk cache, no MLIR compile"
                                            : "compiled (MLIR -> LLVM -O3 -> native)",
                         info.seconds * 1e3,
                         jo.cacheDir.empty() ? "; no disk cache" : "; cache " + jo.cacheDir));
  std::shared_ptr<const xm::ScalarModule> shared(std::move(mod));
  std::set<std::string> compiled;
  for (const auto& f : plan.functions) compiled.insert(f.graph);
  for (const auto& f : plan.functions) {
    ir::Graph* g = m.lookup(f.graph);
    if (!g) continue;
    std::unique_ptr<ir::Graph> rt = g->clone();
    rt->setName(f.graph + "$rt");
    renameCallees(*rt, compiled);
    std::string builtin = "xpu.scalar:" + f.graph;
    ir::Type result = typeOf(f.result);
    auto native = std::make_shared<NativeFunction>();
    native->module = shared;
    native->fn = f;
    native->fallback = f.graph + "$rt";
    ir::Builtin b;
    b.name = builtin;
    b.effectful = false;
    b.deterministic = true;
    b.infer = [result](const std::vector<ir::Type>&, std::vector<ir::Type>& out, std::string&) {
      out = {result};
      return true;
    };
    b.fn = [native](ir::Interpreter& I, const ir::Node&, std::vector<ir::Datum>& args,
                    std::vector<ir::Datum>& results) { return runNative(*native, I, args, results); };
    b.summary = "native code of @" + f.graph + " (camel run --backend=xpu)";
    ir::BuiltinRegistry::get().add(std::move(b));
    std::unique_ptr<ir::Graph> stub = stubFor(*g, builtin, result);
    m.erase(f.graph);
    m.add(std::move(rt));
    m.add(std::move(stub));
  }
  (void)mainGraph;
  (void)diags;
  return true;
}

}  // namespace

XACC_CAMEL_EXECUTOR(mlir) {
  ctx->provideGraphCompiler("xpu", compileForXpu);
  return true;
}
