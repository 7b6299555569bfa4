// cmlconfig.json (Config.h).
#include "Config.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "xacc/camel/Executor.h"

namespace xacc::camel::tool {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

/// A char iterator that publishes how far the parser has read.
struct CountingIterator {
  using iterator_category = std::forward_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;
  const char* p = nullptr;
  const char* base = nullptr;
  size_t* read = nullptr;
  reference operator*() const { return *p; }
  CountingIterator& operator++() {
    ++p;
    if (read) *read = size_t(p - base);
    return *this;
  }
  CountingIterator operator++(int) {
    CountingIterator t = *this;
    ++*this;
    return t;
  }
  bool operator==(const CountingIterator& o) const { return p == o.p; }
  bool operator!=(const CountingIterator& o) const { return p != o.p; }
};

/// Builds the document and records where each value and key starts, by JSON
/// pointer ("/executors/runtime/threads").
class LocatingSax : public nlohmann::json_sax<json> {
public:
  LocatingSax(const std::string& text, const size_t& read) : text_(text), read_(read) {}

  json root;
  std::map<std::string, size_t> valueAt, keyAt;
  std::string error;
  size_t errorAt = 0;

  bool null() override { return put(json(nullptr)); }
  bool boolean(bool v) override { return put(json(v)); }
  bool number_integer(number_integer_t v) override { return put(json(v)); }
  bool number_unsigned(number_unsigned_t v) override { return put(json(v)); }
  bool number_float(number_float_t v, const string_t&) override { return put(json(v)); }
  bool string(string_t& v) override { return put(json(v)); }
  bool binary(binary_t&) override { return put(json(nullptr)); }
  bool start_object(std::size_t) override { return open(json::object()); }
  bool end_object() override { return close(); }
  bool start_array(std::size_t) override { return open(json::array()); }
  bool end_array() override { return close(); }
  bool key(string_t& k) override {
    std::string path = paths_.back() + "/" + k;
    if (keyAt.count(path)) {
      error = "duplicate key \"" + k + "\"";
      errorAt = tokenStart(read_);
      return false;
    }
    keyAt[path] = tokenStart(read_);
    key_ = k;
    return true;
  }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& ex) override {
    error = ex.what();
    // "[json.exception.parse_error.101] parse error at line 1, column 5: syntax error ..." -> the reason.
    size_t colon = error.find(": ");
    if (colon != std::string::npos) error = error.substr(colon + 2);
    errorAt = tokenStart(position);  // the start of the offending token
    return false;
  }

private:
  /// Start of the token that ends at `end` (exclusive; a lookahead character
  /// the lexer read past a number or literal is skipped).
  size_t tokenStart(size_t end) const {
    auto literal = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '+' || c == '-'; };
    size_t i = std::min(end, text_.size());
    if (i > 0 && text_[i - 1] != '"' && !literal(text_[i - 1])) --i;
    if (i > 0 && text_[i - 1] == '"') {
      size_t j = i - 1;
      while (j > 0) {
        --j;
        if (text_[j] == '"') {
          size_t backslashes = 0;
          while (j > backslashes && text_[j - 1 - backslashes] == '\\') ++backslashes;
          if (backslashes % 2 == 0) return j;
        }
      }
      return 0;
    }
    while (i > 0 && literal(text_[i - 1])) --i;
    return i;
  }
  bool put(json v) { return place(std::move(v), tokenStart(read_)) != nullptr; }
  json* place(json v, size_t at) {
    json* slot;
    std::string path;
    if (stack_.empty()) {
      root = std::move(v);
      slot = &root;
    } else if (stack_.back()->is_object()) {
      path = paths_.back() + "/" + key_;
      slot = &((*stack_.back())[key_] = std::move(v));
    } else {
      path = paths_.back() + "/" + std::to_string(stack_.back()->size());
      stack_.back()->push_back(std::move(v));
      slot = &stack_.back()->back();
    }
    valueAt[path] = at;
    lastPath_ = path;
    return slot;
  }
  bool open(json v) {
    json* slot = place(std::move(v), read_ > 0 ? read_ - 1 : 0);
    stack_.push_back(slot);
    paths_.push_back(lastPath_);
    return true;
  }
  bool close() {
    stack_.pop_back();
    paths_.pop_back();
    return true;
  }

  const std::string& text_;
  const size_t& read_;
  std::vector<json*> stack_;
  std::vector<std::string> paths_{""};
  std::string key_, lastPath_;
};

