/* The parser's cursor, types and attributes (dense literals included). */
#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floatfmt.h"
#include "parser_int.h"

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

noreturn void perr_at(parser *P, const char *at, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  set_error(P, at, fmt, ap);
  va_end(ap);
  longjmp(P->on_error, 1);
}

noreturn void perr(parser *P, const char *fmt, ...) {
  skip_ws(P);
  va_list ap;
  va_start(ap, fmt);
  set_error(P, P->p, fmt, ap);
  va_end(ap);
  longjmp(P->on_error, 1);
}

void *palloc(parser *P, size_t size) {
  void *p = shlo_arena_alloc(P->arena, size);
  if (!p) {
    shlo_diag_set(P->diag, SHLO_ENOMEM, P->filename, 0, 0,
                  "out of memory while parsing");
    longjmp(P->on_error, 2);
  }
  return p;
}

char *pstrndup(parser *P, const char *s, size_t n) {
  char *d = palloc(P, n + 1);
  memcpy(d, s, n);
  d[n] = 0;
  return d;
}

void enter(parser *P) {
  if (++P->depth > PARSE_MAX_DEPTH)
    perr(P, "nesting deeper than %d levels", PARSE_MAX_DEPTH);
}

void leave(parser *P) { P->depth--; }

/* ---- cursor ---- */

void skip_ws(parser *P) {
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

int peekc(parser *P) {
  skip_ws(P);
  return P->p < P->end ? (unsigned char)*P->p : -1;
}

static bool at_lit(parser *P, const char *lit) {
  size_t n = strlen(lit);
  return (size_t)(P->end - P->p) >= n && memcmp(P->p, lit, n) == 0;
}

bool accept(parser *P, const char *lit) {
  skip_ws(P);
  if (!at_lit(P, lit)) return false;
  P->p += strlen(lit);
  return true;
}

void expect(parser *P, const char *lit) {
  if (!accept(P, lit)) {
    if (P->p >= P->end) perr(P, "expected '%s' but the input ended", lit);
    perr(P, "expected '%s'", lit);
  }
}

bool is_ident_start(int c) { return isalpha(c) || c == '_'; }
bool is_ident_char(int c) {
  return isalnum(c) || c == '_' || c == '$' || c == '.';
}

bool accept_kw(parser *P, const char *kw) {
  skip_ws(P);
  size_t n = strlen(kw);
  if (!at_lit(P, kw)) return false;
  if (P->p + n < P->end && is_ident_char((unsigned char)P->p[n])) return false;
  P->p += n;
  return true;
}

bool ident(parser *P, const char **s, size_t *n) {
  skip_ws(P);
  if (P->p >= P->end || !is_ident_start((unsigned char)*P->p)) return false;
  const char *q = P->p;
  while (q < P->end && is_ident_char((unsigned char)*q)) q++;
  *s = P->p;
  *n = (size_t)(q - P->p);
  P->p = q;
  return true;
}

const char *expect_ident(parser *P, size_t *n, const char *what) {
  const char *s;
  if (!ident(P, &s, n)) perr(P, "expected %s", what);
  return s;
}

static int hexval(int c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

char *parse_string(parser *P, size_t *n) {
  skip_ws(P);
  const char *start = P->p;
  if (P->p >= P->end || *P->p != '"') perr(P, "expected a string");
  P->p++;
  /* First pass finds the end so the output can be sized. */
  const char *q = P->p;
  while (q < P->end && *q != '"') {
    if (*q == '\n') perr_at(P, start, "unterminated string");
    if (*q == '\\' && q + 1 < P->end) q++;
    q++;
  }
  if (q >= P->end) perr_at(P, start, "unterminated string");
  char *out = palloc(P, (size_t)(q - P->p) + 1);
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
      perr_at(P, P->p - 2, "unknown escape '\\%c' in string", e);
    }
  }
  P->p = q + 1;
  out[k] = 0;
  if (n) *n = k;
  return out;
}

bool at_number(parser *P) {
  int c = peekc(P);
  if (c == '-' || c == '+')
    return P->p + 1 < P->end && isdigit((unsigned char)P->p[1]);
  return c >= 0 && isdigit(c);
}

/* The extent of a numeric literal at the cursor (decimal int, float with
 * fraction/exponent, or 0x hex); sets *is_float.  Does not consume. */
