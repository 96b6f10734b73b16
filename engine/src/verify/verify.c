/* SPDX-License-Identifier: Apache-2.0 */
/* The verifier's core: module, function, region and type checks, the
 * diagnostics list, shared helpers, and the dispatch table from op code to
 * the op's verifier (defined in the verify_*.c family files), generated from
 * the op table: every op has a verifier or an explicit `none`. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/module.h"
#include "core/alloc.h"
#include "core/int_range.h"
#include "core/limits.h"
#include "verify/verify_int.h"

/* ---- diagnostics list ---- */

void shlo_diag_list_init(shlo_diag_list *l) { memset(l, 0, sizeof *l); }

void shlo_diag_list_free(shlo_diag_list *l) {
  free(l->v);
  memset(l, 0, sizeof *l);
}

static shlo_diag *diag_push(shlo__vctx *vc) {
  shlo_diag_list *l = vc->out;
  if (!l) return NULL;
  if (l->n == l->cap) {
    int cap = l->cap ? l->cap * 2 : 8;
    shlo_diag *v = realloc(l->v, (size_t)cap * sizeof *v);
    if (!v) {
      vc->oom = true;
      return NULL;
    }
    l->v = v;
    l->cap = cap;
  }
  shlo_diag *d = &l->v[l->n++];
  shlo_diag_clear(d);
  return d;
}

static void vreport(shlo__vctx *vc, shlo_loc loc, shlo_status code,
                    const char *prefix, const char *fmt, va_list ap) {
  if (code == SHLO_EUNSUPPORTED) vc->n_unsupported++;
  else vc->n_errors++;
  shlo_diag *d = diag_push(vc);
  if (!d) return;
  d->code = code;
  d->file = vc->m->filename;
  d->line = loc.line;
  d->col = loc.col;
  size_t n = 0;
  if (prefix) {
    snprintf(d->message, sizeof d->message, "%s", prefix);
    n = strlen(d->message);
  }
  vsnprintf(d->message + n, sizeof d->message - n, fmt, ap);
}

bool shlo__verr(shlo__vctx *vc, const shlo_op *op, const char *label,
                const char *fmt, ...) {
  char prefix[160];
  if (label)
    snprintf(prefix, sizeof prefix, "%s (%s): ", op->name, label);
  else
    snprintf(prefix, sizeof prefix, "%s: ", op->name);
  va_list ap;
  va_start(ap, fmt);
  vreport(vc, op->loc, SHLO_EVERIFY, prefix, fmt, ap);
  va_end(ap);
  return false;
}

void shlo__verr_at(shlo__vctx *vc, shlo_loc loc, shlo_status code,
                   const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vreport(vc, loc, code, NULL, fmt, ap);
  va_end(ap);
}

const char *shlo__tstr(shlo__vctx *vc, const shlo_type *t) {
  char *b = vc->tbuf[vc->tnext++ & 7];
  if (!t) snprintf(b, 256, "<no type>");
  else shlo_type_format(t, b, 256);
  return b;
}

const char *shlo__dstr(shlo__vctx *vc, const int64_t *v, int n) {
  char *b = vc->tbuf[vc->tnext++ & 7];
  size_t k = 0;
  b[k++] = '[';
  b[k] = 0;
  for (int i = 0; i < n && k < 230; i++)
    k += (size_t)snprintf(b + k, 256 - k, "%s%lld", i ? ", " : "",
                          (long long)v[i]);
  if (k < 254) {
    b[k++] = ']';
    b[k] = 0;
  }
  return b;
}

/* ---- type helpers ---- */

const shlo_type shlo__missing_type = {.kind = SHLO_TYPE_OPAQUE,
                                      .encoding = "<missing value>"};

const shlo_type *shlo__vtype(const shlo__vctx *vc, int id) {
  if (id < 0 || id >= vc->f->n_values) return NULL;
  return vc->f->value_types[id];
}

bool shlo__is_tensor(const shlo_type *t) {
  return t && t->kind == SHLO_TYPE_TENSOR;
}
bool shlo__is_quant(const shlo_type *t) {
  return shlo__is_tensor(t) && t->quant;
}
bool shlo__is_per_axis(const shlo_type *t) {
  return shlo__is_quant(t) && t->quant->per_axis;
}
bool shlo__is_bool(const shlo_type *t) {
  return shlo__is_tensor(t) && !t->quant && t->elem == SHLO_I1;
}
bool shlo__is_int(const shlo_type *t) {
  return shlo__is_tensor(t) && !t->quant && shlo_elem_is_int(t->elem) &&
         t->elem != SHLO_INDEX;
}
bool shlo__is_float(const shlo_type *t) {
  return shlo__is_tensor(t) && !t->quant && shlo_elem_is_float(t->elem);
}
bool shlo__is_complex(const shlo_type *t) {
  return shlo__is_tensor(t) && !t->quant && shlo_elem_is_complex(t->elem);
}

