/* SPDX-License-Identifier: Apache-2.0 */
/* --input and --args (inputs.h).  Everything here reads text or files the
 * user gave: each malformed piece ends in one line naming the --input it
 * came from, and nothing is trusted before it is checked. */
#include "inputs.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "npy.h"
#include "shlo/engine.h"

#define WHY_MAX 1100

/* ---- options ------------------------------------------------------------ */

static int add_spec(cli_inputs *in, const char *cmd, const char *spec) {
  if (in->n == in->cap) {
    int cap = in->cap ? 2 * in->cap : 8;
    const char **g = realloc(in->specs, sizeof *g * (size_t)cap);
    if (!g) {
      fprintf(stderr, "%s: out of memory\n", cmd);
      return -1;
    }
    in->specs = g;
    in->cap = cap;
  }
  in->specs[in->n++] = spec;
  return 1;
}

/* argv[*i] as `--name VALUE` or `--name=VALUE`: the value, or NULL. */
static const char *option_value(const char *name, int argc, char **argv,
                                int *i) {
  size_t n = strlen(name);
  if (strncmp(argv[*i], name, n)) return NULL;
  if (argv[*i][n] == '=') return argv[*i] + n + 1;
  if (!argv[*i][n] && *i + 1 < argc) return argv[++*i];
  return NULL;
}

int cli_inputs_option(cli_inputs *in, const char *cmd, int argc, char **argv,
                      int *i) {
  const char *v;
  if ((v = option_value("--input", argc, argv, i))) {
    if (in->args) goto both;
    return add_spec(in, cmd, v);
  }
  if ((v = option_value("--args", argc, argv, i))) {
    if (in->n) goto both;
    if (in->args) {
      fprintf(stderr, "%s: --args given twice\n", cmd);
      return -1;
    }
    in->args = v;
    return 1;
  }
  return 0;
both:
  fprintf(stderr, "%s: give the arguments with --input or with --args, not "
          "both\n", cmd);
  return -1;
}

void cli_inputs_free(cli_inputs *in) {
  free(in->specs);
  memset(in, 0, sizeof *in);
}

/* ---- the values being gathered, each with where it came from ----------- */

typedef struct vlist {
  shlo_value **v;
  char **origin;  /* "--input '...'" as messages name it */
  bool *raw_view; /* from NumPy: may be the raw view of another type */
  int n, cap;
} vlist;

static void vlist_free(vlist *l) {
  for (int i = 0; i < l->n; i++) {
    shlo_value_release(l->v[i]);
    free(l->origin[i]);
  }
  free(l->v);
  free(l->origin);
  free(l->raw_view);
  memset(l, 0, sizeof *l);
}

/* Append v (taking its reference); false when out of memory (v freed). */
static bool vlist_push(vlist *l, shlo_value *v, const char *origin,
                       bool raw_view) {
  if (l->n == l->cap) {
    int cap = l->cap ? 2 * l->cap : 8;
    shlo_value **nv = realloc(l->v, sizeof *nv * (size_t)cap);
    if (nv) l->v = nv;
    char **no = realloc(l->origin, sizeof *no * (size_t)cap);
    if (no) l->origin = no;
    bool *nr = realloc(l->raw_view, sizeof *nr * (size_t)cap);
    if (nr) l->raw_view = nr;
    if (!nv || !no || !nr) {
      shlo_value_release(v);
      return false;
    }
    l->cap = cap;
  }
  char *o = strdup(origin);
  if (!o) {
    shlo_value_release(v);
    return false;
  }
  l->v[l->n] = v;
  l->origin[l->n] = o;
  l->raw_view[l->n++] = raw_view;
  return true;
}

/* "--input 'SPEC'" with a long spec cut short. */
static void origin_of(const char *spec, char *out, size_t cap) {
  size_t n = strlen(spec);
  if (n > 60) snprintf(out, cap, "--input '%.48s...'", spec);
  else snprintf(out, cap, "--input '%s'", spec);
}

/* ---- files -------------------------------------------------------------- */

/* All of stdin, malloc'd. */
static unsigned char *read_stdin(size_t *len) {
  size_t cap = 1 << 16, n = 0;
  unsigned char *b = malloc(cap);
  while (b) {
    size_t got = fread(b + n, 1, cap - n, stdin);
    n += got;
    if (got == 0) break;
    if (n == cap) {
      unsigned char *g = cap > SIZE_MAX / 2 ? NULL : realloc(b, cap * 2);
      if (!g) free(b);
      b = g;
      cap *= 2;
    }
  }
  *len = n;
  return b;
}

