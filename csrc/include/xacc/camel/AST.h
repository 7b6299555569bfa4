// The Camel abstract syntax tree (spec sections 4 and 16.1). Nodes fall in
// four families with abstract bases: Stmt (declarations and statements), Expr,
// TypeExpr and Pattern; a Module holds the top-level declarations. Every node
// has a kind (ASTNodes.def) and a SourceRange. Nodes are allocated in and
// owned by an ASTContext (an arena) and refer to each other by raw pointers,
// so trees are cheap to build and destroyed without recursion. Child pointers
// are never null unless documented as optional. Walk a tree with `isa/cast/
// dyn_cast`, `forEachChild`, or the ASTVisitor CRTP base; print it with
// `dumpAST` (ASTPrinter.cpp).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "xacc/support/Diagnostic.h"

namespace xacc::camel {

// ---------------------------------------------------------------------------
// Source ranges and kinds

/// A half-open source range: [line:col, endLine:endCol). Lines and columns are
/// 1-based; columns count bytes. `offset`/`endOffset` are byte offsets.
struct SourceRange {
  const std::string* file = nullptr;
  uint32_t line = 0, col = 0;
  uint32_t endLine = 0, endCol = 0;
  uint32_t offset = 0, endOffset = 0;

  bool valid() const { return file != nullptr && line > 0; }
  /// The start as a diagnostic location; the caret spans the range when it
  /// is on one line, else one character.
  support::SourceLoc loc() const;
  /// The smallest range covering `a` and `b` (a must start first).
  static SourceRange join(const SourceRange& a, const SourceRange& b);
};

enum class NodeKind : uint8_t {
#define NODE(Kind, Class) Kind,
#include "xacc/camel/ASTNodes.def"
};

const char* nodeKindName(NodeKind k);

class Node {
public:
  virtual ~Node() = default;
  NodeKind kind() const { return kind_; }
  const SourceRange& range() const { return range_; }
  void setRange(const SourceRange& r) { range_ = r; }
  support::SourceLoc loc() const { return range_.loc(); }

protected:
  Node(NodeKind k, SourceRange r) : kind_(k), range_(r) {}

private:
  NodeKind kind_;
  SourceRange range_;
};

template <typename To, typename From>
bool isa(const From* n) {
  return n && To::classof(n);
}
template <typename To, typename From>
To* cast(From* n) {
  return static_cast<To*>(n);
}
template <typename To, typename From>
const To* cast(const From* n) {
  return static_cast<const To*>(n);
}
template <typename To, typename From>
To* dyn_cast(From* n) {
  return isa<To>(n) ? static_cast<To*>(n) : nullptr;
}
template <typename To, typename From>
const To* dyn_cast(const From* n) {
  return isa<To>(n) ? static_cast<const To*>(n) : nullptr;
}

#define XACC_CAMEL_ABSTRACT(Class, First, Last)                                       \
  static bool classof(const Node* n) {                                                \
    return n->kind() >= NodeKind::First && n->kind() <= NodeKind::Last;               \
  }                                                                                   \
                                                                                      \
protected:                                                                            \
  Class(NodeKind k, SourceRange r) : Base(k, r) {}                                    \
                                                                                      \
public:
#define XACC_CAMEL_LEAF(Class, Kind)                                                  \
  static constexpr NodeKind kKind = NodeKind::Kind;                                   \
  static bool classof(const Node* n) { return n->kind() == NodeKind::Kind; }

class Stmt : public Node {
  using Base = Node;

public:
  XACC_CAMEL_ABSTRACT(Stmt, ModuleDecl, ExprStmt)
};
class Expr : public Node {
  using Base = Node;

public:
  XACC_CAMEL_ABSTRACT(Expr, ErrorExpr, Block)
};
class TypeExpr : public Node {
  using Base = Node;

public:
  XACC_CAMEL_ABSTRACT(TypeExpr, ErrorType, OfType)
};
class Pattern : public Node {
  using Base = Node;

public:
  XACC_CAMEL_ABSTRACT(Pattern, WildcardPattern, StructPattern)
};

class NameExpr;
class BlockExpr;

// ---------------------------------------------------------------------------
// Shared pieces (plain structs, not nodes)

/// An identifier with its range.
struct Ident {
  std::string name;
  SourceRange range;
  bool empty() const { return name.empty(); }
};

/// Function modifiers (spec 8.7), a bit set.
enum Modifier : uint8_t { ModAtomic = 1, ModShared = 2, ModSync = 4, ModMacro = 8 };
/// "atomic shared sync macro" order, space separated; empty for none.
std::string modifierString(uint8_t mods);

enum class ImplMark : uint8_t { None, Inner, Outer };

/// `[var] name: Type [= default]`, an ordinary or with-parameter.
struct Param {
  bool isVar = false;
  Ident name;
  TypeExpr* type = nullptr;        ///< null only after a syntax error
  Expr* defaultValue = nullptr;    ///< optional ([UNSUPPORTED] by the reference)
  SourceRange range;
};

/// The parts common to declared functions, lambdas and function types.
struct FunctionSig {
  uint8_t modifiers = 0;          ///< Modifier bits written before `func`/the parameters
  bool hasWithParams = false;     ///< a `<...>` list was written (possibly empty)
  std::vector<Param> withParams;
  std::vector<Param> params;
  TypeExpr* result = nullptr;     ///< optional for functions and lambdas
};

/// A call, with-argument or array element: `e`, `...e` or `name: e`.
struct Argument {
  Ident name;          ///< set for named arguments `f(x: 3)` ([UNSUPPORTED])
  bool spread = false; ///< `...e`
  Expr* value = nullptr;
  SourceRange range;
};

/// A struct literal field `name: e`, a spread `...e`, or (in patterns) a
/// shorthand `name` with a null value.
struct FieldInit {
  Ident name;
  bool spread = false;
  Expr* value = nullptr;
  SourceRange range;
};

/// `@name` or `@name<args>` before a function declaration.
struct Decorator {
  NameExpr* name = nullptr;
  bool hasArgs = false;
  std::vector<Argument> args;
  SourceRange range;
};

// ---------------------------------------------------------------------------
// Module

class Module : public Node {
public:
  XACC_CAMEL_LEAF(Module, Module)
  explicit Module(SourceRange r) : Node(kKind, r) {}
  std::vector<Stmt*> decls;
  /// The name given by `module NAME`, or empty.
  std::string name() const;
};

// ---------------------------------------------------------------------------
// Statements and declarations

class ModuleDecl : public Stmt {
public:
  XACC_CAMEL_LEAF(ModuleDecl, ModuleDecl)
  ModuleDecl(SourceRange r, Ident n) : Stmt(kKind, r), name(std::move(n)) {}
  Ident name;
};

/// A module path `[. | .. | ...] a.b.c`.
struct ModulePath {
  std::string prefix;  ///< "", ".", ".." or "..."
  std::vector<Ident> parts;
  SourceRange range;
  std::string str() const;
};

class ImportDecl : public Stmt {
public:
  XACC_CAMEL_LEAF(ImportDecl, ImportDecl)
  /// `import m` (Module), `import { a, b } from m` (Names), `import x from m` (Alias).
  enum class Form : uint8_t { Module, Names, Alias };
  ImportDecl(SourceRange r, Form f) : Stmt(kKind, r), form(f) {}
  Form form;
  ModulePath path;
  std::vector<Ident> names;  ///< Names form
  Ident alias;               ///< Alias form
};

/// `export { a, b }` or `export let/var/type ...` (`export func` is a flag on FuncDecl).
class ExportDecl : public Stmt {
public:
  XACC_CAMEL_LEAF(ExportDecl, ExportDecl)
  explicit ExportDecl(SourceRange r) : Stmt(kKind, r) {}
  Stmt* decl = nullptr;      ///< DataDecl or TypeDecl, or null for the names form
  std::vector<Ident> names;
};

/// `let|var carrier [: types] = values`.
class DataDecl : public Stmt {
public:
  XACC_CAMEL_LEAF(DataDecl, DataDecl)
  /// `let a, b` (List), `let (a, b)` (Tuple), `let {a, b}` (Struct), `let [a, b]` (Array).
  enum class Carrier : uint8_t { List, Tuple, Struct, Array };
  DataDecl(SourceRange r, bool v) : Stmt(kKind, r), isVar(v) {}
  bool isVar;
  Carrier carrier = Carrier::List;
  std::vector<Ident> names;
  std::vector<TypeExpr*> types;  ///< optional type list, in name order
  std::vector<Expr*> values;
};

class FuncDecl : public Stmt {
public:
  XACC_CAMEL_LEAF(FuncDecl, FuncDecl)
  explicit FuncDecl(SourceRange r) : Stmt(kKind, r) {}
  std::vector<Decorator> decorators;  ///< in source order (applied bottom-up)
  bool isExport = false;
  ImplMark impl = ImplMark::None;
  Ident name;
  FunctionSig sig;
  BlockExpr* body = nullptr;  ///< null after a syntax error and for outer functors
  /// `outer func f(x: int): int = "python://m.py::f"`: the foreign implementation.
  std::string outerUri;
  SourceRange outerUriRange;
};

/// `[inner|outer] type Name = T` or `type Name = "uri"`.
class TypeDecl : public Stmt {
public:
  XACC_CAMEL_LEAF(TypeDecl, TypeDecl)
  explicit TypeDecl(SourceRange r) : Stmt(kKind, r) {}
  ImplMark impl = ImplMark::None;
  Ident name;
  TypeExpr* type = nullptr;  ///< null for the opaque (uri) form
  std::string uri;
};

/// `use [alias =] name`.
class UseDecl : public Stmt {
public:
  XACC_CAMEL_LEAF(UseDecl, UseDecl)
  explicit UseDecl(SourceRange r) : Stmt(kKind, r) {}
  Ident alias;  ///< optional
  NameExpr* target = nullptr;
};

/// `return|raise|throw e1, e2` (no values: a bare `return`, meaning `return null`).
class ReturnStmt : public Stmt {
public:
  XACC_CAMEL_LEAF(ReturnStmt, ReturnStmt)
  enum class Form : uint8_t { Return, Raise, Throw };
  ReturnStmt(SourceRange r, Form f) : Stmt(kKind, r), form(f) {}
  Form form;
  std::vector<Expr*> values;
};

/// A nested block statement: `{...}`, `sync {...}`, `wait {...}`.
class BlockStmt : public Stmt {
public:
  XACC_CAMEL_LEAF(BlockStmt, BlockStmt)
  BlockStmt(SourceRange r, bool w, BlockExpr* b) : Stmt(kKind, r), isWait(w), block(b) {}
  bool isWait;
  BlockExpr* block;
};

class ExprStmt : public Stmt {
public:
  XACC_CAMEL_LEAF(ExprStmt, ExprStmt)
  ExprStmt(SourceRange r, Expr* e) : Stmt(kKind, r), expr(e) {}
  Expr* expr;
};

// ---------------------------------------------------------------------------
// Expressions

/// Stands in for an expression that failed to parse (a diagnostic was issued).
class ErrorExpr : public Expr {
public:
  XACC_CAMEL_LEAF(ErrorExpr, ErrorExpr)
  explicit ErrorExpr(SourceRange r) : Expr(kKind, r) {}
};

/// An integer literal; a sign folded from `-` in prefix position is included
/// (see Note [Minus] in Lexer.h).
class IntLiteral : public Expr {
public:
  XACC_CAMEL_LEAF(IntLiteral, IntLiteral)
  IntLiteral(SourceRange r, int64_t v) : Expr(kKind, r), value(v) {}
  int64_t value;
};

class RealLiteral : public Expr {
public:
  XACC_CAMEL_LEAF(RealLiteral, RealLiteral)
  RealLiteral(SourceRange r, double v) : Expr(kKind, r), value(v) {}
  double value;
};

class StringLiteral : public Expr {
public:
  XACC_CAMEL_LEAF(StringLiteral, StringLiteral)
  enum class Form : uint8_t { Quoted, Multi, Format };
  StringLiteral(SourceRange r, std::string v, Form f)
      : Expr(kKind, r), value(std::move(v)), form(f) {}
  std::string value;  ///< escapes decoded
  Form form;
};

class BoolLiteral : public Expr {
public:
  XACC_CAMEL_LEAF(BoolLiteral, BoolLiteral)
  BoolLiteral(SourceRange r, bool v) : Expr(kKind, r), value(v) {}
  bool value;
};

class NullLiteral : public Expr {
public:
  XACC_CAMEL_LEAF(NullLiteral, NullLiteral)
  explicit NullLiteral(SourceRange r) : Expr(kKind, r) {}
};

/// A (possibly qualified) name reference `a::b::c`.
class NameExpr : public Expr {
public:
  XACC_CAMEL_LEAF(NameExpr, Name)
  NameExpr(SourceRange r, std::string n) : Expr(kKind, r), name(std::move(n)) {}
  std::vector<std::string> qualifiers;  ///< `a`, `b` of `a::b::c`
  std::string name;                     ///< `c`
  std::string fullName() const;         ///< "a::b::c"
};

enum class UnaryOp : uint8_t { Not, Neg, BitNot };
const char* unaryOpSpelling(UnaryOp op);

class UnaryExpr : public Expr {
public:
  XACC_CAMEL_LEAF(UnaryExpr, Unary)
  UnaryExpr(SourceRange r, UnaryOp o, Expr* e) : Expr(kKind, r), op(o), operand(e) {}
  UnaryOp op;
  Expr* operand;
};

/// Binary operators, including the pipe (`->`, `?->`), composition (`..`,
/// `?..`) and null operators (`??`, `!!`).
enum class BinaryOp : uint8_t {
  Or, And,
  StrictEq, StrictNe, Eq, Ne,
  Lt, Gt, Le, Ge,
  Add, Sub,
  Mul, Div, Pow, MatMul, Mod,
  Coalesce, ErrorThen,
  Pipe, NullPipe,
  Compose, NullCompose,
};
const char* binaryOpSpelling(BinaryOp op);

class BinaryExpr : public Expr {
public:
  XACC_CAMEL_LEAF(BinaryExpr, Binary)
  BinaryExpr(SourceRange r, BinaryOp o, Expr* l, Expr* rr)
      : Expr(kKind, r), op(o), lhs(l), rhs(rr) {}
  BinaryOp op;
  Expr* lhs;
  Expr* rhs;
};

enum class AssignOp : uint8_t { Assign, Add, Sub, Mul, Div, Mod, Pow, MatMul, And, Or };
const char* assignOpSpelling(AssignOp op);

class AssignExpr : public Expr {
public:
  XACC_CAMEL_LEAF(AssignExpr, Assign)
  AssignExpr(SourceRange r, AssignOp o, Expr* t, Expr* v)
      : Expr(kKind, r), op(o), target(t), value(v) {}
  AssignOp op;
  Expr* target;
  Expr* value;
};

class WaitExpr : public Expr {
public:
  XACC_CAMEL_LEAF(WaitExpr, Wait)
  WaitExpr(SourceRange r, Expr* e) : Expr(kKind, r), operand(e) {}
  Expr* operand;
};

/// `e as T` (conversion) or `e is T` (type test).
class CastExpr : public Expr {
public:
  XACC_CAMEL_LEAF(CastExpr, Cast)
  CastExpr(SourceRange r, bool test, Expr* e, TypeExpr* t)
      : Expr(kKind, r), isTest(test), operand(e), type(t) {}
  bool isTest;
  Expr* operand;
  TypeExpr* type;
};

/// `callee(args)`; `f<w>(x)` is Call(With(f, w), x).
class CallExpr : public Expr {
public:
  XACC_CAMEL_LEAF(CallExpr, Call)
  CallExpr(SourceRange r, Expr* c) : Expr(kKind, r), callee(c) {}
  Expr* callee;
  std::vector<Argument> args;
};

/// `callee<args>`: binds with-arguments.
class WithExpr : public Expr {
public:
  XACC_CAMEL_LEAF(WithExpr, With)
  WithExpr(SourceRange r, Expr* c) : Expr(kKind, r), callee(c) {}
  Expr* callee;
  std::vector<Argument> args;
};

/// `base[index]` or a slice `base[index:end[:step]]`.
class IndexExpr : public Expr {
public:
  XACC_CAMEL_LEAF(IndexExpr, Index)
  IndexExpr(SourceRange r, Expr* b, Expr* i) : Expr(kKind, r), base(b), index(i) {}
  Expr* base;
  Expr* index;
  Expr* end = nullptr;   ///< set for slices
  Expr* step = nullptr;  ///< optional third slice part
  bool isSlice() const { return end != nullptr; }
};

/// Postfix non-null mark `x!`.
class NonNullExpr : public Expr {
public:
  XACC_CAMEL_LEAF(NonNullExpr, NonNull)
  NonNullExpr(SourceRange r, Expr* e) : Expr(kKind, r), operand(e) {}
  Expr* operand;
};

/// `base.name` or tuple element `base.N`.
class MemberExpr : public Expr {
public:
  XACC_CAMEL_LEAF(MemberExpr, Member)
  MemberExpr(SourceRange r, Expr* b) : Expr(kKind, r), base(b) {}
  Expr* base;
  Ident member;             ///< field name, or the index's spelling
  bool isIndex = false;     ///< `.N`
  uint64_t index = 0;
};

class ArrayExpr : public Expr {
public:
  XACC_CAMEL_LEAF(ArrayExpr, Array)
  explicit ArrayExpr(SourceRange r) : Expr(kKind, r) {}
  std::vector<Argument> elements;  ///< `spread` marks `...xs`
};

/// `[element for var in iterable if condition]`.
class ComprehensionExpr : public Expr {
public:
  XACC_CAMEL_LEAF(ComprehensionExpr, Comprehension)
  explicit ComprehensionExpr(SourceRange r) : Expr(kKind, r) {}
  Expr* element = nullptr;
  NameExpr* var = nullptr;
  Expr* iterable = nullptr;
  Expr* condition = nullptr;  ///< optional
};

class StructExpr : public Expr {
public:
  XACC_CAMEL_LEAF(StructExpr, Struct)
  explicit StructExpr(SourceRange r) : Expr(kKind, r) {}
  std::vector<FieldInit> fields;
};

/// `()`, `(e,)`, `(a, b)`. A parenthesised expression `(e)` is just `e`.
class TupleExpr : public Expr {
public:
  XACC_CAMEL_LEAF(TupleExpr, Tuple)
  explicit TupleExpr(SourceRange r) : Expr(kKind, r) {}
  std::vector<Expr*> elements;
};

/// `[modifiers] [<with>] (params) [: T] => body`; the body is a BlockExpr or
/// any other expression (a one-statement block).
class LambdaExpr : public Expr {
public:
  XACC_CAMEL_LEAF(LambdaExpr, Lambda)
  explicit LambdaExpr(SourceRange r) : Expr(kKind, r) {}
  FunctionSig sig;
  Expr* body = nullptr;
};

/// `if cond then a [else b]`; arms are BlockExprs or plain expressions.
class IfExpr : public Expr {
public:
  XACC_CAMEL_LEAF(IfExpr, If)
  IfExpr(SourceRange r, Expr* c) : Expr(kKind, r), cond(c) {}
  Expr* cond;
  Expr* thenArm = nullptr;
  Expr* elseArm = nullptr;  ///< optional
};

struct MatchCase {
  std::vector<Pattern*> patterns;  ///< alternatives `p1 | p2`
  Expr* body = nullptr;
  SourceRange range;
};

class MatchExpr : public Expr {
public:
  XACC_CAMEL_LEAF(MatchExpr, Match)
  MatchExpr(SourceRange r, NameExpr* s) : Expr(kKind, r), subject(s) {}
  NameExpr* subject;
  std::vector<MatchCase> cases;
};

struct CatchClause {
  Ident name;
  TypeExpr* type = nullptr;
  BlockExpr* body = nullptr;
  SourceRange range;
};

class TryExpr : public Expr {
public:
  XACC_CAMEL_LEAF(TryExpr, Try)
  TryExpr(SourceRange r, BlockExpr* b) : Expr(kKind, r), body(b) {}
  BlockExpr* body;
  std::vector<CatchClause> catches;
  BlockExpr* finallyBlock = nullptr;  ///< optional
};

/// `[sync] { stmts }`: function bodies, arms, lambda bodies, nested blocks.
class BlockExpr : public Expr {
public:
  XACC_CAMEL_LEAF(BlockExpr, Block)
  BlockExpr(SourceRange r, bool s) : Expr(kKind, r), isSync(s) {}
  bool isSync;
  std::vector<Stmt*> stmts;
};

// ---------------------------------------------------------------------------
// Type expressions

class ErrorType : public TypeExpr {
public:
  XACC_CAMEL_LEAF(ErrorType, ErrorType)
  explicit ErrorType(SourceRange r) : TypeExpr(kKind, r) {}
};

/// A type name `int`, `geo::Point`.
class NamedType : public TypeExpr {
public:
  XACC_CAMEL_LEAF(NamedType, NamedType)
  NamedType(SourceRange r, std::string n) : TypeExpr(kKind, r), name(std::move(n)) {}
  std::vector<std::string> qualifiers;
  std::string name;
  std::string fullName() const;
};

/// A type argument: a type, or `const e`.
struct TypeArg {
  TypeExpr* type = nullptr;
  Expr* constValue = nullptr;
};

/// `Base<args>`, e.g. `PyObject<int>`.
class SpecializedType : public TypeExpr {
public:
  XACC_CAMEL_LEAF(SpecializedType, SpecializedType)
  SpecializedType(SourceRange r, TypeExpr* b) : TypeExpr(kKind, r), base(b) {}
  TypeExpr* base;
  std::vector<TypeArg> args;
};

class ArrayType : public TypeExpr {
public:
  XACC_CAMEL_LEAF(ArrayType, ArrayType)
  ArrayType(SourceRange r, TypeExpr* e) : TypeExpr(kKind, r), element(e) {}
  TypeExpr* element;
};

class TupleType : public TypeExpr {
public:
  XACC_CAMEL_LEAF(TupleType, TupleType)
  explicit TupleType(SourceRange r) : TypeExpr(kKind, r) {}
  std::vector<TypeExpr*> elements;
};

struct FieldType {
  Ident name;
  TypeExpr* type = nullptr;
};

class StructType : public TypeExpr {
public:
  XACC_CAMEL_LEAF(StructType, StructType)
  explicit StructType(SourceRange r) : TypeExpr(kKind, r) {}
  std::vector<FieldType> fields;
};

/// `[modifiers] [<with>] (params) => Result`; `sig.result` is always set.
class FuncType : public TypeExpr {
public:
  XACC_CAMEL_LEAF(FuncType, FuncType)
  explicit FuncType(SourceRange r) : TypeExpr(kKind, r) {}
  FunctionSig sig;
};

/// `T?` or `T ? U`.
class NullableType : public TypeExpr {
public:
  XACC_CAMEL_LEAF(NullableType, NullableType)
  NullableType(SourceRange r, TypeExpr* b) : TypeExpr(kKind, r), base(b) {}
  TypeExpr* base;
  TypeExpr* alternative = nullptr;  ///< `U` of `T ? U`
};

/// Type operators: `|` `&` `\` and the key operators `+` `-` `^`.
enum class TypeOp : uint8_t { Union, Inter, Diff, KeyUnion, KeyDiff, KeyInter };
const char* typeOpSpelling(TypeOp op);

class BinaryType : public TypeExpr {
public:
  XACC_CAMEL_LEAF(BinaryType, BinaryType)
  BinaryType(SourceRange r, TypeOp o, TypeExpr* l, TypeExpr* rr)
      : TypeExpr(kKind, r), op(o), lhs(l), rhs(rr) {}
  TypeOp op;
  TypeExpr* lhs;
  TypeExpr* rhs;
};

class TypeofType : public TypeExpr {
public:
  XACC_CAMEL_LEAF(TypeofType, TypeofType)
  TypeofType(SourceRange r, Expr* e) : TypeExpr(kKind, r), expr(e) {}
  Expr* expr;
};

class TypeasType : public TypeExpr {
public:
  XACC_CAMEL_LEAF(TypeasType, TypeasType)
  TypeasType(SourceRange r, Ident n) : TypeExpr(kKind, r), name(std::move(n)) {}
  Ident name;
};

/// `name of T`.
class OfType : public TypeExpr {
public:
  XACC_CAMEL_LEAF(OfType, OfType)
  OfType(SourceRange r, Ident n, TypeExpr* t) : TypeExpr(kKind, r), name(std::move(n)), type(t) {}
  Ident name;
  TypeExpr* type;
};

// ---------------------------------------------------------------------------
// Patterns

class WildcardPattern : public Pattern {
public:
  XACC_CAMEL_LEAF(WildcardPattern, WildcardPattern)
  explicit WildcardPattern(SourceRange r) : Pattern(kKind, r) {}
};

/// A literal pattern (IntLiteral, RealLiteral, StringLiteral, BoolLiteral, NullLiteral).
class LiteralPattern : public Pattern {
public:
  XACC_CAMEL_LEAF(LiteralPattern, LiteralPattern)
  LiteralPattern(SourceRange r, Expr* v) : Pattern(kKind, r), value(v) {}
  Expr* value;
};

class NamePattern : public Pattern {
public:
  XACC_CAMEL_LEAF(NamePattern, NamePattern)
  NamePattern(SourceRange r, NameExpr* n) : Pattern(kKind, r), name(n) {}
  NameExpr* name;
};

class TuplePattern : public Pattern {
public:
  XACC_CAMEL_LEAF(TuplePattern, TuplePattern)
  explicit TuplePattern(SourceRange r) : Pattern(kKind, r) {}
  std::vector<Expr*> elements;
};

/// `{ a: e, ... }` or `{ a, b }` (shorthand fields have a null value).
class StructPattern : public Pattern {
public:
  XACC_CAMEL_LEAF(StructPattern, StructPattern)
  explicit StructPattern(SourceRange r) : Pattern(kKind, r) {}
  std::vector<FieldInit> fields;
};

#undef XACC_CAMEL_ABSTRACT
#undef XACC_CAMEL_LEAF

// ---------------------------------------------------------------------------
// Ownership and traversal

/// Owns every node of one or more trees. Nodes live until the context dies.
class ASTContext {
public:
  template <typename T, typename... Args>
  T* make(Args&&... args) {
    auto node = std::make_unique<T>(std::forward<Args>(args)...);
    T* raw = node.get();
    nodes_.push_back(std::move(node));
    return raw;
  }
  size_t size() const { return nodes_.size(); }
  /// Destroys the nodes allocated after the first `n` (speculative parses).
  void truncate(size_t n) {
    if (n < nodes_.size()) nodes_.resize(n);
  }

private:
  std::vector<std::unique_ptr<Node>> nodes_;
};

/// Calls `fn` on each direct child node of `n` in source order (statements,
/// expressions, types, patterns, including those inside Params, Arguments,
/// Decorators, cases and catch clauses). Null optional children are skipped.
void forEachChild(const Node* n, const std::function<void(Node*)>& fn);

/// Readable, stable, indented dump of a tree (one node per line, with ranges).
std::string dumpAST(const Node* n);

/// CRTP dispatch on the node kind: `Derived` implements `visitX(X*)` for the
/// classes it cares about; the defaults call `visitNode`, which visits the
/// children. Example: a counter of calls overrides only `visitCallExpr`.
template <typename Derived>
class ASTVisitor {
public:
  void visit(Node* n) {
    if (!n) return;
    switch (n->kind()) {
#define NODE(Kind, Class)                                                   \
  case NodeKind::Kind:                                                      \
    return static_cast<Derived*>(this)->visit##Class(static_cast<Class*>(n));
#include "xacc/camel/ASTNodes.def"
    }
  }
  void visitChildren(Node* n) {
    forEachChild(n, [this](Node* c) { visit(c); });
  }
  void visitNode(Node* n) { visitChildren(n); }
#define NODE(Kind, Class) \
  void visit##Class(Class* n) { static_cast<Derived*>(this)->visitNode(n); }
#include "xacc/camel/ASTNodes.def"
};

}  // namespace xacc::camel
