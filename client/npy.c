/* SPDX-License-Identifier: Apache-2.0 */
/* .npy and .npz files <-> tensors (npy.h).  The .npy format: the magic
 * "\x93NUMPY", a version (1.0: a 16-bit header length; 2.0 and 3.0: 32-bit),
 * then a Python dict literal {'descr': '<f4', 'fortran_order': False,
 * 'shape': (2, 3), } padded so the data starts 64-byte aligned, then the
 * elements.  Bytes come from files the user names: every length and count
 * is checked before it is used. */
#include "npy.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAGIC_LEN 6

static int fail(char err[NPY_ERR_MAX], const char *fmt, const char *arg) {
  snprintf(err, NPY_ERR_MAX, fmt, arg);
  return -1;
}

bool npy_is_zip(const unsigned char *bytes, size_t len) {
  return len >= 4 && !memcmp(bytes, "PK\3\4", 4);
}

/* ---- dtypes ------------------------------------------------------------ */

const char *npy_descr_of(shlo_elem_type elem) {
  switch (elem) {
  case SHLO_I1: return "|b1";
  case SHLO_SI2: case SHLO_SI4: case SHLO_SI8: return "|i1";
  case SHLO_SI16: return "<i2";
  case SHLO_SI32: return "<i4";
  case SHLO_SI64: case SHLO_INDEX: return "<i8";
  case SHLO_UI16: case SHLO_BF16: return "<u2";
  case SHLO_UI32: return "<u4";
  case SHLO_UI64: return "<u8";
  case SHLO_F16: return "<f2";
  case SHLO_F32: return "<f4";
  case SHLO_F64: return "<f8";
  case SHLO_C64: return "<c8";
  case SHLO_C128: return "<c16";
  default: return "|u1"; /* ui2, ui4, ui8 and the narrow floats */
  }
}

/* The element type numpy's dtype string names (kind letter and item size);
 * *swap when its bytes are big-endian.  -1 when shlo has none. */
static int elem_of_descr(const char *d, bool *swap) {
  char order = d[0];
  if (order != '<' && order != '>' && order != '|' && order != '=')
    return -1;
  char kind = d[1];
  char *end;
  long size = strtol(d + 2, &end, 10);
  if (*end || size < 1) return -1;
  *swap = order == '>' && size > 1;
  if (kind == 'c') *swap = order == '>'; /* each part swapped */
  static const struct { char kind; long size; shlo_elem_type t; } map[] = {
      {'b', 1, SHLO_I1},    {'i', 1, SHLO_SI8},   {'i', 2, SHLO_SI16},
      {'i', 4, SHLO_SI32},  {'i', 8, SHLO_SI64},  {'u', 1, SHLO_UI8},
      {'u', 2, SHLO_UI16},  {'u', 4, SHLO_UI32},  {'u', 8, SHLO_UI64},
      {'f', 2, SHLO_F16},   {'f', 4, SHLO_F32},   {'f', 8, SHLO_F64},
      {'c', 8, SHLO_C64},   {'c', 16, SHLO_C128}, {'V', 1, SHLO_UI8},
      {'V', 2, SHLO_UI16},
  };
  for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
    if (map[i].kind == kind && map[i].size == size) return (int)map[i].t;
  return -1;
}

/* Whether a tensor of elem `have` is how numpy carries `want` (its raw
 * view, npy.h). */
static bool is_raw_view(shlo_elem_type have, shlo_elem_type want) {
  switch (want) {
  case SHLO_BF16: return have == SHLO_UI16 || have == SHLO_SI16;
  case SHLO_SI2: case SHLO_SI4: case SHLO_UI2: case SHLO_UI4:
    return have == SHLO_SI8 || have == SHLO_UI8;
  case SHLO_INDEX: return have == SHLO_SI64;
  default:
    return shlo_elem_is_float(want) && shlo_elem_bits(want) <= 8 &&
           (have == SHLO_UI8 || have == SHLO_SI8);
  }
}

