/* SPDX-License-Identifier: Apache-2.0 */
/* The ops of process grids that are not collectives:
 * interpreter.run_parallel, replica_id, partition_id, after_all, infeed,
 * outfeed, send and recv (their compile functions and kernels).  The grid
 * they run in, its feed queues and channels are the runtime's
 * (runtime/grid.c). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/value.h"
#include "kernels/kernel.h"
#include "runtime/grid.h"
#include "runtime/grid_net.h"

/* ---- interpreter.run_parallel ---- */

/* programs = [[@f, ...], ...] is programs[replica][partition]; process k
 * takes the next plans[k]->n_args operands and gives the next n_results
 * results.  infeed = [@q0, ...]: each function's results go, in order,
 * into every process's infeed queue before the processes start. */
typedef struct rp_params {
  int R, P;
  shlo_plan **plans; /* per process; owned by the executable */
  int *arg_off, *res_off;
  int n_infeed;
  shlo_plan **infeed;
} rp_params;

static void rp_free(void *p) {
  rp_params *rp = p;
  if (!rp) return;
  free(rp->plans);
  free(rp->arg_off);
  free(rp->res_off);
  free(rp->infeed);
  free(rp);
}

static shlo_status k_run_parallel(const shlo_step *s, shlo_value *const *in,
                                  shlo_value **out, shlo_exec *ex) {
  const rp_params *rp = s->params;
  size_t n = (size_t)rp->R * (size_t)rp->P;
  shlo_status st = SHLO_OK;
  shlo_grid *g = shlo__grid_new(rp->R, rp->P, ex->filename, ex->deadline);
  grid_job *jobs = calloc(n, sizeof *jobs);
  if (!g || !jobs) {
    st = shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory");
    goto done;
  }
  for (size_t k = 0; k < n; k++) {
    g->infeed[k] = shlo_feed_new();
    if (!g->infeed[k]) {
      st = shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory");
      goto done;
    }
  }
  for (int i = 0; i < rp->n_infeed; i++) {
    const shlo_plan *q = rp->infeed[i];
    shlo_value **vals = calloc((size_t)q->n_results + 1, sizeof *vals);
    if (!vals) {
      st = shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory");
      goto done;
    }
    st = shlo__plan_run(q, ex, NULL, vals);
    for (int v = 0; v < q->n_results; v++) {
      for (size_t k = 0; k < n && !st; k++)
        if (shlo_feed_push(g->infeed[k], vals[v]))
          st = shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory");
      shlo_value_unref(vals[v]);
    }
    free(vals);
    if (st) goto done;
  }
  for (size_t k = 0; k < n; k++) {
    shlo_feed_close(g->infeed[k]);
    jobs[k].plan = rp->plans[k];
    jobs[k].filename = ex->filename;
    jobs[k].args = in + rp->arg_off[k];
    jobs[k].results = out + rp->res_off[k];
    jobs[k].print = ex->print;
  }
  st = shlo__grid_run(g, jobs, ex->cancel);
  if (st) {
    const shlo_diag *d = &g->fail;
    if (d->line)
      shlo__exec_fail(ex, s, st, "at %d:%d: %s", d->line, d->col, d->message);
    else
      shlo__exec_fail(ex, s, st, "%s", d->message);
  }
done:
  if (g)
    for (size_t k = 0; k < n; k++) shlo_feed_free(g->infeed[k]);
  shlo__grid_free(g);
  free(jobs);
  return st;
}

static const shlo_attr *symbol_list(const shlo_attr *a) {
  return a && a->kind == SHLO_ATTR_ARRAY ? a : NULL;
}