static const char *scan_number(parser *P, bool *is_float) {
  skip_ws(P);
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
  if (q < P->end && (*q == 'e' || *q == 'E')) {
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
  if (n >= cap) perr_at(P, s, "number literal too long");
  memcpy(buf, s, n);
  buf[n] = 0;
}

int64_t parse_int(parser *P) {
  bool is_float;
  const char *s = P->p, *e;
  if (!at_number(P)) perr(P, "expected an integer");
  s = P->p;
  e = scan_number(P, &is_float);
  if (is_float) perr_at(P, s, "expected an integer, found a float");
  char buf[80];
  numbuf(P, s, e, buf, sizeof buf);
  errno = 0;
  char *end;
  int64_t v;
  if (buf[0] == '-') {
    v = strtoll(buf, &end, 0);
  } else {
    v = (int64_t)strtoull(buf, &end, 0);
  }
  if (errno == ERANGE) perr_at(P, s, "integer literal out of range");
  P->p = e;
  return v;
}

char *skip_balanced(parser *P) {
  skip_ws(P);
  const char *start = P->p;
  char stack[PARSE_MAX_DEPTH];
  int depth = 0;
  do {
    if (P->p >= P->end) perr_at(P, start, "unbalanced brackets");
    char c = *P->p;
    if (c == '"') {
      size_t n;
      parse_string(P, &n);
      continue;
    }
    if (c == '\n') {
      P->line++;
      P->line_start = P->p + 1;
    }
    if (c == '(' || c == '[' || c == '{' || c == '<') {
      if (depth == PARSE_MAX_DEPTH) perr(P, "nesting too deep");
      stack[depth++] = c == '(' ? ')' : c == '[' ? ']' : c == '{' ? '}' : '>';
    } else if (c == ')' || c == ']' || c == '}' || c == '>') {
      /* '->' inside a group is an arrow, not a closing bracket. */
      if (!(c == '>' && P->p > start && P->p[-1] == '-')) {
        if (!depth || stack[depth - 1] != c)
          perr(P, "unbalanced '%c'", c);
        depth--;
      }
    }
    P->p++;
  } while (depth > 0);
  return pstrndup(P, start, (size_t)(P->p - start));
}

void skip_loc(parser *P) {
  if (accept_kw(P, "loc")) {
    if (peekc(P) != '(') perr(P, "expected '(' after loc");
    skip_balanced(P);
  }
}

/* ---- types ---- */

const shlo_type *make_scalar_type(parser *P, shlo_elem_type e) {
  shlo_type *t = palloc(P, sizeof *t);
  t->kind = SHLO_TYPE_ELEMENT;
  t->elem = e;
  return t;
}

/* An element type spelling at the cursor: i32, f8E4M3FN, complex<f32>. */
static int parse_elem_type(parser *P) {
  skip_ws(P);
  const char *s = P->p;
  if (accept_kw(P, "complex")) {
    expect(P, "<");
    int part = parse_elem_type(P);
    expect(P, ">");
    if (part == SHLO_F32) return SHLO_C64;
    if (part == SHLO_F64) return SHLO_C128;
    perr_at(P, s, "complex<%s> is not supported; use complex<f32> or "
            "complex<f64>", shlo_elem_name((shlo_elem_type)part));
  }
  size_t n;
  const char *name;
  if (!ident(P, &name, &n)) perr(P, "expected an element type");
  int e = shlo_elem_from_name(name, n);
  if (e < 0) perr_at(P, s, "unknown element type '%.*s'", (int)n, name);
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
  shlo_quant *q = palloc(P, sizeof *q);
  expect(P, "<");
  skip_ws(P);
  q->signed_storage = P->end - P->p > 2 && P->p[0] == 's' && P->p[1] == 'i';
  q->storage = (shlo_elem_type)parse_elem_type(P);
  if (!shlo_elem_is_int(q->storage))
    perr(P, "quantized storage type must be an integer type");
  int bits = shlo_elem_bits(q->storage);
  if (shlo_elem_class_of(q->storage) == SHLO_CLASS_SINT) {
    q->storage_min = bits >= 64 ? INT64_MIN : -((int64_t)1 << (bits - 1));
    q->storage_max = bits >= 64 ? INT64_MAX : ((int64_t)1 << (bits - 1)) - 1;
  } else {
    q->storage_min = 0;
    q->storage_max = bits >= 64 ? INT64_MAX : ((int64_t)1 << bits) - 1;
  }
  if (accept(P, "<")) {
    q->storage_min = parse_int(P);
    expect(P, ":");
    q->storage_max = parse_int(P);
    expect(P, ">");
  }
  expect(P, ":");
  q->expressed = (shlo_elem_type)parse_elem_type(P);
  q->axis = -1;
  if (accept(P, ":")) {
    skip_ws(P);
    const char *as = P->p;
    int64_t axis = parse_int(P);
    if (axis < 0 || axis > INT32_MAX)
      perr_at(P, as, "illegal quantized dimension: %lld", (long long)axis);
    q->axis = (int)axis;
    q->per_axis = true;
  }
  expect(P, ",");
  bool many = accept(P, "{");
  int cap = 4;
  q->scales = palloc(P, (size_t)cap * sizeof(double));
  q->zero_points = palloc(P, (size_t)cap * sizeof(int64_t));
  do {
    if (q->n == cap) {
      if (cap > (1 << 24)) perr(P, "too many quantization parameters");
      double *s2 = palloc(P, (size_t)cap * 2 * sizeof(double));
      int64_t *z2 = palloc(P, (size_t)cap * 2 * sizeof(int64_t));
      memcpy(s2, q->scales, (size_t)cap * sizeof(double));
      memcpy(z2, q->zero_points, (size_t)cap * sizeof(int64_t));
      q->scales = s2;
      q->zero_points = z2;
      cap *= 2;
    }
    bool is_float;
    const char *s = P->p;
    if (!at_number(P)) perr(P, "expected a quantization scale");
    s = P->p;
    const char *e = scan_number(P, &is_float);
    char buf[80];
    numbuf(P, s, e, buf, sizeof buf);
    q->scales[q->n] = strtod(buf, NULL);
    double lo, hi;
    if (expressed_range(q->expressed, &lo, &hi) &&
        (q->scales[q->n] < lo || q->scales[q->n] > hi))
      perr_at(P, s, "scale %e out of expressed type range [%e, %e] of %s",
              q->scales[q->n], lo, hi, shlo_elem_name(q->expressed));
    P->p = e;
    q->zero_points[q->n] = accept(P, ":") ? parse_int(P) : 0;
    q->n++;
  } while (many && accept(P, ","));
  if (many) expect(P, "}");
  expect(P, ">");
  return q;
}

static const shlo_type *parse_tensor_type(parser *P) {
  shlo_type *t = palloc(P, sizeof *t);
  t->kind = SHLO_TYPE_TENSOR;
  expect(P, "<");
  for (;;) {
    skip_ws(P);
    if (P->p >= P->end) perr(P, "unterminated tensor type");
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
        if (d > (INT64_MAX - 9) / 10) perr_at(P, s, "dimension too large");
        d = d * 10 + (*P->p++ - '0');
      }
      dim = true;
    } else if (*P->p == '*' && t->rank == 0) {
      /* tensor<*xf32>: unranked, carried but never executed */
      P->p++;
      t->rank = -1;
      if (P->p >= P->end || *P->p != 'x') perr(P, "expected 'x' after '*'");
      P->p++;
      break;
    }
    if (!dim) break;
    if (t->rank == SHLO_MAX_RANK)
      perr_at(P, s, "tensor rank above %d is not supported", SHLO_MAX_RANK);
    t->dims[t->rank++] = d;
    if (P->p >= P->end || *P->p != 'x')
      perr(P, "expected 'x' after a dimension");
    P->p++;
  }
  if (accept(P, "!quant.uniform")) {
    t->quant = parse_quant(P);
    t->elem = t->quant->storage;
  } else {
    t->elem = (shlo_elem_type)parse_elem_type(P);
  }
  if (accept(P, ",")) {
    skip_ws(P);
    const char *s = P->p;
    /* The encoding runs to the '>' that closes the tensor type. */
    if (peekc(P) == '#') {
      P->p++;
      size_t n;
      expect_ident(P, &n, "an encoding attribute");
      if (peekc(P) == '<') skip_balanced(P);
    } else {
      parse_attr(P);
    }
    t->encoding = pstrndup(P, s, (size_t)(P->p - s));
  }
  expect(P, ">");
  return t;
}

