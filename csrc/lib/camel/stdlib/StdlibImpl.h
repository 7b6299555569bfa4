// Private helpers of the standard-library files: the registration record (one
// `Def` per overload gives both the BuiltinRegistry entry and the front end's
// table row), type predicates for `infer` rules, checked datum accessors for
// `fn` bodies (operands typed `any` reach a builtin unchecked, so every body
// checks kinds and reports E3010 instead of crashing), and calling function
// values with or without an effect token. See Note [Stdlib calling convention]
// and Note [Stdlib effects] in Stdlib.h.
#pragma once

#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "xacc/camel/Stdlib.h"
#include "xacc/ir/Builtins.h"
#include "xacc/ir/Graph.h"
#include "xacc/ir/Interpreter.h"
#include "xacc/ir/List.h"

namespace xacc::camel::stdlib {

using ir::Datum;
using ir::DKind;
using ir::Interpreter;
using ir::Node;
using ir::Type;
using ir::TypeKind;
using Types = std::vector<Type>;
using Datums = std::vector<Datum>;
using InferRule = std::function<bool(const Types& args, Types& results, std::string& error)>;

/// Another operand shape of the same builtin (`json::encode(v)` / `(v, indent)`).
struct Form {
  int withParams = 0;
  int params = 0;
  std::string signature;
};

/// One overload: its table row and its builtin.
struct Def {
  std::string module;  ///< "" for globals
  std::string name;    ///< Camel name
  std::string gir;     ///< GIR builtin name
  int withParams = 0;
  int params = 0;
  std::vector<int> varOperands;
  std::string signature;
  bool effectful = false;
  bool deterministic = true;
  bool concurrent = false;  ///< see ir::Builtin::concurrent
  std::string summary;
  InferRule infer;  ///< operand counts are checked before it runs when both are fixed
  ir::InterpFn fn;
  std::vector<Form> moreForms;  ///< extra table rows for the same builtin
};

/// Registers `d` with ir::BuiltinRegistry and appends its table row.
void define(Def d);
/// A row of an effectful system module (`fs`, `os`, `random`): GIR name `module::name`,
/// not deterministic unless said otherwise; `infer`/`fn` are filled in by the caller.
Def effectDef(const std::string& module, const std::string& name, int params, std::string signature,
              std::string summary, bool deterministic = false);
/// A table row for `module::name` that calls the already defined builtin `gir`.
void alias(const std::string& module, const std::string& name, const std::string& gir);

// Per-file registration, called once by registerCamelStdlib().
void registerCore();
void registerStrings();
void registerArrays();
void registerMath();
void registerGrad();
void registerRandom();
void registerAlgo();
void registerStatistics();
void registerCrypto();
void registerFs();
void registerJson();
void registerRe();
void registerSys();
void registerOs();
void registerTime();
void registerThis();
void registerSim();
void registerPara();

// ---- Types (infer rules) ------------------------------------------------------

/// Camel spelling of a GIR type: int, float, string, void, T[], (A, B), { a: T }.
std::string typeName(Type t);

inline bool intLike(Type t) { return t.isInt() || t.isAny(); }
inline bool floatLike(Type t) { return t.isFloat() || t.isAny(); }
inline bool numLike(Type t) { return t.isNumeric() || t.isAny(); }
inline bool strLike(Type t) { return t.kind() == TypeKind::Str || t.isAny(); }
inline bool boolLike(Type t) { return t.kind() == TypeKind::Bool || t.isAny(); }
inline bool listLike(Type t) { return t.kind() == TypeKind::List || t.isAny(); }
/// Element type of a list type (`any` for `any`).
inline Type elemOf(Type t) { return t.kind() == TypeKind::List ? t.elementType() : Type::any(); }
/// Scalars that order: int, float, string (or any).
inline bool orderedLike(Type t) { return numLike(t) || t.kind() == TypeKind::Str; }

/// Sets `err` to "<what> must be <expected>, got <type of operand i>" unless `ok`.
bool want(bool ok, const Types& a, size_t i, std::string_view what, std::string_view expected,
          std::string& err);

/// A function argument's signature with any effect token removed.
struct FnSig {
  bool token = false;  ///< takes and returns an !token first
  Types params;
  Type result;  ///< null type when it returns nothing
};
/// Reads `t` as a function of `arity` parameters (`any` gives any params/result).
bool fnSig(Type t, size_t arity, std::string_view what, FnSig& out, std::string& err);

// ---- Datums (fn bodies) -------------------------------------------------------

/// The Camel name of a value's kind for messages: "int", "float", "string", "array",
/// "tuple", "struct", "function", "Tensor", ... (the spelling of Camel's types).
const char* kindName(const Datum& d);

/// Reports `d` with `args` at `n`; returns false.
inline bool fail(Interpreter& I, const Node& n, RuntimeDiag d,
                 std::initializer_list<std::string_view> args) {
  return runtimeFail(I, n, d, args);
}
bool kindFail(Interpreter& I, const Node& n, std::string_view fn, std::string_view expected,
              const Datum& got);

bool getInt(Interpreter& I, const Node& n, std::string_view fn, const Datum& d, int64_t& out);
bool getFloat(Interpreter& I, const Node& n, std::string_view fn, const Datum& d, double& out);
/// int or float as a double.
bool getNum(Interpreter& I, const Node& n, std::string_view fn, const Datum& d, double& out);
bool getBool(Interpreter& I, const Node& n, std::string_view fn, const Datum& d, bool& out);
bool getStr(Interpreter& I, const Node& n, std::string_view fn, const Datum& d,
            const std::string*& out);
bool getList(Interpreter& I, const Node& n, std::string_view fn, const Datum& d,
             std::vector<Datum>*& out);
/// The array object itself, in whatever form it has (Note [Compact arrays]);
/// getList instead converts it to the boxed form.
bool getArray(Interpreter& I, const Node& n, std::string_view fn, const Datum& d,
              ir::ListObject*& out);
/// Whether calling function value `f` may have effects, and so mutate an
/// array: false only for a Camel function without an effect token.
bool mayMutate(const Datum& f);
/// The element kind a builtin's array result is declared to hold: Int or
/// Float for int[] / float[] results (a hint for ir::ListBuilder), else Null.
DKind resultElemKind(const Node& n, size_t i = 0);

/// Calls function value `f` on `args` (through I.apply, so a runtime runs it on
/// its own engine), threading a fresh token when `f` takes one; `out` is its
/// single result (null when it returns nothing).
bool callFn(Interpreter& I, const Node& n, std::string_view fn, const Datum& f, Datum a, Datum& out);
bool callFn(Interpreter& I, const Node& n, std::string_view fn, const Datum& f, Datum a, Datum b,
            Datum& out);

/// The fold of `reduce` and `para::unordered_reduce` (operands f, initial, xs).
InferRule foldRule(std::string name);
ir::InterpFn foldFn(std::string name);
/// The walk of `foreach` and `para::unordered_foreach` (operands f, xs).
InferRule eachRule(std::string name);
ir::InterpFn eachFn(std::string name);

/// Checks that `xs` can be sorted: ints, floats or strings, all of one kind
/// (else a located E3010).
bool checkOrdered(Interpreter& I, const Node& n, std::string_view fn, const std::vector<Datum>& xs);
/// a < b for two datums accepted by checkOrdered: a total order (NaN last,
/// strings by bytes).
bool lessThan(const Datum& a, const Datum& b);

}  // namespace xacc::camel::stdlib
