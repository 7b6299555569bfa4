// The executor registry (Executor.h): finds plugins on the search path, loads
// them with dlopen, runs their entry points and keeps what they registered.
#include "xacc/camel/Executor.h"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include "xacc/support/EnvNames.h"

namespace xacc::camel {

namespace fs = std::filesystem;

namespace {

// Who provides what before anything is loaded: the executors of this project.
// A third-party executor's modules and schemes are known once it is loaded
// (`camel run --executors name`).
struct Known {
  const char* key;
  const char* executor;
};
constexpr Known kKnownModules[] = {{"tensor", "aten"}, {"python", "python"}, {"pyplot", "pyplot"}};
constexpr Known kKnownSchemes[] = {{"dll", "dll"}, {"python", "python"}};
constexpr Known kKnownBackends[] = {{"xpu", "mlir"}};

std::string lookupKnown(const Known* table, size_t n, std::string_view key) {
  for (size_t i = 0; i < n; ++i)
    if (key == table[i].key) return table[i].executor;
  return "";
}

bool validName(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'))
      return false;
  return true;
}

}  // namespace

std::string executorEntrySymbol(std::string_view name) {
  return "xacc_camel_executor_" + std::string(name);
}

std::string executorFileName(std::string_view name) {
  return "libxacc_exec_" + std::string(name) + ".so";
}

struct ExecutorRegistry::Impl {
  mutable std::recursive_mutex mu;  // entries call depend() -> load() re-entrantly
  std::vector<std::string> loaded;
  std::vector<std::string> loading;  // entries running (cycle detection)
  std::map<std::string, ExecutorEntry, std::less<>> statics;
  std::map<std::string, std::string, std::less<>> modules;   // module -> executor
  std::map<std::string, std::pair<std::string, OuterResolver>, std::less<>> schemes;
  std::map<std::string, std::pair<std::string, GraphCompiler>, std::less<>> compilers;
};

namespace {

class Context final : public ExecutorContext {
public:
  Context(ExecutorRegistry::Impl& r, std::string name) : r_(r), name_(std::move(name)) {}
  const std::string& name() const override { return name_; }
  bool depend(std::string_view dep) override {
    std::string error;
    if (ExecutorRegistry::get().load(dep, error)) return true;
    fail("needs executor '" + std::string(dep) + "': " + error);
    return false;
  }
  void provideModule(std::string module) override { r_.modules[module] = name_; }
  void provideScheme(std::string scheme, OuterResolver resolver) override {
    r_.schemes[scheme] = {name_, std::move(resolver)};
  }
  void provideGraphCompiler(std::string backend, GraphCompiler compiler) override {
    r_.compilers[backend] = {name_, std::move(compiler)};
  }
  void fail(std::string message) override {
    if (error_.empty()) error_ = std::move(message);
  }
  const std::string& error() const { return error_; }

private:
  ExecutorRegistry::Impl& r_;
  std::string name_;
  std::string error_;
};

// The directory of the binary this code is linked into (camel or _C*.so).
std::string selfDir() {
  // For the main executable dladdr may report the name it was started by
  // ("camel" found on PATH): /proc/self/exe is the file then.
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&executorFileName), &info) && info.dli_fname &&
      std::string_view(info.dli_fname).find('/') != std::string_view::npos) {
    std::error_code ec;
    fs::path p = fs::weakly_canonical(fs::path(info.dli_fname), ec);
    if (!ec && !p.empty()) return p.parent_path().string();
  }
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : exe.parent_path().string();
}

}  // namespace

ExecutorRegistry::ExecutorRegistry() : impl_(std::make_unique<Impl>()) {}
ExecutorRegistry::~ExecutorRegistry() = default;

ExecutorRegistry& ExecutorRegistry::get() {
  static auto* r = new ExecutorRegistry();  // leaked: plugins stay loaded until exit
  return *r;
}

std::vector<std::string> ExecutorRegistry::searchPath() const {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv(xacc::env::kExecutorPath)) {
    std::string_view s(env);
    while (!s.empty()) {
      size_t colon = s.find(':');
      std::string_view d = s.substr(0, colon);
      if (!d.empty()) dirs.emplace_back(d);
      if (colon == std::string_view::npos) break;
      s.remove_prefix(colon + 1);
    }
  }
  std::string self = selfDir();
  if (!self.empty()) {
    for (fs::path p : {fs::path(self) / ".." / "lib" / "xacc" / "executors",
                       fs::path(self) / "lib" / "xacc" / "executors"})
      dirs.push_back(p.lexically_normal().string());
  }
  return dirs;
}

