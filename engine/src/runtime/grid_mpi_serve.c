/* SPDX-License-Identifier: Apache-2.0 */
/* A server's grids across the ranks (shlo/grid_mpi.h): rank 0 announces
 * each grid it spreads as a job, the followers run their share of it.
 *
 * A job travels as two shares from rank 0 (shlo_mpi_share, which every
 * rank calls at the same point): first its description and arguments,
 * then the program's bytes.  Followers keep the last few compiled
 * programs, so a module executed again is not compiled again.  Every rank
 * then runs shlo_execute_grid with spreading allowed on that thread, so
 * all ranks number the same grids alike (grid_mpi.c's epochs).
 *
 * Built with and without MPI: without it (or with one rank) rank 0's call
 * is a plain shlo_execute_grid and nobody follows. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/strbuf.h"
#include "runtime/grid_net.h"
#include "runtime/grid_wire.h"
#include "shlo/artifact.h"
#include "shlo/grid_mpi.h"
#include "shlo/ir.h"

enum { JOB_RUN = 1, JOB_END = 2 };

/* One grid at a time crosses the ranks. */
static pthread_mutex_t serve_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- rank 0 ---- */

static shlo_status share_buf(strbuf *b) {
  char *data = b->data;
  size_t len = b->len;
  shlo_status st = shlo_mpi_share(&data, &len);
  free(b->data);
  b->data = NULL;
  return st;
}

/* The job's description and arguments. */
static bool write_job(strbuf *b, const char *entry, const shlo_grid_opts *o,
                      shlo_value *const *args, int n_args) {
  int n_procs = o->num_replicas * o->num_partitions;
  shlo__wire_i64(b, JOB_RUN);
  shlo__wire_i64(b, o->num_replicas);
  shlo__wire_i64(b, o->num_partitions);
  shlo__wire_i64(b, o->exec.timeout_s > 0
                        ? (int64_t)(o->exec.timeout_s * 1e6) + 1
                        : 0);
  shlo__wire_i64(b, o->exec.max_bytes);
  shlo__wire_str(b, entry ? entry : "");
  shlo__wire_i64(b, n_args);
  for (int64_t i = 0; i < (int64_t)n_procs * n_args; i++)
    if (!shlo__wire_value(b, args[i])) return false;
  return !b->failed;
}

shlo_status shlo_mpi_execute_grid(const char *program, size_t len,
                                  const char *entry,
                                  const shlo_executable *e,
                                  const shlo_grid_opts *opts,
                                  shlo_value *const *args, int n_args,
                                  shlo_value ***results, int *n_results,
                                  shlo_diag *diag) {
  if (shlo_mpi_size() < 2 || shlo_mpi_rank() != 0)
    return shlo_execute_grid(e, opts, args, n_args, results, n_results, diag);
  *results = NULL;
  if (opts->programs || opts->infeed || opts->outfeed)
    return shlo_diag_set(diag, SHLO_EUNSUPPORTED, NULL, 0, 0,
                         "a grid across MPI ranks takes one program and "
                         "no infeed or outfeed queues");
  if (opts->num_replicas <= 0 || opts->num_partitions <= 0)
    return shlo_diag_set(diag, SHLO_EINPUT, NULL, 0, 0,
                         "a grid across MPI ranks needs its shape given");
  strbuf job = {0};
  if (!write_job(&job, entry, opts, args, n_args)) {
    free(job.data);
    return shlo_diag_set(diag, SHLO_EUNSUPPORTED, NULL, 0, 0,
                         "an argument cannot travel between MPI ranks");
  }
  pthread_mutex_lock(&serve_lock);
  shlo_status st = share_buf(&job);
  char *bytes = (char *)program;
  size_t n = len;
  if (!st) st = shlo_mpi_share(&bytes, &n);
  if (st) {
    pthread_mutex_unlock(&serve_lock);
    return shlo_diag_set(diag, SHLO_ERUNTIME, NULL, 0, 0,
                         "cannot hand the grid to the other MPI ranks%s%s",
                         shlo_mpi_lost_reason() ? ": " : "",
                         shlo_mpi_lost_reason() ? shlo_mpi_lost_reason()
                                                : "");
  }
  shlo__net_spread_here(true);
  st = shlo_execute_grid(e, opts, args, n_args, results, n_results, diag);
  shlo__net_spread_here(false);
  pthread_mutex_unlock(&serve_lock);
  return st;
}

