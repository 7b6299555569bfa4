// Unit tests for graphs built through the C++ API: the Builder's type
// inference, the verifier on programmatic graphs (including a use before
// definition made by moving a node, E0210, which text cannot express), use
// lists under replaceAllUsesWith / setOperand / eraseOperand / erase (including
// operand arrays that outgrow their inline slots, many uses of one value, and
// graphs destroyed while another graph still refers to them), moving and
// transferring nodes, and Graph::clone as a deep copy with regions.
#include "xacc/ir/Graph.h"

#include <gtest/gtest.h>

#include "ir_test_util.h"
#include "xacc/ir/Builder.h"

using namespace xacc::ir;
using xacc::ir::testing::codes;
using xacc::ir::testing::expectUsesConsistent;
using xacc::support::DiagnosticEngine;
using xacc::support::SourceManager;

namespace {

struct Fixture : ::testing::Test {
  SourceManager sm;
  DiagnosticEngine diag{&sm};
  Module module;

  Graph& newGraph(const std::string& name) { return *module.add(std::make_unique<Graph>(name)); }
  bool verify() { return verifyModule(module, diag); }
};

using BuilderTest = Fixture;
using VerifierTest = Fixture;
using UseListTest = Fixture;
using CloneTest = Fixture;

TEST_F(BuilderTest, InfersResultTypesFromTheTypeRules) {
  Graph& g = newGraph("f");
  Value* a = g.addParam(Type::i64(), "a");
  Value* s = g.addParam(Type::string(), "s");
  Builder b(g);
  Value* c = b.constInt(3);
  EXPECT_EQ(c->type(), Type::i64());
  EXPECT_EQ(b.value(CoreOp::Add, {a, c})->type(), Type::i64());
  EXPECT_EQ(b.value(CoreOp::Lt, {a, c})->type(), Type::boolean());
  EXPECT_EQ(b.value(CoreOp::StrLen, {s})->type(), Type::i64());
  Value* l = b.value(CoreOp::ListMake, {a, c});
  EXPECT_EQ(l->type(), Type::list(Type::i64()));
  Value* t = b.value(CoreOp::TupleMake, {a, s});
  EXPECT_EQ(t->type(), Type::tuple({Type::i64(), Type::string()}));
  EXPECT_EQ(b.value(CoreOp::TupleGet, {t}, attrs({{"index", Attr::integer(1)}}))->type(), Type::string());
  EXPECT_EQ(b.constFloat(0.5, Type::f32())->type(), Type::f32());
  EXPECT_EQ(b.constBool(true)->type(), Type::boolean());
  EXPECT_EQ(b.constNull()->type(), Type::null());
  EXPECT_EQ(b.constStr("x")->type(), Type::string());
  Node* pop = b.create(CoreOp::ListPop, {g.addParam(Type::token(), "t"), l});
  ASSERT_TRUE(pop);
  ASSERT_EQ(pop->numResults(), 3u);
  EXPECT_EQ(pop->result(0)->type(), Type::token());
  EXPECT_EQ(pop->result(2)->type(), Type::i64());
  EXPECT_TRUE(pop->hasEffects());
  EXPECT_FALSE(pop->isPure());
  g.addResult(l);
  EXPECT_TRUE(verify()) << diag.renderAllText();
  expectUsesConsistent(g);
}

TEST_F(BuilderTest, RejectsIllTypedNodesWithAMessage) {
  Graph& g = newGraph("f");
  Value* a = g.addParam(Type::i64());
  Value* s = g.addParam(Type::string());
  Builder b(g);
  EXPECT_EQ(b.create(CoreOp::Add, {a, s}), nullptr);
  EXPECT_NE(b.error().find("operand types differ"), std::string::npos) << b.error();
  EXPECT_EQ(b.create("no.such.op", {}), nullptr);
  EXPECT_NE(b.error().find("unknown operation"), std::string::npos) << b.error();
  EXPECT_EQ(g.numNodes(), 0u);
}

TEST_F(BuilderTest, StampsTheCurrentLocationAndInsertsBeforeAPoint) {
  Graph& g = newGraph("f");
  Value* a = g.addParam(Type::i64());
  Builder b(g);
  const std::string* file = sm.internName("prog.cml");
  b.setLoc({file, 3, 4, 1});
  Node* last = b.create(CoreOp::Neg, {a});
  Builder before(g, last);
  Node* first = before.create(CoreOp::Abs, {a});
  EXPECT_EQ(g.front(), first);
  EXPECT_EQ(g.back(), last);
  EXPECT_EQ(last->loc().line, 3u);
  EXPECT_EQ(*last->loc().file, "prog.cml");
  EXPECT_FALSE(first->loc().valid());
}

TEST_F(VerifierTest, AcceptsAWellFormedProgramWithRegionsAndCalls) {
  Graph& callee = newGraph("inc");
  {
    Value* x = callee.addParam(Type::i64(), "x");
    Builder b(callee);
    callee.addResult(b.value(CoreOp::Add, {x, b.constInt(1)}));
  }
  Graph& g = newGraph("main");
  Value* c = g.addParam(Type::boolean(), "c");
  Value* a = g.addParam(Type::i64(), "a");
  Value* t = g.addParam(Type::token(), "t");
  Builder b(g);
  Node* call = b.create(CoreOp::Call, {a}, attrs({{"callee", Attr::symbol("inc")}}), {Type::i64()});
  ASSERT_TRUE(call);
  Node* ifNode = b.create(CoreOp::If, {c, call->result(0)}, {}, {Type::i64()});
  for (const char* label : {"then", "else"}) {
    auto arm = std::make_unique<Graph>(label);
    Value* p = arm->addParam(Type::i64(), "p");
    Builder ab(*arm);
    arm->addResult(std::string(label) == "then" ? ab.value(CoreOp::Neg, {p}) : p);
    ifNode->addRegion(std::move(arm));
  }
  Node* print = b.create(CoreOp::Print, {t, ifNode->result(0)});
  ASSERT_TRUE(print);
  g.addResult(ifNode->result(0));
  g.addResult(print->result(0));
  EXPECT_TRUE(verify()) << diag.renderAllText();
  EXPECT_EQ(g.totalNodes(), 4u);  // call, if, print + the neg in ^then
  expectUsesConsistent(g);
}

TEST_F(VerifierTest, UseBeforeDefinitionAfterMovingANodeIsE0210) {
  Graph& g = newGraph("f");
  Value* a = g.addParam(Type::i64(), "a");
  Builder b(g);
  Value* x = b.value(CoreOp::Neg, {a});
  Value* y = b.value(CoreOp::Add, {x, a});
  g.addResult(y);
  ASSERT_TRUE(verify()) << diag.renderAllText();
  // Move the user in front of its operand's definition.
  g.moveBefore(y->definingNode(), x->definingNode());
  EXPECT_EQ(g.front(), y->definingNode());
  EXPECT_FALSE(verify());
  EXPECT_EQ(codes(diag), std::vector<std::string>({"E0210"}));
  EXPECT_NE(diag.diagnostics()[0].message.find("operand 0 is not defined before use"),
            std::string::npos)
      << diag.diagnostics()[0].message;
  // Moving it back (to the end) fixes the graph.
  diag.clear();
  g.moveBefore(y->definingNode(), nullptr);
  EXPECT_TRUE(verify()) << diag.renderAllText();
}

TEST_F(VerifierTest, ReturningAValueOfAnotherGraphIsE0210) {
  Graph& other = newGraph("other");
  Value* foreign = other.addParam(Type::i64());
  other.addResult(foreign);
  Graph& g = newGraph("f");
  g.addResult(foreign, Type::i64());
  EXPECT_FALSE(verify());
  EXPECT_EQ(codes(diag), std::vector<std::string>({"E0210"}));
}

TEST_F(VerifierTest, AnOperandFromOutsideARegionIsE0210) {
  Graph& g = newGraph("f");
  Value* c = g.addParam(Type::boolean());
  Value* a = g.addParam(Type::i64());
  Builder b(g);
  Node* ifNode = b.create(CoreOp::If, {c}, {}, {Type::i64()});
  for (const char* label : {"then", "else"}) {
    auto arm = std::make_unique<Graph>(label);
    Builder ab(*arm);
    // Regions are isolated from above: `a` is not visible in them.
    arm->addResult(ab.value(CoreOp::Neg, {a}));
    ifNode->addRegion(std::move(arm));
  }
  g.addResult(ifNode->result(0));
  EXPECT_FALSE(verify());
  ASSERT_FALSE(diag.diagnostics().empty());
  EXPECT_EQ(diag.diagnostics()[0].code, "E0210");
}

TEST_F(VerifierTest, CountsAndTokensOfBuiltNodes) {
  Graph& g = newGraph("f");
  Value* a = g.addParam(Type::i64());
  Value* t = g.addParam(Type::token());
  // Graph::create bypasses the builder's checks; the verifier catches them.
  const OpRegistry& reg = OpRegistry::get();
  g.create(reg.core(CoreOp::Neg), {a, a}, {Type::i64()});
  g.create(reg.core(CoreOp::Print), {a}, {Type::token()});
  g.create(reg.core(CoreOp::StrFrom), {t}, {Type::string()});
  g.create(reg.core(CoreOp::TupleGet), {a}, {Type::i64()});
  EXPECT_FALSE(verify());
  EXPECT_EQ(codes(diag), std::vector<std::string>({"E0202", "E0203", "E0203", "E0201"}));
  for (const auto& d : diag.diagnostics()) EXPECT_FALSE(d.loc.valid());  // built nodes have no loc
}

TEST_F(UseListTest, ReplaceAllUsesWithRedirectsOperandsAndResults) {
  Graph& g = newGraph("f");
  Value* a = g.addParam(Type::i64(), "a");
  Value* bParam = g.addParam(Type::i64(), "b");
  Builder b(g);
  Value* x = b.value(CoreOp::Neg, {a});
  Value* y = b.value(CoreOp::Add, {x, x});
  Value* z = b.value(CoreOp::Mul, {x, y});
  g.addResult(x);
  g.addResult(z);
  EXPECT_EQ(x->uses().size(), 4u);  // twice in add, once in mul, once as a result
  x->replaceAllUsesWith(bParam);
  EXPECT_FALSE(x->hasUses());
  EXPECT_EQ(bParam->uses().size(), 4u);
  EXPECT_EQ(y->definingNode()->operand(0), bParam);
  EXPECT_EQ(y->definingNode()->operand(1), bParam);
  EXPECT_EQ(z->definingNode()->operand(0), bParam);
  EXPECT_EQ(g.results()[0], bParam);
  EXPECT_TRUE(x->definingNode()->allResultsUnused());
  g.erase(x->definingNode());
  expectUsesConsistent(g);
  EXPECT_TRUE(verify()) << diag.renderAllText();
  // Replacing a value with itself is a no-op.
  bParam->replaceAllUsesWith(bParam);
  EXPECT_EQ(bParam->uses().size(), 4u);
  expectUsesConsistent(g);
}

TEST_F(UseListTest, SetEraseAndDropOperandsKeepUsesInStep) {
  Graph& g = newGraph("f");
  Value* t = g.addParam(Type::token(), "t");
  Value* u = g.addParam(Type::token(), "u");
  Value* v = g.addParam(Type::token(), "v");
  Builder b(g);
  Node* join = b.create(CoreOp::Join, {t, u, v, u});
  g.addResult(join->result(0));
  expectUsesConsistent(g);
  join->eraseOperand(1);  // later operands are renumbered
  ASSERT_EQ(join->numOperands(), 3u);
  EXPECT_EQ(join->operand(1), v);
  EXPECT_EQ(join->operand(2), u);
  expectUsesConsistent(g);
  join->setOperand(0, v);
  EXPECT_FALSE(t->hasUses());
  expectUsesConsistent(g);
  join->addOperand(t);
  expectUsesConsistent(g);
  g.setResult(0, u);
  expectUsesConsistent(g);
  join->dropAllOperands();
  EXPECT_EQ(join->numOperands(), 0u);
  expectUsesConsistent(g);
  g.erase(join);
  EXPECT_EQ(g.numNodes(), 0u);
  expectUsesConsistent(g);
}

TEST_F(UseListTest, TransferToMovesANodeBetweenGraphs) {
  Graph& g = newGraph("f");
  Value* a = g.addParam(Type::i64());
  Builder b(g);
  Node* c = b.create(CoreOp::Const, {}, attrs({{"value", Attr::integer(1)}}), {Type::i64()});
  Node* n = b.create(CoreOp::Neg, {a});
  g.addResult(n->result(0));
  Graph& h = newGraph("h");
  g.transferTo(c, h);
  EXPECT_EQ(g.numNodes(), 1u);
  EXPECT_EQ(h.numNodes(), 1u);
  EXPECT_EQ(c->parent(), &h);
  EXPECT_EQ(h.front(), c);
  h.addResult(c->result(0));
  expectUsesConsistent(g);
  expectUsesConsistent(h);
}

TEST_F(UseListTest, GrowingPastTheInlineOperandsKeepsUsesLinked) {
  // A node's first operands live in its arena block; adding more moves them to
  // a bigger array, and every use-list link into the old slots must follow.
  Graph& g = newGraph("f");
  Value* t = g.addParam(Type::token(), "t");
  Value* u = g.addParam(Type::token(), "u");
  Builder b(g);
  Node* first = b.create(CoreOp::Join, {t, u});
  Node* join = b.create(CoreOp::Join, {t, u});
  Node* last = b.create(CoreOp::Join, {u, t});
  g.addResult(last->result(0));
  for (int i = 0; i < 20; ++i) join->addOperand(i % 2 ? t : first->result(0));
  ASSERT_EQ(join->numOperands(), 22u);
  EXPECT_EQ(t->uses().size(), 13u);  // first, join x11, last
  expectUsesConsistent(g);
  join->eraseOperand(0);
  join->setOperand(5, u);
  expectUsesConsistent(g);
  // Uses are listed in the order they were made.
  std::vector<const Node*> users;
  for (const Use& use : u->uses()) users.push_back(use.user);
  ASSERT_GE(users.size(), 3u);
  EXPECT_EQ(users.front(), first);
  g.setResult(0, join->result(0));
  g.erase(last);
  expectUsesConsistent(g);
  EXPECT_TRUE(verify()) << diag.renderAllText();
}

TEST_F(UseListTest, AValueWithManyUsesLosesThemOneByOne) {
  // The fan-out shape: removing any one use is O(1), and counts stay exact.
  Graph& g = newGraph("f");
  Value* x = g.addParam(Type::i64(), "x");
  Builder b(g);
  std::vector<Node*> users;
  for (int i = 0; i < 2000; ++i) users.push_back(b.create(CoreOp::Neg, {x}));
  EXPECT_EQ(x->uses().size(), 2000u);
  for (size_t i = 0; i < users.size(); i += 2) g.erase(users[i]);
  EXPECT_EQ(x->uses().size(), 1000u);
  size_t walked = 0;
  for (const Use& use : x->uses()) {
    EXPECT_EQ(use.user->operand(use.index), x);
    ++walked;
  }
  EXPECT_EQ(walked, 1000u);
  expectUsesConsistent(g);
}

TEST_F(UseListTest, ATransferredNodeOutlivesTheGraphItCameFrom) {
  // Nodes live in their graph's arena; a graph that received one keeps that
  // arena alive after the source graph is gone.
  auto src = std::make_unique<Graph>("src");
  Builder b(*src);
  Node* c = b.create(CoreOp::Const, {}, attrs({{"value", Attr::integer(7)}}), {Type::i64()});
  Node* dead = b.create(CoreOp::Const, {}, attrs({{"value", Attr::integer(8)}}), {Type::i64()});
  Graph& dst = newGraph("dst");
  src->transferTo(c, dst);
  src->erase(dead);
  src.reset();
  Builder db(dst);
  Node* n = db.create(CoreOp::Neg, {c->result(0)});
  dst.addResult(n->result(0));
  EXPECT_EQ(c->attr("value")->getInt(), 7);
  expectUsesConsistent(dst);
  EXPECT_TRUE(verify()) << diag.renderAllText();
}

TEST_F(UseListTest, DestroyingAGraphDetachesUsersInOtherGraphs) {
  // Broken isolation (a value used from another graph) must not leave a
  // dangling operand behind when the defining graph goes away.
  auto other = std::make_unique<Graph>("other");
  Value* p = other->addParam(Type::i64(), "p");
  Builder ob(*other);
  Value* q = ob.value(CoreOp::Neg, {p});
  Graph& g = newGraph("f");
  Builder b(g);
  Node* user = b.create(CoreOp::Add, {p, q});
  g.addResult(q);
  other.reset();
  EXPECT_EQ(user->operand(0), nullptr);
  EXPECT_EQ(user->operand(1), nullptr);
  EXPECT_EQ(g.results()[0], nullptr);
  EXPECT_FALSE(verify());
}

TEST_F(CloneTest, IsADeepCopyWithRegions) {
  const char* text = R"(
graph @f(%c: bool, %a: i64, %t: !token) -> (i64, !token) {
  %k = arith.const() {value = 2} : i64 loc("src.cml":4:2)
  %r = ctrl.if(%c, %a) : i64 {
    ^then(%p: i64) -> i64 {
      %q = arith.mul(%p, %p) : i64
      return %q
    }
    ^else(%p: i64) -> i64 {
      return %p
    }
  }
  %s = arith.add(%r, %k) : i64
  %t1 = io.print(%t, %s) {sep = ","} : !token
  return %s, %t1
}
)";
  auto m = xacc::ir::testing::parse(text, diag);
  ASSERT_TRUE(m);
  const Graph& g = *m->graphs()[0];
  std::string before = printGraph(g);
  std::unique_ptr<Graph> copy = g.clone();
  EXPECT_EQ(printGraph(*copy), before);
  expectUsesConsistent(*copy);
  // No value, node or region is shared.
  EXPECT_EQ(copy->module(), nullptr);
  for (size_t i = 0; i < g.numParams(); ++i) EXPECT_NE(copy->param(i), g.param(i));
  std::vector<Node*> orig, dup;
  for (Node* n : g) orig.push_back(n);
  for (Node* n : *copy) dup.push_back(n);
  ASSERT_EQ(orig.size(), dup.size());
  for (size_t i = 0; i < orig.size(); ++i) {
    EXPECT_NE(orig[i], dup[i]);
    EXPECT_EQ(dup[i]->parent(), copy.get());
    for (size_t j = 0; j < dup[i]->numOperands(); ++j)
      EXPECT_EQ(dup[i]->operand(j)->ownerGraph(), copy.get());
    for (size_t r = 0; r < dup[i]->numRegions(); ++r) {
      EXPECT_NE(dup[i]->region(r), orig[i]->region(r));
      EXPECT_EQ(dup[i]->region(r)->parentNode(), dup[i]);
      EXPECT_EQ(dup[i]->region(r)->label(), orig[i]->region(r)->label());
    }
    EXPECT_EQ(dup[i]->loc().line, orig[i]->loc().line);
    EXPECT_EQ(dup[i]->attrs(), orig[i]->attrs());
  }
  // Mutating the copy (including inside a region) leaves the original alone.
  Graph* thenArm = dup[1]->region(0);
  Builder b(*thenArm);
  thenArm->setResult(0, b.value(CoreOp::Neg, {thenArm->param(0)}));
  copy->setResult(0, copy->param(1));
  Node* dead = dup[2];
  ASSERT_EQ(dead->opName(), "arith.add");
  dead->result(0)->replaceAllUsesWith(copy->param(1));
  copy->erase(dead);
  EXPECT_EQ(printGraph(g), before);
  expectUsesConsistent(g);
  expectUsesConsistent(*copy);
  // The copy verifies once attached to a module.
  Module m2;
  m2.add(std::move(copy));
  EXPECT_TRUE(verifyModule(m2, diag)) << diag.renderAllText();
}

