/* SPDX-License-Identifier: Apache-2.0 */
/* A program outside the project, built only from what `cmake --install`
 * put in a prefix, with `cc consumer.c $(pkg-config --cflags --libs
 * libshlo)`: parses, compiles and runs a small program and checks that the
 * library is the version its headers name.
 * usage: consumer EXPECTED_VERSION */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <shlo/engine.h>
#include <shlo/ir.h>
#include <shlo/tensor.h>
#include <shlo/version.h>

static const char program[] =
    "func.func @main(%x: tensor<2x2xf32>, %y: tensor<2x2xf32>) -> tensor<2x2xf32> {\n"
    "  %d = stablehlo.dot_general %x, %y, contracting_dims = [1] x [0] :"
    " (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>\n"
    "  %t = stablehlo.transpose %d, dims = [1, 0] : (tensor<2x2xf32>) -> tensor<2x2xf32>\n"
    "  func.return %t : tensor<2x2xf32>\n"
    "}\n";
static const char inputs[] =
    "[dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>,"
    " dense<[[5.0, 6.0], [7.0, 8.0]]> : tensor<2x2xf32>]";

static int fail(const char *what, const shlo_diag *d) {
  char buf[2048];
  shlo_diag_format(d, buf, sizeof buf);
  fprintf(stderr, "consumer: %s: %s\n", what, buf);
  return 1;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: consumer EXPECTED_VERSION\n");
    return 2;
  }
  char header[64];
  snprintf(header, sizeof header, "%d.%d.%d", SHLO_VERSION_MAJOR,
           SHLO_VERSION_MINOR, SHLO_VERSION_PATCH);
  printf("header %s (%s), library %s, project %s\n", SHLO_VERSION_STRING,
         header, shlo_version(), argv[1]);
  if (strcmp(header, SHLO_VERSION_STRING) || strcmp(shlo_version(), SHLO_VERSION_STRING) ||
      strcmp(argv[1], SHLO_VERSION_STRING)) {
    fprintf(stderr, "consumer: versions differ\n");
    return 1;
  }

  shlo_diag diag;
  shlo_diag_clear(&diag);
  shlo_module *m;
  if (shlo_parse_module(program, strlen(program), "consumer.mlir", &m, &diag))
    return fail("parse", &diag);
  shlo_executable *e;
  if (shlo_compile(m, NULL, &e, &diag)) return fail("compile", &diag);
  shlo_value **args, **res;
  int n_args, n_res;
  if (shlo_parse_values(inputs, strlen(inputs), &args, &n_args, &diag))
    return fail("inputs", &diag);
  if (shlo_execute(e, NULL, args, n_args, &res, &n_res, &diag))
    return fail("execute", &diag);

  /* x.y = [[19, 22], [43, 50]], transposed */
  const double want[4] = {19, 43, 22, 50};
  int bad = n_res != 1;
  for (int i = 0; !bad && i < 4; i++)
    if (shlo_tensor_get_f64(res[0], i) != want[i]) bad = 1;
  char *text = n_res == 1 ? shlo_value_to_string(res[0]) : NULL;
  printf("result: %s\n", text ? text : "(none)");
  free(text);
  for (int i = 0; i < n_res; i++) shlo_value_unref(res[i]);
  free(res);
  for (int i = 0; i < n_args; i++) shlo_value_unref(args[i]);
  free(args);
  shlo_executable_free(e);
  shlo_module_free(m);
  if (bad) {
    fprintf(stderr, "consumer: wrong result\n");
    return 1;
  }
  printf("consumer: ok\n");
  return 0;
}
