/* SPDX-License-Identifier: Apache-2.0 */
/* Per-module figures (modmetrics.h).  A table of candidates, four times
 * metrics-max-modules, counts each module's requests; a module new to a
 * full table takes the place of the candidate with the fewest requests,
 * whose figures go to "other" for good.  A scrape writes the
 * metrics-max-modules candidates with the most requests under their own
 * label and sums the rest into module="other", so a module that climbs
 * into the top moves its counts out of "other" (Prometheus's rate() reads
 * the drop as a counter reset on that one series). */
#include <stdlib.h>
#include <string.h>

#include "core/strbuf.h"
#include "json_write.h"
#include "modmetrics.h"
#include "server.h"
#include "store.h"

enum { CLASS_2XX, CLASS_4XX, CLASS_5XX, N_CLASS };
static const char *const class_names[N_CLASS] = {"2xx", "4xx", "5xx"};

typedef struct mod_row {
  char id[SRV_ID_LEN];      /* "" for the retired figures */
  /* its first registered name (a team's, with its version), kept once
   * seen: the label stays when the name goes with a DELETE */
  srv_name_row name;
  uint64_t requests[N_CLASS];
  uint64_t errors[SHLO_PERR_COUNT];
  srv_histogram exec;
  uint64_t traffic;         /* requests: the rank */
} mod_row;

struct srv_modmetrics {
  mod_row *rows;
  int n, cap;
  mod_row retired;          /* candidates pushed out: always "other" */
};

static int class_of(int status) {
  return status >= 500 ? CLASS_5XX
         : status >= 400 || status < 200 ? CLASS_4XX
                                         : CLASS_2XX;
}

static void row_add(mod_row *dst, const mod_row *src) {
  for (int c = 0; c < N_CLASS; c++) dst->requests[c] += src->requests[c];
  for (int k = 0; k < SHLO_PERR_COUNT; k++) dst->errors[k] += src->errors[k];
  for (int i = 0; i <= SRV_LAT_BUCKETS; i++)
    dst->exec.buckets[i] += src->exec.buckets[i];
  dst->exec.count += src->exec.count;
  dst->exec.sum_s += src->exec.sum_s;
  dst->traffic += src->traffic;
}

static srv_modmetrics *table(srv_server *s) {
  if (s->modmetrics) return s->modmetrics;
  srv_modmetrics *m = calloc(1, sizeof *m);
  int n = (int)s->cfg.metrics_max_modules;
  if (!m) return NULL;
  m->cap = 4 * (n > 4 ? n : 4);
  m->rows = calloc((size_t)m->cap, sizeof *m->rows);
  if (!m->rows) {
    free(m);
    return NULL;
  }
  s->modmetrics = m;
  return m;
}

/* The candidate of id, made (pushing out the least used one when the
 * table is full) if need be. */
static mod_row *row_of(srv_modmetrics *m, const char *id) {
  int least = -1;
  for (int i = 0; i < m->n; i++) {
    if (!strcmp(m->rows[i].id, id)) return &m->rows[i];
    if (least < 0 || m->rows[i].traffic < m->rows[least].traffic) least = i;
  }
  mod_row *r;
  if (m->n < m->cap) {
    r = &m->rows[m->n++];
  } else {
    r = &m->rows[least];
    row_add(&m->retired, r);
  }
  memset(r, 0, sizeof *r);
  snprintf(r->id, sizeof r->id, "%s", id);
  return r;
}

/* The labels of a module: its first registered name with its team and
 * version (two teams may each have a name, a name several versions), else
 * its short id. */
static void label_of(srv_server *s, mod_row *r, char *out, size_t cap) {
  if (!r->name.name[0]) srv_names_of(&s->names, NULL, r->id, &r->name, 1);
  if (r->name.name[0])
    snprintf(out, cap, "module=\"%s\",team=\"%s\",version=\"%d\"",
             r->name.name, r->name.team, r->name.version);
  else
    snprintf(out, cap, "module=\"%.19s\"", r->id); /* sha256: + 12 */
}

/* The module as the console shows it: TEAM/NAME vN, else its short id. */
static void display_of(srv_server *s, mod_row *r, char *out, size_t cap) {
  if (!r->name.name[0]) srv_names_of(&s->names, NULL, r->id, &r->name, 1);
  if (r->name.name[0])
    snprintf(out, cap, "%s/%s v%d", r->name.team, r->name.name,
             r->name.version);
  else
    snprintf(out, cap, "%.19s", r->id);
}

void srv_modmetrics_add(srv_server *s, const char *module, int status,
                        int err_kind, double exec_s) {
  if (!module || !*module) return;
  srv_modmetrics *m = table(s);
  if (!m) return; /* out of memory: the figures are lost, not the request */
  mod_row *r = row_of(m, module);
  if (!r->traffic) { /* new: its name now, while it is surely known */
    char label[256];
    label_of(s, r, label, sizeof label);
  }
  r->traffic++;
  r->requests[class_of(status)]++;
  if (status >= 400 && err_kind >= 0 && err_kind < SHLO_PERR_COUNT)
    r->errors[err_kind]++;
  if (exec_s >= 0) srv_histogram_add(&r->exec, exec_s);
}

