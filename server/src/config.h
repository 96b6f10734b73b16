/* SPDX-License-Identifier: Apache-2.0 */
/* shlo-server configuration: one table of options (name, type, bounds,
 * default, help), each settable as a command-line flag `--name VALUE`, as
 * a config-file line `name VALUE` and as an environment variable.
 * Limits are options like any other. */
#ifndef SHLO_SRV_CONFIG_H
#define SHLO_SRV_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

typedef struct srv_config {
  char *host;
  int64_t port;
  int64_t binary_port;       /* 0 = off */
  int64_t threads;
  int64_t worker_spin_us;
  char *config_file;
  char *tokens_file;
  char *log;                 /* "stderr", "off" or a file path */
  char *log_format;          /* "text" or "json" (docs/observability.md) */
  char *otlp_endpoint;       /* "", file:PATH or http://HOST:PORT/PATH */
  char *store;               /* module store directory; "" = none */
  char *tls_cert, *tls_key;  /* PEM files: HTTPS when both are set */
  char *grid_backend;        /* "threads" or "mpi" */
  char *audit_log;           /* the same, for the audit log (audit.c);
                                strings stay before the limits */
  char *model_repository;    /* repository.h; "" = none */
  char *model_control_mode;  /* none, poll or explicit */
  /* limits */
  int64_t max_body_bytes;
  int64_t max_tensor_elements;
  int64_t max_tensor_bytes;
  int64_t max_inputs;
  int64_t max_exec_memory;
  int64_t default_timeout_ms;
  int64_t max_timeout_ms;
  int64_t max_queue;
  int64_t cache_bytes;
  int64_t max_connections;
  int64_t max_connections_per_ip; /* 0 = off */
  int64_t request_timeout_s;      /* headers + body, total; 0 = off */
  int64_t connection_timeout_s;
  int64_t max_client_jobs;        /* per token (else address); 0 = off */
  int64_t max_client_running;     /* of those, running at once; 0 = off */
  int64_t short_lane_workers;
  int64_t inline_max_work;   /* 0 = every execution goes to a worker */
  int64_t shutdown_grace_ms;
  int64_t max_program_ops;    /* 0 = no limit */
  int64_t compile_timeout_ms; /* 0 = no limit */
  int64_t max_nesting_depth;  /* shlo_compile_limits.max_depth */
  int64_t mpi_min_procs;
  int64_t insecure;          /* 1: serve beyond loopback without tokens */
  /* per-team quota defaults (teams.h; 0 = none) */
  int64_t team_max_running;
  int64_t team_max_queued;
  int64_t team_rate;
  int64_t team_burst;
  int64_t team_cache_bytes;  /* 0 = an equal share of cache-bytes */
  int64_t team_exec_memory;
  int64_t max_executions;        /* streaming executions (executions.c) */
  int64_t max_client_executions;
  int64_t execution_keep_s;
  int64_t execution_idle_ms;
  int64_t stream_queue_bytes;
  int64_t stream_queue_values;
  int64_t execution_workers;       /* threads of asynchronous executions */
  int64_t execution_start_timeout_s; /* a queued execution's deadline */
  int64_t stream_idle_timeout_s;   /* gap between an upload's values */
  int64_t console;            /* serve the web console under /console/ */
  /* the engine's default context (shlo/context.h), set once at start */
  int64_t engine_threads;     /* 0 = one per core */
  int64_t no_fusion;
  int64_t conv_general;
  int64_t fixed_threads;
  int64_t mpi_peer_timeout;   /* seconds */
  /* memory held for connections (listen.c, binary.c) */
  int64_t max_pending_body_bytes; /* partly received bodies and frames */
  int64_t frame_timeout_s;        /* one binary frame, total; 0 = off */
  int64_t max_json_answer_bytes;  /* an answer's JSON text; 0 = off */
  /* observability (traces.c, docs/observability.md) */
  int64_t trace_sample_ppm;  /* trace-sample-rate, parts per million */
  int64_t trace_keep, trace_keep_bytes, trace_keep_s, trace_max_spans;
  int64_t metrics_max_modules; /* per-module series (modmetrics.c) */
  int64_t repository_poll_secs; /* model-control-mode poll's period */
} srv_config;

/* Fill every option with its default. */
void srv_config_defaults(srv_config *c);
/* Apply the config file (--config FILE, else $SHLO_CONFIG), then each
 * option's environment variable (SHLO_PORT, SHLO_TOKENS, ...: --help names
 * them), then the flags: flags > environment > file > defaults.  Returns
 * 0; 1 after printing --help or, for --print-config, the effective
 * configuration as a config file on stdout; -1 after an error message on
 * stderr. */
int srv_config_load(srv_config *c, int argc, char **argv);
void srv_config_free(srv_config *c);
/* Print the effective configuration as config-file lines (for the log). */
void srv_config_print(const srv_config *c, void *file);
/* SIGHUP: `next` is the configuration loaded again (srv_config_load with
 * the same arguments).  Copies every reloadable option that changed into
 * cur and logs it on `log` (a FILE *), logs the changed ones that need a
 * restart and keeps their values.  Returns how many options changed. */
int srv_config_reload(srv_config *cur, const srv_config *next, void *log);

#endif
