// Kernel IR -> MLIR text. One `func.func` per kernel: tensor arguments and
// outputs are memrefs (bufferization.to_tensor ... restrict on the way in,
// materialize_in_destination ... restrict writable on the way out, so one-shot
// bufferization writes results straight into the caller's buffers). Every
// output and every reduction is computed by a linalg.generic whose body
// inlines all the elementwise and view nodes it depends on, indexed through
// composed affine maps: a pointwise chain becomes one loop nest with no
// intermediate buffers, whatever its length. Outputs of one shape share one
// multi-result generic. Reductions are the only materialised intermediates.
//
// Bool tensors are stored as i8 (PyTorch's layout) and computed as i1.
#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <sstream>
#include <utility>

#include "KernelIR.h"

namespace xacc::backend::mlir {
namespace {

using ir::DType;

bool isFloat(DType d) { return d == DType::F32 || d == DType::F64 || d == DType::F16 || d == DType::BF16; }

const char* storageType(DType d) {
  switch (d) {
    case DType::F16: return "f16";
    case DType::BF16: return "bf16";
    case DType::F32: return "f32";
    case DType::F64: return "f64";
    case DType::I8: case DType::U8: case DType::Bool: return "i8";
    case DType::I16: return "i16";
    case DType::I32: return "i32";
    case DType::I64: return "i64";
    default: return "f32";
  }
}
const char* computeType(DType d) { return d == DType::Bool ? "i1" : storageType(d); }

int bitWidth(DType d) {
  switch (d) {
    case DType::Bool: return 1;
    case DType::I8: case DType::U8: return 8;
    case DType::F16: case DType::BF16: case DType::I16: return 16;
    case DType::F32: case DType::I32: return 32;
    default: return 64;
  }
}

/// The row dimension printed as `?` (see KernelIR::dynRows) while a kernel
/// with dynamic rows is being emitted on this thread.
thread_local struct {
  int64_t rows = -1;
  size_t rank = 0;
} tDynRows;

bool isRowShape(const std::vector<int64_t>& shape) {
  return tDynRows.rows >= 0 && shape.size() == tDynRows.rank && shape[0] == tDynRows.rows;
}

std::string shapeText(const std::vector<int64_t>& shape, DType d, const char* kind) {
  std::string s = std::string(kind) + "<";
  for (size_t i = 0; i < shape.size(); ++i)
    s += ((i == 0 && isRowShape(shape)) || isSymbolicExtent(shape[i]) ? std::string("?") : std::to_string(shape[i])) +
         "x";
  return s + storageType(d) + ">";
}
std::string tensorType(const std::vector<int64_t>& shape, DType d) {
  return shapeText(shape, d, "tensor");
}
std::string memrefType(const KInput& in) {
  std::string s = shapeText(in.shape, in.dtype, "memref");
  if (in.contiguous || in.shape.empty()) return s;
  s.pop_back();
  s += ", strided<[";
  for (size_t i = 0; i < in.shape.size(); ++i) s += i ? ", ?" : "?";
  return s + "], offset: ?>>";
}

std::string affineText(const AffineIndex& a) {
  if (a.dim < 0) return std::to_string(a.add);
  std::string s = "d" + std::to_string(a.dim);
  if (a.mul != 1) s += " * " + std::to_string(a.mul);
  if (a.add > 0) s += " + " + std::to_string(a.add);
  if (a.add < 0) s += " - " + std::to_string(-a.add);
  return s;
}

std::string mapText(size_t rank, const std::vector<AffineIndex>& idx) {
  std::string s = "affine_map<(";
  for (size_t i = 0; i < rank; ++i) s += (i ? ", d" : "d") + std::to_string(i);
  s += ") -> (";
  for (size_t i = 0; i < idx.size(); ++i) s += (i ? ", " : "") + affineText(idx[i]);
  return s + ")>";
}

std::string floatLiteral(double v, DType d) {
  if (std::isnan(v)) return d == DType::F64 ? "0x7FF8000000000000" : "0x7FC00000";
  if (std::isinf(v)) {
    if (d == DType::F64) return v > 0 ? "0x7FF0000000000000" : "0xFFF0000000000000";
    return v > 0 ? "0x7F800000" : "0xFF800000";
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17e", v);
  return buf;
}

/// Emits one function body. Bodies of generics are built into a side buffer so
/// their `ins` operands can be collected before the op header is printed.
class Emitter {
public:
  explicit Emitter(const KernelIR& k) : k_(k) {}

  std::string run(const EmitOptions& opts, std::string* unsupported) {
    tDynRows.rows = k_.dynRows;
    tDynRows.rank = k_.outputs.empty() ? 0 : k_.at(k_.outputs[0]).shape.size();
    std::string text = emit(opts);
    tDynRows.rows = -1;
    if (unsupported) *unsupported = unsupported_;
    return unsupported_.empty() ? text : std::string();
  }

  std::string emit(const EmitOptions& opts) {
    std::ostringstream sig;
    std::string body;
    sig << "func.func @" << opts.funcName << "(";
    bool first = true;
    auto sep = [&]() -> std::ostringstream& {
      if (!first) sig << ", ";
      first = false;
      return sig;
    };
    for (size_t i = 0; i < k_.inputs.size(); ++i) sep() << "%in" << i << ": " << memrefType(k_.inputs[i]);
    for (size_t i = 0; i < k_.scalars.size(); ++i) sep() << "%s" << i << ": " << computeType(k_.scalars[i]);
    for (size_t i = 0; i < k_.outputs.size(); ++i) {
      const KNode& n = k_.at(k_.outputs[i]);
      sep() << "%out" << i << ": " << shapeText(n.shape, n.dtype, "memref");
    }
    sig << ") {\n";
    for (size_t i = 0; i < k_.inputs.size(); ++i)
      line() << "%tin" << i << " = bufferization.to_tensor %in" << i << " restrict : "
             << memrefType(k_.inputs[i]) << " to " << tensorType(k_.inputs[i].shape, k_.inputs[i].dtype);
    // Symbolic extents (a size-generic kernel, KernelIR.h): each is read once
    // from the first argument that has it.
    auto bindSymbols = [&](const std::vector<int64_t>& shape, const std::string& memref, const std::string& type) {
      for (size_t j = 0; j < shape.size(); ++j) {
        if (!isSymbolicExtent(shape[j]) || symbols_.count(shape[j])) continue;
        std::string v = "%sym" + std::to_string(symbolIndex(shape[j]));
        line() << v << "_c = arith.constant " << j << " : index";
        line() << v << " = memref.dim " << memref << ", " << v << "_c : " << type;
        symbols_[shape[j]] = v;
      }
    };
    for (size_t i = 0; i < k_.inputs.size(); ++i)
      bindSymbols(k_.inputs[i].shape, "%in" + std::to_string(i), memrefType(k_.inputs[i]));
    for (size_t i = 0; i < k_.outputs.size(); ++i) {
      const KNode& n = k_.at(k_.outputs[i]);
      bindSymbols(n.shape, "%out" + std::to_string(i), shapeText(n.shape, n.dtype, "memref"));
    }
    if (k_.dynRows >= 0 && !k_.outputs.empty()) {
      const KNode& o = k_.at(k_.outputs[0]);
      line() << "%c0_idx = arith.constant 0 : index";
      line() << "%nrows = memref.dim %out0, %c0_idx : " << shapeText(o.shape, o.dtype, "memref");
    }

    // Reductions first, in topological order; then the outputs grouped by shape.
    for (size_t i = 0; i < k_.nodes.size(); ++i)
      if (k_.nodes[i].kind == KNode::Reduce) emitReduce(static_cast<int>(i));
    std::vector<std::vector<int64_t>> shapes;
    std::map<std::vector<int64_t>, std::vector<size_t>> byShape;
    for (size_t i = 0; i < k_.outputs.size(); ++i) {
      const KNode& n = k_.at(k_.outputs[i]);
      if (n.kind == KNode::Reduce) continue;
      auto& slot = byShape[n.shape];
      if (slot.empty()) shapes.push_back(n.shape);
      slot.push_back(i);
    }
    for (const auto& s : shapes) emitOutputGroup(s, byShape[s]);
    for (size_t i = 0; i < k_.outputs.size(); ++i) {
      const KNode& n = k_.at(k_.outputs[i]);
      line() << "bufferization.materialize_in_destination " << outputValue_[i] << " in restrict writable %out"
             << i << " : (" << tensorType(n.shape, n.dtype) << ", " << shapeText(n.shape, n.dtype, "memref")
             << ") -> ()";
    }
    line() << "return";
    std::string out = "module {\n" + sig.str() + text_.str() + "\n}\n}\n";
    return out;
  }

private:
  struct Operand {
    std::string tensor;
    std::vector<int64_t> shape;
    DType dtype;
    std::string map, arg;
  };
  struct Body {
    size_t rank = 0;
    std::vector<int64_t> loops;  ///< extent of each loop dim
    std::vector<Operand> ins;
    std::map<std::string, std::string> memo;  // "node@idx" -> SSA value
    std::ostringstream text;
  };

  /// Starts a new line of the function body.
  std::ostringstream& line() {
    text_ << (started_ ? "\n  " : "  ");
    started_ = true;
    return text_;
  }
  std::string empty(const std::vector<int64_t>& shape, DType d) {
    std::string dyn = isRowShape(shape) ? "%nrows" : "";
    for (int64_t e : shape) {
      if (!isSymbolicExtent(e)) continue;
      auto it = symbols_.find(e);
      if (it == symbols_.end()) {
        unsupported_ = "an extent no argument has";
        return "tensor.empty() : " + tensorType(shape, d);
      }
      dyn += (dyn.empty() ? "" : ", ") + it->second;
    }
    return "tensor.empty(" + dyn + ") : " + tensorType(shape, d);
  }
  std::string fresh(const char* prefix = "%v") { return prefix + std::to_string(counter_++); }

  static std::string idxKey(const std::vector<AffineIndex>& idx) {
    std::string s;
    for (const auto& a : idx) s += affineText(a) + ",";
    return s;
  }

  /// The index of `arg` (rank ra) inside a node of `shape` indexed by `idx`.
  std::vector<AffineIndex> broadcastIndex(const KNode& arg, const std::vector<int64_t>& shape,
                                          const std::vector<AffineIndex>& idx) {
    size_t r = shape.size(), ra = arg.shape.size();
    std::vector<AffineIndex> out(ra);
    for (size_t j = 0; j < ra; ++j) {
      size_t o = r - ra + j;
      out[j] = (arg.shape[j] == 1 && shape[o] != 1) ? AffineIndex{-1, 1, 0} : idx[o];
    }
    return out;
  }

  std::string readTensor(Body& b, const std::string& tensor0, const std::vector<int64_t>& shape0, DType d,
                         const std::vector<AffineIndex>& idx0) {
    // linalg infers each loop's extent from the first operand that indexes it
    // plainly (`dN`, no scale or offset). A view that reads a dim through
    // `dN + k`, or reads fewer elements of it than the loop has (slices,
    // pooling windows), must not be that operand: it reads a
    // tensor.extract_slice of exactly the loop's extent instead (a subview
    // after bufferization, no copy).
    std::string tensor = tensor0;
    std::vector<int64_t> shape = shape0;
    std::vector<AffineIndex> idx = idx0;
    bool crop = false;
    for (size_t j = 0; j < idx.size(); ++j)
      if (idx[j].dim >= 0 && idx[j].mul == 1 && static_cast<size_t>(idx[j].dim) < b.loops.size() &&
          (idx[j].add != 0 || shape[j] != b.loops[static_cast<size_t>(idx[j].dim)]))
        crop = true;
    // With dynamic rows (a kernel split over dim 0), dim 0 of a row-shaped
    // view is read plainly (splittableOverDim0 in Executable.cpp), and its
    // slice size is the run-time row count.
    bool rowArg = isRowShape(shape0);
    if (crop) {
      // Offsets and sizes of a slice are printed as constants: a size-generic
      // kernel cannot crop a symbolic extent (the executable then compiles
      // per size instead).
      for (size_t j = 0; j < idx.size(); ++j)
        if (isSymbolicExtent(shape[j]) ||
            (idx[j].dim >= 0 && static_cast<size_t>(idx[j].dim) < b.loops.size() &&
             isSymbolicExtent(b.loops[static_cast<size_t>(idx[j].dim)])))
          unsupported_ = "a slice of a symbolic extent";
    }
    if (crop && (tDynRows.rows < 0 || (rowArg && idx[0].dim == 0 && idx[0].mul == 1 && idx[0].add == 0))) {
      std::string offs, sizes, ones;
      for (size_t j = 0; j < idx.size(); ++j) {
        int64_t off = 0, size = shape[j];
        if (idx[j].dim >= 0 && idx[j].mul == 1) {
          off = idx[j].add;
          size = b.loops[static_cast<size_t>(idx[j].dim)];
          idx[j].add = 0;
        }
        offs += (j ? ", " : "") + std::to_string(off);
        sizes += (j ? ", " : "") + (j == 0 && rowArg ? std::string("%nrows") : std::to_string(size));
        ones += j ? ", 1" : "1";
        shape[j] = size;
      }
      std::string key = tensor + "[" + offs + "][" + sizes + "]";
      auto it = slices_.find(key);
      if (it == slices_.end()) {
        std::string v = fresh("%sl");
        line() << v << " = tensor.extract_slice " << tensor << "[" << offs << "] [" << sizes << "] [" << ones
               << "] : " << tensorType(shape0, d) << " to " << tensorType(shape, d);
        it = slices_.emplace(key, v).first;
      }
      tensor = it->second;
    }
    std::string map = mapText(b.rank, idx);
    std::string arg;
    for (const auto& op : b.ins)
      if (op.tensor == tensor && op.map == map) arg = op.arg;
    if (arg.empty()) {
      arg = fresh("%a");
      b.ins.push_back({tensor, shape, d, map, arg});
    }
    if (d != DType::Bool) return arg;
    std::string v = fresh();
    b.text << "    " << v << " = arith.trunci " << arg << " : i8 to i1\n";
    return v;
  }

  /// The operands `value` reads node `n` at `idx` through: (node, index) pairs.
  std::vector<std::pair<int, std::vector<AffineIndex>>> operandsAt(const KNode& n,
                                                                   const std::vector<AffineIndex>& idx) {
    std::vector<std::pair<int, std::vector<AffineIndex>>> ops;
    if (n.kind == KNode::View) {
      std::vector<AffineIndex> in(n.viewIndex.size());
      for (size_t j = 0; j < in.size(); ++j) {
        const AffineIndex& e = n.viewIndex[j];
        if (e.dim < 0) {
          in[j] = e;
        } else {
          const AffineIndex& o = idx[static_cast<size_t>(e.dim)];
          in[j] = o.dim < 0 ? AffineIndex{-1, 1, o.add * e.mul + e.add}
                            : AffineIndex{o.dim, o.mul * e.mul, o.add * e.mul + e.add};
        }
      }
      ops.emplace_back(n.args[0], std::move(in));
    } else if (n.kind == KNode::Map) {
      for (int a : n.args) ops.emplace_back(a, broadcastIndex(k_.at(a), n.shape, idx));
    }
    return ops;
  }

  /// The SSA value of node `id` read at `idx`, emitting what it needs first
  /// (operands before their users, the first operand's before the second's).
  /// Depth-first with an explicit stack, not recursion: a fused chain is as
  /// deep as the function is long (a 6,000-line straight-line function fuses
  /// into one kernel 12,000 nodes deep), and recursion that deep overflows
  /// the thread's stack.
  std::string value(Body& b, int id, const std::vector<AffineIndex>& idx) {
    struct Item {
      int id;
      std::vector<AffineIndex> idx;
      std::string key;
      bool expanded;
    };
    auto keyOf = [](int node, const std::vector<AffineIndex>& at) { return std::to_string(node) + "@" + idxKey(at); };
    std::string rootKey = keyOf(id, idx);
    std::vector<Item> stack;
    stack.push_back({id, idx, rootKey, false});
    while (!stack.empty()) {
      size_t top = stack.size() - 1;
      if (b.memo.count(stack[top].key)) {
        stack.pop_back();
        continue;
      }
      const KNode& n = k_.at(stack[top].id);
      auto ops = operandsAt(n, stack[top].idx);
      if (!stack[top].expanded) {
        stack[top].expanded = true;
        for (auto it = ops.rbegin(); it != ops.rend(); ++it) {
          std::string k = keyOf(it->first, it->second);
          if (!b.memo.count(k)) stack.push_back({it->first, std::move(it->second), std::move(k), false});
        }
        continue;
      }
      const std::vector<AffineIndex>& at = stack[top].idx;
      std::string v;
      switch (n.kind) {
        case KNode::Input:
          v = readTensor(b, "%tin" + std::to_string(n.index), n.shape, n.dtype, at);
          break;
        case KNode::Reduce:
          v = readTensor(b, reduced_.at(stack[top].id), n.shape, n.dtype, at);
          break;
        case KNode::Scalar:
          v = "%s" + std::to_string(n.index);
          break;
        case KNode::Const:
          v = n.symbol >= 0 ? symbolicConstant(b, n) : constant(b, n.dtype, n.fval, n.ival);
          break;
        case KNode::View:
          v = b.memo.at(keyOf(ops[0].first, ops[0].second));
          break;
        case KNode::Iota:
          v = iotaValue(b, n, at);
          break;
        case KNode::Map: {
          std::vector<std::string> args;
          for (const auto& [a, aidx] : ops) args.push_back(b.memo.at(keyOf(a, aidx)));
          v = mapOp(b, n, args);
          break;
        }
      }
      b.memo[stack[top].key] = v;
      stack.pop_back();
    }
    return b.memo.at(rootKey);
  }

  /// An Iota read at `at`: its coefficients applied to the loop indices
  /// (`linalg.index`) the read's affine index names. A kernel split over rows
  /// sees chunk-relative indices of loop 0, so an Iota that depends on loop
  /// 0 cannot be printed there (splittableOverDim0 keeps such kernels whole).
  std::string iotaValue(Body& b, const KNode& n, const std::vector<AffineIndex>& at) {
    int64_t base = n.ival;
    std::map<int, int64_t> perLoop;
    for (size_t d = 0; d < n.coef.size() && d < at.size(); ++d) {
      if (n.coef[d] == 0) continue;
      base += n.coef[d] * at[d].add;
      if (at[d].dim >= 0) perLoop[at[d].dim] += n.coef[d] * at[d].mul;
    }
    std::string acc = constant(b, DType::I64, 0, base);
    for (const auto& [loop, mul] : perLoop) {
      if (mul == 0) continue;
      if (tDynRows.rows >= 0 && loop == 0) unsupported_ = "an index value of the rows of a split kernel";
      std::string i = fresh(), j = fresh(), m = constant(b, DType::I64, 0, mul), p = fresh(), s = fresh();
      b.text << "    " << i << " = linalg.index " << loop << " : index\n";
      b.text << "    " << j << " = arith.index_cast " << i << " : index to i64\n";
      b.text << "    " << p << " = arith.muli " << j << ", " << m << " : i64\n";
      b.text << "    " << s << " = arith.addi " << acc << ", " << p << " : i64\n";
      acc = s;
    }
    return acc;
  }

  /// A Const whose value is a symbol's size plus fval (KNode::symbol): the
  /// size as f64, plus the offset, rounded to the constant's type, as the
  /// per-size kernel's literal is.
  std::string symbolicConstant(Body& b, const KNode& n) {
    auto it = symbols_.find(symbolicExtent(n.symbol));
    if (it == symbols_.end()) {
      unsupported_ = "a constant of a size no argument has";
      return constant(b, n.dtype, 0, 0);
    }
    std::string i = fresh(), f = fresh();
    b.text << "    " << i << " = arith.index_cast " << it->second << " : index to i64\n";
    b.text << "    " << f << " = arith.sitofp " << i << " : i64 to f64\n";
    if (n.fval != 0) {
      std::string off = constant(b, DType::F64, n.fval, 0), g = fresh();
      b.text << "    " << g << " = arith.addf " << f << ", " << off << " : f64\n";
      f = g;
    }
    return cast(b, f, DType::F64, n.dtype);
  }

  std::string constant(Body& b, DType d, double f, int64_t i) {
    std::string v = fresh();
    if (isFloat(d))
      b.text << "    " << v << " = arith.constant " << floatLiteral(f, d) << " : " << computeType(d) << "\n";
    else if (d == DType::Bool)
      b.text << "    " << v << " = arith.constant " << (i ? "true" : "false") << "\n";
    else
      b.text << "    " << v << " = arith.constant " << i << " : " << computeType(d) << "\n";
    return v;
  }

  std::string cast(Body& b, const std::string& x, DType from, DType to) {
    if (from == to) return x;
    std::string v = fresh();
    const char* ft = computeType(from);
    const char* tt = computeType(to);
    auto& o = b.text;
    if (to == DType::Bool) {
      std::string z = constant(b, from, 0, 0);
      if (isFloat(from))
        o << "    " << v << " = arith.cmpf une, " << x << ", " << z << " : " << ft << "\n";
      else
        o << "    " << v << " = arith.cmpi ne, " << x << ", " << z << " : " << ft << "\n";
      return v;
    }
    if (isFloat(from) && isFloat(to)) {
      o << "    " << v << " = arith." << (bitWidth(to) > bitWidth(from) ? "extf " : "truncf ") << x << " : "
        << ft << " to " << tt << "\n";
    } else if (!isFloat(from) && isFloat(to)) {
      o << "    " << v << " = arith." << (from == DType::Bool ? "uitofp " : "sitofp ") << x << " : " << ft
        << " to " << tt << "\n";
    } else if (isFloat(from)) {
      o << "    " << v << " = arith.fptosi " << x << " : " << ft << " to " << tt << "\n";
    } else {
      const char* how = bitWidth(to) > bitWidth(from) ? (from == DType::Bool ? "extui " : "extsi ") : "trunci ";
      o << "    " << v << " = arith." << how << x << " : " << ft << " to " << tt << "\n";
    }
    return v;
  }

  std::string mapOp(Body& b, const KNode& n, const std::vector<std::string>& a) {
    const std::string& op = n.op;
    if (op == "cast") return cast(b, a[0], k_.at(n.args[0]).dtype, n.dtype);
    DType d = op.rfind("cmp.", 0) == 0 ? k_.at(n.args[0]).dtype : n.dtype;
    bool f = isFloat(d);
    const char* t = computeType(d);
    std::string v = fresh();
    auto& o = b.text;
    auto bin = [&](const char* fop, const char* iop) {
      o << "    " << v << " = " << (f ? fop : iop) << " " << a[0] << ", " << a[1] << " : " << t << "\n";
      return v;
    };
    auto un = [&](const char* fop) {
      o << "    " << v << " = " << fop << " " << a[0] << " : " << t << "\n";
      return v;
    };
    if (op == "add") return bin("arith.addf", d == DType::Bool ? "arith.ori" : "arith.addi");
    if (op == "sub") return bin("arith.subf", "arith.subi");
    if (op == "mul") return bin("arith.mulf", d == DType::Bool ? "arith.andi" : "arith.muli");
    if (op == "div") return bin("arith.divf", "arith.divsi");
    if (op == "floordiv") {
      if (!f) return bin("", "arith.floordivsi");
      std::string q = fresh();
      o << "    " << q << " = arith.divf " << a[0] << ", " << a[1] << " : " << t << "\n";
      o << "    " << v << " = math.floor " << q << " : " << t << "\n";
      return v;
    }
    if (op == "fmod") return bin("arith.remf", "arith.remsi");
    if (op == "max") return bin("arith.maximumf", d == DType::Bool ? "arith.ori" : "arith.maxsi");
    if (op == "min") return bin("arith.minimumf", d == DType::Bool ? "arith.andi" : "arith.minsi");
    if (op == "pow") return bin("math.powf", "math.ipowi");
    if (op == "atan2") return bin("math.atan2", "");
    if (op == "and") return bin("", "arith.andi");
    if (op == "or") return bin("", "arith.ori");
    if (op == "xor") return bin("", "arith.xori");
    if (op == "not") {
      std::string m = constant(b, d, 0, d == DType::Bool ? 1 : -1);
      o << "    " << v << " = arith.xori " << a[0] << ", " << m << " : " << t << "\n";
      return v;
    }
    if (op == "neg") {
      if (f) return un("arith.negf");
      std::string z = constant(b, d, 0, 0);
      o << "    " << v << " = arith.subi " << z << ", " << a[0] << " : " << t << "\n";
      return v;
    }
    if (op == "abs") return un(f ? "math.absf" : "math.absi");
    if (op == "select") {
      o << "    " << v << " = arith.select " << a[0] << ", " << a[1] << ", " << a[2] << " : " << t << "\n";
      return v;
    }
    if (op.rfind("cmp.", 0) == 0) {
      std::string p = op.substr(4);
      static const std::map<std::string, std::pair<const char*, const char*>> preds = {
          {"eq", {"oeq", "eq"}}, {"ne", {"une", "ne"}},   {"lt", {"olt", "slt"}},
          {"le", {"ole", "sle"}}, {"gt", {"ogt", "sgt"}}, {"ge", {"oge", "sge"}},
          {"uno", {"uno", "ne"}}};
      auto pr = preds.at(p);
      std::string ip = pr.second;
      if (d == DType::Bool && ip[0] == 's') ip[0] = 'u';
      o << "    " << v << " = arith." << (f ? "cmpf " : "cmpi ") << (f ? pr.first : ip.c_str()) << ", " << a[0]
        << ", " << a[1] << " : " << t << "\n";
      return v;
    }
    static const std::map<std::string, const char*> unary = {
        {"exp", "math.exp"},     {"log", "math.log"},     {"tanh", "math.tanh"},
        {"sqrt", "math.sqrt"},   {"rsqrt", "math.rsqrt"}, {"sin", "math.sin"},
        {"cos", "math.cos"},     {"tan", "math.tan"},     {"erf", "math.erf"},
        {"log1p", "math.log1p"}, {"expm1", "math.expm1"}, {"exp2", "math.exp2"},
        {"log2", "math.log2"},   {"log10", "math.log10"}, {"floor", "math.floor"},
        {"ceil", "math.ceil"},   {"round", "math.roundeven"}, {"trunc", "math.trunc"},
        {"atan", "math.atan"},   {"asin", "math.asin"},   {"acos", "math.acos"},
        {"sinh", "math.sinh"},   {"cosh", "math.cosh"},   {"erfc", "math.erfc"}};
    auto it = unary.find(op);
    assert(it != unary.end() && "unknown kernel op");
    return un(it->second);
  }

  struct Out {
    std::string init;  ///< tensor SSA value passed as `outs`
    std::vector<int64_t> shape;
    DType dtype;
    std::string map;
    std::string blockArg;  ///< the body's name for the current output element
  };

  void emitGeneric(Body& b, const std::vector<Out>& outs, const std::vector<std::string>& iterators,
                   const std::vector<std::string>& results, const std::vector<std::string>& resultNames) {
    auto& o = line();
    for (size_t i = 0; i < resultNames.size(); ++i) o << (i ? ", " : "") << resultNames[i];
    o << " = linalg.generic {indexing_maps = [";
    const char* sep = "";
    for (const auto& in : b.ins) o << std::exchange(sep, ", ") << in.map;
    for (const auto& out : outs) o << std::exchange(sep, ", ") << out.map;
    o << "], iterator_types = [";
    for (size_t i = 0; i < iterators.size(); ++i) o << (i ? ", " : "") << "\"" << iterators[i] << "\"";
    o << "]}";
    if (!b.ins.empty()) {
      o << " ins(";
      for (size_t i = 0; i < b.ins.size(); ++i) o << (i ? ", " : "") << b.ins[i].tensor;
      o << " : ";
      for (size_t i = 0; i < b.ins.size(); ++i) o << (i ? ", " : "") << tensorType(b.ins[i].shape, b.ins[i].dtype);
      o << ")";
    }
    o << " outs(";
    for (size_t i = 0; i < outs.size(); ++i) o << (i ? ", " : "") << outs[i].init;
    o << " : ";
    for (size_t i = 0; i < outs.size(); ++i) o << (i ? ", " : "") << tensorType(outs[i].shape, outs[i].dtype);
    o << ") {\n  ^bb0(";
    sep = "";
    for (const auto& in : b.ins) o << std::exchange(sep, ", ") << in.arg << ": " << storageType(in.dtype);
    for (const auto& out : outs) o << std::exchange(sep, ", ") << out.blockArg << ": " << storageType(out.dtype);
    o << "):\n" << b.text.str() << "    linalg.yield ";
    for (size_t i = 0; i < results.size(); ++i) o << (i ? ", " : "") << results[i];
    o << " : ";
    for (size_t i = 0; i < outs.size(); ++i) o << (i ? ", " : "") << storageType(outs[i].dtype);
    o << "\n  } -> " << (outs.size() > 1 ? "(" : "");
    for (size_t i = 0; i < outs.size(); ++i) o << (i ? ", " : "") << tensorType(outs[i].shape, outs[i].dtype);
    if (outs.size() > 1) o << ")";
  }

  std::vector<AffineIndex> identity(size_t rank) {
    std::vector<AffineIndex> idx(rank);
    for (size_t i = 0; i < rank; ++i) idx[i] = AffineIndex{static_cast<int>(i), 1, 0};
    return idx;
  }

  std::string toStorage(Body& b, const std::string& v, DType d) {
    if (d != DType::Bool) return v;
    std::string r = fresh();
    b.text << "    " << r << " = arith.extui " << v << " : i1 to i8\n";
    return r;
  }

  void emitOutputGroup(const std::vector<int64_t>& shape, const std::vector<size_t>& outs) {
    Body b;
    b.rank = shape.size();
    b.loops = shape;
    auto idx = identity(b.rank);
    std::vector<Out> outTensors;
    std::vector<std::string> results, names;
    for (size_t i : outs) {
      const KNode& n = k_.at(k_.outputs[i]);
      results.push_back(toStorage(b, value(b, k_.outputs[i], idx), n.dtype));
      std::string e = fresh("%e");
      line() << e << " = " << empty(shape, n.dtype);
      outTensors.push_back({e, shape, n.dtype, mapText(b.rank, idx), fresh("%acc")});
      names.push_back(fresh("%r"));
      outputValue_[i] = names.back();
    }
    emitGeneric(b, outTensors, std::vector<std::string>(b.rank, "parallel"), results, names);
  }

  void emitReduce(int id) {
    const KNode& n = k_.at(id);
    const KNode& src = k_.at(n.args[0]);
    Body b;
    b.rank = src.shape.size();
    b.loops = src.shape;
    auto idx = identity(b.rank);
    DType d = n.dtype;
    const char* t = computeType(d);
    // Identity element of the combiner.
    double fi = 0;
    int64_t ii = 0;
    if (n.op == "prod") fi = 1, ii = 1;
    if (n.op == "max") fi = -std::numeric_limits<double>::infinity(), ii = std::numeric_limits<int64_t>::min();
    if (n.op == "min") fi = std::numeric_limits<double>::infinity(), ii = std::numeric_limits<int64_t>::max();
    if (!isFloat(d) && d != DType::I64 && (n.op == "max" || n.op == "min")) {
      int w = bitWidth(d);
      ii = n.op == "max" ? -(int64_t(1) << (w - 1)) : (int64_t(1) << (w - 1)) - 1;
    }
    std::string init = fresh("%c");
    if (isFloat(d))
      line() << init << " = arith.constant " << floatLiteral(fi, d) << " : " << t;
    else
      line() << init << " = arith.constant " << ii << " : " << t;
    std::string e = fresh("%e"), filled = fresh("%f");
    line() << e << " = " << empty(n.shape, d);
    line() << filled << " = linalg.fill ins(" << init << " : " << t << ") outs(" << e << " : "
           << tensorType(n.shape, d) << ") -> " << tensorType(n.shape, d);
    std::vector<std::string> iters(b.rank, "parallel");
    std::vector<AffineIndex> outIdx;
    for (size_t i = 0; i < b.rank; ++i) {
      bool reduced = std::find(n.dims.begin(), n.dims.end(), static_cast<int>(i)) != n.dims.end();
      if (reduced) iters[i] = "reduction";
      if (!reduced) outIdx.push_back(idx[i]);
      else if (n.keepDim) outIdx.push_back(AffineIndex{-1, 1, 0});
    }
    std::string x = value(b, n.args[0], idx);
    std::string acc = fresh("%acc");
    std::string r = fresh();
    const char* op = nullptr;
    bool f = isFloat(d);
    if (n.op == "sum") op = f ? "arith.addf" : "arith.addi";
    if (n.op == "prod") op = f ? "arith.mulf" : "arith.muli";
    // Float max/min as the LLVM intrinsics (NaN-propagating like
    // arith.maximumf/minimumf): the kernel pipeline's arith-expand turns the
    // arith ops into compare+select chains, which LLVM's loop vectoriser does
    // not recognise as reductions; llvm.maximum/minimum reductions vectorise.
    if (n.op == "max") op = f ? "llvm.intr.maximum" : "arith.maxsi";
    if (n.op == "min") op = f ? "llvm.intr.minimum" : "arith.minsi";
    // Float sums and products may reassociate (as ATen's vectorised
    // reductions do): without it LLVM cannot vectorise the reduction loop.
    const char* flags = f && (n.op == "sum" || n.op == "prod") ? " fastmath<reassoc>" : "";
    if (f && (n.op == "max" || n.op == "min"))
      b.text << "    " << r << " = " << op << "(" << x << ", " << acc << ") : (" << t << ", " << t << ") -> " << t << "\n";
    else
      b.text << "    " << r << " = " << op << " " << x << ", " << acc << flags << " : " << t << "\n";
    std::string name = fresh("%r");
    reduced_[id] = name;
    emitGeneric(b, {Out{filled, n.shape, d, mapText(b.rank, outIdx), acc}}, iters, {r}, {name});
    for (size_t i = 0; i < k_.outputs.size(); ++i)
      if (k_.outputs[i] == id) outputValue_[i] = name;
  }

  const KernelIR& k_;
  std::ostringstream text_;
  bool started_ = false;
  int counter_ = 0;
  std::map<int, std::string> reduced_;
  std::map<std::string, std::string> slices_;  ///< "tensor[offsets][sizes]" -> extract_slice value
  std::map<size_t, std::string> outputValue_;
  std::map<int64_t, std::string> symbols_;  ///< symbolic extent -> its index value
  std::string unsupported_;                 ///< why a size-generic kernel cannot be printed
};

}  // namespace

int64_t numelOf(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string emitKernelMlir(const KernelIR& k, const EmitOptions& opts, std::string* unsupported) {
  return Emitter(k).run(opts, unsupported);
}

}  // namespace xacc::backend::mlir
