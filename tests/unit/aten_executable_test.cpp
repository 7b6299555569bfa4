// Unit tests for the ATen executor's liveness (Note [Executor liveness]): a
// counting CPU allocator measures the bytes live while a prepared graph runs,
// so a chain of large ops peaks at its widest point (one input and one output),
// not at the sum of its intermediates; a loop body frees each iteration's
// values; a view keeps its dropped base's storage; results survive. Built into
// xacc_aten_tests (tests/unit/CMakeLists.txt) with xacc_aten.
#include <ATen/ATen.h>
#include <c10/core/CPUAllocator.h>
#include <gtest/gtest.h>

#include <atomic>

#include "xacc/backend/aten/AtenExecutable.h"
#include "xacc/backend/aten/AtenOps.h"
#include "xacc/ir/Parser.h"
#include "xacc/ir/Verifier.h"

using namespace xacc;
using namespace xacc::backend::aten;

namespace {

/// Wraps the CPU allocator and counts the bytes it has handed out and not yet
/// had back, and the most of them at once since the last `reset`.
class CountingAllocator final : public c10::Allocator {
public:
  explicit CountingAllocator(c10::Allocator* base) : base_(base) {}

  c10::DataPtr allocate(size_t n) override {
    c10::DataPtr inner = base_->allocate(n);
    void* data = inner.get();
    c10::Device device = inner.device();
    auto* ctx = new Ctx{std::move(inner), n, this};
    int64_t now = live_.fetch_add(static_cast<int64_t>(n)) + static_cast<int64_t>(n);
    int64_t p = peak_.load();
    while (now > p && !peak_.compare_exchange_weak(p, now)) {
    }
    return c10::DataPtr(data, ctx, &CountingAllocator::free, device);
  }
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    default_copy_data(dest, src, count);
  }

  void reset() { peak_.store(live_.load()); }
  int64_t live() const { return live_.load(); }
  int64_t peak() const { return peak_.load(); }

private:
  struct Ctx {
    c10::DataPtr inner;
    size_t bytes;
    CountingAllocator* owner;
  };
  static void free(void* p) {
    auto* ctx = static_cast<Ctx*>(p);
    ctx->owner->live_.fetch_sub(static_cast<int64_t>(ctx->bytes));
    delete ctx;  // frees the inner allocation
  }
  c10::Allocator* base_;
  std::atomic<int64_t> live_{0}, peak_{0};
};

class AtenExecutableTest : public ::testing::Test {
protected:
  void SetUp() override {
    registerAtenOps();
    base_ = c10::GetCPUAllocator();
    counter_ = std::make_unique<CountingAllocator>(base_);
    c10::SetCPUAllocator(counter_.get(), kPriority);
  }
  void TearDown() override { c10::SetCPUAllocator(base_, kPriority); }

  /// Parses and prepares the module's first graph.
  std::unique_ptr<AtenExecutable> prepare(const char* text) {
    std::unique_ptr<ir::Module> m = ir::parseModule(text, "exe.gir", diag_);
    EXPECT_TRUE(m) << diag_.renderAllText();
    if (!m) return nullptr;
    EXPECT_TRUE(ir::verifyModule(*m, diag_)) << diag_.renderAllText();
    std::string error;
    auto exe = AtenExecutable::create(*m->graphs().front(), error);
    EXPECT_TRUE(exe) << error;
    module_ = std::move(m);
    return exe;
  }

  /// Runs `exe` and returns the peak of the bytes allocated during the run
  /// beyond those live before it.
  int64_t peakOfRun(const AtenExecutable& exe, std::vector<c10::IValue> in,
                    std::vector<c10::IValue>& out) {
    int64_t before = counter_->live();
    counter_->reset();
    std::string error;
    EXPECT_TRUE(exe.run(in, out, error)) << error;
    return counter_->peak() - before;
  }

  static constexpr uint8_t kPriority = 200;
  static constexpr int64_t kN = 512;                    // a [512, 512] f32 tensor
  static constexpr int64_t kBytes = kN * kN * 4;        // is 1 MiB
  static constexpr int64_t kSlack = 64 * 1024;          // wrapped scalars and the like
  c10::Allocator* base_ = nullptr;
  std::unique_ptr<CountingAllocator> counter_;
  support::SourceManager sm_;
  support::DiagnosticEngine diag_{&sm_};
  std::unique_ptr<ir::Module> module_;
};

