/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests for process grids (engine/src/runtime/grid.c, rendezvous.c;
 * kernels/grid_ops.c, collective.c).
 *
 * Random programs drive grids of 1x1, 4x1, 1x4, 2x4 and 8x8 processes
 * through every collective under each process-group strategy, with random
 * shapes, random replica groups and per-process inputs, and compare every
 * process's result with a plain sequential computation written here.
 * Failure cases (a peer that skips a collective, bad replica groups,
 * mismatched shapes, an infeed that never comes, a cancel, a deadlock)
 * must end with an error naming the op and the process, quickly, with no
 * thread left running. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/value.h"
#include "shlo/engine.h"
#include "shlo/grid.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Threads of this process now (from /proc). */
static int thread_count(void) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  int n = -1;
  while (f && fgets(line, sizeof line, f))
    if (!strncmp(line, "Threads:", 8)) n = atoi(line + 8);
  if (f) fclose(f);
  return n;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;
static uint32_t rnd(uint32_t n) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (uint32_t)(rng_state % n);
}

/* ---- text building ---- */

typedef struct sbuf {
  char *p;
  size_t n, cap;
} sbuf;

static void sb(sbuf *b, const char *fmt, ...) {
  va_list ap;
  for (;;) {
    va_start(ap, fmt);
    int k = vsnprintf(b->p ? b->p + b->n : NULL, b->p ? b->cap - b->n : 0,
                      fmt, ap);
    va_end(ap);
    if (b->p && b->n + (size_t)k < b->cap) {
      b->n += (size_t)k;
      return;
    }
    b->cap = (b->cap + (size_t)k + 1) * 2;
    b->p = realloc(b->p, b->cap);
    assert_non_null(b->p);
  }
}

static void sb_type(sbuf *b, int rank, const int64_t *dims, const char *et) {
  sb(b, "tensor<");
  for (int i = 0; i < rank; i++) sb(b, "%lldx", (long long)dims[i]);
  sb(b, "%s>", et);
}

/* ---- running ---- */

typedef struct grid_result {
  shlo_status st;
  shlo_diag diag;
  char msg[SHLO_DIAG_MAX + 256]; /* diag formatted while the module lives */
  shlo_value **res;
  int n_res;
  double seconds;
} grid_result;

/* Parse, compile and run text on an R x P grid (0: from the module) with
 * per-process inputs (n_args each). */
static void run_grid(const char *text, int R, int P, shlo_value **args,
                     int n_args, double timeout, shlo_feed **infeed,
                     shlo_cancel *cancel, grid_result *out) {
  shlo_module *m = NULL;
  shlo_executable *e = NULL;
  memset(out, 0, sizeof *out);
  shlo_diag_clear(&out->diag);
  out->st = shlo_parse_module(text, strlen(text), "grid.mlir", &m, &out->diag);
  if (!out->st) out->st = shlo_compile(m, NULL, &e, &out->diag);
  if (!out->st) {
    shlo_grid_opts o = {.num_replicas = R, .num_partitions = P,
                        .infeed = infeed};
    o.exec.timeout_s = timeout;
    o.exec.cancel = cancel;
    double t0 = now_s();
    out->st = shlo_execute_grid(e, &o, args, n_args, &out->res, &out->n_res,
                                &out->diag);
    out->seconds = now_s() - t0;
  }
  shlo_diag_format(&out->diag, out->msg, sizeof out->msg);
  out->diag.file = NULL; /* it pointed into the module */
  shlo_executable_free(e);
  shlo_module_free(m);
}

static void free_result(grid_result *r, int n_procs) {
  for (int i = 0; i < n_procs * r->n_res; i++) shlo_value_unref(r->res[i]);
  free(r->res);
  r->res = NULL;
}

static void print_diag_msg(const grid_result *r) {
  print_message("%s: %s\n", shlo_status_name(r->st), r->msg);
}

/* ---- shapes ---- */

static int64_t numel(int rank, const int64_t *d) {
  int64_t n = 1;
  for (int i = 0; i < rank; i++) n *= d[i];
  return n;
}

static void unravel(int64_t i, int rank, const int64_t *d, int64_t *idx) {
  for (int k = rank - 1; k >= 0; k--) {
    idx[k] = i % d[k];
    i /= d[k];
  }
}

static int64_t ravel(const int64_t *idx, int rank, const int64_t *d) {
  int64_t i = 0;
  for (int k = 0; k < rank; k++) i = i * d[k] + idx[k];
  return i;
}

