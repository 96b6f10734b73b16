/* Plans' lifetime: what a plan and its steps own, and freeing it. */
#include <stdlib.h>

#include "compile/plan.h"

void *shlo__params_alloc(shlo_step *s, size_t size) {
  if (s->params && s->free_params) s->free_params(s->params);
  s->params = calloc(1, size ? size : 1);
  s->free_params = free;
  return s->params;
}

void shlo__step_free(shlo_step *s) {
  free(s->in);
  free(s->out);
  free(s->release);
  if (s->free_params) s->free_params(s->params);
  for (int i = 0; i < s->n_plans; i++) shlo__plan_free(s->plans[i]);
  free(s->plans);
  free(s->n_captures);
  free(s->label);
}

void shlo__scalar_prog_free(shlo_scalar_prog *sp) {
  if (!sp) return;
  free(sp->init);
  free(sp->ops);
  free(sp->arg_size);
  free(sp->res_size);
  free(sp);
}

void shlo__plan_free(shlo_plan *p) {
  if (!p) return;
  shlo__scalar_prog_free(p->scalar);
  for (int i = 0; i < p->n_steps; i++) shlo__step_free(&p->steps[i]);
  free(p->steps);
  free(p->arg_slots);
  free(p->result_slots);
  free(p);
}

