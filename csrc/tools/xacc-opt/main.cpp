// xacc-opt: reads GIR text, verifies it, runs a pass pipeline and prints GIR or
// DOT. With --verify-diagnostics it checks `// expected-error {{...}}` comments
// against the diagnostics produced (like mlir-opt), which is how lit tests the
// parser and verifier. Malformed input always ends in a located diagnostic and
// exit code 1, never a crash.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "xacc/ir/Interpreter.h"
#include "xacc/ir/Parser.h"
#include "xacc/ir/Printer.h"
#include "xacc/ir/Verifier.h"
#include "xacc/onnx/OnnxExport.h"
#include "xacc/passes/PassManager.h"
#include "xacc/runtime/Runtime.h"
#include "xacc/support/VerifyDiagnostics.h"
#ifdef XACC_HAVE_ATEN
#include "xacc/backend/aten/AtenOps.h"
#endif

using namespace xacc;

namespace {

struct Options {
  std::string input = "-";
  std::string output = "-";
  std::string passes;
  std::vector<std::string> passOptions;
  std::string emit = "gir";
  std::string onnxGraph;  ///< --emit=onnx: the graph to export (default: the first)
  std::string interpret;
  std::string engine = "interp";
  std::string scheduler = "seq";
  bool verifyEach = false;
  bool printAfterAll = false;
  bool stats = false;
  bool timing = false;
  bool verifyDiagnostics = false;
  bool splitInputFile = false;
  bool noLocs = false;
  bool noVerify = false;
};

// Runtime errors point at a node's source `loc`; nodes without one get their
// position in the .gir text, so every runtime diagnostic is located.
void stampTextLocations(ir::Graph& g, const ir::TextLocations& locs) {
  for (ir::Node* n : g) {
    if (!n->loc().valid()) n->setLoc(locs.of(*n));
    for (auto& r : n->regions()) stampTextLocations(*r, locs);
  }
}

// Processes one chunk; returns the exit status for it.
int processChunk(const Options& opt, const std::string& text, const std::string& name,
                 std::string& output) {
  support::DiagnosticEngine diag;
  ir::TextLocations locs;
  std::unique_ptr<ir::Module> m = ir::parseModule(text, name, diag, &locs);
  bool ok = m != nullptr;
  if (ok && !opt.noVerify) ok = ir::verifyModule(*m, diag, &locs);
  passes::PassManager pm(diag);
  if (ok && !opt.passes.empty()) {
    ok = pm.addPipeline(opt.passes);
    pm.setVerifyEach(opt.verifyEach);
    for (const std::string& kv : opt.passOptions) {
      size_t eq = kv.find('=');
      pm.setOption(kv.substr(0, eq), eq == std::string::npos ? std::string() : kv.substr(eq + 1));
    }
    pm.setTextLocations(&locs);
    if (opt.printAfterAll)
      pm.setAfterPass([&](std::string_view pass, const ir::Module& mod) {
        std::cerr << "// -----// IR after " << pass << " //----- //\n"
                  << ir::printModule(mod, {!opt.noLocs});
      });
    if (ok) ok = pm.run(*m);
  }

  if (opt.verifyDiagnostics) {
    // Only errors are checked: xacc-opt's warnings are advisory.
    std::string problems =
        support::verifyDiagnostics(name, text, diag.diagnostics(), {.warnings = false});
    std::cerr << problems;
    return problems.empty() ? 0 : 1;
  }

  if (!ok) {
    std::cerr << diag.renderAllText();
    return 1;
  }
  if (!opt.interpret.empty()) {
    ir::Graph* g = m->lookup(opt.interpret);
    if (!g) {
      std::cerr << name << ": error[E0409]: no graph @" << opt.interpret << "\n";
      return 1;
    }
    // Each !token parameter receives a fresh token (see Note [Effect tokens]);
    // there is nothing to pass for any other parameter.
    std::vector<ir::Datum> args;
    for (size_t i = 0; i < g->numParams(); ++i) {
      if (!g->param(i)->type().isToken()) {
        std::cerr << name
                  << ": error[E0411]: --interpret needs a graph whose parameters are all !token\n";
        return 1;
      }
      args.push_back(ir::Datum::token());
    }
    for (auto& graph : m->graphs()) stampTextLocations(*graph, locs);
    std::vector<ir::Datum> results;
    bool ran;
    if (opt.engine == "runtime") {
      runtime::RuntimeOptions ro;
      if (opt.scheduler == "par") ro.scheduler = runtime::Scheduler::Parallel;
      runtime::Runtime rt(diag, *m, ro);
      rt.setOutput([&](std::string_view s) { output.append(s); });
      ran = rt.run(*g, args, results);
      if (opt.stats)
        std::cerr << "runtime: " << rt.stats().calls << " calls, " << rt.stats().tailCalls
                  << " tail calls, " << rt.stats().parallelGroups << " parallel groups\n";
    } else {
      ir::Interpreter interp(diag, m.get());
      interp.setOutput([&](std::string_view s) { output.append(s); });
      ran = interp.run(*g, args, results);
    }
    if (!ran) {
      std::cerr << diag.renderAllText();
      return 1;
    }
    for (size_t i = 0; i < results.size(); ++i)
      if (results[i].kind() != ir::DKind::Token)
        output += "result " + std::to_string(i) + ": " + results[i].repr(false) + "\n";
  } else if (opt.emit == "dot") {
    output += ir::printDot(*m);
  } else if (opt.emit == "onnx") {
    // The tensor part of one graph as an ONNX model (OnnxExport.h).
    ir::Graph* g = opt.onnxGraph.empty() ? (m->graphs().empty() ? nullptr : m->graphs().front().get())
                                         : m->lookup(opt.onnxGraph);
    if (!g) {
      std::cerr << name << ": error[E0409]: no graph @" << opt.onnxGraph << "\n";
      return 1;
    }
    onnx::ExportOptions eo;
    eo.locs = &locs;
    std::string bytes;
    if (!onnx::exportOnnx(*g, eo, diag, bytes)) {
      std::cerr << diag.renderAllText();
      return 1;
    }
    output += bytes;
  } else {
    output += ir::printModule(*m, {!opt.noLocs});
  }
  if (opt.stats) {
    std::cerr << "===- Pass statistics -===\n";
    for (auto& [k, v] : pm.stats()) std::cerr << "  " << v << "  " << k << "\n";
  }
  if (opt.timing) {
    std::cerr << "===- Pass timing -===\n";
    for (auto& [k, v] : pm.timings()) std::cerr << "  " << v * 1e3 << " ms  " << k << "\n";
  }
  return 0;
}

std::string passHelp() {
  std::string s = "Passes (for --passes=a,b,c):\n";
  for (const passes::PassInfo& p : passes::passRegistry()) {
    s += "  " + p.name;
    s += std::string(p.name.size() < 16 ? 16 - p.name.size() : 1, ' ');
    s += p.description + "\n";
  }
  return s;
}

int realMain(int argc, char** argv) {
#ifdef XACC_HAVE_ATEN
  backend::aten::registerAtenOps();
#endif
  Options opt;
  CLI::App app{"xacc-opt: read GIR, run passes, print GIR or DOT"};
  app.footer(passHelp());
  app.add_option("input", opt.input, "input .gir file ('-' for stdin)");
  app.add_option("-o,--output", opt.output, "output file ('-' for stdout)");
  app.add_option("--passes", opt.passes, "comma-separated pass pipeline");
  app.add_option("--pass-option", opt.passOptions, "pass option key=value (repeatable), e.g. device=cpu");
  app.add_option("--emit", opt.emit, "output form: gir, dot or onnx (the tensor part of one graph)")
      ->check(CLI::IsMember({"gir", "dot", "onnx"}));
  app.add_option("--onnx-graph", opt.onnxGraph, "--emit=onnx: the graph to export (default: the first)");
  app.add_option("--interpret", opt.interpret,
                 "run the named graph (its parameters must be !token) and print its results");
  app.add_option("--engine", opt.engine, "what --interpret runs on: interp (reference) or runtime")
      ->check(CLI::IsMember({"interp", "runtime"}));
  app.add_option("--scheduler", opt.scheduler, "runtime scheduler: seq or par")
      ->check(CLI::IsMember({"seq", "par"}));
  app.add_flag("--verify-each", opt.verifyEach, "verify the IR after every pass");
  app.add_flag("--print-ir-after-all", opt.printAfterAll, "print the IR to stderr after every pass");
  app.add_flag("--stats", opt.stats, "print pass statistics to stderr");
  app.add_flag("--timing", opt.timing, "print the time spent in each pass to stderr");
  app.add_flag("--verify-diagnostics", opt.verifyDiagnostics,
               "check // expected-error {{...}} comments against the diagnostics");
  app.add_flag("--split-input-file", opt.splitInputFile, "process chunks separated by '// -----'");
  app.add_flag("--no-locs", opt.noLocs, "do not print loc(...) suffixes");
  app.add_flag("--no-verify", opt.noVerify, "skip the verifier on input");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }

  std::string text;
  std::string name = opt.input == "-" ? "<stdin>" : opt.input;
  if (opt.input == "-") {
    std::stringstream ss;
    ss << std::cin.rdbuf();
    text = ss.str();
  } else {
    std::ifstream f(opt.input, std::ios::binary);
    if (!f) {
      std::cerr << opt.input << ": error[E0002]: cannot open file\n";
      return 1;
    }
    std::stringstream ss;
    ss << f.rdbuf();
    text = ss.str();
  }

  std::vector<std::string> chunks;
  if (opt.splitInputFile) {
    chunks = support::splitInputFile(text);
  } else {
    chunks.push_back(text);
  }

  int status = 0;
  std::string output;
  for (size_t i = 0; i < chunks.size(); ++i) {
    if (i) output += "// -----\n";
    status |= processChunk(opt, chunks[i], name, output);
  }
  if (opt.output == "-") {
    std::cout << output;
  } else {
    std::ofstream f(opt.output, std::ios::binary);
    if (!f) {
      std::cerr << opt.output << ": error[E0002]: cannot write file\n";
      return 1;
    }
    f << output;
  }
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return realMain(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "xacc-opt: error[E0003]: internal error: " << e.what() << "\n";
    return 1;
  }
}
