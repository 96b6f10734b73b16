/* SPDX-License-Identifier: Apache-2.0 */
/* The wire format shared by shlo-server and its clients: tensors as JSON,
 * execution requests and responses, and the one error shape.  PROTOCOL.md
 * is the specification; this is its codec (cJSON parses; the writer is
 * protocol/src/json_write.h).
 *
 * Nothing here knows about sockets or libuv.  Every function is safe to
 * call from any thread (no shared state).  Ownership is stated per
 * function: "malloc'd" strings are freed by the caller with free(). */
#ifndef SHLO_PROTOCOL_H
#define SHLO_PROTOCOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "shlo/tensor.h"
#include "shlo/types.h"

/* X(ENUM, "kind", default HTTP status) -- the error kinds of PROTOCOL.md. */
#define SHLO_PROTO_ERRORS(X)        \
  X(PARSE, "parse", 400)            \
  X(VERIFY, "verify", 422)          \
  X(INPUT, "input", 400)            \
  X(LIMIT, "limit", 413)            \
  X(RUNTIME, "runtime", 500)        \
  X(TIMEOUT, "timeout", 504)        \
  X(AUTH, "auth", 401)              \
  X(NOT_FOUND, "not_found", 404)    \
  X(METHOD, "method", 405)

typedef enum {
#define SHLO_PROTO_ERR_ENUM(e, s, h) SHLO_PERR_##e,
  SHLO_PROTO_ERRORS(SHLO_PROTO_ERR_ENUM)
#undef SHLO_PROTO_ERR_ENUM
  SHLO_PERR_COUNT
} shlo_proto_err_kind;

const char *shlo_proto_err_name(shlo_proto_err_kind k);  /* "parse" */
int shlo_proto_err_http(shlo_proto_err_kind k);          /* 400 */

/* One error as the wire carries it.  http may differ from the kind's
 * default (a limit is 413, 429 or 503). line/column 0 = absent. */
typedef struct shlo_proto_error {
  shlo_proto_err_kind kind;
  int http;
  int line, column;
  char message[1200];
} shlo_proto_error;

/* Fill e (kind's default status) with a printf-style message; returns -1 so
 * a caller can `return shlo_proto_fail(...)`. */
