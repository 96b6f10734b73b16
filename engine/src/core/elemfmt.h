/* SPDX-License-Identifier: Apache-2.0 */
/* The one element printer: every element type as text, for the value
 * printer (print.c), the check ops' failure messages (kernels/check.c) and
 * the wire format's JSON (protocol/).  They differ only in how a float is
 * spelled, which the style names. */
#ifndef SHLO_ELEMFMT_H
#define SHLO_ELEMFMT_H

#include <stdint.h>

#include "core/strbuf.h"
#include "shlo/tensor.h"

typedef enum {
  /* The reference interpreter's printer: floats "%e" (1.000000e+00),
   * nan / inf / -inf, complex "[re, im]". */
  SHLO_ELEMFMT_MLIR,
  /* Exact: the shortest decimal that reads back to the same value of the
   * element's type (1.0, 0.1, 1e+30), nan / inf / -inf, complex
   * "(re, im)". */
  SHLO_ELEMFMT_EXACT,
  /* PROTOCOL.md: EXACT's numbers, non-finite floats as the strings "NaN",
   * "Infinity", "-Infinity", complex "[re,im]". */
  SHLO_ELEMFMT_JSON,
} shlo_elemfmt;

/* Element i of tensor v (i1 as true/false, integers in decimal, exact to
 * 64 bits). */
void shlo__sb_put_elem(strbuf *b, const shlo_value *v, int64_t i,
                       shlo_elemfmt style);
/* x, a value of float type t (f32: a float widened), as style spells it. */
void shlo__sb_put_float(strbuf *b, double x, shlo_elem_type t,
                        shlo_elemfmt style);
void shlo__sb_put_i64(strbuf *b, int64_t v);
void shlo__sb_put_u64(strbuf *b, uint64_t v);

/* The fast path of "%.<prec>g" (prec <= 15) for x = +-m / 10^k exactly,
 * m < 10^prec, |x| >= 1e-4: printf's text of x is then that decimal in
 * fixed notation.  Writes it to out (no ".0" added) and returns its
 * length, or 0 when x is not such a number (the caller then uses printf). */
size_t shlo__fmt_fixed_decimal(double x, int prec, char out[40]);

#endif
