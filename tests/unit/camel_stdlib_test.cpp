// Unit tests for the Camel standard library's global built-ins (spec 7.3, 14)
// and its overload table: each builtin is called from a built GIR graph through
// func.builtin / func.builtin_effect and run by ir::Interpreter (one test also
// runs through runtime::Runtime, whose apply runs closures on its own engine);
// printed output, results, result types, `infer` acceptance and rejection, and
// located runtime errors with their E3xxx codes are checked. Module functions
// are tested in camel_stdlib_modules_test.cpp.
#include <unistd.h>

#include <cmath>
#include <set>

#include "camel_stdlib_test_util.h"
#include "xacc/passes/PassManager.h"
#include "xacc/runtime/Runtime.h"

using namespace xacc;
using namespace xacc::camel;
using namespace xacc::camel::testing;
using ir::Datum;
using ir::Type;

namespace {

// ---- The table
// -----------------------------------------------------------------

TEST_F(StdlibTest, TableListsEverySpecifiedFunctionOnce) {
  std::set<std::string> expected = {
      // 14.1-14.4
      "int", "i64", "i32", "float", "f64", "f32", "string", "print", "print.fmt", "println",
      "println.fmt", "input", "sleep", "exit", "format", "join", "len", "contains",
      "contains.array", "range", "head", "tail", "slice", "concat", "append", "extend", "zip",
      "map", "filter", "reduce", "foreach", "apply",
      // 13 (built-in macro)
      "grad",
      // 15.1-15.12, 15.14, 15.15
      "time::now", "time::strftime", "time::strptime", "os::whoami", "os::cpu_count",
      "os::set_terminal_raw_mode", "os::has_input", "os::get_char", "os::get_chars",
      "os::clear_input_buffer", "math::abs", "math::sqrt", "math::exp", "math::round", "math::ceil",
      "math::floor", "math::bin", "math::oct", "math::hex", "random::seed", "random::rand",
      "random::randn", "random::randint", "random::choice", "random::sample", "random::shuffle",
      "algo::sort", "algo::sorted", "algo::insert_sort", "algo::quick_sort", "algo::merge_sort",
      "algo::insert_sorted", "algo::quick_sorted", "algo::merge_sorted",
      "algo::merge_sorted_arrays", "statistics::mean", "statistics::stdev", "crypto::sha256",
      "crypto::sha256_rounds", "fs::read_text", "fs::write_text", "fs::exists", "fs::is_file",
      "fs::is_dir", "fs::file_size", "fs::read_chunk", "fs::mkdir", "fs::mkdirs", "json::encode",
      "json::decode", "re::test", "sys::get_env", "sys::get_cwd", "this::zen", "sim::pi_hits",
      "sim::asian_call_price", "para::unordered_reduce", "para::unordered_foreach"};
  std::set<std::string> seen;
  for (const StdlibEntry& e : stdlibEntries()) {
    seen.insert(e.gir);
    const ir::Builtin* b = ir::BuiltinRegistry::get().lookup(e.gir);
    ASSERT_TRUE(b) << e.gir;
    EXPECT_EQ(b->effectful, e.effectful || !e.deterministic) << e.gir;
    EXPECT_EQ(b->deterministic, e.deterministic) << e.gir;
    if (!e.varOperands.empty()) {
      EXPECT_TRUE(e.effectful) << e.gir << " mutates but is pure";
    }
    // Module functions are <module>::<name>[.form]; globals the bare
    // name[.form], also under a module's name (`io::print`, `os::sleep`).
    bool alias = !e.module.empty() && !stdlibOverloads("", e.name).empty() &&
                 e.gir.rfind(e.name, 0) == 0;
    std::string prefix = e.module.empty() || alias ? "" : e.module + "::";
    EXPECT_EQ(e.gir.rfind(prefix + e.name, 0), 0u) << e.gir;
    EXPECT_FALSE(e.signature.empty()) << e.gir;
  }
  EXPECT_EQ(seen, expected);
  // The reference's programs import `sleep` from `os`: the global built-in.
  auto osSleep = stdlibOverloads("os", "sleep");
  ASSERT_EQ(osSleep.size(), 1u);
  EXPECT_EQ(osSleep[0]->gir, "sleep");
}

TEST_F(StdlibTest, OverloadsAndModules) {
  auto contains = stdlibOverloads("", "contains");
  ASSERT_EQ(contains.size(), 2u);
  EXPECT_EQ(contains[0]->gir, "contains");
  EXPECT_EQ(contains[0]->withParams, 0);
  EXPECT_EQ(contains[0]->params, 2);
  EXPECT_EQ(contains[1]->gir, "contains.array");
  EXPECT_EQ(contains[1]->withParams, 1);
  EXPECT_EQ(contains[1]->params, 1);
  auto encode = stdlibOverloads("json", "encode");
  ASSERT_EQ(encode.size(), 2u);
  EXPECT_EQ(encode[0]->params, 1);
  EXPECT_EQ(encode[1]->params, 2);
  EXPECT_EQ(encode[0]->gir, encode[1]->gir);
  auto print = stdlibOverloads("io", "println");
  ASSERT_EQ(print.size(), 2u);
  EXPECT_EQ(print[0]->gir, "println");
  EXPECT_EQ(print[0]->params, kVariadic);
  EXPECT_EQ(print[1]->gir, "println.fmt");
  auto append = stdlibOverloads("", "append");
  ASSERT_EQ(append.size(), 1u);
  EXPECT_EQ(append[0]->varOperands, std::vector<int>{1});
  EXPECT_EQ(stdlibOverloads("algo", "sort")[0]->varOperands, std::vector<int>{0});
  EXPECT_TRUE(stdlibOverloads("algo", "sorted")[0]->varOperands.empty());
  EXPECT_EQ(stdlibOverloads("", "format")[0]->withParams, kVariadic);
  EXPECT_TRUE(isStdlibModule("math"));
  EXPECT_TRUE(isStdlibModule("io"));
  EXPECT_FALSE(isStdlibModule("tensor"));
  EXPECT_FALSE(isStdlibModule(""));
  std::string md = stdlibTableMarkdown();
  EXPECT_NE(md.find("| math | `sqrt` | `math::sqrt` | 0 | 1 |  | pure | `(x: "
                    "int \\| float): float` |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| (global) | `append` | `append` | 1 | 1 | 1 | effect |"), std::string::npos);
}

TEST_F(StdlibTest, RegistrationIsIdempotent) {
  size_t n = stdlibEntries().size();
  registerCamelStdlib();
  EXPECT_EQ(stdlibEntries().size(), n);
}

TEST_F(StdlibTest, BuilderRejectsWrongOperandsWithTheInferMessage) {
  ir::Graph& g = *module.add(std::make_unique<ir::Graph>("bad"));
  ir::Builder b(g);
  ir::Value* s = b.constStr("x");
  EXPECT_FALSE(
      b.create("func.builtin", {s}, ir::attrs({{"name", ir::Attr::string("math::sqrt")}})));
  EXPECT_NE(b.error().find("math::sqrt: the argument must be an int or a float, got string"),
            std::string::npos)
      << b.error();
  // Effectful builtins cannot be called without a token.
  EXPECT_FALSE(b.create("func.builtin", {s}, ir::attrs({{"name", ir::Attr::string("println")}})));
  EXPECT_NE(b.error().find("func.builtin_effect"), std::string::npos) << b.error();
}

// ---- Printing (7.3) and conversions (14.1)
// --------------------------------------

TEST_F(StdlibTest, ReprFollowsSection73) {
  EXPECT_EQ(repr(iv(-7)), "-7");
  EXPECT_EQ(repr(fv(1.0)), "1");
  EXPECT_EQ(repr(fv(0.5)), "0.5");
  EXPECT_EQ(repr(fv(3.14159265)), "3.14159");
  EXPECT_EQ(repr(fv(1e-7)), "1e-07");
  EXPECT_EQ(repr(fv(123456789.0)), "1.23457e+08");
  EXPECT_EQ(repr(bv(true)), "true");
  EXPECT_EQ(repr(Datum()), "null");
  EXPECT_EQ(repr(strs({"a", "b"})), "[a, b]");
  EXPECT_EQ(repr(ints({1, 2, 3})), "[1, 2, 3]");
  EXPECT_EQ(repr(tv({iv(2), iv(4)})), "(2, 4)");
  EXPECT_EQ(repr(Datum::structure({"x", "y"}, {iv(1), fv(2.5)})), "{ x: 1, y: 2.5 }");
  EXPECT_EQ(repr(Datum::structure({}, {})), "{}");
  EXPECT_EQ(repr(lv({Datum::structure({"s"}, {sv("hi")}), tv({sv("a"), Datum()})})),
            "[{ s: hi }, (a, null)]");
  EXPECT_EQ(repr(lambda({Type::i64()}, [](ir::Builder&, auto ps) { return ps; })), "<function>");
}

TEST_F(StdlibTest, SelfContainingValuesPrintAndCompareWithoutRecursingForever) {
  Datum xs = ints({1});
  xs.listItems().push_back(xs);
  xs.listItems().push_back(tv({xs}));
  EXPECT_EQ(repr(xs), "[1, [...], ([...])]");
  Datum ys = ints({1});
  ys.listItems().push_back(ys);
  ys.listItems().push_back(tv({ys}));
  EXPECT_TRUE(camelEquals(xs, ys));
  EXPECT_TRUE(camelEquals(xs, xs));
  ys.listItems()[0] = iv(2);
  EXPECT_FALSE(camelEquals(xs, ys));
  Datum deep = ints({});
  for (int i = 0; i < 20000; ++i) deep = lv({deep});
  EXPECT_EQ(repr(deep).substr(0, 4), "[[[[");
  xs.listItems().clear();  // break the cycles so the test does not leak
  ys.listItems().clear();
}

TEST_F(StdlibTest, RuntimeDiagnosticCodesAreStableAndDistinct) {
  std::set<std::string> codes;
  for (size_t i = 0; i < size_t(RuntimeDiag::NumDiags); ++i) {
    const RuntimeDiagInfo& info = runtimeDiagInfo(RuntimeDiag(i));
    EXPECT_EQ(std::string(info.code).substr(0, 2), "E3") << info.name;
    EXPECT_TRUE(codes.insert(info.code).second) << info.code;
  }
  EXPECT_STREQ(runtimeDiagInfo(RuntimeDiag::ExitRequested).code, "E3000");  // stable: scripts match it
  EXPECT_EQ(std::string(runtimeDiagInfo(RuntimeDiag::InvalidConversion).code), "E3002");
  EXPECT_EQ(std::string(runtimeDiagInfo(RuntimeDiag::FormatError).code), "E3003");
  EXPECT_EQ(std::string(runtimeDiagInfo(RuntimeDiag::LengthMismatch).code), "E3004");
}

TEST_F(StdlibTest, PrintAndPrintlnWriteSpaceSeparatedAndReturnTheFirstArgument) {
  Datum first = ints({1, 2});
  Datum r =
      call1("print", {first, sv("two"), fv(2.5), Datum::structure({"k"}, {bv(false)}), Datum()});
  EXPECT_EQ(out, "[1, 2] two 2.5 { k: false } null");
  EXPECT_EQ(r.object(), first.object());
  out.clear();
  EXPECT_EQ(call1("println", {sv("hello")}).asStr(), "hello");
  EXPECT_EQ(call1("println", {}).kind(), DKind::Null);
  EXPECT_EQ(out, "hello\n\n");
  EXPECT_EQ(infer("println", {Type::string(), Type::i64()}), "str");
  EXPECT_EQ(infer("print", {}), "null");
}

TEST_F(StdlibTest, PrintWithAFormat) {
  EXPECT_EQ(call1("println.fmt", {sv("{} + {} = {:.1f}"), iv(1), iv(2), fv(3.0)}).asStr(),
            "1 + 2 = 3.0");
  EXPECT_EQ(call1("print.fmt", {sv("[{:>3}]"), sv("x")}).asStr(), "[  x]");
  EXPECT_EQ(out, "1 + 2 = 3.0\n[  x]");
  EXPECT_EQ(failCode("print.fmt", {sv("{:d}"), sv("x")}), "E3003");
  EXPECT_EQ(infer("println.fmt", {Type::i64()}), "error: the format must be a string, got int");
}

TEST_F(StdlibTest, IntConversions) {
  EXPECT_EQ(call1("int", {fv(3.9)}).asInt(), 3);
  EXPECT_EQ(call1("int", {fv(-3.9)}).asInt(), -3);
  EXPECT_EQ(call1("int", {sv("42")}).asInt(), 42);
  EXPECT_EQ(call1("int", {sv(" -7\n")}).asInt(), -7);
  EXPECT_EQ(call1("i64", {sv("+5")}).asInt(), 5);
  EXPECT_EQ(call1("int", {iv(9)}).asInt(), 9);
  EXPECT_EQ(call1("i32", {iv((int64_t(1) << 32) + 5)}).asInt(),
            5);  // ints wrap like a cast
  EXPECT_EQ(call1("i32", {iv(2147483648)}).asInt(), -2147483648);
  EXPECT_EQ(call1("i32", {fv(-2.5)}).asInt(), -2);
  EXPECT_EQ(failCode("int", {sv("abc")}), "E3002");
  EXPECT_EQ(lastMessage, "int: cannot convert string 'abc' to int");
  EXPECT_EQ(failCode("int", {sv("3.5")}), "E3002");
  EXPECT_EQ(failCode("int", {sv("")}), "E3002");
  EXPECT_EQ(failCode("int", {sv("99999999999999999999")}), "E3002");
  EXPECT_EQ(failCode("int", {fv(1e300)}), "E3002");
  EXPECT_EQ(failCode("int", {fv(NAN)}), "E3002");
  EXPECT_EQ(failCode("i32", {sv("3000000000")}), "E3002");
  EXPECT_EQ(failCode("i32", {fv(3e9)}), "E3002");
  // An any-typed operand is accepted statically and checked at run time.
  EXPECT_EQ(failCode("int", {bv(true)}, {Type::any()}), "E3010");
  EXPECT_EQ(infer("int", {Type::f32()}), "i64");
  EXPECT_EQ(infer("i32", {Type::string()}), "i32");
  EXPECT_EQ(infer("int", {Type::boolean()}),
            "error: the argument must be a number or string, got bool");
}

TEST_F(StdlibTest, FloatAndStringConversions) {
  EXPECT_EQ(call1("float", {sv("2.5")}).asFloat(), 2.5);
  EXPECT_EQ(call1("float", {sv(" -1e3 ")}).asFloat(), -1000.0);
  EXPECT_EQ(call1("f64", {iv(3)}).asFloat(), 3.0);
  EXPECT_EQ(call1("f32", {fv(0.1)}).asFloat(), double(0.1f));
  EXPECT_EQ(failCode("float", {sv("1.5x")}), "E3002");
  EXPECT_EQ(infer("f32", {Type::i64()}), "f32");
  EXPECT_EQ(call1("string", {fv(2.5)}).asStr(), "2.500000");
  EXPECT_EQ(call1("string", {fv(-0.1)}).asStr(), "-0.100000");
  EXPECT_EQ(call1("string", {iv(-42)}).asStr(), "-42");
  EXPECT_EQ(call1("string", {sv("s")}).asStr(), "s");
  EXPECT_EQ(infer("string", {Type::list(Type::i64())}),
            "error: the argument must be a number or string, got int[]");
}

// ---- Process (14.2)
// -------------------------------------------------------------

TEST_F(StdlibTest, InputReadsOneLineAfterThePrompt) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  int saved = dup(0);
  dup2(fds[0], 0);
  std::string text = "hello\r\nworld\n";
  ASSERT_EQ(write(fds[1], text.data(), text.size()), ssize_t(text.size()));
  EXPECT_EQ(call1("input", {sv("> ")}).asStr(), "hello");
  EXPECT_EQ(out, "> ");
  // input and os::get_char share the unbuffered stream.
  EXPECT_EQ(call1("os::has_input", {}).asBool(), true);
  EXPECT_EQ(call1("os::get_char", {}).asStr(), "w");
  EXPECT_EQ(call1("os::get_chars", {iv(3)}).asStr(), "orl");
  EXPECT_EQ(call1("os::clear_input_buffer", {}).kind(), DKind::Null);
  EXPECT_EQ(call1("os::has_input", {}).asBool(), false);
  EXPECT_EQ(failCode("os::get_chars", {iv(-1)}), "E3005");
  close(fds[1]);
  EXPECT_EQ(call1("input", {sv("")}).asStr(), "");  // end of input
  EXPECT_EQ(call1("os::get_char", {}).asStr(), "");
  dup2(saved, 0);
  close(saved);
  close(fds[0]);
}

