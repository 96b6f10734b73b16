/* SPDX-License-Identifier: Apache-2.0 */
/* A program outside the project that uses the installed libshlo-client,
 * built only from what `cmake --install` put in a prefix (with pkg-config
 * or with find_package(shlo), shared or static): sends a program and two
 * inputs made with libshlo's values to a running shlo-server, over HTTP
 * and over the binary protocol, and checks the answer.
 * usage: client_consumer HTTP_URL SHLO_URL */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <shlo/client.h>
#include <shlo/tensor.h>

static const char program[] =
    "func.func @main(%x: tensor<3xf32>, %y: tensor<3xf32>) -> tensor<3xf32> {\n"
    "  %s = stablehlo.add %x, %y : tensor<3xf32>\n"
    "  %p = stablehlo.multiply %s, %x : tensor<3xf32>\n"
    "  func.return %p : tensor<3xf32>\n"
    "}\n";

/* A new f32 vector holding v[0..2]; NULL when out of memory. */
static shlo_value *vector3(const float v[3]) {
  const int64_t dims[1] = {3};
  shlo_value *t = shlo_tensor_new(SHLO_F32, 1, dims);
  if (t) memcpy(shlo_tensor_data(t), v, 3 * sizeof *v);
  return t;
}

/* One execution against url: 0 when the server answered (x + y) * x. */
static int run_once(const char *url, shlo_value *const in[2]) {
  shlo_client_error err;
  shlo_client *c = shlo_client_connect(url, NULL, &err);
  if (!c) {
    fprintf(stderr, "client_consumer: %s: %s: %s\n", url, err.kind, err.message);
    return 1;
  }
  shlo_client_request rq = {.program = program, .program_len = strlen(program),
                            .inputs = in, .n_inputs = 2};
  shlo_value **outs = NULL;
  int n_outs = 0, bad = 0;
  if (shlo_client_execute(c, &rq, &outs, &n_outs, &err)) {
    fprintf(stderr, "client_consumer: %s: execute: %s: %s\n", url, err.kind,
            err.message);
    bad = 1;
  } else {
    /* x = [1, 2, 3], y = [4, 5, 6]: (x + y) * x = [5, 14, 27] */
    const double want[3] = {5, 14, 27};
    bad = n_outs != 1;
    for (int i = 0; !bad && i < 3; i++)
      if (shlo_tensor_get_f64(outs[0], i) != want[i]) bad = 1;
    if (bad) fprintf(stderr, "client_consumer: %s: wrong answer\n", url);
    for (int i = 0; i < n_outs; i++) shlo_value_release(outs[i]);
    free(outs);
  }
  shlo_client_close(c);
  if (!bad) printf("client_consumer: %s: ok\n", url);
  return bad;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: client_consumer HTTP_URL SHLO_URL\n");
    return 2;
  }
  const float x[3] = {1, 2, 3}, y[3] = {4, 5, 6};
  shlo_value *in[2] = {vector3(x), vector3(y)};
  int bad = !in[0] || !in[1];
  if (!bad) bad = run_once(argv[1], in) | run_once(argv[2], in);
  shlo_value_release(in[0]);
  shlo_value_release(in[1]);
  return bad;
}
