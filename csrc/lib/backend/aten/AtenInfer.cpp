// Result types of `aten.*` nodes from ATen meta kernels; see Note [ATen type
// inference]. Operand types become meta tensors (no storage) with placeholder
// sizes for dynamic dims, the op runs boxed twice with different placeholders,
// and the results' sizes are compared to tell static dims from dynamic ones.
// Ops without a meta kernel get the broadcast rule (pointwise ops) or run on
// small CPU placeholders; nothing else allocates real memory.
#include <ATen/ExpandUtils.h>
#include <ATen/ScalarOps.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/zeros.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <mutex>
#include <unordered_map>

#include "AtenOp.h"
#include "xacc/backend/aten/NativeMeta.h"
#include "xacc/backend/aten/TensorDatum.h"

namespace xacc::backend::aten {

using ir::Dim;
using ir::DType;
using ir::Type;
using ir::TypeKind;

namespace {

/// How much of the result shapes can be known from the operands.
enum class Knowledge { Exact, RankOnly, DTypeOnly };

/// How placeholder operands are made. Meta runs allocate nothing; CPU runs are
/// the fallback for ops without a meta kernel (run 0 filled with ones, run 1
/// with zeros, so data-dependent shapes differ between the runs); a probe has
/// every dim 1 and only tells dtypes.
enum class Mode { Meta0, Meta1, Cpu0, Cpu1, Probe };

bool isMeta(Mode m) { return m == Mode::Meta0 || m == Mode::Meta1; }
int runOf(Mode m) { return m == Mode::Meta1 || m == Mode::Cpu1 ? 1 : 0; }

// Placeholder sizes: run r gives every `?` dim base[r] and the k-th named
// symbol base[r] * factor[k]. Bases are highly divisible so that views such as
// `reshape(x, [-1, 2])` stay valid; factors are primes so that small linear
// combinations of dims rarely look like a symbol. CPU runs use small sizes.
constexpr int64_t kMetaBase[2] = {840, 1260};
constexpr int64_t kMetaFactor[] = {11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71};
constexpr int64_t kCpuBase[2] = {12, 18};
constexpr int64_t kCpuFactor[] = {5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61};
constexpr size_t kNumSymbols = sizeof(kMetaFactor) / sizeof(kMetaFactor[0]);
static_assert(sizeof(kCpuFactor) == sizeof(kMetaFactor));
// List operands of unknown length stand for this many elements per run.
constexpr int64_t kListLength[2] = {2, 3};
// CPU runs whose operands would hold more elements than this are not tried.
constexpr int64_t kCpuMaxNumel = int64_t(1) << 22;

struct TooLargeForCpu : std::runtime_error {
  TooLargeForCpu() : std::runtime_error("operands too large for a CPU shape probe") {}
};

struct Placeholders {
  std::vector<std::string> symbols;
  int64_t cpuNumel = 0;  ///< elements allocated by CPU placeholders so far

  int64_t size(const Dim& d, Mode mode) {
    if (mode == Mode::Probe) return 1;
    if (d.isStatic()) return d.size;
    const int64_t* base = isMeta(mode) ? kMetaBase : kCpuBase;
    const int64_t* factor = isMeta(mode) ? kMetaFactor : kCpuFactor;
    int run = runOf(mode);
    if (d.sym.empty()) return base[run];
    size_t k = std::find(symbols.begin(), symbols.end(), d.sym) - symbols.begin();
    if (k == symbols.size()) symbols.push_back(d.sym);
    return k < kNumSymbols ? base[run] * factor[k] : base[run];
  }
  int64_t unknown(Mode mode) const {
    if (mode == Mode::Probe) return 1;
    return (isMeta(mode) ? kMetaBase : kCpuBase)[runOf(mode)];
  }

