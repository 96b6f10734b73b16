/* SPDX-License-Identifier: Apache-2.0 */
/* The MPI backend of process grids (grid_net.h, shlo/grid_mpi.h).
 *
 * One network thread per rank makes every MPI call but the shares: it
 * posts the messages that process threads queue, receives every message
 * (matched probes, so sizes need no second message), puts what arrives
 * into the running grid (a collective's operands, a channel message, a
 * failure, a rank's final results), sends heartbeats and notices a rank
 * that stops answering.  Nothing waits on MPI without a bound: sends are
 * nonblocking and tested, receives are probed, so a lost rank ends the
 * grid execution with an error instead of a hang.
 *
 * Messages go over one duplicate of MPI_COMM_WORLD; the tag says what a
 * message is, and each (but heartbeats) starts with the epoch: the count
 * of spread grid executions, which every rank numbers alike.  A message
 * for a grid this rank has not started yet waits in `held`; one for a
 * grid that ended is dropped.
 *
 * Locks: S.lock guards the MPI calls and the state below it; it is taken
 * before a grid's lock, never after.  S.out_lock guards the send queue
 * only (a leaf: process threads queue under their grid's lock). */
#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/context_int.h"
#include "runtime/grid_net.h"
#include "runtime/grid_wire.h"
#include "shlo/grid_mpi.h"

enum { TAG_BEAT = 1, TAG_CONTRIB, TAG_SEND, TAG_FAIL, TAG_DONE };

#define BEAT_EVERY_S 0.2

/* A message body shared by its sends to several ranks. */
typedef struct net_buf {
  int refs; /* sends not yet complete; network thread only once queued */
  char *data;
  size_t len;
} net_buf;

typedef struct net_out {
  struct net_out *next;
  net_buf *buf;
  int dest, tag;
  MPI_Request req;
} net_out;

typedef struct net_in {
  struct net_in *next;
  int src, tag;
  uint64_t epoch;
  char *data;
  size_t len;
} net_in;

static struct {
  bool on; /* started with more than one rank */
  bool inited;
  int rank, size;
  MPI_Comm comm;
  pthread_t thread;
  atomic_int stop;
  double peer_timeout;
  pthread_mutex_t lock;
  net_out *sending;      /* posted, not complete */
  double *heard;         /* per rank: when a message last came */
  MPI_Request *beat;     /* per rank: the heartbeat in flight */
  double last_beat;
  double last_loop;      /* when the network thread last went round */
  int waiting;           /* threads waiting on other ranks (shares) */
  bool lost;
  char lost_msg[256];
  shlo_grid *active;     /* the spread grid running now */
  uint64_t epoch;        /* the latest spread grid's */
  bool fail_sent;
  net_in *held;          /* messages for grids not started yet */
  net_in **done;         /* per rank: its DONE for the active grid */
  int n_done;
  pthread_mutex_t out_lock;
  net_out *queue, *queue_tail;
} S = {.lock = PTHREAD_MUTEX_INITIALIZER,
       .out_lock = PTHREAD_MUTEX_INITIALIZER};

static double now(void) { return shlo__now(); }

static void nap(long us) {
  struct timespec ts = {0, us * 1000};
  nanosleep(&ts, NULL);
}

/* ---- sending ---- */

/* Queue one body for each of dests[0..n) (the network thread posts
 * them in queue order).  Takes the buffer (freed on failure). */
