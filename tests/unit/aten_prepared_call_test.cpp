// Unit tests for Note [Prepared ATen calls]: a node prepared once from its
// static types runs as its interp rule does (values, effects, failures and
// their codes), a call whose operands differ in class from the static types
// asks to be rebound instead of binding wrongly, and nodes whose types leave a
// class open are not prepared. Built into xacc_aten_tests.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <map>

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
  EXPECT_FALSE(add->direct());  // the boxed call
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

TEST_F(PreparedCallTest, DirectCallsMatchTheBoxedCall) {
  // Note [Direct ATen calls]: views and matrix products called through their
  // C++ functions give what the interp rule's boxed call gives: values,
  // sizes, strides, and storage shared with the operand for views.
  auto ns = nodes(R"(graph @f(%x: tensor<f32, [4, 6], cpu>, %b: tensor<f32, [6], cpu>, %w: tensor<f32, [6, 6], cpu>) -> tensor<f32, [4, 6], cpu> {
  %v = aten.view.default(%x) {size = [2, 2, 6]} : tensor<f32, [2, 2, 6], cpu>
  %u = aten._unsafe_view.default(%x) {size = [24]} : tensor<f32, [24], cpu>
  %r = aten.reshape.default(%x) {shape = [6, 4]} : tensor<f32, [6, 4], cpu>
  %t = aten.t.default(%x) : tensor<f32, [6, 4], cpu>
  %tr = aten.transpose.int(%v) {dim0 = 0, dim1 = 2} : tensor<f32, [6, 2, 2], cpu>
  %q = aten.unsqueeze.default(%x) {dim = -1} : tensor<f32, [4, 6, 1], cpu>
  %p = aten.permute.default(%v) {dims = [2, 0, 1]} : tensor<f32, [6, 2, 2], cpu>
  %e = aten.expand.default(%q) {size = [4, 6, 3]} : tensor<f32, [4, 6, 3], cpu>
  %m = aten.mm.default(%x, %w) : tensor<f32, [4, 6], cpu>
  %a = aten.addmm.default(%b, %x, %w) {beta = 0.5, alpha = 2} : tensor<f32, [4, 6], cpu>
  %tv = aten.transpose.int(%v) {dim0 = 1, dim1 = 2} : tensor<f32, [2, 6, 2], cpu>
  %bm = aten.bmm.default(%v, %tv) : tensor<f32, [2, 2, 2], cpu>
  return %a
}
)");
  ASSERT_EQ(ns.size(), 12u);
  at::Tensor x = at::randn({4, 6}), b = at::randn({6}), w = at::randn({6, 6});
  std::vector<Datum> slots = {makeTensorDatum(x), makeTensorDatum(b), makeTensorDatum(w)};
  std::map<const ir::Value*, int> slotOf = {{module_->graphs()[0]->param(0), 0},
                                            {module_->graphs()[0]->param(1), 1},
                                            {module_->graphs()[0]->param(2), 2}};
  for (const ir::Node* n : ns) {
    auto call = PreparedAtenCall::prepare(*n);
    ASSERT_TRUE(call) << n->opName();
    EXPECT_TRUE(call->direct()) << n->opName();
    std::vector<int> in;
    std::vector<Datum> args;
    for (const ir::Value* v : n->operands()) {
      in.push_back(slotOf.at(v));
      args.push_back(slots[slotOf.at(v)]);
    }
    std::vector<Datum> got, want;
    std::string error;
    ASSERT_EQ(call->run(slots, in, got, error), Status::Ok) << n->opName() << ": " << error;
    ASSERT_TRUE(interpRun(*n, args, want, diag_)) << diag_.renderAllText();
    const at::Tensor &g = tensorOf(got[0]), &r = tensorOf(want[0]);
    // mm and addmm of a few rows take the skinny kernels (Note [Skinny matrix
    // products]), whose summation order differs from ATen's GEMM.
    const bool skinny = n->opName() == "aten.mm.default" || n->opName() == "aten.addmm.default";
    EXPECT_TRUE(skinny ? at::allclose(g, r, 1e-5, 1e-5) : at::equal(g, r)) << n->opName();
    EXPECT_EQ(g.sizes(), r.sizes()) << n->opName();
    EXPECT_EQ(g.strides(), r.strides()) << n->opName();
    EXPECT_EQ(g.is_alias_of(tensorOf(args[0])), r.is_alias_of(tensorOf(args[0]))) << n->opName();
    slotOf[n->result(0)] = static_cast<int>(slots.size());
    slots.push_back(got[0]);
  }
  EXPECT_TRUE(at::allclose(tensorOf(slots[slotOf.at(ns[9]->result(0))]), at::addmm(b, x, w, 0.5, 2), 1e-5, 1e-5));

  // A view the strides do not allow fails as the boxed call does.
  auto flat = nodes(R"(graph @g(%x: tensor<f32, [4, 6], cpu>) -> tensor<f32, [24], cpu> {
  %v = aten.view.default(%x) {size = [24]} : tensor<f32, [24], cpu>
  return %v
}
)");
  std::vector<Datum> strided = {makeTensorDatum(at::randn({6, 4}).t())};
  std::vector<Datum> results;
  std::string error;
  auto view = PreparedAtenCall::prepare(*flat[0]);
  ASSERT_TRUE(view);
  ASSERT_EQ(view->run(strided, {0}, results, error), Status::Failed);
  support::DiagnosticEngine rule;
  EXPECT_FALSE(interpRun(*flat[0], strided, results, rule));
  ASSERT_EQ(rule.diagnostics().size(), 1u);
  EXPECT_EQ(rule.diagnostics()[0].message, error);
}

}  // namespace
