// Unit tests for the reference interpreter on graphs built through the C++
// API: arithmetic results, io.print output through setOutput (sep/end),
// demand-driven execution (an effect whose token is not returned does not run),
// closures and calls, and runtime errors reported with codes and locations.
#include "xacc/ir/Interpreter.h"

#include <gtest/gtest.h>

#include "ir_test_util.h"
#include "xacc/ir/Builder.h"

using namespace xacc::ir;
using xacc::ir::testing::codes;
using xacc::support::DiagnosticEngine;
using xacc::support::SourceManager;

namespace {

struct InterpreterTest : ::testing::Test {
  SourceManager sm;
  DiagnosticEngine diag{&sm};
  Module module;
  std::string printed;

  Graph& newGraph(const std::string& name) { return *module.add(std::make_unique<Graph>(name)); }
  bool run(const Graph& g, const std::vector<Datum>& args, std::vector<Datum>& results) {
    EXPECT_TRUE(verifyModule(module, diag)) << diag.renderAllText();
    Interpreter interp(diag, &module);
    interp.setOutput([&](std::string_view s) { printed.append(s); });
    return interp.run(g, args, results);
  }
};

TEST_F(InterpreterTest, ArithmeticOnBuiltGraph) {
  Graph& g = newGraph("f");
  Value* a = g.addParam(Type::i64());
  Value* b = g.addParam(Type::i64());
  Builder bl(g);
  g.addResult(bl.value(CoreOp::FloorDiv, {a, b}));
  g.addResult(bl.value(CoreOp::Mod, {a, b}));
  g.addResult(bl.value(CoreOp::Add, {a, bl.constInt(INT64_MAX)}));
  std::vector<Datum> r;
  ASSERT_TRUE(run(g, {Datum::integer(-7), Datum::integer(2)}, r)) << diag.renderAllText();
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].asInt(), -4);
  EXPECT_EQ(r[1].asInt(), 1);
  EXPECT_EQ(r[2].asInt(), INT64_MAX - 7);
  // The same graph runs again with other arguments (plans are cached per graph).
  ASSERT_TRUE(run(g, {Datum::integer(7), Datum::integer(-2)}, r));
  EXPECT_EQ(r[0].asInt(), -4);
  EXPECT_EQ(r[1].asInt(), -1);
}

TEST_F(InterpreterTest, PrintHonoursSepAndEndAndTokenOrder) {
  Graph& g = newGraph("f");
  Value* t = g.addParam(Type::token());
  Builder b(g);
  Value* x = b.constInt(1);
  Value* s = b.constStr("two");
  Value* l = b.value(CoreOp::ListMake, {b.constStr("a"), b.constStr("b")});
  Node* p1 = b.create(CoreOp::Print, {t, x, s},
                      attrs({{"sep", Attr::string("-")}, {"end", Attr::string("|")}}));
  Node* p2 = b.create(CoreOp::Print, {p1->result(0), l, b.constFloat(2.0)});
  // Not on the returned chain: never runs.
  b.create(CoreOp::Print, {p2->result(0), b.constStr("unreached")});
  g.addResult(p2->result(0));
  std::vector<Datum> r;
  ASSERT_TRUE(run(g, {Datum::token()}, r)) << diag.renderAllText();
  EXPECT_EQ(printed, "1-two|[\"a\", \"b\"] 2.0\n");
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].kind(), DKind::Token);
}

TEST_F(InterpreterTest, ClosuresAndCalls) {
  Graph& add = newGraph("add");
  {
    Value* a = add.addParam(Type::i64());
    Value* b = add.addParam(Type::i64());
    Builder bl(add);
    add.addResult(bl.value(CoreOp::Add, {a, b}));
  }
  Graph& g = newGraph("main");
  Builder b(g);
  Value* ten = b.constInt(10);
  Type fnType = Type::func({Type::i64()}, {Type::i64()});
  Value* add10 = b.value(CoreOp::FuncRef, {ten}, attrs({{"callee", Attr::symbol("add")}}), {fnType});
  Value* r1 = b.value(CoreOp::Apply, {add10, b.constInt(5)}, {}, {Type::i64()});
  Value* r2 = b.value(CoreOp::Call, {r1, r1}, attrs({{"callee", Attr::symbol("add")}}), {Type::i64()});
  g.addResult(r2);
  g.addResult(add10);
  std::vector<Datum> r;
  ASSERT_TRUE(run(g, {}, r)) << diag.renderAllText();
  EXPECT_EQ(r[0].asInt(), 30);
  ASSERT_EQ(r[1].kind(), DKind::Func);
  EXPECT_EQ(r[1].funcGraph(), &add);
  ASSERT_EQ(r[1].funcCaptures().size(), 1u);
  EXPECT_EQ(r[1].funcCaptures()[0].asInt(), 10);
  // The closure datum can be applied directly.
  Interpreter interp(diag, &module);
  std::vector<Datum> out;
  ASSERT_TRUE(interp.apply(r[1], {Datum::integer(-3)}, out));
  EXPECT_EQ(out[0].asInt(), 7);
  ASSERT_TRUE(interp.call("add", {Datum::integer(2), Datum::integer(3)}, out));
  EXPECT_EQ(out[0].asInt(), 5);
}

