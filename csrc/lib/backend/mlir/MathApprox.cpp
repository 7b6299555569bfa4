// Fast-math approximations of f32 exp, tanh, erf and of the 1 / (1 + exp(y))
// of sigmoid, for the scalar loop bodies of tensor kernels (run after
// convert-linalg-to-loops, before MLIR's own polynomial approximations, which
// remain for the other functions). Everything is inline arith code that LLVM's
// loop vectoriser widens to 16 lanes; the costs below are AVX-512 uops per
// vector of 16.
//
// Why not MLIR's: its exp clamps twice (argument and exponent, 24 uops), its
// erf evaluates two piecewise rational approximations selected by 18 selects
// (about 60 uops), and every rational form divides. LLVM emits a divide as
// vdivps (one per ~10 cycles per core on this machine's AVX-512 unit) unless
// the fdiv carries both `arcp` and `ninf`; only then does it use rcp14 plus a
// Newton step (about 1 ulp). The divides emitted here have denominators that
// are finite and nonzero by construction, so `ninf` is true and they get the
// fast form. A chain of ten pointwise ops with four transcendental ones went
// from ~60 to ~26 ns per 16 elements (CPU time, one core).
//
// Accuracy (float32, checked against float64 over dense grids, see
// docs/backend-xpu.md): exp 2.5e-7 relative, tanh 4e-7, erf 4.3e-7 absolute.
// Edge values: NaN propagates (the clamps are compare+select, which keep NaN);
// exp(+inf) = +inf, exp(x) = +inf from x = 88.73, exp(-inf) = 0, and results
// below 2^-126 (x < -87.0) are flushed to 0; tanh(+-inf) = +-1; erf(+-inf) =
// +-1; sigmoid(-inf) = 0, sigmoid(+inf) = 1.
#include "MathApprox.h"

#include <cmath>
#include <optional>
#include <vector>

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/PatternMatch.h"

namespace xacc::backend::mlir {
namespace {

namespace m = ::mlir;
namespace arith = ::mlir::arith;
namespace math = ::mlir::math;

constexpr int kBenefit = 10;  // ahead of MLIR's approximations of the same ops

/// Small builder for f32 scalar arithmetic at one location.
struct F32 {
  m::PatternRewriter& b;
  m::Location loc;
  m::Type t;

  m::Value c(double v) { return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(static_cast<float>(v))); }
  m::Value add(m::Value x, m::Value y) { return arith::AddFOp::create(b, loc, x, y); }
  m::Value sub(m::Value x, m::Value y) { return arith::SubFOp::create(b, loc, x, y); }
  m::Value mul(m::Value x, m::Value y) { return arith::MulFOp::create(b, loc, x, y); }
  m::Value fma(m::Value x, m::Value y, m::Value z) { return math::FmaOp::create(b, loc, x, y, z); }
  /// x / y with a denominator the caller knows to be finite and nonzero (and
  /// a finite or NaN numerator): reciprocal estimate plus Newton step.
  m::Value divFinite(m::Value x, m::Value y) {
    return arith::DivFOp::create(b, loc, x, y,
                                 arith::FastMathFlags::arcp | arith::FastMathFlags::ninf |
                                     arith::FastMathFlags::contract);
  }
  /// min(max(x, lo), hi) as compare + select: NaN passes through unchanged
  /// (both compares are false), and LLVM emits one vmaxps/vminps each.
  m::Value clamp(m::Value x, double lo, double hi) {
    m::Value l = c(lo), h = c(hi);
    m::Value below = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x, l);
    x = arith::SelectOp::create(b, loc, below, l, x);
    m::Value above = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x, h);
    return arith::SelectOp::create(b, loc, above, h, x);
  }
  m::Value maxConst(m::Value x, double lo) {
    m::Value l = c(lo);
    m::Value below = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x, l);
    return arith::SelectOp::create(b, loc, below, l, x);
  }
  m::Value minConst(m::Value x, double hi) {
    m::Value h = c(hi);
    m::Value above = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x, h);
    return arith::SelectOp::create(b, loc, above, h, x);
  }
  /// Horner: coeffs[0] + x * (coeffs[1] + x * (...)).
  m::Value poly(m::Value x, const std::vector<double>& coeffs) {
    auto it = coeffs.rbegin();
    m::Value p = c(*it++);
    for (; it != coeffs.rend(); ++it) p = fma(p, x, c(*it));
    return p;
  }
};

