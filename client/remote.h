/* `shlo test|run --server URL`: the same cases and values, executed by a
 * shlo-server through libshlo-client. */
#ifndef SHLO_CLI_REMOTE_H
#define SHLO_CLI_REMOTE_H

#include <stddef.h>

struct shlo_client;

/* Connect to URL (token from $SHLO_TOKEN); NULL after a message. */
struct shlo_client *remote_connect(const char *url);
void remote_close(struct shlo_client *c);

/* One test case run remotely: 'P', 'F' or 'S' as `shlo test` reports it
 * locally, the reason in msg ("file:line:col: error: ..." as the engine's
 * diagnostics read). */
int remote_case(struct shlo_client *c, const char *file, const char *text,
                size_t len, const char *args_text, double timeout, char *msg,
                size_t cap);

#endif
