// Tensor datums and the conversions between GIR values and ATen values: the
// generic ones of TensorDatum.h and the schema-typed ones of AtenOp.h (an
// attribute or operand to the IValue one argument expects). Conversions never
// throw: ATen exceptions are caught here and turned into error strings, as
// everywhere at the libtorch boundary.
#include "xacc/backend/aten/TensorDatum.h"

#include <ATen/ScalarOps.h>

#include <c10/util/Exception.h>

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "AtenOp.h"

namespace xacc::backend::aten {

using ir::Attr;
using ir::Datum;
using ir::DKind;
using ir::DType;
using ir::Type;

namespace {

// Tensors with more elements print as a summary.
constexpr int64_t kMaxReprElements = 1000;

std::string formatElement(const at::Tensor& flat, int64_t i, bool floating, bool boolean) {
  if (boolean) return flat.data_ptr<bool>()[i] ? "True" : "False";
  if (!floating) return std::to_string(flat.data_ptr<int64_t>()[i]);
  double v = flat.data_ptr<double>()[i];
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  std::string s = buf;
  // Keep floats recognisable as floats ("1.0", not "1").
  if (s.find_first_of(".eni") == std::string::npos) s += ".0";
  return s;
}

void formatNested(const at::Tensor& flat, const std::vector<int64_t>& sizes, size_t dim,
                  int64_t& index, bool floating, bool boolean, std::string& out) {
  if (dim == sizes.size()) {
    out += formatElement(flat, index++, floating, boolean);
    return;
  }
  out += "[";
  for (int64_t i = 0; i < sizes[dim]; ++i) {
    if (i) out += ", ";
    formatNested(flat, sizes, dim + 1, index, floating, boolean, out);
  }
  out += "]";
}

}  // namespace

std::string TensorObject::repr() const {
  if (!t.defined()) return "tensor(undefined)";
  DType dt;
  bool named = fromScalarType(t.scalar_type(), dt);
  std::string dtypeText = named ? ir::dtypeName(dt) : std::string(c10::toString(t.scalar_type()));
  std::string out = "tensor(";
  bool summary = t.numel() > kMaxReprElements || t.is_meta() || t.is_complex() || !named;
  if (summary) {
    out += "shape=[";
    for (int64_t i = 0; i < t.dim(); ++i) out += (i ? ", " : "") + std::to_string(t.size(i));
    out += "], dtype=" + dtypeText;
  } else {
    try {
      bool floating = t.is_floating_point();
      bool boolean = t.scalar_type() == c10::kBool;
      at::Tensor flat = t.detach()
                            .to(c10::kCPU, floating  ? c10::kDouble
                                           : boolean ? c10::kBool
                                                     : c10::kLong)
                            .contiguous();
      int64_t index = 0;
      formatNested(flat, t.sizes().vec(), 0, index, floating, boolean, out);
    } catch (const std::exception& e) {
      out += "<" + exceptionMessage(e) + ">";
    }
    if (dt != DType::F32 && dt != DType::I64 && dt != DType::Bool) out += ", dtype=" + dtypeText;
  }
  if (!t.device().is_cpu()) out += ", device=" + deviceName(t.device());
  if (t.requires_grad()) out += ", requires_grad=True";
  return out + ")";
}

Datum makeTensorDatum(at::Tensor t) {
  if (!t.defined()) return Datum();
  return Datum::object(DKind::Tensor, new TensorObject(std::move(t)));
}

bool isTensorDatum(const Datum& d) {
  return d.kind() == DKind::Tensor && dynamic_cast<TensorObject*>(d.object()) != nullptr;
}

const at::Tensor& tensorOf(const Datum& d) {
  static const at::Tensor kUndefined;
  if (d.kind() != DKind::Tensor) return kUndefined;
  auto* obj = dynamic_cast<TensorObject*>(d.object());
  return obj ? obj->t : kUndefined;
}

namespace {
struct DTypePair {
  DType d;
  c10::ScalarType s;
};
constexpr DTypePair kDTypes[] = {
    {DType::F16, c10::kHalf},         {DType::BF16, c10::kBFloat16},
    {DType::F32, c10::kFloat},        {DType::F64, c10::kDouble},
    {DType::I8, c10::kChar},          {DType::I16, c10::kShort},
    {DType::I32, c10::kInt},          {DType::I64, c10::kLong},
    {DType::U8, c10::kByte},          {DType::Bool, c10::kBool},
    {DType::C64, c10::kComplexFloat}, {DType::C128, c10::kComplexDouble},
};
}  // namespace

c10::ScalarType toScalarType(DType d) {
  for (const auto& p : kDTypes)
    if (p.d == d) return p.s;
  return c10::kFloat;
}

bool fromScalarType(c10::ScalarType s, DType& out) {
  for (const auto& p : kDTypes)
    if (p.s == s) {
      out = p.d;
      return true;
    }
  return false;
}

bool toDevice(std::string_view name, c10::Device& out) {
  auto indexOf = [](std::string_view rest, int& idx) {
    if (!rest.empty() && rest.front() == ':') rest.remove_prefix(1);
    if (rest.empty()) {
      idx = 0;
      return true;
    }
    idx = 0;
    for (char c : rest) {
      if (c < '0' || c > '9' || idx > 1000) return false;
      idx = idx * 10 + (c - '0');
    }
    return true;
  };
  int idx = 0;
  if (name == "cpu") {
    out = c10::Device(c10::kCPU);
  } else if (name == "meta") {
    out = c10::Device(c10::kMeta);
  } else if (name.substr(0, 4) == "cuda" && indexOf(name.substr(4), idx)) {
    out = c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(idx));
  } else if (name.substr(0, 3) == "xpu" && indexOf(name.substr(3), idx)) {
    // The xpu target runs on the host until a vendor runtime plugs in.
    out = c10::Device(c10::kCPU);
  } else {
    return false;
  }
  return true;
}