bool ExecutorRegistry::load(std::string_view name, std::string& error) {
  std::lock_guard<std::recursive_mutex> lock(impl_->mu);
  Impl& r = *impl_;
  for (const std::string& l : r.loaded)
    if (l == name) return true;
  for (const std::string& l : r.loading)
    if (l == name) {
      error = "executor '" + std::string(name) + "' depends on itself";
      return false;
    }
  if (!validName(name)) {
    error = "'" + std::string(name) + "' is not an executor name (letters, digits and '_')";
    return false;
  }
  ExecutorEntry entry = nullptr;
  if (auto it = r.statics.find(name); it != r.statics.end()) {
    entry = it->second;
  } else {
    std::string file = executorFileName(name);
    std::vector<std::string> dirs = searchPath();
    std::string path;
    for (const std::string& d : dirs) {
      std::error_code ec;
      fs::path p = fs::path(d) / file;
      if (fs::is_regular_file(p, ec)) {
        path = p.string();
        break;
      }
    }
    if (path.empty()) {
      error = "unknown executor '" + std::string(name) + "': no " + file + " in ";
      if (dirs.empty()) error += "any directory (set XACC_EXECUTOR_PATH)";
      for (size_t i = 0; i < dirs.size(); ++i) error += (i ? ", " : "") + dirs[i];
      return false;
    }
    // RTLD_GLOBAL: a dependent executor may use its dependency's symbols.
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (!h) {
      const char* e = dlerror();
      error = "cannot load executor '" + std::string(name) + "' (" + path + "): " + (e ? e : "?");
      return false;
    }
    std::string sym = executorEntrySymbol(name);
    entry = reinterpret_cast<ExecutorEntry>(dlsym(h, sym.c_str()));
    if (!entry) {
      error = "executor library " + path + " has no entry point " + sym;
      return false;
    }
  }
  r.loading.emplace_back(name);
  Context ctx(r, std::string(name));
  bool ok = false;
  try {
    ok = entry(&ctx);
  } catch (const std::exception& e) {
    ctx.fail(e.what());
  } catch (...) {
    ctx.fail("unknown exception");
  }
  r.loading.pop_back();
  if (!ok) {
    error = "executor '" + std::string(name) + "' failed to start: " +
            (ctx.error().empty() ? std::string("its entry point returned false") : ctx.error());
    return false;
  }
  r.loaded.emplace_back(name);
  return true;
}

bool ExecutorRegistry::isLoaded(std::string_view name) const {
  std::lock_guard<std::recursive_mutex> lock(impl_->mu);
  for (const std::string& l : impl_->loaded)
    if (l == name) return true;
  return false;
}

std::vector<std::string> ExecutorRegistry::loaded() const {
  std::lock_guard<std::recursive_mutex> lock(impl_->mu);
  return impl_->loaded;
}

void ExecutorRegistry::addStatic(std::string name, ExecutorEntry entry) {
  std::lock_guard<std::recursive_mutex> lock(impl_->mu);
  impl_->statics[std::move(name)] = entry;
}

std::string ExecutorRegistry::providerOfModule(std::string_view module) const {
  std::lock_guard<std::recursive_mutex> lock(impl_->mu);
  if (auto it = impl_->modules.find(module); it != impl_->modules.end()) return it->second;
  return lookupKnown(kKnownModules, std::size(kKnownModules), module);
}

std::string ExecutorRegistry::providerOfScheme(std::string_view scheme) const {
  std::lock_guard<std::recursive_mutex> lock(impl_->mu);
  if (auto it = impl_->schemes.find(scheme); it != impl_->schemes.end()) return it->second.first;
  return lookupKnown(kKnownSchemes, std::size(kKnownSchemes), scheme);
}

std::string ExecutorRegistry::providerOfBackend(std::string_view backend) const {
  std::lock_guard<std::recursive_mutex> lock(impl_->mu);
  if (auto it = impl_->compilers.find(backend); it != impl_->compilers.end())
    return it->second.first;
  return lookupKnown(kKnownBackends, std::size(kKnownBackends), backend);
}

const OuterResolver* ExecutorRegistry::scheme(std::string_view scheme) const {
  std::lock_guard<std::recursive_mutex> lock(impl_->mu);
  auto it = impl_->schemes.find(scheme);
  return it == impl_->schemes.end() ? nullptr : &it->second.second;
}

const GraphCompiler* ExecutorRegistry::graphCompiler(std::string_view backend) const {
  std::lock_guard<std::recursive_mutex> lock(impl_->mu);
  auto it = impl_->compilers.find(backend);
  return it == impl_->compilers.end() ? nullptr : &it->second.second;
}

namespace {
std::mutex gRecipesMu;
std::map<std::string, std::string, std::less<>>& recipes() {
  static auto* m = new std::map<std::string, std::string, std::less<>>();
  return *m;
}
}  // namespace

void defineOpLowering(std::string gir, std::string recipe) {
  std::lock_guard<std::mutex> lock(gRecipesMu);
  recipes()[std::move(gir)] = std::move(recipe);
}

const std::string* opLowering(std::string_view gir) {
  std::lock_guard<std::mutex> lock(gRecipesMu);
  auto it = recipes().find(gir);
  return it == recipes().end() ? nullptr : &it->second;  // entries are never removed
}

bool loadExecutorForModule(std::string_view module, std::string& error) {
  ExecutorRegistry& r = ExecutorRegistry::get();
  std::string ex = r.providerOfModule(module);
  if (ex.empty() || r.isLoaded(ex)) return true;
  return r.load(ex, error);
}

}  // namespace xacc::camel
