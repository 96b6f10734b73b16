/* SPDX-License-Identifier: Apache-2.0 */
/* The parser's cursor, types and attributes (dense literals included). */
#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/module.h"
#include "core/floatfmt.h"
#include "core/int_range.h"
#include "core/value.h"
#include "core/suggest.h"
#include "frontend/names.h"
#include "frontend/parser_int.h"

/* ---- errors and allocation ---- */

static void set_error(parser *P, const char *at, const char *fmt, va_list ap) {
  /* Recount the line from the start: errors are rare, positions exact. */
  int line = 1;
  const char *ls = P->src;
  if (at > P->end) at = P->end;
  for (const char *q = P->src; q < at; q++)
    if (*q == '\n') {
      line++;
      ls = q + 1;
    }
  shlo_diag_vset(P->diag, SHLO_EPARSE, P->filename, line, (int)(at - ls) + 1,
                 fmt, ap);
}

noreturn void shlo__perr_at(parser *P, const char *at, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  set_error(P, at, fmt, ap);
  va_end(ap);
  longjmp(P->on_error, 1);
}

noreturn void shlo__perr(parser *P, const char *fmt, ...) {
  shlo__skip_ws(P);
  va_list ap;
  va_start(ap, fmt);
  set_error(P, P->p, fmt, ap);
  va_end(ap);
  longjmp(P->on_error, 1);
}

noreturn void shlo__pstop(parser *P, shlo_status st, const char *fmt, ...) {
  shlo__skip_ws(P);
  va_list ap;
  va_start(ap, fmt);
  set_error(P, P->p, fmt, ap);
  va_end(ap);
  P->diag->code = st;
  longjmp(P->on_error, 1);
}

noreturn void shlo__poom(parser *P) {
  shlo_diag_set(P->diag, SHLO_ENOMEM, P->filename, 0, 0,
                "out of memory while parsing");
  longjmp(P->on_error, 2);
}

void *shlo__palloc(parser *P, size_t size) {
  void *p = shlo__arena_alloc(P->arena, size);
  if (!p) shlo__poom(P);
  return p;
}

char *shlo__pstrndup(parser *P, const char *s, size_t n) {
  char *d = shlo__palloc(P, n + 1);
  memcpy(d, s, n);
  d[n] = 0;
  return d;
}

void shlo__enter(parser *P) {
  if (++P->depth > P->max_depth)
    shlo__perr(P, "types, attributes or literal brackets nested deeper "
               "than %d (the limit)", P->max_depth);
}

void shlo__leave(parser *P) { P->depth--; }

/* ---- cursor ---- */

void shlo__skip_ws(parser *P) {
  while (P->p < P->end) {
    char c = *P->p;
    if (c == '\n') {
      P->line++;
      P->line_start = ++P->p;
    } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
      P->p++;
    } else if (c == '/' && P->p + 1 < P->end && P->p[1] == '/') {
      while (P->p < P->end && *P->p != '\n') P->p++;
    } else {
      break;
    }
  }
}

int shlo__peekc(parser *P) {
  shlo__skip_ws(P);
  return P->p < P->end ? (unsigned char)*P->p : -1;
}

static bool at_lit(parser *P, const char *lit) {
  size_t n = strlen(lit);
  return (size_t)(P->end - P->p) >= n && memcmp(P->p, lit, n) == 0;
}

bool shlo__accept(parser *P, const char *lit) {
  shlo__skip_ws(P);
  if (!at_lit(P, lit)) return false;
  P->p += strlen(lit);
  return true;
}

void shlo__expect(parser *P, const char *lit) {
  if (!shlo__accept(P, lit)) {
    if (P->p >= P->end) shlo__perr(P, "expected '%s' but the input ended", lit);
    shlo__perr(P, "expected '%s'", lit);
  }
}

bool shlo__is_ident_start(int c) { return isalpha(c) || c == '_'; }
bool shlo__is_ident_char(int c) {
  return isalnum(c) || c == '_' || c == '$' || c == '.';
}

bool shlo__accept_kw(parser *P, const char *kw) {
  shlo__skip_ws(P);
  size_t n = strlen(kw);
  if (!at_lit(P, kw)) return false;
  if (P->p + n < P->end && shlo__is_ident_char((unsigned char)P->p[n])) return false;
  P->p += n;
  return true;
}

bool shlo__ident(parser *P, const char **s, size_t *n) {
  shlo__skip_ws(P);
  if (P->p >= P->end || !shlo__is_ident_start((unsigned char)*P->p)) return false;
  const char *q = P->p;
  while (q < P->end && shlo__is_ident_char((unsigned char)*q)) q++;
  *s = P->p;
  *n = (size_t)(q - P->p);
  P->p = q;
  return true;
}

const char *shlo__expect_ident(parser *P, size_t *n, const char *what) {
  const char *s;
  if (!shlo__ident(P, &s, n)) shlo__perr(P, "expected %s", what);
  return s;
}

