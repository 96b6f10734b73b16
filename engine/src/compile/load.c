/* SPDX-License-Identifier: Apache-2.0 */
/* Text or file -> module -> verified executable, in one call (engine.h):
 * the sequence every tool and test runs before it executes. */
#include <stdio.h>
#include <stdlib.h>

#include "frontend/module.h"
#include "core/context_int.h"
#include "shlo/engine.h"

char *shlo_read_file(const char *path, size_t *len, shlo_diag *diag) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    shlo_diag_set(diag, SHLO_EINPUT, NULL, 0, 0, "cannot open %s", path);
    return NULL;
  }
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  while (buf) {
    n += fread(buf + n, 1, cap - n - 1, f);
    if (n < cap - 1) break;
    char *w = realloc(buf, cap * 2);
    if (!w) {
      free(buf);
      buf = NULL;
      break;
    }
    buf = w;
    cap *= 2;
  }
  bool err = ferror(f);
  fclose(f);
  if (!buf || err) {
    shlo_diag_set(diag, buf ? SHLO_EINPUT : SHLO_ENOMEM, NULL, 0, 0,
                  "cannot read %s", path);
    free(buf);
    return NULL;
  }
  buf[n] = 0;
  *len = n;
  return buf;
}

shlo_status shlo_load(const char *text, size_t len, const char *name,
                      const shlo_compile_opts *opts, shlo_module **m,
                      shlo_executable **e, shlo_diag *diag) {
  *m = NULL;
  *e = NULL;
  /* parsed in the context too: the module's arena is its memory */
  shlo_context *ctx = opts ? opts->context : NULL;
  shlo_context *prev = shlo__ctx_swap(ctx ? ctx : shlo__ctx_current());
  /* The caller's bounds (nesting, ops) hold from the first byte. */
  shlo_status st = shlo_parse_module_limited(
      text, len, name, opts ? opts->limits : NULL, m, diag);
  shlo__ctx_swap(prev);
  if (st == SHLO_OK) st = shlo_compile(*m, opts, e, diag); /* verifies */
  if (st != SHLO_OK) {
    /* Compile diagnostics name the module's copy of the file name, which
     * dies with the module: point them at the caller's. */
    if (diag && *m && diag->file == (*m)->filename) diag->file = name;
    shlo_module_free(*m);
    *m = NULL;
  }
  return st;
}

shlo_status shlo_load_file(const char *path, const shlo_compile_opts *opts,
                           shlo_module **m, shlo_executable **e,
                           shlo_diag *diag) {
  *m = NULL;
  *e = NULL;
  size_t len;
  char *text = shlo_read_file(path, &len, diag);
  if (!text) return diag ? diag->code : SHLO_EINPUT;
  shlo_status st = shlo_load(text, len, path, opts, m, e, diag);
  free(text); /* the module keeps no pointer into the text */
  return st;
}
