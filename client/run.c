/* shlo run and shlo print. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "shlo/engine.h"

char *cli_read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "shlo: cannot open %s\n", path);
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
    fprintf(stderr, "shlo: cannot read %s\n", path);
    free(buf);
    return NULL;
  }
  buf[n] = 0;
  *len = n;
  return buf;
}

static void print_diag(const shlo_diag *d) {
  char msg[SHLO_DIAG_MAX + 256];
  shlo_diag_format(d, msg, sizeof msg);
  fprintf(stderr, "%s\n", msg);
}

int cli_run(int argc, char **argv) {
  const char *path = NULL, *args_text = NULL, *entry = NULL;
  bool explain = false;
  for (int i = 0; i < argc; i++) {
    if (!strcmp(argv[i], "--args") && i + 1 < argc) args_text = argv[++i];
    else if (!strcmp(argv[i], "--entry") && i + 1 < argc) entry = argv[++i];
    else if (!strcmp(argv[i], "--explain")) explain = true;
    else if (argv[i][0] == '-' && argv[i][1]) {
      fprintf(stderr, "shlo run: unknown option '%s'\n", argv[i]);
      return 2;
    } else if (!path) path = argv[i];
    else {
      fprintf(stderr, "shlo run: one program file at a time\n");
      return 2;
    }
  }
  if (!path) {
    fprintf(stderr, "usage: shlo run FILE.mlir [--args \"[...]\"] [--entry "
                    "NAME] [--explain]\n");
    return 2;
  }
  int rc = 1;
  size_t len;
  char *text = cli_read_file(path, &len);
  shlo_module *m = NULL;
  shlo_executable *e = NULL;
  shlo_value **args = NULL, **results = NULL;
  int n_args = 0, n_results = 0;
  shlo_diag d;
  shlo_diag_clear(&d);
  if (!text) goto done;
  if (shlo_parse_module(text, len, path, &m, &d)) {
    print_diag(&d);
    goto done;
  }
  if (args_text &&
      shlo_parse_values(args_text, strlen(args_text), &args, &n_args, &d)) {
    fprintf(stderr, "shlo run: --args: ");
    print_diag(&d);
    goto done;
  }
  shlo_compile_opts co = {.entry = entry};
  if (shlo_compile(m, &co, &e, &d)) {
    print_diag(&d);
    goto done;
  }
  if (explain) {
    shlo_executable_explain(e, stdout);
    rc = 0;
    goto done;
  }
  if (shlo_execute(e, NULL, args, n_args, &results, &n_results, &d)) {
    print_diag(&d);
    goto done;
  }
  rc = 0;
  for (int i = 0; i < n_results; i++) {
    char *s = shlo_value_to_string(results[i]);
    if (!s) {
      fprintf(stderr, "shlo: out of memory\n");
      rc = 1;
      break;
    }
    printf("%s\n", s);
    free(s);
  }
done:
  for (int i = 0; i < n_results; i++) shlo_value_unref(results[i]);
  free(results);
  for (int i = 0; i < n_args; i++) shlo_value_unref(args[i]);
  free(args);
  shlo_executable_free(e);
  shlo_module_free(m);
  free(text);
  return rc;
}

int cli_print(int argc, char **argv) {
  if (argc != 1) {
    fprintf(stderr, "usage: shlo print FILE.mlir\n");
    return 2;
  }
  size_t len;
  char *text = cli_read_file(argv[0], &len);
  if (!text) return 1;
  shlo_module *m;
  shlo_diag d;
  int rc = 1;
  if (shlo_parse_module(text, len, argv[0], &m, &d)) {
    print_diag(&d);
  } else {
    char *out = shlo_module_print(m);
    if (out) {
      fputs(out, stdout);
      rc = 0;
    }
    free(out);
    shlo_module_free(m);
  }
  free(text);
  return rc;
}
