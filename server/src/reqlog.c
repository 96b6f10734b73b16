/* SPDX-License-Identifier: Apache-2.0 */
/* Request log lines (reqlog.h).  The text form is the one the log has
 * always had, with the request id added; the JSON form carries every
 * field, with a level an alerting rule can filter on: "error" for 5xx,
 * "warn" for 4xx, else "info". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/strbuf.h"
#include "json_write.h"
#include "reqlog.h"
#include "server.h"

static const char *level_of(int status) {
  return status >= 500 ? "error" : status >= 400 || !status ? "warn" : "info";
}

static void put_text(FILE *f, const char *when, const srv_log_rec *r) {
  if (r->binary_type) {
    fprintf(f, "time=%s request_id=%s protocol=binary type=%s id=%llu "
            "status=%s duration_ms=%.3f module=%s token=%s bytes_in=%llu "
            "bytes_out=%llu\n", when, r->request_id, r->binary_type,
            (unsigned long long)r->binary_id,
            r->error_kind ? r->error_kind : "ok", r->duration_ms,
            r->module && *r->module ? r->module : "-",
            r->token ? r->token : "-", (unsigned long long)r->bytes_in,
            (unsigned long long)r->bytes_out);
    return;
  }
  fprintf(f, "time=%s request_id=%s method=%s path=%s status=%d "
          "duration_ms=%.3f module=%s token=%s bytes_in=%llu "
          "bytes_out=%llu%s\n", when, r->request_id, r->method, r->path,
          r->status, r->duration_ms,
          r->module && *r->module ? r->module : "-",
          r->token ? r->token : "-", (unsigned long long)r->bytes_in,
          (unsigned long long)r->bytes_out, r->aborted ? " aborted=1" : "");
}

static void str_member(strbuf *b, const char *key, const char *v) {
  if (!v || !*v) return;
  shlo__sb_putc(b, ',');
  shlo__json_str(b, key);
  shlo__sb_putc(b, ':');
  shlo__json_str(b, v);
}

static void put_json(FILE *f, const char *when, const srv_log_rec *r) {
  strbuf b = {0};
  shlo__sb_puts(&b, "{\"time\":");
  shlo__json_str(&b, when);
  str_member(&b, "level", level_of(r->status));
  str_member(&b, "protocol", r->protocol);
  str_member(&b, "request_id", r->request_id);
  str_member(&b, "team", r->team);
  str_member(&b, "token", r->token);
  str_member(&b, "method", r->method);
  str_member(&b, "path", r->path);
  str_member(&b, "route", r->route);
  str_member(&b, "module", r->module);
  str_member(&b, "trace_id", r->trace_id);
  if (r->binary_type)
    shlo__sb_printf(&b, ",\"binary_id\":%llu",
                    (unsigned long long)r->binary_id);
  shlo__sb_printf(&b, ",\"status\":%d", r->status);
  str_member(&b, "error_kind", r->error_kind);
  shlo__sb_printf(&b, ",\"duration_ms\":%.3f,\"queue_ms\":%.3f,"
                  "\"compile_ms\":%.3f,\"execute_ms\":%.3f,\"bytes_in\":%llu,"
                  "\"bytes_out\":%llu", r->duration_ms, r->queue_ms,
                  r->compile_ms, r->exec_ms, (unsigned long long)r->bytes_in,
                  (unsigned long long)r->bytes_out);
  if (r->aborted) shlo__sb_puts(&b, ",\"aborted\":true");
  shlo__sb_puts(&b, "}\n");
  char *line = shlo__sb_take(&b);
  if (line) fputs(line, f);
  free(line);
}

void srv_log_request(srv_server *s, const srv_log_rec *r) {
  if (!s->log) return;
  char when[48];
  srv_log_time(when);
  if (!strcmp(s->cfg.log_format, "json")) put_json(s->log, when, r);
  else put_text(s->log, when, r);
}
