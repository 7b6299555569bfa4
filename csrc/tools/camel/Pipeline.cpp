// The reducer pipeline of `camel run` (Pipeline.h).
#include "Pipeline.h"

#include <cstdio>
#include <filesystem>

#include <fmt/format.h>

#include "xacc/camel/CamelDiag.h"
#include "xacc/camel/Stdlib.h"
#include "xacc/ir/Parser.h"
#include "xacc/ir/Printer.h"
#include "xacc/ir/Verifier.h"
#include "xacc/onnx/OnnxExport.h"
#include "xacc/passes/PassManager.h"

namespace xacc::camel::tool {

namespace fs = std::filesystem;

namespace {

const char* const kRunAliases[] = {"std::run", "std::default", "std::nvm", "std::seq", "std::par"};

bool isRunReducer(const std::string& name) {
  for (const char* a : kRunAliases)
    if (name == a) return true;
  return false;
}

bool isGirPass(std::string_view name) {
  for (const auto& p : passes::passRegistry())
    if (p.name == name) return true;
  return false;
}

std::string knownBuiltins() {
  std::string s = "std::opt, std::gir, std::dot, std::onnx[=FILE], std::run";
  for (const auto& p : passes::passRegistry()) s += ", std::" + p.name;
  return s;
}

/// "reducer 2 (opt.cml)" for messages.
std::string describe(const Reducer& r, size_t index) {
  return fmt::format("reducer {} ({}{})", index + 1, r.name, r.arg.empty() ? "" : "=" + r.arg);
}

bool runUserReducer(const Reducer& r, size_t index, PipelineState& state, const PipelineOptions& opts,
                    support::DiagnosticEngine& diags) {
  camel::CompileOptions co = opts.compile;
  co.requireMain = false;
  camel::CompiledProgram rp;
  // A reducer's main is run by the pipeline, never expanded at compile time, so
  // W2310 (a macro calling a non-macro such as gir::run) does not apply to it.
  support::DiagnosticEngine scratch(&diags.sourceManager());
  bool compiled = camel::compileProgram(r.name, co, scratch, rp);
  for (const auto& d : scratch.diagnostics()) {
    if (d.code == camel::diagInfo(camel::Diag::MacroCallsNonMacro).code)
      continue;
    auto& x = diags.report(d.severity, d.code, d.loc, d.message);
    x.notes = d.notes;
    x.suggestion = d.suggestion;
  }
  if (!compiled) return false;
  const ir::Graph* main = rp.mainGraph.empty() ? nullptr : rp.module->lookup(rp.mainGraph);
  size_t tokens = main && main->numParams() > 0 && main->param(0)->type().isToken() ? 1 : 0;
  bool shapeOk = main && rp.mainIsMacro && main->numParams() == tokens + 1 &&
                 main->param(tokens)->type() == ir::Type::string() &&
                 main->resultTypes().size() == tokens + 1 &&
                 main->resultTypes()[tokens] == ir::Type::string();
  if (!shapeOk) {
    diags.error("", r.loc,
                fmt::format("{}: a graph reducer must declare `macro func main(g: string): string`",
                            describe(r, index)));
    return false;
  }
  std::vector<ir::Datum> args, results;
  if (tokens) args.push_back(ir::Datum::token());
  args.push_back(ir::Datum::string(programText(*state.module, state.entry)));
  runtime::Runtime rt(diags, *rp.module, opts.runtime);
  bool ok = rt.call(rp.mainGraph, args, results);
  std::fflush(stdout);
  int exitCode = 0;
  if (camel::ExitRequest::take(exitCode)) {
    diags.error("", r.loc, fmt::format("{} called exit({}) instead of returning a graph", describe(r, index),
                                       exitCode));
    return false;
  }
  if (!ok) {
    diags.error("", r.loc, fmt::format("{} failed", describe(r, index)));
    return false;
  }
  const std::string& text = results.at(tokens).asStr();
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) {
    state.module.reset();
    state.entry.clear();
    state.executed = true;
    state.status = camel::girLastRunStatus();
    return true;
  }
  support::DiagnosticEngine inner(&diags.sourceManager());
  std::unique_ptr<ir::Module> m = ir::parseModule(text, "<graph returned by " + r.name + ">", inner);
  if (m && !ir::verifyModule(*m, inner)) m.reset();
  if (!m || m->graphs().empty()) {
    auto& d = diags.error("", r.loc, fmt::format("{} returned a malformed graph", describe(r, index)));
    for (const auto& e : inner.diagnostics()) d.notes.push_back(e);
    return false;
  }
  state.entry = m->graphs().front()->name();
  state.module = std::move(m);
  return true;
}

bool runBuiltin(const Reducer& r, size_t index, PipelineState& state, const PipelineOptions& opts,
                support::DiagnosticEngine& diags) {
  ir::Module& m = *state.module;
  if (r.name == "std::opt" || (r.name.rfind("std::", 0) == 0 && isGirPass(r.name.substr(5)))) {
    passes::PassManager pm(diags);
    std::string pipeline = r.name == "std::opt" ? passes::kStandardPipeline : r.name.substr(5);
    return pm.addPipeline(pipeline) && pm.run(m) && ir::verifyModule(m, diags);
  }
  if (r.name == "std::gir") {
    std::fputs(programText(m, state.entry).c_str(), stdout);
    std::fflush(stdout);
    return true;
  }
  if (r.name == "std::dot") {
    std::fputs(ir::printDot(m).c_str(), stdout);
    std::fflush(stdout);
    return true;
  }
  if (r.name == "std::onnx") {
    std::string path = r.arg;
    if (path.empty()) path = fs::path(opts.programFile).stem().string() + ".onnx";
    const ir::Graph* entry = m.lookup(state.entry);
    onnx::ExportSummary summary;
    if (!entry || !onnx::writeOnnxFile(*entry, path, {}, diags, &summary)) {
      diags.error("", r.loc, fmt::format("{}: no model written", describe(r, index)));
      return false;
    }
    std::string ins, outs;
    for (const auto& s : summary.inputs) ins += (ins.empty() ? "" : ", ") + s;
    for (const auto& s : summary.outputs) outs += (outs.empty() ? "" : ", ") + s;
    std::fputs(fmt::format("camel: std::onnx wrote {} ({} nodes; inputs: {}; outputs: {})\n", path,
                           summary.nodes, ins.empty() ? "none" : ins, outs)
                   .c_str(),
               stderr);
    return true;
  }
  if (isRunReducer(r.name)) {
    runtime::RuntimeOptions ro = opts.runtime;
    if (r.name == "std::seq") ro.scheduler = runtime::Scheduler::Sequential;
    if (r.name == "std::par") ro.scheduler = runtime::Scheduler::Parallel;
    const ir::Graph* entry = m.lookup(state.entry);
    std::vector<ir::Datum> args, results;
    for (size_t i = 0; entry && i < entry->numParams(); ++i) args.push_back(ir::Datum::token());
    runtime::Runtime rt(diags, m, ro);
    bool ok = entry && rt.call(state.entry, args, results);
    std::fflush(stdout);
    int status = 0;
    if (camel::ExitRequest::take(status)) {
      diags.clear();
      ok = true;
    } else if (ok) {
      for (const ir::Datum& d : results) {
        if (d.kind() == ir::DKind::Int) status = int(d.asInt() & 0xff);
        else if (d.kind() == ir::DKind::Bool) status = d.asBool() ? 1 : 0;
      }
    }
    if (!ok) return false;
    state.module.reset();
    state.entry.clear();
    state.executed = true;
    state.status = status;
    return true;
  }
  diags.error("", r.loc, "unknown reducer '" + r.name + "' (built-ins: " + knownBuiltins() + ")");
  return false;
}

}  // namespace

