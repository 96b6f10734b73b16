/* SPDX-License-Identifier: Apache-2.0 */
/* The fast paths of the JSON number output against the slow ones they
 * replace: floats (engine/src/core/elemfmt.c: shortest "%.<p>g" that reads
 * back, p from 6 for single and 15 for double), cJSON-style numbers
 * (protocol/src/json_write.c: "%1.15g", else "%1.17g"), and
 * shlo_proto_exec_resp_build against a cJSON tree of the same document,
 * built here from printf-made numbers. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "core/elemfmt.h"
#include "core/value.h"
#include "json_write.h"
#include "shlo/protocol.h"

static const double pow10_tab[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7,
                                   1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14,
                                   1e15};

static int bad, n_checks;

/* The shortest "%.<p>g" that reads back to x in type t, p from 15 for
 * f64, 6 for f32 and 1 for narrower formats. */
static void ref_float_t(char tmp[64], double x, shlo_elem_type t) {
  if (isnan(x)) {
    strcpy(tmp, "\"NaN\"");
    return;
  }
  if (isinf(x)) {
    strcpy(tmp, x > 0 ? "\"Infinity\"" : "\"-Infinity\"");
    return;
  }
  shlo_value *v = shlo_tensor_new(t, 0, NULL);
  int prec = t == SHLO_F64 ? 15 : t == SHLO_F32 ? 6 : 1;
  for (; prec <= 17; prec++) {
    snprintf(tmp, 64, "%.*g", prec, x);
    shlo_tensor_set_f64(v, 0, strtod(tmp, NULL));
    if (shlo_tensor_get_f64(v, 0) == x) break;
  }
  shlo_value_unref(v);
  if (!strpbrk(tmp, ".eEn")) strcat(tmp, ".0");
}

static void ref_float(char tmp[64], double x, bool single) {
  ref_float_t(tmp, x, single ? SHLO_F32 : SHLO_F64);
}

static void check(double x, bool single) {
  if (single) x = (float)x;
  char ref[64];
  ref_float(ref, x, single);
  strbuf b = {0};
  shlo__sb_put_float(&b, x, single ? SHLO_F32 : SHLO_F64, SHLO_ELEMFMT_JSON);
  n_checks++;
  if (strcmp(ref, b.data) && bad++ < 20)
    printf("FAIL float %s %.17g: printf %s, fast %s\n", single ? "f32" : "f64",
           x, ref, b.data);
  shlo__sb_free(&b);
  if (single) return;
  cJSON *c = cJSON_CreateNumber(x);
  char *r = cJSON_PrintUnformatted(c);
  shlo__json_num(&b, x);
  if (strcmp(r, b.data) && bad++ < 20)
    printf("FAIL number %.17g: cJSON %s, fast %s\n", x, r, b.data);
  shlo__sb_free(&b);
  free(r);
  cJSON_Delete(c);
}

