/* SPDX-License-Identifier: Apache-2.0 */
/* CHLO's broadcasting ops (chlo.broadcast_add ... broadcast_select): the
 * facts their rows give (ops.h, SHLO_BCAST column) and the broadcasting
 * rule, which the verifier (verify_chlo.c) and the compiler
 * (kernels/chlo_broadcast.c) both apply. */
#ifndef SHLO_CHLO_BCAST_H
#define SHLO_CHLO_BCAST_H

#include <stddef.h>
#include <stdint.h>

#include "ops/ops.h"

/* Element classes an op accepts (of lhs/rhs; select: of on_true). */
enum {
  SHLO_BC_BOOL = 1,
  SHLO_BC_INT = 2,
  SHLO_BC_FLOAT = 4,
  SHLO_BC_COMPLEX = 8,
  SHLO_BC_ANY = 15,
  SHLO_BC_BI = SHLO_BC_BOOL | SHLO_BC_INT,
  SHLO_BC_NUM = SHLO_BC_INT | SHLO_BC_FLOAT | SHLO_BC_COMPLEX,
  SHLO_BC_FC = SHLO_BC_FLOAT | SHLO_BC_COMPLEX,
  SHLO_BC_FQ = SHLO_BC_FLOAT,
};
/* The result's element type: the operands' (SAME), i1 (PRED, compare),
 * or the complex type of the float operands (CPLX). */
enum { SHLO_BC_RES_SAME, SHLO_BC_RES_PRED, SHLO_BC_RES_CPLX };

typedef struct shlo_bcast_info {
  int inner;     /* the same-shape op it runs once broadcast (0: not CHLO
                    broadcasting) */
  int kinds;     /* SHLO_BC_* */
  int result;    /* SHLO_BC_RES_* */
} shlo_bcast_info;

/* The facts of op code `code` (all zero for other ops). */
shlo_bcast_info shlo__bcast_info(int code);

/* CHLO's broadcast of n (2 or 3) operand shapes, ranks[k] dims dims[k].
 * bd: broadcast_dimensions (n_bd entries), or n_bd < 0 when absent.
 * Without it (or when both ranks are equal, where CHLO ignores it) the
 * shapes align at their trailing dimensions, numpy's rule; with it, dim i
 * of the lower-rank operand maps to result dim bd[i] and the other operand
 * maps one to one.  Mapped sizes must be equal or 1 (1 repeats); a
 * dynamic size (-1) matches any.  Writes the result shape and, per
 * operand, the result dim each of its dims maps to.  Returns 0, or -1
 * with a sentence in msg. */
int shlo__bcast_shape(int n, const int *ranks, const int64_t *const *dims,
                      const int64_t *bd, int n_bd, int *out_rank,
                      int64_t *out_dims, int map[][SHLO_MAX_RANK], char *msg,
                      size_t cap);

#endif