shlo_status shlo__compile_run_parallel(shlo_compiler *cc, const shlo_op *op,
                                      shlo_step *step) {
  const shlo_attr *progs = symbol_list(shlo_op_attr(op, "programs"));
  if (!progs || progs->n < 1 || !symbol_list(progs->items[0]) ||
      progs->items[0]->n < 1)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "needs programs = [[@f, ...], ...] with at least one "
                        "process");
  int R = progs->n, P = progs->items[0]->n;
  if ((int64_t)R * P > SHLO_GRID_MAX_PROCS)
    return shlo__cc_fail(cc, op, SHLO_ELIMIT,
                        "a grid of %d x %d processes is over the limit", R, P);
  rp_params *rp = calloc(1, sizeof *rp);
  if (!rp) return SHLO_ENOMEM;
  step->params = rp;
  step->free_params = rp_free;
  rp->R = R;
  rp->P = P;
  int n = R * P;
  rp->plans = calloc((size_t)n, sizeof *rp->plans);
  rp->arg_off = calloc((size_t)n, sizeof *rp->arg_off);
  rp->res_off = calloc((size_t)n, sizeof *rp->res_off);
  if (!rp->plans || !rp->arg_off || !rp->res_off) return SHLO_ENOMEM;
  int n_args = 0, n_res = 0;
  for (int r = 0; r < R; r++) {
    const shlo_attr *row = symbol_list(progs->items[r]);
    if (!row || row->n != P)
      return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                          "programs row %d must list %d functions like row 0",
                          r, P);
    for (int p = 0; p < P; p++) {
      const char *name = shlo_attr_get_str(row->items[p]);
      if (!name || row->items[p]->kind != SHLO_ATTR_SYMBOL)
        return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                            "programs[%d][%d] must be a function symbol", r, p);
      shlo_plan *plan;
      shlo_status st = shlo__cc_func_plan(cc, op, name, &plan);
      if (st) return st;
      int k = r * P + p;
      rp->plans[k] = plan;
      rp->arg_off[k] = n_args;
      rp->res_off[k] = n_res;
      n_args += plan->n_args;
      n_res += plan->n_results;
    }
  }
  if (n_args != op->n_operands || n_res != op->n_results)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "the programs take %d inputs and give %d results in "
                        "all, but the op has %d operands and %d results",
                        n_args, n_res, op->n_operands, op->n_results);
  const shlo_attr *inf = shlo_op_attr(op, "infeed");
  if (inf) {
    if (!symbol_list(inf))
      return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                          "infeed must be a list of function symbols");
    rp->infeed = calloc((size_t)inf->n + 1, sizeof *rp->infeed);
    if (!rp->infeed) return SHLO_ENOMEM;
    for (int i = 0; i < inf->n; i++) {
      const char *name = shlo_attr_get_str(inf->items[i]);
      if (!name)
        return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                            "infeed[%d] must be a function symbol", i);
      shlo_status st = shlo__cc_func_plan(cc, op, name, &rp->infeed[i]);
      if (st) return st;
      if (rp->infeed[i]->n_args)
        return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                            "infeed function '@%s' must take no arguments",
                            name);
      rp->n_infeed++;
    }
  }
  step->fn = k_run_parallel;
  return SHLO_OK;
}

/* ---- replica_id, partition_id ---- */

/* stablehlo.replica_id / partition_id: the process's position in the
 * grid as tensor<ui32>; 0 outside a grid. */
static shlo_status k_process_id(const shlo_step *s, shlo_value *const *in,
                                shlo_value **out, shlo_exec *ex) {
  (void)in;
  int64_t id = 0;
  if (ex->grid) {
    int P = ex->grid->n_partitions;
    id = s->op->code == SHLO_OP_REPLICA_ID ? ex->proc / P : ex->proc % P;
  }
  out[0] = shlo_tensor_new(SHLO_UI32, 0, NULL);
  if (!out[0]) return shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory");
  *(uint32_t *)out[0]->data = (uint32_t)id;
  return SHLO_OK;
}

shlo_status shlo__compile_process_id(shlo_compiler *cc, const shlo_op *op,
                                    shlo_step *step) {
  const shlo_type *t = op->n_results == 1 ? shlo__cc_result_type(cc, op, 0)
                                          : NULL;
  if (op->n_operands || !t || t->kind != SHLO_TYPE_TENSOR || t->rank != 0 ||
      t->elem != SHLO_UI32)
    return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                        "takes no operands and returns tensor<ui32>");
  step->fn = k_process_id;
  return SHLO_OK;
}

