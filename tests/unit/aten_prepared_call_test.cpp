// Unit tests for Note [Prepared ATen calls]: a node prepared once from its
// static types runs as its interp rule does (values, effects, failures and
// their codes), a call whose operands differ in class from the static types
// asks to be rebound instead of binding wrongly, and nodes whose types leave a
// class open are not prepared. Built into xacc_aten_tests.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "xacc/backend/aten/AtenOps.h"
#include "xacc/backend/aten/TensorDatum.h"
#include "xacc/ir/Interpreter.h"
#include "xacc/ir/Parser.h"

using namespace xacc;
using namespace xacc::backend::aten;
using ir::Datum;
using Status = PreparedAtenCall::Status;

namespace {

class PreparedCallTest : public ::testing::Test {
protected:
  void SetUp() override { registerAtenOps(); }

  /// Parses `text` (one graph) and returns its nodes in order.
  std::vector<const ir::Node*> nodes(const char* text) {
    module_ = ir::parseModule(text, "prepared.gir", diag_);
    EXPECT_TRUE(module_) << diag_.renderAllText();
    std::vector<const ir::Node*> out;
    if (module_)
      for (const ir::Node* n : *module_->graphs()[0]) out.push_back(n);
    return out;
  }

  support::DiagnosticEngine diag_;
  std::unique_ptr<ir::Module> module_;
};

/// The node's interp rule on `args`: results, or false with its diagnostic in `diag`.
bool interpRun(const ir::Node& n, std::vector<Datum> args, std::vector<Datum>& results,
               support::DiagnosticEngine& diag) {
  ir::Interpreter interp(diag);
  return n.op().interp(interp, n, args, results);
}

TEST_F(PreparedCallTest, RunsAsTheInterpRuleAcrossShapesWithAttributesAndDefaults) {
  auto ns = nodes(R"(graph @f(%x: tensor<f32, [?, 3], cpu>, %y: tensor<f32, [3], cpu>) -> tensor<f32, [?, 3], cpu> {
  %a = aten.add.Tensor(%x, %y) {alpha = 2} : tensor<f32, [?, 3], cpu>
  %s = aten.sum.dim_IntList(%a) {dim = [1], keepdim = true} : tensor<f32, [?, 1], cpu>
  return %s
}
)");
  ASSERT_EQ(ns.size(), 2u);
  auto add = PreparedAtenCall::prepare(*ns[0]);
  auto sum = PreparedAtenCall::prepare(*ns[1]);
  ASSERT_TRUE(add && sum);
  for (int64_t rows : {1, 4, 33}) {
    at::Tensor x = at::randn({rows, 3}), y = at::randn({3});
    std::vector<Datum> slots = {makeTensorDatum(x), makeTensorDatum(y), Datum()};
    std::vector<Datum> got, want;
    std::string error;
    ASSERT_EQ(add->run(slots, {0, 1}, got, error), Status::Ok) << error;
    ASSERT_TRUE(interpRun(*ns[0], {slots[0], slots[1]}, want, diag_)) << diag_.renderAllText();
    ASSERT_EQ(got.size(), 1u);
    EXPECT_TRUE(at::equal(tensorOf(got[0]), tensorOf(want[0])));
    EXPECT_TRUE(at::equal(tensorOf(got[0]), at::add(x, y, 2)));
    slots[2] = got[0];
    ASSERT_EQ(sum->run(slots, {2}, got, error), Status::Ok) << error;
    EXPECT_TRUE(at::equal(tensorOf(got[0]), at::add(x, y, 2).sum({1}, true)));
  }
}

TEST_F(PreparedCallTest, EffectsTakeAndReturnTheirToken) {
  auto ns = nodes(R"(graph @f(%t: !token, %x: tensor<f32, [2, 3], cpu>) -> (!token, tensor<f32, [2, 3], cpu>) {
  %t1, %m = aten.mul_.Scalar(%t, %x) {other = 3.0} : (!token, tensor<f32, [2, 3], cpu>)
  return %t1, %m
}
)");
  auto call = PreparedAtenCall::prepare(*ns[0]);
  ASSERT_TRUE(call);
  at::Tensor x = at::ones({2, 3});
  std::vector<Datum> slots = {Datum::token(), makeTensorDatum(x)};
  std::vector<Datum> results;
  std::string error;
  ASSERT_EQ(call->run(slots, {0, 1}, results, error), Status::Ok) << error;
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].kind(), ir::DKind::Token);
  EXPECT_TRUE(at::equal(x, at::full({2, 3}, 3.0f)));  // written in place, as eager
  EXPECT_EQ(tensorOf(results[1]).data_ptr(), x.data_ptr());
}

