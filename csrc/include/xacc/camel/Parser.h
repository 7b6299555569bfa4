// The Camel recursive-descent parser (grammar of spec section 4, precedence of
// section 5, ambiguity rules of 4.7). It consumes the lexer's token vector and
// builds an AST in an ASTContext, reporting syntax errors with stable codes
// (CamelDiags.def). After an error it suppresses follow-on errors until it
// resynchronises at a statement or declaration boundary, so one run reports
// several independent errors. It never throws, always terminates (every loop
// consumes a token or exits) and limits nesting depth (`maxDepth`), so deep
// or hostile input yields a diagnostic instead of a stack overflow.
//
// Choices where the spec leaves room (documented in tests/lit/camel):
// * Note [Minus]: `-`/`+` directly touching a number in prefix position
//   (where an operand is expected) is folded into the literal (`-1`, `-2.5`,
//   `-9223372036854775808`), matching the reference's lexer there; `a-1`,
//   `a -1` and `a - 1` are all subtraction ([INTENDED], 3.5.1), the middle
//   one with warning W1119.
// * Member access `.name`/`.N` is also accepted after call and index forms
//   (`f().x`, `xs[0].y`), a strict superset of the reference grammar.
// * `if`, `match` and `try` are accepted wherever an operand may appear.
// * Inside a with-argument list `f<...>`, a `>` (or `>=`) followed on the
//   same line by a name or literal, or written with spaces on both sides
//   and followed by an operand, is a comparison
//   (`filter<(x: int): bool => x > 2>`, `... => x>2>`); any other `>`
//   closes the list (a closing `>=` is split into `>` and `=`).
// * After `as`/`is`, the type operators `+ - ^` are not read (so
//   `x as int + 1` is `(x as int) + 1`) and `<` opens type arguments only
//   when adjacent (`x as PyObject<int>`).
// * An `@` that begins a line starts a decorator, never a matrix product.
// * A bare `return` (nothing that can start an expression follows) is
//   accepted and means `return null`.
// * `(e)` is `e` in the AST (no parenthesis node); `(e,)` is a Tuple.
#pragma once

#include <string>
#include <vector>

#include "xacc/camel/AST.h"
#include "xacc/camel/Token.h"
#include "xacc/support/Diagnostic.h"

namespace xacc::camel {

struct ParseOptions {
  /// Maximum nesting of expressions, blocks, types and patterns.
  unsigned maxDepth = 256;
  /// Stop parsing after this many errors in one file.
  unsigned maxErrors = 50;
};

/// Parses a whole file. `tokens` must end with `eof` (as Lexer::lexAll
/// produces). Always returns a Module (possibly partial after errors).
Module* parseModule(std::vector<Token> tokens, const std::string* file, ASTContext& ctx,
                    support::DiagnosticEngine& diags, const ParseOptions& opts = {});

/// Lexes and parses `text` (file name `file`, interned by the caller).
Module* parseSource(std::string_view text, const std::string* file, ASTContext& ctx,
                    support::DiagnosticEngine& diags, const ParseOptions& opts = {});

}  // namespace xacc::camel
