/* SPDX-License-Identifier: Apache-2.0 */
/* The JSON codec of PROTOCOL.md: errors, tensors, execution requests and
 * responses.  Parsing uses cJSON; writing uses json_write.h (exact 64-bit
 * integers, shortest round-trip floats), never a cJSON tree. */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/value.h"
#include "shlo/protocol.h"
#include "core/tensor_uninit.h"
#include "json_read.h"
#include "json_write.h"

/* ---- errors ---- */

static const char *const err_names[] = {
#define E(e, s, h) s,
    SHLO_PROTO_ERRORS(E)
#undef E
};
static const int err_http[] = {
#define E(e, s, h) h,
    SHLO_PROTO_ERRORS(E)
#undef E
};

const char *shlo_proto_err_name(shlo_proto_err_kind k) {
  return (unsigned)k < SHLO_PERR_COUNT ? err_names[k] : "runtime";
}

int shlo_proto_err_http(shlo_proto_err_kind k) {
  return (unsigned)k < SHLO_PERR_COUNT ? err_http[k] : 500;
}

int shlo_proto_fail(shlo_proto_error *e, shlo_proto_err_kind kind,
                    const char *fmt, ...) {
  e->kind = kind;
  e->http = shlo_proto_err_http(kind);
  e->line = e->column = 0;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(e->message, sizeof e->message, fmt, ap);
  va_end(ap);
  return -1;
}

void shlo_proto_from_status(shlo_proto_error *e, int status,
                            const char *message, int line, int column) {
  shlo_proto_err_kind k;
  switch (status) {
  case SHLO_EPARSE: k = SHLO_PERR_PARSE; break;
  case SHLO_EVERIFY:
  case SHLO_EUNSUPPORTED: k = SHLO_PERR_VERIFY; break;
  case SHLO_EINPUT: k = SHLO_PERR_INPUT; break;
  case SHLO_ETIMEOUT:
  case SHLO_ECANCELED: k = SHLO_PERR_TIMEOUT; break;
  case SHLO_ELIMIT: k = SHLO_PERR_LIMIT; break;
  default: k = SHLO_PERR_RUNTIME; break;
  }
  shlo_proto_fail(e, k, "%s", message && *message ? message
                                                  : shlo_status_message(status));
  e->line = line;
  e->column = column;
}

char *shlo_proto_error_json(const shlo_proto_error *e) {
  strbuf b = {0};
  shlo__sb_puts(&b, "{\"error\":{\"kind\":");
  shlo__json_str(&b, shlo_proto_err_name(e->kind));
  shlo__json_key(&b, "message", false);
  shlo__json_str(&b, e->message);
  if (e->line > 0) {
    shlo__json_key(&b, "line", false);
    shlo__json_num(&b, e->line);
  }
  if (e->column > 0) {
    shlo__json_key(&b, "column", false);
    shlo__json_num(&b, e->column);
  }
  shlo__sb_puts(&b, "}}");
  return shlo__sb_take(&b);
}

bool shlo_proto_error_parse(const char *body, size_t len,
                            shlo_proto_error *e) {
  cJSON *root = cJSON_ParseWithLength(body, len);
  const cJSON *o = cJSON_GetObjectItemCaseSensitive(root, "error");
  const cJSON *k = cJSON_GetObjectItemCaseSensitive(o, "kind");
  const cJSON *m = cJSON_GetObjectItemCaseSensitive(o, "message");
  bool ok = cJSON_IsString(k) && cJSON_IsString(m);
  if (ok) {
    e->kind = SHLO_PERR_RUNTIME;
    for (int i = 0; i < SHLO_PERR_COUNT; i++)
      if (!strcmp(err_names[i], k->valuestring)) e->kind = i;
    e->http = shlo_proto_err_http(e->kind);
    snprintf(e->message, sizeof e->message, "%s", m->valuestring);
    const cJSON *l = cJSON_GetObjectItemCaseSensitive(o, "line");
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(o, "column");
    e->line = cJSON_IsNumber(l) ? l->valueint : 0;
    e->column = cJSON_IsNumber(c) ? c->valueint : 0;
  }
  cJSON_Delete(root);
  return ok;
}

/* ---- dtypes ---- */

static const struct {
  const char *alias;
  shlo_elem_type t;
} dtype_aliases[] = {
    {"bool", SHLO_I1},      {"int8", SHLO_SI8},     {"int16", SHLO_SI16},
    {"int32", SHLO_SI32},   {"int64", SHLO_SI64},   {"uint8", SHLO_UI8},
    {"uint16", SHLO_UI16},  {"uint32", SHLO_UI32},  {"uint64", SHLO_UI64},
    {"float16", SHLO_F16},  {"bfloat16", SHLO_BF16}, {"float32", SHLO_F32},
    {"float64", SHLO_F64},  {"c64", SHLO_C64},      {"c128", SHLO_C128},
    {"complex64", SHLO_C64}, {"complex128", SHLO_C128},
};

int shlo_proto_dtype_parse(const char *s) {
  for (size_t i = 0; i < sizeof dtype_aliases / sizeof *dtype_aliases; i++)
    if (!strcmp(s, dtype_aliases[i].alias)) return dtype_aliases[i].t;
  return shlo_elem_from_name(s, strlen(s));
}

const char *shlo_proto_dtype_name(shlo_elem_type t) {
  return shlo_elem_name(t);
}