bool npy_retype(shlo_value **v, shlo_elem_type want) {
  shlo_elem_type have = shlo_tensor_elem(*v);
  if (have == want) return true;
  if (!is_raw_view(have, want)) return false;
  shlo_value *t = shlo_tensor_new(want, shlo_tensor_rank(*v),
                                  shlo_tensor_dims(*v));
  if (!t) return false;
  memcpy(shlo_tensor_data(t), shlo_tensor_data_const(*v),
         shlo_tensor_nbytes(t));
  int64_t n = shlo_tensor_numel(t);
  if (shlo_elem_is_int(want) && shlo_elem_bits(want) < 8) {
    /* a sub-byte integer lives sign- or zero-extended in its byte */
    int8_t *p = shlo_tensor_data(t);
    for (int64_t i = 0; i < n; i++) p[i] = (int8_t)shlo_int_wrap(want, p[i]);
  } else if (shlo_elem_bits(want) < 8) {
    /* a narrow float's pattern is its low bits */
    uint8_t *p = shlo_tensor_data(t), mask = (uint8_t)((1u << shlo_elem_bits(want)) - 1);
    for (int64_t i = 0; i < n; i++) p[i] &= mask;
  }
  shlo_value_release(*v);
  *v = t;
  return true;
}

/* ---- the header dict --------------------------------------------------- */

typedef struct npy_header {
  char descr[16];
  bool fortran;
  int rank;
  int64_t dims[SHLO_MAX_RANK];
} npy_header;

/* Where key's value starts in the dict h (after "'key':"), or NULL. */
static const char *dict_value(const char *h, const char *key) {
  char pat[32];
  for (int q = 0; q < 2; q++) {
    snprintf(pat, sizeof pat, q ? "\"%s\"" : "'%s'", key);
    const char *p = strstr(h, pat);
    if (!p) continue;
    p += strlen(pat);
    while (*p == ' ') p++;
    if (*p++ != ':') return NULL;
    while (*p == ' ') p++;
    return p;
  }
  return NULL;
}

static int parse_shape(const char *p, npy_header *h, char err[NPY_ERR_MAX]) {
  if (*p++ != '(') return fail(err, "%s", ".npy header: shape is not a tuple");
  h->rank = 0;
  for (;;) {
    while (*p == ' ' || *p == ',') p++;
    if (*p == ')') return 0;
    if (!isdigit((unsigned char)*p))
      return fail(err, "%s", ".npy header: bad shape");
    if (h->rank == SHLO_MAX_RANK)
      return fail(err, "%s", ".npy header: more dimensions than shlo takes "
                             "(16)");
    char *end;
    long long d = strtoll(p, &end, 10);
    if (d < 0 || d > INT64_MAX / 2)
      return fail(err, "%s", ".npy header: bad dimension");
    h->dims[h->rank++] = d;
    p = end;
    if (*p == 'L') p++; /* Python 2's long */
  }
}

static int parse_header(const char *text, npy_header *h,
                        char err[NPY_ERR_MAX]) {
  const char *d = dict_value(text, "descr");
  if (!d || (*d != '\'' && *d != '"'))
    return fail(err, "%s", ".npy header: no descr string (structured "
                           "dtypes are not tensors)");
  const char *close = strchr(d + 1, *d);
  if (!close || close - d - 1 >= (long)sizeof h->descr)
    return fail(err, "%s", ".npy header: bad descr");
  memcpy(h->descr, d + 1, (size_t)(close - d - 1));
  h->descr[close - d - 1] = 0;
  const char *f = dict_value(text, "fortran_order");
  if (!f) return fail(err, "%s", ".npy header: no fortran_order");
  h->fortran = !strncmp(f, "True", 4);
  const char *s = dict_value(text, "shape");
  if (!s) return fail(err, "%s", ".npy header: no shape");
  return parse_shape(s, h, err);
}

/* ---- reading ----------------------------------------------------------- */

/* Reverse the byte order of each part (size bytes) of n parts. */
static void swap_parts(unsigned char *p, size_t n, size_t size) {
  for (size_t i = 0; i < n; i++, p += size)
    for (size_t a = 0, b = size - 1; a < b; a++, b--) {
      unsigned char t = p[a];
      p[a] = p[b];
      p[b] = t;
    }
}

/* Copy column-major src into row-major tensor t (shape dims). */
static void from_fortran(shlo_value *t, const unsigned char *src) {
  int rank = shlo_tensor_rank(t);
  const int64_t *dims = shlo_tensor_dims(t);
  size_t es = shlo_elem_size(shlo_tensor_elem(t));
  int64_t n = shlo_tensor_numel(t), idx[SHLO_MAX_RANK] = {0};
  int64_t fstride[SHLO_MAX_RANK];
  for (int d = 0; d < rank; d++)
    fstride[d] = d ? fstride[d - 1] * dims[d - 1] : 1;
  unsigned char *dst = shlo_tensor_data(t);
  for (int64_t i = 0; i < n; i++) {
    int64_t off = 0;
    for (int d = 0; d < rank; d++) off += idx[d] * fstride[d];
    memcpy(dst + (size_t)i * es, src + (size_t)off * es, es);
    for (int d = rank - 1; d >= 0 && ++idx[d] == dims[d]; d--) idx[d] = 0;
  }
}

