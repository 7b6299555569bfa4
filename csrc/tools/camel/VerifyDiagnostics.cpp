// Expectation comments and input splitting for `camel check`. See
// VerifyDiagnostics.h.
#include "VerifyDiagnostics.h"

#include <regex>
#include <sstream>

namespace xacc::camel::tool {

namespace {

struct Expected {
  support::Severity severity;
  uint32_t line;
  std::string text;
  bool matched = false;
};

std::vector<Expected> collectExpected(const std::string& text) {
  std::vector<Expected> out;
  // At most six digits in `@+N`, so std::stoul cannot overflow.
  static const std::regex re(R"(expected-(error|warning)(@([+-]?)(\d{1,6}))?\s*\{\{(.*?)\}\})");
  std::istringstream in(text);
  std::string line;
  uint32_t lineNo = 0;
  while (std::getline(in, line)) {
    ++lineNo;
    for (std::sregex_iterator it(line.begin(), line.end(), re), end; it != end; ++it) {
      const std::smatch& m = *it;
      uint32_t target = lineNo;
      if (m[2].matched) {
        uint32_t n = uint32_t(std::stoul(m[4].str()));
        if (m[3].str() == "+") target = lineNo + n;
        else if (m[3].str() == "-") target = lineNo - n;
        else target = n;
      }
      support::Severity sev =
          m[1].str() == "error" ? support::Severity::Error : support::Severity::Warning;
      out.push_back({sev, target, m[5].str()});
    }
  }
  return out;
}

}  // namespace

std::vector<std::string> splitInputFile(const std::string& text) {
  std::vector<std::string> chunks;
  std::istringstream in(text);
  std::string line, cur;
  size_t lineNo = 0, chunkStart = 0;
  while (std::getline(in, line)) {
    if (line.rfind("// -----", 0) == 0) {
      chunks.push_back(std::string(chunkStart, '\n') + cur);
      cur.clear();
      chunkStart = lineNo + 1;
    } else {
      cur += line + "\n";
    }
    ++lineNo;
  }
  chunks.push_back(std::string(chunkStart, '\n') + cur);
  return chunks;
}

std::string verifyDiagnostics(const std::string& fileName, const std::string& text,
                              const std::vector<support::Diagnostic>& diags) {
  std::vector<Expected> expected = collectExpected(text);
  std::string problems;
  for (const support::Diagnostic& d : diags) {
    if (d.severity == support::Severity::Note) continue;
    std::string full = "[" + d.code + "] " + d.message;
    bool found = false;
    for (Expected& e : expected) {
      if (!e.matched && e.severity == d.severity && e.line == d.loc.line &&
          full.find(e.text) != std::string::npos) {
        e.matched = found = true;
        break;
      }
    }
    if (!found)
      problems += fileName + ":" + std::to_string(d.loc.line) + ":" + std::to_string(d.loc.col) +
                  ": error: unexpected " + support::severityName(d.severity) + ": " + full + "\n";
  }
  for (const Expected& e : expected)
    if (!e.matched)
      problems += fileName + ":" + std::to_string(e.line) + ": error: expected " +
                  support::severityName(e.severity) + " \"" + e.text + "\" was not produced\n";
  return problems;
}

}  // namespace xacc::camel::tool
