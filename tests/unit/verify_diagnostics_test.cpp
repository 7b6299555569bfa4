// The shared `expected-error` comment parser and checker used by xacc-opt and
// `camel check` (xacc/support/VerifyDiagnostics.h).
#include <gtest/gtest.h>

#include "xacc/support/VerifyDiagnostics.h"

using namespace xacc::support;

namespace {

Diagnostic diag(Severity s, const char* code, uint32_t line, const char* msg) {
  Diagnostic d;
  d.severity = s;
  d.code = code;
  d.loc.line = line;
  d.loc.col = 3;
  d.message = msg;
  return d;
}

}  // namespace

TEST(VerifyDiagnostics, ParsesOffsetsSeveritiesAndSeveralPerLine) {
  std::string text =
      "a // expected-error {{here}}\n"
      "b // expected-warning@+2 {{below}} expected-error@-1{{above}}\n"
      "c // expected-error@7 {{absolute}}\n";
  auto e = parseExpectedDiagnostics(text);
  ASSERT_EQ(e.size(), 4u);
  EXPECT_EQ(e[0].severity, Severity::Error);
  EXPECT_EQ(e[0].line, 1u);
  EXPECT_EQ(e[0].text, "here");
  EXPECT_EQ(e[1].severity, Severity::Warning);
  EXPECT_EQ(e[1].line, 4u);
  EXPECT_EQ(e[1].text, "below");
  EXPECT_EQ(e[2].line, 1u);
  EXPECT_EQ(e[2].text, "above");
  EXPECT_EQ(e[3].line, 7u);
}

TEST(VerifyDiagnostics, IgnoresMalformedComments) {
  std::string text =
      "expected-error {{unclosed\n"
      "expected-error@+1234567 {{too many digits}}\n"
      "expected-note {{not a severity}}\n"
      "expected-error@ {{no digits}}\n"
      "expected-error without braces\n";
  EXPECT_TRUE(parseExpectedDiagnostics(text).empty());
}

TEST(VerifyDiagnostics, MatchesCodeAndMessageAndReportsBothWays) {
  std::string text = "x // expected-error {{[E0101] bad thing}}\ny // expected-error {{missing}}\n";
  std::vector<Diagnostic> ds{diag(Severity::Error, "E0101", 1, "bad thing happened"),
                             diag(Severity::Error, "E0200", 2, "other"),
                             diag(Severity::Note, "", 2, "notes are not checked")};
  std::string problems = verifyDiagnostics("f.gir", text, ds);
  EXPECT_EQ(problems,
            "f.gir:2:3: error: unexpected error: [E0200] other\n"
            "f.gir:2: error: expected error \"missing\" was not produced\n");
}

TEST(VerifyDiagnostics, WarningsCanBeLeftUnchecked) {
  std::string text = "x // expected-warning {{w}}\n";
  std::vector<Diagnostic> ds{diag(Severity::Warning, "W1", 3, "stray")};
  EXPECT_EQ(verifyDiagnostics("f", text, ds, {.warnings = false}), "");
  EXPECT_NE(verifyDiagnostics("f", text, ds), "");
}

TEST(VerifyDiagnostics, SplitKeepsLineNumbers) {
  auto chunks = splitInputFile("a\n// -----\nb\nc\n// ----- x\nd");
  ASSERT_EQ(chunks.size(), 3u);
  EXPECT_EQ(chunks[0], "a\n");
  EXPECT_EQ(chunks[1], "\n\nb\nc\n");
  EXPECT_EQ(chunks[2], "\n\n\n\n\nd\n");
}
