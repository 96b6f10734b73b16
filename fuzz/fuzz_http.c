/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target: shlo-server's request handlers, fed directly (no
 * socket, no libmicrohttpd): the first byte picks the route and the
 * content type, the rest is the body.  Each input goes through what a
 * worker (or, for tiny cached programs, the loop thread) does with a
 * request: body parsing, module parse/verify/compile through the shared
 * cache, input decoding, execution under a short deadline, the reply.
 * One server lives across inputs, so the cache sees hits, evictions and
 * executions by id as a real one does.
 *
 * Input: byte 0 = route (bits 0-1: 0 /execute on a worker, 1 /v1/modules,
 * 2 /execute inline, 3 /v1/modules/{last registered}/execute) and bit 2
 * = Content-Type: application/json; bytes 1.. = the body. */
#include <stdlib.h>
#include <string.h>

#include "server.h"

static srv_server *server(void) {
  static srv_server s;
  static bool ready;
  if (ready) return &s;
  srv_config_defaults(&s.cfg);
  s.cfg.max_body_bytes = 1 << 20;
  s.cfg.max_tensor_elements = 1 << 18;
  s.cfg.max_tensor_bytes = 1 << 20;
  s.cfg.max_exec_memory = 64 << 20;
  s.cfg.default_timeout_ms = 200;
  s.cfg.max_timeout_ms = 200;
  s.cfg.max_program_ops = 20000;
  s.cfg.compile_timeout_ms = 2000;
  cache_init(&s.cache, 16 << 20);
  if (srv_quota_setup(&s)) abort(); /* the anonymous team, as without tokens */
  s.devnull = fopen("/dev/null", "w");
  ready = true;
  return &s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static char last_id[SRV_ID_LEN];
  if (size < 1) return 0;
  srv_server *s = server();
  srv_request *r = calloc(1, sizeof *r);
  if (!r) return 0;
  r->srv = s;
  r->team = s->anonymous;
  r->body = malloc(size);
  if (!r->body) {
    free(r);
    return 0;
  }
  memcpy(r->body, data + 1, size - 1);
  r->body[size - 1] = 0;
  r->len = r->cap = size - 1;
  r->json_type = data[0] & 4;
  shlo_cancel_set(&r->cancel, 0);
  switch (data[0] & 3) {
  case 0: r->route = R_EXECUTE; srv_job_execute(&r->job); break;
  case 1: r->route = R_MODULES; srv_job_register(&r->job); break;
  case 2:
    r->route = R_EXECUTE;
    srv_lane lane;
    if (!srv_job_execute_inline(r, &lane)) srv_job_execute(&r->job);
    break;
  default:
    r->route = R_MODULE_EXEC;
    memcpy(r->id, last_id, SRV_ID_LEN);
    srv_job_execute(&r->job);
  }
  if (r->route == R_MODULES && r->status == 200 && r->module[0])
    memcpy(last_id, r->module, SRV_ID_LEN);
  free(r->body);
  free(r->resp);
  free(r);
  return 0;
}
