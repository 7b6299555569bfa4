// Tensors as GIR datums, and conversions between GIR values and ATen values.
// This header includes ATen: only components that link libtorch (the ATen
// backend, the Python bindings, the executors) include it. A tensor datum is a
// `Datum` of kind `DKind::Tensor` whose object is a `TensorObject`; it shares
// the tensor (no copy) and keeps autograd state. GIR device names map to c10
// devices as `cpu` -> CPU, `cudaN` -> CUDA N, `meta` -> Meta, and `xpuN` -> CPU
// (the xpu target executes on the host for now).
#pragma once

#include <exception>
#include <string>
#include <string_view>

#include <ATen/core/Tensor.h>
#include <ATen/core/ivalue.h>

#include "xacc/ir/Datum.h"
#include "xacc/ir/Type.h"

namespace xacc::backend::aten {

/// The opaque object behind a tensor datum.
struct TensorObject : ir::OpaqueObject {
  explicit TensorObject(at::Tensor tensor) : t(std::move(tensor)) {}
  at::Tensor t;
  /// `tensor([[1.0, 2.0], [3.0, 4.0]])`, with `dtype=`/`device=`/`requires_grad=`
  /// suffixes where they differ from the defaults; large tensors print their
  /// shape and dtype only.
  std::string repr() const override;
};

/// Wraps `t` (shared, not copied). An undefined tensor becomes a null datum.
ir::Datum makeTensorDatum(at::Tensor t);
/// True if `d` holds a tensor.
bool isTensorDatum(const ir::Datum& d);
/// The tensor inside a tensor datum; an undefined tensor for any other datum.
const at::Tensor& tensorOf(const ir::Datum& d);

/// DType <-> ScalarType. Returns false for ScalarTypes GIR has no name for.
c10::ScalarType toScalarType(ir::DType d);
bool fromScalarType(c10::ScalarType s, ir::DType& out);

/// GIR device name <-> c10::Device. `cuda` alone and `cuda:0` are accepted too.
bool toDevice(std::string_view name, c10::Device& out);
std::string deviceName(const c10::Device& d);

/// The GIR type of a tensor: its dtype, its sizes (every dim `?` when
/// `dynamicDims`) and its device. Tensors of a dtype GIR cannot name get
/// `tensor<f32, ...>`; use fromScalarType to check first when it matters.
ir::Type typeOfTensor(const at::Tensor& t, bool dynamicDims = false);

/// Datum -> IValue: null, int, float, bool, str, tensors, lists and tuples of
/// these (homogeneous lists become typed lists: int[], float[], bool[],
/// Tensor[]). Tokens, structs, functions and Python objects are rejected.
bool toIValue(const ir::Datum& d, c10::IValue& out, std::string& error);
/// IValue -> Datum: the inverse, plus Scalar-like numbers, devices (as names)
/// and undefined tensors (as null). Complex numbers, generators and other
/// objects are rejected.
bool toDatum(const c10::IValue& v, ir::Datum& out, std::string& error);

/// The first line of an exception's message, without the C++ backtrace.
std::string exceptionMessage(const std::exception& e);

// Note [ATen error translation]: an executor reports a failed op as false plus
// an error string ("aten::index.Tensor: index 5 is out of bounds ..."), which
// the capture boundary raises as RuntimeError. Eager PyTorch raises the type the
// op threw instead (c10::IndexError -> IndexError, c10::LinAlgError ->
// torch.linalg.LinAlgError, ...), with the op's full message. So the executor
// that catches an op's exception also notes it here, on this thread, under the
// error string it reported; the Python boundary (capture::raiseAsEager) then
// raises exactly what eager raises when the RuntimeError it is about to show
// carries that string.

/// Notes `e`, the exception of the op whose failure `error` reports.
void noteOpError(std::exception_ptr e, std::string error);
/// The exception noted on this thread (null when none) and its error string;
/// the note is consumed.
std::exception_ptr takeOpError(std::string& error);

}  // namespace xacc::backend::aten
