// The `camel` executable. Subcommands: `inspect --tokens|--ast FILE` prints
// intermediate forms, `check FILE|DIR...` runs the front end on every `.cml`
// file (with `--verify-diagnostics` it checks expectation comments instead of
// printing diagnostics, see VerifyDiagnostics.h). Global options (`--error-format`, `--version`, `--help`) may appear
// before or after the subcommand. Exit status: 0 success, 1 diagnostics
// (including unreadable input), 2 usage errors. Diagnostics go to stderr,
// dumps to stdout. CLI11 exceptions are caught here, at the tool boundary.
//
// Adding a command: write `int runX(const GlobalOptions&, const XArgs&)`,
// register its subcommand in `main`, and dispatch on it below. `camel run`,
// `camel FILE` (the default command), `-I`, `--profile`, `--repeat` and
// `--log-level` belong with the run command once it exists.
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "xacc/camel/Frontend.h"
#include "xacc/camel/Lexer.h"
#include "xacc/camel/Token.h"
#include "VerifyDiagnostics.h"

#ifndef XACC_VERSION
#define XACC_VERSION "0.1.0"
#endif

namespace {

using namespace xacc;
using namespace xacc::camel;

enum ExitCode : int { kExitOk = 0, kExitDiagnostics = 1, kExitUsage = 2 };

struct GlobalOptions {
  std::string errorFormat = "text";
};

struct InspectArgs {
  bool tokens = false;
  bool ast = false;
  std::string file;
};

struct CheckArgs {
  std::vector<std::string> paths;
  bool verifyDiagnostics = false;
  bool splitInputFile = false;
};

/// Prints the diagnostics collected so far to stderr and clears them.
void flushDiagnostics(const GlobalOptions& g, support::DiagnosticEngine& diags) {
  std::string text = g.errorFormat == "json" ? diags.renderAllJson() : diags.renderAllText();
  std::fputs(text.c_str(), stderr);
  diags.clear();
}

int runInspect(const GlobalOptions& g, const InspectArgs& a) {
  if (!a.tokens && !a.ast) {
    std::fputs("camel inspect: choose what to print: --tokens or --ast\n", stderr);
    return kExitUsage;
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
      a.splitInputFile ? tool::splitInputFile(whole) : std::vector<std::string>{whole};
  bool failed = false;
  for (std::string& chunk : chunks) {
    file = diags.sourceManager().addBuffer(path, chunk);
    ASTContext ctx;
    parseModule(lex(diags.sourceManager().bufferText(file), file, diags), file, ctx, diags);
    if (a.verifyDiagnostics) {
      std::string problems = tool::verifyDiagnostics(path, chunk, diags.diagnostics());
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
  CLI::App app{"camel: compiler and runtime of the Camel language (xacc)", "camel"};
  app.set_version_flag("-V,--version", std::string("camel (xacc) ") + XACC_VERSION);
  app.fallthrough();  // global options may follow the subcommand
  app.require_subcommand(1);

  GlobalOptions global;
  app.add_option("-E,--error-format", global.errorFormat, "diagnostic format: text or json")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();

  InspectArgs inspectArgs;
  CLI::App* inspect = app.add_subcommand("inspect", "print intermediate forms of a Camel file");
  inspect->add_flag("--tokens,--tok", inspectArgs.tokens, "print the token stream");
  inspect->add_flag("--ast", inspectArgs.ast, "print the abstract syntax tree");
  inspect->add_option("file", inspectArgs.file, "the .cml file")->required();

  CheckArgs checkArgs;
  CLI::App* check = app.add_subcommand(
      "check", "check .cml files (directories are searched recursively); parse-only for now");
  check->add_option("paths", checkArgs.paths, "files or directories")->required();
  check->add_flag("--verify-diagnostics", checkArgs.verifyDiagnostics,
                  "check '// expected-error {{...}}' comments against the diagnostics");
  check->add_flag("--split-input-file", checkArgs.splitInputFile,
                  "check the chunks separated by '// -----' lines separately");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? kExitOk : kExitUsage;
  }

  if (inspect->parsed()) return runInspect(global, inspectArgs);
  if (check->parsed()) return runCheck(global, checkArgs);
  std::fputs(app.help().c_str(), stderr);
  return kExitUsage;
}
