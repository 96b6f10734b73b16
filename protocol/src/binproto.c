/* SPDX-License-Identifier: Apache-2.0 */
/* The binary protocol codec (PROTOCOL.md part 2): header checks, the
 * dtype table, value headers, error frames.  Every length read from a
 * peer is checked here before anyone trusts it. */
#include <stdlib.h>
#include <string.h>

#include "core/value.h"
#include "shlo/binproto.h"

static const char *const type_names[] = {
    "?",
#define N(e, v, s) s,
    SHLO_BIN_TYPES(N)
#undef N
};
_Static_assert(sizeof type_names / sizeof *type_names == SHLO_BIN_TYPE_END,
               "message types are numbered 1..N without gaps");

const char *shlo_bin_type_name(int type) {
  return type > 0 && type < SHLO_BIN_TYPE_END ? type_names[type] : "?";
}

/* The wire codes of PROTOCOL.md: index = code - 1.  Pinned here rather
 * than derived from shlo_elem_type, so the engine's enum may change. */
#define SHLO_BIN_DTYPES(X)                                                \
  X(SHLO_I1) X(SHLO_SI2) X(SHLO_SI4) X(SHLO_SI8) X(SHLO_SI16) X(SHLO_SI32) \
  X(SHLO_SI64) X(SHLO_UI2) X(SHLO_UI4) X(SHLO_UI8) X(SHLO_UI16)           \
  X(SHLO_UI32) X(SHLO_UI64) X(SHLO_F4E2M1FN) X(SHLO_F6E2M3FN)             \
  X(SHLO_F6E3M2FN) X(SHLO_F8E3M4) X(SHLO_F8E4M3) X(SHLO_F8E4M3FN)         \
  X(SHLO_F8E4M3FNUZ) X(SHLO_F8E4M3B11FNUZ) X(SHLO_F8E5M2)                 \
  X(SHLO_F8E5M2FNUZ) X(SHLO_F8E8M0FNU) X(SHLO_BF16) X(SHLO_F16)           \
  X(SHLO_F32) X(SHLO_F64) X(SHLO_C64) X(SHLO_C128)

static const int dtype_elems[] = {
#define D(e) e,
    SHLO_BIN_DTYPES(D)
#undef D
};
#define N_DTYPES (sizeof dtype_elems / sizeof *dtype_elems)
_Static_assert(N_DTYPES == 30, "PROTOCOL.md lists 30 dtype codes");

int shlo_bin_dtype_to_elem(unsigned code) {
  return code >= 1 && code <= N_DTYPES ? dtype_elems[code - 1] : -1;
}

unsigned shlo_bin_elem_to_dtype(int elem) {
  for (unsigned i = 0; i < N_DTYPES; i++)
    if (dtype_elems[i] == elem) return i + 1;
  return 0;
}

void shlo_bin_header_init(shlo_bin_header *h, int version, int type,
                          uint64_t id, uint64_t length) {
  memset(h, 0, sizeof *h);
  h->magic = SHLO_BIN_MAGIC;
  h->version = (uint16_t)version;
  h->type = (uint16_t)type;
  h->id = id;
  h->length = length;
}

int shlo_bin_header_check(const shlo_bin_header *h, int want_version,
                          uint64_t max_payload, shlo_proto_error *err) {
  if (h->magic != SHLO_BIN_MAGIC)
    return shlo_proto_fail(err, SHLO_PERR_INPUT,
                           "not a shlo binary frame (bad magic %08x)",
                           (unsigned)h->magic);
  if (want_version ? h->version != want_version
                   : (h->version < SHLO_BIN_VERSION_MIN ||
                      h->version > SHLO_BIN_VERSION_MAX))
    return shlo_proto_fail(err, SHLO_PERR_INPUT,
                           "frame version %u: this connection speaks %d",
                           (unsigned)h->version,
                           want_version ? want_version : SHLO_BIN_VERSION_MAX);
  if (h->type < 1 || h->type >= SHLO_BIN_TYPE_END)
    return shlo_proto_fail(err, SHLO_PERR_INPUT, "unknown message type %u",
                           (unsigned)h->type);
  if (h->flags || h->reserved)
    return shlo_proto_fail(err, SHLO_PERR_INPUT,
                           "reserved header fields must be zero");
  if (h->length % 8)
    return shlo_proto_fail(err, SHLO_PERR_INPUT,
                           "payload length %llu is not a multiple of 8",
                           (unsigned long long)h->length);
  if (max_payload && h->length > max_payload)
    return shlo_proto_fail(err, SHLO_PERR_LIMIT,
                           "limit max-body-bytes (%llu) exceeded by a "
                           "%llu-byte %s frame",
                           (unsigned long long)max_payload,
                           (unsigned long long)h->length,
                           shlo_bin_type_name(h->type));
  return 0;
}