/* ---- the reference: process groups ---- */

enum { CR, CP, CRP, FLAT };

typedef struct groups {
  int ng, gs;
  int ids[64 * 64];
} groups;

/* Split ids 0..N-1, shuffled, into groups of gs. */
static void make_groups(groups *g, int N, int gs) {
  int perm[64 * 64];
  for (int i = 0; i < N; i++) perm[i] = i;
  for (int i = N - 1; i > 0; i--) {
    int j = (int)rnd((uint32_t)i + 1), t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
  }
  g->gs = gs;
  g->ng = N / gs;
  memcpy(g->ids, perm, (size_t)N * sizeof perm[0]);
}

static int pick_divisor(int N) {
  int d[64] = {1}, n = 0;
  for (int i = 1; i <= N; i++)
    if (N % i == 0) d[n++] = i;
  return d[rnd((uint32_t)n)];
}

static void sb_groups(sbuf *b, const groups *g) {
  sb(b, "dense<[");
  for (int i = 0; i < g->ng; i++) {
    sb(b, "%s[", i ? ", " : "");
    for (int j = 0; j < g->gs; j++)
      sb(b, "%s%d", j ? ", " : "", g->ids[i * g->gs + j]);
    sb(b, "]");
  }
  sb(b, "]> : tensor<%dx%dxi64>", g->ng, g->gs);
}

/* Members (process indices, group order) of the group of process k;
 * returns the count, 0 if k is in no group. */
static int ref_group(const groups *g, int strat, int R, int P, int k,
                     int *mem) {
  (void)R;
  int r = k / P, p = k % P;
  int id = strat == CP ? p : strat == FLAT ? k : r;
  for (int i = 0; i < g->ng; i++) {
    const int *ids = g->ids + i * g->gs;
    int in = 0;
    for (int j = 0; j < g->gs; j++) in |= ids[j] == id;
    if (!in) continue;
    int n = 0;
    if (strat == CRP) {
      for (int pp = 0; pp < P; pp++)
        for (int j = 0; j < g->gs; j++) mem[n++] = ids[j] * P + pp;
    } else {
      for (int j = 0; j < g->gs; j++)
        mem[n++] = strat == CR ? ids[j] * P + p
                   : strat == CP ? r * P + ids[j]
                                 : ids[j];
    }
    return n;
  }
  return 0;
}

static const char *channel_attrs(int strat) {
  switch (strat) {
  case CR: return "";
  case FLAT:
    return ", channel_handle = #stablehlo.channel_handle<handle = 1, type = "
           "1>, use_global_device_ids";
  default:
    return ", channel_handle = #stablehlo.channel_handle<handle = 1, type = "
           "1>";
  }
}

/* ---- one random collective case ---- */

enum { ALL_GATHER, ALL_REDUCE, REDUCE_SCATTER, ALL_TO_ALL, PERMUTE,
       BROADCAST, COLL_REDUCE, N_KINDS };
static const char *kind_name[] = {"all_gather", "all_reduce",
                                  "reduce_scatter", "all_to_all",
                                  "collective_permute",
                                  "collective_broadcast", "collective_reduce"};

#define ADD_BODY                                                       \
  "  ^bb0(%a: tensor<i32>, %b: tensor<i32>):\n"                        \
  "    %s = stablehlo.add %a, %b : tensor<i32>\n"                      \
  "    stablehlo.return %s : tensor<i32>\n"
/* max written so the native matcher does not take it: runs the region. */
#define SLOW_MAX_BODY                                                  \
  "  ^bb0(%a: tensor<i32>, %b: tensor<i32>):\n"                        \
  "    %s = stablehlo.maximum %a, %b : tensor<i32>\n"                  \
  "    %n = stablehlo.negate %s : tensor<i32>\n"                       \
  "    %s2 = stablehlo.negate %n : tensor<i32>\n"                      \
  "    stablehlo.return %s2 : tensor<i32>\n"

