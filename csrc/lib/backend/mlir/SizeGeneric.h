// Size-generic kernels: one kernel for every size of the dims that change
// between calls (Note [Size-generic kernels] in SizeGeneric.cpp). No MLIR, no
// torch: pure functions over region signatures and the kernel IR.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "KernelIR.h"
#include "Lowering.h"

namespace xacc::backend::mlir {

/// Which input dims of a region are symbolic: sig is the signature the
/// pattern was derived from; sym[i][j] is the symbol of dim j of input i, or
/// -1 for a dim fixed at sig's size; symbolAt[k] is one (input, dim) with
/// symbol k, where the run-time size is read.
struct SizePattern {
  std::vector<InputDesc> sig;
  std::vector<std::vector<int>> sym;
  std::vector<std::pair<int, int>> symbolAt;
  int symbols() const { return static_cast<int>(symbolAt.size()); }
};

/// The pattern covering `ref` and `in`: symbolic where the region declares a
/// dim dynamic, where the two sizes differ, or where `prev` (the pattern
/// being widened) already was; dims of size 1 stay fixed (they broadcast), and
/// dims with equal sizes in both signatures share a symbol. False when the
/// signatures differ in anything but sizes or no dim is symbolic.
bool derivePattern(const Region& r, const std::vector<InputDesc>& ref, const std::vector<InputDesc>& in,
                   const SizePattern* prev, SizePattern& out);

/// Whether `in` is an instance of `p`: fixed dims equal, each symbol's dims
/// equal to each other and at least 2.
bool matchesPattern(const SizePattern& p, const std::vector<InputDesc>& in);

/// Lowers region `r` for two probe signatures with other sizes for the
/// symbols and derives, from them and `concrete` (r lowered for p.sig),
/// `generic`: the same kernel with symbolic extents (KernelIR.h) where the
/// probes' extents follow the symbols. False with `why` when the kernel's
/// structure depends on a symbolic size in any other way (a constant such as
/// 1/n, a view offset, a product of sizes, a different decomposition).
bool buildSizeGenericKernel(const Region& r, const SizePattern& p, const KernelIR& concrete, KernelIR& generic,
                            std::string& why);

/// Whether `concrete` (a region lowered for `in`) is exactly `generic` with
/// its symbols at the sizes of `in`: then the generic kernel computes what the
/// region's own kernel would, whichever region it was derived from.
bool instanceOf(const KernelIR& generic, const SizePattern& p, const std::vector<InputDesc>& in,
                const KernelIR& concrete);

/// A kernel's structure without its sizes (only which dims are 1): kernels
/// with equal keys differ at most in extents.
std::string skeletonKey(const KernelIR& k);

/// The size-generic kernel of a region over the dims its inputs declare
/// dynamic (named symbols shared, `?` dims each their own, or else all one),
/// as `xacc-mlir --emit` prints it; `pattern` names its symbols. False with
/// `why` when the region declares none or its kernel depends on them.
bool declaredGenericKernel(const Region& r, KernelIR& generic, SizePattern& pattern, std::string& why);

/// Whether any tensor input of `r` declares a dynamic dim (`?` or a symbol).
bool declaresDynamicDims(const Region& r);

/// The run-time size of symbol k of `p` in `in`.
int64_t symbolSize(const SizePattern& p, const std::vector<InputDesc>& in, int k);

/// `shape` with its symbolic extents replaced by the sizes of `in`.
std::vector<int64_t> concreteShape(std::vector<int64_t> shape, const SizePattern& p,
                                   const std::vector<InputDesc>& in);

/// The pattern as text for logs: `f32[s0,4,s1]`, one entry per input.
std::string patternText(const SizePattern& p);

}  // namespace xacc::backend::mlir