/* ---- after_all ---- */

/* stablehlo.after_all: a token that follows all its operand tokens. */
static shlo_status k_token(const shlo_step *s, shlo_value *const *in,
                           shlo_value **out, shlo_exec *ex) {
  (void)in;
  out[s->n_out - 1] = shlo_token_new();
  return out[s->n_out - 1] ? SHLO_OK
                           : shlo__exec_fail(ex, s, SHLO_ENOMEM,
                                            "out of memory");
}

static bool is_token(const shlo_type *t) {
  return t && t->kind == SHLO_TYPE_TOKEN;
}

shlo_status shlo__compile_after_all(shlo_compiler *cc, const shlo_op *op,
                                   shlo_step *step) {
  for (int i = 0; i < op->n_operands; i++)
    if (!is_token(shlo__cc_operand_type(cc, op, i)))
      return shlo__cc_fail(cc, op, SHLO_EVERIFY, "operand %d is not a token",
                          i);
  if (op->n_results != 1 || !is_token(shlo__cc_result_type(cc, op, 0)))
    return shlo__cc_fail(cc, op, SHLO_EVERIFY, "returns one token");
  step->fn = k_token;
  return SHLO_OK;
}

/* ---- helpers for feeds and channels ---- */

static void value_type_str(const shlo_value *v, char *buf, size_t cap) {
  if (!v) {
    snprintf(buf, cap, "nothing");
    return;
  }
  if (v->kind != SHLO_TYPE_TENSOR) {
    snprintf(buf, cap, v->kind == SHLO_TYPE_TOKEN ? "!stablehlo.token"
                                                  : "a tuple");
    return;
  }
  shlo_type t;
  memset(&t, 0, sizeof t);
  t.kind = SHLO_TYPE_TENSOR;
  t.elem = v->elem;
  t.rank = v->rank;
  memcpy(t.dims, v->dims, sizeof t.dims);
  shlo_type_format(&t, buf, cap);
}

/* Types of the value results (all but the trailing token) of an op. */
typedef struct io_params {
  int64_t channel;
  bool host;  /* is_host_transfer: the caller's host channel feeds */
  int n;
  const shlo_type **types; /* borrowed from the module */
} io_params;

static void io_free(void *p) {
  io_params *io = p;
  if (io) free(io->types);
  free(io);
}

static shlo_status compile_io(shlo_compiler *cc, const shlo_op *op,
                              shlo_step *step, bool reads) {
  io_params *io = calloc(1, sizeof *io);
  if (!io) return SHLO_ENOMEM;
  step->params = io;
  step->free_params = io_free;
  if (reads) {
    if (op->n_operands != 1 || !is_token(shlo__cc_operand_type(cc, op, 0)) ||
        op->n_results < 1 ||
        !is_token(shlo__cc_result_type(cc, op, op->n_results - 1)))
      return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                          "takes a token and returns values and a token");
    io->n = op->n_results - 1;
    io->types = calloc((size_t)io->n + 1, sizeof *io->types);
    if (!io->types) return SHLO_ENOMEM;
    for (int i = 0; i < io->n; i++) {
      io->types[i] = shlo__cc_result_type(cc, op, i);
      if (io->types[i]->kind != SHLO_TYPE_TENSOR)
        return shlo__cc_fail(cc, op, SHLO_EUNSUPPORTED,
                            "result %d: only tensors can be received", i);
    }
  } else {
    if (op->n_operands < 1 ||
        !is_token(shlo__cc_operand_type(cc, op, op->n_operands - 1)) ||
        op->n_results != 1 || !is_token(shlo__cc_result_type(cc, op, 0)))
      return shlo__cc_fail(cc, op, SHLO_EVERIFY,
                          "takes values and a token and returns a token");
    io->n = op->n_operands - 1;
  }
  const shlo_attr *ch = shlo_op_attr(op, "channel_handle");
  if (ch && ch->kind == SHLO_ATTR_STRUCT)
    shlo_attr_get_i64(shlo_attr_field(ch, "handle"), &io->channel);
  else
    shlo_attr_get_i64(shlo_op_attr(op, "channel_id"), &io->channel);
  const shlo_attr *h = shlo_op_attr(op, "is_host_transfer");
  io->host = h && (h->kind == SHLO_ATTR_UNIT || h->b);
  return SHLO_OK;
}

