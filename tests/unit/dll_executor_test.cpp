// The `dll` executor (csrc/lib/executors/dll) registered statically: a C
// library compiled here with `cc` against xacc/camel/camel_abi.h is resolved
// through the executor's `dll` scheme and called with Camel values (ints,
// floats, bools, strings, arrays) both ways; bad libraries, symbols, types,
// results and failing calls give errors, never crashes.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "xacc/camel/Executor.h"
#include "xacc/ir/Builder.h"
#include "xacc/ir/Interpreter.h"

extern "C" bool xacc_camel_executor_dll(xacc::camel::ExecutorContext* ctx);

namespace {

namespace fs = std::filesystem;
using xacc::camel::ExecutorRegistry;
using xacc::camel::OuterFunctor;
using xacc::ir::Datum;
using xacc::ir::Type;

const char* kSource = R"(
#include <string.h>
#include "xacc/camel/camel_abi.h"

int add(const camel_value* a, int64_t n, camel_value* r, camel_context* ctx) {
  if (n != 2 || a[0].kind != CAMEL_INT || a[1].kind != CAMEL_INT) return 1;
  r->kind = CAMEL_INT; r->as.i = a[0].as.i + a[1].as.i; return 0;
}
int scale(const camel_value* a, int64_t n, camel_value* r, camel_context* ctx) {
  int64_t len = a[0].as.a.len;
  camel_value* out = (camel_value*)ctx->alloc(ctx, len * (int64_t)sizeof(camel_value));
  for (int64_t i = 0; i < len; ++i) { out[i].kind = CAMEL_FLOAT; out[i].as.f = a[0].as.a.items[i].as.f * a[1].as.f; }
  r->kind = CAMEL_ARRAY; r->as.a.items = out; r->as.a.len = len; return 0;
}
int shout(const camel_value* a, int64_t n, camel_value* r, camel_context* ctx) {
  int64_t len = a[0].as.s.len;
  char* s = (char*)ctx->alloc(ctx, len + 2);
  for (int64_t i = 0; i < len; ++i) { char c = a[0].as.s.data[i]; s[i] = (c >= 'a' && c <= 'z') ? (char)(c - 32) : c; }
  s[len] = a[1].as.b ? '!' : '.'; s[len + 1] = 0;
  r->kind = CAMEL_STRING; r->as.s.data = s; r->as.s.len = len + 1; return 0;
}
int refuse(const camel_value* a, int64_t n, camel_value* r, camel_context* ctx) {
  ctx->set_error(ctx, "negative input"); return 3;
}
int wrong(const camel_value* a, int64_t n, camel_value* r, camel_context* ctx) {
  r->kind = CAMEL_STRING; r->as.s.data = "x"; r->as.s.len = 1; return 0;
}
)";

struct DllExecutorTest : ::testing::Test {
  static void SetUpTestSuite() {
    dir = fs::temp_directory_path() / ("xacc_dll_test_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    std::ofstream(dir / "mine.c") << kSource;
    std::string cmd = "cc -shared -fPIC -I" XACC_INCLUDE_DIR " -o " + (dir / "libmine.so").string() + " " +
                      (dir / "mine.c").string();
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    ExecutorRegistry::get().addStatic("dll", &xacc_camel_executor_dll);
    std::string error;
    ASSERT_TRUE(ExecutorRegistry::get().load("dll", error)) << error;
  }
  static void TearDownTestSuite() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }

  bool resolve(const std::string& uri, std::vector<Type> params, Type result, xacc::ir::Builtin& b,
               std::string& error) {
    OuterFunctor f;
    f.uri = uri;
    f.scheme = "dll";
    std::string rest = uri.substr(6);
    size_t sep = rest.rfind("::");
    f.target = sep == std::string::npos ? rest : rest.substr(0, sep);
    f.symbol = sep == std::string::npos ? "" : rest.substr(sep + 2);
    f.baseDir = dir.string();
    f.name = "f";
    f.params = std::move(params);
    f.result = result;
    const xacc::camel::OuterResolver* r = ExecutorRegistry::get().scheme("dll");
    if (!r) {
      error = "no dll scheme";
      return false;
    }
    return (*r)(f, b, error);
  }

  bool call(const xacc::ir::Builtin& b, std::vector<Datum> args, Datum& out) {
    xacc::ir::Graph g("g");
    xacc::ir::Builder builder(g);
    xacc::ir::Node* n = builder.create(xacc::ir::CoreOp::Const, {},
                                       xacc::ir::attrs({{"value", xacc::ir::Attr::integer(0)}}), {Type::i64()});
    xacc::ir::Interpreter I(diag);
    std::vector<Datum> results;
    bool ok = b.fn(I, *n, args, results);
    if (ok) out = results.at(0);
    return ok;
  }

