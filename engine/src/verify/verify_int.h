/* SPDX-License-Identifier: Apache-2.0 */
/* Internals shared by the verifier's files: the context, error reporting
 * and helpers for reading operand/result types and attributes.
 *
 * Each family file (verify_elementwise.c, verify_shape.c, verify_reduce.c,
 * verify_indexing.c, verify_linalg.c, verify_collective.c, verify_misc.c)
 * defines verifier functions of type shlo__verify_fn; verify.c dispatches to
 * them from a table generated from the op table's verify column.  A
 * verifier returns false after reporting the first violated constraint of
 * its op (one error per op, as MLIR's verifier does), true when the op is
 * fine. */
#ifndef SHLO_VERIFY_INT_H
#define SHLO_VERIFY_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "ops/ops.h"
#include "shlo/ir.h"
#include "shlo/verify.h"

typedef struct shlo__vctx {
  const shlo_module *m;
  const shlo_func *f;
  shlo_diag_list *out;
  int n_errors, n_unsupported;
  bool oom;
  const shlo_op **defs; /* per value id of f: the defining op, or NULL */
  const shlo_compile_limits *limits; /* may be NULL */
  int64_t n_ops;        /* ops visited, for limits */
  shlo_status stopped;  /* a limit's status once one stopped the walk */
  /* Rotating buffers for formatted types in messages. */
  char tbuf[8][256];
  int tnext;
} shlo__vctx;

typedef bool (*shlo__verify_fn)(shlo__vctx *vc, const shlo_op *op);

/* The attributes op cannot go without are there (verify_attrs.c); false
 * after reporting the first missing one. */
bool shlo__verify_required_attrs(shlo__vctx *vc, const shlo_op *op);

/* Report an error at op's location: "<op name> (<label>): <message>"; label
 * may be NULL.  Always returns false. */