static void random_case(int R, int P, int kind) {
  int n = R * P;
  int strat;
  switch (kind) {
  case ALL_TO_ALL: case PERMUTE: case BROADCAST:
    strat = rnd(2) ? CP : CR;
    break;
  default:
    strat = (int)rnd(4);
    if (strat == CP) strat = CR;
    break;
  }
  bool slow = rnd(2);
  int N = strat == CP ? P : strat == FLAT ? n : R;
  groups gr;
  make_groups(&gr, N, pick_divisor(N));
  if (kind == BROADCAST && rnd(2) && gr.ng > 1) gr.ng--; /* uncovered ids */
  int64_t pairs[64][2];
  int n_pairs = 0;
  if (kind == PERMUTE) {
    groups perm;
    make_groups(&perm, N, N);
    for (int i = 0; i < N; i++)
      if (rnd(4)) {
        pairs[n_pairs][0] = i;
        pairs[n_pairs][1] = perm.ids[i];
        n_pairs++;
      }
  }
  /* G: the group size every process sees. */
  int mem[64 * 64];
  int G = ref_group(&gr, strat, R, P, 0, mem);
  if (kind == PERMUTE) G = N;
  int rank = 1 + (int)rnd(3);
  int64_t dims[4], rdims[4];
  for (int i = 0; i < rank; i++) dims[i] = 1 + rnd(3);
  int d = (int)rnd((uint32_t)rank), sd = d, cd = (int)rnd((uint32_t)rank);
  if (kind == REDUCE_SCATTER) dims[d] *= G;
  if (kind == ALL_TO_ALL) dims[sd] *= G;
  memcpy(rdims, dims, sizeof dims);
  if (kind == ALL_GATHER) rdims[d] *= G;
  if (kind == REDUCE_SCATTER) rdims[d] /= G;
  if (kind == ALL_TO_ALL) {
    rdims[sd] /= G;
    rdims[cd] *= G;
  }
  int64_t in_n = numel(rank, dims), out_n = numel(rank, rdims);

  sbuf b = {0};
  sb(&b, "module @t attributes {mhlo.num_replicas = %d : i64, "
         "mhlo.num_partitions = %d : i64} {\n", R, P);
  sb(&b, "func.func @main(%%x: ");
  sb_type(&b, rank, dims, "i32");
  sb(&b, ") -> ");
  sb_type(&b, rank, rdims, "i32");
  sb(&b, " {\n  %%r = \"stablehlo.%s\"(%%x) ", kind_name[kind]);
  if (kind == ALL_REDUCE || kind == REDUCE_SCATTER || kind == COLL_REDUCE)
    sb(&b, "({\n%s}) ", slow ? SLOW_MAX_BODY : ADD_BODY);
  sb(&b, "{");
  if (kind == PERMUTE) {
    sb(&b, "source_target_pairs = dense<[");
    for (int i = 0; i < n_pairs; i++)
      sb(&b, "%s[%lld, %lld]", i ? ", " : "", (long long)pairs[i][0],
         (long long)pairs[i][1]);
    sb(&b, "]> : tensor<%dx2xi64>", n_pairs);
  } else {
    sb(&b, "replica_groups = ");
    sb_groups(&b, &gr);
  }
  sb(&b, "%s", channel_attrs(strat));
  if (kind == ALL_GATHER) sb(&b, ", all_gather_dim = %d : i64", d);
  if (kind == REDUCE_SCATTER) sb(&b, ", scatter_dimension = %d : i64", d);
  if (kind == ALL_TO_ALL)
    sb(&b, ", split_dimension = %d : i64, concat_dimension = %d : i64, "
           "split_count = %d : i64", sd, cd, G);
  sb(&b, "} : (");
  sb_type(&b, rank, dims, "i32");
  sb(&b, ") -> ");
  sb_type(&b, rank, rdims, "i32");
  sb(&b, "\n  return %%r : ");
  sb_type(&b, rank, rdims, "i32");
  sb(&b, "\n}\n}\n");

  shlo_value **args = calloc((size_t)n, sizeof *args);
  assert_non_null(args);
  for (int k = 0; k < n; k++) {
    args[k] = shlo_tensor_new(SHLO_SI32, rank, dims);
    for (int64_t i = 0; i < in_n; i++)
      ((int32_t *)args[k]->data)[i] = (int32_t)rnd(201) - 100;
  }
  grid_result res;
  run_grid(b.p, rnd(2) ? 0 : R, rnd(2) ? 0 : P, args, 1, 30, NULL, NULL,
           &res);
  if (res.st) {
    print_message("%s\n", b.p);
    print_diag_msg(&res);
  }
  assert_int_equal(res.st, SHLO_OK);
  assert_int_equal(res.n_res, 1);

  /* The sequential reference, process by process. */
  int32_t *want = malloc((size_t)out_n * sizeof *want + 4);
  for (int k = 0; k < n; k++) {
    int gn = ref_group(&gr, strat, R, P, k, mem), pos = 0;
    while (pos < gn && mem[pos] != k) pos++;
    int64_t idx[4], src[4];
    const int32_t *x[64 * 64];
    for (int g = 0; g < gn; g++) x[g] = args[mem[g]]->data;
    for (int64_t e = 0; e < out_n; e++) {
      unravel(e, rank, rdims, idx);
      memcpy(src, idx, sizeof idx);
      int32_t v = 0;
      switch (kind) {
      case ALL_GATHER:
        src[d] = idx[d] % dims[d];
        v = x[idx[d] / dims[d]][ravel(src, rank, dims)];
        break;
      case ALL_REDUCE: case COLL_REDUCE: case REDUCE_SCATTER: {
        if (kind == COLL_REDUCE && pos != 0) break;
        if (kind == REDUCE_SCATTER) src[d] += pos * rdims[d];
        int64_t at = ravel(src, rank, dims);
        v = x[0][at];
        for (int g = 1; g < gn; g++)
          v = slow ? (v > x[g][at] ? v : x[g][at])
                   : (int32_t)((uint32_t)v + (uint32_t)x[g][at]);
        break;
      }
      case ALL_TO_ALL: {
        int64_t box_c = sd == cd ? dims[sd] / G : dims[cd];
        int sender = (int)(idx[cd] / box_c);
        src[cd] = idx[cd] % box_c;
        src[sd] = pos * (dims[sd] / G) + src[sd];
        v = x[sender][ravel(src, rank, dims)];
        break;
      }
      case PERMUTE: {
        int id = strat == CP ? k % P : k / P;
        for (int i = 0; i < n_pairs; i++)
          if (pairs[i][1] == id) {
            int s = (int)pairs[i][0];
            int from = strat == CP ? (k / P) * P + s : s * P + k % P;
            v = ((int32_t *)args[from]->data)[e];
          }
        break;
      }
      case BROADCAST:
        if (gn) v = x[0][e];
        break;
      }
      want[e] = v;
    }
    shlo_value *got = res.res[k];
    if (memcmp(got->data, want, (size_t)out_n * sizeof *want)) {
      print_message("%s: process %d differs\n%s\n", kind_name[kind], k, b.p);
      fail();
    }
  }
  free(want);
  free_result(&res, n);
  for (int k = 0; k < n; k++) shlo_value_unref(args[k]);
  free(args);
  free(b.p);
}

