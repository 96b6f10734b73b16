/* SPDX-License-Identifier: Apache-2.0 */
/* The rendezvous of collectives: where the members of a process group
 * meet (grid.h).
 *
 * Each member meets the others at a rendezvous record keyed by the sorted
 * member set and the number of earlier rendezvous over that set.  Each
 * member leaves its operands there; the last to arrive computes every
 * member's results (outside the lock) with the op's functions, marks the
 * record ready and wakes the others.  What the op computes, and how its
 * members must agree, is the kernel's (kernels/collective.c); the
 * rendezvous knows only operands and results. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/value.h"
#include "runtime/exec.h"
#include "runtime/grid.h"
#include "runtime/grid_net.h"

static shlo_status oom(shlo_exec *ex, const shlo_step *s) {
  return shlo__exec_fail(ex, s, SHLO_ENOMEM, "out of memory");
}
static int cmp_int(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

/* Under g->lock: the next sequence number of process k over `set`. */
static bool next_seq(grid_proc *p, const int *set, int n, uint64_t *seq) {
  for (int i = 0; i < p->n_seqs; i++)
    if (p->seqs[i].n == n && !memcmp(p->seqs[i].set, set, (size_t)n * sizeof *set)) {
      *seq = p->seqs[i].count++;
      return true;
    }
  grid_seq *ns = realloc(p->seqs, (size_t)(p->n_seqs + 1) * sizeof *ns);
  if (!ns) return false;
  p->seqs = ns;
  int *copy = malloc((size_t)n * sizeof *copy);
  if (!copy) return false;
  memcpy(copy, set, (size_t)n * sizeof *copy);
  p->seqs[p->n_seqs++] = (grid_seq){n, copy, 1};
  *seq = 0;
  return true;
}

grid_rdv *shlo__rdv_get(shlo_grid *g, const int *set, const int *members,
                        int n, uint64_t seq) {
  for (grid_rdv *r = g->rdvs; r; r = r->next)
    if (r->seq == seq && r->n == n &&
        !memcmp(r->set, set, (size_t)n * sizeof *set))
      return r;
  grid_rdv *r = calloc(1, sizeof *r);
  if (!r) return NULL;
  r->n = n;
  r->seq = seq;
  r->set = malloc((size_t)n * sizeof *r->set);
  r->members = malloc((size_t)n * sizeof *r->members);
  r->steps = calloc((size_t)n, sizeof *r->steps);
  r->contrib = calloc((size_t)n, sizeof *r->contrib);
  r->n_contrib = calloc((size_t)n, sizeof *r->n_contrib);
  r->results = calloc((size_t)n, sizeof *r->results);
  if (!r->set || !r->members || !r->steps || !r->contrib || !r->n_contrib ||
      !r->results) {
    shlo__rdv_free(r);
    return NULL;
  }
  memcpy(r->set, set, (size_t)n * sizeof *set);
  memcpy(r->members, members, (size_t)n * sizeof *members);
  for (int i = 0; i < n; i++) r->n_local += shlo__grid_local(g, members[i]);
  r->next = g->rdvs;
  g->rdvs = r;
  return r;
}

static void rdv_unlink(shlo_grid *g, grid_rdv *r) {
  for (grid_rdv **p = &g->rdvs; *p; p = &(*p)->next)
    if (*p == r) {
      *p = r->next;
      return;
    }
}

/* Why a rendezvous gave this process no results. */
typedef enum {
  RDV_OK,
  RDV_ABORTED, /* the grid failed, or computing the results did */
  RDV_NOMEM,
  RDV_TIMEOUT, /* the grid's deadline passed first */
  RDV_ORDER,   /* another member listed the group in another order */
  RDV_COMPUTE, /* the last members came from other ranks: compute here */
} rdv_why;

/* Under g->lock: the rendezvous (*rp) for this process's next call with
 * the group set (sorted; members in group order), and *pos, the process's
 * place in it.  Anything but RDV_OK means it did not join. */