TEST_F(PreparedCallTest, AnOperandOfAnotherClassAsksForRebinding) {
  // `%n: f64` binds to `other` as a wrapped number; an integer datum at run
  // time is another class, so the prepared binding is not used for it.
  auto ns = nodes(R"(graph @f(%x: tensor<f32, [3], cpu>, %n: f64) -> tensor<f32, [3], cpu> {
  %a = aten.add.Tensor(%x, %n) : tensor<f32, [3], cpu>
  return %a
}
)");
  auto call = PreparedAtenCall::prepare(*ns[0]);
  ASSERT_TRUE(call);
  at::Tensor x = at::arange(3, at::kFloat);
  std::vector<Datum> results;
  std::string error;
  std::vector<Datum> asFloat = {makeTensorDatum(x), Datum::real(0.5)};
  ASSERT_EQ(call->run(asFloat, {0, 1}, results, error), Status::Ok) << error;
  EXPECT_TRUE(at::equal(tensorOf(results[0]), x + 0.5));
  std::vector<Datum> asInt = {makeTensorDatum(x), Datum::integer(2)};
  EXPECT_EQ(call->run(asInt, {0, 1}, results, error), Status::Rebind);
  std::vector<Datum> asNull = {Datum(), Datum::real(0.5)};
  EXPECT_EQ(call->run(asNull, {0, 1}, results, error), Status::Rebind);
}

TEST_F(PreparedCallTest, OpenTypesAndOtherNodesAreNotPrepared) {
  auto ns = nodes(R"(graph @f(%x: any, %y: tensor<f32, [3], cpu>) -> tensor<f32, [3], cpu> {
  %a = aten.relu.default(%x) : any
  %b = aten.relu.default(%y) : tensor<f32, [3], cpu>
  %c = tuple.make(%b) : tuple<tensor<f32, [3], cpu>>
  return %b
}
)");
  ASSERT_EQ(ns.size(), 3u);
  EXPECT_FALSE(PreparedAtenCall::prepare(*ns[0]));  // `any`: the class is known only at run time
  EXPECT_TRUE(PreparedAtenCall::prepare(*ns[1]));
  EXPECT_FALSE(PreparedAtenCall::prepare(*ns[2]));  // not an aten. node
}

TEST_F(PreparedCallTest, FailuresCarryTheInterpRulesMessageAndCode) {
  auto ns = nodes(R"(graph @f(%a: tensor<f32, [?, ?], cpu>, %b: tensor<f32, [?, ?], cpu>) -> tensor<f32, [?, ?], cpu> {
  %m = aten.mm.default(%a, %b) : tensor<f32, [?, ?], cpu>
  return %m
}
)");
  auto call = PreparedAtenCall::prepare(*ns[0]);
  ASSERT_TRUE(call);
  std::vector<Datum> slots = {makeTensorDatum(at::randn({2, 3})), makeTensorDatum(at::randn({4, 5}))};
  std::vector<Datum> results;
  std::string error;
  ASSERT_EQ(call->run(slots, {0, 1}, results, error), Status::Failed);
  support::DiagnosticEngine prepared, rule;
  ir::Interpreter interp(prepared);
  EXPECT_FALSE(call->fail(interp, error));
  EXPECT_FALSE(interpRun(*ns[0], slots, results, rule));
  ASSERT_EQ(prepared.diagnostics().size(), 1u);
  ASSERT_EQ(rule.diagnostics().size(), 1u);
  EXPECT_EQ(prepared.diagnostics()[0].code, "E0602");
  EXPECT_EQ(prepared.diagnostics()[0].code, rule.diagnostics()[0].code);
  EXPECT_EQ(prepared.diagnostics()[0].message, rule.diagnostics()[0].message);
  EXPECT_NE(error.find("aten::mm"), std::string::npos) << error;
}

}  // namespace