TEST_F(CloneTest, ModuleLookupAndErase) {
  newGraph("a");
  newGraph("b");
  EXPECT_EQ(module.lookup("b")->name(), "b");
  EXPECT_EQ(module.lookup("c"), nullptr);
  EXPECT_TRUE(module.erase("a"));
  EXPECT_FALSE(module.erase("a"));
  EXPECT_EQ(module.graphs().size(), 1u);
  EXPECT_EQ(module.lookup("b")->module(), &module);
}

}  // namespace

using DenseIdTest = Fixture;

// Value::id() is dense and unique per graph, definingNode() finds a result's
// node, and a node moved to another graph is renumbered there.
TEST_F(DenseIdTest, ValueIdsAreUniquePerGraphAndFollowTransfers) {
  Graph& g = newGraph("f");
  Graph& h = newGraph("h");
  Value* a = g.addParam(Type::i64(), "a");
  Builder b(g);
  std::vector<Value*> all{a};
  for (int i = 0; i < 50; ++i) all.push_back(b.value(CoreOp::Add, {all.back(), a}));
  Node* pop = b.create(CoreOp::ListPop, {g.addParam(Type::token(), "t"),
                                         b.value(CoreOp::ListMake, {a, a})});
  ASSERT_TRUE(pop);
  for (size_t i = 0; i < pop->numResults(); ++i) {
    all.push_back(pop->result(i));
    EXPECT_EQ(pop->result(i)->definingNode(), pop);
    EXPECT_EQ(pop->result(i)->ownerGraph(), &g);
  }
  EXPECT_EQ(a->definingNode(), nullptr);
  std::vector<bool> seen(g.valueIdBound(), false);
  for (Value* v : all) {
    ASSERT_LT(v->id(), g.valueIdBound());
    EXPECT_FALSE(seen[v->id()]);
    seen[v->id()] = true;
  }
  Value* x = h.addParam(Type::i64(), "x");
  Node* moved = all[1]->definingNode();
  g.transferTo(moved, h);
  EXPECT_EQ(moved->result(0)->ownerGraph(), &h);
  EXPECT_LT(moved->result(0)->id(), h.valueIdBound());
  EXPECT_NE(moved->result(0)->id(), x->id());
  EXPECT_EQ(moved->result(0)->definingNode(), moved);
}

// A clone maps every operand through the dense ids, regions included.
TEST_F(DenseIdTest, CloneOfAGraphWithErasedNodesPrintsTheSame) {
  Graph& g = newGraph("f");
  Value* a = g.addParam(Type::i64(), "a");
  Builder b(g);
  Value* dead = b.value(CoreOp::Neg, {a});
  Value* c = b.value(CoreOp::Add, {a, b.constInt(2)});
  g.erase(dead->definingNode());
  g.addResult(b.value(CoreOp::Mul, {c, c}));
  auto copy = g.clone();
  EXPECT_EQ(copy->numNodes(), g.numNodes());
  EXPECT_EQ(copy->results()[0]->definingNode()->operand(0),
            copy->results()[0]->definingNode()->operand(1));
  EXPECT_EQ(copy->results()[0]->definingNode()->operand(0)->definingNode()->operand(0),
            copy->param(0));
}
