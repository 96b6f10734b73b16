/* SPDX-License-Identifier: Apache-2.0 */
/* A program outside the project with its own functions named as the
 * internals of libshlo.a and libshlo-client.a were once named (bc_free,
 * bw_*, vhlo_*, client_*) and as a parser's helpers are commonly named
 * (accept, expect, ...), linked statically against the installed archives
 * (symbols.sh builds it twice: as a program normally links, and with every
 * member of both archives forced in).
 *
 * With a static archive nothing hides a name: had the library kept one of
 * these as a global, the link would fail with "multiple definition" as
 * soon as the member defining it came in -- which the calls below make
 * sure of: they parse a module, write it as a portable artifact (the
 * bytecode writer, VHLO raising), read it back (the bytecode reader, VHLO
 * lowering), compile and run it, and open clients of both protocols.
 * At run time the library's calls must not land in this program's
 * functions, and this program's calls must reach its own.
 * usage: static_clash [--no-client] */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <shlo/artifact.h>
#include <shlo/engine.h>
#include <shlo/ir.h>
#include <shlo/tensor.h>
#ifndef SHLO_NO_CLIENT
#include <shlo/client.h>
#endif

static int calls; /* calls to any function below */

/* Every name the archives defined before they took the shlo__ prefix,
 * and a few a parser might use, each with this program's own meaning: the
 * value it returns is x plus its place in the list. */
#define MINE(X)                                                            \
  X(bc_alloc) X(bc_apint) X(bc_at_end) X(bc_byte) X(bc_bytes) X(bc_count)  \
  X(bc_fail) X(bc_free) X(bc_index) X(bc_is_bytecode) X(bc_read)           \
  X(bc_string) X(bc_svarint) X(bc_varint) X(bw_alloc) X(bw_attr)           \
  X(bw_attr_text) X(bw_begin) X(bw_buf_free) X(bw_byte) X(bw_bytes)        \
  X(bw_dialect) X(bw_fail) X(bw_finish) X(bw_free) X(bw_opname)            \
  X(bw_props) X(bw_string) X(bw_svarint) X(bw_type) X(bw_varint)           \
  X(vhlo_attr) X(vhlo_buf) X(vhlo_buf_take) X(vhlo_ctx_free_bufs)          \
  X(vhlo_ctx_init) X(vhlo_enum_attr_code) X(vhlo_enum_value)               \
  X(vhlo_lower_op) X(vhlo_numel) X(vhlo_op_at) X(vhlo_op_attr_names)       \
  X(vhlo_op_find) X(vhlo_print_float) X(vhlo_put_dict)                     \
  X(vhlo_put_extra_attrs) X(vhlo_put_string) X(vhlo_scalar_code)           \
  X(vhlo_type) X(vhlo_version_format) X(vhlo_version_parse)                \
  X(client_bin_connect) X(client_bin_ops) X(client_call_finish)            \
  X(client_err_conn) X(client_err_from_proto) X(client_http_connect)       \
  X(client_http_ops) X(client_call) X(client_free) X(expect)               \
  X(parse_type) X(skip_ws) X(ident) X(intern)

#define PLACE(name) PLACE_##name,
enum { MINE(PLACE) N_MINE };
#define DEFINE(name)                                                       \
  int name(int x) {                                                        \
    calls++;                                                               \
    return x + PLACE_##name;                                               \
  }
MINE(DEFINE)

/* accept() with libc's signature (this file needs <sys/socket.h>): in this
 * program it accepts nothing. */
int accept(int fd, struct sockaddr *addr, socklen_t *len) {
  (void)fd, (void)addr, (void)len;
  calls++;
  return -1;
}

typedef int (*mine_fn)(int);
#define ENTRY(name) {#name, name},
static const struct {
  const char *name;
  mine_fn fn;
} mine[] = {MINE(ENTRY)};

