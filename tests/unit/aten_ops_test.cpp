// Unit tests for the `aten.*` op family and tensor datums: op lookup and traits
// from schemas, the operand/attribute binding convention, result types from
// meta kernels (static, dynamic, unranked, scalar and failing cases), boxed
// execution compared with calling ATen directly (including in-place ops,
// random ops and autograd), and the parse -> verify -> interpret path. Built
// into xacc_aten_tests (tests/unit/CMakeLists.txt) only when xacc_aten is.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "xacc/backend/aten/AtenOps.h"
#include "xacc/backend/aten/TensorDatum.h"
#include "xacc/ir/Builder.h"
#include "xacc/ir/Interpreter.h"
#include "xacc/ir/Op.h"
#include "xacc/ir/Parser.h"
#include "xacc/ir/Verifier.h"

using namespace xacc;
using namespace xacc::backend::aten;
using ir::Attr;
using ir::AttrDict;
using ir::Datum;
using ir::Dim;
using ir::DType;
using ir::Type;

namespace {

class AtenOpsTest : public ::testing::Test {
protected:
  void SetUp() override { registerAtenOps(); }
};

Type T(std::string_view text) {
  std::string err;
  Type t = ir::parseType(text, &err);
  EXPECT_TRUE(t) << text << ": " << err;
  return t;
}

AttrDict attrs(std::initializer_list<std::pair<std::string_view, Attr>> items) {
  return ir::attrs(items);
}

Attr ints(std::vector<int64_t> v) {
  Attr::Array a;
  for (int64_t x : v) a.push_back(Attr::integer(x));
  return Attr::array(a);
}

/// Infers and returns the printed result types ("a; b"), or "error: ...".
std::string infer(std::string_view op, std::vector<std::string_view> operandTypes,
                  AttrDict a = {}) {
  std::vector<Type> ops;
  for (auto t : operandTypes) ops.push_back(T(t));
  std::vector<Type> results;
  std::string error;
  if (!inferAtenOp(op, ops, a, results, error)) return "error: " + error;
  std::string out;
  for (size_t i = 0; i < results.size(); ++i) out += (i ? "; " : "") + results[i].str();
  return out;
}

std::vector<Datum> run(std::string_view op, std::vector<Datum> args, AttrDict a = {}) {
  std::vector<Datum> results;
  std::string error;
  EXPECT_TRUE(runAtenOp(op, a, args, results, error)) << op << ": " << error;
  return results;
}

Datum D(const at::Tensor& t) { return makeTensorDatum(t); }

void expectSame(const Datum& d, const at::Tensor& expected) {
  ASSERT_TRUE(isTensorDatum(d)) << d.repr();
  const at::Tensor& t = tensorOf(d);
  EXPECT_EQ(t.scalar_type(), expected.scalar_type());
  EXPECT_EQ(t.sizes(), expected.sizes());
  EXPECT_TRUE(at::allclose(t, expected)) << t << "\nvs\n" << expected;
}

// ---------------------------------------------------------------------------
// Lookup and traits

TEST_F(AtenOpsTest, LooksUpCommonOps) {
  const char* names[] = {
      "aten.add.Tensor",         "aten.sub.Tensor",
      "aten.mul.Tensor",         "aten.div.Tensor",
      "aten.add.Scalar",         "aten.sub.Scalar",
      "aten.mul.Scalar",         "aten.div.Scalar",
      "aten.matmul.default",     "aten.mm.default",
      "aten.addmm.default",      "aten.relu.default",
      "aten.gelu.default",       "aten.softmax.int",
      "aten.log_softmax.int",    "aten.layer_norm.default",
      "aten.conv2d.default",     "aten.view.default",
      "aten.reshape.default",    "aten.permute.default",
      "aten.transpose.int",      "aten.sum.dim_IntList",
      "aten.mean.dim",           "aten.cat.default",
      "aten.stack.default",      "aten.slice.Tensor",
      "aten.select.int",         "aten.index_select.default",
      "aten.embedding.default",  "aten.t.default",
      "aten.expand.default",     "aten.unsqueeze.default",
      "aten.squeeze.dim",        "aten.where.self",
      "aten.masked_fill.Scalar", "aten.clone.default",
      "aten.to.dtype",           "aten.add_.Tensor",
      "aten.rand.default",       "aten.relu",
  };
  for (const char* name : names) {
    std::string error;
    const ir::OpInfo* info = ir::OpRegistry::get().lookup(name, &error);
    ASSERT_NE(info, nullptr) << name << ": " << error;
    EXPECT_EQ(info->name, name);
    EXPECT_FALSE(info->summary.empty());
    EXPECT_TRUE(info->infer && info->interp) << name;
  }
  EXPECT_TRUE(isAtenAvailable());
}

TEST_F(AtenOpsTest, TraitsComeFromTheSchema) {
  auto& reg = ir::OpRegistry::get();
  const ir::OpInfo* add = reg.lookup("aten.add.Tensor");
  ASSERT_TRUE(add);
  EXPECT_TRUE(add->has(ir::kPure));
  EXPECT_FALSE(add->has(ir::kEffect));
  EXPECT_EQ(add->numResults, 1);
  EXPECT_NE(add->summary.find("Scalar alpha=1"), std::string::npos) << add->summary;

  const ir::OpInfo* inplace = reg.lookup("aten.add_.Tensor");
  ASSERT_TRUE(inplace);
  EXPECT_TRUE(inplace->has(ir::kEffect));
  EXPECT_FALSE(inplace->has(ir::kPure));
  EXPECT_FALSE(inplace->has(ir::kNondeterministic));
  EXPECT_EQ(inplace->numResults, 2);  // token + the mutated tensor
  EXPECT_EQ(inplace->minOperands, 1);

  const ir::OpInfo* out = reg.lookup("aten.add.out");
  ASSERT_TRUE(out);
  EXPECT_TRUE(out->has(ir::kEffect));

  for (const char* random : {"aten.rand.default", "aten.dropout.default", "aten.bernoulli.default",
                             "aten.randn_like.default"}) {
    const ir::OpInfo* r = reg.lookup(random);
    ASSERT_TRUE(r) << random;
    EXPECT_TRUE(r->has(ir::kEffect) && r->has(ir::kNondeterministic)) << random;
  }
  const ir::OpInfo* split = reg.lookup("aten.split.Tensor");
  ASSERT_TRUE(split);
  EXPECT_EQ(split->numResults, 1);

  AtenOpSchemaInfo facts;
  std::string error;
  ASSERT_TRUE(atenSchemaInfo("aten.add_.Tensor", facts, error)) << error;
  ASSERT_EQ(facts.args.size(), 3u);
  EXPECT_TRUE(facts.args[0].written);
  EXPECT_EQ(facts.args[0].aliasSet, "a");
  EXPECT_TRUE(facts.args[0].tensorLike);
  EXPECT_FALSE(facts.args[1].written);
  EXPECT_TRUE(facts.args[2].kwargOnly && facts.args[2].hasDefault);
  EXPECT_TRUE(facts.effect);
  ASSERT_TRUE(atenSchemaInfo("aten.view.default", facts, error)) << error;
  EXPECT_EQ(facts.returns[0].aliasSet, "a");
  EXPECT_FALSE(facts.returns[0].written);
}

TEST_F(AtenOpsTest, UnknownOpsGiveClearErrors) {
  std::string error;
  EXPECT_EQ(ir::OpRegistry::get().lookup("aten.foo.bar", &error), nullptr);
  EXPECT_EQ(error, "no ATen operator 'aten::foo' with overload 'bar'");
  EXPECT_EQ(ir::OpRegistry::get().lookup("aten.add.NoSuch", &error), nullptr);
  EXPECT_NE(error.find("no ATen operator 'aten::add' with overload 'NoSuch'"), std::string::npos);
  EXPECT_NE(error.find("Tensor"), std::string::npos) << "lists the overloads: " << error;
  // Three parts name another namespace's op (Note [Custom operators as nodes]).
  EXPECT_EQ(ir::OpRegistry::get().lookup("aten.add.Tensor.x", &error), nullptr);
  EXPECT_NE(error.find("no operator 'add::Tensor' with overload 'x'"), std::string::npos) << error;
  EXPECT_EQ(ir::OpRegistry::get().lookup("aten.aten.add.Tensor", &error), nullptr);
  EXPECT_NE(error.find("malformed"), std::string::npos) << error;
  EXPECT_EQ(ir::OpRegistry::get().lookup("aten.ns.add.Tensor.x", &error), nullptr);
  EXPECT_NE(error.find("malformed"), std::string::npos) << error;
  // An op with one overload and no default one is found without the overload.
  std::string opName, overload;
  ASSERT_TRUE(parseAtenOpName("aten.relu.default", opName, overload, error));
  EXPECT_EQ(opName, "aten::relu");
  EXPECT_EQ(overload, "");
  auto overloads = atenOverloads("add");
  EXPECT_NE(std::find(overloads.begin(), overloads.end(), "Tensor"), overloads.end());
}

// ---------------------------------------------------------------------------
// Type inference

TEST_F(AtenOpsTest, InfersStaticShapes) {
  const char* f23 = "tensor<f32, [2, 3], cpu>";
  EXPECT_EQ(infer("aten.add.Tensor", {f23, "tensor<f32, [3], cpu>"}), f23);
  EXPECT_EQ(infer("aten.add.Tensor", {f23, "tensor<i64, [3], cpu>"},
                  attrs({{"alpha", Attr::integer(2)}})),
            f23);
  EXPECT_EQ(infer("aten.add.Tensor", {"tensor<i64, [3], cpu>", "f64"}), "tensor<f32, [3], cpu>")
      << "a Python float operand is a wrapped number: promotes to the default dtype";
  EXPECT_EQ(infer("aten.mul.Scalar", {"tensor<i32, [4], cpu>", "i64"}), "tensor<i32, [4], cpu>");
  EXPECT_EQ(infer("aten.div.Tensor", {"tensor<i64, [4], cpu>", "tensor<i64, [4], cpu>"}),
            "tensor<f32, [4], cpu>");
  EXPECT_EQ(infer("aten.mm.default", {f23, "tensor<f32, [3, 4], cpu>"}),
            "tensor<f32, [2, 4], cpu>");
  EXPECT_EQ(infer("aten.matmul.default", {"tensor<f32, [5, 2, 3], cpu>", "tensor<f32, [3], cpu>"}),
            "tensor<f32, [5, 2], cpu>");
  EXPECT_EQ(infer("aten.addmm.default", {"tensor<f32, [4], cpu>", f23, "tensor<f32, [3, 4], cpu>"},
                  attrs({{"beta", Attr::real(0.5)}})),
            "tensor<f32, [2, 4], cpu>");
  EXPECT_EQ(infer("aten.relu.default", {f23}), f23);
  EXPECT_EQ(infer("aten.gelu.default", {f23}, attrs({{"approximate", Attr::string("tanh")}})), f23);
  EXPECT_EQ(infer("aten.softmax.int", {f23}, attrs({{"dim", Attr::integer(-1)}})), f23);
  EXPECT_EQ(infer("aten.log_softmax.int", {f23},
                  attrs({{"dim", Attr::integer(1)}, {"dtype", Attr::string("f64")}})),
            "tensor<f64, [2, 3], cpu>");
  EXPECT_EQ(infer("aten.layer_norm.default",
                  {f23, "tensor<f32, [3], cpu>", "tensor<f32, [3], cpu>"},
                  attrs({{"normalized_shape", ints({3})}})),
            f23);
  EXPECT_EQ(infer("aten.conv2d.default",
                  {"tensor<f32, [1, 3, 8, 8], cpu>", "tensor<f32, [6, 3, 3, 3], cpu>"},
                  attrs({{"padding", Attr::integer(1)}, {"stride", ints({2, 2})}})),
            "tensor<f32, [1, 6, 4, 4], cpu>");
  EXPECT_EQ(infer("aten.view.default", {f23}, attrs({{"size", ints({3, -1})}})),
            "tensor<f32, [3, 2], cpu>");
  EXPECT_EQ(infer("aten.reshape.default", {f23}, attrs({{"shape", ints({-1})}})),
            "tensor<f32, [6], cpu>");
  EXPECT_EQ(infer("aten.permute.default", {"tensor<f32, [2, 3, 4], cpu>"},
                  attrs({{"dims", ints({2, 0, 1})}})),
            "tensor<f32, [4, 2, 3], cpu>");
  EXPECT_EQ(infer("aten.transpose.int", {f23},
                  attrs({{"dim0", Attr::integer(0)}, {"dim1", Attr::integer(1)}})),
            "tensor<f32, [3, 2], cpu>");
  EXPECT_EQ(infer("aten.t.default", {f23}), "tensor<f32, [3, 2], cpu>");
  EXPECT_EQ(infer("aten.sum.dim_IntList", {f23}, attrs({{"dim", ints({1})}})),
            "tensor<f32, [2], cpu>");
  EXPECT_EQ(infer("aten.sum.dim_IntList", {f23},
                  attrs({{"dim", ints({1})}, {"keepdim", Attr::boolean(true)}})),
            "tensor<f32, [2, 1], cpu>");
  EXPECT_EQ(infer("aten.mean.dim", {f23}, attrs({{"dim", ints({0})}})), "tensor<f32, [3], cpu>");
  EXPECT_EQ(infer("aten.cat.default", {f23, f23, f23}, attrs({{"dim", Attr::integer(1)}})),
            "tensor<f32, [2, 9], cpu>");
  EXPECT_EQ(
      infer("aten.cat.default", {"tuple<tensor<f32, [2, 3], cpu>, tensor<f32, [1, 3], cpu>>"}),
      "tensor<f32, [3, 3], cpu>");
  EXPECT_EQ(infer("aten.stack.default", {f23, f23}), "tensor<f32, [2, 2, 3], cpu>");
  EXPECT_EQ(infer("aten.slice.Tensor", {"tensor<f32, [10, 3], cpu>"},
                  attrs({{"start", Attr::integer(2)},
                         {"end", Attr::integer(8)},
                         {"step", Attr::integer(2)}})),
            "tensor<f32, [3, 3], cpu>");
  EXPECT_EQ(infer("aten.select.int", {f23},
                  attrs({{"dim", Attr::integer(1)}, {"index", Attr::integer(0)}})),
            "tensor<f32, [2], cpu>");
  EXPECT_EQ(infer("aten.index_select.default", {f23, "tensor<i64, [5], cpu>"},
                  attrs({{"dim", Attr::integer(1)}})),
            "tensor<f32, [2, 5], cpu>");
  EXPECT_EQ(
      infer("aten.embedding.default", {"tensor<f32, [10, 8], cpu>", "tensor<i64, [2, 5], cpu>"}),
      "tensor<f32, [2, 5, 8], cpu>");
  EXPECT_EQ(
      infer("aten.expand.default", {"tensor<f32, [1, 3], cpu>"}, attrs({{"size", ints({4, -1})}})),
      "tensor<f32, [4, 3], cpu>");
  EXPECT_EQ(infer("aten.unsqueeze.default", {f23}, attrs({{"dim", Attr::integer(0)}})),
            "tensor<f32, [1, 2, 3], cpu>");
  EXPECT_EQ(
      infer("aten.squeeze.dim", {"tensor<f32, [2, 1], cpu>"}, attrs({{"dim", Attr::integer(1)}})),
      "tensor<f32, [2], cpu>");
  EXPECT_EQ(infer("aten.where.self", {"tensor<bool, [2, 3], cpu>", f23, "tensor<f64, [3], cpu>"}),
            "tensor<f64, [2, 3], cpu>");
  EXPECT_EQ(infer("aten.masked_fill.Scalar", {f23, "tensor<bool, [2, 3], cpu>"},
                  attrs({{"value", Attr::real(0.0)}})),
            f23);
  EXPECT_EQ(infer("aten.clone.default", {f23}), f23);
  EXPECT_EQ(infer("aten.to.dtype", {f23}, attrs({{"dtype", Attr::string("bf16")}})),
            "tensor<bf16, [2, 3], cpu>");
  EXPECT_EQ(infer("aten.split.Tensor", {"tensor<f32, [5, 3], cpu>"},
                  attrs({{"split_size", Attr::integer(2)}})),
            "list<tensor<f32, [?, 3], cpu>>")
      << "chunks of different sizes join to ?";
  EXPECT_EQ(infer("aten.max.dim", {f23}, attrs({{"dim", Attr::integer(1)}})),
            "tensor<f32, [2], cpu>; tensor<i64, [2], cpu>");
}

TEST_F(AtenOpsTest, KeepsTheDeviceName) {
  EXPECT_EQ(infer("aten.relu.default", {"tensor<f32, [2], xpu0>"}), "tensor<f32, [2], xpu0>");
  EXPECT_EQ(infer("aten.zeros.default", {}, attrs({{"size", ints({2, 3})}})),
            "tensor<f32, [2, 3], cpu>");
  EXPECT_EQ(infer("aten.zeros.default", {},
                  attrs({{"size", ints({2})},
                         {"dtype", Attr::string("i32")},
                         {"device", Attr::string("cuda:0")}})),
            "tensor<i32, [2], cuda0>");
  EXPECT_EQ(infer("aten.to.device", {"tensor<f32, [2], cpu>"},
                  attrs({{"device", Attr::string("xpu0")}, {"dtype", Attr::string("f16")}})),
            "tensor<f16, [2], xpu0>");
}

TEST_F(AtenOpsTest, InfersDynamicShapes) {
  EXPECT_EQ(infer("aten.add.Tensor", {"tensor<f32, [s0, 4], cpu>", "tensor<f32, [s0, 4], cpu>"}),
            "tensor<f32, [s0, 4], cpu>");
  EXPECT_EQ(infer("aten.add.Tensor", {"tensor<f32, [?, 4], cpu>", "tensor<f32, [4], cpu>"}),
            "tensor<f32, [?, 4], cpu>");
  EXPECT_EQ(infer("aten.mm.default", {"tensor<f32, [?, 3], cpu>", "tensor<f32, [3, 5], cpu>"}),
            "tensor<f32, [?, 5], cpu>");
  EXPECT_EQ(
      infer("aten.matmul.default", {"tensor<f32, [s0, s1, 8], cpu>", "tensor<f32, [8, 2], cpu>"}),
      "tensor<f32, [s0, s1, 2], cpu>");
  EXPECT_EQ(infer("aten.mm.default", {"tensor<f32, [s1, s0], cpu>", "tensor<f32, [s0, s2], cpu>"}),
            "tensor<f32, [s1, s2], cpu>");
  EXPECT_EQ(infer("aten.cat.default", {"tensor<f32, [s0, 4], cpu>", "tensor<f32, [s0, 4], cpu>"}),
            "tensor<f32, [?, 4], cpu>")
      << "s0 + s0 is not s0";
  EXPECT_EQ(infer("aten.cat.default", {"tensor<f32, [s0, 4], cpu>", "tensor<f32, [s0, 2], cpu>"},
                  attrs({{"dim", Attr::integer(1)}})),
            "tensor<f32, [s0, 6], cpu>");
  EXPECT_EQ(
      infer("aten.view.default", {"tensor<f32, [s0, 4], cpu>"}, attrs({{"size", ints({-1})}})),
      "tensor<f32, [?], cpu>");
  EXPECT_EQ(
      infer("aten.view.default", {"tensor<f32, [?, 4], cpu>"}, attrs({{"size", ints({-1, 2, 2})}})),
      "tensor<f32, [?, 2, 2], cpu>");
  EXPECT_EQ(
      infer("aten.sum.dim_IntList", {"tensor<f32, [s0, s1], cpu>"}, attrs({{"dim", ints({1})}})),
      "tensor<f32, [s0], cpu>");
  EXPECT_EQ(infer("aten.conv2d.default",
                  {"tensor<f32, [s0, 3, 8, 8], cpu>", "tensor<f32, [6, 3, 3, 3], cpu>"}),
            "tensor<f32, [s0, 6, 6, 6], cpu>");
  EXPECT_EQ(
      infer("aten.embedding.default", {"tensor<f32, [100, 16], cpu>", "tensor<i64, [s0, ?], cpu>"}),
      "tensor<f32, [s0, ?, 16], cpu>");
  EXPECT_EQ(infer("aten.transpose.int", {"tensor<f32, [s0, s1], cpu>"},
                  attrs({{"dim0", Attr::integer(0)}, {"dim1", Attr::integer(1)}})),
            "tensor<f32, [s1, s0], cpu>");
}

TEST_F(AtenOpsTest, RuntimeValuesAndUnrankedInputs) {
  // An i64 operand for an int argument is known only at run time: rank only.
  EXPECT_EQ(infer("aten.select.int", {"tensor<f32, [4, 5], cpu>", "i64", "i64"}),
            "tensor<f32, [?], cpu>");
  // A list operand of unknown length: dtype only.
  EXPECT_EQ(infer("aten.view.default", {"tensor<f32, [4, 5], cpu>", "list<i64>"}),
            "tensor<f32, *, cpu>");
  // A Python float feeding a Scalar does not decide shapes.
  EXPECT_EQ(infer("aten.mul.Tensor", {"tensor<f32, [4, 5], cpu>", "f64"}),
            "tensor<f32, [4, 5], cpu>");
  // Unranked inputs give unranked results with ATen's dtype.
  EXPECT_EQ(infer("aten.relu.default", {"tensor<f32, *, cpu>"}), "tensor<f32, *, cpu>");
  EXPECT_EQ(infer("aten.add.Tensor", {"tensor<i64, *, cpu>", "tensor<f64, [3], cpu>"}),
            "tensor<f64, *, cpu>");
  EXPECT_EQ(infer("aten.mm.default", {"tensor<f32, *, cpu>", "tensor<f32, [3, 5], cpu>"}),
            "tensor<f32, *, cpu>");
  // A list<tensor> operand (length unknown): rank kept, dims dynamic.
  EXPECT_EQ(infer("aten.cat.default", {"list<tensor<f32, [2, 3], cpu>>"}),
            "tensor<f32, [?, ?], cpu>");
  // Scalars: the schema decides; Scalar follows the input dtype.
  EXPECT_EQ(infer("aten.item.default", {"tensor<f32, [], cpu>"}), "f64");
  EXPECT_EQ(infer("aten._local_scalar_dense.default", {"tensor<i32, [], cpu>"}), "i64");
  EXPECT_EQ(infer("aten._local_scalar_dense.default", {"tensor<bool, [], cpu>"}), "bool");
  EXPECT_EQ(
      infer("aten.size.int", {"tensor<f32, [?, 3], cpu>"}, attrs({{"dim", Attr::integer(0)}})),
      "i64");
  EXPECT_EQ(infer("aten.is_nonzero.default", {"tensor<f32, [], cpu>"}), "bool");
  // No meta kernel with a data-dependent shape: dtype and rank from a CPU run.
  EXPECT_EQ(infer("aten.nonzero.default", {"tensor<f32, [4, 5], cpu>"}),
            "tensor<i64, [?, ?], cpu>");
  // `any` operands give `any` results.
  EXPECT_EQ(infer("aten.relu.default", {"any"}), "any");
}

TEST_F(AtenOpsTest, ShapeErrorsAreReported) {
  std::string r = infer("aten.add.Tensor", {"tensor<f32, [2, 3], cpu>", "tensor<f32, [4], cpu>"});
  EXPECT_EQ(r.rfind("error: aten::add.Tensor: ", 0), 0u) << r;
  EXPECT_NE(r.find("must match the size of tensor b (4)"), std::string::npos) << r;
  EXPECT_EQ(r.find('\n'), std::string::npos) << "first line only: " << r;
  r = infer("aten.mm.default", {"tensor<f32, [2, 3], cpu>", "tensor<f32, [4, 5], cpu>"});
  EXPECT_NE(r.find("cannot be multiplied"), std::string::npos) << r;
  r = infer("aten.view.default", {"tensor<f32, [2, 3], cpu>"}, attrs({{"size", ints({4, -1})}}));
  EXPECT_NE(r.find("invalid for input of size 6"), std::string::npos) << r;
  r = infer("aten.cat.default", {"tensor<f32, [2, 3], cpu>", "tensor<f32, [2, 4], cpu>"});
  EXPECT_EQ(r.rfind("error:", 0), 0u) << r;
}

TEST_F(AtenOpsTest, BindingErrors) {
  const char* f2 = "tensor<f32, [2], cpu>";
  EXPECT_NE(infer("aten.relu.default", {f2, f2}).find("too many operands"), std::string::npos);
  EXPECT_NE(infer("aten.add.Tensor", {f2}).find("missing argument 'other'"), std::string::npos);
  EXPECT_NE(infer("aten.add.Tensor", {f2, f2}, attrs({{"beta", Attr::integer(1)}}))
                .find("has no argument named 'beta'"),
            std::string::npos);
  EXPECT_NE(infer("aten.softmax.int", {f2}, attrs({{"dim", Attr::string("x")}}))
                .find("does not fit argument 'dim'"),
            std::string::npos);
  EXPECT_NE(
      infer("aten.to.dtype", {f2}, attrs({{"dtype", Attr::string("f99")}})).find("does not fit"),
      std::string::npos);
  // The attribute wins over operands; a later operand then fills the next argument.
  EXPECT_EQ(infer("aten.add.Tensor", {f2, "i64"}, attrs({{"alpha", Attr::integer(3)}})), f2);
}

TEST_F(AtenOpsTest, EffectfulOpsThreadTokens) {
  EXPECT_EQ(
      infer("aten.add_.Tensor", {"!token", "tensor<f32, [2, 3], cpu>", "tensor<f32, [3], cpu>"}),
      "!token; tensor<f32, [2, 3], cpu>");
  std::string r = infer("aten.add_.Tensor", {"tensor<f32, [2, 3], cpu>", "tensor<f32, [3], cpu>"});
  EXPECT_NE(r.find("operand 0 must be an !token"), std::string::npos) << r;
  r = infer("aten.add_.Tensor", {"!token", "tensor<f32, [3], cpu>", "tensor<f32, [2, 3], cpu>"});
  EXPECT_EQ(r.rfind("error:", 0), 0u) << "in-place result cannot broadcast: " << r;
  EXPECT_EQ(infer("aten.rand.default", {"!token"}, attrs({{"size", ints({2, 3})}})),
            "!token; tensor<f32, [2, 3], cpu>");
  EXPECT_EQ(infer("aten.dropout.default", {"!token", "tensor<f32, [s0, 3], cpu>"},
                  attrs({{"p", Attr::real(0.1)}, {"train", Attr::boolean(true)}})),
            "!token; tensor<f32, [s0, 3], cpu>");
  EXPECT_EQ(infer("aten.add.out", {"!token", "tensor<f32, [3], cpu>", "tensor<f32, [3], cpu>",
                                   "tensor<f32, [0], cpu>"}),
            "!token; tensor<f32, [3], cpu>");
}

// ---------------------------------------------------------------------------
// Execution

TEST_F(AtenOpsTest, ExecutionMatchesEager) {
  at::manual_seed(0);
  at::Tensor x = at::randn({2, 3}), y = at::randn({3}), w = at::randn({3, 4}), b = at::randn({4});
  expectSame(run("aten.add.Tensor", {D(x), D(y)}, attrs({{"alpha", Attr::integer(2)}}))[0],
             at::add(x, y, 2));
  expectSame(run("aten.sub.Tensor", {D(x), D(y)})[0], x - y);
  expectSame(run("aten.mul.Scalar", {D(x), Datum::real(1.5)})[0], x * 1.5);
  expectSame(run("aten.div.Tensor", {D(x), Datum::integer(2)})[0], x / 2);
  expectSame(run("aten.mm.default", {D(x), D(w)})[0], at::mm(x, w));
  expectSame(run("aten.addmm.default", {D(b), D(x), D(w)}, attrs({{"alpha", Attr::real(0.5)}}))[0],
             at::addmm(b, x, w, 1, 0.5));
  expectSame(run("aten.matmul", {D(x), D(w)})[0], at::matmul(x, w));
  expectSame(run("aten.softmax.int", {D(x)}, attrs({{"dim", Attr::integer(1)}}))[0],
             at::softmax(x, 1));
  expectSame(run("aten.gelu.default", {D(x)}, attrs({{"approximate", Attr::string("tanh")}}))[0],
             at::gelu(x, "tanh"));
  expectSame(run("aten.layer_norm.default", {D(x), D(y), D(y)},
                 attrs({{"normalized_shape", ints({3})}}))[0],
             at::layer_norm(x, {3}, y, y));
  // Operands may supply what attributes usually do (captured Python numbers).
  expectSame(run("aten.layer_norm.default",
                 {D(x), Datum::list({Datum::integer(3)}), Datum(), Datum(), Datum::real(1e-3)})[0],
             at::layer_norm(x, {3}, {}, {}, 1e-3));
  at::Tensor img = at::randn({1, 2, 5, 5}), k = at::randn({4, 2, 3, 3});
  expectSame(run("aten.conv2d.default", {D(img), D(k)}, attrs({{"padding", Attr::integer(1)}}))[0],
             at::conv2d(img, k, {}, 1, 1));
  expectSame(run("aten.cat.default", {D(x), D(x)}, attrs({{"dim", Attr::integer(1)}}))[0],
             at::cat({x, x}, 1));
  expectSame(run("aten.cat.default", {Datum::list({D(x), D(x)}), Datum::integer(0)})[0],
             at::cat({x, x}, 0));
  expectSame(run("aten.view.default", {D(x)}, attrs({{"size", ints({3, 2})}}))[0], x.view({3, 2}));
  expectSame(run("aten.permute.default", {D(img)}, attrs({{"dims", ints({0, 2, 3, 1})}}))[0],
             img.permute({0, 2, 3, 1}));
  expectSame(run("aten.sum.dim_IntList", {D(x), Datum::integer(1)})[0], x.sum({1}));
  expectSame(run("aten.slice.Tensor", {D(x)},
                 attrs({{"dim", Attr::integer(1)}, {"start", Attr::integer(1)}}))[0],
             x.slice(1, 1));
  at::Tensor idx = at::tensor({2, 0}, at::kLong);
  expectSame(run("aten.index_select.default", {D(x), Datum::integer(1), D(idx)})[0],
             x.index_select(1, idx));
  expectSame(run("aten.embedding.default", {D(w), D(idx)})[0], at::embedding(w, idx));
  at::Tensor mask = x > 0;
  expectSame(run("aten.where.self", {D(mask), D(x), Datum::real(0.0)})[0], at::where(mask, x, 0.0));
  expectSame(
      run("aten.masked_fill.Scalar", {D(x), D(mask)}, attrs({{"value", Attr::real(-1.0)}}))[0],
      x.masked_fill(mask, -1.0));
  expectSame(run("aten.to.dtype", {D(x)}, attrs({{"dtype", Attr::string("f64")}}))[0],
             x.to(at::kDouble));
  // Index lists with holes (Tensor?[]) from operands.
  at::Tensor r = at::arange(12).view({3, 4});
  expectSame(run("aten.index.Tensor", {D(r), Datum(), D(idx)})[0],
             r.index({at::indexing::Slice(), idx}));

  // Non-tensor results.
  std::vector<Datum> item = run("aten.item.default", {D(at::scalar_tensor(2.5))});
  ASSERT_EQ(item[0].kind(), ir::DKind::Float);
  EXPECT_EQ(item[0].asFloat(), 2.5);
  std::vector<Datum> size = run("aten.size.int", {D(x)}, attrs({{"dim", Attr::integer(1)}}));
  ASSERT_EQ(size[0].kind(), ir::DKind::Int);
  EXPECT_EQ(size[0].asInt(), 3);
  std::vector<Datum> parts =
      run("aten.split.Tensor", {D(at::arange(5))}, attrs({{"split_size", Attr::integer(2)}}));
  ASSERT_EQ(parts[0].kind(), ir::DKind::List);
  ASSERT_EQ(parts[0].listItems().size(), 3u);
  expectSame(parts[0].listItems()[2], at::tensor({4}, at::kLong));
  std::vector<Datum> mx = run("aten.max.dim", {D(x)}, attrs({{"dim", Attr::integer(1)}}));
  ASSERT_EQ(mx.size(), 2u);
  expectSame(mx[1], std::get<1>(at::max(x, 1)));
}

TEST_F(AtenOpsTest, InPlaceAndRandomOps) {
  at::Tensor x = at::ones({2, 3}), y = at::arange(3, at::kFloat);
  std::vector<Datum> res = run("aten.add_.Tensor", {Datum::token(), D(x), D(y)});
  ASSERT_EQ(res.size(), 2u);
  EXPECT_EQ(res[0].kind(), ir::DKind::Token);
  EXPECT_TRUE(tensorOf(res[1]).is_same(x)) << "in-place result aliases its input";
  EXPECT_TRUE(at::allclose(x, 1 + at::arange(3, at::kFloat).expand({2, 3})));

  std::vector<Datum> bad;
  std::string error;
  EXPECT_FALSE(runAtenOp("aten.add_.Tensor", {}, {D(x), D(y)}, bad, error));
  EXPECT_NE(error.find("!token"), std::string::npos);

  at::manual_seed(42);
  at::Tensor expected = at::rand({3, 4});
  at::manual_seed(42);
  res = run("aten.rand.default", {Datum::token()}, attrs({{"size", ints({3, 4})}}));
  ASSERT_EQ(res.size(), 2u);
  expectSame(res[1], expected);
  at::manual_seed(7);
  expected = at::dropout(at::ones({100}), 0.5, true);
  at::manual_seed(7);
  res = run("aten.dropout.default",
            {Datum::token(), D(at::ones({100})), Datum::real(0.5), Datum::boolean(true)});
  expectSame(res[1], expected);
}

TEST_F(AtenOpsTest, RuntimeErrorsAreMessages) {
  std::vector<Datum> res;
  std::string error;
  EXPECT_FALSE(
      runAtenOp("aten.mm.default", {}, {D(at::ones({2, 3})), D(at::ones({2, 3}))}, res, error));
  EXPECT_EQ(error.rfind("aten::mm: ", 0), 0u) << error;
  EXPECT_NE(error.find("cannot be multiplied"), std::string::npos) << error;
  EXPECT_FALSE(runAtenOp("aten.relu.default", {}, {Datum::string("x")}, res, error));
  EXPECT_NE(error.find("does not fit argument 'self'"), std::string::npos) << error;
  EXPECT_FALSE(runAtenOp("aten.nope", {}, {}, res, error));
  EXPECT_NE(error.find("no ATen operator 'aten::nope'"), std::string::npos) << error;
}

TEST_F(AtenOpsTest, MetaEntryPointGivesEagerLayoutsOnMetaOperands) {
  // The xpu backend's eager-strides run: meta operands in, meta results with
  // the strides eager would give (here a channels-last input kept by add and
  // by clone's preserve format), through runAtenOpOnMeta.
  at::Tensor x = at::empty_strided({2, 3, 4, 5}, {60, 1, 15, 3}, at::TensorOptions().device(at::kMeta));
  std::vector<Datum> res;
  std::string error;
  ASSERT_TRUE(runAtenOpOnMeta("aten.add.Tensor", {}, {D(x), D(x)}, res, error)) << error;
  ASSERT_EQ(res.size(), 1u);
  EXPECT_TRUE(tensorOf(res[0]).is_meta());
  EXPECT_EQ(tensorOf(res[0]).strides(), at::IntArrayRef({60, 1, 15, 3}));
  ASSERT_TRUE(runAtenOpOnMeta("aten.clone.default", {}, {D(x)}, res, error)) << error;
  EXPECT_EQ(tensorOf(res[0]).strides(), at::IntArrayRef({60, 1, 15, 3}));
  // An op's errors are reported as from runAtenOp.
  at::Tensor y = at::empty({2, 7}, at::TensorOptions().device(at::kMeta));
  EXPECT_FALSE(runAtenOpOnMeta("aten.add.Tensor", {}, {D(x), D(y)}, res, error));
  EXPECT_EQ(error.rfind("aten::add.Tensor: ", 0), 0u) << error;
  EXPECT_NE(error.find("must match the size"), std::string::npos) << error;
  // On real tensors it is runAtenOp.
  ASSERT_TRUE(runAtenOpOnMeta("aten.add.Tensor", {}, {D(at::ones({2})), D(at::ones({2}))}, res, error)) << error;
  EXPECT_TRUE(at::equal(tensorOf(res[0]), at::full({2}, 2.0f)));
}

TEST_F(AtenOpsTest, AutogradFlowsThroughTheDispatcher) {
  at::Tensor x = at::randn({3, 4}).requires_grad_(true);
  at::Tensor w = at::randn({4, 2}).requires_grad_(true);
  Datum h = run("aten.mm.default", {D(x), D(w)})[0];
  Datum a = run("aten.relu.default", {h})[0];
  Datum s = run("aten.sum.default", {a})[0];
  ASSERT_TRUE(tensorOf(s).requires_grad());
  tensorOf(s).backward();
  at::Tensor x2 = x.detach().clone().requires_grad_(true),
             w2 = w.detach().clone().requires_grad_(true);
  at::relu(at::mm(x2, w2)).sum().backward();
  EXPECT_TRUE(at::allclose(x.grad(), x2.grad()));
  EXPECT_TRUE(at::allclose(w.grad(), w2.grad()));
}

// ---------------------------------------------------------------------------
// Through the IR: builder, parser, verifier, interpreter

TEST_F(AtenOpsTest, BuilderInfersTypes) {
  ir::Graph g("f");
  ir::Value* x = g.addParam(T("tensor<f32, [s0, 3], cpu>"), "x");
  ir::Value* w = g.addParam(T("tensor<f32, [3, 5], cpu>"), "w");
  ir::Builder b(g);
  ir::Node* mm = b.create("aten.mm.default", {x, w});
  ASSERT_NE(mm, nullptr) << b.error();
  EXPECT_EQ(mm->result(0)->type().str(), "tensor<f32, [s0, 5], cpu>");
  ir::Node* bad = b.create("aten.mm.default", {w, x});
  EXPECT_EQ(bad, nullptr);
  EXPECT_NE(b.error().find("aten::mm"), std::string::npos) << b.error();
}

TEST_F(AtenOpsTest, ParseVerifyInterpret) {
  const char* text =
      R"(graph @f(%x: tensor<f32, [2, 3], cpu>, %y: tensor<f32, [3], cpu>, %t: !token) -> (tensor<f32, [2, 3], cpu>, !token) {
  %a = aten.add.Tensor(%x, %y) {alpha = 2} : tensor<f32, [2, 3], cpu>
  %r = aten.relu.default(%a) : tensor<f32, [2, 3], cpu>
  %t1, %m = aten.mul_.Scalar(%t, %r) {other = 3.0} : (!token, tensor<f32, [2, 3], cpu>)
  return %m, %t1
}
)";
  support::SourceManager sm;
  support::DiagnosticEngine diag(&sm);
  std::unique_ptr<ir::Module> m = ir::parseModule(text, "aten.gir", diag);
  ASSERT_TRUE(m) << diag.renderAllText();
  ASSERT_TRUE(ir::verifyModule(*m, diag)) << diag.renderAllText();

  at::Tensor x = at::randn({2, 3}), y = at::randn({3});
  ir::Interpreter interp(diag, m.get());
  std::vector<Datum> results;
  ASSERT_TRUE(interp.call("f", {D(x), D(y), Datum::token()}, results)) << diag.renderAllText();
  ASSERT_EQ(results.size(), 2u);
  expectSame(results[0], at::relu(at::add(x, y, 2)) * 3);
  EXPECT_EQ(results[1].kind(), ir::DKind::Token);

  // Wrong runtime shapes fail with a located E0602 (TensorDimensionMismatch)
  // diagnostic, not a crash.
  diag.clear();
  EXPECT_FALSE(interp.call("f", {D(at::randn({2, 4})), D(y), Datum::token()}, results));
  ASSERT_TRUE(diag.hasErrors());
  EXPECT_EQ(diag.diagnostics()[0].code, "E0602");
  EXPECT_EQ(diag.diagnostics()[0].message.rfind("TensorDimensionMismatch: ", 0), 0u);
  EXPECT_NE(diag.diagnostics()[0].message.find("aten::add.Tensor"), std::string::npos);
}

