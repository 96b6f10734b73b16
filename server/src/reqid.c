/* SPDX-License-Identifier: Apache-2.0 */
/* Request ids and W3C trace contexts (reqid.h). */
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "reqid.h"

static bool id_byte_ok(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || (c && strchr("._:/+=@-", c));
}

bool srv_reqid_ok(const char *id, size_t n) {
  if (!id || n == 0 || n > SRV_REQ_ID_MAX) return false;
  for (size_t i = 0; i < n; i++)
    if (!id_byte_ok((unsigned char)id[i])) return false;
  return true;
}

/* xorshift64*, one state per thread, seeded from the kernel: ids must not
 * repeat across restarts or threads, and need not be secret (they are
 * echoed to whoever sent the request). */
static uint64_t next_random(void) {
  static _Thread_local uint64_t state;
  if (!state) {
    if (getrandom(&state, sizeof state, GRND_NONBLOCK) != sizeof state) {
      struct timespec ts;
      clock_gettime(CLOCK_REALTIME, &ts);
      state = (uint64_t)ts.tv_nsec * 0x9E3779B97F4A7C15ull ^
              (uint64_t)ts.tv_sec ^ (uint64_t)(uintptr_t)&state;
    }
    state |= 1;
  }
  state ^= state >> 12;
  state ^= state << 25;
  state ^= state >> 27;
  return state * 0x2545F4914F6CDD1Dull;
}

void srv_hex_random(char *out, int n) {
  static const char hex[] = "0123456789abcdef";
  uint64_t r = 0;
  for (int i = 0; i < n; i++) {
    if (i % 16 == 0) r = next_random();
    out[i] = hex[r & 15];
    r >>= 4;
  }
  out[n] = 0;
}

void srv_reqid_new(char out[SRV_REQ_ID_LEN]) { srv_hex_random(out, 32); }

bool srv_reqid_take(char out[SRV_REQ_ID_LEN], const char *client, size_t n) {
  if (srv_reqid_ok(client, n)) {
    memcpy(out, client, n);
    out[n] = 0;
    return true;
  }
  srv_reqid_new(out);
  return false;
}

static bool lower_hex(const char *s, int n) {
  for (int i = 0; i < n; i++)
    if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
      return false;
  return true;
}

static bool all_zero(const char *s, int n) {
  for (int i = 0; i < n; i++)
    if (s[i] != '0') return false;
  return true;
}

/* Version 00's exact form; a later version may append fields after the
 * flags ("-..."), which are ignored.  Version ff and all-zero ids are
 * invalid. */
static bool parse_traceparent(const char *h, srv_trace_ctx *ctx) {
  size_t n = strlen(h);
  if (n < 55 || h[2] != '-' || h[35] != '-' || h[52] != '-') return false;
  if (!lower_hex(h, 2) || !lower_hex(h + 3, 32) || !lower_hex(h + 36, 16) ||
      !lower_hex(h + 53, 2))
    return false;
  if (!memcmp(h, "ff", 2) || all_zero(h + 3, 32) || all_zero(h + 36, 16))
    return false;
  if (!memcmp(h, "00", 2) ? n != 55 : (n > 55 && h[55] != '-'))
    return false;
  memcpy(ctx->trace_id, h + 3, 32);
  ctx->trace_id[32] = 0;
  memcpy(ctx->parent_id, h + 36, 16);
  ctx->parent_id[16] = 0;
  unsigned f = 0;
  sscanf(h + 53, "%2x", &f);
  ctx->flags = (uint8_t)f;
  return true;
}

void srv_trace_ctx_init(srv_trace_ctx *ctx, const char *traceparent) {
  memset(ctx, 0, sizeof *ctx);
  ctx->valid = traceparent && parse_traceparent(traceparent, ctx);
  if (!ctx->valid) {
    memset(ctx, 0, sizeof *ctx);
    srv_hex_random(ctx->trace_id, 32);
  }
  srv_hex_random(ctx->span_id, 16);
}

void srv_trace_ctx_header(const srv_trace_ctx *ctx, char out[56]) {
  snprintf(out, 56, "00-%s-%s-%02x", ctx->trace_id, ctx->span_id,
           ctx->flags & 1);
}
