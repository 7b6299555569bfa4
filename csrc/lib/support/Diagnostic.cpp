// Implementation of source buffers and diagnostic rendering. See Diagnostic.h.
#include "xacc/support/Diagnostic.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <mutex>

namespace xacc::support {

std::string SourceLoc::str() const {
  if (file && line == 0) return *file;  // a whole-file problem (unreadable file)
  if (!valid()) return "<unknown>";
  return *file + ":" + std::to_string(line) + ":" + std::to_string(col);
}

static std::mutex& smMutex() {
  static std::mutex m;
  return m;
}

const std::string* SourceManager::internName(std::string_view name) {
  std::lock_guard<std::mutex> lock(smMutex());
  auto it = names_.find(std::string(name));
  if (it != names_.end()) return it->second.get();
  auto owned = std::make_unique<std::string>(name);
  const std::string* p = owned.get();
  names_.emplace(std::string(name), std::move(owned));
  return p;
}

const std::string* SourceManager::addBuffer(std::string name, std::string text) {
  const std::string* key = internName(name);
  std::lock_guard<std::mutex> lock(smMutex());
  Buffer& b = buffers_[key];
  b.text = std::move(text);
  b.lineStarts.assign(1, 0);
  for (uint32_t i = 0; i < b.text.size(); ++i)
    if (b.text[i] == '\n') b.lineStarts.push_back(i + 1);
  return key;
}

std::string_view SourceManager::bufferText(const std::string* file) const {
  std::lock_guard<std::mutex> lock(smMutex());
  auto it = buffers_.find(file);
  if (it == buffers_.end()) return {};
  return it->second.text;
}

std::string_view SourceManager::lineText(const std::string* file, uint32_t line) const {
  std::lock_guard<std::mutex> lock(smMutex());
  auto it = buffers_.find(file);
  if (it == buffers_.end() || line == 0 || line > it->second.lineStarts.size()) return {};
  const Buffer& b = it->second;
  uint32_t start = b.lineStarts[line - 1];
  uint32_t end = line < b.lineStarts.size() ? b.lineStarts[line] : b.text.size();
  std::string_view v(b.text.data() + start, end - start);
  while (!v.empty() && (v.back() == '\n' || v.back() == '\r')) v.remove_suffix(1);
  return v;
}

SourceManager& SourceManager::global() {
  static SourceManager* sm = new SourceManager();  // intentionally leaked: used at exit
  return *sm;
}

const char* severityName(Severity s) {
  switch (s) {
    case Severity::Note: return "note";
    case Severity::Warning: return "warning";
    case Severity::Error: return "error";
  }
  return "error";
}

Diagnostic& DiagnosticEngine::report(Severity sev, std::string code, SourceLoc loc,
                                     std::string message) {
  if (sev == Severity::Error) {
    if (errorCount_ >= errorLimit_) {
      ++errorCount_;
      overflow_ = Diagnostic{};
      return overflow_;
    }
    ++errorCount_;
  }
  diags_.push_back(Diagnostic{sev, std::move(code), loc, std::move(message), {}, {}});
  return diags_.back();
}

// Note [Source echo]: the source line under a diagnostic is echoed as
// printable text: a NUL or other control byte (tabs excepted) shows as an
// escape (\0, \x1b), so the echo can neither end early nor garble the
// terminal; a line longer than kEchoWidth bytes is clipped to a window around
// the caret, with "..." at each cut end. The caret and `~` run line up with
// the shown text.
static constexpr size_t kEchoWidth = 160;

/// How byte `c` of a source line is shown in the echo.
static std::string echoByte(unsigned char c) {
  if (c == 0) return "\\0";
  if ((c < 0x20 && c != '\t') || c == 0x7f) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "\\x%02x", c);
    return buf;
  }
  return std::string(1, char(c));
}

