/* The fast paths of protocol.c's number output against the slow ones they
 * replace: floats (shortest "%.<p>g" that reads back, p from 6 for single
 * and 15 for double), cJSON-style numbers ("%1.15g", else "%1.17g"), and
 * shlo_proto_exec_resp_build against the cJSON tree it used to print.
 * Includes protocol.c to reach its static functions. */
#include "../../protocol/src/protocol.c"

static int bad, n_checks;

static void ref_float(char tmp[64], double x, bool single) {
  if (isnan(x)) {
    strcpy(tmp, "\"NaN\"");
    return;
  }
  if (isinf(x)) {
    strcpy(tmp, x > 0 ? "\"Infinity\"" : "\"-Infinity\"");
    return;
  }
  for (int prec = single ? 6 : 15; prec <= 17; prec++) {
    snprintf(tmp, 64, "%.*g", prec, x);
    double y = strtod(tmp, NULL);
    if (single ? (float)y == (float)x : y == x) break;
  }
  if (!strpbrk(tmp, ".eEn")) strcat(tmp, ".0");
}

static void check(double x, bool single) {
  if (single) x = (float)x;
  char ref[64];
  ref_float(ref, x, single);
  sbuf b;
  sbuf_init(&b);
  put_float(&b, x, single);
  n_checks++;
  if (strcmp(ref, b.p) && bad++ < 20)
    printf("FAIL float %s %.17g: printf %s, fast %s\n", single ? "f32" : "f64",
           x, ref, b.p);
  sbuf_free(&b);
  if (single) return;
  cJSON *c = cJSON_CreateNumber(x);
  char *r = cJSON_PrintUnformatted(c);
  sbuf_init(&b);
  put_json_number(&b, x);
  if (strcmp(r, b.p) && bad++ < 20)
    printf("FAIL number %.17g: cJSON %s, fast %s\n", x, r, b.p);
  sbuf_free(&b);
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
      cJSON_AddItemToArray(list,
                           shlo_proto_tensor_encode(outs[p * n_outs + i], b64));
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
