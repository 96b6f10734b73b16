/* SPDX-License-Identifier: Apache-2.0 */
/* Request identity: the id every HTTP and binary request carries (the
 * client's X-Request-Id when it is sane, else one made here) and the W3C
 * trace context (traceparent) a caller may send, whose trace the server's
 * spans join.  Pure functions but srv_reqid_new (any thread). */
#ifndef SHLO_SRV_REQID_H
#define SHLO_SRV_REQID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* An id: 1..128 bytes of [A-Za-z0-9._:/+=@-], NUL-terminated. */
#define SRV_REQ_ID_MAX 128
#define SRV_REQ_ID_LEN (SRV_REQ_ID_MAX + 1)

/* Whether a client's id (n bytes, not NUL-terminated) may be used as
 * given: the bytes above only, so that it can be written in a log line,
 * a JSON string and a header as it is. */
bool srv_reqid_ok(const char *id, size_t n);
/* Copy a sane client id into out, else make a new one: true when the
 * client's was taken. */
bool srv_reqid_take(char out[SRV_REQ_ID_LEN], const char *client, size_t n);
/* n random lowercase hex digits and a NUL (n + 1 bytes). */
void srv_hex_random(char *out, int n);
/* A new request id: 32 hex digits. */
void srv_reqid_new(char out[SRV_REQ_ID_LEN]);

/* A W3C trace context: traceparent is
 * "00-<32 hex trace id>-<16 hex parent span id>-<2 hex flags>". */
typedef struct srv_trace_ctx {
  bool valid;            /* a traceparent header was sent and parsed */
  char trace_id[33];     /* the caller's trace, else ours */
  char parent_id[17];    /* the caller's span ("" without traceparent) */
  char span_id[17];      /* this request's span: the server's root */
  uint8_t flags;         /* bit 0: sampled */
} srv_trace_ctx;

/* Parse a traceparent header (NULL: none) into ctx, and give this
 * request a span id (and a trace id when the header is absent or
 * invalid: an invalid one is ignored, as the W3C spec asks). */
void srv_trace_ctx_init(srv_trace_ctx *ctx, const char *traceparent);
/* The traceparent the server's spans are under: "00-trace-span-flags". */
void srv_trace_ctx_header(const srv_trace_ctx *ctx, char out[56]);

#endif
