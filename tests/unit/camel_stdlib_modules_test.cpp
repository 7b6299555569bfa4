// Unit tests for the Camel standard modules of spec section 15 (math, random,
// algo, statistics, crypto, fs, json, re, sys, os, time, this, sim, para), each
// builtin called from a built GIR graph and run by ir::Interpreter: results
// against known values (SHA-256 against FIPS 180-4 and hashlib vectors, json
// round trips, strftime/strptime of fixed instants), determinism where the spec
// promises it, `infer` acceptance and rejection, and located runtime errors.
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <regex>
#include <set>

#include "camel_stdlib_test_util.h"

using namespace xacc;
using namespace xacc::camel;
using namespace xacc::camel::testing;
using ir::Datum;
using ir::Type;

namespace {

// ---- math
// -----------------------------------------------------------------------

TEST_F(StdlibTest, MathFunctions) {
  EXPECT_EQ(call1("math::abs", {iv(-3)}).asInt(), 3);
  EXPECT_EQ(call1("math::abs", {fv(-2.5)}).asFloat(), 2.5);
  EXPECT_EQ(infer("math::abs", {Type::i64()}), "i64");
  EXPECT_EQ(infer("math::abs", {Type::f64()}), "f64");
  EXPECT_EQ(failCode("math::abs", {iv(INT64_MIN)}), "E3005");
  EXPECT_EQ(call1("math::sqrt", {iv(16)}).asFloat(), 4.0);
  EXPECT_EQ(call1("math::sqrt", {fv(2.25)}).asFloat(), 1.5);
  EXPECT_EQ(call1("math::exp", {fv(0.0)}).asFloat(), 1.0);
  EXPECT_EQ(infer("math::exp", {Type::i64()}), "error: the argument must be a float, got int");
  Datum r = call1("math::round", {fv(3.7)});
  EXPECT_EQ(r.kind(), DKind::Float);
  EXPECT_EQ(repr(r), "4");
  EXPECT_EQ(call1("math::round", {fv(-2.5)}).asFloat(), -3.0);
  EXPECT_EQ(call1("math::ceil", {fv(1.2)}).asFloat(), 2.0);
  EXPECT_EQ(call1("math::floor", {fv(-1.2)}).asFloat(), -2.0);
  EXPECT_EQ(call1("math::bin", {iv(5)}).asStr(), "0b101");
  EXPECT_EQ(call1("math::bin", {iv(0)}).asStr(), "0b0");
  EXPECT_EQ(call1("math::oct", {iv(8)}).asStr(), "0o10");
  EXPECT_EQ(call1("math::hex", {iv(255)}).asStr(), "0xFF");
  EXPECT_EQ(call1("math::hex", {iv(-255)}).asStr(), "-0xFF");
  EXPECT_EQ(call1("math::hex", {iv(INT64_MIN)}).asStr(), "-0x8000000000000000");
  EXPECT_EQ(infer("math::hex", {Type::f64()}), "error: the argument must be an int, got float");
  EXPECT_EQ(infer("math::sqrt", {}), "error: takes 1 argument, got 0");
}

// ---- random
// ---------------------------------------------------------------------

TEST_F(StdlibTest, RandomIsSeededAndInRange) {
  call1("random::seed", {iv(42)});
  double a = call1("random::rand", {}).asFloat();
  int64_t k = call1("random::randint", {iv(1), iv(6)}).asInt();
  call1("random::seed", {iv(42)});
  EXPECT_EQ(call1("random::rand", {}).asFloat(), a);
  EXPECT_EQ(call1("random::randint", {iv(1), iv(6)}).asInt(), k);
  for (int i = 0; i < 200; ++i) {
    double u = call1("random::rand", {}).asFloat();
    EXPECT_TRUE(u >= 0.0 && u < 1.0);
    int64_t d = call1("random::randint", {iv(6), iv(1)}).asInt();  // swapped bounds
    EXPECT_TRUE(d >= 1 && d <= 6);
    EXPECT_TRUE(std::isfinite(call1("random::randn", {}).asFloat()));
  }
  EXPECT_EQ(call1("random::randint", {iv(5), iv(5)}).asInt(), 5);
  call1("random::randint", {iv(INT64_MIN), iv(INT64_MAX)});
  EXPECT_EQ(infer("random::rand", {}), "f64");
}

TEST_F(StdlibTest, RandomOverArrays) {
  Datum xs = ints({1, 2, 3, 4, 5});
  std::set<int64_t> pool = {1, 2, 3, 4, 5};
  EXPECT_TRUE(pool.count(call1("random::choice", {xs}).asInt()));
  EXPECT_EQ(failCode("random::choice", {lv({})}, {Type::list(Type::i64())}), "E3001");
  Datum s = call1("random::sample", {xs, iv(3)});
  std::set<int64_t> picked;
  for (const Datum& x : s.listItems()) picked.insert(x.asInt());
  EXPECT_EQ(picked.size(), 3u);
  for (int64_t v : picked) EXPECT_TRUE(pool.count(v));
  EXPECT_EQ(call1("random::sample", {xs, iv(0)}).listItems().size(), 0u);
  EXPECT_EQ(failCode("random::sample", {xs, iv(6)}), "E3005");
  EXPECT_EQ(failCode("random::sample", {xs, iv(-1)}), "E3005");
  Datum sh = call1("random::shuffle", {xs});
  EXPECT_NE(sh.object(), xs.object());
  EXPECT_EQ(repr(xs), "[1, 2, 3, 4, 5]");
  std::vector<int64_t> got;
  for (const Datum& x : sh.listItems()) got.push_back(x.asInt());
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<int64_t>{1, 2, 3, 4, 5}));
  EXPECT_EQ(infer("random::choice", {Type::list(Type::string())}), "str");
}