TEST_F(AtenOpsTest, VerifierRejectsWrongDeclaredTypes) {
  const char* text = R"(graph @f(%x: tensor<f32, [2, 3], cpu>) -> tensor<f32, [3, 3], cpu> {
  %r = aten.relu.default(%x) : tensor<f32, [3, 3], cpu>
  return %r
}
)";
  support::SourceManager sm;
  support::DiagnosticEngine diag(&sm);
  std::unique_ptr<ir::Module> m = ir::parseModule(text, "bad.gir", diag);
  ASSERT_TRUE(m) << diag.renderAllText();
  EXPECT_FALSE(ir::verifyModule(*m, diag));
  EXPECT_NE(diag.renderAllText().find("tensor<f32, [2, 3], cpu>"), std::string::npos)
      << diag.renderAllText();
}

// ---------------------------------------------------------------------------
// Datums and conversions

TEST(TensorDatum, ConversionsRoundTrip) {
  for (int i = 0; i <= static_cast<int>(DType::C128); ++i) {
    DType d = static_cast<DType>(i), back;
    ASSERT_TRUE(fromScalarType(toScalarType(d), back));
    EXPECT_EQ(back, d);
  }
  c10::Device dev(c10::kCPU);
  ASSERT_TRUE(toDevice("cuda1", dev));
  EXPECT_TRUE(dev.is_cuda());
  EXPECT_EQ(dev.index(), 1);
  EXPECT_EQ(deviceName(dev), "cuda1");
  ASSERT_TRUE(toDevice("cuda:0", dev));
  EXPECT_EQ(deviceName(dev), "cuda0");
  ASSERT_TRUE(toDevice("xpu0", dev));
  EXPECT_TRUE(dev.is_cpu());
  EXPECT_FALSE(toDevice("tpu0", dev));

  at::Tensor t = at::zeros({2, 5}, at::kHalf);
  EXPECT_EQ(typeOfTensor(t).str(), "tensor<f16, [2, 5], cpu>");
  EXPECT_EQ(typeOfTensor(t, true).str(), "tensor<f16, [?, ?], cpu>");

  Datum nested = Datum::tuple({Datum::integer(1), Datum::list({Datum::real(1.5), Datum::real(2.0)}),
                               Datum::list({makeTensorDatum(t)}), Datum::string("s"), Datum(),
                               Datum::boolean(true)});
  c10::IValue iv;
  std::string error;
  ASSERT_TRUE(toIValue(nested, iv, error)) << error;
  ASSERT_TRUE(iv.isTuple());
  EXPECT_TRUE(iv.toTupleRef().elements()[1].isDoubleList());
  EXPECT_TRUE(iv.toTupleRef().elements()[2].isTensorList());
  Datum back;
  ASSERT_TRUE(toDatum(iv, back, error)) << error;
  EXPECT_EQ(back.repr(), nested.repr());
  EXPECT_TRUE(tensorOf(back.tupleItems()[2].listItems()[0]).is_same(t))
      << "tensors are shared, not copied";

  EXPECT_FALSE(toIValue(Datum::token(), iv, error));
  EXPECT_FALSE(toDatum(c10::IValue(c10::complex<double>(1, 2)), back, error));
  EXPECT_TRUE(tensorOf(Datum::integer(3)).defined() == false);
  EXPECT_EQ(makeTensorDatum(at::Tensor()).kind(), ir::DKind::Null);
}

TEST(TensorDatum, Repr) {
  EXPECT_EQ(makeTensorDatum(at::tensor({1.0f, 2.5f})).repr(), "tensor([1.0, 2.5])");
  EXPECT_EQ(makeTensorDatum(at::arange(4).view({2, 2})).repr(), "tensor([[0, 1], [2, 3]])");
  EXPECT_EQ(makeTensorDatum(at::tensor({1, 0}) > 0).repr(), "tensor([True, False])");
  EXPECT_EQ(makeTensorDatum(at::tensor({1.0}, at::kDouble)).repr(), "tensor([1.0], dtype=f64)");
  EXPECT_EQ(makeTensorDatum(at::zeros({2}).requires_grad_(true)).repr(),
            "tensor([0.0, 0.0], requires_grad=True)");
  EXPECT_EQ(makeTensorDatum(at::zeros({100, 100})).repr(), "tensor(shape=[100, 100], dtype=f32)");
  EXPECT_EQ(makeTensorDatum(at::scalar_tensor(3.0)).repr(), "tensor(3.0)");
}

}  // namespace