static const int grids[][2] = {{1, 1}, {4, 1}, {1, 4}, {2, 4}, {8, 8}};

static void test_collectives_random(void **state) {
  (void)state;
  int before = thread_count();
  for (size_t gi = 0; gi < sizeof grids / sizeof grids[0]; gi++)
    for (int kind = 0; kind < N_KINDS; kind++)
      for (int rep = 0; rep < 3; rep++)
        random_case(grids[gi][0], grids[gi][1], kind);
  assert_int_equal(thread_count(), before);
}

/* ---- ids, feeds, send/recv ---- */

static void test_ids_and_feeds(void **state) {
  (void)state;
  const char *text =
      "module @t attributes {mhlo.num_replicas = 2 : i64, "
      "mhlo.num_partitions = 3 : i64} {\n"
      "func.func @main(%t: !stablehlo.token) -> (tensor<ui32>, tensor<ui32>, "
      "tensor<2xi32>) {\n"
      "  %r = stablehlo.replica_id : tensor<ui32>\n"
      "  %p = stablehlo.partition_id : tensor<ui32>\n"
      "  %v:2 = \"stablehlo.infeed\"(%t) : (!stablehlo.token) -> "
      "(tensor<2xi32>, !stablehlo.token)\n"
      "  %o = \"stablehlo.outfeed\"(%v#0, %v#1) : (tensor<2xi32>, "
      "!stablehlo.token) -> !stablehlo.token\n"
      "  return %r, %p, %v#0 : tensor<ui32>, tensor<ui32>, tensor<2xi32>\n"
      "}\n}\n";
  shlo_module *m;
  shlo_executable *e;
  shlo_diag d;
  assert_int_equal(shlo_parse_module(text, strlen(text), "t", &m, &d), 0);
  assert_int_equal(shlo_compile(m, NULL, &e, &d), 0);
  shlo_feed *in[6], *out[6];
  shlo_value *args[6];
  for (int k = 0; k < 6; k++) {
    in[k] = shlo_feed_new();
    out[k] = shlo_feed_new();
    args[k] = shlo_token_new();
    int64_t two = 2;
    shlo_value *v = shlo_tensor_new(SHLO_SI32, 1, &two);
    ((int32_t *)v->data)[0] = k;
    ((int32_t *)v->data)[1] = 10 * k;
    assert_int_equal(shlo_feed_push(in[k], v), 0);
    shlo_value_unref(v);
  }
  shlo_grid_opts o = {.infeed = in, .outfeed = out};
  shlo_value **res;
  int n_res;
  assert_int_equal(shlo_execute_grid(e, &o, args, 1, &res, &n_res, &d), 0);
  assert_int_equal(n_res, 3);
  for (int k = 0; k < 6; k++) {
    assert_int_equal(*(uint32_t *)res[3 * k]->data, k / 3);
    assert_int_equal(*(uint32_t *)res[3 * k + 1]->data, k % 3);
    assert_int_equal(((int32_t *)res[3 * k + 2]->data)[1], 10 * k);
    shlo_value *v;
    assert_int_equal(shlo_feed_pop(out[k], 0, &v), SHLO_OK);
    assert_int_equal(((int32_t *)v->data)[0], k);
    shlo_value_unref(v);
    assert_true(shlo_feed_closed(out[k]));
    assert_int_equal(shlo_feed_pop(out[k], 0, &v), SHLO_EINPUT);
    for (int i = 0; i < 3; i++) shlo_value_unref(res[3 * k + i]);
    shlo_feed_free(in[k]);
    shlo_feed_free(out[k]);
    shlo_value_unref(args[k]);
  }
  free(res);
  shlo_executable_free(e);
  shlo_module_free(m);
}

