/* SPDX-License-Identifier: Apache-2.0 */
/* The one JSON writer of protocol/ and server/: appends to the engine's
 * string builder, with no tree in between (the response path writes every
 * element of every output through here).  cJSON is for parsing only.
 * What it writes is what cJSON_PrintUnformatted would print for the same
 * document, so clients see the same bytes the tree-built bodies had. */
#ifndef SHLO_JSON_WRITE_H
#define SHLO_JSON_WRITE_H

#include <stdbool.h>

#include "core/strbuf.h"
#include "shlo/tensor.h"

/* s as a JSON string, with cJSON's escapes (\uXXXX below 0x20). */
void shlo__json_str(strbuf *b, const char *s);
/* A JSON number as cJSON prints it ("%1.15g" when that reads back within
 * DBL_EPSILON, else "%1.17g"); NaN and infinities as null. */
void shlo__json_num(strbuf *b, double d);
/* ,"key": -- the member separator and name; first = no comma. */
void shlo__json_key(strbuf *b, const char *key, bool first);
/* A value as PROTOCOL.md spells it: a tensor {"dtype","shape","data"} (or
 * "b64" for the raw bytes), a tuple {"tuple":[...]}, a token
 * {"token":true}. */
void shlo__json_tensor(strbuf *b, const shlo_value *v, bool b64);

/* The large tensors whose base64 a written document leaves out, to be
 * encoded only as the document is sent (server/src/b64_stream.c): the
 * text has "b64":"" for each, and hole k's base64 goes at byte at[k].v of
 * the text, between the quotes.  Holes are in text order. */
typedef struct shlo__b64_hole {
  size_t at;
  shlo_value *v;
} shlo__b64_hole;
typedef struct shlo__b64_holes {
  size_t min_bytes; /* tensors of at least this many bytes become holes */
  shlo__b64_hole *at;
  int n, cap;
  bool failed; /* out of memory for the list */
} shlo__b64_holes;
/* shlo__json_tensor with b64, leaving holes (h may be NULL: none). */
void shlo__json_tensor_holes(strbuf *b, const shlo_value *v,
                             shlo__b64_holes *h);
/* shlo_proto_exec_resp_build with b64 outputs, leaving holes in h
 * (protocol.c); NULL when out of memory. */
char *shlo__exec_resp_build_holes(shlo_value *const *outputs, int n_outputs,
                                  int n_procs, const char *module_id,
                                  bool cached, double compile_ms,
                                  double execute_ms, shlo__b64_holes *h);
/* Base64 of data[0..len) written to out, which has room for
 * (len + 2) / 3 * 4 bytes; returns that count, no NUL (b64.c). */
size_t shlo__b64_encode_to(const void *data, size_t len, char *out);
/* The leading whole groups of s[0..len) that are four alphabet characters
 * each, decoded into out while they fit in cap bytes: returns the
 * characters consumed (a multiple of 4), *written the bytes (b64.c). */
size_t shlo__b64_decode_groups(const char *s, size_t len, void *out,
                               size_t cap, size_t *written);
/* Ask the kernel for 2 MB pages under the aligned part of p[0..n) (a
 * hint, for buffers of several MB about to be filled: a virtual machine
 * pays dearly for each 4 KB page fault); smaller buffers are left be. */
void shlo__advise_huge(void *p, size_t n);

#endif