bool isF32(m::Type t) { return t.isF32(); }

/// exp(x) = 2^k * e^r, k = round(x / ln 2), r = x - k ln 2 in [-ln2/2, ln2/2]
/// (Cody-Waite, two FMAs). Rounding: t = x * log2(e) + (1.5 * 2^23 + 126)
/// in one FMA rounds x*log2(e) to the nearest integer k in t's low mantissa
/// bits, so kf = t - magic is exact and (bits(t) << 23) is the float 2^(k-1)
/// (the shift keeps the low 9 bits of 126 + k, which lie in [0, 254]: sign 0,
/// biased exponent 126 + k). Scaling by 2^(k-1) and by 2 e^r instead of 2^k
/// and e^r lets k reach 128, so clamping x to [-87.5, 88.8] yields +inf from
/// x = 88.73 on (2^127 * 2 e^r overflows) and 0 from x = -87.0 down (k = -126
/// makes the scale +0). e^r: 1 + r + degree-5 polynomial with c0 = c1 = 1
/// (relative minimax fit on [-ln2/2, ln2/2], coefficients doubled), 1.06e-7
/// relative before float32 rounding (degree 6 was 3.8e-9: one FMA more for
/// precision float32 cannot hold). 13 uops. `hi` = nullopt leaves the upper
/// clamp to a caller that discards the result above 88.8 (sigmoid).
m::Value expF32(F32& f, m::Value x, std::optional<double> hi = 88.8) {
  x = hi ? f.clamp(x, -87.5, *hi) : f.maxConst(x, -87.5);
  const double magic = 12582912.0 + 126.0;  // 1.5 * 2^23 + 126
  m::Value t = f.fma(x, f.c(1.4426950408889634), f.c(magic));
  m::Value kf = f.sub(t, f.c(magic));
  m::Value r = f.fma(kf, f.c(-0.693145751953125), x);  // ln 2, high part (exact in 16 bits)
  r = f.fma(kf, f.c(-1.428606765330187e-06), r);      // ln 2 - high part
  m::Value p = f.poly(r, {2.0, 2.0, 0.999984622001648, 0.3333423137664795, 0.08378066122531891,
                          0.016625002026557922});
  m::Type i32 = f.b.getI32Type();
  m::Value bits = arith::BitcastOp::create(f.b, f.loc, i32, t);
  m::Value sh = arith::ShLIOp::create(f.b, f.loc, bits,
                                      arith::ConstantOp::create(f.b, f.loc, f.b.getI32IntegerAttr(23)));
  m::Value scale = arith::BitcastOp::create(f.b, f.loc, f.t, sh);
  return f.mul(p, scale);
}

struct ExpF32 : m::OpRewritePattern<math::ExpOp> {
  ExpF32(m::MLIRContext* c) : OpRewritePattern(c, kBenefit) {}
  m::LogicalResult matchAndRewrite(math::ExpOp op, m::PatternRewriter& b) const override {
    if (!isF32(op.getType())) return m::failure();
    F32 f{b, op.getLoc(), op.getType()};
    b.replaceOp(op, expF32(f, op.getOperand()));
    return m::success();
  }
};

std::optional<double> constantF32(m::Value v) {
  m::FloatAttr a;
  if (auto c = v.getDefiningOp<arith::ConstantOp>()) a = llvm::dyn_cast<m::FloatAttr>(c.getValue());
  if (!a) return std::nullopt;
  return a.getValueAsDouble();
}

