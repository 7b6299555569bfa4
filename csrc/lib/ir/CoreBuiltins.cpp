// Builtins every GIR consumer has (the standard library registers many more):
// float math and a monotonic clock. They exist in the IR library so that the
// interpreter, constant folding and the runtime agree on them everywhere.
#include <chrono>
#include <cmath>

#include "xacc/ir/Builtins.h"
#include "xacc/ir/Graph.h"
#include "xacc/ir/Interpreter.h"
#include "xacc/support/CoreDiags.h"

using xacc::support::coreCode;
using xacc::support::CoreDiag;

namespace xacc::ir {

namespace {

double asNumber(const Datum& d) { return d.kind() == DKind::Float ? d.asFloat() : double(d.asInt()); }

Builtin unaryMath(const char* name, double (*f)(double), const char* summary) {
  Builtin b;
  b.name = name;
  b.summary = summary;
  b.infer = [name](const std::vector<Type>& args, std::vector<Type>& out, std::string& err) {
    if (args.size() != 1 || !(args[0].isInt() || args[0].isFloat() || args[0].isAny())) {
      err = std::string(name) + " takes one number";
      return false;
    }
    out = {Type::f64()};
    return true;
  };
  b.fn = [f, name](Interpreter& I, const Node& n, std::vector<Datum>& a, std::vector<Datum>& r) {
    if (a[0].kind() != DKind::Float && a[0].kind() != DKind::Int)
      return I.fail(n, coreCode(CoreDiag::OperandKindMismatch),
                    std::string(name) + " takes a number");
    r.push_back(Datum::real(f(asNumber(a[0]))));
    return true;
  };
  return b;
}

}  // namespace

void registerCoreBuiltins(BuiltinRegistry& reg) {
  reg.add(unaryMath("math.sqrt", [](double x) { return std::sqrt(x); }, "square root"));
  reg.add(unaryMath("math.exp", [](double x) { return std::exp(x); }, "e ** x"));
  reg.add(unaryMath("math.log", [](double x) { return std::log(x); }, "natural logarithm"));
  reg.add(unaryMath("math.sin", [](double x) { return std::sin(x); }, "sine"));
  reg.add(unaryMath("math.cos", [](double x) { return std::cos(x); }, "cosine"));
  reg.add(unaryMath("math.tanh", [](double x) { return std::tanh(x); }, "hyperbolic tangent"));
  reg.add(unaryMath("math.floor", [](double x) { return std::floor(x); }, "round down"));
  reg.add(unaryMath("math.ceil", [](double x) { return std::ceil(x); }, "round up"));

  Builtin clock;
  clock.name = "time.monotonic_ns";
  clock.summary = "nanoseconds of a monotonic clock";
  clock.effectful = true;
  clock.deterministic = false;
  clock.infer = [](const std::vector<Type>& args, std::vector<Type>& out, std::string& err) {
    if (!args.empty()) {
      err = "takes no arguments";
      return false;
    }
    out = {Type::i64()};
    return true;
  };
  clock.fn = [](Interpreter&, const Node&, std::vector<Datum>&, std::vector<Datum>& r) {
    auto t = std::chrono::steady_clock::now().time_since_epoch();
    r.push_back(Datum::integer(std::chrono::duration_cast<std::chrono::nanoseconds>(t).count()));
    return true;
  };
  reg.add(std::move(clock));
}

}  // namespace xacc::ir
