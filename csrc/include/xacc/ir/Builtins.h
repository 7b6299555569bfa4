// Native builtins callable from GIR through `func.builtin {name = "..."}` (pure)
// and `func.builtin_effect {name = "..."}` (effectful: token in and out, like
// every effect). The Camel standard library and runtime helpers register here;
// the interpreter, constant folding and the runtime all call the same function,
// so they cannot disagree. A builtin's `infer` gives result types from operand
// types (overload resolution happens in the front end, which picks the name).
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "xacc/ir/Op.h"

namespace xacc::ir {

struct Builtin {
  std::string name;
  bool effectful = false;     ///< must be called through func.builtin_effect
  bool deterministic = true;  ///< false for time, random, I/O reads: never folded
  /// Effectful only to stay unfolded and ordered among clock reads (the sim
  /// kernels): deterministic, touches no shared state, so the parallel
  /// scheduler may run it concurrently with other code.
  bool concurrent = false;
  /// Result types for the given operand types (tokens excluded); empty = as declared.
  std::function<bool(const std::vector<Type>& args, std::vector<Type>& results, std::string& error)> infer;
  /// Runs the builtin. `args` exclude the token; push one datum per result
  /// (token excluded). Report failures with `I.fail(node, code, message)`.
  InterpFn fn;
  std::string summary;
};

class BuiltinRegistry {
public:
  static BuiltinRegistry& get();
  void add(Builtin b);
  const Builtin* lookup(std::string_view name) const;
  std::vector<const Builtin*> all() const;

private:
  BuiltinRegistry() = default;
  struct Impl;
  Impl* impl();
};

}  // namespace xacc::ir