/* ---- tensors: decoding ---- */

typedef struct filler {
  shlo_value *v;
  int64_t i;
  const char *path;
  shlo_proto_error *err;
} filler;

/* One element as the request wrote it -- a tree node's, or a token read
 * from a span's text -- which the set_*_leaf functions judge. */
typedef enum { LEAF_NUMBER, LEAF_STRING, LEAF_BOOL, LEAF_OTHER } leaf_kind;
typedef struct leaf {
  leaf_kind kind;
  double num;      /* NUMBER */
  bool truth;      /* BOOL */
  const char *str; /* STRING, NUL-terminated */
} leaf;

static leaf leaf_of_node(const cJSON *j) {
  leaf l = {LEAF_OTHER, 0, false, NULL};
  if (cJSON_IsNumber(j)) l.kind = LEAF_NUMBER, l.num = j->valuedouble;
  else if (cJSON_IsString(j)) l.kind = LEAF_STRING, l.str = j->valuestring;
  else if (cJSON_IsBool(j)) l.kind = LEAF_BOOL, l.truth = cJSON_IsTrue(j);
  return l;
}

static bool special_float(const char *s, double *x) {
  if (!strcmp(s, "NaN") || !strcmp(s, "nan")) *x = NAN;
  else if (!strcmp(s, "Infinity") || !strcmp(s, "inf") || !strcmp(s, "+inf"))
    *x = INFINITY;
  else if (!strcmp(s, "-Infinity") || !strcmp(s, "-inf")) *x = -INFINITY;
  else return false;
  return true;
}

/* A float element may be a decimal integer string: shlo_proto_json_parse
 * turns integer tokens beyond 2^53 into such strings. */
static bool decimal_integer(const char *s, double *x) {
  const char *p = s + (*s == '-');
  if (!*p) return false;
  for (const char *q = p; *q; q++)
    if (*q < '0' || *q > '9') return false;
  *x = strtod(s, NULL);
  return true;
}

static int leaf_float(filler *f, const leaf *l, double *x) {
  if (l->kind == LEAF_NUMBER) {
    *x = l->num;
    return 0;
  }
  if (l->kind == LEAF_STRING &&
      (special_float(l->str, x) || decimal_integer(l->str, x)))
    return 0;
  return shlo_proto_fail(f->err, SHLO_PERR_INPUT,
                         "%s.data[%lld]: expected a number or \"NaN\", "
                         "\"Infinity\", \"-Infinity\" for %s",
                         f->path, (long long)f->i, shlo_elem_name(f->v->elem));
}

static int set_float_leaf(filler *f, const leaf *l) {
  double x;
  if (leaf_float(f, l, &x)) return -1;
  shlo_tensor_set_f64(f->v, f->i, x);
  return 0;
}

/* A complex element: [re, im] (im given), or a bare real part. */
static int set_complex_leaf(filler *f, const leaf *re_l, const leaf *im_l) {
  shlo_value *v = f->v;
  double re, im = 0;
  if (leaf_float(f, re_l, &re) || (im_l && leaf_float(f, im_l, &im)))
    return -1;
  char *p = (char *)v->data + (size_t)f->i * shlo_elem_size(v->elem);
  if (v->elem == SHLO_C64) {
    float pr[2] = {(float)re, (float)im};
    memcpy(p, pr, sizeof pr);
  } else {
    double pr[2] = {re, im};
    memcpy(p, pr, sizeof pr);
  }
  return 0;
}

static int not_a_pair(filler *f) {
  return shlo_proto_fail(f->err, SHLO_PERR_INPUT,
                         "%s.data[%lld]: a complex element is [re, im]",
                         f->path, (long long)f->i);
}

static int set_bool_leaf(filler *f, const leaf *l) {
  if (l->kind == LEAF_BOOL) {
    shlo_tensor_set_i64(f->v, f->i, l->truth);
  } else if (l->kind == LEAF_NUMBER && (l->num == 0 || l->num == 1)) {
    shlo_tensor_set_i64(f->v, f->i, (int64_t)l->num);
  } else {
    return shlo_proto_fail(f->err, SHLO_PERR_INPUT,
                           "%s.data[%lld]: expected true, false, 0 or 1 "
                           "for i1", f->path, (long long)f->i);
  }
  return 0;
}

/* An integer element given as a JSON number: whole and in [lo, hi). */
static int int_from_number(filler *f, double d, bool is_signed, double lo,
                           double hi, int64_t *x) {
  /* Integer tokens beyond 2^53 arrive as strings (shlo_proto_json_parse);
   * a number this large was written with a fraction or an exponent, and
   * its double may not be the integer meant. */
  if (fabs(d) > 9007199254740992.0)
    return shlo_proto_fail(f->err, SHLO_PERR_INPUT,
                           "%s.data[%lld]: %.17g is beyond 2^53, where a "
                           "JSON number may not be exact: write the integer "
                           "digit for digit, as a decimal string, or use "
                           "\"b64\"", f->path, (long long)f->i, d);
  if (d != floor(d) || d < lo || d >= hi)
    return shlo_proto_fail(f->err, SHLO_PERR_INPUT,
                           "%s.data[%lld]: %.17g is not a %s value", f->path,
                           (long long)f->i, d, shlo_elem_name(f->v->elem));
  *x = is_signed ? (int64_t)d : (int64_t)(uint64_t)d;
  return 0;
}