std::string deviceName(const c10::Device& d) {
  if (d.is_cpu()) return "cpu";
  if (d.is_meta()) return "meta";
  if (d.is_cuda()) return "cuda" + std::to_string(d.has_index() ? d.index() : 0);
  std::string s = d.str();
  std::string out;
  for (char c : s)
    if (c != ':') out += c;
  return out;
}

Type typeOfTensor(const at::Tensor& t, bool dynamicDims) {
  DType dt = DType::F32;
  fromScalarType(t.scalar_type(), dt);
  std::vector<ir::Dim> dims;
  dims.reserve(t.dim());
  for (int64_t i = 0; i < t.dim(); ++i)
    dims.push_back(dynamicDims ? ir::Dim::dynamic() : ir::Dim::fixed(t.size(i)));
  return Type::tensor(dt, dims, deviceName(t.device()));
}

bool toIValue(const Datum& d, c10::IValue& out, std::string& error) {
  switch (d.kind()) {
    case DKind::Null: out = c10::IValue(); return true;
    case DKind::Int: out = c10::IValue(d.asInt()); return true;
    case DKind::Float: out = c10::IValue(d.asFloat()); return true;
    case DKind::Bool: out = c10::IValue(d.asBool()); return true;
    case DKind::Str: out = c10::IValue(d.asStr()); return true;
    case DKind::Tensor:
      if (!isTensorDatum(d)) break;
      out = c10::IValue(tensorOf(d));
      return true;
    case DKind::List:
    case DKind::Tuple: {
      const auto& items = d.kind() == DKind::List ? d.listItems() : d.tupleItems();
      std::vector<c10::IValue> vals(items.size());
      for (size_t i = 0; i < items.size(); ++i)
        if (!toIValue(items[i], vals[i], error)) return false;
      if (d.kind() == DKind::Tuple) {
        out = c10::ivalue::Tuple::create(std::move(vals));
        return true;
      }
      auto all = [&](auto pred) {
        return !vals.empty() && std::all_of(vals.begin(), vals.end(), pred);
      };
      if (all([](const c10::IValue& v) { return v.isTensor(); })) {
        c10::List<at::Tensor> l;
        for (auto& v : vals) l.push_back(v.toTensor());
        out = l;
      } else if (all([](const c10::IValue& v) { return v.isInt(); })) {
        c10::List<int64_t> l;
        for (auto& v : vals) l.push_back(v.toInt());
        out = l;
      } else if (all([](const c10::IValue& v) { return v.isDouble(); })) {
        c10::List<double> l;
        for (auto& v : vals) l.push_back(v.toDouble());
        out = l;
      } else if (all([](const c10::IValue& v) { return v.isBool(); })) {
        c10::List<bool> l;
        for (auto& v : vals) l.push_back(v.toBool());
        out = l;
      } else {
        c10::impl::GenericList l(c10::AnyType::get());
        for (auto& v : vals) l.push_back(std::move(v));
        out = l;
      }
      return true;
    }
    default: break;
  }
  error = "cannot pass a value of this kind to ATen: " + d.repr(false);
  return false;
}