bool at_type(parser *P) {
  int c = peekc(P);
  if (c == '!') return true;
  if (c < 0 || !is_ident_start(c)) return false;
  const char *save = P->p;
  const char *s;
  size_t n;
  ident(P, &s, &n);
  P->p = save;
  if ((n == 6 && !memcmp(s, "tensor", 6)) || (n == 5 && !memcmp(s, "tuple", 5)) ||
      (n == 7 && !memcmp(s, "complex", 7)))
    return true;
  return shlo_elem_from_name(s, n) >= 0;
}

static const alias *find_alias(parser *P, const char *s, size_t n) {
  for (int i = 0; i < P->n_aliases; i++)
    if (P->aliases[i].len == n && !memcmp(P->aliases[i].name, s, n))
      return &P->aliases[i];
  return NULL;
}

const shlo_type *parse_type(parser *P) {
  enter(P);
  skip_ws(P);
  const char *s = P->p;
  const shlo_type *t = NULL;
  if (accept_kw(P, "tensor")) {
    t = parse_tensor_type(P);
  } else if (accept_kw(P, "tuple")) {
    shlo_type *tt = palloc(P, sizeof *tt);
    tt->kind = SHLO_TYPE_TUPLE;
    expect(P, "<");
    if (!accept(P, ">")) {
      tt->n_elems = parse_type_list(P, (const shlo_type ***)&tt->elems);
      expect(P, ">");
    }
    t = tt;
  } else if (accept(P, "!stablehlo.token")) {
    shlo_type *tt = palloc(P, sizeof *tt);
    tt->kind = SHLO_TYPE_TOKEN;
    t = tt;
  } else if (peekc(P) == '!') {
    P->p++;
    size_t n;
    const char *name = expect_ident(P, &n, "a type name");
    const alias *a = find_alias(P, name, n);
    if (a && a->type) {
      t = a->type;
    } else if (memchr(name, '.', n)) {
      if (n > 10 && !memcmp(name, "stablehlo.", 10) &&
          !(n == 16 && !memcmp(name, "stablehlo.future", 16)))
        perr_at(P, s, "unknown stablehlo type: %.*s", (int)n - 10, name + 10);
      /* A dialect type the engine only carries: !stablehlo.future<...> */
      if (P->p < P->end && *P->p == '<') skip_balanced(P);
      shlo_type *o = palloc(P, sizeof *o);
      o->kind = SHLO_TYPE_OPAQUE;
      o->encoding = pstrndup(P, s, (size_t)(P->p - s));
      t = o;
    } else {
      perr_at(P, s, "unknown type '!%.*s'", (int)n, name);
    }
  } else {
    t = make_scalar_type(P, (shlo_elem_type)parse_elem_type(P));
  }
  leave(P);
  return t;
}