/* The header dict's text and where the data starts. */
static int split_npy(const unsigned char *b, size_t len, char **dict,
                     size_t *data_at, char err[NPY_ERR_MAX]) {
  if (len < 10 || memcmp(b, NPY_MAGIC, NPY_MAGIC_LEN))
    return fail(err, "%s", "not an .npy file (no \\x93NUMPY magic)");
  int major = b[6];
  size_t hlen, start;
  if (major == 1) {
    hlen = b[8] | (size_t)b[9] << 8;
    start = 10;
  } else if (major == 2 || major == 3) {
    if (len < 12) return fail(err, "%s", "truncated .npy header");
    hlen = b[8] | (size_t)b[9] << 8 | (size_t)b[10] << 16 |
           (size_t)b[11] << 24;
    start = 12;
  } else {
    return fail(err, "%s", "unknown .npy version");
  }
  if (hlen > len - start) return fail(err, "%s", "truncated .npy header");
  if (!(*dict = malloc(hlen + 1))) return fail(err, "%s", "out of memory");
  memcpy(*dict, b + start, hlen);
  (*dict)[hlen] = 0;
  *data_at = start + hlen;
  return 0;
}

int npy_read(const unsigned char *bytes, size_t len, shlo_value **out,
             char err[NPY_ERR_MAX]) {
  char *dict = NULL;
  size_t at;
  npy_header h;
  *out = NULL;
  if (split_npy(bytes, len, &dict, &at, err)) return -1;
  int rc = parse_header(dict, &h, err);
  free(dict);
  if (rc) return -1;
  bool swap = false;
  int elem = elem_of_descr(h.descr, &swap);
  if (elem < 0) return fail(err, "numpy dtype '%s' has no StableHLO type",
                            h.descr);
  shlo_value *t = shlo_tensor_new((shlo_elem_type)elem, h.rank, h.dims);
  if (!t) return fail(err, "%s", ".npy array too large for memory");
  size_t nbytes = shlo_tensor_nbytes(t);
  if (nbytes > len - at) {
    shlo_value_release(t);
    return fail(err, "%s", ".npy data shorter than its shape says");
  }
  if (h.fortran) from_fortran(t, bytes + at);
  else memcpy(shlo_tensor_data(t), bytes + at, nbytes);
  if (swap) {
    size_t part = shlo_elem_size((shlo_elem_type)elem);
    if (shlo_elem_is_complex((shlo_elem_type)elem)) part /= 2;
    swap_parts(shlo_tensor_data(t), nbytes / part, part);
  }
  *out = t;
  return 0;
}

/* ---- writing ----------------------------------------------------------- */

int npy_write(const shlo_value *v, unsigned char **bytes, size_t *len,
              char err[NPY_ERR_MAX]) {
  if (shlo_value_kind(v) != SHLO_TYPE_TENSOR)
    return fail(err, "%s", "only tensors can be written as .npy (this "
                           "result is a tuple or a token)");
  char dict[600];
  int n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': "
                   "False, 'shape': (", npy_descr_of(shlo_tensor_elem(v)));
  int rank = shlo_tensor_rank(v);
  const int64_t *dims = shlo_tensor_dims(v);
  for (int d = 0; d < rank; d++)
    n += snprintf(dict + n, sizeof dict - (size_t)n, "%lld,%s",
                  (long long)dims[d], d + 1 < rank ? " " : "");
  n += snprintf(dict + n, sizeof dict - (size_t)n, "), }");
  /* pad with spaces and a newline so the data starts 64-byte aligned */
  size_t hlen = (size_t)n + 1, total_head = 10 + hlen;
  hlen += (64 - total_head % 64) % 64;
  size_t data = shlo_tensor_nbytes(v);
  unsigned char *b = malloc(10 + hlen + data);
  if (!b) return fail(err, "%s", "out of memory");
  memcpy(b, NPY_MAGIC "\x01\x00", 8);
  b[8] = (unsigned char)(hlen & 0xff);
  b[9] = (unsigned char)(hlen >> 8);
  memcpy(b + 10, dict, (size_t)n);
  memset(b + 10 + n, ' ', hlen - (size_t)n - 1);
  b[10 + hlen - 1] = '\n';
  memcpy(b + 10 + hlen, shlo_tensor_data_const(v), data);
  *bytes = b;
  *len = 10 + hlen + data;
  return 0;
}
