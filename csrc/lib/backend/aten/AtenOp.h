// Private to the ATen backend: a resolved ATen operator and the binding of a
// node's operands and attributes to its schema arguments. Binding follows Note
// [ATen operands and attributes] and is computed from operand *classes*, which
// come from static types (type inference) or from datums (execution), so both
// paths bind the same node the same way.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <ATen/core/dispatch/Dispatcher.h>

#include "xacc/backend/aten/AtenOps.h"
#include "xacc/ir/Attribute.h"
#include "xacc/ir/Datum.h"
#include "xacc/ir/Type.h"

namespace xacc::backend::aten {

/// A dispatcher operator resolved from a GIR op name.
struct AtenOp {
  std::string name;  ///< the GIR name it was looked up under
  c10::OperatorHandle handle;
  bool effect = false;  ///< See Note [ATen effects], Note [Custom operators as nodes]
  bool random = false;
  bool pointwise = false;     ///< tagged `pointwise`: result shape is the broadcast of the inputs
  bool dynamicShape = false;  ///< tagged `dynamic_output_shape`: result shape depends on data
  bool collective = false;    ///< a `_c10d_functional` collective: See Note [Collectives as nodes]

  AtenOp(std::string n, c10::OperatorHandle h) : name(std::move(n)), handle(std::move(h)) {}
  const c10::FunctionSchema& schema() const { return handle.schema(); }
};

/// Resolves `aten.<name>[.<overload>]`, or `aten.<ns>.<name>.<overload>` for the
/// operators of other namespaces (Note [Collectives as nodes], Note [Custom operators as nodes]);
/// nullptr with `error` set if unknown.
/// Results are cached, so the pointer stays valid for the process lifetime.
const AtenOp* resolveAtenOp(std::string_view name, std::string& error);

/// Result types of a collective (shape rules: the op must not run to infer them,
/// it would talk to the other ranks).
bool collectiveTypes(const AtenOp& op, const std::vector<ir::Type>& operands,
                     const ir::AttrDict& attrs, std::vector<ir::Type>& results, std::string& error);

/// What an operand can supply, as far as binding cares.
enum class OperandClass : uint8_t {
  Tensor,
  Int,
  Float,
  Bool,
  Str,
  None,
  TensorList,
  IntList,
  FloatList,
  BoolList,
  EmptyList,
  Any,
  Token,
  Other
};
OperandClass classOf(ir::Type t);
OperandClass classOf(const ir::Datum& d);

/// Where one schema argument comes from.
struct ArgSource {
  enum Kind : uint8_t { Attr, Operand, Operands, Default, None } kind = None;
  int first = 0;  ///< Operand/Operands: index into the (token-stripped) operands
  int count = 0;  ///< Operands: how many operands form the list
  const ir::Attr* attr = nullptr;
};

/// Binds the schema's arguments to attributes, operands and defaults.
bool bindArguments(const c10::FunctionSchema& schema, const std::vector<OperandClass>& operands,
                   const ir::AttrDict& attrs, std::vector<ArgSource>& plan, std::string& error);

/// `T` for `T?`, anything else unchanged; `optional` says which it was.
c10::TypePtr unwrapOptional(const c10::TypePtr& t, bool* optional = nullptr);

/// "argument 'alpha' (Scalar)" for messages.
std::string describeArg(const c10::Argument& arg);

/// Converts an attribute to the IValue an argument of `type` expects. Numbers
/// given for a Tensor argument become wrapped-number tensors on `device`.
bool attrToIValue(const ir::Attr& a, const c10::Argument& arg, const c10::Device& device,
                  c10::IValue& out, std::string& error);

/// Converts an operand datum to the IValue an argument of `type` expects.
bool datumToIValue(const ir::Datum& d, const c10::Argument& arg, c10::IValue& out,
                   std::string& error);

/// Infers result types (token first for effectful ops). See Note [ATen type
/// inference]. Never throws.
bool inferResultTypes(const AtenOp& op, const std::vector<ir::Type>& operands,
                      const ir::AttrDict& attrs, std::vector<ir::Type>& results,
                      std::string& error);

/// Note [Direct ATen calls] (AtenDirect.cpp): a prepared node called through
/// its C++ function, its constant arguments kept unboxed.
struct DirectCall {
  enum class Kind : uint8_t { None, View, UnsafeView, Reshape, T, Transpose, Unsqueeze, Permute, Expand, Detach,
                              Mm, Bmm, Addmm };
  Kind kind = Kind::None;
  std::vector<int64_t> ints;  ///< sizes or dims
  int64_t i0 = 0, i1 = 0;     ///< dims
  bool flag = false;          ///< expand's `implicit`
  c10::Scalar beta, alpha;    ///< addmm's
  /// mm and addmm may take the skinny kernels (Note [Skinny matrix products]):
  /// set for xpu0's prepared calls; the ATen executor (device "cpu") keeps
  /// ATen's GEMM, so its values stay eager's to the bit.
  bool skinny = false;
};

/// Fills `out` when `op`, with the constant arguments `tmpl` (by schema
/// position) and tensor operands at `tensorPositions`, has a direct call.
bool prepareDirect(const AtenOp& op, const std::vector<c10::IValue>& tmpl,
                   const std::vector<size_t>& tensorPositions, DirectCall& out);

/// The direct call on tensors `t` (in `tensorPositions` order); throws as ATen does.
at::Tensor runDirect(const DirectCall& d, const at::Tensor* t);

/// "aten::add.Tensor" for messages.
std::string qualifiedName(const c10::FunctionSchema& schema);

/// True for Tensor, Tensor?, Tensor[] and Tensor?[] (after unwrapping Optional).
bool isTensorLikeType(const c10::TypePtr& t);

}  // namespace xacc::backend::aten
