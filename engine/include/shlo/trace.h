/* SPDX-License-Identifier: Apache-2.0 */
/* Execution traces: spans on a timeline, written as Chrome trace-event
 * JSON (loads in Perfetto UI and chrome://tracing).
 *
 * A trace is a fixed-size buffer of spans.  The engine fills it through a
 * profile (shlo/profile.h): pass shlo_trace_profile(t) in
 * shlo_exec_opts.profile and every step of the executed functions (not of
 * the regions inside a step: those count in their step) becomes one span
 * with its op name, source line and thread.  The caller adds its own
 * spans (parse, compile, queue wait, ...) with shlo_trace_span.  Spans
 * past the buffer are counted and dropped, so a trace never grows.
 * Thread-safe: the threads of one execution, or of several, may record
 * into one trace at once.
 *
 *   shlo_trace *t = shlo_trace_new(0);
 *   uint64_t t0 = shlo_trace_now_ns();  ... parse ...
 *   shlo_trace_span(t, "parse", "stage", t0, shlo_trace_now_ns(), NULL);
 *   shlo_exec_opts o = {.profile = shlo_trace_profile(t)};
 *   shlo_execute(e, &o, ...);
 *   char *json = shlo_trace_json(t, NULL);  ... free(json);
 *   shlo_trace_free(t);
 *
 * Step spans borrow their names from the executable: seal the trace
 * (shlo_trace_seal) or render it (shlo_trace_json) before freeing the
 * executable; a sealed trace may be rendered any time later. */
#ifndef SHLO_TRACE_H
#define SHLO_TRACE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "shlo/export.h"
#include "shlo/profile.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct shlo_trace shlo_trace;

/* The default number of spans a trace holds. */
#define SHLO_TRACE_DEFAULT_SPANS 65536

/* A trace of at most max_spans spans (<= 0: the default); its time origin
 * is now.  NULL when out of memory.  Free with shlo_trace_free. */
SHLO_API shlo_trace *shlo_trace_new(int max_spans);
SHLO_API void shlo_trace_free(shlo_trace *t);

/* Empty t for reuse, its origin now: spans are forgotten, its memory kept
 * (a server that traces every request reuses traces rather than making
 * and freeing one per request).  Not while threads still record into t. */
SHLO_API void shlo_trace_reset(shlo_trace *t);

/* Move the trace's time origin (shlo_trace_now_ns clock), e.g. back to
 * when a request arrived, before the trace existed.  Spans that start
 * before the origin are drawn from the origin. */
SHLO_API void shlo_trace_set_origin(shlo_trace *t, uint64_t origin_ns);

/* The clock of every span: monotonic nanoseconds. */
SHLO_API uint64_t shlo_trace_now_ns(void);

/* Record the span [t0_ns, t1_ns) on the calling thread.  name and cat
 * are copied (name up to 71 bytes, cat 15); args_json, when not NULL, is
 * a JSON object text ("{\"k\":1}") kept as given (copied; up to 63 bytes, else
 * dropped).  A span that ends before it starts is recorded empty. */
SHLO_API void shlo_trace_span(shlo_trace *t, const char *name,
                              const char *cat, uint64_t t0_ns,
                              uint64_t t1_ns, const char *args_json);

/* The profile whose steps land in t as spans (owned by t; valid until
 * shlo_trace_free).  It keeps no per-step totals: shlo_profile_print
 * prints nothing for it. */
SHLO_API shlo_profile *shlo_trace_profile(shlo_trace *t);

/* Spans recorded, and spans dropped because the buffer was full. */
SHLO_API int shlo_trace_count(const shlo_trace *t);
SHLO_API int64_t shlo_trace_dropped(const shlo_trace *t);

/* The trace as one Chrome trace-event JSON object:
 * {"traceEvents":[...],"displayTimeUnit":"ms","otherData":{...}}; spans
 * are complete events ("ph":"X", microseconds from the trace's origin).
 * other_json, when not NULL, is a JSON object's members without braces
 * ("\"request_id\":\"abc\"") put in otherData.  malloc'd (free it), NULL
 * when out of memory. */
SHLO_API char *shlo_trace_json(shlo_trace *t, const char *other_json);

/* Copy the step spans' names (op, label up to 71 bytes, line) out of the
 * executable, so that the trace outlives it.  Cheap: no text is
 * formatted.  Not while threads still record into t. */
SHLO_API void shlo_trace_seal(shlo_trace *t);
/* One recorded span, as shlo_trace_each shows it (borrowed: valid during
 * the call only). */
typedef struct shlo_trace_span_view {
  const char *name;      /* a step's label (its first 71 bytes once sealed)
                            or op name; a caller's span's name */
  const char *cat;       /* "step" for the engine's steps, else the caller's */
  const char *op;        /* steps: the op's name; others: "" */
  int line;              /* steps: the op's source line; others: 0 */
  int tid;               /* the thread that recorded it */
  uint64_t t0_ns, t1_ns; /* shlo_trace_now_ns clock */
  const char *args_json; /* a caller's args ("" when none); steps: "" */
} shlo_trace_span_view;

/* Call fn(span, arg) for every span written whole, in the order they were
 * recorded; returns how many.  Seals the trace (shlo_trace_seal). */
SHLO_API int shlo_trace_each(shlo_trace *t,
                             void (*fn)(const shlo_trace_span_view *span,
                                        void *arg),
                             void *arg);

/* Bytes the trace holds (its span chunks and tables). */
SHLO_API size_t shlo_trace_bytes(const shlo_trace *t);

#ifdef __cplusplus
}
#endif

#endif