static rdv_why rdv_join(shlo_grid *g, int proc, const int *set,
                        const int *members, int G, grid_rdv **rp, int *pos) {
  grid_proc *me = &g->procs[proc];
  grid_rdv *r;
  uint64_t seq;
  if (g->failed) return RDV_ABORTED;
  if (!next_seq(me, set, G, &seq) ||
      !(r = shlo__rdv_get(g, set, members, G, seq)))
    return RDV_NOMEM;
  if (memcmp(r->members, members, (size_t)G * sizeof *members))
    return RDV_ORDER;
  for (*pos = 0; r->members[*pos] != proc; (*pos)++) {}
  *rp = r;
  return RDV_OK;
}

/* Under g->lock, as the last member to arrive: compute every member's
 * results with the lock released, then wake the others. */
static shlo_status rdv_compute(shlo_grid *g, grid_rdv *r, const shlo_step *s,
                               shlo_value *const *in, int G,
                               const shlo_rdv_ops *ops, shlo_exec *ex) {
  r->complete = true;
  pthread_mutex_unlock(&g->lock);
  shlo_status st = ops->check(r, s, ex);
  /* Members on other ranks: their rank computes the same results for
   * them; here they get slots that the rendezvous frees. */
  for (int i = 0; i < G && !st; i++)
    if (!r->steps[i]) {
      r->steps[i] = s;
      if (!(r->results[i] = calloc((size_t)s->n_out + 1,
                                   sizeof *r->results[i])))
        st = oom(ex, s);
    }
  if (!st)
    st = ops->compute(s, in, G, (shlo_value **const *)r->contrib, r->results,
                      ex);
  pthread_mutex_lock(&g->lock);
  r->ready = true;
  pthread_cond_broadcast(&g->cond);
  return st;
}

/* The names of the members of r that have not arrived, comma separated,
 * into missing[0..size). */
static void rdv_missing(shlo_grid *g, const grid_rdv *r, int G,
                        char *missing, size_t size) {
  size_t len = 0;
  for (int i = 0; i < G && len < size - 64; i++)
    if (!r->contrib[i]) {
      if (len) len += (size_t)snprintf(missing + len, size - len, ", ");
      len += (size_t)shlo__proc_name(g, r->members[i], missing + len,
                                     size - len);
    }
}

/* Under g->lock: wait until the results of r are ready, the grid fails or
 * its deadline passes (missing then names who did not come).  Meanwhile
 * this process shows as blocked at s, for the deadlock check. */
static rdv_why rdv_wait(shlo_grid *g, grid_proc *me, grid_rdv *r,
                        const shlo_step *s, int G, char *missing,
                        size_t size) {
  rdv_why why = RDV_OK;
  me->phase = PROC_BLOCKED;
  me->at = s;
  me->rdv = r;
  shlo__grid_check_deadlock(g);
  while (!r->ready && !g->failed) {
    if (r->n_arrived == G && !r->complete) {
      why = RDV_COMPUTE;
      break;
    }
    if (g->deadline > 0 && shlo__now() >= g->deadline) {
      why = RDV_TIMEOUT;
      rdv_missing(g, r, G, missing, size);
      break;
    }
    struct timespec ts = shlo__abstime(g->deadline);
    if (g->deadline > 0) pthread_cond_timedwait(&g->cond, &g->lock, &ts);
    else pthread_cond_wait(&g->cond, &g->lock);
  }
  me->phase = PROC_RUNNING;
  me->rdv = NULL;
  if (why == RDV_OK && (!r->ready || g->failed)) why = RDV_ABORTED;
  return why;
}

/* Under g->lock: take references to this process's results (place pos);
 * a missing one means computing them failed. */
static rdv_why rdv_take(const grid_rdv *r, int pos, int n_out,
                        shlo_value **out) {
  rdv_why why = RDV_OK;
  for (int k = 0; k < n_out; k++) {
    out[k] = shlo_value_ref(r->results[pos][k]);
    if (!out[k]) why = RDV_ABORTED; /* computing failed */
  }
  return why;
}

