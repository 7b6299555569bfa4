// Unit tests of the Camel lexer: every literal form and base, escapes, the
// three string forms, keywords, longest-match punctuation, comments and the
// adjacency flags of spec 3.7, plus the codes of lexical diagnostics.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "xacc/camel/Lexer.h"

using namespace xacc::camel;
using xacc::support::DiagnosticEngine;
using xacc::support::SourceManager;

namespace {

struct Lexed {
  SourceManager sm;
  DiagnosticEngine diags{&sm};
  std::string text;
  std::vector<Token> tokens;

  explicit Lexed(std::string src) : text(std::move(src)) {
    const std::string* file = sm.addBuffer("test.cml", text);
    tokens = lex(sm.bufferText(file), file, diags);
  }
  const Token& operator[](size_t i) const { return tokens.at(i); }
  std::vector<TokenKind> kinds() const {
    std::vector<TokenKind> out;
    for (const Token& t : tokens) out.push_back(t.kind);
    return out;
  }
  std::vector<std::string> codes() const {
    std::vector<std::string> out;
    for (const auto& d : diags.diagnostics()) out.push_back(d.code);
    return out;
  }
};

using TK = TokenKind;

TEST(CamelLexer, EmptyInputIsJustEof) {
  Lexed l("");
  ASSERT_EQ(l.tokens.size(), 1u);
  EXPECT_EQ(l[0].kind, TK::eof);
  EXPECT_FALSE(l.diags.hasErrors());
}

TEST(CamelLexer, IntegerBases) {
  Lexed l("0 42 017 0x1F 0XfF 0b101 0B1 007");
  EXPECT_FALSE(l.diags.hasErrors());
  uint64_t want[] = {0, 42, 15, 31, 255, 5, 1, 7};
  for (size_t i = 0; i < 8; ++i) {
    EXPECT_EQ(l[i].kind, TK::integer) << i;
    EXPECT_EQ(l[i].intValue, want[i]) << i;
  }
  EXPECT_TRUE(l[1].intDecimal);
  EXPECT_FALSE(l[2].intDecimal);
}

TEST(CamelLexer, ExponentOnIntegerStaysInteger) {
  Lexed l("1e5 2e5 1e8 3E2 1e+3");
  EXPECT_FALSE(l.diags.hasErrors());
  uint64_t want[] = {100000, 200000, 100000000, 300, 1000};
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(l[i].kind, TK::integer);
    EXPECT_EQ(l[i].intValue, want[i]);
  }
}

TEST(CamelLexer, NegativeExponentTruncatesWithWarning) {
  Lexed l("1e-2 100e-2");
  EXPECT_EQ(l[0].intValue, 0u);
  EXPECT_EQ(l[1].intValue, 1u);
  EXPECT_FALSE(l.diags.hasErrors());
  EXPECT_EQ(l.codes(), std::vector<std::string>{"W1017"});  // only the lossy one
}

TEST(CamelLexer, Reals) {
  Lexed l("0.5 3.25e-3 40.0e9 1.5E+2 012.5");
  EXPECT_FALSE(l.diags.hasErrors());
  double want[] = {0.5, 3.25e-3, 40.0e9, 150.0, 12.5};
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(l[i].kind, TK::real);
    EXPECT_DOUBLE_EQ(l[i].realValue, want[i]);
  }
}

TEST(CamelLexer, DotsAroundNumbersAreNotReals) {
  // `.5` and `5.` are not real literals; `t.0.1` lexes `0.1` as a real.
  EXPECT_EQ(Lexed(".5").kinds(), (std::vector<TK>{TK::period, TK::integer, TK::eof}));
  EXPECT_EQ(Lexed("5.").kinds(), (std::vector<TK>{TK::integer, TK::period, TK::eof}));
  EXPECT_EQ(Lexed("t.0.1").kinds(),
            (std::vector<TK>{TK::identifier, TK::period, TK::real, TK::eof}));
  EXPECT_EQ(Lexed("1..2").kinds(), (std::vector<TK>{TK::integer, TK::dotdot, TK::integer, TK::eof}));
}

TEST(CamelLexer, SignIsAlwaysASeparateToken) {
  Lexed l("a-1 -2 +3");
  EXPECT_EQ(l.kinds(), (std::vector<TK>{TK::identifier, TK::minus, TK::integer, TK::minus,
                                        TK::integer, TK::plus, TK::integer, TK::eof}));
}