TEST_F(StdlibTest, SleepAndExit) {
  EXPECT_EQ(call1("sleep", {iv(1)}).kind(), DKind::Null);
  EXPECT_EQ(failCode("sleep", {iv(-1)}), "E3005");
  EXPECT_EQ(infer("sleep", {Type::f64()}),
            "error: the duration must be an int (milliseconds), got float");
  int status = -1;
  EXPECT_FALSE(ExitRequest::take(status));
  EXPECT_EQ(failCode("exit", {iv(3)}), std::string(runtimeDiagInfo(RuntimeDiag::ExitRequested).code));
  EXPECT_TRUE(ExitRequest::pending());
  EXPECT_TRUE(ExitRequest::take(status));
  EXPECT_EQ(status, 3);
  EXPECT_FALSE(ExitRequest::pending());
}

// ---- Strings (14.3)
// -------------------------------------------------------------

TEST_F(StdlibTest, FormatMiniLanguage) {
  auto fmt = [&](std::string f, std::vector<Datum> args) {
    args.push_back(sv(std::move(f)));
    return call1("format", std::move(args)).asStr();
  };
  EXPECT_EQ(fmt("{}", {fv(1.0)}), "1");
  EXPECT_EQ(fmt("{}", {fv(0.1 + 0.2)}), "0.30000000000000004");
  EXPECT_EQ(fmt("{:.4f}", {fv(3.14159265)}), "3.1416");
  EXPECT_EQ(fmt("{:.2f}", {fv(117.5)}), "117.50");
  EXPECT_EQ(fmt("[{:>6}] [{:<6}] [{:^6}]", {sv("r"), sv("l"), sv("c")}),
            "[     r] [l     ] [  c   ]");
  EXPECT_EQ(fmt("{:5}|{:5}", {iv(42), sv("ab")}), "   42|ab   ");
  EXPECT_EQ(fmt("{:e}", {fv(1234.5)}), "1.234500e+03");
  EXPECT_EQ(fmt("{:g}", {fv(0.0001)}), "0.0001");
  EXPECT_EQ(fmt("{:d} {:x}", {iv(42), iv(255)}), "42 ff");
  EXPECT_EQ(fmt("{0} {1} {0}", {sv("x"), sv("y")}), "x y x");
  EXPECT_EQ(fmt("{{literal braces}}", {}), "{literal braces}");
  EXPECT_EQ(fmt("{} {} {}", {bv(true), ints({1, 2}), Datum::structure({"a"}, {fv(0.5)})}),
            "true [1, 2] { a: 0.5 }");
  EXPECT_EQ(fmt("{:>8}", {tv({iv(1), iv(2)})}), "  (1, 2)");
  EXPECT_EQ(fmt("len {} has {}", {iv(12), bv(true)}), "len 12 has true");
  EXPECT_EQ(infer("format", {Type::i64(), Type::string()}), "str");
  EXPECT_EQ(infer("format", {Type::i64()}), "error: the format must be a string, got int");
}

