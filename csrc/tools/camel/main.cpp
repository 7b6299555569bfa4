// The `camel` executable. Subcommands: `inspect --tokens|--ast FILE` prints
// intermediate forms, `check FILE|DIR...` runs the front end on every `.cml`
// file. Global options (`--error-format`, `--version`, `--help`) may appear
// before or after the subcommand. Exit status: 0 success, 1 diagnostics
// (including unreadable input), 2 usage errors. Diagnostics go to stderr,
// dumps to stdout. CLI11 exceptions are caught here, at the tool boundary.
//
// Adding a command: write `int runX(const GlobalOptions&, const XArgs&)`,
// register its subcommand in `main`, and dispatch on it below. `camel run`,
// `camel FILE` (the default command), `-I`, `--profile`, `--repeat` and
// `--log-level` belong with the run command once it exists.
#include <cstdio>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "xacc/camel/Frontend.h"
#include "xacc/camel/Lexer.h"
#include "xacc/camel/Token.h"

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

int runCheck(const GlobalOptions& g, const CheckArgs& a) {
  std::vector<std::string> files;
  support::DiagnosticEngine diags;
  size_t errors = 0, failedFiles = 0;
  for (const std::string& p : a.paths) {
    std::error_code ec;
    if (std::filesystem::is_directory(p, ec)) {
      std::vector<std::string> found = findCamelFiles(p);
      files.insert(files.end(), found.begin(), found.end());
    } else {
      files.push_back(p);
    }
  }
  for (const std::string& f : files) {
    ASTContext ctx;
    parseFile(f, ctx, diags);
    if (diags.hasErrors()) {
      errors += diags.errorCount();
      ++failedFiles;
    }
    flushDiagnostics(g, diags);
  }
  if (failedFiles > 0 && g.errorFormat == "text")
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
