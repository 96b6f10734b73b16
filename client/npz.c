/* SPDX-License-Identifier: Apache-2.0 */
/* .npz files (npy.h): zip archives of .npy entries.  The reader walks the
 * central directory (zip64 records as np.savez writes them for big arrays
 * included) and takes stored entries, and deflated ones when built with
 * zlib; the writer stores entries uncompressed, as np.savez does.  Every
 * offset and size read from the archive is checked against its length. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npy.h"

#ifdef SHLO_HAVE_ZLIB
#include <zlib.h>
#endif

#define SIG_LOCAL 0x04034b50u
#define SIG_CENTRAL 0x02014b50u
#define SIG_END 0x06054b50u
#define SIG_END64 0x06064b50u
#define SIG_LOCATOR64 0x07064b50u
#define END_LEN 22
#define CENTRAL_LEN 46
#define LOCAL_LEN 30
#define U32_MAX_FIELD 0xFFFFFFFFu

static int fail(char err[NPY_ERR_MAX], const char *msg) {
  snprintf(err, NPY_ERR_MAX, "%s", msg);
  return -1;
}

static uint32_t rd16(const unsigned char *p) { return p[0] | (uint32_t)p[1] << 8; }
static uint32_t rd32(const unsigned char *p) {
  return rd16(p) | rd16(p + 2) << 16;
}
static uint64_t rd64(const unsigned char *p) {
  return rd32(p) | (uint64_t)rd32(p + 4) << 32;
}
static void wr16(unsigned char *p, uint32_t v) {
  p[0] = (unsigned char)v;
  p[1] = (unsigned char)(v >> 8);
}
static void wr32(unsigned char *p, uint32_t v) {
  wr16(p, v & 0xffff);
  wr16(p + 2, v >> 16);
}

/* CRC-32 (the zip polynomial, reflected), table built on first use. */
static uint32_t crc32_of(const unsigned char *p, size_t n) {
  static uint32_t table[256];
  static int ready;
  if (!ready) {
    for (uint32_t i = 0; i < 256; i++) {
      uint32_t c = i;
      for (int k = 0; k < 8; k++) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      table[i] = c;
    }
    ready = 1;
  }
  uint32_t c = 0xFFFFFFFFu;
  for (size_t i = 0; i < n; i++) c = table[(c ^ p[i]) & 0xff] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

/* ---- reading ----------------------------------------------------------- */

/* Where the central directory is and how many entries it has. */
typedef struct zip_dir {
  uint64_t offset, count;
} zip_dir;

static int find_zip64_dir(const unsigned char *b, size_t len, size_t end,
                          zip_dir *dir, char err[NPY_ERR_MAX]) {
  if (end < 20 || rd32(b + end - 20) != SIG_LOCATOR64)
    return fail(err, ".npz: zip64 fields without a zip64 locator");
  uint64_t at = rd64(b + end - 20 + 8);
  if (at > len || len - at < 56 || rd32(b + at) != SIG_END64)
    return fail(err, ".npz: bad zip64 end record");
  dir->count = rd64(b + at + 32);
  dir->offset = rd64(b + at + 48);
  return 0;
}

static int find_dir(const unsigned char *b, size_t len, zip_dir *dir,
                    char err[NPY_ERR_MAX]) {
  if (len < END_LEN) return fail(err, ".npz: too short for a zip archive");
  /* the end record is last, followed by a comment of at most 64 KiB */
  size_t lo = len - END_LEN > 0xFFFF ? len - END_LEN - 0xFFFF : 0;
  for (size_t at = len - END_LEN + 1; at-- > lo;) {
    if (rd32(b + at) != SIG_END) continue;
    dir->count = rd16(b + at + 10);
    dir->offset = rd32(b + at + 16);
    if (dir->count == 0xFFFF || dir->offset == U32_MAX_FIELD)
      return find_zip64_dir(b, len, at, dir, err);
    return 0;
  }
  return fail(err, ".npz: no zip end record (not an .npz, or truncated)");
}

/* One central directory entry, sizes and offset resolved. */
typedef struct zip_entry {
  const unsigned char *name;
  size_t name_len;
  uint32_t method, flags, crc;
  uint64_t csize, usize, local;
} zip_entry;

/* The zip64 extra field's values for the fields that overflowed. */
static void apply_zip64_extra(const unsigned char *x, size_t n,
                              zip_entry *e) {
  while (n >= 4) {
    uint32_t id = rd16(x), sz = rd16(x + 2);
    if (sz > n - 4) return;
    if (id == 1) {
      const unsigned char *p = x + 4, *end = p + sz;
      if (e->usize == U32_MAX_FIELD && end - p >= 8) e->usize = rd64(p), p += 8;
      if (e->csize == U32_MAX_FIELD && end - p >= 8) e->csize = rd64(p), p += 8;
      if (e->local == U32_MAX_FIELD && end - p >= 8) e->local = rd64(p);
      return;
    }
    x += 4 + sz;
    n -= 4 + sz;
  }
}

/* The entry at *at, advancing *at past it. */
static int read_central(const unsigned char *b, size_t len, uint64_t *at,
                        zip_entry *e, char err[NPY_ERR_MAX]) {
  if (*at > len || len - *at < CENTRAL_LEN || rd32(b + *at) != SIG_CENTRAL)
    return fail(err, ".npz: bad central directory entry");
  const unsigned char *p = b + *at;
  size_t nl = rd16(p + 28), xl = rd16(p + 30), cl = rd16(p + 32);
  if (len - *at - CENTRAL_LEN < nl + xl + cl)
    return fail(err, ".npz: truncated central directory");
  e->flags = rd16(p + 8);
  e->method = rd16(p + 10);
  e->crc = rd32(p + 16);
  e->csize = rd32(p + 20);
  e->usize = rd32(p + 24);
  e->local = rd32(p + 42);
  e->name = p + CENTRAL_LEN;
  e->name_len = nl;
  apply_zip64_extra(p + CENTRAL_LEN + nl, xl, e);
  *at += CENTRAL_LEN + nl + xl + cl;
  return 0;
}

#ifdef SHLO_HAVE_ZLIB
static int inflate_raw(const unsigned char *src, uint64_t n, unsigned char *dst,
                       uint64_t out, char err[NPY_ERR_MAX]) {
  z_stream z;
  memset(&z, 0, sizeof z);
  if (inflateInit2(&z, -MAX_WBITS) != Z_OK)
    return fail(err, ".npz: cannot start inflate");
  int rc = Z_OK;
  uint64_t in_left = n, out_left = out;
  z.next_in = (unsigned char *)src;
  z.next_out = dst;
  while (rc == Z_OK) {
    /* zlib counts in uInt: feed a big entry in pieces */
    if (!z.avail_in) {
      z.avail_in = in_left > 1u << 30 ? 1u << 30 : (uInt)in_left;
      in_left -= z.avail_in;
    }
    if (!z.avail_out) {
      z.avail_out = out_left > 1u << 30 ? 1u << 30 : (uInt)out_left;
      out_left -= z.avail_out;
    }
    /* Z_BUF_ERROR: input or room ran out with both refilled: done */
    rc = inflate(&z, Z_NO_FLUSH);
  }
  bool ok = rc == Z_STREAM_END && z.total_out == out;
  inflateEnd(&z);
  return ok ? 0 : fail(err, ".npz: a deflated entry does not inflate to its "
                            "size");
}
#endif

/* The entry's .npy bytes: into *bytes (stored: a pointer into b, *owned
 * false; deflated: malloc'd, *owned true). */
static int entry_bytes(const unsigned char *b, size_t len, const zip_entry *e,
                       const unsigned char **bytes, bool *owned,
                       char err[NPY_ERR_MAX]) {
  if (e->flags & 1) return fail(err, ".npz: encrypted entries are not read");
  if (e->local > len || len - e->local < LOCAL_LEN ||
      rd32(b + e->local) != SIG_LOCAL)
    return fail(err, ".npz: bad local header");
  uint64_t at = e->local + LOCAL_LEN + rd16(b + e->local + 26) +
                rd16(b + e->local + 28);
  if (at > len || len - at < e->csize)
    return fail(err, ".npz: an entry runs past the end of the file");
  *owned = false;
  if (e->method == 0) {
    if (e->csize != e->usize) return fail(err, ".npz: bad stored entry size");
    *bytes = b + at;
    return 0;
  }
  if (e->method != 8)
    return fail(err, ".npz: an entry is compressed with a method other than "
                     "deflate");
#ifdef SHLO_HAVE_ZLIB
  if (e->usize > SIZE_MAX / 2) return fail(err, ".npz: entry too large");
  unsigned char *out = malloc(e->usize ? (size_t)e->usize : 1);
  if (!out) return fail(err, ".npz: out of memory");
  if (inflate_raw(b + at, e->csize, out, e->usize, err)) {
    free(out);
    return -1;
  }
  *bytes = out;
  *owned = true;
  return 0;
#else
  return fail(err, ".npz: deflated entries need zlib, which this build lacks "
                   "(np.savez, not np.savez_compressed, writes stored ones)");
#endif
}

/* One entry as an npz_entry (name without ".npy"). */
static int read_entry(const unsigned char *b, size_t len, const zip_entry *ze,
                      npz_entry *out, char err[NPY_ERR_MAX]) {
  const unsigned char *bytes;
  bool owned;
  if (entry_bytes(b, len, ze, &bytes, &owned, err)) return -1;
  /* as NumPy's zipfile does: a damaged entry is refused, not read */
  int rc = crc32_of(bytes, (size_t)ze->usize) != ze->crc
               ? fail(err, ".npz: an entry's CRC-32 does not match (the "
                           "file is damaged)")
               : npy_read(bytes, (size_t)ze->usize, &out->v, err);
  if (owned) free((void *)bytes);
  if (rc) return -1;
  size_t n = ze->name_len;
  if (n >= 4 && !memcmp(ze->name + n - 4, ".npy", 4)) n -= 4;
  if (!(out->name = malloc(n + 1))) return fail(err, ".npz: out of memory");
  memcpy(out->name, ze->name, n);
  out->name[n] = 0;
  return 0;
}

/* np.savez(a, b) writes arr_0, arr_1, ...: put those in number order. */
static int arr_number(const char *name) {
  if (strncmp(name, "arr_", 4)) return -1;
  char *end;
  long k = strtol(name + 4, &end, 10);
  return *end || name[4] < '0' || name[4] > '9' || k > 1000000 ? -1 : (int)k;
}

static void order_entries(npz_entry *es, int n) {
  for (int i = 0; i < n; i++)
    if (arr_number(es[i].name) < 0) return; /* keep archive order */
  for (int i = 1; i < n; i++) /* insertion sort: a handful of arrays */
    for (int j = i; j > 0 && arr_number(es[j - 1].name) >
                                 arr_number(es[j].name); j--) {
      npz_entry t = es[j];
      es[j] = es[j - 1];
      es[j - 1] = t;
    }
}

int npz_read(const unsigned char *b, size_t len, npz_entry **entries, int *n,
             char err[NPY_ERR_MAX]) {
  zip_dir dir;
  *entries = NULL;
  *n = 0;
  if (find_dir(b, len, &dir, err)) return -1;
  if (dir.count > 4096) return fail(err, ".npz: more than 4096 arrays");
  npz_entry *es = calloc((size_t)dir.count + 1, sizeof *es);
  if (!es) return fail(err, ".npz: out of memory");
  uint64_t at = dir.offset;
  int got = 0;
  for (uint64_t i = 0; i < dir.count; i++, got++) {
    zip_entry ze;
    if (read_central(b, len, &at, &ze, err) ||
        read_entry(b, len, &ze, &es[got], err)) {
      npz_free(es, got + 1);
      return -1;
    }
  }
  order_entries(es, got);
  *entries = es;
  *n = got;
  return 0;
}

void npz_free(npz_entry *entries, int n) {
  for (int i = 0; entries && i < n; i++) {
    free(entries[i].name);
    shlo_value_release(entries[i].v);
  }
  free(entries);
}

/* ---- writing ----------------------------------------------------------- */

/* An entry's .npy image and where its local header went. */
typedef struct npz_out {
  unsigned char *npy;
  size_t len;
  uint32_t crc;
  uint64_t local;
  char name[32];
} npz_out;

static void put_local(unsigned char *p, const npz_out *o) {
  size_t nl = strlen(o->name);
  memset(p, 0, LOCAL_LEN);
  wr32(p, SIG_LOCAL);
  wr16(p + 4, 20); /* version needed: 2.0 */
  wr32(p + 14, o->crc);
  wr32(p + 18, (uint32_t)o->len);
  wr32(p + 22, (uint32_t)o->len);
  wr16(p + 26, (uint32_t)nl);
  memcpy(p + LOCAL_LEN, o->name, nl);
}

static void put_central(unsigned char *p, const npz_out *o) {
  size_t nl = strlen(o->name);
  memset(p, 0, CENTRAL_LEN);
  wr32(p, SIG_CENTRAL);
  wr16(p + 4, 20);
  wr16(p + 6, 20);
  wr32(p + 16, o->crc);
  wr32(p + 20, (uint32_t)o->len);
  wr32(p + 24, (uint32_t)o->len);
  wr16(p + 28, (uint32_t)nl);
  wr32(p + 42, (uint32_t)o->local);
  memcpy(p + CENTRAL_LEN, o->name, nl);
}

/* Lay the archive out from the entries' images. */
static int assemble(npz_out *os, int n, unsigned char **bytes, size_t *len,
                    char err[NPY_ERR_MAX]) {
  uint64_t total = END_LEN;
  for (int i = 0; i < n; i++)
    total += LOCAL_LEN + CENTRAL_LEN + 2 * strlen(os[i].name) + os[i].len;
  if (total >= U32_MAX_FIELD)
    return fail(err, ".npz of 4 GiB or more (no zip64 writer): write each "
                     "result as .npy");
  unsigned char *b = malloc((size_t)total), *p = b;
  if (!b) return fail(err, "out of memory");
  for (int i = 0; i < n; i++) {
    os[i].local = (uint64_t)(p - b);
    put_local(p, &os[i]);
    p += LOCAL_LEN + strlen(os[i].name);
    memcpy(p, os[i].npy, os[i].len);
    p += os[i].len;
  }
  unsigned char *dir = p;
  for (int i = 0; i < n; i++) {
    put_central(p, &os[i]);
    p += CENTRAL_LEN + strlen(os[i].name);
  }
  memset(p, 0, END_LEN);
  wr32(p, SIG_END);
  wr16(p + 8, (uint32_t)n);
  wr16(p + 10, (uint32_t)n);
  wr32(p + 12, (uint32_t)(p - dir));
  wr32(p + 16, (uint32_t)(dir - b));
  *bytes = b;
  *len = (size_t)total;
  return 0;
}

int npz_write(shlo_value *const *vals, int n, unsigned char **bytes,
              size_t *len, char err[NPY_ERR_MAX]) {
  if (n > 0xFFFE) return fail(err, "too many arrays for one .npz");
  npz_out *os = calloc((size_t)n + 1, sizeof *os);
  if (!os) return fail(err, "out of memory");
  int rc = 0;
  for (int i = 0; i < n && !rc; i++) {
    snprintf(os[i].name, sizeof os[i].name, "arr_%d.npy", i);
    rc = npy_write(vals[i], &os[i].npy, &os[i].len, err);
    if (!rc) os[i].crc = crc32_of(os[i].npy, os[i].len);
  }
  if (!rc) rc = assemble(os, n, bytes, len, err);
  for (int i = 0; i < n; i++) free(os[i].npy);
  free(os);
  return rc;
}