static bool quant_equal(const shlo_quant *a, const shlo_quant *b) {
  if (!a || !b) return a == b;
  if (a->storage != b->storage || a->expressed != b->expressed ||
      a->storage_min != b->storage_min || a->storage_max != b->storage_max ||
      a->per_axis != b->per_axis || a->n != b->n ||
      (a->per_axis && a->axis != b->axis))
    return false;
  for (int i = 0; i < a->n; i++)
    if (a->scales[i] != b->scales[i] || a->zero_points[i] != b->zero_points[i])
      return false;
  return true;
}

bool shlo__same_elem(const shlo_type *a, const shlo_type *b) {
  if (!a || !b || a->kind != b->kind) return false;
  if (a->kind != SHLO_TYPE_TENSOR) return shlo_type_equal(a, b);
  return a->elem == b->elem && quant_equal(a->quant, b->quant);
}

bool shlo__same_baseline_elem(const shlo_type *a, const shlo_type *b) {
  if (!a || !b || a->kind != b->kind) return false;
  if (a->kind != SHLO_TYPE_TENSOR) return shlo_type_equal(a, b);
  if (!a->quant || !b->quant) return !a->quant && !b->quant && a->elem == b->elem;
  return a->quant->storage == b->quant->storage &&
         a->quant->expressed == b->quant->expressed &&
         a->quant->storage_min == b->quant->storage_min &&
         a->quant->storage_max == b->quant->storage_max;
}

int64_t shlo__dim_bound(const shlo_type *t, int d) {
  if (!t || !t->encoding || d < 0 || d >= t->rank || t->dims[d] >= 0)
    return -1;
  const char *p = strstr(t->encoding, "bounds");
  if (!p) return -1;
  /* "bounds = [4, ?]" (type_extensions) or "bounds<4, ?>" (the printer's
   * short form): skip to the list and to the d-th entry. */
  p += strlen("bounds");
  while (*p && *p != '[' && *p != '<') p++;
  if (!*p) return -1;
  p++;
  for (int i = 0; i < d; i++) {
    while (*p && *p != ',' && *p != ']' && *p != '>') p++;
    if (*p != ',') return -1;
    p++;
  }
  while (*p == ' ') p++;
  if (*p < '0' || *p > '9') return -1;
  return strtoll(p, NULL, 10);
}

/* A static size fits a dynamic dimension unless it exceeds its bound. */
static bool dims_compat(const shlo_type *a, const shlo_type *b, int i) {
  int64_t x = a->dims[i], y = b->dims[i];
  if (x >= 0 && y >= 0) return x == y;
  if (x >= 0) {
    int64_t bound = shlo__dim_bound(b, i);
    return bound < 0 || x <= bound;
  }
  if (y >= 0) {
    int64_t bound = shlo__dim_bound(a, i);
    return bound < 0 || y <= bound;
  }
  return true;
}

bool shlo__compat_shape(const shlo_type *a, const shlo_type *b) {
  if (!shlo__is_tensor(a) || !shlo__is_tensor(b)) return false;
  if (a->rank < 0 || b->rank < 0) return true;
  if (a->rank != b->rank) return false;
  for (int i = 0; i < a->rank; i++)
    if (!dims_compat(a, b, i)) return false;
  return true;
}

bool shlo__is_static(const shlo_type *t) {
  if (!shlo__is_tensor(t) || t->rank < 0) return false;
  for (int i = 0; i < t->rank; i++)
    if (t->dims[i] < 0) return false;
  return true;
}

bool shlo__static_or_bounded(const shlo_type *t) {
  if (!shlo__is_tensor(t) || t->rank < 0) return false;
  int n_dyn = 0;
  for (int i = 0; i < t->rank; i++)
    if (t->dims[i] < 0) {
      if (shlo__dim_bound(t, i) < 0) return false;
      n_dyn++;
    }
  return n_dyn <= 1;
}

