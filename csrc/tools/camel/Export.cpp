// The Camel export helper. See Export.h. Every external tool runs as a child
// process with its output captured; a missing tool becomes a note in the
// index, never a failure of the run.
#include "Export.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include <fmt/format.h>

#include "xacc/ir/Printer.h"

namespace xacc::camel::tool {

namespace fs = std::filesystem;

namespace {

std::string shellQuote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

/// Runs `cmd` through the shell; stdout (and stderr when `merge`) into `out`.
int runCommand(const std::string& cmd, std::string& out) {
  out.clear();
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return -1;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  int status = ::pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/// A tool next to this executable, else on PATH; empty when absent.
std::string findTool(const std::string& name, const std::string& argv0) {
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) self = fs::absolute(argv0, ec);
  fs::path cand = self.parent_path() / name;
  if (fs::exists(cand, ec)) return cand.string();
  if (const char* path = std::getenv("PATH")) {
    std::stringstream ss(path);
    std::string dir;
    while (std::getline(ss, dir, ':'))
      if (!dir.empty() && ::access((fs::path(dir) / name).c_str(), X_OK) == 0) return (fs::path(dir) / name).string();
  }
  return {};
}

bool writeFile(const fs::path& p, const std::string& text, std::string& error) {
  std::ofstream f(p, std::ios::binary);
  f << text;
  if (!f) {
    error = "cannot write '" + p.string() + "'";
    return false;
  }
  return true;
}

std::string htmlEscape(const std::string& s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '&': o += "&amp;"; break;
      case '"': o += "&quot;"; break;
      default: o += c;
    }
  }
  return o;
}

fs::path tempGir(const ir::Module& m) {
  fs::path p = fs::temp_directory_path() / fmt::format("camel-export-{}.gir", ::getpid());
  std::ofstream(p, std::ios::binary) << ir::printModule(m);
  return p;
}

}  // namespace

bool mlirOfModule(const ir::Module& m, const std::string& argv0, std::string& out, std::string& error) {
  std::string tool = findTool("xacc-mlir", argv0);
  if (tool.empty()) {
    error = "xacc-mlir is not built (the MLIR backend is optional): no MLIR view";
    return false;
  }
  fs::path gir = tempGir(m);
  out.clear();
  for (const auto& g : m.graphs()) {
    std::string plan, mlir;
    std::string base = shellQuote(tool) + " " + shellQuote(gir.string()) + " --graph " + shellQuote(g->name());
    int rc = runCommand(base + " --emit=plan 2>&1", plan);
    out += "// ----- graph @" + g->name() + "\n";
    std::stringstream ps(plan);
    for (std::string line; std::getline(ps, line);) out += "// " + line + "\n";
    if (rc != 0) continue;
    if (runCommand(base + " --emit=mlir 2>&1", mlir) == 0 && !mlir.empty()) out += mlir;
    else if (mlir.empty()) out += "// (no region of this graph lowers to MLIR: every node runs on the fallback)\n";
    else out += "// xacc-mlir failed:\n// " + mlir + "\n";
  }
  std::error_code ec;
  fs::remove(gir, ec);
  return true;
}

bool exportProgram(const CamelExport& e, std::vector<std::string>& notes, std::string& error) {
  std::error_code ec;
  fs::path dir(e.dir);
  fs::create_directories(dir, ec);
  if (ec) {
    error = "cannot create '" + e.dir + "': " + ec.message();
    return false;
  }
  const ir::Module& m = *e.module;
  std::string gir = ir::printModule(m), dot = ir::printDot(m);
  if (!writeFile(dir / "program.gir", gir, error) || !writeFile(dir / "program.dot", dot, error)) return false;
  fs::path src = fs::path(e.sourceFile).filename();
  fs::copy_file(e.sourceFile, dir / src, fs::copy_options::overwrite_existing, ec);
  if (ec) notes.push_back("source not copied: " + ec.message());

  std::string svg;
  std::string dotTool = findTool("dot", e.argv0);
  if (dotTool.empty()) {
    notes.push_back("svg: graphviz `dot` is not installed");
  } else {
    std::string out;
    int rc = runCommand(shellQuote(dotTool) + " -Tsvg " + shellQuote((dir / "program.dot").string()) + " -o " +
                            shellQuote((dir / "program.svg").string()) + " 2>&1",
                        out);
    if (rc == 0) {
      std::ifstream f(dir / "program.svg");
      std::stringstream ss;
      ss << f.rdbuf();
      svg = ss.str();
      size_t at = svg.find("<svg");
      if (at != std::string::npos) svg = svg.substr(at);
    } else {
      notes.push_back("svg: dot failed: " + out);
    }
  }
  std::string mlir, mlirError;
  if (mlirOfModule(m, e.argv0, mlir, mlirError)) {
    if (!writeFile(dir / "program.mlir", mlir, error)) return false;
  } else {
    notes.push_back("mlir: " + mlirError);
  }
  std::string times = fmt::format(
      "{{\n  \"parse_s\": {},\n  \"sema_s\": {},\n  \"lower_s\": {},\n  \"passes_s\": {},\n  \"run_s\": {},\n"
      "  \"passes\": \"{}\",\n  \"exit_status\": {}\n}}\n",
      e.parseSeconds, e.semaSeconds, e.lowerSeconds, e.passSeconds, e.runSeconds, e.passes, e.exitStatus);
  if (!writeFile(dir / "times.json", times, error)) return false;

  std::string html = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>camel export of " +
                     htmlEscape(src.string()) + "</title></head><body>\n<h1>camel export of " +
                     htmlEscape(src.string()) + "</h1>\n";
  html += fmt::format("<p id=\"summary\">{} graph(s), {} node(s), exit status {}; run {:.3f} ms. "
                      "<a href=\"{}\">source</a> <a href=\"program.gir\">GIR</a> <a href=\"program.dot\">DOT</a>{}{} "
                      "<a href=\"times.json\">times</a></p>\n",
                      m.graphs().size(), m.totalNodes(), e.exitStatus, e.runSeconds * 1e3, htmlEscape(src.string()),
                      svg.empty() ? "" : " <a href=\"program.svg\">SVG</a>",
                      mlir.empty() ? "" : " <a href=\"program.mlir\">MLIR</a>");
  html += "<h2 id=\"graphs\">Graphs</h2>\n<table><tr><th>graph</th><th>nodes</th></tr>\n";
  for (const auto& g : m.graphs())
    html += fmt::format("<tr><td>@{}</td><td>{}</td></tr>\n", htmlEscape(g->name()), g->numNodes());
  html += "</table>\n";
  for (const std::string& n : notes) html += "<p class=\"note\">" + htmlEscape(n) + "</p>\n";
  if (!svg.empty()) html += "<div class=\"svg\">" + svg + "</div>\n";
  html += "</body></html>\n";
  return writeFile(dir / "index.html", html, error);
}

}  // namespace xacc::camel::tool