TEST_F(StdlibTest, MalformedFormatsAreLocatedErrors) {
  EXPECT_EQ(failCode("format", {sv("{")}), "E3003");
  EXPECT_EQ(failCode("format", {iv(1), sv("{} {}")}),
            "E3003");  // too few arguments
  EXPECT_EQ(failCode("format", {sv("x"), sv("{:d}")}),
            "E3003");  // spec does not fit
  EXPECT_EQ(failCode("format", {sv("x"), sv("{:.2f}")}), "E3003");
  EXPECT_EQ(failCode("format", {fv(1.5), sv("{:x}")}), "E3003");
  EXPECT_EQ(failCode("format", {iv(1), iv(2), sv("{} {1}")}),
            "E3003");  // mixed indexing
  EXPECT_EQ(failCode("format", {iv(1), sv("{name}")}), "E3003");
  EXPECT_NE(lastMessage.find("(in format string \"{name}\")"), std::string::npos) << lastMessage;
}

TEST_F(StdlibTest, JoinLenContains) {
  EXPECT_EQ(call1("join", {sv(", "), strs({"a", "b", "c"})}).asStr(), "a, b, c");
  EXPECT_EQ(call1("join", {sv("-"), ints({1, 2})}).asStr(), "1-2");
  EXPECT_EQ(call1("join", {sv("-"), lv({})}, {Type::string(), Type::list(Type::string())}).asStr(),
            "");
  EXPECT_EQ(infer("join", {Type::i64(), Type::list(Type::string())}),
            "error: the separator must be a string, got int");
  EXPECT_EQ(call1("len", {sv("h\xc3\xa9llo")}).asInt(), 6);  // bytes
  EXPECT_EQ(call1("len", {ints({1, 2, 3})}).asInt(), 3);
  EXPECT_EQ(infer("len", {Type::i64()}),
            "error: the argument must be a string or an array, got int");
  EXPECT_EQ(failCode("len", {iv(1)}, {Type::any()}), "E3010");
  EXPECT_TRUE(call1("contains", {sv("hello, world"), sv("world")}).asBool());
  EXPECT_FALSE(call1("contains", {sv("hello"), sv("World")}).asBool());
  EXPECT_NE(infer("contains", {Type::string(), Type::list(Type::string())}).find("contains.array"),
            std::string::npos);
}

