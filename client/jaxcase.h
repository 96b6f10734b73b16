/* SPDX-License-Identifier: Apache-2.0 */
/* `shlo test` on the JSON cases of JAX exports (jaxcase.c). */
#ifndef SHLO_CLI_JAXCASE_H
#define SHLO_CLI_JAXCASE_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

struct shlo_client;

/* Whether a path names such a case (it ends in .json). */
static inline bool jaxcase_is_case(const char *path) {
  size_t n = strlen(path);
  return n >= 5 && !strcmp(path + n - 5, ".json");
}

/* Run one case (the file's text), here or at server when it is not NULL;
 * 'P', 'F' or 'S' as `shlo test` reports it, the reason in msg. */
int jaxcase_run(const char *file, const char *text, size_t len,
                double timeout, struct shlo_client *server, char *msg,
                size_t cap);

#endif
