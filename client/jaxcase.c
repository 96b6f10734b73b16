/* SPDX-License-Identifier: Apache-2.0 */
/* shlo test on JAX export cases (jaxcase.h): a JSON file
 * {"program", "inputs", "expected_outputs", ...} as
 * ../shared/conformance/jax-export/ holds them, the tensors in the
 * server's JSON form.  The program runs here or at a server; its outputs
 * are compared with the tolerance rules of that corpus's README:
 *  - integers and booleans exactly;
 *  - floats and complex numbers within 1e-4 of the expected tensor's
 *    largest magnitude (NaN matches NaN);
 *  - a matrix that is unique only up to a unit factor per column
 *    (eigenvectors, singular vectors, the Q of a QR, Schur vectors) or
 *    per row (V^H of an SVD, the R that goes with a Q) matches when some
 *    factor of modulus 1 per column, or per row, makes it match.  The
 *    runner tries the plain comparison first, then columns, then rows:
 *    a tensor that matches plainly also matches up to factors, so the
 *    looser rules never fail a right answer. */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "jaxcase.h"
#include "shlo/engine.h"

#ifdef SHLO_HAVE_CLIENT
#include <cjson/cJSON.h>

#include "shlo/client.h"
#include "shlo/protocol.h"

#define JAX_TOLERANCE 1e-4

/* ---- comparison ---- */

/* Element i of a float or complex tensor as a complex double. */
static double complex elem_at(const shlo_value *v, int64_t i) {
  double re = 0, im = 0;
  shlo_tensor_get_c128(v, i, &re, &im);
  return CMPLX(re, im);
}

static bool is_nan_c(double complex z) {
  return isnan(creal(z)) || isnan(cimag(z));
}

static bool close_to(double complex got, double complex want, double tol) {
  if (is_nan_c(want) || is_nan_c(got)) return is_nan_c(want) && is_nan_c(got);
  return fabs(creal(got) - creal(want)) <= tol &&
         fabs(cimag(got) - cimag(want)) <= tol;
}

/* The geometry of a comparison: `lines` vectors (columns or rows) of
 * `len` elements in each of `count` matrices; element k of line l of
 * matrix b is at b * stride_b + l * stride_l + k * stride_k. */
typedef struct lines {
  int64_t count, lines, len, stride_b, stride_l, stride_k;
} lines;

/* Orthonormalize the n vectors of len elements at v (in place, modified
 * Gram-Schmidt); returns how many are independent (kept first). */
static int orthonormalize(double complex *v, int n, int64_t len) {
  int kept = 0;
  for (int i = 0; i < n; i++) {
    double complex *x = v + (int64_t)i * len;
    for (int j = 0; j < kept; j++) {
      double complex *q = v + (int64_t)j * len, dot = 0;
      for (int64_t k = 0; k < len; k++) dot += conj(q[k]) * x[k];
      for (int64_t k = 0; k < len; k++) x[k] -= dot * q[k];
    }
    double norm = 0;
    for (int64_t k = 0; k < len; k++) norm += creal(x[k] * conj(x[k]));
    norm = sqrt(norm);
    if (!(norm > 1e-12)) continue;
    double complex *dst = v + (int64_t)kept * len;
    for (int64_t k = 0; k < len; k++) dst[k] = x[k] / norm;
    kept++;
  }
  return kept;
}

/* Whether the lines `which[0..n)` of matrix b span the same space in got
 * as in want: their orthogonal projectors agree within tol. */
static bool same_span(const shlo_value *got, const shlo_value *want,
                      const lines *g, int64_t b, const int64_t *which, int n,
                      double tol) {
  int64_t len = g->len;
  double complex *gv = malloc((size_t)(2 * n * len) * sizeof *gv);
  if (!gv) return false;
  double complex *wv = gv + n * len;
  for (int i = 0; i < n; i++)
    for (int64_t k = 0; k < len; k++) {
      int64_t at = b * g->stride_b + which[i] * g->stride_l + k * g->stride_k;
      gv[i * len + k] = elem_at(got, at);
      wv[i * len + k] = elem_at(want, at);
    }
  int rg = orthonormalize(gv, n, len), rw = orthonormalize(wv, n, len);
  bool ok = rg == rw;
  for (int64_t r = 0; ok && r < len; r++)
    for (int64_t c = 0; ok && c < len; c++) {
      double complex pg = 0, pw = 0;
      for (int i = 0; i < rg; i++) {
        pg += gv[i * len + r] * conj(gv[i * len + c]);
        pw += wv[i * len + r] * conj(wv[i * len + c]);
      }
      ok = close_to(pg, pw, tol);
    }
  free(gv);
  return ok;
}