// ---- Arrays (14.4)
// --------------------------------------------------------------

TEST_F(StdlibTest, RangeHeadTailSliceConcat) {
  EXPECT_EQ(repr(call1("range", {iv(2), iv(5)})), "[2, 3, 4]");
  EXPECT_EQ(repr(call1("range", {iv(5), iv(2)})), "[]");
  EXPECT_EQ(failCode("range", {iv(0), iv(int64_t(1) << 40)}), "E3005");
  EXPECT_EQ(call1("head", {ints({7, 8})}).asInt(), 7);
  EXPECT_EQ(call1("head", {lv({})}, {Type::list(Type::i64())}).kind(), DKind::Null);
  EXPECT_EQ(infer("head", {Type::list(Type::string())}), "str");
  EXPECT_EQ(repr(call1("tail", {ints({1, 2, 3})})), "[2, 3]");
  EXPECT_EQ(repr(call1("tail", {ints({1})})), "[]");
  Datum xs = ints({0, 1, 2, 3, 4});
  EXPECT_EQ(repr(call1("slice", {iv(1), iv(3), xs})), "[1, 2]");
  EXPECT_EQ(repr(call1("slice", {iv(-2), iv(100), xs})), "[3, 4]");
  EXPECT_EQ(repr(call1("slice", {iv(-100), iv(-3), xs})), "[0, 1]");
  EXPECT_EQ(repr(call1("slice", {iv(3), iv(1), xs})), "[]");
  Datum copy = call1("slice", {iv(0), iv(5), xs});
  EXPECT_NE(copy.object(), xs.object());  // a new array
  EXPECT_EQ(repr(call1("concat", {ints({1}), ints({2, 3})})), "[1, 2, 3]");
  EXPECT_EQ(infer("concat", {Type::list(Type::i64()), Type::list(Type::string())}),
            "error: element types differ: int[] and string[]");
  EXPECT_EQ(infer("slice", {Type::i64(), Type::i64(), Type::list(Type::f64())}), "list<f64>");
}

