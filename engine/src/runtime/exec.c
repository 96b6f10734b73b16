/* SPDX-License-Identifier: Apache-2.0 */
/* The executor: runs plans over frames of slots.
 *
 * shlo__plan_run is the one dispatch loop: fetch a step, gather its input
 * values, call its kernel, store its outputs, drop values that died.  It
 * checks the deadline and the cancel flag between steps, so a runaway
 * while loop stops. */
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "frontend/module.h"
#include "compile/executable.h"
#include "compile/refine_cache.h"
#include "core/value.h"
#include "core/tensor_view.h"
#include "runtime/exec_int.h"
#include "core/alloc.h"
#include "core/context_int.h"
#include "core/membudget.h"
#include "runtime/pool.h"
#include "runtime/profile_int.h"
#include "shlo/engine.h"
#include "shlo/trace.h"


static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

shlo_status shlo__exec_fail(shlo_exec *ex, const shlo_step *s,
                           shlo_status code, const char *fmt, ...) {
  char msg[SHLO_DIAG_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  bool first = false;
  pthread_mutex_lock(&ex->lock);
  if (!ex->failed) {
    ex->failed = first = true;
    if (s && s->op)
      shlo_diag_set(ex->diag, code, ex->filename, s->op->loc.line,
                    s->op->loc.col, "%s: %s", s->op->name, msg);
    else
      shlo_diag_set(ex->diag, code, ex->filename, 0, 0, "%s", msg);
  }
  pthread_mutex_unlock(&ex->lock);
  if (first && ex->on_failure) ex->on_failure(ex);
  return code;
}

bool shlo__exec_should_stop(shlo_exec *ex) {
  if (shlo__canceled(ex->cancel)) return true;
  return ex->deadline > 0 && now_s() > ex->deadline;
}

shlo_status shlo__exec_stopped(shlo_exec *ex, const shlo_step *s) {
  if (shlo__canceled(ex->cancel))
    return shlo__exec_fail(ex, s, SHLO_ECANCELED, "execution canceled");
  return shlo__exec_fail(ex, s, SHLO_ETIMEOUT,
                        "execution exceeded its deadline");
}

FILE *shlo__exec_print_stream(shlo_exec *ex) { return ex->print; }

shlo_status shlo__plan_run(const shlo_plan *p, shlo_exec *ex,
                          shlo_value *const *args, shlo_value **results) {
  int max_io = p->max_io > 0 ? p->max_io : 1;
  /* Region bodies run once per element of a reduce or sort: small frames
   * live on the stack. */
  shlo_value *stack_slots[32], *stack_in[8], *stack_out[8];
  bool small = p->n_slots <= 32 && max_io <= 8;
  shlo_value **slots = small ? stack_slots
                             : shlo__calloc((size_t)p->n_slots + 1, sizeof *slots);
  shlo_value **in = small ? stack_in : shlo__malloc((size_t)max_io * sizeof *in);
  shlo_value **out = small ? stack_out : shlo__calloc((size_t)max_io, sizeof *out);
  if (small) {
    memset(stack_slots, 0, (size_t)p->n_slots * sizeof *slots);
    memset(stack_out, 0, sizeof stack_out);
  }
  shlo_status st = SHLO_OK;
  if (!slots || !in || !out) {
    st = shlo__exec_fail(ex, NULL, SHLO_ENOMEM, "out of memory");
    goto done;
  }
  for (int i = 0; i < p->n_args; i++)
    slots[p->arg_slots[i]] = shlo_value_ref(args[i]);
  for (int i = 0; i < p->n_steps; i++) {
    const shlo_step *s = &p->steps[i];
    if ((++ex->ticks & 63) == 0 && shlo__exec_should_stop(ex)) {
      st = shlo__exec_stopped(ex, s);
      goto done;
    }
    for (int k = 0; k < s->n_in; k++) in[k] = slots[s->in[k]];
    if (ex->profile) {
      uint64_t t0 = shlo_trace_now_ns();
      st = s->fn(s, in, out, ex);
      shlo__profile_step(ex->profile, p, s, t0);
    } else {
      st = s->fn(s, in, out, ex);
    }
    if (st) {
      for (int k = 0; k < s->n_out; k++) {
        shlo_value_unref(out[k]);
        out[k] = NULL;
      }
      goto done;
    }
    for (int k = 0; k < s->n_out; k++) {
      slots[s->out[k]] = out[k];
      out[k] = NULL;
    }
    for (int k = 0; k < s->n_release; k++) {
      shlo_value_unref(slots[s->release[k]]);
      slots[s->release[k]] = NULL;
    }
  }
  for (int k = 0; k < p->n_results; k++)
    results[k] = shlo_value_ref(slots[p->result_slots[k]]);
done:
  if (slots)
    for (int i = 0; i < p->n_slots; i++) shlo_value_unref(slots[i]);
  if (!small) {
    shlo__free(slots);
    shlo__free(in);
    shlo__free(out);
  }
  return st;
}

/* Where region r's captured values start among step s's inputs. */
static int region_capture_base(const shlo_step *s, int r) {
  int base = s->op->n_operands;
  for (int i = 0; i < r; i++) base += s->n_captures[i];
  return base;
}

shlo_status shlo__step_run_region(const shlo_step *s, int r,
                                 shlo_value *const *in,
                                 shlo_value *const *lead, int n,
                                 shlo_value **results, shlo_exec *ex) {
  const shlo_plan *p = s->plans[r];
  int nc = s->n_captures[r];
  int base = region_capture_base(s, r);
  shlo_value *stack_args[16];
  shlo_value **args = n + nc <= 16 ? stack_args
                                   : shlo__malloc((size_t)(n + nc) * sizeof *args);
  if (!args) return shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory");
  for (int i = 0; i < n; i++) args[i] = lead[i];
  for (int i = 0; i < nc; i++) args[n + i] = in[base + i];
  shlo_status st = shlo__plan_run(p, ex, args, results);
  if (args != stack_args) shlo__free(args);
  return st;
}

bool shlo__step_region_is_scalar(const shlo_step *s, int r) {
  return r < s->n_plans && s->plans[r]->scalar != NULL;
}

static shlo_value *take_input(const shlo_step *s, shlo_value *const *in,
                              int k, bool view_ok) {
  shlo_value *v = in[k];
  if (!v || v->kind != SHLO_TYPE_TENSOR || (v->owner && !view_ok) ||
      atomic_load_explicit(&v->refs, memory_order_acquire) != 1)
    return NULL;
  bool dies = false;
  for (int j = 0; j < s->n_release; j++) dies |= s->release[j] == s->in[k];
  for (int j = 0; j < s->n_in; j++)
    if (j != k && in[j] == v) return NULL;
  return dies ? shlo_value_ref(v) : NULL;
}

shlo_value *shlo__exec_take_input(const shlo_step *s, shlo_value *const *in,
                                  int k) {
  return take_input(s, in, k, false);
}

shlo_value *shlo__exec_take_input_shape(const shlo_step *s,
                                        shlo_value *const *in, int k) {
  return take_input(s, in, k, true);
}

/* Run scalar program sp's ops over regs, its arguments already in place. */
static void run_scalar_ops(const shlo_scalar_prog *sp, unsigned char *regs) {
  for (int k = 0; k < sp->n_ops; k++) {
    const shlo_step *st = sp->ops[k];
    const void *x[3];
    for (int j = 0; j < st->n_in && j < 3; j++)
      x[j] = regs + (size_t)st->in[j] * 16;
    st->loop.range(st, regs + (size_t)st->out[0] * 16, x, 1);
  }
}

/* Run region r's scalar program; the registers are left in regs. */
static void run_scalar_regs(const shlo_step *s, int r, shlo_value *const *in,
                            const void *const *lead, int n,
                            unsigned char *regs) {
  const shlo_plan *p = s->plans[r];
  const shlo_scalar_prog *sp = p->scalar;
  int base = region_capture_base(s, r);
  memcpy(regs, sp->init, (size_t)sp->n_regs * 16);
  for (int i = 0; i < p->n_args; i++) {
    const void *src = i < n ? lead[i] : in[base + i - n]->data;
    memcpy(regs + (size_t)p->arg_slots[i] * 16, src, sp->arg_size[i]);
  }
  run_scalar_ops(sp, regs);
}

void shlo__step_run_region_scalar(const shlo_step *s, int r,
                                 shlo_value *const *in,
                                 const void *const *lead, int n,
                                 void *const *results) {
  const shlo_plan *p = s->plans[r];
  _Alignas(16) unsigned char regs[SHLO_SCALAR_MAX_REGS * 16];
  run_scalar_regs(s, r, in, lead, n, regs);
  for (int k = 0; k < p->n_results; k++)
    memcpy(results[k], regs + (size_t)p->result_slots[k] * 16,
           p->scalar->res_size[k]);
}

void shlo__step_run_region_scalar_slot(const shlo_step *s, int r,
                                      shlo_value *const *in,
                                      const void *const *lead, int n,
                                      int slot, void *out, size_t size) {
  _Alignas(16) unsigned char regs[SHLO_SCALAR_MAX_REGS * 16];
  run_scalar_regs(s, r, in, lead, n, regs);
  memcpy(out, regs + (size_t)slot * 16, size);
}

void shlo__scalar_frame_init(shlo_scalar_frame *f, const shlo_step *s, int r,
                             shlo_value *const *in, int n) {
  const shlo_plan *p = s->plans[r];
  const shlo_scalar_prog *sp = p->scalar;
  int base = region_capture_base(s, r);
  f->p = p;
  f->n_lead = n;
  memcpy(f->regs, sp->init, (size_t)sp->n_regs * 16);
  for (int i = n; i < p->n_args; i++)
    memcpy(f->regs + (size_t)p->arg_slots[i] * 16, in[base + i - n]->data,
           sp->arg_size[i]);
}

void shlo__scalar_frame_run(shlo_scalar_frame *f, const void *const *lead) {
  const shlo_plan *p = f->p;
  for (int i = 0; i < f->n_lead; i++)
    memcpy(f->regs + (size_t)p->arg_slots[i] * 16, lead[i], 16);
  run_scalar_ops(p->scalar, f->regs);
}

/* ---- probes ---- */

shlo_status shlo__exec_probe_record(shlo_exec *ex, const char *id,
                                   shlo_value *v) {
  pthread_mutex_lock(&ex->lock);
  probe *pr = NULL;
  for (int i = 0; i < ex->n_probes; i++)
    if (!strcmp(ex->probes[i].id, id)) pr = &ex->probes[i];
  shlo_status st = SHLO_ENOMEM;
  if (!pr) {
    probe *np = shlo__realloc(ex->probes, (size_t)(ex->n_probes + 1) * sizeof *np);
    if (!np) goto out;
    ex->probes = np;
    pr = &ex->probes[ex->n_probes];
    memset(pr, 0, sizeof *pr);
    size_t idn = strlen(id) + 1;
    pr->id = shlo__malloc(idn);
    if (!pr->id) goto out;
    memcpy(pr->id, id, idn);
    ex->n_probes++;
  }
  shlo_value **nv = shlo__realloc(pr->values, (size_t)(pr->n + 1) * sizeof *nv);
  if (!nv) goto out;
  pr->values = nv;
  pr->values[pr->n++] = shlo_value_ref(v);
  st = SHLO_OK;
out:
  pthread_mutex_unlock(&ex->lock);
  return st;
}

shlo_value *shlo__exec_probe_get(shlo_exec *ex, const char *id, int64_t iter) {
  shlo_value *v = NULL;
  pthread_mutex_lock(&ex->lock);
  for (int i = 0; i < ex->n_probes; i++)
    if (!strcmp(ex->probes[i].id, id) && iter >= 0 && iter < ex->probes[i].n)
      v = ex->probes[i].values[iter];
  pthread_mutex_unlock(&ex->lock);
  return v;
}

/* ---- the public entry ---- */

shlo_status shlo__budget_refusal(const shlo_mem_budget *b, shlo_diag *d) {
  char msg[SHLO_DIAG_MAX];
  snprintf(msg, sizeof msg,
           "the execution needs more than its memory limit of %lld bytes "
           "(at %.900s)",
           (long long)shlo__budget_limit(b), d ? d->message : "?");
  if (d) {
    d->code = SHLO_ELIMIT;
    snprintf(d->message, sizeof d->message, "%s", msg);
  }
  return SHLO_ELIMIT;
}

void shlo__exec_init(shlo_exec *ex, const shlo_exec_opts *opts,
                     const char *filename, shlo_diag *diag) {
  memset(ex, 0, sizeof *ex);
  pthread_mutex_init(&ex->lock, NULL);
  ex->diag = diag;
  ex->filename = filename;
  ex->print = opts && opts->print_stream ? opts->print_stream : stdout;
  ex->cancel = opts ? opts->cancel : NULL;
  ex->profile = opts ? opts->profile : NULL;
  if (opts && opts->timeout_s > 0) ex->deadline = now_s() + opts->timeout_s;
}

void shlo__exec_destroy(shlo_exec *ex) {
  for (int i = 0; i < ex->n_probes; i++) {
    for (int k = 0; k < ex->probes[i].n; k++)
      shlo_value_unref(ex->probes[i].values[k]);
    shlo__free(ex->probes[i].values);
    shlo__free(ex->probes[i].id);
  }
  shlo__free(ex->probes);
  pthread_mutex_destroy(&ex->lock);
}

static shlo_status execute_in_scope(const shlo_executable *e,
                                    const shlo_exec_opts *opts,
                                    shlo_value *const *args, int n_args,
                                    shlo_value ***results, int *n_results,
                                    shlo_diag *diag);

/* An execution runs with its executable's context as the thread's scope:
 * its tensors come from that context's allocator and its parallel steps
 * run on that context's pool. */
shlo_status shlo_execute(const shlo_executable *e, const shlo_exec_opts *opts,
                         shlo_value *const *args, int n_args,
                         shlo_value ***results, int *n_results,
                         shlo_diag *diag) {
  shlo_context *ctx = shlo_executable_context(e);
  if (!ctx) ctx = shlo_default_context();
  if (!ctx) {
    *results = NULL;
    *n_results = 0;
    return shlo_diag_set(diag, SHLO_ENOMEM, NULL, 0, 0, "out of memory");
  }
  shlo_context *prev = shlo__ctx_swap(ctx);
  shlo_status st =
      execute_in_scope(e, opts, args, n_args, results, n_results, diag);
  shlo__ctx_swap(prev);
  return st;
}

/* The plan run on the pool or on this thread alone, as the executable's
 * choice says (core/timed_choice.h), and a trial's or a sample's time
 * given back to it.  A profiled execution runs the way last chosen and
 * is neither: a profile shows what the executions run, and its timers
 * stay out of the choice.  A run that fails gives no time: a trial's
 * epoch then keeps the last choice. */
static shlo_status run_chosen(const shlo_executable *e,
                              const shlo_exec_opts *opts, const shlo_plan *p,
                              shlo_exec *ex, shlo_value *const *args,
                              shlo_value **res) {
  shlo__choice *c = shlo__executable_alone(e);
  if (!c || shlo__ctx_options(shlo__ctx_current())->fixed_threads ||
      shlo__pool_threads() < 2)
    return shlo__plan_run(p, ex, args, res);
  shlo__choice_turn turn = {shlo__choice_current(c), false, false};
  if (!(opts && opts->profile)) turn = shlo__choice_begin(c);
  bool was = shlo__pool_alone(turn.way == 1);
  bool timed = turn.trial || turn.sample;
  uint64_t t0 = timed ? shlo_trace_now_ns() : 0;
  shlo_status st = shlo__plan_run(p, ex, args, res);
  if (timed && st == SHLO_OK)
    shlo__choice_end(c, turn, shlo_trace_now_ns() - t0);
  shlo__pool_alone(was);
  return st;
}

static shlo_status execute_in_scope(const shlo_executable *e,
                                    const shlo_exec_opts *opts,
                                    shlo_value *const *args, int n_args,
                                    shlo_value ***results, int *n_results,
                                    shlo_diag *diag) {
  if (shlo__executable_refine(e)) /* dynamic shapes: plan per signature */
    return shlo__refine_cache_execute(shlo__executable_refine(e), opts, args,
                                      n_args, results, n_results, diag);
  *results = NULL;
  *n_results = 0;
  const shlo_module *m = shlo__executable_module(e);
  const shlo_func *f = shlo_executable_entry(e);
  if (n_args != f->n_args)
    return shlo_diag_set(diag, SHLO_EINPUT, m->filename, f->loc.line,
                         f->loc.col, "@%s takes %d arguments but %d were given",
                         f->name, f->n_args, n_args);
  for (int i = 0; i < n_args; i++)
    if (!shlo_value_has_type(args[i], f->arg_types[i])) {
      char want[256];
      shlo_type_format(f->arg_types[i], want, sizeof want);
      return shlo_diag_set(diag, SHLO_EINPUT, m->filename, f->loc.line,
                           f->loc.col, "argument %d of @%s must be %s", i,
                           f->name, want);
    }
  const shlo_plan *p = shlo__executable_plan(e);
  shlo_value **res = calloc((size_t)p->n_results + 1, sizeof *res);
  if (!res)
    return shlo_diag_set(diag, SHLO_ENOMEM, m->filename, 0, 0, "out of memory");
  shlo_exec ex;
  shlo_diag local;
  shlo_diag_clear(&local);
  shlo__exec_init(&ex, opts, m->filename, diag ? diag : &local);
  shlo_mem_budget *budget = NULL, *prev = NULL;
  int64_t limit = opts && opts->max_bytes > 0
                      ? opts->max_bytes
                      : shlo__ctx_options(shlo__ctx_current())->exec_max_bytes;
  if (limit > 0) {
    budget = shlo__budget_new(limit);
    if (!budget) {
      free(res);
      shlo__exec_destroy(&ex);
      return shlo_diag_set(diag, SHLO_ENOMEM, m->filename, 0, 0,
                           "out of memory");
    }
    prev = shlo__budget_swap(budget);
  }
  shlo_status st = run_chosen(e, opts, p, &ex, args, res);
  /* the caller may write its results: none is a view of another value */
  bool ran = st == SHLO_OK;
  for (int i = 0; !st && i < p->n_results; i++)
    st = shlo__value_settle(&res[i]);
  if (ran && st) {
    shlo__exec_fail(&ex, NULL, st, "out of memory for a result");
    for (int i = 0; i < p->n_results; i++) shlo_value_unref(res[i]);
  }
  if (budget) {
    shlo__budget_swap(prev);
    if (st && shlo__budget_exceeded(budget))
      st = shlo__budget_refusal(budget, ex.diag);
    shlo__budget_release(budget);
  }
  shlo__exec_destroy(&ex);
  if (st) {
    free(res);
    return st;
  }
  *results = res;
  *n_results = p->n_results;
  return SHLO_OK;
}