/* The bytes of an @FILE (or "-": stdin); NULL with why set. */
static unsigned char *read_input_file(const char *path, size_t *len,
                                      char *why) {
  if (!strcmp(path, "-")) {
    unsigned char *b = read_stdin(len);
    if (!b) snprintf(why, WHY_MAX, "cannot read standard input");
    return b;
  }
  shlo_diag d;
  shlo_diag_clear(&d);
  char *b = shlo_read_file(path, len, &d);
  if (!b) snprintf(why, WHY_MAX, "%s", d.message);
  return (unsigned char *)b;
}

/* An .npy or .npz (by its bytes) onto l. */
static int push_numpy(vlist *l, const char *spec, const char *path,
                      char *why) {
  size_t len;
  unsigned char *b = read_input_file(path, &len, why);
  if (!b) return -1;
  char err[NPY_ERR_MAX], origin[128], o2[200];
  origin_of(spec, origin, sizeof origin);
  int rc = 0;
  if (npy_is_zip(b, len)) {
    npz_entry *es;
    int n;
    rc = npz_read(b, len, &es, &n, err);
    for (int i = 0; !rc && i < n; i++) {
      snprintf(o2, sizeof o2, "%s (array %s)", origin, es[i].name);
      if (!vlist_push(l, es[i].v, o2, true)) rc = -1, snprintf(err, sizeof err, "out of memory");
      es[i].v = NULL; /* the list owns it (or freed it) */
    }
    if (!rc && !n) rc = -1, snprintf(err, sizeof err, "the .npz holds no arrays");
    npz_free(es, n); /* NULL and 0 when it did not read */
  } else {
    shlo_value *v;
    rc = npy_read(b, len, &v, err);
    if (!rc && !vlist_push(l, v, origin, true))
      rc = -1, snprintf(err, sizeof err, "out of memory");
  }
  free(b);
  if (rc) snprintf(why, WHY_MAX, "%s", err);
  return rc;
}

/* ---- SHAPExTYPE --------------------------------------------------------- */

static int elem_named(const char *s, size_t n) {
  static const struct { const char *alias; shlo_elem_type t; } aliases[] = {
      {"c64", SHLO_C64}, {"c128", SHLO_C128}, {"complex64", SHLO_C64},
      {"complex128", SHLO_C128}, {"bool", SHLO_I1}};
  int t = shlo_elem_from_name(s, n);
  for (size_t i = 0; t < 0 && i < sizeof aliases / sizeof aliases[0]; i++)
    if (strlen(aliases[i].alias) == n && !memcmp(aliases[i].alias, s, n))
      t = (int)aliases[i].t;
  return t;
}

/* "2x3xf32" (or "f32") into a new zero tensor. */
static shlo_value *shape_type_tensor(const char *s, size_t n, char *why) {
  int64_t dims[SHLO_MAX_RANK];
  int rank = 0;
  size_t i = 0;
  while (i < n && isdigit((unsigned char)s[i])) {
    int64_t d = 0;
    while (i < n && isdigit((unsigned char)s[i]) && d < (1LL << 40))
      d = d * 10 + (s[i++] - '0');
    if (d >= (1LL << 40) || i >= n || s[i] != 'x') {
      snprintf(why, WHY_MAX, "expected SHAPExTYPE (such as 2x3xf32): a "
               "dimension is too large or lacks its 'x'");
      return NULL;
    }
    if (rank == SHLO_MAX_RANK) {
      snprintf(why, WHY_MAX, "more than %d dimensions", SHLO_MAX_RANK);
      return NULL;
    }
    dims[rank++] = d;
    i++;
  }
  int t = elem_named(s + i, n - i);
  if (t < 0 || t == SHLO_INDEX) {
    snprintf(why, WHY_MAX, "unknown element type '%.*s' (expected SHAPExTYPE "
             "such as 2x3xf32, f32 or 4xi1)", (int)(n - i), s + i);
    return NULL;
  }
  shlo_value *v = shlo_tensor_new((shlo_elem_type)t, rank, dims);
  if (!v) snprintf(why, WHY_MAX, "a tensor of %.*s does not fit in memory",
                   (int)n, s);
  return v;
}

/* ---- element text ------------------------------------------------------- */

