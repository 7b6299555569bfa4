// A minimal protobuf wire-format writer (varints, length-delimited fields,
// packed repeated int64, fixed32 floats): enough to serialise the ONNX
// messages OnnxExport.cpp builds. Field numbers are those of onnx.proto.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace xacc::onnx::pb {

class Message {
public:
  void varintField(int field, uint64_t v) {
    tag(field, 0);
    varint(v);
  }
  void int64Field(int field, int64_t v) { varintField(field, uint64_t(v)); }
  void bytesField(int field, std::string_view s) {
    tag(field, 2);
    varint(s.size());
    buf_.append(s);
  }
  void messageField(int field, const Message& m) { bytesField(field, m.buf_); }
  void floatField(int field, float f) {
    tag(field, 5);
    char b[4];
    std::memcpy(b, &f, 4);  // little-endian hosts only (x86-64, aarch64)
    buf_.append(b, 4);
  }
  void packedInt64Field(int field, const std::vector<int64_t>& vs) {
    Message inner;
    for (int64_t v : vs) inner.varint(uint64_t(v));
    bytesField(field, inner.buf_);
  }
  const std::string& bytes() const { return buf_; }

private:
  void tag(int field, int wire) { varint((uint64_t(field) << 3) | uint64_t(wire)); }
  void varint(uint64_t v) {
    while (v >= 0x80) {
      buf_.push_back(char((v & 0x7f) | 0x80));
      v >>= 7;
    }
    buf_.push_back(char(v));
  }
  std::string buf_;
};

}  // namespace xacc::onnx::pb