bool shlo__compat_type(const shlo_type *a, const shlo_type *b) {
  if (!a || !b) return false;
  if (a->kind != SHLO_TYPE_TENSOR || b->kind != SHLO_TYPE_TENSOR) {
    if (a->kind != b->kind) return false;
    if (a->kind == SHLO_TYPE_TUPLE) {
      if (a->n_elems != b->n_elems) return false;
      for (int i = 0; i < a->n_elems; i++)
        if (!shlo__compat_type(a->elems[i], b->elems[i])) return false;
      return true;
    }
    return shlo_type_equal(a, b);
  }
  return shlo__same_elem(a, b) && shlo__compat_shape(a, b);
}

bool shlo__compat_baseline(const shlo_type *a, const shlo_type *b) {
  if (!a || !b) return false;
  if (a->kind != SHLO_TYPE_TENSOR || b->kind != SHLO_TYPE_TENSOR)
    return shlo__compat_type(a, b);
  return shlo__same_baseline_elem(a, b) && shlo__compat_shape(a, b);
}

/* ---- attribute helpers ---- */

int shlo__attr_ints(const shlo_op *op, const char *name, int64_t *out,
                    int cap) {
  return shlo_attr_i64s(shlo_op_attr(op, name), out, cap);
}

int shlo__field_ints(const shlo_attr *s, const char *name, int64_t *out,
                     int cap) {
  const shlo_attr *a = shlo_attr_field(s, name);
  if (!a) return 0;
  int64_t v;
  if (shlo_attr_get_i64(a, &v) && a->kind == SHLO_ATTR_INT) {
    if (cap > 0) out[0] = v;
    return 1;
  }
  return shlo_attr_i64s(a, out, cap);
}

bool shlo__has_dups(const int64_t *v, int n, int64_t *dup) {
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j < n; j++)
      if (v[i] == v[j]) {
        if (dup) *dup = v[i];
        return true;
      }
  return false;
}

bool shlo__is_permutation(const int64_t *v, int n) {
  for (int i = 0; i < n; i++)
    if (v[i] < 0 || v[i] >= n) return false;
  return !shlo__has_dups(v, n, NULL);
}

const shlo_op *shlo__region_terminator(const shlo_block *b) {
  if (!b || b->n_ops == 0) return NULL;
  return b->ops[b->n_ops - 1];
}

/* ---- types ---- */

/* Quantized element types (spec "Types": C1-C12 of quantized element
 * types): storage is an integer type, expressed a float type, storage range
 * within the storage type, scales positive and finite, zero points within
 * the storage range, quantization dimension within the rank and with as
 * many scales as the dimension's size. */
static bool verify_quant_type(shlo__vctx *vc, shlo_loc loc, const char *who,
                              const shlo_type *t) {
  const shlo_quant *q = t->quant;
  int64_t lo, hi;
  if (!shlo__int_range(q->storage, &lo, &hi)) {
    shlo__verr_at(vc, loc, SHLO_EVERIFY,
                  "%s: quantized type %s (C1): storage type %s is not an "
                  "integer type", who, shlo__tstr(vc, t),
                  shlo_elem_name(q->storage));
    return false;
  }
  if (q->signed_storage) {
    shlo__verr_at(vc, loc, SHLO_EVERIFY,
                  "%s: quantized type %s (C1): storage type si%d must be a "
                  "signless integer type (i%d)", who, shlo__tstr(vc, t),
                  shlo_elem_bits(q->storage), shlo_elem_bits(q->storage));
    return false;
  }
  if (q->storage_min < lo || q->storage_max > hi ||
      q->storage_min > q->storage_max) {
    shlo__verr_at(vc, loc, SHLO_EVERIFY,
                  "%s: quantized type %s (C2, C3): storage range [%lld, %lld] "
                  "is not within [%lld, %lld] of %s", who, shlo__tstr(vc, t),
                  (long long)q->storage_min, (long long)q->storage_max,
                  (long long)lo, (long long)hi, shlo_elem_name(q->storage));
    return false;
  }
  if (!shlo_elem_is_float(q->expressed)) {
    shlo__verr_at(vc, loc, SHLO_EVERIFY,
                  "%s: quantized type %s (C4): expressed type %s is not a "
                  "floating-point type", who, shlo__tstr(vc, t),
                  shlo_elem_name(q->expressed));
    return false;
  }
  for (int i = 0; i < q->n; i++) {
    if (!(q->scales[i] > 0) || !isfinite(q->scales[i])) {
      shlo__verr_at(vc, loc, SHLO_EVERIFY,
                    "%s: quantized type %s (C5, C6): scale %g is not a "
                    "positive finite number", who, shlo__tstr(vc, t),
                    q->scales[i]);
      return false;
    }
    if (q->zero_points[i] < q->storage_min ||
        q->zero_points[i] > q->storage_max) {
      shlo__verr_at(vc, loc, SHLO_EVERIFY,
                    "%s: quantized type %s (C7): zero point %lld is outside "
                    "the storage range [%lld, %lld]", who, shlo__tstr(vc, t),
                    (long long)q->zero_points[i], (long long)q->storage_min,
                    (long long)q->storage_max);
      return false;
    }
  }
  if (q->per_axis && t->rank >= 0) {
    if (q->axis < 0 || q->axis >= t->rank) {
      shlo__verr_at(vc, loc, SHLO_EVERIFY,
                    "%s: quantized type %s (C11): quantization dimension %d "
                    "is not within the rank %d", who, shlo__tstr(vc, t),
                    q->axis, t->rank);
      return false;
    }
    if (t->dims[q->axis] >= 0 && t->dims[q->axis] != q->n) {
      shlo__verr_at(vc, loc, SHLO_EVERIFY,
                    "%s: quantized type %s (C12): dimension %d has size %lld "
                    "but there are %d scales", who, shlo__tstr(vc, t),
                    q->axis, (long long)t->dims[q->axis], q->n);
      return false;
    }
  }
  return true;
}

