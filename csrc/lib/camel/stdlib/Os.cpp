// Module `os` (spec 15.2): user name, CPU count, and byte-level terminal input
// for interactive programs: raw (non-canonical, no-echo) mode, a non-blocking
// "is a key waiting" test, and unbuffered reads of standard input (shared with
// `input`, so the two never disagree about what has been consumed). Raw mode
// restores the original terminal settings when switched off and at process
// exit. Everything here reads or changes process state, so all are effectful;
// all but set_terminal_raw_mode/clear_input_buffer are nondeterministic.
// `os::sleep` is the global `sleep` under the module's name.
#include <poll.h>
#include <pwd.h>
#include <termios.h>
#include <unistd.h>

#include <cstdlib>
#include <mutex>
#include <thread>

#include "StdlibImpl.h"

namespace xacc::camel::stdlib {

namespace {

struct Terminal {
  std::mutex mu;
  bool saved = false;
  bool raw = false;
  struct termios original {};
};

Terminal& terminal() {
  static Terminal t;
  return t;
}

void restoreTerminal() {
  Terminal& t = terminal();
  if (t.saved && t.raw) {
    tcsetattr(STDIN_FILENO, TCSANOW, &t.original);
    t.raw = false;
  }
}

/// Switches raw mode; returns false with `err` set when the terminal refuses.
bool setRaw(bool on, std::string& err) {
  if (!isatty(STDIN_FILENO)) return true;  // no effect without a terminal
  Terminal& t = terminal();
  std::lock_guard<std::mutex> lock(t.mu);
  if (!t.saved) {
    if (tcgetattr(STDIN_FILENO, &t.original) != 0) {
      err = "cannot read the terminal settings";
      return false;
    }
    t.saved = true;
    std::atexit(restoreTerminal);
  }
  if (!on) {
    restoreTerminal();
    return true;
  }
  struct termios raw = t.original;
  raw.c_lflag &= ~tcflag_t(ICANON | ECHO);
  raw.c_cc[VMIN] = 1;
  raw.c_cc[VTIME] = 0;
  if (tcsetattr(STDIN_FILENO, TCSANOW, &raw) != 0) {
    err = "cannot switch the terminal to raw mode";
    return false;
  }
  t.raw = true;
  return true;
}

bool inputReady() {
  struct pollfd p {
    STDIN_FILENO, POLLIN, 0
  };
  return poll(&p, 1, 0) > 0 && (p.revents & (POLLIN | POLLHUP));
}

/// Up to `max` bytes from standard input (one read; empty at end of input).
std::string readBytes(size_t max) {
  std::string out(max, '\0');
  ssize_t got = max ? ::read(STDIN_FILENO, out.data(), max) : 0;
  out.resize(got > 0 ? size_t(got) : 0);
  return out;
}


InferRule gives(Type result, std::function<bool(Type)> argOk = nullptr, std::string expected = {}) {
  return [result, argOk, expected](const Types& a, Types& r, std::string& err) {
    if (argOk && !want(argOk(a[0]), a, 0, "the argument", expected, err)) return false;
    r = {result};
    return true;
  };
}

}  // namespace

void registerOs() {
  Def whoami = effectDef("os", "whoami", 0, "(): string", "login name of the current user");
  whoami.infer = gives(Type::string());
  whoami.fn = [](Interpreter&, const Node&, Datums&, Datums& r) {
    std::string name;
    if (struct passwd* pw = getpwuid(geteuid()))
      name = pw->pw_name;
    else if (const char* u = std::getenv("USER"))
      name = u;
    r.push_back(Datum::string(std::move(name)));
    return true;
  };
  define(std::move(whoami));

  Def cpus = effectDef("os", "cpu_count", 0, "(): int", "number of logical CPUs");
  cpus.infer = gives(Type::i64());
  cpus.fn = [](Interpreter&, const Node&, Datums&, Datums& r) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    r.push_back(Datum::integer(n > 0 ? n : std::max(1u, std::thread::hardware_concurrency())));
    return true;
  };
  define(std::move(cpus));

  Def raw = effectDef("os", "set_terminal_raw_mode", 1, "(on: bool): void",
                  "raw, no-echo terminal input on or off (no effect without a terminal)", true);
  raw.infer = gives(Type::null(), boolLike, "a bool");
  raw.fn = [](Interpreter& I, const Node& n, Datums& a, Datums& r) {
    bool on;
    if (!getBool(I, n, "os::set_terminal_raw_mode", a[0], on)) return false;
    std::string err;
    if (!setRaw(on, err))
      return fail(I, n, RuntimeDiag::IoError, {"os::set_terminal_raw_mode", "stdin", err});
    r.push_back(Datum());
    return true;
  };
  define(std::move(raw));

  Def has = effectDef("os", "has_input", 0, "(): bool", "whether a byte is waiting on standard input");
  has.infer = gives(Type::boolean());
  has.fn = [](Interpreter&, const Node&, Datums&, Datums& r) {
    r.push_back(Datum::boolean(inputReady()));
    return true;
  };
  define(std::move(has));

  Def one = effectDef("os", "get_char", 0, "(): string", "one byte of standard input (\"\" at end of input)");
  one.infer = gives(Type::string());
  one.fn = [](Interpreter&, const Node&, Datums&, Datums& r) {
    r.push_back(Datum::string(readBytes(1)));
    return true;
  };
  define(std::move(one));

  Def many = effectDef("os", "get_chars", 1, "(n: int): string", "up to n bytes of standard input");
  many.infer = gives(Type::string(), intLike, "an int");
  many.fn = [](Interpreter& I, const Node& n, Datums& a, Datums& r) {
    int64_t count;
    if (!getInt(I, n, "os::get_chars", a[0], count)) return false;
    if (count < 0 || count > (int64_t(1) << 30))
      return fail(
          I, n, RuntimeDiag::InvalidArgument,
          {"os::get_chars", "byte count must be in [0, 2^30], got " + std::to_string(count)});
    r.push_back(Datum::string(readBytes(size_t(count))));
    return true;
  };
  define(std::move(many));

  Def clear = effectDef("os", "clear_input_buffer", 0, "(): void", "discards pending standard input", true);
  clear.infer = gives(Type::null());
  clear.fn = [](Interpreter&, const Node&, Datums&, Datums& r) {
    if (isatty(STDIN_FILENO))
      tcflush(STDIN_FILENO, TCIFLUSH);
    else
      while (inputReady() && !readBytes(4096).empty()) {
      }
    r.push_back(Datum());
    return true;
  };
  define(std::move(clear));

  // The reference also exports the global `sleep` from `os` (its programs
  // write `import { sleep } from os`).
  alias("os", "sleep", "sleep");
}

}  // namespace xacc::camel::stdlib
