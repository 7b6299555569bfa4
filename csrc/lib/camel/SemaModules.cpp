// Modules and imports (spec section 12): finds the file an import names on the
// search path (the importing file's directory, `-I` directories,
// CAMEL_PACKAGES, the standard library directory), parses each module once,
// analyses imported modules before their importers, and reports cycles and
// missing modules. Standard modules of section 15 are built in (Stdlib.h): an
// import that finds no file falls back to them.
#include <cstdlib>
#include <filesystem>

#include "SemaResolve.h"
#include "xacc/camel/Executor.h"
#include "xacc/camel/Frontend.h"
#include "xacc/support/EnvNames.h"

namespace xacc::camel::sema {

namespace fs = std::filesystem;

std::string findModuleFile(const ModulePath& path, const std::string& fromDir,
                           const CompileOptions& opts, std::vector<std::string>& tried) {
  if (path.parts.empty()) return "";
  std::string rel;
  for (size_t i = 0; i + 1 < path.parts.size(); ++i) rel += path.parts[i].name + "/";
  const std::string& stem = path.parts.back().name;
  std::vector<std::string> dirs;
  if (!path.prefix.empty()) {
    fs::path d(fromDir);
    for (size_t i = 1; i < path.prefix.size(); ++i) d = d.parent_path();
    dirs.push_back(d.string());
  } else {
    dirs.push_back(fromDir);
    if (!opts.mainDir.empty() && opts.mainDir != fromDir) dirs.push_back(opts.mainDir);
    for (const std::string& d : opts.includeDirs) dirs.push_back(d);
    if (const char* p = std::getenv(xacc::env::kCamelPackages)) dirs.push_back(p);
    if (!opts.stdlibDir.empty()) dirs.push_back(opts.stdlibDir);
    else if (const char* p = std::getenv(xacc::env::kCamelStdLib)) dirs.push_back(p);
  }
  for (const std::string& d : dirs) {
    for (std::string cand : {rel + stem + ".cml", rel + stem + "/" + stem + ".cml"}) {
      fs::path p = fs::path(d.empty() ? "." : d) / cand;
      tried.push_back(p.string());
      std::error_code ec;
      if (fs::is_regular_file(p, ec)) return p.lexically_normal().string();
    }
  }
  // Standard modules written in Camel are built in (spec 12.5: used when
  // nothing on disk has the name).
  if (path.prefix.empty() && rel.empty() && builtinModuleSource(stem))
    return std::string(kBuiltinSourcePrefix) + stem + ".cml";
  return "";
}

namespace {

class Loader {
public:
  Loader(Program& p, const CompileOptions& o, support::DiagnosticEngine& d)
      : prog_(p), opts_(o), diags_(d),
        resolver_(p, d, [this](ImportDecl* i, ModuleUnit* from) { return load(i, from); }) {}

  ModuleUnit* loadFile(const std::string& path) {
    std::error_code ec;
    std::string key = fs::weakly_canonical(path, ec).string();
    if (key.empty()) key = path;
    auto it = byPath_.find(key);
    if (it != byPath_.end()) return it->second;
    prog_.units.push_back(std::make_unique<ModuleUnit>());
    ModuleUnit* u = prog_.units.back().get();
    byPath_[key] = u;
    u->path = path;
    u->dir = fs::path(path).parent_path().string();
    if (u->dir.empty()) u->dir = ".";
    size_t errorsBefore = diags_.errorCount();
    u->parsed = parseFile(path, prog_.ast, diags_);
    u->ast = u->parsed.module;
    std::string name = u->ast ? u->ast->name() : "";
    if (name.empty()) name = fs::path(path).stem().string();
    std::string unique = name;
    for (int n = 2; usedNames_.count(unique); ++n) unique = name + "$" + std::to_string(n);
    usedNames_.insert(unique);
    u->name = unique;
    if (!u->ast || diags_.errorCount() > errorsBefore) {
      u->failed = true;
      return u;
    }
    analyse(*u);
    return u;
  }

  void analyse(ModuleUnit& u) {
    u.analysing = true;
    size_t errorsBefore = diags_.errorCount();
    resolver_.resolveUnit(u);
    u.failed |= diags_.errorCount() > errorsBefore;
    u.analysing = false;
    u.analysed = true;
  }

  ModuleUnit* load(ImportDecl* d, ModuleUnit* from) {
    std::vector<std::string> tried;
    std::string file = findModuleFile(d->path, from->dir, opts_, tried);
    std::string last = d->path.parts.empty() ? "" : d->path.parts.back().name;
    if (file.empty() && d->path.prefix.empty() && d->path.parts.size() == 1) {
      // Modules provided by executors (tensor, python, ...) load them now.
      std::string error;
      if (!loadExecutorForModule(last, error)) {
        report(diags_, Diag::ExecutorLoadFailed, d->path.range.loc(), {d->path.str(), error});
        return nullptr;
      }
    }
    if (file.empty()) {
      if (d->path.prefix.empty() && isStdlibModule(last)) return nullptr;
      auto& diag = report(diags_, Diag::ModuleNotFound, d->path.range.loc(), {d->path.str()});
      for (const std::string& t : tried)
        diag.notes.push_back({support::Severity::Note, "", {}, "tried " + t, {}, {}});
      return nullptr;
    }
    std::error_code ec;
    auto it = byPath_.find(fs::weakly_canonical(file, ec).string());
    if (it != byPath_.end() && it->second->analysing) {
      report(diags_, Diag::CyclicImport, d->path.range.loc(), {d->path.str()});
      return nullptr;
    }
    ModuleUnit* u = loadFile(file);
    if (u->failed) {
      report(diags_, Diag::ModuleParseFailed, d->path.range.loc(), {d->path.str()});
      return nullptr;
    }
    return u;
  }

  Resolver& resolver() { return resolver_; }

private:
  Program& prog_;
  const CompileOptions& opts_;
  support::DiagnosticEngine& diags_;
  Resolver resolver_;
  std::map<std::string, ModuleUnit*> byPath_;
  std::set<std::string> usedNames_;
};

}  // namespace

bool analyseProgram(const std::string& path, const CompileOptions& opts,
                    support::DiagnosticEngine& diags, Program& prog) {
  registerCamelStdlib();
  CompileOptions withMain = opts;
  withMain.mainDir = fs::path(path).parent_path().string();
  if (withMain.mainDir.empty()) withMain.mainDir = ".";
  Loader loader(prog, withMain, diags);
  size_t errorsBefore = diags.errorCount();
  prog.main = loader.loadFile(path);
  if (!prog.main->ast) return false;
  loader.resolver().finish();
  if (opts.requireMain && diags.errorCount() == errorsBefore) {
    auto it = prog.main->scope.find("main");
    if (it == prog.main->scope.end() || it->second->kind != BindKind::Func ||
        it->second->unit != prog.main) {
      report(diags, Diag::MissingMainFunction, support::SourceLoc{prog.main->parsed.file, 1, 1, 1},
             {prog.main->name});
    } else {
      for (FuncInfo* f : it->second->overloads)
        if (!f->paramTypes.empty() || !f->withTypes.empty())
          report(diags, Diag::MainTakesParameters, f->decl->name.range.loc());
    }
  }
  return diags.errorCount() == errorsBefore;
}

}  // namespace xacc::camel::sema
