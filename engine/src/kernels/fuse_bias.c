/* SPDX-License-Identifier: Apache-2.0 */
/* A convolution's bias and ReLU, found in the run that is its epilogue
 * (fuse.c) so that the GEMM applies them in its registers
 * (shlo_step.loop.run_bias_relu) instead of the run going over each
 * finished block again. */
#include <string.h>

#include "core/value.h"
#include "kernels/fuse_int.h"
#include "ops/ops.h"

static bool member_is(const member *m, int code) {
  return m->step.op && m->step.op->code == code;
}

static int64_t type_numel(const shlo_type *t) {
  int64_t n = 1;
  for (int d = 0; d < t->rank; d++) n *= t->dims[d];
  return n;
}

/* Whether broadcast member m reads an f32 input from outside the run
 * along the last dimension alone (a bias: one value per column, cols of
 * them), or, with scalar, one f32 value everywhere. */
bool shlo__fuse_bcast_of(const member *m, const shlo_step *r,
                         const shlo_type *const *types, int64_t cols,
                         bool scalar) {
  if (!m->bcast || m->slice || m->n_in != 1 || m->ref[0] < 0 ||
      m->out >= 0 || m->map.rank < 1)
    return false;
  const shlo_type *t = types[r->in[m->ref[0]]];
  if (t->kind != SHLO_TYPE_TENSOR || t->elem != SHLO_F32 || t->quant ||
      t->rank < 0 || type_numel(t) != (scalar ? 1 : cols))
    return false;
  int last = m->map.rank - 1;
  /* (a dimension of one element never moves, whatever its stride: a
   * batch of one) */
  for (int d = 0; d < last; d++)
    if (m->map.src_stride[d] && m->map.dims[d] != 1) return false;
  return m->map.src_stride[last] == (scalar ? 0 : 1);
}

/* Whether two-operand member m reads refs x and y, in either order. */
static bool reads_pair(const member *m, int x, int y) {
  return m->n_in == 2 && ((m->ref[0] == x && m->ref[1] == y) ||
                          (m->ref[0] == y && m->ref[1] == x));
}

bool shlo__fuse_bias_relu_of(const shlo_step *r, const shlo_type *made,
                             int ext, const shlo_type *const *types,
                             int *bias, int *zero) {
  const fused *f = r->params;
  if (made->kind != SHLO_TYPE_TENSOR || made->elem != SHLO_F32 ||
      made->quant || made->rank < 1 || f->n_out != 1 || r->n_out != 1 ||
      !shlo_type_equal(made, types[r->out[0]]))
    return false;
  int64_t cols = made->dims[made->rank - 1];
  int add = -1, max = -1, bb = -1, zb = -1;
  for (int k = 0; k < f->n_members; k++) {
    const member *m = &f->m[k];
    if (bb < 0 && shlo__fuse_bcast_of(m, r, types, cols, false)) bb = k;
    else if (zb < 0 && shlo__fuse_bcast_of(m, r, types, cols, true)) zb = k;
    else if (add < 0 && member_is(m, SHLO_OP_ADD)) add = k;
    else if (max < 0 && member_is(m, SHLO_OP_MAXIMUM)) max = k;
    else return false;
  }
  /* the product first, as the GEMM adds it (of two NaNs, the first
   * operand's is kept) */
  const member *ma = add >= 0 ? &f->m[add] : NULL;
  if (bb < 0 || !ma || ma->n_in != 2 || ma->ref[0] != ext ||
      ma->ref[1] != -(bb + 1))
    return false;
  *bias = f->m[bb].ref[0];
  *zero = -1;
  if (max < 0) return zb < 0 && f->m[add].out == 0;
  if (zb < 0 || f->m[add].out >= 0 || f->m[max].out != 0 ||
      !reads_pair(&f->m[max], -(add + 1), -(zb + 1)))
    return false;
  *zero = f->m[zb].ref[0];
  return true;
}

bool shlo__fuse_is_pos_zero(const shlo_value *v) {
  uint32_t bits;
  if (!v || v->kind != SHLO_TYPE_TENSOR || v->elem != SHLO_F32 ||
      v->numel != 1 || v->quant)
    return false;
  memcpy(&bits, v->data, sizeof bits);
  return bits == 0;
}

bool shlo__fuse_const_pos_zero(const shlo_plan *pl, int slot) {
  for (int i = 0; i < pl->n_steps; i++) {
    const shlo_step *c = &pl->steps[i];
    if (c->op && c->op->code == SHLO_OP_CONSTANT && c->n_out == 1 &&
        c->out[0] == slot && c->params)
      return shlo__fuse_is_pos_zero(*(shlo_value *const *)c->params);
  }
  return false;
}