int parse_type_list(parser *P, const shlo_type ***out) {
  int n = 0, cap = 4;
  const shlo_type **v = palloc(P, (size_t)cap * sizeof *v);
  do {
    if (n == cap) {
      const shlo_type **w = palloc(P, (size_t)cap * 2 * sizeof *w);
      memcpy(w, v, (size_t)n * sizeof *v);
      v = w;
      cap *= 2;
    }
    v[n++] = parse_type(P);
  } while (accept(P, ","));
  *out = v;
  return n;
}

/* ---- attributes ---- */

shlo_attr *new_attr(parser *P, shlo_attr_kind kind) {
  shlo_attr *a = palloc(P, sizeof *a);
  a->kind = kind;
  return a;
}

const shlo_attr *make_int(parser *P, int64_t v) {
  shlo_attr *a = new_attr(P, SHLO_ATTR_INT);
  a->i = v;
  a->type = make_scalar_type(P, SHLO_SI64);
  return a;
}

const shlo_attr *make_enum(parser *P, const char *kind, const char *value) {
  shlo_attr *a = new_attr(P, SHLO_ATTR_ENUM);
  a->enum_kind = kind;
  a->str = value;
  return a;
}

const shlo_attr *make_i64_array(parser *P, const int64_t *v, int n) {
  shlo_attr *a = new_attr(P, SHLO_ATTR_DENSE_ARRAY);
  a->elem = SHLO_SI64;
  a->n = n;
  a->ints = palloc(P, (size_t)(n ? n : 1) * sizeof(int64_t));
  if (n) memcpy(a->ints, v, (size_t)n * sizeof(int64_t));
  return a;
}

int parse_i64_list(parser *P, int64_t *out, int cap) {
  int n = 0;
  expect(P, "[");
  if (accept(P, "]")) return 0;
  do {
    if (n == cap) perr(P, "too many values in list (at most %d)", cap);
    out[n++] = parse_int(P);
  } while (accept(P, ","));
  expect(P, "]");
  return n;
}

/* A scalar literal inside dense<...>, kept as text until the type is
 * known. */
typedef struct lit {
  const char *s, *e;   /* the text; for complex, the real part */
  const char *is, *ie; /* complex imaginary part */
  char kind;           /* 'i' int, 'f' float, 'x' hex, 'b' bool, 'c' complex */
} lit;

typedef struct lits {
  lit *v;
  size_t n, cap;
} lits;

static void lit_push(parser *P, lits *L, lit l) {
  if (L->n == L->cap) {
    size_t cap = L->cap ? L->cap * 2 : 64;
    lit *v = palloc(P, cap * sizeof *v);
    if (L->n) memcpy(v, L->v, L->n * sizeof *v);
    L->v = v;
    L->cap = cap;
  }
  L->v[L->n++] = l;
}

static lit scan_scalar(parser *P) {
  lit l = {0};
  skip_ws(P);
  l.s = P->p;
  if (accept_kw(P, "true") || accept_kw(P, "false")) {
    l.kind = 'b';
  } else if (at_number(P)) {
    bool is_float;
    const char *e = scan_number(P, &is_float);
    const char *digits = l.s + (*l.s == '-' || *l.s == '+');
    bool hex = digits + 1 < e && digits[0] == '0' &&
               (digits[1] == 'x' || digits[1] == 'X');
    l.kind = hex ? 'x' : is_float ? 'f' : 'i';
    P->p = e;
  } else if (accept_kw(P, "inf") || accept_kw(P, "nan")) {
    l.kind = 'f';
  } else {
    perr(P, "expected a number, true or false");
  }
  l.e = P->p;
  return l;
}

static void scan_elements(parser *P, lits *L) {
  enter(P);
  if (accept(P, "[")) {
    if (!accept(P, "]")) {
      do scan_elements(P, L);
      while (accept(P, ","));
      expect(P, "]");
    }
  } else if (accept(P, "(")) {
    lit re = scan_scalar(P);
    expect(P, ",");
    lit im = scan_scalar(P);
    expect(P, ")");
    lit c = {re.s, re.e, im.s, im.e, 'c'};
    lit_push(P, L, c);
  } else {
    lit_push(P, L, scan_scalar(P));
  }
  leave(P);
}

