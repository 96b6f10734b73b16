/* SPDX-License-Identifier: Apache-2.0 */
/* Execution traces (shlo/trace.h): spans in slots that threads claim
 * with one atomic add, so recording costs no lock; the JSON is built once,
 * at the end.  Slots come in chunks allocated when first claimed: a trace
 * of a few spans costs one small chunk, not its whole capacity. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/syscall.h>
#endif

#include "compile/plan.h"
#include "core/context_int.h"
#include "core/strbuf.h"
#include "runtime/profile_int.h"
#include "shlo/trace.h"

enum { NAME_CAP = 72, OP_CAP = 32, CAT_CAP = 16, ARGS_CAP = 64,
       CHUNK = 16 };

/* One span.  A step's span borrows its step (names come from the plan)
 * until shlo_trace_seal copies them; a caller's span owns copies of its
 * texts. */
typedef struct span {
  const shlo_step *step; /* a step's, not yet sealed */
  bool is_step;          /* a step's: name, op and line describe it */
  int line;
  uint64_t t0, t1;
  int tid;
  _Atomic int ready;     /* written whole: the renderer may read it */
  char name[NAME_CAP], op[OP_CAP], cat[CAT_CAP];
  char args[ARGS_CAP];
} span;

struct shlo_trace {
  shlo_context *ctx;   /* whose allocator frees it */
  uint64_t origin_ns;
  shlo_profile *profile;
  int cap;
  atomic_int next;     /* slots claimed; may pass cap (then dropped) */
  atomic_llong dropped;
  int n_chunks;
  span *_Atomic *chunks; /* cap / CHUNK of them, NULL until claimed */
  atomic_int chunks_made; /* of them, allocated */
};

uint64_t shlo_trace_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The kernel's id of the calling thread, which is what a trace viewer
 * shows as the thread (cached: one system call per thread). */
static int thread_id(void) {
  static _Thread_local int tid;
  if (!tid) {
#if defined(__linux__)
    tid = (int)syscall(SYS_gettid);
#else
    tid = (int)((uintptr_t)&tid >> 4 & 0x7fffffff);
#endif
  }
  return tid;
}

shlo_trace *shlo_trace_new(int max_spans) {
  shlo_context *c = shlo__ctx_current();
  shlo_trace *t = shlo__ctx_calloc(c, 1, sizeof *t);
  if (!t) return NULL;
  t->ctx = c;
  t->cap = max_spans > 0 ? max_spans : SHLO_TRACE_DEFAULT_SPANS;
  t->n_chunks = (t->cap + CHUNK - 1) / CHUNK;
  t->chunks = shlo__ctx_calloc(c, (size_t)t->n_chunks, sizeof *t->chunks);
  t->profile = shlo__profile_new_for_trace(t);
  if (!t->chunks || !t->profile) {
    shlo_trace_free(t);
    return NULL;
  }
  t->origin_ns = shlo_trace_now_ns();
  return t;
}

void shlo_trace_free(shlo_trace *t) {
  if (!t) return;
  shlo_profile_free(t->profile);
  for (int i = 0; t->chunks && i < t->n_chunks; i++)
    shlo__ctx_free(t->ctx, atomic_load(&t->chunks[i]));
  shlo__ctx_free(t->ctx, t->chunks);
  shlo__ctx_free(t->ctx, t);
}

shlo_profile *shlo_trace_profile(shlo_trace *t) { return t->profile; }

void shlo_trace_reset(shlo_trace *t) {
  /* relaxed: no thread records into t now, and the store to next below
   * publishes these (a server resets a trace per traced request) */
  int n = shlo_trace_count(t);
  for (int i = 0; i < n; i++) {
    span *c = atomic_load_explicit(&t->chunks[i / CHUNK],
                                   memory_order_relaxed);
    if (c) atomic_store_explicit(&c[i % CHUNK].ready, 0, memory_order_relaxed);
  }
  atomic_store(&t->next, 0);
  atomic_store(&t->dropped, 0);
  t->origin_ns = shlo_trace_now_ns();
}

void shlo_trace_set_origin(shlo_trace *t, uint64_t origin_ns) {
  t->origin_ns = origin_ns;
}

int shlo_trace_count(const shlo_trace *t) {
  int n = atomic_load(&((shlo_trace *)t)->next);
  return n < t->cap ? n : t->cap;
}

