/* The C ABI of Camel `outer` functors implemented in a shared library
 * (the `dll` executor, docs/executors.md):
 *
 *     outer func scale(xs: float[], k: float): float[] = "dll://./libmine.so::scale"
 *
 * calls the C function `scale` of libmine.so (a path relative to the .cml file
 * that declares the functor, or an absolute path; a bare file name is looked
 * up next to the .cml file first, then by the system's dlopen search). Every
 * such function has one signature:
 *
 *     int scale(const camel_value* args, int64_t nargs, camel_value* result,
 *               camel_context* ctx);
 *
 * `args` are the Camel arguments in order, converted as below; they and
 * everything they point to stay valid until the function returns and must not
 * be modified. The function writes its value to `*result` (`result->kind` is
 * CAMEL_NULL on entry; a `void` functor may leave it so) and returns 0. On
 * failure it returns non-zero, after calling ctx->set_error with a message
 * if it wants one; the Camel program then stops with a located run-time error
 * (E3013). Memory for a string or an array in the result comes from
 * ctx->alloc: the runtime copies the value out after the call and frees it.
 * The result must have the kind of the functor's declared result type
 * (checked; an int where a float is declared is accepted).
 *
 * Camel types and their C values:
 *     int      CAMEL_INT     as.i  (int64_t)
 *     float    CAMEL_FLOAT   as.f  (double)
 *     bool     CAMEL_BOOL    as.b  (0 or 1)
 *     string   CAMEL_STRING  as.s  (UTF-8 bytes, `len` of them, NUL-terminated)
 *     T[]      CAMEL_ARRAY   as.a  (`len` elements, each a camel_value)
 *     void     CAMEL_NULL
 * Other Camel types (tuples, structs, functions, tensors) cannot cross this ABI;
 * declaring an outer functor with them is a compile-time error.
 *
 * Calls are made in program order, on the thread that runs the Camel code.
 */
#ifndef XACC_CAMEL_CAMEL_ABI_H
#define XACC_CAMEL_CAMEL_ABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CAMEL_ABI_VERSION 1

typedef enum camel_kind {
  CAMEL_NULL = 0,
  CAMEL_INT = 1,
  CAMEL_FLOAT = 2,
  CAMEL_BOOL = 3,
  CAMEL_STRING = 4,
  CAMEL_ARRAY = 5
} camel_kind;

typedef struct camel_value {
  int32_t kind; /* a camel_kind */
  int32_t reserved;
  union {
    int64_t i;
    double f;
    int32_t b;
    struct {
      const char* data;
      int64_t len;
    } s;
    struct {
      struct camel_value* items;
      int64_t len;
    } a;
  } as;
} camel_value;

typedef struct camel_context {
  int32_t abi_version; /* CAMEL_ABI_VERSION of the runtime */
  int32_t reserved;
  /* Records why the call failed (copied; the last message wins). */
  void (*set_error)(struct camel_context* ctx, const char* message);
  /* `bytes` bytes for a result string or array, valid until the runtime has
   * copied the result; NULL when out of memory. */
  void* (*alloc)(struct camel_context* ctx, int64_t bytes);
  void* host; /* private to the runtime */
} camel_context;

/* The type of every function a `dll://` URI names. */
typedef int (*camel_outer_fn)(const camel_value* args, int64_t nargs, camel_value* result,
                              camel_context* ctx);

#ifdef __cplusplus
}
#endif

#endif /* XACC_CAMEL_CAMEL_ABI_H */
