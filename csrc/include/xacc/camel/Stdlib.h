// The Camel standard library as native GIR builtins: the global built-ins of
// spec section 14 and the modules of section 15 that need neither Python nor
// tensors (time, os, math, random, algo, statistics, crypto, fs, json, re, sys,
// this, sim, para; io re-exports print/println/input). `registerCamelStdlib()`
// adds them to ir::BuiltinRegistry; `stdlibEntries()` is the table the front end
// resolves Camel calls with. Both come from one registration per overload, so
// they cannot disagree.
//
// Note [Stdlib calling convention]: a Camel call `f<w1, w2>(a1, a2)` or
// `a1->f<w1, w2>` lowers to
//     func.builtin(w1, w2, a1, a2) {name = "<gir name>"}
// (or func.builtin_effect(%tok, w1, w2, a1, a2), which yields the new token
// first): with-arguments first, then ordinary arguments, each list in order.
// Global built-ins use their bare name (`println`, `len`, `format`, `map`);
// module functions are `<module>::<function>` (`math::sqrt`, `json::encode`).
// Where one Camel name has overloads that differ in how arguments split into
// with- and ordinary arguments, each overload has its own GIR name with a
// `.form` suffix (`contains` / `contains.array`, `print` / `print.fmt`); where
// overloads differ only in operand types or count (`len` of a string or an
// array, `math::abs`, `json::encode` with or without indent) one builtin's
// `infer` and `fn` handle every form. `stdlibEntries()` lists, per Camel name,
// every overload with its module, GIR name, with-parameter count, ordinary
// parameter count (kVariadic for `args…`), the operands mutated in place (`var`
// parameters) and its Camel signature; `stdlibTableMarkdown()` renders it.
// The names with several forms:
//
//   Camel call              GIR builtin      operands (with-args first)
//   print(args…)            print            args…
//   print<fmt>(args…)       print.fmt        fmt, args…      (println likewise)
//   contains(s, sub)        contains         s, sub
//   contains<item>(xs)      contains.array   item, xs
//   len(s) / len(xs)        len              s | xs          (one builtin)
//   math::abs(x)            math::abs        x: int | float  (result type = x's)
//   json::encode(v[, n])    json::encode     v [, indent]    (one builtin)
//   int/i64, float/f64      int, i64, ...    x               (one builtin per name)
//
// `io::print`, `io::println` and `io::input` are rows that name the global
// builtins (spec 15.16).
//
// Builtins whose result type is `void` yield one `null` result. Every builtin
// checks the kinds of its operand datums at run time too (operands typed `any`
// are legal), so a mistyped value is a located E3010, never a crash.
//
// Note [Stdlib effects]: a builtin with side effects (output, input, files,
// environment, clocks, the random generator, sleep, exit, or mutating an array
// operand in place) is `effectful` and must be called through
// func.builtin_effect; one whose result may differ between runs is also
// `deterministic = false`. A builtin with `var` operands returns the array it
// mutated (like list.append's new version): lowering should route later reads
// of that array through this result so data dependence orders them after the
// mutation. Everything else is pure and may be constant-folded,
// CSE'd or dropped when unused. Higher-order builtins that merely read their
// array (`map`, `filter`, `reduce`, `para::unordered_reduce`) are pure; the
// front end calls them through func.builtin_effect when the function argument
// is effectful (a `sync` lambda). A function argument may be either a plain
// `func<(T) -> U>` or a token-threading `func<(!token, T) -> (!token, U)>`; the
// builtins pass a fresh token to the latter and drop the token it returns. The
// `sim` kernels and `crypto::sha256_rounds` are registered as effectful
// although they are deterministic: they are benchmark kernels, so they must
// never be folded at compile time and must stay ordered between clock reads in
// a sync block.
//
// Note [exit()]: a library must not end the process. `exit(code)` records the
// status with ExitRequest::request(code) and fails with code E3000
// (RuntimeDiag::ExitRequested); the `camel` driver checks ExitRequest::take() (or the code)
// after a failed run and exits with that status without printing the
// diagnostic.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "xacc/ir/Datum.h"
#include "xacc/ir/Type.h"
#include "xacc/support/Diagnostic.h"

namespace xacc::ir {
class Graph;
class Interpreter;
class Module;
class Node;
}  // namespace xacc::ir

