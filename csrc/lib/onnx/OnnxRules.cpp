// The ONNX translation rules for GIR `aten.*` ops and Camel `tensor::` builtins
// (see OnnxExport.cpp for how a node binds its arguments and is exported):
// one table entry per op, each with its schema argument names and emitter.
#include "OnnxExportImpl.h"

#include <algorithm>
#include <cmath>

namespace xacc::onnx::detail {

namespace {

/// dtype for the operands of a comparison: the floating tensor dtype if any
/// (the widest), else f64 when a scalar operand is floating, else the tensor's.
DType compareDType(Exporter& E, const std::vector<Arg>& args) {
  bool anyFloatTensor = false, floatScalar = false;
  DType best = DType::Bool, d;
  for (const Arg& a : args) {
    if (!a.present() || !E.dtypeOf(a, d)) continue;
    if (E.isTensorArg(a)) {
      if (ir::isFloatingDType(d)) {
        if (!anyFloatTensor || d == DType::F64) best = d;
        anyFloatTensor = true;
      } else if (!anyFloatTensor && (best == DType::Bool || d == DType::I64)) {
        best = d;
      }
    } else if (ir::isFloatingDType(d)) {
      floatScalar = true;
    }
  }
  if (!anyFloatTensor && floatScalar) return DType::F64;
  return best;
}

Emit unary(const char* onnxOp) {
  return [onnxOp](Exporter& E, const Node& n, std::vector<Arg>& a) {
    std::string x;
    if (!E.tensorOf(n, a[0], E.resultDType(n, 0), x)) return false;
    E.node(onnxOp, {x}, {E.resultName(n, 0)});
    return true;
  };
}

/// Elementwise binary op on operands cast to the result dtype (arithmetic)
/// or to the promoted operand dtype (comparisons).
Emit binary(const char* onnxOp, bool compare = false, bool negate = false) {
  return [=](Exporter& E, const Node& n, std::vector<Arg>& a) {
    DType d = compare ? compareDType(E, {a[0], a[1]}) : E.resultDType(n, 0);
    std::string x, y;
    if (!E.tensorOf(n, a[0], d, x) || !E.tensorOf(n, a[1], d, y)) return false;
    // add/sub: alpha scales `other`.
    if (a.size() > 2 && a[2].present()) {
      double alpha;
      if (!a[2].attr || !Exporter::attrNumber(*a[2].attr, alpha))
        return E.fail(n, "alpha must be a constant attribute");
      if (alpha != 1) {
        std::string c;
        if (!E.scalarConst(n, d, alpha, c)) return false;
        y = E.node("Mul", {y, c}, {E.fresh("alpha")});
      }
    }
    if (negate) {
      std::string eq = E.node(onnxOp, {x, y}, {E.fresh("eq")});
      E.node("Not", {eq}, {E.resultName(n, 0)});
    } else {
      E.node(onnxOp, {x, y}, {E.resultName(n, 0)});
    }
    return true;
  };
}

bool emitDiv(Exporter& E, const Node& n, std::vector<Arg>& a) {
  if (a[2].present()) {
    if (!(a[2].attr && a[2].attr->isNone())) return E.fail(n, "rounding_mode has no ONNX translation");
  }
  DType d = E.resultDType(n, 0);
  std::string x, y;
  if (!E.tensorOf(n, a[0], d, x) || !E.tensorOf(n, a[1], d, y)) return false;
  E.node("Div", {x, y}, {E.resultName(n, 0)});
  return true;
}

bool emitTranspose(Exporter& E, const Node& n, std::vector<Arg>& a, bool twoD) {
  std::string x;
  if (!E.tensorOf(n, a[0], E.resultDType(n, 0), x)) return false;
  int64_t rank = Exporter::rankOf(a[0].value);
  if (rank < 0) rank = E.rankOfName(x);  // Note [Ranks of unranked values]
  if (rank < 0) return E.fail(n, "input of unknown rank");
  std::vector<int64_t> perm(static_cast<size_t>(rank));
  for (int64_t i = 0; i < rank; ++i) perm[size_t(i)] = i;
  if (twoD) {
    if (rank == 2) std::swap(perm[0], perm[1]);
  } else {
    int64_t d0, d1;
    if (!E.constInt(n, a[1], 0, d0, "dim0") || !E.constInt(n, a[2], 1, d1, "dim1")) return false;
    if (d0 < 0) d0 += rank;
    if (d1 < 0) d1 += rank;
    if (d0 < 0 || d1 < 0 || d0 >= rank || d1 >= rank) return E.fail(n, "dimension out of range");
    std::swap(perm[size_t(d0)], perm[size_t(d1)]);
  }
  E.node("Transpose", {x}, {E.resultName(n, 0)}, Exporter::intsAttr("perm", perm));
  return true;
}

bool emitPermute(Exporter& E, const Node& n, std::vector<Arg>& a) {
  std::vector<int64_t> dims;
  std::string x;
  if (!E.tensorOf(n, a[0], E.resultDType(n, 0), x)) return false;
  int64_t rank = Exporter::rankOf(a[0].value);
  if (rank < 0) rank = E.rankOfName(x);
  if (!Exporter::constInts(a[1], dims) || rank < 0) return E.fail(n, "dims must be compile-time integers");
  for (int64_t& d : dims) d = d < 0 ? d + rank : d;
  E.node("Transpose", {x}, {E.resultName(n, 0)}, Exporter::intsAttr("perm", dims));
  return true;
}

bool emitReshape(Exporter& E, const Node& n, std::vector<Arg>& a) {
  std::vector<int64_t> shape;
  if (!Exporter::constInts(a[1], shape)) return E.fail(n, "the shape must be compile-time integers");
  std::string x, s;
  if (!E.tensorOf(n, a[0], E.resultDType(n, 0), x) || !E.intsConst(n, shape, s)) return false;
  E.node("Reshape", {x, s}, {E.resultName(n, 0)});
  return true;
}

/// sum/mean over all dims or `dim` (with keepdim), in the result dtype.
Emit reduce(const char* onnxOp, bool axesAsInput) {
  return [=](Exporter& E, const Node& n, std::vector<Arg>& a) {
    std::vector<int64_t> dims;
    if (a[1].present() && !(a[1].attr && a[1].attr->isNone()) && !Exporter::constInts(a[1], dims))
      return E.fail(n, "dim must be compile-time integers");
    bool keep;
    if (!E.constBool(n, a[2], false, keep)) return false;
    std::string x;
    if (!E.tensorOf(n, a[0], E.resultDType(n, 0), x)) return false;
    std::vector<std::string> ins{x};
    std::vector<pb::Message> more;
    if (!dims.empty()) {
      if (axesAsInput) {
        std::string ax;
        if (!E.intsConst(n, dims, ax)) return false;
        ins.push_back(ax);
      } else {
        more.push_back(Exporter::intsAttr("axes", dims));
      }
    }
    std::string out = E.node(onnxOp, ins, {E.resultName(n, 0)}, Exporter::intAttr("keepdims", keep ? 1 : 0), more);
    int64_t r = E.rankOfName(x);
    if (r >= 0) E.setRank(out, keep ? r : dims.empty() ? 0 : r - int64_t(dims.size()));
    return true;
  };
}

/// max/min: over all elements (one arg), elementwise (`other`), or per `dim`
/// (values and, for max.dim/min.dim, indices).
Emit extreme(bool isMax) {
  return [=](Exporter& E, const Node& n, std::vector<Arg>& a) {
    const char* reduceOp = isMax ? "ReduceMax" : "ReduceMin";
    const char* argOp = isMax ? "ArgMax" : "ArgMin";
    std::string x;
    if (!E.tensorOf(n, a[0], E.resultDType(n, 0), x)) return false;
    if (!a[1].present()) {  // max(self): all elements
      E.setRank(E.node(reduceOp, {x}, {E.resultName(n, 0)}, Exporter::intAttr("keepdims", 0)), 0);
      return true;
    }
    if (E.isTensorArg(a[1])) {  // max.other
      std::string y;
      if (!E.tensorOf(n, a[1], E.resultDType(n, 0), y)) return false;
      E.node(isMax ? "Max" : "Min", {x, y}, {E.resultName(n, 0)});
      return true;
    }
    int64_t dim;
    bool keep;
    if (!E.constInt(n, a[1], 0, dim, "dim") || !E.constBool(n, a[2], false, keep)) return false;
    int64_t r = E.rankOfName(x) < 0 ? -1 : E.rankOfName(x) - (keep ? 0 : 1);
    E.setRank(E.node(reduceOp, {x}, {E.resultName(n, 0)}, Exporter::intAttr("keepdims", keep),
                     {Exporter::intsAttr("axes", {dim})}),
              r);
    if (E.numTensorResults(n) > 1)
      E.setRank(E.node(argOp, {x}, {E.resultName(n, 1)}, Exporter::intAttr("axis", dim),
                       {Exporter::intAttr("keepdims", keep)}),
                r);
    return true;
  };
}

Emit argExtreme(const char* onnxOp) {
  return [=](Exporter& E, const Node& n, std::vector<Arg>& a) {
    bool keep;
    if (!E.constBool(n, a[2], false, keep)) return false;
    std::string x;
    if (!E.tensorOf(n, a[0], a[0].value ? a[0].value->type().dtype() : DType::F64, x)) return false;
    int64_t dim = 0;
    if (!a[1].present() || (a[1].attr && a[1].attr->isNone())) {  // over the flattened tensor
      std::string s;
      if (!E.intsConst(n, {-1}, s)) return false;
      x = E.node("Reshape", {x, s}, {E.fresh("flat")});
      keep = false;
    } else if (!E.constInt(n, a[1], 0, dim, "dim")) {
      return false;
    }
    int64_t r = E.rankOfName(x) < 0 ? -1 : E.rankOfName(x) - (keep ? 0 : 1);
    if (E.resultDType(n, 0) == DType::I64) {
      E.setRank(E.node(onnxOp, {x}, {E.resultName(n, 0)}, Exporter::intAttr("axis", dim),
                       {Exporter::intAttr("keepdims", keep)}),
                r);
    } else {  // tensor::argmax yields the indices as floats
      std::string idx = E.node(onnxOp, {x}, {E.fresh("index")}, Exporter::intAttr("axis", dim),
                               {Exporter::intAttr("keepdims", keep)});
      E.setRank(idx, r);
      E.node("Cast", {idx}, {E.resultName(n, 0)}, Exporter::intAttr("to", onnxDType(E.resultDType(n, 0))));
    }
    return true;
  };
}

bool emitCat(Exporter& E, const Node& n, std::vector<Arg>& a) {
  if (a[0].list.empty()) return E.fail(n, "expects the tensors as operands");
  int64_t dim;
  if (!E.constInt(n, a[1], 0, dim, "dim")) return false;
  std::vector<std::string> xs;
  for (Value* v : a[0].list) {
    Arg one;
    one.value = v;
    std::string x;
    if (!E.tensorOf(n, one, E.resultDType(n, 0), x)) return false;
    xs.push_back(x);
  }
  E.node("Concat", xs, {E.resultName(n, 0)}, Exporter::intAttr("axis", dim));
  return true;
}

bool emitWhere(Exporter& E, const Node& n, std::vector<Arg>& a) {
  std::string c, x, y;
  if (!E.tensorOf(n, a[0], DType::Bool, c) || !E.tensorOf(n, a[1], E.resultDType(n, 0), x) ||
      !E.tensorOf(n, a[2], E.resultDType(n, 0), y))
    return false;
  E.node("Where", {c, x, y}, {E.resultName(n, 0)});
  return true;
}

Emit softmax(const char* onnxOp) {
  return [=](Exporter& E, const Node& n, std::vector<Arg>& a) {
    int64_t dim;
    if (!E.constInt(n, a[1], -1, dim, "dim")) return false;
    std::string x;
    if (!E.tensorOf(n, a[0], E.resultDType(n, 0), x)) return false;
    E.node(onnxOp, {x}, {E.resultName(n, 0)}, Exporter::intAttr("axis", dim));
    return true;
  };
}

Emit axesOp(const char* onnxOp) {
  return [=](Exporter& E, const Node& n, std::vector<Arg>& a) {
    std::vector<int64_t> dims;
    if (!Exporter::constInts(a[1], dims)) return E.fail(n, "dim must be a compile-time integer");
    std::string x, ax;
    if (!E.tensorOf(n, a[0], E.resultDType(n, 0), x) || !E.intsConst(n, dims, ax)) return false;
    E.node(onnxOp, {x, ax}, {E.resultName(n, 0)});
    return true;
  };
}

bool emitSelect(Exporter& E, const Node& n, std::vector<Arg>& a) {
  int64_t dim, index;
  if (!E.constInt(n, a[1], 0, dim, "dim") || !E.constInt(n, a[2], 0, index, "index")) return false;
  std::string x, i;
  if (!E.tensorOf(n, a[0], E.resultDType(n, 0), x) || !E.initializer(n, E.fresh("index"), DType::I64, {}, {double(index)}, i))
    return false;
  E.node("Gather", {x, i}, {E.resultName(n, 0)}, Exporter::intAttr("axis", dim));
  return true;
}

/// Constructors with constant arguments: an initializer with their values.
Emit constructor(std::function<bool(Exporter&, const Node&, std::vector<Arg>&, std::vector<int64_t>&,
                                    std::vector<double>&)>
                     values) {
  return [values](Exporter& E, const Node& n, std::vector<Arg>& a) {
    Type t = n.result(Exporter::resultBase(n))->type();
    std::vector<int64_t> dims;
    std::vector<double> vs;
    if (!values(E, n, a, dims, vs)) return false;
    std::string name;
    return E.initializer(n, E.resultName(n, 0), t.dtype(), dims, vs, name);
  };
}

bool fillShape(Exporter& E, const Node& n, const Arg& size, double value, std::vector<int64_t>& dims,
               std::vector<double>& vs) {
  if (!Exporter::constInts(size, dims)) return E.fail(n, "the size must be compile-time integers");
  int64_t count = 1;
  for (int64_t d : dims) {
    if (d < 0) return E.fail(n, "negative size");
    count *= d;
  }
  if (count > (int64_t(1) << 26)) return E.fail(n, "constant tensor too large to embed");
  vs.assign(size_t(count), value);
  return true;
}

}  // namespace

const std::map<std::string, Rule>& rules() {
  static const std::map<std::string, Rule> table = [] {
    std::map<std::string, Rule> r;
    for (const char* op : {"add", "sub"})
      r[op] = {{"self", "other", "alpha"}, binary(op[0] == 'a' ? "Add" : "Sub")};
    r["rsub"] = {{"self", "other", "alpha"},
                 [](Exporter& E, const Node& n, std::vector<Arg>& a) {
                   std::vector<Arg> swapped{a[1], a[0], a[2]};
                   return binary("Sub")(E, n, swapped);
                 }};
    r["mul"] = {{"self", "other"}, binary("Mul")};
    r["div"] = {{"self", "other", "rounding_mode"}, emitDiv};
    r["pow"] = {{"self", "exponent"}, binary("Pow")};
    r["maximum"] = {{"self", "other"}, binary("Max")};
    r["minimum"] = {{"self", "other"}, binary("Min")};
    for (const char* op : {"matmul", "mm", "bmm"}) r[op] = {{"self", "other"}, binary("MatMul")};
    for (auto [op, onnxOp] : std::vector<std::pair<const char*, const char*>>{
             {"lt", "Less"}, {"le", "LessOrEqual"}, {"gt", "Greater"}, {"ge", "GreaterOrEqual"},
             {"eq", "Equal"}})
      r[op] = {{"self", "other"}, binary(onnxOp, true)};
    r["ne"] = {{"self", "other"}, binary("Equal", true, true)};
    for (auto [op, onnxOp] : std::vector<std::pair<const char*, const char*>>{
             {"exp", "Exp"}, {"log", "Log"}, {"tanh", "Tanh"}, {"sigmoid", "Sigmoid"},
             {"relu", "Relu"}, {"neg", "Neg"}, {"sqrt", "Sqrt"}, {"abs", "Abs"},
             {"reciprocal", "Reciprocal"}, {"sin", "Sin"}, {"cos", "Cos"}, {"floor", "Floor"},
             {"ceil", "Ceil"}})
      r[op] = {{"self"}, unary(onnxOp)};
    // Copies and dtype conversions: Identity/Cast to the result type.
    for (const char* op : {"clone", "detach", "contiguous", "alias", "lift_fresh"})
      r[op] = {{"self", "memory_format"}, unary("Identity")};
    for (const char* op : {"_to_copy", "to"})
      r[op] = {{"self", "dtype", "layout", "device", "pin_memory", "non_blocking", "copy", "memory_format"},
               unary("Identity")};  // tensorOf casts to the result dtype
    r["t"] = {{"self"}, [](Exporter& E, const Node& n, std::vector<Arg>& a) {
                return emitTranspose(E, n, a, true);
              }};
    r["transpose"] = {{"self", "dim0", "dim1"}, [](Exporter& E, const Node& n, std::vector<Arg>& a) {
                        return emitTranspose(E, n, a, false);
                      }};
    r["permute"] = {{"self", "dims"}, emitPermute};
    r["reshape"] = {{"self", "shape"}, emitReshape};
    r["view"] = {{"self", "size"}, emitReshape};
    r["_unsafe_view"] = {{"self", "size"}, emitReshape};
    r["sum"] = {{"self", "dim", "keepdim", "dtype"}, reduce("ReduceSum", true)};
    r["mean"] = {{"self", "dim", "keepdim", "dtype"}, reduce("ReduceMean", false)};
    r["amax"] = {{"self", "dim", "keepdim"}, reduce("ReduceMax", false)};
    r["amin"] = {{"self", "dim", "keepdim"}, reduce("ReduceMin", false)};
    r["max"] = {{"self", "dim", "keepdim"}, extreme(true)};
    r["min"] = {{"self", "dim", "keepdim"}, extreme(false)};
    r["argmax"] = {{"self", "dim", "keepdim"}, argExtreme("ArgMax")};
    r["argmin"] = {{"self", "dim", "keepdim"}, argExtreme("ArgMin")};
    r["cat"] = {{"*tensors", "dim"}, emitCat};
    r["concat"] = r["cat"];
    r["where"] = {{"condition", "self", "other"}, emitWhere};
    r["softmax"] = {{"self", "dim", "dtype"}, softmax("Softmax")};
    r["_softmax"] = {{"self", "dim", "half_to_float"}, softmax("Softmax")};
    r["log_softmax"] = {{"self", "dim", "dtype"}, softmax("LogSoftmax")};
    r["_log_softmax"] = {{"self", "dim", "half_to_float"}, softmax("LogSoftmax")};
    r["unsqueeze"] = {{"self", "dim"}, axesOp("Unsqueeze")};
    r["squeeze"] = {{"self", "dim"}, axesOp("Squeeze")};
    r["select"] = {{"self", "dim", "index"}, emitSelect};
    const std::vector<std::string> factory{"dtype", "layout", "device", "pin_memory"};
    auto withFactory = [&](std::vector<std::string> a) {
      a.insert(a.end(), factory.begin(), factory.end());
      return a;
    };
    for (auto [op, value] : std::vector<std::pair<const char*, double>>{{"zeros", 0}, {"ones", 1}, {"empty", 0}})
      r[op] = {withFactory({"size"}), constructor([value](Exporter& E, const Node& n, std::vector<Arg>& a,
                                                          std::vector<int64_t>& dims, std::vector<double>& vs) {
                 return fillShape(E, n, a[0], value, dims, vs);
               })};
    r["full"] = {withFactory({"size", "fill_value"}),
                 constructor([](Exporter& E, const Node& n, std::vector<Arg>& a, std::vector<int64_t>& dims,
                                std::vector<double>& vs) {
                   double v;
                   if (!(a[1].attr && Exporter::attrNumber(*a[1].attr, v)) &&
                       !(a[1].value && Exporter::constNumber(a[1].value, v)))
                     return E.fail(n, "fill_value must be a compile-time number");
                   return fillShape(E, n, a[0], v, dims, vs);
                 })};
    r["scalar_tensor"] = {withFactory({"s"}),
                          constructor([](Exporter& E, const Node& n, std::vector<Arg>& a,
                                         std::vector<int64_t>&, std::vector<double>& vs) {
                            double v;
                            if (!(a[0].attr && Exporter::attrNumber(*a[0].attr, v)) &&
                                !(a[0].value && Exporter::constNumber(a[0].value, v)))
                              return E.fail(n, "the value must be a compile-time number");
                            vs = {v};
                            return true;
                          })};
    r["eye"] = {withFactory({"n", "m"}),
                constructor([](Exporter& E, const Node& n, std::vector<Arg>& a, std::vector<int64_t>& dims,
                               std::vector<double>& vs) {
                  int64_t rows, cols;
                  if (!E.constInt(n, a[0], 0, rows, "n")) return false;
                  if (!E.constInt(n, a[1], rows, cols, "m")) return false;
                  if (rows < 0 || cols < 0 || rows * cols > (int64_t(1) << 26))
                    return E.fail(n, "bad or too large identity size");
                  dims = {rows, cols};
                  vs.assign(size_t(rows * cols), 0.0);
                  for (int64_t i = 0; i < std::min(rows, cols); ++i) vs[size_t(i * cols + i)] = 1;
                  return true;
                })};
    r["arange"] = {withFactory({"start", "end", "step"}),
                   constructor([](Exporter& E, const Node& n, std::vector<Arg>& a, std::vector<int64_t>& dims,
                                  std::vector<double>& vs) {
                     auto num = [&](const Arg& x, double& v) {
                       return (x.attr && Exporter::attrNumber(*x.attr, v)) ||
                              (x.value && Exporter::constNumber(x.value, v));
                     };
                     double start = 0, end = 0, step = 1;
                     bool ok = num(a[0], start);
                     if (a[1].present()) ok = ok && num(a[1], end);
                     else std::swap(start, end);  // arange(end)
                     if (a[2].present()) ok = ok && num(a[2], step);
                     if (!ok || step == 0) return E.fail(n, "start, end and step must be compile-time numbers");
                     int64_t count = std::max<int64_t>(0, int64_t(std::ceil((end - start) / step)));
                     if (count > (int64_t(1) << 26)) return E.fail(n, "constant tensor too large to embed");
                     for (int64_t i = 0; i < count; ++i) vs.push_back(start + double(i) * step);
                     dims = {count};
                     return true;
                   })};
    return r;
  }();
  return table;
}

const std::map<std::string, Rule>& tensorRules() {
  static const std::map<std::string, Rule> table = [] {
    std::map<std::string, Rule> r;
    const auto& a = rules();
    for (auto [fn, op] : std::vector<std::pair<const char*, const char*>>{
             {"add", "Add"}, {"subtract", "Sub"}, {"multiply", "Mul"}, {"divide", "Div"}, {"pow", "Pow"},
             {"matmul", "MatMul"}})
      r[fn] = {{"a", "b"}, binary(op)};
    r["exp"] = a.at("exp");
    r["log"] = a.at("log");
    r["transpose"] = {{"t"}, [](Exporter& E, const Node& n, std::vector<Arg>& args) {
                        std::string x;  // tensor::transpose is 2-D only
                        if (!E.tensorOf(n, args[0], E.resultDType(n, 0), x)) return false;
                        E.node("Transpose", {x}, {E.resultName(n, 0)}, Exporter::intsAttr("perm", {1, 0}));
                        return true;
                      }};
    r["reshape"] = {{"t", "shape"}, emitReshape};
    r["sum"] = {{"t", "axis", "keepdim"}, reduce("ReduceSum", true)};  // the per-axis form (a Tensor)
    r["max"] = {{"t", "axis", "keepdim"}, extreme(true)};
    r["argmax"] = {{"t", "axis", "keepdim"}, argExtreme("ArgMax")};
    r["concat"] = {{"a", "b", "axis"}, [](Exporter& E, const Node& n, std::vector<Arg>& args) {
                     int64_t dim;
                     if (!E.constInt(n, args[2], 0, dim, "axis")) return false;
                     std::string x, y;
                     if (!E.tensorOf(n, args[0], E.resultDType(n, 0), x) ||
                         !E.tensorOf(n, args[1], E.resultDType(n, 0), y))
                       return false;
                     E.node("Concat", {x, y}, {E.resultName(n, 0)}, Exporter::intAttr("axis", dim));
                     return true;
                   }};
    for (const char* fn : {"zeros", "ones", "empty", "full", "eye"}) r[fn] = a.at(fn);
    r["range"] = a.at("arange");
    return r;
  }();
  return table;
}

}  // namespace xacc::onnx::detail