bool toDatum(const c10::IValue& v, Datum& out, std::string& error) {
  if (v.isNone()) {
    out = Datum();
  } else if (v.isTensor()) {
    out = makeTensorDatum(v.toTensor());
  } else if (v.isInt()) {
    out = Datum::integer(v.toInt());
  } else if (v.isDouble()) {
    out = Datum::real(v.toDouble());
  } else if (v.isBool()) {
    out = Datum::boolean(v.toBool());
  } else if (v.isSymInt() || v.isSymFloat() || v.isSymBool()) {
    c10::Scalar s = v.toScalar();
    out = s.isBoolean()         ? Datum::boolean(s.toBool())
          : s.isIntegral(false) ? Datum::integer(s.toLong())
                                : Datum::real(s.toDouble());
  } else if (v.isString()) {
    out = Datum::string(v.toStringRef());
  } else if (v.isDevice()) {
    out = Datum::string(deviceName(v.toDevice()));
  } else if (v.isList() || v.isTuple()) {
    std::vector<Datum> items;
    auto convertAll = [&](c10::ArrayRef<c10::IValue> vals) {
      items.resize(vals.size());
      for (size_t i = 0; i < vals.size(); ++i)
        if (!toDatum(vals[i], items[i], error)) return false;
      return true;
    };
    if (v.isList()) {
      if (!convertAll(v.toListRef())) return false;
      out = Datum::list(std::move(items));
    } else {
      if (!convertAll(v.toTupleRef().elements())) return false;
      out = Datum::tuple(std::move(items));
    }
  } else {
    error = std::string("cannot convert an ATen value of kind '") + v.tagKind() + "' to a datum";
    return false;
  }
  return true;
}

namespace {
struct OpError {
  std::exception_ptr exception;
  std::string error;
};
thread_local OpError tOpError;  // See Note [ATen error translation]
}  // namespace

void noteOpError(std::exception_ptr e, std::string error) { tOpError = {std::move(e), std::move(error)}; }

std::exception_ptr takeOpError(std::string& error) {
  error = std::move(tOpError.error);
  std::exception_ptr e = std::move(tOpError.exception);
  tOpError = {};
  return e;
}

std::string exceptionMessage(const std::exception& e) {
  std::string msg;
  if (auto* ce = dynamic_cast<const c10::Error*>(&e))
    msg = ce->what_without_backtrace();
  else
    msg = e.what();
  std::istringstream lines(msg);
  std::string line;
  while (std::getline(lines, line))
    if (line.find_first_not_of(" \t") != std::string::npos) return line;
  return msg;
}

// ---------------------------------------------------------------------------
// Schema-typed conversions (AtenOp.h): an attribute or a datum to the IValue
// that one particular schema argument expects.

c10::TypePtr unwrapOptional(const c10::TypePtr& t, bool* optional) {
  if (auto opt = t->cast<c10::OptionalType>()) {
    if (optional) *optional = true;
    return opt->getElementType();
  }
  if (optional) *optional = false;
  return t;
}

std::string describeArg(const c10::Argument& arg) {
  return "argument '" + arg.name() + "' (" + arg.real_type()->str() + ")";
}

