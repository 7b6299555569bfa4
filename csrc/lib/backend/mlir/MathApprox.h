// Fast-math approximations of f32 transcendental functions for tensor kernels
// (MathApprox.cpp). Applied by Jit.cpp after convert-linalg-to-loops when
// JitOptions::fastMath is set.
#pragma once

namespace mlir {
class RewritePatternSet;
}

namespace xacc::backend::mlir {

/// Rewrites that must see the math ops before they are approximated
/// (n / (c + exp(y)), i.e. sigmoid, with a bounded exp and a fast divide), and
/// maximumf/minimumf with a constant operand as one compare + select (one
/// vmaxps/vminps instead of arith-expand's NaN-handling sequence).
void populateFastMathPrePatterns(::mlir::RewritePatternSet& patterns);

/// exp, tanh and erf on f32: inline polynomial/rational code with fast divides;
/// higher benefit than MLIR's approximations of the same ops.
void populateFastMathPatterns(::mlir::RewritePatternSet& patterns);

}  // namespace xacc::backend::mlir
