// Camel's `tensor` module (spec 15.17) on at::Tensor: the type `Tensor`
// (float64; `Tensor<bool>` for comparisons), its functions as standard-library
// builtins, and the rendering of tensors as nested rows. Tensor values are
// the ATen backend's tensor datums (TensorDatum.h), the same representation
// xacc._C uses, so tensors cross into Python without copies. The operators
// and the functions that are single ATen ops are lowered by the front end to
// `aten.*` nodes (AtenLowering, TensorOps.h); the builtins here serve calls
// the front end does not lower (function values, `any` operands) and the
// functions that are not one ATen op.
#include "TensorModule.h"

#include <ATen/ATen.h>

#include <cmath>
#include <sstream>

#include "StdlibImpl.h"
#include "xacc/camel/Executor.h"
#include "xacc/backend/aten/TensorDatum.h"

namespace xacc::exec::aten {

using namespace xacc::camel::stdlib;
namespace A = xacc::backend::aten;
using camel::RuntimeDiag;
using ir::DType;

namespace {

Type tensorT() { return Type::unrankedTensor(DType::F64); }
bool tensorLike(Type t) { return t.isTensor() || t.isAny(); }
bool tensorOrNum(Type t) { return t.isTensor() || numLike(t); }
/// A tensor, or a (nested) array of numbers.
bool tensorOrArray(Type t) {
  if (tensorLike(t)) return true;
  while (t.kind() == TypeKind::List) t = t.elementType();
  return numLike(t) || t.kind() == TypeKind::Null;
}
bool intList(Type t) { return listLike(t) && intLike(elemOf(t)); }

std::string formatFloat(double v) {
  // Like Camel floats (spec 7.3: C++ ostream defaults).
  std::ostringstream os;
  os << v;
  return os.str();
}

void appendRows(const at::Tensor& t, std::string& out) {
  if (t.dim() == 0) {
    if (t.scalar_type() == at::kBool)
      out += t.item<bool>() ? "true" : "false";
    else if (at::isIntegralType(t.scalar_type(), false))
      out += std::to_string(t.item<int64_t>());
    else
      out += formatFloat(t.item<double>());
    return;
  }
  out += "[";
  for (int64_t i = 0; i < t.size(0); ++i) {
    if (i) out += ", ";
    appendRows(t[i], out);
  }
  out += "]";
}

/// The ATen call `f` with exceptions turned into located runtime errors.
template <class F>
bool guarded(Interpreter& I, const Node& n, std::string_view fn, F&& f) {
  try {
    return f();
  } catch (const std::exception& e) {
    std::string msg = A::exceptionMessage(e);
    return fail(I, n, RuntimeDiag::TensorDimensionMismatch, {fn, msg});
  }
}

bool shapeOf(Interpreter& I, const Node& n, std::string_view fn, const Datum& d,
             std::vector<int64_t>& out) {
  std::vector<Datum>* xs;
  if (!getList(I, n, fn, d, xs)) return false;
  out.clear();
  for (const Datum& x : *xs) {
    int64_t v;
    if (!getInt(I, n, fn, x, v)) return false;
    if (v < 0)
      return fail(I, n, RuntimeDiag::InvalidArgument,
                  {fn, "a dimension cannot be negative, got " + std::to_string(v)});
    out.push_back(v);
  }
  return true;
}

// Nested arrays of numbers -> a float64 tensor (ragged arrays are errors).
bool arrayShape(const Datum& d, std::vector<int64_t>& shape, size_t depth, std::string& err) {
  if (d.kind() == DKind::Int || d.kind() == DKind::Float || d.kind() == DKind::Bool) {
    if (depth != shape.size()) {
      err = "the nested arrays are ragged";
      return false;
    }
    return true;
  }
  if (d.kind() != DKind::List) {
    err = std::string("expected numbers or arrays of numbers, got ") + kindName(d);
    return false;
  }
  const auto& xs = d.listItems();
  if (depth == shape.size()) {
    shape.push_back(int64_t(xs.size()));
  } else if (depth > shape.size() || shape[depth] != int64_t(xs.size())) {
    err = "the nested arrays are ragged";
    return false;
  }
  for (const Datum& x : xs)
    if (!arrayShape(x, shape, depth + 1, err)) return false;
  return true;
}

void flatten(const Datum& d, std::vector<double>& out) {
  switch (d.kind()) {
    case DKind::Int: out.push_back(double(d.asInt())); return;
    case DKind::Float: out.push_back(d.asFloat()); return;
    case DKind::Bool: out.push_back(d.asBool() ? 1.0 : 0.0); return;
    default:
      for (const Datum& x : d.listItems()) flatten(x, out);
  }
}

}  // namespace

bool toTensor(Interpreter& I, const Node& n, std::string_view fn, const Datum& d, at::Tensor& out) {
  if (A::isTensorDatum(d)) {
    out = A::tensorOf(d);
    return true;
  }
  if (d.kind() == DKind::Int || d.kind() == DKind::Float || d.kind() == DKind::Bool) {
    double v = d.kind() == DKind::Int ? double(d.asInt()) : d.kind() == DKind::Float ? d.asFloat() : d.asBool();
    out = at::scalar_tensor(v, at::kDouble);
    return true;
  }
  if (d.kind() != DKind::List) return kindFail(I, n, fn, "a tensor or an array of numbers", d);
  std::vector<int64_t> shape;
  std::string err;
  if (!arrayShape(d, shape, 0, err)) return fail(I, n, RuntimeDiag::InvalidArgument, {fn, err});
  std::vector<double> flat;
  flatten(d, flat);
  out = at::tensor(flat, at::kDouble).reshape(shape);
  return true;
}

Datum wrap(at::Tensor t) {
  // Camel tensors are float64 or bool (spec 15.17).
  if (t.scalar_type() != at::kDouble && t.scalar_type() != at::kBool) t = t.to(at::kDouble);
  return A::makeTensorDatum(std::move(t));
}

std::string tensorRows(const Datum& d) {
  const at::Tensor& t = A::tensorOf(d);
  if (!t.defined()) return "<tensor>";
  std::string out;
  try {
    appendRows(t.detach().cpu(), out);
  } catch (const std::exception& e) {
    out = "<tensor: " + A::exceptionMessage(e) + ">";
  }
  return out;
}

namespace {

using Body = std::function<bool(Interpreter& I, const Node& n, Datums& a, at::Tensor& out)>;

// A function whose operands are checked by `infer` and whose result is a Tensor.
void defineTensorFn(const std::string& name, int params, std::string signature, std::string summary,
                    std::function<bool(const Types&, std::string&)> check, Body body,
                    bool random = false) {
  std::string gir = "tensor::" + name;
  Def d;
  d.module = "tensor";
  d.name = name;
  d.gir = gir;
  d.params = params;
  d.signature = std::move(signature);
  d.summary = std::move(summary);
  d.effectful = random;
  d.deterministic = !random;
  d.infer = [check](const Types& a, Types& r, std::string& err) {
    if (!check(a, err)) return false;
    r = {tensorT()};
    return true;
  };
  d.fn = [gir, body](Interpreter& I, const Node& n, Datums& a, Datums& r) {
    at::Tensor out;
    if (!guarded(I, n, gir, [&] { return body(I, n, a, out); })) return false;
    r.push_back(wrap(std::move(out)));
    return true;
  };
  define(std::move(d));
}

bool checkShape(const Types& a, std::string& err) {
  return want(intList(a[0]), a, 0, "the shape", "an int[]", err);
}

void defineFactories() {
  auto factory = [](const std::string& name, double (*fill)(), const char* what) {
    defineTensorFn(
        name, 1, "(shape: int[]): Tensor", what, checkShape,
        [name, fill](Interpreter& I, const Node& n, Datums& a, at::Tensor& out) {
          std::vector<int64_t> shape;
          if (!shapeOf(I, n, "tensor::" + name, a[0], shape)) return false;
          out = fill ? at::full(shape, fill(), at::kDouble) : at::empty(shape, at::kDouble);
          return true;
        });
  };
  factory("zeros", [] { return 0.0; }, "a tensor of zeros");
  factory("ones", [] { return 1.0; }, "a tensor of ones");
  factory("empty", nullptr, "an uninitialised tensor");
  defineTensorFn(
      "full", 2, "(shape: int[], value: number): Tensor", "a tensor filled with value",
      [](const Types& a, std::string& err) {
        return checkShape(a, err) && want(numLike(a[1]), a, 1, "the value", "a number", err);
      },
      [](Interpreter& I, const Node& n, Datums& a, at::Tensor& out) {
        std::vector<int64_t> shape;
        double v;
        if (!shapeOf(I, n, "tensor::full", a[0], shape) || !getNum(I, n, "tensor::full", a[1], v))
          return false;
        out = at::full(shape, v, at::kDouble);
        return true;
      });
  defineTensorFn(
      "random", 3, "(shape: int[], low: number, high: number): Tensor",
      "uniform random values in [low, high)",
      [](const Types& a, std::string& err) {
        return checkShape(a, err) && want(numLike(a[1]), a, 1, "low", "a number", err) &&
               want(numLike(a[2]), a, 2, "high", "a number", err);
      },
      [](Interpreter& I, const Node& n, Datums& a, at::Tensor& out) {
        std::vector<int64_t> shape;
        double lo, hi;
        if (!shapeOf(I, n, "tensor::random", a[0], shape) ||
            !getNum(I, n, "tensor::random", a[1], lo) || !getNum(I, n, "tensor::random", a[2], hi))
          return false;
        if (!(lo <= hi))
          return fail(I, n, RuntimeDiag::InvalidArgument, {"tensor::random", "low must not exceed high"});
        out = at::empty(shape, at::kDouble).uniform_(lo, hi);
        return true;
      },
      /*random=*/true);
  auto rangeBody = [](Interpreter& I, const Node& n, Datums& a, at::Tensor& out) {
    int64_t start = 0, stop = 0, step = 1;
    if (!getInt(I, n, "tensor::range", a[0], start)) return false;
    if (a.size() == 1) {
      stop = start;
      start = 0;
    } else if (!getInt(I, n, "tensor::range", a[1], stop)) {
      return false;
    }
    if (a.size() == 3 && !getInt(I, n, "tensor::range", a[2], step)) return false;
    if (step == 0)
      return fail(I, n, RuntimeDiag::InvalidArgument, {"tensor::range", "the step cannot be 0"});
    out = at::arange(double(start), double(stop), double(step), at::kDouble);
    return true;
  };
  Def r;
  r.module = "tensor";
  r.name = "range";
  r.gir = "tensor::range";
  r.params = 1;
  r.signature = "(stop: int): Tensor";
  r.summary = "0, 1, ..., stop-1 as a 1-D tensor";
  r.moreForms = {{0, 2, "(start: int, stop: int): Tensor"}, {0, 3, "(start: int, stop: int, step: int): Tensor"}};
  r.infer = [](const Types& a, Types& res, std::string& err) {
    for (size_t i = 0; i < a.size(); ++i)
      if (!want(intLike(a[i]), a, i, "range's arguments", "ints", err)) return false;
    res = {tensorT()};
    return true;
  };
  r.fn = [rangeBody](Interpreter& I, const Node& n, Datums& a, Datums& res) {
    at::Tensor out;
    if (!guarded(I, n, "tensor::range", [&] { return rangeBody(I, n, a, out); })) return false;
    res.push_back(wrap(std::move(out)));
    return true;
  };
  define(std::move(r));
  defineTensorFn(
      "eye", 1, "(n: int): Tensor", "the n x n identity matrix",
      [](const Types& a, std::string& err) { return want(intLike(a[0]), a, 0, "n", "an int", err); },
      [](Interpreter& I, const Node& n, Datums& a, at::Tensor& out) {
        int64_t k;
        if (!getInt(I, n, "tensor::eye", a[0], k)) return false;
        if (k < 0) return fail(I, n, RuntimeDiag::InvalidArgument, {"tensor::eye", "n cannot be negative"});
        out = at::eye(k, at::kDouble);
        return true;
      });
}

// Element-wise and linear-algebra functions of one or two tensors.
void defineMath() {
  auto unary = [](const std::string& name, at::Tensor (*f)(const at::Tensor&), const char* what) {
    defineTensorFn(
        name, 1, "(t: Tensor): Tensor", what,
        [](const Types& a, std::string& err) { return want(tensorOrArray(a[0]), a, 0, "the argument", "a Tensor", err); },
        [name, f](Interpreter& I, const Node& n, Datums& a, at::Tensor& out) {
          at::Tensor t;
          if (!toTensor(I, n, "tensor::" + name, a[0], t)) return false;
          out = f(t.to(at::kDouble));
          return true;
        });
  };
  unary("exp", [](const at::Tensor& t) { return at::exp(t); }, "e to the power of each element");
  unary("log", [](const at::Tensor& t) { return at::log(t); }, "natural logarithm of each element");
  defineTensorFn(
      "transpose", 1, "(t: Tensor): Tensor", "2-D transpose",
      [](const Types& a, std::string& err) { return want(tensorOrArray(a[0]), a, 0, "the argument", "a Tensor", err); },
      [](Interpreter& I, const Node& n, Datums& a, at::Tensor& out) {
        at::Tensor t;
        if (!toTensor(I, n, "tensor::transpose", a[0], t)) return false;
        if (t.dim() != 2)
          return fail(I, n, RuntimeDiag::TensorDimensionMismatch,
                      {"tensor::transpose", "expected a 2-D tensor, got " + std::to_string(t.dim()) + "-D"});
        out = t.t().contiguous();
        return true;
      });
  using Bin = at::Tensor (*)(const at::Tensor&, const at::Tensor&);
  auto binary = [](const std::string& name, Bin f, const char* what) {
    defineTensorFn(
        name, 2, "(a: Tensor | number, b: Tensor | number): Tensor", what,
        [](const Types& a, std::string& err) {
          return want(tensorOrNum(a[0]) || a[0].isAny(), a, 0, "a", "a Tensor or a number", err) &&
                 want(tensorOrNum(a[1]) || a[1].isAny(), a, 1, "b", "a Tensor or a number", err);
        },
        [name, f](Interpreter& I, const Node& n, Datums& a, at::Tensor& out) {
          at::Tensor x, y;
          if (!toTensor(I, n, "tensor::" + name, a[0], x) || !toTensor(I, n, "tensor::" + name, a[1], y))
            return false;
          out = f(x, y);
          return true;
        });
  };
  binary("add", [](const at::Tensor& a, const at::Tensor& b) { return at::add(a, b); }, "a + b element-wise");
  binary("subtract", [](const at::Tensor& a, const at::Tensor& b) { return at::sub(a, b); }, "a - b element-wise");
  binary("multiply", [](const at::Tensor& a, const at::Tensor& b) { return at::mul(a, b); }, "a * b element-wise");
  binary("divide", [](const at::Tensor& a, const at::Tensor& b) { return at::div(a, b); }, "a / b element-wise");
  binary("pow", [](const at::Tensor& a, const at::Tensor& b) { return at::pow(a, b); }, "a ^ b element-wise");
  binary("matmul", [](const at::Tensor& a, const at::Tensor& b) { return at::matmul(a, b); }, "matrix product");
}

int64_t axisOf(int64_t axis, int64_t dim) { return axis < 0 ? axis + dim : axis; }

bool checkAxis(Interpreter& I, const Node& n, std::string_view fn, const at::Tensor& t, int64_t axis) {
  int64_t d = std::max<int64_t>(t.dim(), 1);
  if (axis < -d || axis >= d)
    return fail(I, n, RuntimeDiag::TensorDimensionMismatch,
                {fn, "axis " + std::to_string(axis) + " is out of range for a " + std::to_string(t.dim()) +
                         "-D tensor"});
  return true;
}

void defineReductions() {
  Def s;
  s.module = "tensor";
  s.name = "sum";
  s.gir = "tensor::sum";
  s.params = 1;
  s.signature = "(t: Tensor): float";
  s.summary = "sum of all elements (float), or along an axis (Tensor)";
  s.moreForms = {{0, 2, "(t: Tensor, axis: int): Tensor"}};
  s.infer = [](const Types& a, Types& r, std::string& err) {
    if (!want(tensorOrArray(a[0]), a, 0, "the argument", "a Tensor", err)) return false;
    if (a.size() == 2 && !want(intLike(a[1]), a, 1, "the axis", "an int", err)) return false;
    r = {a.size() == 1 ? Type::f64() : tensorT()};
    return true;
  };
  s.fn = [](Interpreter& I, const Node& n, Datums& a, Datums& r) {
    return guarded(I, n, "tensor::sum", [&] {
      at::Tensor t;
      if (!toTensor(I, n, "tensor::sum", a[0], t)) return false;
      if (a.size() == 1) {
        r.push_back(Datum::real(t.sum().item<double>()));
        return true;
      }
      int64_t axis;
      if (!getInt(I, n, "tensor::sum", a[1], axis) || !checkAxis(I, n, "tensor::sum", t, axis)) return false;
      r.push_back(wrap(t.sum(axisOf(axis, t.dim()))));
      return true;
    });
  };
  define(std::move(s));
  auto perAxis = [](const std::string& name, bool indices, const char* what) {
    defineTensorFn(
        name, 2, "(t: Tensor, axis: int): Tensor", what,
        [](const Types& a, std::string& err) {
          return want(tensorOrArray(a[0]), a, 0, "the argument", "a Tensor", err) &&
                 want(intLike(a[1]), a, 1, "the axis", "an int", err);
        },
        [name, indices](Interpreter& I, const Node& n, Datums& a, at::Tensor& out) {
          std::string fn = "tensor::" + name;
          at::Tensor t;
          int64_t axis;
          if (!toTensor(I, n, fn, a[0], t) || !getInt(I, n, fn, a[1], axis) || !checkAxis(I, n, fn, t, axis))
            return false;
          if (t.numel() == 0) return fail(I, n, RuntimeDiag::EmptyArray, {fn});
          auto [vals, idx] = at::max(t, axisOf(axis, t.dim()));
          out = indices ? idx : vals;
          return true;
        });
  };
  perAxis("max", false, "maximum along an axis");
  perAxis("argmax", true, "index of the maximum along an axis (as floats)");
}

void defineShapes() {
  define({.module = "tensor",
          .name = "shape",
          .gir = "tensor::shape",
          .params = 1,
          .signature = "(t: Tensor): int[]",
          .summary = "the dimensions",
          .infer =
              [](const Types& a, Types& r, std::string& err) {
                if (!want(tensorLike(a[0]), a, 0, "the argument", "a Tensor", err)) return false;
                r = {Type::list(Type::i64())};
                return true;
              },
          .fn =
              [](Interpreter& I, const Node& n, Datums& a, Datums& r) {
                if (!A::isTensorDatum(a[0])) return kindFail(I, n, "tensor::shape", "a Tensor", a[0]);
                std::vector<Datum> dims;
                for (int64_t s : A::tensorOf(a[0]).sizes()) dims.push_back(Datum::integer(s));
                r.push_back(Datum::list(std::move(dims)));
                return true;
              }});
  defineTensorFn(
      "reshape", 2, "(t: Tensor | number[], shape: int[]): Tensor",
      "the elements in a new shape (-1 infers one dimension)",
      [](const Types& a, std::string& err) {
        return want(tensorOrArray(a[0]), a, 0, "the argument", "a Tensor or an array of numbers", err) &&
               want(intList(a[1]), a, 1, "the shape", "an int[]", err);
      },
      [](Interpreter& I, const Node& n, Datums& a, at::Tensor& out) {
        at::Tensor t;
        std::vector<Datum>* xs;
        if (!toTensor(I, n, "tensor::reshape", a[0], t) || !getList(I, n, "tensor::reshape", a[1], xs))
          return false;
        std::vector<int64_t> shape;
        for (const Datum& x : *xs) {
          int64_t v;
          if (!getInt(I, n, "tensor::reshape", x, v)) return false;
          shape.push_back(v);
        }
        out = t.reshape(shape).contiguous();
        return true;
      });
  defineTensorFn(
      "concat", 3, "(a: Tensor | number[][], b: Tensor | number[][], axis: int): Tensor",
      "a and b joined along an axis",
      [](const Types& a, std::string& err) {
        return want(tensorOrArray(a[0]), a, 0, "a", "a Tensor or an array", err) &&
               want(tensorOrArray(a[1]), a, 1, "b", "a Tensor or an array", err) &&
               want(intLike(a[2]), a, 2, "the axis", "an int", err);
      },
      [](Interpreter& I, const Node& n, Datums& a, at::Tensor& out) {
        at::Tensor x, y;
        int64_t axis;
        if (!toTensor(I, n, "tensor::concat", a[0], x) || !toTensor(I, n, "tensor::concat", a[1], y) ||
            !getInt(I, n, "tensor::concat", a[2], axis) || !checkAxis(I, n, "tensor::concat", x, axis))
          return false;
        out = at::cat({x.to(at::kDouble), y.to(at::kDouble)}, axis);
        return true;
      });
}

void defineIndexAndShow() {
  define({.module = "tensor",
          .name = "__idx__",
          .gir = "tensor::__idx__",
          .params = 2,
          .signature = "(t: Tensor, i: int): float",
          .summary = "element i of a 1-D tensor",
          .infer =
              [](const Types& a, Types& r, std::string& err) {
                if (!want(tensorLike(a[0]), a, 0, "the indexed value", "a Tensor", err) ||
                    !want(intLike(a[1]), a, 1, "the index", "an int", err))
                  return false;
                r = {a[0].isTensor() && a[0].dtype() == DType::Bool ? Type::boolean() : Type::f64()};
                return true;
              },
          .fn =
              [](Interpreter& I, const Node& n, Datums& a, Datums& r) {
                if (!A::isTensorDatum(a[0])) return kindFail(I, n, "tensor index", "a Tensor", a[0]);
                int64_t i;
                if (!getInt(I, n, "tensor index", a[1], i)) return false;
                const at::Tensor& t = A::tensorOf(a[0]);
                if (t.dim() != 1)
                  return fail(I, n, RuntimeDiag::TensorDimensionMismatch,
                              {"tensor index", "t[i] needs a 1-D tensor, got " + std::to_string(t.dim()) + "-D"});
                int64_t len = t.size(0);
                if (i < -len || i >= len)
                  return fail(I, n, RuntimeDiag::InvalidArgument,
                              {"tensor index", "index " + std::to_string(i) + " is out of range for length " +
                                                   std::to_string(len)});
                at::Tensor e = t[i < 0 ? i + len : i];
                r.push_back(t.scalar_type() == at::kBool ? Datum::boolean(e.item<bool>())
                                                         : Datum::real(e.item<double>()));
                return true;
              }});
  define({.module = "tensor",
          .name = "show",
          .gir = "tensor::show",
          .params = 1,
          .signature = "(t: Tensor | number[]): void",
          .effectful = true,
          .summary = "prints the tensor's rows and a newline",
          .infer =
              [](const Types& a, Types& r, std::string& err) {
                if (!want(tensorOrArray(a[0]), a, 0, "the argument", "a Tensor or an array of numbers", err))
                  return false;
                r = {Type::null()};
                return true;
              },
          .fn =
              [](Interpreter& I, const Node& n, Datums& a, Datums& r) {
                at::Tensor t;
                if (!toTensor(I, n, "tensor::show", a[0], t)) return false;
                std::string s = tensorRows(wrap(t)) + "\n";
                I.write(s);
                r.push_back(Datum());
                return true;
              }});
}

}  // namespace

void registerTensorModule() {
  camel::defineModuleType({"tensor", "Tensor",
                           [](const std::vector<Type>& args, Type& out, std::string& err) {
                             if (args.empty()) {
                               out = tensorT();
                               return true;
                             }
                             if (args.size() == 1 && (args[0].kind() == TypeKind::Bool ||
                                                      args[0].kind() == TypeKind::Float)) {
                               out = Type::unrankedTensor(args[0].kind() == TypeKind::Bool ? DType::Bool
                                                                                          : DType::F64);
                               return true;
                             }
                             err = "Tensor takes one type argument, bool or float";
                             return false;
                           }});
  defineFactories();
  defineMath();
  defineReductions();
  defineShapes();
  defineIndexAndShow();
  camel::setObjectRepr(DKind::Tensor, tensorRows);
  // Calls the front end lowers to aten.* nodes (Note [Op lowering recipes]).
  static const std::pair<const char*, const char*> kRecipes[] = {
      {"zeros", "aten.zeros.default(size[]) dtype=f64"},
      {"ones", "aten.ones.default(size[]) dtype=f64"},
      {"full", "aten.full.default(size[], fill_value) dtype=f64"},
      {"eye", "aten.eye.default(n) dtype=f64"},
      {"exp", "aten.exp.default(%)"},
      {"log", "aten.log.default(%)"},
      {"transpose", "aten.t.default(%)"},
      {"add", "aten.add.Tensor(%, %)"},
      {"subtract", "aten.sub.Tensor(%, %)"},
      {"multiply", "aten.mul.Tensor(%, %)"},
      {"divide", "aten.div.Tensor(%, %)"},
      {"pow", "aten.pow.Tensor_Tensor(%, %)"},
      {"matmul", "aten.matmul.default(%, %)"},
      {"sum", "aten.sum.default(%) -> f64 item | aten.sum.dim_IntList(%, dim[]) -> f64"},
      {"max", "aten.max.dim(%, dim)"},
      {"argmax", "aten.argmax.default(%, dim) -> f64"},
      {"reshape", "aten.reshape.default(%, shape[])"},
      {"concat", "aten.cat.default(%, %, dim)"},
  };
  for (const auto& [name, recipe] : kRecipes) camel::defineOpLowering(std::string("tensor::") + name, recipe);
}

}  // namespace xacc::exec::aten