TEST(CamelLexer, IntegerRange) {
  Lexed ok("9223372036854775808 0xFFFFFFFFFFFFFFFF");  // 2^63 only valid negated (parser)
  EXPECT_FALSE(ok.diags.hasErrors());
  EXPECT_EQ(ok[1].intValue, ~uint64_t(0));
  EXPECT_EQ(Lexed("9223372036854775809").codes(), std::vector<std::string>{"E1013"});
  EXPECT_EQ(Lexed("0x1FFFFFFFFFFFFFFFF").codes(), std::vector<std::string>{"E1013"});
  EXPECT_EQ(Lexed("1e30").codes(), std::vector<std::string>{"E1013"});
}

TEST(CamelLexer, NumberErrors) {
  EXPECT_EQ(Lexed("0x").codes(), std::vector<std::string>{"E1007"});
  EXPECT_EQ(Lexed("0b").codes(), std::vector<std::string>{"E1008"});
  EXPECT_EQ(Lexed("08").codes(), std::vector<std::string>{"E1009"});
  EXPECT_EQ(Lexed("0b102").codes(), std::vector<std::string>{"E1010"});
  EXPECT_EQ(Lexed("1e").codes(), std::vector<std::string>{"E1011"});
  EXPECT_EQ(Lexed("12abc").codes(), std::vector<std::string>{"E1012"});
  EXPECT_EQ(Lexed("1.0e999").codes(), std::vector<std::string>{"E1014"});
}

TEST(CamelLexer, StringsBothQuotes) {
  Lexed l(R"('single' "double" '' "it's" 'say "hi"')");
  EXPECT_FALSE(l.diags.hasErrors());
  const char* want[] = {"single", "double", "", "it's", "say \"hi\""};
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(l[i].kind, TK::string);
    EXPECT_EQ(l[i].strValue, want[i]);
  }
}

TEST(CamelLexer, EscapeSequences) {
  Lexed l(R"('\n\t\r\a\b\f\v\\\"\'')");
  EXPECT_EQ(l[0].strValue, std::string("\n\t\r\a\b\f\v\\\"'"));
  // \0 starts an octal escape of at most three digits (the 0 counts).
  EXPECT_EQ(Lexed(R"('\033[2J')")[0].strValue, std::string("\x1b[2J"));
  EXPECT_EQ(Lexed(R"('\0')")[0].strValue, std::string(1, '\0'));
  EXPECT_EQ(Lexed(R"('\0123')")[0].strValue, std::string("\n3"));
  // \xH and \xHH.
  EXPECT_EQ(Lexed(R"('\x41\x7e\x4g')")[0].strValue, std::string("A~\x04g"));
  // Unknown escapes (and \x without digits) are kept verbatim.
  EXPECT_EQ(Lexed(R"('\d+\q\x')")[0].strValue, std::string("\\d+\\q\\x"));
}

TEST(CamelLexer, RawLineBreaksInStrings) {
  Lexed l("'a\nb' x");
  EXPECT_EQ(l[0].strValue, "a\nb");
  EXPECT_EQ(l[1].line, 2u);
  EXPECT_EQ(l[1].col, 4u);
  EXPECT_EQ(l[0].endLine, 2u);
}

TEST(CamelLexer, MultiLineStrings) {
  Lexed l("'''line 1\n'quoted' \\t end''' \"\"\"x\"\"\"");
  EXPECT_EQ(l[0].kind, TK::multi_string);
  EXPECT_EQ(l[0].strValue, "line 1\n'quoted' \t end");
  EXPECT_EQ(l[1].kind, TK::multi_string);
  EXPECT_EQ(l[1].strValue, "x");
}

TEST(CamelLexer, FormatStrings) {
  Lexed l(R"(`a {x} \` \\ \n`)");
  EXPECT_EQ(l[0].kind, TK::fstring);
  EXPECT_EQ(l[0].strValue, "a {x} ` \\ \n");
}

TEST(CamelLexer, UnterminatedStrings) {
  EXPECT_EQ(Lexed("'abc").codes(), std::vector<std::string>{"E1003"});
  EXPECT_EQ(Lexed("\"abc\\\"").codes(), std::vector<std::string>{"E1003"});
  EXPECT_EQ(Lexed("'''abc''").codes(), std::vector<std::string>{"E1004"});
  EXPECT_EQ(Lexed("`abc").codes(), std::vector<std::string>{"E1005"});
}

TEST(CamelLexer, BooleansNullAndKeywords) {
  Lexed l("true false null let letter _ _x func");
  EXPECT_EQ(l.kinds(), (std::vector<TK>{TK::kw_true, TK::kw_false, TK::kw_null, TK::kw_let,
                                        TK::identifier, TK::underscore, TK::identifier,
                                        TK::kw_func, TK::eof}));
}

