/* SPDX-License-Identifier: Apache-2.0 */
/* Portable artifacts (MLIR bytecode, shlo/artifact.h) in request bodies:
 * the raw bytes (Content-Type: application/octet-stream, recognised by the
 * bytecode magic), or base64 in a JSON body's "artifact" member.  The
 * engine's parser reads either like program text; the module cache keys
 * them by the SHA-256 of the artifact's bytes, as it keys text. */
#ifndef SHLO_SRV_ARTIFACT_BODY_H
#define SHLO_SRV_ARTIFACT_BODY_H

#include <stdbool.h>
#include <stddef.h>

#include "shlo/protocol.h"

/* Whether a request body is an artifact's raw bytes (not text or JSON). */
bool srv_body_is_artifact(const char *body, size_t len);

/* req's "artifact" member, decoded into *bytes (malloc'd, the caller
 * frees).  Returns 1 when there is one, 0 when there is none, and -1 with
 * err filled when it is not a base64 string of an artifact, or comes with
 * a "program" as well. */
int srv_artifact_from_json(const shlo_proto_exec_req *req, char **bytes,
                           size_t *len, shlo_proto_error *err);

#endif
