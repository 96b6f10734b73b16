/* SPDX-License-Identifier: Apache-2.0 */
/* Dense element literals as MLIR reads them (engine/src/frontend/
 * parse_core.c), for every element type.
 *
 * The table gives, per element type, literals and the storage bits each
 * must produce, or a piece of the error it must raise.  Expected bits are
 * worked out by hand from the formats (IEEE-754 layouts and the f8/f6/f4
 * formats' biases; integers as two's complement bits), not by the parser.
 * MLIR's forms: decimal integers (leading zeros are decimal) and 0x hex
 * integers; float literals need a dot (`1.`, `1.5e-3`; not `.5`, not
 * `1e5`); a float written as a 0x integer is its bit pattern (no sign, no
 * more bits than the type has); a decimal integer for a float type, `inf`,
 * `nan` and booleans for anything but i1 are errors; complex elements are
 * (re, im) pairs; a decimal float out of a narrow type's range rounds as
 * APFloat does (inf, or NaN for formats without inf).
 *
 * The property test draws random elements of every type, spells each as a
 * literal (its own formatter: decimal for integers, "%.17e" for finite
 * floats, the hex bit pattern for non-finite ones), parses, runs, and
 * checks the bits; then prints the module (shlo_module_print), parses the
 * text again and checks the bits once more. */
#include <inttypes.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/floatfmt.h"
#include "core/value.h"
#include "shlo/engine.h"

/* One literal: element type, text, and the storage bits (re, im for
 * complex) or, when err is set, a piece of the expected error. */
typedef struct row {
  const char *type, *lit;
  uint64_t re, im;
  const char *err;
} row;

#define OK(t, l, b) {t, l, b, 0, NULL}
#define OKC(t, l, r, i) {t, l, r, i, NULL}
#define ERR(t, l, e) {t, l, 0, 0, e}

