// Expectation comments for --verify-diagnostics. See VerifyDiagnostics.h.
#include "xacc/support/VerifyDiagnostics.h"

#include <string_view>

namespace xacc::support {

namespace {

/// Parses one comment body after "expected-" at `s[i]`; on success appends it
/// and returns the index after its closing "}}", else returns npos.
size_t parseOne(std::string_view s, size_t i, uint32_t lineNo, std::vector<ExpectedDiagnostic>& out) {
  Severity sev;
  if (s.substr(i, 5) == "error") {
    sev = Severity::Error;
    i += 5;
  } else if (s.substr(i, 7) == "warning") {
    sev = Severity::Warning;
    i += 7;
  } else {
    return std::string_view::npos;
  }
  uint32_t target = lineNo;
  if (i < s.size() && s[i] == '@') {
    ++i;
    char sign = 0;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) sign = s[i++];
    uint32_t n = 0;
    size_t digits = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      if (++digits > 6) return std::string_view::npos;  // no overflow, no absurd lines
      n = n * 10 + uint32_t(s[i++] - '0');
    }
    if (!digits) return std::string_view::npos;
    target = sign == '+' ? lineNo + n : sign == '-' ? lineNo - n : n;
  }
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
  if (s.substr(i, 2) != "{{") return std::string_view::npos;
  i += 2;
  size_t close = s.find("}}", i);
  if (close == std::string_view::npos) return std::string_view::npos;
  out.push_back({sev, target, std::string(s.substr(i, close - i))});
  return close + 2;
}

}  // namespace

std::vector<ExpectedDiagnostic> parseExpectedDiagnostics(const std::string& text) {
  std::vector<ExpectedDiagnostic> out;
  std::string_view all(text);
  uint32_t lineNo = 0;
  for (size_t start = 0; start <= all.size();) {
    size_t end = all.find('\n', start);
    if (end == std::string_view::npos) end = all.size();
    std::string_view line = all.substr(start, end - start);
    ++lineNo;
    for (size_t at = line.find("expected-"); at != std::string_view::npos;) {
      size_t after = parseOne(line, at + 9, lineNo, out);
      at = line.find("expected-", after == std::string_view::npos ? at + 9 : after);
    }
    if (end == all.size()) break;
    start = end + 1;
  }
  return out;
}

std::string verifyDiagnostics(const std::string& fileName, const std::string& text,
                              const std::vector<Diagnostic>& diags, VerifyDiagnosticsOptions options) {
  auto checked = [&](Severity s) {
    return s == Severity::Error || (s == Severity::Warning && options.warnings);
  };
  std::vector<ExpectedDiagnostic> expected;
  for (ExpectedDiagnostic& e : parseExpectedDiagnostics(text))
    if (checked(e.severity)) expected.push_back(std::move(e));
  std::vector<bool> matched(expected.size(), false);
  std::string problems;
  for (const Diagnostic& d : diags) {
    if (!checked(d.severity)) continue;
    std::string full = d.code.empty() ? d.message : "[" + d.code + "] " + d.message;
    bool found = false;
    for (size_t i = 0; i < expected.size() && !found; ++i) {
      const ExpectedDiagnostic& e = expected[i];
      if (!matched[i] && e.severity == d.severity && e.line == d.loc.line &&
          full.find(e.text) != std::string::npos)
        matched[i] = found = true;
    }
    if (!found)
      problems += fileName + ":" + std::to_string(d.loc.line) + ":" + std::to_string(d.loc.col) +
                  ": error: unexpected " + severityName(d.severity) + ": " + full + "\n";
  }
  for (size_t i = 0; i < expected.size(); ++i)
    if (!matched[i])
      problems += fileName + ":" + std::to_string(expected[i].line) + ": error: expected " +
                  severityName(expected[i].severity) + " \"" + expected[i].text +
                  "\" was not produced\n";
  return problems;
}

std::vector<std::string> splitInputFile(const std::string& text) {
  std::vector<std::string> chunks;
  std::string cur;
  size_t lineNo = 0, chunkStart = 0;
  std::string_view all(text);
  for (size_t start = 0; start < all.size();) {
    size_t end = all.find('\n', start);
    std::string_view line = all.substr(start, end == std::string_view::npos ? all.size() - start : end - start);
    if (line.substr(0, 8) == "// -----") {
      chunks.push_back(std::string(chunkStart, '\n') + cur);
      cur.clear();
      chunkStart = lineNo + 1;
    } else {
      cur.append(line);
      cur += '\n';
    }
    ++lineNo;
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  chunks.push_back(std::string(chunkStart, '\n') + cur);
  return chunks;
}

}  // namespace xacc::support