/* The tensor part of shlo_bin_value_check: shape, byte length, limits. */
static int tensor_check(const shlo_bin_value *h, const uint64_t *dims,
                        const shlo_proto_limits *lim, const char *path,
                        int *elem, shlo_proto_error *err) {
  int et = shlo_bin_dtype_to_elem(h->dtype);
  if (et < 0)
    return shlo_proto_fail(err, SHLO_PERR_INPUT, "%s: unknown dtype code %u",
                           path, (unsigned)h->dtype);
  uint64_t n = 1;
  bool over = false;
  for (int i = 0; i < h->rank; i++) {
    if (dims[i] > (uint64_t)INT64_MAX) over = true;
    else if (dims[i] && n > (uint64_t)INT64_MAX / dims[i]) over = true;
    else n *= dims[i];
  }
  size_t es = shlo_elem_size((shlo_elem_type)et);
  if (over || (lim && lim->max_elements > 0 && n > (uint64_t)lim->max_elements))
    return shlo_proto_fail(err, SHLO_PERR_LIMIT,
                           "%s: limit max-tensor-elements (%lld) exceeded",
                           path, lim ? (long long)lim->max_elements : 0LL);
  if (n > (uint64_t)INT64_MAX / es)
    return shlo_proto_fail(err, SHLO_PERR_LIMIT, "%s: too many bytes", path);
  if (lim && lim->max_bytes > 0 && n * es > (uint64_t)lim->max_bytes)
    return shlo_proto_fail(err, SHLO_PERR_LIMIT,
                           "%s: limit max-tensor-bytes (%lld) exceeded by a "
                           "%llu-byte tensor", path, (long long)lim->max_bytes,
                           (unsigned long long)(n * es));
  if (h->length != n * es)
    return shlo_proto_fail(err, SHLO_PERR_INPUT,
                           "%s: %llu data bytes, the shape needs %llu (%zu "
                           "per element)", path,
                           (unsigned long long)h->length,
                           (unsigned long long)(n * es), es);
  *elem = et;
  return 0;
}

int shlo_bin_value_check(const shlo_bin_value *h, const uint64_t *dims,
                         const shlo_proto_limits *lim, const char *path,
                         int *elem, shlo_proto_error *err) {
  if (h->reserved)
    return shlo_proto_fail(err, SHLO_PERR_INPUT,
                           "%s: reserved value fields must be zero", path);
  if (h->rank > SHLO_MAX_RANK)
    return shlo_proto_fail(err, SHLO_PERR_INPUT, "%s: rank %u exceeds %d",
                           path, (unsigned)h->rank, SHLO_MAX_RANK);
  switch (h->kind) {
  case SHLO_BIN_TENSOR:
    return tensor_check(h, dims, lim, path, elem, err);
  case SHLO_BIN_TUPLE:
  case SHLO_BIN_TOKEN:
    if (h->dtype || h->rank || (h->kind == SHLO_BIN_TOKEN && h->length) ||
        h->length > 1u << 20)
      return shlo_proto_fail(err, SHLO_PERR_INPUT,
                             "%s: malformed tuple or token header", path);
    *elem = -1;
    return 0;
  default:
    return shlo_proto_fail(err, SHLO_PERR_INPUT, "%s: unknown value kind %u",
                           path, (unsigned)h->kind);
  }
}

uint64_t shlo_bin_value_size(const shlo_value *v) {
  if (v->kind == SHLO_TYPE_TUPLE) {
    uint64_t n = sizeof(shlo_bin_value);
    for (int i = 0; i < v->n_elems; i++) n += shlo_bin_value_size(v->elems[i]);
    return n;
  }
  if (v->kind != SHLO_TYPE_TENSOR) return sizeof(shlo_bin_value);
  return sizeof(shlo_bin_value) + 8 * (uint64_t)v->rank +
         shlo_bin_pad8(v->nbytes);
}

size_t shlo_bin_value_head(const shlo_value *v, void *out) {
  shlo_bin_value h = {0};
  if (v->kind == SHLO_TYPE_TUPLE) {
    h.kind = SHLO_BIN_TUPLE;
    h.length = (uint64_t)v->n_elems;
  } else if (v->kind != SHLO_TYPE_TENSOR) {
    h.kind = SHLO_BIN_TOKEN;
  } else {
    h.dtype = (uint16_t)shlo_bin_elem_to_dtype(v->elem);
    h.rank = (uint8_t)v->rank;
    h.length = v->nbytes;
  }
  memcpy(out, &h, sizeof h);
  if (h.kind == SHLO_BIN_TENSOR)
    for (int i = 0; i < v->rank; i++) {
      uint64_t d = (uint64_t)v->dims[i];
      memcpy((char *)out + sizeof h + 8 * (size_t)i, &d, 8);
    }
  return sizeof h + (h.kind == SHLO_BIN_TENSOR ? 8 * (size_t)v->rank : 0);
}

size_t shlo_bin_value_write(const shlo_value *v, void *out) {
  char *o = out;
  size_t n = shlo_bin_value_head(v, o);
  if (v->kind == SHLO_TYPE_TUPLE) {
    for (int i = 0; i < v->n_elems; i++)
      n += shlo_bin_value_write(v->elems[i], o + n);
  } else if (v->kind == SHLO_TYPE_TENSOR) {
    if (v->nbytes) memcpy(o + n, v->data, v->nbytes);
    memset(o + n + v->nbytes, 0, shlo_bin_pad8(v->nbytes) - v->nbytes);
    n += shlo_bin_pad8(v->nbytes);
  }
  return n;
}

