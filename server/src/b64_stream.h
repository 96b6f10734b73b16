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

#endif