/* An integer element given as a decimal string, which carries 64-bit
 * integers exactly (a JSON number, read as a double, may not). */
static int int_from_string(filler *f, const char *s, bool is_signed,
                           double lo, double hi, int64_t *x) {
  int bits = shlo_elem_bits(f->v->elem);
  char *end;
  errno = 0;
  if (is_signed) *x = strtoll(s, &end, 10);
  else *x = (int64_t)strtoull(s, &end, 10);
  bool bad = *end || errno || (!is_signed && s[0] == '-');
  if (!bad && bits < 64)
    bad = is_signed ? ((double)*x < lo || (double)*x >= hi)
                    : (uint64_t)*x >= ((uint64_t)1 << bits);
  if (bad)
    return shlo_proto_fail(f->err, SHLO_PERR_INPUT,
                           "%s.data[%lld]: \"%.40s\" is not a %s value",
                           f->path, (long long)f->i, s,
                           shlo_elem_name(f->v->elem));
  return 0;
}

/* A signed or unsigned integer element, range-checked for its type. */
static int set_int_leaf(filler *f, const leaf *l) {
  shlo_elem_type t = f->v->elem;
  int bits = shlo_elem_bits(t);
  bool is_signed = shlo_elem_class_of(t) == SHLO_CLASS_SINT;
  double lo = is_signed ? -ldexp(1, bits - 1) : 0;
  double hi = is_signed ? ldexp(1, bits - 1) : ldexp(1, bits); /* exclusive */
  int64_t x = 0;
  if (l->kind == LEAF_NUMBER) {
    if (int_from_number(f, l->num, is_signed, lo, hi, &x)) return -1;
  } else if (l->kind == LEAF_STRING && l->str[0]) {
    if (int_from_string(f, l->str, is_signed, lo, hi, &x)) return -1;
  } else {
    return shlo_proto_fail(f->err, SHLO_PERR_INPUT,
                           "%s.data[%lld]: expected an integer for %s",
                           f->path, (long long)f->i, shlo_elem_name(t));
  }
  shlo_tensor_set_i64(f->v, f->i, x);
  return 0;
}

static int too_many(filler *f) {
  return shlo_proto_fail(f->err, SHLO_PERR_INPUT,
                         "%s.data: more elements than the shape's %lld",
                         f->path, (long long)f->v->numel);
}

/* Store one element (for complex: re, and im or NULL) as the next element
 * of f->v. */
static int set_leaf(filler *f, const leaf *l, const leaf *im) {
  shlo_value *v = f->v;
  if (f->i >= v->numel) return too_many(f);
  int rc;
  switch (shlo_elem_class_of(v->elem)) {
  case SHLO_CLASS_FLOAT: rc = set_float_leaf(f, l); break;
  case SHLO_CLASS_COMPLEX: rc = set_complex_leaf(f, l, im); break;
  case SHLO_CLASS_BOOL: rc = set_bool_leaf(f, l); break;
  default: rc = set_int_leaf(f, l); break; /* SINT, UINT */
  }
  if (rc) return -1;
  f->i++;
  return 0;
}

static int too_deep(filler *f) {
  return shlo_proto_fail(f->err, SHLO_PERR_INPUT,
                         "%s.data: nested deeper than any shape", f->path);
}

/* ---- elements from the text of a span (json_read.h) ---- */

typedef struct cursor {
  const char *p, *end;
  char buf[80]; /* the token of the last leaf read */
} cursor;

static void cursor_ws(cursor *c) {
  while (c->p < c->end && (*c->p == ' ' || *c->p == '\n' || *c->p == '\r' ||
                           *c->p == '\t'))
    c->p++;
}

/* The scalar (or, as LEAF_OTHER, any other value) at c->p; steps past it.
 * The span was checked when it was parsed, so the value is well-formed. */
static leaf read_leaf(cursor *c) {
  leaf l = {LEAF_OTHER, 0, false, NULL};
  cursor_ws(c);
  const char *a = c->p, *b = shlo__json_skip_value(a, c->end);
  c->p = b ? b : c->end;
  size_t n = (size_t)(c->p - a);
  if (!b || !n) return l;
  if (*a == 't' || *a == 'f') {
    l.kind = LEAF_BOOL;
    l.truth = *a == 't';
  } else if (*a == '"') {
    if (n - 2 < sizeof c->buf && !memchr(a, '\\', n)) {
      memcpy(c->buf, a + 1, n - 2);
      c->buf[n - 2] = 0;
      l.kind = LEAF_STRING;
      l.str = c->buf;
    }
  } else if (*a == '-' || (*a >= '0' && *a <= '9')) {
    if (n >= sizeof c->buf) return l;
    memcpy(c->buf, a, n);
    c->buf[n] = 0;
    size_t digits = strspn(c->buf + (*a == '-'), "0123456789");
    bool integral = digits == n - (*a == '-');
    if (shlo__json_big_integer(a, n, integral, digits)) {
      l.kind = LEAF_STRING;
      l.str = c->buf;
    } else {
      l.kind = LEAF_NUMBER;
      l.num = strtod(c->buf, NULL);
    }
  }
  return l;
}