// ---- algo
// -----------------------------------------------------------------------

TEST_F(StdlibTest, EverySortAgreesWithStdSort) {
  std::mt19937_64 rng(7);
  std::vector<int64_t> values;
  for (int i = 0; i < 300; ++i) values.push_back(int64_t(rng() % 50) - 25);  // many duplicates
  std::vector<int64_t> expect = values;
  std::sort(expect.begin(), expect.end());
  Datum sortedExpect = ints(expect);
  for (const char* name :
       {"algo::sort", "algo::insert_sort", "algo::quick_sort", "algo::merge_sort"}) {
    Datum xs = ints(values);
    Datum r = call1(name, {xs});
    EXPECT_EQ(r.object(), xs.object()) << name;
    EXPECT_TRUE(camelEquals(xs, sortedExpect)) << name;
  }
  for (const char* name :
       {"algo::sorted", "algo::insert_sorted", "algo::quick_sorted", "algo::merge_sorted"}) {
    Datum xs = ints(values);
    Datum r = call1(name, {xs});
    EXPECT_NE(r.object(), xs.object()) << name;
    EXPECT_TRUE(camelEquals(r, sortedExpect)) << name;
    EXPECT_TRUE(camelEquals(xs, ints(values))) << name << " changed its input";
  }
  // Already sorted and reversed inputs (quicksort's worst cases without a good
  // pivot).
  std::vector<int64_t> up(5000);
  for (int i = 0; i < 5000; ++i) up[size_t(i)] = i;
  std::vector<int64_t> down(up.rbegin(), up.rend());
  EXPECT_TRUE(camelEquals(call1("algo::quick_sorted", {ints(down)}), ints(up)));
  EXPECT_TRUE(camelEquals(call1("algo::quick_sorted", {ints(up)}), ints(up)));
  EXPECT_TRUE(camelEquals(call1("algo::sorted", {ints({})}, {Type::list(Type::i64())}), ints({})));
}

TEST_F(StdlibTest, SortsFloatsAndStrings) {
  EXPECT_EQ(repr(call1("algo::sorted", {lv({fv(2.5), fv(NAN), fv(-1.0), fv(0.5)})})),
            "[-1, 0.5, 2.5, nan]");
  EXPECT_EQ(repr(call1("algo::merge_sorted", {strs({"pear", "apple", "fig", "Apple"})})),
            "[Apple, apple, fig, pear]");
  EXPECT_EQ(repr(call1("algo::merge_sorted_arrays", {ints({1, 4, 9}), ints({2, 3, 10, 11})})),
            "[1, 2, 3, 4, 9, 10, 11]");
  EXPECT_EQ(infer("algo::sort", {Type::list(Type::boolean())}),
            "error: the array must be an int[], float[] or string[], got bool[]");
  EXPECT_EQ(infer("algo::merge_sorted_arrays", {Type::list(Type::i64()), Type::list(Type::f64())}),
            "error: element types differ: int[] and float[]");
  // Mixed kinds can only arrive through `any`; they are a located error, not a
  // crash.
  Type anyList = Type::list(Type::any());
  EXPECT_EQ(failCode("algo::sort", {lv({iv(1), sv("a")})}, {anyList}), "E3010");
  EXPECT_EQ(failCode("algo::merge_sorted_arrays", {lv({sv("a")}), lv({iv(1)})}, {anyList, anyList}),
            "E3010");
}