static const row rows[] = {
    /* i1: booleans, 0 and 1 (and -1, its one bit set) */
    OK("i1", "true", 1), OK("i1", "false", 0), OK("i1", "1", 1),
    OK("i1", "0", 0), OK("i1", "-1", 1), ERR("i1", "2", "out of range for i1"),
    ERR("i1", "1.0", "expected an integer literal"),
    ERR("i1", "(1, 0)", "complex literal"),
    /* signed and signless integers: storage sign-extended */
    OK("i2", "-2", 0xFE), OK("i2", "1", 1), ERR("i2", "4", "out of range"),
    ERR("i2", "true", "expected i1 type for 'true'"),
    OK("i4", "-8", 0xF8), OK("i4", "7", 7), OK("i4", "0x7", 7),
    ERR("i4", "16", "out of range for i4"),
    OK("i8", "-128", 0x80), OK("i8", "0x7F", 0x7F), OK("i8", "08", 8),
    OK("i8", "+5", 5), ERR("i8", "256", "out of range for i8"),
    ERR("i8", "1.5", "expected an integer literal"),
    ERR("i8", "false", "expected i1 type"),
    OK("i16", "-32768", 0x8000), OK("i16", "010", 10),
    ERR("i16", "65536", "out of range for i16"),
    OK("i32", "-2147483648", 0x80000000), OK("i32", "4294967295", 0xFFFFFFFF),
    OK("i32", "0x10", 16), OK("i32", "009", 9),
    ERR("i32", "4294967296", "out of range for i32"),
    OK("i64", "-9223372036854775808", 0x8000000000000000),
    OK("i64", "18446744073709551615", 0xFFFFFFFFFFFFFFFF),
    ERR("i64", "18446744073709551616", "does not fit in 64 bits"),
    ERR("i64", "1e5", "exponent needs a fraction"),
    /* unsigned integers: no negative values */
    OK("ui2", "3", 3), ERR("ui2", "-1", "out of range for ui2"),
    ERR("ui2", "4", "out of range"),
    OK("ui4", "15", 15), ERR("ui4", "16", "out of range for ui4"),
    OK("ui8", "255", 255), OK("ui8", "0xFF", 255),
    ERR("ui8", "-1", "out of range for ui8"),
    OK("ui16", "65535", 0xFFFF), OK("ui32", "4294967295", 0xFFFFFFFF),
    OK("ui64", "18446744073709551615", 0xFFFFFFFFFFFFFFFF),
    ERR("ui64", "-1", "out of range for ui64"),
    /* f32 */
    OK("f32", "1.", 0x3F800000), OK("f32", "1.5", 0x3FC00000),
    OK("f32", "-0.0", 0x80000000), OK("f32", "1.0e2", 0x42C80000),
    OK("f32", "1.e2", 0x42C80000), OK("f32", "1.0E+2", 0x42C80000),
    OK("f32", "0.1", 0x3DCCCCCD), OK("f32", "+2.0", 0x40000000),
    OK("f32", "0x7FC00000", 0x7FC00000), OK("f32", "0x7F800000", 0x7F800000),
    OK("f32", "0xFF800001", 0xFF800001), OK("f32", "0x1", 0x00000001),
    OK("f32", "1.0e39", 0x7F800000), OK("f32", "-1.0e39", 0xFF800000),
    OK("f32", "1.0e-50", 0x00000000), OK("f32", "-1.0e-50", 0x80000000),
    ERR("f32", "-0x7FC00000", "should not have a sign"),
    ERR("f32", "0x1FFFFFFFF", "out of range for f32"),
    ERR("f32", "1", "unexpected decimal integer literal"),
    ERR("f32", ".5", "digit before the dot"), ERR("f32", "-.5", "digit before"),
    ERR("f32", "1e5", "exponent needs a fraction"),
    ERR("f32", "inf", "'inf' is not an MLIR element literal"),
    ERR("f32", "-inf", "'inf' is not"), ERR("f32", "nan", "'nan' is not"),
    ERR("f32", "NaN", "'NaN' is not"), ERR("f32", "infinity", "is not an MLIR"),
    ERR("f32", "true", "expected i1 type"), ERR("f32", "1.0e400", "too large"),
    ERR("f32", "(1.0, 2.0)", "complex literal for element type f32"),
    /* f64 */
    OK("f64", "1.", 0x3FF0000000000000), OK("f64", "-0.0", 0x8000000000000000),
    OK("f64", "0.1", 0x3FB999999999999A),
    OK("f64", "0x7FF8000000000001", 0x7FF8000000000001),
    OK("f64", "0xFFF0000000000000", 0xFFF0000000000000),
    ERR("f64", "1.0e400", "too large for f64"),
    ERR("f64", "0x10000000000000000", "out of range for f64"),
    ERR("f64", "-1", "unexpected decimal integer"),
    /* f16: 65520 is the midpoint to the next binade, rounds to inf */
    OK("f16", "1.", 0x3C00), OK("f16", "65504.", 0x7BFF),
    OK("f16", "65520.", 0x7C00), OK("f16", "0x7E00", 0x7E00),
    OK("f16", "-0.0", 0x8000), OK("f16", "6.0e-8", 0x0001),
    ERR("f16", "0x17C00", "out of range for f16 (16 bits)"),
    /* bf16 */
    OK("bf16", "1.", 0x3F80), OK("bf16", "-2.5", 0xC020),
    OK("bf16", "0x7FC0", 0x7FC0), ERR("bf16", "0x10000", "out of range"),
    /* f8E5M2 (bias 15, has inf) */
    OK("f8E5M2", "1.", 0x3C), OK("f8E5M2", "57344.", 0x7B),
    OK("f8E5M2", "1.0e6", 0x7C), OK("f8E5M2", "0x7C", 0x7C),
    OK("f8E5M2", "-0.0", 0x80), ERR("f8E5M2", "0x100", "out of range"),
    /* f8E4M3FN (bias 7, no inf: overflow is NaN) */
    OK("f8E4M3FN", "1.", 0x38), OK("f8E4M3FN", "448.", 0x7E),
    OK("f8E4M3FN", "1.0e4", 0x7F), OK("f8E4M3FN", "-0.0", 0x80),
    ERR("f8E4M3FN", "2", "unexpected decimal integer"),
    /* the FNUZ formats: no negative zero, 0x80 is their NaN */
    OK("f8E4M3FNUZ", "1.", 0x40), OK("f8E4M3FNUZ", "-0.0", 0x00),
    OK("f8E4M3FNUZ", "0x80", 0x80),
    OK("f8E4M3B11FNUZ", "1.", 0x58), OK("f8E4M3B11FNUZ", "-1.", 0xD8),
    OK("f8E5M2FNUZ", "1.", 0x40), OK("f8E5M2FNUZ", "-0.0", 0x00),
    /* IEEE-like f8E4M3 (bias 7) and f8E3M4 (bias 3) */
    OK("f8E4M3", "1.", 0x38), OK("f8E4M3", "0x78", 0x78),
    OK("f8E4M3", "-2.", 0xC0),
    OK("f8E3M4", "1.", 0x30), OK("f8E3M4", "0.5", 0x20),
    /* f8E8M0FNU: powers of two, bias 127; negative values are NaN */
    OK("f8E8M0FNU", "1.", 0x7F), OK("f8E8M0FNU", "2.", 0x80),
    OK("f8E8M0FNU", "-1.", 0xFF), ERR("f8E8M0FNU", "0x1FF", "out of range"),
    /* f4 and f6 (finite only; bits above their width are refused) */
    OK("f4E2M1FN", "1.", 0x2), OK("f4E2M1FN", "6.", 0x7),
    OK("f4E2M1FN", "0xF", 0xF), OK("f4E2M1FN", "-0.0", 0x8),
    ERR("f4E2M1FN", "0x10", "out of range for f4E2M1FN (4 bits)"),
    OK("f6E2M3FN", "1.", 0x08), OK("f6E2M3FN", "0x3F", 0x3F),
    ERR("f6E2M3FN", "0x40", "out of range for f6E2M3FN (6 bits)"),
    OK("f6E3M2FN", "1.", 0x0C), OK("f6E3M2FN", "-1.", 0x2C),
    /* complex: (re, im) pairs, each part a float literal */
    OKC("complex<f32>", "(1.0, -2.0)", 0x3F800000, 0xC0000000),
    OKC("complex<f32>", "(0x7FC00000, 0.)", 0x7FC00000, 0),
    OKC("complex<f32>", "(-0.0, 1.e1)", 0x80000000, 0x41200000),
    ERR("complex<f32>", "1.0", "expected a (real, imaginary) pair"),
    ERR("complex<f32>", "(1, 2)", "unexpected decimal integer"),
    ERR("complex<f32>", "(1.0, inf)", "'inf' is not"),
    ERR("complex<f32>", "true", "expected a (real, imaginary) pair"),
    OKC("complex<f64>", "(0.5, 0x8000000000000000)", 0x3FE0000000000000,
        0x8000000000000000),
    ERR("complex<f64>", "(0.5, -0x1)", "should not have a sign"),
};