namespace xacc::camel {

/// Registers every standard-library builtin with ir::BuiltinRegistry. Idempotent
/// and thread-safe.
void registerCamelStdlib();

/// Registers module `gir` (graph operations for user graph reducers, see Note
/// [Graphs as Camel values] in stdlib/Gir.cpp). It lives in library
/// xacc_camel_gir, which needs the pass manager and the runtime; the `camel`
/// tool calls this before compiling. Idempotent.
void registerGirModule();
/// Exit status of the last program `gir::run` executed (0 before any).
int girLastRunStatus();

inline constexpr int kVariadic = -1;
/// The GIR builtin `s[i]` on a string lowers to (bounds-checked; no table row).
inline constexpr const char* kStrAtBuiltin = "str.at";

/// One overload of a standard-library function as the front end sees it.
struct StdlibEntry {
  std::string module;            ///< "" for global built-ins, else "math", "json", "io", ...
  std::string name;              ///< Camel name: "len", "sqrt", "contains"
  std::string gir;               ///< builtin name in GIR: "len", "math::sqrt", "contains.array"
  int withParams = 0;            ///< with-parameter count, or kVariadic
  int params = 0;                ///< ordinary parameter count, or kVariadic
  std::vector<int> varOperands;  ///< GIR operand indices (token excluded) mutated in place
  std::string signature;         ///< Camel library notation, e.g. "<f: (T) => U>(xs: T[]): U[]"
  bool effectful = false;
  bool deterministic = true;
  std::string summary;
};

/// Every overload, in registration order (registers the library first).
const std::vector<StdlibEntry>& stdlibEntries();
/// The overloads of `name` in `module` ("" for globals), in resolution order.
std::vector<const StdlibEntry*> stdlibOverloads(std::string_view module, std::string_view name);
/// True for the modules this library provides ("math", "time", ...), and for
/// modules whose executor is loaded ("tensor" once the ATen executor is).
bool isStdlibModule(std::string_view module);
/// The table as Markdown (docs, `--help` and reports are generated from it).
std::string stdlibTableMarkdown();

/// A type exported by a native module (spec 6.4): `Tensor` of `tensor`,
/// `PyObject` of `python`. Executors define them (Executor.h).
struct ModuleType {
  std::string module;  ///< "tensor"
  std::string name;    ///< "Tensor"
  /// The GIR type of `Name` (no arguments) or `Name<args>`; false with `error`
  /// set when the arguments do not fit.
  std::function<bool(const std::vector<ir::Type>& args, ir::Type& out, std::string& error)> make;
};
/// Registers a module type (a later definition of the same name replaces it).
void defineModuleType(ModuleType t);
/// The module type `name` of `module`, or null.
const ModuleType* moduleType(std::string_view module, std::string_view name);
/// Names of `module`'s types.
std::vector<std::string> moduleTypeNames(std::string_view module);
/// The gradient graph `name` of function graph `f` for Camel's `grad<f>(...)`
/// (Note [Camel grad] in stdlib/Grad.cpp): calls inlined from module `m`, the
/// first `ncaps` parameters (closure captures) not differentiated. Null after
/// reporting an error at `at` or at the offending op. `argTypes` (captures and
/// arguments, optional) specialise tensor parameters to the call's static types.
std::unique_ptr<ir::Graph> buildCamelGradGraph(const ir::Module* m, const ir::Graph& f, size_t ncaps,
                                               const std::string& name, support::DiagnosticEngine& diag,
                                               support::SourceLoc at,
                                               const std::vector<ir::Type>& argTypes = {});

/// Renders a value as spec section 7.3 prescribes for print/println/join and the
/// `{}` placeholder of `format` (for non-numbers): ints in decimal, floats like
/// C++ ostream defaults (`%g`), strings without quotes at every level, arrays
/// `[1, 2]`, tuples `(1, 2)`, structs `{ x: 1, y: 2 }` (`{}` when empty), null
/// `null`, functions `<function>`. The spec renders nested values exactly like
/// top-level ones, so `topLevel` changes nothing today; it is part of the
/// signature so callers that track nesting need no change if that ever differs.
std::string camelRepr(const ir::Datum& d, bool topLevel = true);
/// How a module renders its opaque values in camelRepr (spec 7.3: "a tensor
/// prints its rows"); without a hook the object's own repr() is used.
using ObjectRepr = std::function<std::string(const ir::Datum& d)>;
void setObjectRepr(ir::DKind kind, ObjectRepr repr);
/// `string(x)` of spec 14.1: ints in decimal, floats fixed with six decimals.
std::string camelToString(const ir::Datum& d);
/// `format<args…>(fmt)` of spec 14.3 (the fmt library's mini-language). On a
/// malformed format or a spec that does not fit its argument returns false with
/// `error` set.
bool camelFormat(std::string_view fmt, const std::vector<ir::Datum>& args, std::string& out,
                 std::string& error);
/// Structural equality of spec 7.2 (`contains`, `match`): numbers, strings and
/// booleans by value, arrays/tuples element-wise, structs field-wise by name.
bool camelEquals(const ir::Datum& a, const ir::Datum& b);

/// Runtime error codes (RuntimeDiags.def).
enum class RuntimeDiag : uint16_t {
#define RUNTIME_DIAG(Name, Code, Message) Name,
#include "xacc/camel/RuntimeDiags.def"
  NumDiags
};
struct RuntimeDiagInfo {
  const char* name;
  const char* code;
  const char* message;  ///< template with `{}` placeholders
};
const RuntimeDiagInfo& runtimeDiagInfo(RuntimeDiag d);

/// Reports runtime error `d` at node `n` with the template filled from `args`;
/// always returns false (the InterpFn failure value).
bool runtimeFail(ir::Interpreter& I, const ir::Node& n, RuntimeDiag d,
                 std::initializer_list<std::string_view> args);

/// See Note [exit()].
class ExitRequest {
public:
  static void request(int status);
  /// True when a program called exit(); stores the status and clears the request.
  static bool take(int& status);
  static bool pending();
};

}  // namespace xacc::camel
