// Unit tests for attributes: equality (floats bitwise: nan == nan, -0.0 != 0.0),
// hashing consistent with equality, sorted attribute dictionaries, and the text
// form parsing back to an equal attribute -- for every kind, for nested arrays
// and for a large sample of doubles (shortest round-trip formatting).
#include "xacc/ir/Attribute.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "ir_test_util.h"

using namespace xacc::ir;

namespace {

/// Parses each attribute text as the `value` of a node and returns the attrs.
std::vector<Attr> parseAttrs(const std::vector<std::string>& texts) {
  std::string src = "graph @f(%t: !token) -> () {\n";
  for (size_t i = 0; i < texts.size(); ++i)
    src += "  %" + std::to_string(i + 1) + " = io.print(%t) {value = " + texts[i] + "} : !token\n";
  src += "}\n";
  xacc::support::SourceManager sm;
  xacc::support::DiagnosticEngine diag(&sm);
  auto m = parseModule(src, "attrs.gir", diag);
  std::vector<Attr> out;
  EXPECT_TRUE(m) << diag.renderAllText();
  if (!m) return out;
  for (Node* n : *m->graphs()[0]) out.push_back(*n->attr("value"));
  return out;
}

uint64_t bitsOf(double d) {
  uint64_t b;
  std::memcpy(&b, &d, sizeof b);
  return b;
}

TEST(AttrEquality, FloatsCompareBitwise) {
  double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(Attr::real(nan), Attr::real(nan));
  EXPECT_NE(Attr::real(0.0), Attr::real(-0.0));
  EXPECT_EQ(Attr::real(1.5), Attr::real(1.5));
  EXPECT_EQ(Attr::real(nan).hash(), Attr::real(nan).hash());
}

TEST(AttrEquality, KindsNeverCompareEqual) {
  EXPECT_NE(Attr::integer(1), Attr::real(1.0));
  EXPECT_NE(Attr::integer(1), Attr::boolean(true));
  EXPECT_NE(Attr::string("x"), Attr::symbol("x"));
  EXPECT_NE(Attr::none(), Attr::integer(0));
  EXPECT_NE(Attr::array({}), Attr::none());
  EXPECT_EQ(Attr::type(Type::i64()), Attr::type(Type::i64()));
  EXPECT_NE(Attr::type(Type::i64()), Attr::type(Type::i32()));
  EXPECT_EQ(Attr::array({Attr::integer(1), Attr::array({Attr::string("a")})}),
            Attr::array({Attr::integer(1), Attr::array({Attr::string("a")})}));
  EXPECT_NE(Attr::array({Attr::integer(1)}), Attr::array({Attr::integer(1), Attr::integer(1)}));
  EXPECT_EQ(Attr::array({Attr::integer(7), Attr::string("s")}).hash(),
            Attr::array({Attr::integer(7), Attr::string("s")}).hash());
}

TEST(AttrText, EveryKindParsesBackEqual) {
  std::vector<Attr> attrs = {
      Attr::none(),
      Attr::integer(0),
      Attr::integer(-1),
      Attr::integer(std::numeric_limits<int64_t>::max()),
      Attr::integer(std::numeric_limits<int64_t>::min()),
      Attr::real(0.0),
      Attr::real(-0.0),
      Attr::real(1.0),
      Attr::real(0.1),
      Attr::real(1e300),
      Attr::real(-1e-300),
      Attr::real(5e-324),
      Attr::real(std::numeric_limits<double>::max()),
      Attr::real(std::numeric_limits<double>::infinity()),
      Attr::real(-std::numeric_limits<double>::infinity()),
      Attr::boolean(true),
      Attr::boolean(false),
      Attr::string(""),
      Attr::string("plain"),
      Attr::string(std::string("ctl \n\t\r\"\\ \x01\x1f \0 nul", 19)),
      Attr::string("utf-8 h\xc3\xa9llo \xe2\x9c\x93 and a stray byte \xff"),
      Attr::symbol("main"),
      Attr::symbol("a.b_c"),
      Attr::type(Type::tensor(DType::F32, {Dim::fixed(2), Dim::dynamic(), Dim::symbol("s")})),
      Attr::type(Type::func({Type::token()}, {Type::token(), Type::list(Type::any())})),
      Attr::array({}),
      Attr::array({Attr::integer(1), Attr::array({Attr::real(2.5), Attr::array({})}),
                   Attr::string("s"), Attr::symbol("x"), Attr::type(Type::i64()), Attr::none()}),
  };
  std::vector<std::string> texts;
  for (const Attr& a : attrs) texts.push_back(a.str());
  std::vector<Attr> back = parseAttrs(texts);
  ASSERT_EQ(back.size(), attrs.size());
  for (size_t i = 0; i < attrs.size(); ++i) {
    EXPECT_EQ(back[i], attrs[i]) << texts[i];
    EXPECT_EQ(back[i].str(), texts[i]);
  }
}

TEST(AttrText, FloatsAlwaysLookLikeFloats) {
  EXPECT_EQ(formatDouble(1.0), "1.0");
  EXPECT_EQ(formatDouble(-0.0), "-0.0");
  EXPECT_EQ(formatDouble(100.0), "100.0");
  EXPECT_EQ(formatDouble(1e300), "1e+300");
  EXPECT_EQ(formatDouble(0.1), "0.1");
  EXPECT_EQ(formatDouble(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(formatDouble(-std::numeric_limits<double>::infinity()), "-inf");
  EXPECT_EQ(formatDouble(std::numeric_limits<double>::quiet_NaN()), "nan");
}

TEST(AttrText, RandomDoublesRoundTripBitExactly) {
  std::mt19937_64 rng(20240601);
  std::vector<double> values;
  std::vector<std::string> texts;
  while (values.size() < 20000) {
    uint64_t bits = rng();
    double d;
    std::memcpy(&d, &bits, sizeof d);
    if (std::isnan(d)) continue;  // NaN payloads and signs are not kept; see below
    values.push_back(d);
    texts.push_back(formatDouble(d));
  }
  // Also "ordinary" doubles: results of decimal arithmetic.
  for (int i = -1000; i < 1000; ++i) {
    values.push_back(i / 7.0);
    texts.push_back(formatDouble(i / 7.0));
  }
  std::vector<Attr> back = parseAttrs(texts);
  ASSERT_EQ(back.size(), values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    ASSERT_EQ(back[i].kind(), Attr::Kind::Float) << texts[i];
    ASSERT_EQ(bitsOf(back[i].getFloat()), bitsOf(values[i])) << texts[i];
  }
}

TEST(AttrText, EveryNanPrintsAsNanAndParsesBackAsNan) {
  double negNan = -std::numeric_limits<double>::quiet_NaN();
  ASSERT_TRUE(std::signbit(negNan));
  EXPECT_EQ(Attr::real(negNan).str(), "nan");
  std::vector<Attr> back = parseAttrs({Attr::real(negNan).str()});
  ASSERT_EQ(back.size(), 1u);
  EXPECT_TRUE(std::isnan(back[0].getFloat()));
}

TEST(AttrDict, SortedByNameWithSetGetErase) {
  AttrDict d;
  d.set("zeta", Attr::integer(1));
  d.set("alpha", Attr::string("a"));
  d.set("mid", Attr::boolean(true));
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d.items()[0].first, "alpha");
  EXPECT_EQ(d.items()[1].first, "mid");
  EXPECT_EQ(d.items()[2].first, "zeta");
  d.set("mid", Attr::integer(5));  // replaces, does not duplicate
  EXPECT_EQ(d.size(), 3u);
  EXPECT_EQ(d.getInt("mid", 0), 5);
  EXPECT_EQ(d.getInt("alpha", -7), -7);  // wrong kind: the default
  EXPECT_EQ(d.getStr("alpha"), "a");
  EXPECT_EQ(d.getStr("nope", "dflt"), "dflt");
  EXPECT_TRUE(d.getBool("missing", true));
  EXPECT_EQ(d.get("nope"), nullptr);
  EXPECT_TRUE(d.erase("alpha"));
  EXPECT_FALSE(d.erase("alpha"));
  EXPECT_FALSE(d.has("alpha"));
  EXPECT_EQ(d.size(), 2u);
}

TEST(AttrDict, EqualityAndHashIgnoreInsertionOrder) {
  AttrDict a, b;
  a.set("x", Attr::integer(1));
  a.set("y", Attr::real(2.0));
  b.set("y", Attr::real(2.0));
  b.set("x", Attr::integer(1));
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.hash(), b.hash());
  b.set("x", Attr::integer(2));
  EXPECT_FALSE(a == b);
}

}  // namespace
