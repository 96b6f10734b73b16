/* SPDX-License-Identifier: Apache-2.0 */
/* OpenTelemetry export of execution traces (docs/observability.md): with
 * otlp-endpoint set, every recorded trace also leaves as OTLP/JSON spans
 * (an ExportTraceServiceRequest), to a file (`file:PATH`, one request per
 * line) or POSTed to an OTLP/HTTP collector (`http://HOST:PORT/PATH`,
 * usually /v1/traces).  The server's root span is a SERVER span in the
 * caller's W3C trace (traceparent), under the caller's span; stages and
 * steps are its children; every span carries the request id and team.
 * One thread sends; a full queue drops traces (counted), so a slow
 * collector never holds an execution back. */
#ifndef SHLO_SRV_OTLP_H
#define SHLO_SRV_OTLP_H

#include "shlo/trace.h"

struct srv_server;
struct strbuf;
struct srv_trace_ctx;

/* Start the exporter the config names (none when otlp-endpoint is ""):
 * 0, or -1 after a message on stderr (a malformed endpoint, a file that
 * does not open, no thread). */
int srv_otlp_start(struct srv_server *s);
/* Stop: what is queued is sent (a collector that does not answer holds
 * each send at most 5 s), then the thread ends.  After the loop ended. */
void srv_otlp_stop(struct srv_server *s);

/* What the spans say about their request. */
typedef struct srv_otlp_about {
  const char *key;          /* the trace's id at GET /v1/traces/{id} */
  const char *request_id, *team, *route, *module;
  const struct srv_trace_ctx *ctx; /* the W3C trace, or NULL: a new one */
  int status;
} srv_otlp_about;

/* Queue trace t (sealed; read now, not kept) for export; any thread. */
void srv_otlp_export(struct srv_server *s, shlo_trace *t,
                     const srv_otlp_about *a);
/* The exporter's figures for /metrics (nothing when off). */
void srv_otlp_metrics(struct srv_server *s, struct strbuf *b);

#endif