namespace {

bool isIntKind(c10::TypeKind k) {
  return k == c10::TypeKind::IntType || k == c10::TypeKind::SymIntType;
}

bool parseEnumString(c10::TypeKind kind, const std::string& s, c10::IValue& out) {
  switch (kind) {
    case c10::TypeKind::ScalarTypeType: {
      ir::DType d;
      if (!ir::parseDType(s, d)) return false;
      out = c10::IValue(toScalarType(d));
      return true;
    }
    case c10::TypeKind::LayoutType:
      if (s == "strided")
        out = c10::IValue(c10::kStrided);
      else if (s == "sparse_coo")
        out = c10::IValue(c10::kSparse);
      else if (s == "sparse_csr")
        out = c10::IValue(c10::kSparseCsr);
      else
        return false;
      return true;
    case c10::TypeKind::MemoryFormatType:
      if (s == "contiguous_format")
        out = c10::IValue(c10::MemoryFormat::Contiguous);
      else if (s == "preserve_format")
        out = c10::IValue(c10::MemoryFormat::Preserve);
      else if (s == "channels_last")
        out = c10::IValue(c10::MemoryFormat::ChannelsLast);
      else if (s == "channels_last_3d")
        out = c10::IValue(c10::MemoryFormat::ChannelsLast3d);
      else
        return false;
      return true;
    case c10::TypeKind::DeviceObjType: {
      c10::Device d(c10::kCPU);
      if (!toDevice(s, d)) return false;
      out = c10::IValue(d);
      return true;
    }
    case c10::TypeKind::StringType:
    case c10::TypeKind::AnyType: out = c10::IValue(s); return true;  // a collective's group name
    default: return false;
  }
}

/// Converts a datum or an attribute to the IValue of a list argument. `items`
/// are the elements; each is a number, bool, tensor or null.
template <typename Elem, typename Get>
bool buildList(size_t n, Get get, const c10::Argument& arg, c10::IValue& out, std::string& error) {
  c10::List<Elem> l;
  l.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    Elem v;
    if (!get(i, v)) {
      error = "element " + std::to_string(i) + " does not fit " + describeArg(arg);
      return false;
    }
    l.push_back(std::move(v));
  }
  out = c10::IValue(std::move(l));
  return true;
}

/// The length a single integer is repeated to for `int[N]` arguments.
size_t repeatCount(const c10::Argument& arg) { return arg.N() ? static_cast<size_t>(*arg.N()) : 1; }

}  // namespace

