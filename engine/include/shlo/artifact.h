/* SPDX-License-Identifier: Apache-2.0 */
/* Portable artifacts: StableHLO programs as MLIR bytecode of the VHLO
 * dialect, the form jax.export and PJRT plugins hand over.
 *
 * Reading one gives the same module as parsing the equivalent StableHLO
 * text (the VHLO ops are lowered to StableHLO op by op), so verification,
 * compilation and the module cache need nothing else.  Any byte sequence
 * is safe to pass: a truncated or corrupt artifact is refused with the byte
 * offset and section, an op from a newer StableHLO with both versions. */
#ifndef SHLO_ARTIFACT_H
#define SHLO_ARTIFACT_H

#include "shlo/ir.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The newest StableHLO version whose artifacts this build reads. */
#define SHLO_ARTIFACT_MAX_VERSION "1.20.0"

/* True when bytes begin with the MLIR bytecode magic "ML\xefR". */
SHLO_API bool shlo_is_artifact(const void *bytes, size_t len);

typedef struct shlo_artifact_info {
  char producer[64];  /* "StableHLO_v1.20.0" as the file states it */
  char version[32];   /* "1.20.0", or "" when the producer names none */
  unsigned bytecode_version;
} shlo_artifact_info;

/* Read an artifact into a module (as shlo_parse_module does for text).
 * info may be NULL.  On error returns SHLO_EPARSE (or SHLO_ENOMEM or
 * SHLO_EUNSUPPORTED for an op this build does not know), fills diag and
 * sets *out to NULL. */
SHLO_API shlo_status shlo_read_artifact(const void *bytes, size_t len,
                                        const char *filename,
                                        shlo_module **out,
                                        shlo_artifact_info *info,
                                        shlo_diag *diag);

/* The StableHLO generic text an artifact lowers to (malloc'd, caller
 * frees), or NULL with diag filled. */
SHLO_API char *shlo_artifact_to_text(const void *bytes, size_t len,
                                     const char *filename,
                                     shlo_artifact_info *info,
                                     shlo_diag *diag);

/* The oldest StableHLO version shlo_write_artifact targets. */
#define SHLO_ARTIFACT_MIN_WRITE_VERSION "1.0.0"

/* Write m as a portable artifact for StableHLO target_version ("1.0.0"
 * through SHLO_ARTIFACT_MAX_VERSION; NULL: the newest): MLIR bytecode
 * (format 6) of the VHLO dialect, each op in the newest version the target
 * has, as StableHLO's serializer writes it.  Ops of other dialects (the
 * interpreter's check.* ops, chlo) go in as unregistered ops with their
 * attributes in VHLO's encoding.  On success *out is malloc'd (caller
 * frees) with *len bytes.  An op or attribute the target does not have is
 * refused with SHLO_EUNSUPPORTED, naming it and the version; *out is then
 * NULL. */
SHLO_API shlo_status shlo_write_artifact(const shlo_module *m,
                                         const char *target_version,
                                         void **out, size_t *len,
                                         shlo_diag *diag);

#ifdef __cplusplus
}
#endif

#endif