/* Whether got matches want line by line up to a unit factor per line;
 * with `cluster` (per matrix and line, the first line of its cluster),
 * the lines of a cluster of more than one up to a unitary factor: their
 * spans must agree. */
static bool match_lines(const shlo_value *got, const shlo_value *want,
                        const lines *g, const int64_t *cluster, double tol) {
  int64_t *which = malloc((size_t)(g->lines > 0 ? g->lines : 1) *
                          sizeof *which);
  if (!which) return false;
  bool ok = true;
  for (int64_t b = 0; ok && b < g->count; b++)
    for (int64_t l = 0; ok && l < g->lines; l++) {
      int n = 0;
      for (int64_t m = 0; cluster && m < g->lines; m++)
        if (cluster[b * g->lines + m] == cluster[b * g->lines + l])
          which[n++] = m;
      if (n > 1) {
        /* the cluster once, at its first line */
        ok = which[0] != l || same_span(got, want, g, b, which, n, tol);
        continue;
      }
      int64_t base = b * g->stride_b + l * g->stride_l;
      double complex dot = 0;
      for (int64_t k = 0; k < g->len; k++) {
        int64_t i = base + k * g->stride_k;
        dot += conj(elem_at(got, i)) * elem_at(want, i);
      }
      /* the factor u minimizing |u got - want|: the phase of <got, want> */
      double complex u = cabs(dot) > 0 ? dot / cabs(dot) : 1;
      for (int64_t k = 0; ok && k < g->len; k++) {
        int64_t i = base + k * g->stride_k;
        ok = close_to(u * elem_at(got, i), elem_at(want, i), tol);
      }
    }
  free(which);
  return ok;
}

/* Clusters of equal values (within 1e-4 of the largest) among vals[i *
 * stride] for each of `count` matrices of n values (matrix b's first at
 * b * bstride): cluster[b * n + i] is the first index of i's cluster.
 * The values are eigenvalues or singular values; vectors that go with a
 * repeated one are unique only up to a unitary factor of the cluster. */
static int64_t *clusters_of(const shlo_value *vals, int64_t count, int64_t n,
                            int64_t bstride, int64_t stride) {
  int64_t *cl = malloc((size_t)(count * n > 0 ? count * n : 1) * sizeof *cl);
  if (!cl) return NULL;
  for (int64_t b = 0; b < count; b++) {
    double largest = 0;
    for (int64_t i = 0; i < n; i++) {
      double a = cabs(elem_at(vals, b * bstride + i * stride));
      if (isfinite(a) && a > largest) largest = a;
    }
    double tol = JAX_TOLERANCE * (largest > 0 ? largest : 1);
    for (int64_t i = 0; i < n; i++) {
      cl[b * n + i] = i;
      double complex vi = elem_at(vals, b * bstride + i * stride);
      for (int64_t j = 0; j < i; j++)
        if (close_to(elem_at(vals, b * bstride + j * stride), vi, tol)) {
          cl[b * n + i] = cl[b * n + j];
          break;
        }
    }
  }
  return cl;
}

/* Whether expected output v can give the values that go with n lines of
 * `count` matrices of rank `rank` (batch dims bdims): a vector of n per
 * matrix (eigenvalues, singular values), or the diagonal of an n x n
 * matrix (a Schur form).  Its clusters, or NULL. */
static int64_t *companion_clusters(const shlo_value *v, int rank,
                                   const int64_t *bdims, int64_t count,
                                   int64_t n) {
  int vr = shlo_tensor_rank(v);
  const int64_t *vd = shlo_tensor_dims(v);
  shlo_elem_type et = shlo_tensor_elem(v);
  if (et != SHLO_F32 && et != SHLO_F64 && et != SHLO_C64 && et != SHLO_C128)
    return NULL;
  int nb = rank - 2;
  bool vec = vr == nb + 1 && vd[nb] == n;
  bool square = vr == nb + 2 && vd[nb] == n && vd[nb + 1] == n;
  if (!vec && !square) return NULL;
  for (int d = 0; d < nb; d++)
    if (vd[d] != bdims[d]) return NULL;
  return vec ? clusters_of(v, count, n, n, 1)
             : clusters_of(v, count, n, n * n, n + 1);
}

/* A matrix output that does not match plainly: up to a unit factor per
 * column or per row, or, where another expected output gives the values
 * of its columns or rows, up to a unitary factor per cluster of equal
 * values. */
