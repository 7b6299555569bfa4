// File loading and the front-end pipeline for tools. See Frontend.h.
#include "xacc/camel/Frontend.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include "xacc/camel/CamelDiag.h"
#include "xacc/camel/Lexer.h"

namespace xacc::camel {

namespace fs = std::filesystem;

const std::string* loadSourceFile(const std::string& path, support::DiagnosticEngine& diags) {
  if (path.rfind(kBuiltinSourcePrefix, 0) == 0) {
    std::string stem = fs::path(path).stem().string();
    if (const char* text = builtinModuleSource(stem)) return diags.sourceManager().addBuffer(path, text);
  }
  std::error_code ec;
  std::string reason;
  if (fs::is_directory(path, ec)) {
    reason = "it is a directory";
  } else {
    std::ifstream in(path, std::ios::binary);
    if (in) {
      std::ostringstream text;
      text << in.rdbuf();
      if (!in.bad()) return diags.sourceManager().addBuffer(path, text.str());
    }
    reason = std::strerror(errno ? errno : ENOENT);
  }
  report(diags, Diag::CannotReadFile, support::SourceLoc{}, {path, reason});
  return nullptr;
}

ParsedFile parseFile(const std::string& path, ASTContext& ctx, support::DiagnosticEngine& diags,
                     const ParseOptions& opts) {
  ParsedFile out;
  out.file = loadSourceFile(path, diags);
  if (!out.file) return out;
  std::string_view text = diags.sourceManager().bufferText(out.file);
  out.tokens = lex(text, out.file, diags);
  out.module = parseModule(out.tokens, out.file, ctx, diags, opts);
  return out;
}

std::vector<std::string> findCamelFiles(const std::string& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec),
       end;
       !ec && it != end; it.increment(ec)) {
    std::error_code fec;
    if (it->is_regular_file(fec) && it->path().extension() == ".cml")
      files.push_back(it->path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace xacc::camel