std::string programText(const ir::Module& m, const std::string& entry) {
  std::string out;
  if (const ir::Graph* g = m.lookup(entry)) out += ir::printGraph(*g);
  for (const auto& g : m.graphs())
    if (g->name() != entry) out += "\n" + ir::printGraph(*g);
  return out;
}

bool passesNameReducers(const std::string& passes) {
  size_t start = 0;
  while (start <= passes.size()) {
    size_t comma = passes.find(',', start);
    std::string item = passes.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (item.rfind("std::", 0) == 0 || (item.size() > 4 && item.compare(item.size() - 4, 4, ".cml") == 0))
      return true;
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return false;
}

bool parseReducer(const std::string& text, support::SourceLoc loc, const std::string& baseDir, Reducer& out,
                  support::DiagnosticEngine& diags) {
  out = Reducer{};
  out.loc = loc;
  if (text.rfind("std::", 0) == 0) {
    size_t eq = text.find('=');
    out.builtin = true;
    out.name = text.substr(0, eq);
    if (eq != std::string::npos) out.arg = text.substr(eq + 1);
    bool known = out.name == "std::opt" || out.name == "std::gir" || out.name == "std::dot" ||
                 out.name == "std::onnx" || isRunReducer(out.name) || isGirPass(out.name.substr(5));
    if (!known) {
      diags.error("", loc, "unknown reducer '" + out.name + "' (built-ins: " + knownBuiltins() + ")");
      return false;
    }
    if (!out.arg.empty() && out.name != "std::onnx") {
      diags.error("", loc, "reducer '" + out.name + "' takes no argument (only std::onnx=FILE does)");
      return false;
    }
    if (out.name == "std::onnx" && !out.arg.empty() && !baseDir.empty() && fs::path(out.arg).is_relative())
      out.arg = (fs::path(baseDir) / out.arg).string();
    return true;
  }
  if (text.empty()) {
    diags.error("", loc, "empty reducer name");
    return false;
  }
  fs::path p(text);
  if (!baseDir.empty() && p.is_relative()) p = fs::path(baseDir) / p;
  std::error_code ec;
  if (!fs::is_regular_file(p, ec)) {
    diags.error("", loc,
                "reducer '" + text + "' is neither a built-in (std::...) nor a readable .cml file");
    return false;
  }
  out.name = p.string();
  return true;
}

bool extractReducerChain(std::vector<std::string>& argv, support::SourceManager& sm,
                         std::vector<Reducer>& out, std::string& error) {
  size_t k = 0;
  while (k < argv.size() && argv[k].find("->") == std::string::npos) ++k;
  if (k == argv.size()) return true;
  // The command line as one located buffer, so reducers can be pointed at.
  std::string line = "camel";
  std::vector<size_t> col(argv.size());
  for (size_t i = 0; i < argv.size(); ++i) {
    line += ' ';
    col[i] = line.size() + 1;
    line += argv[i];
  }
  const std::string* file = sm.addBuffer("<command line>", line);
  struct Item {
    bool arrow;
    std::string text;
    size_t column;
  };
  std::vector<Item> items;
  size_t first = argv[k].rfind("->", 0) == 0 ? k - 1 : k;
  if (argv[k].rfind("->", 0) == 0 && (k == 0 || argv[k - 1].empty() || argv[k - 1][0] == '-')) {
    error = "'->' needs a program file before it (camel main.cml '->' opt.cml)";
    return false;
  }
  size_t j = first;
  for (; j < argv.size(); ++j) {
    const std::string& t = argv[j];
    bool continues = j == first || (!items.empty() && items.back().arrow) || t.rfind("->", 0) == 0;
    if (!continues) break;
    size_t pos = 0;
    while (pos <= t.size()) {
      size_t arrow = t.find("->", pos);
      std::string piece = t.substr(pos, arrow == std::string::npos ? std::string::npos : arrow - pos);
      if (!piece.empty()) items.push_back({false, piece, col[j] + pos});
      if (arrow == std::string::npos) break;
      items.push_back({true, "->", col[j] + arrow});
      pos = arrow + 2;
    }
  }
  if (items.empty() || items.front().arrow) {
    error = "'->' needs a program file before it";
    return false;
  }
  for (size_t i = 1; i < items.size(); ++i) {
    if (items[i].arrow == items[i - 1].arrow) {
      error = items[i].arrow ? "two '->' in a row: a reducer is missing between them"
                             : "reducers must be separated by '->'";
      return false;
    }
  }
  if (items.back().arrow) {
    error = "'->' at the end of the command line needs a reducer after it";
    return false;
  }
  support::DiagnosticEngine diags(&sm);
  for (size_t i = 2; i < items.size(); i += 2) {
    Reducer r;
    support::SourceLoc loc{file, 1, uint32_t(items[i].column), uint32_t(items[i].text.size())};
    if (!parseReducer(items[i].text, loc, "", r, diags)) {
      error = diags.renderAllText();
      if (!error.empty() && error.back() == '\n') error.pop_back();
      return false;
    }
    out.push_back(std::move(r));
  }
  std::string programFile = items.front().text;
  argv.erase(argv.begin() + long(first), argv.begin() + long(j));
  argv.insert(argv.begin() + long(first), programFile);
  return true;
}

bool runReducers(const std::vector<Reducer>& reducers, PipelineState& state, const PipelineOptions& opts,
                 support::DiagnosticEngine& diags) {
  size_t executedBy = 0;
  for (size_t i = 0; i < reducers.size(); ++i) {
    const Reducer& r = reducers[i];
    if (state.executed) {
      diags.warning("", r.loc,
                    fmt::format("{} is pointless: {} already executed the whole program and returned "
                                "the empty graph",
                                describe(r, i), describe(reducers[executedBy], executedBy)));
      continue;
    }
    bool ok = r.builtin ? runBuiltin(r, i, state, opts, diags) : runUserReducer(r, i, state, opts, diags);
    if (!ok) return false;
    if (state.executed) executedBy = i;
  }
  return true;
}

}  // namespace xacc::camel::tool
