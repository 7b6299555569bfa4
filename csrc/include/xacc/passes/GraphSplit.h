// Splitting a graph into consecutive pieces at gradient-bucket boundaries, so
// that each piece can be compiled and differentiated on its own (XJIT's DDP
// training; xacc/_src/capture/ddp_split.py).
//
// Note [Bucket split]: DistributedDataParallel all-reduces the gradients of its
// parameters in buckets (the first ~1 MiB of gradients to become ready, then
// 25 MiB each), launching a bucket's all-reduce from the autograd hook of the
// last of its parameters to receive a gradient. A captured training graph whose
// backward is one compiled function hands every gradient to autograd at the end
// of the backward, so every bucket is launched then and no communication overlaps
// the backward. Cutting the graph where the parameter bytes, counted from the
// graph's end, fill a bucket (the cap of bucket k: `caps[k]`, the last cap for the
// rest, as DDP's reducer and Dynamo's DDPOptimizer count) gives pieces whose
// backwards run one after the other, latest piece first, each handing its
// parameters' gradients to autograd as soon as it returns: the bucket's
// all-reduce starts while the earlier pieces' backwards still run.
//
// A cut is made only where every value crossing it is a tensor, an int or a
// bool (what an autograd.Function passes on exactly: a float or a list would lose
// its gradient); otherwise the piece grows toward the graph's start until such a
// point. Pure nodes without operands (constants) are not cut off: each piece that
// reads one recomputes it. Graphs with effects (tokens) or calls are not split.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "xacc/ir/Graph.h"

namespace xacc::passes {

/// Where a value of a split graph comes from: the original graph's parameter
/// `index` (piece == -1) or result `index` of an earlier piece.
struct SplitSource {
  int piece = -1;
  size_t index = 0;
};

struct GraphSplit {
  std::vector<std::unique_ptr<ir::Graph>> pieces;
  /// Per piece, one source per parameter of the piece.
  std::vector<std::vector<SplitSource>> inputs;
  /// One source per result of the original graph.
  std::vector<SplitSource> results;
};

/// The piece of every top-level node of `g` (non-decreasing, from 0) for
/// parameters of `paramBytes[i]` bytes each (0: not a bucketed parameter) and
/// bucket caps `caps` (see Note [Bucket split]). One piece when no clean cut exists.
std::vector<size_t> bucketPieces(const ir::Graph& g, const std::vector<uint64_t>& paramBytes,
                                 const std::vector<uint64_t>& caps);

/// Splits `g` by `pieceOf` (one entry per top-level node, non-decreasing).
/// False with `error` set when `g` has effects, or a value that is not a
/// tensor, int or bool would cross a cut.
bool splitGraph(const ir::Graph& g, const std::vector<size_t>& pieceOf, GraphSplit& out, std::string& error);

}  // namespace xacc::passes