int shlo_proto_fail(shlo_proto_error *e, shlo_proto_err_kind kind,
                    const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Map an engine status (and its diag) onto an error: EPARSE->parse,
 * EVERIFY/EUNSUPPORTED->verify, EINPUT->input, ETIMEOUT/ECANCELED->timeout,
 * ELIMIT->limit, everything else->runtime. */
void shlo_proto_from_status(shlo_proto_error *e, int status,
                            const char *message, int line, int column);
/* {"error": {...}} as a malloc'd JSON string; NULL on OOM. */
char *shlo_proto_error_json(const shlo_proto_error *e);
/* Parse an error body back (client side); false if it is not one. */
bool shlo_proto_error_parse(const char *body, size_t len, shlo_proto_error *e);

/* Bounds a decoder enforces before allocating (0 = unbounded). */
/* Base64 decoded before the text was parsed (the server decodes a large
 * "b64" string as the body arrives, server/src/b64_stream.h): the body
 * keeps only the string's undecoded rest, which starts at `at`; the
 * decoded start is bytes[0..n), from `chars` characters.  The tensor
 * decoder finishes the string there and the tensor takes bytes (set to
 * NULL) when it can, else copies them. */
typedef struct shlo_proto_b64_splice {
  const char *at;
  void *bytes;  /* aligned_alloc'd, 64-byte aligned, cap bytes */
  size_t n, cap, chars;
} shlo_proto_b64_splice;

typedef struct shlo_proto_limits {
  int64_t max_elements; /* per tensor */
  int64_t max_bytes;    /* per tensor */
  int max_inputs;
} shlo_proto_limits;

/* dtype spelling <-> element type ("f32", "i8", "ui4", "bf16",
 * "complex<f32>"; "c64"/"c128", "bool", "si8" are accepted too). */
int shlo_proto_dtype_parse(const char *s);
const char *shlo_proto_dtype_name(shlo_elem_type t);

/* Parse JSON text (len bytes, no NUL needed) into a cJSON tree the caller
 * frees with cJSON_Delete, reading every integer exactly: integer tokens
 * beyond 2^53 in magnitude become decimal strings, which the tensor decoder
 * reads exactly (a double would round them).  The value must be followed
 * by nothing or by anything (the caller checks trailing bytes from
 * *stop).  NULL when malformed or on OOM; *stop (may be NULL) is then the
 * offset where parsing stopped, else the offset just past the value. */
cJSON *shlo_proto_json_parse(const char *text, size_t len, size_t *stop);

/* Decode one tensor object ({"dtype","shape","data"|"b64"}) into a new
 * value (caller owns the reference).  When want is non-NULL the tensor
 * must match it (element type, rank, static dims; a quantized type takes
 * its storage dtype).  Errors are kind input or limit, naming the path
 * (e.g. "inputs[1].data[3]"). */
int shlo_proto_tensor_decode(const cJSON *j, const shlo_type *want,
                             const shlo_proto_limits *lim, const char *path,
                             shlo_value **out, shlo_proto_error *err);
/* The same for a body some of whose base64 was decoded as it arrived:
 * a "b64" string that starts where one of the n splices says continues
 * from it. */
int shlo_proto_tensor_decode_spliced(const cJSON *j, const shlo_type *want,
                                     const shlo_proto_limits *lim,
                                     shlo_proto_b64_splice *splices, int n,
                                     const char *path, shlo_value **out,
                                     shlo_proto_error *err);
/* Encode a value as JSON text: a tensor as {"dtype","shape","data"} or,
 * with b64, {"dtype","shape","b64"}; a tuple as {"tuple": [...]}; a token
 * as {"token": true}.  Floats are the shortest text that reads back to the
 * same value of the dtype; NaN and infinities are the strings "NaN",
 * "Infinity", "-Infinity".  malloc'd; NULL on OOM. */
char *shlo_proto_tensor_encode(const shlo_value *v, bool b64);

/* A parsed execution request (POST /execute or /v1/modules/{id}/execute).
 * Pointers point into root, which the request owns. */
typedef struct shlo_proto_exec_req {
  cJSON *root;            /* NULL for a text/plain body */
  const char *program;    /* NULL when absent */
  size_t program_len;
  const char *entry;      /* NULL = the module's entry function */
  int replicas, partitions; /* 0 = absent (the module's grid) */
  double timeout_ms;      /* <= 0: server default */
  bool b64_out;           /* "output_format": "b64" */
  bool print;             /* "print": true -- answer interpreter.print's
                             text as "printed" */
  const cJSON *inputs;    /* array, or NULL when absent */
} shlo_proto_exec_req;

/* Parse a JSON body.  Fails with input errors for malformed JSON (line and
 * column of the error), wrong member types, or unknown output formats. */
int shlo_proto_exec_req_parse(const char *body, size_t len,
                              shlo_proto_exec_req *req, shlo_proto_error *err);
void shlo_proto_exec_req_free(shlo_proto_exec_req *req);

/* Client side: build a request body (malloc'd).  program may be NULL (a
 * registered module); inputs are encoded as data (or b64). */
char *shlo_proto_exec_req_build(const char *program, const char *entry,
                                shlo_value *const *inputs, int n_inputs,
                                double timeout_ms, bool b64_inputs,
                                bool b64_outputs);

/* json (a malloc'd JSON object, taken over) with a member "printed":
 * text (and "printed_truncated": true when truncated) added at its end;
 * NULL when out of memory. */
char *shlo_proto_json_add_printed(char *json, const char *text,
                                  bool truncated);

/* Server side: the success body (malloc'd).  outputs holds n_procs *
 * n_outputs values, process-major; with n_procs > 1 "outputs" is a list of
 * per-process lists.  module_id may be NULL. */
char *shlo_proto_exec_resp_build(shlo_value *const *outputs, int n_outputs,
                                 int n_procs, const char *module_id,
                                 bool cached,
                                 double compile_ms, double execute_ms,
                                 bool b64);
/* The same, written from the start of spare[0..spare_cap): a malloc'd
 * buffer this call takes over (freed on failure), grown as needed.  A
 * large request body that is no longer needed becomes its answer, whose
 * pages the process already has (a fresh 89 MB buffer costs ~0.15 s of
 * page faults on a virtual machine). */
char *shlo_proto_exec_resp_build_into(char *spare, size_t spare_cap,
                                      shlo_value *const *outputs,
                                      int n_outputs, int n_procs,
                                      const char *module_id, bool cached,
                                      double compile_ms, double execute_ms,
                                      bool b64);
/* At least the length of v's JSON text as shlo_proto_tensor_encode writes
 * it, from its element type and count alone (each element at its type's
 * longest text): for refusing an answer before it is written. */
uint64_t shlo_proto_value_json_max(const shlo_value *v, bool b64);
/* Client side: decode "outputs" of a success body into new values
 * (*outs malloc'd, each an owned reference); a grid's per-process lists
 * are flattened, process-major. */
int shlo_proto_exec_resp_parse(const char *body, size_t len,
                               const shlo_proto_limits *lim,
                               shlo_value ***outs, int *n_outs,
                               shlo_proto_error *err);

/* Base64 (RFC 4648, with padding).  encode: malloc'd NUL-terminated;
 * decode: writes at most cap bytes, returns the length or -1 if malformed
 * or too long. */
char *shlo_proto_b64_encode(const void *data, size_t len);
int64_t shlo_proto_b64_decode(const char *s, size_t len, void *out,
                              size_t cap);

/* Offset of the first byte that is not valid UTF-8, or -1 if all is. */
int64_t shlo_proto_utf8_check(const char *s, size_t len);

#endif
