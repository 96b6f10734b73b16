/* SPDX-License-Identifier: Apache-2.0 */
/* The test-harness ops: check.expect_*, interpreter.probe/print and the
 * stablehlo.custom_call @check.* forms JAX exports use.  A failed check
 * ends the execution with SHLO_ECHECK and says which element differs. */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/elemfmt.h"
#include "core/floatfmt.h"
#include "core/value.h"
#include "kernels/kernel.h"
#include "kernels/custom_targets.h"
#include "kernels/lapack.h"

typedef enum { CMP_EQ, CMP_ALMOST, CMP_CLOSE, CMP_BITS } cmp_mode;

typedef struct check_params {
  cmp_mode mode;
  double tolerance;
  int64_t max_ulp, min_ulp;
  const shlo_value *expected; /* _const forms: the literal (module-owned) */
  const char *probe_id;       /* probe / serialized_eq */
  int64_t iter;
  bool returns_bool;          /* custom_call @check.eq gives tensor<i1> */
} check_params;

static bool float_eq(double a, double b) {
  return a == b || (isnan(a) && isnan(b));
}

static bool float_almost(double a, double b, double tol) {
  if (float_eq(a, b)) return true;
  return isfinite(a) && isfinite(b) && fabs(a - b) <= tol;
}

/* StableHLO's ULP difference: 0 for the same non-finite value (both NaN,
 * or the same infinity), the largest 64-bit count when only one side is
 * that value (so that max_ulp_difference = 2^64 - 1 and the same min ask
 * for a non-finite mismatch, as tests/math/ulp_difference_* do), else the
 * representable values between them.  The attributes are ui64: read into
 * int64 they wrap, hence the casts. */
static bool ulp_ok(shlo_elem_type t, const void *a, const void *b,
                   const check_params *p) {
  double x = shlo__float_load(t, a), y = shlo__float_load(t, b);
  uint64_t d;
  if (!isfinite(x) || !isfinite(y)) {
    size_t es = shlo_elem_size(t);
    d = (isnan(x) && isnan(y)) || memcmp(a, b, es) == 0 ? 0 : UINT64_MAX;
  } else {
    d = shlo__float_ulp_distance(t, a, b);
  }
  return d <= (uint64_t)p->max_ulp && d >= (uint64_t)p->min_ulp;
}

/* Element i of v, exactly (the shortest text that reads back), so that a
 * failure never shows two equal-looking numbers. */
static void describe(char *buf, size_t cap, const shlo_value *v, int64_t i) {
  strbuf b = {0};
  shlo__sb_put_elem(&b, v, i, SHLO_ELEMFMT_EXACT);
  char *s = shlo__sb_take(&b);
  snprintf(buf, cap, "%s", s ? s : "?");
  free(s);
}

/* Index of the first element where got and want disagree, -1 if none. */
static int64_t first_mismatch(const shlo_value *got, const shlo_value *want,
                              const check_params *p) {
  shlo_elem_type t = got->elem;
  size_t es = shlo_elem_size(t);
  for (int64_t i = 0; i < got->numel; i++) {
    const char *a = (const char *)got->data + (size_t)i * es;
    const char *b = (const char *)want->data + (size_t)i * es;
    bool ok;
    if (p->mode == CMP_BITS) {
      ok = memcmp(a, b, es) == 0;
    } else if (shlo_elem_is_float(t)) {
      double x = shlo__float_load(t, a), y = shlo__float_load(t, b);
      ok = p->mode == CMP_ALMOST  ? float_almost(x, y, p->tolerance)
           : p->mode == CMP_CLOSE ? ulp_ok(t, a, b, p)
                                  : float_eq(x, y);
    } else if (shlo_elem_is_complex(t)) {
      shlo_elem_type pt = shlo_elem_complex_part(t);
      size_t ps = es / 2;
      ok = true;
      for (int k = 0; k < 2; k++) {
        double x = shlo__float_load(pt, a + k * ps);
        double y = shlo__float_load(pt, b + k * ps);
        ok = ok && (p->mode == CMP_ALMOST  ? float_almost(x, y, p->tolerance)
                    : p->mode == CMP_CLOSE ? ulp_ok(pt, a + k * ps, b + k * ps, p)
                                           : float_eq(x, y));
      }
    } else {
      ok = memcmp(a, b, es) == 0;
    }
    if (!ok) return i;
  }
  return -1;
}