bool shlo__verr(shlo__vctx *vc, const shlo_op *op, const char *label,
                const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Report at an explicit location (functions, modules). */
void shlo__verr_at(shlo__vctx *vc, shlo_loc loc, shlo_status code,
                   const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* A type as text, in one of 8 rotating buffers of vc. */
const char *shlo__tstr(shlo__vctx *vc, const shlo_type *t);
/* "[1, 2, 3]" in a rotating buffer. */
const char *shlo__dstr(shlo__vctx *vc, const int64_t *v, int n);

/* Integer values of a value defined by stablehlo.constant; -1 if it is
 * not such a value. */
int shlo__const_ints(const shlo__vctx *vc, int id, int64_t *out, int cap);

/* Types of values. */
const shlo_type *shlo__vtype(const shlo__vctx *vc, int id);
/* An operand or result the op does not have (a hostile program can give
 * any op any number of them): a type no verifier accepts, so the op is
 * refused for its types instead of read out of bounds. */
extern const shlo_type shlo__missing_type;
static inline const shlo_type *shlo__otype(const shlo__vctx *vc,
                                           const shlo_op *op, int i) {
  if (i < 0 || i >= op->n_operands) return &shlo__missing_type;
  return shlo__vtype(vc, op->operands[i]);
}
static inline const shlo_type *shlo__rtype(const shlo__vctx *vc,
                                           const shlo_op *op, int i) {
  if (i < 0 || i >= op->n_results) return &shlo__missing_type;
  return shlo__vtype(vc, op->results[i]);
}

/* Type predicates. */
bool shlo__is_tensor(const shlo_type *t);
bool shlo__is_quant(const shlo_type *t);
bool shlo__is_per_axis(const shlo_type *t);
/* Element kind tests on a tensor type (quantized: false for int/float). */
bool shlo__is_bool(const shlo_type *t);
bool shlo__is_int(const shlo_type *t);   /* si/ui, not i1 */
bool shlo__is_float(const shlo_type *t);
bool shlo__is_complex(const shlo_type *t);
/* The type with the same shape and element/quant: compare element parts. */
bool shlo__same_elem(const shlo_type *a, const shlo_type *b);
/* Same element type ignoring quantization parameters (storage/expressed
 * types only), as the spec's "baseline element type". */
bool shlo__same_baseline_elem(const shlo_type *a, const shlo_type *b);
/* Shapes compatible: equal, with dynamic dims matching anything within
 * their bound, and unranked matching any rank. */
bool shlo__compat_shape(const shlo_type *a, const shlo_type *b);
/* The bound of dynamic dimension d from a bounds encoding
 * (`#stablehlo.type_extensions<bounds = [4, ?]>`); -1 when unbounded or
 * static. */
int64_t shlo__dim_bound(const shlo_type *t, int d);
/* A ranked tensor type without dynamic dimensions. */
bool shlo__is_static(const shlo_type *t);
/* Static, or with one dynamic dimension that has a bound (what ops whose
 * result must be static accept). */
bool shlo__static_or_bounded(const shlo_type *t);
/* Types compatible: same element type (exact), compatible shapes. */
bool shlo__compat_type(const shlo_type *a, const shlo_type *b);
/* Baseline compatible: element types equal up to quantization params. */
bool shlo__compat_baseline(const shlo_type *a, const shlo_type *b);
/* Dimensions equal or either dynamic. */
static inline bool shlo__dim_eq(int64_t a, int64_t b) {
  return a == b || a < 0 || b < 0;
}

/* Attributes.  Reads an integer list attribute; returns count or -1. */
int shlo__attr_ints(const shlo_op *op, const char *name, int64_t *out,
                    int cap);
/* Field of a STRUCT attribute as an int list (missing: 0). */
int shlo__field_ints(const shlo_attr *s, const char *name, int64_t *out,
                     int cap);
bool shlo__has_dups(const int64_t *v, int n, int64_t *dup);
bool shlo__is_permutation(const int64_t *v, int n);

/* Checks that region r of op has n_args scalar-ish arguments and returns
 * the types of its terminator operands; NULL when region is missing. */
const shlo_op *shlo__region_terminator(const shlo_block *b);

/* A reduction body (reduce, reduce_window, scatter, all_reduce, ...):
 * block takes 2*n rank-0 tensors, arguments i and n+i of one type, returns
 * n values of those types, and each inputs[i] element type is promotable to
 * the body's.  Writes the body's accumulator types to acc (may be NULL).
 * Reports under label and returns false on a violation. */
bool shlo__check_reduction_body(shlo__vctx *vc, const shlo_op *op,
                                const char *label, const shlo_block *b,
                                int n, const shlo_type *const *inputs,
                                const shlo_type **acc);
/* Whether element type `from` may be widened to `to` in a reduction. */
bool shlo__promotable(const shlo_type *from, const shlo_type *to);
/* Types of a block's arguments (value types of its arg ids). */
static inline const shlo_type *shlo__barg(const shlo__vctx *vc,
                                          const shlo_block *b, int i) {
  return shlo__vtype(vc, b->args[i]);
}

/* broadcast_in_dim's C6 (also dynamic_broadcast_in_dim's): a per-axis
 * result quantizes along broadcast_dimensions[operand's axis], and a
 * broadcast size-1 axis repeats the operand's scale and zero point. */
bool shlo__check_broadcast_quant(shlo__vctx *vc, const shlo_op *op,
                                 const shlo_type *a, const shlo_type *r,
                                 const int64_t *bd);

/* The verifier of each op, named by its row of the op table (ops.h):
 * shlo__verify_<verify column>, defined in the family file.  Repeated
 * declarations of a verifier that several rows share are harmless. */
#define SHLO__VERIFY_DECL(e, name, c, v, fl, k, kw) \
  bool shlo__verify_##v(shlo__vctx *vc, const shlo_op *op);
SHLO_OP_LIST(SHLO__VERIFY_DECL)
#undef SHLO__VERIFY_DECL

/* Size arithmetic on sizes a client wrote: each is false when the result
 * does not fit in 64 bits (signed overflow is undefined behaviour, and a
 * wrapped size would verify a wrong shape).  shlo__dilate: d elements with
 * k - 1 holes between neighbours, (d - 1) * k + 1 (0 for d <= 0). */
static inline bool shlo__dilate(int64_t d, int64_t k, int64_t *out) {
  int64_t t;
  if (d <= 0) {
    *out = 0;
    return true;
  }
  return !__builtin_mul_overflow(d - 1, k, &t) &&
         !__builtin_add_overflow(t, 1, out);
}

/* a + b + c */
static inline bool shlo__add3(int64_t a, int64_t b, int64_t c, int64_t *out) {
  return !__builtin_add_overflow(a, b, out) &&
         !__builtin_add_overflow(*out, c, out);
}

#endif
