/* SPDX-License-Identifier: Apache-2.0 */
/* Status codes and diagnostics: how every engine function reports failure.
 *
 * Functions return a shlo_status (0 = ok, negative = error) and, when given
 * a shlo_diag, fill it with a message a person can act on and the source
 * location (file:line:col) it refers to.  Bad input never aborts. */
#ifndef SHLO_STATUS_H
#define SHLO_STATUS_H

#include "shlo/export.h"

#include <stdarg.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* X(name, code, message) */
#define SHLO_STATUS_LIST(X)                                        \
  X(OK, 0, "ok")                                                   \
  X(ENOMEM, -1, "out of memory")                                   \
  X(EPARSE, -2, "parse error")                                     \
  X(EVERIFY, -3, "verification error")                             \
  X(EUNSUPPORTED, -4, "not implemented")                           \
  X(EINPUT, -5, "bad input")                                       \
  X(ERUNTIME, -6, "runtime error")                                 \
  X(ETIMEOUT, -7, "deadline exceeded")                             \
  X(ECANCELED, -8, "canceled")                                     \
  X(ELIMIT, -9, "limit exceeded")                                  \
  X(ECHECK, -10, "check failed")

typedef enum {
#define SHLO_STATUS_ENUM(name, code, msg) SHLO_##name = code,
  SHLO_STATUS_LIST(SHLO_STATUS_ENUM)
#undef SHLO_STATUS_ENUM
} shlo_status_code;

typedef int shlo_status;

/* Static name ("EPARSE") and message ("parse error") of a status code. */
SHLO_API const char *shlo_status_name(shlo_status s);
SHLO_API const char *shlo_status_message(shlo_status s);

#define SHLO_DIAG_MAX 1024

/* One diagnostic.  line/col are 1-based; 0 when unknown.  file points to a
 * string owned by the caller of the parser (or a static string). */
typedef struct shlo_diag {
  shlo_status code;
  const char *file;
  int line, col;
  char message[SHLO_DIAG_MAX];
} shlo_diag;

SHLO_API void shlo_diag_clear(shlo_diag *d);
/* Set code, location and a printf-style message.  Returns code, so a caller
 * can write `return shlo_diag_set(d, SHLO_EPARSE, ...)`.  d may be NULL. */
SHLO_API shlo_status shlo_diag_set(shlo_diag *d, shlo_status code, const char *file,
                          int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
SHLO_API shlo_status shlo_diag_vset(shlo_diag *d, shlo_status code, const char *file,
                           int line, int col, const char *fmt, va_list ap);
/* "file:line:col: error: message" (or just the message without location). */
SHLO_API void shlo_diag_format(const shlo_diag *d, char *buf, size_t cap);

#ifdef __cplusplus
}
#endif

#endif
