// Located diagnostics shared by every component: a source location, a code, a
// severity, a message, notes and an optional suggestion. Core C++ returns
// failures by reporting into a DiagnosticEngine and returning false/nullptr;
// exceptions appear only at the Python and libtorch boundaries. Rendering is
// either human text (`file:line:col: error[E0101]: msg` followed by the source
// line and a caret) or one JSON object per diagnostic.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace xacc::support {

/// A position in a source buffer. Lines and columns are 1-based; line 0 means
/// "no location". `file` points at a string owned by the SourceManager (or a
/// static), so copying a SourceLoc is cheap.
struct SourceLoc {
  const std::string* file = nullptr;
  uint32_t line = 0;
  uint32_t col = 0;
  uint32_t length = 1;  ///< width of the caret underline

  bool valid() const { return file != nullptr && line > 0; }
  std::string str() const;  ///< "file:line:col" or "<unknown>"
};

/// Interns file names and keeps source text so diagnostics can quote lines.
class SourceManager {
public:
  /// Returns the stable name pointer for `name`; registers `text` if given.
  const std::string* addBuffer(std::string name, std::string text);
  const std::string* internName(std::string_view name);
  /// Text of line `line` (1-based) of `file`, or empty when unknown.
  std::string_view lineText(const std::string* file, uint32_t line) const;
  std::string_view bufferText(const std::string* file) const;

  /// A process-wide manager used when no explicit one is passed.
  static SourceManager& global();

private:
  struct Buffer {
    std::string text;
    std::vector<uint32_t> lineStarts;
  };
  std::unordered_map<std::string, std::unique_ptr<std::string>> names_;
  std::unordered_map<const std::string*, Buffer> buffers_;
};

enum class Severity : uint8_t { Note, Warning, Error };

const char* severityName(Severity s);

struct Diagnostic {
  Severity severity = Severity::Error;
  std::string code;  ///< stable code such as "E0101"; may be empty for notes
  SourceLoc loc;
  std::string message;
  std::vector<Diagnostic> notes;
  std::string suggestion;  ///< "help: ..." line when non-empty
};

/// Collects diagnostics. Components report into it and return a failure value;
/// tools decide how to render. Never throws.
class DiagnosticEngine {
public:
  explicit DiagnosticEngine(SourceManager* sm = &SourceManager::global()) : sm_(sm) {}

  Diagnostic& report(Severity sev, std::string code, SourceLoc loc, std::string message);
  Diagnostic& error(std::string code, SourceLoc loc, std::string message) {
    return report(Severity::Error, std::move(code), loc, std::move(message));
  }
  Diagnostic& warning(std::string code, SourceLoc loc, std::string message) {
    return report(Severity::Warning, std::move(code), loc, std::move(message));
  }

  bool hasErrors() const { return errorCount_ > 0; }
  size_t errorCount() const { return errorCount_; }
  const std::vector<Diagnostic>& diagnostics() const { return diags_; }
  void clear() {
    diags_.clear();
    errorCount_ = 0;
  }
  /// Stop recording after this many errors (protects against cascades).
  void setErrorLimit(size_t n) { errorLimit_ = n; }

  SourceManager& sourceManager() const { return *sm_; }

  /// Human-readable rendering with source line and caret.
  std::string renderText(const Diagnostic& d) const;
  std::string renderAllText() const;
  /// One JSON object per line.
  std::string renderJson(const Diagnostic& d) const;
  std::string renderAllJson() const;

private:
  SourceManager* sm_;
  std::vector<Diagnostic> diags_;
  size_t errorCount_ = 0;
  size_t errorLimit_ = 100;
  Diagnostic overflow_;
};

/// Escapes a string for a JSON string literal (without the quotes).
std::string jsonEscape(std::string_view s);

}  // namespace xacc::support
