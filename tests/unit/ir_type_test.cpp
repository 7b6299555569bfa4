// Unit tests for GIR types: interning (equal structure means the same storage
// pointer, so == and hashing are pointer operations), canonical text, accessors,
// typeCompatible, and parseType on the text forms and on errors.
#include "xacc/ir/Type.h"

#include <gtest/gtest.h>

#include <unordered_set>

#include "xacc/ir/Parser.h"

using namespace xacc::ir;

namespace {

TEST(TypeInterning, SameStructureSameStorage) {
  EXPECT_EQ(Type::i64().storage(), Type::i64().storage());
  EXPECT_EQ(Type::list(Type::i64()), Type::list(Type::i64()));
  EXPECT_EQ(Type::list(Type::i64()).storage(), Type::list(Type::i64()).storage());
  EXPECT_EQ(Type::tuple({Type::i64(), Type::string()}), Type::tuple({Type::i64(), Type::string()}));
  EXPECT_EQ(Type::structure({{"x", Type::f64()}}), Type::structure({{"x", Type::f64()}}));
  EXPECT_EQ(Type::func({Type::i64()}, {Type::boolean()}), Type::func({Type::i64()}, {Type::boolean()}));
  EXPECT_EQ(Type::tensor(DType::F32, {Dim::fixed(2), Dim::dynamic(), Dim::symbol("s0")}),
            Type::tensor(DType::F32, {Dim::fixed(2), Dim::dynamic(), Dim::symbol("s0")}));
  EXPECT_EQ(Type::unrankedTensor(DType::I64, "cuda"), Type::unrankedTensor(DType::I64, "cuda"));
}

TEST(TypeInterning, DifferentStructureDifferentType) {
  EXPECT_NE(Type::i64(), Type::i32());
  EXPECT_NE(Type::f64(), Type::f32());
  EXPECT_NE(Type::list(Type::i64()), Type::list(Type::i32()));
  EXPECT_NE(Type::tuple({Type::i64()}), Type::tuple({Type::i64(), Type::i64()}));
  EXPECT_NE(Type::tuple({}), Type::tuple({Type::i64()}));
  // Field names are part of a struct type; so is their order.
  EXPECT_NE(Type::structure({{"x", Type::f64()}}), Type::structure({{"y", Type::f64()}}));
  EXPECT_NE(Type::structure({{"x", Type::i64()}, {"y", Type::i64()}}),
            Type::structure({{"y", Type::i64()}, {"x", Type::i64()}}));
  // A function's results are part of its type.
  EXPECT_NE(Type::func({Type::i64()}, {}), Type::func({Type::i64()}, {Type::i64()}));
  EXPECT_NE(Type::func({}, {Type::i64(), Type::i64()}), Type::func({}, {Type::tuple({Type::i64(), Type::i64()})}));
  // Tensor dims: static vs anonymous vs named symbols; dtype; device; rank.
  EXPECT_NE(Type::tensor(DType::F32, {Dim::fixed(2)}), Type::tensor(DType::F32, {Dim::dynamic()}));
  EXPECT_NE(Type::tensor(DType::F32, {Dim::symbol("a")}), Type::tensor(DType::F32, {Dim::symbol("b")}));
  EXPECT_NE(Type::tensor(DType::F32, {Dim::symbol("a")}), Type::tensor(DType::F32, {Dim::dynamic()}));
  EXPECT_NE(Type::tensor(DType::F32, {}), Type::tensor(DType::F64, {}));
  EXPECT_NE(Type::tensor(DType::F32, {}, "cpu"), Type::tensor(DType::F32, {}, "cuda"));
  EXPECT_NE(Type::tensor(DType::F32, {}), Type::unrankedTensor(DType::F32));
  EXPECT_TRUE(Type().isNull());
  EXPECT_NE(Type(), Type::any());
}

TEST(TypeInterning, HashFollowsEquality) {
  std::unordered_set<Type> set;
  set.insert(Type::list(Type::string()));
  set.insert(Type::list(Type::string()));
  set.insert(Type::list(Type::pyobj()));
  EXPECT_EQ(set.size(), 2u);
}

TEST(TypeText, CanonicalSpelling) {
  EXPECT_EQ(Type::i32().str(), "i32");
  EXPECT_EQ(Type::token().str(), "!token");
  EXPECT_EQ(Type::null().str(), "null");
  EXPECT_EQ(Type::tuple({}).str(), "tuple<>");
  EXPECT_EQ(Type::structure({}).str(), "struct<{}>");
  EXPECT_EQ(Type::structure({{"a", Type::i64()}, {"b", Type::list(Type::any())}}).str(),
            "struct<{a: i64, b: list<any>}>");
  EXPECT_EQ(Type::func({}, {}).str(), "func<() -> ()>");
  EXPECT_EQ(Type::func({Type::i64(), Type::string()}, {Type::boolean()}).str(),
            "func<(i64, str) -> bool>");
  EXPECT_EQ(Type::func({}, {Type::i64(), Type::f64()}).str(), "func<() -> (i64, f64)>");
  EXPECT_EQ(Type::tensor(DType::BF16, {Dim::fixed(2), Dim::dynamic(), Dim::symbol("n")}, "cuda").str(),
            "tensor<bf16, [2, ?, n], cuda>");
  EXPECT_EQ(Type::tensor(DType::F64, {}).str(), "tensor<f64, [], cpu>");
  EXPECT_EQ(Type::unrankedTensor(DType::C128).str(), "tensor<c128, *, cpu>");
  EXPECT_EQ(Type().str(), "<null-type>");
}

TEST(TypeAccessors, CompositesExposeTheirParts) {
  Type s = Type::structure({{"x", Type::f64()}, {"tag", Type::string()}});
  EXPECT_EQ(s.kind(), TypeKind::Struct);
  EXPECT_EQ(s.fieldIndex("tag"), 1);
  EXPECT_EQ(s.fieldIndex("nope"), -1);
  EXPECT_EQ(s.elements()[0], Type::f64());
  EXPECT_EQ(s.fieldNames()[1], "tag");
  EXPECT_EQ(Type::list(Type::boolean()).elementType(), Type::boolean());
  Type f = Type::func({Type::i64()}, {Type::string(), Type::token()});
  EXPECT_EQ(f.elements().size(), 1u);
  EXPECT_EQ(f.funcResults()[1], Type::token());
  EXPECT_EQ(Type::i32().bitWidth(), 32u);
  EXPECT_EQ(Type::f64().bitWidth(), 64u);
  EXPECT_TRUE(Type::i32().isInt());
  EXPECT_TRUE(Type::f32().isNumeric());
  EXPECT_FALSE(Type::boolean().isNumeric());
  Type t = Type::tensor(DType::I8, {Dim::fixed(2), Dim::fixed(3)}, "meta");
  EXPECT_TRUE(t.isTensor());
  EXPECT_EQ(t.dtype(), DType::I8);
  EXPECT_TRUE(t.ranked());
  EXPECT_EQ(t.device(), "meta");
  EXPECT_EQ(t.staticNumel(), 6);
  EXPECT_EQ(Type::tensor(DType::F32, {}).staticNumel(), 1);
  EXPECT_EQ(Type::tensor(DType::F32, {Dim::fixed(2), Dim::dynamic()}).staticNumel(), -1);
  EXPECT_EQ(Type::unrankedTensor(DType::F32).staticNumel(), -1);
}

TEST(TypeCompatible, ExactAnyAndStructural) {
  EXPECT_TRUE(typeCompatible(Type::i64(), Type::i64()));
  EXPECT_FALSE(typeCompatible(Type::i64(), Type::i32()));
  EXPECT_FALSE(typeCompatible(Type::i64(), Type::f64()));
  // `any` on either side.
  EXPECT_TRUE(typeCompatible(Type::any(), Type::string()));
  EXPECT_TRUE(typeCompatible(Type::string(), Type::any()));
  EXPECT_TRUE(typeCompatible(Type::any(), Type::token()));
  // ... and nested inside composites.
  EXPECT_TRUE(typeCompatible(Type::list(Type::any()), Type::list(Type::i64())));
  EXPECT_TRUE(typeCompatible(Type::tuple({Type::i64(), Type::any()}), Type::tuple({Type::i64(), Type::string()})));
  EXPECT_FALSE(typeCompatible(Type::tuple({Type::i64()}), Type::tuple({Type::i64(), Type::i64()})));
  EXPECT_FALSE(typeCompatible(Type::list(Type::i64()), Type::tuple({Type::i64()})));
  EXPECT_TRUE(typeCompatible(Type::func({Type::any()}, {Type::i64()}), Type::func({Type::i64()}, {Type::any()})));
  EXPECT_FALSE(typeCompatible(Type::func({Type::i64()}, {}), Type::func({Type::i64()}, {Type::i64()})));
  EXPECT_TRUE(typeCompatible(Type::structure({{"x", Type::any()}}), Type::structure({{"x", Type::i64()}})));
  EXPECT_FALSE(typeCompatible(Type::structure({{"x", Type::i64()}}), Type::structure({{"y", Type::i64()}})));
  // A null type is compatible with nothing but itself.
  EXPECT_FALSE(typeCompatible(Type(), Type::i64()));
  EXPECT_FALSE(typeCompatible(Type::i64(), Type()));
}

TEST(TypeCompatible, TensorsAgreeWhereBothDimsAreStatic) {
  Type a = Type::tensor(DType::F32, {Dim::fixed(2), Dim::fixed(3)});
  EXPECT_TRUE(typeCompatible(a, Type::tensor(DType::F32, {Dim::fixed(2), Dim::dynamic()})));
  EXPECT_TRUE(typeCompatible(Type::tensor(DType::F32, {Dim::symbol("n"), Dim::fixed(3)}), a));
  EXPECT_FALSE(typeCompatible(a, Type::tensor(DType::F32, {Dim::fixed(2), Dim::fixed(4)})));
  EXPECT_FALSE(typeCompatible(a, Type::tensor(DType::F32, {Dim::fixed(2)})));
  EXPECT_FALSE(typeCompatible(a, Type::tensor(DType::F64, {Dim::fixed(2), Dim::fixed(3)})));
  EXPECT_FALSE(typeCompatible(a, Type::tensor(DType::F32, {Dim::fixed(2), Dim::fixed(3)}, "cuda")));
  // Unranked matches any rank of the same dtype and device.
  EXPECT_TRUE(typeCompatible(Type::unrankedTensor(DType::F32), a));
  EXPECT_TRUE(typeCompatible(a, Type::unrankedTensor(DType::F32)));
  EXPECT_FALSE(typeCompatible(Type::unrankedTensor(DType::I64), a));
}

TEST(ParseType, EveryFormRoundTrips) {
  const char* forms[] = {
      "i32", "i64", "f32", "f64", "bool", "str", "null", "any", "pyobj", "!token",
      "list<i64>", "list<list<str>>", "tuple<>", "tuple<i64, str, tuple<>>",
      "struct<{}>", "struct<{x: f64, inner: struct<{v: list<i32>}>}>",
      "func<() -> ()>", "func<(i64) -> i64>", "func<(i64, str) -> (bool, f64)>",
      "func<(func<(i64) -> i64>) -> func<() -> list<i64>>>",
      "tensor<f32, [2, 3], cpu>", "tensor<bf16, [s0, ?, 8], cuda>", "tensor<f64, [], cpu>",
      "tensor<i64, *, meta>", "tensor<c64, [0], cpu>",
  };
  for (const char* text : forms) {
    std::string err;
    Type t = parseType(text, &err);
    ASSERT_TRUE(t) << text << ": " << err;
    EXPECT_EQ(t.str(), text);
    EXPECT_EQ(parseType(t.str()), t) << text;
  }
  // Spacing is normalised; a single parenthesised func result is the bare form.
  EXPECT_EQ(parseType("tuple< i64 ,str >"), Type::tuple({Type::i64(), Type::string()}));
  EXPECT_EQ(parseType("func<(i64) -> (i64)>"), Type::func({Type::i64()}, {Type::i64()}));
}

TEST(ParseType, ErrorsAreReportedNotThrown) {
  const char* bad[] = {"", "i128", "list<", "list<>", "tuple<i64", "struct<{x i64}>",
                       "struct<{x: i64, x: i64}>", "tensor<f8, [1], cpu>", "tensor<f32, [-1], cpu>",
                       "tensor<f32, [1]>", "func<(i64)>", "!tok", "i64 i64", "list<i64>>", "%x",
                       "\"str\""};
  for (const char* text : bad) {
    std::string err;
    Type t = parseType(text, &err);
    EXPECT_FALSE(t) << "accepted: " << text;
    EXPECT_FALSE(err.empty()) << "no message for: " << text;
  }
}

TEST(ParseType, DeepNestingIsAnErrorNotAStackOverflow) {
  std::string deep;
  for (int i = 0; i < 100000; ++i) deep += "list<";
  deep += "i64";
  for (int i = 0; i < 100000; ++i) deep += ">";
  std::string err;
  EXPECT_FALSE(parseType(deep, &err));
  EXPECT_NE(err.find("nested too deeply"), std::string::npos) << err;
  // Moderate nesting is fine.
  std::string ok;
  for (int i = 0; i < 50; ++i) ok += "list<";
  ok += "i64";
  for (int i = 0; i < 50; ++i) ok += ">";
  EXPECT_EQ(parseType(ok).str(), ok);
}

}  // namespace