/// An odd rational function x P(x^2) / Q(x^2) of x clamped to +-bound, with
/// the fast divide. (Folding a constant factor of x into the coefficients,
/// erf(x * c) -> x P'(x^2) / Q'(x^2), would save gelu's multiply but loses the
/// exact +-1 at the clamp that 1 + erf(x) = 0 for very negative x relies on:
/// gelu(-1e4) came out as 6e-4 instead of -0.)
m::Value oddRational(F32& f, m::Value x, double bound, const std::vector<double>& pc,
                     const std::vector<double>& qc) {
  x = f.clamp(x, -bound, bound);
  m::Value x2 = f.mul(x, x);
  m::Value p = f.mul(x, f.poly(x2, pc));
  m::Value q = f.poly(x2, qc);
  return f.divFinite(p, q);
}

/// tanh(x) = x P(x^2) / Q(x^2) on x clamped to +-7.99881172 (beyond it tanh
/// rounds to +-1 in float32): the degree-13/6 rational minimax approximation
/// that Eigen and MLIR use, 4e-7 relative, with the division in its fast form
/// (Q >= 4.9e-3 on the clamped range). 17 uops.
struct TanhF32 : m::OpRewritePattern<math::TanhOp> {
  TanhF32(m::MLIRContext* c) : OpRewritePattern(c, kBenefit) {}
  m::LogicalResult matchAndRewrite(math::TanhOp op, m::PatternRewriter& b) const override {
    if (!isF32(op.getType())) return m::failure();
    F32 f{b, op.getLoc(), op.getType()};
    b.replaceOp(op, oddRational(f, op.getOperand(), 7.99881172180175781,
                                {4.89352455891786e-03, 6.37261928875436e-04, 1.48572235717979e-05,
                                 5.12229709037114e-08, -8.60467152213735e-11, 2.00018790482477e-13,
                                 -2.76076847742355e-16},
                                {4.89352518554385e-03, 2.26843463243900e-03, 1.18534705686654e-04,
                                 1.19825839466702e-06}));
    return m::success();
  }
};

/// erf(x) = x P(x^2) / Q(x^2) on x clamped to +-4 (erf(4) rounds to 1 in
/// float32): a degree-13/8 rational approximation (the coefficients Eigen's
/// and XLA's float erf use), 4.3e-7 absolute; Q <= -1.4e-2 on the range. 18
/// uops.
struct ErfF32 : m::OpRewritePattern<math::ErfOp> {
  ErfF32(m::MLIRContext* c) : OpRewritePattern(c, kBenefit) {}
  m::LogicalResult matchAndRewrite(math::ErfOp op, m::PatternRewriter& b) const override {
    if (!isF32(op.getType())) return m::failure();
    F32 f{b, op.getLoc(), op.getType()};
    b.replaceOp(op, oddRational(f, op.getOperand(), 4.0,
                                {-1.60960333262415e-02, -2.95459980854025e-03, -7.34990630326855e-04,
                                 -5.69250639462346e-05, -2.10102402082508e-06, 2.77068142495902e-08,
                                 -2.72614225801306e-10},
                                {-1.42647390514189e-02, -7.37332916720468e-03, -1.68282697438203e-03,
                                 -2.13374055278905e-04, -1.45660718464996e-05}));
    return m::success();
  }
};


