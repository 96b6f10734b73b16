/* SPDX-License-Identifier: Apache-2.0 */
/* The audit log: one JSON object per line per request, HTTP or binary,
 * for whoever must answer "who ran what, when, and what did it cost".  It
 * names a token by its name, never by its value.  Loop thread only. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "server.h"
#include "json_write.h"

int srv_audit_open(srv_server *s) {
  const char *path = s->cfg.audit_log;
  FILE *f = NULL;
  if (!strcmp(path, "stderr")) f = stderr;
  else if (strcmp(path, "off") && *path && !(f = fopen(path, "a"))) {
    fprintf(stderr, "shlo-server: cannot open audit log %s: %s\n", path,
            strerror(errno));
    return -1;
  }
  if (f && f != stderr) setvbuf(f, NULL, _IOLBF, 0);
  srv_audit_close(s);
  s->audit = f;
  return 0;
}

void srv_audit_close(srv_server *s) {
  if (s->audit && s->audit != stderr) fclose(s->audit);
  s->audit = NULL;
}

static void str_or_null(strbuf *b, const char *key, const char *v) {
  shlo__json_key(b, key, false);
  if (v && *v) shlo__json_str(b, v);
  else shlo__sb_puts(b, "null");
}

void srv_audit_write(srv_server *s, const srv_audit_rec *a) {
  if (!s->audit) return;
  char when[48];
  srv_log_time(when);
  strbuf b = {0};
  shlo__sb_putc(&b, '{');
  shlo__json_key(&b, "time", true);
  shlo__json_str(&b, when);
  str_or_null(&b, "protocol", a->protocol);
  str_or_null(&b, "request_id", a->request_id);
  str_or_null(&b, "team", a->team);
  str_or_null(&b, "token_name", a->token_name);
  str_or_null(&b, "method", a->method);
  str_or_null(&b, "route", a->route);
  str_or_null(&b, "module", a->module);
  shlo__json_key(&b, "status", false);
  shlo__json_num(&b, a->status);
  str_or_null(&b, "error_kind",
              a->err_kind >= 0 ? shlo_proto_err_name(a->err_kind) : NULL);
  shlo__sb_printf(&b, ",\"queue_ms\":%.3f,\"compile_ms\":%.3f,"
                  "\"execute_ms\":%.3f,\"total_ms\":%.3f,\"bytes_in\":%llu,"
                  "\"bytes_out\":%llu", a->queue_ms, a->compile_ms,
                  a->exec_ms, a->total_ms, (unsigned long long)a->bytes_in,
                  (unsigned long long)a->bytes_out);
  str_or_null(&b, "client", a->client);
  str_or_null(&b, "trace_id", a->trace_id);
  shlo__sb_puts(&b, "}\n");
  char *line = shlo__sb_take(&b);
  if (line) fputs(line, s->audit);
  free(line);
}

void srv_audit_request(srv_server *s, const srv_request *r) {
  if (!s->audit) return;
  static const char *const routes[] = {
#define R(e, str) str,
      SRV_ROUTES(R)
#undef R
  };
  const srv_job *j = &r->job;
  srv_audit_rec a = {
      .protocol = "http",
      .request_id = r->req_id,
      .trace_id = r->trace_key[0] ? r->trace_key : NULL,
      /* with tokens, a request without a valid one has no team */
      .team = r->team && (r->token_name || !s->n_tokens) ? r->team->name
                                                         : NULL,
      .token_name = r->token_name,
      .method = r->method,
      .route = routes[r->route],
      .module = r->module[0] ? r->module : (r->id[0] ? r->id : NULL),
      .client = r->conn_state ? r->conn_state->ip : NULL,
      .status = r->status,
      .err_kind = r->status >= 400 ? r->err_kind : -1,
      .queue_ms = j->start_ns > j->submit_ns && j->submit_ns
                      ? (double)(j->start_ns - j->submit_ns) / 1e6
                      : 0,
      .compile_ms = r->compile_ms,
      .exec_ms = r->executed ? r->exec_s * 1000 : 0,
      .total_ms = (double)(srv_now_ns() - r->t0_ns) / 1e6,
      .bytes_in = r->received + r->discarded,
      .bytes_out = r->resp_len};
  srv_audit_write(s, &a);
}
