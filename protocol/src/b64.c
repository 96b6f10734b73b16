/* SPDX-License-Identifier: Apache-2.0 */
/* Base64 (RFC 4648) and the UTF-8 check: the byte-level codecs of the
 * JSON route, which a 64 MiB tensor crosses as 89 MB of base64 each way.
 * The loops work on whole groups through lookup tables built once (two
 * characters per 12 bits to encode; each character's sextet pre-shifted
 * to its place in a 24-bit group to decode, with one bit that marks a
 * character outside the alphabet), so a group costs a few loads and one
 * test instead of a branch per byte.  Anything irregular -- padding,
 * white space, a bad byte, the end of the room -- goes to a careful loop
 * that handles one character at a time. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the base64 loops read bytes through little-endian words"
#endif
#include "shlo/protocol.h"
#include "json_write.h"

static const char b64_chars[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* Sextet of each byte: the standard and the URL-safe alphabets; -1 for
 * anything else (padding and white space included). */
static const signed char b64_sextet[256] = {
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 62, -1, 62, -1, 63,
    52, 53, 54, 55, 56, 57, 58, 59, 60, 61, -1, -1, -1, -1, -1, -1,
    -1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14,
    15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, -1, -1, -1, -1, 63,
    -1, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40,
    41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
    -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
};

#define B64_BAD 0x80000000u /* in a placed sextet: not in the alphabet */

static struct {
  pthread_once_t once;
  char pairs[4096][2];   /* the two characters of each 12-bit value */
  uint32_t placed[4][256]; /* sextet of a group's k-th character, shifted */
} T = {.once = PTHREAD_ONCE_INIT};

static void tables_init(void) {
  for (int v = 0; v < 4096; v++) {
    T.pairs[v][0] = b64_chars[v >> 6];
    T.pairs[v][1] = b64_chars[v & 63];
  }
  for (int k = 0; k < 4; k++)
    for (int c = 0; c < 256; c++)
      T.placed[k][c] = b64_sextet[c] < 0
                           ? B64_BAD
                           : (uint32_t)b64_sextet[c] << (18 - 6 * k);
}

/* Four characters for 24 bits. */
static inline void put_group(char *o, uint32_t v) {
  memcpy(o, T.pairs[v >> 12], 2);
  memcpy(o + 2, T.pairs[v & 4095], 2);
}

size_t shlo__b64_encode_to(const void *data, size_t len, char *out) {
  pthread_once(&T.once, tables_init);
  const unsigned char *p = data;
  char *o = out;
  size_t i = 0;
  /* Six bytes at a time from one 8-byte load (its last two bytes unused,
   * hence the bound), read big-endian so the groups come out in order. */
  for (; i + 8 <= len; i += 6, o += 8) {
    uint64_t v;
    memcpy(&v, p + i, 8);
    v = __builtin_bswap64(v);
    put_group(o, (uint32_t)(v >> 40));
    put_group(o + 4, (uint32_t)(v >> 16) & 0xFFFFFF);
  }
  for (; i + 2 < len; i += 3, o += 4)
    put_group(o, (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2]);
  if (i < len) {
    uint32_t v = (uint32_t)p[i] << 16;
    if (i + 1 < len) v |= (uint32_t)p[i + 1] << 8;
    *o++ = b64_chars[v >> 18];
    *o++ = b64_chars[(v >> 12) & 63];
    *o++ = i + 1 < len ? b64_chars[(v >> 6) & 63] : '=';
    *o++ = '=';
  }
  return (size_t)(o - out);
}

char *shlo_proto_b64_encode(const void *data, size_t len) {
  char *out = malloc((len + 2) / 3 * 4 + 1);
  if (!out) return NULL;
  out[shlo__b64_encode_to(data, len, out)] = 0;
  return out;
}

/* The 24 bits of the group at u, or a value with B64_BAD set. */
static inline uint32_t take_group(const unsigned char *u) {
  return T.placed[0][u[0]] | T.placed[1][u[1]] | T.placed[2][u[2]] |
         T.placed[3][u[3]];
}