TEST_F(InterpreterTest, RuntimeErrorsHaveCodesAndTheNodeLocation) {
  Graph& g = newGraph("f");
  Value* a = g.addParam(Type::i64());
  Builder b(g);
  const std::string* file = sm.internName("prog.cml");
  b.setLoc({file, 12, 5, 1});
  g.addResult(b.value(CoreOp::Div, {a, b.constInt(0)}));
  std::vector<Datum> r;
  EXPECT_FALSE(run(g, {Datum::integer(1)}, r));
  ASSERT_EQ(codes(diag), std::vector<std::string>({"E0401"}));
  EXPECT_EQ(diag.diagnostics()[0].loc.line, 12u);
  EXPECT_EQ(*diag.diagnostics()[0].loc.file, "prog.cml");
}

TEST_F(InterpreterTest, WrongArgumentCountAndDepthLimit) {
  Graph& g = newGraph("loop");
  Value* a = g.addParam(Type::i64());
  Builder b(g);
  g.addResult(b.value(CoreOp::Call, {a}, attrs({{"callee", Attr::symbol("loop")}}), {Type::i64()}));
  std::vector<Datum> r;
  EXPECT_FALSE(run(g, {}, r));
  EXPECT_EQ(codes(diag), std::vector<std::string>({"E0411"}));
  diag.clear();
  Interpreter interp(diag, &module);
  interp.setMaxDepth(50);
  EXPECT_FALSE(interp.run(g, {Datum::integer(1)}, r));
  ASSERT_FALSE(diag.diagnostics().empty());
  EXPECT_EQ(diag.diagnostics()[0].code, "E0412");
  EXPECT_NE(diag.diagnostics()[0].message.find("(50)"), std::string::npos);
}

TEST_F(InterpreterTest, AttributesAndDatumsConvert) {
  Datum d;
  ASSERT_TRUE(attrToDatum(Attr::integer(3), Type::f64(), d));
  EXPECT_EQ(d.kind(), DKind::Float);
  EXPECT_EQ(d.asFloat(), 3.0);
  ASSERT_TRUE(attrToDatum(Attr::array({Attr::integer(1), Attr::string("x")}),
                          Type::tuple({Type::i64(), Type::string()}), d));
  EXPECT_EQ(d.repr(), "(1, \"x\")");
  ASSERT_TRUE(attrToDatum(Attr::array({Attr::integer(1)}), Type::list(Type::f64()), d));
  EXPECT_EQ(d.repr(), "[1.0]");
  Attr a;
  ASSERT_TRUE(datumToAttr(Datum::tuple({Datum::integer(1), Datum::real(-0.0)}), a));
  EXPECT_EQ(a, Attr::array({Attr::integer(1), Attr::real(-0.0)}));
  // Lists are mutable identities and have no attribute form.
  EXPECT_FALSE(datumToAttr(Datum::list({}), a));
  EXPECT_FALSE(attrToDatum(Attr::symbol("f"), Type::any(), d));
}

TEST_F(InterpreterTest, DatumReprAndEquality) {
  EXPECT_EQ(Datum::real(1.0).repr(), "1.0");
  EXPECT_EQ(Datum::real(1e21).repr(), "1e+21");
  EXPECT_EQ(Datum().repr(), "null");
  EXPECT_EQ(Datum::string("s").repr(true), "s");
  EXPECT_EQ(Datum::string("s").repr(false), "\"s\"");
  EXPECT_EQ(Datum::tuple({Datum::integer(1)}).repr(), "(1,)");
  EXPECT_EQ(Datum::structure({"a", "b"}, {Datum::boolean(true), Datum::list({})}).repr(),
            "{a: true, b: []}");
  EXPECT_TRUE(Datum::list({Datum::integer(1)}).equals(Datum::list({Datum::integer(1)})));
  EXPECT_FALSE(Datum::list({Datum::integer(1)}).equals(Datum::tuple({Datum::integer(1)})));
  // Lists are shared by reference: copies see mutations.
  Datum l = Datum::list({});
  Datum alias = l;
  l.listItems().push_back(Datum::integer(4));
  EXPECT_EQ(alias.repr(), "[4]");
}

}  // namespace