/* A complex element [re, im] at c->p (just past its '['). */
static int fill_text_pair(filler *f, cursor *c) {
  leaf re = read_leaf(c);
  char re_buf[sizeof c->buf];
  if (re.kind == LEAF_STRING) { /* the next read reuses c->buf */
    memcpy(re_buf, c->buf, sizeof re_buf);
    re.str = re_buf;
  }
  cursor_ws(c);
  if (c->p >= c->end || *c->p++ != ',') return not_a_pair(f);
  leaf im = read_leaf(c);
  cursor_ws(c);
  if (c->p >= c->end || *c->p++ != ']') return not_a_pair(f);
  return set_leaf(f, &re, &im);
}

static int fill_text(filler *f, cursor *c, int depth) {
  if (depth > SHLO_MAX_RANK + 2) return too_deep(f);
  cursor_ws(c);
  if (c->p >= c->end || *c->p != '[') {
    leaf l = read_leaf(c);
    return set_leaf(f, &l, NULL);
  }
  c->p++;
  cursor_ws(c);
  if (c->p < c->end && *c->p == ']') {
    c->p++;
    return 0;
  }
  /* For complex types, an array without arrays inside is one element. */
  if (shlo_elem_is_complex(f->v->elem) && c->p < c->end && *c->p != '[')
    return fill_text_pair(f, c);
  for (;;) {
    if (fill_text(f, c, depth + 1)) return -1;
    cursor_ws(c);
    if (c->p >= c->end) return too_deep(f); /* not reached: checked JSON */
    if (*c->p++ == ']') return 0;
  }
}

/* ---- elements from a tree ---- */

static int fill(filler *f, const cJSON *j, int depth) {
  if (depth > SHLO_MAX_RANK + 2) return too_deep(f);
  if (shlo__json_is_span(j)) {
    cursor c;
    size_t n;
    c.p = shlo__json_span(j, &n);
    c.end = c.p + n;
    return fill_text(f, &c, depth);
  }
  if (cJSON_IsArray(j)) {
    /* For complex types, an array without arrays inside is one element. */
    if (shlo_elem_is_complex(f->v->elem) && j->child &&
        !cJSON_IsArray(j->child)) {
      if (cJSON_GetArraySize(j) != 2) return not_a_pair(f);
      leaf re = leaf_of_node(j->child), im = leaf_of_node(j->child->next);
      return set_leaf(f, &re, &im);
    }
    for (const cJSON *c = j->child; c; c = c->next)
      if (fill(f, c, depth + 1)) return -1;
    return 0;
  }
  leaf l = leaf_of_node(j);
  return set_leaf(f, &l, NULL);
}

static void normalize_ints(shlo_value *v) {
  shlo_elem_type t = v->elem;
  if (shlo_elem_size(t) != 1 || shlo_elem_bits(t) >= 8) return;
  if (shlo_elem_class_of(t) == SHLO_CLASS_FLOAT) return;
  unsigned char *p = v->data;
  for (int64_t i = 0; i < v->numel; i++)
    p[i] = (unsigned char)shlo_int_wrap(t, (int8_t)p[i]);
}

/* A tensor's dtype and shape, as the request states them. */
typedef struct tensor_head {
  int et; /* shlo_elem_type */
  int rank;
  int64_t dims[SHLO_MAX_RANK];
  int64_t numel;
  bool overflow; /* numel does not fit in int64_t */
} tensor_head;

static int parse_dtype(const cJSON *jd, const char *path, tensor_head *h,
                       shlo_proto_error *err) {
  if (!cJSON_IsString(jd))
    return shlo_proto_fail(err, SHLO_PERR_INPUT,
                           "%s.dtype: missing or not a string", path);
  h->et = shlo_proto_dtype_parse(jd->valuestring);
  if (h->et < 0 || h->et == SHLO_INDEX)
    return shlo_proto_fail(err, SHLO_PERR_INPUT, "%s.dtype: unknown dtype "
                           "\"%.64s\"", path, jd->valuestring);
  return 0;
}

static int parse_shape(const cJSON *js, const char *path, tensor_head *h,
                       shlo_proto_error *err) {
  if (!cJSON_IsArray(js))
    return shlo_proto_fail(err, SHLO_PERR_INPUT,
                           "%s.shape: missing or not an array", path);
  h->rank = cJSON_GetArraySize(js);
  if (h->rank > SHLO_MAX_RANK)
    return shlo_proto_fail(err, SHLO_PERR_INPUT, "%s.shape: rank %d exceeds "
                           "%d", path, h->rank, SHLO_MAX_RANK);
  h->numel = 1;
  h->overflow = false;
  int r = 0;
  for (const cJSON *c = js->child; c; c = c->next, r++) {
    double d = cJSON_IsNumber(c) ? c->valuedouble : -1;
    if (d < 0 || d != floor(d) || d > 9.0e15)
      return shlo_proto_fail(err, SHLO_PERR_INPUT, "%s.shape[%d]: not a "
                             "non-negative integer", path, r);
    h->dims[r] = (int64_t)d;
    if (h->dims[r] && h->numel > INT64_MAX / h->dims[r]) h->overflow = true;
    else h->numel *= h->dims[r];
  }
  return 0;
}