void shlo_mpi_follow_end(void) {
  if (shlo_mpi_size() < 2 || shlo_mpi_rank() != 0) return;
  strbuf job = {0};
  shlo__wire_i64(&job, JOB_END);
  pthread_mutex_lock(&serve_lock);
  share_buf(&job);
  pthread_mutex_unlock(&serve_lock);
}

/* ---- the followers ---- */

#define FOLLOW_PROGRAMS 8

typedef struct followed {
  char *bytes; /* the program as rank 0 sent it */
  size_t len;
  char *entry;
  shlo_module *m;
  shlo_executable *e;
  uint64_t used;
} followed;

static followed programs[FOLLOW_PROGRAMS];
static uint64_t use_clock;

static void followed_free(followed *f) {
  shlo_executable_free(f->e);
  shlo_module_free(f->m);
  free(f->bytes);
  free(f->entry);
  memset(f, 0, sizeof *f);
}

static shlo_status parse_program(const char *bytes, size_t len,
                                 shlo_module **m, shlo_diag *d) {
  if (len >= 4 && !memcmp(bytes, "ML\xefR", 4))
    return shlo_read_artifact(bytes, len, "program", m, NULL, d);
  return shlo_parse_module(bytes, len, "program", m, d);
}

/* The compiled program for (bytes, entry): one kept, else compiled into
 * the least recently used slot.  NULL with d filled on failure. */
static const shlo_executable *follow_compile(const char *bytes, size_t len,
                                             const char *entry,
                                             shlo_diag *d) {
  followed *lru = &programs[0];
  for (int i = 0; i < FOLLOW_PROGRAMS; i++) {
    followed *f = &programs[i];
    if (f->e && f->len == len && !strcmp(f->entry, entry) &&
        !memcmp(f->bytes, bytes, len)) {
      f->used = ++use_clock;
      return f->e;
    }
    if (f->used < lru->used) lru = f;
  }
  followed_free(lru);
  followed f = {malloc(len + 1), len, strdup(entry), NULL, NULL, 0};
  if (!f.bytes || !f.entry) {
    free(f.bytes);
    free(f.entry);
    shlo_diag_set(d, SHLO_ENOMEM, NULL, 0, 0, "out of memory");
    return NULL;
  }
  memcpy(f.bytes, bytes, len);
  f.bytes[len] = 0;
  shlo_compile_opts co = {.entry = *entry ? entry : NULL};
  if (parse_program(f.bytes, len, &f.m, d) ||
      shlo_compile(f.m, &co, &f.e, d)) {
    followed_free(&f);
    return NULL;
  }
  f.used = ++use_clock;
  *lru = f;
  return lru->e;
}

typedef struct follow_job {
  int64_t kind, replicas, partitions, timeout_us, max_bytes, n_args;
  const char *entry;
  shlo_value **args;
  int64_t n_values;
} follow_job;

static void job_free(follow_job *j) {
  for (int64_t i = 0; i < j->n_values; i++) shlo_value_unref(j->args[i]);
  free(j->args);
}