TEST_F(StdlibTest, AppendAndExtendMutateInPlace) {
  Datum xs = ints({1, 2, 3});
  Datum r = call1("append", {iv(4), xs});
  EXPECT_EQ(r.object(), xs.object());
  EXPECT_EQ(repr(xs), "[1, 2, 3, 4]");
  r = call1("extend", {ints({5, 6}), xs});
  EXPECT_EQ(r.object(), xs.object());
  EXPECT_EQ(repr(xs), "[1, 2, 3, 4, 5, 6]");
  Datum ys = ints({1, 2});
  call1("extend", {ys, ys});
  EXPECT_EQ(repr(ys), "[1, 2, 1, 2]");
  EXPECT_EQ(infer("append", {Type::string(), Type::list(Type::i64())}),
            "error: cannot append string to int[]");
  // [REF] an unannotated [] (void[]) accepts any item and keeps its type.
  EXPECT_EQ(infer("append", {Type::string(), Type::list(Type::null())}), "list<null>");
  EXPECT_EQ(infer("extend", {Type::list(Type::f64()), Type::list(Type::i64())}),
            "error: cannot extend int[] with float[]");
}

TEST_F(StdlibTest, ContainsUsesStructuralEquality) {
  EXPECT_TRUE(call1("contains.array", {iv(2), ints({1, 2})}).asBool());
  EXPECT_FALSE(call1("contains.array", {iv(5), ints({1, 2})}).asBool());
  EXPECT_FALSE(call1("contains.array", {fv(1.0), lv({fv(1.5)})}).asBool());
  Datum p = Datum::structure({"x", "y"}, {iv(1), iv(2)});
  Datum q = Datum::structure({"y", "x"}, {iv(2), iv(1)});  // same structural type, other order
  EXPECT_TRUE(call1("contains.array", {p, lv({q})}, {typeOf(p), Type::list(typeOf(p))}).asBool());
  EXPECT_TRUE(call1("contains.array", {ints({1, 2}), lv({ints({1, 2})})}).asBool());
  EXPECT_TRUE(call1("contains.array", {tv({sv("a")}), lv({tv({sv("a")})})}).asBool());
  EXPECT_EQ(infer("contains.array", {Type::string(), Type::list(Type::i64())}),
            "error: cannot look for string in int[]");
}