/* Store the float literal [s, e) as element of type t at dst. */
static void store_float_lit(parser *P, shlo_elem_type t, const char *s,
                            const char *e, char kind, void *dst) {
  char buf[128];
  numbuf(P, s, e, buf, sizeof buf);
  if (kind == 'x') {
    /* Hex spells the bit pattern of the storage. */
    uint64_t bits = strtoull(buf, NULL, 16);
    size_t size = shlo_elem_size(t);
    if (size < 8 && (bits >> (8 * size)) != 0)
      perr_at(P, s, "hex literal %s does not fit %s", buf, shlo_elem_name(t));
    memcpy(dst, &bits, size); /* little-endian host */
    return;
  }
  if (kind == 'b') {
    shlo_float_store(t, buf[0] == 't' ? 1.0 : 0.0, dst);
    return;
  }
  if (t == SHLO_F32) {
    float f = strtof(buf, NULL);
    memcpy(dst, &f, sizeof f);
  } else {
    shlo_float_store(t, strtod(buf, NULL), dst);
  }
}

static void store_lit(parser *P, shlo_value *v, int64_t i, const lit *l) {
  shlo_elem_type t = v->elem;
  size_t es = shlo_elem_size(t);
  char *dst = (char *)v->data + (size_t)i * es;
  char buf[128];
  switch (shlo_elem_class_of(t)) {
  case SHLO_CLASS_BOOL:
  case SHLO_CLASS_SINT:
  case SHLO_CLASS_UINT:
    if (l->kind == 'b') {
      shlo_tensor_set_i64(v, i, *l->s == 't');
    } else if (l->kind == 'i' || l->kind == 'x') {
      numbuf(P, l->s, l->e, buf, sizeof buf);
      errno = 0;
      int64_t x = buf[0] == '-' ? strtoll(buf, NULL, 0)
                                : (int64_t)strtoull(buf, NULL, 0);
      if (errno == ERANGE)
        perr_at(P, l->s, "integer literal out of range");
      shlo_tensor_set_i64(v, i, x);
    } else {
      perr_at(P, l->s, "expected an integer literal for element type %s",
              shlo_elem_name(t));
    }
    return;
  case SHLO_CLASS_FLOAT:
    if (l->kind == 'c')
      perr_at(P, l->s, "complex literal for element type %s",
              shlo_elem_name(t));
    store_float_lit(P, t, l->s, l->e, l->kind, dst);
    return;
  case SHLO_CLASS_COMPLEX: {
    shlo_elem_type part = shlo_elem_complex_part(t);
    size_t ps = shlo_elem_size(part);
    if (l->kind == 'c') {
      char ik = (l->ie - l->is > 2 && (l->is[1] == 'x' || l->is[2] == 'x'))
                    ? 'x' : 'f';
      char rk = (l->e - l->s > 2 && (l->s[1] == 'x' || l->s[2] == 'x'))
                    ? 'x' : 'f';
      store_float_lit(P, part, l->s, l->e, rk, dst);
      store_float_lit(P, part, l->is, l->ie, ik, dst + ps);
    } else {
      store_float_lit(P, part, l->s, l->e, l->kind, dst);
    }
    return;
  }
  }
}

/* Fill v from a "0x..." hex blob: raw little-endian element bytes. */
static void fill_from_hex(parser *P, const char *at, const char *hex,
                          size_t n, shlo_value *v) {
  if (n < 2 || hex[0] != '0' || (hex[1] != 'x' && hex[1] != 'X'))
    perr_at(P, at, "dense string must be a 0x hex blob");
  hex += 2;
  n -= 2;
  if (n % 2) perr_at(P, at, "hex blob has an odd number of digits");
  size_t bytes = n / 2;
  size_t es = shlo_elem_size(v->elem);
  for (size_t k = 0; k < n; k++)
    if (hexval((unsigned char)hex[k]) < 0)
      perr_at(P, at, "bad hex digit in dense blob");
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
  perr_at(P, at, "hex blob has %zu bytes but the type needs %zu", bytes,
          v->nbytes);
}