bool attrToIValue(const Attr& a, const c10::Argument& arg, const c10::Device& device,
                  c10::IValue& out, std::string& error) {
  bool optional = false;
  c10::TypePtr t = unwrapOptional(arg.real_type(), &optional);
  auto mismatch = [&] {
    error = "attribute " + a.str() + " does not fit " + describeArg(arg);
    return false;
  };
  if (a.isNone()) {
    if (!optional && t->kind() != c10::TypeKind::NoneType) return mismatch();
    out = c10::IValue();
    return true;
  }
  using K = Attr::Kind;
  switch (t->kind()) {
    case c10::TypeKind::IntType:
    case c10::TypeKind::SymIntType:
      if (a.kind() == K::Int)
        out = c10::IValue(a.getInt());
      else if (a.kind() == K::Bool)
        out = c10::IValue(int64_t(a.getBool()));
      else
        return mismatch();
      return true;
    case c10::TypeKind::FloatType:
    case c10::TypeKind::SymFloatType:
      if (a.kind() == K::Float)
        out = c10::IValue(a.getFloat());
      else if (a.kind() == K::Int)
        out = c10::IValue(double(a.getInt()));
      else
        return mismatch();
      return true;
    case c10::TypeKind::BoolType:
    case c10::TypeKind::SymBoolType:
      if (a.kind() != K::Bool) return mismatch();
      out = c10::IValue(a.getBool());
      return true;
    case c10::TypeKind::NumberType:
    case c10::TypeKind::TensorType: {
      c10::Scalar s;
      if (a.kind() == K::Int)
        s = a.getInt();
      else if (a.kind() == K::Float)
        s = a.getFloat();
      else if (a.kind() == K::Bool)
        s = a.getBool();
      else
        return mismatch();
      if (t->kind() == c10::TypeKind::NumberType) {
        out = c10::IValue(s);
        return true;
      }
      try {
        // Wrapped numbers stay on the CPU whatever the device (as in PyTorch):
        // a meta-device wrapped number trips Python meta kernels' conversions.
        (void)device;
        out = c10::IValue(at::native::wrapped_scalar_tensor(s));
      } catch (const std::exception& e) {
        error = exceptionMessage(e);
        return false;
      }
      return true;
    }
    case c10::TypeKind::StringType:
    case c10::TypeKind::ScalarTypeType:
    case c10::TypeKind::LayoutType:
    case c10::TypeKind::MemoryFormatType:
    case c10::TypeKind::DeviceObjType:
      if (a.kind() != K::Str || !parseEnumString(t->kind(), a.getStr(), out)) return mismatch();
      return true;
    case c10::TypeKind::ListType: {
      c10::TypePtr e = t->castRaw<c10::ListType>()->getElementType();
      static const Attr::Array kEmpty;
      bool scalar = a.kind() != K::Array;
      const Attr::Array& items = scalar ? kEmpty : a.getArray();
      size_t n = scalar ? repeatCount(arg) : items.size();
      auto item = [&](size_t i) -> const Attr& { return scalar ? a : items[i]; };
      switch (e->kind()) {
        case c10::TypeKind::IntType:
        case c10::TypeKind::SymIntType:
          return buildList<int64_t>(
              n,
              [&](size_t i, int64_t& v) {
                if (item(i).kind() != K::Int) return false;
                v = item(i).getInt();
                return true;
              },
              arg, out, error);
        case c10::TypeKind::FloatType:
          if (scalar) return mismatch();
          return buildList<double>(
              n,
              [&](size_t i, double& v) {
                if (item(i).kind() == K::Float)
                  v = item(i).getFloat();
                else if (item(i).kind() == K::Int)
                  v = double(item(i).getInt());
                else
                  return false;
                return true;
              },
              arg, out, error);
        case c10::TypeKind::BoolType:
          if (scalar) return mismatch();
          return buildList<bool>(
              n,
              [&](size_t i, bool& v) {
                if (item(i).kind() != K::Bool) return false;
                v = item(i).getBool();
                return true;
              },
              arg, out, error);
        default: return mismatch();
      }
    }
    case c10::TypeKind::AnyType:  // a collective's group name (Note [Collectives as nodes])
      if (a.kind() != K::Str) return mismatch();
      out = c10::IValue(a.getStr());
      return true;
    default: error = describeArg(arg) + " cannot be given as an attribute"; return false;
  }
}