/* Its three bytes, most significant first. */
static inline void put_bytes(unsigned char *o, uint32_t v) {
  o[0] = (unsigned char)(v >> 16);
  o[1] = (unsigned char)(v >> 8);
  o[2] = (unsigned char)v;
}

size_t shlo__b64_decode_groups(const char *s, size_t len, void *out,
                               size_t cap, size_t *written) {
  pthread_once(&T.once, tables_init);
  const unsigned char *u = (const unsigned char *)s;
  unsigned char *o = out;
  size_t n = 0, i = 0;
  /* Two groups per turn, one test for both; a turn with anything but
   * alphabet characters stops the fast loops at the group boundary. */
  while (i + 8 <= len && n + 6 <= cap) {
    uint32_t a = take_group(u + i), b = take_group(u + i + 4);
    if ((a | b) & B64_BAD) break;
    put_bytes(o + n, a);
    put_bytes(o + n + 3, b);
    n += 6;
    i += 8;
  }
  while (i + 4 <= len && n + 3 <= cap) {
    uint32_t a = take_group(u + i);
    if (a & B64_BAD) break;
    put_bytes(o + n, a);
    n += 3;
    i += 4;
  }
  *written = n;
  return i;
}

int64_t shlo_proto_b64_decode(const char *s, size_t len, void *out,
                              size_t cap) {
  const unsigned char *u = (const unsigned char *)s;
  unsigned char *o = out;
  size_t n, i = shlo__b64_decode_groups(s, len, out, cap, &n);
  uint32_t acc = 0;
  int bits = 0;
  bool pad = false;
  for (; i < len; i++) {
    unsigned char c = u[i];
    if (c == '=') {
      pad = true;
      continue;
    }
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    int v = b64_sextet[c];
    if (v < 0 || pad) return -1;
    acc = acc << 6 | (uint32_t)v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      if (n >= cap) return -1;
      o[n++] = (unsigned char)(acc >> bits);
    }
  }
  if (bits >= 6) return -1; /* a dangling sextet */
  return (int64_t)n;
}

/* Whether any of the 32 bytes at s has its top bit set. */
static inline bool any_high_32(const unsigned char *s) {
  uint64_t w[4];
  memcpy(w, s, sizeof w);
  return ((w[0] | w[1] | w[2] | w[3]) & 0x8080808080808080ull) != 0;
}

int64_t shlo_proto_utf8_check(const char *str, size_t len) {
  const unsigned char *s = (const unsigned char *)str;
  size_t i = 0;
  while (i < len) {
    unsigned char c = s[i];
    if (c < 0x80) {
      i++;
      /* Bodies are mostly ASCII (base64 above all): skip it 32 bytes at a
       * time, then a word at a time up to the next non-ASCII byte. */
      while (i + 32 <= len && !any_high_32(s + i)) i += 32;
      for (uint64_t w; i + 8 <= len; i += 8) {
        memcpy(&w, s + i, 8);
        if (w & 0x8080808080808080ull) break;
      }
      continue;
    }
    int n;
    uint32_t cp;
    if (c >= 0xC2 && c <= 0xDF) n = 1, cp = c & 0x1F;
    else if (c >= 0xE0 && c <= 0xEF) n = 2, cp = c & 0x0F;
    else if (c >= 0xF0 && c <= 0xF4) n = 3, cp = c & 0x07;
    else return (int64_t)i;
    if (i + (size_t)n >= len) return (int64_t)i;
    for (int k = 1; k <= n; k++) {
      if ((s[i + k] & 0xC0) != 0x80) return (int64_t)i;
      cp = cp << 6 | (s[i + k] & 0x3F);
    }
    if ((n == 2 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
        (n == 3 && (cp < 0x10000 || cp > 0x10FFFF)))
      return (int64_t)i;
    i += (size_t)n + 1;
  }
  return -1;
}