static const shlo_attr *parse_dense(parser *P) {
  const char *at = P->p;
  expect(P, "<");
  lits L = {0};
  const char *blob = NULL;
  size_t blob_n = 0;
  if (peekc(P) == '"') {
    blob = parse_string(P, &blob_n);
  } else if (peekc(P) != '>') {
    scan_elements(P, &L);
  }
  expect(P, ">");
  expect(P, ":");
  const shlo_type *t = parse_type(P);
  if (t->kind != SHLO_TYPE_TENSOR)
    perr_at(P, at, "dense literal needs a tensor type");
  if (!shlo_type_is_static(t))
    perr_at(P, at, "dense literal needs a static shape");
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
    perr_at(P, at,
            "dense literal expands to %lld bytes; a literal may expand to at "
            "most %lld bytes (%lld per module)",
            (long long)bytes, (long long)PARSE_MAX_SPLAT_BYTES,
            (long long)PARSE_MAX_SPLAT_TOTAL);
  if (bytes > (int64_t)(P->end - P->src) + 64) P->splat_bytes += bytes;
  shlo_value *v = shlo_tensor_new_like(t);
  if (!v) perr_at(P, at, "dense literal too large");
  if (shlo_arena_own_value(P->arena, v)) perr(P, "out of memory");
  if (blob) {
    fill_from_hex(P, at, blob, blob_n, v);
  } else if (L.n == 1 && v->numel != 1) {
    for (int64_t i = 0; i < v->numel; i++) store_lit(P, v, i, &L.v[0]);
  } else if ((int64_t)L.n == v->numel) {
    for (size_t i = 0; i < L.n; i++) store_lit(P, v, (int64_t)i, &L.v[i]);
  } else if (!(L.n == 1 && v->numel == 0)) {
    perr_at(P, at, "dense literal has %zu elements but %s needs %lld", L.n,
            "its type", (long long)v->numel);
  }
  shlo_attr *a = new_attr(P, SHLO_ATTR_DENSE);
  a->type = t;
  a->dense = v;
  return a;
}

static const shlo_attr *parse_dense_array(parser *P) {
  /* array<i64: 1, 2> or array<i64> */
  expect(P, "<");
  shlo_elem_type e = (shlo_elem_type)parse_elem_type(P);
  shlo_attr *a = new_attr(P, SHLO_ATTR_DENSE_ARRAY);
  a->elem = e;
  int cap = 8;
  a->ints = palloc(P, (size_t)cap * sizeof(int64_t));
  a->floats = palloc(P, (size_t)cap * sizeof(double));
  if (accept(P, ":")) {
    do {
      if (a->n == cap) {
        if (cap > (1 << 26)) perr(P, "array too long");
        int64_t *ni = palloc(P, (size_t)cap * 2 * sizeof(int64_t));
        double *nf = palloc(P, (size_t)cap * 2 * sizeof(double));
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
        a->ints[a->n] = buf[0] == '-' ? strtoll(buf, NULL, 0)
                                      : (int64_t)strtoull(buf, NULL, 0);
        a->floats[a->n] = (double)a->ints[a->n];
      }
      a->n++;
    } while (accept(P, ","));
  }
  expect(P, ">");
  return a;
}

/* k = v, ... up to the closing `close` character. */
/* Field names the #stablehlo.<name><...> attributes with fixed fields
 * accept (MLIR rejects any other); NULL for one not checked. */
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
  if (!sname) return NULL;
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