static shlo_status compare(const shlo_step *s, const shlo_value *got,
                           const shlo_value *want, const check_params *p,
                           shlo_exec *ex, bool *equal) {
  *equal = false;
  if (got->kind != SHLO_TYPE_TENSOR || want->kind != SHLO_TYPE_TENSOR)
    return shlo__exec_fail(ex, s, SHLO_ECHECK, "can only compare tensors");
  if (got->elem != want->elem || got->numel != want->numel) {
    if (p->returns_bool) return SHLO_OK;
    return shlo__exec_fail(ex, s, SHLO_ECHECK,
                          "got %lld elements of %s but expected %lld of %s",
                          (long long)got->numel, shlo_elem_name(got->elem),
                          (long long)want->numel, shlo_elem_name(want->elem));
  }
  int64_t i = first_mismatch(got, want, p);
  if (i < 0) {
    *equal = true;
    return SHLO_OK;
  }
  if (p->returns_bool) return SHLO_OK;
  char a[96], b[96];
  describe(a, sizeof a, got, i);
  describe(b, sizeof b, want, i);
  return shlo__exec_fail(ex, s, SHLO_ECHECK,
                        "element %lld: got %s, expected %s", (long long)i, a,
                        b);
}

static shlo_status k_check(const shlo_step *s, shlo_value *const *in,
                           shlo_value **out, shlo_exec *ex) {
  const check_params *p = s->params;
  const shlo_value *want = p->expected ? p->expected : in[1];
  bool equal;
  shlo_status st = compare(s, in[0], want, p, ex, &equal);
  if (st) return st;
  if (p->returns_bool) {
    out[0] = shlo_tensor_new(SHLO_I1, 0, NULL);
    if (!out[0]) return shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory");
    ((uint8_t *)out[0]->data)[0] = equal;
  }
  return SHLO_OK;
}

static shlo_status k_serialized_eq(const shlo_step *s, shlo_value *const *in,
                                   shlo_value **out, shlo_exec *ex) {
  (void)out;
  const check_params *p = s->params;
  shlo_value *want = shlo__exec_probe_get(ex, p->probe_id, p->iter);
  if (!want)
    return shlo__exec_fail(ex, s, SHLO_ECHECK,
                          "probe '%s' has no value for iteration %lld",
                          p->probe_id, (long long)p->iter);
  bool equal;
  return compare(s, in[0], want, p, ex, &equal);
}

static shlo_status k_probe(const shlo_step *s, shlo_value *const *in,
                           shlo_value **out, shlo_exec *ex) {
  const check_params *p = s->params;
  shlo_status st = shlo__exec_probe_record(ex, p->probe_id, in[0]);
  if (st) return shlo__exec_fail(ex, s, st, "cannot record probe");
  out[0] = shlo_value_ref(in[0]);
  return SHLO_OK;
}

static pthread_mutex_t print_lock = PTHREAD_MUTEX_INITIALIZER;

static shlo_status k_print(const shlo_step *s, shlo_value *const *in,
                           shlo_value **out, shlo_exec *ex) {
  (void)out;
  char *text = shlo_value_to_string(in[0]);
  if (!text) return shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory");
  /* One lock for all executions: lines of parallel processes must not
   * interleave. */
  pthread_mutex_lock(&print_lock);
  fprintf(shlo__exec_print_stream(ex), "%s\n", text);
  fflush(shlo__exec_print_stream(ex));
  pthread_mutex_unlock(&print_lock);
  free(text);
  return SHLO_OK;
}

static shlo_status need_operands(shlo_compiler *cc, const shlo_op *op, int n) {
  if (op->n_operands != n)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY, "expects %d operands, got %d", n,
                        op->n_operands);
  for (int i = 0; i < n; i++)
    if (shlo__cc_operand_type(cc, op, i)->kind != SHLO_TYPE_TENSOR)
      return shlo__cc_fail(cc, op, SHLO_EVERIFY, "operand %d must be a tensor",
                          i);
  return SHLO_OK;
}