/* max-tensor-elements and max-tensor-bytes, before anything is allocated. */
static int check_tensor_limits(const tensor_head *h,
                               const shlo_proto_limits *lim, const char *path,
                               shlo_proto_error *err) {
  size_t esize = shlo_elem_size((shlo_elem_type)h->et);
  if (h->overflow || (lim && lim->max_elements > 0 &&
                      h->numel > lim->max_elements))
    return shlo_proto_fail(err, SHLO_PERR_LIMIT,
                           "%s: limit max-tensor-elements (%lld) exceeded by "
                           "shape with %s%lld elements", path,
                           lim ? (long long)lim->max_elements : 0LL,
                           h->overflow ? "more than " : "",
                           h->overflow ? (long long)INT64_MAX
                                       : (long long)h->numel);
  if (lim && lim->max_bytes > 0 &&
      (double)h->numel * (double)esize > (double)lim->max_bytes)
    return shlo_proto_fail(err, SHLO_PERR_LIMIT,
                           "%s: limit max-tensor-bytes (%lld) exceeded by a "
                           "%lld-byte tensor", path, (long long)lim->max_bytes,
                           (long long)h->numel * (long long)esize);
  return 0;
}

/* Does the tensor match the argument type want (dynamic dims match any)? */
static int check_wanted_type(const tensor_head *h, const shlo_type *want,
                             const char *path, shlo_proto_error *err) {
  bool ok = want->kind == SHLO_TYPE_TENSOR && (int)want->elem == h->et &&
            want->rank == h->rank;
  for (int i = 0; ok && i < h->rank; i++)
    if (want->dims[i] >= 0 && want->dims[i] != h->dims[i]) ok = false;
  if (ok) return 0;
  char got[64 + SHLO_MAX_RANK * 21] = "tensor<";
  for (int i = 0; i < h->rank; i++)
    snprintf(got + strlen(got), sizeof got - strlen(got), "%lldx",
             (long long)h->dims[i]);
  snprintf(got + strlen(got), sizeof got - strlen(got), "%s>",
           shlo_elem_name((shlo_elem_type)h->et));
  char wbuf[256];
  shlo_type_format(want, wbuf, sizeof wbuf);
  return shlo_proto_fail(err, SHLO_PERR_INPUT, "%s: expected %s, got %s",
                         path, wbuf, got);
}

/* The splice whose undecoded rest starts at text, if any. */
static shlo_proto_b64_splice *splice_at(shlo_proto_b64_splice *splices,
                                        int n, const char *text) {
  for (int i = 0; i < n; i++)
    if (splices[i].at == text && splices[i].bytes) return &splices[i];
  return NULL;
}

/* Decode text[0..blen) into v's nbytes as shlo_proto_b64_decode does, its
 * first sp->chars characters already decoded in sp (when given): v takes
 * sp's buffer when it is large enough.  Returns the bytes or -1. */
static int64_t decode_after(shlo_value *v, shlo_proto_b64_splice *sp,
                            const char *text, size_t blen) {
  if (!sp) return shlo_proto_b64_decode(text, blen, v->data, v->nbytes);
  if (sp->n > v->nbytes) return -1; /* ran out of room */
  size_t room = (v->nbytes + 63) / 64 * 64;
  bool own = room <= sp->cap;
  unsigned char *to = own ? sp->bytes : v->data;
  if (!own) memcpy(to, sp->bytes, sp->n);
  int64_t rest = shlo_proto_b64_decode(text, blen, to + sp->n,
                                       v->nbytes - sp->n);
  if (rest < 0) return -1;
  if (own && sp->n + (size_t)rest == v->nbytes && shlo__tensor_adopt(v, to))
    sp->bytes = NULL; /* v's now */
  else if (own)
    memcpy(v->data, to, sp->n + (size_t)rest);
  return (int64_t)(sp->n + (size_t)rest);
}

/* Fill v from "b64": exactly v->nbytes bytes, native byte order. */
static int fill_from_b64(shlo_value *v, const cJSON *jb,
                         shlo_proto_b64_splice *sp, const char *path,
                         shlo_proto_error *err) {
  const char *text;
  size_t blen;
  if (shlo__json_is_span(jb)) { /* straight from the request's text */
    text = shlo__json_span(jb, &blen);
  } else if (cJSON_IsString(jb)) {
    text = jb->valuestring;
    blen = strlen(text);
  } else {
    return shlo_proto_fail(err, SHLO_PERR_INPUT, "%s.b64: not a string",
                           path);
  }
  int64_t n = decode_after(v, sp, text, blen);
  if (sp) blen += sp->chars; /* the string's whole length */
  if (n != (int64_t)v->nbytes) {
    /* A decode that ran out of room is a size mismatch, not bad base64. */
    if (n < 0 && blen / 4 * 3 <= v->nbytes + 3)
      return shlo_proto_fail(err, SHLO_PERR_INPUT,
                             "%s.b64: not valid base64", path);
    return shlo_proto_fail(err, SHLO_PERR_INPUT,
                           "%s.b64: %lld bytes, the shape needs %zu (%zu per "
                           "element)", path,
                           n < 0 ? (long long)(blen / 4 * 3) : (long long)n,
                           v->nbytes, shlo_elem_size(v->elem));
  }
  normalize_ints(v);
  return 0;
}

/* Fill v from "data": nested lists whose leaves number v->numel. */
static int fill_from_data(shlo_value *v, const cJSON *jdata, const char *path,
                          shlo_proto_error *err) {
  filler f = {v, 0, path, err};
  if (fill(&f, jdata, 0)) return -1;
  if (f.i != v->numel)
    return shlo_proto_fail(err, SHLO_PERR_INPUT,
                           "%s.data: %lld elements, the shape needs %lld",
                           path, (long long)f.i, (long long)v->numel);
  return 0;
}

