// Array built-ins of spec 14.4: range, head, tail, slice, concat, append,
// extend, contains<item>, zip and the higher-order map, filter, reduce, foreach
// and apply. Arrays are shared mutable objects: append/extend/apply mutate their
// `var` operand in place and return that same array; every other builtin
// returns a fresh array. Higher-order builtins iterate over a snapshot of the
// elements, so a callback that mutates the array cannot invalidate the walk.
// Int and float arrays stay unboxed through all of them (Note [Compact arrays]).
#include "StdlibImpl.h"

namespace xacc::camel::stdlib {

namespace {

constexpr int64_t kMaxRange = int64_t(1) << 31;

Type listOf(Type elem) { return Type::list(elem); }

/// Infer rule for builtins taking one array and giving a result derived from it.
InferRule oneArray(std::string what, std::function<Type(Type list)> result) {
  return [what, result](const Types& a, Types& r, std::string& err) {
    if (!want(listLike(a.back()), a, a.size() - 1, what, "an array", err)) return false;
    r = {result(a.back())};
    return true;
  };
}

/// Clamps a slice bound as spec 14.4 says: negative counts from the end, then [0, len].
int64_t clampBound(int64_t b, int64_t len) {
  if (b < 0) b += len;
  return b < 0 ? 0 : b > len ? len : b;
}

/// Element type check shared by append/contains: `item` may flow into `elem`.
bool itemFits(Type elem, Type item) { return ir::typeCompatible(elem, item); }

}  // namespace

InferRule foldRule(std::string name) {
  return [name](const Types& a, Types& r, std::string& err) {
    FnSig f;
    if (!want(listLike(a[2]), a, 2, "the array", "an array", err) ||
        !fnSig(a[0], 2, name + "'s function", f, err))
      return false;
    Type acc = f.params[0];
    if (!ir::typeCompatible(acc, a[1]) || !ir::typeCompatible(acc, f.result)) {
      err = name + "'s function (" + typeName(a[0]) + ") and initial value (" + typeName(a[1]) +
            ") must share the accumulator type";
      return false;
    }
    if (!ir::typeCompatible(f.params[1], elemOf(a[2]))) {
      err = name + "'s function takes " + typeName(f.params[1]) + " items but the elements are " +
            typeName(elemOf(a[2]));
      return false;
    }
    r = {!acc.isAny() ? acc : !a[1].isAny() ? a[1] : f.result};
    return true;
  };
}

ir::InterpFn foldFn(std::string name) {
  return [name](Interpreter& I, const Node& n, Datums& a, Datums& r) {
    ir::ListObject* xs;
    if (!getArray(I, n, name, a[2], xs)) return false;
    ir::ListElems items(a[2], mayMutate(a[0]));
    Datum acc = a[1];
    for (size_t i = 0; i < items.size(); ++i) {
      Datum next;
      if (!callFn(I, n, name, a[0], std::move(acc), items.take(i), next)) return false;
      acc = std::move(next);
    }
    r.push_back(std::move(acc));
    return true;
  };
}

InferRule eachRule(std::string name) {
  return [name](const Types& a, Types& r, std::string& err) {
    FnSig f;
    if (!want(listLike(a[1]), a, 1, "the array", "an array", err) ||
        !fnSig(a[0], 1, name + "'s function", f, err))
      return false;
    if (!ir::typeCompatible(f.params[0], elemOf(a[1]))) {
      err = name + "'s function takes " + typeName(f.params[0]) + " but the elements are " +
            typeName(elemOf(a[1]));
      return false;
    }
    r = {Type::null()};
    return true;
  };
}

ir::InterpFn eachFn(std::string name) {
  return [name](Interpreter& I, const Node& n, Datums& a, Datums& r) {
    ir::ListObject* xs;
    if (!getArray(I, n, name, a[1], xs)) return false;
    ir::ListElems items(a[1], mayMutate(a[0]));
    // Chunks run concurrently only when f may (then nothing observes order).
    if (!I.forEachChunk(a[0], items.size(), [&](Interpreter& W, size_t b, size_t e) {
          for (size_t i = b; i < e; ++i) {
            Datum ignored;
            if (!callFn(W, n, name, a[0], items.take(i), ignored)) return false;
          }
          return true;
        }))
      return false;
    r.push_back(Datum());
    return true;
  };
}

void registerArrays() {
  define({.name = "range",
          .gir = "range",
          .params = 2,
          .signature = "(start: int, end: int): int[]",
          .summary = "[start, start+1, …, end-1]; empty when end <= start",
          .infer =
              [](const Types& a, Types& r, std::string& err) {
                if (!want(intLike(a[0]), a, 0, "start", "an int", err) ||
                    !want(intLike(a[1]), a, 1, "end", "an int", err))
                  return false;
                r = {listOf(Type::i64())};
                return true;
              },
          .fn =
              [](Interpreter& I, const Node& n, Datums& a, Datums& r) {
                int64_t lo, hi;
                if (!getInt(I, n, "range", a[0], lo) || !getInt(I, n, "range", a[1], hi))
                  return false;
                if (hi <= lo) {
                  r.push_back(Datum::list({}));
                  return true;
                }
                if (uint64_t(hi) - uint64_t(lo) > uint64_t(kMaxRange))
                  return fail(I, n, RuntimeDiag::InvalidArgument,
                              {"range", "more than 2^31 elements requested"});
                std::vector<int64_t> items(size_t(hi - lo));
                for (size_t i = 0; i < items.size(); ++i) items[i] = lo + int64_t(i);
                r.push_back(ir::intList(std::move(items)));
                return true;
              }});

  define({.name = "head",
          .gir = "head",
          .params = 1,
          .signature = "(xs: T[]): T",
          .summary = "first element (null for an empty array)",
          .infer = oneArray("the array", [](Type l) { return elemOf(l); }),
          .fn = [](Interpreter& I, const Node& n, Datums& a, Datums& r) {
            ir::ListObject* xs;
            if (!getArray(I, n, "head", a[0], xs)) return false;
            r.push_back(xs->size() == 0 ? Datum() : xs->get(0));
            return true;
          }});

  define(
      {.name = "tail",
       .gir = "tail",
       .params = 1,
       .signature = "(xs: T[]): T[]",
       .summary = "new array of all but the first element",
       .infer = oneArray("the array", [](Type l) { return l.isAny() ? listOf(Type::any()) : l; }),
       .fn = [](Interpreter& I, const Node& n, Datums& a, Datums& r) {
         ir::ListObject* xs;
         if (!getArray(I, n, "tail", a[0], xs)) return false;
         r.push_back(xs->size() <= 1 ? Datum::list({}) : ir::listSlice(a[0], 1, xs->size()));
         return true;
       }});

  define({.name = "slice",
          .gir = "slice",
          .withParams = 2,
          .params = 1,
          .signature = "<start: int, end: int>(xs: T[]): T[]",
          .summary = "new array of elements [start, end); negative bounds count from the end",
          .infer =
              [](const Types& a, Types& r, std::string& err) {
                if (!want(intLike(a[0]), a, 0, "start", "an int", err) ||
                    !want(intLike(a[1]), a, 1, "end", "an int", err) ||
                    !want(listLike(a[2]), a, 2, "the array", "an array", err))
                  return false;
                r = {a[2].isAny() ? listOf(Type::any()) : a[2]};
                return true;
              },
          .fn =
              [](Interpreter& I, const Node& n, Datums& a, Datums& r) {
                int64_t lo, hi;
                ir::ListObject* xs;
                if (!getInt(I, n, "slice", a[0], lo) || !getInt(I, n, "slice", a[1], hi) ||
                    !getArray(I, n, "slice", a[2], xs))
                  return false;
                int64_t len = int64_t(xs->size());
                lo = clampBound(lo, len);
                hi = clampBound(hi, len);
                r.push_back(hi <= lo ? Datum::list({}) : ir::listSlice(a[2], size_t(lo), size_t(hi)));
                return true;
              }});

  define({.name = "concat",
          .gir = "concat",
          .params = 2,
          .signature = "(a: T[], b: T[]): T[]",
          .summary = "new array: a followed by b",
          .infer =
              [](const Types& a, Types& r, std::string& err) {
                if (!want(listLike(a[0]), a, 0, "the first array", "an array", err) ||
                    !want(listLike(a[1]), a, 1, "the second array", "an array", err))
                  return false;
                if (!ir::typeCompatible(a[0], a[1])) {
                  err = "element types differ: " + typeName(a[0]) + " and " + typeName(a[1]);
                  return false;
                }
                r = {a[0].isAny() ? (a[1].isAny() ? listOf(Type::any()) : a[1]) : a[0]};
                return true;
              },
          .fn =
              [](Interpreter& I, const Node& n, Datums& a, Datums& r) {
                ir::ListObject *x, *y;
                if (!getArray(I, n, "concat", a[0], x) || !getArray(I, n, "concat", a[1], y))
                  return false;
                r.push_back(ir::listConcat(a[0], a[1]));
                return true;
              }});

  define({.name = "append",
          .gir = "append",
          .withParams = 1,
          .params = 1,
          .varOperands = {1},
          .signature = "<item: T>(var xs: T[]): T[]",
          .effectful = true,
          .summary = "appends item to xs in place; returns xs",
          .infer =
              [](const Types& a, Types& r, std::string& err) {
                if (!want(listLike(a[1]), a, 1, "the array", "an array", err)) return false;
                Type elem = elemOf(a[1]);
                // [REF] a void[] array (unannotated []) accepts any item (spec 14.4).
                if (elem.kind() != TypeKind::Null && !itemFits(elem, a[0])) {
                  err = "cannot append " + typeName(a[0]) + " to " + typeName(a[1]);
                  return false;
                }
                r = {a[1].isAny() ? listOf(Type::any()) : a[1]};
                return true;
              },
          .fn =
              [](Interpreter& I, const Node& n, Datums& a, Datums& r) {
                ir::ListObject* xs;
                if (!getArray(I, n, "append", a[1], xs)) return false;
                xs->push(a[0]);
                r.push_back(a[1]);
                return true;
              }});

  define({.name = "extend",
          .gir = "extend",
          .withParams = 1,
          .params = 1,
          .varOperands = {1},
          .signature = "<more: T[]>(var xs: T[]): T[]",
          .effectful = true,
          .summary = "appends every element of more to xs in place; returns xs",
          .infer =
              [](const Types& a, Types& r, std::string& err) {
                if (!want(listLike(a[0]), a, 0, "the elements to add", "an array", err) ||
                    !want(listLike(a[1]), a, 1, "the array", "an array", err))
                  return false;
                if (elemOf(a[1]).kind() != TypeKind::Null && !ir::typeCompatible(a[1], a[0])) {
                  err = "cannot extend " + typeName(a[1]) + " with " + typeName(a[0]);
                  return false;
                }
                r = {a[1].isAny() ? listOf(Type::any()) : a[1]};
                return true;
              },
          .fn =
              [](Interpreter& I, const Node& n, Datums& a, Datums& r) {
                ir::ListObject *more, *xs;
                if (!getArray(I, n, "extend", a[0], more) || !getArray(I, n, "extend", a[1], xs))
                  return false;
                ir::ListElems add(a[0], true);  // xs->extend<xs> must not read while growing
                for (size_t i = 0; i < add.size(); ++i) xs->push(add.take(i));
                r.push_back(a[1]);
                return true;
              }});

  define({.name = "contains",
          .gir = "contains.array",
          .withParams = 1,
          .params = 1,
          .signature = "<item: T>(xs: T[]): bool",
          .summary = "membership with structural equality",
          .infer =
              [](const Types& a, Types& r, std::string& err) {
                if (!want(listLike(a[1]), a, 1, "the array", "an array", err)) return false;
                if (!itemFits(elemOf(a[1]), a[0])) {
                  err = "cannot look for " + typeName(a[0]) + " in " + typeName(a[1]);
                  return false;
                }
                r = {Type::boolean()};
                return true;
              },
          .fn =
              [](Interpreter& I, const Node& n, Datums& a, Datums& r) {
                ir::ListObject* xs;
                if (!getArray(I, n, "contains", a[1], xs)) return false;
                bool found = false;
                size_t len = xs->size();
                for (size_t i = 0; i < len; ++i)
                  if ((found = camelEquals(xs->get(i), a[0]))) break;
                r.push_back(Datum::boolean(found));
                return true;
              }});

  define({.name = "zip",
          .gir = "zip",
          .params = 2,
          .signature = "(a: A[], b: B[]): (A, B)[]",
          .summary = "pairs the elements of two arrays of equal length",
          .infer =
              [](const Types& a, Types& r, std::string& err) {
                if (!want(listLike(a[0]), a, 0, "the first array", "an array", err) ||
                    !want(listLike(a[1]), a, 1, "the second array", "an array", err))
                  return false;
                r = {listOf(Type::tuple({elemOf(a[0]), elemOf(a[1])}))};
                return true;
              },
          .fn =
              [](Interpreter& I, const Node& n, Datums& a, Datums& r) {
                ir::ListObject *xo, *yo;
                if (!getArray(I, n, "zip", a[0], xo) || !getArray(I, n, "zip", a[1], yo))
                  return false;
                ir::ListView x(a[0]), y(a[1]);
                if (x->size() != y->size())
                  return fail(I, n, RuntimeDiag::LengthMismatch,
                              {"zip", std::to_string(x->size()), std::to_string(y->size())});
                std::vector<Datum> items;
                items.reserve(x->size());
                for (size_t i = 0; i < x->size(); ++i)
                  items.push_back(Datum::tuple({(*x)[i], (*y)[i]}));
                r.push_back(Datum::list(std::move(items)));
                return true;
              }});

  // ---- Higher-order ---------------------------------------------------------------

  define({.name = "map",
          .gir = "map",
          .withParams = 1,
          .params = 1,
          .signature = "<f: (item: T) => U>(xs: T[]): U[]",
          .summary = "new array of f(x) for each element, in order",
          .infer =
              [](const Types& a, Types& r, std::string& err) {
                FnSig f;
                if (!want(listLike(a[1]), a, 1, "the array", "an array", err) ||
                    !fnSig(a[0], 1, "map's function", f, err))
                  return false;
                if (!ir::typeCompatible(f.params[0], elemOf(a[1]))) {
                  err = "map's function takes " + typeName(f.params[0]) + " but the elements are " +
                        typeName(elemOf(a[1]));
                  return false;
                }
                r = {listOf(f.result)};
                return true;
              },
          .fn =
              [](Interpreter& I, const Node& n, Datums& a, Datums& r) {
                ir::ListObject* xs;
                if (!getArray(I, n, "map", a[1], xs)) return false;
                ir::ListElems items(a[1], mayMutate(a[0]));
                ir::ListBuilder out(items.size(), resultElemKind(n));
                if (!I.forEachChunk(a[0], items.size(),
                                    [&](Interpreter& W, size_t b, size_t e) {
                                      for (size_t i = b; i < e; ++i) {
                                        Datum y;
                                        if (!callFn(W, n, "map", a[0], items.take(i), y))
                                          return false;
                                        out.put(i, std::move(y));
                                      }
                                      return true;
                                    }))
                  return false;
                r.push_back(out.finish());
                return true;
              }});

  define(
      {.name = "filter",
       .gir = "filter",
       .withParams = 1,
       .params = 1,
       .signature = "<f: (item: T) => bool>(xs: T[]): T[]",
       .summary = "new array of the elements for which f is true",
       .infer =
           [](const Types& a, Types& r, std::string& err) {
             FnSig f;
             if (!want(listLike(a[1]), a, 1, "the array", "an array", err) ||
                 !fnSig(a[0], 1, "filter's predicate", f, err))
               return false;
             if (!ir::typeCompatible(f.params[0], elemOf(a[1]))) {
               err = "filter's predicate takes " + typeName(f.params[0]) +
                     " but the elements are " + typeName(elemOf(a[1]));
               return false;
             }
             if (!boolLike(f.result)) {
               err = "filter's predicate must return bool, not " + typeName(f.result);
               return false;
             }
             r = {a[1].isAny() ? listOf(Type::any()) : a[1]};
             return true;
           },
       .fn =
           [](Interpreter& I, const Node& n, Datums& a, Datums& r) {
             ir::ListObject* xs;
             if (!getArray(I, n, "filter", a[1], xs)) return false;
             ir::ListElems items(a[1], mayMutate(a[0]));
             std::vector<char> keep(items.size());
             if (!I.forEachChunk(a[0], items.size(), [&](Interpreter& W, size_t b, size_t e) {
                   for (size_t i = b; i < e; ++i) {
                     Datum k;
                     if (!callFn(W, n, "filter", a[0], items.at(i), k)) return false;
                     if (k.kind() != DKind::Bool)
                       return fail(W, n, RuntimeDiag::CallbackFailed, {"filter", "bool", kindName(k)});
                     keep[i] = k.asBool();
                   }
                   return true;
                 }))
               return false;
             r.push_back(items.select(keep));
             return true;
           }});

  define({.name = "reduce",
          .gir = "reduce",
          .withParams = 2,
          .params = 1,
          .signature = "<f: (acc: U, item: T) => U, initial: U>(xs: T[]): U",
          .summary = "left fold of xs starting from initial",
          .infer = foldRule("reduce"),
          .fn = foldFn("reduce")});

  define({.name = "foreach",
          .gir = "foreach",
          .withParams = 1,
          .params = 1,
          .signature = "<f: (item: T) => any>(xs: T[]): void",
          .effectful = true,
          .summary = "calls f on each element in order",
          .infer = eachRule("foreach"),
          .fn = eachFn("foreach")});

  define({.name = "apply",
          .gir = "apply",
          .withParams = 1,
          .params = 1,
          .varOperands = {1},
          .signature = "<f: (item: T) => T>(var xs: T[]): T[]",
          .effectful = true,
          .summary = "replaces each element of xs by f(element) in place; returns xs",
          .infer =
              [](const Types& a, Types& r, std::string& err) {
                FnSig f;
                if (!want(listLike(a[1]), a, 1, "the array", "an array", err) ||
                    !fnSig(a[0], 1, "apply's function", f, err))
                  return false;
                Type elem = elemOf(a[1]);
                if (!ir::typeCompatible(f.params[0], elem) || !ir::typeCompatible(elem, f.result)) {
                  err = "apply's function must map " + typeName(elem) + " to " + typeName(elem) +
                        ", got " + typeName(a[0]);
                  return false;
                }
                r = {a[1].isAny() ? listOf(Type::any()) : a[1]};
                return true;
              },
          .fn =
              [](Interpreter& I, const Node& n, Datums& a, Datums& r) {
                ir::ListObject* xs;
                if (!getArray(I, n, "apply", a[1], xs)) return false;
                for (size_t i = 0; i < xs->size(); ++i) {
                  Datum y;
                  if (!callFn(I, n, "apply", a[0], xs->get(i), y)) return false;
                  if (i < xs->size()) xs->set(i, std::move(y));  // f may have shrunk xs
                }
                r.push_back(a[1]);
                return true;
              }});
}

}  // namespace xacc::camel::stdlib
