// Module `fs` (spec 15.8): whole-file and chunked reads, writes, existence and
// kind tests, sizes and directory creation, on std::filesystem and binary
// streams. Relative paths resolve against the process working directory. All
// of them touch the file system, so all are effectful and, except write_text,
// nondeterministic. Failures are E3006 naming the path and the OS reason;
// `mkdir`/`mkdirs` report failure by returning false, as specified.
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "StdlibImpl.h"

namespace xacc::camel::stdlib {

namespace {

namespace fs = std::filesystem;


/// Infer rule: the first `strings` operands are strings, the rest ints; gives `result`.
InferRule pathRule(size_t strings, Type result) {
  return [strings, result](const Types& a, Types& r, std::string& err) {
    for (size_t i = 0; i < a.size(); ++i) {
      bool ok = i < strings ? strLike(a[i]) : intLike(a[i]);
      if (!want(ok, a, i, i == 0 ? "the path" : "argument " + std::to_string(i + 1),
                i < strings ? "a string" : "an int", err))
        return false;
    }
    r = {result};
    return true;
  };
}

bool ioFail(Interpreter& I, const Node& n, const std::string& fn, const std::string& path,
            const std::string& why) {
  return fail(I, n, RuntimeDiag::IoError, {fn, path, why});
}

/// A predicate on a path (exists, is_file, is_dir).
void definePredicate(const std::string& name, bool (*test)(const fs::path&, std::error_code&),
                     const std::string& summary) {
  Def d = effectDef("fs", name, 1, "(path: string): bool", summary);
  d.infer = pathRule(1, Type::boolean());
  d.fn = [name, test](Interpreter& I, const Node& n, Datums& a, Datums& r) {
    const std::string* path;
    if (!getStr(I, n, "fs::" + name, a[0], path)) return false;
    std::error_code ec;
    r.push_back(Datum::boolean(test(*path, ec)));
    return true;
  };
  define(std::move(d));
}

}  // namespace

void registerFs() {
  Def read = effectDef("fs", "read_text", 1, "(path: string): string", "the whole file");
  read.infer = pathRule(1, Type::string());
  read.fn = [](Interpreter& I, const Node& n, Datums& a, Datums& r) {
    const std::string* path;
    if (!getStr(I, n, "fs::read_text", a[0], path)) return false;
    std::error_code ec;
    if (fs::is_directory(*path, ec)) return ioFail(I, n, "fs::read_text", *path, "is a directory");
    std::ifstream in(*path, std::ios::binary);
    if (!in) return ioFail(I, n, "fs::read_text", *path, std::strerror(errno));
    std::ostringstream ss;
    ss << in.rdbuf();
    r.push_back(Datum::string(ss.str()));
    return true;
  };
  define(std::move(read));

  Def write =
      effectDef("fs", "write_text", 2, "(path: string, text: string): void", "creates or overwrites a file");
  write.deterministic = true;
  write.infer = pathRule(2, Type::null());
  write.fn = [](Interpreter& I, const Node& n, Datums& a, Datums& r) {
    const std::string *path, *text;
    if (!getStr(I, n, "fs::write_text", a[0], path) || !getStr(I, n, "fs::write_text", a[1], text))
      return false;
    std::ofstream out(*path, std::ios::binary | std::ios::trunc);
    if (!out) return ioFail(I, n, "fs::write_text", *path, std::strerror(errno));
    out.write(text->data(), std::streamsize(text->size()));
    out.close();
    if (!out) return ioFail(I, n, "fs::write_text", *path, "write failed");
    r.push_back(Datum());
    return true;
  };
  define(std::move(write));

  definePredicate(
      "exists", [](const fs::path& p, std::error_code& ec) { return fs::exists(p, ec); },
      "whether the path exists");
  definePredicate(
      "is_file", [](const fs::path& p, std::error_code& ec) { return fs::is_regular_file(p, ec); },
      "whether the path is a regular file");
  definePredicate(
      "is_dir", [](const fs::path& p, std::error_code& ec) { return fs::is_directory(p, ec); },
      "whether the path is a directory");

  Def size = effectDef("fs", "file_size", 1, "(path: string): int", "size of a file in bytes");
  size.infer = pathRule(1, Type::i64());
  size.fn = [](Interpreter& I, const Node& n, Datums& a, Datums& r) {
    const std::string* path;
    if (!getStr(I, n, "fs::file_size", a[0], path)) return false;
    std::error_code ec;
    uintmax_t bytes = fs::file_size(*path, ec);
    if (ec) return ioFail(I, n, "fs::file_size", *path, ec.message());
    r.push_back(Datum::integer(int64_t(bytes)));
    return true;
  };
  define(std::move(size));

  Def chunk = effectDef("fs", "read_chunk", 3, "(path: string, offset: int, size: int): string",
                    "up to `size` bytes from byte `offset`");
  chunk.infer = pathRule(1, Type::string());
  chunk.fn = [](Interpreter& I, const Node& n, Datums& a, Datums& r) {
    const char* fn = "fs::read_chunk";
    const std::string* path;
    int64_t offset, count;
    if (!getStr(I, n, fn, a[0], path) || !getInt(I, n, fn, a[1], offset) ||
        !getInt(I, n, fn, a[2], count))
      return false;
    if (offset < 0 || count < 0)
      return fail(I, n, RuntimeDiag::InvalidArgument,
                  {fn, "offset and size must not be negative (got " + std::to_string(offset) +
                           ", " + std::to_string(count) + ")"});
    std::error_code ec;
    if (fs::is_directory(*path, ec)) return ioFail(I, n, fn, *path, "is a directory");
    std::ifstream in(*path, std::ios::binary);
    if (!in) return ioFail(I, n, fn, *path, std::strerror(errno));
    uintmax_t total = fs::file_size(*path, ec);
    std::string data;
    if (!ec && uintmax_t(offset) < total) {
      data.resize(size_t(std::min<uintmax_t>(uintmax_t(count), total - uintmax_t(offset))));
      in.seekg(std::streamoff(offset));
      in.read(data.data(), std::streamsize(data.size()));
      data.resize(size_t(in.gcount()));
    }
    r.push_back(Datum::string(std::move(data)));
    return true;
  };
  define(std::move(chunk));

  for (bool parents : {false, true}) {
    std::string name = parents ? "mkdirs" : "mkdir";
    Def d = effectDef("fs", 
        name, 1, "(path: string): bool",
        parents ? "creates a directory and its missing parents; true on success or if it exists"
                : "creates one directory; true on success or if it exists");
    d.infer = pathRule(1, Type::boolean());
    d.fn = [name, parents](Interpreter& I, const Node& n, Datums& a, Datums& r) {
      const std::string* path;
      if (!getStr(I, n, "fs::" + name, a[0], path)) return false;
      std::error_code ec;
      if (parents)
        fs::create_directories(*path, ec);
      else
        fs::create_directory(*path, ec);
      r.push_back(Datum::boolean(!ec && fs::is_directory(*path, ec)));
      return true;
    };
    define(std::move(d));
  }
}

}  // namespace xacc::camel::stdlib