static bool match_up_to_factors(const shlo_value *got, const shlo_value *want,
                                shlo_value *const *expected, int n_expected,
                                double tol) {
  int rank = shlo_tensor_rank(want);
  const int64_t *dims = shlo_tensor_dims(want);
  int64_t r = dims[rank - 2], c = dims[rank - 1];
  int64_t count = r * c != 0 ? shlo_tensor_numel(want) / (r * c) : 0;
  lines cols = {count, c, r, r * c, 1, c};
  lines rows = {count, r, c, r * c, c, 1};
  if (match_lines(got, want, &cols, NULL, tol) ||
      match_lines(got, want, &rows, NULL, tol))
    return true;
  for (int e = 0; e < n_expected; e++) {
    if (expected[e] == want) continue;
    for (int side = 0; side < 2; side++) {
      const lines *g = side ? &rows : &cols;
      int64_t *cl = companion_clusters(expected[e], rank, dims, count,
                                       g->lines);
      bool ok = cl && match_lines(got, want, g, cl, tol);
      free(cl);
      if (ok) return true;
    }
  }
  return false;
}

static bool is_float_or_complex(shlo_elem_type t) {
  return t == SHLO_F32 || t == SHLO_F64 || t == SHLO_C64 || t == SHLO_C128;
}

/* Compare output k; false after writing why into msg. */
static bool compare_output(int k, const shlo_value *got,
                           shlo_value *const *expected, int n_expected,
                           char *msg, size_t cap) {
  const shlo_value *want = expected[k];
  shlo_elem_type et = shlo_tensor_elem(want);
  int rank = shlo_tensor_rank(want);
  const int64_t *dims = shlo_tensor_dims(want);
  int64_t numel = shlo_tensor_numel(want);
  bool same_shape = shlo_value_kind(got) == SHLO_TYPE_TENSOR &&
                    shlo_tensor_elem(got) == et &&
                    shlo_tensor_rank(got) == rank;
  for (int d = 0; same_shape && d < rank; d++)
    same_shape = shlo_tensor_dims(got)[d] == dims[d];
  if (!same_shape) {
    snprintf(msg, cap, "output %d: got %s of %lld elements, expected %s of "
             "%lld", k, shlo_elem_name(shlo_tensor_elem(got)),
             (long long)shlo_tensor_numel(got), shlo_elem_name(et),
             (long long)numel);
    return false;
  }
  if (!is_float_or_complex(et)) {
    if (!memcmp(shlo_tensor_data_const(got), shlo_tensor_data_const(want),
                shlo_tensor_nbytes(want)))
      return true;
    snprintf(msg, cap, "output %d: integers differ", k);
    return false;
  }
  double largest = 0;
  for (int64_t i = 0; i < numel; i++) {
    double complex w = elem_at(want, i);
    if (!is_nan_c(w) && isfinite(cabs(w)) && cabs(w) > largest)
      largest = cabs(w);
  }
  double tol = JAX_TOLERANCE * (largest > 0 ? largest : 1);
  int64_t bad = -1;
  for (int64_t i = 0; i < numel && bad < 0; i++)
    if (!close_to(elem_at(got, i), elem_at(want, i), tol)) bad = i;
  if (bad < 0) return true;
  if (rank >= 2 &&
      match_up_to_factors(got, want, expected, n_expected, tol))
    return true;
  double complex g = elem_at(got, bad), w = elem_at(want, bad);
  snprintf(msg, cap, "output %d element %lld: got (%.9g, %.9g), expected "
           "(%.9g, %.9g), tolerance %.3g (also compared up to unit factors "
           "per column and per row)", k, (long long)bad, creal(g), cimag(g),
           creal(w), cimag(w), tol);
  return false;
}

/* ---- the case file ---- */

typedef struct jax_case {
  cJSON *root;
  const char *program;
  shlo_value **inputs, **expected;
  int n_inputs, n_expected;
} jax_case;

static void case_free(jax_case *c) {
  for (int i = 0; i < c->n_inputs; i++) shlo_value_unref(c->inputs[i]);
  for (int i = 0; i < c->n_expected; i++) shlo_value_unref(c->expected[i]);
  free(c->inputs);
  free(c->expected);
  cJSON_Delete(c->root);
}

static int decode_list(const cJSON *arr, const char *name, shlo_value ***out,
                       int *n, char *msg, size_t cap) {
  if (!cJSON_IsArray(arr)) {
    snprintf(msg, cap, "\"%s\" must be an array of tensors", name);
    return -1;
  }
  int count = cJSON_GetArraySize(arr);
  *out = calloc((size_t)(count > 0 ? count : 1), sizeof **out);
  if (!*out) {
    snprintf(msg, cap, "out of memory");
    return -1;
  }
  shlo_proto_limits lim = {0}; /* a local file: no bounds */
  for (int i = 0; i < count; i++) {
    char path[64];
    snprintf(path, sizeof path, "%s[%d]", name, i);
    shlo_proto_error err;
    if (shlo_proto_tensor_decode(cJSON_GetArrayItem(arr, i), NULL, &lim,
                                 path, &(*out)[i], &err)) {
      snprintf(msg, cap, "%s", err.message);
      return -1;
    }
    *n = i + 1;
  }
  return 0;
}

