/* SPDX-License-Identifier: Apache-2.0 */
/* Remote runs for `shlo test`, `shlo run` and `shlo bench`: the program's
 * text (and a case's RUN-line arguments) go to the server; its answer is
 * judged and printed as the local run judges and prints the engine's, so
 * the lines and the summary agree. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "remote.h"
#include "shlo/engine.h"

#ifdef SHLO_HAVE_CLIENT
#include "shlo/client.h"

struct shlo_client *remote_connect(const char *url) {
  shlo_client_error err;
  shlo_client *c = shlo_client_connect(url, getenv("SHLO_TOKEN"), &err);
  if (!c) fprintf(stderr, "shlo: %s: %s\n", url, err.message);
  return c;
}

void remote_close(struct shlo_client *c) { shlo_client_close(c); }

/* The server's error as the engine's diagnostic would print it. */
static void format_error(const shlo_client_error *e, const char *file,
                         char *msg, size_t cap) {
  const char *m = e->message;
  /* The server adds this prefix; the engine's own message may lack it. */
  if (e->engine_status == SHLO_EUNSUPPORTED &&
      !strncmp(m, "not implemented: ", 17) && strstr(m + 17, "not implemented"))
    m += 17;
  if (e->line > 0)
    snprintf(msg, cap, "%s:%d:%d: error: %s", file, e->line, e->column, m);
  else
    snprintf(msg, cap, "error: %s", m);
}

/* Whether the case's entry takes arguments, as the local run decides
 * whether to read the RUN line's: -1 when the text does not parse here
 * (the server reports that), else the count. */
static int entry_args(const char *file, const char *text, size_t len,
                      const char **name) {
  shlo_module *m;
  shlo_diag d;
  if (shlo_parse_module(text, len, file, &m, &d)) return -1;
  const shlo_func *f = cli_default_entry(m);
  static _Thread_local char buf[256];
  snprintf(buf, sizeof buf, "%s", f ? f->name : "");
  *name = buf;
  int n = f ? f->n_args : -1;
  shlo_module_free(m);
  return n;
}

int remote_case(struct shlo_client *c, const char *file, const char *text,
                size_t len, const char *args_text, double timeout, char *msg,
                size_t cap, char **printed) {
  shlo_value **args = NULL;
  int n_args = 0;
  msg[0] = 0;
  *printed = NULL;
  const char *entry = NULL;
  int takes = entry_args(file, text, len, &entry);
  if (takes == 0) args_text = NULL; /* the local run ignores them too */
  if (args_text) {
    shlo_diag d;
    shlo_diag_clear(&d);
    if (shlo_parse_values(args_text, strlen(args_text), &args, &n_args, &d)) {
      shlo_diag_format(&d, msg, cap);
      return 'F';
    }
  }
  shlo_client_request rq = {.program = text, .program_len = len,
                            .inputs = args, .n_inputs = n_args,
                            .timeout_ms = timeout * 1000,
                            .printed = printed};
  shlo_value **outs = NULL;
  int n = 0;
  shlo_client_error err;
  int rc = shlo_client_execute(c, &rq, &outs, &n, &err);
  for (int i = 0; i < n_args; i++) shlo_value_unref(args[i]);
  free(args);
  for (int i = 0; i < n; i++) shlo_value_unref(outs[i]);
  free(outs);
  if (!rc) return 'P';
  /* A case without functions passes locally: nothing to run. */
  if (!strcmp(err.kind, "verify") &&
      strstr(err.message, "defines no function"))
    return 'P';
  if (takes > 0 && !args_text && !strcmp(err.kind, "input")) {
    /* Compiled, then refused for want of inputs: the local words. */
    snprintf(msg, cap, "entry function @%s takes arguments and the file "
             "gives none (--args in a RUN line)", entry);
    return 'F';
  }
  format_error(&err, file, msg, cap);
  return err.engine_status == SHLO_EUNSUPPORTED ? 'S' : 'F';
}

static void print_error(const shlo_client_error *e, const char *file) {
  char msg[sizeof e->message + 512];
  format_error(e, file, msg, sizeof msg);
  fprintf(stderr, "%s\n", msg);
}

int remote_execute(struct shlo_client *c, const remote_exec *rx,
                   shlo_value ***outs, int *n) {
  char *printed = NULL;
  shlo_client_request rq = {.program = rx->module_id ? NULL : rx->text,
                            .program_len = rx->module_id ? 0 : rx->len,
                            .module_id = rx->module_id, .entry = rx->entry,
                            .inputs = rx->args, .n_inputs = rx->n_args,
                            .replicas = rx->replicas,
                            .partitions = rx->partitions,
                            .printed = &printed};
  shlo_client_error err;
  int rc = shlo_client_execute(c, &rq, outs, n, &err);
  if (printed) fputs(printed, stdout);
  free(printed);
  if (rc) print_error(&err, rx->file);
  return rc ? 1 : 0;
}

int remote_compile(struct shlo_client *c, const char *file, const char *text,
                   size_t len, char *id) {
  shlo_client_module m;
  shlo_client_error err;
  if (shlo_client_compile(c, text, len, NULL, &m, &err)) {
    print_error(&err, file);
    return 1;
  }
  snprintf(id, 80, "%s", m.id);
  return 0;
}

#else /* built without libcurl: no libshlo-client */

struct shlo_client *remote_connect(const char *url) {
  fprintf(stderr, "shlo: --server %s: this build has no libshlo-client "
                  "(libcurl was missing)\n", url);
  return NULL;
}
void remote_close(struct shlo_client *c) { (void)c; }
int remote_case(struct shlo_client *c, const char *file, const char *text,
                size_t len, const char *args_text, double timeout, char *msg,
                size_t cap, char **printed) {
  (void)c, (void)file, (void)text, (void)len, (void)args_text, (void)timeout;
  *printed = NULL;
  snprintf(msg, cap, "no libshlo-client in this build");
  return 'F';
}
int remote_execute(struct shlo_client *c, const remote_exec *rx,
                   shlo_value ***outs, int *n) {
  (void)c, (void)rx, (void)outs, (void)n;
  return 1;
}
int remote_compile(struct shlo_client *c, const char *file, const char *text,
                   size_t len, char *id) {
  (void)c, (void)file, (void)text, (void)len, (void)id;
  return 1;
}
#endif
