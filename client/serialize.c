/* `shlo serialize`: a StableHLO text (or artifact) written as a portable
 * artifact for a chosen StableHLO version (shlo/artifact.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "shlo/artifact.h"
#include "shlo/engine.h"

static int usage(void) {
  fprintf(stderr, "usage: shlo serialize [--target VERSION] IN.mlir -o "
                  "OUT.mlir.bc\n  VERSION: %s through %s (default: the "
                  "newest)\n", SHLO_ARTIFACT_MIN_WRITE_VERSION,
          SHLO_ARTIFACT_MAX_VERSION);
  return 2;
}

static int write_file(const char *path, const void *bytes, size_t len) {
  FILE *f = fopen(path, "wb");
  if (!f) {
    perror(path);
    return 1;
  }
  bool ok = fwrite(bytes, 1, len, f) == len;
  ok = fclose(f) == 0 && ok;
  if (!ok) {
    perror(path);
    remove(path);
  }
  return ok ? 0 : 1;
}

int cli_serialize(int argc, char **argv) {
  const char *in = NULL, *out = NULL, *target = NULL;
  for (int i = 0; i < argc; i++) {
    if (!strcmp(argv[i], "--target") && i + 1 < argc) target = argv[++i];
    else if (!strcmp(argv[i], "-o") && i + 1 < argc) out = argv[++i];
    else if (argv[i][0] != '-' && !in) in = argv[i];
    else return usage();
  }
  if (!in || !out) return usage();
  size_t len;
  char *text = cli_read_file(in, &len);
  if (!text) return 1;
  shlo_module *m = NULL;
  shlo_diag d;
  shlo_diag_clear(&d);
  int rc = 1;
  if (shlo_parse_module(text, len, in, &m, &d)) {
    cli_print_diag(&d);
  } else {
    void *bytes = NULL;
    size_t n = 0;
    if (shlo_write_artifact(m, target, &bytes, &n, &d)) {
      fprintf(stderr, "%s: error: %s\n", in, d.message);
    } else {
      rc = write_file(out, bytes, n);
    }
    free(bytes);
    shlo_module_free(m);
  }
  free(text);
  return rc;
}
