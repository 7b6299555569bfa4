// The `aten.*` op family: every operator known to the c10 dispatcher becomes a
// GIR op named `aten.<name>.<overload>` (`aten.add.Tensor`, `aten.relu.default`;
// `aten.relu` names the default overload). Descriptions are created on first
// lookup from the operator's schema; result types come from ATen meta kernels
// and execution is one boxed dispatcher call, so there is no per-op code. This
// header has no ATen types in it; components that handle tensors themselves
// include `xacc/backend/aten/TensorDatum.h` instead.
//
// Note [ATen operands and attributes]: a node supplies the schema's arguments
// in schema order. For each argument:
//   1. a node attribute with the argument's name supplies it (`{alpha = 2}`);
//   2. otherwise the next operand supplies it if its type fits the argument:
//      tensors fit `Tensor`/`Tensor?`; `i64`/`f64`/`bool` operands fit `int`,
//      `float`, `bool` and `Scalar` like Python numbers do (and a plain `Tensor`
//      argument, as a wrapped number: `aten.add.Tensor(%x, %n)` with `%n: f64`);
//      `list<i64>`/`tuple<i64, ...>` fit `int[]` (an `i64` fits too, as `[n]`);
//      `null` fits any optional argument; `str` fits `str`, `ScalarType`
//      (dtype name), `Device`, `Layout` and `MemoryFormat`. A `Tensor[]` or
//      `Tensor?[]` argument takes either one `list<tensor>` operand or the run
//      of consecutive tensor (and, for `Tensor?[]`, `null`) operands, minus as
//      many as later required `Tensor` arguments need
//      (`aten.cat.default(%a, %b, %c) {dim = 1}`);
//   3. otherwise its schema default, or None for an optional argument;
//   4. otherwise the node is malformed ("missing argument").
// Leftover operands and attributes that name no argument are errors.
// Attribute encodings: int -> integer, float -> float (an integer is accepted),
// bool -> bool, int[N] -> array of integers (a single integer is repeated N
// times, as in Python), float[] -> array of floats, ScalarType -> our dtype
// name (`"f32"`), Device -> GIR device name (`"cpu"`, `"cuda0"`, `"xpu0"`),
// Layout -> `"strided"`, MemoryFormat -> `"contiguous_format"`,
// `"preserve_format"`, `"channels_last"`, `"channels_last_3d"`, str -> string,
// None -> `none`.
//
// Note [ATen effects]: an op whose schema writes an argument (`add_`, `out=`
// variants), whose schema is tagged `nondeterministic_seeded` or takes a
// `Generator` (random ops consume the RNG state; CPU flash attention, whose
// kernel refuses dropout, is exempt), or that returns nothing is
// effectful: operand 0 is an `!token` and result 0 a new `!token`, followed by
// the schema's returns (see Note [Effect tokens]). Random ops are also
// `kNondeterministic`; every other op is `kPure`.
//
// Note [ATen type inference]: result types are computed by calling the op on
// meta tensors built from the operand types. Dynamic dims are replaced by
// placeholder sizes in two runs (all `?` dims share one size per run, each
// named symbol gets its own); an output dim equal in both runs is static, one
// that follows a named symbol in both runs gets the symbol's name, any other
// is `?`. Values that are only known at run time and decide shapes (an `i64`
// operand for an `int`/`int[]` argument, scalar operands of factory ops) make
// every output dim `?`; `bool`, `str` and list operands for such arguments, and
// unranked inputs, give unranked outputs with the dtype ATen computes. Placeholder sizes are multiples of 840 (`?`) so that
// divisibility checks pass; a failure with placeholders is reported like a
// static one. Ops without a meta kernel (many in a C++-only process: relu,
// conv2d, layer_norm, index_select; inside a Python process
// `torch._meta_registrations` adds Python meta kernels for most of them):
// `pointwise`-tagged ops get the broadcast of their tensor operands' shapes and
// the dtypes of a probe on one-element CPU tensors; other ops run on small CPU
// placeholders (ones, then zeros with other dynamic sizes; not tried above 4M
// elements, which gives dtype-only results). Ops tagged `dynamic_output_shape`
// (`nonzero`, `unique`) keep dtype and rank, every dim `?`. Results are
// memoised per (op, operand types, attributes). The result device is the
// `device` attribute when given, otherwise the first tensor operand's device,
// otherwise `cpu`.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "xacc/ir/Attribute.h"
#include "xacc/ir/Datum.h"

namespace xacc::ir {
class Interpreter;
class Node;
}  // namespace xacc::ir