TEST_F(StdlibTest, ZipPairsOrFailsOnLengthMismatch) {
  Datum z = call1("zip", {ints({1, 2}), strs({"a", "b"})});
  EXPECT_EQ(repr(z), "[(1, a), (2, b)]");
  EXPECT_EQ(infer("zip", {Type::list(Type::i64()), Type::list(Type::string())}),
            "list<tuple<i64, str>>");
  EXPECT_EQ(failCode("zip", {ints({1, 2, 3}), strs({"a"})}), "E3004");
  EXPECT_EQ(lastMessage, "zip: arrays have different lengths (3 and 1)");
}

TEST_F(StdlibTest, MapFilterReduce) {
  Datum square = lambda({Type::i64()}, [](ir::Builder& b, auto ps) {
    return std::vector<ir::Value*>{b.value(ir::CoreOp::Mul, {ps[0], ps[0]})};
  });
  Datum xs = ints({1, 2, 3});
  EXPECT_EQ(repr(call1("map", {square, xs})), "[1, 4, 9]");
  EXPECT_EQ(repr(xs), "[1, 2, 3]");
  EXPECT_EQ(infer("map", {typeOf(square), Type::list(Type::i64())}), "list<i64>");
  EXPECT_EQ(infer("map", {typeOf(square), Type::list(Type::f64())}),
            "error: map's function takes int but the elements are float");
  EXPECT_EQ(infer("map", {Type::i64(), Type::list(Type::i64())}),
            "error: map's function must be a function of 1 parameter, got int");
  Datum toStr = lambda({Type::i64()}, [](ir::Builder& b, auto ps) {
    return std::vector<ir::Value*>{b.value(ir::CoreOp::StrFrom, {ps[0]}, {}, {Type::string()})};
  });
  EXPECT_EQ(infer("map", {typeOf(toStr), Type::list(Type::i64())}), "list<str>");

  Datum even = lambda({Type::i64()}, [](ir::Builder& b, auto ps) {
    ir::Value* r = b.value(ir::CoreOp::Mod, {ps[0], b.constInt(2)});
    return std::vector<ir::Value*>{b.value(ir::CoreOp::Eq, {r, b.constInt(0)})};
  });
  EXPECT_EQ(repr(call1("filter", {even, ints({1, 2, 3, 4})})), "[2, 4]");
  EXPECT_EQ(infer("filter", {typeOf(square), Type::list(Type::i64())}),
            "error: filter's predicate must return bool, not int");
  EXPECT_EQ(failCode("filter", {square, ints({1})}, {Type::any(), Type::list(Type::i64())}),
            "E3011");

  Datum add = lambda({Type::i64(), Type::i64()}, [](ir::Builder& b, auto ps) {
    return std::vector<ir::Value*>{b.value(ir::CoreOp::Add, {ps[0], ps[1]})};
  });
  EXPECT_EQ(call1("reduce", {add, iv(10), ints({1, 2, 3})}).asInt(), 16);
  EXPECT_EQ(
      call1("reduce", {add, iv(10), lv({})}, {typeOf(add), Type::i64(), Type::list(Type::i64())})
          .asInt(),
      10);
  EXPECT_EQ(infer("reduce", {typeOf(add), Type::i64(), Type::list(Type::i64())}), "i64");
  EXPECT_NE(
      infer("reduce", {typeOf(add), Type::f64(), Type::list(Type::i64())}).find("accumulator"),
      std::string::npos);
  // A failing callback stops the builtin and keeps the callee's diagnostic.
  Datum boom = lambda({Type::i64()}, [](ir::Builder& b, auto ps) {
    return std::vector<ir::Value*>{b.value(ir::CoreOp::Div, {ps[0], b.constInt(0)})};
  });
  std::vector<Datum> r;
  EXPECT_FALSE(call("map", {boom, ints({1})}, r));
  EXPECT_TRUE(diag.hasErrors());
  diag.clear();
}