// ---- statistics
// -----------------------------------------------------------------

TEST_F(StdlibTest, MeanAndSampleStdev) {
  EXPECT_EQ(call1("statistics::mean", {ints({1, 2, 3, 4})}).asFloat(), 2.5);
  EXPECT_EQ(call1("statistics::mean", {lv({fv(0.5), fv(1.5)})}).asFloat(), 1.0);
  EXPECT_DOUBLE_EQ(call1("statistics::stdev", {ints({2, 4, 4, 4, 5, 5, 7, 9})}).asFloat(),
                   2.138089935299395);
  EXPECT_EQ(failCode("statistics::mean", {lv({})}, {Type::list(Type::f64())}), "E3001");
  EXPECT_EQ(failCode("statistics::stdev", {ints({1})}), "E3005");
  EXPECT_EQ(infer("statistics::mean", {Type::list(Type::string())}),
            "error: the argument must be an int[] or float[], got string[]");
}

// ---- crypto
// ---------------------------------------------------------------------

TEST_F(StdlibTest, Sha256KnownVectors) {
  auto sha = [&](std::string s) { return call1("crypto::sha256", {sv(std::move(s))}).asStr(); };
  // FIPS 180-4 / NIST examples.
  EXPECT_EQ(sha(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  // Padding boundaries (one or two final blocks), against Python's hashlib.
  EXPECT_EQ(sha(std::string(55, 'a')),
            "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
  EXPECT_EQ(sha(std::string(56, 'a')),
            "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
  EXPECT_EQ(sha(std::string(63, 'a')),
            "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34");
  EXPECT_EQ(sha(std::string(64, 'a')),
            "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
  EXPECT_EQ(sha(std::string(65, 'a')),
            "635361c48bb9eab14198e76ea8ab7f1a41685d6ad62aa9146d301d4f17eb0ae0");
  EXPECT_EQ(sha(std::string(119, 'a')),
            "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb");
  EXPECT_EQ(sha(std::string(120, 'a')),
            "2f3d335432c70b580af0e8e1b3674a7c020d683aa5f73aaaedfdc55af904c21c");
  EXPECT_EQ(call1("crypto::sha256_rounds", {sv("abc"), iv(0)}).asStr(), "abc");
  EXPECT_EQ(call1("crypto::sha256_rounds", {sv("abc"), iv(1)}).asStr(), sha("abc"));
  EXPECT_EQ(call1("crypto::sha256_rounds", {sv("abc"), iv(2)}).asStr(),
            "dfe7a23fefeea519e9bbfdd1a6be94c4b2e4529dd6b7cbea83f9959c2621b13c");
  EXPECT_EQ(failCode("crypto::sha256_rounds", {sv("abc"), iv(-1)}), "E3005");
}

// ---- fs
// -------------------------------------------------------------------------

TEST_F(StdlibTest, FileSystem) {
  namespace fs = std::filesystem;
  fs::path dir = fs::path(::testing::TempDir()) / ("camel_stdlib_fs_" + std::to_string(getpid()));
  fs::remove_all(dir);
  std::string d = dir.string(), file = (dir / "a.txt").string();
  EXPECT_FALSE(call1("fs::exists", {sv(d)}).asBool());
  EXPECT_TRUE(call1("fs::mkdir", {sv(d)}).asBool());
  EXPECT_TRUE(call1("fs::mkdir", {sv(d)}).asBool());                            // exists already
  EXPECT_FALSE(call1("fs::mkdir", {sv((dir / "x" / "y").string())}).asBool());  // missing parent
  EXPECT_TRUE(call1("fs::mkdirs", {sv((dir / "x" / "y").string())}).asBool());
  EXPECT_TRUE(call1("fs::is_dir", {sv((dir / "x" / "y").string())}).asBool());
  EXPECT_EQ(call1("fs::write_text", {sv(file), sv("hello\nworld")}).kind(), DKind::Null);
  EXPECT_TRUE(call1("fs::exists", {sv(file)}).asBool());
  EXPECT_TRUE(call1("fs::is_file", {sv(file)}).asBool());
  EXPECT_FALSE(call1("fs::is_dir", {sv(file)}).asBool());
  EXPECT_FALSE(call1("fs::is_file", {sv(d)}).asBool());
  EXPECT_EQ(call1("fs::read_text", {sv(file)}).asStr(), "hello\nworld");
  EXPECT_EQ(call1("fs::file_size", {sv(file)}).asInt(), 11);
  EXPECT_EQ(call1("fs::read_chunk", {sv(file), iv(2), iv(3)}).asStr(), "llo");
  EXPECT_EQ(call1("fs::read_chunk", {sv(file), iv(9), iv(100)}).asStr(), "ld");
  EXPECT_EQ(call1("fs::read_chunk", {sv(file), iv(50), iv(3)}).asStr(), "");
  EXPECT_EQ(failCode("fs::read_chunk", {sv(file), iv(-1), iv(3)}), "E3005");
  call1("fs::write_text", {sv(file), sv("")});
  EXPECT_EQ(call1("fs::read_text", {sv(file)}).asStr(), "");
  EXPECT_EQ(failCode("fs::read_text", {sv((dir / "missing").string())}), "E3006");
  EXPECT_NE(lastMessage.find("missing"), std::string::npos);
  EXPECT_EQ(failCode("fs::read_text", {sv(d)}), "E3006");
  EXPECT_EQ(failCode("fs::file_size", {sv((dir / "missing").string())}), "E3006");
  EXPECT_EQ(failCode("fs::write_text", {sv((dir / "no" / "such" / "f").string()), sv("x")}),
            "E3006");
  EXPECT_EQ(infer("fs::read_chunk", {Type::string(), Type::i64(), Type::string()}),
            "error: argument 3 must be an int, got string");
  fs::remove_all(dir);
}

// ---- json
// -----------------------------------------------------------------------

TEST_F(StdlibTest, JsonEncode) {
  Datum v =
      Datum::structure({"name", "tags", "ok", "none", "pos"},
                       {sv("bolt"), strs({"a", "b"}), bv(true), Datum(), tv({iv(1), fv(2.5)})});
  EXPECT_EQ(call1("json::encode", {v}).asStr(),
            R"({"name":"bolt","none":null,"ok":true,"pos":[1,2.5],"tags":["a","b"]})");
  EXPECT_EQ(call1("json::encode", {ints({1, 2}), iv(2)}).asStr(), "[\n  1,\n  2\n]");
  EXPECT_EQ(call1("json::encode", {sv("q\"\n")}).asStr(), R"("q\"\n")");
  EXPECT_EQ(call1("json::encode", {fv(1.0)}).asStr(), "1.0");
  EXPECT_EQ(call1("json::encode", {Datum::structure({}, {})}).asStr(), "{}");
  Datum f = lambda({Type::i64()}, [](ir::Builder&, auto ps) { return ps; });
  EXPECT_EQ(failCode("json::encode", {lv({f})}, {Type::any()}), "E3007");
  EXPECT_EQ(failCode("json::encode", {iv(1), iv(-2)}), "E3005");
  Datum self = lv({});
  self.listItems().push_back(self);  // an array that contains itself
  EXPECT_EQ(failCode("json::encode", {self}, {Type::any()}), "E3007");
  self.listItems().clear();  // break the cycle
  EXPECT_EQ(infer("json::encode", {Type::any(), Type::string()}),
            "error: the indent must be an int, got string");
  EXPECT_EQ(infer("json::encode", {Type::i64(), Type::i64(), Type::i64()}),
            "error: takes 1 or 2 arguments, got 3");
}

TEST_F(StdlibTest, JsonDecodeAndRoundTrips) {
  Datum d = call1("json::decode", {sv(R"({"b": [1, 2.5, "x", null, false], "a": {"n": -3}})")});
  EXPECT_EQ(repr(d), "{ a: { n: -3 }, b: [1, 2.5, x, null, false] }");
  EXPECT_EQ(d.structFields()[1].listItems()[0].kind(), DKind::Int);
  EXPECT_EQ(d.structFields()[1].listItems()[1].kind(), DKind::Float);
  EXPECT_EQ(infer("json::decode", {Type::string()}), "any");
  Datum big = call1("json::decode", {sv("[9223372036854775807, 18446744073709551615]")});
  EXPECT_EQ(big.listItems()[0].kind(), DKind::Int);
  EXPECT_EQ(big.listItems()[1].kind(), DKind::Float);
  for (const char* text : {R"({"a":[1,2,{"b":"c"}],"d":-1.5,"e":true,"f":null})", "[]",
                           "\"\xc3\xa9\"", "[[[]]]", "0"}) {
    Datum v = call1("json::decode", {sv(text)});
    EXPECT_EQ(call1("json::encode", {v}, {Type::any()}).asStr(), text);
  }
  // Value -> text -> value.
  Datum v = lv({Datum::structure({"x", "y"}, {iv(1), strs({"p"})}), fv(0.1)});
  Datum back = call1("json::decode", {call1("json::encode", {v})});
  EXPECT_TRUE(camelEquals(back, v)) << repr(back);
  EXPECT_EQ(failCode("json::decode", {sv("{bad json")}), "E3007");
  EXPECT_EQ(failCode("json::decode", {sv("[1e400]")}),
            "E3007");  // out of double range
  EXPECT_EQ(failCode("json::decode", {sv(std::string(5000, '[') + std::string(5000, ']'))}),
            "E3007");
}

// ---- re
// -------------------------------------------------------------------------

TEST_F(StdlibTest, RegexTest) {
  EXPECT_TRUE(call1("re::test", {sv("^a.c$"), sv("abc")}).asBool());
  EXPECT_TRUE(call1("re::test", {sv("b+"), sv("aabbbcc")}).asBool());  // anywhere
  EXPECT_FALSE(call1("re::test", {sv("^b"), sv("abc")}).asBool());
  EXPECT_TRUE(call1("re::test", {sv(R"(\d{3}-\d{4})"), sv("call 555-1234 now")}).asBool());
  EXPECT_TRUE(call1("re::test", {sv("(?=x)x"), sv("x")}).asBool());  // ECMAScript lookahead
  // Backreferences fall back to std::regex on short texts only.
  EXPECT_TRUE(call1("re::test", {sv(R"((a+)b\1)"), sv("xaabaa")}).asBool());
  EXPECT_FALSE(call1("re::test", {sv(R"((a+)b\1)"), sv("xaabc")}).asBool());
  EXPECT_EQ(failCode("re::test", {sv(R"((a)\1)"), sv(std::string(5000, 'a'))}), "E3008");
  EXPECT_EQ(failCode("re::test", {sv("("), sv("x")}), "E3008");
  EXPECT_EQ(failCode("re::test", {sv("a**"), sv("x")}), "E3008");
  EXPECT_EQ(failCode("re::test", {sv("x{3,1}"), sv("x")}), "E3008");
  EXPECT_EQ(failCode("re::test", {sv("a{2}{3}"), sv("x")}), "E3008");
  EXPECT_EQ(failCode("re::test", {sv("{2}"), sv("x")}), "E3008");
  EXPECT_EQ(failCode("re::test", {sv("(?<n>x)"), sv("x")}), "E3008");
  EXPECT_EQ(failCode("re::test", {sv(std::string(300, '(') + std::string(300, ')')), sv("x")}),
            "E3008");
  EXPECT_EQ(failCode("re::test", {sv("(a{1000}){1000}"), sv("x")}), "E3008");
  EXPECT_EQ(failCode("re::test", {sv("[a-"), sv("x")}), "E3008");
  EXPECT_EQ(infer("re::test", {Type::string()}), "error: takes 2 arguments, got 1");
}

TEST_F(StdlibTest, RegexAgreesWithStdRegexAndStaysLinear) {
  // Differential check against std::regex (ECMAScript) on short texts.
  const char* patterns[] = {"a",
                            "^a",
                            "a$",
                            "^$",
                            "a|b|cd",
                            "(a|ab)(c|bcd)(d*)",
                            "a*?b",
                            "a+b+",
                            "colou?r",
                            "x{2}",
                            "x{2,}",
                            "x{1,3}y",
                            "[abc]+",
                            "[^abc]",
                            "[a-f0-9]{2}",
                            "[-a]",
                            "[a-]",
                            "[\\]]",
                            "[\\d.]+",
                            "\\d+\\.\\d*",
                            "\\w+@\\w+",
                            "\\s",
                            "\\S+",
                            "\\bfoo\\b",
                            "\\Boo",
                            ".",
                            "a.c",
                            "(?:ab)+$",
                            "(?=.*\\d)(?=.*[a-z]).{6,}",
                            "foo(?!bar)",
                            "(a*)*b",
                            "(a|b)*c",
                            "\\x41",
                            "\\u0042",
                            "\\t",
                            "\\.",
                            "a{,2}",
                            "{",
                            "}",
                            "]",
                            "a\\/b",
                            "(|a)b",
                            "[\\b]"};
  const char* texts[] = {"",       "a",   "b",    "abc",  "abcd",      "aaab",    "color",
                         "colour", "xx",  "xxxy", "ab12", "a1b2c3d4",  "foo bar", "foobar",
                         "foo",    "zoo", "a\nc", "x.y",  "user@host", " tab\t",  "AB",
                         "a{,2}",  "{}",  "]",    "a/b",  "\n",        "\b"};
  int compared = 0;
  for (const char* p : patterns) {
    // Annex B literals (`{`, `a{,2}`) are accepted here although std::regex
    // rejects them.
    std::regex re;
    try {
      re.assign(p, std::regex::ECMAScript);
    } catch (const std::regex_error&) {
      EXPECT_EQ(call1("re::test", {sv(p), sv(p)}).asBool(), true) << p;
      continue;
    }
    ++compared;
    for (const char* t : texts) {
      bool expect = std::regex_search(std::string(t), re);
      EXPECT_EQ(call1("re::test", {sv(p), sv(t)}).asBool(), expect)
          << "pattern " << p << " text " << t;
    }
  }
  EXPECT_GE(compared, 40);
  // \cJ is control-J (a newline) in ECMAScript; libstdc++ disagrees, so it is
  // checked apart.
  EXPECT_TRUE(call1("re::test", {sv("a\\cJc"), sv("a\nc")}).asBool());
  // std::regex recurses per character and crashes on long texts; this must not.
  std::string big(1000000, 'a');
  EXPECT_FALSE(call1("re::test", {sv("(a|b)*c"), sv(big)}).asBool());
  EXPECT_TRUE(call1("re::test", {sv("^a*$"), sv(big)}).asBool());
  EXPECT_TRUE(call1("re::test", {sv("(?=a{3})a+$"), sv(big)}).asBool());
  big.back() = 'c';
  EXPECT_TRUE(call1("re::test", {sv("(a|b)*c"), sv(big)}).asBool());
}

// ---- sys, os
// --------------------------------------------------------------------

TEST_F(StdlibTest, SysAndOs) {
  setenv("CAMEL_STDLIB_TEST_VAR", "v=1", 1);
  EXPECT_EQ(call1("sys::get_env", {sv("CAMEL_STDLIB_TEST_VAR")}).asStr(), "v=1");
  unsetenv("CAMEL_STDLIB_TEST_VAR");
  EXPECT_EQ(call1("sys::get_env", {sv("CAMEL_STDLIB_TEST_VAR")}).asStr(), "");
  EXPECT_EQ(call1("sys::get_cwd", {}).asStr(), std::filesystem::current_path().string());
  std::string user = call1("os::whoami", {}).asStr();
  if (struct passwd* pw = getpwuid(geteuid())) {
    EXPECT_EQ(user, pw->pw_name);
  }
  EXPECT_GE(call1("os::cpu_count", {}).asInt(), 1);
  // Switching raw mode on and off restores the terminal (a no-op without one).
  EXPECT_EQ(call1("os::set_terminal_raw_mode", {bv(true)}).kind(), DKind::Null);
  EXPECT_EQ(call1("os::set_terminal_raw_mode", {bv(false)}).kind(), DKind::Null);
  EXPECT_EQ(infer("os::set_terminal_raw_mode", {Type::i64()}),
            "error: the argument must be a bool, got int");
  EXPECT_EQ(infer("sys::get_cwd", {}), "str");
}

// ---- time
// -----------------------------------------------------------------------

TEST_F(StdlibTest, TimeNowStrftimeStrptime) {
  double before = double(std::time(nullptr));
  double now = call1("time::now", {}).asFloat();
  EXPECT_GE(now, before - 1);
  EXPECT_LE(now, before + 5);
  EXPECT_EQ(call1("time::strftime", {fv(0.0), sv("%Y-%m-%d %H:%M:%S")}).asStr(),
            "1970-01-01 00:00:00");
  EXPECT_EQ(call1("time::strftime", {fv(1700000000.75), sv("%Y-%m-%d %H:%M:%S")}).asStr(),
            "2023-11-14 22:13:20");
  EXPECT_EQ(call1("time::strftime", {fv(0.0), sv("")}).asStr(), "");
  EXPECT_EQ(failCode("time::strftime", {fv(INFINITY), sv("%Y")}), "E3005");
  EXPECT_EQ(call1("time::strptime", {sv("%Y-%m-%d %H:%M:%S"), sv("2023-11-14 22:13:20")}).asFloat(),
            1700000000.0);
  EXPECT_EQ(call1("time::strptime", {sv("%Y-%m-%d"), sv("1970-01-02")}).asFloat(), 86400.0);
  EXPECT_EQ(failCode("time::strptime", {sv("%Y-%m-%d"), sv("not a date")}), "E3009");
  EXPECT_EQ(failCode("time::strptime", {sv("%Y"), sv("2023 trailing")}), "E3009");
  EXPECT_EQ(infer("time::strftime", {Type::i64(), Type::string()}),
            "error: the timestamp must be a float, got int");
}

// ---- this, sim, para
// ------------------------------------------------------------

TEST_F(StdlibTest, Zen) {
  std::string zen = call1("this::zen", {}).asStr();
  EXPECT_EQ(zen.rfind("\nThe Zen of Camel\n\n1. Let the graph speak.\n    - "
                      "All computation is a graph of intent.\n",
                      0),
            0u);
  EXPECT_NE(zen.find("\n8. Let compilers bear the burden.\n"), std::string::npos);
  EXPECT_EQ(zen.back(), '\n');
  size_t explanations = 0;
  for (size_t at = zen.find("\n    - "); at != std::string::npos; at = zen.find("\n    - ", at + 1))
    ++explanations;
  EXPECT_EQ(explanations, 8u);
}

TEST_F(StdlibTest, SimKernelsAreDeterministicPerSeed) {
  int64_t h1 = call1("sim::pi_hits", {iv(200000), iv(1)}).asInt();
  EXPECT_EQ(call1("sim::pi_hits", {iv(200000), iv(1)}).asInt(), h1);
  EXPECT_NEAR(4.0 * double(h1) / 200000.0, M_PI, 0.02);
  EXPECT_EQ(call1("sim::pi_hits", {iv(0), iv(1)}).asInt(), 0);
  EXPECT_EQ(failCode("sim::pi_hits", {iv(-1), iv(1)}), "E3005");
  double p1 = call1("sim::asian_call_price", {iv(20000), iv(12), iv(7)}).asFloat();
  EXPECT_EQ(call1("sim::asian_call_price", {iv(20000), iv(12), iv(7)}).asFloat(), p1);
  EXPECT_NE(call1("sim::asian_call_price", {iv(20000), iv(12), iv(8)}).asFloat(), p1);
  // The monthly-averaged Asian call on these parameters is worth about 5.6-5.9.
  EXPECT_GT(p1, 5.0);
  EXPECT_LT(p1, 6.5);
  EXPECT_EQ(failCode("sim::asian_call_price", {iv(10), iv(0), iv(1)}), "E3005");
  EXPECT_TRUE(ir::BuiltinRegistry::get().lookup("sim::pi_hits")->effectful);  // never folded
}

TEST_F(StdlibTest, ParaSequentialForms) {
  Datum add = lambda({Type::f64(), Type::i64()}, [](ir::Builder& b, auto ps) {
    ir::Value* x = b.value(ir::CoreOp::Cast, {ps[1]}, {}, {Type::f64()});
    return std::vector<ir::Value*>{b.value(ir::CoreOp::Add, {ps[0], x})};
  });
  EXPECT_EQ(call1("para::unordered_reduce", {add, fv(0.5), ints({1, 2, 3})}).asFloat(), 6.5);
  EXPECT_EQ(infer("para::unordered_reduce", {typeOf(add), Type::f64(), Type::list(Type::i64())}),
            "f64");
  Datum show = lambda({Type::token(), Type::i64()}, [](ir::Builder& b, auto ps) {
    ir::Node* n = b.create("func.builtin_effect", {ps[0], ps[1]},
                           ir::attrs({{"name", ir::Attr::string("print")}}));
    return std::vector<ir::Value*>{n->result(0)};
  });
  call1("para::unordered_foreach", {show, ints({1, 2, 3})});
  EXPECT_EQ(out, "123");
}

}  // namespace