/* A float (decimal, nan/inf words, or 0x bit pattern) as element i of v,
 * or (part >= 0) as part `part` of complex element i. */
static int set_float(shlo_value *v, int64_t i, int part, const char *tok,
                     size_t len, char *why) {
  shlo_elem_type t = shlo_tensor_elem(v);
  shlo_elem_type ft = part >= 0 ? shlo_elem_complex_part(t) : t;
  size_t es = shlo_elem_size(ft);
  char *dst = (char *)shlo_tensor_data(v) +
              (size_t)i * shlo_elem_size(t) + (part > 0 ? es : 0);
  char buf[80];
  if (len >= sizeof buf) goto bad;
  memcpy(buf, tok, len);
  buf[len] = 0;
  if (len > 2 && buf[0] == '0' && (buf[1] == 'x' || buf[1] == 'X')) {
    char *end;
    errno = 0;
    unsigned long long bits = strtoull(buf + 2, &end, 16);
    int w = shlo_elem_bits(ft);
    if (*end || errno || (w < 64 && bits >> w)) goto bad;
    memcpy(dst, &bits, es); /* little-endian host: the low bytes */
    return 0;
  }
  const char *w = buf + (buf[0] == '-' || buf[0] == '+');
  double x;
  if (!strcasecmp(w, "nan")) x = buf[0] == '-' ? -NAN : NAN;
  else if (!strcasecmp(w, "inf") || !strcasecmp(w, "infinity"))
    x = buf[0] == '-' ? -INFINITY : INFINITY;
  else {
    char *end;
    x = strtod(buf, &end); /* past the range: inf, as MLIR reads it */
    if (end == buf || *end) goto bad;
  }
  if (ft == SHLO_F64) {
    memcpy(dst, &x, 8);
  } else if (ft == SHLO_F32) {
    float f = (float)x; /* the parser's rounding: to double, then to f32 */
    memcpy(dst, &f, 4);
  } else {
    int64_t one = 1;
    shlo_value *s = shlo_tensor_new(ft, 1, &one);
    if (!s) {
      snprintf(why, WHY_MAX, "out of memory");
      return -1;
    }
    shlo_tensor_set_f64(s, 0, x);
    memcpy(dst, shlo_tensor_data(s), es);
    shlo_value_release(s);
  }
  return 0;
bad:
  snprintf(why, WHY_MAX, "'%.*s' is not a %s value (a decimal, nan, inf, or "
           "the bit pattern in hex such as 0x7FC00000)", (int)(len > 40 ? 40 : len),
           tok, shlo_elem_name(ft));
  return -1;
}

/* "(re,im)", or a bare real part. */
static int set_complex(shlo_value *v, int64_t i, const char *tok, size_t len,
                       char *why) {
  if (tok[0] != '(') {
    return set_float(v, i, 0, tok, len, why) ? -1
           : set_float(v, i, 1, "0", 1, why);
  }
  const char *comma = memchr(tok, ',', len);
  if (!comma || tok[len - 1] != ')') {
    snprintf(why, WHY_MAX, "'%.*s' is not a complex value (re,im)",
             (int)(len > 40 ? 40 : len), tok);
    return -1;
  }
  const char *re = tok + 1, *im = comma + 1;
  while (*re == ' ') re++;
  while (*im == ' ') im++;
  size_t rl = (size_t)(comma - re), il = (size_t)(tok + len - 1 - im);
  while (rl && re[rl - 1] == ' ') rl--;
  while (il && im[il - 1] == ' ') il--;
  return set_float(v, i, 0, re, rl, why) || set_float(v, i, 1, im, il, why)
             ? -1 : 0;
}