  static fs::path dir;
  xacc::support::SourceManager sm;
  xacc::support::DiagnosticEngine diag{&sm};
};
fs::path DllExecutorTest::dir;

TEST_F(DllExecutorTest, CallsWithCamelValuesBothWays) {
  std::string err;
  xacc::ir::Builtin add, scale, shout;
  ASSERT_TRUE(resolve("dll://./libmine.so::add", {Type::i64(), Type::i64()}, Type::i64(), add, err)) << err;
  ASSERT_TRUE(resolve("dll://libmine.so::scale", {Type::list(Type::f64()), Type::f64()}, Type::list(Type::f64()),
                      scale, err)) << err;
  ASSERT_TRUE(resolve("dll://" + (dir / "libmine.so").string() + "::shout", {Type::string(), Type::boolean()},
                      Type::string(), shout, err)) << err;
  EXPECT_TRUE(add.effectful);
  Datum r;
  ASSERT_TRUE(call(add, {Datum::integer(40), Datum::integer(2)}, r)) << diag.renderAllText();
  EXPECT_EQ(r.asInt(), 42);
  ASSERT_TRUE(call(scale, {Datum::list({Datum::real(1.5), Datum::real(-2)}), Datum::real(2)}, r));
  ASSERT_EQ(r.listItems().size(), 2u);
  EXPECT_EQ(r.listItems()[0].asFloat(), 3.0);
  EXPECT_EQ(r.listItems()[1].asFloat(), -4.0);
  ASSERT_TRUE(call(shout, {Datum::string("camel"), Datum::boolean(true)}, r));
  EXPECT_EQ(r.asStr(), "CAMEL!");
}

TEST_F(DllExecutorTest, BadLibrariesSymbolsAndTypesAreErrors) {
  std::string err;
  xacc::ir::Builtin b;
  EXPECT_FALSE(resolve("dll://./nope.so::add", {}, Type::i64(), b, err));
  EXPECT_NE(err.find("cannot open"), std::string::npos) << err;
  EXPECT_NE(err.find("nope.so"), std::string::npos) << err;
  EXPECT_FALSE(resolve("dll://./libmine.so::missing", {}, Type::i64(), b, err));
  EXPECT_NE(err.find("has no symbol 'missing'"), std::string::npos) << err;
  EXPECT_FALSE(resolve("dll://./libmine.so", {}, Type::i64(), b, err));
  EXPECT_NE(err.find("names no symbol"), std::string::npos) << err;
  EXPECT_FALSE(resolve("dll://./libmine.so::add", {Type::tuple({Type::i64()})}, Type::i64(), b, err));
  EXPECT_NE(err.find("cannot cross the C ABI"), std::string::npos) << err;
}

TEST_F(DllExecutorTest, FailingCallsAndWrongResultsAreLocatedRuntimeErrors) {
  std::string err;
  xacc::ir::Builtin refuse, wrong;
  ASSERT_TRUE(resolve("dll://./libmine.so::refuse", {Type::i64()}, Type::i64(), refuse, err)) << err;
  ASSERT_TRUE(resolve("dll://./libmine.so::wrong", {}, Type::i64(), wrong, err)) << err;
  Datum r;
  EXPECT_FALSE(call(refuse, {Datum::integer(-1)}, r));
  ASSERT_TRUE(diag.hasErrors());
  EXPECT_EQ(diag.diagnostics().back().code, "E3013");
  EXPECT_NE(diag.diagnostics().back().message.find("negative input"), std::string::npos);
  diag.clear();
  EXPECT_FALSE(call(wrong, {}, r));
  ASSERT_TRUE(diag.hasErrors());
  EXPECT_NE(diag.diagnostics().back().message.find("returned string, expected int"), std::string::npos);
}

TEST(ExecutorRegistryTest, UnknownExecutorListsTheSearchPath) {
  std::string err;
  EXPECT_FALSE(ExecutorRegistry::get().load("no_such_executor", err));
  EXPECT_NE(err.find("libxacc_exec_no_such_executor.so"), std::string::npos) << err;
  EXPECT_FALSE(ExecutorRegistry::get().load("../x", err));
  EXPECT_EQ(ExecutorRegistry::get().providerOfModule("tensor"), "aten");
  EXPECT_EQ(ExecutorRegistry::get().providerOfScheme("dll"), "dll");
  EXPECT_EQ(ExecutorRegistry::get().providerOfModule("math"), "");
}

}  // namespace