int64_t shlo_trace_dropped(const shlo_trace *t) {
  return atomic_load(&((shlo_trace *)t)->dropped);
}

/* Slot i's chunk, allocated by the first thread to need it (a thread
 * that loses the race frees its own); NULL when out of memory. */
static span *chunk_of(shlo_trace *t, int i) {
  span *_Atomic *at = &t->chunks[i / CHUNK];
  span *p = atomic_load_explicit(at, memory_order_acquire);
  if (p) return p;
  /* not zeroed: a claim writes every field it reads but ready, which
   * must say "not yet" until then */
  span *mine = shlo__ctx_malloc(t->ctx, CHUNK * sizeof *mine);
  if (!mine) return NULL;
  for (int k = 0; k < CHUNK; k++) atomic_init(&mine[k].ready, 0);
  if (atomic_compare_exchange_strong(at, &p, mine)) {
    atomic_fetch_add(&t->chunks_made, 1);
    return mine;
  }
  shlo__ctx_free(t->ctx, mine);
  return p;
}

/* A slot for one span, or NULL (counted as dropped) when full. */
static span *claim(shlo_trace *t) {
  int i = atomic_fetch_add(&t->next, 1);
  span *c = i < t->cap ? chunk_of(t, i) : NULL;
  if (!c) {
    atomic_fetch_add(&t->dropped, 1);
    return NULL;
  }
  return &c[i % CHUNK];
}

static void copy_text(char *dst, size_t cap, const char *src) {
  size_t n = src ? strnlen(src, cap - 1) : 0;
  if (n) memcpy(dst, src, n);
  dst[n] = 0;
}

void shlo_trace_span(shlo_trace *t, const char *name, const char *cat,
                     uint64_t t0_ns, uint64_t t1_ns, const char *args_json) {
  if (!t) return;
  span *s = claim(t);
  if (!s) return;
  s->t0 = t0_ns;
  s->t1 = t1_ns > t0_ns ? t1_ns : t0_ns;
  s->tid = thread_id();
  copy_text(s->name, sizeof s->name, name ? name : "?");
  copy_text(s->cat, sizeof s->cat, cat ? cat : "span");
  s->is_step = false;
  s->step = NULL;
  s->op[0] = 0;
  s->line = 0;
  s->args[0] = 0;
  /* arguments that do not fit are dropped whole: cut JSON is no JSON */
  if (args_json && strlen(args_json) < sizeof s->args)
    copy_text(s->args, sizeof s->args, args_json);
  atomic_store_explicit(&s->ready, 1, memory_order_release);
}

void shlo__trace_step(shlo_trace *t, const shlo_step *step, uint64_t t0_ns,
                      uint64_t t1_ns) {
  span *s = claim(t);
  if (!s) return;
  s->step = step;
  s->is_step = true;
  s->line = 0;
  s->t0 = t0_ns;
  s->t1 = t1_ns > t0_ns ? t1_ns : t0_ns;
  s->tid = thread_id();
  atomic_store_explicit(&s->ready, 1, memory_order_release);
}

/* A JSON string's body: quotes, backslashes and control bytes escaped. */
static void put_escaped(strbuf *b, const char *s) {
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') {
      shlo__sb_putc(b, '\\');
      shlo__sb_putc(b, (char)c);
    } else if (c < 0x20) {
      shlo__sb_printf(b, "\\u%04x", c);
    } else {
      shlo__sb_putc(b, (char)c);
    }
  }
}

/* Microseconds from the origin, as the format wants them (fractions
 * keep nanoseconds).  Spans from before the origin start at 0. */
static double us_since(const shlo_trace *t, uint64_t ns) {
  return ns > t->origin_ns ? (double)(ns - t->origin_ns) / 1e3 : 0.0;
}

/* Copy a step span's names out of its plan. */
static void seal_span(span *s) {
  const shlo_step *st = s->step;
  if (!st) return;
  const char *op = st->op ? st->op->name : "?";
  copy_text(s->name, sizeof s->name, st->label ? st->label : op);
  copy_text(s->op, sizeof s->op, op);
  s->line = st->op ? st->op->loc.line : 0;
  s->step = NULL;
}

