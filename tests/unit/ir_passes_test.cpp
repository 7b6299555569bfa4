// Unit tests for the passes on graphs built through the C++ API: each pass by
// itself (what it removes, merges, folds or rewrites, and its statistic), the
// effect rules every pass must keep, the pass registry and pipeline parsing,
// and that passes preserve what the interpreter computes.
#include "xacc/passes/PassManager.h"
#include "xacc/passes/Autodiff.h"

#include <gtest/gtest.h>

#include "ir_test_util.h"
#include "xacc/ir/Builder.h"
#include "xacc/ir/Interpreter.h"

using namespace xacc::ir;
using xacc::ir::testing::expectUsesConsistent;
using xacc::ir::testing::nodesNamed;
using xacc::passes::PassContext;
using xacc::passes::PassManager;
using xacc::passes::Statistics;
using xacc::support::DiagnosticEngine;
using xacc::support::SourceManager;

namespace {

struct PassTest : ::testing::Test {
  SourceManager sm;
  DiagnosticEngine diag{&sm};
  Module module;
  Statistics stats;

  Graph& newGraph(const std::string& name) { return *module.add(std::make_unique<Graph>(name)); }

  void runPass(std::string_view name) {
    auto pass = xacc::passes::createPass(name);
    ASSERT_TRUE(pass) << name;
    PassContext ctx{diag, stats};
    ASSERT_TRUE(pass->run(module, ctx)) << diag.renderAllText();
    for (auto& g : module.graphs()) expectUsesConsistent(*g);
    EXPECT_TRUE(verifyModule(module, diag)) << name << ":\n" << diag.renderAllText();
  }

