// Unit tests of the Camel parser: operator precedence and associativity of
// spec section 5 (checked through a compact S-expression rendering), the
// ambiguity rules of 4.7, adjacency (3.7), sign folding, source ranges,
// AST traversal helpers, and robustness against hostile input.
#include <gtest/gtest.h>

#include <string>

#include "xacc/camel/AST.h"
#include "xacc/camel/Parser.h"

using namespace xacc::camel;
using xacc::support::DiagnosticEngine;
using xacc::support::SourceManager;

namespace {

/// Renders expressions as S-expressions: `(+ a (* b c))`.
std::string sexpr(const Node* n) {
  if (!n) return "_";
  switch (n->kind()) {
    case NodeKind::IntLiteral: return std::to_string(cast<IntLiteral>(n)->value);
    case NodeKind::RealLiteral: return formatReal(cast<RealLiteral>(n)->value);
    case NodeKind::StringLiteral: return "'" + cast<StringLiteral>(n)->value + "'";
    case NodeKind::BoolLiteral: return cast<BoolLiteral>(n)->value ? "true" : "false";
    case NodeKind::NullLiteral: return "null";
    case NodeKind::Name: return cast<NameExpr>(n)->fullName();
    case NodeKind::ErrorExpr: return "<error>";
    case NodeKind::Unary: {
      auto* u = cast<UnaryExpr>(n);
      return std::string("(") + unaryOpSpelling(u->op) + " " + sexpr(u->operand) + ")";
    }
    case NodeKind::Binary: {
      auto* b = cast<BinaryExpr>(n);
      return std::string("(") + binaryOpSpelling(b->op) + " " + sexpr(b->lhs) + " " +
             sexpr(b->rhs) + ")";
    }
    case NodeKind::Assign: {
      auto* a = cast<AssignExpr>(n);
      return std::string("(") + assignOpSpelling(a->op) + " " + sexpr(a->target) + " " +
             sexpr(a->value) + ")";
    }
    case NodeKind::Wait: return "(wait " + sexpr(cast<WaitExpr>(n)->operand) + ")";
    case NodeKind::Cast: {
      auto* c = cast<CastExpr>(n);
      return std::string(c->isTest ? "(is " : "(as ") + sexpr(c->operand) + " " + sexpr(c->type) + ")";
    }
    case NodeKind::Call:
    case NodeKind::With: {
      bool call = n->kind() == NodeKind::Call;
      const Expr* callee = call ? cast<CallExpr>(n)->callee : cast<WithExpr>(n)->callee;
      const auto& args = call ? cast<CallExpr>(n)->args : cast<WithExpr>(n)->args;
      std::string s = std::string(call ? "(call " : "(with ") + sexpr(callee);
      for (const Argument& a : args) s += " " + sexpr(a.value);
      return s + ")";
    }
    case NodeKind::Index: {
      auto* i = cast<IndexExpr>(n);
      return "(index " + sexpr(i->base) + " " + sexpr(i->index) + ")";
    }
    case NodeKind::NonNull: return "(! " + sexpr(cast<NonNullExpr>(n)->operand) + ")";
    case NodeKind::Member: {
      auto* m = cast<MemberExpr>(n);
      return "(. " + sexpr(m->base) + " " + m->member.name + ")";
    }
    case NodeKind::Tuple: {
      std::string s = "(tuple";
      for (const Expr* e : cast<TupleExpr>(n)->elements) s += " " + sexpr(e);
      return s + ")";
    }
    case NodeKind::Array: {
      std::string s = "[";
      for (const Argument& a : cast<ArrayExpr>(n)->elements) s += (s.size() > 1 ? " " : "") + sexpr(a.value);
      return s + "]";
    }
    case NodeKind::Struct: {
      std::string s = "{";
      for (const FieldInit& f : cast<StructExpr>(n)->fields)
        s += (s.size() > 1 ? " " : "") + f.name.name + ":" + sexpr(f.value);
      return s + "}";
    }
    case NodeKind::If: {
      auto* i = cast<IfExpr>(n);
      return "(if " + sexpr(i->cond) + " " + sexpr(i->thenArm) + " " + sexpr(i->elseArm) + ")";
    }
    case NodeKind::Lambda: return "(lambda " + sexpr(cast<LambdaExpr>(n)->body) + ")";
    case NodeKind::Block: return cast<BlockExpr>(n)->isSync ? "{sync}" : "{block}";
    case NodeKind::NamedType: return cast<NamedType>(n)->fullName();
    case NodeKind::ArrayType: return sexpr(cast<ArrayType>(n)->element) + "[]";
    case NodeKind::SpecializedType: {
      auto* s = cast<SpecializedType>(n);
      std::string out = sexpr(s->base) + "<";
      for (size_t i = 0; i < s->args.size(); ++i) out += (i ? "," : "") + sexpr(s->args[i].type);
      return out + ">";
    }
    default: return std::string("<") + nodeKindName(n->kind()) + ">";
  }
}

struct Parsed {
  SourceManager sm;
  DiagnosticEngine diags{&sm};
  ASTContext ctx;
  std::string text;
  Module* module = nullptr;

