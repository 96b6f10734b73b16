/* SPDX-License-Identifier: Apache-2.0 */
/* Answers whose large base64 tensors are encoded while they are sent: a
 * 64 MiB output is 89 MB of base64, which encoding first and sending
 * after would hold in memory (fresh pages the kernel must zero) and keep
 * off the wire until the last byte is written.  Instead the answer is the
 * JSON text with an empty "b64" string for each large tensor (a hole,
 * json_write.h) plus references to those tensors; libmicrohttpd asks for
 * the bytes block by block and each block is encoded then.  The length is
 * known ahead (4 * ceil(bytes / 3) per hole), so Content-Length is set
 * and no chunked encoding is needed. */
#ifndef SRV_B64_STREAM_H
#define SRV_B64_STREAM_H

#include <stdbool.h>

#include <microhttpd.h>

#include "shlo/protocol.h"
#include "shlo/tensor.h"

/* Tensors of at least this many bytes are streamed; smaller ones are
 * written into the text as before. */
#define SRV_B64_STREAM_MIN ((size_t)1 << 20)

typedef struct srv_b64_reply srv_b64_reply;

/* The success answer of an execution with output_format b64 when some
 * output is large: the JSON text goes to *json (malloc'd, with holes) and
 * the reply to *out (holding references to the holes' tensors).  Returns
 * 1 when built, 0 when no output is large enough (nothing set), -1 when
 * out of memory. */
int srv_b64_reply_build(shlo_value *const *outputs, int n_outputs,
                        int n_procs, const char *module_id, bool cached,
                        double compile_ms, double execute_ms, char **json,
                        srv_b64_reply **out);
/* The libmicrohttpd response for json (taken over: text whose holes are
 * reply's, possibly grown at its end) and reply (taken over); *len is the
 * body's whole length.  NULL when out of memory (both freed). */
struct MHD_Response *srv_b64_reply_response(srv_b64_reply *reply, char *json,
                                            size_t json_len, size_t *len);
/* Drop a reply that was not sent (NULL is fine). */
void srv_b64_reply_free(srv_b64_reply *reply);

/* ---- bodies decoded as they arrive ----
 *
 * An execution's large body is mostly one "b64" string.  Its upload runs
 * through a small scanner of the JSON text (strings, escapes, the member
 * name before a ':'); once the value of a "b64" member has run past
 * SRV_B64_SPLICE_MIN characters of the base64 alphabet, its whole groups
 * are decoded into a buffer as they come instead of being kept, and the
 * body keeps only what follows them (padding, the closing quote).  The
 * tensor decoder finishes the string from there and takes the buffer as
 * the tensor's data (shlo_proto_tensor_decode_spliced).  Anything
 * unusual -- an escape in the rest of the string, a body that ends inside
 * it, a body that does not parse -- puts the characters back (base64 of
 * what was decoded) so that the full parse sees the body as sent and
 * answers its usual errors.  Sizes come from the upload alone, bounded by
 * the Content-Length that max-body-bytes already bounds. */

/* Bodies of at least this many bytes (by Content-Length) are scanned. */
#define SRV_B64_SPLICE_BODY ((size_t)4 << 20)
/* Strings whose base64 runs this long are decoded as they arrive. */
#define SRV_B64_SPLICE_MIN ((size_t)64 << 10)

struct srv_request;
typedef struct srv_b64_in srv_b64_in;

/* A scanner for a body of content_length bytes; NULL when out of
 * memory. */
srv_b64_in *srv_b64_in_new(size_t content_length);
void srv_b64_in_free(srv_b64_in *d);
/* Take n more bytes of r's body (r->b64_in): into r->body, or decoded.
 * False when out of memory. */
bool srv_b64_in_feed(struct srv_request *r, const char *p, size_t n);
/* The body is complete: r->body will not move now.  Puts the characters
 * back when the body ended inside a string being decoded, or saw an
 * escape in one.  False when out of memory. */
bool srv_b64_in_finish(struct srv_request *r);
/* The decoded strings, their `at` pointing into r->body (after finish). */
shlo_proto_b64_splice *srv_b64_in_splices(struct srv_request *r, int *n);
/* Put every decoded string's characters back into r->body (and drop the
 * scanner): true when r->body is the body as sent again, false when
 * nothing was decoded or out of memory. */
bool srv_b64_in_unsplice(struct srv_request *r);

#endif