// Six elementwise ops in a chain: eager holds at most the op's input and its
// output; an executor that kept every intermediate until the graph ended held
// all six (6 MiB).
TEST_F(AtenExecutableTest, ChainFreesEachIntermediateAtItsLastUse) {
  auto exe = prepare(R"(graph @f(%x: tensor<f32, [512, 512], cpu>) -> tensor<f32, [512, 512], cpu> {
  %a = aten.mul.Scalar(%x) {other = 2.0} : tensor<f32, [512, 512], cpu>
  %b = aten.neg.default(%a) : tensor<f32, [512, 512], cpu>
  %c = aten.relu.default(%b) : tensor<f32, [512, 512], cpu>
  %d = aten.add.Scalar(%c) {other = 1.0} : tensor<f32, [512, 512], cpu>
  %e = aten.exp.default(%d) : tensor<f32, [512, 512], cpu>
  %f = aten.mul.Scalar(%e) {other = 3.0} : tensor<f32, [512, 512], cpu>
  return %f
}
)");
  ASSERT_TRUE(exe);
  // %x (the executor's reference; the caller keeps its own) and %a .. %e, not
  // the result %f.
  EXPECT_EQ(exe->numReleased(), 6u);
  at::Tensor x = at::randn({kN, kN});
  std::vector<c10::IValue> out;
  int64_t peak = peakOfRun(*exe, {x}, out);
  EXPECT_LE(peak, 2 * kBytes + kSlack);
  EXPECT_GE(peak, kBytes);
  // Only the result is left of what the run allocated.
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(at::allclose(out[0].toTensor(), at::exp(at::relu(-(x * 2)) + 1) * 3));
}

// A view outlives the value it views: dropping %a (last read by the transpose)
// must not free the storage %v and the result still read.
TEST_F(AtenExecutableTest, ViewKeepsItsDroppedBaseAlive) {
  auto exe = prepare(R"(graph @f(%x: tensor<f32, [512, 512], cpu>) -> (tensor<f32, [512, 512], cpu>, tensor<f32, [512, 512], cpu>) {
  %a = aten.mul.Scalar(%x) {other = 2.0} : tensor<f32, [512, 512], cpu>
  %v = aten.t.default(%a) : tensor<f32, [512, 512], cpu>
  %w = aten.neg.default(%x) : tensor<f32, [512, 512], cpu>
  %r = aten.add.Tensor(%v, %w) : tensor<f32, [512, 512], cpu>
  return %r, %v
}
)");
  ASSERT_TRUE(exe);
  at::Tensor x = at::randn({kN, kN});
  std::vector<c10::IValue> out;
  peakOfRun(*exe, {x}, out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_TRUE(at::equal(out[0].toTensor(), (x * 2).t() - x));
  EXPECT_TRUE(at::equal(out[1].toTensor(), (x * 2).t()));
  // %r and the storage of %a (seen through %v) are all that is left.
  EXPECT_EQ(counter_->live() - x.nbytes(), 2 * kBytes);
}

// A loop body of three ops on a carried tensor, run four times: each
// iteration's values die in the body, and the carried value is handed over, not
// copied, so the loop peaks at two tensors, not at three per iteration.
TEST_F(AtenExecutableTest, LoopBodyFreesEachIterationsValues) {
  auto exe = prepare(R"(graph @f(%n: i64, %x: tensor<f32, [512, 512], cpu>) -> tensor<f32, [512, 512], cpu> {
  %y = aten.mul.Scalar(%x) {other = 1.0} : tensor<f32, [512, 512], cpu>
  %i, %t = ctrl.loop(%n, %y) : (i64, tensor<f32, [512, 512], cpu>) {
    ^cond(%i: i64, %t: tensor<f32, [512, 512], cpu>) -> bool {
      %0 = arith.const() {value = 0} : i64
      %1 = cmp.gt(%i, %0) : bool
      return %1
    }
    ^body(%i: i64, %t: tensor<f32, [512, 512], cpu>) -> (i64, tensor<f32, [512, 512], cpu>) {
      %a = aten.mul.Scalar(%t) {other = 0.5} : tensor<f32, [512, 512], cpu>
      %b = aten.add.Scalar(%a) {other = 1.0} : tensor<f32, [512, 512], cpu>
      %c = aten.neg.default(%b) : tensor<f32, [512, 512], cpu>
      %0 = arith.const() {value = 1} : i64
      %1 = arith.sub(%i, %0) : i64
      return %1, %c
    }
  }
  return %t
}
)");
  ASSERT_TRUE(exe);
  at::Tensor x = at::randn({kN, kN});
  std::vector<c10::IValue> out;
  int64_t peak = peakOfRun(*exe, {c10::IValue(int64_t{4}), x}, out);
  EXPECT_LE(peak, 2 * kBytes + kSlack);
  ASSERT_EQ(out.size(), 1u);
  at::Tensor want = x * 1.0;
  for (int k = 0; k < 4; ++k) want = -(want * 0.5 + 1);
  EXPECT_TRUE(at::allclose(out[0].toTensor(), want));
}

}  // namespace