namespace xacc::backend::aten {

/// True when libtorch is linked and its operator registry is populated.
bool isAtenAvailable();

/// Registers the `aten.` op family in `ir::OpRegistry::get()`. Idempotent and
/// thread-safe.
void registerAtenOps();

/// Splits `aten.<name>[.<overload>]` into the dispatcher's operator name
/// (`aten::add`) and overload (`Tensor`; "" for `default` or when omitted).
bool parseAtenOpName(std::string_view name, std::string& opName, std::string& overload,
                     std::string& error);

/// Overload names of `aten::<name>` (`name` without namespace, e.g. "add"), in
/// registry order; "default" stands for the empty overload.
std::vector<std::string> atenOverloads(std::string_view name);

/// One schema argument, as other components (capture, passes) need it.
struct AtenArgInfo {
  std::string name;
  std::string type;         ///< schema spelling: "Tensor", "Scalar", "int[]", "ScalarType?"...
  bool tensorLike = false;  ///< Tensor, Tensor?, Tensor[] or Tensor?[]
  bool optional = false;
  bool hasDefault = false;
  bool kwargOnly = false;
  bool written = false;  ///< alias annotation with `!` (mutated in place)
  std::string aliasSet;  ///< "a" for `Tensor(a)`/`Tensor(a!)`, "" otherwise
};

/// Facts about one ATen op: its schema and what it aliases and mutates.
struct AtenOpSchemaInfo {
  std::string
      schema;  ///< e.g. "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"
  std::vector<AtenArgInfo> args;
  std::vector<AtenArgInfo> returns;
  bool effect = false;  ///< See Note [ATen effects]
  bool random = false;
};

/// Looks up the schema facts of `aten.<name>[.<overload>]`.
bool atenSchemaInfo(std::string_view name, AtenOpSchemaInfo& out, std::string& error);

/// Executes `aten.<name>[.<overload>]` on datums outside a graph, following
/// Note [ATen operands and attributes]; effectful ops take and return a token
/// as operand/result 0. The registered `interp` does the same and reports
/// failures through `Interpreter::fail` with code E0601.
bool runAtenOp(std::string_view name, const ir::AttrDict& attrs, const std::vector<ir::Datum>& args,
               std::vector<ir::Datum>& results, std::string& error);

/// runAtenOp on meta operands (the xpu backend's eager-strides run): libtorch's
/// C++ meta function where Note [Native meta kernels] has a rule for the op
/// and these arguments, else the op's registered kernel as runAtenOp. The
/// registered `interp` and runAtenOp never look for meta operands (the ATen
/// fallback's hot path does no scan).
bool runAtenOpOnMeta(std::string_view name, const ir::AttrDict& attrs, const std::vector<ir::Datum>& args,
                     std::vector<ir::Datum>& results, std::string& error);

/// Infers result types of `aten.<name>[.<overload>]` for the given operand
/// types and attributes (what the registered `infer` does).
bool inferAtenOp(std::string_view name, const std::vector<ir::Type>& operands,
                 const ir::AttrDict& attrs, std::vector<ir::Type>& results, std::string& error);

/// Note [Prepared ATen calls]: the registered `interp` of an `aten.` node binds
/// its operands and attributes to the schema on every call (Note [ATen
/// operands and attributes]: operand classes from the datums, attribute and
/// default conversions). An executor that runs one node many times prepares
/// it once instead: the binding comes from the operands' static types and the
/// attribute and default values are converted once, so a call only converts
/// its operands, calls the dispatcher and converts the results. That binding is
/// the one the interp rule computes whenever each operand's run-time class is
/// its static class; a call whose operands differ in class returns `Rebind`,
/// and the caller runs the interp rule, which binds from the datums. Nodes
/// whose operand types leave a class open (`any`) are not prepared.
class PreparedAtenCall {
public:
  enum class Status { Ok, Failed, Rebind };
  /// nullptr when `node` is not an `aten.` node this can prepare. The node
  /// must outlive the result.
  static std::unique_ptr<PreparedAtenCall> prepare(const ir::Node& node);
  ~PreparedAtenCall();
  /// Runs the node on `slots[operands[i]]` (an effect's token first), as its
  /// interp rule would; `Failed`: `error` says why, as the rule's message.
  Status run(const std::vector<ir::Datum>& slots, const std::vector<int>& operands,
             std::vector<ir::Datum>& results, std::string& error) const;
  /// Whether calls go through the op's C++ function (Note [Direct ATen calls]).
  bool direct() const;
  /// Reports a `Failed` run through `interp` with the interp rule's code and
  /// message (E0602 for shape errors, else E0601); returns false.
  bool fail(ir::Interpreter& interp, const std::string& error) const;

private:
  struct Impl;
  explicit PreparedAtenCall(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace xacc::backend::aten
