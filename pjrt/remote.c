/* SPDX-License-Identifier: Apache-2.0 */
/* The remote mode: with SHLO_PJRT_SERVER=shlo://host:port (or the client
 * create option "server"), programs are compiled and executed by a
 * shlo-server over the binary protocol (libshlo-client), with the
 * caller's token ($SHLO_PJRT_TOKEN or the create option "token").
 *
 * Compile parses the program here only to learn its entry function's
 * signature (no verification, no plan: the server does both, and its
 * diagnostics come back as the PJRT error); the server keeps the module
 * in its cache under the id it answers.  Execute sends the argument
 * buffers' bytes with that id and keeps what comes back.  Buffers live in
 * this process: the binary protocol has no server-side buffers yet, so
 * each execution ships its inputs and outputs (docs/pjrt.md). */
#include "pjrt_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shlo/client.h"

/* A create option's string value, or NULL. */
static const char *string_option(const PJRT_Client_Create_Args *a,
                                 const char *name, char *buf, size_t cap) {
  for (size_t i = 0; a->create_options && i < a->num_options; i++) {
    const PJRT_NamedValue *v = &a->create_options[i];
    if (v->type == PJRT_NamedValue_kString && v->name &&
        v->name_size == strlen(name) && !memcmp(v->name, name, v->name_size)) {
      snprintf(buf, cap, "%.*s", (int)v->value_size, v->string_value);
      return buf;
    }
  }
  return NULL;
}

static PJRT_Error_Code code_of_kind(const shlo_client_error *e) {
  static const struct { const char *kind; PJRT_Error_Code code; } map[] = {
      {"parse", PJRT_Error_Code_INVALID_ARGUMENT},
      {"verify", PJRT_Error_Code_INVALID_ARGUMENT},
      {"input", PJRT_Error_Code_INVALID_ARGUMENT},
      {"limit", PJRT_Error_Code_RESOURCE_EXHAUSTED},
      {"runtime", PJRT_Error_Code_INTERNAL},
      {"timeout", PJRT_Error_Code_DEADLINE_EXCEEDED},
      {"auth", PJRT_Error_Code_UNAUTHENTICATED},
      {"not_found", PJRT_Error_Code_NOT_FOUND},
      {"connection", PJRT_Error_Code_UNAVAILABLE},
  };
  if (e->engine_status == SHLO_EUNSUPPORTED)
    return PJRT_Error_Code_UNIMPLEMENTED;
  for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
    if (!strcmp(e->kind, map[i].kind)) return map[i].code;
  return PJRT_Error_Code_UNKNOWN;
}

static PJRT_Error *remote_error(const char *what, const PJRT_Client *c,
                                const shlo_client_error *e) {
  if (e->line > 0)
    return shlo_pjrt_error(code_of_kind(e), "shlo %s (server %s): %s error "
                           "at pjrt_program:%d:%d: %s", what, c->server_url,
                           e->kind, e->line, e->column, e->message);
  return shlo_pjrt_error(code_of_kind(e), "shlo %s (server %s): %s error: %s",
                         what, c->server_url, e->kind, e->message);
}

PJRT_Error *shlo_pjrt_remote_connect(PJRT_Client *c,
                                     const PJRT_Client_Create_Args *a) {
  char url[sizeof c->server_url], token[512];
  const char *u = string_option(a, "server", url, sizeof url);
  if (u == NULL) u = getenv("SHLO_PJRT_SERVER");
  if (u == NULL || *u == 0) return NULL; /* in-process */
  const char *t = string_option(a, "token", token, sizeof token);
  if (t == NULL) t = getenv("SHLO_PJRT_TOKEN");
  snprintf(c->server_url, sizeof c->server_url, "%s", u);
  shlo_client_error err;
  memset(&err, 0, sizeof err);
  c->remote = shlo_client_connect(c->server_url, t, &err);
  if (c->remote == NULL) return remote_error("connect", c, &err);
  return NULL;
}

void shlo_pjrt_remote_close(PJRT_Client *c) {
  if (c->remote) shlo_client_close(c->remote);
  c->remote = NULL;
}

PJRT_Error *shlo_pjrt_remote_compile(PJRT_Client *c, shlo_pjrt_program *p,
                                     const char *code, size_t len) {
  shlo_diag diag;
  shlo_diag_clear(&diag);
  if (shlo_parse_module(code, len, "pjrt_program", &p->module, &diag) != SHLO_OK)
    return shlo_pjrt_error_from_diag("compile", &diag);
  if (shlo_module_entry(p->module) == NULL)
    return shlo_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT,
                           "shlo compile: the program has no @main and more "
                           "than one function");
  shlo_client_module m;
  shlo_client_error err;
  memset(&err, 0, sizeof err);
  if (shlo_client_compile(c->remote, code, len, NULL, &m, &err) != 0)
    return remote_error("compile", c, &err);
  snprintf(p->module_id, sizeof p->module_id, "%s", m.id);
  return NULL;
}

PJRT_Error *shlo_pjrt_remote_execute(PJRT_Client *c,
                                     const shlo_pjrt_program *p,
                                     shlo_value *const *in, int n_in,
                                     shlo_value ***out, int *n_out) {
  shlo_client_request rq;
  memset(&rq, 0, sizeof rq);
  rq.module_id = p->module_id;
  rq.inputs = in;
  rq.n_inputs = n_in;
  shlo_client_error err;
  memset(&err, 0, sizeof err);
  if (shlo_client_execute(c->remote, &rq, out, n_out, &err) != 0)
    return remote_error("execute", c, &err);
  return NULL;
}
