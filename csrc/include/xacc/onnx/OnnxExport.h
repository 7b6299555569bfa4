// ONNX export of the tensor part of a GIR graph (the `std::onnx` reducer of
// `camel`, `xacc-opt --emit=onnx`). The model is written as ONNX protobuf
// bytes by a small wire-format writer of our own (no libprotobuf): ModelProto
// with one GraphProto, opset 17 of the default domain.
//
// Note [The tensor part of a graph]: the exported nodes are the top-level
// `aten.*` nodes of one graph that are pure and yield only tensors. Every
// value they read that is not exported becomes an input of the model or an
// initializer:
//   * constants (`arith.const`, scalar attributes such as `{other = 0.5}`,
//     shape and axis lists) become initializers;
//   * tensor constructors with constant arguments (`aten.zeros`, `ones`,
//     `full`, `eye`, `arange`, `scalar_tensor`) become initializers holding
//     their values;
//   * the graph's tensor and scalar parameters and values computed outside
//     the tensor part (random tensors, values from branches or calls) become
//     graph inputs, in the order they are first read.
// Every exported value read by a node outside the part (a print, a call, an
// `aten.item`) or returned by the graph becomes a graph output, in the order
// of that first outside use. An `aten.*` node of the part with no ONNX
// translation is an error naming the op and its location (E0801).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "xacc/ir/Graph.h"
#include "xacc/ir/Parser.h"
#include "xacc/support/Diagnostic.h"

namespace xacc::onnx {

struct ExportOptions {
  std::string producer = "xacc";
  std::string modelName;  ///< graph name in the model (default: the GIR graph's)
  const ir::TextLocations* locs = nullptr;  ///< positions for diagnostics on .gir input
};

/// What ended up in the model (for messages and tests).
struct ExportSummary {
  size_t nodes = 0;  ///< ONNX nodes written
  std::vector<std::string> inputs, outputs, initializers;
  std::vector<std::string> onnxOps;  ///< op_type of each node, in order
};

/// Translates the tensor part of `g` to ONNX protobuf bytes. Returns false
/// after reporting an error (unsupported op, no tensor ops at all, shapes that
/// are not compile-time constants).
bool exportOnnx(const ir::Graph& g, const ExportOptions& opts, support::DiagnosticEngine& diags,
                std::string& bytes, ExportSummary* summary = nullptr);

/// exportOnnx, then writes the bytes to `path` (E0803 when it cannot).
bool writeOnnxFile(const ir::Graph& g, const std::string& path, const ExportOptions& opts,
                   support::DiagnosticEngine& diags, ExportSummary* summary = nullptr);

/// The aten op names (without overload) that have a translation, sorted.
std::vector<std::string> supportedAtenOps();

}  // namespace xacc::onnx