/* Parse and run a program returning one constant of type `type` holding
 * the literal text `lit`; the value, or NULL with the diagnostic in d. */
static shlo_value *run_const(const char *type, const char *lit,
                             shlo_diag *d, char **printed) {
  char text[8192 + 512];
  int n = snprintf(text, sizeof text,
                   "func.func @main() -> tensor<%s> {\n"
                   "  %%0 = stablehlo.constant dense<%s> : tensor<%s>\n"
                   "  return %%0 : tensor<%s>\n}\n", type, lit, type, type);
  assert_true(n > 0 && (size_t)n < sizeof text);
  shlo_module *m = NULL;
  shlo_executable *e = NULL;
  shlo_value **r = NULL;
  int nr = 0;
  shlo_value *v = NULL;
  shlo_diag_clear(d);
  shlo_status st = shlo_parse_module(text, strlen(text), "lit.mlir", &m, d);
  if (st == SHLO_OK) st = shlo_compile(m, NULL, &e, d);
  if (st == SHLO_OK) st = shlo_execute(e, NULL, NULL, 0, &r, &nr, d);
  if (st == SHLO_OK && nr == 1) {
    v = r[0];
    r[0] = NULL;
  }
  if (printed && m) *printed = shlo_module_print(m);
  for (int i = 0; i < nr; i++) shlo_value_unref(r[i]);
  free(r);
  if (e) shlo_executable_free(e);
  if (m) shlo_module_free(m);
  return v;
}

