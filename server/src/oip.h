/* SPDX-License-Identifier: Apache-2.0 */
/* The Open Inference Protocol (KServe v2, HTTP/REST), a second face of
 * the registered modules (PROTOCOL.md part 3):
 *
 *   GET  /v2                              server metadata
 *   GET  /v2/health/live, /v2/health/ready
 *   GET  /v2/models/{name}                model metadata
 *   GET  /v2/models/{name}/ready
 *   POST /v2/models/{name}/infer          JSON tensors, and the binary
 *                                         tensor data extension
 *
 * {name} is a module's registered "name" or its id.  The module's entry
 * function is the model: its arguments are inputs "input0", "input1", ...
 * and its results outputs "output0", ...  Errors are {"error": "..."}. */
#ifndef SHLO_SRV_OIP_H
#define SHLO_SRV_OIP_H

#include <stdbool.h>

#include "server.h"

/* The route of a URL under /v2 (R_OTHER if none). */
srv_route srv_oip_match(const char *url);
/* Answer the routes that need no module (server metadata, health) on the
 * loop; false when the request needs a worker (srv_job_oip). */
bool srv_oip_answer_inline(srv_request *r);
/* The worker's part: model metadata, model ready, infer. */
void srv_job_oip(srv_job *j);
/* Rewrite an error answer of the server's own shape ({"error": {"kind",
 * "message", ...}}) into the protocol's {"error": "message"}. */
void srv_oip_error_shape(srv_request *r);

#endif