int shlo_proto_tensor_decode(const cJSON *j, const shlo_type *want,
                             const shlo_proto_limits *lim, const char *path,
                             shlo_value **out, shlo_proto_error *err) {
  return shlo_proto_tensor_decode_spliced(j, want, lim, NULL, 0, path, out,
                                          err);
}

int shlo_proto_tensor_decode_spliced(const cJSON *j, const shlo_type *want,
                                     const shlo_proto_limits *lim,
                                     shlo_proto_b64_splice *splices,
                                     int n_splices, const char *path,
                                     shlo_value **out,
                                     shlo_proto_error *err) {
  *out = NULL;
  if (!cJSON_IsObject(j))
    return shlo_proto_fail(err, SHLO_PERR_INPUT,
                           "%s: a tensor is an object {\"dtype\", \"shape\", "
                           "\"data\" or \"b64\"}", path);
  const cJSON *jd = cJSON_GetObjectItemCaseSensitive(j, "dtype");
  const cJSON *js = cJSON_GetObjectItemCaseSensitive(j, "shape");
  const cJSON *jdata = cJSON_GetObjectItemCaseSensitive(j, "data");
  const cJSON *jb = cJSON_GetObjectItemCaseSensitive(j, "b64");
  tensor_head h;
  if (parse_dtype(jd, path, &h, err) || parse_shape(js, path, &h, err) ||
      check_tensor_limits(&h, lim, path, err) ||
      (want && check_wanted_type(&h, want, path, err)))
    return -1;
  if ((jdata != NULL) == (jb != NULL))
    return shlo_proto_fail(err, SHLO_PERR_INPUT,
                           "%s: give exactly one of \"data\" and \"b64\"", path);
  /* Decoded base64 fills every byte or the tensor is dropped: no need to
   * zero a buffer it may replace. */
  size_t blen;
  shlo_proto_b64_splice *sp =
      jb && shlo__json_is_span(jb)
          ? splice_at(splices, n_splices, shlo__json_span(jb, &blen))
          : NULL;
  shlo_value *v =
      sp ? shlo__tensor_new_uninit((shlo_elem_type)h.et, h.rank, h.dims)
              : shlo_tensor_new((shlo_elem_type)h.et, h.rank, h.dims);
  if (!v)
    return shlo_proto_fail(err, SHLO_PERR_LIMIT, "%s: out of memory for a "
                           "%lld-element tensor", path, (long long)h.numel);
  if (want && shlo_tensor_set_quant(v, want->quant) != SHLO_OK) {
    shlo_value_unref(v);
    return shlo_proto_fail(err, SHLO_PERR_LIMIT, "%s: out of memory", path);
  }
  if (jb ? fill_from_b64(v, jb, sp, path, err)
         : fill_from_data(v, jdata, path, err)) {
    shlo_value_unref(v);
    return -1;
  }
  *out = v;
  return 0;
}

/* ---- tensors: encoding ---- */

char *shlo_proto_tensor_encode(const shlo_value *v, bool b64) {
  strbuf b = {0};
  shlo__json_tensor(&b, v, b64);
  return shlo__sb_take(&b);
}

/* ---- execution requests and responses ---- */

static void offset_to_line_col(const char *s, size_t off, int *line,
                               int *col) {
  *line = 1;
  *col = 1;
  for (size_t i = 0; i < off; i++) {
    if (s[i] == '\n') {
      (*line)++;
      *col = 1;
    } else {
      (*col)++;
    }
  }
}

static int positive_int(const cJSON *j, const char *name, int *out,
                        shlo_proto_error *err) {
  if (!j) return 0;
  if (!cJSON_IsNumber(j) || j->valuedouble < 1 || j->valuedouble > 1 << 20 ||
      j->valuedouble != floor(j->valuedouble))
    return shlo_proto_fail(err, SHLO_PERR_INPUT,
                           "\"%s\" must be a positive integer", name);
  *out = (int)j->valuedouble;
  return 0;
}

/* Parse body into req->root, which must be one JSON object with nothing
 * but whitespace after it.  Errors carry the offending byte's line and
 * column. */
static int parse_json_object(const char *body, size_t len,
                             shlo_proto_exec_req *req, shlo_proto_error *err) {
  size_t stop = 0;
  req->root = shlo_proto_json_parse(body, len, &stop);
  if (!req->root) {
    size_t off = stop <= len ? stop : 0;
    shlo_proto_fail(err, SHLO_PERR_INPUT, "malformed JSON at byte %zu%s", off,
                    off + 1 >= len ? " (truncated?)" : "");
    offset_to_line_col(body, off, &err->line, &err->column);
    return -1;
  }
  if (stop <= len)
    for (const char *p = body + stop; p < body + len; p++)
      if (*p != ' ' && *p != '\n' && *p != '\r' && *p != '\t') {
        shlo_proto_fail(err, SHLO_PERR_INPUT,
                        "malformed JSON: trailing bytes at byte %zu",
                        (size_t)(p - body));
        offset_to_line_col(body, (size_t)(p - body), &err->line, &err->column);
        return -1;
      }
  if (!cJSON_IsObject(req->root))
    return shlo_proto_fail(err, SHLO_PERR_INPUT, "the request body must be a "
                           "JSON object");
  return 0;
}

