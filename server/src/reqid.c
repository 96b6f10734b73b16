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
  /* two digits per table read: every request takes an id, every traced
   * one a trace key as well */
  static const char pairs[] =
      "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
      "202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f"
      "404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f"
      "606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f"
      "808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f"
      "a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebf"
      "c0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedf"
      "e0e1e2e3e4e5e6e7e8e9eaebecedeeeff0f1f2f3f4f5f6f7f8f9fafbfcfdfeff";
  uint64_t r = 0;
  int i = 0;
  for (; i + 1 < n; i += 2) {
    if (i % 16 == 0) r = next_random();
    memcpy(out + i, pairs + 2 * (r & 255), 2);
    r >>= 8;
  }
  if (i < n) out[i++] = pairs[2 * (next_random() & 15) + 1];
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