static int value_read(const char *p, uint64_t len, const shlo_proto_limits *lim,
                      const char *path, int depth, shlo_value **out,
                      uint64_t *used, shlo_proto_error *err) {
  shlo_bin_value h;
  uint64_t dims[SHLO_MAX_RANK];
  *out = NULL;
  if (depth > 16)
    return shlo_proto_fail(err, SHLO_PERR_INPUT, "%s: nested too deep", path);
  if (len < sizeof h)
    return shlo_proto_fail(err, SHLO_PERR_INPUT, "%s: truncated", path);
  memcpy(&h, p, sizeof h);
  uint64_t off = sizeof h;
  if (h.rank <= SHLO_MAX_RANK && len - off >= 8 * (uint64_t)h.rank) {
    memcpy(dims, p + off, 8 * (size_t)h.rank);
    off += 8 * (uint64_t)h.rank;
  } else if (h.rank <= SHLO_MAX_RANK) {
    return shlo_proto_fail(err, SHLO_PERR_INPUT, "%s: truncated", path);
  }
  int et = -1; /* set by shlo_bin_value_check for tensors */
  if (shlo_bin_value_check(&h, dims, lim, path, &et, err)) return -1;
  if (h.kind == SHLO_BIN_TOKEN) {
    *out = shlo_token_new();
  } else if (h.kind == SHLO_BIN_TUPLE) {
    if (h.length > (len - off) / sizeof h)
      return shlo_proto_fail(err, SHLO_PERR_INPUT, "%s: truncated", path);
    shlo_value **el = calloc((size_t)h.length + 1, sizeof *el);
    if (!el) return shlo_proto_fail(err, SHLO_PERR_LIMIT, "out of memory");
    for (uint64_t i = 0; i < h.length; i++) {
      uint64_t u;
      if (value_read(p + off, len - off, lim, path, depth + 1, &el[i], &u,
                     err)) {
        while (i--) shlo_value_unref(el[i]);
        free(el);
        return -1;
      }
      off += u;
    }
    *out = shlo_tuple_new((int)h.length, el);
    free(el);
  } else {
    if (shlo_bin_pad8(h.length) > len - off)
      return shlo_proto_fail(err, SHLO_PERR_INPUT, "%s: truncated", path);
    int64_t d[SHLO_MAX_RANK];
    for (int i = 0; i < h.rank; i++) d[i] = (int64_t)dims[i];
    *out = shlo_tensor_new((shlo_elem_type)et, h.rank, d);
    if (*out && h.length) memcpy((*out)->data, p + off, h.length);
    off += shlo_bin_pad8(h.length);
  }
  if (!*out) return shlo_proto_fail(err, SHLO_PERR_LIMIT, "out of memory");
  *used = off;
  return 0;
}

int shlo_bin_value_read(const void *buf, uint64_t len,
                        const shlo_proto_limits *lim, const char *path,
                        shlo_value **out, uint64_t *used,
                        shlo_proto_error *err) {
  return value_read(buf, len, lim, path, 0, out, used, err);
}

void *shlo_bin_error_frame(int version, uint64_t id,
                           const shlo_proto_error *e, int engine_status,
                           size_t *len) {
  size_t ml = strlen(e->message);
  size_t n = sizeof(shlo_bin_header) + sizeof(shlo_bin_error) +
             shlo_bin_pad8(ml);
  char *f = calloc(1, n);
  if (!f) return NULL;
  shlo_bin_header h;
  shlo_bin_header_init(&h, version, SHLO_BIN_ERROR, id,
                       n - sizeof(shlo_bin_header));
  shlo_bin_error b = {(uint32_t)e->kind, (uint32_t)e->http,
                      (uint32_t)(e->line > 0 ? e->line : 0),
                      (uint32_t)(e->column > 0 ? e->column : 0),
                      engine_status, (uint32_t)ml};
  memcpy(f, &h, sizeof h);
  memcpy(f + sizeof h, &b, sizeof b);
  memcpy(f + sizeof h + sizeof b, e->message, ml);
  *len = n;
  return f;
}

int shlo_bin_error_parse(const void *payload, uint64_t len,
                         shlo_proto_error *e, int *engine_status) {
  shlo_bin_error b;
  if (len < sizeof b) return -1;
  memcpy(&b, payload, sizeof b);
  if (b.message_length > len - sizeof b || b.kind >= SHLO_PERR_COUNT)
    return -1;
  e->kind = (shlo_proto_err_kind)b.kind;
  e->http = (int)b.status;
  e->line = (int)b.line;
  e->column = (int)b.column;
  size_t ml = b.message_length < sizeof e->message - 1 ? b.message_length
                                                       : sizeof e->message - 1;
  memcpy(e->message, (const char *)payload + sizeof b, ml);
  e->message[ml] = 0;
  if (engine_status) *engine_status = b.engine_status;
  return 0;
}
