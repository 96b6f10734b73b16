/* SPDX-License-Identifier: Apache-2.0 */
/* Status names and diagnostics. */
#include <stdio.h>
#include <string.h>

#include "core/diag.h"
#include "shlo/status.h"

const char *shlo_status_name(shlo_status s) {
  switch (s) {
#define SHLO_STATUS_NAME(name, code, msg) \
  case code:                              \
    return #name;
    SHLO_STATUS_LIST(SHLO_STATUS_NAME)
#undef SHLO_STATUS_NAME
  }
  return "EUNKNOWN";
}

const char *shlo_status_message(shlo_status s) {
  switch (s) {
#define SHLO_STATUS_MSG(name, code, msg) \
  case code:                             \
    return msg;
    SHLO_STATUS_LIST(SHLO_STATUS_MSG)
#undef SHLO_STATUS_MSG
  }
  return "unknown error";
}

void shlo_diag_clear(shlo_diag *d) {
  if (!d) return;
  memset(d, 0, sizeof *d);
}

shlo_status shlo_diag_vset(shlo_diag *d, shlo_status code, const char *file,
                           int line, int col, const char *fmt, va_list ap) {
  if (!d) return code;
  d->code = code;
  d->file = file;
  d->line = line;
  d->col = col;
  vsnprintf(d->message, sizeof d->message, fmt, ap);
  return code;
}

shlo_status shlo_diag_set(shlo_diag *d, shlo_status code, const char *file,
                          int line, int col, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  shlo_diag_vset(d, code, file, line, col, fmt, ap);
  va_end(ap);
  return code;
}

shlo_status shlo__diag_vset_named(shlo_diag *d, shlo_status code,
                                  const char *file, int line, int col,
                                  const char *name, const char *fmt,
                                  va_list ap) {
  char msg[SHLO_DIAG_MAX];
  vsnprintf(msg, sizeof msg, fmt, ap);
  return shlo_diag_set(d, code, file, line, col, "%s: %s", name, msg);
}

void shlo_diag_format(const shlo_diag *d, char *buf, size_t cap) {
  if (!cap) return;
  if (d->file && d->line > 0)
    snprintf(buf, cap, "%s:%d:%d: error: %s", d->file, d->line, d->col,
             d->message);
  else if (d->line > 0)
    snprintf(buf, cap, "%d:%d: error: %s", d->line, d->col, d->message);
  else
    snprintf(buf, cap, "error: %s", d->message);
}
