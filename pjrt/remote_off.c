/* SPDX-License-Identifier: Apache-2.0 */
/* The remote mode in a build without libshlo-client (no libcurl, or the
 * client not built): asking for a server is refused by name. */
#include "pjrt_internal.h"

#include <stdlib.h>
#include <string.h>

PJRT_Error *shlo_pjrt_remote_connect(PJRT_Client *c,
                                     const PJRT_Client_Create_Args *a) {
  (void)c;
  const char *u = getenv("SHLO_PJRT_SERVER");
  for (size_t i = 0; a->create_options && i < a->num_options; i++)
    if (a->create_options[i].name_size == 6 &&
        !memcmp(a->create_options[i].name, "server", 6))
      u = "the create option";
  if (u == NULL || *u == 0) return NULL;
  return shlo_pjrt_error(PJRT_Error_Code_UNIMPLEMENTED,
                         "this libshlo_pjrt.so was built without "
                         "libshlo-client: no remote mode (SHLO_PJRT_SERVER)");
}

void shlo_pjrt_remote_close(PJRT_Client *c) { (void)c; }

PJRT_Error *shlo_pjrt_remote_compile(PJRT_Client *c, shlo_pjrt_program *p,
                                     const char *code, size_t len) {
  (void)c, (void)p, (void)code, (void)len;
  return shlo_pjrt_error(PJRT_Error_Code_UNIMPLEMENTED, "no remote mode");
}

PJRT_Error *shlo_pjrt_remote_execute(PJRT_Client *c,
                                     const shlo_pjrt_program *p,
                                     shlo_value *const *in, int n_in,
                                     shlo_value ***out, int *n_out) {
  (void)c, (void)p, (void)in, (void)n_in, (void)out, (void)n_out;
  return shlo_pjrt_error(PJRT_Error_Code_UNIMPLEMENTED, "no remote mode");
}
