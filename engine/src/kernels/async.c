/* SPDX-License-Identifier: Apache-2.0 */
/* stablehlo.async_start and stablehlo.async_done.
 *
 * A future is carried as a tuple of the region's results.  async_start
 * runs its region when it is reached, so the computation is done by the
 * time any async_done waits for it: a valid schedule of an asynchronous
 * pair on an engine whose steps run in program order, and the results are
 * the same as any other schedule's (the region is pure apart from its
 * collectives, which meet their peers as they would inline). */
#include <stdlib.h>

#include "core/alloc.h"
#include "core/value.h"
#include "kernels/kernel.h"

static shlo_status k_async_start(const shlo_step *s, shlo_value *const *in,
                                 shlo_value **out, shlo_exec *ex) {
  int n = s->plans[0]->n_results;
  shlo_value **res = shlo__calloc((size_t)(n ? n : 1), sizeof *res);
  if (!res) return shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory");
  shlo_status st =
      shlo__step_run_region(s, 0, in, in, s->op->n_operands, res, ex);
  if (st != SHLO_OK) {
    for (int i = 0; i < n; i++) shlo_value_unref(res[i]);
    shlo__free(res);
    return st;
  }
  out[0] = shlo_tuple_new(n, res); /* takes the references, even on failure */
  shlo__free(res);
  return out[0] ? SHLO_OK
                : shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory");
}

shlo_status shlo__compile_async_start(shlo_compiler *cc, const shlo_op *op,
                                      shlo_step *step) {
  step->fn = k_async_start;
  return shlo__cc_compile_regions(cc, op, step);
}

static shlo_status k_async_done(const shlo_step *s, shlo_value *const *in,
                                shlo_value **out, shlo_exec *ex) {
  const shlo_value *f = in[0];
  /* The verifier matched the future's types to ours; a value that is not
   * our tuple can only come from a caller's argument. */
  if (f->kind != SHLO_TYPE_TUPLE || f->n_elems != s->n_out)
    return shlo__exec_fail(ex, s, SHLO_ERUNTIME,
                           "operand is not a future of %d values", s->n_out);
  for (int i = 0; i < s->n_out; i++) out[i] = shlo_value_ref(f->elems[i]);
  return SHLO_OK;
}

shlo_status shlo__compile_async_done(shlo_compiler *cc, const shlo_op *op,
                                     shlo_step *step) {
  (void)cc;
  (void)op;
  step->fn = k_async_done;
  return SHLO_OK;
}