static shlo_status check_received(const shlo_step *s, shlo_value **vals,
                                  const io_params *io, shlo_exec *ex,
                                  const char *what) {
  for (int i = 0; i < io->n; i++)
    if (!shlo_value_has_type(vals[i], io->types[i])) {
      char want[256], got[256];
      shlo_type_format(io->types[i], want, sizeof want);
      value_type_str(vals[i], got, sizeof got);
      return shlo__exec_fail(ex, s, SHLO_ERUNTIME,
                            "result %d must be %s but %s gave %s", i, want,
                            what, got);
    }
  return SHLO_OK;
}

/* ---- infeed, outfeed ---- */

/* stablehlo.infeed: takes the next values of this process's infeed queue,
 * one per tensor result; waits for them until the deadline or a cancel;
 * fails at once on a closed queue that cannot supply them. */
static shlo_status k_infeed(const shlo_step *s, shlo_value *const *in,
                            shlo_value **out, shlo_exec *ex) {
  (void)in;
  const io_params *io = s->params;
  shlo_grid *g = ex->grid;
  shlo_feed *q = g ? g->infeed[ex->proc] : NULL;
  char who[64] = "(0, 0)";
  if (g) shlo__proc_name(g, ex->proc, who, sizeof who);
  if (!q)
    return shlo__exec_fail(ex, s, SHLO_ERUNTIME,
                          "process %s has no infeed queue", who);
  if (g) {
    pthread_mutex_lock(&g->lock);
    g->procs[ex->proc].feed_at = s;
    pthread_mutex_unlock(&g->lock);
  }
  shlo_status st = shlo__feed_take(q, io->n, out, ex->deadline, ex->cancel);
  if (g) {
    pthread_mutex_lock(&g->lock);
    g->procs[ex->proc].feed_at = NULL;
    pthread_mutex_unlock(&g->lock);
  }
  switch (st) {
  case SHLO_OK:
    break;
  case SHLO_ECANCELED:
    return g ? shlo__grid_aborted(ex, s)
             : shlo__exec_fail(ex, s, st, "execution canceled");
  case SHLO_EINPUT:
    return shlo__exec_fail(ex, s, SHLO_ERUNTIME,
                          "the infeed queue of process %s is closed and "
                          "holds fewer than the %d values this infeed reads",
                          who, io->n);
  default:
    return shlo__exec_fail(ex, s, SHLO_ETIMEOUT,
                          "process %s waited for infeed until the deadline",
                          who);
  }
  st = check_received(s, out, io, ex, "the infeed queue");
  if (!st) {
    out[io->n] = shlo_token_new();
    if (!out[io->n]) st = shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory");
  }
  return st; /* on error the executor drops the values already in out */
}

shlo_status shlo__compile_infeed(shlo_compiler *cc, const shlo_op *op,
                                shlo_step *step) {
  shlo_status st = compile_io(cc, op, step, true);
  if (st) return st;
  step->fn = k_infeed;
  return SHLO_OK;
}

/* A failed wait of a feed_put_wait or feed_take by process ex->proc at s,
 * as the step's failure; what names the queue for the message. */
