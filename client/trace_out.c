/* SPDX-License-Identifier: Apache-2.0 */
/* --trace FILE of shlo run and shlo bench: the trace as Chrome
 * trace-event JSON, for Perfetto UI or chrome://tracing. */
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "shlo/trace.h"

int cli_trace_write(shlo_trace *t, const char *path,
                    const char *command) {
  char other[128];
  snprintf(other, sizeof other, "\"command\":\"%s\"", command);
  char *json = shlo_trace_json(t, other);
  if (!json) {
    fprintf(stderr, "shlo: out of memory for the trace\n");
    return 1;
  }
  FILE *f = fopen(path, "w");
  int rc = 0;
  if (!f || fputs(json, f) == EOF || fputc('\n', f) == EOF) rc = 1;
  if (f && fclose(f)) rc = 1;
  if (rc) perror(path);
  else if (shlo_trace_dropped(t))
    fprintf(stderr, "shlo: the trace was full: %lld spans left out of %s\n",
            (long long)shlo_trace_dropped(t), path);
  free(json);
  return rc;
}