/// n / (c + exp(y)) with constants n finite and c >= 1 (sigmoid's
/// 1 / (1 + exp(-x))): exp's argument is clamped to <= 88 so the denominator
/// stays finite and the divide gets its fast form; where y > 88 the result is
/// +0 (the true value is below 6.1e-39, a float32 denormal). NaN propagates.
struct ReciprocalOnePlusExp : m::OpRewritePattern<arith::DivFOp> {
  ReciprocalOnePlusExp(m::MLIRContext* c) : OpRewritePattern(c, kBenefit) {}
  m::LogicalResult matchAndRewrite(arith::DivFOp op, m::PatternRewriter& b) const override {
    if (!isF32(op.getType())) return m::failure();
    if (bitEnumContainsAll(op.getFastmath(), arith::FastMathFlags::ninf)) return m::failure();
    auto n = constantF32(op.getLhs());
    auto add = op.getRhs().getDefiningOp<arith::AddFOp>();
    if (!n || !std::isfinite(*n) || !add) return m::failure();
    m::Value other = add.getRhs();
    auto c = constantF32(add.getLhs());
    if (!c) {
      c = constantF32(add.getRhs());
      other = add.getLhs();
    }
    auto e = other.getDefiningOp<math::ExpOp>();
    if (!c || !(*c >= 1.0) || !std::isfinite(*c) || !e) return m::failure();
    F32 f{b, op.getLoc(), op.getType()};
    b.setInsertionPoint(op);
    // exp's own clamp only from below: where y > 88 the select below discards
    // whatever the unclamped range reduction gives (one min and no second
    // clamp of the argument: 2 uops fewer than exp(min(y, 88))).
    m::Value d = f.add(f.c(*c), expF32(f, e.getOperand(), std::nullopt));
    m::Value q = f.divFinite(op.getLhs(), d);
    // Exactly 0 where exp(y) alone would overflow the float range's reciprocal
    // (as n / (c + inf) is): x * sigmoid(x) at x = -inf stays NaN, as in ATen.
    m::Value big = arith::CmpFOp::create(b, op.getLoc(), arith::CmpFPredicate::OGT, e.getOperand(), f.c(88.0));
    b.replaceOp(op, arith::SelectOp::create(b, op.getLoc(), big, f.c(0.0), q));
    return m::success();
  }
};

/// maximumf(x, c) / minimumf(x, c) with a constant c that is not NaN (relu,
/// clamp, clamp_min/max, relu6, hardtanh, ...): (c > x) ? c : x, resp.
/// (c < x) ? c : x, which x86 emits as one vmaxps/vminps (its result is the
/// second operand when the compare is false, NaN included). arith-expand
/// turns maximumf into a compare, a select and a NaN fix-up (two uops per
/// vector for relu, four for a clamp). Same results, NaN propagating, except
/// the sign of a zero result: max(-0, +0) is x = -0 here, as in eager
/// torch.relu and torch.maximum on the CPU (maximumf gives +0).
template <typename Op, arith::CmpFPredicate Pred>
struct MinMaxWithConstant : m::OpRewritePattern<Op> {
  MinMaxWithConstant(m::MLIRContext* c) : m::OpRewritePattern<Op>(c, kBenefit) {}
  m::LogicalResult matchAndRewrite(Op op, m::PatternRewriter& b) const override {
    if (!llvm::isa<m::FloatType>(op.getType())) return m::failure();
    m::Value k = op.getRhs(), x = op.getLhs();
    auto c = constantF32(k);
    if (!c) {
      std::swap(k, x);
      c = constantF32(k);
    }
    if (!c || std::isnan(*c)) return m::failure();
    m::Value cmp = arith::CmpFOp::create(b, op.getLoc(), Pred, k, x);
    b.replaceOpWithNewOp<arith::SelectOp>(op, cmp, k, x);
    return m::success();
  }
};

}  // namespace

void populateFastMathPrePatterns(::mlir::RewritePatternSet& patterns) {
  patterns.add<ReciprocalOnePlusExp, MinMaxWithConstant<arith::MaximumFOp, arith::CmpFPredicate::OGT>,
               MinMaxWithConstant<arith::MinimumFOp, arith::CmpFPredicate::OLT>>(patterns.getContext());
}

void populateFastMathPatterns(::mlir::RewritePatternSet& patterns) {
  patterns.add<ExpF32, TanhF32, ErfF32>(patterns.getContext());
}

}  // namespace xacc::backend::mlir