/* Storage bits of part p (0 re, 1 im) of element i of v. */
static uint64_t elem_bits(const shlo_value *v, int64_t i, int part) {
  size_t es = shlo_elem_size(v->elem);
  size_t ps = shlo_elem_is_complex(v->elem) ? es / 2 : es;
  uint64_t b = 0;
  memcpy(&b, (const char *)v->data + (size_t)i * es + (size_t)part * ps, ps);
  return b;
}

static void test_literal_table(void **state) {
  (void)state;
  int failed = 0;
  for (size_t k = 0; k < sizeof rows / sizeof *rows; k++) {
    const row *r = &rows[k];
    shlo_diag d;
    shlo_value *v = run_const(r->type, r->lit, &d, NULL);
    if (r->err) {
      if (v || !strstr(d.message, r->err)) {
        print_message("%s %s: expected error '%s', got %s\n", r->type,
                      r->lit, r->err, v ? "a value" : d.message);
        failed++;
      }
    } else if (!v) {
      print_message("%s %s: %s\n", r->type, r->lit, d.message);
      failed++;
    } else {
      bool cx = shlo_elem_is_complex(v->elem);
      uint64_t re = elem_bits(v, 0, 0), im = cx ? elem_bits(v, 0, 1) : 0;
      if (re != r->re || im != r->im) {
        print_message("%s %s: bits 0x%" PRIX64 " 0x%" PRIX64 ", expected 0x%"
                      PRIX64 " 0x%" PRIX64 "\n", r->type, r->lit, re, im,
                      r->re, r->im);
        failed++;
      }
    }
    shlo_value_unref(v);
  }
  assert_int_equal(failed, 0);
}

/* Every element type has at least one accepted and, but i1/ui*, one
 * refused literal in the table. */
static void test_table_covers_every_type(void **state) {
  (void)state;
  for (int t = 0; t < SHLO_ELEM_COUNT; t++) {
    if (t == SHLO_INDEX) continue; /* no dense literals of index here */
    const char *name = shlo_elem_name((shlo_elem_type)t);
    int ok = 0;
    for (size_t k = 0; k < sizeof rows / sizeof *rows; k++)
      if (!strcmp(rows[k].type, name) && !rows[k].err) ok++;
    if (!ok) print_message("no accepted literal for %s\n", name);
    assert_true(ok > 0);
  }
}

/* ---- property: random elements spelled as literals read back ---- */

static uint64_t rng_state = 0x9E3779B97F4A7C15u;
static uint64_t next_rand(void) { /* xorshift64* */
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * 2685821657736338717u;
}

/* A random storage pattern of a float part type (bits above its width
 * clear) and its literal text. */
static void float_part(shlo_elem_type t, uint64_t *bits, char *out, size_t n) {
  int w = shlo_elem_bits(t);
  uint64_t b = next_rand();
  if (w < 64) b &= (1ull << w) - 1;
  if (next_rand() % 8 == 0) b &= 0x8000000000000000ull >> (64 - w); /* +-0 */
  double x;
  if (t == SHLO_F64) {
    memcpy(&x, &b, 8);
  } else if (t == SHLO_F32) {
    float f;
    uint32_t b32 = (uint32_t)b;
    memcpy(&f, &b32, 4);
    x = f;
  } else {
    x = shlo__float_load(t, &b);
  }
  *bits = b;
  if (isfinite(x)) snprintf(out, n, "%.17e", x);
  else snprintf(out, n, "0x%" PRIX64, b);
}

