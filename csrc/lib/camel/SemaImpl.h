// Private data model shared by semantic analysis (Sema*.cpp) and lowering
// (Lower*.cpp). Sema loads modules, resolves every name reference and type
// expression, computes closure captures, decides which mutable bindings become
// cells and which functions thread an effect token; lowering then types each
// expression while it builds GIR (one walk), using these tables.
//
// Note [Block functions]: function bodies, lambda bodies and `if`/`match` arms
// are all FuncInfos (spec 9.13: each arm is a small function). A reference to
// a local binding of an enclosing FuncInfo adds it to the captures of every
// FuncInfo in between. Arms receive their captures as region parameters; nested
// functions and lambdas as leading graph parameters (func.ref operands).
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "xacc/camel/AST.h"
#include "xacc/camel/CamelDiag.h"
#include "xacc/camel/Compiler.h"
#include "xacc/camel/Frontend.h"
#include "xacc/camel/Stdlib.h"
#include "xacc/ir/Graph.h"

namespace xacc::camel::sema {

struct FuncInfo;
struct ModuleUnit;

enum class BindKind : uint8_t {
  Local,    ///< let/var, parameter or with-parameter of a FuncInfo
  Global,   ///< top-level let/var
  Func,     ///< a set of declared function overloads
  Type,     ///< a type alias
  Builtin,  ///< a standard-library function (global or imported)
};

struct Binding {
  BindKind kind = BindKind::Local;
  std::string name;
  SourceRange range;
  ModuleUnit* unit = nullptr;
  FuncInfo* owner = nullptr;  ///< Local: declaring FuncInfo; Func: enclosing FuncInfo (null at top)
  bool isVar = false;
  bool isParam = false;
  bool isWith = false;
  bool exported = false;
  // Local / Global.
  DataDecl* decl = nullptr;
  size_t index = 0;           ///< position among the names of `decl`
  ir::Type declared;          ///< from an annotation (null when inferred)
  bool assigned = false;
  bool assignedOutsideOwner = false;
  bool captured = false;      ///< by a nested function or lambda (not an arm)
  bool isCell = false;        ///< see docs/camel-lowering.md (cells)
  // Func.
  std::vector<FuncInfo*> overloads;
  // Type.
  ir::Type type;
  size_t declOrder = 0;
  // Builtin.
  std::string module;         ///< stdlib module ("" for globals)
  /// Imported by name from `module`: the global built-in of the same name keeps
  /// its overloads (an import adds overloads, it does not hide them).
  bool withGlobal = false;
  // Global lowering state.
  ir::Graph* initGraph = nullptr;
  bool effectfulInit = false;  ///< initGraph is the token-threading getter (lowerEffectfulGlobal)
  ir::Type valueType;
  bool initLowering = false;
};

struct FuncInfo {
  enum class Kind : uint8_t { Decl, Lambda, Arm, Init, Decorated } kind = Kind::Decl;
  FuncDecl* decl = nullptr;
  LambdaExpr* lambda = nullptr;
  Expr* armBody = nullptr;
  const FunctionSig* sig = nullptr;
  FuncInfo* parent = nullptr;
  ModuleUnit* unit = nullptr;
  Binding* self = nullptr;    ///< Decl: its overload set
  std::string name;           ///< Camel name for messages
  std::string graphName;
  std::vector<Binding*> captures;
  std::unordered_set<Binding*> captureSet;
  bool selfReferenced = false;
  bool directEffect = false;
  bool effectful = false;     ///< threads a token (lambdas always do)
  std::vector<FuncInfo*> callees;
  bool decorated = false;
  size_t declOrder = 0;
  // Signature (types resolved by sema).
  std::vector<ir::Type> withTypes, paramTypes;
  std::vector<bool> varParams;
  ir::Type declaredResult;
  // Lowering state.
  ir::Graph* graph = nullptr;
  ir::Graph* valueWrapper = nullptr;  ///< token-threading wrapper of a pure function
  ir::Type resultType;
  bool lowering = false, lowered = false, failed = false;
  Binding* decoratedGlobal = nullptr;  ///< top-level decorated: the once-global holding the value
  FuncInfo* decoratorInit = nullptr;   ///< top-level decorated: context of the decorator exprs
  /// Nested decorated: the hidden local of the declaring function that holds
  /// the decorated value (set where the declaration is lowered; captured by
  /// arms, lambdas and nested functions that use the name).
  Binding* decoratedLocal = nullptr;
  /// Nested Decl: its body has referred to it (recursion); a capture first
  /// needed after that is ClosureCaptureAfterSelfCall (spec 8.10).
  bool selfCalled = false;
};

struct ModuleUnit {
  std::string path;
  std::string dir;
  std::string name;  ///< graph name prefix
  ParsedFile parsed;
  Module* ast = nullptr;
  std::map<std::string, Binding*> scope;  ///< top-level names
  std::map<std::string, Binding*> exports;
  std::vector<Binding*> globals;
  std::vector<FuncInfo*> functions;  ///< top-level declared functions
  bool analysed = false, analysing = false, failed = false;
  std::set<std::string> importedStdModules;
};

/// Everything sema produced; owns bindings and FuncInfos.
struct Program {
  ASTContext ast;
  std::vector<std::unique_ptr<ModuleUnit>> units;
  std::vector<std::unique_ptr<Binding>> bindings;
  std::vector<std::unique_ptr<FuncInfo>> funcs;
  std::unordered_map<const NameExpr*, Binding*> refs;
  std::unordered_map<const TypeExpr*, ir::Type> types;
  std::unordered_map<const Node*, FuncInfo*> funcOf;  ///< FuncDecl, LambdaExpr, arm Expr
  std::unordered_map<const DataDecl*, std::vector<Binding*>> declBindings;
  std::unordered_map<const Param*, Binding*> paramBindings;
  std::unordered_map<std::string, Binding*> builtins;  ///< "module::name" -> Builtin binding
  ModuleUnit* main = nullptr;

