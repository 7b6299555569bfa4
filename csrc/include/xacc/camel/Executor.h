// Camel executors: plugins that add what the `camel` executable does not link
// itself (libtorch, libpython, a native code generator, foreign libraries).
// See docs/executors.md.
//
// An executor is a shared library `libxacc_exec_<name>.so` that exports one
// C entry point,
//
//     extern "C" bool xacc_camel_executor_<name>(xacc::camel::ExecutorContext* ctx);
//
// (declare it with XACC_CAMEL_EXECUTOR(<name>)). The entry runs once, when the
// executor is first needed, and registers what the executor provides:
//   * standard modules (`tensor`, `python`, `pyplot`): their functions are
//     ordinary standard-library builtins (camel::stdlib::define, StdlibImpl.h)
//     and their types module types (defineModuleType, Stdlib.h); the entry then
//     calls ctx->provideModule(name);
//   * URI schemes of `outer` functors (`dll`, `python`): ctx->provideScheme()
//     with a resolver that turns `scheme://target::symbol` and the functor's
//     Camel signature into a builtin;
//   * graph compilers (`camel run --backend=<name>`): ctx->provideGraphCompiler();
//   * GIR op families (the ATen executor registers `aten.*`), directly in
//     ir::OpRegistry.
// An executor that needs another one calls ctx->depend(name) first thing in its
// entry (`pyplot` depends on `python`); the dependency's entry has run when
// depend() returns. Failures are reported with ctx->fail(message).
//
// Loading is lazy: ExecutorRegistry::load(name) dlopens the plugin (RTLD_GLOBAL)
// and runs its entry. The front end loads the executor that provides a module
// when a program imports it and the one that provides a scheme when an `outer`
// functor names it (providerOfModule / providerOfScheme; the table of known
// providers is in Executor.cpp); `camel run --executors a,b` loads executors up
// front. A program that needs no executor loads none, so `camel run hello.cml`
// maps neither libtorch nor libpython.
//
// Search path for `libxacc_exec_<name>.so`: the directories of
// XACC_EXECUTOR_PATH (colon-separated), then `<dir>/../lib/xacc/executors` and
// `<dir>/lib/xacc/executors`, where <dir> is the directory of the executable or
// library that contains this registry (build/bin/camel -> build/lib/xacc/executors;
// build/python/_C*.so -> the same directory).
//
// Plugins are built against the same static libraries as the host and resolve
// the registries' symbols to the host's (the `camel` executable exports its
// symbols), so there is one BuiltinRegistry, one OpRegistry and one stdlib table.
// A process that links an executor's code itself (xacc._C links the ATen
// backend, and runs the python executor on the running interpreter) registers
// the entry with addStatic() instead; load() then calls it without dlopen.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "xacc/ir/Builtins.h"
#include "xacc/ir/Graph.h"
#include "xacc/ir/Type.h"
#include "xacc/support/Diagnostic.h"

namespace xacc::camel {

/// An `outer` functor declaration as the front end hands it to a scheme's resolver:
///     outer func add(a: int, b: int): int = "dll://./libadd.so::add"
struct OuterFunctor {
  std::string uri;      ///< the whole URI
  std::string scheme;   ///< "dll"
  std::string target;   ///< "./libadd.so" (relative paths are relative to `baseDir`)
  std::string symbol;   ///< "add" (empty when the URI has no `::`)
  std::string baseDir;  ///< directory of the .cml file that declares the functor
  std::string name;     ///< the Camel function name ("add")
  std::vector<ir::Type> params;  ///< Camel parameter types (i64, f64, bool, str, list<...>)
  ir::Type result;               ///< the declared result type (null type for void)
};

/// Resolves an outer functor to a builtin: `out.fn` runs the foreign code (its
/// operands are the functor's arguments, its one result the functor's value;
/// `void` functors yield null). `out.name` and `out.infer` are filled in by the
/// front end; the resolver may set `effectful`/`deterministic` (outer functors
/// are called as effectful unless it clears `effectful`). On failure returns
/// false with `error` set (the front end reports it at the declaration).
using OuterResolver =
    std::function<bool(const OuterFunctor& f, ir::Builtin& out, std::string& error)>;

/// Compiles (rewrites) a lowered program for a backend before it runs:
/// `camel run --backend=<name>`. Returns false after reporting into `diags`.
using GraphCompiler = std::function<bool(ir::Module& module, const std::string& mainGraph,
                                         support::DiagnosticEngine& diags)>;

/// What an executor's entry point registers through.
class ExecutorContext {
public:
  virtual ~ExecutorContext() = default;
  /// This executor's name ("aten").
  virtual const std::string& name() const = 0;
  /// Loads executor `dep` first; false (with fail() already called) if it cannot be loaded.
  virtual bool depend(std::string_view dep) = 0;
  /// This executor provides standard module `module` (its builtins and types are
  /// registered already).
  virtual void provideModule(std::string module) = 0;
  /// This executor resolves `outer` functors with URIs `scheme://...`.
  virtual void provideScheme(std::string scheme, OuterResolver resolver) = 0;
  /// This executor compiles programs for `camel run --backend=<backend>`.
  virtual void provideGraphCompiler(std::string backend, GraphCompiler compiler) = 0;
  /// Records why the entry failed; the entry then returns false.
  virtual void fail(std::string message) = 0;
};

/// The type of an executor's entry point.
using ExecutorEntry = bool (*)(ExecutorContext* ctx);

/// The name of `name`'s entry point: "xacc_camel_executor_<name>".
std::string executorEntrySymbol(std::string_view name);
/// The file name of `name`'s plugin: "libxacc_exec_<name>.so".
std::string executorFileName(std::string_view name);

/// Process-wide registry of executors (thread-safe).
class ExecutorRegistry {
public:
  static ExecutorRegistry& get();