/* Random element i of type t: its literal and expected storage bits. */
static void random_elem(shlo_elem_type t, char *out, size_t n,
                        uint64_t *re, uint64_t *im) {
  int w = shlo_elem_bits(t);
  *im = 0;
  switch (shlo_elem_class_of(t)) {
  case SHLO_CLASS_BOOL:
    *re = next_rand() & 1;
    snprintf(out, n, "%s", *re ? "true" : "false");
    break;
  case SHLO_CLASS_SINT: {
    int64_t v = (int64_t)next_rand();
    if (w < 64) v >>= 64 - w; /* arithmetic shift: a w-bit value */
    snprintf(out, n, "%" PRId64, v);
    size_t es = shlo_elem_size(t);
    *re = es == 8 ? (uint64_t)v : (uint64_t)v & ((1ull << (8 * es)) - 1);
    break;
  }
  case SHLO_CLASS_UINT: {
    uint64_t v = next_rand();
    if (w < 64) v >>= 64 - w;
    snprintf(out, n, "%" PRIu64, v);
    *re = v;
    break;
  }
  case SHLO_CLASS_FLOAT:
    float_part(t, re, out, n);
    break;
  case SHLO_CLASS_COMPLEX: {
    shlo_elem_type p = shlo_elem_complex_part(t);
    char a[64], b[64];
    float_part(p, re, a, sizeof a);
    float_part(p, im, b, sizeof b);
    snprintf(out, n, "(%s, %s)", a, b);
    break;
  }
  }
}

enum { N_RANDOM = 64 };

static void check_bits(const shlo_value *v, const uint64_t *re,
                       const uint64_t *im, const char *type,
                       const char *how) {
  assert_non_null(v);
  assert_int_equal(v->numel, N_RANDOM);
  bool cx = shlo_elem_is_complex(v->elem);
  for (int i = 0; i < N_RANDOM; i++) {
    uint64_t r = elem_bits(v, i, 0), m = cx ? elem_bits(v, i, 1) : 0;
    if (r != re[i] || m != im[i])
      print_message("%s (%s) element %d: 0x%" PRIX64 " 0x%" PRIX64
                    ", expected 0x%" PRIX64 " 0x%" PRIX64 "\n", type, how,
                    i, r, m, re[i], im[i]);
    assert_true(r == re[i] && m == im[i]);
  }
}

static void test_random_literals_read_back(void **state) {
  (void)state;
  for (int t = 0; t < SHLO_ELEM_COUNT; t++) {
    if (t == SHLO_INDEX) continue;
    char name[32], lits[8192];
    uint64_t re[N_RANDOM], im[N_RANDOM];
    snprintf(name, sizeof name, "%dx%s", N_RANDOM,
             shlo_elem_name((shlo_elem_type)t));
    size_t at = 0;
    lits[at++] = '[';
    for (int i = 0; i < N_RANDOM; i++) {
      char one[160];
      random_elem((shlo_elem_type)t, one, sizeof one, &re[i], &im[i]);
      int k = snprintf(lits + at, sizeof lits - at, "%s%s", i ? ", " : "",
                       one);
      assert_true(k > 0 && (size_t)k < sizeof lits - at);
      at += (size_t)k;
    }
    assert_true(at + 2 < sizeof lits);
    lits[at++] = ']';
    lits[at] = 0;
    shlo_diag d;
    char *printed = NULL;
    shlo_value *v = run_const(name, lits, &d, &printed);
    if (!v) print_message("%s: %s\n", name, d.message);
    check_bits(v, re, im, name, "literal");
    shlo_value_unref(v);
    /* the printer's text of the module reads back to the same bits */
    assert_non_null(printed);
    shlo_module *m = NULL;
    shlo_executable *e = NULL;
    shlo_value **r = NULL;
    int nr = 0;
    shlo_diag_clear(&d);
    assert_int_equal(shlo_parse_module(printed, strlen(printed), "p.mlir", &m,
                                       &d), SHLO_OK);
    assert_int_equal(shlo_compile(m, NULL, &e, &d), SHLO_OK);
    assert_int_equal(shlo_execute(e, NULL, NULL, 0, &r, &nr, &d), SHLO_OK);
    assert_int_equal(nr, 1);
    check_bits(r[0], re, im, name, "printed");
    shlo_value_unref(r[0]);
    free(r);
    shlo_executable_free(e);
    shlo_module_free(m);
    free(printed);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_literal_table),
      cmocka_unit_test(test_table_covers_every_type),
      cmocka_unit_test(test_random_literals_read_back),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