static int case_read(const char *text, size_t len, jax_case *c, char *msg,
                     size_t cap) {
  memset(c, 0, sizeof *c);
  c->root = shlo_proto_json_parse(text, len, NULL);
  if (!c->root || !cJSON_IsObject(c->root)) {
    snprintf(msg, cap, "not a JSON object");
    return -1;
  }
  const cJSON *prog = cJSON_GetObjectItemCaseSensitive(c->root, "program");
  if (!cJSON_IsString(prog)) {
    snprintf(msg, cap, "\"program\" must be a string");
    return -1;
  }
  c->program = prog->valuestring;
  if (decode_list(cJSON_GetObjectItemCaseSensitive(c->root, "inputs"),
                  "inputs", &c->inputs, &c->n_inputs, msg, cap) ||
      decode_list(cJSON_GetObjectItemCaseSensitive(c->root,
                                                   "expected_outputs"),
                  "expected_outputs", &c->expected, &c->n_expected, msg, cap))
    return -1;
  return 0;
}

/* ---- running ---- */

static int run_local(const char *file, const jax_case *c, double timeout,
                     shlo_value ***outs, int *n, char *msg, size_t cap) {
  shlo_module *m = NULL;
  shlo_executable *e = NULL;
  shlo_diag d;
  shlo_diag_clear(&d);
  int rc = 'F';
  if (shlo_parse_module(c->program, strlen(c->program), file, &m, &d)) {
    shlo_diag_format(&d, msg, cap);
    goto done;
  }
  shlo_compile_opts co = {0};
  shlo_status st = shlo_compile(m, &co, &e, &d);
  if (!st) {
    shlo_exec_opts opts = {.timeout_s = timeout};
    st = shlo_execute(e, &opts, c->inputs, c->n_inputs, outs, n, &d);
  }
  if (st) {
    shlo_diag_format(&d, msg, cap);
    rc = st == SHLO_EUNSUPPORTED ? 'S' : 'F';
    goto done;
  }
  rc = 0;
done:
  shlo_executable_free(e);
  shlo_module_free(m);
  return rc;
}

static int run_remote(struct shlo_client *server, const jax_case *c,
                      double timeout, shlo_value ***outs, int *n, char *msg,
                      size_t cap) {
  shlo_client_request rq = {.program = c->program,
                            .program_len = strlen(c->program),
                            .inputs = c->inputs, .n_inputs = c->n_inputs,
                            .timeout_ms = timeout * 1000};
  shlo_client_error err;
  if (!shlo_client_execute(server, &rq, outs, n, &err)) return 0;
  snprintf(msg, cap, "error (%s, HTTP %d): %s", err.kind, err.status,
           err.message);
  return err.engine_status == SHLO_EUNSUPPORTED ? 'S' : 'F';
}

int jaxcase_run(const char *file, const char *text, size_t len,
                double timeout, struct shlo_client *server, char *msg,
                size_t cap) {
  jax_case c;
  msg[0] = 0;
  if (case_read(text, len, &c, msg, cap)) {
    case_free(&c);
    return 'F';
  }
  shlo_value **outs = NULL;
  int n = 0;
  int rc = server ? run_remote(server, &c, timeout, &outs, &n, msg, cap)
                  : run_local(file, &c, timeout, &outs, &n, msg, cap);
  if (!rc) {
    rc = 'P';
    if (n != c.n_expected) {
      snprintf(msg, cap, "got %d outputs, expected %d", n, c.n_expected);
      rc = 'F';
    }
    for (int i = 0; i < n && rc == 'P'; i++)
      if (!compare_output(i, outs[i], c.expected, c.n_expected, msg, cap))
        rc = 'F';
  }
  for (int i = 0; i < n; i++) shlo_value_unref(outs[i]);
  free(outs);
  case_free(&c);
  return rc;
}

#else

int jaxcase_run(const char *file, const char *text, size_t len,
                double timeout, struct shlo_client *server, char *msg,
                size_t cap) {
  (void)file, (void)text, (void)len, (void)timeout, (void)server;
  snprintf(msg, cap, "JSON cases need a build with libshlo-client (cJSON)");
  return 'S';
}

#endif