static int hexval(int c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

char *shlo__parse_string(parser *P, size_t *n) {
  shlo__skip_ws(P);
  const char *start = P->p;
  if (P->p >= P->end || *P->p != '"') shlo__perr(P, "expected a string");
  P->p++;
  /* First pass finds the end so the output can be sized. */
  const char *q = P->p;
  while (q < P->end && *q != '"') {
    if (*q == '\n') shlo__perr_at(P, start, "unterminated string");
    if (*q == '\\' && q + 1 < P->end) q++;
    q++;
  }
  if (q >= P->end) shlo__perr_at(P, start, "unterminated string");
  char *out = shlo__palloc(P, (size_t)(q - P->p) + 1);
  size_t k = 0;
  while (P->p < q) {
    char c = *P->p++;
    if (c != '\\') {
      out[k++] = c;
      continue;
    }
    char e = *P->p++;
    if (e == 'n') out[k++] = '\n';
    else if (e == 't') out[k++] = '\t';
    else if (e == '"' || e == '\\') out[k++] = e;
    else if (hexval((unsigned char)e) >= 0 && P->p < q &&
             hexval((unsigned char)*P->p) >= 0) {
      out[k++] = (char)(hexval((unsigned char)e) * 16 +
                        hexval((unsigned char)*P->p));
      P->p++;
    } else {
      shlo__perr_at(P, P->p - 2, "unknown escape '\\%c' in string", e);
    }
  }
  P->p = q + 1;
  out[k] = 0;
  if (n) *n = k;
  return out;
}

bool shlo__at_number(parser *P) {
  int c = shlo__peekc(P);
  if (c == '-' || c == '+')
    return P->p + 1 < P->end && isdigit((unsigned char)P->p[1]);
  return c >= 0 && isdigit(c);
}

/* The extent of a numeric literal at the cursor (decimal int, float with
 * fraction/exponent, or 0x hex); sets *is_float.  Does not consume. */
static const char *scan_number(parser *P, bool *is_float) {
  shlo__skip_ws(P);
  const char *q = P->p;
  *is_float = false;
  if (q < P->end && (*q == '-' || *q == '+')) q++;
  if (q + 1 < P->end && q[0] == '0' && (q[1] == 'x' || q[1] == 'X')) {
    q += 2;
    while (q < P->end && hexval((unsigned char)*q) >= 0) q++;
    return q;
  }
  while (q < P->end && isdigit((unsigned char)*q)) q++;
  if (q < P->end && *q == '.') {
    *is_float = true;
    q++;
    while (q < P->end && isdigit((unsigned char)*q)) q++;
  }
  /* As MLIR's lexer: an exponent only follows a fraction (`1.e5`, `1.0e5`);
   * `1e5` is the integer 1 followed by the word e5. */
  if (*is_float && q < P->end && (*q == 'e' || *q == 'E')) {
    const char *r = q + 1;
    if (r < P->end && (*r == '+' || *r == '-')) r++;
    if (r < P->end && isdigit((unsigned char)*r)) {
      *is_float = true;
      q = r;
      while (q < P->end && isdigit((unsigned char)*q)) q++;
    }
  }
  return q;
}

/* Copy [s, e) into a NUL-terminated buffer for strto* (bounded). */
static void numbuf(parser *P, const char *s, const char *e, char *buf,
                   size_t cap) {
  size_t n = (size_t)(e - s);
  if (n >= cap) shlo__perr_at(P, s, "number literal too long");
  memcpy(buf, s, n);
  buf[n] = 0;
}

/* The integer literal [s, e) as MLIR reads it: an optional sign, then
 * decimal digits (leading zeros are still decimal: `08` is eight, not a
 * bad octal number as strtoll's base 0 would have it) or 0x and hex
 * digits.  Values past 64 bits are an error.  *negative tells a negative
 * literal from a large unsigned one that wraps into int64_t. */
static int64_t int_literal(parser *P, const char *s, const char *e,
                           bool *negative) {
  char buf[80];
  numbuf(P, s, e, buf, sizeof buf);
  const char *d = buf;
  bool neg = *d == '-';
  if (*d == '-' || *d == '+') d++;
  int base = 10;
  if (d[0] == '0' && (d[1] == 'x' || d[1] == 'X')) {
    base = 16;
    d += 2;
  }
  if (!*d || !isxdigit((unsigned char)*d))
    shlo__perr_at(P, s, "malformed integer literal '%s'", buf);
  errno = 0;
  char *end;
  unsigned long long mag = strtoull(d, &end, base);
  if (*end) shlo__perr_at(P, s, "malformed integer literal '%s'", buf);
  if (errno == ERANGE || (neg && mag > (unsigned long long)INT64_MAX + 1))
    shlo__perr_at(P, s, "integer literal %s does not fit in 64 bits", buf);
  if (negative) *negative = neg && mag != 0;
  return neg ? (int64_t)(0 - mag) : (int64_t)mag;
}

/* Whether x (read by int_literal) is a value of integer type t, as MLIR's
 * range rule has it: a signless or signed integer of width w takes
 * -2^(w-1) .. 2^w - 1 (its bits either way), an unsigned one 0 .. 2^w - 1;
 * i1 takes 0 and 1 (and -1, its one bit set). */
static bool int_fits(shlo_elem_type t, int64_t x, bool negative) {
  int w = shlo_elem_bits(t);
  if (w >= 64) return !(negative && shlo_elem_class_of(t) == SHLO_CLASS_UINT);
  if (negative) {
    if (shlo_elem_class_of(t) == SHLO_CLASS_UINT) return false;
    return x >= -((int64_t)1 << (w - 1));
  }
  return (uint64_t)x <= (((uint64_t)1 << w) - 1);
}

int64_t shlo__parse_int(parser *P) {
  bool is_float;
  const char *s = P->p, *e;
  if (!shlo__at_number(P)) shlo__perr(P, "expected an integer");
  s = P->p;
  e = scan_number(P, &is_float);
  if (is_float) shlo__perr_at(P, s, "expected an integer, found a float");
  int64_t v = int_literal(P, s, e, NULL);
  P->p = e;
  return v;
}

char *shlo__skip_balanced(parser *P) {
  shlo__skip_ws(P);
  const char *start = P->p;
  char stack[SHLO_MAX_DEPTH_CAP]; /* the closing bracket of each open one */
  int depth = 0;
  do {
    if (P->p >= P->end) shlo__perr_at(P, start, "unbalanced brackets");
    char c = *P->p;
    if (c == '"') {
      size_t n;
      shlo__parse_string(P, &n);
      continue;
    }
    if (c == '\n') {
      P->line++;
      P->line_start = P->p + 1;
    }
    if (c == '(' || c == '[' || c == '{' || c == '<') {
      if (depth == P->max_depth)
        shlo__perr(P, "brackets nested deeper than %d (the limit)",
                   P->max_depth);
      stack[depth++] = c == '(' ? ')' : c == '[' ? ']' : c == '{' ? '}' : '>';
    } else if (c == ')' || c == ']' || c == '}' || c == '>') {
      /* '->' inside a group is an arrow, not a closing bracket. */
      if (!(c == '>' && P->p > start && P->p[-1] == '-')) {
        if (!depth || stack[depth - 1] != c)
          shlo__perr(P, "unbalanced '%c'", c);
        depth--;
      }
    }
    P->p++;
  } while (depth > 0);
  return shlo__pstrndup(P, start, (size_t)(P->p - start));
}

void shlo__skip_loc(parser *P) {
  if (shlo__accept_kw(P, "loc")) {
    if (shlo__peekc(P) != '(') shlo__perr(P, "expected '(' after loc");
    shlo__skip_balanced(P);
  }
}

/* ---- types ---- */

const shlo_type *shlo__make_scalar_type(parser *P, shlo_elem_type e) {
  shlo_type *t = shlo__palloc(P, sizeof *t);
  t->kind = SHLO_TYPE_ELEMENT;
  t->elem = e;
  return t;
}

/* An element type spelling at the cursor: i32, f8E4M3FN, complex<f32>. */
static int parse_elem_type(parser *P) {
  shlo__skip_ws(P);
  const char *s = P->p;
  if (shlo__accept_kw(P, "complex")) {
    shlo__expect(P, "<");
    /* complex<complex<...>> is refused below, but only after the inner
     * type is read: the depth guard keeps that recursion bounded */
    shlo__enter(P);
    int part = parse_elem_type(P);
    shlo__leave(P);
    shlo__expect(P, ">");
    if (part == SHLO_F32) return SHLO_C64;
    if (part == SHLO_F64) return SHLO_C128;
    shlo__perr_at(P, s, "complex<%s> is not supported; use complex<f32> or "
            "complex<f64>", shlo_elem_name((shlo_elem_type)part));
  }
  size_t n;
  const char *name;
  if (!shlo__ident(P, &name, &n)) shlo__perr(P, "expected an element type");
  int e = shlo_elem_from_name(name, n);
  if (e < 0) {
    const char *near = shlo__suggest_elem_type(name, n);
    shlo__perr_at(P, s, "unknown element type '%.*s'%s%s%s", (int)n, name,
                  near ? " (did you mean " : "", near ? near : "",
                  near ? "?)" : "");
  }
  return e;
}

/* The positive range of a quantization scale in expressed type e: its
 * smallest subnormal to its largest finite value (as MLIR's quant dialect
 * checks).  False for types not checked. */
static bool expressed_range(shlo_elem_type e, double *lo, double *hi) {
  switch (e) {
  case SHLO_F16: *lo = ldexp(1, -24); *hi = 65504.0; return true;
  case SHLO_BF16: *lo = ldexp(1, -133); *hi = ldexp(255, 120); return true;
  case SHLO_F32: *lo = ldexp(1, -149); *hi = FLT_MAX; return true;
  default: return false;
  }
}

static const shlo_quant *parse_quant(parser *P) {
  /* !quant.uniform<storage[<min:max>]:expressed[:axis], scale[:zp]> or
   * ..., {scale:zp, ...}> */
  shlo_quant *q = shlo__palloc(P, sizeof *q);
  shlo__expect(P, "<");
  shlo__skip_ws(P);
  q->signed_storage = P->end - P->p > 2 && P->p[0] == 's' && P->p[1] == 'i';
  q->storage = (shlo_elem_type)parse_elem_type(P);
  if (!shlo_elem_is_int(q->storage))
    shlo__perr(P, "quantized storage type must be an integer type");
  shlo__int_range(q->storage, &q->storage_min, &q->storage_max);
  if (shlo__accept(P, "<")) {
    q->storage_min = shlo__parse_int(P);
    shlo__expect(P, ":");
    q->storage_max = shlo__parse_int(P);
    shlo__expect(P, ">");
  }
  shlo__expect(P, ":");
  q->expressed = (shlo_elem_type)parse_elem_type(P);
  q->axis = -1;
  if (shlo__accept(P, ":")) {
    shlo__skip_ws(P);
    const char *as = P->p;
    int64_t axis = shlo__parse_int(P);
    if (axis < 0 || axis > INT32_MAX)
      shlo__perr_at(P, as, "illegal quantized dimension: %lld", (long long)axis);
    q->axis = (int)axis;
    q->per_axis = true;
  }
  shlo__expect(P, ",");
  bool many = shlo__accept(P, "{");
  int cap = 4;
  q->scales = shlo__palloc(P, (size_t)cap * sizeof(double));
  q->zero_points = shlo__palloc(P, (size_t)cap * sizeof(int64_t));
  do {
    if (q->n == cap) {
      if (cap > (1 << 24)) shlo__perr(P, "too many quantization parameters");
      double *s2 = shlo__palloc(P, (size_t)cap * 2 * sizeof(double));
      int64_t *z2 = shlo__palloc(P, (size_t)cap * 2 * sizeof(int64_t));
      memcpy(s2, q->scales, (size_t)cap * sizeof(double));
      memcpy(z2, q->zero_points, (size_t)cap * sizeof(int64_t));
      q->scales = s2;
      q->zero_points = z2;
      cap *= 2;
    }
    bool is_float;
    const char *s = P->p;
    if (!shlo__at_number(P)) shlo__perr(P, "expected a quantization scale");
    s = P->p;
    const char *e = scan_number(P, &is_float);
    char buf[80];
    numbuf(P, s, e, buf, sizeof buf);
    q->scales[q->n] = strtod(buf, NULL);
    double lo, hi;
    if (expressed_range(q->expressed, &lo, &hi) &&
        (q->scales[q->n] < lo || q->scales[q->n] > hi))
      shlo__perr_at(P, s, "scale %e out of expressed type range [%e, %e] of %s",
              q->scales[q->n], lo, hi, shlo_elem_name(q->expressed));
    P->p = e;
    q->zero_points[q->n] = shlo__accept(P, ":") ? shlo__parse_int(P) : 0;
    q->n++;
  } while (many && shlo__accept(P, ","));
  if (many) shlo__expect(P, "}");
  shlo__expect(P, ">");
  return q;
}

static const shlo_type *parse_tensor_type(parser *P) {
  shlo_type *t = shlo__palloc(P, sizeof *t);
  t->kind = SHLO_TYPE_TENSOR;
  shlo__expect(P, "<");
  for (;;) {
    shlo__skip_ws(P);
    if (P->p >= P->end) shlo__perr(P, "unterminated tensor type");
    const char *s = P->p;
    bool dim = false;
    int64_t d = 0;
    if (*P->p == '?') {
      P->p++;
      d = SHLO_DYN;
      dim = true;
    } else if (isdigit((unsigned char)*P->p)) {
      d = 0;
      while (P->p < P->end && isdigit((unsigned char)*P->p)) {
        if (d > (INT64_MAX - 9) / 10) shlo__perr_at(P, s, "dimension too large");
        d = d * 10 + (*P->p++ - '0');
      }
      dim = true;
    } else if (*P->p == '*' && t->rank == 0) {
      /* tensor<*xf32>: unranked, carried but never executed */
      P->p++;
      t->rank = -1;
      if (P->p >= P->end || *P->p != 'x') shlo__perr(P, "expected 'x' after '*'");
      P->p++;
      break;
    }
    if (!dim) break;
    if (t->rank == SHLO_MAX_RANK)
      shlo__perr_at(P, s, "tensor rank above %d is not supported", SHLO_MAX_RANK);
    t->dims[t->rank++] = d;
    if (P->p >= P->end || *P->p != 'x')
      shlo__perr(P, "expected 'x' after a dimension");
    P->p++;
  }
  if (shlo__accept(P, "!quant.uniform")) {
    t->quant = parse_quant(P);
    t->elem = t->quant->storage;
  } else {
    t->elem = (shlo_elem_type)parse_elem_type(P);
  }
  if (shlo__accept(P, ",")) {
    shlo__skip_ws(P);
    const char *s = P->p;
    /* The encoding runs to the '>' that closes the tensor type. */
    if (shlo__peekc(P) == '#') {
      P->p++;
      size_t n;
      shlo__expect_ident(P, &n, "an encoding attribute");
      if (shlo__peekc(P) == '<') shlo__skip_balanced(P);
    } else {
      shlo__parse_attr(P);
    }
    t->encoding = shlo__pstrndup(P, s, (size_t)(P->p - s));
  }
  shlo__expect(P, ">");
  return t;
}

bool shlo__at_type(parser *P) {
  int c = shlo__peekc(P);
  if (c == '!') return true;
  if (c < 0 || !shlo__is_ident_start(c)) return false;
  const char *save = P->p;
  const char *s;
  size_t n;
  shlo__ident(P, &s, &n);
  P->p = save;
  if ((n == 6 && !memcmp(s, "tensor", 6)) || (n == 5 && !memcmp(s, "tuple", 5)) ||
      (n == 7 && !memcmp(s, "complex", 7)))
    return true;
  return shlo_elem_from_name(s, n) >= 0;
}

static const alias *find_alias(parser *P, const char *s, size_t n) {
  int i = shlo__name_map_get(&P->alias_index, s, n);
  if (i >= 0) return &P->aliases[i];
  return NULL;
}

/* memref<2x3xf32>: a buffer (StableHLO 1.13+, custom_call "Pin"/"Unpin").
 * The engine carries buffers without computing on them: an opaque type
 * whose text is the canonical spelling, its shape read as a tensor's. */
static const shlo_type *parse_buffer_type(parser *P, const char *at) {
  const shlo_type *shape = parse_tensor_type(P);
  if (shape->rank < 0 || shape->quant || shape->encoding)
    shlo__perr_at(P, at, "a memref needs a ranked shape and a plain element "
                         "type");
  char buf[512];
  int n = shlo_type_format(shape, buf, sizeof buf);
  if (n < 7 || (size_t)n >= sizeof buf)
    shlo__perr_at(P, at, "memref type too long");
  shlo_type *o = shlo__palloc(P, sizeof *o);
  o->kind = SHLO_TYPE_OPAQUE;
  char *text = shlo__palloc(P, (size_t)n + 1);
  snprintf(text, (size_t)n + 1, "memref%s", buf + 6); /* after "tensor" */
  o->encoding = text;
  return o;
}

const shlo_type *shlo__parse_type(parser *P) {
  shlo__enter(P);
  shlo__skip_ws(P);
  const char *s = P->p;
  const shlo_type *t = NULL;
  if (shlo__accept_kw(P, "tensor")) {
    t = parse_tensor_type(P);
  } else if (shlo__accept_kw(P, "memref")) {
    t = parse_buffer_type(P, s);
  } else if (shlo__accept_kw(P, "tuple")) {
    shlo_type *tt = shlo__palloc(P, sizeof *tt);
    tt->kind = SHLO_TYPE_TUPLE;
    shlo__expect(P, "<");
    if (!shlo__accept(P, ">")) {
      tt->n_elems = shlo__parse_type_list(P, (const shlo_type ***)&tt->elems);
      shlo__expect(P, ">");
    }
    t = tt;
  } else if (shlo__accept(P, "!stablehlo.token")) {
    shlo_type *tt = shlo__palloc(P, sizeof *tt);
    tt->kind = SHLO_TYPE_TOKEN;
    t = tt;
  } else if (shlo__peekc(P) == '!') {
    P->p++;
    size_t n;
    const char *name = shlo__expect_ident(P, &n, "a type name");
    const alias *a = find_alias(P, name, n);
    if (a && a->type) {
      t = a->type;
    } else if (memchr(name, '.', n)) {
      if (n > 10 && !memcmp(name, "stablehlo.", 10) &&
          !(n == 16 && !memcmp(name, "stablehlo.future", 16)))
        shlo__perr_at(P, s, "unknown stablehlo type: %.*s", (int)n - 10, name + 10);
      /* A dialect type the engine only carries: !stablehlo.future<...> */
      if (P->p < P->end && *P->p == '<') shlo__skip_balanced(P);
      shlo_type *o = shlo__palloc(P, sizeof *o);
      o->kind = SHLO_TYPE_OPAQUE;
      o->encoding = shlo__pstrndup(P, s, (size_t)(P->p - s));
      t = o;
    } else {
      shlo__perr_at(P, s, "unknown type '!%.*s'", (int)n, name);
    }
  } else {
    t = shlo__make_scalar_type(P, (shlo_elem_type)parse_elem_type(P));
  }
  shlo__leave(P);
  return t;
}

int shlo__parse_type_list(parser *P, const shlo_type ***out) {
  int n = 0, cap = 4;
  const shlo_type **v = shlo__palloc(P, (size_t)cap * sizeof *v);
  do {
    if (n == cap) {
      const shlo_type **w = shlo__palloc(P, (size_t)cap * 2 * sizeof *w);
      memcpy(w, v, (size_t)n * sizeof *v);
      v = w;
      cap *= 2;
    }
    v[n++] = shlo__parse_type(P);
  } while (shlo__accept(P, ","));
  *out = v;
  return n;
}

/* ---- attributes ---- */

shlo_attr *shlo__new_attr(parser *P, shlo_attr_kind kind) {
  shlo_attr *a = shlo__palloc(P, sizeof *a);
  a->kind = kind;
  return a;
}

const shlo_attr *shlo__make_int(parser *P, int64_t v) {
  shlo_attr *a = shlo__new_attr(P, SHLO_ATTR_INT);
  a->i = v;
  a->type = shlo__make_scalar_type(P, SHLO_SI64);
  return a;
}

const shlo_attr *shlo__make_enum(parser *P, const char *kind, const char *value) {
  shlo_attr *a = shlo__new_attr(P, SHLO_ATTR_ENUM);
  a->enum_kind = kind;
  a->str = value;
  return a;
}

const shlo_attr *shlo__make_i64_array(parser *P, const int64_t *v, int n) {
  shlo_attr *a = shlo__new_attr(P, SHLO_ATTR_DENSE_ARRAY);
  a->elem = SHLO_SI64;
  a->n = n;
  a->ints = shlo__palloc(P, (size_t)(n ? n : 1) * sizeof(int64_t));
  if (n) memcpy(a->ints, v, (size_t)n * sizeof(int64_t));
  return a;
}

int shlo__parse_i64_list(parser *P, int64_t *out, int cap) {
  int n = 0;
  shlo__expect(P, "[");
  if (shlo__accept(P, "]")) return 0;
  do {
    if (n == cap) shlo__perr(P, "too many values in list (at most %d)", cap);
    out[n++] = shlo__parse_int(P);
  } while (shlo__accept(P, ","));
  shlo__expect(P, "]");
  return n;
}

/* A scalar literal inside dense<...>, kept as text until the type is
 * known.  The forms are MLIR's (TensorLiteralParser): decimal integers,
 * 0x hex integers, float literals (digits, a dot, optional digits and an
 * exponent: `1.`, `1.5e-3`; no `.5`, no `1e5`), true/false, and (re, im)
 * pairs. */
typedef struct lit {
  const char *s, *e;   /* the text; for complex, the real part */
  const char *is, *ie; /* complex imaginary part */
  char kind;           /* 'i' int, 'f' float, 'x' hex, 'b' bool, 'c' complex */
  char rkind, ikind;   /* complex: kinds of the real and imaginary parts */
} lit;

typedef struct lits {
  lit *v;
  size_t n, cap;
} lits;

static void lit_push(parser *P, lits *L, lit l) {
  if (L->n == L->cap) {
    size_t cap = L->cap ? L->cap * 2 : 64;
    lit *v = shlo__palloc(P, cap * sizeof *v);
    if (L->n) memcpy(v, L->v, L->n * sizeof *v);
    L->v = v;
    L->cap = cap;
  }
  L->v[L->n++] = l;
}

/* Words MLIR does not take as element literals, with the hint a user
 * needs: non-finite floats are written as their bit patterns. */
static void reject_word_literal(parser *P) {
  const char *at = P->p;
  const char *w;
  size_t n;
  if (at < P->end && (*at == '-' || *at == '+')) P->p++; /* text may end here */
  if (shlo__peekc(P) == '.')
    shlo__perr_at(P, at, "a float literal needs a digit before the dot "
                  "(MLIR reads `0.5`, not `.5`)");
  if (shlo__ident(P, &w, &n) &&
      ((n == 3 && (!strncmp(w, "inf", 3) || !strncmp(w, "nan", 3))) ||
       (n == 8 && !strncmp(w, "infinity", 8)) ||
       (n == 3 && !strncmp(w, "NaN", 3))))
    shlo__perr_at(P, at, "'%.*s' is not an MLIR element literal: write a "
                  "non-finite float as its bit pattern in hex (f32: "
                  "0x7F800000 is inf, 0xFF800000 -inf, 0x7FC00000 nan)",
                  (int)n, w);
  shlo__perr_at(P, at, "expected a number, true or false");
}

static lit scan_scalar(parser *P) {
  lit l = {0};
  shlo__skip_ws(P);
  l.s = P->p;
  if (shlo__accept_kw(P, "true") || shlo__accept_kw(P, "false")) {
    l.kind = 'b';
  } else if (shlo__at_number(P)) {
    bool is_float;
    const char *e = scan_number(P, &is_float);
    const char *digits = l.s + (*l.s == '-' || *l.s == '+');
    bool hex = digits + 1 < e && digits[0] == '0' &&
               (digits[1] == 'x' || digits[1] == 'X');
    l.kind = hex ? 'x' : is_float ? 'f' : 'i';
    P->p = e;
    if (l.kind == 'i' && e < P->end && (*e == 'e' || *e == 'E'))
      shlo__perr_at(P, l.s, "an exponent needs a fraction before it (MLIR "
                    "reads `1.0e5` or `1.e5`, not `1e5`)");
  } else {
    reject_word_literal(P);
  }
  l.e = P->p;
  return l;
}

static void scan_elements(parser *P, lits *L) {
  shlo__enter(P);
  if (shlo__accept(P, "[")) {
    if (!shlo__accept(P, "]")) {
      do scan_elements(P, L);
      while (shlo__accept(P, ","));
      shlo__expect(P, "]");
    }
  } else if (shlo__accept(P, "(")) {
    lit re = scan_scalar(P);
    shlo__expect(P, ",");
    lit im = scan_scalar(P);
    shlo__expect(P, ")");
    lit c = {re.s, re.e, im.s, im.e, 'c', re.kind, im.kind};
    lit_push(P, L, c);
  } else {
    lit_push(P, L, scan_scalar(P));
  }
  shlo__leave(P);
}

/* A hex literal [s, e) for float type t: the bit pattern of its storage,
 * as MLIR reads it (no sign; no more active bits than the type has). */
static void store_float_hex(parser *P, shlo_elem_type t, const char *buf,
                            const char *at, void *dst) {
  if (buf[0] == '-' || buf[0] == '+')
    shlo__perr_at(P, at, "hexadecimal float literal %s should not have a "
                  "sign", buf);
  errno = 0;
  uint64_t bits = strtoull(buf, NULL, 16);
  int w = shlo_elem_bits(t);
  if (errno == ERANGE || (w < 64 && (bits >> w) != 0))
    shlo__perr_at(P, at, "hexadecimal float constant %s out of range for %s "
                  "(%d bits)", buf, shlo_elem_name(t), w);
  size_t size = shlo_elem_size(t);
  memcpy(dst, &bits, size); /* little-endian host */
}

/* Store the float literal [s, e) of the given kind as element of type t
 * at dst.  A decimal float is read to the nearest double and rounded once
 * to t (MLIR: APFloat from the double, then convert with nearest-even), so
 * a value past t's range becomes what t's format makes of it (inf, or NaN
 * or the largest value for formats without inf), as MLIR has it. */
static void store_float_lit(parser *P, shlo_elem_type t, const char *s,
                            const char *e, char kind, void *dst) {
  char buf[128];
  numbuf(P, s, e, buf, sizeof buf);
  if (kind == 'x') {
    store_float_hex(P, t, buf, s, dst);
    return;
  }
  if (kind == 'b')
    shlo__perr_at(P, s, "expected i1 type for 'true' or 'false' values, "
                  "got %s", shlo_elem_name(t));
  if (kind == 'i')
    shlo__perr_at(P, s, "unexpected decimal integer literal %s for a "
                  "floating point value of type %s (add a trailing dot to "
                  "make it a float: %s.)", buf, shlo_elem_name(t), buf);
  errno = 0;
  double d = strtod(buf, NULL);
  if (errno == ERANGE && isinf(d))
    shlo__perr_at(P, s, "floating point value %s too large for %s", buf,
                  shlo_elem_name(t));
  if (t == SHLO_F32) {
    float f = (float)d;
    memcpy(dst, &f, sizeof f);
  } else {
    shlo__float_store(t, d, dst);
  }
}

static void store_int_lit(parser *P, shlo_value *v, int64_t i, const lit *l) {
  shlo_elem_type t = v->elem;
  char buf[128];
  if (l->kind == 'b') {
    if (t != SHLO_I1)
      shlo__perr_at(P, l->s, "expected i1 type for 'true' or 'false' "
                    "values, got %s", shlo_elem_name(t));
    shlo_tensor_set_i64(v, i, *l->s == 't');
  } else if (l->kind == 'i' || l->kind == 'x') {
    bool negative;
    int64_t x = int_literal(P, l->s, l->e, &negative);
    if (!int_fits(t, x, negative)) {
      numbuf(P, l->s, l->e, buf, sizeof buf);
      shlo__perr_at(P, l->s, "integer literal %s is out of range for %s", buf,
                    shlo_elem_name(t));
    }
    shlo_tensor_set_i64(v, i, x);
  } else {
    shlo__perr_at(P, l->s, "expected an integer literal for element type %s",
                  shlo_elem_name(t));
  }
}

static void store_lit(parser *P, shlo_value *v, int64_t i, const lit *l) {
  shlo_elem_type t = v->elem;
  size_t es = shlo_elem_size(t);
  char *dst = (char *)v->data + (size_t)i * es;
  switch (shlo_elem_class_of(t)) {
  case SHLO_CLASS_BOOL:
  case SHLO_CLASS_SINT:
  case SHLO_CLASS_UINT:
    if (l->kind == 'c')
      shlo__perr_at(P, l->s, "complex literal for element type %s",
                    shlo_elem_name(t));
    store_int_lit(P, v, i, l);
    return;
  case SHLO_CLASS_FLOAT:
    if (l->kind == 'c')
      shlo__perr_at(P, l->s, "complex literal for element type %s",
              shlo_elem_name(t));
    store_float_lit(P, t, l->s, l->e, l->kind, dst);
    return;
  case SHLO_CLASS_COMPLEX: {
    /* MLIR stores a complex element as a pair; a lone number is refused. */
    if (l->kind != 'c')
      shlo__perr_at(P, l->s, "expected a (real, imaginary) pair for element "
                    "type %s", shlo_elem_name(t));
    shlo_elem_type part = shlo_elem_complex_part(t);
    size_t ps = shlo_elem_size(part);
    store_float_lit(P, part, l->s, l->e, l->rkind, dst);
    store_float_lit(P, part, l->is, l->ie, l->ikind, dst + ps);
    return;
  }
  }
}

/* Fill v from a "0x..." hex blob: raw little-endian element bytes. */
static void fill_from_hex(parser *P, const char *at, const char *hex,
                          size_t n, shlo_value *v) {
  if (n < 2 || hex[0] != '0' || (hex[1] != 'x' && hex[1] != 'X'))
    shlo__perr_at(P, at, "dense string must be a 0x hex blob");
  hex += 2;
  n -= 2;
  if (n % 2) shlo__perr_at(P, at, "hex blob has an odd number of digits");
  size_t bytes = n / 2;
  size_t es = shlo_elem_size(v->elem);
  for (size_t k = 0; k < n; k++)
    if (hexval((unsigned char)hex[k]) < 0)
      shlo__perr_at(P, at, "bad hex digit in dense blob");
  if (bytes == v->nbytes || (bytes == es && v->numel > 0)) {
    for (size_t k = 0; k < v->nbytes; k++) {
      size_t src = bytes == es ? k % es : k;
      ((unsigned char *)v->data)[k] = (unsigned char)(
          hexval((unsigned char)hex[2 * src]) * 16 +
          hexval((unsigned char)hex[2 * src + 1]));
    }
    if (v->elem == SHLO_I1)
      for (size_t k = 0; k < v->nbytes; k++)
        ((unsigned char *)v->data)[k] = ((unsigned char *)v->data)[k] != 0;
    return;
  }
  shlo__perr_at(P, at, "hex blob has %zu bytes but the type needs %zu", bytes,
          v->nbytes);
}

static const shlo_attr *parse_dense(parser *P) {
  const char *at = P->p;
  shlo__expect(P, "<");
  lits L = {0};
  const char *blob = NULL;
  size_t blob_n = 0;
  if (shlo__peekc(P) == '"') {
    blob = shlo__parse_string(P, &blob_n);
  } else if (shlo__peekc(P) != '>') {
    scan_elements(P, &L);
  }
  shlo__expect(P, ">");
  shlo__expect(P, ":");
  const shlo_type *t = shlo__parse_type(P);
  if (t->kind != SHLO_TYPE_TENSOR)
    shlo__perr_at(P, at, "dense literal needs a tensor type");
  if (!shlo_type_is_static(t))
    shlo__perr_at(P, at, "dense literal needs a static shape");
  /* A literal's bytes come from its text, except for a splat (one value
   * for the whole shape): those expand, so they are bounded, or twenty
   * bytes of text could ask for any amount of memory. */
  int64_t numel = shlo_type_numel(t);
  int64_t bytes = numel > INT64_MAX / 16
                      ? INT64_MAX
                      : numel * (int64_t)shlo_elem_size(t->elem);
  if (bytes > (int64_t)(P->end - P->src) + 64 &&
      (bytes > PARSE_MAX_SPLAT_BYTES ||
       P->splat_bytes + bytes > PARSE_MAX_SPLAT_TOTAL))
    shlo__perr_at(P, at,
            "dense literal expands to %lld bytes; a literal may expand to at "
            "most %lld bytes (%lld per module)",
            (long long)bytes, (long long)PARSE_MAX_SPLAT_BYTES,
            (long long)PARSE_MAX_SPLAT_TOTAL);
  if (bytes > (int64_t)(P->end - P->src) + 64) P->splat_bytes += bytes;
  shlo_value *v = shlo_tensor_new_like(t);
  if (!v) shlo__perr_at(P, at, "dense literal too large");
  if (shlo__arena_own_value(P->arena, v)) shlo__perr(P, "out of memory");
  if (blob) {
    fill_from_hex(P, at, blob, blob_n, v);
  } else if (L.n == 1 && v->numel != 1) {
    for (int64_t i = 0; i < v->numel; i++) store_lit(P, v, i, &L.v[0]);
  } else if ((int64_t)L.n == v->numel) {
    for (size_t i = 0; i < L.n; i++) store_lit(P, v, (int64_t)i, &L.v[i]);
  } else if (!(L.n == 1 && v->numel == 0)) {
    shlo__perr_at(P, at, "dense literal has %zu elements but %s needs %lld", L.n,
            "its type", (long long)v->numel);
  }
  shlo_attr *a = shlo__new_attr(P, SHLO_ATTR_DENSE);
  a->type = t;
  a->dense = v;
  return a;
}

static const shlo_attr *parse_dense_array(parser *P) {
  /* array<i64: 1, 2> or array<i64> */
  shlo__expect(P, "<");
  shlo_elem_type e = (shlo_elem_type)parse_elem_type(P);
  shlo_attr *a = shlo__new_attr(P, SHLO_ATTR_DENSE_ARRAY);
  a->elem = e;
  int cap = 8;
  a->ints = shlo__palloc(P, (size_t)cap * sizeof(int64_t));
  a->floats = shlo__palloc(P, (size_t)cap * sizeof(double));
  if (shlo__accept(P, ":")) {
    do {
      if (a->n == cap) {
        if (cap > (1 << 26)) shlo__perr(P, "array too long");
        int64_t *ni = shlo__palloc(P, (size_t)cap * 2 * sizeof(int64_t));
        double *nf = shlo__palloc(P, (size_t)cap * 2 * sizeof(double));
        memcpy(ni, a->ints, (size_t)cap * sizeof(int64_t));
        memcpy(nf, a->floats, (size_t)cap * sizeof(double));
        a->ints = ni;
        a->floats = nf;
        cap *= 2;
      }
      lit l = scan_scalar(P);
      char buf[128];
      numbuf(P, l.s, l.e, buf, sizeof buf);
      if (l.kind == 'b') {
        a->ints[a->n] = buf[0] == 't';
      } else if (l.kind == 'f') {
        a->floats[a->n] = strtod(buf, NULL);
        a->ints[a->n] = (int64_t)a->floats[a->n];
      } else {
        a->ints[a->n] = int_literal(P, l.s, l.e, NULL);
        a->floats[a->n] = (double)a->ints[a->n];
      }
      a->n++;
    } while (shlo__accept(P, ","));
  }
  shlo__expect(P, ">");
  return a;
}

/* k = v, ... up to the closing `close` character. */
/* Field names the #stablehlo.<name><...> attributes with fixed fields
 * shlo__accept (MLIR rejects any other); NULL for one not checked. */
static const char *const *struct_keys(const char *sname) {
  static const char *const dot[] = {
      "lhs_batching_dimensions", "rhs_batching_dimensions",
      "lhs_contracting_dimensions", "rhs_contracting_dimensions", NULL};
  static const char *const gather[] = {
      "offset_dims", "collapsed_slice_dims", "operand_batching_dims",
      "start_indices_batching_dims", "start_index_map", "index_vector_dim",
      NULL};
  static const char *const scatter[] = {
      "update_window_dims", "inserted_window_dims", "input_batching_dims",
      "scatter_indices_batching_dims", "scatter_dims_to_operand_dims",
      "index_vector_dim", NULL};
  static const char *const algorithm[] = {
      "lhs_precision_type", "rhs_precision_type", "accumulation_type",
      "lhs_component_count", "rhs_component_count",
      "num_primitive_operations", "allow_imprecise_accumulation", NULL};
  static const char *const mesh_axes[] = {"mesh", "axes", NULL};
  static const char *const axis_ref[] = {"name", "sub_axis_info", NULL};
  if (!sname) return NULL;
  if (!strcmp(sname, "replica_group_mesh_axes")) return mesh_axes;
  if (!strcmp(sname, "axis_ref")) return axis_ref;
  if (!strcmp(sname, "dot")) return dot;
  if (!strcmp(sname, "gather")) return gather;
  if (!strcmp(sname, "scatter")) return scatter;
  if (!strcmp(sname, "dot_algorithm")) return algorithm;
  return NULL;
}

/* The name of a type-valued field of a dot_algorithm ("f32", "tf32"). */
static const char *algo_type(const shlo_attr *s, const char *field) {
  const shlo_attr *a = shlo_attr_field(s, field);
  if (!a) return "";
  if (a->kind == SHLO_ATTR_TYPE && a->type &&
      a->type->kind == SHLO_TYPE_ELEMENT)
    return shlo_elem_name(a->type->elem);
  const char *str = shlo_attr_get_str(a);
  return str ? str : "";
}

void shlo__check_dot_algorithm(parser *P, const char *at, const shlo_attr *a) {
  static const char *const counts[] = {
      "lhs_component_count", "rhs_component_count",
      "num_primitive_operations"};
  static const char *const what[] = {"lhs component count",
                                     "rhs component count",
                                     "num primitive operations"};
  int64_t c[3];
  for (int i = 0; i < 3; i++) {
    c[i] = 1;
    shlo_attr_get_i64(shlo_attr_field(a, counts[i]), &c[i]);
    if (c[i] < 1)
      shlo__perr_at(P, at, "%s must be positive, got %lld (dot_general C%d)",
              what[i], (long long)c[i], 22 + i);
  }
  const char *l = algo_type(a, "lhs_precision_type");
  const char *r = algo_type(a, "rhs_precision_type");
  const char *acc = algo_type(a, "accumulation_type");
  const shlo_attr *imp = shlo_attr_field(a, "allow_imprecise_accumulation");
  bool imprecise = imp && imp->kind == SHLO_ATTR_BOOL && imp->b;
  /* Combinations known on CPU, GPU or TPU: {lhs, rhs, accumulation,
   * primitive operations}; any f8 pair accumulating in f32 also. */
  static const struct {
    const char *l, *r, *acc;
    int64_t ops;
  } known[] = {
      {"f16", "f16", "f16", 1},   {"f16", "f16", "f32", 1},
      {"bf16", "bf16", "bf16", 1}, {"bf16", "bf16", "f32", 1},
      {"bf16", "bf16", "f32", 3}, {"bf16", "bf16", "f32", 6},
      {"bf16", "bf16", "f32", 9}, {"tf32", "tf32", "f32", 1},
      {"tf32", "tf32", "f32", 3}, {"f32", "f32", "f32", 1},
      {"f64", "f64", "f64", 1},
  };
  bool ok = false;
  if (c[0] == 1 && c[1] == 1) {
    if (!strncmp(l, "f8", 2) && !strncmp(r, "f8", 2) && !strcmp(acc, "f32") &&
        c[2] == 1)
      ok = true;
    for (size_t i = 0; !ok && !imprecise && i < sizeof known / sizeof *known;
         i++)
      ok = !strcmp(known[i].l, l) && !strcmp(known[i].r, r) &&
           !strcmp(known[i].acc, acc) && known[i].ops == c[2];
  }
  if (!ok)
    shlo__perr_at(P, at, "dot algorithm not known to be supported on any hardware: "
            "{lhs:'%s', rhs:'%s', accum:'%s', lhs_components:%lld, "
            "rhs_components:%lld, primitive_ops:%lld, imprecise:%d}", l, r,
            acc, (long long)c[0], (long long)c[1], (long long)c[2],
            imprecise);
}

shlo_named_attr *shlo__parse_fields(parser *P, const char *close, int *n_out) {
  return shlo__parse_struct_fields(P, close, n_out, NULL);
}

/* `(pre_size)size` of a #stablehlo.axis_ref: which part of a mesh axis a
 * replica group spans.  Kept as its canonical text. */
static const shlo_attr *parse_sub_axis_info(parser *P) {
  shlo__skip_ws(P);
  const char *at = P->p;
  shlo__expect(P, "(");
  int64_t pre = shlo__parse_int(P);
  shlo__expect(P, ")");
  int64_t size = shlo__parse_int(P);
  if (pre < 1 || size < 1)
    shlo__perr_at(P, at, "sub_axis_info needs positive sizes, got (%lld)%lld",
                  (long long)pre, (long long)size);
  char buf[64];
  snprintf(buf, sizeof buf, "(%lld)%lld", (long long)pre, (long long)size);
  shlo_attr *o = shlo__new_attr(P, SHLO_ATTR_OPAQUE);
  o->str = shlo__pstrndup(P, buf, strlen(buf));
  return o;
}

/* Refuses field `name` of #stablehlo.<sname>, listing the keys it has.
 * Out of line, so that its buffer is not on the stack of every
 * dictionary nested in another. */
static noreturn __attribute__((noinline)) void unknown_field(
    parser *P, const char *at, const char *name, const char *sname,
    const char *const *keys) {
  char list[512];
  size_t m = 0;
  list[0] = 0;
  for (int k = 0; keys[k] && m < sizeof list; k++)
    m += (size_t)snprintf(list + m, sizeof list - m, "%s`%s`", k ? ", " : "",
                          keys[k]);
  const char *near = shlo__suggest(name, strlen(name), keys, -1);
  shlo__perr_at(P, at, "unknown `%s` in #stablehlo.%s%s%s%s: expected one of: "
                "%s", name, sname, near ? " (did you mean " : "",
                near ? near : "", near ? "?)" : "", list);
}

shlo_named_attr *shlo__parse_struct_fields(parser *P, const char *close,
                                     int *n_out, const char *sname) {
  const char *const *keys = struct_keys(sname);
  int n = 0, cap = 4;
  shlo_named_attr *f = shlo__palloc(P, (size_t)cap * sizeof *f);
  if (!shlo__accept(P, close)) {
    do {
      if (n && shlo__accept(P, close)) goto closed; /* trailing comma */
      if (n == cap) {
        shlo_named_attr *g = shlo__palloc(P, (size_t)cap * 2 * sizeof *g);
        memcpy(g, f, (size_t)n * sizeof *f);
        f = g;
        cap *= 2;
      }
      size_t len;
      const char *name;
      shlo__skip_ws(P);
      const char *at = P->p;
      if (shlo__peekc(P) == '"') {
        name = shlo__parse_string(P, &len);
      } else {
        name = shlo__expect_ident(P, &len, "an attribute name");
        name = shlo__pstrndup(P, name, len);
      }
      for (int i = 0; i < n; i++)
        if (!strcmp(f[i].name, name))
          shlo__perr_at(P, at, "duplicated `%s` entry", name);
      if (keys) {
        int k = 0;
        while (keys[k] && strcmp(keys[k], name)) k++;
        if (!keys[k]) unknown_field(P, at, name, sname, keys);
      }
      f[n].name = name;
      if (sname && !strcmp(sname, "axis_ref") &&
          !strcmp(name, "sub_axis_info")) {
        shlo__expect(P, "=");
        f[n].value = parse_sub_axis_info(P);
      } else if (shlo__accept(P, "=")) {
        f[n].value = shlo__parse_attr(P);
      } else {
        f[n].value = shlo__new_attr(P, SHLO_ATTR_UNIT);
      }
      n++;
    } while (shlo__accept(P, ","));
    shlo__expect(P, close);
  }
closed:
  *n_out = n;
  return f;
}

const shlo_attr *shlo__parse_attr_dict(parser *P) {
  shlo__expect(P, "{");
  shlo_attr *a = shlo__new_attr(P, SHLO_ATTR_STRUCT);
  a->fields = shlo__parse_fields(P, "}", &a->n);
  return a;
}

/* Dimension numbers of a convolution: [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]. */
static void parse_conv_part(parser *P, const char *letters, int64_t *a,
                            int64_t *b, int64_t *spatial, int *n_spatial) {
  shlo__expect(P, "[");
  int pos = 0;
  *a = *b = -1;
  *n_spatial = 0;
  int64_t tmp[SHLO_MAX_RANK];
  int nt = 0;
  int64_t order[SHLO_MAX_RANK];
  do {
    if (pos == SHLO_MAX_RANK) shlo__perr(P, "too many convolution dimensions");
    shlo__skip_ws(P);
    if (shlo__at_number(P)) {
      int64_t k = shlo__parse_int(P);
      if (k < 0 || k >= SHLO_MAX_RANK) shlo__perr(P, "bad spatial dimension %lld",
                                            (long long)k);
      tmp[nt] = pos;
      order[nt] = k;
      nt++;
    } else if (P->p < P->end && *P->p == letters[0]) {
      P->p++;
      *a = pos;
    } else if (P->p < P->end && *P->p == letters[1]) {
      P->p++;
      *b = pos;
    } else {
      shlo__perr(P, "expected '%c', '%c' or a spatial dimension number", letters[0],
           letters[1]);
    }
    pos++;
  } while (shlo__accept(P, ","));
  shlo__expect(P, "]");
  for (int i = 0; i < nt; i++) {
    if (order[i] >= nt) shlo__perr(P, "spatial dimensions must be 0..%d", nt - 1);
    spatial[order[i]] = tmp[i];
  }
  *n_spatial = nt;
}

const shlo_attr *shlo__parse_conv_dims(parser *P) {
  shlo_attr *a = shlo__new_attr(P, SHLO_ATTR_CONV_DIMS);
  int n1, n2, n3;
  parse_conv_part(P, "bf", &a->conv_in_batch, &a->conv_in_feature,
                  a->conv_in_spatial, &n1);
  shlo__expect(P, "x");
  parse_conv_part(P, "io", &a->conv_k_in, &a->conv_k_out, a->conv_k_spatial,
                  &n2);
  shlo__expect(P, "->");
  parse_conv_part(P, "bf", &a->conv_out_batch, &a->conv_out_feature,
                  a->conv_out_spatial, &n3);
  if (n1 != n2 || n2 != n3)
    shlo__perr(P, "convolution dimension numbers disagree on spatial rank");
  a->conv_n_spatial = n1;
  return a;
}

/* One `name = value` of the raw form: an int or an int list. */
static void parse_conv_raw_field(parser *P, shlo_attr *a, int counts[3]) {
  static const char *const scalars[6] = {
      "input_batch_dimension", "input_feature_dimension",
      "kernel_input_feature_dimension", "kernel_output_feature_dimension",
      "output_batch_dimension", "output_feature_dimension"};
  static const char *const lists[3] = {"input_spatial_dimensions",
                                       "kernel_spatial_dimensions",
                                       "output_spatial_dimensions"};
  int64_t *scalar_at[6] = {&a->conv_in_batch, &a->conv_in_feature,
                           &a->conv_k_in,     &a->conv_k_out,
                           &a->conv_out_batch, &a->conv_out_feature};
  int64_t *list_at[3] = {a->conv_in_spatial, a->conv_k_spatial,
                         a->conv_out_spatial};
  size_t n;
  const char *name = shlo__expect_ident(P, &n, "a dimension numbers field");
  shlo__expect(P, "=");
  for (int i = 0; i < 6; i++)
    if (strlen(scalars[i]) == n && !strncmp(name, scalars[i], n)) {
      *scalar_at[i] = shlo__parse_int(P);
      return;
    }
  for (int i = 0; i < 3; i++)
    if (strlen(lists[i]) == n && !strncmp(name, lists[i], n)) {
      shlo__expect(P, "[");
      counts[i] = 0;
      if (!shlo__accept(P, "]")) {
        do {
          if (counts[i] == SHLO_MAX_RANK)
            shlo__perr(P, "too many convolution dimensions");
          list_at[i][counts[i]++] = shlo__parse_int(P);
        } while (shlo__accept(P, ","));
        shlo__expect(P, "]");
      }
      return;
    }
  shlo__perr(P, "unknown convolution dimension numbers field '%.*s'", (int)n,
             name);
}

/* The printer's raw form, used for dimension numbers the compact form
 * cannot show: #stablehlo.conv<raw input_batch_dimension = 0, ...>.  The
 * verifier checks what it says (ranges, uniqueness).  The input's spatial
 * list sets the spatial count; a shorter kernel or output list is padded
 * with -1 and a longer one marked by -2 after the count, values no
 * dimension can have, which the verifier reports as wrong lengths. */
static const shlo_attr *parse_conv_raw(parser *P) {
  shlo_attr *a = shlo__new_attr(P, SHLO_ATTR_CONV_DIMS);
  int counts[3] = {0, 0, 0};
  int64_t *list_at[3] = {a->conv_in_spatial, a->conv_k_spatial,
                         a->conv_out_spatial};
  a->conv_in_batch = a->conv_in_feature = a->conv_k_in = a->conv_k_out =
      a->conv_out_batch = a->conv_out_feature = -1;
  if (shlo__peekc(P) != '>')
    do parse_conv_raw_field(P, a, counts);
    while (shlo__accept(P, ","));
  int n = counts[0];
  for (int i = 1; i < 3; i++) {
    for (int k = counts[i]; k < n; k++) list_at[i][k] = -1;
    if (counts[i] > n) list_at[i][n] = -2;
  }
  a->conv_n_spatial = n;
  return a;
}

static const shlo_attr *parse_hash_attr(parser *P) {
  const char *at = P->p;
  P->p++; /* '#' */
  size_t n = 0;
  const char *name = NULL;
  if (!shlo__ident(P, &name, &n)) shlo__perr(P, "expected an attribute name after '#'");
  if (P->p < P->end && *P->p == '<') {
    /* #stablehlo<comparison_direction LT>, #stablehlo.gather<...> */
    const char *dot = memchr(name, '.', n);
    if (!dot) {
      shlo__expect(P, "<");
      size_t kn, vn;
      const char *k = shlo__expect_ident(P, &kn, "an enum kind");
      const char *v = shlo__expect_ident(P, &vn, "an enum value");
      shlo__expect(P, ">");
      const char *kind = shlo__pstrndup(P, k, kn);
      const char *value = shlo__pstrndup(P, v, vn);
      shlo__check_enum(P, k, v, name, n, kind, value);
      return shlo__make_enum(P, kind, value);
    }
    size_t dot_at = (size_t)(dot - name);
    const char *sname = shlo__pstrndup(P, name + dot_at + 1, n - dot_at - 1);
    shlo_attr *a = shlo__new_attr(P, SHLO_ATTR_STRUCT);
    a->struct_name = sname;
    shlo__expect(P, "<");
    if (!strcmp(sname, "conv") && shlo__accept_kw(P, "raw")) {
      const shlo_attr *cd = parse_conv_raw(P);
      shlo__expect(P, ">");
      return cd;
    }
    if (shlo__peekc(P) == '[') {
      /* #stablehlo.conv<[b, 0, 1, f]x[...]->[...]> */
      const shlo_attr *cd = shlo__parse_conv_dims(P);
      shlo__expect(P, ">");
      return cd;
    }
    if (!strcmp(sname, "bounds") || !strcmp(sname, "result_accuracy_mode") ||
        P->p >= P->end || (!shlo__is_ident_start((unsigned char)*P->p) &&
                           *P->p != '"')) {
      /* Opaque payloads are kept as text. */
      P->p--;
      shlo__skip_balanced(P);
      shlo_attr *o = shlo__new_attr(P, SHLO_ATTR_OPAQUE);
      o->str = shlo__pstrndup(P, at, (size_t)(P->p - at));
      return o;
    }
    a->fields = shlo__parse_struct_fields(P, ">", &a->n, sname);
    if (!strcmp(sname, "dot_algorithm")) shlo__check_dot_algorithm(P, at, a);
    return a;
  }
  const alias *al = find_alias(P, name, n);
  if (al && al->attr) return al->attr;
  shlo_attr *o = shlo__new_attr(P, SHLO_ATTR_OPAQUE);
  o->str = shlo__pstrndup(P, at, (size_t)(P->p - at));
  return o;
}

/* [a, b, ...] */
static const shlo_attr *parse_array_attr(parser *P) {
  P->p++;
  shlo_attr *a = shlo__new_attr(P, SHLO_ATTR_ARRAY);
  int cap = 4;
  a->items = shlo__palloc(P, (size_t)cap * sizeof *a->items);
  if (shlo__accept(P, "]")) return a;
  do {
    if (a->n == cap) {
      const shlo_attr **w = shlo__palloc(P, (size_t)cap * 2 * sizeof *w);
      memcpy(w, a->items, (size_t)a->n * sizeof *w);
      a->items = w;
      cap *= 2;
    }
    a->items[a->n++] = shlo__parse_attr(P);
  } while (shlo__accept(P, ","));
  shlo__expect(P, "]");
  return a;
}

const shlo_attr *shlo__parse_symbol_attr(parser *P) {
  P->p++;
  shlo_attr *a = shlo__new_attr(P, SHLO_ATTR_SYMBOL);
  size_t n;
  if (shlo__peekc(P) == '"') {
    a->str = shlo__parse_string(P, &n);
  } else {
    const char *s = shlo__expect_ident(P, &n, "a symbol name");
    a->str = shlo__pstrndup(P, s, n);
  }
  return a;
}

/* 3, -1.5, 0x7FC00000, each optionally `: type`. */
static const shlo_attr *parse_number_attr(parser *P) {
  bool is_float;
  const char *s = P->p;
  const char *e = scan_number(P, &is_float);
  char buf[128];
  numbuf(P, s, e, buf, sizeof buf);
  P->p = e;
  shlo_attr *a = shlo__new_attr(P, is_float ? SHLO_ATTR_FLOAT : SHLO_ATTR_INT);
  if (is_float) {
    a->f = strtod(buf, NULL);
  } else {
    errno = 0;
    a->i = buf[0] == '-' ? strtoll(buf, NULL, 0)
                         : (int64_t)strtoull(buf, NULL, 0);
    if (errno == ERANGE) shlo__perr_at(P, s, "integer literal out of range");
    a->f = (double)a->i;
  }
  if (P->untyped_scalars || !shlo__accept(P, ":")) return a;
  a->type = shlo__parse_type(P);
  if (a->kind == SHLO_ATTR_INT && a->type->kind == SHLO_TYPE_ELEMENT &&
      shlo_elem_is_float(a->type->elem)) {
    /* 1 : f32 is a float attribute; 0x3F800000 : f32 is its bits. */
    a->kind = SHLO_ATTR_FLOAT;
    if (strchr(buf, 'x') || strchr(buf, 'X')) {
      unsigned char bytes[8] = {0};
      uint64_t bits = (uint64_t)a->i;
      memcpy(bytes, &bits, 8);
      a->f = shlo__float_load(a->type->elem, bytes);
    }
  }
  return a;
}

/* The text from `at` to the cursor, kept as it is. */
static const shlo_attr *opaque_since(parser *P, const char *at) {
  shlo_attr *o = shlo__new_attr(P, SHLO_ATTR_OPAQUE);
  o->str = shlo__pstrndup(P, at, (size_t)(P->p - at));
  return o;
}

/* Attributes that start with a word: true/false, dense<>, array<>, unit,
 * loc(...), a type, name<...> kept as text, or a bare enum word. */
static const shlo_attr *parse_word_attr(parser *P, const char *at) {
  if (shlo__accept_kw(P, "true") || shlo__accept_kw(P, "false")) {
    shlo_attr *a = shlo__new_attr(P, SHLO_ATTR_BOOL);
    a->b = (P->p - at) == 4;
    a->i = a->b;
    return a;
  }
  if (shlo__accept_kw(P, "dense")) return parse_dense(P);
  if (shlo__accept_kw(P, "array")) return parse_dense_array(P);
  if (shlo__accept_kw(P, "unit")) return shlo__new_attr(P, SHLO_ATTR_UNIT);
  if (shlo__accept_kw(P, "loc")) {
    if (shlo__peekc(P) != '(') shlo__perr(P, "expected '(' after loc");
    shlo__skip_balanced(P);
    return opaque_since(P, at);
  }
  if (shlo__at_type(P)) {
    shlo_attr *a = shlo__new_attr(P, SHLO_ATTR_TYPE);
    a->type = shlo__parse_type(P);
    return a;
  }
  size_t n;
  const char *s = shlo__expect_ident(P, &n, "an attribute");
  if (P->p < P->end && *P->p == '<') {
    /* affine_map<...>, sparse<...>, ...: kept as text. */
    shlo__skip_balanced(P);
    return opaque_since(P, at);
  }
  return shlo__make_enum(P, NULL, shlo__pstrndup(P, s, n));
}

const shlo_attr *shlo__parse_attr(parser *P) {
  shlo__enter(P);
  const shlo_attr *r = NULL;
  int c = shlo__peekc(P);
  const char *at = P->p;
  if (c < 0) shlo__perr(P, "expected an attribute but the input ended");
  if (c == '[') {
    r = parse_array_attr(P);
  } else if (c == '{') {
    r = shlo__parse_attr_dict(P);
  } else if (c == '"') {
    shlo_attr *a = shlo__new_attr(P, SHLO_ATTR_STRING);
    a->str = shlo__parse_string(P, NULL);
    if (!P->untyped_scalars && shlo__accept(P, ":")) a->type = shlo__parse_type(P);
    r = a;
  } else if (c == '@') {
    r = shlo__parse_symbol_attr(P);
  } else if (c == '#') {
    r = parse_hash_attr(P);
  } else if (shlo__at_number(P)) {
    r = parse_number_attr(P);
  } else if (c == '(') {
    /* A function type or other parenthesised payload: kept as text. */
    shlo__skip_balanced(P);
    if (shlo__accept(P, "->")) {
      if (shlo__peekc(P) == '(') shlo__skip_balanced(P);
      else shlo__parse_type(P);
    }
    r = opaque_since(P, at);
  } else if (shlo__is_ident_start(c)) {
    r = parse_word_attr(P, at);
  } else {
    shlo__perr(P, "expected an attribute");
  }
  shlo__leave(P);
  return r;
}