static shlo_status feed_wait_failed(shlo_exec *ex, const shlo_step *s,
                                    shlo_status st, const char *what) {
  char who[64] = "(0, 0)";
  if (ex->grid) shlo__proc_name(ex->grid, ex->proc, who, sizeof who);
  switch (st) {
  case SHLO_ECANCELED:
    return ex->grid ? shlo__grid_aborted(ex, s)
                    : shlo__exec_fail(ex, s, st, "execution canceled");
  case SHLO_ENOMEM:
    return shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory");
  case SHLO_EINPUT:
    return shlo__exec_fail(ex, s, SHLO_ERUNTIME, "%s of process %s is closed",
                          what, who);
  default:
    return shlo__exec_fail(ex, s, SHLO_ETIMEOUT,
                          "process %s waited on %s until the deadline", who,
                          what);
  }
}

/* stablehlo.outfeed: appends each operand to this process's outfeed queue
 * (dropped when the execution has none), waiting while a bounded queue is
 * full. */
static shlo_status k_outfeed(const shlo_step *s, shlo_value *const *in,
                             shlo_value **out, shlo_exec *ex) {
  const io_params *io = s->params;
  shlo_feed *q = ex->grid ? ex->grid->outfeed[ex->proc] : NULL;
  for (int i = 0; q && i < io->n; i++) {
    shlo_status st = shlo__feed_put_wait(q, in[i], ex->deadline, ex->cancel);
    if (st) return feed_wait_failed(ex, s, st, "the outfeed queue");
  }
  out[0] = shlo_token_new();
  return out[0] ? SHLO_OK
                : shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory");
}

shlo_status shlo__compile_outfeed(shlo_compiler *cc, const shlo_op *op,
                                 shlo_step *step) {
  shlo_status st = compile_io(cc, op, step, false);
  if (st) return st;
  step->fn = k_outfeed;
  return SHLO_OK;
}

/* ---- send, recv ---- */

/* send / recv with is_host_transfer = true on a grid whose caller serves
 * host channels: the values go to (come from) the caller's feed for the
 * channel, one value per operand (result).  Without such a caller they
 * travel between the processes like any send / recv (the reference
 * interpreter's run_parallel plays the host that way). */
static shlo_status host_transfer(const shlo_step *s, shlo_value *const *in,
                                 shlo_value **out, shlo_exec *ex, bool send) {
  const io_params *io = s->params;
  shlo_feed *q = ex->grid ? shlo__host_feed(ex->grid, io->channel, send) : NULL;
  if (!q)
    return shlo__exec_fail(ex, s, SHLO_ERUNTIME,
                          "no host serves channel %lld of this %s",
                          (long long)io->channel, send ? "send" : "recv");
  shlo_status st = SHLO_OK;
  if (send)
    for (int i = 0; i < io->n && !st; i++)
      st = shlo__feed_put_wait(q, in[i], ex->deadline, ex->cancel);
  else
    st = shlo__feed_take(q, io->n, out, ex->deadline, ex->cancel);
  if (st) return feed_wait_failed(ex, s, st, "the host channel");
  if (!send && (st = check_received(s, out, io, ex, "the host"))) return st;
  shlo_value **tok = send ? &out[0] : &out[io->n];
  *tok = shlo_token_new();
  return *tok ? SHLO_OK : shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory");
}

/* stablehlo.send: queues its values on the channel named by
 * channel_handle.handle for the process that receives on it; does not
 * wait for the receiver. */
static shlo_status k_send(const shlo_step *s, shlo_value *const *in,
                          shlo_value **out, shlo_exec *ex) {
  const io_params *io = s->params;
  shlo_grid *g = ex->grid;
  if (io->host && g && g->host_channel)
    return host_transfer(s, in, out, ex, true);
  if (!g)
    return shlo__exec_fail(ex, s, SHLO_ERUNTIME,
                          "send needs a process grid to receive it");
  grid_msg *m = calloc(1, sizeof *m);
  shlo_value **vals = calloc((size_t)io->n + 1, sizeof *vals);
  if (!m || !vals) {
    free(m);
    free(vals);
    return shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory");
  }
  for (int i = 0; i < io->n; i++) vals[i] = shlo_value_ref(in[i]);
  m->values = vals;
  m->n = io->n;
  m->from = ex->proc;
  if (!shlo__chan_put(g, io->channel, m)) {
    for (int i = 0; i < io->n; i++) shlo_value_unref(vals[i]);
    free(vals);
    free(m);
    return shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory");
  }
  if (g->home && shlo__net_send(g, io->channel, ex->proc, in, io->n))
    return shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory");
  out[0] = shlo_token_new();
  return out[0] ? SHLO_OK
                : shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory");
}