  /// Loads executor `name` (and its dependencies) unless it is loaded already.
  /// On failure returns false with `error` set (unknown executor: the
  /// directories searched are listed).
  bool load(std::string_view name, std::string& error);
  bool isLoaded(std::string_view name) const;
  /// Names of the loaded executors, in load order.
  std::vector<std::string> loaded() const;

  /// Makes `load(name)` call `entry` instead of loading a plugin.
  void addStatic(std::string name, ExecutorEntry entry);

  /// The executor that provides standard module `module` / URI scheme `scheme` /
  /// backend `backend` ("" when none is known): the loaded executors' own
  /// registrations first, then the table of known providers.
  std::string providerOfModule(std::string_view module) const;
  std::string providerOfScheme(std::string_view scheme) const;
  std::string providerOfBackend(std::string_view backend) const;

  /// A loaded executor's resolver for `scheme` / compiler for `backend`; null if none.
  const OuterResolver* scheme(std::string_view scheme) const;
  const GraphCompiler* graphCompiler(std::string_view backend) const;

  /// The directories searched for plugins, in order.
  std::vector<std::string> searchPath() const;

  ExecutorRegistry(const ExecutorRegistry&) = delete;
  ExecutorRegistry& operator=(const ExecutorRegistry&) = delete;
  struct Impl;  ///< opaque

private:
  ExecutorRegistry();
  ~ExecutorRegistry();
  std::unique_ptr<Impl> impl_;
};

/// Note [Op lowering recipes]: a module function whose calls the front end
/// lowers to one GIR op instead of a func.builtin call (so tensor code becomes
/// `aten.*` nodes that export, autodiff and the ATen executor understand):
///     "aten.zeros.default(size[]) dtype=f64"
///     "aten.sum.default(%) -> f64 item | aten.sum.dim_IntList(%, dim[]) -> f64"
///     "aten.argmax.default(%, dim) -> f64"
/// `op(params) attrs -> post`, alternatives separated by `|` (the first whose
/// parameter count is the call's applies). One param per Camel operand, in
/// order: `%` must be a Tensor (otherwise the recipe does not apply and the
/// builtin is called), `*` is passed as an operand, a name passes the operand
/// as that attribute when it is a compile-time constant (an int or a float;
/// `name[]`: an array literal of ints, or one int as `[n]`) and as an operand
/// otherwise.
/// `attrs` are `name=value` (ints, or strings such as dtype names). `post` is
/// steps applied in order: `item` turns a 0-d tensor result into its scalar
/// (aten.item.default), `f64` converts a result that is not float64 already
/// (aten._to_copy.default; a Tensor<bool> sums to int64). The first non-token
/// result is the call's value. The builtin with the same GIR name stays
/// registered; it is what runs when the recipe does not apply.
void defineOpLowering(std::string gir, std::string recipe);
/// The recipe for builtin `gir`, or null.
const std::string* opLowering(std::string_view gir);

/// Loads the executor that provides `module`, if one is known and not loaded.
/// Returns false with `error` set when it is known but cannot be loaded; true
/// otherwise (also when no executor provides `module`).
bool loadExecutorForModule(std::string_view module, std::string& error);

}  // namespace xacc::camel

/// Declares executor `name`'s entry point:
///     XACC_CAMEL_EXECUTOR(aten) { ctx->provideModule("tensor"); return true; }
#define XACC_CAMEL_EXECUTOR(name)                                                          \
  extern "C" __attribute__((visibility("default"))) bool xacc_camel_executor_##name(       \
      ::xacc::camel::ExecutorContext* ctx)