/* An infeed fed by another thread while the program waits for it. */
typedef struct feeder {
  shlo_feed *q;
  double delay;
} feeder;

static void *feed_later(void *arg) {
  feeder *f = arg;
  usleep((useconds_t)(f->delay * 1e6));
  shlo_value *v = shlo_tensor_new(SHLO_SI32, 0, NULL);
  *(int32_t *)v->data = 42;
  shlo_feed_push(f->q, v);
  shlo_value_unref(v);
  return NULL;
}

static const char *infeed_prog =
    "func.func @main(%t: !stablehlo.token) -> tensor<i32> {\n"
    "  %v:2 = \"stablehlo.infeed\"(%t) : (!stablehlo.token) -> "
    "(tensor<i32>, !stablehlo.token)\n"
    "  return %v#0 : tensor<i32>\n"
    "}\n";

static void test_infeed_streaming(void **state) {
  (void)state;
  shlo_feed *q = shlo_feed_new();
  feeder f = {q, 0.05};
  pthread_t th;
  pthread_create(&th, NULL, feed_later, &f);
  shlo_value *tok = shlo_token_new();
  grid_result r;
  run_grid(infeed_prog, 1, 1, &tok, 1, 10, &q, NULL, &r);
  pthread_join(th, NULL);
  if (r.st) print_diag_msg(&r);
  assert_int_equal(r.st, SHLO_OK);
  assert_int_equal(*(int32_t *)r.res[0]->data, 42);
  free_result(&r, 1);
  shlo_value_unref(tok);
  shlo_feed_free(q);
}

/* A 2-replica program on %x : tensor<4xi32> whose stablehlo.if takes its
 * first branch on replica 0 only: the text before the first branch, and
 * after the second.  Between them, branches returning tensor<4xi32>. */
#define IF_REPLICA0_HEAD                                               \
  "module @t attributes {mhlo.num_replicas = 2 : i64} {\n"             \
  "func.func @main(%x: tensor<4xi32>) -> tensor<4xi32> {\n"            \
  "  %id = stablehlo.replica_id : tensor<ui32>\n"                      \
  "  %z = stablehlo.constant dense<0> : tensor<ui32>\n"                \
  "  %c = stablehlo.compare EQ, %id, %z : (tensor<ui32>, tensor<ui32>) -> " \
  "tensor<i1>\n"                                                       \
  "  %r = \"stablehlo.if\"(%c) ({\n"
#define IF_REPLICA0_TAIL                                               \
  "  }) : (tensor<i1>) -> tensor<4xi32>\n"                             \
  "  return %r : tensor<4xi32>\n"                                      \
  "}\n}\n"
/* A branch that all-reduces %x over both replicas and returns the sum. */
#define ALL_REDUCE_BRANCH                                              \
  "    %s = \"stablehlo.all_reduce\"(%x) ({\n" ADD_BODY                \
  "    }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : "      \
  "(tensor<4xi32>) -> tensor<4xi32>\n"                                 \
  "    stablehlo.return %s : tensor<4xi32>\n"