static shlo_status queue_to(strbuf *b, int tag, const int *dests, int n) {
  net_buf *nb = NULL;
  net_out *outs = NULL;
  if (b->failed || b->len > (size_t)INT32_MAX ||
      !(nb = malloc(sizeof *nb)) || !(outs = calloc((size_t)n, sizeof *outs))) {
    free(b->data);
    free(nb);
    return b->len > (size_t)INT32_MAX ? SHLO_ELIMIT : SHLO_ENOMEM;
  }
  *nb = (net_buf){n, b->data, b->len};
  b->data = NULL;
  pthread_mutex_lock(&S.out_lock);
  for (int i = 0; i < n; i++) {
    outs[i] = (net_out){NULL, nb, dests[i], tag, MPI_REQUEST_NULL};
    net_out *o = malloc(sizeof *o);
    if (!o) { /* leave the rest unsent: the grid fails by the caller */
      nb->refs -= n - i;
      break;
    }
    *o = outs[i];
    if (S.queue_tail) S.queue_tail->next = o;
    else S.queue = o;
    S.queue_tail = o;
  }
  bool short_of = nb->refs < n;
  if (nb->refs == 0) {
    free(nb->data);
    free(nb);
  }
  pthread_mutex_unlock(&S.out_lock);
  free(outs);
  return short_of ? SHLO_ENOMEM : SHLO_OK;
}

/* Every rank but this one. */
static shlo_status queue_to_others(strbuf *b, int tag) {
  int *dests = malloc((size_t)S.size * sizeof *dests), n = 0;
  if (!dests) {
    free(b->data);
    return SHLO_ENOMEM;
  }
  for (int r = 0; r < S.size; r++)
    if (r != S.rank) dests[n++] = r;
  shlo_status st = queue_to(b, tag, dests, n);
  free(dests);
  return st;
}

static void buf_release(net_buf *nb) {
  if (--nb->refs == 0) {
    free(nb->data);
    free(nb);
  }
}

static void grid_fail_msg(shlo_grid *g, const char *fmt, int r);

/* Under S.lock: a message that MPI would not deliver.  Its rank waits for
 * it in vain, so the grid in flight fails here, with the reason, instead
 * of both sides running into their deadlines. */
static void send_failed(int dest) {
  if (S.active)
    grid_fail_msg(S.active, "cannot send a message to MPI rank %d", dest);
}

/* Network thread, under S.lock: post the queue, reap completed sends.  A
 * send that fails (its rank is gone) counts as complete and fails the
 * grid in flight. */
