/* SPDX-License-Identifier: Apache-2.0 */
/* Plans' lifetime: what a plan and its steps own, and freeing it. */
#include <stdlib.h>

#include "core/alloc.h"
#include "compile/plan.h"

void *shlo__params_alloc(shlo_step *s, size_t size) {
  if (s->params && s->free_params) s->free_params(s->params);
  s->params = shlo__calloc(1, size ? size : 1);
  s->free_params = shlo__free;
  return s->params;
}

void shlo__step_free(shlo_step *s) {
  shlo__free(s->in);
  shlo__free(s->out);
  shlo__free(s->release);
  if (s->free_params) s->free_params(s->params);
  for (int i = 0; i < s->n_plans; i++) shlo__plan_free(s->plans[i]);
  shlo__free(s->plans);
  shlo__free(s->n_captures);
  shlo__free(s->label);
}

void shlo__scalar_prog_free(shlo_scalar_prog *sp) {
  if (!sp) return;
  shlo__free(sp->init);
  shlo__free(sp->ops);
  shlo__free(sp->arg_size);
  shlo__free(sp->res_size);
  shlo__free(sp);
}

void shlo__plan_free(shlo_plan *p) {
  if (!p) return;
  shlo__scalar_prog_free(p->scalar);
  for (int i = 0; i < p->n_steps; i++) shlo__step_free(&p->steps[i]);
  shlo__free(p->steps);
  shlo__free(p->arg_slots);
  shlo__free(p->result_slots);
  shlo__free(p);
}