void check_dot_algorithm(parser *P, const char *at, const shlo_attr *a) {
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
      perr_at(P, at, "%s must be positive, got %lld (dot_general C%d)",
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
    perr_at(P, at, "dot algorithm not known to be supported on any hardware: "
            "{lhs:'%s', rhs:'%s', accum:'%s', lhs_components:%lld, "
            "rhs_components:%lld, primitive_ops:%lld, imprecise:%d}", l, r,
            acc, (long long)c[0], (long long)c[1], (long long)c[2],
            imprecise);
}

shlo_named_attr *parse_fields(parser *P, const char *close, int *n_out) {
  return parse_struct_fields(P, close, n_out, NULL);
}

shlo_named_attr *parse_struct_fields(parser *P, const char *close,
                                     int *n_out, const char *sname) {
  const char *const *keys = struct_keys(sname);
  int n = 0, cap = 4;
  shlo_named_attr *f = palloc(P, (size_t)cap * sizeof *f);
  if (!accept(P, close)) {
    do {
      if (n && accept(P, close)) goto closed; /* trailing comma */
      if (n == cap) {
        shlo_named_attr *g = palloc(P, (size_t)cap * 2 * sizeof *g);
        memcpy(g, f, (size_t)n * sizeof *f);
        f = g;
        cap *= 2;
      }
      size_t len;
      const char *name;
      skip_ws(P);
      const char *at = P->p;
      if (peekc(P) == '"') {
        name = parse_string(P, &len);
      } else {
        name = expect_ident(P, &len, "an attribute name");
        name = pstrndup(P, name, len);
      }
      for (int i = 0; i < n; i++)
        if (!strcmp(f[i].name, name))
          perr_at(P, at, "duplicated `%s` entry", name);
      if (keys) {
        int k = 0;
        while (keys[k] && strcmp(keys[k], name)) k++;
        if (!keys[k]) {
          char list[512];
          size_t m = 0;
          list[0] = 0;
          for (k = 0; keys[k] && m < sizeof list; k++)
            m += (size_t)snprintf(list + m, sizeof list - m, "%s`%s`",
                                  k ? ", " : "", keys[k]);
          perr_at(P, at, "unknown `%s` in #stablehlo.%s: expected one of: %s",
                  name, sname, list);
        }
      }
      f[n].name = name;
      if (accept(P, "=")) {
        f[n].value = parse_attr(P);
      } else {
        f[n].value = new_attr(P, SHLO_ATTR_UNIT);
      }
      n++;
    } while (accept(P, ","));
    expect(P, close);
  }
closed:
  *n_out = n;
  return f;
}

const shlo_attr *parse_attr_dict(parser *P) {
  expect(P, "{");
  shlo_attr *a = new_attr(P, SHLO_ATTR_STRUCT);
  a->fields = parse_fields(P, "}", &a->n);
  return a;
}

/* Dimension numbers of a convolution: [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]. */
static void parse_conv_part(parser *P, const char *letters, int64_t *a,
                            int64_t *b, int64_t *spatial, int *n_spatial) {
  expect(P, "[");
  int pos = 0;
  *a = *b = -1;
  *n_spatial = 0;
  int64_t tmp[SHLO_MAX_RANK];
  int nt = 0;
  int64_t order[SHLO_MAX_RANK];
  do {
    if (pos == SHLO_MAX_RANK) perr(P, "too many convolution dimensions");
    skip_ws(P);
    if (at_number(P)) {
      int64_t k = parse_int(P);
      if (k < 0 || k >= SHLO_MAX_RANK) perr(P, "bad spatial dimension %lld",
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
      perr(P, "expected '%c', '%c' or a spatial dimension number", letters[0],
           letters[1]);
    }
    pos++;
  } while (accept(P, ","));
  expect(P, "]");
  for (int i = 0; i < nt; i++) {
    if (order[i] >= nt) perr(P, "spatial dimensions must be 0..%d", nt - 1);
    spatial[order[i]] = tmp[i];
  }
  *n_spatial = nt;
}

const shlo_attr *parse_conv_dims(parser *P) {
  shlo_attr *a = new_attr(P, SHLO_ATTR_CONV_DIMS);
  int n1, n2, n3;
  parse_conv_part(P, "bf", &a->conv_in_batch, &a->conv_in_feature,
                  a->conv_in_spatial, &n1);
  expect(P, "x");
  parse_conv_part(P, "io", &a->conv_k_in, &a->conv_k_out, a->conv_k_spatial,
                  &n2);
  expect(P, "->");
  parse_conv_part(P, "bf", &a->conv_out_batch, &a->conv_out_feature,
                  a->conv_out_spatial, &n3);
  if (n1 != n2 || n2 != n3)
    perr(P, "convolution dimension numbers disagree on spatial rank");
  a->conv_n_spatial = n1;
  return a;
}

static const shlo_attr *parse_hash_attr(parser *P) {
  const char *at = P->p;
  P->p++; /* '#' */
  size_t n = 0;
  const char *name = NULL;
  if (!ident(P, &name, &n)) perr(P, "expected an attribute name after '#'");
  if (P->p < P->end && *P->p == '<') {
    /* #stablehlo<comparison_direction LT>, #stablehlo.gather<...> */
    const char *dot = memchr(name, '.', n);
    if (!dot) {
      expect(P, "<");
      size_t kn, vn;
      const char *k = expect_ident(P, &kn, "an enum kind");
      const char *v = expect_ident(P, &vn, "an enum value");
      expect(P, ">");
      return make_enum(P, pstrndup(P, k, kn), pstrndup(P, v, vn));
    }
    size_t dot_at = (size_t)(dot - name);
    const char *sname = pstrndup(P, name + dot_at + 1, n - dot_at - 1);
    shlo_attr *a = new_attr(P, SHLO_ATTR_STRUCT);
    a->struct_name = sname;
    expect(P, "<");
    if (peekc(P) == '[') {
      /* #stablehlo.conv<[b, 0, 1, f]x[...]->[...]> */
      const shlo_attr *cd = parse_conv_dims(P);
      expect(P, ">");
      return cd;
    }
    if (!strcmp(sname, "bounds") || !strcmp(sname, "result_accuracy_mode") ||
        P->p >= P->end || (!is_ident_start((unsigned char)*P->p) &&
                           *P->p != '"')) {
      /* Opaque payloads are kept as text. */
      P->p--;
      skip_balanced(P);
      shlo_attr *o = new_attr(P, SHLO_ATTR_OPAQUE);
      o->str = pstrndup(P, at, (size_t)(P->p - at));
      return o;
    }
    a->fields = parse_struct_fields(P, ">", &a->n, sname);
    if (!strcmp(sname, "dot_algorithm")) check_dot_algorithm(P, at, a);
    return a;
  }
  const alias *al = find_alias(P, name, n);
  if (al && al->attr) return al->attr;
  shlo_attr *o = new_attr(P, SHLO_ATTR_OPAQUE);
  o->str = pstrndup(P, at, (size_t)(P->p - at));
  return o;
}

/* [a, b, ...] */
static const shlo_attr *parse_array_attr(parser *P) {
  P->p++;
  shlo_attr *a = new_attr(P, SHLO_ATTR_ARRAY);
  int cap = 4;
  a->items = palloc(P, (size_t)cap * sizeof *a->items);
  if (accept(P, "]")) return a;
  do {
    if (a->n == cap) {
      const shlo_attr **w = palloc(P, (size_t)cap * 2 * sizeof *w);
      memcpy(w, a->items, (size_t)a->n * sizeof *w);
      a->items = w;
      cap *= 2;
    }
    a->items[a->n++] = parse_attr(P);
  } while (accept(P, ","));
  expect(P, "]");
  return a;
}

const shlo_attr *parse_symbol_attr(parser *P) {
  P->p++;
  shlo_attr *a = new_attr(P, SHLO_ATTR_SYMBOL);
  size_t n;
  if (peekc(P) == '"') {
    a->str = parse_string(P, &n);
  } else {
    const char *s = expect_ident(P, &n, "a symbol name");
    a->str = pstrndup(P, s, n);
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
  shlo_attr *a = new_attr(P, is_float ? SHLO_ATTR_FLOAT : SHLO_ATTR_INT);
  if (is_float) {
    a->f = strtod(buf, NULL);
  } else {
    errno = 0;
    a->i = buf[0] == '-' ? strtoll(buf, NULL, 0)
                         : (int64_t)strtoull(buf, NULL, 0);
    if (errno == ERANGE) perr_at(P, s, "integer literal out of range");
    a->f = (double)a->i;
  }
  if (P->untyped_scalars || !accept(P, ":")) return a;
  a->type = parse_type(P);
  if (a->kind == SHLO_ATTR_INT && a->type->kind == SHLO_TYPE_ELEMENT &&
      shlo_elem_is_float(a->type->elem)) {
    /* 1 : f32 is a float attribute; 0x3F800000 : f32 is its bits. */
    a->kind = SHLO_ATTR_FLOAT;
    if (strchr(buf, 'x') || strchr(buf, 'X')) {
      unsigned char bytes[8] = {0};
      uint64_t bits = (uint64_t)a->i;
      memcpy(bytes, &bits, 8);
      a->f = shlo_float_load(a->type->elem, bytes);
    }
  }
  return a;
}

/* The text from `at` to the cursor, kept as it is. */
static const shlo_attr *opaque_since(parser *P, const char *at) {
  shlo_attr *o = new_attr(P, SHLO_ATTR_OPAQUE);
  o->str = pstrndup(P, at, (size_t)(P->p - at));
  return o;
}

/* Attributes that start with a word: true/false, dense<>, array<>, unit,
 * loc(...), a type, name<...> kept as text, or a bare enum word. */
static const shlo_attr *parse_word_attr(parser *P, const char *at) {
  if (accept_kw(P, "true") || accept_kw(P, "false")) {
    shlo_attr *a = new_attr(P, SHLO_ATTR_BOOL);
    a->b = (P->p - at) == 4;
    a->i = a->b;
    return a;
  }
  if (accept_kw(P, "dense")) return parse_dense(P);
  if (accept_kw(P, "array")) return parse_dense_array(P);
  if (accept_kw(P, "unit")) return new_attr(P, SHLO_ATTR_UNIT);
  if (accept_kw(P, "loc")) {
    if (peekc(P) != '(') perr(P, "expected '(' after loc");
    skip_balanced(P);
    return opaque_since(P, at);
  }
  if (at_type(P)) {
    shlo_attr *a = new_attr(P, SHLO_ATTR_TYPE);
    a->type = parse_type(P);
    return a;
  }
  size_t n;
  const char *s = expect_ident(P, &n, "an attribute");
  if (P->p < P->end && *P->p == '<') {
    /* affine_map<...>, sparse<...>, ...: kept as text. */
    skip_balanced(P);
    return opaque_since(P, at);
  }
  return make_enum(P, NULL, pstrndup(P, s, n));
}

const shlo_attr *parse_attr(parser *P) {
  enter(P);
  const shlo_attr *r = NULL;
  int c = peekc(P);
  const char *at = P->p;
  if (c < 0) perr(P, "expected an attribute but the input ended");
  if (c == '[') {
    r = parse_array_attr(P);
  } else if (c == '{') {
    r = parse_attr_dict(P);
  } else if (c == '"') {
    shlo_attr *a = new_attr(P, SHLO_ATTR_STRING);
    a->str = parse_string(P, NULL);
    if (!P->untyped_scalars && accept(P, ":")) a->type = parse_type(P);
    r = a;
  } else if (c == '@') {
    r = parse_symbol_attr(P);
  } else if (c == '#') {
    r = parse_hash_attr(P);
  } else if (at_number(P)) {
    r = parse_number_attr(P);
  } else if (c == '(') {
    /* A function type or other parenthesised payload: kept as text. */
    skip_balanced(P);
    if (accept(P, "->")) {
      if (peekc(P) == '(') skip_balanced(P);
      else parse_type(P);
    }
    r = opaque_since(P, at);
  } else if (is_ident_start(c)) {
    r = parse_word_attr(P, at);
  } else {
    perr(P, "expected an attribute");
  }
  leave(P);
  return r;
}
