/* SPDX-License-Identifier: Apache-2.0 */
/* Results as exact text and as .npy/.npz files (outputs.h). */
#include "outputs.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "npy.h"

/* ---- exact element text ------------------------------------------------ */

/* The storage bits of float element i of v (any float type). */
static uint64_t float_bits(const shlo_value *v, int64_t i) {
  size_t es = shlo_elem_size(shlo_tensor_elem(v));
  uint64_t bits = 0;
  memcpy(&bits, (const char *)shlo_tensor_data_const(v) + (size_t)i * es, es);
  return bits; /* little-endian host: the low bytes */
}

/* Whether the decimal text reads back to the bits `want` of type t, the
 * way the parser reads it: to the nearest double, then rounded once to t
 * (scratch: a one-element tensor of t). */
static bool reads_back(const char *text, shlo_elem_type t, uint64_t want,
                       shlo_value *scratch) {
  double y = strtod(text, NULL);
  if (t == SHLO_F64) {
    uint64_t b;
    memcpy(&b, &y, sizeof b);
    return b == want;
  }
  if (t == SHLO_F32) {
    float f = (float)y;
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    return b == (uint32_t)want;
  }
  shlo_tensor_set_f64(scratch, 0, y);
  return float_bits(scratch, 0) == want;
}

/* MLIR reads a float literal only with a dot before any exponent:
 * "5" -> "5.0", "1e+30" -> "1.0e+30". */
static void add_dot(char *buf, size_t cap) {
  if (strchr(buf, '.')) return;
  char *e = strchr(buf, 'e');
  size_t n = strlen(buf);
  if (n + 3 > cap) return;
  if (!e) {
    memcpy(buf + n, ".0", 3);
    return;
  }
  memmove(e + 2, e, strlen(e) + 1);
  e[0] = '.';
  e[1] = '0';
}

/* A value with an exponent in its shortest text that is a short decimal
 * in fixed notation reads better so (bf16 300 as "300.0", not "3.0e+02"):
 * the fixed text with the same significant digits, when it reads back. */
static void prefer_fixed(double x, shlo_elem_type t, uint64_t bits, int p,
                         shlo_value *scratch, char *buf, size_t cap) {
  double a = fabs(x);
  if (!strchr(buf, 'e') || a < 1e-4 || a >= 1e16) return;
  int decimals = p - 1 - (int)floor(log10(a));
  char fixed[64];
  snprintf(fixed, sizeof fixed, "%.*f", decimals < 0 ? 0 : decimals, x);
  if ((t == SHLO_F64 || t == SHLO_F32 || scratch) &&
      reads_back(fixed, t, bits, scratch))
    snprintf(buf, cap, "%s", fixed);
}

/* A finite float x of type t (bits its storage) as the shortest "%.<p>g"
 * that reads back.  f32 and f64 start at FLT_DIG and DBL_DIG digits: with
 * fewer significant digits the %g text is the same (its zeros dropped). */
static void shortest(double x, shlo_elem_type t, uint64_t bits, char *buf,
                     size_t cap) {
  int p = t == SHLO_F64 ? 15 : t == SHLO_F32 ? 6 : 1;
  /* subnormals have fewer digits of precision than that */
  if ((t == SHLO_F64 && fabs(x) < DBL_MIN) || (t == SHLO_F32 && fabs(x) < FLT_MIN))
    p = 1;
  shlo_value *scratch = NULL;
  if (t != SHLO_F64 && t != SHLO_F32) {
    int64_t one = 1;
    scratch = shlo_tensor_new(t, 1, &one);
  }
  for (; p < 17; p++) {
    snprintf(buf, cap, "%.*g", p, x);
    if (!scratch && t != SHLO_F64 && t != SHLO_F32) break; /* OOM: 17 */
    if (reads_back(buf, t, bits, scratch)) break;
  }
  if (p == 17) snprintf(buf, cap, "%.17g", x);
  prefer_fixed(x, t, bits, p, scratch, buf, cap);
  shlo_value_release(scratch);
  add_dot(buf, cap);
}

/* Float element i of v: exact decimal; NaN and infinities as hex bits. */
static void float_text(const shlo_value *v, int64_t i, char *buf,
                       size_t cap) {
  shlo_elem_type t = shlo_tensor_elem(v);
  double x = shlo_tensor_get_f64(v, i);
  uint64_t bits = float_bits(v, i);
  if (!isfinite(x)) {
    int digits = (int)shlo_elem_size(t) * 2;
    snprintf(buf, cap, "0x%0*llX", digits, (unsigned long long)bits);
  } else if (x == 0) {
    snprintf(buf, cap, "%s", signbit(x) ? "-0.0" : "0.0");
  } else {
    shortest(x, t, bits, buf, cap);
  }
}