  Binding* newBinding(BindKind k, std::string name) {
    bindings.push_back(std::make_unique<Binding>());
    bindings.back()->kind = k;
    bindings.back()->name = std::move(name);
    return bindings.back().get();
  }
  FuncInfo* newFunc(FuncInfo::Kind k) {
    funcs.push_back(std::make_unique<FuncInfo>());
    funcs.back()->kind = k;
    return funcs.back().get();
  }
};

// ---- Sema entry points ------------------------------------------------------

/// Loads the main module and its imports, resolves names and types.
bool analyseProgram(const std::string& path, const CompileOptions& opts,
                    support::DiagnosticEngine& diags, Program& prog);

/// Finds a module file for `import a.b.c` from `fromDir`; empty when absent.
/// `tried` receives the candidates looked at.
std::string findModuleFile(const ModulePath& path, const std::string& fromDir,
                           const CompileOptions& opts, std::vector<std::string>& tried);

// ---- Types (SemaTypes.cpp) ----------------------------------------------------

/// True when a value of type `actual` may be used where `expected` is declared
/// (spec 6.6): equal types, `any` or `void` expected, structs equal up to field
/// order, arrays whose element types are assignable that way.
bool assignable(ir::Type expected, ir::Type actual);
/// True for equal types up to struct field order.
bool sameType(ir::Type a, ir::Type b);
/// The GIR type of a Camel function value: token first, then with-params and
/// params; results: token, value, then the final value of each `var` param.
ir::Type funcValueType(const std::vector<ir::Type>& withs, const std::vector<ir::Type>& params,
                       const std::vector<bool>& varParams, ir::Type result);
/// The `var` flags of the (with + ordinary) parameters of a function value type.
std::vector<bool> varParamFlags(ir::Type fn);
/// For a Camel function value type: its (with+ordinary) parameter types and value result.
bool splitFuncValueType(ir::Type t, std::vector<ir::Type>& params, ir::Type& result,
                        size_t& varResults);
/// "(int, string)" for argument lists in messages.
std::string typeListName(const std::vector<ir::Type>& ts);
/// Levenshtein distance (for "did you mean").
size_t editDistance(const std::string& a, const std::string& b);
/// The closest of `candidates` to `name`, or empty when none is close.
std::string closestName(const std::string& name, const std::vector<std::string>& candidates);
/// The overloads a call of the builtin binding `b` chooses from, in order: the
/// module's, then (`b->withGlobal`) those of the global built-in of that name.
std::vector<const StdlibEntry*> builtinOverloads(const Binding& b);

}  // namespace xacc::camel::sema
