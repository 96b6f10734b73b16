/* SPDX-License-Identifier: Apache-2.0 */
/* Per-module series of /metrics (docs/observability.md): requests by
 * status class, errors by kind and execution-time histograms, labelled
 * module="<registered name>" or module="sha256:<12 hex digits>".  The
 * cardinality is bounded: the metrics-max-modules modules with the most
 * requests get series of their own, every other module's figures are
 * summed in module="other".  Loop thread only. */
#ifndef SHLO_SRV_MODMETRICS_H
#define SHLO_SRV_MODMETRICS_H

#include <stdbool.h>

struct srv_server;
struct strbuf;

typedef struct srv_modmetrics srv_modmetrics;

/* A finished request that named module (its "sha256:..." id): status its
 * HTTP status (0: the client went away), err_kind its error kind or -1,
 * exec_s its run time when it executed (< 0: it did not). */
void srv_modmetrics_add(struct srv_server *s, const char *module, int status,
                        int err_kind, double exec_s);
void srv_modmetrics_put(struct srv_server *s, struct strbuf *b);
/* The same figures as a JSON array for the console: [{"module", "requests",
 * "errors", "p50_ms", "p99_ms"}], the busiest first, "other" last. */
void srv_modmetrics_json(struct srv_server *s, struct strbuf *b);
void srv_modmetrics_free(struct srv_server *s);

#endif