static void echoLine(std::string_view line, uint32_t col, uint32_t len, std::string& out) {
  size_t caret = std::min<size_t>(col > 0 ? col - 1 : 0, line.size());
  size_t lo = 0, hi = line.size();
  if (line.size() > kEchoWidth) {
    lo = caret > kEchoWidth / 2 ? caret - kEchoWidth / 2 : 0;
    hi = std::min(line.size(), lo + kEchoWidth);
    if (hi == line.size()) lo = line.size() - kEchoWidth;
    // Never cut inside a UTF-8 sequence.
    while (lo > 0 && (static_cast<unsigned char>(line[lo]) & 0xC0) == 0x80) --lo;
    while (hi < line.size() && (static_cast<unsigned char>(line[hi]) & 0xC0) == 0x80) ++hi;
  }
  std::string text = lo > 0 ? "..." : "";
  std::string pad(text.size(), ' ');
  // The caret covers the first `len` bytes from the caret (at least one).
  size_t end = std::min(hi, caret + std::max<size_t>(len, 1));
  size_t marked = 0;
  for (size_t i = lo; i < hi; ++i) {
    std::string shown = echoByte(static_cast<unsigned char>(line[i]));
    // Keep tabs so the caret lines up under the source text.
    if (i < caret) pad += shown == "\t" ? shown : std::string(shown.size(), ' ');
    if (i >= caret && i < end) marked += shown.size();
    text += shown;
  }
  if (hi < line.size()) text += "...";
  out += "  ";
  out += text;
  out += "\n  ";
  out += pad;
  out += '^';
  if (marked > 1) out.append(marked - 1, '~');
  out += '\n';
}

static void renderOne(const SourceManager& sm, const Diagnostic& d, std::string& out) {
  out += d.loc.str();
  out += ": ";
  out += severityName(d.severity);
  if (!d.code.empty()) out += "[" + d.code + "]";
  out += ": ";
  out += d.message;
  out += '\n';
  if (d.loc.valid()) {
    std::string_view line = sm.lineText(d.loc.file, d.loc.line);
    if (!line.empty()) echoLine(line, d.loc.col, d.loc.length, out);
  }
  for (const Diagnostic& n : d.notes) renderOne(sm, n, out);
  if (!d.suggestion.empty()) out += "  help: " + d.suggestion + "\n";
}

std::string DiagnosticEngine::renderText(const Diagnostic& d) const {
  std::string out;
  renderOne(*sm_, d, out);
  return out;
}

std::string DiagnosticEngine::renderAllText() const {
  std::string out;
  for (const Diagnostic& d : diags_) renderOne(*sm_, d, out);
  if (errorCount_ > errorLimit_)
    out += "error: too many errors (" + std::to_string(errorCount_) + "), stopping\n";
  return out;
}

std::string jsonEscape(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += char(c);
        }
    }
  }
  return out;
}

/// A JSON string body for diagnostic text: JSON text is UTF-8, and a message
/// may quote source bytes that are not, so each byte of an invalid sequence
/// becomes U+FFFD.
static std::string jsonText(std::string_view s) {
  std::string valid;
  valid.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    unsigned char c = s[i];
    size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    bool ok = len > 0 && i + len <= s.size();
    for (size_t k = 1; ok && k < len; ++k) ok = (static_cast<unsigned char>(s[i + k]) >> 6) == 0x2;
    if (ok && len > 1) {  // reject overlong forms, surrogates and code points past U+10FFFF
      uint32_t cp = c & (0xFF >> (len + 1));
      for (size_t k = 1; k < len; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
      static const uint32_t kMin[5] = {0, 0, 0x80, 0x800, 0x10000};
      ok = cp >= kMin[len] && cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF);
    }
    if (ok) {
      valid.append(s.substr(i, len));
      i += len;
    } else {
      valid += "\xEF\xBF\xBD";
      ++i;
    }
  }
  return jsonEscape(valid);
}

static void jsonOne(const Diagnostic& d, std::string& out) {
  out += "{\"severity\":\"";
  out += severityName(d.severity);
  out += "\",\"code\":\"" + jsonEscape(d.code) + "\"";
  out += ",\"file\":\"" + (d.loc.file ? jsonText(*d.loc.file) : std::string()) + "\"";
  out += ",\"line\":" + std::to_string(d.loc.line);
  out += ",\"col\":" + std::to_string(d.loc.col);
  out += ",\"message\":\"" + jsonText(d.message) + "\"";
  if (!d.suggestion.empty()) out += ",\"suggestion\":\"" + jsonText(d.suggestion) + "\"";
  out += ",\"notes\":[";
  for (size_t i = 0; i < d.notes.size(); ++i) {
    if (i) out += ',';
    jsonOne(d.notes[i], out);
  }
  out += "]}";
}

std::string DiagnosticEngine::renderJson(const Diagnostic& d) const {
  std::string out;
  jsonOne(d, out);
  return out;
}

std::string DiagnosticEngine::renderAllJson() const {
  std::string out;
  for (const Diagnostic& d : diags_) {
    jsonOne(d, out);
    out += '\n';
  }
  return out;
}

}  // namespace xacc::support
