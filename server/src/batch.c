/* SPDX-License-Identifier: Apache-2.0 */
/* Dynamic batching (batch.h): the configuration, the per-module queues,
 * stacking the arguments and splitting the results. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "batch.h"
#include "core/strbuf.h"
#include "server.h"
#include "teams.h"

/* ---- the configuration ---- */

static bool int_field(const cJSON *v, const char *key, int64_t lo, int64_t hi,
                      int64_t *out, char *why, size_t cap) {
  if (!cJSON_IsNumber(v) || v->valuedouble != (double)(int64_t)v->valuedouble ||
      v->valuedouble < (double)lo || v->valuedouble > (double)hi) {
    snprintf(why, cap, "\"batching\": \"%s\" must be an integer from %lld to "
                       "%lld", key, (long long)lo, (long long)hi);
    return false;
  }
  *out = (int64_t)v->valuedouble;
  return true;
}

static int cmp_int(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

static bool preferred_field(const cJSON *v, srv_batch_cfg *c, char *why,
                            size_t cap) {
  int n = cJSON_IsArray(v) ? cJSON_GetArraySize(v) : -1;
  if (n < 0 || n > SRV_BATCH_MAX_PREFERRED) {
    snprintf(why, cap, "\"batching\": \"preferred_batch_sizes\" must be a "
                       "list of at most %d sizes", SRV_BATCH_MAX_PREFERRED);
    return false;
  }
  c->n_preferred = 0;
  for (const cJSON *e = v->child; e; e = e->next) {
    int64_t x;
    if (!int_field(e, "preferred_batch_sizes", 1, SRV_BATCH_MAX_SIZE, &x, why,
                   cap))
      return false;
    c->preferred[c->n_preferred++] = (int)x;
  }
  qsort(c->preferred, (size_t)c->n_preferred, sizeof c->preferred[0], cmp_int);
  return true;
}

bool srv_batch_cfg_parse(const cJSON *j, srv_batch_cfg *out, char *why,
                         size_t cap) {
  srv_batch_cfg c = {.max_queue_delay_us = 1000};
  if (!cJSON_IsObject(j)) {
    snprintf(why, cap, "\"batching\" must be an object such as "
                       "{\"max_batch_size\": 32}");
    return false;
  }
  bool has_max = false;
  for (const cJSON *f = j->child; f; f = f->next) {
    int64_t v = 0;
    bool ok;
    if (!strcmp(f->string, "max_batch_size")) {
      ok = int_field(f, f->string, 0, SRV_BATCH_MAX_SIZE, &v, why, cap);
      c.max_batch_size = (int)v;
      has_max = true;
    } else if (!strcmp(f->string, "max_queue_delay_us")) {
      ok = int_field(f, f->string, 0, SRV_BATCH_MAX_DELAY_US, &v, why, cap);
      c.max_queue_delay_us = v;
    } else if (!strcmp(f->string, "max_queue_size")) {
      ok = int_field(f, f->string, 0, 1 << 20, &v, why, cap);
      c.max_queue_size = (int)v;
    } else if (!strcmp(f->string, "preferred_batch_sizes")) {
      ok = preferred_field(f, &c, why, cap);
    } else {
      snprintf(why, cap, "\"batching\": unknown key \"%.64s\" (known: "
                         "max_batch_size, max_queue_delay_us, "
                         "preferred_batch_sizes, max_queue_size)", f->string);
      ok = false;
    }
    if (!ok) return false;
  }
  if (!has_max) {
    snprintf(why, cap, "\"batching\" needs \"max_batch_size\" (0 turns "
                       "batching off)");
    return false;
  }
  if (c.n_preferred && c.preferred[c.n_preferred - 1] > c.max_batch_size) {
    snprintf(why, cap, "\"batching\": preferred size %d is over "
                       "max_batch_size %d", c.preferred[c.n_preferred - 1],
             c.max_batch_size);
    return false;
  }
  *out = c;
  return true;
}

static bool type_batches(const shlo_type *t, const char *what, int i,
                         char *why, size_t cap) {
  const char *no = NULL;
  if (t->kind != SHLO_TYPE_TENSOR || t->rank < 1) no = "is no ranked tensor";
  else if (t->dims[0] != SHLO_DYN)
    no = "has a static leading dimension (export it with a symbolic batch "
         "dimension, tensor<?x...>)";
  else if (t->quant) no = "is quantized";
  for (int k = 1; !no && k < t->rank; k++)
    if (t->dims[k] == SHLO_DYN) no = "has a dynamic dimension past the first";
  if (!no) return true;
  snprintf(why, cap, "cannot batch: %s %d %s", what, i, no);
  return false;
}

bool srv_batch_shape_ok(const shlo_func *f, char *why, size_t cap) {
  if (strlen(f->name) >= SRV_BATCH_FN_LEN) {
    snprintf(why, cap, "cannot batch: the function's name is over %d bytes",
             SRV_BATCH_FN_LEN - 1);
    return false;
  }
  if (f->n_args < 1 || f->n_results < 1) {
    snprintf(why, cap, "cannot batch: @%s has no %s", f->name,
             f->n_args < 1 ? "arguments" : "results");
    return false;
  }
  for (int i = 0; i < f->n_args; i++)
    if (!type_batches(f->arg_types[i], "argument", i, why, cap)) return false;
  for (int i = 0; i < f->n_results; i++)
    if (!type_batches(f->result_types[i], "result", i, why, cap)) return false;
  return true;
}

/* ---- the queues ---- */

/* One waiting execution, on its worker's stack while it waits. */
typedef struct batch_item {
  struct batch_item *next;
  shlo_value *const *args;
  int n_args;
  int64_t rows;
  uint64_t came_ns, started_ns; /* queued; its batch taken */
  const shlo_exec_opts *opts;
  /* set by the batch's leader, read once done (under the lock) */
  bool done;
  shlo_status st;
  shlo_value **res;
  int n_res;
  shlo_diag d;
} batch_item;

/* Requests per execution: 1, 2, 4, ... SRV_BATCH_MAX_SIZE, +Inf. */
#define N_SIZE_BUCKETS 14

typedef struct batch_queue {
  char team[SRV_TEAM_NAME_LEN];
  char id[SRV_ID_LEN];
  char entry[SRV_BATCH_FN_LEN]; /* the function that batches */
  srv_batch_cfg cfg;
  batch_item *head, *tail;
  int n_items;
  int64_t rows;
  bool leading;         /* a worker is forming a batch from the head */
  pthread_cond_t cond;  /* arrivals, formed batches and finished ones */
  uint64_t sizes[N_SIZE_BUCKETS];
  uint64_t executions, requests, refused;
  srv_histogram delay;  /* arrival to the batch's start */
} batch_queue;

struct srv_batcher {
  pthread_mutex_t lock;
  batch_queue **queues; /* never removed: a worker may still be in one */
  int n, cap;
  atomic_int any;       /* n > 0: a server that batches nothing skips the lock */
  int n_workers;
  shlo_cancel cancel;   /* srv_batch_cancel_all: every batch's flag */
  int inside;           /* workers in srv_batch_execute's queues/batches */
};

static uint64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

srv_batcher *srv_batcher_new(int n_workers) {
  srv_batcher *b = calloc(1, sizeof *b);
  if (!b) return NULL;
  pthread_mutex_init(&b->lock, NULL);
  b->n_workers = n_workers;
  return b;
}

void srv_batcher_set_workers(srv_batcher *b, int n_workers) {
  pthread_mutex_lock(&b->lock);
  b->n_workers = n_workers;
  pthread_mutex_unlock(&b->lock);
}

void srv_batcher_free(srv_batcher *b) {
  if (!b) return;
  for (int i = 0; i < b->n; i++) {
    pthread_cond_destroy(&b->queues[i]->cond);
    free(b->queues[i]);
  }
  free(b->queues);
  pthread_mutex_destroy(&b->lock);
  free(b);
}

static batch_queue *find_queue(srv_batcher *b, const char *team,
                               const char *id) {
  for (int i = 0; i < b->n; i++)
    if (!strcmp(b->queues[i]->id, id) && !strcmp(b->queues[i]->team, team))
      return b->queues[i];
  return NULL;
}

/* A new queue for id (lock held); NULL when out of memory. */
static batch_queue *add_queue(srv_batcher *b, const char *team,
                              const char *id) {
  if (b->n == b->cap) {
    int cap = b->cap ? 2 * b->cap : 8;
    batch_queue **q = realloc(b->queues, (size_t)cap * sizeof *q);
    if (!q) return NULL;
    b->queues = q;
    b->cap = cap;
  }
  batch_queue *q = calloc(1, sizeof *q);
  if (!q) return NULL;
  snprintf(q->id, sizeof q->id, "%s", id);
  snprintf(q->team, sizeof q->team, "%s", team);
  /* the leader's wait is timed against the monotonic clock */
  pthread_condattr_t a;
  pthread_condattr_init(&a);
  pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
  pthread_cond_init(&q->cond, &a);
  pthread_condattr_destroy(&a);
  b->queues[b->n++] = q;
  atomic_store(&b->any, 1);
  return q;
}

int srv_batch_configure(srv_batcher *b, const char *team, const char *id,
                        const char *entry, const srv_batch_cfg *cfg) {
  if (!b) return -1;
  pthread_mutex_lock(&b->lock);
  batch_queue *q = find_queue(b, team, id);
  if (!q && cfg->max_batch_size) q = add_queue(b, team, id);
  if (q) {
    q->cfg = *cfg;
    snprintf(q->entry, sizeof q->entry, "%s", entry);
  }
  pthread_mutex_unlock(&b->lock);
  return q || !cfg->max_batch_size ? 0 : -1;
}

bool srv_batch_cfg_get(srv_batcher *b, const char *team, const char *id,
                       srv_batch_cfg *out, char *entry) {
  bool on = false;
  if (!b) return false;
  pthread_mutex_lock(&b->lock);
  batch_queue *q = find_queue(b, team, id);
  if (q && q->cfg.max_batch_size > 0) {
    *out = q->cfg;
    memcpy(entry, q->entry, SRV_BATCH_FN_LEN);
    on = true;
  }
  pthread_mutex_unlock(&b->lock);
  return on;
}

bool srv_batch_enabled(srv_batcher *b, const char *team, const char *id) {
  if (!b || !atomic_load_explicit(&b->any, memory_order_relaxed))
    return false;
  pthread_mutex_lock(&b->lock);
  batch_queue *q = find_queue(b, team, id);
  bool on = q && q->cfg.max_batch_size > 0;
  pthread_mutex_unlock(&b->lock);
  return on;
}

void srv_batch_cfg_json(srv_batcher *b, const char *team, const char *id,
                        strbuf *sb) {
  srv_batch_cfg c = {0};
  if (b) {
    pthread_mutex_lock(&b->lock);
    batch_queue *q = find_queue(b, team, id);
    if (q) c = q->cfg;
    pthread_mutex_unlock(&b->lock);
  }
  if (!c.max_batch_size) {
    shlo__sb_puts(sb, "null");
    return;
  }
  shlo__sb_printf(sb, "{\"max_batch_size\":%d,\"max_queue_delay_us\":%lld,"
                      "\"max_queue_size\":%d,\"preferred_batch_sizes\":[",
                  c.max_batch_size, (long long)c.max_queue_delay_us,
                  c.max_queue_size);
  for (int i = 0; i < c.n_preferred; i++)
    shlo__sb_printf(sb, "%s%d", i ? "," : "", c.preferred[i]);
  shlo__sb_puts(sb, "]}");
}

/* ---- stacking and splitting ---- */

/* The common leading dimension of the arguments, or -1 when they are not
 * all ranked tensors with one. */
static int64_t lead_rows(shlo_value *const *args, int n_args) {
  int64_t rows = -1;
  for (int i = 0; i < n_args; i++) {
    if (shlo_value_kind(args[i]) != SHLO_TYPE_TENSOR ||
        shlo_tensor_rank(args[i]) < 1)
      return -1;
    int64_t r = shlo_tensor_dims(args[i])[0];
    if (rows >= 0 && r != rows) return -1;
    rows = r;
  }
  return rows;
}

/* Bytes of one row of tensor v (dims[0] rows), or 0 when its storage is
 * not whole bytes per element. */
static size_t row_bytes(const shlo_value *v) {
  int64_t rows = shlo_tensor_dims(v)[0];
  size_t n = shlo_tensor_nbytes(v);
  if (rows <= 0 || (size_t)shlo_tensor_numel(v) *
                           shlo_elem_size(shlo_tensor_elem(v)) != n)
    return 0;
  return n / (size_t)rows;
}

/* Whether a and b differ only in their leading dimension. */
static bool same_rows(const shlo_value *a, const shlo_value *b) {
  int rank = shlo_tensor_rank(a);
  if (shlo_tensor_elem(a) != shlo_tensor_elem(b) ||
      rank != shlo_tensor_rank(b) || shlo_tensor_quant(a) ||
      shlo_tensor_quant(b))
    return false;
  return !memcmp(shlo_tensor_dims(a) + 1, shlo_tensor_dims(b) + 1,
                 (size_t)(rank - 1) * sizeof(int64_t));
}

/* A tensor shaped like `like` with `rows` leading rows, zero-filled. */
static shlo_value *tensor_with_rows(const shlo_value *like, int64_t rows) {
  int64_t dims[SHLO_MAX_RANK];
  int rank = shlo_tensor_rank(like);
  memcpy(dims, shlo_tensor_dims(like), (size_t)rank * sizeof dims[0]);
  dims[0] = rows;
  return shlo_tensor_new(shlo_tensor_elem(like), rank, dims);
}

/* Argument k of the n items one under the other; NULL when they do not
 * stack (out of memory, or shapes that differ past the first dimension). */
static shlo_value *stack_arg(batch_item **items, int n, int k, int64_t rows) {
  const shlo_value *first = items[0]->args[k];
  size_t rb = row_bytes(first);
  for (int i = 1; i < n; i++)
    if (!same_rows(first, items[i]->args[k])) return NULL;
  shlo_value *v = rb ? tensor_with_rows(first, rows) : NULL;
  if (!v) return NULL;
  char *to = shlo_tensor_data(v);
  for (int i = 0; i < n; i++) {
    size_t len = rb * (size_t)items[i]->rows;
    memcpy(to, shlo_tensor_data_const(items[i]->args[k]), len);
    to += len;
  }
  return v;
}

/* Each item's rows of the batch's results into its res; false (nothing
 * kept) when a result is not rows-long along its first dimension. */
static bool split_results(batch_item **items, int n, shlo_value **res,
                          int n_res, int64_t rows) {
  for (int k = 0; k < n_res; k++)
    if (shlo_value_kind(res[k]) != SHLO_TYPE_TENSOR ||
        shlo_tensor_rank(res[k]) < 1 || shlo_tensor_dims(res[k])[0] != rows ||
        !row_bytes(res[k]))
      return false;
  bool ok = true;
  for (int i = 0; i < n; i++)
    ok = ok && (items[i]->res = calloc((size_t)n_res, sizeof(shlo_value *)));
  for (int k = 0; ok && k < n_res; k++) {
    size_t rb = row_bytes(res[k]);
    const char *from = shlo_tensor_data_const(res[k]);
    for (int i = 0; ok && i < n; i++) {
      shlo_value *v = tensor_with_rows(res[k], items[i]->rows);
      if (!(ok = v != NULL)) break;
      size_t len = rb * (size_t)items[i]->rows;
      memcpy(shlo_tensor_data(v), from, len);
      from += len;
      items[i]->res[k] = v;
      items[i]->n_res = k + 1;
    }
  }
  if (ok) return true;
  for (int i = 0; i < n; i++) {
    for (int k = 0; k < items[i]->n_res; k++)
      shlo_value_release(items[i]->res[k]);
    free(items[i]->res);
    items[i]->res = NULL;
    items[i]->n_res = 0;
  }
  return false;
}

static void run_alone(const shlo_executable *x, batch_item *it) {
  shlo_diag_clear(&it->d);
  it->st = shlo_execute(x, it->opts, it->args, it->n_args, &it->res,
                        &it->n_res, &it->d);
}

/* The batch's options: no cancel flag (one client's hang-up must not stop
 * the others'), the longest deadline, the sum of the memory bounds. */
static shlo_exec_opts batch_opts(const shlo_cancel *cancel,
                                 batch_item **items, int n) {
  shlo_exec_opts o = {.print_stream = items[0]->opts->print_stream,
                      .cancel = cancel};
  for (int i = 0; i < n; i++) {
    const shlo_exec_opts *p = items[i]->opts;
    if (p->timeout_s <= 0 || o.timeout_s < 0) o.timeout_s = -1;
    else if (p->timeout_s > o.timeout_s) o.timeout_s = p->timeout_s;
    if (p->max_bytes <= 0 || o.max_bytes < 0) o.max_bytes = -1;
    else o.max_bytes += p->max_bytes;
  }
  if (o.timeout_s < 0) o.timeout_s = 0;
  if (o.max_bytes < 0) o.max_bytes = 0;
  return o;
}

/* Execute the n items as one and give each its results.  Whatever does
 * not go as one batch (arguments that do not stack, results that do not
 * split, a failure) runs each item alone, so that each gets exactly its
 * own answer; only a deadline or a shutdown ends all of them at once. */
static void run_batch(srv_batcher *b, const shlo_executable *x,
                      batch_item **items, int n, int64_t rows) {
  if (n == 1) {
    run_alone(x, items[0]);
    return;
  }
  int n_args = items[0]->n_args;
  shlo_value **args = calloc((size_t)n_args, sizeof *args);
  bool stacked = args != NULL;
  for (int k = 0; stacked && k < n_args; k++)
    stacked = (args[k] = stack_arg(items, n, k, rows)) != NULL;
  shlo_value **res = NULL;
  int n_res = 0;
  shlo_diag d;
  shlo_diag_clear(&d);
  shlo_exec_opts o = batch_opts(&b->cancel, items, n);
  shlo_status st = stacked ? shlo_execute(x, &o, args, n_args, &res, &n_res, &d)
                           : SHLO_ENOMEM;
  bool split = st == SHLO_OK && split_results(items, n, res, n_res, rows);
  for (int k = 0; k < n_res; k++) shlo_value_release(res[k]);
  free(res);
  for (int k = 0; args && k < n_args; k++) shlo_value_release(args[k]);
  free(args);
  for (int i = 0; i < n; i++) {
    if (split) {
      items[i]->st = SHLO_OK;
    } else if (st == SHLO_ETIMEOUT || st == SHLO_ECANCELED) {
      items[i]->st = st;
      items[i]->d = d;
    } else {
      run_alone(x, items[i]);
    }
  }
}

/* ---- forming a batch ---- */

/* Whether the leader should stop waiting: the queue holds a full batch,
 * or the largest preferred size, or every worker waits in a batch. */
static bool batch_ready(const srv_batcher *b, const batch_queue *q) {
  const srv_batch_cfg *c = &q->cfg;
  if (q->rows >= c->max_batch_size) return true;
  if (c->n_preferred && q->rows >= c->preferred[c->n_preferred - 1])
    return true;
  return b->inside >= b->n_workers || shlo_cancel_reason(&b->cancel);
}

static bool is_preferred(const srv_batch_cfg *c, int64_t rows) {
  for (int i = 0; i < c->n_preferred; i++)
    if (c->preferred[i] == rows) return true;
  return false;
}

/* How many items from the head make the batch: the longest run whose
 * rows are a preferred size, else the longest that fits max_batch_size
 * (at least the head, which fits by itself); *rows gets its rows. */
static int batch_length(const batch_queue *q, int64_t *rows) {
  int n = 0, n_pref = 0;
  int64_t sum = 0, sum_pref = 0;
  for (const batch_item *it = q->head; it; it = it->next) {
    if (n && sum + it->rows > q->cfg.max_batch_size) break;
    sum += it->rows;
    n++;
    if (is_preferred(&q->cfg, sum)) {
      n_pref = n;
      sum_pref = sum;
    }
  }
  if (n_pref) {
    *rows = sum_pref;
    return n_pref;
  }
  *rows = sum;
  return n;
}

static void size_bucket_add(batch_queue *q, int n) {
  int i = 0;
  while (i < N_SIZE_BUCKETS - 1 && n > (1 << i)) i++;
  q->sizes[i]++;
  q->executions++;
  q->requests += (uint64_t)n;
}

/* Take the batch's items off the queue's head into items (lock held). */
static int take_batch(batch_queue *q, batch_item **items, int64_t *rows) {
  int n = batch_length(q, rows);
  uint64_t now = mono_ns();
  for (int i = 0; i < n; i++) {
    batch_item *it = q->head;
    q->head = it->next;
    items[i] = it;
    q->rows -= it->rows;
    it->started_ns = now;
    srv_histogram_add(&q->delay, (double)(now - it->came_ns) / 1e9);
  }
  if (!q->head) q->tail = NULL;
  q->n_items -= n;
  size_bucket_add(q, n);
  return n;
}

/* The oldest waiting item's worker forms a batch, runs it without the
 * lock, and marks its items done (the lock is held on entry and exit). */
static void lead(srv_batcher *b, batch_queue *q, const shlo_executable *x,
                 batch_item *me) {
  q->leading = true;
  uint64_t until = me->came_ns + (uint64_t)q->cfg.max_queue_delay_us * 1000u;
  struct timespec ts = {.tv_sec = (time_t)(until / 1000000000u),
                        .tv_nsec = (long)(until % 1000000000u)};
  while (!batch_ready(b, q) && mono_ns() < until)
    pthread_cond_timedwait(&q->cond, &b->lock, &ts);
  /* at most one item per worker can wait: this is bounded by them */
  batch_item **items = malloc((size_t)q->n_items * sizeof *items);
  int64_t rows = 0;
  int n = 0;
  if (items) {
    n = take_batch(q, items, &rows);
  } else { /* out of memory: the leader runs alone */
    q->head = me->next;
    if (!q->head) q->tail = NULL;
    q->n_items--;
    q->rows -= me->rows;
    size_bucket_add(q, 1);
  }
  q->leading = false;
  pthread_cond_broadcast(&q->cond); /* the new head may lead */
  pthread_mutex_unlock(&b->lock);
  if (items) run_batch(b, x, items, n, rows);
  else run_alone(x, me);
  pthread_mutex_lock(&b->lock);
  for (int i = 0; i < n; i++) items[i]->done = true;
  me->done = true;
  free(items);
  pthread_cond_broadcast(&q->cond);
}

shlo_status srv_batch_execute(srv_batcher *b, const char *team,
                              const char *id,
                              const shlo_executable *x,
                              const shlo_exec_opts *opts,
                              shlo_value *const *args, int n_args,
                              shlo_value ***results, int *n_results,
                              shlo_diag *d, srv_batch_how *how) {
  *how = (srv_batch_how){SRV_BATCH_ALONE, 0};
  batch_queue *q = NULL;
  int64_t rows = lead_rows(args, n_args);
  if (b && rows >= 1 && atomic_load_explicit(&b->any, memory_order_relaxed)) {
    pthread_mutex_lock(&b->lock);
    q = find_queue(b, team, id);
    if (q && (!q->cfg.max_batch_size || rows > q->cfg.max_batch_size ||
              strcmp(q->entry, shlo_executable_entry(x)->name)))
      q = NULL;
    if (!q) pthread_mutex_unlock(&b->lock);
  }
  if (!q) return shlo_execute(x, opts, args, n_args, results, n_results, d);
  if (q->cfg.max_queue_size && q->n_items >= q->cfg.max_queue_size) {
    q->refused++;
    int limit = q->cfg.max_queue_size;
    pthread_mutex_unlock(&b->lock);
    how->kind = SRV_BATCH_FULL;
    return shlo_diag_set(d, SHLO_ELIMIT, NULL, 0, 0,
                         "limit max_queue_size (%d): the module's batch "
                         "queue is full; retry later", limit);
  }
  batch_item it = {.args = args, .n_args = n_args, .rows = rows,
                   .came_ns = mono_ns(), .opts = opts};
  if (q->tail) q->tail->next = &it;
  else q->head = &it;
  q->tail = &it;
  q->n_items++;
  q->rows += rows;
  b->inside++;
  pthread_cond_broadcast(&q->cond); /* the leader counts the rows again */
  while (!it.done) {
    if (!q->leading && q->head == &it) lead(b, q, x, &it);
    else pthread_cond_wait(&q->cond, &b->lock);
  }
  b->inside--;
  pthread_mutex_unlock(&b->lock);
  how->kind = SRV_BATCH_STACKED;
  how->queued_s = it.started_ns > it.came_ns
                      ? (double)(it.started_ns - it.came_ns) / 1e9 : 0;
  *results = it.res;
  *n_results = it.n_res;
  if (d) *d = it.d;
  return it.st;
}

void srv_batch_cancel_all(srv_batcher *b, int why) {
  if (!b) return;
  shlo_cancel_set_first(&b->cancel, why);
  pthread_mutex_lock(&b->lock);
  for (int i = 0; i < b->n; i++) pthread_cond_broadcast(&b->queues[i]->cond);
  pthread_mutex_unlock(&b->lock);
}

/* ---- figures ---- */

static void put_queue(strbuf *sb, const batch_queue *q) {
  uint64_t cum = 0;
  for (int i = 0; i < N_SIZE_BUCKETS; i++) {
    cum += q->sizes[i];
    if (i < N_SIZE_BUCKETS - 1)
      shlo__sb_printf(sb, "shlo_batch_size_bucket{team=\"%s\",module=\"%s\","
                          "le=\"%d\"} %llu\n", q->team, q->id, 1 << i, (unsigned long long)cum);
    else
      shlo__sb_printf(sb, "shlo_batch_size_bucket{team=\"%s\",module=\"%s\","
                          "le=\"+Inf\"} %llu\n", q->team, q->id, (unsigned long long)cum);
  }
  shlo__sb_printf(sb, "shlo_batch_size_sum{team=\"%s\",module=\"%s\"} "
                      "%llu\nshlo_batch_size_count{team=\"%s\",module="
                      "\"%s\"} %llu\n", q->team, q->id,
                  (unsigned long long)q->requests, q->team, q->id,
                  (unsigned long long)q->executions);
}

void srv_batch_metrics(srv_batcher *b, strbuf *sb) {
  if (!b || !atomic_load(&b->any)) return; /* no family without series */
  pthread_mutex_lock(&b->lock);
  shlo__sb_puts(sb, "# HELP shlo_batch_size Requests per batched execution "
                    "(dynamic batching).\n# TYPE shlo_batch_size histogram\n");
  for (int i = 0; i < b->n; i++) put_queue(sb, b->queues[i]);
  shlo__sb_puts(sb, "# HELP shlo_batch_queue_delay_seconds A batched "
                    "request's wait for its batch to start.\n"
                    "# TYPE shlo_batch_queue_delay_seconds histogram\n");
  for (int i = 0; i < b->n; i++) {
    char label[SRV_TEAM_NAME_LEN + SRV_ID_LEN + 32];
    snprintf(label, sizeof label, "team=\"%s\",module=\"%s\"",
             b->queues[i]->team, b->queues[i]->id);
    srv_put_histogram(sb, "shlo_batch_queue_delay_seconds", label,
                      &b->queues[i]->delay);
  }
  shlo__sb_puts(sb, "# HELP shlo_batch_queue_depth Requests waiting for a "
                    "batch.\n# TYPE shlo_batch_queue_depth gauge\n");
  for (int i = 0; i < b->n; i++)
    shlo__sb_printf(sb, "shlo_batch_queue_depth{team=\"%s\",module=\"%s\"}"
                    " %d\n", b->queues[i]->team, b->queues[i]->id,
                    b->queues[i]->n_items);
  shlo__sb_puts(sb, "# HELP shlo_batch_refused_total Requests refused 429 "
                    "for a full batch queue (max_queue_size).\n"
                    "# TYPE shlo_batch_refused_total counter\n");
  for (int i = 0; i < b->n; i++)
    shlo__sb_printf(sb, "shlo_batch_refused_total{team=\"%s\",module="
                    "\"%s\"} %llu\n", b->queues[i]->team, b->queues[i]->id,
                    (unsigned long long)b->queues[i]->refused);
  pthread_mutex_unlock(&b->lock);
}