bool datumToIValue(const Datum& d, const c10::Argument& arg, c10::IValue& out, std::string& error) {
  bool optional = false;
  c10::TypePtr t = unwrapOptional(arg.real_type(), &optional);
  auto mismatch = [&] {
    error = "value " + d.repr(false) + " does not fit " + describeArg(arg);
    return false;
  };
  if (d.kind() == DKind::Null) {
    if (!optional && t->kind() != c10::TypeKind::NoneType) return mismatch();
    out = c10::IValue();
    return true;
  }
  switch (t->kind()) {
    case c10::TypeKind::TensorType:
      if (isTensorDatum(d)) {
        out = c10::IValue(tensorOf(d));
        return true;
      }
      if (d.kind() == DKind::Int || d.kind() == DKind::Float || d.kind() == DKind::Bool) {
        c10::Scalar s = d.kind() == DKind::Int     ? c10::Scalar(d.asInt())
                        : d.kind() == DKind::Float ? c10::Scalar(d.asFloat())
                                                   : c10::Scalar(d.asBool());
        out = c10::IValue(at::native::wrapped_scalar_tensor(s));
        return true;
      }
      return mismatch();
    case c10::TypeKind::IntType:
    case c10::TypeKind::SymIntType:
      if (d.kind() == DKind::Int)
        out = c10::IValue(d.asInt());
      else if (d.kind() == DKind::Bool)
        out = c10::IValue(int64_t(d.asBool()));
      else
        return mismatch();
      return true;
    case c10::TypeKind::FloatType:
    case c10::TypeKind::SymFloatType:
      if (d.kind() == DKind::Float)
        out = c10::IValue(d.asFloat());
      else if (d.kind() == DKind::Int)
        out = c10::IValue(double(d.asInt()));
      else
        return mismatch();
      return true;
    case c10::TypeKind::BoolType:
    case c10::TypeKind::SymBoolType:
      if (d.kind() != DKind::Bool) return mismatch();
      out = c10::IValue(d.asBool());
      return true;
    case c10::TypeKind::NumberType:
      if (d.kind() == DKind::Int)
        out = c10::IValue(d.asInt());
      else if (d.kind() == DKind::Float)
        out = c10::IValue(d.asFloat());
      else if (d.kind() == DKind::Bool)
        out = c10::IValue(d.asBool());
      else
        return mismatch();
      return true;
    case c10::TypeKind::StringType:
    case c10::TypeKind::ScalarTypeType:
    case c10::TypeKind::LayoutType:
    case c10::TypeKind::MemoryFormatType:
    case c10::TypeKind::DeviceObjType:
      if (d.kind() != DKind::Str || !parseEnumString(t->kind(), d.asStr(), out)) return mismatch();
      return true;
    case c10::TypeKind::ListType: {
      c10::TypePtr e = t->castRaw<c10::ListType>()->getElementType();
      bool optElem = false;
      c10::TypePtr inner = unwrapOptional(e, &optElem);
      bool seq = d.kind() == DKind::List || d.kind() == DKind::Tuple;
      if (!seq && !(d.kind() == DKind::Int && isIntKind(inner->kind()))) return mismatch();
      const std::vector<Datum>* items = nullptr;
      if (seq) items = d.kind() == DKind::List ? &d.listItems() : &d.tupleItems();
      size_t n = seq ? items->size() : repeatCount(arg);
      auto item = [&](size_t i) -> const Datum& { return seq ? (*items)[i] : d; };
      switch (inner->kind()) {
        case c10::TypeKind::TensorType:
          if (optElem)
            return buildList<std::optional<at::Tensor>>(
                n,
                [&](size_t i, std::optional<at::Tensor>& v) {
                  if (item(i).kind() == DKind::Null)
                    v = std::nullopt;
                  else if (isTensorDatum(item(i)))
                    v = tensorOf(item(i));
                  else
                    return false;
                  return true;
                },
                arg, out, error);
          return buildList<at::Tensor>(
              n,
              [&](size_t i, at::Tensor& v) {
                if (!isTensorDatum(item(i))) return false;
                v = tensorOf(item(i));
                return true;
              },
              arg, out, error);
        case c10::TypeKind::IntType:
        case c10::TypeKind::SymIntType:
          return buildList<int64_t>(
              n,
              [&](size_t i, int64_t& v) {
                if (item(i).kind() != DKind::Int) return false;
                v = item(i).asInt();
                return true;
              },
              arg, out, error);
        case c10::TypeKind::FloatType:
          return buildList<double>(
              n,
              [&](size_t i, double& v) {
                if (item(i).kind() == DKind::Float)
                  v = item(i).asFloat();
                else if (item(i).kind() == DKind::Int)
                  v = double(item(i).asInt());
                else
                  return false;
                return true;
              },
              arg, out, error);
        case c10::TypeKind::BoolType:
          return buildList<bool>(
              n,
              [&](size_t i, bool& v) {
                if (item(i).kind() != DKind::Bool) return false;
                v = item(i).asBool();
                return true;
              },
              arg, out, error);
        default:
          if (!toIValue(d, out, error)) return false;
          return true;
      }
    }
    default:
      if (!toIValue(d, out, error)) return false;
      return true;
  }
}

}  // namespace xacc::backend::aten
