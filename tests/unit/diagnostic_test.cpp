// Unit tests for DiagnosticEngine's text rendering: the `file:line:col:
// severity[code]: message` header, the quoted source line, the caret and its
// `~` underline, notes, the help line and the error limit. Each test uses its
// own SourceManager so tests do not share buffers through the global one.
#include "xacc/support/Diagnostic.h"

#include <gtest/gtest.h>

using xacc::support::Diagnostic;
using xacc::support::DiagnosticEngine;
using xacc::support::Severity;
using xacc::support::SourceLoc;
using xacc::support::SourceManager;

namespace {

SourceLoc locIn(const std::string* file, uint32_t line, uint32_t col, uint32_t length = 1) {
  SourceLoc loc;
  loc.file = file;
  loc.line = line;
  loc.col = col;
  loc.length = length;
  return loc;
}

TEST(DiagnosticRender, CaretAndUnderlineUnderTheRange) {
  SourceManager sm;
  const std::string* file = sm.addBuffer("a.gir", "graph @f() {\n  %0 = bad.op() : i64\n}\n");
  DiagnosticEngine diags(&sm);
  Diagnostic& d = diags.error("E0101", locIn(file, 2, 8, 6), "unknown op 'bad.op'");
  EXPECT_EQ(diags.renderText(d), "a.gir:2:8: error[E0101]: unknown op 'bad.op'\n"
                                 "    %0 = bad.op() : i64\n"
                                 "         ^~~~~~\n");
}

TEST(DiagnosticRender, TabsAreKeptSoTheCaretLinesUp) {
  SourceManager sm;
  const std::string* file = sm.addBuffer("t.cml", "\tx = y\n");
  DiagnosticEngine diags(&sm);
  Diagnostic& d = diags.error("E0200", locIn(file, 1, 4), "expected ';'");
  EXPECT_EQ(diags.renderText(d), "t.cml:1:4: error[E0200]: expected ';'\n"
                                 "  \tx = y\n"
                                 "  \t  ^\n");
}

TEST(DiagnosticRender, UnderlineStopsAtEndOfLine) {
  SourceManager sm;
  const std::string* file = sm.addBuffer("b.gir", "abc\n");
  DiagnosticEngine diags(&sm);
  Diagnostic& d = diags.error("E1", locIn(file, 1, 2, 10), "m");
  EXPECT_EQ(diags.renderText(d), "b.gir:1:2: error[E1]: m\n"
                                 "  abc\n"
                                 "   ^~\n");
}

TEST(DiagnosticRender, CaretJustPastEndOfLine) {
  SourceManager sm;
  const std::string* file = sm.addBuffer("c.gir", "ab\n");
  DiagnosticEngine diags(&sm);
  Diagnostic& d = diags.error("E2", locIn(file, 1, 3), "expected ')'");
  EXPECT_EQ(diags.renderText(d), "c.gir:1:3: error[E2]: expected ')'\n"
                                 "  ab\n"
                                 "    ^\n");
}

TEST(DiagnosticRender, CrlfLineEndingsAreNotQuoted) {
  SourceManager sm;
  const std::string* file = sm.addBuffer("w.gir", "x\r\nfoo bar\r\n");
  DiagnosticEngine diags(&sm);
  Diagnostic& d = diags.error("E3", locIn(file, 2, 5, 3), "bad");
  EXPECT_EQ(diags.renderText(d), "w.gir:2:5: error[E3]: bad\n"
                                 "  foo bar\n"
                                 "      ^~~\n");
}

TEST(DiagnosticRender, NoSourceTextMeansHeaderOnly) {
  SourceManager sm;
  const std::string* file = sm.internName("missing.gir");
  DiagnosticEngine diags(&sm);
  Diagnostic& d = diags.warning("W0001", locIn(file, 3, 1), "unused value");
  EXPECT_EQ(diags.renderText(d), "missing.gir:3:1: warning[W0001]: unused value\n");
}

TEST(DiagnosticRender, UnknownLocationAndNoCode) {
  SourceManager sm;
  DiagnosticEngine diags(&sm);
  Diagnostic& d = diags.report(Severity::Error, "", SourceLoc{}, "out of memory");
  EXPECT_EQ(diags.renderText(d), "<unknown>: error: out of memory\n");
}

TEST(DiagnosticRender, NotesThenHelpLine) {
  SourceManager sm;
  const std::string* file = sm.addBuffer("n.gir", "%0 = a()\n%0 = b()\n");
  DiagnosticEngine diags(&sm);
  Diagnostic& d = diags.error("E0102", locIn(file, 2, 1, 2), "value %0 defined twice");
  Diagnostic note;
  note.severity = Severity::Note;
  note.loc = locIn(file, 1, 1, 2);
  note.message = "first definition here";
  d.notes.push_back(note);
  d.suggestion = "rename one of the values";
  EXPECT_EQ(diags.renderText(d), "n.gir:2:1: error[E0102]: value %0 defined twice\n"
                                 "  %0 = b()\n"
                                 "  ^~\n"
                                 "n.gir:1:1: note: first definition here\n"
                                 "  %0 = a()\n"
                                 "  ^~\n"
                                 "  help: rename one of the values\n");
}

TEST(DiagnosticRender, ErrorLimitStopsRecordingAndSaysSo) {
  SourceManager sm;
  const std::string* file = sm.addBuffer("l.gir", "x\n");
  DiagnosticEngine diags(&sm);
  diags.setErrorLimit(2);
  diags.error("E1", locIn(file, 1, 1), "first");
  diags.error("E1", locIn(file, 1, 1), "second");
  diags.error("E1", locIn(file, 1, 1), "third");
  EXPECT_EQ(diags.errorCount(), 3u);
  ASSERT_EQ(diags.diagnostics().size(), 2u);
  std::string all = diags.renderAllText();
  EXPECT_NE(all.find("first"), std::string::npos);
  EXPECT_EQ(all.find("third"), std::string::npos);
  const std::string tail = "error: too many errors (3), stopping\n";
  ASSERT_GE(all.size(), tail.size());
  EXPECT_EQ(all.substr(all.size() - tail.size()), tail);
}

}  // namespace