static int parse_program(const cJSON *p, shlo_proto_exec_req *req,
                         shlo_proto_error *err) {
  if (!p) return 0;
  if (!cJSON_IsString(p))
    return shlo_proto_fail(err, SHLO_PERR_INPUT, "\"program\" must be a string");
  req->program = p->valuestring;
  req->program_len = strlen(p->valuestring);
  return 0;
}

/* "entry" names a function, with or without its '@'. */
static int parse_entry(const cJSON *e, shlo_proto_exec_req *req,
                       shlo_proto_error *err) {
  if (!e) return 0;
  if (!cJSON_IsString(e) || !e->valuestring[0])
    return shlo_proto_fail(err, SHLO_PERR_INPUT, "\"entry\" must be a function "
                           "name");
  req->entry = e->valuestring[0] == '@' ? e->valuestring + 1 : e->valuestring;
  return 0;
}

static int parse_timeout(const cJSON *t, shlo_proto_exec_req *req,
                         shlo_proto_error *err) {
  if (!t || cJSON_IsNull(t)) return 0;
  if (!cJSON_IsNumber(t) || !(t->valuedouble > 0))
    return shlo_proto_fail(err, SHLO_PERR_INPUT, "\"timeout_ms\" must be a "
                           "positive number");
  req->timeout_ms = t->valuedouble;
  return 0;
}

static int parse_output_format(const cJSON *of, shlo_proto_exec_req *req,
                               shlo_proto_error *err) {
  if (!of) return 0;
  if (cJSON_IsString(of) && !strcmp(of->valuestring, "b64"))
    req->b64_out = true;
  else if (!cJSON_IsString(of) || strcmp(of->valuestring, "data"))
    return shlo_proto_fail(err, SHLO_PERR_INPUT, "\"output_format\" must be "
                           "\"data\" or \"b64\"");
  return 0;
}

static int parse_print(const cJSON *p, shlo_proto_exec_req *req,
                       shlo_proto_error *err) {
  if (!p) return 0;
  if (!cJSON_IsBool(p))
    return shlo_proto_fail(err, SHLO_PERR_INPUT, "\"print\" must be true "
                           "or false");
  req->print = cJSON_IsTrue(p);
  return 0;
}

char *shlo_proto_json_add_printed(char *json, const char *text,
                                  bool truncated) {
  char *end = json ? strrchr(json, '}') : NULL;
  if (!end) {
    free(json);
    return NULL;
  }
  strbuf b = {0};
  shlo__sb_add(&b, json, (size_t)(end - json));
  shlo__json_key(&b, "printed", end[-1] == '{');
  shlo__json_str(&b, text);
  if (truncated) shlo__sb_puts(&b, ",\"printed_truncated\":true");
  shlo__sb_putc(&b, '}');
  free(json);
  return shlo__sb_take(&b);
}

/* "inputs" is only checked to be a list here: decoding its tensors needs
 * the entry function's types. */
static int parse_inputs(const cJSON *in, shlo_proto_exec_req *req,
                        shlo_proto_error *err) {
  if (!in || cJSON_IsNull(in)) return 0;
  if (!cJSON_IsArray(in))
    return shlo_proto_fail(err, SHLO_PERR_INPUT, "\"inputs\" must be an array "
                           "of tensors");
  req->inputs = in;
  return 0;
}

int shlo_proto_exec_req_parse(const char *body, size_t len,
                              shlo_proto_exec_req *req,
                              shlo_proto_error *err) {
  memset(req, 0, sizeof *req);
  if (parse_json_object(body, len, req, err)) goto fail;
  const cJSON *r = req->root;
#define FIELD(name) cJSON_GetObjectItemCaseSensitive(r, name)
  if (parse_program(FIELD("program"), req, err) ||
      parse_entry(FIELD("entry"), req, err) ||
      positive_int(FIELD("replicas"), "replicas", &req->replicas, err) ||
      positive_int(FIELD("partitions"), "partitions", &req->partitions, err) ||
      parse_timeout(FIELD("timeout_ms"), req, err) ||
      parse_output_format(FIELD("output_format"), req, err) ||
      parse_print(FIELD("print"), req, err) ||
      parse_inputs(FIELD("inputs"), req, err))
    goto fail;
#undef FIELD
  return 0;
fail:
  cJSON_Delete(req->root);
  req->root = NULL;
  return -1;
}

void shlo_proto_exec_req_free(shlo_proto_exec_req *req) {
  cJSON_Delete(req->root);
  req->root = NULL;
}

char *shlo_proto_exec_req_build(const char *program, const char *entry,
                                shlo_value *const *inputs, int n_inputs,
                                double timeout_ms, bool b64_inputs,
                                bool b64_outputs) {
  strbuf b = {0};
  shlo__sb_putc(&b, '{');
  if (program) {
    shlo__json_key(&b, "program", true);
    shlo__json_str(&b, program);
  }
  if (entry) {
    shlo__json_key(&b, "entry", !program);
    shlo__json_str(&b, entry);
  }
  shlo__json_key(&b, "inputs", !program && !entry);
  shlo__sb_putc(&b, '[');
  for (int i = 0; i < n_inputs; i++) {
    if (i) shlo__sb_putc(&b, ',');
    shlo__json_tensor(&b, inputs[i], b64_inputs);
  }
  shlo__sb_putc(&b, ']');
  if (timeout_ms > 0) {
    shlo__json_key(&b, "timeout_ms", false);
    shlo__json_num(&b, timeout_ms);
  }
  if (b64_outputs) shlo__sb_puts(&b, ",\"output_format\":\"b64\"");
  shlo__sb_putc(&b, '}');
  return shlo__sb_take(&b);
}

