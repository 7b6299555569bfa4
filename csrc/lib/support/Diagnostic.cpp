// Implementation of source buffers and diagnostic rendering. See Diagnostic.h.
#include "xacc/support/Diagnostic.h"

#include <algorithm>
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
    if (!line.empty()) {
      out += "  ";
      out += line;
      out += "\n  ";
      // Keep tabs so the caret lines up under the source text.
      for (uint32_t i = 1; i < d.loc.col && i - 1 < line.size(); ++i)
        out += line[i - 1] == '\t' ? '\t' : ' ';
      out += '^';
      uint32_t len = d.loc.length;
      uint32_t avail = d.loc.col <= line.size() ? uint32_t(line.size() - d.loc.col + 1) : 1;
      for (uint32_t i = 1; i < std::min(len, avail); ++i) out += '~';
      out += '\n';
    }
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

static void jsonOne(const Diagnostic& d, std::string& out) {
  out += "{\"severity\":\"";
  out += severityName(d.severity);
  out += "\",\"code\":\"" + jsonEscape(d.code) + "\"";
  out += ",\"file\":\"" + (d.loc.file ? jsonEscape(*d.loc.file) : std::string()) + "\"";
  out += ",\"line\":" + std::to_string(d.loc.line);
  out += ",\"col\":" + std::to_string(d.loc.col);
  out += ",\"message\":\"" + jsonEscape(d.message) + "\"";
  if (!d.suggestion.empty()) out += ",\"suggestion\":\"" + jsonEscape(d.suggestion) + "\"";
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
