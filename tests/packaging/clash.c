/* SPDX-License-Identifier: Apache-2.0 */
/* A program with its own functions named like the parser's helpers links
 * libshlo.so (not the static library), parses, verifies, compiles and runs
 * a module through the public API, then calls its own functions.
 *
 * libshlo is built with hidden visibility, so none of its internal names is
 * in the shared library's dynamic symbol table.  Were one exported, the
 * dynamic linker would bind the library's own calls to the program's
 * function of that name (this program is linked with --export-dynamic, as
 * programs with plugins are): the counters below would move during the
 * library calls and the module would not parse.  The program's own calls
 * must land in its own functions, with its own semantics. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shlo/engine.h"
#include "shlo/ir.h"
#include "shlo/tensor.h"
#include "shlo/verify.h"

static int calls; /* calls to any of the functions below */

/* Names the parser used before its helpers became shlo__ (and static), with
 * this program's own meanings and signatures. */
int accept(int x) { calls++; return x + 1; }
int expect(int x) { calls++; return x * 2; }
const char *ident(void) { calls++; return "mine"; }
int depth;
void enter(void) { calls++; depth++; }
void leave(void) { calls++; depth--; }
int parse_type(const char *s) { calls++; return (int)strlen(s); }
int skip_ws(int n) { calls++; return n - 1; }
int peek(void) { calls++; return 42; }
int next(int x) { calls++; return x + 10; }
int lex(int x) { calls++; return -x; }
int error(int x) { calls++; return x ^ 1; }
int parse_op(int x) { calls++; return x * 3; }
int parse_attr(int x) { calls++; return x * 5; }
int parse_region(int x) { calls++; return x * 7; }
int intern(int x) { calls++; return x * 11; }

/* The library's real internal names (shlo/src: shlo__*). */
int shlo__accept(int x) { calls++; return x + 100; }
int shlo__expect(int x) { calls++; return x + 200; }
int shlo__ident(int x) { calls++; return x + 300; }
int shlo__parse_type(int x) { calls++; return x + 400; }
int shlo__skip_ws(int x) { calls++; return x + 500; }
int shlo__parse_attr(int x) { calls++; return x + 600; }
int shlo__parse_region(int x) { calls++; return x + 700; }

static int failures;
#define CHECK(cond)                                                   \
  do {                                                                \
    if (!(cond)) {                                                    \
      fprintf(stderr, "%s:%d: FAILED: %s\n", __FILE__, __LINE__, #cond); \
      failures++;                                                     \
    }                                                                 \
  } while (0)

static const char program[] =
    "func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {\n"
    "  %c = stablehlo.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>\n"
    "  %s = stablehlo.add %x, %c : tensor<3xf32>\n"
    "  %m = stablehlo.multiply %s, %s : tensor<3xf32>\n"
    "  func.return %m : tensor<3xf32>\n"
    "}\n";

static void run_library(void) {
  shlo_diag diag;
  shlo_diag_clear(&diag);
  shlo_module *m = NULL;
  shlo_status st =
      shlo_parse_module(program, strlen(program), "clash.mlir", &m, &diag);
  if (st) fprintf(stderr, "parse: %s\n", diag.message);
  CHECK(st == SHLO_OK);
  if (!m) return;
  CHECK(shlo_module_entry(m) != NULL);

  shlo_diag_list diags;
  shlo_diag_list_init(&diags);
  CHECK(shlo_verify_module(m, NULL, &diags) == SHLO_OK);
  shlo_diag_list_free(&diags);

  shlo_executable *e = NULL;
  st = shlo_compile(m, NULL, &e, &diag);
  if (st) fprintf(stderr, "compile: %s\n", diag.message);
  CHECK(st == SHLO_OK);
  if (e) {
    shlo_value **args = NULL;
    int n_args = 0;
    const char *arg = "[dense<[0.5, -1.0, 2.0]> : tensor<3xf32>]";
    CHECK(shlo_parse_values(arg, strlen(arg), &args, &n_args, &diag) ==
          SHLO_OK);
    CHECK(n_args == 1);
    shlo_value **res = NULL;
    int n_res = 0;
    st = shlo_execute(e, NULL, args, n_args, &res, &n_res, &diag);
    if (st) fprintf(stderr, "execute: %s\n", diag.message);
    CHECK(st == SHLO_OK);
    CHECK(n_res == 1);
    if (st == SHLO_OK && n_res == 1) {
      /* (x + c)^2 = 2.25, 1, 25 */
      CHECK(shlo_tensor_get_f64(res[0], 0) == 2.25);
      CHECK(shlo_tensor_get_f64(res[0], 1) == 1.0);
      CHECK(shlo_tensor_get_f64(res[0], 2) == 25.0);
    }
    for (int i = 0; i < n_res; i++) shlo_value_unref(res[i]);
    free(res);
    for (int i = 0; i < n_args; i++) shlo_value_unref(args[i]);
    free(args);
    shlo_executable_free(e);
  }
  char *text = shlo_module_print(m);
  CHECK(text != NULL && strstr(text, "stablehlo.multiply") != NULL);
  free(text);
  shlo_module_free(m);

  /* A bad program goes through the parser's error paths too. */
  const char *bad = "func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {\n"
                    "  %y = stablehlo.add %x, %x : tensor<3xf32\n"
                    "  func.return %y : tensor<3xf32>\n}\n";
  m = NULL;
  CHECK(shlo_parse_module(bad, strlen(bad), "bad.mlir", &m, &diag) ==
        SHLO_EPARSE);
  CHECK(m == NULL);
  CHECK(diag.line == 2 || diag.line == 3); /* the unclosed type */
}

int main(void) {
  run_library();
  /* The library never reached this program's functions. */
  if (calls) fprintf(stderr, "the library called %d of the program's functions\n", calls);
  CHECK(calls == 0);

  /* The program's own calls reach its own functions. */
  CHECK(accept(1) == 2);
  CHECK(expect(4) == 8);
  CHECK(strcmp(ident(), "mine") == 0);
  enter();
  enter();
  leave();
  CHECK(depth == 1);
  CHECK(parse_type("tensor") == 6);
  CHECK(skip_ws(5) == 4);
  CHECK(peek() == 42);
  CHECK(next(1) == 11);
  CHECK(lex(3) == -3);
  CHECK(error(2) == 3);
  CHECK(parse_op(2) == 6);
  CHECK(parse_attr(2) == 10);
  CHECK(parse_region(2) == 14);
  CHECK(intern(2) == 22);
  CHECK(shlo__accept(1) == 101);
  CHECK(shlo__expect(1) == 201);
  CHECK(shlo__ident(1) == 301);
  CHECK(shlo__parse_type(1) == 401);
  CHECK(shlo__skip_ws(1) == 501);
  CHECK(shlo__parse_attr(1) == 601);
  CHECK(shlo__parse_region(1) == 701);
  CHECK(calls == 23);

  if (failures) {
    fprintf(stderr, "%d checks failed\n", failures);
    return 1;
  }
  printf("libshlo.so's internal calls stayed inside it; the program's own "
         "%d functions ran\n", calls);
  return 0;
}