/* Each slot up to the last claimed, in chunk order: f(s) for the ones
 * written whole (a slot claimed but not yet written, by a thread still
 * recording, is left out rather than read half made). */
static void each_span(const shlo_trace *t, void (*f)(span *, void *),
                      void *arg) {
  int n = shlo_trace_count(t);
  for (int i = 0; i < n; i++) {
    span *c = atomic_load_explicit(&t->chunks[i / CHUNK],
                                   memory_order_acquire);
    span *s = c ? &c[i % CHUNK] : NULL;
    if (s && atomic_load_explicit(&s->ready, memory_order_acquire))
      f(s, arg);
  }
}

static void seal_one(span *s, void *arg) {
  (void)arg;
  seal_span(s);
}

void shlo_trace_seal(shlo_trace *t) { each_span(t, seal_one, NULL); }

size_t shlo_trace_bytes(const shlo_trace *t) {
  return sizeof *t + (size_t)t->n_chunks * sizeof *t->chunks +
         (size_t)atomic_load(&((shlo_trace *)t)->chunks_made) * CHUNK *
             sizeof(span);
}

/* A step's span: its label (a fused group lists its ops) or op name,
 * with the op and its source line as arguments. */
static void put_step(strbuf *b, span *s) {
  /* unsealed, the whole label; sealed, its first NAME_CAP - 1 bytes */
  const char *label = s->step && s->step->label ? s->step->label : NULL;
  seal_span(s);
  shlo__sb_puts(b, "\"name\":\"");
  put_escaped(b, label ? label : s->name);
  shlo__sb_puts(b, "\",\"cat\":\"step\",\"args\":{\"op\":\"");
  put_escaped(b, s->op);
  shlo__sb_printf(b, "\",\"line\":%d}", s->line);
}

static void put_span(strbuf *b, const shlo_trace *t, span *s) {
  double ts = us_since(t, s->t0);
  double end = us_since(t, s->t1);
  shlo__sb_printf(b, "{\"ph\":\"X\",\"pid\":1,\"tid\":%d,\"ts\":%.3f,"
                  "\"dur\":%.3f,", s->tid, ts, end - ts);
  if (s->is_step) {
    put_step(b, s);
  } else {
    shlo__sb_puts(b, "\"name\":\"");
    put_escaped(b, s->name);
    shlo__sb_puts(b, "\",\"cat\":\"");
    put_escaped(b, s->cat);
    shlo__sb_puts(b, "\",\"args\":");
    shlo__sb_puts(b, s->args[0] ? s->args : "{}");
  }
  shlo__sb_putc(b, '}');
}

typedef struct visit {
  void (*fn)(const shlo_trace_span_view *, void *);
  void *arg;
  int n;
} visit;

static void visit_one(span *s, void *arg) {
  visit *v = arg;
  seal_span(s);
  shlo_trace_span_view view = {
      .name = s->name, .cat = s->is_step ? "step" : s->cat,
      .op = s->is_step ? s->op : "", .line = s->line, .tid = s->tid,
      .t0_ns = s->t0, .t1_ns = s->t1, .args_json = s->is_step ? "" : s->args};
  v->fn(&view, v->arg);
  v->n++;
}

int shlo_trace_each(shlo_trace *t,
                    void (*fn)(const shlo_trace_span_view *, void *),
                    void *arg) {
  visit v = {fn, arg, 0};
  each_span(t, visit_one, &v);
  return v.n;
}

typedef struct render {
  strbuf *b;
  const shlo_trace *t;
  int put;
} render;

static void render_one(span *s, void *arg) {
  render *r = arg;
  if (r->put++) shlo__sb_putc(r->b, ',');
  put_span(r->b, r->t, s);
}

char *shlo_trace_json(shlo_trace *t, const char *other_json) {
  strbuf b = {0};
  shlo__sb_puts(&b, "{\"traceEvents\":[");
  render r = {&b, t, 0};
  each_span(t, render_one, &r);
  shlo__sb_printf(&b, "],\"displayTimeUnit\":\"ms\",\"otherData\":{"
                  "\"spans_dropped\":%lld",
                  (long long)shlo_trace_dropped(t));
  if (other_json && *other_json) {
    shlo__sb_putc(&b, ',');
    shlo__sb_puts(&b, other_json);
  }
  shlo__sb_puts(&b, "}}");
  return shlo__sb_take(&b);
}