static int by_traffic(const void *a, const void *b) {
  const mod_row *x = *(const mod_row *const *)a, *y = *(const mod_row *const *)b;
  if (x->traffic != y->traffic) return x->traffic < y->traffic ? 1 : -1;
  return strcmp(x->id, y->id);
}

static void put_rows(srv_server *s, strbuf *b, mod_row **top, int n_top,
                     mod_row *other) {
  char label[256];
  shlo__sb_puts(b, "# HELP shlo_module_requests_total Requests that named a "
                   "module, by module and status class (the "
                   "metrics-max-modules busiest modules; the rest as "
                   "module=\"other\").\n"
                   "# TYPE shlo_module_requests_total counter\n");
  for (int i = 0; i <= n_top; i++) {
    mod_row *r = i < n_top ? top[i] : other;
    if (i < n_top) label_of(s, r, label, sizeof label);
    else snprintf(label, sizeof label, "module=\"other\"");
    for (int c = 0; c < N_CLASS; c++)
      shlo__sb_printf(b, "shlo_module_requests_total{%s,status=\"%s\"} "
                      "%llu\n", label, class_names[c],
                      (unsigned long long)r->requests[c]);
  }
  shlo__sb_puts(b, "# HELP shlo_module_errors_total Failed requests that "
                   "named a module, by module and error kind.\n"
                   "# TYPE shlo_module_errors_total counter\n");
  for (int i = 0; i <= n_top; i++) {
    mod_row *r = i < n_top ? top[i] : other;
    if (i < n_top) label_of(s, r, label, sizeof label);
    else snprintf(label, sizeof label, "module=\"other\"");
    for (int k = 0; k < SHLO_PERR_COUNT; k++)
      shlo__sb_printf(b, "shlo_module_errors_total{%s,kind=\"%s\"} %llu\n",
                      label, shlo_proto_err_name((shlo_proto_err_kind)k),
                      (unsigned long long)r->errors[k]);
  }
  shlo__sb_puts(b, "# HELP shlo_module_execution_seconds Engine execution "
                   "time by module.\n"
                   "# TYPE shlo_module_execution_seconds histogram\n");
  for (int i = 0; i <= n_top; i++) {
    mod_row *r = i < n_top ? top[i] : other;
    if (i < n_top) label_of(s, r, label, sizeof label);
    else snprintf(label, sizeof label, "module=\"other\"");
    srv_put_histogram(b, "shlo_module_execution_seconds", label, &r->exec);
  }
}

void srv_modmetrics_put(srv_server *s, strbuf *b) {
  srv_modmetrics *m = table(s);
  if (!m) return;
  mod_row **order = malloc(((size_t)m->n + 1) * sizeof *order);
  if (!order) return;
  for (int i = 0; i < m->n; i++) order[i] = &m->rows[i];
  qsort(order, (size_t)m->n, sizeof *order, by_traffic);
  int n_top = m->n < (int)s->cfg.metrics_max_modules
                  ? m->n : (int)s->cfg.metrics_max_modules;
  mod_row other = m->retired;
  for (int i = n_top; i < m->n; i++) row_add(&other, order[i]);
  put_rows(s, b, order, n_top, &other);
  free(order);
}

static void put_json_row(strbuf *b, const char *label, const mod_row *r) {
  uint64_t errors = 0;
  for (int k = 0; k < SHLO_PERR_COUNT; k++) errors += r->errors[k];
  uint64_t all = 0;
  for (int c = 0; c < N_CLASS; c++) all += r->requests[c];
  double p50 = srv_histogram_quantile(r->exec.buckets, 0.5) * 1000;
  double p99 = srv_histogram_quantile(r->exec.buckets, 0.99) * 1000;
  shlo__sb_puts(b, "{\"module\":");
  shlo__json_str(b, label);
  shlo__sb_printf(b, ",\"requests\":%llu,\"errors\":%llu,\"executions\":"
                  "%llu", (unsigned long long)all, (unsigned long long)errors,
                  (unsigned long long)r->exec.count);
  if (p50 == p50) shlo__sb_printf(b, ",\"p50_ms\":%.6g,\"p99_ms\":%.6g", p50,
                                  p99);
  shlo__sb_putc(b, '}');
}

void srv_modmetrics_json(srv_server *s, strbuf *b) {
  srv_modmetrics *m = table(s);
  mod_row **order = m ? malloc(((size_t)m->n + 1) * sizeof *order) : NULL;
  if (!order) {
    shlo__sb_puts(b, "[]");
    return;
  }
  for (int i = 0; i < m->n; i++) order[i] = &m->rows[i];
  qsort(order, (size_t)m->n, sizeof *order, by_traffic);
  int n_top = m->n < (int)s->cfg.metrics_max_modules
                  ? m->n : (int)s->cfg.metrics_max_modules;
  mod_row other = m->retired;
  for (int i = n_top; i < m->n; i++) row_add(&other, order[i]);
  shlo__sb_putc(b, '[');
  char label[256];
  for (int i = 0; i < n_top; i++) {
    display_of(s, order[i], label, sizeof label);
    put_json_row(b, label, order[i]);
    shlo__sb_putc(b, ',');
  }
  put_json_row(b, "other", &other);
  shlo__sb_putc(b, ']');
  free(order);
}

void srv_modmetrics_free(srv_server *s) {
  if (!s->modmetrics) return;
  free(s->modmetrics->rows);
  free(s->modmetrics);
  s->modmetrics = NULL;
}