static uint64_t rng = 88172645463325252u;
static uint64_t next(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

/* One element as the reference spells it: printf for integers, ref_float
 * for floats, [re,im] for complex. */
static void ref_elem(char *out, size_t cap, const shlo_value *v, int64_t i) {
  char re[64], im[64];
  switch (shlo_elem_class_of(v->elem)) {
  case SHLO_CLASS_BOOL:
    snprintf(out, cap, "%s", shlo_tensor_get_i64(v, i) ? "true" : "false");
    break;
  case SHLO_CLASS_SINT:
    snprintf(out, cap, "%lld", (long long)shlo_tensor_get_i64(v, i));
    break;
  case SHLO_CLASS_UINT:
    snprintf(out, cap, "%llu", (unsigned long long)shlo_tensor_get_i64(v, i));
    break;
  case SHLO_CLASS_FLOAT:
    ref_float_t(out, shlo_tensor_get_f64(v, i), v->elem);
    break;
  case SHLO_CLASS_COMPLEX: {
    double r, m;
    shlo_tensor_get_c128(v, i, &r, &m);
    ref_float(re, r, v->elem == SHLO_C64);
    ref_float(im, m, v->elem == SHLO_C64);
    snprintf(out, cap, "[%s,%s]", re, im);
    break;
  }
  }
}

/* A value as a cJSON tree: what the tree-built responses were. */
static cJSON *tree_value(const shlo_value *v, bool b64) {
  cJSON *o = cJSON_CreateObject();
  if (v->kind == SHLO_TYPE_TOKEN) {
    cJSON_AddTrueToObject(o, "token");
    return o;
  }
  if (v->kind == SHLO_TYPE_TUPLE) {
    cJSON *a = cJSON_AddArrayToObject(o, "tuple");
    for (int i = 0; i < v->n_elems; i++)
      cJSON_AddItemToArray(a, tree_value(v->elems[i], b64));
    return o;
  }
  cJSON_AddStringToObject(o, "dtype", shlo_elem_name(v->elem));
  cJSON *shape = cJSON_AddArrayToObject(o, "shape");
  for (int i = 0; i < v->rank; i++)
    cJSON_AddItemToArray(shape, cJSON_CreateNumber((double)v->dims[i]));
  if (b64) {
    char *text = shlo_proto_b64_encode(v->data, v->nbytes);
    cJSON_AddStringToObject(o, "b64", text);
    free(text);
    return o;
  }
  char *data = malloc((size_t)v->numel * 160 + 3), *p = data;
  *p++ = '[';
  for (int64_t i = 0; i < v->numel; i++) {
    if (i) *p++ = ',';
    ref_elem(p, 160, v, i);
    p += strlen(p);
  }
  strcpy(p, "]");
  cJSON_AddItemToObject(o, "data", cJSON_CreateRaw(data));
  free(data);
  return o;
}

/* The old shlo_proto_exec_resp_build: a cJSON tree, printed. */
static char *tree_build(shlo_value *const *outs, int n_outs, int n_procs,
                        const char *id, bool cached, double cms, double ems,
                        bool b64) {
  cJSON *o = cJSON_CreateObject();
  cJSON *a = cJSON_AddArrayToObject(o, "outputs");
  for (int p = 0; p < (n_procs > 1 ? n_procs : 1); p++) {
    cJSON *list = a;
    if (n_procs > 1) {
      list = cJSON_CreateArray();
      cJSON_AddItemToArray(a, list);
    }
    for (int i = 0; i < n_outs; i++)
      cJSON_AddItemToArray(list, tree_value(outs[p * n_outs + i], b64));
  }
  cJSON_AddStringToObject(o, "module", id);
  cJSON_AddBoolToObject(o, "cached", cached);
  cJSON *tm = cJSON_AddObjectToObject(o, "timing");
  cJSON_AddNumberToObject(tm, "compile_ms", round(cms * 1000) / 1000);
  cJSON_AddNumberToObject(tm, "execute_ms", round(ems * 1000) / 1000);
  char *s = cJSON_PrintUnformatted(o);
  cJSON_Delete(o);
  return s;
}

static void check_responses(void) {
  const shlo_elem_type ts[] = {SHLO_F32, SHLO_F64, SHLO_SI32, SHLO_SI64,
                               SHLO_UI64, SHLO_I1, SHLO_C64, SHLO_BF16,
                               SHLO_SI8, SHLO_UI8};
  for (size_t t = 0; t < sizeof ts / sizeof *ts; t++)
    for (int b64 = 0; b64 < 2; b64++) {
      int64_t dims[2] = {2, 3};
      shlo_value *v = shlo_tensor_new(ts[t], 2, dims);
      shlo_elem_class cls = shlo_elem_class_of(ts[t]);
      for (int i = 0; i < 6; i++) {
        if (cls == SHLO_CLASS_FLOAT || cls == SHLO_CLASS_COMPLEX)
          shlo_tensor_set_f64(v, i, i == 3 ? NAN : (i - 2) * 0.37);
        else
          shlo_tensor_set_i64(v, i, i == 5 ? -1 : i * 1000003);
      }
      shlo_value *s0 = shlo_tensor_new(ts[t], 0, NULL);
      shlo_value *el[2] = {shlo_value_ref(v), shlo_token_new()};
      shlo_value *tup = shlo_tuple_new(2, el);
      shlo_value *outs[6] = {v, s0, tup, v, s0, tup};
      for (int np = 1; np <= 2; np++) {
        char *a = tree_build(outs, 3, np, "sha256:a\"b\n", b64, 12.3456,
                             0.0004 * np, b64);
        char *c = shlo_proto_exec_resp_build(outs, 3, np, "sha256:a\"b\n",
                                             b64, 12.3456, 0.0004 * np, b64);
        n_checks++;
        if (strcmp(a, c) && bad++ < 20)
          printf("FAIL response:\n  tree   %s\n  direct %s\n", a, c);
        free(a);
        free(c);
      }
      shlo_value_unref(v);
      shlo_value_unref(s0);
      shlo_value_unref(tup);
    }
}

int main(void) {
  for (int i = 0; i < 400000; i++) {
    uint64_t r = next();
    double x;
    switch (i % 6) {
    case 0: /* short decimals, the fast path */
      x = (double)(int64_t)(r % 2000001) / pow10_tab[next() % 10] *
          ((r >> 40) & 1 ? -1 : 1);
      break;
    case 1: x = (double)(r % 100000000000000000u) / pow10_tab[next() % 16]; break;
    case 2: memcpy(&x, &r, sizeof x); break; /* any bit pattern */
    case 3: x = ldexp((double)(r % 1000000), (int)(next() % 60) - 40); break;
    case 4: x = round((double)(r % 100000000) / 1e6 * 1000) / 1000; break;
    default: x = (double)(r % 4096) / 1024.0 - 2.0;
    }
    check(x, true);
    check(x, false);
  }
  const double special[] = {0.0, 1e-4, 9.9999e-5, 123456, 1234567, 999999,
                            1e15, 1e15 - 1, 2147483647.0, 2147483648.0,
                            0.75, 2.25, 0.1, 0.3, 1e300, 5e-324, INFINITY,
                            NAN};
  for (size_t i = 0; i < sizeof special / sizeof *special; i++)
    for (int sign = 1; sign >= -1; sign -= 2) {
      check(sign * special[i], true);
      check(sign * special[i], false);
    }
  check_responses();
  printf("%d checks, %d failures\n", n_checks, bad);
  return bad != 0;
}