/* The status a rendezvous that ended with why returns. */
static shlo_status rdv_status(shlo_exec *ex, const shlo_step *s, rdv_why why,
                              const char *missing) {
  char who[64];
  shlo__proc_name(ex->grid, ex->proc, who, sizeof who);
  switch (why) {
  case RDV_OK:
    return SHLO_OK;
  case RDV_NOMEM:
    return oom(ex, s);
  case RDV_ORDER:
    return shlo__exec_fail(ex, s, SHLO_ERUNTIME,
                          "process %s orders its group differently from "
                          "another member",
                          who);
  case RDV_TIMEOUT:
    return shlo__exec_fail(ex, s, SHLO_ETIMEOUT,
                          "process %s timed out waiting for process%s %s to "
                          "reach this collective",
                          who, strchr(missing, ',') ? "es" : "", missing);
  default:
    return shlo__grid_aborted(ex, s);
  }
}

/* Run one group: members[0..G) in group order, this process among them.
 * out gets this process's results.  Every member leaves its operands in
 * the group's rendezvous; the last to arrive computes all results. */
shlo_status shlo__rendezvous(const shlo_step *s, shlo_value *const *in,
                             const int *members, int G, shlo_exec *ex,
                             const shlo_rdv_ops *ops, shlo_value **out) {
  int n_ops = s->op->n_operands;
  if (G == 1) {
    shlo_value *const *contrib[1] = {in};
    shlo_value **res[1] = {out};
    return ops->compute(s, in, 1, (shlo_value **const *)contrib, res, ex);
  }
  shlo_grid *g = ex->grid;
  if (!g)
    return shlo__exec_fail(ex, s, SHLO_ERUNTIME,
                          "a group of %d processes needs a process grid", G);
  int *set = shlo__malloc((size_t)G * sizeof *set);
  if (!set) return oom(ex, s);
  memcpy(set, members, (size_t)G * sizeof *set);
  qsort(set, (size_t)G, sizeof *set, cmp_int);
  /* mine and res go into the rendezvous, which grid.c frees raw */
  shlo_value **mine = calloc((size_t)n_ops + 1, sizeof *mine);
  shlo_value **res = calloc((size_t)s->n_out + 1, sizeof *res);
  if (!mine || !res) {
    shlo__free(set);
    free(mine);
    free(res);
    return oom(ex, s);
  }
  for (int k = 0; k < n_ops; k++) mine[k] = shlo_value_ref(in[k]);
  char missing[512] = "";
  shlo_status st = SHLO_OK;
  grid_rdv *r = NULL;
  int pos = -1;

  pthread_mutex_lock(&g->lock);
  rdv_why why = rdv_join(g, ex->proc, set, members, G, &r, &pos);
  if (why == RDV_OK) {
    r->steps[pos] = s;
    r->contrib[pos] = mine;
    r->n_contrib[pos] = n_ops;
    r->results[pos] = res;
    mine = NULL;
    res = NULL;
    r->n_arrived++;
    /* this rank's last member brings the others' operands too */
    if (++r->n_local_arrived == r->n_local && r->n_local < G &&
        shlo__net_contribute(g, r))
      why = RDV_NOMEM;
    else if (r->n_arrived == G)
      st = rdv_compute(g, r, s, in, G, ops, ex);
    else
      why = rdv_wait(g, &g->procs[ex->proc], r, s, G, missing,
                     sizeof missing);
    if (why == RDV_COMPUTE) {
      why = RDV_OK;
      st = rdv_compute(g, r, s, in, G, ops, ex);
    }
    if (why == RDV_OK && !st) why = rdv_take(r, pos, s->n_out, out);
    /* the last member on this rank to leave frees it */
    if (++r->n_left == r->n_local_arrived && (r->ready || g->failed)) {
      rdv_unlink(g, r);
      shlo__rdv_free(r);
    }
  }
  pthread_mutex_unlock(&g->lock);
  shlo__free(set);
  if (mine)
    for (int k = 0; k < n_ops; k++) shlo_value_unref(mine[k]);
  free(mine);
  free(res);
  if (st) return st;
  return rdv_status(ex, s, why, missing);
}