TEST_F(StdlibTest, ForeachAndApplyWithTokenThreadingLambdas) {
  // sync (x: int) => println(x): takes and returns an effect token.
  Datum show = lambda({Type::token(), Type::i64()}, [](ir::Builder& b, auto ps) {
    ir::Node* n = b.create("func.builtin_effect", {ps[0], ps[1]},
                           ir::attrs({{"name", ir::Attr::string("println")}}));
    return std::vector<ir::Value*>{n->result(0), n->result(1)};
  });
  EXPECT_EQ(call1("foreach", {show, ints({1, 2})}).kind(), DKind::Null);
  EXPECT_EQ(out, "1\n2\n");
  EXPECT_EQ(infer("foreach", {typeOf(show), Type::list(Type::i64())}), "null");
  out.clear();
  // map with an effectful lambda drops the token and keeps the value.
  EXPECT_EQ(repr(call1("map", {show, ints({5})})), "[5]");
  EXPECT_EQ(out, "5\n");

  Datum twice = lambda({Type::i64()}, [](ir::Builder& b, auto ps) {
    return std::vector<ir::Value*>{b.value(ir::CoreOp::Add, {ps[0], ps[0]})};
  });
  Datum xs = ints({1, 2, 3});
  Datum r = call1("apply", {twice, xs});
  EXPECT_EQ(r.object(), xs.object());
  EXPECT_EQ(repr(xs), "[2, 4, 6]");
  Datum toFloat = lambda({Type::i64()}, [](ir::Builder& b, auto ps) {
    return std::vector<ir::Value*>{b.value(ir::CoreOp::Cast, {ps[0]}, {}, {Type::f64()})};
  });
  EXPECT_NE(infer("apply", {typeOf(toFloat), Type::list(Type::i64())}).find("must map int to int"),
            std::string::npos);
}