static void test_send_recv(void **state) {
  (void)state;
  /* Replica 0 sends x + 1 to replica 1 on channel 5; replica 1 sends back
   * on channel 6; both return what they received. */
  const char *text =
      "module @t attributes {mhlo.num_replicas = 2 : i64} {\n"
      "func.func @main(%x: tensor<3xi32>, %t: !stablehlo.token) -> "
      "tensor<3xi32> {\n"
      "  %id = stablehlo.replica_id : tensor<ui32>\n"
      "  %z = stablehlo.constant dense<0> : tensor<ui32>\n"
      "  %c = stablehlo.compare EQ, %id, %z : (tensor<ui32>, tensor<ui32>) -> "
      "tensor<i1>\n"
      "  %r = \"stablehlo.if\"(%c) ({\n"
      "    %s = \"stablehlo.send\"(%x, %t) {channel_handle = "
      "#stablehlo.channel_handle<handle = 5, type = 1>} : (tensor<3xi32>, "
      "!stablehlo.token) -> !stablehlo.token\n"
      "    %v:2 = \"stablehlo.recv\"(%s) {channel_handle = "
      "#stablehlo.channel_handle<handle = 6, type = 1>} : (!stablehlo.token) "
      "-> (tensor<3xi32>, !stablehlo.token)\n"
      "    stablehlo.return %v#0 : tensor<3xi32>\n"
      "  }, {\n"
      "    %v:2 = \"stablehlo.recv\"(%t) {channel_handle = "
      "#stablehlo.channel_handle<handle = 5, type = 1>} : (!stablehlo.token) "
      "-> (tensor<3xi32>, !stablehlo.token)\n"
      "    %w = stablehlo.add %v#0, %x : tensor<3xi32>\n"
      "    %s = \"stablehlo.send\"(%w, %v#1) {channel_handle = "
      "#stablehlo.channel_handle<handle = 6, type = 1>} : (tensor<3xi32>, "
      "!stablehlo.token) -> !stablehlo.token\n"
      "    %j = stablehlo.after_all %s, %v#1 : !stablehlo.token\n"
      "    stablehlo.return %v#0 : tensor<3xi32>\n"
      "  }) : (tensor<i1>) -> tensor<3xi32>\n"
      "  return %r : tensor<3xi32>\n"
      "}\n}\n";
  int64_t three = 3;
  shlo_value *args[4];
  for (int k = 0; k < 2; k++) {
    args[2 * k] = shlo_tensor_new(SHLO_SI32, 1, &three);
    for (int i = 0; i < 3; i++)
      ((int32_t *)args[2 * k]->data)[i] = 100 * (k + 1) + i;
    args[2 * k + 1] = shlo_token_new();
  }
  grid_result r;
  run_grid(text, 0, 0, args, 2, 10, NULL, NULL, &r);
  if (r.st) print_diag_msg(&r);
  assert_int_equal(r.st, SHLO_OK);
  for (int i = 0; i < 3; i++) {
    assert_int_equal(((int32_t *)r.res[1]->data)[i], 100 + i);
    assert_int_equal(((int32_t *)r.res[0]->data)[i], 300 + 2 * i);
  }
  free_result(&r, 2);
  for (int i = 0; i < 4; i++) shlo_value_unref(args[i]);
}

/* ---- failures: error, quickly, no thread left ---- */

static const char *all_reduce_2(const char *groups, const char *extra) {
  static char buf[4096];
  snprintf(buf, sizeof buf,
           "module @t attributes {mhlo.num_replicas = 2 : i64} {\n"
           "func.func @main(%%x: tensor<4xi32>) -> tensor<4xi32> {\n"
           "%s"
           "  %%r = \"stablehlo.all_reduce\"(%%x) ({\n%s"
           "  }) {replica_groups = %s} : (tensor<4xi32>) -> tensor<4xi32>\n"
           "  return %%r : tensor<4xi32>\n"
           "}\n}\n",
           extra, ADD_BODY, groups);
  return buf;
}

/* The thread count once it is `want`, or after 2 s: a thread that has
 * finished its work (a test's canceller that just set its flag) may take
 * a moment to exit, while a leaked one stays. */
static int threads_settled(int want) {
  double end = now_s() + 2.0;
  int n;
  while ((n = thread_count()) != want && now_s() < end) usleep(1000);
  return n;
}

/* Threads expected once a failing run returns (-1: as many as before). */
static int threads_after = -1;

