// Robustness of the Camel front end: thousands of mutated versions of the
// program corpus (tests/camel/programs) go through the lexer and parser in
// process. Each input must either parse cleanly or produce diagnostics; the
// test fails on a crash (under sanitizers: on any memory error), on an error
// without a location, or if parsing is pathologically slow. Mutations are
// token deletions, duplications and swaps, random bytes, truncation and deep
// nesting; the seed is fixed so failures reproduce.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "xacc/camel/Lexer.h"
#include "xacc/camel/Parser.h"

using namespace xacc::camel;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> loadCorpus() {
  // The build passes the corpus directory: __FILE__ may be relative to the
  // build tree (ccache's base_dir rewriting) and so not usable from ctest.
#ifdef XACC_CAMEL_CORPUS_DIR
  fs::path dir = XACC_CAMEL_CORPUS_DIR;
#else
  fs::path dir = fs::path(__FILE__).parent_path().parent_path() / "camel" / "programs";
#endif
  std::vector<std::string> out;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() != ".cml") continue;
    std::ifstream in(it->path(), std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    out.push_back(text.str());
  }
  return out;
}

/// Token spans found by the real lexer (so mutations cut at token boundaries).
std::vector<std::pair<size_t, size_t>> tokenSpans(const std::string& text) {
  xacc::support::SourceManager sm;
  xacc::support::DiagnosticEngine diags(&sm);
  const std::string* file = sm.addBuffer("corpus.cml", text);
  std::vector<std::pair<size_t, size_t>> spans;
  for (const Token& t : lex(sm.bufferText(file), file, diags))
    if (t.isNot(TokenKind::eof)) spans.emplace_back(t.offset, t.length);
  return spans;
}

std::string mutate(const std::string& src, std::mt19937& rng) {
  auto spans = tokenSpans(src);
  auto pick = [&](size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); };
  std::string s = src;
  int kind = int(pick(7));
  if (spans.empty()) kind = 4;
  switch (kind) {
    case 0: {  // delete a token
      auto [off, len] = spans[pick(spans.size())];
      s.erase(off, len);
      break;
    }
    case 1: {  // duplicate a token
      auto [off, len] = spans[pick(spans.size())];
      s.insert(off, src.substr(off, len));
      break;
    }
    case 2: {  // swap two tokens (the later one first, to keep offsets valid)
      auto a = spans[pick(spans.size())], b = spans[pick(spans.size())];
      if (a.first > b.first) std::swap(a, b);
      if (a.first + a.second <= b.first) {
        std::string ta = src.substr(a.first, a.second), tb = src.substr(b.first, b.second);
        s.replace(b.first, b.second, ta);
        s.replace(a.first, a.second, tb);
      }
      break;
    }
    case 3: {  // copy a token somewhere else
      auto [off, len] = spans[pick(spans.size())];
      s.insert(pick(s.size() + 1), src.substr(off, len));
      break;
    }
    case 4: {  // random bytes
      size_t n = 1 + pick(8);
      for (size_t i = 0; i < n; ++i) s.insert(s.begin() + long(pick(s.size() + 1)), char(pick(256)));
      break;
    }
    case 5:  // truncate
      s.resize(pick(s.size() + 1));
      break;
    case 6: {  // deep nesting inserted at a token boundary
      static const char* openers[] = {"(", "[", "{", "if c then ", "-(", "f(", "x->", "<"};
      std::string open = openers[pick(8)];
      size_t depth = 1 + pick(600);
      std::string run;
      for (size_t i = 0; i < depth; ++i) run += open;
      s.insert(spans[pick(spans.size())].first, run);
      break;
    }
  }
  // Sometimes stack several mutations.
  if (pick(4) == 0) return mutate(s, rng);
  return s;
}

TEST(CamelFuzz, MutatedCorpusNeverCrashesOrHangs) {
  std::vector<std::string> corpus = loadCorpus();
  ASSERT_GE(corpus.size(), 40u) << "corpus not found next to " << __FILE__;
  std::mt19937 rng(20240611);
  const int kInputs = 3000;
  auto start = std::chrono::steady_clock::now();
  int clean = 0, diagnosed = 0;
  for (int i = 0; i < kInputs; ++i) {
    std::string text = mutate(corpus[size_t(i) % corpus.size()], rng);
    xacc::support::SourceManager sm;
    xacc::support::DiagnosticEngine diags(&sm);
    ASTContext ctx;
    const std::string* file = sm.addBuffer("fuzz.cml", text);
    auto t0 = std::chrono::steady_clock::now();
    Module* m = parseSource(sm.bufferText(file), file, ctx, diags);
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ASSERT_NE(m, nullptr);
    ASSERT_LT(secs, 2.0) << "slow input #" << i << ":\n" << text;
    dumpAST(m);  // the printer must cope with partial trees
    for (const auto& d : diags.diagnostics())
      if (d.severity == xacc::support::Severity::Error)
        ASSERT_TRUE(d.loc.valid()) << "unlocated error '" << d.message << "' for input #" << i;
    (diags.hasErrors() ? diagnosed : clean)++;
  }
  double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_GT(diagnosed, kInputs / 2);  // most mutations break the program
  EXPECT_LT(total, 60.0);
  std::printf("camel fuzz: %d inputs, %d clean, %d with diagnostics, %.2f s\n", kInputs, clean,
              diagnosed, total);
}

TEST(CamelFuzz, RandomBytes) {
  std::mt19937 rng(7);
  for (int i = 0; i < 500; ++i) {
    std::string text(size_t(rng() % 400), '\0');
    for (char& c : text) c = char(rng() % 256);
    xacc::support::SourceManager sm;
    xacc::support::DiagnosticEngine diags(&sm);
    ASTContext ctx;
    const std::string* file = sm.addBuffer("bytes.cml", text);
    ASSERT_NE(parseSource(sm.bufferText(file), file, ctx, diags), nullptr);
  }
}

}  // namespace