  /// The dim whose placeholders were a (run 0) and b (run 1).
  Dim dim(int64_t a, int64_t b, bool meta) const {
    if (a == b) return Dim::fixed(a);
    const int64_t* base = meta ? kMetaBase : kCpuBase;
    const int64_t* factor = meta ? kMetaFactor : kCpuFactor;
    for (size_t k = 0; k < symbols.size() && k < kNumSymbols; ++k)
      if (a == base[0] * factor[k] && b == base[1] * factor[k]) return Dim::symbol(symbols[k]);
    return Dim::dynamic();
  }
};

/// The state of one inference: placeholders, the device, which runs were used.
struct InferState {
  Placeholders ph;
  int unrankedRank = 1;  ///< rank tried for unranked operands
  std::string device = "cpu";
  bool metaRuns = true;  ///< false once results come from CPU runs
};

bool isNoMetaKernel(const std::exception& e) {
  if (dynamic_cast<const c10::NotImplementedError*>(&e)) return true;
  std::string msg = e.what();
  // Python meta registrations (inside a Python process) raise Python's
  // NotImplementedError, which reaches us as a plain error with this prefix.
  return msg.find("'Meta' backend") != std::string::npos ||
         msg.find("NotImplementedError") != std::string::npos ||
         msg.find("meta tensor") != std::string::npos ||
         msg.find("Meta tensor") != std::string::npos;
}

std::string normalizeDevice(const std::string& s) {
  std::string out;
  for (char c : s)
    if (c != ':') out += c;
  if (out == "cuda" || out == "xpu") out += "0";
  return out;
}

at::Tensor placeholderTensor(Type t, Mode mode, InferState& st) {
  std::vector<int64_t> sizes;
  if (t.ranked()) {
    for (const Dim& d : t.dims()) sizes.push_back(st.ph.size(d, mode));
  } else {
    sizes.assign(st.unrankedRank, st.ph.unknown(mode));
  }
  auto opts = at::TensorOptions().dtype(toScalarType(t.dtype()));
  if (isMeta(mode)) return at::empty(sizes, opts.device(c10::kMeta));
  int64_t numel = 1;
  for (int64_t s : sizes) numel *= s;
  st.ph.cpuNumel += numel;
  if (st.ph.cpuNumel > kCpuMaxNumel) throw TooLargeForCpu();
  return mode == Mode::Cpu1 ? at::zeros(sizes, opts) : at::ones(sizes, opts);
}

c10::Device execDevice(Mode mode) {
  return isMeta(mode) ? c10::Device(c10::kMeta) : c10::Device(c10::kCPU);
}

/// Placeholder IValue for an operand of static type `t` supplying `arg`.
c10::IValue operandValue(Type t, const c10::Argument& arg, Mode mode, InferState& st) {
  c10::TypePtr at = unwrapOptional(arg.real_type());
  int run = runOf(mode);
  switch (t.kind()) {
    case TypeKind::Tensor: return placeholderTensor(t, mode, st);
    case TypeKind::Int:
    case TypeKind::Float:
    case TypeKind::Bool: {
      c10::Scalar s = t.kind() == TypeKind::Int     ? c10::Scalar(int64_t(1))
                      : t.kind() == TypeKind::Float ? c10::Scalar(0.5)
                                                    : c10::Scalar(false);
      switch (at->kind()) {
        case c10::TypeKind::TensorType:
          return at::native::wrapped_scalar_tensor(s);  // CPU, as in PyTorch (see TensorDatum.cpp)
        case c10::TypeKind::IntType:
        case c10::TypeKind::SymIntType: return int64_t(0);
        case c10::TypeKind::BoolType: return false;
        case c10::TypeKind::FloatType: return 0.5;
        case c10::TypeKind::ListType: {
          c10::List<int64_t> l;
          for (int i = 0; i < (arg.N() ? *arg.N() : 1); ++i) l.push_back(0);
          return l;
        }
        default: return c10::IValue(s);
      }
    }
    case TypeKind::List:
    case TypeKind::Tuple: {
      bool tuple = t.kind() == TypeKind::Tuple;
      size_t n = tuple ? t.elements().size() : kListLength[run];
      auto elemType = [&](size_t i) { return tuple ? t.elements()[i] : t.elementType(); };
      if (classOf(t) == OperandClass::TensorList) {
        bool optElems = false;
        if (auto l = at->cast<c10::ListType>())
          optElems = l->getElementType()->kind() == c10::TypeKind::OptionalType;
        if (optElems) {
          c10::List<std::optional<at::Tensor>> l;
          for (size_t i = 0; i < n; ++i)
            l.push_back(elemType(i).isTensor()
                            ? std::optional<at::Tensor>(placeholderTensor(elemType(i), mode, st))
                            : std::nullopt);
          return l;
        }
        c10::List<at::Tensor> l;
        for (size_t i = 0; i < n; ++i) l.push_back(placeholderTensor(elemType(i), mode, st));
        return l;
      }
      // Lists of numbers decide shapes; their values are unknown.
      c10::List<int64_t> l;
      return l;
    }
    case TypeKind::Str: {
      switch (at->kind()) {
        case c10::TypeKind::ScalarTypeType: return c10::IValue(c10::kFloat);
        case c10::TypeKind::DeviceObjType: return c10::IValue(execDevice(mode));
        case c10::TypeKind::LayoutType: return c10::IValue(c10::kStrided);
        case c10::TypeKind::MemoryFormatType: return c10::IValue(c10::MemoryFormat::Contiguous);
        default: return c10::IValue(std::string());
      }
    }
    default: return c10::IValue();
  }
}

/// How much an operand of type `t` bound to `arg` lets us know.
Knowledge knowledgeOf(Type t, const c10::Argument& arg, bool factory) {
  if (t.isTensor()) return t.ranked() ? Knowledge::Exact : Knowledge::DTypeOnly;
  c10::TypePtr at = unwrapOptional(arg.real_type());
  switch (t.kind()) {
    case TypeKind::Null: return Knowledge::Exact;
    case TypeKind::Int:
    case TypeKind::Float:
      if (at->kind() == c10::TypeKind::TensorType || at->kind() == c10::TypeKind::NumberType ||
          at->kind() == c10::TypeKind::FloatType)
        return factory ? Knowledge::RankOnly : Knowledge::Exact;
      return Knowledge::RankOnly;  // an int that may be a size, a dim or an index
    case TypeKind::Bool:
      return at->kind() == c10::TypeKind::TensorType || at->kind() == c10::TypeKind::NumberType
                 ? Knowledge::Exact
                 : Knowledge::DTypeOnly;  // flags such as keepdim change ranks
    case TypeKind::List:
    case TypeKind::Tuple: {
      if (classOf(t) != OperandClass::TensorList) return Knowledge::DTypeOnly;
      bool allRanked = true;
      if (t.kind() == TypeKind::List) {
        allRanked = !t.elementType().isTensor() || t.elementType().ranked();
        return allRanked ? Knowledge::RankOnly : Knowledge::DTypeOnly;  // length unknown
      }
      for (Type e : t.elements()) allRanked &= !e.isTensor() || e.ranked();
      return allRanked ? Knowledge::Exact : Knowledge::DTypeOnly;
    }
    default: return Knowledge::DTypeOnly;
  }
}

bool buildStack(const AtenOp& op, const std::vector<Type>& operands, const ir::AttrDict& attrs,
                const std::vector<ArgSource>& plan, Mode mode, InferState& st,
                torch::jit::Stack& stack, std::string& error) {
  const auto& args = op.schema().arguments();
  stack.clear();
  for (size_t i = 0; i < args.size(); ++i) {
    const c10::Argument& arg = args[i];
    const ArgSource& src = plan[i];
    c10::IValue v;
    switch (src.kind) {
      case ArgSource::Attr: {
        std::string err;
        if (!attrToIValue(*src.attr, arg, execDevice(mode), v, err)) {
          error = qualifiedName(op.schema()) + ": " + err;
          return false;
        }
        break;
      }
      case ArgSource::Operand: v = operandValue(operands[src.first], arg, mode, st); break;
      case ArgSource::Operands: {
        bool optElems = false;
        if (auto l = unwrapOptional(arg.real_type())->cast<c10::ListType>())
          optElems = l->getElementType()->kind() == c10::TypeKind::OptionalType;
        if (optElems) {
          c10::List<std::optional<at::Tensor>> l;
          for (int k = 0; k < src.count; ++k) {
            Type t = operands[src.first + k];
            l.push_back(t.isTensor() ? std::optional<at::Tensor>(placeholderTensor(t, mode, st))
                                     : std::nullopt);
          }
          v = l;
        } else {
          c10::List<at::Tensor> l;
          for (int k = 0; k < src.count; ++k)
            l.push_back(placeholderTensor(operands[src.first + k], mode, st));
          v = l;
        }
        break;
      }
      case ArgSource::Default: v = *arg.default_value(); break;
      case ArgSource::None: break;
    }
    // Factories and `.to(device)` must not leave the placeholder device.
    if (unwrapOptional(arg.real_type())->kind() == c10::TypeKind::DeviceObjType && !v.isNone())
      v = c10::IValue(execDevice(mode));
    stack.push_back(std::move(v));
  }
  return true;
}

/// Shape facts gathered from one run: dtype and sizes of a tensor result.
struct RawTensor {
  bool defined = false;
  c10::ScalarType dtype = c10::kFloat;
  std::vector<int64_t> sizes;  ///< -1 where elements of a list disagree
};

RawTensor rawOf(const at::Tensor& t) {
  RawTensor r;
  if (!t.defined()) return r;
  r.defined = true;
  r.dtype = t.scalar_type();
  r.sizes = t.sizes().vec();
  return r;
}

/// Joins the element shapes of a tensor list into one.
RawTensor joinRaw(const std::vector<RawTensor>& items, bool& ranked) {
  RawTensor out;
  ranked = true;
  for (const RawTensor& r : items) {
    if (!r.defined) continue;
    if (!out.defined) {
      out = r;
      continue;
    }
    if (r.sizes.size() != out.sizes.size())
      ranked = false;
    else
      for (size_t i = 0; i < r.sizes.size(); ++i)
        if (r.sizes[i] != out.sizes[i]) out.sizes[i] = -1;
  }
  return out;
}

bool tensorType(const RawTensor& a, const RawTensor* b, Knowledge k, bool ranked,
                const InferState& st, Type& out, std::string& error) {
  DType dt;
  if (!fromScalarType(a.dtype, dt)) {
    error = std::string("result dtype ") + c10::toString(a.dtype) + " has no GIR name";
    return false;
  }
  if (!ranked || k == Knowledge::DTypeOnly || (b && b->sizes.size() != a.sizes.size())) {
    out = Type::unrankedTensor(dt, st.device);
    return true;
  }
  std::vector<Dim> dims;
  for (size_t i = 0; i < a.sizes.size(); ++i) {
    if (k == Knowledge::RankOnly || a.sizes[i] < 0 || (b && b->sizes[i] < 0))
      dims.push_back(Dim::dynamic());
    else
      dims.push_back(st.ph.dim(a.sizes[i], b ? b->sizes[i] : a.sizes[i], st.metaRuns));
  }
  out = Type::tensor(dt, dims, st.device);
  return true;
}

/// The GIR type of one returned value; `b` is the same return from run 1.
bool resultType(const c10::IValue& a, const c10::IValue* b, const c10::Argument& ret, Knowledge k,
                const InferState& st, Type& out, std::string& error) {
  if (a.isTensor()) {
    if (!a.toTensor().defined()) {
      out = Type::null();
      return true;
    }
    RawTensor ra = rawOf(a.toTensor()), rb;
    if (b && b->isTensor()) rb = rawOf(b->toTensor());
    return tensorType(ra, b ? &rb : nullptr, k, true, st, out, error);
  }
  if (a.isTensorList() || (a.isList() && isTensorLikeType(ret.real_type()))) {
    auto gather = [](const c10::IValue& v) {
      std::vector<RawTensor> items;
      for (const c10::IValue& e : v.toListRef())
        if (e.isTensor()) items.push_back(rawOf(e.toTensor()));
      return items;
    };
    bool rankedA = true, rankedB = true;
    RawTensor ra = joinRaw(gather(a), rankedA), rb;
    if (b) rb = joinRaw(gather(*b), rankedB);
    Type elem;
    if (!ra.defined) {
      elem = Type::unrankedTensor(DType::F32, st.device);
    } else if (!tensorType(ra, b && rb.defined ? &rb : nullptr, k, rankedA && rankedB, st, elem,
                           error)) {
      return false;
    }
    out = Type::list(elem);
    return true;
  }
  if (a.isTuple()) {
    std::vector<Type> elems;
    const auto& ea = a.toTupleRef().elements();
    for (size_t i = 0; i < ea.size(); ++i) {
      const c10::IValue* eb = b && b->isTuple() ? &b->toTupleRef().elements()[i] : nullptr;
      Type t;
      if (!resultType(ea[i], eb, ret, k, st, t, error)) return false;
      elems.push_back(t);
    }
    out = Type::tuple(elems);
    return true;
  }
  if (a.isNone())
    out = Type::null();
  else if (a.isBool())
    out = Type::boolean();
  else if (a.isInt() && unwrapOptional(ret.real_type())->kind() == c10::TypeKind::ScalarTypeType)
    out = Type::string();
  else if (a.isInt() || a.isSymInt())
    out = Type::i64();
  else if (a.isDouble() || a.isSymFloat())
    out = Type::f64();
  else if (a.isString() || a.isDevice())
    out = Type::string();
  else if (a.isIntList())
    out = Type::list(Type::i64());
  else if (a.isDoubleList())
    out = Type::list(Type::f64());
  else if (a.isBoolList())
    out = Type::list(Type::boolean());
  else
    out = Type::any();
  return true;
}

/// Types of returns that are not tensors, from the schema alone; a Scalar
/// takes the kind of the first tensor operand's dtype.
Type schemaType(const c10::TypePtr& t, std::optional<DType> firstDType) {
  c10::TypePtr u = unwrapOptional(t);
  switch (u->kind()) {
    case c10::TypeKind::IntType:
    case c10::TypeKind::SymIntType: return Type::i64();
    case c10::TypeKind::FloatType:
    case c10::TypeKind::SymFloatType: return Type::f64();
    case c10::TypeKind::BoolType:
    case c10::TypeKind::SymBoolType: return Type::boolean();
    case c10::TypeKind::StringType:
    case c10::TypeKind::ScalarTypeType:
    case c10::TypeKind::DeviceObjType: return Type::string();
    case c10::TypeKind::NoneType: return Type::null();
    case c10::TypeKind::NumberType:
      if (!firstDType) return Type::any();
      if (*firstDType == DType::Bool) return Type::boolean();
      if (ir::isFloatingDType(*firstDType)) return Type::f64();
      if (*firstDType == DType::C64 || *firstDType == DType::C128) return Type::any();
      return Type::i64();
    case c10::TypeKind::ListType:
      return Type::list(schemaType(u->castRaw<c10::ListType>()->getElementType(), firstDType));
    case c10::TypeKind::TupleType: {
      std::vector<Type> elems;
      for (const auto& e : u->containedTypes()) elems.push_back(schemaType(e, firstDType));
      return Type::tuple(elems);
    }
    default: return Type::any();
  }
}

/// The first tensor type among the operands (looking into lists and tuples).
Type firstTensorType(const std::vector<Type>& operands) {
  for (Type t : operands) {
    if (!t) continue;
    if (t.isTensor()) return t;
    if (t.kind() == TypeKind::List && t.elementType().isTensor()) return t.elementType();
    if (t.kind() == TypeKind::Tuple)
      for (Type e : t.elements())
        if (e.isTensor()) return e;
  }
  return Type();
}

bool callOp(const AtenOp& op, torch::jit::Stack& stack, std::string& error, bool& noMeta) {
  noMeta = false;
  try {
    // Meta operands: libtorch's C++ meta function when it has a rule, not the
    // Python meta kernel torch registered over it (Note [Native meta kernels]).
    const c10::OperatorName& name = op.schema().operator_name();
    if (!runNativeMeta(name.name, name.overload_name, stack)) op.handle.callBoxed(stack);
    return true;
  } catch (const std::exception& e) {
    noMeta = isNoMetaKernel(e);
    error = qualifiedName(op.schema()) + ": " + exceptionMessage(e);
    return false;
  }
}

/// Result types of a `pointwise` op that has no meta kernel: the broadcast of
/// its tensor operands' shapes (computed for both placeholder runs), with the
/// dtypes that a probe run on one-element CPU tensors gives.
bool pointwiseTypes(const AtenOp& op, const std::vector<Type>& operands, const ir::AttrDict& attrs,
                    const std::vector<ArgSource>& plan, Knowledge know, InferState& st,
                    std::vector<Type>& results, std::string& error) {
  const c10::FunctionSchema& schema = op.schema();
  std::vector<int64_t> shape[2];
  for (int run = 0; run < 2; ++run) {
    Mode mode = run ? Mode::Meta1 : Mode::Meta0;
    for (const ArgSource& src : plan) {
      if (src.kind != ArgSource::Operand || !operands[src.first].isTensor()) continue;
      std::vector<int64_t> sizes;
      for (const Dim& d : operands[src.first].dims()) sizes.push_back(st.ph.size(d, mode));
      try {
        shape[run] = at::infer_size(shape[run], sizes);
      } catch (const std::exception& e) {
        error = qualifiedName(schema) + ": " + exceptionMessage(e);
        return false;
      }
    }
  }
  torch::jit::Stack probe;
  bool noKernel = false;
  if (!buildStack(op, operands, attrs, plan, Mode::Probe, st, probe, error)) return false;
  if (!callOp(op, probe, error, noKernel)) return false;
  const auto& rets = schema.returns();
  if (probe.size() != rets.size()) {
    error = qualifiedName(schema) + ": probe returned " + std::to_string(probe.size()) + " values";
    return false;
  }
  for (size_t i = 0; i < rets.size(); ++i) {
    Type t;
    if (probe[i].isTensor() && probe[i].toTensor().defined()) {
      RawTensor a, b;
      a.defined = b.defined = true;
      a.dtype = b.dtype = probe[i].toTensor().scalar_type();
      a.sizes = shape[0];
      b.sizes = shape[1];
      if (!tensorType(a, &b, know, true, st, t, error)) return false;
    } else if (!resultType(probe[i], nullptr, rets[i], know, st, t, error)) {
      return false;
    }
    results.push_back(t);
  }
  return true;
}

bool inferUncached(const AtenOp& op, const std::vector<Type>& allOperands,
                   const ir::AttrDict& attrs, std::vector<Type>& results, std::string& error) {
  const c10::FunctionSchema& schema = op.schema();
  size_t first = 0;
  if (op.effect) {
    if (allOperands.empty() || !allOperands[0].isToken()) {
      error = qualifiedName(schema) + ": operand 0 must be an !token (the op has effects)";
      return false;
    }
    first = 1;
  }
  std::vector<Type> operands(allOperands.begin() + first, allOperands.end());
  std::vector<OperandClass> classes;
  for (Type t : operands) classes.push_back(classOf(t));
  std::vector<ArgSource> plan;
  if (!bindArguments(schema, classes, attrs, plan, error)) return false;

  const auto& rets = schema.returns();
  results.clear();
  if (op.effect) results.push_back(Type::token());
  if (std::find(classes.begin(), classes.end(), OperandClass::Any) != classes.end()) {
    results.insert(results.end(), rets.size(), Type::any());
    return true;
  }
  if (op.collective) return collectiveTypes(op, operands, attrs, results, error);

  // Attribute encodings are checked once, so that later placeholder runs fail
  // only for reasons that have to do with shapes and values.
  for (size_t i = 0; i < plan.size(); ++i) {
    if (plan[i].kind != ArgSource::Attr) continue;
    c10::IValue v;
    std::string err;
    if (!attrToIValue(*plan[i].attr, schema.arguments()[i], c10::Device(c10::kCPU), v, err)) {
      error = qualifiedName(schema) + ": " + err;
      return false;
    }
  }

  InferState st;
  Type firstTensor = firstTensorType(operands);
  if (const ir::Attr* dev = attrs.get("device"); dev && dev->kind() == ir::Attr::Kind::Str)
    st.device = normalizeDevice(dev->getStr());
  else if (firstTensor)
    st.device = firstTensor.device();
  std::optional<DType> firstDType;
  if (firstTensor) firstDType = firstTensor.dtype();

  bool tensorReturns = std::any_of(rets.begin(), rets.end(), [](const c10::Argument& r) {
    return isTensorLikeType(r.real_type());
  });
  if (!tensorReturns) {
    // Scalars and sizes: the schema says it all (and `item` has no meta kernel).
    for (const auto& r : rets) results.push_back(schemaType(r.real_type(), firstDType));
    return true;
  }

  // What can be known, given which arguments come from operands.
  const auto& args = schema.arguments();
  bool factory = !firstTensor;
  Knowledge know = Knowledge::Exact;
  bool unranked = false;
  bool varies = false;  // do placeholders differ between runs? (else one run is enough)
  auto weaken = [&](Knowledge k) { know = std::max(know, k); };
  auto noteTensor = [&](Type t) {
    if (!t.isTensor()) return;
    if (!t.ranked()) {
      unranked = true;
      weaken(Knowledge::DTypeOnly);
      return;
    }
    for (const Dim& d : t.dims()) varies |= !d.isStatic();
  };
  for (size_t i = 0; i < args.size(); ++i) {
    const ArgSource& src = plan[i];
    if (src.kind == ArgSource::Operand) {
      Type t = operands[src.first];
      weaken(knowledgeOf(t, args[i], factory));
      noteTensor(t);
      if (t.kind() == TypeKind::List) varies = true;  // stands for 2, then 3 elements
      if (t.kind() == TypeKind::List && t.elementType().isTensor()) noteTensor(t.elementType());
      if (t.kind() == TypeKind::Tuple)
        for (Type e : t.elements()) noteTensor(e);
    } else if (src.kind == ArgSource::Operands) {
      for (int j = 0; j < src.count; ++j) noteTensor(operands[src.first + j]);
    }
  }

  torch::jit::Stack s0, s1;
  bool noKernel = false;
  bool ok = false;
  std::string runError;
  auto attempt = [&](Mode mode, torch::jit::Stack& stack) {
    if (!buildStack(op, operands, attrs, plan, mode, st, stack, runError)) {
      noKernel = false;
      return false;
    }
    return callOp(op, stack, runError, noKernel);
  };
  try {
    if (unranked) {
      // Unranked operands: any rank ATen accepts tells us the dtype.
      for (Mode mode : {Mode::Meta0, Mode::Probe}) {
        for (int rank : {1, 2, 0, 3, 4}) {
          st.unrankedRank = rank;
          if ((ok = attempt(mode, s0))) break;
        }
        if (ok || !noKernel) break;
      }
    } else {
      ok = attempt(Mode::Meta0, s0);
      if (ok && know == Knowledge::Exact && varies) ok = attempt(Mode::Meta1, s1);
      // Data-dependent ops may have a meta kernel that refuses to run.
      noKernel |= !ok && op.dynamicShape;
      if (!ok && noKernel && op.pointwise)
        return pointwiseTypes(op, operands, attrs, plan, know, st, results, error);
      if (!ok && noKernel) {
        // No meta kernel: run the CPU kernel on small placeholders, twice,
        // unless the schema says the output shape depends on the data.
        st.metaRuns = false;
        s1.clear();
        ok = attempt(Mode::Cpu0, s0);
        if (ok && (op.dynamicShape || (varies && !attempt(Mode::Cpu1, s1)))) {
          s1.clear();
          weaken(Knowledge::RankOnly);
        }
      }
    }
  } catch (const TooLargeForCpu&) {
    ok = false;
    noKernel = true;
  } catch (const std::exception& e) {
    // Building placeholders failed (a dtype ATen cannot allocate, a huge shape).
    ok = false;
    noKernel = false;
    runError = qualifiedName(schema) + ": " + exceptionMessage(e);
  }

  if (!ok) {
    if (know == Knowledge::Exact && !noKernel) {
      error = runError;
      return false;
    }
    // Values decided at run time made the placeholders invalid: fall back to
    // the dtype of the first tensor operand.
    DType dt = firstDType.value_or(DType::F32);
    for (const auto& r : rets) {
      if (!isTensorLikeType(r.real_type()))
        results.push_back(schemaType(r.real_type(), firstDType));
      else if (unwrapOptional(r.real_type())->kind() == c10::TypeKind::ListType)
        results.push_back(Type::list(Type::unrankedTensor(dt, st.device)));
      else
        results.push_back(Type::unrankedTensor(dt, st.device));
    }
    return true;
  }

  if (unranked) know = Knowledge::DTypeOnly;
  if (s0.size() != rets.size()) {
    error =
        qualifiedName(schema) + ": meta kernel returned " + std::to_string(s0.size()) + " values";
    return false;
  }
  bool twoRuns = s1.size() == s0.size();
  for (size_t i = 0; i < rets.size(); ++i) {
    Type t;
    if (!resultType(s0[i], twoRuns ? &s1[i] : nullptr, rets[i], know, st, t, error)) {
      error = qualifiedName(schema) + ": " + error;
      return false;
    }
    results.push_back(t);
  }
  return true;
}

// Graphs repeat the same (op, operand types, attributes) many times, and a
// meta call costs tens of microseconds, so answers are memoised.
struct CacheKey {
  const AtenOp* op;
  std::vector<Type> operands;
  ir::AttrDict attrs;
  bool operator==(const CacheKey& o) const {
    return op == o.op && operands == o.operands && attrs == o.attrs;
  }
};
struct CacheKeyHash {
  size_t operator()(const CacheKey& k) const {
    size_t h = std::hash<const void*>()(k.op) ^ (k.attrs.hash() * 31);
    for (Type t : k.operands) h = h * 1000003u ^ std::hash<Type>()(t);
    return h;
  }
};
struct CacheEntry {
  bool ok;
  std::vector<Type> results;
  std::string error;
};
constexpr size_t kMaxCacheEntries = 1 << 16;

}  // namespace

bool collectiveTypes(const AtenOp& op, const std::vector<Type>& operands, const ir::AttrDict& attrs,
                     std::vector<Type>& results, std::string& error) {
  const std::string& full = op.schema().name();
  std::string_view name = std::string_view(full).substr(full.find("::") + 2);
  if (operands.empty() || !operands[0].isTensor() || op.schema().returns().size() != 1) {
    error = qualifiedName(op.schema()) + ": no shape rule (Note [Collectives as nodes])";
    return false;
  }
  Type in = operands[0];
  std::vector<Dim> dims = in.dims();
  if (name == "all_gather_into_tensor" || name == "reduce_scatter_tensor") {
    int64_t n = attrs.getInt("group_size", -1);
    if (n <= 0 || dims.empty()) {
      error = qualifiedName(op.schema()) + ": needs a positive group_size and a tensor of rank >= 1";
      return false;
    }
    if (dims[0].isStatic()) {
      if (name == "reduce_scatter_tensor" && dims[0].size % n != 0) {
        error = qualifiedName(op.schema()) + ": dim 0 (" + std::to_string(dims[0].size) +
                ") is not divisible by the group size " + std::to_string(n);
        return false;
      }
      dims[0] = Dim::fixed(name == "reduce_scatter_tensor" ? dims[0].size / n : dims[0].size * n);
    } else {
      dims[0] = Dim::dynamic();
    }
  } else if (name != "all_reduce" && name != "wait_tensor") {
    error = qualifiedName(op.schema()) + ": no shape rule (Note [Collectives as nodes])";
    return false;
  }
  results.push_back(Type::tensor(in.dtype(), dims, in.device()));
  return true;
}

bool inferResultTypes(const AtenOp& op, const std::vector<Type>& operands,
                      const ir::AttrDict& attrs, std::vector<Type>& results, std::string& error) {
  static std::mutex mu;
  static std::unordered_map<CacheKey, CacheEntry, CacheKeyHash> cache;
  CacheKey key{&op, operands, attrs};
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache.find(key);
    if (it != cache.end()) {
      results = it->second.results;
      error = it->second.error;
      return it->second.ok;
    }
  }
  CacheEntry entry;
  entry.ok = inferUncached(op, operands, attrs, entry.results, entry.error);
  results = entry.results;
  error = entry.error;
  bool ok = entry.ok;
  std::lock_guard<std::mutex> lock(mu);
  if (cache.size() >= kMaxCacheEntries) cache.clear();
  cache.emplace(std::move(key), std::move(entry));
  return ok;
}

}  // namespace xacc::backend::aten