static int failures;
#define CHECK(cond)                                                        \
  do {                                                                     \
    if (!(cond)) {                                                         \
      fprintf(stderr, "%s:%d: FAILED: %s\n", __FILE__, __LINE__, #cond);   \
      failures++;                                                          \
    }                                                                      \
  } while (0)

static const char program[] =
    "func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {\n"
    "  %c = stablehlo.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>\n"
    "  %s = stablehlo.add %x, %c : tensor<3xf32>\n"
    "  %m = stablehlo.multiply %s, %s : tensor<3xf32>\n"
    "  func.return %m : tensor<3xf32>\n"
    "}\n";

static void report(const char *what, const shlo_diag *d) {
  char buf[2048];
  shlo_diag_format(d, buf, sizeof buf);
  fprintf(stderr, "static_clash: %s: %s\n", what, buf);
}

/* Compiles and runs m on [0.5, -1, 2]: (x + [1, 2, 3])^2. */
static void run_module(shlo_module *m) {
  shlo_diag diag;
  shlo_diag_clear(&diag);
  shlo_executable *e = NULL;
  if (shlo_compile(m, NULL, &e, &diag)) {
    report("compile", &diag);
    failures++;
    return;
  }
  const char *arg = "[dense<[0.5, -1.0, 2.0]> : tensor<3xf32>]";
  shlo_value **args = NULL, **res = NULL;
  int n_args = 0, n_res = 0;
  CHECK(shlo_parse_values(arg, strlen(arg), &args, &n_args, &diag) == SHLO_OK);
  shlo_status st = shlo_execute(e, NULL, args, n_args, &res, &n_res, &diag);
  if (st) report("execute", &diag);
  CHECK(st == SHLO_OK && n_res == 1);
  if (st == SHLO_OK && n_res == 1) {
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

/* Text -> module -> artifact -> module, each module run. */
static void run_engine(void) {
  shlo_diag diag;
  shlo_diag_clear(&diag);
  shlo_module *m = NULL;
  if (shlo_parse_module(program, strlen(program), "clash.mlir", &m, &diag)) {
    report("parse", &diag);
    failures++;
    return;
  }
  run_module(m);

  void *bytes = NULL;
  size_t len = 0;
  if (shlo_write_artifact(m, NULL, &bytes, &len, &diag)) {
    report("write artifact", &diag);
    failures++;
  }
  shlo_module_free(m);
  if (!bytes) return;
  CHECK(shlo_is_artifact(bytes, len));
  m = NULL;
  shlo_artifact_info info;
  if (shlo_read_artifact(bytes, len, "clash.mlirbc", &m, &info, &diag)) {
    report("read artifact", &diag);
    failures++;
  } else {
    CHECK(strcmp(info.version, SHLO_ARTIFACT_MAX_VERSION) == 0);
    run_module(m);
    shlo_module_free(m);
  }
  /* A truncated artifact goes through the reader's error paths. */
  m = NULL;
  CHECK(shlo_read_artifact(bytes, len / 2, "cut.mlirbc", &m, NULL, &diag) !=
        SHLO_OK);
  CHECK(m == NULL);
  free(bytes);
}

#ifndef SHLO_NO_CLIENT
/* A local TCP port that refuses connections: bound, never listening (the
 * socket stays open so no one else takes the port); 0 when none. */
static int refusing_port(int *fd) {
  *fd = socket(AF_INET, SOCK_STREAM, 0);
  if (*fd < 0) return 0;
  struct sockaddr_in a = {.sin_family = AF_INET};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t n = sizeof a;
  if (bind(*fd, (struct sockaddr *)&a, sizeof a) ||
      getsockname(*fd, (struct sockaddr *)&a, &n))
    return 0;
  return ntohs(a.sin_port);
}

/* Clients of both protocols, against a port with no server: the binary
 * client fails to connect, the HTTP client (which connects per call)
 * fails its first call; both say "connection". */
static void run_client(void) {
  int fd;
  int port = refusing_port(&fd);
  CHECK(port > 0);
  char url[64];
  shlo_client_error err;

  snprintf(url, sizeof url, "shlo://127.0.0.1:%d", port);
  shlo_client *c = shlo_client_connect(url, NULL, &err);
  CHECK(c == NULL);
  CHECK(strcmp(err.kind, "connection") == 0);
  shlo_client_close(c);

  snprintf(url, sizeof url, "http://127.0.0.1:%d", port);
  c = shlo_client_connect(url, "token", &err);
  CHECK(c != NULL);
  if (c) {
    shlo_client_module mod;
    CHECK(shlo_client_compile(c, program, strlen(program), NULL, &mod,
                              &err) == -1);
    CHECK(strcmp(err.kind, "connection") == 0);
    shlo_client_close(c);
  }

  c = shlo_client_connect("ftp://127.0.0.1:1", NULL, &err);
  CHECK(c == NULL);
  if (fd >= 0) close(fd);
}
#endif

int main(int argc, char **argv) {
  int with_client = !(argc > 1 && strcmp(argv[1], "--no-client") == 0);
  run_engine();
#ifndef SHLO_NO_CLIENT
  if (with_client) run_client();
#else
  (void)with_client;
#endif
  /* The library never reached this program's functions. */
  if (calls) fprintf(stderr, "the library called the program's functions %d times\n", calls);
  CHECK(calls == 0);

  /* The program's own calls reach its own functions. */
  for (int i = 0; i < N_MINE; i++)
    if (mine[i].fn(1000) != 1000 + i) {
      fprintf(stderr, "%s(1000) is not this program's\n", mine[i].name);
      failures++;
    }
  CHECK(accept(0, NULL, NULL) == -1);
  CHECK(calls == N_MINE + 1);

  if (failures) {
    fprintf(stderr, "static_clash: %d checks failed\n", failures);
    return 1;
  }
  printf("static_clash: the archives' calls stayed inside them; this "
         "program's own %d functions ran\n", N_MINE);
  return 0;
}
