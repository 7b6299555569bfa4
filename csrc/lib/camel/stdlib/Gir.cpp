// Module `gir`: graph operations for user graph reducers (docs/camel-reducers.md).
//
// Note [Graphs as Camel values]: a reducer's `macro func main(g: string): string`
// receives the program as GIR text (the form `camel inspect --gir` prints and
// ir::parseModule reads) and returns GIR text. The first graph of a program's
// text is its entry (the pipeline prints it first and every function here keeps
// the order), and the empty string is the empty graph: what a reducer returns
// when it executed the program itself. Text keeps graphs immutable values that
// print, compare and pass through any Camel function, with no new value kind;
// every function here parses its argument, verifies it, works on the module and
// prints the result, so a malformed graph is a located run-time error (E3005)
// naming the function, never a crash.
//
// Lives in its own library (xacc_camel_gir) because it needs the pass manager
// and the runtime, which the rest of the standard library does not; the `camel`
// tool registers it (registerGirModule) before compiling anything.
#include <algorithm>
#include <atomic>
#include <mutex>

#include "StdlibImpl.h"
#include "xacc/ir/Parser.h"
#include "xacc/ir/Printer.h"
#include "xacc/ir/Verifier.h"
#include "xacc/passes/PassManager.h"
#include "xacc/runtime/Runtime.h"

