// Module `this` (spec 15.12): the Zen of Camel, the language's design
// principles as the reference prints them.
#include "StdlibImpl.h"

namespace xacc::camel::stdlib {

namespace {

constexpr const char* kZen = R"(
The Zen of Camel

1. Let the graph speak.
    - All computation is a graph of intent.

2. Graphs are primitives, not artifacts.
    - Graphs are the native shape of intent, not a byproduct of code.

3. Imperative for operators, declarative for structure.
    - Code the 'what' declaratively, the 'how' imperatively.

4. Async by nature, sync when explicit.
    - Order emerges from dependencies, not from syntax.

5. Explicit dependencies, implicit parallelism.
    - Parallelism is discovered, not programmed.

6. Keep code pure, let runtimes specialize.
    - Context is injected at runtime, not embedded in code.

7. Execution is polymorphic and multi-staged.
    - Graphs can be interpreted, compiled, staged, rewritten.

8. Let compilers bear the burden.
    - Scheduling, mapping, fusing, and lowering -- these are not your job.
)";

}  // namespace

void registerThis() {
  define({.module = "this",
          .name = "zen",
          .gir = "this::zen",
          .params = 0,
          .signature = "(): string",
          .summary = "the Zen of Camel",
          .infer =
              [](const Types&, Types& r, std::string&) {
                r = {Type::string()};
                return true;
              },
          .fn =
              [](Interpreter&, const Node&, Datums&, Datums& r) {
                r.push_back(Datum::string(kZen));
                return true;
              }});
}

}  // namespace xacc::camel::stdlib