static int set_int(shlo_value *v, int64_t i, const char *tok, size_t len,
                   char *why) {
  shlo_elem_type t = shlo_tensor_elem(v);
  char buf[80];
  if (len >= sizeof buf) goto bad;
  memcpy(buf, tok, len);
  buf[len] = 0;
  if (t == SHLO_I1) {
    if (!strcmp(buf, "true") || !strcmp(buf, "1")) shlo_tensor_set_i64(v, i, 1);
    else if (!strcmp(buf, "false") || !strcmp(buf, "0"))
      shlo_tensor_set_i64(v, i, 0);
    else goto bad;
    return 0;
  }
  int bits = shlo_elem_bits(t);
  char *end;
  errno = 0;
  if (shlo_elem_class_of(t) == SHLO_CLASS_UINT) {
    if (buf[0] == '-') goto bad;
    unsigned long long u = strtoull(buf, &end, 0);
    if (end == buf || *end || errno || (bits < 64 && u >> bits)) goto bad;
    shlo_tensor_set_i64(v, i, (int64_t)u);
    return 0;
  }
  long long s = strtoll(buf, &end, 0);
  if (end == buf || *end || errno) goto bad;
  if (bits < 64 && (s < -(1LL << (bits - 1)) || s >= (1LL << (bits - 1))))
    goto bad;
  shlo_tensor_set_i64(v, i, s);
  return 0;
bad:
  snprintf(why, WHY_MAX, "'%.*s' is not a %s value%s",
           (int)(len > 40 ? 40 : len), tok, shlo_elem_name(t),
           t == SHLO_I1 ? " (true, false, 1 or 0)" : " (or out of its range)");
  return -1;
}

/* The next value of a list: separators are commas, blanks and brackets;
 * a complex value is one "(re,im)" token.  False at the end. */
static bool next_token(const char **p, const char *end, const char **tok,
                       size_t *len) {
  const char *s = *p;
  while (s < end && (*s == ',' || *s == '[' || *s == ']' || isspace((unsigned char)*s)))
    s++;
  if (s == end) return false;
  const char *e = s;
  if (*s == '(') {
    while (e < end && *e != ')') e++;
    if (e < end) e++;
  } else {
    while (e < end && *e != ',' && *e != '[' && *e != ']' &&
           !isspace((unsigned char)*e))
      e++;
  }
  *tok = s;
  *len = (size_t)(e - s);
  *p = e;
  return true;
}

static int set_elem(shlo_value *v, int64_t i, const char *tok, size_t len,
                    char *why) {
  switch (shlo_elem_class_of(shlo_tensor_elem(v))) {
  case SHLO_CLASS_FLOAT: return set_float(v, i, -1, tok, len, why);
  case SHLO_CLASS_COMPLEX: return set_complex(v, i, tok, len, why);
  default: return set_int(v, i, tok, len, why);
  }
}

/* Fill v from the value list text: numel values, or one for all. */
static int fill_values(shlo_value *v, const char *text, char *why) {
  const char *p = text, *end = text + strlen(text), *tok;
  size_t len;
  int64_t n = shlo_tensor_numel(v), k = 0;
  while (next_token(&p, end, &tok, &len)) {
    if (k >= n && n != 0) {
      k++;
      continue; /* counted for the message */
    }
    if (n == 0) {
      k++;
      continue;
    }
    if (set_elem(v, k, tok, len, why)) return -1;
    k++;
  }
  if (k == 1 && n > 1) { /* one value fills the tensor */
    size_t es = shlo_elem_size(shlo_tensor_elem(v));
    char *d = shlo_tensor_data(v);
    for (int64_t i = 1; i < n; i++) memcpy(d + (size_t)i * es, d, es);
    return 0;
  }
  if (k != n) {
    snprintf(why, WHY_MAX, "the shape has %lld element%s and %lld value%s "
             "given", (long long)n, n == 1 ? "" : "s", (long long)k,
             k == 1 ? " is" : "s are");
    return -1;
  }
  return 0;
}

/* Fill v from a raw little-endian file, exactly its size. */
static int fill_raw(shlo_value *v, const char *path, char *why) {
  size_t len;
  unsigned char *b = read_input_file(path, &len, why);
  if (!b) return -1;
  size_t want = shlo_tensor_nbytes(v);
  int rc = 0;
  if (len != want) {
    snprintf(why, WHY_MAX, "%s has %zu bytes; the shape and type need %zu",
             path, len, want);
    rc = -1;
  } else {
    memcpy(shlo_tensor_data(v), b, len);
  }
  free(b);
  return rc;
}

/* One --input onto l. */
static int push_spec(vlist *l, const char *spec, char *why) {
  if (!strcmp(spec, "-")) return push_numpy(l, spec, "-", why);
  if (spec[0] == '@') return push_numpy(l, spec, spec + 1, why);
  const char *eq = strchr(spec, '=');
  if (!eq) {
    snprintf(why, WHY_MAX, "expected SHAPExTYPE=VALUES, SHAPExTYPE=@FILE.bin,"
             " @FILE.npy, @FILE.npz or -");
    return -1;
  }
  shlo_value *v = shape_type_tensor(spec, (size_t)(eq - spec), why);
  if (!v) return -1;
  int rc = eq[1] == '@' ? fill_raw(v, eq + 2, why) : fill_values(v, eq + 1, why);
  char origin[128];
  origin_of(spec, origin, sizeof origin);
  if (rc) shlo_value_release(v);
  else if (!vlist_push(l, v, origin, false)) {
    snprintf(why, WHY_MAX, "out of memory");
    rc = -1;
  }
  return rc;
}