char *shlo_proto_exec_resp_build(shlo_value *const *outputs, int n_outputs,
                                 int n_procs, const char *module_id,
                                 bool cached,
                                 double compile_ms, double execute_ms,
                                 bool b64) {
  return shlo_proto_exec_resp_build_into(NULL, 0, outputs, n_outputs, n_procs,
                                         module_id, cached, compile_ms,
                                         execute_ms, b64);
}

/* The success body, into spare (see protocol.h), b64 large tensors left
 * as holes when h is given. */
static char *resp_build(char *spare, size_t spare_cap,
                        shlo_value *const *outputs, int n_outputs,
                        int n_procs, const char *module_id, bool cached,
                        double compile_ms, double execute_ms, bool b64,
                        shlo__b64_holes *h) {
  /* Written directly rather than through a cJSON tree: this is the hot
   * path of every execution. */
  strbuf b = {.data = spare, .cap = spare ? spare_cap : 0};
  shlo__sb_reserve(&b, 192);
  shlo__sb_puts(&b, "{\"outputs\":[");
  for (int p = 0; p < (n_procs > 1 ? n_procs : 1); p++) {
    if (p) shlo__sb_putc(&b, ',');
    if (n_procs > 1) shlo__sb_putc(&b, '[');
    for (int i = 0; i < n_outputs; i++) {
      if (i) shlo__sb_putc(&b, ',');
      if (h) shlo__json_tensor_holes(&b, outputs[p * n_outputs + i], h);
      else shlo__json_tensor(&b, outputs[p * n_outputs + i], b64);
    }
    if (n_procs > 1) shlo__sb_putc(&b, ']');
  }
  shlo__sb_putc(&b, ']');
  if (module_id) {
    shlo__json_key(&b, "module", false);
    shlo__json_str(&b, module_id);
  }
  shlo__sb_puts(&b, cached ? ",\"cached\":true" : ",\"cached\":false");
  shlo__sb_puts(&b, ",\"timing\":{\"compile_ms\":");
  shlo__json_num(&b, round(compile_ms * 1000) / 1000);
  shlo__sb_puts(&b, ",\"execute_ms\":");
  shlo__json_num(&b, round(execute_ms * 1000) / 1000);
  shlo__sb_puts(&b, "}}");
  return shlo__sb_take(&b);
}

char *shlo_proto_exec_resp_build_into(char *spare, size_t spare_cap,
                                      shlo_value *const *outputs,
                                      int n_outputs, int n_procs,
                                      const char *module_id, bool cached,
                                      double compile_ms, double execute_ms,
                                      bool b64) {
  return resp_build(spare, spare_cap, outputs, n_outputs, n_procs, module_id,
                    cached, compile_ms, execute_ms, b64, NULL);
}

char *shlo__exec_resp_build_holes(shlo_value *const *outputs, int n_outputs,
                                  int n_procs, const char *module_id,
                                  bool cached, double compile_ms,
                                  double execute_ms, shlo__b64_holes *h) {
  char *json = resp_build(NULL, 0, outputs, n_outputs, n_procs, module_id,
                          cached, compile_ms, execute_ms, true, h);
  if (json && !h->failed) return json;
  free(json);
  return NULL;
}

int shlo_proto_exec_resp_parse(const char *body, size_t len,
                               const shlo_proto_limits *lim,
                               shlo_value ***outs, int *n_outs,
                               shlo_proto_error *err) {
  *outs = NULL;
  *n_outs = 0;
  cJSON *root = shlo_proto_json_parse(body, len, NULL);
  const cJSON *a = cJSON_GetObjectItemCaseSensitive(root, "outputs");
  int rc = -1;
  if (!cJSON_IsArray(a)) {
    if (!shlo_proto_error_parse(body, len, err))
      shlo_proto_fail(err, SHLO_PERR_INPUT, "response has no \"outputs\"");
    goto done;
  }
  /* A grid's answer is a list per process: flattened, process-major. */
  int n = 0, i = 0;
  for (const cJSON *c = a->child; c; c = c->next)
    n += cJSON_IsArray(c) ? cJSON_GetArraySize(c) : 1;
  shlo_value **v = calloc((size_t)n + 1, sizeof *v);
  if (!v) goto done;
  for (const cJSON *c = a->child; c; c = c->next) {
    bool per_proc = cJSON_IsArray(c);
    for (const cJSON *t = per_proc ? c->child : c; t;
         t = per_proc ? t->next : NULL, i++) {
      char path[48];
      snprintf(path, sizeof path, "outputs[%d]", i);
      if (shlo_proto_tensor_decode(t, NULL, lim, path, &v[i], err)) {
        while (i--) shlo_value_unref(v[i]);
        free(v);
        goto done;
      }
    }
  }
  *outs = v;
  *n_outs = n;
  rc = 0;
done:
  cJSON_Delete(root);
  return rc;
}