shlo_status shlo__compile_send(shlo_compiler *cc, const shlo_op *op,
                              shlo_step *step) {
  shlo_status st = compile_io(cc, op, step, false);
  if (st) return st;
  step->fn = k_send;
  return SHLO_OK;
}

/* stablehlo.recv: takes the oldest message on its channel, waiting for
 * one until the deadline, a failure elsewhere, or a deadlock. */
static shlo_status k_recv(const shlo_step *s, shlo_value *const *in,
                          shlo_value **out, shlo_exec *ex) {
  const io_params *io = s->params;
  shlo_grid *g = ex->grid;
  if (io->host && g && g->host_channel)
    return host_transfer(s, in, out, ex, false);
  if (!g)
    return shlo__exec_fail(ex, s, SHLO_ERUNTIME,
                          "recv needs a process grid to send to it");
  grid_proc *me = &g->procs[ex->proc];
  grid_msg *m = NULL;
  bool timed_out = false, aborted = false, nomem = false;
  pthread_mutex_lock(&g->lock);
  grid_chan *c = shlo__chan_get(g, io->channel);
  nomem = !c;
  while (c) {
    if (g->failed) {
      aborted = true;
      break;
    }
    if (c->head) {
      m = c->head;
      c->head = m->next;
      if (!c->head) c->tail = NULL;
      break;
    }
    if (g->deadline > 0 && shlo__now() >= g->deadline) {
      timed_out = true;
      break;
    }
    me->phase = PROC_BLOCKED;
    me->at = s;
    me->chan = c;
    shlo__grid_check_deadlock(g);
    if (!g->failed) shlo__wait_until(&g->cond, &g->lock, g->deadline);
    me->phase = PROC_RUNNING;
    me->chan = NULL;
  }
  pthread_mutex_unlock(&g->lock);
  char who[64];
  shlo__proc_name(g, ex->proc, who, sizeof who);
  if (nomem) return shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory");
  if (aborted) return shlo__grid_aborted(ex, s);
  if (timed_out)
    return shlo__exec_fail(ex, s, SHLO_ETIMEOUT,
                          "process %s waited for a message on channel %lld "
                          "until the deadline",
                          who, (long long)io->channel);
  shlo_status st = SHLO_OK;
  if (m->n != io->n) {
    char from[64];
    shlo__proc_name(g, m->from, from, sizeof from);
    st = shlo__exec_fail(ex, s, SHLO_ERUNTIME,
                        "receives %d values on channel %lld but process %s "
                        "sent %d",
                        io->n, (long long)io->channel, from, m->n);
  } else {
    for (int i = 0; i < io->n; i++) {
      out[i] = m->values[i];
      m->values[i] = NULL;
    }
    char from[80];
    snprintf(from, sizeof from, "process ");
    shlo__proc_name(g, m->from, from + 8, sizeof from - 8);
    st = check_received(s, out, io, ex, from);
    if (!st) {
      out[io->n] = shlo_token_new();
      if (!out[io->n]) st = shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory");
    }
  }
  for (int i = 0; i < m->n; i++) shlo_value_unref(m->values[i]);
  free(m->values);
  free(m);
  return st;
}

shlo_status shlo__compile_recv(shlo_compiler *cc, const shlo_op *op,
                              shlo_step *step) {
  shlo_status st = compile_io(cc, op, step, true);
  if (st) return st;
  step->fn = k_recv;
  return SHLO_OK;
}