TEST_F(StdlibTest, ClosuresCaptureAndMutateSharedArrays) {
  // (x: int) => sync { acc->append<x * 10> } with acc captured.
  Datum acc = lv({});
  Datum push = lambda({Type::list(Type::i64()), Type::token(), Type::i64()},
                      [](ir::Builder& b, auto ps) {
                        ir::Value* v = b.value(ir::CoreOp::Mul, {ps[2], b.constInt(10)});
                        ir::Node* n = b.create("func.builtin_effect", {ps[1], v, ps[0]},
                                               ir::attrs({{"name", ir::Attr::string("append")}}));
                        return std::vector<ir::Value*>{n->result(0), n->result(1)};
                      },
                      {acc});
  // The captured list is not part of the function's type; call with its visible
  // type.
  Type visible = Type::func({Type::token(), Type::i64()}, {Type::token(), Type::list(Type::i64())});
  call1("foreach", {push, ints({1, 2, 3})}, {visible, Type::list(Type::i64())});
  EXPECT_EQ(repr(acc), "[10, 20, 30]");
}

TEST_F(StdlibTest, RuntimeRunsCallbacksOnItsOwnEngine) {
  Datum add = lambda({Type::i64(), Type::i64()}, [](ir::Builder& b, auto ps) {
    return std::vector<ir::Value*>{b.value(ir::CoreOp::Add, {ps[0], ps[1]})};
  });
  ir::Graph& g = *module.add(std::make_unique<ir::Graph>("main"));
  ir::Value* tok = g.addParam(Type::token());
  ir::Builder b(g);
  ir::Value* xs = b.create("func.builtin", {b.constInt(1), b.constInt(5)},
                           ir::attrs({{"name", ir::Attr::string("range")}}))
                      ->result(0);
  ir::Value* f = g.addParam(typeOf(add));
  ir::Value* sum = b.create("func.builtin", {f, b.constInt(0), xs},
                            ir::attrs({{"name", ir::Attr::string("reduce")}}))
                       ->result(0);
  ir::Node* p = b.create("func.builtin_effect", {tok, sum},
                         ir::attrs({{"name", ir::Attr::string("println")}}));
  g.addResult(p->result(0));
  ASSERT_TRUE(ir::verifyGraph(g, diag)) << diag.renderAllText();
  runtime::Runtime rt(diag, module);
  rt.setOutput([&](std::string_view s) { out.append(s); });
  std::vector<Datum> r;
  ASSERT_TRUE(rt.run(g, {Datum::token(), add}, r)) << diag.renderAllText();
  EXPECT_EQ(out, "10\n");
}

TEST_F(StdlibTest, ConstantFoldingFoldsPureBuiltinsOnly) {
  ir::Graph& g = *module.add(std::make_unique<ir::Graph>("main"));
  ir::Value* tok = g.addParam(Type::token());
  ir::Builder b(g);
  auto builtin = [&](const char* name, std::vector<ir::Value*> ops) {
    bool effect = !ops.empty() && ops[0]->type().isToken();
    return b.create(effect ? "func.builtin_effect" : "func.builtin", ops,
                    ir::attrs({{"name", ir::Attr::string(name)}}));
  };
  ir::Value* n = builtin("len", {b.constStr("abc")})->result(0);
  ir::Value* h = builtin("crypto::sha256", {b.constStr("abc")})->result(0);
  ir::Node* p = builtin("println", {tok, n});
  ir::Node* pi = builtin("sim::pi_hits", {p->result(0), b.constInt(1000), b.constInt(1)});
  g.addResult(pi->result(0));
  g.addResult(h);
  g.addResult(pi->result(1));
  passes::PassManager pm(diag);
  ASSERT_TRUE(pm.addPipeline("const-fold,dce"));
  ASSERT_TRUE(pm.run(module)) << diag.renderAllText();
  std::vector<std::string> left;
  for (ir::Node* node : g)
    if (const ir::Attr* a = node->attr("name")) left.push_back(a->getStr());
  EXPECT_EQ(left, (std::vector<std::string>{"println", "sim::pi_hits"}));
  ir::Interpreter interp(diag, &module);
  interp.setOutput([&](std::string_view s) { out.append(s); });
  std::vector<Datum> r;
  ASSERT_TRUE(interp.run(g, {Datum::token()}, r)) << diag.renderAllText();
  EXPECT_EQ(out, "3\n");
  EXPECT_EQ(r[1].asStr(), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

}  // namespace
