/* SPDX-License-Identifier: Apache-2.0 */
/* shlo-server: the StableHLO execution service.  main wires the modules
 * together: config, auth, cache, workers, HTTP on one libuv loop, signals
 * for a graceful stop (SIGINT/SIGTERM) and a reload (SIGHUP, service.c).
 *
 * Exit status: 0 after a clean stop; 2 when the configuration cannot be
 * served (a bad option, or a file it names -- config, tokens, TLS, log,
 * audit log, store directory -- missing, empty, unreadable or malformed,
 * or an address it cannot listen on), always after one line on stderr
 * naming the file; 1 for a failure while serving (out of memory, threads
 * that would not start, a loop that did not close clean). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shlo/context.h"
#include "server.h"
#include "batch.h"
#include "history.h"
#include "modmetrics.h"
#include "otlp.h"
#include "traces.h"
#include "repository.h"
#include "store.h"
#include "shlo/grid_mpi.h"

static void on_signal(uv_signal_t *h, int signum) {
  srv_server *s = h->data;
  if (s->draining) {
    fprintf(stderr, "shlo-server: signal %d again: canceling executions\n",
            signum);
    s->cfg.shutdown_grace_ms = 0;
    return;
  }
  srv_service_notify("STOPPING=1");
  srv_begin_shutdown(s);
}

/* grid-backend mpi: start MPI in every rank.  Ranks other than 0 hold no
 * socket: they run their share of rank 0's grids until it stops, and
 * *exit_code says how they end (returns true: main returns it). */
static bool mpi_start(srv_server *s, int *exit_code) {
  if (!strcmp(s->cfg.grid_backend, "threads")) return false;
  if (strcmp(s->cfg.grid_backend, "mpi")) {
    fprintf(stderr, "shlo-server: grid-backend must be threads or mpi, not "
                    "'%s'\n", s->cfg.grid_backend);
    *exit_code = 2;
    return true;
  }
  shlo_diag d;
  shlo_diag_clear(&d);
  if (shlo_mpi_start(&d)) {
    fprintf(stderr, "shlo-server: grid-backend mpi: %s\n", d.message);
    *exit_code = 2;
    return true;
  }
  s->mpi = true;
  shlo_mpi_spread_every_grid(false);
  if (shlo_mpi_rank() == 0) return false;
  /* Rank 0 decides when to stop; mpirun's signals reach every rank. */
  signal(SIGINT, SIG_IGN);
  signal(SIGTERM, SIG_IGN);
  shlo_status st = shlo_mpi_follow(&d);
  if (st)
    fprintf(stderr, "shlo-server (MPI rank %d): %s\n", shlo_mpi_rank(),
            d.message);
  *exit_code = st ? 1 : 0;
  shlo_mpi_stop(*exit_code);
  return true;
}

/* An address only this machine reaches: 127.0.0.0/8, ::1, localhost. */
static bool loopback(const char *host) {
  return !strncmp(host, "127.", 4) || !strcmp(host, "::1") ||
         !strcmp(host, "localhost");
}

/* The engine reads no environment: its options (threads, the bug-hunt
 * switches, the MPI peer timeout) come from the server's configuration,
 * whose environment names they keep (SHLO_THREADS, SHLO_NO_FUSION, ...).
 * The default context is made here, before MPI or any worker uses it, so
 * it is sized as configured.  OPENBLAS_CORETYPE, when set, is the user's
 * BLAS core, which the engine then keeps (core/blas_setup.h). */
static int engine_configure(const srv_config *c) {
  shlo_context_options o;
  shlo_context_options_init(&o);
  o.threads = (int)c->engine_threads;
  o.no_fusion = c->no_fusion != 0;
  o.conv_general = c->conv_general != 0;
  o.fixed_threads = c->fixed_threads != 0;
  o.mpi_peer_timeout_s = (double)c->mpi_peer_timeout;
  o.blas_keep_core = getenv("OPENBLAS_CORETYPE") != NULL;
  if (shlo_default_context_configure(&o) != SHLO_OK || !shlo_default_context()) {
    fprintf(stderr, "shlo-server: cannot start the engine's threads\n");
    return -1;
  }
  return 0;
}