/* One part of a complex element as a one-element tensor of its part
 * type, so that float_text spells it. */
static void complex_text(const shlo_value *v, int64_t i, char *buf,
                         size_t cap) {
  shlo_elem_type part = shlo_elem_complex_part(shlo_tensor_elem(v));
  size_t ps = shlo_elem_size(part);
  const char *src = (const char *)shlo_tensor_data_const(v) + (size_t)i * 2 * ps;
  int64_t one = 1;
  shlo_value *p = shlo_tensor_new(part, 1, &one);
  if (!p) {
    snprintf(buf, cap, "(?, ?)");
    return;
  }
  char re[48], im[48];
  memcpy(shlo_tensor_data(p), src, ps);
  float_text(p, 0, re, sizeof re);
  memcpy(shlo_tensor_data(p), src + ps, ps);
  float_text(p, 0, im, sizeof im);
  shlo_value_release(p);
  snprintf(buf, cap, "(%s, %s)", re, im);
}

void cli_elem_text(const shlo_value *v, int64_t i, char *buf, size_t cap) {
  shlo_elem_type t = shlo_tensor_elem(v);
  switch (shlo_elem_class_of(t)) {
  case SHLO_CLASS_FLOAT: float_text(v, i, buf, cap); return;
  case SHLO_CLASS_COMPLEX: complex_text(v, i, buf, cap); return;
  case SHLO_CLASS_BOOL:
    snprintf(buf, cap, "%s", shlo_tensor_get_i64(v, i) ? "true" : "false");
    return;
  case SHLO_CLASS_UINT:
    snprintf(buf, cap, "%llu", (unsigned long long)shlo_tensor_get_i64(v, i));
    return;
  case SHLO_CLASS_SINT:
    snprintf(buf, cap, "%lld", (long long)shlo_tensor_get_i64(v, i));
    return;
  }
}

/* ---- the value layout (as the engine's printer lays it out) ------------ */

typedef struct text {
  char *s;
  size_t len, cap;
  bool failed;
} text;

static void put(text *t, const char *s, size_t n) {
  if (t->failed) return;
  if (t->len + n + 1 > t->cap) {
    size_t cap = t->cap ? t->cap : 256;
    while (cap < t->len + n + 1) cap *= 2;
    char *g = realloc(t->s, cap);
    if (!g) {
      t->failed = true;
      return;
    }
    t->s = g;
    t->cap = cap;
  }
  memcpy(t->s + t->len, s, n);
  t->len += n;
  t->s[t->len] = 0;
}

static void puts_(text *t, const char *s) { put(t, s, strlen(s)); }

static void indent(text *t, int n) {
  for (int i = 0; i < n; i++) put(t, " ", 1);
}

/* Dimension d of v from flat element base: the innermost on one line. */
static void put_dim(text *t, const shlo_value *v, int d, int64_t base,
                    int64_t stride, int ind) {
  int rank = shlo_tensor_rank(v);
  const int64_t *dims = shlo_tensor_dims(v);
  int64_t inner = stride / (dims[d] ? dims[d] : 1);
  indent(t, ind);
  if (d == rank - 1 || dims[d] == 0) {
    put(t, "[", 1);
    for (int64_t i = 0; d == rank - 1 && i < dims[d]; i++) {
      char buf[128];
      if (i) put(t, ", ", 2);
      cli_elem_text(v, base + i, buf, sizeof buf);
      puts_(t, buf);
    }
    put(t, "]", 1);
    return;
  }
  put(t, "[\n", 2);
  for (int64_t i = 0; i < dims[d]; i++) {
    put_dim(t, v, d + 1, base + i * inner, inner, ind + 2);
    puts_(t, i + 1 < dims[d] ? ",\n" : "\n");
  }
  indent(t, ind);
  put(t, "]", 1);
}

char *cli_value_text(const shlo_value *v) {
  /* tuples, tokens and quantized tensors: the engine's own text */
  if (shlo_value_kind(v) != SHLO_TYPE_TENSOR || shlo_tensor_quant(v))
    return shlo_value_to_string(v);
  shlo_type ty = {.kind = SHLO_TYPE_TENSOR, .elem = shlo_tensor_elem(v),
                  .rank = shlo_tensor_rank(v)};
  memcpy(ty.dims, shlo_tensor_dims(v), sizeof(int64_t) * (size_t)ty.rank);
  char tname[512];
  shlo_type_format(&ty, tname, sizeof tname);
  text t = {0};
  puts_(&t, tname);
  if (ty.rank == 0) {
    char buf[128];
    cli_elem_text(v, 0, buf, sizeof buf);
    puts_(&t, " {");
    puts_(&t, buf);
    puts_(&t, "}");
  } else {
    puts_(&t, " {\n");
    put_dim(&t, v, 0, 0, shlo_tensor_numel(v), 2);
    puts_(&t, "\n}");
  }
  if (t.failed) {
    free(t.s);
    return NULL;
  }
  return t.s;
}