/* --args TEXT or --args=@FILE onto l. */
static int push_args(vlist *l, const char *cmd, const char *args) {
  size_t len;
  char *file_text = NULL;
  const char *text = args;
  if (args[0] == '@') {
    if (!(file_text = cli_read_file(args + 1, &len))) return -1;
    text = file_text;
  }
  shlo_value **vals = NULL;
  int n = 0, rc = 0;
  shlo_diag d;
  shlo_diag_clear(&d);
  if (shlo_parse_values(text, strlen(text), &vals, &n, &d)) {
    fprintf(stderr, "%s: --args: ", cmd);
    cli_print_diag(&d);
    rc = -1;
  }
  for (int i = 0; i < n; i++) {
    char origin[32];
    snprintf(origin, sizeof origin, "--args value %d", i);
    if (!rc && !vlist_push(l, vals[i], origin, false)) rc = -2;
    else if (rc) shlo_value_release(vals[i]);
  }
  if (rc == -2) fprintf(stderr, "%s: out of memory\n", cmd);
  free(vals);
  free(file_text);
  return rc;
}

/* ---- the signature ------------------------------------------------------ */

/* Whether v fits type t (a dynamic dimension takes any extent). */
static bool fits(const shlo_value *v, const shlo_type *t) {
  if (t->kind != SHLO_TYPE_TENSOR) return true; /* the engine judges */
  if (shlo_value_kind(v) != SHLO_TYPE_TENSOR) return false;
  if (shlo_tensor_elem(v) != t->elem) return false;
  if (t->rank < 0) return true;
  if (shlo_tensor_rank(v) != t->rank) return false;
  for (int d = 0; d < t->rank; d++)
    if (t->dims[d] != SHLO_DYN && t->dims[d] != shlo_tensor_dims(v)[d])
      return false;
  return true;
}

static void value_type_text(const shlo_value *v, char *buf, size_t cap) {
  if (shlo_value_kind(v) != SHLO_TYPE_TENSOR) {
    snprintf(buf, cap, "a %s", shlo_value_kind(v) == SHLO_TYPE_TUPLE
                                   ? "tuple" : "token");
    return;
  }
  shlo_type t = {.kind = SHLO_TYPE_TENSOR, .elem = shlo_tensor_elem(v),
                 .rank = shlo_tensor_rank(v)};
  memcpy(t.dims, shlo_tensor_dims(v), sizeof(int64_t) * (size_t)t.rank);
  shlo_type_format(&t, buf, cap);
}

/* "tensor<2xf32>, tensor<f32>" of f's non-token arguments. */
static void signature_text(const shlo_func *f, char *buf, size_t cap) {
  size_t n = 0;
  buf[0] = 0;
  for (int i = 0; i < f->n_args && n + 80 < cap; i++) {
    if (f->arg_types[i]->kind == SHLO_TYPE_TOKEN) continue;
    if (n) n += (size_t)snprintf(buf + n, cap - n, ", ");
    char t[256];
    shlo_type_format(f->arg_types[i], t, sizeof t);
    n += (size_t)snprintf(buf + n, cap - n, "%s", t);
  }
}

static int check_against(const char *cmd, const shlo_func *f, int procs,
                         vlist *l) {
  const shlo_type *want[256];
  int per = 0;
  for (int i = 0; i < f->n_args && per < 256; i++)
    if (f->arg_types[i]->kind != SHLO_TYPE_TOKEN) want[per++] = f->arg_types[i];
  if (l->n != per && !(procs > 1 && l->n == per * procs)) {
    char sig[1024];
    signature_text(f, sig, sizeof sig);
    fprintf(stderr, "%s: @%s takes %d argument%s%s%s%s%s; %d given\n", cmd,
            f->name, per, per == 1 ? "" : "s", per ? " (" : "", sig,
            per ? ")" : "", procs > 1 ? " per process" : "", l->n);
    return 1;
  }
  for (int i = 0; i < l->n; i++) {
    const shlo_type *t = want[per ? i % per : 0];
    if (l->raw_view[i] && t->kind == SHLO_TYPE_TENSOR)
      (void)npy_retype(&l->v[i], t->elem); /* fails: reported just below */
    if (fits(l->v[i], t)) continue;
    char took[256], gave[256];
    shlo_type_format(t, took, sizeof took);
    value_type_text(l->v[i], gave, sizeof gave);
    fprintf(stderr, "%s: argument %d of @%s is %s; %s gives %s\n", cmd,
            per ? i % per : 0, f->name, took, l->origin[i], gave);
    return 1;
  }
  return 0;
}

