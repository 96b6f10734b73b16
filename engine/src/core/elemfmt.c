/* SPDX-License-Identifier: Apache-2.0 */
/* The element printer (see elemfmt.h).  Numbers avoid printf where they
 * can: the server writes every element of every response through here. */
#include "core/elemfmt.h"
#include "core/value.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/floatfmt.h"

static const double pow10_tab[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7,
                                   1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14,
                                   1e15};

/* Digits of n, backwards from end; returns the first. */
static char *put_u64_rev(char *end, uint64_t n) {
  do *--end = (char)('0' + n % 10);
  while (n /= 10);
  return end;
}

void shlo__sb_put_i64(strbuf *b, int64_t v) {
  char tmp[24], *end = tmp + sizeof tmp;
  uint64_t u = v < 0 ? 0ull - (uint64_t)v : (uint64_t)v;
  char *p = put_u64_rev(end, u);
  if (v < 0) *--p = '-';
  shlo__sb_add(b, p, (size_t)(end - p));
}

void shlo__sb_put_u64(strbuf *b, uint64_t v) {
  char tmp[24], *end = tmp + sizeof tmp;
  char *p = put_u64_rev(end, v);
  shlo__sb_add(b, p, (size_t)(end - p));
}

/* prec <= 15 keeps half an ulp of x below half a unit of the last digit,
 * so the exact decimal is what printf would round to. */
size_t shlo__fmt_fixed_decimal(double x, int prec, char out[40]) {
  double a = fabs(x);
  if (!(a >= 1e-4) || a >= pow10_tab[prec]) return 0;
  for (int k = 0; k <= 8 && k <= prec; k++) {
    double y = a * pow10_tab[k];
    if (y >= pow10_tab[prec]) return 0;
    if (y != floor(y)) continue;
    uint64_t m = (uint64_t)y;
    if ((double)m / pow10_tab[k] != a) continue;
    while (k > 0 && m % 10 == 0) m /= 10, k--;
    char tmp[40], *end = tmp + sizeof tmp, *p = end;
    uint64_t ip = m, fp = 0;
    if (k) {
      uint64_t div = (uint64_t)pow10_tab[k];
      ip = m / div;
      fp = m % div;
      for (int d = 0; d < k; d++, fp /= 10) *--p = (char)('0' + fp % 10);
      *--p = '.';
    }
    p = put_u64_rev(p, ip);
    if (x < 0) *--p = '-';
    size_t n = (size_t)(end - p);
    memcpy(out, p, n);
    out[n] = 0;
    return n;
  }
  return 0;
}

/* Does the decimal y name x in float type t (y rounded into t is x)? */
static bool reads_back(double y, double x, shlo_elem_type t) {
  if (t == SHLO_F64) return y == x;
  if (t == SHLO_F32) return (float)y == (float)x;
  unsigned char p[8];
  shlo__float_store(t, y, p);
  return shlo__float_load(t, p) == x;
}

/* The shortest "%.<p>g" that reads back.  For f64 and f32, p starts at
 * DBL_DIG (15) and FLT_DIG (6): fewer digits than that give the same text
 * with %g's trailing zeros dropped, so the exact-decimal fast path applies
 * there.  Formats narrower than f32 have shorter texts than their exact
 * decimals (f8E4M3's 0.9375 reads back from "0.9"), so they search from 1
 * digit (a few snprintf calls: they are not bulk output). */
static void put_shortest(strbuf *b, double x, shlo_elem_type t) {
  bool wide = t == SHLO_F64 || t == SHLO_F32;
  int prec = t == SHLO_F64 ? 15 : wide ? 6 : 1;
  char tmp[40];
  size_t n = wide ? shlo__fmt_fixed_decimal(x, prec, tmp) : 0;
  if (n) {
    shlo__sb_add(b, tmp, n);
    if (!memchr(tmp, '.', n)) shlo__sb_add(b, ".0", 2);
    return;
  }
  for (; prec <= 17; prec++) {
    snprintf(tmp, sizeof tmp, "%.*g", prec, x);
    if (reads_back(strtod(tmp, NULL), x, t)) break;
  }
  /* A narrow float that is a short exact decimal reads better as one
   * (bf16 300 as "300.0", not "3e+02"). */
  if (!wide && strchr(tmp, 'e')) {
    char fixed[40];
    if (shlo__fmt_fixed_decimal(x, 6, fixed)) memcpy(tmp, fixed, sizeof fixed);
  }
  /* Keep floats visibly floats: "1e+30" is one, "1" gets ".0". */
  if (!strpbrk(tmp, ".eEn")) strcat(tmp, ".0");
  shlo__sb_puts(b, tmp);
}

void shlo__sb_put_float(strbuf *b, double x, shlo_elem_type t,
                        shlo_elemfmt style) {
  bool json = style == SHLO_ELEMFMT_JSON;
  if (isnan(x)) shlo__sb_puts(b, json ? "\"NaN\"" : "nan");
  else if (isinf(x) && x > 0) shlo__sb_puts(b, json ? "\"Infinity\"" : "inf");
  else if (isinf(x)) shlo__sb_puts(b, json ? "\"-Infinity\"" : "-inf");
  else if (style == SHLO_ELEMFMT_MLIR) shlo__sb_printf(b, "%e", x);
  else if (x == 0) shlo__sb_puts(b, signbit(x) ? "-0.0" : "0.0");
  else put_shortest(b, x, t);
}

void shlo__sb_put_elem(strbuf *b, const shlo_value *v, int64_t i,
                       shlo_elemfmt style) {
  shlo_elem_type t = v->elem;
  switch (shlo_elem_class_of(t)) {
  case SHLO_CLASS_FLOAT:
    shlo__sb_put_float(b, shlo_tensor_get_f64(v, i), t, style);
    return;
  case SHLO_CLASS_COMPLEX: {
    static const char *const open[] = {"[", "(", "["}, *const sep[] = {
        ", ", ", ", ","}, *const close[] = {"]", ")", "]"};
    double re, im;
    shlo_tensor_get_c128(v, i, &re, &im);
    shlo_elem_type part = shlo_elem_complex_part(t);
    shlo__sb_puts(b, open[style]);
    shlo__sb_put_float(b, re, part, style);
    shlo__sb_puts(b, sep[style]);
    shlo__sb_put_float(b, im, part, style);
    shlo__sb_puts(b, close[style]);
    return;
  }
  case SHLO_CLASS_BOOL:
    shlo__sb_puts(b, shlo_tensor_get_i64(v, i) ? "true" : "false");
    return;
  case SHLO_CLASS_UINT:
    shlo__sb_put_u64(b, (uint64_t)shlo_tensor_get_i64(v, i));
    return;
  case SHLO_CLASS_SINT:
    shlo__sb_put_i64(b, shlo_tensor_get_i64(v, i));
    return;
  }
}