int main(int argc, char **argv) {
  static srv_server s;
  int rc = 1;
  s.argc = argc;
  s.argv = argv;
  s.listen_fd = -1;
  srv_config_defaults(&s.cfg);
  int lr = srv_config_load(&s.cfg, argc, argv);
  if (lr) {
    srv_config_free(&s.cfg);
    return lr > 0 ? 0 : 2;
  }
  signal(SIGPIPE, SIG_IGN);
  if (engine_configure(&s.cfg)) {
    srv_config_free(&s.cfg);
    return 1;
  }
  if (mpi_start(&s, &rc)) {
    srv_config_free(&s.cfg);
    return rc;
  }
  s.started_ns = srv_now_ns();
  if (!strcmp(s.cfg.log, "stderr")) s.log = stderr;
  else if (strcmp(s.cfg.log, "off") && !(s.log = fopen(s.cfg.log, "a"))) {
    fprintf(stderr, "shlo-server: log file %s: %s\n", s.cfg.log,
            strerror(errno));
    rc = 2;
    goto out;
  }
  if (s.log && s.log != stderr) setvbuf(s.log, NULL, _IOLBF, 0);
  s.devnull = fopen("/dev/null", "w");
  if (s.cfg.tokens_file[0]) {
    if (srv_auth_load(&s, s.cfg.tokens_file)) {
      rc = 2;
      goto out;
    }
    fprintf(stderr, "shlo-server: auth on: %d bearer token(s) from %s\n",
            s.n_tokens, s.cfg.tokens_file);
  } else if (!loopback(s.cfg.host) && !s.cfg.insecure) {
    fprintf(stderr, "shlo-server: refusing to serve %s without tokens: "
                    "anyone who reaches it could run programs.  Give "
                    "--tokens FILE, or --insecure to serve it open\n",
            s.cfg.host);
    rc = 2;
    goto out;
  } else {
    fprintf(stderr, "shlo-server: auth off (no --tokens): anyone who can "
                    "reach the port may execute programs\n");
  }
  if (srv_audit_open(&s)) {
    rc = 2;
    goto out;
  }
  s.loop = uv_default_loop();
  cache_init(&s.cache, (size_t)s.cfg.cache_bytes);
  if (srv_quota_setup(&s) || srv_traces_start(&s)) {
    fprintf(stderr, "shlo-server: out of memory\n");
    goto out;
  }
  if (srv_otlp_start(&s)) {
    rc = 2;
    goto out;
  }
  /* before the store and the repository: their modules' batching is
   * configured as they load; the worker count comes with the pool */
  if (!(s.batcher = srv_batcher_new(0))) {
    fprintf(stderr, "shlo-server: out of memory\n");
    goto out;
  }
  if (srv_store_start(&s)) {
    rc = 2;
    goto out;
  }
  if (srv_repository_start(&s)) {
    rc = 2;
    goto out;
  }
  if (pool_init(&s.pool, s.loop, (int)s.cfg.threads, (int)s.cfg.max_queue,
                (int)s.cfg.worker_spin_us * 1000, srv_http_drained, &s)) {
    fprintf(stderr, "shlo-server: cannot start worker threads\n");
    goto out;
  }
  pool_set_short_reserved(&s.pool, (int)s.cfg.short_lane_workers);
  /* the workers a long job may take: when all of them wait for batches,
   * no other request can come to join one (batch.h) */
  srv_batcher_set_workers(s.batcher, s.pool.long_max);
  srv_memory_init(s.pool.n_threads);
  uv_signal_init(s.loop, &s.sig_int);
  uv_signal_init(s.loop, &s.sig_term);
  s.sig_int.data = s.sig_term.data = &s;
  uv_signal_start(&s.sig_int, on_signal, SIGINT);
  uv_signal_start(&s.sig_term, on_signal, SIGTERM);
  srv_service_start(&s);
  if (srv_http_start(&s)) {
    pool_stop(&s.pool);
    uv_close((uv_handle_t *)&s.sig_int, NULL);
    uv_close((uv_handle_t *)&s.sig_term, NULL);
    uv_run(s.loop, UV_RUN_DEFAULT);
    srv_service_stop(&s);
    rc = 2; /* a TLS file, the address or the port */
    goto out;
  }
  if (srv_binary_start(&s)) {
    srv_begin_shutdown(&s);
    s.cfg.shutdown_grace_ms = 0;
    rc = 2;
  }
  fprintf(stderr, "shlo-server: listening on %s://%s%s%s:%d/ with %d "
                  "worker(s)\n", s.cfg.tls_cert[0] ? "https" : "http",
          strchr(s.cfg.host, ':') ? "[" : "",
          s.cfg.host, strchr(s.cfg.host, ':') ? "]" : "", s.port,
          s.pool.n_threads);
  fprintf(stderr, "shlo-server: config: ");
  srv_config_print(&s.cfg, stderr);
  srv_service_notify("READY=1\nSTATUS=serving HTTP");
  uv_run(s.loop, UV_RUN_DEFAULT);
  srv_service_stop(&s);
  if (uv_loop_close(s.loop) != 0) rc = 1;
  else if (rc != 2) rc = 0;
  if (rc) fprintf(stderr, "shlo-server: the loop did not close clean\n");
out:
  free(s.bin);
  counts_free(&s.per_ip);
  counts_free(&s.per_client);
  srv_repository_stop(&s); /* its references, before the cache goes */
  cache_destroy(&s.cache);
  srv_store_stop(&s);
  srv_auth_free(&s);
  srv_teams_free(&s.teams);
  srv_audit_close(&s);
  srv_otlp_stop(&s); /* sends what is queued */
  srv_traces_stop(&s);
  srv_modmetrics_free(&s);
  srv_history_free(&s);
  srv_batcher_free(s.batcher); /* the workers are gone */
  if (s.log && s.log != stderr) fclose(s.log);
  if (s.devnull) fclose(s.devnull);
  srv_config_free(&s.cfg);
  if (s.mpi) {
    shlo_mpi_follow_end();
    shlo_mpi_stop(rc ? rc : 1);
  }
  return rc;
}