TEST(CamelLexer, LongestMatchPunctuation) {
  Lexed l("... .. . ?.. ?-> -> => :: === !== == != <= >= && || ?? !! += -= *= /= %= ^= @= &= |=");
  EXPECT_EQ(l.kinds(),
            (std::vector<TK>{TK::ellipsis, TK::dotdot, TK::period, TK::question_dotdot,
                             TK::question_arrow, TK::arrow, TK::fat_arrow, TK::coloncolon,
                             TK::equalequalequal, TK::exclaimequalequal, TK::equalequal,
                             TK::exclaimequal, TK::lessequal, TK::greaterequal, TK::ampamp,
                             TK::pipepipe, TK::questionquestion, TK::exclaimexclaim,
                             TK::plusequal, TK::minusequal, TK::starequal, TK::slashequal,
                             TK::percentequal, TK::caretequal, TK::atequal, TK::ampequal,
                             TK::pipeequal, TK::eof}));
  Lexed singles("; , . : = ( ) [ ] { } < > + - * / % ^ @ ! ~ & | ? \\ _");
  EXPECT_FALSE(singles.diags.hasErrors());
  EXPECT_EQ(singles.tokens.size(), 28u);
  // Longest match without spaces: `a->b`, `x...y`, `a===b`, `f<a>=b`.
  EXPECT_EQ(Lexed("x...y").kinds(), (std::vector<TK>{TK::identifier, TK::ellipsis, TK::identifier, TK::eof}));
  EXPECT_EQ(Lexed("a====b").kinds(),
            (std::vector<TK>{TK::identifier, TK::equalequalequal, TK::equal, TK::identifier, TK::eof}));
}

TEST(CamelLexer, Comments) {
  Lexed l("a // line\nb /* block\n still */ c # directive\nd");
  EXPECT_EQ(l.kinds(), (std::vector<TK>{TK::identifier, TK::identifier, TK::identifier,
                                        TK::identifier, TK::eof}));
  EXPECT_EQ(Lexed("/* a /* b */ c */").kinds().front(), TK::identifier);  // no nesting
  EXPECT_EQ(Lexed("x /* open").codes(), std::vector<std::string>{"E1006"});
}

TEST(CamelLexer, AdjacencyFlags) {
  Lexed l("f(1) f (1) xs/*c*/[0]\n(x)");
  // f ( 1 ) f ( 1 ) xs [ 0 ] ( x )
  EXPECT_FALSE(l[0].spaceBefore);
  EXPECT_TRUE(l[0].newlineBefore);  // first token of the file starts a line
  EXPECT_TRUE(l[1].adjacent());     // f(
  EXPECT_TRUE(l[4].spaceBefore);    // second f
  EXPECT_TRUE(l[5].spaceBefore);    // f (  -- not adjacent
  EXPECT_FALSE(l[5].newlineBefore);
  EXPECT_TRUE(l[9].spaceBefore);    // a comment separates xs and [
  EXPECT_TRUE(l[12].newlineBefore); // ( on a new line
  EXPECT_TRUE(l[12].spaceBefore);
}

TEST(CamelLexer, Positions) {
  Lexed l("let x =\n\t  42");
  EXPECT_EQ(l[3].line, 2u);
  EXPECT_EQ(l[3].col, 4u);  // a tab counts as one column
  EXPECT_EQ(l[3].length, 2u);
  EXPECT_EQ(l[3].text, "42");
  EXPECT_EQ(l[3].endCol, 6u);
}

TEST(CamelLexer, InvalidCharactersAreSkipped) {
  Lexed l("a $ b");
  EXPECT_EQ(l.codes(), std::vector<std::string>{"E1001"});
  EXPECT_EQ(l.kinds(), (std::vector<TK>{TK::identifier, TK::identifier, TK::eof}));
  EXPECT_TRUE(l[1].spaceBefore);
  Lexed u("x = \xC3\xA9t\xC3\xA9");  // "été": two non-ASCII sequences
  EXPECT_EQ(u.codes(), (std::vector<std::string>{"E1002", "E1002"}));
  // Non-ASCII is fine inside strings and comments.
  EXPECT_FALSE(Lexed("'\xC3\xA9' // \xE2\x9C\x93").diags.hasErrors());
}

TEST(CamelLexer, DumpFormat) {
  Lexed l("f(0x10, 'a\\n')");
  std::string dump = dumpTokens(l.tokens);
  EXPECT_NE(dump.find("1:1 identifier 'f' nl\n"), std::string::npos) << dump;
  EXPECT_NE(dump.find("1:2 l_paren '(' adj\n"), std::string::npos) << dump;
  EXPECT_NE(dump.find("1:3 integer '0x10' adj value=16\n"), std::string::npos) << dump;
  EXPECT_NE(dump.find("1:9 string '\\'a\\\\n\\'' sp value=\"a\\n\"\n"), std::string::npos) << dump;
}

}  // namespace
