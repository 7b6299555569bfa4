// Unit tests for the xpu (MLIR) backend's public API: compileGraph + run against
// the reference interpreter (ATen path), fallback of unlowerable nodes with
// reasons, re-specialisation for new input shapes and non-contiguous inputs,
// the in-process kernel cache, and emitMlir. Built into xacc_mlir_tests only
// when xacc_mlir is (tests/unit/CMakeLists.txt).
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>

#include "llvm/Support/CommandLine.h"

#include "xacc/backend/aten/AtenOps.h"
#include "xacc/backend/aten/TensorDatum.h"
#include "xacc/backend/mlir/XpuBackend.h"
#include "xacc/ir/Interpreter.h"
#include "xacc/ir/Parser.h"

using namespace xacc;
namespace xm = xacc::backend::mlir;
using backend::aten::makeTensorDatum;
using backend::aten::tensorOf;

namespace {

std::unique_ptr<ir::Module> parse(const char* text) {
  backend::aten::registerAtenOps();
  support::DiagnosticEngine diag;
  auto m = ir::parseModule(text, "test.gir", diag);
  EXPECT_TRUE(m) << diag.renderAllText();
  return m;
}

const char* kChain = R"(
graph @f(%x: tensor<f32, [?, 8], cpu>, %y: tensor<f32, [8], cpu>) -> tensor<f32, [?, 8], cpu> {
  %0 = aten.mul.Tensor(%x, %y) : tensor<f32, [?, 8], cpu>
  %1 = aten.sigmoid(%0) : tensor<f32, [?, 8], cpu>
  %2 = aten.cumsum(%1) {dim = 1} : tensor<f32, [?, 8], cpu>
  %3 = aten.exp(%2) : tensor<f32, [?, 8], cpu>
  return %3
}
)";

at::Tensor runBoth(const ir::Graph& g, xm::Executable& exe, const std::vector<at::Tensor>& in,
                   at::Tensor& reference) {
  std::vector<ir::Datum> args, got, want;
  for (const auto& t : in) args.push_back(makeTensorDatum(t));
  support::DiagnosticEngine diag;
  EXPECT_TRUE(exe.run(args, got, diag)) << diag.renderAllText();
  ir::Interpreter interp(diag);
  EXPECT_TRUE(interp.run(g, args, want)) << diag.renderAllText();
  reference = tensorOf(want[0]);
  return tensorOf(got[0]);
}

TEST(MlirBackend, MatchesAtenAcrossShapesWithFallbackInTheMiddle) {
  auto m = parse(kChain);
  const ir::Graph& g = *m->graphs()[0];
  support::DiagnosticEngine diag;
  auto exe = xm::compileGraph(g, {}, diag);
  ASSERT_TRUE(exe) << diag.renderAllText();
  EXPECT_EQ(exe->stats().regions, 2);
  EXPECT_EQ(exe->stats().fallbackNodes, 1);
  ASSERT_EQ(exe->stats().fallbackReasons.size(), 1u);
  EXPECT_NE(exe->stats().fallbackReasons[0].find("aten.cumsum"), std::string::npos);
  for (int64_t rows : {1, 5, 300}) {
    at::Tensor ref;
    at::Tensor got = runBoth(g, *exe, {at::randn({rows, 8}), at::randn({8})}, ref);
    EXPECT_TRUE(at::allclose(got, ref, 1e-4, 1e-4)) << rows;
  }
  // A non-contiguous input gets its own (strided) variant, still no copies.
  at::Tensor ref;
  at::Tensor x = at::randn({8, 7}).t();
  ASSERT_FALSE(x.is_contiguous());
  EXPECT_TRUE(at::allclose(runBoth(g, *exe, {x, at::randn({8})}, ref), ref, 1e-4, 1e-4));
  EXPECT_EQ(exe->stats().contiguousCopies, 0);
}

TEST(MlirBackend, SecondCompileHitsTheKernelCache) {
  const char* text = R"(
graph @g(%x: tensor<f32, [4, 4], cpu>) -> tensor<f32, [4, 4], cpu> {
  %0 = aten.tanh(%x) : tensor<f32, [4, 4], cpu>
  %1 = aten.add.Tensor(%0, %x) {alpha = 3} : tensor<f32, [4, 4], cpu>
  return %1
}
)";
  auto m = parse(text);
  support::DiagnosticEngine diag;
  auto a = xm::compileGraph(*m->graphs()[0], {}, diag);
  auto b = xm::compileGraph(*m->graphs()[0], {}, diag);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(b->stats().kernelsCompiled + b->stats().diskCacheHits, 0);
  EXPECT_EQ(b->stats().memoryCacheHits, 1);
}

TEST(MlirBackend, DisabledLoweringRunsEverythingOnAten) {
  auto m = parse(kChain);
  support::DiagnosticEngine diag;
  xm::CompileOptions opts;
  opts.disableLowering = true;
  auto exe = xm::compileGraph(*m->graphs()[0], opts, diag);
  ASSERT_TRUE(exe);
  EXPECT_EQ(exe->stats().regions, 0);
  EXPECT_EQ(exe->stats().fallbackNodes, 4);
}

TEST(MlirBackend, EmitMlirShowsOneGenericPerRegion) {
  auto m = parse(kChain);
  std::string text = xm::emitMlir(*m->graphs()[0]);
  EXPECT_NE(text.find("// fallback: aten.cumsum"), std::string::npos) << text;
  EXPECT_NE(text.find("linalg.generic"), std::string::npos) << text;
  EXPECT_NE(text.find("materialize_in_destination"), std::string::npos) << text;
}

TEST(MlirBackend, UnknownDeviceIsAnError) {
  auto m = parse(kChain);
  support::DiagnosticEngine diag;
  xm::CompileOptions opts;
  opts.device = "tpu3";
  EXPECT_FALSE(xm::compileGraph(*m->graphs()[0], opts, diag));
  EXPECT_TRUE(diag.hasErrors());
}

}  // namespace

// Note [No post-RA scheduling] (Jit.cpp): once a kernel has compiled, LLVM's
// post-RA list scheduler is turned off as if by `-post-RA-scheduler=false`
// on a command line (the scheduler reads the option only at a position > 0).
TEST(MlirBackend, KernelsCompileWithoutPostRaScheduling) {
  const char* text = R"(
graph @g(%x: tensor<f32, [4, 8], cpu>) -> tensor<f32, [4, 8], cpu> {
  %0 = aten.sigmoid(%x) : tensor<f32, [4, 8], cpu>
  %1 = aten.mul.Tensor(%0, %x) : tensor<f32, [4, 8], cpu>
  return %1
}
)";
  auto m = parse(text);
  support::DiagnosticEngine diag;
  // An empty cache directory of its own, so the kernel is compiled here.
  char dir[] = "/tmp/xacc-post-ra-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  xm::CompileOptions opts;
  opts.cacheDir = dir;
  auto exe = xm::compileGraph(*m->graphs()[0], opts, diag);
  ASSERT_TRUE(exe) << diag.renderAllText();
  auto& options = llvm::cl::getRegisteredOptions();
  auto it = options.find("post-RA-scheduler");
  ASSERT_NE(it, options.end());
  EXPECT_EQ(it->second->getNumOccurrences(), 1);
  EXPECT_GT(it->second->getPosition(), 0u);
  std::filesystem::remove_all(dir);
}