  explicit Parsed(std::string src, ParseOptions opts = {}) : text(std::move(src)) {
    const std::string* file = sm.addBuffer("test.cml", text);
    module = parseSource(sm.bufferText(file), file, ctx, diags, opts);
  }
  std::vector<std::string> codes() const {
    std::vector<std::string> out;
    for (const auto& d : diags.diagnostics()) out.push_back(d.code);
    return out;
  }
};

/// Parses `let __e = <expr>` inside a function and renders the value.
std::string expr(const std::string& e, std::string* codes = nullptr) {
  Parsed p("func t() {\nlet __e = " + e + "\n}\n");
  if (codes)
    for (auto& c : p.codes()) *codes += c + " ";
  else if (p.diags.hasErrors())
    return "ERROR: " + p.diags.renderAllText();
  auto* f = dyn_cast<FuncDecl>(p.module->decls.at(0));
  if (!f || !f->body || f->body->stmts.empty()) return "NO STMT";
  auto* d = dyn_cast<DataDecl>(f->body->stmts[0]);
  if (!d || d->values.empty()) return "NO VALUE";
  std::string s = sexpr(d->values[0]);
  for (size_t i = 1; i < f->body->stmts.size(); ++i) {
    auto* es = dyn_cast<ExprStmt>(f->body->stmts[i]);
    s += " ; " + (es ? sexpr(es->expr) : std::string("<stmt>"));
  }
  return s;
}

TEST(CamelParserPrecedence, ArithmeticLevels) {
  EXPECT_EQ(expr("a + b * c"), "(+ a (* b c))");
  EXPECT_EQ(expr("a * b + c"), "(+ (* a b) c)");
  EXPECT_EQ(expr("a - b - c"), "(- (- a b) c)");  // left-associative
  EXPECT_EQ(expr("a / b % c @ d"), "(@ (% (/ a b) c) d)");
}

TEST(CamelParserPrecedence, PowerSharesTheMultiplicativeLevel) {
  EXPECT_EQ(expr("2 * 3 ^ 2"), "(^ (* 2 3) 2)");
  EXPECT_EQ(expr("2 ^ 3 ^ 2"), "(^ (^ 2 3) 2)");  // not right-associative
  EXPECT_EQ(expr("2 ^ 3 + 1"), "(+ (^ 2 3) 1)");
}

TEST(CamelParserPrecedence, ComparisonAndLogic) {
  EXPECT_EQ(expr("a < b + 1"), "(< a (+ b 1))");
  EXPECT_EQ(expr("a == b < c"), "(== a (< b c))");
  EXPECT_EQ(expr("a || b && c"), "(|| a (&& b c))");
  EXPECT_EQ(expr("a && b || c && d"), "(|| (&& a b) (&& c d))");
  EXPECT_EQ(expr("a === b != c !== d"), "(!== (!= (=== a b) c) d)");
  EXPECT_EQ(expr("a <= b >= c"), "(>= (<= a b) c)");
}

TEST(CamelParserPrecedence, NullOperatorsTakeAWholeExpression) {
  EXPECT_EQ(expr("a ?? b + c"), "(?? a (+ b c))");
  EXPECT_EQ(expr("a + b ?? c"), "(+ a (?? b c))");
  EXPECT_EQ(expr("a !! b || c"), "(!! a (|| b c))");
}

TEST(CamelParserPrecedence, UnaryAndCasts) {
  EXPECT_EQ(expr("-a->f"), "(- (-> a f))");
  EXPECT_EQ(expr("!a && b"), "(&& (! a) b)");
  EXPECT_EQ(expr("~a * b"), "(* (~ a) b)");
  EXPECT_EQ(expr("v as float * 2.0"), "(* (as v float) 2.0)");
  EXPECT_EQ(expr("x as int + 1"), "(+ (as x int) 1)");
  EXPECT_EQ(expr("x->f as int"), "(as (-> x f) int)");
  EXPECT_EQ(expr("d as int[]"), "(as d int[])");
  EXPECT_EQ(expr("o as PyObject<int>"), "(as o PyObject<int>)");
  EXPECT_EQ(expr("x is int"), "(is x int)");
}

TEST(CamelParserPrecedence, PipesCompositionAndPostfix) {
  EXPECT_EQ(expr("x->f->g"), "(-> (-> x f) g)");
  EXPECT_EQ(expr("x->f<w>"), "(-> x (with f w))");
  EXPECT_EQ(expr("x->h(y)"), "(-> x (call h y))");
  EXPECT_EQ(expr("f .. g .. h"), "(.. (.. f g) h)");
  EXPECT_EQ(expr("x->f .. g"), "(-> x (.. f g))");
  EXPECT_EQ(expr("a ?-> f"), "(?-> a f)");
  EXPECT_EQ(expr("f ?.. g"), "(?.. f g)");
  EXPECT_EQ(expr("make()(3)"), "(call (call make) 3)");
  EXPECT_EQ(expr("data.shape[0]"), "(index (. data shape) 0)");
  EXPECT_EQ(expr("f<a, b>(x, y)"), "(call (with f a b) x y)");
  EXPECT_EQ(expr("x!"), "(! x)");
  EXPECT_EQ(expr("a + b->f"), "(+ a (-> b f))");
}

TEST(CamelParserPrecedence, MemberAccess) {
  EXPECT_EQ(expr("pair.0"), "(. pair 0)");
  EXPECT_EQ(expr("(t.0).1"), "(. (. t 0) 1)");
  EXPECT_EQ(expr("a.b.c"), "(. (. a b) c)");
  EXPECT_EQ(expr("geo::area(s)"), "(call geo::area s)");
}

TEST(CamelParserPrecedence, AssignmentAndWait) {
  EXPECT_EQ(expr("x = 1 + 2"), "(= x (+ 1 2))");
  EXPECT_EQ(expr("wait x += 1"), "(wait (+= x 1))");
  EXPECT_EQ(expr("wait f(x)"), "(wait (call f x))");
  std::string codes;
  expr("x = y = z", &codes);
  EXPECT_EQ(codes, "E1117 ");
}

TEST(CamelParserPrecedence, IfExtendsAsFarAsPossible) {
  EXPECT_EQ(expr("if c then a else b + 1"), "(if c a (+ b 1))");
  EXPECT_EQ(expr("if a < b then 1 else if a == b then 0 else -1"), "(if (< a b) 1 (if (== a b) 0 -1))");
  EXPECT_EQ(expr("if c then { 1 } else sync { 2 }"), "(if c {block} {sync})");
  EXPECT_EQ(expr("if c then x"), "(if c x _)");
}

TEST(CamelParserAmbiguity, MinusRules) {
  EXPECT_EQ(expr("a-1"), "(- a 1)");   // [INTENDED]: subtraction
  EXPECT_EQ(expr("a - 1"), "(- a 1)");
  EXPECT_EQ(expr("-1"), "-1");          // folded literal
  EXPECT_EQ(expr("- 1"), "(- 1)");      // unary minus
  EXPECT_EQ(expr("-1->f"), "(-> -1 f)");
  EXPECT_EQ(expr("- -1"), "(- -1)");
  EXPECT_EQ(expr("+5"), "5");
  EXPECT_EQ(expr("-2.5"), "-2.5");
  EXPECT_EQ(expr("-9223372036854775808"), "-9223372036854775808");
  EXPECT_EQ(expr("2 * -3"), "(* 2 -3)");
  std::string codes;
  expr("a -1", &codes);
  EXPECT_EQ(codes, "W1119 ");  // subtraction, with a warning
  codes.clear();
  expr("--a", &codes);
  EXPECT_EQ(codes, "E1118 ");
  codes.clear();
  expr("9223372036854775808", &codes);
  EXPECT_EQ(codes, "E1150 ");
}

TEST(CamelParserAmbiguity, AdjacencyOfPostfixForms) {
  EXPECT_EQ(expr("f(1)"), "(call f 1)");
  EXPECT_EQ(expr("f (1)"), "f ; 1");          // not a call: two statements
  EXPECT_EQ(expr("xs[0]"), "(index xs 0)");
  EXPECT_EQ(expr("xs [0]"), "xs ; [0]");
  EXPECT_EQ(expr("f\n(1, 2)"), "f ; (tuple 1 2)");
  // `x !` is not the non-null mark: `!` starts a prefix expression with no operand.
  std::string codes;
  expr("x !", &codes);
  EXPECT_EQ(codes, "E1101 ");
}

TEST(CamelParserAmbiguity, AngleBrackets) {
  EXPECT_EQ(expr("n < limit"), "(< n limit)");
  EXPECT_EQ(expr("slice<0, 3>"), "(with slice 0 3)");
  EXPECT_EQ(expr("a<b"), "(< a b)");                   // no closing `>`
  EXPECT_EQ(expr("a<b && c > d"), "(&& (< a b) (> c d))");  // `c > d` has spaces: comparison
  EXPECT_EQ(expr("a < b > c"), "(> (< a b) c)");
  EXPECT_EQ(expr("xs->filter<(x: int): bool => x > 2>"), "(-> xs (with filter (lambda (> x 2))))");
  EXPECT_EQ(expr("xs->reduce<(a: int, b: int): int => a + b, 0>"),
            "(-> xs (with reduce (lambda (+ a b)) 0))");
  EXPECT_EQ(expr("f<g<1>>(x)"), "(call (with f (with g 1)) x)");
  EXPECT_EQ(expr("f<(a > b)>"), "(with f (> a b))");
  EXPECT_EQ(expr("xs->filter<(x: int): bool => x>2>"), "(-> xs (with filter (lambda (> x 2))))");
  EXPECT_EQ(expr("f<a>(x) > y"), "(> (call (with f a) x) y)");
  EXPECT_EQ(expr("f<a, b >"), "(with f a b)");
  EXPECT_EQ(expr("f<x>=(y)"), "(= (with f x) y)");   // `>=` split when closing
  EXPECT_EQ(expr("a<b>=c"), "(>= (< a b) c)");         // a name after `>=`: comparison
}

TEST(CamelParserAmbiguity, ParenTupleLambda) {
  EXPECT_EQ(expr("(e)"), "e");
  EXPECT_EQ(expr("(e,)"), "(tuple e)");
  EXPECT_EQ(expr("(a, b)"), "(tuple a b)");
  EXPECT_EQ(expr("()"), "(tuple)");
  EXPECT_EQ(expr("(x: int) => x"), "(lambda x)");
  EXPECT_EQ(expr("() => 1"), "(lambda 1)");
  EXPECT_EQ(expr("(): int => 1"), "(lambda 1)");
  EXPECT_EQ(expr("sync (i: int) => sync { tick(i) }"), "(lambda {sync})");
  EXPECT_EQ(expr("<k: int>(x: int) => x * k"), "(lambda (* x k))");
}

TEST(CamelParserAmbiguity, BlockOrStruct) {
  EXPECT_EQ(expr("{ x: 1, y: 2 }"), "{x:1 y:2}");
  EXPECT_EQ(expr("{}"), "{}");  // in expression position: an empty struct
  EXPECT_EQ(expr("if c then { x: 1 } else { return 2 }"), "(if c {x:1} {block})");
  EXPECT_EQ(expr("if c then {} else {}"), "(if c {block} {block})");  // arms: empty blocks
  std::string codes;
  expr("{ println(1) }", &codes);
  EXPECT_EQ(codes, "E1136 ");
}

TEST(CamelParserRanges, NodesCarryFileLineColumn) {
  Parsed p("func main(): int sync {\n    return a + foo(1)\n}\n");
  ASSERT_FALSE(p.diags.hasErrors());
  auto* f = cast<FuncDecl>(p.module->decls[0]);
  EXPECT_EQ(*f->range().file, "test.cml");
  EXPECT_EQ(f->range().line, 1u);
  EXPECT_EQ(f->range().endLine, 3u);
  auto* r = cast<ReturnStmt>(f->body->stmts[0]);
  auto* add = cast<BinaryExpr>(r->values[0]);
  EXPECT_EQ(add->range().line, 2u);
  EXPECT_EQ(add->range().col, 12u);
  EXPECT_EQ(add->range().endCol, 22u);
  EXPECT_EQ(add->loc().length, 10u);
  EXPECT_EQ(add->rhs->range().col, 16u);
  EXPECT_EQ(add->range().endOffset - add->range().offset, 10u);
}

TEST(CamelParserAPI, VisitorAndChildren) {
  Parsed p("func f(x: int): int { return g(x) + g(h(x)) }\nfunc h(y: int) { y }\n");
  ASSERT_FALSE(p.diags.hasErrors());
  struct CallCounter : ASTVisitor<CallCounter> {
    int calls = 0;
    void visitCallExpr(CallExpr* c) {
      ++calls;
      visitChildren(c);
    }
  } counter;
  counter.visit(p.module);
  EXPECT_EQ(counter.calls, 3);
  int children = 0;
  forEachChild(p.module, [&](Node*) { ++children; });
  EXPECT_EQ(children, 2);
  EXPECT_TRUE(isa<Stmt>(p.module->decls[0]));
  EXPECT_FALSE(isa<Expr>(p.module->decls[0]));
  EXPECT_NE(dyn_cast<FuncDecl>(p.module->decls[1]), nullptr);
}

TEST(CamelParserRecovery, ReportsSeveralErrors) {
  Parsed p("func main() {\n  let x = (1 + 2\n  let y = 3 +\n  let z = [1, 2\n}\n");
  EXPECT_EQ(p.codes(), (std::vector<std::string>{"E1102", "E1101", "E1103"}));
}

TEST(CamelParserRobustness, DeepNestingIsDiagnosedNotCrashing) {
  std::string deep = "func f() { let x = " + std::string(100000, '(') + "1" +
                     std::string(100000, ')') + " }";
  Parsed p(deep);
  EXPECT_EQ(p.codes(), std::vector<std::string>{"E1125"});
  std::string blocks = "func f() " + std::string(5000, '{') + std::string(5000, '}');
  EXPECT_EQ(Parsed(blocks).codes(), std::vector<std::string>{"E1125"});
  std::string ifs = "func f() { ";
  for (int i = 0; i < 5000; ++i) ifs += "if c then ";
  EXPECT_EQ(Parsed(ifs + "1 }").codes(), std::vector<std::string>{"E1125"});
  // 200 levels are fine.
  std::string ok = "func f() { let x = " + std::string(200, '[') + std::string(200, ']') + " }";
  EXPECT_FALSE(Parsed(ok).diags.hasErrors());
}

TEST(CamelParserRobustness, ErrorCapStopsParsing) {
  std::string many;
  for (int i = 0; i < 500; ++i) many += "let = 1\n";
  ParseOptions opts;
  opts.maxErrors = 10;
  Parsed p(many, opts);
  EXPECT_EQ(p.diags.errorCount(), 10u);
}

TEST(CamelParserRobustness, NestedAngleSpeculationIsNotExponential) {
  std::string s = "func f() { let x = ";
  for (int i = 0; i < 200; ++i) s += "a<";
  s += "b }";
  Parsed p(s);  // must finish quickly; these are all comparisons
  EXPECT_FALSE(p.diags.hasErrors()) << p.diags.renderAllText();
}

}  // namespace