static bool verify_type(shlo__vctx *vc, shlo_loc loc, const char *who,
                        const shlo_type *t) {
  if (!t) return true;
  if (t->kind == SHLO_TYPE_TUPLE) {
    for (int i = 0; i < t->n_elems; i++)
      if (!verify_type(vc, loc, who, t->elems[i])) return false;
    return true;
  }
  if (t->kind != SHLO_TYPE_TENSOR) return true;
  for (int i = 0; i < t->rank; i++)
    if (t->dims[i] < 0 && t->dims[i] != SHLO_DYN) {
      shlo__verr_at(vc, loc, SHLO_EVERIFY,
                    "%s: type %s has a negative dimension size %lld", who,
                    shlo__tstr(vc, t), (long long)t->dims[i]);
      return false;
    }
  if (t->quant) return verify_quant_type(vc, loc, who, t);
  return true;
}

/* ---- dispatch ---- */

/* The op table's verify column.  `none` rows have nothing op-specific
 * to check: their operands and results still pass verify_op's checks. */
bool shlo__verify_none(shlo__vctx *vc, const shlo_op *op) {
  (void)vc;
  (void)op;
  return true;
}

static const shlo__verify_fn verifiers[] = {
    [SHLO_OP_UNKNOWN] = NULL,
#define SHLO__VERIFY_FN(e, name, c, v, fl, k, kw) \
  [SHLO_OP_##e] = shlo__verify_##v,
    SHLO_OP_LIST(SHLO__VERIFY_FN)
#undef SHLO__VERIFY_FN
};
_Static_assert(sizeof verifiers / sizeof verifiers[0] == SHLO_OP_COUNT,
               "verifiers must have one entry per op code");

/* ---- functions ---- */

/* func.return: operand count and types match the function's results. */
static bool verify_func_return(shlo__vctx *vc, const shlo_op *op) {
  const shlo_func *f = vc->f;
  if (op->n_operands != f->n_results)
    return shlo__verr(vc, op, NULL,
                      "returns %d values but @%s has %d results",
                      op->n_operands, f->name, f->n_results);
  for (int i = 0; i < op->n_operands; i++) {
    const shlo_type *t = shlo__otype(vc, op, i);
    if (!shlo__compat_type(t, f->result_types[i]))
      return shlo__verr(vc, op, NULL,
                        "result #%d has type %s but @%s returns %s", i,
                        shlo__tstr(vc, t), f->name,
                        shlo__tstr(vc, f->result_types[i]));
  }
  return true;
}

static void verify_block(shlo__vctx *vc, const shlo_block *b, bool is_body);

static void verify_op(shlo__vctx *vc, const shlo_op *op) {
  for (int i = 0; i < op->n_operands; i++) {
    if (!shlo__otype(vc, op, i)) {
      shlo__verr(vc, op, NULL, "operand #%d is not defined", i);
      return;
    }
    /* Bad types are reported at their uses (function arguments have no
     * location of their own). */
    if (!verify_type(vc, op->loc, op->name, shlo__otype(vc, op, i))) return;
  }
  for (int i = 0; i < op->n_results; i++)
    if (!verify_type(vc, op->loc, op->name, shlo__rtype(vc, op, i))) return;
  for (int r = 0; r < op->n_regions; r++)
    verify_block(vc, op->regions[r], false);
  /* Only ops whose row says SHLO_OPF_PER_AXIS take per-axis types. */
  if (!(shlo__op_flags(op->code) & SHLO_OPF_PER_AXIS)) {
    for (int i = 0; i < op->n_operands; i++)
      if (shlo__is_per_axis(shlo__otype(vc, op, i))) {
        shlo__verr(vc, op, NULL, "operand #%d %s must not be per-axis "
                   "quantized", i, shlo__tstr(vc, shlo__otype(vc, op, i)));
        return;
      }
    for (int i = 0; i < op->n_results; i++)
      if (shlo__is_per_axis(shlo__rtype(vc, op, i))) {
        shlo__verr(vc, op, NULL, "result #%d %s must not be per-axis "
                   "quantized", i, shlo__tstr(vc, shlo__rtype(vc, op, i)));
        return;
      }
  }
  shlo__verify_fn fn = op->code > 0 && op->code < SHLO_OP_COUNT
                           ? verifiers[op->code]
                           : NULL;
  if (fn && shlo__verify_required_attrs(vc, op)) fn(vc, op);
}

/* One more op visited: within the caller's limits?  When not, the walk
 * stops with the limit's status and diagnostic. */
static bool count_op(shlo__vctx *vc, const shlo_op *op) {
  char msg[160];
  if (vc->stopped) return false;
  shlo_status st = shlo__limits_check(vc->limits, ++vc->n_ops, "verifying",
                                      msg, sizeof msg);
  if (!st) return true;
  shlo__verr_at(vc, op->loc, st, "%s", msg);
  vc->stopped = st;
  return false;
}

static void verify_block(shlo__vctx *vc, const shlo_block *b, bool is_body) {
  if (!b) return;
  for (int i = 0; i < b->n_args; i++) {
    shlo_loc loc = vc->f->loc;
    if (b->n_ops) loc = b->ops[0]->loc;
    if (!verify_type(vc, loc, "block argument", shlo__vtype(vc, b->args[i])))
      return;
  }
  for (int i = 0; i < b->n_ops; i++) {
    const shlo_op *op = b->ops[i];
    if (!count_op(vc, op)) return;
    bool last = i == b->n_ops - 1;
    if (op->code == SHLO_OP_FUNC_RETURN || op->code == SHLO_OP_RETURN) {
      if (!last) {
        shlo__verr(vc, op, NULL, "must be the last op of its block");
        continue;
      }
      if (is_body && op->code == SHLO_OP_FUNC_RETURN) {
        verify_func_return(vc, op);
        continue;
      }
    }
    verify_op(vc, op);
  }
}

int shlo__const_ints(const shlo__vctx *vc, int id, int64_t *out, int cap) {
  if (!vc->defs || id < 0 || id >= vc->f->n_values) return -1;
  const shlo_op *d = vc->defs[id];
  if (!d || d->code != SHLO_OP_CONSTANT) return -1;
  return shlo_attr_i64s(shlo_op_attr(d, "value"), out, cap);
}

static void record_defs(shlo__vctx *vc, const shlo_block *b) {
  if (!b) return;
  for (int i = 0; i < b->n_ops; i++) {
    const shlo_op *op = b->ops[i];
    for (int k = 0; k < op->n_results; k++)
      if (op->results[k] >= 0 && op->results[k] < vc->f->n_values)
        vc->defs[op->results[k]] = op;
    for (int r = 0; r < op->n_regions; r++) record_defs(vc, op->regions[r]);
  }
}

static void verify_func_body(shlo__vctx *vc, const shlo_func *f);

static void verify_func(shlo__vctx *vc, const shlo_func *f) {
  vc->f = f;
  vc->defs = f->n_values ? shlo__calloc((size_t)f->n_values, sizeof *vc->defs)
                         : NULL;
  if (vc->defs) record_defs(vc, f->body);
  verify_func_body(vc, f);
  shlo__free(vc->defs);
  vc->defs = NULL;
}

static void verify_func_body(shlo__vctx *vc, const shlo_func *f) {
  if (!f->body) { /* a declaration: its signature is all there is */
    for (int i = 0; i < f->n_args; i++)
      if (!verify_type(vc, f->loc, "func argument", f->arg_types[i])) return;
    for (int i = 0; i < f->n_results; i++)
      if (!verify_type(vc, f->loc, "func result", f->result_types[i]))
        return;
    return;
  }
  const shlo_block *b = f->body;
  if (b->n_ops == 0 || b->ops[b->n_ops - 1]->code != SHLO_OP_FUNC_RETURN) {
    shlo__verr_at(vc, b->n_ops ? b->ops[b->n_ops - 1]->loc : f->loc,
                  SHLO_EVERIFY,
                  "func @%s: the body must end with func.return", f->name);
  }
  verify_block(vc, b, true);
}

typedef struct named_index {
  const char *name;
  int index;
} named_index;

static int by_name_then_index(const void *a, const void *b) {
  const named_index *x = a, *y = b;
  int c = strcmp(x->name, y->name);
  return c ? c : (x->index > y->index) - (x->index < y->index);
}

/* Module: symbols are unique.  Sorted by name, so n log n in the number
 * of functions; each repeat is reported in module order, naming the
 * first definition.  False on OOM. */
static bool verify_unique_symbols(shlo__vctx *vc) {
  const shlo_module *m = vc->m;
  named_index *order = shlo__malloc((size_t)(m->n_funcs + 1) * sizeof *order);
  int *first = shlo__malloc((size_t)(m->n_funcs + 1) * sizeof *first);
  if (!order || !first) {
    shlo__free(order);
    shlo__free(first);
    return false;
  }
  for (int i = 0; i < m->n_funcs; i++) {
    order[i] = (named_index){m->funcs[i]->name, i};
    first[i] = -1;
  }
  qsort(order, (size_t)m->n_funcs, sizeof *order, by_name_then_index);
  for (int k = 1; k < m->n_funcs; k++) {
    int prev = order[k - 1].index, cur = order[k].index;
    if (!strcmp(order[k - 1].name, order[k].name))
      first[cur] = first[prev] >= 0 ? first[prev] : prev;
  }
  for (int i = 0; i < m->n_funcs; i++)
    if (first[i] >= 0)
      shlo__verr_at(vc, m->funcs[i]->loc, SHLO_EVERIFY,
                    "redefinition of symbol @%s (first defined at %d:%d)",
                    m->funcs[i]->name, m->funcs[first[i]]->loc.line,
                    m->funcs[first[i]]->loc.col);
  shlo__free(order);
  shlo__free(first);
  return true;
}

shlo_status shlo_verify_module(const shlo_module *m,
                               const shlo_verify_opts *opts,
                               shlo_diag_list *out) {
  shlo__vctx *vc = shlo__calloc(1, sizeof *vc);
  if (!vc) return SHLO_ENOMEM;
  vc->m = m;
  vc->out = out;
  vc->limits = opts ? opts->limits : NULL;
  if (!verify_unique_symbols(vc)) vc->oom = true;
  if (opts && opts->require_entry) {
    const shlo_func *e = opts->entry ? shlo_module_find_func(m, opts->entry)
                                     : shlo_module_entry(m);
    if (!e) {
      shlo_loc nowhere = {0, 0};
      if (opts->entry)
        shlo__verr_at(vc, nowhere, SHLO_EVERIFY,
                      "module: no entry function named @%s", opts->entry);
      else
        shlo__verr_at(vc, nowhere, SHLO_EVERIFY,
                      "module: no entry function: expected @main or a single "
                      "function");
    } else if (!e->body) {
      shlo__verr_at(vc, e->loc, SHLO_EVERIFY,
                    "module: entry function @%s has no body", e->name);
    }
  }
  for (int i = 0; i < m->n_funcs && !vc->stopped; i++)
    verify_func(vc, m->funcs[i]);
  shlo_status st = vc->oom            ? SHLO_ENOMEM
                   : vc->stopped       ? vc->stopped
                   : vc->n_errors      ? SHLO_EVERIFY
                   : vc->n_unsupported ? SHLO_EUNSUPPORTED
                                       : SHLO_OK;
  shlo__free(vc);
  return st;
}

shlo_status shlo_verify_module_first(const shlo_module *m,
                                     const shlo_verify_opts *opts,
                                     shlo_diag *diag) {
  shlo_diag_list l;
  shlo_diag_list_init(&l);
  shlo_status st = shlo_verify_module(m, opts, &l);
  if (st && diag) {
    const shlo_diag *pick = NULL;
    for (int i = 0; i < l.n && !pick; i++)
      if (l.v[i].code == st) pick = &l.v[i];
    if (!pick && l.n) pick = &l.v[0];
    if (pick) *diag = *pick;
    else shlo_diag_set(diag, st, m->filename, 0, 0, "%s",
                       shlo_status_message(st));
  }
  shlo_diag_list_free(&l);
  return st;
}