namespace xacc::camel {

namespace {

using namespace stdlib;

std::atomic<int> gLastRunStatus{0};

/// The first error of `diags` as one line.
std::string firstError(const support::DiagnosticEngine& diags) {
  for (const auto& d : diags.diagnostics())
    if (d.severity == support::Severity::Error)
      return (d.loc.valid() ? d.loc.str() + ": " : std::string()) + d.message;
  return "invalid graph";
}

/// Parses and verifies graph text; reports E3005 at `n` on failure. The empty
/// graph parses to a module without graphs.
bool parseGraph(Interpreter& I, const Node& n, const char* fn, const Datum& d,
                std::unique_ptr<ir::Module>& out) {
  const std::string* text;
  if (!getStr(I, n, fn, d, text)) return false;
  support::DiagnosticEngine diags(&I.diag().sourceManager());
  out = ir::parseModule(*text, std::string("<graph given to ") + fn + ">", diags);
  if (out && !ir::verifyModule(*out, diags)) out.reset();
  if (!out) return fail(I, n, RuntimeDiag::InvalidArgument, {fn, "malformed graph: " + firstError(diags)});
  return true;
}

/// Prints a module back to text (graphs in module order, so the entry stays first).
Datum printGraphText(const ir::Module& m) { return Datum::string(ir::printModule(m)); }

/// Calls `visit` on every node of every graph, regions included, in order.
void forEachNode(const ir::Module& m, const std::function<void(ir::Node&)>& visit) {
  std::function<void(const ir::Graph&)> walk = [&](const ir::Graph& g) {
    for (ir::Node* n : g) {
      visit(*n);
      for (auto& r : n->regions()) walk(*r);
    }
  };
  for (auto& g : m.graphs()) walk(*g);
}

/// `op` names node `n`'s op: equal, or a prefix ending in '.' (`aten.`).
bool opMatches(const ir::Node& n, const std::string& op) {
  if (n.opName() == op) return true;
  return !op.empty() && op.back() == '.' && n.opName().rfind(op, 0) == 0;
}

InferRule returns(Type result, std::vector<const char*> argKinds) {
  return [result, argKinds](const Types& a, Types& r, std::string& err) {
    for (size_t i = 0; i < a.size() && i < argKinds.size(); ++i)
      if (!want(strLike(a[i]), a, i, argKinds[i], "a string", err)) return false;
    r = {result};
    return true;
  };
}

}  // namespace

int girLastRunStatus() { return gLastRunStatus.load(); }

void registerGirModule() {
  static std::once_flag once;
  std::call_once(once, [] {
    registerCamelStdlib();
    define({.module = "gir",
            .name = "ops",
            .gir = "gir::ops",
            .params = 1,
            .signature = "(g: string): string[]",
            .summary = "op name of every node (regions included), in graph order",
            .infer = returns(Type::list(Type::string()), {"the graph"}),
            .fn =
                [](Interpreter& I, const Node& n, Datums& a, Datums& r) {
                  std::unique_ptr<ir::Module> m;
                  if (!parseGraph(I, n, "gir::ops", a[0], m)) return false;
                  std::vector<Datum> ops;
                  forEachNode(*m, [&](ir::Node& x) { ops.push_back(Datum::string(x.opName())); });
                  r.push_back(Datum::list(std::move(ops)));
                  return true;
                }});
    define({.module = "gir",
            .name = "graphs",
            .gir = "gir::graphs",
            .params = 1,
            .signature = "(g: string): string[]",
            .summary = "names of the graphs, the entry first",
            .infer = returns(Type::list(Type::string()), {"the graph"}),
            .fn =
                [](Interpreter& I, const Node& n, Datums& a, Datums& r) {
                  std::unique_ptr<ir::Module> m;
                  if (!parseGraph(I, n, "gir::graphs", a[0], m)) return false;
                  std::vector<Datum> names;
                  for (auto& g : m->graphs()) names.push_back(Datum::string(g->name()));
                  r.push_back(Datum::list(std::move(names)));
                  return true;
                }});
    define({.module = "gir",
            .name = "count",
            .gir = "gir::count",
            .params = 2,
            .signature = "(g: string, op: string): int",
            .summary = "number of nodes whose op is `op` (a prefix when it ends in '.', e.g. \"aten.\")",
            .infer = returns(Type::i64(), {"the graph", "the op name"}),
            .fn =
                [](Interpreter& I, const Node& n, Datums& a, Datums& r) {
                  std::unique_ptr<ir::Module> m;
                  const std::string* op;
                  if (!parseGraph(I, n, "gir::count", a[0], m) || !getStr(I, n, "gir::count", a[1], op))
                    return false;
                  int64_t count = 0;
                  forEachNode(*m, [&](ir::Node& x) { count += opMatches(x, *op); });
                  r.push_back(Datum::integer(count));
                  return true;
                }});
    define({.module = "gir",
            .name = "pass",
            .gir = "gir::pass",
            .params = 2,
            .signature = "(g: string, pipeline: string): string",
            .summary = "runs GIR passes (\"inline,dce\"; \"std\" is the standard pipeline of std::opt)",
            .infer = returns(Type::string(), {"the graph", "the pipeline"}),
            .fn =
                [](Interpreter& I, const Node& n, Datums& a, Datums& r) {
                  std::unique_ptr<ir::Module> m;
                  const std::string* pipeline;
                  if (!parseGraph(I, n, "gir::pass", a[0], m) || !getStr(I, n, "gir::pass", a[1], pipeline))
                    return false;
                  std::string p = *pipeline == "std" ? std::string(passes::kStandardPipeline) : *pipeline;
                  support::DiagnosticEngine diags(&I.diag().sourceManager());
                  passes::PassManager pm(diags);
                  if (!pm.addPipeline(p) || !pm.run(*m) || !ir::verifyModule(*m, diags))
                    return fail(I, n, RuntimeDiag::InvalidArgument, {"gir::pass", firstError(diags)});
                  r.push_back(printGraphText(*m));
                  return true;
                }});
    define({.module = "gir",
            .name = "replace",
            .gir = "gir::replace",
            .params = 3,
            .signature = "(g: string, from: string, to: string): string",
            .summary = "every node of op `from` becomes op `to` (same operands, attributes and types; "
                       "the result must verify)",
            .infer = returns(Type::string(), {"the graph", "the op to replace", "the new op"}),
            .fn =
                [](Interpreter& I, const Node& n, Datums& a, Datums& r) {
                  std::unique_ptr<ir::Module> m;
                  const std::string *from, *to;
                  if (!parseGraph(I, n, "gir::replace", a[0], m) || !getStr(I, n, "gir::replace", a[1], from) ||
                      !getStr(I, n, "gir::replace", a[2], to))
                    return false;
                  // Rewrites the op name where a node line names it ("%0 = OP(" or "OP(")
                  // and lets the parser and verifier judge the result.
                  std::string text = ir::printModule(*m), out;
                  size_t pos = 0;
                  while (pos < text.size()) {
                    size_t eol = text.find('\n', pos);
                    if (eol == std::string::npos) eol = text.size();
                    std::string line = text.substr(pos, eol - pos);
                    size_t start = line.find_first_not_of(' ');
                    size_t eq = line.find(" = ");
                    size_t opAt = start;
                    if (eq != std::string::npos && start != std::string::npos && line[start] == '%')
                      opAt = eq + 3;
                    if (opAt != std::string::npos && line.compare(opAt, from->size(), *from) == 0 &&
                        opAt + from->size() < line.size() && line[opAt + from->size()] == '(')
                      line = line.substr(0, opAt) + *to + line.substr(opAt + from->size());
                    out += line;
                    if (eol < text.size()) out += '\n';
                    pos = eol + 1;
                  }
                  support::DiagnosticEngine diags(&I.diag().sourceManager());
                  auto result = ir::parseModule(out, "<gir::replace result>", diags);
                  if (!result || !ir::verifyModule(*result, diags))
                    return fail(I, n, RuntimeDiag::InvalidArgument,
                                {"gir::replace", "replacing " + *from + " by " + *to + ": " + firstError(diags)});
                  r.push_back(printGraphText(*result));
                  return true;
                }});
    define({.module = "gir",
            .name = "remove",
            .gir = "gir::remove",
            .params = 2,
            .signature = "(g: string, op: string): string",
            .summary = "removes every node of op `op`: each result is replaced by the operand at the "
                       "same position, which must have the same type (so `io.print` nodes go away "
                       "and `aten.clone` passes its input through)",
            .infer = returns(Type::string(), {"the graph", "the op name"}),
            .fn =
                [](Interpreter& I, const Node& n, Datums& a, Datums& r) {
                  std::unique_ptr<ir::Module> m;
                  const std::string* op;
                  if (!parseGraph(I, n, "gir::remove", a[0], m) || !getStr(I, n, "gir::remove", a[1], op))
                    return false;
                  std::vector<ir::Node*> doomed;
                  forEachNode(*m, [&](ir::Node& x) {
                    if (opMatches(x, *op)) doomed.push_back(&x);
                  });
                  for (ir::Node* x : doomed) {
                    for (size_t i = 0; i < x->numResults(); ++i) {
                      if (!x->result(i)->hasUses()) continue;
                      if (i >= x->numOperands() || x->operand(i)->type() != x->result(i)->type())
                        return fail(I, n, RuntimeDiag::InvalidArgument,
                                    {"gir::remove", "cannot remove " + ir::printNodeShort(*x) + ": result " +
                                                        std::to_string(i) + " has no operand of its type "
                                                        "to stand in for it"});
                      x->result(i)->replaceAllUsesWith(x->operand(i));
                    }
                  }
                  for (ir::Node* x : doomed) x->parent()->erase(x);
                  support::DiagnosticEngine diags(&I.diag().sourceManager());
                  if (!ir::verifyModule(*m, diags))
                    return fail(I, n, RuntimeDiag::InvalidArgument, {"gir::remove", firstError(diags)});
                  r.push_back(printGraphText(*m));
                  return true;
                }});
    define({.module = "gir",
            .name = "run",
            .gir = "gir::run",
            .params = 1,
            .signature = "(g: string): int",
            .effectful = true,
            .deterministic = false,
            .summary = "executes the graph's entry (its first graph) with the sequential runtime and "
                       "returns its exit status; a reducer that does this returns \"\" (the empty graph)",
            .infer = returns(Type::i64(), {"the graph"}),
            .fn =
                [](Interpreter& I, const Node& n, Datums& a, Datums& r) {
                  std::unique_ptr<ir::Module> m;
                  if (!parseGraph(I, n, "gir::run", a[0], m)) return false;
                  if (m->graphs().empty())
                    return fail(I, n, RuntimeDiag::InvalidArgument, {"gir::run", "the graph is empty"});
                  const ir::Graph& entry = *m->graphs().front();
                  std::vector<Datum> args, results;
                  for (size_t i = 0; i < entry.numParams(); ++i) {
                    if (!entry.param(i)->type().isToken())
                      return fail(I, n, RuntimeDiag::InvalidArgument,
                                  {"gir::run", "the entry @" + entry.name() + " takes parameters"});
                    args.push_back(Datum::token());
                  }
                  support::DiagnosticEngine inner(&I.diag().sourceManager());
                  runtime::Runtime rt(inner, *m);
                  rt.setOutput([&I](std::string_view s) { I.write(s); });
                  bool ok = rt.run(entry, args, results);
                  int status = 0;
                  if (ExitRequest::take(status)) {
                    results.clear();  // exit(status): not an error (Note [exit()])
                  } else if (!ok) {
                    // The program's own located errors, then the call that ran it.
                    for (const auto& d : inner.diagnostics()) {
                      auto& x = I.diag().report(d.severity, d.code, d.loc, d.message);
                      x.notes = d.notes;
                      x.suggestion = d.suggestion;
                    }
                    return fail(I, n, RuntimeDiag::InvalidArgument, {"gir::run", "the program failed"});
                  } else {
                    for (const Datum& d : results) {
                      if (d.kind() == DKind::Int) status = int(d.asInt() & 0xff);
                      else if (d.kind() == DKind::Bool) status = d.asBool() ? 1 : 0;
                    }
                  }
                  gLastRunStatus.store(status);
                  r.push_back(Datum::integer(status));
                  return true;
                }});
  });
}

}  // namespace xacc::camel