int cli_inputs_load(const char *cmd, const cli_inputs *in, const shlo_func *f,
                    int procs, shlo_value ***args, int *n) {
  vlist l = {0};
  *args = NULL;
  *n = 0;
  if (in->args && push_args(&l, cmd, in->args)) goto fail;
  for (int k = 0; k < in->n; k++) {
    char why[WHY_MAX], origin[128];
    if (!push_spec(&l, in->specs[k], why)) continue;
    origin_of(in->specs[k], origin, sizeof origin);
    fprintf(stderr, "%s: %s: %s\n", cmd, origin, why);
    goto fail;
  }
  if (f && check_against(cmd, f, procs, &l)) goto fail;
  *args = l.v;
  *n = l.n;
  for (int i = 0; i < l.n; i++) free(l.origin[i]);
  free(l.origin);
  free(l.raw_view);
  return 0;
fail:
  vlist_free(&l);
  return 1;
}

/* ---- the entry function ------------------------------------------------- */

/* Edit distance (insert, delete, substitute) of a and b, both short. */
static int edit_distance(const char *a, const char *b) {
  size_t n = strlen(a), m = strlen(b);
  if (n > 64 || m > 64) return 1 << 20;
  int row[65];
  for (size_t j = 0; j <= m; j++) row[j] = (int)j;
  for (size_t i = 1; i <= n; i++) {
    int diag = row[0];
    row[0] = (int)i;
    for (size_t j = 1; j <= m; j++) {
      int up = row[j];
      int best = diag + (a[i - 1] != b[j - 1]);
      if (up + 1 < best) best = up + 1;
      if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
      row[j] = best;
      diag = up;
    }
  }
  return row[m];
}

/* The file m was read from, for messages. */
static const char *module_file(const shlo_module *m) {
  const char *f = shlo_module_filename(m);
  return f ? f : "the module";
}

/* "@a, @b, @c" (the first 20). */
static void list_funcs(const shlo_module *m, char *buf, size_t cap) {
  size_t n = 0;
  buf[0] = 0;
  int nf = shlo_module_num_funcs(m);
  for (int i = 0; i < nf && i < 20 && n + 80 < cap; i++)
    n += (size_t)snprintf(buf + n, cap - n, "%s@%s", i ? ", " : "",
                          shlo_module_func(m, i)->name);
  if (nf > 20) snprintf(buf + n, cap - n, ", ...");
}

const shlo_func *cli_find_entry(const char *cmd, const shlo_module *m,
                                const char *name) {
  char names[2048];
  if (!name) {
    const shlo_func *f = cli_default_entry(m);
    if (f) return f;
    list_funcs(m, names, sizeof names);
    fprintf(stderr, "%s: %s has no @main%s%s; choose one with --entry NAME\n",
            cmd, module_file(m),
            shlo_module_num_funcs(m) ? " and defines " : " and no function",
            names);
    return NULL;
  }
  if (name[0] == '@') name++;
  const char *best = NULL;
  int best_d = 1 << 20;
  for (int i = 0; i < shlo_module_num_funcs(m); i++) {
    const shlo_func *f = shlo_module_func(m, i);
    if (!strcmp(f->name, name)) return f;
    int d = edit_distance(name, f->name);
    if (d < best_d) best_d = d, best = f->name;
  }
  list_funcs(m, names, sizeof names);
  int limit = (int)strlen(name) / 3 + 1;
  char hint[300] = "";
  if (best && best_d <= limit)
    snprintf(hint, sizeof hint, " (did you mean @%s?)", best);
  fprintf(stderr, "%s: --entry: no function @%s in %s%s; it defines %s\n",
          cmd, name, module_file(m), hint,
          shlo_module_num_funcs(m) ? names : "no function");
  return NULL;
}