static void net_post_and_reap(void) {
  pthread_mutex_lock(&S.out_lock);
  net_out *q = S.queue;
  S.queue = S.queue_tail = NULL;
  pthread_mutex_unlock(&S.out_lock);
  while (q) {
    net_out *o = q;
    q = q->next;
    if (MPI_Isend(o->buf->data, (int)o->buf->len, MPI_BYTE, o->dest, o->tag,
                  S.comm, &o->req) != MPI_SUCCESS) {
      send_failed(o->dest);
      buf_release(o->buf);
      free(o);
      continue;
    }
    o->next = S.sending;
    S.sending = o;
  }
  for (net_out **p = &S.sending; *p;) {
    net_out *o = *p;
    int done = 0;
    if (MPI_Test(&o->req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
      send_failed(o->dest);
      done = 1;
    }
    if (!done) {
      p = &o->next;
      continue;
    }
    *p = o->next;
    buf_release(o->buf);
    free(o);
  }
}

/* ---- what arrives ---- */

static void grid_fail_msg(shlo_grid *g, const char *fmt, int r) {
  pthread_mutex_lock(&g->lock);
  shlo__grid_fail_locked(g, SHLO_ERUNTIME, NULL, fmt, r);
  pthread_mutex_unlock(&g->lock);
}

static int cmp_int(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

/* Read n values; NULL (and r->bad) when they do not decode. */
static shlo_value **read_values(wire_reader *rd, int64_t n) {
  if (n < 0 || n > (rd->end - rd->p) / 8) {
    rd->bad = true;
    return NULL;
  }
  shlo_value **v = calloc((size_t)n + 1, sizeof *v);
  if (!v) {
    rd->bad = true;
    return NULL;
  }
  for (int64_t i = 0; i < n && !rd->bad; i++) v[i] = shlo__wire_read_value(rd);
  if (!rd->bad) return v;
  for (int64_t i = 0; i < n; i++) shlo_value_unref(v[i]);
  free(v);
  return NULL;
}

/* Members that rank src runs, in a group of G: their operands.  Returns
 * false on a malformed message (the grid then fails). */
static bool take_contrib(shlo_grid *g, int src, wire_reader *rd) {
  int64_t G = shlo__wire_read_i64(rd), seq = shlo__wire_read_i64(rd);
  if (rd->bad || G < 2 || G > g->n_procs) return false;
  int *members = malloc((size_t)G * sizeof *members);
  int *set = malloc((size_t)G * sizeof *set);
  bool ok = members && set;
  for (int64_t i = 0; ok && i < G; i++) {
    int64_t m = shlo__wire_read_i64(rd);
    ok = !rd->bad && m >= 0 && m < g->n_procs;
    if (ok) members[i] = set[i] = (int)m;
  }
  int64_t n_pos = ok ? shlo__wire_read_i64(rd) : 0;
  pthread_mutex_lock(&g->lock);
  grid_rdv *r = NULL;
  if (ok && !rd->bad && n_pos > 0 && n_pos < G) {
    qsort(set, (size_t)G, sizeof *set, cmp_int);
    r = shlo__rdv_get(g, set, members, (int)G, (uint64_t)seq);
    ok = r && !memcmp(r->members, members, (size_t)G * sizeof *members);
  } else {
    ok = false;
  }
  for (int64_t i = 0; ok && i < n_pos; i++) {
    int64_t pos = shlo__wire_read_i64(rd), nv = shlo__wire_read_i64(rd);
    ok = !rd->bad && pos >= 0 && pos < G && !r->contrib[pos] &&
         g->home[r->members[pos]] == src;
    shlo_value **v = ok ? read_values(rd, nv) : NULL;
    if (!(ok = ok && v)) break;
    r->contrib[pos] = v;
    r->n_contrib[pos] = (int)nv;
    r->n_arrived++;
  }
  pthread_cond_broadcast(&g->cond);
  pthread_mutex_unlock(&g->lock);
  free(members);
  free(set);
  return ok;
}

/* A send of process `from` on a channel: queue it as a local send would. */
static bool take_send(shlo_grid *g, wire_reader *rd) {
  int64_t channel = shlo__wire_read_i64(rd), from = shlo__wire_read_i64(rd);
  int64_t n = shlo__wire_read_i64(rd);
  if (rd->bad || from < 0 || from >= g->n_procs) return false;
  grid_msg *m = calloc(1, sizeof *m);
  shlo_value **v = read_values(rd, n);
  if (!m || !v) {
    free(m);
    return false;
  }
  *m = (grid_msg){NULL, (int)from, (int)n, v};
  if (shlo__chan_put(g, channel, m)) return true;
  for (int64_t i = 0; i < n; i++) shlo_value_unref(v[i]);
  free(v);
  free(m);
  return false;
}

static void read_diag(wire_reader *rd, shlo_diag *d) {
  shlo_status code = (shlo_status)shlo__wire_read_i64(rd);
  int line = (int)shlo__wire_read_i64(rd), col = (int)shlo__wire_read_i64(rd);
  const char *msg = shlo__wire_read_str(rd);
  shlo_diag_set(d, code ? code : SHLO_ERUNTIME, NULL, line, col, "%s", msg);
}

static void write_diag(strbuf *b, const shlo_diag *d) {
  shlo__wire_i64(b, d->code);
  shlo__wire_i64(b, d->line);
  shlo__wire_i64(b, d->col);
  shlo__wire_str(b, d->message);
}

/* Under S.lock: a message for the active grid. */
static void apply(net_in *m) {
  shlo_grid *g = S.active;
  wire_reader rd = {m->data + 8, m->data + m->len, false};
  bool ok = true, keep = false;
  switch (m->tag) {
  case TAG_CONTRIB:
    ok = take_contrib(g, m->src, &rd);
    break;
  case TAG_SEND:
    ok = take_send(g, &rd);
    break;
  case TAG_FAIL: {
    shlo_diag d;
    read_diag(&rd, &d);
    d.file = g->filename;
    pthread_mutex_lock(&g->lock);
    shlo__grid_fail_diag_locked(g, &d);
    pthread_mutex_unlock(&g->lock);
    S.fail_sent = true; /* the others heard it from its rank */
    break;
  }
  case TAG_DONE:
    if (!S.done[m->src]) {
      S.done[m->src] = m;
      S.n_done++;
      keep = true;
    }
    break;
  }
  if (!ok) grid_fail_msg(g, "rank %d sent a message that does not decode",
                         m->src);
  if (!keep) {
    free(m->data);
    free(m);
  }
}

/* Under S.lock: route a received message by its epoch. */
static void dispatch(net_in *m) {
  if (m->len < 8) {
    free(m->data);
    free(m);
    return;
  }
  memcpy(&m->epoch, m->data, 8);
  if (S.active && m->epoch == S.epoch) {
    apply(m);
  } else if (m->epoch > S.epoch) {
    net_in **p = &S.held;
    while (*p) p = &(*p)->next;
    *p = m;
  } else {
    free(m->data);
    free(m);
  }
}

/* Network thread, under S.lock: receive everything that is there. */
static bool net_receive(void) {
  bool any = false;
  for (;;) {
    int flag = 0, count = 0;
    MPI_Message msg;
    MPI_Status st;
    if (MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, S.comm, &flag, &msg, &st) !=
            MPI_SUCCESS ||
        !flag)
      return any;
    any = true;
    MPI_Get_count(&st, MPI_BYTE, &count);
    net_in *m = calloc(1, sizeof *m);
    char *data = malloc((size_t)count + 1);
    char dummy;
    MPI_Mrecv(data ? data : &dummy, data ? count : 0, MPI_BYTE, &msg,
              MPI_STATUS_IGNORE);
    S.heard[st.MPI_SOURCE] = now();
    if (!m || !data || st.MPI_TAG == TAG_BEAT) {
      if (st.MPI_TAG != TAG_BEAT && S.active)
        grid_fail_msg(S.active, "out of memory receiving from rank %d",
                      st.MPI_SOURCE);
      free(m);
      free(data);
      continue;
    }
    *m = (net_in){NULL, st.MPI_SOURCE, st.MPI_TAG, 0, data, (size_t)count};
    dispatch(m);
  }
}

/* ---- liveness ---- */

/* Network thread, under S.lock: a heartbeat to every rank whose last one
 * went out. */
static void net_beat(void) {
  static char none;
  if (now() - S.last_beat < BEAT_EVERY_S) return;
  S.last_beat = now();
  for (int r = 0; r < S.size; r++) {
    if (r == S.rank) continue;
    int done = 1;
    if (S.beat[r] != MPI_REQUEST_NULL &&
        MPI_Test(&S.beat[r], &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
      done = 0;
    if (done)
      MPI_Isend(&none, 0, MPI_BYTE, r, TAG_BEAT, S.comm, &S.beat[r]);
  }
}

/* Network thread, under S.lock: while ranks wait on each other, one that
 * has been silent too long is lost: the grid in flight fails. */
static void net_check_peers(void) {
  double t = now();
  /* A long stall of this thread (a big receive, a starved core) is not
   * the peers' silence: move their clocks on by it. */
  if (S.last_loop > 0 && t - S.last_loop > 0.5)
    for (int r = 0; r < S.size; r++) S.heard[r] += t - S.last_loop;
  S.last_loop = t;
  if (S.lost || (!S.active && !S.waiting)) return;
  for (int r = 0; r < S.size; r++) {
    if (r == S.rank || t - S.heard[r] <= S.peer_timeout) continue;
    S.lost = true;
    snprintf(S.lost_msg, sizeof S.lost_msg,
             "MPI rank %d stopped answering (no message for %.1f s): the "
             "grid execution cannot complete",
             r, t - S.heard[r]);
    if (S.active) {
      pthread_mutex_lock(&S.active->lock);
      shlo__grid_fail_locked(S.active, SHLO_ERUNTIME, NULL, "%s", S.lost_msg);
      pthread_mutex_unlock(&S.active->lock);
    }
    return;
  }
}

/* Network thread, under S.lock: the first failure of the active grid on
 * this rank goes to every other rank, so their processes stop waiting. */
static void net_tell_failure(void) {
  if (!S.active || S.fail_sent) return;
  shlo_grid *g = S.active;
  shlo_diag d;
  pthread_mutex_lock(&g->lock);
  bool failed = g->failed;
  if (failed) d = g->fail;
  pthread_mutex_unlock(&g->lock);
  if (!failed) return;
  S.fail_sent = true;
  strbuf b = {0};
  shlo__wire_i64(&b, (int64_t)S.epoch);
  write_diag(&b, &d);
  queue_to_others(&b, TAG_FAIL);
}

static void *net_main(void *arg) {
  (void)arg;
  while (!atomic_load(&S.stop)) {
    pthread_mutex_lock(&S.lock);
    net_post_and_reap();
    bool busy = net_receive() || S.sending || S.active;
    net_beat();
    net_check_peers();
    net_tell_failure();
    pthread_mutex_unlock(&S.lock);
    nap(busy ? 50 : 2000);
  }
  return NULL;
}

/* ---- the grid seam ---- */

/* Grids spread by default (shlo run/test --mpi); a server spreads only
 * the ones it announced to the other ranks. */
static atomic_bool spread_only_announced;
static _Thread_local bool spread_here;

void shlo_mpi_spread_every_grid(bool on) {
  atomic_store(&spread_only_announced, !on);
}

void shlo__net_spread_here(bool on) { spread_here = on; }

bool shlo__net_peer_alive(int r) {
  if (!S.on || r < 0 || r >= S.size) return r == S.rank;
  pthread_mutex_lock(&S.lock);
  bool alive = r == S.rank || now() - S.heard[r] <= S.peer_timeout;
  pthread_mutex_unlock(&S.lock);
  return alive;
}

void shlo__net_give_up(const char *why) {
  pthread_mutex_lock(&S.lock);
  if (!S.lost) {
    S.lost = true;
    snprintf(S.lost_msg, sizeof S.lost_msg, "%s", why);
  }
  pthread_mutex_unlock(&S.lock);
}

shlo_status shlo__net_begin(shlo_grid *g) {
  if (!S.on) return SHLO_OK;
  if (atomic_load(&spread_only_announced) && !spread_here) return SHLO_OK;
  pthread_mutex_lock(&S.lock);
  shlo_status st = SHLO_OK;
  if (S.active) goto out; /* a grid inside a grid process: stays here */
  if (S.lost) {
    st = SHLO_ERUNTIME;
    goto out;
  }
  if (!(g->home = malloc((size_t)g->n_procs * sizeof *g->home))) {
    st = SHLO_ENOMEM;
    goto out;
  }
  /* Blocks of consecutive processes per rank: a replica's partitions
   * (and neighbouring replicas) share a rank. */
  for (int k = 0; k < g->n_procs; k++)
    g->home[k] = (int)((int64_t)k * S.size / g->n_procs);
  g->rank = S.rank;
  S.epoch++;
  S.active = g;
  S.fail_sent = false;
  S.n_done = 0;
  double t = now();
  for (int r = 0; r < S.size; r++)
    if (S.heard[r] < t - S.peer_timeout / 2) S.heard[r] = t - S.peer_timeout / 2;
  for (net_in **p = &S.held; *p;) { /* what came before this rank began */
    net_in *m = *p;
    if (m->epoch != S.epoch) {
      p = &m->next;
      continue;
    }
    *p = m->next;
    m->next = NULL;
    apply(m);
  }
out:
  pthread_mutex_unlock(&S.lock);
  return st;
}

/* The distinct ranks other than this one that run members of r. */
static int other_ranks(const shlo_grid *g, const grid_rdv *r, int *dests) {
  int n = 0;
  for (int i = 0; i < r->n; i++) {
    int h = g->home[r->members[i]];
    bool seen = h == g->rank;
    for (int j = 0; j < n && !seen; j++) seen = dests[j] == h;
    if (!seen) dests[n++] = h;
  }
  return n;
}

shlo_status shlo__net_contribute(shlo_grid *g, const grid_rdv *r) {
  strbuf b = {0};
  shlo__wire_i64(&b, (int64_t)S.epoch);
  shlo__wire_i64(&b, r->n);
  shlo__wire_i64(&b, (int64_t)r->seq);
  for (int i = 0; i < r->n; i++) shlo__wire_i64(&b, r->members[i]);
  shlo__wire_i64(&b, r->n_local);
  for (int i = 0; i < r->n; i++) {
    if (!shlo__grid_local(g, r->members[i])) continue;
    shlo__wire_i64(&b, i);
    shlo__wire_i64(&b, r->n_contrib[i]);
    for (int k = 0; k < r->n_contrib[i]; k++)
      if (!shlo__wire_value(&b, r->contrib[i][k])) b.failed = true;
  }
  int *dests = malloc((size_t)r->n * sizeof *dests);
  if (!dests) {
    free(b.data);
    return SHLO_ENOMEM;
  }
  shlo_status st = queue_to(&b, TAG_CONTRIB, dests, other_ranks(g, r, dests));
  free(dests);
  return st;
}

shlo_status shlo__net_send(shlo_grid *g, int64_t channel, int from,
                           shlo_value *const *vals, int n) {
  (void)g;
  strbuf b = {0};
  shlo__wire_i64(&b, (int64_t)S.epoch);
  shlo__wire_i64(&b, channel);
  shlo__wire_i64(&b, from);
  shlo__wire_i64(&b, n);
  for (int i = 0; i < n; i++)
    if (!shlo__wire_value(&b, vals[i])) b.failed = true;
  return queue_to_others(&b, TAG_SEND);
}

/* This rank's DONE: status, diagnostic, and its processes' results. */
static shlo_status send_done(shlo_grid *g, shlo_value **const *res,
                             const int *n_res) {
  strbuf b = {0};
  pthread_mutex_lock(&g->lock);
  bool failed = g->failed || !res;
  shlo_diag d = g->fail;
  pthread_mutex_unlock(&g->lock);
  if (!res && !d.code)
    shlo_diag_set(&d, SHLO_ENOMEM, NULL, 0, 0, "out of memory");
  shlo__wire_i64(&b, (int64_t)S.epoch);
  shlo__wire_i64(&b, failed);
  write_diag(&b, &d);
  for (int k = 0; !failed && k < g->n_procs; k++) {
    if (!shlo__grid_local(g, k)) continue;
    shlo__wire_i64(&b, k);
    shlo__wire_i64(&b, n_res[k]);
    for (int i = 0; i < n_res[k]; i++)
      if (!shlo__wire_value(&b, res[k][i])) b.failed = true;
  }
  return queue_to_others(&b, TAG_DONE);
}

/* Wait (unbounded only while every rank answers; else until the grid's
 * deadline and a margin) for every other rank's DONE.  Returns false when
 * a rank was lost. */
static bool wait_done(shlo_grid *g) {
  const double margin = 10;
  for (;;) {
    pthread_mutex_lock(&S.lock);
    bool all = S.n_done == S.size - 1, lost = S.lost;
    if (!all && !lost && g->deadline > 0 && now() > g->deadline + margin) {
      S.lost = lost = true;
      snprintf(S.lost_msg, sizeof S.lost_msg,
               "the other MPI ranks did not finish the grid execution "
               "%.0f s past its deadline",
               margin);
    }
    pthread_mutex_unlock(&S.lock);
    if (all || lost) return all;
    nap(100);
  }
}

/* Read rank src's DONE into res (remote processes only); its failure, if
 * any, into *d.  False when it does not decode. */
static bool read_done(shlo_grid *g, int src, const net_in *m,
                      shlo_value **const *res, const int *n_res, bool *failed,
                      shlo_diag *d) {
  wire_reader rd = {m->data + 8, m->data + m->len, false};
  *failed = shlo__wire_read_i64(&rd) != 0;
  read_diag(&rd, d);
  d->file = g->filename;
  if (*failed || !res) return !rd.bad;
  for (int k = 0; k < g->n_procs && !rd.bad; k++) {
    if (g->home[k] != src) continue;
    if (shlo__wire_read_i64(&rd) != k || shlo__wire_read_i64(&rd) != n_res[k])
      return false;
    for (int i = 0; i < n_res[k] && !rd.bad; i++)
      res[k][i] = shlo__wire_read_value(&rd);
  }
  return !rd.bad;
}

shlo_status shlo__net_end(shlo_grid *g, shlo_value **const *res,
                          const int *n_res) {
  shlo_status st = send_done(g, res, n_res);
  if (st) {
    pthread_mutex_lock(&g->lock);
    shlo__grid_fail_locked(g, st, NULL, "cannot send the results");
    pthread_mutex_unlock(&g->lock);
  }
  bool all = wait_done(g);
  pthread_mutex_lock(&S.lock);
  /* The lowest failing rank's diagnostic, so every rank reports alike. */
  shlo_diag first;
  bool any = false;
  if (!all) {
    shlo_diag_set(&first, SHLO_ERUNTIME, g->filename, 0, 0, "%s", S.lost_msg);
    any = true;
  }
  for (int r = 0; r < S.size && all; r++) {
    bool failed = g->failed;
    shlo_diag d = g->fail;
    if (r != S.rank &&
        !read_done(g, r, S.done[r], res, n_res, &failed, &d)) {
      failed = true;
      shlo_diag_set(&d, SHLO_ERUNTIME, g->filename, 0, 0,
                    "rank %d sent results that do not decode", r);
    }
    if (failed && !any) {
      first = d;
      any = true;
    }
  }
  for (int r = 0; r < S.size; r++) {
    if (S.done[r]) free(S.done[r]->data);
    free(S.done[r]);
    S.done[r] = NULL;
  }
  S.n_done = 0;
  S.active = NULL;
  pthread_mutex_unlock(&S.lock);
  if (!any) return SHLO_OK;
  pthread_mutex_lock(&g->lock);
  g->failed = true;
  g->fail = first;
  pthread_mutex_unlock(&g->lock);
  return first.code ? first.code : SHLO_ERUNTIME;
}

/* ---- the public face ---- */

bool shlo_mpi_built(void) { return true; }

shlo_status shlo_mpi_start(shlo_diag *diag) {
  if (S.inited)
    return shlo_diag_set(diag, SHLO_ERUNTIME, NULL, 0, 0,
                         "MPI was started already");
  int provided = 0;
  if (MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &provided) !=
      MPI_SUCCESS)
    return shlo_diag_set(diag, SHLO_ERUNTIME, NULL, 0, 0,
                         "MPI_Init_thread failed");
  S.inited = true;
  if (provided < MPI_THREAD_SERIALIZED)
    return shlo_diag_set(diag, SHLO_ERUNTIME, NULL, 0, 0,
                         "this MPI gives no thread support beyond level %d",
                         provided);
  MPI_Comm_dup(MPI_COMM_WORLD, &S.comm);
  MPI_Comm_set_errhandler(S.comm, MPI_ERRORS_RETURN);
  MPI_Comm_rank(S.comm, &S.rank);
  MPI_Comm_size(S.comm, &S.size);
  double t = shlo__ctx_options(shlo__ctx_current())->mpi_peer_timeout_s;
  S.peer_timeout = t > 0 ? t : 60;
  S.heard = calloc((size_t)S.size, sizeof *S.heard);
  S.beat = calloc((size_t)S.size, sizeof *S.beat);
  S.done = calloc((size_t)S.size, sizeof *S.done);
  if (!S.heard || !S.beat || !S.done)
    return shlo_diag_set(diag, SHLO_ENOMEM, NULL, 0, 0, "out of memory");
  for (int r = 0; r < S.size; r++) {
    S.heard[r] = now();
    S.beat[r] = MPI_REQUEST_NULL;
  }
  if (S.size > 1) {
    if (pthread_create(&S.thread, NULL, net_main, NULL))
      return shlo_diag_set(diag, SHLO_ERUNTIME, NULL, 0, 0,
                           "cannot start the MPI network thread");
    S.on = true;
  }
  return SHLO_OK;
}

int shlo_mpi_rank(void) { return S.rank; }
int shlo_mpi_size(void) { return S.inited ? S.size : 1; }
const char *shlo_mpi_lost_reason(void) {
  pthread_mutex_lock(&S.lock);
  const char *why = S.lost ? S.lost_msg : NULL;
  pthread_mutex_unlock(&S.lock);
  return why;
}

bool shlo_mpi_lost(void) {
  pthread_mutex_lock(&S.lock);
  bool lost = S.lost;
  pthread_mutex_unlock(&S.lock);
  return lost;
}

/* A broadcast from rank 0, polled so that a lost rank ends it. */
static shlo_status bcast_polled(void *data, int n) {
  MPI_Request req;
  pthread_mutex_lock(&S.lock);
  int rc = MPI_Ibcast(data, n, MPI_BYTE, 0, S.comm, &req);
  S.waiting++;
  pthread_mutex_unlock(&S.lock);
  shlo_status st = rc == MPI_SUCCESS ? SHLO_OK : SHLO_ERUNTIME;
  /* Quick polls first; a follower waiting for a server's next grid may
   * wait for hours, and should not spin meanwhile. */
  double t0 = now();
  for (int done = 0; !st && !done;) {
    pthread_mutex_lock(&S.lock);
    if (MPI_Test(&req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS || S.lost)
      st = SHLO_ERUNTIME;
    pthread_mutex_unlock(&S.lock);
    if (!done && !st) nap(now() - t0 < 0.05 ? 100 : 2000);
  }
  pthread_mutex_lock(&S.lock);
  S.waiting--;
  pthread_mutex_unlock(&S.lock);
  return st;
}

shlo_status shlo_mpi_share(char **buf, size_t *len) {
  if (!S.on) return SHLO_OK;
  int64_t n = S.rank == 0 ? (*buf ? (int64_t)*len : -1) : 0;
  shlo_status st = bcast_polled(&n, sizeof n);
  if (st) return st;
  if (S.rank != 0) {
    *buf = NULL;
    *len = 0;
    if (n < 0) return SHLO_OK;
    if (!(*buf = malloc((size_t)n + 1))) return SHLO_ENOMEM;
    (*buf)[n] = 0;
    *len = (size_t)n;
  }
  const int64_t chunk = 1 << 30;
  for (int64_t at = 0; n > 0 && at < n && !st; at += chunk)
    st = bcast_polled(*buf + at, (int)(n - at < chunk ? n - at : chunk));
  return st;
}

void shlo_mpi_stop(int code) {
  if (!S.inited) return;
  if (S.on) {
    atomic_store(&S.stop, 1);
    pthread_join(S.thread, NULL);
  }
  if (S.lost) {
    fflush(stdout);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, code ? code : 1);
  }
  /* Sends still in flight reach ranks that are alive and receiving. */
  while (S.sending || S.queue) {
    pthread_mutex_lock(&S.lock);
    net_post_and_reap();
    net_receive();
    pthread_mutex_unlock(&S.lock);
    nap(100);
  }
  MPI_Barrier(S.comm);
  for (int r = 0; r < S.size; r++)
    if (S.beat[r] != MPI_REQUEST_NULL) MPI_Wait(&S.beat[r], MPI_STATUS_IGNORE);
  while (S.held) {
    net_in *m = S.held;
    S.held = m->next;
    free(m->data);
    free(m);
  }
  free(S.heard);
  free(S.beat);
  free(S.done);
  MPI_Comm_free(&S.comm);
  MPI_Finalize();
  S.inited = S.on = false;
}