  std::vector<Datum> interpret(const Graph& g, const std::vector<Datum>& args, std::string* out) {
    Interpreter interp(diag, &module);
    interp.setOutput([&](std::string_view s) { out->append(s); });
    std::vector<Datum> results;
    EXPECT_TRUE(interp.run(g, args, results)) << diag.renderAllText();
    return results;
  }
};

TEST_F(PassTest, RegistryListsEveryPassInDeclarationOrder) {
  std::vector<std::string> names;
  for (const auto& p : xacc::passes::passRegistry()) {
    names.push_back(p.name);
    EXPECT_FALSE(p.description.empty());
    EXPECT_EQ(p.create()->name(), p.name);
  }
  EXPECT_EQ(names, std::vector<std::string>({"dce", "const-fold", "cse", "canonicalize", "inline",
                                             "erase-device-code", "sequence-effects", "grad", "amp"}));
  EXPECT_EQ(xacc::passes::createPass("nope"), nullptr);
}

TEST_F(PassTest, PipelineParsingAndUnknownPass) {
  PassManager pm(diag);
  EXPECT_TRUE(pm.addPipeline(" dce , cse,,inline "));
  EXPECT_TRUE(pm.run(module));
  ASSERT_EQ(pm.timings().size(), 3u);
  EXPECT_EQ(pm.timings()[0].first, "dce");
  EXPECT_EQ(pm.timings()[2].first, "inline");
  PassManager bad(diag);
  EXPECT_FALSE(bad.addPipeline("dce,frobnicate"));
  ASSERT_EQ(diag.diagnostics().size(), 1u);
  EXPECT_EQ(diag.diagnostics()[0].code, "E0301");
  EXPECT_NE(diag.diagnostics()[0].suggestion.find("const-fold"), std::string::npos);
}

TEST_F(PassTest, DceKeepsTheTokenChainAndDropsTheRest) {
  Graph& g = newGraph("f");
  Value* t = g.addParam(Type::token());
  Value* a = g.addParam(Type::i64());
  Builder b(g);
  Node* kept = b.create(CoreOp::Print, {t, a});
  b.create(CoreOp::Print, {kept->result(0), b.value(CoreOp::Neg, {a})});  // token unused
  b.value(CoreOp::Mul, {a, a});                                             // unused
  g.addResult(kept->result(0));
  runPass("dce");
  EXPECT_EQ(g.numNodes(), 1u);
  EXPECT_EQ(g.front(), kept);
  EXPECT_EQ(stats["dce.nodes-erased"], 3);
}

TEST_F(PassTest, CseMergesPureNodesButNeverEffects) {
  Graph& g = newGraph("f");
  Value* t = g.addParam(Type::token());
  Value* a = g.addParam(Type::i64());
  Value* c = g.addParam(Type::i64());
  Builder b(g);
  Value* x1 = b.value(CoreOp::Add, {a, c});
  Value* x2 = b.value(CoreOp::Add, {c, a});  // commutative
  Value* s1 = b.value(CoreOp::Sub, {a, c});
  Value* s2 = b.value(CoreOp::Sub, {c, a});  // not commutative
  Node* p1 = b.create(CoreOp::Print, {t, x1});
  Node* p2 = b.create(CoreOp::Print, {t, x2});
  Value* l1 = b.value(CoreOp::ListMake, {a});
  Value* l2 = b.value(CoreOp::ListMake, {a});
  g.addResult(b.value(CoreOp::Join, {p1->result(0), p2->result(0)}));
  for (Value* v : {x2, s1, s2, l1, l2}) g.addResult(v);
  runPass("cse");
  EXPECT_EQ(stats["cse.nodes-merged"], 1);
  EXPECT_EQ(nodesNamed(g, "arith.add").size(), 1u);
  EXPECT_EQ(nodesNamed(g, "arith.sub").size(), 2u);
  EXPECT_EQ(nodesNamed(g, "io.print").size(), 2u);
  EXPECT_EQ(nodesNamed(g, "list.make").size(), 2u);
  EXPECT_EQ(p2->operand(1), x1);
}

TEST_F(PassTest, ConstFoldUsesTheInterpreterAndLeavesFailuresAlone) {
  Graph& g = newGraph("f");
  Builder b(g);
  Value* six = b.constInt(6);
  Value* zero = b.constInt(0);
  Value* m = b.value(CoreOp::Mul, {six, b.constInt(7)});
  Value* d = b.value(CoreOp::Div, {six, zero});
  Value* l = b.value(CoreOp::ListMake, {six, m});
  Value* len = b.value(CoreOp::ListLen, {l});
  g.addResult(m);
  g.addResult(d);
  g.addResult(len);
  runPass("const-fold");
  EXPECT_EQ(stats["const-fold.nodes-folded"], 1);  // the mul; lists are mutable, never "known"
  ASSERT_TRUE(g.results()[0]->definingNode()->op().is(CoreOp::Const));
  EXPECT_EQ(g.results()[0]->definingNode()->attr("value")->getInt(), 42);
  EXPECT_TRUE(g.results()[1]->definingNode()->op().is(CoreOp::Div));
  EXPECT_TRUE(g.results()[2]->definingNode()->op().is(CoreOp::ListLen));
  EXPECT_EQ(nodesNamed(g, "list.make").size(), 1u);  // a list has no constant form
}

TEST_F(PassTest, CanonicalizeRulesAndConstantIfKeepTokens) {
  Graph& g = newGraph("f");
  Value* t = g.addParam(Type::token());
  Value* x = g.addParam(Type::i64());
  Value* f = g.addParam(Type::f64());
  Builder b(g);
  Value* zero = b.constInt(0);
  Value* addZero = b.value(CoreOp::Add, {zero, x});           // 0 + x -> x
  Value* fzero = b.constFloat(0.0);
  Value* faddZero = b.value(CoreOp::Add, {f, fzero});         // not for floats
  Value* cond = b.constBool(false);
  Node* ifNode = b.create(CoreOp::If, {cond, t, addZero}, {}, {Type::token()});
  for (int arm = 0; arm < 2; ++arm) {
    auto r = std::make_unique<Graph>(arm ? "else" : "then");
    Value* rt = r->addParam(Type::token());
    Value* rx = r->addParam(Type::i64());
    Builder rb(*r);
    Node* p = rb.create(CoreOp::Print, {rt, rx});
    r->addResult(p->result(0));
    ifNode->addRegion(std::move(r));
  }
  g.addResult(ifNode->result(0));
  g.addResult(faddZero);
  runPass("canonicalize");
  EXPECT_GT(stats["canonicalize.rewrites"], 0);
  EXPECT_TRUE(nodesNamed(g, "ctrl.if").empty());
  auto prints = nodesNamed(g, "io.print");
  ASSERT_EQ(prints.size(), 1u);
  EXPECT_EQ(prints[0]->operand(0), t);  // the spliced print takes the if's token
  EXPECT_EQ(prints[0]->operand(1), x);  // and 0 + x became x
  EXPECT_EQ(g.results()[0], prints[0]->result(0));
  EXPECT_TRUE(g.results()[1]->definingNode()->op().is(CoreOp::Add));
}

TEST_F(PassTest, InlineThreadsTokensAndSkipsRecursion) {
  Graph& say = newGraph("say");
  {
    Value* t = say.addParam(Type::token());
    Value* v = say.addParam(Type::i64());
    Builder b(say);
    say.addResult(b.create(CoreOp::Print, {t, v})->result(0));
  }
  Graph& rec = newGraph("rec");
  {
    Value* v = rec.addParam(Type::i64());
    Builder b(rec);
    rec.addResult(b.value(CoreOp::Call, {v}, attrs({{"callee", Attr::symbol("rec")}}), {Type::i64()}));
  }
  Graph& g = newGraph("main");
  Value* t = g.addParam(Type::token());
  Builder b(g);
  Value* one = b.constInt(1);
  Node* c1 = b.create(CoreOp::Call, {t, one}, attrs({{"callee", Attr::symbol("say")}}), {Type::token()});
  Node* c2 = b.create(CoreOp::Call, {c1->result(0), b.constInt(2)},
                      attrs({{"callee", Attr::symbol("say")}}), {Type::token()});
  Value* r = b.value(CoreOp::Call, {one}, attrs({{"callee", Attr::symbol("rec")}}), {Type::i64()});
  g.addResult(c2->result(0));
  g.addResult(r);
  runPass("inline");
  EXPECT_EQ(stats["inline.calls-inlined"], 2);
  auto prints = nodesNamed(g, "io.print");
  ASSERT_EQ(prints.size(), 2u);
  EXPECT_EQ(prints[0]->operand(0), t);
  EXPECT_EQ(prints[1]->operand(0), prints[0]->result(0));
  EXPECT_EQ(g.results()[0], prints[1]->result(0));
  EXPECT_EQ(nodesNamed(g, "func.call").size(), 1u);  // the recursive one
  EXPECT_EQ(nodesNamed(rec, "func.call").size(), 1u);
}

// A small program through every pass in turn computes and prints the same.
TEST_F(PassTest, GradOfFloatArithmeticMatchesHandDerivatives) {
  // f(x, y) = x * y / (x + y) - y; df/dx = y^2/(x+y)^2, df/dy = x^2/(x+y)^2 - 1
  Graph& g = newGraph("f");
  Value* x = g.addParam(Type::f64(), "x");
  Value* y = g.addParam(Type::f64(), "y");
  Builder b(g);
  Value* p = b.value(CoreOp::Mul, {x, y});
  Value* s = b.value(CoreOp::Add, {x, y});
  Value* q = b.value(CoreOp::Div, {p, s});
  g.addResult(b.value(CoreOp::Sub, {q, y}));
  xacc::passes::GradOptions opts;
  auto dg = xacc::passes::buildGradGraph(g, opts, diag);
  ASSERT_TRUE(dg) << diag.renderAllText();
  EXPECT_EQ(dg->name(), "f_grad");
  Graph* d = module.add(std::move(dg));
  EXPECT_TRUE(verifyModule(module, diag)) << diag.renderAllText();
  std::string out;
  auto r = interpret(*d, {Datum::real(2.0), Datum::real(3.0)}, &out);
  ASSERT_EQ(r.size(), 3u);
  EXPECT_DOUBLE_EQ(r[0].asFloat(), 6.0 / 5.0 - 3.0);
  EXPECT_DOUBLE_EQ(r[1].asFloat(), 9.0 / 25.0);
  EXPECT_DOUBLE_EQ(r[2].asFloat(), 4.0 / 25.0 - 1.0);
  // Only y: one gradient; an unsupported op on the path is a located error.
  opts.wrt = {1};
  opts.name = "dfdy";
  auto dy = xacc::passes::buildGradGraph(g, opts, diag);
  ASSERT_TRUE(dy);
  EXPECT_EQ(dy->results().size(), 2u);
  Graph& h = newGraph("h");
  Value* hx = h.addParam(Type::f64(), "x");
  Builder hb(h);
  h.addResult(hb.value(CoreOp::Mod, {hx, hx}));
  EXPECT_FALSE(xacc::passes::buildGradGraph(h, {}, diag));
  ASSERT_FALSE(diag.diagnostics().empty());
  EXPECT_EQ(diag.diagnostics().back().code, "E0303");
  EXPECT_NE(diag.diagnostics().back().message.find("'arith.mod'"), std::string::npos);
}

TEST_F(PassTest, EveryPassPreservesSemantics) {
  const char* text = R"(
graph @sq(%x: i64) -> i64 {
  %m = arith.mul(%x, %x) : i64
  return %m
}
graph @main(%t: !token) -> (i64, !token) {
  %zero = arith.const() {value = 0} : i64
  %three = arith.const() {value = 3} : i64
  %a = func.call(%three) {callee = @sq} : i64
  %b = func.call(%three) {callee = @sq} : i64
  %s = arith.add(%a, %zero) : i64
  %u = arith.add(%b, %s) : i64
  %c = cmp.lt(%zero, %three) : bool
  %r, %t2 = ctrl.if(%c, %u, %t) : (i64, !token) {
    ^then(%v: i64, %tt: !token) -> (i64, !token) {
      %p = io.print(%tt, %v) : !token
      return %v, %p
    }
    ^else(%v: i64, %tt: !token) -> (i64, !token) {
      return %v, %tt
    }
  }
  %dead = io.print(%t2, %zero) : !token
  %t3 = io.print(%t2, %r, %three) {sep = ":"} : !token
  return %r, %t3
}
)";
  std::unique_ptr<Module> parsed = xacc::ir::testing::parse(text, diag);
  ASSERT_TRUE(parsed);
  module = std::move(*parsed);
  for (auto& g : module.graphs()) g->setModule(&module);
  std::string expected;
  auto want = interpret(*module.lookup("main"), {Datum::token()}, &expected);
  ASSERT_EQ(expected, "18\n18:3\n");
  for (const char* pass : {"inline", "canonicalize", "const-fold", "cse", "dce"}) {
    runPass(pass);
    std::string out;
    auto got = interpret(*module.lookup("main"), {Datum::token()}, &out);
    EXPECT_EQ(out, expected) << "after " << pass;
    ASSERT_EQ(got.size(), want.size());
    EXPECT_TRUE(got[0].equals(want[0])) << "after " << pass;
  }
  // After the whole pipeline the arithmetic is gone.
  EXPECT_TRUE(nodesNamed(*module.lookup("main"), "arith.mul").empty());
  EXPECT_TRUE(nodesNamed(*module.lookup("main"), "func.call").empty());
}

}  // namespace
