// The `aten.` op family: resolves GIR names to dispatcher operators, binds
// operands and attributes to schema arguments (Note [ATen operands and
// attributes]), builds OpInfos with traits from the schema (Note [ATen
// effects]) and executes nodes with one boxed dispatcher call. Exceptions from
// libtorch stop here and become error strings.
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/function_schema.h>
#include <ATen/ops/exp.h>
#include <ATen/ops/ones.h>
#include <c10/core/impl/LocalDispatchKeySet.h>

#include <algorithm>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

#include "AtenOp.h"
#include "xacc/backend/aten/AtenOps.h"
#include "xacc/backend/aten/NativeMeta.h"
#include "xacc/backend/aten/TensorDatum.h"
#include "xacc/ir/Graph.h"
#include "xacc/ir/Interpreter.h"
#include "xacc/ir/Op.h"
#include "xacc/support/CoreDiags.h"

using xacc::support::coreCode;
using xacc::support::CoreDiag;

namespace xacc::backend::aten {

using ir::Attr;
using ir::AttrDict;
using ir::Datum;
using ir::DKind;
using ir::Type;
using ir::TypeKind;

namespace {
constexpr std::string_view kPrefix = "aten.";

/// Note [Collectives as nodes]
/// ~~~~~~~~~~~~~~~~~~~~~~~~~~~
/// The `aten.` family names operators of the c10 dispatcher. Besides aten::
/// itself it admits every other namespace, spelled `aten.<ns>.<name>.<overload>`
/// (the overload is required there; Note [Custom operators as nodes]). Among
/// them are PyTorch's functional collectives (`_c10d_functional::all_reduce`,
/// `all_gather_into_tensor`, `reduce_scatter_tensor`, `wait_tensor`). Their
/// group is an attribute (the process group's registered name, a string), so a
/// node runs through the dispatcher like any other and the operator finds the
/// group by name in the process-group registry of the process that runs the
/// graph. Every collective is an effect: each rank must issue the same
/// collectives in the same order, so no pass may drop one whose result is
/// unused, merge two equal ones or move one across another; and their result
/// types come from shape rules (collectiveTypes), never from running them on
/// placeholders, which would talk to the other ranks. The recorder
/// (xacc/_src/capture/recorder.py) records them without running them on meta
/// tensors for the same reason.
constexpr std::string_view kCollectiveNamespaces[] = {"_c10d_functional"};

/// Note [Custom operators as nodes]
/// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
/// An operator of a namespace other than aten:: (a library's custom op,
/// registered with torch.library) is a node `aten.<ns>.<name>.<overload>` run
/// through the dispatcher by its qualified name: eager's own kernels, autograd
/// included. xacc knows nothing of what it does, so every such node is an
/// effect (never dropped, merged or reordered: it may print, draw random
/// numbers or keep state, which its schema does not say); its result types come
/// from its meta kernel (the fake kernel torch.library registers), like an aten
/// op's. The recorder records one only when its schema neither writes nor
/// aliases an argument and its meta kernel runs (recorder.py `_custom_op`);
/// otherwise it is decomposed or a graph break. A graph that names an operator
/// no longer registered (a cached graph loaded in a process that did not
/// import the library) fails to resolve it: the executors refuse to build it.
bool isCollectiveNamespace(std::string_view ns) {
  for (std::string_view n : kCollectiveNamespaces)
    if (n == ns) return true;
  return false;
}


// Diagnostic code of an ATen op that fails at run time (bad values, shape
// errors the static types did not catch).
constexpr const char *kAtenRuntimeError = coreCode(CoreDiag::AtenRuntimeError);
// Note [Tensor shape errors]: an ATen failure that says the operands' shapes
// do not fit each other is E0602 and its message starts with
// "TensorDimensionMismatch: " (the name Camel's tensor module gives it, spec
// 15.17); every other ATen failure is E0601.
constexpr const char *kAtenShapeError = coreCode(CoreDiag::TensorShapeMismatch);

bool isShapeError(const std::string& msg) {
  static const char* kPhrases[] = {"must match the size of tensor", "shapes cannot be multiplied",
                                   "size mismatch", "Sizes of tensors must match",
                                   "is invalid for input of size", "inconsistent tensor size",
                                   "must match except in dimension", "mismatch in dimension",
                                   "should be 2D", "must be a matrix", "both arguments to matmul need to be at least 1D",
                                   "Dimension out of range"};
  for (const char* p : kPhrases)
    if (msg.find(p) != std::string::npos) return true;
  return false;
}

/// The element type of a list argument, or nullptr.
c10::TypePtr listElement(const c10::TypePtr& t) {
  if (auto l = t->cast<c10::ListType>()) return l->getElementType();
  return nullptr;
}

bool isTensorListArg(const c10::Argument& arg, bool& optionalElems) {
  auto elem = listElement(unwrapOptional(arg.real_type()));
  if (!elem) return false;
  bool opt = false;
  auto inner = unwrapOptional(elem, &opt);
  optionalElems = opt;
  return inner->kind() == c10::TypeKind::TensorType;
}

bool isRequiredTensorArg(const c10::Argument& arg) {
  return arg.real_type()->kind() == c10::TypeKind::TensorType && !arg.default_value();
}

const char* className(OperandClass c) {
  switch (c) {
    case OperandClass::Tensor: return "tensor";
    case OperandClass::Int: return "i64";
    case OperandClass::Float: return "f64";
    case OperandClass::Bool: return "bool";
    case OperandClass::Str: return "str";
    case OperandClass::None: return "null";
    case OperandClass::TensorList: return "list<tensor>";
    case OperandClass::IntList: return "list<i64>";
    case OperandClass::FloatList: return "list<f64>";
    case OperandClass::BoolList: return "list<bool>";
    case OperandClass::EmptyList: return "empty list";
    case OperandClass::Any: return "any";
    case OperandClass::Token: return "!token";
    case OperandClass::Other: return "value";
  }
  return "value";
}

OperandClass classOfElements(const std::vector<OperandClass>& elems) {
  if (elems.empty()) return OperandClass::EmptyList;
  bool allTensorOrNone = true, anyTensor = false, allInt = true, allNum = true, allBool = true;
  for (OperandClass c : elems) {
    if (c == OperandClass::Any) return OperandClass::Any;
    anyTensor |= c == OperandClass::Tensor;
    allTensorOrNone &= c == OperandClass::Tensor || c == OperandClass::None;
    allInt &= c == OperandClass::Int;
    allNum &= c == OperandClass::Int || c == OperandClass::Float;
    allBool &= c == OperandClass::Bool;
  }
  if (allTensorOrNone && anyTensor) return OperandClass::TensorList;
  if (allInt) return OperandClass::IntList;
  if (allNum) return OperandClass::FloatList;
  if (allBool) return OperandClass::BoolList;
  return OperandClass::Other;
}

/// Does an operand of class `c` fit an argument of (real) type `type`?
bool fits(const c10::TypePtr& type, OperandClass c) {
  if (c == OperandClass::Any) return true;
  if (c == OperandClass::Token || c == OperandClass::Other) return false;
  bool optional = false;
  c10::TypePtr t = unwrapOptional(type, &optional);
  if (c == OperandClass::None) return optional || t->kind() == c10::TypeKind::NoneType;
  switch (t->kind()) {
    case c10::TypeKind::TensorType:
      return c == OperandClass::Tensor ||
             (!optional &&
              (c == OperandClass::Int || c == OperandClass::Float || c == OperandClass::Bool));
    case c10::TypeKind::IntType:
    case c10::TypeKind::SymIntType: return c == OperandClass::Int || c == OperandClass::Bool;
    case c10::TypeKind::FloatType:
    case c10::TypeKind::SymFloatType: return c == OperandClass::Float || c == OperandClass::Int;
    case c10::TypeKind::BoolType:
    case c10::TypeKind::SymBoolType: return c == OperandClass::Bool;
    case c10::TypeKind::NumberType:
      return c == OperandClass::Int || c == OperandClass::Float || c == OperandClass::Bool;
    case c10::TypeKind::StringType:
    case c10::TypeKind::AnyType:  // a collective's group name (Note [Collectives as nodes])
    case c10::TypeKind::ScalarTypeType:
    case c10::TypeKind::LayoutType:
    case c10::TypeKind::MemoryFormatType:
    case c10::TypeKind::DeviceObjType: return c == OperandClass::Str;
    case c10::TypeKind::ListType: {
      if (c == OperandClass::EmptyList) return true;
      c10::TypePtr e = unwrapOptional(t->castRaw<c10::ListType>()->getElementType());
      switch (e->kind()) {
        case c10::TypeKind::TensorType: return c == OperandClass::TensorList;
        case c10::TypeKind::IntType:
        case c10::TypeKind::SymIntType: return c == OperandClass::IntList || c == OperandClass::Int;
        case c10::TypeKind::FloatType:
          return c == OperandClass::FloatList || c == OperandClass::IntList;
        case c10::TypeKind::BoolType: return c == OperandClass::BoolList;
        default: return false;
      }
    }
    default: return false;
  }
}

std::mutex& cacheMutex() {
  static std::mutex m;
  return m;
}
std::unordered_map<std::string, std::unique_ptr<AtenOp>>& opCache() {
  static std::unordered_map<std::string, std::unique_ptr<AtenOp>> cache;
  return cache;
}

bool returnToDatum(const c10::IValue& v, const c10::Argument& ret, Datum& out, std::string& error) {
  if (v.isInt() && unwrapOptional(ret.real_type())->kind() == c10::TypeKind::ScalarTypeType) {
    ir::DType d;
    if (fromScalarType(static_cast<c10::ScalarType>(v.toInt()), d)) {
      out = Datum::string(ir::dtypeName(d));
      return true;
    }
  }
  return toDatum(v, out, error);
}

/// The IValue of an argument an operand (or a run of operands, for a list
/// argument) supplies; `args` starts after the token of an effect.
bool operandToIValue(const ArgSource& src, const Datum* args, const c10::Argument& arg, c10::IValue& v,
                     std::string& err) {
  if (src.kind == ArgSource::Operand) return datumToIValue(args[src.first], arg, v, err);
  std::vector<Datum> items(args + src.first, args + src.first + src.count);
  return datumToIValue(Datum::list(std::move(items)), arg, v, err);
}

/// Calls `op` on `stack` and converts its returns, a token first for an effect.
bool callAndCollect(const AtenOp& op, torch::jit::Stack& stack, bool meta, std::vector<Datum>& results,
                    std::string& error) {
  const c10::FunctionSchema& schema = op.schema();
  try {
    const c10::OperatorName& name = schema.operator_name();
    if (!meta || !runNativeMeta(name.name, name.overload_name, stack)) op.handle.callBoxed(stack);
  } catch (const std::exception& e) {
    error = qualifiedName(schema) + ": " + exceptionMessage(e);
    noteOpError(std::current_exception(), error);  // See Note [ATen error translation]
    return false;
  }
  const auto& rets = schema.returns();
  if (stack.size() != rets.size()) {
    error = qualifiedName(schema) + ": expected " + std::to_string(rets.size()) + " results, got " +
            std::to_string(stack.size());
    return false;
  }
  results.clear();
  results.reserve(rets.size() + (op.effect ? 1 : 0));
  if (op.effect) results.push_back(Datum::token());
  for (size_t i = 0; i < rets.size(); ++i) {
    Datum d;
    if (!returnToDatum(stack[i], rets[i], d, error)) return false;
    results.push_back(std::move(d));
  }
  return true;
}

/// Runs `op` on `args`. `meta`: the operands are meta tensors (the xpu
/// backend's eager-strides run, runAtenOpOnMeta), and libtorch's C++ meta
/// function runs where it has a rule (Note [Native meta kernels]); every other
/// call (the ATen executor, xpu0's per-call fallback) goes straight to the
/// dispatcher, with no scan of its operands.
bool runResolved(const AtenOp& op, const AttrDict& attrs, const std::vector<Datum>& args,
                 std::vector<Datum>& results, std::string& error, bool meta = false) {
  const c10::FunctionSchema& schema = op.schema();
  size_t first = 0;
  if (op.effect) {
    if (args.empty() || args[0].kind() != DKind::Token) {
      error = qualifiedName(schema) + ": operand 0 must be an !token (the op has effects)";
      return false;
    }
    first = 1;
  }
  std::vector<OperandClass> classes;
  classes.reserve(args.size() - first);
  for (size_t i = first; i < args.size(); ++i) classes.push_back(classOf(args[i]));
  std::vector<ArgSource> plan;
  if (!bindArguments(schema, classes, attrs, plan, error)) return false;

  const auto& schemaArgs = schema.arguments();
  torch::jit::Stack stack;
  stack.reserve(schemaArgs.size());
  for (size_t i = 0; i < schemaArgs.size(); ++i) {
    const c10::Argument& arg = schemaArgs[i];
    const ArgSource& src = plan[i];
    c10::IValue v;
    std::string err;
    bool ok = true;
    switch (src.kind) {
      case ArgSource::Attr:
        ok = attrToIValue(*src.attr, arg, c10::Device(c10::kCPU), v, err);
        break;
      case ArgSource::Operand:
      case ArgSource::Operands: ok = operandToIValue(src, args.data() + first, arg, v, err); break;
      case ArgSource::Default: v = *arg.default_value(); break;
      case ArgSource::None: break;
    }
    if (!ok) {
      error = qualifiedName(schema) + ": " + err;
      return false;
    }
    stack.push_back(std::move(v));
  }
  return callAndCollect(op, stack, meta, results, error);
}

bool reportFailure(ir::Interpreter& interp, const ir::Node& node, const std::string& err) {
  if (isShapeError(err)) return interp.fail(node, kAtenShapeError, "TensorDimensionMismatch: " + err);
  return interp.fail(node, kAtenRuntimeError, err);
}

std::unique_ptr<ir::OpInfo> makeOpInfo(std::string_view name, std::string& error) {
  const AtenOp* op = resolveAtenOp(name, error);
  if (!op) return nullptr;
  auto info = std::make_unique<ir::OpInfo>();
  info->name = std::string(name);
  info->traits = op->effect ? ir::kEffect : ir::kPure;
  if (op->random) info->traits |= ir::kNondeterministic;
  info->minOperands = op->effect ? 1 : 0;
  info->maxOperands = -1;
  info->numResults = static_cast<int>(op->schema().returns().size()) + (op->effect ? 1 : 0);
  info->summary = c10::toString(op->schema());
  info->infer = [op](const ir::InferInput& in, std::vector<Type>& results, std::string& err) {
    return inferResultTypes(*op, in.operands, in.attrs, results, err);
  };
  info->interp = [op](ir::Interpreter& interp, const ir::Node& node, std::vector<Datum>& args,
                      std::vector<Datum>& results) {
    std::string err;
    if (runResolved(*op, node.attrs(), args, results, err)) return true;
    return reportFailure(interp, node, err);
  };
  return info;
}

}  // namespace

std::string qualifiedName(const c10::FunctionSchema& schema) {
  return schema.overload_name().empty() ? schema.name()
                                        : schema.name() + "." + schema.overload_name();
}

bool isTensorLikeType(const c10::TypePtr& t) {
  c10::TypePtr u = unwrapOptional(t);
  if (auto e = listElement(u)) u = unwrapOptional(e);
  return u->kind() == c10::TypeKind::TensorType;
}

OperandClass classOf(Type t) {
  if (!t) return OperandClass::Other;
  switch (t.kind()) {
    case TypeKind::Tensor: return OperandClass::Tensor;
    case TypeKind::Int: return OperandClass::Int;
    case TypeKind::Float: return OperandClass::Float;
    case TypeKind::Bool: return OperandClass::Bool;
    case TypeKind::Str: return OperandClass::Str;
    case TypeKind::Null: return OperandClass::None;
    case TypeKind::Any:
    case TypeKind::PyObj: return OperandClass::Any;
    case TypeKind::Token: return OperandClass::Token;
    case TypeKind::List: {
      OperandClass e = classOf(t.elementType());
      // One representative element says what the list holds.
      OperandClass c = classOfElements({e});
      return c == OperandClass::TensorList || c == OperandClass::IntList ||
                     c == OperandClass::FloatList || c == OperandClass::BoolList ||
                     c == OperandClass::Any
                 ? c
                 : OperandClass::Other;
    }
    case TypeKind::Tuple: {
      std::vector<OperandClass> elems;
      for (Type e : t.elements()) elems.push_back(classOf(e));
      return classOfElements(elems);
    }
    default: return OperandClass::Other;
  }
}

OperandClass classOf(const Datum& d) {
  switch (d.kind()) {
    case DKind::Tensor: return isTensorDatum(d) ? OperandClass::Tensor : OperandClass::Other;
    case DKind::Int: return OperandClass::Int;
    case DKind::Float: return OperandClass::Float;
    case DKind::Bool: return OperandClass::Bool;
    case DKind::Str: return OperandClass::Str;
    case DKind::Null: return OperandClass::None;
    case DKind::Token: return OperandClass::Token;
    case DKind::List:
    case DKind::Tuple: {
      const auto& items = d.kind() == DKind::List ? d.listItems() : d.tupleItems();
      std::vector<OperandClass> elems;
      elems.reserve(items.size());
      for (const Datum& i : items) elems.push_back(classOf(i));
      return classOfElements(elems);
    }
    default: return OperandClass::Other;
  }
}

bool bindArguments(const c10::FunctionSchema& schema, const std::vector<OperandClass>& operands,
                   const AttrDict& attrs, std::vector<ArgSource>& plan, std::string& error) {
  const auto& args = schema.arguments();
  for (const auto& [name, value] : attrs.items()) {
    if (!schema.argumentIndexWithName(name)) {
      error = qualifiedName(schema) + " has no argument named '" + name + "'";
      return false;
    }
  }
  plan.assign(args.size(), ArgSource{});
  size_t next = 0;
  const size_t n = operands.size();
  for (size_t i = 0; i < args.size(); ++i) {
    const c10::Argument& arg = args[i];
    ArgSource& src = plan[i];
    if (const Attr* a = attrs.get(arg.name())) {
      src.kind = ArgSource::Attr;
      src.attr = a;
      continue;
    }
    if (next < n) {
      OperandClass c = operands[next];
      bool optElems = false;
      if (isTensorListArg(arg, optElems) &&
          (c == OperandClass::Tensor || (optElems && c == OperandClass::None))) {
        // Variadic form: the run of tensor operands, minus those that later
        // required Tensor arguments need.
        size_t run = 0;
        while (next + run < n && (operands[next + run] == OperandClass::Tensor ||
                                  (optElems && operands[next + run] == OperandClass::None)))
          ++run;
        size_t reserve = 0;
        for (size_t j = i + 1; j < args.size(); ++j)
          if (isRequiredTensorArg(args[j]) && !attrs.has(args[j].name())) ++reserve;
        if (run > reserve) {
          src.kind = ArgSource::Operands;
          src.first = static_cast<int>(next);
          src.count = static_cast<int>(run - reserve);
          next += run - reserve;
          continue;
        }
      } else if (fits(arg.real_type(), c)) {
        src.kind = ArgSource::Operand;
        src.first = static_cast<int>(next++);
        continue;
      }
    }
    if (arg.default_value()) {
      src.kind = ArgSource::Default;
      continue;
    }
    bool optional = false;
    unwrapOptional(arg.real_type(), &optional);
    if (optional) {
      src.kind = ArgSource::None;
      continue;
    }
    if (next < n)
      error = qualifiedName(schema) + ": operand " + std::to_string(next) + " of kind " +
              className(operands[next]) + " does not fit " + describeArg(arg);
    else
      error = qualifiedName(schema) + ": missing " + describeArg(arg);
    return false;
  }
  if (next < n) {
    error = qualifiedName(schema) + ": too many operands (" + std::to_string(n) + "); operand " +
            std::to_string(next) + " of kind " + className(operands[next]) +
            " matches no remaining argument";
    return false;
  }
  return true;
}

const AtenOp* resolveAtenOp(std::string_view name, std::string& error) {
  std::lock_guard<std::mutex> lock(cacheMutex());
  auto& cache = opCache();
  auto it = cache.find(std::string(name));
  if (it != cache.end()) return it->second.get();

  std::string opName, overload;
  if (!parseAtenOpName(name, opName, overload, error)) return nullptr;
  bool omitted = name.substr(kPrefix.size()).find('.') == std::string_view::npos;
  bool foreign = opName.rfind("aten::", 0) != 0;
  std::optional<c10::OperatorHandle> handle;
  try {
    handle = c10::Dispatcher::singleton().findSchema({opName, overload});
    if (!handle && omitted && !foreign) {
      // `aten.empty` names the only overload when there is no default one.
      auto overloads = atenOverloads(opName.substr(6));
      if (overloads.size() == 1)
        handle = c10::Dispatcher::singleton().findSchema({opName, overloads[0]});
    }
  } catch (const std::exception& e) {
    error = exceptionMessage(e);
    return nullptr;
  }
  if (!handle) {
    error = std::string(foreign ? "no operator '" : "no ATen operator '") + opName + "' with overload '" +
            (overload.empty() ? "default" : overload) + "'";
    if (foreign) error += " (is the library that registers it imported? Note [Custom operators as nodes])";
    auto overloads = foreign ? std::vector<std::string>() : atenOverloads(opName.substr(6));
    if (!overloads.empty()) {
      error += " (overloads:";
      for (const auto& o : overloads) error += " " + o;
      error += ")";
    }
    return nullptr;
  }
  auto op = std::make_unique<AtenOp>(std::string(name), *handle);
  const c10::FunctionSchema& schema = op->schema();
  bool generator = false;
  for (const auto& arg : schema.arguments())
    generator |= unwrapOptional(arg.real_type())->kind() == c10::TypeKind::GeneratorType;
  // CPU flash attention is tagged for its dropout, which its CPU kernel
  // refuses (dropout_p > 0 raises): it never draws from the RNG, so it is
  // pure (Note [Attention as one node] in capture/sdpa.py).
  static const std::unordered_set<std::string> drawsNothing = {"aten::_scaled_dot_product_flash_attention_for_cpu"};
  op->random = (handle->hasTag(at::Tag::nondeterministic_seeded) && !drawsNothing.count(schema.name())) || generator;
  // Note [Collectives as nodes], Note [Custom operators as nodes]
  op->collective = foreign && isCollectiveNamespace(opName.substr(0, opName.find("::")));
  op->effect = schema.is_mutable() || op->random || schema.returns().empty() || foreign;
  op->pointwise = handle->hasTag(at::Tag::pointwise);
  op->dynamicShape = handle->hasTag(at::Tag::dynamic_output_shape);
  const AtenOp* raw = op.get();
  cache.emplace(std::string(name), std::move(op));
  return raw;
}

bool parseAtenOpName(std::string_view name, std::string& opName, std::string& overload,
                     std::string& error) {
  if (name.substr(0, kPrefix.size()) != kPrefix) {
    error = "'" + std::string(name) + "' is not an aten op name";
    return false;
  }
  std::string_view rest = name.substr(kPrefix.size());
  size_t dot = rest.find('.');
  std::string ns = "aten";
  if (dot != std::string_view::npos && rest.find('.', dot + 1) != std::string_view::npos) {
    // aten.<ns>.<name>.<overload>: another namespace (Note [Custom operators as nodes])
    ns = std::string(rest.substr(0, dot));
    rest = rest.substr(dot + 1);
    dot = rest.find('.');
    if (ns.empty() || ns == "aten") {
      error = "malformed op name '" + std::string(name) + "' (expected aten.<name>[.<overload>] "
              "or aten.<ns>.<name>.<overload> with <ns> not aten)";
      return false;
    }
  }
  std::string_view base = rest.substr(0, dot);
  std::string_view ov = dot == std::string_view::npos ? std::string_view() : rest.substr(dot + 1);
  if (base.empty() || ov.find('.') != std::string_view::npos ||
      (dot != std::string_view::npos && ov.empty())) {
    error =
        "malformed aten op name '" + std::string(name) + "' (expected aten.<name>[.<overload>])";
    return false;
  }
  opName = ns + "::" + std::string(base);
  overload = ov == "default" ? std::string() : std::string(ov);
  return true;
}

std::vector<std::string> atenOverloads(std::string_view name) {
  std::string full = "aten::" + std::string(name);
  std::vector<std::string> out;
  for (const c10::OperatorName& op : c10::Dispatcher::singleton().getAllOpNames())
    if (op.name == full) out.push_back(op.overload_name.empty() ? "default" : op.overload_name);
  return out;
}

bool isAtenAvailable() {
  try {
    return c10::Dispatcher::singleton().findSchema({"aten::add", "Tensor"}).has_value();
  } catch (...) {
    return false;
  }
}

/// Note [MKL's first vector-math call]: on contiguous float and double CPU
/// tensors ATen computes tanh, exp, log, erf, sin and the other functions of
/// at::vml with MKL's VML (vmsTanh(..., VML_HA), ...), split over the ATen
/// thread pool in chunks of 2048 elements. MKL chooses its VML kernels (the
/// instruction set, through MKL_ENABLE_INSTRUCTIONS and CPU detection) lazily,
/// in the first VML call of the process. When that first call runs on several
/// threads at once, a thread that arrives while another one is still choosing
/// can compute its chunk with the AVX2 "enhanced performance" kernel instead
/// of the high-accuracy one ATen asks for: tanh then has relative errors up to
/// 5.2e-5 instead of 1 ulp on that chunk, for that call. Seen as
/// tests/python/pgo/test_pgo.py::test_region_left_to_aten_on_xpu failing in
/// about 1 of 25-100 processes (the graph ran the process's first tanh, 4096
/// elements on 2 threads; rows 32-63 were bitwise vmsTanh(..., VML_EP) with
/// MKL_ENABLE_INSTRUCTIONS=AVX2), and in plain PyTorch without xacc: 7 of
/// 10000 forked processes whose first call was torch.tanh on 8 x 2048
/// elements and 8 threads gave one chunk different from the second call.
/// registerAtenOps (run by `import xacc`, by the camel aten executor and by
/// every xpu compile) therefore makes one VML call first, at::exp on 16
/// floats: below ATen's grain, so it runs on this thread alone and MKL has
/// chosen before anything can call it in parallel (later threads only read
/// their own accuracy mode). tests/python/backend/test_vector_math_init.py.
static void initVectorMath() {
  try {
    // A Python dispatch mode active at the first registration (a fake-tensor
    // mode) must neither see these ops nor turn them into fake ones.
    c10::impl::ExcludeDispatchKeyGuard noPython(
        c10::DispatchKeySet({c10::DispatchKey::Python, c10::DispatchKey::PythonTLSSnapshot}));
    (void)at::exp(at::ones({16}, at::kFloat));
  } catch (const std::exception&) {
    // A libtorch without CPU kernels: nothing to choose.
  }
}

void registerAtenOps() {
  static std::once_flag once;
  std::call_once(once, [] {
    ir::OpRegistry::get().addFamily(std::string(kPrefix), makeOpInfo);
    initVectorMath();  // Note [MKL's first vector-math call]
  });
}

bool atenSchemaInfo(std::string_view name, AtenOpSchemaInfo& out, std::string& error) {
  const AtenOp* op = resolveAtenOp(name, error);
  if (!op) return false;
  auto describe = [](const c10::Argument& a) {
    AtenArgInfo info;
    info.name = a.name();
    info.type = a.real_type()->str();
    info.tensorLike = isTensorLikeType(a.real_type());
    unwrapOptional(a.real_type(), &info.optional);
    info.hasDefault = a.default_value().has_value();
    info.kwargOnly = a.kwarg_only();
    if (const c10::AliasInfo* alias = a.alias_info()) {
      info.written = alias->isWrite();
      if (!alias->beforeSets().empty())
        info.aliasSet = alias->beforeSets().begin()->toUnqualString();
      for (const auto& contained : alias->containedTypes()) info.written |= contained.isWrite();
    }
    return info;
  };
  out = AtenOpSchemaInfo{};
  out.schema = c10::toString(op->schema());
  for (const auto& a : op->schema().arguments()) out.args.push_back(describe(a));
  for (const auto& r : op->schema().returns()) out.returns.push_back(describe(r));
  out.effect = op->effect;
  out.random = op->random;
  return true;
}

bool runAtenOp(std::string_view name, const AttrDict& attrs, const std::vector<Datum>& args,
               std::vector<Datum>& results, std::string& error) {
  const AtenOp* op = resolveAtenOp(name, error);
  return op && runResolved(*op, attrs, args, results, error);
}

bool runAtenOpOnMeta(std::string_view name, const AttrDict& attrs, const std::vector<Datum>& args,
                     std::vector<Datum>& results, std::string& error) {
  const AtenOp* op = resolveAtenOp(name, error);
  return op && runResolved(*op, attrs, args, results, error, /*meta=*/true);
}

bool inferAtenOp(std::string_view name, const std::vector<Type>& operands, const AttrDict& attrs,
                 std::vector<Type>& results, std::string& error) {
  const AtenOp* op = resolveAtenOp(name, error);
  return op && inferResultTypes(*op, operands, attrs, results, error);
}

// Note [Prepared ATen calls] (AtenOps.h): what runResolved derives from the
// datums on every call, derived once from the node's static types.
struct PreparedAtenCall::Impl {
  const AtenOp* op = nullptr;
  const ir::Node* node = nullptr;
  size_t first = 0;                    ///< 1 after an effect's token
  std::vector<OperandClass> classes;   ///< static class of each operand after the token
  std::vector<c10::IValue> tmpl;       ///< attribute and default values, by schema position
  std::vector<std::pair<size_t, ArgSource>> fills;  ///< (schema position, operand source)
  DirectCall direct;  ///< Note [Direct ATen calls]; kind None: the boxed call
};

PreparedAtenCall::PreparedAtenCall(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PreparedAtenCall::~PreparedAtenCall() = default;

std::unique_ptr<PreparedAtenCall> PreparedAtenCall::prepare(const ir::Node& node) {
  if (node.opName().rfind(kPrefix, 0) != 0 || node.numRegions() > 0) return nullptr;
  std::string error;
  auto impl = std::make_unique<Impl>();
  impl->op = resolveAtenOp(node.opName(), error);
  if (!impl->op) return nullptr;
  impl->node = &node;
  impl->first = impl->op->effect ? 1 : 0;
  if (node.numOperands() < impl->first) return nullptr;
  for (size_t i = impl->first; i < node.numOperands(); ++i) {
    OperandClass c = classOf(node.operand(i)->type());
    // A class known only at run time could bind differently call by call.
    if (c == OperandClass::Any || c == OperandClass::Other || c == OperandClass::Token) return nullptr;
    impl->classes.push_back(c);
  }
  std::vector<ArgSource> plan;
  const c10::FunctionSchema& schema = impl->op->schema();
  if (!bindArguments(schema, impl->classes, node.attrs(), plan, error)) return nullptr;
  const auto& args = schema.arguments();
  impl->tmpl.resize(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    switch (plan[i].kind) {
      case ArgSource::Attr:
        if (!attrToIValue(*plan[i].attr, args[i], c10::Device(c10::kCPU), impl->tmpl[i], error)) return nullptr;
        break;
      case ArgSource::Default: impl->tmpl[i] = *args[i].default_value(); break;
      case ArgSource::None: break;
      case ArgSource::Operand:
      case ArgSource::Operands: impl->fills.emplace_back(i, plan[i]); break;
    }
  }
  // Direct calls: no effect, one tensor result, every operand a tensor of its own argument.
  std::vector<size_t> tensorPositions;
  bool tensorsOnly = !impl->op->effect && schema.returns().size() == 1;
  for (const auto& [pos, src] : impl->fills) {
    tensorsOnly &= src.kind == ArgSource::Operand && impl->classes[size_t(src.first)] == OperandClass::Tensor &&
                   size_t(src.first) == tensorPositions.size() &&
                   args[pos].real_type()->kind() == c10::TypeKind::TensorType;
    tensorPositions.push_back(pos);
  }
  if (tensorsOnly && tensorPositions.size() == impl->classes.size() &&
      prepareDirect(*impl->op, impl->tmpl, tensorPositions, impl->direct))
    impl->direct.skinny = true;  // Note [Skinny matrix products]: xpu0's products
  return std::unique_ptr<PreparedAtenCall>(new PreparedAtenCall(std::move(impl)));
}

PreparedAtenCall::Status PreparedAtenCall::run(const std::vector<Datum>& slots, const std::vector<int>& operands,
                                               std::vector<Datum>& results, std::string& error) const {
  const Impl& p = *impl_;
  thread_local std::vector<Datum> args;
  args.clear();
  for (size_t i = p.first; i < operands.size(); ++i) {
    const Datum& d = slots[operands[i]];
    OperandClass want = p.classes[i - p.first];
    if (want == OperandClass::Tensor ? !isTensorDatum(d) : classOf(d) != want) return Status::Rebind;
    args.push_back(d);
  }
  if (p.direct.kind != DirectCall::Kind::None) {
    at::Tensor tensors[3];
    for (size_t i = 0; i < args.size() && i < 3; ++i) tensors[i] = tensorOf(args[i]);
    args.clear();
    try {
      at::Tensor r = runDirect(p.direct, tensors);
      results.clear();
      results.push_back(makeTensorDatum(std::move(r)));
      return Status::Ok;
    } catch (const std::exception& e) {
      error = qualifiedName(p.op->schema()) + ": " + exceptionMessage(e);
      noteOpError(std::current_exception(), error);  // See Note [ATen error translation]
      return Status::Failed;
    }
  }
  const auto& schemaArgs = p.op->schema().arguments();
  torch::jit::Stack stack(p.tmpl);
  for (const auto& [pos, src] : p.fills) {
    std::string err;
    if (!operandToIValue(src, args.data(), schemaArgs[pos], stack[pos], err)) {
      error = qualifiedName(p.op->schema()) + ": " + err;
      args.clear();
      return Status::Failed;
    }
  }
  args.clear();
  return callAndCollect(*p.op, stack, /*meta=*/false, results, error) ? Status::Ok : Status::Failed;
}

bool PreparedAtenCall::direct() const { return impl_->direct.kind != DirectCall::Kind::None; }

bool PreparedAtenCall::fail(ir::Interpreter& interp, const std::string& error) const {
  return reportFailure(interp, *impl_->node, error);
}

}  // namespace xacc::backend::aten