/* Decode a job's description; false when it does not decode. */
static bool read_job(char *data, size_t len, follow_job *j) {
  wire_reader rd = {data, data + len, false};
  memset(j, 0, sizeof *j);
  j->kind = shlo__wire_read_i64(&rd);
  if (j->kind != JOB_RUN) return !rd.bad && j->kind == JOB_END;
  j->replicas = shlo__wire_read_i64(&rd);
  j->partitions = shlo__wire_read_i64(&rd);
  j->timeout_us = shlo__wire_read_i64(&rd);
  j->max_bytes = shlo__wire_read_i64(&rd);
  j->entry = shlo__wire_read_str(&rd);
  j->n_args = shlo__wire_read_i64(&rd);
  if (rd.bad || j->replicas <= 0 || j->partitions <= 0 || j->n_args < 0 ||
      j->replicas * j->partitions > (1 << 20) || j->n_args > (1 << 20))
    return false;
  int64_t n = j->replicas * j->partitions * j->n_args;
  if (n > (int64_t)(len / 8) || !(j->args = calloc((size_t)n + 1, sizeof *j->args)))
    return false;
  for (; j->n_values < n && !rd.bad; j->n_values++)
    if (!(j->args[j->n_values] = shlo__wire_read_value(&rd))) break;
  return !rd.bad && j->n_values == n;
}

/* Run one job's share of the grid; results stay with rank 0. */
static void follow_run(const follow_job *j, const shlo_executable *e) {
  shlo_grid_opts o = {
      .num_replicas = (int)j->replicas,
      .num_partitions = (int)j->partitions,
      .exec = {.timeout_s = (double)j->timeout_us / 1e6,
               .max_bytes = j->max_bytes}};
  shlo_value **res = NULL;
  int n_res = 0;
  shlo_diag d;
  shlo_diag_clear(&d);
  shlo__net_spread_here(true);
  shlo_status st = shlo_execute_grid(e, &o, j->args, (int)j->n_args, &res,
                                     &n_res, &d);
  shlo__net_spread_here(false);
  if (st) return; /* rank 0 reports the grid's failure */
  for (int64_t i = 0; i < j->replicas * j->partitions * n_res; i++)
    shlo_value_unref(res[i]);
  free(res);
}

shlo_status shlo_mpi_follow(shlo_diag *diag) {
  if (shlo_mpi_size() < 2 || shlo_mpi_rank() == 0)
    return shlo_diag_set(diag, SHLO_EINPUT, NULL, 0, 0,
                         "only MPI ranks other than 0 follow");
  shlo_status st = SHLO_OK;
  shlo_diag_clear(diag);
  for (;;) {
    char *data = NULL, *bytes = NULL;
    size_t len = 0, n = 0;
    follow_job j = {0};
    if (shlo_mpi_share(&data, &len)) {
      /* Another follower was lost: rank 0 goes on serving without grids
       * across the ranks, and this rank stays until rank 0 ends. */
      while (shlo_mpi_lost() && shlo__net_peer_alive(0)) {
        struct timespec ts = {0, 200 * 1000 * 1000};
        nanosleep(&ts, NULL);
      }
      st = SHLO_ERUNTIME;
      shlo_diag_set(diag, st, NULL, 0, 0, "rank 0 is gone: %s",
                    shlo_mpi_lost_reason() ? shlo_mpi_lost_reason()
                                           : "MPI failed");
      free(data);
      break;
    }
    bool ok = data && read_job(data, len, &j);
    if (ok && j.kind == JOB_END) {
      free(data);
      break;
    }
    if (ok && shlo_mpi_share(&bytes, &n)) ok = false;
    const shlo_executable *e =
        ok && bytes ? follow_compile(bytes, n, j.entry, diag) : NULL;
    if (e) follow_run(&j, e);
    job_free(&j);
    free(bytes);
    free(data);
    if (!e) {
      /* Without this rank's share the grid cannot run, and the ranks'
       * count of grids would part: give up on the whole job. */
      st = SHLO_ERUNTIME;
      if (!diag->message[0])
        shlo_diag_set(diag, st, NULL, 0, 0,
                      "a grid job from rank 0 does not decode");
      shlo__net_give_up(diag->message);
      break;
    }
  }
  for (int i = 0; i < FOLLOW_PROGRAMS; i++) followed_free(&programs[i]);
  return st;
}