/* ---- --output ----------------------------------------------------------- */

int cli_outputs_option(cli_outputs *o, const char *cmd, int argc, char **argv,
                       int *i) {
  const char *a = argv[*i], *spec;
  if (!strncmp(a, "--output=", 9)) spec = a + 9;
  else if (!strcmp(a, "--output") && *i + 1 < argc) spec = argv[++*i];
  else return 0;
  if (*spec && strcmp(spec, "-") && spec[0] != '@') {
    fprintf(stderr, "%s: --output '%s': expected @FILE.npy, @FILE.npz, - "
            "(.npy on stdout) or nothing (drop the result)\n", cmd, spec);
    return -1;
  }
  if (o->n == o->cap) {
    int cap = o->cap ? 2 * o->cap : 8;
    const char **g = realloc(o->specs, sizeof *g * (size_t)cap);
    if (!g) {
      fprintf(stderr, "%s: out of memory\n", cmd);
      return -1;
    }
    o->specs = g;
    o->cap = cap;
  }
  o->specs[o->n++] = spec;
  return 1;
}

void cli_outputs_free(cli_outputs *o) {
  free(o->specs);
  memset(o, 0, sizeof *o);
}

int cli_write_bytes(const char *path, const void *bytes, size_t len) {
  bool out = !strcmp(path, "-");
  FILE *f = out ? stdout : fopen(path, "wb");
  if (!f) {
    fprintf(stderr, "shlo: cannot write %s: %s\n", path, strerror(errno));
    return 1;
  }
  bool ok = fwrite(bytes, 1, len, f) == len;
  ok = (out ? fflush(f) : fclose(f)) == 0 && ok;
  if (!ok) fprintf(stderr, "shlo: cannot write %s: %s\n", path,
                   strerror(errno));
  return ok ? 0 : 1;
}

static bool ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), k = strlen(suffix);
  return n >= k && !strcmp(s + n - k, suffix);
}

/* Result(s) vals[0 .. n) to one --output spec. */
static int write_output(const char *cmd, const char *spec,
                        shlo_value *const *vals, int n) {
  unsigned char *bytes = NULL;
  size_t len = 0;
  char err[NPY_ERR_MAX];
  const char *path = spec[0] == '@' ? spec + 1 : spec;
  int rc = n > 1 ? npz_write(vals, n, &bytes, &len, err)
                 : npy_write(vals[0], &bytes, &len, err);
  if (rc) {
    fprintf(stderr, "%s: --output '%s': %s\n", cmd, spec, err);
    return 1;
  }
  rc = cli_write_bytes(path, bytes, len);
  free(bytes);
  return rc;
}

static int print_all(const char *cmd, shlo_value *const *vals, int n) {
  for (int i = 0; i < n; i++) {
    char *s = cli_value_text(vals[i]);
    if (!s) {
      fprintf(stderr, "%s: out of memory\n", cmd);
      return 1;
    }
    printf("%s\n", s);
    free(s);
  }
  return 0;
}

int cli_outputs_deliver(const cli_outputs *o, const char *cmd,
                        shlo_value *const *vals, int n) {
  if (!o || !o->n) return print_all(cmd, vals, n);
  int k = 0;
  for (int i = 0; i < o->n; i++) {
    const char *spec = o->specs[i];
    if (k >= n) {
      fprintf(stderr, "%s: --output '%s' has no result to take (the "
              "function gives %d)\n", cmd, spec, n);
      return 1;
    }
    if (!*spec) {
      k++;
      continue;
    }
    bool npz = ends_with(spec, ".npz");
    int take = npz ? n - k : 1;
    if (npz && i + 1 < o->n) {
      fprintf(stderr, "%s: --output '%s' takes every remaining result: it "
              "must be the last --output\n", cmd, spec);
      return 1;
    }
    if (npz) {
      unsigned char *bytes = NULL;
      size_t len = 0;
      char err[NPY_ERR_MAX];
      if (npz_write(vals + k, take, &bytes, &len, err)) {
        fprintf(stderr, "%s: --output '%s': %s\n", cmd, spec, err);
        return 1;
      }
      int rc = cli_write_bytes(spec + 1, bytes, len);
      free(bytes);
      if (rc) return rc;
    } else if (write_output(cmd, spec, vals + k, 1)) {
      return 1;
    }
    k += take;
  }
  return 0;
}
