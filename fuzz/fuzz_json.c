/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target: the JSON request decoder -- an execution request's
 * members and every tensor in its "inputs", decoded within small limits
 * as the server decodes them; and the same bytes as a response and as an
 * error body, as a client reads them. */
#include <stdio.h>
#include <stdlib.h>

#include "shlo/protocol.h"

static void decode_inputs(const cJSON *inputs, const shlo_proto_limits *lim) {
  int i = 0;
  for (const cJSON *c = inputs ? inputs->child : NULL; c; c = c->next, i++) {
    char path[32];
    snprintf(path, sizeof path, "inputs[%d]", i);
    shlo_value *v = NULL;
    shlo_proto_error err;
    if (shlo_proto_tensor_decode(c, NULL, lim, path, &v, &err) == 0) {
      char *back = shlo_proto_tensor_encode(v, i & 1);
      free(back);
      shlo_value_unref(v);
    }
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *body = (const char *)data;
  shlo_proto_limits lim = {.max_elements = 1 << 20, .max_bytes = 4 << 20,
                           .max_inputs = 64};
  shlo_proto_exec_req req;
  shlo_proto_error err;
  if (shlo_proto_exec_req_parse(body, size, &req, &err) == 0) {
    decode_inputs(req.inputs, &lim);
    shlo_proto_exec_req_free(&req);
  }
  shlo_value **outs = NULL;
  int n = 0;
  if (shlo_proto_exec_resp_parse(body, size, &lim, &outs, &n, &err) == 0) {
    for (int k = 0; k < n; k++) shlo_value_unref(outs[k]);
    free(outs);
  }
  shlo_proto_error_parse(body, size, &err);
  return 0;
}
