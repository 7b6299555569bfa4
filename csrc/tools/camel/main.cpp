// The `camel` executable. Subcommands: `run FILE` (also `camel FILE`, the
// default command) compiles a program, runs the GIR pass pipeline and runs
// `main` on the runtime (`--scheduler=seq`, `par` with `--threads N`, or
// `auto`, the default: par when the program has parallelism to use, see
// runtime::hasParallelism, else seq; `--export DIR` also writes the program's artifacts,
// Export.h); `inspect --tokens|--ast|--gir|--dot|--mlir FILE` prints
// intermediate forms; `check FILE|DIR...` runs parsing and semantic analysis
// on every `.cml` file (with `--verify-diagnostics` it checks expectation
// comments instead of printing diagnostics, see xacc/support/VerifyDiagnostics.h). Global
// options (`--error-format`, `-I`, `-L`, `--log-level`, `--version`, `--help`)
// may appear before or after the subcommand. Exit status of `run`: main's
// result as spec 11.9 says (int -> value & 0xff, bool -> 1/0, else 0), the
// status given to exit(), 1 for compile-time or run-time errors; otherwise 0
// success, 1 diagnostics (including unreadable input), 2 usage errors.
// Diagnostics go to stderr, dumps and program output to stdout. CLI11
// exceptions are caught here, at the tool boundary.
//
// Graph reducers (`camel main.cml -> opt.cml -> std::onnx`, `--passes` naming
// reducers) are Pipeline.h; `camel run` without a file reads cmlconfig.json
// (Config.h), then the command line is parsed again so its flags override it.
//
// Adding a command: write `int runX(const GlobalOptions&, const XArgs&)`,
// register its subcommand in `main`, and dispatch on it below.
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <thread>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "Config.h"
#include "Export.h"
#include "Pipeline.h"
#include "xacc/camel/CamelDiag.h"
#include "xacc/camel/Compiler.h"
#include "xacc/camel/Executor.h"
#include "xacc/camel/Frontend.h"
#include "xacc/camel/Lexer.h"
#include "xacc/camel/Stdlib.h"
#include "xacc/camel/Token.h"
#include "xacc/ir/Printer.h"
#include "xacc/ir/Verifier.h"
#include "xacc/passes/PassManager.h"
#include "xacc/runtime/Runtime.h"
#include "xacc/support/VerifyDiagnostics.h"

#ifndef XACC_VERSION
#define XACC_VERSION "0.1.0"
#endif