static void expect_failure(const char *text, int R, int P, int n_args,
                           double timeout, shlo_feed **infeed,
                           shlo_cancel *cancel, shlo_status want,
                           const char *needle, double max_s) {
  int before = threads_after >= 0 ? threads_after : thread_count();
  int n = R * P;
  shlo_value **args = calloc((size_t)(n * n_args) + 1, sizeof *args);
  int64_t four = 4;
  for (int i = 0; i < n * n_args; i++) args[i] = shlo_tensor_new(SHLO_SI32, 1, &four);
  grid_result r;
  double t0 = now_s();
  run_grid(text, R, P, args, n_args, timeout, infeed, cancel, &r);
  double took = now_s() - t0;
  const char *msg = r.msg;
  print_message("  -> %s (%.3f s): %s\n", shlo_status_name(r.st), took, msg);
  assert_int_equal(r.st, want);
  assert_non_null(strstr(msg, needle));
  assert_true(took < max_s);
  assert_null(r.res);
  assert_int_equal(threads_settled(before), before);
  for (int i = 0; i < n * n_args; i++) shlo_value_unref(args[i]);
  free(args);
}

static void test_missing_peer(void **state) {
  (void)state;
  /* Replica 1 skips the all_reduce: caught when it ends, no deadline
   * needed, and also with a short deadline. */
  const char *text =
      IF_REPLICA0_HEAD
      ALL_REDUCE_BRANCH
      "  }, {\n"
      "    stablehlo.return %x : tensor<4xi32>\n"
      IF_REPLICA0_TAIL;
  expect_failure(text, 2, 1, 1, 0, NULL, NULL, SHLO_ERUNTIME,
                 "stablehlo.all_reduce", 2.0);
  expect_failure(text, 2, 1, 1, 0.5, NULL, NULL, SHLO_ERUNTIME,
                 "process (1, 0)", 1.0);
  /* The peer is alive but stuck on an infeed nobody feeds: the deadline
   * ends it, naming the waiting collective or the infeed. */
  const char *stuck =
      IF_REPLICA0_HEAD
      ALL_REDUCE_BRANCH
      "  }, {\n"
      "    %t = stablehlo.after_all : !stablehlo.token\n"
      "    %v:2 = \"stablehlo.infeed\"(%t) : (!stablehlo.token) -> "
      "(tensor<4xi32>, !stablehlo.token)\n"
      "    stablehlo.return %v#0 : tensor<4xi32>\n"
      IF_REPLICA0_TAIL;
  shlo_feed *q[2] = {shlo_feed_new(), shlo_feed_new()};
  expect_failure(stuck, 2, 1, 1, 0.5, q, NULL, SHLO_ETIMEOUT, "process (", 1.5);
  shlo_feed_free(q[0]);
  shlo_feed_free(q[1]);
}

static void test_bad_groups(void **state) {
  (void)state;
  /* An id outside the grid: ids must run 0..n-1 (all_reduce C2). */
  expect_failure(all_reduce_2("dense<[[0, 5]]> : tensor<1x2xi64>", ""), 2, 1,
                 1, 0.5, NULL, NULL, SHLO_EVERIFY, "replica", 1.0);
  /* Groups that leave process 1 out. */
  expect_failure(all_reduce_2("dense<[[0]]> : tensor<1x1xi64>", ""), 2, 1, 1,
                 0.5, NULL, NULL, SHLO_ERUNTIME, "process (1, 0)", 1.0);
  /* A duplicate id: refused when compiling. */
  expect_failure(all_reduce_2("dense<[[0, 0]]> : tensor<1x2xi64>", ""), 2, 1,
                 1, 0.5, NULL, NULL, SHLO_EVERIFY, "more than once", 1.0);
  /* Shapes that differ across processes (MPMD through run_parallel). */
  const char *mismatch =
      "func.func @f(%x: tensor<2xi32>) -> tensor<2xi32> {\n"
      "  %r = \"stablehlo.all_gather\"(%x) {all_gather_dim = 0 : i64, "
      "replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2xi32>) "
      "-> tensor<4xi32>\n"
      "  return %x : tensor<2xi32>\n"
      "}\n"
      "func.func @g(%x: tensor<3xi32>) -> tensor<3xi32> {\n"
      "  %r = \"stablehlo.all_gather\"(%x) {all_gather_dim = 0 : i64, "
      "replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<3xi32>) "
      "-> tensor<6xi32>\n"
      "  return %x : tensor<3xi32>\n"
      "}\n"
      "func.func @main() {\n"
      "  %a = stablehlo.constant dense<1> : tensor<2xi32>\n"
      "  %b = stablehlo.constant dense<2> : tensor<3xi32>\n"
      "  %r:2 = \"interpreter.run_parallel\"(%a, %b) {programs = [[@f], "
      "[@g]]} : (tensor<2xi32>, tensor<3xi32>) -> (tensor<2xi32>, "
      "tensor<3xi32>)\n"
      "  func.return\n"
      "}\n";
  expect_failure(mismatch, 1, 1, 0, 0.5, NULL, NULL, SHLO_ERUNTIME,
                 "tensor<2xi32> in process (0, 0) but tensor<3xi32>", 1.0);
}