class Checker {
public:
  Checker(const std::string& path, const std::string& text, LocatingSax& sax, support::DiagnosticEngine& d)
      : sax_(sax), diags_(d) {
    file_ = d.sourceManager().addBuffer(path, text);
    text_ = d.sourceManager().bufferText(file_);
  }
  support::SourceLoc locAt(size_t offset, uint32_t length = 1) const {
    uint32_t line = 1, col = 1;
    for (size_t i = 0; i < offset && i < text_.size(); ++i) {
      if (text_[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    return {file_, line, col, length};
  }
  support::SourceLoc valueLoc(const std::string& ptr) const {
    auto it = sax_.valueAt.find(ptr);
    return locAt(it == sax_.valueAt.end() ? 0 : it->second);
  }
  support::SourceLoc keyLoc(const std::string& ptr) const {
    auto it = sax_.keyAt.find(ptr);
    return it == sax_.keyAt.end() ? valueLoc(ptr) : locAt(it->second);
  }
  bool error(support::SourceLoc loc, std::string msg) {
    diags_.error("", loc, std::move(msg));
    return false;
  }
  static const char* typeName(const json& j) {
    switch (j.type()) {
      case json::value_t::object: return "an object";
      case json::value_t::array: return "an array";
      case json::value_t::string: return "a string";
      case json::value_t::boolean: return "a boolean";
      case json::value_t::number_integer:
      case json::value_t::number_unsigned: return "an integer";
      case json::value_t::number_float: return "a number";
      case json::value_t::null: return "null";
      default: return "a value";
    }
  }
  bool want(const json& j, const std::string& ptr, bool ok, const char* expected) {
    if (ok) return true;
    return error(valueLoc(ptr), pretty(ptr) + " must be " + expected + ", not " + typeName(j));
  }
  /// "/executors/runtime/threads" -> "executors.runtime.threads", "/pipeline/1" -> "pipeline[1]".
  static std::string pretty(const std::string& ptr) {
    if (ptr.empty()) return "the configuration";
    std::string out;
    size_t pos = 1;
    while (pos <= ptr.size()) {
      size_t slash = ptr.find('/', pos);
      std::string part = ptr.substr(pos, slash == std::string::npos ? std::string::npos : slash - pos);
      bool index = !part.empty() && std::all_of(part.begin(), part.end(), ::isdigit);
      out += index ? "[" + part + "]" : (out.empty() ? "" : ".") + part;
      if (slash == std::string::npos) break;
      pos = slash + 1;
    }
    return "\"" + out + "\"";
  }
  bool onlyKeys(const json& obj, const std::string& ptr, std::initializer_list<const char*> known) {
    bool ok = true;
    for (auto it = obj.begin(); it != obj.end(); ++it) {
      bool found = false;
      std::string names;
      for (const char* k : known) {
        found |= it.key() == k;
        names += std::string(names.empty() ? "" : ", ") + k;
      }
      if (!found)
        ok = error(keyLoc(ptr + "/" + it.key()),
                   "unknown key \"" + it.key() + "\"" +
                       (names.empty() ? std::string(" (it takes no options)") : " (expected one of: " + names + ")"));
    }
    return ok;
  }
  bool stringList(const json& j, const std::string& ptr, std::vector<std::pair<std::string, std::string>>& out) {
    if (!want(j, ptr, j.is_array(), "an array of strings")) return false;
    for (size_t i = 0; i < j.size(); ++i) {
      std::string p = ptr + "/" + std::to_string(i);
      if (!want(j[i], p, j[i].is_string(), "a string")) return false;
      out.emplace_back(j[i].get<std::string>(), p);
    }
    return true;
  }

private:
  LocatingSax& sax_;
  support::DiagnosticEngine& diags_;
  const std::string* file_;
  std::string_view text_;
};

}  // namespace

std::string findConfig() {
  std::error_code ec;
  fs::path cwd = fs::current_path(ec);
  if (ec) return {};
  fs::path rel;
  for (fs::path dir = cwd;; dir = dir.parent_path()) {
    fs::path candidate = dir / "cmlconfig.json";
    if (fs::is_regular_file(candidate, ec)) return (rel / "cmlconfig.json").string();
    if (dir == dir.parent_path()) break;
    rel /= "..";
  }
  return {};
}

bool loadConfig(const std::string& path, CamelConfig& out, support::DiagnosticEngine& diags) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    diags.error("", {}, "cannot read " + path);
    return false;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  out = CamelConfig{};
  out.path = path;

  size_t read = 0;
  LocatingSax sax(text, read);
  CountingIterator first{text.data(), text.data(), &read}, last{text.data() + text.size(), text.data(), nullptr};
  bool parsed = json::sax_parse(first, last, &sax);
  Checker c(path, text, sax, diags);
  if (!parsed)
    return c.error(c.locAt(sax.errorAt), "malformed JSON: " + (sax.error.empty() ? "syntax error" : sax.error));
  const json& root = sax.root;
  if (!c.want(root, "", root.is_object(), "an object")) return false;
  bool ok = c.onlyKeys(root, "", {"entry", "pipeline", "passes", "include", "stdlib", "executors"});
  std::string dir = fs::path(path).parent_path().string();
  auto resolve = [&](const std::string& p) {
    return dir.empty() || fs::path(p).is_absolute() ? p : (fs::path(dir) / p).string();
  };

  if (!root.contains("entry")) {
    ok = c.error(c.locAt(0), "missing key \"entry\" (the program's main module, e.g. \"main.cml\")");
  } else if (c.want(root["entry"], "/entry", root["entry"].is_string(), "a string")) {
    out.entry = resolve(root["entry"].get<std::string>());
    std::error_code ec;
    if (!fs::is_regular_file(out.entry, ec))
      ok = c.error(c.valueLoc("/entry"), "entry file '" + root["entry"].get<std::string>() + "' does not exist");
  } else {
    ok = false;
  }
  if (root.contains("pipeline")) {
    std::vector<std::pair<std::string, std::string>> items;
    if (c.stringList(root["pipeline"], "/pipeline", items)) {
      out.hasPipeline = true;
      for (const auto& [name, ptr] : items) {
        Reducer r;
        support::SourceLoc loc = c.valueLoc(ptr);
        loc.length = uint32_t(name.size() + 2);
        if (parseReducer(name, loc, dir, r, diags)) out.pipeline.push_back(std::move(r));
        else ok = false;
      }
    } else {
      ok = false;
    }
  }
  if (root.contains("passes")) {
    if (c.want(root["passes"], "/passes", root["passes"].is_string(), "a string"))
      out.passes = root["passes"].get<std::string>();
    else
      ok = false;
  }
  if (root.contains("include")) {
    std::vector<std::pair<std::string, std::string>> items;
    if (c.stringList(root["include"], "/include", items))
      for (const auto& item : items) out.includeDirs.push_back(resolve(item.first));
    else
      ok = false;
  }
  if (root.contains("stdlib")) {
    if (c.want(root["stdlib"], "/stdlib", root["stdlib"].is_string(), "a string"))
      out.stdlibDir = resolve(root["stdlib"].get<std::string>());
    else
      ok = false;
  }
  if (root.contains("executors")) {
    const json& ex = root["executors"];
    if (!c.want(ex, "/executors", ex.is_object(), "an object")) return false;
    // Every key but "runtime" names an executor to load before compiling
    // (--executors); none of them takes options yet.
    for (auto it = ex.begin(); it != ex.end(); ++it) {
      if (it.key() == "runtime") continue;
      std::string p = "/executors/" + it.key();
      if (!c.want(it.value(), p, it.value().is_object(), "an object")) {
        ok = false;
        continue;
      }
      ok &= c.onlyKeys(it.value(), p, {});
      bool found = false;
      std::string dirs;
      for (const std::string& d : ExecutorRegistry::get().searchPath()) {
        std::error_code ec;
        found |= fs::is_regular_file(fs::path(d) / executorFileName(it.key()), ec);
        dirs += (dirs.empty() ? "" : ", ") + d;
      }
      if (!found)
        ok = c.error(c.keyLoc(p), "no executor '" + it.key() + "' (no " + executorFileName(it.key()) + " in " +
                                      (dirs.empty() ? std::string("any directory") : dirs) + ")");
      else
        out.executors.push_back(it.key());
    }
    if (ex.contains("runtime")) {
      const json& rt = ex["runtime"];
      if (!c.want(rt, "/executors/runtime", rt.is_object(), "an object")) return false;
      ok &= c.onlyKeys(rt, "/executors/runtime", {"scheduler", "threads", "backend"});
      if (rt.contains("backend")) {
        const std::string p = "/executors/runtime/backend";
        if (!c.want(rt["backend"], p, rt["backend"].is_string(), "a string")) {
          ok = false;
        } else {
          std::string b = rt["backend"].get<std::string>();
          if (ExecutorRegistry::get().providerOfBackend(b).empty()) ok = c.error(c.valueLoc(p), "unknown backend \"" + b + "\"");
          else out.backend = b;
        }
      }
      if (rt.contains("scheduler")) {
        const std::string p = "/executors/runtime/scheduler";
        if (!c.want(rt["scheduler"], p, rt["scheduler"].is_string(), "a string (\"seq\", \"par\" or \"auto\")")) {
          ok = false;
        } else {
          std::string s = rt["scheduler"].get<std::string>();
          if (s != "seq" && s != "par" && s != "auto")
            ok = c.error(c.valueLoc(p), "unknown scheduler \"" + s + "\" (expected \"seq\", \"par\" or \"auto\")");
          else out.scheduler = s;
        }
      }
      if (rt.contains("threads")) {
        const std::string p = "/executors/runtime/threads";
        const json& t = rt["threads"];
        if (!c.want(t, p, t.is_number_integer(), "an integer")) {
          ok = false;
        } else if (t.get<int64_t>() < 1 || t.get<int64_t>() > 4096) {
          ok = c.error(c.valueLoc(p), "\"threads\" must be between 1 and 4096");
        } else {
          out.threads = unsigned(t.get<int64_t>());
        }
      }
    }
  }
  return ok;
}

}  // namespace xacc::camel::tool