namespace {

using namespace xacc;
using namespace xacc::camel;

enum ExitCode : int { kExitOk = 0, kExitDiagnostics = 1, kExitUsage = 2 };

/// The default pass pipeline of `camel run` (behaviour-preserving: the
/// end-to-end tests run every program with it).
constexpr const char* kDefaultPasses = passes::kStandardPipeline;

struct GlobalOptions {
  std::string errorFormat = "text";
  std::vector<std::string> includeDirs;
  std::string stdlibDir;
  std::string logLevel = "warn";
};

struct InspectArgs {
  bool tokens = false;
  bool ast = false;
  bool gir = false;
  bool dot = false;   ///< the GIR as Graphviz DOT
  bool mlir = false;  ///< xacc-mlir's plan and MLIR per graph (Export.h)
  std::string passes;
  std::string file;
};

struct RunArgs {
  std::string file;
  std::vector<std::string> args;
  std::string passes = kDefaultPasses;
  bool profile = false;
  int repeat = 1;
  std::string exportDir;  ///< --export DIR (Export.h)
  std::string scheduler = "auto";  ///< seq, par, or auto: par where there is parallelism
  unsigned threads = 0;  ///< 0: the hardware concurrency
  std::vector<std::string> executors;  ///< --executors a,b: loaded before compiling
  std::string backend;  ///< --backend=xpu: the executor's graph compiler rewrites the program
  std::vector<tool::Reducer> reducers;  ///< `-> r1 -> r2`, `--passes` of reducers or cmlconfig.json
};

std::string gArgv0;

CompileOptions compileOptions(const GlobalOptions& g) {
  CompileOptions o;
  o.includeDirs = g.includeDirs;
  o.stdlibDir = g.stdlibDir;
  return o;
}

/// Drops warnings below the log level (`error`/`off` hide warnings).
void filterWarnings(const GlobalOptions& g, support::DiagnosticEngine& diags) {
  if (g.logLevel != "error" && g.logLevel != "off") return;
  std::vector<support::Diagnostic> keep;
  for (const auto& d : diags.diagnostics())
    if (d.severity == support::Severity::Error) keep.push_back(d);
  diags.clear();
  for (auto& d : keep) {
    auto& n = diags.report(d.severity, d.code, d.loc, d.message);
    n.notes = d.notes;
    n.suggestion = d.suggestion;
  }
}

struct CheckArgs {
  std::vector<std::string> paths;
  bool verifyDiagnostics = false;
  bool splitInputFile = false;
  bool syntaxOnly = false;
};

/// Prints the diagnostics collected so far to stderr and clears them.
void flushDiagnostics(const GlobalOptions& g, support::DiagnosticEngine& diags) {
  filterWarnings(g, diags);
  std::string text = g.errorFormat == "json" ? diags.renderAllJson() : diags.renderAllText();
  std::fputs(text.c_str(), stderr);
  diags.clear();
}

int runInspect(const GlobalOptions& g, const InspectArgs& a) {
  if (!a.tokens && !a.ast && !a.gir && !a.dot && !a.mlir) {
    std::fputs("camel inspect: choose what to print: --tokens, --ast, --gir, --dot or --mlir\n", stderr);
    return kExitUsage;
  }
  if (a.gir || a.dot || a.mlir) {
    support::DiagnosticEngine diags;
    CompileOptions opts = compileOptions(g);
    opts.requireMain = false;
    CompiledProgram prog;
    bool ok = compileProgram(a.file, opts, diags, prog);
    if (ok && !a.passes.empty()) {
      passes::PassManager pm(diags);
      ok = pm.addPipeline(a.passes) && pm.run(*prog.module);
    }
    if (ok) ok = ir::verifyModule(*prog.module, diags);
    if (ok && a.gir) std::fputs(ir::printModule(*prog.module).c_str(), stdout);
    if (ok && a.dot) std::fputs(ir::printDot(*prog.module).c_str(), stdout);
    if (ok && a.mlir) {
      std::string mlir, error;
      if (tool::mlirOfModule(*prog.module, gArgv0, mlir, error)) {
        std::fputs(mlir.c_str(), stdout);
      } else {
        std::fflush(stdout);
        std::fputs(("camel inspect --mlir: " + error + "\n").c_str(), stderr);
        ok = false;
      }
    }
    std::fflush(stdout);
    flushDiagnostics(g, diags);
    return ok ? kExitOk : kExitDiagnostics;
  }
  support::DiagnosticEngine diags;
  const std::string* file = loadSourceFile(a.file, diags);
  if (!file) {
    flushDiagnostics(g, diags);
    return kExitDiagnostics;
  }
  std::vector<Token> tokens = lex(diags.sourceManager().bufferText(file), file, diags);
  if (a.tokens) std::fputs(dumpTokens(tokens).c_str(), stdout);
  if (a.ast) {
    ASTContext ctx;
    Module* m = parseModule(tokens, file, ctx, diags);
    std::fputs(dumpAST(m).c_str(), stdout);
  }
  std::fflush(stdout);
  bool failed = diags.hasErrors();
  flushDiagnostics(g, diags);
  return failed ? kExitDiagnostics : kExitOk;
}


/// CPU time of the whole process so far (all threads).
double processCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

/// Exit status from main's result (spec 11.9).
int exitStatusOf(const ir::Datum& d) {
  switch (d.kind()) {
    case ir::DKind::Int: return int(d.asInt() & 0xff);
    case ir::DKind::Bool: return d.asBool() ? 1 : 0;
    default: return 0;
  }
}

// Note [SIGINT flushes output]: program output goes through stdio, fully
// buffered when stdout is a pipe or a file, and the default SIGINT action ends
// the process without flushing it. So SIGINT is blocked in every thread (those
// started later inherit the mask) and one thread waits for it: it flushes
// stdout and stderr (stdio's own locks order this after a write in progress),
// keeping stdout locked, then restores the default action and re-raises, so
// the process still ends by the signal (status 130 in a shell). An ignored
// SIGINT stays ignored.
void flushOutputOnInterrupt() {
  struct sigaction old {};
  if (sigaction(SIGINT, nullptr, &old) != 0 || old.sa_handler == SIG_IGN) return;
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  if (pthread_sigmask(SIG_BLOCK, &set, nullptr) != 0) return;
  std::thread([set] {
    int sig = 0;
    if (sigwait(&set, &sig) != 0) return;
    // Holding stdout's lock until the end: nothing is written after the flush.
    flockfile(stdout);
    std::fflush(stdout);
    std::fflush(stderr);
    std::signal(SIGINT, SIG_DFL);
    pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
    ::kill(::getpid(), SIGINT);
  }).detach();
}

int runProgram(const GlobalOptions& g, const RunArgs& a) {
  flushOutputOnInterrupt();
  using Clock = std::chrono::steady_clock;
  auto seconds = [](Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
  };
  // Executors named on the command line load first (their modules and schemes
  // are then known to the front end); the others load when the program needs them.
  for (const std::string& name : a.executors) {
    std::string error;
    if (!ExecutorRegistry::get().load(name, error)) {
      std::fputs(("camel run: --executors: " + error + "\n").c_str(), stderr);
      return kExitUsage;
    }
  }
  support::DiagnosticEngine diags;
  CompiledProgram prog;
  bool ok = compileProgram(a.file, compileOptions(g), diags, prog);
  double passSeconds = 0;
  if (ok && !ir::verifyModule(*prog.module, diags)) {
    const camel::DiagInfo &info = camel::diagInfo(camel::Diag::LoweredGirInvalid);
    diags.error(info.code, {}, info.message);
    ok = false;
  }
  runtime::RuntimeOptions runOptions;
  if (a.scheduler == "par") runOptions.scheduler = runtime::Scheduler::Parallel;
  runOptions.threads = a.threads;
  if (ok && !a.reducers.empty()) {
    auto t0 = Clock::now();
    tool::PipelineState state;
    state.module = std::move(prog.module);
    state.entry = prog.mainGraph;
    tool::PipelineOptions po;
    po.programFile = a.file;
    po.compile = compileOptions(g);
    po.runtime = runOptions;
    ok = !prog.mainGraph.empty() && tool::runReducers(a.reducers, state, po, diags);
    passSeconds = seconds(t0);
    if (ok && state.executed) {
      flushDiagnostics(g, diags);  // warnings (pointless reducers)
      return state.status;
    }
    if (ok) {
      prog.module = std::move(state.module);
      prog.mainGraph = state.entry;
      const ir::Graph* entry = prog.module->lookup(prog.mainGraph);
      prog.mainTakesToken = entry && entry->numParams() > 0 && entry->param(0)->type().isToken();
    }
  } else if (ok && !a.passes.empty() && a.passes != "none") {
    auto t0 = Clock::now();
    passes::PassManager pm(diags);
    ok = pm.addPipeline(a.passes) && pm.run(*prog.module) && ir::verifyModule(*prog.module, diags);
    passSeconds = seconds(t0);
  }
  // --backend: the executor that provides the backend (loaded now, not before:
  // `camel run` alone maps no MLIR) compiles what it can and rewrites the rest
  // of the module to call it.
  double backendSeconds = 0;
  if (ok && !prog.mainGraph.empty() && !a.backend.empty()) {
    auto t0 = Clock::now();
    ExecutorRegistry& reg = ExecutorRegistry::get();
    std::string provider = reg.providerOfBackend(a.backend), error;
    if (provider.empty()) {
      std::fputs(("camel run: unknown backend '" + a.backend + "' (known: xpu)\n").c_str(), stderr);
      return kExitUsage;
    }
    if (!reg.load(provider, error)) {
      std::fputs(("camel run: --backend=" + a.backend + ": " + error + "\n").c_str(), stderr);
      return kExitDiagnostics;
    }
    const GraphCompiler* compile = reg.graphCompiler(a.backend);
    if (!compile) {
      std::fputs(("camel run: executor '" + provider + "' does not compile for backend '" + a.backend + "'\n").c_str(),
                 stderr);
      return kExitDiagnostics;
    }
    ok = (*compile)(*prog.module, prog.mainGraph, diags);
    backendSeconds = seconds(t0);
  }
  if (!ok || prog.mainGraph.empty() || !prog.module) {
    flushDiagnostics(g, diags);
    return kExitDiagnostics;
  }
  flushDiagnostics(g, diags);  // warnings
  int status = 0;
  double runSeconds = 0;
  double runCpuSeconds = 0;  ///< process CPU time of the run stage (steadier than wall time under load)
  uint64_t parallelGroups = 0;
  // Results never depend on the scheduler; auto only avoids starting threads
  // for programs that have nothing to run concurrently.
  bool parallel = a.scheduler == "par" ||
                  (a.scheduler == "auto" && runtime::hasParallelism(*prog.module, prog.mainGraph));
  std::string schedulerName = std::string(parallel ? "par" : "seq") + (a.scheduler == "auto" ? " (auto)" : "");
  if (parallel) runOptions.scheduler = runtime::Scheduler::Parallel;
  for (int i = 0; i < std::max(1, a.repeat); ++i) {
    auto t0 = Clock::now();
    double cpu0 = processCpuSeconds();
    runtime::Runtime rt(diags, *prog.module, runOptions);
    std::vector<ir::Datum> args, results;
    if (prog.mainTakesToken) args.push_back(ir::Datum::token());
    bool ran = rt.call(prog.mainGraph, args, results);
    std::fflush(stdout);
    parallelGroups += rt.stats().parallelGroups;
    runSeconds += seconds(t0);
    runCpuSeconds += processCpuSeconds() - cpu0;
    int exitCode = 0;
    if (ExitRequest::take(exitCode)) {
      diags.clear();
      status = exitCode;
      break;
    }
    if (!ran) {
      flushDiagnostics(g, diags);
      return kExitDiagnostics;
    }
    size_t v = prog.mainTakesToken ? 1 : 0;
    status = results.size() > v ? exitStatusOf(results[v]) : 0;
  }
  if (!a.exportDir.empty()) {
    tool::CamelExport e;
    e.dir = a.exportDir;
    e.sourceFile = a.file;
    e.argv0 = gArgv0;
    e.module = prog.module.get();
    e.passes = a.passes;
    e.parseSeconds = prog.parseSeconds;
    e.semaSeconds = prog.semaSeconds;
    e.lowerSeconds = prog.lowerSeconds;
    e.passSeconds = passSeconds;
    e.runSeconds = runSeconds;
    e.exitStatus = status;
    std::vector<std::string> notes;
    std::string error;
    if (!tool::exportProgram(e, notes, error)) {
      std::fputs(("camel run --export: " + error + "\n").c_str(), stderr);
      return kExitDiagnostics;
    }
  }
  if (a.profile)
    std::fputs(fmt::format("camel profile: parse+sema {:.3f} ms, lower {:.3f} ms, passes {:.3f} ms, {}"
                           "run {:.3f} ms ({} run{}); scheduler {}, {} parallel group{}; run cpu {:.3f} ms\n",
                           prog.semaSeconds * 1e3, prog.lowerSeconds * 1e3, passSeconds * 1e3,
                           a.backend.empty() ? std::string()
                                             : fmt::format("backend {} {:.3f} ms, ", a.backend, backendSeconds * 1e3),
                           runSeconds * 1e3, std::max(1, a.repeat), a.repeat > 1 ? "s" : "",
                           schedulerName, parallelGroups, parallelGroups == 1 ? "" : "s", runCpuSeconds * 1e3)
                   .c_str(),
               stderr);
  return status;
}

/// Runs the front end on one file (or each of its chunks). Returns whether it
/// failed: errors, or with --verify-diagnostics unmet expectations.
bool checkFile(const GlobalOptions& g, const CheckArgs& a, const std::string& path,
               size_t& errors) {
  support::DiagnosticEngine diags;
  const std::string* file = loadSourceFile(path, diags);
  if (!file) {
    errors += diags.errorCount();
    flushDiagnostics(g, diags);
    return true;
  }
  std::string whole(diags.sourceManager().bufferText(file));
  std::vector<std::string> chunks =
      a.splitInputFile ? support::splitInputFile(whole) : std::vector<std::string>{whole};
  bool failed = false;
  for (std::string& chunk : chunks) {
    file = diags.sourceManager().addBuffer(path, chunk);
    if (a.syntaxOnly || a.splitInputFile) {
      ASTContext ctx;
      parseModule(lex(diags.sourceManager().bufferText(file), file, diags), file, ctx, diags);
    }
    if (!a.syntaxOnly) {
      // Semantic analysis and lowering (the file is re-read from the chunk text).
      CompileOptions opts = compileOptions(g);
      opts.requireMain = false;
      CompiledProgram prog;
      if (a.splitInputFile) {
        if (!diags.hasErrors()) {
          std::string tmp = (std::filesystem::temp_directory_path() /
                             ("camel-check-" + std::to_string(::getpid()) + ".cml")).string();
          if (FILE* f = std::fopen(tmp.c_str(), "wb")) {
            std::fwrite(chunk.data(), 1, chunk.size(), f);
            std::fclose(f);
            support::DiagnosticEngine inner;
            compileProgram(tmp, opts, inner, prog);
            for (const auto& d : inner.diagnostics()) {
              // Lexing and parsing diagnostics were reported by the parse above.
              if (d.code.size() > 1 && d.code[1] == '1') continue;
              auto fix = [&](support::SourceLoc l) {
                if (l.file && *l.file == tmp) l.file = file;
                return l;
              };
              auto& n = diags.report(d.severity, d.code, fix(d.loc), d.message);
              n.suggestion = d.suggestion;
              for (auto nt : d.notes) {
                nt.loc = fix(nt.loc);
                n.notes.push_back(nt);
              }
            }
            std::remove(tmp.c_str());
          }
        }
      } else {
        compileProgram(path, opts, diags, prog);
      }
    }
    if (a.verifyDiagnostics) {
      std::string problems = support::verifyDiagnostics(path, chunk, diags.diagnostics());
      std::fputs(problems.c_str(), stderr);
      failed |= !problems.empty();
      diags.clear();
      continue;
    }
    failed |= diags.hasErrors();
    errors += diags.errorCount();
    flushDiagnostics(g, diags);
  }
  return failed;
}

int runCheck(const GlobalOptions& g, const CheckArgs& a) {
  std::vector<std::string> files;
  for (const std::string& p : a.paths) {
    std::error_code ec;
    if (std::filesystem::is_directory(p, ec)) {
      std::vector<std::string> found = findCamelFiles(p);
      files.insert(files.end(), found.begin(), found.end());
    } else {
      files.push_back(p);
    }
  }
  size_t errors = 0, failedFiles = 0;
  for (const std::string& f : files) failedFiles += checkFile(g, a, f, errors);
  if (failedFiles > 0 && errors > 0 && g.errorFormat == "text")
    std::fputs(fmt::format("camel check: {} error{} in {} of {} file{}\n", errors,
                           errors == 1 ? "" : "s", failedFiles, files.size(),
                           files.size() == 1 ? "" : "s")
                   .c_str(),
               stderr);
  return failedFiles > 0 ? kExitDiagnostics : kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  gArgv0 = argc > 0 ? argv[0] : "camel";
  registerGirModule();
  CLI::App app{"camel: compiler and runtime of the Camel language (xacc)", "camel"};
  app.set_version_flag("-V,--version", std::string("camel (xacc) ") + XACC_VERSION);
  app.fallthrough();  // global options may follow the subcommand
  app.require_subcommand(1);

  GlobalOptions global;
  app.add_option("-E,--error-format", global.errorFormat, "diagnostic format: text or json")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  app.add_option("-I,--include", global.includeDirs, "extra module search directory (repeatable)")
      ->allow_extra_args(false);
  app.add_option("-L,--stdlib", global.stdlibDir, "standard library directory");
  app.add_option("-l,--log-level", global.logLevel, "debug, info, warn, error or off")
      ->check(CLI::IsMember({"debug", "info", "warn", "error", "off"}))
      ->capture_default_str();

  RunArgs runArgs;
  CLI::App* run = app.add_subcommand("run", "compile and run a Camel program (the default command)");
  run->add_option("file", runArgs.file,
                  "the .cml file (default: the entry of ./cmlconfig.json or the nearest one above); "
                  "`FILE '->' R1 '->' R2` runs graph reducers R1, R2 first");
  run->add_option("args", runArgs.args, "arguments for the program");
  run->add_option("--passes", runArgs.passes,
                  "GIR pass pipeline ('none' for no passes), or graph reducers (std::opt, std::onnx, "
                  "opt.cml, ...: see docs/camel-reducers.md)")
      ->capture_default_str();
  run->add_flag("-P,--profile", runArgs.profile, "print the time of each stage to stderr");
  run->add_option("--export", runArgs.exportDir,
                  "write the program's GIR, DOT/SVG, MLIR, stage times and index.html to DIR");
  run->add_option("-r,--repeat", runArgs.repeat, "run the program N times")->check(CLI::PositiveNumber);
  run->add_option("-S,--scheduler", runArgs.scheduler,
                  "seq: node by node in dependency order; par: independent calls, and the "
                  "element functions of map/foreach/filter/para.unordered_* on large inputs, run "
                  "concurrently on a oneTBB thread pool; auto: par when the program has such "
                  "parallelism to use (a group of independent calls or a higher-order builtin "
                  "reachable from main), else seq. Every scheduler gives the same output")
      ->check(CLI::IsMember({"seq", "par", "auto"}))
      ->capture_default_str();
  run->add_option("-t,-j,--threads", runArgs.threads,
                  "threads of the parallel scheduler (default: the hardware concurrency)")
      ->check(CLI::Range(1u, 4096u));

  InspectArgs inspectArgs;
  run->add_option("--executors", runArgs.executors,
                  "executors to load before compiling, comma-separated (aten, dll, python, ...); "
                  "others load when the program needs them")
      ->delimiter(',')
      ->allow_extra_args(false);  // one (comma-separated) value per flag: the program file is not an executor
  run->add_option("--backend", runArgs.backend,
                  "compile the program for a backend before it runs. xpu: the MLIR executor (a plugin, "
                  "loaded only then) compiles functions over int/float/bool, recursion and branches "
                  "included, to native code; everything else runs on the runtime, and native code that "
                  "meets a runtime error reruns there. Compiled code is cached on disk "
                  "($XACC_CACHE_DIR, default ~/.cache/xacc); XACC_LOG=mlir reports compiles and cache hits");
  CLI::App* inspect = app.add_subcommand("inspect", "print intermediate forms of a Camel file");
  inspect->add_flag("--tokens,--tok", inspectArgs.tokens, "print the token stream");
  inspect->add_flag("--ast", inspectArgs.ast, "print the abstract syntax tree");
  inspect->add_flag("--gir", inspectArgs.gir, "print the lowered graph IR");
  inspect->add_flag("--dot", inspectArgs.dot, "print the lowered graph IR as Graphviz DOT");
  inspect->add_flag("--mlir", inspectArgs.mlir, "print each graph's MLIR (through the xacc-mlir tool)");
  inspect->add_option("--passes", inspectArgs.passes, "run these GIR passes before printing");
  inspect->add_option("file", inspectArgs.file, "the .cml file")->required();

  CheckArgs checkArgs;
  CLI::App* check = app.add_subcommand(
      "check", "check .cml files: parsing and semantic analysis (directories are searched recursively)");
  check->add_flag("-s,--syntax-only", checkArgs.syntaxOnly, "stop after parsing");
  check->add_option("paths", checkArgs.paths, "files or directories")->required();
  check->add_flag("--verify-diagnostics", checkArgs.verifyDiagnostics,
                  "check '// expected-error {{...}}' comments against the diagnostics");
  check->add_flag("--split-input-file", checkArgs.splitInputFile,
                  "check the chunks separated by '// -----' lines separately");

  // `camel FILE ...` means `camel run FILE ...`: insert `run` before the first
  // positional argument when it is not a subcommand.
  std::vector<std::string> argvs(argv + 1, argv + argc);
  std::vector<tool::Reducer> chain;
  {
    std::string error;
    if (!tool::extractReducerChain(argvs, support::SourceManager::global(), chain, error)) {
      // A located diagnostic is already rendered; a chain error is one line.
      bool rendered = error.rfind("<command line>", 0) == 0;
      std::fputs(((rendered ? "" : "camel: error: ") + error + "\n").c_str(), stderr);
      return kExitUsage;
    }
  }
  // Bare `camel` in a project runs it.
  if (argvs.empty() && !tool::findConfig().empty()) argvs.push_back("run");
  for (size_t i = 0; i < argvs.size(); ++i) {
    const std::string& s = argvs[i];
    if (s == "run" || s == "check" || s == "inspect") break;
    if (s == "-E" || s == "--error-format" || s == "-I" || s == "--include" || s == "-L" ||
        s == "--stdlib" || s == "-l" || s == "--log-level") {
      ++i;
      continue;
    }
    if (!s.empty() && s[0] != '-') {
      std::error_code ec;
      bool looksLikeProgram = (s.size() > 4 && s.compare(s.size() - 4, 4, ".cml") == 0) ||
                              std::filesystem::is_regular_file(s, ec);
      if (looksLikeProgram) argvs.insert(argvs.begin() + long(i), "run");
      break;
    }
  }
  std::reverse(argvs.begin(), argvs.end());
  const std::vector<std::string> argvsCopy = argvs;
  try {
    app.parse(argvs);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? kExitOk : kExitUsage;
  }

  if (run->parsed()) {
    bool passesGiven = run->count("--passes") > 0;
    if (runArgs.file.empty()) {
      // cmlconfig.json supplies what the command line does not say.
      std::string path = tool::findConfig();
      if (path.empty()) {
        std::fputs("camel run: no program file given and no cmlconfig.json in this directory or above\n",
                   stderr);
        return kExitUsage;
      }
      support::DiagnosticEngine diags;
      tool::CamelConfig cfg;
      if (!tool::loadConfig(path, cfg, diags)) {
        flushDiagnostics(global, diags);
        return kExitDiagnostics;
      }
      runArgs.file = cfg.entry;
      if (cfg.passes) runArgs.passes = *cfg.passes;
      if (cfg.hasPipeline) runArgs.reducers = cfg.pipeline;
      if (cfg.scheduler) runArgs.scheduler = *cfg.scheduler;
      if (cfg.threads) runArgs.threads = *cfg.threads;
      if (cfg.backend) runArgs.backend = *cfg.backend;
      runArgs.executors = cfg.executors;
      if (cfg.stdlibDir) global.stdlibDir = *cfg.stdlibDir;
      global.includeDirs.insert(global.includeDirs.end(), cfg.includeDirs.begin(), cfg.includeDirs.end());
      // Flags on the command line win: parse them again over the config's values.
      std::vector<std::string> again = argvsCopy;
      app.clear();
      try {
        app.parse(again);
      } catch (const CLI::ParseError& e) {
        int code = app.exit(e);
        return code == 0 ? kExitOk : kExitUsage;
      }
      if (runArgs.file.empty()) runArgs.file = cfg.entry;
      // The config's thread count belongs to its scheduler: `--scheduler seq` drops it.
      if (run->count("--scheduler") > 0 && run->count("--threads") == 0 && runArgs.scheduler == "seq")
        runArgs.threads = 0;
      if (run->count("--passes") > 0) runArgs.reducers.clear();
    }
    if (!chain.empty()) {
      runArgs.reducers = chain;
    } else if (passesGiven && tool::passesNameReducers(runArgs.passes)) {
      support::DiagnosticEngine diags;
      std::string line = "--passes " + runArgs.passes;
      const std::string* file = support::SourceManager::global().addBuffer("<command line>", line);
      runArgs.reducers.clear();
      size_t start = 0;
      while (start <= runArgs.passes.size()) {
        size_t comma = runArgs.passes.find(',', start);
        std::string item = runArgs.passes.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        tool::Reducer r;
        std::string spec = item.rfind("std::", 0) == 0 || (item.size() > 4 && item.compare(item.size() - 4, 4, ".cml") == 0)
                               ? item
                               : "std::" + item;  // a GIR pass in a reducer list
        support::SourceLoc loc{file, 1, uint32_t(10 + start), uint32_t(std::max<size_t>(1, item.size()))};
        if (!tool::parseReducer(spec, loc, "", r, diags)) {
          flushDiagnostics(global, diags);
          return kExitUsage;
        }
        runArgs.reducers.push_back(std::move(r));
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
    }
    if (runArgs.threads > 0 && runArgs.scheduler == "seq") {
      std::fputs("camel run: --threads needs --scheduler=par or auto\n", stderr);
      return kExitUsage;
    }
    return runProgram(global, runArgs);
  }
  if (inspect->parsed()) return runInspect(global, inspectArgs);
  if (check->parsed()) return runCheck(global, checkArgs);
  std::fputs(app.help().c_str(), stderr);
  return kExitUsage;
}
