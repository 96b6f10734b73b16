/* SPDX-License-Identifier: Apache-2.0 */
/* Artifacts in request bodies (artifact_body.h). */
#include "artifact_body.h"

#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "shlo/artifact.h"

bool srv_body_is_artifact(const char *body, size_t len) {
  return shlo_is_artifact(body, len);
}

int srv_artifact_from_json(const shlo_proto_exec_req *req, char **bytes,
                           size_t *len, shlo_proto_error *err) {
  *bytes = NULL;
  *len = 0;
  const cJSON *a = req->root
                       ? cJSON_GetObjectItemCaseSensitive(req->root, "artifact")
                       : NULL;
  if (!a) return 0;
  if (!cJSON_IsString(a))
    return shlo_proto_fail(err, SHLO_PERR_INPUT, "artifact: expected a "
                           "base64 string of a portable artifact"), -1;
  if (req->program)
    return shlo_proto_fail(err, SHLO_PERR_INPUT, "send \"program\" or "
                           "\"artifact\", not both"), -1;
  size_t n = strlen(a->valuestring);
  char *out = malloc(n / 4 * 3 + 4);
  if (!out)
    return shlo_proto_fail(err, SHLO_PERR_RUNTIME, "out of memory"), -1;
  int64_t got = shlo_proto_b64_decode(a->valuestring, n, out, n / 4 * 3 + 4);
  if (got < 0 || !shlo_is_artifact(out, (size_t)got)) {
    free(out);
    return shlo_proto_fail(err, SHLO_PERR_INPUT, got < 0
                               ? "artifact: not valid base64"
                               : "artifact: the bytes are not MLIR bytecode "
                                 "(no \"ML\\xefR\" magic)"), -1;
  }
  *bytes = out;
  *len = (size_t)got;
  return 1;
}