shlo_status shlo__compile_check(shlo_compiler *cc, const shlo_op *op,
                               shlo_step *step) {
  check_params *p = shlo__params_alloc(step, sizeof *p);
  if (!p) return SHLO_ENOMEM;
  p->tolerance = 1e-4;
  p->max_ulp = 0;
  p->min_ulp = 0;
  shlo_attr_get_f64(shlo_op_attr(op, "tolerance"), &p->tolerance);
  shlo_attr_get_i64(shlo_op_attr(op, "max_ulp_difference"), &p->max_ulp);
  shlo_attr_get_i64(shlo_op_attr(op, "min_ulp_difference"), &p->min_ulp);
  shlo_attr_get_i64(shlo_op_attr(op, "iter"), &p->iter);
  p->probe_id = shlo_attr_get_str(shlo_op_attr(op, "probe_id"));
  int n_operands = 2;
  bool is_const = false;
  step->fn = k_check;
  switch (op->code) {
  case SHLO_OP_CHECK_EXPECT_EQ_CONST:
    is_const = true;
    /* fall through */
  case SHLO_OP_CHECK_EXPECT_EQ:
    p->mode = CMP_EQ;
    break;
  case SHLO_OP_CHECK_EXPECT_ALMOST_EQ_CONST:
    is_const = true;
    /* fall through */
  case SHLO_OP_CHECK_EXPECT_ALMOST_EQ:
    p->mode = CMP_ALMOST;
    break;
  case SHLO_OP_CHECK_EXPECT_CLOSE:
    p->mode = CMP_CLOSE;
    break;
  case SHLO_OP_CHECK_EXPECT_SERIALIZED_EQ:
    p->mode = CMP_BITS;
    n_operands = 1;
    step->fn = k_serialized_eq;
    break;
  case SHLO_OP_INTERPRETER_PROBE:
    n_operands = 1;
    step->fn = k_probe;
    break;
  case SHLO_OP_INTERPRETER_PRINT:
    return need_operands(cc, op, 1) ? SHLO_EVERIFY
                                    : (step->fn = k_print, SHLO_OK);
  default:
    return shlo__cc_fail(cc, op, SHLO_EUNSUPPORTED, "unknown check op");
  }
  if (is_const) {
    const shlo_attr *v = shlo_op_attr(op, "value");
    if (!v || v->kind != SHLO_ATTR_DENSE)
      return shlo__cc_fail(cc, op, SHLO_EVERIFY, "needs a dense literal");
    p->expected = v->dense;
    n_operands = 1;
  }
  if ((step->fn == k_serialized_eq || step->fn == k_probe) && !p->probe_id)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY, "needs a probe_id");
  return need_operands(cc, op, n_operands);
}

/* stablehlo.custom_call: the @check.* targets and JAX's LAPACK calls
 * (lapack.h); anything else is not something this engine can run. */
shlo_status shlo__compile_custom_call(shlo_compiler *cc, const shlo_op *op,
                                     shlo_step *step) {
  const char *target = shlo_attr_get_str(shlo_op_attr(op, "call_target_name"));
  if (!target)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY, "needs a call target");
  if (shlo__lapack_target(target))
    return shlo__compile_lapack(cc, op, step, target);
  if (shlo__custom_target_known(target))
    return shlo__compile_custom_target(cc, op, step, target);
  check_params *p = shlo__params_alloc(step, sizeof *p);
  if (!p) return SHLO_ENOMEM;
  step->fn = k_check;
  if (!strcmp(target, "check.expect_eq")) {
    p->mode = CMP_EQ;
  } else if (!strcmp(target, "check.expect_almost_eq")) {
    p->mode = CMP_ALMOST;
    p->tolerance = 1e-3;
  } else if (!strcmp(target, "check.expect_close")) {
    p->mode = CMP_CLOSE;
    p->max_ulp = 3;
  } else if (!strcmp(target, "check.eq")) {
    p->mode = CMP_EQ;
    p->returns_bool = true;
  } else {
    return shlo__cc_fail(cc, op, SHLO_EUNSUPPORTED,
                        "custom_call target '%s' is not supported", target);
  }
  if (p->returns_bool ? op->n_results != 1 : op->n_results != 0)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY, "wrong number of results for %s",
                        target);
  return need_operands(cc, op, 2);
}