static void *cancel_later(void *arg) {
  usleep(100000);
  shlo_cancel_set(arg, 1);
  return NULL;
}

static void test_infeed_never_fed(void **state) {
  (void)state;
  shlo_feed *q[4];
  for (int k = 0; k < 4; k++) q[k] = shlo_feed_new();
  const char *text =
      "func.func @main(%x: tensor<4xi32>) -> tensor<4xi32> {\n"
      "  %t = stablehlo.after_all : !stablehlo.token\n"
      "  %v:2 = \"stablehlo.infeed\"(%t) : (!stablehlo.token) -> "
      "(tensor<4xi32>, !stablehlo.token)\n"
      "  return %v#0 : tensor<4xi32>\n"
      "}\n";
  expect_failure(text, 2, 2, 1, 0.5, q, NULL, SHLO_ETIMEOUT,
                 "stablehlo.infeed", 1.5);
  /* A closed empty queue fails at once. */
  for (int k = 0; k < 4; k++) shlo_feed_close(q[k]);
  expect_failure(text, 2, 2, 1, 0, q, NULL, SHLO_ERUNTIME, "closed", 0.5);
  /* No deadline, cancelled from outside after 0.1 s. */
  for (int k = 0; k < 4; k++) {
    shlo_feed_free(q[k]);
    q[k] = shlo_feed_new();
  }
  shlo_cancel cancel = SHLO_CANCEL_INIT;
  pthread_t th;
  threads_after = thread_count();
  pthread_create(&th, NULL, cancel_later, &cancel);
  expect_failure(text, 2, 2, 1, 0, q, &cancel, SHLO_ECANCELED,
                 "waits at stablehlo.infeed", 1.0);
  threads_after = -1;
  pthread_join(th, NULL);
  for (int k = 0; k < 4; k++) shlo_feed_free(q[k]);
}

static void test_deadlock(void **state) {
  (void)state;
  /* Both replicas receive first: nobody can send.  Found without a
   * deadline. */
  const char *text =
      "func.func @main(%x: tensor<4xi32>) -> tensor<4xi32> {\n"
      "  %t = stablehlo.after_all : !stablehlo.token\n"
      "  %v:2 = \"stablehlo.recv\"(%t) {channel_handle = "
      "#stablehlo.channel_handle<handle = 1, type = 1>} : (!stablehlo.token) "
      "-> (tensor<4xi32>, !stablehlo.token)\n"
      "  %s = \"stablehlo.send\"(%x, %v#1) {channel_handle = "
      "#stablehlo.channel_handle<handle = 1, type = 1>} : (tensor<4xi32>, "
      "!stablehlo.token) -> !stablehlo.token\n"
      "  return %v#0 : tensor<4xi32>\n"
      "}\n";
  expect_failure(text, 2, 1, 1, 0, NULL, NULL, SHLO_ERUNTIME, "deadlock",
                 1.0);
  /* Two collectives in a different order on each replica: their shapes
   * differ, so the mismatch is reported. */
  const char *order =
      IF_REPLICA0_HEAD
      "    %g = \"stablehlo.all_gather\"(%x) {all_gather_dim = 0 : i64, "
      "replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<4xi32>) "
      "-> tensor<8xi32>\n"
      "    stablehlo.return %x : tensor<4xi32>\n"
      "  }, {\n"
      ALL_REDUCE_BRANCH
      IF_REPLICA0_TAIL;
  expect_failure(order, 2, 1, 1, 0, NULL, NULL, SHLO_ERUNTIME,
                 "in the same group", 1.0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_ids_and_feeds),
      cmocka_unit_test(test_infeed_streaming),
      cmocka_unit_test(test_send_recv),
      cmocka_unit_test(test_missing_peer),
      cmocka_unit_test(test_bad_groups),
      cmocka_unit_test(test_infeed_never_fed),
      cmocka_unit_test(test_deadlock),
      cmocka_unit_test(test_collectives_random),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
